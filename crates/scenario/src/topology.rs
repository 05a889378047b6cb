//! Nodes, point-to-point links and static shortest-path routing, built from
//! a scenario's [`TopologySpec`].

use crate::scenario::{LinkSpec, LossDirection, QueueMethod, TopologySpec};
use netreturn_base::{Rate, Time};
use std::collections::{BTreeMap, VecDeque};

/// One direction of a link, as built: the egress interface of `from`.
#[derive(Clone, Debug)]
pub struct IfaceSpec {
    pub name: String,
    /// Where the file describes it ("topology.bottleneck"; the reverse
    /// direction adds ".reverse"), for errors.
    pub field: String,
    pub from: u32,
    pub to: u32,
    pub rate: Rate,
    pub delay: Time,
    pub loss: f64,
    pub method: QueueMethod,
    pub buffer: netreturn_base::units::Size,
    pub gateway: Option<netreturn_control::GatewayParams>,
    pub red: Option<crate::scenario::RedSpec>,
    pub aqm: Option<crate::scenario::AqmSpec>,
}

/// The built graph: nodes, interfaces (two per link, `2k` and `2k + 1` are
/// the two directions of link k), groups of hosts and the routing table.
#[derive(Clone, Debug)]
pub struct Topology {
    pub nodes: Vec<String>,
    pub ifaces: Vec<IfaceSpec>,
    pub groups: BTreeMap<String, Vec<u32>>,
    /// The bottleneck the file declares (`topology.bottleneck` of a
    /// dumbbell or a multi-rtt); chains and graphs declare none, and
    /// [`crate::resolve::Resolved::monitored`] finds theirs on the traffic's
    /// paths.
    pub bottleneck: Option<u32>,
    routes: Routes,
}

/// Static routes, stored so they stay small and cache-friendly with
/// thousands of hosts. A *stub* is a node with one link (a host on its
/// access link): from a stub the only way out is its one interface, and a
/// stub is reached through its one neighbour. Only the other (core) nodes
/// get a table, `core x core`; a dumbbell of 3100 pairs keeps 4 entries
/// instead of 38 million.
#[derive(Clone, Debug, Default)]
struct Routes {
    /// Per node: its single egress interface if it is a stub, else NO_ROUTE.
    only_out: Vec<u32>,
    /// Per stub: (its neighbour, the neighbour's interface to it).
    parent: Vec<(u32, u32)>,
    /// Per node: its index among core nodes, NO_ROUTE for a stub.
    core: Vec<u32>,
    ncore: usize,
    /// `next_hop[core(src) * ncore + core(dst)]`.
    next_hop: Vec<u32>,
    /// `from_core[core(src) * n + dst]`: the same for every destination,
    /// stubs included, so a router's lookup is one load (core x n entries:
    /// a dumbbell of 3100 pairs keeps 2 x 6202).
    from_core: Vec<u32>,
    n: usize,
}

pub const NO_ROUTE: u32 = u32::MAX;

/// The most routing-table entries a topology may need (4 bytes each):
/// 4 x 10^7, 160 MB, about 4 500 routers. A dumbbell of any size has two.
pub const MAX_ROUTE_ENTRIES: u64 = 40_000_000;

struct Builder {
    nodes: Vec<String>,
    index: BTreeMap<String, u32>,
    ifaces: Vec<IfaceSpec>,
    groups: BTreeMap<String, Vec<u32>>,
}

impl Builder {
    fn new() -> Builder {
        Builder { nodes: vec![], index: BTreeMap::new(), ifaces: vec![], groups: BTreeMap::new() }
    }

    fn node(&mut self, name: &str, group: Option<&str>) -> u32 {
        let id = *self.index.entry(name.to_string()).or_insert_with(|| {
            self.nodes.push(name.to_string());
            (self.nodes.len() - 1) as u32
        });
        if let Some(g) = group {
            self.groups.entry(g.to_string()).or_default().push(id);
        }
        id
    }

