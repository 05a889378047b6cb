//! NGWA's router rule (seed 001 section 2, Linux implementation section
//! 4.1; SPEC.md 2.6): every router writes the free space of its egress queue
//! into an IPv4 option of the TCP packets it forwards, unless the packet
//! already carries a smaller value, so the packet reaches the receiver
//! carrying the path minimum.
//!
//! The rule runs when a packet leaves the queue, as the paper's Linux qdisc
//! does ("the NGWA is called by the function dequeue").
//!
//! [`NgwaEdge`] is the receiver rule run by the receiver's edge gateway for
//! a real receiver that cannot be patched (SPEC.md 2.6, last point): it
//! reads the value the data carries and lowers the window of the ACKs going
//! back, as a window controller inside [`crate::WindowGateway`].

use std::collections::HashMap;

use crate::ngwa_receiver::{NgwaConfig, NgwaReceiver};
use netreturn_base::{FlowKey, InBand, Time};

use crate::controller::{FlowInfo, WindowController, WindowRule};
use crate::flows::{canonical, FxBuildHasher};
#[cfg(test)]
use crate::stage::TcpMeta;
use crate::stage::{ForwardPacket, ForwardStage, QueueState};
use crate::view::TcpView;

/// Settings of one NGWA router.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NgwaRouterConfig {
    /// FD: divide the free bytes among the active connections (seed 001
    /// eq. 3); off, the whole free space is written.
    pub flow_division: bool,
    /// A connection silent this long is forgotten (the paper removes
    /// connections on FIN / RST only; an idle timeout, as RWM's, keeps a
    /// lost FIN from counting a connection for ever).
    pub idle_timeout: Time,
    /// Bound on the connection list; a full list forgets its least
    /// recently active connection.
    pub max_flows: usize,
}

impl Default for NgwaRouterConfig {
    fn default() -> NgwaRouterConfig {
        NgwaRouterConfig { flow_division: false, idle_timeout: Time::from_secs(300), max_flows: 65_536 }
    }
}

/// What a router did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NgwaStats {
    /// TCP packets that left without an option and were given one.
    pub inserted: u64,
    /// Packets whose carried value was lowered here.
    pub lowered: u64,
    /// Packets whose carried value was already at most ours.
    pub kept: u64,
}

/// One NGWA router on one egress interface.
#[derive(Clone, Debug)]
pub struct NgwaRouter {
    cfg: NgwaRouterConfig,
    /// Active connections (`nf`) with their last activity.
    flows: Conns,
    next_sweep: Time,
    pub stats: NgwaStats,
}

/// FD's connection list: by canonical key, or, for a caller that numbers
/// its connections compactly ([`TcpConn::index`], the simulator's flow
/// index), in a table by that number, which answers without hashing. Both
/// hold the same set the key map alone would: `index` is one per canonical
/// key.
#[derive(Clone, Debug, Default)]
struct Conns {
    by_key: HashMap<FlowKey, Time, FxBuildHasher>,
    by_index: Vec<Slot>,
    /// Live slots of `by_index`.
    indexed: usize,
}

/// A connection of [`Conns::by_index`]: its canonical key (the order of
/// eviction) and last activity, while `live`.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: FlowKey,
    last: Time,
    live: bool,
}

impl Conns {
    fn len(&self) -> usize {
        self.by_key.len() + self.indexed
    }

    /// Forgets the least recently active connection (ties: the smaller
    /// key).
    #[cold]
    #[inline(never)]
    fn evict_oldest(&mut self) {
        let mapped = self.by_key.iter().map(|(&k, &t)| (t, k, None));
        let slotted = self.by_index.iter().enumerate().filter(|(_, s)| s.live).map(|(i, s)| (s.last, s.key, Some(i)));
        match mapped.chain(slotted).min_by_key(|&(t, k, _)| (t, k)) {
            Some((_, k, None)) => {
                self.by_key.remove(&k);
            }
            Some((_, _, Some(i))) => {
                self.by_index[i].live = false;
                self.indexed -= 1;
            }
            None => {}
        }
    }

