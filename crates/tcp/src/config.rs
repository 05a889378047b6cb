//! Settings of a TCP endpoint, kept apart from its state (STYLE.md: config
//! separate from state). One [`TcpConfig`] may serve many connections.

use netreturn_base::Time;

use crate::cc::cubic::CubicConfig;
use netreturn_control::ngwa_receiver::NgwaConfig;

pub use crate::cc::{CcKind, CcName, CcParams, NoConfig};

/// How cwnd evolves during fast recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Without SACK: RFC 6582 cwnd inflation by one MSS per dupACK and
    /// deflation on partial ACKs. With SACK: RFC 6675 (cwnd = ssthresh on
    /// entry, send while `cwnd - pipe >= 1 SMSS`).
    Classic,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB) for the SACK
    /// recovery; without SACK the connection falls back to [`Recovery::Classic`]
    /// (ns-3 emulates SACK for non-SACK peers instead, see the crate docs).
    Prr,
}

/// How a loss sets ssthresh, at a fast retransmit and at a timeout (the
/// first expiry of a series). RFC 5681 (4) bounds it, "no more than"
/// max(FlightSize / 2, 2 SMSS); the simulators and Linux read FlightSize
/// differently. With SACK the rules part most: at a fast retransmit the
/// pipe leaves out the DupThresh SACKed segments and the lost head, and
/// under PRR, which sends new data during the recovery, SND.MAX - SND.UNA
/// at a timeout inside it may be twice the pipe. Congestion controls that
/// set ssthresh from their own state (CUBIC from cwnd, Westwood+ from its
/// estimate, ...) do not read the flight; only `Linux`'s keep applies to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossSsthresh {
    /// FlightSize = SND.MAX - SND.UNA, RFC 5681 section 2's definition
    /// ("sent but not yet cumulatively acknowledged", SACKed data
    /// included), less what limited transmit sent (RFC 5681 section 3.2
    /// step 2) at a fast retransmit.
    Rfc5681,
    /// FlightSize = ns-3 3.44's `BytesInFlight()` (`EnterRecovery` and
    /// `ReTxTimeout`: `GetSsThresh(m_tcb, BytesInFlight())`): RFC 6675's
    /// pipe when SACK is in use; without SACK, SND.MAX - SND.UNA less a
    /// segment per duplicate ACK ns-3 counts as "Reno-SACKed" (at a fast
    /// retransmit the run's dupACKs with limited transmit, else one; inside
    /// a recovery what RFC 6582's inflation holds, cwnd - ssthresh).
    Ns3,
    /// FlightSize = cwnd (`tcp_reno_ssthresh`: max(cwnd / 2, 2)), and a
    /// timeout inside a recovery (or an ECN window reduction) keeps the
    /// ssthresh that recovery set (`tcp_enter_loss`: "Reduce ssthresh if
    /// it has not yet been made inside this window"), as Linux.
    Linux,
    /// FlightSize = ns-2.35's `window()` = min(cwnd_, wnd_) in whole
    /// segments, halved to a whole segment (`TcpAgent::slowdown` with
    /// `CLOSE_SSTHRESH_HALF`, `precision_reduce_` off). ns-2's
    /// `NewRenoTcpAgent` keeps a recovery's inflation apart (`dupwnd_`),
    /// so a timeout inside a recovery halves the uninflated window:
    /// min(ssthresh, cwnd - SMSS) of RFC 6582's inflated cwnd (ns-2's
    /// `partialnewack` deflates `dupwnd_` first and leaves it at least 1).
    /// `TcpAgent::timeout` halves at every expiry, a backed-off one too.
    Ns2,
}

