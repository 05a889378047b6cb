//! Active Window Management (seed 002 §2; SPEC.md §2.3).
//!
//! One suggested window `swnd` for all flows, updated at every arrival to and
//! departure from the data queue `Q_F` (an *updating event*), and written into
//! every ACK leaving `Q_B` whose window is larger. No per-flow state.
//!
//! # Choice of `beta` (seed 002 eq. 3)
//!
//! Summed over the updating events of a short interval, eq. 1-3 give the
//! fluid law of the total window `N * swnd`:
//!
//! ```text
//! d(N swnd)/dt = -dq/dt + beta * (T - q) / T
//! ```
//!
//! and with every source window-limited, seed 002 eq. 4 gives
//! `dq/dt = N swnd / R - C`. Differentiating eq. 4 and substituting:
//!
//! ```text
//! R q'' + q' + (beta / T) (q - T) = 0
//! ```
//!
//! a second-order system with characteristic equation
//! `R s^2 + s + beta / T = 0`. Its roots are real (no oscillation around the
//! target) iff `1 - 4 R beta / T >= 0`, and the fastest non-oscillating
//! convergence, the paper's criterion ("fast convergence to the target ...
//! reducing the oscillations as much as possible", §2.1), is critical
//! damping:
//!
//! ```text
//! beta = T / (4 R)        (bytes per second)
//! ```
//!
//! with time constant `2 R`. `R` is the round trip at the target,
//! `R = design_rtt + T / C`. The feedback delay of the real loop (an ACK
//! reaches the sender and the answer the queue one RTT later) only adds
//! phase lag, so erring towards a larger `design_rtt` (smaller `beta`) is the
//! safe side: the loop is then over-damped and still converges.
//! [`AwmConfig::beta`] overrides the derivation.

use netreturn_base::{Size, Time};
use serde::Deserialize;

use crate::controller::{Bottleneck, FlowInfo, WindowController};
use crate::view::QueueEvent;

/// How AWM learns `N`, the number of active flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NEstimator {
    /// The number of active flows in the gateway's flow table (what the EWT
    /// paper used in simulation). When it changes, `swnd` is rescaled so
    /// that `N swnd` is unchanged: seed 002 eq. 5 (`N_{k-1} swnd_{k-1} =
    /// N_k swnd_k`, the aggregate window `C R` of the steady state) applied
    /// to a change of `N` the gateway knows. Without it `swnd` winds up
    /// while few flows are active (the DT term grows it by `beta / N` per
    /// second over an empty queue) and, with many flows later, comes down at
    /// `beta / N` too slowly ever to bind: in EWT scenario 2 it stayed near
    /// 110 kB with 31 flows (fair share ~10 kB) and AWM lost as much as
    /// DropTail (docs/reproduce.md, "AWM's N").
    #[default]
    Oracle,
    /// seed 002 §2.2: `N_k = N_{k-1} swnd_{k-1} / swnd_k` (eq. 6), frozen
    /// while new flows are in slow start and raised gradually when the
    /// estimate first decreases.
    Adaptive,
}

/// AWM settings.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AwmConfig {
    /// `T`, the target queue in bytes; `None` = half the buffer (seed 002
    /// §3: "AWM target = half the buffer").
    pub target: Option<Size>,
    /// `beta` in bytes per second; `None` = `T / (4 R)` with
    /// `R = design_rtt + T / C` (critical damping, see the module docs).
    pub beta: Option<f64>,
    /// Round-trip propagation delay the gain is designed for. 200 ms covers
    /// the paper scenarios (seed 002: 80 ms one way = 160 ms; seed 000
    /// scenario 2: 84 ms) on the over-damped side.
    pub design_rtt: Time,
    #[serde(rename = "estimator")]
    pub n_estimator: NEstimator,
    /// The MTU floor (seed 002 eq. 1); `None` = the flow's MSS + 40.
    pub mtu: Option<u32>,
    /// `swnd_0`; `None` = 10 MTU, the initial window of RFC 6928, so AWM
    /// does not hold a starting flow below what TCP would send anyway.
    pub initial_swnd: Option<Size>,
    /// Upper bound on `swnd` (anti wind-up while the queue stays empty
    /// because the flows are not window-limited); `None` = `B + 4 C R`.
    pub max_swnd: Option<Size>,
}

