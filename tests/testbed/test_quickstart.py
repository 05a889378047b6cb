"""`netreturn testbed quickstart`: the documented one command of
docs/gateway.md, run for real (root, iproute2, ethtool)."""

from __future__ import annotations

import importlib
import json

import pytest
from _load import load_testbed

tb = load_testbed()
needs_netns = pytest.mark.skipif(bool(tb.netns.missing_requirements()),
                                 reason="; ".join(tb.netns.missing_requirements()) or "ok")


@needs_netns
def test_the_quickstart_runs_both_settings_and_only_the_controller_rewrites_windows(tmp_path, capsys):
    rc = tb.main(["quickstart", "--flows", "2", "--bytes", "1000000", "--rate", "20mbit", "--delay", "10ms",
                  "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "ACK windows rewritten" in out and "none" in out and "ewt" in out
    rewritten = [ln for ln in out.splitlines() if ln.startswith("ACK windows rewritten")][0].split()
    assert rewritten[-2] == "0" and int(rewritten[-1]) > 0  # none, then ewt
    for ctl in ("none", "ewt"):
        s = json.loads((tmp_path / ctl / "summary.json").read_text())
        assert s["controller"] == ctl and not s["failed_flows"] and s["receiver_in_csum_errors"] == 0


def test_a_missing_gateway_without_cargo_says_how_to_get_one(monkeypatch, tmp_path):
    quickstart = importlib.import_module(tb.__name__ + ".quickstart")
    gateway_binary = importlib.import_module(tb.__name__.rsplit(".", 1)[0] + ".gateway_binary")

    # Nothing on PATH (no gateway, no cargo), no checkout's target directory.
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NETRETURN_GATEWAY", raising=False)
    monkeypatch.setattr(gateway_binary, "checkout", lambda: tmp_path)
    with pytest.raises(tb.netns.TestbedError, match="rustup"):
        quickstart.ensure_gateway(None, build=True)
    with pytest.raises(tb.netns.TestbedError, match="not found"):
        quickstart.ensure_gateway(None, build=False)
