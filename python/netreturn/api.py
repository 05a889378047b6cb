"""The Python API, mirroring the command line.

>>> import netreturn
>>> res = netreturn.run("ewt/scenario2", set={"flows": 13}, sweep={"queue": ["droptail", "red"]}, seeds=5)
>>> res.runs        # one row per run (pandas DataFrame)
>>> res.summary     # mean and 95 % CI per metric per group
>>> print(res.table())
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from . import report
from .runner import RunSpec, flow_rows, run_many, run_rows
from .scenarios import DEFAULT_SCENARIO, load


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
    scheduler: str | None = None,
    keep_series_seed: int | None = None,
    on_result: Callable[[RunSpec, dict], None] | None = None,
) -> Results:
    """Runs ``scenario`` over ``seeds`` seeds (1..n) or one ``seed``, for each
    combination of ``sweep`` values on top of ``set`` overrides.
    ``on_result(spec, result)``: called as each run that was not stored
    yet finishes."""
    base = dict(set or {})
    combos = expand(sweep)
    info = None
    for c in combos:
        info = load(scenario, {**base, **c})  # validate every combination first
    assert info is not None
    seed_list = [seed] if seed is not None else list(range(1, (seeds or info["seeds"]) + 1))
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
