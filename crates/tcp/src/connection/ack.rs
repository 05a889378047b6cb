//! Sender: processing an arriving ACK (RFC 9293 section 3.10.7.4, RFC
//! 5681, RFC 6675 section 2), and the congestion control's per-ACK hooks.

use super::*;

impl Connection {
    pub(super) fn process_ack(&mut self, now: Time, seq_off: u64, seg: &Segment, out: &mut Vec<Segment>) {
        let ack = unwrap_seq(seg.ack, self.iss, self.snd_una);
        if ack > self.snd_max || ack < self.snd_una {
            return;
        }
        let sacked_before = self.board.sacked.bytes();
        let safe_ack_rule = self.cfg.prr_bound == PrrBound::SafeAck;
        let lost_edge_before = if safe_ack_rule && self.sack_ok { self.lost_edge() } else { 0 };
        if self.rate.is_some() {
            // Delivery-rate estimation: what the SACK blocks newly cover,
            // and the flight before the ACK.
            self.rate_prepare(seg);
        }
        if self.sack_ok {
            for &(l, r) in seg.opts.sack.as_slice() {
                let l = unwrap_seq(l, self.iss, self.snd_una).max(ack);
                let r = unwrap_seq(r, self.iss, self.snd_una).min(self.snd_max);
                self.board.sacked.insert(l, r);
            }
        }
        if safe_ack_rule {
            self.prr_safe_ack = ack > self.snd_una && !(self.sack_ok && self.newly_lost(lost_edge_before, ack));
        }
        // Window update, RFC 9293 section 3.10.7.4 (SND.WL1 / SND.WL2).
        let wnd = (seg.window as u64) << self.snd_shift;
        let window_changed = wnd != self.rwnd;
        let rfc9293 = seq_off > self.snd_wl1 || (seq_off == self.snd_wl1 && ack >= self.snd_wl2);
        // Linux tcp_may_update_window: a new ACK, newer data, or else only a
        // larger or zero window (a duplicate ACK cannot shrink it). The
        // setting is read only where the two rules part.
        let linux =
            ack > self.snd_una || seq_off > self.snd_wl1 || (seq_off == self.snd_wl1 && (wnd > self.rwnd || wnd == 0));
        let update = if rfc9293 != linux && self.cfg.window_update_grows_only { linux } else { rfc9293 };
        if update {
            self.rwnd = wnd;
            self.snd_wl1 = seq_off;
            self.snd_wl2 = ack;
        }
        let in_recovery = self.in_recovery;
        let una_before = self.snd_una;
        let mut rtt = None;
        let mut duplicate = false;
        if ack > self.snd_una {
            rtt = self.on_new_ack(now, ack, sacked_before, seg, out);
        } else if seg.len == 0 && !seg.flags.fin() && self.snd_max > self.snd_una {
            duplicate = if self.sack_ok {
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
                !window_changed || !self.cfg.dupack_same_window
            };
            if duplicate {
                self.on_dupack(now, sacked_before, out);
            }
        }
        if self.cfg.resend_lost_retransmit {
            self.resend_lost_retransmits(now, out);
        }
        let acked = self.snd_una - una_before;
        let delivered = self.delivered_data(acked, sacked_before);
        // The SYN-ACK's ECE agrees to ECN; it signals no congestion.
        let ece = self.ecn_ok && seg.flags.ece() && !seg.flags.syn();
        // `ece_on_new_ack_only`: ns-3 3.44 `TcpSocketBase::ReceivedAck`
        // reads ECE only `if (ackNumber > oldHeadSequence && ...)`, so a
        // duplicate ACK's ECE starts no reduction and its DupAck count goes
        // on to a fast recovery; RFC 3168 section 6.1.2 and Linux `tcp_ack`
        // (`FLAG_ECE`) take it on any ACK.
        if ece && (acked > 0 || !self.cfg.ece_on_new_ack_only) {
            self.ecn_on_echo(now, delivered);
        }
        if self.rate.is_some() {
            self.rate_on_ack(now);
        }
        let (snd_una, snd_max) = (self.snd_una, self.snd_max);
        self.cc.on_ack_event_with(now, &mut self.win, || AckEvent {
            acked,
            delivered,
            rtt,
            timestamps: seg.opts.timestamps,
            duplicate,
            in_recovery,
            inband: seg.inband,
            ece,
            snd_una,
            snd_max,
        });
    }