/// What a loss found during an ECN window reduction (the CWR state of RFC
/// 3168 section 6.1.2) starts, with SACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryFromCwr {
    /// Fast recovery, continuing the CWR's reduction (no second ssthresh
    /// cut): Linux `tcp_fastretrans_alert` enters `tcp_enter_recovery` from
    /// `TCP_CA_CWR`, which keeps the CWR's ssthresh and PRR counters
    /// (`if (!tcp_in_cwnd_reduction(sk))`); RFC 3168 section 6.1.2 allows
    /// it ("reduced only once" per window).
    Linux,
    /// No fast recovery while in CWR, as ns-3 3.44: `TcpSocketBase::DupAck`
    /// enters recovery from `CA_DISORDER` only, so in `CA_CWR` duplicate
    /// ACKs start nothing; the holes are repaired under the CWR's window,
    /// `SendPendingData` sending by `NextSeg` rules 1 and 2 (rule 3 only in
    /// `CA_RECOVERY`) while `cwnd - BytesInFlight()` (RFC 6675's pipe)
    /// allows, cwnd set by PRR on ACKs that advance SND.UNA only
    /// (`ProcessAck`'s `CA_CWR` branch). A segment resent there is not
    /// resent again before the CWR ends or the timer expires (ns-3's
    /// `m_retrans`, ours `high_rxt`). A fast recovery may follow once
    /// SND.UNA passes the CWR's window.
    Ns3,
}

/// PRR's bound when the pipe is at or below ssthresh (RFC 6937 section 3.1,
/// RFC 9937): how far one ACK may refill it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrBound {
    /// RFC 6937's PRR-SSRB on every ACK: `limit = MAX(prr_delivered -
    /// prr_out, DeliveredData) + MSS`.
    Ssrb,
    /// PRR-CRB (`MAX(prr_delivered - prr_out, DeliveredData)`), plus one
    /// MSS only on a "safe" ACK, one that advances SND.UNA and marks no
    /// further segment lost: RFC 9937 (which obsoletes RFC 6937) "SafeACK";
    /// Linux `tcp_cwnd_reduction` (`if (flag & FLAG_SND_UNA_ADVANCED &&
    /// !newly_lost) sndcnt++`, since 3759824da87b, 2015); ns-3-dev and 3.44
    /// (`TcpPrrRecovery::DoRecovery`: `if (tcb->m_isRetransDataAcked)`).
    SafeAck,
}

