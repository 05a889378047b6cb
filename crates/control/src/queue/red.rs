//! Random Early Detection (Floyd & Jacobson 1993) and Adaptive RED (Floyd,
//! Gummadi & Shenker 2001), byte-based averages. Adaptive RED follows the
//! paper by default; ns-3 3.44's variant is [`AredMode::Ns3`].

use super::{Backlog, DropReason, Limit, Verdict};
use netreturn_base::{Rng, Size, Time};
use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard limit of the queue.
    pub limit: Limit,
    /// Thresholds on the average queue, bytes.
    pub min_th: u64,
    pub max_th: u64,
    /// Weight of the exponential average (`w_q`).
    pub w_q: f64,
    /// Drop probability at `max_th` (`max_p`).
    pub max_p: f64,
    /// Gentle RED: between `max_th` and `2 max_th` the probability rises
    /// linearly from `max_p` to 1 instead of jumping to 1.
    pub gentle: bool,
    /// Scale the drop probability by `size / mean_packet` (ns-2 / ns-3 byte
    /// mode). Linux's RED does not; SPEC.md section 6 warns of the difference.
    pub byte_mode: bool,
    /// Typical packet size, bytes, for byte mode and for the idle decay.
    pub mean_packet: u32,
    /// Transmission time of a typical packet on the outgoing link; while the
    /// queue is idle the average decays as if that many packets of size zero
    /// had arrived (Floyd & Jacobson section 11).
    pub idle_packet_time: Time,
    /// Mark an ECN-capable packet CE where RED would drop it early (RFC 3168
    /// section 5 and 7; ns-3 `RedQueueDisc::UseEcn`, Linux `red ... ecn`).
    /// Off by default.
    pub ecn: bool,
    /// With `ecn`, still drop (not mark) above `max_th` (above `2 max_th`
    /// when gentle): ns-3 `UseHardDrop`, default on; off marks there too,
    /// as Linux's RED without `harddrop`. A full queue always drops.
    pub hard_drop: bool,
    /// RED sees the backlog less its head packet, as ns-3 3.44's
    /// `RedQueueDisc` does under a device queue of one packet (the harness's
    /// bottleneck, ns3ref.py `SetDeviceQueue(..., "1p")`): on a busy link
    /// `PointToPointNetDevice` holds the next packet in its own queue, so
    /// `DoEnqueue`'s `GetInternalQueue(0)->GetNBytes()` counts one packet
    /// fewer than wait. The average, ns-3's empty-queue rule and the hard
    /// limit all count what RED sees (the physical buffer is then one packet
    /// larger, as ns-3's). Off by default: RED sees every waiting packet.
    pub head_in_device: bool,
}

impl RedConfig {
    /// The EWT paper's "Linux-like" preset (seed 000 Table 3): for a buffer of
    /// `b` bytes, `minth = B/12`, `maxth = B/4`, `w_q = 0.002`,
    /// `max_p = 0.02`.
    pub fn linux_like(b: u64, mean_packet: u32, idle_packet_time: Time) -> RedConfig {
        RedConfig {
            limit: Limit::Bytes(b),
            min_th: b / 12,
            max_th: b / 4,
            w_q: 0.002,
            max_p: 0.02,
            gentle: false,
            byte_mode: false,
            mean_packet,
            idle_packet_time,
            ecn: false,
            hard_drop: true,
            head_in_device: false,
        }
    }
}

impl RedConfig {
    /// The domain of each parameter, as (the `red` key at fault, what is
    /// allowed): `min_th < max_th`, `0 < w_q <= 1`, `0 < max_p <= 1`
    /// (Floyd & Jacobson 1993 section 4), all finite.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(("w_q", format!("{} is outside 0 < w_q <= 1", self.w_q)));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(("max_p", format!("{} is outside 0 < max_p <= 1", self.max_p)));
        }
        if self.min_th >= self.max_th {
            return Err(("min_th", format!("min_th ({} B) must be below max_th ({} B)", self.min_th, self.max_th)));
        }
        Ok(())
    }
}

/// A link's `red` table: overrides of the Linux-like preset, read by RED and
/// Adaptive RED. Thresholds in packets count `mean_packet` bytes each.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    pub min_th: Option<Size>,
    pub max_th: Option<Size>,
    pub w_q: Option<f64>,
    pub max_p: Option<f64>,
    pub gentle: Option<bool>,
    pub byte_mode: Option<bool>,
    /// Adaptive RED's schedule (`queue = "ared"` only): "floyd2001" (the
    /// default) or "ns3" (ns-3 3.44's ARED, for validation).
    pub ared_mode: Option<AredMode>,
    /// RED (`queue = "red"`) with ns-3 3.44's `RedQueueDisc` enqueue rules
    /// ([`Red::ns3`]) instead of Floyd & Jacobson's, for validation; off by
    /// default. ARED's `ns3` mode always uses them.
    pub ns3_rules: Option<bool>,
    /// Mark ECN-capable packets instead of dropping them early ([`RedConfig::ecn`]);
    /// off by default.
    pub ecn: Option<bool>,
    /// With `ecn`: drop, not mark, in the forced region ([`RedConfig::hard_drop`]);
    /// on by default (ns-3).
    pub hard_drop: Option<bool>,
    /// RED blind to the head packet, as ns-3's under its one-packet device
    /// queue ([`RedConfig::head_in_device`]); off by default.
    pub head_in_device: Option<bool>,
}

impl RedParams {
    /// `base` with the keys this table sets.
    pub fn apply(&self, mut c: RedConfig) -> RedConfig {
        if let Some(v) = self.min_th {
            c.min_th = v.bytes(c.mean_packet);
        }
        if let Some(v) = self.max_th {
            c.max_th = v.bytes(c.mean_packet);
        }
        c.w_q = self.w_q.unwrap_or(c.w_q);
        c.max_p = self.max_p.unwrap_or(c.max_p);
        c.gentle = self.gentle.unwrap_or(c.gentle);
        c.byte_mode = self.byte_mode.unwrap_or(c.byte_mode);
        c.ecn = self.ecn.unwrap_or(c.ecn);
        c.hard_drop = self.hard_drop.unwrap_or(c.hard_drop);
        c.head_in_device = self.head_in_device.unwrap_or(c.head_in_device);
        c
    }
}

