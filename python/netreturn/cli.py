"""The ``netreturn`` command line."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Sequence

from .args import (
    factors as _factors,
    kv as _kv,
    levels as _levels,
    positive as _positive,
    scales as _scales,
    seed as _seed,
    sweep as _sweep,
)
from .cluster import BackendError
from .files import FolderInUse, FolderLock
from .scenarios import DEFAULT_SCENARIO, ScenarioError, list_scenarios, load, swept

# The default experiment shows what the project is about: the window-rewriting
# gateways (EWA, AWM, EWT) against the queue disciplines (DropTail, RED).
DEFAULT_SWEEP = {"queue": ["droptail", "red", "ewa", "awm", "ewt"]}


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", dest="sets", type=_kv, action="append", default=[], metavar="NAME=VALUE",
                   help="override a scenario parameter (repeatable)")
    p.add_argument("--jobs", "-j", type=_positive, default=None, help="parallel processes (default: all cores)")
    p.add_argument("--out", type=Path, default=None, help="output directory (default: results/<scenario>)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def cmd_run(a: argparse.Namespace) -> int:
    from .api import expand as api_expand, run
    from .plots import small_sample_note
    from .results import claim_folder, conflict, default_folder_name, folder_results, settings, write_tables
    from .runner import flow_rows, incomplete_runs

    scenario = a.scenario if a.scenario is not None else DEFAULT_SCENARIO
    sweep = dict(a.sweep) if a.sweep else (DEFAULT_SWEEP if a.scenario is None else {})
    sets = dict(a.sets)
    if a.scheduler is not None and a.backend != "dask":
        raise ScenarioError(f"--scheduler {a.scheduler} is the address of a Dask scheduler: it needs --backend dask "
                            "(without it the runs would silently stay on this machine)")
    try:
        info = load(scenario, {**sets, **{k: v[0] for k, v in sweep.items()}})
    except ScenarioError as e:
        raise swept(e, sweep) from None
    experiment = settings(scenario, sets, sweep)
    out = a.out
    if out is None:  # results/<scenario>, or the first of -2, -3, ... free for these settings: never overwritten
        base = Path("results") / default_folder_name(scenario)
        out = next(p for p in (base.with_name(f"{base.name}-{i}") if i > 1 else base for i in itertools.count(1))
                   if not conflict(p, experiment))
        if out != base:
            print(f"netreturn: {base} holds runs of other settings; these go into {out}", file=sys.stderr)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ScenarioError(f"--out {out}: is a file; the results go into a folder") from None
    except OSError as e:
        raise ScenarioError(f"--out {out}: cannot create the folder: {e.strerror}") from None
    with FolderLock(out):  # refused (in use, other settings) before anything is printed; checked again below
        claim_folder(out, experiment)
    seeds = None if a.seed is not None else (a.seeds or info["seeds"])
    params = {**info["params"], **sets}
    # A reader that goes away during the header (`| head -1` with unbuffered
    # output) must not cost the runs: they still run and are stored, and
    # the command ends with SIGPIPE's status.
    reader_gone = False
    try:
        print(f"{info['name']}: {info['description']}".strip().rstrip(":"))
        if info.get("reference"):
            print(f"  reference: {info['reference']}")
        print("  params: " + ", ".join(f"{k}={v}" for k, v in params.items() if k not in sweep))
        if sweep:
            print("  sweep: " + "; ".join(f"{k} in {{{', '.join(v)}}}" for k, v in sweep.items()))
        print(f"  seeds: {a.seed if a.seed is not None else f'1..{seeds}'}  ->  {out}/")
        print(f"  monitored link: {info.get('monitored') or 'none'} (utilization, queue and drops below describe "
              "it; --per-link shows every link)")
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        reader_gone = True
    from . import figures, links, report

    # The figures are drawn by a child process that imports matplotlib while
    # the simulations run: the time series as soon as each group's first
    # seed is in, the bar charts after the table is printed.
    worker = figures.FigureWorker() if not a.no_plots else None
    keys, name = list(sweep), info["name"]
    groups = len(api_expand(sweep))
    series: list[dict] = []

    def on_result(spec, r: dict) -> None:
        if worker and "queue_series" in r:
            series.append(r)
            if len(series) == groups:
                worker.submit(figures.series_job(series, keys, out, name))

    # Held from the first run to the last table and figure (the runner
    # takes it again for the runs): another sweep into this folder is refused.
    folder = FolderLock(out).acquire()
    try:
        claim_folder(out, experiment)
        if worker:
            worker.start()
        res = run(scenario, set=sets, sweep=sweep, seeds=a.seeds, seed=a.seed, jobs=a.jobs, out=out,
                  progress=not a.quiet, backend=a.backend, scheduler=a.scheduler, on_result=on_result, tables=False,
                  wording="cli")
        rows = res.run_rows()
        summary = res.summary_rows()
        stored = folder_results(out, res.raw)  # the tables and figures cover every run in the folder
        if worker:
            if len(series) < groups:  # some came from the run store
                worker.submit(figures.series_job(res.raw, keys, out, name))
            worker.submit(figures.summary_job(stored.run_rows(), keys, out, name, flow_rows(stored.raw, keys),
                                              columns=stored.metrics()))
        print()
        print(report.table_text(summary, res.group_keys))
        if a.per_link:
            print()
            print(links.link_table(links.link_rows(res.raw, res.group_keys), res.group_keys))
        wall = sum(r["wall_s"] or 0 for r in rows)
        events = int(sum(r.get("events") or 0 for r in rows))
        print(f"\n{len(rows)} runs, {events:,} events, {wall:.2f} s of simulation CPU time")
        stalled = incomplete_runs(res.raw, res.group_keys)
        for line in stalled:
            print(f"netreturn: WARNING: {line}", file=sys.stderr)
        if stalled:
            print(f"netreturn: WARNING: {len(stalled)} run(s) kept with unfinished transfers (FCT NaN in flows.csv)",
                  file=sys.stderr)
        write_tables(out, stored)
        note = small_sample_note(Counter(report.group_label(r, keys) for r in rows).values())
        if note:
            print(f"netreturn: WARNING: {note}", file=sys.stderr)
        if len(stored.raw) > len(rows):
            print(f"the tables in {out} hold {len(stored.raw)} runs: these {len(rows)} and "
                  f"{len(stored.raw) - len(rows)} stored there before with the same settings")
        if worker:
            try:
                paths = worker.wait()
            except RuntimeError as e:
                print(f"netreturn: the figures could not be drawn: {e}", file=sys.stderr)
                return 1
            print("plots: " + ", ".join(str(p) for p in paths))
    finally:
        if worker:
            worker.close()
        folder.release()
    print(f"tables: {out / 'summary.csv'}, {out / 'runs.csv'}, {out / 'flows.csv'}, {out / 'links.csv'}")
    return 141 if reader_gone else 0


def cmd_plot(a: argparse.Namespace) -> int:
    from .replot import main as plot_main

    return plot_main(a)


def cmd_calibrate(a: argparse.Namespace) -> int:
    from .calibrate import calibrate, degenerate

    found = calibrate(a.scenario, levels=a.levels, seeds=a.seeds, sets=dict(a.sets), param=a.param,
                      max_flows=a.max_flows, jobs=a.jobs, out=a.out, progress=not a.quiet, strategy=a.strategy)
    from .table import num, render

    rows = [[name, num(target, "%"), n, num(loss, "%")] for name, target, n, loss in found]
    print("\n" + render(["level", "target loss %", a.param, "loss % (mean)"], rows, align=["right"] * 4))
    why = degenerate([n for _, _, n, _ in found], param=a.param)
    if why:
        print(f"netreturn: WARNING: degenerate calibration: {why}", file=sys.stderr)
        from .reproduce.ewt_calibration import path_budget, why_line

        try:  # a dumbbell's arithmetic (docs/reproduce.md, "Why the calibration degenerates")
            print(f"netreturn: {a.scenario}: {why_line(path_budget(a.scenario, dict(a.sets)))}", file=sys.stderr)
        except (KeyError, TypeError, ValueError, ScenarioError):
            pass
    return 0


def cmd_reproduce(a: argparse.Namespace) -> int:
    from .reproduce import main as reproduce_main

    return reproduce_main(a)


def cmd_study(a: argparse.Namespace) -> int:
    import importlib

    from .reproduce.commands import STUDIES

    return importlib.import_module(STUDIES[a.study][0], "netreturn.reproduce").main(a)


def cmd_list(a: argparse.Namespace) -> int:
    for s in list_scenarios():
        try:
            info = load(s)
            params = ", ".join(f"{k}={v}" for k, v in info["params"].items())
            print(f"{s}\n    {info['name']}  [{params}]")
        except ScenarioError as e:
            print(f"{s}\n    invalid: {e}")
    # The mechanisms, from the registry (crates/control, crates/tcp).
    from . import _native

    m = _native.mechanisms()
    print("\nqueue = (link queue methods; docs/mechanisms.md)")
    for q in m["queues"]:
        keys = f"  {q['table']} = {{ {', '.join(q['keys'])} }}" if q["keys"] else ""
        print(f"    {q['name']:<10} {q['title']}{keys}")
    for c in m["controllers"]:
        print(f"    {c['name']:<10} {c['title']}  gateway.{c['name']} = {{ {', '.join(c['keys'])} }}")
    print("tcp.cc =")
    for c in m["congestion_controls"]:
        print(f"    {c['name']:<10} {c['title']}")
    return 0


def cmd_show_config(a: argparse.Namespace) -> int:
    from .scenarios import show_config

    print(show_config(a.scenario, dict(a.sets)), end="")
    return 0


def cmd_bench(a: argparse.Namespace) -> int:
    from .bench import main as bench_main

    return bench_main(a)


def cmd_validate(a: argparse.Namespace) -> int:
    if a.summary or a.regenerate or a.doc or a.resim_ours:
        from .valsummary import main as summary_main

        return summary_main(a)
    if a.mechanisms or a.markdown:
        raise ScenarioError("--mechanisms and --markdown apply to validate --summary")
    if getattr(a, "scenario", None) == "ngwa":
        # Here, not in validate.main: validate_ngwa reads the summary's
        # verdicts, and the summary reads validate (no import cycle).
        from pathlib import Path

        from .validate_ngwa import main as ngwa_main

        out = a.out or Path("results") / "validate"
        out.mkdir(parents=True, exist_ok=True)
        return ngwa_main(a, out)
    from .validate import main as validate_main

    return validate_main(a)


def cmd_show(a: argparse.Namespace) -> int:
    from .topology import main as show_main

    return show_main(a)


def cmd_report(a: argparse.Namespace) -> int:
    from .htmlreport import main as report_main

    return report_main(a)


def cmd_validate_xcp(a: argparse.Namespace) -> int:
    from .ns2xcp import main as xcp_main

    return xcp_main(a)


def cmd_testbed(a: argparse.Namespace) -> int:
    from . import testbed

    return testbed.main(a.args)


def version() -> str:
    """The package's version and the hash of the compiled simulator (the
    build id run manifests record)."""
    from . import __version__
    from .runner import native_build_id

    return f"netreturn {__version__} (simulator build {native_build_id()})"


class _Version(argparse.Action):
    """``--version``, computed only when asked: hashing the native module
    costs a read of it, which other commands need not pay."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="netreturn", description=__doc__)
    p.add_argument("--version", action=_Version, help="print the version and the simulator's build hash")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="run a scenario over seeds and print mean ± 95 %% CI per metric")
    r.add_argument(
        "scenario",
        nargs="?",
        help=f"scenario file or name (default: {DEFAULT_SCENARIO} swept over {', '.join(DEFAULT_SWEEP['queue'])})",
    )
    r.add_argument("--sweep", type=_sweep, action="append", default=[], metavar="NAME=V1,V2",
                   help="compare values of a parameter (repeatable: cartesian product)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--seeds", type=_positive, default=None, help="number of seeds (default: the scenario's)")
    g.add_argument("--seed", type=_seed, default=None, help="run this one seed")
    r.add_argument("--backend", choices=["local", "dask"], default="local",
                   help="local processes, or a Dask cluster for sweeps that outgrow one machine")
    r.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    r.add_argument("--no-plots", action="store_true")
    r.add_argument("--per-link", action="store_true",
                   help="also print every link direction's utilization, drops and queue (links.csv has them always)")
    _add_common(r)
    r.set_defaults(func=cmd_run)

    pl = sub.add_parser("plot", help="redraw a results folder's figures from its stored runs (--metrics, --format)")
    from .replot import add_arguments as plot_arguments

    plot_arguments(pl)
    pl.set_defaults(func=cmd_plot)

    c = sub.add_parser(
        "calibrate", help="RFC 7928 congestion levels: smallest flow count per loss level, under DropTail"
    )
    c.add_argument("scenario")
    c.add_argument("--levels", type=_levels, default=[0.1, 0.5, 1.0],
                   help="target loss ratios in %% (default 0.1,0.5,1.0)")
    c.add_argument("--seeds", type=_positive, default=5)
    c.add_argument("--param", default="flows", help="the parameter to increase (default: flows)")
    c.add_argument("--max-flows", type=_positive, default=100)
    c.add_argument("--strategy", choices=["scan", "search"], default="scan",
                   help="scan: raise the count one at a time (the paper's way); search: gallop and bisect")
    _add_common(c)
    c.set_defaults(func=cmd_calibrate)

    rp = sub.add_parser("reproduce", help="reproduce a paper's evaluation and write a report beside its numbers")
    from .reproduce.commands import add_parsers  # the options only; a paper's module is imported when it runs

    add_parsers(rp)
    rp.set_defaults(func=cmd_reproduce)

    st = sub.add_parser("study", help="a study of our own (no paper has its numbers): runs, statements, report")
    from .reproduce.commands import add_study_parsers

    add_study_parsers(st)
    st.set_defaults(func=cmd_study)

    b = sub.add_parser("bench", help="benchmark the simulator (and ns-3 side by side when installed)")
    b.add_argument("--repeat", type=_positive, default=15, help="runs of the benchmark case (best and median shown)")
    b.add_argument("--no-ns3", action="store_true", help="skip the ns-3 reference run")
    b.add_argument("--sweep", action="store_true", help="also time the full baseline sweep (540 runs)")
    b.add_argument("--gateways", action="store_true",
                   help="also price each method (RED, ARED, EWA, AWM, EWT) and each AQM (CoDel, FQ-CoDel, PIE, "
                        "FQ-PIE, DualPI2, COBALT) against DropTail alone: per run, per event and per packet hop")
    b.add_argument("--scale", action="store_true",
                   help="scenario 2 at 1x, 10x and 100x flows and rates: cost per packet hop and peak memory, "
                        "beside ns-3 on the same scenario")
    b.add_argument("--scales", type=_factors, default=[1, 10, 100], metavar="K[,K...]",
                   help="with --scale, the factors to run (default 1,10,100; each against the first, e.g. "
                        "1,10,30,50,100 for the curve between)")
    b.add_argument("--ns3-scales", type=_scales, default=[1], metavar="K[,K]",
                   help="with --scale, the factors ns-3 runs too: 1 (default), 10 (about five minutes more) "
                        "or 100")
    b.add_argument("--process", action="store_true",
                   help="`netreturn run` as a user sees it, one seed and ten, figures included: time to the table, "
                        "whole process, cost outside the simulation, beside ns-3's whole process")
    b.set_defaults(func=cmd_bench)

    v = sub.add_parser("validate", help="EWT scenario 1 or 2 in ns-3 3.44 and in netreturn, side by side per metric")
    from .validate import add_arguments as validate_arguments  # ns-3 itself is not imported

    validate_arguments(v)
    _add_common(v)
    v.set_defaults(func=cmd_validate)

    vx = sub.add_parser("validate-xcp", help="XCP in ns-2.35 (its own Queue/XCP, senders, sinks) and in netreturn, "
                                             "per link direction")
    from .ns2xcp import add_arguments as xcp_arguments

    xcp_arguments(vx)
    vx.set_defaults(func=cmd_validate_xcp)

    sc = sub.add_parser(
        "show-config", help="print the scenario as it will run: every link direction and the TCP settings, resolved"
    )
    sc.add_argument("scenario", help="scenario file or name (e.g. ewt/scenario2)")
    sc.add_argument("--set", dest="sets", type=_kv, action="append", default=[], metavar="NAME=VALUE",
                    help="override a [params] entry (repeatable)")
    sc.set_defaults(func=cmd_show_config)

    sh = sub.add_parser("show", help="draw the topology (SVG) and print every link's rate, delay, buffer, queue "
                                     "and controller, the monitored one marked")
    sh.add_argument("scenario", help="scenario file or name (e.g. ewt/scenario2)")
    sh.add_argument("--set", dest="sets", type=_kv, action="append", default=[], metavar="NAME=VALUE",
                    help="override a [params] entry (repeatable)")
    sh.add_argument("--out", type=Path, default=None, help="the drawing (default: <scenario>-topology.svg here)")
    sh.set_defaults(func=cmd_show)

    hr = sub.add_parser("report", help="write a results folder's page: tables, interactive plots, time series, "
                                       "flows and settings in one HTML file that opens offline")
    hr.add_argument("folder", type=Path, help="the --out folder of `netreturn run` or `netreturn reproduce`")
    hr.add_argument("--out", type=Path, default=None, help="the page (default: FOLDER/report.html)")
    hr.set_defaults(func=cmd_report)

    ls = sub.add_parser("list", help="list the scenarios and their parameters")
    ls.set_defaults(func=cmd_list)

    t = sub.add_parser("testbed", help="real Linux TCP through the real gateway in network namespaces (root)")
    t.add_argument("args", nargs=argparse.REMAINDER)
    t.set_defaults(func=cmd_testbed)

    # Listed here for --help; main() hands the arguments over untouched.
    gw = sub.add_parser("gateway", help="run the real gateway (netreturn-gateway ARGS...), building it in a checkout "
                                        "if missing; `netreturn gateway --help` is the gateway's")
    gw.add_argument("args", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["testbed"]:
        # The testbed parses its own arguments (`netreturn testbed --help` too).
        from . import testbed

        return testbed.main(args[1:])
    if args[:1] == ["gateway"]:
        # The gateway binary parses its own arguments.
        from . import gateway_binary

        return gateway_binary.main(args[1:])
    a = build_parser().parse_args(args)
    try:
        return a.func(a)
    except ScenarioError as e:
        print(f"netreturn: error: {e}", file=sys.stderr)
        return 2
    except (BackendError, FolderInUse) as e:
        print(f"netreturn: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nnetreturn: interrupted; finished runs are kept and a rerun resumes", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`netreturn run ... | head`):
        # stop quietly, as a Unix tool does on SIGPIPE; what was written to
        # the run store is kept. Further writes at exit go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
