//! Summary statistics of a run's samples (SPEC.md section 4): the papers'
//! metrics as pure functions tested on hand-computed cases, quantiles as
//! numpy computes them, and [`DurationSummary`], the RTT samples summarized
//! as they come. Apart from [`crate::metrics`], which assembles a run's
//! result from a world, so that the world's recorder can hold a summary
//! without the two modules needing each other.

use netreturn_base::Time;

/// TCP efficiency (seed 000 eq. 11): share of transmitted bytes that were
/// not retransmissions, percent. A flow that sent nothing is 100 % efficient.
pub fn efficiency_pct(transmitted: u64, retransmitted: u64) -> f64 {
    if transmitted == 0 {
        100.0
    } else {
        (transmitted - retransmitted.min(transmitted)) as f64 / transmitted as f64 * 100.0
    }
}

/// Mean loss ratio (seed 000 eq. 13): lost / (received + lost), percent.
pub fn loss_ratio_pct(received: u64, lost: u64) -> f64 {
    if received + lost == 0 {
        0.0
    } else {
        lost as f64 / (received + lost) as f64 * 100.0
    }
}

/// Jain's fairness index (seed 000 eq. 12): (sum x)^2 / (n sum x^2).
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || s2 == 0.0 {
        f64::NAN
    } else {
        s * s / (n * s2)
    }
}

/// Robustness index (seed 002): std(q) / min(mean q, B - mean q). Small is
/// good: the queue stays away from both empty and full.
pub fn robustness_index(mean: f64, std: f64, capacity: f64) -> f64 {
    let d = mean.min(capacity - mean);
    if d <= 0.0 {
        f64::INFINITY
    } else {
        std / d
    }
}

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

pub fn std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// The values of a sample that are not NaN, sorted, for [`quantile_sorted`].
pub fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// Quantile by linear interpolation between order statistics (numpy's
/// default), on an unsorted sample.
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    quantiles(xs, &[q])[0]
}

/// [`quantile`] on a sample already [`sorted`].
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let (lo, hi, frac) = interpolation_points(v.len(), q);
    interpolate(v[lo], v[hi], frac)
}

/// The order statistics `lo` and `hi` that quantile `q` of `n` values lies
/// between, and how far between (numpy's linear method).
fn interpolation_points(n: usize, q: f64) -> (usize, usize, f64) {
    let pos = q * (n - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    (lo, hi, pos - lo as f64)
}

fn interpolate(lo: f64, hi: f64, frac: f64) -> f64 {
    lo + (hi - lo) * frac
}

/// Several [`quantile`]s of one unsorted sample, `qs` in ascending order,
/// equal bit for bit to [`quantile_sorted`] on the [`sorted`] sample.
///
/// Only the few order statistics needed are selected (expected linear time
/// each) instead of sorting the sample: the RTT sample of a run has ~10^5
/// values, and sorting them took ~4 % of a whole simulation. Values equal
/// under `total_cmp` are the same bits, so which copy lands where does not
/// matter.
pub fn quantiles(xs: &[f64], qs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return vec![f64::NAN; qs.len()];
    }
    // After selecting order statistic k, v[..k] <= v[k] <= v[k+1..]: the
    // next, larger, statistics are searched for in v[k..] only.
    let mut from = 0;
    qs.iter()
        .map(|&q| {
            let (lo, hi, frac) = interpolation_points(v.len(), q);
            assert!(lo >= from, "quantiles must be asked in ascending order");
            let (_, &mut at_lo, above) = v[from..].select_nth_unstable_by(lo - from, f64::total_cmp);
            let at_hi = if hi == lo { at_lo } else { *above.iter().min_by(|a, b| a.total_cmp(b)).expect("hi < len") };
            from = lo;
            interpolate(at_lo, at_hi, frac)
        })
        .collect()
}

/// A sample of durations summarized as it comes, in memory bounded by the
/// range of its values rather than their number: the run's RTT samples
/// (every active flow every sample interval, 157 MB of a 223 MB peak at
/// 100x scale when they were kept; now under 1 MB).
///
/// - count, mean and maximum are exact (the sum is taken in arrival order,
///   as [`mean`] over the kept sample did);
/// - the standard deviation is Welford's running form (Knuth, TAOCP vol. 2,
///   4.2.2), equal to the two-pass [`std_dev`] to rounding;
/// - quantiles interpolate between order statistics as [`quantile`] does,
///   each order statistic known to its bucket of a log-linear histogram:
///   exact below 4.096 us, and within 2^-13 of the value above (the
///   bucket's middle; a bucket spans 2^-12 of its lower bound).
#[derive(Clone, Debug, Default)]
pub struct DurationSummary {
    n: u64,
    sum_ms: f64,
    welford_mean: f64,
    welford_m2: f64,
    max: u64,
    counts: Vec<u64>,
}

