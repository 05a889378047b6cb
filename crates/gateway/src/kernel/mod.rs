//! The kernel datapath (`--datapath kernel`, issue 28): the kernel
//! forwards, eBPF programs read and rewrite, the controllers stay here.
//!
//! * A Linux bridge joins A and B (made here unless they are already
//!   bridged); each direction with a rate gets `htb` at that rate over a
//!   FIFO of its buffer on its egress ([`tc`]): the bottleneck is a kernel
//!   queue.
//! * `nr_data` (A's ingress) and `nr_ack` (B's ingress), from
//!   `bpf/datapath.bpf.c`, count every frame per direction, report to user
//!   space the segments the flow table needs (SYNs, FINs, RSTs, and every
//!   segment of a flow until its handshake and first data were seen,
//!   [`event`]), and lower the window of each ACK B -> A to its flow's rule
//!   from the `windows` map ([`maps`]), with the RFC 1624 checksum update.
//! * Every `--tick` this loop feeds the same `WindowGateway` as the packet
//!   datapath with those segments, the FIFO's backlog (read by rtnetlink;
//!   an empty queue for a direction without a rate) and the non-TCP bytes,
//!   and writes each flow's rule (`WindowGateway::kernel_windows`) into the
//!   map.
//! * When eight ticks in a row change nothing (no segment reported, no rule
//!   written, no NGWA `W_node` moved, both queues empty) the period doubles,
//!   up to `--tick-idle` (16 ms by default); any change brings it back to
//!   `--tick`, and a reported segment wakes the loop at once. A loop that
//!   wakes every millisecond on the forwarding CPUs delays their packets a
//!   little (docs/gateway.md measures it); a gateway with nothing to
//!   decide need not.
//!
//! What differs from the packet datapath, by construction:
//! * a controller sees the queue once per tick, not at each enqueue and
//!   dequeue (EWT's occupancy, AWM's updating events, EWA's average);
//! * the first ACKs of a flow, up to one tick after its SYN-ACK, pass
//!   unchanged (its rule is not in the map yet);
//! * no delay, jitter or loss: this kernel has no netem, and a delay line
//!   cannot hold packets in tc. Put them on another hop (a packet-datapath
//!   gateway), as `netreturn testbed` does; `--delay-elsewhere` then lets a
//!   scenario's link (`--config`) run here, its delay reported as run
//!   elsewhere (`not_emulated` in the JSON).

pub mod event;
pub mod maps;
pub mod tc;

#[cfg(all(target_os = "linux", netreturn_bpf))]
pub mod bpf;

use crate::cli::Args;
use netreturn_control::{QueueKind, WindowController, WindowGateway};

/// Whether this build carries the eBPF object (clang was there).
pub const BUILT: bool = cfg!(all(target_os = "linux", netreturn_bpf));

/// The settings the kernel datapath cannot run, each with the reason and
/// what to do instead; `Ok` if none.
pub fn check(args: &Args) -> Result<(), String> {
    let refuse = |what: &str, why: &str| Err(format!("--datapath kernel: {what}: {why}"));
    if !BUILT {
        return refuse(
            "not in this build",
            "the eBPF object needs clang and libbpf-dev at build time (make system-deps, as root), then a rebuild",
        );
    }
    let netem = "this kernel has no netem and tc cannot hold packets; run it on another hop (a gateway with \
                 --datapath packet) and say so with --delay-elsewhere";
    if !args.delay_elsewhere {
        if args.delay.0 != 0 || args.delay_ba.0 != 0 {
            return refuse("--delay / --delay-ba (a scenario link's rtt)", netem);
        }
        if args.jitter.0 != 0 || args.jitter_ba.0 != 0 {
            return refuse("--jitter", netem);
        }
        if args.loss != 0.0 || args.loss_ba != 0.0 {
            return refuse("--loss (a scenario link's loss)", netem);
        }
    }
    for (flag, q) in [("--queue", &args.queue), ("--queue-ba", &args.queue_ba)] {
        if q.kind != QueueKind::DropTail {
            return refuse(
                &format!("{flag} {}", q.kind.name()),
                "the kernel queue is a byte or packet FIFO (droptail); this kernel has no red, codel, fq_codel, \
                 pie or dualpi2 qdisc",
            );
        }
    }
    if args.gateway_ba.is_some() {
        return refuse("a B -> A controller (reverse = {queue = ...})", "the kernel path guards the A -> B queue only");
    }
    Ok(())
}

/// What an operator should know about a setting the kernel datapath runs,
/// but not as the packet datapath does (printed at start, not refused).
pub fn notes(args: &Args) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(n) = args.ngwa.as_ref().filter(|n| n.role.router()) {
        if n.switches().is_some_and(|m| !m.fd) {
            out.push(format!(
                "note: NGWA mode {} (no flow division) on the kernel datapath marks a segment as it arrives, with the \
                 queue of the last tick, where the paper's router marks it as it leaves; in the simulator \
                 (ngwa.mark_tick) that multiplied the losses of the modes without flow division, while modes 5-8 \
                 lost nothing either way (docs/gateway.md). --datapath packet marks at dequeue.",
                n.mode
            ));
        }
    }
    out
}

#[cfg(all(target_os = "linux", netreturn_bpf))]
mod run_loop;

/// Runs the kernel datapath until SIGINT/SIGTERM or `--duration`, with the
/// controller `gw` (or none: forwarding, shaping and counting only);
/// returns the JSON counters.
pub fn run<C: WindowController>(args: &Args, gw: Option<WindowGateway<C>>) -> Result<String, String> {
    check(args)?;
    #[cfg(all(target_os = "linux", netreturn_bpf))]
    {
        run_loop::run(args, gw)
    }
    #[cfg(not(all(target_os = "linux", netreturn_bpf)))]
    {
        let _ = gw;
        unreachable!("check() refuses a build without the eBPF object")
    }
}
