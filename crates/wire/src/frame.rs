//! One-call classification of an Ethernet frame, as the gateway needs it:
//! is it a TCP/IPv4 segment whose header can be read (and its window
//! rewritten), and where are the headers?

use crate::ethernet::{self, EtherType};
use crate::{ipv4, tcp, Error};
use netreturn_base::TcpView;
use netreturn_base::{Ecn, FlowKey};

/// Where the headers of a TCP/IPv4 frame sit, and what a controller reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpLocation {
    /// Offset of the IPv4 header in the frame.
    pub ip_offset: usize,
    /// Offset of the TCP header in the frame.
    pub tcp_offset: usize,
    /// Number of VLAN tags looked through (0 for untagged frames).
    pub vlan_tags: usize,
    pub view: TcpView,
}

/// What a frame is, from the gateway's point of view (SPEC.md section 1
/// rule 6: only well-formed TCP/IPv4 is ever touched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A whole TCP segment over IPv4.
    Tcp(TcpLocation),
    /// An IPv4 fragment: its TCP header is absent or partial; passed as is.
    Fragment,
    /// Well-formed IPv4 carrying another protocol (UDP, ICMP...).
    OtherIpv4 { protocol: u8 },
    /// Not IPv4 (ARP, IPv6, unknown EtherTypes...).
    NotIpv4(EtherType),
    /// Claims to be IPv4 (or TCP) but its headers do not hold together.
    Malformed(Error),
}

/// Classifies `frame` (an Ethernet II frame without FCS). Never panics, for
/// any input (property-tested in `tests/proptest.rs`).
pub fn classify(frame: &[u8]) -> Class {
    let eth = match ethernet::Frame::new_checked(frame) {
        Ok(f) => f,
        Err(e) => return Class::Malformed(e),
    };
    let (ethertype, ip_offset, vlan_tags) = match eth.network_layer() {
        Ok(x) => x,
        Err(e) => return Class::Malformed(e),
    };
    if ethertype != EtherType::Ipv4 {
        return Class::NotIpv4(ethertype);
    }
    let ip = match ipv4::Packet::new_checked(&frame[ip_offset..]) {
        Ok(p) => p,
        Err(e) => return Class::Malformed(e),
    };
    if ip.is_fragment() {
        return Class::Fragment;
    }
    if ip.next_header() != ipv4::protocol::TCP {
        return Class::OtherIpv4 { protocol: ip.next_header() };
    }
    if !ip.verify_checksum() {
        // Never parsed as TCP, so never rewritten (window, NGWA option, MSS):
        // a corrupted header must reach the receiver still failing its check.
        return Class::Malformed(Error::BadChecksum);
    }
    let tcp = match tcp::Packet::new_checked(ip.payload()) {
        Ok(t) => t,
        Err(e) => return Class::Malformed(e),
    };
    // Window scale and MSS are meaningful on SYN / SYN-ACK only (RFC 7323
    // section 2.2, RFC 9293 3.7.1); skip the walk otherwise.
    let (wscale, mss) = if tcp.flags().syn() { tcp::syn_options(tcp.options()) } else { (None, None) };
    let src = u32::from_be_bytes(ip.src_addr());
    let dst = u32::from_be_bytes(ip.dst_addr());
    let view = TcpView {
        key: FlowKey { src, dst, sport: tcp.src_port(), dport: tcp.dst_port(), proto: FlowKey::TCP },
        flags: tcp.flags(),
        seq: tcp.seq_number(),
        ack: tcp.ack_number(),
        window: tcp.window_len(),
        wscale,
        mss,
        payload_len: tcp.payload().len() as u32,
    };
    Class::Tcp(TcpLocation { ip_offset, tcp_offset: ip_offset + ip.header_len(), vlan_tags, view })
}

/// The [`TcpView`] of a TCP/IPv4 frame, or why there is none.
pub fn tcp_view(frame: &[u8]) -> Result<TcpView, Class> {
    match classify(frame) {
        Class::Tcp(loc) => Ok(loc.view),
        other => Err(other),
    }
}

