"""``netreturn report DIR``: one self-contained HTML page per results folder.

The page holds the summary table (mean ± 95 % CI per metric and group, in
the units of :mod:`netreturn.table`), interactive plots (Plotly, its
JavaScript embedded in the page: it opens offline, from a file or a mail),
the time series of each group's series seed, one table per run and per
flow, and the settings: the topology (``netreturn show``), the scenario as
it ran (``show-config``), the overrides and the simulator build from
``manifest.json``.

It reads what ``netreturn run``/``sweep`` and ``netreturn reproduce`` leave
in the folder: ``summary.csv``, ``runs.csv``, ``flows.csv`` where they are,
and the run store (``runs/*.json``, :class:`~netreturn.runner.Store`)
otherwise and for the time series. A reproduction's ``report.md`` and
figures are put in the page as they are.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .files import atomic_write
from .report import METRICS, group_label, summary_rows
from .runner import flow_rows, run_rows
from .table import ci, num, scale, shown_unit, unit_of
from .task import json_safe

#: Points per line of a time series in the page (a run samples every 10 ms:
#: 30 000 points of a 300 s run would weigh megabytes and draw slowly).
MAX_POINTS = 3000
#: Runs whose flows get a table of their own; the rest are counted.
MAX_FLOW_TABLES = 60
#: Rows of the per-run table.
MAX_RUN_ROWS = 2000
#: Plotly's default colours, in trace order (the test looks for the first).
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


class ReportError(ValueError):
    """The folder is not a results folder (names what is missing)."""


@dataclass
class Folder:
    """What a results folder holds, read once."""

    path: Path
    group_keys: list[str]
    summary: list[dict]
    runs: list[dict]
    flows: list[dict]
    series: list[dict] = field(default_factory=list)   # stored runs with a time series
    param_keys: list[str] = field(default_factory=list)  # the parameters that vary across the stored runs
    scenario: str | None = None
    overrides: dict = field(default_factory=dict)
    manifest: dict = field(default_factory=dict)
    sweep: dict = field(default_factory=dict)  # experiment.json's, where the folder has one
    links: list[dict] = field(default_factory=list)  # links.csv: per link direction per run


def _value(text: str) -> Any:
    """A CSV cell as written by :func:`netreturn.report.write_csv`: empty is
    missing (NaN for numbers), numbers are numbers, the rest stays text."""
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def read_csv(path: Path) -> list[dict]:
    """Rows of a table the folder holds; a run's id (``run``) stays text."""
    with open(path, newline="") as f:
        return [{k: v if k == "run" else _value(v) for k, v in r.items()} for r in csv.DictReader(f)]


def _stored(path: Path) -> list[dict]:
    out = []
    for p in sorted((path / "runs").glob("*.json")):
        try:
            out.append(json.loads(p.read_text()))
        except (json.JSONDecodeError, OSError):
            continue  # a torn file: the run store runs it again
    return out


def load(path: str | Path) -> Folder:
    """Reads a results folder (see the module's text); raises
    :class:`ReportError` naming the folder when it holds no results."""
    path = Path(path)
    if not path.is_dir():
        raise ReportError(f"{path}: no such folder (give the --out folder of `netreturn run` or `reproduce`)")
    stored = _stored(path)
    names: dict[str, None] = {}
    for r in stored:
        names.update(dict.fromkeys(r.get("params", {})))
    varying = [k for k in names if len({str(r.get("params", {}).get(k)) for r in stored}) > 1]
    if (path / "summary.csv").is_file():
        summary = read_csv(path / "summary.csv")
        head = list(summary[0]) if summary else []
        keys = head[:head.index("metric")] if "metric" in head else []
        runs = read_csv(path / "runs.csv") if (path / "runs.csv").is_file() else run_rows(stored)
    elif stored:
        runs = run_rows(stored)
        keys = varying
        summary = summary_rows(runs, keys)
    else:
        raise ReportError(f"{path}: no summary.csv and no stored runs (runs/*.json): not a results folder of "
                          "`netreturn run` or `netreturn reproduce`")
    if (path / "flows.csv").is_file():
        flows = read_csv(path / "flows.csv")
    else:
        flows = flow_rows([r for r in stored if "flows" in r], varying)
    series = [r for r in stored if r.get("queue_series")]
    if keys and all(k in r.get("params", {}) for k in keys for r in series):
        # Only the groups of the tables: the store may hold an earlier sweep's runs too.
        groups = {tuple(str(x.get(k)) for k in keys) for x in summary}
        series = [r for r in series if tuple(str(r["params"][k]) for k in keys) in groups]
    manifest = {}
    if (path / "manifest.json").is_file():
        try:
            manifest = json.loads((path / "manifest.json").read_text())
        except json.JSONDecodeError:
            manifest = {}
    first = series[0] if series else (stored[0] if stored else {})
    # The overrides every run shares (the --set ones); the swept ones are the group keys.
    shared = dict(first.get("params", {}))
    for r in stored:
        shared = {k: v for k, v in shared.items() if r.get("params", {}).get(k) == v}
    overrides = {k: v for k, v in shared.items() if k not in keys}
    scenario, sweep = first.get("scenario"), {}
    if (path / "experiment.json").is_file():  # the folder's own record of what it runs
        try:
            exp = json.loads((path / "experiment.json").read_text())
            scenario, overrides, sweep = exp.get("scenario", scenario), exp.get("set", overrides), exp.get("sweep", {})
        except json.JSONDecodeError:
            pass
    links = read_csv(path / "links.csv") if (path / "links.csv").is_file() else []
    return Folder(path, keys, summary, runs, flows, series, varying, scenario, overrides, manifest, sweep, links)


