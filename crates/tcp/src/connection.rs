//! The TCP state machine of one endpoint.
//!
//! Sequence numbers are kept internally as unwrapped 64-bit offsets from the
//! initial sequence number of their direction (offset 0 is the SYN, payload
//! byte k is offset k + 1, the FIN follows the last byte). Wire values are
//! converted at the edge with [`unwrap_seq`], so a long bulk flow may wrap
//! the 32-bit space without any comparison in the machine having to care
//! (RFC 9293 section 3.4 arithmetic, done once).

use netreturn_base::{TcpFlags, Time};

use crate::cc::{Ack, Cc, CongestionControl, Window};
use crate::config::{Recovery, TcpConfig};
use crate::rtt::RttEstimator;
use crate::sack::{OooQueue, Scoreboard};
use crate::segment::{Options, Segment};
use crate::stats::{Probe, TcpStats};

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
#[derive(Clone, Debug)]
pub struct Connection {
    cfg: TcpConfig,
    state: State,
    iss: u32,
    irs: u32,

    // Negotiated in the handshake.
    mss: u64,
    sack_ok: bool,
    ts_ok: bool,
    /// Both ends offered window scaling.
    ws_ok: bool,
    /// Shift applied to the peer's window field (its wscale).
    snd_shift: u8,
    /// Shift applied to our window field.
    rcv_shift: u8,

    // Send side, offsets from `iss`.
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// One past the last byte the application handed over (FIN offset).
    app_end: u64,
    fin_queued: bool,
    fin_acked: bool,
    rwnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    win: Window,
    cc: Cc,
    dupacks: u32,
    /// cwnd limited the last data segment sent (see `cc::Ack::cwnd_limited`).
    cwnd_limited: bool,
    in_recovery: bool,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint.
    recover: u64,
    /// RFC 6675 HighRxt, one past the highest retransmitted byte.
    high_rxt: u64,
    board: Scoreboard,
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    rtt: RttEstimator,
    /// Karn timing without timestamps: (end offset of the timed segment, sent at).
    rtt_timing: Option<(u64, Time)>,
    rto_at: Option<Time>,
    /// Persist timer (RFC 9293 section 3.8.6.1): armed while nothing is
    /// outstanding and the peer's window admits none of the waiting data.
    persist_at: Option<Time>,
    /// Window probes sent since the window last admitted data (Linux
    /// `icsk_probes_out`): the persist interval doubles with each.
    persist_backoff: u32,

    // Receive side, offsets from `irs`.
    rcv_nxt: u64,
    ooo: OooQueue,
    rcv_fin: Option<u64>,
    fin_received: bool,
    ts_recent: u32,
    last_ack_sent: u64,
    /// Right edge of the window advertised so far (it never shrinks).
    adv_edge: u64,
    delack_at: Option<Time>,
    unacked_segs: u32,

    stats: TcpStats,
}

