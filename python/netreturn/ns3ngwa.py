"""ns-3 3.44 reference runs of NGWA (the NGWA paper, docs/decisions.md §2.6, docs/ngwa.md): the paper's
own simulator, with its router rule, receiver rule and flow division built
in the harness (``ns3cxx/ngwa.cc``), for ``netreturn validate --summary``
(issue 25 item 4).

The topology, the TCP settings, the traffic and the NGWA mode are read from
our own scenario files (``scenarios/ngwa/rate.toml``, Table 2's runs, and
``scenarios/ngwa/window.toml``, Fig. 3's) through the one loader, so the two
simulators run one description; a key this module does not translate stops
the run. Settings where the harness and ours differ, and why, are in
docs/validation.md ("NGWA in ns-3").

Like :mod:`netreturn.ns3lossy`, ns-3 runs in a subprocess (this file as a
script, one JSON line per seed), every seed of one (scenario, row) in one
process so cling's start-up is paid once.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Optional

__all__ = ["MARKS", "MODES", "NEWRENO", "RFC793", "SCENARIOS", "METRICS", "run_ngwa", "run_ngwa_many", "main"]

#: The NGWA paper's Table 1 as docs/decisions.md §2.6 reads it: mode -> (CW, SE, FD).
MODES = {1: (True, False, False), 2: (True, True, False), 3: (False, False, False), 4: (False, True, False),
         5: (True, False, True), 6: (True, True, True), 7: (False, False, True), 8: (False, True, True)}
#: The NGWA scenarios the harness builds (``netreturn reproduce ngwa`` runs both).
SCENARIOS = ("ngwa/rate", "ngwa/window")
#: (metric, label) compared per cell: summary keys of ours, the same keys here.
METRICS = [
    ("lost_packets", "lost packets"),
    ("goodput_mean_mbps", "goodput (Mb/s)"),
    ("jain_goodput", "Jain (goodput)"),
    ("triple_dupacks", "triple dupACKs"),
    ("dupacks_past_threshold", "dupACKs past 3"),
    ("timeouts", "RTOs"),
]
#: The application's write, bytes (ours' tcp-rate ``packet`` default: ns-3 OnOff's PacketSize).
APP_PACKET = 512
#: The RFC 793 stand-in's variants (``--ns3-rfc793``; docs/validation.md, "NGWA in ns-3"): ``ns3``, ns-3's
#: TCP with cwnd and the fast-retransmit thresholds out of reach, which still enters fast recovery through
#: the loss marks its dupACK-guessed scoreboard sets (TcpTxBuffer::IsLost); ``strict``, those guesses
#: cleared after every ACK, so it retransmits only after a timeout and sends within the offered window;
#: ``strict-rfc6298``, strict and its RTO kept backed off until a new RTT sample (RFC 6298 section 5), where
#: ns-3 3.44 collapses it on any new ACK; ``strict-rfc6298-gbn``, that and the whole window resent at every
#: timeout, also one in CA_LOSS, where the stand-in resent one segment and waited an RTT (ns-3's cWnd of one
#: segment after ReTxTimeout; docs/validation.md, "NGWA modes 3 and 4: ...", branch ngwa9).
RFC793 = ("ns3", "strict", "strict-rfc6298", "strict-rfc6298-gbn")
#: The NewReno senders' variants (CW on; ``--ns3-newreno``; docs/validation.md, "ns-3's NewReno senders
#: repaired"): ``ns3``, ns-3 3.44's NewReno without SACK as built (its guessed Reno scoreboard reset when
#: recovery ends, loss marks left); ``rfc6582``, no loss or retransmission mark left on the sent list at
#: the end of recovery (RFC 6582 keeps no scoreboard; lossy.cc's ``--renosack rfc6582``);
#: ``rfc6582-rfc6298``, and its RTO kept backed off until a new RTT sample (RFC 6298 section 5);
#: ``inflation``, ns-3 as built but its send window in fast recovery RFC 6582's (section 3.2 steps 2-5:
#: cwnd = ssthresh + SMSS per duplicate ACK, deflated by a partial ACK, against FlightSize and the
#: receiver's window) where ns-3 lowers its pipe by each dupACK'd segment's own size
#: (docs/validation.md, "NewReno's recovery sends", branch ngwa8); ``inflation-flightsize``, and ssthresh
#: halving FlightSize (SND.MAX - SND.UNA, limited transmit's extra left out: RFC 5681 section 3.2 step 2) where
#: ns-3 halves its pipe; ``rfc6582-inflation-flightsize-rfc6298``, all four; ``...-cwndlimited``, and cwnd grown
#: only while it limits the sender (ours' rule, not an RFC 5681 one: a model difference, measured).
NEWRENO = ("ns3", "rfc6582", "rfc6582-rfc6298", "inflation", "flightsize", "inflation-flightsize",
           "rfc6582-inflation-flightsize-rfc6298", "rfc6582-inflation-flightsize-rfc6298-cwndlimited")
#: When a router reads Br and writes W_node (``--mark``; docs/validation.md, "NGWA mode 1: the moment a router
#: marks", branch ngwa8): ``qdisc``, as the queue disc lets the packet go to the device queue under it (as built:
#: about one transmission before the packet starts on the link, with the queue disc as it then was); ``tx``, as
#: the device starts sending it, every byte waiting behind it counted (ours: the start of transmission,
#: crates/sim world/forward.rs ``drain_staged``).
MARKS = ("qdisc", "tx")
#: Keys of a tcp-rate traffic entry this harness translates.
RATE_KEYS = {"kind", "from", "to", "count", "rate", "start", "stop", "packet"}


def _secs(text: Any) -> float:
    from netreturn import _native  # noqa: PLC0415

    return round(float(_native.parse_time(str(text))), 9)


def _bps(text: Any) -> int:
    from netreturn import _native  # noqa: PLC0415

    return int(_native.parse_rate(str(text)))


def _load(scenario: str, overrides: dict) -> dict:
    """Our scenario ``scenario`` with ``overrides``: its resolved links, its
    document, and the NGWA switches (None: NGWA off) and end-host settings."""
    from netreturn import scenarios  # noqa: PLC0415

    sets = {k: str(v) for k, v in overrides.items()}
    m = scenarios.model(scenario, sets)
    doc = scenarios.load(scenario, sets)["document"]
    ng = doc.get("ngwa", {})
    mode = int(ng.get("mode", 0))
    if mode not in (0, *MODES):
        raise ValueError(f"{scenario}: ngwa.mode = {mode}: allowed 0 (off) or 1-8 (the NGWA paper's Table 1)")
    extra = set(ng) - {"mode", "wmax", "alpha"}
    if extra:
        raise ValueError(f"{scenario}: [ngwa] keys with no ns-3 translation here: {sorted(extra)}")
    if doc["tcp"].get("window_scaling", True):
        raise ValueError(f"{scenario}: tcp.window_scaling must be false (the harness's receiver rule reads "
                         "unscaled window fields, as the NGWA paper's ns-3 TCP)")
    switches = MODES.get(mode)
    cc = ("newreno" if switches[0] else "none") if switches else doc["tcp"]["cc"]
    if cc not in ("newreno", "none"):
        raise ValueError(f"{scenario}: tcp.cc = {cc!r}: the NGWA harness runs newreno or none (RFC 793)")
    return {"scenario": scenario, "links": m["links"], "doc": doc, "mode": mode, "switches": switches, "cc": cc,
            "wmax": _parse_size(ng.get("wmax", "64kB")), "alpha": float(ng.get("alpha", 0.3))}


def _parse_size(text: Any) -> int:
    from netreturn.ns3lossy import _bytes  # noqa: PLC0415

    return _bytes(str(text))


def run_ngwa(scenario: str, overrides: dict, seeds: list[int], *, phase_ns: int = 0,
             timeout_s: Optional[float] = None, rfc793: str = "ns3", newreno: str = "ns3",
             log: Optional[str] = None, mark: str = "qdisc") -> list[dict]:
    """Run ``scenario`` (one of :data:`SCENARIOS`) with ``overrides`` (e.g.
    ``{"ngwa_mode": 6}``, ``{"ngwa_mode": 0, "tcp": "none"}``) in ns-3 for
    each seed (one subprocess) and return one metrics dict per seed, keyed
    as our summary (:data:`METRICS`). ``phase_ns > 0`` randomizes the
    phase as ``run.phase`` does in ours: both directions of each link grow
    by ``_native.phase_offset(seed, forward direction's name, phase_ns)``,
    the offsets ours draws. ``rfc793``: the RFC 793 stand-in, one of
    :data:`RFC793`. ``newreno``: the NewReno senders' variant, one of
    :data:`NEWRENO`. ``log``: a per-packet log of the senders per seed (a
    path; ``{seed}`` in it is replaced by the seed). ``mark``: when routers mark, one of :data:`MARKS`."""
    return run_ngwa_many(scenario, [overrides], seeds, phase_ns=phase_ns, timeout_s=timeout_s, rfc793=rfc793,
                         newreno=newreno, log=log, mark=mark)[0]


def run_ngwa_many(scenario: str, sets: list[dict], seeds: list[int], *, phase_ns: int = 0,
                  timeout_s: Optional[float] = None,
                  on_run: Optional[Callable[[int, dict], None]] = None, rfc793: str = "ns3",
                  newreno: str = "ns3", log: Optional[str] = None, mark: str = "qdisc") -> list[list[dict]]:
    """:func:`run_ngwa` for several parameter sets in one subprocess (cling
    compiles ns-3's headers and the harness once, 40-70 s): a list of runs
    per set, in order. ``on_run(i, run)`` is called as each run of set
    ``i`` arrives, so a caller can keep it before the others end."""
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {', '.join(SCENARIOS)}, not {scenario!r}")
    if rfc793 not in RFC793:
        raise ValueError(f"rfc793 (the RFC 793 stand-in) must be one of {', '.join(RFC793)}, not {rfc793!r}")
    if newreno not in NEWRENO:
        raise ValueError(f"newreno (the NewReno senders' variant) must be one of {', '.join(NEWRENO)}, "
                         f"not {newreno!r}")
    if mark not in MARKS:
        raise ValueError(f"mark (when routers mark) must be one of {', '.join(MARKS)}, not {mark!r}")
    if log is not None and "{seed}" not in log and len(seeds) * len(sets) > 1:
        raise ValueError(f"log {log!r}: several runs would write one file; put {{seed}} in the path")
    for ov in sets:
        _load(scenario, ov)  # a bad mode or key fails here, before ns-3 starts
    cmd = [sys.executable, os.path.abspath(__file__), "--scenario", scenario, "--sets", json.dumps(sets),
           "--seeds", ",".join(str(int(s)) for s in seeds), "--phase-ns", str(int(phase_ns)), "--rfc793", rfc793,
           "--newreno", newreno, "--mark", mark]
    if log is not None:
        cmd += ["--log", log]
    t0 = time.perf_counter()
    runs: list[dict] = []
    with tempfile.TemporaryFile("w+") as err, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err,
                                                                 text=True) as p:
        try:
            for line in p.stdout:
                if line.startswith("{"):
                    r = json.loads(line)
                    r["process_wall_s"] = time.perf_counter() - t0
                    runs.append(r)
                    if on_run is not None:
                        on_run((len(runs) - 1) // len(seeds), r)
            p.wait(timeout=timeout_s)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        err.seek(0)
        tail = "\n".join(err.read().splitlines()[-20:])
    if p.returncode != 0 or len(runs) != len(seeds) * len(sets):
        raise RuntimeError(f"ns-3 NGWA run failed (exit {p.returncode}): {scenario} {sets}\n{tail}")
    return [runs[i * len(seeds):(i + 1) * len(seeds)] for i in range(len(sets))]


# --------------------------------------------------------------------------
# Everything below runs inside the subprocess.


def _flows(doc: dict) -> list[dict]:
    """The tcp-rate flows of ``doc``, one per connection: from, to, rate,
    start (a number, or the uniform range), stop. ``count = n`` with ``from
    = "left"`` names pairs left0..left<n-1> -> right0..right<n-1>, as ours."""
    out = []
    for t in doc["traffic"]:
        if t.get("kind") != "tcp-rate":
            raise ValueError(f"traffic kind {t.get('kind')!r}: the NGWA harness runs tcp-rate flows only")
        extra = set(t) - RATE_KEYS
        if extra:
            raise ValueError(f"traffic keys with no ns-3 translation here: {sorted(extra)}")
        n = int(t.get("count", 0))
        pairs = [(f"{t['from']}{i}", f"{t['to']}{i}") for i in range(n)] if n else [(t["from"], t["to"])]
        for src, dst in pairs:
            out.append({"from": src, "to": dst, "rate": _bps(t["rate"]), "start": t.get("start", "0s"),
                        "stop": _secs(t["stop"]) if "stop" in t else None,
                        "packet": int(t.get("packet", APP_PACKET))})
    return out


def _simulate(ns: Any, cpp: Any, spec: dict, seed: int, phase_ns: int = 0, rfc793: str = "ns3",
              newreno: str = "ns3", log: Optional[str] = None, mark: str = "qdisc") -> dict:
    from netreturn import _native  # noqa: PLC0415
    from netreturn.ns3lossy import _tcp_settings  # noqa: PLC0415
    from netreturn.stats import jain, mean  # noqa: PLC0415

    doc, switches, cc = spec["doc"], spec["switches"], spec["cc"]
    flows = _flows(doc)
    se, fd = (switches[1], switches[2]) if switches else (False, False)
    option = 8 if switches else 0
    mss = int(doc["tcp"]["segment_size"]) - option
    # Registers the harness's TypeIds (NetreturnNoCc is named below) and clears its state.
    cpp.NgwaReset(len(flows), switches is not None, spec["alpha"] if se else -1.0, spec["wmax"], mss)
    cpp.NgwaRfc793Strict(cc == "none" and rfc793 != "ns3", rfc793.startswith("strict-rfc6298"),
                         rfc793 == "strict-rfc6298-gbn")
    parts = newreno.split("-") if cc == "newreno" else []
    cpp.NgwaNewReno("rfc6582" in parts, "rfc6298" in parts)
    cpp.NgwaLog(log.replace("{seed}", str(seed)) if log else "")
    tcp = dict(doc["tcp"])
    # The application's send buffer (the scenarios: ns-3's own SndBufSize,
    # 128 KiB): a write that does not fit is refused, in ns-3 as in ours.
    snd_buf = _parse_size(tcp.pop("snd_buf", "131072B"))
    if "recovery" not in tcp and not tcp.get("sack", True):
        tcp["recovery"] = "classic"  # ours without SACK: RFC 6582 NewReno (recovery.rs)
    _tcp_settings(ns, tcp, "newreno")
    cpp.NgwaNewRenoRfc("inflation" in parts, "flightsize" in parts, "cwndlimited" in parts)
    if {"inflation", "flightsize", "cwndlimited"} & set(parts):
        sd_type = ns.TypeIdValue(ns.TypeId.LookupByName("ns3::NetreturnNewRenoRfc6582"))
        ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", sd_type)
    sd = ns.Config.SetDefault
    # Ours shortens the segment by the option's 8 bytes when NGWA is on (TcpConfig::send_mss).
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(mss))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(snd_buf))
    if cc == "none":
        sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::NetreturnNoCc")))
        sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(65535))  # no window: ours sends the whole Wa at once
        # LimitedTransmit stays on: without it ns-3 3.44 asserts when a sender
        # in CA_DISORDER (dupACKs below ReTxThreshold) sends new data
        # (tcp-socket-base.cc:3532); with cwnd at 1 GB it allows nothing more.
    stop_s = _secs(doc["run"]["stop"])
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(seed))
    rng = random.Random(seed)

    links = {ln["name"]: ln for ln in spec["links"]}
    names = sorted({ln["from"] for ln in spec["links"]} | {ln["to"] for ln in spec["links"]})
    nodes = {n: ns.CreateObject[ns.Node]() for n in names}
    degree = {n: sum(ln["from"] == n for ln in spec["links"]) for n in names}
    stack = ns.InternetStackHelper()
    for n in nodes.values():
        stack.Install(n)
    addr = ns.Ipv4AddressHelper()
    receivers = {f["to"] for f in flows}
    ifaces, done = {}, set()
    qdiscs, qdisc_links = [], []
    for ln in spec["links"]:
        a, b = ln["from"], ln["to"]
        if (b, a) in done:
            continue
        done.add((a, b))
        back = links[f"{b}->{a}"]
        if (back["rate_bps"], back["delay_ns"]) != (ln["rate_bps"], ln["delay_ns"]):
            raise ValueError(f"link {a}-{b}: the two directions differ in rate or delay; ns-3's point-to-point "
                             "channel has one of each")
        for d in (ln, back):
            if d["queue"] != "droptail" or d["loss"] or d["stage"] or d["controller"]:
                raise ValueError(f"link {d['name']}: the NGWA harness builds DropTail links without loss, "
                                 "stages or controllers")
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(f"{ln['rate_bps']}bps"))
        # run.phase: the forward direction's name draws the offset of both (resolve.rs, apply_phase).
        phase = _native.phase_offset(int(seed), ln["name"], int(phase_ns)) if phase_ns else 0
        h.SetChannelAttribute("Delay", ns.StringValue(f"{ln['delay_ns'] + phase}ns"))
        pair = ns.NodeContainer()
        pair.Add(nodes[a])
        pair.Add(nodes[b])
        devs = h.Install(pair)
        addr.SetBase(ns.Ipv4Address(f"10.{len(ifaces) + 1}.0.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces[(a, b)] = addr.Assign(devs)
        for j, d in enumerate((ln, back)):
            dev, node = devs.Get(j), d["from"]
            kind, n = d["limit"]
            size = f"{n}B" if kind == "bytes" else f"{n}p"
            tch = ns.TrafficControlHelper()
            tch.Uninstall(dev)  # no FqCoDel
            if degree[node] > 1 or node in receivers:
                # A router's egress (marks with NGWA on) or a receiver's (rewrites
                # its ACKs): a queue disc of the link's buffer, the device queue under it 1 packet.
                router = degree[node] > 1
                t = ns.TrafficControlHelper()
                t.SetRootQueueDisc("ns3::NetreturnNgwaQueueDisc" if router else "ns3::NetreturnNgwaReceiverQueueDisc")
                qd = t.Install(dev).Get(0)
                qd.SetMaxSize(ns.QueueSize(size))
                if router:
                    cpp.NgwaSetupQueue(qd, switches is not None, fd, int(d["buffer_bytes"]))
                    if mark == "tx":
                        cpp.NgwaMarkAtTx(qd, dev)
                cpp.SetDeviceQueue(dev, "1p")
                qdiscs.append(qd)
                qdisc_links.append(d["name"])
            else:
                cpp.SetDeviceQueue(dev, size)
                cpp.NgwaCountDrops(dev)
    for n in nodes.values():
        cpp.NgwaCountTcDrops(n)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    def address(node: str) -> Any:
        (a, b), ic = next(((k, v) for k, v in ifaces.items() if node in k))
        return ic.GetAddress(0 if a == node else 1)

    port = 5000
    starts, stops = [], []
    for i, f in enumerate(flows):
        st = f["start"]
        start = rng.uniform(*(_secs(x) for x in st["uniform"])) if isinstance(st, dict) else _secs(st)
        stop = f["stop"] if f["stop"] is not None else stop_s
        starts.append(start)
        stops.append(min(stop, stop_s))
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port + i).ConvertTo())
        sapp = sink.Install(nodes[f["to"]])
        sapp.Start(ns.Seconds(0.0))
        cpp.NgwaConnectSink(i, sapp.Get(0))
        onoff = ns.OnOffHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(address(f["to"]), port + i).ConvertTo())
        onoff.SetAttribute("OnTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=1e9]"))
        onoff.SetAttribute("OffTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=0]"))
        onoff.SetAttribute("DataRate", ns.StringValue(f"{f['rate']}bps"))
        onoff.SetAttribute("PacketSize", ns.UintegerValue(f["packet"]))
        app = onoff.Install(nodes[f["from"]])
        app.Start(ns.Seconds(start))
        if f["stop"] is not None:
            app.Stop(ns.Seconds(f["stop"]))
        cpp.NgwaScheduleHook(i, app.Get(0), start, address(f["from"]).Get(), cc == "none", cc == "newreno")
        cpp.NgwaWatchNodes(nodes[f["from"]], nodes[f["to"]])
    bottleneck = next((q for q, ln in zip(qdiscs, qdisc_links) if ln == "R1->R2"), None)
    ns.Simulator.Stop(ns.Seconds(stop_s))
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    end = ns.Simulator.Now().GetSeconds()
    cpp.NgwaLog("")

    per = []
    for i in range(len(flows)):
        v = [int(cpp.NgwaFlowValue(i, w)) for w in range(11)]
        active = min(stops[i], end) - starts[i]
        per.append({"start_s": starts[i], "bytes_delivered": v[0],
                    # Ours (metrics.rs): bytes delivered x 8 over the time from start to stop (or the end).
                    "goodput_mbps": v[0] * 8 / active / 1e6 if active > 0 else 0.0,
                    "triple_dupacks": v[1], "dupacks_past_threshold": v[2], "triple_dupacks_ns3": v[3],
                    "dupacks_past_threshold_ns3": v[4], "timeouts": v[5], "fast_recoveries": v[6],
                    "retransmits": v[7], "retransmits_before_timeout": v[8],
                    "rto_collapses_before_sample": v[9], "recovery_exits_with_loss_marks": v[10]})
    goodputs = [p["goodput_mbps"] for p in per]
    out: dict[str, Any] = {
        "simulator": "ns-3 3.44 (PyPI ns3==3.44.post0, cppyy bindings) with ns3cxx/ngwa.cc",
        "scenario": spec["scenario"], "mode": spec["mode"], "cc": cc, "seed": seed, "phase_ns": phase_ns,
        "rfc793": rfc793 if cc == "none" else None,
        "newreno": newreno if cc == "newreno" else None,
        "mark": mark,
        "segment": mss,
        "lost_packets": int(cpp.NgwaCount(3)),
        "goodput_mean_mbps": mean(goodputs),
        "jain_goodput": jain(goodputs),
        **{k: sum(p[k] for p in per) for k in ("triple_dupacks", "dupacks_past_threshold", "triple_dupacks_ns3",
                                              "dupacks_past_threshold_ns3", "timeouts", "fast_recoveries",
                                              "retransmits", "retransmits_before_timeout",
                                              "rto_collapses_before_sample", "recovery_exits_with_loss_marks")},
        # RFC 793 stand-in: timeouts while already in CA_LOSS, where as built it resent one segment
        # (--rfc793 strict-rfc6298-gbn resends the window there too).
        "timeouts_in_loss_state": int(cpp.NgwaLossStateRtoCount()),
        # Recoveries left with a loss mark on the sent list, cleared by --newreno rfc6582 (lossy.cc).
        "stale_lost_cleared": int(cpp.LossyStaleLostCleared()),
        # --newreno inflation: ACKs of a recovery whose window RFC 6582's rule set; of them, where the
        # receiver's window was below the inflated cwnd.
        "inflation_acks": int(cpp.NgwaInflationCount(0)), "inflation_rwnd_bound": int(cpp.NgwaInflationCount(1)),
        # --newreno ...-flightsize: losses whose ssthresh was set from FlightSize.
        "flightsize_ssthresh": int(cpp.NgwaInflationCount(2)),
        "ngwa_inserted": int(cpp.NgwaCount(0)), "ngwa_lowered": int(cpp.NgwaCount(1)),
        "ngwa_kept": int(cpp.NgwaCount(2)), "acks_rewritten": int(cpp.NgwaCount(4)),
        "ngwa_values_received": int(cpp.NgwaCount(5)),
        "queue_discs": len(qdiscs),
        # R1's bottleneck queue disc, bytes (time mean and standard deviation; ours' queue_mean_bytes, queue_std_bytes).
        "bottleneck_queue_mean_bytes": float(cpp.NgwaQueueStat(bottleneck, 0)) if bottleneck is not None else None,
        "bottleneck_queue_std_bytes": float(cpp.NgwaQueueStat(bottleneck, 1)) if bottleneck is not None else None,
        "sim_time_s": end, "wall_s": wall, "events": int(ns.Simulator.GetEventCount()),
        "per_flow": per,
    }
    ns.Simulator.Destroy()
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="NGWA's scenarios in ns-3 3.44 (reference runs)")
    ap.add_argument("--scenario", choices=list(SCENARIOS), required=True)
    ap.add_argument("--sets", default="{}",
                    help="scenario parameters, JSON (e.g. {\"ngwa_mode\": 6}), or a list of them run one after another")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--phase-ns", type=int, default=0, metavar="NS",
                    help="phase randomization as run.phase in ours (netreturn._native.phase_offset)")
    ap.add_argument("--rfc793", choices=list(RFC793), default="ns3",
                    help="the RFC 793 stand-in (CW off): ns3 = ns-3's TCP with cwnd and fast retransmit out of "
                         "reach, its dupACK-guessed loss marks left in; strict = those cleared, so it "
                         "retransmits only after a timeout; strict-rfc6298 = strict, and a backed-off RTO kept "
                         "until a new RTT sample (RFC 6298 section 5) where ns-3 collapses it on any new ACK; "
                         "strict-rfc6298-gbn = that, and the whole window resent at every timeout (also in "
                         "CA_LOSS, where the others resend one segment and wait an RTT)")
    ap.add_argument("--newreno", choices=list(NEWRENO), default="ns3",
                    help="the NewReno senders (CW on, no SACK): ns3 = ns-3's as built; rfc6582 = no loss marks "
                         "left at the end of recovery (RFC 6582 keeps no scoreboard); rfc6582-rfc6298 = that, and "
                         "a backed-off RTO kept until a new RTT sample (RFC 6298 section 5); inflation = the send "
                         "window in recovery RFC 6582's (SMSS per dupACK against FlightSize) instead of ns-3's "
                         "pipe; inflation-flightsize = and ssthresh from FlightSize (RFC 5681 eq. 4), not the pipe; "
                         "rfc6582-inflation-flightsize-rfc6298 = all four; ...-cwndlimited = and cwnd grown only "
                         "while it limits the sender (ours' rule)")
    ap.add_argument("--mark", choices=list(MARKS), default="qdisc",
                    help="when routers mark: qdisc = as the queue disc lets the packet go to the device queue (as "
                         "built); tx = as the device starts sending it, every byte waiting behind it counted (ours)")
    ap.add_argument("--log", default=None, metavar="PATH",
                    help="a per-packet log of the senders ({seed} in PATH is replaced by the seed)")
    a = ap.parse_args(argv)
    sets = json.loads(a.sets)
    specs = [_load(a.scenario, ov) for ov in (sets if isinstance(sets, list) else [sets])]
    import cppyy  # noqa: PLC0415
    from ns import ns  # noqa: PLC0415  (heavy: cling parses ns-3's headers)

    from netreturn.ns3ref import cxx_sources  # noqa: PLC0415

    here = cxx_sources()[0]
    for f in [*cxx_sources(), here.with_name("lossy.cc"), here.with_name("ngwa.cc")]:
        if not cppyy.cppdef(f.read_text()):
            raise RuntimeError(f"cling could not compile {f}")
    cpp = cppyy.gbl.netreturn_ns3
    for spec in specs:
        for s in (int(x) for x in a.seeds.split(",")):
            out = _simulate(ns, cpp, spec, s, a.phase_ns, a.rfc793, a.newreno, a.log, a.mark)
            sys.stdout.write(json.dumps(out, allow_nan=True) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
