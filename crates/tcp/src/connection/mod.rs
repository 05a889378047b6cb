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
use crate::config::{LossSsthresh, PrrBound, Recovery, RecoveryFromCwr, TcpConfig};
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
/// Laid out by hand (`repr(C)`, on 64-byte lines) with its per-segment
/// state apart from its cold state: the settings read only at set-up or in
/// loss recovery (the first 128 bytes of `cfg`), then everything a segment
/// in the steady state reads or writes, in one block (the rest of `cfg`;
/// sequence variables, timers and flags; the SACK scoreboard and the
/// out-of-order queue; the congestion control and the RTT estimator; the
/// first line of `stats`), then the state of losses, ECN and NGWA and the
/// rest of the counters. A data segment at the receiver reads the block's
/// first lines and skips the sender's control and estimator; an ACK at the
/// sender reads the block. At 100x scale (6 200 connections, far more than
/// a core's cache) the compiler's own order spread those reads over all
/// 19 lines (docs/validation.md, "Hot state apart from cold").
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Connection {
    // The settings (per-segment ones in its last 72 bytes: `TcpConfig`).
    cfg: TcpConfig,

    // Sequence variables: send side offsets from `iss`, receive side from `irs`.
    rcv_nxt: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// One past the last byte the application handed over (FIN offset).
    app_end: u64,
    rwnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    last_ack_sent: u64,
    /// Right edge of the window advertised so far (it never shrinks).
    adv_edge: u64,
    /// Negotiated in the handshake.
    mss: u64,
    /// RFC 6675 HighRxt, one past the highest retransmitted byte.
    high_rxt: u64,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint.
    recover: u64,
    win: Window,

    // Timers.
    rto_at: Option<Time>,
    /// Persist timer (RFC 9293 section 3.8.6.1): armed while nothing is
    /// outstanding and the peer's window admits none of the waiting data.
    persist_at: Option<Time>,
    delack_at: Option<Time>,
    /// Pacing holds back data until then (a timer, see `next_timer`).
    pace_wait: Option<Time>,

    rcv_fin: Option<u64>,
    /// Delivery-rate records and pacing, for a control that asks (BBR);
    /// `None` for every other.
    rate: Option<Box<Rates>>,
    /// XCP feedback of the data received since our last ACK, to echo.
    xcp_echo: Option<i32>,
    iss: u32,
    irs: u32,
    ts_recent: u32,
    unacked_segs: u32,
    dupacks: u32,
    /// Bytes sent beyond cwnd by limited transmit (RFC 3042) since the
    /// last new ACK: not part of FlightSize for ssthresh (RFC 5681
    /// section 3.2 step 2).
    limited_sent: u32,
    /// Window probes sent since the window last admitted data (Linux
    /// `icsk_probes_out`): the persist interval doubles with each.
    persist_backoff: u32,
    state: State,
    sack_ok: bool,
    ts_ok: bool,
    fin_queued: bool,
    fin_acked: bool,
    /// cwnd limited the last data segment sent (see `cc::Ack::cwnd_limited`).
    cwnd_limited: bool,
    in_recovery: bool,
    fin_received: bool,
    /// ECN (RFC 3168): both ends agreed on ECN in the handshake.
    ecn_ok: bool,
    /// Shift applied to the peer's window field (its wscale).
    snd_shift: u8,
    /// Shift applied to our window field.
    rcv_shift: u8,

    board: Scoreboard,
    ooo: OooQueue,
    cc: Cc,
    rtt: RttEstimator,
    /// Counters (the eight a steady segment updates in the first line).
    stats: TcpStats,

    // Cold: losses, Karn's timing, NGWA, ECN reactions.
    /// Karn timing without timestamps: (end offset of the timed segment, sent at).
    rtt_timing: Option<(u64, Time)>,
    /// With `cfg.resend_merges_sent`: the segments sent and not yet
    /// acknowledged, `[start, end)` in order, as ns-3's sent list.
    sent_list: std::collections::VecDeque<(u64, u64)>,
    /// NGWA's remembered `Wngwa` (seed 001 section 2), if `cfg.ngwa` is set.
    ngwa: NgwaReceiver,
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    /// `LossSsthresh::Ns2` without SACK: ns-2.35's cwnd_ set at the fast
    /// retransmit, half of min(cwnd, the peer's window) unrounded, of which
    /// ssthresh is the whole segments (tcp.cc `slowdown`, `precisionReduce_`).
    ns2_halfwin: u64,
    /// Sender: no new reaction to ECE until SND.UNA passes this (once per
    /// window of data, RFC 3168 section 6.1.2).
    ecn_recover: u64,
    /// Partial ACKs seen in the current recovery without SACK (RFC 6582
    /// section 3.2 step 5 resets the retransmission timer on the first only).
    partial_acks: u32,
    /// Both ends offered window scaling.
    ws_ok: bool,
    /// Receiver: set ECE on what we send (classic: from a CE mark until the
    /// sender's CWR; DCTCP: the CE state of the last data segment).
    ece_echo: bool,
    /// Receiver, `cfg.ecn_echo_past_cwr`: a CE mark arrived since the last
    /// segment we sent (ns-3's `ECN_CE_RCVD`, which `SendEmptyPacket` turns
    /// into `ECN_SENDING_ECE`).
    ce_unacked: bool,
    /// Sender: set CWR on the next new data segment.
    cwr_due: bool,
    /// Sender: reducing cwnd after an ECE (RFC 3168 section 6.1.2) by PRR
    /// until SND.UNA passes `ecn_recover`, without growing it (Linux
    /// `TCP_CA_CWR`, ns-3 `CA_CWR`).
    in_cwr: bool,
    /// Sender, `PrrBound::SafeAck`: the ACK being processed advances SND.UNA
    /// and marks no further segment lost (RFC 9937's SafeACK).
    prr_safe_ack: bool,
    /// Sender, `cfg.resend_lost_retransmit`: the retransmissions of the
    /// running SACK recovery in the order sent, `(start, end, SND.MAX when
    /// sent)`. Each was a wholly un-SACKed hole when it went, so a SACK
    /// inside one reports that retransmission delivered; data at or above
    /// the third was first sent after it.
    rxt_sent: Vec<(u64, u64, u64)>,
}

