//! Counters and a snapshot of the window variables, read by the simulator.

use netreturn_base::Time;

/// Cumulative counters of one connection (both directions).
///
/// Laid out in declaration order (`repr(C)`): the eight counters a segment
/// in the steady state updates fill the first 64 bytes, the counters of
/// losses, probes and ECN follow ([`crate::Connection`] keeps the first
/// line with its per-segment state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TcpStats {
    pub segments_received: u64,
    /// Segments sent, pure ACKs and SYN/FIN included.
    pub segments_sent: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
    /// Receiver: in-order payload bytes delivered to the app, no duplicates.
    pub bytes_delivered: u64,
    /// Payload bytes put on the wire, retransmissions included.
    pub bytes_sent: u64,
    /// Sender: payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    pub rtt_samples: u64,
    pub dupacks_received: u64,
    pub bytes_retransmitted: u64,
    pub segments_retransmitted: u64,
    /// Fast retransmits (triple-dupACK or SACK loss detection events).
    pub fast_retransmits: u64,
    /// Retransmission timer expiries (SYN timeouts included).
    pub timeouts: u64,
    /// Times DupThresh duplicate ACKs in a row arrived, whether or not the
    /// congestion control retransmits on them (seed 001 Fig. 6).
    pub triple_dupacks: u64,
    /// Duplicate ACKs that arrived with DupThresh or more in a row: the
    /// third of a run and every one after it (a run of n counts n - 2).
    /// ns-3's sender calls `DupAck (header, count)` on each of them, so a
    /// count kept there at `count >= 3` rather than `count == 3` reads this
    /// (docs/ngwa.md, "How triple dupACKs are counted").
    pub dupacks_past_threshold: u64,
    /// Data segments that arrived above `rcv_nxt`.
    pub out_of_order_received: u64,
    /// Data segments carrying nothing new.
    pub duplicates_received: u64,
    /// Data segments dropped because they began beyond the right edge of
    /// the window we advertised (RFC 9293 section 3.10.7.4).
    pub beyond_window_received: u64,
    /// Persist-timer expiries: zero-window probes, or segments sent into a
    /// window smaller than the next one (RFC 9293 section 3.8.6.1).
    pub window_probes: u64,
    /// Receiver: data segments that arrived marked CE (RFC 3168).
    pub ce_received: u64,
    /// Sender: window reductions answering ECE (at most one per window).
    pub ecn_reductions: u64,
}

/// The sender's window variables at one instant (SPEC.md section 4 time
/// series: cwnd, rwnd, effective window, ssthresh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Congestion window in bytes (`u64::MAX` for standard TCP, which has none).
    pub cwnd: u64,
    pub ssthresh: u64,
    /// The peer's advertised window, scaled, in bytes.
    pub rwnd: u64,
    /// `min(cwnd, rwnd)`.
    pub effective_window: u64,
    /// Bytes in flight (RFC 6675 pipe during SACK recovery).
    pub in_flight: u64,
    pub srtt: Option<Time>,
    pub last_rtt: Option<Time>,
    /// Current retransmission timeout, backoff included.
    pub rto: Time,
}
