//! The kernel datapath's eBPF programs' own cost per frame, run in this
//! kernel (`BPF_PROG_TEST_RUN`, hot caches, the kernel's own timer, which
//! leaves out the time the loop yields the CPU): what `--datapath kernel`
//! adds to the kernel's forwarding of one frame, mode by mode. The kernel's
//! share (skb, bridge, veth) is not in it; `netreturn testbed bench`
//! measures the whole, and with `--prog-stats` the same programs' run time
//! on real traffic (docs/gateway.md).
//!
//! `cargo run --release -p netreturn-gateway --example program_cost [RUNS] [ROUNDS]`
//! (root: loading programs needs CAP_BPF). Prints ns per run: the median of
//! `RUNS` single runs (default 20 000), the lowest of `ROUNDS` rounds.

#[cfg(all(target_os = "linux", netreturn_bpf))]
fn main() {
    use netreturn_base::TcpFlags;
    use netreturn_gateway::kernel::bpf::{Load, Programs, Report};
    use netreturn_gateway::kernel::maps::{NrKey, NrWindow};
    use netreturn_wire::frame::{build_tcp_frame, tcp_view};

    const S: [u8; 4] = [10, 0, 0, 1];
    const R: [u8; 4] = [10, 0, 0, 2];
    const TS: [u8; 12] = [1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2];
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let repeat = args.first().copied().unwrap_or(20_000) as u32;
    let rounds = args.get(1).copied().unwrap_or(5);

    // 1440 bytes: the MSS an NGWA router clamps to (MTU - 48 with timestamps), so
    // the option fits in a 1500-byte MTU.
    let data = build_tcp_frame(S, R, 40_000, 5001, 1, 1, TcpFlags::ACK, 502, &TS, &[7; 1440]);
    let ack = build_tcp_frame(R, S, 5001, 40_000, 1, 1449, TcpFlags::ACK, 60_000, &TS, &[]);
    let key = NrKey::of(&tcp_view(&ack).unwrap().key);
    // A steady flow's rule: window = 30 000 bytes (scale 0), lower than the
    // receiver's 60 000, so every ACK is rewritten.
    // (`den` 0: `num` is the window itself; NrWindow::field.)
    let lowering = NrWindow { num: 30_000, den: 0, floor: 1, shift: 0, rule_on: 1, steady: 1, ..NrWindow::default() };
    // The same flow's rule above the receiver's window: looked up, kept.
    let keeping = NrWindow { num: 1 << 30, ..lowering };

    let load = |report: Report, router: bool, edge: bool| {
        Programs::load(Load { max_flows: 1024, report, ngwa_router: router, ngwa_edge: edge, mtu: 1500 })
            .unwrap_or_else(|e| panic!("{e} (run as root)"))
    };
    let plain = load(Report::Nothing, false, false);
    let mut lower = load(Report::FlowTable, false, false);
    lower.windows.insert(key, lowering, 0).unwrap();
    let mut keep = load(Report::FlowTable, false, false);
    keep.windows.insert(key, keeping, 0).unwrap();
    let mut router = load(Report::Nothing, true, false);
    router.set_node(0, 50_000).unwrap();
    router.set_node(1, 50_000).unwrap();
    let mut edge = load(Report::FlowTable, false, true);
    edge.windows.insert(key, lowering, 0).unwrap();
    // What the router makes of a data segment is what the edge strips.
    let (_, marked) = router.run_on("nr_data", &data).unwrap();
    assert_eq!(marked.len(), data.len() + 8, "the router inserts the 8-byte option");
    let (_, lowered) = lower.run_on("nr_ack", &ack).unwrap();
    assert_eq!(tcp_view(&lowered).unwrap().window, 30_000, "the rule lowers the ACK");

    let mut progs = [plain, lower, keep, router, edge];
    let (plain, lower, keep, router, edge) = (0, 1, 2, 3, 4);
    let cases: [(&str, usize, &str, &[u8]); 8] = [
        ("no controller: data segment A -> B (count)", plain, "nr_data", &data),
        ("no controller: ACK B -> A (count)", plain, "nr_ack", &ack),
        ("controller: data segment A -> B (flow bytes)", lower, "nr_data", &data),
        ("controller: ACK B -> A, window lowered", lower, "nr_ack", &ack),
        ("controller: ACK B -> A, window kept", keep, "nr_ack", &ack),
        ("NGWA router: data segment, option inserted", router, "nr_data", &data),
        ("NGWA router: ACK, option inserted", router, "nr_ack", &ack),
        ("NGWA edge: data segment, value read and option stripped", edge, "nr_data", &marked),
    ];
    // One run per call: the kernel's test harness repeats a program on the
    // same skb, so a repeated insertion would find its own option (and a
    // repeated rewrite its own window) from the second run on. The median
    // of single runs, each timed by the kernel (its clock read included).
    let mut med = vec![f64::INFINITY; cases.len()];
    for _ in 0..rounds {
        for (i, &(_, p, prog, frame)) in cases.iter().enumerate() {
            let mut t: Vec<f64> = (0..repeat).map(|_| progs[p].time_on(prog, frame, 1).unwrap().2).collect();
            t.sort_by(f64::total_cmp);
            med[i] = med[i].min(t[t.len() / 2]);
        }
    }
    println!(
        "eBPF program cost per frame: median of {repeat} single runs (BPF_PROG_TEST_RUN), lowest of {rounds} rounds:"
    );
    for ((name, ..), ns) in cases.iter().zip(med) {
        println!("  {ns:7.1} ns  {name}");
    }
}

#[cfg(not(all(target_os = "linux", netreturn_bpf)))]
fn main() {
    eprintln!("program_cost: this build has no eBPF object (clang and libbpf-dev at build time)");
}
