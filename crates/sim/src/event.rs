//! The event queue: a binary heap ordered by `(time, sequence)`, so events
//! at the same instant run in the order they were scheduled and a run is
//! deterministic.

use netreturn_base::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens. Payloads are indices into the simulator's tables, so an
/// entry is 24 bytes and the heap stays cache-friendly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Interface `0` finished serializing its current packet.
    TxDone(u32),
    /// Packet `1` reaches the far end of interface `0`.
    Arrive(u32, u32),
    /// TCP endpoint (2 x flow + side) timer.
    Timer(u32),
    /// Application `0` starts.
    Start(u32),
    /// UDP source `0` sends its next packet.
    UdpTick(u32),
    /// Periodic sampling of queues and traced flows.
    Sample,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest event.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    pub fn schedule(&mut self, time: Time, event: Event) {
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, event });
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.time, e.event))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Pending events (for end-of-run accounting).
    pub fn pending(&self) -> impl Iterator<Item = Event> + '_ {
        self.heap.iter().map(|e| e.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_at_the_same_time_keep_their_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(Time(5), Event::Start(1));
        q.schedule(Time(3), Event::Start(2));
        q.schedule(Time(5), Event::Start(3));
        q.schedule(Time(3), Event::Start(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
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
}
