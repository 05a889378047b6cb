//! The window-rewriting gateway: the rules of SPEC.md §1 around any
//! controller.
//!
//! The gateway sits on a router interface whose egress queue is the
//! congested buffer (SPEC.md §1 rule 5). The caller reports the TCP packets
//! offered to that queue ([`WindowGateway::on_data`]), the non-TCP ones
//! ([`WindowGateway::on_data_other`]), every change of the queue
//! ([`WindowGateway::on_queue`]), and hands over every TCP packet the router
//! forwards the other way ([`WindowGateway::on_ack`]), which returns the new
//! 16-bit window field when the window must be lowered. The caller writes it
//! and fixes the checksum (RFC 1624, `netreturn-wire`).
//!
//! What the gateway enforces, whatever the controller:
//!
//! * window scales are learned from the handshake, seen in either direction
//!   (RFC 7323 §2.2: in effect only if both SYNs carried the option; the
//!   window field of a SYN is never scaled), and a flow whose handshake was
//!   not seen is left alone unless [`GatewayConfig::assume_wscale`] is set
//!   (SPEC.md §1 rule 2; seed 003 Algorithm 1 "skip to next flow");
//! * `new = min(Wr, max(computed, floor))`, the floor being one MSS (one MTU
//!   for AWM), and nothing is written unless the window goes down (rule 1
//!   and 4);
//! * the new field is rounded *up* to the scale unit, so the floor survives
//!   the shift, and is never zero and never above the original field;
//! * SYN and SYN-ACK segments and segments without ACK pass untouched
//!   (rule 6);
//! * the flow table is bounded: FIN / RST end a flow, idle flows expire,
//!   and a full table evicts the least recently active flow, half-open ones
//!   first so that a SYN flood cannot push out established connections.

use netreturn_base::{FlowKey, InBand, Rate, Time};

use crate::controller::{Bottleneck, FlowInfo, WindowController, WindowRule};
use crate::flows::{canonical, canonical_side, side_of, Flow, FlowTable, ListId};
use crate::registry::{Controller, ControllerConfig, ControllerKind, GatewayParams};
use crate::view::{QueueEvent, QueueEventKind, TcpView};

/// Gateway settings.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayConfig {
    pub controller: ControllerConfig,
    /// `B`: capacity of the watched queue, bytes.
    pub buffer_bytes: u64,
    /// `C`: rate of the watched egress link.
    pub link_rate: Rate,
    /// Scale assumed for both sides of a flow whose handshake was not seen;
    /// `None` (the default) leaves such flows alone.
    pub assume_wscale: Option<u8>,
    /// Bound on the flow table.
    pub max_flows: usize,
    /// A flow silent this long is forgotten (at most `idle_timeout / 64`
    /// later: the table keeps recency to that granularity).
    pub idle_timeout: Time,
    /// MSS of flows whose handshake carried no MSS option.
    pub default_mss: u32,
    /// What a size in packets ("20p") of the controller's table weighs: the
    /// scenario's packet (segment + 52 B, `netreturn_scenario::resolve`) or
    /// the gateway's (1500 B); `None` counts `default_mss + 40`.
    pub packet_bytes: Option<u32>,
    /// The controller sees the queue only at multiples of this period, as
    /// the kernel datapath samples it (issue 28); `None`: at every event.
    pub tick: Option<Time>,
}

impl GatewayConfig {
    /// Defaults: no assumed scale, 65 536 flows, 300 s idle timeout (Linux
    /// conntrack's timeout for unacknowledged data, a conservative bound on
    /// a live TCP connection's silence), default MSS 536 (RFC 9293 §3.7.1,
    /// the IPv4 default when no option is sent).
    pub fn new(controller: ControllerConfig, buffer_bytes: u64, link_rate: Rate) -> GatewayConfig {
        GatewayConfig {
            controller,
            buffer_bytes,
            link_rate,
            assume_wscale: None,
            max_flows: 65_536,
            idle_timeout: Time::from_secs(300),
            default_mss: 536,
            packet_bytes: None,
            tick: None,
        }
    }

    /// The whole gateway configuration of `params` for controller `kind` on
    /// a link of `buffer_bytes` (`B`) and `link_rate` (`C`); `default_mss`
    /// for flows whose handshake carried no MSS (sizes in packets count
    /// MSS + 40).
    pub fn from_params(
        params: &GatewayParams,
        kind: ControllerKind,
        buffer_bytes: u64,
        link_rate: Rate,
        default_mss: u32,
    ) -> GatewayConfig {
        let mut cfg = GatewayConfig::new(params.config(kind), buffer_bytes, link_rate);
        cfg.default_mss = default_mss;
        cfg.assume_wscale = params.assume_wscale;
        cfg.tick = params.tick.filter(|t| *t > Time::ZERO);
        cfg
    }
}

