//! FIFO queue disciplines: DropTail, RED and Adaptive RED.
//!
//! Every discipline is a FIFO that differs only in its admission decision,
//! so [`Fifo`] holds the packets and the byte / packet counts, and a
//! [`Discipline`] decides at each arrival. The disciplines are separate types
//! (STYLE.md: no one class with flags) sharing the hard-limit check of
//! [`Limit::admits`].

mod droptail;
mod red;

pub use droptail::DropTail;
pub use red::{AdaptiveRed, AdaptiveRedConfig, Red, RedConfig};

use crate::view::{QueueEvent, QueueEventKind};
use netreturn_base::{Rng, Time};
use std::collections::VecDeque;

/// Current occupancy of a queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub bytes: u64,
    pub packets: u32,
}

/// Hard capacity of a queue, in bytes or in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Bytes(u64),
    Packets(u32),
}

impl Limit {
    /// The shared tail-drop check: would a packet of `size` bytes still fit?
    pub fn admits(self, size: u32, backlog: Backlog) -> bool {
        match self {
            Limit::Bytes(b) => backlog.bytes + size as u64 <= b,
            Limit::Packets(p) => backlog.packets < p,
        }
    }

    /// Capacity in bytes (`B` in SPEC.md), converting a packet limit with the
    /// given typical packet size.
    pub fn bytes(self, typical_packet: u32) -> u64 {
        match self {
            Limit::Bytes(b) => b,
            Limit::Packets(p) => p as u64 * typical_packet as u64,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The hard limit was reached (tail drop).
    Overflow,
    /// RED dropped early, with probability (`min_th <= avg < max_th`).
    Early,
    /// RED dropped because the average exceeded its upper threshold.
    Forced,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Drop(DropReason),
}

/// The admission policy of a queue; a closed set chosen at configuration.
#[derive(Clone, Debug)]
pub enum Discipline {
    DropTail(DropTail),
    Red(Red),
    AdaptiveRed(AdaptiveRed),
}

impl Discipline {
    pub fn admit(&mut self, now: Time, size: u32, backlog: Backlog, rng: &mut Rng) -> Verdict {
        match self {
            Discipline::DropTail(d) => d.admit(size, backlog),
            Discipline::Red(r) => r.admit(now, size, backlog, rng),
            Discipline::AdaptiveRed(a) => a.admit(now, size, backlog, rng),
        }
    }

    /// Called after a packet left; RED needs to know when the queue idles.
    pub fn on_dequeue(&mut self, now: Time, after: Backlog) {
        match self {
            Discipline::DropTail(_) => {}
            Discipline::Red(r) => r.on_dequeue(now, after),
            Discipline::AdaptiveRed(a) => a.on_dequeue(now, after),
        }
    }

    pub fn limit(&self) -> Limit {
        match self {
            Discipline::DropTail(d) => d.limit,
            Discipline::Red(r) => r.limit(),
            Discipline::AdaptiveRed(a) => a.limit(),
        }
    }
}

/// A FIFO of items of type `T` (packet handles in the simulator, frames in
/// the real gateway) under a [`Discipline`]. Each call returns the
/// [`QueueEvent`] that window controllers observe.
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    items: VecDeque<(T, u32)>,
    backlog: Backlog,
    discipline: Discipline,
}

impl<T> Fifo<T> {
    pub fn new(discipline: Discipline) -> Fifo<T> {
        Fifo { items: VecDeque::new(), backlog: Backlog::default(), discipline }
    }

    pub fn backlog(&self) -> Backlog {
        self.backlog
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// The item at the head, next to leave.
    pub fn front(&self) -> Option<&T> {
        self.items.front().map(|(t, _)| t)
    }
    pub fn discipline(&self) -> &Discipline {
        &self.discipline
    }

    fn event(&self, kind: QueueEventKind, size: u32) -> QueueEvent {
        QueueEvent {
            kind,
            size,
            backlog_bytes: self.backlog.bytes,
            backlog_packets: self.backlog.packets,
        }
    }

    /// Offers `item` of `size` bytes. On refusal the item comes back with the
    /// reason, so the caller can account for the drop.
    pub fn enqueue(
        &mut self,
        now: Time,
        item: T,
        size: u32,
        rng: &mut Rng,
    ) -> Result<QueueEvent, (T, DropReason, QueueEvent)> {
        match self.discipline.admit(now, size, self.backlog, rng) {
            Verdict::Accept => {
                self.items.push_back((item, size));
                self.backlog.bytes += size as u64;
                self.backlog.packets += 1;
                Ok(self.event(QueueEventKind::Enqueue, size))
            }
            Verdict::Drop(reason) => {
                let ev = self.event(QueueEventKind::Drop, size);
                Err((item, reason, ev))
            }
        }
    }

    pub fn dequeue(&mut self, now: Time) -> Option<(T, u32, QueueEvent)> {
        let (item, size) = self.items.pop_front()?;
        self.backlog.bytes -= size as u64;
        self.backlog.packets -= 1;
        self.discipline.on_dequeue(now, self.backlog);
        Some((item, size, self.event(QueueEventKind::Dequeue, size)))
    }

    /// Items still queued, front first (for end-of-run accounting).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(t, _)| t)
    }
}
