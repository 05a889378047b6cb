//! Reno (RFC 5681) and NewReno (RFC 5681 + RFC 6582) window growth.
//!
//! Both grow the window the same way; they differ only in what a partial
//! ACK does during fast recovery without SACK (Reno leaves recovery, NewReno
//! retransmits the next hole and stays), which the connection asks through
//! [`CongestionControl::partial_ack_ends_recovery`]. With SACK both use the
//! RFC 6675 recovery of the connection.

use netreturn_base::Time;

use super::{Ack, CongestionControl, Window};

#[derive(Clone, Debug)]
pub struct Reno {
    /// RFC 3465 L in segments: slow start grows by at most L * SMSS per ACK.
    abc_limit: u64,
    newreno: bool,
}

impl Reno {
    pub fn new(abc_limit: u32, newreno: bool) -> Reno {
        Reno { abc_limit: abc_limit.max(1) as u64, newreno }
    }
}

/// Slow start with appropriate byte counting: RFC 3465 section 2.2 /
/// RFC 5681 (2), cwnd += min(N, L * SMSS). Returns bytes left unused when
/// the window crosses ssthresh, for congestion avoidance.
pub fn slow_start(w: &mut Window, acked: u64, abc_limit: u64) -> u64 {
    let inc = acked.min(abc_limit * w.mss);
    let room = w.ssthresh.saturating_sub(w.cwnd);
    if inc <= room {
        w.cwnd += inc;
        0
    } else {
        w.cwnd += room;
        acked.saturating_sub(room)
    }
}

/// Congestion avoidance, RFC 5681 (3): cwnd += SMSS * SMSS / cwnd per ACK,
/// at least one byte (as ns-3's TcpNewReno, which counts ACKs, not bytes).
pub fn congestion_avoidance(w: &mut Window) {
    w.cwnd += (w.mss * w.mss / w.cwnd.max(1)).max(1);
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, _now: Time, w: &mut Window, ack: &Ack) {
        // Linux tcp_reno_cong_avoid: no growth unless cwnd limited.
        if !ack.cwnd_limited {
            return;
        }
        let mut left = ack.acked;
        if w.in_slow_start() {
            left = slow_start(w, left, self.abc_limit);
        }
        if !w.in_slow_start() && left > 0 {
            congestion_avoidance(w);
        }
    }

    fn partial_ack_ends_recovery(&self) -> bool {
        !self.newreno
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One RTT in which the whole window is acknowledged, one ACK per segment.
    fn round(cc: &mut Reno, w: &mut Window) {
        let segs = w.cwnd / w.mss;
        for _ in 0..segs {
            let ack = Ack { acked: w.mss, rtt: None, srtt: None, snd_una: 0, snd_max: 0, cwnd_limited: true };
            cc.on_ack(Time::ZERO, w, &ack);
        }
    }

    #[test]
    fn slow_start_doubles_per_rtt_then_congestion_avoidance_adds_one_mss() {
        // Guards RFC 5681 (2) and (3) growth rates.
        let mut cc = Reno::new(1, true);
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: 40 * mss, mss };
        round(&mut cc, &mut w);
        assert_eq!(w.cwnd, 20 * mss);
        round(&mut cc, &mut w);
        assert_eq!(w.cwnd, 40 * mss, "capped at ssthresh");
        // Congestion avoidance: ~1 MSS per RTT (a bit less, as cwnd grows
        // within the round).
        let before = w.cwnd;
        round(&mut cc, &mut w);
        let grown = w.cwnd - before;
        assert!(grown > 9 * mss / 10 && grown <= mss, "grew {grown}");
    }

    #[test]
    fn byte_counting_limits_a_stretch_ack_to_l_segments() {
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: u64::MAX, mss };
        let ack = Ack { acked: 5 * mss, rtt: None, srtt: None, snd_una: 0, snd_max: 0, cwnd_limited: true };
        Reno::new(2, true).on_ack(Time::ZERO, &mut w, &ack);
        assert_eq!(w.cwnd, 12 * mss, "RFC 3465 L = 2");
    }

    #[test]
    fn loss_halves_the_flight_but_not_below_two_segments() {
        let mut cc = Reno::new(1, false);
        let w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, 10_000), 5_000);
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, 1_000), 2_000);
        assert!(cc.partial_ack_ends_recovery(), "Reno, not NewReno");
    }
}
