//! What a controller sees of packets and of its queue. Both the simulator
//! (from its packet structs) and the real gateway (from parsed bytes) fill
//! these in, so controllers never depend on either.

use netreturn_base::{FlowKey, TcpFlags};

/// The header fields of one TCP segment that controllers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpView {
    pub key: FlowKey,
    pub flags: TcpFlags,
    pub seq: u32,
    pub ack: u32,
    /// The raw 16-bit window field (before scaling).
    pub window: u16,
    /// Window-scale option (RFC 7323), present on SYN / SYN-ACK only.
    pub wscale: Option<u8>,
    /// MSS option, present on SYN / SYN-ACK only.
    pub mss: Option<u16>,
    /// TCP payload bytes.
    pub payload_len: u32,
}

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
