//! The XCP congestion header (Katabi, Handley & Rohrs, SIGCOMM 2002,
//! section 3.1; SPEC.md 2.7).
//!
//! The paper names the fields (`H_cwnd`, `H_rtt`, `H_feedback`) but no wire
//! format. The layout chosen here is a 16-byte shim between the IPv4 header
//! and the transport header, announced by IP protocol 253 (RFC 3692
//! experimental) and naming the real transport in its first byte, as IPv6
//! extension headers do:
//!
//! ```text
//!  0               1               2               3
//! +---------------+---------------+-------+-------+---------------+
//! | next protocol | length (=16)  |version| format|   reserved    |
//! +---------------+---------------+-------+-------+---------------+
//! |                 H_cwnd: sender cwnd, bytes (u32)               |
//! +----------------------------------------------------------------+
//! |                 H_rtt: sender RTT estimate, microseconds (u32) |
//! +----------------------------------------------------------------+
//! |                 H_feedback: bytes, two's complement (i32)      |
//! +----------------------------------------------------------------+
//! ```
//!
//! `format` 0 is a data packet (the sender fills `H_cwnd`, `H_rtt` and its
//! desired `H_feedback`; routers may only lower `H_feedback`), 1 an ACK
//! echoing the feedback the data packet arrived with. Units: bytes because
//! the paper's feedback is in bytes ("H_feedback ... in bytes", section 3.3),
//! microseconds for the RTT (0 = no estimate yet, the paper's "H_rtt = 0 for
//! the first packet").

use crate::{get_u32, set_u32, Error, Result};

mod field {
    pub const NEXT_PROTO: usize = 0;
    pub const LENGTH: usize = 1;
    pub const VER_FMT: usize = 2;
    pub const CWND: usize = 4;
    pub const RTT: usize = 8;
    pub const FEEDBACK: usize = 12;
}

pub const HEADER_LEN: usize = 16;
pub const VERSION: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Data,
    Ack,
    Unknown(u8),
}

packet_view! {
    /// A zero-copy view of an XCP shim header and what follows it.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// The length byte (16) and the version.
    fn check(&self, _len: usize) -> Result<()> {
        if self.buffer.as_ref()[field::LENGTH] as usize != HEADER_LEN || self.version() != VERSION {
            return Err(Error::Malformed);
        }
        Ok(())
    }
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NEXT_PROTO]
    }
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_FMT] >> 4
    }
    pub fn format(&self) -> Format {
        match self.buffer.as_ref()[field::VER_FMT] & 0x0f {
            0 => Format::Data,
            1 => Format::Ack,
            f => Format::Unknown(f),
        }
    }
    /// `H_cwnd`, bytes.
    pub fn cwnd(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::CWND)
    }
    /// `H_rtt`, microseconds (0: unknown).
    pub fn rtt_us(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::RTT)
    }
    /// `H_feedback`, bytes (negative: decrease).
    pub fn feedback(&self) -> i32 {
        get_u32(self.buffer.as_ref(), field::FEEDBACK) as i32
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Writes the fixed bytes: next protocol, length, version, format.
    pub fn init(&mut self, next_proto: u8, format: Format) {
        let f = match format {
            Format::Data => 0,
            Format::Ack => 1,
            Format::Unknown(f) => f & 0x0f,
        };
        let b = self.buffer.as_mut();
        b[field::NEXT_PROTO] = next_proto;
        b[field::LENGTH] = HEADER_LEN as u8;
        b[field::VER_FMT] = VERSION << 4 | f;
        b[3] = 0;
    }
    pub fn set_cwnd(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::CWND, v)
    }
    pub fn set_rtt_us(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::RTT, v)
    }
    pub fn set_feedback(&mut self, v: i32) {
        set_u32(self.buffer.as_mut(), field::FEEDBACK, v as u32)
    }
    /// XCP router rule (section 3.5): a router only ever reduces the
    /// feedback; returns true if it changed.
    pub fn lower_feedback(&mut self, v: i32) -> bool {
        if v < self.feedback() {
            self.set_feedback(v);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_feedback_is_only_lowered() {
        let mut b = [0u8; 20];
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.init(crate::ipv4::protocol::TCP, Format::Data);
        p.set_cwnd(64_000);
        p.set_rtt_us(40_000);
        p.set_feedback(1500);
        assert!(p.lower_feedback(-300));
        assert!(!p.lower_feedback(100));
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.cwnd(), p.rtt_us(), p.feedback()), (64_000, 40_000, -300));
        assert_eq!(p.format(), Format::Data);
        assert_eq!(p.next_header(), 6);
    }
}
