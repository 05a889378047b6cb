//! Arbitrary sequences of frames, both directions, through the real
//! gateway's pipeline (`netreturn_gateway::pipeline::Pipeline`), set up as
//! the `netreturn-gateway` binary sets it up, with the configuration chosen
//! by the input:
//!
//! * a window controller of the registry (every one of
//!   `ControllerKind::ALL`, `WindowGateway::new(GatewayConfig::new(kind.
//!   default_config(), buffer, rate))`), optionally a second one on the B -> A
//!   queue (a scenario's `reverse = { queue = ... }`), or none;
//! * NGWA: a router on either direction, a receiver edge (with the edge's
//!   controller `NgwaEdge`, as the binary builds it), or both in one box;
//! * the links: rate, delay, Bernoulli loss, DropTail / RED / Adaptive RED
//!   with a byte or packet limit, and the largest frame parsed.
//!
//! Frames are raw bytes, or a valid TCP/IPv4 frame built with
//! `build_tcp_frame` for one of a few connections (so handshakes, data and
//! ACKs meet the controllers' deep paths), with IPv4 options, an NGWA
//! option, VLAN tags, padding, then byte mutations, a corrupted IPv4 header
//! checksum or a truncation.
//!
//! Checked after each step and at the end (SPEC.md section 1 rules 1, 3, 6;
//! issue 23 scope 5):
//! * conservation: per direction, received = forwarded + dropped + inside
//!   (queued or on the delay line), and when drained, nothing inside; every
//!   frame received is counted once as TCP, non-TCP, malformed or oversize;
//! * each output frame is matched with its input (both directions are FIFO
//!   and drops happen on arrival): a frame that is not a well-formed
//!   TCP/IPv4 segment on input (a bad IPv4 header checksum included) leaves
//!   byte for byte as it came;
//! * a TCP segment's window is never raised, its addresses, ports, sequence
//!   numbers, flags and payload never change, its MSS is never raised;
//! * valid IPv4 and TCP checksums stay valid; an invalid TCP checksum stays
//!   invalid (never laundered);
//! * a frame grows only by NGWA's option, and then stays within the MTU;
//! * a receiver edge delivers no NGWA option (when the option list parses
//!   and holds at most one), and the other IPv4 options leave as they came;
//! * the `rewritten` counter equals the ACKs whose window was lowered;
//! * `next_wakeup` always makes progress (the drain loop ends).

#![no_main]

mod common;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use netreturn_base::{Rate, TcpFlags, Time};
use netreturn_control::ngwa::{NgwaEdge, NgwaRouter, NgwaRouterConfig};
use netreturn_control::queue::{Discipline, DropTail, Limit};
use netreturn_control::{ControllerKind, GatewayConfig, QueueKind, WindowGateway};
use netreturn_gateway::ngwa::NgwaWire;
use netreturn_gateway::pipeline::{Dir, LinkConfig, NoController, Pipeline, WindowHook};
use netreturn_tcp::NgwaConfig;
use netreturn_wire::frame::{build_tcp_frame, classify, tcp_checksums_ok, Class};
use netreturn_wire::{ipv4, tcp};
use std::collections::VecDeque;

const MAX_STEPS: usize = 256;

#[derive(Arbitrary, Debug)]
struct LinkSel {
    /// 0: no rate limit; else one of a few rates.
    rate: u8,
    /// Microseconds, times `delay_scale`.
    delay: u16,
    delay_scale: u8,
    /// Loss probability `loss / 255 * 0.5`.
    loss: u8,
    queue: u8,
    limit_packets: bool,
    limit: u32,
}

#[derive(Arbitrary, Debug)]
enum Ngwa {
    Off,
    Router { flow_division: bool, both_ways: bool, max_flows: u8 },
    Edge { smoothing: Option<u8> },
    Both { flow_division: bool, both_ways: bool, smoothing: Option<u8> },
}

