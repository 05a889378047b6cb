//! XCP in whole simulations (XCP paper section 5; seed 002 section 3): a
//! lone flow fills its bottleneck with an almost empty queue, long-lived
//! flows lose nothing, and flows of unequal RTTs share fairly.

use netreturn_sim::{run, RunResult, Scenario};

/// `flows` bulk flows over a dumbbell whose bottleneck runs `queue`.
fn dumbbell(flows: u32, queue: &str, rate: &str, buffer: &str, stop: &str) -> Scenario {
    let text = format!(
        r#"
        name = "xcp test dumbbell"
        [run]
        stop = "{stop}"
        [tcp]
        cc = "newreno"
        segment_size = 960
        [topology]
        kind = "dumbbell"
        pairs = {flows}
        access = {{ rate = "1Gbps", rtt = "2ms" }}
        bottleneck = {{ rate = "{rate}", rtt = "76ms", queue = "{queue}", buffer = "{buffer}" }}
        receivers = {{ rate = "1Gbps", rtt = "2ms" }}
        [[traffic]]
        kind = "tcp-bulk"
        from = "left"
        to = "right"
        count = {flows}
        start = {{ uniform = ["0s", "1s"] }}
        "#
    );
    Scenario::from_toml(&text, "xcp-test.toml", &[]).expect("test scenario is valid")
}

fn bottleneck(r: &RunResult) -> &netreturn_sim::metrics::IfaceRow {
    r.ifaces.iter().find(|f| f.name == "R1->R2").expect("dumbbell bottleneck")
}

#[test]
fn a_single_xcp_flow_fills_the_link_with_a_near_empty_queue() {
    // XCP section 5.1: utilization near 100 %, a standing queue of a few
    // packets, no drop. 10 Mb/s x 80 ms = 100 kB of BDP, buffer one BDP.
    let r = run(&dumbbell(1, "xcp", "10Mbps", "100kB", "30s"), 1).unwrap();
    let b = bottleneck(&r);
    assert!(b.utilization > 0.97, "utilization {}", b.utilization);
    assert!(b.queue_mean_bytes < 3_000.0, "mean queue {} B: more than 3 packets", b.queue_mean_bytes);
    assert_eq!(b.queue_drops, 0);
}

#[test]
fn xcp_and_awm_lose_nothing_with_long_lived_flows_on_a_single_bottleneck() {
    // Seed 002 section 3.1: "AWM and XCP ... no packet loss"; NewReno over
    // DropTail (NC) does lose, which shows the load is a real one.
    // 20 Mb/s x 80 ms = 200 kB = BDP buffer; AWM target half of it.
    for queue in ["xcp", "awm", "droptail"] {
        let r = run(&dumbbell(20, queue, "20Mbps", "200kB", "30s"), 2).unwrap();
        let b = bottleneck(&r);
        if queue == "droptail" {
            assert!(b.queue_drops > 0, "NC should overflow the buffer");
        } else {
            assert_eq!(b.queue_drops, 0, "{queue} dropped");
            assert!(b.utilization > 0.9, "{queue}: utilization {}", b.utilization);
        }
    }
}

#[test]
fn xcp_shares_fairly_among_flows_of_unequal_rtts() {
    // Seed 002 Table 1 case 2: 30 flows on 30 Mb/s, RTT_i = 40 + 10 (i - 1)
    // ms; the paper gives XCP a Jain index of 0.9954. Goodput is averaged
    // over each flow's whole life, so the start-up transient (flows
    // starting within the first second, the early ones ahead until the
    // shuffling evens them out) counts: 0.95 over 30 s, 0.996 over 120 s.
    let text = r#"
        name = "fairness case 2"
        [run]
        stop = "120s"
        [tcp]
        cc = "newreno"
        segment_size = 960
        [topology]
        kind = "multi-rtt"
        pairs = 30
        bottleneck = { rate = "30Mbps", rtt = "20ms", queue = "xcp", buffer = "700kB" }
        access_rate = "1Gbps"
        base_rtt = "40ms"
        step = "10ms"
        [[traffic]]
        kind = "tcp-bulk"
        from = "left"
        to = "right"
        count = 30
        start = { uniform = ["0s", "1s"] }
    "#;
    let s = Scenario::from_toml(text, "fairness.toml", &[]).unwrap();
    let r = run(&s, 1).unwrap();
    let jain = r.get("jain_goodput").unwrap();
    assert!(jain > 0.99, "Jain {jain}");
}
