//! A thin command-line runner of one simulation, for benchmarks and
//! debugging without Python: `netreturn-sim SCENARIO [--seed S]
//! [--set NAME=VALUE]... [--repeat N]`. Prints the summary metrics and the
//! wall time, events per second and packets per second.

use netreturn_sim::{run, Scenario};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut path = None;
    let mut seed = 1u64;
    let mut repeat = 1u32;
    let mut sets = vec![];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => seed = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| usage("--seed needs an integer")),
            "--repeat" => repeat = it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| usage("--repeat needs an integer")),
            "--set" => {
                let kv = it.next().unwrap_or_else(|| usage("--set needs NAME=VALUE"));
                let (k, v) = kv.split_once('=').unwrap_or_else(|| usage("--set needs NAME=VALUE"));
                sets.push((k.to_string(), v.to_string()));
            }
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
    for _ in 0..repeat {
        let t0 = Instant::now();
        let r = match run(&scenario, seed) {
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
    for (k, v) in &r.summary {
        println!("{k:>20} {v}");
    }
    let packets: u64 = r.ifaces.iter().map(|i| i.tx_packets).sum();
    println!("{:>20} {best:.6}", "wall_s");
    println!("{:>20} {:.0}", "events_per_s", r.events as f64 / best);
    println!("{:>20} {:.0}", "packet_hops_per_s", packets as f64 / best);
    ExitCode::SUCCESS
}

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("netreturn-sim: error: {msg}");
    }
    eprintln!("usage: netreturn-sim SCENARIO [--seed S] [--set NAME=VALUE]... [--repeat N]");
    std::process::exit(2)
}