# -- HTML pieces ------------------------------------------------------------

def _e(x: Any) -> str:
    return html.escape(str(x))


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _label(name: str) -> str:
    """A metric's label with its shown unit (``fct_mean_s``: "mean FCT (ms)")."""
    for m, lab in METRICS:
        if m == name:
            return lab
    unit = shown_unit(unit_of(name))
    return f"{name} ({unit})" if unit else name


def _groups(f: Folder) -> list[tuple]:
    seen: dict[tuple, None] = {}
    for r in f.summary:
        seen.setdefault(tuple(r.get(k) for k in f.group_keys), None)
    return list(seen) or [()]


def _metrics(f: Folder) -> list[str]:
    """The headline metrics with a value, in :data:`METRICS` order, then the
    rest of the summary's metrics."""
    have: dict[str, None] = {}
    for r in f.summary:
        if r.get("mean") is not None and not (isinstance(r["mean"], float) and math.isnan(r["mean"])):
            have.setdefault(r["metric"], None)
    head = [m for m, _ in METRICS if m in have]
    return head + [m for m in have if m not in head]


def _cells(f: Folder) -> dict[tuple, dict]:
    return {(tuple(r.get(k) for k in f.group_keys), r["metric"]): r for r in f.summary}


def summary_table(f: Folder, metrics: Sequence[str]) -> str:
    """One row per group, one column per metric: mean ± 95 % CI (n)."""
    cells = _cells(f)
    rows = []
    for g in _groups(f):
        row = list(g) if f.group_keys else ["all runs"]
        for m in metrics:
            c = cells.get((g, m))
            row.append(ci(c["mean"], c["ci95"], unit_of(m)) if c else "-")
        n = max((cells[(g, m)]["n"] or 0 for m in metrics if (g, m) in cells), default=0)
        rows.append(row + [n])
    return _table((f.group_keys or ["group"]) + [_label(m) for m in metrics] + ["runs"], rows, "summary")


def _bar_figures(f: Folder, metrics: Sequence[str]) -> list[dict]:
    """One bar chart per metric: a bar per group with its 95 % CI."""
    cells = _cells(f)
    groups = _groups(f)
    names = [str(g[0]) if len(g) == 1 else group_label(dict(zip(f.group_keys, g)), f.group_keys) if g else "all"
             for g in groups]
    figs = []
    for m in metrics:
        k = scale(unit_of(m))
        ys, es = [], []
        for g in groups:
            c = cells.get((g, m), {})
            ys.append(None if c.get("mean") is None else c["mean"] * k)
            es.append(0 if c.get("ci95") is None else c["ci95"] * k)
        figs.append({"data": [{"type": "bar", "x": names, "y": ys, "marker": {"color": COLOURS[0]},
                               "error_y": {"type": "data", "array": es, "visible": True}, "name": _label(m)}],
                     "layout": {"title": {"text": _label(m), "font": {"size": 13}}, "height": 260,
                                "margin": {"l": 50, "r": 10, "t": 36, "b": 60}}})
    return figs


def _thin(xs: list, ys: list) -> tuple[list, list]:
    step = max(1, math.ceil(len(xs) / MAX_POINTS))
    return xs[::step], ys[::step]


