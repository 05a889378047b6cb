//! Explicit Window Adaptation (Kalampoukas, Varma, Ramakrishnan, INFOCOM 1998
//! / IEEE/ACM ToN 2002, as summarised by seed 000 §3.1; SPEC.md §2.2).
//!
//! The window is a function of the free buffer `Be = B - Q`:
//! `f(Be) = alpha * log2(Be)` (seed 000 eq. 2), and `alpha` is adapted every
//! `T` against the averaged occupancy (seed 000 eq. 3 and 4).
//!
//! # Parameter choice
//!
//! The EWA paper's own values for `Wup`, `Wdown`, `T`, `Tl`, `Th` and the
//! initial `alpha` could not be retrieved while writing this module (the
//! paper is not in `seeds/` and no copy was found). The defaults below are
//! therefore our choice, made so that EWA behaves like a gateway-side AIMD-free
//! version of TCP's own additive increase:
//!
//! * `alpha` is in bytes per bit of `log2(Be)`. With `B` of the order of
//!   100 kB, `log2(Be)` is about 16.5 at an empty queue, so the initial
//!   `alpha = 1024 B` gives `f(B) ~ 17 kB`, about 11 segments of 1458 B:
//!   close to a modern initial window (RFC 6928: 10 segments).
//! * `T = 100 ms`, of the order of one RTT of the paper scenarios (seed 000
//!   scenario 2: 84 ms), so `alpha` moves at most once per round trip.
//! * `Wup = 64 B`: one step changes `f` by `64 * 16.5 ~ 1 kB`, about one
//!   segment per round trip, TCP's congestion-avoidance slope.
//! * `Wdown = 128 B`: decrease twice as fast as increase, the usual
//!   conservative bias of window controllers (the overflow it avoids costs
//!   more than the throughput it gives away).
//! * `Tl = B / 4`, `Th = B / 2`: a band below half the buffer, mirroring the
//!   RED thresholds of seed 000 Table 3 (`B/12`, `B/4`) shifted up because
//!   EWA drops nothing and must keep the link busy, and AWM's target of half
//!   the buffer (seed 002 §3).
//! * `g = 1/128` is given by seed 000 eq. 3.
//!
//! `Qavg` is updated at each arrival to the queue (an accepted or a refused
//! packet), as RED does, which is how eq. 3's "Q(t)" is sampled here.

use netreturn_base::{Size, Time};
use serde::Deserialize;

use crate::controller::{Bottleneck, FlowInfo, WindowController};
use crate::view::{QueueEvent, QueueEventKind};

/// EWA settings. See the module documentation for where the defaults come
/// from.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EwaConfig {
    /// Initial `alpha`, bytes per bit of `log2(Be)`.
    #[serde(rename = "alpha")]
    pub initial_alpha: f64,
    /// `Wup`: increase of `alpha` per interval when `Qavg < Tl`.
    pub w_up: f64,
    /// `Wdown`: decrease of `alpha` per interval when `Qavg > Th`.
    pub w_down: f64,
    /// `T`: the adaptation interval.
    pub interval: Time,
    /// `Tl`; `None` = `B / 4`.
    #[serde(rename = "low")]
    pub low_threshold: Option<Size>,
    /// `Th`; `None` = `B / 2`.
    #[serde(rename = "high")]
    pub high_threshold: Option<Size>,
    /// `g`, the weight of the occupancy average (seed 000 eq. 3: 1/128).
    pub gain: f64,
    /// Bounds kept on `alpha` so that it neither goes negative (which would
    /// pin every window to the floor forever) nor winds up without limit
    /// while the queue stays empty.
    pub min_alpha: f64,
    pub max_alpha: f64,
}

impl Default for EwaConfig {
    fn default() -> EwaConfig {
        EwaConfig {
            initial_alpha: 1024.0,
            w_up: 64.0,
            w_down: 128.0,
            interval: Time::from_millis(100),
            low_threshold: None,
            high_threshold: None,
            gain: 1.0 / 128.0,
            min_alpha: 1.0,
            // f(Be) <= 2^20 * 30 ~ 31 MB: beyond any TCP window in use.
            max_alpha: (1u64 << 20) as f64,
        }
    }
}

/// EWA state.
#[derive(Clone, Debug)]
pub struct Ewa {
    cfg: EwaConfig,
    buffer: u64,
    low: f64,
    high: f64,
    alpha: f64,
    /// `Q(t)`: occupancy after the last queue event, bytes.
    occupancy: u64,
    /// `Qavg` (seed 000 eq. 3), bytes.
    average: f64,
    /// When `alpha` is next adapted; `None` until the first event.
    next_adapt: Option<Time>,
}

