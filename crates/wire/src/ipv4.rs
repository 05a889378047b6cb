//! IPv4 (RFC 791) headers: fixed fields, options, fragments, and the NGWA
//! option (SPEC.md 2.6).

use crate::checksum;
use crate::{get_u16, get_u32, set_u16, set_u32, Error, Result};

/// IP protocol numbers the gateway distinguishes (IANA registry).
pub mod protocol {
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    /// RFC 3692 experimental value, used for the XCP shim ([`crate::xcp`]).
    pub const EXPERIMENT_253: u8 = 253;
}

mod field {
    use core::ops::Range;
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: usize = 2;
    pub const IDENT: usize = 4;
    /// Flags (3 bits: reserved, DF, MF) and fragment offset (13 bits).
    pub const FLG_OFF: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC_ADDR: Range<usize> = 12..16;
    pub const DST_ADDR: Range<usize> = 16..20;
}

/// Length of a header without options.
pub const HEADER_LEN: usize = 20;

/// Option type of NGWA (SPEC.md 2.6): copied flag 0, class 0, number 33.
///
/// Layout chosen here (the seed gives only the type): `type (1) | length = 6
/// (1) | W (4, big-endian, bytes)`, `W` being the minimum free window (in
/// bytes) of the routers on the path so far. A 32-bit byte count covers any
/// buffer this project models; the option length keeps the header a
/// multiple of 4 bytes when followed by two NOPs or an EOL + padding.
pub const OPT_NGWA: u8 = 33;
pub const OPT_NGWA_LEN: usize = 6;
const OPT_EOL: u8 = 0;
const OPT_NOP: u8 = 1;

