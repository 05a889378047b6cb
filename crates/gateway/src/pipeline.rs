//! The forwarding pipeline of the bridge, sans-IO.
//!
//! Per direction, a frame goes through:
//!
//! ```text
//! arrival --> classify --> loss (Bernoulli) --> queue discipline (Fifo)
//!         --> serialization at `rate` --> delay line (`delay` +/- `jitter`) --> egress
//! ```
//!
//! *Serialization* uses a departure clock, not a token bucket: the link is
//! busy until `busy_until`; the head of the queue starts its transmission at
//! `start = max(arrival, busy_until)`, leaves the queue then (the
//! `Dequeue` event a controller sees: "its transmission starts"), and the
//! link is busy until `start + size * 8 / rate`. The frame is released after
//! that and the propagation delay. So back-to-back frames are spaced by
//! exactly their serialization time, and no burst ever exceeds the rate
//! (a token bucket would let a bucket's worth through at once).
//!
//! *Jitter* ([`Jitter`], `--jitter`): each frame's propagation delay is
//! `delay + u`, `u` drawn uniformly in `[-jitter, +jitter]` from a stream of
//! its own (so a jittered run draws the same losses as an unjittered one).
//! By default the delay line stays FIFO: a frame whose draw would release it
//! before its predecessor leaves with it instead (release = max(own draw,
//! previous release)), the usual choice for an emulated link, since a real
//! path rarely reorders and reordering makes TCP retransmit spuriously. So
//! frames more than `2 * jitter` apart see exactly the uniform draw (mean
//! `delay`); denser frames are held behind their predecessors, which raises
//! their mean delay by up to `jitter`. With `reorder`, each frame leaves at
//! its own draw, as NetEm's tfifo does with a delay distribution (the RWM
//! paper's section IV.A: "this variability induces some packet reordering").
//!
//! The *window controller* (SPEC.md section 1 rule 5) watches the A -> B
//! queue (the data direction): every TCP frame arriving A -> B is shown to
//! it (`on_data`), every other frame is counted (`on_data_other`), every
//! enqueue / dequeue / drop of that queue is an `on_queue` event. Frames
//! going B -> A (the ACKs) are offered to it when they leave their own
//! queue, the moment they are forwarded ("when an ACK leaves the gateway",
//! EWT Algorithm 1; "when an ACK leaves Q_B", AWM), and rewritten in place
//! with the RFC 1624 checksum update when it asks for a lower window.
//!
//! The pipeline never reads a clock: callers pass `now`, which must not
//! decrease between calls. Times given to the controller are clamped to be
//! non-decreasing, since a dequeue happens at its virtual start time, which
//! can precede the `now` of the call that discovers it.

pub use crate::hook::{NoController, WindowHook};
use crate::ngwa::NgwaWire;
use crate::stats::{DirStats, Stats};
use netreturn_base::{Ecn, Rate, Rng, Time};
use netreturn_control::queue::aqm::{Aqm, AqmParams, Meta};
use netreturn_control::queue::{Backlog, Discipline, DropReason, Fifo};
use netreturn_control::{QueueEvent, QueueEventKind, QueueKind, QueueState};
use netreturn_wire::frame::{self, Class, TcpLocation};
use std::collections::VecDeque;

/// A direction of the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// From interface A (the data senders' side) to B: the data direction,
    /// whose queue the controller watches.
    AtoB,
    /// From B back to A: the ACK direction, where windows are rewritten.
    BtoA,
}

impl Dir {
    fn index(self) -> usize {
        match self {
            Dir::AtoB => 0,
            Dir::BtoA => 1,
        }
    }
}

/// What one direction of the bridge emulates.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// Line rate of the egress link; `None` forwards without serialization
    /// delay (the queue then never builds up).
    pub rate: Option<Rate>,
    /// One-way propagation delay added after serialization.
    pub delay: Time,
    /// Probability that a frame is lost on arrival (before the queue).
    pub loss: f64,
    /// Admission policy of the egress queue.
    pub discipline: Discipline,
    /// A queue that decides at dequeue (CoDel, FQ-CoDel, PIE, FQ-PIE,
    /// DualPI2: `netreturn_control::queue::aqm`) in place of the FIFO, with
    /// its `aqm` table; its limit is the discipline's.
    pub aqm: Option<(QueueKind, Option<AqmParams>)>,
}

