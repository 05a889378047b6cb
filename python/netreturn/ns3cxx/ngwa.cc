// NGWA (the NGWA paper, docs/decisions.md §2.6, docs/ngwa.md) in ns-3 3.44, the paper's own
// simulator, for python/netreturn/ns3ngwa.py; compiled by cling after
// dumbbell.cc and lossy.cc. Written apart from our crates (control/src/ngwa.rs,
// control/src/ngwa_receiver.rs, tcp/src/connection/receive.rs) so the two can
// check each other.
//
//  - Router rule (the NGWA paper section 2, eq. 3; docs/decisions.md §2.6): every egress of a
//    forwarding node is an NgwaQueueDisc, a FIFO of the link's buffer that,
//    as a TCP packet leaves it, computes W_node = Br (free bytes of this
//    queue) or, with flow division (FD), 0.98 Br / nf (nf = connections
//    opened by a SYN and not yet closed by a FIN or RST seen at this queue, or
//    idle for 300 s), and writes it into the packet if the packet carries no
//    value or a larger one. The value travels in a packet tag (NgwaTag)
//    instead of IPv4 option 33: the packets are 8 bytes shorter than ours
//    (docs/validation.md, "NGWA in ns-3"). As built the queue disc marks as it
//    lets the packet go to the device queue under it (about one transmission
//    early); `--mark tx` (NgwaMarkAtTx) marks as the device starts sending it,
//    every byte waiting behind it counted, as ours (branch ngwa8).
//  - Receiver rule (eq. 2, eq. 4): the receiver host keeps the last Wngwa of
//    each connection's data (or, with SE, W = (1 - a) W + a Wngwa), and its
//    ACKs leave through an NgwaReceiverQueueDisc that rewrites the window to
//    Wa = min(Wb, Wmax, max(Wngwa, MSS)), Wb being ns-3's own window, never
//    moving the right edge it advertised left (RFC 9293 section 3.8.6.2.2), as
//    ours' Connection::window_field. Rewriting the ACK as the receiver
//    sends it is the receiver computing its window: nothing lies between.
//  - Duplicate ACKs counted at the sender as ours counts them (crates/tcp
//    connection/ack.rs, recovery.rs): an ACK with no data and no FIN, of
//    SND.UNA, data outstanding, the window unchanged (RFC 5681 section 2);
//    the run starts again on a new ACK or a timeout; a triple dupACK is the
//    third of a run, `past` every dupACK from the third on. ns-3's own count
//    (any window) is kept beside it.
//  - RFC 793 TCP (NGWA's CW off, ours `cc = "none"`): no congestion window
//    (NetreturnNoCc keeps cwnd at 1 GB), no fast retransmit (the socket's
//    ReTxThreshold is set out of reach), and after a timeout the whole
//    window is sent again at once (go-back-N, as ours), where ns-3 would
//    first wait an RTT with cwnd = 1 segment. As built first (`--rfc793
//    ns3`) it still entered fast recovery through ns-3's dupACK-guessed
//    loss marks; `--rfc793 strict` clears them (NgwaStrict793 below), so it
//    retransmits only after a timeout, as RFC 793 section 3.7 and ours.
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

