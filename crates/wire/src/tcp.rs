//! TCP headers (RFC 9293 section 3.1) and options (RFC 9293 3.2, RFC 7323
//! window scale and timestamps, RFC 2018 SACK).

use crate::checksum;
use crate::{get_u16, get_u32, set_u16, set_u32, Result};
use netreturn_base::TcpFlags;

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ_NUM: usize = 4;
    pub const ACK_NUM: usize = 8;
    /// Data offset (4 bits, in 32-bit words), then 4 reserved bits.
    pub const DATA_OFF: usize = 12;
    pub const FLAGS: usize = 13;
    pub const WIN_SIZE: usize = 14;
    pub const CHECKSUM: usize = 16;
    pub const URGENT: usize = 18;
}

/// Length of a header without options.
pub const HEADER_LEN: usize = 20;

/// Option kinds (IANA "TCP Option Kind Numbers").
pub mod kind {
    pub const END: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WS: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMPS: u8 = 8;
}

packet_view! {
    /// A zero-copy view of a TCP segment (header and payload).
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// The data offset is at least 5 words and the header it declares fits
    /// in the buffer.
    fn check(&self, len: usize) -> Result<()> {
        crate::declared_len(self.header_len(), HEADER_LEN, len)
    }

    pub fn src_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::SRC_PORT)
    }
    pub fn dst_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::DST_PORT)
    }
    pub fn seq_number(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::SEQ_NUM)
    }
    pub fn ack_number(&self) -> u32 {
        get_u32(self.buffer.as_ref(), field::ACK_NUM)
    }
    /// Header length in bytes (data offset * 4).
    pub fn header_len(&self) -> usize {
        (self.buffer.as_ref()[field::DATA_OFF] >> 4) as usize * 4
    }
    pub fn flags(&self) -> TcpFlags {
        TcpFlags(self.buffer.as_ref()[field::FLAGS])
    }
    /// The raw 16-bit window field; the window in bytes is this shifted left
    /// by the scale the peer announced in its SYN (RFC 7323 section 2.3).
    pub fn window_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::WIN_SIZE)
    }
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::CHECKSUM)
    }
    pub fn urgent_at(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::URGENT)
    }
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.header_len()]
    }
    pub fn option_iter(&self) -> OptionIter<'_> {
        OptionIter { data: self.options() }
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
    /// True if the checksum over pseudo-header, header and payload verifies.
    /// The buffer must end where the segment ends (IP `total_len`).
    pub fn verify_checksum(&self, src: [u8; 4], dst: [u8; 4]) -> bool {
        let b = self.buffer.as_ref();
        if b.len() > u16::MAX as usize {
            return false;
        }
        let s = checksum::pseudo_header_v4(src, dst, crate::ipv4::protocol::TCP, b.len() as u16);
        checksum::fold(checksum::sum(s, b)) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_src_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::SRC_PORT, v)
    }
    pub fn set_dst_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::DST_PORT, v)
    }
    pub fn set_seq_number(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::SEQ_NUM, v)
    }
    pub fn set_ack_number(&mut self, v: u32) {
        set_u32(self.buffer.as_mut(), field::ACK_NUM, v)
    }
    pub fn set_header_len(&mut self, len: usize) {
        debug_assert!(len.is_multiple_of(4) && (HEADER_LEN..=60).contains(&len));
        let b = self.buffer.as_mut();
        b[field::DATA_OFF] = ((len / 4) as u8) << 4 | (b[field::DATA_OFF] & 0x0f);
    }
    pub fn set_flags(&mut self, f: TcpFlags) {
        self.buffer.as_mut()[field::FLAGS] = f.0
    }
    /// Sets the window field without touching the checksum.
    pub fn set_window_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::WIN_SIZE, v)
    }
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::CHECKSUM, v)
    }
    pub fn set_urgent_at(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::URGENT, v)
    }
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.buffer.as_mut()[HEADER_LEN..hl]
    }

    /// Rewrites the window field and patches the checksum incrementally
    /// (RFC 1624 eq. 3): the gateway's one per-packet write (SPEC.md
    /// section 1 rule 3). Touches 4 bytes, independent of the payload size,
    /// and keeps a checksum that was correct correct (and one that was wrong,
    /// wrong: the gateway does not launder corrupted segments).
    pub fn set_window_len_incremental(&mut self, v: u16) {
        let old = self.window_len();
        if old == v {
            return;
        }
        self.set_window_len(v);
        let c = checksum::update_u16(self.checksum(), old, v);
        self.set_checksum(c);
    }

    /// Lowers the MSS option (RFC 9293 section 3.7.1) to `max` if it
    /// announces more, patching the checksum incrementally (RFC 1624 eq. 3);
    /// returns the value it had. `None`: no well-formed MSS option, or one
    /// already at most `max` (nothing written). A router that grows packets
    /// (NGWA's IPv4 option, seed 001 section 4.2) clamps the MSS of the SYNs
    /// it forwards so that a full segment still fits the MTU.
    pub fn clamp_mss(&mut self, max: u16) -> Option<u16> {
        let at = HEADER_LEN + mss_offset(self.options())? + 2;
        let old = get_u16(self.buffer.as_ref(), at);
        if old <= max {
            return None;
        }
        // The incremental update works on the 16-bit words of the
        // checksummed data: at an odd offset the value straddles two of
        // them, each patched in turn (RFC 1624 section 3 applies word by
        // word). `at + 2` is inside the header: it is odd and the header
        // length a multiple of 4.
        let start = at & !1;
        let end = (at + 2 + 1) & !1;
        let mut words = [0u16; 2];
        for (i, w) in (start..end).step_by(2).enumerate() {
            words[i] = get_u16(self.buffer.as_ref(), w);
        }
        set_u16(self.buffer.as_mut(), at, max);
        let mut c = self.checksum();
        for (i, w) in (start..end).step_by(2).enumerate() {
            c = checksum::update_u16(c, words[i], get_u16(self.buffer.as_ref(), w));
        }
        self.set_checksum(c);
        Some(old)
    }

    /// Recomputes the checksum over pseudo-header, header and payload; the
    /// buffer must end where the segment ends.
    pub fn fill_checksum(&mut self, src: [u8; 4], dst: [u8; 4]) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let s = checksum::pseudo_header_v4(src, dst, crate::ipv4::protocol::TCP, b.len() as u16);
        let c = !checksum::fold(checksum::sum(s, b));
        self.set_checksum(c);
    }
}

