"""Where each difference of the validation summary stands (issue 25: "every
cell that still differs has a proven cause").

The summary (:mod:`netreturn.valsummary`) counts every row it was given,
including comparisons made before a reference was repaired. This module
says what the rows mean together:

* :data:`SUPERSEDED_BY`: a row whose comparison a later row makes again
  with the reference repaired (a departure of ns-3 from its RFC or from
  Linux, shown in the harness), or with ours on the reference's documented
  rule. Its differing cells are that departure; the later row is the
  comparison to read.
* :data:`CAUSES`: for the rows nothing supersedes, what is known of each
  metric cell that still differs, with a status from :data:`STATUSES` and
  the section that shows it. A differing cell no cause names is reported
  as ``open``; a cause that names no differing cell is *stale* (the records
  changed) and the summary says so.

Written by hand from the evidence in docs/validation.md, docs/testbed.md
and docs/xcp.md; the counts beside them are computed from the records.
"""

from __future__ import annotations

from dataclasses import dataclass

from .table import ci, render, unit_of

#: How far a cause is established, strongest first.
STATUSES = (
    # One side switched to the other's rule and the cells then agree (or
    # the reference repaired in the harness and re-run): the rule is the
    # whole difference, and both rules are allowed (RFCs, Linux, a paper).
    "proven: a rule difference",
    # The reference departs from its RFC or Linux; repaired in the harness
    # and re-run, it agrees.
    "proven: the reference's",
    # More seeds of the same comparison agree: the few seeds of the record
    # fell apart by chance (a bimodal or near-critical metric).
    "proven: the seed spread",
    # The mechanism is located in per-packet logs of both simulators, but
    # no one-side switch has closed the cell yet.
    "traced, not proven",
    # Nothing located yet.
    "open",
)


@dataclass(frozen=True)
class Cause:
    """What is known of some differing metric cells of one row: the cells
    whose label contains ``cell`` and whose metric is one of ``metrics``."""

    cell: str
    metrics: tuple[str, ...]
    status: str
    why: str
    evidence: str  # "file.md#anchor" under docs/


_RED_S1 = "validation.md#red-in-scenario-1-ours-drops-arrivals-to-an-empty-queue-ns-3-does-not-2026-11-26"
_RED_ECN_ALPHA = "validation.md#red-with-ecn-cubics-reno-friendly-slope-issue-27-2026-11-27"
_RED_ECN_QUEUE = "validation.md#red-with-ecn-the-queue-measured-and-switched-issue-27-2026-11-27-branch-redecn11"
_RED_ECN_CWR = "RED with ECN (CUBIC), ours' CUBIC and CWR rule as ns-3"
_RED_ECN_ALL = "RED with ECN (CUBIC), ours' CUBIC, CWR rule and echo as ns-3"
_RED_ECN_ECHO_REPAIRED = "RED with ECN (CUBIC), ns-3's echo repaired, ours' CUBIC and CWR rule as ns-3"
_RED_ECN_ECE = "RED with ECN (CUBIC), ours' CUBIC, CWR rule, echo and ECE rule as ns-3"
_RED_ECN_ECE_ECHO_REPAIRED = "RED with ECN (CUBIC), ns-3's echo repaired, ours' CUBIC, CWR rule and ECE rule as ns-3"
_ECE_NEW_ACK = ("ours' sender reducing on an ECE only when the ACK advances SND.UNA, as ns-3's ReceivedAck "
                "(tcp.ece_on_new_ack_only; RFC 3168 6.1.2 and Linux read it on every ACK): a duplicate ACK's ECE no "
                "longer starts a CWR state that, under ns-3's CWR rule, keeps the loss behind it from a fast recovery; "
                "ns-3 enters 4.6 of its 14.6 recoveries a run while such an ignored ECE's window is in flight")
_LINUX_RCVBUF = "testbed.md#the-receivers-buffer-from-the-start-session-25"
_FQC15 = ("validation.md#fq-codel-with-ecn-the-flow-queues-compared-issue-27-item-5-2026-11-27-branch-fqc15")
_ECE_AFTER_RTO = "validation.md#an-ece-for-a-window-a-timeout-already-reduced-a-bug-of-ours-fixed-issue-27-session-23"
_SHAPED = ("the testbed limits each host's link on its own at the scenario's rates (--access shaped), as the "
           "simulator's dumbbell, where one 400 Mb/s hop carried the four senders together: Linux's data loss over "
           "EWT 2.16 -> 1.59 % (NewReno) and 2.40 -> 1.76 % (CUBIC), both testbeds run on one idle afternoon")

