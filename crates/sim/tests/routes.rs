//! Routes: the compact table (stubs hang off their neighbour) must give
//! every pair of nodes the route a full breadth-first search gives.

use netreturn_sim::topology::{Topology, NO_ROUTE};
use netreturn_sim::Scenario;
use std::collections::VecDeque;

/// The reference: BFS from every destination over every node, ties to the
/// lowest interface index.
fn full_search(t: &Topology) -> Vec<Vec<u32>> {
    let n = t.nodes.len();
    let mut into: Vec<Vec<u32>> = vec![vec![]; n];
    for (i, f) in t.ifaces.iter().enumerate() {
        into[f.to as usize].push(i as u32);
    }
    let mut next = vec![vec![NO_ROUTE; n]; n];
    for dst in 0..n {
        let mut dist = vec![u32::MAX; n];
        dist[dst] = 0;
        let mut q = VecDeque::from([dst]);
        while let Some(v) = q.pop_front() {
            for &i in &into[v] {
                let u = t.ifaces[i as usize].from as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    next[u][dst] = i;
                    q.push_back(u);
                }
            }
        }
    }
    next
}

fn topology(body: &str) -> Topology {
    let s = Scenario::from_toml(&format!("name = \"t\"\n[topology]\n{body}\n"), "t.toml", &[]).expect("valid topology");
    Topology::build(&s.topology).expect("builds")
}

#[test]
fn compact_routes_equal_a_full_search() {
    let cases = [
        r#"kind = "dumbbell"
           pairs = 7
           access = { rate = "100Mbps", rtt = "2ms" }
           bottleneck = { rate = "10Mbps", rtt = "40ms" }
           receivers = { rate = "100Mbps", rtt = "2ms" }"#,
        r#"kind = "chain"
           hops = 4
           link = { rate = "10Mbps", delay = "5ms" }
           access = { rate = "100Mbps", delay = "1ms" }
           end_hosts = 3"#,
        r#"kind = "chain"
           hops = 1
           link = { rate = "10Mbps", delay = "5ms" }
           access = { rate = "100Mbps", delay = "1ms" }
           end_hosts = 1"#,
    ];
    for c in cases {
        let t = topology(c);
        let reference = full_search(&t);
        for (from, row) in reference.iter().enumerate() {
            for (to, &want) in row.iter().enumerate() {
                assert_eq!(t.route(from as u32, to as u32), want, "{} -> {} in\n{c}", t.nodes[from], t.nodes[to]);
                assert_eq!(t.reachable(from as u32, to as u32), from == to || want != NO_ROUTE);
            }
        }
    }
}
