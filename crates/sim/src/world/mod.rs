//! The simulated world and its event loop: interfaces with queues, TCP and
//! UDP applications, window-rewriting gateways, and the recorders the
//! metrics are computed from.

use crate::event::{Event, EventQueue, Link, LinkStore};
use crate::topology::{Topology, NO_ROUTE};
use crate::web::WebSource;
use netreturn_base::{FlowKey, InBand, Rate, Rng, Time};
use netreturn_control::gateway::WindowGateway;
use netreturn_control::ngwa::{Marking, NgwaRouter, TcpConn};
use netreturn_control::queue::{DropReason, Fifo};
use netreturn_control::{ForwardPacket, ForwardStage, QueueEvent, QueueState, TcpMeta, TcpView};
use netreturn_tcp::{Connection, Segment, TcpConfig};

mod aqm;
pub use aqm::aqm_flow_parts;
mod forward;
mod record;

pub use netreturn_scenario::resolve::tcp_config;
pub use record::{PacketTotals, Recorder};

/// TCP flows from which the event loop prefetches the next event's packet
/// and lane entry: at 31 flows everything fits in cache and the prefetch
/// only costs instructions; at 3100 flows (the scale benchmark's x100) a
/// packet slot or a lane entry read one propagation delay after it was
/// written is a cache miss (those two loads were ~30 % of the run), and
/// the whole session's changes at that scale cut the run by 17-20 %
/// (same-moment pairs on this VM; docs/validation.md).
const PREFETCH_FLOWS: usize = 256;

/// IPv4 + TCP headers without options, and IPv4 + UDP.
const IP_HEADER: u32 = 20;
/// Events between two checks of the run loop's guard ([`World::checkpoint`]).
pub const CHECK_EVERY: u32 = 1 << 20;
/// Events at one instant that stop a run as stalled: about 16 million, far
/// beyond any real burst (a 100x dumbbell pops ~10^4 events per instant).
pub const STALL_EVENTS: u64 = 1 << 24;
const UDP_HEADER: u32 = 8;

/// A packet in flight. The simulator carries header fields, not bytes.
///
/// Laid out in declaration order on cache lines of its own (`repr(C,
/// align(64))`, 128 bytes): what every hop reads (destination, flow, size,
/// the link to the packet behind it on the wire) fills the first line; the
/// segment an endpoint reads follows (88 bytes from byte 40, so it begins
/// on the first line and ends on the second). A router hop touches one
/// line, and the event loop prefetches the first for the next event
/// ([`World::run`]). Asking for the second as well, where the segment is
/// read, and splitting off what a hop reads into a dense table of its own,
/// both measured, did not pay (docs/validation.md, session 16).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Packet {
    pub dst: u32,
    /// Index into the TCP or UDP flow table.
    pub flow: u32,
    /// 0: from the flow's opener (client) to its peer; 1: the reverse.
    pub dir: u8,
    pub udp: bool,
    /// Bytes on the wire (IP packet).
    pub size: u32,
    /// The packet's place among those on the wire of its current link
    /// (the event queue's linked lane: [`crate::event`]).
    pub link: Link,
    pub seg: Segment,
}

/// A slab of packets; events refer to packets by index.
#[derive(Default)]
struct Pool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: u64,
}

impl Pool {
    /// A free slot, filled in place by `fill` (a packet is written once,
    /// not built and then copied in).
    #[inline]
    fn alloc(&mut self, fill: impl FnOnce(&mut Packet)) -> u32 {
        self.live += 1;
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Packet {
                    dst: 0,
                    flow: 0,
                    dir: 0,
                    udp: false,
                    size: 0,
                    seg: Segment::default(),
                    link: Link::default(),
                });
                (self.slots.len() - 1) as u32
            }
        };
        fill(&mut self.slots[i as usize]);
        i
    }
    fn release(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }
}

impl LinkStore for Pool {
    #[inline(always)]
    fn link(&self, item: u32) -> &Link {
        &self.slots[item as usize].link
    }
    #[inline(always)]
    fn link_mut(&mut self, item: u32) -> &mut Link {
        &mut self.slots[item as usize].link
    }
}

/// Counters of one interface. `tx_bytes` and `tx_packets` are counted in
/// the interface's [`Hop`] while the world runs and copied here when
/// [`World::run`] returns; the backlog integrals and the peak, which a hop
/// updates only when the backlog was held over time or passes its lower
/// bound, come first and share the record's second line with nothing a
/// hop over an idle link touches.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct IfaceStats {
    /// Time integrals of the backlog (bytes x ns, bytes^2 x ns) for the
    /// time-weighted mean and standard deviation.
    pub q_int: f64,
    pub q2_int: f64,
    pub max_backlog: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub queue_drops: u64,
    /// `queue_drops` by reason: tail drops, RED's early (probabilistic)
    /// and forced (average above its upper threshold) drops.
    pub drops_overflow: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    /// Dropped at the head by a dequeue-time AQM (CoDel's sojourn rule).
    pub drops_sojourn: u64,
    /// Packets the queue marked CE instead of dropping.
    pub ecn_marks: u64,
    pub loss_drops: u64,
    pub acks_rewritten: u64,
}

impl IfaceStats {
    /// A packet the queue dropped, by reason.
    pub(super) fn count_queue_drop(&mut self, why: DropReason) {
        self.queue_drops += 1;
        match why {
            DropReason::Overflow => self.drops_overflow += 1,
            DropReason::Early => self.drops_early += 1,
            DropReason::Forced => self.drops_forced += 1,
            DropReason::Sojourn => self.drops_sojourn += 1,
        }
    }
}

/// What a packet's hop reads and writes of one interface, on one 64-byte
/// line in a table of its own (`World::hops`, 64 bytes an interface) apart
/// from the interface's record ([`Iface`], 384 bytes). At 100x scale the
/// 12 400 records (4.7 MB) do not fit a core's 2 MiB L2 and a hop over a
/// host's link found its record in L3 or memory; the table of hop lines
/// (0.8 MB) does. A packet crossing an idle link with a plain DropTail
/// queue, empty (`quick`: most hops at that scale), touches this line
/// alone, and so does every arrival.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Hop {
    /// End of the last transmission scheduled.
    busy_until: Time,
    /// The link's rate and one-way delay and the node at its far end:
    /// copies of the interface's [`Iface::rate`], [`Iface::delay`] and
    /// [`Iface::to`], constants made when the world is built.
    rate: Rate,
    delay: Time,
    to: u32,
    /// [`Hop::PLAIN`], [`Hop::REVERSE_GATEWAY`]: set by [`Hop::new`] and
    /// [`World::refresh_plain`], as `quick`.
    flags: u8,
    /// A packet of up to `quick x 256` bytes meeting this link idle and
    /// its queue empty is admitted and leaves at once without the queue
    /// being read ([`World::enqueue`]): a plain link under DropTail whose
    /// empty queue admits that much (`min(limit / 256, 255)` for a byte
    /// limit); 0 for any other link.
    quick: u8,
    /// A lower bound of `IfaceStats::max_backlog`, capped at `u16::MAX`:
    /// a backlog at or below it leaves the peak as it is, so the hop need
    /// not read the peak's line (a packet crossing an idle link sets a
    /// backlog of its own size).
    max_hint: u16,
    /// Bytes and packets that left the queue (copied into
    /// [`IfaceStats`] when the run returns).
    tx_bytes: u64,
    tx_packets: u64,
    /// When the backlog last changed, and to what: equal to the queue's
    /// backlog in bytes after every change of a FIFO link's queue
    /// ([`Hop::account_backlog`] follows each), so 0 exactly when its
    /// queue is empty (a packet has at least its IP header).
    last_change: Time,
    last_backlog: u64,
}

