"""Forwarding benchmark: kernel bridge vs netreturn-gateway without and with
each window controller, between the same namespaces.

For each mode: TCP throughput with iperf3 (1500-byte MTU, so 1448-byte
segments), the frames per second the gateway forwarded (both directions,
from its own counters), the share of one core it used, and the round-trip
time of an idle path with ping (the latency the bridge adds on top of the
veths). Every mode runs ``repeat`` times, the modes interleaved so that
background load spreads over all of them; the table shows the best run of
each mode and the spread (min-max) of its throughput, because on a shared
machine the best run is the one least disturbed by others. Results:
``bench.csv`` (every trial) and ``bench_summary.csv`` in the output directory.

The gateway runs without a rate limit (pure forwarding). The controllers
get parameters under which they do their per-packet work (flow table,
queue hooks, window computation on every ACK) without their window
becoming the bottleneck of a 0.1 ms path: a controller that steers the
sender to a low window would measure itself, not the bridge. The
``rewritten`` column shows how many ACKs were rewritten nonetheless.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ..table import num, render
from .netns import TestbedError, Topology, cpu_plan, sh
from .runner import find_gateway, wait_ready

#: mode -> gateway arguments (None: the Linux bridge).
MODES: dict[str, list[str] | None] = {
    "kernel": None,
    "gateway": ["--controller", "none"],
    # No rate limit: the data queue stays near empty and U <= St, so EWT
    # computes and leaves the window alone.
    "gateway+ewt": ["--controller", "ewt"],
    # f(B) = alpha log2(B): 64 kB/bit gives about 1.3 MB for the default
    # 1.5 MB queue, above what a 0.1 ms path needs (the default alpha,
    # 1 kB/bit, would hold the sender to about 20 kB).
    "gateway+ewa": ["--controller", "ewa", "--ctl", "alpha=65536"],
    "gateway+awm": ["--controller", "awm", "--ctl", "capacity=10gbit"],
    # SAP-LAW and RWM write C x RTT_handshake (x share / flows): with a
    # handshake RTT of about 0.1 ms, 100 Gb/s gives about 1.2 MB.
    "gateway+saplaw": ["--controller", "sap-law", "--ctl", "capacity=100gbit"],
    "gateway+rwm": ["--controller", "rwm", "--ctl", "capacity=100gbit"],
    # NGWA (docs/ngwa.md): a router inserts the IPv4 option into every data
    # segment (the receiver ignores an unknown option); "both" also reads it
    # back, strips it and rewrites the ACKs, the most work NGWA does per
    # frame. An empty queue writes its whole 1.5 MB; Wmax out of the way.
    "gateway+ngwa-router": ["--ngwa", "mode=1", "--ngwa", "role=router"],
    "gateway+ngwa-both": ["--ngwa", "mode=1", "--ngwa", "role=both", "--ngwa", "wmax=64MB"],
}
# The kernel datapath (``--datapath kernel``, issue 28): the kernel bridge
# forwards, the eBPF programs count and rewrite, each controller runs in the
# gateway process every tick. Its handshake RTT is the veths' own (about
# 0.05 ms, against about 1 ms through the packet datapath), so the windows
# C x RTT of SAP-LAW and RWM, and EWA's, get 16 times the room above, or
# they would hold a 0.1 ms path's sender. NGWA's modes run in the eBPF
# programs (the option inserted, read and stripped in the kernel).
_KDP_ROOM = {"alpha=65536": "alpha=1048576", "capacity=100gbit": "capacity=1600gbit"}
MODES.update({"kdp" + m.removeprefix("gateway"): [*(_KDP_ROOM.get(x, x) for x in a), "--datapath", "kernel"]
              for m, a in list(MODES.items()) if a is not None})


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


def _machine_cpu_seconds() -> float:
    """CPU time of the whole machine, every core and kind (user, system,
    softirq...), idle and iowait left out: the kernel datapath's forwarding
    runs in softirq, which no process is charged with."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = sum(v[:8]) - v[3] - v[4]  # user nice system idle iowait irq softirq steal
    return busy / os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def _trial(mode: str, k: int, seconds: float, streams: int, pings: int, binary: str | None,
           prefix: str, cpu: int | None, mask: str | None, extra: list[str]) -> dict:
    topo = Topology(f"{prefix}{k}", rps_mask=mask)
    gw = None
    try:
        topo.create()
        if MODES[mode] is None:
            topo.kernel_bridge()
        else:
            stats = Path(tempfile.mkdtemp(prefix="nrbench")) / "stats.json"
            cmd = [binary, "--a", "gwa", "--b", "gwb", "--stats-file", str(stats)] + MODES[mode] + extra
            if cpu is not None:
                cmd = ["taskset", "-c", str(cpu)] + cmd
            gw = subprocess.Popen(["ip", "netns", "exec", topo.gw] + cmd,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_ready([gw], [stats], [mode])
            if gw.poll() is not None:
                raise TestbedError(f"gateway exited: {' '.join(cmd)}: {gw.stderr.read().strip()[-300:]}")
        row = {"mode": mode, "gateway_cpu": cpu, "rps_mask": mask}
        row.update(_ping(topo, pings))
        t0 = time.monotonic()
        c0 = _cpu_seconds(gw.pid) if gw is not None else 0.0
        m0 = _machine_cpu_seconds()
        row.update(_iperf(topo, seconds, streams))
        wall = time.monotonic() - t0
        # Every core's busy time per byte delivered: senders, receivers and
        # the bridge (in softirq or in our process) together, and whatever
        # else the machine runs (compare modes of one interleaved run).
        gbytes = row["gbps"] * row["seconds"] / 8
        if gbytes > 0:
            row["machine_cpu_ns_per_byte"] = (_machine_cpu_seconds() - m0) / gbytes
        # Data segments of 1448 bytes in 1514-byte frames (1500-byte MTU).
        row["data_mpps"] = row["gbps"] * 1e9 / 8 / 1448 / 1e6
        if gw is not None:
            # Share of one core the bridge used: its throughput per core is
            # the figure that depends least on what else runs here.
            row["gw_cpu_frac"] = (_cpu_seconds(gw.pid) - c0) / wall
            if row["gw_cpu_frac"] > 0:
                row["gbps_per_gw_core"] = row["gbps"] / row["gw_cpu_frac"]
            gw.send_signal(signal.SIGINT)
            stdout, _ = gw.communicate(timeout=10)
            st = json.loads(stdout.strip().splitlines()[-1])
            for key in ("forwarded", "rewritten", "tx_errors", "rx_dropped"):
                row[f"gw_{key}"] = st.get(key, 0)
            if "ngwa" in st:
                row["gw_ngwa_inserted"] = st["ngwa"]["inserted"]
                row["gw_ngwa_stripped"] = st["ngwa"]["stripped"]
            row["gw_mpps_both_dirs"] = st["forwarded"] / wall / 1e6
            gw = None
        return row
    finally:
        if gw is not None:
            gw.kill()
            gw.communicate()
        topo.destroy()


def bench(out: Path, seconds: float = 5.0, streams: int = 1, pings: int = 200,
          modes: list[str] | None = None, gateway_bin: str | None = None, prefix: str = "nrtbb",
          pin: bool = True, repeat: int = 1, gateway_args: list[str] | None = None) -> list[dict]:
    """Runs every mode ``repeat`` times (interleaved); returns one row per
    trial (also in ``bench.csv``); :func:`summarize` reduces them."""
    if shutil.which("iperf3") is None or shutil.which("ping") is None:
        raise TestbedError("bench needs iperf3 and ping (apt-get install -y iperf3 iputils-ping)")
    modes = modes or list(MODES)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise TestbedError(f"unknown bench mode(s) {unknown}; known: {', '.join(MODES)}")
    binary = find_gateway(gateway_bin) if any(MODES[m] is not None for m in modes) else None
    out.mkdir(parents=True, exist_ok=True)
    # The bridge (ours, or the kernel's softirq work triggered by the
    # senders) gets CPU 0; the end hosts' receive processing goes to the
    # others (RPS), and applications run where the scheduler puts them.
    cpu, mask = cpu_plan() if pin else (None, None)
    rows = []
    for r in range(max(1, repeat)):
        for mode in modes:
            row = _trial(mode, len(rows), seconds, streams, pings, binary, prefix, cpu, mask, gateway_args or [])
            row["trial"] = r
            rows.append(row)
    _write(out / "bench.csv", rows)
    _write(out / "bench_summary.csv", summarize(rows))
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "mode", k))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def summarize(rows: list[dict]) -> list[dict]:
    """One row per mode: the best trial (highest Gb/s), with the number of
    trials and the min / median / max of the throughput, and the lowest
    mean ping of all trials."""
    out = []
    for mode in dict.fromkeys(r["mode"] for r in rows):
        rs = [r for r in rows if r["mode"] == mode]
        best = dict(max(rs, key=lambda r: r.get("gbps", 0)))
        g = [r.get("gbps", 0) for r in rs]
        best.update(n=len(rs), gbps_min=min(g), gbps_median=statistics.median(g), gbps_max=max(g))
        pings = [r["ping_avg_ms"] for r in rs if "ping_avg_ms" in r]
        if pings:
            best["ping_avg_ms"] = min(pings)
        best.pop("trial", None)
        out.append(best)
    return out


