//! Short web-like TCP transfers (`tcp-web` traffic; SPEC.md 2.7 and 5.3):
//! the XCP paper's mice, reused by seed 002 section 3.3. New transfers
//! arrive as a Poisson process; their sizes are Pareto with mean 30 packets
//! and shape 1.35. Each gets its own response time (its FCT), and is
//! reported apart from the long-lived FTP flows.
//!
//! All draws come from a generator derived from the run's seed and the
//! traffic entry's index, so adding web traffic leaves every other flow's
//! draws unchanged.

use netreturn_base::{Rng, Time};

/// The arrival times of a Poisson process of `rate` per second on
/// `[from, to)`, one at a time: exponential gaps of mean `1 / rate`, summed
/// in seconds (`f64`) from `from`. The gap that passes `to` is drawn too,
/// and nothing after it. A `rate` of zero or less has no arrival and draws
/// nothing.
#[derive(Clone, Debug)]
pub struct PoissonArrivals {
    rng: Rng,
    mean_gap: f64,
    t: f64,
    end: f64,
    done: bool,
}

impl PoissonArrivals {
    pub fn new(rng: Rng, rate: f64, from: Time, to: Time) -> PoissonArrivals {
        PoissonArrivals { rng, mean_gap: 1.0 / rate, t: from.secs_f64(), end: to.secs_f64(), done: rate <= 0.0 }
    }
}

impl Iterator for PoissonArrivals {
    type Item = Time;

    fn next(&mut self) -> Option<Time> {
        if self.done {
            return None;
        }
        self.t += self.rng.exponential(self.mean_gap);
        if self.t >= self.end {
            self.done = true;
            return None;
        }
        Some(Time::from_secs_f64(self.t))
    }
}

/// A transfer size, bytes: Pareto with mean `mean_bytes` and `shape`,
/// at least one byte.
pub fn pareto_bytes(rng: &mut Rng, mean_bytes: f64, shape: f64) -> u64 {
    (rng.pareto(shape, mean_bytes).round() as u64).max(1)
}

/// One web transfer: its hosts (node indices), size in bytes and the
/// initial sequence numbers of its client and server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub iss: (u32, u32),
}

/// The transfers of one `tcp-web` entry, made one at a time as the run
/// reaches their arrival (issue 23: drawing them all at load held every
/// transfer's record from the start, and a flood of them did not fit).
///
/// The draws, and their order, are those of drawing everything at load:
/// from the entry's generator, every arrival gap first, then each
/// transfer's size and ISS in arrival order. So the source keeps two
/// copies of the generator: one at the start, from which the gaps are
/// drawn again as the run goes ([`WebSource::next_arrival`]), and one past
/// every gap (the arrivals counted once at load, nothing kept), from which
/// the sizes and ISS come ([`WebSource::transfer`]). Transfer `k` goes from
/// `srcs[k % len]` to `dsts[k % len]`.
#[derive(Clone, Debug)]
pub struct WebSource {
    arrivals: PoissonArrivals,
    draws: Rng,
    total: u64,
    made: u64,
    srcs: Vec<u32>,
    dsts: Vec<u32>,
    mean_bytes: f64,
    shape: f64,
}

impl WebSource {
    /// The source of a Poisson process of `rate` per second on `[from, to)`
    /// drawn from `rng`, sizes Pareto of mean `mean_bytes` and `shape`,
    /// between hosts `srcs` and `dsts` (neither empty).
    pub fn new(
        rng: Rng,
        rate: f64,
        (from, to): (Time, Time),
        (srcs, dsts): (Vec<u32>, Vec<u32>),
        mean_bytes: f64,
        shape: f64,
    ) -> WebSource {
        assert!(!srcs.is_empty() && !dsts.is_empty(), "a web source needs hosts at both ends");
        let arrivals = PoissonArrivals::new(rng, rate, from, to);
        let mut count = arrivals.clone();
        let total = count.by_ref().count() as u64;
        WebSource { arrivals, draws: count.rng, total, made: 0, srcs, dsts, mean_bytes, shape }
    }

    /// Arrivals in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Transfers not made yet.
    pub fn remaining(&self) -> u64 {
        self.total - self.made
    }

    /// The time of the next arrival, `None` after the last.
    pub fn next_arrival(&mut self) -> Option<Time> {
        self.arrivals.next()
    }

