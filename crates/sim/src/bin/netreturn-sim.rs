//! A thin command-line runner of one simulation, for benchmarks and
//! debugging without Python: `netreturn-sim SCENARIO [--seed S]
//! [--set NAME=VALUE]... [--repeat N] [--per-flow] [--log-flow F
//! [--log-window T0,T1] [--log-out PATH]]`. Prints the summary metrics and
//! the wall time, events per second and packets per second; `--per-flow`
//! adds one line per TCP flow (start, FCT, goodput, recoveries, timeouts);
//! `--log-flow F` writes a packet-level log of TCP flow F (every segment
//! sent, dropped or received, timer expiries, and the sender's state after
//! each event; see `world::PacketLog`) to PATH (default: standard error).
//! `--red-trace PATH` writes every arrival at a RED or ARED queue (time,
//! backlog, average, max_p, verdict) to PATH. `--aqm-trace PATH` writes what
//! each FQ-CoDel or FQ-PIE queue does (overflow drops, AQM drops and marks,
//! and each flow queue's dropping state entered or left) to PATH.

use netreturn_base::Time;
use netreturn_control::queue::aqm::FqEvent;
use netreturn_sim::world::aqm_flow_parts;
use netreturn_sim::{run, run_aqm_traced, run_logged, run_red_traced, Scenario};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Large tables on huge pages ([`netreturn_sim::hugepages`]).
#[global_allocator]
static ALLOC: netreturn_sim::hugepages::HugePages = netreturn_sim::hugepages::HugePages;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut path = None;
    let mut seed = 1u64;
    let mut repeat = 1u32;
    let mut sets = vec![];
    let mut per_flow = false;
    let mut links = false;
    let mut log_flow: Option<u32> = None;
    let mut log_window = (Time::ZERO, Time::MAX);
    let mut log_out: Option<String> = None;
    let mut red_trace: Option<String> = None;
    let mut aqm_trace: Option<String> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => {
                seed = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| usage("--seed needs an integer"))
            }
            "--repeat" => {
                repeat = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| usage("--repeat needs an integer"))
            }
            "--set" => {
                let kv = it.next().unwrap_or_else(|| usage("--set needs NAME=VALUE"));
                let (k, v) = kv.split_once('=').unwrap_or_else(|| usage("--set needs NAME=VALUE"));
                sets.push((k.to_string(), v.to_string()));
            }
            "--per-flow" => per_flow = true,
            "--links" => links = true,
            "--log-flow" => {
                log_flow = Some(
                    it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| usage("--log-flow needs a flow index")),
                )
            }
            "--log-window" => {
                let w = it.next().and_then(|s| s.split_once(','));
                let secs = |x: &str| x.trim().parse::<f64>().ok().filter(|v| *v >= 0.0).map(Time::from_secs_f64);
                log_window = match w.and_then(|(a, b)| Some((secs(a)?, secs(b)?))) {
                    Some(v) => v,
                    None => usage("--log-window needs T0,T1 in seconds"),
                };
            }
            "--red-trace" => red_trace = Some(it.next().cloned().unwrap_or_else(|| usage("--red-trace needs a path"))),
            "--aqm-trace" => aqm_trace = Some(it.next().cloned().unwrap_or_else(|| usage("--aqm-trace needs a path"))),
            "--log-out" => log_out = Some(it.next().cloned().unwrap_or_else(|| usage("--log-out needs a path"))),
            "-h" | "--help" => usage(""),
            p if path.is_none() => path = Some(p.to_string()),
            other => usage(&format!("unexpected argument {other:?}")),
        }
    }
    let path = path.unwrap_or_else(|| usage("a scenario file is required"));
    let scenario = match Scenario::from_file(Path::new(&path), &sets) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("netreturn-sim: error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut best = f64::INFINITY;
    let mut last = None;
    let mut log = vec![];
    for _ in 0..repeat {
        let t0 = Instant::now();
        let r = match (log_flow, &red_trace) {
            (None, None) if aqm_trace.is_some() => run_aqm_traced(&scenario, seed).and_then(|(r, traces)| {
                // One line per event of a flow-queueing AQM: iface, time (s),
                // event, the packet's flow ("tcp F" or "udp F", the flow's
                // index; dir 1 for the reverse direction), its bucket, the
                // bucket's bytes and packets and the queue's bytes before
                // the call, and the bucket's AQM count after it.
                let mut text = String::new();
                for (name, tr) in &traces {
                    for x in tr {
                        let event = match x.event {
                            FqEvent::Overflow => "overflow",
                            FqEvent::Drop => "drop",
                            FqEvent::Mark => "mark",
                            FqEvent::Enter => "enter",
                            FqEvent::Leave => "leave",
                        };
                        let (flow, udp, dir) = aqm_flow_parts(x.flow);
                        let kind = if udp { "udp" } else { "tcp" };
                        text += &format!(
                            "{name}\t{:.9}\t{event}\t{kind} {}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                            x.t.secs_f64(),
                            flow,
                            dir,
                            x.bucket,
                            x.bucket_bytes,
                            x.bucket_packets,
                            x.total_bytes,
                            x.count
                        );
                    }
                }
                std::fs::write(aqm_trace.as_deref().expect("checked"), text).map_err(|e| {
                    netreturn_sim::ScenarioError {
                        file: scenario.origin(),
                        field: "--aqm-trace".into(),
                        message: e.to_string(),
                    }
                })?;
                Ok(r)
            }),
            (Some(f), _) => run_logged(&scenario, seed, f, log_window.0, log_window.1).map(|(r, l)| {
                log = l;
                r
            }),
            (None, Some(p)) => run_red_traced(&scenario, seed).and_then(|(r, traces)| {
                // One line per arrival at a RED queue: iface, time (s),
                // backlog before it (B), average (B), max_p, verdict
                // (0 accepted, 1 early, 2 forced, 3 overflow).
                let mut text = String::new();
                for (name, tr) in &traces {
                    for x in tr {
                        text += &format!(
                            "{name}\t{:.9}\t{}\t{:.3}\t{:.6e}\t{}\n",
                            x.t.secs_f64(),
                            x.backlog,
                            x.avg,
                            x.max_p,
                            x.verdict
                        );
                    }
                }
                std::fs::write(p, text).map_err(|e| netreturn_sim::ScenarioError {
                    file: scenario.origin(),
                    field: "--red-trace".into(),
                    message: e.to_string(),
                })?;
                Ok(r)
            }),
            (None, None) => run(&scenario, seed),
        };
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                eprintln!("netreturn-sim: error: {e}");
                return ExitCode::from(2);
            }
        };
        best = best.min(t0.elapsed().as_secs_f64());
        last = Some(r);
    }
    let r = last.expect("repeat >= 1");
    println!("{:>20} {}", "monitored_link", r.monitor.as_deref().unwrap_or("none"));
    for (k, v) in &r.summary {
        println!("{k:>20} {v}");
    }
    let packets: u64 = r.ifaces.iter().map(|i| i.tx_packets).sum();
    println!("{:>20} {best:.6}", "wall_s");
    println!("{:>20} {:.0}", "events_per_s", r.events as f64 / best);
    println!("{:>20} {:.0}", "packet_hops_per_s", packets as f64 / best);
    if per_flow {
        // Bottleneck queue, mean of the samples in each 1-s bin (bytes).
        let (ts, qs) = &r.queue_series;
        let mut bins: Vec<(f64, u32)> = vec![];
        for (t, q) in ts.iter().zip(qs) {
            let b = *t as usize;
            if bins.len() <= b {
                bins.resize(b + 1, (0.0, 0));
            }
            bins[b].0 += q;
            bins[b].1 += 1;
        }
        let bins: Vec<String> = bins.iter().map(|(s, n)| format!("{:.0}", s / (*n).max(1) as f64)).collect();
        println!("queue_1s_bins {}", bins.join(","));
        println!("flow start_s fct_s goodput_mbps sent_B retx_B recoveries timeouts lost");
        for f in &r.flows {
            println!(
                "{} {:.9} {:.6} {:.4} {} {} {} {} {}",
                f.flow,
                f.start_s,
                f.fct_s,
                f.goodput_mbps,
                f.bytes_sent,
                f.bytes_retransmitted,
                f.fast_retransmits,
                f.timeouts,
                f.packets_lost
            );
        }
    }
    if links {
        // Every interface: utilization, queue loss, queue statistics and
        // the robustness index (seed 002 section 3.5, parking lot).
        println!(
            "iface utilization loss_pct queue_mean_B queue_std_B robustness_index queue_drops overflow early forced sojourn"
        );
        for i in &r.ifaces {
            let [overflow, early, forced, sojourn] = i.drops_by_reason;
            println!(
                "{} {:.6} {:.6} {:.1} {:.1} {:.6} {} {} {} {} {}",
                i.name,
                i.utilization,
                i.loss_pct,
                i.queue_mean_bytes,
                i.queue_std_bytes,
                i.robustness_index,
                i.queue_drops,
                overflow,
                early,
                forced,
                sojourn
            );
        }
    }
    if log_flow.is_some() {
        let text = log.join("\n") + "\n";
        let res = match &log_out {
            Some(p) => std::fs::write(p, text),
            None => std::io::stderr().write_all(text.as_bytes()),
        };
        if let Err(e) = res {
            eprintln!("netreturn-sim: error: writing the log: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("netreturn-sim: error: {msg}");
    }
    eprintln!(
        "usage: netreturn-sim SCENARIO [--seed S] [--set NAME=VALUE]... [--repeat N] [--per-flow] [--links]\n\
         \x20                    [--log-flow F [--log-window T0,T1] [--log-out PATH]] [--red-trace PATH]\n\
         \x20                    [--aqm-trace PATH]"
    );
    std::process::exit(2)
}
