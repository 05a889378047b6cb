"""`netreturn validate --summary`: the table of every mechanism against its
reference, from cell records (a tiny fixture here; no simulator runs)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from netreturn.cli import main as cli_main
from netreturn.valrecords import record, write_record
from netreturn.valsummary import (
    BEGIN,
    END,
    PLAN,
    doc_block,
    dumbbell_cell,
    summarize,
    summary_table,
    verdicts,
    within,
    write_doc,
)

ROOT = Path(__file__).resolve().parents[1]


def _cell(out: Path, scenario: str, flows: int, queue: str, rows: list[tuple]) -> None:
    c = dumbbell_cell(scenario, flows, queue)
    write_record(out, c.name, record("ns-3 3.44", rows, seeds=[1, 2, 3]))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """Two DropTail cells: scenario 1 (no UDP flow) and scenario 2."""
    _cell(tmp_path, "ewt/scenario1", 8, "droptail", [
        # 5 % apart, CIs narrow: within 10 %, not within the CIs.
        ("goodput_mean_mbps", "goodput", [1.00, 1.00, 1.00], [1.05, 1.05, 1.05]),
        # 50 % apart, but the CIs are wide: within the CIs only.
        ("fct_mean_s", "FCT", [10.0, 20.0, 30.0], [25.0, 35.0, 45.0]),
        # The reference has no UDP flow: not compared.
        ("udp_loss_pct", "UDP loss", [math.nan] * 3, [0.0] * 3),
    ])
    _cell(tmp_path, "ewt/scenario2", 13, "droptail", [
        # Twice the reference, both tight: agrees by neither measure.
        ("udp_loss_pct", "UDP loss", [0.78, 0.79, 0.80], [1.68, 1.69, 1.70]),
    ])
    return tmp_path


def test_a_metric_agrees_within_ten_percent_of_the_reference_mean_or_within_the_combined_cis():
    assert within((10.0, 0.1, 3), (10.9, 0.1, 3)) is True
    assert within((10.0, 0.1, 3), (11.1, 0.1, 3)) is False
    assert within((math.nan, 0.1, 0), (11.1, 0.1, 3)) is None
    v = verdicts(record("ns-3 3.44", [("fct_mean_s", "FCT", [10.0, 20.0, 30.0], [25.0, 35.0, 45.0])]))[0]
    assert v["within"] is False and v["ci"] is True


def test_the_summary_counts_each_measure_per_mechanism_from_the_cached_records(cache):
    rows = {r["mechanism"]: r for r in summarize(cache)}
    d = rows["DropTail"]
    # UDP loss of scenario 1 is left out: 3 metric cells, not 4.
    assert (d["cells"], d["cells_planned"], d["compared"]) == (2, 6, 3)
    assert (d["within"], d["ci"], d["either"]) == (1, 1, 2)
    assert [(v["cell"], v["label"]) for v in d["differ"]] == [("scenario2, 13 flows", "UDP loss")]
    assert rows["RED"]["cells"] == 0 and rows["XCP"]["compared"] == 0


def test_validate_summary_prints_the_table_and_the_cells_that_differ(cache, capsys):
    assert cli_main(["validate", "--summary", "--out", str(cache)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("DropTail"))
    assert "2/6" in line and "goodput, UDP loss, FCT" in line and "docs/validation.md#baselines-over-phases" in line
    assert next(ln for ln in out.splitlines() if ln.startswith("RED ")).count("not run yet") == 1
    assert "Baselines (DropTail, RED, ARED): 3 of the 99 metric cells compared; 1 within 10 %, 1 within the CIs, " \
           "2 by either" in out
    # The cell that differs, with both means in the metric's unit and our difference.
    differ = out.split("agree by neither measure")[1]
    assert "scenario2, 13 flows" in differ and "0.79 ± 0.025" in differ and "+114 %" in differ


def test_the_doc_opens_with_the_summary_table_the_command_renders():
    doc = ROOT / "docs" / "validation.md"
    block = doc_block(doc)
    assert block, f"{doc}: no block between {BEGIN!r} and {END!r}"
    # The same header, and a row per mechanism of the plan, in its order.
    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    header = summary_table(summarize(Path("/nonexistent")), markdown=True).splitlines()[0]
    lines = block.splitlines()
    assert cells(lines[0]) == cells(header)
    names = [ln.split("|")[1].strip() for ln in lines[2:] if ln.startswith("|")]
    assert names[: len(PLAN) + 1] == [m.name for m in PLAN] + ["all"]
    # Before the dated narrative: the block comes before the first dated heading.
    text = doc.read_text()
    assert text.index(BEGIN) < text.index("(2026-")


def test_write_doc_replaces_only_the_generated_block_and_names_a_file_without_markers(tmp_path):
    p = tmp_path / "v.md"
    p.write_text(f"# T\n\n{BEGIN}\nold\n{END}\n\nnarrative\n")
    write_doc(p, "| new |")
    assert p.read_text() == f"# T\n\n{BEGIN}\n| new |\n{END}\n\nnarrative\n"
    q = tmp_path / "none.md"
    q.write_text("# T\n")
    with pytest.raises(ValueError, match="none.md: no generated-table markers"):
        write_doc(q, "x")


def test_a_record_that_does_not_parse_is_an_error_naming_its_file(cache, capsys):
    bad = cache / "cells" / f"{dumbbell_cell('ewt/scenario2', 24, 'red').name}.json"
    bad.write_text("{")
    assert cli_main(["validate", "--summary", "--out", str(cache)]) == 2
    assert str(bad) in capsys.readouterr().err
    bad.write_text(json.dumps({"reference": "ns-3"}))
    assert cli_main(["validate", "--summary", "--out", str(cache)]) == 2
    assert "field 'metrics' missing" in capsys.readouterr().err


def test_regenerate_refuses_a_mechanism_the_summary_does_not_have(tmp_path, capsys):
    assert cli_main(["validate", "--summary", "--regenerate", "--mechanisms", "DropTail,CAKE",
                     "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "CAKE is not a mechanism of the summary" in err and "DropTail; RED; ARED" in err


def test_mechanisms_whose_names_hold_a_comma_can_be_named_among_others():
    from netreturn.valsummary import mechanisms_named

    names = [m.name for m in PLAN]
    assert mechanisms_named("NewReno, lossy link", names) == (["NewReno, lossy link"], [])
    # The longest name wins: the repaired Westwood+ row is not read as the shipped one plus "ns-3 repaired".
    assert mechanisms_named("EWT,Westwood+, lossy link, ns-3 repaired,AWM", names) == (
        ["EWT", "Westwood+, lossy link, ns-3 repaired", "AWM"], [])
    assert mechanisms_named("DropTail,lossy link", names) == (["DropTail"], ["lossy link"])
    assert mechanisms_named("", names) == ([], [])


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation but
    hyphens dropped, spaces as hyphens."""
    return "-".join(re.sub(r"[^\w\- ]", "", heading.strip().lower()).split(" "))