namespace netreturn_ns3 {
using namespace ns3;

// ---- the value NGWA routers write (IPv4 option 33 in the paper), as a packet tag
class NgwaTag : public Tag {
  public:
    uint32_t value = 0;
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnNgwaTag").SetParent<Tag>().AddConstructor<NgwaTag>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 4; }
    void Serialize(TagBuffer b) const override { b.WriteU32(value); }
    void Deserialize(TagBuffer b) override { value = b.ReadU32(); }
    void Print(std::ostream& os) const override { os << "Wngwa=" << value; }
};

// A connection in either direction (canonical: the smaller end first), as ours' flows::canonical.
using NgwaKey = std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>;
static NgwaKey Canonical(uint32_t a, uint16_t pa, uint32_t b, uint16_t pb) {
    return std::make_pair(a, pa) <= std::make_pair(b, pb) ? NgwaKey(a, pa, b, pb) : NgwaKey(b, pb, a, pa);
}

struct NgwaCounts {
    uint64_t inserted = 0, lowered = 0, kept = 0, drops = 0;
};
static NgwaCounts NC;
static FILE* NgwaLogFile = nullptr;  // per-packet log (ns3ngwa.py --log), or none
static uint16_t NgwaFirstPort = 5000;  // flow i's sink listens on NgwaFirstPort + i (ns3ngwa.py)

// A drop in the log: the flow (from the sink's port), "drop" of data or of
// an ACK, its sequence number (data) or acknowledgment number (ACK).
static void NgwaLogDrop(Ptr<QueueDiscItem> item) {
    if (!NgwaLogFile) return;
    Ptr<Ipv4QueueDiscItem> ipi = DynamicCast<Ipv4QueueDiscItem>(item);
    TcpHeader tcp;
    if (!ipi || ipi->GetHeader().GetProtocol() != 6 || item->GetPacket()->PeekHeader(tcp) == 0) return;
    uint32_t payload = item->GetPacket()->GetSize() - tcp.GetSerializedSize();
    bool data = payload > 0;
    uint16_t port = data ? tcp.GetDestinationPort() : tcp.GetSourcePort();
    fprintf(NgwaLogFile, "%.9f %u drop %u %u 0 %s\n", Simulator::Now().GetSeconds(), (unsigned) (port - NgwaFirstPort),
            data ? tcp.GetSequenceNumber().GetValue() : tcp.GetAckNumber().GetValue(), payload,
            data ? "data" : "ack");
}

// ---- the router rule: a FIFO of `limit` whose departures are marked.
class NgwaQueueDisc : public QueueDisc {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnNgwaQueueDisc")
                                .SetParent<QueueDisc>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<NgwaQueueDisc>();
        return tid;
    }
    NgwaQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}
    bool mark = false;        // NGWA on: write W_node
    bool division = false;    // FD
    uint64_t capacity = 0;    // B of this queue in bytes (ours' buffer_bytes: a packet limit times the typical packet)
    double idle = 300.0;      // s, ours' NgwaRouterConfig::idle_timeout
    double nextSweep = 0;
    std::map<NgwaKey, double> flows;  // open connections, last seen
    // The queue's bytes over time (a diagnostic, as ours' queue_mean_bytes / queue_std_bytes): integrals of
    // bytes and bytes^2 from the first packet on; the device queue's one packet under it is not counted.
    double qSince = -1, qLast = 0, qInt = 0, qInt2 = 0;
    void Integrate() {
        double now = Simulator::Now().GetSeconds(), b = (double) GetNBytes();
        if (qSince < 0) qSince = now;
        qInt += b * (now - qLast);
        qInt2 += b * b * (now - qLast);
        qLast = now;
    }

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override {
        if (GetCurrentSize() + item > GetMaxSize()) {
            NC.drops++;
            NgwaLogDrop(item);
            DropBeforeEnqueue(item, "Queue disc limit exceeded");
            return false;
        }
        Integrate();
        return GetInternalQueue(0)->Enqueue(item);
    }
    Ptr<QueueDiscItem> DoDequeue() override {
        Integrate();
        Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (item && mark && !markAtTx) Mark(item);
        return item;
    }

  public:
    bool markAtTx = false;  // NgwaMarkAtTx: marked as the device starts sending, not as the queue disc lets go
    Ptr<PointToPointNetDevice> device;
    // The packet `p` (IPv4 header first) starts transmission: Br = capacity less every byte waiting behind it,
    // in this queue disc and in the device queue under it (ours: the backlog at the start of transmission).
    void MarkAtTransmission(Ptr<Packet> p) {
        Ptr<Packet> c = p->Copy();
        Ipv4Header ip;
        c->RemoveHeader(ip);
        if (ip.GetProtocol() != 6) return;
        TcpHeader tcp;
        if (c->PeekHeader(tcp) == 0) return;
        uint64_t waiting = GetNBytes() + device->GetQueue()->GetNBytes();
        MarkPacket(p, ip, tcp, capacity - std::min<uint64_t>(capacity, waiting));
    }

  private:
    void Track(const Ipv4Header& ip, const TcpHeader& tcp) {
        double now = Simulator::Now().GetSeconds();
        NgwaKey k = Canonical(ip.GetSource().Get(), tcp.GetSourcePort(), ip.GetDestination().Get(),
                              tcp.GetDestinationPort());
        uint8_t f = tcp.GetFlags();
        if (f & (TcpHeader::FIN | TcpHeader::RST)) {
            flows.erase(k);
        } else if (f & TcpHeader::SYN) {
            flows[k] = now;
        } else {
            auto it = flows.find(k);
            if (it != flows.end()) it->second = now;
        }
        if (now >= nextSweep) {
            for (auto it = flows.begin(); it != flows.end();) {
                it = now - it->second >= idle ? flows.erase(it) : std::next(it);
            }
            nextSweep = now + std::max(idle / 64, 0.001);
        }
    }
    void Mark(Ptr<QueueDiscItem> item) {
        Ptr<Ipv4QueueDiscItem> ipi = DynamicCast<Ipv4QueueDiscItem>(item);
        if (!ipi || ipi->GetHeader().GetProtocol() != 6) return;  // TCP packets only
        TcpHeader tcp;
        Ptr<Packet> p = item->GetPacket();
        if (p->PeekHeader(tcp) == 0) return;
        // Br: free bytes of this queue once the packet has left it (ours: at
        // its departure, the backlog behind it).
        MarkPacket(p, ipi->GetHeader(), tcp, capacity - std::min<uint64_t>(capacity, GetNBytes()));
    }
    void MarkPacket(Ptr<Packet> p, const Ipv4Header& ip, const TcpHeader& tcp, uint64_t br) {
        if (division) Track(ip, tcp);
        uint64_t nf = std::max<size_t>(flows.size(), 1);
        // Eq. 3 with FD: 0.98 Br / nf, truncated as ours (ngwa.rs, divide).
        uint32_t w = division ? (uint32_t) (0.98 * (double) br / (double) nf)
                              : (uint32_t) std::min<uint64_t>(br, UINT32_MAX);
        NgwaTag t;
        if (!p->PeekPacketTag(t)) {
            t.value = w;
            p->AddPacketTag(t);
            NC.inserted++;
        } else if (t.value > w) {
            t.value = w;
            p->ReplacePacketTag(t);
            NC.lowered++;
        } else {
            NC.kept++;
        }
    }
    bool CheckConfig() override {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0) return false;
        if (GetNInternalQueues() == 0) {
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(GetMaxSize())));
        }
        return GetNInternalQueues() == 1;
    }
    void InitializeParams() override {}
};

// ---- the receiver rule (eq. 2, eq. 4) for one connection's data direction
struct NgwaRx {
    bool has = false;
    double w = 0;
    bool hasEdge = false;
    uint32_t edge = 0;  // right edge advertised so far (sequence number)
};
using NgwaDataKey = std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>;
struct NgwaReceiverState {
    bool on = false;
    double alpha = -1;  // SE's a, < 0 without SE
    uint64_t wmax = 0, mss = 0;
    std::map<NgwaDataKey, NgwaRx> conns;
    uint64_t rewritten = 0, valued = 0;
};
static NgwaReceiverState NR;

