//! The simulated world and its event loop: interfaces with queues, TCP and
//! UDP applications, window-rewriting gateways, and the recorders the
//! metrics are computed from.

use crate::event::{Event, EventQueue};
use crate::gateways::build_gateway;
use crate::scenario::{CcName, Dist, QueueMethod, Scenario, TrafficSpec};
use crate::topology::{IfaceSpec, Topology, NO_ROUTE};
use crate::units::Size;
use netreturn_base::{FlowKey, Rate, Rng, Time};
use netreturn_control::gateway::WindowGateway;
use netreturn_control::queue::{Fifo, Limit};
use netreturn_control::{ForwardPacket, ForwardStage, QueueEvent, QueueState, TcpMeta, TcpView};
use netreturn_tcp::{CcKind, Connection, Segment, TcpConfig};

/// IPv4 + TCP headers without options, and IPv4 + UDP.
const IP_HEADER: u32 = 20;
const UDP_HEADER: u32 = 8;

/// A packet in flight. The simulator carries header fields, not bytes.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub dst: u32,
    /// Index into the TCP or UDP flow table.
    pub flow: u32,
    /// 0: from the flow's opener (client) to its peer; 1: the reverse.
    pub dir: u8,
    pub udp: bool,
    /// Bytes on the wire (IP packet).
    pub size: u32,
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
    fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        }
    }
    fn release(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }
}

/// Counters of one interface.
#[derive(Clone, Debug, Default)]
pub struct IfaceStats {
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    /// Time integrals of the backlog (bytes x ns, bytes^2 x ns) for the
    /// time-weighted mean and standard deviation.
    pub q_int: f64,
    pub q2_int: f64,
    pub max_backlog: u64,
    pub last_change: Time,
    pub last_backlog: u64,
    pub acks_rewritten: u64,
}

pub struct Iface {
    pub spec: IfaceSpec,
    pub reverse: u32,
    /// Queued packets, each known by the time its transmission starts.
    /// Queues are FIFO and decide only on admission, so a packet's
    /// departure is fixed when it is accepted: its arrival at the far end is
    /// scheduled then, and it leaves the queue (as far as occupancy, queue
    /// statistics and a gateway watching the queue can tell) at that start
    /// time, applied lazily by [`World::drain`] before anything looks at
    /// the queue. No event per departure is needed.
    pub queue: Fifo<Time>,
    pub capacity_bytes: u64,
    /// End of the last transmission scheduled.
    busy_until: Time,
    pub gateway: Option<Box<WindowGateway>>,
    /// A router stage rewriting forward packets' in-band fields (NGWA,
    /// XCP), with the ids of the packets in the queue, in order, so it sees
    /// each one leave. Runs without a stage pay one `is_none` per enqueue.
    pub stage: Option<Box<dyn ForwardStage>>,
    staged: std::collections::VecDeque<u32>,
    rng: Rng,
    pub stats: IfaceStats,
    /// Capture of the packets this interface transmits, when requested.
    pub pcap: Option<crate::pcap::Pcap>,
}

impl Iface {
    /// Closes the interval since the last change of the backlog and starts
    /// one with the backlog as it is now.
    fn account_backlog(&mut self, now: Time, backlog_bytes: u64) {
        let s = &mut self.stats;
        // An empty queue or an empty interval adds +0.0, which leaves the
        // (non-negative) integrals unchanged bit for bit: skip the float
        // work. That is the common case: most links idle most of the time
        // (enqueue at an empty queue), and a packet meeting an idle link is
        // enqueued and dequeued at the same instant.
        if s.last_backlog > 0 && now > s.last_change {
            let dt = (now - s.last_change).nanos() as f64;
            let q = s.last_backlog as f64;
            s.q_int += q * dt;
            s.q2_int += q * q * dt;
        }
        s.last_change = now;
        s.last_backlog = backlog_bytes;
        s.max_backlog = s.max_backlog.max(s.last_backlog);
    }

    /// [`World::drain`]. Before most enqueues there is nothing to take out
    /// (the head has not started yet, or the queue is empty): that check
    /// is inlined, the loop is not.
    #[inline]
    fn drain(&mut self, now: Time) {
        if self.queue.front().is_some_and(|&start| start <= now) {
            self.drain_started(now);
        }
    }

    #[inline(never)]
    fn drain_started(&mut self, now: Time) {
        while let Some(&start) = self.queue.front() {
            if start > now {
                break;
            }
            let (_, _, ev) = self.queue.dequeue(start).expect("front exists");
            self.departed(start, &ev);
        }
    }

