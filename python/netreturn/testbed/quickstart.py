"""``netreturn testbed quickstart``: the real gateway in one command.

Builds ``netreturn-gateway`` if it is not there yet, then runs real Linux
TCP between two network namespaces through it twice, as a plain link
emulator and with a window controller (EWT by default), on EWT scenario 2's
bottleneck: 45 Mb/s, 80 ms RTT, a 97 kB DropTail buffer, four CUBIC
downloads of 5 MB. Prints one table, the two runs side by side, and leaves
each run's CSV and JSON files under ``--out``. Needs root, iproute2 and
ethtool (docs/gateway.md, "Quick start").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import gateway_binary
from ..stats import mean
from ..table import num, render
from . import registry
from .netns import TestbedError, missing_requirements
from .runner import DATAPATHS, RunConfig, run


def add_parser(sub) -> argparse.ArgumentParser:
    q = sub.add_parser("quickstart", help="build the gateway if needed; two namespaces, with and without a controller")
    q.add_argument("--controller", choices=registry.controllers(), default="ewt",
                   help="the controller to compare (the registry's; default ewt)")
    q.add_argument("--flows", type=int, default=4)
    q.add_argument("--bytes", type=int, default=5_000_000, dest="nbytes", help="bytes per download (default 5 MB)")
    q.add_argument("--rate", default="45mbit")
    q.add_argument("--delay", default="40ms", help="one-way delay per direction (default 40ms: an 80 ms RTT)")
    q.add_argument("--buffer", type=int, default=97_000, help="bottleneck buffer in bytes (default 97000)")
    q.add_argument("--datapath", choices=DATAPATHS, default="packet",
                   help="packet: the gateway moves every frame (AF_PACKET); kernel: the kernel bridges and shapes, "
                        "eBPF rewrites the ACKs, and the delay runs on a packet hop in front (default packet)")
    q.add_argument("--out", type=Path, default=Path("results/testbed-quickstart"))
    q.add_argument("--gateway-bin", default=None)
    q.add_argument("--no-build", action="store_true", help="do not run cargo when the gateway binary is missing")
    return q


def ensure_gateway(explicit: str | None, build: bool) -> str:
    """The gateway binary; built with cargo (release) in this checkout when
    missing (:func:`netreturn.gateway_binary.ensure`)."""
    try:
        return gateway_binary.ensure(explicit, build)
    except gateway_binary.GatewayNotFound as e:
        raise TestbedError(str(e)) from None


def rows(summary: dict) -> dict[str, str]:
    """The quick start's table column of one run."""
    g = summary.get("gateway") or {}
    fct = [x for x in summary.get("fct_s", []) if x is not None]
    good = [x for x in summary.get("goodput_mbps", []) if x is not None]
    rtt = summary.get("rtt_ms_mean")
    wnd = summary.get("snd_wnd_median")
    return {
        "flows completed": f"{len(fct)} / {summary.get('flows')}",
        "mean FCT (ms)": num(mean(fct), "s"),
        "total goodput (Mb/s)": num(sum(good) if good else None, "Mb/s"),
        "mean RTT seen by the senders (ms)": num(rtt, "ms"),
        "median window the senders see (kB)": num(wnd, "bytes"),
        "segments retransmitted": str(summary.get("sender_retrans_segs", "-")),
        "packets dropped at the gateway": str((g.get("dropped_queue") or 0) + (g.get("dropped_loss") or 0)),
        "ACK windows rewritten": str(g.get("rewritten", 0)),
        "checksum errors at the receivers": str(summary.get("receiver_in_csum_errors", "-")),
    }


def table(cols: dict[str, dict[str, str]]) -> str:
    names = list(next(iter(cols.values())))
    return render(["", *cols], [[n, *(c[n] for c in cols.values())] for n in names])


def main(a: argparse.Namespace) -> int:
    miss = missing_requirements()
    if miss:
        print("netreturn testbed quickstart: cannot run: " + "; ".join(miss), file=sys.stderr)
        return 2
    try:
        gw = ensure_gateway(a.gateway_bin, not a.no_build)
        print(f"gateway: {gw}")
        where = "the kernel datapath (eBPF)" if a.datapath == "kernel" else "the packet datapath (AF_PACKET)"
        print(f"{where}; two namespaces, {a.flows} CUBIC downloads of {a.nbytes / 1e6:g} MB through {a.rate}, "
              f"{a.delay} each way, {a.buffer / 1000:g} kB DropTail buffer; no controller, then {a.controller}")
        cols = {}
        for ctl in ("none", a.controller):
            cfg = RunConfig(out=a.out / ctl, flows=a.flows, nbytes=a.nbytes, controller=ctl, rate=a.rate,
                            delay=a.delay, queue=f"droptail,bytes={a.buffer}", gateway_bin=gw, datapath=a.datapath)
            cols[ctl] = rows(run(cfg))
    except TestbedError as e:
        print(f"netreturn testbed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("netreturn testbed: interrupted; everything created was removed", file=sys.stderr)
        return 130
    print()
    print(table(cols))
    print(f"\nfiles: {a.out}/none/, {a.out}/{a.controller}/ (flows.csv, rtt.csv, throughput.csv, summary.json)")
    return 0
