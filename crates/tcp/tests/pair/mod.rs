//! A `Pair` harness (quinn-proto style): a client and a server joined by two
//! tiny model links, with time jumping to the next event of either side.
//!
//! Each link is a FIFO served at a fixed rate with a byte limit (tail drop),
//! followed by a fixed one-way delay, plus an optional deterministic loss
//! rule on the data segments it carries.

#![allow(dead_code)]

use std::collections::VecDeque;

use netreturn_base::Time;
use netreturn_tcp::{Connection, Segment, TcpConfig};

/// Decides from (index of the data segment on this link, segment) whether
/// to drop it. Indices count payload-carrying segments, retransmissions too.
pub type LossRule = Box<dyn FnMut(u64, &Segment) -> bool>;

pub struct Link {
    pub delay: Time,
    /// Bytes per second.
    pub rate: u64,
    pub limit: u64,
    busy_until: Time,
    /// (departure time, wire bytes) of segments not yet serialized.
    queue: VecDeque<(Time, u64)>,
    queued: u64,
    in_flight: VecDeque<(Time, Segment)>,
    data_index: u64,
    ack_index: u64,
    pub loss: Option<LossRule>,
    /// Like `loss`, for pure ACKs (no payload, no SYN or FIN), indexed apart.
    pub ack_loss: Option<LossRule>,
    /// Changes a segment as it enters the link (a middlebox, e.g. a
    /// gateway lowering the window of ACKs).
    pub rewrite: Option<Box<dyn FnMut(&mut Segment)>>,
    /// Sees every segment that enters the link, after `rewrite`.
    pub observe: Option<Box<dyn FnMut(&Segment)>>,
    pub dropped: u64,
    pub overflowed: u64,
}

impl Link {
    pub fn new(delay: Time, rate_bps: u64, limit: u64) -> Link {
        Link {
            delay,
            rate: rate_bps / 8,
            limit,
            busy_until: Time::ZERO,
            queue: VecDeque::new(),
            queued: 0,
            in_flight: VecDeque::new(),
            data_index: 0,
            ack_index: 0,
            loss: None,
            ack_loss: None,
            rewrite: None,
            observe: None,
            dropped: 0,
            overflowed: 0,
        }
    }

    fn send(&mut self, now: Time, mut seg: Segment) {
        if let Some(f) = self.rewrite.as_mut() {
            f(&mut seg);
        }
        if let Some(f) = self.observe.as_mut() {
            f(&seg);
        }
        while let Some(&(t, b)) = self.queue.front() {
            if t > now {
                break;
            }
            self.queued -= b;
            self.queue.pop_front();
        }
        if seg.len > 0 {
            let i = self.data_index;
            self.data_index += 1;
            if let Some(rule) = self.loss.as_mut() {
                if rule(i, &seg) {
                    self.dropped += 1;
                    return;
                }
            }
        }
        if seg.seq_len() == 0 {
            let i = self.ack_index;
            self.ack_index += 1;
            if let Some(rule) = self.ack_loss.as_mut() {
                if rule(i, &seg) {
                    self.dropped += 1;
                    return;
                }
            }
        }
        let bytes = (seg.len + seg.header_len() + 20) as u64;
        if self.queued + bytes > self.limit {
            self.overflowed += 1;
            return;
        }
        let start = self.busy_until.max(now);
        let depart = start + Time(bytes * 1_000_000_000 / self.rate);
        self.busy_until = depart;
        self.queue.push_back((depart, bytes));
        self.queued += bytes;
        self.in_flight.push_back((depart + self.delay, seg));
    }

    fn next_arrival(&self) -> Option<Time> {
        self.in_flight.front().map(|x| x.0)
    }
}

pub struct Pair {
    pub now: Time,
    pub client: Connection,
    pub server: Connection,
    /// client -> server
    pub fwd: Link,
    /// server -> client
    pub rev: Link,
    buf: Vec<Segment>,
    pub steps: u64,
}