/// Offset in `opts` of the first well-formed MSS option (kind 2, length
/// 4), walking as [`OptionIter`] does.
fn mss_offset(opts: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            kind::END => return None,
            kind::NOP => i += 1,
            k => {
                let len = *opts.get(i + 1)? as usize;
                if len < 2 || i + len > opts.len() {
                    return None;
                }
                if k == kind::MSS && len == 4 {
                    return Some(i);
                }
                i += len;
            }
        }
    }
    None
}

/// One TCP option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpOption<'a> {
    EndOfList,
    NoOperation,
    /// Maximum segment size (RFC 9293 3.7.1).
    MaxSegmentSize(u16),
    /// Window scale shift count (RFC 7323 section 2.2). Values above 14 are
    /// reported as received; RFC 7323 2.3 says to use 14 in their place,
    /// see [`TcpOption::effective_window_scale`].
    WindowScale(u8),
    /// SACK permitted (RFC 2018 section 2).
    SackPermitted,
    /// SACK blocks (RFC 2018 section 3): up to 4 (left, right) edges; the
    /// raw bytes are kept, read them with [`sack_blocks`].
    Sack(&'a [u8]),
    /// Timestamps (RFC 7323 section 3): TSval, TSecr.
    Timestamps {
        tsval: u32,
        tsecr: u32,
    },
    /// A kind this parser does not interpret, or a known kind whose length
    /// is not the one its RFC fixes.
    Unknown {
        kind: u8,
        data: &'a [u8],
    },
    /// A length byte missing, below 2, or running past the header. The
    /// iterator stops after yielding it (RFC 9293 3.1: a receiver must be
    /// prepared for any option, and must not read beyond the header).
    Malformed,
}

impl TcpOption<'_> {
    /// RFC 7323 section 2.3: "If a Window Scale option is received with a
    /// shift.cnt value larger than 14, the TCP SHOULD log the error but MUST
    /// use 14 instead of the specified value."
    pub fn effective_window_scale(shift: u8) -> u8 {
        shift.min(14)
    }
}