/// Per-frame delay variation of one direction's delay line (see the module
/// documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Jitter {
    /// Half-width of the uniform variation: delays are in `[delay -
    /// amount, delay + amount]` (never before the frame's serialization
    /// ends).
    pub amount: Time,
    /// Release each frame at its own draw, reordering frames (NetEm), instead
    /// of keeping the line FIFO.
    pub reorder: bool,
}

/// A frame waiting in a queue.
struct Queued {
    data: Vec<u8>,
    arrival: Time,
    /// Where its TCP header is, if it is a well-formed TCP/IPv4 segment.
    tcp: Option<TcpLocation>,
    /// Where its IPv4 header is, for a CE mark.
    ip: Option<usize>,
}

struct Link {
    cfg: LinkConfig,
    fifo: Fifo<Queued>,
    /// The dequeue-time queue, when the link runs one (`fifo` then stays
    /// empty).
    aqm: Option<Aqm<Queued>>,
    /// The departure clock: the link is transmitting until then.
    busy_until: Time,
    /// Frames in flight on the wire: (release time, frame), in release
    /// order (release = end of serialization + delay, +/- jitter; FIFO
    /// unless the jitter reorders).
    line: VecDeque<(Time, Vec<u8>)>,
    rng: Rng,
    jitter: Jitter,
    /// The jitter's own stream: turning jitter on leaves the loss and RED
    /// draws as they were.
    jitter_rng: Rng,
    /// Release time of the last frame put on the line (FIFO jitter).
    last_release: Time,
}

impl Link {
    /// When a frame whose serialization ends at `sent` leaves the delay
    /// line.
    fn release_time(&mut self, sent: Time) -> Time {
        let base = sent + self.cfg.delay;
        let j = self.jitter.amount.nanos() as f64;
        let t = if j > 0.0 {
            // Uniform in [-j, +j] ns around the base delay, never before
            // the frame is on the wire.
            let u = self.jitter_rng.uniform(-j, j).round();
            let ns = (base.nanos() as f64 + u).max(sent.nanos() as f64);
            Time::from_nanos(ns as u64)
        } else {
            base
        };
        if self.jitter.reorder {
            t
        } else {
            let t = t.max(self.last_release);
            self.last_release = t;
            t
        }
    }

    /// Puts a frame on the line, keeping the line sorted by release time
    /// (frames released at the same time keep their order).
    fn put_on_line(&mut self, release: Time, data: Vec<u8>) {
        if self.line.back().is_none_or(|&(t, _)| t <= release) {
            self.line.push_back((release, data));
        } else {
            let i = self.line.partition_point(|&(t, _)| t <= release);
            self.line.insert(i, (release, data));
        }
    }
}

impl Link {
    /// When the head of the queue starts transmitting, if there is one. An
    /// AQM link frees at `busy_until` and then serves whatever has arrived.
    fn head_start(&self) -> Option<Time> {
        match &self.aqm {
            Some(a) => a.oldest().map(|t| t.max(self.busy_until)),
            None => self.fifo.iter().next().map(|q| q.arrival.max(self.busy_until)),
        }
    }

    fn backlog(&self) -> Backlog {
        match &self.aqm {
            Some(a) => a.backlog(),
            None => self.fifo.backlog(),
        }
    }

    /// A queue event of `kind` for a frame of `size`, with the backlog now.
    fn event(&self, kind: QueueEventKind, size: u32) -> QueueEvent {
        let b = self.backlog();
        QueueEvent { kind, size, backlog_bytes: b.bytes, backlog_packets: b.packets }
    }
}

