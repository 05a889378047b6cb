"""Ours' side of the stored validation records, run again (netreturn.valresim)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from netreturn.valresim import kind_of, resim

CELLS = Path(__file__).resolve().parents[1] / "docs" / "validation_issue25" / "cells"

#: One committed record of each kind the module re-runs (the quickest of each).
ONE_OF_EACH = {
    "dumbbell": "flows8_red_prr-upstream_scenario1_aligned_phase1000000ns",
    "lossy": "lossy_newreno_sack",
    "ngwa": "ngwa_mode2",
    "linux": "linux_dumbbell4_queue-droptail_tcp-cubic",
}


def _copy(tmp_path: Path, *names: str) -> Path:
    (tmp_path / "cells").mkdir()
    for n in names:
        shutil.copy(CELLS / f"{n}.json", tmp_path / "cells" / f"{n}.json")
    return tmp_path


def test_every_kind_of_committed_record_is_remade_exactly_by_this_build(tmp_path):
    # The summary's records carry ours' runs; at the build that is committed
    # they must be what ours gives now, or the summary reports numbers of an
    # older build. A change of ours that moves them must regenerate them
    # (`netreturn validate --summary --resim-ours --out docs/validation_issue25`).
    out = _copy(tmp_path, *ONE_OF_EACH.values())
    for kind, name in ONE_OF_EACH.items():
        assert kind_of(json.loads((CELLS / f"{name}.json").read_text())) == kind
    lines = resim(out, jobs=2)
    assert sorted(lines) == sorted(f"{n}: 0 of {len(json.loads((CELLS / f'{n}.json').read_text())['metrics'])} "
                                   "metric cells changed" for n in ONE_OF_EACH.values())


def test_a_record_with_settings_of_ours_alone_is_remade_with_them(tmp_path):
    # The cell ran ours with tcp.prr_bound = "safeack" (validate --ours-set);
    # re-run without it, its TCP loss would move from 2.08 % to 2.69 %.
    name = "flows31_fq_codel_prr-upstream_aligned_phase1000000ns_fqcodel-linux_ours-prr-bound-safeack"
    rec = json.loads((CELLS / f"{name}.json").read_text())
    assert rec["ours_sets"] == {"tcp.prr_bound": "safeack"}
    out = _copy(tmp_path, name)
    assert resim(out, jobs=2) == [f"{name}: 0 of {len(rec['metrics'])} metric cells changed"]


def test_an_ns2_record_with_the_reference_repaired_is_remade_on_ns2s_rules(tmp_path):
    # Its reference label names the repair after ns-2's own; ours must still
    # run ns2lossy.ALIGN (the timer's restart, limited transmit of resends),
    # or all 30 cells move.
    name = "lossy_newreno_ns2_rfc6582_ns2ssthresh"
    rec = json.loads((CELLS / f"{name}.json").read_text())
    assert rec["reference"] != "ns-2.35 (Agent/TCP/Newreno, TCPSink)" and rec["ns2_newreno"] == "rfc6582"
    out = _copy(tmp_path, name)
    assert resim(out, jobs=2) == [f"{name}: 0 of {len(rec['metrics'])} metric cells changed"]


def test_a_stale_ours_side_is_rewritten_and_the_references_runs_are_kept(tmp_path):
    name = ONE_OF_EACH["lossy"]
    out = _copy(tmp_path, name)
    path = out / "cells" / f"{name}.json"
    rec = json.loads(path.read_text())
    stale = json.loads(path.read_text())
    for m in stale["metrics"][:3]:
        m["ours"] = [x * 2 + 1 for x in m["ours"]]
    path.write_text(json.dumps(stale))
    assert resim(out) == [f"{name}: 3 of {len(rec['metrics'])} metric cells changed"]
    again = json.loads(path.read_text())
    assert [m["ours"] for m in again["metrics"]] == [m["ours"] for m in rec["metrics"]]
    assert [m["ref"] for m in again["metrics"]] == [m["ref"] for m in rec["metrics"]]


def test_a_record_of_no_known_kind_is_left_as_stored_and_said_so(tmp_path):
    out = _copy(tmp_path, "xcp_parking-lot")
    before = (out / "cells" / "xcp_parking-lot.json").read_text()
    (line,) = resim(out)
    assert line.startswith("xcp_parking-lot: left as stored") and "ns-2" in line
    assert (out / "cells" / "xcp_parking-lot.json").read_text() == before


@pytest.mark.parametrize("flag", ["--resim-ours"])
def test_the_cli_remakes_ours_side_and_prints_the_summary(tmp_path, flag, capsys):
    from netreturn.cli import main

    out = _copy(tmp_path, ONE_OF_EACH["linux"])
    assert main(["validate", "--summary", flag, "--out", str(out), "--quiet"]) == 0
    assert "CUBIC against Linux" in capsys.readouterr().out
