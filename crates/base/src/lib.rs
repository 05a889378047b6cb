//! Shared vocabulary of netreturn: integer time, rates, byte counts, a seeded
//! random generator, flow identifiers, and the one parser of quantities
//! written with units ([`units`]).
//!
//! Nothing here reads a clock or does I/O (STYLE.md convention 1): every
//! caller passes `now` in, and every random draw comes from an [`Rng`] the
//! caller owns and seeded.

mod ecn;
mod flow;
mod inband;
mod rate;
mod rng;
mod time;
pub mod units;

pub use ecn::Ecn;
pub use flow::{FlowKey, TcpFlags, TcpView};
pub use inband::{InBand, XcpFields};
pub use rate::Rate;
pub use rng::Rng;
pub use time::Time;
pub use units::Size;
