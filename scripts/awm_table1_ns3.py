"""The AWM paper's Table 1 (30 flows, 30 Mb/s) in ns-3 3.44 and in ours, side by side.

Cross-check of issue 13 (docs/xcp.md, "Differences from the paper,
explained", subsection 1): the same multi-rtt topology
(scenarios/awm/fairness.toml) built in ns-3 by ``ns3ref.py --scenario
awm/fairness`` and run by our ``netreturn-sim``, for NC (DropTail) and AWM,
case 1 (step 0 ms) and case 2 (step 10 ms), a few buffers, optionally with
ns-2-like senders (no SACK, initial window 2, an ACK per segment). Every run
is one JSON line in ``--out`` (runs already there are not repeated), then the
table is printed from that file.

Run with the ns-3 interpreter (ns3ref starts ns-3 in a subprocess of the
same interpreter; ours is the release binary, one run at a time):

    /work/venv-ns3/bin/python scripts/awm_table1_ns3.py --seeds 3 \\
        --variant droptail,0,700000 --variant droptail,10,150000 ... --out runs.jsonl

A variant is ``METHOD,STEP_MS,BUFFER_BYTES[,ns2]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIM = ROOT / "target" / "release" / "netreturn-sim"
SCENARIO = ROOT / "scenarios" / "awm" / "fairness.toml"
# ns-2-like senders in ours: the [tcp] keys ns3ref.NS2_TCP sets in ns-3.
NS2_TCP_TOML = "sack = false\ninitial_cwnd = 2\ndelayed_ack_count = 1\n"


def _ns3ref():
    # From its file, so the compiled extension is not needed here.
    spec = importlib.util.spec_from_file_location("ns3ref", ROOT / "python" / "netreturn" / "ns3ref.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2)


def ns2_scenario(tmp: Path) -> Path:
    """fairness.toml with the ns-2-like [tcp] keys added."""
    text = SCENARIO.read_text().replace("[tcp]\n", "[tcp]\n" + NS2_TCP_TOML, 1)
    p = tmp / "fairness-ns2.toml"
    p.write_text(text)
    return p


def run_ours(method: str, step_ms: float, buffer: int, ns2: bool, seed: int, tmp: Path) -> dict:
    scen = ns2_scenario(tmp) if ns2 else SCENARIO
    cmd = [str(SIM), str(scen), "--set", f"queue={method}", "--set", f"step={step_ms:g}ms",
           "--set", f"buffer={buffer}B", "--seed", str(seed), "--per-flow"]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    took = time.perf_counter() - t0
    summary, flows, in_flows = {}, [], False
    for line in out.splitlines():
        parts = line.split()
        if parts[:2] == ["flow", "start_s"]:
            in_flows, head = True, parts
            continue
        if in_flows and len(parts) == len(head):
            flows.append(dict(zip(head, parts)))
        elif len(parts) == 2:
            try:
                summary[parts[0]] = float(parts[1])
            except ValueError:
                pass
    g = [float(f["goodput_mbps"]) for f in sorted(flows, key=lambda f: int(f["flow"]))]
    return {"jain": summary["jain_goodput"], "jain_check": jain(g), "drops": summary["queue_drops"],
            "queue_mean_bytes": summary["queue_mean_bytes"], "utilization": summary["utilization"],
            "fast_recoveries": summary["fast_recoveries"], "timeouts": summary["timeouts"],
            "goodput_mbps": g, "wall_s": summary["wall_s"], "process_wall_s": took, "cmd": " ".join(cmd)}


def run_ns3(mod, method: str, step_ms: float, buffer: int, ns2: bool, seed: int, flowmon: bool = True) -> dict:
    r = mod.run_ns3(30, method, seed=seed, scenario="awm/fairness", step_s=step_ms / 1000.0,
                    buffer_bytes=buffer, ns2=ns2, prr="ns3" if ns2 else "upstream", timeout_s=3600,
                    flowmon=flowmon)
    g = [f["goodput_mbps"] for f in r["per_flow"]]
    return {"jain": r["jain_goodput"], "jain_check": jain(g), "drops": r["queue_drops"],
            "queue_mean_bytes": r["queue_mean_bytes"], "utilization": r["utilization"],
            "fast_recoveries": r["fast_recoveries"], "timeouts": r["rto_expiries"],
            "goodput_mbps": g, "rtt_prop_s": [f["rtt_prop_s"] for f in r["per_flow"]],
            "wall_s": r["wall_s"], "setup_s": r["setup_s"], "process_wall_s": r["process_wall_s"],
            "gateway": r.get("gateway"),
            "cmd": (f"PYTHONPATH=python python python/netreturn/ns3ref.py --scenario awm/fairness --flows 30 "
                    f"--queue {method} --step {step_ms / 1000.0:g} --buffer {buffer}" + ("" if ns2 else " --prr upstream")
                    + f" --seed {seed}"
                    + (" --ns2" if ns2 else "") + ("" if flowmon else " --no-flowmon") + " --json")}


def key(sim: str, v: tuple, seed: int) -> str:
    return f"{sim}|{v[0]}|{v[1]:g}|{v[2]}|{int(v[3])}|{seed}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", action="append", required=True, help="METHOD,STEP_MS,BUFFER_BYTES[,ns2]")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", required=True, help="JSON lines, one per run (appended; runs there are reused)")
    ap.add_argument("--no-ns3", action="store_true", help="ours only")
    ap.add_argument("--table-only", action="store_true")
    ap.add_argument("--no-flowmon", action="store_true",
                    help="ns-3 without FlowMonitor (no loss ratios; Jain, drops and queue are the harness's own). "
                         "AWM at 700 kB aborts with heap corruption when FlowMonitor is on (docs/xcp.md)")
    a = ap.parse_args()
    variants = []
    for v in a.variant:
        parts = v.split(",")
        variants.append((parts[0], float(parts[1]), int(parts[2]), len(parts) > 3 and parts[3] == "ns2"))
    out = Path(a.out)
    done = {}
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done[r["key"]] = r
    mod = _ns3ref()
    with tempfile.TemporaryDirectory() as tmp:
        sims = ["ours"] + ([] if a.no_ns3 or not mod.available() else ["ns3"])
        # Seed-major: every variant's first seed before any second seed.
        for sim in sims:
            for seed in range(1, a.seeds + 1):
                for v in variants:
                    k = key(sim, v, seed)
                    if k in done or a.table_only:
                        continue
                    r = run_ours(*v, seed, Path(tmp)) if sim == "ours" else run_ns3(mod, *v, seed, not a.no_flowmon)
                    r.update({"key": k, "sim": sim, "method": v[0], "step_ms": v[1], "buffer": v[2],
                              "ns2": v[3], "seed": seed})
                    done[k] = r
                    with out.open("a") as f:
                        f.write(json.dumps(r) + "\n")
                    print(f"{k}: Jain {r['jain']:.4f} drops {r['drops']:.0f} "
                          f"queue {r['queue_mean_bytes'] / 1e3:.1f} kB ({r['process_wall_s']:.1f} s)", flush=True)
    print("| variant | seeds | ours Jain | ns-3 Jain | drops ours / ns-3 | mean queue ours / ns-3 (kB) |")
    print("|---|---|---|---|---|---|")
    for v in variants:
        row = {}
        for sim in ("ours", "ns3"):
            rs = [done[key(sim, v, s)] for s in range(1, a.seeds + 1) if key(sim, v, s) in done]
            row[sim] = rs
        def fmt(rs, field, scale=1.0, digits=3):
            if not rs:
                return "-"
            xs = [r[field] / scale for r in rs]
            m = sum(xs) / len(xs)
            return f"{m:.{digits}f}" + (f" ({min(xs):.{digits}f}-{max(xs):.{digits}f})" if len(xs) > 1 else "")
        name = f"{'NC' if v[0] == 'droptail' else v[0].upper()}, case {1 if v[1] == 0 else 2}, {v[2] // 1000} kB" + (
            ", ns-2-like" if v[3] else "")
        print(f"| {name} | {len(row['ours'])} / {len(row['ns3'])} | {fmt(row['ours'], 'jain')} | {fmt(row['ns3'], 'jain')} "
              f"| {fmt(row['ours'], 'drops', digits=0)} / {fmt(row['ns3'], 'drops', digits=0)} "
              f"| {fmt(row['ours'], 'queue_mean_bytes', 1e3, 1)} / {fmt(row['ns3'], 'queue_mean_bytes', 1e3, 1)} |")
    walls = [r["process_wall_s"] for r in done.values() if r["sim"] == "ns3"]
    ours = [r["process_wall_s"] for r in done.values() if r["sim"] == "ours"]
    if walls:
        print(f"\nns-3: {len(walls)} runs, {sum(walls) / len(walls):.0f} s each on average (process), "
              f"ours: {len(ours)} runs, {sum(ours) / max(len(ours), 1):.2f} s each")
    if any(math.isnan(r["jain"]) for r in done.values()):
        print("warning: a run has no Jain index")


if __name__ == "__main__":
    main()
