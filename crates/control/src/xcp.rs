//! XCP's router (Katabi, Handley & Rohrs, "Congestion Control for High
//! Bandwidth-Delay Product Networks", SIGCOMM 2002, section 3.5; SPEC.md
//! 2.7), as a [`ForwardStage`] on one egress interface.
//!
//! Once per control interval `d`, the average RTT of the traffic (from the
//! packets' `H_rtt`), the router computes:
//! * the efficiency controller's aggregate feedback
//!   `phi = alpha d S - beta Q` (XCP eq. 1), `S` the spare bandwidth
//!   (capacity minus the input rate of the last interval), `Q` the persistent
//!   queue: the smallest queue an arriving packet saw over the last
//!   propagation delay, not over the whole interval (XCP section 3.5;
//!   SPEC.md 2.7; see [`XcpRouter::sample_queue`]);
//! * the fairness controller's shuffled traffic
//!   `h = max(0, gamma y - |phi|)` (XCP section 3.5, gamma = 0.1), `y` the
//!   input traffic of an interval;
//! * the coefficients `xi_p`, `xi_n` that spread `h + max(phi, 0)` as
//!   positive and `h + max(-phi, 0)` as negative feedback over the packets
//!   expected in the next interval.
//!
//! Each departing data packet then gets `H_i = p_i - n_i` with
//! `p_i = xi_p rtt_i^2 s_i / cwnd_i` (equal throughput increase for every
//! flow: AIMD's additive part) and `n_i = xi_n rtt_i s_i` (decrease
//! proportional to throughput), and its `H_feedback` is lowered to `H_i` if
//! that is smaller: the bottleneck of the path decides.
//!
//! Choices where the paper leaves room, written down:
//! * Intervals end lazily at the first packet event after their end (a stage
//!   has no timer); an interval in which nothing arrived is skipped.
//! * The sums that size `xi_p`, `xi_n` are those of the last interval,
//!   used as they are for the next one (XCP section 3.5's formulas as
//!   written, and the authors' ns-2 router: `Cp_`, `Cn_` in `xcpq.cc`,
//!   L 13-14): `xi_p`'s over the data packets that carried an RTT, `xi_n`'s
//!   over every byte that arrived ("the sum is over all packets in the
//!   control interval"), ACKs and dropped packets included, so the negative
//!   feedback handed out falls short of `h + max(-phi, 0)` by the share of
//!   bytes that take none. Until 2026-11-27 ours rescaled both sums to the
//!   next interval's length and took `xi_n`'s over the data packets given
//!   feedback only; with those two rules our queues were 10-40 % shorter
//!   than ns-2's (docs/xcp.md, "The last three cells").
//! * A packet without an RTT estimate (`H_rtt = 0`) cannot be given its
//!   share: its feedback is lowered to at most 0.
//! * Feedback is written in whole bytes, rounded to nearest (the header
//!   carries integers; ns-2 carries doubles).
//! * ACKs carrying echoed feedback are counted in the input traffic (they
//!   occupy the link) but never rewritten.

use netreturn_base::{InBand, Time};

use crate::stage::{ForwardPacket, ForwardStage, QueueState};

/// Settings of one XCP router.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XcpRouterConfig {
    /// Efficiency controller gains (XCP section 3.5 and Theorem 1: stable for
    /// `0 < alpha < pi / (4 sqrt 2)` and `beta = alpha^2 sqrt 2`).
    pub alpha: f64,
    pub beta: f64,
    /// Fraction of the traffic shuffled every interval (XCP section 3.5).
    pub gamma: f64,
    /// Control interval used until the first RTT estimates arrive.
    pub initial_interval: Time,
    /// Bounds on the control interval.
    pub min_interval: Time,
    pub max_interval: Time,
}

impl Default for XcpRouterConfig {
    fn default() -> XcpRouterConfig {
        XcpRouterConfig {
            alpha: 0.4,
            beta: 0.226,
            gamma: 0.1,
            initial_interval: Time::from_millis(100),
            min_interval: Time::from_millis(1),
            max_interval: Time::from_secs(2),
        }
    }
}

impl XcpRouterConfig {
    /// XCP Theorem 1 (section 4): the efficiency controller is stable for
    /// any delay, capacity and number of sources if
    /// `0 < alpha < pi / (4 sqrt 2)` and `beta = alpha^2 sqrt 2`.
    /// The paper rounds beta (0.226 for 0.4^2 sqrt 2 = 0.2263), hence the
    /// tolerance.
    pub fn is_stable(&self) -> bool {
        let sqrt2 = std::f64::consts::SQRT_2;
        self.alpha > 0.0
            && self.alpha < std::f64::consts::PI / (4.0 * sqrt2)
            && (self.beta - self.alpha * self.alpha * sqrt2).abs() < 1e-3
    }

