//! Building a world from a scenario: interfaces, queues, gateways,
//! applications, the TCP settings every endpoint shares, and the router
//! stages (NGWA, XCP) and captures the scenario asks for. Above the world
//! and the modules it assembles (issue 22: they do not need the builder).

use netreturn_base::{FlowKey, Rng, Time};
use netreturn_control::gateway::WindowGateway;
use netreturn_tcp::{Connection, TcpConfig};

use crate::scenario::{Dist, Scenario, TrafficSpec};
use crate::topology::NO_ROUTE;
use crate::web::WebSource;
use crate::world::{ip_of, tcp_config, FlowTrace, Iface, PacketCounts, Recorder, TcpFlow, UdpFlow, World};

fn draw(dist: &Dist, rng: &mut Rng) -> Time {
    match dist {
        Dist::Fixed(t) => t.0,
        Dist::Uniform { uniform: [a, b] } => Time::from_secs_f64(rng.uniform(a.0.secs_f64(), b.0.secs_f64())),
        Dist::Exponential { exponential } => Time::from_secs_f64(rng.exponential(exponential.0.secs_f64())),
    }
}

impl World {
    /// The world of scenario `s` and master seed `seed`, recording what the
    /// scenario asks for ([`Recorder::new`]).
    pub fn new(s: &Scenario, seed: u64) -> Result<World, (String, String)> {
        World::with_recorder(s, seed, Recorder::new(s))
    }

