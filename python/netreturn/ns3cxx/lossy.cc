// the SARBE paper's lossy link in ns-3 3.44 (python/netreturn/ns3lossy.py): what the
// dumbbell's sinks (dumbbell.cc, compiled before this file) do not record,
// the ssthresh set at each loss reaction and TcpWestwoodPlus's bandwidth
// estimate (its `EstimatedBW` trace source) over time.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include <array>
#include <limits>
#include <list>
#include <map>
#include <vector>

namespace netreturn_ns3 {
using namespace ns3;

struct Lossy {
    bool westwood = false;
    bool renoSackLinuxExit = false;
    bool rfc6582Exit = false;
    bool rfc6582Strict = false;  // LossyRfc6582Strict (--renosack rfc6582-strict)
    uint64_t staleLostCleared = 0;
    uint64_t openMarksCleared = 0;
    bool lossExitRfc5681 = false;  // LossyLossExit (--loss-exit rfc5681)
    uint64_t lossExitGrowths = 0;  // NetreturnNewRenoLossExit: ACKs given one segment  // other entries into CA_OPEN that found a mark (rfc6582-strict)
    double ssthSum = 0;
    uint64_t ssthN = 0;
    std::vector<double> bweT, bweV;  // s, bytes per second
    uint64_t phyRxDrops = 0, queueDrops = 0;
    uint64_t rtoExpiries = 0;
    std::string ccName;  // the congestion control the sender's socket runs
    bool karnRto = false;  // keep a backed-off RTO until an RTT sample (LossyKarnRto)
    Ptr<TcpSocketBase> sock;
    Time minRto;
    uint64_t rtoCollapses = 0;  // RTO lowered after a timeout before any RTT sample
    bool backedOff = false;
};
static Lossy LS;

void LossyReset(bool westwood, bool renoSackLinuxExit) {
    LS = Lossy();
    LS.westwood = westwood;
    LS.renoSackLinuxExit = renoSackLinuxExit;
}

// Every ssthresh the sender sets after its socket exists is a loss reaction
// (3 dupACKs: GetSsThresh in EnterRecovery; RTO: in ReTxTimeout).
static void LossySsth(uint32_t, uint32_t v) {
    if (v == std::numeric_limits<uint32_t>::max()) return;
    LS.ssthSum += v;
    LS.ssthN++;
}
static void LossyBwe(DataRate, DataRate v) {
    LS.bweT.push_back(Simulator::Now().GetSeconds());
    LS.bweV.push_back(v.GetBitRate() / 8.0);
}

// Without SACK, ns-3 3.44 guesses a SACK scoreboard from duplicate ACKs
// (TcpTxBuffer::AddRenoSack: each dupACK marks the next unmarked segment
// after SND.UNA) and clears it only on a timeout (ReTxTimeout ->
// ResetRenoSack; ns-3-dev the same). Marks left on segments above the
// recovery point survive the end of recovery, so BytesInFlight stays below
// SND.NXT - SND.UNA and the sender puts more than cwnd in flight.
// Linux clears its Reno sacked_out when recovery ends (tcp_input.c,
// tcp_fastretrans_alert, case TCP_CA_Recovery: tcp_reset_reno_sack), as
// RFC 6582's flight size SND.NXT - SND.UNA implies. With `linuxExit` the
// harness does the same when ns-3 leaves CA_RECOVERY (the state is set
// before NewAck sends, so the first send after recovery already sees it).
//
// --renosack rfc6582: and no loss marks left either. Without SACK, ns-3
// 3.44 leaves fast recovery with the new head of its sent list still marked
// lost (m_lostOut = 1 segment, nothing retransmitted: seen at 59 of 69
// exits, NewReno, 0.001 %, seed 1, 20-40 s), so that segment is
// retransmitted at once and DupAck's second test, IsLost(HighACK + 1), which
// has no recover check, starts a new recovery on the second duplicate ACK
// (59 of those 69 entries came with two dupACKs). RFC 6582 keeps no
// scoreboard: after recovery the flight is SND.NXT - SND.UNA and a new fast
// retransmit needs three duplicate ACKs (section 3.2 steps 1-2). The repair
// clears every loss and retransmission mark on the sent list when ns-3
// leaves CA_RECOVERY, so BytesInFlight is SND.NXT - SND.UNA again. It
// changed nothing measurable (docs/validation.md, val4): the marks come back
// one ACK later (rfc6582-strict below). The marks are private: reached as
// dumbbell.cc reaches RED's average.
struct TxSentList { typedef std::list<TcpTxItem*> TcpTxBuffer::*type; friend type RedGet(TxSentList); };
template struct RedRob<TxSentList, &TcpTxBuffer::m_sentList>;
struct TxLostOut { typedef uint32_t TcpTxBuffer::*type; friend type RedGet(TxLostOut); };
template struct RedRob<TxLostOut, &TcpTxBuffer::m_lostOut>;
struct TxRetrans { typedef uint32_t TcpTxBuffer::*type; friend type RedGet(TxRetrans); };
template struct RedRob<TxRetrans, &TcpTxBuffer::m_retrans>;
struct ItemLost { typedef bool TcpTxItem::*type; friend type RedGet(ItemLost); };
template struct RedRob<ItemLost, &TcpTxItem::m_lost>;
static void ClearLossMarks(Ptr<TcpTxBuffer> b) {
    TcpTxBuffer& t = *b;
    for (TcpTxItem* item : t.*RedGet(TxSentList())) {
        item->*RedGet(ItemLost()) = false;
        item->m_retrans = false;
    }
    t.*RedGet(TxLostOut()) = 0;
    t.*RedGet(TxRetrans()) = 0;
}
// --renosack rfc6582-strict: no guessed scoreboard outside fast recovery
// (issue 25, branch val7). The rfc6582 repair above is undone one ACK
// later: after recovery the first duplicate ACK moves ns-3 to CA_DISORDER
// and marks the second segment SACKed (DupAck, limited transmit ->
// AddRenoSack); the next cumulative ACK makes that segment the head, and
// TcpTxBuffer::DiscardUpTo, finding the head SACKed ("our wrong guessing
// when adding Reno dupacks"), moves the mark one segment on (AddRenoSack)
// and marks the new head lost (MarkHeadAsLost) before ProcessAck returns to
// CA_OPEN. Each later ACK repeats the move, so in CA_OPEN the head rides
// with a lost mark and its successor with a SACK mark: BytesInFlight is two
// segments below SND.NXT - SND.UNA, NextSeg (rule 1) retransmits the head,
// which is in flight, when the window opens, and the next duplicate ACK
// enters fast recovery at once through DupAck's second test,
// IsLost(m_highRxAckMark), which needs no three dupACKs and no recover
// check (NewReno, 0.001 %, seed 1, --renosack rfc6582: 213 of 11 388
// CA_OPEN states carry the pair; 35 of 273 recoveries entered on the first
// duplicate ACK; 240 of 273 entered with SND.UNA already at the receiver).
// In such a recovery every ACK is a partial ACK and retransmits the head
// (RFC 6582 section 3.2 step 5, as ns-3 does), which the receiver holds;
// the duplicates' own duplicate ACKs start the next one.
// RFC 6582 keeps no scoreboard: outside recovery the flight is SND.NXT -
// SND.UNA (section 3.2 step 2's FlightSize, RFC 5681), and only three
// duplicate ACKs that pass the recover check enter recovery (section 3.2
// step 1); limited transmit's two segments (RFC 3042) end with the new ACK.
// So every entry into CA_OPEN (from CA_DISORDER, CA_RECOVERY or CA_LOSS)
// clears the SACK, loss and retransmission marks: then BytesInFlight is
// SND.NXT - SND.UNA in CA_OPEN, no mark is left for IsLost, and recovery
// starts only at DupAck's first test, the third duplicate ACK with ns-3's
// recover check (`m_highRxAckMark >= m_recover || !m_recoverActive`, the
// same as ours' `snd_una >= recover`, crates/tcp/src/connection/recovery.rs).
// Inside recovery ns-3 is left as built: a dupACK adds one SACK mark (one
// segment left the network, as RFC 6582 step 4's inflation), a partial ACK
// marks the head lost and DoRetransmit resends it (step 5), and NextSeg's
// rule 1 finds no other lost mark, so nothing beyond the head is resent.
static void LossyCong(Ptr<TcpSocketBase> s, TcpSocketState::TcpCongState_t before,
                      TcpSocketState::TcpCongState_t now) {
    Ptr<TcpTxBuffer> b = s->GetTxBuffer();
    if (before == TcpSocketState::CA_RECOVERY && now == TcpSocketState::CA_OPEN) {
        b->ResetRenoSack();
        if (LS.rfc6582Exit) {
            if (b->GetLost() > 0) LS.staleLostCleared++;
            ClearLossMarks(b);
        }
    } else if (LS.rfc6582Strict && now == TcpSocketState::CA_OPEN) {
        if (b->GetSacked() > 0 || b->GetLost() > 0 || b->GetRetransmitsCount() > 0) LS.openMarksCleared++;
        b->ResetRenoSack();
        ClearLossMarks(b);
    }
}
void LossyRfc6582(bool on) { LS.rfc6582Exit = on; }
void LossyRfc6582Strict(bool on) { LS.rfc6582Strict = on; }
uint64_t LossyOpenMarksCleared() { return LS.openMarksCleared; }
uint64_t LossyStaleLostCleared() { return LS.staleLostCleared; }

// ns-3 3.44's TcpWestwoodPlus with its delivered count repaired (cause 2 of
// docs/validation.md, "ns-3's TcpWestwoodPlus counts delivered segments
// twice"): TcpSocketBase passes PktsAcked 1 for every duplicate ACK and, on
// the ACK that covers them, every segment it acknowledges, those the dupACKs
// counted included. As Linux westwood_acked_count (and ours,
// crates/tcp/src/cc/westwood.rs): a dupACK adds one segment to `accounted`;
// an ACK acknowledging more than one segment ("partial or delayed ack")
// counts only what `accounted` has not counted yet, at least one segment.
struct WestwoodAckedCount {
    bool started = false;
    SequenceNumber32 lastAck{0};
    uint32_t accounted = 0;
    uint32_t Count(Ptr<TcpSocketState> tcb, uint32_t segs) {
        if (started && tcb->m_lastAckedSeq == lastAck) {
            accounted += segs;  // a duplicate ACK: SND.UNA did not move
        } else if (segs > 1) {
            if (accounted >= segs) {
                accounted -= segs;
                segs = 1;
            } else {
                segs -= accounted;
                accounted = 0;
            }
        }
        started = true;
        lastAck = tcb->m_lastAckedSeq;
        return segs;
    }
};

// --loss-exit rfc5681 (NetreturnNewRenoLossExit below has the why): the ACK
// that ends CA_LOSS reaches IncreaseWindow with no segment; RFC 5681 section
// 3.1 grows cwnd by up to one SMSS on it. One rule for NewReno and both
// Westwood+ variants.
static uint32_t LossExitSegments(uint32_t segsAcked) {
    if (!LS.lossExitRfc5681 || segsAcked > 0) return segsAcked;
    LS.lossExitGrowths++;
    return 1;
}
void LossyLossExit(bool on) { LS.lossExitRfc5681 = on; }

class NetreturnWestwoodPlus : public TcpWestwoodPlus {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnWestwoodPlus")
                                .SetParent<TcpWestwoodPlus>()
                                .SetGroupName("Internet")
                                .AddConstructor<NetreturnWestwoodPlus>();
        return tid;
    }
    std::string GetName() const override { return "NetreturnWestwoodPlus"; }
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segs, const Time& rtt) override {
        TcpWestwoodPlus::PktsAcked(tcb, m_count.Count(tcb, segs), rtt);
    }
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segsAcked) override {
        TcpWestwoodPlus::IncreaseWindow(tcb, LossExitSegments(segsAcked));
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NetreturnWestwoodPlus>(this); }

  private:
    WestwoodAckedCount m_count;
};

