"""The side-by-side verdict of `netreturn validate` (no ns-3 needed)."""

import math

from netreturn.validate import agree, compare, table


def test_agree_uses_the_combined_confidence_intervals():
    # |10 - 12| = 2 <= hypot(1.5, 1.5) = 2.12: agree.
    assert agree((10.0, 1.5, 5), (12.0, 1.5, 5)) is True
    # |10 - 13| = 3 > 2.12: differ.
    assert agree((10.0, 1.5, 5), (13.0, 1.5, 5)) is False
    # One replication has no CI: no verdict.
    assert agree((10.0, math.nan, 1), (10.0, 1.0, 5)) is None


def test_compare_summarizes_each_simulator_over_its_seeds():
    ns3 = [{"tcp_packet_loss_pct": x, "timeouts": 50} for x in (1.8, 1.9, 2.0)]
    ours = [{"tcp_packet_loss_pct": x, "timeouts": 400} for x in (9.9, 10.0, 10.1)]
    rows = {r["metric"]: r for r in compare(ns3, ours)}
    assert math.isclose(rows["tcp_packet_loss_pct"]["ns3"][0], 1.9)
    assert math.isclose(rows["tcp_packet_loss_pct"]["netreturn"][0], 10.0)
    assert rows["tcp_packet_loss_pct"]["agree"] is False
    # Metrics missing on both sides have no verdict rather than a false one.
    assert rows["fct_mean_s"]["agree"] is None
    text = table(list(rows.values()))
    assert "DIFFER" in text and "TCP loss ratio" in text
