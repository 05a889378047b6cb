//! Reno (RFC 5681) and NewReno (RFC 5681 + RFC 6582) window growth.
//!
//! Both grow the window the same way; they differ only in what a partial
//! ACK does during fast recovery without SACK (Reno leaves recovery, NewReno
//! retransmits the next hole and stays), which the connection asks through
//! [`CongestionControl::partial_ack_ends_recovery`]. With SACK both use the
//! RFC 6675 recovery of the connection.

use netreturn_base::Time;

use super::{Ack, CongestionControl, Window};

/// How the window grows per acknowledgment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Growth {
    /// ns-3 3.44 `TcpNewReno`: slow start adds at most `abc_limit` segments
    /// per ACK (RFC 3465's L), congestion avoidance SMSS * SMSS / cwnd per
    /// ACK, however many segments it acknowledges (RFC 5681 (3)).
    #[default]
    Ns3,
    /// Linux `tcp_reno_cong_avoid`: slow start adds every segment
    /// acknowledged (`tcp_slow_start`), congestion avoidance one segment per
    /// cwnd's worth acknowledged (`tcp_cong_avoid_ai`), so a delayed ACK of
    /// two segments counts two (RFC 3465's byte counting).
    Linux,
}

/// Settings of Reno and NewReno (`tcp.newreno = { growth = "linux" }`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenoConfig {
    pub growth: Growth,
}

#[derive(Clone, Debug)]
pub struct Reno {
    /// RFC 3465 L in segments: slow start grows by at most L * SMSS per ACK.
    abc_limit: u64,
    newreno: bool,
    growth: Growth,
    /// Bytes acknowledged in congestion avoidance not yet turned into a
    /// segment of cwnd (Linux `snd_cwnd_cnt`, in bytes); `Growth::Linux` only.
    cwnd_cnt: u64,
}

impl Reno {
    pub fn new(abc_limit: u32, newreno: bool) -> Reno {
        Reno::with_config(abc_limit, newreno, RenoConfig::default())
    }

    pub fn with_config(abc_limit: u32, newreno: bool, cfg: RenoConfig) -> Reno {
        Reno { abc_limit: abc_limit.max(1) as u64, newreno, growth: cfg.growth, cwnd_cnt: 0 }
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

/// Congestion avoidance by bytes acknowledged, Linux `tcp_cong_avoid_ai`
/// (net/ipv4/tcp_cong.c) in bytes: `cnt` collects what is acknowledged and
/// each full cwnd of it adds one SMSS; credit gathered at a larger cwnd
/// first adds one SMSS and restarts.
pub fn congestion_avoidance_by_bytes(w: &mut Window, cnt: &mut u64, acked: u64) {
    let win = w.cwnd.max(w.mss);
    if *cnt >= win {
        *cnt = 0;
        w.cwnd += w.mss;
    }
    *cnt += acked;
    let win = w.cwnd.max(w.mss);
    if *cnt >= win {
        let delta = *cnt / win;
        *cnt -= delta * win;
        w.cwnd += delta * w.mss;
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, _now: Time, w: &mut Window, ack: &Ack) {
        // Linux tcp_reno_cong_avoid: no growth unless cwnd limited.
        if !ack.cwnd_limited {
            return;
        }
        // Slow start: at most L segments per ACK as ns-3, every segment
        // covered as Linux (tcp_slow_start); what crosses ssthresh goes to
        // congestion avoidance.
        let limit = match self.growth {
            Growth::Ns3 => self.abc_limit,
            Growth::Linux => u64::MAX / w.mss.max(1),
        };
        let mut left = ack.acked;
        if w.in_slow_start() {
            left = slow_start(w, left, limit);
        }
        if !w.in_slow_start() && left > 0 {
            match self.growth {
                Growth::Ns3 => congestion_avoidance(w),
                Growth::Linux => congestion_avoidance_by_bytes(w, &mut self.cwnd_cnt, left),
            }
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

    /// One RTT acknowledged by delayed ACKs, two segments each.
    fn round_delayed(cc: &mut Reno, w: &mut Window) {
        for _ in 0..w.cwnd / w.mss / 2 {
            let ack = Ack { acked: 2 * w.mss, rtt: None, srtt: None, snd_una: 0, snd_max: 0, cwnd_limited: true };
            cc.on_ack(Time::ZERO, w, &ack);
        }
    }

    #[test]
    fn with_delayed_acks_ns3_growth_is_half_a_segment_per_rtt_and_linux_growth_a_whole_one() {
        // ns-3 counts ACKs (SMSS^2 / cwnd each), Linux tcp_cong_avoid_ai
        // counts the segments they acknowledge.
        let mss = 1000;
        let (mut ns3, mut linux) =
            (Reno::new(1, true), Reno::with_config(1, true, RenoConfig { growth: Growth::Linux }));
        let (mut a, mut b) =
            (Window { cwnd: 40 * mss, ssthresh: 20 * mss, mss }, Window { cwnd: 40 * mss, ssthresh: 20 * mss, mss });
        for _ in 0..10 {
            round_delayed(&mut ns3, &mut a);
            round_delayed(&mut linux, &mut b);
        }
        assert!((44 * mss..=45 * mss).contains(&a.cwnd), "ns-3: {}", a.cwnd);
        assert!((49 * mss..=50 * mss).contains(&b.cwnd), "linux: {}", b.cwnd);
    }

    #[test]
    fn linux_slow_start_counts_every_segment_a_delayed_ack_covers() {
        let mss = 1000;
        let mut ns3 = Window { cwnd: 10 * mss, ssthresh: u64::MAX, mss };
        let mut linux = ns3;
        round_delayed(&mut Reno::new(1, true), &mut ns3);
        round_delayed(&mut Reno::with_config(1, true, RenoConfig { growth: Growth::Linux }), &mut linux);
        assert_eq!((ns3.cwnd, linux.cwnd), (15 * mss, 20 * mss), "1.5x against 2x per round");
    }

    #[test]
    fn linux_growth_crossing_ssthresh_gives_the_rest_of_the_ack_to_congestion_avoidance() {
        let mss = 1000;
        let mut w = Window { cwnd: 19 * mss, ssthresh: 20 * mss, mss };
        let mut cc = Reno::with_config(1, true, RenoConfig { growth: Growth::Linux });
        let ack = Ack { acked: 2 * mss, rtt: None, srtt: None, snd_una: 0, snd_max: 0, cwnd_limited: true };
        cc.on_ack(Time::ZERO, &mut w, &ack);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (20 * mss, mss), "one segment to ssthresh, one counted");
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
