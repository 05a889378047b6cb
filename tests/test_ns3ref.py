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
    for k in ("tcp_loss_pct", "udp_loss_pct", "goodput_mean_mbps", "fct_mean_s",
              "jain_goodput", "tcp_efficiency_pct", "utilization"):
        assert not math.isnan(r[k]), k
    assert 0 <= r["tcp_loss_pct"] < 100 and 0 <= r["udp_loss_pct"] < 100
    assert 0 < r["utilization"] <= 1.0
    assert 0 < r["jain_goodput"] <= 1.0
    assert 0 < r["tcp_efficiency_pct"] <= 100
