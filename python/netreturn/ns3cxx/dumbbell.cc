// The EWT dumbbell in ns-3 3.44: trace sinks, the stop test, metrics and the
// packet log of python/netreturn/ns3ref.py, compiled by cling at run time
// (cppyy.cppdef) after prr.cc and gateway.cc. C++ rather than Python
// callbacks: a Python call per packet would dominate the run time. Topology,
// attributes and applications are built from Python (ns3ref._simulate).
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/ppp-header.h"
#include "ns3/tcp-option-sack.h"
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <map>
#include <unordered_map>
#include <vector>

// TcpSocketBase names ns3::TcpGeneralTest (ns-3's test suite, not in the
// library) a friend: this one only reads a socket's TcpSocketState, for
// --ecn-cwr-rfc3168 (EcnCwrRfc3168Rx below).
namespace ns3 {
class TcpGeneralTest {
  public:
    static Ptr<TcpSocketState> Tcb(Ptr<TcpSocketBase> s) { return s->m_tcb; }
};
}  // namespace ns3

namespace netreturn_ns3 {
using namespace ns3;

struct State {
    std::vector<uint64_t> rx, tx, retx, recoveries, rtos, rtoExpiries;
    // Entries into fast recovery while SND.UNA had not passed the recovery
    // point of the flow's last RTO (HighData when it expired; RFC 6675
    // section 5.1, RFC 6582 section 3.2 step 2): ns-3 3.44 leaves CA_LOSS
    // on the first new ACK and its DupAck enters recovery on IsLost(HighACK
    // + 1) without comparing with m_recover; Linux stays in Loss until
    // snd_una passes high_seq, ours enters no recovery before it either.
    std::vector<uint64_t> recoveriesBelowRtoPoint;
    // Entries into fast recovery on an ACK that advanced SND.UNA (and
    // carried new SACK blocks): RFC 6675 section 2 counts it a duplicate
    // ACK "even if it carries new cumulative acknowledgment information",
    // and ns-3's ProcessAck (isDupack = scoreboardUpdated) then runs DupAck,
    // whose IsLost(HighACK + 1) may start a recovery.
    std::vector<uint64_t> recoveriesOnAdvancingAck;
    std::vector<SequenceNumber32> highTx, rtoPoint, lastAck;
    std::vector<Ptr<TcpSocketBase>> sock;
    // Entries into CA_CWR: window reductions on ECE (RFC 3168 section 6.1.2).
    std::vector<uint64_t> cwrs;
    // Each flow's congestion state (TcpCongState_t) and since when (s; -1
    // before its socket exists and after its file is delivered); the time
    // in each state summed over flows; entries into CA_CWR by the state they
    // left; ECE flags the --ecn-rfc3168 repair withheld (EcnRfc3168Rx).
    std::vector<int> cong;
    std::vector<double> congSince;
    double congTime[5] = {0, 0, 0, 0, 0};
    uint64_t cwrFrom[5] = {0, 0, 0, 0, 0};
    uint64_t eceWithheld = 0;
    // ECE flags reaching the senders' ACK processing, and those on an ACK
    // that does not advance SND.UNA (ns-3 3.44's ReceivedAck reads ECE only
    // when ackNumber > HeadSequence; RFC 3168 6.1.2, RFC 8257 3.3 and Linux's
    // tcp_ack read it on every ACK).
    uint64_t eceAcks = 0, eceNotAdvancing = 0;
    // Of the latter, those reaching a sender in CA_OPEN or CA_DISORDER, where
    // ns-3 ignores them and RFC 3168 (and ours' default) starts a reduction;
    // per flow, HighData at the first one since the flow last left CA_OPEN
    // or CA_DISORDER (0: none), and the fast recoveries entered before
    // SND.UNA passed it, inside the window a reduction there would have
    // covered (docs/validation.md, "RED with ECN: the fast recoveries").
    uint64_t eceIgnoredOpen = 0, recoveriesAfterIgnoredEce = 0;
    std::vector<SequenceNumber32> eceIgnoredPoint;
    // Packets the bottleneck queue disc marked CE instead of dropping.
    uint64_t marks = 0;
    double qLast = 0, qInt = 0;
    uint32_t qMax = 0, qCur = 0;
    // The bottleneck device's own queue (1 packet, below the queue disc):
    // its IP bytes (the device adds a 2-byte PPP header before enqueueing,
    // PointToPointNetDevice::Send) integrated over time, so the backlog
    // ours counts (every packet waiting, not the one on the wire) is the
    // queue disc's plus this (docs/validation.md, "RED with ECN: the
    // queue, measured and switched").
    double devLast = 0, devInt = 0, devPktLast = 0, devPktInt = 0;
    uint32_t devCur = 0, devPktCur = 0;
    std::vector<double> done;
    uint64_t fileBytes = 0;
    uint32_t remaining = 0;
    uint64_t bnBytes = 0, bnPackets = 0;
    uint32_t bnMax = 0;
    double lastDone = -1;
    // Window traces (time s, cwnd B, ssthresh B) of the first `traced` flows.
    uint32_t traced = 0;
    std::vector<std::vector<double>> cwT, cwV, ssV;
    // Copies of each data segment sent (by sequence number), per flow, and
    // the bottleneck drops of copies after the first (retransmissions).
    std::vector<std::unordered_map<uint32_t, uint32_t>> sendCount;
    std::vector<uint64_t> retxDrops, dataDrops;
    // Data segments a sender sends at one instant (one ACK or timer event):
    // the burst sizes over all flows, as histogram (size -> events).
    std::vector<double> lastTxT;
    std::vector<uint32_t> curBurst;
    std::map<uint32_t, uint64_t> burstHist;
};
static State S;
// Every flow's congestion-state changes and RTO expiries (--cong-log,
// CongLogged below).
struct CongEvent { double t; uint32_t flow; int32_t old, now; uint32_t una, high, sacked; };
static std::vector<CongEvent> congLog;

void Reset(uint32_t n, uint64_t fileBytes) {
    S = State();
    congLog.clear();
    S.rx.assign(n, 0); S.tx.assign(n, 0); S.retx.assign(n, 0);
    S.recoveries.assign(n, 0); S.rtos.assign(n, 0); S.rtoExpiries.assign(n, 0);
    S.cwrs.assign(n, 0);
    S.recoveriesBelowRtoPoint.assign(n, 0);
    S.highTx.assign(n, SequenceNumber32(0)); S.rtoPoint.assign(n, SequenceNumber32(0));
    S.lastAck.assign(n, SequenceNumber32(0)); S.recoveriesOnAdvancingAck.assign(n, 0);
    S.sock.assign(n, nullptr);
    S.cong.assign(n, 0); S.congSince.assign(n, -1.0);
    S.eceIgnoredPoint.assign(n, SequenceNumber32(0));
    S.done.assign(n, -1.0);
    S.sendCount.assign(n, {});
    S.retxDrops.assign(n, 0); S.dataDrops.assign(n, 0);
    S.lastTxT.assign(n, -1.0); S.curBurst.assign(n, 0);
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

// Time in each congestion state stops counting when a flow's file is delivered.
static void CongClose(uint32_t i) {
    if (S.congSince[i] >= 0) S.congTime[S.cong[i]] += Simulator::Now().GetSeconds() - S.congSince[i];
    S.congSince[i] = -1.0;
}

static void SinkRx(uint32_t i, Ptr<const Packet> p, const Address&) {
    S.rx[i] += p->GetSize();
    if (S.done[i] < 0 && S.rx[i] >= S.fileBytes) {
        S.done[i] = Simulator::Now().GetSeconds();
        S.lastDone = S.done[i];
        CongClose(i);
        if (--S.remaining == 0) {
            Simulator::Stop();  // every file delivered: end of the run
        }
    }
}

static void SockTx(uint32_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    S.tx[i] += p->GetSize();
    if (p->GetSize() > 0) {
        S.sendCount[i][h.GetSequenceNumber().GetValue()]++;
        double t = Simulator::Now().GetSeconds();
        if (t == S.lastTxT[i]) {
            S.curBurst[i]++;
        } else {
            if (S.curBurst[i]) S.burstHist[S.curBurst[i]]++;
            S.curBurst[i] = 1;
            S.lastTxT[i] = t;
        }
    }
}
// The burst-size histogram (each flow's last burst included), as "size:count,...".
std::string SendBursts() {
    std::map<uint32_t, uint64_t> h = S.burstHist;
    for (uint32_t b : S.curBurst) if (b) h[b]++;
    std::ostringstream o;
    for (auto& kv : h) o << kv.first << ":" << kv.second << ",";
    return o.str();
}

static void SockHighTx(uint32_t i, SequenceNumber32, SequenceNumber32 v) { S.highTx[i] = v; }
// The socket's "Rx" fires in DoForwardUp before the ACK is processed.
// Connected after EcnRfc3168Rx: an ECE it withheld is not counted.
static void SockAckRx(uint32_t i, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (!(h.GetFlags() & TcpHeader::ACK)) return;
    S.lastAck[i] = h.GetAckNumber();
    if ((h.GetFlags() & TcpHeader::ECE) && !(h.GetFlags() & TcpHeader::SYN) && S.sock[i]) {
        S.eceAcks++;
        if (h.GetAckNumber() <= S.sock[i]->GetTxBuffer()->HeadSequence()) {
            S.eceNotAdvancing++;
            if (S.cong[i] == TcpSocketState::CA_OPEN || S.cong[i] == TcpSocketState::CA_DISORDER) {
                S.eceIgnoredOpen++;
                SequenceNumber32 una = S.sock[i]->GetTxBuffer()->HeadSequence();
                if (S.eceIgnoredPoint[i] == SequenceNumber32(0) || una >= S.eceIgnoredPoint[i])
                    S.eceIgnoredPoint[i] = S.highTx[i];
            }
        }
    }
}
static void SockRetx(uint32_t i, Ptr<const Packet> p, const TcpHeader&, const Address&,
                     const Address&, Ptr<const TcpSocketBase>) {
    S.retx[i] += p->GetSize();
}

// A congestion-state change or RTO expiry for --cong-log: time, flow, the
// state left and the state entered (TcpCongState_t; -1, -1 for an expiry,
// whatever the state), SND.UNA, HighData and the bytes SACKed then
// (`TcpTxBuffer::GetSacked`).
static void CongLogged(uint32_t i, int32_t old, int32_t now) {
    uint32_t una = S.sock[i] ? S.sock[i]->GetTxBuffer()->HeadSequence().GetValue() : 0;
    uint32_t sacked = S.sock[i] ? S.sock[i]->GetTxBuffer()->GetSacked() : 0;
    congLog.push_back({Simulator::Now().GetSeconds(), i, old, now, una, S.highTx[i].GetValue(), sacked});
}
uint32_t CongLogLen() { return congLog.size(); }
std::string CongLogLine(uint32_t k) {
    const CongEvent& e = congLog[k];
    std::ostringstream o;
    o.precision(6);
    o << std::fixed << e.t << "\t" << e.flow << "\t" << e.old << "\t" << e.now << "\t" << e.una << "\t" << e.high << "\t" << e.sacked;
    return o.str();
}

// Entries into fast recovery (3 dupACKs or SACK loss detection), into
// CA_LOSS (retransmission timeout) and into CA_CWR (a reduction on ECE).
static void SockCong(uint32_t i, TcpSocketState::TcpCongState_t old, TcpSocketState::TcpCongState_t now) {
    CongLogged(i, old, now);
    if (now == TcpSocketState::CA_RECOVERY) {
        S.recoveries[i]++;
        if (S.eceIgnoredPoint[i] != SequenceNumber32(0) && S.sock[i] &&
            S.sock[i]->GetTxBuffer()->HeadSequence() < S.eceIgnoredPoint[i])
            S.recoveriesAfterIgnoredEce++;
        if (S.sock[i]) {
            // DupAck runs before NewAck discards what the ACK covers: the head is still SND.UNA before it.
            SequenceNumber32 una = S.sock[i]->GetTxBuffer()->HeadSequence();
            if (una < S.rtoPoint[i]) S.recoveriesBelowRtoPoint[i]++;
            if (S.lastAck[i] > una) S.recoveriesOnAdvancingAck[i]++;
        }
    }
    if (now == TcpSocketState::CA_LOSS) {
        S.rtos[i]++;
        S.rtoPoint[i] = S.highTx[i];  // RFC 6675 section 5.1: RecoveryPoint = HighData
    }
    if (now == TcpSocketState::CA_CWR) {
        S.cwrs[i]++;
        S.cwrFrom[old]++;
    }
    if (S.done[i] < 0) {
        CongClose(i);
        S.congSince[i] = Simulator::Now().GetSeconds();
    }
    if (now != TcpSocketState::CA_DISORDER && now != TcpSocketState::CA_OPEN) S.eceIgnoredPoint[i] = SequenceNumber32(0);
    S.cong[i] = now;
}
// Summed over flows until each file is delivered (or the run ends, at `now`).
double CongTime(uint32_t k, double now) {
    double t = S.congTime[k];
    for (size_t i = 0; i < S.cong.size(); i++)
        if (S.congSince[i] >= 0 && S.cong[i] == (int) k) t += now - S.congSince[i];
    return t;
}
uint64_t CwrFrom(uint32_t k) { return S.cwrFrom[k]; }
uint64_t EceWithheld() { return S.eceWithheld; }
uint64_t EceAcks() { return S.eceAcks; }
uint64_t EceNotAdvancing() { return S.eceNotAdvancing; }
uint64_t EceIgnoredOpen() { return S.eceIgnoredOpen; }
uint64_t RecoveriesAfterIgnoredEce() { return S.recoveriesAfterIgnoredEce; }

// --ecn-rfc3168: ns-3 3.44's ReceivedAck enters CA_CWR on an ACK with ECE
// from any state but CA_CWR, so a sender in fast recovery (CA_RECOVERY) or
// after an RTO (CA_LOSS) cuts ssthresh a second time and leaves loss
// recovery for CWR, where dupACKs start no recovery. RFC 3168 section
// 6.1.2 reduces once per window for "a series of dropped and/or CE packets
// from a single window of data", and Linux enters CWR only from Open or
// Disorder (tcp_enter_cwr: icsk_ca_state < TCP_CA_CWR; tcp_fastretrans_alert
// does not call it in Recovery or Loss). The repair withholds ECE from the
// sender's ACK processing while it is in CA_RECOVERY or CA_LOSS: the socket's
// "Rx" trace fires in DoForwardUp on the header ReceivedAck reads next. As
// in Linux and ours, the receiver keeps echoing until a CWR arrives, so an
// ECE after recovery still reduces once.
// --dctcp-rfc8257: ns-3 3.44's TcpDctcp answers a loss with its ECN rule.
// Its GetSsThresh, (1 - alpha / 2) cwnd, serves every reduction the socket
// asks for: EnterCwr, and also EnterRecovery and ReTxTimeout, so with few
// marks (alpha small) a loss barely lowers the window. RFC 8257 section
// 3.5: "A DCTCP sender MUST react to loss episodes in the same way as
// conventional TCP"; Linux halves (dctcp_react_to_loss, on entering
// Recovery and on CA_EVENT_LOSS), and so does ours (RFC 5681's FlightSize
// / 2, the default loss rule of crates/tcp/src/cc/mod.rs). The repair halves on a loss as Linux: in GetSsThresh when
// EnterRecovery calls it (the state is CA_RECOVERY already), and on
// CA_EVENT_LOSS, which ReTxTimeout raises after its GetSsThresh on the
// first expiry of a series (cwnd still the one before the timeout).
// --dctcp-echo-rfc8257 (with --dctcp-rfc8257): ns-3 3.44's DCTCP receiver
// acknowledges one segment short when its CE state changes. RFC 8257
// section 3.2 (Figure 1) and Linux (dctcp_ece_ack_update: __tcp_send_ack(sk,
// *prior_rcv_nxt) if a delayed ACK is pending) send at a change an immediate
// ACK of what arrived before the segment, with the old state. ns-3 raises
// CA_EVENT_ECN_IS_CE / _NO_CE in TcpSocketBase::ForwardUp, before the
// segment is in the receive buffer, and TcpDctcp::CeState0to1 / 1to0 store
// m_priorRcvNxt = NextRxSequence() at each event, so the ACK it sends at the
// next change (SetNextRxSequence(m_priorRcvNxt)) ends before the previous
// segment: a duplicate of the ACK already sent. When the old state was CE
// that duplicate carries the segment's only ECE, which ns-3's sender drops
// (TcpSocketBase::ReceivedAck reads ECE only on an ACK that advances
// SND.UNA). And m_delayedAckReserved, set by CA_EVENT_DELAYED_ACK, stays set
// after the delayed-ACK timer (DelAckTimeout raises that event too) and after
// these ACKs. The repair acknowledges NextRxSequence() at the event (the
// prior rcv_nxt, as Linux's) with the old state, when a delayed ACK is
// pending: a packet's CA_EVENT_DELAYED_ACK (ReceivedData: NextRxSequence
// moved since the last one), not the timer's.
static bool DctcpEchoRfc8257 = false;
static uint64_t DctcpEchoAcks = 0;
void SetDctcpEchoRfc8257(bool on) { DctcpEchoRfc8257 = on; DctcpEchoAcks = 0; }
uint64_t DctcpEchoAcksSent() { return DctcpEchoAcks; }
class NetreturnDctcpRfc8257 : public TcpDctcp {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnDctcpRfc8257")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<NetreturnDctcpRfc8257>();
        return tid;
    }
    NetreturnDctcpRfc8257() = default;
    NetreturnDctcpRfc8257(const NetreturnDctcpRfc8257& o) = default;
    std::string GetName() const override { return "NetreturnDctcpRfc8257"; }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        if (tcb->m_congState == TcpSocketState::CA_RECOVERY) return Halved(tcb);
        return TcpDctcp::GetSsThresh(tcb, bytesInFlight);
    }
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override {
        if (DctcpEchoRfc8257 && EchoEvent(tcb, event)) return;
        if (event == TcpSocketState::CA_EVENT_LOSS && tcb->m_congState != TcpSocketState::CA_LOSS)
            tcb->m_ssThresh = Halved(tcb);
        TcpDctcp::CwndEvent(tcb, event);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NetreturnDctcpRfc8257>(this); }

