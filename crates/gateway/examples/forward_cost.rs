//! The pipeline's own cost per forwarded frame (no sockets): no controller,
//! NGWA router (the option inserted into every data frame), NGWA receiver
//! edge (read, strip, ACKs rewritten), both in one box, and EWT for scale.
//! The kernel's share of a real gateway's cost (skb, copies, veth) is the
//! same in every mode, so this is what NGWA adds; `netreturn testbed bench`
//! measures the whole (docs/gateway.md).
//!
//! `cargo run --release -p netreturn-gateway --example forward_cost [FRAMES] [ROUNDS]`
//!
//! Traffic: one connection's handshake, then 1448-byte data segments A -> B
//! (1500-byte IP packets, MSS clamped to 1440 by a router) and one ACK
//! B -> A every second segment, the shape of a bulk TCP transfer. Every
//! mode runs `ROUNDS` times interleaved; the best (least disturbed) round
//! is printed, in ns per data segment.

use std::time::Instant;

use netreturn_base::{Rate, TcpFlags, Time};
use netreturn_control::ewt::EwtConfig;
use netreturn_control::ngwa::{NgwaEdge, NgwaRouter, NgwaRouterConfig};
use netreturn_control::queue::{Discipline, DropTail, Limit};
use netreturn_control::{ControllerConfig, GatewayConfig, WindowGateway};
use netreturn_gateway::ngwa::NgwaWire;
use netreturn_gateway::pipeline::{Dir, LinkConfig, NoController, Pipeline, WindowHook};
use netreturn_tcp::NgwaConfig;
use netreturn_wire::frame::build_tcp_frame;

const S: [u8; 4] = [10, 0, 0, 1];
const R: [u8; 4] = [10, 0, 0, 2];
const SYN_OPTS: [u8; 20] = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];
const TS: [u8; 12] = [1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2];

fn link() -> LinkConfig {
    LinkConfig {
        rate: None,
        delay: Time::ZERO,
        loss: 0.0,
        discipline: Discipline::DropTail(DropTail::new(Limit::Packets(1000))),
        aqm: None,
    }
}

fn gw_cfg() -> GatewayConfig {
    GatewayConfig::new(ControllerConfig::Ewt(EwtConfig::default()), 1_500_000, Rate::mbps(10_000))
}

fn ngwa(router: bool, edge: bool) -> NgwaWire {
    NgwaWire::new(router.then(|| NgwaRouter::new(NgwaRouterConfig::default())), edge, 1500)
}

fn pooled(f: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(2048);
    v.extend_from_slice(f);
    v
}

/// Runs `n` data segments (and n / 2 ACKs) through `p`; returns ns per
/// data segment.
fn run<H: WindowHook>(mut p: Pipeline<H>, n: u64, payload: usize) -> f64 {
    let mut t = Time::ZERO;
    let mut sink = 0usize;
    let syn = build_tcp_frame(R, S, 40000, 5001, 0, 0, TcpFlags::SYN, 64240, &SYN_OPTS, &[]);
    let synack = build_tcp_frame(S, R, 5001, 40000, 0, 1, TcpFlags::SYN | TcpFlags::ACK, 65160, &SYN_OPTS, &[]);
    for (d, f) in [
        (Dir::BtoA, syn),
        (Dir::AtoB, synack),
        (Dir::BtoA, build_tcp_frame(R, S, 40000, 5001, 1, 1, TcpFlags::ACK, 500, &TS, &[])),
    ] {
        p.on_frame(t, d, f);
        p.poll(t, &mut |_, f| sink += f.len());
    }
    let data = build_tcp_frame(S, R, 5001, 40000, 1, 1, TcpFlags::ACK, 500, &TS, &vec![7; payload]);
    let ack = build_tcp_frame(R, S, 40000, 5001, 1, 1, TcpFlags::ACK, 20_000, &TS, &[]);
    let start = Instant::now();
    for i in 0..n {
        t += Time::from_nanos(1_000);
        // A buffer per frame as the I/O layer hands it over: 2048 bytes of
        // capacity (`sys::Pool`), so a frame grows by the option in place.
        p.on_frame(t, Dir::AtoB, pooled(&data));
        if i % 2 == 1 {
            p.on_frame(t, Dir::BtoA, pooled(&ack));
        }
        p.poll(t, &mut |_, f| sink += f.len());
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert!(sink > 0);
    ns
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    // Only the modes whose name contains this (for a profiler).
    let only = args.next().unwrap_or_default();
    // 1440 bytes of payload + 12 of timestamps: the clamped MSS's segment,
    // a 1500-byte packet once marked.
    let payload = 1440;
    type Mode = (&'static str, fn(u64, usize) -> f64);
    let modes: [Mode; 5] = [
        ("no controller", |n, pl| run(Pipeline::<NoController>::new(link(), link(), None, 1), n, pl)),
        ("ngwa router", |n, pl| {
            let mut p = Pipeline::<NoController>::new(link(), link(), None, 1);
            p.set_ngwa(ngwa(true, false));
            run(p, n, pl)
        }),
        ("ngwa receiver edge", |n, pl| {
            let rx = NgwaEdge::new(NgwaConfig { wmax: 64_000_000, smoothing: Some(0.3), option_bytes: 8 });
            let mut p = Pipeline::new(link(), link(), Some(WindowGateway::with_controller(rx, gw_cfg())), 1);
            p.set_ngwa(ngwa(false, true));
            run(p, n, pl)
        }),
        ("ngwa both", |n, pl| {
            let rx = NgwaEdge::new(NgwaConfig { wmax: 64_000_000, smoothing: Some(0.3), option_bytes: 8 });
            let mut p = Pipeline::new(link(), link(), Some(WindowGateway::with_controller(rx, gw_cfg())), 1);
            p.set_ngwa(ngwa(true, true));
            run(p, n, pl)
        }),
        ("ewt", |n, pl| run(Pipeline::new(link(), link(), Some(WindowGateway::new(gw_cfg())), 1), n, pl)),
    ];
    let mut best = vec![f64::INFINITY; modes.len()];
    for _ in 0..rounds {
        for (i, (name, f)) in modes.iter().enumerate() {
            if i == 0 || name.contains(&only) {
                best[i] = best[i].min(f(n, payload));
            }
        }
    }
    println!("{:<20}{:>12}{:>14}", "mode", "ns/segment", "vs none");
    for (i, (name, _)) in modes.iter().enumerate() {
        println!("{:<20}{:>12.1}{:>13.1}%", name, best[i], (best[i] / best[0] - 1.0) * 100.0);
    }
    println!("({n} data segments of {payload} bytes + {} ACKs per round, best of {rounds} rounds)", n / 2);
}