/// Counters of what the gateway saw and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GatewayStats {
    /// TCP packets reported in the data direction.
    pub data_packets: u64,
    /// Non-TCP packets reported in the data direction.
    pub other_packets: u64,
    /// TCP packets handed over in the ACK direction.
    pub ack_dir_packets: u64,
    /// SYN and SYN-ACK segments, both directions.
    pub syns_seen: u64,
    /// Handshakes seen whole (SYN, SYN-ACK, ACK): an RTT was measured.
    pub handshakes_completed: u64,
    /// ACK-direction segments with ACK and without SYN.
    pub acks_seen: u64,
    /// Of those, segments whose window the gateway lowered.
    pub acks_rewritten: u64,
    /// Of those, segments of flows whose handshake the gateway did not see.
    pub unknown_flow_acks: u64,
    /// ACK-direction segments without the ACK flag (passed untouched).
    pub non_ack_packets: u64,
    /// Flows in the table now.
    pub flows_tracked: u64,
    /// Flows that started filling the watched queue and are still tracked.
    pub flows_active: u64,
    /// Flows ever entered into the table.
    pub flows_created: u64,
    /// Flows ended by FIN or RST.
    pub flows_ended: u64,
    /// Flows removed because the table was full.
    pub flows_evicted: u64,
    /// Flows removed after `idle_timeout` of silence.
    pub flows_expired: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Removal {
    Ended,
    Evicted,
    Expired,
}

/// The flow table keeps recency to `idle_timeout / RECENCY_STEPS` (300 s /
/// 64 = 4.7 s by default): idle flows are forgotten at most that late.
const RECENCY_STEPS: u64 = 64;

/// One flow's window as a kernel datapath applies it to the ACKs of
/// `ack_key` ([`WindowGateway::kernel_windows`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelWindow {
    /// The flow's key as its ACKs carry it (their sender first).
    pub ack_key: FlowKey,
    /// The window scale of those ACKs (RFC 7323 §2.3).
    pub shift: u8,
    /// `None`: the controller leaves the ACKs alone now.
    pub rule: Option<WindowRule>,
    /// The smallest window the rule may impose, bytes (SPEC.md §1 rule 4).
    pub floor: u64,
    /// The handshake is complete and the flow's data was seen: the
    /// datapath need report only its SYN, FIN and RST segments.
    pub steady: bool,
    /// The datapath keeps each ACK's window up to the right edge already
    /// offered ([`WindowController::KEEPS_RIGHT_EDGE`]).
    pub keep_edge: bool,
}

/// The window field an ACK carrying raw field `raw` at scale `shift` gets
/// when the controller wants `computed` bytes with `floor` (SPEC.md §1), or
/// `None` to leave it: the one arithmetic of [`WindowGateway::on_ack`] and
/// of the kernel datapath's check of its eBPF program.
pub fn lowered_field(raw: u16, shift: u32, computed: u64, floor: u64) -> Option<u16> {
    // Wr = window << wscale of the ACK's sender (RFC 7323 §2.3).
    let wr = (raw as u64) << shift;
    // new = min(Wr, max(computed, floor)) (SPEC.md §1 rules 1 and 4).
    let new = wr.min(computed.max(floor));
    if new >= wr {
        return None;
    }
    // Round up to the scale unit: the written window stays >= the floor
    // (a zero window is never created), and the cap keeps it <= Wr.
    let field = new.div_ceil(1u64 << shift).max(1);
    (field < raw as u64).then_some(field as u16)
}

/// A window-rewriting gateway around one controller. Sans-IO: every call
/// takes `now`; the gateway reads no clock.
///
/// `C` is one of the registry's controllers ([`Controller`], the default,
/// built from [`GatewayConfig::controller`]) or a controller that is not a
/// link method of its own: NGWA's receiver edge ([`crate::ngwa::NgwaEdge`],
/// configured by a scenario's `[ngwa]` table), given to
/// [`WindowGateway::with_controller`]. Either way the rules above are
/// these, once.
#[derive(Clone, Debug)]
pub struct WindowGateway<C: WindowController = Controller> {
    cfg: GatewayConfig,
    controller: C,
    table: FlowTable,
    stats: GatewayStats,
    /// No flow can be idle for `idle_timeout` before this time: `expire`
    /// looks at the table only from then on.
    next_expiry: Time,
    /// `GatewayConfig::tick`: the queue as the kernel datapath sees it.
    sampler: Option<Sampler>,
}

/// The queue sampled once per tick (`GatewayConfig::tick`): at each tick
/// boundary `k * tick` the controller gets one queue event carrying the
/// backlog of that instant (the last event before it), as the kernel
/// datapath's loop reads the qdisc's backlog, whether the queue changed or
/// not.
#[derive(Clone, Copy, Debug)]
struct Sampler {
    tick: Time,
    /// The next boundary not yet delivered.
    next: Time,
    /// The queue as of the last event.
    last: Option<QueueEvent>,
}

impl Sampler {
    /// Delivers every boundary up to `now` to `c`.
    fn catch_up<C: WindowController>(&mut self, now: Time, c: &mut C) {
        while self.next <= now {
            if let Some(ev) = self.last {
                let sample = QueueEvent { kind: QueueEventKind::Enqueue, size: 0, ..ev };
                c.on_queue(self.next, &sample);
            }
            self.next += self.tick;
        }
    }
}

impl WindowGateway<Controller> {
    pub fn new(cfg: GatewayConfig) -> WindowGateway {
        let link = Bottleneck {
            buffer_bytes: cfg.buffer_bytes,
            link_rate: cfg.link_rate,
            default_mss: cfg.default_mss,
            packet_bytes: cfg.packet_bytes,
        };
        let controller = Controller::new(&cfg.controller, link);
        WindowGateway::with_controller(controller, cfg)
    }
}