/// Sub-buckets per power of two of the histogram: 2^12.
const SUB_BITS: u32 = 12;

impl DurationSummary {
    /// The histogram bucket of `ns`: values below 2^12 ns have one each;
    /// above, a power of two [2^e, 2^(e+1)) is split into 2^12 buckets.
    fn bucket(ns: u64) -> usize {
        if ns < 1 << SUB_BITS {
            return ns as usize;
        }
        let shift = 63 - ns.leading_zeros() - SUB_BITS;
        (((shift + 1) as usize) << SUB_BITS) + ((ns >> shift) as usize - (1 << SUB_BITS))
    }

    /// The middle of bucket `b`'s values, ns.
    fn middle(b: usize) -> f64 {
        let sub = 1usize << SUB_BITS;
        if b < sub {
            return b as f64;
        }
        let shift = (b >> SUB_BITS) - 1;
        let low = ((b & (sub - 1)) + sub) as u64;
        (low << shift) as f64 + ((1u64 << shift) - 1) as f64 / 2.0
    }

    pub fn push(&mut self, d: Time) {
        let ns = d.nanos();
        let ms = d.millis_f64();
        self.n += 1;
        self.sum_ms += ms;
        let delta = ms - self.welford_mean;
        self.welford_mean += delta / self.n as f64;
        self.welford_m2 += delta * (ms - self.welford_mean);
        self.max = self.max.max(ns);
        let b = Self::bucket(ns);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Bytes held (the histogram reaches up to the largest value's bucket:
    /// 0.5 MB for values near 100 ms, whatever their number).
    pub fn bytes(&self) -> usize {
        self.counts.capacity() * 8
    }

    pub fn mean_ms(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum_ms / self.n as f64
        }
    }

    pub fn std_ms(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.welford_m2 / (self.n - 1) as f64).sqrt()
        }
    }

    pub fn max_ms(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            Time(self.max).millis_f64()
        }
    }

    /// Quantiles, `qs` ascending, ms (see the type's description).
    pub fn quantiles_ms(&self, qs: &[f64]) -> Vec<f64> {
        if self.n == 0 {
            return vec![f64::NAN; qs.len()];
        }
        // The value of order statistic k: the bucket where the running
        // count passes k (a scan of the histogram each, at the end of a run).
        let at = |k: u64| -> f64 {
            let (mut b, mut below) = (0, 0u64);
            while below + self.counts[b] <= k {
                below += self.counts[b];
                b += 1;
            }
            if k + 1 == self.n {
                self.max as f64
            } else {
                Self::middle(b)
            }
        };
        qs.iter()
            .map(|&q| {
                let (lo, hi, frac) = interpolation_points(self.n as usize, q);
                let (vlo, vhi) = (at(lo as u64), at(hi as u64));
                interpolate(vlo, vhi, frac) * 1e-6
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Durations spread like RTTs (1 us to 2 s, clustered), with ties.
    fn durations(n: usize, seed: u64) -> Vec<Time> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = x >> 33;
                Time(match r % 4 {
                    0 => 1_000 + r % 5_000,
                    1 => 100_000_000 + r % 3_000_000,
                    2 => 100_000_000,
                    _ => r % 2_000_000_000,
                })
            })
            .collect()
    }

    #[test]
    fn a_duration_summary_keeps_count_mean_and_maximum_exact_and_quantiles_within_their_bucket() {
        let qs = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0];
        for (n, seed) in [(1, 1), (2, 2), (3, 3), (17, 4), (1000, 5), (20_000, 6)] {
            let d = durations(n, seed);
            let ms: Vec<f64> = d.iter().map(|t| t.millis_f64()).collect();
            let mut s = DurationSummary::default();
            d.iter().for_each(|&t| s.push(t));
            assert_eq!(s.len(), n as u64);
            assert_eq!(s.mean_ms().to_bits(), mean(&ms).to_bits(), "the same sum in the same order");
            assert_eq!(s.max_ms(), quantile(&ms, 1.0));
            let sd = std_dev(&ms);
            assert!((s.std_ms() - sd).abs() <= 1e-9 * sd.max(1.0), "{} vs {sd}", s.std_ms());
            for (q, got) in qs.iter().zip(s.quantiles_ms(&qs)) {
                let exact = quantile(&ms, *q);
                // Each order statistic within 2^-13 of itself (plus the
                // rounding of ns to ms); exact below 4.096 us.
                assert!((got - exact).abs() <= exact * 2f64.powi(-13) + 1e-9, "n={n} q={q}: {got} vs {exact}");
            }
        }
    }

    #[test]
    fn a_duration_summary_is_exact_for_values_below_four_microseconds() {
        let d: Vec<Time> = [5u64, 4095, 17, 17, 300, 4000].iter().map(|&n| Time(n)).collect();
        let ms: Vec<f64> = d.iter().map(|t| t.millis_f64()).collect();
        let mut s = DurationSummary::default();
        d.iter().for_each(|&t| s.push(t));
        let qs = [0.0, 0.25, 0.5, 0.75, 1.0];
        for (q, got) in qs.iter().zip(s.quantiles_ms(&qs)) {
            assert!((got - quantile(&ms, *q)).abs() < 1e-15, "q={q}");
        }
    }

    #[test]
    fn a_duration_summary_holds_the_same_memory_for_a_thousand_or_a_million_samples() {
        let (mut a, mut b) = (DurationSummary::default(), DurationSummary::default());
        for t in durations(1_000, 7) {
            a.push(t);
        }
        for t in durations(1_000_000, 7) {
            b.push(t);
        }
        assert!(b.bytes() <= a.bytes().max(1) * 2, "{} vs {}", b.bytes(), a.bytes());
        assert!(b.bytes() < 2_000_000, "{}", b.bytes());
    }

    #[test]
    fn an_empty_duration_summary_reports_nan() {
        let s = DurationSummary::default();
        assert!(s.mean_ms().is_nan() && s.max_ms().is_nan());
        assert!(s.quantiles_ms(&[0.5])[0].is_nan());
        assert_eq!(s.std_ms(), 0.0);
    }

    #[test]
    fn efficiency_counts_retransmitted_bytes_against_transmitted() {
        // 1000 bytes sent of which 50 were retransmissions: 95 %.
        assert_eq!(efficiency_pct(1000, 50), 95.0);
        assert_eq!(efficiency_pct(0, 0), 100.0);
    }

    #[test]
    fn loss_ratio_is_lost_over_received_plus_lost() {
        // 3 lost, 997 received: 0.3 %.
        assert!((loss_ratio_pct(997, 3) - 0.3).abs() < 1e-12);
        assert_eq!(loss_ratio_pct(0, 0), 0.0);
    }

    #[test]
    fn jain_index_of_equal_shares_is_one_and_of_one_hog_is_one_over_n() {
        assert!((jain(&[2.0, 2.0, 2.0, 2.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[8.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1+2+3)^2 / (3 (1+4+9)) = 36/42.
        assert!((jain(&[1.0, 2.0, 3.0]) - 36.0 / 42.0).abs() < 1e-12);
    }

    #[test]
    fn robustness_index_uses_the_nearer_of_empty_and_full() {
        // Mean 30 of 100 with std 6: 6 / 30.
        assert!((robustness_index(30.0, 6.0, 100.0) - 0.2).abs() < 1e-12);
        // Mean 80 of 100: the distance to full (20) counts.
        assert!((robustness_index(80.0, 6.0, 100.0) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&xs, 0.5), 2.5);
        assert_eq!(quantile(&xs, 0.25), 1.75);
        assert_eq!(quantile(&xs, 1.0), 4.0);
    }

    #[test]
    fn quantiles_by_selection_equal_those_of_the_sorted_sample() {
        let qs = [0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0];
        let mut x = 7u64;
        for n in 0..300 {
            // Few distinct values (ties), a NaN now and then, both zeros.
            let xs: Vec<f64> = (0..n)
                .map(|i| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    match (x >> 60, i % 5) {
                        (0, _) => f64::NAN,
                        (1, _) => -0.0,
                        (_, 0) => 0.0,
                        _ => ((x >> 33) % 17) as f64 * 0.37 - 2.0,
                    }
                })
                .collect();
            let s = sorted(&xs);
            let want: Vec<u64> = qs.iter().map(|&q| quantile_sorted(&s, q).to_bits()).collect();
            let got: Vec<u64> = quantiles(&xs, &qs).iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "n = {n}");
        }
    }
}
