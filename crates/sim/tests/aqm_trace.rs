//! `run_aqm_traced` (`netreturn-sim --aqm-trace`): what a flow-queueing AQM
//! did, event by event, adds up to the interface's counts
//! (docs/validation.md, "FQ-CoDel with ECN: the flow queues compared").

use netreturn_control::queue::aqm::FqEvent;
use netreturn_sim::{run, run_aqm_traced, Scenario};

fn dumbbell() -> Scenario {
    let text = r#"
        name = "aqm trace"
        [run]
        stop = "20s"
        [tcp]
        cc = "cubic"
        ecn = true
        [topology]
        kind = "dumbbell"
        pairs = 8
        access = { rate = "100Mbps", rtt = "2ms" }
        bottleneck = { rate = "10Mbps", rtt = "40ms", queue = "fq_codel", buffer = "30kB" }
        receivers = { rate = "100Mbps", rtt = "2ms" }
        [[traffic]]
        kind = "tcp-bulk"
        from = "left"
        to = "right"
        count = 8
        start = { uniform = ["0s", "1s"] }
        [[traffic]]
        kind = "udp-cbr"
        from = "left0"
        to = "right0"
        rate = "4Mbps"
        packet = 1000
        start = "0s"
        "#;
    Scenario::from_toml(text, "aqm-trace.toml", &[]).expect("test scenario is valid")
}

#[test]
fn the_fq_codel_trace_adds_up_to_the_bottlenecks_drops_and_marks_and_changes_no_result() {
    let s = dumbbell();
    let (r, traces) = run_aqm_traced(&s, 1).unwrap();
    let plain = run(&s, 1).unwrap();
    assert_eq!(format!("{:?}", r.summary), format!("{:?}", plain.summary), "tracing changes nothing");
    assert_eq!(traces.len(), 1, "one FQ-CoDel interface: {:?}", traces.iter().map(|t| &t.0).collect::<Vec<_>>());
    let (name, tr) = &traces[0];
    let b = r.ifaces.iter().find(|f| &f.name == name).expect("the traced interface");
    let n = |e: FqEvent| tr.iter().filter(|x| x.event == e).count() as u64;
    let [overflow, _, _, sojourn] = b.drops_by_reason;
    assert!(overflow > 0 && sojourn > 0 && b.ecn_marks > 0, "{:?} marks {}", b.drops_by_reason, b.ecn_marks);
    assert_eq!((n(FqEvent::Overflow), n(FqEvent::Drop), n(FqEvent::Mark)), (overflow, sojourn, b.ecn_marks));
    // The UDP flow's packets (not ECN-capable) are dropped, never marked.
    let udp = |x: &&netreturn_control::queue::aqm::FqSample| (x.flow >> 1) & 1 == 1;
    assert!(tr.iter().filter(udp).all(|x| x.event != FqEvent::Mark));
    assert!(tr.iter().filter(udp).any(|x| x.event == FqEvent::Drop));
}
