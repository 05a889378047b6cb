//! Arbitrary bytes through every parser of `netreturn-wire`: the frame
//! classifier, the header views (`new_checked` and every getter), the TCP
//! and IPv4 option iterators, the NGWA option reader, and the in-place
//! writers the gateway uses (window rewrite, MSS clamp, NGWA set / insert /
//! strip) on copies.
//!
//! Invariants, beyond "no panic":
//! * a frame classified `Tcp` has its offsets inside the buffer, a valid IPv4
//!   header checksum, a TCP header within the IP packet, and the view's
//!   fields are the header's;
//! * a frame with a bad IPv4 header checksum is never classified `Tcp`;
//! * the window rewrite and the MSS clamp keep valid checksums valid and
//!   invalid ones invalid (no laundering);
//! * NGWA insertion then strip gives a packet that parses, with the same
//!   payload and the NGWA value it had before; `set_ngwa` keeps a valid
//!   header checksum valid.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use netreturn_wire::frame::{self, Class};
use netreturn_wire::{ethernet, ipv4, tcp, udp, xcp, Error};

fuzz_target!(|data: &[u8]| {
    check_frame(data);
    // The same bytes as a bare IPv4 packet, TCP segment, UDP datagram, XCP
    // header, and as option lists.
    check_ipv4(data);
    check_tcp(data, [10, 0, 0, 1], [10, 0, 0, 2]);
    if let Ok(u) = udp::Packet::new_checked(data) {
        let _ = (u.src_port(), u.dst_port(), u.len(), u.is_empty(), u.checksum());
        let _ = u.payload();
        let _ = u.verify_checksum([1, 2, 3, 4], [5, 6, 7, 8]);
    }
    if let Ok(x) = xcp::Packet::new_checked(data) {
        let _ = (x.next_header(), x.version(), x.format(), x.cwnd(), x.rtt_us(), x.feedback());
        let _ = x.payload();
    }
    for o in tcp::OptionIter::new(data) {
        if let tcp::TcpOption::Sack(b) = o {
            assert!(tcp::sack_blocks(b).count() <= 4);
        }
    }
    let _ = netreturn_wire::checksum::checksum(data);
});

