"""A reproduction's runs: one scheduler for all its phases, the resumable
run store under ``<out>/runs``, and the manifest that sets aside runs made
by another simulator build."""

from __future__ import annotations

import datetime as _dt
import heapq
import itertools
import os
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..runner import RunSpec, Store, execute, native_build_id, set_aside_stale_runs, worker_pool  # noqa: F401  (re-exported)
from .paper import Paper


@dataclass
class Options:
    """What to reproduce, and how. ``scenarios`` and ``methods`` default to
    all of the paper's; ``out`` to ``results/reproduce-<paper>``."""

    out: Path | None = None
    seeds: int = 30
    jobs: int | None = None
    quick: bool = False
    scenarios: list[str] | None = None
    methods: list[str] | None = None
    sets: dict[str, Any] = field(default_factory=dict)
    max_flows: int = 128
    first_seeds: int = 6
    exact: bool = False
    progress: bool = True
    reuse_stale: bool = False
    sensitivity: str = "grid"   # off | grid (paper counts) | full (grid and capacity search)

    @staticmethod
    def quick_defaults(o: "Options", seeds_given: bool, max_given: bool) -> "Options":
        """``--quick``: 3 seeds and a capacity search up to 32 flows."""
        if not seeds_given:
            o.seeds = 3
        if not max_given:
            o.max_flows = 32
        o.quick = True
        return o

    def resolve(self, paper: Paper) -> "Options":
        """Fills the defaults from ``paper`` and checks the choices (ValueError)."""
        if self.out is None:
            self.out = Path("results") / f"reproduce-{paper.name}"
        self.out = Path(self.out)
        if self.scenarios is None:
            self.scenarios = list(paper.scenarios)
        if self.methods is None:
            self.methods = list(paper.methods)
        for m in self.methods:
            if m not in paper.methods:
                raise ValueError(f"unknown method {m!r}; allowed: {', '.join(paper.methods)}")
        for sc in self.scenarios:
            if sc not in paper.scenarios:
                raise ValueError(f"unknown scenario {sc!r}; allowed: {', '.join(paper.scenarios)}")
        return self


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def git_rev() -> str:
    import subprocess

    try:
        r = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=5)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def check_build(opts: Options) -> str:
    """Moves runs made by another simulator build out of the way (unless
    ``reuse_stale``); returns the current build id."""
    return set_aside_stale_runs(Path(opts.out), opts.reuse_stale)


