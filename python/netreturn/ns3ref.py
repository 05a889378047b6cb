"""ns-3 3.44 reference runs of the EWT dumbbells (docs/decisions.md §5.1), for validation.

Also the AWM paper's Table 1 topology (``--scenario awm/fairness``, ``MultiRtt``):
our ``multi-rtt`` builder's round trips RTT_i = 40 ms + step i, NewReno,
1000-byte packets, bulk flows for 120 s (``--step``, ``--buffer``, ``--ns2``;
docs/xcp.md, "Cross-check with ns-3 3.44"). The settings listed below are the
EWT dumbbell's; ``MultiRtt`` and ``NS2_TCP`` say where the fairness
scenario's differ.

This module builds the EWT paper's scenario-1 and scenario-2 dumbbells in
ns-3 3.44 (the PyPI package ``ns3==3.44.post0``, cppyy bindings) and reports
the same headline metrics as our simulator, so the two can be compared side
by side and timed.

* ``run_ns3(...)`` runs ns-3 in a **subprocess** (this file executed as a
  script, ``python ns3ref.py ... --json``; ``python -m netreturn.ns3ref`` is
  the same once the package is installed), so a crash in ns-3 or cppyy, or a
  hang, cannot take the caller down. Nothing from ns-3 is imported when this
  module is imported.
* ``available()`` says whether the ``ns3`` package is installed (without
  importing it: importing it parses ns-3's headers with cling, ~10-15 s).

The ns-3 configuration (every setting and every trap) is documented in
docs/validation.md. In short: CUBIC (ns-3 defaults: PRR, SACK, timestamps,
window scaling, IW 10, delayed ACK 2 / 200 ms, min RTO 1 s), segment 1458 B,
socket buffers 1 MB, point-to-point MTU 1600 (a 1458-byte segment with
timestamps is a 1510-byte IP packet), no queue disc anywhere except R1's
bottleneck egress (the device's own 100-packet DropTail queue is the queue on
every other interface, FqCoDel removed), and on R1's bottleneck egress a
FifoQueueDisc of 97 000 B (DropTail, and under the EWT / AWM gateways) or a
RedQueueDisc (byte mode, MinTh = B/12, MaxTh = B/4, QW 0.002, LInterm 50,
gentle off, wait off, MeanPktSize 1510 so ns-3's byte-mode scaling is 1 for
full TCP segments; ARED: ``ARED`` true, thresholds and QW automatic, gentle
on) with the device queue under it cut to 1 packet. ``--aligned`` changes
the few settings listed at ``ALIGNED_*``.

The C++ (trace sinks and stop test, PRR variants, the EWT / AWM gateways) is
in ``ns3cxx/*.cc`` beside this file, compiled by cling at run time
(``cppyy.cppdef``): a Python callback per packet would dominate the run time.

Diagnostics (script options): ``--starts`` (given start times), ``--trace K``
(cwnd/ssthresh of the first K flows), ``--log-flow F --log-out PATH`` (a
packet-level log of flow F in the format of ``netreturn-sim --log-flow``),
``--cong-log PATH`` (every flow's congestion-state changes and RTO expiries),
and ``--prr`` (ns-3's PRR as shipped, repaired by switches, or ns-3-dev's
repaired one backported, ``upstream``: see ``ns3cxx/prr.cc`` and
docs/validation.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple, Optional

try:
    from .stats import jain, mean
except ImportError:  # run as a script (``python ns3ref.py``, see run_ns3): no parent package
    from netreturn.stats import jain, mean

__all__ = ["available", "run_ns3", "main"]

#: EWT's bottleneck buffer B (the EWT paper's Table 3), the EWT dumbbells' default.
BUFFER_BYTES = 97_000


class Dumbbell(NamedTuple):
    """One EWT dumbbell (docs/decisions.md §5.1): link rates and one-way delays."""

    access_rate: str
    access_delay: str
    bottleneck_bps: int
    bottleneck_delay: str
    receiver_rate: str
    receiver_delay: str
    udp: bool  # the UDP CBR flow (scenario 2 only)
    stop_s: float  # cap on simulated time ([run] stop of the scenario file)
    udp_rate: str = "13.35Mbps"
    buffer_bytes: int = BUFFER_BYTES  # default of --buffer (R1's bottleneck buffer)
    aqm: Optional[dict] = None  # the bottleneck's ``aqm`` table in the scenario file, if any


class MultiRtt(NamedTuple):
    """Our ``multi-rtt`` topology (crates/sim/src/topology.rs): pair *i* (from
    0) has the round trip ``base_rtt + step * i``; the bottleneck carries
    ``bottleneck_delay`` one way, the sender's access link the rest of half
    the round trip, the receiver's link none. Bulk flows (no file size) start
    uniformly in ``starts``; goodput is each flow's bytes over its life."""

    access_rate: str
    access_queue: str  # device queue of every access and receiver link (ours: 1000 packets)
    bottleneck_bps: int
    bottleneck_delay: str
    base_rtt_s: float
    step_s: float  # default of --step
    buffer_bytes: int  # default of --buffer (DropTail FIFO at R1's bottleneck egress)
    segment: int  # payload; with timestamps a full segment is segment + 52 B of IP packet
    cc: str  # ns-3 TypeId of the congestion control
    snd_buf: int
    rcv_buf: int
    design_rtt_s: float  # AWM's design round trip (gateway.awm.design_rtt)
    starts: tuple[float, float]
    stop_s: float


def _rate(bps: int) -> str:
    """A rate in bit/s as ns-3 reads it: ``"10Gbps"``, ``"13.35Mbps"``."""
    return f"{bps // 10**9}Gbps" if bps % 10**9 == 0 else f"{bps / 1e6:g}Mbps"


def _delay(ns: int) -> str:
    """A delay in ns as ns-3 reads it: ``"2.5ms"`` (exact: ns-3 keeps ns)."""
    return f"{ns / 1e6:g}ms"


def _secs(text: str) -> float:
    """A time of a scenario file in seconds, to the nanosecond."""
    return round(_parse("time", text), 9)


def _parse(kind: str, text: str) -> Any:
    """``text`` through the extension's parser of ``kind`` (time, rate,
    size); the extension is needed only when a scenario is read."""
    from netreturn import _native  # noqa: PLC0415

    return getattr(_native, f"parse_{kind}")(text)


def _resolved(name: str, sets: dict[str, str]) -> tuple[dict[str, dict], str, dict]:
    """Scenario ``name`` with ``sets`` through the one loader: its link
    directions by name, its bottleneck's name and its document."""
    from netreturn import scenarios  # noqa: PLC0415  (needs the extension: only when a scenario is read)

    m = scenarios.model(name, sets)
    return {ln["name"]: ln for ln in m["links"]}, m["bottleneck"], scenarios.load(name, sets)["document"]


def _dumbbell(name: str, sets: dict[str, str]) -> Dumbbell:
    """The EWT dumbbell of scenario file ``name`` (with ``sets``), as the
    loader resolves it: pair 0's access and receiver links, the bottleneck's
    rate, delay and buffer, the UDP CBR flow if any, the run's stop."""
    links, bottleneck, doc = _resolved(name, sets)
    acc, bn, rcv = links["left0->R1"], links[bottleneck], links["R2->right0"]
    udp = [t for t in doc["traffic"] if t["kind"] == "udp-cbr"]
    return Dumbbell(
        _rate(acc["rate_bps"]), _delay(acc["delay_ns"]), bn["rate_bps"], _delay(bn["delay_ns"]),
        _rate(rcv["rate_bps"]), _delay(rcv["delay_ns"]), udp=bool(udp),
        stop_s=_secs(doc["run"]["stop"]),
        udp_rate=_rate(_parse("rate", udp[0]["rate"])) if udp else Dumbbell._field_defaults["udp_rate"],
        buffer_bytes=bn["buffer_bytes"],
        aqm=doc["topology"]["bottleneck"].get("aqm") or None,
    )


#: ns-3's congestion controls by our ``[tcp] cc``. DCTCP (RFC 8257) turns
#: ECN on in ns-3 as in ours (TcpDctcp::Init sets UseEcn On and ECT(0)).
NS3_CC = {"newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic", "dctcp": "ns3::TcpDctcp", "bbr": "ns3::TcpBbr"}


def _multi_rtt(name: str) -> MultiRtt:
    """Our multi-rtt topology of scenario file ``name`` as the loader
    resolves it: pair i's round trip is twice its one-way path (access,
    bottleneck, receiver), so the base and the step come from pairs 0
    and 1. The send buffer is ns-3's own (ns-3's holds unacknowledged data,
    ours never blocks): 8 MB, more than any window of the AWM paper's
    Table 1 allows (30 Mb/s x 330 ms + 700 kB = 1.9 MB)."""
    links, bottleneck, doc = _resolved(name, {})
    bn, rcv = links[bottleneck], links["R2->right0"]
    rtt = [2 * (links[f"left{i}->R1"]["delay_ns"] + bn["delay_ns"] + rcv["delay_ns"]) / 1e9 for i in (0, 1)]
    kind, n = links["left0->R1"]["limit"]
    bulk = next(t for t in doc["traffic"] if t["kind"] == "tcp-bulk")
    return MultiRtt(
        _rate(links["left0->R1"]["rate_bps"]), f"{n}p" if kind == "packets" else f"{n}B",
        bn["rate_bps"], _delay(bn["delay_ns"]),
        rtt[0], round(rtt[1] - rtt[0], 9), bn["buffer_bytes"], int(doc["tcp"]["segment_size"]),
        NS3_CC[doc["tcp"]["cc"]], 8_000_000, _parse("size", doc["tcp"]["rcv_buf"])[1],
        _secs(doc["topology"]["bottleneck"]["gateway"]["awm"]["design_rtt"]),
        tuple(_secs(x) for x in bulk["start"]["uniform"]), _secs(doc["run"]["stop"]),
    )