impl Pair {
    /// 10 Mb/s, 20 ms one-way, 64 kB queues both ways.
    pub fn new(client_cfg: &TcpConfig, server_cfg: &TcpConfig) -> Pair {
        Pair::with_links(
            client_cfg,
            server_cfg,
            Link::new(Time::from_millis(20), 10_000_000, 64_000),
            Link::new(Time::from_millis(20), 10_000_000, 64_000),
        )
    }

    pub fn with_links(client_cfg: &TcpConfig, server_cfg: &TcpConfig, fwd: Link, rev: Link) -> Pair {
        Pair {
            now: Time::ZERO,
            client: Connection::client(client_cfg, 0x1234_5678),
            server: Connection::server(server_cfg, 0xfedc_ba98),
            fwd,
            rev,
            buf: Vec::new(),
            steps: 0,
        }
    }

    fn flush(&mut self, from_client: bool) {
        let segs = std::mem::take(&mut self.buf);
        for s in &segs {
            if from_client {
                self.fwd.send(self.now, *s);
            } else {
                self.rev.send(self.now, *s);
            }
        }
        self.buf = segs;
        self.buf.clear();
    }

    pub fn open(&mut self) {
        self.client.open(self.now, &mut self.buf);
        self.flush(true);
    }

    pub fn send(&mut self, bytes: u64) {
        self.client.send(self.now, bytes, &mut self.buf);
        self.flush(true);
    }

    pub fn close(&mut self) {
        self.client.close(self.now, &mut self.buf);
        self.flush(true);
    }

    /// Advances to the next event; false when nothing is pending.
    pub fn step(&mut self) -> bool {
        let next =
            [self.fwd.next_arrival(), self.rev.next_arrival(), self.client.next_timer(), self.server.next_timer()]
                .into_iter()
                .flatten()
                .min();
        let Some(t) = next else { return false };
        self.now = self.now.max(t);
        self.steps += 1;
        while self.fwd.next_arrival().is_some_and(|a| a <= self.now) {
            let (_, seg) = self.fwd.in_flight.pop_front().unwrap();
            self.server.on_segment(self.now, &seg, &mut self.buf);
            self.flush(false);
        }
        while self.rev.next_arrival().is_some_and(|a| a <= self.now) {
            let (_, seg) = self.rev.in_flight.pop_front().unwrap();
            self.client.on_segment(self.now, &seg, &mut self.buf);
            self.flush(true);
        }
        if self.client.next_timer().is_some_and(|t| t <= self.now) {
            self.client.on_timer(self.now, &mut self.buf);
            self.flush(true);
        }
        if self.server.next_timer().is_some_and(|t| t <= self.now) {
            self.server.on_timer(self.now, &mut self.buf);
            self.flush(false);
        }
        true
    }

    /// Steps until `done` holds or `limit` of simulated time passes.
    pub fn drive_until(&mut self, limit: Time, mut done: impl FnMut(&Pair) -> bool) -> bool {
        while !done(self) {
            if self.now > limit || !self.step() {
                return done(self);
            }
        }
        true
    }

    /// Opens, sends `bytes`, and drives until the client sees them all ACKed.
    pub fn transfer(&mut self, bytes: u64, limit: Time) -> bool {
        self.open();
        self.send(bytes);
        self.drive_until(limit, |p| p.client.all_data_acked() && p.server.stats().bytes_delivered == bytes)
    }
}

/// Drops data segments whose index is in `which` (first transmissions and
/// retransmissions are counted alike).
pub fn drop_indices(which: Vec<u64>) -> LossRule {
    Box::new(move |i, _| which.contains(&i))
}

/// Drops the first transmission of the data segments starting at the given
/// stream offsets (0-based byte offsets, relative to the client's ISS + 1).
pub fn drop_first_tx_at(iss: u32, offsets: Vec<u64>) -> LossRule {
    Box::new(move |_, s| !s.retransmission && offsets.contains(&(s.seq.wrapping_sub(iss.wrapping_add(1)) as u64)))
}
