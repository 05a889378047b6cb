//! Flow queueing (RFC 8290 section 4): packets are hashed by flow into
//! buckets, each with its own queue and its own AQM state, and a deficit
//! round robin serves "new" flows (just become active) before "old" ones.
//! With CoDel per flow this is FQ-CoDel (RFC 8290); with PIE per flow it is
//! Linux's FQ-PIE (`sch_fq_pie`).

use super::{Departure, FlowAqm, Meta, TimedFifo};
use crate::queue::{Backlog, DropReason, Limit};
use netreturn_base::{Rng, Time};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqConfig {
    /// Buckets (RFC 8290 section 5.2.2 and Linux: 1024).
    pub flows: u32,
    /// Bytes a flow may send per round (section 5.2.3: one MTU, 1514 B in
    /// Linux).
    pub quantum: u32,
    /// At most this many packets dropped from the fattest flow per overflow
    /// (Linux `drop_batch_size`, 64), stopping once half of its bytes are
    /// gone.
    pub drop_batch: u32,
    /// Salt of the bucket hash (Linux draws it at set-up; here it comes
    /// from the scenario's seed so runs repeat).
    pub perturbation: u64,
}

impl Default for FqConfig {
    fn default() -> Self {
        FqConfig { flows: 1024, quantum: 1514, drop_batch: 64, perturbation: 0 }
    }
}

/// What a flow-queueing AQM did, for traces (`netreturn-sim --aqm-trace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqEvent {
    /// A packet taken from the head of the fattest bucket over the limit.
    Overflow,
    /// A packet the bucket's AQM dropped (CoDel: sojourn; PIE: early).
    Drop,
    /// A packet the bucket's AQM marked CE.
    Mark,
    /// The bucket's AQM entered its dropping state (CoDel).
    Enter,
    /// The bucket's AQM left it.
    Leave,
}

/// One [`FqEvent`]: when, the packet's flow key (the caller's), its bucket,
/// the bucket's and the whole queue's backlog before the call, and the
/// bucket's AQM count after it (CoDel's `count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqSample {
    pub t: Time,
    pub event: FqEvent,
    pub flow: u64,
    pub bucket: u32,
    pub bucket_bytes: u64,
    pub bucket_packets: u32,
    pub total_bytes: u64,
    pub count: u32,
}

/// Which list a bucket is on (section 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Clone, Debug)]
struct Bucket<A, T> {
    q: TimedFifo<T>,
    aqm: A,
    deficit: i64,
    list: List,
}

#[derive(Clone, Debug)]
pub struct Fq<A: FlowAqm, T> {
    cfg: FqConfig,
    limit: Limit,
    buckets: Vec<Bucket<A, T>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    backlog: Backlog,
    /// Samples while tracing ([`Fq::enable_trace`]).
    trace: Option<Vec<FqSample>>,
}

impl<A: FlowAqm, T> Fq<A, T> {
    /// `aqm` is cloned into every bucket.
    pub fn new(cfg: FqConfig, limit: Limit, aqm: A) -> Self {
        let buckets = (0..cfg.flows.max(1))
            .map(|_| Bucket { q: TimedFifo::default(), aqm: aqm.clone(), deficit: 0, list: List::None })
            .collect();
        Fq {
            cfg,
            limit,
            buckets,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            backlog: Backlog::default(),
            trace: None,
        }
    }

    /// Records every overflow drop, AQM drop and mark, and every change of a
    /// bucket's dropping state, from now on.
    pub fn enable_trace(&mut self) {
        self.trace.get_or_insert_with(Vec::new);
    }

    pub fn take_trace(&mut self) -> Vec<FqSample> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    pub fn backlog(&self) -> Backlog {
        self.backlog
    }

    /// The earliest arrival among the queued packets (flows on the lists).
    pub fn oldest(&self) -> Option<Time> {
        self.new_flows.iter().chain(&self.old_flows).filter_map(|&b| self.buckets[b as usize].q.head_enqueued()).min()
    }

