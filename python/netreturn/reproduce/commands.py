"""``netreturn reproduce <paper> ...``: one subcommand per paper, each with
only the options its reproduction reads (issue 24: ``reproduce ngwa --help``
shows no flag of EWT's).

A light module: it imports no paper module, so ``netreturn --help`` does
not load the simulator's runner; a paper's module is imported when it runs.
Every paper shares :func:`add_shared` (where, how many seeds, ``--quick``,
how many processes, quiet) and adds its own in ``ARGUMENTS``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from ..args import kv, positive


def add_shared(p: argparse.ArgumentParser, paper: str, seeds: int, quick: str) -> None:
    """The options every reproduction reads. ``seeds``: the default count;
    ``quick``: what ``--quick`` changes, for its help."""
    p.add_argument("--out", type=Path, default=None, help=f"output directory (default: results/reproduce-{paper})")
    p.add_argument("--seeds", type=positive, default=None,
                   help=f"seeds per point, 1..N (default {seeds}; 3 with --quick)")
    p.add_argument("--quick", action="store_true",
                   help=f"smoke test, not a reproduction: {quick}; the report says which statements it cannot judge")
    p.add_argument("--jobs", "-j", type=positive, default=None, help="parallel processes (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def _ewt(p: argparse.ArgumentParser) -> None:
    add_shared(p, "ewt", 30, "3 seeds, capacity search up to 32 flows")
    p.add_argument("--set", dest="sets", type=kv, action="append", default=[], metavar="NAME=VALUE",
                   help="override a scenario parameter of both scenarios (repeatable)")
    p.add_argument("--methods", default=None, help="comma-separated subset of droptail,red,ared,ewa,awm,ewt")
    p.add_argument("--scenarios", default=None, help="comma-separated subset of 1,2")
    p.add_argument("--max-flows", type=positive, default=None,
                   help="capacity search limit (default 128; 32 with --quick)")
    p.add_argument("--first-seeds", type=positive, default=6,
                   help="seeds a capacity probe starts with; more only while the CI straddles the level")
    p.add_argument("--exact", action="store_true", help="run every capacity probe on all seeds")
    p.add_argument("--reuse-stale", action="store_true", help="keep runs made by a different simulator build")
    p.add_argument("--sensitivity", choices=["off", "grid", "full"], default="grid",
                   help="what the paper leaves out: a 128 KiB receive buffer (ns-3's default) instead of 1 MB and "
                        "1000-packet access queues instead of 100 (with DropTail's calibration). off; grid: the "
                        "paper's counts (default); full: also every method's capacity search with 128 KiB and "
                        "with 1000-packet access queues")


AWM_FAMILIES = ("capacity", "rtt", "flows", "web", "parking-lot", "fairness")
AWM_METHODS = ("awm", "droptail", "xcp")


def _awm(p: argparse.ArgumentParser) -> None:
    add_shared(p, "awm", 5, "3 seeds, no run longer than 20 s")
    p.add_argument("--family", action="append", choices=AWM_FAMILIES, help="run only these (repeatable)")
    p.add_argument("--method", action="append", choices=AWM_METHODS, help="run only these (repeatable)")
    p.add_argument("--stop", help="set every run's stop time (e.g. 20s); the point labels say what ran")


def _ngwa(p: argparse.ArgumentParser) -> None:
    add_shared(p, "ngwa", 30, "3 seeds per Table 2 row")
    p.add_argument("--sensitivity", action="store_true",
                   help="every statement judged again at the neighbouring bottleneck rates of the calibration, "
                        "at bottleneck RTTs of 20 and 80 ms and with a receiver that may shrink its window; the "
                        "losses of rows Table 2 reports lossless traced at each of these settings too")


def _sarbe(p: argparse.ArgumentParser) -> None:
    add_shared(p, "sarbe", 10, "3 seeds, three loss rates, one fairness loss rate")


# name -> (module under netreturn.reproduce, its help, its options)
PAPERS: dict[str, tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = {
    "ewt": (".ewt", "the EWT paper: both scenarios, six methods", _ewt),
    "ngwa": (".ngwa", "the NGWA paper: window behaviour, rates, Table 2", _ngwa),
    "awm": (".awm", "the AWM paper: AWM vs NC vs XCP, six families", _awm),
    "sarbe": (".sarbe", "the SARBE paper: estimators, lossy link, fairness", _sarbe),
}


def _add_subcommands(parent: argparse.ArgumentParser, table: dict, dest: str, verb: str, writes: str) -> None:
    """One subcommand per entry of ``table`` (module, help, add-options);
    each sets ``dest`` to its name."""
    sub = parent.add_subparsers(dest=dest, required=True, metavar=dest.upper())
    for name, (_, help_, add) in table.items():
        add(sub.add_parser(name, help=help_, description=f"{verb} {help_}; writes {writes} under --out."))


def add_parsers(rp: argparse.ArgumentParser) -> None:
    """``reproduce``'s subcommands, one per paper; each sets ``paper``."""
    _add_subcommands(rp, PAPERS, "paper", "Reproduce", "report.md, figures/, tables as CSV and runs/")


def _modern(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=None, help="output directory (default: results/study-modern)")
    p.add_argument("--seeds", type=positive, default=None, help="seeds per cell, 1..N (default 5; 2 with --quick)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 2 seeds, short runs, DropTail/EWT/FQ-CoDel/DualPI2 x CUBIC/Prague/BBR on "
                        "EWT scenario 2 and the web mice, FQ-CoDel behind no gateway or EWT; the report says which "
                        "statements it cannot judge")
    p.add_argument("--jobs", "-j", type=positive, default=None, help="parallel processes (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--mechanisms", default=None, help="comma-separated subset of the study file's mechanisms")
    p.add_argument("--senders", default=None, help="comma-separated subset of the study file's senders")
    p.add_argument("--scenarios", default=None, help="comma-separated subset of ewt1,ewt2,twoway,web")


# name -> (module under netreturn.reproduce, its help, its options): studies
# of our own, beside the reproductions (`netreturn study NAME`).
STUDIES: dict[str, tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = {
    "modern": (".modern", "EWT, AWM, RWM, NGWA against FQ-CoDel, PIE, DualPI2 with CUBIC, NewReno, DCTCP, Prague, "
               "BBR (issue 27)", _modern),
}


def add_study_parsers(sp: argparse.ArgumentParser) -> None:
    """``study``'s subcommands; each sets ``study``."""
    _add_subcommands(sp, STUDIES, "study", "Study",
                     "report.md, statements.csv, cells.csv, runs.csv, figures/ and runs/")
