//! The XCP sender (Katabi, Handley & Rohrs, "Congestion Control for High
//! Bandwidth-Delay Product Networks", SIGCOMM 2002, section 3.1; SPEC.md 2.7).
//!
//! The window is steered by the routers: every data segment carries the
//! congestion header (`H_cwnd`, `H_rtt`, `H_feedback`), each XCP router on
//! the path lowers `H_feedback` to what it allows, the receiver echoes it in
//! its ACK and the sender applies it: `cwnd = max(cwnd + H_feedback, s)`.
//! There is no slow start and no additive increase of its own.
//!
//! Loss: "XCP ... reacts to a loss as TCP does" (XCP paper section 3.1, and
//! ns-2's XCP sender, a NewReno underneath): the default halving of
//! [`CongestionControl::ssthresh_after_loss`] and the connection's recovery.
//! While the connection is in fast recovery it owns cwnd (RFC 6582 / PRR),
//! so echoed feedback arriving then is not applied.

use std::num::NonZeroU32;

use netreturn_base::{InBand, Time, XcpFields};

use super::{AckEvent, CongestionControl, Window};

/// The XCP sender's settings (a scenario's `tcp.xcp = { ... }` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct XcpConfig {
    /// The feedback the sender asks for per segment, bytes (`H_feedback` as
    /// initialised, XCP paper section 3.1: "the desired window increase").
    /// `None` asks for as much as the routers give: the receiver's window
    /// still bounds what is sent.
    pub desired_feedback: Option<i32>,
    /// Write `H_rtt = 0` ("no valid estimate", XCP paper section 3.1) until
    /// an ACK of data has given an RTT sample, ignoring the handshake's
    /// sample. The XCP paper's first packet of a flow is a data packet: its
    /// ns-2 senders (one-way agents, no handshake) send their whole first
    /// window with `H_rtt = 0`, which routers give no positive feedback.
    /// Off (the default), our sender reports the handshake's sample from
    /// its first data segment on (docs/xcp.md, "Differences from the
    /// paper, explained").
    pub ignore_handshake_rtt: bool,
    /// The initial window of XCP endpoints, segments; `None` keeps `[tcp]
    /// initial_cwnd`. ns-2.35's XCP senders (`Agent/TCP/Reno/XCP`) start
    /// at `windowInit_` = 2. Applied only where the endpoint runs XCP
    /// (`netreturn_scenario::resolve::endpoint_config`), so one scenario
    /// file can give XCP's rows ns-2's end systems and leave the others'.
    pub initial_cwnd: Option<NonZeroU32>,
    /// XCP receivers ACK every n-th full segment; `None` keeps `[tcp]
    /// delayed_ack_count`. ns-2.35's `Agent/TCPSink/XCPSink` is a
    /// `TCPSink`: an ACK per segment (1).
    pub delayed_ack_count: Option<NonZeroU32>,
}

#[derive(Clone, Debug)]
pub struct Xcp {
    cfg: XcpConfig,
    /// An ACK of data (echoing XCP feedback) has given an RTT sample.
    data_rtt: bool,
}

impl Xcp {
    pub fn new(cfg: XcpConfig) -> Xcp {
        Xcp { cfg, data_rtt: false }
    }
}

impl CongestionControl for Xcp {
    /// XCP section 3.1: the sender writes its current cwnd and RTT estimate
    /// and its desired feedback; the routers only ever lower the latter.
    fn on_send(&mut self, _now: Time, w: &Window, srtt: Option<Time>, inband: &mut InBand) {
        *inband = InBand::Xcp(XcpFields {
            cwnd: w.cwnd.min(u32::MAX as u64) as u32,
            // 0 stands for "no estimate yet": routers give such a packet no
            // per-flow feedback (its share cannot be computed without rtt).
            rtt_us: srtt
                .filter(|_| self.data_rtt || !self.cfg.ignore_handshake_rtt)
                .map_or(0, |r| (r.nanos() / 1000).clamp(1, u32::MAX as u64) as u32),
            feedback: self.cfg.desired_feedback.unwrap_or(i32::MAX),
            ack: false,
        });
    }

