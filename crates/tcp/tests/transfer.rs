//! End-to-end behaviour of two connections over the `Pair` model link.

mod pair;

use netreturn_base::Time;
use netreturn_tcp::{CcKind, Connection, Recovery, TcpConfig};
use pair::{drop_first_tx_at, drop_indices, Link, Pair};

const ISS: u32 = 0x1234_5678;

fn cfg(cc: CcKind, sack: bool) -> TcpConfig {
    TcpConfig { mss: 1000, cc, sack, rcv_buf: 1 << 20, ..Default::default() }
}

fn big_queue_pair(c: &TcpConfig) -> Pair {
    Pair::with_links(
        c,
        c,
        Link::new(Time::from_millis(20), 10_000_000, 1 << 20),
        Link::new(Time::from_millis(20), 10_000_000, 1 << 20),
    )
}

#[test]
fn handshake_negotiates_mss_wscale_sack_and_timestamps() {
    let c = TcpConfig { mss: 1458, rcv_buf: 1 << 20, ..Default::default() };
    let s = TcpConfig { mss: 1000, ..Default::default() };
    let mut client = Connection::client(&c, 7);
    let mut server = Connection::server(&s, 99);
    let mut out = Vec::new();
    client.open(Time::ZERO, &mut out);
    let syn = out.pop().unwrap();
    assert!(syn.flags.syn() && !syn.flags.ack());
    assert_eq!(syn.opts.mss, Some(1458));
    assert_eq!(syn.opts.wscale, Some(5), "1 MiB needs shift 5 to fit 16 bits");
    assert!(syn.opts.sack_permitted && syn.opts.timestamps.is_some());
    server.on_segment(Time::from_millis(10), &syn, &mut out);
    let syn_ack = out.pop().unwrap();
    assert!(syn_ack.flags.syn() && syn_ack.flags.ack());
    assert_eq!(syn_ack.ack, 8);
    assert_eq!(syn_ack.opts.wscale, Some(2), "131072 >> 1 = 65536 does not fit: shift 2");
    assert_eq!(syn_ack.opts.timestamps.map(|t| t.1), syn.opts.timestamps.map(|t| t.0));
    client.on_segment(Time::from_millis(20), &syn_ack, &mut out);
    assert!(client.is_established());
    let ack = out.pop().unwrap();
    assert!(ack.flags.ack() && !ack.flags.syn());
    // The client's window field is scaled by its own shift 5.
    assert_eq!((ack.window as u64) << 5, 1 << 20);
    server.on_segment(Time::from_millis(30), &ack, &mut out);
    assert!(server.is_established());
    // The server's window (131072 >> 2) is scaled back on the client side.
    let mut out = Vec::new();
    client.send(Time::from_millis(30), 1000, &mut out);
    let data = out.pop().unwrap();
    assert_eq!(data.len, 1000, "MSS is the smaller of the two");
    server.on_segment(Time::from_millis(40), &data, &mut out);
    server.on_timer(Time::from_millis(240), &mut out);
    let ack = out.pop().unwrap();
    client.on_segment(Time::from_millis(250), &ack, &mut out);
    assert_eq!(client.probe().rwnd, 131_072);
    assert!(client.all_data_acked());
    // RTT measured from the timestamps echoed: 250 - 30 ms.
    assert_eq!(client.probe().last_rtt, Some(Time::from_millis(220)));
}

#[test]
fn options_the_peer_did_not_offer_stay_off() {
    let c = TcpConfig::default();
    let s = TcpConfig { sack: false, timestamps: false, window_scaling: false, ..Default::default() };
    let mut client = Connection::client(&c, 1);
    let mut server = Connection::server(&s, 2);
    let mut out = Vec::new();
    client.open(Time::ZERO, &mut out);
    let syn = out.pop().unwrap();
    server.on_segment(Time::ZERO, &syn, &mut out);
    let syn_ack = out.pop().unwrap();
    assert_eq!(syn_ack.opts.wscale, None);
    assert!(!syn_ack.opts.sack_permitted);
    assert_eq!(syn_ack.opts.timestamps, None);
    client.on_segment(Time::from_millis(1), &syn_ack, &mut out);
    let ack = out.pop().unwrap();
    assert_eq!(ack.opts.timestamps, None, "timestamps off after negotiation");
    assert_eq!(ack.window, 65_535, "no scaling: the field is capped");
}

