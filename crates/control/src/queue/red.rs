//! Random Early Detection (Floyd & Jacobson 1993) and Adaptive RED (Floyd,
//! Gummadi & Shenker 2001), byte-based averages.

use super::{Backlog, DropReason, Limit, Verdict};
use netreturn_base::{Rng, Size, Time};
use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard limit of the queue.
    pub limit: Limit,
    /// Thresholds on the average queue, bytes.
    pub min_th: u64,
    pub max_th: u64,
    /// Weight of the exponential average (`w_q`).
    pub w_q: f64,
    /// Drop probability at `max_th` (`max_p`).
    pub max_p: f64,
    /// Gentle RED: between `max_th` and `2 max_th` the probability rises
    /// linearly from `max_p` to 1 instead of jumping to 1.
    pub gentle: bool,
    /// Scale the drop probability by `size / mean_packet` (ns-2 / ns-3 byte
    /// mode). Linux's RED does not; SPEC.md section 6 warns of the difference.
    pub byte_mode: bool,
    /// Typical packet size, bytes, for byte mode and for the idle decay.
    pub mean_packet: u32,
    /// Transmission time of a typical packet on the outgoing link; while the
    /// queue is idle the average decays as if that many packets of size zero
    /// had arrived (Floyd & Jacobson section 11).
    pub idle_packet_time: Time,
}

impl RedConfig {
    /// The EWT paper's "Linux-like" preset (seed 000 Table 3): for a buffer of
    /// `b` bytes, `minth = B/12`, `maxth = B/4`, `w_q = 0.002`,
    /// `max_p = 0.02`.
    pub fn linux_like(b: u64, mean_packet: u32, idle_packet_time: Time) -> RedConfig {
        RedConfig {
            limit: Limit::Bytes(b),
            min_th: b / 12,
            max_th: b / 4,
            w_q: 0.002,
            max_p: 0.02,
            gentle: false,
            byte_mode: false,
            mean_packet,
            idle_packet_time,
        }
    }
}

/// A link's `red` table: overrides of the Linux-like preset, read by RED and
/// Adaptive RED. Thresholds in packets count `mean_packet` bytes each.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    pub min_th: Option<Size>,
    pub max_th: Option<Size>,
    pub w_q: Option<f64>,
    pub max_p: Option<f64>,
    pub gentle: Option<bool>,
    pub byte_mode: Option<bool>,
}

impl RedParams {
    /// `base` with the keys this table sets.
    pub fn apply(&self, mut c: RedConfig) -> RedConfig {
        if let Some(v) = self.min_th {
            c.min_th = v.bytes(c.mean_packet);
        }
        if let Some(v) = self.max_th {
            c.max_th = v.bytes(c.mean_packet);
        }
        c.w_q = self.w_q.unwrap_or(c.w_q);
        c.max_p = self.max_p.unwrap_or(c.max_p);
        c.gentle = self.gentle.unwrap_or(c.gentle);
        c.byte_mode = self.byte_mode.unwrap_or(c.byte_mode);
        c
    }
}

/// The state RED and Adaptive RED share: the average and the drop decision.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    /// Exponentially weighted average queue, bytes.
    avg: f64,
    /// Packets accepted since the last early drop (Floyd & Jacobson's
    /// `count`), so drops are spread uniformly rather than clustered.
    count: i64,
    /// Time the queue became empty, if it is empty.
    idle_since: Option<Time>,
}

impl Red {
    pub fn new(cfg: RedConfig) -> Red {
        assert!(cfg.min_th < cfg.max_th, "RED needs min_th < max_th");
        Red { cfg, avg: 0.0, count: -1, idle_since: Some(Time::ZERO) }
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }
    pub fn limit(&self) -> Limit {
        self.cfg.limit
    }
    /// The current average queue, bytes.
    pub fn average(&self) -> f64 {
        self.avg
    }

