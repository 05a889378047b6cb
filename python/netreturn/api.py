"""The Python API, mirroring the command line.

>>> import netreturn
>>> res = netreturn.run("ewt/scenario2", set={"flows": 13}, sweep={"queue": ["droptail", "red"]}, seeds=5)
>>> res.runs        # one row per run (pandas DataFrame)
>>> res.summary     # mean and 95 % CI per metric per group
>>> print(res.table())
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from . import report
from .runner import RunSpec, flow_rows, run_many, run_rows
from .scenarios import DEFAULT_SCENARIO, MAX_SEED, ScenarioError, load, resolve, swept


@dataclass
class Results:
    scenario: dict
    group_keys: list[str]
    raw: list[dict]

    def run_rows(self) -> list[dict]:
        """One dict per run (what :attr:`runs` holds, without pandas)."""
        return run_rows(self.raw)

    def summary_rows(self) -> list[dict]:
        """Mean, CI and n per metric per group (what :attr:`summary` holds, without pandas)."""
        return report.summary_rows(self.run_rows(), self.group_keys)

    @property
    def runs(self):
        """One row per run: swept parameters, seed and every summary metric."""
        import pandas as pd

        return pd.DataFrame(self.run_rows())

    @property
    def flows(self):
        """One row per TCP flow per run."""
        import pandas as pd

        return pd.DataFrame(flow_rows(self.raw, self.group_keys))

    @property
    def summary(self):
        import pandas as pd

        return pd.DataFrame(self.summary_rows())

    def table(self) -> str:
        return report.table_text(self.summary_rows(), self.group_keys)


# The most runs one call starts: each run's spec and key are built up front
# (100 000 take about 15 s and 60 MB); more is a typo or a job to split.
MAX_RUNS = 100_000


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _too_many(combos: int, seeds: int, where: str = "") -> str:
    return (f"{where}{combos * seeds:,} runs ({combos:,} sweep combination(s) x {seeds:,} seed(s)) are more than one "
            f"sweep runs ({MAX_RUNS:,}); run fewer seeds or values, or split the sweep")


def expand(sweep: Mapping[str, Sequence[Any]] | None) -> list[dict]:
    """The cartesian product of swept parameter values."""
    if not sweep:
        return [{}]
    keys = list(sweep)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(sweep[k] for k in keys))]


def run(
    scenario: str | Path = DEFAULT_SCENARIO,
    *,
    set: Mapping[str, Any] | None = None,
    sweep: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | None = None,
    seed: int | None = None,
    jobs: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    backend: str = "local",
    scheduler: Any = None,
    keep_series_seed: int | None = None,
    on_result: Callable[[RunSpec, dict], None] | None = None,
) -> Results:
    """Runs ``scenario`` over ``seeds`` seeds (1..n) or one ``seed``, for each
    combination of ``sweep`` values on top of ``set`` overrides.
    ``on_result(spec, result)``: called as each run that was not stored
    yet finishes. Invalid arguments raise :class:`ScenarioError` naming them."""
    if seed is not None and (not _is_int(seed) or not 0 <= seed <= MAX_SEED):
        raise ScenarioError(f"seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
    if seeds is not None and (not _is_int(seeds) or seeds < 1):
        raise ScenarioError(f"seeds must be a positive integer (a count of seeds), got {seeds!r}")
    if jobs is not None and (not _is_int(jobs) or jobs < 1):
        raise ScenarioError(f"jobs must be a positive integer (a count of processes), got {jobs!r}")
    base = dict(set or {})
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
            raise swept(e, c) from None
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
    raw = run_many(specs, jobs=jobs, out=out, progress=progress, backend=backend, scheduler=scheduler,
                   on_result=on_result)
    return Results(info, list(sweep or {}), raw)
