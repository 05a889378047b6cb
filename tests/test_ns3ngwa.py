"""NGWA in ns-3 3.44 (netreturn.ns3ngwa, ns3cxx/ngwa.cc) and its cell records in
`netreturn validate --summary` (issue 25 item 4). The summary's tests read
fixtures; one real ns-3 run (Fig. 3's scenario, mode 6) when ns-3 is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from netreturn import ns3ngwa, ns3ref, validate_ngwa
from netreturn.scenarios import ScenarioError
from netreturn.valrecords import record, write_record
from netreturn.valsummary import NGWA_ROWS, PLAN, summarize

needs_ns3 = pytest.mark.skipif(not ns3ref.available(), reason="ns3 (pip install ns3==3.44.post0) is not installed")


def test_each_mode_runs_the_senders_and_switches_of_table_1():
    # docs/decisions.md §2.6: CW on -> NewReno, off -> RFC 793 TCP (no congestion window).
    for mode, (cw, se, fd) in ns3ngwa.MODES.items():
        spec = ns3ngwa._load("ngwa/rate", {"ngwa_mode": mode})
        assert spec["cc"] == ("newreno" if cw else "none"), mode
        assert spec["switches"] == (cw, se, fd)
    assert [m for m, s in ns3ngwa.MODES.items() if s[2]] == [5, 6, 7, 8], "FD in modes 5-8"
    off = ns3ngwa._load("ngwa/window", {"ngwa_mode": 0, "tcp": "none"})
    assert (off["cc"], off["switches"]) == ("none", None)
    assert ns3ngwa._load("ngwa/window", {"ngwa_mode": 0})["cc"] == "newreno"


def test_a_mode_outside_table_1_is_refused_naming_the_field_before_ns3_starts():
    with pytest.raises(ScenarioError, match="ngwa.mode"):
        ns3ngwa.run_ngwa("ngwa/rate", {"ngwa_mode": 9}, [1])
    with pytest.raises(ValueError, match="ngwa/rate, ngwa/window"):
        ns3ngwa.run_ngwa("ewt/scenario2", {}, [1])


def test_every_test_of_table_2_has_its_row_in_the_summary():
    names = [m.name for m in PLAN]
    for name, key in NGWA_ROWS:
        mech = PLAN[names.index(name)]
        assert [c.name for c in mech.cells] == [validate_ngwa.cell_name(key)]
    assert sorted(k for _, k in NGWA_ROWS) == sorted(k for _, k, _ in validate_ngwa.rows())


def test_an_ngwa_cell_record_is_counted_per_metric_in_its_modes_row(tmp_path: Path):
    rows = [
        # Equal: agrees.
        ("lost_packets", "lost packets", [0, 0, 0], [0, 0, 0], validate_ngwa.WHERE["ngwa/rate"]),
        # 30 % apart with tight CIs: differs by both measures.
        ("goodput_mean_mbps", "goodput (Mb/s)", [0.40, 0.41, 0.40], [0.52, 0.53, 0.52],
         validate_ngwa.WHERE["ngwa/window"]),
    ]
    write_record(tmp_path, validate_ngwa.cell_name("mode6"), record(validate_ngwa.REFERENCE, rows, seeds=[1, 2, 3]))
    got = {r["mechanism"]: r for r in summarize(tmp_path)}
    row = got["NGWA mode 6"]
    assert (row["cells"], row["compared"], row["either"]) == (1, 2, 1)
    assert [v["cell"] for v in row["differ"]] == ["mode6, Fig. 3 (window, 180 s)"]
    assert got["NGWA mode 5"]["cells"] == 0
    text = validate_ngwa.table({"mode 6": record(validate_ngwa.REFERENCE, rows, seeds=[1, 2, 3])})
    assert text.count("DIFFER") == 1


@pytest.fixture(scope="module")
def mode6():
    if not ns3ref.available():
        pytest.skip("ns3 (pip install ns3==3.44.post0) is not installed")
    (r,) = ns3ngwa.run_ngwa("ngwa/window", {"ngwa_mode": 6}, [1], timeout_s=900)
    return r


@needs_ns3
def test_in_ns3_the_first_router_writes_the_value_and_the_receiver_rewrites_its_acks(mode6):
    r = mode6
    # Every TCP packet leaving R1 or R2 is marked: inserted at the first router on
    # its path, kept (or lowered) at the second (docs/decisions.md §2.6, the path minimum).
    assert r["ngwa_inserted"] > 0
    assert abs(r["ngwa_inserted"] - (r["ngwa_kept"] + r["ngwa_lowered"])) <= 20
    assert r["ngwa_values_received"] > 0 and r["acks_rewritten"] > 0
    # The sender's segment is 8 bytes shorter, as ours with the option.
    assert r["segment"] == 992


@needs_ns3
def test_in_ns3_mode_6_loses_no_packet_in_the_window_scenario(mode6):
    # The NGWA paper, Table 2: modes 5-8 lose nothing; ours the same (docs/ngwa.md).
    assert mode6["lost_packets"] == 0 and mode6["timeouts"] == 0


def test_a_cached_cell_compares_only_the_scenarios_whose_ns3_runs_are_stored(tmp_path: Path):
    import json

    metrics = {m: 1.0 for m, _ in ns3ngwa.METRICS}
    for s in (1, 2, 3):  # the window scenario's seeds 1-3 stored, nothing of the rate scenario
        p = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/window", "mode6", s)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({**metrics, "seed": s}))
    rec = validate_ngwa.run_cell("mode6", [1, 2, 3, 4, 5], tmp_path, cached=True)
    assert rec["scenarios"] == ["ngwa/window"] and rec["seeds"] == [1, 2, 3]
    assert {m["where"] for m in rec["metrics"]} == {validate_ngwa.WHERE["ngwa/window"]}
    assert all(len(m["ref"]) == len(m["ours"]) == 3 for m in rec["metrics"])
    with pytest.raises(RuntimeError, match="mode5"):
        validate_ngwa.run_cell("mode5", [1, 2, 3, 4, 5], tmp_path, cached=True)


def test_an_unknown_row_of_table_2_is_refused_naming_the_option_and_the_allowed_rows(tmp_path: Path, capsys):
    from netreturn.cli import main as cli_main

    rc = cli_main(["validate", "--scenario", "ngwa", "--ngwa-rows", "mode6,mode9", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--ngwa-rows mode6,mode9: mode9 is not a test of Table 2" in err and "rfc793, newreno, mode1" in err
    assert not (tmp_path / "ns3").exists(), "nothing ran"