def test_every_mechanism_links_to_a_section_that_exists():
    for m in PLAN:
        name, anchor = m.evidence.split("#")
        headings = [ln.lstrip("#").strip() for ln in (ROOT / "docs" / name).read_text().splitlines()
                    if ln.startswith("#")]
        assert anchor in {_anchor(h) for h in headings}, f"{m.name}: docs/{m.evidence}"


def test_regenerate_cached_compares_only_the_seeds_the_reference_store_holds(tmp_path, capsys, monkeypatch):
    from netreturn import ns3ref
    from netreturn.validate import DEFAULT_PRR, ns3_cache_path

    def no_ns3(**_):
        raise AssertionError("--cached ran ns-3")

    monkeypatch.setattr(ns3ref, "run_ns3", no_ns3)
    cell = dumbbell_cell("ewt/scenario2", 13, "droptail")
    p = ns3_cache_path(tmp_path, 13, "droptail", 2, DEFAULT_PRR, "ewt/scenario2", True, 1_000_000)
    p.parent.mkdir(parents=True)
    ref = {"tcp_data_loss_pct": 2.0, "udp_loss_pct": 0.8, "goodput_mean_mbps": 3.0, "fct_mean_s": 14.0,
           "jain_goodput": 0.9, "tcp_efficiency_pct": 97.0}
    p.write_text(json.dumps(ref))
    assert cli_main(["validate", "--summary", "--regenerate", "--cached", "--mechanisms", "DropTail", "--seeds", "3",
                     "--out", str(tmp_path), "-q"]) == 0
    captured = capsys.readouterr()
    rec = json.loads((tmp_path / "cells" / f"{cell.name}.json").read_text())
    # Seed 2 alone, in both simulators: ns-3's stored values, ours run for seed 2.
    assert rec["seeds"] == [2]
    by = {m["metric"]: m for m in rec["metrics"]}
    assert by["udp_loss_pct"]["ref"] == [0.8]
    from netreturn.api import run

    seed2 = run("validate/ewt-scenario2-aligned", set={"flows": 13, "queue": "droptail", "run.phase": "1000000ns"},
                seed=2, jobs=1).runs["udp_loss_pct"].tolist()
    assert by["udp_loss_pct"]["ours"] == pytest.approx(seed2)
    # The other five cells have nothing stored: said, and not compared.
    assert captured.err.count("no reference run stored") == 5
    assert next(ln for ln in captured.out.splitlines() if ln.startswith("DropTail")).split()[1:3] == ["ns-3", "3.44"]
    assert " 1/6 " in next(ln for ln in captured.out.splitlines() if ln.startswith("DropTail"))


