//! SAP-LAW, Smart Access Point with Limited Advertised Window (seed 000
//! §3.2, eq. 5; SPEC.md §2.4).
//!
//! `maxTCPrate = (C - UDPtraffic) / #TCPflows` (seed 000 eq. 5), and each
//! flow's ACKs carry at most `maxTCPrate * RTT_flow`, the window that lets
//! the flow send its share during one of its own round trips.
//!
//! # Measuring `UDPtraffic`
//!
//! The non-TCP rate in the data direction is an exponentially weighted
//! moving average over time with time constant `tau`: at each packet of
//! `b` bytes arriving `dt` after the previous one,
//! `rate <- rate * exp(-dt / tau) + b / tau`. A constant-rate stream of `r`
//! bytes/s converges to `r`; a stream that stops decays with `tau`. Unlike a
//! per-packet EWMA its weight does not depend on the packet rate, and unlike
//! a sliding window it needs O(1) state. `tau = 500 ms` by default: a few
//! RTTs of the paper's scenarios, long enough to smooth a CBR source's
//! packet spacing, short enough to follow the on/off changes of seed 004's
//! experiments.

use netreturn_base::Time;
use serde::Deserialize;

use crate::controller::{Bottleneck, FlowInfo, WindowController};

/// SAP-LAW settings.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SapLawConfig {
    /// `tau`, time constant of the UDP rate average.
    #[serde(rename = "udp_time_constant")]
    pub udp_rate_time_constant: Time,
}

impl Default for SapLawConfig {
    fn default() -> SapLawConfig {
        SapLawConfig { udp_rate_time_constant: Time::from_millis(500) }
    }
}

/// A rate average with exponential decay in time (see the module docs).
#[derive(Clone, Debug)]
pub struct DecayingRate {
    tau: f64,
    /// Bytes per second, as of `at`.
    rate: f64,
    at: Option<Time>,
}

impl DecayingRate {
    pub fn new(tau: Time) -> DecayingRate {
        DecayingRate { tau: tau.secs_f64().max(1e-9), rate: 0.0, at: None }
    }

    fn decay_to(&mut self, now: Time) {
        if let Some(at) = self.at {
            let dt = now.saturating_sub(at).secs_f64();
            self.rate *= (-dt / self.tau).exp();
        }
        self.at = Some(now.max(self.at.unwrap_or(now)));
    }

    pub fn add(&mut self, now: Time, bytes: u32) {
        self.decay_to(now);
        self.rate += bytes as f64 / self.tau;
    }

    /// Bytes per second at `now`.
    pub fn bytes_per_sec(&mut self, now: Time) -> f64 {
        self.decay_to(now);
        self.rate
    }
}

/// SAP-LAW state: the UDP rate and the number of active TCP flows; the RTT
/// of each flow lives in the gateway's flow table.
#[derive(Clone, Debug)]
pub struct SapLaw {
    /// `C`, bytes per second.
    capacity: f64,
    udp: DecayingRate,
    /// `#TCPflows`: flows of the table that carry data into the queue.
    tcp_flows: u32,
}

impl SapLaw {
    pub fn new(cfg: SapLawConfig, link: Bottleneck) -> SapLaw {
        SapLaw {
            capacity: link.link_rate.bytes_per_sec_f64(),
            udp: DecayingRate::new(cfg.udp_rate_time_constant),
            tcp_flows: 0,
        }
    }

    /// Measured non-TCP rate, bytes per second.
    pub fn udp_rate(&mut self, now: Time) -> f64 {
        self.udp.bytes_per_sec(now)
    }

    /// `maxTCPrate` (seed 000 eq. 5), bytes per second.
    pub fn max_tcp_rate(&mut self, now: Time) -> f64 {
        let spare = (self.capacity - self.udp.bytes_per_sec(now)).max(0.0);
        spare / self.tcp_flows.max(1) as f64
    }
}

impl WindowController for SapLaw {
    fn on_data_other(&mut self, now: Time, bytes: u32) {
        self.udp.add(now, bytes);
    }

    fn on_flow_start(&mut self, _now: Time, _flow: &FlowInfo) {
        self.tcp_flows += 1;
    }

