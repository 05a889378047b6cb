//! Early Window Tailoring (seed 000 §4, Algorithm 1; SPEC.md §2.1).
//!
//! When an ACK leaves the gateway and the watched queue holds more than `St`
//! bytes, its window is scaled by the free fraction of the buffer:
//! `Wewt = (B - U) / B * Wr`. No per-flow state.

use netreturn_base::{Size, Time};
use serde::Deserialize;

use crate::controller::{Bottleneck, FlowInfo, WindowController, WindowRule};
use crate::view::QueueEvent;

/// EWT settings; in scenario files `gateway.ewt = { st = "29kB" }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EwtConfig {
    /// `St`, the start-up threshold in bytes. `None` = the paper's ratio,
    /// `St = B * 29 / 97` (seed 000 Table 3: B = 97 kB, St = 29 kB).
    /// Packets count as MTU-sized (MSS + 40 bytes).
    #[serde(rename = "st")]
    pub start_threshold: Option<Size>,
}

/// EWT state: only the last seen occupancy of the watched queue.
#[derive(Clone, Debug)]
pub struct Ewt {
    /// `B`, bytes.
    buffer: u64,
    /// `St`, bytes.
    start: u64,
    /// `U`, the occupancy after the last queue event, bytes.
    occupancy: u64,
}

impl Ewt {
    pub fn new(cfg: EwtConfig, link: Bottleneck) -> Ewt {
        let buffer = link.buffer_bytes.max(1);
        // seed 000 Table 3: St = 29 kB for B = 97 kB.
        let start = cfg.start_threshold.map(|s| s.bytes(link.mtu())).unwrap_or(buffer * 29 / 97);
        Ewt { buffer, start, occupancy: 0 }
    }

    /// The start-up threshold `St` in force, bytes.
    pub fn start_threshold(&self) -> u64 {
        self.start
    }

    /// seed 000 eq. 9 and 10, without the MSS floor (the gateway applies it).
    pub fn tailor(&self, wr: u64) -> Option<u64> {
        self.fraction().map(|r| r.apply(wr))
    }

    /// `Ba / B`, the fraction of `Wr` EWT leaves (seed 000 eq. 10), or
    /// `None` while it does not act.
    fn fraction(&self) -> Option<WindowRule> {
        // SPEC.md §2.1 erratum: Algorithm 1 line "if St < U then return" is
        // inverted; the text and Table 1 say EWT acts only when U > St.
        if self.occupancy <= self.start {
            return None;
        }
        // Ba = B - U (seed 000 eq. 9).
        let ba = self.buffer.saturating_sub(self.occupancy);
        // Wewt = Ba / B * Wr (seed 000 eq. 10), in integers
        // (`WindowRule::apply`: u128 only if Ba * Wr overflows u64).
        Some(WindowRule::Fraction { num: ba, den: self.buffer })
    }
}

impl WindowController for Ewt {
    fn on_queue(&mut self, _now: Time, ev: &QueueEvent) {
        self.occupancy = ev.backlog_bytes;
    }

    fn window(&mut self, _now: Time, flow: &FlowInfo) -> Option<u64> {
        self.tailor(flow.wr)
    }

    /// EWT's window is a fraction of each ACK's own `Wr`.
    fn rule(&mut self, _now: Time, _flow: &FlowInfo) -> Option<WindowRule> {
        self.fraction()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::WindowController;
    use crate::gateway::{GatewayConfig, WindowGateway};
    use crate::registry::ControllerConfig;
    use crate::view::{QueueEventKind, TcpView};
    use netreturn_base::{FlowKey, Rate, TcpFlags};

    const KB: u64 = 1024;

    fn seg(key: FlowKey, flags: TcpFlags, window: u16, wscale: Option<u8>) -> TcpView {
        TcpView { key, flags, seq: 0, ack: 0, window, wscale, mss: wscale.map(|_| 1460), payload_len: 0 }
    }

    fn queue_at(bytes: u64) -> QueueEvent {
        QueueEvent {
            kind: QueueEventKind::Enqueue,
            size: 1500,
            backlog_bytes: bytes,
            backlog_packets: (bytes / 1500) as u32,
        }
    }

    /// seed 000 §4.2 Table 1 (B = 100 kB, St = 30 kB, Wr = 60 kB), through
    /// the whole gateway with window scale 7 learned from the handshake (SYN
    /// in the data direction, as in the EWT dumbbell). kB = 1024 B here so
    /// every window is a multiple of 2^7 and the results are exact.
    #[test]
    fn table_1_of_the_ewt_paper_holds_through_the_gateway() {
        let mut cfg = GatewayConfig::new(
            ControllerConfig::Ewt(EwtConfig { start_threshold: Some(Size::Bytes(30 * KB)) }),
            100 * KB,
            Rate::mbps(4),
        );
        cfg.assume_wscale = None;
        let mut gw = WindowGateway::new(cfg);
        let data = FlowKey { src: 1, dst: 2, sport: 5000, dport: 80, proto: FlowKey::TCP };
        let t = Time::from_millis;
        gw.on_data(t(0), &seg(data, TcpFlags::SYN, 65535, Some(7)));
        gw.on_ack(t(10), &seg(data.reversed(), TcpFlags::SYN | TcpFlags::ACK, 65535, Some(7)));
        gw.on_data(t(20), &seg(data, TcpFlags::ACK, 500, None));

        // Wr = 60 kB = 480 << 7.
        let ack = seg(data.reversed(), TcpFlags::ACK, 480, None);
        for (u, expected) in [(20 * KB, None), (50 * KB, Some(30 * KB)), (80 * KB, Some(12 * KB))] {
            gw.on_queue(t(30), &queue_at(u));
            let got = gw.on_ack(t(30), &ack).map(|f| (f as u64) << 7);
            assert_eq!(got, expected, "U = {u}");
        }
        assert_eq!(gw.stats().acks_rewritten, 2);
    }

    #[test]
    fn ewt_acts_only_above_the_start_threshold_not_below_as_algorithm_1_reads() {
        let link = Bottleneck { buffer_bytes: 97_000, link_rate: Rate::mbps(4), default_mss: 1458, packet_bytes: None };
        let mut ewt = Ewt::new(EwtConfig::default(), link);
        assert_eq!(ewt.start_threshold(), 29_000);
        ewt.on_queue(Time::ZERO, &queue_at(29_000));
        assert_eq!(ewt.tailor(60_000), None);
        ewt.on_queue(Time::ZERO, &queue_at(29_001));
        assert!(ewt.tailor(60_000).unwrap() < 60_000);
    }

    #[test]
    fn a_full_buffer_asks_for_a_zero_window_which_the_gateway_floors() {
        let link = Bottleneck { buffer_bytes: 97_000, link_rate: Rate::mbps(4), default_mss: 1458, packet_bytes: None };
        let mut ewt = Ewt::new(EwtConfig::default(), link);
        ewt.on_queue(Time::ZERO, &queue_at(97_000));
        assert_eq!(ewt.tailor(60_000), Some(0));
    }
}
