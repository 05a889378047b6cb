//! The real gateway's dequeue-time queues (the `control` crate's CoDel,
//! FQ-CoDel, PIE, FQ-PIE and DualPI2) on frames: the same queues as the
//! simulator's, marking real IPv4 headers.

use netreturn_base::{Ecn, Rate, TcpFlags, Time};
use netreturn_control::queue::aqm::AqmParams;
use netreturn_control::queue::{Discipline, DropTail, Limit};
use netreturn_control::QueueKind;
use netreturn_gateway::pipeline::{Dir, LinkConfig, NoController, Pipeline};
use netreturn_wire::frame::{build_tcp_frame, ipv4_ecn, tcp_checksums_ok};
use netreturn_wire::ipv4;

fn aqm_link(kind: QueueKind, rate: Rate, limit: u32, params: Option<AqmParams>) -> LinkConfig {
    LinkConfig {
        rate: Some(rate),
        delay: Time::ZERO,
        loss: 0.0,
        discipline: Discipline::DropTail(DropTail::new(Limit::Packets(limit))),
        aqm: Some((kind, params)),
    }
}

fn plain() -> LinkConfig {
    LinkConfig {
        rate: None,
        delay: Time::ZERO,
        loss: 0.0,
        discipline: Discipline::DropTail(DropTail::new(Limit::Packets(100))),
        aqm: None,
    }
}

/// A 1500-byte data frame of flow `sport` with ECN field `ecn`.
fn data(sport: u16, ecn: Ecn) -> Vec<u8> {
    let mut f = build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], sport, 5001, 1, 1, TcpFlags::ACK, 500, &[], &[7; 1446]);
    let (ip, _) = ipv4_ecn(&f).unwrap();
    f[ip + 1] = (f[ip + 1] & !0b11) | ecn.bits();
    ipv4::Packet::new_unchecked(&mut f[ip..]).fill_checksum();
    f
}

/// Offers `per_ms` frames of each flow every millisecond for `ms`
/// milliseconds, polling as the I/O loop would; returns the frames out.
fn offer(p: &mut Pipeline<NoController>, flows: &[(u16, Ecn, u32)], ms: u64) -> Vec<Vec<u8>> {
    let mut out = vec![];
    for t in 0..ms {
        let now = Time::from_millis(t);
        for &(sport, ecn, per_ms) in flows {
            for _ in 0..per_ms {
                p.on_frame(now, Dir::AtoB, data(sport, ecn));
            }
        }
        p.poll(now, &mut |_, f| out.push(f));
    }
    out
}

#[test]
fn fq_codel_on_the_gateway_marks_ect_frames_ce_with_valid_checksums_and_drops_none() {
    // 12 Mb/s offered into a 10 Mb/s link (one 1500-byte frame per 1.2 ms
    // leaves) for 3 s: a standing queue, which CoDel answers by marking.
    let mut p: Pipeline<NoController> =
        Pipeline::new(aqm_link(QueueKind::FqCoDel, Rate::mbps(10), 10_000, None), plain(), None, 1);
    let out = offer(&mut p, &[(40000, Ecn::Ect0, 1)], 3_000);
    let marked = out.iter().filter(|f| ipv4_ecn(f).unwrap().1 == Ecn::Ce).count();
    assert!(marked > 10, "{marked} frames marked");
    assert_eq!(p.stats().a_to_b.ecn_marked as usize, marked);
    assert_eq!(p.stats().a_to_b.dropped_queue, 0, "ECN-capable frames are marked, not dropped");
    for f in &out {
        let (ip, _) = ipv4_ecn(f).unwrap();
        assert!(ipv4::Packet::new_checked(&f[ip..]).unwrap().verify_checksum());
        assert!(tcp_checksums_ok(f));
    }
}

#[test]
fn codel_on_the_gateway_drops_not_ect_frames_where_it_would_mark() {
    let mut p: Pipeline<NoController> =
        Pipeline::new(aqm_link(QueueKind::CoDel, Rate::mbps(10), 10_000, None), plain(), None, 1);
    let mut out = offer(&mut p, &[(40000, Ecn::NotEct, 1)], 10_000);
    // Dropping, CoDel brings this open-loop overload's queue back down
    // once its drop rate (interval / sqrt(count)) has grown to the excess
    // (after about 2 s here), where a FIFO would hold 2 Mb/s x 10 s = 1700
    // frames of excess by the end. (Nothing reacts to marks in these
    // tests, so the ECN test's queue does grow.)
    assert!(p.queued_packets(Dir::AtoB) < 250, "{} frames queued", p.queued_packets(Dir::AtoB));
    assert!(p.stats().a_to_b.dropped_queue > 10);
    while let Some(t) = p.next_wakeup() {
        p.poll(t, &mut |_, f| out.push(f));
    }
    assert_eq!(p.stats().a_to_b.ecn_marked, 0);
    assert!(out.iter().all(|f| ipv4_ecn(f).unwrap().1 == Ecn::NotEct));
    let st = p.stats().a_to_b;
    assert_eq!(p.queued_packets(Dir::AtoB), 0);
    assert_eq!(st.received, st.forwarded + st.dropped_queue, "every frame is forwarded or dropped");
    assert_eq!(out.len() as u64, st.forwarded);
}

