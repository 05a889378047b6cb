//! Sans-IO TCP for the netreturn simulator.
//!
//! A [`Connection`] is a state machine fed with segments and timer
//! expiries, each call carrying `now`; it appends the segments it wants sent
//! to a caller-provided `Vec<Segment>`. It never reads a clock or does I/O.
//!
//! What it implements: three-way handshake negotiating MSS, window scale,
//! SACK-permitted and timestamps (RFC 9293, RFC 7323, RFC 2018); RTO per
//! RFC 6298 with RTTM (RFC 7323) or Karn; delayed ACK; SACK generation;
//! fast retransmit and recovery (RFC 5681, RFC 6582 without SACK, RFC 6675
//! with SACK, optionally PRR per RFC 6937); limited transmit (RFC 3042);
//! go-back-N after a timeout; congestion controls under [`cc`].
//!
//! Known differences from ns-3 3.44: without SACK, ns-3 emulates a SACK
//! scoreboard from dupACKs and runs PRR on it; here a non-SACK connection
//! uses RFC 6582 cwnd inflation whatever [`Recovery`] says. There is no
//! TIME-WAIT timer. Receive-window edge cases follow Linux where ns-3 and
//! Linux differ (docs/tcp.md, "Receive window"): out-of-window data is
//! dropped, the segment at SND.UNA is retransmitted into any window, and a
//! closed window is probed below SND.UNA by the persist timer.

pub mod cc;
pub mod config;
pub mod connection;
pub mod rtt;
pub mod sack;
pub mod segment;
pub mod stats;

pub use cc::cubic::CubicConfig;
pub use cc::sarbe::SarbeConfig;
pub use cc::xcp::XcpConfig;
pub use config::{CcKind, CcName, CcParams, LossSsthresh, NoConfig, PrrBound, Recovery, RecoveryFromCwr, TcpConfig};
pub use connection::{Connection, State};
pub use netreturn_control::ngwa_receiver::{NgwaConfig, NgwaReceiver};
pub use segment::{Options, SackBlocks, Segment, MAX_SACK_BLOCKS};
pub use stats::{Probe, TcpStats};