    /// XCP section 3.1: "cwnd = max(cwnd + H_feedback, s)", for every ACK
    /// carrying echoed feedback (the receiver sums it over a delayed ACK).
    fn on_ack_event(&mut self, _now: Time, w: &mut Window, ev: &AckEvent) {
        let InBand::Xcp(x) = ev.inband else { return };
        // An ACK echoing XCP feedback acknowledges data, not the SYN.
        self.data_rtt |= x.ack && ev.rtt.is_some();
        if !x.ack || ev.in_recovery || x.feedback == i32::MAX {
            // i32::MAX: no XCP router on the path touched the header.
            return;
        }
        let cwnd = w.cwnd as i64 + x.feedback as i64;
        w.cwnd = (cwnd.max(w.mss as i64) as u64).min(u32::MAX as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack_with(feedback: i32, in_recovery: bool) -> AckEvent {
        AckEvent {
            in_recovery,
            inband: InBand::Xcp(XcpFields { feedback, ack: true, ..Default::default() }),
            ..AckEvent::delivering(1000)
        }
    }

    #[test]
    fn the_sender_writes_its_window_rtt_and_desired_feedback_into_every_segment() {
        let mut cc = Xcp::new(XcpConfig { desired_feedback: Some(500), ..Default::default() });
        let w = Window { cwnd: 20_000, ssthresh: u64::MAX, mss: 1000 };
        let mut ib = InBand::None;
        cc.on_send(Time::ZERO, &w, Some(Time::from_millis(80)), &mut ib);
        assert_eq!(ib, InBand::Xcp(XcpFields { cwnd: 20_000, rtt_us: 80_000, feedback: 500, ack: false }));
        cc.on_send(Time::ZERO, &w, None, &mut ib);
        let InBand::Xcp(x) = ib else { panic!() };
        assert_eq!(x.rtt_us, 0, "no estimate yet");
    }

    #[test]
    fn echoed_feedback_moves_cwnd_but_never_below_one_segment() {
        // XCP section 3.1: cwnd = max(cwnd + H_feedback, s).
        let mut cc = Xcp::new(XcpConfig::default());
        let mut w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        cc.on_ack_event(Time::ZERO, &mut w, &ack_with(1_500, false));
        assert_eq!(w.cwnd, 11_500);
        cc.on_ack_event(Time::ZERO, &mut w, &ack_with(-4_000, false));
        assert_eq!(w.cwnd, 7_500);
        cc.on_ack_event(Time::ZERO, &mut w, &ack_with(-100_000, false));
        assert_eq!(w.cwnd, 1000, "floor: one segment");
    }

    #[test]
    fn feedback_is_left_alone_in_recovery_and_without_an_xcp_router() {
        let mut cc = Xcp::new(XcpConfig::default());
        let mut w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        cc.on_ack_event(Time::ZERO, &mut w, &ack_with(1_500, true));
        cc.on_ack_event(Time::ZERO, &mut w, &ack_with(i32::MAX, false));
        assert_eq!(w.cwnd, 10_000);
    }

    #[test]
    fn without_the_handshake_rtt_the_first_window_says_no_estimate_until_an_ack_of_data_gives_one() {
        // XCP section 3.1: "In the first packet of a flow, H_rtt is set to
        // zero"; ns-2's senders have no handshake, so this holds for their
        // whole first window.
        let mut cc = Xcp::new(XcpConfig { ignore_handshake_rtt: true, ..Default::default() });
        let w = Window { cwnd: 2_000, ssthresh: u64::MAX, mss: 1000 };
        let srtt = Some(Time::from_millis(80)); // from the SYN exchange
        let rtt_of = |cc: &mut Xcp| {
            let mut ib = InBand::None;
            cc.on_send(Time::ZERO, &w, srtt, &mut ib);
            let InBand::Xcp(x) = ib else { panic!() };
            x.rtt_us
        };
        assert_eq!(rtt_of(&mut cc), 0);
        let mut w2 = w;
        let mut ack = ack_with(0, false);
        cc.on_ack_event(Time::ZERO, &mut w2, &ack);
        assert_eq!(rtt_of(&mut cc), 0, "an ACK without an RTT sample changes nothing");
        ack.rtt = Some(Time::from_millis(81));
        cc.on_ack_event(Time::ZERO, &mut w2, &ack);
        assert_eq!(rtt_of(&mut cc), 80_000, "then the estimate goes out");
        // The default reports the handshake's sample from the start.
        assert_eq!(rtt_of(&mut Xcp::new(XcpConfig::default())), 80_000);
    }

    #[test]
    fn a_loss_halves_the_flight_as_tcp_does() {
        let mut cc = Xcp::new(XcpConfig::default());
        let w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, 10_000), 5_000);
        assert!(cc.fast_retransmit());
    }
}