  private:
    static uint32_t Halved(Ptr<const TcpSocketState> tcb) {
        return std::max(tcb->m_cWnd.Get() / 2, 2 * tcb->m_segmentSize);
    }
    // The receiver's echo (--dctcp-echo-rfc8257); true when the event was its.
    bool EchoEvent(Ptr<TcpSocketState> tcb, TcpSocketState::TcpCAEvent_t event) {
        switch (event) {
        case TcpSocketState::CA_EVENT_ECN_IS_CE:
        case TcpSocketState::CA_EVENT_ECN_NO_CE: {
            bool ce = event == TcpSocketState::CA_EVENT_ECN_IS_CE;
            if (ce != m_echoCe && m_ackPending) {
                // The segment is not in the buffer yet: NextRxSequence() is the prior rcv_nxt.
                tcb->m_sendEmptyPacketCallback(m_echoCe ? (TcpHeader::ACK | TcpHeader::ECE) : TcpHeader::ACK);
                m_ackPending = false;
                DctcpEchoAcks++;
            }
            m_echoCe = ce;
            // As TcpDctcp::CeState0to1 / CeState1to0: the ACKs that follow echo the new state.
            if (ce) {
                tcb->m_ecnState = TcpSocketState::ECN_CE_RCVD;
            } else if (tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD ||
                       tcb->m_ecnState == TcpSocketState::ECN_SENDING_ECE) {
                tcb->m_ecnState = TcpSocketState::ECN_IDLE;
            }
            return true;
        }
        case TcpSocketState::CA_EVENT_DELAYED_ACK: {
            // ReceivedData raises it after adding a segment; DelAckTimeout after sending the ACK.
            SequenceNumber32 rx = tcb->m_rxBuffer->NextRxSequence();
            m_ackPending = !(m_delayedSeen && rx == m_rxAtDelayed);
            m_rxAtDelayed = rx;
            m_delayedSeen = true;
            return true;
        }
        case TcpSocketState::CA_EVENT_NON_DELAYED_ACK:
            m_ackPending = false;
            return true;
        default:
            return false;
        }
    }
    bool m_echoCe = false, m_ackPending = false, m_delayedSeen = false;
    SequenceNumber32 m_rxAtDelayed;
};
// The TypeId, registered by hand (cling runs no NS_OBJECT_ENSURE_REGISTERED).
std::string DctcpRfc8257Register() { return NetreturnDctcpRfc8257::GetTypeId().GetName(); }

