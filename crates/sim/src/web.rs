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
use netreturn_tcp::TcpConfig;

use crate::scenario::{Scenario, TrafficSpec};
use crate::topology::NO_ROUTE;
use crate::world::World;

/// Arrival times of a Poisson process of `rate` per second on
/// `[from, to)`: exponential gaps of mean `1 / rate`.
pub fn poisson_arrivals(rng: &mut Rng, rate: f64, from: Time, to: Time) -> Vec<Time> {
    let mut out = vec![];
    if rate <= 0.0 {
        return out;
    }
    let mut t = from.secs_f64();
    let end = to.secs_f64();
    loop {
        t += rng.exponential(1.0 / rate);
        if t >= end {
            return out;
        }
        out.push(Time::from_secs_f64(t));
    }
}

/// A transfer size, bytes: Pareto with mean `mean_bytes` and `shape`,
/// at least one byte.
pub fn pareto_bytes(rng: &mut Rng, mean_bytes: f64, shape: f64) -> u64 {
    (rng.pareto(shape, mean_bytes).round() as u64).max(1)
}

/// Adds the transfers of `s.traffic[ti]` (a `tcp-web` entry) to the world.
pub(crate) fn add_web_flows(
    w: &mut World,
    s: &Scenario,
    ti: usize,
    cfg: &TcpConfig,
    seed: u64,
) -> Result<(), (String, String)> {
    let TrafficSpec::TcpWeb { from, to, rate, mean_size, shape, start, stop, port } = &s.traffic[ti] else {
        unreachable!("called for tcp-web entries only")
    };
    if !(*rate >= 0.0 && rate.is_finite()) {
        return Err((format!("traffic[{ti}].rate"), "new flows per second: a number >= 0".into()));
    }
    if *shape <= 1.0 {
        return Err((format!("traffic[{ti}].shape"), "a Pareto shape > 1 (the mean must exist)".into()));
    }
    let lookup = |sel: &str, field: &str| {
        w.topo
            .hosts(sel)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| (format!("traffic[{ti}].{field}"), format!("no host or group {sel:?}")))
    };
    let (srcs, dsts) = (lookup(from, "from")?, lookup(to, "to")?);
    let mut rng = Rng::derive(seed, 3_000_000 + ti as u64);
    let begin = start.map_or(Time::ZERO, |t| t.0);
    let end = stop.map_or(s.run.stop.0, |t| t.0);
    let mean_bytes = mean_size.0.bytes(netreturn_scenario::resolve::packet_bytes(s.tcp.segment_size)) as f64;
    for (k, at) in poisson_arrivals(&mut rng, *rate, begin, end).into_iter().enumerate() {
        let (src, dst) = (srcs[k % srcs.len()], dsts[k % dsts.len()]);
        if w.topo.route(src, dst) == NO_ROUTE {
            return Err((
                format!("traffic[{ti}]"),
                format!("no route from {} to {}", w.topo.nodes[src as usize], w.topo.nodes[dst as usize]),
            ));
        }
        let bytes = pareto_bytes(&mut rng, mean_bytes, *shape);
        let iss = (rng.next_u64() as u32, rng.next_u64() as u32);
        w.push_transfer(cfg, src, dst, bytes, at, *port, iss, true);
    }
    Ok(())
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
            let mut rng = Rng::derive(seed, 3);
            let at = poisson_arrivals(&mut rng, 500.0, Time::ZERO, Time::from_secs(200));
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
}
