"""How bursty are the arrivals at the bottleneck queue, testbed against
simulator (testbed/dumbbell4; docs/testbed.md, "Are the bottleneck's
arrivals burstier in Linux? (2026-11-27, branch linux14)").

One analysis for both worlds, from pcap files:

* **testbed** (``--testbed DIR``): the captures ``scripts/testbed_capture.py
  watch --out DIR`` makes during a sweep (Ethernet frames, the kernel's
  receive stamps): ``runNNN-bottleneck_in.pcap`` (the data arriving at the
  bottleneck gateway, as the "path" hop releases it) and
  ``runNNN-senders_lan.pcap`` (the senders' data entering the path hop, and
  the ACKs as the path hop releases them towards the senders)::

      sudo python3 scripts/testbed_capture.py watch --out /tmp/cap &
      NETRETURN_GATEWAY=target/release/netreturn-gateway netreturn testbed sweep testbed/dumbbell4 \\
        --sweep queue=droptail --sweep tcp=newreno --access shaped --reps 5 --out DIR --no-plots -q --keep-raw
      kill -INT %1

* **simulator** (``--sim DIR``): ``netreturn run`` with ``run.pcap`` naming
  every sender's access link and its reverse (a copy of the scenario file
  with ``pcap = ["left0->R1", ..., "left3->R1", "R1->left0", ...,
  "R1->left3"]`` under ``[run]``; ``--out OUT`` writes ``OUT/pcap/``). The
  simulator stamps a packet when its transmission starts, so its arrival at
  the far end is that stamp + its serialization at the link's rate
  (``--access-rate``, 100 Mb/s) + the link's one-way delay
  (``--access-delay``, 1 ms): at R1 for the data (the bottleneck queue's
  arrivals: no hop sits between), at the sender for the ACKs.

Per run it prints (a) data packets arriving per 1 ms and per 10 ms bin
(over the run from the first to the last data packet), (b) a 45 Mb/s FIFO
of 97 kB rebuilt from the arrival times and sizes (a frame leaves the queue
when its transmission starts, as in both gateways; the testbed's gateway
weighs the Ethernet frame, 14 bytes more than the IP packet the simulator
weighs: ``--overhead``), its drops (check them against the gateway's own
counter), (c) the queue's time average, and its average over the round
trip (84 ms) before the first drop of each loss episode (drops more than
``--episode`` apart), and (d) the ACKs' inter-arrival times at the senders
(ACK compression: gaps shorter than a full segment's time at the bottleneck,
269 us). Testbed only: the path hop's own delay per data packet (entering
minus leaving, matched by flow, sequence number and IP id), less its
smallest, which shows whether that hop releases packets in batches.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
from collections import defaultdict, deque

import numpy as np

from netreturn.pcap import tcp_segments


def read_pcap(path: str) -> list[tuple]:
    """(t_s, ip_len, src, dst, sport, dport, seq, ack, ip_id, payload,
    window) of each IPv4 TCP packet of a pcap (netreturn.pcap: Ethernet or
    raw IPv4, us or ns stamps)."""
    return list(tcp_segments(path))


def from_server(p: tuple) -> bool:
    """A testbed frame of a download's sender: from a server's port (50xx,
    runner.py); the others on the senders' side are its ACKs."""
    return 5000 <= p[4] < 5100


def to_server(p: tuple) -> bool:
    return 5000 <= p[5] < 5100


def bins(t: np.ndarray, width: float) -> np.ndarray:
    """Packets per bin of ``width`` s from the first to the last arrival."""
    n = int((t[-1] - t[0]) / width) + 1
    return np.bincount(((t - t[0]) / width).astype(int), minlength=n)


def fifo(t: np.ndarray, size: np.ndarray, rate_bps: float, limit: int):
    """Rebuilds a DropTail FIFO of ``limit`` bytes served at ``rate_bps``:
    a frame leaves the queue when its transmission starts. Returns the
    backlog each arrival meets (bytes), the drop flags, and the queue as a
    step function (times, backlog after each event) for time averages."""
    q: deque = deque()  # (start of transmission, size) of the waiting frames
    occ = 0
    busy = 0.0
    met = np.zeros(len(t))
    dropped = np.zeros(len(t), bool)
    steps_t, steps_q = [], []
    for i in range(len(t)):
        now = t[i]
        while q and q[0][0] <= now:
            s, z = q.popleft()
            occ -= z
            steps_t.append(s)
            steps_q.append(occ)
        met[i] = occ
        if occ + size[i] > limit:
            dropped[i] = True
            continue
        start = max(now, busy)
        busy = start + size[i] * 8 / rate_bps
        if start > now:
            q.append((start, size[i]))
            occ += size[i]
            steps_t.append(now)
            steps_q.append(occ)
    return met, dropped, np.array(steps_t), np.array(steps_q)


