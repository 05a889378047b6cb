//! NGWA end to end in the simulator (seed 001 section 3, SPEC.md 5.2): the
//! scenario files under `scenarios/ngwa/`, the modes' wiring, and the
//! application-rate-limited source the paper's experiments use.

use std::path::PathBuf;

use netreturn_sim::world::World;
use netreturn_sim::{run, Scenario};

fn scenario(name: &str, sets: &[(&str, &str)]) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ngwa").join(name);
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Scenario::from_file(&path, &sets).unwrap()
}

#[test]
fn modes_5_to_8_lose_nothing_on_the_window_behaviour_scenario() {
    // Seed 001 section 3.3 and Table 2: modes 5-8 record no losses and no
    // triple dupACKs. Fig. 3's scenario: flows join at 0, 15, 30, 45 s, two
    // leave at 120 s.
    for mode in ["5", "6", "7", "8"] {
        for seed in [1, 2] {
            let r = run(&scenario("window.toml", &[("ngwa_mode", mode)]), seed).unwrap();
            assert_eq!(r.get("lost_packets"), Some(0.0), "mode {mode} seed {seed}");
            assert_eq!(r.get("triple_dupacks"), Some(0.0), "mode {mode} seed {seed}");
            assert!(r.get("goodput_mean_mbps").unwrap() > 0.4, "mode {mode}: flows kept sending");
        }
    }
}

#[test]
fn newreno_without_ngwa_loses_packets_on_the_same_scenario() {
    // The contrast the paper draws (section 3.1): the same load overflows
    // the 97 kB DropTail queue when only NewReno's cwnd limits the senders.
    let r = run(&scenario("window.toml", &[("ngwa_mode", "0")]), 1).unwrap();
    assert!(r.get("lost_packets").unwrap() > 0.0);
}

#[test]
fn ngwa_marks_every_router_egress_in_both_directions_and_mode_0_none() {
    let off = World::new(&scenario("rate.toml", &[("ngwa_mode", "0")]), 1).unwrap();
    assert!(off.ifaces.iter().all(|f| f.stage.is_none()));
    let on = World::new(&scenario("rate.toml", &[("ngwa_mode", "6")]), 1).unwrap();
    let marked: Vec<&str> = on.ifaces.iter().filter(|f| f.stage.is_some()).map(|f| f.name.as_str()).collect();
    for name in ["R1->R2", "R2->R1", "R1->left0", "R2->right3"] {
        assert!(marked.contains(&name), "{name} not marked: {marked:?}");
    }
    assert!(!marked.iter().any(|n| n.starts_with("left") || n.starts_with("right")), "hosts do not mark: {marked:?}");
}

#[test]
fn a_rate_limited_source_sends_at_its_application_rate_when_the_path_allows() {
    // ns-3 OnOffApplication, always on, 500 kb/s, over a 10 Mb/s bottleneck.
    let r = run(&scenario("rate.toml", &[("bottleneck_rate", "10Mbps")]), 1).unwrap();
    for f in &r.flows {
        let mbps = f.goodput_mbps;
        assert!((0.48..=0.501).contains(&mbps), "flow {}: {mbps} Mb/s", f.flow);
    }
    assert_eq!(r.get("lost_packets"), Some(0.0));
}

#[test]
fn a_rate_limited_source_closes_its_connection_at_its_stop_time() {
    // Fig. 3's connections leave at 120 s: the FIN follows the data written.
    let mut w = World::new(&scenario("window.toml", &[("ngwa_mode", "0")]), 1).unwrap();
    w.run();
    for f in &w.tcp[2..] {
        assert!(f.conns[0].all_data_acked(), "data and FIN acknowledged");
        assert_ne!(f.conns[0].state(), netreturn_tcp::State::Established, "closed");
    }
    assert_eq!(w.tcp[0].conns[0].state(), netreturn_tcp::State::Established);
}

