//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-00,
//! Linux `tcp_rate.c`) and pacing, kept only for a control that asks
//! ([`CongestionControl::wants_rate_samples`], BBR): every other control
//! runs with `rate = None` and pays one branch per send and per ACK.
//!
//! Each data segment sent is remembered with the connection's delivery
//! state at that moment (section 3.2 "Transmitting a data packet"); a
//! segment counts as delivered when it is SACKed or cumulatively ACKed,
//! whichever comes first (section 3.3 "Upon receiving ACK"), and the
//! records are dropped as SND.UNA passes them, so they never outnumber the
//! segments in flight.

use std::collections::VecDeque;

use crate::cc::{RateSample, RecoveryState};

use super::*;

/// What a sent segment remembers (the draft's per-packet `P.*` fields).
#[derive(Clone, Copy, Debug)]
pub(super) struct Sent {
    start: u64,
    end: u64,
    /// `P.delivered`: `C.delivered` when it was (last) sent.
    delivered: u64,
    /// `P.delivered_time`.
    delivered_time: Time,
    /// `P.first_sent_time`.
    first_sent_time: Time,
    /// `P.sent_time`.
    sent_time: Time,
    /// `P.is_app_limited`.
    app_limited: bool,
    retransmitted: bool,
    /// Already counted as delivered (SACKed): the draft's
    /// `P.delivered_time = 0`.
    done: bool,
}

/// The sample being built from the segments one ACK delivers (the draft's
/// `rs.*` before `GenerateRateSample`).
#[derive(Clone, Copy, Debug, Default)]
struct Building {
    prior_delivered: u64,
    prior_time: Option<Time>,
    newest_sent: Time,
    is_app_limited: bool,
    send_elapsed: Time,
    ack_elapsed: Time,
    /// RTT of the most recently sent newly delivered segment that was
    /// never retransmitted.
    rtt: Option<Time>,
    rtt_sent: Time,
    acked_sacked: u64,
}

/// The connection's delivery state (the draft's `C.*`) and its records.
#[derive(Clone, Debug, Default)]
pub(super) struct Rates {
    pub(super) sent: VecDeque<Sent>,
    /// `C.delivered`, in bytes.
    pub(super) delivered: u64,
    /// `C.delivered_time`.
    delivered_time: Time,
    /// `C.first_sent_time`.
    first_sent_time: Time,
    /// `C.app_limited`: 0, or the `C.delivered` mark past which samples are
    /// no longer application-limited (section 3.4).
    app_limited: u64,
    /// Bytes deemed lost but not yet reported to the control.
    losses: u64,
    /// Un-SACKed bytes below this offset have been counted lost.
    lost_mark: u64,
    /// The lowest RTT sampled from the records (Linux `tcp_min_rtt`).
    min_rtt: Option<Time>,
    rs: Building,
    /// Ranges the SACK blocks of the ACK being processed newly cover, and
    /// the flight before it (from `rate_prepare` to `rate_on_ack`).
    newly: Vec<(u64, u64)>,
    prior_in_flight: u64,
    /// The earliest time the next data segment may leave (Linux
    /// `tcp_wstamp_ns`).
    pace_at: Time,
}

impl Rates {
    /// The index of the first record ending past `off` (what
    /// `sent.partition_point(|s| s.end <= off)` answers). The records tile
    /// the sequence space from SND.UNA up, one per segment and nearly all
    /// of them `mss` long, so the record holding `off` is almost always at
    /// `(off - start of the first) / mss`: that guess is checked and kept,
    /// and only a wrong one costs the binary search. The answer is the same
    /// either way; the guess touches one or two records where the search
    /// touches about log2(records) of them, each written a round trip ago
    /// and out of cache by now (the search was 6 % of a BBR run's time).
    #[inline]
    fn index_past(&self, off: u64, mss: u64) -> usize {
        let n = self.sent.len();
        let Some(first) = self.sent.front() else { return 0 };
        if first.end > off {
            return 0;
        }
        let guess = ((off - first.start) / mss.max(1)) as usize;
        if guess > 0 && guess < n && self.sent[guess].end > off && self.sent[guess - 1].end <= off {
            return guess;
        }
        self.sent.partition_point(|s| s.end <= off)
    }

    /// Section 3.3 `UpdateRateSample(P)` for a segment newly delivered.
    fn deliver(&mut self, now: Time, p: Sent) {
        let len = p.end - p.start;
        self.delivered += len;
        self.delivered_time = now;
        self.rs.acked_sacked += len;
        if !p.retransmitted && (self.rs.rtt.is_none() || p.sent_time >= self.rs.rtt_sent) {
            self.rs.rtt = Some(now.saturating_sub(p.sent_time));
            self.rs.rtt_sent = p.sent_time;
        }
        // The newest segment delivered defines the sample (Linux
        // `tcp_skb_sent_after`: by send time, then by sequence).
        if self.rs.prior_time.is_none() || p.sent_time >= self.rs.newest_sent {
            self.rs.prior_delivered = p.delivered;
            self.rs.prior_time = Some(p.delivered_time);
            self.rs.newest_sent = p.sent_time;
            self.rs.is_app_limited = p.app_limited;
            self.rs.send_elapsed = p.sent_time.saturating_sub(p.first_sent_time);
            self.rs.ack_elapsed = self.delivered_time.saturating_sub(p.delivered_time);
            self.first_sent_time = p.sent_time;
        }
    }
}

