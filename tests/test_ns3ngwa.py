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


# ---- the RFC 793 stand-in repaired (--ns3-rfc793 strict; docs/validation.md, "ns-3's RFC 793 stand-in, repaired")


def test_the_rfc793_stand_in_is_changed_only_in_the_rows_whose_senders_have_no_congestion_window():
    # Table 1 (docs/decisions.md §2.6): CW off in modes 3, 4, 7, 8, and the RFC 793 row itself.
    assert validate_ngwa.rfc793_rows() == ["rfc793", "mode3", "mode4", "mode7", "mode8"]
    with pytest.raises(ValueError, match="row mode1 has congestion control.*rfc793, mode3, mode4, mode7, mode8"):
        validate_ngwa.run_cell("mode1", [1, 2, 3], Path("unused"), cached=True, rfc793="strict")


def test_an_unknown_rfc793_stand_in_is_refused_naming_the_allowed_ones_before_ns3_starts():
    with pytest.raises(ValueError,
                       match="rfc793 .*must be one of ns3, strict, strict-rfc6298, strict-rfc6298-gbn, not 'loose'"):
        ns3ngwa.run_ngwa("ngwa/window", {"ngwa_mode": 3}, [1], rfc793="loose")
    with pytest.raises(ValueError, match=r"put \{seed\} in the path"):
        ns3ngwa.run_ngwa("ngwa/window", {"ngwa_mode": 3}, [1, 2], log="/tmp/one.log")


def test_strict_runs_and_records_are_kept_beside_the_as_built_ones(tmp_path: Path):
    assert validate_ngwa.cell_name("mode3", "strict") == "ngwa_mode3_rfc793-strict"
    assert validate_ngwa.cell_name("mode3") == "ngwa_mode3"
    built = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/window", "mode3", 1)
    strict = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/window", "mode3", 1, "strict")
    assert built != strict and "rfc793-strict" in strict.name