_LOSS_EXIT = "ns-3 grows no cwnd on the ACK that ends CA_LOSS (RFC 5681 3.1)"
_STANDIN_MARKS = "the harness's RFC 793 stand-in guessed loss marks"
_STANDIN_RTO = "the stand-in's retransmission timer as RFC 6298"
_MARK_TX = "ns-3's routers wrote the free buffer one transmission before the packet reached the link"
_GBN = "the stand-in resent one segment, not the window, at an expiry inside CA_LOSS"
_RESEND = ("ours' go-back-N resend ending at SND.MAX, new data in segments of its own, as ns-3's sent list "
           "(tcp.resend_ends_at_snd_max; RFC 9293 3.8.6 allows both)")
_NS3_RULES = ("ours' resend cut from its segments as first sent, each with the next up to an MSS, and its receiver "
              "offering the whole buffer from RCV.NXT, as ns-3 (tcp.resend_merges_sent, tcp.window_deducts_ooo = "
              "false; RFC 9293 3.8.6 allows both)")
_NS3_QUEUE = ("ours' router buffer one 1040-byte packet larger (98 040 B), as ns-3's, whose device queue holds a "
              "packet under every queue disc")
_NEWRENO_MARKS = "ns-3's NewReno keeps loss marks after a recovery; its timer as RFC 6298"
_NEWRENO_RFC6582 = ("ns-3 lowers its pipe by each dupACK'd segment's size and halves pipe + 1 segment, where RFC 6582 "
                    "inflates by one SMSS per dupACK and halves FlightSize")
_PRR_SAFEACK = ("ours' PRR bound below ssthresh as RFC 9937, Linux and ns-3: one segment per ACK, an extra MSS only on "
                "a safe ACK (tcp.prr_bound = safeack; RFC 6937's SSRB sends two per dupACK)")
_NO_CWR_RECOVERY = ("ours starting no fast recovery from CWR, repairing under it as ns-3 (tcp.recovery_from_cwr = ns3; "
                    "Linux starts one)")
_ECN_FINAL = "FQ-CoDel with ECN (CUBIC), ns-3 as Linux, ours' CUBIC and PRR as ns-3"
_DCTCP_FINAL = "DCTCP, ns-3 repaired, FQ-CoDel as Linux, marks too, ours' growth and CWR rule as ns-3"
_DCTCP_ECHO = "DCTCP, ns-3 and its echo repaired, FQ-CoDel as Linux"
_DCTCP_ECHO_FINAL = _DCTCP_ECHO + ", ours' growth and CWR rule as ns-3"
_ECHO_REPAIR = ("ns-3's DCTCP receiver acknowledging every segment before a CE change, as RFC 8257 3.2 and Linux (its "
                "ACK ended one segment short, a duplicate whose ECE ns-3's sender ignores: 5610 of 8400 ECE flags "
                "in seed 1)")
_DCTCP_GROWTH = "ours' DCTCP growing per segment acknowledged, as ns-3's TcpDctcp and Linux (tcp.dctcp.growth = linux)"
_PROFILE = "the simulator's defaults are ns-3's; the Linux profile takes Linux's where they differ"


_RCVBUF = ("Linux's receivers holding the file's 4 MB receive buffer from the handshake on, as the simulator's "
           "offer it (tcp_rmem's default; the testbed's mapping since session 25): from Linux's 128 KiB default, "
           "autotuning offered 64-80 kB through the third round trip of a slow start, and the receivers' window "
           "limited the senders for 3 % of their busy time in the first 0.5 s over DropTail (up to 21 % a flow) and "
           "13 % over EWT, whose window scales it (TCP_INFO tcpi_rwnd_limited; with the buffer from the start: "
           "0 and 5 %). Over EWT the paired FCT gap falls from +0.60 ± 0.19 to +0.35 ± 0.14 s (NewReno) and "
           "from +0.57 to +0.41 s (CUBIC); every NewReno cell then agrees")