static void NgwaRxData(Ptr<const Packet> packet, Ptr<Ipv4>, uint32_t) {
    if (!NR.on) return;
    Ptr<Packet> c = packet->Copy();
    Ipv4Header ip;
    c->RemoveHeader(ip);
    if (ip.GetProtocol() != 6) return;
    TcpHeader tcp;
    c->RemoveHeader(tcp);
    // Only data segments carry Wngwa for this receiver (ours: receive.rs, process_data).
    if (c->GetSize() == 0) return;
    NgwaTag t;
    if (!packet->PeekPacketTag(t)) return;
    NgwaRx& r = NR.conns[NgwaDataKey(ip.GetSource().Get(), tcp.GetSourcePort(), ip.GetDestination().Get(),
                                 tcp.GetDestinationPort())];
    double v = t.value;
    r.w = (r.has && NR.alpha >= 0) ? (1.0 - NR.alpha) * r.w + NR.alpha * v : v;  // eq. 4 (SE) or the last value
    r.has = true;
    NR.valued++;
}

static void NgwaRewrite(Ptr<QueueDiscItem> item) {
    Ptr<Ipv4QueueDiscItem> ipi = DynamicCast<Ipv4QueueDiscItem>(item);
    if (!ipi || ipi->GetHeader().GetProtocol() != 6) return;
    Ptr<Packet> p = item->GetPacket();
    TcpHeader tcp;
    if (p->PeekHeader(tcp) == 0) return;
    uint8_t f = tcp.GetFlags();
    if (!(f & TcpHeader::ACK) || (f & (TcpHeader::SYN | TcpHeader::RST))) return;
    const Ipv4Header& ip = ipi->GetHeader();
    // The ACK goes receiver -> sender; its data direction is the reverse.
    NgwaRx& r = NR.conns[NgwaDataKey(ip.GetDestination().Get(), tcp.GetDestinationPort(), ip.GetSource().Get(),
                                 tcp.GetSourcePort())];
    uint32_t ack = tcp.GetAckNumber().GetValue();
    uint64_t wb = tcp.GetWindowSize();  // no window scaling in the NGWA scenarios (checked in ns3ngwa.py)
    uint64_t w = wb;
    if (r.has) {
        // Wa = min(Wb, Wmax, max(Wngwa, MSS)) (ngwa_receiver.rs, advertise)
        uint64_t wn = std::max<uint64_t>((uint64_t) r.w, NR.mss);
        w = std::min<uint64_t>(std::min<uint64_t>(wb, NR.wmax), wn);
    } else {
        w = std::min<uint64_t>(wb, NR.wmax);
    }
    // RFC 9293 section 3.8.6.2.2: the right edge never moves left.
    int64_t keep = r.hasEdge ? (int64_t) (int32_t) (r.edge - ack) : 0;
    w = std::max<uint64_t>(w, (uint64_t) std::max<int64_t>(keep, 0));
    w = std::min<uint64_t>(w, 65535);
    uint32_t edge = ack + (uint32_t) w;
    if (!r.hasEdge || (int32_t) (edge - r.edge) > 0) r.edge = edge;
    r.hasEdge = true;
    if (w == wb) return;
    TcpHeader h;
    p->RemoveHeader(h);
    h.SetWindowSize((uint16_t) w);
    p->AddHeader(h);
    NR.rewritten++;
}

// The receiver host's egress: a FIFO of its link's buffer that rewrites ACKs as they enter.
class NgwaReceiverQueueDisc : public QueueDisc {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnNgwaReceiverQueueDisc")
                                .SetParent<QueueDisc>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<NgwaReceiverQueueDisc>();
        return tid;
    }
    NgwaReceiverQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override {
        if (GetCurrentSize() + item > GetMaxSize()) {
            NC.drops++;
            NgwaLogDrop(item);
            DropBeforeEnqueue(item, "Queue disc limit exceeded");
            return false;
        }
        if (NR.on) NgwaRewrite(item);
        return GetInternalQueue(0)->Enqueue(item);
    }
    Ptr<QueueDiscItem> DoDequeue() override { return GetInternalQueue(0)->Dequeue(); }
    bool CheckConfig() override {
        if (GetNInternalQueues() == 0) {
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(GetMaxSize())));
        }
        return GetNInternalQueues() == 1;
    }
    void InitializeParams() override {}
};

// ---- RFC 793 TCP, strict (ns3ngwa.py --rfc793 strict): no guessed scoreboard.
// Without SACK, ns-3 3.44 marks a segment "SACKed" for every duplicate ACK
// in CA_DISORDER (limited transmit, TcpSocketBase::DupAck ->
// TcpTxBuffer::AddRenoSack); when a cumulative ACK then leaves such a guessed
// segment at the head, TcpTxBuffer::DiscardUpTo moves the mark on and marks
// the head lost (MarkHeadAsLost), and the next duplicate ACK finds
// TcpTxBuffer::IsLost(head) true and enters fast recovery, retransmitting the
// head (RFC 6675 section 5 step 2), whatever ReTxThreshold says. The guessed
// marks also lower BytesInFlight, so each duplicate ACK lets one segment
// past the window the receiver offered. RFC 793 (section 3.7, "Retransmission
// Timeout") retransmits only on a timeout and sends within SND.UNA + SND.WND:
// strict clears the guesses after every ACK (PktsAcked below runs after
// DupAck and before SendPendingData), so no loss mark is ever set before a
// timeout and the window is the receiver's.
static bool NgwaStrict793 = false;
// And the RTO as RFC 6298 section 5 keeps it (ns3ngwa.py --rfc793 strict-rfc6298):
// ns-3 3.44's NewAck recomputes the RTO from the estimator on every new ACK,
// so a backed-off timer collapses on the first ACK after a timeout even when
// that ACK covers only retransmitted data (no RTT sample, Karn). RFC 6298
// section 5 (5.5, and the note after 5.7) collapses it only "once a new RTT
// measurement is obtained". Emulated with the socket's MinRto: raised to the
// backed-off RTO at each timeout, put back when a sample moves the smoothed
// RTT (TcpSocketBase's "RTT" trace), before NewAck recomputes the RTO.
static bool NgwaKarnRto = false;
// And the whole window resent at every timeout (ns3ngwa.py --rfc793 strict-rfc6298-gbn): the
// stand-in resends at once when the socket enters CA_LOSS (NgwaCong -> NgwaResend), but ns-3
// 3.44's ReTxTimeout sets cWnd to one segment at every expiry, and a timeout while the socket is
// still in CA_LOSS (a backoff, or a loss among the go-back-N segments before m_recover is
// acknowledged) changes no state, so NgwaCong does not run: the sender resent one segment and
// waited an RTT with cWnd = 1 segment, for the next new ACK's IncreaseWindow. RFC 793 section
// 3.7 has no congestion window, and ours (crates/tcp, cc = "none") goes back N at every expiry.
// The repair runs NgwaResend after every expiry (NgwaRto, the RTO trace of ReTxTimeout).
static bool NgwaGbnEveryRto = false;
static uint64_t NgwaLossStateRtos = 0;  // expiries in CA_LOSS (the ones NgwaCong missed)
// The same two repairs for the NewReno senders (NGWA's CW on; ns3ngwa.py --newreno), which run
// without SACK as the paper's: `rfc6582` leaves fast recovery with no loss or retransmission mark
// on the sent list (lossy.cc's ClearLossMarks, the lossy link's --renosack rfc6582: one
// implementation), `rfc6582-rfc6298` and the backed-off RTO kept until a new RTT sample as above.
static bool NgwaKarnRtoCw = false;
static bool NgwaKarnOn(bool noCc) { return noCc ? NgwaKarnRto : NgwaKarnRtoCw; }
static std::map<const TcpSocketState*, Ptr<TcpTxBuffer>> NgwaTxOf;  // strict senders' Tx buffers