class Bar:
    """One progress bar for the whole reproduction; its total grows as the
    capacity search decides what to run next."""

    def __init__(self, enabled: bool, name: str = "reproduce"):
        self._bar = None
        self._phase = ""
        self._name = name
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=0, desc=name, unit="run", dynamic_ncols=True)

    def grow(self, n: int, phase: str) -> None:
        if self._bar is not None:
            self._bar.total += n
            if phase != self._phase:
                self._phase = phase
                self._bar.set_description(f"{self._name} [{phase}]", refresh=False)

    def advance(self, n: int = 1) -> None:
        if self._bar is not None and n:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class Runs:
    """The reproduction's runs, one scheduler for all phases.

    Every run goes through the existing runner's pieces: a :class:`RunSpec`
    (its key), :func:`execute` in a worker process, and the :class:`Store`
    under ``<out>/runs`` (written as each run finishes, read back on a rerun).
    Unlike :func:`run_many`, which runs a batch to its end, this keeps every
    core busy across phases: requests wait in one queue, the capacity
    searches' runs first (each search is a chain of decisions, its next probe
    known only when the last one is in), then the bulk grids, longest runs
    first; a result is handed to whoever asked as soon as it arrives.
    """

    SEARCH, FIGURE, BULK = 0, 1, 2  # priorities

    def __init__(self, opts: Options, bar: Bar, paper: Paper, extract=None):
        """``extract(result) -> dict``: what a paper keeps of each run beyond
        the summary (e.g. per-flow columns), under ``"extra"``."""
        self.opts = opts
        self._extract = extract
        self.bar = bar
        self.paper = paper
        self.store = Store(opts.out)
        self.jobs = opts.jobs or os.cpu_count() or 1
        self.executed = 0
        self.requested = 0
        self.cpu_s = 0.0
        self.results: dict[str, dict] = {}
        self._specs: dict[str, RunSpec] = {}  # pending or in flight
        self._pending: list[tuple[int, float, int, str]] = []
        self._waiters: dict[str, list] = {}
        self._ready: list = []
        self._inflight: dict = {}
        self._seq = itertools.count()
        self._prio: dict[str, int] = {}  # pending key -> its best priority
        self._pool = None
        self._keep = paper.keep
        # Runs in which a finite transfer did not finish, by run key: kept
        # in the data as they are, and listed in the report.
        self.incomplete: dict[str, str] = {}

    def spec(self, scenario: str, count: int, method: str, seed: int, keep_series: bool = False,
             variant: tuple[str, dict] | None = None) -> RunSpec:
        """``variant``: (scenario file, extra overrides) replacing the scenario's own."""
        path, extra = variant if variant else (self.paper.scenarios[scenario], {})
        run = self.paper.run
        over = {**self.opts.sets, **extra, run["count_param"]: int(count), run["method_param"]: method}
        return RunSpec.make(path, over, seed, keep_series=keep_series)

    def _cost(self, spec: RunSpec) -> float:
        p = dict(spec.overrides)
        try:
            n = float(p.get(self.paper.run["count_param"], 1))
        except ValueError:
            n = 1.0
        return n * self.paper.cost(spec.scenario)

    def request(self, spec: RunSpec, phase: str, priority: int = 2, callback=None) -> str:
        """Asks for a run; ``callback(result)`` once it is in. Returns its key."""
        key = spec.key()
        self.requested += 1
        have = self.results.get(key)
        if have is not None and (not spec.keep_series or "queue_series" in have):
            if callback:
                self._ready.append((callback, have))
            return key
        if key in self._specs:
            if spec.keep_series and not self._specs[key].keep_series:
                self._specs[key] = spec  # still pending (figures are asked for first)
            if priority < self._prio.get(key, priority):  # a search now needs a queued bulk run
                self._prio[key] = priority
                heapq.heappush(self._pending, (priority, -self._cost(spec), next(self._seq), key))
        else:
            self.bar.grow(1, phase)
            cached = self.store.get(spec)
            if cached is not None:
                self.results[key] = self._slim(cached, spec.keep_series)
                self.bar.advance(1)
                if callback:
                    self._ready.append((callback, self.results[key]))
                return key
            self._specs[key] = spec
            self._prio[key] = priority
            heapq.heappush(self._pending, (priority, -self._cost(spec), next(self._seq), key))
        if callback:
            self._waiters.setdefault(key, []).append(callback)
        return key

    def get(self, key: str) -> dict:
        return self.results[key]

    def _finish(self, key: str, r: dict) -> None:
        spec = self._specs.pop(key)
        self.store.put(spec, r)
        self.executed += 1
        self.cpu_s += r.get("wall_s") or 0.0
        self.results[key] = self._slim(r, spec.keep_series)
        self.bar.advance(1)
        for cb in self._waiters.pop(key, []):
            self._ready.append((cb, self.results[key]))

    def drain(self) -> None:
        """Runs until nothing is pending, in flight or waiting to be handed over."""
        while True:
            while self._ready:
                cb, r = self._ready.pop(0)
                cb(r)  # may request more
            if not self._pending and not self._inflight:
                if self._ready:
                    continue
                return
            if self.jobs == 1:
                key = self._next()
                if key is not None:
                    self._finish(key, execute(self._specs[key]))
                continue
            if self._pool is None:
                self._pool = worker_pool(self.jobs)
            while len(self._inflight) < self.jobs:
                key = self._next()
                if key is None:
                    break
                self._inflight[self._pool.submit(execute, self._specs[key])] = key
            if not self._inflight:
                continue
            done, _ = wait(list(self._inflight), return_when=FIRST_COMPLETED)
            for fut in done:
                key = self._inflight.pop(fut)
                self._finish(key, fut.result())

    def _next(self) -> str | None:
        """The best pending run (stale heap entries of re-prioritised runs skipped)."""
        while self._pending:
            prio, _, _, key = heapq.heappop(self._pending)
            if self._prio.get(key) == prio:
                del self._prio[key]
                return key
        return None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _slim(self, r: dict, keep_series: bool) -> dict:
        """What the report needs of a run: the kept summary columns, drops at
        the bottleneck and elsewhere, and the time series when asked for."""
        summ = dict(r["summary"])
        if summ.get("flows_incomplete"):
            from ..runner import incomplete_runs

            keys = sorted(r.get("params", {}))
            for line in incomplete_runs([r], keys):
                self.incomplete[f"{r.get('params')}|{r['seed']}"] = line
        f = r.get("ifaces") or {}
        bottleneck = self.paper.run.get("bottleneck")
        if f.get("iface") and bottleneck:
            drops = [(q or 0) + (x or 0) for q, x in zip(f.get("queue_drops", []), f.get("loss_drops", []))]
            at = sum(d for i, d in zip(f["iface"], drops) if i == bottleneck)
            summ["drops_bottleneck"] = at
            summ["drops_elsewhere"] = sum(drops) - at
        out = {"seed": r["seed"], "params": r.get("params", {}),
               "summary": {k: summ.get(k) for k in self._keep}, "wall_s": r.get("wall_s")}
        if self._extract is not None:
            out["extra"] = self._extract(r)
        if keep_series:
            out["queue_series"] = r.get("queue_series")
            out["traces"] = r.get("traces")
        return out