// --ecn-cwr-rfc3168: ns-3 3.44's receiver (TcpSocketBase::DoForwardUp)
// stops echoing ECE on a CWR only from a state other than ECN_CE_RCVD, the
// state a CE mark leaves until the receiver's next ACK: a mark on a segment
// still waiting for its delayed ACK outlives the CWR. RFC 3168 section 6.1.3
// and Linux (tcp_ecn_accept_cwr) end the echo at the CWR; a CE on the CWR
// segment itself starts it again. The repair, at the receiver's IP input
// before the socket sees the segment: an unmarked segment with CWR moves
// its socket from ECN_CE_RCVD to ECN_IDLE.
static bool EcnCwrRfc3168 = false;
static uint64_t EcnCwrRepairs = 0;
void SetEcnCwrRfc3168(bool on) { EcnCwrRfc3168 = on; EcnCwrRepairs = 0; }
uint64_t EcnCwrRfc3168Repairs() { return EcnCwrRepairs; }
static void EcnCwrRfc3168Rx(Ptr<Node> n, Ptr<const Packet> p, Ptr<Ipv4>, uint32_t) {
    Ptr<Packet> c = p->Copy();
    Ipv4Header ip;
    c->RemoveHeader(ip);
    if (ip.GetProtocol() != 6 || ip.GetEcn() == Ipv4Header::ECN_CE) return;
    TcpHeader h;
    c->PeekHeader(h);
    if (!(h.GetFlags() & TcpHeader::CWR) || (h.GetFlags() & TcpHeader::SYN)) return;
    ObjectVectorValue socks;
    n->GetObject<TcpL4Protocol>()->GetAttribute("SocketList", socks);
    for (auto it = socks.Begin(); it != socks.End(); ++it) {
        Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(it->second);
        if (!s) continue;
        Address peer;
        if (s->GetPeerName(peer) != 0) continue;
        InetSocketAddress a = InetSocketAddress::ConvertFrom(peer);
        if (a.GetIpv4() != ip.GetSource() || a.GetPort() != h.GetSourcePort()) continue;
        Ptr<TcpSocketState> tcb = TcpGeneralTest::Tcb(s);
        if (tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD) {
            tcb->m_ecnState = TcpSocketState::ECN_IDLE;
            EcnCwrRepairs++;
        }
        return;
    }
}
void EcnCwrRfc3168Hook(Ptr<Node> n) {
    n->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("Rx", MakeBoundCallback(&EcnCwrRfc3168Rx, n));
}

