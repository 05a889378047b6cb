"""Tables and plots of replicated runs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from .stats import fmt_ci, mean_ci

# Headline metrics, in print order, with a label and unit.
METRICS: list[tuple[str, str]] = [
    ("tcp_efficiency_pct", "TCP efficiency (%)"),
    ("fct_mean_s", "mean FCT (s)"),
    ("goodput_mean_mbps", "mean goodput (Mb/s)"),
    ("jain_goodput", "Jain fairness (goodput)"),
    ("tcp_loss_pct", "TCP loss ratio (%)"),
    ("udp_loss_pct", "UDP loss ratio (%)"),
    ("udp_efficiency_pct", "UDP efficiency (%)"),
    ("utilization", "bottleneck utilization"),
    ("queue_mean_bytes", "mean queue (B)"),
    ("robustness_index", "robustness index"),
    ("triple_dupacks", "triple dupACKs"),
    ("timeouts", "RTO expiries"),
    ("lost_packets", "lost packets"),
    ("rtt_mean_ms", "mean RTT (ms)"),
]


def group_label(params: dict, keys: Sequence[str]) -> str:
    return ",".join(f"{k}={params.get(k)}" for k in keys) if keys else "all"


def summarize(df, group_keys: Sequence[str]):
    """Mean, CI half-width and n per metric per group (long format)."""
    import pandas as pd

    rows = []
    groups = df.groupby(list(group_keys), sort=False) if group_keys else [((), df)]
    for gkey, g in groups:
        if not isinstance(gkey, tuple):
            gkey = (gkey,)
        base = dict(zip(group_keys, gkey))
        for col in df.columns:
            if col in group_keys or col == "seed" or not pd.api.types.is_numeric_dtype(df[col]):
                continue
            m, h, n = mean_ci(g[col].tolist())
            rows.append({**base, "metric": col, "mean": m, "ci95": h, "n": n})
    return pd.DataFrame(rows)


def ci_table(header: Sequence[str], metrics, cells) -> str:
    """A plain-text table of mean ± 95 % CI, one row per ``(name, label)`` of
    ``metrics``; ``cells(name)`` gives that row's ``(mean, ci95)`` per column
    after the first, or None where there is no value. Rows without any value
    are left out."""
    lines = [list(header)]
    for name, label in metrics:
        vals = [c if c is not None and not math.isnan(c[0]) else None for c in cells(name)]
        if any(v is not None for v in vals):
            lines.append([label] + [fmt_ci(*v) if v is not None else "-" for v in vals])
    widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
    out = ["  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)) for r in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def table_text(summary, group_keys: Sequence[str], metrics=METRICS) -> str:
    """A plain-text table: one row per metric, one column per group."""
    if group_keys:
        groups = summary[list(group_keys)].drop_duplicates().to_dict("records")
    else:
        groups = [{}]
    header = ["metric"] + [group_label(g, group_keys) if g else "mean ± 95% CI" for g in groups]

    def cells(name):
        for g in groups:
            sel = summary[summary["metric"] == name]
            for k, v in g.items():
                sel = sel[sel[k] == v]
            yield (sel["mean"].iloc[0], sel["ci95"].iloc[0]) if len(sel) else None

    return ci_table(header, metrics, cells)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _time_plot(lines: dict[str, tuple[list, list]], ylabel: str, path: Path, title: str, hline: float | None = None) -> Path:
    """One line per label over time, saved as a PNG."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, (x, y) in lines.items():
        ax.plot(x, y, label=label, linewidth=0.8)
    if hline:
        ax.axhline(hline, color="grey", linestyle=":", linewidth=0.8, label="buffer")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_queues(series: dict[str, dict], capacity: float | None, path: Path, title: str) -> Path:
    """Queue occupancy over time, one line per method (seed 000 Fig. 3)."""
    lines = {k: (s["time_s"], [b / 1000 for b in s["bytes"]]) for k, s in series.items()}
    return _time_plot(lines, "bottleneck queue (kB)", path, title, capacity / 1000 if capacity else None)


def plot_windows(traces: dict[str, dict], path: Path, title: str) -> Path:
    """Effective window min(cwnd, rwnd) of one flow (seed 000 Fig. 10)."""
    lines = {f"{k} effective": (t["time_s"], [w / 1000 for w in t["effective"]]) for k, t in traces.items()}
    return _time_plot(lines, "window (kB)", path, title)


def plot_metrics(summary, group_keys: Sequence[str], path: Path, title: str, metrics=METRICS) -> Path:
    """Bar charts with 95 % CI error bars, one panel per metric."""
    plt = _plt()
    names = [(m, l) for m, l in metrics if m in set(summary["metric"]) and summary[summary["metric"] == m]["mean"].notna().any()]
    cols = 3
    rows = max(1, math.ceil(len(names) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    for ax, (m, label) in zip(axes.flat, names):
        sel = summary[summary["metric"] == m]
        labels = [group_label(r, group_keys) for r in sel[list(group_keys)].to_dict("records")] if group_keys else ["all"]
        ax.bar(range(len(sel)), sel["mean"], yerr=sel["ci95"].fillna(0), capsize=3, color="#4c72b0")
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels([l.split("=")[-1] if len(group_keys) == 1 else l for l in labels], rotation=30, fontsize=7)
        ax.set_title(label, fontsize=9)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
