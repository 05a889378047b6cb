"""The documentation stands on its own (issue 26 item 11): papers are named
by their mechanism, not by the project's seed-file numbers (which read like
random seeds, `--seed 7`), and no link leaves the repository's docs for
files that do not ship."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What a user reads: the docs, the README, and the package (help, printed
# reports, scenario references).
USER_FACING = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
               *sorted((ROOT / "python" / "netreturn").rglob("*.py")),
               *sorted((ROOT / "python" / "netreturn").rglob("*.toml"))]


def _hits(pattern: str) -> list[str]:
    rx = re.compile(pattern)
    return [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in USER_FACING
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if rx.search(line)]


def test_no_paper_is_called_by_its_seed_number():
    assert _hits(r"\b[Ss]eeds? 00[0-4]\b") == []


def test_nothing_points_at_the_specification_or_shared_files_that_do_not_ship():
    assert _hits(r"SPEC\.md|\.\./shared/|shared/seeds") == []


def test_every_relative_link_of_the_docs_resolves():
    broken = []
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", p.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (p.parent / target).exists():
                broken.append(f"{p.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_the_bibliography_names_each_paper_and_the_citation_file_lists_them():
    bib = (ROOT / "docs" / "bibliography.md").read_text(encoding="utf-8")
    for paper in ("EWT", "NGWA", "AWM", "RWM", "SARBE"):
        assert f"**The {paper} paper.**" in bib
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert cff.startswith("cff-version: 1.2.0") and cff.count("  - type: ") == 5
