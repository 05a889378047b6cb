"""``netreturn testbed ngwa``: the NGWA paper's Linux experiment
(section 4.3; docs/decisions.md §5.2; issue 12 item 7) in network namespaces.

The paper: a central link of 10 or 100 Mb/s between directly cabled PCs,
a queue of 100 or 1000 packets, iperf with a 64 kB window sending
continuously, one flow (Fig. 8) then two flows at 100 Mb/s (Fig. 9); TCP
NewReno over DropTail, NewReno over RED (limit 170 kB, min 20 kB, max 84 kB,
max_p 0.02; x10 for 1000 packets), and NGWA modes 1, 2, 5, 6 (basic, SE,
FD, SE+FD); 2 minutes of steady state; 30 batch means for 95 % CIs.

Here: senders -> bottleneck gateway (rate, queue, the one-way delay; for
NGWA the router rule) -> edge gateway (for NGWA the receiver rule) ->
receivers, the edge hop present in every method so the paths are the same.
Linux's ``reno`` is the NewReno of RFC 6582 with SACK; the real senders keep
it in every mode (CW on: modes 1, 2, 5, 6 are the ones with CW). Every
setting of the paper is data in :data:`SETTINGS` and :data:`METHODS`.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..stats import batch_means_ci, jain
from .netns import TestbedError, leftover_namespaces
from .runner import FlowPlan, Hop, RunConfig, run

#: (name, central link, queue in packets, flows): Figs. 8 (one flow) and 9.
SETTINGS: list[tuple[str, str, int, int]] = [
    ("1 flow, 10 Mb/s, 100 p", "10mbit", 100, 1),
    ("1 flow, 10 Mb/s, 1000 p", "10mbit", 1000, 1),
    ("1 flow, 100 Mb/s, 100 p", "100mbit", 100, 1),
    ("1 flow, 100 Mb/s, 1000 p", "100mbit", 1000, 1),
    ("2 flows, 100 Mb/s, 100 p", "100mbit", 100, 2),
    ("2 flows, 100 Mb/s, 1000 p", "100mbit", 1000, 2),
]

#: Method -> NGWA mode (0: none) and queue discipline.
METHODS: dict[str, tuple[int, str]] = {
    "NewReno": (0, "droptail"),
    "NewReno+RED": (0, "red"),
    "NGWA 1": (1, "droptail"),
    "NGWA 2": (2, "droptail"),
    "NGWA 5": (5, "droptail"),
    "NGWA 6": (6, "droptail"),
}

#: The paper's RED for a 100-packet queue (section 4.3, average packet
#: 1700 B), multiplied by ten for 1000 packets.
RED_100 = {"bytes": 170_000, "min_th": 20_000, "max_th": 84_000, "max_p": 0.02}

#: Claims of the paper's text (Figs. 8 and 9 give no numbers).
CLAIMS = [
    "Fig. 8: in the four one-flow settings NGWA's rate is above NewReno's and RED's",
    "Fig. 8: NewReno and RED improve with the 1000-packet queue; NGWA stays stable",
    "Fig. 8: NGWA with SE (mode 2) does better than basic NGWA (mode 1)",
    "Fig. 9: FD divides fairly with 100 packets; with 1000 packets NGWA's fairness drops but stays above the others'",
    "Fig. 9: NGWA's total rate is in general above NewReno's and RED's",
]


@dataclass
class Options:
    seconds: float = 120.0
    warmup: float = 5.0
    interval: float = 0.5
    delay: str = "1ms"
    window: str = "64K"
    batches: int = 30
    gateway_bin: str | None = None


def queue_spec(discipline: str, packets: int) -> str:
    if discipline == "droptail":
        return f"droptail,packets={packets}"
    k = packets // 100
    r = RED_100
    return (f"red,bytes={r['bytes'] * k},min_th={r['min_th'] * k},max_th={r['max_th'] * k},"
            f"max_p={r['max_p']}")


def hops(method: str, rate: str, packets: int, opt: Options) -> list[Hop]:
    mode, disc = METHODS[method]
    ngwa = (lambda role: ["--ngwa", f"mode={mode}", "--ngwa", f"role={role}"]) if mode else (lambda role: [])
    return [
        Hop(name="bottleneck", rate=rate, delay=opt.delay, queue=queue_spec(disc, packets), args=ngwa("router")),
        Hop(name="edge", rate=None, delay="0ms", args=ngwa("receiver-edge")),
    ]


def batch_ci(series: list[float], batches: int) -> tuple[float, float]:
    """Batch means (the NGWA paper's section 3.2) of a throughput series."""
    m, h, _ = batch_means_ci(series, batches)
    return m, h


def run_one(out: Path, setting: tuple[str, str, int, int], method: str, opt: Options, k: int) -> dict:
    name, rate, packets, flows = setting
    cfg = RunConfig(
        out=out,
        senders=flows,
        receivers=flows,
        flows=flows,
        cc="reno",
        hops=hops(method, rate, packets, opt),
        primary_hop=0,
        flow_plan=[FlowPlan(i, i, 0) for i in range(flows)],
        interval=opt.interval,
        ss_interval=0,
        iperf3_seconds=opt.seconds,
        iperf3_window=opt.window,
        gateway_bin=opt.gateway_bin,
        prefix=f"nrng{os.getpid() % 1000}x{k}",
    )
    try:
        s = run(cfg)
    finally:
        if leftover_namespaces(cfg.prefix or ""):
            raise TestbedError(f"namespaces of {cfg.prefix} left behind")
    series: dict[int, list[tuple[float, float]]] = {i: [] for i in range(flows)}
    with open(out / "throughput.csv") as f:
        for r in csv.DictReader(f):
            series[int(r["flow"])].append((float(r["t_s"]), float(r["mbps"])))
    # Samples after the warm-up; iperf3's interval k of every flow covers
    # the same time to within the start spread, so the total at k is their sum.
    steady = [[m for t, m in sorted(series[i]) if t > opt.warmup] for i in range(flows)]
    n = min(len(s_) for s_ in steady)
    total = [sum(s_[j] for s_ in steady) for j in range(n)]
    nan = (float("nan"), float("nan"))
    per_flow = [batch_ci(s_, opt.batches) if len(s_) >= opt.batches else nan for s_ in steady]
    tm, th = batch_ci(total, opt.batches) if n >= opt.batches else nan
    means = [m for m, _ in per_flow]
    # Every flow must have moved data (and filled its batches) for the index to mean something.
    fairness = jain(means) if all(m > 0 for m in means) else float("nan")
    bott = s["gateway"]
    return {
        "setting": name, "method": method, "flows": flows, "failed": s["failed_flows"],
        "total_mbps": tm, "total_ci": th, "flow_mbps": [m for m, _ in per_flow], "flow_ci": [h for _, h in per_flow],
        "jain": fairness, "retransmits": sum(x or 0 for x in s["retransmits"]),
        "drops": bott.get("dropped_queue"), "ngwa": bott.get("ngwa"),
        "edge_rewritten": (s["gateways"][1].get("controller_stats") or {}).get("acks_rewritten"),
        "csum_errors": s["receiver_in_csum_errors"], "hdr_errors": s["receiver_in_hdr_errors"],
    }


def run_all(out: Path, opt: Options, settings=None, methods=None, progress: bool = True) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    results = []
    done = out / "results.jsonl"
    have = {}
    if done.exists():
        for line in done.read_text().splitlines():
            r = json.loads(line)
            have[(r["setting"], r["method"])] = r
    k = 0
    for setting in settings or SETTINGS:
        for method in methods or list(METHODS):
            key = (setting[0], method)
            if key in have:
                results.append(have[key])
                continue
            d = out / "runs" / f"{setting[0]}_{method}".replace(" ", "_").replace(",", "").replace("/", "")
            r = run_one(d, setting, method, opt, k)
            k += 1
            if progress:
                print(
                    f"{setting[0]:<28} {method:<12} total {r['total_mbps']:7.2f} Mb/s  drops {r['drops']}", flush=True
                )
            with open(done, "a") as f:
                f.write(json.dumps(r) + "\n")
            results.append(r)
    return results


def _f(x: float, d: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def report(results: list[dict], opt: Options) -> str:
    lines = [
        f"NGWA on real Linux (the NGWA paper's section 4.3): iperf3 -w {opt.window}, {opt.seconds:g} s per run "
        f"({opt.warmup:g} s warm-up dropped), rate sampled every {opt.interval:g} s, 95 % CI by "
        f"{opt.batches} batch means; one-way delay {opt.delay}; Linux reno (NewReno + SACK).",
        "",
        "| setting | method | total Mb/s (95 % CI) | per flow Mb/s | Jain | retransmits | router drops | ACKs rewritten | csum / hdr errors |",  # noqa: E501
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        flows = " / ".join(f"{_f(m)} ± {_f(h)}" for m, h in zip(r["flow_mbps"], r["flow_ci"]))
        lines.append(
            f"| {r['setting']} | {r['method']} | {_f(r['total_mbps'])} ± {_f(r['total_ci'])} | {flows} | "
            f"{_f(r['jain'], 3) if r['flows'] > 1 else '-'} | {r['retransmits']} | {r['drops']} | "
            f"{r['edge_rewritten'] if r['edge_rewritten'] is not None else '-'} | {r['csum_errors']} / {r['hdr_errors']} |"  # noqa: E501
        )
    lines += ["", "The paper's claims (its figures give no numbers):"] + [f"- {c}" for c in CLAIMS]
    return "\n".join(lines)


def add_parser(sub) -> None:
    p = sub.add_parser("ngwa", help="the NGWA paper's Linux experiment (section 4.3)")
    p.add_argument("--out", type=Path, default=Path("results/testbed-ngwa"))
    p.add_argument("--seconds", type=float, default=120.0, help="iperf3 duration per run (paper: 2 minutes)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds dropped before the batches")
    p.add_argument("--interval", type=float, default=0.5, help="rate sampling interval (s)")
    p.add_argument("--delay", default="1ms", help="one-way delay of the central link (paper: cabled PCs)")
    p.add_argument("--methods", default=None, help="comma-separated subset of: " + ", ".join(METHODS))
    p.add_argument("--settings", default=None, help="comma-separated indices 0..5 of the settings")
    p.add_argument("--gateway-bin", default=None)
    p.add_argument("--report-only", action="store_true", help="print the table of the runs in --out")


def main(a) -> int:
    opt = Options(seconds=a.seconds, warmup=a.warmup, interval=a.interval, delay=a.delay, gateway_bin=a.gateway_bin)
    methods = [m.strip() for m in a.methods.split(",")] if a.methods else None
    for m in methods or []:
        if m not in METHODS:
            raise TestbedError(f"--methods: unknown method {m!r}; allowed: {', '.join(METHODS)}")
    settings = [SETTINGS[int(i)] for i in a.settings.split(",")] if a.settings else None
    if a.report_only:
        res = [json.loads(x) for x in (a.out / "results.jsonl").read_text().splitlines()]
    else:
        res = run_all(a.out, opt, settings, methods)
    text = report(res, opt)
    (a.out / "report.md").write_text(text + "\n")
    print(text)
    return 0