def time_avg(steps_t: np.ndarray, steps_q: np.ndarray, a: float, b: float) -> float:
    """Time average over [a, b] of the step function (value holds until the next step)."""
    order = np.argsort(steps_t, kind="stable")
    st, sq = steps_t[order], steps_q[order]
    i0 = np.searchsorted(st, a, side="right") - 1
    v0 = sq[i0] if i0 >= 0 else 0.0
    inside = (st > a) & (st < b)
    ts = np.concatenate(([a], st[inside], [b]))
    vs = np.concatenate(([v0], sq[inside]))
    return float(np.sum(vs * np.diff(ts)) / (b - a)) if b > a else float("nan")


def pct(x, q) -> float:
    return float(np.percentile(x, q)) if len(x) else float("nan")


def analyse(data_in: list[tuple], acks: list[tuple], overhead: int, rate: float, limit: int, rtt: float,
            episode: float, sender_data: list[tuple] | None = None) -> dict:
    data_in.sort(key=lambda p: p[0])
    t = np.array([p[0] for p in data_in])
    size = np.array([p[1] + overhead for p in data_in])
    r: dict = {"packets": len(t)}
    b1, b10 = bins(t, 1e-3), bins(t, 10e-3)
    r["per1ms_p50/p90/p99/max"] = (pct(b1, 50), pct(b1, 90), pct(b1, 99), int(b1.max()))
    r["per10ms_p50/p90/p99/max"] = (pct(b10, 50), pct(b10, 90), pct(b10, 99), int(b10.max()))
    drain1 = rate * 1e-3 / 8 / np.median(size)
    r["share_1ms_bins_above_drain"] = float(np.mean(b1 > drain1))
    gaps = np.diff(t)
    r["gap_p10/p50_us"] = (pct(gaps, 10) * 1e6, pct(gaps, 50) * 1e6)
    r["share_gaps_below_60us"] = float(np.mean(gaps < 60e-6))  # faster than 200 Mb/s
    met, dropped, st, sq = fifo(t, size, rate, limit)
    r["fifo_drops"] = int(dropped.sum())
    r["queue_time_avg_kB"] = time_avg(st, sq, t[0], t[-1]) / 1e3
    r["queue_met_by_arrivals_mean_kB"] = float(met[~dropped].mean()) / 1e3
    r["queue_met_p50/p90/p99_kB"] = tuple(pct(met[~dropped], q) / 1e3 for q in (50, 90, 99))
    # Offered load: Mb/s arriving in each half second from the first packet, to 4 s.
    r["arrivals_mbps_by_0.5s_to_4s"] = tuple(float(size[(t >= t[0] + k / 2) & (t < t[0] + (k + 1) / 2)].sum())
                                             * 16 / 1e6 for k in range(8))
    early = t < t[0] + 1.5  # the slow starts (flows start within the first second)
    r["drops_first_1.5s/after"] = (float(dropped[early].sum()), float(dropped[~early].sum()))
    r["queue_time_avg_first_1.5s/after_kB"] = (time_avg(st, sq, t[0], t[0] + 1.5) / 1e3,
                                               time_avg(st, sq, t[0] + 1.5, t[-1]) / 1e3)
    dt = t[dropped]
    firsts = [x for k, x in enumerate(dt) if k == 0 or x - dt[k - 1] > episode]
    before = [time_avg(st, sq, x - rtt, x) / 1e3 for x in firsts if x - rtt >= t[0]]
    r["episodes"] = len(firsts)
    r["queue_avg_rtt_before_episode_kB"] = before
    # Arrivals in the round trip before each episode (bytes / rtt): how full the pipe ran.
    rate_before = [float(size[(t >= x - rtt) & (t < x)].sum()) * 8 / rtt / 1e6 for x in firsts if x - rtt >= t[0]]
    r["arrival_rate_rtt_before_episode_mbps"] = rate_before
    # The same over shorter spans: how fast the data came just before the
    # queue overflowed (one sender's line rate is 100 Mb/s, two 200).
    for w in (2e-3, 5e-3, 20e-3):
        r[f"arrival_rate_{w * 1e3:.0f}ms_before_episode_mbps"] = [
            float(size[(t >= x - w) & (t < x)].sum()) * 8 / w / 1e6 for x in firsts if x - rtt >= t[0]]
    r["share_10ms_bins_above_80_packets"] = float(np.mean(b10 > 80))
    # ACKs at the senders, per flow (by the server's port).
    per: dict = defaultdict(list)
    for p in acks:
        per[p[5]].append(p[0])
    g = np.concatenate([np.diff(np.sort(v)) for v in per.values() if len(v) > 1]) if per else np.array([])
    r["acks"] = len(acks)
    r["ack_gap_p10/p25/p50_us"] = (pct(g, 10) * 1e6, pct(g, 25) * 1e6, pct(g, 50) * 1e6)
    r["share_ack_gaps_below_100us"] = float(np.mean(g < 100e-6)) if len(g) else float("nan")
    if sender_data is not None:
        sender_data.sort(key=lambda p: p[0])
        ts = np.array([p[0] for p in sender_data])
        s1 = bins(ts, 1e-3)
        r["path_in_per1ms_p99/max"] = (pct(s1, 99), int(s1.max()))
        r["path_in_share_gaps_below_60us"] = float(np.mean(np.diff(ts) < 60e-6))
        first = {}
        for p in sender_data:
            first.setdefault((p[4], p[6], p[8]), p[0])
        idx = [i for i, p in enumerate(data_in) if (p[4], p[6], p[8]) in first]
        d = np.array([data_in[i][0] - first[(data_in[i][4], data_in[i][6], data_in[i][8])] for i in idx])
        if len(d):
            x = (d - d.min()) * 1e6
            r["path_hop_delay_above_min_us_p50/p90/p99/max"] = (pct(x, 50), pct(x, 90), pct(x, 99), float(x.max()))
            r["path_hop_packets_held_over_0.5ms"] = int(np.sum(x > 500))
            # A stall of the path hop before a loss episode: the most any
            # packet arriving in the 5 ms before the episode's first drop
            # was held beyond the hop's least delay.
            ti = t[idx]
            held = [float(x[(ti >= e - 5e-3) & (ti < e)].max(initial=0)) for e in firsts]
            r["path_hop_most_held_5ms_before_episode_us"] = held
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--testbed", help="folder of testbed_capture.py's pcaps")
    g.add_argument("--sim", help="folder of netreturn run's pcaps (OUT/pcap)")
    ap.add_argument("--rate", type=float, default=45e6, help="bottleneck rate, bit/s")
    ap.add_argument("--buffer", type=int, default=97_000, help="bottleneck buffer, bytes")
    ap.add_argument("--overhead", type=int, default=None,
                    help="bytes a packet weighs beyond its IP length (default: 14 testbed, 0 simulator)")
    ap.add_argument("--access-rate", type=float, default=100e6)
    ap.add_argument("--access-delay", type=float, default=1e-3)
    ap.add_argument("--rtt", type=float, default=0.084)
    ap.add_argument("--episode", type=float, default=0.2, help="drops further apart start a new episode, s")
    a = ap.parse_args(argv)
    runs = []
    if a.testbed:
        ov = 14 if a.overhead is None else a.overhead
        for f in sorted(glob.glob(os.path.join(a.testbed, "run*-bottleneck_in.pcap"))):
            tag = os.path.basename(f).split("-")[0]
            lan = read_pcap(os.path.join(a.testbed, f"{tag}-senders_lan.pcap"))
            data_in = [p for p in read_pcap(f) if from_server(p)]
            acks = [p for p in lan if to_server(p)]
            runs.append((tag, analyse(data_in, acks, ov, a.rate, a.buffer, a.rtt, a.episode,
                                      [p for p in lan if from_server(p)])))
    else:
        ov = 0 if a.overhead is None else a.overhead
        seeds = sorted({m.group(1) for f in glob.glob(os.path.join(a.sim, "*.pcap"))
                        if (m := re.search(r"_seed(\d+)\.pcap$", f))}, key=int)
        for s in seeds:
            data_in, acks = [], []
            for f in glob.glob(os.path.join(a.sim, f"left*_to_R1_*_seed{s}.pcap")):
                data_in += [(p[0] + p[1] * 8 / a.access_rate + a.access_delay, *p[1:])
                            for p in read_pcap(f)]
            for f in glob.glob(os.path.join(a.sim, f"R1_to_left*_seed{s}.pcap")):
                acks += [(p[0] + p[1] * 8 / a.access_rate + a.access_delay, *p[1:]) for p in read_pcap(f)]
            runs.append((f"seed{s}", analyse(data_in, acks, ov, a.rate, a.buffer, a.rtt, a.episode)))
    for tag, r in runs:
        print(f"== {tag}")
        for k, v in r.items():
            if isinstance(v, list):
                v = f"n={len(v)} median={np.median(v):.1f}" if v else "n=0"
            elif isinstance(v, tuple):
                v = " / ".join(f"{x:.1f}" for x in v)
            elif isinstance(v, float):
                v = f"{v:.3f}"
            print(f"  {k}: {v}")
    # Pooled over the runs.
    print("== pooled")
    for k in runs[0][1]:
        vals = [r[k] for _, r in runs]
        if isinstance(vals[0], list):
            allv = [x for v in vals for x in v]
            print(f"  {k}: n={len(allv)} median={np.median(allv):.1f} p25={pct(allv, 25):.1f} p75={pct(allv, 75):.1f}")
        elif isinstance(vals[0], tuple):
            m = np.mean(np.array(vals, float), axis=0)
            print(f"  {k} (mean of runs): " + " / ".join(f"{x:.1f}" for x in m))
        else:
            print(f"  {k} (mean of runs): {np.mean(vals):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
