//! PIE, "Proportional Integral controller Enhanced" (RFC 8033), as a
//! [`FlowAqm`]: every `t_update` a PI controller moves a drop probability
//! by the queueing delay's distance from `target` and by its trend; each
//! arrival is dropped (or, with ECN and a low probability, marked) with
//! that probability. The queueing delay is the head packet's sojourn at
//! dequeue (the timestamp method of RFC 8033 section 5.2 note, Linux's and
//! ns-3's default), 0 once the queue is empty.

use super::{Departure, FlowAqm, Meta, TimedFifo};
use crate::queue::{Backlog, DropReason};
use netreturn_base::{Rng, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieConfig {
    /// `QDELAY_REF` (RFC 8033 section 4.2 and 5: 15 ms).
    pub target: Time,
    /// `T_UPDATE` (15 ms).
    pub t_update: Time,
    /// `alpha` and `beta`, in Hz (0.125 and 1.25).
    pub alpha: f64,
    pub beta: f64,
    /// `MAX_BURST` (section 4.4: 150 ms).
    pub max_burst: Time,
    /// `MEAN_PKTSIZE` of section 4.1's "fewer than two packets" exemption.
    pub mean_packet: u32,
    /// Mark ECN-capable packets instead of dropping them while the
    /// probability is at most `mark_ecn_th` (section 5.1: 10 %).
    pub ecn: bool,
    pub mark_ecn_th: f64,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target: Time::from_millis(15),
            t_update: Time::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Time::from_millis(150),
            mean_packet: 1500,
            ecn: false,
            mark_ecn_th: 0.1,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Pie {
    pub cfg: PieConfig,
    /// `drop_prob_`.
    prob: f64,
    /// The current queueing delay (`current_qdelay`) and the one at the
    /// previous update (`qdelay_old_`).
    qdelay: Time,
    qdelay_old: Time,
    /// `burst_allowance_`.
    burst: Time,
    /// When the next periodic update is due.
    next_update: Time,
}

impl Pie {
    pub fn new(cfg: PieConfig) -> Pie {
        Pie {
            cfg,
            prob: 0.0,
            qdelay: Time::ZERO,
            qdelay_old: Time::ZERO,
            burst: cfg.max_burst,
            next_update: cfg.t_update,
        }
    }

    /// The drop probability after the updates due by `now`.
    pub fn probability(&mut self, now: Time) -> f64 {
        self.catch_up(now);
        self.prob
    }

    /// Runs every periodic update due by `now` (strictly before or at it),
    /// each with the delay last measured, which is what a timer would have
    /// seen: the delay changes only at a dequeue, and every dequeue calls
    /// this first.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            if self.qdelay == Time::ZERO
                && self.qdelay_old == Time::ZERO
                && self.prob == 0.0
                && self.burst == self.cfg.max_burst
            {
                // A fixed point: nothing changes until the next dequeue.
                let steps = (now - self.next_update).nanos() / self.cfg.t_update.nanos() + 1;
                self.next_update += Time::from_nanos(steps * self.cfg.t_update.nanos());
                return;
            }
            self.update();
            self.next_update += self.cfg.t_update;
        }
    }

    /// `calculate_drop_prob` (RFC 8033 section 4.2), then the burst
    /// allowance (section 4.4).
    fn update(&mut self) {
        let (cur, old, target) = (self.qdelay.secs_f64(), self.qdelay_old.secs_f64(), self.cfg.target.secs_f64());
        let mut p = self.cfg.alpha * (cur - target) + self.cfg.beta * (cur - old);
        // Section 4.2 (auto-tuning): smaller steps while the probability is
        // small, so that it can settle at low values.
        p /= match self.prob {
            x if x < 0.000_001 => 2048.0,
            x if x < 0.000_01 => 512.0,
            x if x < 0.000_1 => 128.0,
            x if x < 0.001 => 32.0,
            x if x < 0.01 => 8.0,
            x if x < 0.1 => 2.0,
            _ => 1.0,
        };
        // Section 5.5 (cap drop adjustment): at 10 % and above, rise by at
        // most 2 points per update.
        if self.prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.prob = (self.prob + p).clamp(0.0, 1.0);
        // Section 4.2: decay while the queue stays empty.
        if self.qdelay == Time::ZERO && self.qdelay_old == Time::ZERO {
            self.prob *= 0.98;
        }
        self.qdelay_old = self.qdelay;
        // Section 4.4: the allowance drains by T_UPDATE and is restored once
        // the queue has been quiet for two updates.
        self.burst = self.burst.saturating_sub(self.cfg.t_update);
        if self.prob == 0.0
            && self.qdelay < self.cfg.target.mul_f64(0.5)
            && self.qdelay_old < self.cfg.target.mul_f64(0.5)
        {
            self.burst = self.cfg.max_burst;
        }
    }
}

impl FlowAqm for Pie {
    /// `drop_early` (section 4.1) and ECN (section 5.1).
    fn admit(&mut self, now: Time, meta: &mut Meta, backlog: Backlog, rng: &mut Rng) -> Result<(), DropReason> {
        self.catch_up(now);
        if self.burst > Time::ZERO {
            return Ok(());
        }
        if (self.qdelay_old < self.cfg.target.mul_f64(0.5) && self.prob < 0.2)
            || backlog.bytes <= 2 * self.cfg.mean_packet as u64
        {
            return Ok(());
        }
        if rng.next_f64() >= self.prob {
            return Ok(());
        }
        if self.cfg.ecn && self.prob <= self.cfg.mark_ecn_th && meta.try_mark() {
            return Ok(());
        }
        Err(DropReason::Early)
    }