    /// XCP eq. 1: the aggregate feedback, bytes, for a control interval
    /// `d`, spare bandwidth `spare` (bytes/s, negative when overloaded) and
    /// persistent queue `queue` (bytes).
    pub fn aggregate_feedback(&self, d: f64, spare: f64, queue: f64) -> f64 {
        self.alpha * d * spare - self.beta * queue
    }
}

/// What one control interval decided (for tests and traces).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct XcpInterval {
    /// Control interval `d`, seconds.
    pub d: f64,
    /// Aggregate feedback `phi`, bytes (XCP eq. 1).
    pub phi: f64,
    /// Shuffled traffic `h`, bytes.
    pub h: f64,
    /// Per-packet coefficients.
    pub xi_p: f64,
    pub xi_n: f64,
}

/// Counters of one router.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XcpStats {
    pub intervals: u64,
    /// Data packets whose feedback was lowered here.
    pub lowered: u64,
    /// Data packets whose feedback was already at most ours.
    pub kept: u64,
}

/// XCP's router on one egress interface. No per-flow state: everything it
/// knows of a flow arrives in the packet's header.
#[derive(Clone, Debug)]
pub struct XcpRouter {
    cfg: XcpRouterConfig,
    /// The running interval: its start and length.
    start: Time,
    d: Time,
    /// Measured over the running interval.
    input_bytes: u64,
    /// The persistent queue `Q`, bytes: the smallest backlog seen by an
    /// arriving packet over the last completed queue window, the window
    /// ending at `q_next` and starting one window earlier.
    q_persistent: u64,
    q_window_min: Option<u64>,
    q_next: Time,
    /// The backlog the last arriving packet saw.
    q_last: u64,
    /// Over the data packets given feedback: sum of `rtt^2 s / cwnd` (for
    /// `d`) and of `rtt s / cwnd` (for `d` and `xi_p`). `xi_n`'s sum is
    /// `input_bytes`.
    sum_rtt2_s_per_cwnd: f64,
    sum_rtt_s_per_cwnd: f64,
    /// What the last interval decided, applied in the running one.
    pub current: XcpInterval,
    /// What is left of the running interval's positive feedback
    /// (`h + max(phi, 0)`) and negative feedback (`h + max(-phi, 0)`), as
    /// rates: bytes/s, the interval's decision divided by `d`. Each packet's
    /// share is capped by, and drawn from, what is left, so an interval never
    /// hands out more than it decided even when more traffic arrives than
    /// the last interval's (flows starting, flows whose first RTT estimate
    /// arrives). The authors' ns-2 router keeps the same budgets
    /// (`residue_pos_fbk_`, `residue_neg_fbk_` in `xcpq.cc`, L 11-12 and
    /// 28-29), in bytes/s. A rate, not bytes of window: a packet's window
    /// share `w` of a flow with RTT `rtt` changes the aggregate by `w / rtt`
    /// (XCP section 3.5 sizes `xi_p`, `xi_n` so these rate changes add up to
    /// `(h + max(phi, 0)) / d`), and a budget in window bytes is drained
    /// `rtt / d` times too fast by long-RTT flows: it gave them a fraction of
    /// the increase decided whenever it bound, and, charged what upstream-cut
    /// packets carry, left the parking lot's links 0.02-0.04 below ns-2's
    /// (docs/xcp.md, "Against ns-2.35's XCP").
    pos_left: f64,
    neg_left: f64,
    pub stats: XcpStats,
}

impl XcpRouter {
    pub fn new(cfg: XcpRouterConfig) -> XcpRouter {
        let d = cfg.initial_interval;
        XcpRouter {
            cfg,
            start: Time::ZERO,
            d,
            input_bytes: 0,
            q_persistent: 0,
            q_window_min: None,
            q_next: Self::queue_window(d, 0, None),
            q_last: 0,
            sum_rtt2_s_per_cwnd: 0.0,
            sum_rtt_s_per_cwnd: 0.0,
            current: XcpInterval { d: d.secs_f64(), ..Default::default() },
            pos_left: 0.0,
            neg_left: 0.0,
            stats: XcpStats::default(),
        }
    }

