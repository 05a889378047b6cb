//! The original TCP Westwood (Mascolo, Casetti, Gerla, Sanadidi, Wang, "TCP
//! Westwood: bandwidth estimation for enhanced transport over wireless
//! links", MobiCom 2001), the one the SARBE paper (seed 004, section 2)
//! compares with: "if ACK packets encounter the network congestion along
//! the backward path, called ACK compression, TCP Westwood overestimates".
//!
//! It differs from [`super::westwood`] (Westwood+) only in the estimator:
//!
//! - one sample per ACK (section 2.1): `b_k = d_k / (t_k - t_{k-1})`, `d_k`
//!   the bytes the ACK reports delivered, `t_k` its arrival time;
//! - a first-order low-pass filter with cut-off frequency `1/tau`, made
//!   discrete by the Tustin (bilinear) approximation (section 2.1):
//!   `bwe_k = (2 tau - D_k)/(2 tau + D_k) bwe_{k-1} + D_k/(2 tau + D_k) (b_k + b_{k-1})`,
//!   `D_k = t_k - t_{k-1}`; with `a_k = (2 tau - D_k)/(2 tau + D_k)` it reads
//!   `bwe_k = a_k bwe_{k-1} + (1 - a_k) (b_k + b_{k-1}) / 2`;
//! - virtual null samples (section 2.2): the ACKs are not periodic, so for
//!   the Nyquist condition a sample `b = 0` is assumed each time `tau/m`
//!   (`m >= 2`) passes without an ACK;
//! - delayed and cumulative ACKs (the paper's counting procedure): a duplicate ACK counts one
//!   segment delivered, and the cumulative ACK that later covers those
//!   segments counts only what the duplicates did not (Linux's
//!   `westwood_acked_count` is the same procedure: [`DeliveredCount`]).
//!   A delayed ACK of two segments is one sample of two segments' bytes
//!   over its inter-ACK time.
//!
//! Why ACK compression inflates it: the trapezoid `(b_k + b_{k-1}) / 2`
//! weighs each sample by the interval after it as well as before it. ACKs
//! queued behind other traffic on the reverse path leave in bursts: a sample
//! taken over a short gap (`d / small`) is then weighed by the long gap that
//! follows, so the estimate exceeds the bytes per second that arrived.
//! Westwood+'s one sample per RTT (bytes / elapsed time) has no such term.
//!
//! The window rule is Westwood+'s (the paper's algorithm after n dupACKs
//! and after a timeout): after
//! DupThresh duplicate ACKs `ssthresh = BWE * RTTmin` (bytes, at least two
//! segments) and "if cwnd > ssthresh then cwnd = ssthresh"; after a timeout
//! the same ssthresh and cwnd = 1 segment (the connection). Where the
//! paper keeps a cwnd that was below ssthresh, our Westwood+ raises it to
//! ssthresh at the end of recovery (Linux, ns-3); `keep_lower_cwnd`
//! (default on) keeps the paper's rule.
//!
//! Choices the paper leaves open (also in docs/tcp.md):
//! - the first ACK starts the clock; the first sample is the first estimate
//!   (as our Westwood+ and SARBE seed their filters), not a filter rising
//!   from 0 with time constant tau;
//! - ACKs arriving at the same instant add their bytes to the next sample
//!   (a zero interval gives no rate);
//! - a real ACK after virtual samples is the rate over the time since the
//!   last real ACK, filtered with `D_k` since the last (virtual) sample;
//! - virtual samples are inserted when the next ACK or loss event comes
//!   (the same values a timer would give), so the traced estimate is not
//!   decayed between ACKs;
//! - `tau` defaults to 0.5 s (our choice: longer than the RTTs of the
//!   SARBE scenarios, so that the filter averages over several windows) and
//!   `m` to 2 (the smallest the Nyquist argument allows): settings,
//!   `tcp.westwood = { tau = "0.5s", m = 2, keep_lower_cwnd = true }`.
//!
//! Section numbers: the filter and its samples are in section 2.1, the
//! virtual samples in 2.2; the equations are written out here rather than
//! numbered, as we could not check the paper's numbering.

use netreturn_base::Time;

use super::reno::Reno;
use super::westwood::{bw_rttmin, DeliveredCount};
use super::{Ack, AckEvent, CongestionControl, Window};

