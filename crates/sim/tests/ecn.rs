//! ECN end to end (RFC 3168) and the L4S pair of DualPI2 (RFC 9332) with a
//! DCTCP-like sender: senders mark, queues mark instead of dropping, and
//! the marks steer the senders as drops would.

use netreturn_sim::{run, Scenario};

/// `flows` bulk flows of `cc` through a `rate`, 40 ms dumbbell with a 1 MB
/// buffer under `queue`, for 30 s; `tcp_extra` adds `[tcp]` keys.
fn scenario(queue: &str, rate: &str, cc: &str, flows: u32, tcp_extra: &str) -> Scenario {
    scenario_with(queue, "", rate, cc, flows, tcp_extra)
}

/// [`scenario`] with more keys on the bottleneck (`link_extra`, e.g. `red =
/// { ecn = true }`).
fn scenario_with(queue: &str, link_extra: &str, rate: &str, cc: &str, flows: u32, tcp_extra: &str) -> Scenario {
    let text = format!(
        r#"
        name = "ecn"
        [run]
        stop = "30s"
        [tcp]
        cc = "{cc}"
        segment_size = 1448
        {tcp_extra}
        [topology]
        kind = "dumbbell"
        pairs = {flows}
        access = {{ rate = "1Gbps", rtt = "2ms" }}
        bottleneck = {{ rate = "{rate}", rtt = "40ms", queue = "{queue}", buffer = "1MB"{link_extra} }}
        receivers = {{ rate = "1Gbps", rtt = "2ms" }}
        [[traffic]]
        kind = "tcp-bulk"
        from = "left"
        to = "right"
        count = {flows}
        start = {{ uniform = ["0s", "1s"] }}
        "#
    );
    Scenario::from_toml(&text, "ecn.toml", &[]).expect("valid")
}

fn bottleneck(r: &netreturn_sim::metrics::RunResult) -> &netreturn_sim::metrics::IfaceRow {
    r.ifaces.iter().find(|f| f.name == "R1->R2").expect("bottleneck")
}

#[test]
fn ecn_senders_behind_fq_codel_are_marked_instead_of_dropped() {
    // FQ-CoDel marks ECN-capable packets (its default, as Linux): with
    // `tcp.ecn` the congestion signal arrives as marks and nearly nothing
    // is lost; without it the same queue drops.
    let with = run(&scenario("fq_codel", "10Mbps", "cubic", 8, "ecn = true"), 1).unwrap();
    let without = run(&scenario("fq_codel", "10Mbps", "cubic", 8, ""), 1).unwrap();
    let (bw, bo) = (bottleneck(&with), bottleneck(&without));
    assert!(bw.ecn_marks > 100, "marks {}", bw.ecn_marks);
    assert_eq!(bo.ecn_marks, 0, "nothing is ECN-capable without tcp.ecn");
    assert!(bo.queue_drops > 100, "drops without ECN {}", bo.queue_drops);
    assert!(bw.queue_drops * 10 < bo.queue_drops, "drops with ECN {} vs {}", bw.queue_drops, bo.queue_drops);
    assert!(with.flows.iter().map(|f| f.ecn_reductions).sum::<u64>() > 0);
    // The marks do the drops' work: the queue stays as short.
    assert!(bw.queue_mean_bytes < 2.0 * bo.queue_mean_bytes + 10_000.0);
    assert!(bw.utilization > 0.9, "utilization {}", bw.utilization);
}

#[test]
fn red_and_ared_with_ecn_mark_ecn_senders_where_they_would_drop_early() {
    // RFC 3168 section 5 (`red.ecn`): the early drops of RED and ARED become
    // CE marks for ECN-capable senders; with the default hard drop, forced
    // drops (average above max_th) and overflows stay drops.
    for queue in ["red", "ared"] {
        let marking =
            run(&scenario_with(queue, ", red = { ecn = true }", "10Mbps", "cubic", 8, "ecn = true"), 1).unwrap();
        let dropping = run(&scenario_with(queue, "", "10Mbps", "cubic", 8, "ecn = true"), 1).unwrap();
        let (m, d) = (bottleneck(&marking), bottleneck(&dropping));
        // drops_by_reason: [overflow, early, forced, sojourn]. What RED still
        // drops early with red.ecn are packets sent Not-ECT: SYNs and
        // retransmissions (RFC 3168 sections 6.1.1 and 6.1.5).
        let (early_m, early_d) = (m.drops_by_reason[1], d.drops_by_reason[1]);
        assert!(early_d > 20, "{queue}: early drops without red.ecn {:?}", d.drops_by_reason);
        assert_eq!(d.ecn_marks, 0, "{queue}: RED without red.ecn never marks");
        assert!(early_m * 5 < early_d, "{queue}: early drops {early_m} with red.ecn, {early_d} without");
        assert!(m.ecn_marks > 20 && m.ecn_marks > early_m * 5, "{queue}: marks {}, early drops {early_m}", m.ecn_marks);
        assert!(marking.flows.iter().map(|f| f.ecn_reductions).sum::<u64>() > 0);
        assert!(m.utilization > 0.9, "{queue}: utilization {}", m.utilization);
        // Senders without ECN behind a marking RED are dropped as before.
        let plain = run(&scenario_with(queue, ", red = { ecn = true }", "10Mbps", "cubic", 8, ""), 1).unwrap();
        assert_eq!(bottleneck(&plain).ecn_marks, 0);
        assert!(bottleneck(&plain).drops_by_reason[1] > 20, "{queue}");
    }
}

