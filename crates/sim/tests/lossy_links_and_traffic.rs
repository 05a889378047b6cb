//! Links and traffic of seed 004's experiments: loss on one direction of a
//! link, CBR rate schedules, reverse-direction FTP, the available bandwidth
//! and the senders' bandwidth estimates over time.

use netreturn_sim::world::World;
use netreturn_sim::{run, Scenario};

fn world(text: &str, seed: u64) -> World {
    let s = Scenario::from_toml(text, "test.toml", &[]).unwrap();
    let mut w = World::new(&s, seed).unwrap();
    w.run();
    w
}

#[test]
fn forward_only_loss_drops_data_and_never_an_ack() {
    let text = r#"
        name = "wireless"
        [tcp]
        cc = "newreno"
        segment_size = 1000
        [topology]
        kind = "graph"
        nodes = ["s", "d"]
        links = [{ from = "s", to = "d", rate = "5Mbps", delay = "20ms", loss = 0.02, loss_direction = "forward", buffer = "100p" }]
        [[traffic]]
        kind = "tcp-bulk"
        from = "s"
        to = "d"
        [run]
        stop = "20s"
    "#;
    let w = world(text, 3);
    let f = &w.tcp[0];
    assert!(f.packets[0].lost > 20, "data lost: {}", f.packets[0].lost);
    assert_eq!(f.packets[1].lost, 0, "ACKs lost");
    // Both directions (the default) lose ACKs too.
    let w = world(&text.replace(r#"loss_direction = "forward", "#, ""), 3);
    assert!(w.tcp[0].packets[1].lost > 0);
}

#[test]
fn a_cbr_source_follows_its_rate_schedule_and_pauses_at_rate_zero() {
    let text = r#"
        name = "schedule"
        [topology]
        kind = "graph"
        nodes = ["a", "b"]
        links = [{ from = "a", to = "b", rate = "10Mbps", delay = "1ms", buffer = "1000p" }]
        [[traffic]]
        kind = "udp-cbr"
        from = "a"
        to = "b"
        rate = "1Mbps"
        packet = 1000
        schedule = [["5s", 0], ["10s", "2Mbps"]]
        stop = "15s"
        [run]
        stop = "16s"
    "#;
    let w = world(text, 1);
    // 5 s at 1 Mb/s, 5 s paused, 5 s at 2 Mb/s: 15 Mb = 1875 packets of 1000 B.
    let sent = w.udp[0].packets.sent;
    assert!((1873..=1877).contains(&sent), "sent {sent}");
}

#[test]
fn udp_goodput_counts_only_the_time_a_flow_was_sending() {
    // Issue 14: a 0.5 Mb/s flow that stops at 10 s of a 20 s run was
    // reported at 0.247 Mb/s.
    let text = r#"
        name = "stop"
        [topology]
        kind = "graph"
        nodes = ["a", "b"]
        links = [{ from = "a", to = "b", rate = "10Mbps", delay = "1ms", buffer = "1000p" }]
        [[traffic]]
        kind = "udp-cbr"
        from = "a"
        to = "b"
        rate = "0.5Mbps"
        packet = 1000
        stop = "10s"
        [run]
        stop = "20s"
    "#;
    let s = Scenario::from_toml(text, "stop.toml", &[]).unwrap();
    let r = run(&s, 1).unwrap();
    let g = r.udp[0].goodput_mbps;
    assert!((g - 0.5).abs() < 0.01, "goodput {g}");
}

#[test]
fn the_available_bandwidth_is_the_link_rate_minus_the_cross_traffic_carried() {
    // 1.5 Mb/s bottleneck, CBR of 1000-B payloads (1028 B on the wire) at
    // 0.5 Mb/s of payload until 10 s, then none; flow 0 is traced, so its
    // packets are not cross traffic.
    let text = r#"
        name = "avail"
        [tcp]
        cc = "westwood+"
        segment_size = 1000
        [topology]
        kind = "graph"
        nodes = ["s", "r1", "r2", "d"]
        links = [
            { from = "s", to = "r1", rate = "10Mbps", delay = "1ms", buffer = "1000p" },
            { from = "r1", to = "r2", rate = "1.5Mbps", delay = "10ms", buffer = "20p" },
            { from = "r2", to = "d", rate = "10Mbps", delay = "1ms", buffer = "1000p" },
        ]
        [[traffic]]
        kind = "tcp-bulk"
        from = "s"
        to = "d"
        [[traffic]]
        kind = "udp-cbr"
        from = "s"
        to = "d"
        rate = "0.5Mbps"
        packet = 1000
        stop = "10s"
        [run]
        stop = "20s"
        sample_interval = "1s"
        monitor = "r1->r2"
        trace_flows = [0]
    "#;
    let w = world(text, 1);
    let avail = &w.rec.avail_mbps;
    assert!(avail[0].is_nan(), "nothing carried before t = 0");
    let want = 1.5 - 0.5 * 1028.0 / 1000.0;
    for &a in &avail[2..10] {
        assert!((a - want).abs() < 0.02, "avail {a}, want {want}");
    }
    for &a in &avail[12..] {
        assert!((a - 1.5).abs() < 1e-9, "avail {a} after the CBR stopped");
    }
    // Westwood+'s estimate is traced and near what the flow gets.
    let bwe = &w.rec.traces[0].bwe_mbps;
    let late = bwe[bwe.len() - 1];
    assert!(late > 1.0 && late < 1.6, "BWE {late} Mb/s");
}

#[test]
fn a_reverse_ftp_runs_between_its_start_and_stop_times() {
    let text = r#"
        name = "reverse"
        [tcp]
        cc = "sarbe"
        segment_size = 1000
        [topology]
        kind = "graph"
        nodes = ["s", "d"]
        links = [{ from = "s", to = "d", rate = "1.5Mbps", delay = "10ms", buffer = "20p" }]
        [[traffic]]
        kind = "tcp-bulk"
        from = "s"
        to = "d"
        [[traffic]]
        kind = "tcp-bulk"
        from = "d"
        to = "s"
        start = "5s"
        stop = "10s"
        [run]
        stop = "20s"
        monitor = "s->d"
    "#;
    let s = Scenario::from_toml(text, "reverse.toml", &[]).unwrap();
    let r = run(&s, 1).unwrap();
    let rev = &r.flows[1];
    assert_eq!(rev.src, "d");
    // About 5 s at up to 1.5 Mb/s, and goodput over its own 5 s.
    assert!(rev.bytes_delivered > 400_000 && rev.bytes_delivered < 5 * 1_500_000 / 8, "{}", rev.bytes_delivered);
    assert!(rev.goodput_mbps > 0.6, "goodput {}", rev.goodput_mbps);
}

#[test]
fn a_traffic_entry_may_name_its_own_congestion_control() {
    let text = r#"
        name = "mixed"
        [tcp]
        cc = "reno"
        segment_size = 1000
        [topology]
        kind = "graph"
        nodes = ["s", "d"]
        links = [{ from = "s", to = "d", rate = "5Mbps", delay = "10ms", buffer = "50p" }]
        [[traffic]]
        kind = "tcp-bulk"
        from = "s"
        to = "d"
        [[traffic]]
        kind = "tcp-bulk"
        from = "s"
        to = "d"
        cc = "westwoodplus"
        [run]
        stop = "5s"
        trace_flows = [0, 1]
    "#;
    let w = world(text, 1);
    assert!(w.rec.traces[0].bwe_mbps.iter().all(|b| b.is_nan()), "Reno keeps no estimate");
    assert!(w.rec.traces[1].bwe_mbps.last().is_some_and(|b| *b > 0.0), "Westwood+ does");
}
