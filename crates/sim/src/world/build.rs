//! Building a world from a scenario: interfaces, queues, gateways,
//! applications, and the TCP settings every endpoint shares.

use super::*;

pub use netreturn_scenario::resolve::tcp_config;

impl World {
    /// Adds one finite TCP transfer (used by traffic generators outside
    /// this file: [`crate::web`]).
    pub(crate) fn push_transfer(
        &mut self,
        cfg: &TcpConfig,
        src: u32,
        dst: u32,
        bytes: u64,
        start: Time,
        port: u16,
        iss: (u32, u32),
        web: bool,
    ) {
        let id = self.tcp.len() as u32;
        let key = FlowKey {
            src: ip_of(src),
            dst: ip_of(dst),
            sport: 10_000 + (id % 50_000) as u16,
            dport: port,
            proto: FlowKey::TCP,
        };
        self.add_tcp(TcpFlow {
            key,
            src,
            dst,
            conns: [Connection::client(cfg, iss.0), Connection::server(cfg, iss.1)],
            sched: [None, None],
            bytes: Some(bytes),
            start,
            stop: None,
            started: false,
            done_at: None,
            packets: Default::default(),
            app: None,
            web,
        });
        self.finite_left += 1;
    }

    /// Adds a TCP flow, its key beside it in the compact key table.
    fn add_tcp(&mut self, f: TcpFlow) {
        self.tcp_keys.push(f.key);
        self.tcp.push(f);
    }

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
            let capacity_bytes = f.buffer_bytes;
            let gateway = f.gateway.map(|cfg| Box::new(WindowGateway::new(cfg)));
            ifaces.push(Iface {
                name: f.name.clone(),
                rate: f.rate,
                delay: f.delay,
                loss: f.loss,
                to: f.to,
                queue: Fifo::new(discipline),
                capacity_bytes,
                busy_until: Time::ZERO,
                gateway,
                stage: None,
                stage_on_enqueue: false,
                dequeue_time: aqm.is_some(),
                aqm: aqm.map(|q| Box::new(super::aqm::AqmLink::new(q))),
                reverse_gateway: false,
                staged: Default::default(),
                rng: Rng::derive(seed, 1_000_000 + i as u64),
                stats: IfaceStats::default(),
                pcap: None,
            });
        }
        for i in 0..ifaces.len() as u32 {
            ifaces[i as usize].reverse_gateway = ifaces[Iface::reverse(i) as usize].gateway.is_some();
        }
        for name in &s.run.pcap {
            let i = topo.iface_by_name(name).ok_or_else(|| {
                ("run.pcap".to_string(), format!("no interface {name:?}; interfaces look like \"R1->R2\""))
            })?;
            ifaces[i as usize].pcap = Some(Box::new(crate::pcap::Pcap::new()));
        }
        rec.monitor = resolved.monitored;

        let cfg = resolved.tcp;
        let mut w = World {
            now: Time::ZERO,
            ifaces,
            tcp: vec![],
            tcp_keys: vec![],
            udp: vec![],
            shared_lane: vec![],
            events: EventQueue::new(),
            pool: Pool::default(),
            out: Vec::with_capacity(64),
            finite_left: 0,
            has_finite: false,
            stop: s.run.stop.0,
            rec,
            first_start: Time::MAX,
            warmup: s.run.warmup.map(|w| w.0).unwrap_or(Time::ZERO),
            topo,
        };

        let mut app_rng = Rng::derive(seed, 7);
        for (ti, t) in s.traffic.iter().enumerate() {
            if let TrafficSpec::TcpWeb { .. } = t {
                crate::web::add_web_flows(&mut w, s, ti, &cfg, seed)?;
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
                        if bytes.is_some() {
                            w.finite_left += 1;
                        }
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
        w.has_finite = w.finite_left > 0;
        let ntcp = w.tcp.len() as u32;
        let starts: Vec<(Time, Event)> = (w.tcp.iter().map(|f| f.start))
            .chain(w.udp.iter().map(|u| u.start))
            .enumerate()
            .map(|(a, t)| (t, Event::Start(a as u32)))
            .collect();
        debug_assert!(starts.len() == ntcp as usize + w.udp.len());
        w.first_start = starts.iter().map(|&(t, _)| t).min().unwrap_or(Time::MAX);
        let lane = w.start_lane();
        w.events.schedule_all_in_lane(lane, starts);
        w.shared_lane = World::shared_lanes(&w.topo, lane + 1);
        for f in std::mem::take(&mut w.rec.trace_flows) {
            if f >= w.tcp.len() {
                return Err((
                    "run.trace_flows".into(),
                    format!("flow {f} does not exist; there are {} TCP flows", w.tcp.len()),
                ));
            }
            w.rec.traces.push(FlowTrace { flow: f, ..Default::default() });
        }
        if let Some(log) = &w.rec.packet_log {
            if log.flow as usize >= w.tcp.len() {
                return Err((
                    "log flow".into(),
                    format!("flow {} does not exist; there are {} TCP flows", log.flow, w.tcp.len()),
                ));
            }
        }
        if w.first_start == Time::MAX {
            w.first_start = Time::ZERO;
        }
        if let Some(n) = &s.ngwa {
            crate::ngwa::attach_routers(n, &mut w)?;
        }
        w.events.schedule(Time::ZERO, Event::Sample);
        crate::xcp::attach_routers(&mut w).map_err(|m| ("topology".to_string(), m))?;
        Ok(w)
    }
}
