//! Resolution: a loaded [`Scenario`] becomes explicit, per-direction link
//! configs and one endpoint config, in bytes, nanoseconds and bits per
//! second. Every default and every rule that turns what a file says into
//! what runs is applied here, once:
//!
//! - a link's reverse direction (DropTail with the forward buffer, unless
//!   `reverse = {...}`), and its loss (`loss_direction`): [`crate::topology`];
//! - what "1p" weighs: [`packet_bytes`];
//! - the queue discipline under a window controller (DropTail) and the
//!   controller's whole configuration (`B` = this direction's buffer, `C` =
//!   its rate, the default MSS = the scenario's segment size);
//! - the TCP settings every endpoint shares, with NGWA's and XCP's
//!   overrides of the congestion control.
//!
//! The simulator builds its interfaces from [`Resolved::links`], and the
//! real gateway (`netreturn-gateway --config`) its two directions from the
//! same [`LinkDir`]s of the scenario's bottleneck.

use crate::scenario::{
    CcName, LossSsthreshName, PrrBoundName, QueueMethod, RecoveryFromCwrName, RecoveryName, Scenario, ScenarioError,
};
use crate::topology::{IfaceSpec, Topology};
use netreturn_base::{Rate, Time};
use netreturn_control::queue::aqm::AqmParams;
use netreturn_control::queue::{Discipline, Limit, RedParams};
use netreturn_control::{ControllerKind, GatewayConfig, QueueKind, StageKind};
use netreturn_tcp::{CcKind, TcpConfig};
use std::fmt;

pub use crate::scenario::{packet_bytes, IP_HEADER, TCP_HEADER, TS_OPTION};

/// The offset a seed adds to the one-way delay of link `name` (its
/// forward direction's name, "R1->R2") under phase randomization: uniform
/// in [0, `max`), from a generator keyed by the seed and the name (FNV-1a),
/// so it does not depend on the order links are built in. A deterministic
/// dumbbell locks flows into one phase of their round trips (the EWT
/// paper's RTOs, DropTail's UDP loss: docs/validation.md); comparing two
/// simulators over seeds *and* phases needs both to draw the same offsets,
/// which is why this one rule is exported to the ns-3 harness.
pub fn phase_offset(seed: u64, name: &str, max: Time) -> Time {
    if max == Time::ZERO {
        return Time::ZERO;
    }
    // FNV-1a, 64 bits.
    let key = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    let mut rng = netreturn_base::Rng::derive(seed, 0x5048_4153_4500_0000 ^ key);
    Time((rng.next_f64() * max.nanos() as f64) as u64)
}

/// One direction of a link, resolved: what both worlds build.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkDir {
    /// "R1->R2".
    pub name: String,
    /// Where the file describes it ("topology.bottleneck"), for errors.
    pub field: String,
    /// Node indices of [`Resolved::topology`].
    pub from: u32,
    pub to: u32,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Time,
    /// Bernoulli loss probability per packet.
    pub loss: f64,
    /// The mechanism as written: a queue, a window controller or a stage.
    pub method: QueueMethod,
    /// The queue discipline that holds the packets (DropTail under a
    /// window controller or a stage).
    pub queue: QueueKind,
    /// The queue's limit as written (packets or bytes).
    pub limit: Limit,
    /// The limit in bytes, a packet weighing [`LinkDir::packet_bytes`].
    pub buffer_bytes: u64,
    /// What "1p" weighs here ([`packet_bytes`]).
    pub packet_bytes: u32,
    /// RED's and ARED's table over the Linux-like preset (`None` for
    /// DropTail, which reads none: one file can sweep `queue`).
    pub red: Option<RedParams>,
    /// The dequeue-time AQMs' table (`None` for the other queues).
    pub aqm: Option<AqmParams>,
    /// The window controller's whole configuration, if the method is one.
    pub gateway: Option<GatewayConfig>,
}

