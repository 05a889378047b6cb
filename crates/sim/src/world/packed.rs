//! A segment as a packet slot carries it: the fields nearly every segment
//! has in 24 bytes ([`HotSegment`], inside the 64-byte [`super::Packet`]),
//! the parts few segments have ([`ColdSegment`]: SYN options, SACK blocks,
//! in-band fields) in a table beside the slots, read only when the hot part
//! says they are there.
//!
//! Census (docs/validation.md, session 17; `bench/scaled`, seed 1): every
//! TCP segment there carries timestamps; 12 % of the TCP packet hops carry
//! SACK blocks (1.5 on average), 0.04 % SYN options, none in-band fields.
//! So timestamps are hot and the rest cold. The TCP crate and the real
//! gateway keep [`Segment`] as it is; a slot holds the packed form and
//! [`HotSegment::unpack`] gives the segment back field for field.

use netreturn_base::{Ecn, InBand, TcpFlags};
use netreturn_tcp::{Options, SackBlocks, Segment};

/// The bits of [`HotSegment::bits`]: the ECN codepoint in the low two
/// (RFC 3168 section 5, [`Ecn::bits`]), then three flags.
const ECN_MASK: u8 = 0b11;
const RETRANSMISSION: u8 = 1 << 2;
const TIMESTAMPS: u8 = 1 << 3;
/// The segment has a cold part: the pool's cold table holds it.
const COLD: u8 = 1 << 4;
/// The packet's direction (1: from the flow's server) and kind: bits of
/// the packet, kept here where the slot has room for them.
const DIR: u8 = 1 << 5;
const UDP: u8 = 1 << 6;

/// What a packet slot holds of its segment: 24 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct HotSegment {
    pub seq: u32,
    pub ack: u32,
    /// Payload bytes ([`Segment::len`]).
    pub len: u32,
    /// TSval and TSecr (RFC 7323 section 3), when [`TIMESTAMPS`] is set.
    ts: (u32, u32),
    /// Raw 16-bit window field ([`Segment::window`]): a gateway rewrites it
    /// in place.
    pub window: u16,
    pub flags: TcpFlags,
    bits: u8,
}

/// The parts of a segment few segments carry: the SYN's options (RFC 9293
/// section 3.2: MSS; RFC 7323 section 2: window scale; RFC 2018 section 2:
/// SACK permitted), SACK blocks (RFC 2018 section 3) and the in-band fields
/// of the IP packet (NGWA, XCP). One cache line, in a table indexed like the
/// slots ([`super::Pool`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct ColdSegment {
    pub sack: SackBlocks,
    pub inband: InBand,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
}

impl ColdSegment {
    /// Whether `seg` has a cold part (a field here not at its default).
    /// All five tested without branches (`|`, not `||`): most segments have
    /// none of them.
    #[inline(always)]
    fn needed(seg: &Segment) -> bool {
        let o = &seg.opts;
        !o.sack.is_empty()
            | !matches!(seg.inband, InBand::None)
            | o.mss.is_some()
            | o.wscale.is_some()
            | o.sack_permitted
    }

    /// The cold part of `seg` (all defaults when it has none, which
    /// [`HotSegment::unpack`] then gives back).
    pub fn of(seg: &Segment) -> ColdSegment {
        let o = &seg.opts;
        ColdSegment { sack: o.sack, inband: seg.inband, mss: o.mss, wscale: o.wscale, sack_permitted: o.sack_permitted }
    }
}

impl HotSegment {
    /// The hot part of `seg`, sent in direction `dir`;
    /// [`HotSegment::has_cold`] says whether it has a cold part too
    /// ([`ColdSegment::of`], which the caller stores).
    #[inline(always)]
    pub fn pack(seg: &Segment, dir: u8) -> HotSegment {
        let bits = seg.ecn.bits()
            | if dir != 0 { DIR } else { 0 }
            | if seg.retransmission { RETRANSMISSION } else { 0 }
            | if seg.opts.timestamps.is_some() { TIMESTAMPS } else { 0 }
            | if ColdSegment::needed(seg) { COLD } else { 0 };
        HotSegment {
            seq: seg.seq,
            ack: seg.ack,
            len: seg.len,
            ts: seg.opts.timestamps.unwrap_or((0, 0)),
            window: seg.window,
            flags: seg.flags,
            bits,
        }
    }

    /// The segment packed as `self` (and `cold`, read only if this segment
    /// has a cold part: the slot's entry of the cold table, which may not
    /// exist when it has none).
    #[inline(always)]
    pub fn unpack(&self, cold: impl FnOnce() -> ColdSegment) -> Segment {
        let mut seg = Segment {
            seq: self.seq,
            ack: self.ack,
            flags: self.flags,
            window: self.window,
            opts: Options {
                mss: None,
                wscale: None,
                sack_permitted: false,
                timestamps: (self.bits & TIMESTAMPS != 0).then_some(self.ts),
                sack: SackBlocks::default(),
            },
            len: self.len,
            retransmission: self.bits & RETRANSMISSION != 0,
            inband: InBand::None,
            ecn: self.ecn(),
        };
        if self.has_cold() {
            let c = cold();
            seg.opts.mss = c.mss;
            seg.opts.wscale = c.wscale;
            seg.opts.sack_permitted = c.sack_permitted;
            seg.opts.sack = c.sack;
            seg.inband = c.inband;
        }
        seg
    }

    /// What a UDP packet holds here: no segment.
    pub fn of_udp() -> HotSegment {
        HotSegment { bits: UDP, ..HotSegment::default() }
    }