    /// `cfg.resend_lost_retransmit`: in a SACK recovery, a retransmission
    /// is lost once data sent after it is SACKed (a new segment, or a later
    /// retransmission of another hole), and goes again now. RFC 8985
    /// section 6.2 (RACK): a segment is lost when one sent after it is
    /// delivered and RACK.rtt + reo_wnd has passed since it was sent; Linux
    /// `tcp_rack_reo_wnd` gives reo_wnd = 0 in recovery while no reordering
    /// has been seen, and RACK.rtt, the RTT of a segment sent later, has
    /// then always passed (`tcp_rack_detect_loss`). Linux marks them lost,
    /// which takes them out of the flight, and `tcp_xmit_retransmit_queue`
    /// resends them first, rearming the retransmission timer for the head;
    /// here they go at once, the flight they count in unchanged (RFC 6675's
    /// pipe counts a retransmitted byte once). Without the rule (RFC 6675)
    /// a lost retransmission waits for the timer.
    fn resend_lost_retransmits(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !(self.in_recovery && self.sack_ok) || self.rxt_sent.is_empty() {
            return;
        }
        let una = self.snd_una;
        self.rxt_sent.retain(|&(_, r, _)| r > una);
        let high = self.board.high_sacked();
        let mut later_delivered = false;
        let mut lost = Vec::new();
        for &(l, r, sent_below) in self.rxt_sent.iter().rev() {
            let delivered = self.board.sacked.bytes_in(l.max(una), r) > 0;
            if !delivered && (later_delivered || high > sent_below) {
                lost.push(l.max(una));
            }
            later_delivered |= delivered;
        }
        lost.sort_unstable();
        for l in lost {
            let (gap, gap_end) = self.board.sacked.next_gap(l);
            let len = self.mss.min(gap_end.min(self.snd_max) - gap).min(self.app_end.saturating_sub(gap));
            let fin = self.fin_at(gap, len);
            if len == 0 && !fin {
                continue;
            }
            if gap == una {
                self.rto_at = Some(now + self.rtt.rto());
            }
            self.emit(now, gap, len, fin, out);
            self.high_rxt = self.high_rxt.max(gap + len);
        }
    }

    /// RFC 6675 IsLost's edge: the bytes below it that are not SACKed are
    /// deemed lost.
    fn lost_edge(&self) -> u64 {
        self.board.lost_below(self.mss, self.cfg.dupack_threshold)
    }

    /// Whether this ACK's SACK blocks mark bytes lost that were not before
    /// (Linux `newly_lost`): un-SACKed bytes above both the old edge and the
    /// ACK, below the new edge.
    fn newly_lost(&self, edge_before: u64, ack: u64) -> bool {
        let (from, edge) = (edge_before.max(ack), self.lost_edge());
        edge > from && edge - from > self.board.sacked.bytes_in(from, edge)
    }

    /// Counts a partial ACK of the running recovery and says whether it
    /// leaves the retransmission timer running: with the `impatient` rule
    /// only the first one restarts it (RFC 6582 section 3.2 step 5).
    fn partial_ack_keeps_timer(&mut self, impatient: bool) -> bool {
        self.partial_acks += 1;
        impatient && self.partial_acks > 1 && self.rto_at.is_some()
    }

    /// RFC 6937 DeliveredData: the change in SND.UNA (`acked`) plus the
    /// change in SACKed bytes since `sacked_before`. SACKed bytes below the
    /// new SND.UNA were trimmed from the board, so they count once, in
    /// `acked`.
    pub(super) fn delivered_data(&self, acked: u64, sacked_before: u64) -> u64 {
        (acked + self.board.sacked.bytes()).saturating_sub(sacked_before)
    }