/// Rewrites the window field of the segment at `loc` (found by
/// [`classify`] on this very frame) with the RFC 1624 incremental checksum
/// update.
pub fn rewrite_window(frame: &mut [u8], loc: &TcpLocation, window: u16) {
    let mut seg = tcp::Packet::new_unchecked(&mut frame[loc.tcp_offset..]);
    seg.set_window_len_incremental(window);
}

/// Where the IPv4 header of `frame` starts and its ECN codepoint (RFC 3168
/// section 5), for any well-formed IPv4 frame (fragments and other
/// protocols included); `None` otherwise.
pub fn ipv4_ecn(frame: &[u8]) -> Option<(usize, Ecn)> {
    let eth = ethernet::Frame::new_checked(frame).ok()?;
    let (ethertype, ip_offset, _) = eth.network_layer().ok()?;
    if ethertype != EtherType::Ipv4 {
        return None;
    }
    let ip = ipv4::Packet::new_checked(&frame[ip_offset..]).ok()?;
    Some((ip_offset, Ecn::from_bits(ip.ecn())))
}

/// Sets CE on the IPv4 packet at `ip_offset` (from [`ipv4_ecn`] on this
/// very frame); false, untouched, if it is not ECN-capable.
pub fn mark_ce(frame: &mut [u8], ip_offset: usize) -> bool {
    ipv4::Packet::new_unchecked(&mut frame[ip_offset..]).set_ce_incremental()
}

/// Builds a TCP/IPv4 Ethernet frame (for tests, benchmarks and the traffic
/// fixtures): checksums filled, `options` copied as given (padded with EOL
/// to a multiple of 4 bytes).
#[allow(clippy::too_many_arguments)]
pub fn build_tcp_frame(
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: netreturn_base::TcpFlags,
    window: u16,
    options: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let opt_len = options.len().div_ceil(4) * 4;
    let tcp_len = tcp::HEADER_LEN + opt_len + payload.len();
    let ip_len = ipv4::HEADER_LEN + tcp_len;
    let mut f = vec![0u8; ethernet::HEADER_LEN + ip_len];
    {
        let mut eth = ethernet::Frame::new_unchecked(&mut f[..]);
        eth.set_dst_addr([0x02, 0, 0, 0, 0, 2]);
        eth.set_src_addr([0x02, 0, 0, 0, 0, 1]);
        eth.set_ethertype(EtherType::Ipv4);
    }
    {
        let mut ip = ipv4::Packet::new_unchecked(&mut f[ethernet::HEADER_LEN..]);
        ip.set_version_and_header_len(ipv4::HEADER_LEN);
        ip.set_total_len(ip_len as u16);
        ip.set_flags_and_offset(true, false, 0);
        ip.set_hop_limit(64);
        ip.set_next_header(ipv4::protocol::TCP);
        ip.set_src_addr(src);
        ip.set_dst_addr(dst);
        ip.fill_checksum();
    }
    let t0 = ethernet::HEADER_LEN + ipv4::HEADER_LEN;
    let mut t = tcp::Packet::new_unchecked(&mut f[t0..]);
    t.set_src_port(sport);
    t.set_dst_port(dport);
    t.set_seq_number(seq);
    t.set_ack_number(ack);
    t.set_header_len(tcp::HEADER_LEN + opt_len);
    t.set_flags(flags);
    t.set_window_len(window);
    t.options_mut()[..options.len()].copy_from_slice(options);
    let hl = tcp::HEADER_LEN + opt_len;
    f[t0 + hl..].copy_from_slice(payload);
    let mut t = tcp::Packet::new_unchecked(&mut f[t0..]);
    t.fill_checksum(src, dst);
    f
}

