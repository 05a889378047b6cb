"""One testbed run: topology, gateway (or kernel bridge), transfers,
sampling, results as CSV, and removal of everything created."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import gateway_binary
from .netns import TestbedError, Topology, available_cc, sh

TRAFFIC = str(Path(__file__).with_name("traffic.py"))

#: The gateway's datapaths (``netreturn-gateway --datapath``).
DATAPATHS = ("packet", "kernel")


def find_gateway(explicit: str | None = None) -> str:
    """The netreturn-gateway binary (:func:`netreturn.gateway_binary.find`:
    explicit path, $NETRETURN_GATEWAY, $PATH, the checkout's cargo target
    directories), as a TestbedError when there is none."""
    try:
        return gateway_binary.find(explicit)
    except gateway_binary.GatewayNotFound as e:
        raise TestbedError(str(e)) from None


@dataclass
class Hop:
    """One gateway process of a chain (see :attr:`RunConfig.hops`).

    Either a scenario's link, ``config`` (a scenario file) with ``sets``
    (its ``--set NAME=VALUE`` overrides, as the user gave them): the gateway
    resolves the file's bottleneck with the simulator's model, both
    directions, and the link flags below stay unset; or the link in flags
    (``rate``, ``delay``, ``queue``, ``controller``, ``ctl``, ``loss``).
    ``args`` are extra flags either way."""

    name: str = "gw"
    rate: str | None = None
    delay: str = "0ms"
    queue: str | None = None
    controller: str = "none"
    ctl: list[str] = field(default_factory=list)
    loss: float = 0.0
    args: list[str] = field(default_factory=list)
    config: str | None = None
    sets: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HostLinks:
    """Each end host's own link, both directions, rate-limited one by one
    (``tbf`` on its egress, the kernel's token bucket) as the dumbbell's
    access and receiver links are in the simulator: a sender's burst leaves
    it at its access rate, not at the WAN emulator's aggregate one. Rates
    in bit/s, limits (the links' buffers) in bytes."""

    sender_bps: float  # left<i> -> R1 (topology.access)
    to_sender_bps: float  # R1 -> left<i> (topology.access.reverse)
    receiver_bps: float  # right<j> -> R2 (topology.receivers.reverse)
    to_receiver_bps: float  # R2 -> right<j> (topology.receivers)
    sender_limit: int = 1 << 20
    to_sender_limit: int = 1 << 20
    receiver_limit: int = 1 << 20
    to_receiver_limit: int = 1 << 20


@dataclass
class FlowPlan:
    """One transfer: from sender ``sender`` to receiver ``receiver``,
    ``nbytes`` bytes, starting ``start`` seconds after the common start."""

    sender: int
    receiver: int
    nbytes: int
    start: float = 0.0


@dataclass
class RunConfig:
    out: Path
    senders: int = 1
    receivers: int = 1
    flows: int = 1
    nbytes: int = 20_000_000
    cc: str = "cubic"
    #: Every end host asks for ECN (``net.ipv4.tcp_ecn=1``, RFC 3168); False
    #: leaves Linux's default (2: accept when asked, never ask).
    ecn: bool = False
    #: "gateway" (our binary), "kernel" (Linux bridge), "none" (our binary,
    #: no controller: link emulator) is gateway with controller "none".
    mode: str = "gateway"
    gateway_args: list[str] = field(default_factory=list)
    controller: str = "none"
    ctl: list[str] = field(default_factory=list)
    rate: str | None = "100mbit"
    delay: str = "5ms"
    queue: str | None = None
    seed: int = 1
    stagger: float = 0.0
    sndbuf: int | None = None
    rcvbuf: int | None = None
    tcp_mem_max: int = 64 << 20
    #: ``tcp_rmem``'s default on every host (each socket's receive buffer
    #: from the handshake on); None: Linux's 128 KiB, grown by autotuning.
    rmem_default: int | None = None
    interval: float = 0.1
    timeout: float = 60.0
    gateway_bin: str | None = None
    prefix: str | None = None
    #: Gateways in series (senders -> hops[0] -> ... -> receivers). None:
    #: one hop built from rate / delay / queue / controller / ctl above.
    hops: list[Hop] | None = None
    #: Index of the hop whose counters are the run's ``gateway`` (the
    #: bottleneck); the others are under ``gateways``.
    primary_hop: int = -1
    #: Transfers; None: ``flows`` transfers of ``nbytes``, flow k from
    #: sender k % senders to receiver k % receivers, started ``stagger * k``.
    flow_plan: list[FlowPlan] | None = None
    #: ``ss -ti`` sampling period in the senders (0: off; None: ``interval``).
    ss_interval: float | None = None
    #: TCP_INFO sampling period inside the senders' servers (0: off).
    info_interval: float = 0.0
    #: Clients connect at a common wall-clock instant this long after the
    #: last process has started (so that flows starting together really do).
    start_delay: float = 0.0
    #: Traffic by iperf3 instead of downloads: every flow sends for this
    #: many seconds from its sender (iperf3 client) to its receiver (server),
    #: throughput reported every ``interval``; ``nbytes`` is not used.
    iperf3_seconds: float | None = None
    #: iperf3 ``-w`` (socket buffers, so the window): "64K" in the NGWA paper's section 4.3.
    iperf3_window: str | None = None
    #: Who moves the bottleneck hop's frames: "packet" (netreturn-gateway
    #: through AF_PACKET) or "kernel" (its eBPF datapath: a Linux bridge,
    #: htb over a FIFO, the ACK rewrite in the kernel; :func:`plan_hops`
    #: puts that hop's delay and loss on a packet hop in front of it).
    datapath: str = "packet"
    #: Each end host's link rate-limited on its own (:class:`HostLinks`);
    #: None: the hosts' links run at the veths' speed and only the hops
    #: limit rates.
    host_links: HostLinks | None = None
    #: Settings every end host's namespace takes before the run
    #: (``sysctl -w NAME=VALUE``; a refusal stops the run).
    host_sysctls: tuple[tuple[str, str], ...] = ()
    #: Handshake round trips of the idle path (receiver 0 connecting to
    #: sender 0, one after the other) measured once the gateways run and
    #: before the transfers: ``probe_rtt_ms`` of the summary (0: none).
    rtt_probes: int = 0


def hops_of(cfg: RunConfig) -> list[Hop]:
    if cfg.hops is not None:
        return cfg.hops
    return [Hop(name="gw", rate=cfg.rate, delay=cfg.delay, queue=cfg.queue, controller=cfg.controller,
                ctl=list(cfg.ctl), args=list(cfg.gateway_args))]


def _zero_time(t: str | None) -> bool:
    return t is None or t.strip().rstrip("munsec") in ("0", "0.0", "")


_CHECK_LINE = re.compile(r"^(A->B|B->A) rate \d+ bit/s\s+delay (\d+) ns\s+jitter (\d+) ns.*?\s+loss (\S+)\s")


def config_link(binary: str, h: Hop) -> dict[str, tuple[int, int, float]]:
    """The delay, jitter (ns) and loss of each direction of hop ``h``'s
    scenario link, as the gateway resolves it (``--check``)."""
    r = subprocess.run([binary, "--a", "x", "--b", "y", *link_args(h), "--check"], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        raise TestbedError(f"hop {h.name}: {r.stderr.strip()}")
    out = {}
    for ln in r.stdout.splitlines():
        m = _CHECK_LINE.match(ln)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)), float(m.group(4)))
    if set(out) != {"A->B", "B->A"}:
        raise TestbedError(f"hop {h.name}: netreturn-gateway --check printed no link: {r.stdout[:200]!r}")
    return out


