//! CoDel, "Controlled Delay" (RFC 8289), as a [`FlowAqm`]: it drops (or,
//! with ECN, marks) at the head of its queue once packets have waited more
//! than `target` for at least `interval`, and then at intervals shrinking
//! as `interval / sqrt(count)`.

use super::{Departure, FlowAqm, Meta, TimedFifo};
use crate::queue::{Backlog, DropReason};
use netreturn_base::{Rng, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoDelConfig {
    /// Acceptable standing queue delay (RFC 8289 section 4.4: 5 ms).
    pub target: Time,
    /// Sliding window over which the minimum sojourn must stay above
    /// `target` before dropping starts (section 4.5: 100 ms).
    pub interval: Time,
    /// A packet is never dropped while the bytes left queued are at most
    /// this (section 5.3, `MAXPACKET`: one MTU; Linux and ns-3 use 1514 B
    /// and 1500 B).
    pub mtu: u32,
    /// Mark ECN-capable packets instead of dropping them (section 5.5).
    pub ecn: bool,
    /// How `1/sqrt(count)` is kept: exactly (false, the default), or as
    /// Linux's `codel_Newton_step` and ns-3's `CoDelQueueDisc::NewtonStep`
    /// do (true): a 16-bit fixed-point value moved by one Newton step per
    /// change of count, reset to 1 at a fresh dropping state. The step
    /// makes the second signal of a state come `interval / 2` after the
    /// first, not `interval / sqrt(2)`.
    pub newton: bool,
}

impl Default for CoDelConfig {
    fn default() -> Self {
        CoDelConfig {
            target: Time::from_millis(5),
            interval: Time::from_millis(100),
            mtu: 1514,
            ecn: false,
            newton: false,
        }
    }
}

/// CoDel's state (RFC 8289 section 5, the variables of its pseudocode).
#[derive(Clone, Debug)]
pub struct CoDel {
    pub cfg: CoDelConfig,
    /// Drops (or marks) since dropping last began.
    count: u32,
    /// `count` when the last dropping state ended.
    lastcount: u32,
    dropping: bool,
    /// When the sojourn will have been above target for an interval; `None`
    /// while it is below.
    first_above_time: Option<Time>,
    /// When the next drop is due while dropping.
    drop_next: Time,
    /// `1/sqrt(count)` in 16-bit fixed point (`cfg.newton`; Linux's
    /// `rec_inv_sqrt`).
    rec_inv_sqrt: u16,
}

/// Linux's REC_INV_SQRT_BITS (include/net/codel.h): 16 bits of 1/sqrt(count).
const REC_INV_SQRT_SHIFT: u32 = 32 - 16;
/// 1/sqrt(1) in those 16 bits, the value of a fresh dropping state.
const REC_INV_SQRT_ONE: u16 = (!0u32 >> REC_INV_SQRT_SHIFT) as u16;

impl CoDel {
    pub fn new(cfg: CoDelConfig) -> CoDel {
        CoDel {
            cfg,
            count: 0,
            lastcount: 0,
            dropping: false,
            first_above_time: None,
            drop_next: Time::ZERO,
            rec_inv_sqrt: REC_INV_SQRT_ONE,
        }
    }

    /// Drops (or marks) in the current dropping state.
    pub fn count(&self) -> u32 {
        self.count
    }
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The control law (section 5.5): the next drop `interval / sqrt(count)`
    /// after `t`. Computed in floating point, where Linux and ns-3 keep
    /// `1/sqrt(count)` by a 16-bit Newton step; the two differ by under
    /// 0.01 % after the first few drops.
    fn control_law(&self, t: Time) -> Time {
        if self.cfg.newton {
            // codel_control_law: t + reciprocal_scale(interval, rec_inv_sqrt << REC_INV_SQRT_SHIFT).
            let scale = (self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT;
            return t + Time::from_nanos(((self.cfg.interval.nanos() as u128 * scale as u128) >> 32) as u64);
        }
        t + Time::from_nanos((self.cfg.interval.nanos() as f64 / (self.count.max(1) as f64).sqrt()) as u64)
    }

    /// Linux's `codel_Newton_step` (include/net/codel_impl.h; ns-3's
    /// `CoDelQueueDisc::NewtonStep`): one step of x' = x (3 - count x^2) / 2
    /// on the 16-bit `rec_inv_sqrt`, after `count` changed.
    fn newton_step(&mut self) {
        if !self.cfg.newton {
            return;
        }
        let invsqrt = (self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = (invsqrt * invsqrt) >> 32;
        let mut val = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2);
        val >>= 2; // avoid overflow in the multiply that follows
        val = ((val as u128 * invsqrt as u128) >> (32 - 2 + 1)) as u64;
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `dodequeue` (section 5.4): pops the head and says whether its sojourn
    /// allows a drop. `others` counts bytes queued beside `q` (FQ-CoDel
    /// looks at the whole backlog, as Linux does).
    fn dodequeue<T>(&mut self, now: Time, q: &mut TimedFifo<T>, others: u64) -> Option<(T, Meta, bool)> {
        let Some((item, meta)) = q.pop() else {
            self.first_above_time = None;
            return None;
        };
        let sojourn = now.saturating_sub(meta.enqueued);
        let left = q.backlog().bytes + others;
        // Section 5.4: below target, or too few bytes left to keep the link
        // busy, resets the clock; otherwise dropping is allowed once the
        // sojourn has stayed above target for a whole interval.
        let ok_to_drop = if sojourn < self.cfg.target || left <= self.cfg.mtu as u64 {
            self.first_above_time = None;
            false
        } else {
            match self.first_above_time {
                None => {
                    self.first_above_time = Some(now + self.cfg.interval);
                    false
                }
                Some(t) => now >= t,
            }
        };
        Some((item, meta, ok_to_drop))
    }
}

impl FlowAqm for CoDel {
    fn state(&self) -> (bool, u32) {
        (self.dropping, self.count)
    }

    /// CoDel decides nothing at arrival (section 5.2: only a timestamp,
    /// which the queue sets).
    fn admit(&mut self, _now: Time, _meta: &mut Meta, _backlog: Backlog, _rng: &mut Rng) -> Result<(), DropReason> {
        Ok(())
    }

    /// `dequeue` (section 5.6).
    fn dequeue<T>(
        &mut self,
        now: Time,
        q: &mut TimedFifo<T>,
        others: u64,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> Option<Departure<T>> {
        let Some((mut item, mut meta, mut ok)) = self.dodequeue(now, q, others) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok {
                // The sojourn fell below target: leave the dropping state.
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                self.newton_step();
                if self.cfg.ecn && meta.try_mark() {
                    // A marked packet is sent, so the loop ends with it
                    // (Linux codel_dequeue; RFC 8289 section 5.5).
                    self.drop_next = self.control_law(self.drop_next);
                    return Some(Departure { item, meta });
                }
                drop(item, meta, DropReason::Sojourn);
                match self.dodequeue(now, q, others) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((i, m, o)) => (item, meta, ok) = (i, m, o),
                }
                if ok {
                    self.drop_next = self.control_law(self.drop_next);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok {
            // Enter the dropping state: drop (or mark) this packet.
            let mut sent = None;
            if self.cfg.ecn && meta.try_mark() {
                sent = Some(Departure { item, meta });
            } else {
                drop(item, meta, DropReason::Sojourn);
                if let Some((i, m, _)) = self.dodequeue(now, q, others) {
                    sent = Some(Departure { item: i, meta: m });
                }
            }
            self.dropping = true;
            // Section 5.6: if dropping stopped only recently, resume near the
            // rate that controlled the queue then, not from 1.
            let delta = self.count.wrapping_sub(self.lastcount);
            if delta > 1 && now.saturating_sub(self.drop_next) < self.cfg.interval.mul_f64(16.0) {
                self.count = delta;
                // Linux: one step from the old value ("Next Newton steps
                // will correct it quadratically").
                self.newton_step();
            } else {
                self.count = 1;
                self.rec_inv_sqrt = REC_INV_SQRT_ONE;
            }
            self.lastcount = self.count;
            self.drop_next = self.control_law(now);
            return sent;
        }
        Some(Departure { item, meta })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, Drops};
    use super::super::{Aqm, Single};
    use super::*;
    use crate::queue::Limit;
    use netreturn_base::Ecn;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    /// A CoDel queue fed `per_ms` packets of 1500 B every millisecond and
    /// drained at `drain_per_ms` packets per millisecond, for `until` ms.
    /// Returns (time of each drop in ms, packets sent).
    fn overload(cfg: CoDelConfig, per_ms: u32, drain_per_ms: u32, until: u64) -> (Vec<u64>, u64, Aqm<u64>) {
        let mut q = Aqm::CoDel(Single::new(CoDel::new(cfg), Limit::Packets(100_000)));
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        let mut times = vec![];
        let mut sent = 0;
        let mut id = 0;
        for t in 0..until {
            let now = ms(t);
            for _ in 0..per_ms {
                let ecn = if cfg.ecn { Ecn::Ect0 } else { Ecn::NotEct };
                assert!(q.enqueue(now, id, Meta::new(1500, 0, ecn), &mut rng, &mut drops.sink()));
                id += 1;
            }
            for _ in 0..drain_per_ms {
                let before = drops.0.len();
                let d = q.dequeue(now, &mut rng, &mut drops.sink());
                times.extend(std::iter::repeat_n(t, drops.0.len() - before));
                if let Some(d) = d {
                    sent += 1;
                    if d.meta.marked {
                        times.push(t);
                    }
                }
            }
        }
        (times, sent, q)
    }

    #[test]
    fn a_queue_whose_sojourn_stays_below_target_is_never_dropped() {
        // Two arrive and two leave each millisecond: nothing waits 5 ms.
        let (drops, sent, _) = overload(CoDelConfig::default(), 2, 2, 2_000);
        assert!(drops.is_empty());
        assert_eq!(sent, 4_000);
    }

    #[test]
    fn the_first_drop_comes_one_interval_after_the_sojourn_first_exceeds_target() {
        // 2 in, 1 out per ms: the packet sent at t ms arrived at t/2, so its
        // sojourn first reaches 5 ms at t = 9 ms; the first drop is then
        // 100 ms later (RFC 8289 section 5.4), not before.
        let (drops, _, _) = overload(CoDelConfig::default(), 2, 1, 400);
        let first = drops[0];
        assert_eq!(first, 109, "first drop at {first} ms");
    }

    #[test]
    fn drop_spacing_follows_the_control_law_interval_over_the_square_root_of_count() {
        // Under a persistent overload the n-th gap after dropping starts is
        // interval / sqrt(n) (RFC 8289 section 5.5), to the millisecond the
        // test clock resolves.
        let (drops, _, _) = overload(CoDelConfig::default(), 3, 1, 600);
        let gaps: Vec<u64> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        for (n, gap) in gaps.iter().enumerate().take(8) {
            let want = 100.0 / ((n + 1) as f64).sqrt();
            assert!((*gap as f64 - want).abs() <= 1.0, "gap {n}: {gap} ms, law {want:.1} ms");
        }
    }

    #[test]
    fn with_linuxs_newton_step_the_gap_after_the_second_signal_is_half_an_interval() {
        // Linux's codel_Newton_step (and ns-3's CoDelQueueDisc::NewtonStep)
        // takes 1/sqrt(count) from 1 to 0.5 at count 2, not to 0.707: the
        // third drop comes 50 ms after the second, where the exact law gives
        // 70.7 ms; the first gap (count 1) is the interval in both, and from
        // count 3 on the two agree within a few per cent.
        let (exact, _, _) = overload(CoDelConfig::default(), 3, 1, 600);
        let (newton, _, _) = overload(CoDelConfig { newton: true, ..CoDelConfig::default() }, 3, 1, 600);
        assert_eq!(newton[0], exact[0], "the first drop is one interval after the sojourn passed target");
        assert_eq!((exact[1] - exact[0], newton[1] - newton[0]), (100, 100), "count 1: the interval");
        assert_eq!(exact[2] - exact[1], 71, "exact: interval / sqrt(2)");
        assert_eq!(newton[2] - newton[1], 50, "Newton: interval / 2");
        let gap = |d: &[u64], n: usize| (d[n + 1] - d[n]) as f64;
        for n in 3..8 {
            let (a, b) = (gap(&exact, n), gap(&newton, n));
            assert!((a - b).abs() <= 0.05 * a + 1.0, "gap {n}: exact {a} ms, Newton {b} ms");
        }
    }

    #[test]
    fn with_ecn_capable_packets_codel_marks_at_the_same_instants_and_drops_nothing() {
        let cfg = CoDelConfig { ecn: true, ..CoDelConfig::default() };
        let (marks, sent, q) = overload(cfg, 3, 1, 600);
        let (drops, _, _) = overload(CoDelConfig::default(), 3, 1, 600);
        assert_eq!(sent, 600, "a marked packet is still sent");
        assert!(!marks.is_empty());
        assert_eq!(marks[0], drops[0], "the first signal comes at the same instant");
        assert_eq!(q.backlog().packets as u64, 3 * 600 - 600, "no packet lost");
    }

    #[test]
    fn nothing_is_dropped_while_at_most_one_mtu_would_remain() {
        // A single packet waiting a long time is never dropped: one MTU left
        // keeps the link busy (section 5.3).
        let mut q = Aqm::CoDel(Single::new(CoDel::new(CoDelConfig::default()), Limit::Packets(10)));
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        for t in 0..50u64 {
            q.enqueue(ms(t * 300), t, pkt(1500, 0), &mut rng, &mut drops.sink());
            let d = q.dequeue(ms(t * 300 + 299), &mut rng, &mut drops.sink());
            assert_eq!(d.map(|d| d.item), Some(t));
        }
        assert!(drops.0.is_empty());
    }

    #[test]
    fn dropping_resumes_near_the_old_count_when_it_stopped_recently() {
        // Section 5.6: re-entering the dropping state within 16 intervals
        // starts from count - lastcount, not 1.
        let mut c = CoDel::new(CoDelConfig::default());
        let mut q = TimedFifo::default();
        let mut sink = |_: u32, _: Meta, _: DropReason| {};
        // Build a long standing queue and let CoDel drop for a while.
        for i in 0..2_000u32 {
            q.push(i, Meta { enqueued: Time::from_micros(i as u64 * 100), ..pkt(1500, 0) });
        }
        let mut now = ms(0);
        while c.count() < 6 {
            now += ms(1);
            c.dequeue(now, &mut q, 0, &mut sink);
        }
        let count_then = c.count();
        // Drain below target: dropping stops.
        while c.dropping() {
            now += ms(1);
            let mut fresh = TimedFifo::default();
            fresh.push(0u32, Meta { enqueued: now, ..pkt(1500, 0) });
            std::mem::swap(&mut q, &mut fresh);
            c.dequeue(now, &mut q, 0, &mut sink);
        }
        // A new standing queue soon after.
        let mut q = TimedFifo::default();
        for i in 0..2_000u32 {
            q.push(i, Meta { enqueued: now, ..pkt(1500, 0) });
        }
        while !c.dropping() {
            now += ms(1);
            c.dequeue(now, &mut q, 0, &mut sink);
        }
        assert!(c.count() > 1, "count restarted at {} (was {count_then})", c.count());
    }
}
