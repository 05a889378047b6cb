// Window-rewriting gateways for the ns-3 3.44 reference harness
// (python/netreturn/ns3ref.py, --queue ewt|awm): EWT (docs/decisions.md §2.1, the EWT paper
// Algorithm 1) and AWM (docs/decisions.md §2.3, the AWM paper's section 2), written for ns-3
// apart from our simulator's crates/control, so the two can check each other.
//
// Placement (docs/decisions.md §1 rule 5): at R1. The data queue Q_F is R1's bottleneck
// egress queue disc (a FifoQueueDisc of B bytes, as for DropTail); the
// gateway watches it through its Enqueue / DropBeforeEnqueue / Dequeue trace
// sources. The ACKs of the same flows leave R1 on its access devices towards
// the senders: on each of those devices sits an AckGatewayQueueDisc, a FIFO
// that never drops (the device's own 100-packet queue stays below it) and
// rewrites the TCP window of every ACK as it leaves (DoDequeue).
//
// The rules of docs/decisions.md §1, applied once here for both controllers:
//  1. never raise: new = min(Wr, max(computed, floor));
//  2. window scale (RFC 7323): Wr = field << shift, the shift learned from the
//     SYN-ACK the gateway forwarded (a SYN-ACK carries the option only when
//     the SYN offered it too); a flow whose handshake was not seen is left
//     alone; the field written is rounded up to the scale unit, never 0;
//  3. checksum: ns-3 computes none unless ChecksumEnabled (off here);
//  4. floor: one MSS (EWT) or one MTU = MSS + 40 (AWM), the MSS learned from
//     the SYN's MSS option, else the configured segment size (ns-3 3.44 sends
//     no MSS option: with RFC 9293's 536 the floor let ns-3's sender stall,
//     see docs/validation.md, "The gateways in ns-3");
//  6. non-TCP packets, SYNs and segments without ACK pass untouched.
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/traffic-control-module.h"
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace netreturn_ns3 {
using namespace ns3;

// A TCP connection named by its data direction (sender -> receiver).
using ConnKey = std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>;

struct GatewayState {
    int kind = 0;          // 0 none, 1 EWT, 2 AWM
    Ptr<QueueDisc> dataQueue;
    double buffer = 0;     // B, bytes
    uint32_t defaultMss = 536;  // for handshakes without an MSS option
    double st = 0;         // EWT start threshold St, bytes
    // AWM (the AWM paper's eq. 1-3), oracle N (the flows the gateway sees active).
    double target = 0, beta = 0, mtu = 0, maxSwnd = 0, swnd = 0, lastQ = 0;
    double lastEvent = -1;
    uint32_t active = 0;
    // Per connection: receiver's window shift (from its SYN-ACK), sender's MSS
    // (from its SYN), whether it is active (AWM's N).
    std::map<ConnKey, uint8_t> shift;
    std::map<ConnKey, uint32_t> mss;
    std::set<ConnKey> activeConns;
    uint64_t acks = 0, rewritten = 0, unknown = 0, awmEvents = 0;
};
static GatewayState G;

static bool TcpOf(Ptr<const QueueDiscItem> item, Ipv4Header& ip, TcpHeader& tcp) {
    Ptr<const Ipv4QueueDiscItem> ipi = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ipi) return false;
    ip = ipi->GetHeader();
    if (ip.GetProtocol() != 6 || ip.GetFragmentOffset() != 0) return false;
    // The queue disc item holds the packet without its IP header.
    if (ipi->GetPacket()->PeekHeader(tcp) == 0) return false;
    return true;
}

static ConnKey DataKey(const Ipv4Header& ip, const TcpHeader& tcp) {
    return ConnKey(ip.GetSource().Get(), tcp.GetSourcePort(), ip.GetDestination().Get(), tcp.GetDestinationPort());
}

static void SetActive(uint32_t n) {
    // Oracle N (docs/decisions.md §2.3): when N changes, keep N * swnd (the AWM paper's eq. 5).
    double before = std::max<uint32_t>(G.active, 1);
    G.active = n;
    double after = std::max<uint32_t>(G.active, 1);
    G.swnd = std::clamp(G.swnd * before / after, G.mtu, G.maxSwnd);
}