/// One arrival at a RED queue, for diagnostics ([`Red::enable_trace`]):
/// time, backlog before the arrival (bytes), the average just updated,
/// `max_p` then, and the verdict (0 accepted, 1 early drop, 2 forced drop,
/// 3 overflow, 4 accepted and marked CE).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedSample {
    pub t: Time,
    pub backlog: u64,
    pub avg: f64,
    pub max_p: f64,
    pub verdict: u8,
}

/// ns-3 3.44's `RedQueueDisc::DoEnqueue` rules (a port of ns-2's
/// `REDQueue::enque`), which differ from Floyd & Jacobson 1993 and Linux;
/// used by [`AredMode::Ns3`] only, to validate against ns-3.
#[derive(Clone, Debug)]
struct Ns2Rules {
    /// `m_old`: the average is above `min_th` with a non-empty queue since
    /// the last arrival; the first arrival after it crosses is never dropped.
    old: bool,
    /// `m_countBytes`: bytes arrived since the last early drop.
    count_bytes: u64,
    /// `max_p` at start: ns-3 computes the gentle line (`m_vC`, `m_vD`) once
    /// in `InitializeParams` from `1 / LInterm`, and ARED's changes of
    /// `m_curMaxP` never reach it.
    gentle_max_p: f64,
}

/// The state RED and Adaptive RED share: the average and the drop decision.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    /// Exponentially weighted average queue, bytes.
    avg: f64,
    /// Packets accepted since the last early drop (Floyd & Jacobson's
    /// `count`), so drops are spread uniformly rather than clustered.
    count: i64,
    /// Time the queue became empty, if it is empty.
    idle_since: Option<Time>,
    /// ns-3's rules instead of Floyd & Jacobson's (ARED `ns3` mode only).
    ns2: Option<Ns2Rules>,
    /// Every arrival, when enabled (diagnostics).
    trace: Option<Vec<RedSample>>,
}

impl Red {
    pub fn new(cfg: RedConfig) -> Red {
        assert!(cfg.min_th < cfg.max_th, "RED needs min_th < max_th");
        Red { cfg, avg: 0.0, count: -1, idle_since: Some(Time::ZERO), ns2: None, trace: None }
    }

    /// RED with ns-3 3.44's `RedQueueDisc` rules (see [`Ns2Rules`]): no drop
    /// while the queue holds at most one unit (a byte in byte mode, a packet
    /// otherwise: `nQueued > 1`), never the first arrival after the average
    /// crosses `min_th` (`m_old`), `count` in bytes / `mean_packet` and the
    /// byte-mode factor when the limit is in bytes, the gentle line fixed at
    /// the initial `max_p`, no count reset at a forced drop, and the idle
    /// decay over `floor(idle / packet time) + 1` packets.
    pub fn ns3(cfg: RedConfig) -> Red {
        let mut r = Red::new(cfg);
        r.count = 0;
        r.ns2 = Some(Ns2Rules { old: false, count_bytes: 0, gentle_max_p: cfg.max_p });
        r
    }

    /// Records every later arrival ([`RedSample`]).
    pub fn enable_trace(&mut self) {
        self.trace = Some(vec![]);
    }
    /// The arrivals recorded since [`enable_trace`](Self::enable_trace).
    pub fn take_trace(&mut self) -> Vec<RedSample> {
        self.trace.take().unwrap_or_default()
    }

    fn record(&mut self, now: Time, backlog: Backlog, v: Verdict) {
        if let Some(tr) = &mut self.trace {
            let verdict = match v {
                Verdict::Accept => 0,
                Verdict::Mark => 4,
                Verdict::Drop(DropReason::Early) => 1,
                Verdict::Drop(DropReason::Forced) => 2,
                Verdict::Drop(_) => 3,
            };
            tr.push(RedSample { t: now, backlog: backlog.bytes, avg: self.avg, max_p: self.cfg.max_p, verdict });
        }
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }
    pub fn limit(&self) -> Limit {
        self.cfg.limit
    }
    /// The current average queue, bytes.
    pub fn average(&self) -> f64 {
        self.avg
    }

