//! DualPI2, the coupled dual-queue AQM of L4S (RFC 9332), with Linux's
//! defaults (`sch_dualpi2`, Linux 6.18).
//!
//! ECT(1) and CE packets join the L queue, everything else the C (classic)
//! queue (RFC 9332 section 4.1, Appendix A.1 `dualpi2_enqueue`). One PI
//! controller (PI2) keeps a base probability `p'` from the queueing delay
//! every `t_update`. Classic packets are dropped or marked with
//! `p_C = p'^2`; L4S packets are marked with `p_L = max(p'_L, p_CL)`, where
//! `p_CL = k p'` is the coupled probability and `p'_L` the L queue's own
//! step AQM (section 2.4, Appendix A.1 `dualpi2_dequeue`).

use super::{Departure, Meta, TimedFifo};
use crate::queue::{Backlog, DropReason, Limit};
use netreturn_base::{Rng, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Config {
    /// PI2's queueing delay target (Appendix A.1: 15 ms).
    pub target: Time,
    /// PI2's update interval (Linux: 16 ms).
    pub t_update: Time,
    /// PI2's integral and proportional gains, Hz (Linux: 0.16 and 3.2).
    pub alpha: f64,
    pub beta: f64,
    /// Coupling factor (section 2.4: k = 2).
    pub k: f64,
    /// The L queue's native AQM marks every packet that waited longer than
    /// this (Linux `step_thresh`: 1 ms).
    pub step: Time,
    /// The classic queue's share of the link when both are backlogged
    /// (Linux `c_protection`: 10 %), by a credit scheduler.
    pub c_protection: f64,
    /// Bytes kept free by the overflow check of `dualpi2_enqueue`.
    pub mtu: u32,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            target: Time::from_millis(15),
            t_update: Time::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            k: 2.0,
            step: Time::from_millis(1),
            c_protection: 0.10,
            mtu: 1514,
        }
    }
}

#[derive(Clone, Debug)]
pub struct DualPi2<T> {
    pub cfg: DualPi2Config,
    limit: Limit,
    l: TimedFifo<T>,
    c: TimedFifo<T>,
    /// PI2's base probability `p'`.
    p: f64,
    /// The queueing delay at the previous update (`prevq`).
    prevq: Time,
    next_update: Time,
    /// Credit of the scheduler: the L queue sends while it is <= 0.
    credit: f64,
}

impl<T> DualPi2<T> {
    pub fn new(cfg: DualPi2Config, limit: Limit) -> Self {
        DualPi2 {
            cfg,
            limit,
            l: TimedFifo::default(),
            c: TimedFifo::default(),
            p: 0.0,
            prevq: Time::ZERO,
            next_update: cfg.t_update,
            credit: 0.0,
        }
    }

    pub fn backlog(&self) -> Backlog {
        let (l, c) = (self.l.backlog(), self.c.backlog());
        Backlog { bytes: l.bytes + c.bytes, packets: l.packets + c.packets }
    }

    /// The earliest arrival among the packets of both queues.
    pub fn oldest(&self) -> Option<Time> {
        match (self.l.head_enqueued(), self.c.head_enqueued()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The base probability `p'` after the updates due by `now`.
    pub fn base_probability(&mut self, now: Time) -> f64 {
        self.catch_up(now);
        self.p
    }
    /// `p_C = p'^2` (section 2.4).
    pub fn classic_probability(&self) -> f64 {
        self.p * self.p
    }
    /// `p_CL = k p'`, at most 1 (section 2.4).
    pub fn coupled_probability(&self) -> f64 {
        (self.cfg.k * self.p).min(1.0)
    }
    /// `p_Cmax = min(1 / k^2, 1)` (Appendix A.1): above it the link is
    /// overloaded and L4S packets are dropped like classic ones (section
    /// 4.2.3).
    fn overloaded(&self) -> bool {
        self.classic_probability() > (1.0 / (self.cfg.k * self.cfg.k)).min(1.0)
    }

    /// Periodic PI2 updates due by `now`, each seeing the queues as they
    /// were at its instant (they change only in calls, which come here
    /// first).
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            let at = self.next_update;
            if self.p == 0.0 && self.prevq == Time::ZERO && self.l.is_empty() && self.c.is_empty() {
                let steps = (now - at).nanos() / self.cfg.t_update.nanos() + 1;
                self.next_update += Time::from_nanos(steps * self.cfg.t_update.nanos());
                return;
            }
            // Appendix A.1 `dualpi2_update`: the delay is the larger of the
            // two heads' sojourns (Linux; the RFC's example uses the classic
            // queue's).
            let curq = self.l.head_sojourn(at).max(self.c.head_sojourn(at));
            let (cur, prev, target) = (curq.secs_f64(), self.prevq.secs_f64(), self.cfg.target.secs_f64());
            self.p = (self.p + self.cfg.alpha * (cur - target) + self.cfg.beta * (cur - prev)).clamp(0.0, 1.0);
            self.prevq = curq;
            self.next_update += self.cfg.t_update;
        }
    }

