//! DCTCP (RFC 8257): the sender keeps `alpha`, a moving average of the
//! fraction of its bytes that were marked CE, updated once per window of
//! data (section 3.3), and on congestion cuts cwnd by `alpha / 2` instead of
//! a half. Growth is Reno's (section 3.3: "the same as ... standard TCP").
//! A loss is answered as Reno would (section 3.5).
//!
//! With the L4S identifier ECT(1) (RFC 9331 section 4.1) the same
//! response is the DCTCP-like L4S sender of `tcp.cc = "prague"`.

use netreturn_base::{Ecn, Time};

use super::reno::{Growth, Reno, RenoConfig};
use super::{Ack, AckEvent, CongestionControl, Window};

/// `tcp.dctcp` / `tcp.prague`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DctcpConfig {
    /// The estimation gain `g` (section 3.3: 1/16).
    #[serde(default = "default_g")]
    pub g: f64,
    /// `alpha` before the first window is measured (Linux
    /// `dctcp_alpha_on_init` and ns-3 `DctcpAlphaOnInit`: 1).
    #[serde(default = "default_alpha")]
    pub initial_alpha: f64,
    /// Reno's growth under DCTCP (RFC 8257 section 3.3: "the same as ...
    /// standard TCP"): `"ns3"` (the default) RFC 5681's per ACK, as ns-3's
    /// `TcpNewReno`; `"linux"` per segment acknowledged, as Linux
    /// `tcp_dctcp.c` (`.cong_avoid = tcp_reno_cong_avoid`) and ns-3 3.44's
    /// `TcpDctcp`, which derives from `TcpLinuxReno` ([`Growth`]).
    #[serde(default)]
    pub growth: Growth,
}

fn default_g() -> f64 {
    1.0 / 16.0
}
fn default_alpha() -> f64 {
    1.0
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { g: default_g(), initial_alpha: default_alpha(), growth: Growth::Ns3 }
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: Reno,
    g: f64,
    alpha: f64,
    /// Bytes acknowledged and bytes acknowledged with ECE in the current
    /// observation window (section 3.3 `DCTCP.BytesAcked`,
    /// `DCTCP.BytesMarked`).
    acked: u64,
    marked: u64,
    /// The window ends when SND.UNA passes this (`DCTCP.WindowEnd`).
    window_end: u64,
    ect: Ecn,
}

