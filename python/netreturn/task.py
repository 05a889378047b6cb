"""One simulation as a task: what to run (:class:`RunSpec`) and running it
(:func:`execute`), in whatever process calls it: the local worker pool of
:mod:`netreturn.runner` or a Dask worker of :mod:`netreturn.cluster`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _native
from .scenarios import ScenarioError, overrides_list, resolve

SCHEMA = 1


@functools.lru_cache(maxsize=1)
def native_build_id() -> str:
    """A hash of the compiled simulator: runs stored by another build are
    stale. (The module cannot change under a running process: hashed once.)"""
    h = hashlib.sha256()
    with open(_native.__file__, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class RunSpec:
    """One simulation: a scenario file, parameter overrides and a seed."""

    scenario: str
    overrides: tuple[tuple[str, str], ...] = ()
    seed: int = 1
    keep_series: bool = False
    # Where pcap captures (scenario `run.pcap`) are written; not part of the key.
    pcap_dir: str | None = None

    @staticmethod
    def make(scenario: str | Path, overrides: dict | None = None, seed: int = 1, keep_series: bool = False,
             pcap_dir: str | Path | None = None) -> "RunSpec":
        path = str(resolve(scenario))
        return RunSpec(path, tuple(sorted(overrides_list(overrides))), int(seed), keep_series,
                       str(pcap_dir) if pcap_dir else None)

    def key(self) -> str:
        text = Path(self.scenario).read_text()
        h = hashlib.sha256()
        h.update(json.dumps([SCHEMA, _native.__version__, text, list(self.overrides), self.seed]).encode())
        return h.hexdigest()[:24]

    def params(self) -> dict[str, str]:
        return dict(self.overrides)


def json_safe(x: Any) -> Any:
    """JSON has no NaN/inf: store them as None. A list of finite numbers
    (the per-flow columns and time series, most of a result) is checked in
    one pass at C speed instead of element by element."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        try:
            if all(map(math.isfinite, x)):
                return list(x)
        except (TypeError, OverflowError):  # strings, None, nested lists, huge ints
            pass
        return [json_safe(v) for v in x]
    return x


def execute(spec: RunSpec) -> dict:
    """Runs one simulation (in whatever process calls it)."""
    t0 = time.perf_counter()
    try:
        r = _native.run(spec.scenario, spec.seed, list(spec.overrides))
    except _native.NativeScenarioError as e:
        msg, file, fld, detail = e.args
        raise ScenarioError(msg, file, fld, detail) from None
    r["wall_s"] = time.perf_counter() - t0
    pcaps = r.pop("pcaps", {})
    if pcaps and spec.pcap_dir:
        d = Path(spec.pcap_dir)
        d.mkdir(parents=True, exist_ok=True)
        tag = "_".join(f"{k}-{v}" for k, v in spec.overrides) or "run"
        for name, data in pcaps.items():
            (d / f"{name.replace('->', '_to_')}_{tag}_seed{spec.seed}.pcap").write_bytes(data)
    r["params"] = spec.params()
    r["scenario"] = spec.scenario
    if not spec.keep_series:
        r.pop("queue_series", None)
        r.pop("traces", None)
    return json_safe(r)
