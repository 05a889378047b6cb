//! The kernel datapath's eBPF programs, run in this kernel on crafted frames
//! (`BPF_PROG_TEST_RUN`): the ACK rewrite agrees with the user-space
//! gateway's, frames the programs do not understand pass untouched and are
//! counted, and the flow table hears of the segments it needs. Needs root
//! (CAP_BPF); without it each test says so and passes nothing off as run.

#![cfg(target_os = "linux")]

use netreturn_base::{FlowKey, Rate, TcpFlags, Time};
use netreturn_control::ewt::EwtConfig;
use netreturn_control::ngwa::NgwaEdge;
use netreturn_control::ngwa_receiver::NgwaConfig;
use netreturn_control::{ControllerConfig, GatewayConfig, QueueEvent, QueueEventKind, WindowGateway};
use netreturn_gateway::kernel::maps::{Counter, NgwaCounter, NrKey, NrWindow};
use netreturn_wire::frame::{build_tcp_frame, tcp_checksums_ok, tcp_view};
use netreturn_wire::ipv4;
use proptest::prelude::*;

#[cfg(netreturn_bpf)]
use netreturn_gateway::kernel::bpf::{Load, Programs, Report};

const SENDER: [u8; 4] = [10, 77, 1, 1];
const RECEIVER: [u8; 4] = [10, 77, 2, 1];
const TC_ACT_OK: u32 = 0;

/// The programs, or `None` (and why, on stderr) where this process may not
/// load them.
#[cfg(netreturn_bpf)]
fn programs() -> Option<Programs> {
    load(Load::plain(64, true))
}