impl Hop {
    /// No gateway, stage, capture, random loss or dequeue-time AQM
    /// ([`Iface::is_plain`]): a hop reads none of them when set.
    pub const PLAIN: u8 = 1;
    /// The reverse interface has a gateway, which sees the packets
    /// arriving here ([`World::arrive`]): an arrival need not read the
    /// reverse interface's record to learn it has none.
    pub const REVERSE_GATEWAY: u8 = 2;

    fn new(f: &Iface, reverse_gateway: bool) -> Hop {
        let mut hop = Hop {
            busy_until: Time::ZERO,
            rate: f.rate,
            delay: f.delay,
            to: f.to,
            flags: 0,
            quick: 0,
            max_hint: 0,
            tx_bytes: 0,
            tx_packets: 0,
            last_change: Time::ZERO,
            last_backlog: 0,
        };
        hop.set_flags(f, reverse_gateway);
        hop
    }

    fn set_flags(&mut self, f: &Iface, reverse_gateway: bool) {
        let plain = f.is_plain();
        // DropTail admits a packet of `size` at an empty queue when the
        // limit admits it (`Limit::admits` with a zero backlog); it neither
        // draws nor marks, and its dequeue hook does nothing.
        use netreturn_control::queue::{Discipline, Limit};
        self.quick = match f.queue.discipline() {
            Discipline::DropTail(d) if plain => match d.limit {
                Limit::Bytes(b) => (b / 256).min(255) as u8,
                Limit::Packets(p) => {
                    if p > 0 {
                        255
                    } else {
                        0
                    }
                }
            },
            _ => 0,
        };
        self.flags = (plain as u8 * Hop::PLAIN) | (reverse_gateway as u8 * Hop::REVERSE_GATEWAY);
    }

    #[inline(always)]
    pub fn plain(&self) -> bool {
        self.flags & Hop::PLAIN != 0
    }

    #[inline(always)]
    fn reverse_gateway(&self) -> bool {
        self.flags & Hop::REVERSE_GATEWAY != 0
    }

    /// Whether a packet of `size` arriving at `now` crosses this link
    /// without touching its queue: a `quick` link for its size, idle, its
    /// queue empty.
    #[inline(always)]
    fn passes(&self, now: Time, size: u32) -> bool {
        size <= (self.quick as u32) << 8 && self.last_backlog == 0 && self.busy_until <= now
    }
}

/// One direction of a link: its queue, what a hop reads of it only when
/// the queue is in use (line 1: the queue; line 2: the backlog's integrals
/// and peak, then the other counters), and what it reads only when the
/// link is not plain (a gateway, a router stage, a capture, random loss or
/// a dequeue-time AQM). What every hop reads and writes is the
/// interface's [`Hop`], in a table of its own.
/// [`crate::topology::IfaceSpec`] keeps the rest of the link's
/// description, in `World::topo`.
#[repr(C, align(64))]
pub struct Iface {
    /// Queued packets, each known by the time its transmission starts.
    /// Queues are FIFO and decide only on admission, so a packet's
    /// departure is fixed when it is accepted: its arrival at the far end is
    /// scheduled then, and it leaves the queue (as far as occupancy, queue
    /// statistics and a gateway watching the queue can tell) at that start
    /// time, applied lazily by [`World::drain`] before anything looks at
    /// the queue. No event per departure is needed.
    pub queue: Fifo<Time>,
    pub stats: IfaceStats,
    pub rate: Rate,
    pub delay: Time,
    /// The node at the far end.
    pub to: u32,
    pub loss: f64,
    pub gateway: Option<Box<WindowGateway>>,
    /// A router stage rewriting forward packets' in-band fields (NGWA,
    /// XCP), with the ids of the packets in the queue, in order, so it sees
    /// each one leave. Runs without a stage pay one test of the hop's
    /// `PLAIN` flag per enqueue.
    pub stage: Option<Box<Stage>>,
    /// Capture of the packets this interface transmits, when requested.
    pub pcap: Option<Box<crate::pcap::Pcap>>,
    /// The stage's [`ForwardStage::acts_on_enqueue`], read once.
    stage_on_enqueue: bool,
    /// The queue decides at dequeue: packets wait in `aqm`, not `queue`.
    dequeue_time: bool,
    rng: Rng,
    pub capacity_bytes: u64,
    /// "R1->R2".
    pub name: String,
    staged: std::collections::VecDeque<u32>,
    /// The dequeue-time queue, when the link runs one ([`aqm`]).
    aqm: Option<Box<aqm::AqmLink>>,
}

impl Iface {
    /// An idle interface `name` towards node `to`: `rate`, one-way `delay`,
    /// random loss `loss` drawn from `rng`, a FIFO of `capacity_bytes`
    /// under `discipline`, and a window-rewriting gateway if any.
    pub(crate) fn new(
        name: String,
        to: u32,
        (rate, delay, loss): (Rate, Time, f64),
        discipline: netreturn_control::queue::Discipline,
        aqm: Option<netreturn_control::queue::aqm::Aqm<u32>>,
        capacity_bytes: u64,
        gateway: Option<Box<WindowGateway>>,
        rng: Rng,
    ) -> Iface {
        Iface {
            name,
            rate,
            delay,
            loss,
            to,
            queue: Fifo::new(discipline),
            capacity_bytes,
            gateway,
            stage: None,
            stage_on_enqueue: false,
            dequeue_time: aqm.is_some(),
            aqm: aqm.map(|q| Box::new(aqm::AqmLink::new(q))),
            staged: Default::default(),
            rng,
            stats: IfaceStats::default(),
            pcap: None,
        }
    }

    /// The dequeue-time queue, if the link runs one.
    pub(crate) fn aqm_queue_mut(&mut self) -> Option<&mut netreturn_control::queue::aqm::Aqm<u32>> {
        self.aqm.as_deref_mut().map(|l| &mut l.queue)
    }

    /// Packets the device holds below a dequeue-time queue (its `aqm`
    /// table's `device_queue`; 0 without one).
    pub(crate) fn set_device_queue(&mut self, packets: u32) {
        if let Some(link) = self.aqm.as_deref_mut() {
            link.device_cap = packets;
        }
    }

    /// No gateway, stage, capture, random loss or dequeue-time AQM; its
    /// hop's [`Hop::PLAIN`] flag, which [`World::refresh_plain`] recomputes
    /// after any of those is set.
    pub(crate) fn is_plain(&self) -> bool {
        self.gateway.is_none() && self.stage.is_none() && self.pcap.is_none() && self.loss <= 0.0 && self.aqm.is_none()
    }

    /// The gateway, read only when the link is not `plain` (its hop's flag).
    #[inline(always)]
    pub(super) fn gateway_mut(&mut self, plain: bool) -> Option<&mut WindowGateway> {
        if plain {
            None
        } else {
            self.gateway.as_deref_mut()
        }
    }

    /// The interface of the same link in the other direction: the topology
    /// makes a link's two directions one after the other, a -> b at an even
    /// index and b -> a after it ([`crate::topology::Topology`]).
    #[inline(always)]
    pub fn reverse(i: u32) -> u32 {
        i ^ 1
    }
}