    /// Forgets the connections silent for `idle` or longer.
    #[cold]
    #[inline(never)]
    fn sweep(&mut self, now: Time, idle: Time) {
        self.by_key.retain(|_, t| now.saturating_sub(*t) < idle);
        for s in self.by_index.iter_mut().filter(|s| s.live) {
            if now.saturating_sub(s.last) >= idle {
                s.live = false;
                self.indexed -= 1;
            }
        }
    }

    /// Registers (or refreshes) the connection of a SYN.
    #[cold]
    #[inline(never)]
    fn open(&mut self, now: Time, key: FlowKey, index: Option<u32>, max: usize) {
        let key = canonical(key);
        match index {
            None => {
                if !self.by_key.contains_key(&key) && self.len() >= max {
                    self.evict_oldest();
                }
                self.by_key.insert(key, now);
            }
            Some(i) => {
                let i = i as usize;
                if i >= self.by_index.len() {
                    self.by_index.resize(i + 1, Slot { key, last: Time::ZERO, live: false });
                }
                if !self.by_index[i].live {
                    if self.len() >= max {
                        self.evict_oldest();
                    }
                    self.indexed += 1;
                }
                self.by_index[i] = Slot { key, last: now, live: true };
            }
        }
    }

    /// Ends the connection of a FIN or RST.
    fn close(&mut self, key: FlowKey, index: Option<u32>) {
        match index {
            None => {
                self.by_key.remove(&canonical(key));
            }
            Some(i) => {
                if let Some(s) = self.by_index.get_mut(i as usize).filter(|s| s.live) {
                    s.live = false;
                    self.indexed -= 1;
                }
            }
        }
    }

    /// Another packet of a connection: its last activity, if registered.
    #[inline(always)]
    fn touch(&mut self, now: Time, key: impl FnOnce() -> FlowKey, index: Option<u32>) {
        match index {
            None => {
                if let Some(t) = self.by_key.get_mut(&canonical(key())) {
                    *t = now;
                }
            }
            Some(i) => {
                if let Some(s) = self.by_index.get_mut(i as usize) {
                    // A slot not live keeps a stale time, never read.
                    s.last = now;
                }
            }
        }
    }
}

/// The TCP facts of one packet the router's rule reads, for
/// [`NgwaRouter::on_tcp_departure`]: the key is asked for only when the
/// rule needs it (FD, and with `index` only on SYN, FIN and RST).
#[derive(Clone, Copy, Debug)]
pub struct TcpConn<K: FnOnce() -> FlowKey> {
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    /// The packet's key (either direction).
    pub key: K,
    /// A compact number of the packet's connection, the same in both
    /// directions and one per connection, where the caller has one (the
    /// simulator's flow index; the real gateway has none). A router is
    /// given an index on all its packets or on none.
    pub index: Option<u32>,
}

/// `0.98 * br / nf` of eq. 3, as `f64` arithmetic on the converted values
/// computes it, with 32-bit conversions where the values fit (a couple of
/// instructions each way on x86-64, against a dozen for `u64`): the same
/// values, since both conversions of a number below 2^32 are exact and the
/// quotient is below `br`.
#[inline(always)]
fn divide(br: u64, nf: usize) -> u64 {
    let nf = nf.max(1);
    match (u32::try_from(br), u32::try_from(nf)) {
        (Ok(b), Ok(n)) => {
            // Out of LLVM's sight, which otherwise widens the conversions
            // back to the 64-bit ones, knowing the values fit.
            let (b, n) = std::hint::black_box((b, n));
            (0.98 * b as f64 / n as f64) as u32 as u64
        }
        _ => (0.98 * br as f64 / nf as f64) as u64,
    }
}

impl NgwaRouter {
    pub fn new(cfg: NgwaRouterConfig) -> NgwaRouter {
        NgwaRouter { cfg, flows: Conns::default(), next_sweep: Time::ZERO, stats: NgwaStats::default() }
    }

    pub fn config(&self) -> NgwaRouterConfig {
        self.cfg
    }

    /// `nf`: connections registered by a SYN and not yet ended.
    pub fn active_flows(&self) -> usize {
        self.flows.len()
    }