impl LinkDir {
    /// The window controller this direction runs, if any.
    pub fn controller(&self) -> Option<ControllerKind> {
        self.method.controller()
    }

    /// The router stage (XCP) this direction runs, if any.
    pub fn stage(&self) -> Option<StageKind> {
        match self.method {
            QueueMethod::Stage(k) => Some(k),
            _ => None,
        }
    }

    /// The queue discipline; RED's idle decay counts the transmission time
    /// of one packet at this direction's rate.
    pub fn discipline(&self) -> Discipline {
        let idle = self.rate.tx_time(self.packet_bytes as u64);
        self.queue.discipline(self.limit, self.packet_bytes, idle, self.red.as_ref())
    }

    /// The checks on resolved values, once units are applied: a buffer
    /// that holds something, and RED's domain (`min_th < max_th`,
    /// `0 < w_q <= 1`, `0 < max_p <= 1`) as the queue will be built.
    /// Errors as (field, message).
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.buffer_bytes == 0 {
            return Err((format!("{}.buffer", self.field), "must be larger than zero".into()));
        }
        if self.rate.bits_per_sec() == 0 {
            return Err((format!("{}.rate", self.field), "must be at least 1 bit/s".into()));
        }
        self.queue.check(self.limit, self.packet_bytes, self.red.as_ref(), self.aqm.as_ref()).map_err(|(t, key, m)| {
            (format!("{}.{t}.{key}", self.field), format!("{m} ({}, {})", self.name, self.queue.name()))
        })
    }

    fn from_iface(f: &IfaceSpec, packet: u32, mss: u32) -> LinkDir {
        let limit = Limit::from(f.buffer);
        let buffer_bytes = limit.bytes(packet);
        // A window controller or a stage runs over a DropTail queue.
        let queue = f.method.queue();
        let red = if matches!(queue, QueueKind::Red | QueueKind::Ared) { f.red.clone() } else { None };
        let aqm = if queue.decides_at_dequeue() { f.aqm.clone() } else { None };
        let gateway = f.method.controller().map(|kind| {
            let params = f.gateway.clone().unwrap_or_default();
            let mut cfg = GatewayConfig::from_params(&params, kind, buffer_bytes, f.rate, mss);
            cfg.packet_bytes = Some(packet);
            cfg
        });
        LinkDir {
            name: f.name.clone(),
            field: f.field.clone(),
            from: f.from,
            to: f.to,
            rate: f.rate,
            delay: f.delay,
            loss: f.loss,
            method: f.method,
            queue,
            limit,
            buffer_bytes,
            packet_bytes: packet,
            red,
            aqm,
            gateway,
        }
    }
}

/// A scenario resolved: its graph, every interface's [`LinkDir`] (index
/// for index with `topology.ifaces`: `2k` and `2k + 1` are link k's two
/// directions) and the endpoints' TCP settings.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub topology: Topology,
    pub links: Vec<LinkDir>,
    pub tcp: TcpConfig,
    /// What "1p" weighs ([`packet_bytes`]).
    pub packet_bytes: u32,
    /// The link direction the run's headline describes
    /// ([`Resolved::pick_monitored`]).
    pub monitored: Option<u32>,
}

impl Resolved {
    /// The link delays of seed `seed` under `run.phase`: each link's two
    /// directions get [`phase_offset`] of the forward direction's name.
    pub fn apply_phase(&mut self, seed: u64, phase: Time) {
        if phase == Time::ZERO {
            return;
        }
        for k in (0..self.links.len()).step_by(2) {
            let off = phase_offset(seed, &self.links[k].name, phase);
            self.links[k].delay += off;
            if let Some(rev) = self.links.get_mut(k + 1) {
                rev.delay += off;
            }
        }
    }

    /// Resolves `s`; an error names the file, the field and the parameter
    /// the user set.
    pub fn new(s: &Scenario) -> Result<Resolved, ScenarioError> {
        Resolved::build(s).map_err(|(field, message)| s.error(&field, message))
    }

