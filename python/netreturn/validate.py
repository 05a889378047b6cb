"""``netreturn validate``: the same dumbbell in ns-3 3.44 and in netreturn,
side by side per metric.

EWT scenario 1 or 2 (``scenarios/ewt/scenario{1,2}.toml``), or their aligned
versions (``scenarios/validate/*-aligned.toml``, ``--aligned``), is built in
ns-3 by :mod:`netreturn.ns3ref` (see ``docs/validation.md`` for every setting
and the traps avoided) and run here over the same seeds, with DropTail, RED,
ARED (ns-3's, ``ared_mode = "ns3"`` in ours) or the EWT / AWM gateways (ns-3's
own implementation in ``ns3cxx/gateway.cc``), or the dequeue-time AQMs both
have (CoDel, FQ-CoDel, PIE, FQ-PIE, COBALT, set as ours:
``ns3ref.aqm_settings``) under CUBIC, NewReno or DCTCP senders (``--tcp``),
ECN on or off (``--ecn``; RED and ARED then mark in both). ns-3 runs with ns-3-dev's
repaired PRR (``--ns3-prr upstream``) unless told otherwise; each seed is an
independent replication in both simulators (the two draw their start times
from different generators, so runs are compared as samples, not one to
one). For each metric the table gives mean ± 95 % CI over the seeds in both,
and says whether the means agree within the seed-to-seed spread: the
difference of the means is no larger than the combined CI half-widths,
``|m1 - m2| <= sqrt(h1^2 + h2^2)``.

ns-3 results are kept under ``<out>/ns3/`` (one JSON per flows/queue/seed),
so a rerun with more seeds only runs the new ones; each comparison also
leaves its cell record under ``<out>/cells/`` (:mod:`netreturn.valrecords`)
for ``netreturn validate --summary`` (:mod:`netreturn.valsummary`).
"""

from __future__ import annotations

import json
import math
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from .files import atomic_write
from .stats import agree, mean_ci
from .table import ci, render, unit_of
from .validate_lossy import explained

#: (metric, label) compared; names are our summary names, which ns3ref uses
#: too. Loss is compared on data segments: ns-3's FlowMonitor data-direction
#: flows against our ``tcp_data_loss_pct`` (``tcp_packet_loss_pct`` counts ACKs too).
METRICS = [
    ("tcp_data_loss_pct", "TCP data loss ratio (%)"),
    ("tcp_packet_loss_pct", "TCP loss, data and ACKs (%)"),
    ("udp_loss_pct", "UDP loss ratio (%)"),
    ("goodput_mean_mbps", "goodput, mean per flow (Mb/s)"),
    ("fct_mean_s", "FCT, mean (ms)"),
    ("fct_max_s", "FCT, max (ms)"),
    ("jain_goodput", "Jain index of goodput"),
    ("tcp_efficiency_pct", "TCP efficiency (%)"),
    ("udp_efficiency_pct", "UDP efficiency (%)"),
    ("utilization", "bottleneck utilization"),
    ("queue_mean_bytes", "queue, time mean (kB)"),
    ("ecn_marks", "ECN marks at the bottleneck"),
    ("ecn_reductions", "ECN window reductions"),
    ("fast_recoveries", "fast recoveries"),
    ("timeouts", "RTO expiries"),
    ("sim_time_s", "simulated time (ms)"),
]


#: Scenarios ns-3 can build, with the flow count of the paper's heavy level.
SCENARIOS = {"ewt/scenario2": 31, "ewt/scenario1": 24}
QUEUES = ("droptail", "red", "ared", "ewt", "awm", "codel", "fq_codel", "pie", "fq_pie", "cobalt")
#: The senders' congestion controls both simulators have on the dumbbells
#: (``--tcp``; the scenario's ``tcp`` parameter in ours).
TCPS = ("cubic", "newreno", "dctcp", "bbr")
#: ns-3's senders' answer to congestion signals: as 3.44 ships it (ns3);
#: repaired as RFC 3168 section 6.1.2 and Linux (rfc3168: no CWR entered in
#: fast recovery or after an RTO; ``ns3ref.run_ns3(ecn_rfc3168=True)``,
#: docs/validation.md, "RED with ECN"); and DCTCP's answer to a loss too,
#: as RFC 8257 section 3.5 (rfc8257: halve; ``dctcp_rfc8257=True``); and
#: DCTCP's receiver too, as RFC 8257 section 3.2 (rfc8257-echo: the ACK at a
#: change of the CE state covers every segment before it; ``dctcp_echo=True``);
#: or ns-3's classic ECN receiver as RFC 3168 section 6.1.3 and Linux
#: (cwr-rfc3168: a CWR ends the echo even after a mark not yet ACKed;
#: ``ecn_cwr_rfc3168=True``, docs/validation.md, "RED with ECN: ns-3's cut in
#: whole segments").
NS3_ECN = ("ns3", "rfc3168", "rfc8257", "rfc8257-echo", "cwr-rfc3168")
#: The NS3_ECN values that repair ns-3's DCTCP (``--tcp dctcp`` only).
NS3_ECN_DCTCP = ("rfc8257", "rfc8257-echo")
#: ns-3's FQ-CoDel: as 3.44 ships it (ns3: CoDel's "at most one MTU queued:
#: no drop, no mark" test on each flow queue's bytes), or as Linux and ours
#: (linux: on the whole queue disc's backlog; ``ns3ref.run_ns3(fqcodel_linux=True)``,
#: docs/validation.md, "FQ-CoDel's one-MTU test"); linux-mark: that, and
#: CoDel's next signal after a mark in the dropping state scheduled from the
#: previous due time as Linux's codel_dequeue, where ns-3 takes the dequeue
#: instant (``fqcodel_linux_mark=True``).
NS3_FQCODEL = ("ns3", "linux", "linux-mark")
#: PRR of the ns-3 runs: ns-3-dev's repaired one by default.
DEFAULT_PRR = "upstream"


