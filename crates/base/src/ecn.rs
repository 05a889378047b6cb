//! The ECN field of the IP header (RFC 3168 section 5): the two low bits of
//! the IPv4 TOS / IPv6 traffic-class octet.

/// An ECN codepoint (RFC 3168 section 5, Figure 1). L4S senders use ECT(1)
/// (RFC 9331 section 4); classic ECN senders use ECT(0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// `00`: the transport does not support ECN.
    #[default]
    NotEct,
    /// `01`: ECN-capable, the L4S identifier (RFC 9331 section 4.1).
    Ect1,
    /// `10`: ECN-capable, classic.
    Ect0,
    /// `11`: congestion experienced.
    Ce,
}

impl Ecn {
    /// The codepoint of the two ECN bits (the low two bits of `tos`).
    pub const fn from_bits(tos: u8) -> Ecn {
        match tos & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two bits, as they sit in the low bits of the TOS octet.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// Whether a router may mark this packet instead of dropping it: ECT(0),
    /// ECT(1), or already CE (RFC 3168 section 5: a CE packet stays CE).
    pub const fn is_capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }

    /// The L4S identifier: ECT(1) or CE (RFC 9331 section 5.3 classifies a
    /// CE packet into the L queue).
    pub const fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codepoint_survives_a_round_trip_through_its_bits_and_other_tos_bits_are_ignored() {
        for ecn in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(ecn.bits()), ecn);
            assert_eq!(Ecn::from_bits(0xb8 | ecn.bits()), ecn, "DSCP EF must not change the codepoint");
        }
    }

    #[test]
    fn only_not_ect_forbids_marking_and_only_ect1_and_ce_are_l4s() {
        assert!(!Ecn::NotEct.is_capable());
        assert!(Ecn::Ect0.is_capable() && Ecn::Ect1.is_capable() && Ecn::Ce.is_capable());
        assert!(!Ecn::Ect0.is_l4s() && !Ecn::NotEct.is_l4s());
        assert!(Ecn::Ect1.is_l4s() && Ecn::Ce.is_l4s());
    }
}
