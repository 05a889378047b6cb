"""The NGWA paper's simulation experiments (seed 001 section 3, SPEC.md 5.2)
beside its numbers: ``netreturn reproduce ngwa [--seeds 30]
[--out results/reproduce-ngwa]`` writes ``report.md`` (and ``window.png`` when
matplotlib is there).

- Table 2 / Fig. 6: lost packets and triple dupACKs, mean of ``--seeds``
  rounds with 95 % CIs, for RFC 793 TCP, NewReno and modes 1-8.
- Figs. 4-5: per-flow transmission rate of one 10-minute run with 95 % CIs
  by batch means over 30 batches (section 3.2), and Jain's index.
- Fig. 3: the window of the connection that lives throughout, NewReno and
  modes 5-8.
- The calibration: the bottleneck (not in the paper) is the rate at which
  NewReno's losses come nearest Table 2's 328; every row is also shown at
  the neighbouring rates (sensitivity).

The paper's numbers come from the scenario files' ``[paper]`` tables.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from .. import _native
from ..runner import RunSpec, run_many
from ..scenarios import resolve
from ..stats import batch_means_ci, fmt_ci, jain, mean_ci, mean_sd

RATE = "ngwa/rate.toml"
WINDOW = "ngwa/window.toml"
# (row name, key in the paper's tables, overrides)
ROWS = [
    ("RFC 793", "rfc793", {"ngwa_mode": 0, "tcp": "none"}),
    ("NewReno", "newreno", {"ngwa_mode": 0, "tcp": "newreno"}),
] + [(f"mode {m}", f"mode{m}", {"ngwa_mode": m}) for m in range(1, 9)]
CALIBRATION = ["1.2Mbps", "1.5Mbps", "1.8Mbps", "2.0Mbps", "2.2Mbps"]


def _many(jobs: list[tuple[str, int, dict]], workers: int, out: Path | None = None, series: bool = False) -> list[dict]:
    """The runs (scenario, seed, overrides) through the project's runner, in
    order: in parallel, with a progress bar, and kept under ``out/runs``
    (resumable) when ``out`` is given. Runs whose time series are needed
    (``series``) are not stored: a 10-minute trace is tens of MB of JSON."""
    specs = [RunSpec.make(sc, {k: str(v) for k, v in ov.items()}, seed, keep_series=series) for sc, seed, ov in jobs]
    return run_many(specs, jobs=workers, out=None if series else out)


def flow_rates(trace: dict, batches: int = 30, t0: float = 0.0) -> tuple[float, float, int]:
    """A flow's transmission rate (bytes/s) by batch means: the delivered
    bytes of each sampling interval over its length, from ``t0`` on."""
    t, d = trace["time_s"], trace["delivered"]
    rates = [(d[i] - d[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(t)) if t[i - 1] >= t0 and t[i] > t[i - 1]]
    return batch_means_ci(rates, batches)


def losses_table(seeds: int, workers: int, bottleneck: str | None, paper: dict, out: Path | None = None) -> list[str]:
    extra = {"bottleneck_rate": bottleneck} if bottleneck else {}
    jobs = [(RATE, s, {**ov, **extra}) for _, _, ov in ROWS for s in range(1, seeds + 1)]
    res = _many(jobs, workers, out)
    lines = [
        "| test | lost packets (ours) | paper (Table 2) | triple dupACKs (ours) | paper (Fig. 6) | timeouts | Jain (goodput) |",  # noqa: E501
        "|---|---|---|---|---|---|---|",
    ]
    for i, (name, key, _) in enumerate(ROWS):
        rs = res[i * seeds:(i + 1) * seeds]
        lost = mean_ci(r["summary"]["lost_packets"] for r in rs)
        tri = mean_ci(r["summary"]["triple_dupacks"] for r in rs)
        to = mean_ci(r["summary"]["timeouts"] for r in rs)
        jn = mean_ci(r["summary"]["jain_goodput"] for r in rs)
        p_lost = paper.get("table2_lost", {}).get(key, "-")
        p_tri = paper.get("fig6_triple_dupacks", {}).get(key, "highest")
        lines.append(
            f"| {name} | {fmt_ci(lost[0], lost[1], 4)} | {p_lost} | {fmt_ci(tri[0], tri[1], 4)} | {p_tri} | {fmt_ci(to[0], to[1], 3)} | {fmt_ci(jn[0], jn[1], 3)} |"  # noqa: E501
        )
    return lines


def rates_table(workers: int) -> list[str]:
    res = _many([(RATE, 1, ov) for _, _, ov in ROWS], workers, series=True)
    lines = [
        "| test | flow 1 | flow 2 | flow 3 | flow 4 (bytes/s, 95 % CI by 30 batch means) | Jain |",
        "|---|---|---|---|---|---|",
    ]
    for (name, _, _), r in zip(ROWS, res):
        cells, means = [], []
        for tr in sorted(r["traces"], key=lambda x: x["flow"]):
            m, h, _ = flow_rates(tr, 30, t0=1.0)
            means.append(m)
            cells.append(fmt_ci(m, h, 5))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {jain(means):.4f} |")
    return lines


def window_figure(out: Path, workers: int) -> list[str]:
    rows = [("NewReno", {"ngwa_mode": 0})] + [(f"mode {m}", {"ngwa_mode": m}) for m in (5, 6, 7, 8)]
    res = _many([(WINDOW, 1, ov) for _, ov in rows], workers, series=True)
    lines = [
        "| test | mean effective window 0-45 s | 60-120 s | 121-180 s | std 60-120 s | lost packets |",
        "|---|---|---|---|---|---|",
    ]
    for (name, _), r in zip(rows, res):
        tr = r["traces"][0]
        t, w = tr["time_s"], tr["effective"]

        def span(a, b, t=t, w=w):
            return mean_sd(x for ti, x in zip(t, w) if a <= ti < b)

        a, b, c = span(0, 45), span(60, 120), span(121, 180)
        lines.append(
            f"| {name} | {a[0]:.0f} | {b[0]:.0f} | {c[0]:.0f} | {b[1]:.0f} | {r['summary']['lost_packets']:.0f} |"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4))
        for (name, _), r in zip(rows, res):
            tr = r["traces"][0]
            ax.plot(tr["time_s"], tr["effective"], label=name, lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("effective window min(cwnd, rwnd) (bytes)")
        ax.set_title("seed 001 Fig. 3: the connection active throughout")
        ax.legend()
        fig.savefig(out / "window.png", dpi=120, bbox_inches="tight")
        plt.close(fig)
    except ImportError:
        pass
    return lines


def calibration(seeds: int, workers: int, out: Path | None = None) -> tuple[str, list[str]]:
    """NewReno's losses per bottleneck rate; the nearest to Table 2's 328."""
    jobs = [
        (RATE, s, {"ngwa_mode": 0, "tcp": "newreno", "bottleneck_rate": b})
        for b in CALIBRATION
        for s in range(1, seeds + 1)
    ]
    res = _many(jobs, workers, out)
    lines = ["| bottleneck | NewReno lost packets (mean ± 95 % CI) |", "|---|---|"]
    best, best_d = CALIBRATION[0], math.inf
    for i, b in enumerate(CALIBRATION):
        m, h, _ = mean_ci(r["summary"]["lost_packets"] for r in res[i * seeds:(i + 1) * seeds])
        lines.append(f"| {b} | {fmt_ci(m, h, 4)} |")
        if abs(m - 328) < best_d:
            best, best_d = b, abs(m - 328)
    return best, lines


def main(a: argparse.Namespace) -> int:
    """``netreturn reproduce ngwa`` (options: :mod:`.commands`)."""
    a.seeds = a.seeds or (3 if a.quick else 30)
    if a.out is None:
        a.out = Path("results") / "reproduce-ngwa"
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    paper = _native.load_scenario(str(resolve(RATE)), []).get("paper") or {}
    best, cal = calibration(max(3, a.seeds // 3), a.jobs, out)
    doc = [
        "# NGWA (seed 001) reproduced",
        "",
        "## Calibration of the bottleneck (not given in the paper)",
        "",
        f"NewReno's lost packets against Table 2's 328; nearest: **{best}** (the scenario's default is 1.8 Mb/s).",
        "",
        *cal,
        "",
        f"## Table 2 and Fig. 6 at {best} ({a.seeds} rounds)",
        "",
        *losses_table(a.seeds, a.jobs, best, paper, out),
        "",
    ]
    if a.sensitivity:
        for b in CALIBRATION:
            if b != best:
                doc += [f"### Sensitivity: {b}", "", *losses_table(max(3, a.seeds // 3), a.jobs, b, paper, out), ""]
    doc += ["## Figs. 4-5: per-flow transmission rate (one 10-minute run, batch means)", "", *rates_table(a.jobs), "",
            "## Fig. 3: window behaviour (flow 1, active throughout)", "", *window_figure(out, a.jobs), ""]
    (out / "report.md").write_text("\n".join(doc))
    print("\n".join(doc))
    return 0

