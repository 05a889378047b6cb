"""The figures every reproduction draws: grouped bars per level (the
papers' bar charts), flow capacity per method and level, and the loss
against the count that the capacity search ran."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from ..stats import mean_sd
from .paper import Paper


def _plt():
    from ..report import _plt as plt

    return plt()


def save_figure(plt, fig, ax, path: Path, title: str, ylabel: str, ncol: int) -> Path:
    """Labels, legend and the PNG, the same for every figure of a report."""
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=ncol)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_levels(table, paper: Paper, sc: str, cs: str, metric: str, label: str, methods: Sequence[str], path: Path,
                title: str, paper_vals: dict | None = None) -> Path:
    """Grouped bars like the EWT paper's Figs. 5-15: x = level, one bar per
    method, 95 % CI error bars; the paper's value as a marker when known."""
    plt = _plt()
    levels = paper.levels
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / max(1, len(methods))
    for j, m in enumerate(methods):
        xs, ys, es = [], [], []
        for i, lv in enumerate(levels):
            mu, h, _ = table.get(sc, cs, lv, m, metric)
            xs.append(i + (j - (len(methods) - 1) / 2) * width)
            ys.append(mu)
            es.append(0 if math.isnan(h) else h)
        ax.bar(xs, ys, width * 0.95, yerr=es, capsize=2, label=paper.labels[m], color=paper.colors.get(m))
        if paper_vals:
            px = [x for x, lv in zip(xs, levels) if (m, lv) in paper_vals]
            py = [paper_vals[(m, lv)] for lv in levels if (m, lv) in paper_vals]
            ax.scatter(px, py, marker="_", s=120, color="black", zorder=5,
                       label="paper" if j == 0 else None)
    ticks = [f"{lv}\n({table.flows(sc, cs, lv)} flows)" for lv in levels]
    ax.set_xticks(range(len(levels)))
    ax.set_xticklabels(ticks, fontsize=8)
    return save_figure(plt, fig, ax, path, title, label, 4 if paper_vals else 3)


def plot_capacity(rows: list[dict], paper: Paper, sc: str, methods: Sequence[str], path: Path, title: str,
                  max_flows: int, paper_baseline: dict | None = None, paper_label: str = "paper") -> Path:
    """Flow count per method and level (the EWT paper's Figs. 16-17)."""
    plt = _plt()
    levels = paper.levels
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / max(1, len(methods))
    by = {(r["method"], r["level"]): r for r in rows if r["scenario"] == sc}
    for j, m in enumerate(methods):
        xs = [i + (j - (len(methods) - 1) / 2) * width for i in range(len(levels))]
        ys = [by[(m, lv)]["bound"] if (m, lv) in by else 0 for lv in levels]
        bars = ax.bar(xs, ys, width * 0.95, label=paper.labels[m], color=paper.colors.get(m))
        for b, lv in zip(bars, levels):
            if (m, lv) in by and by[(m, lv)]["censored"]:
                b.set_hatch("//")
    if paper_baseline:
        ax.scatter([i - (len(methods) - 1) / 2 * width for i in range(len(levels))],
                   [paper_baseline[lv] for lv in levels], marker="_", s=150, color="black", zorder=5,
                   label=paper_label)
    ax.axhline(max_flows + 1, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xticks(range(len(levels)))
    ax.set_xticklabels([f"{lv}\n({paper.loss_target(lv):g} % loss)" for lv in levels], fontsize=8)
    return save_figure(plt, fig, ax, path, title, "flows at the loss level", 4)


def plot_loss_curves(searches: dict, paper: Paper, sc: str, methods: Sequence[str], path: Path, title: str) -> Path:
    """Mean loss against the flow count at every count the search ran."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for m in methods:
        s = searches.get((sc, m))
        if s is None:
            continue
        ns = sorted(s.values)
        st = [s.mean(n) for n in ns]
        ax.errorbar(ns, [x[0] for x in st], yerr=[0 if math.isnan(x[1]) else x[1] for x in st], marker="o",
                    markersize=3, linewidth=0.8, capsize=2, label=paper.labels[m], color=paper.colors.get(m))
    for lv in paper.levels:
        ax.axhline(paper.loss_target(lv), color="grey", linestyle=":", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("symlog", linthresh=0.05)
    ax.set_xlabel("flows")
    return save_figure(plt, fig, ax, path, title, "mean TCP loss (%)", 3)


def series_stats(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean, standard deviation and minimum of a time series."""
    xs = [float(v) for v in values]
    m, sd = mean_sd(xs)
    return m, sd, min(xs) if xs else math.nan


def after(t: Sequence[float], v: Sequence[float], t0: float) -> list[float]:
    """The values from time ``t0`` on."""
    return [y for x, y in zip(t, v) if x >= t0]


def plot_sweep(series: dict[str, list[tuple[float, float]]], xlabels: Sequence[str], ax, ylabel: str,
               log: bool = False, colors: dict | None = None, xlabel: str = "") -> None:
    """One panel of a family figure (the AWM paper's Figs. 2-5): a metric
    against the swept parameter, one line per method, mean and 95 % CI per
    point (``series``: label -> [(mean, half-width)] in the order of
    ``xlabels``; NaN where a method has no run)."""
    n = max(1, len(series))
    for j, (label, pts) in enumerate(series.items()):
        xs = [i + (j - (n - 1) / 2) * 0.06 for i in range(len(pts))]  # a small dodge: CIs stay apart
        ax.errorbar(xs, [m for m, _ in pts], yerr=[0 if math.isnan(h) else h for _, h in pts], marker="o",
                    markersize=3.5, linewidth=1, capsize=2, label=label, color=(colors or {}).get(label))
    ax.set_xticks(range(len(xlabels)))
    ax.set_xticklabels(xlabels, fontsize=7, rotation=30, ha="right")
    if log:
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylim(bottom=0)
    if xlabel:
        ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)


def plot_series(lines: dict[str, tuple[Sequence[float], Sequence[float]]], path: Path, title: str, ylabel: str,
                hlines: dict[str, float] | None = None, vline: float | None = None) -> Path:
    """Time series, one line per label (a queue over time), with labelled
    horizontal marks (the buffer, the target) and the end of the warm-up."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for label, (t, v) in lines.items():
        ax.plot(t, v, linewidth=0.6, label=label)
    for label, y in (hlines or {}).items():
        ax.axhline(y, color="grey", linestyle=":", linewidth=0.8)
        ax.annotate(label, (0, y), fontsize=7, color="grey", va="bottom")
    if vline is not None:
        ax.axvline(vline, color="black", linestyle="--", linewidth=0.7)
        ax.annotate("end of warm-up", (vline, 0), fontsize=7, rotation=90, va="bottom")
    ax.set_xlabel("time (s)")
    return save_figure(plt, fig, ax, path, title, ylabel, 2)