impl Default for AwmConfig {
    fn default() -> AwmConfig {
        AwmConfig {
            target: None,
            beta: None,
            design_rtt: Time::from_millis(200),
            n_estimator: NEstimator::Oracle,
            mtu: None,
            initial_swnd: None,
            max_swnd: None,
        }
    }
}

/// State of the adaptive `N` estimator (seed 002 §2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// `N` used in eq. 1 follows the estimate of eq. 6.
    Tracking,
    /// New flows are in slow start: `N` is held.
    Frozen,
    /// The estimate decreased for the first time after a freeze: `N` is
    /// raised gradually towards it.
    Raising,
}

/// AWM state.
#[derive(Clone, Debug)]
pub struct Awm {
    cfg: AwmConfig,
    target: f64,
    beta: f64,
    mtu: f64,
    max_swnd: f64,
    design_rtt: f64,
    /// `swnd_k`, bytes (fractional: many events move it by less than 1 B).
    swnd: f64,
    /// `q_{k-1}`, bytes.
    last_q: f64,
    /// Time of the previous updating event.
    last_event: Option<Time>,
    /// Active flows according to the flow table (Oracle).
    active: u32,
    /// Eq. 6 estimate.
    n_estimate: f64,
    /// `N` used in eq. 1-3.
    n_used: f64,
    phase: Phase,
}

impl Awm {
    pub fn new(cfg: AwmConfig, link: Bottleneck) -> Awm {
        let b = link.buffer_bytes.max(1) as f64;
        let target = cfg.target.map(|t| t.bytes(link.mtu()) as f64).unwrap_or(b / 2.0).max(1.0);
        let c = link.link_rate.bytes_per_sec_f64().max(1.0);
        let design_rtt = cfg.design_rtt.secs_f64().max(1e-6);
        // beta = T / (4 R), R = D + T / C: critical damping (module docs).
        let r = design_rtt + target / c;
        let beta = cfg.beta.unwrap_or(target / (4.0 * r));
        let mtu = cfg.mtu.unwrap_or(link.default_mss + 40) as f64;
        let max_swnd = cfg.max_swnd.map(|m| m.bytes(link.mtu()) as f64).unwrap_or(b + 4.0 * c * r).max(mtu);
        let swnd = cfg.initial_swnd.map(|s| s.bytes(link.mtu()) as f64).unwrap_or(10.0 * mtu).clamp(mtu, max_swnd);
        // seed 002 eq. 5: N * swnd is the invariant C * R of the steady
        // state, so eq. 6 keeps N_k swnd_k = N_0 swnd_0 and only the initial
        // product anchors the estimate to the real N. We start it at the
        // design point, C * R = C * D + T (pipe plus target queue).
        let n0 = ((c * design_rtt + target) / swnd).clamp(1.0, 1e6);
        Awm {
            cfg,
            target,
            beta,
            mtu,
            max_swnd,
            design_rtt,
            swnd,
            last_q: 0.0,
            last_event: None,
            active: 0,
            n_estimate: n0,
            n_used: n0,
            phase: Phase::Tracking,
        }
    }

    /// The suggested window, bytes.
    pub fn swnd(&self) -> u64 {
        self.swnd as u64
    }
    /// `N` as used in eq. 1-3.
    pub fn n(&self) -> f64 {
        match self.cfg.n_estimator {
            NEstimator::Oracle => self.active.max(1) as f64,
            NEstimator::Adaptive => self.n_used,
        }
    }
    /// `beta` in force, bytes per second.
    pub fn beta(&self) -> f64 {
        self.beta
    }
    pub fn target(&self) -> u64 {
        self.target as u64
    }

    /// The number of active flows changed: with the oracle, `N` is that
    /// number and `swnd` is rescaled so that `N swnd` is kept (seed 002
    /// eq. 5; see [`NEstimator::Oracle`]).
    fn set_active(&mut self, active: u32) {
        let before = self.n();
        self.active = active;
        if self.cfg.n_estimator == NEstimator::Oracle {
            self.swnd = (self.swnd * before / self.n()).clamp(self.mtu, self.max_swnd);
        }
    }

