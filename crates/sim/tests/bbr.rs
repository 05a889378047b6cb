//! BBR v1 (`tcp.cc = "bbr"`, draft-cardwell-iccrg-bbr-congestion-control-00)
//! through the simulator's dumbbell: paced senders driven by the world's
//! timer events, against CUBIC behind the same deep buffer.

use netreturn_sim::{run, Scenario};

/// `flows` flows of `cc` through a 20 Mb/s, 40 ms dumbbell with a `buffer`
/// DropTail buffer; `traffic` is the `[[traffic]]` kind and its keys.
fn scenario(cc: &str, flows: u32, buffer: &str, traffic: &str) -> Scenario {
    Scenario::from_toml(&scenario_text(cc, flows, buffer, traffic), "bbr.toml", &[]).expect("valid")
}

fn scenario_text(cc: &str, flows: u32, buffer: &str, traffic: &str) -> String {
    format!(
        r#"
        name = "bbr"
        [run]
        stop = "20s"
        [tcp]
        cc = "{cc}"
        segment_size = 1448
        [topology]
        kind = "dumbbell"
        pairs = {flows}
        access = {{ rate = "1Gbps", rtt = "2ms" }}
        bottleneck = {{ rate = "20Mbps", rtt = "40ms", queue = "droptail", buffer = "{buffer}" }}
        receivers = {{ rate = "1Gbps", rtt = "2ms" }}
        [[traffic]]
        {traffic}
        from = "left"
        to = "right"
        count = {flows}
        start = {{ uniform = ["0s", "1s"] }}
        "#
    )
}

fn bottleneck(r: &netreturn_sim::metrics::RunResult) -> &netreturn_sim::metrics::IfaceRow {
    r.ifaces.iter().find(|f| f.name == "R1->R2").expect("bottleneck")
}

#[test]
fn bbr_fills_the_link_with_a_far_shorter_queue_than_cubic_behind_a_deep_buffer() {
    // A 2 MB buffer is 800 ms at 20 Mb/s, 20 BDPs of this 40 ms path.
    // CUBIC fills it before losing a packet; BBR's cwnd of 2 BDP (section
    // 4.2.3.2) and its pacing at the bottleneck rate keep the standing
    // queue near one BDP or below, with the link as full.
    let bulk = r#"kind = "tcp-bulk""#;
    let bbr = run(&scenario("bbr", 4, "2MB", bulk), 1).unwrap();
    let cubic = run(&scenario("cubic", 4, "2MB", bulk), 1).unwrap();
    let (b, c) = (bottleneck(&bbr), bottleneck(&cubic));
    assert!(b.utilization > 0.9, "BBR's utilization {}", b.utilization);
    assert!(c.utilization > 0.9, "CUBIC's utilization {}", c.utilization);
    // One BDP of 20 Mb/s x 40 ms is 100 kB.
    assert!(b.queue_mean_bytes < 200_000.0, "BBR's mean queue {} B", b.queue_mean_bytes);
    assert!(
        b.queue_mean_bytes * 4.0 < c.queue_mean_bytes,
        "BBR's mean queue {} B against CUBIC's {} B",
        b.queue_mean_bytes,
        c.queue_mean_bytes
    );
}

#[test]
fn every_finite_bbr_transfer_completes_behind_a_shallow_buffer() {
    // A 30 kB buffer (under a third of a BDP) drops what Startup's 2.89x
    // overshoot sends; recovery and the restored window still deliver every
    // byte of every transfer.
    let file = r#"kind = "tcp-file"
        bytes = "2MB""#;
    let r = run(&scenario("bbr", 6, "30kB", file), 1).unwrap();
    assert!(bottleneck(&r).queue_drops > 0, "this buffer should overflow");
    assert_eq!(r.get("flows_completed"), Some(6.0));
    for f in &r.flows {
        assert_eq!(f.bytes_delivered, 2_000_000, "flow {} delivered {}", f.flow, f.bytes_delivered);
    }
}

#[test]
fn a_lone_bbr_flow_drops_to_four_segments_for_probe_rtt_about_every_ten_seconds() {
    // Section 4.3.5: with RTprop not lowered for 10 s (a lone flow keeps
    // its own standing queue in ProbeBW), cwnd falls to 4 segments for
    // about 200 ms, then comes back; the link stays nearly full.
    let text = scenario_text("bbr", 1, "2MB", r#"kind = "tcp-bulk""#)
        .replace(r#"stop = "20s""#, "stop = \"25s\"\ntrace_flows = [0]\nsample_interval = \"10ms\"");
    let s = Scenario::from_toml(&text, "bbr.toml", &[]).expect("valid");
    let r = run(&s, 1).unwrap();
    let t = &r.traces[0];
    // Runs of samples (every 10 ms) with cwnd at 4 segments or below.
    let mut episodes: Vec<(f64, f64)> = Vec::new();
    for (&at, &cwnd) in t.time_s.iter().zip(&t.cwnd) {
        if cwnd > 4.0 * 1448.0 {
            continue;
        }
        match episodes.last_mut() {
            Some((_, end)) if at - *end < 0.015 => *end = at,
            _ => episodes.push((at, at)),
        }
    }
    assert_eq!(episodes.len(), 2, "ProbeRTT episodes {episodes:?}");
    for &(start, end) in &episodes {
        // 200 ms once the flight is down to 4 segments, plus the time to
        // get it there (one RTT or so).
        let held = end - start + 0.01;
        assert!((0.2..0.4).contains(&held), "ProbeRTT held {held} s from {start}");
    }
    assert!((10.0..12.0).contains(&episodes[0].0), "first ProbeRTT at {}", episodes[0].0);
    // The next comes 10 s after the last one ended (RTprop refreshed then).
    let gap = episodes[1].0 - episodes[0].1;
    assert!((9.9..10.5).contains(&gap), "{gap} s between ProbeRTTs");
    assert!(bottleneck(&r).utilization > 0.9, "utilization {}", bottleneck(&r).utilization);
}