impl Connection {
    /// Section 3.2: a data segment `[off, off + len)` leaves; called before
    /// SND.MAX moves. A retransmission takes the send state of now.
    #[inline(never)]
    pub(super) fn rate_on_send(&mut self, now: Time, off: u64, len: u64) {
        let idle = self.snd_una >= self.snd_max;
        let Some(r) = self.rate.as_deref_mut() else { return };
        if idle {
            // "If there are no packets in flight": the send interval
            // starts afresh.
            r.first_sent_time = now;
            r.delivered_time = now;
        }
        let rec = Sent {
            start: off,
            end: off + len,
            delivered: r.delivered,
            delivered_time: r.delivered_time,
            first_sent_time: r.first_sent_time,
            sent_time: now,
            app_limited: r.app_limited != 0,
            retransmitted: false,
            done: false,
        };
        if off < self.snd_max {
            let i = r.index_past(off, self.mss);
            for s in r.sent.range_mut(i..) {
                if s.start >= off + len {
                    break;
                }
                if !s.done {
                    *s = Sent { start: s.start, end: s.end, retransmitted: true, ..rec };
                }
            }
        }
        if off + len > self.snd_max {
            // New data (a resent segment may also run past SND.MAX).
            r.sent.push_back(Sent { start: off.max(self.snd_max), ..rec });
        }
        if idle && r.app_limited != 0 {
            // Linux CA_EVENT_TX_START: sending again after an idle period
            // that the application caused.
            self.cc.on_restart_after_idle(now, &mut self.win);
        }
        if let Some(rate) = self.cc.pacing_rate().filter(|r| *r > 0.0) {
            // Linux `tcp_update_skb_after_send`: the next departure is one
            // segment's time at the pacing rate after this one, never from
            // a point in the past (no credit for time not sent).
            let r = self.rate.as_deref_mut().expect("rates");
            r.pace_at = r.pace_at.max(now) + Time::from_secs_f64(len as f64 / rate);
        }
    }

    /// Whether pacing holds back the next data segment; if so, the pacing
    /// timer is armed for when it may leave.
    #[inline]
    pub(super) fn paced_out(&mut self, now: Time) -> bool {
        match self.rate.as_deref() {
            Some(r) if r.pace_at > now => {
                self.pace_wait = Some(r.pace_at);
                true
            }
            _ => false,
        }
    }

    /// Before an arriving ACK is processed: the byte ranges its SACK
    /// blocks newly cover (into `newly`), and the bytes in flight.
    #[inline(never)]
    pub(super) fn rate_prepare(&mut self, seg: &Segment) {
        let mut newly = self.rate.as_mut().map(|r| std::mem::take(&mut r.newly)).unwrap_or_default();
        newly.clear();
        if self.sack_ok {
            let ack = unwrap_seq(seg.ack, self.iss, self.snd_una);
            for &(l, r) in seg.opts.sack.as_slice() {
                let l = unwrap_seq(l, self.iss, self.snd_una).max(ack);
                let r = unwrap_seq(r, self.iss, self.snd_una).min(self.snd_max);
                let mut x = l;
                while x < r {
                    let (g, g_end) = self.board.sacked.next_gap(x);
                    if g >= r {
                        break;
                    }
                    newly.push((g, g_end.min(r)));
                    x = g_end;
                }
            }
        }
        let prior_in_flight = self.in_flight();
        if let Some(r) = self.rate.as_deref_mut() {
            r.newly = newly;
            r.prior_in_flight = prior_in_flight;
        }
    }

