#!/usr/bin/env python3
"""The bottleneck backlog seen by arrivals, and the drop episodes, from a
queue trace: `netreturn-sim --red-trace PATH` (RED or ARED; a DropTail queue
can be traced as RED with thresholds above the buffer, e.g. `red = { min_th =
"10MB", max_th = "20MB" }`, which never drops early and gives the same run)
or `ns3ref.py --red-trace PATH` (RED, ARED, or a FIFO queue disc: then
departures too, verdict 4, and the time-weighted backlog is printed as well).

    python scripts/queue_trace_stats.py TRACE [--from 10 --to 35]

docs/validation.md, "DropTail's queue: ours' CUBIC cut too deep"
(2026-11-23), uses it.
"""

from __future__ import annotations

import argparse

import numpy as np


def load(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.loadtxt(path, usecols=(1, 2, 5))
    return a[:, 0], a[:, 1], a[:, 2].astype(int)


def time_weighted(t: np.ndarray, b: np.ndarray, v: np.ndarray, t0: float, t1: float, step: float = 1e-3):
    """Backlog sampled every `step` s, rebuilt from arrivals (backlog before)
    and departures (backlog after); an accepted arrival followed by a
    departure is taken as a 1510-byte packet."""
    n = len(t)
    state = np.full(n, np.nan)
    state[v == 4] = b[v == 4]
    nxt = np.zeros(n, bool)
    nxt[:-1] = v[1:] != 4
    state[:-1][nxt[:-1]] = b[1:][nxt[:-1]]
    gap = np.isnan(state)
    state[gap] = b[gap] + np.where(v[gap] == 0, 1510, 0)
    ts = np.arange(t0, t1, step)
    idx = np.searchsorted(t, ts, side="right") - 1
    return np.where(idx >= 0, state[np.maximum(idx, 0)], 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--from", dest="t0", type=float, default=10.0)
    ap.add_argument("--to", dest="t1", type=float, default=35.0)
    ap.add_argument("--full", type=float, default=95_500.0, help="backlog counted as a full queue, bytes")
    ap.add_argument("--gap", type=float, default=0.05, help="drops closer than this (s) are one episode")
    a = ap.parse_args()
    t, b, v = load(a.trace)
    arr = v != 4
    ta, ba, va = t[arr], b[arr], v[arr]
    w = (ta >= a.t0) & (ta < a.t1)
    bb = ba[w]
    drops = va[w] != 0
    print(f"[{a.t0}, {a.t1}) s: {w.sum()} arrivals, {drops.sum()} dropped ({100 * drops.mean():.2f} %)")
    p10, p50, p90 = np.percentile(bb, [10, 50, 90])
    print(f"backlog seen by arrivals (B): mean {bb.mean():.0f}, sd {bb.std():.0f}, p10 {p10:.0f}, "
          f"p50 {p50:.0f}, p90 {p90:.0f}; share >= {a.full:.0f} B: {(bb >= a.full).mean():.3f}; "
          f"< 50 kB: {(bb < 50_000).mean():.3f}")
    if (v == 4).any():
        q = time_weighted(t, b, v, a.t0, a.t1)
        p10, p50, p90 = np.percentile(q, [10, 50, 90])
        print(f"backlog over time (B): mean {q.mean():.0f}, sd {q.std():.0f}, p10 {p10:.0f}, p50 {p50:.0f}, "
              f"p90 {p90:.0f}; time share >= {a.full:.0f} B: {(q >= a.full).mean():.3f}")
    d = ta[w][drops]
    if len(d):
        eps = np.split(d, np.where(np.diff(d) > a.gap)[0] + 1)
        sizes = np.array([len(e) for e in eps])
        after = []
        for e in eps:
            x = (ta > e[-1]) & (ta < e[-1] + 0.4)
            after.append(ba[x].min() if x.any() else np.nan)
        after = np.array(after)
        print(f"drop episodes (gap {1000 * a.gap:.0f} ms): {len(eps)}, drops per episode mean {sizes.mean():.1f}, "
              f"p50 {np.median(sizes):.0f}, p90 {np.percentile(sizes, 90):.0f}; lowest backlog in the 0.4 s after: "
              f"mean {np.nanmean(after):.0f}, p10 {np.nanpercentile(after, 10):.0f}")


if __name__ == "__main__":
    main()
