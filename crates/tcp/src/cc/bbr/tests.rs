//! BBR's state machine against the worked behaviour of
//! draft-cardwell-iccrg-bbr-congestion-control-00, driven by synthetic rate
//! samples (one per call) on a path of fixed RTprop.

use super::*;

const MSS: u64 = 1000;
const RTT: Time = Time::from_millis(100);
const QUARTER: Time = Time::from_millis(25);

struct Path {
    bbr: Bbr,
    w: Window,
    now: Time,
    delivered: u64,
    /// What each ACK newly delivers.
    acked: u64,
}

impl Path {
    fn new(seed: u64) -> Path {
        let mut bbr = Bbr::new(BbrConfig::default());
        bbr.seed(seed);
        Path {
            bbr,
            w: Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS },
            now: Time::ZERO,
            delivered: 0,
            acked: MSS,
        }
    }

    /// An ACK `dt` after the previous one, sampling `rate` bytes/s over one
    /// RTT with `rtt` measured, leaving `in_flight` bytes in flight. Every
    /// ACK delivers what was sent after the previous one, so each starts a
    /// round. Returns whether BBR marked the flight application-limited.
    fn ack(&mut self, dt: Time, rate: f64, rtt: Time, in_flight: u64) -> bool {
        self.now += dt;
        let delivered = (rate * RTT.secs_f64()) as u64;
        let rs = RateSample {
            delivered,
            interval: Some(RTT),
            prior_delivered: self.delivered,
            is_app_limited: false,
            rtt: Some(rtt),
            losses: 0,
            acked_sacked: self.acked,
            prior_in_flight: in_flight + self.acked,
            in_flight,
            delivered_total: self.delivered + delivered,
            recovery: RecoveryState::Open,
            srtt: Some(rtt),
        };
        self.delivered += delivered;
        self.bbr.on_rate_sample(self.now, &mut self.w, &rs)
    }

    /// One round trip at `rate` with a large flight (never draining).
    fn round(&mut self, rate: f64) {
        self.ack(RTT, rate, RTT, 100 * (rate * RTT.secs_f64()) as u64);
    }

    /// Startup at `rate`, doubling from a tenth of it, until Drain.
    fn run_to_drain(&mut self, rate: f64) {
        let mut r = rate / 16.0;
        while self.bbr.mode() == Mode::Startup {
            self.round(r.min(rate));
            r *= 2.0;
            assert!(self.now < Time::from_secs(5), "never left Startup");
        }
    }

    /// Startup and Drain at `rate`, into ProbeBW.
    fn run_to_probe_bw(&mut self, rate: f64) {
        self.run_to_drain(rate);
        self.ack(RTT, rate, RTT, 0);
        assert_eq!(self.bbr.mode(), Mode::ProbeBw);
    }
}

#[test]
fn startup_exits_after_three_rounds_without_a_quarter_more_bandwidth() {
    // Section 4.3.2.2: the pipe is full after 3 rounds in which BtlBw grew
    // by less than 25 %; Startup's rounds double the rate until then.
    let mut p = Path::new(1);
    assert_eq!(p.bbr.mode(), Mode::Startup);
    assert!((p.bbr.pacing_gain() - 2.885).abs() < 1e-9);
    for k in 0..6 {
        p.round(1e5 * 2f64.powi(k));
        assert_eq!(p.bbr.mode(), Mode::Startup, "growing round {k}");
    }
    // 20 % more is below the 25 % threshold: a plateau round.
    p.round(3.2e6 * 1.2);
    p.round(3.2e6 * 1.2);
    assert_eq!(p.bbr.mode(), Mode::Startup, "two plateau rounds are not enough");
    assert!(!p.bbr.filled_pipe());
    p.round(3.2e6 * 1.2);
    assert!(p.bbr.filled_pipe());
    assert_eq!(p.bbr.mode(), Mode::Drain, "the third plateau round fills the pipe");
    // Section 4.3.3: Drain paces at the inverse of Startup's gain, and
    // Linux reports the BDP as ssthresh.
    assert!((p.bbr.pacing_gain() - 1.0 / 2.885).abs() < 1e-9);
    // The BDP plus three send quanta of about 1 ms at the pacing rate.
    let bdp = (3.2e6 * 1.2 * RTT.secs_f64()) as u64;
    assert!(p.w.ssthresh >= bdp && p.w.ssthresh <= bdp + 40 * MSS, "{} vs {bdp}", p.w.ssthresh);
}

