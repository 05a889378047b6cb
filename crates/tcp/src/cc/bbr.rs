//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00, "the draft"
//! below), as Linux `net/ipv4/tcp_bbr.c` (4.9 to 6.x mainline) and ns-3
//! 3.44 `TcpBbr` run it.
//!
//! BBR models the path by two numbers: the bottleneck bandwidth BtlBw, the
//! windowed maximum of the delivery rate over 10 round trips, and the
//! round-trip propagation time RTprop, the windowed minimum of the RTT over
//! 10 s (draft section 4.1). It paces at `pacing_gain x BtlBw` and caps what
//! is in flight at `cwnd_gain x BtlBw x RTprop` (section 4.2), and moves
//! through Startup, Drain, ProbeBW and ProbeRTT (section 4.3). The rate
//! samples come from the connection's delivery-rate estimator
//! (`connection/rate.rs`, draft-cheng-iccrg-delivery-rate-estimation).
//!
//! Left out, as in ns-3: Linux's long-term bandwidth (policer) estimate
//! (`bbr_lt_bw_*`), the ACK-aggregation allowance (`bbr_extra_acked`) and
//! the departure-time corrections of `bbr_packets_in_net_at_edt`.

use netreturn_base::{Rng, Time};

use super::{CongestionControl, RateSample, RecoveryState, Window};

/// Startup's gain, 2/ln 2 (draft section 4.3.2: the smallest gain that
/// doubles the sending rate each round; Linux `bbr_high_gain`).
pub const HIGH_GAIN: f64 = 2.885;
/// ProbeBW's pacing gains, one phase each of about RTprop (section
/// 4.3.4.3; Linux `bbr_pacing_gain`).
pub const PACING_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// BtlBw's window, in round trips (section 4.1.1.2: "10 packet-timed
/// round trips", Linux `bbr_bw_rtts`).
pub const BW_ROUNDS: u64 = 10;
/// RTprop's window (section 4.1.2.2, Linux `bbr_min_rtt_win_sec`).
pub const MIN_RTT_WINDOW: Time = Time::from_secs(10);
/// How long ProbeRTT holds the window down (section 4.3.5, Linux
/// `bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_TIME: Time = Time::from_millis(200);
/// The smallest cwnd, in segments (section 4.2.3.3, `bbr_cwnd_min_target`).
pub const MIN_CWND_SEGMENTS: u64 = 4;
/// Linux `bbr_pacing_margin_percent`: pace 1 % below the estimate.
const PACING_MARGIN: f64 = 0.99;
/// Startup's full-pipe test (section 4.3.2.2): BtlBw grew by less than
/// 25 % for 3 rounds in a row.
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;

/// `tcp.bbr`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BbrConfig {
    /// Startup's pacing and cwnd gain (2/ln 2 = 2.885).
    #[serde(default = "default_high_gain")]
    pub high_gain: f64,
    /// ProbeBW's cwnd gain (2: section 4.2.3.2).
    #[serde(default = "default_cwnd_gain")]
    pub cwnd_gain: f64,
}

fn default_high_gain() -> f64 {
    HIGH_GAIN
}
fn default_cwnd_gain() -> f64 {
    2.0
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig { high_gain: HIGH_GAIN, cwnd_gain: 2.0 }
    }
}

