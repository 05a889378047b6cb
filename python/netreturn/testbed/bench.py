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

from ..stats import quantile
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
    # AWM's gain follows its design RTT (beta = T / 4R, R = design_rtt +
    # T / C): the default 200 ms (the papers' paths) grows swnd from 10 MTU
    # at about 1 MB/s, which holds a 0.1 ms path's sender for seconds. An
    # operator sets the RTT of the path the gateway serves.
    "gateway+awm": ["--controller", "awm", "--ctl", "capacity=10gbit", "--ctl", "design_rtt=1ms"],
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
#: The modes the kernel forwards: the bridge and every kdp mode.
KERNEL_FORWARDED = [m for m, a in MODES.items() if a is None or a[-2:] == ["--datapath", "kernel"]]


#: Seconds between two pings: 1000 a trial take 2 s. Root may go below
#: ping's 0.2 s user floor; 2 ms leaves the path idle between echoes.
PING_INTERVAL = 0.002


def parse_ping(text: str) -> list[float]:
    """The round-trip time of every echo reply in ``ping``'s output, in ms
    (lines ``... time=0.045 ms``), in the order they came."""
    return [float(m.group(1)) for m in re.finditer(r"time[=<]([\d.]+) ms", text)]


def rtt_summary(rtts: list[float]) -> dict:
    """min / p50 / mean / p99 / max of single round trips (ms); empty
    without any."""
    if not rtts:
        return {}
    s = sorted(rtts)
    return {"ping_n": len(s), "ping_min_ms": s[0], "ping_p50_ms": quantile(s, 0.5),
            "ping_avg_ms": statistics.fmean(s), "ping_p99_ms": quantile(s, 0.99), "ping_max_ms": s[-1]}


def _ping(topo: Topology, n: int) -> list[float]:
    r = sh(["ping", "-n", "-c", str(n), "-i", str(PING_INTERVAL), Topology.receiver_addr(0)],
           ns=topo.sender(0), check=False, timeout=60 + n * PING_INTERVAL * 2)
    return parse_ping(r.stdout or "")