def plan_hops(cfg: RunConfig, binary: str | None = None) -> tuple[list[Hop], int]:
    """The gateways of the run and the index of the bottleneck among them.

    With ``datapath="kernel"`` the bottleneck hop runs ``--datapath kernel``.
    The kernel path has no delay line (this kernel has no netem), so a
    bottleneck with a delay or a loss gets a packet-datapath hop in front of
    it, ``wan``, carrying exactly those (both directions), as a WAN emulator
    in front of an edge gateway would; the bottleneck keeps its rate, queue
    and controller. A scenario hop (``config``) keeps its file, read with
    ``--delay-elsewhere``; its delays and losses, as the gateway resolves
    them (``binary --check``), go to the ``wan`` hop."""
    hops = list(hops_of(cfg))
    primary = cfg.primary_hop % len(hops)
    if cfg.datapath == "packet":
        return hops, primary
    if cfg.datapath != "kernel":
        raise TestbedError(f"datapath {cfg.datapath!r}: packet or kernel")
    h = hops[primary]
    if h.config is not None:
        if binary is None:
            raise TestbedError(f"hop {h.name}: a scenario hop on the kernel datapath needs the gateway binary")
        link = config_link(binary, h)
        (d_ab, j_ab, l_ab), (d_ba, j_ba, l_ba) = link["A->B"], link["B->A"]
        kern = replace(h, args=[*h.args, "--datapath", "kernel", "--delay-elsewhere"])
        wan = Hop(name="wan", delay=f"{d_ab}ns", loss=l_ab,
                  args=["--delay-ba", f"{d_ba}ns", "--loss-ba", repr(l_ba), "--jitter", f"{j_ab}ns",
                        "--jitter-ba", f"{j_ba}ns"])
        if d_ab == d_ba == j_ab == j_ba == 0 and l_ab == l_ba == 0:
            hops[primary] = kern
            return hops, primary
        hops[primary:primary + 1] = [wan, kern]
        return hops, primary + 1
    kern = replace(h, delay="0ms", loss=0.0, args=[*h.args, "--datapath", "kernel"])
    if _zero_time(h.delay) and not h.loss:
        hops[primary] = kern
        return hops, primary
    wan = Hop(name="wan", delay=h.delay, loss=h.loss)
    hops[primary:primary + 1] = [wan, kern]
    return hops, primary + 1


