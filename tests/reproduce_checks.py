"""What every paper's reproduction report must show (issue 24): a row per
statement of its paper file, each with an allowed verdict, a tally that
counts them all, ``statements.csv`` with the same verdicts, and a reason
for every statement it cannot measure. Used by the test_reproduce_*.py."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from netreturn.reproduce.statements import VERDICTS


def check_statement_table(out: Path, statements: list[dict]) -> dict[str, str]:
    """Checks ``out``'s report and statements.csv against the paper file's
    ``statements``; returns id -> verdict (the report's first column)."""
    report = (out / "report.md").read_text()
    verdicts = {}
    for st in statements:
        m = re.search(rf"^\| {re.escape(st['id'])} \| [^\n]*?\*\*({'|'.join(VERDICTS)})\*\* — ([^\n]*)$", report, re.M)
        assert m, f"no row with a verdict for {st['id']}"
        verdicts[st["id"]] = m[1]
        if m[1] == "not measurable":
            assert "Why: " in m[2], f"{st['id']}: not measurable without why"
    t = re.search(r"\*\*(\d+) statements: (\d+) hold, (\d+) partly, (\d+) fail, (\d+) not measurable here\*\*", report)
    assert t, "no tally"
    n, *parts = map(int, t.groups())
    assert n == len(statements) == sum(parts)
    assert parts == [sum(v == x for v in verdicts.values()) for x in VERDICTS]
    with (out / "statements.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["id"] for r in rows] == [s["id"] for s in statements]
    col = next(k for k in rows[0] if k.endswith(": verdict"))
    assert {r["id"]: r[col] for r in rows} == verdicts
    return verdicts