    /// Ends the running interval if `now` is past it, and computes the
    /// next one's feedback from what it measured.
    fn tick(&mut self, now: Time, queue: &QueueState) {
        let end = self.start + self.d;
        if now < end {
            return;
        }
        let len = self.d.secs_f64();
        let c = queue.rate.bytes_per_sec_f64();
        // d: the average RTT of the flows (XCP section 3.5: "the average
        // RTT"). Each packet weighs `rtt s / cwnd`, so a flow's packets of
        // one interval weigh `d` together whatever its rate, and every flow
        // counts once: sum(rtt^2 s / cwnd) / sum(rtt s / cwnd), as the
        // authors' ns-2 router computes it (xcpq.cc, L 7:
        // sum_rtt_by_throughput_ / sum_inv_throughput_). Weighting by bytes
        // instead lets the fast short-RTT flows set `d`: in the parking lot
        // (cross flows 44 ms, end-to-end flows 364 ms) it made `d` about
        // half the flows' mean RTT (docs/xcp.md, "Against ns-2.35").
        let d_next = if self.sum_rtt_s_per_cwnd > 0.0 {
            Time::from_secs_f64(self.sum_rtt2_s_per_cwnd / self.sum_rtt_s_per_cwnd)
                .clamp(self.cfg.min_interval, self.cfg.max_interval)
        } else {
            self.d
        };
        let d = d_next.secs_f64();
        // S: spare bandwidth, capacity minus input rate (bytes/s).
        let y_rate = self.input_bytes as f64 / len;
        let spare = c - y_rate;
        // Q: the persistent queue over the last propagation delay.
        let q = self.q_persistent as f64;
        // XCP eq. 1.
        let phi = self.cfg.aggregate_feedback(d, spare, q);
        // Fairness controller, shuffling: h = max(0, gamma y - |phi|), y the
        // input traffic of one interval d.
        let h = (self.cfg.gamma * y_rate * d - phi.abs()).max(0.0);
        // xi_p = (h + max(phi, 0)) / (d sum(rtt_i s_i / cwnd_i)),
        // xi_n = (h + max(-phi, 0)) / (d sum(s_i))   (XCP section 3.5), the
        // sums those of the interval that ended, not rescaled to `d`
        // (ns-2's `Cp_`, `Cn_`, xcpq.cc L 13-14), `xi_n`'s over every byte
        // that arrived (L 14: `input_traffic_bytes_`).
        let sum_p = self.sum_rtt_s_per_cwnd;
        let sum_n = self.input_bytes as f64;
        // The interval's positive and negative feedback, given out (and
        // budgeted, `pos_left` / `neg_left`) packet by packet.
        let (give, take) = (h + phi.max(0.0), h + (-phi).max(0.0));
        let xi_p = if sum_p > 0.0 { give / (d * sum_p) } else { 0.0 };
        let xi_n = if sum_n > 0.0 { take / (d * sum_n) } else { 0.0 };
        self.current = XcpInterval { d, phi, h, xi_p, xi_n };
        self.pos_left = give / d;
        self.neg_left = take / d;
        self.stats.intervals += 1;
        // The next interval starts where this one ended, or now if the link
        // was idle for longer than an interval.
        self.start = if now >= end + d_next { now } else { end };
        self.d = d_next;
        self.input_bytes = 0;
        self.sum_rtt2_s_per_cwnd = 0.0;
        self.sum_rtt_s_per_cwnd = 0.0;
    }

    /// Length of a queue window: `max(2 ms, (d - q / C) / 2)`, the
    /// propagation delay (the average RTT `d` less the local queueing delay
    /// `q / C`, XCP section 3.5) halved as the authors' ns-2 router
    /// (`xcpq.cc`, `Tq_`) samples it. `Q` taken at a control decision is the
    /// minimum over the last completed window, so it covers between half a
    /// propagation delay and one before the decision.
    fn queue_window(d: Time, backlog: u64, rate: Option<f64>) -> Time {
        let local = rate.filter(|c| *c > 0.0).map_or(0.0, |c| backlog as f64 / c);
        Time::from_secs_f64(((d.secs_f64() - local) / 2.0).max(0.002))
    }

    /// The persistent queue `Q` (XCP section 3.5, SPEC.md 2.7): "the
    /// minimum queue seen by an arriving packet during the last propagation
    /// delay". Closes every queue window that ended by `now` (`Q` = its
    /// minimum; a window no packet arrived in keeps the last backlog seen),
    /// then counts the backlog this arrival sees. Not the minimum over the
    /// whole control interval: with ACK-compressed two-way traffic the queue
    /// touches zero once per interval while a standing queue persists for
    /// most of it.
    fn sample_queue(&mut self, now: Time, queue: &QueueState) {
        let c = queue.rate.bytes_per_sec_f64();
        while now >= self.q_next {
            self.q_persistent = self.q_window_min.take().unwrap_or(self.q_last);
            let w = Self::queue_window(self.d, self.q_last, Some(c));
            // After an idle spell longer than a window, restart from now.
            self.q_next = if now >= self.q_next + w { now + w } else { self.q_next + w };
        }
        let b = queue.backlog_bytes;
        self.q_last = b;
        self.q_window_min = Some(self.q_window_min.map_or(b, |m| m.min(b)));
    }

