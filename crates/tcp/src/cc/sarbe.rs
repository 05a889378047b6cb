//! SARBE + LDED (seed 004: Le Tuan Anh and Choong Seon Hong, "Enhanced TCP
//! with End-to-End Bandwidth and Loss Differentiation Estimate over
//! Heterogeneous Networks", ICCS 2005; SPEC.md section 3).
//!
//! - SARBE (section 3.1) estimates the available bandwidth of the forward
//!   path from the receiver's ACK timestamps (TSval, eq. 2), smoothed by a
//!   stability-based filter (eq. 3, 4), and turns it into an optimal window
//!   `oCwnd = eBw * RTTmin / seg_size`.
//! - LDED (section 3.2) is the Vegas predictor (eq. 1) with alpha 1 and
//!   beta 3: it says whether congestion is incipient.
//! - The pseudo-code of section 3.2 sets ssthresh to oCwnd on an ACK in slow
//!   start with incipient congestion, on n duplicate ACKs, and on a timeout,
//!   and keeps cwnd after duplicate ACKs unless congestion is incipient.
//!
//! The window otherwise grows as NewReno's (the paper's baseline is Reno; we
//! keep NewReno's partial-ACK handling, as the ns-2 Westwood module the paper
//! compares with, so that the comparison is about the estimators).
//!
//! Choices the paper leaves open (written in docs/tcp.md too):
//! - TSval ticks are `ts_tick` (1 ms by default, our receivers' clock; ns-2
//!   stamps exact times). ACKs with the same TSval add their bytes to the
//!   next sample, whose interval is the TSval difference (eq. 2 with the
//!   last ACK that closed a sample as `ts_{k-1}`). Without timestamps the
//!   sender's arrival time stands in (then ACK compression shows again).
//! - `L_k` counts what the receiver got, duplicate ACKs included, as
//!   Westwood+ counts it ([`DeliveredCount`]).
//! - `Umax` is the largest of `U_{k-N}..U_k` as eq. 3 writes it (N + 1
//!   values; the text says "the last N"); `a = 0` while `Umax = 0` (all
//!   samples equal, so the choice does not matter).
//! - oCwnd is rounded down to whole segments and is at least two (as
//!   Westwood+ in Linux), so a sender without an estimate yet does not set
//!   ssthresh to zero.
//! - "Keep the current cwnd" after duplicate ACKs: the recovery still
//!   retransmits; without SACK its inflation is added on top of the kept
//!   window, and at the end of recovery cwnd returns to its value at the
//!   loss (with PRR, the recovery governs the window until its end).

use netreturn_base::Time;

use super::reno::Reno;
use super::westwood::DeliveredCount;
use super::{Ack, AckEvent, CongestionControl, Window};

/// Parameters of SARBE and LDED; the defaults are the paper's. A scenario's
/// `tcp.sarbe = { ... }` table sets them by name.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SarbeConfig {
    /// Gain of the instability EWMA, eq. 3 ("β was found to be 0.8").
    pub b: f64,
    /// Instabilities kept for Umax ("N = 8 in our simulations").
    pub n: usize,
    /// Vegas thresholds alpha and beta in segments (section 2: the
    /// predictor is most accurate with alpha 1, beta 3).
    pub alpha: f64,
    pub beta: f64,
    /// Tick of the receiver's timestamp clock: the connection's
    /// (`TcpConfig::ts_tick`, the scenario's `tcp.ts_tick`), not a key of
    /// its own.
    #[serde(skip)]
    pub ts_tick: Time,
    /// At the end of a recovery, give cwnd back its value at the loss
    /// (without incipient congestion) or `min(cwnd, ssthresh)` (with), as
    /// the pseudo-code reads. Off: leave the recovery's `cwnd = ssthresh =
    /// oCwnd` (RFC 6582 step 6), what an ns-2 NewReno agent running the
    /// pseudo-code at its fast retransmit would do; the "kept" cwnd then
    /// lasts only through the recovery.
    #[serde(rename = "restore_cwnd")]
    pub restore_cwnd_after_recovery: bool,
}

impl Default for SarbeConfig {
    fn default() -> Self {
        SarbeConfig {
            b: 0.8,
            n: 8,
            alpha: 1.0,
            beta: 3.0,
            ts_tick: Time::from_millis(1),
            restore_cwnd_after_recovery: true,
        }
    }
}