static bool EcnRfc3168 = false;
void SetEcnRfc3168(bool on) { EcnRfc3168 = on; }
static void EcnRfc3168Rx(uint32_t i, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if ((h.GetFlags() & TcpHeader::ECE) && !(h.GetFlags() & TcpHeader::SYN) &&
        (S.cong[i] == TcpSocketState::CA_RECOVERY || S.cong[i] == TcpSocketState::CA_LOSS)) {
        const_cast<TcpHeader&>(h).SetFlags(h.GetFlags() & ~TcpHeader::ECE);
        S.eceWithheld++;
    }
}

// Every RTO expiry, backoffs included (entries into CA_LOSS miss a timer
// that expires again in CA_LOSS): ReTxTimeout doubles the RTO
// (`m_rto = Min(m_rto * 2, 60 s)`), which no RTT update does exactly.
static void SockRto(uint32_t i, Time before, Time now) {
    if (now == before * 2 || (now == Seconds(60) && before < now)) {
        S.rtoExpiries[i]++;
        CongLogged(i, -1, -1);
    }
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

// Every drop of the bottleneck queue disc before enqueue: time, reason
// (RED: "Unforced drop" early, "Forced drop" above MaxTh; "Queue disc limit
// exceeded" / "Dropped by internal queue" tail), backlog then and packet size.
struct QDrop { double t; std::string why; uint32_t backlog, size; int32_t flow; uint8_t retx; };
static std::vector<QDrop> qDrops;
// A CE mark is logged as a drop is (its reason says "mark"), but counted in
// neither dataDrops nor retxDrops.
static void QLogged(Ptr<const QueueDiscItem> item, const char* why, bool mark) {
    qDrops.push_back({Simulator::Now().GetSeconds(), why, S.qCur, item->GetSize(), -1, 0});
    // A data segment of TCP flow i (source 10.1.i.1, or from pair 256 on
    // 10.(16 + i / 256).(i % 256).1: ns3ref.pair_subnet): a first copy or a
    // retransmission (sent before)?
    Ptr<const Ipv4QueueDiscItem> ipi = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ipi || ipi->GetHeader().GetProtocol() != 6) return;
    uint32_t a = ipi->GetHeader().GetSource().Get();
    uint32_t o2 = (a >> 16) & 0xff, o3 = (a >> 8) & 0xff;
    if ((a >> 24) != 10 || !(o2 == 1 || (o2 > 16 && o2 < 128))) return;
    uint32_t i = o2 == 1 ? o3 : (o2 - 16) * 256 + o3;
    if (i >= S.sendCount.size()) return;
    Ptr<Packet> c = ipi->GetPacket()->Copy();
    TcpHeader h;
    c->RemoveHeader(h);
    if (c->GetSize() == 0) return;
    if (!mark) S.dataDrops[i]++;
    qDrops.back().flow = (int32_t) i;
    auto it = S.sendCount[i].find(h.GetSequenceNumber().GetValue());
    if (it != S.sendCount[i].end() && it->second >= 2) {
        if (!mark) S.retxDrops[i]++;
        qDrops.back().retx = 1;
    }
}
static void QDropped(Ptr<const QueueDiscItem> item, const char* why) { QLogged(item, why, false); }
uint64_t RetxDrops(uint32_t i) { return S.retxDrops[i]; }
uint64_t DataDrops(uint32_t i) { return S.dataDrops[i]; }
uint32_t QDropLen() { return qDrops.size(); }
double QDropT(uint32_t k) { return qDrops[k].t; }
std::string QDropWhy(uint32_t k) { return qDrops[k].why; }
uint32_t QDropBacklog(uint32_t k) { return qDrops[k].backlog; }
uint32_t QDropSize(uint32_t k) { return qDrops[k].size; }
int32_t QDropFlow(uint32_t k) { return qDrops[k].flow; }
uint32_t QDropRetx(uint32_t k) { return qDrops[k].retx; }