#[test]
fn one_megabyte_transfer_delivers_exactly_one_megabyte_without_loss() {
    for cc in [
        CcKind::Cubic(Default::default()),
        CcKind::NewReno(Default::default()),
        CcKind::Reno(Default::default()),
        CcKind::None(Default::default()),
    ] {
        let c = cfg(cc, true);
        let mut p = big_queue_pair(&c);
        assert!(p.transfer(1_000_000, Time::from_secs(60)), "{cc:?}");
        let (cs, ss) = (*p.client.stats(), *p.server.stats());
        assert_eq!(ss.bytes_delivered, 1_000_000);
        assert_eq!(cs.bytes_acked, 1_000_000);
        assert_eq!(cs.bytes_sent, 1_000_000, "{cc:?}: no retransmission");
        assert_eq!(cs.timeouts, 0);
        // 10 Mb/s for 1 MB plus headers: a bit over 0.8 s, plus slow start.
        assert!(p.now < Time::from_secs(2), "{cc:?} took {}", p.now);
    }
}

#[test]
fn transfer_over_a_small_queue_conserves_bytes_despite_drops() {
    for sack in [true, false] {
        let c = cfg(CcKind::Cubic(Default::default()), sack);
        let mut p = Pair::new(&c, &c);
        assert!(p.transfer(2_000_000, Time::from_secs(120)));
        assert!(p.fwd.overflowed > 0, "the 64 kB queue must overflow");
        assert_eq!(p.server.stats().bytes_delivered, 2_000_000);
        assert_eq!(p.client.stats().bytes_acked, 2_000_000);
        assert!(p.client.stats().fast_retransmits > 0);
    }
}

#[test]
fn a_single_lost_segment_is_repaired_by_fast_retransmit_not_rto() {
    for sack in [true, false] {
        for cc in
            [CcKind::NewReno(Default::default()), CcKind::Reno(Default::default()), CcKind::Cubic(Default::default())]
        {
            let c = cfg(cc, sack);
            let mut p = big_queue_pair(&c);
            p.fwd.loss = Some(drop_first_tx_at(ISS, vec![20_000]));
            assert!(p.transfer(200_000, Time::from_secs(30)), "{cc:?} sack={sack}");
            let cs = p.client.stats();
            assert_eq!(p.fwd.dropped, 1);
            assert_eq!(cs.fast_retransmits, 1, "{cc:?} sack={sack}");
            assert_eq!(cs.timeouts, 0, "{cc:?} sack={sack}");
            assert_eq!(cs.segments_retransmitted, 1, "{cc:?} sack={sack}");
            assert_eq!(p.server.stats().bytes_delivered, 200_000);
        }
    }
}

#[test]
fn multiple_losses_in_one_window_are_repaired_without_rto() {
    // Three segments of the third flight (cwnd 40) are lost.
    for (sack, recovery) in [(false, Recovery::Classic), (true, Recovery::Classic), (true, Recovery::Prr)] {
        let c = TcpConfig { recovery, ..cfg(CcKind::NewReno(Default::default()), sack) };
        let mut p = big_queue_pair(&c);
        p.fwd.loss = Some(drop_first_tx_at(ISS, vec![32_000, 35_000, 38_000, 41_000]));
        assert!(p.transfer(300_000, Time::from_secs(30)));
        let cs = p.client.stats();
        assert_eq!(p.fwd.dropped, 4);
        assert_eq!(cs.timeouts, 0, "sack={sack} {recovery:?}");
        assert_eq!(cs.fast_retransmits, 1, "one recovery episode, sack={sack}");
        assert_eq!(cs.segments_retransmitted, 4, "sack={sack} {recovery:?}");
        assert_eq!(p.server.stats().bytes_delivered, 300_000);
    }
}