    fn update_average(&mut self, now: Time, backlog: Backlog) {
        let w = self.cfg.w_q;
        match self.idle_since.take() {
            Some(since) if backlog.packets == 0 => {
                // avg <- (1 - w_q)^m avg, m = idle time / packet time.
                let m = if self.cfg.idle_packet_time.nanos() == 0 {
                    0.0
                } else {
                    now.saturating_sub(since).nanos() as f64
                        / self.cfg.idle_packet_time.nanos() as f64
                };
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * backlog.bytes as f64,
        }
    }

    /// Base drop probability `p_b` for the current average, or `None` for a
    /// forced drop.
    fn base_probability(&self) -> Option<f64> {
        let (min, max) = (self.cfg.min_th as f64, self.cfg.max_th as f64);
        let a = self.avg;
        if a < min {
            Some(0.0)
        } else if a < max {
            Some(self.cfg.max_p * (a - min) / (max - min))
        } else if self.cfg.gentle && a < 2.0 * max {
            Some(self.cfg.max_p + (1.0 - self.cfg.max_p) * (a - max) / max)
        } else {
            None
        }
    }

    pub fn admit(&mut self, now: Time, size: u32, backlog: Backlog, rng: &mut Rng) -> Verdict {
        self.update_average(now, backlog);
        let verdict = match self.base_probability() {
            Some(p) if p <= 0.0 => {
                self.count = -1;
                Verdict::Accept
            }
            Some(mut pb) => {
                self.count += 1;
                if self.cfg.byte_mode {
                    pb *= size as f64 / self.cfg.mean_packet as f64;
                }
                // p_a = p_b / (1 - count p_b): uniform spacing of drops.
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
                if rng.bernoulli(pa) {
                    self.count = 0;
                    Verdict::Drop(DropReason::Early)
                } else {
                    Verdict::Accept
                }
            }
            None => {
                self.count = 0;
                Verdict::Drop(DropReason::Forced)
            }
        };
        if verdict == Verdict::Accept && !self.cfg.limit.admits(size, backlog) {
            return Verdict::Drop(DropReason::Overflow);
        }
        verdict
    }

    pub fn on_dequeue(&mut self, now: Time, after: Backlog) {
        if after.packets == 0 {
            self.idle_since = Some(now);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveRedConfig {
    pub red: RedConfig,
    /// Adaptation interval (0.5 s in the paper).
    pub interval: Time,
    /// Multiplicative decrease factor of `max_p` (0.9).
    pub beta: f64,
}

impl AdaptiveRedConfig {
    /// Floyd, Gummadi & Shenker's recommended settings on top of `red`:
    /// interval 0.5 s, beta 0.9, gentle on, and `max_p` starting at 0.02 as
    /// in RED's usual setting. The additive step `alpha = min(0.01, max_p/4)`
    /// is computed at each adaptation.
    pub fn recommended(red: RedConfig) -> AdaptiveRedConfig {
        AdaptiveRedConfig {
            red: RedConfig { gentle: true, ..red },
            interval: Time::from_millis(500),
            beta: 0.9,
        }
    }
}

/// Adaptive RED: RED whose `max_p` is steered every `interval` so that the
/// average stays in the middle of `[min_th, max_th]` (target
/// `[min + 0.4 (max - min), min + 0.6 (max - min)]`), with `max_p` kept in
/// [0.01, 0.5].
#[derive(Clone, Debug)]
pub struct AdaptiveRed {
    red: Red,
    interval: Time,
    beta: f64,
    next_adapt: Time,
}

impl AdaptiveRed {
    pub fn new(cfg: AdaptiveRedConfig) -> AdaptiveRed {
        AdaptiveRed { red: Red::new(cfg.red), interval: cfg.interval, beta: cfg.beta, next_adapt: cfg.interval }
    }

    pub fn limit(&self) -> Limit {
        self.red.limit()
    }
    pub fn max_p(&self) -> f64 {
        self.red.cfg.max_p
    }
    pub fn average(&self) -> f64 {
        self.red.avg
    }

    /// One adaptation step (Floyd, Gummadi & Shenker 2001, Fig. 2).
    fn adapt(&mut self) {
        let c = &mut self.red.cfg;
        let (min, max) = (c.min_th as f64, c.max_th as f64);
        let (lo, hi) = (min + 0.4 * (max - min), min + 0.6 * (max - min));
        let avg = self.red.avg;
        if avg > hi && c.max_p <= 0.5 {
            c.max_p += (c.max_p / 4.0).min(0.01);
        } else if avg < lo && c.max_p >= 0.01 {
            c.max_p *= self.beta;
        }
    }

    pub fn admit(&mut self, now: Time, size: u32, backlog: Backlog, rng: &mut Rng) -> Verdict {
        // The adaptation runs on a fixed period; applying the periods that
        // elapsed since the last arrival here is equivalent, because the
        // average only changes at arrivals.
        while now >= self.next_adapt {
            self.adapt();
            self.next_adapt += self.interval;
        }
        self.red.admit(now, size, backlog, rng)
    }

    pub fn on_dequeue(&mut self, now: Time, after: Backlog) {
        self.red.on_dequeue(now, after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RedConfig {
        RedConfig::linux_like(97_000, 1500, Time::from_micros(120))
    }

    #[test]
    fn linux_like_preset_matches_seed_000_table_3() {
        let c = cfg();
        assert_eq!(c.min_th, 97_000 / 12);
        assert_eq!(c.max_th, 97_000 / 4);
        assert_eq!(c.w_q, 0.002);
        assert_eq!(c.max_p, 0.02);
    }

    #[test]
    fn below_min_threshold_nothing_is_dropped() {
        let mut r = Red::new(cfg());
        let mut rng = Rng::new(1);
        for i in 0..1000 {
            let b = Backlog { bytes: 5_000, packets: 4 };
            assert_eq!(r.admit(Time::from_micros(i), 1500, b, &mut rng), Verdict::Accept);
        }
        assert!(r.average() < 5_000.0 + 1e-9);
    }

    #[test]
    fn average_converges_to_a_steady_queue() {
        let mut r = Red::new(cfg());
        let mut rng = Rng::new(1);
        let b = Backlog { bytes: 15_000, packets: 10 };
        for i in 0..10_000 {
            r.admit(Time::from_micros(i), 1500, b, &mut rng);
        }
        assert!((r.average() - 15_000.0).abs() < 1.0);
    }

    #[test]
    fn early_drop_rate_is_close_to_the_uniform_spacing_rate() {
        // With a constant average midway between thresholds, p_b = max_p / 2
        // = 0.01, and the gap between drops is uniform on {1 .. 1/p_b}
        // (Floyd & Jacobson section 7): mean gap ~50.5, rate ~0.0198.
        let mut c = cfg();
        c.w_q = 1.0; // average = instantaneous queue
        let mid = (c.min_th + c.max_th) / 2;
        let mut r = Red::new(c);
        let mut rng = Rng::new(9);
        let b = Backlog { bytes: mid, packets: 10 };
        let n = 200_000;
        let drops = (0..n)
            .filter(|&i| r.admit(Time::from_micros(i), 1500, b, &mut rng) != Verdict::Accept)
            .count();
        let rate = drops as f64 / n as f64;
        assert!((0.018..0.022).contains(&rate), "drop rate {rate}");
    }

    #[test]
    fn above_max_threshold_every_packet_is_dropped_unless_gentle() {
        let mut c = cfg();
        c.w_q = 1.0;
        let mut r = Red::new(c);
        let mut rng = Rng::new(2);
        let b = Backlog { bytes: c.max_th + 1, packets: 20 };
        assert_eq!(r.admit(Time::ZERO, 1500, b, &mut rng), Verdict::Drop(DropReason::Forced));
        c.gentle = true;
        let mut g = Red::new(c);
        let accepted = (0..1000).filter(|_| g.admit(Time::ZERO, 1500, b, &mut rng) == Verdict::Accept).count();
        assert!(accepted > 500, "gentle RED just above max_th drops about max_p: {accepted}");
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut c = cfg();
        c.w_q = 0.5;
        let mut r = Red::new(c);
        let mut rng = Rng::new(3);
        r.admit(Time::ZERO, 1500, Backlog { bytes: 20_000, packets: 5 }, &mut rng);
        let before = r.average();
        r.on_dequeue(Time::from_millis(1), Backlog::default());
        // 10 packet times idle: avg * 0.5^10.
        r.admit(Time::from_millis(1) + Time::from_micros(1200), 1500, Backlog::default(), &mut rng);
        assert!((r.average() - before / 1024.0).abs() < 1e-6, "{} vs {}", r.average(), before / 1024.0);
    }

    #[test]
    fn the_hard_limit_still_applies() {
        let mut r = Red::new(cfg());
        let mut rng = Rng::new(4);
        let b = Backlog { bytes: 96_000, packets: 64 };
        // Average is still 0-ish: not an early drop, but the packet does not fit.
        assert_eq!(r.admit(Time::ZERO, 1500, b, &mut rng), Verdict::Drop(DropReason::Overflow));
    }

    #[test]
    fn adaptive_red_raises_max_p_while_the_average_is_high_and_lowers_it_when_low() {
        let mut c = cfg();
        c.w_q = 1.0;
        let mut a = AdaptiveRed::new(AdaptiveRedConfig::recommended(c));
        let mut rng = Rng::new(5);
        let high = Backlog { bytes: c.max_th - 100, packets: 16 };
        for i in 0..20 {
            a.admit(Time::from_millis(250 * i), 1500, high, &mut rng);
        }
        let raised = a.max_p();
        assert!(raised > 0.02, "max_p {raised}");
        let low = Backlog { bytes: c.min_th + 10, packets: 6 };
        for i in 20..60 {
            a.admit(Time::from_millis(250 * i), 1500, low, &mut rng);
        }
        assert!(a.max_p() < raised);
        assert!(a.max_p() >= 0.01 * 0.9 - 1e-12, "max_p floor {}", a.max_p());
    }
}
