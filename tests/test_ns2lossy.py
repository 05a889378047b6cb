"""ns-2.35's NewReno on the SARBE lossy link (netreturn.ns2lossy), issue 25 item 3."""

import shutil

import pytest

from netreturn import ns2lossy


def test_the_tcl_carries_the_scenarios_buffers_loss_and_agents():
    doc = ns2lossy._document("newreno", 0.03)
    tcl = ns2lossy.tcl_script(doc, "newreno", 4)
    assert "$ns queue-limit $n(R1) $n(R2) 62" in tcl
    assert "$ns queue-limit $n(S) $n(R1) 1000" in tcl
    assert "$em0 set rate_ 0.03" in tcl and "$em0 unit pkt" in tcl
    assert "$ns link-lossmodel $em0 $n(R2) $n(D)" in tcl
    assert "link-lossmodel $em1" not in tcl, "loss_direction = forward: no error model on D -> R2"
    assert "new Agent/TCP/Newreno" in tcl and "new Agent/TCPSink" in tcl
    assert "$tcp set windowInit_ 2" in tcl and "$tcp set minrto_ 0.2" in tcl and "$tcp set packetSize_ 1000" in tcl
    assert "$rng0 seed 4001" in tcl


def test_the_senders_timestamps_follow_the_scenario_and_are_on_as_ours_unless_it_turns_them_off():
    doc = ns2lossy._document("newreno", 0.01)
    assert "timestamps" not in doc["tcp"]
    assert "$tcp set timestamps_ true" in ns2lossy.tcl_script(doc, "newreno", 1)
    doc["tcp"]["timestamps"] = False
    assert "$tcp set timestamps_ false" in ns2lossy.tcl_script(doc, "newreno", 1)


def test_a_key_ns2_cannot_translate_is_a_clear_error_not_a_traceback(tmp_path, capsys):
    from netreturn.cli import main as cli_main

    rc = cli_main(["validate", "--scenario", "sarbe/lossy_link", "--reference", "ns2", "--cc", "newreno",
                   "--seeds", "1", "--out", str(tmp_path), "--set", "tcp.ts_tick=2ms",
                   "--set", "tcp.dupack_threshold=5"])
    err = capsys.readouterr().err
    assert rc == 2 and "sarbe/lossy_link" in err and "dupack_threshold" in err and "Traceback" not in err


def test_a_sack_or_prr_configuration_is_refused_naming_the_keys():
    doc = ns2lossy._document("newreno", 0.01, {"sack": True, "recovery": "prr"})
    with pytest.raises(ValueError, match="sack=.*recovery="):
        ns2lossy.tcl_script(doc, "newreno", 1)


def test_westwood_is_refused_with_the_allowed_agents():
    with pytest.raises(ValueError, match="newreno"):
        ns2lossy.tcl_script(ns2lossy._document("westwood+", 0.01), "westwood+", 1)


def test_metrics_follow_the_agents_counters():
    r = ns2lossy.parse_output("NS2 ack 999 ndatapack 1100 nrexmitpack 100 nrexmit 3 ncwndcuts 13 drops 110\n",
                              stop_s=10.0, segment_size=1000)
    assert r["goodput_mean_mbps"] == pytest.approx(1000 * 1000 * 8 / 10 / 1e6)
    assert r["tcp_efficiency_pct"] == pytest.approx(1000 / 1100 * 100)
    assert r["tcp_data_loss_pct"] == pytest.approx(10.0)
    assert (r["fast_recoveries"], r["timeouts"]) == (10, 3)


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (Debian package ns2) is not installed")
def test_a_real_ns2_run_conserves_packets_and_each_seed_draws_its_own_losses():
    runs = ns2lossy.run_lossy("newreno", 0.05, [1, 2])
    for r in runs:
        delivered = r["bytes_delivered"] // 1000
        sent, first_sends = r["data_packets_sent"], r["data_packets_sent"] - r["retransmitted_packets"]
        # A packet sent is delivered, dropped or still in flight: delivered ones and drops never exceed the sends,
        assert delivered + r["drops"] <= sent
        # and what was sent once but not yet delivered fits in the pipe (~64) plus the 62-packet buffer.
        assert 0 <= first_sends - delivered <= 130
        assert r["drops"] > 0 and r["fast_recoveries"] > 0
    assert runs[0]["drops"] != runs[1]["drops"], "each seed draws its own losses"


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (Debian package ns2) is not installed")
def test_in_ns2_rfc6582s_recovery_point_turns_timeouts_into_fast_recoveries_at_one_percent_loss():
    # As shipped (lessCareful_ 0), three dupACKs before highest_ack_ passes
    # recover_ by a packet start no fast retransmit (tcp-newreno.cc
    # dupack_action): that loss waits for the timer. Same seeds, same losses.
    seeds = list(range(1, 11))
    careful = ns2lossy.run_lossy("newreno", 0.01, seeds)
    repaired = ns2lossy.run_lossy("newreno", 0.01, seeds, newreno="rfc6582")
    assert all(r["newreno"] == "rfc6582" for r in repaired) and "newreno" not in careful[0]
    assert sum(r["timeouts"] for r in repaired) < sum(r["timeouts"] for r in careful)
    assert sum(r["fast_recoveries"] for r in repaired) > sum(r["fast_recoveries"] for r in careful)