/// A router stage: NGWA's, called directly (its rule is a few
/// instructions; a dynamic call and the packet's description for the
/// [`ForwardStage`] interface would cost more than the rule), or any other.
pub enum Stage {
    Ngwa {
        router: NgwaRouter,
        /// Whether the TCP flows' connections (canonical keys) are all
        /// distinct, so a flow's index numbers its connection for flow
        /// division ([`netreturn_control::ngwa::TcpConn::index`]).
        indexed: bool,
        /// `ngwa.mark_tick`: mark at arrival with the queue of the last
        /// tick boundary; `None`: at departure with the queue of then.
        sampler: Option<MarkSampler>,
    },
    Other(Box<dyn ForwardStage>),
}

/// The free bytes of a marking queue as a periodic reader sees them: at each
/// boundary `k * tick` the value left by the last change before it, as the
/// kernel datapath's loop reads its qdisc's backlog once per tick
/// (docs/gateway.md). Changes are seen at the stage's calls (every arrival
/// and departure of the interface).
#[derive(Clone, Copy, Debug)]
pub struct MarkSampler {
    tick: Time,
    /// The next boundary not yet passed.
    next: Time,
    /// Free bytes after the last change seen.
    last: u64,
    /// Free bytes at the last boundary passed: what a segment is marked with.
    sampled: u64,
}

impl MarkSampler {
    /// Starts with an empty queue of `capacity` bytes.
    pub fn new(tick: Time, capacity: u64) -> MarkSampler {
        MarkSampler { tick, next: tick, last: capacity, sampled: capacity }
    }

    /// Passes every boundary up to `t`, then records `free` (the queue at
    /// `t`); answers the free bytes of the last boundary at or before `t`.
    pub fn observe(&mut self, t: Time, free: u64) -> u64 {
        if t >= self.next {
            self.sampled = self.last;
            // Boundaries with no change between them carry the same value.
            let behind = (t - self.next).nanos() / self.tick.nanos();
            self.next += Time::from_nanos(self.tick.nanos() * (behind + 1));
        }
        self.last = free;
        self.sampled
    }
}

impl Stage {
    /// The stage through the common interface (its counters, its state).
    pub fn as_dyn(&self) -> &dyn ForwardStage {
        match self {
            Stage::Ngwa { router, .. } => router,
            Stage::Other(s) => &**s,
        }
    }
}

/// Per-flow packet counters for the loss ratios (seed 000 eq. 13); a TCP
/// flow keeps one per direction.
#[derive(Clone, Debug, Default)]
pub struct PacketCounts {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
}

/// One TCP flow: its two endpoints and what the simulator keeps of it.
///
/// Laid out in declaration order (`repr(C)`): what a segment's arrival and
/// departure read of the flow (its nodes, timers, counters, stop and
/// completion) in the first 160 bytes, the key and start time (read at
/// set-up and through `World::tcp_keys`) after, then the two connections,
/// each on lines of its own with its per-segment state in one block
/// ([`Connection`]).
#[repr(C)]
pub struct TcpFlow {
    pub src: u32,
    pub dst: u32,
    pub(crate) sched: [Option<Time>; 2],
    /// [data direction (client to server, as ns-3's FlowMonitor counts a
    /// flow), ACK direction].
    pub packets: [PacketCounts; 2],
    pub stop: Option<Time>,
    pub done_at: Option<Time>,
    /// Bytes to transfer; `None` for a bulk flow.
    pub bytes: Option<u64>,
    /// An application-rate-limited source ([`TrafficSpec::TcpRate`]):
    /// (rate, bytes per write); it closes the connection at `stop`.
    pub app: Option<(Rate, u32)>,
    pub started: bool,
    /// A short web-like transfer (`tcp-web` traffic), reported apart.
    pub web: bool,
    pub key: FlowKey,
    pub start: Time,
    /// [client (data sender), server (receiver)].
    pub conns: [Connection; 2],
}

pub struct UdpFlow {
    pub key: FlowKey,
    pub src: u32,
    pub dst: u32,
    pub rate: Rate,
    pub packet: u32,
    pub start: Time,
    pub stop: Option<Time>,
    /// CBR rate changes (time, rate), in time order.
    pub schedule: Vec<(Time, Rate)>,
    /// (mean on, mean off) for On/Off sources.
    pub onoff: Option<(Time, Time)>,
    pub(crate) on_until: Time,
    pub(crate) rng: Rng,
    pub packets: PacketCounts,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// A traced TCP flow's time series.
#[derive(Clone, Debug, Default)]
pub struct FlowTrace {
    pub flow: usize,
    pub time_s: Vec<f64>,
    pub cwnd: Vec<f64>,
    pub rwnd: Vec<f64>,
    pub effective: Vec<f64>,
    pub ssthresh: Vec<f64>,
    pub rtt_ms: Vec<f64>,
    /// Payload bytes delivered to the receiving application so far (per-flow
    /// rate by batch means, seed 001 section 3.2).
    pub delivered: Vec<f64>,
    /// The sender's bandwidth estimate (Westwood+, SARBE), Mb/s; NaN for
    /// controllers without one.
    pub bwe_mbps: Vec<f64>,
}

pub struct World {
    pub now: Time,
    pub topo: Topology,
    pub ifaces: Vec<Iface>,
    /// Each interface's [`Hop`]: what a packet's hop reads and writes of
    /// it, one line each.
    hops: Vec<Hop>,
    pub tcp: Vec<TcpFlow>,
    /// Each TCP flow's key, apart from its large record: router stages and
    /// gateways read a packet's key on every hop, and a flow's record (two
    /// connections) is cold there.
    tcp_keys: Vec<FlowKey>,
    pub udp: Vec<UdpFlow>,
    /// The `tcp-web` sources whose transfers are still to arrive: each
    /// makes its next transfer when the run reaches its arrival
    /// ([`World::web_arrival`]).
    web: Vec<WebFlows>,
    /// Each interface's shared event lane ([`World::shared_lanes`]), or its
    /// own index when it shares none.
    shared_lane: Vec<u32>,
    events: EventQueue,
    pool: Pool,
    out: Vec<Segment>,
    finite_left: usize,
    /// A run with finite transfers ends when the last one completes.
    has_finite: bool,
    stop: Time,
    /// What the run records (series, traces, RTT samples, the packet log,
    /// the memory guard): `metrics::collect` reads the run's results from it.
    pub rec: Recorder,
    pub first_start: Time,
    pub warmup: Time,
}

/// A `tcp-web` source in a world: its transfers, their TCP settings and
/// server port, and the sequence number reserved for its next arrival's
/// event ([`EventQueue::reserve`]).
struct WebFlows {
    source: WebSource,
    cfg: TcpConfig,
    port: u16,
    next_seq: u64,
}

/// A line per event of one TCP flow inside a time window: segments sent by
/// either end, drops, arrivals, timer expiries, and the sender's state
/// after each. Sequence numbers are offsets from the sender's ISN (data
/// byte k is k + 1, as in ns-3's relative sequence numbers).
#[derive(Clone, Debug, Default)]
pub struct PacketLog {
    pub flow: u32,
    pub from: Time,
    pub to: Time,
    pub lines: Vec<String>,
}

/// The key of TCP packet `p` as it travels (the flow's key, reversed for
/// the direction from the server).
fn tcp_key(keys: &[FlowKey], p: &Packet) -> FlowKey {
    key_of(keys, p.flow, p.dir)
}

/// [`tcp_key`] from the packet's flow and direction, for a caller that
/// holds the packet mutably borrowed elsewhere.
#[inline(always)]
fn key_of(keys: &[FlowKey], flow: u32, dir: u8) -> FlowKey {
    let key = keys[flow as usize];
    if dir == 0 {
        key
    } else {
        key.reversed()
    }
}

/// The address of node `node`: 10.0.0.(node + 1) and up.
pub(crate) fn ip_of(node: u32) -> u32 {
    0x0A00_0000 | (node + 1)
}

impl World {
    /// A world of `topo` and its interfaces, without traffic, that stops at
    /// `stop` and measures from `warmup`, recording into `rec`. The builder
    /// (`crate::build`) adds the traffic, then [`World::schedule_starts`].
    pub(crate) fn empty(topo: Topology, ifaces: Vec<Iface>, stop: Time, warmup: Time, rec: Recorder) -> World {
        let hops = (0..ifaces.len() as u32)
            .map(|i| Hop::new(&ifaces[i as usize], ifaces[Iface::reverse(i) as usize].gateway.is_some()))
            .collect();
        World {
            now: Time::ZERO,
            ifaces,
            hops,
            tcp: vec![],
            tcp_keys: vec![],
            udp: vec![],
            web: vec![],
            shared_lane: vec![],
            events: EventQueue::new(),
            pool: Pool::default(),
            out: Vec::with_capacity(64),
            finite_left: 0,
            has_finite: false,
            stop,
            rec,
            first_start: Time::MAX,
            warmup,
            topo,
        }
    }