packet_view! {
    /// A zero-copy view of an IPv4 packet.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Everything later getters rely on: version 4, `IHL >= 5`, the header
    /// within the buffer, and `header_len <= total_len <= buffer`. A buffer
    /// longer than `total_len` is accepted: Ethernet pads short frames to 60
    /// bytes (use [`Packet::payload`], which stops at `total_len`).
    fn check(&self, len: usize) -> Result<()> {
        if self.version() != 4 {
            return Err(Error::Malformed);
        }
        crate::declared_len(self.header_len(), HEADER_LEN, len)?;
        crate::declared_len(self.total_len() as usize, self.header_len(), len)
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }
    /// Header length in bytes (`IHL * 4`, RFC 791).
    pub fn header_len(&self) -> usize {
        (self.buffer.as_ref()[field::VER_IHL] & 0x0f) as usize * 4
    }
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] & 0x03
    }
    pub fn total_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LENGTH)
    }
    pub fn ident(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::IDENT)
    }
    pub fn dont_frag(&self) -> bool {
        get_u16(self.buffer.as_ref(), field::FLG_OFF) & 0x4000 != 0
    }
    pub fn more_frags(&self) -> bool {
        get_u16(self.buffer.as_ref(), field::FLG_OFF) & 0x2000 != 0
    }
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        (get_u16(self.buffer.as_ref(), field::FLG_OFF) & 0x1fff) << 3
    }
    /// True for any fragment of a fragmented datagram (first, middle or
    /// last): only an unfragmented packet carries a whole TCP header that the
    /// gateway may read and rewrite (RFC 791: MF set or offset non-zero).
    pub fn is_fragment(&self) -> bool {
        self.more_frags() || self.frag_offset() != 0
    }
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::CHECKSUM)
    }
    pub fn src_addr(&self) -> [u8; 4] {
        self.buffer.as_ref()[field::SRC_ADDR].try_into().unwrap()
    }
    pub fn dst_addr(&self) -> [u8; 4] {
        self.buffer.as_ref()[field::DST_ADDR].try_into().unwrap()
    }
    /// True if the header checksum verifies (RFC 791: the sum over the
    /// header, checksum included, is all ones).
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum(0, &self.buffer.as_ref()[..self.header_len()])) == 0xffff
    }
    /// The option bytes between the fixed header and `header_len`.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.header_len()]
    }
    pub fn option_iter(&self) -> OptionIter<'_> {
        OptionIter { data: self.options() }
    }
    /// The NGWA value carried, if the option is present and well formed.
    pub fn ngwa(&self) -> Option<u32> {
        self.option_iter().find_map(|o| match o {
            Ipv4Option::Ngwa(w) => Some(w),
            _ => None,
        })
    }
    /// The payload up to `total_len` (Ethernet padding excluded).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..self.total_len() as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_version_and_header_len(&mut self, header_len: usize) {
        debug_assert!(header_len.is_multiple_of(4) && (HEADER_LEN..=60).contains(&header_len));
        self.buffer.as_mut()[field::VER_IHL] = 0x40 | (header_len / 4) as u8;
    }
    pub fn set_total_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LENGTH, v)
    }
    pub fn set_ident(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::IDENT, v)
    }
    pub fn set_flags_and_offset(&mut self, dont_frag: bool, more_frags: bool, offset_bytes: u16) {
        let v = ((dont_frag as u16) << 14) | ((more_frags as u16) << 13) | ((offset_bytes >> 3) & 0x1fff);
        set_u16(self.buffer.as_mut(), field::FLG_OFF, v)
    }
    pub fn set_hop_limit(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v
    }
    pub fn set_next_header(&mut self, v: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = v
    }
    pub fn set_src_addr(&mut self, a: [u8; 4]) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&a)
    }
    pub fn set_dst_addr(&mut self, a: [u8; 4]) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&a)
    }
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::CHECKSUM, v)
    }
    /// Marks an ECN-capable packet CE (RFC 3168 section 5: ECT(0) or ECT(1)
    /// becomes `11`) and updates the header checksum incrementally (RFC 1624
    /// eq. 3), so a header that arrived with a bad checksum still fails its
    /// check. Returns false, writing nothing, for a Not-ECT packet (which a
    /// router must drop instead) and true for one already CE.
    pub fn set_ce_incremental(&mut self) -> bool {
        let tos_word = |b: &[u8]| u16::from_be_bytes([b[0], b[field::DSCP_ECN]]);
        let ecn = self.ecn();
        if ecn == 0 {
            return false;
        }
        if ecn == 0b11 {
            return true;
        }
        let old = tos_word(self.buffer.as_ref());
        self.buffer.as_mut()[field::DSCP_ECN] |= 0b11;
        let new = tos_word(self.buffer.as_ref());
        let c = checksum::update_u16(self.checksum(), old, new);
        self.set_checksum(c);
        true
    }

    /// Recomputes the header checksum over `header_len` bytes.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hl = self.header_len();
        let c = checksum::checksum(&self.buffer.as_ref()[..hl]);
        self.set_checksum(c);
    }
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.buffer.as_mut()[HEADER_LEN..hl]
    }
    /// Writes `w` into an NGWA option already present in the header and
    /// updates the header checksum incrementally (RFC 1624). Returns false
    /// if there is no well-formed NGWA option (the caller must then rebuild
    /// the header to insert one; see [`emit_ngwa`]).
    pub fn set_ngwa(&mut self, w: u32) -> bool {
        let Some(at) = ngwa_offset(self.options()) else { return false };
        let at = HEADER_LEN + at + 2;
        let old = get_u32(self.buffer.as_ref(), at);
        set_u32(self.buffer.as_mut(), at, w);
        // The value sits at an even offset (20 + 4k + 2 only if the option is
        // 2-byte aligned); the incremental update needs 16-bit alignment.
        let c = if at.is_multiple_of(2) {
            checksum::update_u32(self.checksum(), old, w)
        } else {
            self.set_checksum(0);
            let hl = self.header_len();
            checksum::checksum(&self.buffer.as_ref()[..hl])
        };
        self.set_checksum(c);
        true
    }
}

/// Bytes the NGWA option adds to a packet: 6, and two NOPs to keep the
/// header a multiple of 4 bytes (RFC 791 section 3.1, IHL counts 32-bit
/// words); `netreturn_base::InBand::wire_len` charges the simulator's
/// packets the same 8.
pub const NGWA_INSERT_LEN: usize = 8;

