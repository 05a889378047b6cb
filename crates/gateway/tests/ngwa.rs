//! NGWA on real frames (seed 001 section 4; SPEC.md 2.6): the router step
//! (the simulator's `NgwaRouter` stage through the wire views), the MSS
//! clamp, and the receiver edge (read, rewrite the ACKs, strip), through the
//! pipeline without sockets.

use netreturn_base::{Rate, TcpFlags, Time};
use netreturn_control::ngwa::{NgwaEdge, NgwaRouter, NgwaRouterConfig};
use netreturn_control::queue::{Discipline, DropTail, Limit};
use netreturn_control::{ControllerKind, GatewayConfig, WindowGateway};
use netreturn_gateway::ngwa::NgwaWire;
use netreturn_gateway::pipeline::{Dir, LinkConfig, NoController, Pipeline, WindowHook};
use netreturn_tcp::NgwaConfig;
use netreturn_wire::frame::{build_tcp_frame, classify, tcp_checksums_ok, tcp_view, Class};
use netreturn_wire::ipv4;
use proptest::prelude::*;

const SENDER: [u8; 4] = [10, 0, 0, 1];
const RECEIVER: [u8; 4] = [10, 0, 0, 2];
/// Linux's SYN options: MSS 1460, SACK permitted, timestamps, NOP, wscale 7.
const SYN_OPTS: [u8; 20] = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];

fn link(limit: Limit) -> LinkConfig {
    LinkConfig {
        rate: None,
        delay: Time::ZERO,
        loss: 0.0,
        discipline: Discipline::DropTail(DropTail::new(limit)),
        aqm: None,
    }
}

/// A data segment sender -> receiver (A -> B) with `len` payload bytes.
fn data(len: usize) -> Vec<u8> {
    build_tcp_frame(SENDER, RECEIVER, 5001, 40000, 1, 1, TcpFlags::ACK | TcpFlags::PSH, 500, &[], &vec![7; len])
}

/// An ACK receiver -> sender (B -> A).
fn ack(window: u16) -> Vec<u8> {
    build_tcp_frame(RECEIVER, SENDER, 40000, 5001, 1, 1001, TcpFlags::ACK, window, &[], &[])
}

/// `frame` with `opts` inserted as IPv4 options (IHL, length and header
/// checksum fixed).
fn with_ip_options(frame: &[u8], opts: &[u8]) -> Vec<u8> {
    assert_eq!(opts.len() % 4, 0);
    let mut f = frame[..34].to_vec();
    f.extend_from_slice(opts);
    f.extend_from_slice(&frame[34..]);
    let mut ip = ipv4::Packet::new_unchecked(&mut f[14..]);
    ip.set_version_and_header_len(20 + opts.len());
    ip.set_total_len(ip.total_len() + opts.len() as u16);
    ip.fill_checksum();
    f
}

/// `frame` carrying an NGWA option of value `w`, as an upstream router
/// leaves it.
fn marked(frame: &[u8], w: u32) -> Vec<u8> {
    let mut f = frame.to_vec();
    f.resize(frame.len() + 8, 0);
    ipv4::insert_ngwa(&mut f[14..], w);
    f
}

fn ngwa_of(frame: &[u8]) -> Option<u32> {
    ipv4::Packet::new_checked(&frame[14..]).unwrap().ngwa()
}

fn router(limit: Limit, fd: bool) -> Pipeline<NoController> {
    let mut p = Pipeline::new(link(limit), link(Limit::Packets(1000)), None, 1);
    let r = NgwaRouter::new(NgwaRouterConfig { flow_division: fd, ..Default::default() });
    p.set_ngwa(NgwaWire::new(Some(r), false, 1500));
    p
}

fn edge(se: Option<f64>) -> Pipeline<WindowGateway<NgwaEdge>> {
    let cfg = GatewayConfig::new(ControllerKind::ALL[0].default_config(), 100_000, Rate::mbps(100));
    let rx = NgwaEdge::new(NgwaConfig { wmax: 64_000, smoothing: se, option_bytes: 8 });
    let mut p = Pipeline::new(
        link(Limit::Packets(1000)),
        link(Limit::Packets(1000)),
        Some(WindowGateway::with_controller(rx, cfg)),
        1,
    );
    p.set_ngwa(NgwaWire::new(None, true, 1500));
    p
}

