"""Where an NGWA row that the paper reports as lossless loses packets:
one round traced packet by packet (docs/ngwa.md, "The few losses, traced").

The round is run again with pcap captures (scenario key ``run.pcap``) of
every sender's access link into R1 (``left<i>->R1``), of the bottleneck
(``R1->R2``) and of the ACK path back to every sender (``R1->left<i>``).
A data segment captured entering R1 but never leaving it on the bottleneck
was dropped there (the run's per-interface counters say which queue drops;
:func:`trace` checks that the pcap finds as many). At each drop the trace
reads, from the same captures, what each of the four senders had in flight
(highest sequence sent minus the last ACK it was sent) and the window the
receiver's last ACK offered it (NGWA's ``min(Wb, Wmax, Wngwa)``, eq. 2 and
eq. 4), and sets their sums beside what the path holds: the bottleneck's
buffer plus its rate times the path's round trip, both from the scenario.
"""

from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .._native import parse_rate, parse_size, parse_time
from ..pcap import tcp_segments

#: A gap between drops longer than this starts a new burst.
BURST_GAP_S = 1.0


@dataclass
class Packet:
    time_s: float
    sport: int
    seq: int
    ack: int
    window: int
    payload: int


def read_pcap(path: str | Path) -> list[Packet]:
    """The TCP segments of one of the simulator's captures (link type raw
    IPv4, nanosecond timestamps, headers only: ``crates/sim/src/pcap.rs``),
    in capture order. ``payload`` is the IP total length minus both headers;
    the simulator writes no window scale, so ``window`` is in bytes."""
    return [Packet(s.time_s, s.sport, s.seq, s.ack, s.window, s.payload)
            for s in tcp_segments(path, nanoseconds=True)]


@dataclass
class Trace:
    """One traced round: its drops and what the senders and receivers did
    at each."""

    row: str
    setting: str
    seed: int
    lost: float
    #: the rounds the traced one is the worst of (1..rounds)
    rounds: int
    #: interface -> queue drops, from the run's own counters (only those that dropped)
    queue_drops: dict[str, int]
    #: (time s, flow) of every drop the captures show, in time order
    drops: list[tuple[float, int]]
    #: at each drop: the four senders' data in flight together, and the windows the receivers offered (bytes)
    flight_sum: list[float]
    window_sum: list[float]
    window_each: list[list[float]]
    #: at each drop, per sender: how long before the drop the right edge it was using (ACK + window) was first
    #: offered (s)
    edge_age: list[list[float]]
    start_s: list[float]
    buffer_bytes: float
    rate_bps: float
    path_bytes: float
    base_rtt_s: float
    flows: int
    fd: bool
    #: the same round with a receiver that may take offered space back (tcp.shrink_window): its lost packets
    #: (None: not run, the setting has it already)
    shrink_lost: float | None = None

    def bursts(self) -> list[tuple[float, float, int]]:
        """(first, last drop time, drops) of every burst: drops less than
        :data:`BURST_GAP_S` apart."""
        out: list[list[Any]] = []
        for t, _ in self.drops:
            if out and t - out[-1][1] <= BURST_GAP_S:
                out[-1][1] = t
                out[-1][2] += 1
            else:
                out.append([t, t, 1])
        return [(a, b, n) for a, b, n in out]


def _iface_file(d: Path, iface: str) -> Path:
    name = iface.replace("->", "_to_")
    found = sorted(d.glob(f"{name}_*.pcap"))
    if not found:
        raise FileNotFoundError(f"{d}: no capture of {iface} (run.pcap)")
    return found[0]