def flows_of(cfg: RunConfig) -> list[FlowPlan]:
    if cfg.flow_plan is not None:
        return cfg.flow_plan
    return [FlowPlan(k % cfg.senders, k % cfg.receivers, cfg.nbytes, cfg.stagger * k) for k in range(cfg.flows)]


_SS_RTT = re.compile(r"\brtt:([\d.]+)/([\d.]+)")
_SS_KV = re.compile(r"\b(cwnd|snd_wnd|rcv_space|rcv_wnd|ssthresh):(\d+)")
_SS_WS = re.compile(r"\bwscale:(\d+),(\d+)")


def parse_ss(text: str) -> list[dict]:
    """Parses ``ss -tinH`` output: one dict per socket."""
    socks: list[dict] = []
    cur: dict | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            parts = line.split()
            # State may be omitted with a state filter: Recv-Q Send-Q Local Peer.
            addrs = [p for p in parts if ":" in p]
            cur = {"local": addrs[0] if addrs else "", "peer": addrs[1] if len(addrs) > 1 else ""}
            socks.append(cur)
        elif cur is not None:
            m = _SS_RTT.search(line)
            if m:
                cur["rtt_ms"], cur["rttvar_ms"] = float(m.group(1)), float(m.group(2))
            for k, v in _SS_KV.findall(line):
                cur[k] = int(v)
            m = _SS_WS.search(line)
            if m:
                cur["snd_wscale"], cur["rcv_wscale"] = int(m.group(1)), int(m.group(2))
    return socks


#: Linux's own loss-recovery counters (``/proc/net/netstat``, ``TcpExt``;
#: per network namespace), kept per host in sender_snmp.csv and summed over
#: the senders in a run's summary: the entries into a fast recovery with and
#: without SACK (``tcp_enter_recovery``: ``LINUX_MIB_TCPSACKRECOVERY`` /
#: ``TCPRENORECOVERY``), every expiry of the retransmission timer, backoffs
#: included (``tcp_retransmit_timer``: ``LINUX_MIB_TCPTIMEOUTS``), a
#: timeout inside a recovery (``...RECOVERYFAIL``), tail loss probes sent
#: and the losses they repaired (RFC 8985 section 7, ``tcp_send_loss_probe``,
#: ``tcp_process_tlp_ack``), retransmissions lost again (RACK), RTOs found
#: spurious (F-RTO, RFC 5682), reductions undone (``tcp_try_undo_*``: all
#: of a recovery's by timestamps, part of it, by DSACKs, a timeout's) and
#: the reordering and DSACKs seen, which start such undoing.
TCPEXT_COUNTERS = ("TCPSackRecovery", "TCPRenoRecovery", "TCPTimeouts", "TCPSackRecoveryFail",
                   "TCPRenoRecoveryFail", "TCPLossProbes", "TCPLossProbeRecovery", "TCPLostRetransmit",
                   "TCPSpuriousRTOs", "TCPFullUndo", "TCPPartialUndo", "TCPDSACKUndo", "TCPLossUndo",
                   "TCPSACKReorder", "TCPDSACKRecv")


def parse_proc_counters(text: str) -> dict[str, int]:
    """Counters of ``/proc/net/snmp`` and ``/proc/net/netstat`` (each a
    header line of names and a line of values per group): TCP's and
    ``TcpExt``'s by their names (``InCsumErrors``, ``TCPTimeouts``...),
    IP's prefixed (``IpInHdrErrors``: a header the receiver refused, a
    wrong IPv4 header checksum or a bad IHL among them). A group whose two
    lines do not pair up is left out."""
    out: dict[str, int] = {}
    for proto, prefix in (("Tcp:", ""), ("TcpExt:", ""), ("Ip:", "Ip")):
        lines = [ln.split() for ln in text.splitlines() if ln.startswith(proto)]
        if len(lines) >= 2 and len(lines[0]) == len(lines[1]):
            out.update({prefix + k: int(v) for k, v in zip(lines[0][1:], lines[1][1:]) if v.lstrip("-").isdigit()})
    return out