// ---- RED's state at every arrival (--red-trace): ns-3 keeps the average
// (m_qAvg) and ARED's max_p (m_curMaxP) private and has no trace source for
// them; they are read through pointers to members named in an explicit
// template instantiation (where C++ does not check access, [temp.spec]/6).
template <typename Tag, typename Tag::type M> struct RedRob {
    friend typename Tag::type RedGet(Tag) { return M; }
};
struct RedQAvg { typedef double RedQueueDisc::*type; friend type RedGet(RedQAvg); };
struct RedCurMaxP { typedef double RedQueueDisc::*type; friend type RedGet(RedCurMaxP); };
template struct RedRob<RedQAvg, &RedQueueDisc::m_qAvg>;
template struct RedRob<RedCurMaxP, &RedQueueDisc::m_curMaxP>;
struct RedArrival { double t; uint32_t backlog; double avg, maxP; uint8_t verdict; };
static std::vector<RedArrival> redTrace;
static Ptr<RedQueueDisc> redQ;
static void RedRecord(uint32_t backlog, uint8_t verdict) {
    redTrace.push_back({Simulator::Now().GetSeconds(), backlog, (*redQ).*RedGet(RedQAvg()),
                        (*redQ).*RedGet(RedCurMaxP()), verdict});
}
// Enqueue fires after DoEnqueue added the item: the backlog before it is
// the current one minus its size. A drop leaves the backlog as it was. A
// CE mark (UseEcn) fires Mark inside DoEnqueue, before the item's Enqueue:
// that arrival is written with verdict 4, as ours writes a mark.
static bool redMarked = false;
static void RedMark(Ptr<const QueueDiscItem>, const char*) { redMarked = true; }
static void RedEnq(Ptr<const QueueDiscItem> item) {
    RedRecord(redQ->GetNBytes() - item->GetSize(), redMarked ? 4 : 0);
    redMarked = false;
}
static void RedDrop(Ptr<const QueueDiscItem> item, const char* why) {
    redMarked = false;  // marked, then refused by the full internal queue
    std::string w(why);
    RedRecord(redQ->GetNBytes(), w == "Unforced drop" ? 1 : w == "Forced drop" ? 2 : 3);
}
void TraceRed(Ptr<QueueDisc> q) {
    redTrace.clear();
    redQ = DynamicCast<RedQueueDisc>(q);
    q->TraceConnectWithoutContext("Enqueue", MakeCallback(&RedEnq));
    q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&RedDrop));
    q->TraceConnectWithoutContext("Mark", MakeCallback(&RedMark));
}
// The same trace for a FIFO queue disc (DropTail, and the FIFO under the
// EWT / AWM gateways; --queue-trace): average and max_p written as the
// backlog and 0; departures too (verdict 4, backlog after it leaves the
// queue disc for the device), so the time distribution of the backlog can
// be rebuilt exactly.
static Ptr<QueueDisc> fifoQ;
static void FifoRecord(uint32_t backlog, uint8_t verdict) {
    redTrace.push_back({Simulator::Now().GetSeconds(), backlog, (double) backlog, 0.0, verdict});
}
static void FifoEnq(Ptr<const QueueDiscItem> item) { FifoRecord(fifoQ->GetNBytes() - item->GetSize(), 0); }
static void FifoDrop(Ptr<const QueueDiscItem>, const char*) { FifoRecord(fifoQ->GetNBytes(), 3); }
static void FifoDeq(Ptr<const QueueDiscItem>) { FifoRecord(fifoQ->GetNBytes(), 4); }
void TraceFifo(Ptr<QueueDisc> q) {
    redTrace.clear();
    fifoQ = q;
    q->TraceConnectWithoutContext("Enqueue", MakeCallback(&FifoEnq));
    q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&FifoDrop));
    q->TraceConnectWithoutContext("Dequeue", MakeCallback(&FifoDeq));
}
uint32_t RedTraceWrite(std::string path) {
    std::ofstream f(path);
    f << std::setprecision(9);
    for (auto& r : redTrace)
        f << "R1->R2\t" << std::fixed << std::setprecision(9) << r.t << "\t" << r.backlog << "\t"
          << std::setprecision(3) << r.avg << "\t" << std::scientific << std::setprecision(6) << r.maxP
          << std::defaultfloat << "\t" << (int) r.verdict << "\n";
    return redTrace.size();
}