// ---- RFC 793 TCP: no congestion window
class NetreturnNoCc : public TcpCongestionOps {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnNoCc").SetParent<TcpCongestionOps>().AddConstructor<NetreturnNoCc>();
        return tid;
    }
    static constexpr uint32_t HUGE_CWND = 1u << 30;
    std::string GetName() const override { return "NetreturnNoCc"; }
    uint32_t GetSsThresh(Ptr<const TcpSocketState>, uint32_t) override { return HUGE_CWND; }
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t) override { tcb->m_cWnd = HUGE_CWND; }
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t, const Time&) override {
        if (!NgwaStrict793) return;
        auto it = NgwaTxOf.find(PeekPointer(tcb));
        if (it != NgwaTxOf.end()) it->second->ResetRenoSack();
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NetreturnNoCc>(this); }
};

// Access to TcpSocketBase's protected m_tcb and SendPendingData (explicit
// instantiation of a pointer to member, where C++ does not check access,
// [temp.spec]/6; as dumbbell.cc reads RED's average).
template <typename Tag, typename Tag::type M> struct NgwaRob {
    friend typename Tag::type NgwaGet(Tag) { return M; }
};
struct NgwaTcb { typedef Ptr<TcpSocketState> TcpSocketBase::*type; friend type NgwaGet(NgwaTcb); };
struct NgwaSend { typedef uint32_t (TcpSocketBase::*type)(bool); friend type NgwaGet(NgwaSend); };
template struct NgwaRob<NgwaTcb, &TcpSocketBase::m_tcb>;
template struct NgwaRob<NgwaSend, &TcpSocketBase::SendPendingData>;

// ---- NewReno's send window in fast recovery as RFC 6582 (ns3ngwa.py --newreno inflation, issue 25,
// branch ngwa8). Without SACK ns-3 3.44 keeps cwnd at ssthresh through a recovery
// (TcpClassicRecovery inflates only its m_cWndInfl trace) and sends while its pipe,
// TcpTxBuffer::BytesInFlight, is below min(rWnd, cWnd) (TcpSocketBase::AvailableWindow); each
// duplicate ACK lowers the pipe by the size of the segment TcpTxBuffer::AddRenoSack marks, which
// is 512 B when the application's write went out alone. RFC 6582 section 3.2 (RFC 5681 section
// 3.2 steps 2-5) counts one SMSS per duplicate ACK: cwnd = ssthresh + 3 SMSS at the fast
// retransmit, + SMSS per further duplicate ACK (step 4), and a partial ACK deflates cwnd by the
// bytes it acknowledges, adding back one SMSS if they were at least one (step 5); new data goes
// out while FlightSize (SND.MAX - SND.UNA) stays within cwnd and the receiver's window (step 4:
// "if allowed by the new value of cwnd and the receiver's advertised window"). The repair keeps
// that window W per socket and, after each ACK of a recovery (PktsAcked, which ProcessAck calls
// after DupAck / EnterRecovery and after a partial ACK's retransmission, before
// SendPendingData), sets ns-3's cWnd to pipe + min(W, rWnd) - FlightSize, so that ns-3's own
// test, pipe + segment <= min(rWnd, cWnd), is RFC 6582's. New segments raise pipe and FlightSize
// alike, so the window holds for the application's writes between ACKs. The exit (cWnd =
// ssthresh) and the retransmissions stay ns-3's.
//
// And ssthresh from FlightSize (ns3ngwa.py --newreno ...-flightsize): without SACK ns-3 3.44's
// EnterRecovery passes GetSsThresh BytesInFlight() + one segment, the pipe after the three
// dupACKs' guessed SACK marks and the head's loss mark, and ReTxTimeout the pipe before the
// timeout; RFC 5681 section 3.2 step 2 (equation 4) and RFC 6582 section 3.2 step 2 halve
// FlightSize, SND.MAX - SND.UNA, leaving out what limited transmit sent beyond cwnd (RFC 5681:
// "additional data sent in limited transmit MUST NOT be included"; as ours, recovery.rs).
//
// And cwnd grown only while it limits the sender (--newreno ...-cwndlimited; ours' rule, Linux
// tcp_is_cwnd_limited, RFC 7661's aim, docs/tcp.md): ns-3 3.44's TcpNewReno::IncreaseWindow grows
// cwnd on every ACK, though SendDataPacket keeps m_isCwndLimited (cWnd < BytesInFlight + one
// segment, as ours' send.rs). Not an RFC 5681 rule: a model difference switched to measure it.
struct NgwaRwnd { typedef TracedValue<uint32_t> TcpSocketBase::*type; friend type NgwaGet(NgwaRwnd); };
template struct NgwaRob<NgwaRwnd, &TcpSocketBase::m_rWnd>;
static bool NgwaInflation = false, NgwaFlightSize = false, NgwaCwndLimited = false;
struct NgwaRfcSender {
    Ptr<TcpSocketBase> sock;
    uint64_t limitedSent = 0;  // bytes limited transmit sent beyond cwnd since the last new ACK
};
static std::map<const TcpSocketState*, NgwaRfcSender> NgwaRfcOf;  // the repaired senders
static uint64_t NgwaInflationAcks = 0;  // ACKs of a recovery whose window the repair set
static uint64_t NgwaInflationRwnd = 0;  // of them, where the receiver's window was the smaller
static uint64_t NgwaFlightSizeSets = 0;  // ssthresh set from FlightSize