impl<C: WindowController> WindowGateway<C> {
    /// The gateway around `controller`; `cfg.controller` is not read (the
    /// flow table, scale and MSS settings are).
    pub fn with_controller(controller: C, cfg: GatewayConfig) -> WindowGateway<C> {
        let table = FlowTable::new(cfg.max_flows, Time(cfg.idle_timeout.0 / RECENCY_STEPS));
        let sampler = cfg.tick.map(|tick| Sampler { tick, next: tick, last: None });
        WindowGateway { cfg, controller, table, stats: GatewayStats::default(), next_expiry: Time::ZERO, sampler }
    }

    pub fn config(&self) -> &GatewayConfig {
        &self.cfg
    }

    pub fn controller(&self) -> &C {
        &self.controller
    }

    pub fn stats(&self) -> &GatewayStats {
        &self.stats
    }

    /// A TCP packet travelling in the data direction (about to be offered to
    /// the watched queue).
    pub fn on_data(&mut self, now: Time, seg: &TcpView) {
        self.expire(now);
        self.stats.data_packets += 1;
        if seg.flags.syn() {
            self.on_syn(now, seg);
            return;
        }
        let (key, side) = canonical_side(seg.key);
        let Some(idx) = self.table.find(&key) else {
            return;
        };
        self.touch(idx, now);
        if seg.flags.rst() {
            self.remove(now, idx, Removal::Ended);
            return;
        }
        self.complete_handshake(now, idx, side);
        let flow = self.table.get(idx);
        if seg.payload_len > 0 && flow.data_side.is_none() && flow.synchronized {
            // The flow starts filling the watched queue: it now counts as an
            // active flow for AWM's N, SAP-LAW's #TCPflows, RWM's classes.
            self.table.get_mut(idx).data_side = Some(side as u8);
            let info = self.info(idx, 0, side);
            self.controller.on_flow_start(now, &info);
            self.stats.flows_active += 1;
        }
        if seg.flags.fin() {
            // The data sender has finished: the flow no longer loads the
            // queue (SPEC.md §2.5: flows end on FIN / RST).
            self.remove(now, idx, Removal::Ended);
        }
    }

    /// A TCP segment in the data direction leaves the watched queue with
    /// in-band fields `ib` (the real gateway reads them from the IPv4
    /// options). Shown to the controller only for a flow the table tracks
    /// whose data crosses the queue in this direction, so the controller's
    /// per-flow state ends with the flow (`on_flow_end`).
    pub fn on_inband(&mut self, now: Time, seg: &TcpView, ib: &InBand) {
        if !C::READS_INBAND || seg.flags.syn() {
            return;
        }
        let (key, side) = canonical_side(seg.key);
        let Some(idx) = self.table.find(&key) else { return };
        if self.table.get(idx).data_side == Some(side as u8) {
            self.controller.on_inband(now, seg, ib);
        }
    }

    /// A non-TCP packet in the data direction (SAP-LAW measures the UDP
    /// rate).
    pub fn on_data_other(&mut self, now: Time, bytes: u32) {
        self.stats.other_packets += 1;
        self.controller.on_data_other(now, bytes);
    }

    /// The watched queue changed (enqueue, dequeue, drop).
    pub fn on_queue(&mut self, now: Time, ev: &QueueEvent) {
        match &mut self.sampler {
            None => self.controller.on_queue(now, ev),
            Some(s) => {
                // Boundaries before this event saw the queue as it was.
                s.catch_up(now.saturating_sub(Time(1)), &mut self.controller);
                s.last = Some(*ev);
            }
        }
    }

    /// A TCP packet forwarded the other way (ACK direction). Returns the new
    /// raw 16-bit window field iff the window must be lowered; `None` leaves
    /// the packet untouched.
    pub fn on_ack(&mut self, now: Time, seg: &TcpView) -> Option<u16> {
        self.expire(now);
        self.stats.ack_dir_packets += 1;
        if seg.flags.syn() {
            // SYN / SYN-ACK: learn from it, never rewrite it (its window is
            // unscaled, RFC 7323 §2.2).
            self.on_syn(now, seg);
            return None;
        }
        let (key, side) = canonical_side(seg.key);
        let found = self.table.find(&key);
        if !seg.flags.ack() {
            self.stats.non_ack_packets += 1;
            if let (Some(idx), true) = (found, seg.flags.rst()) {
                self.remove(now, idx, Removal::Ended);
            }
            return None;
        }
        self.stats.acks_seen += 1;
        let idx = match (found, self.cfg.assume_wscale) {
            (Some(idx), _) => idx,
            (None, Some(scale)) if !seg.flags.rst() && !seg.flags.fin() => self.adopt(now, seg.key, scale)?,
            (None, _) => {
                self.stats.unknown_flow_acks += 1;
                return None;
            }
        };
        self.touch(idx, now);
        if !self.table.get(idx).synchronized {
            // Half-open: the SYN-ACK was not seen, the scales are unknown.
            self.stats.unknown_flow_acks += 1;
            return None;
        }
        if seg.flags.rst() {
            self.remove(now, idx, Removal::Ended);
            return None;
        }
        self.complete_handshake(now, idx, side);
        let field = self.rewrite(now, idx, side, seg);
        if seg.flags.fin() {
            let flow = self.table.get_mut(idx);
            flow.fin[side] = true;
            if flow.fin[0] && flow.fin[1] {
                self.remove(now, idx, Removal::Ended);
            }
        }
        field
    }

