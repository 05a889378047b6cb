//! Congestion controls: a small trait with event-named methods and no-op
//! defaults (smoltcp's `congestion` module), one file per algorithm, chosen
//! through the closed enum [`CcKind`], generated with [`CcName`],
//! [`CcParams`] and [`Cc`] from one list (`congestion_controls!` below).
//!
//! The connection owns the window variables ([`Window`], like ns-3's
//! `TcpSocketState`) because loss recovery (RFC 6582 inflation, PRR) also
//! writes cwnd; a controller changes them only through these events.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod none;
pub mod reno;
pub mod sarbe;
pub mod westwood;
pub mod westwood_original;
pub mod xcp;

use netreturn_base::{Ecn, InBand, Time};

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
/// duplicates and ACKs during recovery included (what the bandwidth
/// estimators of Westwood, Westwood+ and SARBE sample).
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
    /// The ACK echoed congestion (ECE, RFC 3168 section 6.1.3; with a
    /// DCTCP receiver, per segment: RFC 8257 section 3.2).
    pub ece: bool,
    /// SND.UNA and SND.MAX after the ACK (unwrapped offsets).
    pub snd_una: u64,
    pub snd_max: u64,
}

impl AckEvent {
    /// An ACK newly delivering `acked` bytes cumulatively (a duplicate when
    /// 0), outside recovery, with no RTT sample, timestamps, in-band fields
    /// or ECE: what the controls' tests vary from.
    pub fn delivering(acked: u64) -> AckEvent {
        AckEvent {
            acked,
            delivered: acked,
            rtt: None,
            timestamps: None,
            duplicate: acked == 0,
            in_recovery: false,
            inband: InBand::None,
            ece: false,
            snd_una: 0,
            snd_max: 0,
        }
    }
}

/// Where the sender is in loss recovery, as Linux's `icsk_ca_state` names
/// it (what BBR's packet conservation keys on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecoveryState {
    /// No recovery under way (Linux `TCP_CA_Open`).
    Open,
    /// Fast recovery after dupACKs or SACKs (`TCP_CA_Recovery`).
    Recovery,
    /// Recovering after a retransmission timeout, until SND.UNA passes the
    /// point sent when it fired (`TCP_CA_Loss`).
    Loss,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation-00,
/// section 3.3 `GenerateRateSample`; Linux `struct rate_sample`), given on
/// every ACK to a control whose [`CongestionControl::wants_rate_samples`]
/// is true. Bytes throughout, where Linux counts packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// `rs.delivered`: bytes delivered between the sending of the newest
    /// segment this ACK delivered and this ACK.
    pub delivered: u64,
    /// `rs.interval`: max(send elapsed, ACK elapsed), or `None` when the
    /// ACK gives no valid sample (nothing newly delivered, or an interval
    /// shorter than the minimum RTT: section 3.3, "the sample is invalid").
    pub interval: Option<Time>,
    /// `rs.prior_delivered`: `C.delivered` when that segment was sent.
    pub prior_delivered: u64,
    /// `rs.is_app_limited`: the segment was sent while the application,
    /// not the network, limited the sender (section 3.4).
    pub is_app_limited: bool,
    /// RTT of the most recently sent segment this ACK newly delivered,
    /// retransmissions excluded (Karn), as Linux `rs->rtt_us`.
    pub rtt: Option<Time>,
    /// Bytes newly deemed lost since the previous sample (RFC 6675 IsLost,
    /// or all of the flight on a timeout; Linux `rs->losses`).
    pub losses: u64,
    /// Bytes this ACK newly delivered, cumulatively or by SACK (Linux
    /// `rs->acked_sacked`, RFC 6937 DeliveredData).
    pub acked_sacked: u64,
    /// Bytes in flight before and after this ACK (RFC 6675 pipe during
    /// SACK recovery).
    pub prior_in_flight: u64,
    pub in_flight: u64,
    /// `C.delivered`: every byte delivered so far.
    pub delivered_total: u64,
    pub recovery: RecoveryState,
    /// Smoothed RTT after this ACK, if any.
    pub srtt: Option<Time>,
}

impl RateSample {
    /// The sample's delivery rate in bytes per second, if valid.
    pub fn rate(&self) -> Option<f64> {
        self.interval.filter(|i| i.0 > 0).map(|i| self.delivered as f64 / i.secs_f64())
    }
}