/// The stability-based filter of eq. 3 and 4 (after Kim and Noble's
/// flip-flop/stability filter, the paper's reference [8]).
#[derive(Clone, Debug)]
pub struct StabilityFilter {
    b: f64,
    /// U_{k-N}..U_k in a ring (N + 1 slots), `next` the slot to overwrite.
    history: Vec<f64>,
    next: usize,
    u: f64,
    last_sample: Option<f64>,
    estimate: f64,
}

impl StabilityFilter {
    pub fn new(b: f64, n: usize) -> StabilityFilter {
        StabilityFilter { b, history: vec![0.0; n + 1], next: 0, u: 0.0, last_sample: None, estimate: 0.0 }
    }

    /// Feeds sample Bw_k; returns eBw_k.
    pub fn update(&mut self, bw: f64) -> f64 {
        let Some(prev) = self.last_sample.replace(bw) else {
            // The first sample is the first estimate.
            self.estimate = bw;
            return bw;
        };
        // U_k = b U_{k-1} + (1 - b) |Bw_k - Bw_{k-1}|  (eq. 3)
        self.u = self.b * self.u + (1.0 - self.b) * (bw - prev).abs();
        self.history[self.next] = self.u;
        self.next = if self.next + 1 == self.history.len() { 0 } else { self.next + 1 };
        // Umax = max(U_{k-N}, ..., U_k)  (eq. 3); slots not yet written
        // hold U_1 = 0 and never exceed a written U.
        let u_max = self.history.iter().copied().fold(0.0, f64::max);
        // a = U_k / Umax  (eq. 3)
        let a = if u_max > 0.0 { self.u / u_max } else { 0.0 };
        // eBw_k = a eBw_{k-1} + (1 - a) Bw_k  (eq. 4)
        self.estimate = a * self.estimate + (1.0 - a) * bw;
        self.estimate
    }

    pub fn estimate(&self) -> f64 {
        self.estimate
    }
}

#[derive(Clone, Debug)]
pub struct Sarbe {
    cfg: SarbeConfig,
    reno: Reno,
    filter: StabilityFilter,
    count: DeliveredCount,
    /// Bytes acknowledged since the ACK that closed the last sample (L_k).
    bytes: u64,
    /// ts_{k-1}: the receiver's timestamp (or our arrival time without
    /// timestamps) of the ACK that closed the last sample, in ns.
    last_ts: Option<u64>,
    /// Unwrapped TSval: the last raw value and its running offset.
    ts_raw: Option<u32>,
    ts_unwrapped: u64,
    rtt_min: Option<Time>,
    /// LDED's state: is congestion incipient?
    incipient: bool,
    /// LDED already ran on this ACK (in `on_ack`, before the pseudo-code's
    /// action), so `on_ack_event` must not run it twice.
    lded_ran: bool,
    /// cwnd and LDED's verdict when the duplicate ACKs arrived.
    loss_cwnd: u64,
    loss_incipient: bool,
}

impl Sarbe {
    pub fn new(cfg: SarbeConfig, abc_limit: u32) -> Sarbe {
        Sarbe {
            cfg,
            reno: Reno::new(abc_limit, true),
            filter: StabilityFilter::new(cfg.b, cfg.n),
            count: DeliveredCount::default(),
            bytes: 0,
            last_ts: None,
            ts_raw: None,
            ts_unwrapped: 0,
            rtt_min: None,
            incipient: false,
            lded_ran: false,
            loss_cwnd: 0,
            loss_incipient: false,
        }
    }