static void QMarked(Ptr<const QueueDiscItem> item, const char* why) {
    S.marks++;
    QLogged(item, why, true);
}

// The bottleneck queue disc's backlog, drops and CE marks. Drops after
// dequeue are CoDel's at the head ("Target exceeded drop") and FQ's from
// the fattest flow ("Overlimit drop"); a flow queue's child queue disc
// reports its drops and marks through the root (QueueDisc::AddQueueDiscClass).
void ConnectQueueDisc(Ptr<QueueDisc> q) {
    qDrops.clear();
    q->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&QBytes));
    q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&QDropped));
    q->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&QDropped));
    q->TraceConnectWithoutContext("Mark", MakeCallback(&QMarked));
}

// --ns3-fqcodel linux: CoDel's "too little queued to drop" test as Linux
// applies it in FQ-CoDel. RFC 8289 section 4.4 (and its pseudocode,
// `bytes() <= MAXPACKET`) keeps CoDel from dropping while at most one MTU is
// queued; Linux's fq_codel_dequeue passes codel_dequeue the whole qdisc's
// backlog (&sch->qstats.backlog, include/net/codel_impl.h codel_should_drop:
// `*backlog <= params->mtu`, after the head was dequeued), and so does ours
// (crates/control/src/queue/aqm/codel.rs, `left = q.backlog().bytes +
// others`). ns-3 3.44 makes each flow queue a CoDelQueueDisc whose OkToDrop
// tests that flow queue's own bytes (`GetInternalQueue(0)->GetNBytes() <
// m_minBytes`), so a flow queue down to one packet is never marked however
// long the link's queue. The repair keeps ns-3's test and moves its
// threshold: for flow queue j, m_minBytes = MTU + 1 - (bytes queued in the
// other flow queues), 0 when those alone exceed one MTU; then `own <
// m_minBytes` is `own + others <= MTU`, Linux's test. `others` only changes
// when another flow queue enqueues, dequeues or drops, which moves the FQ
// queue disc's BytesInQueue: every flow queue's threshold is set again
// there (the flow's own bytes and the total move together inside its
// dequeue, so `total - own` holds while CoDel drops from the head).
// m_minBytes is private and set only through the attribute (a string
// lookup): it is reached as RED's average is above.
struct CoDelMinBytes { typedef uint32_t CoDelQueueDisc::*type; friend type RedGet(CoDelMinBytes); };
template struct RedRob<CoDelMinBytes, &CoDelQueueDisc::m_minBytes>;
static Ptr<QueueDisc> fqLinuxQ;
static uint32_t fqLinuxMtu = 0;
static uint64_t fqLinuxSets = 0;
// ns-3 3.44 cannot drop a flow queue's last packet: when a CoDel drop
// empties the internal queue, CoDelQueueDisc::DoDequeue reads the null
// item's time stamp after its `end:` label (`ldelay = ... -
// item->GetTimeStamp()`, NS_ASSERT "Attempted to dereference zero
// pointer"), which its default MinBytes hides. Linux drops it
// (codel_dequeue: the next dequeue_func returns NULL, codel_should_drop(NULL)
// leaves the dropping state, fq_codel_dequeue moves on). So where a packet
// that cannot be marked (Not-ECT, or ECN off) leaves its flow queue empty,
// its threshold is 1 for that one decision (`0 < 1`: not dropped): the one
// case in which the repair is not Linux's, counted in fqLinuxKept where
// the drop was due. A
// markable last packet keeps Linux's rule (a mark does not empty the queue).
struct CoDelUseEcn { typedef bool CoDelQueueDisc::*type; friend type RedGet(CoDelUseEcn); };
template struct RedRob<CoDelUseEcn, &CoDelQueueDisc::m_useEcn>;
static size_t fqLinuxWired = 0;
static uint64_t fqLinuxKept = 0;
// --ns3-fqcodel linux-mark: also the next mark's time as Linux sets it.
// In the dropping state, a packet marked instead of dropped schedules the
// next signal from the previous one's due time: Linux codel_dequeue,
// `vars->drop_next = codel_control_law(vars->drop_next, ...)`, as ours
// (crates/control/src/queue/aqm/codel.rs) and as ns-3 does after a drop;
// ns-3 3.44's marking branch uses the dequeue instant,
// `m_dropNext = ControlLaw(now, ...)`, so a late dequeue delays every later
// mark. ControlLaw(t) is t + interval * m_recInvSqrt (the same step from
// either origin), so the repair moves m_dropNext back by (now - old due
// time): old + (ns-3's value - now). The Mark trace fires inside Mark(),
// before ns-3 writes m_dropNext (private, a TracedValue whose callback runs
// before the write): the old value and the instant are kept there, and the
// correction is made at the flow queue's next internal dequeue, before
// DoDequeue reads m_dropNext again. Entering the dropping state (m_dropping
// still false when Mark fires) schedules from now in Linux too.
struct CoDelDropNext { typedef TracedValue<uint32_t> CoDelQueueDisc::*type; friend type RedGet(CoDelDropNext); };
template struct RedRob<CoDelDropNext, &CoDelQueueDisc::m_dropNext>;
struct CoDelDropping { typedef TracedValue<bool> CoDelQueueDisc::*type; friend type RedGet(CoDelDropping); };
template struct RedRob<CoDelDropping, &CoDelQueueDisc::m_dropping>;
struct CoDelTarget { typedef Time CoDelQueueDisc::*type; friend type RedGet(CoDelTarget); };
template struct RedRob<CoDelTarget, &CoDelQueueDisc::m_target>;
struct CoDelFirstAbove { typedef uint32_t CoDelQueueDisc::*type; friend type RedGet(CoDelFirstAbove); };
template struct RedRob<CoDelFirstAbove, &CoDelQueueDisc::m_firstAboveTime>;
struct CoDelMarkFix { bool pending; uint32_t old, at; };
static bool fqLinuxMark = false;
static uint64_t fqLinuxMarkFixes = 0;
static std::map<CoDelQueueDisc*, CoDelMarkFix> fqLinuxMarkPending;
static void FqLinuxMarked(CoDelQueueDisc* c, Ptr<const QueueDiscItem>, const char* reason) {
    if (std::strcmp(reason, CoDelQueueDisc::TARGET_EXCEEDED_MARK) != 0 || !(c->*RedGet(CoDelDropping())).Get()) return;
    fqLinuxMarkPending[c] = {true, (c->*RedGet(CoDelDropNext())).Get(),
                             static_cast<uint32_t>(Simulator::Now().GetNanoSeconds() >> 10)};  // CoDelGetTime
}
static void FqLinuxDequeued(CoDelQueueDisc* c, Ptr<const QueueDiscItem> item) {
    if (fqLinuxMark) {
        auto it = fqLinuxMarkPending.find(c);
        if (it != fqLinuxMarkPending.end() && it->second.pending) {
            uint32_t ns3 = (c->*RedGet(CoDelDropNext())).Get();
            c->*RedGet(CoDelDropNext()) = it->second.old + (ns3 - it->second.at);  // mod 2^32, as CoDel time
            it->second.pending = false;
            fqLinuxMarkFixes++;
        }
    }
    // Only a last packet under a threshold of 0 can be dropped into an empty
    // queue (a threshold above 0 keeps it: `0 < m_minBytes`).
    if (!item || c->GetInternalQueue(0)->GetNBytes() > 0 || c->*RedGet(CoDelMinBytes()) > 0) return;
    uint8_t tos = 0;
    bool markable = c->*RedGet(CoDelUseEcn()) && item->GetUint8Value(QueueItem::IP_DSFIELD, tos) && (tos & 0x3) != 0;
    if (markable) return;
    c->*RedGet(CoDelMinBytes()) = 1;
    // Counted only where ns-3's CoDel, with Linux's threshold, would have
    // dropped it: OkToDrop's sojourn and interval tests, and, in the
    // dropping state, the due time (codel-queue-disc.cc, DoDequeue).
    uint32_t now = static_cast<uint32_t>(Simulator::Now().GetNanoSeconds() >> 10);  // CoDelGetTime
    uint32_t sojourn = static_cast<uint32_t>((Simulator::Now() - item->GetTimeStamp()).GetNanoSeconds() >> 10);
    uint32_t target = static_cast<uint32_t>((c->*RedGet(CoDelTarget())).GetNanoSeconds() >> 10);
    uint32_t above = c->*RedGet(CoDelFirstAbove());
    bool ok = (int64_t)sojourn - (int64_t)target >= 0 && above != 0 && (int64_t)now - (int64_t)above > 0;
    bool due = !(c->*RedGet(CoDelDropping())).Get() || (int64_t)now - (int64_t)(c->*RedGet(CoDelDropNext())).Get() >= 0;
    if (ok && due) fqLinuxKept++;
}
static void FqLinuxBacklog(uint32_t, uint32_t total) {
    size_t n = fqLinuxQ->GetNQueueDiscClasses();
    // A flow queue is made at its first packet, whose enqueue moves the
    // total (QueueDisc::PacketEnqueued): wired here before its first dequeue.
    for (; fqLinuxWired < n; fqLinuxWired++) {
        Ptr<QueueDisc> c = fqLinuxQ->GetQueueDiscClass(fqLinuxWired)->GetQueueDisc();
        auto* codel = static_cast<CoDelQueueDisc*>(PeekPointer(c));
        c->GetInternalQueue(0)->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&FqLinuxDequeued, codel));
        if (fqLinuxMark) c->TraceConnectWithoutContext("Mark", MakeBoundCallback(&FqLinuxMarked, codel));
    }
    for (size_t i = 0; i < n; i++) {
        Ptr<QueueDisc> c = fqLinuxQ->GetQueueDiscClass(i)->GetQueueDisc();
        uint32_t own = c->GetInternalQueue(0)->GetNBytes();
        uint32_t others = total > own ? total - own : 0;
        static_cast<CoDelQueueDisc*>(PeekPointer(c))->*RedGet(CoDelMinBytes()) =
            others > fqLinuxMtu ? 0 : fqLinuxMtu + 1 - others;
        fqLinuxSets++;
    }
}
bool FqCoDelLinuxBacklog(Ptr<QueueDisc> q, uint32_t mtu, bool markFromDue) {
    if (!DynamicCast<FqCoDelQueueDisc>(q)) return false;
    fqLinuxQ = q;
    fqLinuxMark = markFromDue;
    fqLinuxMarkFixes = 0;
    fqLinuxMarkPending.clear();
    fqLinuxMtu = mtu;
    fqLinuxSets = 0;
    fqLinuxWired = 0;
    fqLinuxKept = 0;
    return q->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&FqLinuxBacklog));
}
uint64_t FqCoDelLinuxSets() { return fqLinuxSets; }
// Last packets of a flow queue kept that Linux would have dropped (above).
uint64_t FqCoDelLinuxKept() { return fqLinuxKept; }
// Marks in the dropping state whose next due time was moved as Linux's.
uint64_t FqCoDelLinuxMarkFixes() { return fqLinuxMarkFixes; }
// Flow queues whose threshold is not MTU + 1 - (the other flow queues'
// bytes) as the queue disc stands now (0 when the repair is wired).
uint32_t FqCoDelLinuxMismatches() {
    uint32_t total = fqLinuxQ->GetNBytes(), bad = 0;
    for (size_t i = 0; i < fqLinuxQ->GetNQueueDiscClasses(); i++) {
        Ptr<QueueDisc> c = fqLinuxQ->GetQueueDiscClass(i)->GetQueueDisc();
        uint32_t others = total - c->GetInternalQueue(0)->GetNBytes();
        uint32_t want = others > fqLinuxMtu ? 0 : fqLinuxMtu + 1 - others;
        if (static_cast<CoDelQueueDisc*>(PeekPointer(c))->*RedGet(CoDelMinBytes()) != want) bad++;
    }
    return bad;
}