    /// After an ACK is processed: delivers the segments it SACKed
    /// (`newly`) or cumulatively acknowledged, counts losses, generates the
    /// sample (section 3.3 `GenerateRateSample`) and hands it to the
    /// control.
    #[inline(never)]
    pub(super) fn rate_on_ack(&mut self, now: Time) {
        let recovery = self.recovery_state();
        let in_flight = self.in_flight();
        let (una, sack_ok, in_recovery) = (self.snd_una, self.sack_ok, self.in_recovery);
        let lost_end =
            if in_recovery && sack_ok { self.board.lost_below(self.mss, self.cfg.dupack_threshold) } else { 0 };
        let Some(r) = self.rate.as_deref_mut() else { return };
        r.rs = Building::default();
        let prior_in_flight = r.prior_in_flight;
        let newly = std::mem::take(&mut r.newly);
        for &(l, h) in &newly {
            let i = r.index_past(l, self.mss);
            let mut k = i;
            while k < r.sent.len() && r.sent[k].start < h {
                let s = r.sent[k];
                if !s.done && self.board.sacked.containing(s.start).is_some_and(|(_, e)| e >= s.end) {
                    r.sent[k].done = true;
                    r.deliver(now, s);
                }
                k += 1;
            }
        }
        r.newly = newly;
        while let Some(s) = r.sent.front().copied() {
            if s.end > una {
                break;
            }
            r.sent.pop_front();
            if !s.done {
                r.deliver(now, s);
            }
        }
        // Newly lost bytes: RFC 6675 IsLost moves up as SACKs arrive.
        if lost_end > r.lost_mark.max(una) {
            let from = r.lost_mark.max(una);
            r.losses += (lost_end - from) - self.board.sacked.bytes_in(from, lost_end);
            r.lost_mark = lost_end;
        }
        if let Some(rtt) = r.rs.rtt {
            r.min_rtt = Some(r.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        // Section 3.4: the application-limited period ends once what was
        // in flight when it began is delivered.
        if r.app_limited != 0 && r.delivered > r.app_limited {
            r.app_limited = 0;
        }
        let b = r.rs;
        let mut interval = b.prior_time.map(|_| b.send_elapsed.max(b.ack_elapsed));
        // Section 3.3: an interval below the minimum RTT would
        // overestimate the rate (a burst of ACKs after ACK compression).
        if interval.is_some_and(|i| r.min_rtt.is_some_and(|m| i < m)) {
            interval = None;
        }
        let rs = RateSample {
            delivered: if interval.is_some() { r.delivered - b.prior_delivered } else { 0 },
            interval,
            prior_delivered: b.prior_delivered,
            is_app_limited: b.is_app_limited,
            rtt: b.rtt,
            losses: std::mem::take(&mut r.losses),
            acked_sacked: b.acked_sacked,
            prior_in_flight,
            in_flight,
            delivered_total: r.delivered,
            recovery,
            srtt: self.rtt.srtt(),
        };
        if self.cc.on_rate_sample(now, &mut self.win, &rs) {
            let r = self.rate.as_deref_mut().expect("rates");
            r.app_limited = (r.delivered + in_flight).max(1);
        }
    }

    /// Linux `icsk_ca_state` in the terms of this connection.
    pub(super) fn recovery_state(&self) -> RecoveryState {
        if self.in_recovery {
            RecoveryState::Recovery
        } else if self.snd_una < self.recover {
            RecoveryState::Loss
        } else {
            RecoveryState::Open
        }
    }

    /// Losses outside the ACK clock: fast recovery without SACK (the
    /// segment at SND.UNA) or a timeout (everything un-SACKed in flight,
    /// Linux `tcp_enter_loss` marks it all lost).
    pub(super) fn rate_lost(&mut self, timeout: bool) {
        let (una, max) = (self.snd_una, self.snd_max);
        let Some(r) = self.rate.as_deref_mut() else { return };
        let from = r.lost_mark.max(una);
        if timeout {
            if max > from {
                r.losses += (max - from) - self.board.sacked.bytes_in(from, max);
            }
            r.lost_mark = max;
        } else if !self.sack_ok {
            r.losses += self.mss.min(max.saturating_sub(una));
            r.lost_mark = r.lost_mark.max((una + self.mss).min(max));
        }
    }

    /// Section 3.4 (Linux `tcp_rate_check_app_limited`): after sending what
    /// it could, the sender is application-limited if less than a segment
    /// waits, cwnd is not full and nothing lost awaits retransmission.
    pub(super) fn rate_check_app_limited(&mut self) {
        if self.rate.is_none() {
            return;
        }
        let waiting = self.app_end.saturating_sub(self.snd_nxt);
        let in_flight = self.in_flight();
        let limited = waiting < self.mss
            && in_flight < self.cc.window(&self.win)
            && !self.in_recovery
            && self.snd_nxt >= self.snd_max;
        if limited {
            let r = self.rate.as_deref_mut().expect("rates");
            r.app_limited = (r.delivered + in_flight).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(start: u64, end: u64) -> Sent {
        Sent {
            start,
            end,
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            sent_time: Time::ZERO,
            app_limited: false,
            retransmitted: false,
            done: false,
        }
    }

    proptest::proptest! {
        /// The guessed index is the binary search's answer for any records
        /// (full segments, short ones, a first one partly acknowledged) and
        /// any offset, inside the records or outside them.
        #[test]
        fn the_guessed_index_of_a_record_is_the_binary_searchs(
            first in 0u64..3000,
            lens in proptest::collection::vec(prop_oneof_len(), 0..40),
            off in 0u64..80_000,
            mss in 1u64..1500,
        ) {
            let mut r = Rates::default();
            let mut at = first;
            for len in lens {
                let len = if len == 0 { mss } else { len };
                r.sent.push_back(record(at, at + len));
                at += len;
            }
            proptest::prop_assert_eq!(r.index_past(off, mss), r.sent.partition_point(|s| s.end <= off));
        }
    }

    /// Mostly full segments (0 stands for one `mss`), some short ones.
    fn prop_oneof_len() -> impl proptest::strategy::Strategy<Value = u64> {
        proptest::prop_oneof![4 => proptest::strategy::Just(0u64), 1 => 1u64..1500]
    }
}
