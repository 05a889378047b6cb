//! CUBIC (RFC 9438) with ns-3's HyStart (Ha, Rhee: "Taming the elephants",
//! as in Linux `tcp_cubic.c` and ns-3 `tcp-cubic.cc`).
//!
//! Windows inside the algorithm are in segments (f64), as in the RFC; the
//! connection's [`Window`] is in bytes. Fractions of a byte of growth are
//! carried over between ACKs so slow growth is not lost to rounding.
//!
//! Known differences from ns-3 3.44, kept on purpose: the increase is the
//! RFC's per-ACK `(target - cwnd) / cwnd` in bytes instead of ns-3's
//! segment counter `cnt`; the Reno-friendly estimate follows RFC 9438
//! section 4.3 (W_est per ACK, alpha switching to 1 above cwnd_prior).

use netreturn_base::Time;

use super::{Ack, CongestionControl, Window};

/// CUBIC settings. `Default` = ns-3 3.44 (SPEC.md section 6).
/// A scenario's `tcp.cubic = { ... }` table sets any of these by name.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// C, segments / s^3 (RFC 9438 section 5: 0.4).
    pub c: f64,
    /// beta_cubic, multiplicative decrease factor (RFC 9438: 0.7).
    pub beta: f64,
    /// Fast convergence, RFC 9438 section 4.7.
    pub fast_convergence: bool,
    /// Reno-friendly region, RFC 9438 section 4.3.
    pub tcp_friendliness: bool,
    /// The Reno-friendly estimate's slope once it passes the cwnd of the
    /// last reduction ([`RenoAlpha`]).
    pub reno_alpha: RenoAlpha,
    pub hystart: bool,
    /// Whose HyStart tests (`"ns3"`, the default, or `"linux"`).
    pub hystart_rule: HystartRule,
    /// HyStart runs only once cwnd reaches this many segments.
    pub hystart_low_window: u32,
    /// RTT samples per round before the delay test is made.
    /// (8 bits: with `reno_alpha` and the whole-segment switches the config
    /// stays 64 bytes, so a connection's settings keep their cache-line
    /// layout; ns-3's default 8, Linux's `HYSTART_MIN_SAMPLES` 8.)
    pub hystart_min_samples: u8,
    /// ACKs closer than this belong to one ACK train.
    pub hystart_ack_delta: Time,
    /// Bounds of the delay-increase threshold.
    pub hystart_delay_min: Time,
    pub hystart_delay_max: Time,
    /// Delay samples are ignored this long after an epoch starts (ns-3
    /// `CubicDelta`).
    pub cubic_delta: Time,
    /// Before the first loss, cwnd grows by at least 1 segment per
    /// `cnt_clamp` segments acknowledged (ns-3 / Linux `CntClamp`).
    pub cnt_clamp: u32,
    /// ssthresh after a reduction in whole segments, beta x cwnd rounded
    /// down, as ns-3 3.44 `TcpCubic::GetSsThresh` and Linux
    /// `bictcp_recalc_ssthresh`; `false` (the default) beta x cwnd in bytes
    /// (RFC 9438 section 4.6). (One byte: the config stays 64 bytes.)
    pub whole_segment_ssthresh: bool,
    /// Congestion avoidance in whole segments, as ns-3 3.44
    /// `TcpCubic::IncreaseWindow` and `Update` and Linux `bictcp_update`:
    /// W_max and the epoch's cwnd in whole segments (fast convergence
    /// rounded down), the cubic term C (t - K)^3 truncated to whole
    /// segments before it is added to or taken from the origin, one segment
    /// added once `cnt = cwnd / (target - cwnd)` segments (integer division,
    /// at least 2) are acknowledged, and the Reno-friendly estimate one
    /// segment per `cwnd x 15 / 8` acknowledged (alpha_cubic throughout,
    /// whatever `reno_alpha` says). `false` (the default): RFC 9438's real
    /// W_cubic and W_est, cwnd += (target - cwnd) / cwnd per segment.
    pub whole_segment_target: bool,
}

impl Default for CubicConfig {
    fn default() -> CubicConfig {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
            reno_alpha: RenoAlpha::Rfc9438,
            hystart: true,
            hystart_rule: HystartRule::Ns3,
            hystart_low_window: 16,
            hystart_min_samples: 8,
            hystart_ack_delta: Time::from_millis(2),
            hystart_delay_min: Time::from_millis(4),
            hystart_delay_max: Time::from_secs(1),
            cubic_delta: Time::from_millis(10),
            cnt_clamp: 20,
            whole_segment_ssthresh: false,
            whole_segment_target: false,
        }
    }
}

