"""Results: of one call of :func:`netreturn.run`, or of a results folder
read back with :func:`netreturn.open`.

A results folder holds one experiment: one scenario file, one set of
``--set`` overrides and one set of swept parameters. Its runs are the JSON
files under ``<folder>/runs/`` (:class:`~netreturn.runner.Store`), which
any number of invocations with those settings add to (more seeds, more
swept values, or the rest of an interrupted sweep); ``experiment.json``
records the settings, and an invocation with other settings is refused
(:func:`claim_folder`) instead of mixing its runs into the folder's tables.
The tables ``runs.csv``, ``summary.csv`` and ``flows.csv`` always cover
every run stored in the folder (:func:`write_tables`).

>>> import netreturn
>>> res = netreturn.open("results/ewt-scenario2")
>>> res.runs      # one row per run: run id, seed, parameters (typed), metrics
>>> res.series    # time series, long form: run, series, time_s, value
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from . import report
from .files import atomic_write
from .runner import flow_rows, run_rows
from .scenarios import BUNDLED_SCENARIOS, ScenarioError, load, overrides_list, param_value, resolve

#: The settings of the experiment a folder holds.
EXPERIMENT = "experiment.json"
#: The tables of a folder, each covering every stored run.
TABLES = ("runs.csv", "summary.csv", "flows.csv")


@dataclass
class Results:
    """Replicated runs of one scenario: one per seed per combination of
    swept values.

    Parameter values are typed as the scenario reads them (``flows`` an
    int, ``loss`` a float, ``queue`` a str: :func:`~netreturn.scenarios.param_value`),
    so sorting and filtering work on numbers. The tables are pandas
    DataFrames built on each access; the ``*_rows`` methods give the same as
    lists of dicts without importing pandas.

    Attributes:
        scenario: the scenario's description (name, description, params, seeds).
        group_keys: the swept parameters, in the order they were given.
        raw: one dict per run as the simulator returned it (``summary``,
            ``flows``, ``params``, ``seed`` and, for the runs that kept them,
            ``queue_series`` and ``traces``).
    """

    scenario: dict
    group_keys: list[str]
    raw: list[dict]

    def run_rows(self) -> list[dict]:
        """One dict per run (what :attr:`runs` holds, without pandas)."""
        return run_rows(self.raw)

    def metrics(self) -> list[str]:
        """The numeric columns of :attr:`runs` that are measurements: not the
        seed nor a parameter (a ``--set flows=13`` is numeric too)."""
        params = {k for r in self.raw for k in r.get("params", {})}
        return [c for c in report.numeric_columns(self.run_rows()) if c not in params and c != "seed"]

    def summary_rows(self) -> list[dict]:
        """Mean, CI and n per metric per group (what :attr:`summary` holds, without pandas)."""
        return report.summary_rows(self.run_rows(), self.group_keys, self.metrics())

    @property
    def runs(self):
        """One row per run: run id (``run``, where known), seed, every
        parameter (typed) and every summary metric."""
        import pandas as pd

        return pd.DataFrame(self.run_rows())

    @property
    def flows(self):
        """One row per TCP flow per run: seed, the swept parameters and the
        flow's metrics (``fct_s``, ``goodput_mbps``, ...)."""
        import pandas as pd

        return pd.DataFrame(flow_rows(self.raw, self.group_keys))

    @property
    def summary(self):
        """Mean, 95 % CI half-width (``ci95``) and ``n`` per metric per
        group of swept values (long form: one row per group and metric)."""
        import pandas as pd

        return pd.DataFrame(self.summary_rows())

    @property
    def series(self):
        """The time series of the runs that kept them (the first seed of each
        group, by default), long form: one row per sample, with columns
        ``run``, ``seed``, the swept parameters, ``series`` (``queue_bytes``
        and ``avail_mbps`` of the monitored link; ``cwnd``, ``rwnd``,
        ``effective``, ``rtt_ms``, ... of a traced flow), ``link`` or
        ``flow`` (what the series is of), ``time_s`` and ``value``."""
        import pandas as pd

        frames = [pd.DataFrame(rows) for rows in series_columns(self.raw, self.group_keys)]
        if not frames:
            return pd.DataFrame(columns=["run", "seed", *self.group_keys, "series", "link", "flow", "time_s",
                                         "value"])
        return pd.concat(frames, ignore_index=True)

    def table(self) -> str:
        """The summary as the command line prints it: one row per metric, one
        column per group, mean ± 95 % CI in each metric's unit."""
        return report.table_text(self.summary_rows(), self.group_keys)