#[derive(Arbitrary, Debug)]
struct Setup {
    /// Index into `ControllerKind::ALL`, past its end: no controller.
    controller: u8,
    /// A controller on the B -> A queue too.
    reverse: Option<u8>,
    ngwa: Ngwa,
    ab: LinkSel,
    ba: LinkSel,
    /// `--max-frame`: 0 keeps the default.
    max_frame: u16,
    mtu: u16,
    seed: u64,
    assume_wscale: Option<u8>,
    max_flows: u8,
    /// Idle timeout of the flow table, seconds (0: the default).
    idle_timeout: u8,
}

#[derive(Arbitrary, Debug)]
struct Built {
    /// Which of a few connections; its direction says who sends.
    conn: u8,
    flags: u8,
    seq: u32,
    ack: u32,
    window: u16,
    /// A prefix of Linux's SYN options, or raw TCP option bytes.
    tcp_opts: TcpOpts,
    payload_len: u16,
    /// IPv4 options (whole words), before the NGWA option if any.
    ip_opts: Vec<u8>,
    ngwa: Option<u32>,
    vlan: u8,
    pad_to_60: bool,
    mutations: Vec<(u16, u8)>,
    corrupt_ip_checksum: bool,
    corrupt_tcp_checksum: bool,
    truncate: Option<u16>,
}