    /// seed 002 §2.2: eq. 6 and the freeze / gradual raise of `N`.
    fn update_n(&mut self, prev_swnd: f64, delta: f64) {
        // N_k = N_{k-1} swnd_{k-1} / swnd_k (seed 002 eq. 6), continuously.
        let prev_estimate = self.n_estimate;
        self.n_estimate = (prev_estimate * prev_swnd / self.swnd).clamp(1.0, 1e6);
        match self.phase {
            Phase::Tracking => self.n_used = self.n_estimate,
            Phase::Frozen => {
                // "The number of sources will be varied in (1) only when the
                // Slow Start phase is interrupted ... detected ... when the
                // number of sources estimated by AWM ... decreases for the
                // first time."
                if self.n_estimate < prev_estimate {
                    self.phase = Phase::Raising;
                }
            }
            Phase::Raising => {}
        }
        if self.phase == Phase::Raising {
            if self.n_estimate <= self.n_used {
                self.n_used = self.n_estimate;
                self.phase = Phase::Tracking;
            } else {
                // "gradually increasing the value of N ... until it reaches
                // the value estimated by (6)": first order, time constant one
                // design RTT (our choice; the paper gives no rate).
                let k = (delta / self.design_rtt).min(1.0);
                self.n_used += (self.n_estimate - self.n_used) * k;
                if self.n_estimate - self.n_used < 0.01 * self.n_estimate {
                    self.n_used = self.n_estimate;
                    self.phase = Phase::Tracking;
                }
            }
        }
    }
}

impl WindowController for Awm {
    /// One updating event k (seed 002 §2.1): arrival (accepted or refused)
    /// or departure at `Q_F`.
    fn on_queue(&mut self, now: Time, ev: &QueueEvent) {
        let q = ev.backlog_bytes as f64;
        let delta = match self.last_event {
            Some(t) => now.saturating_sub(t).secs_f64(),
            None => 0.0,
        };
        self.last_event = Some(now);
        let n = self.n();
        // DQ_k = (q_{k-1} - q_k) / N (seed 002 eq. 2).
        let dq = (self.last_q - q) / n;
        // DT_k = beta delta_k / (N T) (T - q_k) (seed 002 eq. 3).
        let dt = self.beta * delta / (n * self.target) * (self.target - q);
        let prev = self.swnd;
        // swnd_k = max(swnd_{k-1} + DQ_k + DT_k, MTU) (seed 002 eq. 1); the
        // upper bound is ours (anti wind-up).
        self.swnd = (prev + dq + dt).clamp(self.mtu, self.max_swnd);
        self.last_q = q;
        if self.cfg.n_estimator == NEstimator::Adaptive {
            self.update_n(prev, delta);
        }
    }

    fn on_flow_start(&mut self, _now: Time, _flow: &FlowInfo) {
        self.set_active(self.active + 1);
        // seed 002 §2.2: while new sources are in slow start, N in (1) is
        // kept equal to the number of sources active before they started.
        if self.cfg.n_estimator == NEstimator::Adaptive && self.active > 1 {
            self.phase = Phase::Frozen;
        }
    }

    fn on_flow_end(&mut self, _now: Time, _flow: &FlowInfo) {
        self.set_active(self.active.saturating_sub(1));
    }

    /// seed 002 §2.1: "if its awnd value is greater than the last updated
    /// value of swnd, the AWM gateway overwrites the value of the awnd field
    /// with the swnd value".
    fn window(&mut self, _now: Time, _flow: &FlowInfo) -> Option<u64> {
        Some(self.swnd as u64)
    }

    /// seed 002 eq. 1: the suggested window never goes below one MTU (silly
    /// window syndrome).
    fn floor(&self, flow: &FlowInfo) -> u64 {
        self.cfg.mtu.map(u64::from).unwrap_or(flow.mss as u64 + 40)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::{GatewayConfig, WindowGateway};
    use crate::registry::{Controller, ControllerConfig};
    use crate::view::{QueueEventKind, TcpView};
    use netreturn_base::{FlowKey, Rate, TcpFlags};
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, VecDeque};

    fn link(b: u64, c: Rate) -> Bottleneck {
        Bottleneck { buffer_bytes: b, link_rate: c, default_mss: 960, packet_bytes: None }
    }

    /// A 1000-byte enqueue leaving `backlog` bytes queued.
    fn enqueued(backlog: u64) -> QueueEvent {
        QueueEvent { kind: QueueEventKind::Enqueue, size: 1000, backlog_bytes: backlog, backlog_packets: 1 }
    }

    /// A flow with MSS 960 and receiver window `wr`.
    fn flow(wr: u64) -> FlowInfo {
        FlowInfo {
            key: FlowKey { src: 1, dst: 2, sport: 1, dport: 2, proto: FlowKey::TCP },
            rtt: None,
            mss: 960,
            class: 0,
            wr,
            ack: 0,
        }
    }