    /// The world of scenario `s`, recording into `rec`. Errors name the
    /// field at fault: `run.monitor` or `run.trace_flows` naming what does
    /// not exist, `log flow` for a packet log of a flow that does not.
    pub fn with_recorder(s: &Scenario, seed: u64, mut rec: Recorder) -> Result<World, (String, String)> {
        // Refuse what would not fit before allocating any of it.
        crate::memory::check(s, rec.memory_limit).map_err(|e| (e.field, e.message))?;
        let mut resolved = netreturn_scenario::Resolved::build(s)?;
        resolved.apply_phase(seed, s.run.phase.map_or(Time::ZERO, |p| p.0));
        let topo = resolved.topology;
        let mut ifaces = Vec::with_capacity(resolved.links.len());
        for (i, f) in resolved.links.into_iter().enumerate() {
            let discipline = f.discipline();
            let aqm = f.queue.aqm(f.limit, Rng::derive(seed, 2_000_000 + i as u64).next_u64(), f.aqm.as_ref());
            let gateway = f.gateway.map(|cfg| Box::new(WindowGateway::new(cfg)));
            let rng = Rng::derive(seed, 1_000_000 + i as u64);
            let link = (f.rate, f.delay, f.loss);
            let device_queue = f.aqm.as_ref().and_then(|a| a.device_queue).unwrap_or(0);
            let mut iface = Iface::new(f.name, f.to, link, discipline, aqm, f.buffer_bytes, gateway, rng);
            iface.set_device_queue(device_queue);
            ifaces.push(iface);
        }
        for name in &s.run.pcap {
            let i = topo.iface_by_name(name).ok_or_else(|| {
                ("run.pcap".to_string(), format!("no interface {name:?}; interfaces look like \"R1->R2\""))
            })?;
            // (Its hop is made not plain with the world: `Hop::new`.)
            ifaces[i as usize].pcap = Some(Box::new(crate::pcap::Pcap::new()));
        }
        rec.monitor = resolved.monitored;

        let cfg = resolved.tcp;
        let warmup = s.run.warmup.map(|w| w.0).unwrap_or(Time::ZERO);
        let mut w = World::empty(topo, ifaces, s.run.stop.0, warmup, rec);

        let mut app_rng = Rng::derive(seed, 7);
        for (ti, t) in s.traffic.iter().enumerate() {
            if let TrafficSpec::TcpWeb { .. } = t {
                add_web_source(&mut w, s, ti, &cfg, seed)?;
                continue;
            }
            let (from, to, count) = match t {
                TrafficSpec::TcpFile { from, to, count, .. }
                | TrafficSpec::TcpBulk { from, to, count, .. }
                | TrafficSpec::TcpRate { from, to, count, .. }
                | TrafficSpec::UdpCbr { from, to, count, .. }
                | TrafficSpec::UdpOnOff { from, to, count, .. } => (from, to, *count),
                TrafficSpec::TcpWeb { .. } => unreachable!("handled above"),
            };
            let lookup = |sel: &str, field: &str| {
                w.topo.hosts(sel).filter(|v| !v.is_empty()).ok_or_else(|| {
                    let groups: Vec<&str> = w.topo.groups.keys().map(|k| k.as_str()).collect();
                    (
                        format!("traffic[{ti}].{field}"),
                        format!("no host or group {sel:?}; groups: {}", groups.join(", ")),
                    )
                })
            };
            let (srcs, dsts) = (lookup(from, "from")?, lookup(to, "to")?);
            for k in 0..count as usize {
                let (src, dst) = (srcs[k % srcs.len()], dsts[k % dsts.len()]);
                if !w.topo.reachable(src, dst) {
                    return Err((
                        format!("traffic[{ti}]"),
                        format!("no route from {} to {}", w.topo.nodes[src as usize], w.topo.nodes[dst as usize]),
                    ));
                }
                match t {
                    TrafficSpec::TcpFile { start, port, .. }
                    | TrafficSpec::TcpBulk { start, port, .. }
                    | TrafficSpec::TcpRate { start, port, .. } => {
                        let (bytes, stop, app) = match t {
                            TrafficSpec::TcpFile { bytes: b, .. } => (
                                Some(b.0.bytes(netreturn_scenario::resolve::packet_bytes(s.tcp.segment_size))),
                                None,
                                None,
                            ),
                            TrafficSpec::TcpBulk { stop, .. } => (None, stop.map(|x| x.0), None),
                            TrafficSpec::TcpRate { stop, rate, packet, .. } => {
                                (None, stop.map(|x| x.0), Some((rate.0, *packet)))
                            }
                            _ => unreachable!(),
                        };
                        let id = w.tcp.len() as u32;
                        let key = FlowKey {
                            src: ip_of(src),
                            dst: ip_of(dst),
                            sport: 10_000 + (id % 50_000) as u16,
                            dport: *port,
                            proto: FlowKey::TCP,
                        };
                        let iss = app_rng.next_u64() as u32;
                        let iss2 = app_rng.next_u64() as u32;
                        let cfg = match t {
                            // This traffic's own congestion control.
                            TrafficSpec::TcpBulk { cc: Some(c), .. } => {
                                let mut own = s.clone();
                                own.tcp.cc = *c;
                                tcp_config(&own)
                            }
                            _ => cfg,
                        };
                        let start = draw(start, &mut app_rng);
                        w.add_tcp(TcpFlow {
                            key,
                            src,
                            dst,
                            conns: [Connection::client(&cfg, iss), Connection::server(&cfg, iss2)],
                            sched: [None, None],
                            bytes,
                            start,
                            stop,
                            started: false,
                            done_at: None,
                            packets: Default::default(),
                            app,
                            web: false,
                        });
                    }
                    TrafficSpec::TcpWeb { .. } => unreachable!("handled above"),
                    TrafficSpec::UdpCbr { rate, packet, start, stop, .. }
                    | TrafficSpec::UdpOnOff { rate, packet, start, stop, .. } => {
                        let onoff = match t {
                            TrafficSpec::UdpOnOff { on, off, .. } => Some((on.0, off.0)),
                            _ => None,
                        };
                        let id = w.udp.len() as u32;
                        let key = FlowKey {
                            src: ip_of(src),
                            dst: ip_of(dst),
                            sport: 20_000 + id as u16,
                            dport: 9,
                            proto: FlowKey::UDP,
                        };
                        let start = draw(start, &mut app_rng);
                        w.udp.push(UdpFlow {
                            key,
                            src,
                            dst,
                            rate: rate.0,
                            packet: *packet,
                            start,
                            stop: stop.map(|x| x.0),
                            schedule: match t {
                                TrafficSpec::UdpCbr { schedule, .. } => {
                                    schedule.iter().map(|(t, r)| (t.0, r.0)).collect()
                                }
                                _ => vec![],
                            },
                            onoff,
                            on_until: Time::MAX,
                            rng: Rng::derive(seed, 2_000_000 + id as u64),
                            packets: PacketCounts::default(),
                            bytes_sent: 0,
                            bytes_received: 0,
                        });
                    }
                }
            }
        }
        w.schedule_starts();
        let flows = w.tcp_total();
        for f in std::mem::take(&mut w.rec.trace_flows) {
            if f >= flows {
                return Err((
                    "run.trace_flows".into(),
                    format!("flow {f} does not exist; there are {flows} TCP flows"),
                ));
            }
            w.rec.traces.push(FlowTrace { flow: f, ..Default::default() });
        }
        if let Some(log) = &w.rec.packet_log {
            if log.flow as usize >= flows {
                return Err((
                    "log flow".into(),
                    format!("flow {} does not exist; there are {flows} TCP flows", log.flow),
                ));
            }
        }
        if let Some(n) = &s.ngwa {
            crate::ngwa::attach_routers(n, &mut w)?;
        }
        crate::xcp::attach_routers(&mut w).map_err(|m| ("topology".to_string(), m))?;
        Ok(w)
    }
}