#[test]
fn reno_without_sack_leaves_recovery_on_a_partial_ack() {
    // Guards the Reno/NewReno difference: Reno needs more than one fast
    // retransmit (or a timeout) for several losses in a window.
    let c = cfg(CcKind::Reno(Default::default()), false);
    let mut p = big_queue_pair(&c);
    p.fwd.loss = Some(drop_first_tx_at(ISS, vec![32_000, 35_000, 38_000, 41_000]));
    assert!(p.transfer(300_000, Time::from_secs(60)));
    let cs = p.client.stats();
    assert!(cs.fast_retransmits + cs.timeouts > 1, "{cs:?}");
    assert_eq!(p.server.stats().bytes_delivered, 300_000);
}

#[test]
fn a_tail_loss_is_repaired_by_the_retransmission_timer() {
    let c = cfg(CcKind::Cubic(Default::default()), true);
    let mut p = big_queue_pair(&c);
    // 20 segments: the last one is lost, no dupACK can follow it.
    p.fwd.loss = Some(drop_first_tx_at(ISS, vec![19_000]));
    assert!(p.transfer(20_000, Time::from_secs(30)));
    let cs = p.client.stats();
    assert_eq!(cs.timeouts, 1);
    assert_eq!(cs.fast_retransmits, 0);
    assert_eq!(p.server.stats().bytes_delivered, 20_000);
    // RTO is at least min_rto = 1 s after the last send.
    assert!(p.now > Time::from_secs(1));
}

#[test]
fn rto_backoff_doubles_the_interval_between_timeouts() {
    let c = cfg(CcKind::NewReno(Default::default()), true);
    let mut p = big_queue_pair(&c);
    // Data segments 5..=12 are lost: the 5 originals after the first five,
    // then three retransmissions of the first of them.
    p.fwd.loss = Some(drop_indices((5..=12).collect()));
    p.open();
    p.send(10_000);
    let mut times = Vec::new();
    let mut seen = 0;
    while !p.client.all_data_acked() && p.now < Time::from_secs(100) {
        p.step();
        if p.client.stats().timeouts > seen {
            seen = p.client.stats().timeouts;
            times.push(p.now);
        }
    }
    assert!(p.client.all_data_acked());
    assert_eq!(times.len(), 4, "{times:?}");
    for k in 1..4 {
        let gap = times[k] - times[k - 1];
        assert_eq!(gap, Time::from_secs(1 << k), "RFC 6298 (5.5) doubling, {times:?}");
    }
    assert_eq!(p.server.stats().bytes_delivered, 10_000);
}

#[test]
fn syn_loss_is_repaired_with_backoff() {
    let c = TcpConfig::default();
    let mut p = Pair::new(&c, &c);
    p.open();
    // Simulate the loss of the first SYN: drop what is in flight.
    let mut out = Vec::new();
    let mut fresh = Connection::client(&c, ISS);
    fresh.open(Time::ZERO, &mut out);
    assert_eq!(fresh.next_timer(), Some(Time::from_secs(1)));
    fresh.on_timer(Time::from_secs(1), &mut out);
    assert_eq!(out.len(), 2);
    assert!(out[1].flags.syn() && out[1].retransmission);
    assert_eq!(fresh.next_timer(), Some(Time::from_secs(3)), "backed off to 2 s");
    assert!(p.drive_until(Time::from_secs(5), |p| p.client.is_established() && p.server.is_established()));
}

