//! The retransmission timer (RFC 6298, RFC 5681 section 3.1).

use super::*;

impl Connection {
    pub(super) fn on_rto(&mut self, now: Time, out: &mut Vec<Segment>) {
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
        // ns-2.35 `TcpAgent::timeout` halves its window at every expiry
        // (`slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)`), a backed-off
        // one too, so ssthresh falls to 2 segments after cwnd = 1.
        let every_expiry = self.cfg.loss_ssthresh == LossSsthresh::Ns2;
        if self.rtt.backoff() == 0 || every_expiry {
            // RFC 5681 (4) on the first timeout of a series; repeated
            // timeouts of the same data keep ssthresh (RFC 5681 section 3.1).
            let flight = self.loss_flight_size(self.snd_max - self.snd_una, false);
            let ssthresh = self.cc.on_rto(now, &self.win, flight);
            // Linux `tcp_enter_loss`: no second reduction inside the window
            // whose recovery (or CWR) already reduced it.
            let reduced_in_window = self.in_recovery || self.in_cwr;
            if !(self.cfg.loss_ssthresh == LossSsthresh::Linux && reduced_in_window) {
                self.win.ssthresh = ssthresh;
            }
        }
        self.rate_lost(true);
        // RFC 3168 section 6.1.2: "the TCP sender's congestion window should
        // be reduced only once in response to a series of dropped and/or CE
        // packets from a single window of data". This timeout is that
        // window's reduction: an ECE for data sent before it starts no
        // second one (Linux: no `tcp_enter_cwr` in CA_Loss, and none until
        // SND.UNA passes the data then in flight). Every other value it
        // takes is an earlier SND.MAX, which never decreases.
        self.ecn_recover = self.snd_max;
        // RFC 5681 section 3.1: cwnd = LW = 1 SMSS.
        self.win.cwnd = self.mss;
        self.in_recovery = false;
        self.in_cwr = false;
        self.dupacks = 0;
        self.limited_sent = 0;
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
}