impl Ewa {
    pub fn new(cfg: EwaConfig, link: Bottleneck) -> Ewa {
        let buffer = link.buffer_bytes.max(1);
        let low = cfg.low_threshold.map(|s| s.bytes(link.mtu())).unwrap_or(buffer / 4) as f64;
        let high = cfg.high_threshold.map(|s| s.bytes(link.mtu())).unwrap_or(buffer / 2) as f64;
        let alpha = cfg.initial_alpha.clamp(cfg.min_alpha, cfg.max_alpha);
        Ewa { cfg, buffer, low, high, alpha, occupancy: 0, average: 0.0, next_adapt: None }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    pub fn average(&self) -> f64 {
        self.average
    }

    /// `f(Be) = alpha * log2(Be)` (seed 000 eq. 2), `Be = B - Q` (eq. 1).
    pub fn feedback(&self) -> u64 {
        let be = self.buffer.saturating_sub(self.occupancy);
        if be <= 1 {
            // log2(1) = 0 and log2(0) is undefined: no free memory, no window
            // (the gateway raises it to the floor).
            return 0;
        }
        (self.alpha * (be as f64).log2()).max(0.0) as u64
    }

    /// Every `T` seconds (seed 000 eq. 4): `alpha += Wup` if `Qavg < Tl`,
    /// `alpha -= Wdown` if `Qavg > Th`. One step per elapsed interval that
    /// saw an event: an idle gateway has no new average to act on.
    fn adapt(&mut self, now: Time) {
        let next = *self.next_adapt.get_or_insert(now + self.cfg.interval);
        if now < next {
            return;
        }
        if self.average < self.low {
            self.alpha += self.cfg.w_up;
        } else if self.average > self.high {
            self.alpha -= self.cfg.w_down;
        }
        self.alpha = self.alpha.clamp(self.cfg.min_alpha, self.cfg.max_alpha);
        self.next_adapt = Some(now + self.cfg.interval);
    }
}

impl WindowController for Ewa {
    fn on_queue(&mut self, now: Time, ev: &QueueEvent) {
        self.occupancy = ev.backlog_bytes;
        if matches!(ev.kind, QueueEventKind::Enqueue | QueueEventKind::Drop) {
            // Qavg = (1 - g) Qavg + g Q (seed 000 eq. 3), sampled at arrivals.
            self.average = (1.0 - self.cfg.gain) * self.average + self.cfg.gain * ev.backlog_bytes as f64;
        }
        self.adapt(now);
    }

    fn window(&mut self, now: Time, _flow: &FlowInfo) -> Option<u64> {
        self.adapt(now);
        Some(self.feedback())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::Rate;

    fn link() -> Bottleneck {
        Bottleneck { buffer_bytes: 100_000, link_rate: Rate::mbps(10), default_mss: 1460, packet_bytes: None }
    }

    fn arrival(backlog: u64) -> QueueEvent {
        QueueEvent { kind: QueueEventKind::Enqueue, size: 1000, backlog_bytes: backlog, backlog_packets: 1 }
    }

    /// Drives the queue at a constant occupancy for `secs`, one arrival per
    /// millisecond.
    fn hold(ewa: &mut Ewa, from_ms: u64, secs: u64, backlog: u64) -> u64 {
        let end = from_ms + secs * 1000;
        for ms in from_ms..end {
            ewa.on_queue(Time::from_millis(ms), &arrival(backlog));
        }
        end
    }

    #[test]
    fn alpha_rises_by_wup_every_interval_while_the_average_is_below_tl() {
        let mut ewa = Ewa::new(EwaConfig::default(), link());
        let a0 = ewa.alpha();
        hold(&mut ewa, 0, 1, 1_000);
        assert!(ewa.average() < 25_000.0);
        // 1 s at T = 100 ms: about ten steps of Wup = 64.
        let steps = (ewa.alpha() - a0) / 64.0;
        assert!((9.0..=10.0).contains(&steps), "steps {steps}");
    }

    #[test]
    fn alpha_falls_by_wdown_while_the_average_is_above_th() {
        let mut ewa = Ewa::new(EwaConfig { initial_alpha: 10_000.0, ..EwaConfig::default() }, link());
        // Let Qavg converge above Th = 50 kB (g = 1/128: ~600 samples).
        let t = hold(&mut ewa, 0, 1, 90_000);
        assert!(ewa.average() > 50_000.0);
        let a1 = ewa.alpha();
        hold(&mut ewa, t, 1, 90_000);
        let steps = (a1 - ewa.alpha()) / 128.0;
        assert!((9.0..=10.0).contains(&steps), "steps {steps}");
    }

    #[test]
    fn alpha_is_held_between_the_thresholds_and_never_goes_below_its_minimum() {
        let mut ewa = Ewa::new(EwaConfig::default(), link());
        let t = hold(&mut ewa, 0, 2, 35_000);
        let a = ewa.alpha();
        hold(&mut ewa, t, 1, 35_000);
        assert_eq!(ewa.alpha(), a, "Tl < Qavg < Th leaves alpha alone");
        hold(&mut ewa, t + 1000, 60, 99_000);
        assert_eq!(ewa.alpha(), EwaConfig::default().min_alpha);
    }

    #[test]
    fn the_feedback_is_alpha_times_log2_of_the_free_buffer() {
        let mut ewa = Ewa::new(EwaConfig { initial_alpha: 1000.0, ..EwaConfig::default() }, link());
        ewa.on_queue(Time::ZERO, &arrival(100_000 - 65_536));
        // Be = 2^16: f = 1000 * 16 (seed 000 eq. 2).
        assert_eq!(ewa.feedback(), 16_000);
        ewa.on_queue(Time::ZERO, &arrival(100_000 - 1024));
        assert_eq!(ewa.feedback(), 10_000);
        ewa.on_queue(Time::ZERO, &arrival(100_000));
        assert_eq!(ewa.feedback(), 0);
    }
}