    /// [`Resolved::new`] with errors as (field, message).
    pub fn build(s: &Scenario) -> Result<Resolved, (String, String)> {
        let topology = Topology::build(&s.topology)?;
        let packet = packet_bytes(s.tcp.segment_size);
        let links: Vec<LinkDir> =
            topology.ifaces.iter().map(|f| LinkDir::from_iface(f, packet, s.tcp.segment_size)).collect();
        for l in &links {
            l.check()?;
        }
        let tcp = endpoint_config(s, &topology);
        let monitored = Resolved::pick_monitored(s, &topology, &links)?;
        Ok(Resolved { topology, links, tcp, packet_bytes: packet, monitored })
    }

    /// The link direction whose queue is the scenario's headline, in this
    /// order: `run.monitor`; the topology's declared bottleneck (dumbbell,
    /// multi-rtt); else the lowest-rate link direction on the traffic's
    /// paths. Among equally slow directions the one running a gateway or
    /// an AQM is taken; if that does not single one out, the error lists
    /// them and asks for `run.monitor` (a chain of equal links once
    /// reported its idle first hop as "the bottleneck").
    fn pick_monitored(s: &Scenario, topo: &Topology, links: &[LinkDir]) -> Result<Option<u32>, (String, String)> {
        if let Some(name) = &s.run.monitor {
            return match topo.iface_by_name(name) {
                Some(i) => Ok(Some(i)),
                None => Err((
                    "run.monitor".into(),
                    format!("no link direction {name:?}; the links are {}", names(links, 0..links.len())),
                )),
            };
        }
        if topo.bottleneck.is_some() {
            return Ok(topo.bottleneck);
        }
        let on_paths = traffic_paths(s, topo);
        let Some(slowest) = on_paths.iter().map(|&i| links[i].rate).min() else {
            return Ok(None);
        };
        let tied: Vec<usize> = on_paths.iter().copied().filter(|&i| links[i].rate == slowest).collect();
        if tied.len() == 1 {
            return Ok(Some(tied[0] as u32));
        }
        let managed: Vec<usize> =
            tied.iter().copied().filter(|&i| links[i].method != QueueMethod::Queue(QueueKind::DropTail)).collect();
        if managed.len() == 1 {
            return Ok(Some(managed[0] as u32));
        }
        Err((
            "run.monitor".into(),
            format!(
                "the traffic's slowest links tie at {slowest} ({}); name the one to report, e.g. \
                 [run] monitor = {:?}",
                names(links, tied.iter().copied()),
                links[tied[tied.len() / 2]].name
            ),
        ))
    }
}

fn names(links: &[LinkDir], ids: impl Iterator<Item = usize>) -> String {
    let v: Vec<&str> = ids.map(|i| links[i].name.as_str()).collect();
    if v.len() > 12 {
        format!("{}, ... ({} in all)", v[..12].join(", "), v.len())
    } else {
        v.join(", ")
    }
}

/// The link directions some traffic's packets cross from its senders to
/// its receivers (flow k goes from `from`[k] to `to`[k], cycling through
/// the groups, as the simulator pairs them), in order of first use. At
/// most 4096 pairs per traffic entry are followed: enough to meet every
/// link of the bundled topologies, cheap at the scale benchmark's size.
fn traffic_paths(s: &Scenario, topo: &Topology) -> Vec<usize> {
    use crate::scenario::TrafficSpec as T;
    let mut seen = vec![false; topo.ifaces.len()];
    let mut out = vec![];
    for t in &s.traffic {
        let (from, to, count) = match t {
            T::TcpFile { from, to, count, .. }
            | T::TcpBulk { from, to, count, .. }
            | T::TcpRate { from, to, count, .. }
            | T::UdpCbr { from, to, count, .. }
            | T::UdpOnOff { from, to, count, .. } => (from, to, Some(*count as usize)),
            T::TcpWeb { from, to, .. } => (from, to, None),
        };
        let (Some(srcs), Some(dsts)) = (topo.hosts(from), topo.hosts(to)) else { continue };
        if srcs.is_empty() || dsts.is_empty() {
            continue;
        }
        let pairs = count.unwrap_or(srcs.len().max(dsts.len())).min(4096);
        for k in 0..pairs {
            let (mut at, dst) = (srcs[k % srcs.len()], dsts[k % dsts.len()]);
            for _ in 0..topo.nodes.len() {
                if at == dst {
                    break;
                }
                let i = topo.route(at, dst);
                if i == crate::topology::NO_ROUTE {
                    break;
                }
                if !seen[i as usize] {
                    seen[i as usize] = true;
                    out.push(i as usize);
                }
                at = topo.ifaces[i as usize].to;
            }
        }
    }
    out
}

