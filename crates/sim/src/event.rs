//! The event queue: events pop in `(time, sequence)` order, so events at
//! the same instant run in the order they were scheduled and a run is
//! deterministic.
//!
//! Most events are packet arrivals, and the arrivals scheduled by one
//! interface come in time order (departures are serialized, the propagation
//! delay is constant). Such events go to a per-interface FIFO "lane" and only
//! each lane's head sits in a heap: the heap stays small (pops are
//! cheaper) and the pop order is unchanged, because every later entry of a
//! lane has a time no earlier and a sequence number strictly larger than its
//! head's, so it can never be the global minimum while the head is pending.
//!
//! A packet's arrivals form a *linked* lane: the lane entries live in the
//! packets themselves (a [`Link`] in each packet slot, through
//! [`LinkStore`]), each packet holding the key of the one behind it. The
//! link is written into the packet being transmitted or the one just
//! before it on the same link (both in cache), and read from the packet
//! being delivered (prefetched as the next event's): with thousands of
//! flows, a ring of lane entries per interface was written and read a
//! propagation delay apart, two cache misses on nearly every hop.
//!
//! Links of one kind (a router's links to its hosts, the hosts' links to
//! their router: one delay, one rate) share a lane, taking each arrival
//! that comes in order there and leaving the rest to the link's own lane
//! ([`EventQueue::schedule_arrival`]): at 100x scale of EWT scenario 2 the
//! heap of lane heads holds ~8 entries instead of ~110.
//!
//! The lane heads have that heap to themselves; all other events (timers,
//! application starts, UDP ticks, samples) go to a second heap, and `pop`
//! takes the earlier of the two tops, so the order is still exactly
//! `(time, sequence)`. Most pops are lane heads replaced by their lane's
//! next arrival, and they sift through a heap of a handful of entries
//! (~8 in EWT scenario 2 with 31 flows), where in one heap for all events
//! TCP timers alone (every connection always has a retransmission deadline
//! pending, far ahead, rarely firing) made up ~47 of ~60 entries.

use netreturn_base::Time;
use std::collections::VecDeque;

/// What happens. Payloads are indices into the simulator's tables, so an
/// entry stays small and the heap cache-friendly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Packet `1` reaches the far end of interface `0`.
    Arrive(u32, u32),
    /// TCP endpoint (2 x flow + side) timer.
    Timer(u32),
    /// TCP flow `0` starts.
    Start(u32),
    /// UDP source `0` starts.
    UdpStart(u32),
    /// The next transfer of web source `0` arrives (the transfer is made
    /// then: `tcp-web` traffic, [`crate::web::WebSource`]).
    Web(u32),
    /// UDP source `0` sends its next packet.
    UdpTick(u32),
    /// Rate-limited TCP application `0` writes its next chunk.
    AppTick(u32),
    /// Periodic sampling of queues and traced flows.
    Sample,
    /// The link of interface `0`, whose queue decides at dequeue, has sent
    /// its packet and asks the queue for the next.
    LinkFree(u32),
}