// ns-3 3.44's TcpWestwoodPlus with Linux's estimator (tcp_westwood.c),
// which ours follows (crates/tcp/src/cc/westwood.rs): the delivered count
// repaired as above; one sample per window that closes at the first ACK
// after max(RTT, 50 ms) (`westwood_update_window`, RTT the last sample,
// TCP_WESTWOOD_RTT_MIN), bytes over the window's length; and two cascaded
// 7/8 EWMAs (`westwood_filter`, `westwood_do_filter`) instead of ns-3's
// sample every RTT (an event) through a Tustin filter (alpha 0.9). The
// loss reaction stays ns-3's (GetSsThresh = BWE * minRtt, at least two
// segments). Written from the Linux source's rules, not from ours.
class NetreturnWestwoodLinux : public TcpWestwoodPlus {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnWestwoodLinux")
                                .SetParent<TcpWestwoodPlus>()
                                .SetGroupName("Internet")
                                .AddConstructor<NetreturnWestwoodLinux>();
        return tid;
    }
    std::string GetName() const override { return "NetreturnWestwoodLinux"; }
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segs, const Time& rtt) override {
        Time now = Simulator::Now();
        if (!rtt.IsZero()) m_rtt = rtt;
        if (!m_windowOpen) {
            m_windowStart = now;
            m_windowOpen = true;
        }
        // westwood_update_window: the window closes once more than
        // max(RTT, 50 ms) has passed since it opened.
        if (!m_rtt.IsZero()) {
            Time delta = now - m_windowStart;
            if (delta > std::max(m_rtt, MilliSeconds(50))) {
                double sample = m_bk / delta.GetSeconds();  // bytes per second
                if (m_bwe == 0 && m_bwNs == 0) {
                    m_bwNs = sample;
                    m_bwe = sample;
                } else {
                    m_bwNs = (7 * m_bwNs + sample) / 8;
                    m_bwe = (7 * m_bwe + m_bwNs) / 8;
                }
                m_currentBW = DataRate(static_cast<uint64_t>(m_bwe * 8));
                m_bk = 0;
                m_windowStart = now;
            }
        }
        // westwood_acked_count, in segments as ns-3 reports them.
        m_bk += static_cast<double>(m_count.Count(tcb, segs)) * tcb->m_segmentSize;
    }
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segsAcked) override {
        TcpWestwoodPlus::IncreaseWindow(tcb, LossExitSegments(segsAcked));
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NetreturnWestwoodLinux>(this); }

  private:
    WestwoodAckedCount m_count;
    bool m_windowOpen = false;
    Time m_rtt{0}, m_windowStart{0};
    double m_bk = 0, m_bwNs = 0, m_bwe = 0;
};
// ns-3 3.44's TcpNewReno with slow start's growth on the ACK that ends
// CA_LOSS (ns3lossy.py --loss-exit rfc5681; a diagnostic of issue 25,
// branch val7, docs/validation.md "ns-3's NewReno without SACK as RFC 6582,
// repaired"). TcpSocketBase::ProcessAck, on the ACK that leaves CA_LOSS,
// passes IncreaseWindow only the segments beyond m_recover ("segsAcked =
// (ackNumber - m_recover) / m_segmentSize"), none when that ACK is the one
// for the last segment sent before the timeout, so after a timeout whose
// retransmission fills the only hole cwnd stays at one segment for another
// round trip. RFC 5681 section 3.1 grows cwnd by up to one SMSS for every
// ACK that acknowledges new data; so does ours. IncreaseWindow is called
// with no segment only there (CA_OPEN ACKs and CA_LOSS partial ACKs carry
// at least one whole segment here, 1000-byte segments throughout).
class NetreturnNewRenoLossExit : public TcpNewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnNewRenoLossExit")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<NetreturnNewRenoLossExit>();
        return tid;
    }
    std::string GetName() const override { return "NetreturnNewRenoLossExit"; }
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segsAcked) override {
        TcpNewReno::IncreaseWindow(tcb, LossExitSegments(segsAcked));
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NetreturnNewRenoLossExit>(this); }
};
uint64_t LossyLossExitGrowths() { return LS.lossExitGrowths; }
void LossyRegister() {
    NetreturnWestwoodPlus::GetTypeId();
    NetreturnWestwoodLinux::GetTypeId();
    NetreturnNewRenoLossExit::GetTypeId();
}

