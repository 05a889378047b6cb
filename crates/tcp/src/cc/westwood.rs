//! TCP Westwood+ (Mascolo, Casetti, Gerla, Sanadidi, Wang, "TCP Westwood:
//! bandwidth estimation for enhanced transport over wireless links",
//! MobiCom 2001; Grieco and Mascolo, "Performance evaluation and comparison
//! of Westwood+, New Reno, and Vegas TCP congestion control", CCR 2004).
//!
//! NewReno window growth; the sender counts the bytes the receiver got
//! (cumulative ACKs and duplicates alike), takes one bandwidth sample per
//! RTT and low-pass filters it into BWE. After a loss it sets
//! `ssthresh = BWE * RTTmin` instead of halving.
//!
//! ## Linux `tcp_westwood` and ns-3 3.44 `TcpWestwoodPlus` differ; we follow
//!
//! | point | Linux | ns-3 3.44 | ours |
//! |---|---|---|---|
//! | bytes counted | `westwood_acked_count`: SND.UNA advance; a dupACK counts one MSS, deducted again from the cumulative ACK that covers it | segments acked (`PktsAcked`), integer count | Linux's accounting (with SACK, RFC 6937 DeliveredData, which is exact) |
//! | sample period | window closed by the first ACK after `max(RTT, 50 ms)` | an event scheduled one RTT after the first ACK of the window | Linux |
//! | filter | two cascaded 7/8 EWMAs (`westwood_do_filter`) | Tustin, alpha 0.9 | Linux |
//! | ssthresh on 3 dupACKs | Reno's half on entry; at the end of recovery `ssthresh = cwnd = BWE*RTTmin` (`CA_EVENT_COMPLETE_CWR`) | `GetSsThresh = BWE*RTTmin` on entry, recovery (PRR) towards it, `cwnd = ssthresh` at exit | ns-3 (SPEC.md 3): `BWE*RTTmin` on entry, the connection's recovery towards it, `cwnd = ssthresh` at exit |
//! | ssthresh on RTO | `BWE*RTTmin` (`CA_EVENT_LOSS`), cwnd 1 | `BWE*RTTmin`, cwnd 1 | same |
//! | floor | 2 segments | 2 segments | 2 segments |
//! | RTTmin | reset after an RTO | `tcb->m_minRtt`, never reset | ns-3 (never reset) |
//!
//! Both end a recovery with `cwnd = ssthresh = BWE*RTTmin`; they differ in
//! how fast the window falls during the recovery. The original Westwood
//! (and SPEC.md's "cwnd = ssthresh if larger") would keep a cwnd below
//! BWE*RTTmin; Linux and ns-3 raise it to ssthresh, and so do we.

use netreturn_base::Time;

use super::reno::Reno;
use super::{Ack, AckEvent, CongestionControl, Window};

/// Linux `TCP_WESTWOOD_RTT_MIN` (HZ/20): the shortest sampling window.
pub const MIN_SAMPLE_WINDOW: Time = Time::from_millis(50);

/// Bytes the receiver got from one ACK, Linux `westwood_acked_count`: a
/// duplicate ACK without SACK information counts one MSS (the segment that
/// made the receiver send it), and the cumulative ACK that later covers
/// those segments counts only what was not accounted yet. With SACK,
/// DeliveredData (RFC 6937) already says it exactly.
#[derive(Clone, Debug, Default)]
pub struct DeliveredCount {
    /// Bytes credited to duplicate ACKs and not yet covered by SND.UNA.
    accounted: u64,
}

impl DeliveredCount {
    pub fn count(&mut self, ev: &AckEvent, mss: u64) -> u64 {
        if ev.delivered != ev.acked {
            // SACK: newly SACKed bytes count when SACKed (delivered >
            // acked) and not again when SND.UNA passes them (delivered <
            // acked); RFC 6937 DeliveredData is exact.
            return ev.delivered;
        }
        if ev.acked == 0 {
            if !ev.duplicate {
                return 0;
            }
            // Linux: "If cumul_ack is 0 this is a dupack".
            self.accounted += mss;
            return mss;
        }
        if ev.acked > mss {
            // Linux: "Partial or delayed ack".
            if self.accounted >= ev.acked {
                self.accounted -= ev.acked;
                return mss;
            }
            let n = ev.acked - self.accounted;
            self.accounted = 0;
            return n;
        }
        ev.acked
    }
}

#[derive(Clone, Debug)]
pub struct Westwood {
    reno: Reno,
    count: DeliveredCount,
    /// Bytes counted in the current sampling window (Linux `bk`).
    bk: u64,
    /// Start of the current sampling window (Linux `rtt_win_sx`).
    win_start: Option<Time>,
    /// Last RTT sample and the smallest one.
    rtt: Option<Time>,
    rtt_min: Option<Time>,
    /// Non-smoothed and smoothed estimates, bytes per second (Linux
    /// `bw_ns_est`, `bw_est`).
    bw_ns: f64,
    bwe: f64,
}

impl Westwood {
    pub fn new(abc_limit: u32) -> Westwood {
        Westwood {
            reno: Reno::new(abc_limit, true),
            count: DeliveredCount::default(),
            bk: 0,
            win_start: None,
            rtt: None,
            rtt_min: None,
            bw_ns: 0.0,
            bwe: 0.0,
        }
    }

    /// The smoothed bandwidth estimate BWE, bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.bwe
    }

    /// Linux `westwood_filter`: the first sample fills both stages, later
    /// ones go through two cascaded `7/8 a + 1/8 b` filters.
    fn filter(&mut self, sample: f64) {
        if self.bwe == 0.0 && self.bw_ns == 0.0 {
            self.bw_ns = sample;
            self.bwe = sample;
        } else {
            self.bw_ns = (7.0 * self.bw_ns + sample) / 8.0;
            self.bwe = (7.0 * self.bwe + self.bw_ns) / 8.0;
        }
    }
}