    /// This router's feedback for a packet of `size` bytes from a flow with
    /// `cwnd` bytes and an RTT of `rtt` seconds: `p_i - n_i`, bytes.
    pub fn feedback(&self, size: f64, cwnd: f64, rtt: f64) -> f64 {
        let (p, n) = self.shares(size, cwnd, rtt);
        p - n
    }

    /// p_i = xi_p rtt_i^2 s_i / cwnd_i,  n_i = xi_n rtt_i s_i (XCP 3.5).
    fn shares(&self, size: f64, cwnd: f64, rtt: f64) -> (f64, f64) {
        (self.current.xi_p * rtt * rtt * size / cwnd, self.current.xi_n * rtt * size)
    }

    /// This packet's feedback, its shares capped by what is left of the
    /// interval's budgets and drawn from them. `carried` is the feedback
    /// the packet arrives with.
    ///
    /// A packet that already carries less than our feedback has its
    /// bottleneck elsewhere, and leaves with what it carries. The budgets
    /// are then charged what the packet carries, not our shares: its
    /// shortfall `ours - carried` counts as negative feedback given here
    /// (the authors' ns-2 router, `xcpq.cc` lines L 26-27). Otherwise a link
    /// that is not the bottleneck of some of its flows spends part of its
    /// negative feedback on flows that are being cut elsewhere anyway and
    /// hands out its positive feedback to flows that cannot take it, so its
    /// own flows are cut twice and it settles below capacity with `phi`
    /// positive (the parking lot of seed 002 section 3.5; docs/xcp.md).
    fn draw(&mut self, size: f64, cwnd: f64, rtt: f64, carried: i32) -> f64 {
        let (p, n) = self.shares(size, cwnd, rtt);
        // What is left of the budgets (rates) as window bytes of this flow.
        let (pos_left, neg_left) = (self.pos_left * rtt, self.neg_left * rtt);
        let (p, mut n) = (p.min(pos_left), n.min(neg_left));
        let ours = p - n;
        let carried = carried as f64;
        let p = if ours.round() < carried {
            p
        } else {
            n = (n + (ours - carried)).min(neg_left);
            carried + n
        };
        // Drawn as the rates they change the flow's sending by.
        self.pos_left = (self.pos_left - p / rtt).max(0.0);
        self.neg_left = (self.neg_left - n / rtt).max(0.0);
        ours
    }
}

