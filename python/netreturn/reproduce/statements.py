"""A paper's statements about its results, each judged from a report's runs.

Every paper file (``paper/<name>.toml``) lists its statements as
``[[statements]]``: an ``id`` (unique in the file), ``where`` (section,
figure or table), ``quote`` (the paper's words) and a ``check`` naming how a
reproduction judges it. A paper's module judges every one of them from the
runs of the report it writes and hands back a :class:`Judgement` per
statement; :func:`section` renders them all as one table with a tally, and
refuses (ValueError) a report that leaves a statement out: the tally counts
every statement the paper makes, not the ones that were convenient.

Verdicts: ``holds``, ``partly`` (at some points, or within the confidence
intervals only), ``fails``, ``not measurable`` (with why: what the runs
cannot show). A statement marked ``quick = false`` is not judged by a
``--quick`` smoke test (too few seeds or points for it); the report lists
those.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HOLDS, PARTLY, FAILS, NOT_MEASURABLE = "holds", "partly", "fails", "not measurable"
VERDICTS = (HOLDS, PARTLY, FAILS, NOT_MEASURABLE)


@dataclass
class Judgement:
    """One statement judged: the verdict, our value(s) from the runs beside
    it, and why (for partly, fails and not measurable)."""

    verdict: str
    measured: str
    why: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r}: allowed {', '.join(VERDICTS)}")


def validate(statements: list, path: str | Path, checks: set[str] | None = None) -> list[dict]:
    """The ``[[statements]]`` of a paper file, checked: ValueError naming the
    file, the statement and the field. ``checks``: the check names the
    paper's module knows (None: any)."""
    seen: set[str] = set()
    for i, s in enumerate(statements):
        where = f"{path}: statements[{i}]"
        for key in ("id", "where", "quote", "check"):
            if not isinstance(s.get(key), str) or not s[key].strip():
                raise ValueError(f"{where}: missing {key} (a non-empty string)")
        if s["id"] in seen:
            raise ValueError(f"{where}: id {s['id']!r} repeats an earlier statement's")
        seen.add(s["id"])
        if checks is not None and s["check"] not in checks:
            raise ValueError(f"{where} ({s['id']}): unknown check {s['check']!r}; allowed: {', '.join(sorted(checks))}")
        if "quick" in s and not isinstance(s["quick"], bool):
            raise ValueError(f"{where} ({s['id']}): quick must be true or false")
    return list(statements)


def load(path: str | Path, keys: tuple[str, ...], checks: set[str] | None = None) -> dict:
    """A paper file (``paper/<paper>.toml``) with its ``keys`` present and
    its statements checked (:func:`validate`): ValueError naming the file
    and what is missing. The one loader of the five papers' data."""
    from .. import _toml

    d = _toml.load(path)
    for key in ("title", *keys, "statements"):
        if key not in d:
            raise ValueError(f"{path}: missing {key}")
    validate(d["statements"], path, checks)
    return d


def for_quick(s: dict, j: Judgement, quick: bool) -> Judgement:
    """A ``--quick`` run's judgement of ``s``: not measurable if the
    statement needs more than a smoke test (``quick = false``), with what
    was measured kept beside it."""
    if quick and s.get("quick") is False:
        return Judgement(NOT_MEASURABLE, j.measured,
                         "--quick is a smoke test: " + s.get("quick_why", "too few seeds and points to judge this"))
    return j


def tally(judged: dict[str, Judgement]) -> dict[str, int]:
    out = {v: 0 for v in VERDICTS}
    for j in judged.values():
        out[j.verdict] += 1
    return out


def tally_text(t: dict[str, int]) -> str:
    n = sum(t.values())
    return (f"{n} statements: {t[HOLDS]} hold, {t[PARTLY]} partly, {t[FAILS]} fail, "
            f"{t[NOT_MEASURABLE]} not measurable here")


def missing(statements: list[dict], judged: dict[str, Judgement]) -> list[str]:
    return [s["id"] for s in statements if s["id"] not in judged]


def section(title: str, statements: list[dict], columns: dict[str, dict[str, Judgement]],
            quick: bool = False, kind: str = "paper") -> list[str]:
    """The report's statement table: one row per statement of the paper
    file, one verdict column per set of runs (``columns``: label ->
    statement id -> judgement; the first is the one the tally counts).
    ``kind``: whose statements, ``paper`` (a paper's claims) or ``study``
    (the questions of a study of our own, which no paper answers).
    ValueError if a statement has no judgement in the first column."""
    labels = list(columns)
    first = columns[labels[0]]
    lost = missing(statements, first)
    if lost:
        raise ValueError(f"statements not judged: {', '.join(lost)} "
                         "(every statement of the paper file needs a verdict)")
    lines = [title, "", f"**{tally_text(tally(first))}** ({labels[0]}). Every statement of the {kind} file, judged "
             "from this report's runs: holds / partly (at some points, or only within the 95 % CIs) / fails / not "
             "measurable here (with why).", ""]
    if quick:
        skipped = [s["id"] for s in statements if s.get("quick") is False]
        lines += ["**This is a `--quick` smoke test, not a reproduction.** It cannot judge "
                  + (f"{len(skipped)} statements ({', '.join(skipped)}): they need more seeds or points than it runs; "
                     if skipped else "")
                  + "every other verdict rests on few seeds.", ""]
    said = "the paper says" if kind == "paper" else f"the {kind} asks whether"
    head = ["id", "where", said] + [f"ours, {lab}" for lab in labels]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for s in statements:
        cells = [s["id"], s["where"], _cell(s["quote"])]
        for lab in labels:
            j = columns[lab].get(s["id"])
            text = "-" if j is None else f"**{j.verdict}** — {j.measured}" + (f". Why: {j.why}" if j.why else "")
            cells.append(_cell(text))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def frame(statements: list[dict], columns: dict[str, dict[str, Judgement]]):
    """``statements.csv``: one row per statement, verdict, measured value
    and why per column."""
    import pandas as pd

    rows = []
    for s in statements:
        row = {"id": s["id"], "where": s["where"], "quote": s["quote"], "check": s["check"]}
        for lab, judged in columns.items():
            j = judged.get(s["id"])
            row[f"{lab}: verdict"] = "" if j is None else j.verdict
            row[f"{lab}: measured"] = "" if j is None else j.measured
            row[f"{lab}: why"] = "" if j is None else j.why
        rows.append(row)
    return pd.DataFrame(rows)


def write(out: Path, statements: list[dict], columns: dict[str, dict[str, Judgement]]) -> Path:
    from ..files import write_frame_csv

    path = Path(out) / "statements.csv"
    write_frame_csv(frame(statements, columns), path)
    return path