def _without_flows(params: dict[str, str]) -> dict[str, str]:
    """The parameters but the flow count (run_ns3 takes that itself)."""
    return {n: v for n, v in params.items() if n != "flows"}


def scaled(k: int) -> dict[str, str]:
    """``scenarios/bench/scaled.toml``'s parameters at factor ``k``, as
    ``netreturn bench --scale`` sets them: access links at 10 Gb/s, the
    flows, bottleneck rate, buffer and UDP rate of scenario 2 times ``k``."""
    return {"flows": str(31 * k), "access_rate": "10Gbps", "bottleneck_rate": f"{45_000_000 * k}bps",
            "buffer": f"{BUFFER_BYTES * k}B", "udp_rate": f"{13_350_000 * k}bps"}


#: How each scenario the harness builds in ns-3 is read from its scenario
#: file (scenarios/ewt/*.toml: the EWT paper's Tables 4 and 5;
#: scenarios/awm/fairness.toml: the AWM paper's Table 1; bench/scaled-x<k>:
#: the scale benchmark), so the harness and our simulator cannot disagree
#: on a rate, delay, buffer or stop.
_BUILDERS: dict[str, Any] = {
    "ewt/scenario2": lambda: _dumbbell("ewt/scenario2", {}),
    "ewt/scenario1": lambda: _dumbbell("ewt/scenario1", {}),
    "awm/fairness": lambda: _multi_rtt("awm/fairness"),
    **{f"bench/scaled-x{k}": (lambda k=k: _dumbbell("bench/scaled", _without_flows(scaled(k)))) for k in (1, 10, 100)},
}
#: The scenarios built in ns-3, by our scenario names (``_BUILDERS``).
NAMES = tuple(_BUILDERS)
#: The scenarios read so far (``scenario_of``); ``main`` replaces one for
#: ``--receiver-delay``.
SCENARIOS: dict[str, Any] = {}


def scenario_of(name: str) -> Any:
    """The ``Dumbbell`` or ``MultiRtt`` of harness scenario ``name`` (one of
    ``NAMES``), read from its scenario file the first time."""
    if name not in SCENARIOS:
        SCENARIOS[name] = _BUILDERS[name]()
    return SCENARIOS[name]


#: ns-2-like senders (``ns2=True``, multi-rtt only), as docs/xcp.md's variant:
#: no SACK, initial window 2, an ACK per segment; RFC 6582 NewReno recovery
#: (ns-3's TcpClassicRecovery) with ns-3's dupACK scoreboard cleared when
#: recovery ends (ns3cxx/lossy.cc, as ``ns3lossy --renosack linux``).
NS2_TCP = {"sack": False, "initial_cwnd": 2, "delayed_ack_count": 1}
#: Queue disciplines at R1's bottleneck egress; ewt and awm are gateways
#: (ns3cxx/gateway.cc) over a DropTail FIFO of the same buffer.
QUEUES = ("droptail", "red", "ared", "ewt", "awm", "codel", "fq_codel", "pie", "fq_pie", "cobalt")
#: The dequeue-time AQMs (ours: crates/control/src/queue/aqm/) by ns-3 queue disc.
AQM_QUEUE_DISCS = {"codel": "ns3::CoDelQueueDisc", "fq_codel": "ns3::FqCoDelQueueDisc",
                   "pie": "ns3::PieQueueDisc", "fq_pie": "ns3::FqPieQueueDisc", "cobalt": "ns3::CobaltQueueDisc"}
#: Our AQMs' defaults, keyed as a link's ``aqm`` table: CoDelConfig,
#: PieConfig and FqConfig's ``Default`` (crates/control/src/queue/aqm/codel.rs,
#: pie.rs, fq.rs) and ``QueueKind::aqm`` (crates/control/src/registry.rs: FQ-CoDel
#: marks ECT packets by default as Linux; CoDel, PIE and FQ-PIE do not). Times in s.
_CODEL = {"ecn": False, "target": 0.005, "interval": 0.100}  # RFC 8289 section 4.4, 4.5
_PIE = {"ecn": False, "target": 0.015, "t_update": 0.015, "alpha": 0.125, "beta": 1.25,
        "max_burst": 0.150}  # RFC 8033 sections 4.2, 4.4, 5
_FQ = {"flows": 1024, "quantum": 1514}  # RFC 8290 section 5.2 and Linux
AQM_DEFAULTS = {"codel": _CODEL, "fq_codel": {**_CODEL, "ecn": True, **_FQ}, "pie": _PIE, "fq_pie": {**_PIE, **_FQ},
                # CobaltConfig: CoDel's target and interval; marks by default, as CAKE in Linux.
                "cobalt": {**_CODEL, "ecn": True}}
#: COBALT's BLUE settings (CobaltConfig, not keys of the ``aqm`` table): p_drop
#: steps of 1/256 up on overflow and 1/4096 down on an empty queue (Linux
#: sch_cake), and ns-3's BlueThreshold, the sojourn that also raises it.
COBALT_BLUE = {"Increment": repr(1 / 256), "Decrement": repr(1 / 4096), "BlueThreshold": "400ms", "Pdrop": "0"}
#: Settings of ours that are not keys of the ``aqm`` table, given to ns-3
#: too: CoDel's MAXPACKET (CoDelConfig::mtu, ns-3 MinBytes, default 1500),
#: PIE's MEAN_PKTSIZE (PieConfig::mean_packet, ns-3 MeanPktSize, default
#: 1000), PIE's ECN threshold (mark_ecn_th) and FQ's drop batch (FqConfig::drop_batch).
CODEL_MIN_BYTES = 1514
PIE_MEAN_PACKET = 1500
PIE_MARK_ECN_TH = 0.1
FQ_DROP_BATCH = 64
SEGMENT = 1458
SOCKET_BUF = 1_000_000
DEVICE_QUEUE = "100p"
# --aligned: ns-3's defaults where ours and ns-3's differ (docs/validation.md,
# "Aligned configuration"): 1000-packet device queues on access and receiver
# links, 1 MiB socket buffers, RED with ns-3's automatic thresholds, gentle on.
ALIGNED_SOCKET_BUF = 1 << 20
ALIGNED_DEVICE_QUEUE = "1000p"
#: RedQueueDisc attributes read back after a run besides the thresholds, weight and flags
#: (docs/validation.md, "ARED with ECN: the senders, not RED"): ARED's adaptation (Interval,
#: TargetDelay, Top, Bottom, LastSet, Rtt; Alpha and Beta have no attribute getter and are read
#: through GetAredAlpha / GetAredBeta), the link it computed them for, the idle packet size and
#: the variants that would change the rule (FengAdaptive, NLRED, Ns1Compat).
RED_READBACK = ("AdaptMaxP", "Interval", "TargetDelay", "Top", "Bottom", "LastSet", "Rtt",
                "LinkBandwidth", "LinkDelay", "IdlePktSize", "FengAdaptive", "NLRED", "Ns1Compat")
# EWT start threshold (the EWT paper's Table 3) and AWM's settings, the choices
# documented in docs/decisions.md §2.3 and crates/control/src/awm.rs: target T = B/2,
# beta = T / (4 R) with R = 200 ms + T / C (critical damping), floor one MTU =
# MSS + 40, swnd_0 = 10 MTU, upper bound B + 4 C R.
EWT_ST = BUFFER_BYTES * 29 // 97
AWM_DESIGN_RTT = 0.2
UDP_PAYLOAD = 1400
MTU = 1600
# IP packet of a full data segment: 20 (IP) + 20 (TCP) + 12 (timestamps) + 1458.
FULL_PACKET = 20 + 20 + 12 + SEGMENT
PPP_HEADER = 2
#: ns-3's TcpSocketState::TcpCongState_t, in order.
CONG_STATES = ("open", "disorder", "cwr", "recovery", "loss")


def red_auto_thresholds(bottleneck_bps: int, mean_packet: int = FULL_PACKET) -> tuple[float, float]:
    """ns-3 3.44 RED's automatic thresholds in bytes (MinTh = MaxTh = 0, or
    ARED): ``min = max(5, 0.005 s * C / 2)`` packets, ``max = 3 min``, C in
    packets of ``mean_packet`` bytes per second (red-queue-disc.cc,
    ``InitializeParams``)."""
    ptc = bottleneck_bps / (8.0 * mean_packet)
    lo = max(5.0, 0.005 * ptc / 2.0) * mean_packet
    return lo, 3 * lo
# --prr: ns-3's PRR as shipped, or NetreturnPrr with switches (64-bit
# product, one SMSS added per dupACK, one DoRecovery per ACK, PRR-SSRB,
# RecoverFS = FlightSize).
PRR_MODES = {
    # ns-3-dev's repaired TcpPrrRecovery (#1282, #1350, #1351) backported:
    # UpstreamPrr in ns3cxx/prr.cc, not a switch combination of NetreturnPrr.
    "upstream": None,
    "wide": (True, True, False, False, False, False),  # only the uint32 overflow fixed
    "wide-nobonus": (
        True,
        False,
        False,
        False,
        False,
        False,
    ),  # and no SMSS added per dupACK (still CRB, 2 calls, pipe)
    "rfc6937": (True, False, True, True, True, False),  # RFC 6937 PRR-SSRB, DeliveredData and RecoverFS as there
    # rfc6937 and no CUBIC increase on the ACK that ends recovery (ns-3 passes
    # it the whole cumulative ACK: cwnd = ssthresh + 1 MSS at every exit).
    "rfc6937-noexit": (True, False, True, True, True, True),
}


