//! Fields a packet carries in band for a router-assisted scheme, beside its
//! ordinary headers: the NGWA IPv4 option (seed 001, SPEC.md 2.6) and the
//! XCP congestion header (Katabi, Handley & Rohrs 2002 section 3.1; SPEC.md
//! 2.7). Routers read and lower them, end hosts fill and echo them.
//!
//! A packet carries at most one scheme's fields: the simulator runs one
//! scheme at a time, and [`InBand::None`] costs a run that uses neither
//! nothing but the tag. On the wire they cost bytes ([`InBand::wire_len`]),
//! which the simulator adds to the packet size; the real gateway reads and
//! writes them through `netreturn-wire`'s views.

/// The XCP congestion header's fields (XCP paper section 3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XcpFields {
    /// `H_cwnd`: the sender's congestion window, bytes.
    pub cwnd: u32,
    /// `H_rtt`: the sender's RTT estimate, microseconds (0: none yet).
    pub rtt_us: u32,
    /// `H_feedback`: the window change asked for, then lowered by every
    /// router on the path, bytes (may be negative).
    pub feedback: i32,
    /// The header rides an ACK, echoing the feedback its data carried.
    pub ack: bool,
}

/// In-band fields of one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InBand {
    #[default]
    None,
    /// NGWA (seed 001 section 2): the smallest `W_node` of the routers
    /// passed so far, bytes.
    Ngwa(u32),
    Xcp(XcpFields),
}

impl InBand {
    /// Bytes these fields add to an IPv4 packet: the NGWA option is 6
    /// bytes, padded to the 4-byte unit of the IPv4 header (RFC 791); the
    /// XCP shim is 16 bytes (`netreturn-wire`'s layout).
    pub const fn wire_len(&self) -> u32 {
        match self {
            InBand::None => 0,
            InBand::Ngwa(_) => 8,
            InBand::Xcp(_) => 16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_band_fields_cost_their_wire_bytes_and_none_costs_nothing() {
        assert_eq!(InBand::None.wire_len(), 0);
        assert_eq!(InBand::Ngwa(1000).wire_len(), 8);
        assert_eq!(InBand::Xcp(XcpFields::default()).wire_len(), 16);
        assert!(std::mem::size_of::<InBand>() <= 20);
    }
}
