"""``netreturn plot DIR``: the figures of a results folder, redrawn from
its stored runs without running anything: a choice of metrics, and PNG,
SVG or PDF."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from .args import comma_list
from .plots import SmallSampleWarning


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .report import FORMATS

    p.add_argument("folder", type=Path, help="a results folder (netreturn run --out DIR)")
    p.add_argument("--metrics", type=comma_list, default=None, metavar="M1,M2",
                   help="the metrics to draw, as named in runs.csv (default: the headline metrics)")
    p.add_argument("--format", choices=FORMATS, default="png", help="the figures' format (default: png)")
    p.add_argument("--out", type=Path, default=None, help="where the figures go (default: the folder)")


def main(a: argparse.Namespace) -> int:
    from . import figures
    from .results import open_results
    from .runner import flow_rows

    try:
        res = open_results(a.folder)
    except FileNotFoundError as e:
        print(f"netreturn: error: {e}", file=sys.stderr)
        return 2
    out = a.out or a.folder
    out.mkdir(parents=True, exist_ok=True)
    keys, name = res.group_keys, res.scenario["name"]
    jobs = [figures.summary_job(res.run_rows(), keys, out, name, flow_rows(res.raw, keys), a.metrics, a.format,
                                res.metrics()),
            figures.series_job(res.raw, keys, out, name, a.format)]
    paths: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmallSampleWarning)
        try:
            for job in jobs:
                paths += figures.draw(job)
        except ValueError as e:  # an unknown --metrics name
            print(f"netreturn: error: {e}", file=sys.stderr)
            return 2
    for w in caught:
        if issubclass(w.category, SmallSampleWarning):
            print(f"netreturn: WARNING: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    print(f"{a.folder}: {len(res.raw)} stored runs in {len(set(jobs[0]['groups']))} group(s), nothing rerun")
    print("plots: " + ", ".join(paths))
    return 0