def series_columns(raw: Iterable[dict], group_keys: Sequence[str]) -> list[dict[str, list]]:
    """The time series of ``raw`` as column dicts (one per series of one
    run) for :attr:`Results.series`."""
    out = []
    for r in raw:
        head = {"run": r.get("run"), "seed": r["seed"],
                **{k: param_value(r.get("params", {}).get(k)) for k in group_keys}}
        q = r.get("queue_series") or {}
        link = r.get("monitor_link") or "bottleneck"
        for name, values in q.items():
            if name == "time_s":
                continue
            n = len(values)
            out.append({**{k: [v] * n for k, v in head.items()},
                        "series": ["queue_bytes" if name == "bytes" else name] * n, "link": [link] * n,
                        "flow": [None] * n, "time_s": q["time_s"], "value": values})
        for t in r.get("traces") or []:
            for name, values in t.items():
                if name in ("time_s", "flow") or not isinstance(values, list):
                    continue
                n = len(values)
                out.append({**{k: [v] * n for k, v in head.items()}, "series": [name] * n, "link": [None] * n,
                            "flow": [t.get("flow")] * n, "time_s": t["time_s"], "value": values})
    return out


def default_folder_name(scenario: str | Path) -> str:
    """A bundled scenario's folder name: its name with ``-`` for ``/``
    (``awm/fairness`` -> ``awm-fairness``, distinct from
    ``sarbe/fairness``); another file's name without ``.toml``."""
    path = resolve(scenario).resolve()
    try:
        return path.relative_to(BUNDLED_SCENARIOS).with_suffix("").as_posix().replace("/", "-")
    except ValueError:
        return path.stem


def settings(scenario: str | Path, sets: Mapping[str, Any] | None, sweep: Mapping[str, Sequence[Any]] | None) -> dict:
    """What makes an experiment (the content of ``experiment.json``): the
    scenario file (its path and a hash of its text), the ``--set``
    overrides and the swept values, as the simulator receives them."""
    path = resolve(scenario)
    return {
        "scenario": str(path.resolve()),
        "scenario_sha256": hashlib.sha256(path.read_bytes()).hexdigest()[:16],
        "set": dict(overrides_list(sets)),
        "sweep": {k: [overrides_list({k: x})[0][1] for x in vals] for k, vals in (sweep or {}).items()},
    }


def _differences(old: dict, new: dict) -> list[str]:
    """What differs between two experiments' settings, in words."""
    out = []
    if old.get("scenario") != new["scenario"]:
        out.append(f"scenario {old.get('scenario')} there, {new['scenario']} here")
    elif old.get("scenario_sha256") != new["scenario_sha256"]:
        out.append(f"the scenario file {new['scenario']} has changed since")
    a, b = old.get("set", {}), new["set"]
    for k in sorted(set(a) | set(b)):
        if param_value(a.get(k)) != param_value(b.get(k)):  # 0.010 on the command line is 0.01 from Python
            out.append(f"--set {k}: {a.get(k, '(not set)')} there, {b.get(k, '(not set)')} here")
    ka, kb = list(old.get("sweep", {})), list(new["sweep"])
    if sorted(ka) != sorted(kb):
        out.append(f"swept parameters: {', '.join(ka) or 'none'} there, {', '.join(kb) or 'none'} here")
    return out


def read_settings(folder: str | Path) -> dict | None:
    """The experiment a folder holds (its ``experiment.json``), or None."""
    p = Path(folder) / EXPERIMENT
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{p}: not valid JSON ({e}); it records the settings of the runs in "
                            f"{Path(folder)}", str(p)) from None


def has_runs(folder: str | Path) -> bool:
    """Whether any run is stored in ``folder``."""
    return any(p.suffix == ".json" for p in (Path(folder) / "runs").glob("*.json"))


def conflict(folder: str | Path, new: dict) -> list[str]:
    """Why ``folder`` cannot take runs of the experiment ``new``: the
    differences in words; empty if it can (a new folder, one whose sweep
    stored no run before it stopped, the same settings, or a folder made
    before ``experiment.json`` existed)."""
    old = read_settings(folder)
    return [] if old is None or not has_runs(folder) else _differences(old, new)


