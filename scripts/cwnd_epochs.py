#!/usr/bin/env python3
"""The senders' window cycle between two reductions, from ours' packet logs
(`netreturn-sim --log-flow F --log-out PATH`, one per flow: the `state`
lines' cwnd and ssth) or ns-3's per-flow traces (`ns3ref.py --trace K
--json`: `per_flow[i].trace`, cwnd and ssthresh at every change). A
reduction is ssthresh set anew (an ECN or a loss reduction); for each two
consecutive reductions of a flow inside the window: the cut (new ssthresh
over cwnd just before), the growth (cwnd just before the second less the
first's ssthresh, per second between them), and the time between them.

    python scripts/cwnd_epochs.py --window 10,40 ns3=run.json ours=f0.log,f1.log,...

Sizes in segments of --mss bytes (1458). docs/validation.md, "ARED with ECN:
the senders, not RED" (2026-11-27) uses it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics

Series = list[tuple[float, float, float]]  # (time s, cwnd B, ssthresh B)
NO_SSTHRESH = 1e9  # ssthresh still at its initial "infinite" value (slow start)


def ours(path: str) -> Series:
    out = []
    with open(path) as f:
        for line in f:
            if " state " in line:
                cwnd = re.search(r"cwnd=(\d+)", line)
                ssth = re.search(r"ssth=(\d+)", line)
                if cwnd and ssth:
                    out.append((float(line.split()[0]), float(cwnd.group(1)), float(ssth.group(1))))
    return out


def ns3(path: str) -> list[Series]:
    with open(path) as f:
        run = json.load(f)
    return [list(zip(p["trace"]["time_s"], p["trace"]["cwnd"], p["trace"]["ssthresh"]))
            for p in run["per_flow"] if "trace" in p]


def cycles(s: Series, t0: float, t1: float, mss: float) -> list[tuple[float, float, float]]:
    """(cut, growth in segments/s, time between reductions) per pair of reductions in [t0, t1)."""
    reductions = []  # (time, new ssthresh, cwnd before)
    for (_, cwnd0, ss0), (t, _, ss) in zip(s, s[1:]):
        if ss != ss0 and 0 < ss0 and ss < NO_SSTHRESH:
            reductions.append((t, ss, cwnd0))
    out = []
    for (ta, ss_a, cwnd_a), (tb, _, cwnd_b) in zip(reductions, reductions[1:]):
        if t0 <= ta < tb < t1:
            out.append((ss_a / cwnd_a, (cwnd_b - ss_a) / mss / (tb - ta), tb - ta))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--window", default="10,40", help="T0,T1 in s")
    ap.add_argument("--mss", type=float, default=1458.0)
    ap.add_argument("sets", nargs="+", help="NAME=FILE[,FILE...]: ns3ref JSON files or ours' packet logs")
    a = ap.parse_args()
    t0, t1 = (float(x) for x in a.window.split(","))
    print(f"{'set':24s} {'cycles':>6s} {'cut':>6s} {'growth (seg/s)':>15s} {'between (s)':>11s}")
    for spec in a.sets:
        name, files = spec.split("=", 1)
        series: list[Series] = []
        for p in files.split(","):
            series.extend(ns3(p) if p.endswith(".json") else [ours(p)])
        c = [x for s in series for x in cycles(s, t0, t1, a.mss)]
        mean = [statistics.mean(x[i] for x in c) for i in range(3)]
        print(f"{name:24s} {len(c):6d} {mean[0]:6.3f} {mean[1]:15.2f} {mean[2]:11.3f}")


if __name__ == "__main__":
    main()