    /// Recomputes interface `i`'s hop flags after a gateway, stage,
    /// capture, loss or AQM was set on it: every such write in this crate
    /// after the world is built calls it.
    pub(crate) fn refresh_plain(&mut self, i: u32) {
        let reverse_gateway = self.ifaces[Iface::reverse(i) as usize].gateway.is_some();
        self.hops[i as usize].set_flags(&self.ifaces[i as usize], reverse_gateway);
    }

    /// Interface `i`'s hop line (its rate, delay, far end, flags, and the
    /// counters a hop keeps).
    pub fn hop(&self, i: u32) -> &Hop {
        &self.hops[i as usize]
    }

    /// Adds a TCP flow, its key beside it in the compact key table; a finite
    /// transfer counts among those the run waits for.
    pub(crate) fn add_tcp(&mut self, f: TcpFlow) {
        if f.bytes.is_some() {
            self.finite_left += 1;
        }
        self.push_tcp(f);
    }

    fn push_tcp(&mut self, f: TcpFlow) {
        self.tcp_keys.push(f.key);
        self.tcp.push(f);
    }

    /// Transfer `id` of the flow table: `bytes` from `src` to `dst` from
    /// `start` (its number picks its source port).
    fn transfer(
        id: u32,
        cfg: &TcpConfig,
        (src, dst): (u32, u32),
        bytes: u64,
        start: Time,
        port: u16,
        iss: (u32, u32),
        web: bool,
    ) -> TcpFlow {
        let key = FlowKey {
            src: ip_of(src),
            dst: ip_of(dst),
            sport: 10_000 + (id % 50_000) as u16,
            dport: port,
            proto: FlowKey::TCP,
        };
        TcpFlow {
            key,
            src,
            dst,
            conns: [Connection::client(cfg, iss.0), Connection::server(cfg, iss.1)],
            sched: [None, None],
            bytes: Some(bytes),
            start,
            stop: None,
            started: false,
            done_at: None,
            packets: Default::default(),
            app: None,
            web,
        }
    }

    /// Adds `tcp-web` source `source`, whose transfers the run makes as they
    /// arrive (numbered after every flow made at set-up, in order of
    /// arrival); the run waits for all of them. A source without arrivals
    /// adds nothing.
    pub(crate) fn add_web_source(&mut self, source: WebSource, cfg: TcpConfig, port: u16) {
        if source.total() == 0 {
            return;
        }
        self.finite_left += source.total() as usize;
        self.web.push(WebFlows { source, cfg, port, next_seq: 0 });
    }

    /// TCP flows in all: those made, and the web transfers still to arrive.
    pub fn tcp_total(&self) -> usize {
        self.tcp.len() + self.web.iter().map(|s| s.source.remaining() as usize).sum::<usize>()
    }

    /// Schedules every start, in the order of the flows' numbers as when
    /// every transfer was made at set-up: the TCP flows made so far, then
    /// each web source's arrivals (their sequence numbers reserved, the
    /// first arrival scheduled), then the UDP sources; then the first
    /// sample. Call once, after the traffic is added and before anything
    /// else is scheduled.
    pub(crate) fn schedule_starts(&mut self) {
        self.has_finite = self.finite_left > 0;
        let tcp: Vec<(Time, Event)> =
            self.tcp.iter().enumerate().map(|(i, f)| (f.start, Event::Start(i as u32))).collect();
        self.first_start = tcp.iter().map(|&(t, _)| t).min().unwrap_or(Time::MAX);
        let lane = self.start_lane();
        self.events.schedule_all_in_lane(lane, tcp);
        for j in 0..self.web.len() {
            let s = &mut self.web[j];
            s.next_seq = self.events.reserve(s.source.total());
            let first = s.source.next_arrival().expect("a source with arrivals has a first");
            self.first_start = self.first_start.min(first);
            self.events.schedule_reserved(lane + 2 + j as u32, first, s.next_seq, Event::Web(j as u32));
        }
        let udp: Vec<(Time, Event)> =
            self.udp.iter().enumerate().map(|(i, u)| (u.start, Event::UdpStart(i as u32))).collect();
        self.first_start = udp.iter().map(|&(t, _)| t).fold(self.first_start, Time::min);
        self.events.schedule_all_in_lane(lane + 1, udp);
        self.shared_lane = World::shared_lanes(&self.topo, lane + 2 + self.web.len() as u32);
        if self.first_start == Time::MAX {
            self.first_start = Time::ZERO;
        }
        self.events.schedule(Time::ZERO, Event::Sample);
    }

    /// Web source `j`'s next transfer arrives now: the transfer is made,
    /// starts, and the source's next arrival is scheduled.
    fn web_arrival(&mut self, j: u32) {
        let id = self.tcp.len() as u32;
        let s = &mut self.web[j as usize];
        let t = s.source.transfer();
        let f = World::transfer(id, &s.cfg, (t.src, t.dst), t.bytes, self.now, s.port, t.iss, true);
        s.next_seq += 1;
        let next = s.source.next_arrival().map(|at| (at, s.next_seq));
        // (Counted among the transfers the run waits for when the source
        // was added.)
        self.push_tcp(f);
        self.start_app(id);
        if let Some((at, seq)) = next {
            let lane = self.start_lane() + 2 + j;
            self.events.schedule_reserved(lane, at, seq, Event::Web(j));
        }
    }

    /// Runs until every finite transfer is complete, or the stop time.
    pub fn run(&mut self) {
        // A world whose per-flow and per-link state outgrows the caches
        // runs a loop that prefetches; a small one runs the plain loop,
        // whose code is unchanged by it.
        self.run_prefetching(self.tcp_total() >= PREFETCH_FLOWS)
    }

