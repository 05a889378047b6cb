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
fn drops_by_reason_add_up_and_only_red_drops_early() {
    for queue in ["droptail", "red"] {
        let r = run(&dumbbell(queue), 1).unwrap();
        let b = r.ifaces.iter().find(|f| f.name == "R1->R2").expect("bottleneck");
        let [overflow, early, forced] = b.drops_by_reason;
        assert!(b.queue_drops > 0, "{queue}: the load must cause drops");
        assert_eq!(overflow + early + forced, b.queue_drops, "{queue}");
        if queue == "droptail" {
            assert_eq!((early, forced), (0, 0), "DropTail only overflows");
        } else {
            assert!(early > 0, "RED drops early below max_th");
        }
    }
}
