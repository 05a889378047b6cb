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
//! gateways), [`web`] (web transfers' arrivals), [`stats`] and [`metrics`]
//! (definitions of SPEC.md section 4; a run's result), [`xcp`] and
//! [`ngwa`] (their routers in a world), and the builder of a world from a
//! scenario (`World::new`, in `build`, above the modules it assembles). The scenario model (the file format, its
//! validation and its resolution into per-direction link configs) is
//! `netreturn_scenario`'s, re-exported here as [`scenario`], [`topology`]
//! and [`resolve`].

mod build;
pub mod event;
pub mod hugepages;
pub mod memory;
pub mod metrics;
pub mod ngwa;
pub mod pcap;
pub mod stats;
pub use netreturn_base::units;
pub use netreturn_scenario::{resolve, scenario, topology};
pub mod web;
pub mod world;
pub mod xcp;

pub use metrics::RunResult;
pub use scenario::{Scenario, ScenarioError};

/// Simulates `scenario` with master seed `seed`.
///
/// Refuses (before building anything) a scenario whose memory estimate
/// exceeds the memory limit, and stops a run that grows past it; the limit
/// is `NETRETURN_MAX_MEMORY` (a size such as "8GB") if set, else what the
/// machine has available (see [`memory::limit`]).
pub fn run(scenario: &Scenario, seed: u64) -> Result<RunResult, ScenarioError> {
    let mut w = build(scenario, seed)?;
    w.run();
    finished(&w, scenario, seed)?;
    Ok(metrics::collect(&w, seed))
}

fn build(scenario: &Scenario, seed: u64) -> Result<world::World, ScenarioError> {
    world::World::new(scenario, seed).map_err(|(field, message)| ScenarioError {
        file: scenario.origin(),
        field,
        message,
    })
}

/// The error of a run the memory guard stopped.
fn finished(w: &world::World, scenario: &Scenario, seed: u64) -> Result<(), ScenarioError> {
    if let Some(ev) = &w.rec.stalled {
        return Err(ScenarioError {
            file: scenario.origin(),
            field: String::new(),
            message: format!(
                "seed {seed}: stopped at t = {:.6} s: {} events ran without the clock moving (the last: {ev}); \
                 a source that reschedules itself at the same instant (a rate or interval too small for 1 ns)",
                w.now.secs_f64(),
                world::STALL_EVENTS
            ),
        });
    }
    match w.rec.over_memory {
        None => Ok(()),
        Some(used) => Err(ScenarioError {
            file: scenario.origin(),
            field: String::new(),
            message: format!(
                "seed {seed}: stopped at t = {:.1} s: the run holds {} MB, past the {} MB limit ({})",
                w.now.secs_f64(),
                used / 1_000_000,
                w.rec.memory_limit.unwrap_or(0) / 1_000_000,
                memory::LIMIT_SOURCE
            ),
        }),
    }
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
    let rec = world::Recorder::new(scenario).log_flow(flow, from, to);
    let mut w = world::World::with_recorder(scenario, seed, rec).map_err(|(field, message)| ScenarioError {
        file: scenario.origin(),
        field,
        message,
    })?;
    w.run();
    finished(&w, scenario, seed)?;
    let lines = w.rec.packet_log.take().map(|l| l.lines).unwrap_or_default();
    Ok((metrics::collect(&w, seed), lines))
}

/// [`run`], also recording what each flow-queueing AQM (FQ-CoDel, FQ-PIE)
/// does: every overflow drop, AQM drop and mark, and every change of a flow
/// queue's dropping state ([`netreturn_control::queue::aqm::FqSample`]), by
/// interface name, for comparing flow queues with ns-3's.
pub fn run_aqm_traced(
    scenario: &Scenario,
    seed: u64,
) -> Result<(RunResult, Vec<(String, Vec<netreturn_control::queue::aqm::FqSample>)>), ScenarioError> {
    let mut w = build(scenario, seed)?;
    let traced: Vec<usize> =
        (0..w.ifaces.len()).filter(|&i| w.ifaces[i].aqm_queue_mut().is_some_and(|q| q.enable_trace())).collect();
    w.run();
    finished(&w, scenario, seed)?;
    let traces = traced
        .into_iter()
        .map(|i| {
            let tr = w.ifaces[i].aqm_queue_mut().expect("traced").take_trace();
            (w.ifaces[i].name.clone(), tr)
        })
        .collect();
    Ok((metrics::collect(&w, seed), traces))
}

/// [`run`], also recording every arrival at each RED or ARED queue (time,
/// backlog, average, `max_p`, verdict: [`netreturn_control::queue::RedSample`]),
/// by interface name, for comparing RED's state over time with ns-3's.
pub fn run_red_traced(
    scenario: &Scenario,
    seed: u64,
) -> Result<(RunResult, Vec<(String, Vec<netreturn_control::queue::RedSample>)>), ScenarioError> {
    let mut w = build(scenario, seed)?;
    let traced: Vec<usize> =
        (0..w.ifaces.len()).filter(|&i| w.ifaces[i].queue.discipline_mut().enable_trace()).collect();
    w.run();
    finished(&w, scenario, seed)?;
    let traces = traced
        .into_iter()
        .map(|i| (w.ifaces[i].name.clone(), w.ifaces[i].queue.discipline_mut().take_trace()))
        .collect();
    Ok((metrics::collect(&w, seed), traces))
}