    fn dequeue<T>(
        &mut self,
        now: Time,
        q: &mut TimedFifo<T>,
        _others: u64,
        _drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> Option<Departure<T>> {
        self.catch_up(now);
        let (item, meta) = q.pop()?;
        // The timestamp method: the departing packet's sojourn, or 0 when it
        // leaves the queue empty (Linux pie_process_dequeue).
        self.qdelay = if q.is_empty() { Time::ZERO } else { now.saturating_sub(meta.enqueued) };
        Some(Departure { item, meta })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, Drops};
    use super::super::{Aqm, Single};
    use super::*;
    use crate::queue::Limit;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn one_update_moves_the_probability_by_alpha_and_beta_scaled_for_a_small_probability() {
        // RFC 8033 section 4.2 worked by hand: from p = 0 with a delay of
        // 25 ms (previously 20 ms), p = 0.125 (0.010) + 1.25 (0.005) =
        // 0.00750, divided by 2048 while p < 1e-6.
        let mut pie = Pie::new(PieConfig::default());
        pie.qdelay_old = ms(20);
        pie.qdelay = ms(25);
        pie.update();
        assert!((pie.prob - 0.0075 / 2048.0).abs() < 1e-15, "{}", pie.prob);
        // At p = 0.05 the same error moves it by half of 0.0075.
        pie.prob = 0.05;
        pie.qdelay_old = ms(20);
        pie.update();
        assert!((pie.prob - (0.05 + 0.0075 / 2.0)).abs() < 1e-12, "{}", pie.prob);
    }

    #[test]
    fn at_ten_percent_and_above_one_update_raises_the_probability_by_at_most_two_points() {
        let mut pie = Pie::new(PieConfig::default());
        pie.prob = 0.3;
        pie.qdelay_old = ms(0);
        pie.qdelay = ms(500);
        pie.update();
        assert!((pie.prob - 0.32).abs() < 1e-12, "{}", pie.prob);
    }

    #[test]
    fn an_empty_queue_decays_the_probability_by_two_percent_per_update() {
        let mut pie = Pie::new(PieConfig::default());
        pie.prob = 0.5;
        let before = pie.prob;
        // qdelay and qdelay_old are 0: p' = alpha (0 - 15 ms) < 0, then the decay.
        pie.update();
        let stepped = (before - 0.125 * 0.015).clamp(0.0, 1.0) * 0.98;
        assert!((pie.prob - stepped).abs() < 1e-12);
    }

    #[test]
    fn lazy_updates_equal_a_timer_however_often_the_queue_is_called() {
        // The same arrivals and departures, observed every 1 ms or every
        // 7 ms, give the same probability at the same instants.
        let run = |poll: u64| {
            let mut q = Aqm::Pie(Single::new(Pie::new(PieConfig::default()), Limit::Packets(10_000)));
            let mut rng = Rng::new(5);
            let mut drops = Drops::default();
            let mut probs = vec![];
            for t in 0..3_000u64 {
                if t % 2 == 0 {
                    q.enqueue(ms(t), t, pkt(1500, 0), &mut rng, &mut drops.sink());
                    q.enqueue(ms(t), t, pkt(1500, 0), &mut rng, &mut drops.sink());
                }
                if t % 2 == 1 {
                    q.dequeue(ms(t), &mut rng, &mut drops.sink());
                }
                if t % poll == 0 {
                    if let Aqm::Pie(s) = &mut q {
                        probs.push((t, s.aqm.probability(ms(t))));
                    }
                }
            }
            probs.into_iter().filter(|(t, _)| t % 7 == 0).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(7));
    }

    #[test]
    fn a_persistent_overload_settles_the_queueing_delay_near_the_target() {
        // 20 % more arrivals than the link sends, for 30 s: PIE holds the
        // delay near 15 ms instead of filling the 10 000-packet buffer.
        let mut q = Aqm::Pie(Single::new(Pie::new(PieConfig::default()), Limit::Packets(10_000)));
        let mut rng = Rng::new(9);
        let mut drops = Drops::default();
        let mut delays = vec![];
        let step = Time::from_micros(100); // the link sends one packet per 100 us
        let mut now = Time::ZERO;
        let mut id = 0u64;
        while now < Time::from_secs(30) {
            if id.is_multiple_of(5) {
                q.enqueue(now, id, pkt(1500, 0), &mut rng, &mut drops.sink());
            }
            q.enqueue(now, id, pkt(1500, 0), &mut rng, &mut drops.sink());
            if let Some(d) = q.dequeue(now, &mut rng, &mut drops.sink()) {
                if now > Time::from_secs(10) {
                    delays.push((now - d.meta.enqueued).millis_f64());
                }
            }
            now += step;
            id += 1;
        }
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        assert!((10.0..22.0).contains(&mean), "mean queueing delay {mean:.1} ms");
        assert!(drops.0.iter().all(|(_, why)| *why == DropReason::Early), "no overflow");
    }

    #[test]
    fn no_arrival_is_dropped_during_the_burst_allowance() {
        let mut q = Aqm::Pie(Single::new(Pie::new(PieConfig::default()), Limit::Packets(100_000)));
        let mut rng = Rng::new(2);
        let mut drops = Drops::default();
        // A burst of 140 ms at twice the link rate right from idle.
        for t in 0..1_400u64 {
            let now = Time::from_micros(t * 100);
            q.enqueue(now, t, pkt(1500, 0), &mut rng, &mut drops.sink());
            q.enqueue(now, t, pkt(1500, 0), &mut rng, &mut drops.sink());
            q.dequeue(now, &mut rng, &mut drops.sink());
        }
        assert!(drops.0.is_empty());
    }
}