class NetreturnNewRenoRfc6582 : public TcpNewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnNewRenoRfc6582")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<NetreturnNewRenoRfc6582>();
        return tid;
    }
    std::string GetName() const override { return "NetreturnNewRenoRfc6582"; }
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        auto it = NgwaRfcOf.find(PeekPointer(tcb));
        if (!NgwaFlightSize || it == NgwaRfcOf.end()) return TcpNewReno::GetSsThresh(tcb, bytesInFlight);
        uint64_t flight = (uint32_t) (tcb->m_highTxMark.Get().GetValue() - tcb->m_lastAckedSeq.GetValue());
        // EnterRecovery sets CA_RECOVERY before it asks; ReTxTimeout asks before CA_LOSS.
        if (tcb->m_congState == TcpSocketState::CA_RECOVERY)
            flight -= std::min(flight, it->second.limitedSent);
        NgwaFlightSizeSets++;
        return TcpNewReno::GetSsThresh(tcb, (uint32_t) flight);  // max(FlightSize / 2, 2 SMSS)
    }
    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState) override {
        TcpNewReno::CongestionStateSet(tcb, newState);
        // Called just before EnterRecovery sets ssthresh: the next PktsAcked is the fast retransmit's.
        m_entering = newState == TcpSocketState::CA_RECOVERY;
    }
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segsAcked) override {
        if (NgwaCwndLimited && !tcb->m_isCwndLimited) return;
        TcpNewReno::IncreaseWindow(tcb, segsAcked);
    }
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segs, const Time& rtt) override {
        TcpNewReno::PktsAcked(tcb, segs, rtt);
        if (!NgwaInflation || tcb->m_congState != TcpSocketState::CA_RECOVERY) return;
        uint64_t smss = tcb->m_segmentSize;
        uint32_t una = tcb->m_lastAckedSeq.GetValue();
        if (m_entering) {
            m_w = tcb->m_ssThresh.Get() + 3 * smss;  // RFC 6582 section 3.2 step 2 (DupThresh = 3)
            m_entering = false;
        } else if (una == m_una) {
            m_w += smss;  // step 4: one segment left the network
        } else {
            // step 5, a partial ACK (or the ACK that ends recovery: ns-3 sets cWnd = ssthresh after this)
            uint64_t acked = (uint32_t) (una - m_una);
            m_w = m_w > acked ? m_w - acked : 0;
            if (acked >= smss) m_w += smss;
            m_w = std::max(m_w, smss);
        }
        m_una = una;
        auto it = NgwaRfcOf.find(PeekPointer(tcb));
        if (it == NgwaRfcOf.end()) return;
        Ptr<TcpSocketBase> s = it->second.sock;
        uint64_t rwnd = ((*s).*NgwaGet(NgwaRwnd())).Get();
        uint64_t flight = (uint32_t) (tcb->m_highTxMark.Get().GetValue() - una);  // SND.MAX - SND.UNA
        uint64_t pipe = s->GetTxBuffer()->BytesInFlight();
        int64_t allowed = (int64_t) std::min(m_w, rwnd) - (int64_t) flight;
        tcb->m_cWnd = (uint32_t) std::max<int64_t>((int64_t) pipe + allowed, 0);
        NgwaInflationAcks++;
        if (rwnd < m_w) NgwaInflationRwnd++;
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<NetreturnNewRenoRfc6582>(this); }

  private:
    bool m_entering = false;
    uint64_t m_w = 0;    // RFC 6582's inflated cwnd, bytes
    uint32_t m_una = 0;  // SND.UNA at the previous ACK of this recovery
};
uint64_t NgwaInflationCount(uint32_t what) {
    return what == 0 ? NgwaInflationAcks : what == 1 ? NgwaInflationRwnd : NgwaFlightSizeSets;
}
// inflation: RFC 6582's send window in recovery; flightSize: ssthresh from FlightSize; cwndLimited: growth
// only while cwnd limits the sender (all above).
void NgwaNewRenoRfc(bool inflation, bool flightSize, bool cwndLimited) {
    NgwaInflation = inflation;
    NgwaFlightSize = flightSize;
    NgwaCwndLimited = cwndLimited;
}
static void NgwaHookRfc(Ptr<TcpSocketBase> s) {
    PointerValue pv;
    s->GetAttribute("CongestionOps", pv);
    if (DynamicCast<NetreturnNewRenoRfc6582>(pv.Get<TcpCongestionOps>()))
        NgwaRfcOf[PeekPointer((*s).*NgwaGet(NgwaTcb()))].sock = s;
}
// A segment sent: limited transmit's bytes beyond cwnd (CA_DISORDER, new data) counted for FlightSize.
static void NgwaRfcTx(Ptr<TcpSocketState> tcb, uint32_t una, uint32_t seq, uint32_t end, bool retx) {
    auto it = NgwaRfcOf.find(PeekPointer(tcb));
    if (it == NgwaRfcOf.end() || retx || tcb->m_congState != TcpSocketState::CA_DISORDER) return;
    int64_t beyond = (int64_t) (uint32_t) (end - una) - (int64_t) tcb->m_cWnd.Get();
    it->second.limitedSent += (uint64_t) std::min<int64_t>(std::max<int64_t>(beyond, 0), end - seq);
}
static void NgwaRfcNewAck(Ptr<TcpSocketState> tcb) {
    auto it = NgwaRfcOf.find(PeekPointer(tcb));
    if (it != NgwaRfcOf.end()) it->second.limitedSent = 0;
}

