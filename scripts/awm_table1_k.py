"""The AWM paper's Table 1, case 2: why our Jain indices differ from the paper's.

Runs the fairness scenario (case 2: RTT_i = 40 + 10 (i - 1) ms) for AWM and
NC over a few buffer sizes and run lengths, and for each run prints Jain's
index over goodput, the mean queueing delay, and the exponent k of a fit
goodput_i ~ RTT_i^-k, once with RTT_i the propagation delay alone and once
with the run's mean queueing delay added. It also prints the k that the
paper's own indices imply if throughput ~ D_i^-k.

    python scripts/awm_table1_k.py --seeds 3 --buffer 700kB --buffer 150kB --buffer 50kB

(0.2-1 s per run.) docs/xcp.md, "Differences from the paper, explained",
quotes its output.
"""

from __future__ import annotations

import argparse

import numpy as np

from netreturn.runner import RunSpec, execute

D = 40.0 + 10.0 * np.arange(30)  # ms, the AWM paper's section 3.4


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def k_for(target: float, delays: np.ndarray) -> float:
    """The k with jain(delays^-k) == target (bisection; jain falls with k)."""
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if jain(delays**-mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--buffer", action="append")
    ap.add_argument("--stop", action="append")
    ap.add_argument("--method", action="append")
    ap.add_argument("--set", action="append", default=[], help="extra NAME=VALUE overrides")
    ap.add_argument("--scenario", default="awm/fairness", help="a variant of the fairness scenario file")
    ap.add_argument("--plot", help="write goodput against D_i of every seed-1 run to this image, with k = 1 over D_i + q/C")
    a = ap.parse_args()
    print("paper's indices, if goodput ~ D_i^-k (propagation only):")
    for name, v in (("AWM", 0.7007), ("NC", 0.4392)):
        print(f"  {name} {v:.4f}: k = {k_for(v, D):.3f}")
    print("  k = 1 over D_i alone gives", f"{jain(1 / D):.4f}")
    print()
    print("scenario:", a.scenario, " ".join(a.set))
    print("| method | buffer | stop | seed | Jain | queue delay (ms) | k (D_i) | k (D_i + queue) | drops |")
    print("|---|---|---|---|---|---|---|---|---|")
    extra = dict(s.split("=", 1) for s in a.set)
    curves = []
    for method in a.method or ["awm", "droptail"]:
        for buf in a.buffer or ["700kB"]:
            for stop in a.stop or ["120s"]:
                for seed in range(1, a.seeds + 1):
                    r = execute(RunSpec.make(a.scenario, {"queue": method, "step": "10ms", "buffer": buf, "stop": stop, **extra}, seed))
                    f = r["flows"]
                    order = np.argsort([int(s.removeprefix("left")) for s in f["src"]])
                    g = np.array(f["goodput_mbps"])[order]
                    s = r["summary"]
                    rate = 30e6
                    qd = s["queue_mean_bytes"] * 8 / rate * 1e3
                    k_prop = -np.polyfit(np.log(D), np.log(g), 1)[0]
                    k_all = -np.polyfit(np.log(D + qd), np.log(g), 1)[0]
                    if seed == 1:
                        curves.append((f"{method}, {buf}, {stop}", g, qd))
                    print(f"| {method} | {buf} | {stop} | {seed} | {jain(g):.4f} | {qd:.1f} | {k_prop:.3f} | {k_all:.3f} | {s['queue_drops']:.0f} |", flush=True)
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 4))
        for i, (label, g, qd) in enumerate(curves):
            line = ax.loglog(D, g, "o", ms=3, label=f"{label} (q/C {qd:.0f} ms)")[0]
            fit = 1 / (D + qd)
            ax.loglog(D, fit * g.sum() / fit.sum(), "-", lw=0.8, color=line.get_color())
        ax.set_xlabel("round-trip propagation delay D_i (ms)")
        ax.set_ylabel("goodput (Mb/s)")
        ax.set_title("Table 1 case 2, seed 1: dots ours, lines ~ 1/(D_i + q/C)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(a.plot, dpi=90)


if __name__ == "__main__":
    main()