    /// `dualpi2_enqueue` (Appendix A.1): the overflow check, then the
    /// classifier on the ECN field.
    pub(super) fn enqueue(
        &mut self,
        now: Time,
        item: T,
        mut meta: Meta,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> bool {
        self.catch_up(now);
        meta.enqueued = now;
        let backlog = self.backlog();
        let fits = match self.limit {
            Limit::Bytes(b) => backlog.bytes + meta.size as u64 + self.cfg.mtu as u64 <= b,
            Limit::Packets(p) => backlog.packets < p,
        };
        if !fits {
            drop(item, meta, DropReason::Overflow);
            return false;
        }
        if meta.ecn.is_l4s() {
            self.l.push(item, meta);
        } else {
            self.c.push(item, meta);
        }
        true
    }

    /// Whether the L queue sends next: the only backlogged queue, or by the
    /// credit scheduler (Linux `c_protection`).
    fn pick_l(&self) -> Option<bool> {
        match (self.l.is_empty(), self.c.is_empty()) {
            (true, true) => None,
            (false, true) => Some(true),
            (true, false) => Some(false),
            (false, false) => Some(self.credit <= 0.0),
        }
    }

    /// `dualpi2_dequeue` (Appendix A.1).
    pub(super) fn dequeue(
        &mut self,
        now: Time,
        rng: &mut Rng,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> Option<Departure<T>> {
        self.catch_up(now);
        while let Some(from_l) = self.pick_l() {
            let both = !self.l.is_empty() && !self.c.is_empty();
            let (item, mut meta) = if from_l { self.l.pop() } else { self.c.pop() }.expect("picked a backlogged queue");
            if both {
                // Each queue pays for its bytes in the other's weight, so
                // that the classic queue keeps `c_protection` of the link.
                let w = self.cfg.c_protection;
                self.credit += if from_l { w } else { -(1.0 - w) } * meta.size as f64;
            } else {
                self.credit = 0.0;
            }
            let overloaded = self.overloaded();
            if from_l {
                if overloaded {
                    // Section 4.2.3 and Appendix A.1 (overload saturation):
                    // the L queue reverts to classic drop with p_C, and
                    // marks the packets it keeps with p_CL = k p', which is
                    // at least 1 here (Linux `dualpi2_scalable_marking`
                    // marks them all).
                    if self.p > rng.next_f64().max(rng.next_f64()) {
                        drop(item, meta, DropReason::Early);
                        continue;
                    }
                    meta.try_mark();
                    return Some(Departure { item, meta });
                }
                // The native step AQM and the coupled probability, combined
                // by their maximum (section 2.4).
                let native = if now.saturating_sub(meta.enqueued) > self.cfg.step { 1.0 } else { 0.0 };
                let p_l = f64::max(native, self.coupled_probability());
                if p_l > 0.0 && rng.next_f64() < p_l {
                    meta.try_mark();
                }
                return Some(Departure { item, meta });
            }
            // Classic: p_C = p'^2, drawn as p' > max(U1, U2) (Appendix A.2),
            // whose probability is exactly p'^2. Overload disables ECN: an
            // ECT packet is dropped then too (Appendix A.1; Linux
            // `dualpi2_classic_marking`).
            if self.p > rng.next_f64().max(rng.next_f64()) && (overloaded || !meta.try_mark()) {
                drop(item, meta, DropReason::Early);
                continue;
            }
            return Some(Departure { item, meta });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Drops;
    use super::*;
    use netreturn_base::Ecn;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn q() -> DualPi2<u64> {
        DualPi2::new(DualPi2Config::default(), Limit::Packets(100_000))
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_and_not_ect_and_ect0_to_the_classic_queue() {
        let mut d = q();
        let mut drops = Drops::default();
        for (i, ecn) in [Ecn::Ect1, Ecn::Ce, Ecn::NotEct, Ecn::Ect0].into_iter().enumerate() {
            assert!(d.enqueue(Time::ZERO, i as u64, Meta::new(1000, 0, ecn), &mut drops.sink()));
        }
        assert_eq!((d.l.backlog().packets, d.c.backlog().packets), (2, 2));
    }

    #[test]
    fn one_pi2_update_moves_p_by_alpha_times_the_error_and_beta_times_the_trend() {
        // A classic head that arrived at 0 and is still queued at the first
        // update (16 ms): p' = 0.16 (0.016 - 0.015) + 3.2 (0.016 - 0) =
        // 0.05136.
        let mut d = q();
        let mut drops = Drops::default();
        d.enqueue(Time::ZERO, 0, Meta::new(1500, 0, Ecn::NotEct), &mut drops.sink());
        let p = d.base_probability(ms(16));
        assert!((p - (0.16 * 0.001 + 3.2 * 0.016)).abs() < 1e-12, "{p}");
    }

    /// Dequeues `n` packets of each kind at base probability `p` (held
    /// fixed) and returns (classic drop fraction, L mark fraction).
    fn signal_rates(p: f64, n: u64) -> (f64, f64) {
        let mut d = q();
        let mut rng = Rng::new(11);
        let mut drops = Drops::default();
        let (mut l_marks, mut c_drops) = (0u64, 0u64);
        for i in 0..n {
            for ecn in [Ecn::Ect1, Ecn::NotEct] {
                d.enqueue(Time::ZERO, i, Meta::new(1000, 0, ecn), &mut drops.sink());
            }
            while !d.l.is_empty() || !d.c.is_empty() {
                d.p = p;
                let before = drops.0.len();
                if let Some(dep) = d.dequeue(Time::ZERO, &mut rng, &mut drops.sink()) {
                    l_marks += dep.meta.marked as u64;
                }
                c_drops += (drops.0.len() - before) as u64;
            }
        }
        (c_drops as f64 / n as f64, l_marks as f64 / n as f64)
    }

    #[test]
    fn the_classic_signal_is_the_square_of_p_and_the_l4s_signal_k_times_p() {
        // Section 2.4: p_C = p'^2 and p_CL = k p' (k = 2), so that a
        // Reno-like flow (rate ~ 1/sqrt p_C) and a DCTCP-like one (rate ~
        // 1/p_CL) get the same rate.
        for p in [0.05, 0.1, 0.3] {
            let (c, l) = signal_rates(p, 40_000);
            assert!((c - p * p).abs() < 0.15 * p * p + 0.002, "p' = {p}: classic drops {c:.4}, want {:.4}", p * p);
            assert!((l - 2.0 * p).abs() < 0.05 * 2.0 * p, "p' = {p}: L marks {l:.4}, want {:.4}", 2.0 * p);
        }
    }

    #[test]
    fn an_l_packet_that_waited_longer_than_the_step_is_always_marked() {
        let mut d = q();
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        d.enqueue(Time::ZERO, 0, Meta::new(1000, 0, Ecn::Ect1), &mut drops.sink());
        d.enqueue(Time::ZERO, 1, Meta::new(1000, 0, Ecn::Ect1), &mut drops.sink());
        let first = d.dequeue(Time::from_micros(900), &mut rng, &mut drops.sink()).unwrap();
        let second = d.dequeue(Time::from_micros(1100), &mut rng, &mut drops.sink()).unwrap();
        assert!(!first.meta.marked && second.meta.marked);
        assert_eq!(second.meta.ecn, Ecn::Ce);
    }

    #[test]
    fn with_both_queues_backlogged_the_classic_queue_keeps_its_protected_share() {
        let mut d = q();
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        for i in 0..5_000 {
            d.enqueue(Time::ZERO, i, Meta::new(1500, 0, Ecn::Ect1), &mut drops.sink());
            d.enqueue(Time::ZERO, i, Meta::new(1500, 1, Ecn::NotEct), &mut drops.sink());
        }
        let mut classic = 0;
        for _ in 0..2_000 {
            let dep = d.dequeue(Time::ZERO, &mut rng, &mut drops.sink()).unwrap();
            classic += (dep.meta.flow == 1) as u32;
        }
        assert!((195..=205).contains(&classic), "classic sent {classic} of 2000");
    }

    // The tests below walk RFC 9332 Appendix A's pseudocode
    // (`dualpi2_update`, `dualpi2_dequeue`) step by step with worked numbers.

    #[test]
    fn rfc9332_dualpi2_update_walked_over_five_tupdates_with_the_clamp_at_zero() {
        // Appendix A.1 `dualpi2_update`, every Tupdate (16 ms):
        //   p' += alpha (curq - target) + beta (curq - prevq); prevq = curq
        // with Linux's alpha 0.16 Hz, beta 3.2 Hz, target 15 ms (the RFC's
        // example derives its gains from RTT_max), p' kept in [0, 1]
        // (Appendix A.1 and A.2 clamp it). ECT(0) classic packets: a signal
        // marks them, so which packets leave does not depend on the draws.
        let mut d = q();
        let mut rng = Rng::new(7);
        let mut drops = Drops::default();
        let ect0 = |i| (i, Meta::new(1500, 0, Ecn::Ect0));
        let (i, m) = ect0(0);
        d.enqueue(ms(0), i, m, &mut drops.sink());
        // 16 ms: curq = 16 ms (the head waits since 0), prevq = 0:
        //   p' = 0.16 (0.016 - 0.015) + 3.2 (0.016 - 0) = 0.05136.
        let p16 = 0.16 * 0.001 + 3.2 * 0.016;
        assert!((d.base_probability(ms(16)) - p16).abs() < 1e-12);
        // 32 ms: curq = 32 ms: p' += 0.16 x 0.017 + 3.2 x 0.016 = 0.05392.
        let (i, m) = ect0(1);
        d.enqueue(ms(30), i, m, &mut drops.sink());
        let p32 = p16 + 0.16 * 0.017 + 3.2 * 0.016;
        assert!((d.base_probability(ms(32)) - p32).abs() < 1e-12);
        // The head leaves at 33 ms; the next arrived at 30 ms. 48 ms: curq =
        // 18 ms, prevq = 32 ms: p' += 0.16 x 0.003 + 3.2 x (-0.014).
        assert_eq!(d.dequeue(ms(33), &mut rng, &mut drops.sink()).map(|x| x.item), Some(0));
        let p48 = p32 + 0.16 * 0.003 - 3.2 * 0.014;
        assert!((d.base_probability(ms(48)) - p48).abs() < 1e-12, "{} vs {p48}", d.p);
        // Empty from 50 ms. 64 ms: curq = 0, prevq = 18 ms:
        // p' += 0.16 x (-0.015) + 3.2 x (-0.018) = -0.06 -> 0.00096.
        assert_eq!(d.dequeue(ms(50), &mut rng, &mut drops.sink()).map(|x| x.item), Some(1));
        let p64 = p48 - 0.16 * 0.015 - 3.2 * 0.018;
        assert!((d.base_probability(ms(64)) - p64).abs() < 1e-12);
        assert!((p64 - 0.00096).abs() < 1e-12);
        // 80 ms: p' += 0.16 x (-0.015) = -0.0024 -> below 0: clamped to 0.
        assert_eq!(d.base_probability(ms(80)), 0.0);
        assert!(drops.0.is_empty());
    }

    #[test]
    fn rfc9332_coupling_gives_p_c_the_square_of_p_and_p_cl_k_times_p_capped_at_one() {
        // Section 2.4 (eq. 1): p_C = (p_CL / k)^2 with p_CL = k p', so p_C
        // = p'^2 whatever k. Worked: p' = 0.3, k = 2: p_C = 0.09, p_CL =
        // 0.6; k = 4: p_C = 0.09, p_CL = 1.2 -> 1.
        for (k, p_cl) in [(2.0, 0.6), (4.0, 1.0)] {
            let mut d = DualPi2::<u64>::new(DualPi2Config { k, ..DualPi2Config::default() }, Limit::Packets(10));
            d.p = 0.3;
            assert!((d.classic_probability() - 0.09).abs() < 1e-12);
            assert!((d.coupled_probability() - p_cl).abs() < 1e-12);
            if k * 0.3 <= 1.0 {
                assert!(((d.coupled_probability() / k).powi(2) - d.classic_probability()).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn rfc9332_p_l_is_the_max_of_the_native_step_and_the_coupled_probability() {
        // Appendix A.1 `dualpi2_dequeue`: p_L = max(p'_L, p_CL). With p' =
        // 0.05 (p_CL = 0.1): an L packet under the step (1 ms) is marked
        // about 10 % of the time; one over it always (p'_L = 1).
        let mut d = q();
        let mut rng = Rng::new(8);
        let mut drops = Drops::default();
        let n = 20_000u64;
        let mut marked = [0u64; 2];
        for i in 0..n {
            for (j, waited) in [Time::from_micros(500), Time::from_micros(1_500)].into_iter().enumerate() {
                let now = ms(i) + waited;
                d.enqueue(ms(i), i, Meta::new(1000, 0, Ecn::Ect1), &mut drops.sink());
                d.next_update = Time::MAX; // hold p' fixed
                d.p = 0.05;
                let dep = d.dequeue(now, &mut rng, &mut drops.sink()).expect("sent");
                marked[j] += dep.meta.marked as u64;
            }
        }
        let under = marked[0] as f64 / n as f64;
        assert!((under - 0.1).abs() < 0.01, "{under}");
        assert_eq!(marked[1], n);
    }

    #[test]
    fn rfc9332_under_overload_classic_ect_packets_are_dropped_and_kept_l_packets_are_all_marked() {
        // Overload: p_C = p'^2 above p_Cmax = 1 / k^2 = 0.25 (Appendix A.1;
        // Linux: k p' > 1). p' = 0.6: p_C = 0.36. A classic ECT(0) packet
        // signalled is dropped, not marked ("overload disables ECN"); an L
        // packet is dropped with p_C and otherwise marked (p_CL = 1.2 >= 1).
        let mut d = q();
        let mut rng = Rng::new(9);
        let mut drops = Drops::default();
        let n = 20_000u64;
        let (mut c_sent, mut c_marked, mut l_sent, mut l_marked) = (0u64, 0u64, 0u64, 0u64);
        for i in 0..n {
            for ecn in [Ecn::Ect0, Ecn::Ect1] {
                d.enqueue(Time::ZERO, i, Meta::new(1000, 0, ecn), &mut drops.sink());
                d.next_update = Time::MAX;
                d.p = 0.6;
                if let Some(dep) = d.dequeue(Time::ZERO, &mut rng, &mut drops.sink()) {
                    if ecn == Ecn::Ect0 {
                        c_sent += 1;
                        c_marked += dep.meta.marked as u64;
                    } else {
                        l_sent += 1;
                        l_marked += dep.meta.marked as u64;
                    }
                }
            }
        }
        assert_eq!(c_marked, 0, "no classic mark under overload");
        assert_eq!(l_marked, l_sent, "every kept L packet is marked");
        for sent in [c_sent, l_sent] {
            let dropped = 1.0 - sent as f64 / n as f64;
            assert!((dropped - 0.36).abs() < 0.015, "{dropped}");
        }
    }

    #[test]
    fn rfc9332_below_overload_a_signalled_classic_ect_packet_is_marked_and_a_not_ect_one_dropped() {
        // Appendix A.1: `if ecn(pkt) == 0 { drop } else mark` with p_C =
        // p'^2; p' = 0.4 (p_C = 0.16 < 0.25).
        let mut d = q();
        let mut rng = Rng::new(10);
        let mut drops = Drops::default();
        let n = 20_000u64;
        let mut marked = 0u64;
        for i in 0..n {
            for ecn in [Ecn::Ect0, Ecn::NotEct] {
                d.enqueue(Time::ZERO, i, Meta::new(1000, 0, ecn), &mut drops.sink());
                d.next_update = Time::MAX;
                d.p = 0.4;
                if let Some(dep) = d.dequeue(Time::ZERO, &mut rng, &mut drops.sink()) {
                    assert!(!dep.meta.marked || ecn == Ecn::Ect0);
                    marked += dep.meta.marked as u64;
                }
            }
        }
        let (m, dr) = (marked as f64 / n as f64, drops.0.len() as f64 / n as f64);
        assert!((m - 0.16).abs() < 0.012 && (dr - 0.16).abs() < 0.012, "marks {m}, drops {dr}");
    }
}