// ---- per flow at the sender: dupACKs as ours counts them, timeouts
struct NgwaFlow {
    Ptr<TcpSocketBase> sock;
    bool noCc = false;
    uint32_t una = 0, sndMax = 0, lastWin = 0;
    bool seenAck = false;
    uint32_t dup = 0, dupNs3 = 0;
    uint64_t triple = 0, past = 0, tripleNs3 = 0, pastNs3 = 0, rtos = 0, recoveries = 0, rx = 0;
    uint64_t retx = 0, retxBeforeTimeout = 0;  // data segments sent again; of them, outside CA_LOSS
    Time minRto;                                // the socket's own MinRto (NgwaKarnRto)
    bool backedOff = false;                     // a timeout since the last RTT sample
    uint64_t rtoCollapses = 0;                  // RTO lowered while backedOff (RFC 6298 section 5 keeps it)
    uint64_t exitsMarked = 0;                   // exits from CA_RECOVERY leaving a loss mark on the sent list
};
static std::vector<NgwaFlow> NF;
static std::map<uint32_t, uint32_t> NgwaBySender;  // sender address -> flow

void NgwaReset(uint32_t flows, bool receiverOn, double alpha, uint64_t wmax, uint64_t mss) {
    NgwaTag::GetTypeId();
    NgwaQueueDisc::GetTypeId();
    NgwaReceiverQueueDisc::GetTypeId();
    NetreturnNoCc::GetTypeId();
    NC = NgwaCounts();
    NR = NgwaReceiverState();
    NR.on = receiverOn;
    NR.alpha = alpha;
    NR.wmax = wmax;
    NR.mss = mss;
    NF.assign(flows, NgwaFlow());
    NgwaBySender.clear();
    NgwaTxOf.clear();
    NgwaRfcOf.clear();
    NgwaInflationAcks = NgwaInflationRwnd = NgwaFlightSizeSets = 0;
    NgwaLossStateRtos = 0;
    NetreturnNewRenoRfc6582::GetTypeId();
}

// strict: see NgwaStrict793 above; false: the stand-in as before (ns-3's guessed scoreboard left in).
void NgwaRfc793Strict(bool strict, bool karnRto, bool gbnEveryRto) {
    NgwaStrict793 = strict;
    NgwaKarnRto = strict && karnRto;
    NgwaGbnEveryRto = strict && gbnEveryRto;
}
uint64_t NgwaLossStateRtoCount() { return NgwaLossStateRtos; }

// rfc6582: ns-3's NewReno leaves CA_RECOVERY with its sent list's loss marks cleared (RFC 6582 keeps
// no scoreboard; lossy.cc, LossyCong); karnRto: its RTO kept backed off until an RTT sample (RFC
// 6298 section 5). Both false: ns-3's NewReno as built (the Reno scoreboard reset at the exit only).
void NgwaNewReno(bool rfc6582, bool karnRto) {
    LossyReset(false, false);  // lossy.cc's counters (LossyStaleLostCleared) from 0
    LossyRfc6582(rfc6582);
    NgwaKarnRtoCw = karnRto;
}

// A per-packet log ("" closes it): one line per data segment a sender sends
// (tx), per ACK it receives (ack: the bytes column is the window offered), per change of cwnd (cwnd:
// ssthresh in the seq column, cwnd in the bytes column), per timeout (rto), per
// entry into fast recovery (recovery) and per packet a queue disc drops (drop): time (s), flow, event, sequence number,
// bytes, retransmission (0/1), the sender's congestion state
// (TcpSocketState::TcpCongStateName; for a drop: data or ack).
void NgwaLog(const std::string& path) {
    if (NgwaLogFile) fclose(NgwaLogFile);
    NgwaLogFile = path.empty() ? nullptr : fopen(path.c_str(), "w");
    if (NgwaLogFile) fprintf(NgwaLogFile, "time_s flow event seq bytes retx state\n");
}
static void NgwaLogLine(uint32_t i, const char* event, uint32_t seq, uint32_t bytes, bool retx,
                        TcpSocketState::TcpCongState_t state) {
    if (!NgwaLogFile) return;
    fprintf(NgwaLogFile, "%.9f %u %s %u %u %d %s\n", Simulator::Now().GetSeconds(), i, event, seq, bytes,
            retx ? 1 : 0, TcpSocketState::TcpCongStateName[state]);
}

// The time mean (what = 0) or standard deviation (1) of queue disc q's bytes, s from its first packet to now.
double NgwaQueueStat(Ptr<QueueDisc> q, uint32_t what) {
    Ptr<NgwaQueueDisc> n = DynamicCast<NgwaQueueDisc>(q);
    if (!n) return std::nan("");
    n->Integrate();
    double span = n->qLast - n->qSince;
    if (n->qSince < 0 || span <= 0) return 0;
    double m = n->qInt / span;
    return what == 0 ? m : std::sqrt(std::max(n->qInt2 / span - m * m, 0.0));
}

