"""The ns-3 reference runner (python/netreturn/ns3ref.py).

Skipped cleanly when the optional ``ns3`` package is not installed. The module
is loaded from its file so these tests do not need the compiled extension.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "python" / "netreturn" / "ns3ref.py"


def _load():
    spec = importlib.util.spec_from_file_location("netreturn_ns3ref_under_test", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_import_does_not_load_ns3():
    before = set(sys.modules)
    mod = _load()
    loaded = set(sys.modules) - before
    assert not any(m == "ns" or m.startswith(("ns3", "cppyy")) for m in loaded)
    assert isinstance(mod.available(), bool)


def test_bad_queue_is_rejected_before_spawning():
    mod = _load()
    with pytest.raises(ValueError):
        mod.run_ns3(2, queue="fq_codel")


@pytest.fixture(scope="module")
def small_run():
    mod = _load()
    if not mod.available():
        pytest.skip("ns3 (pip install ns3==3.44.post0) is not installed")
    return mod.run_ns3(3, "droptail", seed=1, file_bytes=300_000, timeout_s=300)


def test_small_droptail_run_delivers_every_file(small_run):
    r = small_run
    assert r["flows_completed"] == 3
    assert r["queue_discs_installed"] == 1  # FqCoDel removed everywhere else
    assert r["bottleneck_max_packet_bytes"] == 1510  # 1458 + 52: no fragmentation
    assert r["events"] > 0 and r["wall_s"] > 0
    assert 0 < r["sim_time_s"] < 600
    # Every flow's FCT is at least its file over the bottleneck plus one RTT.
    for f in r["per_flow"]:
        assert f["bytes_delivered"] >= 300_000
        assert f["fct_s"] > 300_000 * 8 / 45e6 + 0.084
    for k in ("tcp_packet_loss_pct", "udp_loss_pct", "goodput_mean_mbps", "fct_mean_s",
              "jain_goodput", "tcp_efficiency_pct", "utilization"):
        assert not math.isnan(r[k]), k
    assert 0 <= r["tcp_packet_loss_pct"] < 100 and 0 <= r["udp_loss_pct"] < 100
    assert 0 < r["utilization"] <= 1.0
    assert 0 < r["jain_goodput"] <= 1.0
    assert 0 < r["tcp_efficiency_pct"] <= 100


def test_packet_log_and_repaired_prr(tmp_path):
    """--log-flow writes netreturn-sim's log format; --prr swaps ns-3's PRR."""
    import json
    import subprocess

    mod = _load()
    if not mod.available():
        pytest.skip("ns3 (pip install ns3==3.44.post0) is not installed")
    log = tmp_path / "flow0.log"
    cmd = [sys.executable, str(_PATH), "--flows", "3", "--file-bytes", "300000", "--starts", "1.0,1.1,1.2",
           "--prr", "rfc6937", "--log-flow", "0", "--log-out", str(log), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1])
    assert r["prr"] == "rfc6937" and r["flows_completed"] == 3
    lines = log.read_text().splitlines()
    assert r["log_lines"] == len(lines) > 0
    assert any(" send data 1+1458" in ln for ln in lines), "first segment (relative seq 1)"
    assert any(" recv ack " in ln for ln in lines) and any(" state una=" in ln for ln in lines)
    times = [float(ln.split()[0]) for ln in lines]
    assert times == sorted(times) and times[0] >= 1.0
