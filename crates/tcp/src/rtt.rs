//! Retransmission timer computation, RFC 6298.

use netreturn_base::Time;

/// SRTT/RTTVAR estimator and the RTO derived from it (RFC 6298 section 2),
/// with exponential backoff (section 5.5).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    last: Option<Time>,
    /// RTO before backoff, already bounded by min and max.
    base_rto: Time,
    /// Number of doublings applied since the last valid sample.
    backoff: u32,
    min_rto: Time,
    max_rto: Time,
    granularity: Time,
}

impl RttEstimator {
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time, granularity: Time) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: Time::ZERO,
            last: None,
            // RFC 6298 (2.1): until a measurement is made, RTO = 1 s.
            base_rto: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
        }
    }

    /// Feeds one RTT measurement R.
    pub fn sample(&mut self, r: Time) {
        self.last = Some(r);
        match self.srtt {
            None => {
                // RFC 6298 (2.2): SRTT <- R, RTTVAR <- R/2.
                self.srtt = Some(r);
                self.rttvar = Time(r.0 / 2);
            }
            Some(srtt) => {
                // RFC 6298 (2.3), alpha = 1/8, beta = 1/4:
                // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|, then
                // SRTT <- 7/8 SRTT + 1/8 R'.
                let err = srtt.0.abs_diff(r.0);
                self.rttvar = Time((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Time((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        // RFC 6298 (2.2)/(2.3): RTO <- SRTT + max(G, K*RTTVAR), K = 4,
        // (2.4) rounded up to the minimum, (2.5) capped at the maximum.
        let rto = srtt + self.granularity.max(Time(4 * self.rttvar.0));
        self.base_rto = rto.max(self.min_rto).min(self.max_rto);
        // A new sample ends the backoff (RFC 6298 section 5, note after 5.7).
        self.backoff = 0;
    }

    /// RFC 6298 (5.5): RTO <- RTO * 2 after a timeout, up to the maximum.
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    /// The current timeout, including backoff.
    pub fn rto(&self) -> Time {
        self.base_rto.backed_off(self.backoff, self.max_rto)
    }

    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }
    pub fn rttvar(&self) -> Time {
        self.rttvar
    }
    pub fn last(&self) -> Option<Time> {
        self.last
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(min_rto_ms: u64) -> RttEstimator {
        RttEstimator::new(Time::from_secs(1), Time::from_millis(min_rto_ms), Time::from_secs(60), Time::from_millis(1))
    }

    #[test]
    fn rto_follows_rfc6298_on_a_hand_computed_sequence() {
        // Guards the SRTT/RTTVAR update order (RTTVAR uses the old SRTT).
        let mut e = est(0);
        assert_eq!(e.rto(), Time::from_secs(1), "RFC 6298 (2.1) initial RTO");
        // First sample R = 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50.
        e.sample(Time::from_millis(100));
        assert_eq!(e.srtt(), Some(Time::from_millis(100)));
        assert_eq!(e.rttvar(), Time::from_millis(50));
        assert_eq!(e.rto(), Time::from_millis(300));
        // R' = 200 ms: RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 25 = 112.5;
        // RTO = 112.5 + 250 = 362.5 ms.
        e.sample(Time::from_millis(200));
        assert_eq!(e.rttvar(), Time::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Time::from_micros(112_500)));
        assert_eq!(e.rto(), Time::from_micros(362_500));
        // R' = 112.5 ms: RTTVAR = 3/4*62.5 = 46.875; SRTT unchanged;
        // RTO = 112.5 + 187.5 = 300 ms.
        e.sample(Time::from_micros(112_500));
        assert_eq!(e.rttvar(), Time::from_micros(46_875));
        assert_eq!(e.rto(), Time::from_millis(300));
    }

    #[test]
    fn rto_is_bounded_below_by_min_rto_and_by_granularity() {
        let mut e = est(1000);
        e.sample(Time::from_millis(10));
        assert_eq!(e.rto(), Time::from_secs(1), "RFC 6298 (2.4) minimum 1 s");
        let mut e = est(0);
        // Identical samples drive RTTVAR toward 0; G = 1 ms then dominates.
        for _ in 0..200 {
            e.sample(Time::from_millis(10));
        }
        assert_eq!(e.rto(), Time::from_millis(11));
    }

    #[test]
    fn backoff_doubles_until_the_maximum_and_a_sample_resets_it() {
        let mut e = est(1000);
        e.sample(Time::from_millis(10));
        let mut expect = 1u64;
        for _ in 0..10 {
            assert_eq!(e.rto(), Time::from_secs(expect.min(60)));
            e.back_off();
            expect *= 2;
        }
        assert_eq!(e.rto(), Time::from_secs(60));
        e.sample(Time::from_millis(10));
        assert_eq!(e.rto(), Time::from_secs(1));
    }
}