#[test]
fn the_routers_counters_add_up_to_the_tcp_packets_they_forwarded() {
    let mut w = World::new(&scenario("window.toml", &[("ngwa_mode", "6")]), 1).unwrap();
    w.run();
    let r = netreturn_sim::metrics::collect(&w, 1);
    let forwarded: u64 = w.ifaces.iter().filter(|f| f.stage.is_some()).map(|f| f.stats.tx_packets).sum();
    let counted: f64 = ["ngwa_inserted", "ngwa_lowered", "ngwa_kept"].iter().map(|k| r.get(k).unwrap()).sum();
    assert_eq!(counted as u64, forwarded, "every TCP packet leaving a router is inserted, lowered or kept");
    // The first router (R1) inserts; R2, with room to spare, keeps the value.
    assert!(r.get("ngwa_inserted").unwrap() > 0.0 && r.get("ngwa_kept").unwrap() > 0.0);
    let off = run(&scenario("window.toml", &[("ngwa_mode", "0")]), 1).unwrap();
    assert_eq!(off.get("ngwa_inserted"), None, "no router, no counters");
}

#[test]
fn a_periodic_reader_sees_the_queue_as_the_last_change_before_each_boundary_left_it() {
    use netreturn_base::Time;
    use netreturn_sim::world::MarkSampler;
    let ms = Time::from_millis;
    let mut s = MarkSampler::new(ms(1), 100_000);
    // Before the first boundary a segment is marked with the empty queue.
    assert_eq!(s.observe(Time::from_micros(200), 90_000), 100_000);
    assert_eq!(s.observe(Time::from_micros(900), 80_000), 100_000);
    // The boundary at 1 ms took the last value before it (80 000), not the
    // value of the event that crossed it.
    assert_eq!(s.observe(Time::from_micros(1_100), 50_000), 80_000);
    assert_eq!(s.observe(Time::from_micros(1_999), 40_000), 80_000);
    // Several boundaries with no change between them: the same value.
    assert_eq!(s.observe(ms(5), 70_000), 40_000);
    assert_eq!(s.observe(Time::from_micros(5_500), 70_000), 40_000);
    assert_eq!(s.observe(ms(6), 70_000), 70_000);
}

#[test]
fn marking_at_arrival_with_a_ticked_queue_changes_the_run_but_keeps_its_counts_and_determinism() {
    let dequeue = run(&scenario("window.toml", &[("ngwa_mode", "6")]), 2).unwrap();
    let arrival = scenario("window.toml", &[("ngwa_mode", "6"), ("ngwa.mark_tick", "1ms")]);
    let (a, b) = (run(&arrival, 2).unwrap(), run(&arrival, 2).unwrap());
    assert_eq!(format!("{a:?}"), format!("{b:?}"), "the same seed gives the same result");
    assert_ne!(format!("{a:?}"), format!("{dequeue:?}"), "the tick-old queue marks other values");
    let mut w = World::new(&arrival, 2).unwrap();
    w.run();
    let r = netreturn_sim::metrics::collect(&w, 2);
    let forwarded: u64 = w.ifaces.iter().filter(|f| f.stage.is_some()).map(|f| f.stats.tx_packets).sum();
    let counted: f64 = ["ngwa_inserted", "ngwa_lowered", "ngwa_kept"].iter().map(|k| r.get(k).unwrap()).sum();
    // Marked at arrival, so a segment the queue then drops was counted too.
    assert!(counted as u64 >= forwarded, "every TCP packet offered to a router is marked: {counted} < {forwarded}");
    assert_eq!(r.get("lost_packets"), Some(0.0), "mode 6 on this scenario still loses nothing");
}

#[test]
fn a_zero_mark_tick_is_refused_naming_the_field() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ngwa/window.toml");
    let sets = vec![("ngwa_mode".to_string(), "6".to_string()), ("ngwa.mark_tick".to_string(), "0ms".to_string())];
    let err = Scenario::from_file(&path, &sets).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("ngwa.mark_tick") && err.contains("longer than 0"), "{err}");
}