#[cfg(netreturn_bpf)]
fn load(l: Load) -> Option<Programs> {
    match Programs::load(l) {
        Ok(p) => Some(p),
        Err(e) if unsafe { libc::geteuid() } != 0 => {
            eprintln!("skipped: not root ({e})");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// An ACK from the receiver (B side) to the sender.
fn ack(window: u16) -> Vec<u8> {
    build_tcp_frame(RECEIVER, SENDER, 5001, 40_000, 900, 1_000_000, TcpFlags::ACK, window, &[], &[])
}

fn window_of(frame: &[u8]) -> u16 {
    tcp_view(frame).unwrap().window
}

/// An EWT gateway (B = 100 kB) that saw the handshake of the flow, its
/// first data, and a queue `occupancy` bytes full.
fn ewt_after_handshake(occupancy: u64, shift: u8) -> WindowGateway {
    let cfg = GatewayConfig::new(ControllerConfig::Ewt(EwtConfig::default()), 100_000, Rate::mbps(45));
    let mut g = WindowGateway::new(cfg);
    let t = Time::from_millis(1);
    let ws = [1, 3, 3, shift];
    let syn = build_tcp_frame(SENDER, RECEIVER, 40_000, 5001, 0, 0, TcpFlags::SYN, 64_240, &ws, &[]);
    let synack =
        build_tcp_frame(RECEIVER, SENDER, 5001, 40_000, 0, 1, TcpFlags::SYN.union(TcpFlags::ACK), 65_160, &ws, &[]);
    let data = build_tcp_frame(SENDER, RECEIVER, 40_000, 5001, 1, 1, TcpFlags::ACK, 502, &[], &[7; 100]);
    g.on_data(t, &tcp_view(&syn).unwrap());
    let _ = g.on_ack(t, &tcp_view(&synack).unwrap());
    g.on_data(t, &tcp_view(&data).unwrap());
    let ev = QueueEvent {
        kind: QueueEventKind::Enqueue,
        size: 1500,
        backlog_bytes: occupancy,
        backlog_packets: (occupancy / 1500) as u32,
    };
    g.on_queue(t, &ev);
    g
}

/// The window entries the kernel path writes for `g` (the ACKs come from
/// the receiver, the side of the SYN-ACK).
fn entries(g: &mut WindowGateway) -> Vec<(NrKey, NrWindow)> {
    let mut out = Vec::new();
    let receiver = FlowKey { src: 0x0a4d_0201, dst: 0x0a4d_0101, sport: 5001, dport: 40_000, proto: FlowKey::TCP };
    let side = netreturn_control::flows::side_of(receiver);
    g.kernel_windows(Time::from_millis(2), |_| Some(side), &mut out);
    out.iter().map(|w| (NrKey::of(&w.ack_key), NrWindow::of(w))).collect()
}

#[test]
fn the_user_space_rule_for_a_flow_is_the_window_on_ack_would_write() {
    // Pure: no kernel. seed 000 Table 1: B = 100 kB, U = 70 kB, Wr = 60 kB
    // -> Wewt = 18 kB; the ACK from the receiver, scale 7.
    for (occupancy, raw) in [(70_000u64, 469u16), (20_000, 469), (99_000, 30), (70_000, 11)] {
        let mut g = ewt_after_handshake(occupancy, 7);
        let e = entries(&mut g);
        assert_eq!(e.len(), 1);
        let frame = ack(raw);
        let user = g.on_ack(Time::from_millis(3), &tcp_view(&frame).unwrap());
        assert_eq!(e[0].1.field(raw), user, "occupancy {occupancy}, raw {raw}");
    }
    let mut g = ewt_after_handshake(70_000, 7);
    let e = entries(&mut g);
    assert_eq!((e[0].1.num, e[0].1.den), (30_000, 100_000), "Ba / B (seed 000 eq. 9, 10)");
    // Below St = 29 kB EWT does not act: the entry exists (steady) without a rule.
    let e = entries(&mut ewt_after_handshake(20_000, 7));
    assert_eq!((e[0].1.rule_on, e[0].1.steady), (0, 1));
}

#[cfg(netreturn_bpf)]
#[test]
fn the_kernel_program_lowers_an_ack_exactly_as_the_user_space_gateway_and_keeps_the_checksum() {
    let Some(mut p) = programs() else { return };
    let mut g = ewt_after_handshake(70_000, 7);
    for (k, v) in entries(&mut g) {
        p.windows.insert(k, v, 0).unwrap();
    }
    for raw in [469u16, 200, 40, 12, 11, 1, 65_535] {
        let frame = ack(raw);
        let user = g.clone().on_ack(Time::from_millis(3), &tcp_view(&frame).unwrap());
        let (verdict, out) = p.run_on("nr_ack", &frame).unwrap();
        assert_eq!(verdict, TC_ACT_OK);
        assert_eq!(out.len(), frame.len());
        assert_eq!(window_of(&out), user.unwrap_or(raw), "raw window {raw}");
        assert!(tcp_checksums_ok(&out), "raw window {raw}: the receiving kernel would drop it");
        // Nothing else moved.
        let mut expect = frame.clone();
        let tcp = 14 + 20;
        expect[tcp + 14..tcp + 18].copy_from_slice(&out[tcp + 14..tcp + 18]);
        assert_eq!(out, expect);
    }
    let c = p.counters();
    assert_eq!(c[Counter::ACKS_SEEN as usize], 7);
    assert!(c[Counter::ACKS_REWRITTEN as usize] >= 4, "{c:?}");
}

#[cfg(netreturn_bpf)]
#[test]
fn with_run_statistics_on_each_program_reports_its_runs_and_their_time() {
    let Some(mut p) = programs() else { return };
    let before = p.run_stats().unwrap();
    let on = netreturn_gateway::kernel::bpf::enable_run_stats().unwrap();
    for _ in 0..5 {
        p.run_on("nr_ack", &ack(469)).unwrap();
    }
    p.run_on("nr_data", &ack(469)).unwrap();
    let after = p.run_stats().unwrap();
    drop(on);
    // The kernel's statistics are global: another process may have them on
    // too, so the counts only grow by at least what ran here.
    assert!(after[1].0 >= before[1].0 + 5 && after[1].1 > before[1].1, "nr_ack: {before:?} -> {after:?}");
    assert!(after[0].0 > before[0].0 && after[0].1 > before[0].1, "nr_data: {before:?} -> {after:?}");
}

#[cfg(netreturn_bpf)]
#[test]
fn frames_the_programs_do_not_understand_pass_untouched_and_are_counted() {
    let Some(mut p) = programs() else { return };
    let good = ack(469);
    let mut bad_ip_sum = good.clone();
    bad_ip_sum[14 + 10] ^= 0xff;
    let mut truncated_tcp = good.clone();
    truncated_tcp[14 + 20 + 12] = 0xf0; // data offset 60 B > the segment
    let mut fragment = good.clone();
    fragment[14 + 6] = 0x20; // more fragments
    let mut ipv6 = good.clone();
    ipv6[12..14].copy_from_slice(&[0x86, 0xdd]);
    // (A frame shorter than an IPv4 header cannot be test-run: the kernel's
    // harness refuses it before the program runs.)
    let mut claims_more = good.clone();
    claims_more[14 + 2..14 + 4].copy_from_slice(&1500u16.to_be_bytes());
    let mut bad_version = good.clone();
    bad_version[14] = 0x65;
    let cases = [
        (bad_ip_sum, Counter::Malformed),
        (truncated_tcp, Counter::Malformed),
        (bad_version, Counter::Malformed),
        (fragment, Counter::Fragments),
        (ipv6, Counter::NotIpv4),
        (claims_more, Counter::Malformed),
    ];
    // A rule that would lower every window it is allowed to.
    let key = NrKey::of(&tcp_view(&good).unwrap().key);
    let w = NrWindow { num: 1, den: 0, floor: 1, shift: 0, rule_on: 1, steady: 1, ..NrWindow::default() };
    p.windows.insert(key, w, 0).unwrap();
    for (frame, counter) in &cases {
        let before = p.counters()[counter.at(1) as usize];
        let (verdict, out) = p.run_on("nr_ack", frame).unwrap();
        assert_eq!(verdict, TC_ACT_OK);
        assert_eq!(&out, frame, "{counter:?}: a frame the program does not understand must pass as it came");
        assert_eq!(p.counters()[counter.at(1) as usize], before + 1, "{counter:?}");
    }
    assert_eq!(p.counters()[Counter::ACKS_REWRITTEN as usize], 0);
}

#[cfg(netreturn_bpf)]
#[test]
fn a_syn_is_reported_with_its_options_and_never_rewritten_and_a_steady_flow_is_not_reported() {
    let Some(mut p) = programs() else { return };
    let ws = [2, 4, 0x05, 0xb4, 1, 3, 3, 9];
    let synack =
        build_tcp_frame(RECEIVER, SENDER, 5001, 40_000, 0, 1, TcpFlags::SYN.union(TcpFlags::ACK), 65_160, &ws, &[]);
    let key = NrKey::of(&tcp_view(&synack).unwrap().key);
    let w = NrWindow { num: 1, den: 0, floor: 1, shift: 0, rule_on: 1, steady: 1, ..NrWindow::default() };
    p.windows.insert(key, w, 0).unwrap();
    let (_, out) = p.run_on("nr_ack", &synack).unwrap();
    assert_eq!(out, synack, "a SYN's window is unscaled (RFC 7323 section 2.2): never rewritten");
    // A data segment of the steady flow: counted, not reported.
    let data = build_tcp_frame(SENDER, RECEIVER, 40_000, 5001, 1, 1, TcpFlags::ACK, 502, &[], &[7; 1000]);
    let (_, out) = p.run_on("nr_data", &data).unwrap();
    assert_eq!(out, data);
    let mut seen = Vec::new();
    p.drain(usize::MAX, |e| seen.push(e));
    assert_eq!(seen.len(), 1, "only the SYN-ACK is reported: {seen:?}");
    assert_eq!((seen[0].view.wscale, seen[0].view.mss), (Some(9), Some(1460)));
    assert!(seen[0].view.flags.syn());
    let e = p.seen.get(&key, 0).unwrap();
    assert_eq!(e.bytes, data.len() as u64, "the flow's bytes A -> B");
    assert!(e.last_ns > 0);
    let c = p.counters();
    assert_eq!(c[Counter::Bytes.at(0) as usize], data.len() as u64);
    assert_eq!(c[Counter::Tcp.at(0) as usize], 1);
}

#[cfg(netreturn_bpf)]
proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_kernel_never_raises_a_window_and_agrees_with_the_rule_for_any_entry(
        raw in 0u16..=u16::MAX, shift in 0u8..=14, num in 0u64..200_000, den in 0u64..200_000, floor in 0u64..70_000,
    ) {
        let Some(mut p) = programs() else { return Ok(()) };
        let frame = ack(raw);
        let key = NrKey::of(&tcp_view(&frame).unwrap().key);
        let w = NrWindow { num, den, floor, shift, rule_on: 1, steady: 1, ..NrWindow::default() };
        p.windows.insert(key, w, 0).unwrap();
        let (_, out) = p.run_on("nr_ack", &frame).unwrap();
        prop_assert!(window_of(&out) <= raw);
        prop_assert_eq!(window_of(&out), w.field(raw).unwrap_or(raw));
        prop_assert!(tcp_checksums_ok(&out));
    }
}

/// Programs with NGWA's roles on (MTU 1500), reporting what a flow table
/// needs.
#[cfg(netreturn_bpf)]
fn ngwa_programs(router: bool, edge: bool) -> Option<Programs> {
    load(Load { max_flows: 64, report: Report::FlowTable, ngwa_router: router, ngwa_edge: edge, mtu: 1500 })
}

/// A data segment A -> B with `payload` bytes.
fn data(payload: usize) -> Vec<u8> {
    build_tcp_frame(SENDER, RECEIVER, 40_000, 5001, 1, 1, TcpFlags::ACK, 502, &[], &vec![7; payload])
}

/// A data segment A -> B with `payload` bytes whose IPv4 header carries
/// `opts` (a multiple of 4 bytes) as its options.
fn data_with_options(payload: usize, opts: &[u8]) -> Vec<u8> {
    let mut f = data(payload);
    f.splice(34..34, opts.iter().copied());
    let hl = 20 + opts.len();
    let mut ip = ipv4::Packet::new_unchecked(&mut f[14..]);
    ip.set_version_and_header_len(hl);
    ip.set_total_len((hl + 20 + payload) as u16);
    ip.fill_checksum();
    f
}

/// `frame` as the packet datapath marks it: wire::ipv4::insert_ngwa.
fn inserted(frame: &[u8], w: u32) -> Vec<u8> {
    let mut out = frame.to_vec();
    out.extend_from_slice(&[0; ipv4::NGWA_INSERT_LEN]);
    ipv4::insert_ngwa(&mut out[14..], w);
    out
}

fn ngwa_count(p: &Programs, dir: u32, c: NgwaCounter) -> u64 {
    p.counters()[c.at(dir) as usize]
}

#[cfg(netreturn_bpf)]
#[test]
fn an_ngwa_router_in_the_kernel_marks_a_segment_byte_for_byte_as_the_packet_datapath() {
    let Some(mut p) = ngwa_programs(true, false) else { return };
    let frame = data(1000);
    // Before the first tick there is no W_node: the segment passes as it came.
    let (_, out) = p.run_on("nr_data", &frame).unwrap();
    assert_eq!(out, frame);
    // Seed 001 section 2: a packet without the option gets W_node.
    p.set_node(0, 12_345).unwrap();
    let (verdict, out) = p.run_on("nr_data", &frame).unwrap();
    assert_eq!(verdict, TC_ACT_OK);
    assert_eq!(out, inserted(&frame, 12_345), "the option, its NOPs, IHL, total length and header checksum");
    assert!(tcp_checksums_ok(&out), "the option is not in the TCP pseudo-header");
    assert_eq!(ipv4::Packet::new_unchecked(&out[14..]).ngwa(), Some(12_345));
    // A value above W_node is lowered to it; one at most W_node is kept.
    p.set_node(0, 5_000).unwrap();
    let (_, lowered) = p.run_on("nr_data", &out).unwrap();
    let mut expect = out.clone();
    let mut ip = ipv4::Packet::new_unchecked(&mut expect[14..]);
    assert!(ip.set_ngwa(5_000));
    ip.fill_checksum();
    assert_eq!(lowered, expect);
    p.set_node(0, 9_000).unwrap();
    let (_, kept) = p.run_on("nr_data", &lowered).unwrap();
    assert_eq!(kept, lowered);
    // B -> A is marked with its own W_node.
    p.set_node(1, 777).unwrap();
    let (_, back) = p.run_on("nr_ack", &ack(100)).unwrap();
    assert_eq!(back, inserted(&ack(100), 777));
    let n = |c| ngwa_count(&p, 0, c);
    assert_eq!((n(NgwaCounter::Inserted), n(NgwaCounter::Lowered), n(NgwaCounter::Kept)), (1, 1, 1));
    assert_eq!(ngwa_count(&p, 1, NgwaCounter::Inserted), 1);
}

#[cfg(netreturn_bpf)]
#[test]
fn a_segment_the_option_would_push_past_the_mtu_or_a_full_header_passes_untouched_and_is_counted() {
    let Some(mut p) = ngwa_programs(true, false) else { return };
    p.set_node(0, 1_000).unwrap();
    // 20 + 20 + 1453 = 1493: 8 more bytes pass 1500.
    let big = data(1453);
    let (_, out) = p.run_on("nr_data", &big).unwrap();
    assert_eq!(out, big);
    assert_eq!(ngwa_count(&p, 0, NgwaCounter::TooBig), 1);
    // 1452 bytes fit exactly.
    let (_, out) = p.run_on("nr_data", &data(1452)).unwrap();
    assert_eq!(out.len(), data(1452).len() + 8);
    // A header with 36 bytes of options has no room for 8 more.
    let full = data_with_options(10, &[1u8; 36]);
    let (_, out) = p.run_on("nr_data", &full).unwrap();
    assert_eq!(out, full);
    assert_eq!(ngwa_count(&p, 0, NgwaCounter::OptionsFull), 1);
    // An option list that does not parse (a length running past the header).
    let bad = data_with_options(10, &[7u8, 40, 0, 0]);
    let (_, out) = p.run_on("nr_data", &bad).unwrap();
    assert_eq!(out, bad);
    assert_eq!(ngwa_count(&p, 0, NgwaCounter::BadOptions), 1);
}

#[cfg(netreturn_bpf)]
#[test]
fn a_syn_through_an_ngwa_router_announces_at_most_mtu_minus_48_with_a_valid_checksum() {
    let Some(mut p) = ngwa_programs(true, false) else { return };
    p.set_node(0, 1_000).unwrap();
    // The MSS option at an even and at an odd offset of the option area.
    for opts in [vec![2u8, 4, 0x05, 0xb4, 1, 3, 3, 7], vec![1u8, 2, 4, 0x05, 0xb4, 3, 3, 7]] {
        let syn = build_tcp_frame(SENDER, RECEIVER, 40_000, 5001, 0, 0, TcpFlags::SYN, 64_240, &opts, &[]);
        let (_, out) = p.run_on("nr_data", &syn).unwrap();
        // The segment also got its option: strip it to read the TCP header as sent.
        let mut plain = out.clone();
        let n = ipv4::strip_ngwa(&mut plain[14..]).unwrap();
        plain.truncate(14 + n);
        let view = tcp_view(&plain).unwrap();
        assert_eq!(view.mss, Some(1452), "options {opts:?}");
        assert_eq!(view.wscale, Some(7));
        assert!(tcp_checksums_ok(&out), "options {opts:?}");
    }
    // The flow table hears of the clamped MSS: the SYN is reported after the clamp.
    let mut seen = Vec::new();
    p.drain(usize::MAX, |e| seen.push(e.view.mss));
    assert_eq!(seen, vec![Some(1452), Some(1452)]);
    // An MSS already below the ceiling is left alone.
    let small = build_tcp_frame(SENDER, RECEIVER, 40_000, 5001, 0, 0, TcpFlags::SYN, 64_240, &[2, 4, 0x05, 0x00], &[]);
    let (_, out) = p.run_on("nr_ack", &small).unwrap();
    assert_eq!(tcp_view(&out).unwrap().mss, Some(1280));
    assert_eq!(ngwa_count(&p, 0, NgwaCounter::MssClamped), 2);
    // B -> A too (counted with A -> B's, as the packet datapath counts them).
    let big = build_tcp_frame(
        RECEIVER,
        SENDER,
        5001,
        40_000,
        0,
        1,
        TcpFlags::SYN.union(TcpFlags::ACK),
        65_160,
        &[2, 4, 0x23, 0x28],
        &[],
    );
    let (_, out) = p.run_on("nr_ack", &big).unwrap();
    assert_eq!(tcp_view(&out).unwrap().mss, Some(1452));
    assert!(tcp_checksums_ok(&out));
    assert_eq!(ngwa_count(&p, 0, NgwaCounter::MssClamped), 3);
}

/// An NGWA edge gateway (no smoothing, Wmax 1 MB) that saw the handshake
/// of the flow (scale 7 both ways) and a first segment carrying `value`.
fn ngwa_edge_after_handshake(value: u32) -> WindowGateway<NgwaEdge> {
    let cfg = GatewayConfig::new(ControllerConfig::Ewt(EwtConfig::default()), 100_000, Rate::mbps(10));
    let edge = NgwaEdge::new(NgwaConfig { wmax: 1 << 20, smoothing: None, ..NgwaConfig::default() });
    let mut g = WindowGateway::with_controller(edge, cfg);
    let t = Time::from_millis(1);
    let ws = [1, 3, 3, 7];
    let syn = build_tcp_frame(SENDER, RECEIVER, 40_000, 5001, 0, 0, TcpFlags::SYN, 64_240, &ws, &[]);
    let synack =
        build_tcp_frame(RECEIVER, SENDER, 5001, 40_000, 0, 1, TcpFlags::SYN.union(TcpFlags::ACK), 65_160, &ws, &[]);
    g.on_data(t, &tcp_view(&syn).unwrap());
    let _ = g.on_ack(t, &tcp_view(&synack).unwrap());
    let d = data(100);
    g.on_data(t, &tcp_view(&d).unwrap());
    g.on_inband(t, &tcp_view(&d).unwrap(), &netreturn_base::InBand::Ngwa(value));
    g
}

fn ack_at(ackno: u32, window: u16) -> Vec<u8> {
    build_tcp_frame(RECEIVER, SENDER, 5001, 40_000, 900, ackno, TcpFlags::ACK, window, &[], &[])
}

#[cfg(netreturn_bpf)]
#[test]
fn an_ngwa_edge_in_the_kernel_reads_the_value_and_gives_the_receiver_the_segment_the_sender_sent() {
    let Some(mut p) = ngwa_programs(false, true) else { return };
    let mut g = ngwa_edge_after_handshake(40_000);
    let mut out = Vec::new();
    g.kernel_windows(
        Time::from_millis(2),
        |_| Some(netreturn_control::flows::side_of(tcp_view(&ack(1)).unwrap().key)),
        &mut out,
    );
    assert_eq!(out.len(), 1);
    assert!(out[0].keep_edge);
    let key = NrKey::of(&out[0].ack_key);
    p.windows.insert(key, NrWindow::of(&out[0]), 0).unwrap();
    let sent = data(1000);
    for v in [30_000u32, 20_000, 10_000] {
        let (_, got) = p.run_on("nr_data", &inserted(&sent, v)).unwrap();
        assert_eq!(got, sent, "the option and its NOPs leave, byte for byte");
    }
    // An option behind another becomes NOPs (the header keeps its length,
    // where wire::ipv4::strip_ngwa would shrink it to the other option).
    let behind = data_with_options(1000, &[7u8, 3, 4, 1, 33, 6, 0, 0, 0x13, 0x88, 1, 1]);
    let (_, got) = p.run_on("nr_data", &behind).unwrap();
    assert_eq!(&got[34..46], &[7u8, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(ipv4::Packet::new_unchecked(&got[14..]).ngwa(), None);
    assert!(tcp_checksums_ok(&got));
    let e = p.seen.get(&key, 0).unwrap();
    assert_eq!((e.ngwa_n, e.ngwa_sum, e.ngwa_last), (4, 65_000, 5_000));
    assert_eq!(ngwa_count(&p, 0, NgwaCounter::Stripped), 4);
}

#[cfg(netreturn_bpf)]
#[test]
fn the_kernel_keeps_the_ngwa_edges_right_edge_from_moving_left_as_the_user_space_edge_does() {
    let Some(mut p) = ngwa_programs(false, true) else { return };
    let mut g = ngwa_edge_after_handshake(40_000);
    let side = netreturn_control::flows::side_of(tcp_view(&ack(1)).unwrap().key);
    let t = Time::from_millis(3);
    let d = tcp_view(&data(100)).unwrap();
    // (Wngwa after the ACK's arrival, ACK number, raw window at scale 7.)
    let steps = [
        (40_000u32, 1_001u32, 1_000u16),
        (10_000, 2_001, 1_000),
        (10_000, 30_001, 1_000),
        (10_000, 50_001, 1_000),
        (500, 60_001, 1_000),
        (10_000, 70_001, 50),
    ];
    for (i, (wngwa, ackno, raw)) in steps.into_iter().enumerate() {
        g.on_inband(t, &d, &netreturn_base::InBand::Ngwa(wngwa));
        let mut out = Vec::new();
        g.kernel_windows(t, |_| Some(side), &mut out);
        p.windows.insert(NrKey::of(&out[0].ack_key), NrWindow::of(&out[0]), 0).unwrap();
        let frame = ack_at(ackno, raw);
        let user = g.on_ack(t, &tcp_view(&frame).unwrap());
        let (_, got) = p.run_on("nr_ack", &frame).unwrap();
        assert_eq!(window_of(&got), user.unwrap_or(raw), "step {i}: Wngwa {wngwa}, ACK {ackno}");
        assert!(tcp_checksums_ok(&got));
    }
}