def _aqm_time(key: str, v: Any) -> float:
    """An ``aqm`` time in s: a number of seconds, or a string with its unit
    parsed by the one unit parser."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        return float(_parse("time", v))
    raise ValueError(f"aqm.{key}: {v!r} is not a time (e.g. '5ms')")


def aqm_settings(queue: str, table: Optional[dict] = None) -> dict[str, Any]:
    """Our AQM ``queue``'s settings: its defaults (``AQM_DEFAULTS``) with a
    link's ``aqm`` table over them, only the keys ``queue`` reads (as ours:
    each discipline ignores the others' keys). Times in s."""
    if queue not in AQM_DEFAULTS:
        raise ValueError(f"queue {queue!r} is not a dequeue-time AQM ns-3 has; one of {', '.join(AQM_DEFAULTS)}")
    out = dict(AQM_DEFAULTS[queue])
    for k, v in (table or {}).items():
        if k not in out:
            continue
        if k == "ecn":
            if not isinstance(v, bool):
                raise ValueError(f"aqm.ecn: {v!r} is not true or false")
            out[k] = v
        elif k in ("target", "interval", "t_update", "max_burst"):
            out[k] = _aqm_time(k, v)
        elif k == "quantum":
            out[k] = int(_parse("size", v)[1]) if isinstance(v, str) else int(v)
        else:
            out[k] = type(out[k])(v)
    return out


def ns3_aqm_attributes(queue: str, settings: dict[str, Any], buffer_bytes: int, seed: int,
                       full_packet: int = FULL_PACKET) -> dict[str, str]:
    """ns-3 3.44 attribute defaults (``"ns3::Type::Attribute"`` -> string
    value) that make its queue disc ``queue`` ours with ``settings``
    (``aqm_settings``) over a buffer of ``buffer_bytes``. ns-3's FQ-CoDel
    and FQ-PIE count their limit in packets only (their constructors fix
    the unit: a limit in bytes is refused and leaves 0 packets), so theirs
    is the buffer in full packets of ``full_packet`` bytes, rounded down
    (97 000 B: 64 packets, 96 640 B). FQ's quantum has no attribute
    (``SetFqQuantum`` in dumbbell.cc). FQ's hash salt is the seed, so flows
    collide in buckets differently per seed, as ours (which salts its hash
    from the run's seed)."""
    t = AQM_QUEUE_DISCS[queue]
    ns_ = lambda s: f"{round(s * 1e9)}ns"  # noqa: E731
    limit = f"{int(buffer_bytes) // full_packet}p" if queue.startswith("fq_") else f"{int(buffer_bytes)}B"
    a = {f"{t}::MaxSize": limit, f"{t}::UseEcn": str(bool(settings["ecn"])).lower()}
    if queue in ("codel", "fq_codel"):
        a[f"{t}::Target"] = ns_(settings["target"])
        a[f"{t}::Interval"] = ns_(settings["interval"])
        # FQ-CoDel's flow queues are CoDelQueueDiscs made with this default.
        a["ns3::CoDelQueueDisc::MinBytes"] = str(CODEL_MIN_BYTES)
    elif queue == "cobalt":
        # No CE threshold, no L4S mode (their defaults: off), as ours.
        a.update({f"{t}::Target": ns_(settings["target"]), f"{t}::Interval": ns_(settings["interval"]),
                  **{f"{t}::{k}": v for k, v in COBALT_BLUE.items()}})
    else:
        a.update({f"{t}::QueueDelayReference": ns_(settings["target"]), f"{t}::Tupdate": ns_(settings["t_update"]),
                  f"{t}::A": repr(float(settings["alpha"])), f"{t}::B": repr(float(settings["beta"])),
                  f"{t}::MaxBurstAllowance": ns_(settings["max_burst"]),
                  f"{t}::MeanPktSize": str(PIE_MEAN_PACKET), f"{t}::MarkEcnThreshold": repr(PIE_MARK_ECN_TH),
                  # RFC 8033's timestamp method, section 5.5's cap, no derandomization (ours and Linux).
                  f"{t}::UseDequeueRateEstimator": "false", f"{t}::UseCapDropAdjustment": "true",
                  f"{t}::UseDerandomization": "false"})
    if queue.startswith("fq_"):
        a.update({f"{t}::Flows": str(int(settings["flows"])), f"{t}::DropBatchSize": str(FQ_DROP_BATCH),
                  f"{t}::Perturbation": str(int(seed) & 0xFFFFFFFF)})
    return a


def available() -> bool:
    """True when the ``ns3`` PyPI package is installed (not imported here)."""
    try:
        return importlib.util.find_spec("ns3") is not None
    except (ImportError, ValueError):
        return False


def run_ns3(
    flows: int,
    queue: str = "droptail",
    seed: int = 1,
    file_bytes: int = 5_000_000,
    udp: Optional[bool] = None,
    stop_s: Optional[float] = None,
    *,
    flowmon: bool = True,
    timeout_s: Optional[float] = None,
    prr: str = "ns3",
    scenario: str = "ewt/scenario2",
    aligned: bool = False,
    step_s: Optional[float] = None,
    buffer_bytes: Optional[int] = None,
    ns2: bool = False,
    phase_ns: int = 0,
    cc: Optional[str] = None,
    ecn: bool = False,
    ecn_rfc3168: bool = False,
    dctcp_rfc8257: bool = False,
    fqcodel_linux: bool = False,
    fqcodel_linux_mark: bool = False,
    dctcp_echo: bool = False,
    ecn_cwr_rfc3168: bool = False,
) -> dict:
    """Run EWT scenario 2 in ns-3 3.44 in a subprocess and return its metrics.

    Keys follow our summary metric names: ``tcp_packet_loss_pct``, ``udp_loss_pct``,
    ``goodput_mean_mbps``, ``fct_mean_s``, ``fct_max_s``, ``jain_goodput``,
    ``tcp_efficiency_pct``, ``utilization``, ``flows_completed``,
    ``sim_time_s``, ``wall_s`` (wall time of ``Simulator::Run()`` only),
    ``events`` (``Simulator::GetEventCount()``), plus ``setup_s`` and
    ``process_wall_s`` and per-flow lists. ``flowmon=False`` drops the
    FlowMonitor (no loss ratios then) to time ns-3 alone. ``prr`` is ns-3's
    PRR as shipped (``"ns3"``) or repaired (a key of ``PRR_MODES``, e.g.
    ``"rfc6937"``, or ``"upstream"``, ns-3-dev's; docs/validation.md).
    ``scenario`` is one of ``NAMES`` (``udp`` and ``stop_s`` default to
    its own); ``aligned`` runs the aligned configuration (``ALIGNED_*``).
    ``tcp_data_loss_pct`` is the loss of data segments alone (FlowMonitor's
    sender-to-receiver flows), ``tcp_packet_loss_pct`` that of all TCP packets.
    ``buffer_bytes`` replaces the scenario's bottleneck buffer (EWT: 97 000 B;
    RED's thresholds and the gateways' follow it). ``scenario="awm/fairness"``
    builds our multi-rtt topology (``MultiRtt``; ``file_bytes`` unused, flows
    never finish): ``step_s`` is its RTT step (0.0: Table 1 case 1, 0.01: case
    2), ``ns2=True`` its ns-2-like senders (``NS2_TCP``). ``phase_ns > 0``
    randomizes the phase as ``run.phase`` does in ours: each link's one-way
    delay grows by ``_native.phase_offset(seed, link, phase_ns)``, the same
    offsets our simulator draws for that seed.
    ``queue`` may be one of our dequeue-time AQMs ns-3 also has (``codel``,
    ``fq_codel``, ``pie``, ``fq_pie``, ``cobalt``: ``AQM_QUEUE_DISCS``), set as ours
    (``aqm_settings``: our defaults, the scenario file's ``aqm`` table over
    them; ``ns3_aqm_attributes``); ``ecn_marks`` then counts the queue disc's
    CE marks and ``queue_drops_by_reason`` its drops after dequeue too.
    ``cc`` is the senders' congestion control (a key of ``NS3_CC``; default
    the scenario's: CUBIC on the EWT dumbbells), ``ecn=True`` negotiates ECN
    (``ns3::TcpSocketBase::UseEcn`` On, RFC 3168; DCTCP always does);
    ``ecn_reductions`` counts the senders' entries into CA_CWR; RED and ARED
    then mark too (``RedQueueDisc::UseEcn``, ours ``red.ecn``).
    ``ecn_rfc3168=True`` repairs ns-3's answer to ECE as RFC 3168 section
    6.1.2 and Linux: no CWR entered from fast recovery or after an RTO
    (``SetEcnRfc3168`` in ns3cxx/dumbbell.cc; docs/validation.md, "RED with
    ECN"). ``ecn_reductions_from`` counts the CWR entries by the state they
    left, ``cong_time_s`` the time the senders spent in each state.
    ``ecn_cwr_rfc3168=True`` repairs ns-3's ECN receiver as RFC 3168
    section 6.1.3 and Linux: a CWR ends the echo even when a CE mark arrived
    since the receiver's last ACK, where ns-3 3.44 keeps echoing past it
    (``EcnCwrRfc3168Rx`` in ns3cxx/dumbbell.cc); ``ecn_cwr_repairs`` counts
    the echoes it ended.
    ``dctcp_rfc8257=True`` (with ``cc="dctcp"``) repairs ns-3's DCTCP
    answer to a loss as RFC 8257 section 3.5 and Linux: halve, where
    ``TcpDctcp`` cuts by alpha / 2 (``NetreturnDctcpRfc8257`` in
    ns3cxx/dumbbell.cc).
    ``dctcp_echo=True`` (with ``dctcp_rfc8257``) also repairs ns-3's DCTCP
    receiver as RFC 8257 section 3.2 and Linux: at a change of the CE state
    the immediate ACK, with the old state, covers every segment that arrived
    before (ns-3 3.44's ends one segment short, a duplicate whose ECE its
    sender ignores), and only when a delayed ACK is pending;
    ``dctcp_echo_acks`` counts those ACKs.
    ``fqcodel_linux=True`` (``queue="fq_codel"``) repairs ns-3's FQ-CoDel
    as Linux: CoDel's "at most one MTU queued: no drop, no mark" test on the
    whole queue disc's backlog, where ns-3 tests each flow queue's own
    (``FqCoDelLinuxBacklog`` in ns3cxx/dumbbell.cc; docs/validation.md).
    ``fqcodel_linux_mark=True`` (implies ``fqcodel_linux``) also schedules
    CoDel's next signal after a mark in the dropping state from the previous
    due time, as Linux's ``codel_dequeue``, where ns-3 schedules it from
    the dequeue instant.
    Raises ``RuntimeError`` if the subprocess fails.
    """
    if queue not in QUEUES:
        raise ValueError(f"queue must be one of {', '.join(QUEUES)}, not {queue!r}")
    if prr != "ns3" and prr not in PRR_MODES:
        raise ValueError(f"prr must be 'ns3' or one of {', '.join(PRR_MODES)}, not {prr!r}")
    if scenario not in NAMES:
        raise ValueError(f"scenario must be one of {', '.join(NAMES)}, not {scenario!r}")
    sc = scenario_of(scenario)
    multi = isinstance(sc, MultiRtt)
    if not multi and (step_s is not None or ns2):
        raise ValueError(f"step_s and ns2 apply to the multi-rtt scenario (awm/fairness), not {scenario!r}")
    if ns2 and prr != "ns3":
        # InstallPrr would replace the classic (RFC 6582) recovery of the ns-2-like senders.
        raise ValueError(f"ns2 senders use classic recovery, not PRR: leave prr at 'ns3', not {prr!r}")
    if buffer_bytes is not None and buffer_bytes <= 0:
        raise ValueError(f"buffer_bytes must be positive, not {buffer_bytes!r}")
    if step_s is not None and step_s < 0:
        raise ValueError(f"step_s must be >= 0, not {step_s!r}")
    if cc is not None and cc not in NS3_CC:
        raise ValueError(f"cc must be one of {', '.join(NS3_CC)}, not {cc!r}")
    if queue in AQM_QUEUE_DISCS and not multi:
        aqm_settings(queue, sc.aqm)  # a bad aqm table fails here, before ns-3 starts
    udp = (sc.udp if not multi else False) if udp is None else udp
    if multi and udp:
        raise ValueError("the multi-rtt scenario has no UDP flow")
    stop_s = sc.stop_s if stop_s is None else stop_s
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--flows", str(int(flows)),
        "--queue", queue,
        "--seed", str(int(seed)),
        "--file-bytes", str(int(file_bytes)),
        "--stop", repr(float(stop_s)),
        "--scenario", scenario,
        "--json",
    ]
    if aligned:
        cmd.append("--aligned")
    if step_s is not None:
        cmd += ["--step", repr(float(step_s))]
    if buffer_bytes is not None:
        cmd += ["--buffer", str(int(buffer_bytes))]
    if ns2:
        cmd.append("--ns2")
    if phase_ns:
        cmd += ["--phase-ns", str(int(phase_ns))]
    if not udp:
        cmd.append("--no-udp")
    if not flowmon:
        cmd.append("--no-flowmon")
    if prr != "ns3":
        cmd += ["--prr", prr]
    if cc is not None:
        cmd += ["--cc", cc]
    if ecn:
        cmd.append("--ecn")
    if ecn_rfc3168:
        cmd.append("--ecn-rfc3168")
    if ecn_cwr_rfc3168:
        cmd.append("--ecn-cwr-rfc3168")
    if dctcp_rfc8257:
        if cc != "dctcp":
            raise ValueError(f"dctcp_rfc8257 repairs ns-3's DCTCP: give cc='dctcp', not {cc!r}")
        cmd.append("--dctcp-rfc8257")
    if dctcp_echo:
        if not dctcp_rfc8257:
            raise ValueError("dctcp_echo repairs the receiver of ns-3's repaired DCTCP: give dctcp_rfc8257=True")
        cmd.append("--dctcp-echo-rfc8257")
    for name, on in (("fqcodel_linux", fqcodel_linux), ("fqcodel_linux_mark", fqcodel_linux_mark)):
        if on:
            if queue != "fq_codel":
                raise ValueError(f"{name} repairs ns-3's FQ-CoDel: give queue='fq_codel', not {queue!r}")
            cmd.append("--" + name.replace("_", "-"))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    took = time.perf_counter() - t0
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = "\n".join((p.stderr or "").splitlines()[-20:])
        raise RuntimeError(f"ns-3 run failed (exit {p.returncode}): {' '.join(cmd)}\n{tail}")
    out = json.loads(lines[-1])
    out["process_wall_s"] = took
    return out


