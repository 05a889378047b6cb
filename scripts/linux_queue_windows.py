"""The queue and flow 0's window over time, testbed (Linux) against the
simulator, for testbed/dumbbell4 (docs/testbed.md, "Why EWT rewrites fewer
ACKs in Linux", branch linux13).

The testbed side reads a compare's stored runs (``DIR/testbed/runs/*.json``:
``series.rtt``, TCP_INFO's srtt of every flow every 20 ms, and
``series.window0``, flow 0's cwnd and the window it sees). The simulator side
reads ``--log-flow`` logs of every flow, made first with

    for s in $(seq 1 20); do for f in 0 1 2 3; do
      netreturn-sim scenarios/testbed/dumbbell4.toml --seed $s --set queue=Q --set tcp=T \\
        --set tcp.profile=linux --log-flow $f --log-out LOGS/Q-T-s$s-f$f.log > /dev/null
    done; done

and rebuilds what TCP_INFO shows: RFC 6298's srtt (one sample per ACK that
advances SND.UNA, from the segment at the old SND.UNA, never a resent one),
sampled every 20 ms, and cwnd from the ``state`` lines. The exact queue the
simulator's packets met is each first transmission's one-way delay above
its flow's minimum.

    python scripts/linux_queue_windows.py results/linuxcmp-shaped2 LOGS ewt newreno
"""

from __future__ import annotations

import glob
import json
import statistics
import sys

BIN_S = 0.5
BINS = 8
PATH_RTT_MS = 84.0
#: St = 29 kB at 45 Mb/s, in ms of queue.
ST_MS = 29_000 * 8 / 45e6 * 1000
STEP_S = 0.02


def testbed_runs(out: str, queue: str, tcp: str) -> list[dict]:
    runs = [json.load(open(f)) for f in glob.glob(f"{out}/testbed/runs/*.json")]
    return [r for r in runs if r["params"]["queue"] == queue and r["params"]["tcp"] == tcp]


def sim_flow(path: str) -> dict:
    """srtt excess and cwnd every 20 ms, one-way queueing delays."""
    sent: dict[str, list[float]] = {}
    retx: set[int] = set()
    first: dict[int, float] = {}
    una, srtt, cwnd, nxt = 1, None, None, None
    srtt_s, cwnd_s, owd = [], [], []
    for line in open(path):
        p = line.split()
        t = float(p[0])
        if p[1] == "send" and p[2] == "data":
            seq = int(p[3].split("+")[0])
            sent.setdefault(p[3], []).append(t)
            if seq in first:
                retx.add(seq)
            else:
                first[seq] = t
        elif p[1] == "recv" and p[2] == "data" and len(sent.get(p[3], [])) == 1:
            owd.append((t, t - sent[p[3]][0]))
        elif p[1] == "recv" and p[2] == "ack":
            ack = int(p[3])
            if ack > una:
                if una in first and una not in retx:
                    r = (t - first[una]) * 1000
                    srtt = r if srtt is None else srtt * 7 / 8 + r / 8
                una = ack
        elif p[1] == "state":
            cwnd = next(int(kv[5:]) for kv in p[2:] if kv.startswith("cwnd="))
        if nxt is None:
            nxt = t
        while nxt <= t:
            if srtt is not None:
                srtt_s.append((nxt, srtt - PATH_RTT_MS))
            if cwnd is not None:
                cwnd_s.append((nxt, cwnd))
            nxt += STEP_S
    base = min((d for _, d in owd), default=0.0)
    return {"srtt": srtt_s, "cwnd": cwnd_s, "queue_ms": [(t, (d - base) * 1000) for t, d in owd]}


def binned(samples: list[tuple[float, float]]) -> list[list[float]]:
    out: list[list[float]] = [[] for _ in range(BINS)]
    for t, x in samples:
        b = int(t / BIN_S)
        if 0 <= b < BINS:
            out[b].append(x)
    return out


def share_above_st(xs: list[float]) -> str:
    return f"{100 * sum(x > ST_MS for x in xs) / len(xs):4.0f} %" if xs else "    -"


def median_kb(xs: list[float]) -> str:
    return f"{statistics.median(xs) / 1000:5.0f}" if xs else "    -"


def main(out: str, logs: str, queue: str, tcp: str) -> None:
    tb = testbed_runs(out, queue, tcp)
    tb_srtt = [(t, r - run["base_rtt_ms"]) for run in tb for ser in run["series"]["rtt"] for t, r in ser]
    tb_cwnd = []
    for run in tb:
        w = run["series"]["window0"]
        start = run["flows"]["start_s"][0]
        tb_cwnd += [(t - w[0][0] + start, c) for t, c, _ in w]
    flows = [sim_flow(f) for f in sorted(glob.glob(f"{logs}/{queue}-{tcp}-s*-f*.log"))]
    flow0 = [sim_flow(f) for f in sorted(glob.glob(f"{logs}/{queue}-{tcp}-s*-f0.log"))]
    sim_srtt = [x for f in flows for x in f["srtt"]]
    sim_q = [x for f in flows for x in f["queue_ms"]]
    sim_cwnd = [x for f in flow0 for x in f["cwnd"]]
    print(f"{queue}, {tcp}: {len(tb)} testbed runs, {len(flows)} simulator flows")
    print("time (s)   srtt above St: Linux  sim | packets above St, sim | flow 0 cwnd (kB), median: Linux  sim")
    cols = [binned(x) for x in (tb_srtt, sim_srtt, sim_q, tb_cwnd, sim_cwnd)]
    for b in range(BINS):
        a, s, q, c1, c2 = (c[b] for c in cols)
        print(f"{b * BIN_S:3.1f}-{(b + 1) * BIN_S:3.1f}   {share_above_st(a)} {share_above_st(s)}"
              f"      {share_above_st(q)}      {median_kb(c1)} {median_kb(c2)}")
    print(f"whole run  {share_above_st([x for _, x in tb_srtt])} {share_above_st([x for _, x in sim_srtt])}"
          f"      {share_above_st([x for _, x in sim_q])}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
