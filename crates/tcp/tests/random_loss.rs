//! Property test: whatever data segments a link loses, the transfer
//! completes and the receiver delivers exactly the bytes sent, in order,
//! each once (s2n-quic style invariants over generated loss patterns).

mod pair;

use netreturn_base::Time;
use netreturn_tcp::{CcKind, Recovery, TcpConfig};
use pair::{Link, Pair};
use proptest::prelude::*;

fn cc_of(k: u8) -> CcKind {
    match k % 4 {
        0 => CcKind::None(Default::default()),
        1 => CcKind::Reno(Default::default()),
        2 => CcKind::NewReno(Default::default()),
        _ => CcKind::Cubic(Default::default()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn transfer_completes_and_delivers_every_byte_once(
        drops in proptest::collection::btree_set(0u64..400, 0..40),
        ack_drops in proptest::collection::btree_set(0u64..200, 0..10),
        cc in 0u8..4,
        sack in any::<bool>(),
        prr in any::<bool>(),
        timestamps in any::<bool>(),
        bytes in 1u64..300_000,
        queue in 20_000u64..200_000,
    ) {
        let cfg = TcpConfig {
            mss: 1000,
            cc: cc_of(cc),
            sack,
            timestamps,
            recovery: if prr { Recovery::Prr } else { Recovery::Classic },
            ..Default::default()
        };
        let mut p = Pair::with_links(
            &cfg,
            &cfg,
            Link::new(Time::from_millis(10), 20_000_000, queue),
            Link::new(Time::from_millis(10), 20_000_000, queue),
        );
        let drops: Vec<u64> = drops.into_iter().collect();
        p.fwd.loss = Some(Box::new(move |i, _| drops.contains(&i)));
        let ack_drops: Vec<u64> = ack_drops.into_iter().collect();
        p.rev.ack_loss = Some(Box::new(move |i, _| ack_drops.contains(&i)));
        let done = p.transfer(bytes, Time::from_secs(3_000));
        let (cs, ss) = (*p.client.stats(), *p.server.stats());
        prop_assert!(done, "stalled at {}: client {:?} server {:?}", p.now, cs, ss);
        prop_assert_eq!(ss.bytes_delivered, bytes);
        prop_assert_eq!(cs.bytes_acked, bytes);
        prop_assert!(cs.bytes_sent >= bytes);
        prop_assert_eq!(cs.bytes_sent - cs.bytes_retransmitted, bytes, "first transmissions cover the stream once");
    }
}
