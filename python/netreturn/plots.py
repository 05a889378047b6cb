"""The figures of replicated runs, drawn with seaborn over matplotlib.

Every figure says how many runs it rests on. The metrics figure shows each
run as a dot and, from two runs per group on, the mean with its 95 %
confidence interval (Student t, as the tables: :func:`~netreturn.stats.mean_ci`)
on an axis fitted to the data, not a bar from zero: 96 % against 100 % stays
visible. A t interval from a few runs can reach past what a metric can take
(a Jain index below 0); it is clipped to the metric's range
(:func:`~netreturn.table.bounds`) and the caption says so. One run per group
shows the values alone; fewer than :data:`SMALL_N` runs per group warn
(:func:`small_sample_note`). Legends sit outside the axes.

Only the standard library and the package are imported at module level:
``netreturn run`` prints its table without pandas or matplotlib.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Iterable, Mapping, Sequence

from .report import METRICS, _plt, numeric_columns
from .stats import finite, mean_ci, t975
from .table import bounds, scale, shown_unit, unit_of

#: Fewer runs per group than this, and the figures and the command line warn.
SMALL_N = 5


class SmallSampleWarning(UserWarning):
    """Confidence intervals from fewer than :data:`SMALL_N` runs per group."""


def n_text(ns: Iterable[int]) -> str:
    """``n = 30 runs per group``, or ``n = 3 to 5 runs per group``."""
    ns = [n for n in ns if n > 0]
    if not ns:
        return "n = 0"
    lo, hi = min(ns), max(ns)
    runs = "run" if hi == 1 else "runs"
    return f"n = {lo} {runs} per group" if lo == hi else f"n = {lo} to {hi} {runs} per group"


def small_sample_note(ns: Iterable[int]) -> str | None:
    """A warning when a group has 2 to :data:`SMALL_N` - 1 runs (a
    confidence interval is drawn, but rests on too few), else None. A
    single run shows its values and no interval: nothing to warn of."""
    ns = [n for n in ns if n > 0]
    lo = min((n for n in ns if n > 1), default=SMALL_N)
    if lo >= SMALL_N:
        return None
    return (f"{n_text(ns)}: a 95 % CI from {lo} runs uses t = {t975(lo - 1):.2f} and a standard deviation "
            f"from {lo} values, so it is wide and itself unreliable; run at least {SMALL_N} seeds (the papers use 30)")


def choose_metrics(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str] | None = None,
                   skip: Sequence[str] = ()) -> list[tuple[str, str]]:
    """``(name, label)`` of the metrics to draw: ``metrics`` as given, or
    the headline metrics (:data:`~netreturn.report.METRICS`) that have a
    value. Raises ValueError naming an unknown metric and the known ones."""
    labels = dict(METRICS)
    have = [c for c in numeric_columns(rows) if c not in skip and c not in ("seed", "run")]
    if metrics is None:
        return [(m, lab) for m, lab in METRICS
                if m in have and finite(r.get(m) for r in rows)]
    unknown = [m for m in metrics if m not in have]
    if unknown:
        raise ValueError(f"--metrics {','.join(unknown)}: not a metric of these runs; they have: {', '.join(have)}")
    return [(m, labels.get(m, m)) for m in metrics]


def metrics_figure(rows: Sequence[Mapping[str, Any]], groups: Sequence[str], name: str,
                   metrics: Sequence[str] | None = None) -> Any:
    """One panel per metric: each run a dot, and from two runs per group the
    mean and its 95 % CI clipped to the metric's range (diamond and
    whiskers), on an axis fitted to the data. ``rows``: one dict per run;
    ``groups``: each run's group label. Warns (:class:`SmallSampleWarning`)
    below :data:`SMALL_N` runs per group. Returns the matplotlib figure."""
    import pandas as pd
    import seaborn as sns
    from matplotlib.ticker import MaxNLocator

    plt = _plt()
    order = list(dict.fromkeys(groups))
    counts = {g: 0 for g in order}
    for g in groups:
        counts[g] += 1
    ns = list(counts.values())
    many = max(ns) > 1
    chosen = choose_metrics(rows, metrics)
    cols = min(3, max(1, len(chosen)))
    nrows = max(1, math.ceil(len(chosen) / cols))
    width = max(3.2 * cols, 1.2 + 0.45 * len(order) * cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(width, 2.5 * nrows + 1.5), squeeze=False)
    clipped: list[str] = []
    short = [g.split("=", 1)[-1] if g.count("=") == 1 else g for g in order]  # the value alone for one key
    if len(set(short)) < len(short):
        short = order
    shown = dict(zip(order, short))
    for ax, (m, label) in zip(axes.flat, chosen):
        f = scale(unit_of(m))
        lo, hi = (b * f for b in bounds(m))
        ax.yaxis.set_major_locator(MaxNLocator(5))  # before drawing: each tick made costs a text layout
        d = pd.DataFrame({"group": [shown[g] for g in groups],
                          "value": [math.nan if r.get(m) is None else float(r[m]) * f for r in rows]}).dropna()
        sns.stripplot(data=d, x="group", y="value", order=short, ax=ax, color="0.35", alpha=0.6 if many else 1.0,
                      size=5 if not many else 3.5 if max(ns) <= 10 else 2.5, jitter=0.18 if many else False, zorder=1)
        if many:
            def ci(x, lo=lo, hi=hi, label=label):
                m_, h, _ = mean_ci(x)
                if math.isnan(h):
                    return m_, m_
                if m_ - h < lo or m_ + h > hi:
                    clipped.append(label)
                return max(m_ - h, lo), min(m_ + h, hi)

            sns.pointplot(data=d, x="group", y="value", order=short, ax=ax, errorbar=ci, linestyle="none",
                          color="C3", markers="D", markersize=4, capsize=0.3, err_kws={"linewidth": 1.2}, zorder=3)
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("")
        ax.set_ylabel(shown_unit(unit_of(m)), fontsize=8)
        ax.tick_params(axis="x", labelsize=7, rotation=30 if len(order) > 3 else 0)
        ax.tick_params(axis="y", labelsize=7)
    for ax in list(axes.flat)[len(chosen):]:
        ax.remove()
    if many:
        fig.suptitle(f"{name}: runs (dots), mean and 95 % CI (diamonds, whiskers)", fontsize=10)
        caption = f"{n_text(ns)}. 95 % CI by Student's t over the runs, as in summary.csv."
        if clipped:
            caption += (" Whiskers clipped to the metric's possible range (Jain and utilization 0 to 1, % 0 to 100,"
                        f" others at least 0) for: {', '.join(dict.fromkeys(clipped))}.")
    else:
        fig.suptitle(f"{name}: the value of one run per group", fontsize=10)
        caption = f"{n_text(ns)}: single values, no interval (run more seeds for a confidence interval)."
    note = small_sample_note(ns)
    if note:
        caption += f" Warning: {note}."
    if len(order) > 1 and any(s != g for s, g in zip(short, order)):
        caption += f" Groups: {order[0].split('=', 1)[0]}."
    fig.text(0.01, 0.01, _wrap(caption, width), fontsize=7.5, ha="left", va="bottom")
    height = 2.5 * nrows + 1.5  # inches: 0.8 for the title on top, 1.4 for the tick labels and caption below
    fig.subplots_adjust(left=0.07, right=0.98, top=1 - 0.8 / height, bottom=1.4 / height, wspace=0.35,
                        hspace=0.75)
    if note:
        warnings.warn(note, SmallSampleWarning, stacklevel=2)
    return fig


def _wrap(text: str, inches: float) -> str:
    """``text`` broken into lines that fit ``inches`` at 7.5 pt (about 19
    characters an inch); matplotlib's own ``wrap=True`` lays the text out
    once per word, a third of the metrics figure's drawing time."""
    import textwrap

    return textwrap.fill(text, max(40, int(inches * 19)))