def format_table(rows: list[dict]) -> str:
    """The side-by-side table (best of the trials of each mode)."""
    nan = float("nan")
    kernel_ping = next((r.get("ping_avg_ms") for r in summarize(rows) if r["mode"] == "kernel"), None)
    header = ["mode", "n", "Gb/s", "(min-max)", "vs bridge", "data Mpps", "gw Mpps", "gw cpu", "Gb/s/core",
              "cpu ns/B", "rewritten", "retr", "ping ms", "added"]
    kernel_gbps = next((r.get("gbps") for r in summarize(rows) if r["mode"] == "kernel"), None)
    body = []
    for r in summarize(rows):
        ping = r.get("ping_avg_ms", nan)
        added = ping - kernel_ping if kernel_ping is not None and r["mode"] != "kernel" else nan
        spread = f"{r['gbps_min']:.2f}-{r['gbps_max']:.2f}"
        vs = r.get("gbps", 0) / kernel_gbps if kernel_gbps else nan
        body.append([r["mode"], r["n"], f"{r.get('gbps', 0):.2f}", spread, f"{vs:.1%}", num(r.get("data_mpps", 0)),
                     num(r.get("gw_mpps_both_dirs", nan)), num(r.get("gw_cpu_frac", nan), "ratio"),
                     f"{r.get('gbps_per_gw_core', nan):.2f}", f"{r.get('machine_cpu_ns_per_byte', nan):.3f}",
                     num(r.get("gw_rewritten", nan)), r.get("retransmits", 0), num(ping, "ms"), num(added, "ms")])
    lines = [render(header, body)]
    lines.append("Gb/s: iperf3, 1 TCP stream, 1500-byte MTU, best of n (min-max over the n trials); data Mpps: "
                 "1448-byte segments/s; gw Mpps: frames the gateway forwarded, both directions; gw cpu: share of "
                 "one core (for kdp, the user-space controller only: the kernel forwards in softirq); cpu ns/B: busy "
                 "time of every core per byte delivered (the whole machine, end hosts included); ping: idle RTT, "
                 "lowest mean of the trials; added: vs the kernel bridge. kdp: the kernel datapath (eBPF).")
    return "\n".join(lines)
