//! netreturn's packet-level discrete-event simulator.
//!
//! A [`Scenario`] (a TOML file under `scenarios/`) describes a topology,
//! queue disciplines, gateways and traffic; [`run`] simulates it for one seed
//! and returns the papers' metrics ([`RunResult`]). The same scenario and seed
//! give the same result bit for bit: all randomness derives from the seed,
//! events are ordered by `(time, sequence)`, and nothing reads a clock.
//!
//! Layout: [`event`] (the queue of events), [`topology`] (nodes, links,
//! routes), [`world`] (the event loop: interfaces, TCP/UDP applications,
//! gateways), [`metrics`] (definitions of SPEC.md section 4), [`scenario`]
//! (the file format and its validation), [`units`] (quantities in files),
//! [`xcp`] (XCP's routers and senders in a scenario).

pub mod event;
mod gateways;
pub mod metrics;
pub mod pcap;
pub mod scenario;
pub mod topology;
pub mod units;
pub mod web;
pub mod world;
pub mod xcp;

pub use metrics::RunResult;
pub use scenario::{Scenario, ScenarioError};

/// Simulates `scenario` with master seed `seed`.
pub fn run(scenario: &Scenario, seed: u64) -> Result<RunResult, ScenarioError> {
    let mut w = world::World::new(scenario, seed).map_err(|(field, message)| ScenarioError {
        file: scenario.origin(),
        field,
        message,
    })?;
    w.run();
    Ok(metrics::collect(&w, seed))
}

/// [`run`], also logging every packet event of TCP flow `flow` between
/// `from` and `to` (see [`world::PacketLog`]); returns the log lines.
pub fn run_logged(
    scenario: &Scenario,
    seed: u64,
    flow: u32,
    from: netreturn_base::Time,
    to: netreturn_base::Time,
) -> Result<(RunResult, Vec<String>), ScenarioError> {
    let mut w = world::World::new(scenario, seed).map_err(|(field, message)| ScenarioError {
        file: scenario.origin(),
        field,
        message,
    })?;
    if flow as usize >= w.tcp.len() {
        return Err(ScenarioError {
            file: scenario.origin(),
            field: "log flow".into(),
            message: format!("flow {flow} does not exist; there are {} TCP flows", w.tcp.len()),
        });
    }
    w.packet_log = Some(world::PacketLog { flow, from, to, lines: vec![] });
    w.run();
    let lines = w.packet_log.take().map(|l| l.lines).unwrap_or_default();
    Ok((metrics::collect(&w, seed), lines))
}
