//! A device queue under a dequeue-time AQM (the `aqm` table's
//! `device_queue`): ns-3 keeps one under every queue disc, which the queue
//! disc refills as the previous packet starts on the link
//! (docs/validation.md, "FQ-CoDel with ECN: the flow queues compared").

use netreturn_sim::{run, Scenario};

/// A UDP flow at twice the bottleneck's rate into CoDel for 60 ms: the queue
/// grows by a packet every two transmissions and CoDel, whose first drop
/// needs its sojourn above target for 100 ms, drops nothing.
fn overload(device_queue: u32) -> Scenario {
    let text = format!(
        r#"
        name = "device queue"
        [run]
        stop = "60ms"
        [topology]
        kind = "dumbbell"
        pairs = 1
        access = {{ rate = "100Mbps", rtt = "2ms" }}
        bottleneck = {{ rate = "10Mbps", rtt = "20ms", queue = "codel", buffer = "1000p", aqm = {{ device_queue = {device_queue} }} }}
        receivers = {{ rate = "100Mbps", rtt = "2ms" }}
        [[traffic]]
        kind = "udp-cbr"
        from = "left0"
        to = "right0"
        rate = "20Mbps"
        packet = 1000
        start = "0s"
        "#
    );
    Scenario::from_toml(&text, "device-queue.toml", &[]).expect("test scenario is valid")
}

#[test]
fn with_a_one_packet_device_queue_the_aqm_holds_one_packet_less_and_the_link_sends_the_same() {
    let bottleneck = |dq| {
        let r = run(&overload(dq), 1).unwrap();
        r.ifaces.into_iter().find(|f| f.name == "R1->R2").expect("bottleneck")
    };
    let (none, one) = (bottleneck(0), bottleneck(1));
    assert_eq!((none.queue_drops, one.queue_drops), (0, 0), "CoDel has not started dropping");
    // The packet waiting in the device has left the AQM's queue: its
    // largest backlog is one packet (1028 B on the wire) smaller.
    assert_eq!(none.queue_max_bytes - one.queue_max_bytes, 1028, "{} vs {}", none.queue_max_bytes, one.queue_max_bytes);
    assert!(one.queue_mean_bytes < none.queue_mean_bytes);
    // The link is as busy and sends the same packets.
    assert_eq!(none.tx_packets, one.tx_packets);
}
