//! The TCP state machine of one endpoint.
//!
//! Sequence numbers are kept internally as unwrapped 64-bit offsets from the
//! initial sequence number of their direction (offset 0 is the SYN, payload
//! byte k is offset k + 1, the FIN follows the last byte). Wire values are
//! converted at the edge with [`unwrap_seq`], so a long bulk flow may wrap
//! the 32-bit space without any comparison in the machine having to care
//! (RFC 9293 section 3.4 arithmetic, done once).

use netreturn_base::{Ecn, InBand, TcpFlags, Time, XcpFields};

use crate::cc::{Ack, AckEvent, Cc, CongestionControl, Window};
use crate::config::{LossSsthresh, Recovery, TcpConfig};
use crate::rtt::RttEstimator;
use crate::sack::{OooQueue, Scoreboard};
use crate::segment::{Options, Segment};
use crate::stats::{Probe, TcpStats};
use netreturn_control::ngwa_receiver::NgwaReceiver;
use rate::Rates;

mod ack;
mod ecn;
mod rate;
mod receive;
mod recovery;
mod send;
mod timer;

/// RFC 9293 connection states (TIME-WAIT has no 2 MSL timer here: the
/// simulator forgets connections it no longer drives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Streams longer than this are treated as infinite (keeps offsets far from
/// overflow in every sum).
const MAX_STREAM: u64 = 1 << 62;

/// The offset of wire sequence number `seq` in the direction whose initial
/// number is `isn`, taking the candidate closest to `near`.
fn unwrap_seq(seq: u32, isn: u32, near: u64) -> u64 {
    let rel = seq.wrapping_sub(isn);
    let d = rel.wrapping_sub(near as u32) as i32 as i64;
    (near as i64 + d).max(0) as u64
}

/// How soon received data must be acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckDue {
    No,
    Delayed,
    Now,
}

