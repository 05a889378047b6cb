//! Interfaces: forwarding a packet at a node, the egress queue (with its
//! gateway and router stage), transmission and arrival.

use super::*;

/// The destination of a packet lost on the wire behind a router stage, until
/// it reaches the far end ([`World::transmit`]).
const LOST: u32 = u32::MAX;

impl World {
    /// Hands a packet to `node`: delivers it there or forwards it.
    pub(super) fn at_node(&mut self, node: u32, pi: u32) {
        let dst = self.pool.slots[pi as usize].dst;
        if dst == node {
            self.rec.totals.delivered += 1;
            let p = &self.pool.slots[pi as usize];
            let (flow, dir) = (p.flow as usize, p.dir as usize);
            if p.udp {
                let payload = (p.size - IP_HEADER - UDP_HEADER) as u64;
                self.pool.release(pi);
                let u = &mut self.udp[flow];
                u.packets.received += 1;
                u.bytes_received += payload;
            } else {
                self.tcp[flow].packets[dir].received += 1;
                // The segment is read where it lies, not copied out.
                self.tcp_receive(pi);
            }
            return;
        }
        let out = self.topo.route(node, dst);
        debug_assert_ne!(out, NO_ROUTE);
        self.enqueue(out, pi);
    }

    pub(super) fn enqueue(&mut self, out: u32, pi: u32) {
        let now = self.now;
        let size = self.pool.slots[pi as usize].size;
        let hop = &mut self.hops[out as usize];
        if hop.passes(now, size) {
            // The path below for a plain DropTail link that is idle with its
            // queue empty, without reading the queue: nothing to drain; the
            // queue admits the packet (`Limit::admits` at an empty backlog),
            // neither marks nor draws (`Fifo::pass`), and its backlog goes
            // to the packet's size and back to 0 at this instant; the
            // packet's ECN field is not read (DropTail never marks).
            debug_assert!(self.ifaces[out as usize].queue.is_empty());
            hop.account_backlog(&mut self.ifaces[out as usize].stats, now, size as u64);
            self.transmit(out, pi, now);
            let hop = &mut self.hops[out as usize];
            hop.account_backlog(&mut self.ifaces[out as usize].stats, now, 0);
            hop.tx_bytes += size as u64;
            hop.tx_packets += 1;
            return;
        }
        let plain = hop.plain();
        if !plain && self.ifaces[out as usize].dequeue_time {
            return self.enqueue_aqm(out, pi);
        }
        self.drain(out);
        if !plain {
            if self.ifaces[out as usize].gateway.is_some() {
                self.gateway_sees_data(out, pi);
            }
            if self.ifaces[out as usize].stage_on_enqueue {
                self.stage_offered(out, pi);
            }
        }
        // RED with `ecn` may mark an ECN-capable TCP segment instead of
        // dropping it (RFC 3168 section 5); UDP sources are not ECN-capable.
        let p = &self.pool.slots[pi as usize];
        let ect = !p.udp && p.seg.ecn.is_capable();
        let (hop, iface) = (&mut self.hops[out as usize], &mut self.ifaces[out as usize]);
        let start = now.max(hop.busy_until);
        let res = if start == now {
            // An idle link: the packet leaves the queue as it enters.
            iface.queue.pass(now, size, ect, &mut iface.rng).map(|(enq, deq, m)| (enq, Some(deq), m))
        } else {
            iface
                .queue
                .enqueue(now, start, size, ect, &mut iface.rng)
                .map(|(enq, m)| (enq, None, m))
                .map_err(|(_, why, ev)| (why, ev))
        };
        let (ev, departure, marked) = match res {
            Ok(evs) => evs,
            Err((why, ev)) => {
                iface.stats.count_queue_drop(why);
                if let Some(gw) = iface.gateway_mut(plain) {
                    gw.on_queue(now, &ev);
                }
                self.drop_packet(pi, out);
                return;
            }
        };
        if marked {
            self.mark_ce(out, pi);
        }
        let (hop, iface) = (&mut self.hops[out as usize], &mut self.ifaces[out as usize]);
        if let Some(gw) = iface.gateway_mut(plain) {
            gw.on_queue(now, &ev);
        }
        hop.account_backlog(&mut iface.stats, now, ev.backlog_bytes);
        self.transmit(out, pi, start);
        let (hop, iface) = (&mut self.hops[out as usize], &mut self.ifaces[out as usize]);
        if let Some(deq) = &departure {
            hop.departed(iface, now, deq);
        }
        if !plain && iface.stage.is_some() {
            self.stage_enqueued(out, pi, departure.is_some());
        }
    }