impl Dctcp {
    pub fn new(cfg: DctcpConfig, abc_limit: u32, ect: Ecn) -> Dctcp {
        Dctcp {
            reno: Reno::with_config(abc_limit, true, RenoConfig { growth: cfg.growth }),
            g: cfg.g.clamp(0.0, 1.0),
            alpha: cfg.initial_alpha.clamp(0.0, 1.0),
            acked: 0,
            marked: 0,
            window_end: 0,
            ect,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, now: Time, w: &mut Window, ack: &Ack) {
        self.reno.on_ack(now, w, ack);
    }

    /// Section 3.3 steps 2-6: count the bytes each ACK delivers, and at the
    /// end of each window fold the marked fraction into `alpha`.
    fn on_ack_event(&mut self, _now: Time, _w: &mut Window, ev: &AckEvent) {
        self.acked += ev.delivered;
        if ev.ece {
            self.marked += ev.delivered;
        }
        if ev.snd_una <= self.window_end {
            return;
        }
        if self.acked > 0 {
            let f = self.marked as f64 / self.acked as f64;
            // Section 3.3 step 5: alpha = (1 - g) alpha + g F.
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
        }
        self.window_end = ev.snd_max;
        self.acked = 0;
        self.marked = 0;
    }

    fn scalable_ect(&self) -> Option<Ecn> {
        Some(self.ect)
    }

    /// Section 3.3 step 7: cwnd = cwnd (1 - alpha / 2), at least two
    /// segments (Linux `dctcp_ssthresh`).
    fn ssthresh_after_ecn(&mut self, _now: Time, w: &Window, _in_flight: u64) -> u64 {
        ((w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(2 * w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(delivered: u64, ece: bool, snd_una: u64, snd_max: u64) -> AckEvent {
        AckEvent { ece, snd_una, snd_max, ..AckEvent::delivering(delivered) }
    }

    #[test]
    fn alpha_moves_by_g_times_the_marked_fraction_once_per_window() {
        // RFC 8257 section 3.3: with g = 1/16 and a window where a quarter of
        // the bytes were marked, alpha = 15/16 alpha + 1/16 x 0.25.
        let mut d = Dctcp::new(DctcpConfig { initial_alpha: 0.5, ..DctcpConfig::default() }, 1, Ecn::Ect0);
        let mut w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        d.window_end = 10_000;
        for k in 1..=10u64 {
            d.on_ack_event(Time::ZERO, &mut w, &ack(1000, k <= 2 || k == 10, k * 1000, 20_000));
        }
        // Ten ACKs of 1000 B up to SND.UNA = 10 000 (not past the window
        // end yet), three of them marked; the next ACK closes the window.
        d.on_ack_event(Time::ZERO, &mut w, &ack(1000, false, 11_000, 20_000));
        let f = 3.0 / 11.0;
        assert!((d.alpha() - (15.0 / 16.0 * 0.5 + f / 16.0)).abs() < 1e-12, "{}", d.alpha());
        assert_eq!(d.window_end, 20_000);
    }

    #[test]
    fn in_congestion_avoidance_a_delayed_ack_of_two_segments_counts_two_with_linux_growth() {
        // ns-3's TcpDctcp derives from TcpLinuxReno and Linux's DCTCP uses
        // tcp_reno_cong_avoid: one segment per cwnd's worth of segments
        // acknowledged. RFC 5681 (3), ns-3's TcpNewReno: SMSS * SMSS / cwnd
        // per ACK, however many it covers.
        let grow = |growth: Growth| {
            let mut d = Dctcp::new(DctcpConfig { growth, ..DctcpConfig::default() }, 1, Ecn::Ect0);
            let mut w = Window { cwnd: 10_000, ssthresh: 5_000, mss: 1000 };
            // A window of ten segments acknowledged by five delayed ACKs.
            for k in 1..=5u64 {
                let a =
                    Ack { acked: 2000, rtt: None, srtt: None, snd_una: 2000 * k, snd_max: 20_000, cwnd_limited: true };
                d.on_ack(Time::ZERO, &mut w, &a);
            }
            w.cwnd
        };
        assert_eq!(grow(Growth::Linux), 11_000, "a segment per window of segments acknowledged");
        let ns3 = grow(Growth::Ns3);
        assert!((10_400..10_600).contains(&ns3), "half a segment per window of ACKs: {ns3}");
    }

    #[test]
    fn a_mark_cuts_cwnd_by_half_of_alpha() {
        let mut d = Dctcp::new(DctcpConfig { initial_alpha: 0.2, ..DctcpConfig::default() }, 1, Ecn::Ect0);
        let w = Window { cwnd: 100_000, ssthresh: u64::MAX, mss: 1000 };
        assert_eq!(d.ssthresh_after_ecn(Time::ZERO, &w, 100_000), 90_000);
        // With alpha = 1 (every byte marked), DCTCP halves like Reno.
        d.alpha = 1.0;
        assert_eq!(d.ssthresh_after_ecn(Time::ZERO, &w, 100_000), 50_000);
        // A loss is answered as Reno would (section 3.5), whatever alpha.
        d.alpha = 0.0;
        assert_eq!(d.ssthresh_after_loss(Time::ZERO, &w, 100_000), 50_000);
    }

    #[test]
    fn an_unmarked_run_decays_alpha_geometrically_toward_zero() {
        let mut d = Dctcp::new(DctcpConfig::default(), 1, Ecn::Ect1);
        let mut w = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000 };
        for k in 1..=40u64 {
            d.on_ack_event(Time::ZERO, &mut w, &ack(1000, false, k * 1000, k * 1000));
        }
        assert!((d.alpha() - (15.0f64 / 16.0).powi(40)).abs() < 1e-9, "{}", d.alpha());
        assert_eq!(d.scalable_ect(), Some(Ecn::Ect1));
    }
}