def _chain(rows: list[str], changes: list[str]) -> dict[str, tuple[str, str]]:
    """``rows[i]`` superseded by ``rows[i + 1]``, which changes ``changes[i]``."""
    assert len(changes) == len(rows) - 1
    return {a: (b, what) for a, b, what in zip(rows, rows[1:], changes)}


#: Row -> (the row that supersedes it, what that row changes).
SUPERSEDED_BY: dict[str, tuple[str, str]] = {
    **_chain(["NewReno, lossy link", "NewReno, lossy link, ns-3 as RFC 6582",
              "NewReno, lossy link, ns-3 as RFC 6582, strict",
              "NewReno, lossy link, ns-3 strict, loss exit, ns-3's flight"],
             ["ns-3's NewReno without SACK keeps loss marks after a recovery (not RFC 6582)",
              "ns-3 guesses loss marks from dupACKs outside a recovery",
              _LOSS_EXIT + "; ours halving ns-3's flight at a loss (tcp.loss_ssthresh = ns3, a documented rule)"]),
    **_chain(["Westwood+, lossy link", "Westwood+, lossy link, ns-3 repaired",
              "Westwood+, lossy link, ns-3 repaired, RFC 6582 strict",
              "Westwood+, lossy link, ns-3 repaired, strict, loss exit"],
             ["ns-3's TcpWestwoodPlus counts dupACK-delivered segments twice",
              "ns-3 without SACK is not RFC 6582 (guessed loss marks)", _LOSS_EXIT]),
    **_chain(["NewReno, lossy link, SACK", "NewReno, lossy link, SACK, ns-3 loss exit repaired"], [_LOSS_EXIT]),
    **_chain(["Westwood+, lossy link, SACK, ns-3 repaired", "Westwood+, lossy link, SACK, ns-3 repaired, loss exit"],
             [_LOSS_EXIT]),
    **_chain(["NewReno, lossy link, ns-2.35", "NewReno, lossy link, ns-2.35, ns-2's ssthresh",
              "NewReno, lossy link, ns-2.35 as RFC 6582, ns-2's ssthresh"],
             ["ours halving ns-2's uninflated window at a timeout, at every expiry (tcp.loss_ssthresh = ns2, a "
              "documented rule): the start-up's second overshoot at 0.001-0.1 % loss",
              "ns-2's recovery point repaired to RFC 6582's (lessCareful_ 1): as shipped (RFC 2582's Careful "
              "variant) a loss just past the last recovery point waits for the timer"]),
    **_chain(["RFC 793 TCP (NGWA's scenarios)", "RFC 793 TCP (NGWA), ns-3 strict",
              "RFC 793 TCP (NGWA), ns-3 strict+RTO", "RFC 793 TCP (NGWA), ns-3 strict+RTO+go-back-N",
              "RFC 793 TCP (NGWA), ns-3 strict+RTO+go-back-N, ours resending to SND.MAX"],
             [_STANDIN_MARKS, _STANDIN_RTO, _GBN, _RESEND]),
    **_chain(["RFC 793 TCP (NGWA), ns-3 strict+RTO+go-back-N, ours resending to SND.MAX",
              "RFC 793 TCP (NGWA), ns-3 strict+RTO+go-back-N, ours resending and receiving as ns-3",
              "RFC 793 TCP (NGWA), ns-3 strict+RTO+go-back-N, ours resending, receiving and queueing as ns-3"],
             [_NS3_RULES, _NS3_QUEUE]),
    **{f"NGWA mode {m}, ns-3 strict+RTO+go-back-N, marking at transmission, ours resending to SND.MAX": (
        f"NGWA mode {m}, ns-3 strict+RTO+go-back-N, marking at transmission, ours resending, receiving and "
        "queueing as ns-3", f"{_NS3_RULES}; {_NS3_QUEUE}") for m in (3, 4)},
    **_chain(["RFC 793 TCP (NGWA), ns-3 strict+RTO, ours resending to SND.MAX",
              "RFC 793 TCP (NGWA), ns-3 strict+RTO+go-back-N, ours resending to SND.MAX"], [_GBN]),
    **{k: v for m in (3, 4) for k, v in _chain(
        [f"NGWA mode {m}", f"NGWA mode {m}, ns-3 strict", f"NGWA mode {m}, ns-3 strict+RTO",
         f"NGWA mode {m}, ns-3 strict+RTO, marking at transmission",
         f"NGWA mode {m}, ns-3 strict+RTO+go-back-N, marking at transmission",
         f"NGWA mode {m}, ns-3 strict+RTO+go-back-N, marking at transmission, ours resending to SND.MAX"],
        [_STANDIN_MARKS, _STANDIN_RTO, _MARK_TX, _GBN, _RESEND]).items()},
    **{k: v for m in (3, 4) for k, v in _chain(
        [f"NGWA mode {m}, ns-3 strict+RTO, marking at transmission, ours resending to SND.MAX",
         f"NGWA mode {m}, ns-3 strict+RTO+go-back-N, marking at transmission, ours resending to SND.MAX"],
        [_GBN]).items()},
    **_chain(["NewReno (NGWA's scenarios)", "NewReno (NGWA), ns-3 RFC 6582+RTO", "NewReno (NGWA), ns-3 as RFC 6582"],
             [_NEWRENO_MARKS, _NEWRENO_RFC6582]),
    **{k: v for m in (1, 2) for k, v in _chain(
        [f"NGWA mode {m}", f"NGWA mode {m}, ns-3 RFC 6582+RTO", f"NGWA mode {m}, ns-3 as RFC 6582",
         f"NGWA mode {m}, ns-3 as RFC 6582, marking at transmission"],
        [_NEWRENO_MARKS, _NEWRENO_RFC6582, _MARK_TX]).items()},
    **_chain(["FQ-CoDel", "FQ-CoDel, ns-3 as Linux", "FQ-CoDel, ns-3 as Linux, ours' PRR bound as ns-3"],
             ["ns-3's FQ-CoDel tests one MTU per flow queue, Linux the whole backlog", _PRR_SAFEACK]),
    **_chain(["FQ-CoDel with ECN (CUBIC)", "FQ-CoDel with ECN (CUBIC), ns-3 as Linux",
              "FQ-CoDel with ECN (CUBIC), ns-3 as Linux, ours' PRR bound as ns-3",
              _ECN_FINAL],
             ["Linux's one-MTU test, and the next mark scheduled from the due time as Linux", _PRR_SAFEACK,
              "ours' CUBIC keeping alpha = 3(1 - beta)/(1 + beta) past cwnd_prior, as Linux and ns-3 (RFC 9438 4.3 "
              "switches it to 1; tcp.cubic.reno_alpha = linux)"]),
    **_chain(["FQ-CoDel with ECN (CUBIC), ns-3 as Linux, ECE answer repaired", _ECN_FINAL],
             ["instead of ns-3's ECE answer repaired, ours on ns-3's CUBIC alpha and PRR bound: every metric agrees"]),
    **_chain(["FQ-CoDel with ECN (CUBIC), ns-3 as Linux, ours without recovery from CWR", _ECN_FINAL],
             ["ours' CUBIC and PRR as ns-3 (the CWR rule moves the fast recoveries alone: 62.7 -> 34.7, ns-3 32.7)"]),
    **_chain(["DCTCP", "DCTCP, ns-3 repaired", "DCTCP, ns-3 repaired, FQ-CoDel as Linux",
              "DCTCP, ns-3 repaired, FQ-CoDel as Linux, marks too",
              "DCTCP, ns-3 repaired, FQ-CoDel as Linux, marks too, ours' growth as ns-3", _DCTCP_FINAL],
             ["ns-3's DCTCP answers a loss as RFC 8257 3.5 asks", "Linux's one-MTU test on the whole backlog",
              "the next mark scheduled from the due time as Linux", _DCTCP_GROWTH, _NO_CWR_RECOVERY]),
    **_chain(["DCTCP, ns-3 repaired, FQ-CoDel as Linux, marks too, ours without recovery from CWR", _DCTCP_FINAL],
             ["ours' DCTCP growth as ns-3 too"]),
    **_chain([_DCTCP_FINAL, _DCTCP_ECHO_FINAL], [_ECHO_REPAIR + ": every metric agrees"]),
    **_chain([_DCTCP_ECHO, _DCTCP_ECHO + ", ours' growth as ns-3", _DCTCP_ECHO_FINAL],
             [_DCTCP_GROWTH, _NO_CWR_RECOVERY]),
    **_chain([_DCTCP_ECHO + ", ours without recovery from CWR", _DCTCP_ECHO_FINAL], ["ours' DCTCP growth as ns-3 too"]),
    **_chain(["ARED with ECN (CUBIC)", "ARED with ECN (CUBIC), ours' CUBIC in whole segments as ns-3"],
             ["ours' CUBIC in whole segments as ns-3's TcpCubic and Linux (tcp.cubic.whole_segment_target and "
              "whole_segment_ssthresh; RFC 9438's real W_cubic, W_est and beta x cwnd by default): between ECN "
              "reductions its flows grew 3.9 segments a second on windows of 6-10 segments and cut to 0.71, ns-3's "
              "4.3 and 0.64, ours' now 4.4 and 0.66, so ARED's max_p no longer climbs above ns-3's: the UDP loss "
              "2.49 -> 2.00 % (ns-3 1.95), the marks 2785 -> 2153 (2034), seeds 1-5; RED's decision and its "
              "parameters are alike (the same signals per unit of p_b in both traces)"]),
    **_chain(["RED with ECN (CUBIC)", "RED with ECN (CUBIC), ours' CUBIC as ns-3", _RED_ECN_CWR, _RED_ECN_ALL],
             ["ours' CUBIC keeping alpha = 3(1 - beta)/(1 + beta) past cwnd_prior, as Linux and ns-3 (RFC 9438 4.3 "
              "switches it to 1; tcp.cubic.reno_alpha = linux): the UDP loss, 5.49 -> 3.57 % (ns-3 3.68; over "
              "seeds 1-5 3.70 against 3.62)",
              _NO_CWR_RECOVERY + ": the marks, 4777 -> 5755 (ns-3 5763), the fast recoveries 24.2 -> 10 (ns-3 "
              "14.6), the TCP data loss 0.61 -> 0.74 % (ns-3 0.90), seeds 1-5",
              "ours' CUBIC setting ssthresh in whole segments, beta x cwnd rounded down, as ns-3's "
              "TcpCubic::GetSsThresh and Linux (tcp.cubic.whole_segment_ssthresh; its cut 0.71 -> 0.66 of cwnd, "
              "ns-3's 0.66, flow 3) and its receiver echoing ECE past a CWR when a mark waits for its delayed ACK, "
              "as ns-3's DoForwardUp (tcp.ecn_echo_past_cwr): the queue 19.8 -> 17.8 kB (ns-3 17.2), the UDP loss "
              "4.36 -> 3.77 % (3.62), seeds 1-5"]),
    **_chain([_RED_ECN_ALL, _RED_ECN_ECE],
             [_ECE_NEW_ACK + ": the fast recoveries 9.8 -> 14.4 (ns-3 14.6), seeds 1-5"]),
    **_chain([_RED_ECN_ECHO_REPAIRED, _RED_ECN_ECE_ECHO_REPAIRED],
             [_ECE_NEW_ACK + ": the fast recoveries 8.4 -> 12.6 (ns-3, echo repaired, 14), seeds 1-5"]),
    **_chain(["NewReno against Linux", "NewReno against Linux, Linux profile",
              "NewReno against Linux, Linux profile, hosts' links shaped",
              "NewReno against Linux, Linux profile, hosts' links shaped, receive buffer from the start"],
             [_PROFILE, _SHAPED, _RCVBUF]),
    **_chain(["CUBIC against Linux", "CUBIC against Linux, Linux profile",
              "CUBIC against Linux, Linux profile, hosts' links shaped",
              "CUBIC against Linux, Linux profile, hosts' links shaped, receive buffer from the start"],
             [_PROFILE, _SHAPED, _RCVBUF]),
}

