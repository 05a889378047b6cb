//! Router stages: mechanisms that read and rewrite the in-band fields of the
//! packets a router forwards (NGWA's path-minimum option, XCP's feedback),
//! next to the ACK rewriting of [`crate::gateway`].
//!
//! A stage is attached to one egress interface. The caller reports every
//! packet offered to that interface's queue ([`ForwardStage::on_enqueue`],
//! before the discipline decides) and every packet leaving it
//! ([`ForwardStage::on_dequeue`], when its transmission starts), each with
//! the queue's state. The simulator fills [`ForwardPacket`] from its packet
//! structs; the real gateway from `netreturn-wire`'s views (the NGWA option
//! of `wire::ipv4`, the XCP shim of `wire::xcp`), writing back what the
//! stage changed.

use netreturn_base::{FlowKey, InBand, Rate, Time};

/// What a stage sees of one forwarded packet.
#[derive(Debug)]
pub struct ForwardPacket<'a> {
    /// Addresses and ports; `None` for a packet that is not TCP.
    pub tcp: Option<TcpMeta>,
    /// IP packet size, bytes.
    pub size: u32,
    /// The packet's in-band fields, which the stage may rewrite; `None`
    /// where the packet cannot carry any (not TCP).
    pub inband: Option<&'a mut InBand>,
}

/// The TCP facts a stage keys on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpMeta {
    pub key: FlowKey,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub payload_len: u32,
}

/// The egress queue at the moment of the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueState {
    /// Bytes queued (not counting the packet being offered).
    pub backlog_bytes: u64,
    /// Queue capacity, bytes.
    pub capacity_bytes: u64,
    /// Rate of the egress link.
    pub rate: Rate,
}

impl QueueState {
    /// Free bytes of the queue (`Br` of seed 001 section 2).
    pub fn free_bytes(&self) -> u64 {
        self.capacity_bytes.saturating_sub(self.backlog_bytes)
    }
}

/// A mechanism acting on forward packets. Both methods default to doing
/// nothing, so a stage writes only the events it needs.
pub trait ForwardStage {
    /// A packet is offered to the queue, before admission.
    fn on_enqueue(&mut self, _now: Time, _pkt: &mut ForwardPacket<'_>, _queue: &QueueState) {}

    /// Whether [`ForwardStage::on_enqueue`] does anything. A stage that acts
    /// only as packets leave (NGWA) answers no, and its caller skips the
    /// call on every enqueue.
    fn acts_on_enqueue(&self) -> bool {
        true
    }

    /// A packet leaves the queue: its transmission starts at `at`.
    fn on_dequeue(&mut self, _at: Time, _pkt: &mut ForwardPacket<'_>, _queue: &QueueState) {}

    /// What the stage counted so far, named with its mechanism as prefix
    /// (`ngwa_inserted`): the simulator sums them over every interface into
    /// a run's results.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