/// The TCP settings of `[tcp]`, before NGWA's and XCP's overrides.
pub fn tcp_config(s: &Scenario) -> TcpConfig {
    let t = &s.tcp;
    let packet = packet_bytes(t.segment_size);
    let mut cc = t.cc_params.kind(t.cc);
    if let CcKind::Sarbe(c) = &mut cc {
        // SARBE samples the connection's timestamp clock (seed 004 eq. 1).
        c.ts_tick = t.ts_tick.0;
    }
    TcpConfig {
        cc,
        mss: t.segment_size,
        rcv_buf: t.rcv_buf.0.bytes(packet),
        shrink_window: t.shrink_window,
        window_deducts_ooo: t.window_deducts_ooo,
        snd_buf: t.snd_buf.0.bytes(packet),
        sack: t.sack,
        dupack_same_window: t.dupack_same_window,
        impatient: t.newreno_impatient,
        sack_impatient: t.sack_impatient,
        rto_restart_on_fast_retransmit: t.rto_restart_on_fast_retransmit,
        limited_transmit: t.limited_transmit,
        limited_transmit_resends: t.limited_transmit_resends,
        resend_lost_retransmit: t.resend_lost_retransmit,
        ecn_echo_past_cwr: t.ecn_echo_past_cwr,
        ece_on_new_ack_only: t.ece_on_new_ack_only,
        rcv_window_opens: t.rcv_window_opens,
        window_update_grows_only: t.window_update_grows_only,
        resend_ends_at_snd_max: t.resend_ends_at_snd_max,
        resend_merges_sent: t.resend_merges_sent,
        timestamps: t.timestamps,
        window_scaling: t.window_scaling,
        delayed_ack_count: t.delayed_ack_count,
        delayed_ack_timeout: t.delayed_ack_timeout.0,
        min_rto: t.min_rto.0,
        initial_cwnd: t.initial_cwnd,
        ts_tick: t.ts_tick.0,
        ecn: t.ecn,
        recovery: match t.recovery {
            RecoveryName::Prr => netreturn_tcp::Recovery::Prr,
            RecoveryName::Classic => netreturn_tcp::Recovery::Classic,
        },
        loss_ssthresh: match t.loss_ssthresh {
            LossSsthreshName::Rfc5681 => netreturn_tcp::LossSsthresh::Rfc5681,
            LossSsthreshName::Ns3 => netreturn_tcp::LossSsthresh::Ns3,
            LossSsthreshName::Linux => netreturn_tcp::LossSsthresh::Linux,
            LossSsthreshName::Ns2 => netreturn_tcp::LossSsthresh::Ns2,
        },
        recovery_from_cwr: match t.recovery_from_cwr {
            RecoveryFromCwrName::Linux => netreturn_tcp::RecoveryFromCwr::Linux,
            RecoveryFromCwrName::Ns3 => netreturn_tcp::RecoveryFromCwr::Ns3,
        },
        prr_bound: match t.prr_bound {
            PrrBoundName::Ssrb => netreturn_tcp::PrrBound::Ssrb,
            PrrBoundName::SafeAck => netreturn_tcp::PrrBound::SafeAck,
        },
        ..TcpConfig::default()
    }
}