    fn on_flow_end(&mut self, _now: Time, _flow: &FlowInfo) {
        self.tcp_flows = self.tcp_flows.saturating_sub(1);
    }

    fn window(&mut self, now: Time, flow: &FlowInfo) -> Option<u64> {
        // Without a handshake RTT there is no window to compute (SPEC.md
        // §2.4: RTT_flow measured from the handshake as in RWM).
        let rtt = flow.rtt?;
        // W = maxTCPrate * RTT_flow.
        Some((self.max_tcp_rate(now) * rtt.secs_f64()) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::{FlowKey, Rate};

    fn flow(rtt_ms: u64) -> FlowInfo {
        FlowInfo {
            key: FlowKey { src: 1, dst: 2, sport: 1, dport: 80, proto: FlowKey::TCP },
            rtt: Some(Time::from_millis(rtt_ms)),
            mss: 1460,
            class: 0,
            wr: 1 << 20,
            ack: 0,
        }
    }

    #[test]
    fn a_constant_udp_stream_is_measured_at_its_rate() {
        let mut r = DecayingRate::new(Time::from_millis(500));
        // 1400 B every 1 ms = 1.4 MB/s, for 5 s (10 time constants).
        for ms in 0..5000 {
            r.add(Time::from_millis(ms), 1400);
        }
        let got = r.bytes_per_sec(Time::from_millis(5000));
        assert!((got - 1.4e6).abs() < 0.01 * 1.4e6, "{got}");
        // It decays once the stream stops: e^-2 after 2 tau.
        let later = r.bytes_per_sec(Time::from_millis(6000));
        assert!((later / got - (-2.0f64).exp()).abs() < 0.01);
    }

    /// seed 000 eq. 5 with the scenario 2 numbers: 45 Mb/s, UDP CBR at
    /// 13.35 Mb/s, 10 TCP flows, RTT 84 ms.
    #[test]
    fn the_window_is_the_fair_share_of_the_capacity_left_by_udp_times_the_rtt() {
        let link =
            Bottleneck { buffer_bytes: 97_000, link_rate: Rate::mbps(45), default_mss: 1458, packet_bytes: None };
        let mut s = SapLaw::new(SapLawConfig::default(), link);
        for _ in 0..10 {
            s.on_flow_start(Time::ZERO, &flow(84));
        }
        // 13.35 Mb/s in 1400 B packets: one every 838.95 us.
        let gap = 1400.0 * 8.0 / 13.35e6;
        let mut t = 0.0;
        while t < 5.0 {
            s.on_data_other(Time::from_secs_f64(t), 1400);
            t += gap;
        }
        let now = Time::from_secs_f64(t);
        let expected = (45e6 - 13.35e6) / 8.0 / 10.0 * 0.084;
        let got = s.window(now, &flow(84)).unwrap() as f64;
        assert!((got - expected).abs() < 0.01 * expected, "got {got} expected {expected}");
        // A flow with twice the RTT gets twice the window: equal rates.
        let got2 = s.window(now, &flow(168)).unwrap() as f64;
        assert!((got2 / got - 2.0).abs() < 1e-3);
    }

    #[test]
    fn a_flow_without_a_handshake_rtt_is_left_alone() {
        let link =
            Bottleneck { buffer_bytes: 97_000, link_rate: Rate::mbps(45), default_mss: 1458, packet_bytes: None };
        let mut s = SapLaw::new(SapLawConfig::default(), link);
        assert_eq!(s.window(Time::ZERO, &FlowInfo { rtt: None, ..flow(10) }), None);
    }

    #[test]
    fn udp_above_capacity_asks_for_no_window_at_all() {
        let link = Bottleneck { buffer_bytes: 97_000, link_rate: Rate::mbps(1), default_mss: 1458, packet_bytes: None };
        let mut s = SapLaw::new(SapLawConfig::default(), link);
        for ms in 0..3000 {
            s.on_data_other(Time::from_millis(ms), 1400); // 11.2 Mb/s
        }
        assert_eq!(s.window(Time::from_millis(3000), &flow(50)), Some(0));
    }
}
