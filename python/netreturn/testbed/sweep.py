"""Replicated testbed runs of a scenario file, kept on disk like the
simulator's: one JSON file per finished run under ``<out>/runs/``, so an
interrupted sweep keeps what it finished and a rerun resumes; then the same
tables as ``netreturn run`` (``runs.csv``, ``flows.csv``, ``summary.csv``,
mean ± 95 % CI per metric and group).

Runs are strictly sequential (they measure real time on a shared machine),
repetition-major and shuffled within a repetition with a fixed seed, so a
partial sweep is balanced across settings and slow drifts of the machine's
load hit every setting alike.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..files import write_frame_csv
from ..runner import Store
from ..stats import jain, mean, quantile
from .netns import TestbedError
from .runner import RunConfig, run as run_once
from .scenario import Plan, access_of, plan as make_plan, resolve, with_testbed

# 2: the bottleneck gateway runs the scenario file (--config): the ACK
# direction's queue takes the forward buffer, "Np" weighs segment + 52 B.
# 3: drawn start times are the simulator's draws for the repetition's seed
# (`Plan.flow_plan`), no longer the testbed's own.
# 4: a file's tcp.rcv_buf is each receiver's buffer from the handshake on
# (`Plan.rcv_buf_start`), no longer only autotuning's ceiling.
SCHEMA = 4

#: Rows of the printed table: (summary column, label).
METRICS: list[tuple[str, str]] = [
    ("fct_mean_s", "mean FCT (ms)"),
    ("fct_max_s", "slowest flow's FCT (ms)"),
    ("goodput_mean_mbps", "mean goodput (Mb/s)"),
    ("jain_goodput", "Jain fairness (goodput)"),
    ("utilization", "bottleneck utilization"),
    ("tcp_efficiency_pct", "TCP efficiency (%)"),
    ("tcp_data_loss_pct", "TCP data loss (%)"),
    ("queue_drops", "bottleneck drops"),
    ("retransmits", "retransmitted segments"),
    ("fast_recoveries", "fast recoveries"),
    ("timeouts", "RTO expiries"),
    ("loss_probes", "tail loss probes"),
    ("rtt_mean_ms", "mean RTT (ms)"),
    ("rtt_std_ms", "RTT std (ms)"),
    ("rtt_max_ms", "max RTT (ms)"),
    ("queue_delay_mean_ms", "mean queueing delay (ms)"),
    ("acks_rewritten", "ACKs rewritten"),
]


@dataclass(frozen=True)
class TbSpec:
    """One testbed run: a scenario file, parameter overrides, a repetition.
    ``labels`` are extra group columns that are not scenario parameters
    (e.g. the RWM experiment's ``setting``)."""

    scenario: str
    overrides: tuple[tuple[str, str], ...] = ()
    rep: int = 1
    labels: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def make(scenario: str | Path, overrides: Mapping[str, Any] | None = None, rep: int = 1,
             labels: Mapping[str, Any] | None = None) -> "TbSpec":
        ov = tuple(sorted((str(k), _lit(v)) for k, v in (overrides or {}).items()))
        lb = tuple(sorted((str(k), str(v)) for k, v in (labels or {}).items()))
        return TbSpec(str(resolve(scenario)), ov, int(rep), lb)

    def key(self) -> str:
        text = Path(self.scenario).read_text()
        h = hashlib.sha256()
        h.update(json.dumps([SCHEMA, "testbed", text, list(self.overrides), self.rep, list(self.labels)]).encode())
        return h.hexdigest()[:24]

    def params(self) -> dict[str, str]:
        return {**dict(self.overrides), **dict(self.labels)}


def _lit(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return str(v)


@dataclass
class Options:
    """How runs are executed (not part of a run's identity)."""

    gateway_bin: str | None = None
    prefix: str | None = None
    keep_raw: bool = False
    info_interval: float = 0.02
    throughput_interval: float = 0.1
    retries: int = 1
    timeout: float | None = None
    raw_dir: Path | None = None


# -- statistics of one run ----------------------------------------------------

def describe(xs: Sequence[float]) -> dict[str, float]:
    """std, mean, quartiles and max (the paper's Table I columns)."""
    n = len(xs)
    if n == 0:
        return {k: math.nan for k in ("std", "mean", "p25", "p50", "p75", "max", "n")} | {"n": 0}
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return {"std": sd, "mean": m, "p25": quantile(xs, 0.25), "p50": quantile(xs, 0.5),
            "p75": quantile(xs, 0.75), "max": max(xs), "n": n}


_LOSS_COUNTERS = ("dropped_queue", "dropped_loss", "tx_errors")


def loss_metrics(gws: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Loss over a chain of gateways, from their counters: the data
    segments' (``tcp_data_loss_pct``: frames lost A -> B, where the senders
    are, over the frames entering the chain there: the simulator's
    ``tcp_data_loss_pct``) and every packet's, ACKs included
    (``tcp_packet_loss_pct``, both directions over all that entered);
    ``lost_packets`` counts both directions."""
    if not gws:
        return {"tcp_data_loss_pct": math.nan, "tcp_packet_loss_pct": math.nan, "lost_packets": 0.0}
    lost = {d: sum(g.get(d, {}).get(c, 0) for g in gws for c in _LOSS_COUNTERS) for d in ("a_to_b", "b_to_a")}
    data_in = gws[0].get("a_to_b", {}).get("received", 0)
    entered = data_in + gws[-1].get("b_to_a", {}).get("received", 0)
    return {"tcp_data_loss_pct": lost["a_to_b"] / data_in * 100 if data_in else math.nan,
            "tcp_packet_loss_pct": (lost["a_to_b"] + lost["b_to_a"]) / entered * 100 if entered else math.nan,
            "lost_packets": float(lost["a_to_b"] + lost["b_to_a"])}


def collect(out: Path, pl: Plan, flow_plan, summary: dict) -> dict:
    """Per-flow rows, headline metrics and compact series of one run."""
    from .runner import _load_info

    flows = {k: [] for k in ("flow", "src", "dst", "start_s", "fct_s", "goodput_mbps", "bytes_delivered",
                             "bytes_sent", "bytes_retransmitted", "efficiency_pct", "retransmits", "completed")}
    thr, rtt_series, win_series, all_rtt = [], [], None, []
    starts, ends = [], []
    infos = []
    for k in range(len(flow_plan)):
        f = out / f"flow{k}.json"
        d = json.loads(f.read_text()) if f.is_file() else None
        info = _load_info(out / f"info{k}.json")
        info = info[0] if info else None
        infos.append(info)
        if d is not None:
            starts.append(d["start_wall"])
            ends.append(d["start_wall"] + d["fct_s"])
    t0 = min(starts) if starts else 0.0
    for k, fp in enumerate(flow_plan):
        f = out / f"flow{k}.json"
        d = json.loads(f.read_text()) if f.is_file() else None
        info = infos[k]
        done = d is not None and d["bytes"] == fp.nbytes
        fin = (info or {}).get("final") or {}
        sent, retr = fin.get("bytes_sent"), fin.get("bytes_retrans")
        flows["flow"].append(k)
        flows["src"].append(f"left{fp.sender}")
        flows["dst"].append(f"right{fp.receiver}")
        flows["start_s"].append(round(d["start_wall"] - t0, 6) if d else math.nan)
        flows["fct_s"].append(d["fct_s"] if done else math.nan)
        flows["goodput_mbps"].append(d["goodput_mbps"] if done else math.nan)
        flows["bytes_delivered"].append(d["bytes"] if d else 0)
        flows["bytes_sent"].append(sent)
        flows["bytes_retransmitted"].append(retr)
        flows["efficiency_pct"].append((sent - retr) / sent * 100 if sent else math.nan)
        flows["retransmits"].append(fin.get("total_retrans"))
        flows["completed"].append(int(done))
        thr.append([round(v, 2) for _, v in d["throughput"]] if d else [])
        # RTT samples while the flow has data outstanding (after its first
        # ACKed byte, before its last).
        ser = []
        for smp in (info or {}).get("samples", []):
            acked = smp.get("bytes_acked")
            if smp.get("rtt_ms") is None or acked is None or not 0 < acked < fp.nbytes:
                continue
            ser.append([round(smp["t_wall"] - t0, 3), round(smp["rtt_ms"], 3)])
        rtt_series.append(ser)
        all_rtt += [r for _, r in ser]
        if k == 0 and info:
            mss = (info["samples"][0].get("snd_mss") or 1448) if info["samples"] else 1448
            win_series = [[round(s["t_wall"] - t0, 3), (s.get("cwnd") or 0) * mss, s.get("snd_wnd")]
                          for s in info["samples"] if s.get("bytes_acked") is not None and s["bytes_acked"] < fp.nbytes]
    gws = summary.get("gateways", [])
    bott = gws[pl.bottleneck_hop] if len(gws) > pl.bottleneck_hop else {}
    span = (max(ends) - min(starts)) if starts else math.nan
    fcts = [x for x in flows["fct_s"] if not math.isnan(x)]
    goodputs = [x for x in flows["goodput_mbps"] if not math.isnan(x)]
    st = describe(all_rtt)
    s = {
        "tcp_flows": float(len(flow_plan)),
        "flows_completed": float(sum(flows["completed"])),
        "fct_mean_s": mean(fcts, skip_missing=True),
        "fct_max_s": max(fcts) if len(fcts) == len(flow_plan) and fcts else math.nan,
        "fct_min_s": min(fcts) if fcts else math.nan,
        "goodput_mean_mbps": mean(goodputs, skip_missing=True),
        "jain_goodput": jain(goodputs, skip_missing=True),
        "tcp_efficiency_pct": mean(flows["efficiency_pct"], skip_missing=True),
        "retransmits": float(sum(x or 0 for x in flows["retransmits"])),
        "queue_drops": float(bott.get("a_to_b", {}).get("dropped_queue", math.nan)) if bott else math.nan,
        "acks_rewritten": float(bott.get("b_to_a", {}).get("rewritten", math.nan)) if bott else math.nan,
        "utilization": (bott.get("a_to_b", {}).get("forwarded_bytes", 0) * 8 / (pl.bottleneck_bps * span)
                        if bott and span and span > 0 else math.nan),
        "rtt_mean_ms": st["mean"], "rtt_std_ms": st["std"], "rtt_p25_ms": st["p25"], "rtt_p50_ms": st["p50"],
        "rtt_p75_ms": st["p75"], "rtt_max_ms": st["max"], "rtt_samples": float(st["n"]),
        "queue_delay_mean_ms": st["mean"] - pl.base_rtt_s * 1000 if st["n"] else math.nan,
        "csum_errors": float(summary.get("receiver_in_csum_errors", 0)),
        # The senders' kernels' counts (runner.TCPEXT_COUNTERS), named as the
        # simulator's; NaN for a run recorded before they were kept.
        "fast_recoveries": float(summary.get("sender_fast_recoveries", math.nan)),
        "timeouts": float(summary.get("sender_rto_expiries", math.nan)),
        "loss_probes": float(summary.get("sender_loss_probes", math.nan)),
        **loss_metrics(gws),
    }
    return {"summary": s, "flows": flows, "sender_tcpext": summary.get("sender_tcpext", {}),
            "series": {"throughput_interval_s": None, "throughput_mbps": thr, "rtt": rtt_series, "window0": win_series},
            "gateways": gws}


def spec_plan(spec: TbSpec) -> Plan:
    """What ``spec`` runs: its scenario with its overrides, and its
    testbed-only labels (jitter, RWM at both edges) applied."""
    labels = dict(spec.labels)
    return with_testbed(make_plan(spec.scenario, dict(spec.overrides), access_of(labels)), labels)


def execute(spec: TbSpec, opts: Options) -> dict:
    """Runs one testbed experiment; returns its record (what runs/*.json holds)."""
    pl = spec_plan(spec)
    fplan = pl.flow_plan(spec.rep)
    base = opts.raw_dir or Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"tb-{spec.key()[:8]}-", dir=base))
    t0 = time.perf_counter()
    load = os.getloadavg()[0]
    try:
        cfg = RunConfig(out=tmp, senders=pl.senders, receivers=pl.receivers, cc=pl.cc, mode="gateway",
                        hops=pl.hops, primary_hop=pl.bottleneck_hop, flow_plan=fplan, ss_interval=0,
                        info_interval=opts.info_interval, interval=opts.throughput_interval, start_delay=0.3,
                        timeout=opts.timeout or pl.timeout, tcp_mem_max=pl.tcp_mem_max,
                        rmem_default=pl.rcv_buf_start, seed=spec.rep,
                        gateway_bin=opts.gateway_bin, prefix=opts.prefix,
                        datapath=dict(spec.labels).get("datapath", "packet"),
                        host_links=pl.host_links if pl.shaped else None, host_sysctls=pl.host_sysctls)
        summary = run_once(cfg)
        rec = collect(tmp, pl, fplan, summary)
    finally:
        if not opts.keep_raw:
            shutil.rmtree(tmp, ignore_errors=True)
    rec["series"]["throughput_interval_s"] = opts.throughput_interval
    rec.update({"seed": spec.rep, "rep": spec.rep, "params": spec.params(), "scenario": spec.scenario,
                "wall_s": time.perf_counter() - t0, "load_avg": load, "world": "testbed",
                "base_rtt_ms": pl.base_rtt_s * 1000, "raw_dir": str(tmp) if opts.keep_raw else None,
                "gateway_cmds": [h.__dict__ for h in pl.hops]})
    rec["summary"]["wall_s"] = rec["wall_s"]
    return rec


# -- a sweep -----------------------------------------------------------------

def expand(sweep: Mapping[str, Sequence[Any]] | None) -> list[dict]:
    if not sweep:
        return [{}]
    keys = list(sweep)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(sweep[k] for k in keys))]


class _Bar:
    def __init__(self, total: int, enabled: bool, desc: str):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=desc, unit="run", dynamic_ncols=True)
            except ImportError:
                pass

    def advance(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr)

    def postfix(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def order(specs: Sequence[TbSpec]) -> list[int]:
    """Repetition-major, shuffled within a repetition (fixed seed)."""
    by_rep: dict[int, list[int]] = {}
    for i, s in enumerate(specs):
        by_rep.setdefault(s.rep, []).append(i)
    out = []
    for rep in sorted(by_rep):
        idx = by_rep[rep]
        random.Random(rep).shuffle(idx)
        out += idx
    return out


def run_specs(specs: Sequence[TbSpec], out: str | Path, opts: Options | None = None, progress: bool = True,
              on_result: Callable[[TbSpec, dict], None] | None = None, desc: str = "testbed runs") -> list[dict]:
    """Runs every spec not already in ``out``; returns all results in the
    order of ``specs``. Ctrl-C / SIGTERM stop after removing the current
    run's namespaces; finished runs stay on disk."""
    opts = opts or Options()
    store = Store(out)
    results: list[dict | None] = [store.get(s) for s in specs]
    todo = [i for i in order(specs) if results[i] is None]
    old = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    bar = _Bar(len(specs), progress, desc)
    try:
        bar.advance(len(specs) - len(todo))
        for i in todo:
            spec = specs[i]
            bar.postfix(",".join(f"{k}={v}" for k, v in spec.params().items()) + f",rep={spec.rep}")
            rec = None
            for attempt in range(opts.retries + 1):
                try:
                    rec = execute(spec, opts)
                except TestbedError as e:
                    if attempt == opts.retries:
                        raise
                    bar.note(f"run failed ({e}); retrying")
                    continue
                if rec["summary"]["flows_completed"] == rec["summary"]["tcp_flows"] or attempt == opts.retries:
                    break
                bar.note(f"{spec.params()} rep {spec.rep}: a flow did not complete; retrying")
            assert rec is not None
            if rec["summary"]["flows_completed"] < rec["summary"]["tcp_flows"]:
                bar.note(f"{spec.params()} rep {spec.rep}: kept with incomplete flows")
            store.put(spec, rec)
            results[i] = rec
            if on_result:
                on_result(spec, rec)
            bar.advance()
    finally:
        bar.close()
        signal.signal(signal.SIGTERM, old)
    return [r for r in results if r is not None]


# -- tables ---------------------------------------------------------------------

def runs_frame(raw: Iterable[dict]):
    """One row per run: parameters, repetition and headline metrics (the
    simulator's ``runs.csv`` layout: seed, parameters, summary, wall_s). The
    loss metrics are derived again from the gateways' counters, so runs
    stored before a definition changed read with today's."""
    import pandas as pd

    return pd.DataFrame([{"seed": r["seed"], **r.get("params", {}), **r["summary"],
                          **(loss_metrics(r["gateways"]) if r.get("gateways") else {}), "wall_s": r.get("wall_s")}
                         for r in raw])


def flows_frame(raw: Iterable[dict], group_keys: Sequence[str]):
    import pandas as pd

    frames = []
    for r in raw:
        f = pd.DataFrame(r["flows"])
        for k in group_keys:
            f.insert(0, k, r["params"].get(k))
        f.insert(0, "seed", r["seed"])
        frames.append(f)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def summary_frame(runs, group_keys: Sequence[str]):
    from .. import report

    return report.summarize(runs, list(group_keys))


def table(summary, group_keys: Sequence[str], metrics=METRICS) -> str:
    from .. import report

    return report.table_text(summary, list(group_keys), metrics)


def write_tables(raw: list[dict], out: Path, group_keys: Sequence[str]):
    """runs.csv, flows.csv, summary.csv; returns (runs, summary) frames."""
    runs = runs_frame(raw)
    for k in group_keys:
        if k in runs:
            runs[k] = runs[k].astype(str)
    write_frame_csv(runs, out / "runs.csv")
    write_frame_csv(flows_frame(raw, group_keys), out / "flows.csv")
    summary = summary_frame(runs, group_keys)
    write_frame_csv(summary, out / "summary.csv")
    return runs, summary


def sweep(scenario: str | Path, out: str | Path, sets: Mapping[str, Any] | None = None,
          sweep_over: Mapping[str, Sequence[Any]] | None = None, reps: int | None = None,
          opts: Options | None = None, progress: bool = True,
          labels: Mapping[str, str] | None = None) -> tuple[list[dict], list[str], Plan]:
    """Validates every combination, then runs ``reps`` repetitions of each;
    ``labels`` are testbed-only settings (:func:`.scenario.testbed_labels`)."""
    base = dict(sets or {})
    combos = expand(sweep_over)
    pl = None
    for c in combos:
        pl = make_plan(scenario, {**base, **c}, access_of(labels))
    assert pl is not None
    n = reps or pl.reps
    specs = [TbSpec.make(scenario, {**base, **c}, r, labels) for c in combos for r in range(1, n + 1)]
    raw = run_specs(specs, out, opts, progress)
    return raw, list(sweep_over or {}), pl