    /// The window of every flow whose ACKs may be rewritten now, as a
    /// kernel datapath applies it without calling back (issue 28): for each
    /// synchronized flow for which `acker(canonical key)` names the side
    /// whose ACKs cross the gateway, its key as that side sends it, the
    /// scale of its windows, the controller's [`WindowRule`] (`None`: leave
    /// the ACKs alone now) and floor. The kernel then applies SPEC.md §1 to
    /// each ACK exactly as [`WindowGateway::on_ack`] does
    /// (`min(Wr, max(rule(Wr), floor))`, rounded up to the scale unit, never
    /// raised). Flows idle past the timeout are forgotten first.
    pub fn kernel_windows(
        &mut self,
        now: Time,
        mut acker: impl FnMut(&FlowKey) -> Option<usize>,
        out: &mut Vec<KernelWindow>,
    ) {
        self.expire(now);
        out.clear();
        let ids: Vec<(u32, usize)> = self
            .table
            .iter()
            .filter(|(_, f)| f.synchronized)
            .filter_map(|(i, f)| acker(&f.key).map(|side| (i, side)))
            .collect();
        for (idx, side) in ids {
            let info = self.info(idx, 0, 1 - side);
            let rule = self.controller.rule(now, &info);
            let flow = self.table.get(idx);
            out.push(KernelWindow {
                ack_key: flow.key_from(side),
                shift: flow.shift(side) as u8,
                rule,
                floor: self.controller.floor(&info),
                steady: flow.established && flow.data_side.is_some(),
                keep_edge: C::KEEPS_RIGHT_EDGE,
            });
        }
    }

    /// Whether the table holds the flow of `key` (either direction).
    pub fn tracks(&self, key: &FlowKey) -> bool {
        self.table.find(&canonical(*key)).is_some()
    }

    /// Flow `key` (either direction) carried packets at `at`, seen by a
    /// datapath that does not report each packet (the kernel's): it stays
    /// off the idle timeout.
    pub fn saw_flow(&mut self, at: Time, key: &FlowKey) {
        if let Some(idx) = self.table.find(&canonical(*key)) {
            self.touch(idx, at);
        }
    }

    /// The window rule of SPEC.md §1 around the controller's answer.
    fn rewrite(&mut self, now: Time, idx: u32, side: usize, seg: &TcpView) -> Option<u16> {
        if let Some(s) = &mut self.sampler {
            s.catch_up(now, &mut self.controller);
        }
        let shift = self.table.get(idx).shift(side);
        // Wr = window << wscale of the ACK's sender (RFC 7323 §2.3).
        let wr = (seg.window as u64) << shift;
        let info = FlowInfo { ack: seg.ack, ..self.info(idx, wr, 1 - side) };
        let computed = self.controller.window(now, &info)?;
        let field = lowered_field(seg.window, shift, computed, self.controller.floor(&info))?;
        self.stats.acks_rewritten += 1;
        Some(field)
    }

    /// What the controller is told of flow `idx`; `data_side` is the side
    /// whose data crosses the watched queue.
    fn info(&self, idx: u32, wr: u64, data_side: usize) -> FlowInfo {
        let f = self.table.get(idx);
        FlowInfo {
            key: f.key_from(data_side),
            rtt: f.rtt,
            mss: f.mss(self.cfg.default_mss),
            class: f.class,
            wr,
            ack: 0,
        }
    }

    /// SYN or SYN-ACK, in either direction.
    fn on_syn(&mut self, now: Time, seg: &TcpView) {
        self.stats.syns_seen += 1;
        let (key, side) = canonical_side(seg.key);
        let found = self.table.find(&key);
        if seg.flags.ack() {
            // SYN-ACK: the server's options; the flow's scales are now known.
            let Some(idx) = found else { return };
            let f = self.table.get_mut(idx);
            if f.client as usize == side || f.established {
                return;
            }
            f.wscale[side] = seg.wscale;
            f.mss[side] = seg.mss;
            f.synchronized = true;
            self.table.touch(idx, now, ListId::Synchronized);
            return;
        }
        if seg.flags.rst() {
            return;
        }
        let idx = match found {
            Some(idx) if !self.table.get(idx).established && self.table.get(idx).client as usize == side => {
                // A retransmitted SYN: the RTT is measured from the last one.
                let f = self.table.get_mut(idx);
                f.syn_at = now;
                self.touch(idx, now);
                idx
            }
            Some(idx) if !self.table.get(idx).established => {
                // Simultaneous open: keep the first SYN's roles.
                self.touch(idx, now);
                return;
            }
            other => {
                if let Some(old) = other {
                    // A new connection on the 5-tuple of an old one.
                    self.remove(now, old, Removal::Ended);
                }
                if !self.make_room(now) {
                    return;
                }
                let class = self.controller.classify(&key);
                self.stats.flows_created += 1;
                self.table.insert(Flow::new(key, side as u8, now, class), ListId::HalfOpen)
            }
        };
        let f = self.table.get_mut(idx);
        f.wscale[side] = seg.wscale;
        f.mss[side] = seg.mss;
        self.stats.flows_tracked = self.table.len() as u64;
    }