    #[test]
    fn beta_is_the_critical_damping_gain_of_the_fluid_model() {
        // T = 50 kB, C = 10 Mb/s = 1.25 MB/s, D = 200 ms: R = 0.24 s.
        let awm = Awm::new(AwmConfig::default(), link(100_000, Rate::mbps(10)));
        assert_eq!(awm.target(), 50_000);
        assert!((awm.beta() - 50_000.0 / (4.0 * 0.24)).abs() < 1e-6);
    }

    #[test]
    fn a_growing_queue_lowers_swnd_by_the_growth_over_n() {
        let mut awm = Awm::new(
            AwmConfig { initial_swnd: Some(Size::Bytes(20_000)), beta: Some(0.0), ..AwmConfig::default() },
            link(100_000, Rate::mbps(10)),
        );
        let flow = flow(0);
        for _ in 0..4 {
            awm.on_flow_start(Time::ZERO, &flow);
        }
        // N swnd kept as N goes 1 -> 4 (eq. 5): 20 000 / 4.
        assert_eq!(awm.swnd(), 5_000);
        awm.on_queue(Time::ZERO, &enqueued(0));
        awm.on_queue(Time::ZERO, &enqueued(4_000));
        // DQ = (0 - 4000) / 4 (seed 002 eq. 2).
        assert_eq!(awm.swnd(), 4_000);
    }

    #[test]
    fn a_change_in_the_oracle_n_keeps_n_times_swnd_as_eq_5_says() {
        let mut awm = Awm::new(
            AwmConfig { initial_swnd: Some(Size::Bytes(30_000)), beta: Some(0.0), ..AwmConfig::default() },
            link(100_000, Rate::mbps(10)),
        );
        let flow = flow(0);
        awm.on_flow_start(Time::ZERO, &flow);
        assert_eq!(awm.swnd(), 30_000);
        awm.on_flow_start(Time::ZERO, &flow);
        awm.on_flow_start(Time::ZERO, &flow);
        assert_eq!(awm.swnd(), 10_000);
        awm.on_flow_end(Time::ZERO, &flow);
        assert_eq!(awm.swnd(), 15_000);
        // The adaptive estimator learns N from swnd instead (eq. 6): a flow
        // start leaves swnd alone.
        let mut adaptive = Awm::new(
            AwmConfig {
                initial_swnd: Some(Size::Bytes(30_000)),
                n_estimator: NEstimator::Adaptive,
                ..AwmConfig::default()
            },
            link(100_000, Rate::mbps(10)),
        );
        adaptive.on_flow_start(Time::ZERO, &flow);
        adaptive.on_flow_start(Time::ZERO, &flow);
        assert_eq!(adaptive.swnd(), 30_000);
    }

    #[test]
    fn swnd_never_goes_below_one_mtu_and_the_gateway_floor_is_the_mtu() {
        let mut awm = Awm::new(AwmConfig { mtu: Some(1000), ..AwmConfig::default() }, link(100_000, Rate::mbps(10)));
        awm.on_queue(Time::ZERO, &enqueued(0));
        awm.on_queue(Time::from_secs(10), &enqueued(100_000));
        assert_eq!(awm.swnd(), 1000);
        let flow = flow(50_000);
        assert_eq!(awm.floor(&flow), 1000);
        let awm = Awm::new(AwmConfig::default(), link(100_000, Rate::mbps(10)));
        assert_eq!(awm.floor(&flow), 1000, "MSS + 40");
    }

    /// seed 002 §2.2: while new flows are in slow start N is held; it moves
    /// towards the eq. 6 estimate only after the estimate first decreases,
    /// and then gradually.
    #[test]
    fn new_flows_freeze_the_adaptive_n_until_the_estimate_first_decreases() {
        let cfg = AwmConfig { n_estimator: NEstimator::Adaptive, beta: Some(0.0), ..AwmConfig::default() };
        let mut awm = Awm::new(cfg, link(100_000, Rate::mbps(10)));
        let flow = flow(0);
        let t = Time::from_millis;
        awm.on_queue(t(0), &enqueued(0));
        awm.on_flow_start(t(0), &flow);
        awm.on_flow_start(t(0), &flow);
        let n0 = awm.n();
        // The queue grows: swnd falls, the estimate N * swnd_{k-1} / swnd_k
        // rises, but N in eq. 1 is frozen.
        for (i, q) in (1..=20).map(|i| (i, i * 1000)) {
            awm.on_queue(t(i), &enqueued(q));
        }
        assert_eq!(awm.n(), n0);
        assert!(awm.n_estimate > n0);
        // The queue drains: swnd rises, the estimate decreases: N is raised
        // gradually (time constant one design RTT), not in one step.
        awm.on_queue(t(21), &enqueued(19_000));
        let raised = awm.n();
        assert!(raised > n0 && raised < awm.n_estimate, "{n0} {raised} {}", awm.n_estimate);
        for i in 22..2000 {
            awm.on_queue(t(i), &enqueued(19_000));
        }
        assert!((awm.n() - awm.n_estimate).abs() < 1e-9);
    }

