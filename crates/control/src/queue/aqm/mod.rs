//! Queues that decide when a packet leaves, not only when it arrives.
//!
//! A FIFO under DropTail or RED ([`super::Fifo`]) decides at admission, so a
//! simulator may fix each packet's departure time when it is admitted. The
//! AQMs here decide at dequeue: CoDel (RFC 8289) drops or marks from the
//! head on its sojourn time, FQ-CoDel (RFC 8290) and FQ-PIE choose which
//! sub-queue sends, DualPI2 (RFC 9332) couples two queues, and COBALT
//! (CAKE's AQM) joins CoDel's law to BLUE's overflow/empty probability. The link asks
//! its [`Aqm`] for the next packet when it frees.
//!
//! Every type is sans-IO: calls take `now`, draws come from the caller's
//! [`Rng`], and periodic updates (PIE's and PI2's `T_UPDATE`) run lazily at
//! the next call, with the state each update would have seen at its instant,
//! so no timer is needed and the result does not depend on how often the
//! caller looks.

mod cobalt;
mod codel;
mod dualpi2;
mod fq;
mod pie;

pub use cobalt::{Cobalt, CobaltConfig};
pub use codel::{CoDel, CoDelConfig};
pub use dualpi2::{DualPi2, DualPi2Config};
pub use fq::{Fq, FqConfig, FqEvent, FqSample};
pub use pie::{Pie, PieConfig};

use super::{Backlog, DropReason, Limit};
use netreturn_base::{Ecn, Rng, Size, Time};
use serde::Deserialize;
use std::collections::VecDeque;

/// A link's `aqm` table: overrides of each AQM's defaults. Each discipline
/// reads the keys it has and the others ignore theirs, so one file can
/// sweep `queue` (as the `red` table).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AqmParams {
    /// Mark ECN-capable packets instead of dropping them. Default on for
    /// FQ-CoDel (Linux `fq_codel`, ns-3 `FqCoDelQueueDisc`) and COBALT
    /// (Linux CAKE), off for CoDel, PIE and FQ-PIE (Linux); DualPI2 always
    /// marks.
    pub ecn: Option<bool>,
    /// The delay target (CoDel and COBALT 5 ms, PIE and DualPI2 15 ms).
    pub target: Option<Time>,
    /// CoDel's and COBALT's interval (100 ms).
    pub interval: Option<Time>,
    /// PIE's and PI2's update interval (15 ms and 16 ms).
    pub t_update: Option<Time>,
    /// PIE's and PI2's gains, Hz (0.125 and 1.25; 0.16 and 3.2).
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    /// PIE's burst allowance (150 ms).
    pub max_burst: Option<Time>,
    /// Flow queues of FQ-CoDel and FQ-PIE (1024) and their quantum (1514 B).
    pub flows: Option<u32>,
    pub quantum: Option<Size>,
    /// DualPI2's coupling factor (2), L4S step threshold (1 ms) and the
    /// classic queue's protected share (0.1).
    pub k: Option<f64>,
    pub step: Option<Time>,
    pub c_protection: Option<f64>,
    /// Packets the link's device holds below the queue (default 0: the link
    /// asks the queue for a packet as it frees, so the AQM judges each
    /// packet as it starts on the wire). ns-3 3.44 keeps a device queue
    /// under every queue disc (`PointToPointNetDevice`'s `TxQueue`, 1 packet
    /// in the validation harness, which the queue disc refills as the
    /// previous packet starts: `NetDeviceQueue::Wake` runs the queue disc),
    /// so its CoDel measures the sojourn one transmission earlier and its
    /// limit excludes that packet; 1 here does the same (simulator only).
    pub device_queue: Option<u32>,
    /// CoDel's (and FQ-CoDel's) `1/sqrt(count)`: "exact" (the default) or
    /// "newton", Linux's and ns-3's 16-bit Newton step (`CoDelConfig::newton`).
    pub invsqrt: Option<InvSqrt>,
}

/// How CoDel keeps `1/sqrt(count)` (the `aqm` table's `invsqrt`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InvSqrt {
    /// In floating point, from count.
    #[default]
    Exact,
    /// Linux's `codel_Newton_step`, as ns-3's CoDelQueueDisc.
    Newton,
}