/// Forwards `frames` one at a time (each leaves before the next arrives)
/// and returns what came out.
fn pass<H: WindowHook>(p: &mut Pipeline<H>, t: &mut Time, dir: Dir, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for f in frames {
        *t += Time::from_micros(10);
        p.on_frame(*t, dir, f.clone());
        p.poll(*t, &mut |_, f| out.push(f));
    }
    out
}

/// The handshake of a connection the receiver (B side) opens to the sender,
/// as in the testbed: SYN B -> A, SYN-ACK A -> B, ACK B -> A.
fn handshake<H: WindowHook>(p: &mut Pipeline<H>, t: &mut Time) {
    let syn = build_tcp_frame(RECEIVER, SENDER, 40000, 5001, 0, 0, TcpFlags::SYN, 64240, &SYN_OPTS, &[]);
    let synack =
        build_tcp_frame(SENDER, RECEIVER, 5001, 40000, 0, 1, TcpFlags::SYN | TcpFlags::ACK, 65160, &SYN_OPTS, &[]);
    pass(p, t, Dir::BtoA, &[syn]);
    pass(p, t, Dir::AtoB, &[synack]);
    pass(p, t, Dir::BtoA, &[ack(500)]);
}

#[test]
fn a_router_inserts_its_free_bytes_and_both_checksums_stay_valid() {
    // Seed 001 section 2: W_node = Br, the queue's free bytes as the
    // packet leaves (here 2 of 3 frames still queued behind it).
    let mut p = router(Limit::Bytes(100_000), false);
    let f = data(1000);
    for _ in 0..3 {
        p.on_frame(Time::ZERO, Dir::AtoB, f.clone());
    }
    let mut out = Vec::new();
    p.poll(Time::ZERO, &mut |_, f| out.push(f));
    let vals: Vec<_> = out.iter().map(|f| ngwa_of(f)).collect();
    let sz = f.len() as u32;
    assert_eq!(vals, vec![Some(100_000 - 2 * sz), Some(100_000 - sz), Some(100_000)]);
    for o in &out {
        assert_eq!(o.len(), f.len() + 8, "the option's 8 bytes");
        assert!(tcp_checksums_ok(o), "IPv4 header checksum recomputed, TCP checksum unchanged and valid");
        assert_eq!(&o[42..], &f[34..], "TCP segment moved unchanged");
    }
    assert_eq!(p.ngwa().unwrap().stats().inserted, 3);
}

#[test]
fn a_router_marks_what_it_forwards_from_b_to_a_with_that_direction_s_own_queue() {
    // Each egress marks with its own queue (seed 001 section 2, as the
    // simulator's routers on both directions): the B -> A link holds 5000
    // bytes, the A -> B one 100 000; frames of both directions are queued
    // at once, two each.
    let mut p = Pipeline::new(link(Limit::Bytes(100_000)), link(Limit::Bytes(5_000)), None::<NoController>, 1);
    let mk = || NgwaRouter::new(NgwaRouterConfig::default());
    p.set_ngwa(NgwaWire::new(Some(mk()), false, 1500));
    p.set_ngwa_back(NgwaWire::new(Some(mk()), false, 1500));
    let (f, a) = (data(1000), ack(500));
    for _ in 0..2 {
        p.on_frame(Time::ZERO, Dir::AtoB, f.clone());
        p.on_frame(Time::ZERO, Dir::BtoA, a.clone());
    }
    let mut out = Vec::new();
    p.poll(Time::ZERO, &mut |d, f| out.push((d, f)));
    let vals = |dir: Dir| out.iter().filter(|(d, _)| *d == dir).map(|(_, f)| ngwa_of(f)).collect::<Vec<_>>();
    let (sf, sa) = (f.len() as u32, a.len() as u32);
    assert_eq!(vals(Dir::AtoB), vec![Some(100_000 - sf), Some(100_000)]);
    assert_eq!(vals(Dir::BtoA), vec![Some(5_000 - sa), Some(5_000)]);
    assert!(out.iter().all(|(_, o)| tcp_checksums_ok(o)));
    assert_eq!(p.ngwa().unwrap().stats().inserted, 2);
    assert_eq!(p.ngwa_back().unwrap().stats().inserted, 2);
}