    /// A duplex link: `spec` applies to a -> b; b -> a gets the same rate,
    /// delay and buffer under plain DropTail (the ACK direction) unless
    /// `spec.reverse` gives it a queue of its own, and the same loss unless
    /// `loss_direction = "forward"`.
    fn link(&mut self, a: u32, b: u32, spec: &LinkSpec, field: &str) -> u32 {
        let delay = match (spec.delay, spec.rtt) {
            (Some(d), _) => d.0,
            (None, Some(r)) => Time(r.0.nanos() / 2),
            (None, None) => Time::ZERO,
        };
        let fwd = IfaceSpec {
            name: format!("{}->{}", self.nodes[a as usize], self.nodes[b as usize]),
            field: field.to_string(),
            from: a,
            to: b,
            rate: spec.rate.0,
            delay,
            loss: spec.loss,
            method: spec.queue,
            buffer: spec.buffer.0,
            gateway: spec.gateway.clone(),
            red: spec.red.clone(),
            aqm: spec.aqm.clone(),
        };
        let r = spec.reverse.clone().unwrap_or_default();
        let rev = IfaceSpec {
            name: format!("{}->{}", self.nodes[b as usize], self.nodes[a as usize]),
            field: format!("{field}.reverse"),
            from: b,
            to: a,
            method: r.queue.unwrap_or(QueueMethod::Queue(netreturn_control::QueueKind::DropTail)),
            buffer: r.buffer.map_or(fwd.buffer, |b| b.0),
            gateway: r.gateway,
            red: r.red,
            aqm: r.aqm,
            loss: match spec.loss_direction {
                LossDirection::Both => spec.loss,
                LossDirection::Forward => 0.0,
            },
            ..fwd.clone()
        };
        // A link's two directions sit side by side, a -> b at an even index
        // (`Iface::reverse` relies on it).
        self.ifaces.push(fwd);
        self.ifaces.push(rev);
        (self.ifaces.len() - 2) as u32
    }
}

impl Topology {
    pub fn build(spec: &TopologySpec) -> Result<Topology, (String, String)> {
        let mut b = Builder::new();
        let mut bottleneck = None;
        match spec {
            TopologySpec::Dumbbell { pairs, access, bottleneck: bn, receivers } => {
                let r1 = b.node("R1", None);
                let r2 = b.node("R2", None);
                bottleneck = Some(b.link(r1, r2, bn, "topology.bottleneck"));
                for i in 0..*pairs {
                    let l = b.node(&format!("left{i}"), Some("left"));
                    b.link(l, r1, access, "topology.access");
                }
                for i in 0..*pairs {
                    let r = b.node(&format!("right{i}"), Some("right"));
                    // Receivers' links are specified in the data direction R2 -> right.
                    b.link(r2, r, receivers, "topology.receivers");
                }
            }
            TopologySpec::Chain { hops, link, overrides, access, hosts_per_router, end_hosts } => {
                let routers: Vec<u32> = (0..=*hops).map(|i| b.node(&format!("R{i}"), None)).collect();
                for i in 0..*hops as usize {
                    let spec = overrides.get(&i.to_string()).unwrap_or(link);
                    let field = if overrides.contains_key(&i.to_string()) {
                        format!("topology.overrides.{i}")
                    } else {
                        "topology.link".to_string()
                    };
                    b.link(routers[i], routers[i + 1], spec, &field);
                }
                for key in overrides.keys() {
                    match key.parse::<u32>() {
                        Ok(k) if k < *hops => {}
                        _ => {
                            return Err((format!("topology.overrides.{key}"), format!("not a hop index in 0..{hops}")))
                        }
                    }
                }
                for (i, &r) in routers.iter().enumerate() {
                    for j in 0..*hosts_per_router {
                        let h = b.node(&format!("h{i}_{j}"), Some(&format!("at{i}")));
                        b.link(h, r, access, "topology.access");
                    }
                }
                for j in 0..*end_hosts {
                    let s = b.node(&format!("src{j}"), Some("src"));
                    b.link(s, routers[0], access, "topology.access");
                    let d = b.node(&format!("dst{j}"), Some("dst"));
                    b.link(routers[*hops as usize], d, access, "topology.access");
                }
            }
            TopologySpec::MultiRtt { pairs, bottleneck: bn, access_rate, base_rtt, step } => {
                let r1 = b.node("R1", None);
                let r2 = b.node("R2", None);
                let bn_delay = bn.delay.map(|d| d.0).or(bn.rtt.map(|r| Time(r.0.nanos() / 2))).unwrap_or(Time::ZERO);
                bottleneck = Some(b.link(r1, r2, bn, "topology.bottleneck"));
                for i in 0..*pairs {
                    // rtt_i = base + step i = 2 (access_i + bottleneck + 0):
                    // the sender's access link carries the difference.
                    let rtt = base_rtt.0 + Time(step.0.nanos() * i as u64);
                    let one_way = Time((rtt.nanos() / 2).saturating_sub(bn_delay.nanos()));
                    let acc = LinkSpec {
                        rate: *access_rate,
                        delay: Some(netreturn_base::units::TimeQ(one_way)),
                        rtt: None,
                        queue: QueueMethod::Queue(netreturn_control::QueueKind::DropTail),
                        buffer: netreturn_base::units::SizeQ(netreturn_base::units::Size::Packets(1000)),
                        loss: 0.0,
                        loss_direction: LossDirection::Both,
                        gateway: None,
                        red: None,
                        aqm: None,
                        reverse: None,
                    };
                    let s = b.node(&format!("left{i}"), Some("left"));
                    b.link(s, r1, &acc, "topology.access_rate");
                    let d = b.node(&format!("right{i}"), Some("right"));
                    let fast = LinkSpec { delay: Some(netreturn_base::units::TimeQ(Time::ZERO)), ..acc };
                    b.link(r2, d, &fast, "topology.access_rate");
                }
            }
            TopologySpec::Graph { nodes, links, groups } => {
                for n in nodes {
                    b.node(n, None);
                }
                for (i, l) in links.iter().enumerate() {
                    let find = |name: &str, field: &str| {
                        b.index.get(name).copied().ok_or_else(|| {
                            (
                                format!("topology.links[{i}].{field}"),
                                format!("unknown node {name:?}; nodes: {}", nodes.join(", ")),
                            )
                        })
                    };
                    let (x, y) = (find(&l.from, "from")?, find(&l.to, "to")?);
                    b.link(x, y, &l.spec, &format!("topology.links[{i}]"));
                }
                for (g, members) in groups {
                    for m in members {
                        let id = *b
                            .index
                            .get(m)
                            .ok_or_else(|| (format!("topology.groups.{g}"), format!("unknown node {m:?}")))?;
                        b.groups.entry(g.clone()).or_default().push(id);
                    }
                }
            }
        }
        let mut topo =
            Topology { nodes: b.nodes, ifaces: b.ifaces, groups: b.groups, bottleneck, routes: Routes::default() };
        topo.compute_routes()?;
        Ok(topo)
    }