def _iperf(topo: Topology, seconds: float, streams: int, rate_bps: float | None = None) -> dict:
    srv = subprocess.Popen(["ip", "netns", "exec", topo.receiver(0), "iperf3", "-s", "-1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        cmd = ["iperf3", "-c", Topology.receiver_addr(0), "-t", str(seconds), "-P", str(streams), "-J"]
        if rate_bps:
            # iperf3's -b is per stream: the offered load split evenly.
            cmd += ["-b", str(int(rate_bps / streams))]
        r = sh(cmd, ns=topo.sender(0), check=False, timeout=seconds + 30)
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
    """CPU time of a process, every thread: the scheduler's run time in ns
    (``/proc/PID/task/*/schedstat``), where ``/proc/PID/stat``'s clock ticks
    (10 ms) would make a loop that runs 1 % of a core over a few seconds
    read as 0 or 2 %; the ticks when schedstat is not there."""
    total, found = 0, False
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
                    found = True
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        pass
    if found:
        return total / 1e9
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def _trial(mode: str, k: int, seconds: float, streams: int, pings: int, binary: str | None,
           prefix: str, cpu: int | None, mask: str | None, extra: list[str], offloads: bool = False,
           rate_bps: float | None = None) -> dict:
    topo = Topology(f"{prefix}{k}", rps_mask=mask, offloads=offloads)
    gw = None
    try:
        topo.create()
        if MODES[mode] is None:
            topo.kernel_bridge()
        else:
            stats = Path(tempfile.mkdtemp(prefix="nrbench")) / "stats.json"
            cmd = [binary, "--a", "gwa", "--b", "gwb", "--stats-file", str(stats)] + MODES[mode] + extra
            if mode in KERNEL_FORWARDED:
                # The kernel counts our programs' runs and run time.
                cmd.append("--prog-stats")
            if cpu is not None:
                cmd = ["taskset", "-c", str(cpu)] + cmd
            gw = subprocess.Popen(["ip", "netns", "exec", topo.gw] + cmd,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_ready([gw], [stats], [mode])
            if gw.poll() is not None:
                raise TestbedError(f"gateway exited: {' '.join(cmd)}: {gw.stderr.read().strip()[-300:]}")
        row = {"mode": mode, "gateway_cpu": cpu, "rps_mask": mask, "offloads": offloads,
               "offered_gbps": rate_bps / 1e9 if rate_bps else None}
        rtts = _ping(topo, pings)
        row.update(rtt_summary(rtts))
        row["_rtts"] = rtts
        t0 = time.monotonic()
        c0 = _cpu_seconds(gw.pid) if gw is not None else 0.0
        m0 = _machine_cpu_seconds()
        row.update(_iperf(topo, seconds, streams, rate_bps))
        wall = time.monotonic() - t0
        busy = _machine_cpu_seconds() - m0
        # Busy share of the whole machine over the transfer (every core):
        # at one offered load in every mode, the difference between two
        # modes is what one costs over the other per byte (AC/DC's figure).
        # /proc/stat counts in clock ticks (10 ms at USER_HZ 100), read at two
        # instants the wall clock does not share: a saturated machine can read
        # a tick or so above its span, which is no share at all: capped at 100.
        row["machine_cpu_pct"] = min(100.0, 100 * busy / wall / (os.cpu_count() or 1))
        # Every core's busy time per byte delivered: senders, receivers and
        # the bridge (in softirq or in our process) together, and whatever
        # else the machine runs (compare modes of one interleaved run).
        gbytes = row["gbps"] * row["seconds"] / 8
        if gbytes > 0:
            row["machine_cpu_ns_per_byte"] = busy / gbytes
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
            k = st.get("kernel", {})
            if sum(k.get("prog_runs", [])):
                # What the kernel datapath adds to forwarding: its programs'
                # run time (softirq, counted by the kernel) and the
                # controller loop's CPU, as shares of the whole machine
                # (every core) over the transfer. The pings' few runs fall
                # in the same total.
                ncpu = os.cpu_count() or 1
                runs, ns = sum(k["prog_runs"]), sum(k["prog_ns"])
                row["bpf_runs"] = runs
                row["bpf_ns_per_run"] = ns / runs
                row["bpf_cpu_pct"] = 100 * ns / 1e9 / wall / ncpu
                row["ctl_cpu_pct"] = 100 * row["gw_cpu_frac"] / ncpu
                row["kdp_added_cpu_pct"] = row["bpf_cpu_pct"] + row["ctl_cpu_pct"]
            gw = None
        return row
    finally:
        if gw is not None:
            gw.kill()
            gw.communicate()
        topo.destroy()


def bench(out: Path, seconds: float = 5.0, streams: int = 1, pings: int = 1000,
          modes: list[str] | None = None, gateway_bin: str | None = None, prefix: str = "nrtbb",
          pin: bool = True, repeat: int = 1, gateway_args: list[str] | None = None,
          offloads: bool = False, rate_bps: float | None = None) -> list[dict]:
    """Runs every mode ``repeat`` times (interleaved); returns one row per
    trial (also in ``bench.csv``); :func:`summarize` reduces them. With
    ``offloads`` the veths keep TSO/GSO and checksum offload (the kernel
    forwards 64 KiB aggregates, as a server's NIC would hand them over):
    the bridge and the kernel datapath only. With ``rate_bps`` iperf3 offers
    that load (``-b``) in every mode instead of as much as it can, so the
    modes' CPU is compared at one throughput."""
    if shutil.which("iperf3") is None or shutil.which("ping") is None:
        raise TestbedError("bench needs iperf3 and ping (apt-get install -y iperf3 iputils-ping)")
    modes = modes or (KERNEL_FORWARDED if offloads else list(MODES))
    if offloads and any(m not in KERNEL_FORWARDED for m in modes):
        raise TestbedError(f"--offloads: the packet datapath reads wire-size frames with full checksums; modes "
                           f"allowed with offloads: {', '.join(KERNEL_FORWARDED)}")
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
            row = _trial(mode, len(rows), seconds, streams, pings, binary, prefix, cpu, mask, gateway_args or [],
                         offloads, rate_bps)
            row["trial"] = r
            rows.append(row)
    _write(out / "bench.csv", rows)
    _write(out / "bench_summary.csv", summarize(rows))
    _write_rtts(out, rows)
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    """Rows as CSV; keys starting with ``_`` (a trial's single RTTs) stay out."""
    keys = sorted({k for r in rows for k in r if not k.startswith("_")}, key=lambda k: (k != "mode", k))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def _write_rtts(out: Path, rows: list[dict]) -> None:
    """Every single RTT (``pings.csv``) and their CDF per mode
    (``bench_rtt.png``): the latency a person would rather look at."""
    with open(out / "pings.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "trial", "seq", "rtt_ms"])
        for r in rows:
            for i, x in enumerate(r.get("_rtts", [])):
                w.writerow([r["mode"], r.get("trial", 0), i, x])
    pooled = {m: [x for r in rows if r["mode"] == m for x in r.get("_rtts", [])]
              for m in dict.fromkeys(r["mode"] for r in rows)}
    if not any(pooled.values()):
        return
    from ..plots import cdf_figure
    from ..report import save

    n = {m: len(v) for m, v in pooled.items()}
    fig = cdf_figure(pooled, "idle round-trip time (ms)", "testbed bench: single pings through each datapath",
                     f"{min(n.values())}-{max(n.values())} echoes per mode, every trial pooled, one every "
                     f"{PING_INTERVAL * 1000:g} ms on an idle path (before each trial's iperf3).")
    if fig is not None:
        save(fig, out / "bench_rtt.png")


def summarize(rows: list[dict]) -> list[dict]:
    """One row per mode: the best trial (highest Gb/s), with the number of
    trials and the min / median / max of the throughput. Its latency is every
    trial's single pings pooled (p50 and p99), with the lowest and highest
    per-trial p50 beside it: how far a mode moves between its own trials
    bounds the difference between modes one can resolve."""
    out = []
    for mode in dict.fromkeys(r["mode"] for r in rows):
        rs = [r for r in rows if r["mode"] == mode]
        best = {k: v for k, v in max(rs, key=lambda r: r.get("gbps", 0)).items() if not k.startswith("_")}
        g = [r.get("gbps", 0) for r in rs]
        best.update(n=len(rs), gbps_min=min(g), gbps_median=statistics.median(g), gbps_max=max(g))
        for k in [k for k in best if k.startswith("ping_")]:
            best.pop(k)
        pooled = [x for r in rs for x in r.get("_rtts", [])]
        if pooled:
            best.update(rtt_summary(pooled))
            p50s = [r["ping_p50_ms"] for r in rs if "ping_p50_ms" in r]
            best.update(ping_p50_trial_min_ms=min(p50s), ping_p50_trial_max_ms=max(p50s))
        # CPU as the median over the trials, each trial's machine being
        # disturbed differently: with one offered load the modes compare.
        for key in ("machine_cpu_pct", "kdp_added_cpu_pct"):
            v = [r[key] for r in rs if r.get(key) is not None]
            if v:
                best[f"{key}_median"] = statistics.median(v)
                best[f"{key}_min"], best[f"{key}_max"] = min(v), max(v)
        best.pop("trial", None)
        out.append(best)
    return out


def format_table(rows: list[dict]) -> str:
    """The side-by-side table (best of the trials of each mode; latency from
    every trial's pings pooled)."""
    nan = float("nan")
    summary = summarize(rows)
    bridge = next((r for r in summary if r["mode"] == "kernel"), {})
    header = ["mode", "n", "Gb/s", "(min-max)", "vs bridge", "data Mpps", "gw Mpps", "gw cpu", "Gb/s/core",
              "cpu ns/B", "machine cpu", "vs bridge", "ebpf ns/run", "added cpu", "rewritten", "retr", "rtt p50",
              "(trials)", "rtt p99", "added p50", "added p99"]
    body = []
    for r in summary:
        added = {q: (r.get(f"ping_{q}_ms", nan) - bridge.get(f"ping_{q}_ms", nan)
                     if bridge and r["mode"] != "kernel" else nan) for q in ("p50", "p99")}
        spread = f"{r['gbps_min']:.2f}-{r['gbps_max']:.2f}"
        trials = (f"{r['ping_p50_trial_min_ms']:.3f}-{r['ping_p50_trial_max_ms']:.3f}"
                  if "ping_p50_trial_min_ms" in r else "")
        vs = r.get("gbps", 0) / bridge["gbps"] if bridge.get("gbps") else nan
        cpu, cpu0 = r.get("machine_cpu_pct_median", nan), bridge.get("machine_cpu_pct_median", nan)
        cpu_vs = f"{cpu - cpu0:+.2f} pp" if bridge and r["mode"] != "kernel" and cpu == cpu and cpu0 == cpu0 else "-"
        if r.get("offered_gbps") and r.get("gbps", 0) < 0.95 * r["offered_gbps"]:
            cpu_vs += " (below offered)"
        body.append([r["mode"], r["n"], f"{r.get('gbps', 0):.2f}", spread, f"{vs:.1%}", num(r.get("data_mpps", 0)),
                     num(r.get("gw_mpps_both_dirs", nan)), num(r.get("gw_cpu_frac", nan), "ratio"),
                     f"{r.get('gbps_per_gw_core', nan):.2f}", f"{r.get('machine_cpu_ns_per_byte', nan):.3f}",
                     f"{cpu:.1f} %", cpu_vs, f"{r.get('bpf_ns_per_run', nan):.0f}",
                     f"{r['kdp_added_cpu_pct_median']:.2f} pp" if "kdp_added_cpu_pct_median" in r else "-",
                     num(r.get("gw_rewritten", nan)), r.get("retransmits", 0),
                     f"{r.get('ping_p50_ms', nan):.3f}", trials, f"{r.get('ping_p99_ms', nan):.3f}",
                     *(f"{added[q]:+.3f}" if added[q] == added[q] else "-" for q in ("p50", "p99"))])
    lines = [render(header, body)]
    lines.append("Gb/s: iperf3, 1 TCP stream, 1500-byte MTU, best of n (min-max over the n trials); data Mpps: "
                 "1448-byte segments/s; gw Mpps: frames the gateway forwarded, both directions; gw cpu: share of "
                 "one core (for kdp, the user-space controller only: the kernel forwards in softirq); cpu ns/B: busy "
                 "time of every core per byte delivered (the whole machine, end hosts included); machine cpu: busy "
                 "share of the whole machine over the transfer, median of the trials; vs bridge: its difference from "
                 "the bridge's in percentage points (a cost per byte when both carry one offered load, --rate); ebpf "
                 "ns/run: the kdp programs' mean run time per frame (the kernel's BPF_ENABLE_STATS); added cpu: what "
                 "kdp adds to the kernel's forwarding, its programs' run time plus the controller loop's CPU, in "
                 "percentage points of the whole machine over the transfer (median of the trials); rtt: single idle "
                 "pings (ms) of every trial pooled, p50 and p99, with the lowest and highest per-trial p50 in "
                 "brackets; added: vs the kernel bridge's pooled p50 / p99. kdp: the kernel datapath (eBPF).")
    return "\n".join(lines)