def _series_figures(f: Folder) -> list[dict]:
    """The bottleneck queue over time, one line per group (its series seed),
    and the effective window min(cwnd, rwnd) of one flow (the EWT paper's
    Figs. 3 and 10)."""
    if not f.series:
        return []
    queue, window = [], []
    keys = f.param_keys
    for i, r in enumerate(f.series):
        name = (group_label(r.get("params", {}), keys) if keys else "run") + f", seed {r.get('seed')}"
        colour = COLOURS[i % len(COLOURS)]
        s = r["queue_series"]
        x, y = _thin(s["time_s"], [None if b is None else b / 1000 for b in s["bytes"]])
        queue.append({"type": "scatter", "mode": "lines", "x": x, "y": y, "name": name,
                      "line": {"width": 1, "color": colour}})
        for t in r.get("traces", [])[:1]:
            x, y = _thin(t["time_s"], [None if w is None else w / 1000 for w in t["effective"]])
            window.append({"type": "scatter", "mode": "lines", "x": x, "y": y, "line": {"width": 1, "color": colour},
                           "name": f"{name}, flow {t.get('flow')}"})
    axes = {"xaxis": {"title": {"text": "time (s)"}}, "height": 360, "margin": {"l": 60, "r": 10, "t": 40, "b": 50}}
    figs = [{"data": queue, "layout": {**axes, "title": {"text": "bottleneck queue"},
                                       "yaxis": {"title": {"text": "queue (kB)"}}}}]
    if window:
        figs.append({"data": window, "layout": {**axes, "title": {"text": "effective window min(cwnd, rwnd)"},
                                                "yaxis": {"title": {"text": "window (kB)"}}}})
    return figs


def _run_table(f: Folder, metrics: Sequence[str]) -> str:
    cols = [k for k in f.group_keys if k != "seed"] + ["seed"] + [m for m in metrics if m in (f.runs[0] if f.runs
                                                                                              else {})]
    rows = [[r.get(c) if c in f.group_keys or c == "seed" else num(r.get(c), unit_of(c)) for c in cols]
            for r in f.runs[:MAX_RUN_ROWS]]
    more = f"<p>{len(f.runs) - MAX_RUN_ROWS} more runs in runs.csv.</p>" if len(f.runs) > MAX_RUN_ROWS else ""
    return _table([c if c in f.group_keys or c == "seed" else _label(c) for c in cols], rows, "runs") + more


FLOW_COLUMNS = ["flow", "src", "dst", "start_s", "fct_s", "goodput_mbps", "efficiency_pct", "bytes_delivered",
                "bytes_retransmitted", "loss_pct", "fast_retransmits", "timeouts"]


def _flow_tables(f: Folder) -> str:
    """One table per run (group and seed), its flows as rows."""
    keys = [k for k in (f.flows[0] if f.flows else {}) if k in f.group_keys or k in f.param_keys]
    runs: dict[tuple, list[dict]] = {}
    for r in f.flows:
        runs.setdefault(tuple(r.get(k) for k in keys) + (r.get("seed"),), []).append(r)
    parts = []
    for run, rows in list(runs.items())[:MAX_FLOW_TABLES]:
        cols = [c for c in FLOW_COLUMNS if c in rows[0]]
        body = [[num(r.get(c), unit_of(c)) if c.endswith(("_s", "_mbps", "_pct")) else r.get(c) for c in cols]
                for r in rows]
        title = ", ".join(f"{k}={v}" for k, v in zip(keys, run[:-1])) + (", " if keys else "") + f"seed {run[-1]}"
        head = [_label(c) if c.endswith(("_s", "_mbps", "_pct")) else c for c in cols]
        parts.append(f"<details><summary>{_e(title)}: {len(rows)} flows</summary>{_table(head, body, 'flows')}"
                     "</details>")
    if len(runs) > MAX_FLOW_TABLES:
        parts.append(f"<p>{len(runs) - MAX_FLOW_TABLES} more runs' flows in flows.csv.</p>")
    return "".join(parts) or "<p>No per-flow results in this folder.</p>"


def _links_table(f: Folder) -> str:
    """links.csv for each group's first seed: every link direction's utilization, drops and queue."""
    if not f.links:
        return "<p>No links.csv in this folder.</p>"
    first = min((r.get("seed") for r in f.links), key=lambda x: (x is None, x))
    rows = [r for r in f.links if r.get("seed") == first][:MAX_RUN_ROWS]
    cols = list(rows[0])
    body = [[num(r.get(c), unit_of(c)) if isinstance(r.get(c), float) else r.get(c) for c in cols] for r in rows]
    return (f"<p>Seed {first} of each group (every seed in links.csv).</p>"
            + _table([f"{c} ({shown_unit(unit_of(c))})" if isinstance(rows[0].get(c), float) and shown_unit(unit_of(c))
                      else c for c in cols], body, "links"))