    /// Whether the router divides by flows (FD).
    pub fn flow_division(&self) -> bool {
        self.cfg.flow_division
    }

    /// `W_node` for the queue as it is: `0.98 * Br / nf` with FD (seed 001
    /// eq. 3; the 2 % leave room for ACKs), else `Br`.
    pub fn w_node(&self, queue: &QueueState) -> u32 {
        self.w_free(queue.free_bytes())
    }

    #[inline(always)]
    fn w_free(&self, br: u64) -> u32 {
        let w = if self.cfg.flow_division { divide(br, self.flows.len()) } else { br };
        w.min(u32::MAX as u64) as u32
    }

    /// Seed 001 section 4.1 "Division by Flows": a SYN registers a
    /// connection, FIN or RST removes it; other packets refresh it.
    #[inline(always)]
    fn track<K: FnOnce() -> FlowKey>(&mut self, now: Time, c: TcpConn<K>) {
        if !self.cfg.flow_division {
            return;
        }
        if c.fin || c.rst {
            self.flows.close((c.key)(), c.index);
        } else if c.syn {
            self.flows.open(now, (c.key)(), c.index, self.cfg.max_flows);
        } else {
            self.flows.touch(now, c.key, c.index);
        }
        if now >= self.next_sweep {
            self.sweep(now);
        }
    }

    #[cold]
    #[inline(never)]
    fn sweep(&mut self, now: Time) {
        let idle = self.cfg.idle_timeout;
        self.flows.sweep(now, idle);
        self.next_sweep = now + Time(idle.0 / 64).max(Time::from_millis(1));
    }

    /// The rule for one TCP packet leaving the queue at `at` with
    /// `free_bytes` free (`Br`): what [`ForwardStage::on_dequeue`] does,
    /// with the packet's facts passed apart so a caller builds only what
    /// the rule reads. `inband` is `None` for a packet that cannot carry
    /// the option (its connection still counts).
    #[inline(always)]
    pub fn on_tcp_departure<K: FnOnce() -> FlowKey>(
        &mut self,
        at: Time,
        conn: TcpConn<K>,
        free_bytes: u64,
        inband: Option<&mut InBand>,
    ) -> Marking {
        self.track(at, conn);
        let w = self.w_free(free_bytes);
        let Some(ib) = inband else { return Marking::Untouched };
        // Seed 001 section 2: if W_packet > W_node then W_packet = W_node;
        // a packet without the option gets one.
        match *ib {
            InBand::None => {
                *ib = InBand::Ngwa(w);
                self.stats.inserted += 1;
                Marking::Inserted
            }
            InBand::Ngwa(v) if v > w => {
                *ib = InBand::Ngwa(w);
                self.stats.lowered += 1;
                Marking::Lowered
            }
            InBand::Ngwa(_) => {
                self.stats.kept += 1;
                Marking::Kept
            }
            // Another scheme's fields: not ours to touch.
            InBand::Xcp(_) => Marking::Untouched,
        }
    }
}

/// What [`NgwaRouter::on_tcp_departure`] did to a packet's in-band field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marking {
    /// The option inserted: the packet is longer by its bytes
    /// ([`InBand::wire_len`]).
    Inserted,
    /// The value carried lowered to ours.
    Lowered,
    /// The value carried already at most ours.
    Kept,
    /// Nothing written (no room for the option, or another scheme's field).
    Untouched,
}

impl ForwardStage for NgwaRouter {
    fn acts_on_enqueue(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![("ngwa_inserted", s.inserted), ("ngwa_lowered", s.lowered), ("ngwa_kept", s.kept)]
    }

    fn on_dequeue(&mut self, at: Time, pkt: &mut ForwardPacket<'_>, queue: &QueueState) {
        let Some(m) = pkt.tcp else { return };
        let conn = TcpConn { syn: m.syn, fin: m.fin, rst: m.rst, key: || m.key, index: None };
        self.on_tcp_departure(at, conn, queue.free_bytes(), pkt.inband.as_deref_mut());
    }
}