#: Row -> what is known of its differing cells (rows nothing supersedes).
CAUSES: dict[str, tuple[Cause, ...]] = {
    "RED": (
        Cause("scenario1, 8 flows", ("TCP data loss", "goodput", "FCT"), "proven: a rule difference",
              "ns-3's RED never drops an arrival to an empty queue, ours (Floyd and Jacobson) does: 29 % of the "
              "early drops at 8 flows. Ours with ns-3's rule: 3.99 %, 0.504 Mb/s, 81.3 s against ns-3's 3.58 %, "
              "0.514, 79.2 s", _RED_S1),
        Cause("scenario1, 24 flows", ("TCP data loss",), "proven: the reference's",
              "ns-3 sets cwnd = ssthresh + 1 MSS at every recovery exit; without it ns-3 loses 5.93 % (ours 5.58) "
              "and its fast recoveries agree (2161 against 2176)", _RED_S1),
    ),
    "CUBIC against Linux, Linux profile, hosts' links shaped, receive buffer from the start": (
        Cause("ewt", ("goodput", "data loss", "fast recoveries"), "traced, not proven",
              "20 repetitions a setting, paired with the simulator's seeds, the receivers' buffer the file's from "
              "the start (session 25): over DropTail every cell agrees, over EWT three of CUBIC's differ because "
              "EWT's own effect differs. EWT minus DropTail, paired by seed: bottleneck drops -51 ± 25 a run in "
              "the simulator against +24 ± 39 in Linux (difference +74 ± 45), data loss -0.35 against +0.16 points "
              "(+0.52 ± 0.31), fast recoveries -0.85 against +1.1, while the FCT effect now agrees (-0.18 against "
              "-0.03 s, +0.15 ± 0.21); Linux's gateway rewrites 1566 ACKs a run against 2862. NewReno's row "
              "agrees in every cell, though its drop effect is as far apart (-53 against -17, +36 ± 40). On real "
              "packets EWT does not lower the loss it lowers in the simulator; why is not found. Refuted before: "
              "the start times (paired), RACK, a burst at recovery exits, Linux ignoring a smaller window on a "
              "duplicate ACK, the simulator's receivers opening their window as Linux's rcv_ssthresh "
              "(docs/testbed.md, session 24); and now the size of the window EWT scales (Linux offers about 2 MB "
              "for its 4 MB buffer; the simulator offering 2 MB removes more drops, -74 a run for CUBIC)",
              _LINUX_RCVBUF),
    ),
    _ECN_FINAL: (
        Cause("31 flows", ("ECN marks at the bottleneck",), "proven: the reference's",
              "ns-3 3.44 enters CWR on an ECE in CA_RECOVERY and CA_LOSS (RFC 3168 6.1.2 and Linux do not), which "
              "cuts the slow starts' long recoveries short; with that repaired (--ns3-ecn rfc3168, seeds 1-5) its "
              "marks are 1385 ± 195 against ours' 1532 ± 117, within the CIs. The whole gap is in CoDel dropping "
              "states of 10 or more marks in the first 10 s (seed 1: ours 451 marks, ns-3 47, repaired 203), on "
              "flows holding cwnd in a recovery; FQ-CoDel's rules switched in ours (64-packet limit, ns-3's device "
              "queue, its Newton step for 1/sqrt(count), alone and together) leave the marks at 1479-1646 "
              "(branch fqc15)", _FQC15),
        Cause("31 flows", ("fast recoveries",), "proven: a rule difference",
              "ns-3 starts no fast recovery for a loss found in CWR and repairs it under CWR (TcpSocketBase::DupAck "
              "acts in CA_DISORDER only), Linux and ours start one: ours with ns-3's rule (tcp.recovery_from_cwr = "
              "ns3) 42.6 -> 30.4 ± 1.4, ns-3 32.6 ± 2.3 (30.8 ± 5.8 with its ECE answer repaired), seeds 1-5; "
              "that rule then loses more TCP data in ours (1.40 ± 0.21 % against 1.09 ± 0.05: its flows in CWR lose "
              "520 packets a run to FQ's overflow in the first 10 s, ns-3's 215; with the same start times the same "
              "flows lose them and the rules act alike, flow 26's retransmissions standing nearer its flow queue's "
              "head when a batch came; not shown systematic, open). The overflow batches themselves agree (8.0 "
              "against 8.1 packets, seed 1), and the queue's rules switched in ours leave the recoveries at "
              "41.2-44.2 (branch fqc15)", _FQC15),
    ),
}