/// The (left, right) edges of SACK option data (`len % 8` trailing bytes
/// ignored).
/// The window scale (as in effect, RFC 7323 section 2.3) and the MSS
/// option of a SYN's or SYN-ACK's option bytes (RFC 7323 section 2.2, RFC
/// 9293 section 3.7.1). Used on frames (`frame::classify`) and on the option
/// bytes the kernel datapath reports.
pub fn syn_options(options: &[u8]) -> (Option<u8>, Option<u16>) {
    let (mut wscale, mut mss) = (None, None);
    for opt in OptionIter::new(options) {
        match opt {
            TcpOption::WindowScale(s) => wscale = Some(TcpOption::effective_window_scale(s)),
            TcpOption::MaxSegmentSize(m) => mss = Some(m),
            _ => {}
        }
    }
    (wscale, mss)
}

pub fn sack_blocks(data: &[u8]) -> impl Iterator<Item = (u32, u32)> + '_ {
    data.chunks_exact(8).map(|c| (get_u32(c, 0), get_u32(c, 4)))
}

/// Iterator over the options of a header; robust to any bytes.
pub struct OptionIter<'a> {
    data: &'a [u8],
}

impl<'a> OptionIter<'a> {
    pub fn new(data: &'a [u8]) -> OptionIter<'a> {
        OptionIter { data }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = TcpOption<'a>;
    fn next(&mut self) -> Option<TcpOption<'a>> {
        let (&k, rest) = self.data.split_first()?;
        match k {
            kind::END => {
                // RFC 9293 3.1: the End of Option List marks the end of all
                // options; what follows is padding.
                self.data = &[];
                Some(TcpOption::EndOfList)
            }
            kind::NOP => {
                self.data = rest;
                Some(TcpOption::NoOperation)
            }
            _ => {
                let len = match rest.first() {
                    Some(&l) if l >= 2 && l as usize <= self.data.len() => l as usize,
                    _ => {
                        self.data = &[];
                        return Some(TcpOption::Malformed);
                    }
                };
                let body = &self.data[2..len];
                self.data = &self.data[len..];
                Some(match (k, body.len()) {
                    (kind::MSS, 2) => TcpOption::MaxSegmentSize(get_u16(body, 0)),
                    (kind::WS, 1) => TcpOption::WindowScale(body[0]),
                    (kind::SACK_PERMITTED, 0) => TcpOption::SackPermitted,
                    (kind::SACK, n) if n > 0 && n % 8 == 0 && n <= 32 => TcpOption::Sack(body),
                    (kind::TIMESTAMPS, 8) => TcpOption::Timestamps { tsval: get_u32(body, 0), tsecr: get_u32(body, 4) },
                    _ => TcpOption::Unknown { kind: k, data: body },
                })
            }
        }
    }
}

/// Writes `opt` at the start of `out`, returning the bytes written. Panics
/// if `out` is too small (emitting is for trusted, sized buffers).
pub fn emit_option(opt: &TcpOption<'_>, out: &mut [u8]) -> usize {
    match *opt {
        TcpOption::EndOfList => {
            out[0] = kind::END;
            1
        }
        TcpOption::NoOperation => {
            out[0] = kind::NOP;
            1
        }
        TcpOption::MaxSegmentSize(m) => {
            out[..2].copy_from_slice(&[kind::MSS, 4]);
            set_u16(out, 2, m);
            4
        }
        TcpOption::WindowScale(s) => {
            out[..3].copy_from_slice(&[kind::WS, 3, s]);
            3
        }
        TcpOption::SackPermitted => {
            out[..2].copy_from_slice(&[kind::SACK_PERMITTED, 2]);
            2
        }
        TcpOption::Sack(d) => {
            out[..2].copy_from_slice(&[kind::SACK, 2 + d.len() as u8]);
            out[2..2 + d.len()].copy_from_slice(d);
            2 + d.len()
        }
        TcpOption::Timestamps { tsval, tsecr } => {
            out[..2].copy_from_slice(&[kind::TIMESTAMPS, 10]);
            set_u32(out, 2, tsval);
            set_u32(out, 6, tsecr);
            10
        }
        TcpOption::Unknown { kind, data } => {
            out[..2].copy_from_slice(&[kind, 2 + data.len() as u8]);
            out[2..2 + data.len()].copy_from_slice(data);
            2 + data.len()
        }
        TcpOption::Malformed => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Linux-like SYN option block: MSS, SACK-permitted, timestamps, NOP,
    /// window scale 7.
    const SYN_OPTS: [u8; 20] = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];

    #[test]
    fn linux_syn_options_parse() {
        let v: Vec<_> = OptionIter::new(&SYN_OPTS).collect();
        assert_eq!(
            v,
            vec![
                TcpOption::MaxSegmentSize(1460),
                TcpOption::SackPermitted,
                TcpOption::Timestamps { tsval: 1, tsecr: 0 },
                TcpOption::NoOperation,
                TcpOption::WindowScale(7),
            ]
        );
    }

    #[test]
    fn overrunning_and_zero_lengths_stop_the_iterator() {
        // Length 0 would loop forever if trusted; length 30 runs past.
        for bad in [&[2u8, 0, 1, 1][..], &[3u8, 30, 7], &[8u8], &[5u8, 1]] {
            let v: Vec<_> = OptionIter::new(bad).collect();
            assert_eq!(v.last(), Some(&TcpOption::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn sack_blocks_are_read() {
        let opts = [1, 1, 5, 10, 0, 0, 0, 10, 0, 0, 0, 20];
        let v: Vec<_> = OptionIter::new(&opts).collect();
        let TcpOption::Sack(d) = v[2] else { panic!("{v:?}") };
        assert_eq!(sack_blocks(d).collect::<Vec<_>>(), vec![(10, 20)]);
    }

    #[test]
    fn emitted_options_parse_back() {
        let opts = [
            TcpOption::MaxSegmentSize(1448),
            TcpOption::WindowScale(9),
            TcpOption::SackPermitted,
            TcpOption::Timestamps { tsval: 7, tsecr: 9 },
            TcpOption::Unknown { kind: 30, data: &[1, 2] },
        ];
        let mut buf = [0u8; 40];
        let mut n = 0;
        for o in &opts {
            n += emit_option(o, &mut buf[n..]);
        }
        assert_eq!(OptionIter::new(&buf[..n]).collect::<Vec<_>>(), opts.to_vec());
    }

    #[test]
    fn window_scale_above_14_is_used_as_14() {
        assert_eq!(TcpOption::effective_window_scale(15), 14);
    }

    #[test]
    fn mss_clamp_lowers_only_a_larger_mss_and_keeps_the_checksum_valid_at_any_alignment() {
        // The MSS value at an even offset (Linux's layout), then at an odd
        // one (after a lone NOP): RFC 1624 word by word either way.
        let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        for opts in [&[2u8, 4, 0x05, 0xb4, 1, 3, 3, 7][..], &[1, 2, 4, 0x05, 0xb4, 1, 1, 0]] {
            let mut seg = [0u8; 28];
            let mut p = Packet::new_unchecked(&mut seg[..]);
            p.set_header_len(28);
            p.set_flags(TcpFlags::SYN);
            p.options_mut().copy_from_slice(opts);
            p.fill_checksum(src, dst);
            assert_eq!(p.clamp_mss(1500), None, "1460 is below 1500: untouched");
            assert_eq!(p.clamp_mss(1452), Some(1460));
            assert!(p.verify_checksum(src, dst), "{opts:?}");
            assert!(p.option_iter().any(|o| o == TcpOption::MaxSegmentSize(1452)));
            assert_eq!(p.clamp_mss(1452), None, "idempotent");
        }
    }

    #[test]
    fn incremental_window_rewrite_keeps_checksum_valid() {
        let mut seg = [0u8; 40];
        let mut p = Packet::new_unchecked(&mut seg[..]);
        p.set_header_len(20);
        p.set_window_len(65535);
        p.set_flags(TcpFlags::ACK);
        p.fill_checksum([10, 0, 0, 1], [10, 0, 0, 2]);
        assert!(p.verify_checksum([10, 0, 0, 1], [10, 0, 0, 2]));
        p.set_window_len_incremental(1000);
        assert_eq!(p.window_len(), 1000);
        assert!(p.verify_checksum([10, 0, 0, 1], [10, 0, 0, 2]));
    }
}