#[test]
fn drain_ends_when_the_flight_is_down_to_one_bdp() {
    let rate = 1.25e6; // 10 Mb/s: a 125 kB BDP at 100 ms.
    let mut p = Path::new(2);
    p.run_to_drain(rate);
    let bdp = p.bbr.inflight(p.bbr.max_bw(), 1.0);
    assert!((125_000..140_000).contains(&bdp), "BDP with its quanta {bdp}");
    p.ack(QUARTER, rate, RTT, 2 * bdp);
    p.ack(QUARTER, rate, RTT, bdp + MSS);
    assert_eq!(p.bbr.mode(), Mode::Drain, "still above one BDP");
    p.ack(QUARTER, rate, RTT, bdp);
    assert_eq!(p.bbr.mode(), Mode::ProbeBw);
    assert_ne!(p.bbr.pacing_gain(), 0.75, "ProbeBW never starts in its draining phase");
}

#[test]
fn probe_bw_moves_to_the_next_gain_after_each_min_rtt() {
    // Section 4.3.4.3: 5/4, 3/4, then six phases of 1, each about RTprop
    // long (here the flight is always large enough for the probing phase to
    // end on time, and never low enough for the draining one to end early).
    let rate = 1.25e6;
    let mut p = Path::new(3);
    p.run_to_probe_bw(rate);
    let probing = p.bbr.inflight(p.bbr.max_bw(), 1.25);
    let mut phases = vec![(p.bbr.cycle_index, p.now)];
    while phases.len() < 17 {
        p.ack(QUARTER, rate, RTT, probing);
        let i = p.bbr.cycle_index;
        if i != phases.last().unwrap().0 {
            assert_eq!(i, (phases.last().unwrap().0 + 1) % 8, "phases in order");
            phases.push((i, p.now));
        }
        assert_eq!(p.bbr.pacing_gain(), PACING_GAINS[i]);
        assert_eq!(p.bbr.mode(), Mode::ProbeBw);
    }
    for pair in phases[1..].windows(2) {
        let len = pair[1].1 - pair[0].1;
        assert!(len > RTT && len <= RTT + QUARTER, "phase {} lasted {len}", pair[0].0);
    }
    // The cwnd in ProbeBW grows by what each ACK delivers up to 2 BDP
    // plus the quanta (section 4.2.3.2), and no further.
    p.acked = 100 * MSS;
    for _ in 0..8 {
        p.ack(QUARTER, rate, RTT, probing);
        assert!(p.w.cwnd <= p.bbr.inflight(p.bbr.max_bw(), 2.0));
    }
    assert_eq!(p.w.cwnd, p.bbr.inflight(p.bbr.max_bw(), 2.0));
}

#[test]
fn probe_bw_starts_in_a_seeded_random_phase_that_is_never_the_draining_one() {
    let mut seen = [false; 8];
    for seed in 0..64 {
        let mut b = Bbr::new(BbrConfig::default());
        b.seed(seed);
        b.enter_probe_bw();
        assert_ne!(b.cycle_index, 1, "seed {seed}");
        seen[b.cycle_index] = true;
        let mut again = Bbr::new(BbrConfig::default());
        again.seed(seed);
        again.enter_probe_bw();
        assert_eq!(again.cycle_index, b.cycle_index, "the same seed, the same phase");
    }
    assert_eq!(seen.iter().filter(|s| **s).count(), 7, "{seen:?}");
}