// RTO expiries. The dumbbell's count (entries into CA_LOSS) misses a
// timeout that expires again in CA_LOSS (backoff: the state does not
// change); every expiry doubles the RTO (TcpSocketBase::ReTxTimeout,
// `m_rto = Min(m_rto * 2, 60 s)`), which no RTT update does exactly.
// ns-3 3.44 doubles the RTO at a timeout, but TcpSocketBase::NewAck
// recomputes it from the estimator on every new ACK, so the first ACK of
// retransmitted data (no RTT sample, Karn) ends the backoff. RFC 6298
// section 5 (5.5 and the note after 5.7) keeps the backed-off RTO "until a
// new RTT measurement is obtained", as ours (crates/tcp/src/rtt.rs). The
// repair (`--rto rfc6298`): the socket's MinRto raised to the backed-off RTO
// at each timeout and put back when an RTT sample moves the smoothed RTT
// (the "RTT" trace fires before NewAck recomputes the RTO).
static void LossyRto(Time before, Time now) {
    if (now < before && LS.backedOff) LS.rtoCollapses++;
    if (now == before * 2 || (now == Seconds(60) && before < now)) {
        LS.rtoExpiries++;
        LS.backedOff = true;
        if (LS.karnRto) LS.sock->SetMinRto(now);
    }
}
static void LossyRttSample(Time, Time) {
    LS.backedOff = false;
    if (LS.karnRto) LS.sock->SetMinRto(LS.minRto);
}
void LossyKarnRto(bool on) { LS.karnRto = on; }
uint64_t LossyRtoCollapses() { return LS.rtoCollapses; }

