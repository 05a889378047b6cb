//! FIFO queue disciplines: DropTail, RED and Adaptive RED.
//!
//! Every discipline is a FIFO that differs only in its admission decision,
//! so [`Fifo`] holds the packets and the byte / packet counts, and a
//! [`Discipline`] decides at each arrival. The disciplines are separate types
//! (STYLE.md: no one class with flags) sharing the hard-limit check of
//! [`Limit::admits`].

pub mod aqm;
mod droptail;
mod red;

pub use droptail::DropTail;
pub use red::{AdaptiveRed, AdaptiveRedConfig, AredMode, Red, RedConfig, RedParams, RedSample};

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

/// A size as scenario files and flags write it (`"97kB"`, `"100p"`) is a
/// limit of the same kind.
impl From<netreturn_base::Size> for Limit {
    fn from(s: netreturn_base::Size) -> Limit {
        match s {
            netreturn_base::Size::Bytes(b) => Limit::Bytes(b),
            netreturn_base::Size::Packets(p) => Limit::Packets(p),
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
    /// A dequeue-time AQM (CoDel and its kin) dropped the head packet: it
    /// had waited too long for too long (RFC 8289 section 5.4).
    Sojourn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    /// Accept with CE set: an ECN-capable packet RED would have dropped
    /// (RFC 3168 section 5; `red.ecn`).
    Mark,
    Drop(DropReason),
}

/// The admission policy of a queue; a closed set chosen at configuration.
/// RED's state (averages, counters, its configuration, a trace) is boxed:
/// every interface holds a discipline, most of them DropTail, and a
/// simulated hop reads its interface's record, so the record stays small
/// (the scale benchmark's x100 has 12 400 interfaces).
#[derive(Clone, Debug)]
pub enum Discipline {
    DropTail(DropTail),
    Red(Box<Red>),
    AdaptiveRed(Box<AdaptiveRed>),
}

impl Discipline {
    /// Inlined, so that the common DropTail decision (a comparison) costs
    /// no call on every enqueue of the simulator.
    /// `ect`: the packet's transport is ECN-capable (RED may mark it).
    #[inline]
    pub fn admit(&mut self, now: Time, size: u32, ect: bool, backlog: Backlog, rng: &mut Rng) -> Verdict {
        match self {
            Discipline::DropTail(d) => d.admit(size, backlog),
            Discipline::Red(r) => r.admit_ect(now, size, ect, backlog, rng),
            Discipline::AdaptiveRed(a) => a.admit_ect(now, size, ect, backlog, rng),
        }
    }

    /// RED with [`RedConfig::head_in_device`]: it sees the backlog less the
    /// head packet.
    #[inline]
    fn head_in_device(&self) -> bool {
        match self {
            Discipline::DropTail(_) => false,
            Discipline::Red(r) => r.config().head_in_device,
            Discipline::AdaptiveRed(a) => a.config().head_in_device,
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

    /// RED and ARED: record every later arrival ([`RedSample`]); false for
    /// DropTail.
    pub fn enable_trace(&mut self) -> bool {
        match self {
            Discipline::DropTail(_) => false,
            Discipline::Red(r) => {
                r.enable_trace();
                true
            }
            Discipline::AdaptiveRed(a) => {
                a.enable_trace();
                true
            }
        }
    }
    /// The arrivals recorded since [`enable_trace`](Self::enable_trace).
    pub fn take_trace(&mut self) -> Vec<RedSample> {
        match self {
            Discipline::DropTail(_) => vec![],
            Discipline::Red(r) => r.take_trace(),
            Discipline::AdaptiveRed(a) => a.take_trace(),
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
    pub fn discipline_mut(&mut self) -> &mut Discipline {
        &mut self.discipline
    }

    fn event(&self, kind: QueueEventKind, size: u32) -> QueueEvent {
        QueueEvent { kind, size, backlog_bytes: self.backlog.bytes, backlog_packets: self.backlog.packets }
    }

    /// Offers `item` of `size` bytes; `ect` says its transport is
    /// ECN-capable. Accepted, the event comes with whether the discipline
    /// marked the item CE (RED with `ecn`: the caller writes it into the
    /// packet). On refusal the item comes back with the reason, so the
    /// caller can account for the drop.
    pub fn enqueue(
        &mut self,
        now: Time,
        item: T,
        size: u32,
        ect: bool,
        rng: &mut Rng,
    ) -> Result<(QueueEvent, bool), (T, DropReason, QueueEvent)> {
        let seen = match self.items.front() {
            // ns-3's device queue holds the head packet ([`RedConfig::head_in_device`]).
            Some(&(_, head)) if self.discipline.head_in_device() => {
                Backlog { bytes: self.backlog.bytes - head as u64, packets: self.backlog.packets - 1 }
            }
            _ => self.backlog,
        };
        match self.discipline.admit(now, size, ect, seen, rng) {
            v @ (Verdict::Accept | Verdict::Mark) => {
                self.items.push_back((item, size));
                self.backlog.bytes += size as u64;
                self.backlog.packets += 1;
                Ok((self.event(QueueEventKind::Enqueue, size), v == Verdict::Mark))
            }
            Verdict::Drop(reason) => {
                let ev = self.event(QueueEventKind::Drop, size);
                Err((item, reason, ev))
            }
        }
    }

    /// [`enqueue`](Self::enqueue) at an empty queue immediately followed by
    /// [`dequeue`](Self::dequeue): a packet reaching an idle link. Same
    /// admission, discipline updates and events (enqueue, then dequeue, and
    /// whether it was marked CE), but the item is never stored.
    pub fn pass(
        &mut self,
        now: Time,
        size: u32,
        ect: bool,
        rng: &mut Rng,
    ) -> Result<(QueueEvent, QueueEvent, bool), (DropReason, QueueEvent)> {
        debug_assert!(self.items.is_empty(), "pass through a non-empty queue");
        match self.discipline.admit(now, size, ect, self.backlog, rng) {
            v @ (Verdict::Accept | Verdict::Mark) => {
                let queued = self.backlog;
                self.backlog.bytes += size as u64;
                self.backlog.packets += 1;
                let enqueued = self.event(QueueEventKind::Enqueue, size);
                self.backlog = queued;
                self.discipline.on_dequeue(now, self.backlog);
                Ok((enqueued, self.event(QueueEventKind::Dequeue, size), v == Verdict::Mark))
            }
            Verdict::Drop(reason) => Err((reason, self.event(QueueEventKind::Drop, size))),
        }
    }

    pub fn dequeue(&mut self, now: Time) -> Option<(T, u32, QueueEvent)> {
        let (item, size) = self.items.pop_front()?;
        self.backlog.bytes -= size as u64;
        self.backlog.packets -= 1;
        self.discipline.on_dequeue(now, self.backlog);
        Some((item, size, self.event(QueueEventKind::Dequeue, size)))
    }

    /// The item last admitted, still queued (the real gateway writes a CE
    /// mark into it).
    pub fn back_mut(&mut self) -> Option<&mut T> {
        self.items.back_mut().map(|(t, _)| t)
    }

    /// Items still queued, front first (for end-of-run accounting).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(t, _)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pass` at an empty queue must be indistinguishable from `enqueue`
    /// then `dequeue`: same events, and the discipline (RED's average and
    /// idle time, the random draws) left in the same state.
    #[test]
    fn pass_equals_enqueue_then_dequeue() {
        let red = || {
            let c = RedConfig { ecn: true, ..RedConfig::linux_like(6_000, 1_500, Time::from_micros(120)) };
            Discipline::Red(Box::new(Red::new(c)))
        };
        let (mut a, mut b) = (Fifo::<()>::new(red()), Fifo::<()>::new(red()));
        let (mut ra, mut rb) = (Rng::new(3), Rng::new(3));
        for i in 0..2_000u64 {
            let now = Time::from_micros(i * 37);
            let size = 40 + (i * 7919 % 1_460) as u32;
            let ect = i % 3 == 0;
            // Mostly a standing queue (RED's average grows), drained now and then.
            if i % 50 == 0 {
                while a.dequeue(now).is_some() {}
                while b.dequeue(now).is_some() {}
                let got = a.pass(now, size, ect, &mut ra);
                let want =
                    b.enqueue(now, (), size, ect, &mut rb).map(|(enq, m)| (enq, b.dequeue(now).expect("queued").2, m));
                assert_eq!(got, want.map_err(|((), why, ev)| (why, ev)), "at {i}");
            } else {
                let got = a.enqueue(now, (), size, ect, &mut ra).map_err(|e| (e.1, e.2));
                let want = b.enqueue(now, (), size, ect, &mut rb).map_err(|e| (e.1, e.2));
                assert_eq!(got, want, "at {i}");
            }
            assert_eq!(a.backlog(), b.backlog());
        }
    }

    /// ns-3 3.44's bottleneck holds the next packet in its one-packet device
    /// queue (PointToPointNetDevice), so its `RedQueueDisc` counts one
    /// packet fewer than wait; `red.head_in_device` makes ours' RED see the
    /// same: the average, ns-3's empty-queue rule and the limit count the
    /// backlog less the head packet.
    #[test]
    fn with_head_in_device_red_sees_the_backlog_less_the_head_packet() {
        let fifo = |head_in_device: bool, min_th: u64| {
            // w_q = 1: the average is the backlog RED sees; above max_th a
            // forced drop (gentle off).
            let c = RedConfig {
                w_q: 1.0,
                min_th,
                max_th: min_th + 1,
                gentle: false,
                head_in_device,
                ..RedConfig::linux_like(3_000, 1_500, Time::from_micros(120))
            };
            Fifo::<()>::new(Discipline::Red(Box::new(Red::ns3(c))))
        };
        let verdict =
            |q: &mut Fifo<()>, rng: &mut Rng| q.enqueue(Time::ZERO, (), 1_500, false, rng).map(|_| ()).map_err(|e| e.1);
        let mut rng = Rng::new(1);
        // Thresholds of 1 and 2 bytes: one packet waiting is above max_th
        // when RED sees it, and an empty disc (ns-3's `nQueued > 1`) when not.
        let (mut sees_all, mut blind) = (fifo(false, 1), fifo(true, 1));
        for q in [&mut sees_all, &mut blind] {
            assert_eq!(verdict(q, &mut rng), Ok(()), "an empty queue admits");
        }
        assert_eq!(verdict(&mut sees_all, &mut rng), Err(DropReason::Forced));
        assert_eq!(verdict(&mut blind, &mut rng), Ok(()), "RED sees an empty disc: no drop");
        assert_eq!(verdict(&mut blind, &mut rng), Err(DropReason::Forced), "RED sees one packet");
        // No early signal (thresholds above the buffer): the limit alone.
        // Two packets (3000 B) waiting, RED blind to the head sees 1500 B:
        // a third fits, as in ns-3's disc of 3000 B under a device packet.
        let (mut sees_all, mut blind) = (fifo(false, 10_000), fifo(true, 10_000));
        for q in [&mut sees_all, &mut blind] {
            assert_eq!((verdict(q, &mut rng), verdict(q, &mut rng)), (Ok(()), Ok(())));
        }
        assert_eq!(verdict(&mut sees_all, &mut rng), Err(DropReason::Overflow));
        assert_eq!(verdict(&mut blind, &mut rng), Ok(()));
        assert_eq!(blind.backlog(), Backlog { bytes: 4_500, packets: 3 }, "the queue itself counts every packet");
        assert_eq!(verdict(&mut blind, &mut rng), Err(DropReason::Overflow));
    }
}