#[test]
fn probe_rtt_comes_after_10_s_without_a_lower_rtt_and_lasts_200_ms() {
    // Section 4.3.5: when RTprop has not been lowered for 10 s, cwnd drops
    // to 4 segments; once the flight is that small it stays for 200 ms
    // (and a round), then the old cwnd comes back.
    let rate = 1.25e6;
    let mut p = Path::new(4);
    p.run_to_probe_bw(rate);
    let stamp = p.bbr.min_rtt_stamp;
    let bdp = p.bbr.inflight(rate, 1.0);
    // RTT samples that never go below RTprop (a standing queue adds 10 ms).
    while p.now + RTT <= stamp + MIN_RTT_WINDOW {
        assert!(!p.ack(RTT, rate, RTT + Time::from_millis(10), bdp));
        assert_ne!(p.bbr.mode(), Mode::ProbeRtt, "at {}", p.now);
    }
    let cwnd = p.w.cwnd;
    assert!(p.ack(RTT, rate, RTT + Time::from_millis(10), bdp), "ProbeRTT marks the flight app-limited");
    assert_eq!(p.bbr.mode(), Mode::ProbeRtt);
    assert_eq!(p.w.cwnd, 4 * MSS);
    // The flight reaches 4 segments: 200 ms from here.
    p.ack(Time::from_millis(10), rate, RTT, 4 * MSS);
    let low = p.now;
    while p.now <= low + PROBE_RTT_TIME {
        assert_eq!(p.bbr.mode(), Mode::ProbeRtt, "at {} after {}", p.now, low);
        p.ack(Time::from_millis(50), rate, RTT, 4 * MSS);
    }
    assert_eq!(p.bbr.mode(), Mode::ProbeBw, "left at the first ACK past 200 ms");
    assert!(p.w.cwnd >= cwnd, "cwnd restored: {} < {cwnd}", p.w.cwnd);
    assert_eq!(p.bbr.min_rtt_stamp, p.now, "RTprop fresh for another 10 s");
}

#[test]
fn the_bandwidth_filter_forgets_a_peak_after_10_rounds() {
    // Section 4.1.1.2: BtlBw is the maximum over the last 10 round trips.
    let mut f = MaxFilter::default();
    f.update(BW_ROUNDS, 0, 100.0);
    for t in 1..=BW_ROUNDS {
        assert_eq!(f.update(BW_ROUNDS, t, 50.0 + t as f64), 100.0, "round {t}");
    }
    assert_eq!(f.update(BW_ROUNDS, BW_ROUNDS + 1, 40.0), 60.0, "the peak aged out; the best since remains");
    // Through BBR: a burst measured once, then a lower steady rate.
    let mut p = Path::new(5);
    p.run_to_probe_bw(1e6);
    p.round(4e6);
    assert_eq!(p.bbr.max_bw(), 4e6);
    for _ in 0..BW_ROUNDS {
        p.round(1e6);
    }
    assert_eq!(p.bbr.max_bw(), 4e6, "ten rounds later it still counts");
    p.round(1e6);
    assert_eq!(p.bbr.max_bw(), 1e6);
}

#[test]
fn fast_recovery_conserves_packets_then_restores_the_window() {
    // Section 4.2.3.4: on entering recovery cwnd = flight + delivered, the
    // losses come off it, and leaving recovery restores the cwnd before.
    let rate = 1.25e6;
    let mut p = Path::new(6);
    p.run_to_probe_bw(rate);
    let before = p.w.cwnd;
    p.bbr.ssthresh_after_loss(p.now, &p.w, before);
    let mut rs = RateSample {
        delivered: 0,
        interval: None,
        prior_delivered: p.delivered,
        is_app_limited: false,
        rtt: None,
        losses: MSS,
        acked_sacked: 2 * MSS,
        prior_in_flight: 60 * MSS,
        in_flight: 50 * MSS,
        delivered_total: p.delivered,
        recovery: RecoveryState::Recovery,
        srtt: Some(RTT),
    };
    p.bbr.on_rate_sample(p.now, &mut p.w, &rs);
    assert_eq!(p.w.cwnd, 52 * MSS, "flight + delivered");
    rs.losses = 0;
    rs.in_flight = 48 * MSS;
    rs.acked_sacked = MSS;
    p.bbr.on_rate_sample(p.now, &mut p.w, &rs);
    assert_eq!(p.w.cwnd, 52 * MSS, "never below flight + delivered in the first round");
    rs.recovery = RecoveryState::Open;
    p.bbr.on_rate_sample(p.now, &mut p.w, &rs);
    assert!(p.w.cwnd >= before, "restored {} < {before}", p.w.cwnd);
    assert_eq!(p.bbr.mode(), Mode::ProbeBw, "a loss does not change the state");
}