#[test]
fn a_carried_value_is_only_ever_lowered() {
    let mut p = router(Limit::Bytes(50_000), false);
    let mut t = Time::ZERO;
    let out = pass(&mut p, &mut t, Dir::AtoB, &[marked(&data(100), 900_000), marked(&data(100), 7_000)]);
    assert_eq!(ngwa_of(&out[0]), Some(50_000), "lowered to ours");
    assert_eq!(out[1], marked(&data(100), 7_000), "a smaller value passes byte for byte");
    assert!(out.iter().all(|f| tcp_checksums_ok(f)));
    let s = *p.ngwa().unwrap().stats();
    assert_eq!((s.inserted, s.lowered, s.kept), (0, 1, 1));
}

#[test]
fn fragments_full_size_packets_full_headers_and_bad_options_pass_untouched_and_counted() {
    let mut p = router(Limit::Bytes(100_000), false);
    let mut frag = data(100);
    {
        let mut ip = ipv4::Packet::new_unchecked(&mut frag[14..]);
        ip.set_flags_and_offset(false, true, 0);
        ip.fill_checksum();
    }
    let full = data(1500 - 40);
    assert_eq!(full.len(), 1514, "an IP packet of exactly the MTU");
    let no_room = with_ip_options(&data(100), &[1; 40]);
    let bad_opts = with_ip_options(&data(100), &[7, 9, 0, 0]);
    let mut bad_tcp = data(100);
    bad_tcp[14 + 20 + 12] = 0x30; // data offset 3 words
    let frames = vec![frag, full, no_room, bad_opts, bad_tcp];
    let mut t = Time::ZERO;
    let out = pass(&mut p, &mut t, Dir::AtoB, &frames);
    assert_eq!(out, frames, "every one byte for byte");
    let s = *p.ngwa().unwrap().stats();
    assert_eq!((s.too_big, s.options_full, s.bad_options, s.inserted), (1, 1, 1, 0));
    let d = p.stats().a_to_b;
    assert_eq!((d.fragments, d.malformed_passed), (1, 1));
}

#[test]
fn a_router_clamps_the_mss_of_syns_both_ways_so_a_marked_full_segment_fits_the_mtu() {
    // Seed 001 section 4.2: the MSS is reduced by the option's size;
    // 1500 - 40 - 8 = 1452.
    let mut p = router(Limit::Bytes(100_000), false);
    let mut t = Time::ZERO;
    let syn = build_tcp_frame(RECEIVER, SENDER, 40000, 5001, 0, 0, TcpFlags::SYN, 64240, &SYN_OPTS, &[]);
    let small = build_tcp_frame(RECEIVER, SENDER, 40001, 5001, 0, 0, TcpFlags::SYN, 64240, &[2, 4, 0x05, 0x00], &[]);
    let out = pass(&mut p, &mut t, Dir::BtoA, &[syn.clone(), small.clone()]);
    assert_eq!(tcp_view(&out[0]).unwrap().mss, Some(1452));
    assert!(tcp_checksums_ok(&out[0]));
    assert_eq!(out[1], small, "an MSS of 1280 is left alone");
    let synack =
        build_tcp_frame(SENDER, RECEIVER, 5001, 40000, 0, 1, TcpFlags::SYN | TcpFlags::ACK, 65160, &SYN_OPTS, &[]);
    let out = pass(&mut p, &mut t, Dir::AtoB, &[synack]);
    assert_eq!(tcp_view(&out[0]).unwrap().mss, Some(1452));
    assert!(tcp_checksums_ok(&out[0]));
    assert_eq!(p.ngwa().unwrap().stats().mss_clamped, 2);
    // A segment of 1452 bytes (no TCP options) plus the option is 1500.
    let out = pass(&mut p, &mut t, Dir::AtoB, &[data(1452)]);
    assert_eq!(out[0].len() - 14, 1500);
    assert!(ngwa_of(&out[0]).is_some());
    // An edge only clamps nothing.
    let mut e = edge(None);
    assert_eq!(pass(&mut e, &mut t, Dir::BtoA, std::slice::from_ref(&syn)), vec![syn]);
}