/// The original Westwood's settings (a scenario's `tcp.westwood = { ... }`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WestwoodConfig {
    /// Time constant of the low-pass filter: cut-off frequency `1/tau`
    /// (section 2.1).
    #[serde(deserialize_with = "positive_time")]
    pub tau: Time,
    /// A virtual null sample every `tau/m` without an ACK (section 2.2:
    /// `m >= 2`).
    #[serde(deserialize_with = "at_least_two")]
    pub m: u32,
    /// At the end of a fast recovery, a cwnd that was below ssthresh at the
    /// loss stays there (the paper: "if cwnd > ssthresh then cwnd =
    /// ssthresh"). Off: cwnd = ssthresh, as our Westwood+ (Linux, ns-3).
    pub keep_lower_cwnd: bool,
}

impl Default for WestwoodConfig {
    fn default() -> Self {
        WestwoodConfig { tau: Time::from_millis(500), m: 2, keep_lower_cwnd: true }
    }
}

fn positive_time<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
    let t = <Time as serde::Deserialize>::deserialize(d)?;
    if t == Time::ZERO {
        return Err(serde::de::Error::custom("tau must be longer than 0 (the filter's time constant, like \"0.5s\")"));
    }
    Ok(t)
}

fn at_least_two<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let m = <u32 as serde::Deserialize>::deserialize(d)?;
    if m < 2 {
        return Err(serde::de::Error::custom(format!(
            "m = {m}: the Nyquist condition of the Westwood paper (section 2.2) needs m >= 2"
        )));
    }
    Ok(m)
}

/// The per-ACK estimator: samples `b_k = d_k / (t_k - t_{k-1})` through the
/// Tustin filter, with virtual null samples (sections 2.1, 2.2).
#[derive(Clone, Debug)]
pub struct TustinEstimator {
    tau: f64,
    /// `tau / m`: the longest silence before a virtual null sample.
    gap: Time,
    /// Arrival time of the last real ACK (the start of the next sample).
    last_ack: Option<Time>,
    /// Time of the last filter sample, real or virtual (`t_{k-1}`).
    last_sample: Time,
    /// `b_{k-1}`, the last sample, bytes per second.
    last_b: f64,
    /// `bwe_{k-1}`; `None` before the first sample.
    bwe: Option<f64>,
    /// Bytes of ACKs that arrived at the same instant as the last one.
    pending: u64,
}

impl TustinEstimator {
    pub fn new(tau: Time, m: u32) -> TustinEstimator {
        TustinEstimator {
            tau: tau.secs_f64(),
            gap: Time::from_nanos((tau.nanos() / m.max(2) as u64).max(1)),
            last_ack: None,
            last_sample: Time::ZERO,
            last_b: 0.0,
            bwe: None,
            pending: 0,
        }
    }

    /// The estimate, bytes per second (0 before the first sample).
    pub fn estimate(&self) -> f64 {
        self.bwe.unwrap_or(0.0)
    }

    /// `bwe_k = a_k bwe_{k-1} + (1 - a_k) (b_k + b_{k-1}) / 2`, `a_k = (2 tau
    /// - D_k) / (2 tau + D_k)` (section 2.1), for a sample `b` at `t`.
    fn filter(&mut self, t: Time, b: f64) {
        let dt = t.saturating_sub(self.last_sample).secs_f64();
        self.bwe = Some(match self.bwe {
            None => b,
            Some(prev) => {
                let a = (2.0 * self.tau - dt) / (2.0 * self.tau + dt);
                a * prev + (1.0 - a) * (b + self.last_b) / 2.0
            }
        });
        self.last_b = b;
        self.last_sample = t;
    }

    /// Virtual null samples (section 2.2) for every `tau/m` that passed
    /// without an ACK before `now`.
    pub fn advance(&mut self, now: Time) {
        if self.bwe.is_none() || self.last_sample + self.gap >= now {
            return;
        }
        // n null samples, at last_sample + j tau/m for j = 1..n, all before
        // now.
        let n = (now - self.last_sample - Time::from_nanos(1)).nanos() / self.gap.nanos();
        self.filter(self.last_sample + self.gap, 0.0);
        if n > 1 {
            // The later ones have b_k = b_{k-1} = 0: each multiplies the
            // estimate by a = (2 tau - tau/m) / (2 tau + tau/m).
            let g = self.gap.secs_f64();
            let a = (2.0 * self.tau - g) / (2.0 * self.tau + g);
            self.bwe = self.bwe.map(|b| b * a.powf((n - 1) as f64));
            self.last_sample += Time::from_nanos(self.gap.nanos() * (n - 1));
        }
    }

