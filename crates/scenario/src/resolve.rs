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

use crate::scenario::{CcName, QueueMethod, RecoveryName, Scenario, ScenarioError};
use crate::topology::{IfaceSpec, Topology};
use netreturn_base::{Rate, Time};
use netreturn_control::queue::{Discipline, Limit, RedParams};
use netreturn_control::{ControllerKind, GatewayConfig, QueueKind, StageKind};
use netreturn_tcp::{CcKind, TcpConfig};
use std::fmt;

/// IPv4 header without options (RFC 791).
pub const IP_HEADER: u32 = 20;
/// TCP header without options (RFC 9293 section 3.1).
pub const TCP_HEADER: u32 = 20;
/// The timestamp option as Linux and ns-3 send it: 10 bytes and two NOPs
/// (RFC 7323 section 3).
pub const TS_OPTION: u32 = 12;

/// What one packet ("1p") weighs, wherever a scenario gives a size in
/// packets (queue buffers, RED thresholds, controller keys, TCP buffers,
/// transfer sizes, NGWA's Wmax): a full segment of `segment_size` payload
/// bytes with its IPv4, TCP and timestamp headers, as it sits in a queue
/// (1458 + 52 = 1510 bytes by default). docs/scenarios.md states it.
pub fn packet_bytes(segment_size: u32) -> u32 {
    segment_size + IP_HEADER + TCP_HEADER + TS_OPTION
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
        self.queue.check(self.limit, self.packet_bytes, self.red.as_ref()).map_err(|(key, m)| {
            (format!("{}.red.{key}", self.field), format!("{m} ({}, {})", self.name, self.queue.name()))
        })
    }

    fn from_iface(f: &IfaceSpec, packet: u32, mss: u32) -> LinkDir {
        let limit = Limit::from(f.buffer);
        let buffer_bytes = limit.bytes(packet);
        // A window controller or a stage runs over a DropTail queue.
        let queue = f.method.queue();
        let red = if matches!(queue, QueueKind::Red | QueueKind::Ared) { f.red.clone() } else { None };
        let gateway = f.method.controller().map(|kind| {
            let params = f.gateway.clone().unwrap_or_default();
            let mut cfg = params.gateway_config(kind, buffer_bytes, f.rate, mss);
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
}

impl Resolved {
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
        Ok(Resolved { topology, links, tcp, packet_bytes: packet })
    }

    /// The interface whose queue is the scenario's headline: `run.monitor`
    /// if set, else the topology's bottleneck.
    pub fn monitored(&self, s: &Scenario) -> Option<u32> {
        match &s.run.monitor {
            Some(name) => self.topology.iface_by_name(name),
            None => self.topology.bottleneck,
        }
    }
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
        snd_buf: t.snd_buf.0.bytes(packet),
        sack: t.sack,
        dupack_same_window: t.dupack_same_window,
        impatient: t.newreno_impatient,
        timestamps: t.timestamps,
        window_scaling: t.window_scaling,
        delayed_ack_count: t.delayed_ack_count,
        delayed_ack_timeout: t.delayed_ack_timeout.0,
        min_rto: t.min_rto.0,
        initial_cwnd: t.initial_cwnd,
        ts_tick: t.ts_tick.0,
        recovery: match t.recovery {
            RecoveryName::Prr => netreturn_tcp::Recovery::Prr,
            RecoveryName::Classic => netreturn_tcp::Recovery::Classic,
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
        match self.topology.bottleneck {
            Some(b) => writeln!(f, "bottleneck: {}", self.links[b as usize].name)?,
            None => writeln!(f, "bottleneck: none")?,
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