/// The draft's states (section 4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Kathleen Nichols' windowed maximum over the best three samples (Linux
/// `lib/win_minmax.c`, the filter the draft's section 4.1.1.2 names): the
/// maximum of the last `window` units of time, kept in constant space.
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    pub fn get(&self) -> f64 {
        self.s[0].1
    }

    /// Takes sample `v` at time `t` (round trips here); returns the max.
    pub fn update(&mut self, window: u64, t: u64, v: f64) -> f64 {
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > window {
            self.s = [(t, v); 3];
            return v;
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // The best sample aged out: the second and third move up.
        let dt = t.saturating_sub(self.s[0].0);
        if dt > window {
            self.s = [self.s[1], self.s[2], (t, v)];
            if t.saturating_sub(self.s[0].0) > window {
                self.s = [self.s[1], self.s[2], (t, v)];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > window / 4 {
            // A quarter of the window without a second-best: take one.
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > window / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    high_gain: f64,
    probe_bw_cwnd_gain: f64,
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// BtlBw's filter, in bytes per second over round trips.
    bw: MaxFilter,
    /// Round trips counted (section 4.1.1.3, `BBR.round_count`).
    rounds: u64,
    /// The round ends when a segment sent after this much was delivered
    /// is acknowledged (`BBR.next_round_delivered`).
    next_round_delivered: u64,
    round_start: bool,
    /// RTprop and when it was last lowered or refreshed.
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// Section 4.2.3.4: the first round of recovery sends one segment per
    /// segment delivered.
    packet_conservation: bool,
    prev_recovery: RecoveryState,
    /// cwnd before recovery or ProbeRTT, restored after.
    prior_cwnd: u64,
    idle_restart: bool,
    full_bw: f64,
    full_bw_rounds: u32,
    filled_pipe: bool,
    cycle_index: usize,
    cycle_stamp: Time,
    /// When data was last delivered (Linux `tp->delivered_mstamp`).
    delivered_stamp: Time,
    /// Bytes per second; 0 before the first RTT is known.
    pacing_rate: f64,
    has_seen_rtt: bool,
    rng: Rng,
    mss: u64,
}

impl Bbr {
    pub fn new(cfg: BbrConfig) -> Bbr {
        Bbr {
            high_gain: cfg.high_gain.max(1.0),
            probe_bw_cwnd_gain: cfg.cwnd_gain.max(1.0),
            mode: Mode::Startup,
            pacing_gain: cfg.high_gain.max(1.0),
            cwnd_gain: cfg.high_gain.max(1.0),
            bw: MaxFilter::default(),
            rounds: 0,
            next_round_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prev_recovery: RecoveryState::Open,
            prior_cwnd: 0,
            idle_restart: false,
            full_bw: 0.0,
            full_bw_rounds: 0,
            filled_pipe: false,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            delivered_stamp: Time::ZERO,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            rng: Rng::new(0),
            mss: 1,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    /// BtlBw in bytes per second.
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }
    pub fn filled_pipe(&self) -> bool {
        self.filled_pipe
    }

    /// Section 4.2.3.2 (Linux `bbr_bdp`): `gain x BtlBw x RTprop`, in whole
    /// segments rounded up; the initial window while RTprop is unknown.
    fn bdp_segments(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => 10,
            Some(rtt) => (bw * rtt.secs_f64() * gain / self.mss as f64).ceil() as u64,
        }
    }

    /// Linux `bbr_tso_segs_goal`: the segments the sender would put in
    /// one TSO burst, about 1 ms at the pacing rate (`sk_pacing_shift` 10),
    /// at least 2 (1 below 1.2 Mb/s), at most 127.
    fn send_quantum_segments(&self) -> u64 {
        let min = if self.pacing_rate < 1.2e6 / 8.0 { 1 } else { 2 };
        ((self.pacing_rate / 1024.0) as u64 / self.mss).clamp(min, 127)
    }

    /// Linux `bbr_inflight` = `bbr_bdp` + `bbr_quantization_budget`: room
    /// for three send quanta (section 4.2.3.2's allowance for the sender's
    /// and receiver's batching), an even number of segments, and two more
    /// in ProbeBW's probing phase. In bytes.
    fn inflight(&self, bw: f64, gain: f64) -> u64 {
        let mut segs = self.bdp_segments(bw, gain) + 3 * self.send_quantum_segments();
        segs = (segs + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            segs += 2;
        }
        segs * self.mss
    }

    /// Section 4.3.2: Startup (`BBREnterStartup`).
    fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
    }

    /// Sections 4.3.4.2-3 (Linux `bbr_reset_probe_bw_mode`): ProbeBW begins in
    /// a random phase, never the draining 3/4 one; the draw comes from the
    /// connection's seeded generator.
    fn enter_probe_bw(&mut self) {
        self.mode = Mode::ProbeBw;
        self.cycle_index = PACING_GAINS.len() - 1 - (self.rng.next_u64() % 7) as usize;
        self.advance_cycle_phase();
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_index = (self.cycle_index + 1) % PACING_GAINS.len();
        self.cycle_stamp = self.delivered_stamp;
    }

    /// Linux `bbr_reset_mode`: back to Startup if the pipe was never
    /// filled, else to ProbeBW.
    fn reset_mode(&mut self) {
        if self.filled_pipe {
            self.enter_probe_bw();
        } else {
            self.enter_startup();
        }
    }

    /// Section 4.2.3.4 (Linux `bbr_save_cwnd`): the cwnd to restore after
    /// recovery or ProbeRTT.
    fn save_cwnd(&mut self, w: &Window) {
        if self.prev_recovery < RecoveryState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = w.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(w.cwnd);
        }
    }

    /// Section 4.1.1.5 (`BBRUpdateBtlBw`): count rounds and take the
    /// sample into BtlBw unless it is application-limited and lower.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(rate) = rs.rate() else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.delivered_total;
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if !rs.is_app_limited || rate >= self.max_bw() {
            self.bw.update(BW_ROUNDS, self.rounds, rate);
        }
    }

    /// Section 4.3.4.3 (`BBRIsNextCyclePhase`): a phase lasts at least
    /// RTprop; the probing phase (5/4) also until the flight reaches 5/4
    /// BDP or a loss shows the pipe full; the draining one (3/4) ends early
    /// once the flight is down to the BDP.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| self.delivered_stamp.saturating_sub(self.cycle_stamp) > m);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            return full_length && (rs.losses > 0 || rs.prior_in_flight >= self.inflight(bw, self.pacing_gain));
        }
        full_length || rs.prior_in_flight <= self.inflight(bw, 1.0)
    }

    /// Section 4.3.2.2 (`BBRCheckFullPipe`).
    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.filled_pipe || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_GROWTH {
            self.full_bw = self.max_bw();
            self.full_bw_rounds = 0;
            return;
        }
        self.full_bw_rounds += 1;
        self.filled_pipe = self.full_bw_rounds >= FULL_BW_ROUNDS;
    }

    /// Section 4.3.3 (`BBRCheckDrain`): Drain follows a filled pipe and
    /// ends once the flight is down to one BDP.
    fn check_drain(&mut self, w: &mut Window, rs: &RateSample) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            // Linux reports the BDP as ssthresh from here on.
            w.ssthresh = self.inflight(self.max_bw(), 1.0);
        }
        if self.mode == Mode::Drain && rs.in_flight <= self.inflight(self.max_bw(), 1.0) {
            self.enter_probe_bw();
        }
    }

    /// Sections 4.1.2.3 and 4.3.5 (`BBRUpdateRTprop`, `BBRCheckProbeRTT`):
    /// returns whether to mark the flight application-limited.
    fn update_min_rtt(&mut self, now: Time, w: &mut Window, rs: &RateSample) -> bool {
        let expired = now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w);
            self.probe_rtt_done = None;
        }
        let mut app_limited = false;
        if self.mode == Mode::ProbeRtt {
            // What is sent in ProbeRTT says nothing about the bandwidth.
            app_limited = true;
            match self.probe_rtt_done {
                None if rs.in_flight <= MIN_CWND_SEGMENTS * self.mss => {
                    // The flight is down to 4 segments: hold it there for
                    // max(200 ms, one round trip).
                    self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = rs.delivered_total;
                }
                None => {}
                Some(_) => {
                    self.probe_rtt_round_done |= self.round_start;
                    if self.probe_rtt_round_done {
                        self.check_probe_rtt_done(now, w);
                    }
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
        app_limited
    }

    /// Section 4.3.5 (`BBRExitProbeRTT`): RTprop is fresh for another
    /// 10 s; the window saved on entry comes back.
    fn check_probe_rtt_done(&mut self, now: Time, w: &mut Window) {
        if self.probe_rtt_done.is_none_or(|t| now <= t) {
            return;
        }
        self.min_rtt_stamp = now;
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.high_gain, self.high_gain),
            // Section 4.3.3: the inverse of Startup's gain.
            Mode::Drain => (1.0 / self.high_gain, self.high_gain),
            Mode::ProbeBw => (PACING_GAINS[self.cycle_index], self.probe_bw_cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// Section 4.2.1 (`BBRSetPacingRate`): the rate never drops before the
    /// pipe is first filled. Before BtlBw has a sample it is the initial
    /// window over the smoothed RTT (1 ms if none yet), at Startup's gain
    /// (Linux `bbr_init_pacing_rate_from_rtt`).
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, srtt: Option<Time>, w: &Window) {
        if !self.has_seen_rtt && (srtt.is_some() || self.pacing_rate == 0.0) {
            let rtt = srtt.filter(|r| r.0 > 0).unwrap_or(Time::from_millis(1));
            self.has_seen_rtt = srtt.is_some();
            self.pacing_rate = w.cwnd as f64 / rtt.secs_f64() * self.high_gain * PACING_MARGIN;
        }
        let rate = bw * gain * PACING_MARGIN;
        if self.filled_pipe || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Section 4.2.3.4 (Linux `bbr_set_cwnd_to_recover_or_restore`): losses
    /// come off cwnd; the first round of fast recovery conserves packets
    /// (cwnd = flight + delivered); leaving recovery restores the cwnd from
    /// before it. Returns (conserving, cwnd).
    fn recover_or_restore(&mut self, w: &Window, rs: &RateSample) -> (bool, u64) {
        let prev = self.prev_recovery;
        let state = rs.recovery;
        let mut cwnd = w.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(w.mss);
        }
        if state == RecoveryState::Recovery && prev != RecoveryState::Recovery {
            self.packet_conservation = true;
            // The round starts now.
            self.next_round_delivered = rs.delivered_total;
            cwnd = rs.in_flight + rs.acked_sacked;
        } else if prev >= RecoveryState::Recovery && state < RecoveryState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_recovery = state;
        if self.packet_conservation {
            return (true, cwnd.max(rs.in_flight + rs.acked_sacked));
        }
        (false, cwnd)
    }

    /// Section 4.2.3.6 (`BBRSetCwnd`): grow toward `cwnd_gain x BDP` by
    /// what each ACK delivers (without a ceiling until the pipe is filled),
    /// never below 4 segments; ProbeRTT caps it at 4.
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, bw: f64) {
        let acked = rs.acked_sacked;
        if acked > 0 {
            let (conserving, mut cwnd) = self.recover_or_restore(w, rs);
            if !conserving {
                let target = self.inflight(bw, self.cwnd_gain);
                if self.filled_pipe {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || rs.delivered_total < 10 * w.mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(MIN_CWND_SEGMENTS * w.mss);
            }
            w.cwnd = cwnd;
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(MIN_CWND_SEGMENTS * w.mss);
        }
    }
}

impl CongestionControl for Bbr {
    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn owns_cwnd(&self) -> bool {
        true
    }

    fn seed(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
    }

    /// Linux `bbr_main`: update the model, then the pacing rate and cwnd.
    fn on_rate_sample(&mut self, now: Time, w: &mut Window, rs: &RateSample) -> bool {
        self.mss = w.mss.max(1);
        if self.min_rtt.is_none() {
            // Linux starts RTprop from the handshake's RTT (`tcp_min_rtt`).
            if let Some(srtt) = rs.srtt {
                self.min_rtt = Some(srtt);
                self.min_rtt_stamp = now;
            }
        }
        if rs.acked_sacked > 0 {
            self.delivered_stamp = now;
        }
        self.update_bw(rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase();
        }
        self.check_full_pipe(rs);
        self.check_drain(w, rs);
        let app_limited = self.update_min_rtt(now, w, rs);
        self.update_gains();
        let bw = self.max_bw();
        self.set_pacing_rate(bw, self.pacing_gain, rs.srtt, w);
        self.set_cwnd(w, rs, bw);
        app_limited
    }

    fn pacing_rate(&self) -> Option<f64> {
        (self.pacing_rate > 0.0).then_some(self.pacing_rate)
    }

    /// Section 4.3.4.4 (Linux `bbr_cwnd_event`, `CA_EVENT_TX_START`):
    /// restarting from idle, ProbeBW paces at BtlBw at once, and a
    /// ProbeRTT that idling already served ends.
    fn on_restart_after_idle(&mut self, now: Time, w: &mut Window) {
        self.idle_restart = true;
        match self.mode {
            Mode::ProbeBw => {
                let bw = self.max_bw();
                self.set_pacing_rate(bw, 1.0, None, w);
            }
            Mode::ProbeRtt => self.check_probe_rtt_done(now, w),
            _ => {}
        }
    }

    /// Linux `bbr_ssthresh`: a loss does not cut the window (the per-ACK
    /// cwnd rules above handle it); remember it for after recovery.
    fn ssthresh_after_loss(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        self.save_cwnd(w);
        w.ssthresh
    }

    /// Linux `bbr_ssthresh` and `bbr_set_state(TCP_CA_Loss)`: a timeout
    /// restarts the full-pipe baseline and a round.
    fn on_rto(&mut self, now: Time, w: &Window, in_flight: u64) -> u64 {
        let ssthresh = self.ssthresh_after_loss(now, w, in_flight);
        self.prev_recovery = RecoveryState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        ssthresh
    }

    /// BBR v1 does not answer ECN (Linux applies no reduction to a control
    /// with its own `cong_control`).
    fn ssthresh_after_ecn(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        w.ssthresh
    }

    fn bandwidth_estimate(&self) -> Option<f64> {
        (self.max_bw() > 0.0).then_some(self.max_bw())
    }
}

#[cfg(test)]
mod tests;