    /// An ACK at `now` reporting `bytes` delivered.
    pub fn on_ack(&mut self, now: Time, bytes: u64) {
        let Some(last_ack) = self.last_ack else {
            // The first ACK starts the clock.
            self.last_ack = Some(now);
            self.last_sample = now;
            return;
        };
        self.pending += bytes;
        if now <= last_ack || self.pending == 0 {
            // Same instant (no interval), or nothing delivered (a window
            // update): the bytes wait for the next sample.
            return;
        }
        self.advance(now);
        // b_k = d_k / (t_k - t_{k-1})  (section 2.1)
        let b = self.pending as f64 / (now - last_ack).secs_f64();
        self.filter(now, b);
        self.pending = 0;
        self.last_ack = Some(now);
    }
}

#[derive(Clone, Debug)]
pub struct Westwood {
    cfg: WestwoodConfig,
    reno: Reno,
    count: DeliveredCount,
    est: TustinEstimator,
    rtt_min: Option<Time>,
    /// cwnd when the duplicate ACKs arrived.
    loss_cwnd: u64,
}

impl Westwood {
    pub fn new(cfg: WestwoodConfig, abc_limit: u32) -> Westwood {
        Westwood {
            cfg,
            reno: Reno::new(abc_limit, true),
            count: DeliveredCount::default(),
            est: TustinEstimator::new(cfg.tau, cfg.m),
            rtt_min: None,
            loss_cwnd: 0,
        }
    }

    /// BWE, bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.est.estimate()
    }
}

impl CongestionControl for Westwood {
    fn on_ack(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        self.reno.on_ack(now, w, ack);
    }

    fn on_ack_event(&mut self, now: Time, w: &mut Window, ev: &AckEvent) {
        if let Some(r) = ev.rtt {
            self.rtt_min = Some(self.rtt_min.map_or(r, |m| m.min(r)));
        }
        let bytes = self.count.count(ev, w.mss);
        self.est.on_ack(now, bytes);
    }

    fn ssthresh_after_loss(&mut self, now: Time, w: &Window, _in_flight: u64) -> u64 {
        // After n dupACKs: "ssthresh = (BWE * RTTmin) / seg_size".
        self.est.advance(now);
        self.loss_cwnd = w.cwnd;
        bw_rttmin(self.est.estimate(), self.rtt_min, w.mss)
    }

    fn on_recovery_enter(&mut self, _now: Time, w: &mut Window) {
        if self.cfg.keep_lower_cwnd {
            // "if (cwin > ssthresh) cwin = ssthresh": a cwnd below ssthresh
            // is kept; without SACK the recovery's inflation stays on top.
            let inflation = w.cwnd.saturating_sub(w.ssthresh);
            w.cwnd = w.cwnd.min(self.loss_cwnd + inflation);
        }
    }

    fn on_recovery_exit(&mut self, _now: Time, w: &mut Window) {
        if self.cfg.keep_lower_cwnd {
            w.cwnd = w.cwnd.min(self.loss_cwnd.max(w.mss));
        }
    }

    fn on_rto(&mut self, now: Time, w: &Window, _in_flight: u64) -> u64 {
        // After a timeout: ssthresh = BWE * RTTmin / seg_size (at least 2),
        // cwnd = 1 (the connection).
        self.est.advance(now);
        bw_rttmin(self.est.estimate(), self.rtt_min, w.mss)
    }

    fn bandwidth_estimate(&self) -> Option<f64> {
        Some(self.est.estimate())
    }
}

#[cfg(test)]
mod tests {
    use super::super::westwood::Westwood as WestwoodPlus;
    use super::*;

    const MSS: u64 = 1000;

    fn ack(acked: u64, rtt: Option<Time>) -> AckEvent {
        AckEvent { rtt, ..AckEvent::delivering(acked) }
    }