fn check_frame(data: &[u8]) {
    if let Ok(eth) = ethernet::Frame::new_checked(data) {
        let _ = (eth.dst_addr(), eth.src_addr(), eth.ethertype(), eth.is_vlan_tagged(), eth.payload().len());
        if let Ok((_, at, tags)) = eth.network_layer() {
            assert!(at <= data.len(), "network layer at {at} past {}", data.len());
            assert!(tags <= ethernet::MAX_TAGS);
        }
    }
    let class = frame::classify(data);
    match class {
        Class::Tcp(loc) => {
            assert!(loc.ip_offset >= ethernet::HEADER_LEN && loc.ip_offset <= data.len());
            assert!(loc.tcp_offset >= loc.ip_offset + ipv4::HEADER_LEN, "{loc:?}");
            assert!(loc.vlan_tags <= ethernet::MAX_TAGS);
            let ip = ipv4::Packet::new_checked(&data[loc.ip_offset..]).expect("classified TCP: IPv4 parses");
            assert!(ip.verify_checksum(), "classified TCP with a bad IPv4 header checksum");
            assert!(!ip.is_fragment());
            assert_eq!(ip.next_header(), ipv4::protocol::TCP);
            assert_eq!(loc.tcp_offset, loc.ip_offset + ip.header_len());
            let end = loc.ip_offset + ip.total_len() as usize;
            assert!(end <= data.len(), "IP packet ends at {end}, frame is {}", data.len());
            let seg = tcp::Packet::new_checked(&data[loc.tcp_offset..end]).expect("classified TCP: TCP parses");
            assert!(loc.tcp_offset + seg.header_len() <= end);
            let v = loc.view;
            assert_eq!(v.window, seg.window_len());
            assert_eq!((v.seq, v.ack), (seg.seq_number(), seg.ack_number()));
            assert_eq!((v.key.sport, v.key.dport), (seg.src_port(), seg.dst_port()));
            assert_eq!(v.payload_len as usize, end - loc.tcp_offset - seg.header_len());
            assert_eq!(v.flags, seg.flags());
            if !v.flags.syn() {
                assert_eq!((v.wscale, v.mss), (None, None), "options are read on SYNs only");
            }
            if let Some(s) = v.wscale {
                assert!(s <= 14);
            }
            assert_eq!(frame::tcp_view(data), Ok(v));
            let ok = frame::tcp_checksums_ok(data);
            let tcp_ok = seg.verify_checksum(ip.src_addr(), ip.dst_addr());
            assert_eq!(ok, tcp_ok);

            // The window rewrite: lands, and keeps the TCP checksum's
            // validity as it was.
            let mut f = data.to_vec();
            let w = v.window.wrapping_mul(7).wrapping_add(1);
            frame::rewrite_window(&mut f, &loc, w);
            let Class::Tcp(after) = frame::classify(&f) else { panic!("a rewritten frame no longer classifies as TCP") };
            assert_eq!(after.view.window, w);
            assert_eq!(frame::tcp_checksums_ok(&f), ok, "the window rewrite changed checksum validity");
            assert_eq!(f[..loc.tcp_offset + 14], data[..loc.tcp_offset + 14]);
            assert_eq!(f[loc.tcp_offset + 18..], data[loc.tcp_offset + 18..]);

            // The MSS clamp (NGWA routers on SYNs).
            let mut f = data.to_vec();
            let max = (v.window % 1500) as u16;
            let old = tcp::Packet::new_unchecked(&mut f[loc.tcp_offset..end]).clamp_mss(max);
            if old.is_some() {
                assert_eq!(frame::tcp_checksums_ok(&f), ok, "the MSS clamp changed checksum validity");
                let opts = tcp::Packet::new_unchecked(&f[loc.tcp_offset..end]);
                let first = opts.option_iter().find_map(|o| match o {
                    tcp::TcpOption::MaxSegmentSize(m) => Some(m),
                    _ => None,
                });
                assert_eq!(first, Some(max));
            } else {
                assert_eq!(f, data, "a clamp that reports nothing wrote something");
            }
        }
        Class::Malformed(Error::BadChecksum) => {
            // Only ever reported for IPv4 carrying TCP whose header sum fails.
            let eth = ethernet::Frame::new_checked(data).unwrap();
            let (_, at, _) = eth.network_layer().unwrap();
            let ip = ipv4::Packet::new_checked(&data[at..]).unwrap();
            assert!(!ip.verify_checksum());
            assert!(!frame::tcp_checksums_ok(data));
        }
        Class::Fragment | Class::OtherIpv4 { .. } | Class::NotIpv4(_) | Class::Malformed(_) => {
            assert!(frame::tcp_view(data).is_err());
            assert!(!frame::tcp_checksums_ok(data));
        }
    }
}