/// `ssthresh = BWE * RTTmin` (Mascolo et al. 2001, section 2.2), at least
/// two segments (Linux `tcp_westwood_bw_rttmin`); the original Westwood's
/// rule too ([`super::westwood_original`]). `bwe` in bytes per second.
pub fn bw_rttmin(bwe: f64, rtt_min: Option<Time>, mss: u64) -> u64 {
    let rtt_min = rtt_min.map_or(0.0, |r| r.secs_f64());
    ((bwe * rtt_min) as u64).max(2 * mss)
}

impl CongestionControl for Westwood {
    fn on_ack(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        self.reno.on_ack(now, w, ack);
    }

    fn on_ack_event(&mut self, now: Time, w: &mut Window, ev: &AckEvent) {
        if let Some(r) = ev.rtt {
            self.rtt = Some(r);
            self.rtt_min = Some(self.rtt_min.map_or(r, |m| m.min(r)));
        }
        let start = *self.win_start.get_or_insert(now);
        // Linux `westwood_update_window`: a window closes once more than
        // max(RTT, 50 ms) has passed; the sample is bytes / elapsed time.
        if let Some(rtt) = self.rtt {
            let delta = now.saturating_sub(start);
            if delta > rtt.max(MIN_SAMPLE_WINDOW) {
                self.filter(self.bk as f64 / delta.secs_f64());
                self.bk = 0;
                self.win_start = Some(now);
            }
        }
        self.bk += self.count.count(ev, w.mss);
    }

    fn ssthresh_after_loss(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        bw_rttmin(self.bwe, self.rtt_min, w.mss)
    }

    fn on_rto(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        bw_rttmin(self.bwe, self.rtt_min, w.mss)
    }

    fn bandwidth_estimate(&self) -> Option<f64> {
        Some(self.bwe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, rtt: Option<Time>) -> AckEvent {
        AckEvent { rtt, ..AckEvent::delivering(acked) }
    }

    #[test]
    fn the_estimate_converges_to_the_rate_of_a_constant_ack_stream() {
        // 1000-byte segments acknowledged one per ms: 1 MB/s (8 Mb/s).
        let mut cc = Westwood::new(1);
        let mut w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        for i in 1..=20_000u64 {
            cc.on_ack_event(Time::from_millis(i), &mut w, &ack(1000, Some(Time::from_millis(100))));
        }
        let bwe = cc.bandwidth();
        assert!((bwe - 1e6).abs() / 1e6 < 0.02, "BWE {bwe} B/s");
        // ssthresh = BWE * RTTmin = 1 MB/s * 100 ms = 100 kB.
        let ss = cc.ssthresh_after_loss(Time::ZERO, &w, 0);
        assert!((ss as f64 - 100_000.0).abs() < 2_000.0, "ssthresh {ss}");
    }

    #[test]
    fn one_sample_per_rtt_and_not_shorter_than_fifty_ms() {
        let mut cc = Westwood::new(1);
        let mut w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        // RTT 10 ms: the window is 50 ms (Linux TCP_WESTWOOD_RTT_MIN).
        for i in 0..=50u64 {
            cc.on_ack_event(Time::from_millis(i), &mut w, &ack(1000, Some(Time::from_millis(10))));
        }
        assert_eq!(cc.bandwidth(), 0.0, "no sample before 50 ms have passed");
        cc.on_ack_event(Time::from_millis(51), &mut w, &ack(1000, None));
        // 51 ACKs of 1000 B counted in the 51 ms window.
        assert!((cc.bandwidth() - 51_000.0 / 0.051).abs() < 1.0);
    }

    #[test]
    fn duplicate_acks_count_as_delivered_and_are_deducted_from_the_covering_ack() {
        // Linux westwood_acked_count.
        let mut c = DeliveredCount::default();
        assert_eq!(c.count(&ack(0, None), 1000), 1000);
        assert_eq!(c.count(&ack(0, None), 1000), 1000);
        // The retransmission fills the hole: 4 segments acknowledged, 2
        // already counted.
        assert_eq!(c.count(&ack(4000, None), 1000), 2000);
        assert_eq!(c.count(&ack(2000, None), 1000), 2000);
    }

    #[test]
    fn with_sack_bytes_count_once_when_sacked_and_not_again_when_cumulatively_acked() {
        let mut c = DeliveredCount::default();
        let sacked = AckEvent { delivered: 1000, duplicate: true, ..ack(0, None) };
        assert_eq!(c.count(&sacked, 1000), 1000);
        assert_eq!(c.count(&sacked, 1000), 1000);
        // The retransmission fills the hole: SND.UNA moves 3000 B, of which
        // 2000 were SACKed already.
        let covering = AckEvent { delivered: 1000, ..ack(3000, None) };
        assert_eq!(c.count(&covering, 1000), 1000);
    }

    #[test]
    fn loss_and_timeout_set_ssthresh_to_bwe_times_rttmin_at_least_two_segments() {
        let mut cc = Westwood::new(1);
        let w = Window { cwnd: 50_000, ssthresh: u64::MAX, mss: 1000 };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, 50_000), 2000, "no estimate yet");
        cc.bwe = 500_000.0;
        cc.rtt_min = Some(Time::from_millis(40));
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, 50_000), 20_000);
        assert_eq!(cc.on_rto(Time::ZERO, &w, 50_000), 20_000);
    }
}