    fn update_average(&mut self, now: Time, backlog: Backlog) {
        let w = self.cfg.w_q;
        if self.ns2.is_some() {
            // ns-3 `Estimator(nQueued, m + 1, ...)`: avg (1 - w)^(m + 1) +
            // w q, m = whole packet times the queue was idle.
            let m = match self.idle_since.take() {
                Some(since) if backlog.packets == 0 && self.cfg.idle_packet_time.nanos() > 0 => {
                    now.saturating_sub(since).nanos() / self.cfg.idle_packet_time.nanos()
                }
                _ => 0,
            };
            self.avg = self.avg * (1.0 - w).powf(m as f64 + 1.0) + w * backlog.bytes as f64;
            return;
        }
        match self.idle_since.take() {
            Some(since) if backlog.packets == 0 => {
                // avg <- (1 - w_q)^m avg, m = idle time / packet time.
                let m = if self.cfg.idle_packet_time.nanos() == 0 {
                    0.0
                } else {
                    now.saturating_sub(since).nanos() as f64 / self.cfg.idle_packet_time.nanos() as f64
                };
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * backlog.bytes as f64,
        }
    }

    /// Base drop probability `p_b` for the current average, or `None` for a
    /// forced drop.
    fn base_probability(&self) -> Option<f64> {
        let (min, max) = (self.cfg.min_th as f64, self.cfg.max_th as f64);
        let a = self.avg;
        if a < min {
            Some(0.0)
        } else if a < max {
            Some(self.cfg.max_p * (a - min) / (max - min))
        } else if self.cfg.gentle && a < 2.0 * max {
            Some(self.cfg.max_p + (1.0 - self.cfg.max_p) * (a - max) / max)
        } else {
            None
        }
    }

    /// A packet that is not ECN-capable arrives: [`admit_ect`](Self::admit_ect).
    pub fn admit(&mut self, now: Time, size: u32, backlog: Backlog, rng: &mut Rng) -> Verdict {
        self.admit_ect(now, size, false, backlog, rng)
    }

    /// A packet of `size` bytes arrives at a queue holding `backlog`; `ect`
    /// says its transport is ECN-capable (ECT(0), ECT(1) or CE).
    pub fn admit_ect(&mut self, now: Time, size: u32, ect: bool, backlog: Backlog, rng: &mut Rng) -> Verdict {
        self.update_average(now, backlog);
        let v = self.decide(size, ect, backlog, rng);
        self.record(now, backlog, v);
        v
    }

    /// The decision on the average as it stands: Floyd & Jacobson's or
    /// ns-3's, then the ECN mark in place of a drop.
    fn decide(&mut self, size: u32, ect: bool, backlog: Backlog, rng: &mut Rng) -> Verdict {
        let v = if self.ns2.is_some() {
            self.decide_ns2(size, backlog, rng)
        } else {
            self.decide_floyd(size, backlog, rng)
        };
        self.mark_instead(v, ect, size, backlog)
    }

    /// RFC 3168 section 5: a router that would drop an ECN-capable packet
    /// to signal congestion sets CE instead. As ns-3 3.44's
    /// `RedQueueDisc::DoEnqueue`: an early (unforced) drop becomes a mark
    /// when `UseEcn`; a forced one too unless `UseHardDrop`; the marked
    /// packet still needs room (the internal queue's `Enqueue` refuses it
    /// otherwise), and the state (`count`) moved as for the drop. Linux's
    /// `red_enqueue` does the same with its `ecn` and `harddrop` flags.
    fn mark_instead(&self, v: Verdict, ect: bool, size: u32, backlog: Backlog) -> Verdict {
        let markable = match v {
            Verdict::Drop(DropReason::Early) => true,
            Verdict::Drop(DropReason::Forced) => !self.cfg.hard_drop,
            _ => false,
        };
        if !(markable && ect && self.cfg.ecn) {
            v
        } else if self.cfg.limit.admits(size, backlog) {
            Verdict::Mark
        } else {
            Verdict::Drop(DropReason::Overflow)
        }
    }

    /// Floyd & Jacobson 1993's decision (Fig. 2), with the hard limit.
    fn decide_floyd(&mut self, size: u32, backlog: Backlog, rng: &mut Rng) -> Verdict {
        let verdict = match self.base_probability() {
            Some(p) if p <= 0.0 => {
                self.count = -1;
                Verdict::Accept
            }
            Some(mut pb) => {
                self.count += 1;
                if self.cfg.byte_mode {
                    pb *= size as f64 / self.cfg.mean_packet as f64;
                }
                // p_a = p_b / (1 - count p_b): uniform spacing of drops.
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
                if rng.bernoulli(pa) {
                    self.count = 0;
                    Verdict::Drop(DropReason::Early)
                } else {
                    Verdict::Accept
                }
            }
            None => {
                self.count = 0;
                Verdict::Drop(DropReason::Forced)
            }
        };
        if verdict == Verdict::Accept && !self.cfg.limit.admits(size, backlog) {
            return Verdict::Drop(DropReason::Overflow);
        }
        verdict
    }

    /// ns-3 3.44 `RedQueueDisc::CalculatePNew` (the probability before the
    /// count correction) for the average `a`, between `min_th` and `2
    /// max_th`: `max_p (a - min) / (max - min)` below `max_th`, and above it
    /// the gentle line from `gentle_max_p` (the initial max_p) at `max_th` to
    /// 1 at `2 max_th`.
    fn ns2_p_new(c: &RedConfig, gentle_max_p: f64, a: f64) -> f64 {
        let (min, max) = (c.min_th as f64, c.max_th as f64);
        let p = if a >= max {
            (1.0 - gentle_max_p) / max * a + 2.0 * gentle_max_p - 1.0
        } else {
            c.max_p * (a - min) / (max - min)
        };
        p.min(1.0)
    }

    /// ns-3 3.44 `RedQueueDisc::DoEnqueue`, `DropEarly`, `CalculatePNew`
    /// and `ModifyP` (Wait off, no ECN, hard drop).
    fn decide_ns2(&mut self, size: u32, backlog: Backlog, rng: &mut Rng) -> Verdict {
        let c = self.cfg;
        let bytes_unit = matches!(c.limit, Limit::Bytes(_));
        let queued = if bytes_unit { backlog.bytes } else { backlog.packets as u64 };
        let (min, max) = (c.min_th as f64, c.max_th as f64);
        let a = self.avg;
        let n = self.ns2.as_mut().expect("ns2 rules");
        self.count += 1;
        n.count_bytes += size as u64;
        let mut verdict = Verdict::Accept;
        if a >= min && queued > 1 {
            if (!c.gentle && a >= max) || (c.gentle && a >= 2.0 * max) {
                verdict = Verdict::Drop(DropReason::Forced);
            } else if !n.old {
                // The average has just crossed min_th (or the queue was empty).
                self.count = 1;
                n.count_bytes = size as u64;
                n.old = true;
            } else {
                let mut p = Self::ns2_p_new(&c, n.gentle_max_p, a);
                // Uniform spacing; in byte mode count is whole mean packets.
                let count = if bytes_unit { (n.count_bytes / c.mean_packet as u64) as f64 } else { self.count as f64 };
                p = if count * p < 1.0 { p / (1.0 - count * p) } else { 1.0 };
                if bytes_unit && p < 1.0 {
                    p = p * size as f64 / c.mean_packet as f64;
                }
                p = p.min(1.0);
                // ns-3 drops when u <= p with u uniform on [0, 1).
                if rng.bernoulli(p) {
                    self.count = 0;
                    n.count_bytes = 0;
                    verdict = Verdict::Drop(DropReason::Early);
                }
            }
        } else {
            n.old = false;
        }
        if verdict == Verdict::Accept && !c.limit.admits(size, backlog) {
            return Verdict::Drop(DropReason::Overflow);
        }
        verdict
    }

    pub fn on_dequeue(&mut self, now: Time, after: Backlog) {
        if after.packets == 0 {
            self.idle_since = Some(now);
        }
    }
}

/// How Adaptive RED steers `max_p` (scenario key `red.ared_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AredMode {
    /// Floyd, Gummadi & Shenker 2001, Fig. 2: every `interval` (0.5 s), if
    /// the average is above the target band and `max_p <= 0.5`, `max_p +=
    /// alpha` with `alpha = min(0.01, max_p / 4)`; if below and `max_p >=
    /// 0.01`, `max_p *= beta` (0.9). The band is the middle of the
    /// configured thresholds, `[min + 0.4 (max - min), min + 0.6 (max -
    /// min)]` (the paper's automatic target). Thresholds and `w_q` stay as
    /// configured.
    #[default]
    Floyd2001,
    /// ns-3 3.44's `RedQueueDisc` with `ARED = true`, for validation against
    /// it (src/traffic-control/model/red-queue-disc.cc, `InitializeParams`,
    /// `Estimator`, `UpdateMaxP`):
    /// * thresholds and weight replaced by automatic ones: `min_th =
    ///   max(5, 0.005 s * C / 2)` packets of `mean_packet` bytes (`C` in
    ///   packets/s, target delay 5 ms), `max_th = 3 min_th`, `w_q = 1 -
    ///   exp(-1 / C)`; gentle on;
    /// * `max_p` steered at an *arrival*, on the average just updated, when
    ///   more than `interval` has passed since it last changed (a step that
    ///   changes nothing does not restart the interval);
    /// * `max_p` decreases only while above `bottom = min(0.01, 8
    ///   mean_packet * 0.1 s / bit rate)` (ns-3's `Rtt` default 0.1 s; the
    ///   formula multiplies by the RTT where 1/W would divide: 2.7e-5 at
    ///   45 Mb/s, 3.0e-4 at 4 Mb/s), and increases only while below 0.5;
    /// * the drop decision of ns-3's `RedQueueDisc::DoEnqueue` (ns-2's
    ///   `REDQueue::enque`), not Floyd & Jacobson's: nothing is dropped while
    ///   the queue is empty, nor the first arrival after the average crosses
    ///   `min_th`; count in bytes / `mean_packet`; the gentle line from the
    ///   *initial* max_p (`m_vC`, `m_vD` are never recomputed); see
    ///   `Red::ns3`.
    Ns3,
}