/// One TCP endpoint: sender and receiver of one connection.
///
/// Laid out by hand (`repr(C)`, on 64-byte lines) by what a segment in the
/// steady state reads: at 100x scale (6 200 connections, far more than a
/// core's cache) every line a segment touches is a likely miss. The
/// settings read only at set-up or in loss recovery fill lines 0-1; a data
/// segment at the receiver reads lines 2-6 (the per-segment settings, then
/// the sequence variables, timers, flags and the control's tag that both
/// ends read), 13 (the out-of-order queue's counts) and 15 (the eight
/// counters a segment updates), seven lines; an ACK at the sender reads
/// those and lines 8-12 (what CUBIC reads in congestion avoidance, the
/// window, the RTT estimator). Loss, ECN, NGWA and timing state and the other counters lie
/// on lines neither reads, but for a few flags in line 12's spare bytes
/// (`layout` tests below; docs/validation.md, "Hot state apart from cold"
/// and session 15).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Connection {
    // Lines 0-2 and the first 8 bytes of line 3: the settings, the
    // per-segment ones on line 2 and those 8 bytes (`TcpConfig`).
    cfg: TcpConfig,

    // Lines 3-6: what every segment reads or writes, at the receiver and
    // at the sender alike (the layout test lists it). Sequence variables:
    // send side offsets from `iss`, receive side from `irs`.
    rcv_nxt: u64,
    last_ack_sent: u64,
    /// Right edge of the window advertised so far (it never shrinks).
    adv_edge: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// One past the last byte the application handed over (FIN offset).
    app_end: u64,
    rwnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    rcv_fin: Option<u64>,
    /// Delivery-rate records and pacing, for a control that asks (BBR);
    /// `None` for every other.
    rate: Option<Box<Rates>>,
    // Timers (`next_timer` reads all four after every segment).
    delack_at: Option<Time>,
    rto_at: Option<Time>,
    /// Persist timer (RFC 9293 section 3.8.6.1): armed while nothing is
    /// outstanding and the peer's window admits none of the waiting data.
    persist_at: Option<Time>,
    /// Pacing holds back data until then (a timer, see `next_timer`).
    pace_wait: Option<Time>,
    /// Its byte count is read on every ACK (`process_ack`).
    board: Scoreboard,
    /// XCP feedback of the data received since our last ACK, to echo.
    xcp_echo: Option<i32>,
    iss: u32,
    irs: u32,
    ts_recent: u32,
    unacked_segs: u32,
    /// Window probes sent since the window last admitted data (Linux
    /// `icsk_probes_out`): the persist interval doubles with each.
    persist_backoff: u32,
    state: State,
    sack_ok: bool,
    ts_ok: bool,
    fin_queued: bool,
    in_recovery: bool,
    fin_received: bool,
    /// ECN (RFC 3168): both ends agreed on ECN in the handshake.
    ecn_ok: bool,
    /// Shift applied to the peer's window field (its wscale).
    snd_shift: u8,
    /// Shift applied to our window field.
    rcv_shift: u8,
    /// cwnd limited the last data segment sent (see `cc::Ack::cwnd_limited`).
    cwnd_limited: bool,
    /// The control: its variant's tag (read by every ACK's
    /// `on_ack_event_with`, the receiver's too) in the last 8 bytes of
    /// line 6, its state after (CUBIC's on lines 7-9, what congestion
    /// avoidance reads of it on 8-9), which only the sender reads.
    cc: Cc,

    // Lines 10-12: the sender's alone (line 10 begins with the end of the
    // largest control's state, BBR's).
    win: Window,
    /// Negotiated in the handshake.
    mss: u64,
    /// RFC 6675 HighRxt, one past the highest retransmitted byte.
    high_rxt: u64,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint.
    recover: u64,
    dupacks: u32,
    /// Bytes sent beyond cwnd by limited transmit (RFC 3042) since the
    /// last new ACK: not part of FlightSize for ssthresh (RFC 5681
    /// section 3.2 step 2).
    limited_sent: u32,
    rtt: RttEstimator,

    // Cold: losses, Karn's timing, NGWA, ECN reactions.
    /// Partial ACKs seen in the current recovery without SACK (RFC 6582
    /// section 3.2 step 5 resets the retransmission timer on the first only).
    partial_acks: u32,
    fin_acked: bool,
    /// Both ends offered window scaling.
    ws_ok: bool,
    /// Receiver: set ECE on what we send (classic: from a CE mark until the
    /// sender's CWR; DCTCP: the CE state of the last data segment).
    ece_echo: bool,
    /// Sender: set CWR on the next new data segment.
    cwr_due: bool,
    /// Sender: reducing cwnd after an ECE (RFC 3168 section 6.1.2) by PRR
    /// until SND.UNA passes `ecn_recover`, without growing it (Linux
    /// `TCP_CA_CWR`, ns-3 `CA_CWR`).
    in_cwr: bool,

    /// Line 13, both ends: the out-of-order queue's byte count and block
    /// count (every ACK sent reads them); its reported blocks after, read
    /// only while it holds data.
    ooo: OooQueue,
    /// Karn timing without timestamps: (end offset of the timed segment, sent at).
    rtt_timing: Option<(u64, Time)>,
    /// Counters: the eight a steady segment updates on line 15, the rest
    /// after.
    stats: TcpStats,
    /// NGWA's remembered `Wngwa` (seed 001 section 2), if `cfg.ngwa` is set.
    ngwa: NgwaReceiver,
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    /// Sender: no new reaction to ECE until SND.UNA passes this (once per
    /// window of data, RFC 3168 section 6.1.2).
    ecn_recover: u64,
}