    /// A cumulative ACK for new data; returns the RTT sample it gave.
    pub(super) fn on_new_ack(
        &mut self,
        now: Time,
        ack: u64,
        sacked_before: u64,
        seg: &Segment,
        out: &mut Vec<Segment>,
    ) -> Option<Time> {
        let old_una = self.snd_una;
        let acked = ack - old_una;
        let data_acked = ack.min(self.app_end).saturating_sub(old_una.max(1));
        self.stats.bytes_acked += data_acked;
        self.snd_una = ack;
        self.limited_sent = 0;
        // A new ACK ends a run of duplicates, a partial ACK in recovery too:
        // RFC 5681 section 2 defines a duplicate by "the greatest
        // acknowledgment received" (SND.UNA), which this ACK moves; ns-3 3.44
        // `TcpSocketBase::ProcessAck` sets m_dupAckCount = 0 on every new ACK.
        // Only the counts (`triple_dupacks`, `dupacks_past_threshold`) read
        // it in recovery.
        self.dupacks = 0;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.high_rxt = self.high_rxt.max(ack);
        self.board.sacked.trim_below(ack);
        let delivered = self.delivered_data(acked, sacked_before);

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

        // RFC 6582 section 3.2 step 5: "For the first partial ACK that
        // arrives during fast recovery, also reset the retransmit timer";
        // later partial ACKs leave it running (the "Impatient" variant, as
        // ns-3 `NewAck(ack, m_isFirstPartialAck)`), so a window with many
        // losses ends in a timeout and slow start instead of one
        // retransmission per RTT. `impatient = false` restarts it on every
        // partial ACK (RFC 6298 (5.3); Linux `tcp_rearm_rto`).
        let mut keep_timer = false;
        if self.in_recovery {
            if ack >= self.recover {
                self.exit_recovery(now);
            } else if self.sack_ok {
                // With SACK, RFC 6298 (5.3) restarts the timer on every new
                // ACK (Linux too); `sack_impatient` keeps ns-3's rule, which
                // applies RFC 6582's Impatient variant to every recovery.
                keep_timer = self.partial_ack_keeps_timer(self.cfg.sack_impatient);
                self.prr_update(delivered);
            } else if self.cc.partial_ack_ends_recovery() {
                // Reno (RFC 5681 section 3.2 step 6): any new ACK ends recovery.
                self.exit_recovery(now);
            } else {
                // RFC 6582 section 3.2 step 5, partial ACK: retransmit the
                // first unacknowledged segment, deflate cwnd by the amount
                // acknowledged and add back one SMSS if that was >= SMSS.
                keep_timer = self.partial_ack_keeps_timer(self.cfg.impatient);
                self.retransmit_head(now, out);
                if !self.cc.owns_cwnd() {
                    let mut cwnd = self.win.cwnd.saturating_sub(acked);
                    if acked >= self.mss {
                        cwnd += self.mss;
                    }
                    self.win.cwnd = cwnd.max(self.mss);
                }
            }
        } else if self.ecn_ok && self.in_cwr && !self.cwr_on_ack(delivered) {
            // Reducing after an ECE: no growth until the window is acknowledged.
        } else {
            // cwnd grows by the bytes this ACK newly reports delivered (RFC
            // 6937 section 3 DeliveredData: the advance of SND.UNA minus what
            // was SACKed before, plus what is newly SACKed), not by the
            // advance of SND.UNA: bytes SACKed earlier were delivered then.
            // After a timeout one cumulative ACK can cover hundreds of
            // segments the receiver held; counting them would grow cwnd by
            // all of them at once (up to ssthresh) and release that many
            // segments back to back, where RFC 5681 section 3.1 grows cwnd
            // by at most one SMSS per ACK. Linux (`tcp_cong_avoid(sk, ack,
            // acked_sacked)`) and ns-3 3.44 (`ProcessAck`: `bytesAcked =
            // currentDelivered`) count delivered data too. Without SACK
            // DeliveredData is the advance of SND.UNA.
            let cc_acked = delivered.saturating_sub(acked - data_acked);
            if old_una > 0 && data_acked > 0 {
                let info = Ack {
                    acked: cc_acked,
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
        if !keep_timer {
            self.rto_at = (self.snd_una < self.snd_max).then(|| now + self.rtt.rto());
        }

        if self.fin_queued && !self.fin_acked && self.snd_una > self.app_end {
            self.fin_acked = true;
            self.state = match self.state {
                State::FinWait1 => State::FinWait2,
                State::Closing => State::TimeWait,
                State::LastAck => State::Closed,
                s => s,
            };
        }
        sample
    }
}
