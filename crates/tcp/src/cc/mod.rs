//! Congestion controls: a small trait with event-named methods and no-op
//! defaults (smoltcp's `congestion` module), one file per algorithm, chosen
//! through the closed enum [`CcKind`](crate::CcKind).
//!
//! The connection owns the window variables ([`Window`], like ns-3's
//! `TcpSocketState`) because loss recovery (RFC 6582 inflation, PRR) also
//! writes cwnd; a controller changes them only through these events.

pub mod cubic;
pub mod none;
pub mod reno;
pub mod sarbe;
pub mod westwood;
pub mod xcp;

use netreturn_base::{InBand, Time};

use crate::config::CcKind;

/// The congestion-window variables shared by the connection and its
/// controller, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Sender maximum segment size (SMSS).
    pub mss: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What a cumulative ACK told the sender (outside loss recovery).
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    /// Bytes newly acknowledged by this ACK.
    pub acked: u64,
    /// RTT sample carried by this ACK, if any (timestamps or Karn timing).
    pub rtt: Option<Time>,
    /// Smoothed RTT after this ACK.
    pub srtt: Option<Time>,
    /// Cumulative ACK point and highest sequence sent (unwrapped offsets).
    pub snd_una: u64,
    pub snd_max: u64,
    /// Whether cwnd limited the last send (`cwnd < in flight + SMSS` after
    /// it, ns-3's `m_isCwndLimited`, a simple Linux `tcp_is_cwnd_limited`).
    /// A window that did not limit the sender is not grown: a flow held by
    /// the receiver's window (a window-rewriting gateway) keeps a cwnd near
    /// what it uses instead of one that grows without bound in slow start
    /// and bursts when the advertised window opens.
    pub cwnd_limited: bool,
}

/// What any arriving ACK told the sender: every ACK of the connection,
/// duplicates and ACKs during recovery included (what Westwood+'s and
/// SARBE's bandwidth estimators sample).
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// Bytes newly acknowledged cumulatively (0 for a duplicate).
    pub acked: u64,
    /// RFC 6937 DeliveredData: the change in SND.UNA plus the newly SACKed
    /// bytes.
    pub delivered: u64,
    /// The RTT sample this ACK gave, if any.
    pub rtt: Option<Time>,
    /// (TSval, TSecr) the ACK carried (RFC 7323): TSval is the receiver's
    /// clock when it sent the ACK.
    pub timestamps: Option<(u32, u32)>,
    /// The ACK counted as a duplicate (RFC 6675 section 2 with SACK, RFC
    /// 5681 section 2 without).
    pub duplicate: bool,
    /// The sender was in fast recovery when the ACK arrived.
    pub in_recovery: bool,
    /// In-band fields the ACK carried (the XCP feedback echoed).
    pub inband: InBand,
}

/// Events a congestion control reacts to. Every method has a default so an
/// algorithm writes only what it changes: adding one means one file under
/// `src/cc/`, one variant of [`Cc`] and of [`CcKind`](crate::CcKind).
pub trait CongestionControl {
    /// The window the sender may have in flight (before the receiver's
    /// window is applied).
    fn window(&self, w: &Window) -> u64 {
        w.cwnd
    }

    /// New data was cumulatively acknowledged outside loss recovery.
    fn on_ack(&mut self, _now: Time, _w: &mut Window, _ack: &Ack) {}

    /// Loss detected by dupACKs or SACK: returns the new ssthresh.
    /// RFC 5681 (4): ssthresh = max(FlightSize / 2, 2 * SMSS).
    fn ssthresh_after_loss(&mut self, _now: Time, w: &Window, in_flight: u64) -> u64 {
        (in_flight / 2).max(2 * w.mss)
    }

    /// The retransmission timer fired (first expiry of a backoff series):
    /// returns the new ssthresh. RFC 5681 (4) again by default.
    fn on_rto(&mut self, now: Time, w: &Window, in_flight: u64) -> u64 {
        self.ssthresh_after_loss(now, w, in_flight)
    }

    /// Fast recovery ended with cwnd set to ssthresh.
    fn on_recovery_exit(&mut self, _now: Time, _w: &mut Window) {}

    /// Every arriving ACK, after the connection has processed it (new
    /// ACKs, duplicates, ACKs in recovery).
    fn on_ack_event(&mut self, _now: Time, _w: &mut Window, _ev: &AckEvent) {}

    /// A duplicate ACK arrived; `count` is the number in a row (before
    /// loss recovery decides anything on it).
    fn on_dupack(&mut self, _now: Time, _w: &mut Window, _count: u32) {}

