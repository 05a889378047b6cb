"""Running many simulations: seeds in parallel processes, results kept on
disk as they finish so an interrupted sweep resumes where it stopped.

Each run is identified by (scenario file contents, overrides, seed); its
result is one JSON file under ``<out>/runs/``. Runs already on disk are not
run again. For sweeps that outgrow one machine, ``backend="dask"`` hands the
same tasks to a Dask distributed cluster (``cluster.py``); their results come
back into the same store.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import signal
import sys
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .files import FolderLock, atomic_write
from .scenarios import ScenarioError, param_value
from .task import SCHEMA, RunSpec, execute, json_safe, native_build_id

__all__ = ["SCHEMA", "RunSpec", "execute", "json_safe", "run_many", "run_rows", "flow_rows", "Store"]

def set_aside_stale_runs(out: str | Path, reuse_stale: bool = False) -> str:
    """Moves ``<out>/runs`` aside to ``<out>/stale-<build>`` when
    ``<out>/manifest.json`` says another simulator build made them (unless
    ``reuse_stale``), so they are run again, never silently reused; records
    the current build there; returns it."""
    build = native_build_id()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    man = out / "manifest.json"
    old = None
    if man.is_file():
        try:
            old = json.loads(man.read_text()).get("native_build")
        except json.JSONDecodeError:
            old = None
    runs = out / "runs"
    if old and old != build and runs.is_dir() and any(runs.iterdir()) and not reuse_stale:
        dest = out / f"stale-{old}"
        n = 0
        while dest.exists():
            n += 1
            dest = out / f"stale-{old}-{n}"
        shutil.move(str(runs), str(dest))
        print(f"netreturn: the simulator was rebuilt since the stored runs were made "
              f"({old} -> {build}); they were moved to {dest} and will be run again "
              f"(--reuse-stale keeps them)", file=sys.stderr)
    updated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    atomic_write(man, json.dumps({"native_build": build, "updated": updated}, indent=1))
    return build


class Store:
    """Finished runs on disk, one JSON file each, written atomically
    (:func:`~netreturn.files.atomic_write`): any number of processes may
    write into one store at once, the same run or different ones, and a
    reader sees a run complete or not at all.

    A spec is anything with a ``key()`` naming the run (``RunSpec`` here,
    the testbed's ``TbSpec``); a run kept without the time series a spec
    asks for (``keep_series``) counts as missing.
    """

    def __init__(self, out: str | Path):
        self.dir = Path(out) / "runs"
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, spec: Any) -> Path:
        return self.dir / f"{spec.key()}.json"

    def get(self, spec: Any) -> dict | None:
        p = self.path(spec)
        if not p.is_file():
            return None
        try:
            r = json.loads(p.read_text())
        except json.JSONDecodeError:
            return None  # a torn file from a crash: run again
        if getattr(spec, "keep_series", False) and "queue_series" not in r:
            return None
        return r

    def put(self, spec: Any, result: dict) -> None:
        try:  # results of execute() are JSON-safe already: no second walk
            text = json.dumps(result, allow_nan=False)
        except ValueError:
            text = json.dumps(json_safe(result))
        atomic_write(self.path(spec), text)


@dataclass
class Progress:
    total: int
    enabled: bool = True
    desc: str = "runs"
    _bar: Any = field(default=None, init=False)

    def __enter__(self) -> "Progress":
        if self.enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=self.desc, unit="run", dynamic_ncols=True)
        return self

    def advance(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.close()


def run_many(
    specs: Sequence[RunSpec],
    jobs: int | None = None,
    out: str | Path | None = None,
    progress: bool = True,
    backend: str = "local",
    scheduler: Any = None,
    on_result: Callable[[RunSpec, dict], None] | None = None,
    bar: Any = None,
) -> list[dict]:
    """Runs every spec (skipping those already in ``out``), in parallel;
    returns the results in the order of ``specs``. ``bar``: an open progress
    bar (anything with ``advance(n)``) to advance instead of opening one.
    Stored runs of another simulator build are set aside and run again
    (:func:`set_aside_stale_runs`). ``out`` is held for the duration
    (:class:`~netreturn.files.FolderLock`): while another process runs into
    it, this raises :class:`~netreturn.files.FolderInUse`."""
    with FolderLock(out) if out is not None else nullcontext():
        return _run_many(specs, jobs, out, progress, backend, scheduler, on_result, bar)


def _run_many(specs: Sequence[RunSpec], jobs: int | None, out: str | Path | None, progress: bool, backend: str,
              scheduler: Any, on_result: Callable[[RunSpec, dict], None] | None, bar: Any) -> list[dict]:
    if out is not None:
        set_aside_stale_runs(out)
    store = Store(out) if out is not None else None
    results: list[dict | None] = [None] * len(specs)
    todo: list[int] = []
    for i, s in enumerate(specs):
        cached = store.get(s) if store else None
        if cached is not None:
            results[i] = cached
        else:
            todo.append(i)
    jobs = jobs or os.cpu_count() or 1

    def done(i: int, r: dict) -> None:
        results[i] = r
        if store:
            store.put(specs[i], r)
        if on_result:
            on_result(specs[i], r)

    if backend not in ("local", "dask"):
        raise ScenarioError(f"unknown backend {backend!r}; allowed: local, dask")
    failed: list[ScenarioError] = []
    with (nullcontext(bar) if bar is not None else Progress(len(specs), progress)) as bar:
        bar.advance(len(specs) - len(todo))
        if todo and backend == "dask":
            from . import cluster

            cluster.run(specs, todo, jobs, scheduler, done, bar)
        elif jobs == 1 or len(todo) <= 1:
            for i in todo:
                try:
                    done(i, execute(specs[i]))
                except ScenarioError as e:
                    if i == todo[0] or not _is_run_failure(e):
                        raise
                    failed.append(e)
                bar.advance()
        else:
            from concurrent.futures import as_completed

            with worker_pool(min(jobs, len(todo))) as pool:
                futs = {pool.submit(execute, specs[i]): i for i in todo}
                try:
                    for fut in as_completed(futs):
                        try:
                            done(futs[fut], fut.result())
                        except ScenarioError as e:
                            if not _is_run_failure(e):
                                raise
                            failed.append(e)
                        bar.advance()
                except BaseException:
                    for f in futs:
                        f.cancel()
                    raise
    if failed:
        # The other runs finished and are kept (in ``out``: a rerun resumes).
        raise ScenarioError(f"{len(failed)} run(s) of the sweep stopped; the other {len(todo) - len(failed)} "
                            "finished and were kept:\n  " + "\n  ".join(str(e) for e in failed))
    return [r for r in results if r is not None]


def worker_pool(jobs: int):
    """A process pool whose workers exit when this process dies.

    Without it a SIGKILL to the parent alone leaves the workers running
    their simulation and then waiting on the task pipe forever: every
    worker holds that pipe open too (inherited at fork), so none of them
    ever reads its end."""
    from concurrent.futures import ProcessPoolExecutor  # 40 ms: only when needed

    return ProcessPoolExecutor(max_workers=jobs, initializer=_exit_with_parent, initargs=(os.getpid(),))


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _exit_with_parent(parent: int) -> None:
    """A worker's initializer: on Linux the kernel sends it SIGKILL when
    the thread that forked it (the pool is grown from the thread that
    submits, the parent's main thread here) exits; elsewhere a thread polls
    the parent's PID. SIGKILL, not SIGTERM: a handler the parent installed
    (the testbed's) is inherited at fork and would turn SIGTERM into an
    exception. Nothing is lost: the parent, not the worker, writes the
    store, so a killed run is simply not stored and runs again."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # it died before the prctl took effect
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass  # no prctl: poll
    threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _is_run_failure(e: ScenarioError) -> bool:
    """A run that stopped on its own (the memory guard), rather than a
    scenario error every run of the sweep would hit."""
    return "stopped at t =" in str(e)


def run_rows(results: Iterable[dict]) -> list[dict]:
    """One dict per run: its id (``run``, where known), seed, parameters
    (typed: :func:`~netreturn.scenarios.param_value`) and headline metrics."""
    return [{**({"run": r["run"]} if r.get("run") else {}), "seed": r["seed"],
             **{k: param_value(v) for k, v in r.get("params", {}).items()}, **r["summary"], "wall_s": r.get("wall_s")}
            for r in results]


def flow_rows(results: Iterable[dict], group_keys: Sequence[str]) -> list[dict]:
    """One dict per TCP flow per run: seed, the swept parameters, the flow's metrics."""
    rows = []
    for r in results:
        f = r["flows"]
        cols = list(f)
        head = {**({"run": r["run"]} if r.get("run") else {}), "seed": r["seed"],
                **{k: param_value(r["params"].get(k)) for k in group_keys}}
        n = len(f[cols[0]]) if cols else 0
        rows.extend({**head, **{c: f[c][i] for c in cols}} for i in range(n))
    return rows


def incomplete_runs(results: Iterable[dict], group_keys: Sequence[str] = ()) -> list[str]:
    """One line per run in which a finite transfer did not finish: a stalled
    connection, or a stop time too early. Such runs stay in the data as they
    are (their FCT is NaN); this only says so, naming the run and the flows."""
    lines = []
    for r in results:
        if not r.get("summary", {}).get("flows_incomplete"):
            continue
        f = r["flows"]
        fct = f.get("fct_s", [])
        late = [i for i, x in enumerate(fct) if x is None or x != x]
        what = ", ".join(f"flow {f['flow'][i]} ({f['bytes_delivered'][i]:,} B delivered)" for i in late[:8])
        if len(late) > 8:
            what += f" and {len(late) - 8} more"
        params = ", ".join(f"{k}={r['params'].get(k)}" for k in group_keys)
        run = (params + ", " if params else "") + f"seed {r['seed']}"
        lines.append(f"{run}: {int(r['summary']['flows_incomplete'])} transfer(s) unfinished at "
                     f"{r['summary'].get('sim_time_s', float('nan')):.1f} s: {what}")
    return lines


def summaries(results: Iterable[dict]):
    """One row per run: parameters, seed and headline metrics (a DataFrame)."""
    import pandas as pd

    return pd.DataFrame(run_rows(results))