    /// The first non-SYN segment of the client after the SYN-ACK completes
    /// the handshake: RTT = SYN -> SYN-ACK -> ACK at the gateway, the sum of
    /// both sides' round trips (seed 003 §III).
    fn complete_handshake(&mut self, now: Time, idx: u32, side: usize) {
        let f = self.table.get_mut(idx);
        if f.synchronized && !f.established && f.client as usize == side {
            f.established = true;
            f.rtt = Some(now.saturating_sub(f.syn_at));
            self.stats.handshakes_completed += 1;
        }
    }

    /// Picks up a flow whose handshake was not seen, with an assumed scale
    /// on both sides (`GatewayConfig::assume_wscale`).
    fn adopt(&mut self, now: Time, key: FlowKey, scale: u8) -> Option<u32> {
        if !self.make_room(now) {
            return None;
        }
        let ckey = canonical(key);
        let class = self.controller.classify(&ckey);
        let mut f = Flow::new(ckey, side_of(key.reversed()) as u8, now, class);
        f.wscale = [Some(scale); 2];
        f.synchronized = true;
        f.established = true;
        self.stats.flows_created += 1;
        let idx = self.table.insert(f, ListId::Synchronized);
        self.stats.flows_tracked = self.table.len() as u64;
        Some(idx)
    }

    fn touch(&mut self, idx: u32, now: Time) {
        let list = if self.table.get(idx).synchronized { ListId::Synchronized } else { ListId::HalfOpen };
        self.table.touch(idx, now, list);
    }

    /// Frees one slot if the table is full: the least recently active
    /// half-open flow, else the least recently active flow. False if the
    /// table holds no flow at all (`max_flows == 0`).
    fn make_room(&mut self, now: Time) -> bool {
        while self.table.len() >= self.cfg.max_flows {
            let victim = self.table.oldest(ListId::HalfOpen).or_else(|| self.table.oldest(ListId::Synchronized));
            match victim {
                Some(idx) => self.remove(now, idx, Removal::Evicted),
                None => return false,
            }
        }
        true
    }

    /// Forgets the flows silent for `idle_timeout` (to within the table's
    /// recency granularity, `idle_timeout / RECENCY_STEPS`). The lists are in
    /// recency order, so only their tails are looked at, and only once the
    /// idlest tail can have expired: one comparison on most packets.
    #[inline]
    fn expire(&mut self, now: Time) {
        if now >= self.next_expiry {
            self.expire_now(now);
        }
    }

    fn expire_now(&mut self, now: Time) {
        let mut next = now + self.cfg.idle_timeout;
        for list in [ListId::HalfOpen, ListId::Synchronized] {
            while let Some(idx) = self.table.oldest(list) {
                let deadline = self.table.get(idx).last_seen + self.cfg.idle_timeout;
                if deadline > now {
                    next = next.min(deadline);
                    break;
                }
                self.remove(now, idx, Removal::Expired);
            }
        }
        self.next_expiry = next;
    }

