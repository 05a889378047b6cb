//! A memory guard: a scenario whose estimate exceeds the machine is refused
//! before it starts, and a run that grows past the limit anyway is stopped
//! (issue 11: `--set flows=100000000` used to grow to 6 GB in 30 s without
//! a word).

use crate::scenario::{Scenario, ScenarioError, TopologySpec, TrafficSpec};

/// Where the limit comes from, for messages.
pub const LIMIT_SOURCE: &str = "NETRETURN_MAX_MEMORY, else the machine's MemAvailable";

/// The memory a run may use: `NETRETURN_MAX_MEMORY` ("8GB", "500MB") if
/// set and valid, else the machine's available memory (Linux
/// `/proc/meminfo`), else no limit.
pub fn limit() -> Option<u64> {
    if let Ok(v) = std::env::var("NETRETURN_MAX_MEMORY") {
        if let Ok(s) = netreturn_base::units::parse_size(&v) {
            return Some(s.bytes(1500));
        }
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
    if let TopologySpec::Dumbbell { pairs, .. } | TopologySpec::MultiRtt { pairs, .. } = &s.topology {
        // Four interfaces and two hosts per pair.
        parts.push((*pairs as u64 * 1024, "topology.pairs".into()));
    }
    let total = parts.iter().map(|p| p.0).sum::<u64>() + 16 * 1024 * 1024;
    let top = parts.into_iter().max_by_key(|p| p.0).map(|p| p.1).unwrap_or_default();
    (total, top)
}

/// Refuses `s` if its estimate exceeds `limit`, naming the parameter the
/// user set.
pub fn check(s: &Scenario, limit: Option<u64>) -> Result<(), ScenarioError> {
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
}
