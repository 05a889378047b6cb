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
        debug_assert!(header_len % 4 == 0 && (HEADER_LEN..=60).contains(&header_len));
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
        let c = if at % 2 == 0 {
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
    Unknown { kind: u8, data: &'a [u8] },
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
