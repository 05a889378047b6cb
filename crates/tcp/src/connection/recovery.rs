//! Loss recovery: duplicate ACKs, fast retransmit and fast recovery
//! (RFC 5681, RFC 6582 without SACK, RFC 6675 with SACK, PRR per RFC 6937).

use super::*;

impl Connection {
    pub(super) fn on_dupack(&mut self, now: Time, sacked_before: u64, out: &mut Vec<Segment>) {
        self.stats.dupacks_received += 1;
        self.dupacks += 1;
        if self.dupacks == self.cfg.dupack_threshold {
            // Counted whether or not fast retransmit follows (seed 001's
            // triple-duplicate-ACK events, which RFC 793 TCP also receives).
            self.stats.triple_dupacks += 1;
        }
        if self.dupacks >= self.cfg.dupack_threshold {
            self.stats.dupacks_past_threshold += 1;
        }
        self.cc.on_dupack(now, &mut self.win, self.dupacks);
        if !self.cc.fast_retransmit() {
            return;
        }
        if self.in_recovery {
            if self.sack_ok {
                let delivered = self.delivered_data(0, sacked_before);
                self.prr_update(delivered);
            } else if !self.cc.owns_cwnd() {
                // RFC 6582 section 3.2 step 4 (RFC 5681 step 4): inflate.
                self.win.cwnd += self.mss;
            }
            return;
        }
        if self.repairs_under_cwr() {
            // ns-3 3.44 `TcpSocketBase::DupAck`: in `CA_CWR` a dupACK is
            // counted and starts nothing (recovery only from `CA_DISORDER`).
            return;
        }
        let dt = self.cfg.dupack_threshold;
        // RFC 6675 section 5: DupThresh dupACKs, or IsLost(HighACK + 1).
        let lost = self.dupacks >= dt || (self.sack_ok && self.board.is_lost(self.snd_una, self.mss, dt));
        // RFC 6582 section 3.2 step 2 / RFC 6675 section 5.1: no new recovery
        // until the ACK passes the previous recovery point.
        if lost && self.snd_una >= self.recover {
            let delivered = self.delivered_data(0, sacked_before);
            self.enter_recovery(now, delivered, out);
        }
    }