/// How W_est (the Reno-friendly estimate, RFC 9438 section 4.3) grows once
/// it reaches `cwnd_prior`, the cwnd at the last reduction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RenoAlpha {
    /// RFC 9438 section 4.3: "Once W_est has grown to reach the cwnd at the
    /// time of most recently setting ssthresh ... the sender SHOULD set
    /// α_cubic to 1", Reno's slope.
    #[default]
    Rfc9438,
    /// α_cubic = 3 (1 - β) / (1 + β) throughout, as Linux `bictcp_update`
    /// (`tcp_cwnd` one segment per `cwnd * beta_scale >> 3` acked) and ns-3
    /// 3.44 `TcpCubic::Update` (`m_tcpCwnd`, `m_ackCnt`), which have no switch.
    Linux,
}

/// The two HyStart variants in use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HystartRule {
    /// ns-3 3.44 `TcpCubic::HystartUpdate`: the ACK train ends slow start
    /// once it spans delay_min; the delay test compares the minimum of a
    /// round's first `hystart_min_samples` RTTs with delay_min plus
    /// delay_min clamped to [`hystart_delay_min`, `hystart_delay_max`].
    #[default]
    Ns3,
    /// Linux 6.x `tcp_cubic.c` `hystart_update`, with its constants: the
    /// ACK train ends slow start once it spans half of delay_min plus
    /// `hystart_ack_delay` (Linux halves it when the socket is not paced
    /// by fq, as a kernel without fq sends); the delay test compares the
    /// round's minimum RTT with delay_min + clamp(delay_min / 8, 4 ms,
    /// 16 ms) (`HYSTART_DELAY_THRESH`) once 8 samples are in.
    Linux,
}

/// Linux `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX` (tcp_cubic.c).
const LINUX_DELAY_MIN: Time = Time::from_millis(4);
const LINUX_DELAY_MAX: Time = Time::from_millis(16);
/// `sk_gso_max_size` of a veth or a common NIC (64 KiB), for
/// `hystart_ack_delay`.
const LINUX_GSO_MAX_SIZE: f64 = 65_536.0;

/// The counters of [`CubicConfig::whole_segment_target`], in segments.
#[derive(Clone, Copy, Debug, Default)]
struct WholeSegments {
    cwnd_cnt: u64,
    ack_cnt: u64,
    tcp_cwnd: u64,
    bytes: u64,
}