impl ForwardStage for XcpRouter {
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![("xcp_intervals", s.intervals), ("xcp_lowered", s.lowered), ("xcp_kept", s.kept)]
    }

    fn on_enqueue(&mut self, now: Time, pkt: &mut ForwardPacket<'_>, queue: &QueueState) {
        self.sample_queue(now, queue);
        self.tick(now, queue);
        // y: every byte offered to the link, dropped or not (also xi_n's sum).
        self.input_bytes += pkt.size as u64;
    }

    fn on_dequeue(&mut self, at: Time, pkt: &mut ForwardPacket<'_>, queue: &QueueState) {
        self.tick(at, queue);
        let Some(InBand::Xcp(x)) = pkt.inband.as_deref_mut() else { return };
        let data = pkt.tcp.is_some_and(|t| t.payload_len > 0);
        if x.ack || !data {
            return;
        }
        let own = if x.rtt_us == 0 {
            0
        } else {
            let s = pkt.size as f64;
            let rtt = x.rtt_us as f64 * 1e-6;
            let cwnd = (x.cwnd as f64).max(s);
            self.sum_rtt2_s_per_cwnd += rtt * rtt * s / cwnd;
            self.sum_rtt_s_per_cwnd += rtt * s / cwnd;
            self.draw(s, cwnd, rtt, x.feedback).round().clamp(i32::MIN as f64, i32::MAX as f64) as i32
        };
        // Every router lowers H_feedback to its own value (XCP section 3.5).
        if own < x.feedback {
            x.feedback = own;
            self.stats.lowered += 1;
        } else {
            self.stats.kept += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage::TcpMeta;
    use netreturn_base::{FlowKey, Rate, XcpFields};

    fn queue(rate_mbps: u64, backlog: u64) -> QueueState {
        QueueState { backlog_bytes: backlog, capacity_bytes: 1_000_000, rate: Rate::mbps(rate_mbps) }
    }

    fn meta(src: u32) -> TcpMeta {
        TcpMeta {
            key: FlowKey { src, dst: 9, sport: 1, dport: 2, proto: FlowKey::TCP },
            syn: false,
            fin: false,
            rst: false,
            payload_len: 960,
        }
    }

    /// Passes one data packet through the router; returns the feedback it
    /// leaves with.
    fn pass(r: &mut XcpRouter, at: Time, src: u32, cwnd: u32, rtt_us: u32, q: &QueueState) -> i32 {
        let mut ib = InBand::Xcp(XcpFields { cwnd, rtt_us, feedback: i32::MAX, ack: false });
        let mut p = ForwardPacket { tcp: Some(meta(src)), size: 1000, inband: Some(&mut ib) };
        r.on_enqueue(at, &mut p, q);
        r.on_dequeue(at, &mut p, q);
        let InBand::Xcp(x) = ib else { unreachable!() };
        x.feedback
    }

    /// One 100 ms interval of two flows with RTT 100 ms: A (cwnd 10 kB)
    /// sends 10 packets, B (cwnd 20 kB) 20, evenly spread; returns the
    /// feedback each flow collected.
    fn interval(r: &mut XcpRouter, from: Time, q: &QueueState) -> (i64, i64) {
        let (mut a, mut b) = (0i64, 0i64);
        for k in 0..30u64 {
            let at = from + Time::from_micros(k * 100_000 / 30);
            if k % 3 == 0 {
                a += pass(r, at, 1, 10_000, 100_000, q) as i64;
            } else {
                b += pass(r, at, 2, 20_000, 100_000, q) as i64;
            }
        }
        (a, b)
    }

    #[test]
    fn the_papers_gains_satisfy_the_stability_condition_and_larger_ones_do_not() {
        // XCP Theorem 1: 0 < alpha < pi / (4 sqrt 2) = 0.555, beta = alpha^2 sqrt 2.
        assert!(XcpRouterConfig::default().is_stable());
        let too_fast = XcpRouterConfig { alpha: 0.6, beta: 0.6 * 0.6 * std::f64::consts::SQRT_2, ..Default::default() };
        assert!(!too_fast.is_stable());
        let wrong_beta = XcpRouterConfig { beta: 0.4, ..Default::default() };
        assert!(!wrong_beta.is_stable());
    }

    /// A fluid model of the aggregate (XCP section 4): every interval the
    /// input rate changes by phi / d, computed from what the router saw one
    /// interval ago; the queue integrates the excess. Returns the largest
    /// |rate error| over the last 20 intervals, relative to capacity.
    fn fluid(cfg: &XcpRouterConfig, intervals: usize) -> f64 {
        let (c, d) = (1e7, 0.1); // 10 MB/s, 100 ms
        let (mut y, mut q) = (0.1 * c, 0.0f64);
        let mut seen = (y, q);
        let mut err = 0.0f64;
        for k in 0..intervals {
            let phi = cfg.aggregate_feedback(d, c - seen.0, seen.1);
            seen = (y, q);
            y = (y + phi / d).max(0.0);
            q = (q + (y - c) * d).max(0.0);
            if k + 20 >= intervals {
                err = err.max((y - c).abs() / c);
            }
        }
        err
    }

    #[test]
    fn the_efficiency_controller_converges_to_capacity_with_the_papers_gains() {
        // Guards eq. 1's signs and units: the aggregate settles at C with an
        // empty queue; gains far outside Theorem 1's region oscillate.
        assert!(fluid(&XcpRouterConfig::default(), 200) < 1e-3);
        let unstable = XcpRouterConfig { alpha: 1.5, beta: 1.5 * 1.5 * std::f64::consts::SQRT_2, ..Default::default() };
        assert!(fluid(&unstable, 200) > 0.1);
    }

    #[test]
    fn feedback_over_an_interval_sums_to_phi_and_gives_every_flow_the_same_increase() {
        // Hand-computed: C = 10 Mb/s = 1.25 MB/s, d = 100 ms, y = 30 kB per
        // interval (300 kB/s), Q = 0: S = 950 kB/s,
        // phi = 0.4 * 0.1 * 950_000 = 38_000 B; h = max(0, 3_000 - 38_000) = 0;
        // sum(rtt s / cwnd) = 10 * 0.1 * 1000 / 10_000 + 20 * 0.1 * 1000 / 20_000 = 0.2 s,
        // xi_p = 38_000 / (0.1 * 0.2) = 1.9e6; p_A = 1.9e6 * 0.01 * 1000 / 10_000
        // = 1_900 B per packet (10 packets), p_B = 950 B (20 packets):
        // each flow +19_000 B of window, together phi.
        let q = queue(10, 0);
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        interval(&mut r, Time::ZERO, &q);
        let (a, b) = interval(&mut r, Time::from_millis(100), &q);
        assert!((r.current.d - 0.1).abs() < 1e-9);
        assert!((r.current.phi - 38_000.0).abs() < 1e-6, "phi {}", r.current.phi);
        assert_eq!(r.current.h, 0.0);
        assert_eq!((a, b), (19_000, 19_000));
    }

    #[test]
    fn an_interval_never_hands_out_more_than_it_decided_when_traffic_grows() {
        // The hand-computed interval above decides phi = 38_000 B for 30
        // packets of two flows. Then new flows get their first RTT estimate
        // and three times the packets arrive: without the budget each would
        // get its share again (114_000 B in all); with it the interval stops
        // at phi, and the first packets, as computed, get their full share.
        let q = queue(10, 0);
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        interval(&mut r, Time::ZERO, &q);
        interval(&mut r, Time::from_millis(100), &q);
        let phi = r.current.phi;
        let mut total = 0i64;
        let mut first = None;
        for k in 0..90u64 {
            let at = Time::from_millis(200) + Time::from_micros(k * 100_000 / 90);
            let f = pass(&mut r, at, 3 + (k % 6) as u32, 10_000, 100_000, &q) as i64;
            first.get_or_insert(f);
            total += f;
        }
        assert_eq!(first, Some(1_900), "p = xi_p rtt^2 s / cwnd, as in the interval above");
        assert!((total as f64 - phi).abs() <= 90.0, "handed out {total} B of {phi} B");
    }

    #[test]
    fn an_intervals_budget_is_a_rate_so_long_rtt_flows_get_the_rate_increase_it_decided() {
        // The hand-computed interval above decides phi = 38_000 B with
        // d = 100 ms and h = 0: the aggregate may grow by phi / d =
        // 380_000 B/s. Then only a flow with a 400 ms RTT sends, more packets
        // than the budget covers. Its share per packet is xi_p rtt^2 s / cwnd
        // = 1.9e6 * 0.16 * 1000 / 10_000 = 30_400 B of window, a rate of
        // 76_000 B/s: five packets exhaust the budget, 152_000 B of window in
        // all, 380_000 B/s. A budget kept in window bytes (38_000) stopped
        // after 38_000 B of window: a quarter of the rate decided.
        let q = queue(10, 0);
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        interval(&mut r, Time::ZERO, &q);
        interval(&mut r, Time::from_millis(100), &q);
        let rate = r.current.phi / r.current.d;
        let mut window = 0i64;
        for k in 0..90u64 {
            let at = Time::from_millis(200) + Time::from_micros(k * 100_000 / 90);
            window += pass(&mut r, at, 7, 10_000, 400_000, &q) as i64;
        }
        assert_eq!(window, 152_000, "5 full shares of 30_400 B");
        assert!((window as f64 / 0.4 - rate).abs() <= 1.0, "{} B/s of {rate} B/s", window as f64 / 0.4);
    }

    #[test]
    fn a_persistent_queue_turns_the_feedback_negative_in_proportion_to_throughput() {
        // Link exactly full (y = C d = 125 kB per 100 ms would need 125
        // packets; here: C = 2.4 Mb/s = 300 kB/s = 30 kB per interval) and a
        // standing queue of 10 kB: phi = -0.226 * 10_000 = -2_260 B,
        // h = max(0, 0.1 * 30_000 - 2_260) = 740 B. Negative feedback is
        // h + 2_260 = 3_000 B spread in proportion to bytes sent (A 1/3,
        // B 2/3); positive h = 740 B equally: A 370 - 1_000, B 370 - 2_000.
        let q = QueueState { backlog_bytes: 10_000, capacity_bytes: 100_000, rate: Rate::kbps(2_400) };
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        interval(&mut r, Time::ZERO, &q);
        let (a, b) = interval(&mut r, Time::from_millis(100), &q);
        assert!((r.current.phi + 2_260.0).abs() < 1e-6, "phi {}", r.current.phi);
        assert!((r.current.h - 740.0).abs() < 1e-6, "h {}", r.current.h);
        // Per packet, exactly: A (10 packets) 37 - 100, B (20) 18.5 - 100.
        assert!((r.feedback(1000.0, 10_000.0, 0.1) + 63.0).abs() < 1e-9);
        assert!((r.feedback(1000.0, 20_000.0, 0.1) + 81.5).abs() < 1e-9);
        // In whole bytes on the wire: within half a byte per packet.
        assert_eq!(a, -630);
        assert!((b + 1_630).abs() <= 10, "B {b}");
    }

    /// Passes one ACK of `size` bytes (echoed feedback, no data).
    fn pass_ack(r: &mut XcpRouter, at: Time, size: u32, q: &QueueState) {
        let mut ib = InBand::Xcp(XcpFields { cwnd: 0, rtt_us: 100_000, feedback: 700, ack: true });
        let tcp = TcpMeta { payload_len: 0, ..meta(1) };
        let mut p = ForwardPacket { tcp: Some(tcp), size, inband: Some(&mut ib) };
        r.on_enqueue(at, &mut p, q);
        r.on_dequeue(at, &mut p, q);
        assert_eq!(
            ib,
            InBand::Xcp(XcpFields { cwnd: 0, rtt_us: 100_000, feedback: 700, ack: true }),
            "ACKs pass untouched"
        );
    }

    #[test]
    fn negative_feedback_is_spread_over_every_byte_that_arrived_acks_included() {
        // XCP section 3.5: xi_n = (h + max(-phi, 0)) / (d sum(s)), the sum
        // over all packets of the interval; the authors' ns-2 router divides
        // by every byte that arrived (xcpq.cc L 14, `input_traffic_bytes_`).
        // The interval of the test above (phi = -2_260 B, h = 740 B at
        // 30 kB of data) with 30 ACKs of 1000 B besides: y doubles to
        // 60_000 B, so S = 300_000 - 600_000 = -300_000 B/s and
        // phi = 0.4 * 0.1 * -300_000 - 2_260 = -14_260 B, h = 0; negative
        // feedback 14_260 B over 60_000 B: per data packet of 1000 B and
        // RTT 0.1 s, n = xi_n rtt s = 14_260 / (0.1 * 60_000) * 0.1 * 1000
        // = 237.7 B. Taken over the data bytes alone it was twice that.
        let q = QueueState { backlog_bytes: 10_000, capacity_bytes: 100_000, rate: Rate::kbps(2_400) };
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        for from in [Time::ZERO, Time::from_millis(100)] {
            interval(&mut r, from, &q);
            for k in 0..30u64 {
                pass_ack(&mut r, from + Time::from_micros(k * 100_000 / 30 + 1), 1000, &q);
            }
        }
        assert!((r.current.phi + 14_260.0).abs() < 1e-6, "phi {}", r.current.phi);
        assert_eq!(r.current.h, 0.0);
        let n = -r.feedback(1000.0, 10_000.0, 0.1);
        assert!((n - 14_260.0 / 60.0).abs() < 1e-9, "n {n}");
    }

    #[test]
    fn the_shares_are_sized_by_the_last_intervals_sums_as_the_paper_writes_them() {
        // XCP section 3.5's xi_p = (h + max(phi, 0)) / (d sum(rtt s / cwnd)),
        // the sum over the last interval, with d the new average RTT (ns-2:
        // Cp_ = residue_pos_fbk_ / sum_inv_throughput_, xcpq.cc L 13).
        // The first interval lasts the initial 100 ms; its flows' RTT is
        // 200 ms, so the next d is 0.2 s. 30 packets of 1000 B, cwnd 10 kB:
        // sum(rtt s / cwnd) = 30 * 0.2 * 0.1 = 0.6 s; y = 300 kB/s,
        // S = 950 kB/s, phi = 0.4 * 0.2 * 950_000 = 76_000 B, h = 0;
        // xi_p = 76_000 / (0.2 * 0.6) = 633_333; p = xi_p rtt^2 s / cwnd =
        // 633_333 * 0.04 * 0.1 = 2_533 B. Rescaling the sum to the next
        // interval's length (x 2) halved it.
        let q = queue(10, 0);
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        for k in 0..30u64 {
            pass(&mut r, Time::from_micros(k * 100_000 / 30), 1, 10_000, 200_000, &q);
        }
        let first = pass(&mut r, Time::from_millis(100), 1, 10_000, 200_000, &q);
        assert!((r.current.d - 0.2).abs() < 1e-9, "d {}", r.current.d);
        assert!((r.current.phi - 76_000.0).abs() < 1e-6, "phi {}", r.current.phi);
        assert_eq!(first, 2_533);
    }

    #[test]
    fn the_persistent_queue_is_the_minimum_over_the_last_propagation_delay_not_the_whole_interval() {
        // SPEC.md 2.7. 100 packets of 1000 B per 100 ms interval (RTT 100
        // ms) on a 10 Mb/s link (1.25 MB/s); the queue is empty for the
        // first 10 ms of every interval and holds 20 kB after. Queue windows:
        // the first ends at max(2 ms, 100 ms / 2) = 50 ms, the next
        // (100 ms - 20_000 / 1.25e6 s) / 2 = 42 ms later, at 92 ms, with a
        // minimum of 20 kB. At the decision (t = 100 ms): S = 1.25e6 - 1e6 =
        // 250 kB/s, phi = 0.4 * 0.1 * 250_000 - 0.226 * 20_000 = 5_480 B.
        // The minimum over the whole interval would be 0 (phi = 10_000 B).
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        for k in 0..101u64 {
            let at = Time::from_millis(k);
            let q = queue(10, if k % 100 < 10 { 0 } else { 20_000 });
            pass(&mut r, at, 1, 10_000, 100_000, &q);
        }
        assert_eq!(r.current.d, 0.1);
        assert!((r.current.phi - 5_480.0).abs() < 1e-6, "phi {}", r.current.phi);
    }

    #[test]
    fn feedback_cut_upstream_counts_as_negative_feedback_given_here_so_local_flows_are_not_cut_twice() {
        // The persistent-queue interval above (phi = -2_260 B, h = 740 B:
        // 3_000 B to take back, 740 B to give; per packet A 37 - 100 B,
        // B 18.5 - 100 B), then an interval in which B's 20 packets arrive
        // carrying -1_000 B from a bottleneck upstream (ns-2 xcpq.cc L 26-27).
        // Each B packet's shortfall, 918.5 B, counts as negative feedback
        // given here: the 3_000 B are used up by the fifth packet (A, B, B,
        // A, B), after which A's packets get their positive share only:
        // A = 2 * -63 + 8 * 37 = 170 B. Charging B our own shares instead
        // cuts A by the full 10 * 63 = 630 B although B alone is cut by
        // 20_000 B, more than this link's phi asks for.
        let q = QueueState { backlog_bytes: 10_000, capacity_bytes: 100_000, rate: Rate::kbps(2_400) };
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        interval(&mut r, Time::ZERO, &q);
        interval(&mut r, Time::from_millis(100), &q);
        let (mut a, mut b) = (0i64, 0i64);
        for k in 0..30u64 {
            let at = Time::from_millis(200) + Time::from_micros(k * 100_000 / 30);
            let (src, cwnd, carried) = if k % 3 == 0 { (1, 10_000, i32::MAX) } else { (2, 20_000, -1_000) };
            let mut ib = InBand::Xcp(XcpFields { cwnd, rtt_us: 100_000, feedback: carried, ack: false });
            let mut p = ForwardPacket { tcp: Some(meta(src)), size: 1000, inband: Some(&mut ib) };
            r.on_enqueue(at, &mut p, &q);
            r.on_dequeue(at, &mut p, &q);
            let InBand::Xcp(x) = ib else { unreachable!() };
            if src == 1 {
                a += x.feedback as i64;
            } else {
                b += x.feedback as i64;
            }
        }
        assert!((r.current.phi + 2_260.0).abs() < 1e-6, "phi {}", r.current.phi);
        assert_eq!(b, -20_000, "B leaves with what it carried");
        assert_eq!(a, 170);
    }

    #[test]
    fn the_control_interval_is_the_average_rtt_of_the_flows_not_of_the_bytes() {
        // One 100 ms interval: A (RTT 40 ms, cwnd 40 kB, 1 MB/s) sends 100
        // packets, B (RTT 400 ms, cwnd 40 kB, 100 kB/s) 10. Each flow's
        // packets weigh rtt s / cwnd = 0.1 in all, so d = (0.04 + 0.4) / 2 =
        // 220 ms, the flows' mean RTT (ns-2 xcpq.cc L 7). Weighted by bytes
        // it would be (100 * 0.04 + 10 * 0.4) / 110 = 72.7 ms, A's alone
        // nearly.
        let q = queue(100, 0);
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        for k in 0..110u64 {
            let at = Time::from_micros(k * 100_000 / 110);
            let rtt = if k % 11 == 10 { 400_000 } else { 40_000 };
            pass(&mut r, at, (k % 11 == 10) as u32, 40_000, rtt, &q);
        }
        pass(&mut r, Time::from_millis(100), 0, 40_000, 40_000, &q);
        assert!((r.current.d - 0.22).abs() < 1e-9, "d {}", r.current.d);
    }

    #[test]
    fn a_router_only_lowers_the_feedback_and_leaves_acks_alone() {
        let q = queue(10, 0);
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        interval(&mut r, Time::ZERO, &q);
        // Upstream already asked for less than we would give: kept.
        let mut ib = InBand::Xcp(XcpFields { cwnd: 10_000, rtt_us: 100_000, feedback: -5, ack: false });
        let mut p = ForwardPacket { tcp: Some(meta(1)), size: 1000, inband: Some(&mut ib) };
        r.on_dequeue(Time::from_millis(100), &mut p, &q);
        assert_eq!(ib, InBand::Xcp(XcpFields { cwnd: 10_000, rtt_us: 100_000, feedback: -5, ack: false }));
        // An echoed ACK passes untouched whatever it says.
        let echo = InBand::Xcp(XcpFields { feedback: 12_345, ack: true, ..Default::default() });
        let mut ib = echo;
        let mut m = meta(1);
        m.payload_len = 0;
        let mut p = ForwardPacket { tcp: Some(m), size: 52, inband: Some(&mut ib) };
        r.on_dequeue(Time::from_millis(101), &mut p, &q);
        assert_eq!(ib, echo);
        // No RTT estimate yet: at most zero.
        assert_eq!(pass(&mut r, Time::from_millis(102), 3, 10_000, 0, &q), 0);
    }
}