def final_rows(rows: list[dict]) -> list[dict]:
    """The rows nothing supersedes."""
    return [r for r in rows if r["mechanism"] not in SUPERSEDED_BY]


def cause_of(mechanism: str, v: dict) -> Cause | None:
    """The cause :data:`CAUSES` gives a differing metric cell ``v`` of a row."""
    for c in CAUSES.get(mechanism, ()):
        if c.cell in v["cell"] and v["label"] in c.metrics:
            return c
    return None


def stale_causes(rows: list[dict]) -> list[str]:
    """Causes that name no differing cell of their row (the records moved,
    or the row is gone): "row: cell / metrics"."""
    by_name = {r["mechanism"]: r for r in rows}
    stale = []
    for name, causes in CAUSES.items():
        r = by_name.get(name)
        for c in causes:
            if r is None or not any(cause_of(name, v) is c for v in r["differ"]):
                stale.append(f"{name}: {c.cell} / {', '.join(c.metrics)}")
    return stale


def _link(evidence: str, markdown: bool) -> str:
    return f"[{evidence.split('#')[0]}]({evidence})" if markdown else f"docs/{evidence}"


def superseded_table(rows: list[dict], markdown: bool = False) -> str:
    """The superseded rows: how many of their cells differ, the row that
    makes the comparison again and how well that row agrees."""
    by_name = {r["mechanism"]: r for r in rows}
    body = []
    for r in rows:
        if r["mechanism"] not in SUPERSEDED_BY or not r["compared"]:
            continue
        later, what = SUPERSEDED_BY[r["mechanism"]]
        lr = by_name.get(later)
        got = f"{lr['either']} of {lr['compared']}" if lr and lr["compared"] else "not run"
        body.append([r["mechanism"], f"{r['either']} of {r['compared']}", later, what, got])
    if not body:
        return ""
    return render(["row", "agree", "superseded by", "what the later row changes", "agree there"], body,
                  markdown=markdown, align=["left", "right", "left", "left", "right"])