    /// The bucket of a flow key (section 4.1.1: a hash of the 5-tuple, here
    /// of the caller's key, salted). SplitMix64's finalizer spreads
    /// consecutive keys.
    pub fn bucket(&self, flow: u64) -> u32 {
        let mut z = flow ^ self.cfg.perturbation;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % self.buckets.len() as u64) as u32
    }

    /// Section 4.1: enqueue into the flow's bucket; a bucket that was idle
    /// joins the new list with a full quantum. On overflow, packets go from
    /// the head of the fattest bucket (section 4.1, Linux `fq_codel_drop`).
    pub(super) fn enqueue(
        &mut self,
        now: Time,
        item: T,
        mut meta: Meta,
        rng: &mut Rng,
        drop: &mut dyn FnMut(T, Meta, DropReason),
    ) -> bool {
        meta.enqueued = now;
        let b = self.bucket(meta.flow);
        let bucket = &mut self.buckets[b as usize];
        if let Err(why) = bucket.aqm.admit(now, &mut meta, bucket.q.backlog(), rng) {
            drop(item, meta, why);
            return false;
        }
        bucket.q.push(item, meta);
        self.backlog.bytes += meta.size as u64;
        self.backlog.packets += 1;
        if bucket.list == List::None {
            bucket.list = List::New;
            bucket.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(b);
        }
        while self.over_limit() {
            self.drop_from_fattest(now, drop);
        }
        // Drops take packets from heads, so the arrival (at the tail) is
        // still queued unless its bucket was emptied.
        !self.buckets[b as usize].q.is_empty()
    }

    fn over_limit(&self) -> bool {
        match self.limit {
            Limit::Packets(p) => self.backlog.packets > p,
            Limit::Bytes(b) => self.backlog.bytes > b,
        }
    }

    /// Drops up to `drop_batch` packets from the head of the bucket with the
    /// most bytes, stopping once half of its bytes are gone. Among buckets
    /// of equal bytes the first; one that holds packets before an empty one
    /// (zero-byte packets: else an over-limit queue of them would pick an
    /// empty bucket for ever; found by the `aqm_queues` fuzz target).
    fn drop_from_fattest(&mut self, now: Time, drop: &mut dyn FnMut(T, Meta, DropReason)) {
        let fattest = (0..self.buckets.len())
            .max_by_key(|&i| {
                let b = self.buckets[i].q.backlog();
                (b.bytes, b.packets > 0, std::cmp::Reverse(i))
            })
            .expect("at least one bucket");
        let bucket = &mut self.buckets[fattest];
        let before = bucket.q.backlog();
        let total = self.backlog.bytes;
        let half = before.bytes / 2;
        let mut gone = 0u64;
        for _ in 0..self.cfg.drop_batch.max(1) {
            let Some((item, meta)) = bucket.q.pop() else { break };
            gone += meta.size as u64;
            self.backlog.bytes -= meta.size as u64;
            self.backlog.packets -= 1;
            if let Some(tr) = self.trace.as_mut() {
                tr.push(FqSample {
                    t: now,
                    event: FqEvent::Overflow,
                    flow: meta.flow,
                    bucket: fattest as u32,
                    bucket_bytes: before.bytes,
                    bucket_packets: before.packets,
                    total_bytes: total,
                    count: bucket.aqm.state().1,
                });
            }
            drop(item, meta, DropReason::Overflow);
            if gone >= half {
                break;
            }
        }
    }

    /// Section 4.2: the deficit round robin over the new list, then the old.
    pub(super) fn dequeue(&mut self, now: Time, drop: &mut dyn FnMut(T, Meta, DropReason)) -> Option<Departure<T>> {
        loop {
            let (from_new, b) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&b), _) => (true, b),
                (None, Some(&b)) => (false, b),
                (None, None) => return None,
            };
            let bucket = &mut self.buckets[b as usize];
            if bucket.deficit <= 0 {
                // Out of credit: a new quantum, to the end of the old list.
                bucket.deficit += self.cfg.quantum as i64;
                bucket.list = List::Old;
                self.pop_list(from_new);
                self.old_flows.push_back(b);
                continue;
            }
            let before = bucket.q.backlog();
            let others = self.backlog.bytes - before.bytes;
            let got = match self.trace.as_mut() {
                None => bucket.aqm.dequeue(now, &mut bucket.q, others, drop),
                Some(tr) => {
                    // The call's drops, recorded as they happen; the count
                    // after the call is filled in below.
                    let (was, first) = (bucket.aqm.state().0, tr.len());
                    let sample = |event, flow| FqSample {
                        t: now,
                        event,
                        flow,
                        bucket: b,
                        bucket_bytes: before.bytes,
                        bucket_packets: before.packets,
                        total_bytes: self.backlog.bytes,
                        count: 0,
                    };
                    let got = bucket.aqm.dequeue(now, &mut bucket.q, others, &mut |i, m, why| {
                        tr.push(sample(FqEvent::Drop, m.flow));
                        drop(i, m, why)
                    });
                    let (is, count) = bucket.aqm.state();
                    if let Some(d) = got.as_ref().filter(|d| d.meta.marked) {
                        tr.push(sample(FqEvent::Mark, d.meta.flow));
                    }
                    if is != was {
                        let flow = got.as_ref().map_or(0, |d| d.meta.flow);
                        tr.push(sample(if is { FqEvent::Enter } else { FqEvent::Leave }, flow));
                    }
                    for s in &mut tr[first..] {
                        s.count = count;
                    }
                    got
                }
            };
            let after = bucket.q.backlog();
            self.backlog.bytes -= before.bytes - after.bytes;
            self.backlog.packets -= before.packets - after.packets;
            match got {
                Some(d) => {
                    bucket.deficit -= d.meta.size as i64;
                    return Some(d);
                }
                None => {
                    // Empty: a new flow moves to the old list if that has
                    // flows (so it cannot starve them by going idle and
                    // coming back new), otherwise it leaves the lists.
                    let to_old = from_new && !self.old_flows.is_empty();
                    bucket.list = if to_old { List::Old } else { List::None };
                    self.pop_list(from_new);
                    if to_old {
                        self.old_flows.push_back(b);
                    }
                }
            }
        }
    }

    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, Drops};
    use super::super::{Aqm, CoDel, CoDelConfig};
    use super::*;

    fn fq(limit: u32) -> Aqm<u64> {
        Aqm::FqCoDel(Fq::new(FqConfig::default(), Limit::Packets(limit), CoDel::new(CoDelConfig::default())))
    }

    /// Two keys that land in different buckets.
    fn two_flows(q: &Aqm<u64>) -> (u64, u64) {
        let Aqm::FqCoDel(f) = q else { unreachable!() };
        let a = 1;
        let b = (2..).find(|&k| f.bucket(k) != f.bucket(a)).unwrap();
        (a, b)
    }

    #[test]
    fn a_sparse_flow_is_served_before_a_backlogged_one() {
        // RFC 8290 section 4.2: a flow that becomes active goes on the new
        // list and sends before flows on the old list.
        let mut q = fq(10_000);
        let (bulk, sparse) = two_flows(&q);
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        let t = Time::ZERO;
        for i in 0..100 {
            q.enqueue(t, i, pkt(1500, bulk), &mut rng, &mut drops.sink());
        }
        // The bulk flow sends one quantum and moves to the old list.
        for _ in 0..2 {
            q.dequeue(t, &mut rng, &mut drops.sink());
        }
        q.enqueue(t, 1000, pkt(100, sparse), &mut rng, &mut drops.sink());
        assert_eq!(q.dequeue(t, &mut rng, &mut drops.sink()).map(|d| d.item), Some(1000));
    }

    #[test]
    fn backlogged_flows_share_the_link_equally_in_bytes_whatever_their_packet_sizes() {
        // Deficit round robin with a 1514-byte quantum (section 4.2): one
        // flow of 1500-byte packets and one of 300-byte packets each get half
        // of the bytes.
        let mut q = fq(100_000);
        let (big, small) = two_flows(&q);
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        let t = Time::ZERO;
        for i in 0..2_000 {
            q.enqueue(t, i, pkt(1500, big), &mut rng, &mut drops.sink());
            for _ in 0..5 {
                q.enqueue(t, i, pkt(300, small), &mut rng, &mut drops.sink());
            }
        }
        let (mut by_big, mut by_small) = (0u64, 0u64);
        for _ in 0..3_000 {
            let d = q.dequeue(t, &mut rng, &mut drops.sink()).unwrap();
            if d.meta.flow == big {
                by_big += d.meta.size as u64;
            } else {
                by_small += d.meta.size as u64;
            }
        }
        let share = by_big as f64 / (by_big + by_small) as f64;
        assert!((share - 0.5).abs() < 0.01, "big flow's share {share:.3}");
    }

    #[test]
    fn on_overflow_the_fattest_flow_loses_packets_from_its_head_not_the_arrival() {
        let mut q = fq(50);
        let (fat, thin) = two_flows(&q);
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        let t = Time::ZERO;
        for i in 0..48 {
            q.enqueue(t, i, pkt(1500, fat), &mut rng, &mut drops.sink());
        }
        for i in 100..103 {
            assert!(q.enqueue(t, i, pkt(1500, thin), &mut rng, &mut drops.sink()), "the thin flow's packet is kept");
        }
        assert!(!drops.0.is_empty());
        assert!(drops.0.iter().all(|(id, why)| *id < 48 && *why == DropReason::Overflow));
        assert_eq!(drops.0[0].0, 0, "from the head");
        assert!(q.backlog().packets <= 50);
    }

    #[test]
    fn conservation_every_packet_is_sent_dropped_or_still_queued() {
        let mut q = fq(200);
        let mut rng = Rng::new(3);
        let mut drops = Drops::default();
        let mut sent = 0u64;
        let mut offered = 0u64;
        for t in 0..20_000u64 {
            let now = Time::from_micros(t * 50);
            for k in 0..(t % 4) {
                q.enqueue(now, offered, pkt(200 + (t * 7 % 1300) as u32, k + t % 17), &mut rng, &mut drops.sink());
                offered += 1;
            }
            if q.dequeue(now, &mut rng, &mut drops.sink()).is_some() {
                sent += 1;
            }
        }
        assert_eq!(offered, sent + drops.0.len() as u64 + q.backlog().packets as u64);
        // 1.5 arrivals per departure: both the limit and CoDel act.
        assert!(drops.0.iter().any(|(_, w)| *w == DropReason::Sojourn), "CoDel acted");
        assert!(drops.0.iter().any(|(_, w)| *w == DropReason::Overflow), "the limit acted");
    }

    #[test]
    fn the_trace_records_every_drop_mark_and_dropping_state_and_changes_nothing() {
        // The conservation test's load over a longer queue (CoDel acts as
        // well as the limit), ECN-capable packets on even keys: each
        // overflow and CoDel drop is one sample, each mark one, and a
        // bucket's dropping states alternate enter / leave.
        let run = |trace: bool| {
            let cfg = CoDelConfig { ecn: true, ..CoDelConfig::default() };
            let mut f = Fq::<_, u64>::new(FqConfig::default(), Limit::Packets(1000), CoDel::new(cfg));
            if trace {
                f.enable_trace();
            }
            let mut rng = Rng::new(3);
            let mut drops = Drops::default();
            let (mut offered, mut marks) = (0u64, 0u64);
            for t in 0..20_000u64 {
                let now = Time::from_micros(t * 50);
                for k in 0..(t % 4) {
                    let key = k + t % 17;
                    let ecn = if key % 2 == 0 { netreturn_base::Ecn::Ect0 } else { netreturn_base::Ecn::NotEct };
                    let meta = Meta::new(200 + (t * 7 % 1300) as u32, key, ecn);
                    f.enqueue(now, offered, meta, &mut rng, &mut drops.sink());
                    offered += 1;
                }
                if let Some(d) = f.dequeue(now, &mut drops.sink()) {
                    marks += d.meta.marked as u64;
                }
            }
            (drops.0, marks, f.take_trace())
        };
        let (plain_drops, plain_marks, none) = run(false);
        let (drops, marks, tr) = run(true);
        assert!(none.is_empty());
        assert_eq!((&drops, marks), (&plain_drops, plain_marks), "tracing changes nothing");
        let n = |e: FqEvent| tr.iter().filter(|s| s.event == e).count();
        let by = |w: DropReason| drops.iter().filter(|(_, r)| *r == w).count();
        let seen = (n(FqEvent::Overflow), n(FqEvent::Drop), marks);
        assert!(seen.0 > 0 && seen.1 > 0 && seen.2 > 0, "{seen:?}");
        assert_eq!(n(FqEvent::Overflow), by(DropReason::Overflow));
        assert_eq!(n(FqEvent::Drop), by(DropReason::Sojourn));
        assert_eq!(n(FqEvent::Mark) as u64, marks);
        let mut dropping = std::collections::HashMap::new();
        for s in tr.iter().filter(|s| matches!(s.event, FqEvent::Enter | FqEvent::Leave)) {
            let was = dropping.insert(s.bucket, s.event == FqEvent::Enter).unwrap_or(false);
            assert_ne!(was, s.event == FqEvent::Enter, "bucket {} at {:?}", s.bucket, s.t);
        }
        assert!(n(FqEvent::Enter) > 0);
    }

    #[test]
    fn an_over_limit_queue_of_zero_byte_packets_drops_them_instead_of_looping() {
        // A zero-packet limit: the arrival is over it, and the fattest bucket
        // by bytes (0 everywhere) must be the one holding it.
        let mut f = Fq::<_, u64>::new(FqConfig::default(), Limit::Packets(0), CoDel::new(CoDelConfig::default()));
        let mut rng = Rng::new(1);
        let mut drops = Drops::default();
        assert!(!f.enqueue(Time::ZERO, 7, pkt(0, 3), &mut rng, &mut drops.sink()));
        assert_eq!(drops.0, vec![(7, DropReason::Overflow)]);
        assert_eq!(f.backlog(), Backlog::default());
    }
}
