"""The SARBE paper's lossy link in ns-3 (python/netreturn/ns3lossy.py) and the
``netreturn validate --scenario sarbe/lossy_link`` tables (issue 14 item 5).

The runs need the optional ``ns3`` package and are skipped without it; the
CLI and table tests need no ns-3.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from netreturn import ns3lossy, ns3ref
from netreturn.args import losses
from netreturn.validate_lossy import LOSSES, METRICS, table

needs_ns3 = pytest.mark.skipif(not ns3ref.available(), reason="ns3 (pip install ns3==3.44.post0) is not installed")


def test_validate_takes_the_lossy_link_with_fig_3bs_loss_rates_by_default():
    from netreturn.cli import build_parser

    a = build_parser().parse_args(["validate", "--scenario", "sarbe/lossy_link"])
    assert a.scenario == "sarbe/lossy_link" and a.cc is None and a.loss is None and a.ns3_renosack == "linux"
    assert LOSSES[0] == 0.00001 and LOSSES[-1] == 0.1  # 0.001 % .. 10 %
    a = build_parser().parse_args(["validate", "--scenario", "sarbe/lossy_link", "--cc", "westwood+",
                                   "--loss", "0.01,0.1", "--ns3-renosack", "ns3"])
    assert (a.cc, a.loss, a.ns3_renosack) == ("westwood+", (0.01, 0.1), "ns3")


def test_a_loss_rate_outside_zero_to_one_is_refused():
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        losses("0.01,2")
    with pytest.raises(argparse.ArgumentTypeError):
        losses("one percent")


def test_the_lossy_table_has_a_row_per_loss_rate_and_marks_differences():
    cell = {"ns3": (1.0, 0.1, 5), "netreturn": (2.0, 0.1, 5), "agree": False}
    same = {"ns3": (1.0, 0.1, 5), "netreturn": (1.05, 0.1, 5), "agree": True}
    rows = [{"loss": x, **{k: (cell if k == "goodput_mean_mbps" else same) for k, _ in METRICS}} for x in (0.001, 0.1)]
    text = table("newreno", rows).splitlines()
    assert len(text) == 4 and text[0].startswith("newreno: loss %") and set(text[1]) == {"-", " "}
    assert text[2].split()[0] == "0.1" and text[3].split()[0] == "10"
    assert all(ln.count("DIFFER") == 1 for ln in text[2:])
    # goodput in Mb/s (3 significant digits), the CI beside it: ns-3 / ours.
    assert "1 ± 0.1 / 2 ± 0.1 DIFFER" in text[2]


def test_data_loss_counts_destroyed_and_tail_dropped_packets_over_those_sent():
    r = {"error_model_drops": 30, "queue_drops": 10, "data_packets_sent": 2000}
    assert math.isclose(ns3lossy.data_loss_pct(r), 2.0)
    assert math.isnan(ns3lossy.data_loss_pct({"data_packets_sent": 0}))


def test_an_unknown_congestion_control_is_refused_before_spawning():
    with pytest.raises(ValueError):
        ns3lossy.run_lossy("cubic", 0.01, [1])
    with pytest.raises(ValueError):
        ns3lossy.run_lossy("newreno", 0.01, [1], renosack="bsd")
    with pytest.raises(ValueError, match="westwood must be one of ns3, deduct, linux"):
        ns3lossy.run_lossy("westwood+", 0.01, [1], westwood="bsd")


def test_ours_restarting_the_timer_on_every_partial_ack_with_sack_has_no_ns3_translation():
    # ns-3 3.44 keeps RFC 6582's Impatient rule in every recovery; asking it
    # for RFC 6298 (5.3)'s rule is refused, naming the key, before ns-3 runs.
    with pytest.raises(ValueError, match="tcp.sack_impatient = false"):
        ns3lossy._tcp_settings(None, {"sack": True, "sack_impatient": False}, "newreno")


def test_with_sack_only_ns3s_pipe_rule_for_ssthresh_at_a_loss_translates_and_the_default_is_refused():
    # ns-3 3.44 EnterRecovery and ReTxTimeout set ssthresh from BytesInFlight
    # (RFC 6675's pipe); ours' default halves SND.MAX - SND.UNA, Linux's
    # profile halves cwnd and keeps a recovery's reduction: both refused with
    # SACK, naming the key and the value to set, before ns-3 runs. A file
    # that sets nothing gets ours' default, so it is refused too (the
    # SACK-aligned cells set "ns3").
    for rule in ("rfc5681", "linux"):
        with pytest.raises(ValueError, match=f"tcp.loss_ssthresh = '{rule}'.*\"ns3\""):
            ns3lossy._tcp_settings(None, {"sack": True, "sack_impatient": True, "loss_ssthresh": rule}, "newreno")
    with pytest.raises(ValueError, match="tcp.loss_ssthresh = 'rfc5681'"):
        ns3lossy._tcp_settings(None, {"sack": True, "sack_impatient": True}, "newreno")
    from netreturn.validate_lossy import SACK_ALIGNED

    assert SACK_ALIGNED["tcp.loss_ssthresh"] == "ns3"


def test_the_sack_cells_of_the_summary_are_both_simulators_aligned_and_nothing_else():
    from netreturn.validate_lossy import SACK_ALIGNED, cell_of
    from netreturn.valsummary import PLAN

    assert cell_of("westwood+", "linux", "linux", SACK_ALIGNED) == "lossy_westwood+_sack_repaired"
    assert cell_of("newreno", "linux", "ns3", SACK_ALIGNED) == "lossy_newreno_sack"
    assert cell_of("westwood+", "linux", "deduct", SACK_ALIGNED) is None
    assert cell_of("newreno", "linux", "ns3", {"sack": "true"}) is None
    names = {c.name for m in PLAN for c in m.cells}
    assert {"lossy_newreno_sack", "lossy_westwood+_sack_repaired"} <= names


@needs_ns3
def test_every_run_of_a_process_runs_the_westwood_variant_asked_for_its_first_too():
    # Until 2026-11-27 the variant's congestion control was chosen after the
    # stack was installed, so each process's first seed ran ns-3's own
    # TcpWestwoodPlus whatever --ns3-westwood asked.
    for westwood, name in (("deduct", "ns3::NetreturnWestwoodPlus"), ("linux", "ns3::NetreturnWestwoodLinux")):
        (r,) = ns3lossy.run_lossy("westwood+", 0.01, [1], westwood=westwood, timeout_s=900)
        assert r["congestion_ops"] == name, westwood


@pytest.fixture(scope="module")
def newreno_runs():
    if not ns3ref.available():
        pytest.skip("ns3 (pip install ns3==3.44.post0) is not installed")
    both = ns3lossy.run_lossy("newreno", 0.01, [1, 2], timeout_s=900)
    alone = ns3lossy.run_lossy("newreno", 0.01, [2], timeout_s=900)
    shipped = ns3lossy.run_lossy("newreno", 0.01, [1], renosack="ns3", timeout_s=900)
    return both, alone, shipped


@needs_ns3
def test_a_seed_gives_the_same_ns3_run_alone_and_after_another(newreno_runs):
    both, alone, _ = newreno_runs
    for k in ("bytes_delivered", "error_model_drops", "data_packets_sent", "timeouts", "fast_recoveries"):
        assert both[1][k] == alone[0][k], k
    assert both[0]["bytes_delivered"] != both[1]["bytes_delivered"]  # seeds differ


@needs_ns3
def test_ns3_destroys_data_packets_on_the_wireless_hop_at_the_configured_rate(newreno_runs):
    both, _, _ = newreno_runs
    for r in both:
        n, k = r["data_packets_sent"], r["error_model_drops"]
        # Binomial(n, 0.01): within four standard deviations.
        assert abs(k - 0.01 * n) < 4 * math.sqrt(n * 0.01 * 0.99)
        # The wireless hop's ACK direction loses nothing: every ACK D put on
        # the 1 ms hop reached R2 (at most the last one or two in flight).
        assert 0 <= r["devices"]["D->R2"][0] - r["devices"]["R2->D"][1] <= 2


@needs_ns3
def test_ns3s_reno_scoreboard_as_shipped_overfills_the_pipe_sized_buffer(newreno_runs):
    # ns-3 3.44 keeps dupACK-guessed SACK marks past the end of recovery and
    # counts those segments out of flight: the sender overruns cwnd and the
    # 62-packet buffer overflows at 1 % random loss, where one NewReno flow
    # never fills it once the marks are cleared as Linux clears them.
    both, _, shipped = newreno_runs
    assert shipped[0]["queue_drops"] > 10 * max(1, both[0]["queue_drops"])
    assert shipped[0]["tcp_efficiency_pct"] < both[0]["tcp_efficiency_pct"]


def test_the_rfc6582_repair_of_ns3_gets_its_own_runs_and_summary_cells(tmp_path):
    from netreturn.cli import build_parser
    from netreturn.validate_lossy import cell_of, ns3_cache_path
    from netreturn.valsummary import PLAN

    a = build_parser().parse_args(["validate", "--scenario", "sarbe/lossy_link", "--ns3-renosack", "rfc6582"])
    assert a.ns3_renosack == "rfc6582" and "rfc6582" in ns3lossy.RENOSACK
    assert ns3_cache_path(tmp_path, "newreno", 0.01, 1, "rfc6582") != ns3_cache_path(tmp_path, "newreno", 0.01, 1)
    assert cell_of("newreno", "rfc6582", "ns3") == "lossy_newreno_rfc6582"
    assert cell_of("westwood+", "rfc6582", "deduct") == "lossy_westwood+_repaired_rfc6582"
    assert cell_of("newreno", "linux", "ns3") == "lossy_newreno"  # the rows before the repair keep theirs
    assert cell_of("newreno", "ns3", "ns3") is None
    names = {c.name for m in PLAN for c in m.cells}
    assert {"lossy_newreno_rfc6582", "lossy_newreno"} <= names


@pytest.mark.slow
@needs_ns3
def test_with_the_rfc6582_repair_ns3_newreno_leaves_recovery_without_loss_marks():
    # ns-3 3.44 leaves fast recovery with the new head still marked lost
    # (docs/validation.md, "ns-3's NewReno without SACK as RFC 6582"); the
    # repair clears the marks at most exits, the Linux-exit default never.
    # (That this does not lower ns-3's recoveries is measured there.)
    linux = ns3lossy.run_lossy("newreno", 0.00001, [1], timeout_s=1800)[0]
    rfc = ns3lossy.run_lossy("newreno", 0.00001, [1], renosack="rfc6582", timeout_s=1800)[0]
    assert linux["renosack"] == "linux" and linux["stale_lost_cleared"] == 0
    assert rfc["renosack"] == "rfc6582" and rfc["stale_lost_cleared"] > rfc["fast_recoveries"] / 2


def test_the_strict_rfc6582_repair_of_ns3_gets_its_own_runs_and_summary_cells(tmp_path):
    from netreturn.cli import build_parser
    from netreturn.validate_lossy import cell_of, ns3_cache_path
    from netreturn.valsummary import PLAN

    a = build_parser().parse_args(["validate", "--scenario", "sarbe/lossy_link", "--ns3-renosack", "rfc6582-strict"])
    assert a.ns3_renosack == "rfc6582-strict" and "rfc6582-strict" in ns3lossy.RENOSACK
    assert ns3_cache_path(tmp_path, "newreno", 0.01, 1, "rfc6582-strict") != ns3_cache_path(
        tmp_path, "newreno", 0.01, 1, "rfc6582")
    assert cell_of("newreno", "rfc6582-strict", "ns3") == "lossy_newreno_rfc6582_strict"
    assert cell_of("westwood+", "rfc6582-strict", "deduct") == "lossy_westwood+_repaired_rfc6582_strict"
    names = {c.name for m in PLAN for c in m.cells}
    assert {"lossy_newreno_rfc6582_strict", "lossy_westwood+_repaired_rfc6582_strict"} <= names


def test_receiver_duplicates_are_the_packets_that_arrived_beyond_the_bytes_delivered():
    r = {"data_packets_received": 1000, "bytes_delivered": 700_000}
    assert math.isclose(ns3lossy.receiver_duplicate_pct(r, 1000), 30.0)
    assert math.isnan(ns3lossy.receiver_duplicate_pct({}, 1000))


@pytest.mark.slow
@needs_ns3
def test_ns3_newreno_without_guessed_marks_outside_recovery_no_longer_resends_what_the_receiver_holds():
    # docs/validation.md, "ns-3's NewReno without SACK as RFC 6582, repaired":
    # with only recovery's exit cleared (rfc6582) DiscardUpTo puts a lost
    # mark back on the head at the next CA_DISORDER -> CA_OPEN, a single
    # dupACK then starts a recovery whose partial ACKs resend segments the
    # receiver holds, and about a third of what reaches the receiver are
    # duplicates (seed 1 at 0.001 %: 31 %, 273 recoveries). Cleared at every
    # entry into CA_OPEN (rfc6582-strict): 1.1 %, 14 recoveries (ours 17).
    rfc = ns3lossy.run_lossy("newreno", 0.00001, [1], renosack="rfc6582", timeout_s=1800)[0]
    strict = ns3lossy.run_lossy("newreno", 0.00001, [1], renosack="rfc6582-strict", timeout_s=1800)[0]
    assert rfc["receiver_duplicate_pct"] > 20 and rfc["fast_recoveries"] > 100
    assert strict["renosack"] == "rfc6582-strict" and strict["open_marks_cleared"] > 50
    assert strict["receiver_duplicate_pct"] < 3 and strict["fast_recoveries"] < 30
    assert strict["tcp_efficiency_pct"] > 95 and strict["goodput_mean_mbps"] > 2 * rfc["goodput_mean_mbps"] * 0.9


def test_an_unknown_loss_exit_is_refused_before_spawning():
    with pytest.raises(ValueError):
        ns3lossy.run_lossy("newreno", 0.01, [1], loss_exit="linux")


@pytest.mark.slow
@needs_ns3
def test_ns3_newreno_grows_cwnd_on_the_ack_that_ends_ca_loss_only_when_repaired():
    # ns-3 3.44 gives the ACK that ends CA_LOSS only the segments beyond the
    # recovery point, none when it reaches it exactly; RFC 5681 section 3.1
    # grows cwnd on every ACK of new data. At 10 % loss most timeouts end so
    # (seed 1: 138 of 150), and the repaired sender delivers more.
    shipped = ns3lossy.run_lossy("newreno", 0.1, [1], renosack="rfc6582-strict", timeout_s=900)[0]
    grown = ns3lossy.run_lossy("newreno", 0.1, [1], renosack="rfc6582-strict", loss_exit="rfc5681",
                               timeout_s=900)[0]
    assert shipped["loss_exit"] == "ns3" and shipped["loss_exit_growths"] == 0
    assert grown["congestion_ops"] == "ns3::NetreturnNewRenoLossExit"
    assert grown["loss_exit_growths"] > grown["timeouts"] / 2
    assert grown["goodput_mean_mbps"] > 1.05 * shipped["goodput_mean_mbps"]


@pytest.mark.slow
@needs_ns3
def test_ns3_westwood_with_sack_grows_cwnd_on_the_ack_that_ends_ca_loss_only_when_repaired():
    # The same repair reaches both Westwood+ variants (LossExitSegments in
    # ns3cxx/lossy.cc), with SACK as the summary's SACK cells run it.
    from netreturn.validate_lossy import SACK_ALIGNED

    shipped = ns3lossy.run_lossy("westwood+", 0.1, [1], overrides=SACK_ALIGNED, westwood="linux", timeout_s=900)[0]
    grown = ns3lossy.run_lossy("westwood+", 0.1, [1], overrides=SACK_ALIGNED, westwood="linux",
                               loss_exit="rfc5681", timeout_s=900)[0]
    assert shipped["loss_exit_growths"] == 0
    assert grown["congestion_ops"] == "ns3::NetreturnWestwoodLinux"
    assert grown["loss_exit_growths"] > grown["timeouts"] / 2
    assert grown["goodput_mean_mbps"] > 1.05 * shipped["goodput_mean_mbps"]


def test_the_loss_exit_repair_names_its_own_sack_cells_and_nothing_else():
    from netreturn.validate_lossy import SACK_ALIGNED, cell_of, ns3_cache_path
    from netreturn.valsummary import PLAN

    assert cell_of("newreno", "linux", "ns3", SACK_ALIGNED, "rfc5681") == "lossy_newreno_sack_lossexit"
    assert cell_of("westwood+", "linux", "linux", SACK_ALIGNED, "rfc5681") == "lossy_westwood+_sack_repaired_lossexit"
    assert cell_of("newreno", "linux", "ns3", None, "rfc5681") is None
    assert cell_of("newreno", "linux", "ns3", SACK_ALIGNED, "bsd") is None
    a = ns3_cache_path(Path("o"), "newreno", 0.1, 1, sets=SACK_ALIGNED)
    b = ns3_cache_path(Path("o"), "newreno", 0.1, 1, sets=SACK_ALIGNED, loss_exit="rfc5681")
    assert a != b and "lossexit-rfc5681" in b.name
    names = {c.name for m in PLAN for c in m.cells}
    assert {"lossy_newreno_sack_lossexit", "lossy_westwood+_sack_repaired_lossexit"} <= names


@needs_ns3
def test_with_the_rfc6298_repair_ns3_keeps_a_backed_off_rto_until_an_rtt_sample():
    # ns-3 3.44's NewAck recomputes the RTO on any new ACK, ending a
    # timeout's backoff before an RTT sample (RFC 6298 section 5 keeps it);
    # at 10 % loss a run times out ~150 times and collapses its RTO often.
    (shipped,) = ns3lossy.run_lossy("newreno", 0.1, [1], timeout_s=900)
    (kept,) = ns3lossy.run_lossy("newreno", 0.1, [1], rto="rfc6298", timeout_s=900)
    assert shipped["timeouts"] > 20 and shipped["rto_collapses"] > 10
    assert kept["timeouts"] > 20 and kept["rto_collapses"] == 0