// FQ-CoDel's and FQ-PIE's DRR quantum: ns-3 has no attribute for it and
// takes the device MTU (1600 here) unless set before initialization.
bool SetFqQuantum(Ptr<QueueDisc> q, uint32_t quantum) {
    if (auto fq = DynamicCast<FqCoDelQueueDisc>(q)) { fq->SetQuantum(quantum); return true; }
    if (auto fq = DynamicCast<FqPieQueueDisc>(q)) { fq->SetQuantum(quantum); return true; }
    return false;
}
uint32_t GetFqQuantum(Ptr<QueueDisc> q) {
    if (auto fq = DynamicCast<FqCoDelQueueDisc>(q)) return fq->GetQuantum();
    if (auto fq = DynamicCast<FqPieQueueDisc>(q)) return fq->GetQuantum();
    return 0;
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
    Time rto;  // the retransmission timeout (TcpSocketBase's "RTO" trace)
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
        if (h.GetFlags() & TcpHeader::CWR) o << " CWR";
    } else {
        o << "ack " << h.GetAckNumber().GetValue() << " win=" << h.GetWindowSize() << " sack=" << SackStr(h);
        if (h.GetFlags() & TcpHeader::ECE) o << " ECE";
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
      << " retrans=" << b->GetRetransmitsCount() << " rwnd=" << L.rwnd << " rto=" << L.rto.GetSeconds();
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
static void LogRto(Time, Time v) { L.rto = v; }
static void LogNxt(SequenceNumber32, SequenceNumber32 v) { L.nxt = v.GetValue(); }
static void LogMax(SequenceNumber32, SequenceNumber32 v) { L.max = v.GetValue(); }
static void LogCong(TcpSocketState::TcpCongState_t old, TcpSocketState::TcpCongState_t now) {
    if (LogOn() && now == TcpSocketState::CA_LOSS && L.cong != TcpSocketState::CA_LOSS) {
        LogLine("timer side 0");
        Simulator::ScheduleNow(&LogState);
    }
    if (LogOn()) LogLine(std::string("cong ") + CongName(old) + "->" + CongName(now));
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
    if (ip.GetEcn() == Ipv4Header::ECN_CE) line += " CE";
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
// DCTCP's estimate at the end of each observation window (TcpDctcp's
// "CongestionEstimate": RFC 8257 section 3.3 steps 4-6), as ours' `alpha` lines.
static void LogAlpha(uint32_t marked, uint32_t acked, double alpha) {
    if (!LogOn()) return;
    std::ostringstream o;
    o << "alpha " << std::setprecision(6) << alpha << " marked=" << marked << " acked=" << acked;
    LogLine(o.str());
}
static void LogHookSocket(Ptr<Socket> s) {
    L.sock = DynamicCast<TcpSocketBase>(s);
    PointerValue cc;
    s->GetAttribute("CongestionOps", cc);
    if (Ptr<TcpDctcp> d = DynamicCast<TcpDctcp>(cc.Get<TcpCongestionOps>()))
        d->TraceConnectWithoutContext("CongestionEstimate", MakeCallback(&LogAlpha));
    s->TraceConnectWithoutContext("Tx", MakeCallback(&LogTx));
    s->TraceConnectWithoutContext("Rx", MakeCallback(&LogRx));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&LogCwnd));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&LogSsth));
    s->TraceConnectWithoutContext("RWND", MakeCallback(&LogRwnd));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&LogRto));
    s->TraceConnectWithoutContext("NextTxSequence", MakeCallback(&LogNxt));
    s->TraceConnectWithoutContext("HighestSequence", MakeCallback(&LogMax));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&LogCong));
}
uint32_t LogWrite(std::string path) {
    std::ofstream f(path);
    for (auto& l : L.lines) f << l << "\n";
    return L.lines.size();
}