#[derive(Arbitrary, Debug)]
enum TcpOpts {
    Linux(u8),
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum FrameSel {
    Raw(Vec<u8>),
    Built(Built),
}

#[derive(Arbitrary, Debug)]
enum Step {
    Frame { a_to_b: bool, dt: Dt, frame: FrameSel },
    /// Time passes; whatever is due leaves.
    Wait(Dt),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Dt {
    Zero,
    Micros(u16),
    Millis(u16),
    Secs(u8),
}

impl Dt {
    fn time(self) -> Time {
        match self {
            Dt::Zero => Time::ZERO,
            Dt::Micros(u) => Time::from_micros(u as u64),
            Dt::Millis(m) => Time::from_millis(m as u64),
            Dt::Secs(s) => Time::from_secs(s as u64),
        }
    }
}

const SYN_OPTS: [u8; 20] = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];
const A_HOSTS: [[u8; 4]; 2] = [[10, 0, 0, 1], [10, 0, 0, 3]];
const B_HOSTS: [[u8; 4]; 2] = [[10, 0, 1, 1], [10, 0, 1, 3]];

fn link(sel: &LinkSel) -> LinkConfig {
    let rate = match sel.rate % 6 {
        0 => None,
        1 => Some(Rate::kbps(64)),
        2 => Some(Rate::mbps(1)),
        3 => Some(Rate::mbps(10)),
        4 => Some(Rate::mbps(100)),
        _ => Some(Rate::mbps(10_000)),
    };
    let delay = match sel.delay_scale % 3 {
        0 => Time::ZERO,
        1 => Time::from_micros(sel.delay as u64),
        _ => Time::from_micros(sel.delay as u64 * 10),
    };
    let limit = if sel.limit_packets {
        Limit::Packets(sel.limit % 1000 + 1)
    } else {
        Limit::Bytes((sel.limit % 400_000) as u64 + 1)
    };
    let kind = match sel.queue % 3 {
        0 => QueueKind::DropTail,
        1 => QueueKind::Red,
        _ => QueueKind::Ared,
    };
    // RED's preset needs min_th = B/12 < max_th = B/4: the project's config
    // check refuses smaller buffers before a gateway starts.
    let kind = if limit.bytes(1500) < 4 { QueueKind::DropTail } else { kind };
    let idle = rate.unwrap_or(Rate::mbps(1000)).tx_time(1500);
    let discipline = match kind {
        QueueKind::DropTail => Discipline::DropTail(DropTail::new(limit)),
        k => k.discipline(limit, 1500, idle, None),
    };
    // The admission-time disciplines only: this target's model of the
    // pipeline is a FIFO per direction with at most one drop per arrival,
    // which the dequeue-time AQMs (reordering, head drops, CE marks) break;
    // they need a target of their own (issue 27).
    LinkConfig { rate, delay, loss: sel.loss as f64 / 255.0 * 0.5, discipline, aqm: None }
}

fn gateway_config(s: &Setup, kind: ControllerKind, ab: &LinkConfig) -> GatewayConfig {
    let buffer = ab.discipline.limit().bytes(1500);
    let rate = ab.rate.unwrap_or(Rate::mbps(1000));
    let mut cfg = GatewayConfig::new(kind.default_config(), buffer, rate);
    cfg.assume_wscale = s.assume_wscale.map(|w| w % 15);
    if s.max_flows > 0 {
        cfg.max_flows = s.max_flows as usize;
    }
    if s.idle_timeout > 0 {
        cfg.idle_timeout = Time::from_secs(s.idle_timeout as u64);
    }
    cfg
}

fn build(b: &Built, a_to_b: bool) -> Vec<u8> {
    let c = b.conn as usize % 4;
    let (a, bb) = (A_HOSTS[c % 2], B_HOSTS[c / 2]);
    let (ap, bp) = (40000 + c as u16, 5001);
    let (src, dst, sp, dp) = if a_to_b { (a, bb, ap, bp) } else { (bb, a, bp, ap) };
    let opts: Vec<u8> = match &b.tcp_opts {
        TcpOpts::Linux(n) => SYN_OPTS[..(*n as usize % 21)].to_vec(),
        TcpOpts::Raw(v) => v[..v.len().min(40)].to_vec(),
    };
    let payload = vec![0xa5; b.payload_len as usize % 1600];
    let mut f = build_tcp_frame(src, dst, sp, dp, b.seq, b.ack, TcpFlags(b.flags), b.window, &opts, &payload);
    // IPv4 options: whole words, at most 40 bytes with NGWA's 8.
    let n = (b.ip_opts.len() / 4 * 4).min(if b.ngwa.is_some() { 32 } else { 40 });
    if n > 0 {
        let mut g = f[..34].to_vec();
        g.extend_from_slice(&b.ip_opts[..n]);
        g.extend_from_slice(&f[34..]);
        let mut ip = ipv4::Packet::new_unchecked(&mut g[14..]);
        ip.set_version_and_header_len(20 + n);
        ip.set_total_len(ip.total_len() + n as u16);
        ip.fill_checksum();
        f = g;
    }
    if let Some(w) = b.ngwa {
        if ipv4::Packet::new_unchecked(&f[14..]).total_len() as usize + 8 <= u16::MAX as usize {
            let len = f.len();
            f.resize(len + 8, 0);
            ipv4::insert_ngwa(&mut f[14..], w);
        }
    }
    for _ in 0..(b.vlan % 3) {
        // An 802.1Q tag after the MAC addresses.
        let mut g = f[..12].to_vec();
        g.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        g.extend_from_slice(&f[12..]);
        f = g;
    }
    if b.pad_to_60 && f.len() < 60 {
        f.resize(60, 0);
    }
    let ip_at = 14 + 4 * (b.vlan as usize % 3);
    if b.corrupt_tcp_checksum {
        let hl = (f[ip_at] & 0x0f) as usize * 4;
        let at = ip_at + hl + 16;
        f[at] ^= 0x01;
    }
    for &(at, v) in b.mutations.iter().take(8) {
        let at = at as usize;
        if at < f.len() {
            f[at] = v;
        }
    }
    if b.corrupt_ip_checksum {
        // After the mutations: a header that is certainly corrupted.
        let hl = ((f[ip_at] & 0x0f) as usize * 4).max(20);
        if f.len() >= ip_at + hl {
            let mut ip = ipv4::Packet::new_unchecked(&mut f[ip_at..]);
            ip.fill_checksum();
            let c = ip.checksum();
            ip.set_checksum(c ^ 0x0101);
        }
    }
    if let Some(t) = b.truncate {
        f.truncate(t as usize % (f.len() + 1));
    }
    f
}

/// What was known of an input frame, to check its output against.
struct Sent {
    data: Vec<u8>,
    /// Parsed (not oversize) and a TCP segment.
    tcp: Option<netreturn_wire::frame::TcpLocation>,
    checksums_ok: bool,
    /// The TCP checksum alone, for a TCP segment (IPv4's is then valid).
    tcp_sum_ok: bool,
    /// The IPv4 option list parses (no `Malformed`).
    options_parse: bool,
    /// It parses and holds at most one NGWA option.
    ngwa_clean: bool,
    /// A strip would hit `common::KNOWN_STRIP_TRIM_BUG`.
    strip_hazard: bool,
}

struct Run<H: WindowHook> {
    p: Pipeline<H>,
    now: Time,
    /// Per direction, frames accepted and not yet out.
    inside: [VecDeque<Sent>; 2],
    lowered: [u64; 2],
    max_frame: usize,
    mtu: usize,
    edge: bool,
}

fn di(d: Dir) -> usize {
    match d {
        Dir::AtoB => 0,
        Dir::BtoA => 1,
    }
}

impl<H: WindowHook> Run<H> {
    fn poll(&mut self, t: Time) {
        let mut out = Vec::new();
        self.p.poll(t, &mut |d, f| out.push((d, f)));
        for (d, f) in out {
            let s = self.inside[di(d)].pop_front().expect("a frame left that never entered");
            self.check_out(d, &s, &f);
        }
    }