/// Whether any link of `topo` runs XCP's router stage.
pub fn uses_xcp(topo: &Topology) -> bool {
    topo.ifaces.iter().any(|f| f.method == QueueMethod::Stage(StageKind::Xcp))
}

/// The endpoints' TCP settings: `[tcp]`, then NGWA's modes (CW picks
/// NewReno or standard TCP, the receiver rule: seed 001 section 2.1), then
/// XCP senders on an XCP network or with `tcp.cc = "xcp"`.
pub fn endpoint_config(s: &Scenario, topo: &Topology) -> TcpConfig {
    let mut cfg = tcp_config(s);
    if let Some(n) = &s.ngwa {
        n.apply_to_tcp(&mut cfg, packet_bytes(s.tcp.segment_size));
    }
    if uses_xcp(topo) || s.tcp.cc == CcName::Xcp {
        let x = s.tcp.cc_params.xcp.unwrap_or_default();
        // The XCP end systems' own window and ACK settings (docs/xcp.md,
        // "End systems"): ns-2's where a file asks for them.
        if let Some(n) = x.initial_cwnd {
            cfg.initial_cwnd = n.get();
        }
        if let Some(n) = x.delayed_ack_count {
            cfg.delayed_ack_count = n.get();
        }
        cfg.cc = CcKind::Xcp(x);
    }
    cfg
}

