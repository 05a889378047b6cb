//! `netreturn-gateway`: the transparent bridge. See `--help` and
//! docs/gateway.md.

use netreturn_control::WindowGateway;
use netreturn_gateway::cli::{Args, USAGE};
use netreturn_gateway::control;
use netreturn_gateway::pipeline::{LinkConfig, NoController, Pipeline};

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match Args::parse(&argv) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("netreturn-gateway: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    // Settings are checked before any socket opens; a bad one is a usage
    // error (exit status 2), like a bad scenario file in the simulator.
    if let Err(e) = control::gateway_config(&args) {
        eprintln!("netreturn-gateway: {e}");
        std::process::exit(2);
    }
    if let Err(e) = run(&args) {
        eprintln!("netreturn-gateway: {e}");
        std::process::exit(1);
    }
}

fn links(args: &Args) -> Result<(LinkConfig, LinkConfig), String> {
    let ab = LinkConfig {
        rate: args.rate,
        delay: args.delay,
        loss: args.loss,
        discipline: args.queue.discipline(args.rate, 1500)?,
    };
    let ba = LinkConfig {
        rate: args.rate_ba,
        delay: args.delay_ba,
        loss: args.loss_ba,
        discipline: args.queue_ba.discipline(args.rate_ba, 1500)?,
    };
    Ok((ab, ba))
}

fn run(args: &Args) -> Result<(), String> {
    let (ab, ba) = links(args)?;
    match args.controller {
        None => {
            let mut p: Pipeline<NoController> = Pipeline::new(ab, ba, None, args.seed);
            p.set_max_frame(args.max_frame);
            let extra = |_: &Pipeline<NoController>| vec![("controller", "\"none\"".to_string())];
            let j = netreturn_gateway::sys::run(args, &mut p, &extra).map_err(|e| e.to_string())?;
            println!("{j}");
            Ok(())
        }
        Some(kind) => {
            let cfg = control::gateway_config(args)?.expect("a controller");
            let gw = WindowGateway::new(cfg);
            let mut p = Pipeline::new(ab, ba, Some(gw), args.seed);
            p.set_max_frame(args.max_frame);
            let name = format!("\"{}\"", kind.name());
            let extra = move |p: &Pipeline<WindowGateway>| {
                vec![
                    ("controller", name.clone()),
                    ("controller_stats", p.hook().map_or("{}".into(), control::stats_json)),
                ]
            };
            let j = netreturn_gateway::sys::run(args, &mut p, &extra).map_err(|e| e.to_string())?;
            println!("{j}");
            Ok(())
        }
    }
}
