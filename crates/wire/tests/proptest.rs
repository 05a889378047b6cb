//! Property tests of the parsers and of the incremental checksum.
//!
//! * No parser panics on arbitrary bytes (classify walks Ethernet, VLAN,
//!   IPv4, TCP and its options; every header view and option iterator is
//!   driven too).
//! * RFC 1624 eq. 3 applied to the window field gives the same checksum as
//!   a full recomputation, on random segments and random windows.
//!
//! The number of cases is set with PROPTEST_CASES (default below).

use netreturn_base::TcpFlags;
use netreturn_wire::{checksum, frame, ipv4, tcp, udp, xcp};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000)
}

/// Frames that get past the first checks often: a real TCP/IPv4 prefix
/// with random bytes sprinkled over it.
fn mostly_tcp_frame() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(any::<u8>(), 0..64),
        proptest::collection::vec((0usize..120, any::<u8>()), 0..8),
        0usize..130,
    )
        .prop_map(|(opts, payload, flips, cut)| {
            let mut f =
                frame::build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 3, 4, TcpFlags::SYN, 5, &opts, &payload);
            for (at, v) in flips {
                if at < f.len() {
                    f[at] = v;
                }
            }
            f.truncate(cut.max(f.len().saturating_sub(cut)));
            f
        })
}

fn exercise(bytes: &[u8]) {
    let _ = frame::classify(bytes);
    if let Ok(p) = ipv4::Packet::new_checked(bytes) {
        let _ = (p.payload(), p.ngwa(), p.verify_checksum(), p.is_fragment());
        for _ in p.option_iter() {}
    }
    if let Ok(p) = tcp::Packet::new_checked(bytes) {
        let _ = (p.payload(), p.window_len(), p.verify_checksum([0; 4], [0; 4]));
        for o in p.option_iter() {
            if let tcp::TcpOption::Sack(d) = o {
                for _ in tcp::sack_blocks(d) {}
            }
        }
    }
    for _ in tcp::OptionIter::new(bytes) {}
    if let Ok(p) = udp::Packet::new_checked(bytes) {
        let _ = (p.payload(), p.verify_checksum([0; 4], [0; 4]));
    }
    if let Ok(p) = xcp::Packet::new_checked(bytes) {
        let _ = (p.payload(), p.feedback(), p.format());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn parsers_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        exercise(&bytes);
    }

    #[test]
    fn parsers_never_panic_on_damaged_tcp_frames(f in mostly_tcp_frame()) {
        exercise(&f);
        exercise(&f[14.min(f.len())..]);
        exercise(&f[34.min(f.len())..]);
        // Rewriting what classify accepted stays in bounds.
        let mut g = f.clone();
        if let frame::Class::Tcp(loc) = frame::classify(&f) {
            frame::rewrite_window(&mut g, &loc, 1);
        }
    }

    #[test]
    fn incremental_window_update_equals_full_recomputation(
        payload in proptest::collection::vec(any::<u8>(), 0..1500),
        opts in proptest::collection::vec(any::<u8>(), 0..40),
        src in any::<[u8; 4]>(), dst in any::<[u8; 4]>(),
        seq in any::<u32>(), ack in any::<u32>(), flags in any::<u8>(),
        old_win in any::<u16>(), new_win in any::<u16>(),
    ) {
        let mut f = frame::build_tcp_frame(src, dst, 1, 2, seq, ack, TcpFlags(flags), old_win, &opts, &payload);
        let frame::Class::Tcp(loc) = frame::classify(&f) else { panic!("built frame must parse") };
        frame::rewrite_window(&mut f, &loc, new_win);
        let incremental = tcp::Packet::new_unchecked(&f[loc.tcp_offset..]).checksum();
        let mut seg = tcp::Packet::new_unchecked(&mut f[loc.tcp_offset..]);
        seg.fill_checksum(src, dst);
        prop_assert_eq!(incremental, seg.checksum());
        prop_assert!(frame::tcp_checksums_ok(&f));
    }

    #[test]
    fn rfc1624_update_equals_recomputation_for_any_word(
        data in proptest::collection::vec(any::<u8>(), 2..200),
        at in any::<prop::sample::Index>(), new in any::<u16>(),
    ) {
        let mut data = data;
        if data.len() % 2 == 1 { data.push(0); }
        let i = at.index(data.len() / 2) * 2;
        let hc = checksum::checksum(&data);
        let old = u16::from_be_bytes([data[i], data[i + 1]]);
        data[i..i + 2].copy_from_slice(&new.to_be_bytes());
        prop_assert_eq!(checksum::update_u16(hc, old, new), checksum::checksum(&data));
    }
}
