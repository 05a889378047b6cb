"""``netreturn testbed ...``: real Linux TCP through the netreturn gateway
in network namespaces.

    netreturn testbed check
    netreturn testbed run --controller rwm --rate 100mbit --delay 10ms --flows 4 --out DIR
    netreturn testbed bench --out DIR
    netreturn testbed cleanup
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .netns import TestbedError, available_cc, leftover_namespaces, missing_requirements, sh
from .runner import RunConfig, find_gateway, run


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="netreturn testbed", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check", help="say whether the testbed can run here")
    c = sub.add_parser("cleanup", help="remove namespaces left by a killed run")
    c.add_argument("--prefix", default="nrtb")
    b = sub.add_parser("bench", help="kernel bridge vs gateway vs gateway+controller")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--seconds", type=float, default=5.0)
    b.add_argument("--streams", type=int, default=1)
    b.add_argument("--pings", type=int, default=200)
    b.add_argument("--mode", action="append", default=None, choices=["kernel", "gateway", "gateway+rwm"])
    b.add_argument("--gateway-bin", default=None)
    b.add_argument("--no-pin", action="store_true", help="do not pin the gateway / steer host receive (RPS)")
    r = sub.add_parser("run", help="one experiment")
    r.add_argument("--out", type=Path, required=True, help="output directory (CSV, JSON)")
    r.add_argument("--mode", choices=["gateway", "kernel"], default="gateway",
                   help="gateway: netreturn-gateway bridges; kernel: a Linux bridge (baseline)")
    r.add_argument("--controller", default="none", help="none|ewt|ewa|awm|saplaw|rwm")
    r.add_argument("--ctl", action="append", default=[], metavar="KEY=VALUE")
    r.add_argument("--rate", default="100mbit", help="bottleneck rate (gateway mode)")
    r.add_argument("--delay", default="5ms", help="one-way delay per direction (gateway mode)")
    r.add_argument("--queue", default=None, help="gateway queue spec, e.g. droptail,bytes=100000")
    r.add_argument("--senders", type=int, default=1)
    r.add_argument("--receivers", type=int, default=1)
    r.add_argument("--flows", type=int, default=1)
    r.add_argument("--bytes", type=int, default=20_000_000, dest="nbytes")
    r.add_argument("--cc", default="cubic", help="sender congestion control")
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
    if a.cmd == "bench":
        from .bench import bench, format_table

        try:
            rows = bench(a.out, a.seconds, a.streams, a.pings, a.mode, a.gateway_bin, pin=not a.no_pin)
        except TestbedError as e:
            print(f"netreturn testbed: {e}", file=sys.stderr)
            return 1
        print(format_table(rows))
        return 0
    cfg = RunConfig(out=a.out, senders=a.senders, receivers=a.receivers, flows=a.flows,
                    nbytes=a.nbytes, cc=a.cc, mode=a.mode, controller=a.controller, ctl=a.ctl,
                    rate=a.rate, delay=a.delay, queue=a.queue, seed=a.seed, stagger=a.stagger,
                    sndbuf=a.sndbuf, rcvbuf=a.rcvbuf, interval=a.interval, timeout=a.timeout,
                    gateway_bin=a.gateway_bin, gateway_args=a.gateway_arg)
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
