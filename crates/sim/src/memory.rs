//! A memory guard: a scenario whose estimate exceeds the machine is refused
//! before it starts, and a run that grows past the limit anyway is stopped
//! (issue 11: `--set flows=100000000` used to grow to 6 GB in 30 s without
//! a word).

use crate::scenario::{Scenario, ScenarioError, TopologySpec, TrafficSpec};

/// Where the limit comes from, for messages.
pub const LIMIT_SOURCE: &str = "NETRETURN_MAX_MEMORY, else the machine's MemAvailable";

/// `NETRETURN_MAX_MEMORY` ("8GB", "500MB", "1GiB") through the one unit
/// parser: `Ok(None)` when unset, an error naming the variable when it does
/// not parse (it was once ignored, and a run with "1GiB" used 7 GB).
pub fn env_limit() -> Result<Option<u64>, String> {
    std::env::var("NETRETURN_MAX_MEMORY").ok().map(|v| parse_limit(&v)).transpose()
}

/// A value of `NETRETURN_MAX_MEMORY`, in bytes.
pub fn parse_limit(v: &str) -> Result<u64, String> {
    match netreturn_base::units::parse_size(v) {
        Ok(netreturn_base::Size::Bytes(b)) if b > 0 => Ok(b),
        Ok(_) => Err(format!("NETRETURN_MAX_MEMORY={v:?}: a size in bytes larger than zero, like \"8GB\" or \"8GiB\"")),
        Err(e) => Err(format!("NETRETURN_MAX_MEMORY={v:?}: {e}")),
    }
}