/// NGWA's receiver rule at the receiver's edge gateway: per flow, the
/// `Wngwa` the data arrived with (smoothed with SE), and the window of the
/// flow's ACKs lowered to `Wa = min(Wb, Wmax, Wngwa)` (seed 001 eqs. 2 and
/// 4; the same [`NgwaReceiver`] the simulator's patched receivers run).
/// `Wb` is the window the real receiver wrote; the gateway around it keeps
/// the common rules (never raise, window scale, one-MSS floor, unknown
/// flows left alone).
///
/// Like the simulated receiver (`Connection::window_field`), the edge
/// never moves the right edge it let through to the left (RFC 9293
/// section 3.8.6.2.2; SPEC.md 3): it offers at least `edge - ACK`, so a
/// falling `Wngwa` shrinks the window as data arrives, at most one window
/// per round trip, and never takes back space already offered.
#[derive(Clone, Debug)]
pub struct NgwaEdge {
    cfg: NgwaConfig,
    /// By data-direction key; an entry lives as long as the gateway tracks
    /// the flow (removed by `on_flow_end`, so bounded by its flow table).
    flows: HashMap<FlowKey, EdgeFlow, FxBuildHasher>,
}

/// What the edge remembers of one flow.
#[derive(Clone, Copy, Debug, Default)]
struct EdgeFlow {
    rx: NgwaReceiver,
    /// The right edge (ACK + window) of the last ACK let through, in
    /// sequence space.
    edge: Option<u32>,
}

impl NgwaEdge {
    pub fn new(cfg: NgwaConfig) -> NgwaEdge {
        NgwaEdge { cfg, flows: HashMap::default() }
    }

    /// Flows with a `Wngwa` recorded.
    pub fn flows_with_value(&self) -> usize {
        self.flows.len()
    }

    /// The `Wngwa` term of flow `key` (data direction), if a value arrived.
    pub fn wngwa(&self, key: &FlowKey) -> Option<u64> {
        self.flows.get(key).and_then(|f| f.rx.window())
    }
}

impl WindowController for NgwaEdge {
    const READS_INBAND: bool = true;
    const KEEPS_RIGHT_EDGE: bool = true;

    /// Seed 001 section 4.2 "Incoming TCP": the value a data segment
    /// carries is stored for its connection. Only segments with payload
    /// count, as in the simulator's receiver (`crates/tcp/src/ngwa.rs`):
    /// a pure ACK in this direction belongs to the reverse transfer.
    fn on_inband(&mut self, _now: Time, seg: &TcpView, ib: &InBand) {
        if let (InBand::Ngwa(v), true) = (*ib, seg.payload_len > 0) {
            self.flows.entry(seg.key).or_default().rx.on_value(&self.cfg, v);
        }
    }

    fn on_flow_end(&mut self, _now: Time, flow: &FlowInfo) {
        self.flows.remove(&flow.key);
    }

    /// Eq. 2 with `Wb` = the window the ACK carries, kept up to the right
    /// edge already offered; a flow whose data carried no option (no NGWA
    /// router on its path) is left alone.
    fn window(&mut self, _now: Time, flow: &FlowInfo) -> Option<u64> {
        let floor = self.floor(flow);
        let f = self.flows.get_mut(&flow.key)?;
        f.rx.window()?;
        let wa = f.rx.advertise(&self.cfg, flow.wr, floor);
        // What is left of the window offered before: `edge - ACK`, if the
        // edge is ahead (sequence arithmetic, RFC 9293 section 3.4).
        let left = f.edge.map_or(0, |e| e.wrapping_sub(flow.ack) as i32).max(0) as u64;
        // The gateway writes min(Wr, this): the receiver's own window may
        // still shrink the edge (its choice, not ours).
        let w = wa.max(left).min(flow.wr);
        // The window let through is at least `w` (the gateway rounds the
        // field up to the scale unit), so this edge is never ahead of it.
        f.edge = Some(flow.ack.wrapping_add(w as u32));
        Some(w)
    }