    pub(super) fn enter_recovery(&mut self, now: Time, delivered: u64, out: &mut Vec<Segment>) {
        self.stats.fast_retransmits += 1;
        self.in_recovery = true;
        self.partial_acks = 0;
        self.recover = self.snd_max;
        // A loss and a CE mark in one window are one congestion signal
        // (RFC 3168 section 6.1.2): "the TCP sender's congestion window
        // should be reduced only once in response to a series of dropped
        // and/or CE packets from a single window of data". A loss found
        // while reducing after an ECE continues that reduction (Linux
        // `tcp_enter_recovery`: no new ssthresh while `tcp_in_cwnd_reduction`).
        let continues_cwr = self.ecn_ok && self.in_cwr;
        self.in_cwr = false;
        self.ecn_recover = self.snd_max;
        let flight = self.snd_max - self.snd_una;
        if !continues_cwr {
            // RFC 5681 section 3.2 step 2: "When [RFC3042] is in use,
            // additional data sent in limited transmit MUST NOT be included
            // in this calculation" (equation 4's FlightSize).
            let flight_size = self.loss_flight_size(flight.saturating_sub(self.limited_sent as u64), true);
            self.win.ssthresh = self.cc.ssthresh_after_loss(now, &self.win, flight_size);
        }
        self.limited_sent = 0;
        self.high_rxt = self.snd_una;
        self.rxt_sent.clear();
        if self.cfg.rto_restart_on_fast_retransmit {
            // ns-2.35 tcp-newreno.cc `dupack_action` (reno_action):
            // `reset_rtx_timer(1,0)` before the retransmission; Linux
            // `tcp_xmit_retransmit_queue` rearms the timer when it resends
            // the head. RFC 6298 (5.1) only starts a timer not running.
            self.rto_at = Some(now + self.rtt.rto());
        }
        if self.sack_ok {
            if !continues_cwr {
                // RFC 6937: RecoverFS = snd.nxt - snd.una.
                self.recover_fs = flight;
                self.prr_delivered = 0;
                self.prr_out = 0;
            }
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
                _ if self.cc.owns_cwnd() => {}
                // RFC 6675 section 5 step (4.2): cwnd = ssthresh.
                Recovery::Classic => self.win.cwnd = self.win.ssthresh,
                Recovery::Prr => self.prr_update(delivered),
            }
        } else {
            self.retransmit_head(now, out);
            self.rate_lost(false);
            if !self.cc.owns_cwnd() {
                // RFC 6582 section 3.2 step 2: cwnd = ssthresh + 3 SMSS.
                let mut base = self.win.ssthresh;
                if self.cfg.loss_ssthresh == LossSsthresh::Ns2 {
                    // ns-2.35 tcp.cc `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)`
                    // with `precisionReduce_` (its default): halfwin =
                    // windowd() / 2 unrounded, ssthresh_ = (int) halfwin,
                    // cwnd_ = halfwin; tcp-newreno.cc keeps the 3 SMSS in
                    // `dupwnd_`, so ns-2's cwnd_ + dupwnd_ is this cwnd.
                    // (Continuing an ECN reduction, ssthresh stands.)
                    self.ns2_halfwin = if continues_cwr { self.win.ssthresh } else { self.win.cwnd.min(self.rwnd) / 2 };
                    base = self.ns2_halfwin;
                }
                self.win.cwnd = base + self.cfg.dupack_threshold as u64 * self.mss;
            }
        }
        self.cc.on_recovery_enter(now, &mut self.win);
    }

    pub(super) fn exit_recovery(&mut self, now: Time) {
        self.in_recovery = false;
        self.dupacks = 0;
        // RFC 6937 section 3 / RFC 6582 section 3.2 step 6: cwnd = ssthresh
        // at the end of recovery.
        if !self.cc.owns_cwnd() {
            self.win.cwnd = if self.cfg.loss_ssthresh == LossSsthresh::Ns2 && !self.sack_ok {
                // ns-2.35 tcp-newreno.cc `recv` at the ACK that ends the
                // recovery: `dupwnd_ = 0`, cwnd_ left as it is (the unrounded
                // half window, `exit_recovery_fix_` 0), not ssthresh_.
                self.ns2_uninflated()
            } else {
                self.win.ssthresh
            }
            .max(self.mss);
        }
        self.cc.on_recovery_exit(now, &mut self.win);
    }

    /// PRR (RFC 6937 section 3, PRR-SSRB), run on every ACK in recovery.
    pub(super) fn prr_update(&mut self, delivered: u64) {
        if self.cfg.recovery != Recovery::Prr || self.cc.owns_cwnd() {
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
            // prr_out, DeliveredData) + MSS; sndcnt = MIN(ssthresh - pipe,
            // limit). With `PrrBound::SafeAck` the MSS only on a safe ACK,
            // else the conservative bound (RFC 9937; Linux `tcp_cwnd_reduction`).
            let bonus = match self.cfg.prr_bound {
                PrrBound::SafeAck if !self.prr_safe_ack => 0,
                _ => self.mss as i128,
            };
            let limit = (self.prr_delivered as i128 - self.prr_out as i128).max(delivered as i128) + bonus;
            ((ssthresh - pipe) as i128).min(limit)
        };
        self.win.cwnd = pipe + sndcnt.max(0) as u64;
    }

    /// The FlightSize that RFC 5681 (4) halves when a loss (a fast
    /// retransmit, `entering`, or a timeout) sets ssthresh, as
    /// `cfg.loss_ssthresh` reads it; `outstanding` is RFC 5681's own
    /// (SND.MAX - SND.UNA, less what limited transmit sent at a fast
    /// retransmit).
    pub(super) fn loss_flight_size(&self, outstanding: u64, entering: bool) -> u64 {
        match self.cfg.loss_ssthresh {
            // ns-3 3.44 `EnterRecovery` and `ReTxTimeout`: `GetSsThresh(m_tcb,
            // BytesInFlight())`, RFC 6675's pipe (SACKed segments and those
            // IsLost() marks left out).
            LossSsthresh::Ns3 if self.sack_ok => self.pipe(),
            // ... and without SACK the same count on a scoreboard guessed from
            // duplicate ACKs: `TcpTxBuffer::BytesInFlight` = sent - (sacked +
            // lost) + retransmitted, where every dupACK marks one more segment
            // "Reno-SACKed" (`AddRenoSack`: in CA_DISORDER only with limited
            // transmit, at `EnterRecovery`, and in CA_RECOVERY) and the head,
            // marked lost, is in flight again once resent.
            LossSsthresh::Ns3 => (self.snd_max - self.snd_una).saturating_sub(self.reno_sacked(entering)),
            // Linux `tcp_reno_ssthresh`: max(cwnd >> 1, 2), cwnd a count of
            // whole segments (`tcp_snd_cwnd`), so an odd window's half is
            // rounded down.
            LossSsthresh::Linux => self.halved_in_segments(self.win.cwnd),
            LossSsthresh::Ns2 => self.ns2_window(entering),
            LossSsthresh::Rfc5681 => outstanding,
        }
    }

    /// What ns-2.35's `slowdown(CLOSE_SSTHRESH_HALF)` halves, as a flight
    /// whose half is ns-2's: `(int)(window() / 2)` whole segments, where
    /// `window()` is min(cwnd_, wnd_) truncated to whole segments. Inside a
    /// NewReno recovery ns-2's cwnd_ is the uninflated part of RFC 6582's
    /// cwnd (`NewRenoTcpAgent` inflates `dupwnd_`, at least 1 in recovery,
    /// and deflates cwnd_ only below it): min(ssthresh, cwnd - SMSS).
    fn ns2_window(&self, entering: bool) -> u64 {
        let cwnd =
            if self.in_recovery && !entering && !self.cc.owns_cwnd() { self.ns2_uninflated() } else { self.win.cwnd };
        self.halved_in_segments(cwnd.min(self.rwnd))
    }

    /// The flight whose half (RFC 5681 (4)) is half of `window`'s whole
    /// segments, rounded down: what ns-2's `(int)(window() / 2)` and Linux's
    /// `cwnd >> 1` halve.
    fn halved_in_segments(&self, window: u64) -> u64 {
        window / self.mss / 2 * 2 * self.mss
    }

    /// ns-2.35's cwnd_ inside a NewReno recovery without SACK: the half
    /// window its fast retransmit set, less what partial ACKs deflated past
    /// `dupwnd_` (tcp-newreno.cc `partialnewack` with
    /// `partial_window_deflation_` 1 keeps `dupwnd_` >= 1), i.e.
    /// min(halfwin, RFC 6582's cwnd - SMSS).
    fn ns2_uninflated(&self) -> u64 {
        self.ns2_halfwin.min(self.win.cwnd.saturating_sub(self.mss))
    }

    /// The bytes ns-3 3.44 without SACK counts as delivered from duplicate
    /// ACKs when a loss sets ssthresh (`TcpTxBuffer::m_sackedOut` with
    /// `m_renoSack`). Entering a recovery: one segment per dupACK of the run
    /// with limited transmit (`TcpSocketBase::DupAck` in CA_DISORDER), else
    /// only the one `EnterRecovery` adds; `EnterRecovery`'s extra segment
    /// ("consider the head as in flight") cancels the head's lost mark. In a
    /// recovery: one more per dupACK, and a partial ACK discards the marks of
    /// the segments it acknowledges past the head (`DiscardUpTo`), which is
    /// what RFC 6582's inflation and deflation leave in cwnd - ssthresh
    /// (section 3.2 steps 2, 4 and 5: + 3 SMSS, + SMSS per dupACK, - the
    /// data acknowledged + SMSS per partial ACK). Outside both, the dupACKs
    /// of a run that has not reached the threshold, with limited transmit.
    fn reno_sacked(&self, entering: bool) -> u64 {
        let run = if self.cfg.limited_transmit { self.dupacks as u64 } else { 0 };
        if entering {
            run.max(1) * self.mss
        } else if self.in_recovery && !self.cc.owns_cwnd() {
            self.win.cwnd.saturating_sub(self.win.ssthresh)
        } else {
            run * self.mss
        }
    }

    /// In an ECN reduction that repairs losses without a fast recovery
    /// (`RecoveryFromCwr::Ns3`): sending goes by NextSeg and the pipe, as
    /// ns-3's `SendPendingData` does in every state. Not after a timeout's
    /// go-back-N (SND.NXT below SND.MAX), which stays with [`Self::send_one`].
    #[inline]
    pub(super) fn repairs_under_cwr(&self) -> bool {
        self.in_cwr
            && self.sack_ok
            && self.cfg.recovery_from_cwr == RecoveryFromCwr::Ns3
            && self.snd_nxt >= self.snd_max
    }

    pub(super) fn pipe(&self) -> u64 {
        self.board.pipe(self.snd_una, self.snd_max, self.high_rxt, self.mss, self.cfg.dupack_threshold)
    }

    pub(super) fn in_flight(&self) -> u64 {
        if self.in_recovery && self.sack_ok {
            self.pipe()
        } else {
            self.snd_nxt - self.snd_una
        }
    }

    /// In SACK recovery: RFC 6675 section 5 step (C), NextSeg while
    /// `cwnd - pipe` allows a segment (cwnd set by PRR or = ssthresh).
    pub(super) fn send_one_sack_recovery<const PACED: bool>(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        let pipe = self.pipe();
        if pipe >= self.win.cwnd {
            return false;
        }
        let avail = self.win.cwnd - pipe;
        let Some((off, len, fin, retransmit)) = self.next_seg() else { return false };
        if len > avail || (retransmit && !self.window_admits(off, len)) || (PACED && len > 0 && self.paced_out(now)) {
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
    pub(super) fn next_seg(&self) -> Option<(u64, u64, bool, bool)> {
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
            if self.snd_nxt + len <= self.wnd_edge() {
                return Some((self.snd_nxt, len, self.fin_at(self.snd_nxt, len), false));
            }
        } else if self.fin_queued && self.snd_nxt == self.app_end {
            return Some((self.snd_nxt, 0, true, false));
        }
        // Rule 3: a not-yet-lost hole below the highest SACKed byte; in a
        // recovery only (ns-3 `SendPendingData`: `enableRule3` in
        // `CA_RECOVERY`), not when repairing under CWR.
        let high = self.board.high_sacked();
        if gap < high && self.in_recovery {
            return Some((gap, gap_len(high), false, true));
        }
        None
    }

    /// Resends the segment at `snd_una` (fast retransmit, NewReno partial ACK).
    pub(super) fn retransmit_head(&mut self, now: Time, out: &mut Vec<Segment>) {
        let off = self.snd_una;
        let len = self.mss.min(self.app_end.saturating_sub(off)).min(self.snd_max - off);
        let fin = self.fin_at(off, len) && self.snd_max > self.app_end;
        if len > 0 || fin {
            self.emit(now, off, len, fin, out);
            self.high_rxt = self.high_rxt.max(off + len);
        }
    }
}