def claim_folder(folder: str | Path, new: dict, flag: str = "--out") -> None:
    """Records ``new`` as the experiment of ``folder`` (adding its swept
    values to those recorded), or raises :class:`ScenarioError` when the
    folder holds another experiment: its tables would mix the two. Call
    with the folder locked (:class:`~netreturn.files.FolderLock`)."""
    folder = Path(folder)
    why = conflict(folder, new)
    if why:
        raise ScenarioError(f"{flag} {folder}: holds the runs of other settings ({'; '.join(why)}); its tables "
                            "would mix the two. Write into another folder, or delete this one to start over",
                            str(folder / EXPERIMENT))
    old = (read_settings(folder) or {}) if has_runs(folder) else {}
    merged = dict(new)
    merged["sweep"] = {k: list(dict.fromkeys([*old.get("sweep", {}).get(k, []), *v])) for k, v in new["sweep"].items()}
    folder.mkdir(parents=True, exist_ok=True)
    if merged != old:
        atomic_write(folder / EXPERIMENT, json.dumps(merged, indent=1))


def stored_runs(folder: str | Path, skip: Iterable[str] = ()) -> list[dict]:
    """Every run stored in ``folder`` (``runs/<id>.json``), each with its
    id as ``run``, except the ids in ``skip``; a torn file (a crash while
    writing) is left out, as the store does."""
    skip = set(skip)
    out = []
    for p in sorted((Path(folder) / "runs").glob("*.json")):
        if p.stem in skip or p.name.startswith("."):
            continue
        try:
            r = json.loads(p.read_text())
        except json.JSONDecodeError:
            continue
        r["run"] = p.stem
        out.append(r)
    return out


def _ordered(raw: list[dict], order: Mapping[str, Sequence[str]]) -> list[dict]:
    """Runs sorted by swept values in the order they were given, then seed."""
    index = {k: {v: i for i, v in enumerate(vals)} for k, vals in order.items()}

    def key(r: dict) -> tuple:
        p = r.get("params", {})
        return (*(index[k].get(p.get(k), len(index[k])) for k in order), r["seed"])

    return sorted(raw, key=key)


def folder_results(folder: str | Path, these: Sequence[dict] = ()) -> Results:
    """The results of every run stored in ``folder``: ``these`` (runs in
    hand, each with its ``run`` id) and the others read from disk."""
    folder = Path(folder)
    exp = read_settings(folder) or {}
    raw = list(these) + stored_runs(folder, skip=[r["run"] for r in these if r.get("run")])
    if exp:
        keys = list(exp.get("sweep", {}))
    else:  # a folder made before experiment.json: the parameters that vary are the groups
        seen: dict[str, set] = {}
        for r in raw:
            for k, v in r.get("params", {}).items():
                seen.setdefault(k, set()).add(v)
        keys = [k for k, vs in seen.items() if len(vs) > 1]
    order = exp.get("sweep") or {k: sorted({r.get("params", {}).get(k) for r in raw}, key=str) for k in keys}
    info = {"name": Path(exp.get("scenario", "")).stem or folder.name, "scenario": exp.get("scenario"),
            "set": exp.get("set", {})}
    if exp.get("scenario"):
        try:
            desc = load(exp["scenario"])
            info = {**desc, **info, "name": desc["name"]}
        except ScenarioError:
            pass  # the scenario file is gone or changed: the folder's runs are all there is
    return Results(info, keys, _ordered(raw, order))


def write_tables(folder: str | Path, res: Results) -> list[Path]:
    """``runs.csv``, ``summary.csv``, ``flows.csv`` and ``links.csv`` (every
    link direction, :mod:`netreturn.links`) of ``res`` into ``folder``, each
    written whole (a reader never sees half a table)."""
    from .links import link_rows

    folder = Path(folder)
    rows = res.run_rows()
    return [report.write_csv(folder / "runs.csv", rows),
            report.write_csv(folder / "summary.csv", report.summary_rows(rows, res.group_keys, res.metrics())),
            report.write_csv(folder / "flows.csv", flow_rows(res.raw, res.group_keys)),
            report.write_csv(folder / "links.csv", link_rows(res.raw, res.group_keys))]


def open_results(folder: str | Path) -> Results:
    """The results stored in a folder (``netreturn run --out DIR``, or
    ``netreturn.run(out=DIR)``), without running anything: every run under
    ``DIR/runs``, grouped by the parameters swept into it.

    Raises :class:`FileNotFoundError` naming the folder when it holds no runs."""
    folder = Path(folder)
    if not (folder / "runs").is_dir():
        what = "is not a folder" if not folder.is_dir() else "holds no runs (no runs/ folder in it)"
        raise FileNotFoundError(f"{folder}: {what}; a results folder is what `netreturn run --out DIR` "
                                "or netreturn.run(out=DIR) writes")
    res = folder_results(folder)
    if not res.raw:
        raise FileNotFoundError(f"{folder}/runs: no stored runs in it")
    return res
