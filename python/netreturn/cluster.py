"""Sending runs to a Dask cluster (``netreturn run --backend dask``).

Dask's distributed scheduler does the distributing; this module only hands
it the task the local backend runs (:func:`~netreturn.runner.execute`, one
simulation per task) and checks first that the workers run it the same way:
netreturn importable there, with the client's simulator version. The
scenario file's text travels with each task, so the workers need not share
the client's disk. Results come back to the client, which writes each one
into the run store (``<out>/runs/``) as it arrives, exactly as the local
backend does: an interrupted sweep resumes on either backend.

    dask scheduler                          # on one machine: prints tcp://HOST:8786
    dask worker tcp://HOST:8786 --nthreads 1 --nworkers auto   # on every machine
    netreturn run ewt/scenario2 --sweep queue=droptail,ewt --seeds 30 \\
        --backend dask --scheduler HOST:8786
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from . import _native
from .files import atomic_write
from .task import RunSpec, execute

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


def connect(scheduler: str | None, jobs: int):
    """A client of the scheduler at ``scheduler`` (``HOST:PORT``), or of a
    cluster of ``jobs`` local worker processes when None."""
    dd = _distributed()
    if scheduler is None:
        return dd.Client(processes=True, n_workers=jobs, threads_per_worker=1, dashboard_address=":0")
    try:
        client = dd.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as e:
        raise BackendError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
    except ValueError as e:  # an address Dask cannot parse
        raise BackendError(f"--scheduler {scheduler!r} is not a Dask scheduler address like HOST:8786 ({e})") from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (TimeoutError, OSError):
        client.close()
        raise BackendError(f"no worker joined the Dask scheduler at {scheduler} within {WORKER_WAIT_S} s; "
                           f"start some with: dask worker {scheduler} --nthreads 1") from None
    return client


def worker_version() -> str:
    """Run on each worker: the simulator version it would run."""
    return _native.__version__


def check_workers(client: Any) -> None:
    """Every worker runs netreturn, with the client's simulator version
    (a run's key in the store names that version)."""
    try:
        versions = client.run(worker_version)
    except Exception as e:  # a worker without netreturn cannot even unpickle the function
        raise BackendError(f"the Dask workers cannot run netreturn ({type(e).__name__}: {e}); "
                           "install netreturn, the same build as here, on every worker") from None
    bad = {w: v for w, v in versions.items() if v != _native.__version__}
    if bad:
        raise BackendError("Dask workers with another netreturn version than this client's "
                           f"({_native.__version__}): " + ", ".join(f"{w} has {v}" for w, v in sorted(bad.items())))


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


def run(specs: Sequence[RunSpec], todo: Sequence[int], jobs: int, scheduler: str | None,
        done: Callable[[int, dict], None], bar: Any) -> None:
    """Runs ``specs[i]`` for every ``i`` in ``todo`` on the cluster;
    ``done(i, result)`` on the client as each result arrives."""
    dd = _distributed()
    with connect(scheduler, jobs) as client:
        check_workers(client)
        texts = {s: Path(s).read_text() for s in {specs[i].scenario for i in todo}}
        futs = {client.submit(execute_with_text, specs[i], texts[specs[i].scenario], pure=False): i for i in todo}
        try:
            for fut in dd.as_completed(futs):
                done(futs[fut], fut.result())
                bar.advance()
        except BaseException:
            client.cancel(list(futs))
            raise