    fn check_out(&mut self, d: Dir, s: &Sent, out: &[u8]) {
        let Some(loc) = s.tcp else {
            assert_eq!(out, &s.data[..], "a frame that is not well-formed TCP/IPv4 was changed");
            return;
        };
        let Class::Tcp(o) = classify(out) else {
            panic!("a TCP segment left as {:?}: {:02x?} -> {:02x?}", classify(out), s.data, out)
        };
        let (i, v) = (loc.view, o.view);
        assert!(v.window <= i.window, "window raised {} -> {}", i.window, v.window);
        if v.window < i.window {
            self.lowered[di(d)] += 1;
        }
        assert_eq!((v.key, v.flags, v.seq, v.ack, v.payload_len), (i.key, i.flags, i.seq, i.ack, i.payload_len));
        assert_eq!(v.wscale, i.wscale);
        match (i.mss, v.mss) {
            (Some(a), Some(b)) => assert!(b <= a, "MSS raised {a} -> {b}"),
            (a, b) => assert_eq!(a, b),
        }
        let ip_in = ipv4::Packet::new_unchecked(&s.data[loc.ip_offset..]);
        let ip_out = ipv4::Packet::new_unchecked(&out[o.ip_offset..]);
        let seg_in = tcp::Packet::new_unchecked(ip_in.payload());
        let seg_out = tcp::Packet::new_unchecked(ip_out.payload());
        assert_eq!(seg_in.payload(), seg_out.payload(), "the TCP payload changed");
        assert_eq!((ip_in.src_addr(), ip_in.dst_addr()), (ip_out.src_addr(), ip_out.dst_addr()));
        assert!(ip_out.verify_checksum(), "a valid IPv4 header left invalid");
        let ok = tcp_checksums_ok(out);
        if s.checksums_ok {
            assert!(ok, "valid checksums left invalid: {:02x?} -> {:02x?}", s.data, out);
        }
        if !s.tcp_sum_ok {
            assert!(!ok, "an invalid TCP checksum was laundered: {:02x?} -> {:02x?}", s.data, out);
        }
        if out.len() > s.data.len() {
            assert!(ip_out.total_len() as usize <= self.mtu, "grown past the MTU");
            assert!(
                ip_out.total_len() as usize <= ip_in.total_len() as usize + ipv4::NGWA_INSERT_LEN,
                "grown by more than NGWA's option: {:02x?} -> {:02x?}",
                s.data,
                out
            );
        }
        if d == Dir::AtoB && self.edge && s.ngwa_clean {
            assert_eq!(ip_out.ngwa(), None, "the receiver edge delivered an NGWA option");
        }
        if s.options_parse && !(common::KNOWN_STRIP_TRIM_BUG && s.strip_hazard) {
            // The options other than NGWA leave as they came (NOP and EOL
            // padding aside), whatever the router and the edge did.
            let (i, o) = (common::other_options(&ip_in), common::other_options(&ip_out));
            assert_eq!(i, o, "other IPv4 options changed: {:02x?} -> {:02x?}", s.data, out);
        }
    }

