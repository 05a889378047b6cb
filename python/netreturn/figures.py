"""The figures of ``netreturn run``, drawn by a child process.

Importing matplotlib and drawing three figures costs more CPU time than a
short sweep's simulations. So that the table is not held back, ``run``
starts this child before the simulations: it imports matplotlib while they
run (on another core when there is one). Jobs come as lines on its standard
input, each the path of a JSON file: the time series (queue, window) as soon
as every group's first seed is in, so those figures are drawn while the
other seeds run; the summary (bar charts) when all runs are done. The
parent prints the table meanwhile and only waits for the child at the very
end; at the end of its input the child prints the paths it drew.

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
from typing import Any, Iterable, Sequence

# The order the figures are listed in, whatever order they were drawn in.
ORDER = ["metrics.png", "queue.png", "window.png"]


def series_job(results: Iterable[dict], keys: Sequence[str], out: Path, name: str) -> dict:
    """The time-series figures' job: per group, the queue series of the run
    that kept it and its first flow's window trace."""
    from .report import group_label

    series, traces = {}, {}
    for r in results:
        if "queue_series" not in r:
            continue
        label = group_label(r["params"], keys)
        if r["queue_series"] and r["queue_series"]["time_s"]:
            series[label] = r["queue_series"]
        if r.get("traces"):
            traces[label] = r["traces"][0]
    return {"out": str(out), "name": name, "series": series, "traces": traces}


def summary_job(summary: list[dict], keys: Sequence[str], out: Path, name: str) -> dict:
    """The bar charts' job: the summary rows (mean, CI per metric and group)."""
    return {"out": str(out), "name": name, "keys": list(keys), "summary": summary}


def draw(job: dict) -> list[str]:
    """Draws what ``job`` holds into ``job["out"]``: ``metrics.png`` from a
    summary, ``queue.png`` and ``window.png`` from time series; returns
    their paths."""
    from . import report

    out, name = Path(job["out"]), job["name"]
    paths = []
    if "summary" in job:
        paths.append(report.plot_metrics(job["summary"], job["keys"], out / "metrics.png", f"{name}: mean and 95 % CI"))
    if job.get("series"):
        paths.append(
            report.plot_queues(job["series"], None, out / "queue.png", f"{name}: bottleneck queue (first seed)")
        )
    if job.get("traces"):
        paths.append(report.plot_windows(job["traces"], out / "window.png", f"{name}: effective window of one flow"))
    return [str(p) for p in paths]


class FigureWorker:
    """A child process that draws figures as their data comes in.

    ``start()`` as early as possible (it imports matplotlib in the
    background); ``submit(job)`` for each job; ``wait()`` for the paths.
    ``close()`` ends a child that is still running (after an error).
    """

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._files: list[Path] = []

    def start(self) -> "FigureWorker":
        self._proc = subprocess.Popen([sys.executable, "-m", "netreturn.figures"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return self

    def submit(self, job: dict) -> None:
        # Through a file: a job with time series is larger than a pipe's
        # buffer, and the child may still be importing. The PID in the name:
        # another process drawing into the same folder must not take our job.
        if self._proc is None:
            self.start()
        assert self._proc is not None
        f = Path(job["out"]) / f".figures-{os.getpid()}-{len(self._files)}.json"
        f.write_text(json.dumps(job))
        self._files.append(f)
        if self._proc.stdin is None:
            return
        try:
            self._proc.stdin.write(f"{f}\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            self._proc.stdin = None  # the child is gone already: wait() reports why

    def wait(self) -> list[Path]:
        """The figures' paths; RuntimeError with the child's message if it failed."""
        assert self._proc is not None
        if self._proc.stdin is not None:
            try:
                self._proc.stdin.close()
            except BrokenPipeError:
                pass
            self._proc.stdin = None  # so that communicate() does not touch it
        out, err = self._proc.communicate()
        rc = self._proc.returncode
        self._proc = None
        for f in self._files:
            f.unlink(missing_ok=True)
        if rc != 0:
            lines = [x for x in err.strip().splitlines() if x.strip()]
            raise RuntimeError(lines[-1] if lines else f"the figure process exited with status {rc}")
        return [Path(p) for p in json.loads(out)]

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.communicate()
            self._proc = None
        for f in self._files:
            f.unlink(missing_ok=True)

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
    paths: list[str] = []
    for line in sys.stdin:
        if line.strip():
            paths += draw(json.loads(Path(line.strip()).read_text()))
    paths.sort(key=lambda p: ORDER.index(Path(p).name) if Path(p).name in ORDER else len(ORDER))
    print(json.dumps(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
