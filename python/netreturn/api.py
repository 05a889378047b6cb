"""The Python API, mirroring the command line.

>>> import netreturn
>>> res = netreturn.run("ewt/scenario2", set={"flows": 13}, sweep={"queue": ["droptail", "red"]}, seeds=5,
...                     out="results/queues")
>>> res.runs        # one row per run (pandas DataFrame), swept values typed
>>> res.summary     # mean and 95 % CI per metric per group
>>> res.series      # time series, long form
>>> print(res.table())
>>> netreturn.open("results/queues").runs   # the same, read back from the folder
"""

from __future__ import annotations

import itertools
import math
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .args import expand_ranges
from .files import FolderLock
from .results import Results, claim_folder, folder_results, settings, write_tables
from .runner import RunSpec, run_many
from .scenarios import DEFAULT_SCENARIO, MAX_SEED, ScenarioError, for_python, load, resolve, swept

__all__ = ["MAX_RUNS", "Results", "expand", "run", "sweep_values"]


# The most runs one call starts: each run's spec and key are built up front
# (100 000 take about 15 s and 60 MB); more is a typo or a job to split.
MAX_RUNS = 100_000


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _too_many(combos: int, seeds: int, where: str = "") -> str:
    return (f"{where}{combos * seeds:,} runs ({combos:,} sweep combination(s) x {seeds:,} seed(s)) are more than one "
            f"sweep runs ({MAX_RUNS:,}); run fewer seeds or values, or split the sweep")


def sweep_values(sweep: Mapping[str, Any] | None) -> dict[str, list]:
    """``sweep`` with each entry a list of values: a single value (a string,
    a number) is one value, not a sequence to iterate (``{"queue": "red"}``
    sweeps one queue, not the letters r, e, d); a string with ranges
    (``{"flows": "10:100:10"}``) gives their values, as ``--sweep`` does
    (:func:`netreturn.args.expand_ranges`). Raises
    :class:`ScenarioError` for a sweep that is not a mapping, or an entry
    without values."""
    if sweep is None:
        return {}
    if not isinstance(sweep, Mapping):
        raise ScenarioError(f"sweep must be a dict of parameter name to values, like {{'queue': ['droptail', 'red']}}"
                            f", got {type(sweep).__name__} {sweep!r}")
    out = {}
    for k, v in sweep.items():
        if isinstance(v, str) and ":" in v:
            try:
                vals = list(expand_ranges(v))
            except ValueError as e:
                raise ScenarioError(f"sweep={{{k!r}: {v!r}}}: {e}") from None
        elif isinstance(v, (str, bytes, int, float, bool)) or not hasattr(v, "__iter__") or isinstance(v, Mapping):
            vals = [v]
        else:
            vals = list(v)
        if not vals:
            raise ScenarioError(f"sweep={{{k!r}: {v!r}}}: no values to sweep; give a value or a list of values")
        out[str(k)] = vals
    return out


def expand(sweep: Mapping[str, Sequence[Any]] | None) -> list[dict]:
    """The cartesian product of swept parameter values, one dict per
    combination (``[{}]`` without a sweep)."""
    sweep = sweep_values(sweep)
    if not sweep:
        return [{}]
    keys = list(sweep)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(sweep[k] for k in keys))]