impl Connection {
    fn new(cfg: &TcpConfig, iss: u32, state: State) -> Connection {
        let mss = cfg.send_mss(u32::MAX);
        let mut cc = Cc::new(cfg.cc, cfg.abc_limit.into());
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
            ns2_halfwin: 0,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity),
            rtt_timing: None,
            sent_list: Default::default(),
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
            ce_unacked: false,
            cwr_due: false,
            in_cwr: false,
            prr_safe_ack: false,
            rxt_sent: Vec::new(),
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
    /// packet logs: `una nxt max high_rxt cwnd ssthresh pipe rec recover
    /// cwr rto sack` (`cwr`: reducing after an ECE, ns-3's `CA_CWR`).
    pub fn describe(&self) -> String {
        let sacks: Vec<String> = self.board.sacked.ranges().iter().map(|(l, r)| format!("{l}-{r}")).collect();
        format!(
            "una={} nxt={} max={} hrxt={} cwnd={} ssth={} pipe={} rec={} recover={} cwr={} rto={:.3} sack=[{}]",
            self.snd_una,
            self.snd_nxt,
            self.snd_max,
            self.high_rxt,
            self.cc.window(&self.win),
            self.win.ssthresh.min(1 << 40),
            self.in_flight(),
            self.in_recovery as u8,
            self.recover,
            self.in_cwr as u8,
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
    use std::mem::{offset_of, size_of};

    /// The per-segment block of a connection: from the config's per-segment
    /// settings to the end of the counters' first line.
    fn hot_block() -> (usize, usize) {
        (offset_of!(Connection, cfg) + offset_of!(TcpConfig, ngwa), offset_of!(Connection, stats) + 64)
    }

    #[test]
    fn the_settings_a_segment_reads_are_the_last_72_bytes_of_the_config() {
        let hot = offset_of!(TcpConfig, ngwa);
        assert_eq!((hot, size_of::<TcpConfig>()), (128, 208));
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
            ("window_deducts_ooo", offset_of!(TcpConfig, window_deducts_ooo)),
        ] {
            assert!(at >= hot, "{name}, read by every segment, lies in the cold part");
        }
    }

    #[test]
    fn a_connection_keeps_its_per_segment_state_in_one_block_and_the_rest_outside_it() {
        assert_eq!(std::mem::align_of::<Connection>(), 64);
        let (from, to) = hot_block();
        assert_eq!(from % 64, 0, "the block starts on a line");
        // Sender and receiver read these on every segment.
        for (name, at) in [
            ("rcv_nxt", offset_of!(Connection, rcv_nxt)),
            ("snd_una", offset_of!(Connection, snd_una)),
            ("win", offset_of!(Connection, win)),
            ("rto_at", offset_of!(Connection, rto_at)),
            ("pace_wait", offset_of!(Connection, pace_wait)),
            ("rcv_fin", offset_of!(Connection, rcv_fin)),
            ("state", offset_of!(Connection, state)),
            ("rcv_shift", offset_of!(Connection, rcv_shift)),
            ("board", offset_of!(Connection, board)),
            ("ooo", offset_of!(Connection, ooo)),
            ("cc", offset_of!(Connection, cc)),
            ("rtt", offset_of!(Connection, rtt)),
            ("stats.segments_received", offset_of!(Connection, stats) + offset_of!(TcpStats, segments_received)),
            ("stats.dupacks_received", offset_of!(Connection, stats) + offset_of!(TcpStats, dupacks_received)),
        ] {
            assert!((from..to).contains(&at), "{name} at byte {at}, outside the block {from}..{to}");
        }
        for (name, at) in [
            ("stats.bytes_retransmitted", offset_of!(Connection, stats) + offset_of!(TcpStats, bytes_retransmitted)),
            ("rtt_timing", offset_of!(Connection, rtt_timing)),
            ("ngwa", offset_of!(Connection, ngwa)),
            ("prr_delivered", offset_of!(Connection, prr_delivered)),
            ("ecn_recover", offset_of!(Connection, ecn_recover)),
            ("cwr_due", offset_of!(Connection, cwr_due)),
        ] {
            assert!(at >= to, "{name} at byte {at}, inside the block {from}..{to}");
        }
        // A receiver's data segment reads the block up to the control's
        // first line (its variant), not the rest of the control or the
        // RTT estimator: those lines are the sender's alone.
        let receiver_end = offset_of!(Connection, cc) + 64;
        assert!(offset_of!(Connection, rtt) >= receiver_end);
        assert!((to - from).div_ceil(64) <= 14, "the block spans {} lines", (to - from).div_ceil(64));
    }
}