/// Why an NGWA option cannot be inserted into a packet (the packet then
/// passes untouched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NgwaRefusal {
    /// The packet would exceed the MTU with 8 more bytes (seed 001 section
    /// 4.2: the MSS clamp keeps full segments from getting here).
    TooBig,
    /// The header has no room: IHL would pass 15 words (60 bytes, RFC 791).
    OptionsFull,
    /// The option list does not parse, or holds a type-33 option of another
    /// length: writing into it could corrupt what it carries.
    BadOptions,
}

/// Whether an NGWA option can be inserted into `p` without the packet
/// passing `mtu` bytes.
pub fn ngwa_insertable<T: AsRef<[u8]>>(p: &Packet<T>, mtu: usize) -> core::result::Result<(), NgwaRefusal> {
    for o in p.option_iter() {
        match o {
            Ipv4Option::Malformed => return Err(NgwaRefusal::BadOptions),
            Ipv4Option::Unknown { kind: OPT_NGWA, .. } => return Err(NgwaRefusal::BadOptions),
            _ => {}
        }
    }
    if p.header_len() + NGWA_INSERT_LEN > 60 {
        return Err(NgwaRefusal::OptionsFull);
    }
    if p.total_len() as usize + NGWA_INSERT_LEN > mtu {
        return Err(NgwaRefusal::TooBig);
    }
    Ok(())
}

/// Inserts an NGWA option carrying `w` at the front of the option area of
/// the IPv4 packet that starts `buf`: `type 33 | len 6 | w | NOP | NOP`,
/// then the options the packet had, then its payload, moved 8 bytes on.
/// `buf` must hold the packet (`total_len` bytes, checked by
/// [`ngwa_insertable`]) and 8 more bytes. IHL, total length and the header
/// checksum are rewritten; the TCP checksum does not change, since its
/// pseudo-header (addresses, protocol, TCP length) holds no IP option
/// (RFC 9293 section 3.1). Returns the new total length.
pub fn insert_ngwa(buf: &mut [u8], w: u32) -> usize {
    let total = Packet::new_unchecked(&buf[..]).total_len() as usize;
    buf.copy_within(HEADER_LEN..total, HEADER_LEN + NGWA_INSERT_LEN);
    finish_insert(buf, w)
}

/// The second half of [`insert_ngwa`], for a caller that made the room
/// itself: `buf` holds the fixed header, 8 bytes of room, then the rest of
/// the packet (its header fields still the old packet's). Writes the option
/// into the room and fixes IHL, total length and checksum; returns the new
/// total length. The real gateway builds the marked frame by forward copies
/// into a spare buffer: an overlapping move of the whole packet towards its
/// end cost it about as much as the rest of its per-frame work
/// (`examples/forward_cost.rs`).
pub fn finish_insert(buf: &mut [u8], w: u32) -> usize {
    let (hl, total) = {
        let p = Packet::new_unchecked(&buf[..]);
        (p.header_len(), p.total_len() as usize)
    };
    emit_ngwa(&mut buf[HEADER_LEN..], w);
    buf[HEADER_LEN + OPT_NGWA_LEN] = OPT_NOP;
    buf[HEADER_LEN + OPT_NGWA_LEN + 1] = OPT_NOP;
    let mut p = Packet::new_unchecked(&mut buf[..]);
    p.set_version_and_header_len(hl + NGWA_INSERT_LEN);
    p.set_total_len((total + NGWA_INSERT_LEN) as u16);
    p.fill_checksum();
    total + NGWA_INSERT_LEN
}