impl AqmParams {
    /// The domain of each key, as (the key at fault, what is allowed).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let positive_time = |k: &'static str, v: Option<Time>| match v {
            Some(t) if t == Time::ZERO => Err((k, "must be longer than 0".to_string())),
            _ => Ok(()),
        };
        positive_time("target", self.target)?;
        positive_time("interval", self.interval)?;
        positive_time("t_update", self.t_update)?;
        for (k, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if v.is_some_and(|x| !(x.is_finite() && x >= 0.0)) {
                return Err((k, format!("{} is not a finite gain >= 0 (Hz)", v.unwrap_or_default())));
            }
        }
        if self.k.is_some_and(|k| !(k.is_finite() && k > 0.0)) {
            return Err((
                "k",
                format!("{} is not a coupling factor > 0 (RFC 9332 section 2.4)", self.k.unwrap_or_default()),
            ));
        }
        if self.c_protection.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err(("c_protection", format!("{} is outside 0..=1", self.c_protection.unwrap_or_default())));
        }
        if self.flows == Some(0) {
            return Err(("flows", "must be at least 1".into()));
        }
        if self.quantum.is_some_and(|q| q.bytes(1500) == 0) {
            return Err(("quantum", "must be larger than zero".into()));
        }
        Ok(())
    }

    pub fn codel(&self, default_ecn: bool) -> CoDelConfig {
        let d = CoDelConfig::default();
        CoDelConfig {
            target: self.target.unwrap_or(d.target),
            interval: self.interval.unwrap_or(d.interval),
            ecn: self.ecn.unwrap_or(default_ecn),
            newton: self.invsqrt.unwrap_or_default() == InvSqrt::Newton,
            ..d
        }
    }

    pub fn cobalt(&self) -> CobaltConfig {
        let d = CobaltConfig::default();
        CobaltConfig {
            target: self.target.unwrap_or(d.target),
            interval: self.interval.unwrap_or(d.interval),
            ecn: self.ecn.unwrap_or(d.ecn),
            ..d
        }
    }

    pub fn pie(&self) -> PieConfig {
        let d = PieConfig::default();
        PieConfig {
            target: self.target.unwrap_or(d.target),
            t_update: self.t_update.unwrap_or(d.t_update),
            alpha: self.alpha.unwrap_or(d.alpha),
            beta: self.beta.unwrap_or(d.beta),
            max_burst: self.max_burst.unwrap_or(d.max_burst),
            ecn: self.ecn.unwrap_or(d.ecn),
            ..d
        }
    }

    pub fn fq(&self, salt: u64) -> FqConfig {
        let d = FqConfig::default();
        FqConfig {
            flows: self.flows.unwrap_or(d.flows),
            quantum: self.quantum.map_or(d.quantum, |q| q.bytes(1514).min(u32::MAX as u64) as u32),
            perturbation: salt,
            ..d
        }
    }

    pub fn dualpi2(&self) -> DualPi2Config {
        let d = DualPi2Config::default();
        DualPi2Config {
            target: self.target.unwrap_or(d.target),
            t_update: self.t_update.unwrap_or(d.t_update),
            alpha: self.alpha.unwrap_or(d.alpha),
            beta: self.beta.unwrap_or(d.beta),
            k: self.k.unwrap_or(d.k),
            step: self.step.unwrap_or(d.step),
            c_protection: self.c_protection.unwrap_or(d.c_protection),
            ..d
        }
    }
}

/// What a queue knows of a packet besides the packet itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Bytes on the link.
    pub size: u32,
    /// The flow's key, hashed by flow-queueing disciplines into a bucket
    /// (the simulator passes its flow id; the gateway a hash of the
    /// 5-tuple, RFC 8290 section 4.1.1).
    pub flow: u64,
    /// The packet's ECN field as it arrived (RFC 3168 section 5).
    pub ecn: Ecn,
    /// When the packet entered the queue (set by the queue).
    pub enqueued: Time,
    /// This queue set CE on the packet (the caller writes it into the
    /// header).
    pub marked: bool,
}

impl Meta {
    pub fn new(size: u32, flow: u64, ecn: Ecn) -> Meta {
        Meta { size, flow, ecn, enqueued: Time::ZERO, marked: false }
    }

    /// Marks the packet CE if its transport is ECN-capable (RFC 3168
    /// section 5); false when the AQM must drop instead.
    fn try_mark(&mut self) -> bool {
        if !self.ecn.is_capable() {
            return false;
        }
        self.marked |= self.ecn != Ecn::Ce;
        self.ecn = Ecn::Ce;
        true
    }
}