def _match_drops(ingress: list[Packet], egress_times: dict[tuple[int, int], list[float]]) -> list[Packet]:
    """The copies of ``ingress`` that never left on the bottleneck: each
    egress copy of a (port, sequence) is matched to the latest copy that
    entered before it (a retransmission enters a round trip after the copy
    it repeats), and what is left was dropped."""
    by: dict[tuple[int, int], list[Packet]] = {}
    for p in ingress:
        if p.payload > 0:
            by.setdefault((p.sport, p.seq), []).append(p)
    dropped = []
    for k, copies in by.items():
        left = list(copies)
        for te in sorted(egress_times.get(k, [])):
            before = [c for c in left if c.time_s < te]
            if before:
                left.remove(max(before, key=lambda c: c.time_s))
        dropped += left
    return dropped


def trace(scenario: str, overrides: Mapping[str, Any], seed: int, where: Path, row: str, setting: str,
          rounds: int) -> Trace:
    """Runs round ``seed`` of ``scenario`` with ``overrides`` again with
    the captures, under ``where``, and reads its drops (module doc). A
    segment still queued when the run stops is not a drop: copies that
    entered R1 less than a full queue's delay before the bottleneck's last
    capture are left out."""
    from ..runner import RunSpec, run_many
    from ..scenarios import load

    doc = load(scenario, dict(overrides))["document"]
    topo = doc["topology"]
    n = int(topo["pairs"])
    ifaces = [f"left{i}->R1" for i in range(n)] + ["R1->R2"] + [f"R1->left{i}" for i in range(n)]
    where.mkdir(parents=True, exist_ok=True)
    spec = RunSpec.make(scenario, {**{k: str(v) for k, v in overrides.items()}, "run.pcap": json.dumps(ifaces)},
                        seed, pcap_dir=where)
    r = run_many([spec], jobs=1, out=None, progress=False)[0]
    fi = r["ifaces"]
    qd = {name: int(x) for name, x in zip(fi["iface"], fi["queue_drops"]) if x}
    ing = {i: read_pcap(_iface_file(where, f"left{i}->R1")) for i in range(n)}
    acks = {i: read_pcap(_iface_file(where, f"R1->left{i}")) for i in range(n)}
    egress: dict[tuple[int, int], list[float]] = {}
    bott = topo["bottleneck"]
    kind, buf = parse_size(bott["buffer"])
    if kind != "bytes":
        buf *= int(doc["tcp"]["segment_size"])
    rate = float(parse_rate(bott["rate"]))
    last = 0.0
    for p in read_pcap(_iface_file(where, "R1->R2")):
        egress.setdefault((p.sport, p.seq), []).append(p.time_s)
        last = p.time_s
    cut = last - buf * 8 / rate
    drops = sorted((p.time_s, i) for i in range(n) for p in _match_drops(ing[i], egress) if p.time_s < cut)
    sent_t = {i: [p.time_s for p in ing[i]] for i in range(n)}
    # the highest sequence sent so far, per capture (RFC 793 sequence space, 32-bit)
    high: dict[int, list[int]] = {}
    for i in range(n):
        h, out = None, []
        for p in ing[i]:
            end = (p.seq + p.payload) & 0xFFFFFFFF
            h = end if h is None or ((end - h) & 0xFFFFFFFF) < 1 << 31 else h
            out.append(h)
        high[i] = out
    ack_t = {i: [p.time_s for p in acks[i]] for i in range(n)}
    # when each ACK's right edge was first offered: the first of the run of ACKs with that same edge
    first: dict[int, list[float]] = {}
    for i in range(n):
        out_t, prev, since = [], None, 0.0
        for p in acks[i]:
            edge = (p.ack + p.window) & 0xFFFFFFFF
            if edge != prev:
                prev, since = edge, p.time_s
            out_t.append(since)
        first[i] = out_t
    flight_sum, window_sum, window_each, edge_age = [], [], [], []
    for t, _ in drops:
        fl, wins, ages = 0.0, [], []
        for i in range(n):
            j, k = bisect.bisect_right(sent_t[i], t) - 1, bisect.bisect_right(ack_t[i], t) - 1
            if j < 0 or k < 0:
                continue
            fl += (high[i][j] - acks[i][k].ack) & 0xFFFFFFFF
            wins.append(float(acks[i][k].window))
            ages.append(t - first[i][k])
        flight_sum.append(fl)
        window_sum.append(sum(wins))
        window_each.append(wins)
        edge_age.append(ages)
    for f in where.glob("*.pcap"):
        f.unlink()
    shrink_lost = None
    if str(overrides.get("tcp.shrink_window", "false")).lower() != "true":
        again = RunSpec.make(scenario, {**{k: str(v) for k, v in overrides.items()}, "tcp.shrink_window": "true"},
                             seed)
        shrink_lost = float(run_many([again], jobs=1, out=None, progress=False)[0]["summary"]["lost_packets"])
    rtt = parse_time(topo["access"]["rtt"]) + parse_time(bott["rtt"]) + parse_time(topo["receivers"]["rtt"])
    mode = int(doc.get("ngwa", {}).get("mode", 0))
    return Trace(row=row, setting=setting, seed=seed, lost=float(r["summary"]["lost_packets"]), rounds=rounds,
                 queue_drops=qd, drops=drops,
                 flight_sum=flight_sum, window_sum=window_sum, window_each=window_each, edge_age=edge_age,
                 start_s=sorted(float(x) for x in r["flows"]["start_s"][:n]), buffer_bytes=float(buf),
                 rate_bps=rate,
                 path_bytes=float(buf) + rate / 8 * rtt, base_rtt_s=rtt, flows=n,
                 fd=mode in (5, 6, 7, 8), shrink_lost=shrink_lost)


