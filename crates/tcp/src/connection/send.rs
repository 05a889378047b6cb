//! Sending: what the windows admit (RFC 5681, RFC 9293 section 3.8.6), the
//! persist timer, and the header every segment carries.

use super::*;

impl Connection {
    /// Whether a segment `[off, off+len)` carries our FIN.
    pub(super) fn fin_at(&self, off: u64, len: u64) -> bool {
        self.fin_queued && off + len == self.app_end
    }

    pub(super) fn transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.synchronized() {
            return;
        }
        if self.rate.is_some() {
            self.transmit_paced(now, out);
            return;
        }
        self.send_while_allowed::<false>(now, out);
        self.check_persist(now);
    }

    /// [`Self::transmit`] for a control that paces and samples delivery
    /// rates: what pacing holds back arms the pacing timer, and a sender
    /// left with nothing to send is marked application-limited.
    #[inline(never)]
    fn transmit_paced(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.pace_wait = None;
        self.send_while_allowed::<true>(now, out);
        self.check_persist(now);
        self.rate_check_app_limited();
    }

    /// Sends segments while cwnd, the peer's window and (if `PACED`)
    /// pacing allow.
    #[inline(always)]
    fn send_while_allowed<const PACED: bool>(&mut self, now: Time, out: &mut Vec<Segment>) {
        loop {
            let sent = if self.in_recovery && self.sack_ok || self.repairs_under_cwr() {
                self.send_one_sack_recovery::<PACED>(now, out)
            } else {
                self.send_one::<PACED>(now, out)
            };
            if !sent {
                break;
            }
        }
    }

    /// The right edge of the peer's window, SND.UNA + SND.WND (RFC 9293
    /// section 3.8.6).
    pub(super) fn wnd_edge(&self) -> u64 {
        self.snd_una + self.rwnd
    }

    /// Whether the peer's window admits `[off, off + len)`: new data must
    /// end inside it (RFC 9293 section 3.8.6, Linux `tcp_snd_wnd_test`); a
    /// retransmission must start inside it, and the one at SND.UNA goes out
    /// whatever the window, serving as a window probe (Linux
    /// `tcp_retransmit_skb`). The right edge is SND.UNA + SND.WND; it is
    /// never compared with what is in flight, which after a timeout leaves
    /// out SACKed bytes and would let the sender run past the receiver's
    /// buffer.
    pub(super) fn window_admits(&self, off: u64, len: u64) -> bool {
        let edge = self.wnd_edge();
        if off < self.snd_max {
            off == self.snd_una || off < edge
        } else {
            off + len <= edge
        }
    }

    /// Outside SACK recovery: the next byte at `snd_nxt` (new data, or
    /// go-back-N after a timeout), limited by cwnd on what is in flight and
    /// by the peer's window on the right edge.
    pub(super) fn send_one<const PACED: bool>(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
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
            if off < self.snd_max {
                // A resend cut from SND.NXT may run past SND.MAX into data
                // never sent: those new bytes must fit the window as any
                // new data (RFC 9293 section 3.8.6: "packages the data to
                // be transmitted into segments that fit the current
                // window"); the old bytes may go whatever the window now
                // is. Without this a go-back-N's last segment carried new
                // bytes past SND.UNA + SND.WND (docs/validation.md, branch
                // ngwa10). `resend_ends_at_snd_max`: no new bytes at all,
                // as ns-3 3.44 resends its sent list
                // (`TcpTxBuffer::GetTransmittedSegment` never crosses
                // m_highTxMark) and Linux its retransmission queue.
                let to_snd_max = self.cfg.resend_ends_at_snd_max || self.cfg.resend_merges_sent;
                let end = if to_snd_max { self.snd_max } else { self.snd_max.max(self.wnd_edge()) };
                len = len.min(end - off);
                if self.cfg.resend_merges_sent {
                    len = len.min(self.sent_list_resend_len(off));
                }
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
        let base_cwnd = self.cc.window(&self.win);
        let mut cwnd = base_cwnd;
        if self.cfg.limited_transmit
            && !self.in_recovery
            && self.dupacks < self.cfg.dupack_threshold
            && (off >= self.snd_max || self.cfg.limited_transmit_resends)
        {
            // RFC 3042 section 2: up to two extra segments on the first two
            // dupACKs, of "previously unsent data" only: after a timeout the
            // next segment of go-back-N (below SND.MAX) is a resend, and
            // limited transmit does not release it (ns-3 counts no dupACK in
            // CA_LOSS; docs/validation.md, val7's rule 2). ns-2.35's
            // `TcpAgent::send_one` sends the next `t_seqno_`, resend or not
            // (`limited_transmit_resends`).
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
            if PACED && self.paced_out(now) {
                return false;
            }
        }
        if len > 0 && flight + len > base_cwnd && self.dupacks > 0 {
            // Admitted by limited transmit only: RFC 5681 section 3.2 step 2
            // keeps it out of the FlightSize that sets ssthresh.
            self.limited_sent += (flight + len - base_cwnd).min(len) as u32;
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
    pub(super) fn check_persist(&mut self, now: Time) {
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
    pub(super) fn persist_interval(&self) -> Time {
        self.rtt.rto().backed_off(self.persist_backoff, self.cfg.max_rto)
    }

    /// The persist timer fired (Linux `tcp_probe_timer` / `tcp_write_wakeup`).
    /// If the window admits part of the next segment, that part goes out
    /// (and the retransmission timer takes over); if it is closed, a probe
    /// with SEG.SEQ = SND.UNA - 1 and no data makes the receiver answer with
    /// its window. ns-3 3.44 (`PersistTimeout`) and RFC 9293 probe with one
    /// byte of new data instead; both elicit the same ACK.
    pub(super) fn on_persist(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.stats.window_probes += 1;
        let off = self.snd_nxt;
        let edge = self.wnd_edge();
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

    /// Header fields every segment after the handshake carries: ACK, window,
    /// timestamps, SACK blocks. Sending it satisfies any pending ACK.
    pub(super) fn header(&mut self, now: Time, off: u64) -> Segment {
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
        let inband = match self.xcp_echo.take() {
            // XCP section 3.1: the receiver copies the feedback its data
            // arrived with into the ACK (summed over the segments a delayed
            // ACK covers, so none is lost).
            Some(feedback) => InBand::Xcp(XcpFields { feedback, ack: true, ..Default::default() }),
            None => InBand::None,
        };
        self.last_ack_sent = self.rcv_nxt;
        self.delack_at = None;
        self.unacked_segs = 0;
        let (flags, ecn) = self.ecn_header();
        Segment {
            seq: self.iss.wrapping_add(off as u32),
            ack: self.irs.wrapping_add(self.rcv_nxt as u32),
            flags: TcpFlags::ACK | flags,
            window,
            opts,
            len: 0,
            retransmission: false,
            inband,
            ecn,
        }
    }

    pub(super) fn send_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.synchronized() {
            return;
        }
        let seg = self.header(now, self.snd_max);
        // The mark is echoed now (ns-3: `ECN_CE_RCVD` -> `ECN_SENDING_ECE`).
        // Written only under the rule: the field lies outside the
        // per-segment block, and every ACK would pull its line in.
        if self.cfg.ecn_echo_past_cwr {
            self.ce_unacked = false;
        }
        self.stats.segments_sent += 1;
        self.stats.acks_sent += 1;
        out.push(seg);
    }

    /// `resend_merges_sent`: the length of a resend at `off` as ns-3 3.44
    /// cuts it from its sent list (`TcpTxBuffer::GetTransmittedSegment`):
    /// the segment at `off` (split there if `off` lies inside it, as
    /// `GetPacketFromList`) and the next one, at most an MSS. ns-3 merges
    /// the next one only if it is not SACKed and lost alike; ours' caller
    /// already stops a resend at the next SACKed byte.
    fn sent_list_resend_len(&mut self, off: u64) -> u64 {
        self.sent_list_trim();
        let i = self.sent_list.partition_point(|&(_, e)| e <= off);
        let Some(&(s, e)) = self.sent_list.get(i) else { return self.mss };
        let next = self.sent_list.get(i + 1).map_or(0, |&(a, b)| b - a);
        self.mss.min(e - off.max(s) + next)
    }

    /// Drops the sent segments SND.UNA has passed (ns-3 `DiscardUpTo`,
    /// which splits the one it passes into).
    fn sent_list_trim(&mut self) {
        while self.sent_list.front().is_some_and(|&(_, e)| e <= self.snd_una) {
            self.sent_list.pop_front();
        }
        if let Some(f) = self.sent_list.front_mut() {
            f.0 = f.0.max(self.snd_una);
        }
    }

    /// `resend_merges_sent`: `[off, end)` goes out. New data is a sent
    /// segment of its own (ns-3 `GetNewSegment`); a resend becomes one,
    /// the segments it covers merged and the one it ends inside split
    /// (ns-3 `GetPacketFromList`'s `MergeItems` and `SplitItems`), so a
    /// later resend is cut from it.
    fn sent_list_record(&mut self, off: u64, end: u64) {
        self.sent_list_trim();
        if off >= self.snd_max {
            self.sent_list.push_back((off, end));
            return;
        }
        let mut i = self.sent_list.partition_point(|&(_, e)| e <= off);
        if let Some(&(s, e)) = self.sent_list.get(i) {
            if s < off {
                self.sent_list[i] = (s, off);
                self.sent_list.insert(i + 1, (off, e));
                i += 1;
            }
        }
        let mut j = i;
        let mut covered = off;
        while let Some(&(s, e)) = self.sent_list.get(j) {
            if s >= end {
                break;
            }
            covered = e;
            j += 1;
        }
        self.sent_list.drain(i..j);
        if covered > end {
            self.sent_list.insert(i, (end, covered));
        }
        self.sent_list.insert(i, (off, end.min(self.snd_max)));
        if end > self.snd_max {
            // A resend that runs past SND.MAX (never with resend_merges_sent's cut): its new bytes.
            self.sent_list.insert(i + 1, (self.snd_max, end));
        }
    }

    /// Puts `[off, off + len)` (and the FIN) on the wire.
    pub(super) fn emit(&mut self, now: Time, off: u64, len: u64, fin: bool, out: &mut Vec<Segment>) {
        let retransmission = off < self.snd_max;
        if len > 0 && self.cfg.resend_merges_sent {
            self.sent_list_record(off, off + len);
        }
        // ns-3 SendDataPacket: cwnd limits the sender if less than one SMSS
        // of it is left once this segment is in flight.
        self.cwnd_limited = self.win.cwnd < self.in_flight() + len + self.mss;
        let mut seg = self.header(now, off);
        seg.len = len as u32;
        if len > 0 {
            self.cc.on_send(now, &self.win, self.rtt.srtt(), &mut seg.inband);
        }
        if fin {
            seg.flags = seg.flags | TcpFlags::FIN;
        }
        seg.retransmission = retransmission;
        if len > 0 {
            self.ecn_on_send(&mut seg);
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        let end = off + len + fin as u64;
        if len > 0 && self.rate.is_some() {
            self.rate_on_send(now, off, len);
        }
        if retransmission && self.cfg.resend_lost_retransmit && self.in_recovery && self.sack_ok && len > 0 {
            self.rxt_sent.retain(|&(l, _, _)| l != off);
            self.rxt_sent.push((off, off + len, self.snd_max));
        }
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
        if self.in_recovery || self.ecn_ok && self.in_cwr {
            self.prr_out += len;
        }
        // RFC 6298 (5.1): start the timer if it is not running.
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
        out.push(seg);
    }
}