    /// eBw, bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.filter.estimate()
    }

    pub fn incipient_congestion(&self) -> bool {
        self.incipient
    }

    /// oCwnd = eBw * RTTmin / Seg_size (section 3.1, after [5]), in bytes of
    /// whole segments, at least two.
    pub fn optimal_cwnd(&self, mss: u64) -> u64 {
        let rtt_min = self.rtt_min.map_or(0.0, |r| r.secs_f64());
        let segs = (self.filter.estimate() * rtt_min / mss as f64).floor() as u64;
        segs.max(2) * mss
    }

    /// LDED (section 3.2) on an RTT sample: the Vegas predictor, eq. 1,
    /// D = RTTmin * (cwnd / RTTmin - cwnd / RTT), in segments.
    fn lded(&mut self, w: &Window, rtt: Option<Time>) {
        let Some(rtt) = rtt else { return };
        let rtt_min = *self.rtt_min.insert(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        if rtt.nanos() == 0 {
            return;
        }
        // D = cwnd (RTT - RTTmin) / RTT in segments, compared as
        // cwnd (RTT - RTTmin) against threshold * RTT (no division).
        let extra = (w.cwnd as f64 / w.mss as f64) * (rtt.nanos() - rtt_min.nanos()) as f64;
        let rtt = rtt.nanos() as f64;
        if extra >= self.cfg.beta * rtt {
            // D >= beta: the network is becoming congested.
            self.incipient = true;
        } else if extra <= self.cfg.alpha * rtt {
            // D <= alpha: more bandwidth is available.
            self.incipient = false;
        } // alpha < D < beta: the state of the last estimate is kept.
    }

    /// SARBE's sample, eq. 2: Bw_k = L_k / (ts_k - ts_{k-1}).
    fn sample(&mut self, now: Time, w: &Window, ev: &AckEvent) {
        self.bytes += self.count.count(ev, w.mss);
        let ts = match ev.timestamps {
            Some((tsval, _)) => {
                if let Some(prev) = self.ts_raw {
                    self.ts_unwrapped += tsval.wrapping_sub(prev) as u64;
                }
                self.ts_raw = Some(tsval);
                self.ts_unwrapped * self.cfg.ts_tick.nanos()
            }
            None => now.nanos(),
        };
        match self.last_ts {
            None => {
                // The first ACK only starts the clock.
                self.last_ts = Some(ts);
                self.bytes = 0;
            }
            Some(prev) if ts > prev && self.bytes > 0 => {
                let dt = Time::from_nanos(ts - prev).secs_f64();
                self.filter.update(self.bytes as f64 / dt);
                self.bytes = 0;
                self.last_ts = Some(ts);
            }
            // Same tick: the bytes wait for the next sample.
            _ => {}
        }
    }
}

impl CongestionControl for Sarbe {
    fn on_ack(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        // Pseudo-code A: "if (ACK is received) /* calling the loss
        // differentiation estimate algorithm */".
        self.lded(w, ack.rtt);
        self.lded_ran = true;
        // "if (cwnd < ssthresh and isIncipientCongestion == true)
        //  ssthresh = oCwnd;"
        if w.in_slow_start() && self.incipient {
            w.ssthresh = self.optimal_cwnd(w.mss);
        }
        self.reno.on_ack(now, w, ack);
    }

    fn on_ack_event(&mut self, now: Time, w: &mut Window, ev: &AckEvent) {
        if !std::mem::take(&mut self.lded_ran) {
            // LDED runs "for every ACK arrived at the sender" (section 3.2).
            self.lded(w, ev.rtt);
        }
        self.sample(now, w, ev);
    }

    fn ssthresh_after_loss(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        // Pseudo-code A: "if (n DupACKs are received) ssthresh = oCwnd;"
        self.loss_cwnd = w.cwnd;
        self.loss_incipient = self.incipient;
        self.optimal_cwnd(w.mss)
    }

    fn on_recovery_enter(&mut self, _now: Time, w: &mut Window) {
        if self.loss_incipient {
            // "if (cwnd > ssthresh) cwnd = ssthresh;": the recovery already
            // brings cwnd to ssthresh (plus its own inflation).
            return;
        }
        // "the packet loss is not caused by congestion: keeping the current
        // cwnd". Without SACK (RFC 6582) the recovery set ssthresh + 3 SMSS:
        // keep the inflation, on the kept window.
        let inflation = w.cwnd.saturating_sub(w.ssthresh);
        w.cwnd = w.cwnd.max(self.loss_cwnd + inflation);
    }

    fn on_recovery_exit(&mut self, _now: Time, w: &mut Window) {
        if !self.cfg.restore_cwnd_after_recovery {
            return;
        }
        w.cwnd = if self.loss_incipient {
            // "if (cwnd > ssthresh) cwnd = ssthresh;" (else cwnd is kept)
            self.loss_cwnd.min(w.ssthresh)
        } else {
            self.loss_cwnd
        }
        .max(w.mss);
    }

    fn on_rto(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        // Pseudo-code B: "ssthresh = oCwnd; cwnd = 1;" (the connection sets
        // cwnd to one segment on every timeout, RFC 5681 section 3.1).
        self.optimal_cwnd(w.mss)
    }