def ours_scenario(scenario: str, aligned: bool) -> str:
    """Our scenario file for an ns-3 scenario: the same, or its aligned copy."""
    return f"validate/{scenario.split('/')[-1].replace('scenario', 'ewt-scenario')}-aligned" if aligned else scenario


def with_data_loss(run: dict) -> dict:
    """A run of ours with ``tcp_data_loss_pct``; builds without that metric
    fall back to ``tcp_packet_loss_pct`` (data and ACKs) and say so in
    ``data_loss_fallback``."""
    if not isinstance(run.get("tcp_data_loss_pct"), (int, float)) or math.isnan(run.get("tcp_data_loss_pct", math.nan)):
        return {**run, "tcp_data_loss_pct": run.get("tcp_packet_loss_pct", math.nan), "data_loss_fallback": True}
    return run


def add_arguments(v) -> None:
    """The options of ``netreturn validate`` (called by cli.build_parser)."""
    from .args import losses, positive as _positive
    from .ns2lossy import NEWRENO_RULES
    from .ns3ref import PRR_MODES  # a table only; ns-3 itself is not imported
    from .validate_lossy import SCENARIO as LOSSY
    from .validate_ngwa import OURS as NGWA_OURS

    v.add_argument("--scenario", choices=[*SCENARIOS, LOSSY, "ngwa"], default="ewt/scenario2",
                   help=f"an EWT dumbbell, the SARBE paper's lossy link ({LOSSY}: --cc, --loss), or NGWA's "
                        "scenarios, Table 2's tests (ngwa: --ngwa-rows)")
    v.add_argument("--flows", type=_positive, default=None, help="flows (default: the paper's heavy level, 31 / 24)")
    v.add_argument("--queue", choices=list(QUEUES), default="droptail")
    v.add_argument("--seeds", type=_positive, default=5)
    v.add_argument("--tcp", choices=list(TCPS), default="cubic",
                   help="EWT dumbbells: the senders' congestion control in both (DCTCP negotiates ECN)")
    v.add_argument("--ecn", action="store_true",
                   help="EWT dumbbells: TCP negotiates ECN (RFC 3168) in both (tcp.ecn in ours, UseEcn On in ns-3), "
                        "so an AQM that marks (fq_codel and cobalt by default; red and ared: turned on, red.ecn "
                        "in ours, RedQueueDisc::UseEcn in ns-3) marks instead of dropping")
    v.add_argument("--ns3-ecn", choices=list(NS3_ECN), default="ns3",
                   help="with --ecn or --tcp dctcp: ns-3's answer to ECE as 3.44 ships it (ns3), or repaired as "
                        "RFC 3168 section 6.1.2 and Linux (rfc3168: a sender in fast recovery or after an RTO does "
                        "not enter CWR); rfc8257 (--tcp dctcp): that, and DCTCP halving on a loss (RFC 8257 "
                        "section 3.5) where ns-3's TcpDctcp cuts by alpha / 2; rfc8257-echo (--tcp dctcp): those, and "
                        "DCTCP's receiver as RFC 8257 section 3.2 (its immediate ACK at a change of the CE state "
                        "covers every segment before it; ns-3 3.44's ends one segment short); cwr-rfc3168: ns-3's "
                        "classic ECN receiver as RFC 3168 section 6.1.3 and Linux (a CWR ends the echo even after a "
                        "CE mark not yet acknowledged; ns-3 3.44 keeps echoing past it)")
    v.add_argument("--ns3-fqcodel", choices=list(NS3_FQCODEL), default="ns3",
                   help="with --queue fq_codel: ns-3's FQ-CoDel as 3.44 ships it (ns3: CoDel's one-MTU 'too little "
                        "queued to drop or mark' test on each flow queue), or as Linux and ours (linux: on the "
                        "whole queue disc's backlog), and linux-mark: that, and CoDel's next signal after a mark "
                        "scheduled from the previous due time as Linux (ns-3: from the dequeue instant)")
    v.add_argument("--ours-set", dest="ours_sets", type=_ours_set, action="append", default=[], metavar="NAME=VALUE",
                   help="EWT dumbbells: a setting of ours alone (a scenario key, e.g. tcp.prr_bound=safeack), to "
                        "switch one side's rule; ns-3's runs are the cell's without it, the record's name ends in "
                        "_ours-<key>-<value>")
    v.add_argument("--aligned", action="store_true",
                   help="aligned configuration in both: 1000-packet access buffers, 1 MiB TCP buffers, "
                        "ns-3's RED thresholds, gentle, byte mode (scenarios/validate/)")
    v.add_argument("--phase", type=_time, default=None, metavar="D",
                   help="phase randomization in both simulators: every link's delay grows by a per-seed offset, "
                        "uniform in [0, D) (e.g. 1ms; run.phase in ours, the same offsets in ns-3), so seeds "
                        "sample phases instead of repeating one")
    v.add_argument("--ns3-prr", choices=["ns3", *PRR_MODES], default=DEFAULT_PRR,
                   help="ns-3's PRR: upstream (default) = ns-3-dev's repaired TcpPrrRecovery; ns3 = as shipped "
                        "in 3.44; wide, wide-nobonus, rfc6937, rfc6937-noexit: see docs/validation.md")
    v.add_argument("--cc", choices=["newreno", "westwood+"], default=None,
                   help=f"{LOSSY} only: the congestion control (default: both)")
    v.add_argument("--loss", type=losses, default=None,
                   help=f"{LOSSY} only: wireless loss probabilities, comma-separated "
                        "(default: Fig. 3b's 0.00001,0.0001,0.001,0.01,0.03,0.1)")
    v.add_argument("--summary", action="store_true",
                   help="print the validation summary (every mechanism, its reference, how many metric cells agree "
                        "within 10 %% or within the CIs) from the cell records under <out>/cells")
    v.add_argument("--regenerate", action="store_true",
                   help="with --summary: run every cell of the summary first (aligned, --phase 1ms, --seeds; "
                        "reference runs already stored are read, not run again) and rewrite its records")
    v.add_argument("--cached", action="store_true",
                   help="with --regenerate: run no reference simulation; each cell compares the seeds its "
                        "ns-3 / ns-2 store holds (ours runs those); a cell with none stored, and the testbed's, "
                        "keeps its record")
    v.add_argument("--resim-ours", action="store_true",
                   help="with --summary: run ours' side of every stored cell record again and rewrite it, keeping "
                        "the reference's runs the record holds (no reference simulator, no namespaces: the "
                        "dumbbells', NGWA's, the lossy link's and the testbed's records; XCP's: --regenerate "
                        "--cached)")
    v.add_argument("--mechanisms", default=None, metavar="NAMES",
                   help="with --regenerate: only these mechanisms, comma-separated (e.g. DropTail,RED,ARED)")
    v.add_argument("--doc", type=Path, default=None, metavar="FILE",
                   help="with --summary: write the table (Markdown) between the generated-table markers of FILE "
                        "(docs/validation.md)")
    v.add_argument("--markdown", action="store_true", help="with --summary: print Markdown")
    v.add_argument("--ngwa-rows", default=None, metavar="KEYS",
                   help="with --scenario ngwa: Table 2's tests to run, comma-separated (rfc793, newreno, "
                        "mode1 ... mode8; default: all)")
    v.add_argument("--ns3-rfc793", choices=["ns3", "strict", "strict-rfc6298", "strict-rfc6298-gbn"], default="ns3",
                   help="with --scenario ngwa: ns-3's stand-in for RFC 793 TCP (CW off: rfc793, mode3, mode4, mode7, "
                        "mode8): ns3 = cwnd and the fast-retransmit thresholds out of reach, the dupACK-guessed loss "
                        "marks left in (it still enters fast recovery); strict = those marks cleared, so it "
                        "retransmits only after a timeout, as RFC 793 (records ngwa_<row>_rfc793-strict); "
                        "strict-rfc6298 = strict, and a backed-off RTO kept until a new RTT sample (RFC 6298 "
                        "section 5) where ns-3 collapses it on any new ACK; strict-rfc6298-gbn = that, and the "
                        "whole window resent at every timeout, also one while in CA_LOSS (where the others resend "
                        "one segment and wait an RTT)")
    v.add_argument("--ns3-newreno", choices=["ns3", "rfc6582", "rfc6582-rfc6298", "inflation", "flightsize",
                                             "inflation-flightsize", "rfc6582-inflation-flightsize-rfc6298",
                                             "rfc6582-inflation-flightsize-rfc6298-cwndlimited"],
                   default="ns3",
                   help="with --scenario ngwa: ns-3's NewReno senders without SACK (CW on: newreno, mode1, mode2, "
                        "mode5, mode6): ns3 = as built; rfc6582 = no loss marks left on the sent list when "
                        "recovery ends, as RFC 6582 keeps no scoreboard (records ngwa_<row>_newreno-rfc6582); "
                        "rfc6582-rfc6298 = that, and a backed-off RTO kept until a new RTT sample (RFC 6298 "
                        "section 5) where ns-3 collapses it on any new ACK; inflation = the send window in fast "
                        "recovery RFC 6582's (cwnd inflated by one SMSS per dupACK, against FlightSize and the "
                        "receiver's window) instead of ns-3's pipe lowered by each dupACK'd segment's size; "
                        "inflation-flightsize = and ssthresh halving FlightSize (RFC 5681 eq. 4) where ns-3 halves "
                        "its pipe; rfc6582-inflation-flightsize-rfc6298 = all four; ...-cwndlimited = and cwnd grown "
                        "only while it limits the sender (ours' rule, a model difference)")
    v.add_argument("--ns3-ngwa-mark", choices=["qdisc", "tx"], default="qdisc",
                   help="with --scenario ngwa: when ns-3's NGWA routers read Br and mark: qdisc = as the queue "
                        "disc lets the packet go to the device queue under it (as built, about one transmission "
                        "early); tx = as the device starts sending it, every byte waiting behind it counted, as "
                        "ours (records ngwa_<row>_mark-tx)")
    v.add_argument("--ngwa-ours", choices=list(NGWA_OURS), default=None,
                   help="with --scenario ngwa: ours with a setting where the two implementations differ and both "
                        "are allowed: resend-snd-max = a go-back-N resend ends at SND.MAX, new data in segments of "
                        "its own, as ns-3 resends its sent list (tcp.resend_ends_at_snd_max; records "
                        "ngwa_<row>..._ours-resend-snd-max); ns3-resend-ns3-window = a resend cut from the segments "
                        "as first sent, each with the next up to an MSS, as ns-3's sent list "
                        "(tcp.resend_merges_sent), and the receiver offering its whole buffer from RCV.NXT, as "
                        "ns-3 (tcp.window_deducts_ooo = false); ns3-resend-window-queue = that, and the router's "
                        "buffer one packet larger, as ns-3's device queue under its queue disc")
    v.add_argument("--reference", choices=["ns3", "ns2"], default="ns3",
                   help="--scenario sarbe/lossy_link: the reference simulator, ns-3 3.44 or ns-2.35's own "
                        "Agent/TCP/Newreno and TCPSink (ns2: --cc newreno only)")
    v.add_argument("--ns2-newreno", choices=list(NEWRENO_RULES), default=NEWRENO_RULES[0],
                   help=f"{LOSSY} with --reference ns2: three duplicate ACKs before the cumulative ACK passes "
                        "the last recovery point start no fast retransmit unless it has passed it by a packet, as "
                        "ns-2.35 ships (careful: RFC 2582's Careful variant), or start one once it covers that "
                        "point, RFC 6582 section 3.2 step 2's rule and ours (rfc6582: ns-2's lessCareful_ 1; "
                        "records lossy_newreno_ns2_rfc6582...)")
    v.add_argument("--ns3-renosack", choices=["linux", "ns3", "rfc6582", "rfc6582-strict"], default="linux",
                   help=f"{LOSSY} only: ns-3's dupACK-guessed scoreboard without SACK cleared at the end of "
                        "recovery as Linux does (default), or only at a timeout as ns-3 3.44 ships it (ns3), or "
                        "recovery left with no loss marks either (rfc6582), or no guessed mark at all outside "
                        "recovery, as RFC 6582 (rfc6582-strict: cleared at every entry into CA_OPEN)")
    v.add_argument("--ns3-loss-exit", choices=["ns3", "rfc5681"], default="ns3",
                   help=f"{LOSSY} only: the ACK that ends ns-3's CA_LOSS grows cwnd by no segment, as ns-3 3.44 "
                        "ships it (ns3), or by one as RFC 5681 section 3.1 and ours (rfc5681)")
    v.add_argument("--ns3-westwood", choices=["ns3", "deduct", "linux"], default="ns3",
                   help=f"{LOSSY} only: ns-3's TcpWestwoodPlus as shipped, or with the segments duplicate ACKs "
                        "counted deducted from the ACK that covers them (as Linux westwood_acked_count: deduct), "
                        "or with that count and Linux's estimator too (a sample per max(RTT, 50 ms), two 7/8 "
                        "filters, as ours: linux)")