    /// The next transfer, in arrival order (one per arrival).
    pub fn transfer(&mut self) -> Transfer {
        let k = self.made as usize;
        assert!(self.made < self.total, "transfer {k} of {}", self.total);
        self.made += 1;
        let bytes = pareto_bytes(&mut self.draws, self.mean_bytes, self.shape);
        let iss = (self.draws.next_u64() as u32, self.draws.next_u64() as u32);
        Transfer { src: self.srcs[k % self.srcs.len()], dst: self.dsts[k % self.dsts.len()], bytes, iss }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kolmogorov-Smirnov statistic of a sample against a CDF.
    fn ks(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_unstable_by(f64::total_cmp);
        let n = xs.len() as f64;
        xs.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
            })
            .fold(0.0, f64::max)
    }

    /// Runs a Kolmogorov-Smirnov test at the 5 % level (critical value
    /// 1.358 / sqrt n for large n) on samples from 10 seeds; returns how
    /// many rejected. Under the null hypothesis that count is Binomial(10,
    /// 0.05): more than 3 has probability 0.001.
    fn rejections(sample: impl Fn(u64) -> Vec<f64>, cdf: impl Fn(f64) -> f64 + Copy) -> usize {
        (0..10u64)
            .filter(|&seed| {
                let xs = sample(seed);
                let n = xs.len();
                ks(xs, cdf) > 1.358 / (n as f64).sqrt()
            })
            .count()
    }

    #[test]
    fn web_arrivals_are_a_poisson_process_by_a_kolmogorov_smirnov_test() {
        // Gaps of a Poisson process of rate 500/s are exponential of mean
        // 2 ms; the count over 200 s is 100_000 +- a few sqrt(100_000).
        let gaps = |seed| {
            let at: Vec<Time> =
                PoissonArrivals::new(Rng::derive(seed, 3), 500.0, Time::ZERO, Time::from_secs(200)).collect();
            assert!((at.len() as f64 - 100_000.0).abs() < 4.0 * 100_000f64.sqrt(), "{} arrivals", at.len());
            assert!(at.iter().all(|t| *t < Time::from_secs(200)));
            at.windows(2).map(|p| (p[1] - p[0]).secs_f64()).collect()
        };
        let r = rejections(gaps, |x| 1.0 - (-500.0 * x).exp());
        assert!(r <= 3, "{r} of 10 samples rejected as exponential");
    }

    #[test]
    fn web_sizes_are_pareto_with_mean_30_packets_and_shape_1_35_by_a_kolmogorov_smirnov_test() {
        // XCP paper section 5: Pareto, mean 30 packets, shape 1.35, so the
        // scale is 30 * 0.35 / 1.35 = 7.78 packets; CDF 1 - (scale / x)^1.35.
        let mss = 1000.0;
        let sizes = |seed| {
            let mut rng = Rng::derive(seed, 4);
            (0..100_000).map(|_| pareto_bytes(&mut rng, 30.0 * mss, 1.35) as f64).collect::<Vec<f64>>()
        };
        let scale = 30.0 * mss * 0.35 / 1.35;
        let r = rejections(sizes, |x| if x < scale { 0.0 } else { 1.0 - (scale / x).powf(1.35) });
        assert!(r <= 3, "{r} of 10 samples rejected as Pareto");
        let xs = sizes(0);
        // The median is scale * 2^(1/1.35) = 12.8 packets; the mean of a
        // shape-1.35 sample converges slowly, so only the median is checked.
        let mut s = xs;
        s.sort_unstable_by(f64::total_cmp);
        let median = s[s.len() / 2] / mss;
        assert!((median - 7.778 * 2f64.powf(1.0 / 1.35)).abs() < 0.3, "median {median}");
    }

    /// The transfers as they were made before issue 23, all at load: every
    /// arrival gap first (the eager `poisson_arrivals`, kept here as the
    /// reference), then each transfer's size and ISS.
    fn eager(seed: u64, rate: f64, from: Time, to: Time, hosts: (usize, usize)) -> Vec<(Time, Transfer)> {
        let mut rng = Rng::derive(seed, 3_000_000);
        let mut at = vec![];
        let mut t = from.secs_f64();
        loop {
            t += rng.exponential(1.0 / rate);
            if t >= to.secs_f64() {
                break;
            }
            at.push(Time::from_secs_f64(t));
        }
        at.into_iter()
            .enumerate()
            .map(|(k, a)| {
                let bytes = pareto_bytes(&mut rng, 28_440.0, 1.35);
                let iss = (rng.next_u64() as u32, rng.next_u64() as u32);
                (a, Transfer { src: (k % hosts.0) as u32, dst: (100 + k % hosts.1) as u32, bytes, iss })
            })
            .collect()
    }

    #[test]
    fn the_lazy_web_source_makes_exactly_the_transfers_drawn_all_at_load() {
        for (seed, rate, from, to, hosts) in [
            (1, 100.0, Time::from_secs(5), Time::from_secs(60), (50, 50)),
            (2, 750.0, Time::ZERO, Time::from_secs(20), (3, 7)),
            (3, 0.5, Time::from_secs(1), Time::from_secs(2), (1, 1)),
        ] {
            let want = eager(seed, rate, from, to, hosts);
            let srcs = (0..hosts.0 as u32).collect();
            let dsts = (100..100 + hosts.1 as u32).collect();
            let mut w = WebSource::new(Rng::derive(seed, 3_000_000), rate, (from, to), (srcs, dsts), 28_440.0, 1.35);
            assert_eq!(w.total(), want.len() as u64, "seed {seed}");
            let mut got = vec![];
            while let Some(at) = w.next_arrival() {
                got.push((at, w.transfer()));
            }
            assert_eq!(got, want, "seed {seed}, rate {rate}");
            assert_eq!(w.next_arrival(), None, "no arrival after the last");
        }
    }
}