fn check_ipv4(data: &[u8]) {
    let Ok(ip) = ipv4::Packet::new_checked(data) else { return };
    let _ = (ip.version(), ip.dscp(), ip.ecn(), ip.ident(), ip.dont_frag(), ip.frag_offset(), ip.hop_limit());
    let _ = (ip.checksum(), ip.src_addr(), ip.dst_addr(), ip.is_fragment(), ip.next_header());
    assert!(ip.header_len() <= ip.total_len() as usize && ip.total_len() as usize <= data.len());
    assert_eq!(ip.payload().len(), ip.total_len() as usize - ip.header_len());
    let valid = ip.verify_checksum();
    let mut n = 0;
    let mut malformed = false;
    let mut first_ngwa = None;
    for o in ip.option_iter() {
        n += 1;
        assert!(n <= 40, "more options than option bytes");
        match o {
            ipv4::Ipv4Option::Malformed => malformed = true,
            ipv4::Ipv4Option::Ngwa(w) if first_ngwa.is_none() => first_ngwa = Some(w),
            _ => {}
        }
    }
    assert_eq!(ip.ngwa(), first_ngwa);
    let total = ip.total_len() as usize;
    let hl = ip.header_len();
    let payload = ip.payload().to_vec();

    // set_ngwa: in place, the header checksum's validity kept.
    let mut b = data[..total].to_vec();
    let mut p = ipv4::Packet::new_unchecked(&mut b[..]);
    if p.set_ngwa(0x1234_5678) {
        // Valid stays valid. (An invalid header is not held to staying
        // invalid here: at an odd offset `set_ngwa` recomputes the sum from
        // scratch; the gateway only calls it on frames `classify` found
        // with a valid header checksum, which `gateway_pipeline` checks.)
        if valid {
            assert!(p.verify_checksum(), "set_ngwa broke a valid header checksum");
        }
        // It writes the first well-formed NGWA option, which the reader
        // finds first unless a malformed option hides it.
        if !malformed {
            assert_eq!(p.ngwa(), Some(0x1234_5678));
        }
    }

    // Insert, then strip: the packet parses at each step, carries the value,
    // then none, and the payload is the same bytes.
    let insertable = ipv4::ngwa_insertable(&ip, 1500);
    if malformed {
        assert_eq!(insertable, Err(ipv4::NgwaRefusal::BadOptions));
    }
    if insertable.is_ok() {
        let mut b = data[..total].to_vec();
        b.resize(total + ipv4::NGWA_INSERT_LEN, 0);
        let new_total = ipv4::insert_ngwa(&mut b, 77);
        assert_eq!(new_total, total + ipv4::NGWA_INSERT_LEN);
        let p = ipv4::Packet::new_checked(&b[..]).expect("a packet with NGWA inserted parses");
        assert!(p.verify_checksum());
        assert_eq!(p.ngwa(), Some(77));
        assert_eq!(p.header_len(), hl + ipv4::NGWA_INSERT_LEN);
        assert_eq!(p.payload(), &payload[..]);
        let hazard = common::strip_trims_option_data(p.options());
        let stripped = ipv4::strip_ngwa(&mut b).expect("the option just inserted strips");
        let p = ipv4::Packet::new_checked(&b[..stripped]).expect("a stripped packet parses");
        assert!(p.header_len() <= hl + ipv4::NGWA_INSERT_LEN);
        assert_eq!(p.payload(), &payload[..]);
        assert!(p.verify_checksum());
        if !(common::KNOWN_STRIP_TRIM_BUG && hazard) {
            // The inserted option (the first) is gone; one the packet had
            // stays, and so do the others.
            assert_eq!(p.ngwa(), first_ngwa);
            assert_eq!(common::other_options(&p), common::other_options(&ip), "insert + strip changed other options");
        }
    }

    // Strip on the packet as it came.
    let mut b = data[..total].to_vec();
    let hazard = common::strip_trims_option_data(ip.options());
    if let Some(new_total) = ipv4::strip_ngwa(&mut b) {
        assert!(new_total <= total);
        let p = ipv4::Packet::new_checked(&b[..new_total]).expect("a stripped packet parses");
        assert!(p.verify_checksum());
        assert_eq!(p.payload(), &payload[..]);
        if !(common::KNOWN_STRIP_TRIM_BUG && hazard) {
            assert_eq!(common::other_options(&p), common::other_options(&ip), "strip changed other options");
        }
    } else {
        assert_eq!(b, data[..total], "a strip that reports nothing wrote something");
    }
    check_tcp(ip.payload(), ip.src_addr(), ip.dst_addr());
}

fn check_tcp(data: &[u8], src: [u8; 4], dst: [u8; 4]) {
    let Ok(t) = tcp::Packet::new_checked(data) else { return };
    let _ = (t.src_port(), t.dst_port(), t.seq_number(), t.ack_number(), t.flags(), t.window_len());
    let _ = (t.checksum(), t.urgent_at());
    assert!(t.header_len() >= tcp::HEADER_LEN && t.header_len() <= data.len());
    assert_eq!(t.options().len() + tcp::HEADER_LEN, t.header_len());
    assert_eq!(t.payload().len(), data.len() - t.header_len());
    let mut n = 0;
    for o in t.option_iter() {
        n += 1;
        assert!(n <= 40, "more options than option bytes");
        match o {
            tcp::TcpOption::WindowScale(s) => assert!(tcp::TcpOption::effective_window_scale(s) <= 14),
            tcp::TcpOption::Sack(b) => assert!(b.len() % 8 == 0 && b.len() <= 32),
            _ => {}
        }
    }
    let ok = t.verify_checksum(src, dst);
    let mut b = data.to_vec();
    let mut p = tcp::Packet::new_unchecked(&mut b[..]);
    p.set_window_len_incremental(t.window_len() ^ 0x5a5a);
    assert_eq!(p.verify_checksum(src, dst), ok, "the incremental window update changed checksum validity");
}