def _legend_outside(ax: Any) -> None:
    """The legend right of the axes, where it covers no data."""
    import seaborn as sns

    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=7, title=None)


def cdf_figure(values: Mapping[str, Sequence[float]], xlabel: str, title: str, caption: str) -> Any | None:
    """Empirical CDFs, one line per label; None without any finite value.
    A log x axis when the values span more than two decades."""
    import pandas as pd
    import seaborn as sns

    d = pd.DataFrame([(k, float(v)) for k, vs in values.items() for v in vs
                      if v is not None and math.isfinite(float(v))], columns=["group", "x"])
    if d.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    sns.ecdfplot(data=d, x="x", hue="group", hue_order=[k for k in values if (d.group == k).any()], ax=ax)
    if d.x.min() > 0 and d.x.max() / d.x.min() > 100:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction at or below")
    ax.set_title(title, fontsize=10)
    _legend_outside(ax)
    fig.text(0.01, 0.01, _wrap(caption, 8), fontsize=7.5, ha="left", va="bottom")
    fig.subplots_adjust(left=0.09, right=0.76, bottom=0.2, top=0.9)
    return fig


def fct_cdf_figure(fct_s: Mapping[str, Sequence[float | None]], runs: Mapping[str, int], name: str) -> Any | None:
    """CDF of the flow completion times of every finished flow of every run, per group."""
    ms = {k: [v * 1000 for v in finite(vs)] for k, vs in fct_s.items()}
    flows = [len(v) for v in ms.values()]
    lo, hi = min(flows, default=0), max(flows, default=0)
    caption = (f"{n_text(runs.values())}; {lo if lo == hi else f'{lo} to {hi}'} finished flows per group "
               "(unfinished transfers have no FCT and are left out).")
    return cdf_figure(ms, "flow completion time (ms)", f"{name}: flow completion time, every finished flow", caption)


def rtt_cdf_figure(traces: Mapping[str, Mapping[str, Any]], name: str) -> Any | None:
    """CDF of the RTT samples of the traced flow, per group (the run that kept its time series)."""
    vals = {f"{k} (flow {t.get('flow', '?')}, seed {t.get('seed', '?')})": t.get("rtt_ms") or []
            for k, t in traces.items()}
    return cdf_figure(vals, "RTT sample (ms)", f"{name}: RTT samples of one traced flow per group",
                      "Every RTT sample the traced flow took during the run; one run per group (the one that kept "
                      "its time series).")