    fn frame(&mut self, dir: Dir, data: Vec<u8>) {
        let before = *self.stats(dir);
        let tcp = if data.len() > self.max_frame {
            None
        } else if let Class::Tcp(loc) = classify(&data) {
            Some(loc)
        } else {
            None
        };
        let checksums_ok = tcp_checksums_ok(&data);
        let (tcp_sum_ok, options_parse, ngwa_clean, strip_hazard) = match tcp {
            Some(loc) => {
                let ip = ipv4::Packet::new_unchecked(&data[loc.ip_offset..]);
                let seg = tcp::Packet::new_unchecked(ip.payload());
                let opts: Vec<_> = ip.option_iter().collect();
                let parse = !opts.contains(&ipv4::Ipv4Option::Malformed);
                let clean = parse && opts.iter().filter(|o| matches!(o, ipv4::Ipv4Option::Ngwa(_))).count() <= 1;
                let hazard = common::strip_trims_option_data(ip.options());
                (seg.verify_checksum(ip.src_addr(), ip.dst_addr()), parse, clean, hazard)
            }
            None => (false, false, false, false),
        };
        self.p.on_frame(self.now, dir, data.clone());
        let after = *self.stats(dir);
        assert_eq!(after.received, before.received + 1);
        let dropped = (after.dropped_loss + after.dropped_queue) - (before.dropped_loss + before.dropped_queue);
        assert!(dropped <= 1);
        if dropped == 0 {
            self.inside[di(dir)].push_back(Sent { data, tcp, checksums_ok, tcp_sum_ok, options_parse, ngwa_clean, strip_hazard });
        }
        self.check_counts();
    }

    fn stats(&self, d: Dir) -> &netreturn_gateway::stats::DirStats {
        match d {
            Dir::AtoB => &self.p.stats().a_to_b,
            Dir::BtoA => &self.p.stats().b_to_a,
        }
    }

    fn check_counts(&self) {
        for d in [Dir::AtoB, Dir::BtoA] {
            let s = self.stats(d);
            let inside = self.inside[di(d)].len() as u64;
            assert_eq!(s.received, s.forwarded + s.dropped_queue + s.dropped_loss + inside, "conservation {d:?}: {s:?}");
            assert!(self.p.queued_packets(d) as u64 <= inside, "more queued than inside");
            assert_eq!(s.received, s.tcp + s.non_tcp + s.malformed_passed + s.oversize, "classification {d:?}: {s:?}");
            assert!(s.fragments <= s.non_tcp);
        }
    }

    fn drain(&mut self) {
        let mut guard = 0usize;
        let pending = self.inside[0].len() + self.inside[1].len();
        while let Some(t) = self.p.next_wakeup() {
            // Everything due by `now` was served by the last poll.
            assert!(t > self.now, "a wake-up at {t:?}, not after now = {:?}", self.now);
            self.now = self.now.max(t);
            self.poll(self.now);
            guard += 1;
            assert!(guard <= 2 * pending + 4, "next_wakeup makes no progress ({guard} wake-ups)");
        }
        self.check_counts();
        for d in [Dir::AtoB, Dir::BtoA] {
            assert!(self.inside[di(d)].is_empty(), "frames left inside after a drain");
            assert_eq!(self.p.queued_packets(d), 0);
            assert_eq!(self.stats(d).rewritten, self.lowered[di(d)], "rewritten counter vs lowered windows");
        }
    }

