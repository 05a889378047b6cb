//! COBALT, "CoDel-BLUE Alternate", the AQM of CAKE (Høiland-Jørgensen,
//! Täht & Morton 2018, section 4.1; Linux `sch_cake.c`, the `cobalt_*`
//! functions; ns-3 3.44 `CobaltQueueDisc`). Two controllers share one
//! FIFO:
//!
//! - a simplified CoDel (RFC 8289's control law, without its "interval
//!   above target" wait: the first drop is one `interval` after the sojourn
//!   first exceeds `target`, the next ones `interval / sqrt(count)` apart,
//!   and `count` falls back by one per `interval / sqrt(count)` once the
//!   queue is good again, instead of resetting);
//! - BLUE (Feng et al. 2002) for unresponsive load: its drop probability
//!   `p_drop` rises by `increment` (1/256) when the queue overflows and falls
//!   by `decrement` (1/4096) when the link finds it empty, at most once per
//!   `target` (the freeze time: Linux `blue_timer`, ns-3
//!   `m_lastUpdateTimeBlue`), and every dequeued packet is dropped with
//!   probability `p_drop` (never marked: "lack of ECN is deliberate").
//!
//! This is ns-3's version, for validation against it: BLUE also rises when a
//! packet waited over `blue_threshold` (400 ms, ns-3's `BlueThreshold`;
//! Linux has no such rule), and the last packet of the queue may be dropped
//! (Linux sends it). Neither CAKE's shaper, its flow isolation nor its
//! `mtu_time` guards on `over_target` are here (COBALT is one queue, as
//! ns-3's).

