//! Explicit Congestion Notification (RFC 3168 section 6.1), and the
//! receiver of DCTCP (RFC 8257 section 3.2), which echoes each segment's CE
//! state instead of latching it until the sender's CWR.

use super::*;
use crate::cc::CongestionControl;

impl Connection {
    /// Whether this end asks for ECN: `tcp.ecn`, or a control that needs
    /// it (DCTCP, Prague).
    fn ecn_offered(&self) -> bool {
        self.cfg.ecn || self.cc.scalable_ect().is_some()
    }

    /// The receiver echoes every segment's CE state (DCTCP) rather than
    /// latching it (RFC 3168).
    fn ecn_precise(&self) -> bool {
        self.cc.scalable_ect().is_some()
    }

    /// RFC 3168 section 6.1.1: an ECN-setup SYN has ECE and CWR; the
    /// SYN-ACK that accepts it has ECE alone.
    pub(super) fn ecn_syn_flags(&self, server: bool) -> TcpFlags {
        match (server, self.ecn_ok, self.ecn_offered()) {
            (false, _, true) => TcpFlags::ECE | TcpFlags::CWR,
            (true, true, _) => TcpFlags::ECE,
            _ => TcpFlags::empty(),
        }
    }

    /// Section 6.1.1, on the peer's SYN or SYN-ACK.
    pub(super) fn ecn_negotiate(&mut self, syn: &Segment) {
        let f = syn.flags;
        self.ecn_ok = self.ecn_offered()
            && if f.ack() {
                // Our SYN asked; the SYN-ACK agrees with ECE and not CWR.
                f.ece() && !f.cwr()
            } else {
                f.ece() && f.cwr()
            };
    }

    /// The ECE flag and the ECN codepoint of a segment we send (a pure ACK
    /// unless [`Self::ecn_on_send`] makes it data). Section 6.1.4: pure
    /// ACKs are not ECN-capable, except from a control that needs ECN
    /// (Linux `tcp_ecn_send` for DCTCP).
    #[inline]
    pub(super) fn ecn_header(&self) -> (TcpFlags, Ecn) {
        if !self.ecn_ok {
            return (TcpFlags::empty(), Ecn::NotEct);
        }
        self.ecn_echo_header()
    }

    #[inline(never)]
    fn ecn_echo_header(&self) -> (TcpFlags, Ecn) {
        let flags = if self.ece_echo { TcpFlags::ECE } else { TcpFlags::empty() };
        (flags, self.cc.scalable_ect().unwrap_or(Ecn::NotEct))
    }

    /// A data segment leaving: ECT on new data (section 6.1.5: not on a
    /// retransmission, except from a control that needs ECN), and the CWR
    /// owed since the last reduction on the first new data (section
    /// 6.1.2).
    #[inline]
    pub(super) fn ecn_on_send(&mut self, seg: &mut Segment) {
        if self.ecn_ok {
            self.ecn_mark_send(seg);
        }
    }

    #[inline(never)]
    fn ecn_mark_send(&mut self, seg: &mut Segment) {
        match self.cc.scalable_ect() {
            Some(ect) => seg.ecn = ect,
            None if !seg.retransmission => seg.ecn = Ecn::Ect0,
            None => seg.ecn = Ecn::NotEct,
        }
        // A data segment carries the echo too (the receiver's ACK).
        if self.cfg.ecn_echo_past_cwr {
            self.ce_unacked = false;
        }
        if self.cwr_due && !seg.retransmission {
            self.cwr_due = false;
            seg.flags = seg.flags | TcpFlags::CWR;
        }
    }

    /// A data segment arrived (before its ACK is decided).
    pub(super) fn ecn_on_data(&mut self, now: Time, seg: &Segment, out: &mut Vec<Segment>) {
        let ce = seg.ecn == Ecn::Ce;
        self.stats.ce_received += ce as u64;
        if self.ecn_precise() {
            // RFC 8257 section 3.2: when the CE state changes, ACK at once
            // what arrived before it with the old state, so the echo stays
            // exact under delayed ACKs.
            if ce != self.ece_echo && self.unacked_segs > 0 {
                self.send_ack(now, out);
            }
            self.ece_echo = ce;
        } else {
            // Section 6.1.3: ECE from a CE mark until a CWR arrives (a CWR
            // on a marked segment leaves it set). `ecn_echo_past_cwr`: ns-3
            // 3.44 `DoForwardUp` goes to `ECN_IDLE` on a CWR only if no CE
            // arrived since its last ACK (`m_ecnState != ECN_CE_RCVD`), so
            // a mark on the segment before the CWR one, not yet echoed
            // (a delayed ACK pending), keeps the echo past the CWR.
            let keep = self.cfg.ecn_echo_past_cwr && self.ce_unacked;
            if seg.flags.cwr() && !keep {
                self.ece_echo = false;
            }
            self.ece_echo |= ce;
            self.ce_unacked |= ce && self.cfg.ecn_echo_past_cwr;
        }
    }

    /// An ACK with ECE arrived: reduce cwnd, at most once per window and
    /// not during loss recovery (section 6.1.2), by the control's rule
    /// (halve, or DCTCP's alpha), and owe the peer a CWR. With PRR the
    /// reduction is spread over the window, as in loss recovery (RFC 6937
    /// section 1: PRR serves any reduction, ECN's included; Linux
    /// `tcp_enter_cwr` and ns-3 `EnterCwr` run it in their CWR state):
    /// cwnd falls to ssthresh as the window is acknowledged and does not
    /// grow meanwhile; without PRR it is cut at once.
    pub(super) fn ecn_on_echo(&mut self, now: Time, delivered: u64) {
        if self.in_recovery || self.snd_una <= self.ecn_recover && self.ecn_recover > 0 {
            return;
        }
        let flight = self.snd_max - self.snd_una;
        self.win.ssthresh = self.cc.ssthresh_after_ecn(now, &self.win, flight);
        if !self.cc.owns_cwnd() {
            if self.cfg.recovery == Recovery::Prr {
                self.in_cwr = true;
                self.recover_fs = flight;
                self.prr_delivered = 0;
                self.prr_out = 0;
                self.prr_update(delivered);
            } else {
                self.win.cwnd = self.win.ssthresh.max(self.mss);
            }
        }
        self.ecn_recover = self.snd_max;
        self.cwr_due = true;
        self.stats.ecn_reductions += 1;
    }

    /// A new ACK in the CWR state: PRR on, or the end of the reduction once
    /// SND.UNA passes the window that was in flight at the ECE (cwnd =
    /// ssthresh, as at the end of loss recovery; Linux
    /// `tcp_end_cwnd_reduction`). Returns whether the state ended, so the
    /// control may grow cwnd on this ACK (ns-3 `ProcessAck` does).
    #[inline(never)]
    pub(super) fn cwr_on_ack(&mut self, delivered: u64) -> bool {
        if self.snd_una > self.ecn_recover {
            self.in_cwr = false;
            self.win.cwnd = self.win.ssthresh.max(self.mss);
            return true;
        }
        self.prr_update(delivered);
        false
    }
}
