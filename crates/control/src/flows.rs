//! The gateway's bounded flow table: a hash map from the 5-tuple to a slot
//! in a slab, and two intrusive least-recently-used lists over the slots
//! (half-open and synchronized flows), so that lookup, touch, expiry of the
//! idlest flow and eviction are all O(1) and the per-packet path allocates
//! nothing.
//!
//! Recency is kept to a granularity `g`: a touch moves a flow to the front
//! of its list only if it was put there `g` or more ago, and otherwise only
//! records the time. The lists stay ordered by the time each flow was put at
//! the front, and every flow was seen less than `g` after that time, so the
//! tail is the idlest flow to within `g`, and a check of the tail alone finds
//! every flow idle for `T` no later than `T + g`. With `g` a small fraction
//! of the idle timeout, most packets of a busy flow cost one comparison
//! instead of four list-pointer updates.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use netreturn_base::{FlowKey, Time};

/// The Fx hash of rustc / Firefox: one rotate, xor and multiply per word.
/// Not resistant to chosen-key collisions (HashDoS); the table is bounded by
/// `max_flows`, which bounds the damage to slower lookups.
#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;

/// The key under which both directions of a connection are stored (the
/// smaller of the key and its reverse), and which endpoint of it sent a
/// packet with `key`: 0 for the canonical source, 1 for the other.
///
/// `key <= key.reversed()` in `FlowKey`'s field order exactly when
/// `(src, sport) <= (dst, dport)`, which one comparison of packed words
/// decides.
#[inline]
pub fn canonical_side(key: FlowKey) -> (FlowKey, usize) {
    let near = (key.src as u64) << 16 | key.sport as u64;
    let far = (key.dst as u64) << 16 | key.dport as u64;
    if near <= far {
        (key, 0)
    } else {
        (key.reversed(), 1)
    }
}

/// The canonical key of `key`'s connection (see `canonical_side`).
pub fn canonical(key: FlowKey) -> FlowKey {
    canonical_side(key).0
}

/// Which endpoint of the canonical key sent `key` (see `canonical_side`).
pub fn side_of(key: FlowKey) -> usize {
    canonical_side(key).1
}

/// What the gateway remembers of one connection.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    /// Canonical key.
    pub key: FlowKey,
    /// Window-scale option each side sent in its SYN / SYN-ACK.
    pub wscale: [Option<u8>; 2],
    /// MSS option each side sent.
    pub mss: [Option<u16>; 2],
    /// Side that sent the SYN (the client).
    pub client: u8,
    /// Time of the last SYN of the client.
    pub syn_at: Time,
    /// The SYN-ACK was seen: both window scales are known.
    pub synchronized: bool,
    /// The client's ACK of the SYN-ACK was seen (or the flow was picked up
    /// mid-stream with an assumed scale).
    pub established: bool,
    /// Handshake RTT at the gateway: SYN -> SYN-ACK -> ACK.
    pub rtt: Option<Time>,
    /// FIN seen from each side.
    pub fin: [bool; 2],
    pub last_seen: Time,
    /// Side whose data fills the watched queue, once payload was seen in the
    /// data direction; the controller was told of the flow then.
    pub data_side: Option<u8>,
    /// Traffic class (RWM).
    pub class: u16,
}

impl Flow {
    pub fn new(key: FlowKey, client: u8, now: Time, class: u16) -> Flow {
        Flow {
            key,
            wscale: [None; 2],
            mss: [None; 2],
            client,
            syn_at: now,
            synchronized: false,
            established: false,
            rtt: None,
            fin: [false; 2],
            last_seen: now,
            data_side: None,
            class,
        }
    }

    /// The shift applied to windows sent by `side`. RFC 7323 §2.2: scaling is
    /// in effect only if both sides sent the option; §2.3: a shift above 14
    /// is taken as 14.
    pub fn shift(&self, side: usize) -> u32 {
        match (self.wscale[side], self.wscale[1 - side]) {
            (Some(s), Some(_)) => s.min(14) as u32,
            _ => 0,
        }
    }

    /// The segment size of the connection: the smaller MSS option seen.
    pub fn mss(&self, default: u32) -> u32 {
        match (self.mss[0], self.mss[1]) {
            (Some(a), Some(b)) => a.min(b) as u32,
            (Some(a), None) | (None, Some(a)) => a as u32,
            (None, None) => default,
        }
    }