    fn remove(&mut self, now: Time, idx: u32, why: Removal) {
        if let Some(side) = self.table.get(idx).data_side {
            let info = self.info(idx, 0, side as usize);
            self.controller.on_flow_end(now, &info);
            self.stats.flows_active -= 1;
        }
        self.table.remove(idx);
        self.stats.flows_tracked = self.table.len() as u64;
        match why {
            Removal::Ended => self.stats.flows_ended += 1,
            Removal::Evicted => self.stats.flows_evicted += 1,
            Removal::Expired => self.stats.flows_expired += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::awm::AwmConfig;
    use crate::ewt::EwtConfig;
    use crate::rwm::RwmConfig;
    use crate::view::QueueEventKind;
    use netreturn_base::TcpFlags;

    const SYN: TcpFlags = TcpFlags::SYN;
    const ACK: TcpFlags = TcpFlags::ACK;

    fn view(key: FlowKey, flags: TcpFlags, window: u16, wscale: Option<u8>, payload_len: u32) -> TcpView {
        let mss = flags.syn().then_some(1460);
        TcpView { key, flags, seq: 0, ack: 0, window, wscale, mss, payload_len }
    }

    fn key(i: u32) -> FlowKey {
        FlowKey { src: 0x0a00_0000 + i, dst: 0x0b00_0001, sport: 10_000 + i as u16, dport: 80, proto: FlowKey::TCP }
    }

    fn full_queue(b: u64) -> QueueEvent {
        QueueEvent { kind: QueueEventKind::Enqueue, size: 1500, backlog_bytes: b, backlog_packets: 1 }
    }

    /// EWT with the queue 90 % full: every known ACK is lowered to 10 %.
    fn ewt_gateway() -> WindowGateway {
        let cfg = GatewayConfig::new(
            ControllerConfig::Ewt(EwtConfig { start_threshold: Some(netreturn_base::Size::Bytes(0)) }),
            100_000,
            Rate::mbps(10),
        );
        let mut gw = WindowGateway::new(cfg);
        gw.on_queue(Time::ZERO, &full_queue(90_000));
        gw
    }

    /// Handshake with the SYN in the data direction (EWT dumbbell).
    fn open_upload(gw: &mut WindowGateway, t: Time, k: FlowKey, ws: Option<u8>, ws_server: Option<u8>) {
        gw.on_data(t, &view(k, SYN, 65535, ws, 0));
        gw.on_ack(t + Time::from_millis(40), &view(k.reversed(), SYN | ACK, 65535, ws_server, 0));
        gw.on_data(t + Time::from_millis(50), &view(k, ACK, 1000, None, 0));
    }

    #[test]
    fn with_a_tick_the_controller_sees_the_queue_only_at_the_tick_boundaries() {
        // EWT acting from U > 0; the queue fills at 0.3 ms and empties at 1.5 ms.
        let mk = |tick: Option<Time>| {
            let mut cfg = GatewayConfig::new(
                ControllerConfig::Ewt(EwtConfig { start_threshold: Some(netreturn_base::Size::Bytes(0)) }),
                100_000,
                Rate::mbps(10),
            );
            cfg.tick = tick;
            let mut gw = WindowGateway::new(cfg);
            open_upload(&mut gw, Time::ZERO, key(1), None, None);
            gw
        };
        let ack = |gw: &mut WindowGateway, us: u64| {
            gw.on_ack(Time::from_micros(us), &view(key(1).reversed(), ACK, 60_000, None, 0))
        };
        for tick in [None, Some(Time::from_millis(1))] {
            let mut gw = mk(tick);
            let base = Time::from_millis(50);
            gw.on_queue(base + Time::from_micros(300), &full_queue(90_000));
            let before_tick = ack(&mut gw, 50_700);
            let after_tick = ack(&mut gw, 51_200);
            gw.on_queue(base + Time::from_micros(1500), &full_queue(0));
            let after_empty = ack(&mut gw, 52_100);
            match tick {
                // Every event: lowered at once, back at once.
                None => assert_eq!((before_tick, after_tick, after_empty), (Some(6_000), Some(6_000), None)),
                // The 51 ms boundary carries 90 kB, the 52 ms one the empty queue.
                Some(_) => assert_eq!((before_tick, after_tick, after_empty), (None, Some(6_000), None)),
            }
        }
    }

    #[test]
    fn a_flow_whose_handshake_was_not_seen_is_left_alone_and_counted() {
        let mut gw = ewt_gateway();
        assert_eq!(gw.on_ack(Time::ZERO, &view(key(1).reversed(), ACK, 60_000, None, 0)), None);
        assert_eq!(gw.stats().unknown_flow_acks, 1);
        assert_eq!(gw.stats().flows_tracked, 0);
    }

    #[test]
    fn an_assumed_scale_lets_the_gateway_rewrite_mid_stream_flows() {
        let mut cfg = GatewayConfig::new(
            ControllerConfig::Ewt(EwtConfig { start_threshold: Some(netreturn_base::Size::Bytes(0)) }),
            100_000,
            Rate::mbps(10),
        );
        cfg.assume_wscale = Some(2);
        let mut gw = WindowGateway::new(cfg);
        gw.on_queue(Time::ZERO, &full_queue(90_000));
        // Wr = 40000 << 2 = 160 kB; EWT: 16 kB -> field 4000.
        assert_eq!(gw.on_ack(Time::ZERO, &view(key(1).reversed(), ACK, 40_000, None, 0)), Some(4_000));
        assert_eq!(gw.stats().flows_tracked, 1);
    }

    #[test]
    fn the_scale_of_the_ack_sender_is_applied_and_only_when_both_sides_offered_one() {
        let mut gw = ewt_gateway();
        // Client (data sender) scale 2, server (ACK sender) scale 7.
        open_upload(&mut gw, Time::ZERO, key(1), Some(2), Some(7));
        // Wr = 1000 << 7 = 128000; EWT 10 % = 12800 = 100 << 7.
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(key(1).reversed(), ACK, 1000, None, 0)), Some(100));
        // Only the server offered a scale: no scaling (RFC 7323 §2.2).
        open_upload(&mut gw, Time::ZERO, key(2), None, Some(7));
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(key(2).reversed(), ACK, 50_000, None, 0)), Some(5_000));
    }

    #[test]
    fn a_download_handshake_seen_from_the_ack_side_measures_the_rtt() {
        // RWM (seed 003 Fig. 2): the client behind the gateway sends its SYN
        // in the ACK direction; the SYN-ACK comes back through the data
        // direction; the client's ACK goes out again.
        let cfg = GatewayConfig::new(ControllerConfig::Rwm(RwmConfig::default()), 1 << 20, Rate::mbps(100));
        let mut gw = WindowGateway::new(cfg);
        let server = FlowKey { src: 0x0b00_0001, dst: 0x0a00_0001, sport: 443, dport: 40_000, proto: FlowKey::TCP };
        let client = server.reversed();
        assert_eq!(gw.on_ack(Time::ZERO, &view(client, SYN, 65535, Some(7), 0)), None);
        gw.on_data(Time::from_millis(18), &view(server, SYN | ACK, 65535, Some(9), 0));
        gw.on_ack(Time::from_millis(20), &view(client, ACK, 16_000, None, 100));
        assert_eq!(gw.stats().handshakes_completed, 1);
        gw.on_data(Time::from_millis(40), &view(server, ACK, 500, None, 1460));
        assert_eq!(gw.stats().flows_active, 1);
        // BDP = 100 Mb/s * 20 ms = 250 kB = 1953.125 << 7 -> 1954.
        let field = gw.on_ack(Time::from_millis(41), &view(client, ACK, 16_000, None, 0));
        assert_eq!(field, Some(1954));
    }

    #[test]
    fn syn_and_non_ack_segments_are_never_rewritten() {
        let mut gw = ewt_gateway();
        open_upload(&mut gw, Time::ZERO, key(1), Some(7), Some(7));
        let k = key(1).reversed();
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(k, SYN | ACK, 65535, Some(7), 0)), None);
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(k, TcpFlags::PSH, 65535, None, 10)), None);
        assert_eq!(gw.stats().non_ack_packets, 1);
        assert!(gw.on_ack(Time::from_millis(60), &view(k, ACK, 65535, None, 0)).is_some());
    }

    #[test]
    fn a_window_already_below_the_floor_is_left_as_it_is() {
        let mut gw = ewt_gateway();
        open_upload(&mut gw, Time::ZERO, key(1), None, None);
        // MSS 1460: EWT asks 10 % of 2000 = 200, floored to 1460.
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(key(1).reversed(), ACK, 2_000, None, 0)), Some(1460));
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(key(1).reversed(), ACK, 1_000, None, 0)), None);
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(key(1).reversed(), ACK, 0, None, 0)), None);
    }

    #[test]
    fn fin_from_the_data_sender_and_rst_end_a_flow() {
        let mut gw = ewt_gateway();
        open_upload(&mut gw, Time::ZERO, key(1), Some(7), Some(7));
        open_upload(&mut gw, Time::ZERO, key(2), Some(7), Some(7));
        gw.on_data(Time::from_millis(60), &view(key(1), ACK | TcpFlags::FIN, 100, None, 0));
        gw.on_ack(Time::from_millis(60), &view(key(2).reversed(), ACK | TcpFlags::RST, 0, None, 0));
        assert_eq!(gw.stats().flows_ended, 2);
        assert_eq!(gw.stats().flows_tracked, 0);
    }

    #[test]
    fn idle_flows_expire_after_the_timeout() {
        let mut gw = ewt_gateway();
        open_upload(&mut gw, Time::ZERO, key(1), Some(7), Some(7));
        open_upload(&mut gw, Time::from_secs(200), key(2), Some(7), Some(7));
        gw.on_data_other(Time::from_secs(301), 100);
        gw.on_data(Time::from_secs(301), &view(key(2), ACK, 100, None, 0));
        assert_eq!(gw.stats().flows_expired, 1);
        assert_eq!(gw.stats().flows_tracked, 1);
    }

    #[test]
    fn a_syn_flood_evicts_half_open_flows_but_not_established_ones() {
        let mut cfg = GatewayConfig::new(
            ControllerConfig::Ewt(EwtConfig { start_threshold: Some(netreturn_base::Size::Bytes(0)) }),
            100_000,
            Rate::mbps(10),
        );
        cfg.max_flows = 16;
        let mut gw = WindowGateway::new(cfg);
        gw.on_queue(Time::ZERO, &full_queue(90_000));
        for i in 0..8 {
            open_upload(&mut gw, Time::ZERO, key(i), Some(7), Some(7));
        }
        for i in 100..10_000 {
            gw.on_data(Time::from_secs(1), &view(key(i), SYN, 65535, Some(7), 0));
        }
        assert_eq!(gw.stats().flows_tracked, 16);
        assert_eq!(gw.stats().flows_evicted, 10_000 - 100 - 8);
        for i in 0..8 {
            assert!(gw.on_ack(Time::from_secs(1), &view(key(i).reversed(), ACK, 1000, None, 0)).is_some());
        }
    }

    #[test]
    fn awm_floors_at_one_mtu_through_the_gateway() {
        let cfg = GatewayConfig::new(
            ControllerConfig::Awm(AwmConfig {
                initial_swnd: Some(netreturn_base::Size::Bytes(1)),
                ..AwmConfig::default()
            }),
            100_000,
            Rate::mbps(10),
        );
        let mut gw = WindowGateway::new(cfg);
        open_upload(&mut gw, Time::ZERO, key(1), None, None);
        // swnd is floored at MTU = MSS + 40 = 1500 (seed 002 eq. 1).
        assert_eq!(gw.on_ack(Time::from_millis(60), &view(key(1).reversed(), ACK, 60_000, None, 0)), Some(1500));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        #[derive(Clone, Debug)]
        enum Op {
            Wait(u64),
            Queue(u64),
            Udp(u32),
            Syn { flow: u8, data_dir: bool, ws: Option<u8> },
            SynAck { flow: u8, data_dir: bool, ws: Option<u8> },
            Data { flow: u8, fwd: bool, flags: u8, payload: u32 },
            Ack { flow: u8, fwd: bool, flags: u8, window: u16 },
        }

        fn op() -> impl Strategy<Value = Op> {
            let ws = prop::option::of(0u8..16);
            prop_oneof![
                (0u64..5_000_000_000).prop_map(Op::Wait),
                (0u64..120_000).prop_map(Op::Queue),
                (1u32..1500).prop_map(Op::Udp),
                (0u8..8, any::<bool>(), ws.clone()).prop_map(|(flow, data_dir, ws)| Op::Syn { flow, data_dir, ws }),
                (0u8..8, any::<bool>(), ws).prop_map(|(flow, data_dir, ws)| Op::SynAck { flow, data_dir, ws }),
                (0u8..8, any::<bool>(), any::<u8>(), 0u32..2000).prop_map(|(flow, fwd, flags, payload)| Op::Data {
                    flow,
                    fwd,
                    flags,
                    payload
                }),
                (0u8..8, any::<bool>(), any::<u8>(), any::<u16>()).prop_map(|(flow, fwd, flags, window)| Op::Ack {
                    flow,
                    fwd,
                    flags,
                    window
                }),
            ]
        }

        /// Every controller of the registry at its defaults (a new one is
        /// covered without touching this test), plus variants.
        fn controller() -> impl Strategy<Value = ControllerConfig> {
            let variants = [
                ControllerConfig::Awm(AwmConfig {
                    n_estimator: crate::awm::NEstimator::Adaptive,
                    ..AwmConfig::default()
                }),
                ControllerConfig::Rwm(RwmConfig { delta: -0.1, ..RwmConfig::default() }),
            ];
            let all: Vec<ControllerConfig> =
                crate::ControllerKind::ALL.iter().map(|k| k.default_config()).chain(variants).collect();
            prop::sample::select(all)
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

            /// SPEC.md §1 rules 1, 2, 4 and 6 and the table bound, after
            /// every step of a random sequence of events.
            #[test]
            fn the_gateway_rules_hold_for_any_sequence_of_events(
                ctl in controller(),
                assume in prop::option::of(0u8..15),
                max_flows in 0usize..12,
                ops in prop::collection::vec(op(), 1..300),
            ) {
                let mut cfg = GatewayConfig::new(ctl.clone(), 97_000, Rate::mbps(4));
                cfg.assume_wscale = assume;
                cfg.max_flows = max_flows;
                cfg.idle_timeout = Time::from_secs(20);
                cfg.default_mss = 1000;
                let mut gw = WindowGateway::new(cfg);
                let floor_extra = if matches!(ctl, ControllerConfig::Awm(_)) { 40 } else { 0 };
                let mut now = Time::ZERO;
                // Flows for which the model sent a SYN and a SYN-ACK.
                let mut handshaken = [false; 24];
                // The largest shift any handshake of a flow offered.
                let mut max_shift = [0u32; 24];
                for op in ops {
                    match op {
                        Op::Wait(ns) => now += Time(ns),
                        Op::Queue(b) => gw.on_queue(now, &full_queue(b)),
                        Op::Udp(bytes) => gw.on_data_other(now, bytes),
                        Op::Syn { flow, data_dir, ws } | Op::SynAck { flow, data_dir, ws } => {
                            let is_ack = matches!(op, Op::SynAck { .. });
                            let flags = if is_ack { SYN | ACK } else { SYN };
                            let k = if is_ack { key(flow as u32).reversed() } else { key(flow as u32) };
                            if let Some(s) = ws { max_shift[flow as usize] = max_shift[flow as usize].max(s.min(14) as u32); }
                            if is_ack { handshaken[flow as usize] = true; }
                            let v = view(k, flags, 65535, ws, 0);
                            if data_dir {
                                gw.on_data(now, &v);
                            } else {
                                prop_assert_eq!(gw.on_ack(now, &v), None, "SYN rewritten");
                            }
                        }
                        Op::Data { flow, fwd, flags, payload } => {
                            let k = if fwd { key(flow as u32) } else { key(flow as u32).reversed() };
                            gw.on_data(now, &view(k, TcpFlags(flags & !TcpFlags::SYN.0), 1000, None, payload));
                        }
                        Op::Ack { flow, fwd, flags, window } => {
                            let k = if fwd { key(flow as u32).reversed() } else { key(flow as u32) };
                            let flags = TcpFlags(flags);
                            if flags.syn() && flags.ack() {
                                // A random SYN-ACK is a handshake step too.
                                handshaken[flow as usize] = true;
                            }
                            // Shift and MSS as the gateway knows them before
                            // this ACK (which may end the flow).
                            let (s, mss) = gw_flow(&gw, k);
                            let out = gw.on_ack(now, &view(k, flags, window, None, 0));
                            // A flow adopted by this ACK under assume_wscale.
                            let (s, mss) = if gw.table.find(&canonical(k)).is_some() { gw_flow(&gw, k) } else { (s, mss) };
                            if let Some(field) = out {
                                prop_assert!(flags.ack() && !flags.syn() && !flags.rst(), "non-ACK rewritten: {:?}", flags);
                                prop_assert!(field < window, "raised or unchanged: {} -> {}", window, field);
                                prop_assert!(field >= 1, "zero window created");
                                prop_assert!(assume.is_some() || handshaken[flow as usize], "unknown flow rewritten");
                                // Floor: the written window, in bytes, is at
                                // least min(Wr, floor) (SPEC.md §1 rule 4).
                                let floor = mss + floor_extra;
                                prop_assert!(((field as u64) << s) >= ((window as u64) << s).min(floor), "below floor: {} -> {} (shift {})", window, field, s);
                            }
                        }
                    }
                    prop_assert!(gw.stats().flows_tracked as usize <= max_flows);
                }
            }
        }

        /// The shift the gateway applies to ACKs sent with key `k`, and the
        /// flow's MSS (a flow removed by this very ACK had its MSS from the
        /// handshake; the smaller of 1460 and the default is used then).
        fn gw_flow(gw: &WindowGateway, k: FlowKey) -> (u32, u64) {
            match gw.table.find(&canonical(k)) {
                Some(idx) => (gw.table.get(idx).shift(side_of(k)), gw.table.get(idx).mss(1000) as u64),
                None => (0, 1000),
            }
        }
    }
}