def test_rates_times_and_buffers_go_through_the_projects_one_unit_parser():
    from netreturn.testbed.scenario import parse_rate

    tcl = ns2lossy.tcl_script(ns2lossy._document("newreno", 0.01), "newreno", 1)
    # ns-2's bw_parse takes plain bits per second; 0.01 ms is 1e-05 s.
    assert "$ns duplex-link $n(R1) $n(R2) 5000000 0.05 DropTail" in tcl
    assert "$ns duplex-link $n(S) $n(R1) 10000000 1e-05 DropTail" in tcl
    assert ns2lossy._ns2_rate("1.5Gbps") == str(int(parse_rate("1.5Gbps"))) == "1500000000"
    with pytest.raises(ValueError, match="packets"):
        ns2lossy._packets("64kB", "link R1->R2")


def test_ns2s_timer_restart_at_a_fast_retransmit_is_set_on_ours_and_refused_when_turned_off():
    # ns-2.35 tcp-newreno.cc dupack_action: reset_rtx_timer(1,0) at every
    # fast retransmit, no switch; ours runs the same rule against it.
    assert ns2lossy.ALIGN["tcp.rto_restart_on_fast_retransmit"] == "true"
    doc = ns2lossy._document("newreno", 0.03)
    assert str(doc["tcp"]["rto_restart_on_fast_retransmit"]).lower() == "true"
    off = ns2lossy._document("newreno", 0.03, {"tcp.rto_restart_on_fast_retransmit": "false"})
    with pytest.raises(ValueError, match="rto_restart_on_fast_retransmit"):
        ns2lossy.tcl_script(off, "newreno", 1)


def test_ours_loss_ssthresh_rule_leaves_ns2s_script_alone_and_names_its_own_summary_cell():
    from netreturn.validate_lossy import NS2_ALIGNED
    from netreturn.valsummary import PLAN

    doc = ns2lossy._document("newreno", 0.01)
    ruled = ns2lossy._document("newreno", 0.01, {"tcp.loss_ssthresh": "ns2"})
    assert ruled["tcp"]["loss_ssthresh"] == "ns2"
    # ns-2 always halves its own window (slowdown): the Tcl is the same.
    assert ns2lossy.tcl_script(ruled, "newreno", 1) == ns2lossy.tcl_script(doc, "newreno", 1)
    cells = {c.name: c.args for m in PLAN for c in m.cells if c.kind == "lossy" and c.args.get("reference") == "ns2"}
    assert cells == {"lossy_newreno_ns2": {"cc": "newreno", "reference": "ns2"},
                     "lossy_newreno_ns2_ns2ssthresh": {"cc": "newreno", "reference": "ns2", "sets": NS2_ALIGNED},
                     "lossy_newreno_ns2_rfc6582_ns2ssthresh": {"cc": "newreno", "reference": "ns2",
                                                               "sets": NS2_ALIGNED, "ns2_newreno": "rfc6582"}}


def test_ns2s_recovery_point_is_the_shipped_careful_one_unless_repaired_to_rfc6582s_and_others_are_refused():
    doc = ns2lossy._document("newreno", 0.01)
    assert "lessCareful_" not in ns2lossy.tcl_script(doc, "newreno", 1)
    assert "$tcp set lessCareful_ 1" in ns2lossy.tcl_script(doc, "newreno", 1, "rfc6582")
    with pytest.raises(ValueError, match="careful, rfc6582"):
        ns2lossy.tcl_script(doc, "newreno", 1, "lesscareful")


def test_limited_transmit_becomes_singledup_and_ns2s_resend_on_a_dupack_is_required_of_ours():
    # ns-2.35 TcpAgent::send_one sends the next t_seqno_, a go-back-N resend
    # too; ours runs that rule against it (ALIGN) or the Tcl is refused.
    assert ns2lossy.ALIGN["tcp.limited_transmit_resends"] == "true"
    doc = ns2lossy._document("newreno", 0.03)
    assert "$tcp set singledup_ 1" in ns2lossy.tcl_script(doc, "newreno", 1)
    new_only = ns2lossy._document("newreno", 0.03, {"tcp.limited_transmit_resends": "false"})
    with pytest.raises(ValueError, match="limited_transmit_resends"):
        ns2lossy.tcl_script(new_only, "newreno", 1)
    off = ns2lossy._document("newreno", 0.03, {"tcp.limited_transmit": "false",
                                                "tcp.limited_transmit_resends": "false"})
    assert "$tcp set singledup_ 0" in ns2lossy.tcl_script(off, "newreno", 1)
