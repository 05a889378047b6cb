"""Sending runs to a Dask cluster (``netreturn run --backend dask``).

Dask's distributed scheduler does the distributing; this module only hands
it the task the local backend runs (:func:`~netreturn.runner.execute`, one
simulation per task) and checks first that the workers run it the same way:
netreturn importable there, with the client's simulator build (the hash
``netreturn --version`` prints). The
scenario file's text travels with each task, so the workers need not share
the client's disk. Results come back to the client, which writes each one
into the run store (``<out>/runs/``) as it arrives, exactly as the local
backend does: an interrupted sweep resumes on either backend.

    dask scheduler                          # on one machine: prints tcp://HOST:8786
    dask worker tcp://HOST:8786 --nthreads 1 --nworkers auto   # on every machine
    netreturn run ewt/scenario2 --sweep queue=droptail,ewt --seeds 30 \\
        --backend dask --scheduler HOST:8786

On a batch cluster (SLURM, PBS, ...), ``dask-jobqueue`` submits the workers
as jobs; its cluster object is passed as the scheduler (the same path a
``LocalCluster`` takes in the tests):

    from dask_jobqueue import SLURMCluster
    cluster = SLURMCluster(cores=1, processes=1, memory="2GB", walltime="01:00:00")
    cluster.scale(jobs=20)
    netreturn.run("ewt/scenario2", seeds=100, backend="dask", scheduler=cluster, out="results/big")
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from .files import atomic_write
from .task import RunSpec, execute, native_build_id

INSTALL = "pip install 'netreturn[dask]' (in a checkout: pip install -e '.[dask]')"
CONNECT_TIMEOUT = "10s"
WORKER_WAIT_S = 60


class BackendError(RuntimeError):
    """The Dask backend cannot be used: Dask missing, scheduler unreachable,
    no workers, or workers that cannot run netreturn's tasks."""


def _distributed():
    try:
        import dask.distributed as dd
    except ImportError as e:
        raise BackendError(f"--backend dask needs Dask's distributed scheduler, which is not installed "
                           f"({e}); install it with: {INSTALL}") from None
    return dd


def connect(scheduler: Any, jobs: int):
    """A client of the scheduler at ``scheduler``: an address (``HOST:PORT``),
    a cluster object (a ``LocalCluster``, dask-jobqueue's ``SLURMCluster``,
    ...), or None for a cluster of ``jobs`` local worker processes."""
    dd = _distributed()
    if scheduler is None:
        return dd.Client(processes=True, n_workers=jobs, threads_per_worker=1, dashboard_address=":0")
    if not isinstance(scheduler, str):
        # A cluster object: its workers may still be queued as batch jobs.
        client = dd.Client(scheduler, timeout=CONNECT_TIMEOUT)
        return _wait_for_workers(client, getattr(scheduler, "scheduler_address", repr(scheduler)))
    try:
        client = dd.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as e:
        raise BackendError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
    except ValueError as e:  # an address Dask cannot parse
        raise BackendError(f"--scheduler {scheduler!r} is not a Dask scheduler address like HOST:8786 ({e})") from None
    return _wait_for_workers(client, scheduler)


def _wait_for_workers(client: Any, where: str):
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (TimeoutError, OSError):
        client.close()
        raise BackendError(f"no worker joined the Dask scheduler at {where} within {WORKER_WAIT_S} s; "
                           f"start some with: dask worker {where} --nthreads 1") from None
    return client


def worker_build() -> str:
    """Run on each worker: the build hash of the simulator it would run."""
    return native_build_id()


def check_workers(client: Any) -> None:
    """Every worker runs netreturn, with the client's simulator build: two
    builds of one version may differ in their numbers, and the run store
    keeps runs of one build (``runner.set_aside_stale_runs``)."""
    try:
        builds = client.run(worker_build)
    except Exception as e:  # a worker without netreturn cannot even unpickle the function
        raise BackendError(f"the Dask workers cannot run netreturn ({type(e).__name__}: {e}); "
                           "install netreturn, the same build as here, on every worker") from None
    ours = native_build_id()
    bad = {w: v for w, v in builds.items() if v != ours}
    if bad:
        which = ", ".join(f"{w} has {v}" for w, v in sorted(bad.items()))
        raise BackendError(f"Dask workers with another simulator build than this client's ({ours}; "
                           f"`netreturn --version` prints it): {which}; install the same build on every worker")


def dashboard(client: Any) -> str | None:
    """The address of the scheduler's dashboard (a web page of the tasks and
    workers), or None when it has none (``distributed`` without bokeh)."""
    try:
        return client.dashboard_link or None
    except (AttributeError, KeyError):
        return None


def execute_with_text(spec: RunSpec, text: str) -> dict:
    """:func:`execute` on a worker, given the client's scenario file text:
    when the worker's own file at that path is missing or differs, the text
    is written to the worker's temporary directory and run from there."""
    p = Path(spec.scenario)
    try:
        same = p.is_file() and p.read_text() == text
    except OSError:
        same = False
    if same:
        return execute(spec)
    d = Path(tempfile.gettempdir()) / "netreturn-scenarios"
    d.mkdir(parents=True, exist_ok=True)
    local = d / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}-{p.name}"
    if not local.is_file():
        # A worker's threads share its PID: the temporary name must be unique beyond it.
        atomic_write(local, text)
    r = execute(dataclasses.replace(spec, scenario=str(local)))
    r["scenario"] = spec.scenario
    return r


def run(specs: Sequence[RunSpec], todo: Sequence[int], jobs: int, scheduler: Any,
        done: Callable[[int, dict], None], bar: Any) -> None:
    """Runs ``specs[i]`` for every ``i`` in ``todo`` on the cluster;
    ``done(i, result)`` on the client as each result arrives."""
    dd = _distributed()
    with connect(scheduler, jobs) as client:
        check_workers(client)
        link = dashboard(client)
        n = len(client.scheduler_info().get("workers", {}))
        print(f"netreturn: {len(todo)} run(s) on {n} Dask worker(s)"
              + (f"; dashboard: {link}" if link else " (no dashboard: pip install bokeh)"), file=sys.stderr)
        texts = {s: Path(s).read_text() for s in {specs[i].scenario for i in todo}}
        futs = {client.submit(execute_with_text, specs[i], texts[specs[i].scenario], pure=False): i for i in todo}
        try:
            for fut in dd.as_completed(futs):
                done(futs[fut], fut.result())
                bar.advance()
        except BaseException:
            client.cancel(list(futs))
            raise