# --------------------------------------------------------------------------
# Everything below runs inside the subprocess.

#: The harness's C++ (trace sinks, PRR variants, the EWT/AWM gateways), in the
#: order cling compiles it; shipped in the package beside this file.
CXX_DIR = Path(__file__).resolve().with_name("ns3cxx")
CXX_FILES = ("prr.cc", "gateway.cc", "dumbbell.cc")


def cxx_sources() -> list[Path]:
    """Paths of the C++ files the harness compiles, in order (they must exist)."""
    return [CXX_DIR / f for f in CXX_FILES]


def _channel_delay_s(ns: Any, devices: Any) -> float:
    """One-way delay of the point-to-point channel under a device pair (read back)."""
    tv = ns.TimeValue()
    devices.Get(0).GetChannel().GetAttribute("Delay", tv)
    return float(tv.Get().GetSeconds())


def pair_subnet(side: str, i: int) -> str:
    """The /24 of pair ``i``'s sender (``side="left"``) or receiver link:
    10.1.i.0 and 10.3.i.0 up to 255 pairs (the bottleneck is 10.2.0.0), then
    10.(16 + i // 256).(i % 256).0 and 10.(128 + i // 256).(i % 256).0, up to
    28 672 pairs (dumbbell.cc's QDropped reads a sender's pair back)."""
    if not 0 <= i < 112 * 256:
        raise ValueError(f"flows: at most {112 * 256} pairs have addresses, not {i + 1}")
    if i < 256:
        return f"10.{1 if side == 'left' else 3}.{i}.0"
    return f"10.{(16 if side == 'left' else 128) + i // 256}.{i % 256}.0"