    /// A packet accepted by a staged interface's queue: its stage sees it
    /// leave now if the link was idle, else when it reaches the head
    /// ([`World::drain_staged`]).
    #[inline(never)]
    fn stage_enqueued(&mut self, out: u32, pi: u32, departed: bool) {
        if departed {
            self.stage_call(out, pi, Some(self.now));
        } else {
            self.ifaces[out as usize].staged.push_back(pi);
        }
    }

    /// Packet `pi` is offered to interface `i`'s queue: its stage sees it
    /// (out of line: the hop of a run without such a stage, most runs, does
    /// not carry the call).
    #[inline(never)]
    fn stage_offered(&mut self, i: u32, pi: u32) {
        self.stage_call(i, pi, None);
    }

    /// Hands packet `pi` to interface `i`'s stage: offered to the queue
    /// (`departure` None) or leaving it at `departure`. A stage that changes
    /// the in-band fields' wire length changes the packet's size from the
    /// next hop on (this hop's transmission time is already fixed).
    #[inline(always)]
    pub(super) fn stage_call(&mut self, i: u32, pi: u32, departure: Option<Time>) {
        let World { ifaces, pool, tcp_keys, now, .. } = self;
        let iface = &mut ifaces[i as usize];
        let p = &mut pool.slots[pi as usize];
        match iface.stage.as_deref_mut() {
            None => {}
            // NGWA marks TCP packets as they leave the queue (seed 001
            // section 3), or, with `mark_tick`, as they arrive with the
            // queue of the last tick boundary (the kernel datapath's rule).
            Some(Stage::Ngwa { router, indexed, sampler }) => {
                let free_now = iface.capacity_bytes.saturating_sub(iface.queue.backlog().bytes);
                let (at, free) = match (sampler, departure) {
                    (None, Some(at)) => (at, free_now),
                    (None, None) => return,
                    (Some(s), Some(at)) => {
                        s.observe(at, free_now);
                        return;
                    }
                    (Some(s), None) => (*now, s.observe(*now, free_now)),
                };
                if p.udp {
                    return;
                }
                let (flow, dir, flags) = (p.flow, p.dir, p.seg.flags);
                let keys: &[FlowKey] = tcp_keys;
                let conn = TcpConn {
                    syn: flags.syn(),
                    fin: flags.fin(),
                    rst: flags.rst(),
                    key: move || key_of(keys, flow, dir),
                    index: indexed.then_some(flow),
                };
                if router.on_tcp_departure(at, conn, free, Some(&mut p.seg.inband)) == Marking::Inserted {
                    p.size += InBand::Ngwa(0).wire_len();
                }
            }
            Some(Stage::Other(stage)) => {
                let queue = QueueState {
                    backlog_bytes: iface.queue.backlog().bytes,
                    capacity_bytes: iface.capacity_bytes,
                    rate: iface.rate,
                };
                let before = p.seg.inband.wire_len();
                let meta = (!p.udp).then(|| TcpMeta {
                    key: tcp_key(tcp_keys, p),
                    syn: p.seg.flags.syn(),
                    fin: p.seg.flags.fin(),
                    rst: p.seg.flags.rst(),
                    payload_len: p.seg.len,
                });
                let mut fp = ForwardPacket { tcp: meta, size: p.size, inband: (!p.udp).then_some(&mut p.seg.inband) };
                match departure {
                    None => stage.on_enqueue(*now, &mut fp, &queue),
                    Some(at) => stage.on_dequeue(at, &mut fp, &queue),
                }
                let after = p.seg.inband.wire_len();
                p.size = p.size + after - before;
            }
        }
    }