    /// [`World::run`] with the prefetching loop on or off, whatever the
    /// world's size: the two give the same run (tests compare them).
    pub fn run_prefetching(&mut self, prefetch: bool) {
        if prefetch {
            self.run_loop::<true>()
        } else {
            self.run_loop::<false>()
        }
    }

    fn run_loop<const PREFETCH: bool>(&mut self) {
        let mut until_check = CHECK_EVERY;
        while let Some((t, ev)) = self.events.pop_with(&self.pool) {
            until_check -= 1;
            if until_check == 0 {
                until_check = CHECK_EVERY;
                if !self.checkpoint(&ev) {
                    break;
                }
            }
            if t > self.stop {
                self.now = self.stop;
                break;
            }
            debug_assert!(t >= self.now, "time ran backward");
            self.now = t;
            // While this event runs, the next one's packet comes into cache.
            if PREFETCH {
                if let Some(Event::Arrive(i, p)) = self.events.next_prefetched() {
                    // The slot's first line; the segment begins on it too
                    // (asking for the second measured no gain: session 16).
                    crate::event::prefetch(&self.pool.slots[p as usize]);
                    // The line of its interface an arrival reads.
                    crate::event::prefetch(&self.hops[i as usize]);
                }
                // A load from memory takes longer than an event (at 100x
                // scale the packets in flight fill 6 MB): the packets of the
                // events after the next, and the line of their interfaces
                // an arrival reads, are asked for now.
                for e in self.events.after_next() {
                    if let Event::Arrive(i, p) = e {
                        crate::event::prefetch(&self.pool.slots[p as usize]);
                        crate::event::prefetch(&self.hops[i as usize]);
                    }
                }
            }
            match ev {
                Event::Arrive(i, p) => self.arrive(i, p),
                Event::Timer(e) => self.timer(e),
                Event::Start(a) => self.start_app(a),
                Event::UdpStart(u) => self.start_udp(u),
                Event::Web(j) => self.web_arrival(j),
                Event::UdpTick(u) => self.udp_tick(u),
                Event::AppTick(a) => self.app_tick(a),
                Event::Sample => self.sample(),
                Event::LinkFree(i) => self.link_free(i),
            }
            if self.has_finite && self.finite_left == 0 {
                break;
            }
        }
        for i in 0..self.ifaces.len() {
            self.drain(i as u32);
            let backlog = self.ifaces[i].backlog().bytes;
            let (hop, f) = (&mut self.hops[i], &mut self.ifaces[i]);
            hop.account_backlog(&mut f.stats, self.now, backlog);
            f.stats.tx_bytes = hop.tx_bytes;
            f.stats.tx_packets = hop.tx_packets;
        }
    }

    /// The run loop's guard, every [`CHECK_EVERY`] events, whatever the
    /// events are: memory past the limit, or a clock that has not moved for
    /// [`STALL_EVENTS`] events (a source that reschedules itself at the
    /// same instant), stops the run; `false` then. The sampler's own check
    /// cannot catch either when the sampler never gets its turn.
    #[cold]
    #[inline(never)]
    fn checkpoint(&mut self, ev: &Event) -> bool {
        if let Some(limit) = self.rec.memory_limit {
            let used = self.memory_in_use();
            if used > limit {
                self.rec.over_memory = Some(used);
                return false;
            }
        }
        let (at, n) = self.rec.checkpoint;
        self.rec.checkpoint = if at == self.now { (at, n + 1) } else { (self.now, 1) };
        if self.rec.checkpoint.1 as u64 * CHECK_EVERY as u64 >= STALL_EVENTS {
            self.rec.stalled = Some(format!("{ev:?}"));
            return false;
        }
        true
    }

    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// Packets still in queues, on the wire or being serialized.
    pub fn in_flight(&self) -> u64 {
        self.pool.live
    }

    fn view(&self, p: &Packet) -> TcpView {
        TcpView {
            key: tcp_key(&self.tcp_keys, p),
            flags: p.seg.flags,
            seq: p.seg.seq,
            ack: p.seg.ack,
            window: p.seg.window,
            wscale: p.seg.opts.wscale,
            mss: p.seg.opts.mss,
            payload_len: p.seg.len,
        }
    }

    fn counts(&mut self, p: &Packet) -> &mut PacketCounts {
        if p.udp {
            &mut self.udp[p.flow as usize].packets
        } else {
            &mut self.tcp[p.flow as usize].packets[p.dir as usize]
        }
    }

    /// Sends what TCP endpoint `side` of `flow` produced.
    fn emit_segments(&mut self, flow: u32, side: u8) {
        let f = &self.tcp[flow as usize];
        let (from, to) = if side == 0 { (f.src, f.dst) } else { (f.dst, f.src) };
        let mut out = std::mem::take(&mut self.out);
        if self.logging(flow) {
            for seg in &out {
                let line = format!("send {}", self.describe_segment(flow, side, seg));
                self.log(line);
            }
            if side == 0 {
                let line = format!("state {}", self.tcp[flow as usize].conns[0].describe());
                self.log(line);
            }
        }
        for seg in &out {
            let size = IP_HEADER + seg.inband.wire_len() + seg.header_len() + seg.len;
            // Written into its slot field by field: the segment is copied
            // once, from `out` to the pool.
            let pi = self.pool.alloc(|p| {
                p.dst = to;
                p.flow = flow;
                p.dir = side;
                p.udp = false;
                p.size = size;
                p.seg = *seg;
            });
            self.rec.totals.created += 1;
            self.tcp[flow as usize].packets[side as usize].sent += 1;
            self.at_node(from, pi);
        }
        out.clear();
        self.out = out;
        self.arm_timer(flow, side);
    }

    fn arm_timer(&mut self, flow: u32, side: u8) {
        let f = &mut self.tcp[flow as usize];
        if let Some(t) = f.conns[side as usize].next_timer() {
            let s = &mut f.sched[side as usize];
            if s.is_none_or(|cur| t < cur) {
                *s = Some(t);
                self.events.schedule(t.max(self.now), Event::Timer(flow * 2 + side as u32));
            }
        }
    }

    fn timer(&mut self, e: u32) {
        let (flow, side) = (e / 2, (e % 2) as u8);
        let now = self.now;
        let f = &mut self.tcp[flow as usize];
        if f.sched[side as usize] != Some(now) {
            return; // superseded by an earlier deadline that already ran
        }
        f.sched[side as usize] = None;
        if f.conns[side as usize].next_timer().is_some_and(|t| t <= now) {
            if self.logging(flow) {
                self.log(format!("timer side {side}"));
            }
            let f = &mut self.tcp[flow as usize];
            f.conns[side as usize].on_timer(now, &mut self.out);
        }
        self.emit_segments(flow, side);
    }

    /// Hands TCP packet `pi`, arrived at its destination, to the endpoint
    /// it is for, then frees it.
    fn tcp_receive(&mut self, pi: u32) {
        let p = &self.pool.slots[pi as usize];
        let (flow, dir) = (p.flow, p.dir);
        let side = 1 - dir;
        let now = self.now;
        if self.logging(flow) {
            let line = format!("recv {}", self.describe_segment(flow, dir, &self.pool.slots[pi as usize].seg));
            self.log(line);
        }
        let f = &mut self.tcp[flow as usize];
        // A bulk flow vanishes at its stop time; a rate-limited one closes
        // instead (`app_tick`) and lives on until its FIN is through.
        if f.app.is_none() && f.stop.is_some_and(|s| now >= s) {
            self.pool.release(pi);
            return;
        }
        f.conns[side as usize].on_segment(now, &self.pool.slots[pi as usize].seg, &mut self.out);
        if side == 0 {
            self.rec.active.note_rtt(flow as usize, f.conns[0].last_rtt());
        }
        self.pool.release(pi);
        if side == 1 && f.done_at.is_none() {
            if let Some(b) = f.bytes {
                if f.conns[1].stats().bytes_delivered >= b {
                    f.done_at = Some(now);
                    self.finite_left -= 1;
                    self.rec.active.remove(flow as usize);
                }
            }
        }
        self.emit_segments(flow, side);
    }