def remaining_table(rows: list[dict], markdown: bool = False) -> str:
    """Every differing metric cell of the rows nothing supersedes, with where
    its cause stands."""
    body = []
    for r in final_rows(rows):
        for v in r["differ"]:
            unit = unit_of(v["metric"])
            m0, m1 = v["ref_ci"][0], v["ours_ci"][0]
            rel = f"{(m1 - m0) / abs(m0) * 100:+.0f} %" if m0 and m0 == m0 and m1 == m1 else "-"
            c = cause_of(r["mechanism"], v)
            status, why = (c.status, f"{c.why} ({_link(c.evidence, markdown)})") if c else ("open", "")
            body.append([r["mechanism"], v["cell"], v["label"], ci(*v["ref_ci"][:2], unit),
                         ci(*v["ours_ci"][:2], unit), rel, status, why])
    if not body:
        return ""
    return render(["mechanism", "cell", "metric", "reference", "netreturn", "ours vs reference", "where it stands",
                   "cause"], body, markdown=markdown,
                  align=["left", "left", "left", "right", "right", "right", "left", "left"])


def headline(rows: list[dict]) -> str:
    """One sentence: the rows nothing supersedes, their agreement, and their
    differing cells by status."""
    f = final_rows(rows)
    compared = sum(r["compared"] for r in f)
    either = sum(r["either"] for r in f)
    counts = dict.fromkeys(STATUSES, 0)
    for r in f:
        for v in r["differ"]:
            c = cause_of(r["mechanism"], v)
            counts[c.status if c else "open"] += 1
    parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    return (f"On the {sum(1 for r in f if r['compared'])} rows no later row supersedes: {either} of {compared} "
            f"metric cells agree by either measure; the {compared - either} that differ: {parts or 'none'}.")


def text(rows: list[dict], markdown: bool = False) -> str:
    """The headline, the remaining differences with their causes, the
    superseded rows, and any stale cause."""
    out = headline(rows)
    rem = remaining_table(rows, markdown)
    if rem:
        out += "\n\nMetric cells that agree by neither measure, on the rows no later row supersedes:\n\n" + rem
    sup = superseded_table(rows, markdown)
    if sup:
        out += ("\n\nRows a later row supersedes (the same comparison with the reference repaired, or ours on "
                "the reference's documented rule); their differing cells are what the later row changes:\n\n" + sup)
    stale = stale_causes(rows)
    if stale:
        out += "\n\nCauses that no longer name a differing cell (update netreturn/valstatus.py): " + "; ".join(stale)
    return out
