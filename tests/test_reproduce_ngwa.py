"""`netreturn reproduce ngwa`: the paper file (paper/ngwa.toml) and the
quick form end to end: every statement judged from the runs."""

import csv

import pytest

from netreturn import cli
from netreturn.reproduce import ngwa
from reproduce_checks import check_statement_table


def test_the_paper_file_holds_table_2_and_the_triple_dupacks_the_text_gives():
    # SPEC.md 5.2 / seed 001 Table 2 and section 3.3.
    assert ngwa.PAPER["table2_lost"] == {"rfc793": 4001, "newreno": 328, "mode1": 7, "mode2": 0, "mode3": 1063,
                                         "mode4": 869, "mode5": 0, "mode6": 0, "mode7": 0, "mode8": 0}
    assert {k: ngwa.PAPER["fig6_triple_dupacks"][k] for k in ("mode1", "mode3", "mode4")} == \
        {"mode1": 30, "mode3": 5279, "mode4": 2833}
    # Every value of Table 2 is a statement of its own.
    assert {s["row"] for s in ngwa.PAPER["statements"] if s["id"].startswith("table2-") and s["check"] == "value"} \
        == set(ngwa.PAPER["rows"])


def test_a_statement_naming_an_unknown_row_is_refused(tmp_path):
    bad = tmp_path / "ngwa.toml"
    bad.write_text(ngwa.PAPER_FILE.read_text().replace('rows = ["mode7", "mode8"]', 'rows = ["mode9", "mode8"]'))
    with pytest.raises(ValueError, match=r"fig3-modes78-start-high.*'mode9'"):
        ngwa.load_paper(bad)


def test_the_quick_reproduction_judges_every_statement_from_its_runs(tmp_path, capsys):
    out = tmp_path / "ngwa"
    assert cli.main(["reproduce", "ngwa", "--quick", "--seeds", "2", "--out", str(out), "-q"]) == 0
    verdicts = check_statement_table(out, ngwa.PAPER["statements"])
    # The testbed's statements cannot be measured by a simulation; the
    # quick form does not judge Table 2's values (quick = false).
    assert all(verdicts[s["id"]] == "not measurable" for s in ngwa.PAPER["statements"]
               if s["check"] == "testbed" or s.get("quick") is False)
    report = (out / "report.md").read_text()
    assert "smoke test, not a reproduction" in report
    assert (out / "figures" / "fig3_window.png").stat().st_size > 3000
    # The measured values beside the verdicts are table2.csv's.
    with (out / "table2.csv").open() as fh:
        t2 = {r["row"]: r for r in csv.DictReader(fh)}
    for s in ngwa.PAPER["statements"]:
        if s["check"] == "value" and s["metric"] == "lost":
            row = t2[s["row"]]
            shown = f"{ngwa.LABEL[s['row']]} {ngwa.fmt_ci(float(row['lost_mean']), float(row['lost_ci95']), 4)}"
            assert f"**not measurable** — {shown} (paper {s['paper']})" in report, s["id"]