/// Through an edge gateway `p`: the handshake, a data segment marked
/// upstream with 20 000 (checked delivered as the sender sent it, option
/// stripped), then an ACK of window field 1000; returns what left for the
/// sender.
fn marked_segment_then_ack(p: &mut Pipeline<WindowGateway<NgwaEdge>>, t: &mut Time) -> Vec<Vec<u8>> {
    handshake(p, t);
    let plain = data(1000);
    let out = pass(p, t, Dir::AtoB, &[marked(&plain, 20_000)]);
    assert_eq!(out, vec![plain], "delivered as the sender sent it");
    pass(p, t, Dir::BtoA, &[ack(1000)])
}

#[test]
fn the_edge_strips_the_option_and_lowers_the_acks_to_wngwa_never_raising_them() {
    let mut p = edge(None);
    let mut t = Time::ZERO;
    // wscale 7: a field of 1000 is 128 000 bytes; Wa = min(Wb, Wmax,
    // Wngwa) = 20 000, written rounded up to the scale unit: 157 (20 096).
    let out = marked_segment_then_ack(&mut p, &mut t);
    assert_eq!(tcp_view(&out[0]).unwrap().window, 157);
    assert!(tcp_checksums_ok(&out[0]));
    // A window already below Wngwa is the receiver's own flow control: kept.
    let out = pass(&mut p, &mut t, Dir::BtoA, &[ack(100)]);
    assert_eq!(out[0], ack(100));
    let n = *p.ngwa().unwrap().stats();
    assert_eq!((n.values_read, n.stripped), (1, 1));
    assert_eq!(p.hook().unwrap().stats().acks_rewritten, 1);
}

#[test]
fn a_gateway_that_is_router_and_edge_rewrites_an_ack_and_then_marks_it_with_valid_checksums() {
    // Both roles on one gateway: the ACK going back is rewritten to Wngwa
    // by the edge and marked by the B -> A router. The window is written
    // where the ACK's TCP header is before the option grows the frame.
    let mut p = edge(None);
    p.set_ngwa(NgwaWire::new(Some(NgwaRouter::new(NgwaRouterConfig::default())), true, 1500));
    p.set_ngwa_back(NgwaWire::new(Some(NgwaRouter::new(NgwaRouterConfig::default())), false, 1500));
    let mut t = Time::ZERO;
    // Marked upstream with 20 000; this router's own free space is larger.
    let out = marked_segment_then_ack(&mut p, &mut t);
    assert!(tcp_checksums_ok(&out[0]), "TCP and IPv4 checksums valid after both steps");
    assert_eq!(tcp_view(&out[0]).unwrap().window, 157, "Wngwa = 20 000 at wscale 7");
    assert!(ngwa_of(&out[0]).is_some(), "the ACK leaves marked");
    assert_eq!(out[0].len(), ack(1000).len() + 8);
    assert_eq!(p.hook().unwrap().stats().acks_rewritten, 1);
}

#[test]
fn the_edge_smooths_wngwa_with_se_as_equation_4() {
    // a = 0.3: 10 000 then 20 000 give 0.7 * 10 000 + 0.3 * 20 000 = 13 000.
    let mut p = edge(Some(0.3));
    let mut t = Time::ZERO;
    handshake(&mut p, &mut t);
    pass(&mut p, &mut t, Dir::AtoB, &[marked(&data(10), 10_000), marked(&data(10), 20_000)]);
    let out = pass(&mut p, &mut t, Dir::BtoA, &[ack(1000)]);
    assert_eq!(tcp_view(&out[0]).unwrap().window, 13_000u32.div_ceil(128) as u16);
}

#[test]
fn a_chain_of_two_routers_and_an_edge_gives_the_sender_the_path_minimum() {
    // 60 kB free at the first router, 20 kB at the second: whichever order,
    // the ACK carries 20 kB (seed 001 section 2).
    for (first, second) in [(60_000, 20_000), (20_000, 60_000)] {
        let (mut r1, mut r2, mut e) =
            (router(Limit::Bytes(first), false), router(Limit::Bytes(second), false), edge(None));
        let mut t = Time::ZERO;
        for p in [&mut r1, &mut r2] {
            handshake(p, &mut t);
        }
        handshake(&mut e, &mut t);
        let f = pass(&mut r1, &mut t, Dir::AtoB, &[data(1000)]);
        let f = pass(&mut r2, &mut t, Dir::AtoB, &f);
        assert_eq!(ngwa_of(&f[0]), Some(20_000));
        let f = pass(&mut e, &mut t, Dir::AtoB, &f);
        assert_eq!(f[0], data(1000));
        let a = pass(&mut e, &mut t, Dir::BtoA, &[ack(1000)]);
        assert_eq!(tcp_view(&a[0]).unwrap().window, 20_000u32.div_ceil(128) as u16);
    }
}