#[test]
fn ecn_senders_behind_cobalt_are_marked_by_its_codel_part() {
    // COBALT marks ECT packets where CoDel would drop (CAKE's default);
    // BLUE only acts on overflow, which a 1 MB buffer does not reach.
    let with = run(&scenario("cobalt", "10Mbps", "cubic", 8, "ecn = true"), 1).unwrap();
    let without = run(&scenario("cobalt", "10Mbps", "cubic", 8, ""), 1).unwrap();
    let (bw, bo) = (bottleneck(&with), bottleneck(&without));
    assert!(bw.ecn_marks > 100, "marks {}", bw.ecn_marks);
    assert_eq!(bo.ecn_marks, 0);
    assert!(bo.queue_drops > 100, "drops without ECN {}", bo.queue_drops);
    assert!(bw.queue_drops * 10 < bo.queue_drops, "drops with ECN {} vs {}", bw.queue_drops, bo.queue_drops);
    assert!(bw.utilization > 0.9, "utilization {}", bw.utilization);
}

#[test]
fn a_scalable_sender_in_dualpi2s_l_queue_keeps_the_queue_under_a_millisecond_or_two() {
    // Prague's ECT(1) packets join the L queue, marked at 1 ms of sojourn
    // (the step); DCTCP's response keeps the queue near that while the link
    // stays full, with no loss (RFC 9332 section 1.1's L4S service).
    let r = run(&scenario("dualpi2", "100Mbps", "prague", 4, ""), 1).unwrap();
    let b = bottleneck(&r);
    assert_eq!(b.queue_drops, 0, "{:?}", b.drops_by_reason);
    assert!(b.ecn_marks > 100);
    // A 1 ms step is 2 % of this path's 550 kB window, far below the
    // seventh DCTCP needs to keep a link full (RFC 8257 section 4): some
    // capacity is given up for the short queue.
    assert!(b.utilization > 0.8, "utilization {}", b.utilization);
    // 100 Mb/s: 1 ms is 12.5 kB; allow the step's overshoot of a packet or
    // two. (At 10 Mb/s one packet alone waits 1.2 ms, so the step marks
    // nearly every packet and a DCTCP-like sender cannot fill the link:
    // DCTCP needs its threshold above a seventh of the window, RFC 8257
    // section 4.)
    assert!(b.queue_mean_bytes < 20_000.0, "mean queue {} B", b.queue_mean_bytes);
    // The same flows as classic ECN (ECT(0)) would sit in the classic queue
    // at PI2's 15 ms target instead.
    let classic = run(&scenario("dualpi2", "100Mbps", "cubic", 4, "ecn = true"), 1).unwrap();
    let c = bottleneck(&classic);
    assert!(
        c.queue_mean_bytes > 3.0 * b.queue_mean_bytes,
        "classic {} B vs L4S {} B",
        c.queue_mean_bytes,
        b.queue_mean_bytes
    );
}

#[test]
fn dualpi2_couples_a_classic_and_a_scalable_flow_to_comparable_rates() {
    // RFC 9332 section 2.4: p_C = (p_CL / k)^2 makes a Reno-like flow and a
    // DCTCP-like flow get about the same rate. Without coupling (a FIFO
    // marking both alike) the scalable flow would starve the classic one.
    let text = r#"
        name = "coexistence"
        [run]
        stop = "60s"
        [tcp]
        cc = "newreno"
        ecn = true
        segment_size = 1448
        [topology]
        kind = "dumbbell"
        pairs = 2
        access = { rate = "1Gbps", rtt = "2ms" }
        bottleneck = { rate = "100Mbps", rtt = "40ms", queue = "dualpi2", buffer = "1MB" }
        receivers = { rate = "1Gbps", rtt = "2ms" }
        [[traffic]]
        kind = "tcp-bulk"
        from = "left0"
        to = "right0"
        [[traffic]]
        kind = "tcp-bulk"
        from = "left1"
        to = "right1"
        cc = "prague"
    "#;
    let s = Scenario::from_toml(text, "coexist.toml", &[]).expect("valid");
    let r = run(&s, 1).unwrap();
    let (classic, scalable) = (r.flows[0].goodput_mbps, r.flows[1].goodput_mbps);
    let ratio = scalable / classic;
    assert!((0.33..3.0).contains(&ratio), "Prague {scalable:.2} vs NewReno {classic:.2} Mb/s");
}