/// Asks for the cache line holding `r` (a hint: no effect on results).
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not read into the program.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(r as *const T as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// `lane` value of an event scheduled outside lanes.
const NO_LANE: u32 = u32::MAX;

/// `Link::next` of the last item of a linked lane.
const NO_NEXT: u32 = u32::MAX;

/// An item's place in a linked lane: the item behind it and that item's
/// key (so that popping an item needs no read of its successor).
#[derive(Clone, Copy, Debug)]
pub struct Link {
    next_time: u64,
    next_seq: u64,
    next: u32,
    /// The interface the item behind arrives over (in a shared lane, not
    /// the lane's own number; in the padding the struct had).
    next_iface: u32,
}

impl Default for Link {
    fn default() -> Link {
        Link { next_time: 0, next_seq: 0, next: NO_NEXT, next_iface: 0 }
    }
}

/// Where the items of linked lanes keep their [`Link`]s (the simulator's
/// packet slots).
pub trait LinkStore {
    fn link(&self, item: u32) -> &Link;
    fn link_mut(&mut self, item: u32) -> &mut Link;
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// `time << 64 | seq`: one integer comparison orders by time, then by
    /// scheduling order (seq is unique, so the order is total).
    key: u128,
    event: Event,
    lane: u32,
}

impl Entry {
    fn new(time: Time, seq: u64, event: Event, lane: u32) -> Entry {
        Entry { key: Entry::key(time, seq), event, lane }
    }
    fn key(time: Time, seq: u64) -> u128 {
        (time.0 as u128) << 64 | seq as u128
    }
    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

/// A binary min-heap of entries by key. Unlike `std`'s `BinaryHeap`
/// (whose `PeekMut` writes the new root to memory and its sift reads it
/// back, a load spanning the several narrower stores that wrote it, which
/// store forwarding cannot serve: 22 % of the event loop's samples at 1x
/// scale), an entry being placed stays in registers until its slot is
/// found. The pop order is the keys' order, which is total: any correct
/// heap pops the same sequence.
#[derive(Default)]
struct Heap(Vec<Entry>);

impl Heap {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    #[inline(always)]
    fn peek(&self) -> Option<&Entry> {
        self.0.first()
    }
    /// The root's children, one of which is the second entry.
    fn children_of_root(&self) -> &[Entry] {
        self.0.get(1..3).or(self.0.get(1..2)).unwrap_or(&[])
    }
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        let mut n = self.0.len();
        self.0.push(e);
        let v = &mut self.0[..];
        while n > 0 {
            let parent = (n - 1) / 2;
            if v[parent].key <= e.key {
                break;
            }
            v[n] = v[parent];
            n = parent;
        }
        v[n] = e;
    }
    /// Replaces the root by `e` and restores the order.
    #[inline(always)]
    fn replace_top(&mut self, e: Entry) {
        let v = &mut self.0[..];
        let len = v.len();
        let mut n = 0;
        loop {
            let l = 2 * n + 1;
            if l + 1 >= len {
                // At most one child, at the bottom.
                if l < len && v[l].key < e.key {
                    v[n] = v[l];
                    n = l;
                }
                break;
            }
            // The smaller child, chosen without a branch: which one it is
            // is a coin toss a branch predictor gets wrong half the time.
            let c = l + usize::from(v[l + 1].key < v[l].key);
            if v[c].key >= e.key {
                break;
            }
            v[n] = v[c];
            n = c;
        }
        v[n] = e;
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        let last = self.0.pop()?;
        if self.0.is_empty() {
            return Some(last);
        }
        let top = self.0[0];
        self.replace_top(last);
        Some(top)
    }
}

/// A FIFO of events whose head (if any) is in the heap.
#[derive(Default)]
struct Lane {
    /// Entries behind the head, in pop order (a lane of entries).
    waiting: VecDeque<Entry>,
    /// The last item of a linked lane (one whose entries are
    /// `Arrive(iface, item)` events chained through the items' [`Link`]s:
    /// every lane of arrivals is linked, every other lane is not).
    tail: u32,
    head_in_heap: bool,
    /// Key of the last entry scheduled, to check the time-order promise.
    last_key: u128,
}

#[derive(Default)]
pub struct EventQueue {
    /// The head of every non-empty lane.
    heads: Heap,
    /// The events scheduled outside lanes.
    others: Heap,
    lanes: Vec<Lane>,
    seq: u64,
    popped: u64,
    /// Events waiting in lanes (not in a heap).
    in_lanes: usize,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    pub fn schedule(&mut self, time: Time, event: Event) {
        self.seq += 1;
        self.others.push(Entry::new(time, self.seq, event, NO_LANE));
    }

    /// Schedules `event` in FIFO `lane`. The caller promises that the events
    /// of one lane are scheduled in non-decreasing time order; they then run
    /// exactly as if scheduled with `schedule`.
    #[inline(always)]
    pub fn schedule_in_lane(&mut self, lane: u32, time: Time, event: Event) {
        self.seq += 1;
        self.schedule_in_lane_as(lane, time, self.seq, event)
    }

    /// Takes `n` sequence numbers now, for events to be scheduled later as
    /// if scheduled now ([`EventQueue::schedule_reserved`]); returns the
    /// first. For the arrivals of web transfers, made one at a time as the
    /// run goes but ordered among the events at their instant as when they
    /// were all scheduled at set-up.
    pub fn reserve(&mut self, n: u64) -> u64 {
        let first = self.seq + 1;
        self.seq += n;
        first
    }

    /// Schedules `event` in FIFO `lane` with sequence number `seq`, one
    /// [`EventQueue::reserve`] handed out (each used once), under the lane's
    /// time-order promise (key order: time, then `seq`).
    pub fn schedule_reserved(&mut self, lane: u32, time: Time, seq: u64, event: Event) {
        assert!(seq <= self.seq, "sequence number {seq} was not reserved");
        self.schedule_in_lane_as(lane, time, seq, event)
    }

    #[inline(always)]
    fn schedule_in_lane_as(&mut self, lane: u32, time: Time, seq: u64, event: Event) {
        assert!(!matches!(event, Event::Arrive(..)), "arrivals go to linked lanes (schedule_arrival)");
        let e = Entry::new(time, seq, event, lane);
        if lane as usize >= self.lanes.len() {
            self.lanes.resize_with(lane as usize + 1, Lane::default);
        }
        let l = &mut self.lanes[lane as usize];
        assert!(e.key > l.last_key, "lane {lane}: events scheduled out of time order");
        l.last_key = e.key;
        if l.head_in_heap {
            l.waiting.push_back(e);
            self.in_lanes += 1;
        } else {
            l.head_in_heap = true;
            self.heads.push(e);
        }
    }

    /// Schedules `Event::Arrive(iface, item)` in linked lane `shared` when
    /// that keeps the lane in time order, else in `iface`'s own linked
    /// lane (whose order its caller promises). Many links of one kind (the
    /// access links into a router, with one delay and one rate) carry
    /// arrivals that are mostly in order among themselves: in one lane,
    /// they put one head in the heap where each link's lane put its own
    /// (at 100x scale, ~110 heads, each pop sifting through 7 levels).
    /// The pop order is the same: every lane stays sorted by its keys. A
    /// link that shares no lane passes its own number as `shared`.
    #[inline(always)]
    pub fn schedule_arrival(&mut self, shared: u32, iface: u32, time: Time, item: u32, links: &mut impl LinkStore) {
        let lane = match self.lanes.get(shared as usize) {
            Some(l) if l.last_key >= Entry::key(time, self.seq + 1) => iface,
            _ => shared,
        };
        self.schedule_linked(lane, iface, time, item, links)
    }

    /// Schedules `Event::Arrive(iface, item)` in linked lane `lane`, with
    /// the time-order promise of [`EventQueue::schedule_in_lane`]; `links`
    /// holds the items' [`Link`]s, and an item stays there (its link
    /// untouched by others) until its event pops. A lane is linked or not
    /// for good.
    #[inline(always)]
    fn schedule_linked(&mut self, lane: u32, iface: u32, time: Time, item: u32, links: &mut impl LinkStore) {
        self.seq += 1;
        let e = Entry::new(time, self.seq, Event::Arrive(iface, item), lane);
        if lane as usize >= self.lanes.len() {
            self.lanes.resize_with(lane as usize + 1, Lane::default);
        }
        let l = &mut self.lanes[lane as usize];
        assert!(e.key > l.last_key, "lane {lane}: events scheduled out of time order");
        debug_assert!(l.waiting.is_empty(), "lane {lane} holds entries of another kind");
        l.last_key = e.key;
        // The item's successor, if any, is linked when it is scheduled.
        links.link_mut(item).next = NO_NEXT;
        if l.head_in_heap {
            *links.link_mut(l.tail) = Link { next_time: time.0, next_seq: self.seq, next: item, next_iface: iface };
            self.in_lanes += 1;
        } else {
            l.head_in_heap = true;
            self.heads.push(e);
        }
        l.tail = item;
    }

    /// Schedules `events`, in that order (each gets its sequence number as
    /// if scheduled by [`EventQueue::schedule`] one after the other), into
    /// `lane`, which must be unused: sorted there by `(time, sequence)`, they
    /// pop exactly when they would have from the heap, but the heap does not
    /// carry them. For the application starts, all known at set-up: a web
    /// run schedules tens of thousands, which made every heap operation of
    /// the run a dozen levels deeper.
    pub fn schedule_all_in_lane(&mut self, lane: u32, events: impl IntoIterator<Item = (Time, Event)>) {
        let mut entries: Vec<Entry> = events
            .into_iter()
            .map(|(t, e)| {
                self.seq += 1;
                Entry::new(t, self.seq, e, lane)
            })
            .collect();
        entries.sort_unstable_by_key(|e| e.key);
        if lane as usize >= self.lanes.len() {
            self.lanes.resize_with(lane as usize + 1, Lane::default);
        }
        let l = &self.lanes[lane as usize];
        assert!(!l.head_in_heap && l.waiting.is_empty(), "lane {lane} is in use");
        let mut it = entries.into_iter();
        if let Some(head) = it.next() {
            let l = &mut self.lanes[lane as usize];
            l.waiting.extend(it);
            l.last_key = l.waiting.back().unwrap_or(&head).key;
            l.head_in_heap = true;
            self.in_lanes += l.waiting.len();
            self.heads.push(head);
        }
    }

    /// The next event; `links` holds the items of the linked lanes.
    #[inline(always)]
    pub fn pop_with(&mut self, links: &impl LinkStore) -> Option<(Time, Event)> {
        let lane_first = match (self.heads.peek(), self.others.peek()) {
            (Some(h), o) => o.is_none_or(|o| h.key < o.key),
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let e = if lane_first {
            let e = *self.heads.peek().expect("peeked");
            // A lane of arrivals is linked: its next entry is known from the
            // item being popped, without the lane's record.
            let next = if let Event::Arrive(_, item) = e.event {
                let k = links.link(item);
                (k.next != NO_NEXT)
                    .then(|| Entry::new(Time(k.next_time), k.next_seq, Event::Arrive(k.next_iface, k.next), e.lane))
            } else {
                self.lanes[e.lane as usize].waiting.pop_front()
            };
            match next {
                // The lane's next event replaces its head in place: one sift
                // down instead of a pop and a push.
                Some(next) => {
                    self.in_lanes -= 1;
                    self.heads.replace_top(next);
                }
                None => {
                    self.lanes[e.lane as usize].head_in_heap = false;
                    self.heads.pop();
                }
            }
            e
        } else {
            self.others.pop().expect("peeked")
        };
        self.popped += 1;
        Some((e.time(), e.event))
    }

    /// The event that pops next, after asking the memory system for the
    /// entry that will replace it in its lane (a lane's entries were
    /// written one propagation delay ago and are usually out of cache by
    /// now). Reading it changes nothing: results are the same without it.
    #[inline]
    pub fn next_prefetched(&self) -> Option<Event> {
        let (h, o) = (self.heads.peek(), self.others.peek());
        let e = match (h, o) {
            (Some(h), Some(o)) if o.key < h.key => o,
            (Some(h), _) => {
                // (The next entry of a lane of arrivals is in the packet,
                // which the caller prefetches.)
                if !matches!(h.event, Event::Arrive(..)) {
                    if let Some(next) = self.lanes[h.lane as usize].waiting.front() {
                        prefetch(next);
                    }
                }
                h
            }
            (None, o) => o?,
        };
        Some(e.event)
    }

    /// The lane heads that may pop after the next event: the heap root's
    /// two children (the other candidates, the next event's successor in
    /// its lane and the events outside lanes, are known or few). For
    /// prefetching two events ahead; it changes nothing.
    #[inline]
    pub fn after_next(&self) -> impl Iterator<Item = Event> + '_ {
        self.heads.children_of_root().iter().map(|e| e.event)
    }

    pub fn peek_time(&self) -> Option<Time> {
        match (self.heads.peek(), self.others.peek()) {
            (Some(h), Some(o)) => Some(if h.key < o.key { h } else { o }),
            (h, o) => h.or(o),
        }
        .map(|e| e.time())
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heads.len() + self.others.len() + self.in_lanes
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty() && self.others.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items' links, as the simulator's packet slots hold them.
    struct Items(Vec<Link>);

    impl LinkStore for Items {
        fn link(&self, item: u32) -> &Link {
            &self.0[item as usize]
        }
        fn link_mut(&mut self, item: u32) -> &mut Link {
            &mut self.0[item as usize]
        }
    }

    #[test]
    fn events_at_the_same_time_keep_their_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(Time(5), Event::Start(1));
        q.schedule(Time(3), Event::Start(2));
        q.schedule(Time(5), Event::Start(3));
        q.schedule(Time(3), Event::Start(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_with(&Items(vec![]))).collect();
        assert_eq!(
            order,
            vec![
                (Time(3), Event::Start(2)),
                (Time(3), Event::Start(4)),
                (Time(5), Event::Start(1)),
                (Time(5), Event::Start(3))
            ]
        );
    }

    /// The simplest correct queue: a list, popped at its `(time, seq)`
    /// minimum.
    #[derive(Default)]
    struct Model {
        items: Vec<(Time, u64, Event)>,
        seq: u64,
    }

    impl Model {
        fn schedule(&mut self, t: Time, e: Event) {
            self.seq += 1;
            self.items.push((t, self.seq, e));
        }
        fn pop(&mut self) -> Option<(Time, Event)> {
            let i = (0..self.items.len()).min_by_key(|&i| (self.items[i].0, self.items[i].1))?;
            let (t, _, e) = self.items.swap_remove(i);
            Some((t, e))
        }
    }

    #[test]
    fn events_scheduled_all_at_once_in_a_lane_pop_as_if_scheduled_one_by_one() {
        let mut q = EventQueue::new();
        let mut m = Model::default();
        let starts: Vec<(Time, Event)> =
            (0..200u32).map(|k| (Time(((k as u64) * 7919) % 97), Event::Start(k))).collect();
        q.schedule(Time(50), Event::Sample);
        m.schedule(Time(50), Event::Sample);
        q.schedule_all_in_lane(4, starts.iter().copied());
        for &(t, e) in &starts {
            m.schedule(t, e);
        }
        q.schedule(Time(50), Event::UdpTick(1));
        m.schedule(Time(50), Event::UdpTick(1));
        let mut items = Items(vec![Link::default(); 10]);
        q.schedule_arrival(0, 0, Time(3), 9, &mut items);
        m.schedule(Time(3), Event::Arrive(0, 9));
        assert_eq!(q.len(), m.items.len());
        while let Some(e) = m.pop() {
            assert_eq!(q.pop_with(&items), Some(e));
        }
        assert!(q.pop_with(&items).is_none());
    }

    #[test]
    fn events_scheduled_later_with_reserved_numbers_pop_as_if_scheduled_when_reserved() {
        // The web arrivals: numbers taken at set-up, each event scheduled
        // only when the one before it runs, and still ahead of everything
        // at its instant that was scheduled after the reservation.
        let (mut q, mut m) = (EventQueue::new(), Model::default());
        let arrivals = [Time(10), Time(10), Time(20), Time(35), Time(35)];
        q.schedule(Time(10), Event::Start(0));
        m.schedule(Time(10), Event::Start(0));
        let first = q.reserve(arrivals.len() as u64);
        for &t in &arrivals {
            m.schedule(t, Event::Web(0));
        }
        for t in [10, 20, 35, 35] {
            q.schedule(Time(t), Event::Sample);
            m.schedule(Time(t), Event::Sample);
        }
        q.schedule_reserved(7, arrivals[0], first, Event::Web(0));
        let mut next = 1;
        let items = Items(vec![]);
        while let Some((t, e)) = q.pop_with(&items) {
            assert_eq!(Some((t, e)), m.pop());
            if e == Event::Web(0) && next < arrivals.len() {
                q.schedule_reserved(7, arrivals[next], first + next as u64, Event::Web(0));
                next += 1;
            }
        }
        assert_eq!((next, m.pop()), (arrivals.len(), None));
    }

    #[test]
    fn lanes_and_far_events_pop_in_time_then_scheduling_order() {
        // Lanes 0 and 1 carry arrivals (linked through the items), lane 2
        // UDP ticks (a lane of entries); the rest go to the heap.
        let mut q = EventQueue::new();
        let mut m = Model::default();
        let mut items = Items(vec![Link::default(); 5000]);
        let mut x = 12345u64;
        let mut lane_t = [0u64; 3];
        for k in 0..5000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let kind = (x >> 33) % 6;
            let step = (x >> 40) % 3;
            // Ties are frequent: times are small integers.
            let later = Time(lane_t[0] + (x >> 20) % 50);
            let (t, e) = match kind {
                0..=2 => {
                    lane_t[kind as usize] += step;
                    let t = Time(lane_t[kind as usize]);
                    if kind < 2 {
                        q.schedule_arrival(kind as u32, kind as u32, t, k, &mut items);
                        m.schedule(t, Event::Arrive(kind as u32, k));
                    } else {
                        q.schedule_in_lane(2, t, Event::UdpTick(k));
                        m.schedule(t, Event::UdpTick(k));
                    }
                    continue;
                }
                3 => (later, Event::Timer(k)),
                4 => (later, Event::Start(k)),
                _ => (later, Event::AppTick(k)),
            };
            q.schedule(t, e);
            m.schedule(t, e);
            if k % 3 == 0 {
                assert_eq!(q.pop_with(&items), m.pop());
            }
            assert_eq!(q.len(), m.items.len());
        }
        while let Some(e) = m.pop() {
            assert_eq!(q.pop_with(&items), Some(e));
        }
        assert!(q.pop_with(&items).is_none());
        assert!(q.is_empty());
    }

    /// Schedules `n` events through `schedule` (given the event's number, a
    /// pseudo-random word and the time of the last pop), pops one from the
    /// queue and from the model after every second, then empties both: the
    /// queue must pop exactly what the model does.
    fn against_the_model(n: u32, mut schedule: impl FnMut(u32, u64, u64, &mut EventQueue, &mut Model, &mut Items)) {
        let (mut q, mut m) = (EventQueue::new(), Model::default());
        let mut items = Items(vec![Link::default(); n as usize]);
        let (mut x, mut now) = (99u64, 0u64);
        for k in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            schedule(k, x, now, &mut q, &mut m, &mut items);
            if k % 2 == 1 {
                let e = m.pop();
                assert_eq!(q.pop_with(&items), e);
                now = e.map_or(now, |(t, _)| t.0);
            }
        }
        while let Some(e) = m.pop() {
            assert_eq!(q.pop_with(&items), Some(e));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn many_lanes_and_far_events_pop_in_time_then_scheduling_order() {
        // 500 linked lanes, as a dumbbell of 125 pairs has, most holding
        // one or two packets: the lane-head heap is deep, and lanes empty
        // and refill all the time.
        let mut lane_t = vec![0u64; 500];
        against_the_model(40_000, |k, x, now, q, m, items| {
            let lane = ((x >> 33) % 500) as usize;
            if (x >> 20) % 7 == 0 {
                let t = Time(now + (x >> 40) % 1000);
                q.schedule(t, Event::Timer(k));
                m.schedule(t, Event::Timer(k));
            } else {
                // Not before the lane's last, nor before now.
                lane_t[lane] = lane_t[lane].max(now) + (x >> 45) % 300;
                let t = Time(lane_t[lane]);
                q.schedule_arrival(lane as u32, lane as u32, t, k, items);
                m.schedule(t, Event::Arrive(lane as u32, k));
            }
        });
    }

    #[test]
    fn arrivals_sharing_a_lane_pop_in_time_then_scheduling_order_with_their_own_interface() {
        // 300 interfaces in three shared lanes (100 each), each interface's
        // arrivals in time order but the interfaces' interleaved with a
        // random lead: part of them go to the shared lane, the late-comers
        // to their own.
        let mut iface_t = vec![0u64; 300];
        let mut own = 0;
        against_the_model(30_000, |k, x, now, q, m, items| {
            let iface = ((x >> 33) % 300) as u32;
            iface_t[iface as usize] = iface_t[iface as usize].max(now + 1000 + (x >> 50) % 64);
            let t = Time(iface_t[iface as usize]);
            let shared = 1000 + iface / 100;
            let before = q.lanes.get(shared as usize).map_or(0, |l| l.last_key);
            q.schedule_arrival(shared, iface, t, k, items);
            own += usize::from(q.lanes[shared as usize].last_key == before);
            m.schedule(t, Event::Arrive(iface, k));
        });
        assert!(own > 1000 && own < 29_000, "both the shared and the own lanes were used ({own} to their own)");
    }
}
