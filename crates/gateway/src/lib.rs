//! The real Linux gateway of netreturn.
//!
//! Two layers, following quinn's split between a sans-IO protocol core and
//! the socket code (STYLE.md):
//!
//! * [`pipeline`]: everything the bridge does to frames, as a deterministic
//!   function of (frames, arrival times): classification, Bernoulli loss,
//!   the queue discipline, serialization at the configured rate, the
//!   propagation delay line, and the window controller hooks with the
//!   in-place ACK rewrite. It reads no clock and does no I/O, so it is tested
//!   without namespaces (`tests/pipeline.rs`).
//! * [`sys`] (Linux only): AF_PACKET sockets with `PACKET_MMAP` rings (or
//!   batched `recvmmsg` / `sendmmsg`), the epoll + timerfd loop that feeds
//!   the pipeline with `CLOCK_MONOTONIC` time.
//!
//! [`control`] attaches `netreturn_control::WindowGateway` (EWT, EWA, AWM,
//! SAP-LAW, RWM) as the pipeline's window hook.
//!
//! [`ngwa`] runs NGWA's router rule (the simulator's `NgwaRouter` stage)
//! and its receiver rule at the receiver's edge on real packets.
//!
//! [`kernel`] is the second datapath (`--datapath kernel`): the kernel
//! forwards and shapes, eBPF programs rewrite the ACKs, the same controllers
//! run in user space at a tick.
//!
//! [`cli`] parses the command line of the `netreturn-gateway` binary and
//! [`stats`] holds the counters it reports.

pub mod cli;
pub mod control;
pub mod hook;
pub mod kernel;
pub mod ngwa;
pub mod pipeline;
pub mod stats;
#[cfg(target_os = "linux")]
pub mod sys;

pub use pipeline::{Dir, Jitter, LinkConfig, Pipeline, WindowHook};
pub use stats::Stats;