    /// Attaches a router stage to the interface named `iface` ("R1->R2").
    pub fn attach_stage(&mut self, iface: &str, stage: Box<dyn ForwardStage>) -> Result<(), String> {
        let on_enqueue = stage.acts_on_enqueue();
        self.attach(iface, Stage::Other(stage), on_enqueue)
    }

    /// Attaches NGWA's router rule to the interface named `iface`, called
    /// directly rather than as a [`ForwardStage`] (the same rule).
    /// With `mark_tick` it marks at arrival, with the queue of the last
    /// multiple of `mark_tick` ([`MarkSampler`]).
    pub fn attach_ngwa(&mut self, iface: &str, router: NgwaRouter, mark_tick: Option<Time>) -> Result<(), String> {
        // A flow's index numbers its connection if no two flows share one:
        // known when the flows are all made by now; web transfers, made as
        // they arrive, leave the router its keys (the same marks either way
        // when the keys are distinct: docs/ngwa.md).
        let mut seen = std::collections::HashSet::with_capacity(self.tcp_keys.len());
        let indexed =
            self.web.is_empty() && self.tcp_keys.iter().all(|&k| seen.insert(netreturn_control::flows::canonical(k)));
        let i = self.topo.iface_by_name(iface).ok_or_else(|| format!("no interface {iface:?}"))?;
        let sampler = mark_tick.map(|t| MarkSampler::new(t, self.ifaces[i as usize].capacity_bytes));
        let on_enqueue = router.acts_on_enqueue() || sampler.is_some();
        self.attach(iface, Stage::Ngwa { router, indexed, sampler }, on_enqueue)
    }

    fn attach(&mut self, iface: &str, stage: Stage, on_enqueue: bool) -> Result<(), String> {
        let i = self.topo.iface_by_name(iface).ok_or_else(|| format!("no interface {iface:?}"))?;
        self.ifaces[i as usize].stage_on_enqueue = on_enqueue;
        self.ifaces[i as usize].stage = Some(Box::new(stage));
        self.refresh_plain(i);
        Ok(())
    }

    /// The stage of interface `iface`, to read its state after a run.
    pub fn stage(&self, iface: &str) -> Option<&dyn ForwardStage> {
        let i = self.topo.iface_by_name(iface)?;
        self.ifaces[i as usize].stage.as_deref().map(Stage::as_dyn)
    }

    pub(super) fn drop_packet(&mut self, pi: u32, iface: u32) {
        let p = self.pool.slots[pi as usize];
        if !p.udp && self.logging(p.flow) {
            let line = format!(
                "drop {} at {}",
                self.describe_segment(p.flow, p.dir, &p.seg),
                self.ifaces[iface as usize].name
            );
            self.log(line);
        }
        self.pool.release(pi);
        self.rec.totals.dropped += 1;
        self.counts(&p).lost += 1;
    }