/// Events a congestion control reacts to. Every method has a default so an
/// algorithm writes only what it changes: adding one means one file under
/// `src/cc/` and one line of the list below.
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

    /// The ECN codepoint of a control that needs ECN with a receiver
    /// echoing each CE mark (DCTCP: ECT(0), RFC 8257; Prague: ECT(1), RFC
    /// 9331), or `None` for a classic control, which uses ECN (ECT(0),
    /// RFC 3168) only when `tcp.ecn` asks.
    fn scalable_ect(&self) -> Option<Ecn> {
        None
    }

    /// An ECE arrived (at most once per window, outside loss recovery):
    /// returns the new ssthresh, cwnd following it. RFC 3168 section 6.1.2:
    /// as for a loss by default.
    fn ssthresh_after_ecn(&mut self, now: Time, w: &Window, in_flight: u64) -> u64 {
        self.ssthresh_after_loss(now, w, in_flight)
    }

    /// Whether three dupACKs trigger fast retransmit / fast recovery.
    fn fast_retransmit(&self) -> bool {
        true
    }

    /// RFC 5681 Reno: the first new ACK ends recovery, even a partial one.
    fn partial_ack_ends_recovery(&self) -> bool {
        false
    }

    /// The sender's estimate of its available bandwidth in bytes per
    /// second, for controllers that keep one (Westwood+, SARBE, BBR); traced.
    fn bandwidth_estimate(&self) -> Option<f64> {
        None
    }

    /// Whether the connection keeps per-segment delivery records and calls
    /// [`Self::on_rate_sample`] on every ACK. Asked once, when the
    /// connection is made: the controls that answer no pay nothing.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    /// Every arriving ACK, with its delivery-rate sample (Linux's
    /// `cong_control` hook). Returns true to mark the data in flight as
    /// application-limited (BBR's ProbeRTT, Linux `tp->app_limited`).
    fn on_rate_sample(&mut self, _now: Time, _w: &mut Window, _rs: &RateSample) -> bool {
        false
    }

    /// The rate in bytes per second the sender spaces its data segments
    /// at, or `None` to send as the windows allow. Asked only of controls
    /// that want rate samples.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }

    /// The control sets cwnd on every ACK itself, recovery included (Linux
    /// controls with a `cong_control` hook): the connection then leaves cwnd
    /// alone on entering and leaving fast recovery, on ECE, and skips PRR
    /// and RFC 6582's inflation (a timeout still sets it to one segment).
    fn owns_cwnd(&self) -> bool {
        false
    }

    /// The sender starts sending again with nothing in flight after being
    /// application-limited (Linux `CA_EVENT_TX_START`).
    fn on_restart_after_idle(&mut self, _now: Time, _w: &mut Window) {}

    /// A number drawn from the run's seeded generator for this connection
    /// (its ISS), for controls that randomize (BBR's ProbeBW phase).
    fn seed(&mut self, _seed: u64) {}
}

/// The settings of a congestion control that takes none: its table in a
/// scenario may only be empty (`tcp.reno = {}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// Generates, from the one list below: [`CcKind`] (which control, with its
/// settings), [`CcName`] (by name, for scenario files and every list a user
/// sees), [`CcParams`] (the per-control tables of `[tcp]`), and [`Cc`] (the
/// state, dispatched by `match`: no boxing, no virtual call on the hot
/// path).
macro_rules! congestion_controls {
    ($( $variant:ident, $field:ident = $name:literal, $cfg:ty, $state:ty, |$c:ident, $abc:ident| $build:expr, $title:literal; )*) => {
        /// Which congestion control a connection runs, with its settings.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum CcKind {
            $( #[doc = $title] $variant($cfg), )*
        }

        /// A congestion control by name (`tcp.cc = "cubic"`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum CcName {
            $( #[doc = $title] $variant, )*
        }

        impl CcName {
            /// Every congestion control: the list scenario files, the
            /// testbed, the property tests and `netreturn list` read.
            pub const ALL: &'static [(CcName, &'static str, &'static str)] = &[ $( (CcName::$variant, $name, $title), )* ];
        }

        /// The per-control tables of `[tcp]` (`tcp.cubic = { hystart =
        /// false }`); a control without one runs with its defaults.
        #[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct CcParams {
            $( #[serde(default, rename = $name)] pub $field: Option<$cfg>, )*
        }

        impl CcParams {
            /// Control `name` with the settings of its table, or its defaults.
            pub fn kind(&self, name: CcName) -> CcKind {
                match name {
                    $( CcName::$variant => CcKind::$variant(self.$field.unwrap_or_default()), )*
                }
            }
        }

        impl CcKind {
            pub fn name(&self) -> CcName {
                match self {
                    $( CcKind::$variant(_) => CcName::$variant, )*
                }
            }

            /// Every congestion control with its default settings.
            pub fn all_defaults() -> Vec<CcKind> {
                vec![ $( CcKind::$variant(<$cfg>::default()), )* ]
            }
        }

        /// The state of a connection's congestion control.
        #[derive(Clone, Debug)]
        pub enum Cc {
            $( $variant($state), )*
        }

        impl Cc {
            pub fn new(kind: CcKind, abc_limit: u32) -> Cc {
                match kind {
                    $( CcKind::$variant($c) => {
                        let $abc = abc_limit;
                        Cc::$variant($build)
                    } )*
                }
            }
        }

        /// Calls `$e` with `$c` bound to the variant's state.
        macro_rules! dispatch {
            ($self_:ident, $c_:ident => $e_:expr) => {
                match $self_ {
                    $( Cc::$variant($c_) => $e_, )*
                }
            };
        }
    };
}