    fn bandwidth_estimate(&self) -> Option<f64> {
        Some(self.filter.estimate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn the_stability_filter_matches_a_hand_computed_sequence() {
        // b = 0.8. k=1: eBw = 100, U = 0.
        // k=2: Bw 100: U = 0, Umax = 0, a = 0, eBw = 100.
        // k=3: Bw 200: U = 0.2*100 = 20 = Umax, a = 1, eBw = 100.
        // k=4: Bw 200: U = 0.8*20 = 16, a = 16/20 = 0.8, eBw = 80+40 = 120.
        // k=5: Bw 100: U = 12.8+20 = 32.8 = Umax, a = 1, eBw = 120.
        // k=6: Bw 100: U = 26.24, a = 0.8, eBw = 96+20 = 116.
        let mut f = StabilityFilter::new(0.8, 8);
        let got: Vec<f64> = [100.0, 100.0, 200.0, 200.0, 100.0, 100.0].iter().map(|&s| f.update(s)).collect();
        let want = [100.0, 100.0, 100.0, 120.0, 120.0, 116.0];
        for (g, w) in got.iter().zip(want) {
            assert!(close(*g, w), "got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn umax_forgets_an_instability_older_than_n_samples() {
        // One jump gives U = 20 = Umax; then a constant stream decays U by
        // 0.8 per sample. While the jump is within U_{k-N}..U_k, a = 0.8^j;
        // once it leaves, Umax is the oldest remaining U, so a = 0.8^N.
        let mut f = StabilityFilter::new(0.8, 8);
        f.update(100.0);
        f.update(200.0); // U = 20
        let mut a = vec![];
        for _ in 0..12 {
            let before = f.estimate();
            let after = f.update(200.0);
            // eBw_k - Bw = a (eBw_{k-1} - Bw)
            a.push((after - 200.0) / (before - 200.0));
        }
        for (j, &aj) in a.iter().enumerate().take(8) {
            assert!(close(aj, 0.8f64.powi(j as i32 + 1)), "a_{j} = {aj}");
        }
        for &aj in &a[8..] {
            assert!(close(aj, 0.8f64.powi(8)), "a = {aj}");
        }
    }

    fn window(cwnd_segs: u64, ssthresh: u64) -> Window {
        Window { cwnd: cwnd_segs * MSS, ssthresh, mss: MSS }
    }

    #[test]
    fn lded_has_three_regions_and_keeps_its_state_between_alpha_and_beta() {
        let mut cc = Sarbe::new(SarbeConfig::default(), 1);
        let w = window(20, u64::MAX);
        cc.lded(&w, Some(Time::from_millis(100))); // RTTmin = 100 ms, D = 0
        assert!(!cc.incipient_congestion());
        // D = 20 (1 - 100/110) = 1.82: between alpha and beta, unchanged.
        cc.lded(&w, Some(Time::from_millis(110)));
        assert!(!cc.incipient_congestion());
        // D = 20 (1 - 100/120) = 3.33 >= beta: incipient congestion.
        cc.lded(&w, Some(Time::from_millis(120)));
        assert!(cc.incipient_congestion());
        // Back between the thresholds: still incipient.
        cc.lded(&w, Some(Time::from_millis(110)));
        assert!(cc.incipient_congestion());
        // D = 20 (1 - 100/105) = 0.95 <= alpha: none.
        cc.lded(&w, Some(Time::from_millis(105)));
        assert!(!cc.incipient_congestion());
    }

    /// A Sarbe with eBw = 500 kB/s and RTTmin = 100 ms: oCwnd = 50 segments.
    fn estimated() -> Sarbe {
        let mut cc = Sarbe::new(SarbeConfig::default(), 1);
        cc.filter.update(500_000.0);
        cc.rtt_min = Some(Time::from_millis(100));
        assert_eq!(cc.optimal_cwnd(MSS), 50 * MSS);
        cc
    }

    fn new_ack(rtt_ms: u64) -> Ack {
        Ack { acked: MSS, rtt: Some(Time::from_millis(rtt_ms)), srtt: None, snd_una: 0, snd_max: 0, cwnd_limited: true }
    }

    #[test]
    fn incipient_congestion_in_slow_start_sets_ssthresh_to_ocwnd() {
        let mut cc = estimated();
        let mut w = window(80, u64::MAX);
        // D = 80 (1 - 100/200) = 40 >= 3.
        cc.on_ack(Time::ZERO, &mut w, &new_ack(200));
        assert_eq!(w.ssthresh, 50 * MSS);
        assert_eq!(w.cwnd, 80 * MSS + MSS * MSS / (80 * MSS), "above ssthresh now: congestion avoidance, + MSS^2/cwnd");
    }

    #[test]
    fn an_ack_without_incipient_congestion_leaves_ssthresh_in_slow_start() {
        let mut cc = estimated();
        let mut w = window(80, u64::MAX);
        cc.on_ack(Time::ZERO, &mut w, &new_ack(100));
        assert_eq!(w.ssthresh, u64::MAX);
        assert_eq!(w.cwnd, 81 * MSS, "slow start");
    }

    #[test]
    fn duplicate_acks_without_incipient_congestion_keep_cwnd() {
        let mut cc = estimated();
        let mut w = window(80, 200 * MSS);
        w.ssthresh = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        assert_eq!(w.ssthresh, 50 * MSS, "ssthresh = oCwnd");
        // RFC 6582 entry (what the connection does): ssthresh + 3 SMSS.
        w.cwnd = w.ssthresh + 3 * MSS;
        cc.on_recovery_enter(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 83 * MSS, "the kept window plus the recovery's inflation");
        w.cwnd = w.ssthresh; // the connection's exit
        cc.on_recovery_exit(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 80 * MSS);
    }

    #[test]
    fn without_restoring_the_window_a_recovery_ends_at_ocwnd() {
        let cfg = SarbeConfig { restore_cwnd_after_recovery: false, ..Default::default() };
        let mut cc = Sarbe::new(cfg, 1);
        cc.filter.update(500_000.0);
        cc.rtt_min = Some(Time::from_millis(100));
        let mut w = window(80, 200 * MSS);
        w.ssthresh = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        w.cwnd = w.ssthresh + 3 * MSS;
        cc.on_recovery_enter(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 83 * MSS, "kept through the recovery");
        w.cwnd = w.ssthresh;
        cc.on_recovery_exit(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 50 * MSS, "RFC 6582 step 6: cwnd = ssthresh = oCwnd");
    }

    #[test]
    fn duplicate_acks_with_incipient_congestion_bring_cwnd_down_to_ocwnd() {
        let mut cc = estimated();
        let mut w = window(80, 200 * MSS);
        cc.lded(&w, Some(Time::from_millis(200)));
        assert!(cc.incipient_congestion());
        w.ssthresh = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        w.cwnd = w.ssthresh + 3 * MSS;
        cc.on_recovery_enter(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 53 * MSS, "the recovery's own window");
        w.cwnd = w.ssthresh;
        cc.on_recovery_exit(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 50 * MSS, "cwnd = ssthresh = oCwnd");
    }

    #[test]
    fn duplicate_acks_with_incipient_congestion_keep_a_cwnd_below_ocwnd() {
        let mut cc = estimated();
        let mut w = window(30, 200 * MSS);
        cc.incipient = true;
        w.ssthresh = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        w.cwnd = w.ssthresh;
        cc.on_recovery_exit(Time::ZERO, &mut w);
        assert_eq!(w.cwnd, 30 * MSS, "only a cwnd above ssthresh is lowered");
    }

    #[test]
    fn a_timeout_sets_ssthresh_to_ocwnd_and_the_connection_cwnd_to_one_segment() {
        let mut cc = estimated();
        let w = window(80, 200 * MSS);
        assert_eq!(cc.on_rto(Time::ZERO, &w, w.cwnd), 50 * MSS);
    }

    fn ack_event(acked: u64, tsval: u32) -> AckEvent {
        AckEvent { timestamps: Some((tsval, 0)), ..AckEvent::delivering(acked) }
    }

    #[test]
    fn samples_come_from_the_receivers_timestamps_not_the_arrival_times() {
        // The receiver sends an ACK of 2000 B every 2 ms (1 MB/s); the ACKs
        // arrive compressed, all within 1 ms of one another.
        let mut cc = Sarbe::new(SarbeConfig::default(), 1);
        let mut w = window(10, u64::MAX);
        for k in 0..100u32 {
            let arrival = Time::from_micros(1_000_000 + 10 * k as u64);
            cc.on_ack_event(arrival, &mut w, &ack_event(2000, 1000 + 2 * k));
        }
        assert!(close(cc.bandwidth(), 1e6), "eBw {}", cc.bandwidth());
    }

    #[test]
    fn acks_within_one_timestamp_tick_add_up_into_the_next_sample() {
        let mut cc = Sarbe::new(SarbeConfig::default(), 1);
        let mut w = window(10, u64::MAX);
        cc.on_ack_event(Time::ZERO, &mut w, &ack_event(1000, 7)); // origin
        cc.on_ack_event(Time::ZERO, &mut w, &ack_event(1000, 7));
        assert_eq!(cc.bandwidth(), 0.0, "no sample over a zero interval");
        cc.on_ack_event(Time::ZERO, &mut w, &ack_event(1000, 9));
        // 2000 B over 2 ms.
        assert!(close(cc.bandwidth(), 1e6));
    }
}