// The device starts sending a packet (PhyTxBegin; PPP header first): mark it (NgwaMarkAtTx).
static void NgwaTxBegin(Ptr<NgwaQueueDisc> q, Ptr<const Packet> p) {
    Ptr<Packet> c = p->Copy();
    PppHeader ppp;
    c->RemoveHeader(ppp);
    NgwaTag before;
    bool had = c->PeekPacketTag(before);
    q->MarkAtTransmission(c);
    NgwaTag after;
    if (!c->PeekPacketTag(after) || (had && after.value == before.value)) return;
    // The packet on the wire is p: its tag is written there (tags are packet metadata, not bytes).
    Packet* w = const_cast<Packet*>(PeekPointer(p));
    if (had) w->ReplacePacketTag(after);
    else w->AddPacketTag(after);
}
// Mark queue disc q's packets as `dev` starts sending them instead of as q lets them go (one transmission
// later, with the device queue's packet counted as waiting): ours' moment (crates/sim world/forward.rs,
// drain_staged: at the start of transmission).
bool NgwaMarkAtTx(Ptr<QueueDisc> q, Ptr<NetDevice> dev) {
    Ptr<NgwaQueueDisc> n = DynamicCast<NgwaQueueDisc>(q);
    Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(dev);
    if (!n || !d) return false;
    n->markAtTx = true;
    n->device = d;
    d->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&NgwaTxBegin, n));
    return true;
}

bool NgwaSetupQueue(Ptr<QueueDisc> q, bool mark, bool division, uint64_t capacity) {
    Ptr<NgwaQueueDisc> n = DynamicCast<NgwaQueueDisc>(q);
    if (!n) return false;
    n->mark = mark;
    n->division = division;
    n->capacity = capacity;
    return true;
}

static void NgwaSenderTx(uint32_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
    if (p->GetSize() == 0) return;
    uint32_t seq = h.GetSequenceNumber().GetValue();
    uint32_t end = seq + p->GetSize();
    // A retransmission: it starts below the highest byte sent. Before a
    // timeout (any state but CA_LOSS) an RFC 793 TCP never sends one.
    bool retx = (int32_t) (seq - NF[i].sndMax) < 0;
    TcpSocketState::TcpCongState_t state = ((*s).*NgwaGet(NgwaTcb()))->m_congState.Get();
    if (retx) {
        NF[i].retx++;
        if (state != TcpSocketState::CA_LOSS) NF[i].retxBeforeTimeout++;
    }
    if ((int32_t) (end - NF[i].sndMax) > 0) NF[i].sndMax = end;
    NgwaRfcTx(((*s).*NgwaGet(NgwaTcb())), NF[i].una, seq, end, retx);
    NgwaLogLine(i, "tx", seq, p->GetSize(), retx, state);
}

static void NgwaSenderRx(Ptr<const Packet> packet, Ptr<Ipv4>, uint32_t) {
    Ptr<Packet> c = packet->Copy();
    Ipv4Header ip;
    c->RemoveHeader(ip);
    if (ip.GetProtocol() != 6) return;
    auto it = NgwaBySender.find(ip.GetDestination().Get());
    if (it == NgwaBySender.end()) return;
    NgwaFlow& f = NF[it->second];
    TcpHeader tcp;
    c->RemoveHeader(tcp);
    uint8_t fl = tcp.GetFlags();
    if (!(fl & TcpHeader::ACK) || (fl & TcpHeader::SYN)) return;
    uint32_t ack = tcp.GetAckNumber().GetValue();
    uint32_t win = tcp.GetWindowSize();
    if (!f.seenAck || (int32_t) (ack - f.una) > 0) {
        f.una = ack;
        f.dup = f.dupNs3 = 0;
        if (f.sock) NgwaRfcNewAck((*f.sock).*NgwaGet(NgwaTcb()));
    } else if (ack == f.una && c->GetSize() == 0 && !(fl & TcpHeader::FIN) && (int32_t) (f.sndMax - f.una) > 0) {
        // ns-3 3.44 (TcpSocketBase::ProcessAck without SACK): any window.
        if (++f.dupNs3 == 3) f.tripleNs3++;
        if (f.dupNs3 >= 3) f.pastNs3++;
        // Ours (RFC 5681 section 2): the window unchanged too.
        if (win == f.lastWin) {
            if (++f.dup == 3) f.triple++;
            if (f.dup >= 3) f.past++;
        }
    }
    f.lastWin = win;
    f.seenAck = true;
    // The bytes column of an ack line: the window it offers (unscaled, as the receiver rule wrote it).
    if (NgwaLogFile && f.sock)
        NgwaLogLine(it->second, "ack", ack, win, false, ((*f.sock).*NgwaGet(NgwaTcb()))->m_congState.Get());
}

static void NgwaResend(uint32_t i) {
    Ptr<TcpSocketBase> s = NF[i].sock;
    Ptr<TcpSocketState> tcb = (*s).*NgwaGet(NgwaTcb());
    tcb->m_cWnd = NetreturnNoCc::HUGE_CWND;
    ((*s).*NgwaGet(NgwaSend()))(false);
}

static void NgwaCong(uint32_t i, TcpSocketState::TcpCongState_t before, TcpSocketState::TcpCongState_t now) {
    if (now == TcpSocketState::CA_RECOVERY) {
        NF[i].recoveries++;
        NgwaLogLine(i, "recovery", NF[i].una, 0, false, now);
    }
    if (now == TcpSocketState::CA_LOSS) {
        NF[i].dup = 0;  // ours starts the count again after a timeout
        if (NF[i].noCc && !NgwaGbnEveryRto) Simulator::ScheduleNow(&NgwaResend, i);
    }
    (void) before;
}