// The repair above on socket `s` (also used by ngwa.cc).
void RenoSackLinuxExit(Ptr<TcpSocketBase> s) {
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&LossyCong, s));
}

static void LossyHook(Ptr<BulkSendApplication> app) {
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
    if (!s) return;
    BooleanValue sack;
    s->GetAttribute("Sack", sack);
    if (LS.renoSackLinuxExit && !sack.Get()) RenoSackLinuxExit(s);
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&LossySsth));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&LossyRto));
    LS.sock = s;
    LS.minRto = s->GetMinRto();
    s->TraceConnectWithoutContext("RTT", MakeCallback(&LossyRttSample));
    PointerValue pv;
    s->GetAttribute("CongestionOps", pv);
    LS.ccName = pv.Get<TcpCongestionOps>()->GetInstanceTypeId().GetName();
    if (LS.westwood) {
        pv.Get<TcpCongestionOps>()->TraceConnectWithoutContext("EstimatedBW", MakeCallback(&LossyBwe));
    }
}
void ScheduleLossyHook(Ptr<Application> app, double startS) {
    Simulator::Schedule(Seconds(startS) + NanoSeconds(1), &LossyHook, DynamicCast<BulkSendApplication>(app));
}

// Packets the error models destroyed (PhyRxDrop of a receiving device) and
// packets the device queues refused, over every device.
static void LossyPhyDrop(Ptr<const Packet>) { LS.phyRxDrops++; }
static void LossyQueueDrop(Ptr<const Packet>) { LS.queueDrops++; }
void LossyCountDrops(Ptr<NetDevice> dev) {
    dev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&LossyPhyDrop));
    DynamicCast<PointToPointNetDevice>(dev)->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&LossyQueueDrop));
}
// Per device: packets put on the wire, received whole, handed up (diagnostics).
static std::map<uint32_t, std::array<uint64_t, 4>> devCount;
static void DevTx(uint32_t k, Ptr<const Packet>) { devCount[k][0]++; }
static void DevRx(uint32_t k, Ptr<const Packet>) { devCount[k][1]++; }
static void DevMacRx(uint32_t k, Ptr<const Packet>) { devCount[k][2]++; }
static void DevMacTx(uint32_t k, Ptr<const Packet>) { devCount[k][3]++; }
void LossyCountDevice(uint32_t k, Ptr<NetDevice> dev) {
    devCount[k] = {0, 0, 0, 0};
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeBoundCallback(&DevTx, k));
    dev->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&DevRx, k));
    dev->TraceConnectWithoutContext("MacRx", MakeBoundCallback(&DevMacRx, k));
    dev->TraceConnectWithoutContext("MacTx", MakeBoundCallback(&DevMacTx, k));
}
uint64_t LossyDeviceCount(uint32_t k, uint32_t what) { return devCount[k][what]; }
// A device without a queue disc whose queue is stopped (full: NetDeviceQueue
// stops it when one more MTU would overflow) makes the traffic-control layer
// drop the packet (TrafficControlLayer::Send, `TcDrop`), not the device queue:
// these are the tail drops of our DropTail buffers.
static std::vector<double> tcDropT;
static void LossyTcDrop(Ptr<const Packet>) {
    LS.queueDrops++;
    tcDropT.push_back(Simulator::Now().GetSeconds());
}
void LossyCountTcDrops(Ptr<Node> n) {
    tcDropT.clear();
    n->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext("TcDrop", MakeCallback(&LossyTcDrop));
}
uint32_t LossyTcDropLen() { return tcDropT.size(); }
double LossyTcDropT(uint32_t k) { return tcDropT[k]; }
uint64_t LossyRtoExpiries() { return LS.rtoExpiries; }
uint64_t LossyPhyRxDrops() { return LS.phyRxDrops; }
uint64_t LossyQueueDrops() { return LS.queueDrops; }

double LossySsthMean() { return LS.ssthN ? LS.ssthSum / LS.ssthN : std::nan(""); }
uint64_t LossySsthCount() { return LS.ssthN; }
// Time mean of the estimate from `fromS` to the last change (a step function).
double LossyBweMean(double fromS) {
    double area = 0, span = 0;
    for (size_t k = 0; k + 1 < LS.bweT.size(); k++) {
        double a = std::max(LS.bweT[k], fromS), b = LS.bweT[k + 1];
        if (b > a) { area += LS.bweV[k] * (b - a); span += b - a; }
    }
    return span > 0 ? area / span : std::nan("");
}
uint32_t LossyBweLen() { return LS.bweT.size(); }
std::string LossyCcName() { return LS.ccName; }
double LossyBweT(uint32_t k) { return LS.bweT[k]; }
double LossyBweV(uint32_t k) { return LS.bweV[k]; }
}  // namespace netreturn_ns3