#[test]
fn standard_tcp_never_fast_retransmits_and_recovers_by_timeout() {
    let c = cfg(CcKind::None(Default::default()), true);
    let mut p = big_queue_pair(&c);
    p.fwd.loss = Some(drop_first_tx_at(ISS, vec![20_000, 25_000]));
    assert!(p.transfer(200_000, Time::from_secs(60)));
    let cs = p.client.stats();
    assert_eq!(cs.fast_retransmits, 0);
    assert!(cs.dupacks_received >= 3);
    assert!(cs.timeouts >= 1);
    assert_eq!(p.server.stats().bytes_delivered, 200_000);
    assert_eq!(p.client.probe().cwnd, u64::MAX, "no congestion window");
}

#[test]
fn the_same_inputs_give_identical_stats() {
    let run = || {
        let c = cfg(CcKind::Cubic(Default::default()), true);
        let mut p = Pair::new(&c, &c);
        p.fwd.loss = Some(drop_indices(vec![3, 50, 51, 200]));
        assert!(p.transfer(1_000_000, Time::from_secs(60)));
        (*p.client.stats(), *p.server.stats(), p.now, p.steps)
    };
    assert_eq!(run(), run());
}

#[test]
fn sequence_numbers_wrap_during_a_transfer() {
    // ISS just below 2^32: the stream crosses the wrap after 2000 bytes.
    let c = cfg(CcKind::NewReno(Default::default()), true);
    let mut p = big_queue_pair(&c);
    p.client = Connection::client(&c, u32::MAX - 2000);
    p.fwd.loss = Some(drop_indices(vec![1, 2, 10]));
    assert!(p.transfer(500_000, Time::from_secs(30)));
    assert_eq!(p.server.stats().bytes_delivered, 500_000);
}

#[test]
fn close_sends_a_fin_after_the_data_and_both_ends_finish() {
    let c = cfg(CcKind::NewReno(Default::default()), true);
    let mut p = big_queue_pair(&c);
    p.open();
    p.send(5_000);
    p.close();
    assert!(p.drive_until(Time::from_secs(10), |p| p.client.state() == netreturn_tcp::State::FinWait2));
    assert_eq!(p.server.state(), netreturn_tcp::State::CloseWait);
    assert_eq!(p.server.stats().bytes_delivered, 5_000);
}

#[test]
#[ignore = "speed check: cargo test --release -- --ignored --nocapture"]
fn bulk_transfer_speed() {
    let c = TcpConfig { mss: 1458, rcv_buf: 1 << 20, ..Default::default() };
    let mut p = Pair::with_links(
        &c,
        &c,
        Link::new(Time::from_millis(10), 1_000_000_000, 200_000),
        Link::new(Time::from_millis(10), 1_000_000_000, 200_000),
    );
    let t = std::time::Instant::now();
    assert!(p.transfer(500_000_000, Time::from_secs(600)));
    let el = t.elapsed().as_secs_f64();
    let segs = p.client.stats().segments_received + p.server.stats().segments_received;
    println!("{segs} segment events in {el:.2} s: {:.1} M/s; {:?}", segs as f64 / el / 1e6, p.client.stats());
}

#[test]
fn a_sender_held_by_the_receive_window_does_not_grow_cwnd_beyond_it() {
    // ns-3 m_isCwndLimited / Linux tcp_is_cwnd_limited: cwnd grows only
    // while it limits the sender. A 16 kB receive buffer on a path that
    // could carry far more keeps every flight at 16 kB; without the rule
    // slow start would take cwnd to megabytes over 1 MB of ACKs.
    for cc in [CcKind::Cubic(Default::default()), CcKind::NewReno(Default::default())] {
        let client = cfg(cc, true);
        let server = TcpConfig { rcv_buf: 16_000, ..client };
        let mut p = Pair::with_links(
            &client,
            &server,
            Link::new(Time::from_millis(20), 100_000_000, 1 << 20),
            Link::new(Time::from_millis(20), 100_000_000, 1 << 20),
        );
        assert!(p.transfer(1_000_000, Time::from_secs(60)), "{cc:?}");
        let probe = p.client.probe();
        assert!(probe.cwnd <= 16_000 + 2 * 1000, "{cc:?}: cwnd {} with a 16 kB window", probe.cwnd);
        assert!(probe.cwnd >= 10_000, "{cc:?}: cwnd {} fell below the initial window", probe.cwnd);
    }
}

