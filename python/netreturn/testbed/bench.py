"""Forwarding benchmark: kernel bridge vs netreturn-gateway without and with
a window controller, between the same namespaces.

For each mode: TCP throughput with iperf3 (1500-byte MTU, so 1448-byte
segments; packets/s counted by the gateway where it runs, else derived from
the bytes), and the round-trip time of an idle path with ping (the latency
the bridge adds on top of the veths). Results: bench.csv in the output
directory and a table on stdout.
"""

from __future__ import annotations

import csv
import os
import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .netns import Topology, TestbedError, cpu_plan, sh
from .runner import find_gateway

MODES = {
    "kernel": None,
    "gateway": ["--controller", "none"],
    # RWM with a 10 Gb/s capacity and sub-millisecond RTTs asks for a window
    # below the receiver's on every ACK: the rewrite path runs per packet.
    "gateway+rwm": ["--controller", "rwm", "--ctl", "capacity=10gbit"],
}


def _ping(topo: Topology, n: int) -> dict:
    r = sh(["ping", "-q", "-c", str(n), "-i", "0.01", Topology.receiver_addr(0)],
           ns=topo.sender(0), check=False, timeout=60)
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", r.stdout or "")
    if not m:
        return {}
    return {"ping_min_ms": float(m.group(1)), "ping_avg_ms": float(m.group(2)),
            "ping_max_ms": float(m.group(3)), "ping_mdev_ms": float(m.group(4))}


def _iperf(topo: Topology, seconds: float, streams: int) -> dict:
    srv = subprocess.Popen(["ip", "netns", "exec", topo.receiver(0), "iperf3", "-s", "-1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        r = sh(["iperf3", "-c", Topology.receiver_addr(0), "-t", str(seconds), "-P", str(streams), "-J"],
               ns=topo.sender(0), check=False, timeout=seconds + 30)
        d = json.loads(r.stdout or "{}")
        end = d.get("end", {})
        bps = end.get("sum_received", {}).get("bits_per_second", 0.0)
        retr = end.get("sum_sent", {}).get("retransmits", 0)
        return {"gbps": bps / 1e9, "retransmits": retr, "seconds": seconds}
    finally:
        if srv.poll() is None:
            srv.send_signal(signal.SIGTERM)
        try:
            srv.wait(timeout=5)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (and its waited-for children)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def bench(out: Path, seconds: float = 5.0, streams: int = 1, pings: int = 200,
          modes: list[str] | None = None, gateway_bin: str | None = None, prefix: str = "nrtbb",
          pin: bool = True) -> list[dict]:
    if shutil.which("iperf3") is None or shutil.which("ping") is None:
        raise TestbedError("bench needs iperf3 and ping (apt-get install -y iperf3 iputils-ping)")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    # The bridge (ours, or the kernel's softirq work triggered by the
    # senders) gets CPU 0; the end hosts' receive processing goes to the
    # others (RPS), and applications run where the scheduler puts them.
    cpu, mask = cpu_plan() if pin else (None, None)
    for mode in modes or list(MODES):
        topo = Topology(f"{prefix}{len(rows)}", rps_mask=mask)
        gw = None
        try:
            topo.create()
            if MODES[mode] is None:
                topo.kernel_bridge()
            else:
                cmd = [find_gateway(gateway_bin), "--a", "gwa", "--b", "gwb"] + MODES[mode]
                if cpu is not None:
                    cmd = ["taskset", "-c", str(cpu)] + cmd
                gw = subprocess.Popen(["ip", "netns", "exec", topo.gw] + cmd,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                time.sleep(0.3)
                if gw.poll() is not None:
                    raise TestbedError(f"gateway exited: {' '.join(cmd)}")
            row = {"mode": mode, "gateway_cpu": cpu, "rps_mask": mask}
            row.update(_ping(topo, pings))
            t0 = time.monotonic()
            c0 = _cpu_seconds(gw.pid) if gw is not None else 0.0
            row.update(_iperf(topo, seconds, streams))
            wall = time.monotonic() - t0
            if gw is not None:
                # Share of one core the bridge used; its throughput per core
                # is the figure that does not depend on what else runs here.
                row["gw_cpu_frac"] = (_cpu_seconds(gw.pid) - c0) / wall
                if row["gw_cpu_frac"] > 0:
                    row["gbps_per_gw_core"] = row["gbps"] / row["gw_cpu_frac"]
            row["pps_est"] = row["gbps"] * 1e9 / 8 / 1448
            if gw is not None:
                gw.send_signal(signal.SIGINT)
                stdout, _ = gw.communicate(timeout=10)
                st = json.loads(stdout.strip().splitlines()[-1])
                row["gw_forwarded"] = st["forwarded"]
                row["gw_rewritten"] = st["rewritten"]
                row["gw_tx_errors"] = st["tx_errors"]
                row["gw_pps_both_dirs"] = st["forwarded"] / wall
                gw = None
            rows.append(row)
        finally:
            if gw is not None:
                gw.kill()
                gw.communicate()
            topo.destroy()
    with open(out / "bench.csv", "w", newline="") as f:
        keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "mode", k))
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    return rows


def format_table(rows: list[dict]) -> str:
    lines = [f"{'mode':<14}{'Gb/s':>8}{'data pkt/s':>12}{'gw pkt/s':>12}{'gw cpu':>8}{'Gb/s/core':>11}{'retr':>7}{'ping avg ms':>13}{'ping mdev':>11}"]
    for r in rows:
        lines.append(f"{r['mode']:<14}{r.get('gbps', 0):>8.2f}{r.get('pps_est', 0):>12.0f}"
                     f"{r.get('gw_pps_both_dirs', float('nan')):>12.0f}{r.get('gw_cpu_frac', float('nan')):>8.2f}"
                     f"{r.get('gbps_per_gw_core', float('nan')):>11.2f}{r.get('retransmits', 0):>7}"
                     f"{r.get('ping_avg_ms', float('nan')):>13.3f}{r.get('ping_mdev_ms', float('nan')):>11.3f}")
    return "\n".join(lines)