def _kb(x: float) -> str:
    return f"{x / 1000:.1f}"


def _range(xs: list[float]) -> str:
    return f"{_kb(min(xs))}-{_kb(max(xs))} kB" if min(xs) != max(xs) else f"{_kb(xs[0])} kB"


def describe(t: Trace) -> str:
    """The trace as a reason: where, when and which flows, what the
    windows summed to against what the path holds, how old the offered
    right edges were, and what the same round loses with a receiver that
    may take offered space back. Every number is the trace's."""
    head = (f"traced round {t.seed} (of rounds 1-{t.rounds} at {t.setting} the one with the most losses, "
            f"{t.lost:.0f})")
    if not t.drops:
        return head + ": the captures show no drop"
    where = ", ".join(f"{k} {v}" for k, v in t.queue_drops.items()) or "none"
    per_flow: dict[int, int] = {}
    for _, f in t.drops:
        per_flow[f] = per_flow.get(f, 0) + 1
    bursts = t.bursts()
    burst_text = ", ".join(f"{a:.1f}" + (f"-{b:.1f}" if b - a >= 0.05 else "") + f" s ({k})" for a, b, k in bursts)
    over_f = sum(x > t.path_bytes for x in t.flight_sum)
    over_w = sum(x > t.path_bytes for x in t.window_sum)
    each = [w for ws in t.window_each for w in ws]
    ages = sorted(a for xs in t.edge_age for a in xs)
    full_rtt, old = _kept(t)
    text = (f"{head}: queue drops per interface {where}; the captures find {len(t.drops)} dropped segments in "
            f"{len(bursts)} burst{'s' if len(bursts) > 1 else ''} at {burst_text}, flows "
            + ", ".join(f"{f}: {k}" for f, k in sorted(per_flow.items()))
            + f" (the flows started at {t.start_s[0]:.2f}-{t.start_s[-1]:.2f} s). At the drops the {t.flows} senders "
            f"had {_range(t.flight_sum)} in flight together, the path holds {_kb(t.path_bytes)} kB (the "
            f"{_kb(t.buffer_bytes)} kB buffer and {_kb(t.path_bytes - t.buffer_bytes)} kB at the bottleneck's rate "
            f"over the {t.base_rtt_s * 1000:.0f} ms round trip), and the windows their receivers last offered summed "
            f"to {_range(t.window_sum)} ({_range(each)} each; above what the path holds at {over_w} of "
            f"{len(t.drops)} drops, the data in flight at {over_f}). The right edges the senders were filling had "
            f"been offered {ages[0]:.2f}-{ages[-1]:.2f} s before the drops (median {ages[len(ages) // 2]:.2f} s; a "
            f"round trip through the full queue takes {full_rtt:.2f} s)")
    if old:
        text += ("; older than that round trip: space offered while "
                 + ("fewer flows were counted and " if t.fd else "") + "the queue was emptier, which the receiver "
                 "does not take back (its right edge never moves left, RFC 9293 section 3.8.6.2.2) and which "
                 "shrinks only as data arrives")
    else:
        text += "; within that round trip: the windows were current, not old space kept"
        if not t.fd:
            text += (f", and without FD every receiver is offered the bottleneck's whole free buffer Br (eq. 3 "
                     f"without division), so the {t.flows} windows together offer up to {t.flows} times the free "
                     "space")
    if t.fd:
        share = 0.98 * t.buffer_bytes / t.flows
        above = sum(w > share for w in each)
        text += (f". FD's share of the whole buffer among {t.flows} flows (0.98 Br / nf, eq. 3) is {_kb(share)} kB; "
                 f"{above} of the {len(each)} windows at the drops were above it")
    if t.shrink_lost is not None:
        text += (f". The same round with a receiver that may take offered space back (`tcp.shrink_window = true`) "
                 f"loses {t.shrink_lost:.0f}: {_verdict(t, old)}")
    return text