    /// The key as sent by `side`.
    pub fn key_from(&self, side: usize) -> FlowKey {
        if side == 0 {
            self.key
        } else {
            self.key.reversed()
        }
    }
}

const NIL: u32 = u32::MAX;

/// The two recency lists: half-open connections, and connections whose
/// window scales are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListId {
    HalfOpen = 0,
    Synchronized = 1,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    flow: Flow,
    prev: u32,
    next: u32,
    list: ListId,
    /// When the flow was last put at the front of `list`.
    linked_at: Time,
}

#[derive(Clone, Copy, Debug)]
struct List {
    /// Most recently active.
    head: u32,
    /// Least recently active.
    tail: u32,
}

/// A flow table: map + slab + LRU lists.
#[derive(Clone, Debug)]
pub struct FlowTable {
    map: HashMap<FlowKey, u32, FxBuildHasher>,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    lists: [List; 2],
    len: usize,
    /// `g`: recency granularity (module documentation).
    granularity: Time,
}

impl FlowTable {
    /// A table sized for `expected` flows, keeping recency to `granularity`.
    pub fn new(expected: usize, granularity: Time) -> FlowTable {
        // Reserve up front (bounded, so a huge max_flows does not allocate
        // gigabytes before any flow exists); growth is amortised per new
        // flow, never per packet.
        let reserve = expected.min(1 << 16);
        FlowTable {
            map: HashMap::with_capacity_and_hasher(reserve, FxBuildHasher::default()),
            slots: Vec::with_capacity(reserve),
            free: Vec::new(),
            lists: [List { head: NIL, tail: NIL }; 2],
            len: 0,
            granularity,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn find(&self, canonical_key: &FlowKey) -> Option<u32> {
        self.map.get(canonical_key).copied()
    }

    pub fn get(&self, idx: u32) -> &Flow {
        &self.slots[idx as usize].as_ref().expect("live slot").flow
    }

    pub fn get_mut(&mut self, idx: u32) -> &mut Flow {
        &mut self.slots[idx as usize].as_mut().expect("live slot").flow
    }

    fn slot(&mut self, idx: u32) -> &mut Slot {
        self.slots[idx as usize].as_mut().expect("live slot")
    }

    fn unlink(&mut self, idx: u32) {
        let (prev, next, list) = {
            let s = self.slot(idx);
            (s.prev, s.next, s.list as usize)
        };
        if prev == NIL {
            self.lists[list].head = next;
        } else {
            self.slot(prev).next = next;
        }
        if next == NIL {
            self.lists[list].tail = prev;
        } else {
            self.slot(next).prev = prev;
        }
    }

    fn push_front(&mut self, idx: u32, list: ListId) {
        let head = self.lists[list as usize].head;
        {
            let s = self.slot(idx);
            s.prev = NIL;
            s.next = head;
            s.list = list;
        }
        if head == NIL {
            self.lists[list as usize].tail = idx;
        } else {
            self.slot(head).prev = idx;
        }
        self.lists[list as usize].head = idx;
    }

    /// Marks the flow as the most recently active of `list` (moving it there
    /// if needed).
    pub fn touch(&mut self, idx: u32, now: Time, list: ListId) {
        let granularity = self.granularity;
        let s = self.slot(idx);
        s.flow.last_seen = s.flow.last_seen.max(now);
        if s.list != list || now >= s.linked_at + granularity {
            s.linked_at = now;
            self.unlink(idx);
            self.push_front(idx, list);
        }
    }

    /// Inserts a flow whose key is not in the table. The caller keeps the
    /// table within its bound.
    pub fn insert(&mut self, flow: Flow, list: ListId) -> u32 {
        debug_assert!(!self.map.contains_key(&flow.key));
        let slot = Slot { flow, prev: NIL, next: NIL, list, linked_at: flow.last_seen };
        let idx = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                (self.slots.len() - 1) as u32
            }
        };
        self.map.insert(flow.key, idx);
        self.push_front(idx, list);
        self.len += 1;
        idx
    }

