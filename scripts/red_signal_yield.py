#!/usr/bin/env python3
"""RED's state and its decision rule's yield from RED traces, ours'
(`netreturn-sim --red-trace PATH`) or ns-3's (`ns3ref.py --red-trace PATH`),
over time windows: the verdicts (accepted, early drop, CE mark, forced,
overflow), the means over arrivals of the average, the backlog RED sees and
max_p, and the early signals (drops + marks) per unit of the base
probability p_b = max_p (avg - min_th) / (max_th - min_th) summed over the
arrivals where an early signal can fall (min_th <= avg < max_th and a
non-empty queue, ns-3's `nQueued > 1`). The same yield on both sides means
the same decision for the same state (count spacing, byte mode, the
first-arrival rule), so a difference in signals comes from the state (the
average, max_p), not the rule.

    python scripts/red_signal_yield.py --min-th 14062.5 --max-th 42187.5 \\
        --windows 0,10 10,40 0,1000 -- ns3=a.tr,b.tr ours=c.tr,d.tr

Each set is NAME=TRACE[,TRACE...] (seeds), averaged. docs/validation.md,
"ARED with ECN: the senders, not RED" (2026-11-27) uses it.
"""

from __future__ import annotations

import argparse
import statistics

VERDICTS = {0: "accepted", 1: "early_drop", 2: "forced", 3: "overflow", 4: "mark"}


def stats(path: str, t0: float, t1: float, min_th: float, max_th: float) -> dict:
    n = 0
    counts = dict.fromkeys(VERDICTS.values(), 0)
    s_avg = s_backlog = s_maxp = sum_pb = 0.0
    signals = 0
    with open(path) as f:
        for line in f:
            parts = line.split("\t")
            if len(parts) != 6:
                continue
            t, backlog, avg, max_p, verdict = (float(parts[1]), float(parts[2]), float(parts[3]),
                                              float(parts[4]), int(parts[5]))
            if not t0 <= t < t1:
                continue
            n += 1
            counts[VERDICTS[verdict]] += 1
            s_avg += avg
            s_backlog += backlog
            s_maxp += max_p
            if min_th <= avg < max_th and backlog > 1:
                sum_pb += max_p * (avg - min_th) / (max_th - min_th)
                signals += verdict in (1, 4)
    return {"arrivals": n, **counts, "avg": s_avg / n, "backlog": s_backlog / n, "max_p": s_maxp / n,
            "signals_per_pb": signals / sum_pb if sum_pb else float("nan")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-th", type=float, required=True, help="RED's min_th, bytes")
    ap.add_argument("--max-th", type=float, required=True, help="RED's max_th, bytes")
    ap.add_argument("--windows", nargs="+", default=["0,1e9"], help="T0,T1 in s (default: the whole run)")
    ap.add_argument("sets", nargs="+", help="NAME=TRACE[,TRACE...]")
    a = ap.parse_args()
    for w in a.windows:
        t0, t1 = (float(x) for x in w.split(","))
        print(f"{t0:g}-{t1:g} s (means over the traces of a set)")
        print(f"{'set':14s} {'avg':>7s} {'backlog':>7s} {'max_p':>7s} {'early':>6s} {'marks':>6s} {'forced':>6s} "
              f"{'overflow':>8s} {'signals/sum p_b':>15s}")
        for spec in a.sets:
            name, files = spec.split("=", 1)
            rows = [stats(p, t0, t1, a.min_th, a.max_th) for p in files.split(",")]

            def m(k: str, rows: list[dict] = rows) -> float:
                return statistics.mean(r[k] for r in rows)

            print(f"{name:14s} {m('avg'):7.0f} {m('backlog'):7.0f} {m('max_p'):7.4f} {m('early_drop'):6.0f} "
                  f"{m('mark'):6.0f} {m('forced'):6.0f} {m('overflow'):8.0f} {m('signals_per_pb'):15.3f}")


if __name__ == "__main__":
    main()