    // ---- A packet-level model: N window-limited senders, one AWM gateway.

    /// The dumbbell of seed 002 §3 in miniature: N greedy senders (window =
    /// min(cwnd, last advertised window), slow start without loss), one-way
    /// delay `d` on each side of the gateway, a DropTail queue of `B` bytes
    /// draining at `C`; the ACKs cross the gateway on their way back.
    struct Model {
        gw: WindowGateway,
        queue: VecDeque<(usize, u32)>,
        backlog: u64,
        drops: u64,
        max_backlog: u64,
        samples: Vec<(Time, u64)>,
    }

    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        /// A data segment of flow i reaches the gateway.
        Arrive(usize),
        /// The link finished sending the head of the queue.
        Depart,
        /// The ACK of flow i reaches the gateway on its way back.
        AckAtGateway(usize),
        /// The ACK of flow i reaches its sender with this window.
        AckAtSender(usize, u64),
    }

    fn run_model(n: usize, estimator: NEstimator, secs: u64) -> Model {
        let c = Rate::mbps(10);
        let d = Time::from_millis(20); // one way per side: RTT 80 ms
        let mss: u32 = 960;
        let pkt = mss + 40;
        let bdp = c.bytes_in(Time::from_millis(80));
        let b = bdp; // seed 002 §3: buffer = bandwidth-delay product
        let cfg = GatewayConfig::new(
            ControllerConfig::Awm(AwmConfig {
                n_estimator: estimator,
                design_rtt: Time::from_millis(80),
                ..AwmConfig::default()
            }),
            b,
            c,
        );
        let mut m = Model {
            gw: WindowGateway::new(cfg),
            queue: VecDeque::new(),
            backlog: 0,
            drops: 0,
            max_backlog: 0,
            samples: vec![],
        };
        let keys: Vec<FlowKey> = (0..n)
            .map(|i| FlowKey { src: 10 + i as u32, dst: 1, sport: 40_000 + i as u16, dport: 5001, proto: FlowKey::TCP })
            .collect();
        let view = |key, flags, window, wscale: Option<u8>, payload| TcpView {
            key,
            flags,
            seq: 0,
            ack: 0,
            window,
            wscale,
            mss: wscale.map(|_| 960u16),
            payload_len: payload,
        };
        // Handshakes (SYN in the data direction, wscale 6 both ways).
        for k in &keys {
            m.gw.on_data(Time::ZERO, &view(*k, TcpFlags::SYN, 65535, Some(6), 0));
            m.gw.on_ack(Time::ZERO, &view(k.reversed(), TcpFlags::SYN | TcpFlags::ACK, 65535, Some(6), 0));
        }
        // Sender state: cwnd (bytes, slow start), advertised window, in flight.
        let rwnd_field: u16 = 16_000; // 1 MB << 6: never the limit by itself
        let mut cwnd = vec![10 * mss as u64; n];
        let mut awnd = vec![(rwnd_field as u64) << 6; n];
        let mut inflight = vec![0u64; n];
        let mut ev: BinaryHeap<Reverse<(Time, u64, Ev)>> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut push = |ev: &mut BinaryHeap<Reverse<(Time, u64, Ev)>>, t: Time, e: Ev| {
            seq += 1;
            ev.push(Reverse((t, seq, e)));
        };
        // Staggered starts over the first 100 ms.
        for i in 0..n {
            let t = Time::from_millis(1 + (i as u64 * 100) / n as u64);
            let w = cwnd[i].min(awnd[i]);
            while inflight[i] + mss as u64 <= w {
                inflight[i] += mss as u64;
                push(&mut ev, t + d, Ev::Arrive(i));
            }
        }
        let end = Time::from_secs(secs);
        let mut busy = false;
        let mut last_sample = Time::ZERO;
        while let Some(Reverse((now, _, e))) = ev.pop() {
            if now > end {
                break;
            }
            match e {
                Ev::Arrive(i) => {
                    m.gw.on_data(now, &view(keys[i], TcpFlags::ACK, 500, None, mss));
                    let admitted = m.backlog + pkt as u64 <= b;
                    if admitted {
                        m.backlog += pkt as u64;
                        m.queue.push_back((i, pkt));
                    } else {
                        m.drops += 1;
                    }
                    let kind = if admitted { QueueEventKind::Enqueue } else { QueueEventKind::Drop };
                    m.gw.on_queue(
                        now,
                        &QueueEvent {
                            kind,
                            size: pkt,
                            backlog_bytes: m.backlog,
                            backlog_packets: m.queue.len() as u32,
                        },
                    );
                    m.max_backlog = m.max_backlog.max(m.backlog);
                    if !busy && admitted {
                        busy = true;
                        push(&mut ev, now + c.tx_time(pkt as u64), Ev::Depart);
                    }
                }
                Ev::Depart => {
                    let (i, size) = m.queue.pop_front().expect("departure from an empty queue");
                    m.backlog -= size as u64;
                    m.gw.on_queue(
                        now,
                        &QueueEvent {
                            kind: QueueEventKind::Dequeue,
                            size,
                            backlog_bytes: m.backlog,
                            backlog_packets: m.queue.len() as u32,
                        },
                    );
                    push(&mut ev, now + d + d, Ev::AckAtGateway(i));
                    if let Some(&(_, next)) = m.queue.front() {
                        push(&mut ev, now + c.tx_time(next as u64), Ev::Depart);
                    } else {
                        busy = false;
                    }
                }
                Ev::AckAtGateway(i) => {
                    let field =
                        m.gw.on_ack(now, &view(keys[i].reversed(), TcpFlags::ACK, rwnd_field, None, 0))
                            .unwrap_or(rwnd_field);
                    push(&mut ev, now + d, Ev::AckAtSender(i, (field as u64) << 6));
                }
                Ev::AckAtSender(i, window) => {
                    inflight[i] -= mss as u64;
                    awnd[i] = window;
                    cwnd[i] += mss as u64; // slow start forever: only AWM limits
                    let w = cwnd[i].min(awnd[i]);
                    while inflight[i] + mss as u64 <= w {
                        inflight[i] += mss as u64;
                        push(&mut ev, now + d, Ev::Arrive(i));
                    }
                }
            }
            if now >= last_sample + Time::from_millis(10) {
                last_sample = now;
                m.samples.push((now, m.backlog));
            }
        }
        m
    }

    fn settled_queue(m: &Model, after: Time) -> (f64, f64) {
        let xs: Vec<f64> = m.samples.iter().filter(|(t, _)| *t >= after).map(|(_, q)| *q as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
        (mean, var.sqrt())
    }

    /// seed 002 §1 and §3: "AWM ... is able to maintain the queue length ...
    /// almost constant providing no loss". Greedy senders in endless slow
    /// start would overflow any DropTail buffer without the gateway.
    #[test]
    fn awm_with_the_oracle_n_holds_the_queue_near_its_target_without_loss() {
        let m = run_model(20, NEstimator::Oracle, 8);
        let target = match m.gw.controller() {
            Controller::Awm(a) => a.target() as f64,
            _ => unreachable!(),
        };
        let (mean, std) = settled_queue(&m, Time::from_secs(4));
        assert_eq!(m.drops, 0, "max backlog {}", m.max_backlog);
        assert!((mean - target).abs() < 0.25 * target, "mean {mean} target {target}");
        assert!(std < 0.15 * target, "std {std}");
    }

    #[test]
    fn awm_with_the_adaptive_n_estimate_holds_the_queue_without_loss() {
        let m = run_model(20, NEstimator::Adaptive, 8);
        let target = match m.gw.controller() {
            Controller::Awm(a) => a.target() as f64,
            _ => unreachable!(),
        };
        let (mean, std) = settled_queue(&m, Time::from_secs(4));
        assert_eq!(m.drops, 0, "max backlog {}", m.max_backlog);
        assert!((mean - target).abs() < 0.25 * target, "mean {mean} target {target}");
        assert!(std < 0.15 * target, "std {std}");
    }
}