/// Removes the NGWA option from the IPv4 packet that starts `buf` (the
/// receiver's edge gateway, before delivery: SPEC.md 2.6): the other
/// options are kept whole and in order, the two NOPs [`insert_ngwa`] wrote
/// after the option are dropped with it, and the rest is padded with End of
/// Option List to a multiple of 4 bytes; the payload
/// moves back by what the header lost, and IHL, total length and header
/// checksum are rewritten. A packet [`insert_ngwa`] grew gets its original
/// bytes back. Where the header cannot shrink (the other options fill its
/// words), the option's bytes become NOPs instead. Returns the new total
/// length, or `None` if the packet carries no NGWA option or its option
/// list does not parse (then nothing is written).
pub fn strip_ngwa(buf: &mut [u8]) -> Option<usize> {
    let (hl, total) = {
        let p = Packet::new_unchecked(&buf[..]);
        if p.option_iter().any(|o| o == Ipv4Option::Malformed) {
            return None;
        }
        (p.header_len(), p.total_len() as usize)
    };
    let at = HEADER_LEN + ngwa_offset(&buf[HEADER_LEN..hl])?;
    // The options without NGWA, copied on the stack (at most 40 bytes).
    let mut kept = [0u8; 40];
    let mut n = 0;
    // The two NOPs `insert_ngwa` writes after the option are its padding
    // and go with it; every other option, NOPs included, is kept whole (a
    // 0x01 byte inside another option's data was once trimmed as padding:
    // fuzz/regressions/wire_parsers).
    let mut padding = 0;
    let mut i = HEADER_LEN;
    while i < hl {
        let len = match buf[i] {
            OPT_EOL => break,
            OPT_NOP => 1,
            _ => buf[i + 1] as usize,
        };
        if i == at {
            padding = NGWA_INSERT_LEN - OPT_NGWA_LEN;
        } else if buf[i] == OPT_NOP && padding > 0 {
            padding -= 1;
        } else {
            padding = 0;
            kept[n..n + len].copy_from_slice(&buf[i..i + len]);
            n += len;
        }
        i += len;
    }
    let new_hl = HEADER_LEN + n.div_ceil(4) * 4;
    if new_hl >= hl {
        buf[at..at + OPT_NGWA_LEN].fill(OPT_NOP);
        Packet::new_unchecked(&mut buf[..]).fill_checksum();
        return Some(total);
    }
    buf[HEADER_LEN..new_hl].fill(OPT_EOL);
    buf[HEADER_LEN..HEADER_LEN + n].copy_from_slice(&kept[..n]);
    buf.copy_within(hl..total, new_hl);
    let new_total = total - (hl - new_hl);
    let mut p = Packet::new_unchecked(&mut buf[..]);
    p.set_version_and_header_len(new_hl);
    p.set_total_len(new_total as u16);
    p.fill_checksum();
    Some(new_total)
}

/// Writes an NGWA option carrying `w` into `out[..6]`.
pub fn emit_ngwa(out: &mut [u8], w: u32) {
    out[0] = OPT_NGWA;
    out[1] = OPT_NGWA_LEN as u8;
    set_u32(out, 2, w);
}

fn ngwa_offset(opts: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            OPT_EOL => return None,
            OPT_NOP => i += 1,
            kind => {
                let len = *opts.get(i + 1)? as usize;
                if len < 2 || i + len > opts.len() {
                    return None;
                }
                if kind == OPT_NGWA && len == OPT_NGWA_LEN {
                    return Some(i);
                }
                i += len;
            }
        }
    }
    None
}

/// One IPv4 option (RFC 791 section 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipv4Option<'a> {
    EndOfList,
    NoOperation,
    /// NGWA (SPEC.md 2.6): the path-minimum free window, bytes.
    Ngwa(u32),
    Unknown {
        kind: u8,
        data: &'a [u8],
    },
    /// A length byte missing, below 2, or running past the header; the
    /// iterator stops after yielding this.
    Malformed,
}