def _settings(f: Folder) -> str:
    from . import __version__
    from .scenarios import ScenarioError, show_config

    rows = [["scenario", f.scenario or "-"],
            ["overrides (--set)", ", ".join(f"{k}={v}" for k, v in f.overrides.items()) or "none"],
            ["swept (groups)", "; ".join(f"{k} in {{{', '.join(map(str, v))}}}" for k, v in f.sweep.items())
             or ", ".join(f.group_keys) or "none"],
            ["simulator build of the runs", f.manifest.get("native_build", "-")],
            ["runs last updated", f.manifest.get("updated", "-")],
            ["page written by", f"netreturn {__version__}"]]
    text = drawing = ""
    if f.scenario and Path(f.scenario).is_file():
        from . import topology
        from .scenarios import model

        try:
            text = show_config(f.scenario, f.overrides)
            drawing = f'<div class="topology">{topology.svg(model(f.scenario, f.overrides))}</div>'
        except ScenarioError as e:
            text = f"(the scenario cannot be resolved here: {e})"
    resolved = drawing +  (f"<details><summary>The scenario as it ran (first group; <code>netreturn show-config</code>)"
                f"</summary><pre>{_e(text)}</pre></details>") if text else ""
    return _table(["setting", "value"], rows, "settings") + resolved


def _extras(f: Folder) -> str:
    """A reproduction's report.md and figures, as they are."""
    md = f.path / "report.md"
    if not md.is_file():
        return ""
    imgs = "".join(f'<figure><img alt="{_e(p.name)}" src="data:image/png;base64,'
                   f'{base64.b64encode(p.read_bytes()).decode()}"><figcaption>{_e(p.name)}</figcaption></figure>'
                   for p in sorted(f.path.glob("*.png")))
    return f'<h2 id="reproduction">The reproduction\'s report</h2><pre class="md">{_e(md.read_text())}</pre>{imgs}'


def _json(x: Any) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(json_safe(x), allow_nan=False).replace("</", "<\\/")


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f0f0f0; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 8px; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 12px; }
details { margin: 0.2em 0; }
figure img, .topology svg { max-width: 100%; height: auto; }
"""

# Errors in the page (uncaught, or through console.error) are kept on
# <html data-errors>: the test reads it.
CATCH = """function netreturnError(m) {
  document.documentElement.dataset.errors = (document.documentElement.dataset.errors || "") + m + "\\n"; }
window.addEventListener("error", function (e) { netreturnError(e.message); });
console.error = function () { netreturnError(Array.prototype.join.call(arguments, " ")); };"""


def render(f: Folder, title: str | None = None) -> str:
    """The page, as text."""
    import plotly.offline

    metrics = _metrics(f)
    head_metrics = [m for m, _ in METRICS if m in metrics]
    bars = _bar_figures(f, head_metrics or metrics)
    series = _series_figures(f)
    title = title or f"netreturn results: {f.path.name}"
    divs = "".join(f'<div id="bar{i}" class="plot"></div>' for i in range(len(bars)))
    sdivs = "".join(f'<div id="series{i}" class="plot"></div>' for i in range(len(series)))
    figures = [(f"bar{i}", fig) for i, fig in enumerate(bars)] + [(f"series{i}", fig) for i, fig in enumerate(series)]
    draw = "\n".join(f"Plotly.newPlot({_json(d)}, {_json(fig['data'])}, {_json(fig['layout'])}, "
                     f"{_json({'responsive': True, 'displaylogo': False, 'displayModeBar': d.startswith('series')})});"
                     for d, fig in figures)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<style>{STYLE}</style><script>{CATCH}</script>
<script>{plotly.offline.get_plotlyjs()}</script></head>
<body>
<h1>{_e(title)}</h1>
<p>{len(f.runs)} runs in {len(_groups(f))} group(s) from <code>{_e(f.path)}</code>.
<a href="#summary">Summary</a> · <a href="#plots">Plots</a> · <a href="#series">Time series</a> ·
<a href="#runs">Runs</a> · <a href="#flows">Flows</a> · <a href="#links">Links</a> ·
<a href="#settings">Settings</a></p>
<h2 id="summary">Summary: mean ± 95 % CI</h2>
{summary_table(f, head_metrics or metrics)}
<h2 id="plots">Per metric</h2>
<div class="plots">{divs}</div>
<h2 id="series">Time series</h2>
{sdivs or "<p>No time series stored in this folder (a run keeps them for its first seed).</p>"}
<h2 id="runs">Runs</h2>
{_run_table(f, head_metrics or metrics)}
<h2 id="flows">Flows</h2>
{_flow_tables(f)}
<h2 id="links">Links</h2>
{_links_table(f)}
<h2 id="settings">Settings</h2>
{_settings(f)}
{_extras(f)}
<script>
{draw}
</script>
</body></html>
"""


def write(path: str | Path, out: str | Path | None = None) -> Path:
    """Writes the page of the results folder ``path`` to ``out`` (default
    ``<path>/report.html``); returns where."""
    f = load(path)
    out = Path(out) if out is not None else f.path / "report.html"
    atomic_write(out, render(f))
    return out


def main(a: Any) -> int:
    """``netreturn report DIR [--out FILE]``."""
    import sys

    try:
        out = write(a.folder, a.out)
    except ReportError as e:
        print(f"netreturn: error: {e}", file=sys.stderr)
        return 2
    print(f"report: {out}")
    return 0