static void HookSocket(uint32_t i, Ptr<BulkSendApplication> app) {
    Ptr<Socket> s = app->GetSocket();
    if (!s) return;
    InstallPrr(DynamicCast<TcpSocketBase>(s));  // prr.cc: as shipped unless --prr says otherwise
    S.congSince[i] = Simulator::Now().GetSeconds();
    if ((int32_t) i == L.flow) LogHookSocket(s);
    // After the log's hook: the log shows the ECE the receiver sent.
    if (EcnRfc3168) s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&EcnRfc3168Rx, i));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&SockTx, i));
    s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&SockRetx, i));
    S.sock[i] = DynamicCast<TcpSocketBase>(s);
    s->TraceConnectWithoutContext("HighestSequence", MakeBoundCallback(&SockHighTx, i));
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&SockAckRx, i));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&SockCong, i));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&SockRto, i));
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

// The device queue's bytes and packets, each integrated over time.
static void DevQBytes(uint32_t oldV, uint32_t newV) {
    double t = Simulator::Now().GetSeconds();
    S.devInt += oldV * (t - S.devLast);
    S.devLast = t;
    S.devCur = newV;
}
static void DevQPackets(uint32_t oldV, uint32_t newV) {
    double t = Simulator::Now().GetSeconds();
    S.devPktInt += oldV * (t - S.devPktLast);
    S.devPktLast = t;
    S.devPktCur = newV;
}
void ConnectBottleneck(Ptr<NetDevice> dev) {
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&BnTx));
    Ptr<Queue<Packet>> q = DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
    q->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&DevQBytes));
    q->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&DevQPackets));
}

uint64_t Rx(uint32_t i) { return S.rx[i]; }
uint64_t Tx(uint32_t i) { return S.tx[i]; }
uint64_t Retx(uint32_t i) { return S.retx[i]; }
double Done(uint32_t i) { return S.done[i]; }
uint64_t Recoveries(uint32_t i) { return S.recoveries[i]; }
uint64_t Rtos(uint32_t i) { return S.rtos[i]; }
uint64_t RecoveriesBelowRtoPoint(uint32_t i) { return S.recoveriesBelowRtoPoint[i]; }
uint64_t RecoveriesOnAdvancingAck(uint32_t i) { return S.recoveriesOnAdvancingAck[i]; }
uint64_t RtoExpiries(uint32_t i) { return S.rtoExpiries[i]; }
uint64_t Cwrs(uint32_t i) { return S.cwrs[i]; }
uint64_t Marks() { return S.marks; }
double QueueIntegral(double now) { return S.qInt + S.qCur * (now - S.qLast); }
// IP bytes waiting in the device queue, integrated (byte-s): the PPP
// header's 2 bytes per packet taken off.
double DeviceQueueIntegral(double now) {
    double bytes = S.devInt + S.devCur * (now - S.devLast);
    double packets = S.devPktInt + S.devPktCur * (now - S.devPktLast);
    return bytes - 2.0 * packets;
}
uint32_t QueueMax() { return S.qMax; }
uint64_t BnBytes() { return S.bnBytes; }
uint64_t BnPackets() { return S.bnPackets; }
uint32_t Remaining() { return S.remaining; }
}  // namespace netreturn_ns3
