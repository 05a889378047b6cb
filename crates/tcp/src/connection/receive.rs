//! Receive side: the window we advertise and the data we accept
//! (RFC 9293 sections 3.8.6.2 and 3.10.7.4).

use super::*;

impl Connection {
    /// Our window field: `rcv_buf` minus out-of-order bytes held, or with
    /// `window_deducts_ooo` off the whole `rcv_buf` (ns-3 3.44
    /// `TcpRxBuffer::MaxRxSequence`: RCV.NXT + the buffer while the
    /// application has read every in-order byte; the out-of-order bytes
    /// lie inside that window, so they never overfill the buffer) (for an
    /// NGWA receiver `min(Wb, Wmax, Wngwa)`, seed 001 eq. 2), never moving
    /// the right edge left (RFC 9293 section 3.8.6.2.2; how the two meet:
    /// `crate::ngwa`), scaled down by our shift and so rounded down (RFC
    /// 7323 section 2.3). With `shrink_window` the edge may move left (RFC
    /// 9293 section 3.8.6.2.2 says SHOULD NOT; a sender must cope): the
    /// field is what we offer now; data up to the furthest edge we ever
    /// offered is still accepted (`adv_edge`).
    pub(super) fn window_field(&mut self) -> u16 {
        let held = if self.cfg.window_deducts_ooo { self.ooo.held.bytes() } else { 0 };
        let mut free = self.cfg.rcv_buf.saturating_sub(held);
        if self.cfg.rcv_window_opens {
            // Linux's rcv_ssthresh caps the window offered
            // (`__tcp_select_window`): it starts at the SYN's unscaled
            // window, at most `U16_MAX` (`tcp_select_initial_window`), and
            // `tcp_grow_window` adds `2 * advmss` for each full-sized
            // segment received, so twice the bytes received in order.
            // RCV.NXT counts from the SYN (offset 1 is the first byte).
            let opened = (u16::MAX as u64).saturating_add(2 * self.rcv_nxt.saturating_sub(1));
            free = free.min(opened);
        }
        if let Some(n) = &self.cfg.ngwa {
            free = self.ngwa.advertise(n, free, self.mss);
        }
        let keep = if self.cfg.shrink_window { 0 } else { self.adv_edge.saturating_sub(self.rcv_nxt) };
        let field = (free.max(keep) >> self.rcv_shift).min(u16::MAX as u64);
        self.adv_edge = self.adv_edge.max(self.rcv_nxt + (field << self.rcv_shift));
        field as u16
    }

    /// Stores the payload and FIN of a segment; says how soon to ACK.
    pub(super) fn process_data(&mut self, start: u64, seg: &Segment) -> AckDue {
        let fin = seg.flags.fin();
        if seg.len == 0 && !fin {
            // RFC 9293 section 3.10.7.4: an unacceptable segment is answered
            // with an ACK. The one a sender makes on purpose sits just below
            // RCV.NXT: a zero-window probe (Linux `tcp_xmit_probe_skb`).
            return if start < self.rcv_nxt { AckDue::Now } else { AckDue::No };
        }
        if let (Some(n), InBand::Ngwa(v)) = (&self.cfg.ngwa, seg.inband) {
            // Seed 001 section 2: the receiver keeps the value its data
            // arrived with (ACKs flowing the other way carry one too, for
            // the other direction's receiver; they are not data here).
            if seg.len > 0 {
                self.ngwa.on_value(n, v);
            }
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
        if let InBand::Xcp(x) = seg.inband {
            if !x.ack && seg.len > 0 {
                self.xcp_echo = Some(self.xcp_echo.unwrap_or(0).saturating_add(x.feedback));
            }
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
                    due = if self.unacked_segs >= self.cfg.delayed_ack_count { AckDue::Now } else { AckDue::Delayed };
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
}