/// A FIFO of timestamped packets: one queue of CoDel or PIE, one flow's
/// queue of FQ-CoDel, or one of DualPI2's two.
#[derive(Clone, Debug)]
pub struct TimedFifo<T> {
    items: VecDeque<(T, Meta)>,
    backlog: Backlog,
}

impl<T> Default for TimedFifo<T> {
    fn default() -> Self {
        TimedFifo { items: VecDeque::new(), backlog: Backlog::default() }
    }
}

impl<T> TimedFifo<T> {
    pub fn backlog(&self) -> Backlog {
        self.backlog
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// When the head packet arrived.
    pub fn head_enqueued(&self) -> Option<Time> {
        self.items.front().map(|(_, m)| m.enqueued)
    }
    /// The head packet's queueing time so far (0 when empty).
    pub fn head_sojourn(&self, now: Time) -> Time {
        self.head_enqueued().map_or(Time::ZERO, |t| now.saturating_sub(t))
    }
    fn push(&mut self, item: T, meta: Meta) {
        self.backlog.bytes += meta.size as u64;
        self.backlog.packets += 1;
        self.items.push_back((item, meta));
    }
    fn pop(&mut self) -> Option<(T, Meta)> {
        let (item, meta) = self.items.pop_front()?;
        self.backlog.bytes -= meta.size as u64;
        self.backlog.packets -= 1;
        Some((item, meta))
    }
    /// Packets still queued, front first.
    pub fn iter(&self) -> impl Iterator<Item = &(T, Meta)> {
        self.items.iter()
    }
}

/// A packet leaving the queue for the link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Departure<T> {
    pub item: T,
    pub meta: Meta,
}

/// What a queue of one FIFO needs from its AQM (CoDel, PIE), and what FQ
/// gives each flow's queue.
pub trait FlowAqm: Clone + std::fmt::Debug {
    /// Decides at arrival, after the hard limit passed: `Ok` to queue the
    /// packet (perhaps marked, in `meta`), `Err` to drop it. `backlog` is
    /// the occupancy of the queue the packet would join.
    fn admit(&mut self, now: Time, meta: &mut Meta, backlog: Backlog, rng: &mut Rng) -> Result<(), DropReason>;

    /// Takes the next packet to send from `q`, dropping (through `drop`)
    /// what the AQM drops at the head. `others` is the bytes queued in
    /// sibling queues (FQ), counted where the AQM looks at the whole
    /// backlog.
    fn dequeue<T>(
        &mut self,
        now: Time,
        q: &mut TimedFifo<T>,
        others: u64,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> Option<Departure<T>>;

    /// For traces: whether the AQM is in a dropping state and its count
    /// there (CoDel's `dropping` and `count`; (false, 0) for one without).
    fn state(&self) -> (bool, u32) {
        (false, 0)
    }
}

/// One FIFO under a [`FlowAqm`] and a hard limit: `queue = "codel"` or
/// `"pie"`.
#[derive(Clone, Debug)]
pub struct Single<A: FlowAqm, T> {
    pub aqm: A,
    q: TimedFifo<T>,
    limit: Limit,
}

impl<A: FlowAqm, T> Single<A, T> {
    pub fn new(aqm: A, limit: Limit) -> Self {
        Single { aqm, q: TimedFifo::default(), limit }
    }

