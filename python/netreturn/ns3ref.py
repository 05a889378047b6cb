"""ns-3 3.44 reference run of EWT scenario 2 (SPEC.md 5.1), for validation.

This module builds the EWT paper's scenario-2 dumbbell in ns-3 3.44 (the PyPI
package ``ns3==3.44.post0``, cppyy bindings) and reports the same headline
metrics as our simulator, so the two can be compared side by side and timed.

* ``run_ns3(...)`` runs ns-3 in a **subprocess** (this file executed as a
  script, ``python ns3ref.py ... --json``; ``python -m netreturn.ns3ref`` is
  the same once the package is installed), so a crash in ns-3 or cppyy, or a
  hang, cannot take the caller down. Nothing from ns-3 is imported when this
  module is imported.
* ``available()`` says whether the ``ns3`` package is installed (without
  importing it: importing it parses ns-3's headers with cling, ~10-15 s).

The ns-3 configuration (every setting and every trap) is documented in
docs/validation.md. In short: CUBIC (ns-3 defaults: PRR, SACK, timestamps,
window scaling, IW 10, delayed ACK 2 / 200 ms, min RTO 1 s), segment 1458 B,
socket buffers 1 MB, point-to-point MTU 1600 (a 1458-byte segment with
timestamps is a 1510-byte IP packet), no queue disc anywhere except R1's
bottleneck egress (the device's own 100-packet DropTail queue is the queue on
every other interface, FqCoDel removed), and on R1's bottleneck egress a
FifoQueueDisc of 97 000 B (DropTail) or a RedQueueDisc (byte mode, MinTh =
B/12, MaxTh = B/4, QW 0.002, LInterm 50, gentle off, wait off,
MeanPktSize 1510 so ns-3's byte-mode scaling is 1 for full TCP segments) with
the device queue under it cut to 1 packet.

Trace sinks (PacketSink Rx, TCP Tx/Retransmission, bottleneck PhyTxEnd) and
the stop test are C++ compiled by cling at run time (``cppyy.cppdef``): a
Python callback per packet would dominate the run time.

Diagnostics (script options): ``--starts`` (given start times), ``--trace K``
(cwnd/ssthresh of the first K flows), ``--log-flow F --log-out PATH`` (a
packet-level log of flow F in the format of ``netreturn-sim --log-flow``),
and ``--prr`` (ns-3's PRR as shipped, or repaired: ns-3 3.44's
``TcpPrrRecovery`` double-counts SACKed bytes and overflows a uint32 product,
see ``NetreturnPrr`` below and docs/validation.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from typing import Any, Optional

__all__ = ["available", "run_ns3", "main"]

# Scenario 2 constants (scenarios/ewt/scenario2.toml).
ACCESS_RATE = "100Mbps"
ACCESS_DELAY = "1ms"  # 2 ms RTT
BOTTLENECK_RATE_BPS = 45_000_000
BOTTLENECK_DELAY = "40ms"  # 80 ms RTT
RECEIVER_RATE = "100Mbps"
RECEIVER_DELAY = "1ms"
BUFFER_BYTES = 97_000
SEGMENT = 1458
SOCKET_BUF = 1_000_000
UDP_RATE = "13.35Mbps"
UDP_PAYLOAD = 1400
MTU = 1600
# IP packet of a full data segment: 20 (IP) + 20 (TCP) + 12 (timestamps) + 1458.
FULL_PACKET = 20 + 20 + 12 + SEGMENT
PPP_HEADER = 2
# --prr: ns-3's PRR as shipped, or NetreturnPrr with switches (64-bit
# product, one SMSS added per dupACK, one DoRecovery per ACK, PRR-SSRB,
# RecoverFS = FlightSize).
PRR_MODES = {
    "wide": (True, True, False, False, False, False),           # only the uint32 overflow fixed
    "wide-nobonus": (True, False, False, False, False, False),  # and no SMSS added per dupACK (still CRB, 2 calls, pipe)
    "rfc6937": (True, False, True, True, True, False),          # RFC 6937 PRR-SSRB, DeliveredData and RecoverFS as there
    # rfc6937 and no CUBIC increase on the ACK that ends recovery (ns-3 passes
    # it the whole cumulative ACK: cwnd = ssthresh + 1 MSS at every exit).
    "rfc6937-noexit": (True, False, True, True, True, True),
}


def available() -> bool:
    """True when the ``ns3`` PyPI package is installed (not imported here)."""
    try:
        return importlib.util.find_spec("ns3") is not None
    except (ImportError, ValueError):
        return False


def run_ns3(
    flows: int,
    queue: str = "droptail",
    seed: int = 1,
    file_bytes: int = 5_000_000,
    udp: bool = True,
    stop_s: float = 600.0,
    *,
    flowmon: bool = True,
    timeout_s: Optional[float] = None,
    prr: str = "ns3",
) -> dict:
    """Run EWT scenario 2 in ns-3 3.44 in a subprocess and return its metrics.

    Keys follow our summary metric names: ``tcp_packet_loss_pct``, ``udp_loss_pct``,
    ``goodput_mean_mbps``, ``fct_mean_s``, ``fct_max_s``, ``jain_goodput``,
    ``tcp_efficiency_pct``, ``utilization``, ``flows_completed``,
    ``sim_time_s``, ``wall_s`` (wall time of ``Simulator::Run()`` only),
    ``events`` (``Simulator::GetEventCount()``), plus ``setup_s`` and
    ``process_wall_s`` and per-flow lists. ``flowmon=False`` drops the
    FlowMonitor (no loss ratios then) to time ns-3 alone. ``prr`` is ns-3's
    PRR as shipped (``"ns3"``) or repaired (a key of ``PRR_MODES``, e.g.
    ``"rfc6937"``; docs/validation.md).
    Raises ``RuntimeError`` if the subprocess fails.
    """
    if queue not in ("droptail", "red"):
        raise ValueError(f"queue must be 'droptail' or 'red', not {queue!r}")
    if prr != "ns3" and prr not in PRR_MODES:
        raise ValueError(f"prr must be 'ns3' or one of {', '.join(PRR_MODES)}, not {prr!r}")
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--flows", str(int(flows)),
        "--queue", queue,
        "--seed", str(int(seed)),
        "--file-bytes", str(int(file_bytes)),
        "--stop", repr(float(stop_s)),
        "--json",
    ]
    if not udp:
        cmd.append("--no-udp")
    if not flowmon:
        cmd.append("--no-flowmon")
    if prr != "ns3":
        cmd += ["--prr", prr]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    took = time.perf_counter() - t0
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = "\n".join((p.stderr or "").splitlines()[-20:])
        raise RuntimeError(f"ns-3 run failed (exit {p.returncode}): {' '.join(cmd)}\n{tail}")
    out = json.loads(lines[-1])
    out["process_wall_s"] = took
    return out


# --------------------------------------------------------------------------
# Everything below runs inside the subprocess.

_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/ppp-header.h"
#include "ns3/tcp-option-sack.h"
#include <fstream>
#include <iomanip>
#include <sstream>
#include <vector>

namespace netreturn_ns3 {
using namespace ns3;

struct State {
    std::vector<uint64_t> rx, tx, retx, recoveries, rtos;
    double qLast = 0, qInt = 0;
    uint32_t qMax = 0, qCur = 0;
    std::vector<double> done;
    uint64_t fileBytes = 0;
    uint32_t remaining = 0;
    uint64_t bnBytes = 0, bnPackets = 0;
    uint32_t bnMax = 0;
    double lastDone = -1;
    // Window traces (time s, cwnd B, ssthresh B) of the first `traced` flows.
    uint32_t traced = 0;
    std::vector<std::vector<double>> cwT, cwV, ssV;
};
static State S;

void Reset(uint32_t n, uint64_t fileBytes) {
    S = State();
    S.rx.assign(n, 0); S.tx.assign(n, 0); S.retx.assign(n, 0);
    S.recoveries.assign(n, 0); S.rtos.assign(n, 0);
    S.done.assign(n, -1.0);
    S.fileBytes = fileBytes;
    S.remaining = n;
}

void TraceFlows(uint32_t k) {
    S.traced = k;
    S.cwT.assign(k, {}); S.cwV.assign(k, {}); S.ssV.assign(k, {});
}

static uint32_t lastSs(uint32_t i) { return S.ssV[i].empty() ? 0 : (uint32_t) S.ssV[i].back(); }
static void Cwnd(uint32_t i, uint32_t, uint32_t v) {
    S.cwT[i].push_back(Simulator::Now().GetSeconds()); S.cwV[i].push_back(v); S.ssV[i].push_back(lastSs(i));
}
static void Ssth(uint32_t i, uint32_t, uint32_t v) {
    double c = S.cwV[i].empty() ? 0 : S.cwV[i].back();
    S.cwT[i].push_back(Simulator::Now().GetSeconds()); S.cwV[i].push_back(c); S.ssV[i].push_back(v);
}
uint32_t TraceLen(uint32_t i) { return S.cwT[i].size(); }
double TraceT(uint32_t i, uint32_t k) { return S.cwT[i][k]; }
double TraceCwnd(uint32_t i, uint32_t k) { return S.cwV[i][k]; }
double TraceSsthresh(uint32_t i, uint32_t k) { return S.ssV[i][k]; }

static void SinkRx(uint32_t i, Ptr<const Packet> p, const Address&) {
    S.rx[i] += p->GetSize();
    if (S.done[i] < 0 && S.rx[i] >= S.fileBytes) {
        S.done[i] = Simulator::Now().GetSeconds();
        S.lastDone = S.done[i];
        if (--S.remaining == 0) {
            Simulator::Stop();  // every file delivered: end of the run
        }
    }
}

static void SockTx(uint32_t i, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>) {
    S.tx[i] += p->GetSize();
}

static void SockRetx(uint32_t i, Ptr<const Packet> p, const TcpHeader&, const Address&,
                     const Address&, Ptr<const TcpSocketBase>) {
    S.retx[i] += p->GetSize();
}

// Entries into fast recovery (3 dupACKs or SACK loss detection) and into
// CA_LOSS (retransmission timeout).
static void SockCong(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
    if (now == TcpSocketState::CA_RECOVERY) S.recoveries[i]++;
    if (now == TcpSocketState::CA_LOSS) S.rtos[i]++;
}

// Bottleneck queue disc backlog (bytes), integrated over time.
static std::vector<double> qBins;  // time integral of the backlog per 1-s bin
static void QBin(double t0, double t1, double v) {
    while (t0 < t1) {
        size_t b = (size_t)t0;
        double e = std::min(t1, (double)(b + 1));
        if (qBins.size() <= b) qBins.resize(b + 1, 0.0);
        qBins[b] += v * (e - t0);
        t0 = e;
    }
}
double QueueBin(uint32_t b) { return b < qBins.size() ? qBins[b] : 0.0; }
uint32_t QueueBins() { return qBins.size(); }
static void QBytes(uint32_t oldV, uint32_t newV) {
    double t = Simulator::Now().GetSeconds();
    QBin(S.qLast, t, oldV);
    S.qInt += oldV * (t - S.qLast);
    S.qLast = t;
    S.qCur = newV;
    if (newV > S.qMax) S.qMax = newV;
}

void ConnectQueueDisc(Ptr<QueueDisc> q) {
    q->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&QBytes));
}

static void BnTx(Ptr<const Packet> p) {
    S.bnBytes += p->GetSize();
    S.bnPackets += 1;
    if (p->GetSize() > S.bnMax) S.bnMax = p->GetSize();
}

// Root queue discs installed over all devices of all nodes (expect 1: R1's
// bottleneck egress), and the largest packet seen on the bottleneck.
uint32_t CountQueueDiscs() {
    uint32_t n = 0;
    for (uint32_t i = 0; i < NodeList::GetNNodes(); i++) {
        Ptr<Node> node = NodeList::GetNode(i);
        Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < node->GetNDevices(); d++) {
            if (tc && tc->GetRootQueueDiscOnDevice(node->GetDevice(d))) n++;
        }
    }
    return n;
}
uint32_t BnMax() { return S.bnMax; }

void ConnectSink(uint32_t i, Ptr<Application> app) {
    app->TraceConnectWithoutContext("Rx", MakeBoundCallback(&SinkRx, i));
}


// ---- Packet log of one TCP flow (--log-flow): the lines of our simulator's
// `netreturn-sim --log-flow` (crates/sim/src/world.rs, PacketLog), so the two
// can be diffed: segments the sender sends, drops on any queue, data arriving
// at the receiver, ACKs arriving at the sender, RTO expiries, and the
// sender's state after each event. Sequence numbers are ns-3's relative ones
// (ISN 0, data byte k is k + 1), equal to our offsets.
struct PacketLog {
    int32_t flow = -1;
    double from = 0, to = 1e18;
    Ipv4Address sender, receiver;
    std::vector<std::string> lines;
    uint32_t highTx = 0;  // one past the highest data byte sent so far
    uint32_t cwnd = 0, ssth = 0, nxt = 0, max = 0, rwnd = 0;
    int cong = 0;
    Ptr<TcpSocketBase> sock;
};
static PacketLog L;

static bool LogOn() {
    double t = Simulator::Now().GetSeconds();
    return L.flow >= 0 && t >= L.from && t <= L.to;
}
static void LogLine(const std::string& s) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(6) << Simulator::Now().GetSeconds() << " " << s;
    L.lines.push_back(o.str());
}
static std::string SackStr(const TcpHeader& h) {
    std::ostringstream o;
    o << "[";
    Ptr<const TcpOption> opt = h.GetOption(TcpOption::SACK);
    if (opt) {
        Ptr<const TcpOptionSack> s = DynamicCast<const TcpOptionSack>(opt);
        bool first = true;
        for (auto& b : s->GetSackList()) {
            o << (first ? "" : ",") << b.first.GetValue() << "-" << b.second.GetValue();
            first = false;
        }
    }
    o << "]";
    return o.str();
}
// A TCP segment of the logged flow as a field, like our `describe_segment`.
static std::string SegStr(bool fromSender, const TcpHeader& h, uint32_t len, bool retx) {
    std::ostringstream o;
    if (fromSender) {
        o << "data " << h.GetSequenceNumber().GetValue() << "+" << len << (retx ? " R" : "");
        if (h.GetFlags() & TcpHeader::SYN) o << " SYN";
        if (h.GetFlags() & TcpHeader::FIN) o << " FIN";
    } else {
        o << "ack " << h.GetAckNumber().GetValue() << " win=" << h.GetWindowSize() << " sack=" << SackStr(h);
    }
    return o.str();
}
static const char* CongName(int c) {
    static const char* n[] = {"open", "disorder", "cwr", "recovery", "loss"};
    return (c >= 0 && c < 5) ? n[c] : "?";
}
static void LogState() {
    if (!LogOn() || !L.sock) return;
    Ptr<TcpTxBuffer> b = L.sock->GetTxBuffer();
    std::ostringstream o;
    o << "state una=" << b->HeadSequence().GetValue() << " nxt=" << L.nxt << " max=" << L.max
      << " cwnd=" << L.cwnd << " ssth=" << L.ssth << " pipe=" << b->BytesInFlight()
      << " cong=" << CongName(L.cong) << " sacked=" << b->GetSacked() << " lost=" << b->GetLost()
      << " retrans=" << b->GetRetransmitsCount() << " rwnd=" << L.rwnd;
    LogLine(o.str());
}
static void LogTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    uint32_t len = p->GetSize();
    uint32_t end = h.GetSequenceNumber().GetValue() + len;
    bool retx = len > 0 && h.GetSequenceNumber().GetValue() < L.highTx;
    if (end > L.highTx) L.highTx = end;
    if (LogOn()) LogLine("send " + SegStr(true, h, len, retx));
}
static void LogRx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (!LogOn()) return;
    LogLine("recv " + SegStr(false, h, p->GetSize(), false));
    Simulator::ScheduleNow(&LogState);  // after the ACK is processed and data sent
}
static void LogCwnd(uint32_t, uint32_t v) { L.cwnd = v; }
static void LogSsth(uint32_t, uint32_t v) { L.ssth = v; }
static void LogRwnd(uint32_t, uint32_t v) { L.rwnd = v; }
static void LogNxt(SequenceNumber32, SequenceNumber32 v) { L.nxt = v.GetValue(); }
static void LogMax(SequenceNumber32, SequenceNumber32 v) { L.max = v.GetValue(); }
static void LogCong(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now) {
    if (LogOn() && now == TcpSocketState::CA_LOSS && L.cong != TcpSocketState::CA_LOSS) {
        LogLine("timer side 0");
        Simulator::ScheduleNow(&LogState);
    }
    L.cong = now;
}
// An IPv4 packet of the logged flow (either direction), by its header.
static void LogIp(const char* what, const Ipv4Header& ip, Ptr<Packet> rest, const std::string& where) {
    if (ip.GetProtocol() != 6) return;
    bool fromSender = ip.GetSource() == L.sender && ip.GetDestination() == L.receiver;
    bool toSender = ip.GetSource() == L.receiver && ip.GetDestination() == L.sender;
    if (!fromSender && !toSender) return;
    TcpHeader h;
    rest->RemoveHeader(h);
    uint32_t len = rest->GetSize();
    std::string line = std::string(what) + " " + SegStr(fromSender, h, len, false);
    if (!where.empty()) line += " at " + where;
    LogLine(line);
}
static void LogQdiscDrop(std::string where, Ptr<const QueueDiscItem> item) {
    if (!LogOn()) return;
    Ptr<const Ipv4QueueDiscItem> ipi = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ipi) return;
    LogIp("drop", ipi->GetHeader(), ipi->GetPacket()->Copy(), where);
}
static void LogDevDrop(std::string where, Ptr<const Packet> p) {
    if (!LogOn()) return;
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    c->RemoveHeader(ppp);
    if (ppp.GetProtocol() != 0x0021) return;  // IPv4
    Ipv4Header ip;
    c->RemoveHeader(ip);
    LogIp("drop", ip, c, where);
}
static void LogIpRx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t) {
    if (!LogOn()) return;
    Ptr<Packet> c = p->Copy();
    Ipv4Header ip;
    c->RemoveHeader(ip);
    if (ip.GetDestination() != L.receiver) return;
    LogIp("recv", ip, c, "");
}

void LogFlow(int32_t flow, double from, double to, Ipv4Address sender, Ipv4Address receiver, Ptr<Node> rnode) {
    L = PacketLog();
    L.flow = flow; L.from = from; L.to = to; L.sender = sender; L.receiver = receiver;
    rnode->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("Rx", MakeCallback(&LogIpRx));
}
// Drops anywhere: every point-to-point device queue, and a queue disc.
void LogDeviceDrops(Ptr<NetDevice> dev, std::string where) {
    Ptr<PointToPointNetDevice> p = DynamicCast<PointToPointNetDevice>(dev);
    p->GetQueue()->TraceConnectWithoutContext("Drop", MakeBoundCallback(&LogDevDrop, where));
}
void LogQueueDiscDrops(Ptr<QueueDisc> q, std::string where) {
    q->TraceConnectWithoutContext("Drop", MakeBoundCallback(&LogQdiscDrop, where));
}
static void LogHookSocket(Ptr<Socket> s) {
    L.sock = DynamicCast<TcpSocketBase>(s);
    s->TraceConnectWithoutContext("Tx", MakeCallback(&LogTx));
    s->TraceConnectWithoutContext("Rx", MakeCallback(&LogRx));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&LogCwnd));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&LogSsth));
    s->TraceConnectWithoutContext("RWND", MakeCallback(&LogRwnd));
    s->TraceConnectWithoutContext("NextTxSequence", MakeCallback(&LogNxt));
    s->TraceConnectWithoutContext("HighestSequence", MakeCallback(&LogMax));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&LogCong));
}
uint32_t LogWrite(std::string path) {
    std::ofstream f(path);
    for (auto& l : L.lines) f << l << "\n";
    return L.lines.size();
}


// ---- PRR variants (--prr). ns-3 3.44's TcpPrrRecovery (tcp-prr-recovery.cc)
// departs from RFC 6937 in three ways that matter for large windows with SACK
// (docs/validation.md, "Why the first flow"):
//  1. `m_prrDelivered * tcb->m_ssThresh` is a uint32_t product (TracedValue
//     arithmetic keeps the type) and wraps once it reaches 2^32, e.g. after
//     16.5 kB delivered with ssthresh 259 kB: the proportional part then
//     yields a near-random, mostly negative sndcnt and the sender stalls.
//  2. Every duplicate ACK adds one SMSS to DeliveredData although, with SACK,
//     the SACKed bytes are already counted (rate ops): twice RFC 6937's rate.
//  3. An ACK that both SACKs new data and advances SND.UNA in recovery is fed
//     to DoRecovery twice (TcpSocketBase::DupAck, then the partial-ACK branch
//     of ProcessAck), counting its DeliveredData twice.
// It also takes RecoverFS = pipe where RFC 6937 says FlightSize (snd.nxt -
// snd.una), and uses PRR-CRB (+1 SMSS only on a "safe" ACK) where RFC 6937
// section 3 recommends PRR-SSRB. ns-3-dev fixed 1-2 and RecoverFS after 3.48
// (issues #1282, #1350, #1351). NetreturnPrr is our own TcpRecoveryOps that
// behaves as ns-3 3.44's PRR by default and has a switch for each departure.
struct PrrMode { bool wide = false; bool bonus = true; bool once = false; bool ssrb = false; bool flight = false; bool noexit = false; };
static PrrMode PM;
static bool PrrCustom = false;

class NetreturnPrr : public TcpRecoveryOps {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnPrr")
                                .SetParent<TcpRecoveryOps>()
                                .SetGroupName("Internet")
                                .AddConstructor<NetreturnPrr>();
        return tid;
    }
    NetreturnPrr() {}
    NetreturnPrr(const NetreturnPrr& o)
        : TcpRecoveryOps(o), m_prrDelivered(o.m_prrDelivered), m_prrOut(o.m_prrOut),
          m_recoveryFlightSize(o.m_recoveryFlightSize), m_lastCall(o.m_lastCall) {}
    std::string GetName() const override { return "NetreturnPrr"; }
    void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t unAckDataCount, uint32_t deliveredBytes) override {
        m_prrOut = 0;
        m_prrDelivered = 0;
        // ns-3: RFC 6675 pipe before recovery; RFC 6937: FlightSize.
        m_recoveryFlightSize = PM.flight ? unAckDataCount : tcb->m_bytesInFlight.Get();
        m_lastCall = Time(-1);
        DoRecovery(tcb, deliveredBytes, true);
    }
    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override {
        if (PM.once && !isDupAck && Simulator::Now() == m_lastCall) {
            return;  // the same ACK's DeliveredData, already counted by DupAck
        }
        m_lastCall = Simulator::Now();
        if (PM.bonus && isDupAck && m_prrDelivered < m_recoveryFlightSize) {
            deliveredBytes += tcb->m_segmentSize;
        }
        if (deliveredBytes == 0) {
            return;
        }
        m_prrDelivered += deliveredBytes;
        int64_t sendCount;
        uint32_t ssThresh = tcb->m_ssThresh.Get();
        uint32_t inFlight = tcb->m_bytesInFlight.Get();
        if (inFlight > ssThresh) {
            double num = PM.wide ? (double) m_prrDelivered * ssThresh
                                 : (double) (uint32_t) (m_prrDelivered * ssThresh);
            sendCount = (int64_t) std::ceil(num / m_recoveryFlightSize) - (int64_t) m_prrOut;
        } else {
            int64_t limit = std::max<int64_t>((int64_t) m_prrDelivered - m_prrOut, deliveredBytes);
            if (PM.ssrb || tcb->m_isRetransDataAcked) {
                limit += tcb->m_segmentSize;
            }
            sendCount = std::min<int64_t>(limit, (int64_t) ssThresh - inFlight);
        }
        sendCount = std::max<int64_t>(sendCount, m_prrOut > 0 ? 0 : tcb->m_segmentSize);
        tcb->m_cWnd = inFlight + (uint32_t) sendCount;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void ExitRecovery(Ptr<TcpSocketState> tcb) override {
        tcb->m_cWndInfl = tcb->m_cWnd;
        // noexit: TcpSocketBase calls IncreaseWindow right after this with the
        // whole cumulative ACK (data SACKed during recovery included); TcpCubic
        // skips it when not cwnd-limited (re-evaluated at the next send).
        if (PM.noexit) tcb->m_isCwndLimited = false;
    }
    void UpdateBytesSent(uint32_t bytesSent) override { m_prrOut += bytesSent; }
    Ptr<TcpRecoveryOps> Fork() override { return CopyObject<NetreturnPrr>(this); }

  private:
    uint32_t m_prrDelivered{0};
    uint32_t m_prrOut{0};
    uint32_t m_recoveryFlightSize{0};
    Time m_lastCall{Time(-1)};
};

void SetPrrMode(bool wide, bool bonus, bool once, bool ssrb, bool flight, bool noexit) {
    PrrCustom = true;
    PM.wide = wide; PM.bonus = bonus; PM.once = once; PM.ssrb = ssrb; PM.flight = flight; PM.noexit = noexit;
}

static void HookSocket(uint32_t i, Ptr<BulkSendApplication> app) {
    Ptr<Socket> s = app->GetSocket();
    if (!s) return;
    if (PrrCustom) DynamicCast<TcpSocketBase>(s)->SetRecoveryAlgorithm(CreateObject<NetreturnPrr>());
    if ((int32_t) i == L.flow) LogHookSocket(s);
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&SockTx, i));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&SockRetx, i));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&SockCong, i));
    if (i < S.traced) {
        s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&Cwnd, i));
        s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&Ssth, i));
    }
}

// BulkSend creates its socket in StartApplication: hook it just after.
void ScheduleHook(uint32_t i, Ptr<Application> app, double startS) {
    Ptr<BulkSendApplication> b = DynamicCast<BulkSendApplication>(app);
    Simulator::Schedule(Seconds(startS) + NanoSeconds(1), &HookSocket, i, b);
}

void SetDeviceQueue(Ptr<NetDevice> dev, std::string size) {
    Ptr<PointToPointNetDevice> p = DynamicCast<PointToPointNetDevice>(dev);
    p->GetQueue()->SetMaxSize(QueueSize(size));
}

void ConnectBottleneck(Ptr<NetDevice> dev) {
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&BnTx));
}

uint64_t Rx(uint32_t i) { return S.rx[i]; }
uint64_t Tx(uint32_t i) { return S.tx[i]; }
uint64_t Retx(uint32_t i) { return S.retx[i]; }
double Done(uint32_t i) { return S.done[i]; }
uint64_t Recoveries(uint32_t i) { return S.recoveries[i]; }
uint64_t Rtos(uint32_t i) { return S.rtos[i]; }
double QueueIntegral(double now) { return S.qInt + S.qCur * (now - S.qLast); }
uint32_t QueueMax() { return S.qMax; }
uint64_t BnBytes() { return S.bnBytes; }
uint64_t BnPackets() { return S.bnPackets; }
uint32_t Remaining() { return S.remaining; }
}
"""