#[test]
fn flow_division_at_the_real_router_divides_by_the_connections_its_syns_registered() {
    // Seed 001 eq. 3: 0.98 * Br / nf; two SYN-ACKs cross A -> B.
    let mut p = router(Limit::Bytes(100_000), true);
    let mut t = Time::ZERO;
    for port in [40000u16, 40001] {
        let sa =
            build_tcp_frame(SENDER, RECEIVER, 5001, port, 0, 1, TcpFlags::SYN | TcpFlags::ACK, 65160, &SYN_OPTS, &[]);
        pass(&mut p, &mut t, Dir::AtoB, &[sa]);
    }
    let out = pass(&mut p, &mut t, Dir::AtoB, &[data(10)]);
    assert_eq!(ngwa_of(&out[0]), Some(49_000));
    assert_eq!(p.ngwa().unwrap().router().unwrap().active_flows(), 2);
}

/// Frames of every kind, damaged at random: TCP data and ACKs with random
/// IPv4 options (NGWA or not, well formed or not), flags, windows and
/// sizes.
fn any_frame() -> impl Strategy<Value = (bool, Vec<u8>)> {
    (
        any::<bool>(),
        0usize..1500,
        any::<u8>(),
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..3).prop_map(|v| v.len() * 4),
        prop::collection::vec(any::<u8>(), 12),
        any::<u32>(),
        prop::option::of((0usize..1600, any::<u8>())),
    )
        .prop_map(|(a_to_b, len, flags, window, nopt, opt_bytes, w, damage)| {
            let (src, dst, sp, dp) =
                if a_to_b { (SENDER, RECEIVER, 5001, 40000) } else { (RECEIVER, SENDER, 40000, 5001) };
            let mut f = build_tcp_frame(
                src,
                dst,
                sp,
                dp,
                1,
                1,
                TcpFlags(flags),
                window,
                &SYN_OPTS[..(flags as usize % 21)],
                &vec![3; len],
            );
            if nopt > 0 {
                f = with_ip_options(&f, &opt_bytes[..nopt]);
            }
            if w % 3 == 0 && f.len() < 1500 {
                f = marked(&f, w);
            }
            if let Some((at, b)) = damage {
                if at < f.len() {
                    f[at] = b;
                }
            }
            (a_to_b, f)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever arrives: no panic; an ACK's window is never raised (SPEC.md
    /// 1 rule 1); a frame whose checksums were valid leaves with valid ones.
    #[test]
    fn the_ngwa_gateway_never_crashes_never_raises_a_window_and_keeps_checksums_valid(
        frames in prop::collection::vec(any_frame(), 1..40)
    ) {
        // Router and edge in one box, the hardest case: both steps on every frame.
        let cfg = GatewayConfig::new(ControllerKind::ALL[0].default_config(), 100_000, Rate::mbps(100));
        let rx = NgwaEdge::new(NgwaConfig { wmax: 64_000, smoothing: Some(0.3), option_bytes: 8 });
        let mut p = Pipeline::new(link(Limit::Bytes(30_000)), link(Limit::Packets(1000)), Some(WindowGateway::with_controller(rx, cfg)), 1);
        p.set_ngwa(NgwaWire::new(Some(NgwaRouter::new(NgwaRouterConfig { flow_division: true, ..Default::default() })), true, 1500));
        let mut t = Time::ZERO;
        handshake(&mut p, &mut t);
        for (a_to_b, f) in frames {
            let dir = if a_to_b { Dir::AtoB } else { Dir::BtoA };
            let out = pass(&mut p, &mut t, dir, std::slice::from_ref(&f));
            let Some(o) = out.first() else { continue };
            if let (Class::Tcp(i), Class::Tcp(oo)) = (classify(&f), classify(o)) {
                if !a_to_b && !i.view.flags.syn() {
                    prop_assert!(oo.view.window <= i.view.window, "raised {} -> {}", i.view.window, oo.view.window);
                }
                if tcp_checksums_ok(&f) {
                    prop_assert!(tcp_checksums_ok(o));
                }
            }
            prop_assert!(o.len() <= f.len().max(14 + 1500), "never past the MTU");
            if let (true, Class::Tcp(loc)) = (a_to_b, classify(&f)) {
                let ip = ipv4::Packet::new_unchecked(&f[loc.ip_offset..]);
                if ip.option_iter().all(|x| x != ipv4::Ipv4Option::Malformed) {
                    let out_ip = ipv4::Packet::new_checked(&o[loc.ip_offset..]).unwrap();
                    prop_assert_eq!(out_ip.ngwa(), None, "the edge delivers no option");
                }
            }
        }
    }
}

/// `frame` with its IPv4 header checksum zeroed (corrupted on the way).
fn corrupted(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    f[24] = 0;
    f[25] = 0;
    assert!(!ipv4::Packet::new_unchecked(&f[14..]).verify_checksum());
    f
}

#[test]
fn a_corrupted_ipv4_header_is_never_laundered_by_marking_stripping_clamping_or_a_window_rewrite() {
    // Issue 23: inserting or stripping the option recomputed the header
    // checksum from scratch, so a header that arrived corrupted (checksum
    // 0x0000) left with a valid one. Each rewrite the gateway does must let
    // such a frame through byte for byte, and count it.
    let mut p = router(Limit::Bytes(100_000), true);
    let mut t = Time::ZERO;
    let bad_data = corrupted(&data(1000));
    let syn = build_tcp_frame(RECEIVER, SENDER, 40000, 5001, 0, 0, TcpFlags::SYN, 64240, &SYN_OPTS, &[]);
    let bad_syn = corrupted(&syn);
    let out = pass(&mut p, &mut t, Dir::AtoB, &[bad_data.clone(), bad_syn.clone()]);
    assert_eq!(out, vec![bad_data, bad_syn], "router: no option inserted, no MSS clamped");
    assert_eq!(p.stats().a_to_b.malformed_passed, 2);
    assert_eq!(p.ngwa().unwrap().stats().inserted + p.ngwa().unwrap().stats().mss_clamped, 0);

    // The edge: a marked segment whose header is corrupted keeps its option.
    let mut p = edge(None);
    let mut t = Time::ZERO;
    handshake(&mut p, &mut t);
    let bad_marked = corrupted(&marked(&data(1000), 20_000));
    let out = pass(&mut p, &mut t, Dir::AtoB, std::slice::from_ref(&bad_marked));
    assert_eq!(out, vec![bad_marked], "edge: not stripped, not read");
    assert_eq!(p.ngwa().unwrap().stats().values_read, 0);
    // A corrupted ACK is not lowered either, and the frames after it are.
    let out = pass(&mut p, &mut t, Dir::BtoA, &[corrupted(&ack(1000))]);
    assert_eq!(out, vec![corrupted(&ack(1000))], "window rewrite: untouched");
    assert_eq!(p.stats().b_to_a.rewritten, 0);
}

#[test]
fn the_kernel_datapath_notes_that_it_marks_at_arrival_only_for_modes_without_flow_division() {
    use netreturn_gateway::cli::Args;
    let notes = |mode: &str, role: &str| {
        let argv: Vec<String> = ["--a", "x", "--b", "y", "--datapath", "kernel", "--ngwa"]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("mode={mode}"), "--ngwa".into(), format!("role={role}")])
            .collect();
        netreturn_gateway::kernel::notes(&Args::parse(&argv).unwrap())
    };
    // Modes 3 and 4 (RFC 793 senders) are refused on real Linux senders.
    for mode in ["1", "2"] {
        let n = notes(mode, "router");
        assert!(n.len() == 1 && n[0].contains(&format!("mode {mode}")) && n[0].contains("arrives"), "{n:?}");
    }
    for mode in ["5", "6"] {
        assert!(notes(mode, "router").is_empty(), "mode {mode} divides by flows");
    }
    // An edge alone marks nothing.
    assert!(notes("1", "receiver-edge").is_empty());
}