/// Settings of a TCP endpoint. `Default` gives ns-3 3.44's defaults
/// (SPEC.md section 6) wherever ns-3 has the same knob.
///
/// | field | default | meaning |
/// |---|---|---|
/// | `mss` | 536 B | payload bytes per full segment (ns-3 `SegmentSize`); options are not subtracted |
/// | `cc` | `Cubic(CubicConfig::default())` | congestion control |
/// | `recovery` | `Prr` | cwnd during SACK loss recovery |
/// | `sack` | on | offer SACK-permitted (RFC 2018) |
/// | `dupack_same_window` | on | without SACK, a dupACK must repeat the previous window (RFC 5681 section 2); off, any window (ns-3) |
/// | `impatient` | on | without SACK, only the first partial ACK of a NewReno recovery restarts the retransmission timer (RFC 6582 section 3.2 step 5, "Impatient"; ns-3); off, every partial ACK does (RFC 6298 (5.3), "Slow-but-Steady"; Linux) |
/// | `sack_impatient` | off | with SACK, only the first partial ACK of a recovery restarts the retransmission timer, as ns-3 3.44 does in every recovery (`TcpSocketBase::ProcessAck`: `NewAck(ack, m_isFirstPartialAck)`); off, every ACK that advances SND.UNA does (RFC 6298 (5.3); Linux `tcp_rearm_rto`) |
/// | `loss_ssthresh` | `Rfc5681` | the FlightSize RFC 5681 (4) halves at a fast retransmit and a timeout: SND.MAX - SND.UNA, RFC 6675's pipe (ns-3), cwnd with no second reduction inside a recovery (Linux), or ns-2.35's uninflated window at every expiry (ns-2) ([`LossSsthresh`]) |
/// | `rto_restart_on_fast_retransmit` | off | the fast retransmit restarts the retransmission timer (ns-2.35 `tcp-newreno.cc` `dupack_action` `reset_rtx_timer(1,0)`; Linux `tcp_xmit_retransmit_queue`); off, a running timer keeps its expiry (RFC 6298 (5.1); ns-3) |
/// | `resend_ends_at_snd_max` | off | a go-back-N resend ends at SND.MAX and new data goes in segments of its own, as ns-3 3.44 resends its sent list (`TcpTxBuffer::GetTransmittedSegment`) and Linux its retransmission queue; off, resends are cut a full segment at a time from SND.NXT and the last may carry new bytes up to the right edge (RFC 9293 section 3.8.6 allows both) |
/// | `resend_merges_sent` | off | a resend takes the segment at SND.NXT as first sent and the next one, at most an MSS, and the sent segments keep that cut, as ns-3 3.44's sent list (`TcpTxBuffer::GetTransmittedSegment`); implies `resend_ends_at_snd_max`. Off, a resend is cut a full MSS from SND.NXT (RFC 9293 section 3.8.6 allows both) |
/// | `timestamps` | on | offer timestamps (RFC 7323), RTT measured from TSecr |
/// | `window_scaling` | on | offer window scale (RFC 7323); shift chosen like Linux |
/// | `rcv_buf` | 131072 B | receive buffer; advertised window = `rcv_buf` - out-of-order bytes |
/// | `window_deducts_ooo` | on | the advertised window is `rcv_buf` less the out-of-order bytes held (Linux `tcp_space`: the buffer's free memory); off, the whole `rcv_buf` from RCV.NXT, the out-of-order bytes lying inside it, as ns-3 3.44 (`TcpRxBuffer::MaxRxSequence`, `TcpSocketBase::AdvertisedWindowSize`). RFC 9293 section 3.8.6 allows both |
/// | `shrink_window` | off | the receiver may move the right edge of its window left (an NGWA receiver's falling `Wngwa` at once); off, it keeps RFC 9293 section 3.8.6.2.2's edge |
/// | `snd_buf` | 131072 B | kept for parity with ns-3; the simulated app never blocks on it |
/// | `initial_cwnd` | 10 segments | RFC 6928 |
/// | `initial_ssthresh` | `u64::MAX` | unbounded |
/// | `dupack_threshold` | 3 | DupThresh (RFC 5681, RFC 6675) |
/// | `limited_transmit` | on | RFC 3042 |
/// | `limited_transmit_resends` | off | limited transmit also releases the next segment of a go-back-N after a timeout, as ns-2.35's `send_one` (tcp.cc: the next `t_seqno_`, new or not); off, only "previously unsent data" (RFC 3042 section 2; ns-3, Linux) |
/// | `resend_lost_retransmit` | off | in a SACK recovery, the retransmission of the segment at SND.UNA is lost once an ACK SACKs data first sent after it, and is sent again at once, the retransmission timer restarted (Linux RACK, RFC 8985 section 6.2 with no reordering seen, where `tcp_rack_reo_wnd` is 0 in recovery; Linux `tcp_xmit_retransmit_queue` rearms the timer for the head); off, a lost retransmission waits for the retransmission timer (RFC 6675) |
/// | `abc_limit` | 1 | RFC 3465 L for Reno/NewReno slow start: cwnd += min(acked, L*MSS) per ACK (ns-3 NewReno = 1; ns-3 CUBIC uses unbounded byte counting, and so does ours) |
/// | `delayed_ack_count` | 2 | ACK every n-th in-order full segment |
/// | `delayed_ack_timeout` | 200 ms | delayed-ACK timer |
/// | `initial_rto` | 1 s | RFC 6298 (2.1); also the SYN timeout |
/// | `min_rto` | 1 s | RFC 6298 (2.4) |
/// | `max_rto` | 60 s | RFC 6298 (2.5) |
/// | `clock_granularity` | 1 ms | G in RFC 6298 |
/// | `ts_tick` | 1 ms | timestamp clock tick (ns-3 and Linux use 1 ms) |
/// | `ngwa` | `None` | NGWA end host (seed 001): receiver rule eq. 2 / eq. 4, segments shortened by the option |
/// | `prr_bound` | `Ssrb` | PRR's bound below ssthresh: RFC 6937's PRR-SSRB on every ACK, or CRB with one more MSS on a safe ACK only (RFC 9937, Linux, ns-3) ([`PrrBound`]) |
/// | `recovery_from_cwr` | `Linux` | with SACK, a loss found while reducing for ECN enters fast recovery (Linux), or is repaired under the CWR state without one (ns-3) ([`RecoveryFromCwr`]) |
/// | `ecn_echo_past_cwr` | off | a classic ECN receiver keeps echoing ECE past the sender's CWR when a CE mark arrived since it last sent an ACK, as ns-3 3.44 (`TcpSocketBase::DoForwardUp` sets `ECN_IDLE` on a CWR only from a state other than `ECN_CE_RCVD`); off, a CWR ends the echo and only a CE on that segment restarts it (RFC 3168 section 6.1.3; Linux `tcp_ecn_accept_cwr`) |
/// | `ece_on_new_ack_only` | off | a classic ECN sender reduces on an ECE only when the ACK advances SND.UNA, as ns-3 3.44 (`TcpSocketBase::ReceivedAck`: `if (ackNumber > oldHeadSequence && ... ECE)`), so an ECE on a duplicate ACK is ignored; off, an ECE on any ACK (RFC 3168 section 6.1.2; Linux `tcp_ack` reads `FLAG_ECE` on every ACK) |
/// | `rcv_window_opens` | off | the advertised window starts at 64 KiB and grows by twice the bytes received in order, as Linux's `rcv_ssthresh` (`tcp_select_initial_window`: at most `U16_MAX`; `tcp_grow_window`: `2 * advmss` for each full segment), up to `rcv_buf`; off, the whole `rcv_buf` from the first ACK |
/// | `window_update_grows_only` | off | an ACK that neither advances SND.UNA nor carries newer data (a duplicate ACK) moves the send window only to a larger or a zero window, as Linux `tcp_may_update_window` (`ack_seq == snd_wl1 && (nwin > snd_wnd \|\| !nwin)`); off, any window (RFC 9293 section 3.10.7.4: SND.WL1 = SEG.SEQ and SND.WL2 =< SEG.ACK) |
/// | `ecn` | off | offer ECN (RFC 3168; ns-3 `UseEcn` Off by default); DCTCP and Prague offer it whatever this says |
#[derive(Clone, Copy, Debug, PartialEq)]
// Laid out in declaration order (`repr(C)`): the settings read only at set-up,
// in the handshake or in loss recovery first, the ones every segment reads in
// the last 72 bytes. A [`crate::Connection`] begins with its copy, so those
// 72 bytes border the connection's per-segment state and the first 128 stay
// out of the cache (the layout test in `connection::layout`).
#[repr(C)]
pub struct TcpConfig {
    pub cc: CcKind,
    pub snd_buf: u64,
    pub initial_ssthresh: u64,
    pub initial_rto: Time,
    pub min_rto: Time,
    pub max_rto: Time,
    pub clock_granularity: Time,
    pub mss: u32,
    pub initial_cwnd: u32,
    // RFC 3465's L, a few segments: one byte leaves room for the flags below.
    pub abc_limit: u8,
    pub recovery: Recovery,
    pub timestamps: bool,
    pub window_scaling: bool,
    pub ecn: bool,
    // Read only by a resend (after a timeout), and the second by a new segment.
    pub resend_ends_at_snd_max: bool,
    pub resend_merges_sent: bool,
    // Read only when a duplicate ACK would shrink the send window, the
    // cold part's last byte.
    pub window_update_grows_only: bool,
    // Read by every segment from here on.
    pub ngwa: Option<NgwaConfig>,
    pub rcv_buf: u64,
    pub delayed_ack_timeout: Time,
    pub ts_tick: Time,
    pub delayed_ack_count: u32,
    pub dupack_threshold: u32,
    pub sack: bool,
    pub limited_transmit: bool,
    pub dupack_same_window: bool,
    pub impatient: bool,
    pub sack_impatient: bool,
    pub rto_restart_on_fast_retransmit: bool,
    pub shrink_window: bool,
    pub window_deducts_ooo: bool,
    // Read only at a loss; the cold part is full, and this byte fills the
    // per-segment part's last padding (the layout test).
    pub loss_ssthresh: LossSsthresh,
    // Read only in an ECN reduction, after the per-segment part: both parts
    // are full, so the config grows by 8 bytes (the layout test).
    pub recovery_from_cwr: RecoveryFromCwr,
    // Read only in a reduction (PRR), in the same padding.
    pub prr_bound: PrrBound,
    // Read only on the first two dupACKs after a timeout, in the same padding.
    pub limited_transmit_resends: bool,
    // Read only on an ACK inside a SACK recovery, in the same padding.
    pub resend_lost_retransmit: bool,
    // Read only by a receiver's CE or CWR, in the same padding.
    pub ecn_echo_past_cwr: bool,
    // Read only on an ACK with ECE, in the same padding.
    pub ece_on_new_ack_only: bool,
    // Read by a receiver's window field, in the same padding.
    pub rcv_window_opens: bool,
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig {
            mss: 536,
            cc: CcKind::Cubic(CubicConfig::default()),
            recovery: Recovery::Prr,
            loss_ssthresh: LossSsthresh::Rfc5681,
            recovery_from_cwr: RecoveryFromCwr::Linux,
            prr_bound: PrrBound::Ssrb,
            sack: true,
            dupack_same_window: true,
            impatient: true,
            sack_impatient: false,
            rto_restart_on_fast_retransmit: false,
            resend_ends_at_snd_max: false,
            resend_merges_sent: false,
            timestamps: true,
            window_scaling: true,
            rcv_buf: 131_072,
            shrink_window: false,
            window_deducts_ooo: true,
            snd_buf: 131_072,
            initial_cwnd: 10,
            initial_ssthresh: u64::MAX,
            dupack_threshold: 3,
            limited_transmit: true,
            limited_transmit_resends: false,
            resend_lost_retransmit: false,
            ecn_echo_past_cwr: false,
            ece_on_new_ack_only: false,
            rcv_window_opens: false,
            window_update_grows_only: false,
            abc_limit: 1,
            delayed_ack_count: 2,
            delayed_ack_timeout: Time::from_millis(200),
            initial_rto: Time::from_secs(1),
            min_rto: Time::from_secs(1),
            max_rto: Time::from_secs(60),
            clock_granularity: Time::from_millis(1),
            ts_tick: Time::from_millis(1),
            ngwa: None,
            ecn: false,
        }
    }
}

impl TcpConfig {
    /// The window-scale shift we offer: like Linux, the smallest shift that
    /// lets `rcv_buf` fit the 16-bit field, at most 14 (RFC 7323 section 2.3).
    pub fn wscale_shift(&self) -> u8 {
        let mut s = 0u8;
        while s < 14 && (self.rcv_buf >> s) > 0xffff {
            s += 1;
        }
        s
    }

    /// Payload bytes of a full segment we send for a peer MSS `peer`: the
    /// smaller of the two, shortened for NGWA by the option's bytes, so a
    /// router inserting it never pushes a full segment over the MTU (seed 001
    /// section 4.2).
    pub fn send_mss(&self, peer: u32) -> u64 {
        let m = self.mss.min(peer) as u64;
        let less = self.ngwa.map(|n| n.option_bytes as u64).unwrap_or(0);
        m.saturating_sub(less).max(1)
    }
}
