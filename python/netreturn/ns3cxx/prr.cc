// PRR variants for the ns-3 3.44 reference harness (python/netreturn/ns3ref.py,
// option --prr; docs/validation.md, "Why the first flow keeps its lead").
//
// Loaded by cppyy.cppdef before dumbbell.cc. Two recovery algorithms:
//  * NetreturnPrr: ns-3 3.44's TcpPrrRecovery with a switch per departure
//    from RFC 6937 (modes wide, wide-nobonus, rfc6937, rfc6937-noexit);
//  * UpstreamPrr: ns-3-dev's repaired TcpPrrRecovery (mode upstream),
//    backported to the 3.44 TcpRecoveryOps interface.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include <algorithm>
#include <cmath>

namespace netreturn_ns3 {
using namespace ns3;

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


// ---- ns-3-dev's repaired PRR (mode "upstream"), backported to 3.44.
// Upstream: nsnam/ns-3-dev src/internet/model/tcp-prr-recovery.cc at commit
// 140646449a337d54deb474da299a9c0e2eb5a576 (2026-07-23), i.e. ns-3 3.48 plus
//  * 25f76649d (#1282): 64-bit product and ceiling division, signed sendCount;
//  * 05c9099bb (#1350): no SMSS added per duplicate ACK when SACK is on (the
//    caller already passes the SACK-derived DeliveredData); the "+1 SMSS"
//    estimate and its Savage99 bound stay for connections without SACK;
//  * 6523c1aad, f2ccf2af2 (#1351): RecoverFS = FlightSize (SND.NXT - SND.UNA)
//    minus the bytes SACKed before the triggering ACK, i.e.
//    unAckDataCount - sacked(after the ACK) + deliveredBytes, at least 1 SMSS.
// What the backport has to supply itself: 3.44's EnterRecovery gets no
// bytesSacked and its TcpSocketState no m_sackEnabled (both added upstream by
// the same commits, in TcpSocketBase). We read the scoreboard's SACKed bytes
// from the socket's TcpTxBuffer (what upstream passes, m_txBuffer->GetSacked())
// and take SACK as negotiated when the sender enables it: in this harness both
// ends do (TcpSocketBase::Sack true everywhere). Unchanged from 3.44 and
// upstream alike: PRR-CRB with the safe-ACK (m_isRetransDataAcked) SSRB bonus,
// and TcpSocketBase still feeding an ACK that SACKs and advances SND.UNA to
// DoRecovery twice (DupAck, then ProcessAck's partial-ACK branch).
class UpstreamPrr : public TcpRecoveryOps {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("ns3::NetreturnUpstreamPrr")
                                .SetParent<TcpRecoveryOps>()
                                .SetGroupName("Internet")
                                .AddConstructor<UpstreamPrr>();
        return tid;
    }
    UpstreamPrr() {}
    UpstreamPrr(const UpstreamPrr& o)
        : TcpRecoveryOps(o), m_prrDelivered(o.m_prrDelivered), m_prrOut(o.m_prrOut),
          m_recoveryFlightSize(o.m_recoveryFlightSize), m_txBuffer(o.m_txBuffer), m_sack(o.m_sack) {}
    std::string GetName() const override { return "NetreturnUpstreamPrr"; }
    // The sender's scoreboard (for the SACKed bytes) and whether SACK is on.
    void Attach(Ptr<TcpTxBuffer> txBuffer, bool sack) { m_txBuffer = txBuffer; m_sack = sack; }

    void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t unAckDataCount, uint32_t deliveredBytes) override {
        m_prrOut = 0;
        m_prrDelivered = 0;
        // RFC 6937 / RFC 9937 section 6.1: RecoverFS = FlightSize, not pipe.
        m_recoveryFlightSize = unAckDataCount;
        if (m_sack && m_txBuffer) {
            // RFC 9937 section 6.1 SACK refinement (upstream f2ccf2af2): remove
            // the bytes SACKed before this ACK; signed, at least 1 SMSS.
            int64_t recoverFs = (int64_t) unAckDataCount - (int64_t) m_txBuffer->GetSacked() + (int64_t) deliveredBytes;
            m_recoveryFlightSize = (uint32_t) std::max<int64_t>(recoverFs, tcb->m_segmentSize);
        }
        DoRecovery(tcb, deliveredBytes, true);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override {
        // RFC 9937 section 6.2: "+1 SMSS per duplicate ACK" only without SACK.
        if (isDupAck && !m_sack && m_prrDelivered < m_recoveryFlightSize) {
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
            // Proportional part in 64 bits, ceil(a / b) in integers (#1282).
            uint64_t dividend = (uint64_t) m_prrDelivered * (uint64_t) ssThresh;
            uint64_t fs = m_recoveryFlightSize;
            uint64_t quotient = dividend / fs + (dividend % fs != 0);
            sendCount = (int64_t) quotient - (int64_t) m_prrOut;
        } else {
            // PRR-CRB, plus one SMSS on a safe ACK (PRR-SSRB), signed.
            int64_t limit = std::max<int64_t>((int64_t) m_prrDelivered - (int64_t) m_prrOut, (int64_t) deliveredBytes);
            if (tcb->m_isRetransDataAcked) {
                limit += (int64_t) tcb->m_segmentSize;
            }
            sendCount = std::min<int64_t>(limit, (int64_t) ssThresh - (int64_t) inFlight);
        }
        // Force a fast retransmit upon entering fast recovery.
        sendCount = std::max<int64_t>(sendCount, m_prrOut > 0 ? 0 : (int64_t) tcb->m_segmentSize);
        tcb->m_cWnd = inFlight + (uint32_t) sendCount;
        tcb->m_cWndInfl = tcb->m_cWnd;
    }
    void ExitRecovery(Ptr<TcpSocketState> tcb) override { tcb->m_cWndInfl = tcb->m_cWnd; }
    void UpdateBytesSent(uint32_t bytesSent) override { m_prrOut += bytesSent; }
    Ptr<TcpRecoveryOps> Fork() override { return CopyObject<UpstreamPrr>(this); }

  private:
    uint32_t m_prrDelivered{0};
    uint32_t m_prrOut{0};
    uint32_t m_recoveryFlightSize{0};
    Ptr<TcpTxBuffer> m_txBuffer;
    bool m_sack{true};
};

static bool PrrUpstream = false;

void SetPrrMode(bool wide, bool bonus, bool once, bool ssrb, bool flight, bool noexit) {
    PrrCustom = true;
    PM.wide = wide; PM.bonus = bonus; PM.once = once; PM.ssrb = ssrb; PM.flight = flight; PM.noexit = noexit;
}
void SetPrrUpstream() { PrrUpstream = true; }

// Replace the sender's recovery algorithm (called when BulkSend has created
// its socket, before the connection starts).
void InstallPrr(Ptr<TcpSocketBase> s) {
    if (PrrUpstream) {
        Ptr<UpstreamPrr> prr = CreateObject<UpstreamPrr>();
        BooleanValue sack;
        s->GetAttribute("Sack", sack);
        prr->Attach(s->GetTxBuffer(), sack.Get());
        s->SetRecoveryAlgorithm(prr);
    } else if (PrrCustom) {
        s->SetRecoveryAlgorithm(CreateObject<NetreturnPrr>());
    }
}
}  // namespace netreturn_ns3
