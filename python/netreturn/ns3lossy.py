"""ns-3 3.44 reference runs of the SARBE paper's lossy wireless link (docs/decisions.md §5.5),
for validating our Westwood+ and NewReno against ns-3's ``TcpWestwoodPlus``
and ``TcpNewReno`` (issue 14 item 5).

The topology, the TCP settings and the run length are read from our own
scenario file (``scenarios/sarbe/lossy_link.toml`` after its parameters are
substituted), and every key is translated into its ns-3 attribute here, so
the two simulators run one description; a key this module does not know
stops the run instead of being silently ignored. The choices where ns-3 and
ours differ by default are in ``TCP_DEFAULTS`` and in docs/validation.md
("Westwood+ and NewReno on the lossy link").

Like :mod:`netreturn.ns3ref`, ns-3 runs in a subprocess (this file as a
script, one JSON line per run on stdout). One subprocess runs every seed of
one (congestion control, loss rate) point one after the other, so the 11-13 s
of cling start-up are paid once per point, not once per seed
(``Simulator::Destroy`` between runs; a test checks that a seed gives the
same figures alone and after another).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from typing import Any, Optional

__all__ = ["CCS", "RENOSACK", "data_loss_pct", "receiver_duplicate_pct", "run_lossy", "main"]

SCENARIO = "sarbe/lossy_link"
#: Our congestion controls (scenario parameter ``tcp``) and ns-3's TypeIds.
CCS = {"newreno": "ns3::TcpNewReno", "westwood+": "ns3::TcpWestwoodPlus"}
#: ns-3's Westwood+ as shipped, or with its delivered count repaired
#: (``deduct``: dupACK-counted segments deducted from the covering ACK, as
#: Linux; ns3cxx/lossy.cc, NetreturnWestwoodPlus). NewReno ignores it.
WESTWOOD = {"ns3": "ns3::TcpWestwoodPlus", "deduct": "ns3::NetreturnWestwoodPlus",
            "linux": "ns3::NetreturnWestwoodLinux"}
#: ns-3's RTO after a timeout: as 3.44 ships it (recomputed by any new ACK,
#: which ends the backoff), or kept backed off until a new RTT sample, as RFC
#: 6298 section 5 and ours (ns3cxx/lossy.cc, LossyKarnRto; the same repair as
#: the NGWA harness's strict-rfc6298).
RTO = ("ns3", "rfc6298")
#: ns-3's NewReno on the ACK that ends CA_LOSS: as 3.44 ships it (cwnd grows
#: only by the segments beyond the recovery point: none when the ACK reaches
#: it exactly), or by one segment as every slow-start ACK of new data (RFC
#: 5681 section 3.1, ours; ns3cxx/lossy.cc, NetreturnNewRenoLossExit). A
#: diagnostic: Westwood+ ignores it.
LOSS_EXIT = {"ns3": "ns3::TcpNewReno", "rfc5681": "ns3::NetreturnNewRenoLossExit"}
#: Our loss recoveries (``tcp.recovery``) and ns-3's. Ours' "classic" is
#: RFC 6582 NewReno with cwnd inflation; ns-3's TcpClassicRecovery inflates
#: cwnd by one segment per dupACK and deflates to ssthresh at exit (RFC 5681
#: / 6582), its NewReno partial-ACK handling in TcpSocketBase::ProcessAck.
RECOVERIES = {"classic": "ns3::TcpClassicRecovery", "prr": "ns3::TcpPrrRecovery"}
#: ns-3's duplicate-ACK scoreboard without SACK (ns3cxx/lossy.cc): "ns3" as
#: shipped (cleared only on a timeout), "linux" also cleared when recovery
#: ends, as Linux's tcp_reset_reno_sack (docs/validation.md); "rfc6582" that
#: and the loss marks too, so that recovery ends with no scoreboard (inert:
#: the marks come back on the next ACK); "rfc6582-strict" no guessed mark at
#: all outside recovery, cleared at every entry into CA_OPEN, so that the
#: flight is SND.NXT - SND.UNA and only three dupACKs start a recovery, as
#: RFC 6582 (ns3cxx/lossy.cc, LossyRfc6582Strict).
RENOSACK = ("linux", "ns3", "rfc6582", "rfc6582-strict")
#: Our TCP defaults (docs/tcp.md) for keys the scenario leaves out; all equal
#: ns-3 3.44's defaults except the SYN timeout (ours: the initial RTO, 1 s;
#: ns-3 ConnTimeout 3 s), which is set to ours below.
TCP_DEFAULTS = {"timestamps": True, "window_scaling": True, "delayed_ack_timeout": "200ms",
                "sack": True, "recovery": "prr", "initial_cwnd": 10, "min_rto": "1s", "delayed_ack_count": 2,
                "rcv_buf": "131072B", "sack_impatient": False, "loss_ssthresh": "rfc5681"}
#: Keys of our [tcp] table that change nothing here: the timestamp tick
#: (ns-3's TSval clock is 1 ms, as ``ts_tick = "1ms"``), SARBE's switch, and
#: the congestion control (set from the ``tcp`` parameter).
#: Keys read elsewhere or only by our own congestion controls: the per-CC
#: tables of SARBE and of the original Westwood (ns-3 has neither; the
#: harness runs NewReno and Westwood+).
TCP_IGNORED = {"ts_tick", "sarbe", "westwood", "cc", "segment_size"}
#: ns-3's send buffer holds unacknowledged data, so it caps the window; ours
#: never blocks the application (docs/tcp.md, ``snd_buf``). 16 MB never limits
#: a 5 Mb/s x 100 ms path.
SND_BUF = 16_000_000


def _bytes(text) -> int:
    """Bytes, through the project's one unit parser (crates/base/src/units.rs);
    a size in packets has no meaning for a socket buffer."""
    from netreturn.testbed.scenario import parse_size  # noqa: PLC0415 (also run as a script)

    unit, n = parse_size(text)
    if unit != "bytes":
        raise ValueError(f"{SCENARIO}: tcp.rcv_buf must be in bytes for ns-3, not {text!r}")
    return int(n)


def _document(cc: str, loss: float, overrides: Optional[dict] = None) -> dict:
    """Our scenario file with its parameters substituted (the native loader)."""
    from .scenarios import load

    return load(SCENARIO, {"tcp": cc, "loss": loss, **(overrides or {})})["document"]


def run_lossy(cc: str, loss: float, seeds: list[int], *, overrides: Optional[dict] = None,
              trace: bool = False, renosack: str = "linux", westwood: str = "ns3", rto: str = "ns3",
              loss_exit: str = "ns3", timeout_s: Optional[float] = None) -> list[dict]:
    """Run the lossy link in ns-3 for each seed (one subprocess) and return
    one metrics dict per seed: ``goodput_mean_mbps``, ``tcp_data_loss_pct``,
    ``tcp_efficiency_pct``, ``fast_recoveries``, ``timeouts``,
    ``ssthresh_after_loss_mean`` (bytes, mean over the losses the sender
    reacted to), ``bytes_delivered``; with ``trace``, the cwnd/ssthresh
    trace and Westwood+'s estimate over time."""
    if cc not in CCS:
        raise ValueError(f"cc must be one of {', '.join(CCS)}, not {cc!r}")
    doc = _document(cc, loss, overrides)
    cmd = [sys.executable, os.path.abspath(__file__), "--document", json.dumps(doc), "--cc", cc,
           "--seeds", ",".join(str(int(s)) for s in seeds)]
    if trace:
        cmd.append("--trace")
    for name, value, allowed in (("renosack", renosack, RENOSACK), ("westwood", westwood, WESTWOOD),
                                 ("rto", rto, RTO), ("loss_exit", loss_exit, LOSS_EXIT)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        cmd += [f"--{name.replace('_', '-')}", value]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    took = time.perf_counter() - t0
    runs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or len(runs) != len(seeds):
        tail = "\n".join((p.stderr or "").splitlines()[-20:])
        raise RuntimeError(f"ns-3 lossy-link run failed (exit {p.returncode}): cc={cc} loss={loss}\n{tail}")
    for r in runs:
        r["process_wall_s"] = took / len(runs)
    return runs


def data_loss_pct(r: dict) -> float:
    """Loss of data segments, as our ``tcp_data_loss_pct``: packets the error
    model destroyed plus tail drops, over the data packets the sender put on
    its link (FlowMonitor's count; its own "lost" figure is not used: it
    counts retransmissions it cannot tell from their originals, 1544 lost
    for 234 destroyed and 1312 dropped in one run). Every drop here is a data
    packet: the ACK direction has no error model and never fills a buffer."""
    sent = r.get("data_packets_sent", 0)
    return (r.get("error_model_drops", 0) + r.get("queue_drops", 0)) / sent * 100 if sent else math.nan


def receiver_duplicate_pct(r: dict, segment: int) -> float:
    """Share of the data packets reaching the receiver that it already held
    (docs/validation.md, "ns-3's NewReno without SACK as RFC 6582"): the
    packets FlowMonitor saw arrive at D less the segments the sink delivered
    in order, over the packets that arrived (the handshake's two packets and
    segments still out of order at the end count as duplicates: < 0.01 %)."""
    n = r.get("data_packets_received", 0)
    return (n - r.get("bytes_delivered", 0) / segment) / n * 100 if n else math.nan


# --------------------------------------------------------------------------
# Everything below runs inside the subprocess.

def _tcp_settings(ns: Any, tcp: dict, cc: str) -> dict:
    """Set ns-3's TCP attribute defaults from our [tcp] table; returns what was set."""
    unknown = set(tcp) - set(TCP_DEFAULTS) - TCP_IGNORED
    if unknown:
        raise ValueError(f"[tcp] keys with no ns-3 translation here: {sorted(unknown)}")
    t = {**TCP_DEFAULTS, **tcp}
    if not t["sack_impatient"] and t["sack"]:
        # ns-3 3.44 restarts the timer only on the first partial ACK of any
        # recovery (TcpSocketBase::ProcessAck, NewAck(ack, m_isFirstPartialAck));
        # no attribute gives RFC 6298 (5.3)'s restart on every one.
        raise ValueError("tcp.sack_impatient = false has no ns-3 translation: ns-3 3.44 restarts the "
                         "retransmission timer only on a recovery's first partial ACK (set it true)")
    if t["sack"] and t["loss_ssthresh"] != "ns3":
        # ns-3 3.44 EnterRecovery and ReTxTimeout: ssthresh =
        # GetSsThresh(m_tcb, BytesInFlight()), RFC 6675's pipe; no attribute
        # gives SND.MAX - SND.UNA, nor Linux's cwnd and kept reduction.
        raise ValueError(f"tcp.loss_ssthresh = {t['loss_ssthresh']!r} has no ns-3 translation with SACK: ns-3 3.44 "
                         "sets ssthresh at a loss from BytesInFlight, RFC 6675's pipe (set it \"ns3\")")
    sd = ns.Config.SetDefault
    tid = lambda name: ns.TypeIdValue(ns.TypeId.LookupByName(name))  # noqa: E731
    sd("ns3::TcpL4Protocol::SocketType", tid(CCS[cc]))
    sd("ns3::TcpL4Protocol::RecoveryType", tid(RECOVERIES[t["recovery"]]))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(int(t["segment_size"])))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(_bytes(str(t["rcv_buf"]))))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(SND_BUF))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(int(t["initial_cwnd"])))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(int(t["delayed_ack_count"])))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Time(str(t["delayed_ack_timeout"]))))
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1.0)))  # ours: SYN timeout = initial RTO
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Time(str(t["min_rto"]))))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(t["sack"])))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(bool(t["timestamps"])))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(bool(t["window_scaling"])))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(True))
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))
    sd("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Seconds(1.0)))  # RFC 6298 (2.1), ours
    return t


def _simulate(ns: Any, cpp: Any, doc: dict, cc: str, seed: int, trace: bool,
              log: Optional[tuple[float, float, str]] = None, renosack: str = "linux",
              westwood: str = "ns3", rto: str = "ns3", loss_exit: str = "ns3") -> dict:
    topo = doc["topology"]
    if topo.get("kind") != "graph":
        raise ValueError("the ns-3 lossy link needs a graph topology")
    (tr,) = doc["traffic"]
    if tr.get("kind") != "tcp-bulk" or set(tr) - {"kind", "from", "to"}:
        raise ValueError(f"one tcp-bulk flow with no other keys expected, not {tr}")
    stop_s = ns.Time(doc["run"]["stop"]).GetSeconds()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(seed))

    if cc == "westwood+":
        # Before the stack is installed: TcpL4Protocol takes its SocketType
        # when it is made, so a default set later reached only the next run
        # of the same process (until 2026-11-27 every process's first seed
        # ran ns-3's TcpWestwoodPlus whatever --westwood asked).
        cpp.LossyRegister()
        tid = ns.TypeId.LookupByName(WESTWOOD[westwood])
        ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(tid))
    elif cc == "newreno":
        cpp.LossyRegister()
        tid = ns.TypeId.LookupByName(LOSS_EXIT[loss_exit])
        ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(tid))
    nodes = {name: ns.CreateObject[ns.Node]() for name in topo["nodes"]}
    stack = ns.InternetStackHelper()
    for n in nodes.values():
        stack.Install(n)
    addr = ns.Ipv4AddressHelper()
    tch = ns.TrafficControlHelper()
    ifaces = {}
    error_models = []
    devices = []  # (device, our interface name "A->B")
    for k, link in enumerate(topo["links"]):
        extra = set(link) - {"from", "to", "rate", "delay", "buffer", "loss", "loss_direction"}
        if extra:
            raise ValueError(f"link keys with no ns-3 translation here: {sorted(extra)}")
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(link["rate"]))
        h.SetChannelAttribute("Delay", ns.StringValue(link["delay"]))
        # Ours: the reverse direction gets the same buffer, DropTail; ns-3:
        # the device's own DropTail queue of that size, both directions.
        h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(link["buffer"]))
        pair = ns.NodeContainer()
        pair.Add(nodes[link["from"]])
        pair.Add(nodes[link["to"]])
        d = h.Install(pair)
        addr.SetBase(ns.Ipv4Address(f"10.{k + 1}.0.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces[(link["from"], link["to"])] = addr.Assign(d)
        devices += [(d.Get(0), f"{link['from']}->{link['to']}"), (d.Get(1), f"{link['to']}->{link['from']}")]
        tch.Uninstall(d)  # no FqCoDel: the device queue is the buffer, as ours
        loss = float(link.get("loss", 0.0))
        if loss > 0:
            # Random packet loss: RateErrorModel (packet unit) on the receiving
            # device of the lossy direction(s); "forward" loses data only.
            rx_devs = [d.Get(1)] + ([d.Get(0)] if link.get("loss_direction", "both") == "both" else [])
            for dev in rx_devs:
                em = ns.CreateObject[ns.RateErrorModel]()
                em.SetAttribute("ErrorRate", ns.DoubleValue(loss))
                em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
                # A fixed RNG stream per error model: the same seed gives the
                # same losses whether or not another run came before it.
                em.AssignStreams(len(error_models))
                dev.SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
                error_models.append(em)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    if int(cpp.CountQueueDiscs()) != 0:
        raise RuntimeError("a queue disc is installed: the lossy link has device queues only")

    dst_link = next(k for k in ifaces if k[1] == tr["to"])
    dst = ifaces[dst_link].GetAddress(1)
    cpp.Reset(1, 1 << 62)
    cpp.TraceFlows(1)
    cpp.LossyReset(cc == "westwood+", renosack in ("linux", "rfc6582", "rfc6582-strict"))
    cpp.LossyRfc6582(renosack in ("rfc6582", "rfc6582-strict"))
    # RFC 5681's growth on the ACK that ends CA_LOSS, for NewReno (its
    # TypeId, LOSS_EXIT) and the Westwood+ variants alike.
    cpp.LossyLossExit(loss_exit == "rfc5681")
    cpp.LossyRfc6582Strict(renosack == "rfc6582-strict")
    cpp.LossyKarnRto(rto == "rfc6298")
    if doc["tcp"].get("sack") and doc["tcp"].get("recovery") == "prr":
        # With SACK, ns-3-dev's repaired PRR (ns3cxx/prr.cc), as netreturn
        # validate uses on the EWT dumbbells (3.44's TcpPrrRecovery departs
        # from RFC 6937: docs/validation.md).
        cpp.SetPrrUpstream()
    port = 5000
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                               ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sapp = sink.Install(nodes[tr["to"]])
    sapp.Start(ns.Seconds(0.0))
    cpp.ConnectSink(0, sapp.Get(0))
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst, port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(int(doc["tcp"]["segment_size"])))
    bapp = bulk.Install(nodes[tr["from"]])
    bapp.Start(ns.Seconds(0.0))
    cpp.ScheduleHook(0, bapp.Get(0), 0.0)
    cpp.ScheduleLossyHook(bapp.Get(0), 0.0)
    src = ifaces[next(k for k in ifaces if k[0] == tr["from"])].GetAddress(0)
    for n in nodes.values():
        cpp.LossyCountTcDrops(n)
    for k, (dev, _) in enumerate(devices):
        cpp.LossyCountDrops(dev)
        cpp.LossyCountDevice(k, dev)
    if log is not None:
        # The packet log of dumbbell.cc, in netreturn-sim --log-flow's format.
        cpp.LogFlow(0, log[0], log[1], src, dst, nodes[tr["to"]])
        for dev, name in devices:
            cpp.LogDeviceDrops(dev, name)
    helper = ns.FlowMonitorHelper()
    monitor = helper.InstallAll()
    ns.Simulator.Stop(ns.Seconds(stop_s))
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0

    rx, tx, retx = int(cpp.Rx(0)), int(cpp.Tx(0)), int(cpp.Retx(0))
    out: dict[str, Any] = {
        "simulator": "ns-3 3.44 (PyPI ns3==3.44.post0, cppyy bindings)",
        "scenario": SCENARIO, "cc": cc, "seed": seed, "renosack": renosack, "westwood": westwood,
        "loss": float(next((lk.get("loss", 0.0) for lk in topo["links"] if lk.get("loss")), 0.0)),
        # Ours: bytes delivered in order x 8 / time active (the whole run).
        "goodput_mean_mbps": rx * 8 / stop_s / 1e6,
        "bytes_delivered": rx,
        "tcp_efficiency_pct": (tx - min(retx, tx)) / tx * 100 if tx else 100.0,
        "fast_recoveries": int(cpp.Recoveries(0)),
        # Every RTO expiry, as ours counts them (backoffs included); the
        # dumbbell's count, entries into CA_LOSS, is `rto_episodes`.
        "timeouts": int(cpp.LossyRtoExpiries()),
        "rto_episodes": int(cpp.Rtos(0)),
        # Recoveries left with a loss mark on the sent list (cleared by --renosack rfc6582).
        "stale_lost_cleared": int(cpp.LossyStaleLostCleared()),
        # Other entries into CA_OPEN that found a guessed mark (cleared by --renosack rfc6582-strict).
        "open_marks_cleared": int(cpp.LossyOpenMarksCleared()),
        "ssthresh_after_loss_mean": float(cpp.LossySsthMean()),
        "ssthresh_after_loss_n": int(cpp.LossySsthCount()),
        "bwe_mean_mbps": float(cpp.LossyBweMean(10.0)) * 8 / 1e6 if cc == "westwood+" else math.nan,
        "congestion_ops": str(cpp.LossyCcName()),
        "rto": rto, "rto_collapses": int(cpp.LossyRtoCollapses()),
        "loss_exit": loss_exit, "loss_exit_growths": int(cpp.LossyLossExitGrowths()),
        "error_model_drops": int(cpp.LossyPhyRxDrops()),
        "devices": {name: [int(cpp.LossyDeviceCount(k, w)) for w in range(4)] for k, (_, name) in enumerate(devices)},
        "queue_drops": int(cpp.LossyQueueDrops()),
        "queue_drop_times_s": [float(cpp.LossyTcDropT(k)) for k in range(min(int(cpp.LossyTcDropLen()), 200))],
        "sim_time_s": ns.Simulator.Now().GetSeconds(),
        "wall_s": wall,
        "events": int(ns.Simulator.GetEventCount()),
    }
    # Loss of data segments, as our tcp_data_loss_pct: FlowMonitor's
    # sender -> receiver flow; a packet unseen for 1 s counts as lost (RTT
    # ~0.1 s; the default 10 s would miss the losses of the last 10 s).
    monitor.CheckForLostPackets(ns.Seconds(1.0))
    classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](helper.GetClassifier())
    for fid, fs in monitor.GetFlowStats():
        tup = classifier.FindFlow(fid)
        if tup.protocol == 6 and str(tup.sourceAddress) == str(src):
            out["flowmon_lost_packets"] = int(fs.lostPackets)
            out["data_packets_sent"] = int(fs.txPackets)
            out["data_packets_received"] = int(fs.rxPackets)
            out["flowmon_drops_by_reason"] = {str(k): int(n) for k, n in enumerate(fs.packetsDropped) if int(n)}
    out["tcp_data_loss_pct"] = data_loss_pct(out)
    out["receiver_duplicate_pct"] = receiver_duplicate_pct(out, int(doc["tcp"]["segment_size"]))
    if trace:
        n = int(cpp.TraceLen(0))
        out["trace"] = {"time_s": [float(cpp.TraceT(0, k)) for k in range(n)],
                        "cwnd": [float(cpp.TraceCwnd(0, k)) for k in range(n)],
                        "ssthresh": [float(cpp.TraceSsthresh(0, k)) for k in range(n)]}
        m = int(cpp.LossyBweLen())
        out["bwe"] = {"time_s": [float(cpp.LossyBweT(k)) for k in range(m)],
                      "bytes_per_s": [float(cpp.LossyBweV(k)) for k in range(m)]}
    if log is not None:
        out["log_lines"] = int(cpp.LogWrite(log[2]))
    ns.Simulator.Destroy()
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="the SARBE paper's lossy link in ns-3 3.44 (reference runs)")
    ap.add_argument("--document", required=True, help="our scenario document, JSON (ns3lossy._document)")
    ap.add_argument("--cc", choices=list(CCS), required=True)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--renosack", choices=RENOSACK, default="linux")
    ap.add_argument("--westwood", choices=list(WESTWOOD), default="ns3")
    ap.add_argument("--rto", choices=list(RTO), default="ns3")
    ap.add_argument("--loss-exit", choices=list(LOSS_EXIT), default="ns3")
    ap.add_argument("--log-window", default=None, metavar="T0,T1",
                    help="with --log-out: packet-level log of the flow between T0 and T1 s")
    ap.add_argument("--log-out", default=None, metavar="PATH")
    a = ap.parse_args(argv)
    doc = json.loads(a.document)
    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415  (heavy: cling parses ns-3's headers)

    from netreturn.ns3ref import cxx_sources  # noqa: PLC0415

    for f in [*cxx_sources(), cxx_sources()[0].with_name("lossy.cc")]:
        if not cppyy.cppdef(f.read_text()):
            raise RuntimeError(f"cling could not compile {f}")
    cpp = cppyy.gbl.netreturn_ns3
    _tcp_settings(ns, doc["tcp"], a.cc)
    for s in (int(x) for x in a.seeds.split(",")):
        log = None
        if a.log_out:
            t0, t1 = (float(x) for x in (a.log_window or "0,1e18").split(","))
            log = (t0, t1, a.log_out)
        out = _simulate(ns, cpp, doc, a.cc, s, a.trace, log, a.renosack, a.westwood, a.rto, a.loss_exit)
        sys.stdout.write(json.dumps(out, allow_nan=True) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