    /// Fast recovery began, with ssthresh from [`Self::ssthresh_after_loss`]
    /// and cwnd set by the recovery algorithm.
    fn on_recovery_enter(&mut self, _now: Time, _w: &mut Window) {}

    /// A data segment is about to be sent: the place to fill in-band
    /// fields (the XCP sender's congestion header).
    fn on_send(&mut self, _now: Time, _w: &Window, _srtt: Option<Time>, _inband: &mut InBand) {}

    /// Whether three dupACKs trigger fast retransmit / fast recovery.
    fn fast_retransmit(&self) -> bool {
        true
    }

    /// RFC 5681 Reno: the first new ACK ends recovery, even a partial one.
    fn partial_ack_ends_recovery(&self) -> bool {
        false
    }

    /// The sender's estimate of its available bandwidth in bytes per
    /// second, for controllers that keep one (Westwood+, SARBE); traced.
    fn bandwidth_estimate(&self) -> Option<f64> {
        None
    }
}

/// The closed set of controllers, dispatched by `match` (no boxing, no
/// virtual calls on the hot path).
#[derive(Clone, Debug)]
pub enum Cc {
    None(none::NoCc),
    Reno(reno::Reno),
    Cubic(cubic::Cubic),
    WestwoodPlus(westwood::Westwood),
    Sarbe(sarbe::Sarbe),
    Xcp(xcp::Xcp),
}

impl Cc {
    pub fn new(kind: CcKind, abc_limit: u32) -> Cc {
        match kind {
            CcKind::None => Cc::None(none::NoCc),
            CcKind::Reno => Cc::Reno(reno::Reno::new(abc_limit, false)),
            CcKind::NewReno => Cc::Reno(reno::Reno::new(abc_limit, true)),
            CcKind::Cubic(cfg) => Cc::Cubic(cubic::Cubic::new(cfg)),
            CcKind::WestwoodPlus => Cc::WestwoodPlus(westwood::Westwood::new(abc_limit)),
            CcKind::Sarbe(cfg) => Cc::Sarbe(sarbe::Sarbe::new(cfg, abc_limit)),
            CcKind::Xcp(cfg) => Cc::Xcp(xcp::Xcp::new(cfg)),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::None($c) => $e,
            Cc::Reno($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::WestwoodPlus($c) => $e,
            Cc::Sarbe($c) => $e,
            Cc::Xcp($c) => $e,
        }
    };
}

impl Cc {
    /// [`CongestionControl::on_ack_event`] with the event built inside each
    /// variant's arm: for the controls that ignore it (Reno, CUBIC) the
    /// build is dead code and vanishes, so the per-ACK hook costs them
    /// nothing.
    #[inline(always)]
    pub fn on_ack_event_with(&mut self, now: Time, w: &mut Window, event: impl FnOnce() -> AckEvent) {
        dispatch!(self, c => c.on_ack_event(now, w, &event()))
    }
}

impl CongestionControl for Cc {
    fn window(&self, w: &Window) -> u64 {
        dispatch!(self, c => c.window(w))
    }
    fn on_ack(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        dispatch!(self, c => c.on_ack(now, w, ack))
    }
    fn ssthresh_after_loss(&mut self, now: Time, w: &Window, in_flight: u64) -> u64 {
        dispatch!(self, c => c.ssthresh_after_loss(now, w, in_flight))
    }
    fn on_rto(&mut self, now: Time, w: &Window, in_flight: u64) -> u64 {
        dispatch!(self, c => c.on_rto(now, w, in_flight))
    }
    fn on_recovery_exit(&mut self, now: Time, w: &mut Window) {
        dispatch!(self, c => c.on_recovery_exit(now, w))
    }
    fn fast_retransmit(&self) -> bool {
        dispatch!(self, c => c.fast_retransmit())
    }
    fn partial_ack_ends_recovery(&self) -> bool {
        dispatch!(self, c => c.partial_ack_ends_recovery())
    }
    fn on_ack_event(&mut self, now: Time, w: &mut Window, ev: &AckEvent) {
        dispatch!(self, c => c.on_ack_event(now, w, ev))
    }
    fn on_dupack(&mut self, now: Time, w: &mut Window, count: u32) {
        dispatch!(self, c => c.on_dupack(now, w, count))
    }
    fn on_recovery_enter(&mut self, now: Time, w: &mut Window) {
        dispatch!(self, c => c.on_recovery_enter(now, w))
    }
    fn on_send(&mut self, now: Time, w: &Window, srtt: Option<Time>, inband: &mut InBand) {
        dispatch!(self, c => c.on_send(now, w, srtt, inband))
    }
    fn bandwidth_estimate(&self) -> Option<f64> {
        dispatch!(self, c => c.bandwidth_estimate())
    }
}