def read_snmp(topo: Topology, ns: str) -> dict[str, int]:
    """:func:`parse_proc_counters` of ``ns``'s ``/proc/net/snmp`` and
    ``/proc/net/netstat`` (both per network namespace)."""
    return parse_proc_counters(sh(["cat", "/proc/net/snmp", "/proc/net/netstat"], ns=ns).stdout)


def recovery_totals(rows: list[dict]) -> dict[str, int]:
    """The senders' loss recoveries over a run, from :func:`_snmp_deltas`'
    rows: fast recoveries entered (with SACK or without), retransmission
    timer expiries, tail loss probes sent."""
    senders = [r for r in rows if r["role"] == "sender"]
    return {"sender_fast_recoveries": sum(r["TCPSackRecovery"] + r["TCPRenoRecovery"] for r in senders),
            "sender_rto_expiries": sum(r["TCPTimeouts"] for r in senders),
            "sender_loss_probes": sum(r["TCPLossProbes"] for r in senders),
            "sender_tcpext": {k: sum(r[k] for r in senders) for k in TCPEXT_COUNTERS}}


class Sampler(threading.Thread):
    """Samples ``ss -tin`` in every sender namespace every ``interval``."""

    def __init__(self, topo: Topology, interval: float):
        super().__init__(daemon=True)
        self.topo, self.interval = topo, interval
        self.rows: list[dict] = []
        self.stop_ev = threading.Event()
        self.t0 = time.monotonic()

    def run(self) -> None:
        while not self.stop_ev.is_set():
            t = time.monotonic() - self.t0
            for i in range(self.topo.senders):
                ns = self.topo.sender(i)
                r = sh(["ss", "-tinH", "state", "established"], ns=ns, check=False)
                for s in parse_ss(r.stdout or ""):
                    if ":50" not in s.get("local", ""):
                        continue  # only the data senders' sockets (ports 50xx)
                    self.rows.append({"t_s": round(t, 4), "sender": i, **s})
            self.stop_ev.wait(self.interval)

    def stop(self) -> None:
        self.stop_ev.set()
        self.join(timeout=5)


def _write_csv(path: Path, rows: list[dict]) -> None:
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys or ["empty"])
        w.writeheader()
        for r in rows:
            w.writerow(r)


def link_args(h: Hop) -> list[str]:
    """The gateway flags that set hop ``h``'s link: ``--config FILE --set
    NAME=VALUE...`` for a scenario's link (the gateway reads the file), the
    link flags otherwise."""
    if h.config is not None:
        flags = (h.rate, h.queue, h.ctl, h.loss, h.controller != "none", h.delay not in ("0ms", "0us", "0"))
        if any(flags):
            raise ValueError(f"hop {h.name}: --config {h.config} sets the link; its link flags must stay unset")
        return ["--config", h.config] + [x for kv in h.sets for x in ("--set", kv)]
    cmd = ["--delay", h.delay, "--controller", h.controller]
    if h.rate:
        cmd += ["--rate", h.rate]
    if h.queue:
        cmd += ["--queue", h.queue]
    if h.loss:
        cmd += ["--loss", repr(h.loss)]
    for c in h.ctl:
        cmd += ["--ctl", c]
    return cmd


#: Interfaces no namespace has: the gateway parses and checks its whole
#: command line, then stops at opening them (exit status 1, "no interface").
_NO_IFACE = ("nrtb-noif-a", "nrtb-noif-b")


def check_gateway_args(binary: str, args: list[str]) -> str | None:
    """Runs ``binary`` with ``args`` on interfaces that do not exist: None
    when the gateway accepts every setting (it fails only at opening the
    interfaces), else its message (a usage error, exit status 2)."""
    r = subprocess.run([binary, "--a", _NO_IFACE[0], "--b", _NO_IFACE[1], *args], capture_output=True, text=True,
                       timeout=30)
    if r.returncode == 1 and f"no interface '{_NO_IFACE[0]}'" in r.stderr:
        return None
    msg = r.stderr.strip().split("\n\n")[0]  # the usage text follows a blank line
    return msg.removeprefix("netreturn-gateway: ") or f"exit status {r.returncode}"