#[test]
fn fq_codel_on_the_gateway_gives_a_sparse_flow_its_packets_ahead_of_a_bulk_queue() {
    // RFC 8290 section 4.2: a flow that becomes active is served from the
    // new list, ahead of the backlogged bulk flow.
    let params = AqmParams { ecn: Some(true), ..AqmParams::default() };
    let mut p: Pipeline<NoController> =
        Pipeline::new(aqm_link(QueueKind::FqCoDel, Rate::mbps(10), 10_000, Some(params)), plain(), None, 1);
    for _ in 0..50 {
        p.on_frame(Time::ZERO, Dir::AtoB, data(40000, Ecn::Ect0));
    }
    let t = Time::from_millis(10);
    p.on_frame(t, Dir::AtoB, data(40001, Ecn::Ect0));
    let mut out = vec![];
    let mut now = t;
    while out.len() < 12 {
        p.poll(now, &mut |_, f| out.push(f));
        now = p.next_wakeup().expect("frames pending");
    }
    let sparse_at = out.iter().position(|f| f[34..36] == 40001u16.to_be_bytes()).expect("the sparse frame left");
    assert!(sparse_at <= 10, "the sparse frame left {sparse_at}th, not behind 40 bulk frames");
}

/// A FIFO link under RED over a 150-frame buffer, its thresholds at a
/// twelfth and a quarter of it (the Linux-like preset), `w_q = 1` so RED
/// reacts at once, with the link's `red` table applied.
fn red_link(rate: Rate, red: netreturn_control::queue::RedParams) -> LinkConfig {
    let buffer = 150 * 1514;
    let discipline = QueueKind::Red.discipline(
        Limit::Bytes(buffer),
        1514,
        rate.tx_time(1514),
        Some(&netreturn_control::queue::RedParams { w_q: Some(1.0), ..red }),
    );
    LinkConfig { rate: Some(rate), delay: Time::ZERO, loss: 0.0, discipline, aqm: None }
}

#[test]
fn red_with_ecn_on_the_gateway_marks_ect_frames_with_valid_checksums_and_drops_not_ect_ones() {
    // 12 Mb/s offered into 10 Mb/s for 2 s: the queue climbs into RED's
    // early region. With `red.ecn`, ECT(0) frames are marked CE there
    // (RFC 3168 section 5), their IPv4 checksum patched; Not-ECT frames of
    // the same load are dropped and never marked.
    let ecn = netreturn_control::queue::RedParams { ecn: Some(true), ..Default::default() };
    let mut p: Pipeline<NoController> = Pipeline::new(red_link(Rate::mbps(10), ecn.clone()), plain(), None, 1);
    let mut out = offer(&mut p, &[(40000, Ecn::Ect0, 1)], 2_000);
    // RED marks on arrival: the frames still queued leave with theirs.
    while let Some(t) = p.next_wakeup() {
        p.poll(t, &mut |_, f| out.push(f));
    }
    let marked = out.iter().filter(|f| ipv4_ecn(f).unwrap().1 == Ecn::Ce).count();
    let st = p.stats().a_to_b;
    assert_eq!(st.received, st.forwarded + st.dropped_queue);
    assert!(marked > 10, "{marked} frames marked");
    assert_eq!(st.ecn_marked as usize, marked);
    for f in &out {
        let (ip, _) = ipv4_ecn(f).unwrap();
        assert!(ipv4::Packet::new_checked(&f[ip..]).unwrap().verify_checksum());
        assert!(tcp_checksums_ok(f));
    }
    let mut q: Pipeline<NoController> = Pipeline::new(red_link(Rate::mbps(10), ecn), plain(), None, 1);
    let out = offer(&mut q, &[(40000, Ecn::NotEct, 1)], 2_000);
    assert_eq!(q.stats().a_to_b.ecn_marked, 0);
    assert!(q.stats().a_to_b.dropped_queue > 10);
    assert!(out.iter().all(|f| ipv4_ecn(f).unwrap().1 == Ecn::NotEct));
}

#[test]
fn cobalt_on_the_gateway_marks_ect_frames_and_conserves_frames() {
    // CAKE's default: COBALT marks ECN-capable frames where CoDel would
    // drop; every frame is forwarded, dropped or still queued.
    let mut p: Pipeline<NoController> =
        Pipeline::new(aqm_link(QueueKind::Cobalt, Rate::mbps(10), 10_000, None), plain(), None, 1);
    let mut out = offer(&mut p, &[(40000, Ecn::Ect0, 1), (40001, Ecn::NotEct, 1)], 3_000);
    assert!(p.stats().a_to_b.ecn_marked > 10, "{} marked", p.stats().a_to_b.ecn_marked);
    assert!(p.stats().a_to_b.dropped_queue > 10, "the Not-ECT flow is dropped");
    while let Some(t) = p.next_wakeup() {
        p.poll(t, &mut |_, f| out.push(f));
    }
    let st = p.stats().a_to_b;
    assert_eq!(st.received, st.forwarded + st.dropped_queue);
    assert_eq!(out.len() as u64, st.forwarded);
    for f in &out {
        let (ip, e) = ipv4_ecn(f).unwrap();
        assert!(ipv4::Packet::new_checked(&f[ip..]).unwrap().verify_checksum());
        let sport = u16::from_be_bytes([f[ip + 20], f[ip + 21]]);
        assert!(sport == 40000 || e == Ecn::NotEct, "a Not-ECT frame left {e:?}");
    }
}