/// Adds the transfers of `s.traffic[ti]` (a `tcp-web` entry) to `w`: a
/// source whose transfers the run makes as they arrive ([`WebSource`]),
/// from a generator derived from the seed and the entry's index. Transfer
/// `k` goes from the `k`-th host of `from` to the `k`-th of `to`, cycling.
/// Arrivals stop at the entry's `stop`, and at the run's: a transfer that
/// would arrive after the run is never made.
fn add_web_source(w: &mut World, s: &Scenario, ti: usize, cfg: &TcpConfig, seed: u64) -> Result<(), (String, String)> {
    let TrafficSpec::TcpWeb { from, to, rate, mean_size, shape, start, stop, port } = &s.traffic[ti] else {
        unreachable!("called for tcp-web entries only")
    };
    if !(*rate >= 0.0 && rate.is_finite()) {
        return Err((format!("traffic[{ti}].rate"), "new flows per second: a number >= 0".into()));
    }
    if *shape <= 1.0 {
        return Err((format!("traffic[{ti}].shape"), "a Pareto shape > 1 (the mean must exist)".into()));
    }
    let lookup = |sel: &str, field: &str| {
        w.topo
            .hosts(sel)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| (format!("traffic[{ti}].{field}"), format!("no host or group {sel:?}")))
    };
    let (srcs, dsts) = (lookup(from, "from")?, lookup(to, "to")?);
    let begin = start.map_or(Time::ZERO, |t| t.0);
    let end = stop.map_or(s.run.stop.0, |t| t.0).min(s.run.stop.0);
    let mean_bytes = mean_size.0.bytes(netreturn_scenario::resolve::packet_bytes(s.tcp.segment_size)) as f64;
    let rng = Rng::derive(seed, 3_000_000 + ti as u64);
    let source = WebSource::new(rng, *rate, (begin, end), (srcs.clone(), dsts.clone()), mean_bytes, *shape);
    // Every pair of hosts a transfer will use has a route: the pairs repeat
    // after lcm(sources, destinations) transfers.
    let (a, b) = (srcs.len() as u64, dsts.len() as u64);
    let period = a / gcd(a, b) * b;
    for k in 0..source.total().min(period) as usize {
        let (src, dst) = (srcs[k % srcs.len()], dsts[k % dsts.len()]);
        if w.topo.route(src, dst) == NO_ROUTE {
            return Err((
                format!("traffic[{ti}]"),
                format!("no route from {} to {}", w.topo.nodes[src as usize], w.topo.nodes[dst as usize]),
            ));
        }
    }
    w.add_web_source(source, *cfg, *port);
    Ok(())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