/// The whole bridge: two directions and an optional controller on each.
pub struct Pipeline<H: WindowHook> {
    links: [Link; 2],
    /// The controller watching the A -> B queue (rewriting the ACKs B -> A).
    hook: Option<H>,
    /// The controller watching the B -> A queue (rewriting the ACKs A -> B):
    /// a scenario's `reverse = { queue = "awm" }`, for flows both ways.
    hook_ba: Option<H>,
    stats: Stats,
    /// Frames longer than this are passed untouched (not parsed).
    max_frame: usize,
    /// Last time given to the hook (kept non-decreasing).
    hook_clock: Time,
    /// NGWA's router and / or receiver-edge step on the A -> B frames.
    ngwa: Option<NgwaWire>,
    /// NGWA's router step on the B -> A frames (a router marks what it
    /// forwards both ways, as the simulator's routers do; a receiver edge
    /// serves the receivers on side B only).
    ngwa_back: Option<NgwaWire>,
}

/// Offset of the jitter streams from the directions' streams (0 and 1).
const JITTER_STREAM: u64 = 16;
/// Offset of the AQMs' hash salts.
const AQM_STREAM: u64 = 32;

/// Ethernet II with one VLAN tag at a 1500-byte MTU.
pub const DEFAULT_MAX_FRAME: usize = 1518;

impl<H: WindowHook> Pipeline<H> {
    /// `seed` drives the loss and RED draws (one derived stream per
    /// direction, STYLE.md convention 3).
    pub fn new(a_to_b: LinkConfig, b_to_a: LinkConfig, hook: Option<H>, seed: u64) -> Pipeline<H> {
        let mk = |cfg: LinkConfig, stream| Link {
            fifo: Fifo::new(cfg.discipline.clone()),
            // The flow hash's salt, from the seed (Linux draws it at set-up).
            aqm: cfg.aqm.as_ref().and_then(|(kind, params)| {
                kind.aqm(cfg.discipline.limit(), Rng::derive(seed, stream + AQM_STREAM).next_u64(), params.as_ref())
            }),
            cfg,
            busy_until: Time::ZERO,
            line: VecDeque::new(),
            rng: Rng::derive(seed, stream),
            jitter: Jitter::default(),
            jitter_rng: Rng::derive(seed, stream + JITTER_STREAM),
            last_release: Time::ZERO,
        };
        Pipeline {
            links: [mk(a_to_b, 0), mk(b_to_a, 1)],
            hook,
            hook_ba: None,
            stats: Stats::default(),
            max_frame: DEFAULT_MAX_FRAME,
            hook_clock: Time::ZERO,
            ngwa: None,
            ngwa_back: None,
        }
    }

    /// Sets the delay variation of `dir`'s delay line.
    pub fn set_jitter(&mut self, dir: Dir, j: Jitter) {
        self.links[dir.index()].jitter = j;
    }

    /// Runs NGWA on the A -> B frames ([`crate::ngwa`]).
    pub fn set_ngwa(&mut self, n: NgwaWire) {
        self.ngwa = Some(n);
    }
    pub fn ngwa(&self) -> Option<&NgwaWire> {
        self.ngwa.as_ref()
    }
    /// Runs NGWA's router on the B -> A frames too (a wire with a router
    /// and no edge: the edge's receivers are on side B).
    pub fn set_ngwa_back(&mut self, n: NgwaWire) {
        assert!(!n.roles().edge, "a receiver edge serves side B's receivers: the A -> B wire only");
        self.ngwa_back = Some(n);
    }
    pub fn ngwa_back(&self) -> Option<&NgwaWire> {
        self.ngwa_back.as_ref()
    }