def gateway_command(cfg: RunConfig, binary: str, hop: Hop | None = None, k: int = 0) -> list[str]:
    h = hop or hops_of(cfg)[0]
    stats = _stats_path(cfg, k)
    return [binary, "--a", "gwa", "--b", "gwb", "--seed", str(cfg.seed + 1000 * k), "--stats-file", str(stats),
            *link_args(h), *h.args]


def wait_ready(procs: list, files: list[Path], names: list[str], timeout: float = 20.0) -> None:
    """Waits until every gateway process wrote its first stats file (its
    ``--stats-file``): its ports are open, or (kernel datapath) its programs
    attached, so no traffic passes before it can see it. A process that
    exits meanwhile is left for the caller's check; one still setting up
    after ``timeout`` seconds (a loaded machine verifying eBPF programs) is
    an error."""
    deadline = time.monotonic() + timeout
    while True:
        pending = [n for p, f, n in zip(procs, files, names) if p.poll() is None and not f.exists()]
        if not pending:
            return
        if time.monotonic() > deadline:
            raise TestbedError(f"gateway {', '.join(pending)} not ready after {timeout:.0f} s (no stats file yet)")
        time.sleep(0.05)


def _stats_path(cfg: RunConfig, k: int) -> Path:
    return cfg.out / ("gateway_stats.json" if k == 0 else f"gateway{k}_stats.json")


def _load_info(path: Path) -> list[dict]:
    """TCP_INFO records a server wrote (see traffic.py), one per connection."""
    if not path.is_file():
        return []
    try:
        d = json.loads(path.read_text())
    except json.JSONDecodeError:
        return []
    cols = d.get("columns", [])
    out = []
    for c in d.get("connections", []):
        out.append({"peer": c.get("peer"), "samples": [dict(zip(cols, r)) for r in c.get("samples", [])],
                    "final": dict(zip(cols, c["final"])) if c.get("final") else None})
    return out


