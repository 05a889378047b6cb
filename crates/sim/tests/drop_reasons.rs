//! Queue drops by reason (`IfaceRow::drops_by_reason`, `netreturn-sim
//! --links`): what tells RED's early drops from its forced ones when two
//! simulators' losses are compared (docs/validation.md, "The RED gap of
//! scenario 2").

use netreturn_sim::{run, Scenario};

fn dumbbell(queue: &str) -> Scenario {
    let text = format!(
        r#"
        name = "drop reasons"
        [run]
        stop = "20s"
        [tcp]
        cc = "newreno"
        segment_size = 1000
        [topology]
        kind = "dumbbell"
        pairs = 8
        access = {{ rate = "100Mbps", rtt = "2ms" }}
        bottleneck = {{ rate = "10Mbps", rtt = "40ms", queue = "{queue}", buffer = "60kB" }}
        receivers = {{ rate = "100Mbps", rtt = "2ms" }}
        [[traffic]]
        kind = "tcp-bulk"
        from = "left"
        to = "right"
        count = 8
        start = {{ uniform = ["0s", "1s"] }}
        "#
    );
    Scenario::from_toml(&text, "drop-reasons.toml", &[]).expect("test scenario is valid")
}

#[test]
fn drops_by_reason_add_up_and_each_discipline_drops_for_its_own_reasons() {
    for queue in ["droptail", "red", "codel", "pie"] {
        let r = run(&dumbbell(queue), 1).unwrap();
        let b = r.ifaces.iter().find(|f| f.name == "R1->R2").expect("bottleneck");
        let [overflow, early, forced, sojourn] = b.drops_by_reason;
        assert!(b.queue_drops > 0, "{queue}: the load must cause drops");
        assert_eq!(overflow + early + forced + sojourn, b.queue_drops, "{queue}");
        match queue {
            "droptail" => assert_eq!((early, forced, sojourn), (0, 0, 0), "DropTail only overflows"),
            "red" => assert!(early > 0 && sojourn == 0, "RED drops early below max_th"),
            // CoDel drops at the head on sojourn time (RFC 8289 section 5.4).
            "codel" => assert!(sojourn > 0 && early == 0 && forced == 0, "{:?}", b.drops_by_reason),
            // PIE drops arrivals at random (RFC 8033 section 4.1).
            _ => assert!(early > 0 && sojourn == 0 && forced == 0, "{:?}", b.drops_by_reason),
        }
    }
}