    pub fn set_max_frame(&mut self, n: usize) {
        self.max_frame = n;
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    pub fn hook(&self) -> Option<&H> {
        self.hook.as_ref()
    }
    /// Runs `h` on the B -> A queue: it sees the frames going B -> A as
    /// data and rewrites the ACKs going A -> B, as the A -> B controller
    /// does the other way.
    pub fn set_hook_ba(&mut self, h: H) {
        self.hook_ba = Some(h);
    }
    pub fn hook_ba(&self) -> Option<&H> {
        self.hook_ba.as_ref()
    }
    /// The controller watching the queue of `dir`.
    fn watcher(&mut self, dir: Dir) -> Option<&mut H> {
        match dir {
            Dir::AtoB => self.hook.as_mut(),
            Dir::BtoA => self.hook_ba.as_mut(),
        }
    }
    /// Counts frames the egress refused (called by the I/O layer).
    pub fn count_tx_error(&mut self, dir: Dir) {
        let d = self.dir_stats(dir);
        d.tx_errors += 1;
        d.forwarded -= 1;
    }
    /// Counts frames lost before they reached the pipeline (called by the
    /// I/O layer): delivered truncated, or dropped by the kernel.
    pub fn count_rx_losses(&mut self, dir: Dir, truncated: u64, dropped: u64) {
        let d = self.dir_stats(dir);
        d.rx_truncated += truncated;
        d.rx_dropped += dropped;
    }
    /// Frames currently queued, per direction.
    pub fn queued_packets(&self, dir: Dir) -> u32 {
        self.links[dir.index()].backlog().packets
    }

    fn dir_stats(&mut self, dir: Dir) -> &mut DirStats {
        match dir {
            Dir::AtoB => &mut self.stats.a_to_b,
            Dir::BtoA => &mut self.stats.b_to_a,
        }
    }

    fn hook_time(&mut self, t: Time) -> Time {
        self.hook_clock = self.hook_clock.max(t);
        self.hook_clock
    }

    /// A frame arrived on the ingress of `dir` at `now`.
    pub fn on_frame(&mut self, now: Time, dir: Dir, mut data: Vec<u8>) {
        let len = data.len();
        let mut tcp = None;
        {
            let max = self.max_frame;
            let st = self.dir_stats(dir);
            st.received += 1;
            if len > max {
                st.oversize += 1;
            } else {
                match frame::classify(&data) {
                    Class::Tcp(mut loc) => {
                        st.tcp += 1;
                        if let Some(n) = self.ngwa.as_mut() {
                            n.on_arrival(&mut data, &mut loc);
                        }
                        tcp = Some(loc);
                    }
                    Class::Fragment => {
                        st.fragments += 1;
                        st.non_tcp += 1;
                    }
                    Class::OtherIpv4 { .. } | Class::NotIpv4(_) => st.non_tcp += 1,
                    Class::Malformed(_) => st.malformed_passed += 1,
                }
            }
        }
        let t = self.hook_time(now);
        if let Some(h) = self.watcher(dir) {
            match &tcp {
                Some(loc) => h.on_data(t, &loc.view),
                None => h.on_data_other(t, len as u32),
            }
        }
        let link = &mut self.links[dir.index()];
        if link.rng.bernoulli(link.cfg.loss) {
            self.dir_stats(dir).dropped_loss += 1;
            return;
        }
        if link.aqm.is_some() {
            return self.enqueue_aqm(now, dir, data, tcp);
        }
        // The frames whose transmission started by `now` have left the
        // queue before this one is admitted: the I/O loop hands over a whole
        // batch of received frames (each at its kernel receive time) before
        // it polls, so without this a frame read late met a backlog that
        // still held them, and a full buffer dropped frames a FIFO served at
        // the line rate would have taken (as `enqueue_aqm` already does).
        // A link without a rate has no departure clock: its frames still
        // leave at the next poll, queued until then, as before.
        if link.cfg.rate.is_some() {
            self.serve(now, dir);
        }
        let link = &mut self.links[dir.index()];
        // RED with `ecn` marks an ECN-capable frame instead of dropping it
        // early (RFC 3168 section 5).
        let (ip, ecn) = frame::ipv4_ecn(&data).map_or((None, Ecn::NotEct), |(o, e)| (Some(o), e));
        let item = Queued { data, arrival: now, tcp, ip };
        let res = link.fifo.enqueue(now, item, len as u32, ecn.is_capable(), &mut link.rng);
        let ev = match res {
            Ok((ev, marked)) => {
                if marked && ecn != Ecn::Ce {
                    self.mark_queued_ce(dir);
                }
                ev
            }
            Err((_, _, ev)) => {
                self.dir_stats(dir).dropped_queue += 1;
                ev
            }
        };
        let t = self.hook_time(now);
        if let Some(h) = self.watcher(dir) {
            h.on_queue(t, &ev);
        }
    }

    /// Advances both directions to `now`: starts every transmission due by
    /// then and hands every frame whose release time has come to `out`, in
    /// order per direction.
    pub fn poll(&mut self, now: Time, out: &mut impl FnMut(Dir, Vec<u8>)) {
        for dir in [Dir::AtoB, Dir::BtoA] {
            self.serve(now, dir);
            let link = &mut self.links[dir.index()];
            let mut n = 0u64;
            let mut bytes = 0u64;
            while let Some(&(t, _)) = link.line.front() {
                if t > now {
                    break;
                }
                let (_, f) = link.line.pop_front().unwrap();
                n += 1;
                bytes += f.len() as u64;
                out(dir, f);
            }
            let st = self.dir_stats(dir);
            st.forwarded += n;
            st.forwarded_bytes += bytes;
        }
    }

    /// [`Pipeline::on_frame`] for a link with a dequeue-time queue: the
    /// link is brought up to `now` first, so the queue chooses among the
    /// frames that had arrived when it chose; then the frame joins.
    fn enqueue_aqm(&mut self, now: Time, dir: Dir, data: Vec<u8>, tcp: Option<TcpLocation>) {
        self.serve(now, dir);
        let (ip, ecn) = frame::ipv4_ecn(&data).map_or((None, Ecn::NotEct), |(o, e)| (Some(o), e));
        // RFC 8290 section 4.1.1: a flow is its 5-tuple; other frames share
        // one key.
        let flow = tcp.as_ref().map_or(0, |l| {
            let k = l.view.key;
            ((k.src as u64) << 32 | k.dst as u64) ^ ((k.sport as u64) << 16 | k.dport as u64).rotate_left(17)
        });
        let meta = Meta::new(data.len() as u32, flow, ecn);
        let item = Queued { data, arrival: now, tcp, ip };
        let link = &mut self.links[dir.index()];
        let mut dropped = vec![];
        let queue = link.aqm.as_mut().expect("an AQM link");
        let accepted = queue.enqueue(now, item, meta, &mut link.rng, &mut |q, m, why| dropped.push((q, m, why)));
        self.book_aqm_drops(now, dir, dropped);
        if accepted {
            let ev = self.links[dir.index()].event(QueueEventKind::Enqueue, meta.size);
            let t = self.hook_time(now);
            if let Some(h) = self.watcher(dir) {
                h.on_queue(t, &ev);
            }
        }
    }

    /// Sets CE on the frame `dir`'s FIFO admitted last, as its discipline
    /// decided (the caller skips a frame already CE); the IPv4
    /// checksum is patched (RFC 1624), as at an AQM's mark.
    fn mark_queued_ce(&mut self, dir: Dir) {
        let Some(q) = self.links[dir.index()].fifo.back_mut() else { return };
        if let Some(ip) = q.ip {
            if frame::mark_ce(&mut q.data, ip) {
                self.dir_stats(dir).ecn_marked += 1;
            }
        }
    }

    /// Counts frames an AQM dropped (on arrival, or from a head when it
    /// chose) and shows each to the controller watching the queue.
    fn book_aqm_drops(&mut self, at: Time, dir: Dir, dropped: Vec<(Queued, Meta, DropReason)>) {
        for (_, m, _) in dropped {
            self.dir_stats(dir).dropped_queue += 1;
            let ev = self.links[dir.index()].event(QueueEventKind::Drop, m.size);
            let t = self.hook_time(at);
            if let Some(h) = self.watcher(dir) {
                h.on_queue(t, &ev);
            }
        }
    }

    /// The next frame to send on `dir`'s link at `start`: the FIFO's head,
    /// or what the AQM chooses (marking it CE or dropping others on the
    /// way); `None` if the AQM dropped everything.
    fn take_next(&mut self, start: Time, dir: Dir) -> Option<(Queued, u32, QueueEvent)> {
        let link = &mut self.links[dir.index()];
        let Some(queue) = link.aqm.as_mut() else {
            return Some(link.fifo.dequeue(start).expect("head exists"));
        };
        let mut dropped = vec![];
        let sent = queue.dequeue(start, &mut link.rng, &mut |q, m, why| dropped.push((q, m, why)));
        self.book_aqm_drops(start, dir, dropped);
        let mut d = sent?;
        if d.meta.marked {
            // RFC 3168 section 5: CE instead of a drop; the IPv4 checksum is
            // patched, never recomputed (no laundering).
            if let Some(ip) = d.item.ip {
                if frame::mark_ce(&mut d.item.data, ip) {
                    self.dir_stats(dir).ecn_marked += 1;
                }
            }
        }
        let ev = self.links[dir.index()].event(QueueEventKind::Dequeue, d.meta.size);
        Some((d.item, d.meta.size, ev))
    }

    /// Moves from the queue onto the wire every frame whose transmission
    /// starts by `now`.
    fn serve(&mut self, now: Time, dir: Dir) {
        let i = dir.index();
        while let Some(start) = self.links[i].head_start() {
            if start > now {
                break;
            }
            let Some((mut q, mut size, ev)) = self.take_next(start, dir) else { continue };
            // An ACK leaving `dir` is offered to the controller of the
            // other direction's queue. Its window is rewritten before NGWA
            // may grow the frame: `loc`'s offsets are those of the frame as
            // it came.
            let other = match dir {
                Dir::AtoB => Dir::BtoA,
                Dir::BtoA => Dir::AtoB,
            };
            let t = self.hook_time(start);
            if let (Some(h), Some(loc)) = (self.watcher(other), &q.tcp) {
                if let Some(w) = h.on_ack(t, &loc.view) {
                    // Rule 1 (never raise) is the controller's contract;
                    // checked again here because a raised window is the
                    // one harm a gateway must never do.
                    if w < loc.view.window {
                        frame::rewrite_window(&mut q.data, loc, w);
                        self.dir_stats(dir).rewritten += 1;
                    }
                }
            }
            let link = &mut self.links[i];
            let wire = match dir {
                Dir::AtoB => self.ngwa.as_mut(),
                Dir::BtoA => self.ngwa_back.as_mut(),
            };
            if let (Some(n), Some(loc)) = (wire, &q.tcp) {
                // Seed 001 section 4.1: NGWA runs at dequeue, with the queue
                // as the packet leaves it (as the simulator's stage call).
                let queue = QueueState {
                    backlog_bytes: link.backlog().bytes,
                    capacity_bytes: link.cfg.discipline.limit().bytes(1500),
                    rate: link.cfg.rate.unwrap_or(Rate::bps(0)),
                };
                let t = self.hook_clock.max(start);
                self.hook_clock = t;
                // The B -> A wire has no edge: it hands the hook nothing.
                let hook = if dir == Dir::AtoB { self.hook.as_mut() } else { None };
                n.on_dequeue(t, &mut q.data, loc, &queue, hook);
                // The frame is sent, and takes the link, at its new size.
                size = q.data.len() as u32;
            }
            let tx = match link.cfg.rate {
                Some(r) if r.bits_per_sec() > 0 => r.tx_time(size as u64),
                _ => Time::ZERO,
            };
            link.busy_until = start + tx;
            let release = link.release_time(link.busy_until);
            let t = self.hook_time(start);
            if let Some(h) = self.watcher(dir) {
                h.on_queue(t, &ev);
            }
            self.links[i].put_on_line(release, q.data);
        }
    }

    /// The next time something is due (a transmission start or a release),
    /// if anything is pending; the I/O loop sleeps until then.
    pub fn next_wakeup(&self) -> Option<Time> {
        self.links.iter().flat_map(|l| [l.head_start(), l.line.front().map(|&(t, _)| t)]).flatten().min()
    }
}
