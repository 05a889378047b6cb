// seed 004's lossy link in ns-3 3.44 (python/netreturn/ns3lossy.py): what the
// dumbbell's sinks (dumbbell.cc, compiled before this file) do not record,
// the ssthresh set at each loss reaction and TcpWestwoodPlus's bandwidth
// estimate (its `EstimatedBW` trace source) over time.
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include <limits>
#include <vector>

namespace netreturn_ns3 {
using namespace ns3;

struct Lossy {
    bool westwood = false;
    double ssthSum = 0;
    uint64_t ssthN = 0;
    std::vector<double> bweT, bweV;  // s, bytes per second
};
static Lossy LS;

void LossyReset(bool westwood) {
    LS = Lossy();
    LS.westwood = westwood;
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

static void LossyHook(Ptr<BulkSendApplication> app) {
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(app->GetSocket());
    if (!s) return;
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&LossySsth));
    if (LS.westwood) {
        PointerValue pv;
        s->GetAttribute("CongestionOps", pv);
        pv.Get<TcpCongestionOps>()->TraceConnectWithoutContext("EstimatedBW", MakeCallback(&LossyBwe));
    }
}
void ScheduleLossyHook(Ptr<Application> app, double startS) {
    Simulator::Schedule(Seconds(startS) + NanoSeconds(1), &LossyHook, DynamicCast<BulkSendApplication>(app));
}

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
double LossyBweT(uint32_t k) { return LS.bweT[k]; }
double LossyBweV(uint32_t k) { return LS.bweV[k]; }
}  // namespace netreturn_ns3