impl Connection {
    fn new(cfg: &TcpConfig, iss: u32, state: State) -> Connection {
        let mss = cfg.send_mss(u32::MAX);
        let mut cc = Cc::new(cfg.cc, cfg.abc_limit);
        // The ISS is drawn from the run's seeded generator.
        cc.seed(iss as u64);
        let rate = cc.wants_rate_samples().then(Box::<Rates>::default);
        Connection {
            cfg: *cfg,
            state,
            iss,
            irs: 0,
            mss,
            sack_ok: false,
            ts_ok: false,
            ws_ok: false,
            snd_shift: 0,
            rcv_shift: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: 1,
            fin_queued: false,
            fin_acked: false,
            rwnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            win: Window { cwnd: cfg.initial_cwnd as u64 * mss, ssthresh: cfg.initial_ssthresh, mss },
            cc,
            dupacks: 0,
            limited_sent: 0,
            cwnd_limited: false,
            in_recovery: false,
            partial_acks: 0,
            recover: 0,
            high_rxt: 0,
            board: Scoreboard::default(),
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity),
            rtt_timing: None,
            rto_at: None,
            persist_at: None,
            persist_backoff: 0,
            rcv_nxt: 0,
            ooo: OooQueue::default(),
            rcv_fin: None,
            fin_received: false,
            ts_recent: 0,
            last_ack_sent: 0,
            adv_edge: 0,
            delack_at: None,
            unacked_segs: 0,
            xcp_echo: None,
            ngwa: NgwaReceiver::default(),
            ecn_ok: false,
            ece_echo: false,
            cwr_due: false,
            in_cwr: false,
            ecn_recover: 0,
            rate,
            pace_wait: None,
            stats: TcpStats::default(),
        }
    }

    /// An active opener; [`Connection::open`] sends its SYN.
    pub fn client(cfg: &TcpConfig, iss: u32) -> Connection {
        Connection::new(cfg, iss, State::Closed)
    }

    /// A passive opener in LISTEN, answering the first SYN it receives.
    pub fn server(cfg: &TcpConfig, iss: u32) -> Connection {
        Connection::new(cfg, iss, State::Listen)
    }

    /// Sends the SYN (client only; ignored in any other state).
    pub fn open(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.state == State::Closed {
            self.state = State::SynSent;
            self.send_syn(now, false, out);
        }
    }

    /// The application hands `bytes` more bytes to send. May be called before
    /// the handshake completes; huge values mean an endless bulk transfer.
    pub fn send(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) {
        if self.fin_queued {
            return;
        }
        self.app_end = self.app_end.saturating_add(bytes).min(MAX_STREAM);
        self.transmit(now, out);
    }

    /// Sends a FIN after all queued data.
    pub fn close(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.fin_queued {
            return;
        }
        self.fin_queued = true;
        self.state = match self.state {
            State::Established => State::FinWait1,
            State::CloseWait => State::LastAck,
            s => s,
        };
        self.transmit(now, out);
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// The handshake has completed (any synchronized state).
    pub fn is_established(&self) -> bool {
        self.synchronized()
    }

    /// Sender: everything handed to [`Connection::send`] is cumulatively ACKed.
    pub fn all_data_acked(&self) -> bool {
        self.snd_una >= self.app_end
    }

    /// Sender: bytes handed over and not yet acknowledged (what ns-3's
    /// TcpTxBuffer holds against `SndBufSize`).
    pub fn send_buffered(&self) -> u64 {
        self.app_end.saturating_sub(self.snd_una.max(1))
    }

    /// The settings this endpoint runs with.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// The latest RTT sample (what [`Connection::probe`] reports, without
    /// computing the rest of the probe).
    pub fn last_rtt(&self) -> Option<Time> {
        self.rtt.last()
    }

    pub fn probe(&self) -> Probe {
        let cwnd = self.cc.window(&self.win);
        Probe {
            cwnd,
            ssthresh: self.win.ssthresh,
            rwnd: self.rwnd,
            effective_window: cwnd.min(self.rwnd),
            in_flight: self.in_flight(),
            srtt: self.rtt.srtt(),
            last_rtt: self.rtt.last(),
            rto: self.rtt.rto(),
        }
    }

    /// The congestion control's bandwidth estimate in bytes per second
    /// (Westwood+, SARBE), if it keeps one.
    pub fn bandwidth_estimate(&self) -> Option<f64> {
        self.cc.bandwidth_estimate()
    }

    /// The sender's state in one line, sequence numbers as offsets from the
    /// ISN (so data byte k is k + 1, like ns-3's relative numbers), for
    /// packet logs: `una nxt max high_rxt cwnd ssthresh pipe rec rto sack`.
    pub fn describe(&self) -> String {
        let sacks: Vec<String> = self.board.sacked.ranges().iter().map(|(l, r)| format!("{l}-{r}")).collect();
        format!(
            "una={} nxt={} max={} hrxt={} cwnd={} ssth={} pipe={} rec={} recover={} rto={:.3} sack=[{}]",
            self.snd_una,
            self.snd_nxt,
            self.snd_max,
            self.high_rxt,
            self.cc.window(&self.win),
            self.win.ssthresh.min(1 << 40),
            self.in_flight(),
            self.in_recovery as u8,
            self.recover,
            self.rtt.rto().secs_f64(),
            sacks.join(",")
        )
    }

    /// The initial send sequence number (for logs of wire sequence numbers).
    pub fn iss(&self) -> u32 {
        self.iss
    }

    /// Earliest pending deadline (retransmission, persist, delayed ACK or
    /// pacing).
    pub fn next_timer(&self) -> Option<Time> {
        let t = [self.rto_at, self.persist_at, self.delack_at].into_iter().flatten().min();
        // Only a paced control sets `pace_wait`: the others pay one branch.
        match self.pace_wait {
            None => t,
            Some(p) => Some(t.map_or(p, |t| t.min(p))),
        }
    }

    /// Fires whatever timers are due at `now`; early calls do nothing.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.delack_at.is_some_and(|t| now >= t) {
            self.delack_at = None;
            self.send_ack(now, out);
        }
        if self.rto_at.is_some_and(|t| now >= t) {
            self.rto_at = None;
            self.on_rto(now, out);
        }
        if self.persist_at.is_some_and(|t| now >= t) {
            self.persist_at = None;
            self.on_persist(now, out);
        }
        if self.pace_wait.is_some_and(|t| now >= t) {
            // The pacing gap has passed: send what the windows allow.
            self.pace_wait = None;
            self.transmit(now, out);
        }
    }

    /// Processes one arriving segment.
    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        self.stats.segments_received += 1;
        if seg.flags.rst() {
            self.state = State::Closed;
            self.rto_at = None;
            self.persist_at = None;
            self.delack_at = None;
            self.pace_wait = None;
            return;
        }
        match self.state {
            State::Closed => return,
            State::Listen => {
                if seg.flags.syn() && !seg.flags.ack() {
                    self.irs = seg.seq;
                    self.rcv_nxt = 1;
                    self.negotiate(seg);
                    self.state = State::SynReceived;
                    self.send_syn(now, false, out);
                }
                return;
            }
            State::SynSent => {
                if seg.flags.syn() && seg.flags.ack() && seg.ack == self.iss.wrapping_add(1) {
                    self.irs = seg.seq;
                    self.rcv_nxt = 1;
                    self.negotiate(seg);
                    self.establish();
                    self.process_ack(now, 0, seg, out);
                    // RFC 7323 section 2.2: the SYN's window is never scaled.
                    self.rwnd = seg.window as u64;
                    let sent = self.stats.segments_sent;
                    self.transmit(now, out);
                    if self.stats.segments_sent == sent {
                        self.send_ack(now, out);
                    }
                }
                return;
            }
            State::SynReceived => {
                if seg.flags.syn() && !seg.flags.ack() {
                    // Our SYN-ACK was lost and the peer repeats its SYN.
                    self.send_syn(now, true, out);
                    return;
                }
                if !seg.flags.ack() || seg.ack != self.iss.wrapping_add(1) {
                    return;
                }
                self.establish();
            }
            _ => {}
        }
        if seg.flags.syn() {
            // A repeated SYN-ACK: our handshake ACK was lost.
            self.send_ack(now, out);
            return;
        }

        let seq_off = unwrap_seq(seg.seq, self.irs, self.rcv_nxt);
        if self.ts_ok {
            if let Some((tsval, _)) = seg.opts.timestamps {
                // RFC 7323 section 4.3 (ts_recent update rule).
                if seq_off <= self.last_ack_sent && tsval.wrapping_sub(self.ts_recent) as i32 >= 0 {
                    self.ts_recent = tsval;
                }
            }
        }
        if seg.flags.ack() {
            self.process_ack(now, seq_off, seg, out);
        }
        if self.ecn_ok && seg.len > 0 {
            self.ecn_on_data(now, seg, out);
        }
        let due = self.process_data(seq_off, seg);
        let sent = self.stats.segments_sent;
        self.transmit(now, out);
        if self.stats.segments_sent == sent {
            match due {
                AckDue::Now => self.send_ack(now, out),
                AckDue::Delayed if self.delack_at.is_none() => {
                    self.delack_at = Some(now + self.cfg.delayed_ack_timeout);
                }
                _ => {}
            }
        }
    }

    // ---------------------------------------------------------------
    // Handshake

    pub(super) fn synchronized(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent | State::SynReceived)
    }

    /// Options are on only if both ends offered them (RFC 7323 sections 1.3
    /// and 2.2, RFC 2018 section 2).
    pub(super) fn negotiate(&mut self, syn: &Segment) {
        let peer = &syn.opts;
        // RFC 9293 section 3.7.1: 536 when the peer sends no MSS option.
        self.mss = self.cfg.send_mss(peer.mss.unwrap_or(536) as u32);
        self.win.mss = self.mss;
        self.ws_ok = self.cfg.window_scaling && peer.wscale.is_some();
        match peer.wscale {
            Some(s) if self.cfg.window_scaling => {
                self.snd_shift = s.min(14);
                self.rcv_shift = self.cfg.wscale_shift();
            }
            _ => {
                self.snd_shift = 0;
                self.rcv_shift = 0;
            }
        }
        self.sack_ok = self.cfg.sack && peer.sack_permitted;
        self.ts_ok = self.cfg.timestamps && peer.timestamps.is_some();
        if let Some((tsval, _)) = peer.timestamps {
            self.ts_recent = tsval;
        }
        self.rwnd = syn.window as u64;
        self.ecn_negotiate(syn);
    }

    pub(super) fn establish(&mut self) {
        self.state = if self.fin_queued { State::FinWait1 } else { State::Established };
        // RFC 6928 initial window, in negotiated segments.
        self.win.cwnd = self.cfg.initial_cwnd as u64 * self.mss;
    }

    pub(super) fn send_syn(&mut self, now: Time, retransmission: bool, out: &mut Vec<Segment>) {
        let server = self.state == State::SynReceived;
        let mut opts = Options { mss: Some(self.cfg.mss.min(u16::MAX as u32) as u16), ..Default::default() };
        if server {
            // Answer only what the client offered.
            if self.ws_ok {
                opts.wscale = Some(self.rcv_shift);
            }
            opts.sack_permitted = self.sack_ok;
            opts.timestamps = self.ts_ok.then(|| (self.ts_val(now), self.ts_recent));
        } else {
            opts.wscale = self.cfg.window_scaling.then(|| self.cfg.wscale_shift());
            opts.sack_permitted = self.cfg.sack;
            opts.timestamps = self.cfg.timestamps.then(|| (self.ts_val(now), 0));
        }
        let seg = Segment {
            seq: self.iss,
            ack: if server { self.irs.wrapping_add(1) } else { 0 },
            flags: self.ecn_syn_flags(server) | if server { TcpFlags::SYN | TcpFlags::ACK } else { TcpFlags::SYN },
            // RFC 7323 section 2.2: the window in a SYN is never scaled.
            window: self.cfg.rcv_buf.min(u16::MAX as u64) as u16,
            opts,
            len: 0,
            retransmission,
            inband: InBand::None,
            ecn: Ecn::NotEct,
        };
        if server {
            self.last_ack_sent = self.rcv_nxt;
            self.adv_edge = self.rcv_nxt + seg.window as u64;
        }
        self.stats.segments_sent += 1;
        if retransmission {
            self.stats.segments_retransmitted += 1;
        }
        self.snd_nxt = 1;
        self.snd_max = 1;
        // Karn: a repeated SYN gives no RTT sample.
        self.rtt_timing = (!retransmission && !self.cfg.timestamps).then_some((1, now));
        self.rto_at = Some(now + self.rtt.rto());
        out.push(seg);
    }

    // ---------------------------------------------------------------
    // Timestamps (RFC 7323)

    pub(super) fn ts_val(&self, now: Time) -> u32 {
        (now.0 / self.cfg.ts_tick.0.max(1)) as u32
    }

    /// Time since the TSval `ecr` was current, like ns-3's
    /// `ElapsedTimeFromTsValue` (exact `now` minus the tick-rounded send time).
    pub(super) fn ts_elapsed(&self, now: Time, ecr: u32) -> Option<Time> {
        let tick = self.cfg.ts_tick.0.max(1);
        let ticks = (self.ts_val(now).wrapping_sub(ecr)) as u64;
        (ticks < 1 << 31).then(|| Time(ticks * tick + now.0 % tick))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod layout {
    use super::*;
    use crate::cc::cubic::Cubic;
    use std::mem::{offset_of, size_of};

    /// The 64-byte line of a connection that byte `at` lies on.
    fn line(at: usize) -> usize {
        at / 64
    }

    macro_rules! at {
        ($field:ident) => {
            offset_of!(Connection, $field)
        };
        ($field:ident . $inner:ident, $ty:ty) => {
            offset_of!(Connection, $field) + offset_of!($ty, $inner)
        };
    }

    /// What a data segment arriving in order at an established receiver
    /// reads or writes of its connection (`on_segment`, `process_ack` on
    /// its ACK field, `process_data`, `transmit` finding nothing to send,
    /// `check_persist`, the ACK's `header` and `window_field`, the
    /// simulator's `next_timer`), with timestamps and SACK on, no loss:
    /// (name, offset, size).
    fn a_receivers_data_segment() -> Vec<(&'static str, usize, usize)> {
        let cfg = |o: usize| at!(cfg) + o;
        let stats = |o: usize| at!(stats) + o;
        vec![
            ("cfg.ngwa", cfg(offset_of!(TcpConfig, ngwa)), 32),
            ("cfg.rcv_buf", cfg(offset_of!(TcpConfig, rcv_buf)), 8),
            ("cfg.delayed_ack_timeout", cfg(offset_of!(TcpConfig, delayed_ack_timeout)), 8),
            ("cfg.ts_tick", cfg(offset_of!(TcpConfig, ts_tick)), 8),
            ("cfg.delayed_ack_count", cfg(offset_of!(TcpConfig, delayed_ack_count)), 4),
            ("cfg.shrink_window", cfg(offset_of!(TcpConfig, shrink_window)), 1),
            ("rcv_nxt", at!(rcv_nxt), 8),
            ("last_ack_sent", at!(last_ack_sent), 8),
            ("adv_edge", at!(adv_edge), 8),
            ("snd_una", at!(snd_una), 8),
            ("snd_nxt", at!(snd_nxt), 8),
            ("snd_max", at!(snd_max), 8),
            ("app_end", at!(app_end), 8),
            ("rwnd", at!(rwnd), 8),
            ("snd_wl1", at!(snd_wl1), 8),
            ("snd_wl2", at!(snd_wl2), 8),
            ("rcv_fin", at!(rcv_fin), 16),
            ("rate", at!(rate), 8),
            ("delack_at", at!(delack_at), 16),
            ("rto_at", at!(rto_at), 16),
            ("persist_at", at!(persist_at), 16),
            ("pace_wait", at!(pace_wait), 16),
            ("board", at!(board), size_of::<Scoreboard>()),
            ("xcp_echo", at!(xcp_echo), 8),
            ("iss", at!(iss), 4),
            ("irs", at!(irs), 4),
            ("ts_recent", at!(ts_recent), 4),
            ("unacked_segs", at!(unacked_segs), 4),
            ("persist_backoff", at!(persist_backoff), 4),
            ("state", at!(state), 1),
            ("sack_ok", at!(sack_ok), 1),
            ("ts_ok", at!(ts_ok), 1),
            ("fin_queued", at!(fin_queued), 1),
            ("in_recovery", at!(in_recovery), 1),
            ("fin_received", at!(fin_received), 1),
            ("ecn_ok", at!(ecn_ok), 1),
            ("rcv_shift", at!(rcv_shift), 1),
            // The control's variant tag: the first 8 bytes of `Cc` (a
            // tagged enum puts its tag first), read to dispatch
            // `on_ack_event_with`, which CUBIC leaves empty.
            ("cc (tag)", at!(cc), 8),
            ("ooo (held, n_recent)", at!(ooo), OooQueue::HOT_BYTES),
            ("stats.segments_received", stats(offset_of!(TcpStats, segments_received)), 8),
            ("stats.segments_sent", stats(offset_of!(TcpStats, segments_sent)), 8),
            ("stats.acks_sent", stats(offset_of!(TcpStats, acks_sent)), 8),
            ("stats.bytes_delivered", stats(offset_of!(TcpStats, bytes_delivered)), 8),
        ]
    }

    /// What an ACK of new data in congestion avoidance adds at the sender,
    /// which then sends the data it admits (`on_new_ack`, the control's
    /// `on_ack`, `send_one`, `emit`), to the receiver's list: the same
    /// code reads those fields at both ends.
    fn a_senders_ack_adds() -> Vec<(&'static str, usize, usize)> {
        let cfg = |o: usize| at!(cfg) + o;
        let stats = |o: usize| at!(stats) + o;
        vec![
            ("cfg.dupack_threshold", cfg(offset_of!(TcpConfig, dupack_threshold)), 4),
            ("cfg.limited_transmit", cfg(offset_of!(TcpConfig, limited_transmit)), 1),
            ("cwnd_limited", at!(cwnd_limited), 1),
            ("cc (what CUBIC reads)", at!(cc) + 8 + size_of::<Cubic>() - Cubic::CA_BYTES, Cubic::CA_BYTES),
            ("win", at!(win), size_of::<Window>()),
            ("mss", at!(mss), 8),
            ("high_rxt", at!(high_rxt), 8),
            ("recover", at!(recover), 8),
            ("dupacks", at!(dupacks), 4),
            ("limited_sent", at!(limited_sent), 4),
            ("rtt", at!(rtt), size_of::<RttEstimator>()),
            ("stats.bytes_sent", stats(offset_of!(TcpStats, bytes_sent)), 8),
            ("stats.bytes_acked", stats(offset_of!(TcpStats, bytes_acked)), 8),
            ("stats.rtt_samples", stats(offset_of!(TcpStats, rtt_samples)), 8),
        ]
    }

    /// The lines the fields span.
    fn lines_of(fields: &[(&str, usize, usize)]) -> Vec<usize> {
        let mut lines: Vec<usize> = fields.iter().flat_map(|&(_, at, size)| line(at)..=line(at + size - 1)).collect();
        lines.sort();
        lines.dedup();
        lines
    }

    #[test]
    fn the_settings_a_segment_reads_are_the_last_72_bytes_of_the_config() {
        let hot = offset_of!(TcpConfig, ngwa);
        assert_eq!((hot, size_of::<TcpConfig>()), (128, 200));
        for (name, at) in [
            ("cc", offset_of!(TcpConfig, cc)),
            ("snd_buf", offset_of!(TcpConfig, snd_buf)),
            ("initial_rto", offset_of!(TcpConfig, initial_rto)),
            ("max_rto", offset_of!(TcpConfig, max_rto)),
            ("mss", offset_of!(TcpConfig, mss)),
            ("recovery", offset_of!(TcpConfig, recovery)),
            ("timestamps", offset_of!(TcpConfig, timestamps)),
        ] {
            assert!(at < hot, "{name}, read at set-up or in recovery, lies in the per-segment part");
        }
        for (name, at) in [
            ("rcv_buf", offset_of!(TcpConfig, rcv_buf)),
            ("delayed_ack_timeout", offset_of!(TcpConfig, delayed_ack_timeout)),
            ("ts_tick", offset_of!(TcpConfig, ts_tick)),
            ("delayed_ack_count", offset_of!(TcpConfig, delayed_ack_count)),
            ("dupack_threshold", offset_of!(TcpConfig, dupack_threshold)),
            ("sack", offset_of!(TcpConfig, sack)),
            ("limited_transmit", offset_of!(TcpConfig, limited_transmit)),
            ("shrink_window", offset_of!(TcpConfig, shrink_window)),
        ] {
            assert!(at >= hot, "{name}, read by every segment, lies in the cold part");
        }
    }

    #[test]
    fn a_data_segment_at_the_receiver_reads_seven_lines_of_its_connection() {
        assert_eq!(std::mem::align_of::<Connection>(), 64);
        // Lines 2 to 6 (the per-segment settings, then the state both
        // ends read), the out-of-order queue's counts on line 13 and the
        // counters on line 15. Before 2026-11-27 (branch speed8) it read
        // lines 2 to 9 and 14.
        assert_eq!(lines_of(&a_receivers_data_segment()), [2, 3, 4, 5, 6, 13, 15]);
        assert_eq!(at!(cc) % 64, 56, "the control's tag is the last 8 bytes of a line");
        // And the variant's state begins on the next line.
        let cc = Cc::new(crate::cc::CcKind::Cubic(Default::default()), 1);
        let Cc::Cubic(cubic) = &cc else { unreachable!() };
        assert_eq!(cubic as *const Cubic as usize - &cc as *const Cc as usize, 8);
    }

    #[test]
    fn an_ack_at_the_sender_in_congestion_avoidance_reads_the_receivers_lines_and_five_more() {
        let mut fields = a_receivers_data_segment();
        fields.extend(a_senders_ack_adds());
        // What CUBIC reads in congestion avoidance on lines 8-9 (line 7
        // holds its HyStart state), the sender's own on lines 10-12.
        // Before 2026-11-27 (branch speed8) it read lines 2 to 15.
        assert_eq!(lines_of(&fields), [2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 15]);
    }

    #[test]
    fn what_only_losses_timeouts_ngwa_or_ecn_read_lies_outside_the_lines_a_steady_segment_reads() {
        let mut fields = a_receivers_data_segment();
        fields.extend(a_senders_ack_adds());
        let hot = lines_of(&fields);
        let stats = |o: usize| at!(stats) + o;
        for (name, at, size) in [
            ("stats.bytes_retransmitted", stats(offset_of!(TcpStats, bytes_retransmitted)), 8),
            ("stats.timeouts", stats(offset_of!(TcpStats, timeouts)), 8),
            ("stats.ecn_reductions", stats(offset_of!(TcpStats, ecn_reductions)), 8),
            // The blocks' first 24 bytes share line 13 with the counts.
            (
                "ooo (its blocks past that line)",
                (line(at!(ooo)) + 1) * 64,
                at!(ooo) + size_of::<OooQueue>() - (line(at!(ooo)) + 1) * 64,
            ),
            ("rtt_timing", at!(rtt_timing), 24),
            ("ngwa", at!(ngwa), size_of::<NgwaReceiver>()),
            ("prr_delivered", at!(prr_delivered), 8),
            ("prr_out", at!(prr_out), 8),
            ("recover_fs", at!(recover_fs), 8),
            ("ecn_recover", at!(ecn_recover), 8),
            ("cfg.cc", offset_of!(TcpConfig, cc), size_of::<crate::cc::CcKind>()),
            ("cfg.recovery", offset_of!(TcpConfig, recovery), 1),
        ] {
            for l in line(at)..=line(at + size - 1) {
                assert!(!hot.contains(&l), "{name} at byte {at} lies on line {l}, which a steady segment reads");
            }
        }
        assert_eq!(size_of::<Connection>(), 19 * 64);
    }
}