// One AWM updating event (the AWM paper's section 2.1): an arrival at Q_F, accepted
// or refused, or a departure; q the backlog after it, bytes.
static void AwmEvent(double q) {
    double now = Simulator::Now().GetSeconds();
    double delta = G.lastEvent < 0 ? 0.0 : now - G.lastEvent;
    G.lastEvent = now;
    double n = std::max<uint32_t>(G.active, 1);
    double dq = (G.lastQ - q) / n;                                  // eq. 2
    double dt = G.beta * delta / (n * G.target) * (G.target - q);   // eq. 3
    G.swnd = std::clamp(G.swnd + dq + dt, G.mtu, G.maxSwnd);        // eq. 1 (+ upper bound)
    G.lastQ = q;
    G.awmEvents++;
}

// A packet offered to Q_F (data direction): SYNs give the sender's MSS; the
// first payload of a connection makes it active, its FIN or RST ends it.
static void DataArrival(Ptr<const QueueDiscItem> item) {
    Ipv4Header ip;
    TcpHeader tcp;
    if (!TcpOf(item, ip, tcp)) return;
    ConnKey k = DataKey(ip, tcp);
    uint8_t f = tcp.GetFlags();
    if (f & TcpHeader::SYN) {
        if (tcp.HasOption(TcpOption::MSS)) {
            G.mss[k] = DynamicCast<const TcpOptionMSS>(tcp.GetOption(TcpOption::MSS))->GetMSS();
        }
        return;
    }
    bool payload = item->GetPacket()->GetSize() > tcp.GetSerializedSize();
    if (payload && G.shift.count(k) && !G.activeConns.count(k) && !(f & (TcpHeader::FIN | TcpHeader::RST))) {
        G.activeConns.insert(k);
        SetActive(G.active + 1);
    }
    if ((f & (TcpHeader::FIN | TcpHeader::RST)) && G.activeConns.erase(k)) {
        SetActive(G.active - 1);
    }
}

static void QfEnqueue(Ptr<const QueueDiscItem> item) {
    DataArrival(item);
    if (G.kind == 2) AwmEvent(G.dataQueue->GetNBytes());
}
static void QfDrop(Ptr<const QueueDiscItem> item, const char*) {
    DataArrival(item);
    if (G.kind == 2) AwmEvent(G.dataQueue->GetNBytes());
}
static void QfDequeue(Ptr<const QueueDiscItem>) {
    if (G.kind == 2) AwmEvent(G.dataQueue->GetNBytes());
}

// The controller's window for an ACK carrying Wr bytes, before the rules.
static double Computed(double wr) {
    if (G.kind == 1) {
        double u = G.dataQueue->GetNBytes();
        if (u <= G.st) return wr;            // EWT acts only when U > St (docs/decisions.md §2.1 erratum)
        double ba = std::max(0.0, G.buffer - u);
        return std::floor(ba * wr / G.buffer);  // Wewt = (B - U) / B * Wr (the EWT paper's eq. 9, 10)
    }
    return std::floor(G.swnd);               // AWM: awnd = swnd if awnd > swnd
}