    /// Serializes packet `pi` on interface `i` from `start` (when the packets
    /// ahead of it are out) and schedules its arrival at the far end.
    /// Inlined into the hop ([`World::enqueue`]), where it runs on every
    /// packet: a call there costs about 2 % of a run's instructions.
    #[inline(always)]
    pub(super) fn transmit(&mut self, i: u32, pi: u32, start: Time) {
        let hop = &mut self.hops[i as usize];
        let size = self.pool.slots[pi as usize].size;
        let done = start + hop.rate.tx_time(size as u64);
        hop.busy_until = done;
        let (plain, delay) = (hop.plain(), hop.delay);
        if !plain && self.ifaces[i as usize].pcap.is_some() {
            let p = self.pool.slots[pi as usize];
            let key = if p.udp { self.udp[p.flow as usize].key } else { tcp_key(&self.tcp_keys, &p) };
            let tcp = (!p.udp).then_some(&p.seg);
            self.ifaces[i as usize].pcap.as_mut().expect("checked").record(start, p.size, tcp, key);
        }
        if self.rec.monitor == Some(i) {
            let p = &self.pool.slots[pi as usize];
            if p.udp || !self.rec.traces.iter().any(|t| t.flow == p.flow as usize) {
                self.rec.cross_bytes += size as u64;
            }
        }
        // A plain link has no loss: `bernoulli` would draw nothing.
        let lost = !plain && {
            let iface = &mut self.ifaces[i as usize];
            iface.rng.bernoulli(iface.loss)
        };
        if lost && self.ifaces[i as usize].stage.is_none() {
            let iface = &mut self.ifaces[i as usize];
            iface.stats.loss_drops += 1;
            self.drop_packet(pi, i);
        } else {
            if lost {
                // Behind a stage, a packet lost on the wire still leaves
                // the queue at its start time and the stage sees it then;
                // it vanishes when it reaches the far end (`arrive`), so its
                // slot stays its own until then.
                self.pool.slots[pi as usize].dst = LOST;
            }
            // Departures are serialized and the delay is fixed, so arrivals
            // over one interface are scheduled in time order: a FIFO lane,
            // or the lane it shares with links of its kind when in order
            // there ([`crate::event::EventQueue::schedule_arrival`]).
            let at = done + delay;
            self.events.schedule_arrival(self.shared_lane[i as usize], i, at, pi, &mut self.pool);
        }
    }

    /// Takes out of interface `i`'s queue, at their start times, the packets
    /// whose transmission has started by now: the queue as it is at `now`.
    pub(super) fn drain(&mut self, i: u32) {
        let (hop, iface) = (&mut self.hops[i as usize], &mut self.ifaces[i as usize]);
        // Before most enqueues there is nothing to take out (the head has
        // not started yet, or the queue is empty): that check is inlined,
        // the loops are not.
        if iface.queue.front().is_some_and(|&start| start <= self.now) {
            if hop.plain() || iface.stage.is_none() {
                iface.drain_started(hop, self.now);
            } else {
                self.drain_staged(i);
            }
        }
    }

    /// [`World::drain`] for an interface with a stage: each packet leaving
    /// is handed to the stage at its start time, in order.
    #[inline(never)]
    pub(super) fn drain_staged(&mut self, i: u32) {
        let now = self.now;
        loop {
            let (hop, iface) = (&mut self.hops[i as usize], &mut self.ifaces[i as usize]);
            let Some(&start) = iface.queue.front() else { break };
            if start > now {
                break;
            }
            let (_, _, ev) = iface.queue.dequeue(start).expect("front exists");
            hop.departed(iface, start, &ev);
            let pi = iface.staged.pop_front().expect("a staged id per queued packet");
            self.stage_call(i, pi, Some(start));
        }
    }

    #[inline(always)]
    pub(super) fn arrive(&mut self, i: u32, pi: u32) {
        let hop = &self.hops[i as usize];
        let (node, reverse_gateway) = (hop.to, hop.reverse_gateway());
        if !hop.plain() && self.ifaces[i as usize].stage.is_some() {
            // The stage sees the packet leave before it arrives.
            self.drain(i);
            if self.pool.slots[pi as usize].dst == LOST {
                self.ifaces[i as usize].stats.loss_drops += 1;
                self.drop_packet(pi, i);
                return;
            }
        }
        let now = self.now;
        // A gateway on this node's interface back toward the sender sees the
        // packets flowing against its data direction: ACKs to rewrite
        // (SPEC.md section 1, rule 5).
        if reverse_gateway && !self.pool.slots[pi as usize].udp {
            self.gateway_sees_ack(Iface::reverse(i), pi, now);
        }
        self.at_node(node, pi);
    }