    /// Shortest paths by hop count (BFS from every core destination over
    /// reversed edges); ties go to the lowest interface index, so routes are
    /// deterministic. Stubs take no part in the search: a path between two
    /// other nodes never passes through a node with one link, and a stub's
    /// routes follow from its neighbour's, so the result is the one a search
    /// over every node gives (`compact_routes_equal_a_full_search`).
    fn compute_routes(&mut self) -> Result<(), (String, String)> {
        let n = self.nodes.len();
        let mut out: Vec<Vec<u32>> = vec![vec![]; n];
        let mut into: Vec<Vec<u32>> = vec![vec![]; n];
        for (i, f) in self.ifaces.iter().enumerate() {
            out[f.from as usize].push(i as u32);
            into[f.to as usize].push(i as u32);
        }
        let mut r = Routes {
            only_out: vec![NO_ROUTE; n],
            parent: vec![(NO_ROUTE, NO_ROUTE); n],
            core: vec![NO_ROUTE; n],
            ..Routes::default()
        };
        for v in 0..n {
            if let ([o], [i]) = (out[v].as_slice(), into[v].as_slice()) {
                let nb = self.ifaces[*o as usize].to;
                if self.ifaces[*i as usize].from == nb && nb as usize != v {
                    r.only_out[v] = *o;
                    r.parent[v] = (nb, *i);
                    continue;
                }
            }
            r.core[v] = r.ncore as u32;
            r.ncore += 1;
        }
        let nc = r.ncore;
        // The tables hold `core x (core + n)` entries, and the search takes
        // as many steps: a chain of 40 000 routers once asked for 6.4 GB and
        // ran for minutes. Refused before anything is allocated.
        let entries = nc as u64 * (nc as u64 + n as u64);
        if entries > MAX_ROUTE_ENTRIES {
            return Err((
                "topology".into(),
                format!(
                    "{nc} routers (nodes with more than one link) need routing tables of {} MB; at most {} MB \
                     (about {} routers)",
                    entries * 4 / 1_000_000,
                    MAX_ROUTE_ENTRIES * 4 / 1_000_000,
                    ((MAX_ROUTE_ENTRIES / 2) as f64).sqrt() as u64
                ),
            ));
        }
        r.next_hop = vec![NO_ROUTE; nc * nc];
        let mut dist = vec![u32::MAX; n];
        for dst in 0..n {
            if r.core[dst] == NO_ROUTE {
                continue;
            }
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            let cd = r.core[dst] as usize;
            let mut q = VecDeque::from([dst]);
            while let Some(v) = q.pop_front() {
                for &i in &into[v] {
                    let u = self.ifaces[i as usize].from as usize;
                    if dist[u] == u32::MAX && r.core[u] != NO_ROUTE {
                        dist[u] = dist[v] + 1;
                        r.next_hop[r.core[u] as usize * nc + cd] = i;
                        q.push_back(u);
                    }
                }
            }
        }
        // Expand each core node's row to every destination.
        r.n = n;
        r.from_core = vec![NO_ROUTE; nc * n];
        self.routes = r;
        for v in 0..n {
            let cv = self.routes.core[v];
            if cv == NO_ROUTE {
                continue;
            }
            for t in 0..n {
                let hop = self.route_slow(v as u32, t as u32);
                self.routes.from_core[cv as usize * n + t] = hop;
            }
        }
        Ok(())
    }

