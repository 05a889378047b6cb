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

use netreturn_base::{InBand, Time, XcpFields};

use super::{AckEvent, CongestionControl, Window};

/// The XCP sender's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct XcpConfig {
    /// The feedback the sender asks for per segment, bytes (`H_feedback` as
    /// initialised, XCP paper section 3.1: "the desired window increase").
    /// `None` asks for as much as the routers give: the receiver's window
    /// still bounds what is sent.
    pub desired_feedback: Option<i32>,
}

#[derive(Clone, Debug)]
pub struct Xcp {
    cfg: XcpConfig,
}

impl Xcp {
    pub fn new(cfg: XcpConfig) -> Xcp {
        Xcp { cfg }
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
            rtt_us: srtt.map_or(0, |r| (r.nanos() / 1000).clamp(1, u32::MAX as u64) as u32),
            feedback: self.cfg.desired_feedback.unwrap_or(i32::MAX),
            ack: false,
        });
    }

    /// XCP section 3.1: "cwnd = max(cwnd + H_feedback, s)", for every ACK
    /// carrying echoed feedback (the receiver sums it over a delayed ACK).
    fn on_ack_event(&mut self, _now: Time, w: &mut Window, ev: &AckEvent) {
        let InBand::Xcp(x) = ev.inband else { return };
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
            acked: 1000,
            delivered: 1000,
            rtt: None,
            timestamps: None,
            duplicate: false,
            in_recovery,
            inband: InBand::Xcp(XcpFields { feedback, ack: true, ..Default::default() }),
        }
    }

    #[test]
    fn the_sender_writes_its_window_rtt_and_desired_feedback_into_every_segment() {
        let mut cc = Xcp::new(XcpConfig { desired_feedback: Some(500) });
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
    fn a_loss_halves_the_flight_as_tcp_does() {
        let mut cc = Xcp::new(XcpConfig::default());
        let w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, 10_000), 5_000);
        assert!(cc.fast_retransmit());
    }
}