def _verdict(t: Trace, old: bool) -> str:
    """What the edges' age and the shrinking receiver's round say together
    (that round runs differently from its first segment on, so it tells
    whether the round loses without kept space, not which drops it
    caused)."""
    gone = t.shrink_lost == 0 and t.lost > 0
    if old and gone:
        return "both point to the space kept behind the right edge"
    if not old and not gone:
        return "both point to the windows themselves, not to kept space"
    if old:
        return "the kept space is not the whole cause"
    return ("the windows were current at the drops, yet a receiver that takes space back avoids them: that "
            "receiver changes the whole round, so the two do not single out one cause")


def _kept(t: Trace) -> tuple[float, bool]:
    """A round trip through the full queue, and whether the median right
    edge the senders filled at the drops was offered longer ago than that
    (old space kept, not a current window)."""
    ages = sorted(a for xs in t.edge_age for a in xs)
    full_rtt = t.base_rtt_s + t.buffer_bytes * 8 / t.rate_bps
    return full_rtt, bool(ages) and ages[len(ages) // 2] > full_rtt


def short(t: Trace) -> str:
    """The trace in one clause, for a statement's reason."""
    if not t.drops:
        return f"traced round {t.seed}: the captures show no drop"
    full_rtt, old = _kept(t)
    where = ", ".join(t.queue_drops) or "no queue"
    cause = ("space offered over a full-queue round trip earlier and kept (the right edge never moves left)" if old
             else "current windows" + ("" if t.fd else "; without FD each receiver is offered the whole free buffer"))
    return (f"traced round {t.seed} ({t.lost:.0f} lost): its {len(t.drops)} drops in the queue of {where}, with the "
            f"windows offered summing to {_range(t.window_sum)} against the {_kb(t.path_bytes)} kB the path holds; "
            f"{cause}"
            + (f"; {t.shrink_lost:.0f} lost with a receiver that may shrink ({_verdict(t, old)})"
               if t.shrink_lost is not None else ""))


def worst_round(losses_by_seed: list[float]) -> tuple[int, float]:
    """(seed, lost) of the round with the most losses (seeds from 1)."""
    i = max(range(len(losses_by_seed)), key=lambda k: (losses_by_seed[k], -k))
    return i + 1, losses_by_seed[i]


def lossy(losses_by_seed: list[float]) -> bool:
    return any(not math.isnan(x) and x > 0 for x in losses_by_seed)