    fn start_app(&mut self, a: u32) {
        let now = self.now;
        let f = &mut self.tcp[a as usize];
        f.started = true;
        self.rec.active.insert(a as usize, f.start >= self.warmup);
        f.conns[0].open(now, &mut self.out);
        if f.app.is_some() {
            self.emit_segments(a, 0);
            self.app_tick(a);
            return;
        }
        let bytes = f.bytes.unwrap_or(u64::MAX / 4);
        f.conns[0].send(now, bytes, &mut self.out);
        if f.bytes.is_some() {
            f.conns[0].close(now, &mut self.out);
        }
        self.emit_segments(a, 0);
    }

    fn start_udp(&mut self, u: u32) {
        let now = self.now;
        let src = &mut self.udp[u as usize];
        if let Some((on, _)) = src.onoff {
            src.on_until = now + Time::from_secs_f64(src.rng.exponential(on.secs_f64()));
        }
        self.udp_tick(u);
    }

    /// The next write of a rate-limited TCP application (ns-3's
    /// OnOffApplication, always on): `packet` bytes every `packet / rate`.
    /// ns-3's `TcpSocketBase::Send` refuses a write that does not fit the
    /// send buffer, and the application does not retry it. At its stop time
    /// the application closes the connection.
    fn app_tick(&mut self, fi: u32) {
        let now = self.now;
        let f = &mut self.tcp[fi as usize];
        let (rate, packet) = f.app.expect("app ticks only for rate-limited flows");
        if f.stop.is_some_and(|s| now >= s) {
            f.conns[0].close(now, &mut self.out);
            self.emit_segments(fi, 0);
            return;
        }
        let c = &mut f.conns[0];
        if c.send_buffered() + packet as u64 <= c.config().snd_buf {
            c.send(now, packet as u64, &mut self.out);
        }
        let next = now + rate.tx_time(packet as u64);
        let next = f.stop.map_or(next, |s| next.min(s));
        self.events.schedule(next, Event::AppTick(fi));
        self.emit_segments(fi, 0);
    }

    /// The event lane of UDP source `ui` (after the interfaces' lanes): a
    /// source has one tick pending at a time, each scheduled by the last at
    /// a later time, so its ticks are a FIFO lane and pop through the small
    /// heap of lane heads rather than the heap of TCP timers.
    fn udp_lane(&self, ui: u32) -> u32 {
        self.ifaces.len() as u32 + ui
    }

    /// The event lane of the TCP flows' starts, after the interfaces' and
    /// the UDP sources' ([`EventQueue::schedule_all_in_lane`]); the UDP
    /// sources' starts follow, then a lane per web source.
    pub(crate) fn start_lane(&self) -> u32 {
        (self.ifaces.len() + self.udp.len()) as u32
    }

    /// Shared event lanes, numbered from `first` (after every other lane):
    /// the links out of one node with one delay and one rate (a router's
    /// links to its hosts) share one, and so do the links into one node
    /// with one delay and one rate from nodes of a single link (the hosts'
    /// links to their router). Their arrivals come mostly in the order they
    /// are scheduled, and those that do not go to the link's own lane
    /// ([`EventQueue::schedule_arrival`]). A link alone of its kind keeps
    /// its own lane.
    pub(crate) fn shared_lanes(topo: &crate::topology::Topology, first: u32) -> Vec<u32> {
        let mut out_links = vec![0u32; topo.nodes.len()];
        for f in &topo.ifaces {
            out_links[f.from as usize] += 1;
        }
        let kind = |f: &crate::topology::IfaceSpec| {
            let (side, node) = if out_links[f.from as usize] > 1 { (0u8, f.from) } else { (1, f.to) };
            (side, node, f.delay, f.rate.0)
        };
        let mut members: std::collections::HashMap<(u8, u32, Time, u64), u32> = Default::default();
        for f in &topo.ifaces {
            *members.entry(kind(f)).or_default() += 1;
        }
        let mut lanes: std::collections::HashMap<(u8, u32, Time, u64), u32> = Default::default();
        topo.ifaces
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let k = kind(f);
                if members[&k] < 2 {
                    return i as u32;
                }
                let next = first + lanes.len() as u32;
                *lanes.entry(k).or_insert(next)
            })
            .collect()
    }

    fn udp_tick(&mut self, ui: u32) {
        let now = self.now;
        let u = &mut self.udp[ui as usize];
        if u.stop.is_some_and(|s| now >= s) {
            return;
        }
        // The CBR schedule: the last rate change at or before now.
        let rate = u.schedule.iter().take_while(|(t, _)| *t <= now).last().map_or(u.rate, |&(_, r)| r);
        if rate.0 == 0 {
            // Paused until the next change of rate, if any.
            if let Some(&(t, _)) = u.schedule.iter().find(|(t, _)| *t > now) {
                self.events.schedule_in_lane(self.udp_lane(ui), t, Event::UdpTick(ui));
            }
            return;
        }
        let gap = rate.tx_time(u.packet as u64);
        if now >= u.on_until {
            // Off period, then a new on period (exponential both).
            let (on, off) = u.onoff.expect("on_until is set only for on/off sources");
            let resume = now + Time::from_secs_f64(u.rng.exponential(off.secs_f64()));
            u.on_until = resume + Time::from_secs_f64(u.rng.exponential(on.secs_f64()));
            let lane = self.udp_lane(ui);
            self.events.schedule_in_lane(lane, resume, Event::UdpTick(ui));
            return;
        }
        let size = IP_HEADER + UDP_HEADER + u.packet;
        u.packets.sent += 1;
        u.bytes_sent += u.packet as u64;
        let (src, dst) = (u.src, u.dst);
        self.events.schedule_in_lane(self.udp_lane(ui), now + gap, Event::UdpTick(ui));
        let pi = self.pool.alloc(|p| {
            *p = Packet { dst, flow: ui, dir: 0, udp: true, size, seg: Segment::default(), link: Link::default() }
        });
        self.rec.totals.created += 1;
        self.at_node(src, pi);
    }
}

#[cfg(test)]
mod layout {
    use super::*;

    #[test]
    fn a_packet_slot_is_two_cache_lines_with_what_every_hop_reads_in_the_first() {
        assert_eq!(std::mem::size_of::<Packet>(), 128);
        assert_eq!(std::mem::align_of::<Packet>(), 64);
        for end in [
            std::mem::offset_of!(Packet, dst) + 4,
            std::mem::offset_of!(Packet, size) + 4,
            std::mem::offset_of!(Packet, link) + std::mem::size_of::<Link>(),
        ] {
            assert!(end <= 64, "a field every hop reads ends at byte {end}");
        }
        // The segment straddles the two lines (88 bytes from byte 40).
        let seg = std::mem::offset_of!(Packet, seg);
        assert_eq!((seg, std::mem::size_of::<Segment>()), (40, 88));
    }

