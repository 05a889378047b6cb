"""The AWM paper's Fig. 3(b): AWM's normalized queue std against the number of
flows. For each flow count, one AWM run of the flows family with its queue
sampled every 10 ms: std / buffer over the whole run and over the steady
part (t >= --steady), the robustness index's denominator min(mean, B - mean),
the per-flow window in segments ((C D + mean queues of both directions) / N / MSS), and the
step one segment more per flow makes in the aggregate (N MSS / B).
--segment runs the same counts with another segment size (the paper's
rounding argument: the step shrinks with the segment).

    python scripts/awm_flows_std.py --flows 10 --flows 100 --flows 1000 --stop 30s
    python scripts/awm_flows_std.py --flows 1000 --segment 448 --stop 30s

docs/xcp.md, "Differences from the paper, explained", quotes its output.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import numpy as np

from netreturn.runner import RunSpec, execute
from netreturn.scenarios import resolve

B = 1.5e6  # the flows family's buffer, bytes
BDP = 150e6 / 8 * 0.080


def scenario(segment: int | None, forward_only: bool) -> str:
    if segment is None and not forward_only:
        return "awm/flows"
    text = resolve("awm/flows").read_text()
    if segment is not None:
        text = re.sub(r"^segment_size = \d+", f"segment_size = {segment}", text, count=1, flags=re.M)
    if forward_only:
        # Drop the reverse FTP flows (the [[traffic]] entry from the right).
        text = re.sub(r'\[\[traffic\]\]\nkind = "tcp-bulk"\nfrom = "right"\n(?:.+\n)+?(?=\n|\[)', "", text, count=1)
        assert 'from = "right"' not in text
    f = Path(tempfile.gettempdir()) / f"awm_flows_seg{segment}_fwd{int(forward_only)}.toml"
    f.write_text(text)
    return str(f)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, action="append")
    ap.add_argument("--segment", type=int, action="append")
    ap.add_argument("--stop", default="30s")
    ap.add_argument("--steady", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--method", default="awm")
    ap.add_argument("--forward-only", action="store_true", help="no reverse FTP flows (no ACK compression)")
    ap.add_argument("--plot", help="write the queue series of every run to this image (t in [steady, steady + 5 s])")
    a = ap.parse_args()
    print(f"method {a.method}, stop {a.stop}, seed {a.seed}; steady part t >= {a.steady} s; forward only: {a.forward_only}")
    print("| flows each way | segment (B) | std/B whole | std/B steady | mean q steady (kB) | min(mean, B-mean)/B | empty (%) | >= 0.95 B (%) | reverse queue mean (kB) | window per flow (segments) | N MSS / B | drops |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    series = []
    for seg in a.segment or [None]:
        mss = seg or 948
        for n in a.flows or [10, 50, 100, 300, 1000]:
            r = execute(RunSpec.make(scenario(seg, a.forward_only), {"queue": a.method, "flows": str(n), "stop": a.stop}, a.seed, keep_series=True))
            t = np.array(r["queue_series"]["time_s"])
            q = np.array(r["queue_series"]["bytes"], float)
            st = q[t >= a.steady]
            m = st.mean()
            # The round trip includes the reverse queue too (the ACKs wait
            # behind the reverse flows' data there).
            f = r["ifaces"]
            rev = f["queue_mean_bytes"][f["iface"].index("R2->R1")] if "R2->R1" in f["iface"] else 0.0
            w = (BDP + m + rev) / n / mss
            print(f"| {n} | {mss} | {q.std() / B:.3f} | {st.std() / B:.3f} | {m / 1e3:.0f} | {min(m, B - m) / B:.3f} | "
                  f"{100 * (st <= 0).mean():.1f} | {100 * (st >= 0.95 * B).mean():.1f} | {rev / 1e3:.0f} | {w:.2f} | {n * mss / B:.2f} | {r['summary']['queue_drops']:.0f} |", flush=True)
            series.append((f"{n} flows, {mss} B", t, q))
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 3.5))
        for label, t, q in series:
            sel = (t >= a.steady) & (t < a.steady + 5)
            ax.plot(t[sel], q[sel] / 1e3, lw=0.8, label=label)
        ax.axhline(B / 2e3, color="k", ls=":", lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("bottleneck queue (kB)")
        ax.set_ylim(0, B / 1e3)
        ax.set_title(f"AWM, {'forward only' if a.forward_only else 'flows both ways'} (target dotted, buffer 1500 kB)")
        ax.legend(fontsize=8, loc="upper right")
        fig.tight_layout()
        fig.savefig(a.plot, dpi=90)


if __name__ == "__main__":
    main()