def _ours_set(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` of ``--ours-set``: the project's ``--set`` parser
    (:func:`netreturn.args.kv`), and a VALUE, since ours' side must change."""
    import argparse

    from .args import kv

    name, value = kv(text)
    if not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r} (no VALUE)")
    return name, value


def _time(text: str) -> str:
    """A time with its unit (``--phase 1ms``), checked by the one unit parser."""
    import argparse

    from . import _native

    try:
        if _native.parse_time(text) <= 0 or text.strip().replace(".", "").isdigit():
            raise ValueError("a positive time with its unit, like 1ms")
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r}: {e}") from None
    return text


def ours_tag(ours_sets: dict | None = None) -> str:
    """The part of a cell's name that names ours' own settings (``validate
    --ours-set``; ns-3's side is the same cell's): ``_ours-prr-bound-safeack``
    for ``tcp.prr_bound = "safeack"``, ``_ours-cubic-reno-alpha-linux`` for
    ``tcp.cubic = '{reno_alpha="linux"}'`` (what is not a letter, digit or dot
    becomes a hyphen), nothing without them."""
    import re

    def part(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9.]+", "-", str(text)).strip("-")

    return "".join(f"_ours-{part(k.split('.')[-1])}-{part(v)}" for k, v in sorted((ours_sets or {}).items()))


def cell_tag(flows: int, queue: str, prr: str = DEFAULT_PRR, scenario: str = "ewt/scenario2", aligned: bool = False,
             phase_ns: int = 0, tcp: str = "cubic", ecn: bool = False, ns3_ecn: str = "ns3",
             ns3_fqcodel: str = "ns3", ours_sets: dict | None = None) -> str:
    """The name of one compared configuration (a cell), as the ns-3 run
    store spells it: ``flows31_red_prr-upstream_scenario1_aligned_phase1000000ns``
    (``_dctcp_ecn`` after it for other senders, :func:`variant_tag`; ours'
    own settings last, :func:`ours_tag`, which the ns-3 store leaves out)."""
    tag = "" if prr == "ns3" else f"_prr-{prr}"
    tag += "" if scenario == "ewt/scenario2" else "_" + scenario.split("/")[-1]
    tag += "_aligned" if aligned else ""
    tag += f"_phase{phase_ns}ns" if phase_ns else ""
    tag += variant_tag(tcp, ecn, ns3_ecn)
    tag += "" if ns3_fqcodel == "ns3" else f"_fqcodel-{ns3_fqcodel}"
    return f"flows{flows}_{queue}{tag}{ours_tag(ours_sets)}"


def ns3_cache_path(out: Path, flows: int, queue: str, seed: int, prr: str = DEFAULT_PRR,
                   scenario: str = "ewt/scenario2", aligned: bool = False, phase_ns: int = 0, tcp: str = "cubic",
                   ecn: bool = False, ns3_ecn: str = "ns3", ns3_fqcodel: str = "ns3") -> Path:
    """Where ``validate`` keeps one ns-3 run: ``<out>/ns3/<cell>_seed<n>.json``."""
    tag = cell_tag(flows, queue, prr, scenario, aligned, phase_ns, tcp, ecn, ns3_ecn, ns3_fqcodel)
    return out / "ns3" / f"{tag}_seed{seed}.json"


def _ns3_runs(flows: int, queue: str, seeds: list[int], out: Path, jobs: int, progress: bool,
              prr: str = "ns3", scenario: str = "ewt/scenario2", aligned: bool = False,
              phase_ns: int = 0, tcp: str = "cubic", ecn: bool = False, ns3_ecn: str = "ns3",
              ns3_fqcodel: str = "ns3") -> list[dict]:
    from . import ns3ref

    (out / "ns3").mkdir(parents=True, exist_ok=True)

    def path(s):
        return ns3_cache_path(out, flows, queue, s, prr, scenario, aligned, phase_ns, tcp, ecn, ns3_ecn, ns3_fqcodel)

    # Runs cached before the data-loss metric existed are run again.
    todo = [s for s in seeds if not path(s).exists() or "tcp_data_loss_pct" not in json.loads(path(s).read_text())]
    if todo:
        if not ns3ref.available():
            raise RuntimeError("ns-3 is not installed: pip install 'netreturn[ns3]' (PyPI package ns3==3.44.post0)")
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(todo), desc="ns-3 runs", unit="run")
        # Each ns-3 run is its own process (ns3ref.run_ns3); threads only wait.
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futs = {pool.submit(ns3ref.run_ns3, flows=flows, queue=queue, seed=s, prr=prr, scenario=scenario,
                                aligned=aligned, phase_ns=phase_ns, cc=None if tcp == "cubic" else tcp,
                                ecn=ecn, ecn_rfc3168=ns3_ecn in ("rfc3168", *NS3_ECN_DCTCP),
                                dctcp_rfc8257=ns3_ecn in NS3_ECN_DCTCP, dctcp_echo=ns3_ecn == "rfc8257-echo",
                                ecn_cwr_rfc3168=ns3_ecn == "cwr-rfc3168",
                                fqcodel_linux=ns3_fqcodel in ("linux", "linux-mark"),
                                fqcodel_linux_mark=ns3_fqcodel == "linux-mark"): s for s in todo}
            for f in as_completed(futs):
                r = f.result()
                r.pop("per_flow", None)
                atomic_write(path(futs[f]), json.dumps(r, allow_nan=True))
                if bar:
                    bar.update()
        if bar:
            bar.close()
    runs = [json.loads(path(s).read_text()) for s in seeds]
    for r in runs:  # cached before ns3ref named it: entries into CA_RECOVERY
        r.setdefault("fast_recoveries", r.get("triple_dupacks", math.nan))
    # ns3ref's `timeouts` are entries into CA_LOSS, which miss an RTO that
    # expires again (backoff); `rto_expiries` counts every expiry, as ours
    # does. Compare expiries when every run has them.
    if all("rto_expiries" in r for r in runs):
        for r in runs:
            r["rto_episodes"], r["timeouts"] = r["timeouts"], r["rto_expiries"]
    elif progress:
        print("(ns-3 RTOs: entries into CA_LOSS, backoff expiries not counted; runs cached before rto_expiries)")
    return runs


def variant_tag(tcp: str = "cubic", ecn: bool = False, ns3_ecn: str = "ns3") -> str:
    """The part of a run's cache name that says which senders ran: nothing
    for CUBIC without ECN (every name cached before ``--tcp`` and
    ``--ecn`` existed), else ``_newreno``, ``_dctcp``, ``_ecn``; and
    ``_ecn-rfc3168`` when ns-3's answer to ECE is repaired (``NS3_ECN``)."""
    return (("" if tcp == "cubic" else f"_{tcp}") + ("_ecn" if ecn else "")
            + ("" if ns3_ecn == "ns3" else f"_ecn-{ns3_ecn}"))


def ours_settings(flows: int, queue: str, phase_ns: int = 0, tcp: str = "cubic", ecn: bool = False,
                  ours_sets: dict | None = None) -> dict:
    """The ``--set`` of our run for one ns-3 configuration (and ours' own
    ``ours_sets``, last)."""
    settings = {"flows": flows, "queue": queue}
    if phase_ns:
        settings["run.phase"] = f"{phase_ns}ns"
    if queue == "ared":
        settings["ared_mode"] = "ns3"  # ns-3's ARED, not Floyd 2001's schedule
    if tcp != "cubic":
        settings["tcp"] = tcp
    if ecn:
        settings["tcp.ecn"] = "true"
        if queue in ("red", "ared"):
            # RED marks instead of early drops, as ns-3's UseEcn (ns3ref).
            settings["topology.bottleneck.red.ecn"] = "true"
    return {**settings, **(ours_sets or {})}


def compare(ns3: list[dict], ours: list[dict]) -> list[dict]:
    """Rows of the side-by-side table from per-seed metric dicts."""
    rows = []
    for key, label in METRICS:
        a = mean_ci(r.get(key, math.nan) for r in ns3)
        b = mean_ci(r.get(key, math.nan) for r in ours)
        rows.append({"metric": key, "label": label, "ns3": a, "netreturn": b, "agree": agree(a, b)})
    return rows


#: The section of docs/validation.md that explains a disagreement, per
#: queue (the start of its heading); one for ns-3 3.44's own PRR.
EXPLAINED = {
    "droptail": "Issue 9's remaining gaps",
    "red": "The RED gap of scenario 2",
    "ared": "ARED: ns-3's enqueue rules were the gap",
    "ewt": "The gateways in ns-3",
    "awm": "The gateways in ns-3",
    **dict.fromkeys(("codel", "fq_codel", "pie", "fq_pie", "cobalt"), "The dequeue-time AQMs in ns-3"),
}
EXPLAINED_PRR_NS3 = "Why the first flow keeps its lead in ours"
EXPLAINED_ANY = "Side by side with our simulator"
#: The sections on the senders of issue 27 (RED with ECN; BBR and DCTCP).
EXPLAINED_RED_ECN = "RED with ECN: the senders' answer"
EXPLAINED_SENDERS = "BBR and DCTCP against ns-3"



def table(rows: list[dict], ns3_label: str = "ns-3 3.44") -> str:
    """Metric, both simulators' mean ± 95 % CI (each in its unit's format) and the verdict."""
    body = []
    for r in rows:
        unit = unit_of(r["metric"])
        v = {True: "agree", False: "DIFFER", None: "-"}[r["agree"]]
        body.append([r["label"], ci(*r["ns3"][:2], unit), ci(*r["netreturn"][:2], unit), v])
    return render(["metric", ns3_label, "netreturn", "verdict"], body, align=["left", "right", "right", "left"])


#: The metrics a cell record keeps for ``validate --summary`` (issue 25's
#: six: UDP loss only where the scenario has a UDP flow), with short labels.
SUMMARY_METRICS = [
    ("tcp_data_loss_pct", "TCP data loss"),
    ("udp_loss_pct", "UDP loss"),
    ("goodput_mean_mbps", "goodput"),
    ("fct_mean_s", "FCT"),
    ("jain_goodput", "Jain"),
    ("tcp_efficiency_pct", "TCP efficiency"),
]


#: The dequeue-time AQMs (issue 27), whose cells keep every metric both
#: simulators report (:func:`record_metrics`).
DEQUEUE_AQMS = ("codel", "fq_codel", "pie", "fq_pie", "cobalt")
#: Left out of those: UDP efficiency repeats UDP loss, simulated time the maximum FCT.
RECORD_LEFT_OUT = ("udp_efficiency_pct", "sim_time_s")


def record_metrics(queue: str, tcp: str = "cubic", ecn: bool = False) -> list[tuple[str, str]]:
    """The (metric, label) pairs a cell record keeps: issue 25's six for the
    baselines and gateways with CUBIC senders; for issue 27's cells (a
    dequeue-time AQM, ECN, or other senders) every metric of :data:`METRICS`
    but :data:`RECORD_LEFT_OUT`, as their rows of the summary compare."""
    if queue in DEQUEUE_AQMS or ecn or tcp != "cubic":
        return [(k, lab) for k, lab in METRICS if k not in RECORD_LEFT_OUT]
    return SUMMARY_METRICS


def ns3_label(prr: str = DEFAULT_PRR, ns3_ecn: str = "ns3", ns3_fqcodel: str = "ns3") -> str:
    """The reference's name in tables and records: ns-3 3.44, its PRR, its ECE answer and its FQ-CoDel when
    not as shipped."""
    label = "ns-3 3.44" if prr == "ns3" else f"ns-3 3.44, PRR {prr}"
    label += "" if ns3_ecn == "ns3" else f", ECE answer {ns3_ecn}"
    return label + ("" if ns3_fqcodel == "ns3" else f", FQ-CoDel {ns3_fqcodel}")


def ours_runs(scenario: str, settings: dict, seeds: list[int], jobs: int | None = None, out: Path | None = None,
              progress: bool = False) -> list[dict]:
    """Our runs of one dumbbell configuration over ``seeds``, a metrics
    dict each (with ``tcp_data_loss_pct``)."""
    from .api import run

    if seeds == list(range(1, len(seeds) + 1)):
        batches = [run(scenario, set=settings, seeds=len(seeds), jobs=jobs, out=out, progress=progress, tables=False)]
    else:  # the seeds a store holds (validate --summary --regenerate --cached): the same ones in ours
        batches = [run(scenario, set=settings, seed=s, jobs=jobs, out=out, tables=False) for s in seeds]
    return [with_data_loss(r) for res in batches for r in res.runs.to_dict("records")]


def run_cell(scenario: str, flows: int, queue: str, seeds: list[int], out: Path, jobs: int | None = None,
             progress: bool = False, prr: str = DEFAULT_PRR, aligned: bool = False,
             phase_ns: int = 0, tcp: str = "cubic", ecn: bool = False,
             ns3_ecn: str = "ns3", ns3_fqcodel: str = "ns3",
             ours_sets: dict | None = None) -> tuple[list[dict], list[dict]]:
    """One configuration in both simulators over ``seeds``: ns-3's runs
    (from the store under ``<out>/ns3/``, the missing ones run) and ours
    (through the run store ``<out>/netreturn``); its cell record is written
    to ``<out>/cells/`` (:mod:`netreturn.valrecords`). Returns both lists of
    per-seed metric dicts. Raises RuntimeError when ns-3 is needed and
    missing."""
    from .valrecords import record, write_record

    if ns3_ecn not in NS3_ECN:
        raise ValueError(f"ns3_ecn must be one of {', '.join(NS3_ECN)}, not {ns3_ecn!r}")
    if ns3_ecn in NS3_ECN_DCTCP and tcp != "dctcp":
        raise ValueError(f"ns3_ecn {ns3_ecn!r} repairs ns-3's DCTCP: give tcp 'dctcp', not {tcp!r}")
    if ns3_fqcodel not in NS3_FQCODEL:
        raise ValueError(f"ns3_fqcodel must be one of {', '.join(NS3_FQCODEL)}, not {ns3_fqcodel!r}")
    if ns3_fqcodel != "ns3" and queue != "fq_codel":
        raise ValueError(f"ns3_fqcodel {ns3_fqcodel!r} repairs ns-3's FQ-CoDel: give queue 'fq_codel', not {queue!r}")
    ns3 = _ns3_runs(flows, queue, seeds, out, jobs or 2, progress, prr, scenario, aligned, phase_ns, tcp, ecn, ns3_ecn,
                    ns3_fqcodel)
    mine = ours_scenario(scenario, aligned)
    ours = ours_runs(mine, ours_settings(flows, queue, phase_ns, tcp, ecn, ours_sets), seeds, jobs, out / "netreturn",
                     progress)
    label = ns3_label(prr, ns3_ecn, ns3_fqcodel)
    rows = [(k, lab, [r.get(k, math.nan) for r in ns3], [r.get(k, math.nan) for r in ours])
            for k, lab in record_metrics(queue, tcp, ecn)]
    extra = {} if ns3_fqcodel == "ns3" else {"ns3_fqcodel": ns3_fqcodel}
    if ours_sets:
        extra["ours_sets"] = dict(ours_sets)
    write_record(out, cell_tag(flows, queue, prr, scenario, aligned, phase_ns, tcp, ecn, ns3_ecn, ns3_fqcodel,
                               ours_sets),
                 record(label, rows, scenario=scenario, flows=flows, queue=queue, aligned=aligned, phase_ns=phase_ns,
                        prr=prr, seeds=seeds, netreturn_scenario=mine, tcp=tcp, ecn=ecn, ns3_ecn=ns3_ecn, **extra))
    return ns3, ours


def main(a) -> int:
    seeds = list(range(1, a.seeds + 1))
    out = a.out or Path("results") / "validate"
    out.mkdir(parents=True, exist_ok=True)
    if getattr(a, "scenario", None) == "sarbe/lossy_link":
        from .validate_lossy import main as lossy_main

        try:
            return lossy_main(a, out)
        except ValueError as e:
            print(f"netreturn: error: --scenario sarbe/lossy_link: {e}", file=sys.stderr)
            return 2
    prr = getattr(a, "ns3_prr", DEFAULT_PRR)
    scenario = getattr(a, "scenario", "ewt/scenario2")
    aligned = bool(getattr(a, "aligned", False))
    flows = a.flows or SCENARIOS[scenario]
    phase_ns = 0
    if getattr(a, "phase", None):
        from . import _native

        phase_ns = round(_native.parse_time(a.phase) * 1e9)
    ns3_ecn = getattr(a, "ns3_ecn", "ns3")
    ns3_fqcodel = getattr(a, "ns3_fqcodel", "ns3")
    ours_sets = dict(getattr(a, "ours_sets", None) or [])
    label = ns3_label(prr, ns3_ecn, ns3_fqcodel)
    mine = ours_scenario(scenario, aligned)
    tcp, ecn = getattr(a, "tcp", "cubic"), bool(getattr(a, "ecn", False))
    senders = "" if tcp == "cubic" and not ecn else f", {tcp}{' with ECN' if ecn else ''}"
    print(f"{scenario}{' aligned' if aligned else ''}, {flows} flows, {a.queue}{senders}, seeds 1..{a.seeds}: "
          f"{label} vs netreturn ({mine})")
    try:
        ns3, ours = run_cell(scenario, flows, a.queue, seeds, out, a.jobs, not a.quiet, prr, aligned, phase_ns,
                              tcp, ecn, ns3_ecn, ns3_fqcodel, ours_sets)
    except (RuntimeError, ValueError) as e:
        print(f"netreturn: error: {e}", file=sys.stderr)
        return 2
    rows = compare(ns3, ours)
    text = table(rows, label)
    section = EXPLAINED_PRR_NS3 if prr == "ns3" else EXPLAINED.get(a.queue, EXPLAINED_ANY)
    if prr != "ns3" and tcp in ("bbr", "dctcp"):
        section = EXPLAINED_SENDERS
    elif prr != "ns3" and ecn and a.queue in ("red", "ared"):
        section = EXPLAINED_RED_ECN
    differ = explained([r["label"] for r in rows if r["agree"] is False], section)
    if differ:
        text += "\n\n" + differ
    if any(r.get("data_loss_fallback") for r in ours):
        text += ("\n(netreturn's TCP data loss: this build has no tcp_data_loss_pct; its tcp_packet_loss_pct, "
                 "data and ACKs, is shown instead)")
    print()
    print(text)
    wall3 = sum(r.get("wall_s", 0.0) for r in ns3)
    wall = sum(r.get("wall_s", 0.0) for r in ours)
    print(f"\nwall time of the simulations: ns-3 {wall3:.1f} s, netreturn {wall:.2f} s "
          f"({wall3 / wall:.0f}x)" if wall else "")
    (out / "validation.txt").write_text(text + "\n")
    with open(out / "validation.csv", "w") as f:
        f.write("metric,ns3_mean,ns3_ci,netreturn_mean,netreturn_ci,agree\n")
        for r in rows:
            f.write(f"{r['metric']},{r['ns3'][0]},{r['ns3'][1]},{r['netreturn'][0]},{r['netreturn'][1]},{r['agree']}\n")
    print(f"tables: {out / 'validation.txt'}, {out / 'validation.csv'}")
    return 0