    fn go(mut self, steps: &[Step]) {
        for step in steps {
            match step {
                Step::Frame { a_to_b, dt, frame } => {
                    self.now += dt.time();
                    let dir = if *a_to_b { Dir::AtoB } else { Dir::BtoA };
                    let data = match frame {
                        FrameSel::Raw(v) => v.clone(),
                        FrameSel::Built(b) => build(b, *a_to_b),
                    };
                    // Whatever is due before the frame arrives leaves first,
                    // as the I/O loop does.
                    self.poll(self.now);
                    self.frame(dir, data);
                    self.poll(self.now);
                }
                Step::Wait(dt) => {
                    self.now += dt.time();
                    self.poll(self.now);
                }
            }
            self.check_counts();
        }
        self.drain();
    }
}

fn run<H: WindowHook>(p: Pipeline<H>, s: &Setup, mtu: usize, edge: bool, steps: &[Step]) {
    let mut p = p;
    let max_frame = if s.max_frame == 0 { netreturn_gateway::pipeline::DEFAULT_MAX_FRAME } else { s.max_frame as usize };
    p.set_max_frame(max_frame);
    let r = Run { p, now: Time::ZERO, inside: [VecDeque::new(), VecDeque::new()], lowered: [0; 2], max_frame, mtu, edge };
    r.go(steps);
}

fn router(fd: bool, max_flows: u8) -> NgwaRouter {
    let mut cfg = NgwaRouterConfig { flow_division: fd, ..Default::default() };
    if max_flows > 0 {
        cfg.max_flows = max_flows as usize;
    }
    NgwaRouter::new(cfg)
}

fn smoothing(s: Option<u8>) -> Option<f64> {
    // SE's weight, 0 < a < 1.
    s.map(|a| (a as f64 + 1.0) / 257.0)
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(setup) = Setup::arbitrary(&mut u) else { return };
    let mut steps = Vec::new();
    while steps.len() < MAX_STEPS {
        match Step::arbitrary(&mut u) {
            Ok(s) => steps.push(s),
            Err(_) => break,
        }
        if u.is_empty() {
            break;
        }
    }
    let ab = link(&setup.ab);
    let ba = link(&setup.ba);
    // 576 (the IPv4 minimum) ..= 9000 (jumbo frames).
    let mtu = 576 + setup.mtu as usize % (9000 - 576 + 1);
    let kinds = ControllerKind::ALL;
    match setup.ngwa {
        Ngwa::Edge { smoothing: se } | Ngwa::Both { smoothing: se, .. } => {
            // As the binary: the receiver rule inside the gateway's common
            // rules, no other controller beside it.
            let cfg = gateway_config(&setup, kinds[0], &ab);
            let rx = NgwaEdge::new(NgwaConfig { wmax: 64_000, smoothing: smoothing(se), option_bytes: 8 });
            let mut p = Pipeline::new(ab, ba, Some(WindowGateway::with_controller(rx, cfg)), setup.seed);
            let (r, back) = match setup.ngwa {
                Ngwa::Both { flow_division, both_ways, .. } => {
                    (Some(router(flow_division, setup.max_flows)), both_ways.then(|| router(flow_division, 0)))
                }
                _ => (None, None),
            };
            p.set_ngwa(NgwaWire::new(r, true, mtu));
            if let Some(b) = back {
                p.set_ngwa_back(NgwaWire::new(Some(b), false, mtu));
            }
            run(p, &setup, mtu, true, &steps);
        }
        Ngwa::Off | Ngwa::Router { .. } => {
            let fwd = kinds.get(setup.controller as usize).copied();
            let rev = setup.reverse.and_then(|r| kinds.get(r as usize % (kinds.len() + 1)).copied());
            let wire = |p: &mut dyn FnMut(NgwaWire, bool)| {
                if let Ngwa::Router { flow_division, both_ways, max_flows } = setup.ngwa {
                    p(NgwaWire::new(Some(router(flow_division, max_flows)), false, mtu), false);
                    if both_ways {
                        p(NgwaWire::new(Some(router(flow_division, max_flows)), false, mtu), true);
                    }
                }
            };
            if fwd.is_none() && rev.is_none() {
                let mut p: Pipeline<NoController> = Pipeline::new(ab, ba, None, setup.seed);
                wire(&mut |n, back| if back { p.set_ngwa_back(n) } else { p.set_ngwa(n) });
                run(p, &setup, mtu, false, &steps);
            } else {
                let gw = fwd.map(|k| WindowGateway::new(gateway_config(&setup, k, &ab)));
                let gw_ba = rev.map(|k| WindowGateway::new(gateway_config(&setup, k, &ba)));
                let mut p = Pipeline::new(ab, ba, gw, setup.seed);
                if let Some(g) = gw_ba {
                    p.set_hook_ba(g);
                }
                wire(&mut |n, back| if back { p.set_ngwa_back(n) } else { p.set_ngwa(n) });
                run(p, &setup, mtu, false, &steps);
            }
        }
    }
});