impl Connection {
    fn new(cfg: &TcpConfig, iss: u32, state: State) -> Connection {
        let mss = cfg.mss.max(1) as u64;
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
            win: Window {
                cwnd: cfg.initial_cwnd as u64 * mss,
                ssthresh: cfg.initial_ssthresh,
                mss,
            },
            cc: Cc::new(cfg.cc, cfg.abc_limit),
            dupacks: 0,
            cwnd_limited: false,
            in_recovery: false,
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

    pub fn stats(&self) -> &TcpStats {
        &self.stats
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

    /// Earliest pending deadline (retransmission, persist or delayed ACK).
    pub fn next_timer(&self) -> Option<Time> {
        [self.rto_at, self.persist_at, self.delack_at].into_iter().flatten().min()
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
    }

    /// Processes one arriving segment.
    pub fn on_segment(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        self.stats.segments_received += 1;
        if seg.flags.rst() {
            self.state = State::Closed;
            self.rto_at = None;
            self.persist_at = None;
            self.delack_at = None;
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

    fn synchronized(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent | State::SynReceived)
    }

    /// Options are on only if both ends offered them (RFC 7323 sections 1.3
    /// and 2.2, RFC 2018 section 2).
    fn negotiate(&mut self, syn: &Segment) {
        let peer = &syn.opts;
        // RFC 9293 section 3.7.1: 536 when the peer sends no MSS option.
        self.mss = (self.cfg.mss as u64).min(peer.mss.unwrap_or(536) as u64).max(1);
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
    }

    fn establish(&mut self) {
        self.state = if self.fin_queued { State::FinWait1 } else { State::Established };
        // RFC 6928 initial window, in negotiated segments.
        self.win.cwnd = self.cfg.initial_cwnd as u64 * self.mss;
    }

    fn send_syn(&mut self, now: Time, retransmission: bool, out: &mut Vec<Segment>) {
        let server = self.state == State::SynReceived;
        let mut opts = Options {
            mss: Some(self.cfg.mss.min(u16::MAX as u32) as u16),
            ..Default::default()
        };
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
            flags: if server { TcpFlags::SYN | TcpFlags::ACK } else { TcpFlags::SYN },
            // RFC 7323 section 2.2: the window in a SYN is never scaled.
            window: self.cfg.rcv_buf.min(u16::MAX as u64) as u16,
            opts,
            len: 0,
            retransmission,
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

    fn ts_val(&self, now: Time) -> u32 {
        (now.0 / self.cfg.ts_tick.0.max(1)) as u32
    }

    /// Time since the TSval `ecr` was current, like ns-3's
    /// `ElapsedTimeFromTsValue` (exact `now` minus the tick-rounded send time).
    fn ts_elapsed(&self, now: Time, ecr: u32) -> Option<Time> {
        let tick = self.cfg.ts_tick.0.max(1);
        let ticks = (self.ts_val(now).wrapping_sub(ecr)) as u64;
        (ticks < 1 << 31).then(|| Time(ticks * tick + now.0 % tick))
    }
}

impl Connection {
    // ---------------------------------------------------------------
    // Receive side

    /// Our window field: `rcv_buf` minus out-of-order bytes held, never
    /// moving the right edge left (RFC 9293 section 3.8.6.2.2), scaled down
    /// by our shift and so rounded down (RFC 7323 section 2.3).
    fn window_field(&mut self) -> u16 {
        let free = self.cfg.rcv_buf.saturating_sub(self.ooo.held.bytes());
        let keep = self.adv_edge.saturating_sub(self.rcv_nxt);
        let field = (free.max(keep) >> self.rcv_shift).min(u16::MAX as u64);
        self.adv_edge = self.adv_edge.max(self.rcv_nxt + (field << self.rcv_shift));
        field as u16
    }

    /// Stores the payload and FIN of a segment; says how soon to ACK.
    fn process_data(&mut self, start: u64, seg: &Segment) -> AckDue {
        let fin = seg.flags.fin();
        if seg.len == 0 && !fin {
            // RFC 9293 section 3.10.7.4: an unacceptable segment is answered
            // with an ACK. The one a sender makes on purpose sits just below
            // RCV.NXT: a zero-window probe (Linux `tcp_xmit_probe_skb`).
            return if start < self.rcv_nxt { AckDue::Now } else { AckDue::No };
        }
        let end = start + seg.len as u64;
        if start > self.rcv_nxt && start >= self.adv_edge {
            // RFC 9293 section 3.10.7.4, Linux `tcp_data_queue`: data that
            // starts beyond the right edge we advertised is not acceptable;
            // drop it and ACK. Out-of-order data we hold therefore lies
            // inside the advertised window, which never shrinks, so it can
            // never fill the buffer ahead of a hole at RCV.NXT and close the
            // window (the stall of issue 9). A segment at RCV.NXT is always
            // accepted: the application reads at once, so in-order data
            // needs no buffer space and Linux's pruning of the out-of-order
            // queue (`tcp_prune_ofo_queue`) has nothing to make room for.
            self.stats.beyond_window_received += 1;
            return AckDue::Now;
        }
        let mut due = AckDue::No;
        if seg.len > 0 {
            if end <= self.rcv_nxt {
                // Old data: ACK at once so the sender learns rcv_nxt.
                self.stats.duplicates_received += 1;
                due = AckDue::Now;
            } else if start > self.rcv_nxt {
                // Out of order: immediate (duplicate) ACK with SACK blocks
                // (RFC 5681 section 4.2).
                self.ooo.insert(start, end);
                self.stats.out_of_order_received += 1;
                due = AckDue::Now;
            } else {
                let filled_hole = !self.ooo.held.is_empty();
                let old = self.rcv_nxt;
                self.rcv_nxt = self.ooo.advance(end);
                // The application reads at once: everything in order is delivered.
                self.stats.bytes_delivered += self.rcv_nxt - old;
                if filled_hole {
                    // RFC 5681 section 4.2: ACK at once data that fills a gap.
                    due = AckDue::Now;
                } else {
                    // RFC 1122 / RFC 5681 delayed ACK: every n-th segment.
                    self.unacked_segs += 1;
                    due = if self.unacked_segs >= self.cfg.delayed_ack_count {
                        AckDue::Now
                    } else {
                        AckDue::Delayed
                    };
                }
            }
        }
        if fin {
            self.rcv_fin = Some(end);
            due = AckDue::Now;
        }
        if !self.fin_received && self.rcv_fin == Some(self.rcv_nxt) {
            self.rcv_nxt += 1;
            self.fin_received = true;
            self.state = match self.state {
                State::Established => State::CloseWait,
                State::FinWait1 if self.fin_acked => State::TimeWait,
                State::FinWait1 => State::Closing,
                State::FinWait2 => State::TimeWait,
                s => s,
            };
        }
        due
    }

    // ---------------------------------------------------------------
    // Sender: ACK processing

    fn process_ack(&mut self, now: Time, seq_off: u64, seg: &Segment, out: &mut Vec<Segment>) {
        let ack = unwrap_seq(seg.ack, self.iss, self.snd_una);
        if ack > self.snd_max || ack < self.snd_una {
            return;
        }
        let sacked_before = self.board.sacked.bytes();
        if self.sack_ok {
            for &(l, r) in seg.opts.sack.as_slice() {
                let l = unwrap_seq(l, self.iss, self.snd_una).max(ack);
                let r = unwrap_seq(r, self.iss, self.snd_una).min(self.snd_max);
                self.board.sacked.insert(l, r);
            }
        }
        // Window update, RFC 9293 section 3.10.7.4 (SND.WL1 / SND.WL2).
        let wnd = (seg.window as u64) << self.snd_shift;
        let window_changed = wnd != self.rwnd;
        if seq_off > self.snd_wl1 || (seq_off == self.snd_wl1 && ack >= self.snd_wl2) {
            self.rwnd = wnd;
            self.snd_wl1 = seq_off;
            self.snd_wl2 = ack;
        }
        if ack > self.snd_una {
            self.on_new_ack(now, ack, sacked_before, seg, out);
        } else if seg.len == 0 && !seg.flags.fin() && self.snd_max > self.snd_una {
            let duplicate = if self.sack_ok {
                // RFC 6675 section 2 (DupAck, conditions a-e): an ACK that
                // carries new SACK information, whatever its window (as ns-3
                // `ProcessAck` and Linux count SACKed segments). A gateway
                // that rewrites windows changes the window of nearly every
                // ACK, and RFC 5681's rule would hide the losses from us.
                self.board.sacked.bytes() > sacked_before
            } else {
                // RFC 5681 section 2: the window must be unchanged too, so a
                // window-rewriting gateway hides dupACKs from a non-SACK
                // sender (docs/tcp.md, "Duplicate ACKs behind a gateway").
                !window_changed
            };
            if duplicate {
                self.on_dupack(now, sacked_before, out);
            }
        }
    }

    fn on_new_ack(&mut self, now: Time, ack: u64, sacked_before: u64, seg: &Segment, out: &mut Vec<Segment>) {
        let old_una = self.snd_una;
        let acked = ack - old_una;
        let data_acked = ack.min(self.app_end).saturating_sub(old_una.max(1));
        self.stats.bytes_acked += data_acked;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.high_rxt = self.high_rxt.max(ack);
        self.board.sacked.trim_below(ack);
        // RFC 6937 DeliveredData = change in snd.una + change in SACKed bytes.
        let delivered = (acked + self.board.sacked.bytes()).saturating_sub(sacked_before);

        // RTT: RFC 7323 section 4 (RTTM) with timestamps, else Karn's
        // algorithm on one timed segment (RFC 6298 section 3).
        let sample = if self.ts_ok {
            seg.opts.timestamps.and_then(|(_, ecr)| self.ts_elapsed(now, ecr))
        } else {
            match self.rtt_timing {
                Some((end, sent)) if ack >= end => {
                    self.rtt_timing = None;
                    Some(now.saturating_sub(sent))
                }
                _ => None,
            }
        };
        if let Some(r) = sample {
            self.rtt.sample(r);
            self.stats.rtt_samples += 1;
        }

        if self.in_recovery {
            if ack >= self.recover {
                self.exit_recovery(now);
            } else if self.sack_ok {
                self.prr_update(delivered);
            } else if self.cc.partial_ack_ends_recovery() {
                // Reno (RFC 5681 section 3.2 step 6): any new ACK ends recovery.
                self.exit_recovery(now);
            } else {
                // RFC 6582 section 3.2 step 5, partial ACK: retransmit the
                // first unacknowledged segment, deflate cwnd by the amount
                // acknowledged and add back one SMSS if that was >= SMSS.
                self.retransmit_head(now, out);
                let mut cwnd = self.win.cwnd.saturating_sub(acked);
                if acked >= self.mss {
                    cwnd += self.mss;
                }
                self.win.cwnd = cwnd.max(self.mss);
            }
        } else {
            self.dupacks = 0;
            if old_una > 0 && data_acked > 0 {
                let info = Ack {
                    acked: data_acked,
                    rtt: sample,
                    srtt: self.rtt.srtt(),
                    snd_una: self.snd_una,
                    snd_max: self.snd_max,
                    cwnd_limited: self.cwnd_limited,
                };
                self.cc.on_ack(now, &mut self.win, &info);
            }
        }

        // RFC 6298 (5.2) stop the timer when all is acknowledged, (5.3)
        // restart it otherwise.
        self.rto_at = (self.snd_una < self.snd_max).then(|| now + self.rtt.rto());

        if self.fin_queued && !self.fin_acked && self.snd_una > self.app_end {
            self.fin_acked = true;
            self.state = match self.state {
                State::FinWait1 => State::FinWait2,
                State::Closing => State::TimeWait,
                State::LastAck => State::Closed,
                s => s,
            };
        }
    }

    fn on_dupack(&mut self, now: Time, sacked_before: u64, out: &mut Vec<Segment>) {
        self.stats.dupacks_received += 1;
        self.dupacks += 1;
        if !self.cc.fast_retransmit() {
            return;
        }
        if self.in_recovery {
            if self.sack_ok {
                let delivered = self.board.sacked.bytes().saturating_sub(sacked_before);
                self.prr_update(delivered);
            } else {
                // RFC 6582 section 3.2 step 4 (RFC 5681 step 4): inflate.
                self.win.cwnd += self.mss;
            }
            return;
        }
        let dt = self.cfg.dupack_threshold;
        // RFC 6675 section 5: DupThresh dupACKs, or IsLost(HighACK + 1).
        let lost = self.dupacks >= dt
            || (self.sack_ok && self.board.is_lost(self.snd_una, self.mss, dt));
        // RFC 6582 section 3.2 step 2 / RFC 6675 section 5.1: no new recovery
        // until the ACK passes the previous recovery point.
        if lost && self.snd_una >= self.recover {
            let delivered = self.board.sacked.bytes().saturating_sub(sacked_before);
            self.enter_recovery(now, delivered, out);
        }
    }

    fn enter_recovery(&mut self, now: Time, delivered: u64, out: &mut Vec<Segment>) {
        self.stats.fast_retransmits += 1;
        self.in_recovery = true;
        self.recover = self.snd_max;
        let flight = self.snd_max - self.snd_una;
        self.win.ssthresh = self.cc.ssthresh_after_loss(now, &self.win, flight);
        self.high_rxt = self.snd_una;
        if self.sack_ok {
            // RFC 6937: RecoverFS = snd.nxt - snd.una.
            self.recover_fs = flight;
            self.prr_delivered = 0;
            self.prr_out = 0;
            // RFC 6675 section 5 step (4.3): retransmit the first
            // un-SACKed segment regardless of cwnd.
            let (gap, gap_end) = self.board.sacked.next_gap(self.snd_una);
            let len = self.mss.min(gap_end - gap).min(self.app_end.saturating_sub(gap));
            let fin = self.fin_at(gap, len);
            if len > 0 || fin {
                self.emit(now, gap, len, fin, out);
                self.high_rxt = gap + len;
            }
            match self.cfg.recovery {
                // RFC 6675 section 5 step (4.2): cwnd = ssthresh.
                Recovery::Classic => self.win.cwnd = self.win.ssthresh,
                Recovery::Prr => self.prr_update(delivered),
            }
        } else {
            self.retransmit_head(now, out);
            // RFC 6582 section 3.2 step 2: cwnd = ssthresh + 3 SMSS.
            self.win.cwnd = self.win.ssthresh + self.cfg.dupack_threshold as u64 * self.mss;
        }
    }

    fn exit_recovery(&mut self, now: Time) {
        self.in_recovery = false;
        self.dupacks = 0;
        // RFC 6937 section 3 / RFC 6582 section 3.2 step 6: cwnd = ssthresh
        // at the end of recovery.
        self.win.cwnd = self.win.ssthresh.max(self.mss);
        self.cc.on_recovery_exit(now, &mut self.win);
    }

    /// PRR (RFC 6937 section 3, PRR-SSRB), run on every ACK in recovery.
    fn prr_update(&mut self, delivered: u64) {
        if self.cfg.recovery != Recovery::Prr {
            return;
        }
        self.prr_delivered += delivered;
        let pipe = self.pipe();
        let ssthresh = self.win.ssthresh;
        let sndcnt: i128 = if pipe > ssthresh {
            // Proportional part: sndcnt = CEIL(prr_delivered * ssthresh /
            // RecoverFS) - prr_out.
            let num = self.prr_delivered as u128 * ssthresh as u128;
            num.div_ceil(self.recover_fs.max(1) as u128) as i128 - self.prr_out as i128
        } else {
            // Slow-start reduction bound: limit = MAX(prr_delivered -
            // prr_out, DeliveredData) + MSS; sndcnt = MIN(ssthresh - pipe, limit).
            let limit = (self.prr_delivered as i128 - self.prr_out as i128).max(delivered as i128)
                + self.mss as i128;
            ((ssthresh - pipe) as i128).min(limit)
        };
        self.win.cwnd = pipe + sndcnt.max(0) as u64;
    }

    fn pipe(&self) -> u64 {
        self.board.pipe(self.snd_una, self.snd_max, self.high_rxt, self.mss, self.cfg.dupack_threshold)
    }

    fn in_flight(&self) -> u64 {
        if self.in_recovery && self.sack_ok {
            self.pipe()
        } else {
            self.snd_nxt - self.snd_una
        }
    }

    // ---------------------------------------------------------------
    // Retransmission timer

    fn on_rto(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.stats.timeouts += 1;
        match self.state {
            State::SynSent | State::SynReceived => {
                // RFC 6298 (5.5) applies to the SYN too.
                self.rtt.back_off();
                self.send_syn(now, true, out);
                return;
            }
            _ => {}
        }
        if self.snd_una >= self.snd_max {
            return;
        }
        if self.rtt.backoff() == 0 {
            // RFC 5681 (4) on the first timeout of a series; repeated
            // timeouts of the same data keep ssthresh (RFC 5681 section 3.1).
            let flight = self.snd_max - self.snd_una;
            self.win.ssthresh = self.cc.on_rto(now, &self.win, flight);
        }
        // RFC 5681 section 3.1: cwnd = LW = 1 SMSS.
        self.win.cwnd = self.mss;
        self.in_recovery = false;
        self.dupacks = 0;
        // RFC 6582 section 3.2 step 1 / RFC 6675 section 5.1: recovery
        // point to the highest sequence sent. The SACK scoreboard is kept
        // (RFC 6675 section 5.1 and Errata 1610; ns-3 3.44 `ReTxTimeout`:
        // `SetSentListLost(resetSack = !sack)`; Linux `tcp_enter_loss`): our
        // receiver never reneges, and the receiver reports only its 3 most
        // recent blocks, so a cleared board resends data it holds.
        self.recover = self.snd_max;
        // Go-back-N from snd_una with slow start.
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.rtt_timing = None;
        // RFC 6298 (5.5) back off, (5.6) restart the timer when sending.
        self.rtt.back_off();
        self.transmit(now, out);
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    // ---------------------------------------------------------------
    // Sending

    /// Whether a segment `[off, off+len)` carries our FIN.
    fn fin_at(&self, off: u64, len: u64) -> bool {
        self.fin_queued && off + len == self.app_end
    }

    fn transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.synchronized() {
            return;
        }
        loop {
            let sent = if self.in_recovery && self.sack_ok {
                self.send_one_sack_recovery(now, out)
            } else {
                self.send_one(now, out)
            };
            if !sent {
                break;
            }
        }
        self.check_persist(now);
    }

    /// Whether the peer's window admits `[off, off + len)`: new data must
    /// end inside it (RFC 9293 section 3.8.6, Linux `tcp_snd_wnd_test`); a
    /// retransmission must start inside it, and the one at SND.UNA goes out
    /// whatever the window, serving as a window probe (Linux
    /// `tcp_retransmit_skb`). The right edge is SND.UNA + SND.WND; it is
    /// never compared with what is in flight, which after a timeout leaves
    /// out SACKed bytes and would let the sender run past the receiver's
    /// buffer.
    fn window_admits(&self, off: u64, len: u64) -> bool {
        let edge = self.snd_una + self.rwnd;
        if off < self.snd_max {
            off == self.snd_una || off < edge
        } else {
            off + len <= edge
        }
    }

    /// Outside SACK recovery: the next byte at `snd_nxt` (new data, or
    /// go-back-N after a timeout), limited by cwnd on what is in flight and
    /// by the peer's window on the right edge.
    fn send_one(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        let regoing = self.snd_nxt < self.snd_max;
        if regoing && self.sack_ok {
            // Going back after a timeout: skip what the receiver SACKed since.
            if let Some((_, r)) = self.board.sacked.containing(self.snd_nxt) {
                self.snd_nxt = r.min(self.snd_max);
            }
        }
        let off = self.snd_nxt;
        let (mut len, fin) = if off < self.app_end {
            let mut len = (self.app_end - off).min(self.mss);
            if self.snd_nxt < self.snd_max && self.sack_ok {
                len = len.min(self.board.sacked.next_gap(off).1 - off);
            }
            (len, self.fin_at(off, len))
        } else if self.fin_queued && off == self.app_end {
            (0, true)
        } else {
            return false;
        };
        let mut flight = off - self.snd_una;
        if self.sack_ok && !self.in_recovery && self.snd_una < self.recover {
            // After a timeout (ns-3 CA_LOSS): SACKed bytes are not in
            // flight (RFC 6675 pipe; ns-3 `BytesInFlight`).
            flight -= self.board.sacked.bytes_in(self.snd_una, off);
        }
        let mut cwnd = self.cc.window(&self.win);
        if self.cfg.limited_transmit && !self.in_recovery && self.dupacks < self.cfg.dupack_threshold {
            // RFC 3042: up to two extra segments on the first two dupACKs.
            cwnd = cwnd.saturating_add(self.dupacks as u64 * self.mss);
        }
        if len > 0 {
            if flight + len > cwnd {
                if flight > 0 {
                    return false;
                }
                // Nothing in flight and a cwnd below one segment: send what
                // it allows (cwnd never stops an empty pipe).
                len = cwnd.max(1);
            }
            if !self.window_admits(off, len) {
                // The persist timer takes over if nothing is outstanding.
                return false;
            }
        }
        let fin = fin && off + len == self.app_end;
        self.emit(now, off, len, fin, out);
        self.snd_nxt = off + len + fin as u64;
        true
    }

    /// Arms the persist timer when nothing is outstanding and data waits
    /// that the peer's window does not admit (RFC 9293 section 3.8.6.1,
    /// Linux `tcp_check_probe_timer`); disarms it otherwise. With data
    /// outstanding the retransmission timer guards the connection, and its
    /// retransmission at SND.UNA probes the window.
    fn check_persist(&mut self, now: Time) {
        let waiting = self.snd_nxt < self.app_end;
        if waiting && self.snd_una == self.snd_max && self.rto_at.is_none() {
            if self.persist_at.is_none() {
                self.persist_at = Some(now + self.persist_interval());
            }
        } else {
            self.persist_at = None;
            self.persist_backoff = 0;
        }
    }

    /// Linux `tcp_probe0_when`: the RTO, doubled for every probe already
    /// sent, at most the maximum RTO.
    fn persist_interval(&self) -> Time {
        let shift = self.persist_backoff.min(32);
        Time(self.rtt.rto().0.saturating_mul(1u64 << shift)).min(self.cfg.max_rto)
    }

    /// The persist timer fired (Linux `tcp_probe_timer` / `tcp_write_wakeup`).
    /// If the window admits part of the next segment, that part goes out
    /// (and the retransmission timer takes over); if it is closed, a probe
    /// with SEG.SEQ = SND.UNA - 1 and no data makes the receiver answer with
    /// its window. ns-3 3.44 (`PersistTimeout`) and RFC 9293 probe with one
    /// byte of new data instead; both elicit the same ACK.
    fn on_persist(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.stats.window_probes += 1;
        let off = self.snd_nxt;
        let edge = self.snd_una + self.rwnd;
        if off < self.app_end && off < edge {
            let len = (edge - off).min(self.mss).min(self.app_end - off);
            let fin = self.fin_at(off, len);
            self.emit(now, off, len, fin, out);
            self.snd_nxt = off + len + fin as u64;
        } else {
            let probe = self.header(now, self.snd_una.saturating_sub(1));
            self.stats.segments_sent += 1;
            out.push(probe);
            self.persist_backoff += 1;
        }
        self.check_persist(now);
    }

    /// In SACK recovery: RFC 6675 section 5 step (C), NextSeg while
    /// `cwnd - pipe` allows a segment (cwnd set by PRR or = ssthresh).
    fn send_one_sack_recovery(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        let pipe = self.pipe();
        if pipe >= self.win.cwnd {
            return false;
        }
        let avail = self.win.cwnd - pipe;
        let Some((off, len, fin, retransmit)) = self.next_seg() else { return false };
        if len > avail || (retransmit && !self.window_admits(off, len)) {
            return false;
        }
        self.emit(now, off, len, fin, out);
        if retransmit {
            self.high_rxt = self.high_rxt.max(off + len);
        } else {
            self.snd_nxt = off + len + fin as u64;
        }
        true
    }

    /// RFC 6675 section 4, NextSeg(): (offset, length, FIN, is retransmission).
    fn next_seg(&self) -> Option<(u64, u64, bool, bool)> {
        let dt = self.cfg.dupack_threshold;
        let (gap, gap_end) = self.board.sacked.next_gap(self.high_rxt.max(self.snd_una));
        let gap_len = |limit: u64| self.mss.min(gap_end.min(limit) - gap);
        // Rule 1: the first lost, not yet retransmitted byte.
        let lost_end = self.board.lost_below(self.mss, dt);
        if gap < lost_end {
            return Some((gap, gap_len(lost_end), false, true));
        }
        // Rule 2: new data the receiver window allows.
        if self.snd_nxt < self.app_end {
            let len = (self.app_end - self.snd_nxt).min(self.mss);
            if self.snd_nxt + len <= self.snd_una + self.rwnd {
                return Some((self.snd_nxt, len, self.fin_at(self.snd_nxt, len), false));
            }
        } else if self.fin_queued && self.snd_nxt == self.app_end {
            return Some((self.snd_nxt, 0, true, false));
        }
        // Rule 3: a not-yet-lost hole below the highest SACKed byte.
        let high = self.board.high_sacked();
        if gap < high {
            return Some((gap, gap_len(high), false, true));
        }
        None
    }

    /// Resends the segment at `snd_una` (fast retransmit, NewReno partial ACK).
    fn retransmit_head(&mut self, now: Time, out: &mut Vec<Segment>) {
        let off = self.snd_una;
        let len = self.mss.min(self.app_end.saturating_sub(off)).min(self.snd_max - off);
        let fin = self.fin_at(off, len) && self.snd_max > self.app_end;
        if len > 0 || fin {
            self.emit(now, off, len, fin, out);
            self.high_rxt = self.high_rxt.max(off + len);
        }
    }

    /// Header fields every segment after the handshake carries: ACK, window,
    /// timestamps, SACK blocks. Sending it satisfies any pending ACK.
    fn header(&mut self, now: Time, off: u64) -> Segment {
        let mut opts = Options::default();
        if self.ts_ok {
            opts.timestamps = Some((self.ts_val(now), self.ts_recent));
        }
        if self.sack_ok {
            // RFC 2018 section 3: at most 3 blocks next to timestamps.
            let max = if self.ts_ok { 3 } else { 4 };
            for &(l, r) in self.ooo.blocks().iter().take(max) {
                opts.sack.push(self.irs.wrapping_add(l as u32), self.irs.wrapping_add(r as u32));
            }
        }
        let window = self.window_field();
        self.last_ack_sent = self.rcv_nxt;
        self.delack_at = None;
        self.unacked_segs = 0;
        Segment {
            seq: self.iss.wrapping_add(off as u32),
            ack: self.irs.wrapping_add(self.rcv_nxt as u32),
            flags: TcpFlags::ACK,
            window,
            opts,
            len: 0,
            retransmission: false,
        }
    }

    fn send_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.synchronized() {
            return;
        }
        let seg = self.header(now, self.snd_max);
        self.stats.segments_sent += 1;
        self.stats.acks_sent += 1;
        out.push(seg);
    }

    /// Puts `[off, off + len)` (and the FIN) on the wire.
    fn emit(&mut self, now: Time, off: u64, len: u64, fin: bool, out: &mut Vec<Segment>) {
        let retransmission = off < self.snd_max;
        // ns-3 SendDataPacket: cwnd limits the sender if less than one SMSS
        // of it is left once this segment is in flight.
        self.cwnd_limited = self.win.cwnd < self.in_flight() + len + self.mss;
        let mut seg = self.header(now, off);
        seg.len = len as u32;
        if fin {
            seg.flags = seg.flags | TcpFlags::FIN;
        }
        seg.retransmission = retransmission;
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        let end = off + len + fin as u64;
        if retransmission {
            self.stats.segments_retransmitted += 1;
            self.stats.bytes_retransmitted += len;
            // Karn: a retransmission spoils the timed segment.
            if self.rtt_timing.is_some_and(|(e, _)| off < e) {
                self.rtt_timing = None;
            }
        } else if !self.ts_ok && self.rtt_timing.is_none() {
            self.rtt_timing = Some((end, now));
        }
        self.snd_max = self.snd_max.max(end);
        if self.in_recovery {
            self.prr_out += len;
        }
        // RFC 6298 (5.1): start the timer if it is not running.
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
        out.push(seg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client and a server after a hand-driven handshake at t = 0.
    fn established(cfg: &TcpConfig) -> (Connection, Connection) {
        let mut c = Connection::client(cfg, 1000);
        let mut s = Connection::server(cfg, 5000);
        let mut out = Vec::new();
        c.open(Time::ZERO, &mut out);
        let syn = out.pop().unwrap();
        s.on_segment(Time::ZERO, &syn, &mut out);
        let syn_ack = out.pop().unwrap();
        c.on_segment(Time::ZERO, &syn_ack, &mut out);
        let ack = out.pop().unwrap();
        s.on_segment(Time::ZERO, &ack, &mut out);
        assert!(c.is_established() && s.is_established() && out.is_empty());
        (c, s)
    }

    /// The data segment carrying stream bytes `[k*mss, (k+1)*mss)` from `c`.
    fn data(c: &Connection, k: u64) -> Segment {
        Segment {
            seq: c.iss.wrapping_add(1 + (k * c.mss) as u32),
            ack: c.irs.wrapping_add(1),
            flags: TcpFlags::ACK,
            window: 1000,
            len: c.mss as u32,
            ..Default::default()
        }
    }

    #[test]
    fn unwrap_seq_picks_the_offset_nearest_the_reference() {
        assert_eq!(unwrap_seq(10, 5, 0), 5);
        // Past the 2^32 wrap: offset 2^32 + 3 from isn 0.
        assert_eq!(unwrap_seq(3, 0, (1 << 32) - 10), (1 << 32) + 3);
        // Slightly behind the reference stays behind it.
        assert_eq!(unwrap_seq(u32::MAX, 0, 1 << 32), (1 << 32) - 1);
    }

    #[test]
    fn delayed_ack_is_sent_every_second_segment_or_after_200_ms() {
        // RFC 5681 section 4.2 / ns-3 DelAckCount = 2, DelAckTimeout = 200 ms.
        let cfg = TcpConfig { mss: 1000, ..Default::default() };
        let (c, mut s) = established(&cfg);
        let mut out = Vec::new();
        let ms = Time::from_millis;
        s.on_segment(ms(10), &data(&c, 0), &mut out);
        assert!(out.is_empty(), "first segment: ACK delayed");
        assert_eq!(s.next_timer(), Some(ms(210)));
        s.on_segment(ms(20), &data(&c, 1), &mut out);
        assert_eq!(out.len(), 1, "second full segment: ACK now");
        assert_eq!(out[0].ack, c.iss.wrapping_add(2001));
        assert_eq!(s.next_timer(), None);
        out.clear();
        s.on_segment(ms(30), &data(&c, 2), &mut out);
        s.on_timer(ms(229), &mut out);
        assert!(out.is_empty(), "early timer call does nothing");
        s.on_timer(ms(230), &mut out);
        assert_eq!(out.len(), 1, "200 ms later the delayed ACK goes out");
        assert_eq!(out[0].ack, c.iss.wrapping_add(3001));
        out.clear();
        // Out of order (segment 4 before 3): immediate ACK with a SACK block.
        s.on_segment(ms(300), &data(&c, 4), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, c.iss.wrapping_add(3001));
        let b = c.iss.wrapping_add(4001);
        assert_eq!(out[0].opts.sack.as_slice(), &[(b, b.wrapping_add(1000))]);
        out.clear();
        // Filling the hole: immediate ACK for both.
        s.on_segment(ms(310), &data(&c, 3), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, c.iss.wrapping_add(5001));
        assert_eq!(out[0].opts.sack.len, 0);
        assert_eq!(s.stats().bytes_delivered, 5000);
    }

    #[test]
    fn after_a_timeout_data_the_receiver_sacked_is_not_sent_again() {
        // RFC 6675 section 5.1 (Errata 1610), ns-3 3.44 (`ReTxTimeout` keeps
        // the SACK scoreboard) and Linux: after an RTO the sender goes back
        // to SND.UNA but skips what the receiver SACKed before the timeout,
        // which the receiver no longer reports (3 blocks, most recent first).
        let cfg = TcpConfig { mss: 1000, ..Default::default() };
        let (mut c, mut s) = established(&cfg);
        let ms = Time::from_millis;
        let mut sent = Vec::new();
        c.send(ms(0), 10_000, &mut sent);
        assert_eq!(sent.len(), 10);
        // The odd segments arrive, the even ones are lost.
        let mut acks = Vec::new();
        for k in [1, 3, 5, 7, 9] {
            s.on_segment(ms(40), &sent[k], &mut acks);
        }
        assert_eq!(acks.len(), 5);
        let mut lost = Vec::new();
        for a in &acks {
            c.on_segment(ms(80), a, &mut lost);
        }
        // Fast recovery starts; its retransmissions are lost as well. Then
        // the retransmission timer expires: segment 0 again.
        let t = c.next_timer().expect("RTO armed");
        let mut rtx = Vec::new();
        c.on_timer(t, &mut rtx);
        assert_eq!(rtx.len(), 1);
        assert_eq!(rtx[0].seq, c.iss.wrapping_add(1));
        let mut ack = Vec::new();
        s.on_segment(t + ms(40), &rtx[0], &mut ack);
        assert_eq!(ack.len(), 1);
        assert_eq!(ack[0].ack, c.iss.wrapping_add(2001));
        // Segments 9, 7 and 5 reported; segment 3 not any more.
        assert_eq!(ack[0].opts.sack.len, 3);
        let mut out = Vec::new();
        c.on_segment(t + ms(80), &ack[0], &mut out);
        let segs: Vec<u32> = out.iter().map(|g| g.seq.wrapping_sub(c.iss.wrapping_add(1)) / 1000).collect();
        assert_eq!(segs.first(), Some(&2), "the next hole first: {segs:?}");
        assert!(segs.iter().all(|k| k % 2 == 0), "nothing the receiver holds: {segs:?}");
        assert!(segs.len() >= 2, "slow start sends 2 holes: {segs:?}");
    }

    #[test]
    fn window_field_shifted_back_never_exceeds_the_buffer() {
        // RFC 7323 section 2.3: field << shift == window rounded down.
        for buf in [1000u64, 65_535, 65_536, 131_072, 200_001, 1 << 20, 60_000_000] {
            let cfg = TcpConfig { rcv_buf: buf, ..Default::default() };
            let shift = cfg.wscale_shift();
            assert!(buf >> shift <= 0xffff, "buf {buf} shift {shift}");
            assert!(shift == 0 || buf >> (shift - 1) > 0xffff, "smallest shift for {buf}");
            let (mut c, s) = established(&cfg);
            let field = c.window_field() as u64;
            assert_eq!(field << shift, (buf >> shift) << shift);
            assert!(field << shift <= buf);
            // The peer reads the same value back.
            assert_eq!(s.snd_shift, shift);
        }
    }

    #[test]
    fn advertised_window_shrinks_by_held_out_of_order_bytes_without_moving_the_edge_left() {
        let cfg = TcpConfig { mss: 1000, rcv_buf: 10_000, window_scaling: false, ..Default::default() };
        let (c, mut s) = established(&cfg);
        let mut out = Vec::new();
        s.on_segment(Time::from_millis(1), &data(&c, 2), &mut out);
        // Right edge stays at rcv_nxt + 10000 although 1000 B are held.
        assert_eq!(out[0].window, 10_000);
        out.clear();
        s.on_segment(Time::from_millis(2), &data(&c, 0), &mut out);
        // rcv_nxt moved 1000 B right with 1000 B still held: free = 9000,
        // and the old edge is also 9000 away.
        assert_eq!(out.last().unwrap().window, 9_000);
    }
    /// Drives `c`'s segments through `s` and back until both are quiet,
    /// at `step` per hop; returns the time reached.
    fn exchange(c: &mut Connection, s: &mut Connection, mut t: Time, mut segs: Vec<Segment>, step: Time) -> Time {
        let mut to_server = true;
        while !segs.is_empty() {
            t = t + step;
            let mut next = Vec::new();
            for g in &segs {
                if to_server {
                    s.on_segment(t, g, &mut next);
                } else {
                    c.on_segment(t, g, &mut next);
                }
            }
            segs = next;
            to_server = !to_server;
        }
        t
    }

    #[test]
    fn data_beyond_the_advertised_right_edge_is_dropped_and_acknowledged() {
        // RFC 9293 section 3.10.7.4: the receiver advertised 10 000 B, so a
        // segment starting at byte 10 000 or later is not acceptable.
        let cfg = TcpConfig { mss: 1000, rcv_buf: 10_000, window_scaling: false, ..Default::default() };
        let (c, mut s) = established(&cfg);
        let mut out = Vec::new();
        s.on_segment(Time::from_millis(1), &data(&c, 10), &mut out);
        assert_eq!(out.len(), 1, "answered at once");
        assert_eq!(out[0].ack, c.iss.wrapping_add(1), "nothing accepted");
        assert_eq!(out[0].opts.sack.len, 0, "not held as out-of-order data");
        assert_eq!(s.stats().beyond_window_received, 1);
        // The last segment inside the window is held.
        out.clear();
        s.on_segment(Time::from_millis(2), &data(&c, 9), &mut out);
        assert_eq!(out[0].opts.sack.len, 1);
        assert_eq!(s.ooo.held.bytes(), 1000);
    }

    #[test]
    fn a_sender_never_sends_new_data_past_snd_una_plus_the_window_after_a_timeout() {
        // Issue 9: after a timeout, SACKed bytes leave the flight size, and
        // the sender used to compare that flight size with min(cwnd, rwnd),
        // running 1.24 MB past SND.UNA into a 1 MB receive buffer. The
        // right edge is SND.UNA + SND.WND whatever is SACKed.
        let cfg = TcpConfig { mss: 1000, rcv_buf: 8_000, window_scaling: false, ..Default::default() };
        let (mut c, mut s) = established(&cfg);
        let ms = Time::from_millis;
        let mut sent = Vec::new();
        c.send(ms(0), 100_000, &mut sent);
        assert_eq!(sent.len(), 8, "the window admits 8 segments");
        // Segment 0 is lost; 1..8 arrive and are SACKed.
        let mut acks = Vec::new();
        for g in &sent[1..] {
            s.on_segment(ms(10), g, &mut acks);
        }
        // Only the first two dupACKs reach the sender; then a timeout.
        let mut more = Vec::new();
        for a in &acks[..2] {
            c.on_segment(ms(20), a, &mut more);
        }
        let t = c.next_timer().unwrap();
        let mut rtx = Vec::new();
        c.on_timer(t, &mut rtx);
        // The last ACK (all 7 segments SACKed) arrives after the timeout.
        c.on_segment(t + ms(1), acks.last().unwrap(), &mut rtx);
        let edge = c.snd_una + c.rwnd;
        for g in rtx.iter().chain(&more) {
            let off = g.seq.wrapping_sub(c.iss) as u64;
            assert!(off + g.len as u64 <= edge.max(off + 1), "segment at {off} past the edge {edge}");
        }
        assert!(c.snd_max <= 1 + 8_000, "snd_max {} beyond the receive buffer", c.snd_max);
    }

    #[test]
    fn a_zero_window_is_probed_by_the_persist_timer_until_it_opens() {
        // RFC 9293 section 3.8.6.1, Linux tcp_probe_timer: with nothing
        // outstanding and a closed window, the sender probes with
        // SEG.SEQ = SND.UNA - 1 at RTO, 2 RTO, ...; the receiver answers each
        // probe with an ACK carrying its window, and the data flows again.
        let cfg = TcpConfig { mss: 1000, window_scaling: false, ..Default::default() };
        let (mut c, mut s) = established(&cfg);
        let ms = Time::from_millis;
        // The peer closes its window (a real receiver whose application
        // stopped reading; our simulated receivers never do).
        let zero = Segment {
            seq: s.iss.wrapping_add(1),
            ack: c.iss.wrapping_add(1),
            flags: TcpFlags::ACK,
            window: 0,
            ..Default::default()
        };
        let mut out = Vec::new();
        c.on_segment(ms(1), &zero, &mut out);
        c.send(ms(2), 5_000, &mut out);
        assert!(out.is_empty(), "nothing goes into a closed window");
        let first = c.next_timer().expect("persist timer armed");
        assert_eq!(first, ms(2) + c.rtt.rto());
        c.on_timer(first, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].seq.wrapping_sub(c.iss), out[0].len), (0, 0), "probe below SND.UNA, no data");
        assert_eq!(c.next_timer(), Some(first + Time(c.rtt.rto().0 * 2)), "backed off");
        // The receiver answers the probe with its (open) window.
        let mut answer = Vec::new();
        s.on_segment(first + ms(1), &out[0], &mut answer);
        assert_eq!(answer.len(), 1, "a probe is always answered");
        assert!(answer[0].window > 0);
        let mut data_out = Vec::new();
        c.on_segment(first + ms(2), &answer[0], &mut data_out);
        assert_eq!(data_out.len(), 5, "the window opened: all 5000 B go");
        assert_eq!(c.stats().window_probes, 1);
        exchange(&mut c, &mut s, first + ms(2), data_out, ms(1));
        assert_eq!(s.stats().bytes_delivered, 5_000);
    }

    #[test]
    fn the_segment_at_snd_una_is_retransmitted_into_a_closed_window() {
        // Linux tcp_retransmit_skb: the retransmission at SND.UNA goes out
        // whatever the window and serves as a zero-window probe. Without it
        // the timeout of issue 9 sent nothing for 600 s.
        let cfg = TcpConfig { mss: 1000, window_scaling: false, ..Default::default() };
        let (mut c, s) = established(&cfg);
        let ms = Time::from_millis;
        let mut sent = Vec::new();
        c.send(ms(0), 3_000, &mut sent);
        assert_eq!(sent.len(), 3);
        // An ACK for nothing new closes the window.
        let zero = Segment {
            seq: s.iss.wrapping_add(1),
            ack: c.iss.wrapping_add(1),
            flags: TcpFlags::ACK,
            window: 0,
            ..Default::default()
        };
        let mut out = Vec::new();
        c.on_segment(ms(5), &zero, &mut out);
        let t = c.next_timer().unwrap();
        c.on_timer(t, &mut out);
        assert_eq!(out.len(), 1, "one retransmission at SND.UNA");
        assert_eq!(out[0].seq, c.iss.wrapping_add(1));
        assert_eq!(out[0].len, 1000);
    }

    #[test]
    fn sack_dupacks_count_whatever_the_window_says() {
        // RFC 6675 section 2: an ACK carrying new SACK information is a
        // duplicate whatever its window. A window-rewriting gateway changes
        // the window of nearly every ACK; three such ACKs must still start
        // fast recovery.
        let cfg = TcpConfig { mss: 1000, rcv_buf: 1 << 20, ..Default::default() };
        let (mut c, mut s) = established(&cfg);
        let ms = Time::from_millis;
        let mut sent = Vec::new();
        c.send(ms(0), 10_000, &mut sent);
        let mut acks = Vec::new();
        for g in &sent[1..5] {
            s.on_segment(ms(10), g, &mut acks);
        }
        assert_eq!(acks.len(), 4);
        let mut out = Vec::new();
        for (k, a) in acks.iter_mut().enumerate() {
            a.window -= 100 * (k as u16 + 1); // as a gateway lowering it
            c.on_segment(ms(20), a, &mut out);
        }
        assert_eq!(c.stats().fast_retransmits, 1);
        assert!(out.iter().any(|g| g.retransmission && g.seq == c.iss.wrapping_add(1)));
    }

    #[test]
    fn an_ack_without_new_sack_information_is_not_a_duplicate() {
        // RFC 6675 section 2 condition (e): repeating what the scoreboard
        // already holds says nothing about a new arrival.
        let cfg = TcpConfig { mss: 1000, rcv_buf: 1 << 20, ..Default::default() };
        let (mut c, mut s) = established(&cfg);
        let ms = Time::from_millis;
        let mut sent = Vec::new();
        c.send(ms(0), 10_000, &mut sent);
        let mut acks = Vec::new();
        s.on_segment(ms(10), &sent[1], &mut acks);
        let mut out = Vec::new();
        for _ in 0..5 {
            c.on_segment(ms(20), &acks[0], &mut out);
        }
        assert_eq!(c.stats().dupacks_received, 1);
        assert_eq!(c.stats().fast_retransmits, 0);
    }

    #[test]
    fn without_sack_a_changed_window_hides_a_duplicate_ack() {
        // RFC 5681 section 2 (the strict definition, kept without SACK): an
        // ACK whose window differs from the previous one is not a duplicate.
        // Behind a window-rewriting gateway this blinds fast retransmit
        // (docs/tcp.md, "Duplicate ACKs behind a gateway").
        let cfg = TcpConfig { mss: 1000, sack: false, rcv_buf: 1 << 20, ..Default::default() };
        let (mut c, mut s) = established(&cfg);
        let ms = Time::from_millis;
        let mut sent = Vec::new();
        c.send(ms(0), 10_000, &mut sent);
        let mut acks = Vec::new();
        for g in &sent[1..5] {
            s.on_segment(ms(10), g, &mut acks);
        }
        let mut out = Vec::new();
        for (k, a) in acks.iter().enumerate() {
            let mut a = *a;
            a.window -= 100 * (k as u16 + 1);
            c.on_segment(ms(20), &a, &mut out);
        }
        assert_eq!(c.stats().fast_retransmits, 0);
        // The same ACKs with an unchanged window trigger it.
        let (mut c, mut s) = established(&cfg);
        let mut sent = Vec::new();
        c.send(ms(0), 10_000, &mut sent);
        let mut acks = Vec::new();
        for g in &sent[1..5] {
            s.on_segment(ms(10), g, &mut acks);
        }
        for a in &acks {
            c.on_segment(ms(20), a, &mut out);
        }
        assert_eq!(c.stats().fast_retransmits, 1);
    }
}