impl fmt::Display for LinkDir {
    /// One line a person reads: `R1->R2  45 Mb/s  40 ms  buffer 97000 B
    /// (as written 97kB)  droptail  loss 0  controller ewt {...}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = match self.limit {
            Limit::Bytes(b) => format!("{b} B"),
            Limit::Packets(p) => format!("{p} p x {} B", self.packet_bytes),
        };
        write!(
            f,
            "{:<14} rate {:>12} bit/s  delay {:>10} ns  buffer {:>9} B ({})  queue {}  loss {}",
            self.name,
            self.rate.bits_per_sec(),
            self.delay.nanos(),
            self.buffer_bytes,
            limit,
            self.queue.name(),
            self.loss
        )?;
        if let Some(r) = &self.red {
            write!(f, "  red {r:?}")?;
        }
        if let Some(k) = self.stage() {
            write!(f, "  stage {}", k.name())?;
        }
        if let (Some(k), Some(g)) = (self.controller(), &self.gateway) {
            write!(
                f,
                "  controller {} B={} C={} default_mss={} assume_wscale={:?} {:?}",
                k.name(),
                g.buffer_bytes,
                g.link_rate.bits_per_sec(),
                g.default_mss,
                g.assume_wscale,
                g.controller
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "nodes: {}", self.topology.nodes.len())?;
        writeln!(f, "one packet (\"1p\"): {} B", self.packet_bytes)?;
        match self.monitored {
            Some(b) => writeln!(f, "monitored link (the headline's): {}", self.links[b as usize].name)?,
            None => writeln!(f, "monitored link: none")?,
        }
        writeln!(f, "links ({} directions):", self.links.len())?;
        for l in &self.links {
            writeln!(f, "  {l}")?;
        }
        writeln!(f, "tcp: {:?}", self.tcp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::MINI;

    #[test]
    fn a_packet_weighs_the_segment_and_52_bytes_in_every_size_a_file_gives() {
        // Issue 22: "1p" meant 1510 B in a queue, 1498 B in controller keys
        // and 1458 B in rcv_buf. One meaning now, at segment_size 1000.
        let text = MINI
            .replace("buffer = \"97kB\" }", "buffer = \"100p\", gateway = { ewt = { st = \"20p\" } } }")
            .replace("[topology]", "[tcp]\nsegment_size = 1000\nrcv_buf = \"100p\"\nsnd_buf = \"50p\"\n[topology]");
        let s = Scenario::from_toml(&text, "p.toml", &[("queue".into(), "ewt".into())]).unwrap();
        let r = Resolved::new(&s).unwrap();
        assert_eq!(r.packet_bytes, 1052);
        let b = r.topology.bottleneck.unwrap() as usize;
        assert_eq!(r.links[b].buffer_bytes, 100 * 1052, "queue");
        assert_eq!(r.links[b ^ 1].buffer_bytes, 100 * 1052, "the reverse queue takes the forward buffer");
        assert_eq!((r.tcp.rcv_buf, r.tcp.snd_buf), (100 * 1052, 50 * 1052), "TCP buffers");
        let g = r.links[b].gateway.as_ref().unwrap();
        let ctl = netreturn_control::Controller::new(
            &g.controller,
            netreturn_control::Bottleneck {
                buffer_bytes: g.buffer_bytes,
                link_rate: g.link_rate,
                default_mss: g.default_mss,
                packet_bytes: g.packet_bytes,
            },
        );
        let netreturn_control::Controller::Ewt(ewt) = ctl else { panic!() };
        assert_eq!(ewt.start_threshold(), 20 * 1052, "controller keys");
        // What show-config prints says the same.
        assert!(r.to_string().contains("buffer    105200 B (100 p x 1052 B)"), "{r}");
    }

    fn chain(links: &str, monitor: &str) -> Result<Resolved, ScenarioError> {
        let text = format!(
            r#"
            name = "chain"
            [topology]
            kind = "chain"
            hops = 3
            {links}
            access = {{ rate = "1Gbps", delay = "1ms" }}
            end_hosts = 1
            [[traffic]]
            kind = "tcp-bulk"
            from = "src0"
            to = "dst0"
            [run]
            stop = "1s"
            {monitor}
            "#
        );
        Resolved::new(&Scenario::from_toml(&text, "chain.toml", &[]).unwrap())
    }

    fn monitored_name(r: &Resolved) -> &str {
        &r.links[r.monitored.unwrap() as usize].name
    }

    #[test]
    fn a_chain_of_equal_links_without_monitor_asks_which_link_to_report() {
        // Issue 26: the first, idle hop was reported as the bottleneck.
        let e = chain(r#"link = { rate = "10Mbps", delay = "5ms" }"#, "").unwrap_err();
        assert_eq!(e.field, "run.monitor");
        assert!(e.message.contains("tie at 10 Mb/s"), "{e}");
        for hop in ["R0->R1", "R1->R2", "R2->R3"] {
            assert!(e.message.contains(hop), "{e}");
        }
        assert!(e.message.contains("monitor = \"R1->R2\""), "the hint is a line to paste: {e}");
        // Named, it runs and reports that link.
        let r = chain(r#"link = { rate = "10Mbps", delay = "5ms" }"#, r#"monitor = "R2->R3""#).unwrap();
        assert_eq!(monitored_name(&r), "R2->R3");
    }

    #[test]
    fn without_monitor_the_slowest_link_on_the_traffics_path_is_reported() {
        let r = chain(
            r#"link = { rate = "10Mbps", delay = "5ms" }
            overrides = { "1" = { rate = "5Mbps", delay = "5ms" } }"#,
            "",
        )
        .unwrap();
        assert_eq!(monitored_name(&r), "R1->R2");
        // Not the reverse direction, which the data never crosses, and
        // not the faster access links.
        assert_eq!(r.topology.bottleneck, None, "a chain declares no bottleneck");
    }

    #[test]
    fn among_equally_slow_links_the_one_with_a_gateway_is_reported() {
        let r = chain(
            r#"link = { rate = "10Mbps", delay = "5ms" }
            overrides = { "2" = { rate = "10Mbps", delay = "5ms", queue = "ewt" } }"#,
            "",
        )
        .unwrap();
        assert_eq!(monitored_name(&r), "R2->R3");
    }

    #[test]
    fn a_monitor_naming_no_link_is_refused_with_the_links_there_are() {
        let e = chain(r#"link = { rate = "10Mbps", delay = "5ms" }"#, r#"monitor = "R1-R2""#).unwrap_err();
        assert_eq!(e.field, "run.monitor");
        assert!(e.message.contains("\"R1-R2\"") && e.message.contains("R1->R2"), "{e}");
    }

    #[test]
    fn a_dumbbell_reports_its_declared_bottleneck_even_behind_slower_access_links() {
        let text = MINI.replace("[topology]", "[topology]\n");
        let s = Scenario::from_toml(&text, "mini.toml", &[]).unwrap();
        let r = Resolved::new(&s).unwrap();
        assert_eq!(r.monitored, r.topology.bottleneck);
        assert!(r.monitored.is_some());
    }

    #[test]
    fn phase_offsets_are_per_seed_and_link_within_bounds_and_order_free() {
        let max = Time::from_millis(1);
        let a = phase_offset(7, "R1->R2", max);
        assert_eq!(a, phase_offset(7, "R1->R2", max), "a seed gives one offset");
        assert!(a < max);
        assert_ne!(a, phase_offset(8, "R1->R2", max), "another seed, another phase");
        assert_ne!(a, phase_offset(7, "left0->R1", max), "another link, another phase");
        assert_eq!(phase_offset(7, "R1->R2", Time::ZERO), Time::ZERO);
        // Uniform in [0, max): the mean of many links is near max / 2.
        let n = 4000;
        let mean = (0..n).map(|i| phase_offset(3, &format!("h{i}->R"), max).nanos() as f64).sum::<f64>() / n as f64;
        assert!((mean - 500_000.0).abs() < 20_000.0, "mean {mean} ns");
    }

    #[test]
    fn run_phase_moves_both_directions_of_each_link_by_the_seeds_offset() {
        let text = MINI.replace("[topology]", "[run]\nphase = \"2ms\"\n[topology]");
        let s = Scenario::from_toml(&text, "mini.toml", &[]).unwrap();
        let plain = Resolved::new(&s).unwrap();
        let mut r = plain.clone();
        r.apply_phase(5, s.run.phase.unwrap().0);
        for k in (0..r.links.len()).step_by(2) {
            let off = phase_offset(5, &r.links[k].name, Time::from_millis(2));
            assert_eq!(r.links[k].delay, plain.links[k].delay + off, "{}", r.links[k].name);
            assert_eq!(r.links[k + 1].delay, plain.links[k + 1].delay + off, "{}", r.links[k + 1].name);
        }
        assert!(r.links.iter().zip(&plain.links).any(|(a, b)| a.delay != b.delay));
    }

    #[test]
    fn xcp_end_system_settings_apply_to_xcp_endpoints_only_and_refuse_zero() {
        // One file for every queue of an AWM family: [tcp] xcp = { ... }
        // gives XCP's rows ns-2's end systems (initial window 2, an ACK per
        // segment), the DropTail rows keep [tcp]'s.
        let text = MINI.replace(
            "[topology]",
            "[tcp]\ninitial_cwnd = 10\nxcp = { initial_cwnd = 2, delayed_ack_count = 1 }\n[topology]",
        );
        let xcp = Scenario::from_toml(&text, "p.toml", &[("queue".into(), "xcp".into())]).unwrap();
        let r = Resolved::new(&xcp).unwrap();
        assert_eq!((r.tcp.initial_cwnd, r.tcp.delayed_ack_count), (2, 1));
        let dt = Scenario::from_toml(&text, "p.toml", &[]).unwrap();
        let r = Resolved::new(&dt).unwrap();
        assert_eq!((r.tcp.initial_cwnd, r.tcp.delayed_ack_count), (10, 2));
        let zero = text.replace("delayed_ack_count = 1", "delayed_ack_count = 0");
        let e = Scenario::from_toml(&zero, "p.toml", &[("queue".into(), "xcp".into())]).unwrap_err().to_string();
        assert!(e.contains("tcp.xcp") && e.contains("nonzero"), "{e}");
    }
}