// The one list of congestion controls. Adding one is a file under
// `src/cc/` and one line here: variant, table name = scenario name, its
// settings, its state, how the state is built from them (`abc` is RFC 3465's
// L), and what it is.
congestion_controls! {
    None, none = "none", NoConfig, none::NoCc, |_c, _abc| none::NoCc,
        "no congestion window: the receiver window alone (RFC 793)";
    Reno, reno = "reno", reno::RenoConfig, reno::Reno, |c, abc| reno::Reno::with_config(abc, false, c),
        "RFC 5681, a partial ACK ends fast recovery";
    NewReno, newreno = "newreno", reno::RenoConfig, reno::Reno, |c, abc| reno::Reno::with_config(abc, true, c),
        "RFC 5681 + RFC 6582";
    Cubic, cubic = "cubic", cubic::CubicConfig, cubic::Cubic, |c, _abc| cubic::Cubic::new(c),
        "RFC 9438 with ns-3's HyStart";
    WestwoodPlus, westwood_plus = "westwood+", NoConfig, westwood::Westwood, |_c, abc| westwood::Westwood::new(abc),
        "Westwood+: ssthresh = bandwidth estimate x RTTmin on loss (Linux tcp_westwood)";
    Westwood, westwood = "westwood", westwood_original::WestwoodConfig, westwood_original::Westwood, |c, abc| westwood_original::Westwood::new(c, abc),
        "the original Westwood (Mascolo et al. 2001): per-ACK bandwidth samples, Tustin filter; ssthresh = estimate x RTTmin on loss";
    Sarbe, sarbe = "sarbe", sarbe::SarbeConfig, sarbe::Sarbe, |c, abc| sarbe::Sarbe::new(c, abc),
        "SARBE + LDED (the SARBE paper): receiver-timestamp bandwidth estimate, loss differentiation";
    Dctcp, dctcp = "dctcp", dctcp::DctcpConfig, dctcp::Dctcp, |c, abc| dctcp::Dctcp::new(c, abc, Ecn::Ect0),
        "DCTCP (RFC 8257): cwnd x (1 - alpha / 2) per window with marks, alpha the marked fraction's moving average";
    Prague, prague = "prague", dctcp::DctcpConfig, dctcp::Dctcp, |c, abc| dctcp::Dctcp::new(c, abc, Ecn::Ect1),
        "a DCTCP-like L4S sender (RFC 9331 ECT(1), DCTCP's response; not the full TCP Prague)";
    Bbr, bbr = "bbr", bbr::BbrConfig, bbr::Bbr, |c, _abc| bbr::Bbr::new(c),
        "BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00; Linux tcp_bbr, ns-3 TcpBbr): paced at gain x max delivery rate, cwnd = 2 BDP";
    Xcp, xcp = "xcp", xcp::XcpConfig, xcp::Xcp, |c, _abc| xcp::Xcp::new(c),
        "XCP's sender (Katabi et al. 2002): cwnd follows the routers' feedback; needs queue = \"xcp\"";
}

/// Other spellings scenario files may use.
const ALIASES: &[(&str, CcName)] = &[("westwoodplus", CcName::WestwoodPlus)];

impl CcName {
    pub fn name(self) -> &'static str {
        CcName::ALL.iter().find(|(c, _, _)| *c == self).map_or("?", |(_, n, _)| *n)
    }

    /// The control called `s` (its name or an alias).
    pub fn from_name(s: &str) -> Option<CcName> {
        let named = CcName::ALL.iter().find(|(_, n, _)| *n == s).map(|(c, _, _)| *c);
        named.or_else(|| ALIASES.iter().find(|(a, _)| *a == s).map(|(_, c)| *c))
    }
}

impl<'de> serde::Deserialize<'de> for CcName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CcName, D::Error> {
        let s = String::deserialize(d)?;
        CcName::from_name(&s).ok_or_else(|| {
            let names: Vec<&str> = CcName::ALL.iter().map(|(_, n, _)| *n).collect();
            serde::de::Error::custom(format!("unknown congestion control {s:?}; allowed: {}", names.join(", ")))
        })
    }
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
    fn wants_rate_samples(&self) -> bool {
        dispatch!(self, c => c.wants_rate_samples())
    }
    fn on_rate_sample(&mut self, now: Time, w: &mut Window, rs: &RateSample) -> bool {
        dispatch!(self, c => c.on_rate_sample(now, w, rs))
    }
    fn pacing_rate(&self) -> Option<f64> {
        dispatch!(self, c => c.pacing_rate())
    }
    fn owns_cwnd(&self) -> bool {
        dispatch!(self, c => c.owns_cwnd())
    }
    fn on_restart_after_idle(&mut self, now: Time, w: &mut Window) {
        dispatch!(self, c => c.on_restart_after_idle(now, w))
    }
    fn seed(&mut self, seed: u64) {
        dispatch!(self, c => c.seed(seed))
    }
    fn scalable_ect(&self) -> Option<Ecn> {
        dispatch!(self, c => c.scalable_ect())
    }
    fn ssthresh_after_ecn(&mut self, now: Time, w: &Window, in_flight: u64) -> u64 {
        dispatch!(self, c => c.ssthresh_after_ecn(now, w, in_flight))
    }
}