    #[test]
    fn a_tcp_flow_keeps_what_a_hop_reads_of_it_in_its_first_160_bytes_and_each_connection_on_lines_of_its_own() {
        use std::mem::offset_of;
        for (name, end) in [
            ("src", offset_of!(TcpFlow, src) + 4),
            ("dst", offset_of!(TcpFlow, dst) + 4),
            ("sched", offset_of!(TcpFlow, sched) + 32),
            ("packets", offset_of!(TcpFlow, packets) + 2 * std::mem::size_of::<PacketCounts>()),
            ("stop", offset_of!(TcpFlow, stop) + 16),
            ("done_at", offset_of!(TcpFlow, done_at) + 16),
            ("bytes", offset_of!(TcpFlow, bytes) + 16),
            ("app", offset_of!(TcpFlow, app) + std::mem::size_of::<Option<(Rate, u32)>>()),
        ] {
            assert!(end <= 160, "{name} ends at byte {end}");
        }
        assert!(offset_of!(TcpFlow, key) >= 160 && offset_of!(TcpFlow, start) >= 160);
        let conns = offset_of!(TcpFlow, conns);
        assert_eq!((conns % 64, conns / 64), (0, 3), "the connections begin on the fourth line");
        assert_eq!(std::mem::size_of::<Connection>() % 64, 0);
    }

    #[test]
    fn a_hop_line_is_one_cache_line_with_all_a_packet_crossing_an_idle_link_reads_and_writes() {
        use std::mem::{offset_of, size_of};
        assert_eq!((size_of::<Hop>(), std::mem::align_of::<Hop>()), (64, 64));
        for (name, at, size) in [
            ("busy_until", offset_of!(Hop, busy_until), 8),
            ("rate", offset_of!(Hop, rate), 8),
            ("delay", offset_of!(Hop, delay), 8),
            ("to", offset_of!(Hop, to), 4),
            ("flags", offset_of!(Hop, flags), 1),
            ("quick", offset_of!(Hop, quick), 1),
            ("max_hint", offset_of!(Hop, max_hint), 2),
            ("tx_bytes", offset_of!(Hop, tx_bytes), 8),
            ("tx_packets", offset_of!(Hop, tx_packets), 8),
            ("last_change", offset_of!(Hop, last_change), 8),
            ("last_backlog", offset_of!(Hop, last_backlog), 8),
        ] {
            assert!(at + size <= 64, "{name} at byte {at}");
        }
    }

    #[test]
    fn a_packet_queued_at_a_plain_link_touches_only_the_first_two_lines_of_its_record() {
        use std::mem::{offset_of, size_of};
        assert_eq!(std::mem::align_of::<Iface>(), 64);
        let line = |at: usize| at / 64;
        // The queue, then what a backlog held over time updates (its
        // integrals and peak); what a plain link never reads comes after.
        assert_eq!(line(offset_of!(Iface, queue) + size_of::<Fifo<Time>>() - 1), 0);
        let stats = offset_of!(Iface, stats);
        for end in [offset_of!(IfaceStats, q_int), offset_of!(IfaceStats, q2_int), offset_of!(IfaceStats, max_backlog)]
        {
            assert!(line(stats + end + 7) <= 1);
        }
        for at in
            [offset_of!(Iface, loss), offset_of!(Iface, gateway), offset_of!(Iface, stage), offset_of!(Iface, pcap)]
        {
            assert!(line(at) >= 1);
        }
    }

    fn plain_world(text: &str) -> World {
        World::new(&crate::Scenario::from_toml(text, "t.toml", &[]).unwrap(), 1).unwrap()
    }

    #[test]
    fn only_links_without_gateway_stage_capture_loss_or_aqm_are_plain() {
        let w = plain_world(
            r#"
            name = "plain"
            [topology]
            kind = "dumbbell"
            pairs = 1
            access = { rate = "100Mbps", rtt = "2ms" }
            bottleneck = { rate = "10Mbps", rtt = "20ms", queue = "ewt", buffer = "50kB" }
            receivers = { rate = "100Mbps", rtt = "4ms" }
            [[traffic]]
            kind = "tcp-file"
            from = "left"
            to = "right"
            count = 1
            bytes = "100kB"
            "#,
        );
        for (f, h) in w.ifaces.iter().zip(&w.hops) {
            let extras =
                f.gateway.is_some() || f.stage.is_some() || f.pcap.is_some() || f.loss > 0.0 || f.aqm.is_some();
            assert_eq!(h.plain(), !extras, "{}", f.name);
            // The bottleneck's EWT runs over a DropTail queue, but a gateway
            // watches it: no quick crossing there.
            assert_eq!(h.quick > 0, !extras, "{}", f.name);
        }
        assert!(w.hops.iter().any(|h| h.plain()) && w.hops.iter().any(|h| !h.plain()));
    }

    #[test]
    fn the_peaks_lower_bound_never_exceeds_the_peak() {
        let w = plain_world(
            r#"
            name = "peaks"
            [topology]
            kind = "dumbbell"
            pairs = 2
            access = { rate = "100Mbps", rtt = "2ms" }
            bottleneck = { rate = "10Mbps", rtt = "20ms", queue = "droptail", buffer = "100kB" }
            receivers = { rate = "100Mbps", rtt = "4ms" }
            [[traffic]]
            kind = "tcp-file"
            from = "left"
            to = "right"
            count = 2
            bytes = "1MB"
            "#,
        );
        let mut w = w;
        w.run();
        // The bottleneck's queue grew past what the bound holds (64 KiB).
        assert!(w.ifaces.iter().any(|f| f.stats.max_backlog > u16::MAX as u64));
        for (f, h) in w.ifaces.iter().zip(&w.hops) {
            assert!(h.max_hint as u64 <= f.stats.max_backlog, "{}", f.name);
            assert_eq!(h.max_hint as u64, f.stats.max_backlog.min(u16::MAX as u64), "{}", f.name);
        }
    }

    /// A dumbbell whose hosts' links queue under `queue`, the bottleneck
    /// under DropTail: each host sends `bytes` at once, so access links
    /// both queue bursts and carry packets that meet them idle.
    fn bursty_world(queue: &str, bytes: &str) -> World {
        plain_world(&format!(
            r#"
            name = "bursts"
            [topology]
            kind = "dumbbell"
            pairs = 3
            access = {{ rate = "20Mbps", rtt = "2ms", queue = "{queue}", buffer = "30kB" }}
            bottleneck = {{ rate = "10Mbps", rtt = "20ms", queue = "droptail", buffer = "60kB" }}
            receivers = {{ rate = "100Mbps", rtt = "4ms" }}
            [[traffic]]
            kind = "tcp-file"
            from = "left"
            to = "right"
            count = 3
            bytes = "{bytes}"
            [[traffic]]
            kind = "udp-cbr"
            from = "right"
            to = "left"
            rate = "2Mbps"
            "#
        ))
    }