use super::{Departure, Meta, TimedFifo};
use crate::queue::{Backlog, DropReason, Limit};
use netreturn_base::{Rng, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CobaltConfig {
    /// CoDel's acceptable standing delay (5 ms) and its interval (100 ms).
    pub target: Time,
    pub interval: Time,
    /// Mark ECN-capable packets instead of CoDel's drops (BLUE always
    /// drops). On by default, as CAKE in Linux (ns-3's `UseEcn` is off).
    pub ecn: bool,
    /// BLUE's steps of `p_drop` on overflow and on an empty queue (Linux
    /// `p_inc = 1 << 24` and `p_dec = 1 << 20` of 2^32: 1/256, 1/4096).
    pub increment: f64,
    pub decrement: f64,
    /// A sojourn above this also raises `p_drop` (ns-3 `BlueThreshold`).
    pub blue_threshold: Time,
}

impl Default for CobaltConfig {
    fn default() -> Self {
        CobaltConfig {
            target: Time::from_millis(5),
            interval: Time::from_millis(100),
            ecn: true,
            increment: 1.0 / 256.0,
            decrement: 1.0 / 4096.0,
            blue_threshold: Time::from_millis(400),
        }
    }
}

/// Signed `a - b` in nanoseconds (Linux `ktime_sub`, ns-3 `int64_t`).
fn diff(a: Time, b: Time) -> i64 {
    a.nanos() as i64 - b.nanos() as i64
}

/// One COBALT queue under a hard limit: `queue = "cobalt"`.
#[derive(Clone, Debug)]
pub struct Cobalt<T> {
    pub cfg: CobaltConfig,
    q: TimedFifo<T>,
    limit: Limit,
    /// CoDel's drops in the current episode (`cobalt_vars.count`).
    count: u32,
    /// `1 / sqrt(count)` as of the last update (`rec_inv_sqrt`; 1 at
    /// count 0). Linux and ns-3 keep it in 32 bits by Newton steps; here in
    /// floating point. It is refreshed where they refresh it, so a count
    /// changed without a refresh (on overflow) keeps the old value.
    rec_inv_sqrt: f64,
    dropping: bool,
    /// CoDel's next drop while dropping; otherwise an activity timeout.
    drop_next: Time,
    /// BLUE's drop probability and the time it last changed.
    p_drop: f64,
    blue_timer: Time,
}

impl<T> Cobalt<T> {
    pub fn new(cfg: CobaltConfig, limit: Limit) -> Self {
        Cobalt {
            cfg,
            q: TimedFifo::default(),
            limit,
            count: 0,
            rec_inv_sqrt: 1.0,
            dropping: false,
            drop_next: Time::ZERO,
            p_drop: 0.0,
            blue_timer: Time::ZERO,
        }
    }

    pub fn backlog(&self) -> Backlog {
        self.q.backlog()
    }
    pub fn oldest(&self) -> Option<Time> {
        self.q.head_enqueued()
    }
    /// BLUE's drop probability.
    pub fn p_drop(&self) -> f64 {
        self.p_drop
    }
    /// CoDel's drop count.
    pub fn count(&self) -> u32 {
        self.count
    }
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// `cobalt_invsqrt`: refresh `1 / sqrt(count)`.
    fn inv_sqrt(&mut self) {
        self.rec_inv_sqrt = 1.0 / (self.count.max(1) as f64).sqrt();
    }

    /// `cobalt_control`: `t + interval / sqrt(count)` (RFC 8289 section 5.5).
    fn control_law(&self, t: Time) -> Time {
        t + Time::from_nanos((self.cfg.interval.nanos() as f64 * self.rec_inv_sqrt) as u64)
    }

    /// BLUE may step at most once per `target` (the freeze time).
    fn blue_may_step(&self, now: Time) -> bool {
        diff(now, self.blue_timer) > self.cfg.target.nanos() as i64
    }

    /// Offers a packet; a full queue drops it and tells BLUE
    /// (`cobalt_queue_full`). True when queued.
    pub fn enqueue(&mut self, now: Time, item: T, mut meta: Meta, drop: &mut dyn FnMut(T, Meta, DropReason)) -> bool {
        meta.enqueued = now;
        if !self.limit.admits(meta.size, self.q.backlog()) {
            self.queue_full(now);
            drop(item, meta, DropReason::Overflow);
            return false;
        }
        self.q.push(item, meta);
        true
    }

    /// `cobalt_queue_full`: BLUE raises `p_drop`, and CoDel starts dropping
    /// at once (`drop_next = now`, count at least 1).
    fn queue_full(&mut self, now: Time) {
        if self.blue_may_step(now) {
            self.p_drop = (self.p_drop + self.cfg.increment).min(1.0);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
    }

    /// `cobalt_queue_empty`: the link found nothing to send. BLUE lowers
    /// `p_drop`; CoDel leaves the dropping state and, if a drop was due,
    /// forgets one drop of its count.
    fn queue_empty(&mut self, now: Time) {
        if self.p_drop > 0.0 && self.blue_may_step(now) {
            self.p_drop = (self.p_drop - self.cfg.decrement).max(0.0);
            self.blue_timer = now;
        }
        self.dropping = false;
        if self.count > 0 && diff(now, self.drop_next) >= 0 {
            self.count -= 1;
            self.inv_sqrt();
            self.drop_next = self.control_law(self.drop_next);
        }
    }

    /// `cobalt_should_drop` for the packet just taken from the head; may
    /// mark it CE instead (in `meta`).
    fn should_drop(&mut self, now: Time, meta: &mut Meta, rng: &mut Rng) -> bool {
        let sojourn = now.saturating_sub(meta.enqueued);
        let mut schedule = diff(now, self.drop_next);
        let over_target = sojourn > self.cfg.target;
        let mut next_due = self.count > 0 && schedule >= 0;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = self.control_law(now);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        let mut drop = false;
        if next_due && self.dropping {
            // CoDel's signal: a CE mark if the packet allows it, else a drop.
            drop = !(self.cfg.ecn && meta.try_mark());
            self.count = self.count.saturating_add(1);
            self.inv_sqrt();
            self.drop_next = self.control_law(self.drop_next);
            schedule = diff(now, self.drop_next);
        } else {
            // Good queue: each drop that fell due is taken back from count,
            // so the next episode resumes near the rate that worked.
            while next_due {
                self.count -= 1;
                self.inv_sqrt();
                self.drop_next = self.control_law(self.drop_next);
                schedule = diff(now, self.drop_next);
                next_due = self.count > 0 && schedule >= 0;
            }
        }
        // ns-3's BLUE enhancement: a very long sojourn is overload too.
        if sojourn > self.cfg.blue_threshold && self.blue_may_step(now) {
            self.p_drop = (self.p_drop + self.cfg.increment).min(1.0);
            self.blue_timer = now;
        }
        // BLUE: drop with probability p_drop (no ECN, deliberately).
        if self.p_drop > 0.0 {
            drop |= rng.bernoulli(self.p_drop);
        }
        // drop_next doubles as an activity timeout outside an episode.
        if self.count == 0 {
            self.drop_next = now + self.cfg.interval;
        } else if schedule > 0 && !drop {
            self.drop_next = now;
        }
        drop
    }

    /// The next packet to send; packets dropped at the head on the way go
    /// to `drop`. An empty queue is news for BLUE and CoDel.
    pub fn dequeue(
        &mut self,
        now: Time,
        rng: &mut Rng,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> Option<Departure<T>> {
        loop {
            let Some((item, mut meta)) = self.q.pop() else {
                self.queue_empty(now);
                return None;
            };
            if self.should_drop(now, &mut meta, rng) {
                drop(item, meta, DropReason::Sojourn);
            } else {
                return Some(Departure { item, meta });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, Drops};
    use super::*;
    use netreturn_base::Ecn;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn cobalt(ecn: bool, limit: u32) -> Cobalt<u64> {
        Cobalt::new(CobaltConfig { ecn, ..CobaltConfig::default() }, Limit::Packets(limit))
    }

    /// One packet through an idle queue at `t`: COBALT sets its activity
    /// timeout (`drop_next = t + interval`), as on a link that had been
    /// sending short-queued packets.
    fn warm_up<T>(q: &mut Cobalt<T>, t: Time, item: T, meta: Meta) {
        let mut drops = Drops(vec![]);
        q.enqueue(t, item, meta, &mut drops.sink());
        assert!(q.dequeue(t, &mut Rng::new(0), &mut drops.sink()).is_some());
    }

    /// A standing queue of `depth` packets, refilled each ms, one sent per
    /// ms: every head has waited `depth` ms. Returns the ms of each CoDel
    /// drop (BLUE stays at 0: no overflow, no empty queue).
    fn standing_queue(q: &mut Cobalt<u64>, depth: u64, until: u64) -> Vec<u64> {
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        warm_up(q, ms(0), u64::MAX, pkt(1500, 0));
        let mut id = 0;
        for _ in 0..depth {
            q.enqueue(ms(0), id, pkt(1500, 0), &mut drops.sink());
            id += 1;
        }
        let mut times = vec![];
        for t in depth..until {
            let before = drops.0.len();
            q.dequeue(ms(t), &mut rng, &mut drops.sink()).expect("a packet");
            times.extend(std::iter::repeat_n(t, drops.0.len() - before));
            while q.backlog().packets < depth as u32 {
                q.enqueue(ms(t), id, pkt(1500, 0), &mut drops.sink());
                id += 1;
            }
        }
        assert_eq!(q.p_drop(), 0.0);
        times
    }

    #[test]
    fn the_first_codel_drop_comes_one_interval_after_the_sojourn_exceeds_target_and_then_interval_over_sqrt_count() {
        // Sojourn 20 ms > 5 ms from the first dequeue at 20 ms: dropping
        // starts with drop_next = 20 + 100 = 120 ms. Then each drop at
        // drop_next moves it by 100 / sqrt(count) with count 2, 3, ...:
        // 120, 190.7, 248.4, 298.4, 343.1 ms (drops happen at the first
        // dequeue, each ms, at or after those instants).
        let mut q = cobalt(false, 1000);
        let times = standing_queue(&mut q, 20, 345);
        let mut want = vec![];
        let mut next = 120.0f64;
        for count in 2..=6u32 {
            want.push(next.ceil() as u64);
            next += 100.0 / (count as f64).sqrt();
        }
        assert_eq!(times, want);
        assert_eq!(q.count(), 6);
    }

    #[test]
    fn with_ecn_codel_marks_ect_packets_where_it_would_drop_and_sends_them() {
        let mut q = cobalt(true, 1000);
        let mut rng = Rng::new(2);
        let mut drops = Drops::default();
        warm_up(&mut q, ms(0), u64::MAX, Meta::new(1500, 0, Ecn::Ect0));
        for i in 0..20 {
            q.enqueue(ms(0), i, Meta::new(1500, 0, Ecn::Ect0), &mut drops.sink());
        }
        let mut marked = 0;
        for t in 20..200u64 {
            if let Some(d) = q.dequeue(ms(t), &mut rng, &mut drops.sink()) {
                marked += d.meta.marked as u32;
                assert_eq!(d.meta.ecn == Ecn::Ce, d.meta.marked);
            }
            q.enqueue(ms(t), 100 + t, Meta::new(1500, 0, Ecn::Ect0), &mut drops.sink());
        }
        assert!(drops.0.is_empty(), "{:?}", drops.0);
        assert_eq!(marked, 2, "at 120 ms and 191 ms");
    }

    #[test]
    fn blue_raises_p_drop_by_increment_on_overflow_at_most_once_per_target() {
        let mut q = cobalt(false, 2);
        let mut drops = Drops::default();
        q.enqueue(ms(0), 0, pkt(1500, 0), &mut drops.sink());
        q.enqueue(ms(0), 1, pkt(1500, 0), &mut drops.sink());
        // Overflows at 6 ms (6 > 5 since the timer's 0): +1/256; at 9 ms
        // (3 ms later, within the freeze): nothing; at 12 ms: +1/256.
        for (t, want) in [(6, 1.0), (9, 1.0), (11, 1.0), (12, 2.0)] {
            assert!(!q.enqueue(ms(t), 9, pkt(1500, 0), &mut drops.sink()));
            assert_eq!(q.p_drop(), want / 256.0, "at {t} ms");
        }
        // Overflow also starts CoDel's dropping state at once.
        assert!(q.dropping());
        assert_eq!(q.count(), 1);
        assert_eq!(drops.0.iter().filter(|(_, why)| *why == DropReason::Overflow).count(), 4);
    }

    #[test]
    fn blue_lowers_p_drop_by_decrement_when_the_link_finds_the_queue_empty_at_most_once_per_target() {
        let mut q = cobalt(false, 1);
        let mut rng = Rng::new(3);
        let mut drops = Drops::default();
        q.enqueue(ms(0), 0, pkt(1500, 0), &mut drops.sink());
        for t in [6, 12, 18, 24] {
            q.enqueue(ms(t), 1, pkt(1500, 0), &mut drops.sink()); // overflow
        }
        let top = 4.0 / 256.0;
        assert_eq!(q.p_drop(), top);
        // Drain (the head may fall to BLUE), then poll the empty queue.
        while q.dequeue(ms(25), &mut rng, &mut drops.sink()).is_some() {}
        for (t, steps) in [(26, 0.0), (30, 1.0), (33, 1.0), (35, 1.0), (36, 2.0)] {
            assert!(q.dequeue(ms(t), &mut rng, &mut drops.sink()).is_none());
            assert!((q.p_drop() - (top - steps / 4096.0)).abs() < 1e-15, "at {t} ms: {}", q.p_drop());
        }
        assert!(!q.dropping());
    }

    #[test]
    fn blue_drops_dequeued_packets_with_probability_p_drop_even_ect_ones() {
        let mut q = cobalt(true, 100_000);
        q.p_drop = 0.25;
        let mut rng = Rng::new(4);
        let mut drops = Drops::default();
        // Sojourn 0: CoDel is idle, only BLUE acts.
        let n = 20_000u64;
        let mut sent = 0;
        for i in 0..n {
            q.enqueue(Time::from_micros(i), i, Meta::new(1500, 0, Ecn::Ect0), &mut drops.sink());
            if let Some(d) = q.dequeue(Time::from_micros(i), &mut rng, &mut drops.sink()) {
                assert!(!d.meta.marked, "BLUE never marks");
                sent += 1;
            }
        }
        let dropped = drops.0.len() as f64 / n as f64;
        assert!((dropped - 0.25).abs() < 0.015, "{dropped}");
        assert_eq!(sent + drops.0.len() as u64, n);
    }

    #[test]
    fn a_good_queue_takes_back_one_drop_per_due_interval_instead_of_resetting_count() {
        // After an episode at count 6, the sojourn falls below target: each
        // dequeue at or after drop_next takes count down by one and moves
        // drop_next by interval / sqrt(count).
        let mut q = cobalt(false, 1000);
        standing_queue(&mut q, 20, 345);
        assert_eq!(q.count(), 6);
        let mut rng = Rng::new(5);
        let mut drops = Drops::default();
        while q.q.pop().is_some() {}
        let mut t = 345;
        let mut counts = vec![];
        while q.count() > 0 && t < 2_000 {
            q.enqueue(ms(t), t, pkt(1500, 0), &mut drops.sink());
            q.dequeue(ms(t), &mut rng, &mut drops.sink()).expect("sent");
            counts.push(q.count());
            t += 1;
        }
        assert!(drops.0.is_empty());
        assert!(!q.dropping());
        // Monotone, one step at a time, down to 0.
        assert!(counts.windows(2).all(|w| w[0] == w[1] || w[0] == w[1] + 1), "{counts:?}");
        assert_eq!(counts.last(), Some(&0));
    }

    #[test]
    fn a_sojourn_over_the_blue_threshold_raises_p_drop() {
        let mut q = cobalt(false, 1000);
        let mut rng = Rng::new(6);
        let mut drops = Drops::default();
        q.enqueue(ms(0), 0, pkt(1500, 0), &mut drops.sink());
        q.enqueue(ms(0), 1, pkt(1500, 0), &mut drops.sink());
        q.dequeue(ms(401), &mut rng, &mut drops.sink());
        assert_eq!(q.p_drop(), 1.0 / 256.0);
    }
}