    fn window() -> Window {
        Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn the_tustin_filter_matches_a_hand_computed_sequence() {
        // tau = 0.5 s. t = 0: the clock starts. t = 0.1 s, 1000 B: b1 = 10 kB/s,
        // the first estimate. t = 0.2 s, 3000 B: b2 = 30 kB/s, D = 0.1,
        // a = (1 - 0.1) / (1 + 0.1) = 9/11, bwe = 9/11 * 10k + 2/11 * 20k
        // = 130k/11. t = 0.25 s, 1000 B: b3 = 20 kB/s, D = 0.05, a = 19/21,
        // bwe = 19/21 * 130k/11 + 2/21 * 25k.
        let mut e = TustinEstimator::new(Time::from_millis(500), 2);
        e.on_ack(Time::ZERO, 500);
        assert_eq!(e.estimate(), 0.0, "the first ACK only starts the clock");
        e.on_ack(Time::from_millis(100), 1000);
        assert!(close(e.estimate(), 10_000.0), "{}", e.estimate());
        e.on_ack(Time::from_millis(200), 3000);
        assert!(close(e.estimate(), 130_000.0 / 11.0), "{}", e.estimate());
        e.on_ack(Time::from_millis(250), 1000);
        let want = 19.0 / 21.0 * 130_000.0 / 11.0 + 2.0 / 21.0 * 25_000.0;
        assert!(close(e.estimate(), want), "{} vs {want}", e.estimate());
    }

    #[test]
    fn a_silence_longer_than_tau_over_m_inserts_virtual_null_samples() {
        // tau = 0.5 s, m = 2: a null sample every 250 ms without an ACK.
        let mut e = TustinEstimator::new(Time::from_millis(500), 2);
        e.on_ack(Time::ZERO, 0);
        e.on_ack(Time::from_millis(100), 1000); // bwe = b = 10 kB/s
                                                // Silence until 0.7 s: virtual samples at 0.35 and 0.6 s (D = 0.25,
                                                // a = 0.75/1.25 = 0.6), then the ACK at 0.7 s: 1000 B over the 0.6 s
                                                // since the last real ACK, D = 0.1 since the last virtual sample.
        e.on_ack(Time::from_millis(700), 1000);
        let v1 = 0.6 * 10_000.0 + 0.4 * (0.0 + 10_000.0) / 2.0;
        let v2 = 0.6 * v1 + 0.4 * 0.0;
        let b = 1000.0 / 0.6;
        let want = 9.0 / 11.0 * v2 + 2.0 / 11.0 * (b + 0.0) / 2.0;
        assert!(close(e.estimate(), want), "{} vs {want}", e.estimate());
        // A loss after a long silence sees the decayed estimate too.
        let mut cc = Westwood::new(WestwoodConfig::default(), 1);
        let mut w = window();
        cc.on_ack_event(Time::ZERO, &mut w, &ack(MSS, Some(Time::from_millis(100))));
        for i in 1..=100u64 {
            cc.on_ack_event(Time::from_millis(i), &mut w, &ack(MSS, None));
        }
        let before = cc.ssthresh_after_loss(Time::from_millis(100), &w, 0);
        let after = cc.ssthresh_after_loss(Time::from_secs(5), &w, 0);
        assert!(before.abs_diff(100 * MSS) <= 1, "1 MB/s x 100 ms: {before}");
        assert!(after < before / 10, "{after} after 4.9 s without an ACK");
    }

    #[test]
    fn a_long_silence_gives_the_same_estimate_at_once_as_sample_by_sample() {
        let start = |e: &mut TustinEstimator| {
            e.on_ack(Time::ZERO, 0);
            e.on_ack(Time::from_millis(100), 1000);
            e.on_ack(Time::from_millis(110), 3000);
        };
        let (mut once, mut steps) =
            (TustinEstimator::new(Time::from_millis(500), 2), TustinEstimator::new(Time::from_millis(500), 2));
        start(&mut once);
        start(&mut steps);
        let end = Time::from_millis(10_000);
        once.advance(end);
        let mut t = Time::from_millis(110);
        while t < end {
            t += Time::from_millis(7);
            steps.advance(t.min(end));
        }
        // 39 null samples (at 0.36, 0.61, ..., 9.86 s).
        assert_eq!(once.last_sample, Time::from_millis(9_860));
        assert_eq!(steps.last_sample, once.last_sample);
        assert!(close(once.estimate(), steps.estimate()), "{} vs {}", once.estimate(), steps.estimate());
        assert!(once.estimate() > 0.0 && once.estimate() < 1.0, "{}", once.estimate());
    }

    #[test]
    fn acks_at_the_same_instant_add_their_bytes_to_the_next_sample() {
        let mut e = TustinEstimator::new(Time::from_millis(500), 2);
        e.on_ack(Time::ZERO, 0);
        e.on_ack(Time::from_millis(10), 1000);
        e.on_ack(Time::from_millis(10), 1000);
        assert!(close(e.estimate(), 100_000.0), "the second ACK at 10 ms gives no sample on its own");
        e.on_ack(Time::from_millis(20), 1000);
        // 2000 B over 10 ms: b = 200 kB/s; D = 0.01, a = 0.99/1.01.
        let want = 0.99 / 1.01 * 100_000.0 + 0.02 / 1.01 * 300_000.0 / 2.0;
        assert!(close(e.estimate(), want), "{} vs {want}", e.estimate());
    }

    /// Feeds both estimators the same ACKs: (arrival time, bytes).
    fn both(acks: &[(Time, u64)]) -> (f64, f64) {
        let mut orig = Westwood::new(WestwoodConfig::default(), 1);
        let mut plus = WestwoodPlus::new(1);
        let mut w = window();
        let rtt = Some(Time::from_millis(100));
        for &(t, bytes) in acks {
            orig.on_ack_event(t, &mut w, &ack(bytes, rtt));
            plus.on_ack_event(t, &mut w, &ack(bytes, rtt));
        }
        (orig.bandwidth(), plus.bandwidth())
    }

    #[test]
    fn on_a_clean_path_both_estimators_converge_to_the_bottleneck_rate() {
        // A 1 Mb/s (125 kB/s) bottleneck: 1000-B segments leave it every
        // 8 ms and their ACKs come back spaced so, for 30 s.
        let acks: Vec<(Time, u64)> = (0..3750u64).map(|k| (Time::from_millis(8 * k), MSS)).collect();
        let (orig, plus) = both(&acks);
        for (name, bwe) in [("Westwood", orig), ("Westwood+", plus)] {
            assert!((bwe - 125_000.0).abs() / 125_000.0 < 0.02, "{name}: {bwe} B/s");
        }
    }

    #[test]
    fn with_ack_compression_the_original_estimate_exceeds_the_link_rate_and_westwood_plus_does_not() {
        // The bottleneck delivers a segment every 8 ms (125 kB/s), but the
        // ACKs queue behind reverse traffic and leave in bursts: 5 ACKs
        // 0.1 ms apart, then 39.6 ms of nothing (5 segments per 40 ms: the
        // same 125 kB/s arrives).
        let mut acks = vec![];
        for burst in 0..750u64 {
            for j in 0..5u64 {
                acks.push((Time::from_micros(40_000 * burst + 100 * j), MSS));
            }
        }
        let (orig, plus) = both(&acks);
        assert!(orig > 1.5 * 125_000.0, "Westwood {orig} B/s should overestimate");
        assert!(plus < 1.02 * 125_000.0, "Westwood+ {plus} B/s");
    }

    #[test]
    fn loss_sets_ssthresh_to_bwe_times_rttmin_and_keeps_a_lower_cwnd() {
        // 1 MB/s, RTTmin 100 ms: ssthresh 100 segments.
        let mut cc = Westwood::new(WestwoodConfig::default(), 1);
        cc.est.bwe = Some(1e6);
        cc.rtt_min = Some(Time::from_millis(100));
        let mut w = window(); // cwnd 20 segments, below ssthresh
        w.ssthresh = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        assert_eq!(w.ssthresh, 100 * MSS);
        // RFC 6582 entry: ssthresh + 3 SMSS; the paper keeps the lower cwnd.
        w.cwnd = w.ssthresh + 3 * MSS;
        cc.on_recovery_enter(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 23 * MSS, "the kept window plus the recovery's inflation");
        w.cwnd = w.ssthresh; // the connection's exit
        cc.on_recovery_exit(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 20 * MSS);
        assert_eq!(cc.on_rto(Time::ZERO, &w, 0), 100 * MSS);
        // Without the paper's rule: Westwood+'s cwnd = ssthresh.
        let cfg = WestwoodConfig { keep_lower_cwnd: false, ..Default::default() };
        let mut cc = Westwood::new(cfg, 1);
        w.cwnd = w.ssthresh;
        cc.on_recovery_exit(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 100 * MSS);
    }

    #[test]
    fn a_cwnd_above_ssthresh_comes_down_to_it_and_no_estimate_gives_two_segments() {
        let mut cc = Westwood::new(WestwoodConfig::default(), 1);
        let mut w = Window { cwnd: 50 * MSS, ssthresh: u64::MAX, mss: MSS };
        w.ssthresh = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        assert_eq!(w.ssthresh, 2 * MSS, "no estimate yet");
        w.cwnd = w.ssthresh + 3 * MSS;
        cc.on_recovery_enter(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 5 * MSS);
        w.cwnd = w.ssthresh;
        cc.on_recovery_exit(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 2 * MSS);
    }
}