def probe_rtt(topo: Topology, count: int, port: int = 4999) -> list[float]:
    """``count`` handshake times (ms) of receiver 0 connecting to sender 0:
    the idle path's round trip, gateways included (traffic.py ``rtt``)."""
    srv = subprocess.Popen(["ip", "netns", "exec", topo.sender(0), "python3", TRAFFIC, "server", "--port", str(port),
                            "--bytes", "1", "--count", str(count)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert srv.stdout is not None
        srv.stdout.readline()  # "ready"
        r = sh(["python3", TRAFFIC, "rtt", "--host", topo.sender_addr(0), "--port", str(port), "--count", str(count)],
               ns=topo.receiver(0), check=False, timeout=30 + 5 * count)
        return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else []
    finally:
        if srv.poll() is None:
            srv.kill()
        srv.wait()
        if srv.stdout:
            srv.stdout.close()


def _stop_gateway(gw: subprocess.Popen) -> dict:
    gw.send_signal(signal.SIGTERM)
    try:
        outs, _ = gw.communicate(timeout=10)
        return json.loads(outs.strip().splitlines()[-1]) if outs.strip() else {}
    except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError):
        gw.kill()
        return {}


def _wait_clients(clients: list[subprocess.Popen], deadline: float) -> list[int]:
    """Waits for the traffic clients until ``deadline`` (monotonic), killing
    the late ones; returns the indices of those that failed."""
    failed = []
    for k, c in enumerate(clients):
        try:
            rc = c.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            c.kill()
            rc = -1
        if rc != 0:
            failed.append(k)
    return failed


def _snmp_deltas(out: Path, hosts: list[str], before: dict, after: dict) -> list[dict]:
    """Each host's counters over the run, written to receiver_snmp.csv and
    sender_snmp.csv."""
    rows = []
    for ns in hosts:
        row = {"namespace": ns, "role": "sender" if ns.rsplit("-", 1)[-1].startswith("s") else "receiver"}
        for key in ("InCsumErrors", "InErrs", "InSegs", "RetransSegs", "OutSegs", "IpInHdrErrors") + TCPEXT_COUNTERS:
            row[key] = after[ns].get(key, 0) - before[ns].get(key, 0)
        rows.append(row)
    _write_csv(out / "receiver_snmp.csv", [r for r in rows if r["role"] == "receiver"])
    _write_csv(out / "sender_snmp.csv", [r for r in rows if r["role"] == "sender"])
    return rows


def _iperf3_flow(path: Path, k: int, fp: "FlowPlan") -> tuple[dict, list[dict]]:
    """One iperf3 client's JSON: the flow's row and its throughput series."""
    try:
        d = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {"flow": k, "completed": 0}, []
    end = d.get("end", {})
    rcv, snt = end.get("sum_received", {}), end.get("sum_sent", {})
    row = {"flow": k, "sender": fp.sender, "receiver": fp.receiver, "completed": int("error" not in d),
           "bytes": rcv.get("bytes", 0), "seconds": rcv.get("seconds", 0.0),
           "goodput_mbps": round(rcv.get("bits_per_second", 0.0) / 1e6, 3),
           "retransmits": snt.get("retransmits", 0)}
    thr = [{"flow": k, "t_s": round(iv["sum"]["end"], 6), "mbps": round(iv["sum"]["bits_per_second"] / 1e6, 3)}
           for iv in d.get("intervals", [])]
    return row, thr


def _run_iperf3(cfg: RunConfig, topo: Topology, plan: list[FlowPlan], procs: list, hosts: list[str],
                snmp0: dict, gws: list, hops: list, primary: int) -> dict:
    """The traffic part of :func:`run` with iperf3 (the NGWA paper's section 4.3:
    "iperf ... TCP with 64 KBytes of window, transmitting data constantly in
    one direction (client to server)"): a server per flow in its receiver,
    the client in its sender; the caller's ``finally`` cleans up."""
    assert cfg.iperf3_seconds is not None
    if shutil.which("iperf3") is None:
        raise TestbedError("iperf3 not found (apt-get install -y iperf3)")
    for k, fp in enumerate(plan):
        procs.append(subprocess.Popen(["ip", "netns", "exec", topo.receiver(fp.receiver), "iperf3", "-s", "-1",
                                       "-p", str(5201 + k)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(0.5)
    clients = []
    for k, fp in enumerate(plan):
        cmd = ["iperf3", "-c", topo.receiver_addr(fp.receiver), "-p", str(5201 + k), "-t", str(cfg.iperf3_seconds),
               "-i", str(cfg.interval), "-J", "-C", cfg.cc, "--logfile", str(cfg.out / f"iperf{k}.json")]
        if cfg.iperf3_window:
            cmd += ["-w", cfg.iperf3_window]
        c = subprocess.Popen(["ip", "netns", "exec", topo.sender(fp.sender)] + cmd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        clients.append(c)
        procs.append(c)
    failed = _wait_clients(clients, time.monotonic() + cfg.iperf3_seconds + 20)
    snmp1 = {ns: read_snmp(topo, ns) for ns in hosts}
    gw_all = [_stop_gateway(gw) for gw in gws]
    flows, thr = [], []
    for k, fp in enumerate(plan):
        row, series = _iperf3_flow(cfg.out / f"iperf{k}.json", k, fp)
        flows.append(row)
        thr += series
    _write_csv(cfg.out / "flows.csv", flows)
    _write_csv(cfg.out / "throughput.csv", thr)
    snmp = _snmp_deltas(cfg.out, hosts, snmp0, snmp1)
    summary = {
        "flows": len(plan), "failed_flows": failed, "cc": cfg.cc,
        "goodput_mbps": [f.get("goodput_mbps") for f in flows],
        "retransmits": [f.get("retransmits") for f in flows],
        "receiver_in_csum_errors": sum(r["InCsumErrors"] for r in snmp if r["role"] == "receiver"),
        "receiver_in_hdr_errors": sum(r["IpInHdrErrors"] for r in snmp if r["role"] == "receiver"),
        **recovery_totals(snmp),
        "gateways": [{"name": h.name, **g} for h, g in zip(hops, gw_all)],
        "gateway": gw_all[primary] if gw_all else {},
    }
    (cfg.out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def run(cfg: RunConfig) -> dict:
    """Runs one experiment; returns the summary (also in summary.json)."""
    if cfg.cc not in available_cc():
        raise TestbedError(f"congestion control '{cfg.cc}' not available here "
                           f"(have: {' '.join(available_cc())}; no loadable modules)")
    cfg.out.mkdir(parents=True, exist_ok=True)
    prefix = cfg.prefix or f"nrtb{os.getpid() % 100000}"
    hops, primary = plan_hops(cfg, find_gateway(cfg.gateway_bin) if cfg.mode != "kernel" else None)
    plan = flows_of(cfg)
    topo = Topology(prefix, cfg.senders, cfg.receivers, hops=len(hops))
    procs: list[subprocess.Popen] = []
    gws: list[subprocess.Popen] = []
    logs: list = []
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def on_signal(signum, frame):  # turn SIGTERM into the same unwinding as ^C
        raise KeyboardInterrupt(f"signal {signum}")

    for s in old:
        signal.signal(s, on_signal)
    sampler = None
    try:
        topo.create()
        if cfg.host_links is not None:
            topo.shape_hosts(cfg.host_links)
        for i in range(cfg.senders):
            ns = topo.sender(i)
            # May be refused outside the initial namespace (see traffic.set_cc).
            sh(["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={cfg.cc}"], ns=ns, check=False)
        for ns in [topo.sender(i) for i in range(cfg.senders)] + [topo.receiver(j) for j in range(cfg.receivers)]:
            m = cfg.tcp_mem_max
            d = cfg.rmem_default or 131072
            sh(["sysctl", "-qw", f"net.ipv4.tcp_rmem={min(4096, d)} {d} {m}"], ns=ns, check=False)
            sh(["sysctl", "-qw", f"net.ipv4.tcp_wmem=4096 16384 {m}"], ns=ns, check=False)
            sh(["sysctl", "-qw", f"net.core.rmem_max={m}"], ns=ns, check=False)
            sh(["sysctl", "-qw", f"net.core.wmem_max={m}"], ns=ns, check=False)
            if cfg.ecn:
                sh(["sysctl", "-qw", "net.ipv4.tcp_ecn=1"], ns=ns)
            for k, v in cfg.host_sysctls:
                sh(["sysctl", "-qw", f"{k}={v}"], ns=ns)
        if cfg.mode == "kernel":
            topo.kernel_bridge()
        else:
            binary = find_gateway(cfg.gateway_bin)
            cmds = []
            for k, h in enumerate(hops):
                cmd = gateway_command(cfg, binary, h, k)
                cmds.append(" ".join(cmd))
                log = open(cfg.out / ("gateway.log" if k == 0 else f"gateway{k}.log"), "w")
                logs.append(log)
                gws.append(subprocess.Popen(["ip", "netns", "exec", topo.hop(k)] + cmd,
                                            stdout=subprocess.PIPE, stderr=log, text=True))
            (cfg.out / "gateway_cmd.txt").write_text("\n".join(cmds) + "\n")
            wait_ready(gws, [_stats_path(cfg, k) for k in range(len(gws))], [h.name for h in hops])
            for k, gw in enumerate(gws):
                if gw.poll() is not None:
                    log = cfg.out / ("gateway.log" if k == 0 else f"gateway{k}.log")
                    raise TestbedError(f"gateway {hops[k].name} exited at start: {log.read_text().strip()[-500:]} "
                                       f"(see {log})")
        probes = probe_rtt(topo, cfg.rtt_probes) if cfg.rtt_probes > 0 else None
        hosts = [topo.sender(i) for i in range(cfg.senders)] + [topo.receiver(j) for j in range(cfg.receivers)]
        snmp0 = {ns: read_snmp(topo, ns) for ns in hosts}
        if cfg.iperf3_seconds is not None:
            return _run_iperf3(cfg, topo, plan, procs, hosts, snmp0, gws, hops, primary)
        # One server per flow on its sender, port 5000 + flow.
        for k, fp in enumerate(plan):
            cmd = ["python3", TRAFFIC, "server", "--port", str(5000 + k), "--bytes", str(fp.nbytes),
                   "--cc", cfg.cc]
            if cfg.sndbuf:
                cmd += ["--sndbuf", str(cfg.sndbuf)]
            if cfg.info_interval > 0:
                cmd += ["--info", str(cfg.out / f"info{k}.json"), "--info-interval", str(cfg.info_interval)]
            p = subprocess.Popen(["ip", "netns", "exec", topo.sender(fp.sender)] + cmd,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            procs.append(p)
            assert p.stdout is not None
            p.stdout.readline()  # "ready"
        ss_interval = cfg.interval if cfg.ss_interval is None else cfg.ss_interval
        if ss_interval > 0:
            sampler = Sampler(topo, ss_interval)
            sampler.start()
        clients = []
        at = time.time() + cfg.start_delay if cfg.start_delay > 0 else None
        for k, fp in enumerate(plan):
            cmd = ["python3", TRAFFIC, "client", "--host", topo.sender_addr(fp.sender), "--port", str(5000 + k),
                   "--bytes", str(fp.nbytes), "--flow", str(k), "--out", str(cfg.out / f"flow{k}.json"),
                   "--start", str(fp.start), "--interval", str(cfg.interval)]
            if at is not None:
                cmd += ["--at", repr(at)]
            if cfg.rcvbuf:
                cmd += ["--rcvbuf", str(cfg.rcvbuf)]
            c = subprocess.Popen(["ip", "netns", "exec", topo.receiver(fp.receiver)] + cmd,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            clients.append(c)
            procs.append(c)
        failed = _wait_clients(clients, time.monotonic() + cfg.timeout + (cfg.start_delay or 0))
        # The servers write their TCP_INFO records once their peer closed.
        until = time.monotonic() + (5 if not failed else 0.5)
        for p in procs:
            if p not in clients:
                try:
                    p.wait(timeout=max(0.05, until - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
        if sampler is not None:
            sampler.stop()
        snmp1 = {ns: read_snmp(topo, ns) for ns in hosts}
        gw_all = [_stop_gateway(gw) for gw in gws]
        gw_stats = gw_all[primary] if gw_all else {}
        # Results.
        flows, thr = [], []
        for k, fp in enumerate(plan):
            f = cfg.out / f"flow{k}.json"
            if not f.exists():
                flows.append({"flow": k, "completed": 0})
                continue
            d = json.loads(f.read_text())
            flows.append({"flow": k, "sender": fp.sender, "receiver": fp.receiver,
                          "cc": cfg.cc, "bytes": d["bytes"], "completed": int(d["bytes"] == fp.nbytes),
                          "fct_s": round(d["fct_s"], 6), "goodput_mbps": round(d["goodput_mbps"], 3),
                          "local": d["local"], "start_wall": d.get("start_wall")})
            thr += [{"flow": k, "t_s": t, "mbps": round(v, 3)} for t, v in d["throughput"]]
        _write_csv(cfg.out / "flows.csv", flows)
        _write_csv(cfg.out / "throughput.csv", thr)
        rows = sampler.rows if sampler is not None else []
        _write_csv(cfg.out / "rtt.csv", rows)
        if cfg.info_interval > 0:
            info_rows = []
            for k in range(len(plan)):
                for c in _load_info(cfg.out / f"info{k}.json"):
                    info_rows += [{"flow": k, **smp} for smp in c["samples"]]
            _write_csv(cfg.out / "tcpinfo.csv", info_rows)
        csum = _snmp_deltas(cfg.out, hosts, snmp0, snmp1)
        (cfg.out / "gateway.json").write_text(json.dumps(gw_stats, indent=1))
        snd = [r["snd_wnd"] for r in rows if "snd_wnd" in r]
        rtts = [r["rtt_ms"] for r in rows if "rtt_ms" in r]
        summary = {
            # The gateway's own word (a --config hop's controller is the file's).
            "mode": cfg.mode, "datapath": cfg.datapath if cfg.mode != "kernel" else "bridge",
            "controller": (gw_stats.get("controller", hops[primary].controller)
                                             if cfg.mode != "kernel" else "none"),
            "cc": cfg.cc, "flows": len(plan),
            "failed_flows": failed, "fct_s": [f.get("fct_s") for f in flows],
            "goodput_mbps": [f.get("goodput_mbps") for f in flows],
            "receiver_in_csum_errors": sum(r["InCsumErrors"] for r in csum if r["role"] == "receiver"),
            "receiver_in_hdr_errors": sum(r["IpInHdrErrors"] for r in csum if r["role"] == "receiver"),
            "sender_retrans_segs": sum(r["RetransSegs"] for r in csum if r["role"] == "sender"),
            "sender_out_segs": sum(r["OutSegs"] for r in csum if r["role"] == "sender"),
            **recovery_totals(csum),
            "gateway": gw_stats,
            "gateways": [{"name": h.name, **g} for h, g in zip(hops, gw_all)],
            "snd_wnd_max": max(snd) if snd else None, "snd_wnd_median": sorted(snd)[len(snd) // 2] if snd else None,
            "rtt_ms_mean": sum(rtts) / len(rtts) if rtts else None,
            "rtt_samples": len(rtts),
        }
        if probes is not None:
            summary["probe_rtt_ms"] = probes
        (cfg.out / "summary.json").write_text(json.dumps(summary, indent=1))
        return summary
    finally:
        if sampler is not None:
            sampler.stop()
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for s in (p.stdout, p.stderr):
                if s:
                    s.close()
        for gw in gws:
            if gw.poll() is None:
                gw.kill()
            gw.wait()
            if gw.stdout:
                gw.stdout.close()
        for log in logs:
            log.close()
        topo.destroy()
        for s, h in old.items():
            signal.signal(s, h)