    /// The interface `from` sends a packet for `to` on (NO_ROUTE when
    /// `from == to`, or when `from` is not a stub and cannot reach `to`).
    #[inline]
    pub fn route(&self, from: u32, to: u32) -> u32 {
        let r = &self.routes;
        let o = r.only_out[from as usize];
        if o != NO_ROUTE {
            return if from == to { NO_ROUTE } else { o };
        }
        r.from_core[r.core[from as usize] as usize * r.n + to as usize]
    }

    /// [`Topology::route`] from the compact tables (used to fill
    /// `from_core`).
    fn route_slow(&self, from: u32, to: u32) -> u32 {
        let r = &self.routes;
        if from == to {
            return NO_ROUTE;
        }
        let o = r.only_out[from as usize];
        if o != NO_ROUTE {
            return o;
        }
        let mut t = to;
        if r.core[to as usize] == NO_ROUTE {
            let (p, down) = r.parent[to as usize];
            if p == from {
                return down;
            }
            t = p;
            if r.core[t as usize] == NO_ROUTE {
                // Two stubs joined only to each other (an island of one
                // link): not reachable from any core node.
                return NO_ROUTE;
            }
        }
        r.next_hop[r.core[from as usize] as usize * r.ncore + r.core[t as usize] as usize]
    }

    /// Whether packets from `from` reach `to`, hop by hop.
    pub fn reachable(&self, from: u32, to: u32) -> bool {
        let mut at = from;
        for _ in 0..self.nodes.len() {
            if at == to {
                return true;
            }
            let i = self.route(at, to);
            if i == NO_ROUTE {
                return false;
            }
            at = self.ifaces[i as usize].to;
        }
        at == to
    }

    /// Hosts named by a group (`left`) or a single node name (`left0`).
    pub fn hosts(&self, sel: &str) -> Option<Vec<u32>> {
        if let Some(g) = self.groups.get(sel) {
            return Some(g.clone());
        }
        self.nodes.iter().position(|n| n == sel).map(|i| vec![i as u32])
    }

    pub fn iface_by_name(&self, name: &str) -> Option<u32> {
        self.ifaces.iter().position(|f| f.name == name).map(|i| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn a_destination_on_an_island_of_one_link_is_unreachable_not_a_panic() {
        // Issue 23: c and d, joined only to each other, are both stubs; the
        // route to d through its stub parent indexed with the no-route
        // marker ("index is 4294967295").
        let text = r#"
            name = "islands"
            [topology]
            kind = "graph"
            nodes = ["a", "r", "b", "c", "d"]
            links = [
              { from = "a", to = "r", rate = "10Mbps", delay = "1ms" },
              { from = "r", to = "b", rate = "10Mbps", delay = "1ms" },
              { from = "c", to = "d", rate = "10Mbps", delay = "1ms" },
            ]
        "#;
        let s = Scenario::from_toml(text, "i.toml", &[]).unwrap();
        let t = Topology::build(&s.topology).unwrap();
        let id = |n: &str| t.nodes.iter().position(|x| x == n).unwrap() as u32;
        assert!(!t.reachable(id("a"), id("d")));
        assert!(!t.reachable(id("r"), id("c")));
        assert!(t.reachable(id("c"), id("d")) && t.reachable(id("d"), id("c")), "the island talks to itself");
        assert!(t.reachable(id("a"), id("b")));
    }

    #[test]
    fn a_topology_whose_routing_tables_would_not_fit_is_refused_before_they_are_built() {
        // Issue 23: a 3 MB graph of 40 000 links asked for 6.4 GB of routes.
        let chain = |hops: u32| {
            let text = format!(
                "name = \"c\"\n[topology]\nkind = \"chain\"\nhops = {hops}\n\
                 link = {{ rate = \"10Mbps\", delay = \"1ms\" }}\naccess = {{ rate = \"1Gbps\", delay = \"1ms\" }}\n"
            );
            Topology::build(&Scenario::from_toml(&text, "c.toml", &[]).unwrap().topology)
        };
        let (field, message) = chain(6000).unwrap_err();
        assert_eq!(field, "topology");
        assert!(message.contains("5999 routers") && message.contains("at most 160 MB"), "{message}");
        assert!(chain(2000).is_ok());
    }
}
