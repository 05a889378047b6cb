"""The figures of ``netreturn run``, drawn by a child process.

Importing matplotlib and drawing three figures costs more CPU time than a
short sweep's simulations. So that the table is not held back, ``run``
starts this child before the simulations: it imports matplotlib while they
run (on another core when there is one). Jobs come as lines on its standard
input, each the path of a JSON file: the time series (queue, window) as soon
as every group's first seed is in, so those figures are drawn while the
other seeds run; the run rows (metrics figure, FCT CDF) when all runs are done. The
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
from typing import Any, Iterable, Mapping, Sequence

# The order the figures are listed in, whatever order they were drawn in.
ORDER = ["metrics", "fct_cdf", "queue", "window", "rtt_cdf"]


def series_job(results: Iterable[dict], keys: Sequence[str], out: Path, name: str, fmt: str = "png") -> dict:
    """The time-series figures' job: per group, the queue series of the run
    that kept it (with the monitored link's name and the seed) and its
    first traced flow's window and RTT trace (with the flow and seed)."""
    from .report import group_label

    series, traces = {}, {}
    for r in results:
        if "queue_series" not in r:
            continue
        label = group_label(r["params"], keys)
        if r["queue_series"] and r["queue_series"]["time_s"]:
            series[label] = {**r["queue_series"], "seed": r["seed"], "link": r.get("monitor_link")}
        if r.get("traces"):
            traces[label] = {**r["traces"][0], "seed": r["seed"]}
    return {"out": str(out), "name": name, "series": series, "traces": traces, "fmt": fmt}


def summary_job(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], out: Path, name: str,
                flows: Sequence[Mapping[str, Any]] = (), metrics: Sequence[str] | None = None,
                fmt: str = "png", columns: Sequence[str] | None = None) -> dict:
    """The metrics figure's and the FCT CDF's job: one row per run (its
    group and ``columns``, default every numeric one), each finished flow's
    FCT per group, the metrics to draw (default: the headline ones) and the
    format."""
    from .report import group_label, numeric_columns

    cols = [c for c in (numeric_columns(rows) if columns is None else columns) if c not in keys]
    groups = [group_label(r, keys) for r in rows]
    fct: dict[str, list] = {g: [] for g in dict.fromkeys(groups)}
    for f in flows:
        fct.setdefault(group_label(f, keys), []).append(f.get("fct_s"))
    return {"out": str(out), "name": name, "groups": groups, "rows": [{c: r.get(c) for c in cols} for r in rows],
            "fct": fct, "metrics": list(metrics) if metrics else None, "fmt": fmt}


def _one(values: Iterable[Any]) -> Any:
    """The value all have in common, or None."""
    vs = set(values)
    return vs.pop() if len(vs) == 1 else None


def draw(job: dict) -> list[str]:
    """Draws what ``job`` holds into ``job["out"]`` (in ``job["fmt"]``):
    ``metrics`` and ``fct_cdf`` from run rows, ``queue``, ``window`` and
    ``rtt_cdf`` from time series; returns their paths."""
    from . import plots, report

    out, name, fmt = Path(job["out"]), job["name"], job.get("fmt", "png")
    paths = []
    if "rows" in job:
        fig = plots.metrics_figure(job["rows"], job["groups"], name, job.get("metrics"))
        paths.append(report.save(fig, out / f"metrics.{fmt}"))
        runs = {g: job["groups"].count(g) for g in dict.fromkeys(job["groups"])}
        fig = plots.fct_cdf_figure(job.get("fct", {}), runs, name)
        if fig is not None:
            paths.append(report.save(fig, out / f"fct_cdf.{fmt}"))
    if job.get("series"):
        s = job["series"]
        link = _one(x.get("link") for x in s.values())
        seed = _one(x.get("seed") for x in s.values())
        what = f"queue of link {link}" if link else "bottleneck queue"
        labels = {k if link or not x.get("link") else f"{k} ({x['link']})": x for k, x in s.items()}
        paths.append(report.plot_queues(labels, None, out / f"queue.{fmt}",
                                        f"{name}: {what}, " + (f"seed {seed}" if seed is not None else "first seed")))
    if job.get("traces"):
        t = job["traces"]
        flow, seed = _one(x.get("flow") for x in t.values()), _one(x.get("seed") for x in t.values())
        labels = {k if flow is not None else f"{k}, flow {x.get('flow')}": x for k, x in t.items()}
        whose = f"flow {flow}" if flow is not None else "one flow per group"
        paths.append(report.plot_windows(labels, out / f"window.{fmt}", f"{name}: effective window min(cwnd, rwnd) "
                                         f"of {whose}, " + (f"seed {seed}" if seed is not None else "first seed")))
        fig = plots.rtt_cdf_figure(t, name)
        if fig is not None:
            paths.append(report.save(fig, out / f"rtt_cdf.{fmt}"))
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
    import seaborn  # noqa: F401  (the metrics figure's; its import is most of a second)


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
    paths.sort(key=lambda p: ORDER.index(Path(p).stem) if Path(p).stem in ORDER else len(ORDER))
    print(json.dumps(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