    fn enqueue(
        &mut self,
        now: Time,
        item: T,
        mut meta: Meta,
        rng: &mut Rng,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> bool {
        meta.enqueued = now;
        if !self.limit.admits(meta.size, self.q.backlog) {
            drop(item, meta, DropReason::Overflow);
            return false;
        }
        match self.aqm.admit(now, &mut meta, self.q.backlog, rng) {
            Ok(()) => {
                self.q.push(item, meta);
                true
            }
            Err(why) => {
                drop(item, meta, why);
                false
            }
        }
    }
}

/// The dequeue-time disciplines, a closed set chosen at configuration.
#[derive(Clone, Debug)]
pub enum Aqm<T> {
    CoDel(Single<CoDel, T>),
    Pie(Single<Pie, T>),
    FqCoDel(Fq<CoDel, T>),
    FqPie(Fq<Pie, T>),
    DualPi2(DualPi2<T>),
    Cobalt(Cobalt<T>),
}

impl<T> Aqm<T> {
    /// Offers a packet at `now`. Every packet the queue drops in doing so
    /// (the arriving one, or FQ's victims from the fattest flow) goes to
    /// `drop` with its reason; true when the arriving packet was queued.
    pub fn enqueue(
        &mut self,
        now: Time,
        item: T,
        meta: Meta,
        rng: &mut Rng,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> bool {
        match self {
            Aqm::CoDel(s) => s.enqueue(now, item, meta, rng, drop),
            Aqm::Pie(s) => s.enqueue(now, item, meta, rng, drop),
            Aqm::FqCoDel(f) => f.enqueue(now, item, meta, rng, drop),
            Aqm::FqPie(f) => f.enqueue(now, item, meta, rng, drop),
            Aqm::DualPi2(d) => d.enqueue(now, item, meta, drop),
            Aqm::Cobalt(c) => c.enqueue(now, item, meta, drop),
        }
    }

    /// The packet the link sends next, if any; packets dropped at the head
    /// on the way go to `drop`.
    pub fn dequeue(
        &mut self,
        now: Time,
        rng: &mut Rng,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> Option<Departure<T>> {
        match self {
            Aqm::CoDel(s) => s.aqm.dequeue(now, &mut s.q, 0, drop),
            Aqm::Pie(s) => s.aqm.dequeue(now, &mut s.q, 0, drop),
            Aqm::FqCoDel(f) => f.dequeue(now, drop),
            Aqm::FqPie(f) => f.dequeue(now, drop),
            Aqm::DualPi2(d) => d.dequeue(now, rng, drop),
            Aqm::Cobalt(c) => c.dequeue(now, rng, drop),
        }
    }

    /// When the longest-waiting packet arrived: a link that freed before
    /// then starts its next packet at this instant (the real gateway
    /// serves its queue lazily, at the instants the link would have).
    /// Starts recording what a flow-queueing AQM does ([`FqSample`]):
    /// false for the others, which record nothing.
    pub fn enable_trace(&mut self) -> bool {
        match self {
            Aqm::FqCoDel(f) => f.enable_trace(),
            Aqm::FqPie(f) => f.enable_trace(),
            _ => return false,
        }
        true
    }

    /// The samples recorded since [`Self::enable_trace`].
    pub fn take_trace(&mut self) -> Vec<FqSample> {
        match self {
            Aqm::FqCoDel(f) => f.take_trace(),
            Aqm::FqPie(f) => f.take_trace(),
            _ => vec![],
        }
    }

    pub fn oldest(&self) -> Option<Time> {
        match self {
            Aqm::CoDel(s) => s.q.head_enqueued(),
            Aqm::Pie(s) => s.q.head_enqueued(),
            Aqm::FqCoDel(f) => f.oldest(),
            Aqm::FqPie(f) => f.oldest(),
            Aqm::DualPi2(d) => d.oldest(),
            Aqm::Cobalt(c) => c.oldest(),
        }
    }

    pub fn backlog(&self) -> Backlog {
        match self {
            Aqm::CoDel(s) => s.q.backlog(),
            Aqm::Pie(s) => s.q.backlog(),
            Aqm::FqCoDel(f) => f.backlog(),
            Aqm::FqPie(f) => f.backlog(),
            Aqm::DualPi2(d) => d.backlog(),
            Aqm::Cobalt(c) => c.backlog(),
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A packet of `size` bytes of flow `flow`, not ECN-capable.
    pub fn pkt(size: u32, flow: u64) -> Meta {
        Meta::new(size, flow, Ecn::NotEct)
    }

    /// Collects drops as (item, reason).
    #[derive(Default)]
    pub struct Drops<T>(pub Vec<(T, DropReason)>);
    impl<T> Drops<T> {
        pub fn sink(&mut self) -> impl FnMut(T, Meta, DropReason) + '_ {
            |t, _, why| self.0.push((t, why))
        }
    }
}

#[cfg(test)]
mod keys_tests {
    use crate::registry::{struct_fields, QueueKind};

    #[test]
    fn every_aqm_key_a_discipline_lists_is_a_key_of_the_aqm_table_and_every_table_key_is_read_by_one() {
        let all = struct_fields::<super::AqmParams>();
        let mut used = std::collections::BTreeSet::new();
        for q in QueueKind::ALL.iter().filter(|q| q.decides_at_dequeue()) {
            for k in q.keys() {
                assert!(all.contains(k), "{}: {k} is not an aqm key", q.name());
                used.insert(*k);
            }
        }
        assert_eq!(
            used.len(),
            all.len(),
            "aqm keys no discipline reads: {:?}",
            all.iter().filter(|k| !used.contains(*k)).collect::<Vec<_>>()
        );
    }
}