impl std::str::FromStr for AredMode {
    type Err = String;
    fn from_str(s: &str) -> Result<AredMode, String> {
        match s {
            "floyd2001" => Ok(AredMode::Floyd2001),
            "ns3" => Ok(AredMode::Ns3),
            _ => Err(format!("unknown ared_mode {s:?}; allowed: floyd2001, ns3")),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveRedConfig {
    pub red: RedConfig,
    /// Adaptation interval (0.5 s in the paper).
    pub interval: Time,
    /// Multiplicative decrease factor of `max_p` (0.9).
    pub beta: f64,
    pub mode: AredMode,
}

impl AdaptiveRedConfig {
    /// Floyd, Gummadi & Shenker's recommended settings on top of `red`:
    /// interval 0.5 s, beta 0.9, gentle on, and `max_p` starting at 0.02 as
    /// in RED's usual setting. The additive step `alpha = min(0.01, max_p/4)`
    /// is computed at each adaptation.
    pub fn recommended(red: RedConfig) -> AdaptiveRedConfig {
        AdaptiveRedConfig {
            red: RedConfig { gentle: true, ..red },
            interval: Time::from_millis(500),
            beta: 0.9,
            mode: AredMode::Floyd2001,
        }
    }

    /// The same with `mode`; [`AredMode::Ns3`] replaces thresholds and
    /// weight by ns-3's automatic ones.
    pub fn with_mode(self, mode: AredMode) -> AdaptiveRedConfig {
        let mut c = AdaptiveRedConfig { mode, ..self };
        if mode == AredMode::Ns3 {
            let tx = c.red.idle_packet_time.secs_f64();
            // Link capacity in mean packets per second (ns-3 `m_ptc`).
            let ptc = if tx > 0.0 { 1.0 / tx } else { f64::INFINITY };
            let min_pkts = (0.005 * ptc / 2.0).max(5.0);
            let mean = c.red.mean_packet as f64;
            c.red.min_th = (min_pkts * mean) as u64;
            c.red.max_th = (3.0 * min_pkts * mean) as u64;
            c.red.w_q = if ptc.is_finite() { 1.0 - (-1.0 / ptc).exp() } else { c.red.w_q };
            c.red.gentle = true;
        }
        c
    }
}

/// Adaptive RED: RED whose `max_p` is steered so that the average stays in
/// the middle of `[min_th, max_th]` (target `[min + 0.4 (max - min), min +
/// 0.6 (max - min)]`), with `max_p` kept in about [0.01, 0.5]; see
/// [`AredMode`] for the two schedules.
#[derive(Clone, Debug)]
pub struct AdaptiveRed {
    red: Red,
    interval: Time,
    beta: f64,
    mode: AredMode,
    /// Floyd 2001: the next periodic step. Ns3: `last_set + interval`.
    next_adapt: Time,
    /// Ns3: the lower bound on `max_p`.
    bottom: f64,
}

impl AdaptiveRed {
    pub fn new(cfg: AdaptiveRedConfig) -> AdaptiveRed {
        // ns-3: bottom = min(0.01, 8 MeanPktSize Rtt / LinkBandwidth), Rtt 0.1 s.
        let bottom = (cfg.red.idle_packet_time.secs_f64() * 0.1).min(0.01);
        // Floyd 2001: first step after one interval; ns-3: LastSet = 0.
        AdaptiveRed {
            red: if cfg.mode == AredMode::Ns3 { Red::ns3(cfg.red) } else { Red::new(cfg.red) },
            interval: cfg.interval,
            beta: cfg.beta,
            mode: cfg.mode,
            next_adapt: cfg.interval,
            bottom,
        }
    }

    pub fn limit(&self) -> Limit {
        self.red.limit()
    }
    pub fn max_p(&self) -> f64 {
        self.red.cfg.max_p
    }
    pub fn average(&self) -> f64 {
        self.red.avg
    }
    pub fn config(&self) -> &RedConfig {
        self.red.config()
    }

    /// The target band of the average, bytes.
    fn band(&self) -> (f64, f64) {
        let c = &self.red.cfg;
        let (min, max) = (c.min_th as f64, c.max_th as f64);
        (min + 0.4 * (max - min), min + 0.6 * (max - min))
    }

    /// One adaptation step (Floyd, Gummadi & Shenker 2001, Fig. 2).
    fn adapt(&mut self) {
        let (lo, hi) = self.band();
        let avg = self.red.avg;
        let c = &mut self.red.cfg;
        if avg > hi && c.max_p <= 0.5 {
            c.max_p += (c.max_p / 4.0).min(0.01);
        } else if avg < lo && c.max_p >= 0.01 {
            c.max_p *= self.beta;
        }
    }

    /// ns-3 3.44 `RedQueueDisc::UpdateMaxP`; true if `max_p` changed.
    fn adapt_ns3(&mut self) -> bool {
        let (lo, hi) = self.band();
        let avg = self.red.avg;
        let c = &mut self.red.cfg;
        if avg < lo && c.max_p > self.bottom {
            c.max_p *= self.beta;
            true
        } else if avg > hi && c.max_p < 0.5 {
            c.max_p += (c.max_p / 4.0).min(0.01);
            true
        } else {
            false
        }
    }

    /// A packet that is not ECN-capable arrives: [`admit_ect`](Self::admit_ect).
    pub fn admit(&mut self, now: Time, size: u32, backlog: Backlog, rng: &mut Rng) -> Verdict {
        self.admit_ect(now, size, false, backlog, rng)
    }

    /// [`Red::admit_ect`] with `max_p` steered first.
    pub fn admit_ect(&mut self, now: Time, size: u32, ect: bool, backlog: Backlog, rng: &mut Rng) -> Verdict {
        match self.mode {
            AredMode::Floyd2001 => {
                // The adaptation runs on a fixed period; applying the periods
                // that elapsed since the last arrival here is equivalent,
                // because the average only changes at arrivals.
                while now >= self.next_adapt {
                    self.adapt();
                    self.next_adapt += self.interval;
                }
                self.red.admit_ect(now, size, ect, backlog, rng)
            }
            AredMode::Ns3 => {
                // ns-3's Estimator: the average first, then (strictly after
                // LastSet + Interval) UpdateMaxP on it, then the decision.
                self.red.update_average(now, backlog);
                if now > self.next_adapt && self.adapt_ns3() {
                    self.next_adapt = now + self.interval;
                }
                let v = self.red.decide(size, ect, backlog, rng);
                self.red.record(now, backlog, v);
                v
            }
        }
    }

    pub fn on_dequeue(&mut self, now: Time, after: Backlog) {
        self.red.on_dequeue(now, after);
    }
    /// See [`Red::enable_trace`].
    pub fn enable_trace(&mut self) {
        self.red.enable_trace();
    }
    pub fn take_trace(&mut self) -> Vec<RedSample> {
        self.red.take_trace()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RedConfig {
        RedConfig::linux_like(97_000, 1500, Time::from_micros(120))
    }

    #[test]
    fn linux_like_preset_matches_seed_000_table_3() {
        let c = cfg();
        assert_eq!(c.min_th, 97_000 / 12);
        assert_eq!(c.max_th, 97_000 / 4);
        assert_eq!(c.w_q, 0.002);
        assert_eq!(c.max_p, 0.02);
    }

    #[test]
    fn below_min_threshold_nothing_is_dropped() {
        let mut r = Red::new(cfg());
        let mut rng = Rng::new(1);
        for i in 0..1000 {
            let b = Backlog { bytes: 5_000, packets: 4 };
            assert_eq!(r.admit(Time::from_micros(i), 1500, b, &mut rng), Verdict::Accept);
        }
        assert!(r.average() < 5_000.0 + 1e-9);
    }

    #[test]
    fn average_converges_to_a_steady_queue() {
        let mut r = Red::new(cfg());
        let mut rng = Rng::new(1);
        let b = Backlog { bytes: 15_000, packets: 10 };
        for i in 0..10_000 {
            r.admit(Time::from_micros(i), 1500, b, &mut rng);
        }
        assert!((r.average() - 15_000.0).abs() < 1.0);
    }

    #[test]
    fn early_drop_rate_is_close_to_the_uniform_spacing_rate() {
        // With a constant average midway between thresholds, p_b = max_p / 2
        // = 0.01, and the gap between drops is uniform on {1 .. 1/p_b}
        // (Floyd & Jacobson section 7): mean gap ~50.5, rate ~0.0198.
        let mut c = cfg();
        c.w_q = 1.0; // average = instantaneous queue
        let mid = (c.min_th + c.max_th) / 2;
        let mut r = Red::new(c);
        let mut rng = Rng::new(9);
        let b = Backlog { bytes: mid, packets: 10 };
        let n = 200_000;
        let drops = (0..n).filter(|&i| r.admit(Time::from_micros(i), 1500, b, &mut rng) != Verdict::Accept).count();
        let rate = drops as f64 / n as f64;
        assert!((0.018..0.022).contains(&rate), "drop rate {rate}");
    }

    #[test]
    fn above_max_threshold_every_packet_is_dropped_unless_gentle() {
        let mut c = cfg();
        c.w_q = 1.0;
        let mut r = Red::new(c);
        let mut rng = Rng::new(2);
        let b = Backlog { bytes: c.max_th + 1, packets: 20 };
        assert_eq!(r.admit(Time::ZERO, 1500, b, &mut rng), Verdict::Drop(DropReason::Forced));
        c.gentle = true;
        let mut g = Red::new(c);
        let accepted = (0..1000).filter(|_| g.admit(Time::ZERO, 1500, b, &mut rng) == Verdict::Accept).count();
        assert!(accepted > 500, "gentle RED just above max_th drops about max_p: {accepted}");
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut c = cfg();
        c.w_q = 0.5;
        let mut r = Red::new(c);
        let mut rng = Rng::new(3);
        r.admit(Time::ZERO, 1500, Backlog { bytes: 20_000, packets: 5 }, &mut rng);
        let before = r.average();
        r.on_dequeue(Time::from_millis(1), Backlog::default());
        // 10 packet times idle: avg * 0.5^10.
        r.admit(Time::from_millis(1) + Time::from_micros(1200), 1500, Backlog::default(), &mut rng);
        assert!((r.average() - before / 1024.0).abs() < 1e-6, "{} vs {}", r.average(), before / 1024.0);
    }

    #[test]
    fn the_hard_limit_still_applies() {
        let mut r = Red::new(cfg());
        let mut rng = Rng::new(4);
        let b = Backlog { bytes: 96_000, packets: 64 };
        // Average is still 0-ish: not an early drop, but the packet does not fit.
        assert_eq!(r.admit(Time::ZERO, 1500, b, &mut rng), Verdict::Drop(DropReason::Overflow));
    }

    #[test]
    fn adaptive_red_raises_max_p_while_the_average_is_high_and_lowers_it_when_low() {
        let mut c = cfg();
        c.w_q = 1.0;
        let mut a = AdaptiveRed::new(AdaptiveRedConfig::recommended(c));
        let mut rng = Rng::new(5);
        let high = Backlog { bytes: c.max_th - 100, packets: 16 };
        for i in 0..20 {
            a.admit(Time::from_millis(250 * i), 1500, high, &mut rng);
        }
        let raised = a.max_p();
        assert!(raised > 0.02, "max_p {raised}");
        let low = Backlog { bytes: c.min_th + 10, packets: 6 };
        for i in 20..60 {
            a.admit(Time::from_millis(250 * i), 1500, low, &mut rng);
        }
        assert!(a.max_p() < raised);
        assert!(a.max_p() >= 0.01 * 0.9 - 1e-12, "max_p floor {}", a.max_p());
    }

    /// An ARED whose average is the instantaneous queue (w_q = 1), max_p 0.02.
    fn ared(mode: AredMode) -> AdaptiveRed {
        let mut c = cfg();
        c.w_q = 1.0;
        AdaptiveRed::new(AdaptiveRedConfig::recommended(c).with_mode(mode))
    }

    #[test]
    fn after_an_interval_above_the_target_band_max_p_rises_by_alpha_and_below_it_falls_by_beta() {
        // Floyd, Gummadi & Shenker 2001 Fig. 2. Band for min 8083, max 24250:
        // [14549.8, 17783.2] B. alpha = min(0.01, max_p / 4).
        let high = Backlog { bytes: 20_000, packets: 14 };
        let low = Backlog { bytes: 10_000, packets: 7 };
        let mut rng = Rng::new(6);
        let mut a = ared(AredMode::Floyd2001);
        a.admit(Time::from_millis(499), 1500, high, &mut rng);
        assert_eq!(a.max_p(), 0.02, "no step before the first interval ends");
        a.admit(Time::from_millis(500), 1500, high, &mut rng);
        assert!((a.max_p() - 0.025).abs() < 1e-12, "0.02 + 0.02/4 = {}", a.max_p());
        a.admit(Time::from_millis(1000), 1500, high, &mut rng);
        assert!((a.max_p() - 0.03125).abs() < 1e-12, "0.025 + 0.025/4 = {}", a.max_p());
        let mut b = ared(AredMode::Floyd2001);
        b.admit(Time::from_millis(500), 1500, low, &mut rng);
        assert!((b.max_p() - 0.018).abs() < 1e-12, "0.02 * 0.9 = {}", b.max_p());
        // Inside the band nothing moves (the step at 0.5 s reads the average
        // left by the arrival before it: the periodic timer of the paper).
        let mut m = ared(AredMode::Floyd2001);
        let mid = Backlog { bytes: 16_000, packets: 11 };
        m.admit(Time::from_millis(1), 1500, mid, &mut rng);
        m.admit(Time::from_millis(500), 1500, mid, &mut rng);
        assert_eq!(m.max_p(), 0.02);
    }

    #[test]
    fn floyd_2001_keeps_max_p_within_one_step_of_0_01_and_0_5() {
        // Steps are taken while max_p <= 0.5 (up) or >= 0.01 (down), so the
        // bounds can be passed by one step: (0.5, 0.51] and [0.009, 0.01).
        let mut rng = Rng::new(7);
        let mut a = ared(AredMode::Floyd2001);
        for i in 0..400 {
            a.admit(Time::from_millis(500 * i), 1500, Backlog { bytes: 20_000, packets: 14 }, &mut rng);
        }
        assert!(a.max_p() > 0.5 && a.max_p() <= 0.51, "{}", a.max_p());
        for i in 400..1000 {
            a.admit(Time::from_millis(500 * i), 1500, Backlog { bytes: 10_000, packets: 7 }, &mut rng);
        }
        assert!(a.max_p() >= 0.009 && a.max_p() < 0.01, "{}", a.max_p());
    }

    /// ns-3's ARED at 45 Mb/s with 1510-byte packets: min_th 14 062 B,
    /// max_th 42 187 B, w_q = 2.68e-4, byte limit 97 000 B.
    fn ns3_ared() -> AdaptiveRed {
        let red = RedConfig::linux_like(97_000, 1510, Time::from_nanos(268_444));
        AdaptiveRed::new(AdaptiveRedConfig::recommended(red).with_mode(AredMode::Ns3))
    }

    #[test]
    fn ns3_mode_drops_nothing_at_an_empty_queue_even_with_the_average_above_min_th() {
        // ns-3 DoEnqueue: `m_qAvg >= m_minTh && nQueued > 1` (bytes in byte mode).
        let mut a = ns3_ared();
        a.red.avg = 30_000.0;
        a.red.cfg.max_p = 0.5;
        let mut rng = Rng::new(10);
        for i in 0..2000 {
            let v = a.admit(Time::from_micros(i), 1510, Backlog::default(), &mut rng);
            assert_eq!(v, Verdict::Accept, "arrival {i} at an empty queue, average {}", a.average());
        }
        // The same average over a non-empty queue drops.
        let busy = Backlog { bytes: 30_000, packets: 20 };
        let drops =
            (0..2000).filter(|_| a.admit(Time::from_millis(3), 1510, busy, &mut rng) != Verdict::Accept).count();
        assert!(drops > 100, "{drops}");
    }

    #[test]
    fn ns3_mode_never_drops_the_first_arrival_after_the_average_crosses_min_th() {
        // ns-3's m_old: the first arrival above min_th restarts count at 1
        // and is accepted; the second may be dropped.
        let busy = Backlog { bytes: 30_000, packets: 20 };
        let mut second = 0;
        for seed in 0..200 {
            let mut a = ns3_ared();
            a.red.avg = 30_000.0;
            a.red.cfg.max_p = 0.5;
            let mut rng = Rng::new(seed);
            assert_eq!(a.admit(Time::from_millis(1), 1510, busy, &mut rng), Verdict::Accept, "seed {seed}");
            if a.admit(Time::from_millis(1), 1510, busy, &mut rng) != Verdict::Accept {
                second += 1;
            }
        }
        // p_b = 0.5 (30000 - 14062.5) / 28125 = 0.283; count = bytes since
        // the restart, this arrival included, / 1510 = 2: p_a = 0.283 / (1 -
        // 2 x 0.283) = 0.654.
        assert!((110..150).contains(&second), "{second} of 200");
    }

    #[test]
    fn ns3_mode_keeps_the_gentle_line_at_the_initial_max_p_while_max_p_adapts() {
        // ns-3 computes m_vC, m_vD once from 1 / LInterm = 0.02: at 1.5
        // max_th, p = 0.02 + 0.98 / 2 = 0.51 whatever m_curMaxP is (0.5
        // here; the line through the current max_p would give 0.75).
        let mut a = ns3_ared();
        a.red.cfg.max_p = 0.5;
        let c = a.red.cfg;
        let g = a.red.ns2.as_ref().unwrap().gentle_max_p;
        assert_eq!(g, 0.02);
        let p = Red::ns2_p_new(&c, g, 1.5 * c.max_th as f64);
        assert!((p - 0.51).abs() < 1e-9, "{p}");
        // Below max_th the current max_p applies.
        let mid = (c.min_th + c.max_th) as f64 / 2.0;
        assert!((Red::ns2_p_new(&c, g, mid) - 0.25).abs() < 1e-9);
    }

    #[test]
    fn ns3_mode_decays_an_idle_average_over_whole_packet_times_plus_one() {
        // ns-3 Estimator(nQueued, m + 1): m = floor(idle x ptc).
        let mut a = ns3_ared();
        let mut rng = Rng::new(11);
        a.red.avg = 10_000.0;
        a.on_dequeue(Time::from_millis(1), Backlog::default());
        let idle = Time::from_nanos(268_444 * 10 + 100_000); // 10.37 packet times
        a.admit(Time::from_millis(1) + idle, 1510, Backlog::default(), &mut rng);
        let w = a.config().w_q;
        assert!((a.average() - 10_000.0 * (1.0 - w).powi(11)).abs() < 1e-9, "{}", a.average());
    }

    #[test]
    fn an_enabled_trace_records_every_arrival_with_the_average_max_p_and_verdict() {
        let mut c = cfg();
        c.w_q = 1.0;
        let mut r = Red::new(c);
        let mut rng = Rng::new(13);
        r.admit(Time::from_micros(1), 1500, Backlog { bytes: 3_000, packets: 2 }, &mut rng);
        r.enable_trace();
        r.admit(Time::from_micros(2), 1500, Backlog { bytes: 4_000, packets: 3 }, &mut rng);
        r.admit(Time::from_micros(3), 1500, Backlog { bytes: 30_000, packets: 20 }, &mut rng);
        let tr = r.take_trace();
        assert_eq!(tr.len(), 2);
        assert_eq!(
            (tr[0].t, tr[0].backlog, tr[0].avg, tr[0].max_p, tr[0].verdict),
            (Time::from_micros(2), 4_000, 4_000.0, 0.02, 0)
        );
        assert_eq!((tr[1].backlog, tr[1].verdict), (30_000, 2), "above max_th, gentle off: forced");
        assert!(r.take_trace().is_empty(), "tracing stops once taken");
    }

    #[test]
    fn red_with_ns3_rules_forces_no_drop_at_an_empty_queue_but_does_at_a_busy_one() {
        // Gentle off, average above max_th: Floyd & Jacobson (and Linux)
        // drop every arrival; ns-3 only while the queue disc holds something.
        let mut rng = Rng::new(12);
        let mut floyd = Red::new(cfg());
        let mut ns3 = Red::ns3(cfg());
        for r in [&mut floyd, &mut ns3] {
            r.avg = 30_000.0;
            r.idle_since = None;
        }
        let empty = Backlog::default();
        assert_eq!(floyd.admit(Time::ZERO, 1500, empty, &mut rng), Verdict::Drop(DropReason::Forced));
        assert_eq!(ns3.admit(Time::ZERO, 1500, empty, &mut rng), Verdict::Accept);
        let busy = Backlog { bytes: 1500, packets: 1 };
        assert_eq!(ns3.admit(Time::ZERO, 1500, busy, &mut rng), Verdict::Drop(DropReason::Forced));
        let p = RedParams { ns3_rules: Some(true), ..RedParams::default() };
        assert!(p.ns3_rules.unwrap());
    }

    #[test]
    fn ns3_mode_sets_ns3s_automatic_thresholds_and_lets_max_p_fall_to_its_bottom() {
        // 45 Mb/s, 1510-byte mean packet: C = 3725.2 packets/s; min_th =
        // max(5, 0.005 C / 2) = 9.31 packets = 14062.5 B; max_th = 3 min_th;
        // w_q = 1 - exp(-1/C); bottom = 8 * 1510 * 0.1 / 45e6 = 2.684e-5.
        let red = RedConfig::linux_like(97_000, 1510, Time::from_nanos(268_444));
        let c = AdaptiveRedConfig::recommended(red).with_mode(AredMode::Ns3);
        assert_eq!((c.red.min_th, c.red.max_th), (14_062, 42_187));
        assert!((c.red.w_q - (1.0 - (-268_444e-9f64).exp())).abs() < 1e-12);
        assert!(c.red.gentle);
        let mut a = AdaptiveRed::new(c);
        let mut rng = Rng::new(8);
        let empty = Backlog { bytes: 0, packets: 1 };
        // Arrivals every 0.3 s: a step at 0.6 s (> LastSet 0 + 0.5 s), the
        // next one only at 1.2 s (> 0.6 + 0.5), not at 0.9 s.
        for (t, expected) in [(300, 0.02), (600, 0.018), (900, 0.018), (1200, 0.0162)] {
            a.admit(Time::from_millis(t), 1500, empty, &mut rng);
            assert!((a.max_p() - expected).abs() < 1e-12, "t = {t} ms: {}", a.max_p());
        }
        for i in 5..2000 {
            a.admit(Time::from_millis(600 * i), 1500, empty, &mut rng);
        }
        let bottom = 8.0 * 1510.0 * 0.1 / 45e6;
        assert!(a.max_p() <= bottom && a.max_p() > 0.9 * bottom - 1e-15, "{} vs bottom {bottom}", a.max_p());
    }

    /// RED (and ns-3's rules) with `ecn`: `w_q = 1`, so the average is the
    /// backlog the arrival sees, and `max_p = 0.5` for many early drops.
    fn ecn_cfg(hard_drop: bool) -> RedConfig {
        RedConfig { ecn: true, hard_drop, w_q: 1.0, max_p: 0.5, ..cfg() }
    }

    #[test]
    fn with_ecn_every_early_drop_of_an_ect_packet_becomes_a_mark_and_the_drop_spacing_is_unchanged() {
        // RFC 3168 section 5: CE instead of the drop. Two queues on one seed,
        // one offered ECT packets, one Not-ECT: where one drops early the
        // other marks, arrival for arrival (count restarts at either).
        for ns3 in [false, true] {
            let make = || if ns3 { Red::ns3(ecn_cfg(true)) } else { Red::new(ecn_cfg(true)) };
            let (mut ect, mut plain) = (make(), make());
            let (mut ra, mut rb) = (Rng::new(21), Rng::new(21));
            let mid = Backlog { bytes: 16_000, packets: 11 }; // between min_th and max_th
            let (mut marks, mut early) = (0, 0);
            for i in 0..2_000 {
                let now = Time::from_micros(i);
                let a = ect.admit_ect(now, 1500, true, mid, &mut ra);
                let b = plain.admit_ect(now, 1500, false, mid, &mut rb);
                match b {
                    Verdict::Drop(DropReason::Early) => {
                        early += 1;
                        assert_eq!(a, Verdict::Mark, "ns3 {ns3}, arrival {i}");
                    }
                    Verdict::Accept => assert_eq!(a, Verdict::Accept, "ns3 {ns3}, arrival {i}"),
                    other => panic!("{other:?} in the early region"),
                }
                marks += (a == Verdict::Mark) as u32;
            }
            assert!(early > 100, "ns3 {ns3}: {early} early drops");
            assert_eq!(marks, early);
        }
    }

    #[test]
    fn with_ecn_a_packet_that_is_not_ecn_capable_is_dropped_never_marked() {
        let mut r = Red::new(ecn_cfg(false));
        let mut rng = Rng::new(22);
        let mid = Backlog { bytes: 16_000, packets: 11 };
        let high = Backlog { bytes: 30_000, packets: 20 };
        let verdicts: Vec<Verdict> = (0..1_000)
            .map(|i| r.admit_ect(Time::from_micros(i), 1500, false, if i % 2 == 0 { mid } else { high }, &mut rng))
            .collect();
        assert!(!verdicts.contains(&Verdict::Mark));
        assert!(verdicts.contains(&Verdict::Drop(DropReason::Early)));
        assert!(verdicts.contains(&Verdict::Drop(DropReason::Forced)));
    }

    #[test]
    fn above_max_th_hard_drop_drops_ect_packets_and_without_it_they_are_marked() {
        // ns-3 UseHardDrop (default on) and Linux's `harddrop`.
        let high = Backlog { bytes: 30_000, packets: 20 };
        let mut rng = Rng::new(23);
        let mut hard = Red::new(ecn_cfg(true));
        assert_eq!(hard.admit_ect(Time::ZERO, 1500, true, high, &mut rng), Verdict::Drop(DropReason::Forced));
        let mut soft = Red::new(ecn_cfg(false));
        assert_eq!(soft.admit_ect(Time::ZERO, 1500, true, high, &mut rng), Verdict::Mark);
        // ns-3's rules: the same above max_th at a busy queue.
        let mut ns3 = Red::ns3(ecn_cfg(false));
        assert_eq!(ns3.admit_ect(Time::ZERO, 1500, true, high, &mut rng), Verdict::Mark);
    }

    #[test]
    fn a_mark_still_needs_room_a_full_queue_drops_the_ect_packet() {
        // RFC 3168 section 7: marking does not let a queue exceed its limit.
        let mut c = ecn_cfg(false);
        c.limit = Limit::Bytes(30_000);
        let mut r = Red::new(c);
        let mut rng = Rng::new(24);
        let full = Backlog { bytes: 29_000, packets: 20 };
        assert_eq!(r.admit_ect(Time::ZERO, 1500, true, full, &mut rng), Verdict::Drop(DropReason::Overflow));
    }

    #[test]
    fn without_ecn_an_ect_packet_is_dropped_as_any_other() {
        let mut c = ecn_cfg(true);
        c.ecn = false;
        let (mut a, mut b) = (Red::new(c), Red::new(c));
        let (mut ra, mut rb) = (Rng::new(25), Rng::new(25));
        let mid = Backlog { bytes: 16_000, packets: 11 };
        for i in 0..500 {
            let now = Time::from_micros(i);
            assert_eq!(a.admit_ect(now, 1500, true, mid, &mut ra), b.admit(now, 1500, mid, &mut rb));
        }
    }

    #[test]
    fn the_red_table_sets_ecn_and_hard_drop_over_the_preset_which_drops() {
        assert!(!cfg().ecn && cfg().hard_drop);
        let p = RedParams { ecn: Some(true), hard_drop: Some(false), ..RedParams::default() };
        let c = p.apply(cfg());
        assert!(c.ecn && !c.hard_drop);
    }

    #[test]
    fn adaptive_red_marks_ect_packets_in_both_modes() {
        for mode in [AredMode::Floyd2001, AredMode::Ns3] {
            let red = RedConfig { ecn: true, ..RedConfig::linux_like(97_000, 1510, Time::from_nanos(268_444)) };
            let mut a = AdaptiveRed::new(AdaptiveRedConfig::recommended(red).with_mode(mode));
            let mut rng = Rng::new(26);
            let busy = Backlog { bytes: 60_000, packets: 40 };
            let verdicts: Vec<Verdict> =
                (0..3_000).map(|i| a.admit_ect(Time::from_micros(i * 100), 1510, true, busy, &mut rng)).collect();
            assert!(verdicts.contains(&Verdict::Mark), "{mode:?}");
            assert!(!verdicts.contains(&Verdict::Drop(DropReason::Early)), "{mode:?}");
        }
    }
}