// Every RTO expiry, backoffs included (as dumbbell.cc's SockRto).
static void NgwaRto(uint32_t i, Time before, Time now) {
    if (now < before && NF[i].backedOff) NF[i].rtoCollapses++;
    if (now == before * 2 || (now == Seconds(60) && before < now)) {
        NF[i].rtos++;
        NF[i].backedOff = true;
        // The bytes column of an rto line: the backed-off RTO, ms.
        NgwaLogLine(i, "rto", NF[i].una, (uint32_t) now.GetMilliSeconds(), false, TcpSocketState::CA_LOSS);
        if (NgwaKarnOn(NF[i].noCc)) NF[i].sock->SetMinRto(now);  // kept until an RTT sample
        // The RTO trace runs in ReTxTimeout before its state change: CA_LOSS here is the state before.
        if (NF[i].noCc && ((*NF[i].sock).*NgwaGet(NgwaTcb()))->m_congState.Get() == TcpSocketState::CA_LOSS)
            NgwaLossStateRtos++;
        if (NF[i].noCc && NgwaGbnEveryRto) Simulator::ScheduleNow(&NgwaResend, i);
    }
}

// A new RTT sample (the smoothed RTT moved): the RTO may collapse again (RFC 6298 section 5).
static void NgwaSrtt(uint32_t i, Time, Time) {
    NF[i].backedOff = false;
    if (NgwaKarnOn(NF[i].noCc)) NF[i].sock->SetMinRto(NF[i].minRto);
}

// After lossy.cc's exit hook (connected before this one, so run before it): is a segment still
// marked lost as NewReno leaves recovery? RFC 6582 keeps no scoreboard, so `--newreno rfc6582` leaves none.
static void NgwaExitMarks(uint32_t i, TcpSocketState::TcpCongState_t before, TcpSocketState::TcpCongState_t now) {
    if (before == TcpSocketState::CA_RECOVERY && now == TcpSocketState::CA_OPEN && NF[i].sock->GetTxBuffer()->GetLost() > 0)
        NF[i].exitsMarked++;
}

// A cwnd line of the log: every change of the congestion window (the seq column: ssthresh; bytes: cwnd).
static void NgwaCwnd(uint32_t i, uint32_t, uint32_t now) {
    if (!NgwaLogFile || !NF[i].sock) return;
    Ptr<TcpSocketState> tcb = (*NF[i].sock).*NgwaGet(NgwaTcb());
    NgwaLogLine(i, "cwnd", tcb->m_ssThresh.Get(), now, false, tcb->m_congState.Get());
}

static void NgwaHook(uint32_t i, Ptr<OnOffApplication> app, bool noCc, bool renoSackLinuxExit) {
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
    if (!s) return;
    NF[i].sock = s;
    NF[i].noCc = noCc;
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&NgwaSenderTx, i));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&NgwaCong, i));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&NgwaRto, i));
    s->TraceConnectWithoutContext("RTT", MakeBoundCallback(&NgwaSrtt, i));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&NgwaCwnd, i));
    NF[i].minRto = s->GetMinRto();
    if (renoSackLinuxExit) RenoSackLinuxExit(s);  // lossy.cc
    NgwaHookRfc(s);
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&NgwaExitMarks, i));
    if (noCc) {
        // No fast retransmit: neither the dupACK count nor the Tx buffer's
        // loss guess (TcpTxBuffer::IsLost over its Reno scoreboard, which
        // limited transmit fills) may start a recovery.
        // 2^20, not more: IsLostRFC compares the SACKed bytes with
        // (DupAckThresh - 1) x segment in 32 bits, which 2^30 overflows.
        s->SetRetxThresh(1u << 20);
        s->GetTxBuffer()->SetDupAckThresh(1u << 20);
        // The guessed marks of duplicate ACKs still reach IsLost (see NgwaStrict793): strict clears them.
        if (NgwaStrict793) NgwaTxOf[PeekPointer((*s).*NgwaGet(NgwaTcb()))] = s->GetTxBuffer();
    }
}

// OnOff creates its socket in StartApplication: hook it just after.
void NgwaScheduleHook(uint32_t i, Ptr<Application> app, double startS, uint32_t sender, bool noCc,
                      bool renoSackLinuxExit) {
    NgwaBySender[sender] = i;
    Simulator::Schedule(Seconds(startS) + NanoSeconds(1), &NgwaHook, i, DynamicCast<OnOffApplication>(app), noCc,
                        renoSackLinuxExit);
}
void NgwaWatchNodes(Ptr<Node> sender, Ptr<Node> receiver) {
    sender->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("Rx", MakeCallback(&NgwaSenderRx));
    receiver->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("Rx", MakeCallback(&NgwaRxData));
}

static void NgwaSinkRx(uint32_t i, Ptr<const Packet> p, const Address&) { NF[i].rx += p->GetSize(); }
void NgwaConnectSink(uint32_t i, Ptr<Application> app) {
    app->TraceConnectWithoutContext("Rx", MakeBoundCallback(&NgwaSinkRx, i));
}

// Drops of device queues (none expected: every router egress has its queue disc)
// and of the traffic-control layer of hosts without one.
static void NgwaDevDrop(Ptr<const Packet>) { NC.drops++; }
void NgwaCountDrops(Ptr<NetDevice> dev) {
    DynamicCast<PointToPointNetDevice>(dev)->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&NgwaDevDrop));
}
void NgwaCountTcDrops(Ptr<Node> n) {
    n->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext("TcDrop", MakeCallback(&NgwaDevDrop));
}

uint64_t NgwaFlowValue(uint32_t i, uint32_t what) {
    const NgwaFlow& f = NF[i];
    switch (what) {
        case 0: return f.rx;
        case 1: return f.triple;
        case 2: return f.past;
        case 3: return f.tripleNs3;
        case 4: return f.pastNs3;
        case 5: return f.rtos;
        case 6: return f.recoveries;
        case 7: return f.retx;
        case 8: return f.retxBeforeTimeout;
        case 9: return f.rtoCollapses;
        case 10: return f.exitsMarked;
    }
    return 0;
}
uint64_t NgwaCount(uint32_t what) {
    switch (what) {
        case 0: return NC.inserted;
        case 1: return NC.lowered;
        case 2: return NC.kept;
        case 3: return NC.drops;
        case 4: return NR.rewritten;
        case 5: return NR.valued;
    }
    return 0;
}
}  // namespace netreturn_ns3
