"""The figures of ``netreturn run``, drawn by a child process.

Importing matplotlib and drawing three figures costs more CPU time than a
short sweep's simulations. So that the table is not held back, ``run``
starts this child before the simulations: it imports matplotlib while they
run (on another core when there is one), then waits for one line on its
standard input, the path of a JSON job, and draws. The parent prints the
table meanwhile and only waits for the child at the very end.

``python -m netreturn.figures`` is the child; :class:`FigureWorker` is the
parent's handle on it; :func:`draw` does the drawing (also callable in the
parent's own process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def job(res: Any, out: Path, name: str) -> dict:
    """What the figures of a :class:`~netreturn.api.Results` need, as JSON:
    the summary rows, and seed 1's queue series and first flow's window
    trace per group."""
    from .report import group_label

    keys = res.group_keys
    series, traces = {}, {}
    for r in res.raw:
        if "queue_series" not in r:
            continue
        label = group_label(r["params"], keys)
        if r["queue_series"] and r["queue_series"]["time_s"]:
            series[label] = r["queue_series"]
        if r.get("traces"):
            traces[label] = r["traces"][0]
    return {"out": str(out), "name": name, "keys": keys, "summary": res.summary_rows(),
            "series": series, "traces": traces}


def draw(job: dict) -> list[str]:
    """Draws ``metrics.png`` and, when there are time series, ``queue.png``
    and ``window.png`` into ``job["out"]``; returns their paths."""
    from . import report

    out, name, keys = Path(job["out"]), job["name"], job["keys"]
    paths = [report.plot_metrics(job["summary"], keys, out / "metrics.png", f"{name}: mean and 95 % CI")]
    if job["series"]:
        paths.append(report.plot_queues(job["series"], None, out / "queue.png", f"{name}: bottleneck queue (first seed)"))
    if job["traces"]:
        paths.append(report.plot_windows(job["traces"], out / "window.png", f"{name}: effective window of one flow"))
    return [str(p) for p in paths]


class FigureWorker:
    """A child process that draws one job's figures.

    ``start()`` as early as possible (it imports matplotlib in the
    background); ``submit(job)`` when the data is there; ``wait()`` for the
    paths. ``close()`` ends a child that was never given a job.
    """

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._job_file: Path | None = None

    def start(self) -> "FigureWorker":
        self._proc = subprocess.Popen([sys.executable, "-m", "netreturn.figures"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return self

    def submit(self, job: dict) -> None:
        # Through a file: a job with time series is larger than a pipe's
        # buffer, and the child may still be importing.
        self._job_file = Path(job["out"]) / ".figures.json"
        self._job_file.write_text(json.dumps(job))
        if self._proc is None:
            self.start()
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(f"{self._job_file}\n")
            self._proc.stdin.close()
        except BrokenPipeError:
            pass  # the child is gone already: wait() reports why
        self._proc.stdin = None  # so that communicate() does not touch it

    def wait(self) -> list[Path]:
        """The figures' paths; RuntimeError with the child's message if it failed."""
        assert self._proc is not None
        out, err = self._proc.communicate()
        rc = self._proc.returncode
        self._proc = None
        if self._job_file is not None:
            self._job_file.unlink(missing_ok=True)
        if rc != 0:
            lines = [x for x in err.strip().splitlines() if x.strip()]
            raise RuntimeError(lines[-1] if lines else f"the figure process exited with status {rc}")
        return [Path(p) for p in json.loads(out)]

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.communicate()
            self._proc = None

    def __enter__(self) -> "FigureWorker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _warm_up(plt: Any) -> None:
    """Draws a throw-away figure with every kind of artist the real ones
    use: the first drawing loads fonts and fills caches, several tenths of a
    second better spent while the simulations run."""
    import io

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.bar([0, 1], [1, 2], yerr=[0.1, 0.2], capsize=3)
    ax.plot([0, 1], [1, 0], label="x")
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["a", "b"], rotation=30, fontsize=7)
    ax.set_title("warm-up", fontsize=9, y=1.0)
    ax.legend(fontsize=7)
    fig.suptitle("warm-up")
    fig.savefig(io.BytesIO(), format="png", dpi=50)
    plt.close(fig)


def main() -> int:
    from .report import _plt

    try:  # the simulations come first: on a busy machine the figures yield
        os.nice(10)
    except OSError:
        pass
    _warm_up(_plt())  # while the parent's simulations run
    line = sys.stdin.readline().strip()
    if not line:
        return 0  # the parent needed no figures after all
    paths = draw(json.loads(Path(line).read_text()))
    print(json.dumps(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