    /// Books a packet's leaving the queue at `at` (its transmission starts).
    fn departed(&mut self, at: Time, ev: &QueueEvent) {
        if let Some(gw) = self.gateway.as_mut() {
            gw.on_queue(at, ev);
        }
        self.account_backlog(at, ev.backlog_bytes);
        self.stats.tx_bytes += ev.size as u64;
        self.stats.tx_packets += 1;
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

pub struct TcpFlow {
    pub key: FlowKey,
    pub src: u32,
    pub dst: u32,
    /// [client (data sender), server (receiver)].
    pub conns: [Connection; 2],
    sched: [Option<Time>; 2],
    /// Bytes to transfer; `None` for a bulk flow.
    pub bytes: Option<u64>,
    pub start: Time,
    pub stop: Option<Time>,
    pub started: bool,
    pub done_at: Option<Time>,
    /// [data direction (client to server, as ns-3's FlowMonitor counts a
    /// flow), ACK direction].
    pub packets: [PacketCounts; 2],
    /// An application-rate-limited source ([`TrafficSpec::TcpRate`]):
    /// (rate, bytes per write); it closes the connection at `stop`.
    pub app: Option<(Rate, u32)>,
    /// A short web-like transfer (`tcp-web` traffic), reported apart.
    pub web: bool,
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
    on_until: Time,
    rng: Rng,
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
    pub tcp: Vec<TcpFlow>,
    pub udp: Vec<UdpFlow>,
    events: EventQueue,
    pool: Pool,
    out: Vec<Segment>,
    finite_left: usize,
    /// A run with finite transfers ends when the last one completes.
    has_finite: bool,
    stop: Time,
    sample_interval: Time,
    pub monitor: Option<u32>,
    pub queue_series: (Vec<f64>, Vec<f64>),
    /// Beside `queue_series`: the monitored interface's rate minus the
    /// cross traffic it carried (every packet but those of the traced TCP
    /// flows, headers included) in the sample interval ending then, Mb/s:
    /// the bandwidth available to the traced flows (NaN at t = 0).
    pub avail_mbps: Vec<f64>,
    /// Bytes of cross traffic the monitored interface began to send since
    /// the last sample.
    cross_bytes: u64,
    pub traces: Vec<FlowTrace>,
    pub rtt_samples_ms: Vec<f64>,
    /// Stop the run if its memory grows past this many bytes (checked at
    /// every sample); [`World::over_memory`] then holds what was in use.
    pub memory_limit: Option<u64>,
    pub over_memory: Option<u64>,
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub first_start: Time,
    pub warmup: Time,
    /// Packet-level log of one TCP flow (debugging; off unless asked).
    pub packet_log: Option<PacketLog>,
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

fn ip_of(node: u32) -> u32 {
    0x0A00_0000 | (node + 1)
}

fn draw(dist: &Dist, rng: &mut Rng) -> Time {
    match dist {
        Dist::Fixed(t) => t.0,
        Dist::Uniform { uniform: [a, b] } => Time::from_secs_f64(rng.uniform(a.0.secs_f64(), b.0.secs_f64())),
        Dist::Exponential { exponential } => Time::from_secs_f64(rng.exponential(exponential.0.secs_f64())),
    }
}

pub fn tcp_config(s: &Scenario) -> TcpConfig {
    let t = &s.tcp;
    let cc = match t.cc {
        CcName::None => CcKind::None,
        CcName::Reno => CcKind::Reno,
        CcName::NewReno => CcKind::NewReno,
        CcName::WestwoodPlus => CcKind::WestwoodPlus,
        CcName::Sarbe => CcKind::Sarbe(netreturn_tcp::SarbeConfig {
            ts_tick: t.ts_tick.0,
            restore_cwnd_after_recovery: t.sarbe_restore_cwnd,
            ..Default::default()
        }),
        CcName::Cubic => CcKind::Cubic(netreturn_tcp::CubicConfig {
            hystart: t.hystart,
            fast_convergence: t.fast_convergence,
            tcp_friendliness: t.tcp_friendliness,
            ..Default::default()
        }),
        CcName::Xcp => CcKind::Xcp(Default::default()),
    };
    TcpConfig {
        cc,
        mss: t.segment_size,
        rcv_buf: t.rcv_buf.0.bytes(t.segment_size),
        snd_buf: t.snd_buf.0.bytes(t.segment_size),
        sack: t.sack,
        dupack_same_window: t.dupack_same_window,
        timestamps: t.timestamps,
        window_scaling: t.window_scaling,
        delayed_ack_count: t.delayed_ack_count,
        delayed_ack_timeout: t.delayed_ack_timeout.0,
        min_rto: t.min_rto.0,
        initial_cwnd: t.initial_cwnd,
        ts_tick: t.ts_tick.0,
        recovery: match t.recovery {
            crate::scenario::RecoveryName::Prr => netreturn_tcp::Recovery::Prr,
            crate::scenario::RecoveryName::Classic => netreturn_tcp::Recovery::Classic,
        },
        ..TcpConfig::default()
    }
}

impl World {
    /// Adds one finite TCP transfer (used by traffic generators outside
    /// this file: [`crate::web`]).
    pub(crate) fn push_transfer(&mut self, cfg: &TcpConfig, src: u32, dst: u32, bytes: u64, start: Time, port: u16, iss: (u32, u32), web: bool) {
        let id = self.tcp.len() as u32;
        let key = FlowKey { src: ip_of(src), dst: ip_of(dst), sport: 10_000 + (id % 50_000) as u16, dport: port, proto: FlowKey::TCP };
        self.tcp.push(TcpFlow {
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
        });
        self.finite_left += 1;
    }

    pub fn new(s: &Scenario, seed: u64) -> Result<World, (String, String)> {
        // Refuse what would not fit before allocating any of it.
        crate::memory::check(s, crate::memory::limit()).map_err(|e| (e.field, e.message))?;
        let topo = Topology::build(&s.topology)?;
        let mtu = s.tcp.segment_size + IP_HEADER + 20 + 12;
        let mut ifaces = Vec::with_capacity(topo.ifaces.len());
        for (i, f) in topo.ifaces.iter().enumerate() {
            let capacity_bytes = f.buffer.bytes(mtu);
            let limit = match f.buffer {
                Size::Bytes(b) => Limit::Bytes(b),
                Size::Packets(p) => Limit::Packets(p),
            };
            let idle = f.rate.tx_time(mtu as u64);
            // A window controller runs over a DropTail queue.
            let kind = match f.method {
                QueueMethod::Queue(q) => q,
                QueueMethod::Window(_) | QueueMethod::Stage(_) => netreturn_control::QueueKind::DropTail,
            };
            let discipline = kind.discipline(limit, mtu, idle, f.red.as_ref());
            let gateway = build_gateway(f, capacity_bytes, s.tcp.segment_size)
                .map_err(|m| (format!("topology ({})", f.name), m))?
                .map(Box::new);
            ifaces.push(Iface {
                spec: f.clone(),
                reverse: (i ^ 1) as u32,
                queue: Fifo::new(discipline),
                capacity_bytes,
                busy_until: Time::ZERO,
                gateway,
                stage: None,
                staged: Default::default(),
                rng: Rng::derive(seed, 1_000_000 + i as u64),
                stats: IfaceStats::default(),
                pcap: None,
            });
        }
        for name in &s.run.pcap {
            let i = topo.iface_by_name(name).ok_or_else(|| {
                ("run.pcap".to_string(), format!("no interface {name:?}; interfaces look like \"R1->R2\""))
            })?;
            ifaces[i as usize].pcap = Some(crate::pcap::Pcap::new());
        }
        let monitor = match &s.run.monitor {
            Some(name) => Some(topo.iface_by_name(name).ok_or_else(|| {
                ("run.monitor".to_string(), format!("no interface {name:?}; interfaces look like \"R1->R2\""))
            })?),
            None => topo.bottleneck,
        };

        let mut cfg = tcp_config(s);
        if let Some(n) = &s.ngwa {
            n.apply_to_tcp(&mut cfg, s.tcp.segment_size);
        }
        crate::xcp::sender_cc(s, &topo, &mut cfg);
        let mut w = World {
            now: Time::ZERO,
            ifaces,
            tcp: vec![],
            udp: vec![],
            events: EventQueue::new(),
            pool: Pool::default(),
            out: Vec::with_capacity(64),
            finite_left: 0,
            has_finite: false,
            stop: s.run.stop.0,
            sample_interval: s.run.sample_interval.0,
            monitor,
            queue_series: (vec![], vec![]),
            avail_mbps: vec![],
            cross_bytes: 0,
            traces: vec![],
            rtt_samples_ms: vec![],
            memory_limit: None,
            over_memory: None,
            created: 0,
            delivered: 0,
            dropped: 0,
            first_start: Time::MAX,
            warmup: s.run.warmup.map(|w| w.0).unwrap_or(Time::ZERO),
            packet_log: None,
            topo,
        };

        let mut app_rng = Rng::derive(seed, 7);
        for (ti, t) in s.traffic.iter().enumerate() {
            if let TrafficSpec::TcpWeb { .. } = t {
                crate::web::add_web_flows(&mut w, s, ti, &cfg, seed)?;
                continue;
            }
            let (from, to, count) = match t {
                TrafficSpec::TcpFile { from, to, count, .. }
                | TrafficSpec::TcpBulk { from, to, count, .. }
                | TrafficSpec::TcpRate { from, to, count, .. }
                | TrafficSpec::UdpCbr { from, to, count, .. }
                | TrafficSpec::UdpOnOff { from, to, count, .. } => (from, to, *count),
                TrafficSpec::TcpWeb { .. } => unreachable!("handled above"),
            };
            let lookup = |sel: &str, field: &str| {
                w.topo.hosts(sel).filter(|v| !v.is_empty()).ok_or_else(|| {
                    let groups: Vec<&str> = w.topo.groups.keys().map(|k| k.as_str()).collect();
                    (format!("traffic[{ti}].{field}"), format!("no host or group {sel:?}; groups: {}", groups.join(", ")))
                })
            };
            let (srcs, dsts) = (lookup(from, "from")?, lookup(to, "to")?);
            for k in 0..count as usize {
                let (src, dst) = (srcs[k % srcs.len()], dsts[k % dsts.len()]);
                if !w.topo.reachable(src, dst) {
                    return Err((format!("traffic[{ti}]"), format!("no route from {} to {}", w.topo.nodes[src as usize], w.topo.nodes[dst as usize])));
                }
                match t {
                    TrafficSpec::TcpFile { start, port, .. } | TrafficSpec::TcpBulk { start, port, .. } | TrafficSpec::TcpRate { start, port, .. } => {
                        let (bytes, stop, app) = match t {
                            TrafficSpec::TcpFile { bytes: b, .. } => (Some(b.0.bytes(s.tcp.segment_size)), None, None),
                            TrafficSpec::TcpBulk { stop, .. } => (None, stop.map(|x| x.0), None),
                            TrafficSpec::TcpRate { stop, rate, packet, .. } => (None, stop.map(|x| x.0), Some((rate.0, *packet))),
                            _ => unreachable!(),
                        };
                        let id = w.tcp.len() as u32;
                        let key = FlowKey { src: ip_of(src), dst: ip_of(dst), sport: 10_000 + (id % 50_000) as u16, dport: *port, proto: FlowKey::TCP };
                        let iss = app_rng.next_u64() as u32;
                        let iss2 = app_rng.next_u64() as u32;
                        let cfg = match t {
                            // This traffic's own congestion control.
                            TrafficSpec::TcpBulk { cc: Some(c), .. } => {
                                let mut own = s.clone();
                                own.tcp.cc = *c;
                                tcp_config(&own)
                            }
                            _ => cfg,
                        };
                        let start = draw(start, &mut app_rng);
                        w.tcp.push(TcpFlow {
                            key,
                            src,
                            dst,
                            conns: [Connection::client(&cfg, iss), Connection::server(&cfg, iss2)],
                            sched: [None, None],
                            bytes,
                            start,
                            stop,
                            started: false,
                            done_at: None,
                            packets: Default::default(),
                            app,
                            web: false,
                        });
                        if bytes.is_some() {
                            w.finite_left += 1;
                        }
                    }
                    TrafficSpec::TcpWeb { .. } => unreachable!("handled above"),
                    TrafficSpec::UdpCbr { rate, packet, start, stop, .. } | TrafficSpec::UdpOnOff { rate, packet, start, stop, .. } => {
                        let onoff = match t {
                            TrafficSpec::UdpOnOff { on, off, .. } => Some((on.0, off.0)),
                            _ => None,
                        };
                        let id = w.udp.len() as u32;
                        let key = FlowKey { src: ip_of(src), dst: ip_of(dst), sport: 20_000 + id as u16, dport: 9, proto: FlowKey::UDP };
                        let start = draw(start, &mut app_rng);
                        w.udp.push(UdpFlow {
                            key,
                            src,
                            dst,
                            rate: rate.0,
                            packet: *packet,
                            start,
                            stop: stop.map(|x| x.0),
                            schedule: match t {
                                TrafficSpec::UdpCbr { schedule, .. } => schedule.iter().map(|(t, r)| (t.0, r.0)).collect(),
                                _ => vec![],
                            },
                            onoff,
                            on_until: Time::MAX,
                            rng: Rng::derive(seed, 2_000_000 + id as u64),
                            packets: PacketCounts::default(),
                            bytes_sent: 0,
                            bytes_received: 0,
                        });
                    }
                }
            }
        }
        w.has_finite = w.finite_left > 0;
        for i in 0..w.tcp.len() {
            let t = w.tcp[i].start;
            w.first_start = w.first_start.min(t);
            w.events.schedule(t, Event::Start(i as u32));
        }
        let ntcp = w.tcp.len() as u32;
        for i in 0..w.udp.len() {
            let t = w.udp[i].start;
            w.first_start = w.first_start.min(t);
            w.events.schedule(t, Event::Start(ntcp + i as u32));
        }
        for &f in &s.run.trace_flows {
            if f >= w.tcp.len() {
                return Err(("run.trace_flows".into(), format!("flow {f} does not exist; there are {} TCP flows", w.tcp.len())));
            }
            w.traces.push(FlowTrace { flow: f, ..Default::default() });
        }
        if w.first_start == Time::MAX {
            w.first_start = Time::ZERO;
        }
        if let Some(n) = &s.ngwa {
            crate::ngwa::attach_routers(n, &mut w)?;
        }
        w.events.schedule(Time::ZERO, Event::Sample);
        crate::xcp::attach_routers(&mut w).map_err(|m| ("topology".to_string(), m))?;
        Ok(w)
    }

    /// Runs until every finite transfer is complete, or the stop time.
    pub fn run(&mut self) {
        while let Some((t, ev)) = self.events.pop() {
            if t > self.stop {
                self.now = self.stop;
                break;
            }
            debug_assert!(t >= self.now, "time ran backward");
            self.now = t;
            match ev {
                Event::Arrive(i, p) => self.arrive(i, p),
                Event::Timer(e) => self.timer(e),
                Event::Start(a) => self.start_app(a),
                Event::UdpTick(u) => self.udp_tick(u),
                Event::AppTick(a) => self.app_tick(a),
                Event::Sample => self.sample(),
            }
            if self.has_finite && self.finite_left == 0 || self.over_memory.is_some() {
                break;
            }
        }
        for i in 0..self.ifaces.len() {
            self.drain(i as u32);
            let backlog = self.ifaces[i].queue.backlog().bytes;
            self.ifaces[i].account_backlog(self.now, backlog);
        }
    }

    /// What the run's growing parts hold, bytes: packets, pending events,
    /// connections, and the recorded samples.
    pub fn memory_in_use(&self) -> u64 {
        let series: usize = self.traces.iter().map(|t| t.time_s.capacity() * 6).sum::<usize>()
            + self.queue_series.0.capacity() * 2
            + self.rtt_samples_ms.capacity();
        (self.pool.slots.capacity() * std::mem::size_of::<Packet>()
            + self.events.len() * 32
            + self.tcp.capacity() * std::mem::size_of::<TcpFlow>()
            + series * 8) as u64
    }

    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// Packets still in queues, on the wire or being serialized.
    pub fn in_flight(&self) -> u64 {
        self.pool.live
    }

    /// Whether events of TCP flow `flow` are logged now.
    fn logging(&self, flow: u32) -> bool {
        self.packet_log.as_ref().is_some_and(|l| l.flow == flow && self.now >= l.from && self.now <= l.to)
    }

    /// A segment of flow `p.flow` as a log field: direction, then the data
    /// range or the ACK with its SACK blocks, relative to the sender's ISN.
    fn describe_segment(&self, flow: u32, dir: u8, seg: &Segment) -> String {
        let iss = self.tcp[flow as usize].conns[0].iss();
        let rel = |x: u32| x.wrapping_sub(iss);
        if dir == 0 {
            let rx = if seg.retransmission { " R" } else { "" };
            format!("data {}+{}{}", rel(seg.seq), seg.len, rx)
        } else {
            let sacks: Vec<String> = seg.opts.sack.as_slice().iter().map(|&(l, r)| format!("{}-{}", rel(l), rel(r))).collect();
            format!("ack {} win={} sack=[{}]", rel(seg.ack), seg.window, sacks.join(","))
        }
    }

    fn log(&mut self, line: String) {
        let t = self.now.secs_f64();
        if let Some(l) = self.packet_log.as_mut() {
            l.lines.push(format!("{t:.6} {line}"));
        }
    }

    fn view(&self, p: &Packet) -> TcpView {
        let key = self.tcp[p.flow as usize].key;
        TcpView {
            key: if p.dir == 0 { key } else { key.reversed() },
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

    /// Hands a packet to `node`: delivers it there or forwards it.
    fn at_node(&mut self, node: u32, pi: u32) {
        let dst = self.pool.slots[pi as usize].dst;
        if dst == node {
            let p = self.pool.slots[pi as usize];
            self.pool.release(pi);
            self.delivered += 1;
            self.counts(&p).received += 1;
            if p.udp {
                self.udp[p.flow as usize].bytes_received += (p.size - IP_HEADER - UDP_HEADER) as u64;
            } else {
                self.tcp_receive(p);
            }
            return;
        }
        let out = self.topo.route(node, dst);
        debug_assert_ne!(out, NO_ROUTE);
        self.enqueue(out, pi);
    }

    fn enqueue(&mut self, out: u32, pi: u32) {
        let now = self.now;
        self.drain(out);
        let p = &self.pool.slots[pi as usize];
        let size = p.size;
        if self.ifaces[out as usize].gateway.is_some() {
            let view = (!p.udp).then(|| self.view(p));
            let gw = self.ifaces[out as usize].gateway.as_mut().expect("checked");
            match view {
                Some(v) => gw.on_data(now, &v),
                None => gw.on_data_other(now, size),
            }
        }
        if self.ifaces[out as usize].stage.is_some() {
            self.stage_call(out, pi, None);
        }
        let iface = &mut self.ifaces[out as usize];
        let start = now.max(iface.busy_until);
        let res = if start == now {
            // An idle link: the packet leaves the queue as it enters.
            iface.queue.pass(now, size, &mut iface.rng).map(|(enq, deq)| (enq, Some(deq)))
        } else {
            iface.queue.enqueue(now, start, size, &mut iface.rng).map(|enq| (enq, None)).map_err(|(_, why, ev)| (why, ev))
        };
        let (ev, departure) = match res {
            Ok(evs) => evs,
            Err((_, ev)) => {
                iface.stats.queue_drops += 1;
                if let Some(gw) = iface.gateway.as_mut() {
                    gw.on_queue(now, &ev);
                }
                self.drop_packet(pi, out);
                return;
            }
        };
        if let Some(gw) = iface.gateway.as_mut() {
            gw.on_queue(now, &ev);
        }
        iface.account_backlog(now, ev.backlog_bytes);
        let staged = iface.stage.is_some();
        if staged && departure.is_none() {
            iface.staged.push_back(pi);
        }
        self.transmit(out, pi, start);
        if let Some(deq) = departure {
            self.ifaces[out as usize].departed(now, &deq);
            if staged {
                self.stage_call(out, pi, Some(now));
            }
        }
    }

    /// Hands packet `pi` to interface `i`'s stage: offered to the queue
    /// (`departure` None) or leaving it at `departure`. A stage that changes
    /// the in-band fields' wire length changes the packet's size from the
    /// next hop on (this hop's transmission time is already fixed).
    fn stage_call(&mut self, i: u32, pi: u32, departure: Option<Time>) {
        let World { ifaces, pool, tcp, now, .. } = self;
        let iface = &mut ifaces[i as usize];
        let Some(stage) = iface.stage.as_mut() else { return };
        let p = &mut pool.slots[pi as usize];
        let queue = QueueState {
            backlog_bytes: iface.queue.backlog().bytes,
            capacity_bytes: iface.capacity_bytes,
            rate: iface.spec.rate,
        };
        let before = p.seg.inband.wire_len();
        let meta = (!p.udp).then(|| {
            let key = tcp[p.flow as usize].key;
            TcpMeta {
                key: if p.dir == 0 { key } else { key.reversed() },
                syn: p.seg.flags.syn(),
                fin: p.seg.flags.fin(),
                rst: p.seg.flags.rst(),
                payload_len: p.seg.len,
            }
        });
        let mut fp = ForwardPacket { tcp: meta, size: p.size, inband: (!p.udp).then_some(&mut p.seg.inband) };
        match departure {
            None => stage.on_enqueue(*now, &mut fp, &queue),
            Some(at) => stage.on_dequeue(at, &mut fp, &queue),
        }
        let after = p.seg.inband.wire_len();
        p.size = p.size + after - before;
    }

    /// Attaches a router stage to the interface named `iface` ("R1->R2").
    pub fn attach_stage(&mut self, iface: &str, stage: Box<dyn ForwardStage>) -> Result<(), String> {
        let i = self.topo.iface_by_name(iface).ok_or_else(|| format!("no interface {iface:?}"))?;
        self.ifaces[i as usize].stage = Some(stage);
        Ok(())
    }

    /// The stage of interface `iface`, to read its state after a run.
    pub fn stage(&self, iface: &str) -> Option<&dyn ForwardStage> {
        let i = self.topo.iface_by_name(iface)?;
        self.ifaces[i as usize].stage.as_deref()
    }

    fn drop_packet(&mut self, pi: u32, iface: u32) {
        let p = self.pool.slots[pi as usize];
        if !p.udp && self.logging(p.flow) {
            let line = format!("drop {} at {}", self.describe_segment(p.flow, p.dir, &p.seg), self.ifaces[iface as usize].spec.name);
            self.log(line);
        }
        self.pool.release(pi);
        self.dropped += 1;
        self.counts(&p).lost += 1;
    }

    /// Serializes packet `pi` on interface `i` from `start` (when the packets
    /// ahead of it are out) and schedules its arrival at the far end.
    fn transmit(&mut self, i: u32, pi: u32, start: Time) {
        let iface = &mut self.ifaces[i as usize];
        let size = self.pool.slots[pi as usize].size;
        let done = start + iface.spec.rate.tx_time(size as u64);
        iface.busy_until = done;
        if iface.pcap.is_some() {
            let p = self.pool.slots[pi as usize];
            let key = if p.udp { self.udp[p.flow as usize].key } else { self.view(&p).key };
            self.ifaces[i as usize].pcap.as_mut().expect("checked").record(start, &p, key);
        }
        if self.monitor == Some(i) {
            let p = &self.pool.slots[pi as usize];
            if p.udp || !self.traces.iter().any(|t| t.flow == p.flow as usize) {
                self.cross_bytes += size as u64;
            }
        }
        let iface = &mut self.ifaces[i as usize];
        if iface.rng.bernoulli(iface.spec.loss) {
            iface.stats.loss_drops += 1;
            self.drop_packet(pi, i);
        } else {
            // Departures are serialized and the delay is fixed, so arrivals
            // over one interface are scheduled in time order: a FIFO lane.
            self.events.schedule_in_lane(i, done + iface.spec.delay, Event::Arrive(i, pi));
        }
    }

    /// Takes out of interface `i`'s queue, at their start times, the packets
    /// whose transmission has started by now: the queue as it is at `now`.
    fn drain(&mut self, i: u32) {
        if self.ifaces[i as usize].stage.is_none() {
            self.ifaces[i as usize].drain(self.now);
        } else {
            self.drain_staged(i);
        }
    }

    /// [`World::drain`] for an interface with a stage: each packet leaving
    /// is handed to the stage at its start time, in order.
    #[inline(never)]
    fn drain_staged(&mut self, i: u32) {
        let now = self.now;
        loop {
            let iface = &mut self.ifaces[i as usize];
            let Some(&start) = iface.queue.front() else { break };
            if start > now {
                break;
            }
            let (_, _, ev) = iface.queue.dequeue(start).expect("front exists");
            iface.departed(start, &ev);
            let pi = iface.staged.pop_front().expect("a staged id per queued packet");
            self.stage_call(i, pi, Some(start));
        }
    }

    fn arrive(&mut self, i: u32, pi: u32) {
        if self.ifaces[i as usize].stage.is_some() {
            // The stage sees the packet leave before it arrives.
            self.drain(i);
        }
        let now = self.now;
        let node = self.ifaces[i as usize].spec.to;
        // A gateway on this node's interface back toward the sender sees the
        // packets flowing against its data direction: ACKs to rewrite
        // (SPEC.md section 1, rule 5).
        let back = self.ifaces[i as usize].reverse as usize;
        if self.ifaces[back].gateway.is_some() {
            let p = self.pool.slots[pi as usize];
            if !p.udp {
                // The controller reads the queue it watches as it is now.
                self.drain(back as u32);
                let v = self.view(&p);
                let iface = &mut self.ifaces[back];
                if let Some(w) = iface.gateway.as_mut().and_then(|g| g.on_ack(now, &v)) {
                    self.pool.slots[pi as usize].seg.window = w;
                    iface.stats.acks_rewritten += 1;
                }
            }
        }
        self.at_node(node, pi);
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
        for seg in out.drain(..) {
            let size = IP_HEADER + seg.inband.wire_len() + seg.header_len() + seg.len;
            let pi = self.pool.alloc(Packet { dst: to, flow, dir: side, udp: false, size, seg });
            self.created += 1;
            self.tcp[flow as usize].packets[side as usize].sent += 1;
            self.at_node(from, pi);
        }
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

    fn tcp_receive(&mut self, p: Packet) {
        let side = 1 - p.dir;
        let now = self.now;
        if self.logging(p.flow) {
            let line = format!("recv {}", self.describe_segment(p.flow, p.dir, &p.seg));
            self.log(line);
        }
        let f = &mut self.tcp[p.flow as usize];
        // A bulk flow vanishes at its stop time; a rate-limited one closes
        // instead (`app_tick`) and lives on until its FIN is through.
        if f.app.is_none() && f.stop.is_some_and(|s| now >= s) {
            return;
        }
        f.conns[side as usize].on_segment(now, &p.seg, &mut self.out);
        if side == 1 && f.done_at.is_none() {
            if let Some(b) = f.bytes {
                if f.conns[1].stats().bytes_delivered >= b {
                    f.done_at = Some(now);
                    self.finite_left -= 1;
                }
            }
        }
        self.emit_segments(p.flow, side);
    }

    fn start_app(&mut self, a: u32) {
        let now = self.now;
        let ntcp = self.tcp.len() as u32;
        if a < ntcp {
            let f = &mut self.tcp[a as usize];
            f.started = true;
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
        } else {
            let u = &mut self.udp[(a - ntcp) as usize];
            if let Some((on, _)) = u.onoff {
                u.on_until = now + Time::from_secs_f64(u.rng.exponential(on.secs_f64()));
            }
            self.udp_tick(a - ntcp);
        }
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
                self.events.schedule(t, Event::UdpTick(ui));
            }
            return;
        }
        let gap = rate.tx_time(u.packet as u64);
        if now >= u.on_until {
            // Off period, then a new on period (exponential both).
            let (on, off) = u.onoff.expect("on_until is set only for on/off sources");
            let resume = now + Time::from_secs_f64(u.rng.exponential(off.secs_f64()));
            u.on_until = resume + Time::from_secs_f64(u.rng.exponential(on.secs_f64()));
            self.events.schedule(resume, Event::UdpTick(ui));
            return;
        }
        let size = IP_HEADER + UDP_HEADER + u.packet;
        u.packets.sent += 1;
        u.bytes_sent += u.packet as u64;
        let (src, dst) = (u.src, u.dst);
        self.events.schedule(now + gap, Event::UdpTick(ui));
        let pi = self.pool.alloc(Packet { dst, flow: ui, dir: 0, udp: true, size, seg: Segment::default() });
        self.created += 1;
        self.at_node(src, pi);
    }

    fn sample(&mut self) {
        let t = self.now.secs_f64();
        if let Some(m) = self.monitor {
            self.drain(m);
            self.queue_series.0.push(t);
            self.queue_series.1.push(self.ifaces[m as usize].queue.backlog().bytes as f64);
            let cross = std::mem::take(&mut self.cross_bytes) as f64 * 8.0 / self.sample_interval.secs_f64();
            let rate = self.ifaces[m as usize].spec.rate.0 as f64;
            self.avail_mbps.push(if self.now > Time::ZERO { (rate - cross).max(0.0) / 1e6 } else { f64::NAN });
        }
        for tr in &mut self.traces {
            let f = &self.tcp[tr.flow];
            if !f.started || f.done_at.is_some() {
                continue;
            }
            let p = f.conns[0].probe();
            tr.time_s.push(t);
            tr.cwnd.push(p.cwnd as f64);
            tr.rwnd.push(p.rwnd as f64);
            tr.effective.push(p.effective_window as f64);
            tr.ssthresh.push(p.ssthresh.min(1 << 40) as f64);
            tr.rtt_ms.push(p.last_rtt.map(|r| r.millis_f64()).unwrap_or(f64::NAN));
            tr.delivered.push(f.conns[1].stats().bytes_delivered as f64);
            tr.bwe_mbps.push(f.conns[0].bandwidth_estimate().map_or(f64::NAN, |b| b * 8.0 / 1e6));
        }
        for f in &self.tcp {
            if f.started && f.done_at.is_none() && f.start >= self.warmup {
                if let Some(r) = f.conns[0].last_rtt() {
                    self.rtt_samples_ms.push(r.millis_f64());
                }
            }
        }
        if let Some(limit) = self.memory_limit {
            let used = self.memory_in_use();
            if used > limit {
                self.over_memory = Some(used);
            }
        }
        self.events.schedule(self.now + self.sample_interval, Event::Sample);
    }
}
