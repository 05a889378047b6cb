"""``netreturn testbed ...``: real Linux TCP through the netreturn gateway
in network namespaces.

    netreturn testbed check
    netreturn testbed quickstart                       (builds the gateway if needed; without and with EWT)
    netreturn testbed run --controller rwm --rate 100mbit --delay 10ms --flows 4 --out DIR
    netreturn testbed sweep testbed/dumbbell4 --sweep queue=droptail,ewt --reps 10 --out DIR
    netreturn testbed rwm --reps 10 --out DIR          (the RWM paper's experiment, docs/decisions.md §5.4)
    netreturn testbed ngwa --seconds 120 --out DIR     (the NGWA paper's Linux experiment, the NGWA paper's section 4.3)
    netreturn testbed compare --reps 10 --out DIR      (same scenario in the simulator and here)
    netreturn testbed bench --out DIR
    netreturn testbed cleanup

Scenario files are the simulator's (docs/scenarios.md; scenarios/testbed/);
a file or value the testbed cannot run exits with status 2 naming the file,
the field and what is allowed. Sweeps keep every finished run under
DIR/runs/ and resume where they stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..args import comma_list as _list, kv as _kv, positive as _positive, sweep as _sweep_arg
from . import registry
from .bench import MODES
from .netns import TestbedError, available_cc, leftover_namespaces, missing_requirements, sh
from .runner import DATAPATHS, RunConfig, find_gateway, run
from .scenario import parse_rate


def _sweep_common(p: argparse.ArgumentParser, out_default: str, access_default: str = "shaped") -> None:
    p.add_argument("--set", dest="sets", type=_kv, action="append", default=[], metavar="NAME=VALUE",
                   help="override a scenario parameter (repeatable)")
    p.add_argument("--reps", type=_positive, default=None,
                   help="repetitions of every setting (default: the scenario's run.seeds)")
    p.add_argument("--out", type=Path, default=Path(out_default), help=f"results directory (default {out_default})")
    p.add_argument("--gateway-bin", default=None, help="netreturn-gateway binary (default: $NETRETURN_GATEWAY, ...)")
    p.add_argument("--prefix", default=None, help="namespace name prefix (default nrtb<pid>)")
    p.add_argument("--keep-raw", action="store_true", help="keep every run's raw files under DIR/raw/")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--datapath", choices=DATAPATHS, default="packet",
                   help="the bottleneck gateway's: packet (AF_PACKET) or kernel (eBPF; its delay and loss on a "
                        "packet hop in front); part of each run's identity")
    p.add_argument("--access", choices=["aggregate", "shaped"], default=access_default,
                   help="the end hosts' links: shaped (each host's link on its own, tbf at the file's rates and "
                        "buffers, as the simulator's dumbbell) or aggregate (only the WAN emulator limits the "
                        "senders, together, at access rate x pairs; runs made before 2026-11-27 session 22); "
                        f"default {access_default}; part of each run's identity")
    p.add_argument("--host-sysctl", dest="host_sysctl", action="append", default=[], metavar="NAME=VALUE",
                   help="a Linux setting every end host's namespace takes before each run, to switch one rule of "
                        "Linux's TCP (e.g. net.ipv4.tcp_recovery=0: no RACK); net.ipv4.tcp_* and net.core.* only; "
                        "repeatable; part of each run's identity")


def _queue_spec(v: str) -> str:
    """A gateway --queue spec whose discipline is one of the registry's."""
    name = v.split(",", 1)[0]
    if name not in registry.queues():
        raise argparse.ArgumentTypeError(f"unknown queue {name!r}; allowed: {', '.join(registry.queues())}")
    return v


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="netreturn testbed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check", help="say whether the testbed can run here")
    from . import quickstart

    quickstart.add_parser(sub)
    from . import ngwa

    ngwa.add_parser(sub)
    c = sub.add_parser("cleanup", help="remove namespaces left by a killed run")
    c.add_argument("--prefix", default="nrtb")
    b = sub.add_parser("bench", help="kernel bridge vs gateway vs gateway+controller")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--seconds", type=float, default=5.0)
    b.add_argument("--streams", type=int, default=1)
    b.add_argument("--pings", type=int, default=1000, help="idle pings per trial, one every 2 ms (default 1000)")
    b.add_argument("--mode", action="append", default=None, choices=list(MODES),
                   help="modes to run (repeatable; default: all, side by side)")
    b.add_argument(
        "--repeat", type=int, default=3, help="interleaved trials per mode; the table shows the best and the spread"
    )
    b.add_argument("--gateway-bin", default=None)
    b.add_argument("--no-pin", action="store_true", help="do not pin the gateway / steer host receive (RPS)")
    b.add_argument("--offloads", action="store_true",
                   help="keep the veths' TSO/GSO and checksum offload (64 KiB aggregates, as a server NIC hands "
                        "them over): the kernel bridge and kdp modes only")
    b.add_argument("--rate", default=None, metavar="RATE",
                   help="offered load, e.g. 10Gbps (iperf3 -b, split over the streams): every mode carries the same "
                        "throughput, so the machine's CPU compares per byte (default: as fast as TCP goes)")
    sw = sub.add_parser("sweep", help="repetitions of a scenario file (a sweep), with resume")
    sw.add_argument("scenario", help="scenario file or name, e.g. testbed/dumbbell4")
    sw.add_argument("--sweep", type=_sweep_arg, action="append", default=[], metavar="NAME=V1,V2",
                    help="compare values of a parameter (repeatable: cartesian product)")
    _sweep_common(sw, "results/testbed-sweep")
    rw = sub.add_parser("rwm", help="the RWM paper's experiment (docs/decisions.md §5.4): FCT, slowest of four, "
                                    "RTT table")
    rw.add_argument("--scenario", default="testbed/rwm")
    rw.add_argument(
        "--rtt", type=_list, default=None, metavar="LIST", help="total RTTs (default 20ms,60ms,100ms,140ms)"
    )
    rw.add_argument("--flows", type=_list, default=None, metavar="LIST", help="concurrent downloads (default 1,4)")
    rw.add_argument("--settings", type=_list, default=None, metavar="LIST",
                    help="controller settings among none,bdp-10%%,bdp,bdp+10%% (default all)")
    rw.add_argument("--jitter", type=_list, default=None, metavar="LIST",
                    help="delay variation of the bottleneck gateway's data direction, swept, e.g. 0ms,3ms "
                         "(netreturn-gateway --jitter: uniform +/- per packet, order kept; the paper's NetEm: "
                         "+/-3ms; default 0ms)")
    rw.add_argument("--rwm-edges", choices=["receiver", "both"], default="receiver",
                    help="where RWM runs: the receivers' edge (the bottleneck gateway, the paper's section IV) or "
                         "both edges (a second RWM gateway at the senders' edge, the paper's Fig. 1)")
    rw.add_argument("--report-only", action="store_true", help="tables and plots of the runs already in --out")
    # The RWM experiment's documented runs put the senders behind the WAN
    # emulator together (docs/testbed.md, "The RWM experiment").
    _sweep_common(rw, "results/testbed-rwm", access_default="aggregate")
    cp = sub.add_parser("compare", help="one scenario in the simulator and in the testbed, side by side")
    cp.add_argument("scenario", nargs="?", default="testbed/dumbbell4")
    cp.add_argument("--sweep", type=_sweep_arg, action="append", default=[], metavar="NAME=V1,V2",
                    help="settings to compare (default queue=droptail,ewt)")
    cp.add_argument("--jobs", "-j", type=_positive, default=None, help="simulator processes")
    cp.add_argument("--sim-profile", choices=["ns3", "linux"], default="ns3",
                    help="the simulator's TCP defaults (its tcp.profile): ns3 (its own, ns-3 3.44's) or linux "
                         "(Linux's minimum RTO, delayed-ACK timer and NewReno timer rule; docs/testbed.md); the "
                         "testbed's hosts are Linux either way")
    _sweep_common(cp, "results/testbed-compare")
    r = sub.add_parser("run", help="one experiment")
    r.add_argument("--out", type=Path, required=True, help="output directory (CSV, JSON)")
    r.add_argument("--mode", choices=["gateway", "kernel"], default="gateway",
                   help="gateway: netreturn-gateway bridges; kernel: a Linux bridge (baseline)")
    r.add_argument("--controller", default="none", choices=["none", *registry.controllers()],
                   help="window controller (the registry's: netreturn list; default none)")
    r.add_argument("--ctl", action="append", default=[], metavar="KEY=VALUE")
    r.add_argument("--datapath", choices=DATAPATHS, default="packet",
                   help="gateway mode: packet (AF_PACKET) or kernel (eBPF; the delay on a packet hop in front)")
    r.add_argument("--rate", default="100mbit", help="bottleneck rate (gateway mode)")
    r.add_argument("--delay", default="5ms", help="one-way delay per direction (gateway mode)")
    r.add_argument("--queue", default=None, type=_queue_spec,
                   help="gateway queue spec, e.g. droptail,bytes=100000 (" + "|".join(registry.queues()) + ")")
    r.add_argument("--senders", type=int, default=1)
    r.add_argument("--receivers", type=int, default=1)
    r.add_argument("--flows", type=int, default=1)
    r.add_argument("--bytes", type=int, default=20_000_000, dest="nbytes")
    r.add_argument("--cc", default="cubic", choices=registry.congestion_controls(),
                   help="sender congestion control (the registry's that Linux runs; newreno is Linux reno)")
    r.add_argument("--stagger", type=float, default=0.0, help="seconds between flow starts")
    r.add_argument("--sndbuf", type=int, default=None)
    r.add_argument("--rcvbuf", type=int, default=None)
    r.add_argument("--interval", type=float, default=0.1, help="sampling interval, s")
    r.add_argument("--timeout", type=float, default=60.0)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--gateway-bin", default=None)
    r.add_argument("--gateway-arg", action="append", default=[], help="extra flag for the gateway")
    return p


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    if a.cmd in ("sweep", "rwm", "compare"):
        return _sweeps(a)
    if a.cmd == "quickstart":
        from . import quickstart

        return quickstart.main(a)
    if a.cmd == "check":
        miss = missing_requirements()
        print("congestion controls:", " ".join(available_cc()) or "?")
        try:
            print("gateway:", find_gateway())
        except TestbedError as e:
            miss.append(str(e))
        for m in miss:
            print("missing:", m)
        return 1 if miss else 0
    miss = missing_requirements()
    if miss:
        print("netreturn testbed: cannot run: " + "; ".join(miss), file=sys.stderr)
        return 2
    if a.cmd == "cleanup":
        for ns in leftover_namespaces(a.prefix):
            sh(["ip", "netns", "del", ns], check=False)
            print("removed", ns)
        return 0
    if a.cmd == "ngwa":
        from . import ngwa

        try:
            return ngwa.main(a)
        except TestbedError as e:
            print(f"netreturn testbed: {e}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"\nnetreturn testbed: interrupted; finished runs are kept in {a.out} and a rerun resumes",
                  file=sys.stderr)
            return 130
    if a.cmd == "bench":
        from .bench import bench, format_table

        try:
            rate = None
            if a.rate is not None:
                try:
                    rate = parse_rate(a.rate)
                except ValueError as e:
                    raise TestbedError(f"--rate {a.rate!r}: {e}") from None
            rows = bench(a.out, a.seconds, a.streams, a.pings, a.mode, a.gateway_bin, pin=not a.no_pin,
                         repeat=max(1, a.repeat), offloads=a.offloads, rate_bps=rate)
        except TestbedError as e:
            print(f"netreturn testbed: {e}", file=sys.stderr)
            return 1
        print(format_table(rows))
        return 0
    cfg = RunConfig(out=a.out, senders=a.senders, receivers=a.receivers, flows=a.flows,
                    nbytes=a.nbytes, cc=registry.linux_cc(a.cc), mode=a.mode, controller=a.controller, ctl=a.ctl,
                    rate=a.rate, delay=a.delay, queue=a.queue, seed=a.seed, stagger=a.stagger,
                    sndbuf=a.sndbuf, rcvbuf=a.rcvbuf, interval=a.interval, timeout=a.timeout,
                    gateway_bin=a.gateway_bin, gateway_args=a.gateway_arg, datapath=a.datapath)
    try:
        summary = run(cfg)
    except TestbedError as e:
        print(f"netreturn testbed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("netreturn testbed: interrupted; everything created was removed", file=sys.stderr)
        return 130
    print(json.dumps(summary, indent=1))
    return 0 if not summary["failed_flows"] else 1


def _opts(a: argparse.Namespace):
    from .sweep import Options

    return Options(gateway_bin=a.gateway_bin, prefix=a.prefix, keep_raw=a.keep_raw,
                   raw_dir=(a.out / "raw") if a.keep_raw else None)


def _sweeps(a: argparse.Namespace) -> int:
    """sweep / rwm / compare: scenario errors exit 2, run errors 1, ^C 130."""
    try:
        return _sweeps_inner(a)
    except TestbedError as e:
        print(f"netreturn testbed: {e}", file=sys.stderr)
        return 1
    except ValueError as e:  # TestbedScenarioError, netreturn.ScenarioError: file, field, allowed
        print(f"netreturn testbed: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nnetreturn testbed: interrupted; the current run's namespaces were removed, finished runs "
              f"are kept in {a.out / 'runs'} and a rerun resumes", file=sys.stderr)
        return 130


def _require(plans=()) -> None:
    """The testbed can run here, and the gateway accepts every plan's hops."""
    from . import scenario as sc

    miss = missing_requirements()
    if miss:
        raise TestbedError("cannot run: " + "; ".join(miss))
    binary = find_gateway()
    for pl in plans:
        sc.check_gateway(pl, binary)


def _sweeps_inner(a: argparse.Namespace) -> int:
    from . import scenario as sc

    sets = dict(a.sets)
    if a.cmd == "sweep":
        from . import sweep as sw

        sweep = dict(a.sweep)
        # validate every combination first
        plans = [sc.plan(a.scenario, {**sets, **c}, a.access) for c in sw.expand(sweep)]
        pl = plans[-1]
        print(f"{pl.name}: {pl.file}")
        print(f"  hosts' links: {sc.access_text(a.access)}")
        for n in pl.notes:
            print(f"  note: {n}")
        _require(plans)
        a.out.mkdir(parents=True, exist_ok=True)
        raw, keys, pl = sw.sweep(a.scenario, a.out, sets, sweep, a.reps, _opts(a), not a.quiet,
                                 sc.testbed_labels(datapath=a.datapath, file=a.scenario, access=a.access,
                                                   sysctl=a.host_sysctl))
        runs, summary = sw.write_tables(raw, a.out, keys)
        print()
        print(sw.table(summary, keys))
        print(f"\n{len(runs)} runs, {runs['wall_s'].sum():.0f} s; tables: {a.out / 'summary.csv'}, "
              f"{a.out / 'runs.csv'}, {a.out / 'flows.csv'}")
        return 0
    if a.cmd == "rwm":
        from . import rwm

        if a.report_only:
            raw = rwm.load_runs(a.out)
            print(rwm.report(raw, a.out, plots=not a.no_plots))
            return 0 if raw else 1
        rtts = a.rtt or rwm.DEFAULT_RTTS
        flows = [int(x) if x.isdigit() else x for x in (a.flows or [str(n) for n in rwm.DEFAULT_FLOWS])]
        bad = [x for x in flows if not isinstance(x, int) or x < 1]
        if bad:
            raise sc.TestbedScenarioError(a.scenario, "--flows", f"{bad[0]!r} is not a positive number of downloads")
        settings = a.settings or list(rwm.SETTINGS)
        pl = sc.plan(a.scenario, sets, a.access)
        reps = a.reps or pl.reps
        jitters = a.jitter or ["0ms"]
        # validates every combination
        specs = rwm.specs(rtts, flows, settings, reps, sets, a.scenario, jitters, a.rwm_edges, a.datapath,
                          a.access, a.host_sysctl)
        print(f"{pl.name}: {pl.file}")
        print(f"  RTT {', '.join(rtts)}; downloads {', '.join(map(str, flows))}; settings {', '.join(settings)}; "
              f"jitter {', '.join(jitters)}; RWM at {'both edges' if a.rwm_edges == 'both' else 'the receivers edge'}; "
              f"{reps} repetitions: {len(specs)} runs -> {a.out}/")
        from .sweep import spec_plan

        _require([spec_plan(s) for s in specs if s.rep == 1])
        a.out.mkdir(parents=True, exist_ok=True)
        raw = rwm.run_specs(specs, a.out, _opts(a), not a.quiet, desc="RWM testbed")
        print()
        print(rwm.report(raw, a.out, plots=not a.no_plots, paper=pl.paper))
        return 0
    from . import compare as cmp

    sweep = dict(a.sweep) if a.sweep else dict(cmp.DEFAULT_SWEEP)
    from . import sweep as sw

    _require([sc.plan(a.scenario, {**sets, **c}, a.access) for c in sw.expand(sweep)])
    labels = sc.testbed_labels(datapath=a.datapath, file=a.scenario, access=a.access, sysctl=a.host_sysctl)
    print(cmp.compare(a.out, a.scenario, sweep, sets, a.reps, _opts(a), not a.quiet, not a.no_plots, a.jobs,
                      labels, sim_profile=a.sim_profile))
    return 0