def test_an_xcp_comparison_becomes_a_record_of_every_link_metric_and_jain(tmp_path):
    from netreturn.ns2xcp import LINK_METRICS, write_cell_record

    link = {"utilization": 0.9, "utilization_after": 0.95, "drops": 10.0, "drops_after": 0.0, "queue_mean_kb": 5.0}
    result = {"case": "parking-lot", "scenario": "awm/parking-lot", "overrides": {"queue": "xcp"},
              "ours_overrides": {}, "seeds": [1, 2], "stop_s": 20.0,
              "ns2": [{"links": {"R1->R2": link, "R2->R3": link}, "jain": 0.99}] * 2,
              "ours": [{"links": {"R1->R2": {**link, "drops": 30.0}, "R2->R3": link}, "jain": 0.98}] * 2}
    write_cell_record(result, tmp_path)
    rows = {r["mechanism"]: r for r in summarize(tmp_path)}["XCP"]
    assert rows["compared"] == 2 * len(LINK_METRICS) + 1
    # Ours drops three times ns-2's on R1->R2 (no spread): the one cell that differs.
    assert [(v["cell"], v["label"]) for v in rows["differ"]] == [("parking-lot, R1->R2", "drops")]


def test_regenerate_cached_remakes_xcp_and_lossy_records_from_stored_reference_runs_only(tmp_path, capsys,
                                                                                          monkeypatch):
    from netreturn import ns2xcp, ns3lossy
    from netreturn.validate_lossy import LOSSES, ns3_cache_path

    def no_reference(*_, **__):
        raise AssertionError("--cached ran a reference simulator")

    monkeypatch.setattr(ns2xcp, "run_ns2", no_reference)
    monkeypatch.setattr(ns3lossy, "run_lossy", no_reference)
    monkeypatch.setattr(ns2xcp, "ns2_binary", lambda: None)  # not needed when the runs are stored
    link = {"utilization": 0.9, "utilization_after": 0.95, "drops": 10.0, "drops_after": 0.0, "queue_mean_kb": 5.0}
    monkeypatch.setattr(ns2xcp, "run_ours", lambda *a, **k: {"links": {"R1->R2": link}, "jain": 0.98})
    # ns-2's parking lot stored for seeds 1 and 3 of 1-3; the other XCP cases not at all.
    for seed in (1, 3):
        p = ns2xcp.ns2_cache_path(tmp_path, "parking-lot", seed, 20.0)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({"links": {"R1->R2": link}, "jain": 0.99}))
    # The lossy link: NewReno's seeds 1-2 at every loss rate, seed 3 at all but one.
    ref = {"goodput_mean_mbps": 1.0, "tcp_data_loss_pct": 1.0, "tcp_efficiency_pct": 97.0, "fast_recoveries": 9.0,
           "timeouts": 1.0}
    (tmp_path / "ns3").mkdir()
    for loss in LOSSES:
        for seed in (1, 2, 3) if loss != LOSSES[0] else (1, 2):
            ns3_cache_path(tmp_path, "newreno", loss, seed).write_text(json.dumps({**ref, "seed": seed}))
    assert cli_main(["validate", "--summary", "--regenerate", "--cached", "--mechanisms", "XCP,NewReno, lossy link",
                     "--seeds", "3", "--out", str(tmp_path), "-q"]) == 0
    err = capsys.readouterr().err
    xcp = json.loads((tmp_path / "cells" / "xcp_parking-lot.json").read_text())
    assert xcp["seeds"] == [1, 3]
    lossy = json.loads((tmp_path / "cells" / "lossy_newreno.json").read_text())
    assert lossy["seeds"] == [1, 2]
    assert err.count("no reference run stored") == 2  # the two capacity cases