    #[test]
    fn a_packet_crossing_an_idle_link_without_reading_its_queue_changes_nothing() {
        // The same run with every interface's quick crossing turned off
        // (each packet goes through the queue's `pass` or `enqueue`) and on.
        let runs: Vec<World> = [false, true]
            .into_iter()
            .map(|quick| {
                let mut w = bursty_world("droptail", "400kB");
                if !quick {
                    w.hops.iter_mut().for_each(|h| h.quick = 0);
                }
                w.run();
                w
            })
            .collect();
        let (slow, quick) = (&runs[0], &runs[1]);
        assert_eq!(quick.hops.iter().filter(|h| h.quick > 0).count(), 14, "every link of the dumbbell");
        assert_eq!(slow.events_processed(), quick.events_processed());
        assert_eq!(slow.now, quick.now);
        for (a, b) in slow.ifaces.iter().zip(&quick.ifaces) {
            let (x, y) = (&a.stats, &b.stats);
            assert!(x.tx_packets > 0, "{}", a.name);
            assert_eq!(
                (x.tx_bytes, x.tx_packets, x.max_backlog, x.queue_drops, x.q_int.to_bits(), x.q2_int.to_bits()),
                (y.tx_bytes, y.tx_packets, y.max_backlog, y.queue_drops, y.q_int.to_bits(), y.q2_int.to_bits()),
                "{}",
                a.name
            );
        }
        // Some access link both queued packets and passed them idle.
        assert!(quick.ifaces.iter().any(|f| f.name.starts_with("left") && f.stats.q_int > 0.0));
    }

    #[test]
    fn only_plain_droptail_links_whose_empty_queue_fits_any_packet_cross_quickly() {
        let quick = |w: &World, name: &str| w.hops[w.topo.iface_by_name(name).expect(name) as usize].quick;
        // 30 kB: packets of up to 117 x 256 bytes; 60 kB: 234 x 256.
        let w = bursty_world("droptail", "10kB");
        assert_eq!((quick(&w, "left0->R1"), quick(&w, "R1->R2")), (117, 234));
        assert!(quick(&w, "R2->right0") > 0);
        let w = bursty_world("red", "10kB");
        assert_eq!(quick(&w, "left0->R1"), 0, "RED decides on every arrival");
        assert_eq!(quick(&w, "R1->R2"), 234);
    }
}

#[cfg(test)]
mod shared_lanes {
    use super::*;

    #[test]
    fn a_dumbbells_access_links_share_four_lanes_and_its_bottleneck_keeps_its_own() {
        let text = r#"
            name = "four pairs"
            [topology]
            kind = "dumbbell"
            pairs = 4
            access = { rate = "100Mbps", rtt = "2ms" }
            bottleneck = { rate = "10Mbps", rtt = "40ms", queue = "droptail", buffer = "60kB" }
            receivers = { rate = "100Mbps", rtt = "4ms" }
            [[traffic]]
            kind = "tcp-file"
            from = "left"
            to = "right"
            count = 4
            bytes = "100kB"
            "#;
        let w = World::new(&crate::Scenario::from_toml(text, "t.toml", &[]).unwrap(), 1).unwrap();
        let lane = |name: &str| w.shared_lane[w.topo.iface_by_name(name).expect(name) as usize];
        let kinds = ["left{}->R1", "R1->left{}", "R2->right{}", "right{}->R2"];
        let shared: Vec<u32> = kinds.iter().map(|k| lane(&k.replace("{}", "0"))).collect();
        for (k, &l) in kinds.iter().zip(&shared) {
            for i in 1..4 {
                assert_eq!(lane(&k.replace("{}", &i.to_string())), l, "{k}, pair {i}");
            }
            assert!(l > w.start_lane(), "{k}: a shared lane comes after every other lane");
        }
        let mut distinct = shared.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4);
        for name in ["R1->R2", "R2->R1"] {
            assert_eq!(lane(name), w.topo.iface_by_name(name).unwrap(), "{name} keeps its own lane");
        }
    }
}

#[cfg(test)]
mod web_arrivals {
    use super::*;
    use crate::scenario::{Scenario, MINI};
    use crate::web::PoissonArrivals;

    #[test]
    fn a_flood_of_web_arrivals_makes_each_transfer_only_when_it_arrives() {
        // Issue 23: about a million arrivals in the run's second once made
        // a record each at load (2 GB); now the world starts with the four
        // file transfers alone, and a run stopped after 2 ms has made the
        // transfers that arrived by then, in order of arrival.
        let text = format!(
            "{}\n[[traffic]]\nkind = \"tcp-web\"\nfrom = \"left\"\nto = \"right\"\nrate = 1e6\n",
            MINI.replace("[topology]", "[run]\nstop = \"1s\"\n[topology]")
        );
        let s = Scenario::from_toml(&text, "m.toml", &[]).unwrap();
        let mut w = World::with_recorder(&s, 1, Recorder::new(&s).memory_limit(None)).unwrap();
        assert_eq!(w.tcp.len(), 4);
        let total = w.tcp_total() - 4;
        assert!((total as f64 - 1e6).abs() < 4.0 * 1e3, "{total} arrivals");
        assert!(w.memory_in_use() < 1_000_000, "{} bytes held at load", w.memory_in_use());
        w.stop = Time::from_millis(2);
        w.run();
        let due = PoissonArrivals::new(Rng::derive(1, 3_000_001), 1e6, Time::ZERO, Time::from_secs(1))
            .take_while(|t| *t <= Time::from_millis(2))
            .collect::<Vec<Time>>();
        let made: Vec<Time> = w.tcp[4..].iter().map(|f| f.start).collect();
        assert_eq!(made, due);
        assert!(w.tcp[4..].iter().all(|f| f.web && f.started));
        assert_eq!(w.tcp_total() - 4, total, "the transfers still to come stay counted");
    }
}

#[cfg(test)]
mod guard_tests {
    use super::*;
    use crate::scenario::{Scenario, MINI};

    fn world() -> (Scenario, World) {
        let s = Scenario::from_toml(MINI, "mini.toml", &[]).unwrap();
        let w = World::new(&s, 1).unwrap();
        (s, w)
    }

    #[test]
    fn a_source_that_reschedules_itself_at_the_same_instant_stops_the_run_naming_it() {
        // Issue 23: `sample_interval = "0s"` hung and grew to 10 GB; the
        // loader refuses it now, and the run loop stops whatever else would
        // hold the clock (here the sampler, forced to 0 past the loader).
        let (s, mut w) = world();
        w.rec.sample_interval = Time::ZERO;
        w.rec.memory_limit = None;
        w.run();
        assert_eq!(w.rec.stalled.as_deref(), Some("Sample"));
        assert_eq!(w.now, Time::ZERO);
        let e = crate::finished(&w, &s, 1).unwrap_err();
        assert!(e.message.contains("without the clock moving (the last: Sample)"), "{e}");
    }

    #[test]
    fn the_memory_guard_acts_between_samples_too() {
        // The sampler's own check never runs while one instant holds the
        // clock; the loop's checkpoint does.
        let (_, mut w) = world();
        w.rec.sample_interval = Time::ZERO;
        w.rec.memory_limit = Some(1);
        w.run();
        assert!(w.rec.over_memory.is_some() && w.rec.stalled.is_none());
    }

    #[test]
    fn a_normal_run_is_not_stopped_by_the_guard() {
        let s = Scenario::from_toml(MINI, "mini.toml", &[("flows".into(), "100".into())]).unwrap();
        let mut w = World::new(&s, 1).unwrap();
        w.run();
        assert!(w.rec.stalled.is_none() && w.rec.over_memory.is_none());
        assert!(w.events_processed() > CHECK_EVERY as u64, "the guard ran: {}", w.events_processed());
    }
}