def test_with_ns3_rfc793_strict_a_row_with_congestion_control_is_refused_naming_the_allowed_rows(tmp_path, capsys):
    from netreturn.cli import main as cli_main

    rc = cli_main(["validate", "--scenario", "ngwa", "--ns3-rfc793", "strict", "--ngwa-rows", "mode3,newreno",
                   "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "newreno is not a row of RFC 793 senders (--ns3-rfc793 strict)" in err
    assert "allowed: rfc793, mode3, mode4, mode7, mode8" in err
    assert not (tmp_path / "ns3").exists(), "nothing ran"


def test_a_strict_record_counts_in_its_own_summary_row_not_in_the_as_built_one(tmp_path: Path):
    from netreturn.valsummary import NGWA_STRICT_ROWS

    rows = [("lost_packets", "lost packets", [10, 11, 12], [10, 11, 12], validate_ngwa.WHERE["ngwa/window"])]
    write_record(tmp_path, validate_ngwa.cell_name("mode3", "strict"),
                 record(validate_ngwa.REFERENCE, rows, seeds=[1, 2, 3]))
    got = {r["mechanism"]: r for r in summarize(tmp_path)}
    assert [(n, k, v) for n, k, v, _ in NGWA_STRICT_ROWS if k == "mode3"] == [
        ("NGWA mode 3, ns-3 strict", "mode3", "strict"),
        ("NGWA mode 3, ns-3 strict+RTO", "mode3", "strict-rfc6298")]
    assert (got["NGWA mode 3, ns-3 strict"]["cells"], got["NGWA mode 3, ns-3 strict"]["either"]) == (1, 1)
    assert got["NGWA mode 3"]["cells"] == 0


@pytest.fixture(scope="module")
def mode3_log(tmp_path_factory):
    """Mode 3 (RFC 793 senders) in Fig. 3's scenario for 70 s, as built and strict, with the per-packet log."""
    if not ns3ref.available():
        pytest.skip("ns3 (pip install ns3==3.44.post0) is not installed")
    d = tmp_path_factory.mktemp("ngwa_log")
    ov = {"ngwa_mode": 3, "run.stop": "70s"}
    out = {}
    for variant in ns3ngwa.RFC793:
        (r,) = ns3ngwa.run_ngwa("ngwa/window", ov, [1], phase_ns=validate_ngwa.PHASE_NS, timeout_s=900,
                                rfc793=variant, log=str(d / f"{variant}.log"))
        out[variant] = (r, (d / f"{variant}.log").read_text().splitlines())
    return out


def _early_retransmissions(lines: list[str]) -> int:
    """Data segments sent again by a flow that has had no timeout since it last
    reached new data (the log's columns: time flow event seq bytes retx state)."""
    in_timeout, early = {}, 0
    for ln in lines[1:]:
        _, flow, event, _, _, retx, state = ln.split()
        if event == "rto":
            in_timeout[flow] = True
        elif event == "tx" and retx == "0" and state != "CA_LOSS":
            in_timeout[flow] = False
        elif event == "tx" and retx == "1" and not in_timeout.get(flow, False):
            early += 1
    return early


@needs_ns3
def test_in_ns3_the_strict_rfc793_stand_in_retransmits_only_after_a_timeout(mode3_log):
    built, built_log = mode3_log["ns3"]
    strict, strict_log = mode3_log["strict"]
    # As built, ns-3 enters fast recovery through its guessed loss marks and resends before any timeout.
    assert built["fast_recoveries"] > 0 and built["retransmits_before_timeout"] > 0
    assert _early_retransmissions(built_log) > 0
    # Strict: RFC 793 section 3.7, a segment is sent again only when its timer expires.
    assert strict["fast_recoveries"] == 0 and strict["retransmits_before_timeout"] == 0
    assert strict["timeouts"] > 0 and strict["retransmits"] > 0, "it lost and resent, after timeouts"
    assert _early_retransmissions(strict_log) == 0
    assert not any(" recovery " in ln for ln in strict_log)


def _segments_resent_at_each_timeout(lines: list[str]) -> list[int]:
    """Per rto line, the segments its flow sent at the same instant (go-back-N at once, or one)."""
    out, at = [], None
    for ln in lines[1:]:
        t, flow, event, *_ = ln.split()
        if event == "rto":
            at = (t, flow)
            out.append(0)
        elif event == "tx" and at == (t, flow):
            out[-1] += 1
    return out


@needs_ns3
def test_in_ns3_the_gbn_repair_resends_the_window_at_every_timeout_also_in_ca_loss(mode3_log):
    # RFC 793 section 3.7 has no congestion window; ours goes back N at every expiry. As built the
    # stand-in resends at once only as the socket enters CA_LOSS: an expiry while still in CA_LOSS
    # keeps ns-3's cWnd of one segment (TcpSocketBase::ReTxTimeout) and resends one segment.
    rto, rto_log = mode3_log["strict-rfc6298"]
    gbn, gbn_log = mode3_log["strict-rfc6298-gbn"]
    assert rto["timeouts_in_loss_state"] > 0
    assert _segments_resent_at_each_timeout(rto_log).count(1) >= rto["timeouts_in_loss_state"]
    assert gbn["timeouts_in_loss_state"] > 0, "the repaired run times out in CA_LOSS too"
    assert min(_segments_resent_at_each_timeout(gbn_log)) > 1
    assert gbn["retransmits_before_timeout"] == 0 and gbn["fast_recoveries"] == 0, "still strict"


def test_newreno_variant_runs_and_records_are_kept_beside_the_as_built_ones(tmp_path: Path):
    assert validate_ngwa.newreno_rows() == ["newreno", "mode1", "mode2", "mode5", "mode6"]
    assert validate_ngwa.cell_name("mode1", newreno="rfc6582") == "ngwa_mode1_newreno-rfc6582"
    built = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/rate", "mode1", 1)
    fixed = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/rate", "mode1", 1, newreno="rfc6582-rfc6298")
    assert built != fixed and "newreno-rfc6582-rfc6298" in fixed.name
    with pytest.raises(ValueError, match="row mode3 has no congestion control.*newreno, mode1, mode2, mode5, mode6"):
        validate_ngwa.run_cell("mode3", [1, 2, 3], tmp_path, cached=True, newreno="rfc6582")
    with pytest.raises(ValueError, match="newreno .*must be one of ns3, rfc6582, rfc6582-rfc6298, .*not 'sack'"):
        ns3ngwa.run_ngwa("ngwa/window", {"ngwa_mode": 1}, [1], newreno="sack")


def test_records_of_routers_marking_at_transmission_are_kept_beside_the_as_built_ones(tmp_path: Path):
    assert ns3ngwa.MARKS == ("qdisc", "tx")
    assert validate_ngwa.cell_name("mode1", mark="tx") == "ngwa_mode1_mark-tx"
    assert validate_ngwa.cell_name("mode1", mark="qdisc") == "ngwa_mode1"
    built = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/rate", "mode1", 1)
    at_tx = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/rate", "mode1", 1, mark="tx")
    assert built != at_tx and at_tx.name.startswith("ngwa_rate_mode1_mark-tx_")
    with pytest.raises(ValueError, match="mark .*must be one of qdisc, tx, not 'enqueue'"):
        ns3ngwa.run_ngwa("ngwa/window", {"ngwa_mode": 1}, [1], mark="enqueue")
    from netreturn.valsummary import NGWA_MARK_ROWS

    name = "ngwa_mode1_newreno-rfc6582-inflation-flightsize-rfc6298_mark-tx"
    rows = [("lost_packets", "lost packets", [10, 11, 12], [10, 11, 12], validate_ngwa.WHERE["ngwa/rate"])]
    write_record(tmp_path, name, record(validate_ngwa.REFERENCE, rows, seeds=[1, 2, 3]))
    got = {r["mechanism"]: r for r in summarize(tmp_path)}
    assert [(n, k, v, m) for n, k, v, m, _ in NGWA_MARK_ROWS] == [
        ("NGWA mode 1, ns-3 as RFC 6582, marking at transmission", "mode1", "rfc6582-inflation-flightsize-rfc6298",
         "tx"),
        ("NGWA mode 2, ns-3 as RFC 6582, marking at transmission", "mode2", "rfc6582-inflation-flightsize-rfc6298",
         "tx")]
    row = got["NGWA mode 1, ns-3 as RFC 6582, marking at transmission"]
    assert (row["cells"], row["either"]) == (1, 1)
    assert got["NGWA mode 1, ns-3 as RFC 6582"]["cells"] == 0


def test_with_ns3_newreno_a_row_of_rfc793_senders_is_refused_naming_the_allowed_rows(tmp_path, capsys):
    from netreturn.cli import main as cli_main

    rc = cli_main(["validate", "--scenario", "ngwa", "--ns3-newreno", "rfc6582", "--ngwa-rows", "mode1,mode3",
                   "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "mode3 is not a row of NewReno senders (--ns3-newreno rfc6582)" in err
    assert "allowed: newreno, mode1, mode2, mode5, mode6" in err
    assert not (tmp_path / "ns3").exists(), "nothing ran"


def test_a_repaired_newreno_record_counts_in_its_own_summary_row(tmp_path: Path):
    from netreturn.valsummary import NGWA_NEWRENO_ROWS

    rows = [("lost_packets", "lost packets", [10, 11, 12], [10, 11, 12], validate_ngwa.WHERE["ngwa/rate"])]
    write_record(tmp_path, validate_ngwa.cell_name("mode1", newreno="rfc6582-rfc6298"),
                 record(validate_ngwa.REFERENCE, rows, seeds=[1, 2, 3]))
    got = {r["mechanism"]: r for r in summarize(tmp_path)}
    assert [(n, k, v) for n, k, v, _ in NGWA_NEWRENO_ROWS] == [
        ("NewReno (NGWA), ns-3 RFC 6582+RTO", "newreno", "rfc6582-rfc6298"),
        ("NGWA mode 1, ns-3 RFC 6582+RTO", "mode1", "rfc6582-rfc6298"),
        ("NGWA mode 2, ns-3 RFC 6582+RTO", "mode2", "rfc6582-rfc6298")]
    assert (got["NGWA mode 1, ns-3 RFC 6582+RTO"]["cells"], got["NGWA mode 1, ns-3 RFC 6582+RTO"]["either"]) == (1, 1)
    assert got["NGWA mode 1"]["cells"] == 0


def test_a_newreno_record_as_rfc6582_counts_in_its_own_summary_row(tmp_path: Path):
    from netreturn.valsummary import NGWA_RFC6582_ROWS

    rows = [("lost_packets", "lost packets", [10, 11, 12], [10, 11, 12], validate_ngwa.WHERE["ngwa/rate"])]
    variant = "rfc6582-inflation-flightsize-rfc6298"
    assert variant in ns3ngwa.NEWRENO
    write_record(tmp_path, validate_ngwa.cell_name("newreno", newreno=variant),
                 record(validate_ngwa.REFERENCE, rows, seeds=[1, 2, 3]))
    got = {r["mechanism"]: r for r in summarize(tmp_path)}
    assert [(n, k, v) for n, k, v, _ in NGWA_RFC6582_ROWS] == [
        ("NewReno (NGWA), ns-3 as RFC 6582", "newreno", variant),
        ("NGWA mode 1, ns-3 as RFC 6582", "mode1", variant),
        ("NGWA mode 2, ns-3 as RFC 6582", "mode2", variant)]
    row = got["NewReno (NGWA), ns-3 as RFC 6582"]
    assert (row["cells"], row["either"]) == (1, 1)
    assert got["NewReno (NGWA), ns-3 RFC 6582+RTO"]["cells"] == 0
    assert got["NewReno (NGWA's scenarios)"]["cells"] == 0


@pytest.fixture(scope="module")
def mode1_newreno():
    """Mode 1 (NewReno senders, no SACK) in Table 2's scenario for 300 s, seed 3: as built and both ngwa6 repairs."""
    if not ns3ref.available():
        pytest.skip("ns3 (pip install ns3==3.44.post0) is not installed")
    ov = {"ngwa_mode": 1, "run.stop": "300s"}
    return {v: ns3ngwa.run_ngwa("ngwa/rate", ov, [3], phase_ns=validate_ngwa.PHASE_NS, timeout_s=900,
                                newreno=v)[0] for v in ("ns3", "rfc6582", "rfc6582-rfc6298")}


@needs_ns3
def test_in_ns3_with_the_rfc6582_repair_newreno_leaves_recovery_without_loss_marks(mode1_newreno):
    built, fixed = mode1_newreno["ns3"], mode1_newreno["rfc6582"]
    # As built, ns-3 leaves CA_RECOVERY with the new head still marked lost (TcpTxBuffer::m_lostOut > 0).
    assert built["fast_recoveries"] > 0 and built["recovery_exits_with_loss_marks"] > 0
    # RFC 6582 keeps no scoreboard: after recovery the flight is SND.NXT - SND.UNA, nothing marked.
    assert fixed["fast_recoveries"] > 0 and fixed["recovery_exits_with_loss_marks"] == 0
    assert fixed["stale_lost_cleared"] > 0, "the repair acted"


@needs_ns3
def test_in_ns3_with_the_rfc6298_repair_newreno_keeps_a_backed_off_rto_until_an_rtt_sample(mode1_newreno):
    built, fixed = mode1_newreno["ns3"], mode1_newreno["rfc6582-rfc6298"]
    # As built, TcpSocketBase::NewAck recomputes the RTO on the first new ACK after a timeout, sample or not.
    assert built["timeouts"] > 0 and built["rto_collapses_before_sample"] > 0
    # RFC 6298 section 5 (5.5, the note after 5.7): the backed-off RTO stays until a new RTT measurement.
    assert fixed["timeouts"] > 0 and fixed["rto_collapses_before_sample"] == 0
    assert fixed["recovery_exits_with_loss_marks"] == 0, "and the RFC 6582 repair with it"


# ---- NewReno's send window and ssthresh in recovery as RFC 6582 (--newreno inflation / flightsize, branch ngwa8)

SMSS = 1000  # NGWA off: ours' and the harness's segment


def _recoveries(log: Path) -> tuple[list[tuple[int, int, int]], list[tuple[int, int]]]:
    """From a harness log (ns3ngwa --log): per recovery, (FlightSize at its start, ssthresh, new bytes sent
    in it); and per new segment sent in recovery, (bytes past SND.UNA at its end, RFC 6582's window then:
    min(ssthresh + SMSS per dupACK, deflated by partial ACKs (section 3.2 steps 2-5), receiver's window))."""
    una, sndmax, rwnd, w, entry = {}, {}, {}, {}, {}
    recs, sends = [], []
    for line in log.read_text().splitlines()[1:]:
        t, f, ev, seq, size, retx, st = line.split()
        seq, size = int(seq), int(size)
        if ev == "recovery":
            entry[f] = [sndmax[f] - una[f], None, 0]
            recs.append(entry[f])
            w[f] = None
        elif ev == "cwnd" and f in entry and entry[f][1] is None:
            entry[f][1] = seq  # the seq column of a cwnd line: ssthresh
            w[f] = seq + 3 * SMSS  # step 2
        elif ev == "ack":
            rwnd[f] = size
            if st == "CA_RECOVERY" and w.get(f) is not None:
                if seq == una[f]:
                    w[f] += SMSS  # step 4
                elif seq > una[f]:
                    acked = seq - una[f]
                    w[f] = max(w[f] - acked + (SMSS if acked >= SMSS else 0), SMSS)  # step 5
            una[f] = max(una.get(f, seq), seq)
        elif ev == "tx":
            end = seq + size
            if st == "CA_RECOVERY" and retx == "0" and w.get(f) is not None:
                sends.append((end - una[f], min(w[f], rwnd[f])))
                entry[f][2] += size
            sndmax[f] = max(sndmax.get(f, 0), end)
        if st in ("CA_OPEN", "CA_LOSS"):
            entry.pop(f, None)
            w[f] = None
    return recs, sends


@pytest.fixture(scope="module")
def newreno_rfc(tmp_path_factory):
    """NewReno without NGWA, Table 2's scenario for 300 s, seed 3: as built and with the RFC 6582 repairs,
    each with its per-packet log."""
    if not ns3ref.available():
        pytest.skip("ns3 (pip install ns3==3.44.post0) is not installed")
    d = tmp_path_factory.mktemp("newreno_rfc")
    out = {}
    for v in ("ns3", "inflation", "inflation-flightsize"):
        log = d / f"{v}_{{seed}}.log"
        run = ns3ngwa.run_ngwa("ngwa/rate", {"ngwa_mode": 0, "tcp": "newreno", "run.stop": "300s"}, [3],
                               phase_ns=validate_ngwa.PHASE_NS, timeout_s=900, newreno=v, log=str(log))[0]
        out[v] = (run, *_recoveries(Path(str(log).replace("{seed}", "3"))))
    return out


@needs_ns3
def test_in_ns3_with_the_inflation_repair_newreno_sends_in_recovery_what_rfc6582s_window_allows(newreno_rfc):
    built, built_recs, _ = newreno_rfc["ns3"]
    fixed, recs, sends = newreno_rfc["inflation"]
    assert fixed["fast_recoveries"] > 20 and fixed["inflation_acks"] > 0
    # Never past SND.UNA + min(ssthresh + SMSS per dupACK, the receiver's window) (RFC 6582 section 3.2 step 4).
    over = [(sent, allowed) for sent, allowed in sends if sent > allowed]
    assert not over, f"{len(over)} of {len(sends)} new segments in recovery beyond RFC 6582's window: {over[:5]}"
    # As built ns-3's pipe loses only a 512-byte write's size for its dupACK: it sends less new data.
    per = sum(r[2] for r in recs) / len(recs)
    per_built = sum(r[2] for r in built_recs) / len(built_recs)
    assert per > 1.1 * per_built, (per, per_built)


@needs_ns3
def test_in_ns3_with_the_flightsize_repair_newreno_halves_flightsize_at_a_fast_retransmit(newreno_rfc):
    _, built_recs, _ = newreno_rfc["ns3"]
    _, recs, _ = newreno_rfc["inflation-flightsize"]
    # RFC 5681 section 3.2 step 2: ssthresh = max(FlightSize / 2, 2 SMSS), FlightSize = SND.MAX - SND.UNA less
    # limited transmit's extra, at most two segments (RFC 3042).
    short = [(f, s) for f, s, _ in recs if not f - 2 * SMSS - 1 <= 2 * s <= f]
    assert recs and not short, f"{len(short)} of {len(recs)} recoveries: (FlightSize, ssthresh) {short[:5]}"
    # As built ns-3 halves its pipe plus one segment: three dupACK-marked segments and the head left out.
    below = [(f, s) for f, s, _ in built_recs if 2 * s < f - 2 * SMSS - 1]
    assert len(below) > len(built_recs) / 2, (len(below), len(built_recs))


@needs_ns3
def test_in_ns3_routers_marking_as_the_packet_starts_on_the_link_damp_mode_1s_queue(mode1_newreno):
    # As built the queue disc writes Br as it lets a packet go to the device queue under it, about one
    # transmission before the packet starts on the link; ours writes it at the start of transmission,
    # every byte waiting behind the packet counted (docs/validation.md, branch ngwa8).
    built = mode1_newreno["ns3"]
    at_tx = ns3ngwa.run_ngwa("ngwa/rate", {"ngwa_mode": 1, "run.stop": "300s"}, [3],
                             phase_ns=validate_ngwa.PHASE_NS, timeout_s=900, mark="tx")[0]
    assert (built["mark"], at_tx["mark"]) == ("qdisc", "tx")
    assert at_tx["ngwa_inserted"] > 0 and at_tx["acks_rewritten"] > 0, "NGWA still marks and rewrites"
    # Seed 3, 300 s (the start-up's fill counted in the swing): as built 56 lost, std 10.1 kB; at transmission 39, 9.5.
    assert at_tx["bottleneck_queue_std_bytes"] < built["bottleneck_queue_std_bytes"]
    assert at_tx["lost_packets"] < 0.8 * built["lost_packets"]


def test_ours_resending_to_snd_max_runs_with_its_setting_and_counts_in_its_own_summary_row(tmp_path: Path):
    # Branch ngwa10: ours with tcp.resend_ends_at_snd_max against the same ns-3 runs, kept in its own record.
    import json

    from netreturn.valsummary import NGWA_RESEND_ROWS

    assert validate_ngwa.OURS["resend-snd-max"] == {"tcp.resend_ends_at_snd_max": "true"}
    name = validate_ngwa.cell_name("mode3", "strict-rfc6298", mark="tx", ours="resend-snd-max")
    assert name == "ngwa_mode3_rfc793-strict-rfc6298_mark-tx_ours-resend-snd-max"
    # ns-3's runs are shared with the record of ours as built.
    assert (validate_ngwa.ns3_cache_path(tmp_path, "ngwa/window", "mode3", 1, "strict-rfc6298", mark="tx")
            .name.endswith("_mark-tx_phase1000000ns_seed1.json"))
    metrics = {m: 1.0 for m, _ in ns3ngwa.METRICS}
    for s in (1, 2, 3):
        p = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/window", "mode4", s, "strict-rfc6298", mark="tx")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({**metrics, "seed": s}))
    seen = []
    real = validate_ngwa._ours
    validate_ngwa._ours = lambda sc, ov, seeds, jobs: seen.append(ov) or [dict(metrics) for _ in seeds]
    try:
        rec = validate_ngwa.run_cell("mode4", [1, 2, 3], tmp_path, cached=True, rfc793="strict-rfc6298", mark="tx",
                                     ours="resend-snd-max")
        with pytest.raises(ValueError, match="--ngwa-ours cubic: not one of resend-snd-max, "):
            validate_ngwa.run_cell("mode4", [1, 2, 3], tmp_path, cached=True, rfc793="strict-rfc6298", mark="tx",
                                   ours="cubic")
    finally:
        validate_ngwa._ours = real
    assert seen == [{"ngwa_mode": 4, "tcp.resend_ends_at_snd_max": "true"}]
    assert rec["overrides"] == seen[0] and rec["ours"] == "resend-snd-max"
    assert (tmp_path / "cells" / "ngwa_mode4_rfc793-strict-rfc6298_mark-tx_ours-resend-snd-max.json").exists()
    assert [(k, v, m) for _, k, v, m, _ in NGWA_RESEND_ROWS] == [
        ("rfc793", "strict-rfc6298", "qdisc"), ("rfc793", "strict-rfc6298-gbn", "qdisc"),
        ("mode3", "strict-rfc6298", "tx"), ("mode4", "strict-rfc6298", "tx"),
        ("mode3", "strict-rfc6298-gbn", "tx"), ("mode4", "strict-rfc6298-gbn", "tx")]
    got = {r["mechanism"]: r for r in summarize(tmp_path)}
    row = got["NGWA mode 4, ns-3 strict+RTO, marking at transmission, ours resending to SND.MAX"]
    assert (row["cells"], row["either"]) == (1, len(ns3ngwa.METRICS))  # one record, every metric agreeing
    assert got["NGWA mode 4, ns-3 strict+RTO, marking at transmission"]["cells"] == 0


def test_ours_on_ns3s_rules_runs_with_its_settings_and_counts_in_its_own_summary_rows(tmp_path: Path):
    # Branch ngwa11: the RFC 793 row with ours resending its sent segments and offering its whole receive buffer
    # from RCV.NXT, as ns-3 (tcp.resend_merges_sent, tcp.window_deducts_ooo = false), then with the router's
    # buffer one packet larger too, as ns-3's device queue under its queue disc; against the same ns-3 runs.
    import json

    from netreturn.valsummary import NGWA_WINDOW_ROWS

    rules = {"tcp.resend_merges_sent": "true", "tcp.window_deducts_ooo": "false"}
    assert validate_ngwa.OURS["ns3-resend-ns3-window"] == rules
    assert validate_ngwa.OURS["ns3-resend-window-queue"] == {**rules, "buffer": "98040B"}
    metrics = {m: 1.0 for m, _ in ns3ngwa.METRICS}
    for s in (1, 2, 3):
        p = validate_ngwa.ns3_cache_path(tmp_path, "ngwa/rate", "rfc793", s, "strict-rfc6298-gbn")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({**metrics, "seed": s}))
    seen = []
    real = validate_ngwa._ours
    validate_ngwa._ours = lambda sc, ov, seeds, jobs: seen.append(ov) or [dict(metrics) for _ in seeds]
    try:
        for ours in ("ns3-resend-ns3-window", "ns3-resend-window-queue"):
            rec = validate_ngwa.run_cell("rfc793", [1, 2, 3], tmp_path, cached=True, rfc793="strict-rfc6298-gbn",
                                         ours=ours)
            assert rec["ours"] == ours
    finally:
        validate_ngwa._ours = real
    assert seen == [{"ngwa_mode": 0, "tcp": "none", **rules},
                    {"ngwa_mode": 0, "tcp": "none", **rules, "buffer": "98040B"}]
    assert (tmp_path / "cells" / "ngwa_rfc793_rfc793-strict-rfc6298-gbn_ours-ns3-resend-window-queue.json").exists()
    assert [(k, v, m, o) for _, k, v, m, o, _ in NGWA_WINDOW_ROWS] == [
        ("rfc793", "strict-rfc6298-gbn", "qdisc", "ns3-resend-ns3-window"),
        ("rfc793", "strict-rfc6298-gbn", "qdisc", "ns3-resend-window-queue"),
        ("mode3", "strict-rfc6298-gbn", "tx", "ns3-resend-window-queue"),
        ("mode4", "strict-rfc6298-gbn", "tx", "ns3-resend-window-queue")]
    got = {r["mechanism"]: r for r in summarize(tmp_path)}
    for name, *_ in NGWA_WINDOW_ROWS[:2]:
        assert (got[name]["cells"], got[name]["either"]) == (1, len(ns3ngwa.METRICS))
    assert got["RFC 793 TCP (NGWA), ns-3 strict+RTO+go-back-N, ours resending to SND.MAX"]["cells"] == 0