def test_the_lossy_links_runs_make_the_shipped_or_the_repaired_cell_and_no_other():
    from netreturn.validate_lossy import cell_of

    assert cell_of("westwood+", "linux", "ns3") == "lossy_westwood+"
    assert cell_of("westwood+", "linux", "deduct") == "lossy_westwood+_repaired"
    assert cell_of("newreno", "linux", "deduct") == "lossy_newreno", "NewReno has no Westwood+ count"
    # ns-3's scoreboard as shipped: a diagnostic, not a cell of the summary.
    assert cell_of("westwood+", "ns3", "deduct") is None
    assert cell_of("newreno", "ns3", "ns3") is None
    names = {c.name for m in PLAN for c in m.cells}
    assert {"lossy_newreno", "lossy_westwood+", "lossy_westwood+_repaired"} <= names


def test_a_testbed_comparison_leaves_a_cell_per_setting_with_linux_as_the_reference(tmp_path: Path):
    import pandas as pd

    from netreturn.testbed.compare import LINUX_REFERENCE, agreement_records

    def runs(goodputs, queue):
        return pd.DataFrame({"queue": [queue] * len(goodputs), "goodput_mean_mbps": goodputs,
                             "fct_mean_s": [4.0] * len(goodputs)})

    tb = pd.concat([runs([9.0, 9.5, 10.0], "droptail"), runs([8.0, 8.5, 9.0], "ewt")])
    sim = pd.concat([runs([9.2, 9.6, 10.1], "droptail"), runs([12.0, 12.1, 12.2], "ewt")])
    paths = agreement_records(sim, tb, ["queue"], "testbed/dumbbell4", tmp_path, {"tcp": "cubic"})
    assert [p.stem for p in paths] == ["linux_dumbbell4_queue-droptail_tcp-cubic",
                                       "linux_dumbbell4_queue-ewt_tcp-cubic"]
    row = next(r for r in summarize(tmp_path) if r["mechanism"] == "CUBIC against Linux")
    assert row["reference"] == LINUX_REFERENCE
    assert (row["cells"], row["compared"], row["either"]) == (2, 4, 3)
    assert [(v["cell"], v["metric"]) for v in row["differ"]] == [("testbed/dumbbell4, ewt", "goodput_mean_mbps")]


def test_the_summary_in_the_doc_is_the_one_the_committed_cell_records_make():
    from netreturn.valsummary import text

    # docs/validation_issue25/cells holds every record the table counts
    # (`netreturn validate --summary --out docs/validation_issue25 --doc docs/validation.md`).
    rows = summarize(ROOT / "docs" / "validation_issue25")
    assert doc_block(ROOT / "docs" / "validation.md") == text(rows, markdown=True)