def run(
    scenario: str | Path = DEFAULT_SCENARIO,
    *,
    set: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Sequence[Any] | Any] | None = None,
    seeds: int | None = None,
    seed: int | None = None,
    jobs: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    backend: str = "local",
    scheduler: Any = None,
    keep_series_seed: int | None = None,
    on_result: Callable[[RunSpec, dict], None] | None = None,
    tables: bool = True,
    wording: str = "python",
) -> Results:
    """Runs ``scenario`` over ``seeds`` seeds (1..n) or one ``seed``, for each
    combination of ``sweep`` values on top of ``set`` overrides.

    Args:
        scenario: a scenario file, or a bundled scenario's name (``netreturn list``).
        set: parameter overrides, ``{"flows": 13, "file_bytes": "300kB"}``.
        sweep: values to compare, ``{"queue": ["droptail", "red"]}``; several
            entries give their cartesian product; a single value is one value.
        seeds: run seeds 1..``seeds`` (default: the scenario's ``run.seeds``).
        seed: run this one seed instead.
        jobs: parallel processes (default: every core).
        out: a results folder: each run is stored there as it finishes
            (``out/runs``), runs stored already are not run again (an
            interrupted sweep resumes), and, with ``tables``, ``runs.csv``,
            ``summary.csv`` and ``flows.csv`` are written covering every run
            stored in the folder. A folder holds one experiment: ``out`` with
            runs of another scenario, other ``set`` values or other swept
            parameters is refused (:class:`ScenarioError`), never mixed.
        progress: show a progress bar.
        backend: ``"local"`` processes or ``"dask"`` (with ``scheduler``).
        keep_series_seed: the seed whose runs keep their time series
            (default: the first).
        on_result: ``on_result(spec, result)`` is called as each run that
            was not stored yet finishes.
        tables: with ``out``: claim the folder for this experiment and write
            its tables; False uses ``out`` only as a store of runs.
        wording: how an invalid value is named in errors: ``"python"``
            (``set['queue'] = 'fifo'``) or ``"cli"`` (``--set queue=fifo``).

    Returns:
        :class:`Results` of this call's runs (the stored ones included).

    Invalid arguments raise :class:`ScenarioError` naming them."""
    if seed is not None and (not _is_int(seed) or not 0 <= seed <= MAX_SEED):
        raise ScenarioError(f"seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
    if seeds is not None and (not _is_int(seeds) or seeds < 1):
        raise ScenarioError(f"seeds must be a positive integer (a count of seeds), got {seeds!r}")
    if jobs is not None and (not _is_int(jobs) or jobs < 1):
        raise ScenarioError(f"jobs must be a positive integer (a count of processes), got {jobs!r}")
    if set is not None and not isinstance(set, Mapping):
        raise ScenarioError(f"set must be a dict of parameter name to value, like {{'flows': 13}}, got {set!r}")
    base = dict(set or {})
    sweep = sweep_values(sweep)
    # Counted before anything is built: a sweep of a billion runs would
    # take the machine's memory before the first one started.
    n_combos = math.prod(len(v) for v in (sweep or {}).values())
    if n_combos > MAX_RUNS or (seed is None and seeds is not None and n_combos * seeds > MAX_RUNS):
        raise ScenarioError(_too_many(n_combos, 1 if seed is not None else seeds))
    combos = expand(sweep)
    info = None
    for c in combos:
        try:
            info = load(scenario, {**base, **c})  # validate every combination first
        except ScenarioError as e:
            e = swept(e, c)
            raise (e if wording == "cli" else for_python(e, base, c)) from None
    assert info is not None
    if seed is None and seeds is None and n_combos * info["seeds"] > MAX_RUNS:
        raise ScenarioError(_too_many(n_combos, info["seeds"], f"{resolve(scenario)}: field `run.seeds`: "),
                            str(resolve(scenario)), "run.seeds")
    seed_list = [seed] if seed is not None else list(range(1, (seeds if seeds is not None else info["seeds"]) + 1))
    series_seed = keep_series_seed if keep_series_seed is not None else seed_list[0]
    specs = [
        RunSpec.make(scenario, {**base, **c}, s, keep_series=(s == series_seed),
                     pcap_dir=(Path(out) / "pcap") if out is not None else None)
        for c in combos
        for s in seed_list
    ]
    claim = out is not None and tables
    with FolderLock(out) if claim else nullcontext():
        if claim:
            claim_folder(out, settings(scenario, base, sweep), "out=")
        raw = run_many(specs, jobs=jobs, out=out, progress=progress, backend=backend, scheduler=scheduler,
                       on_result=on_result)
        for spec, r in zip(specs, raw):
            r["run"] = spec.key()
        if claim:
            write_tables(out, folder_results(out, raw))
    return Results(info, list(sweep), raw)