    pub fn remove(&mut self, idx: u32) -> Flow {
        self.unlink(idx);
        let slot = self.slots[idx as usize].take().expect("live slot");
        self.map.remove(&slot.flow.key);
        self.free.push(idx);
        self.len -= 1;
        slot.flow
    }

    /// Every flow with its index, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Flow)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| s.as_ref().map(|s| (i as u32, &s.flow)))
    }

    /// The least recently active flow of `list`.
    pub fn oldest(&self, list: ListId) -> Option<u32> {
        let t = self.lists[list as usize].tail;
        (t != NIL).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> FlowKey {
        FlowKey { src: i, dst: 1_000_000, sport: 1, dport: 2, proto: FlowKey::TCP }
    }

    #[test]
    fn both_directions_of_a_connection_share_one_canonical_key() {
        let k = FlowKey { src: 9, dst: 3, sport: 80, dport: 5000, proto: FlowKey::TCP };
        assert_eq!(canonical(k), canonical(k.reversed()));
        assert_ne!(side_of(k), side_of(k.reversed()));
    }

    #[test]
    fn the_canonical_key_is_the_smaller_of_the_key_and_its_reverse() {
        let mut rng = netreturn_base::Rng::new(7);
        for _ in 0..10_000 {
            // Few distinct values, so that ties on the addresses are common.
            let k = FlowKey {
                src: rng.below(3) as u32,
                dst: rng.below(3) as u32,
                sport: rng.below(3) as u16,
                dport: rng.below(3) as u16,
                proto: FlowKey::TCP,
            };
            assert_eq!(canonical(k), k.min(k.reversed()), "{k:?}");
            assert_eq!(side_of(k), (k != k.min(k.reversed())) as usize, "{k:?}");
        }
    }

    #[test]
    fn the_oldest_flow_is_the_least_recently_touched() {
        let mut t = FlowTable::new(4, Time::ZERO);
        let a = t.insert(Flow::new(key(1), 0, Time(1), 0), ListId::Synchronized);
        let b = t.insert(Flow::new(key(2), 0, Time(2), 0), ListId::Synchronized);
        let c = t.insert(Flow::new(key(3), 0, Time(3), 0), ListId::HalfOpen);
        assert_eq!(t.oldest(ListId::Synchronized), Some(a));
        t.touch(a, Time(4), ListId::Synchronized);
        assert_eq!(t.oldest(ListId::Synchronized), Some(b));
        t.touch(c, Time(5), ListId::Synchronized);
        assert_eq!(t.oldest(ListId::HalfOpen), None);
        t.remove(b);
        assert_eq!(t.oldest(ListId::Synchronized), Some(a));
        assert_eq!(t.len(), 2);
        assert_eq!(t.find(&key(2)), None);
        // The freed slot is reused.
        let d = t.insert(Flow::new(key(4), 0, Time(6), 0), ListId::HalfOpen);
        assert_eq!(d, b);
    }

    #[test]
    fn a_touch_within_the_granularity_keeps_the_order_and_records_the_time() {
        let mut t = FlowTable::new(4, Time(10));
        let a = t.insert(Flow::new(key(1), 0, Time(0), 0), ListId::Synchronized);
        let b = t.insert(Flow::new(key(2), 0, Time(5), 0), ListId::Synchronized);
        t.touch(a, Time(9), ListId::Synchronized);
        assert_eq!(t.oldest(ListId::Synchronized), Some(a));
        assert_eq!(t.get(a).last_seen, Time(9));
        t.touch(a, Time(10), ListId::Synchronized);
        assert_eq!(t.oldest(ListId::Synchronized), Some(b));
        // A change of list always moves the flow.
        let c = t.insert(Flow::new(key(3), 0, Time(11), 0), ListId::HalfOpen);
        t.touch(c, Time(12), ListId::Synchronized);
        assert_eq!(t.oldest(ListId::HalfOpen), None);
    }

    #[test]
    fn a_scale_is_in_effect_only_when_both_sides_offered_one() {
        let mut f = Flow::new(key(1), 0, Time::ZERO, 0);
        f.wscale = [Some(7), None];
        assert_eq!(f.shift(0), 0);
        f.wscale = [Some(7), Some(15)];
        assert_eq!((f.shift(0), f.shift(1)), (7, 14));
    }
}