def _simulate(flows: int, queue: str, seed: int, file_bytes: int, udp: bool, stop_s: float,
              flowmon: bool = True, fixed_starts: Optional[list[float]] = None,
              trace: int = 0, log_flow: Optional[int] = None,
              log_window: tuple[float, float] = (0.0, 1e18), log_out: Optional[str] = None,
              prr: str = "ns3", scenario: str = "ewt/scenario2", aligned: bool = False,
              drop_log: Optional[str] = None, red_trace: Optional[str] = None,
              step_s: Optional[float] = None, buffer_bytes: Optional[int] = None,
              ns2: bool = False, phase_ns: int = 0, cc: Optional[str] = None,
              ecn: bool = False, attrs_over: Optional[list[tuple[str, str]]] = None,
              ecn_rfc3168: bool = False, dctcp_rfc8257: bool = False,
              fqcodel_linux: bool = False, fqcodel_linux_mark: bool = False,
              dctcp_echo: bool = False, ecn_cwr_rfc3168: bool = False,
              cong_log: Optional[str] = None) -> dict[str, Any]:
    t_setup = time.perf_counter()
    sc = scenario_of(scenario)
    multi = isinstance(sc, MultiRtt)
    socket_buf = ALIGNED_SOCKET_BUF if aligned else SOCKET_BUF
    device_queue = ALIGNED_DEVICE_QUEUE if aligned else DEVICE_QUEUE
    buffer = int(buffer_bytes) if buffer_bytes else sc.buffer_bytes
    segment = sc.segment if multi else SEGMENT
    step = (sc.step_s if step_s is None else float(step_s)) if multi else 0.0
    if multi:
        device_queue = sc.access_queue
        file_bytes = 0  # bulk: BulkSend without MaxBytes, no flow finishes
    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415  (heavy: cling parses ns-3's headers)

    # ns2: lossy.cc's hook clears ns-3's dupACK scoreboard when recovery ends.
    for f in cxx_sources() + ([CXX_DIR / "lossy.cc"] if ns2 else []):
        if not cppyy.cppdef(f.read_text()):
            raise RuntimeError(f"cling could not compile {f}")
    cpp = cppyy.gbl.netreturn_ns3

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(seed))

    # ---- TCP: ns-3 3.44 defaults made explicit, plus the paper's settings.
    sd = ns.Config.SetDefault
    cc_type = NS3_CC[cc] if cc else (sc.cc if multi else NS3_CC["cubic"])
    if dctcp_rfc8257:
        if cc_type != NS3_CC["dctcp"]:
            raise ValueError("--dctcp-rfc8257 repairs ns-3's DCTCP: give --cc dctcp")
        cc_type = str(cpp.DctcpRfc8257Register())  # TcpDctcp halving on a loss (dumbbell.cc)
    if dctcp_echo and not dctcp_rfc8257:
        raise ValueError("--dctcp-echo-rfc8257 repairs the receiver of --dctcp-rfc8257's DCTCP: give both")
    cpp.SetDctcpEchoRfc8257(bool(dctcp_echo))
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(cc_type)))
    recovery = "ns3::TcpClassicRecovery" if ns2 else "ns3::TcpPrrRecovery"
    sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName(recovery)))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(segment))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(sc.snd_buf if multi else socket_buf))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(sc.rcv_buf if multi else socket_buf))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(NS2_TCP["initial_cwnd"] if ns2 else 10))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(NS2_TCP["delayed_ack_count"] if ns2 else 2))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1.0)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(NS2_TCP["sack"] if ns2 else True))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(True))
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))
    # RFC 3168 ECN (ours: tcp.ecn); ns-3's default is Off. TcpDctcp turns it
    # on itself, with ECT(0) and DCTCP's receiver echo (RFC 8257 section 3.2).
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if ecn else "Off"))

    # ---- Bottleneck queue disc (R1 -> R2): set by attribute defaults so the
    # helper needs no variadic template call through cppyy.
    aqm: dict[str, Any] = {}
    if queue in AQM_QUEUE_DISCS:
        # Our AQM's settings, as ns-3 attributes (the FQ quantum is set on the
        # installed queue disc below).
        qd_type = AQM_QUEUE_DISCS[queue]
        aqm = aqm_settings(queue, None if multi else sc.aqm)
        aqm_attrs = ns3_aqm_attributes(queue, aqm, buffer, seed, FULL_PACKET - SEGMENT + segment)
        for name, value in aqm_attrs.items():
            sd(name, ns.StringValue(value))
    elif queue in ("droptail", "ewt", "awm"):
        qd_type = "ns3::FifoQueueDisc"
        sd("ns3::FifoQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{buffer}B")))
    else:
        qd_type = "ns3::RedQueueDisc"
        ared = queue == "ared"
        # RED: our Linux-like preset (B/12, B/4, gentle off); aligned: ns-3's
        # automatic thresholds (MinTh = MaxTh = 0) and gentle on. ARED = true
        # replaces thresholds and QW by automatic ones itself, gentle on.
        auto = ared or aligned
        sd("ns3::RedQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{buffer}B")))
        sd("ns3::RedQueueDisc::MinTh", ns.DoubleValue(0 if auto else buffer // 12))
        sd("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(0 if auto else buffer // 4))
        sd("ns3::RedQueueDisc::QW", ns.DoubleValue(0.002))
        sd("ns3::RedQueueDisc::LInterm", ns.DoubleValue(50.0))  # max_p = 1/50 (ARED: its start)
        sd("ns3::RedQueueDisc::Gentle", ns.BooleanValue(auto))
        sd("ns3::RedQueueDisc::Wait", ns.BooleanValue(False))
        sd("ns3::RedQueueDisc::UseHardDrop", ns.BooleanValue(True))
        # With --ecn, RED marks ECT packets instead of early drops, as ours
        # with red.ecn = true (ours_settings); forced drops stay drops (hard drop).
        sd("ns3::RedQueueDisc::UseEcn", ns.BooleanValue(bool(ecn)))
        sd("ns3::RedQueueDisc::ARED", ns.BooleanValue(ared))
        sd("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(FULL_PACKET - SEGMENT + segment))
        sd("ns3::RedQueueDisc::LinkBandwidth", ns.DataRateValue(ns.DataRate(sc.bottleneck_bps)))
        sd("ns3::RedQueueDisc::LinkDelay", ns.TimeValue(ns.Time(sc.bottleneck_delay)))

    # Diagnostics (--attr): attribute defaults over the harness's own.
    for name, value in attrs_over or []:
        sd(name, ns.StringValue(value))

    # ---- Topology: left_i -- R1 == R2 -- right_i.
    left, right, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    left.Create(flows)
    right.Create(flows)
    routers.Create(2)
    stack = ns.InternetStackHelper()
    stack.Install(left)
    stack.Install(right)
    stack.Install(routers)
    r1, r2 = routers.Get(0), routers.Get(1)

    def p2p(rate: str, delay: str, qsize: str) -> Any:
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        h.SetDeviceAttribute("Mtu", ns.UintegerValue(MTU))
        h.SetChannelAttribute("Delay", ns.StringValue(delay))
        h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(qsize))
        return h

    addr = ns.Ipv4AddressHelper()
    tch_none = ns.TrafficControlHelper()
    # Propagation round trip of each pair (multi-rtt: the sender's access link
    # carries what the bottleneck does not; the receiver's link nothing).
    bn_one_way = ns.Time(sc.bottleneck_delay).GetSeconds()

    def phased(link: str, one_way_s: float) -> str:
        """A link's delay in ns: as written, plus its phase offset (run.phase)."""
        off = 0
        if phase_ns:
            from netreturn import _native

            off = _native.phase_offset(int(seed), link, int(phase_ns))
        return f"{round(one_way_s * 1e9) + off}ns"

    if multi:
        rtts = [sc.base_rtt_s + step * i for i in range(flows)]
        access_delays = [max(r / 2 - bn_one_way, 0.0) for r in rtts]
        # Nanoseconds, as ours rounds (Time(rtt.nanos() / 2 - bottleneck)).
        access_of = [p2p(sc.access_rate, phased(f"left{i}->R1", d), device_queue) for i, d in enumerate(access_delays)]
        receivers_of = [p2p(sc.access_rate, phased(f"R2->right{i}", 0.0), device_queue) for i in range(flows)]
    else:
        a_s, r_s = ns.Time(sc.access_delay).GetSeconds(), ns.Time(sc.receiver_delay).GetSeconds()
        access_of = [p2p(sc.access_rate, phased(f"left{i}->R1", a_s), device_queue) for i in range(flows)]
        receivers_of = [p2p(sc.receiver_rate, phased(f"R2->right{i}", r_s), device_queue) for i in range(flows)]
    gateway = queue in ("ewt", "awm")
    cpp.GatewayRegister()
    tch_gw = ns.TrafficControlHelper()
    tch_gw.SetRootQueueDisc("ns3::NetreturnAckGatewayQueueDisc")
    left_if, right_if = [], []
    access_delay_read, receiver_delay_read = [], []  # channel delays read back from the objects
    named_devs = []  # (device, interface name as our simulator names it)
    for i in range(flows):
        d = access_of[i].Install(left.Get(i), r1)
        named_devs += [(d.Get(0), f"left{i}->R1"), (d.Get(1), f"R1->left{i}")]
        addr.SetBase(ns.Ipv4Address(pair_subnet("left", i)), ns.Ipv4Mask("255.255.255.0"))
        left_if.append(addr.Assign(d))
        access_delay_read.append(_channel_delay_s(ns, d))
        # Assign() installed FqCoDel on both ends: remove it, so the device's
        # own 100-packet DropTail queue is the queue.
        tch_none.Uninstall(d)
        if gateway:
            # R1's egress towards the sender carries the ACKs the gateway rewrites.
            tch_gw.Install(d.Get(1))
        d = receivers_of[i].Install(r2, right.Get(i))
        named_devs += [(d.Get(0), f"R2->right{i}"), (d.Get(1), f"right{i}->R2")]
        addr.SetBase(ns.Ipv4Address(pair_subnet("right", i)), ns.Ipv4Mask("255.255.255.0"))
        right_if.append(addr.Assign(d))
        receiver_delay_read.append(_channel_delay_s(ns, d))
        tch_none.Uninstall(d)

    # Bottleneck: the queue disc holds the buffer; the device queue under it
    # is one packet (else 100 more packets would hide below the queue disc).
    # The reverse direction (R2 -> R1, ACKs) is a plain 100p device queue.
    bn = p2p(f"{sc.bottleneck_bps}bps", phased("R1->R2", bn_one_way), device_queue).Install(r1, r2)
    bn_delay_read = _channel_delay_s(ns, bn)
    cpp.SetDeviceQueue(bn.Get(0), "1p")
    tch_bn = ns.TrafficControlHelper()
    tch_bn.SetRootQueueDisc(qd_type)
    qdiscs = tch_bn.Install(bn.Get(0))
    if "quantum" in aqm and not cpp.SetFqQuantum(qdiscs.Get(0), int(aqm["quantum"])):
        raise RuntimeError(f"{qd_type}: the quantum could not be set")
    fqcodel_linux = fqcodel_linux or fqcodel_linux_mark
    if fqcodel_linux:
        if queue != "fq_codel":
            raise ValueError(f"--fqcodel-linux repairs ns-3's FQ-CoDel: give --queue fq_codel, not {queue}")
        if not cpp.FqCoDelLinuxBacklog(qdiscs.Get(0), CODEL_MIN_BYTES, bool(fqcodel_linux_mark)):
            raise RuntimeError(f"{qd_type}: the FQ-CoDel backlog repair could not be connected")
    if aqm:
        # ns-3 refuses a limit in a unit its queue disc does not take, silently (the limit stays 0).
        limit = ns.QueueSizeValue()
        qdiscs.Get(0).GetAttribute("MaxSize", limit)
        if str(limit.Get()) != aqm_attrs[f"{qd_type}::MaxSize"]:
            raise RuntimeError(f"{qd_type}: MaxSize {aqm_attrs[qd_type + '::MaxSize']} did not apply "
                               f"(it reads {limit.Get()})")
    addr.SetBase(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bn)
    tch_none.Uninstall(bn.Get(1))
    # R2's egress towards R1 (ACKs) keeps the plain 100p DropTail device queue.
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    n_qdiscs = int(cpp.CountQueueDiscs())
    expected = 1 + (flows if gateway else 0)
    if n_qdiscs != expected:
        raise RuntimeError(f"expected {expected} queue discs (R1's bottleneck egress, and its access egresses "
                           f"with a gateway), found {n_qdiscs}")
    cpp.Reset(flows, file_bytes if file_bytes > 0 else (1 << 63))
    cpp.SetEcnRfc3168(bool(ecn_rfc3168))
    cpp.SetEcnCwrRfc3168(bool(ecn_cwr_rfc3168))
    if ecn_cwr_rfc3168:
        for i in range(flows):
            cpp.EcnCwrRfc3168Hook(right.Get(i))  # the receivers' IP input (dumbbell.cc)
    if ns2:
        cpp.LossyReset(False, True)  # (not Westwood+, clear the dupACK scoreboard at recovery's end)
    if prr == "upstream":
        cpp.SetPrrUpstream()
    elif prr != "ns3":
        # (wide, dupACK bonus, one DoRecovery per ACK, SSRB, FlightSize): see NetreturnPrr.
        cpp.SetPrrMode(*PRR_MODES[prr])
    if gateway:
        c_bps = sc.bottleneck_bps / 8.0
        target = buffer / 2.0
        rtt = (sc.design_rtt_s if multi else AWM_DESIGN_RTT) + target / c_bps
        mtu = segment + 40.0
        cpp.GatewaySetup(
            1 if queue == "ewt" else 2,
            qdiscs.Get(0),
            float(buffer),
            float(buffer * EWT_ST // BUFFER_BYTES),
            target,
            target / (4.0 * rtt),
            mtu,
            10.0 * mtu,
            buffer + 4.0 * c_bps * rtt,
            segment,
        )  # MSS when the SYN has no MSS option (ns-3 sends none), as ours
    cpp.TraceFlows(min(trace, flows))
    cpp.ConnectBottleneck(bn.Get(0))
    cpp.ConnectQueueDisc(qdiscs.Get(0))
    if red_trace and queue in ("red", "ared"):
        cpp.TraceRed(qdiscs.Get(0))
    elif red_trace:
        cpp.TraceFifo(qdiscs.Get(0))  # the FIFO's arrivals and departures (verdict 4)
    if log_flow is not None:
        if not 0 <= log_flow < flows:
            raise ValueError(f"--log-flow {log_flow}: there are {flows} flows")
        cpp.LogFlow(int(log_flow), float(log_window[0]), float(log_window[1]),
                    left_if[log_flow].GetAddress(0), right_if[log_flow].GetAddress(1), right.Get(log_flow))
        for dev, name in named_devs + [(bn.Get(0), "R1->R2"), (bn.Get(1), "R2->R1")]:
            cpp.LogDeviceDrops(dev, name)
        cpp.LogQueueDiscDrops(qdiscs.Get(0), "R1->R2")

    # ---- Applications.
    start = ns.CreateObject[ns.UniformRandomVariable]()
    start.SetAttribute("Min", ns.DoubleValue(sc.starts[0] if multi else 1.0))
    start.SetAttribute("Max", ns.DoubleValue(sc.starts[1] if multi else 8.0))
    port = 5000
    starts = []
    for i in range(flows):
        dst = right_if[i].GetAddress(1)
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sapp = sink.Install(right.Get(i))
        sapp.Start(ns.Seconds(0.0))
        cpp.ConnectSink(i, sapp.Get(0))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst, port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(file_bytes))  # 0: no limit
        bulk.SetAttribute("SendSize", ns.UintegerValue(segment))
        bapp = bulk.Install(left.Get(i))
        t = start.GetValue()
        if fixed_starts is not None:
            t = fixed_starts[i]
        starts.append(t)
        bapp.Start(ns.Seconds(t))
        cpp.ScheduleHook(i, bapp.Get(0), t)
        if ns2:
            cpp.ScheduleLossyHook(bapp.Get(0), t)

    udp_port = 6000
    if udp and flows > 0:
        usink = ns.PacketSinkHelper("ns3::UdpSocketFactory",
                                    ns.InetSocketAddress(ns.Ipv4Address.GetAny(), udp_port).ConvertTo())
        usink.Install(right.Get(0)).Start(ns.Seconds(0.0))
        onoff = ns.OnOffHelper("ns3::UdpSocketFactory",
                               ns.InetSocketAddress(right_if[0].GetAddress(1), udp_port).ConvertTo())
        onoff.SetAttribute("DataRate", ns.DataRateValue(ns.DataRate(sc.udp_rate)))
        onoff.SetAttribute("PacketSize", ns.UintegerValue(UDP_PAYLOAD))
        onoff.SetAttribute("OnTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=1e9]"))
        onoff.SetAttribute("OffTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=0]"))
        onoff.Install(left.Get(0)).Start(ns.Seconds(0.0))

    monitor = helper = None
    if flowmon:
        helper = ns.FlowMonitorHelper()
        monitor = helper.InstallAll()

    ns.Simulator.Stop(ns.Seconds(stop_s))  # cap; the last sink stops it earlier
    setup_s = time.perf_counter() - t_setup
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    now = ns.Simulator.Now().GetSeconds()
    events = int(ns.Simulator.GetEventCount())

    # ---- Metrics (definitions of crates/sim/src/metrics.rs).
    fcts, goodputs, effs, per_flow = [], [], [], []
    recoveries = rtos = rto_expiries = cwrs = 0
    for i in range(flows):
        done = float(cpp.Done(i))
        rx = int(cpp.Rx(i))
        fct = done - starts[i] if done >= 0 else math.nan
        active = fct if done >= 0 else max(now - starts[i], 0.0)
        gp = rx * 8 / active / 1e6 if active > 0 else 0.0
        tx, retx = int(cpp.Tx(i)), int(cpp.Retx(i))
        eff = (tx - min(retx, tx)) / tx * 100 if tx else 100.0
        if done >= 0:
            fcts.append(fct)
        goodputs.append(gp)
        effs.append(eff)
        rec, rto = int(cpp.Recoveries(i)), int(cpp.Rtos(i))
        recoveries += rec
        rtos += rto
        rto_expiries += int(cpp.RtoExpiries(i))
        cwrs += int(cpp.Cwrs(i))
        per_flow.append({"flow": i, "recoveries": rec, "timeouts": rto, "rto_expiries": int(cpp.RtoExpiries(i)),
                         "bottleneck_data_drops": int(cpp.DataDrops(i)),
                         "bottleneck_retx_drops": int(cpp.RetxDrops(i)),
                         "start_s": starts[i], "fct_s": fct, "goodput_mbps": gp,
                         # Propagation round trip as built (channel delays read back).
                         "rtt_prop_s": 2 * (access_delay_read[i] + bn_delay_read + receiver_delay_read[i]),
                         "bytes_delivered": rx, "bytes_sent": tx, "bytes_retransmitted": retx,
                         "efficiency_pct": eff})
        if i < trace:
            n = int(cpp.TraceLen(i))
            per_flow[-1]["trace"] = {
                "time_s": [float(cpp.TraceT(i, k)) for k in range(n)],
                "cwnd": [float(cpp.TraceCwnd(i, k)) for k in range(n)],
                "ssthresh": [float(cpp.TraceSsthresh(i, k)) for k in range(n)],
            }

    out: dict[str, Any] = {
        "simulator": "ns-3 3.44 (PyPI ns3==3.44.post0, cppyy bindings)",
        "prr": prr,
        "scenario": scenario,
        "aligned": aligned,
        "flows": flows, "queue": queue, "seed": seed, "file_bytes": file_bytes, "udp": udp,
        "buffer_bytes": buffer, "segment": segment, "step_s": step, "ns2": ns2,
        "tcp_flows": flows,
        "flows_completed": len(fcts),
        "goodput_mean_mbps": mean(goodputs),
        "fct_mean_s": mean(fcts),
        "fct_max_s": max(fcts) if fcts else math.nan,
        "jain_goodput": jain(goodputs),
        "tcp_efficiency_pct": mean(effs),
        # Span = first start (UDP at 0 s, else the first TCP start) to the end.
        "utilization": ((int(cpp.BnBytes()) - PPP_HEADER * int(cpp.BnPackets())) * 8
                        / (sc.bottleneck_bps * (now - (0.0 if udp else min(starts)))))
        if now > 0 else math.nan,
        "sim_time_s": now,
        "wall_s": wall,
        "setup_s": setup_s,
        "events": events,
        # Entries into fast recovery (our "fast_recoveries") and RTO expiries.
        "fast_recoveries": recoveries,
        # Of them, those entered before SND.UNA passed the recovery point of
        # the flow's last RTO (HighData then; RFC 6675 section 5.1), which
        # Linux and ours do not enter (dumbbell.cc, SockCong).
        "fast_recoveries_below_rto_point": sum(int(cpp.RecoveriesBelowRtoPoint(i)) for i in range(flows)),
        # Of them, those entered on an ACK that advanced SND.UNA (a duplicate
        # ACK by RFC 6675 section 2 when it carries new SACK blocks; ours
        # counts only ACKs that leave SND.UNA where it was).
        "fast_recoveries_on_advancing_acks": sum(int(cpp.RecoveriesOnAdvancingAck(i)) for i in range(flows)),
        "timeouts": rtos,
        # Every expiry, backoffs included, as ours counts `timeouts`.
        "rto_expiries": rto_expiries,
        "cc": cc_type,
        "ecn": bool(ecn or cc_type == NS3_CC["dctcp"] or dctcp_rfc8257),
        # Window reductions on ECE (entries into CA_CWR), as our ecn_reductions,
        # and the bottleneck queue disc's CE marks, as our ecn_marks.
        "ecn_reductions": cwrs,
        "ecn_marks": int(cpp.Marks()),
        # The CWR entries by the state they left, the senders' time in each
        # state (s, summed over flows until their file is delivered), and
        # the ECE flags --ecn-rfc3168 withheld in fast recovery or CA_LOSS.
        "ecn_reductions_from": {n: int(cpp.CwrFrom(k)) for k, n in enumerate(CONG_STATES)},
        "cong_time_s": {n: float(cpp.CongTime(k, now)) for k, n in enumerate(CONG_STATES)},
        "ecn_rfc3168": bool(ecn_rfc3168),
        "dctcp_rfc8257": bool(dctcp_rfc8257),
        # --ecn-cwr-rfc3168: CWR segments that ended an echo ns-3 would keep.
        "ecn_cwr_rfc3168": bool(ecn_cwr_rfc3168),
        "ecn_cwr_repairs": int(cpp.EcnCwrRfc3168Repairs()),
        # The receivers' immediate ACKs at a change of the CE state (--dctcp-echo-rfc8257).
        "dctcp_echo": bool(dctcp_echo),
        "dctcp_echo_acks": int(cpp.DctcpEchoAcksSent()),
        # ECE flags the senders' ACK processing saw, and of them those on an
        # ACK that left SND.UNA where it was (ns-3's sender ignores these).
        "ece_acks": int(cpp.EceAcks()),
        "ece_acks_not_advancing": int(cpp.EceNotAdvancing()),
        # Of them, those reaching a sender in CA_OPEN or CA_DISORDER, where an
        # ECE on any ACK starts a reduction by RFC 3168 section 6.1.2 (and
        # ours' default; `tcp.ece_on_new_ack_only` is ns-3's rule), and the
        # fast recoveries entered before SND.UNA passed HighData at such an
        # ignored ECE (a reduction started there would still be running).
        "ece_acks_ignored_open": int(cpp.EceIgnoredOpen()),
        "fast_recoveries_after_ignored_ece": int(cpp.RecoveriesAfterIgnoredEce()),
        # FQ-CoDel's MAXPACKET test on the whole backlog (Linux), and how
        # often a flow queue's threshold was set for it.
        "fqcodel_linux": bool(fqcodel_linux),
        "fqcodel_linux_sets": int(cpp.FqCoDelLinuxSets()) if fqcodel_linux else 0,
        "fqcodel_linux_mismatches": int(cpp.FqCoDelLinuxMismatches()) if fqcodel_linux else 0,
        # Last packets of a flow queue the repair could not drop (ns-3 would
        # crash: FqCoDelLinuxKept in dumbbell.cc), and, with the mark repair,
        # the marks whose next due time was moved as Linux's.
        "fqcodel_linux_kept": int(cpp.FqCoDelLinuxKept()) if fqcodel_linux else 0,
        "fqcodel_linux_mark": bool(fqcodel_linux_mark),
        "fqcodel_linux_mark_fixes": int(cpp.FqCoDelLinuxMarkFixes()) if fqcodel_linux_mark else 0,
        "ece_withheld": int(cpp.EceWithheld()),
        # Data segments dropped at the bottleneck queue disc, and those of
        # them that were retransmissions (a copy of that sequence number
        # had been sent before).
        "bottleneck_data_drops": sum(p["bottleneck_data_drops"] for p in per_flow),
        "bottleneck_retx_drops": sum(p["bottleneck_retx_drops"] for p in per_flow),
        # Data segments sent at one instant by one sender, over all flows: {size: events}.
        "send_bursts": {int(k): int(v) for k, v in (kv.split(":") for kv in str(cpp.SendBursts()).split(",") if kv)},
        # Queue disc backlog only (the 1-packet device queue under it is not counted).
        "queue_mean_bytes": float(cpp.QueueIntegral(now)) / now if now > 0 else math.nan,
        # The device queue under it (at most one packet, IP bytes): ours'
        # backlog counts that packet too, so ours' queue_mean_bytes is the sum.
        "queue_device_mean_bytes": float(cpp.DeviceQueueIntegral(now)) / now if now > 0 else math.nan,
        "queue_max_bytes": int(cpp.QueueMax()),
        # Mean backlog per 1-s bin (the last bin closes at the last change).
        "queue_1s_bins": [float(cpp.QueueBin(b)) for b in range(int(cpp.QueueBins()))],
        "per_flow": per_flow,
    }
    qd = qdiscs.Get(0)
    st = qd.GetStats()
    out["queue_drops"] = int(st.nTotalDroppedPackets)
    # Drops by QueueDisc reason ("Unforced drop" = RED early, "Forced drop",
    # "Queue disc limit exceeded" = tail), as our iface drops by reason.
    out["queue_drops_by_reason"] = {str(k): int(v) for k, v in st.nDroppedPacketsBeforeEnqueue}
    # Drops at the head (CoDel: "Target exceeded drop"; FQ's fattest flow:
    # "Overlimit drop") and CE marks by reason ("Target exceeded mark", "Unforced mark").
    out["queue_drops_after_dequeue_by_reason"] = {str(k): int(v) for k, v in st.nDroppedPacketsAfterDequeue}
    out["queue_marks_by_reason"] = {str(k): int(v) for k, v in st.nMarkedPackets}
    if drop_log:
        # One line per drop at the bottleneck queue disc: time, reason, backlog, size,
        # TCP flow of a data segment (-1: UDP, ACK or other), 1 if that segment was a
        # retransmission (a copy of its sequence number had been sent before); and every
        # CE mark there the same way (its reason ends in "mark").
        with open(drop_log, "w") as f:
            for k in range(int(cpp.QDropLen())):
                f.write(f"{float(cpp.QDropT(k)):.6f}\t{cpp.QDropWhy(k)}\t{int(cpp.QDropBacklog(k))}\t{int(cpp.QDropSize(k))}"
                        f"\t{int(cpp.QDropFlow(k))}\t{int(cpp.QDropRetx(k))}\n")
    if cong_log:
        # One line per congestion-state change of any flow: time, flow, the
        # state left, the state entered (CONG_STATES), SND.UNA, HighData and
        # the bytes SACKed then; and per RTO expiry (backoffs included),
        # "rto" for both states.
        def state(c: str) -> str:
            return "rto" if int(c) < 0 else CONG_STATES[int(c)]

        with open(cong_log, "w") as f:
            for k in range(int(cpp.CongLogLen())):
                t, flow, old, new, una, high, sacked = str(cpp.CongLogLine(k)).split("\t")
                f.write(f"{t}\t{flow}\t{state(old)}\t{state(new)}\t{una}\t{high}\t{sacked}\n")
    if red_trace:
        # One line per arrival, as netreturn-sim --red-trace: iface, time, backlog
        # before it, RED's average, max_p, verdict (0 accepted, 1 early, 2 forced, 3 tail, 4 accepted and marked CE).
        # A FIFO queue disc (droptail, ewt, awm): average = backlog, max_p 0, and
        # a line per departure too (verdict 4, backlog after it).
        out["red_trace_lines"] = int(cpp.RedTraceWrite(red_trace))
    out["queue_discs_installed"] = n_qdiscs
    # Read the bottleneck queue disc's attributes back (proof they applied).
    attrs: dict[str, Any] = {}
    qs = ns.QueueSizeValue()
    qd.GetAttribute("MaxSize", qs)
    attrs["MaxSize"] = str(qs.Get())
    if queue in ("red", "ared"):
        for name in ("MinTh", "MaxTh", "QW", "LInterm"):
            v = ns.DoubleValue()
            qd.GetAttribute(name, v)
            attrs[name] = v.Get()
        for name in ("Gentle", "Wait", "UseHardDrop", "UseEcn", "ARED"):
            v = ns.BooleanValue()
            qd.GetAttribute(name, v)
            attrs[name] = bool(v.Get())
        v = ns.UintegerValue()
        qd.GetAttribute("MeanPktSize", v)
        attrs["MeanPktSize"] = int(v.Get())
        # The rest of RED's and ARED's settings as the object holds them after
        # RedQueueDisc::InitializeParams (Bottom is computed there when 0), in
        # their string form; a name this ns-3 lacks is left out.
        for name in RED_READBACK:
            v = ns.StringValue()
            if qd.GetAttributeFailSafe(name, v):
                attrs[name] = str(v.Get())
        # Alpha and Beta have setters only (no attribute getter): the public getters.
        red = ns.DynamicCast[ns.RedQueueDisc](qd)
        attrs["Alpha"], attrs["Beta"] = float(red.GetAredAlpha()), float(red.GetAredBeta())
    if aqm:
        # The AQM's attributes as ns-3 holds them, and the settings of ours they came from.
        for full in aqm_attrs:
            name = full.split("::")[-1]
            if full.startswith(qd_type + "::") and name != "MaxSize":
                v = ns.StringValue()
                qd.GetAttribute(name, v)  # any attribute reads back as its string form
                attrs[name] = str(v.Get())
        if "quantum" in aqm:
            attrs["Quantum"] = int(cpp.GetFqQuantum(qd))
        attrs["aqm"] = aqm
    out["queue_disc"] = {"type": qd_type, **attrs}
    if gateway:
        out["gateway"] = {"acks": int(cpp.GatewayAcks()), "rewritten": int(cpp.GatewayRewritten()),
                          "handshake_not_seen": int(cpp.GatewayUnknown()), "awm_events": int(cpp.GatewayAwmEvents()),
                          "active_at_end": int(cpp.GatewayActive()), "swnd_at_end": float(cpp.GatewaySwnd())}
    out["flowmon"] = bool(flowmon)
    out["bottleneck_max_packet_bytes"] = int(cpp.BnMax()) - PPP_HEADER

    if monitor is not None:
        monitor.CheckForLostPackets()
        classifier = helper.GetClassifier()
        classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](classifier)
        stats = monitor.GetFlowStats()
        trecv = tlost = urecv = ulost = usent = drecv = dlost = ack_lost = 0
        ack_drops: dict[int, int] = {}
        src_index = {str(left_if[i].GetAddress(0)): i for i in range(flows)}
        for fid, fs in stats:
            tup = classifier.FindFlow(fid)
            proto = tup.protocol
            if proto == 6 and str(tup.sourceAddress) in src_index:
                # Data direction of TCP flow i: packets lost (drops anywhere).
                per_flow[src_index[str(tup.sourceAddress)]]["packets_lost"] = int(fs.lostPackets)
                drecv += fs.rxPackets
                dlost += fs.lostPackets
            if proto == 6:
                trecv += fs.rxPackets
                tlost += fs.lostPackets
                if str(tup.sourceAddress) not in src_index:
                    # ACK direction: drops FlowMonitor saw, by Ipv4FlowProbe::DropReason.
                    ack_lost += fs.lostPackets
                    for reason, n in enumerate(fs.packetsDropped):
                        ack_drops[reason] = ack_drops.get(reason, 0) + int(n)
            elif proto == 17:
                urecv += fs.rxPackets
                ulost += fs.lostPackets
                usent += fs.txPackets
        out["tcp_packet_loss_pct"] = tlost / (trecv + tlost) * 100 if trecv + tlost else 0.0
        # Data segments only (sender -> receiver flows), as our tcp_data_loss_pct.
        out["tcp_data_loss_pct"] = dlost / (drecv + dlost) * 100 if drecv + dlost else 0.0
        out["udp_loss_pct"] = (ulost / (urecv + ulost) * 100 if urecv + ulost else 0.0) if udp else math.nan
        out["udp_efficiency_pct"] = (urecv / usent * 100 if usent else 100.0) if udp else math.nan
        out["tcp_ack_packets_lost"] = ack_lost
        out["tcp_ack_drops_by_reason"] = {str(k): v for k, v in sorted(ack_drops.items()) if v}
        out["tcp_packets_received"] = trecv
        out["tcp_packets_lost"] = tlost
        out["udp_packets_received"] = urecv
        out["udp_packets_lost"] = ulost
    else:
        out["tcp_packet_loss_pct"] = out["tcp_data_loss_pct"] = out["udp_loss_pct"] = math.nan
    if log_flow is not None and log_out:
        out["log_lines"] = int(cpp.LogWrite(log_out))
    ns.Simulator.Destroy()
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="EWT scenario 2 in ns-3 3.44 (reference run)")
    ap.add_argument("--flows", type=int, default=31)
    ap.add_argument("--queue", choices=list(QUEUES), default="droptail")
    ap.add_argument("--scenario", choices=list(NAMES), default="ewt/scenario2")
    ap.add_argument("--aligned", action="store_true",
                    help="aligned configuration: 1000-packet device queues, 1 MiB socket buffers, "
                         "RED with ns-3's automatic thresholds and gentle on")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--file-bytes", type=int, default=5_000_000)
    ap.add_argument("--stop", type=float, default=None, help="cap on simulated time, s (default: the scenario's)")
    ap.add_argument("--no-udp", action="store_true")
    ap.add_argument("--no-flowmon", action="store_true", help="no FlowMonitor (timing only; no loss ratios)")
    ap.add_argument("--starts", default=None,
                    help="comma-separated start times in s, one per flow, instead of uniform [1, 8] s draws")
    ap.add_argument("--trace", type=int, default=0, metavar="K",
                    help="record cwnd and ssthresh of the first K flows at every change (per_flow[i]['trace'])")
    ap.add_argument("--log-flow", type=int, default=None, metavar="F",
                    help="packet-level log of flow F (segments sent, drops, arrivals, RTOs, sender state), "
                         "in the format of netreturn-sim --log-flow")
    ap.add_argument("--log-window", default=None, metavar="T0,T1", help="log only between T0 and T1 s")
    ap.add_argument("--log-out", default=None, metavar="PATH", help="file for the --log-flow lines")
    ap.add_argument("--prr", choices=["ns3", *PRR_MODES], default="ns3",
                    help="PRR: ns-3 3.44's TcpPrrRecovery (default), 'wide' = the same without its uint32 "
                         "overflow, 'wide-nobonus' = also without the SMSS it adds per dupACK, "
                         "'rfc6937' = RFC 6937 PRR-SSRB, 'upstream' = ns-3-dev's repaired TcpPrrRecovery "
                         "(ns3cxx/prr.cc)")
    ap.add_argument("--drop-log", default=None, metavar="PATH",
                    help="write every drop and CE mark of the bottleneck queue disc (time, reason, backlog, size, TCP "
                         "flow or -1, 1 if a retransmission) to PATH")
    ap.add_argument("--cong-log", default=None, metavar="PATH",
                    help="write every congestion-state change of every TCP flow (time, flow, state left, state "
                         "entered, SND.UNA, HighData, bytes SACKed) and every RTO expiry (states 'rto') to PATH")
    ap.add_argument("--red-trace", default=None, metavar="PATH",
                    help="RED/ARED: write every arrival at the bottleneck queue disc (time, backlog before it, "
                         "the average m_qAvg, max_p m_curMaxP, verdict) to PATH, as netreturn-sim --red-trace; "
                         "a FIFO (droptail, ewt, awm): average = backlog, max_p 0, plus departures (verdict 4)")
    ap.add_argument("--receiver-delay", default=None, metavar="D",
                    help="one-way delay of the receivers' links (e.g. 1.0625ms) instead of the scenario's: "
                         "moves the phase of the deterministic delays (docs/validation.md, phase effects)")
    ap.add_argument("--buffer", type=int, default=None, metavar="BYTES",
                    help="bottleneck buffer in bytes (default: the scenario's, 97000 for EWT, 700000 for awm/fairness)")
    ap.add_argument("--step", type=float, default=None, metavar="S",
                    help="awm/fairness: round-trip step between pairs, s (0: Table 1 case 1; default 0.01: case 2)")
    ap.add_argument("--ns2", action="store_true",
                    help="awm/fairness: ns-2-like senders (no SACK, initial window 2, an ACK per segment)")
    ap.add_argument("--phase-ns", type=int, default=0, metavar="NS",
                    help="phase randomization as run.phase in ours: each link's delay grows by the seed's offset, "
                         "uniform in [0, NS) ns (netreturn._native.phase_offset)")
    ap.add_argument("--cc", choices=list(NS3_CC), default=None,
                    help="the senders' congestion control (default: the scenario's; CUBIC on the EWT dumbbells)")
    ap.add_argument("--ecn", action="store_true",
                    help="negotiate ECN (RFC 3168; ns3::TcpSocketBase::UseEcn On); DCTCP always does")
    ap.add_argument("--ecn-rfc3168", action="store_true",
                    help="repair ns-3's answer to ECE as RFC 3168 section 6.1.2 and Linux: a sender in fast recovery "
                         "or after an RTO does not enter CWR (ns-3 3.44 cuts again and leaves loss recovery)")
    ap.add_argument("--ecn-cwr-rfc3168", action="store_true",
                    help="repair ns-3's ECN receiver as RFC 3168 section 6.1.3 and Linux: a CWR ends the echo even "
                         "when a CE mark arrived since the last ACK (ns-3 3.44 keeps echoing past it)")
    ap.add_argument("--dctcp-rfc8257", action="store_true",
                    help="with --cc dctcp: repair ns-3's DCTCP answer to a loss as RFC 8257 section 3.5 and Linux "
                         "(halve; ns-3 3.44's TcpDctcp cuts by alpha / 2 on a loss too)")
    ap.add_argument("--dctcp-echo-rfc8257", action="store_true",
                    help="with --dctcp-rfc8257: repair ns-3's DCTCP receiver as RFC 8257 section 3.2 and Linux: the "
                         "immediate ACK at a change of the CE state covers every segment that arrived before "
                         "(ns-3 3.44's ends one segment short, a duplicate whose ECE its sender ignores)")
    ap.add_argument("--fqcodel-linux", action="store_true",
                    help="with --queue fq_codel: repair ns-3's FQ-CoDel as Linux: CoDel's 'at most one MTU queued: "
                         "no drop, no mark' test on the whole queue disc's backlog (ns-3 3.44: each flow queue's)")
    ap.add_argument("--fqcodel-linux-mark", action="store_true",
                    help="with --queue fq_codel: --fqcodel-linux, and CoDel's next signal after a mark in the "
                         "dropping state scheduled from the previous due time as Linux's codel_dequeue (ns-3 3.44: "
                         "from the dequeue instant)")
    ap.add_argument("--attr", action="append", default=[], metavar="NS3::TYPE::ATTR=VALUE",
                    help="diagnostics: an ns-3 attribute default set after the harness's own (repeatable), e.g. "
                         "ns3::CoDelQueueDisc::MinBytes=0")
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    a = ap.parse_args(argv)
    if a.receiver_delay:
        if not isinstance(scenario_of(a.scenario), Dumbbell):
            ap.error(f"--receiver-delay applies to the EWT dumbbells, not --scenario {a.scenario}")
        SCENARIOS[a.scenario] = SCENARIOS[a.scenario]._replace(receiver_delay=a.receiver_delay)
    starts = [float(x) for x in a.starts.split(",")] if a.starts else None
    if starts is not None and len(starts) != a.flows:
        ap.error(f"--starts gives {len(starts)} times for {a.flows} flows")
    window = (0.0, 1e18)
    if a.log_window:
        try:
            t0, t1 = (float(x) for x in a.log_window.split(","))
        except ValueError:
            ap.error("--log-window needs T0,T1 in seconds")
        window = (t0, t1)
    if a.log_flow is not None and not a.log_out:
        ap.error("--log-flow needs --log-out PATH")
    attrs_over = []
    for kv in a.attr:
        name, sep, value = kv.partition("=")
        if not sep or not name.startswith("ns3::") or name.count("::") != 2:
            ap.error(f"--attr {kv!r}: give ns3::Type::Attribute=value")
        attrs_over.append((name, value))
    sc = scenario_of(a.scenario)
    multi = isinstance(sc, MultiRtt)
    if not multi and (a.step is not None or a.ns2):
        ap.error("--step and --ns2 apply to --scenario awm/fairness")
    stop = sc.stop_s if a.stop is None else a.stop
    udp = (not multi) and sc.udp and not a.no_udp
    out = _simulate(a.flows, a.queue, a.seed, a.file_bytes, udp, stop, not a.no_flowmon, starts,
                    a.trace, a.log_flow, window, a.log_out, a.prr, a.scenario, a.aligned, a.drop_log,
                    a.red_trace, a.step, a.buffer, a.ns2, a.phase_ns, a.cc, a.ecn, attrs_over, a.ecn_rfc3168,
                    a.dctcp_rfc8257, a.fqcodel_linux, a.fqcodel_linux_mark, a.dctcp_echo_rfc8257,
                    a.ecn_cwr_rfc3168, a.cong_log)
    if a.json:
        sys.stdout.write(json.dumps(out, allow_nan=True) + "\n")
    else:
        for k, v in out.items():
            if k != "per_flow":
                print(f"{k:22s} {v}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