/// Iterates options; never reads outside the option area, stops at End of
/// Option List or at the first malformed option.
pub struct OptionIter<'a> {
    data: &'a [u8],
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = Ipv4Option<'a>;
    fn next(&mut self) -> Option<Ipv4Option<'a>> {
        let (&kind, rest) = self.data.split_first()?;
        match kind {
            OPT_EOL => {
                self.data = &[];
                Some(Ipv4Option::EndOfList)
            }
            OPT_NOP => {
                self.data = rest;
                Some(Ipv4Option::NoOperation)
            }
            _ => {
                let len = match rest.first() {
                    Some(&l) if l >= 2 && l as usize <= self.data.len() => l as usize,
                    _ => {
                        self.data = &[];
                        return Some(Ipv4Option::Malformed);
                    }
                };
                let body = &self.data[2..len];
                self.data = &self.data[len..];
                Some(if kind == OPT_NGWA && len == OPT_NGWA_LEN {
                    Ipv4Option::Ngwa(get_u32(body, 0))
                } else {
                    Ipv4Option::Unknown { kind, data: body }
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_with_ngwa(w: u32) -> [u8; 28] {
        let mut b = [0u8; 28];
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_version_and_header_len(28);
        p.set_total_len(28);
        p.set_hop_limit(64);
        p.set_next_header(protocol::TCP);
        p.set_src_addr([10, 0, 0, 1]);
        p.set_dst_addr([10, 0, 0, 2]);
        emit_ngwa(&mut p.options_mut()[..6], w);
        p.options_mut()[6] = OPT_NOP;
        p.options_mut()[7] = OPT_EOL;
        p.fill_checksum();
        b
    }

    #[test]
    fn ngwa_option_round_trips_and_keeps_checksum_valid() {
        let mut b = header_with_ngwa(50_000);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(p.ngwa(), Some(50_000));
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        assert!(p.set_ngwa(12_345));
        assert_eq!(p.ngwa(), Some(12_345));
        assert!(p.verify_checksum(), "incremental update keeps the header valid");
    }

    /// A TCP/IPv4 packet (no Ethernet header) with `payload` bytes, and
    /// room for one inserted option after it.
    fn tcp_packet(payload: usize) -> (Vec<u8>, usize) {
        let f = crate::frame::build_tcp_frame(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            5001,
            40000,
            7,
            9,
            netreturn_base::TcpFlags::ACK | netreturn_base::TcpFlags::PSH,
            500,
            &[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2],
            &vec![0xa5; payload],
        );
        let mut ip = f[14..].to_vec();
        let n = ip.len();
        ip.resize(n + NGWA_INSERT_LEN, 0);
        (ip, n)
    }

    fn checksums_ok(ip: &[u8]) -> bool {
        let mut f = vec![0u8; 14];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(ip);
        crate::frame::tcp_checksums_ok(&f)
    }

    #[test]
    fn an_inserted_option_carries_the_value_and_leaves_both_checksums_valid() {
        let (mut ip, n) = tcp_packet(1000);
        let tcp_before = ip[20..n].to_vec();
        assert_eq!(ngwa_insertable(&Packet::new_checked(&ip[..n]).unwrap(), 1500), Ok(()));
        let m = insert_ngwa(&mut ip, 42_000);
        assert_eq!(m, n + 8);
        let p = Packet::new_checked(&ip[..m]).unwrap();
        assert_eq!((p.header_len(), p.total_len() as usize, p.ngwa()), (28, m, Some(42_000)));
        assert!(p.verify_checksum(), "IPv4 header checksum recomputed");
        // RFC 9293 3.1: the TCP pseudo-header has no IP option, so the
        // segment, checksum included, moves unchanged and still verifies.
        assert_eq!(&ip[28..m], &tcp_before[..]);
        assert!(checksums_ok(&ip[..m]));
        let (src, n) = tcp_packet(1000);
        let mut out = [&src[..20], &[0; 8], &src[20..n]].concat();
        assert_eq!(finish_insert(&mut out, 42_000), m);
        assert_eq!(out, ip[..m], "room made by the caller: the same bytes");
    }

    #[test]
    fn stripping_the_option_restores_the_original_packet_byte_for_byte() {
        let (mut ip, n) = tcp_packet(300);
        let orig = ip[..n].to_vec();
        let m = insert_ngwa(&mut ip, 9);
        assert_eq!(strip_ngwa(&mut ip[..m]), Some(n));
        assert_eq!(&ip[..n], &orig[..]);
        assert_eq!(strip_ngwa(&mut ip[..n]), None, "nothing left to strip");
    }

    #[test]
    fn stripping_keeps_the_other_options_and_their_order() {
        // Router alert (RFC 2113, 4 bytes) then NGWA + EOL padding: 12
        // option bytes become 4.
        let mut b = vec![0u8; 40];
        {
            let mut p = Packet::new_unchecked(&mut b[..]);
            p.set_version_and_header_len(32);
            p.set_total_len(40);
            p.set_next_header(protocol::UDP);
            p.options_mut()[..4].copy_from_slice(&[0x94, 4, 0, 0]);
            emit_ngwa(&mut p.options_mut()[4..10], 5);
            p.fill_checksum();
        }
        b[32..40].copy_from_slice(b"payload!");
        assert_eq!(strip_ngwa(&mut b), Some(32));
        let p = Packet::new_checked(&b[..32]).unwrap();
        assert_eq!(p.options(), &[0x94, 4, 0, 0]);
        assert_eq!(p.payload(), b"payload!");
        assert!(p.verify_checksum());
    }

    #[test]
    fn inserting_then_stripping_gives_back_a_packet_with_options_byte_for_byte() {
        // Found by fuzzing (fuzz/regressions/wire_parsers): an option whose
        // data ends in 0x01 bytes lost them, as if they were NOP padding, and
        // the insert's two NOPs stayed (the header 4 bytes longer).
        for opts in [&[25u8, 12, 9, 9, 9, 9, 9, 9, 1, 1, 1, 1][..], &[0x94, 4, 0, 1], &[1, 1, 0x94, 4, 0, 0, 1, 1]] {
            let hl = HEADER_LEN + opts.len();
            let mut b = vec![0u8; hl + 8 + 8];
            {
                let mut p = Packet::new_unchecked(&mut b[..]);
                p.set_version_and_header_len(hl);
                p.set_total_len((hl + 8) as u16);
                p.set_next_header(protocol::UDP);
                p.options_mut().copy_from_slice(opts);
                p.fill_checksum();
            }
            b[hl..hl + 8].copy_from_slice(b"payload!");
            let original = b[..hl + 8].to_vec();
            let grown = insert_ngwa(&mut b, 7);
            assert_eq!(grown, hl + 16);
            let back = strip_ngwa(&mut b).unwrap();
            assert_eq!(&b[..back], &original[..], "options {opts:?}");
        }
    }

    #[test]
    fn packets_at_the_mtu_with_full_or_broken_options_are_refused() {
        let (ip, n) = tcp_packet(1500 - 52);
        assert_eq!(n, 1500);
        assert_eq!(ngwa_insertable(&Packet::new_checked(&ip[..n]).unwrap(), 1500), Err(NgwaRefusal::TooBig));
        let mut full = [0u8; 60];
        full[0] = 0x4f;
        full[3] = 60;
        full[20..60].fill(OPT_NOP);
        assert_eq!(ngwa_insertable(&Packet::new_checked(&full[..]).unwrap(), 1500), Err(NgwaRefusal::OptionsFull));
        full[0] = 0x46;
        full[3] = 24;
        full[20..24].copy_from_slice(&[7, 9, 0, 0]);
        assert_eq!(ngwa_insertable(&Packet::new_checked(&full[..24]).unwrap(), 1500), Err(NgwaRefusal::BadOptions));
        assert_eq!(strip_ngwa(&mut full[..24]), None);
    }

    #[test]
    fn fragments_are_detected() {
        let mut b = header_with_ngwa(1);
        let mut p = Packet::new_checked(&mut b[..]).unwrap();
        assert!(!p.is_fragment());
        p.set_flags_and_offset(false, true, 0);
        assert!(p.is_fragment(), "first fragment: MF set");
        p.set_flags_and_offset(false, false, 1480);
        assert!(p.is_fragment(), "last fragment: offset non-zero");
        assert_eq!(p.frag_offset(), 1480);
    }

    #[test]
    fn bad_lengths_are_refused() {
        let mut b = header_with_ngwa(1);
        b[0] = 0x44; // IHL 4 < 5
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Malformed);
        b[0] = 0x4f; // 60-byte header in a 28-byte buffer
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated);
        b[0] = 0x47;
        b[2..4].copy_from_slice(&100u16.to_be_bytes());
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn an_option_overrunning_the_header_is_malformed() {
        let opts = [7u8, 40, 0, 0];
        let v: Vec<_> = OptionIter { data: &opts }.collect();
        assert_eq!(v, vec![Ipv4Option::Malformed]);
    }
}
