//! Sans-IO TCP for the netreturn simulator.
//!
//! A [`Connection`] is a state machine fed with segments and timer
//! expiries, each call carrying `now`; it appends the segments it wants sent
//! to a caller-provided `Vec<Segment>`. It never reads a clock or does I/O.

pub mod segment;

pub use segment::{Options, SackBlocks, Segment, MAX_SACK_BLOCKS};
