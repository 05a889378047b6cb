"""The report's text: number formats, Markdown tables, and the skeleton
every reproduction's ``report.md`` shares (header, claims, files)."""

from __future__ import annotations

import math
import os
import platform
import time
from pathlib import Path
from typing import Any

from ..stats import fmt_ci as _fmt_ci
from ..table import render
from .store import git_rev, now


def fmt_ci(m: float, h: float) -> str:
    """mean ± CI; a CI that is 0 up to float rounding prints as 0."""
    if not math.isnan(m) and not math.isnan(h) and h <= 1e-9 * max(1.0, abs(m)):
        h = 0.0
    return _fmt_ci(m, h)


def f(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2g}"


def pct(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:+.1f} %"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table of the cells as given (:func:`netreturn.table.render`)."""
    return render(header, rows, markdown=True, align=["left"] * len(header))


WALL = "@@WALL@@"  # replaced by the invocation's wall time when the report is written


class Report:
    """``report.md`` being written: lines, and the parts every paper's
    report has."""

    def __init__(self, paper: Any, opts: Any):
        self.paper, self.opts = paper, opts
        self.lines: list[str] = []

    def w(self, line: str = "") -> None:
        self.lines.append(line)

    def table(self, header: list[str], rows: list[list[str]]) -> None:
        self.w(md_table(header, rows))
        self.w("")

    def command(self) -> str:
        """The command line that makes this report."""
        opts, paper = self.opts, self.paper
        cmd = f"netreturn reproduce {paper.name}" + (" --quick" if opts.quick else "") + f" --seeds {opts.seeds}"
        if opts.sets:
            cmd += "".join(f" --set {k}={v}" for k, v in opts.sets.items())
        if set(opts.methods) != set(paper.methods):
            cmd += f" --methods {','.join(opts.methods)}"
        if set(opts.scenarios) != set(paper.scenarios):
            cmd += f" --scenarios {','.join(opts.scenarios)}"
        return cmd

    def header(self, runs: Any, build: str) -> None:
        """Title, the paper, the command, the build, seeds and runs."""
        opts, paper, w = self.opts, self.paper, self.w
        out = opts.out
        w(f"# {paper.run['heading']}")
        w("")
        w(f"Paper: {paper['title']} (docs/bibliography.md), {paper.run['sections']}; "
          f"its numbers are in `python/netreturn/paper/{paper.name}.toml`.")
        w("")
        w(f"* command: `{self.command()} --out {out}`"
          + (" (**quick smoke test: few seeds, not a reproduction**)" if opts.quick else ""))
        w(f"* generated {now()}; simulator build `{build}`; git `{git_rev()}`; {os.cpu_count()} cores, "
          f"jobs {opts.jobs or os.cpu_count()}; Python {platform.python_version()}")
        w(
            f"* seeds 1..{opts.seeds} per cell, mean ± 95 % CI (Student's t); capacity search up to "
            f"{opts.max_flows} flows, {'all' if opts.exact else f'{min(opts.first_seeds, opts.seeds)} then up to {opts.seeds}'} seeds per probe"  # noqa: E501
        )
        w(
            f"* {len(runs.results)} distinct runs: {runs.executed} run now, {len(runs.results) - runs.executed} reused from "  # noqa: E501
            f"`{out}/runs`; {runs.cpu_s:.1f} s of simulation CPU time in this invocation; wall time of this invocation "
            f"{WALL} s (runs, search and this report)"
        )
        if opts.sets:
            w(f"* parameter overrides for every run: {', '.join(f'{k}={v}' for k, v in opts.sets.items())}")
        w("")

    def write(self, path: Path, t0: float) -> str:
        text = "\n".join(self.lines).replace(WALL, f"{time.perf_counter() - t0:.0f}")
        Path(path).write_text(text)
        return text