    /// The packet's direction: 0 from the flow's opener, 1 the reverse.
    #[inline(always)]
    pub fn dir(&self) -> u8 {
        (self.bits & DIR != 0) as u8
    }

    /// Whether the packet is a UDP datagram (no segment).
    #[inline(always)]
    pub fn udp(&self) -> bool {
        self.bits & UDP != 0
    }

    /// The ECN field of the IP packet carrying the segment.
    #[inline(always)]
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.bits & ECN_MASK)
    }

    /// Marks the packet's ECN field (RFC 3168 section 5).
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.bits = (self.bits & !ECN_MASK) | ecn.bits();
    }

    /// Whether the slot's [`ColdSegment`] holds a part of this segment.
    #[inline(always)]
    pub fn has_cold(&self) -> bool {
        self.bits & COLD != 0
    }

    /// This hot part marked as having no cold part: what a slot holds
    /// until [`super::Pool::put_cold`] gives it one.
    #[inline(always)]
    pub(super) fn without_cold(self) -> HotSegment {
        HotSegment { bits: self.bits & !COLD, ..self }
    }

    /// Records that the cold table now holds this segment's cold part.
    pub(super) fn set_cold(&mut self) {
        self.bits |= COLD;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::XcpFields;

    #[test]
    fn the_hot_part_is_24_bytes_and_the_cold_part_one_cache_line() {
        assert_eq!(std::mem::size_of::<HotSegment>(), 24);
        assert_eq!(std::mem::size_of::<ColdSegment>(), 64);
        assert_eq!(std::mem::align_of::<ColdSegment>(), 64);
    }

    fn round_trip(seg: &Segment) -> (Segment, bool) {
        let hot = HotSegment::pack(seg, 1);
        assert_eq!((hot.dir(), hot.udp()), (1, false));
        let cold = ColdSegment::of(seg);
        (hot.unpack(|| cold), hot.has_cold())
    }

    #[test]
    fn a_segment_with_every_optional_part_packs_and_unpacks_to_itself() {
        // A SYN with MSS, window scale, SACK permitted and timestamps, four
        // SACK blocks and XCP's in-band header: every optional part at once.
        let mut seg = Segment {
            seq: 0xFFFF_FFF0,
            ack: 7,
            flags: TcpFlags::SYN.union(TcpFlags::ACK).union(TcpFlags::ECE).union(TcpFlags::CWR),
            window: 65535,
            len: 70_000,
            retransmission: true,
            inband: InBand::Xcp(XcpFields { cwnd: 1 << 31, rtt_us: 40_000, feedback: -1460, ack: true }),
            ecn: Ecn::Ce,
            ..Segment::default()
        };
        seg.opts.mss = Some(1460);
        seg.opts.wscale = Some(14);
        seg.opts.sack_permitted = true;
        seg.opts.timestamps = Some((u32::MAX, 0));
        for k in 0..4 {
            assert!(seg.opts.sack.push(100 * k + 1, 100 * k + 50));
        }
        assert_eq!(seg.opts.sack.len(), 4);
        assert_eq!(round_trip(&seg), (seg, true));
        // NGWA's option instead of XCP's header.
        let ngwa = Segment { inband: InBand::Ngwa(12_345), ..seg };
        assert_eq!(round_trip(&ngwa), (ngwa, true));
    }

    #[test]
    fn each_optional_part_alone_makes_a_cold_part_and_comes_back() {
        let base = Segment { seq: 1, ack: 2, len: 1448, window: 512, ..Segment::default() };
        let mut with = Vec::new();
        let mut s = base;
        s.opts.mss = Some(536);
        with.push(s);
        let mut s = base;
        s.opts.wscale = Some(0);
        with.push(s);
        let mut s = base;
        s.opts.sack_permitted = true;
        with.push(s);
        let mut s = base;
        s.opts.sack.push(10, 20);
        with.push(s);
        with.push(Segment { inband: InBand::Ngwa(0), ..base });
        for s in &with {
            assert_eq!(round_trip(s), (*s, true), "{s:?}");
        }
    }

    #[test]
    fn a_plain_segment_has_no_cold_part_and_keeps_its_timestamps_ecn_and_retransmission_mark() {
        for ecn in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            for ts in [None, Some((0, 0)), Some((5, u32::MAX))] {
                for retransmission in [false, true] {
                    let mut seg = Segment {
                        seq: 99,
                        ack: 1,
                        flags: TcpFlags::ACK.union(TcpFlags::FIN),
                        len: 1458,
                        window: 3,
                        retransmission,
                        ecn,
                        ..Segment::default()
                    };
                    seg.opts.timestamps = ts;
                    // Unpacking must not read the cold table: the closure
                    // would panic.
                    let hot = HotSegment::pack(&seg, 0);
                    assert!(!hot.has_cold());
                    assert_eq!(ColdSegment::of(&seg), ColdSegment::default());
                    assert_eq!(hot.unpack(|| unreachable!("no cold part")), seg);
                    assert_eq!(hot.ecn(), ecn);
                }
            }
        }
    }

    #[test]
    fn marking_ce_changes_only_the_ecn_field() {
        let mut seg = Segment { seq: 5, retransmission: true, ecn: Ecn::Ect0, ..Segment::default() };
        seg.opts.timestamps = Some((1, 2));
        let mut hot = HotSegment::pack(&seg, 0);
        hot.set_ecn(Ecn::Ce);
        assert_eq!(hot.unpack(ColdSegment::default), Segment { ecn: Ecn::Ce, ..seg });
    }
}