/// True if the frame's IPv4 and TCP checksums verify (tests and the
/// gateway's debug checks).
pub fn tcp_checksums_ok(frame: &[u8]) -> bool {
    let Class::Tcp(loc) = classify(frame) else { return false };
    let ip = ipv4::Packet::new_unchecked(&frame[loc.ip_offset..]);
    let end = loc.ip_offset + ip.total_len() as usize;
    let seg = tcp::Packet::new_unchecked(&frame[loc.tcp_offset..end]);
    ip.verify_checksum() && seg.verify_checksum(ip.src_addr(), ip.dst_addr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::TcpFlags;

    #[test]
    fn syn_frame_gives_view_with_scale_and_mss() {
        let opts = [2, 4, 0x05, 0xb4, 1, 3, 3, 7];
        let f = build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 40000, 5001, 100, 0, TcpFlags::SYN, 64240, &opts, &[]);
        assert!(tcp_checksums_ok(&f));
        let v = tcp_view(&f).unwrap();
        assert_eq!(v.key.src, 0x0a00_0001);
        assert_eq!((v.key.sport, v.key.dport), (40000, 5001));
        assert_eq!((v.wscale, v.mss, v.window, v.payload_len), (Some(7), Some(1460), 64240, 0));
    }

    #[test]
    fn rewriting_the_window_keeps_both_checksums_valid() {
        let mut f =
            build_tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], 5001, 40000, 1, 2, TcpFlags::ACK, 5000, &[], b"hello");
        let Class::Tcp(loc) = classify(&f) else { panic!() };
        assert_eq!(loc.view.payload_len, 5);
        rewrite_window(&mut f, &loc, 123);
        assert!(tcp_checksums_ok(&f));
        assert_eq!(tcp_view(&f).unwrap().window, 123);
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        let mut f = build_tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], 1, 2, 1, 2, TcpFlags::ACK, 5000, &[], &[]);
        f.resize(60, 0); // minimum Ethernet frame
        assert_eq!(tcp_view(&f).unwrap().payload_len, 0);
        assert!(tcp_checksums_ok(&f));
    }

    #[test]
    fn arp_and_fragments_are_classified_apart() {
        let mut arp = vec![0u8; 42];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(classify(&arp), Class::NotIpv4(EtherType::Arp));
        let mut f = build_tcp_frame([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, 0, 0, TcpFlags::ACK, 1, &[], &[0; 8]);
        ipv4::Packet::new_unchecked(&mut f[14..]).set_flags_and_offset(false, true, 0);
        assert_eq!(classify(&f), Class::Fragment);
    }
}

#[cfg(test)]
mod ecn_tests {
    use super::*;
    use netreturn_base::TcpFlags;

    fn frame_with_ecn(ecn: Ecn) -> Vec<u8> {
        let mut f = build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 5000, 80, 1, 1, TcpFlags::ACK, 100, &[], &[7; 100]);
        let (ip, _) = ipv4_ecn(&f).expect("IPv4");
        f[ip + 1] = (f[ip + 1] & !0b11) | ecn.bits();
        ipv4::Packet::new_unchecked(&mut f[ip..]).fill_checksum();
        f
    }

    #[test]
    fn marking_an_ect_packet_sets_ce_and_leaves_a_valid_header_checksum_and_tcp_checksum() {
        for ect in [Ecn::Ect0, Ecn::Ect1] {
            let mut f = frame_with_ecn(ect);
            let (ip, ecn) = ipv4_ecn(&f).unwrap();
            assert_eq!(ecn, ect);
            assert!(mark_ce(&mut f, ip));
            assert_eq!(ipv4_ecn(&f).unwrap().1, Ecn::Ce);
            assert!(ipv4::Packet::new_checked(&f[ip..]).unwrap().verify_checksum());
            assert!(tcp_checksums_ok(&f), "the TCP checksum does not cover the TOS octet");
            assert!(matches!(classify(&f), Class::Tcp(_)));
        }
    }

    #[test]
    fn a_not_ect_packet_is_not_marked_and_a_corrupted_header_stays_corrupted() {
        let mut f = frame_with_ecn(Ecn::NotEct);
        let before = f.clone();
        let (ip, _) = ipv4_ecn(&f).unwrap();
        assert!(!mark_ce(&mut f, ip));
        assert_eq!(f, before, "untouched");
        // An ECT packet whose header checksum is wrong: marking must not
        // launder it (RFC 1624's incremental update keeps the error).
        let mut f = frame_with_ecn(Ecn::Ect0);
        let (ip, _) = ipv4_ecn(&f).unwrap();
        f[ip + 10] ^= 0x5a;
        assert!(mark_ce(&mut f, ip));
        assert!(!ipv4::Packet::new_checked(&f[ip..]).unwrap().verify_checksum());
    }
}
