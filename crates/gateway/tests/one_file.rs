//! One scenario file, two loaders: the simulator's (`World::new`) and the
//! real gateway's (`--config FILE`) must read the bottleneck link and its
//! controller the same way, for every queue method of the registry.

use netreturn_base::{Size, Time};
use netreturn_control::queue::Limit;
use netreturn_control::{Method, QueueKind};
use netreturn_gateway::cli::Args;
use netreturn_gateway::control::gateway_config;
use netreturn_sim::world::World;
use netreturn_sim::Scenario;

const FILE: &str = r#"
name = "one file"
[params]
queue = "droptail"
[topology]
kind = "dumbbell"
pairs = 2
access = { rate = "100Mbps", rtt = "2ms" }
receivers = { rate = "100Mbps", rtt = "2ms" }
[topology.bottleneck]
rate = "45Mbps"
rtt = "80ms"
queue = "{queue}"
buffer = "97kB"
loss = 0.001
red = { min_th = "10p", max_th = "30kB", w_q = 0.004, gentle = true }
[topology.bottleneck.gateway]
assume_wscale = 7
ewt = { st = "20p" }
ewa = { alpha = 2048, w_up = 32, interval = "50ms", low = "20kB", high = "40kB" }
awm = { target = "40kB", estimator = "adaptive", design_rtt = "100ms" }
sap-law = { udp_time_constant = "250ms" }
rwm = { delta = -0.1, share = 0.5, classes = [{ ports = [80, 443], share = 0.7 }] }
[[traffic]]
kind = "tcp-file"
from = "left"
to = "right"
count = 2
bytes = "1MB"
"#;

#[test]
fn the_simulator_and_the_gateway_read_one_file_the_same_way_for_every_method() {
    let path = std::env::temp_dir().join(format!("netreturn-one-file-{}.toml", std::process::id()));
    std::fs::write(&path, FILE).unwrap();
    let file = path.display().to_string();
    for m in Method::all() {
        let sets = vec![("queue".to_string(), m.name().to_string())];
        if let Method::Stage(_) = m {
            // A router stage the real gateway cannot run yet is refused,
            // naming the field and what it can run.
            let argv: Vec<String> =
                ["--a", "x", "--b", "y", "--config", &file, "--set", &format!("queue={}", m.name())]
                    .map(String::from)
                    .to_vec();
            let e = Args::parse(&argv).unwrap_err();
            assert!(e.contains("topology.bottleneck.queue") && e.contains("droptail"), "{e}");
            continue;
        }
        // The simulator.
        let s = Scenario::from_file(&path, &sets).unwrap();
        let w = World::new(&s, 1).unwrap();
        let i = w.topo.iface_by_name("R1->R2").unwrap() as usize;
        let sim = &w.ifaces[i];
        // The gateway.
        let argv: Vec<String> = ["--a", "x", "--b", "y", "--config", &file, "--set", &format!("queue={}", m.name())]
            .map(String::from)
            .to_vec();
        let a = Args::parse(&argv).unwrap();

        assert_eq!(a.rate, Some(sim.rate), "{m:?}");
        assert_eq!(a.delay, sim.delay, "{m:?}");
        assert_eq!(a.delay, Time::from_millis(40));
        assert_eq!(a.loss, sim.loss, "{m:?}");
        let expect_kind = match w.topo.ifaces[i].method {
            Method::Queue(q) => q,
            Method::Window(_) | Method::Stage(_) => QueueKind::DropTail,
        };
        assert_eq!(a.queue.kind, expect_kind, "{m:?}");
        assert_eq!(w.topo.ifaces[i].buffer, Size::Bytes(97_000));
        assert_eq!(a.queue.limit, Limit::Bytes(97_000), "{m:?}");
        assert_eq!(a.queue.red, w.topo.ifaces[i].red, "{m:?}");
        assert_eq!(a.controller, m.controller(), "{m:?}");
        let gw = gateway_config(&a).unwrap();
        match (&sim.gateway, gw) {
            (None, None) => assert!(m.controller().is_none()),
            (Some(sg), Some(g)) => {
                let sc = sg.config();
                assert_eq!(g.controller, sc.controller, "{m:?}");
                assert_eq!(g.controller.kind(), m.controller().unwrap());
                assert_eq!(g.assume_wscale, sc.assume_wscale);
                assert_eq!(g.assume_wscale, Some(7));
                assert_eq!((g.buffer_bytes, g.link_rate), (sc.buffer_bytes, sc.link_rate), "{m:?}");
            }
            (s, g) => panic!("{m:?}: simulator gateway {}, real gateway {}", s.is_some(), g.is_some()),
        }
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn a_file_the_gateway_cannot_honour_is_refused_with_file_and_field() {
    let path = std::env::temp_dir().join(format!("netreturn-chain-{}.toml", std::process::id()));
    let chain = r#"
name = "chain"
[topology]
kind = "chain"
hops = 2
link = { rate = "10Mbps", rtt = "10ms" }
access = { rate = "100Mbps", rtt = "1ms" }
end_hosts = 1
"#;
    std::fs::write(&path, chain).unwrap();
    let file = path.display().to_string();
    let e = Args::parse(&["--a", "x", "--b", "y", "--config", &file].map(String::from)).unwrap_err();
    assert!(e.starts_with(&format!("{file}: field `topology.kind`")), "{e}");
    assert!(e.contains("allowed: dumbbell, multi-rtt"), "{e}");
    // A shorthand flag may not silently override the file.
    std::fs::write(&path, FILE).unwrap();
    let e = Args::parse(&["--a", "x", "--b", "y", "--config", &file, "--rate", "1gbit"].map(String::from)).unwrap_err();
    assert!(e.contains("--rate"), "{e}");
    // A bad value in the file names the file and the field.
    std::fs::write(&path, FILE.replace("st = \"20p\"", "st = \"-5k\"")).unwrap();
    let e = Args::parse(&["--a", "x", "--b", "y", "--config", &file].map(String::from)).unwrap_err();
    assert!(e.starts_with(&format!("{file}: field `topology.bottleneck.gateway.ewt.st`")), "{e}");
    std::fs::remove_file(&path).ok();
}
