"""Tables and plots of replicated runs.

The tables are plain Python (no pandas): ``netreturn run`` prints its table
without importing pandas or matplotlib. The DataFrame forms are for the API.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .files import atomic_open
from .stats import mean_ci
from .table import ci, render, unit_of

# Headline metrics, in print order, with a label and unit.
METRICS: list[tuple[str, str]] = [
    ("tcp_efficiency_pct", "TCP efficiency (%)"),
    ("fct_mean_s", "mean FCT (ms)"),
    ("goodput_mean_mbps", "mean goodput (Mb/s)"),
    ("jain_goodput", "Jain fairness (goodput)"),
    ("tcp_data_loss_pct", "TCP loss, data segments (%)"),
    ("udp_loss_pct", "UDP loss ratio (%)"),
    ("udp_efficiency_pct", "UDP efficiency (%)"),
    ("utilization", "utilization, monitored link"),
    ("queue_mean_bytes", "mean queue (kB)"),
    ("robustness_index", "robustness index"),
    ("fast_recoveries", "fast recoveries"),
    ("timeouts", "RTO expiries"),
    ("lost_packets", "lost packets"),
    ("rtt_mean_ms", "mean RTT (ms)"),
]


def group_label(params: dict, keys: Sequence[str]) -> str:
    return ",".join(f"{k}={params.get(k)}" for k in keys) if keys else "all"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def numeric_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Columns whose values are all numbers (or all booleans), missing ones
    aside, in order of first appearance: what pandas would call numeric."""
    cols: dict[str, None] = {}
    for r in rows:
        cols.update(dict.fromkeys(r))
    out = []
    for c in cols:
        vals = [r.get(c) for r in rows]
        vals = [v for v in vals if v is not None]
        if vals and (all(_is_number(v) for v in vals) or all(isinstance(v, bool) for v in vals)):
            out.append(c)
    return out


def summary_rows(rows: Sequence[Mapping[str, Any]], group_keys: Sequence[str],
                 columns: Sequence[str] | None = None) -> list[dict]:
    """Mean, CI half-width and n per metric per group (long format), from one
    dict per run; groups in order of first appearance. ``columns``: the
    metrics (default: every numeric column but the seed and the keys)."""
    keys = list(group_keys)
    if columns is None:
        columns = numeric_columns(rows)
    columns = [c for c in columns if c not in keys and c != "seed"]
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    out = []
    for gkey, g in groups.items():
        base = dict(zip(keys, gkey))
        for col in columns:
            m, h, n = mean_ci(g_r.get(col) for g_r in g)
            out.append({**base, "metric": col, "mean": m, "ci95": h, "n": n})
    return out


def summarize(df, group_keys: Sequence[str]):
    """Mean, CI half-width and n per metric per group (long format) of a
    DataFrame with one row per run."""
    import pandas as pd

    cols = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    return pd.DataFrame(summary_rows(df.to_dict("records"), group_keys, cols))


def write_csv(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """One row per dict; the columns are every key, in order of first
    appearance; missing values, None and NaN are empty (as pandas writes them)."""
    rows = list(rows)
    cols: dict[str, None] = {}
    for r in rows:
        cols.update(dict.fromkeys(r))
    with atomic_open(path, "w", newline="") as f:  # a reader never sees half a table
        w = csv.DictWriter(f, fieldnames=list(cols), restval="")
        w.writeheader()
        w.writerows({k: "" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()} for r in rows)
    return Path(path)


def ci_table(header: Sequence[str], metrics, cells) -> str:
    """A plain-text table of mean ± 95 % CI, one row per ``(name, label)`` of
    ``metrics``, each in its unit's format (:mod:`netreturn.table`);
    ``cells(name)`` gives that row's ``(mean, ci95)`` per column after the
    first, or None where there is no value. Rows without any value are left
    out."""
    body = []
    for name, label in metrics:
        vals = [c if c is not None and not math.isnan(c[0]) else None for c in cells(name)]
        if any(v is not None for v in vals):
            unit = unit_of(name)
            body.append([label] + [ci(v[0], v[1], unit) if v is not None else "-" for v in vals])
    return render(header, body)


def _records(summary) -> list[dict]:
    return summary.to_dict("records") if hasattr(summary, "to_dict") else list(summary)


def table_text(summary, group_keys: Sequence[str], metrics=METRICS) -> str:
    """A plain-text table: one row per metric, one column per group.
    ``summary``: rows of :func:`summary_rows` or its DataFrame."""
    keys = list(group_keys)
    rows = _records(summary)
    groups: dict[tuple, None] = {}
    cell: dict[tuple, tuple[float, float]] = {}
    for r in rows:
        g = tuple(r.get(k) for k in keys)
        groups.setdefault(g, None)
        cell.setdefault((g, r["metric"]), (_nan(r["mean"]), _nan(r["ci95"])))
    if not keys:
        groups = {(): None}
    header = ["metric"] + [group_label(dict(zip(keys, g)), keys) if keys else "mean ± 95% CI" for g in groups]

    def cells(name):
        return [cell.get((g, name)) for g in groups]

    return ci_table(header, metrics, cells)


def _nan(x: Any) -> float:
    return math.nan if x is None else float(x)


# zlib's fastest level: about two thirds of the time of the default (6), files about a third larger.
PNG_OPTIONS = {"compress_level": 1}
#: The formats a figure is written in.
FORMATS = ("png", "svg", "pdf")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: str | Path, dpi: int = 120) -> Path:
    """Saves ``fig`` in the format its suffix names (png, svg or pdf) and closes it."""
    path = Path(path)
    fmt = path.suffix.lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"{path}: a figure is written as {', '.join(FORMATS)}, not {fmt or 'no suffix'}")
    import matplotlib

    # Text as text, not outlines, in SVG and PDF: a paper's editor can change it.
    with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        fig.savefig(path, format=fmt, **({"dpi": dpi, "pil_kwargs": PNG_OPTIONS} if fmt == "png" else {}))
    _plt().close(fig)
    return path


def _time_plot(
    lines: dict[str, tuple[list, list]], ylabel: str, path: Path, title: str, hline: float | None = None
) -> Path:
    """One line per label over time, the legend right of the axes (where
    it hides no data); the format from ``path``'s suffix."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 4))
    for label, (x, y) in lines.items():
        ax.plot(x, y, label=label, linewidth=0.8)
    if hline:
        ax.axhline(hline, color="grey", linestyle=":", linewidth=0.8, label="buffer")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    # A fixed title position and margins: matplotlib's automatic layout
    # (tight_layout, title placement) measures every tick label, twice.
    ax.set_title(title, y=1.0, fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    fig.subplots_adjust(left=0.08, right=0.78, bottom=0.12, top=0.92)
    return save(fig, path)


def plot_queues(series: dict[str, dict], capacity: float | None, path: Path, title: str) -> Path:
    """Queue occupancy over time, one line per method (the EWT paper's Fig. 3)."""
    lines = {k: (s["time_s"], [b / 1000 for b in s["bytes"]]) for k, s in series.items()}
    return _time_plot(lines, "bottleneck queue (kB)", path, title, capacity / 1000 if capacity else None)


def plot_windows(traces: dict[str, dict], path: Path, title: str) -> Path:
    """Effective window min(cwnd, rwnd) of one flow (the EWT paper's Fig. 10)."""
    lines = {f"{k} effective": (t["time_s"], [w / 1000 for w in t["effective"]]) for k, t in traces.items()}
    return _time_plot(lines, "window (kB)", path, title)