// An ACK leaving R1 towards a sender: learn the scale from SYN-ACKs, rewrite
// the window of the others.
static void RewriteAck(Ptr<QueueDiscItem> item) {
    Ipv4Header ip;
    TcpHeader tcp;
    if (!TcpOf(item, ip, tcp)) return;
    uint8_t f = tcp.GetFlags();
    if (!(f & TcpHeader::ACK)) return;
    // The ACK travels receiver -> sender: its connection's data key is reversed.
    ConnKey k(ip.GetDestination().Get(), tcp.GetDestinationPort(), ip.GetSource().Get(), tcp.GetSourcePort());
    if (f & TcpHeader::SYN) {
        uint8_t s = 0;
        if (tcp.HasOption(TcpOption::WINSCALE)) {
            s = std::min<uint8_t>(14, DynamicCast<const TcpOptionWinScale>(tcp.GetOption(TcpOption::WINSCALE))->GetScale());
        }
        G.shift[k] = s;
        return;
    }
    G.acks++;
    auto it = G.shift.find(k);
    if (it == G.shift.end()) {
        G.unknown++;  // handshake not seen: left alone (docs/decisions.md §1 rule 2)
        return;
    }
    uint32_t shift = it->second;
    uint64_t wr = (uint64_t) tcp.GetWindowSize() << shift;
    auto m = G.mss.find(k);
    uint64_t mss = m == G.mss.end() ? G.defaultMss : m->second;
    uint64_t floor = G.kind == 2 ? (uint64_t) G.mtu : mss;
    uint64_t computed = (uint64_t) std::max(0.0, Computed((double) wr));
    uint64_t nw = std::min(wr, std::max(computed, floor));
    uint64_t unit = 1ull << shift;
    uint64_t field = std::max<uint64_t>(1, (nw + unit - 1) / unit);
    if (field >= tcp.GetWindowSize()) return;
    Ptr<Packet> p = item->GetPacket();
    // Byte tags (FlowMonitor's Ipv4FlowProbeTag among them) belong to the
    // bytes they were put on, and a header removed and added again is new
    // bytes: a pure ACK would lose its tag and FlowMonitor count it lost.
    // Keep every byte tag with its range (the header keeps its size).
    std::vector<std::tuple<Tag*, uint32_t, uint32_t>> tags;
    for (ByteTagIterator i = p->GetByteTagIterator(); i.HasNext();) {
        ByteTagIterator::Item t = i.Next();
        Tag* tag = dynamic_cast<Tag*>(t.GetTypeId().GetConstructor()());
        t.GetTag(*tag);
        tags.emplace_back(tag, t.GetStart(), t.GetEnd());
    }
    TcpHeader h;
    p->RemoveHeader(h);
    h.SetWindowSize((uint16_t) field);
    p->AddHeader(h);
    p->RemoveAllByteTags();
    for (auto& [tag, start, end] : tags) {
        p->AddByteTag(*tag, start, end);
        delete tag;
    }
    G.rewritten++;
}

// A FIFO queue disc that never drops and rewrites ACKs as they leave.
class AckGatewayQueueDisc : public QueueDisc {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnAckGatewayQueueDisc")
                                .SetParent<QueueDisc>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<AckGatewayQueueDisc>();
        return tid;
    }
    AckGatewayQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE, QueueSizeUnit::PACKETS) {}

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override { return GetInternalQueue(0)->Enqueue(item); }
    Ptr<QueueDiscItem> DoDequeue() override {
        Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (item && G.kind != 0) RewriteAck(item);
        return item;
    }
    bool CheckConfig() override {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0) return false;
        if (GetNInternalQueues() == 0) {
            // Large enough never to drop an ACK: the device queue below holds 100 (or 1000).
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(QueueSize("100000p"))));
        }
        return GetNInternalQueues() == 1;
    }
    void InitializeParams() override {}
};

// Registers the TypeId (cling does not run NS_OBJECT_ENSURE_REGISTERED's
// static initializer), so TrafficControlHelper can find it by name.
void GatewayRegister() { AckGatewayQueueDisc::GetTypeId(); }

// kind 1 = EWT (st = St), 2 = AWM (target T, beta, mtu floor, initial swnd, upper bound).
void GatewaySetup(int kind, Ptr<QueueDisc> dataQueue, double buffer, double st,
                  double target, double beta, double mtu, double swnd0, double maxSwnd, uint32_t defaultMss) {
    G = GatewayState();
    G.defaultMss = defaultMss;
    G.kind = kind;
    G.dataQueue = dataQueue;
    G.buffer = buffer;
    G.st = st;
    G.target = target;
    G.beta = beta;
    G.mtu = mtu;
    G.swnd = swnd0;
    G.maxSwnd = maxSwnd;
    dataQueue->TraceConnectWithoutContext("Enqueue", MakeCallback(&QfEnqueue));
    dataQueue->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&QfDrop));
    dataQueue->TraceConnectWithoutContext("Dequeue", MakeCallback(&QfDequeue));
}
uint64_t GatewayAcks() { return G.acks; }
uint64_t GatewayRewritten() { return G.rewritten; }
uint64_t GatewayUnknown() { return G.unknown; }
uint64_t GatewayAwmEvents() { return G.awmEvents; }
uint32_t GatewayActive() { return G.active; }
double GatewaySwnd() { return G.swnd; }
}  // namespace netreturn_ns3