    /// For a kernel datapath: `min(Wmax, Wngwa)` (eq. 2 without `Wb`, which
    /// each ACK brings), floored; the datapath applies `min(Wr, .)` and
    /// keeps the right edge ([`WindowController::KEEPS_RIGHT_EDGE`]), as
    /// [`NgwaEdge::window`] does per ACK.
    fn rule(&mut self, _now: Time, flow: &FlowInfo) -> Option<WindowRule> {
        let floor = self.floor(flow);
        let f = self.flows.get(&flow.key)?;
        f.rx.window()?;
        Some(WindowRule::Bytes(f.rx.advertise(&self.cfg, u64::MAX, floor)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::Rate;

    fn q(backlog: u64) -> QueueState {
        QueueState { backlog_bytes: backlog, capacity_bytes: 97_000, rate: Rate::mbps(10) }
    }

    fn meta(sport: u16, syn: bool, fin: bool) -> TcpMeta {
        TcpMeta {
            key: FlowKey { src: 1, dst: 2, sport, dport: 80, proto: FlowKey::TCP },
            syn,
            fin,
            rst: false,
            payload_len: 1000,
        }
    }

    fn forward(r: &mut NgwaRouter, now: Time, m: TcpMeta, ib: &mut InBand, queue: &QueueState) {
        let mut p = ForwardPacket { tcp: Some(m), size: 1040, inband: Some(ib) };
        r.on_dequeue(now, &mut p, queue);
    }

    #[test]
    fn a_chain_of_routers_leaves_the_path_minimum_in_the_packet() {
        // Three routers with 60, 20 and 45 kB free: the packet arrives
        // carrying 20 kB whatever the order it meets them in.
        let free = [60_000u64, 20_000, 45_000];
        for order in [[0, 1, 2], [2, 1, 0], [1, 0, 2]] {
            let mut routers: Vec<NgwaRouter> = (0..3).map(|_| NgwaRouter::new(NgwaRouterConfig::default())).collect();
            let mut ib = InBand::None;
            for &i in &order {
                forward(&mut routers[i], Time::ZERO, meta(1, false, false), &mut ib, &q(97_000 - free[i]));
            }
            assert_eq!(ib, InBand::Ngwa(20_000), "order {order:?}");
        }
    }

    #[test]
    fn flow_division_shares_98_percent_of_the_free_bytes_among_the_connections_seen() {
        // Seed 001 eq. 3: Wngwa = 0.98 Br / nf.
        let mut r = NgwaRouter::new(NgwaRouterConfig { flow_division: true, ..Default::default() });
        let t = Time::from_millis;
        for sport in 1..=4 {
            let mut ib = InBand::None;
            forward(&mut r, t(sport as u64), meta(sport, true, false), &mut ib, &q(47_000));
        }
        assert_eq!(r.active_flows(), 4);
        let mut ib = InBand::None;
        forward(&mut r, t(10), meta(1, false, false), &mut ib, &q(47_000));
        assert_eq!(ib, InBand::Ngwa(12_250), "0.98 * 50000 / 4");
        // A FIN ends a connection: three share now.
        forward(&mut r, t(11), meta(2, false, true), &mut InBand::None, &q(47_000));
        assert_eq!(r.active_flows(), 3);
        let mut ib = InBand::None;
        forward(&mut r, t(12), meta(1, false, false), &mut ib, &q(47_000));
        assert_eq!(ib, InBand::Ngwa(16_333));
    }

    #[test]
    fn idle_connections_expire_and_the_list_is_bounded() {
        let cfg = NgwaRouterConfig { flow_division: true, idle_timeout: Time::from_secs(10), max_flows: 3 };
        let mut r = NgwaRouter::new(cfg);
        for sport in 1..=5 {
            forward(&mut r, Time::from_secs(sport as u64), meta(sport, true, false), &mut InBand::None, &q(0));
        }
        assert_eq!(r.active_flows(), 3, "bounded");
        forward(&mut r, Time::from_secs(30), meta(9, false, false), &mut InBand::None, &q(0));
        assert_eq!(r.active_flows(), 0, "all silent for more than 10 s");
    }

    #[test]
    fn a_value_already_below_ours_is_kept_and_other_traffic_is_untouched() {
        let mut r = NgwaRouter::new(NgwaRouterConfig::default());
        let mut ib = InBand::Ngwa(5_000);
        forward(&mut r, Time::ZERO, meta(1, false, false), &mut ib, &q(0));
        assert_eq!(ib, InBand::Ngwa(5_000));
        assert_eq!(r.stats.kept, 1);
        let mut udp = ForwardPacket { tcp: None, size: 1028, inband: None };
        r.on_dequeue(Time::ZERO, &mut udp, &q(0));
        assert_eq!(r.stats, NgwaStats { inserted: 0, lowered: 0, kept: 1 });
    }

    #[test]
    fn a_router_given_connection_indices_marks_as_the_one_keyed_by_flow() {
        // The simulator numbers its connections (FD's table by index); the
        // real gateway has only keys (FD's hash map). Same packets, same
        // marks, counts and connection lists, through SYNs, FINs, RSTs,
        // packets of unknown connections, idle expiry and a full list.
        use netreturn_base::Rng;
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            let cfg = NgwaRouterConfig {
                flow_division: true,
                idle_timeout: Time::from_millis(1 + rng.below(400)),
                max_flows: 1 + rng.below(12) as usize,
            };
            let (mut keyed, mut indexed) = (NgwaRouter::new(cfg), NgwaRouter::new(cfg));
            let conns = 1 + rng.below(30) as u16;
            let mut now = Time::ZERO;
            for _ in 0..5_000 {
                now += Time::from_micros(rng.below(2_000));
                let c = rng.below(conns as u64) as u16;
                let (syn, fin, rst) = match rng.below(20) {
                    0..=2 => (true, false, false),
                    3 => (false, true, false),
                    4 => (false, false, true),
                    _ => (false, false, false),
                };
                // Either direction of connection c.
                let fwd = FlowKey { src: 10 + c as u32 % 3, dst: 50, sport: 1000 + c, dport: 80, proto: FlowKey::TCP };
                let key = if rng.bernoulli(0.5) { fwd } else { fwd.reversed() };
                let m = TcpMeta { key, syn, fin, rst, payload_len: 1000 };
                let queue = q(rng.below(97_000));
                let carried = match rng.below(3) {
                    0 => InBand::None,
                    _ => InBand::Ngwa(rng.below(60_000) as u32),
                };
                let (mut a, mut b) = (carried, carried);
                forward(&mut keyed, now, m, &mut a, &queue);
                let conn = TcpConn { syn, fin, rst, key: || key, index: Some(c as u32) };
                let did = indexed.on_tcp_departure(now, conn, queue.free_bytes(), Some(&mut b));
                assert_eq!(a, b, "seed {seed} at {now:?}");
                assert_eq!(did == Marking::Inserted, b.wire_len() > carried.wire_len());
                assert_eq!(keyed.active_flows(), indexed.active_flows(), "seed {seed} at {now:?}");
            }
            assert_eq!(keyed.stats, indexed.stats);
        }
    }

    #[test]
    fn equation_3_through_32_bit_conversions_gives_the_64_bit_values() {
        let reference = |br: u64, nf: usize| (0.98 * br as f64 / nf.max(1) as f64) as u64;
        let mut rng = netreturn_base::Rng::new(7);
        let edges =
            [0, 1, 2, 97_000, (1 << 31) - 1, 1 << 31, u32::MAX as u64 - 1, u32::MAX as u64, 1 << 32, 1 << 53, u64::MAX];
        let nfs = [0, 1, 2, 3, 7, 65_536, u32::MAX as usize, 1 << 32];
        for &br in &edges {
            for &nf in &nfs {
                assert_eq!(divide(br, nf), reference(br, nf), "{br} / {nf}");
            }
        }
        for _ in 0..200_000 {
            let (bits_br, bits_nf) = (1 + rng.below(34), 1 + rng.below(17));
            let br = rng.below(1 << bits_br);
            let nf = rng.below(1 << bits_nf) as usize;
            assert_eq!(divide(br, nf), reference(br, nf), "{br} / {nf}");
        }
    }

    fn info(key: FlowKey, wr: u64) -> FlowInfo {
        FlowInfo { key, rtt: None, mss: 1448, class: 0, wr, ack: 0 }
    }

    /// The ACK of a flow up to `ack` with window `wr`.
    fn ack_at(key: FlowKey, wr: u64, ack: u32) -> FlowInfo {
        FlowInfo { ack, ..info(key, wr) }
    }

    fn seg(key: FlowKey, payload_len: u32) -> TcpView {
        TcpView {
            key,
            flags: netreturn_base::TcpFlags::ACK,
            seq: 0,
            ack: 0,
            window: 0,
            wscale: None,
            mss: None,
            payload_len,
        }
    }

    #[test]
    fn the_edge_applies_equation_2_only_to_flows_whose_data_carried_the_option() {
        let k = meta(1, false, false).key;
        let mut e = NgwaEdge::new(NgwaConfig { wmax: 64_000, smoothing: None, option_bytes: 8 });
        assert_eq!(e.window(Time::ZERO, &info(k, 500_000)), None, "no value: not an NGWA flow, left alone");
        e.on_inband(Time::ZERO, &seg(k, 0), &InBand::Ngwa(1_000));
        assert_eq!(e.window(Time::ZERO, &info(k, 500_000)), None, "a pure ACK carries the reverse path's value");
        e.on_inband(Time::ZERO, &seg(k, 1448), &InBand::Ngwa(30_000));
        assert_eq!(e.window(Time::ZERO, &info(k, 500_000)), Some(30_000));
        e.on_inband(Time::ZERO, &seg(k, 1448), &InBand::Ngwa(90_000));
        assert_eq!(e.window(Time::ZERO, &info(k, 500_000)), Some(64_000), "Wmax");
        e.on_inband(Time::ZERO, &seg(k, 1448), &InBand::Ngwa(10));
        // Past the edge offered (64 000 from ACK 0): nothing is left of it.
        assert_eq!(e.window(Time::ZERO, &ack_at(k, 500_000, 64_000)), Some(1448), "one-MSS floor");
        e.on_flow_end(Time::ZERO, &info(k, 0));
        assert_eq!(e.flows_with_value(), 0, "the flow's state ends with it");
    }

    #[test]
    fn a_falling_wngwa_never_moves_the_right_edge_already_offered_to_the_left() {
        // RFC 9293 3.8.6.2.2, as the simulated receiver: 30 000 offered
        // from ACK 0 (edge 30 000); Wngwa falls to 5 000. At ACK 10 000 the
        // edge still stands (20 000 offered); at ACK 30 000 the new value
        // holds; and the receiver's own smaller window always wins.
        let k = meta(1, false, false).key;
        let mut e = NgwaEdge::new(NgwaConfig { wmax: 64_000, smoothing: None, option_bytes: 8 });
        e.on_inband(Time::ZERO, &seg(k, 1448), &InBand::Ngwa(30_000));
        assert_eq!(e.window(Time::ZERO, &ack_at(k, 500_000, 0)), Some(30_000));
        e.on_inband(Time::ZERO, &seg(k, 1448), &InBand::Ngwa(5_000));
        assert_eq!(e.window(Time::ZERO, &ack_at(k, 500_000, 10_000)), Some(20_000));
        assert_eq!(e.window(Time::ZERO, &ack_at(k, 500_000, 30_000)), Some(5_000));
        assert_eq!(e.window(Time::ZERO, &ack_at(k, 2_000, 31_000)), Some(2_000), "Wb is the receiver's");
        // Across the sequence-number wrap.
        let mut e = NgwaEdge::new(NgwaConfig::default());
        e.on_inband(Time::ZERO, &seg(k, 1448), &InBand::Ngwa(30_000));
        assert_eq!(e.window(Time::ZERO, &ack_at(k, 500_000, u32::MAX - 9_999)), Some(30_000));
        e.on_inband(Time::ZERO, &seg(k, 1448), &InBand::Ngwa(5_000));
        assert_eq!(e.window(Time::ZERO, &ack_at(k, 500_000, 5_000)), Some(15_000));
    }
}
