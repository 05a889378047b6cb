"""Where each difference of the validation summary stands: superseded rows,
causes of the cells that still differ, and causes gone stale."""

from __future__ import annotations

import re
from pathlib import Path

from netreturn import valstatus
from netreturn.valrecords import record, write_record
from netreturn.valstatus import CAUSES, STATUSES, SUPERSEDED_BY, Cause, headline, stale_causes
from netreturn.valsummary import PLAN, dumbbell_cell, summarize, text

ROOT = Path(__file__).resolve().parents[1]
NAMES = [m.name for m in PLAN]


def _anchor(heading: str) -> str:
    return "-".join(re.sub(r"[^\w\- ]", "", heading.strip().lower()).split(" "))


def test_every_row_named_by_a_supersession_or_a_cause_is_a_row_of_the_summary():
    for row, (later, what) in SUPERSEDED_BY.items():
        assert row in NAMES and later in NAMES and what, row
    for row, causes in CAUSES.items():
        assert row in NAMES, row
        assert row not in SUPERSEDED_BY, f"{row}: superseded rows need no cause, their later row has it"
        assert all(c.status in STATUSES for c in causes), row


def test_following_supersessions_always_ends_at_a_row_nothing_supersedes():
    for row in SUPERSEDED_BY:
        seen = {row}
        while row in SUPERSEDED_BY:
            row = SUPERSEDED_BY[row][0]
            assert row not in seen, f"a cycle through {row}"
            seen.add(row)


def test_every_cause_links_to_a_section_that_exists():
    for row, causes in CAUSES.items():
        for c in causes:
            name, anchor = c.evidence.split("#")
            headings = [ln.lstrip("#").strip() for ln in (ROOT / "docs" / name).read_text().splitlines()
                        if ln.startswith("#")]
            assert anchor in {_anchor(h) for h in headings}, f"{row}: docs/{c.evidence}"


def _fixture(out: Path) -> None:
    # DropTail (nothing supersedes it): one cell agrees, one differs.
    write_record(out, dumbbell_cell("ewt/scenario2", 13, "droptail").name, record("ns-3 3.44", [
        ("goodput_mean_mbps", "goodput", [1.00, 1.00, 1.00], [1.01, 1.01, 1.01]),
        ("udp_loss_pct", "UDP loss", [0.78, 0.79, 0.80], [1.68, 1.69, 1.70]),
    ], seeds=[1, 2, 3]))
    # FQ-CoDel is superseded by "FQ-CoDel, ns-3 as Linux": its difference stays out of the headline.
    write_record(out, dumbbell_cell("ewt/scenario2", 31, "fq_codel").name, record("ns-3 3.44", [
        ("timeouts", "RTO expiries", [22.0, 23.0, 24.0], [38.0, 39.0, 40.0]),
    ], seeds=[1, 2, 3]))


def test_a_differing_cell_no_cause_names_is_open_and_superseded_rows_stay_out_of_the_headline(tmp_path,
                                                                                                monkeypatch):
    _fixture(tmp_path)
    monkeypatch.setattr(valstatus, "CAUSES", {})
    rows = summarize(tmp_path)
    assert headline(rows) == ("On the 1 rows no later row supersedes: 1 of 2 metric cells agree by either "
                              "measure; the 1 that differ: 1 open.")
    out = valstatus.text(rows)
    remaining, superseded = out.split("Rows a later row supersedes")
    assert "UDP loss" in remaining and "open" in remaining and "RTO expiries" not in remaining
    line = next(ln for ln in superseded.splitlines() if ln.startswith("FQ-CoDel "))
    assert "0 of 1" in line and "FQ-CoDel, ns-3 as Linux" in line and "not run" in line


def test_a_cause_names_its_cells_status_and_evidence_and_goes_stale_when_its_cell_agrees(tmp_path, monkeypatch):
    _fixture(tmp_path)
    cause = Cause("13 flows", ("UDP loss",), "traced, not proven", "a reason", "validation.md#x")
    gone = Cause("24 flows", ("UDP loss",), "open", "another", "validation.md#y")
    monkeypatch.setattr(valstatus, "CAUSES", {"DropTail": (cause, gone)})
    rows = summarize(tmp_path)
    assert "1 traced, not proven." in headline(rows)
    md = valstatus.text(rows, markdown=True)
    assert "a reason ([validation.md](validation.md#x))" in md
    assert stale_causes(rows) == ["DropTail: 24 flows / UDP loss"]
    assert "update netreturn/valstatus.py): DropTail: 24 flows / UDP loss" in md


def test_the_committed_records_leave_no_cause_stale_and_the_doc_shows_where_each_difference_stands():
    rows = summarize(ROOT / "docs" / "validation_issue25")
    assert stale_causes(rows) == []
    block = text(rows, markdown=True)
    assert "rows no later row supersedes" in block and "| where it stands |" in re.sub(" +", " ", block)