/// A 4 MB transfer of `cc` over 10 Mb/s, 40 ms RTT and a 1 MB queue:
/// returns the pair and the mean RTT the client sampled after the first
/// second (the queue it keeps, once past its start-up).
fn deep_buffer_run(cc: CcKind) -> (Pair, f64) {
    let c = cfg(cc, true);
    let mut p = big_queue_pair(&c);
    p.open();
    p.send(4_000_000);
    let (mut sum, mut n) = (0.0, 0u64);
    let done = p.drive_until(Time::from_secs(60), |p| {
        if p.now > Time::from_secs(1) {
            if let Some(r) = p.client.last_rtt() {
                sum += r.secs_f64();
                n += 1;
            }
        }
        p.client.all_data_acked()
    });
    assert!(done, "{cc:?} did not complete");
    assert_eq!(p.server.stats().bytes_delivered, 4_000_000);
    (p, sum / n.max(1) as f64)
}

#[test]
fn bbr_fills_a_deep_buffered_link_with_a_short_queue_where_cubic_fills_the_buffer() {
    // BBR's cwnd is 2 BDP (draft-cardwell-iccrg-bbr-congestion-control-00
    // section 4.2.3.2), so its queue holds at most about one BDP (40 ms
    // here); CUBIC grows until the 1 MB (800 ms) buffer overflows.
    let (bbr, bbr_rtt) = deep_buffer_run(CcKind::Bbr(Default::default()));
    let (cubic, cubic_rtt) = deep_buffer_run(CcKind::Cubic(Default::default()));
    assert!(bbr_rtt < 0.1, "BBR's mean RTT {bbr_rtt}");
    assert!(cubic_rtt > 4.0 * bbr_rtt, "CUBIC's mean RTT {cubic_rtt} against BBR's {bbr_rtt}");
    // 4 MB at 10 Mb/s (with headers) is about 3.4 s: BBR is as fast.
    assert!(bbr.now.secs_f64() < 1.1 * cubic.now.secs_f64() + 0.1, "BBR {} CUBIC {}", bbr.now, cubic.now);
    assert!(bbr.now < Time::from_secs(4), "BBR took {}", bbr.now);
    // The delivery-rate estimate is the bottleneck's payload rate: 10 Mb/s
    // less 52 bytes of headers per 1000.
    let payload = 10e6 / 8.0 * 1000.0 / 1052.0;
    let est = bbr.client.bandwidth_estimate().expect("BBR keeps an estimate");
    assert!(est > 0.9 * payload && est < 1.05 * payload, "estimate {est} against {payload}");
}

#[test]
fn bbr_recovers_losses_and_counts_sacked_segments_as_delivered() {
    // Every 50th data segment lost: recovery with SACK (rate samples from
    // SACKed segments) and without (cumulative ACKs only) both complete,
    // and the estimate stays near the link rate rather than collapsing as
    // a loss-based control's window would.
    for sack in [true, false] {
        let c = cfg(CcKind::Bbr(Default::default()), sack);
        let mut p = big_queue_pair(&c);
        p.fwd.loss = Some(Box::new(|i, _| i % 50 == 49));
        assert!(p.transfer(2_000_000, Time::from_secs(60)), "sack={sack}");
        let payload = 10e6 / 8.0 * 1000.0 / 1052.0;
        let est = p.client.bandwidth_estimate().expect("estimate");
        assert!(est > 0.7 * payload && est < 1.05 * payload, "sack={sack}: estimate {est}");
        assert!(p.now < Time::from_secs(6), "sack={sack}: took {}", p.now);
    }
}
