//! What a controller sees of packets and of its queue. Both the simulator
//! (from its packet structs) and the real gateway (from parsed bytes) fill
//! these in, so controllers never depend on either.

/// The header fields of one TCP segment (in `netreturn_base`, so that the
/// wire parsers depend on nothing above it).
pub use netreturn_base::TcpView;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueEventKind {
    /// A packet was accepted into the queue.
    Enqueue,
    /// A packet left the queue (its transmission starts).
    Dequeue,
    /// A packet arriving at the queue was refused.
    Drop,
}

/// One change of the watched (data-direction) queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueEvent {
    pub kind: QueueEventKind,
    /// Size of the packet concerned, bytes.
    pub size: u32,
    /// Occupancy after the event, bytes.
    pub backlog_bytes: u64,
    /// Occupancy after the event, packets.
    pub backlog_packets: u32,
}