def _jain(xs: list[float]) -> float:
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if xs and s2 > 0 else math.nan


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _simulate(flows: int, queue: str, seed: int, file_bytes: int, udp: bool, stop_s: float,
              flowmon: bool = True, fixed_starts: Optional[list[float]] = None,
              trace: int = 0, log_flow: Optional[int] = None,
              log_window: tuple[float, float] = (0.0, 1e18), log_out: Optional[str] = None,
              prr: str = "ns3") -> dict[str, Any]:
    t_setup = time.perf_counter()
    from ns import ns  # noqa: PLC0415  (heavy: cling parses ns-3's headers)
    import cppyy  # noqa: PLC0415

    cppyy.cppdef(_CPP)
    cpp = cppyy.gbl.netreturn_ns3

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(seed))

    # ---- TCP: ns-3 3.44 defaults made explicit, plus the paper's settings.
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpCubic")))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpPrrRecovery")))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(SOCKET_BUF))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(SOCKET_BUF))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1.0)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(True))
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))

    # ---- Bottleneck queue disc (R1 -> R2): set by attribute defaults so the
    # helper needs no variadic template call through cppyy.
    if queue == "droptail":
        qd_type = "ns3::FifoQueueDisc"
        sd("ns3::FifoQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{BUFFER_BYTES}B")))
    else:
        qd_type = "ns3::RedQueueDisc"
        sd("ns3::RedQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{BUFFER_BYTES}B")))
        sd("ns3::RedQueueDisc::MinTh", ns.DoubleValue(BUFFER_BYTES // 12))
        sd("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(BUFFER_BYTES // 4))
        sd("ns3::RedQueueDisc::QW", ns.DoubleValue(0.002))
        sd("ns3::RedQueueDisc::LInterm", ns.DoubleValue(50.0))  # max_p = 1/50
        sd("ns3::RedQueueDisc::Gentle", ns.BooleanValue(False))
        sd("ns3::RedQueueDisc::Wait", ns.BooleanValue(False))
        sd("ns3::RedQueueDisc::UseHardDrop", ns.BooleanValue(True))
        sd("ns3::RedQueueDisc::ARED", ns.BooleanValue(False))
        sd("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(FULL_PACKET))
        sd("ns3::RedQueueDisc::LinkBandwidth", ns.DataRateValue(ns.DataRate(BOTTLENECK_RATE_BPS)))
        sd("ns3::RedQueueDisc::LinkDelay", ns.TimeValue(ns.Time(BOTTLENECK_DELAY)))

    # ---- Topology: left_i -- R1 == R2 -- right_i.
    left, right, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    left.Create(flows)
    right.Create(flows)
    routers.Create(2)
    stack = ns.InternetStackHelper()
    stack.Install(left)
    stack.Install(right)
    stack.Install(routers)
    r1, r2 = routers.Get(0), routers.Get(1)

    def p2p(rate: str, delay: str, qsize: str) -> Any:
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        h.SetDeviceAttribute("Mtu", ns.UintegerValue(MTU))
        h.SetChannelAttribute("Delay", ns.StringValue(delay))
        h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(qsize))
        return h

    addr = ns.Ipv4AddressHelper()
    tch_none = ns.TrafficControlHelper()
    access, receivers = p2p(ACCESS_RATE, ACCESS_DELAY, "100p"), p2p(RECEIVER_RATE, RECEIVER_DELAY, "100p")
    left_if, right_if = [], []
    named_devs = []  # (device, interface name as our simulator names it)
    for i in range(flows):
        d = access.Install(left.Get(i), r1)
        named_devs += [(d.Get(0), f"left{i}->R1"), (d.Get(1), f"R1->left{i}")]
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        left_if.append(addr.Assign(d))
        # Assign() installed FqCoDel on both ends: remove it, so the device's
        # own 100-packet DropTail queue is the queue.
        tch_none.Uninstall(d)
        d = receivers.Install(r2, right.Get(i))
        named_devs += [(d.Get(0), f"R2->right{i}"), (d.Get(1), f"right{i}->R2")]
        addr.SetBase(ns.Ipv4Address(f"10.3.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        right_if.append(addr.Assign(d))
        tch_none.Uninstall(d)

    # Bottleneck: the queue disc holds the buffer; the device queue under it
    # is one packet (else 100 more packets would hide below the queue disc).
    # The reverse direction (R2 -> R1, ACKs) is a plain 100p device queue.
    bn = p2p(f"{BOTTLENECK_RATE_BPS}bps", BOTTLENECK_DELAY, "100p").Install(r1, r2)
    cpp.SetDeviceQueue(bn.Get(0), "1p")
    tch_bn = ns.TrafficControlHelper()
    tch_bn.SetRootQueueDisc(qd_type)
    qdiscs = tch_bn.Install(bn.Get(0))
    addr.SetBase(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bn)
    tch_none.Uninstall(bn.Get(1))
    # R2's egress towards R1 (ACKs) keeps the plain 100p DropTail device queue.
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    n_qdiscs = int(cpp.CountQueueDiscs())
    if n_qdiscs != 1:
        raise RuntimeError(f"expected one queue disc (R1's bottleneck egress), found {n_qdiscs}")
    cpp.Reset(flows, file_bytes)
    if prr != "ns3":
        # (wide, dupACK bonus, one DoRecovery per ACK, SSRB, FlightSize): see NetreturnPrr.
        cpp.SetPrrMode(*PRR_MODES[prr])
    cpp.TraceFlows(min(trace, flows))
    cpp.ConnectBottleneck(bn.Get(0))
    cpp.ConnectQueueDisc(qdiscs.Get(0))
    if log_flow is not None:
        if not 0 <= log_flow < flows:
            raise ValueError(f"--log-flow {log_flow}: there are {flows} flows")
        cpp.LogFlow(int(log_flow), float(log_window[0]), float(log_window[1]),
                    left_if[log_flow].GetAddress(0), right_if[log_flow].GetAddress(1), right.Get(log_flow))
        for dev, name in named_devs + [(bn.Get(0), "R1->R2"), (bn.Get(1), "R2->R1")]:
            cpp.LogDeviceDrops(dev, name)
        cpp.LogQueueDiscDrops(qdiscs.Get(0), "R1->R2")

    # ---- Applications.
    start = ns.CreateObject[ns.UniformRandomVariable]()
    start.SetAttribute("Min", ns.DoubleValue(1.0))
    start.SetAttribute("Max", ns.DoubleValue(8.0))
    port = 5000
    starts = []
    for i in range(flows):
        dst = right_if[i].GetAddress(1)
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sapp = sink.Install(right.Get(i))
        sapp.Start(ns.Seconds(0.0))
        cpp.ConnectSink(i, sapp.Get(0))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(dst, port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(file_bytes))
        bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT))
        bapp = bulk.Install(left.Get(i))
        t = start.GetValue()
        if fixed_starts is not None:
            t = fixed_starts[i]
        starts.append(t)
        bapp.Start(ns.Seconds(t))
        cpp.ScheduleHook(i, bapp.Get(0), t)

    udp_port = 6000
    if udp:
        usink = ns.PacketSinkHelper("ns3::UdpSocketFactory",
                                    ns.InetSocketAddress(ns.Ipv4Address.GetAny(), udp_port).ConvertTo())
        usink.Install(right.Get(0)).Start(ns.Seconds(0.0))
        onoff = ns.OnOffHelper("ns3::UdpSocketFactory",
                               ns.InetSocketAddress(right_if[0].GetAddress(1), udp_port).ConvertTo())
        onoff.SetAttribute("DataRate", ns.DataRateValue(ns.DataRate(UDP_RATE)))
        onoff.SetAttribute("PacketSize", ns.UintegerValue(UDP_PAYLOAD))
        onoff.SetAttribute("OnTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=1e9]"))
        onoff.SetAttribute("OffTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=0]"))
        onoff.Install(left.Get(0)).Start(ns.Seconds(0.0))

    monitor = helper = None
    if flowmon:
        helper = ns.FlowMonitorHelper()
        monitor = helper.InstallAll()

    ns.Simulator.Stop(ns.Seconds(stop_s))  # cap; the last sink stops it earlier
    setup_s = time.perf_counter() - t_setup
    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - t0
    now = ns.Simulator.Now().GetSeconds()
    events = int(ns.Simulator.GetEventCount())

    # ---- Metrics (definitions of crates/sim/src/metrics.rs).
    fcts, goodputs, effs, per_flow = [], [], [], []
    recoveries = rtos = 0
    for i in range(flows):
        done = float(cpp.Done(i))
        rx = int(cpp.Rx(i))
        fct = done - starts[i] if done >= 0 else math.nan
        active = fct if done >= 0 else max(now - starts[i], 0.0)
        gp = rx * 8 / active / 1e6 if active > 0 else 0.0
        tx, retx = int(cpp.Tx(i)), int(cpp.Retx(i))
        eff = (tx - min(retx, tx)) / tx * 100 if tx else 100.0
        if done >= 0:
            fcts.append(fct)
        goodputs.append(gp)
        effs.append(eff)
        rec, rto = int(cpp.Recoveries(i)), int(cpp.Rtos(i))
        recoveries += rec
        rtos += rto
        per_flow.append({"flow": i, "recoveries": rec, "timeouts": rto, "start_s": starts[i], "fct_s": fct, "goodput_mbps": gp,
                         "bytes_delivered": rx, "bytes_sent": tx, "bytes_retransmitted": retx,
                         "efficiency_pct": eff})
        if i < trace:
            n = int(cpp.TraceLen(i))
            per_flow[-1]["trace"] = {
                "time_s": [float(cpp.TraceT(i, k)) for k in range(n)],
                "cwnd": [float(cpp.TraceCwnd(i, k)) for k in range(n)],
                "ssthresh": [float(cpp.TraceSsthresh(i, k)) for k in range(n)],
            }

    out: dict[str, Any] = {
        "simulator": "ns-3 3.44 (PyPI ns3==3.44.post0, cppyy bindings)",
        "prr": prr,
        "flows": flows, "queue": queue, "seed": seed, "file_bytes": file_bytes, "udp": udp,
        "tcp_flows": flows,
        "flows_completed": len(fcts),
        "goodput_mean_mbps": _mean(goodputs),
        "fct_mean_s": _mean(fcts),
        "fct_max_s": max(fcts) if fcts else math.nan,
        "jain_goodput": _jain(goodputs),
        "tcp_efficiency_pct": _mean(effs),
        # Span = first start (UDP at 0 s, else the first TCP start) to the end.
        "utilization": ((int(cpp.BnBytes()) - PPP_HEADER * int(cpp.BnPackets())) * 8
                        / (BOTTLENECK_RATE_BPS * (now - (0.0 if udp else min(starts)))))
        if now > 0 else math.nan,
        "sim_time_s": now,
        "wall_s": wall,
        "setup_s": setup_s,
        "events": events,
        # Entries into fast recovery (our "fast_recoveries") and RTO expiries.
        "fast_recoveries": recoveries,
        "timeouts": rtos,
        # Queue disc backlog only (the 1-packet device queue under it is not counted).
        "queue_mean_bytes": float(cpp.QueueIntegral(now)) / now if now > 0 else math.nan,
        "queue_max_bytes": int(cpp.QueueMax()),
        # Mean backlog per 1-s bin (the last bin closes at the last change).
        "queue_1s_bins": [float(cpp.QueueBin(b)) for b in range(int(cpp.QueueBins()))],
        "per_flow": per_flow,
    }
    qd = qdiscs.Get(0)
    st = qd.GetStats()
    out["queue_drops"] = int(st.nTotalDroppedPackets)
    out["queue_discs_installed"] = n_qdiscs
    # Read the bottleneck queue disc's attributes back (proof they applied).
    attrs: dict[str, Any] = {}
    qs = ns.QueueSizeValue()
    qd.GetAttribute("MaxSize", qs)
    attrs["MaxSize"] = str(qs.Get())
    if queue == "red":
        for name in ("MinTh", "MaxTh", "QW", "LInterm"):
            v = ns.DoubleValue()
            qd.GetAttribute(name, v)
            attrs[name] = v.Get()
        for name in ("Gentle", "Wait", "UseHardDrop", "ARED"):
            v = ns.BooleanValue()
            qd.GetAttribute(name, v)
            attrs[name] = bool(v.Get())
        v = ns.UintegerValue()
        qd.GetAttribute("MeanPktSize", v)
        attrs["MeanPktSize"] = int(v.Get())
    out["queue_disc"] = {"type": qd_type, **attrs}
    out["flowmon"] = bool(flowmon)
    out["bottleneck_max_packet_bytes"] = int(cpp.BnMax()) - PPP_HEADER

    if monitor is not None:
        monitor.CheckForLostPackets()
        classifier = helper.GetClassifier()
        classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](classifier)
        stats = monitor.GetFlowStats()
        trecv = tlost = urecv = ulost = usent = 0
        src_index = {str(left_if[i].GetAddress(0)): i for i in range(flows)}
        for fid, fs in stats:
            tup = classifier.FindFlow(fid)
            proto = tup.protocol
            if proto == 6 and str(tup.sourceAddress) in src_index:
                # Data direction of TCP flow i: packets lost (drops anywhere).
                per_flow[src_index[str(tup.sourceAddress)]]["packets_lost"] = int(fs.lostPackets)
            if proto == 6:
                trecv += fs.rxPackets
                tlost += fs.lostPackets
            elif proto == 17:
                urecv += fs.rxPackets
                ulost += fs.lostPackets
                usent += fs.txPackets
        out["tcp_packet_loss_pct"] = tlost / (trecv + tlost) * 100 if trecv + tlost else 0.0
        out["udp_loss_pct"] = (ulost / (urecv + ulost) * 100 if urecv + ulost else 0.0) if udp else math.nan
        out["udp_efficiency_pct"] = (urecv / usent * 100 if usent else 100.0) if udp else math.nan
        out["tcp_packets_received"] = trecv
        out["tcp_packets_lost"] = tlost
        out["udp_packets_received"] = urecv
        out["udp_packets_lost"] = ulost
    else:
        out["tcp_packet_loss_pct"] = out["udp_loss_pct"] = math.nan
    if log_flow is not None and log_out:
        out["log_lines"] = int(cpp.LogWrite(log_out))
    ns.Simulator.Destroy()
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="EWT scenario 2 in ns-3 3.44 (reference run)")
    ap.add_argument("--flows", type=int, default=31)
    ap.add_argument("--queue", choices=["droptail", "red"], default="droptail")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--file-bytes", type=int, default=5_000_000)
    ap.add_argument("--stop", type=float, default=600.0, help="cap on simulated time, s")
    ap.add_argument("--no-udp", action="store_true")
    ap.add_argument("--no-flowmon", action="store_true", help="no FlowMonitor (timing only; no loss ratios)")
    ap.add_argument("--starts", default=None,
                    help="comma-separated start times in s, one per flow, instead of uniform [1, 8] s draws")
    ap.add_argument("--trace", type=int, default=0, metavar="K",
                    help="record cwnd and ssthresh of the first K flows at every change (per_flow[i]['trace'])")
    ap.add_argument("--log-flow", type=int, default=None, metavar="F",
                    help="packet-level log of flow F (segments sent, drops, arrivals, RTOs, sender state), "
                         "in the format of netreturn-sim --log-flow")
    ap.add_argument("--log-window", default=None, metavar="T0,T1", help="log only between T0 and T1 s")
    ap.add_argument("--log-out", default=None, metavar="PATH", help="file for the --log-flow lines")
    ap.add_argument("--prr", choices=["ns3", *PRR_MODES], default="ns3",
                    help="PRR: ns-3 3.44's TcpPrrRecovery (default), 'wide' = the same without its uint32 "
                         "overflow, 'wide-nobonus' = also without the SMSS it adds per dupACK, "
                         "'rfc6937' = RFC 6937 PRR-SSRB (see NetreturnPrr in this file)")
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    a = ap.parse_args(argv)
    starts = [float(x) for x in a.starts.split(",")] if a.starts else None
    if starts is not None and len(starts) != a.flows:
        ap.error(f"--starts gives {len(starts)} times for {a.flows} flows")
    window = (0.0, 1e18)
    if a.log_window:
        try:
            t0, t1 = (float(x) for x in a.log_window.split(","))
        except ValueError:
            ap.error("--log-window needs T0,T1 in seconds")
        window = (t0, t1)
    if a.log_flow is not None and not a.log_out:
        ap.error("--log-flow needs --log-out PATH")
    out = _simulate(a.flows, a.queue, a.seed, a.file_bytes, not a.no_udp, a.stop, not a.no_flowmon, starts, a.trace,
                    a.log_flow, window, a.log_out, a.prr)
    if a.json:
        sys.stdout.write(json.dumps(out, allow_nan=True) + "\n")
    else:
        for k, v in out.items():
            if k != "per_flow":
                print(f"{k:22s} {v}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