#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// W_max, segments: the window just before the last reduction (after
    /// fast convergence). 0 before the first loss.
    w_max: f64,
    /// cwnd before the last reduction (RFC 9438 section 4.3, cwnd_prior).
    cwnd_prior: f64,
    /// K, seconds.
    k: f64,
    /// The plateau W_cubic aims at (W_max, or cwnd_epoch when above it).
    origin: f64,
    epoch_start: Option<Time>,
    /// W_est, segments (RFC 9438 section 4.3).
    w_est: f64,
    /// Growth below one byte carried to the next ACK.
    carry: f64,
    /// `whole_segment_target`: segments acknowledged towards the next
    /// one-segment step (ns-3 `m_cWndCnt`), towards the Reno-friendly
    /// estimate's next segment (`m_ackCnt`), the estimate (`m_tcpCwnd`),
    /// and acknowledged bytes short of a whole segment.
    seg: WholeSegments,
    delay_min: Option<Time>,
    // HyStart round state.
    found: bool,
    round_start: Time,
    last_ack: Time,
    end_seq: u64,
    curr_rtt: Option<Time>,
    sample_cnt: u32,
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Cubic {
        Cubic {
            cfg,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            origin: 0.0,
            epoch_start: None,
            w_est: 0.0,
            carry: 0.0,
            seg: WholeSegments::default(),
            delay_min: None,
            found: false,
            round_start: Time::ZERO,
            last_ack: Time::ZERO,
            end_seq: 0,
            curr_rtt: None,
            sample_cnt: 0,
        }
    }

    pub fn w_max(&self) -> f64 {
        self.w_max
    }
    pub fn k(&self) -> f64 {
        self.k
    }
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// alpha_cubic = 3 (1 - beta) / (1 + beta), RFC 9438 section 4.3 (Eq. 5).
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta)
    }

    /// W_cubic(t) = C (t - K)^3 + W_max, RFC 9438 section 4.2 (Eq. 1), in
    /// segments, t in seconds since the epoch started.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.cfg.c * (t - self.k).powi(3) + self.origin
    }

    /// Starts a congestion-avoidance epoch at window `cwnd` (segments).
    fn start_epoch(&mut self, now: Time, cwnd: f64) {
        self.epoch_start = Some(now);
        self.carry = 0.0;
        if self.w_max > cwnd {
            // K = cbrt((W_max - cwnd_epoch) / C), RFC 9438 section 4.2 (Eq. 2).
            self.k = ((self.w_max - cwnd) / self.cfg.c).cbrt();
            self.origin = self.w_max;
        } else {
            // Above the old maximum: convex region right away (K = 0).
            self.k = 0.0;
            self.origin = cwnd;
        }
        self.w_est = cwnd;
    }

    /// [`CubicConfig::whole_segment_target`]: ns-3 3.44 `TcpCubic::IncreaseWindow`
    /// (one segment once `m_cWndCnt` reaches `cnt`) over `Update` (the
    /// target and `cnt` in whole segments, the Reno-friendly `m_tcpCwnd`).
    fn congestion_avoidance_whole(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        let bytes = self.seg.bytes + ack.acked;
        let segs = bytes / w.mss;
        self.seg.bytes = bytes % w.mss;
        if segs == 0 {
            return;
        }
        let seg_cwnd = w.cwnd / w.mss;
        self.seg.cwnd_cnt += segs;
        self.seg.ack_cnt += segs;
        if self.epoch_start.is_none() {
            self.epoch_start = Some(now);
            self.seg.ack_cnt = segs;
            self.seg.tcp_cwnd = seg_cwnd;
            // W_max is whole segments (ssthresh_after_loss); K from them.
            if self.w_max <= seg_cwnd as f64 {
                self.k = 0.0;
                self.origin = seg_cwnd as f64;
            } else {
                self.k = ((self.w_max - seg_cwnd as f64) / self.cfg.c).cbrt();
                self.origin = self.w_max;
            }
        }
        let epoch = self.epoch_start.unwrap_or(now);
        // t = now + delay_min - epoch start (ns-3 `m_delayMin`).
        let t = now.saturating_sub(epoch).secs_f64() + self.delay_min.map_or(0.0, |d| d.secs_f64());
        // delta = C |t - K|^3 in whole segments (`uint32_t delta`).
        let delta = (self.cfg.c * (t - self.k).abs().powi(3)) as u64;
        let origin = self.origin as u64;
        let target = if t < self.k { origin.saturating_sub(delta) } else { origin + delta };
        let mut cnt = if target > seg_cwnd { seg_cwnd / (target - seg_cwnd) } else { 100 * seg_cwnd };
        if self.w_max == 0.0 && cnt > u64::from(self.cfg.cnt_clamp) {
            cnt = u64::from(self.cfg.cnt_clamp);
        }
        if self.cfg.tcp_friendliness {
            // One segment of the estimate per cwnd x scale / 8 acknowledged,
            // scale = 8 (1024 + 1024 beta) / 3 / (1024 - 1024 beta) = 15 at
            // beta 0.7: alpha_cubic per round trip (Linux `beta_scale`).
            let scale = (8.0 * (1024.0 + self.cfg.beta * 1024.0) / 3.0 / (1024.0 - self.cfg.beta * 1024.0)) as u64;
            let step = (seg_cwnd * scale) >> 3;
            while step > 0 && self.seg.ack_cnt > step {
                self.seg.ack_cnt -= step;
                self.seg.tcp_cwnd += 1;
            }
            if self.seg.tcp_cwnd > seg_cwnd {
                cnt = cnt.min(seg_cwnd / (self.seg.tcp_cwnd - seg_cwnd));
            }
        }
        // At most one segment per two acknowledged (cwnd x 1.5 per RTT).
        let cnt = cnt.max(2);
        if self.seg.cwnd_cnt >= cnt {
            w.cwnd += w.mss;
            self.seg.cwnd_cnt -= cnt;
        }
    }

    fn hystart_reset(&mut self, now: Time, snd_max: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_max;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// HyStart (ns-3 `HystartUpdate`): leave slow start when an ACK train
    /// has lasted longer than the minimum delay, or when the minimum RTT of
    /// this round exceeds delay_min by a clamped threshold.
    fn hystart_update(&mut self, now: Time, delay: Time, w: &mut Window, ack: &Ack) {
        if self.found {
            return;
        }
        if self.cfg.hystart_rule == HystartRule::Linux {
            self.hystart_update_linux(now, delay, w, ack);
            return;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if now.saturating_sub(self.last_ack) <= self.cfg.hystart_ack_delta {
            self.last_ack = now;
            if now.saturating_sub(self.round_start) > delay_min {
                self.found = true;
            }
        }
        if self.sample_cnt < u32::from(self.cfg.hystart_min_samples) {
            self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
            self.sample_cnt += 1;
        } else {
            // ns-3 clamps delay_min itself (Linux uses delay_min / 8).
            let thresh = delay_min.max(self.cfg.hystart_delay_min).min(self.cfg.hystart_delay_max);
            if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                self.found = true;
            }
        }
        if self.found {
            w.ssthresh = w.cwnd;
        }
    }

    /// Linux 6.x `hystart_update` (net/ipv4/tcp_cubic.c), both detectors on
    /// (`hystart_detect` = 3).
    fn hystart_update_linux(&mut self, now: Time, delay: Time, w: &mut Window, ack: &Ack) {
        // A new round once SND.UNA passes the round's end.
        if ack.snd_una > self.end_seq {
            self.hystart_reset(now, ack.snd_max);
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if now.saturating_sub(self.last_ack) <= self.cfg.hystart_ack_delta {
            self.last_ack = now;
            // threshold = (delay_min + hystart_ack_delay) >> 1 when not paced.
            let threshold = Time::from_nanos((delay_min + Self::linux_ack_delay(w, ack.srtt)).nanos() / 2);
            if now.saturating_sub(self.round_start) > threshold {
                self.found = true;
            }
        }
        // The round's minimum over every sample, tested from the 8th on.
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < u32::from(self.cfg.hystart_min_samples) {
            self.sample_cnt += 1;
        } else {
            let thresh = Time::from_nanos(delay_min.nanos() / 8).max(LINUX_DELAY_MIN).min(LINUX_DELAY_MAX);
            if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                self.found = true;
            }
        }
        if self.found {
            w.ssthresh = w.cwnd;
        }
    }

    /// Linux `hystart_ack_delay`: min(1 ms, 4 x GSO size / pacing rate),
    /// with the rate Linux computes for every socket
    /// (`tcp_update_pacing_rate`: cwnd x MSS / srtt, times 2 in slow start);
    /// 0 before an RTT sample, as with no rate.
    fn linux_ack_delay(w: &Window, srtt: Option<Time>) -> Time {
        let Some(srtt) = srtt.filter(|s| *s > Time::ZERO) else { return Time::ZERO };
        let rate = 2.0 * w.cwnd as f64 / srtt.secs_f64(); // bytes / s
        if rate <= 0.0 {
            return Time::ZERO;
        }
        Time::from_secs_f64(4.0 * LINUX_GSO_MAX_SIZE / rate).min(Time::from_millis(1))
    }

    /// Growth in congestion avoidance, RFC 9438 sections 4.2 to 4.5.
    fn congestion_avoidance(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        if self.cfg.whole_segment_target {
            self.congestion_avoidance_whole(now, w, ack);
            return;
        }
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        if self.epoch_start.is_none() {
            self.start_epoch(now, cwnd);
        }
        let epoch = self.epoch_start.unwrap_or(now);
        let t = now.saturating_sub(epoch).secs_f64();
        let rtt = self.delay_min.or(ack.srtt).map_or(0.0, |r| r.secs_f64());
        // target = W_cubic(t + RTT) bounded to [cwnd, 1.5 cwnd], RFC 9438
        // section 4.2 (Eq. 3).
        let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
        let acked = ack.acked as f64 / mss;
        // Concave and convex regions, RFC 9438 sections 4.4 and 4.5:
        // cwnd += (target - cwnd) / cwnd for each segment acknowledged.
        let mut inc = (target - cwnd) / cwnd * acked;
        if self.w_max == 0.0 && self.cfg.cnt_clamp > 0 {
            // Before any loss, at least 1 segment per cnt_clamp ACKed (ns-3).
            inc = inc.max(acked / self.cfg.cnt_clamp as f64);
        }
        if self.cfg.tcp_friendliness {
            // alpha switches to 1 once W_est passes cwnd_prior (section 4.3).
            let one = self.w_est >= self.cwnd_prior && self.cfg.reno_alpha == RenoAlpha::Rfc9438;
            let alpha = if one { 1.0 } else { self.alpha_cubic() };
            // W_est += alpha_cubic * segments_acked / cwnd, RFC 9438 section
            // 4.3 (Eq. 4).
            self.w_est += alpha * acked / cwnd;
            if self.w_cubic(t) < self.w_est {
                // Reno-friendly region: cwnd = W_est.
                inc = inc.max(self.w_est - cwnd);
            }
        }
        self.carry += inc * mss;
        let add = self.carry.floor();
        self.carry -= add;
        w.cwnd += add as u64;
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        if let Some(rtt) = ack.rtt {
            // Discard delay samples right after an epoch starts (ns-3
            // PktsAcked, CubicDelta).
            let fresh = self.epoch_start.is_some_and(|e| now.saturating_sub(e) < self.cfg.cubic_delta);
            if !fresh {
                self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
                if self.cfg.hystart && w.cwnd <= w.ssthresh && w.cwnd >= self.cfg.hystart_low_window as u64 * w.mss {
                    self.hystart_update(now, rtt, w, ack);
                }
            }
        }
        // ns-3 TcpCubic::IncreaseWindow: no growth unless cwnd limited (the
        // delay samples above are taken regardless, as ns-3's PktsAcked).
        if !ack.cwnd_limited {
            return;
        }
        if w.in_slow_start() {
            if self.cfg.hystart && self.cfg.hystart_rule == HystartRule::Ns3 && ack.snd_una > self.end_seq {
                self.hystart_reset(now, ack.snd_max);
            }
            // Byte counting with no per-ACK limit (ns-3 CUBIC, standing in
            // for Linux's quick ACKs), but never past ssthresh in one step:
            // the rest goes to congestion avoidance (Linux tcp_slow_start).
            // After a timeout one ACK can cover hundreds of segments the
            // receiver held; growing cwnd by all of them would burst them.
            let left = super::reno::slow_start(w, ack.acked, u64::MAX / w.mss.max(1));
            if left == 0 {
                return;
            }
            let rest = Ack { acked: left, ..*ack };
            self.congestion_avoidance(now, w, &rest);
            return;
        }
        self.congestion_avoidance(now, w, ack);
    }

    fn ssthresh_after_loss(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        let seg_cwnd = w.cwnd as f64 / w.mss as f64;
        self.cwnd_prior = seg_cwnd;
        // Fast convergence, RFC 9438 section 4.7 (Eq. 7): a flow that lost
        // below its previous W_max releases bandwidth for newcomers.
        self.w_max = if self.cfg.whole_segment_target {
            // ns-3 3.44 `TcpCubic::GetSsThresh`: `m_lastMaxCwnd` (uint32)
            // from the cwnd in whole segments, fast convergence rounded down.
            let seg = seg_cwnd.floor();
            if self.cfg.fast_convergence && seg < self.w_max {
                (seg * (1.0 + self.cfg.beta) / 2.0).floor()
            } else {
                seg
            }
        } else if self.cfg.fast_convergence && seg_cwnd < self.w_max {
            seg_cwnd * (1.0 + self.cfg.beta) / 2.0
        } else {
            seg_cwnd
        };
        self.epoch_start = None;
        // ssthresh = cwnd * beta_cubic, at least 2 segments: RFC 9438
        // section 4.6 (`flight_size * beta_cubic`; it allows cwnd in place
        // of flight_size when cwnd does not grow while the sender is not
        // cwnd-limited, as here: `Ack::cwnd_limited`), on cwnd as it is:
        // ours' cwnd grows by bytes, not whole segments. ns-3 and Linux truncate
        // `segCwnd * beta` once, on a cwnd that their CUBIC keeps in whole
        // segments; truncating ours' byte cwnd to segments and then the
        // product again (what this did before) cut by 0.62 on average in
        // EWT scenario 2, not 0.7 (docs/validation.md, 2026-11-23).
        let mut ssthresh = (w.cwnd as f64 * self.cfg.beta) as u64;
        if self.cfg.whole_segment_ssthresh {
            // ns-3 3.44 `TcpCubic::GetSsThresh`: `max(uint32(segCwnd *
            // m_beta), 2) * m_segmentSize`, and Linux `bictcp_recalc_ssthresh`
            // (`snd_cwnd * beta / BICTCP_BETA_SCALE` packets): ssthresh in
            // whole segments, rounded down. Their cwnd is whole segments in
            // congestion avoidance, so beta x cwnd is truncated once; ours'
            // byte cwnd is truncated once too (not to segments first, the
            // 0.62 cut of 2026-11-23).
            ssthresh = ssthresh / w.mss * w.mss;
        }
        ssthresh.max(2 * w.mss)
    }

    fn on_rto(&mut self, now: Time, w: &Window, in_flight: u64) -> u64 {
        let ssthresh = self.ssthresh_after_loss(now, w, in_flight);
        // ns-3 CubicReset on CA_LOSS: forget W_max, K, delay_min and HyStart.
        self.w_max = 0.0;
        self.origin = 0.0;
        self.k = 0.0;
        self.delay_min = None;
        self.found = false;
        self.end_seq = 0;
        ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn after_loss_at(cwnd_segs: u64, cfg: CubicConfig) -> (Cubic, Window) {
        let mut cc = Cubic::new(cfg);
        let mut w = Window { cwnd: cwnd_segs * MSS, ssthresh: u64::MAX, mss: MSS };
        w.ssthresh = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        w.cwnd = w.ssthresh;
        (cc, w)
    }

    fn ack(acked: u64) -> Ack {
        Ack { acked, rtt: None, srtt: None, snd_una: 0, snd_max: 0, cwnd_limited: true }
    }

    #[test]
    fn a_stretch_ack_after_a_timeout_stops_slow_start_at_ssthresh() {
        // After an RTO: cwnd = 1 MSS, ssthresh = 70 MSS. The retransmission
        // fills the receiver's hole and one ACK covers 437 segments. Linux's
        // tcp_slow_start stops at ssthresh and gives the rest to congestion
        // avoidance; growing by all 437 would burst them at line rate.
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = Window { cwnd: MSS, ssthresh: 70 * MSS, mss: MSS };
        cc.on_ack(Time::from_secs(10), &mut w, &ack(437 * MSS));
        assert!(w.cwnd >= 70 * MSS, "reached ssthresh: {}", w.cwnd);
        // The 368 segments left go to congestion avoidance, which before any
        // W_max grows at least one segment per CntClamp = 20 acknowledged
        // (Linux does the same: 368 / 20 = 18).
        assert!(w.cwnd <= 90 * MSS, "far below 437 segments: {}", w.cwnd);
        // Below ssthresh, slow start still counts every byte acknowledged
        // (ns-3 CUBIC, delayed ACKs cover two segments).
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
        cc.on_ack(Time::from_secs(10), &mut w, &ack(2 * MSS));
        assert_eq!(w.cwnd, 12 * MSS);
    }

    #[test]
    fn k_and_w_cubic_match_a_worked_case() {
        // RFC 9438 Eq. 1-2: W_max = 100, cwnd_epoch = 70, C = 0.4:
        // K = cbrt(30 / 0.4) = cbrt(75) = 4.2172 s; W_cubic(0) = 70,
        // W_cubic(K) = 100, W_cubic(K + 1) = 100.4.
        let (mut cc, mut w) = after_loss_at(100, CubicConfig::default());
        assert_eq!(w.ssthresh, 70 * MSS);
        cc.on_ack(Time::from_secs(1), &mut w, &ack(MSS));
        assert!((cc.k() - 75f64.cbrt()).abs() < 1e-9);
        assert!((cc.k() - 4.217_163).abs() < 1e-6);
        assert!((cc.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((cc.w_cubic(cc.k()) - 100.0).abs() < 1e-9);
        assert!((cc.w_cubic(cc.k() + 1.0) - 100.4).abs() < 1e-9);
    }

    #[test]
    fn ssthresh_after_a_loss_is_beta_times_cwnd_in_bytes_not_truncated_to_whole_segments() {
        // RFC 9438 section 4.6: ssthresh = cwnd * beta_cubic. A byte cwnd of
        // 10.9 segments gives 7.63 segments; truncating cwnd to 10 segments
        // and 10 * 0.7 to 7 would cut to 0.64 of it.
        let mut cc = Cubic::new(CubicConfig::default());
        let w = Window { cwnd: 10_900, ssthresh: u64::MAX, mss: MSS };
        let ss = cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        assert!((7_629..=7_630).contains(&ss), "ssthresh {ss}, not 7 000");
        // W_max and cwnd_prior are the window as it was, in segments.
        assert!((cc.w_max() - 10.9).abs() < 1e-9);
        // Never below 2 segments.
        let w = Window { cwnd: 2_500, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd), 2 * MSS);
    }

    #[test]
    fn with_whole_segment_ssthresh_beta_times_cwnd_is_rounded_down_to_segments_as_ns3() {
        // ns-3 3.44 `TcpCubic::GetSsThresh`: max(uint32(segCwnd * 0.7), 2)
        // segments. A whole-segment cwnd of 9 gives 6 segments (0.67 of it),
        // where RFC 9438's beta x cwnd keeps 6.3.
        let cfg = CubicConfig { whole_segment_ssthresh: true, ..CubicConfig::default() };
        let mut cc = Cubic::new(cfg);
        let w = Window { cwnd: 9 * MSS, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd), 6 * MSS);
        assert_eq!(Cubic::new(CubicConfig::default()).ssthresh_after_loss(Time::ZERO, &w, w.cwnd), 6_300);
        // A byte cwnd is truncated once, not to segments first: 11.5
        // segments give 8 (8.05 rounded down), where floor(11 x 0.7) = 7.
        let w = Window { cwnd: 11_500, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd), 8 * MSS);
        // W_max stays the window as it was; never below 2 segments.
        assert!((cc.w_max() - 11.5).abs() < 1e-9);
        let w = Window { cwnd: 2_500, ssthresh: u64::MAX, mss: MSS };
        assert_eq!(cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd), 2 * MSS);
    }

    #[test]
    fn alpha_cubic_is_about_0_53_for_beta_0_7() {
        let cc = Cubic::new(CubicConfig::default());
        assert!((cc.alpha_cubic() - 0.9 / 1.7).abs() < 1e-12);
    }

    #[test]
    fn reno_friendly_region_follows_w_est_when_cubic_is_slower() {
        // Many windows acknowledged within 50 ms of the epoch: W_cubic has
        // hardly moved, while W_est gained alpha_cubic per window (Eq. 4).
        let (mut cc, mut w) = after_loss_at(100, CubicConfig::default());
        let t0 = Time::from_secs(1);
        for round in 0..20 {
            let segs = w.cwnd / MSS;
            for _ in 0..segs {
                cc.on_ack(t0 + Time::from_millis(round as u64 * 2), &mut w, &ack(MSS));
            }
        }
        let cwnd = w.cwnd as f64 / MSS as f64;
        assert!(cc.w_est() > 79.0, "W_est = {}", cc.w_est());
        assert!(cc.w_cubic(0.05) < 72.0, "W_cubic(50 ms) = 71.07");
        assert!((cwnd - cc.w_est()).abs() < 1.0, "cwnd {cwnd} tracks W_est {}", cc.w_est());
    }

    /// W_est's gain over ten windows acknowledged once it has passed
    /// cwnd_prior (100 segments; the loss left cwnd at 70), W_cubic held
    /// near 70 by acknowledging everything within the epoch's first second.
    fn w_est_gain_past_cwnd_prior(rule: RenoAlpha) -> f64 {
        let cfg = CubicConfig { reno_alpha: rule, ..Default::default() };
        let (mut cc, mut w) = after_loss_at(100, cfg);
        let t0 = Time::from_secs(1);
        let window = |cc: &mut Cubic, w: &mut Window, k: u64| {
            for _ in 0..w.cwnd / MSS {
                cc.on_ack(t0 + Time::from_millis(k), w, &ack(MSS));
            }
        };
        let mut k = 0;
        while cc.w_est() < 100.0 {
            window(&mut cc, &mut w, k);
            k += 1;
        }
        let from = cc.w_est();
        for _ in 0..10 {
            window(&mut cc, &mut w, k);
            k += 1;
        }
        assert!(k < 1000 && cc.w_cubic(1.0) < 100.0, "W_cubic still below cwnd_prior");
        cc.w_est() - from
    }

    #[test]
    fn past_cwnd_prior_w_est_grows_like_reno_by_rfc_9438_and_by_alpha_cubic_as_linux() {
        // RFC 9438 section 4.3: alpha_cubic becomes 1 once W_est >= cwnd_prior;
        // Linux bictcp_update and ns-3 TcpCubic::Update keep 3(1-b)/(1+b).
        let rfc = w_est_gain_past_cwnd_prior(RenoAlpha::Rfc9438);
        let linux = w_est_gain_past_cwnd_prior(RenoAlpha::Linux);
        assert!((rfc - 10.0).abs() < 0.5, "RFC 9438: about a segment per window, {rfc}");
        assert!((linux - 10.0 * 0.9 / 1.7).abs() < 0.5, "Linux: alpha_cubic per window, {linux}");
    }

    #[test]
    fn without_friendliness_cwnd_follows_the_cubic_curve() {
        let cfg = CubicConfig { tcp_friendliness: false, ..Default::default() };
        let (mut cc, mut w) = after_loss_at(100, cfg);
        let t0 = Time::from_secs(1);
        for _ in 0..700 {
            cc.on_ack(t0, &mut w, &ack(MSS));
        }
        // At t = 0 (and RTT unknown) the target is W_cubic(0) = 70: no growth.
        assert_eq!(w.cwnd, 70 * MSS);
        // Well past K the window is in the convex region and above W_max.
        let later = t0 + Time::from_secs(6);
        for _ in 0..2000 {
            cc.on_ack(later, &mut w, &ack(MSS));
        }
        let cwnd = w.cwnd as f64 / MSS as f64;
        let expect = cc.w_cubic(6.0);
        assert!(cwnd > 100.0 && (cwnd - expect).abs() < 1.0, "{cwnd} vs {expect}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_losing_below_it() {
        // RFC 9438 section 4.7: loss at 80 < W_max = 100 -> W_max = 80 * 1.7 / 2.
        let (mut cc, _) = after_loss_at(100, CubicConfig::default());
        let w = Window { cwnd: 80 * MSS, ssthresh: 70 * MSS, mss: MSS };
        cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        assert!((cc.w_max() - 68.0).abs() < 1e-9);
        let cfg = CubicConfig { fast_convergence: false, ..Default::default() };
        let (mut cc, _) = after_loss_at(100, cfg);
        cc.ssthresh_after_loss(Time::ZERO, &w, w.cwnd);
        assert!((cc.w_max() - 80.0).abs() < 1e-9);
    }

    #[test]
    fn hystart_ends_slow_start_when_the_rtt_rises() {
        // Round 1 sets delay_min = 100 ms; in round 2 all samples are
        // 250 ms > 100 + clamp(100 ms) -> found, ssthresh = cwnd.
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut now = Time::from_secs(1);
        let mut una = 1;
        let mut a = Ack {
            acked: MSS,
            rtt: Some(Time::from_millis(100)),
            srtt: None,
            snd_una: una,
            snd_max: 20_000,
            cwnd_limited: true,
        };
        for _ in 0..10 {
            una += MSS;
            now += Time::from_millis(10);
            a.snd_una = una;
            cc.on_ack(now, &mut w, &a);
        }
        assert_eq!(w.ssthresh, u64::MAX);
        a.rtt = Some(Time::from_millis(250));
        a.snd_max = 100_000;
        una = 21_000;
        for _ in 0..12 {
            una += MSS;
            now += Time::from_millis(10);
            a.snd_una = una;
            cc.on_ack(now, &mut w, &a);
        }
        assert!(w.ssthresh < u64::MAX, "slow start ended");
        assert!(w.ssthresh >= 20 * MSS && w.ssthresh <= w.cwnd);
    }

    /// Slow start through one round of ACKs `gap` apart, every RTT sample
    /// `rtt` (after a first round that sets delay_min = 80 ms); the time
    /// into the round at which slow start ended, if it did.
    fn hystart_exit(rule: HystartRule, gap: Time, rtt: Time) -> Option<Time> {
        let mut cc = Cubic::new(CubicConfig { hystart_rule: rule, ..CubicConfig::default() });
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut now = Time::from_secs(1);
        let mut a = Ack {
            acked: MSS,
            rtt: Some(Time::from_millis(80)),
            srtt: Some(Time::from_millis(80)),
            snd_una: 1,
            snd_max: 20 * MSS,
            cwnd_limited: true,
        };
        // Round 1: ACKs 10 ms apart (no train), delay_min = 80 ms.
        for _ in 0..10 {
            a.snd_una += MSS;
            now += Time::from_millis(10);
            cc.on_ack(now, &mut w, &a);
        }
        assert_eq!(w.ssthresh, u64::MAX, "round 1 leaves slow start alone");
        // Round 2 starts with the ACK past round 1's end.
        a.snd_una = 21 * MSS;
        a.snd_max = 1000 * MSS;
        a.rtt = Some(rtt);
        let start = now + gap;
        for _ in 0..200 {
            a.snd_una += MSS;
            now += gap;
            cc.on_ack(now, &mut w, &a);
            if w.ssthresh < u64::MAX {
                return Some(now.saturating_sub(start));
            }
        }
        None
    }

    #[test]
    fn linux_hystart_ends_slow_start_when_an_ack_train_spans_half_of_delay_min() {
        // ACKs 1 ms apart at delay_min: Linux's train ends past
        // (80 ms + hystart_ack_delay 1 ms) / 2 = 40.5 ms into the round,
        // ns-3's past the whole 80 ms.
        let gap = Time::from_millis(1);
        let linux = hystart_exit(HystartRule::Linux, gap, Time::from_millis(80)).unwrap();
        let ns3 = hystart_exit(HystartRule::Ns3, gap, Time::from_millis(80)).unwrap();
        assert!(linux > Time::from_millis(40) && linux <= Time::from_millis(42), "linux {linux}");
        assert!(ns3 > Time::from_millis(80) && ns3 <= Time::from_millis(82), "ns-3 {ns3}");
    }

    #[test]
    fn linux_hystart_ends_slow_start_when_the_rtt_rises_by_an_eighth_of_delay_min() {
        // ACKs 3 ms apart (no train). 92 ms > 80 + clamp(80 / 8 = 10 ms,
        // 4, 16) = 90 ms: Linux leaves at the 9th sample of the round; ns-3
        // waits for 80 + clamp(80 ms, 4 ms, 1 s) = 160 ms and never leaves.
        let gap = Time::from_millis(3);
        let linux = hystart_exit(HystartRule::Linux, gap, Time::from_millis(92)).unwrap();
        assert_eq!(linux, Time::from_millis(8 * 3), "the 9th sample of the round");
        assert_eq!(hystart_exit(HystartRule::Ns3, gap, Time::from_millis(92)), None);
        // 89 ms stays below Linux's threshold too.
        assert_eq!(hystart_exit(HystartRule::Linux, gap, Time::from_millis(89)), None);
    }

    /// ns-3 3.44 `TcpCubic::Update` truncates the cubic term to whole
    /// segments (`uint32_t delta`) and counts `cnt = cwnd / (target - cwnd)`
    /// segments per one-segment step: after a loss at 10 segments (W_max 10,
    /// ssthresh 7, K = 1.96 s) the target is 10 - floor(2.99) = 8 from the
    /// first ACK, so cwnd gains a whole segment once 7 segments are
    /// acknowledged. RFC 9438's real W_cubic(0) is 7.0: ours by default
    /// grows only along W_est, a fraction of a segment.
    #[test]
    fn with_whole_segment_target_cwnd_steps_a_segment_once_cnt_segments_are_acknowledged() {
        let grow = |whole_segment_target: bool| {
            let cfg = CubicConfig { whole_segment_ssthresh: true, whole_segment_target, ..Default::default() };
            let (mut cc, mut w) = after_loss_at(10, cfg);
            assert_eq!((w.cwnd, cc.w_max()), (7 * MSS, 10.0));
            // Delayed ACKs of two segments every 10 ms.
            (0..4u64)
                .map(|i| {
                    cc.on_ack(Time::from_millis(10 * i), &mut w, &ack(2 * MSS));
                    w.cwnd
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(grow(true), [7 * MSS, 7 * MSS, 7 * MSS, 8 * MSS], "one segment at 8 segments acknowledged");
        let rfc = grow(false);
        assert!(
            rfc[3] > 7 * MSS && rfc[3] < 8 * MSS && rfc[3] % MSS != 0,
            "RFC 9438 grows by W_est's fractions: {rfc:?}"
        );
    }

    /// ns-3's `m_lastMaxCwnd` is whole segments: fast convergence below the
    /// old W_max gives floor(9 x 1.7 / 2) = 7, where RFC 9438 keeps 7.65.
    #[test]
    fn with_whole_segment_target_fast_convergence_rounds_w_max_down_to_whole_segments() {
        for (whole_segment_target, want) in [(true, 7.0), (false, 7.65)] {
            let cfg = CubicConfig { whole_segment_target, ..Default::default() };
            let (mut cc, mut w) = after_loss_at(10, cfg);
            w.cwnd = 9 * MSS;
            cc.ssthresh_after_loss(Time::from_secs(1), &w, w.cwnd);
            assert!((cc.w_max() - want).abs() < 1e-9, "whole {whole_segment_target}: W_max {}", cc.w_max());
        }
    }
}