/// The memory a run may use: `NETRETURN_MAX_MEMORY` if set (an invalid
/// value is refused by [`check`]), else the machine's available memory
/// (Linux `/proc/meminfo`), else no limit.
pub fn limit() -> Option<u64> {
    if let Ok(Some(b)) = env_limit() {
        return Some(b);
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes per TCP flow besides its samples: two connections with their
/// scoreboards, the flow record, its timers (measured: about 1.2 kB at 31
/// and at 3100 flows; rounded up).
const PER_FLOW: u64 = 2048;

/// What a run of `s` will hold at its peak, bytes, and the field with the
/// largest share (where the user most likely set something too large).
pub fn estimate(s: &Scenario) -> (u64, String) {
    let mut parts: Vec<(u64, String)> = vec![];
    for (i, t) in s.traffic.iter().enumerate() {
        let n = match t {
            TrafficSpec::TcpFile { count, .. }
            | TrafficSpec::TcpBulk { count, .. }
            | TrafficSpec::TcpRate { count, .. } => *count as u64,
            _ => 1,
        };
        // (The RTT samples are summarized in a histogram of fixed size,
        // counted in the base below.)
        parts.push((n * PER_FLOW, format!("traffic[{i}].count")));
    }
    for (i, t) in s.traffic.iter().enumerate() {
        if let TrafficSpec::TcpWeb { rate, start, stop, .. } = t {
            // Every arrival of the run is a flow record by its end (made as
            // it arrives; a finished one is kept for its row).
            let from = start.map_or(0.0, |t| t.0.secs_f64());
            let to = stop.map_or(s.run.stop.0.secs_f64(), |t| t.0.secs_f64()).min(s.run.stop.0.secs_f64());
            let arrivals = (rate * (to - from).max(0.0)).min(1e18) as u64;
            parts.push((arrivals.saturating_mul(PER_FLOW), format!("traffic[{i}].rate")));
        }
    }
    // The time series: per sample, the monitored queue (time, backlog,
    // available rate) and eight values of each traced flow, 8 bytes each,
    // for as long as the run may last.
    let samples = (s.run.stop.0.nanos() / s.run.sample_interval.0.nanos().max(1)).saturating_add(1);
    let per_sample = 8 * (3 + 8 * s.run.trace_flows.len() as u64);
    parts.push((samples.saturating_mul(per_sample), "run.sample_interval".into()));
    if let TopologySpec::Dumbbell { pairs, .. } | TopologySpec::MultiRtt { pairs, .. } = &s.topology {
        // Four interfaces and two hosts per pair.
        parts.push((*pairs as u64 * 1024, "topology.pairs".into()));
    }
    let total = parts.iter().fold(16 * 1024 * 1024u64, |a, p| a.saturating_add(p.0));
    let top = parts.into_iter().max_by_key(|p| p.0).map(|p| p.1).unwrap_or_default();
    (total, top)
}

/// Refuses `s` if its estimate exceeds `limit`, naming the parameter the
/// user set.
pub fn check(s: &Scenario, limit: Option<u64>) -> Result<(), ScenarioError> {
    if let Err(message) = env_limit() {
        return Err(ScenarioError { file: "environment".into(), field: "NETRETURN_MAX_MEMORY".into(), message });
    }
    let Some(limit) = limit else { return Ok(()) };
    let (need, field) = estimate(s);
    if need <= limit {
        return Ok(());
    }
    Err(ScenarioError {
        file: s.origin(),
        field: field.clone(),
        message: format!(
            "this scenario would need about {} MB, more than the {} MB this machine allows ({LIMIT_SOURCE}){}",
            need / 1_000_000,
            limit / 1_000_000,
            s.source_of(&field)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::MINI as TEXT;

    #[test]
    fn a_scenario_too_large_for_the_machine_is_refused_naming_the_parameter_set() {
        let sets = [("flows".to_string(), "100000000".to_string())];
        let s = Scenario::from_toml(TEXT, "m.toml", &sets).unwrap();
        let e = check(&s, Some(8_000_000_000)).unwrap_err();
        assert_eq!(e.field, "traffic[0].count");
        assert!(e.message.contains("(from --set flows=100000000)"), "{}", e.message);
        assert!(e.message.contains("8000 MB"), "{}", e.message);
    }

    #[test]
    fn the_estimate_grows_linearly_with_flows_and_small_runs_pass() {
        let at = |n: u32| {
            let s = Scenario::from_toml(TEXT, "m.toml", &[("flows".into(), n.to_string())]).unwrap();
            estimate(&s).0
        };
        let (a, b, c) = (at(10), at(1010), at(2010));
        assert_eq!(c - b, b - a, "linear in the number of flows");
        let s = Scenario::from_toml(TEXT, "m.toml", &[]).unwrap();
        assert!(check(&s, Some(1_000_000_000)).is_ok());
    }

    #[test]
    fn a_sampler_of_one_nanosecond_or_a_flood_of_web_arrivals_is_refused_before_it_starts() {
        // Issue 23: `sample_interval = "1ns"` grew to 6 GB; `mice = 1e9`
        // web arrivals aborted on a 4 GiB allocation while loading.
        let s = Scenario::from_toml(
            &TEXT.replace("[topology]", "[run]\nsample_interval = \"1ns\"\n[topology]"),
            "m.toml",
            &[],
        )
        .unwrap();
        assert_eq!(check(&s, Some(8_000_000_000)).unwrap_err().field, "run.sample_interval");
        let web = format!("{TEXT}\n[[traffic]]\nkind = \"tcp-web\"\nfrom = \"left\"\nto = \"right\"\nrate = 1e9\n");
        let s = Scenario::from_toml(&web, "m.toml", &[]).unwrap();
        assert_eq!(check(&s, Some(8_000_000_000)).unwrap_err().field, "traffic[1].rate");
    }

    #[test]
    fn a_memory_limit_that_does_not_parse_is_an_error_naming_the_variable() {
        // Once "1GiB" was ignored and the machine's memory stood in.
        assert!(parse_limit("8 parsecs")
            .unwrap_err()
            .contains("NETRETURN_MAX_MEMORY=\"8 parsecs\": unknown size unit"));
        assert!(parse_limit("0B").is_err() && parse_limit("100p").is_err());
        assert_eq!(parse_limit("1GiB"), Ok(1 << 30));
        assert_eq!(parse_limit("8GB"), Ok(8_000_000_000));
    }
}