    /// The gateway of interface `out` sees packet `pi` offered to its queue.
    /// Out of line (as [`World::gateway_sees_ack`]): the hop of a run
    /// without gateways does not carry their code.
    #[inline(never)]
    pub(super) fn gateway_sees_data(&mut self, out: u32, pi: u32) {
        let now = self.now;
        let p = &self.pool.slots[pi as usize];
        let view = (!p.udp).then(|| self.view(p));
        let size = p.size;
        let gw = self.ifaces[out as usize].gateway.as_mut().expect("checked");
        match view {
            Some(v) => gw.on_data(now, &v),
            None => gw.on_data_other(now, size),
        }
    }

    /// The gateway of interface `back` sees TCP packet `pi` flowing against
    /// its data direction and may rewrite its window.
    #[inline(never)]
    fn gateway_sees_ack(&mut self, back: u32, pi: u32, now: Time) {
        // The controller reads the queue it watches as it is now.
        self.drain(back);
        let v = self.view(&self.pool.slots[pi as usize]);
        let iface = &mut self.ifaces[back as usize];
        if let Some(w) = iface.gateway.as_mut().and_then(|g| g.on_ack(now, &v)) {
            self.pool.slots[pi as usize].seg.window = w;
            iface.stats.acks_rewritten += 1;
        }
    }
}

impl Iface {
    /// The queue's occupancy now (after [`World::drain`] for a FIFO).
    pub fn backlog(&self) -> netreturn_control::queue::Backlog {
        match &self.aqm {
            Some(a) => a.queue.backlog(),
            None => self.queue.backlog(),
        }
    }

    /// [`World::drain`] for an interface without a stage.
    #[inline(never)]
    pub(super) fn drain_started(&mut self, hop: &mut Hop, now: Time) {
        while let Some(&start) = self.queue.front() {
            if start > now {
                break;
            }
            let (_, _, ev) = self.queue.dequeue(start).expect("front exists");
            hop.departed(self, start, &ev);
        }
    }
}

impl Hop {
    /// Closes the interval since the last change of the backlog and starts
    /// one with the backlog as it is now (`stats`: the interface's).
    pub(super) fn account_backlog(&mut self, stats: &mut IfaceStats, now: Time, backlog_bytes: u64) {
        // An empty queue or an empty interval adds +0.0, which leaves the
        // (non-negative) integrals unchanged bit for bit: skip the float
        // work. That is the common case: most links idle most of the time
        // (enqueue at an empty queue), and a packet meeting an idle link is
        // enqueued and dequeued at the same instant.
        if self.last_backlog > 0 && now > self.last_change {
            let dt = (now - self.last_change).nanos() as f64;
            let q = self.last_backlog as f64;
            stats.q_int += q * dt;
            stats.q2_int += q * q * dt;
        }
        self.last_change = now;
        self.last_backlog = backlog_bytes;
        // The peak changes only above its lower bound `max_hint`, which
        // keeps a hop at an idle link off the peak's cache line.
        if backlog_bytes > self.max_hint as u64 {
            stats.max_backlog = stats.max_backlog.max(backlog_bytes);
            self.max_hint = stats.max_backlog.min(u16::MAX as u64) as u16;
        }
    }

    /// Books a packet's leaving interface `iface`'s queue at `at` (its
    /// transmission starts).
    pub(super) fn departed(&mut self, iface: &mut Iface, at: Time, ev: &QueueEvent) {
        if let Some(gw) = iface.gateway_mut(self.plain()) {
            gw.on_queue(at, ev);
        }
        self.account_backlog(&mut iface.stats, at, ev.backlog_bytes);
        self.tx_bytes += ev.size as u64;
        self.tx_packets += 1;
    }
}
