//! `netreturn-gateway`: the transparent bridge. See `--help` and
//! docs/gateway.md.

use netreturn_control::ngwa::NgwaEdge;
use netreturn_control::{ControllerKind, GatewayConfig, WindowController, WindowGateway};
use netreturn_gateway::cli::{usage, Args, Datapath};
use netreturn_gateway::control;
use netreturn_gateway::ngwa::NgwaWire;
use netreturn_gateway::pipeline::{Dir, NoController, Pipeline, WindowHook};
use netreturn_scenario::ngwa::NgwaSpec;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match Args::parse(&argv) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            print!("{}", usage());
            return;
        }
        Err(e) => {
            eprintln!("netreturn-gateway: {e}\n\n{}", usage());
            std::process::exit(2);
        }
    };
    // Settings are checked before any socket opens; a bad one is a usage
    // error (exit status 2), like a bad scenario file in the simulator.
    if let Err(e) = control::gateway_config(&args) {
        eprintln!("netreturn-gateway: {e}");
        std::process::exit(2);
    }
    if args.datapath == Datapath::Kernel {
        if let Err(e) = netreturn_gateway::kernel::check(&args) {
            eprintln!("netreturn-gateway: {e}");
            std::process::exit(2);
        }
        for note in netreturn_gateway::kernel::notes(&args) {
            eprintln!("netreturn-gateway: {note}");
        }
    }
    if args.check {
        // What would run, without opening an interface: a testbed (or a
        // person) compares it with `netreturn show-config`.
        match check(&args) {
            Ok(text) => print!("{text}"),
            Err(e) => {
                eprintln!("netreturn-gateway: {e}");
                std::process::exit(2);
            }
        }
        return;
    }
    if let Err(e) = run(&args) {
        eprintln!("netreturn-gateway: {e}");
        std::process::exit(1);
    }
}

/// NGWA's steps of the pipeline, when `--ngwa` / `[ngwa]` turned it on:
/// the A -> B wire (router and / or edge), and for a router a second
/// router, with its own state, marking the B -> A frames.
fn ngwa_wires(args: &Args) -> (Option<NgwaWire>, Option<NgwaWire>) {
    let Some(n) = args.ngwa.as_ref() else { return (None, None) };
    let router = if n.role.router() { n.router() } else { None };
    let back = if n.role.router() { n.router().map(|r| NgwaWire::new(Some(r), false, args.mtu)) } else { None };
    (Some(NgwaWire::new(router, n.role.edge(), args.mtu)), back)
}

/// The NGWA counters of the JSON dump (and the router stage's own).
fn ngwa_json<H: WindowHook>(p: &Pipeline<H>) -> Vec<(&'static str, String)> {
    let Some(n) = p.ngwa() else { return vec![] };
    let mut v = vec![("ngwa_role", format!("\"{}\"", n.roles().name())), ("ngwa", n.stats().to_json())];
    if let Some(r) = n.router() {
        v.push(("ngwa_active_flows", r.active_flows().to_string()));
    }
    if let Some(b) = p.ngwa_back() {
        v.push(("ngwa_back", b.stats().to_json()));
    }
    v
}

fn run_pipeline<H: WindowHook>(
    args: &Args,
    mut p: Pipeline<H>,
    extra: &netreturn_gateway::sys::Extra<H>,
) -> Result<(), String> {
    p.set_max_frame(args.max_frame);
    let (jab, jba) = args.jitters();
    p.set_jitter(Dir::AtoB, jab);
    p.set_jitter(Dir::BtoA, jba);
    let (ab, ba) = ngwa_wires(args);
    if let Some(n) = ab {
        p.set_ngwa(n);
    }
    if let Some(n) = ba {
        p.set_ngwa_back(n);
    }
    let j = netreturn_gateway::sys::run(args, &mut p, extra).map_err(|e| e.to_string())?;
    println!("{j}");
    Ok(())
}

fn controller_json<C: WindowController>(
    name: String,
) -> impl Fn(&Pipeline<WindowGateway<C>>) -> Vec<(&'static str, String)> {
    move |p| {
        let mut v =
            vec![("controller", name.clone()), ("controller_stats", p.hook().map_or("{}".into(), control::stats_json))];
        if let Some(h) = p.hook_ba() {
            v.push(("controller_ba", format!("\"{}\"", h.config().controller.kind().name())));
            v.push(("controller_ba_stats", control::stats_json(h)));
        }
        v.extend(ngwa_json(p));
        v
    }
}

/// NGWA's receiver rule inside the gateway's common rules (never raise,
/// window scale, one-MSS floor, unknown flows alone); `Args::parse`
/// refused another controller beside it.
fn ngwa_edge(args: &Args, n: &NgwaSpec) -> WindowGateway<NgwaEdge> {
    let rx = n.receiver(args.packet_bytes).expect("NGWA is on");
    let mut cfg = GatewayConfig::new(
        ControllerKind::ALL[0].default_config(),
        args.queue.limit.bytes(args.packet_bytes),
        args.rate.unwrap_or(netreturn_base::Rate::mbps(1000)),
    );
    cfg.default_mss = args.mss;
    if let Some(m) = args.max_flows {
        cfg.max_flows = m;
    }
    if let Some(t) = args.idle_timeout {
        cfg.idle_timeout = t;
    }
    WindowGateway::with_controller(NgwaEdge::new(rx), cfg)
}

fn run(args: &Args) -> Result<(), String> {
    let edge = args.ngwa.as_ref().filter(|n| n.role.edge());
    if args.datapath == Datapath::Kernel {
        let j = match edge {
            Some(n) => netreturn_gateway::kernel::run(args, Some(ngwa_edge(args, n)))?,
            None => netreturn_gateway::kernel::run(args, control::gateway_config(args)?.map(WindowGateway::new))?,
        };
        println!("{j}");
        return Ok(());
    }
    let (ab, ba) = args.links()?;
    let reverse = control::gateway_config_ba(args);
    match (args.controller, edge) {
        (None, None) if reverse.is_none() => {
            let extra = |p: &Pipeline<NoController>| {
                let mut v = vec![("controller", "\"none\"".to_string())];
                v.extend(ngwa_json(p));
                v
            };
            run_pipeline(args, Pipeline::new(ab, ba, None, args.seed), &extra)
        }
        (kind, None) => {
            // A controller on A -> B, on B -> A (`reverse = {...}` of a
            // scenario), or both.
            let gw = control::gateway_config(args)?.map(WindowGateway::new);
            let mut p = Pipeline::new(ab, ba, gw, args.seed);
            if let Some(cfg) = reverse {
                p.set_hook_ba(WindowGateway::new(cfg));
            }
            let name = kind.map_or("none", |k| k.name());
            run_pipeline(args, p, &controller_json(format!("\"{name}\"")))
        }
        (_, Some(n)) => {
            let gw = ngwa_edge(args, n);
            run_pipeline(args, Pipeline::new(ab, ba, Some(gw), args.seed), &controller_json("\"ngwa-edge\"".into()))
        }
    }
}

/// The two directions and their controllers, one line each, in bytes,
/// bit/s and ns (`--check`).
fn check(args: &Args) -> Result<String, String> {
    let (ab, ba) = args.links()?;
    let ctl = [control::gateway_config(args)?, control::gateway_config_ba(args)];
    let (jab, jba) = args.jitters();
    let mut out = String::new();
    for (((name, l), c), j) in [("A->B", &ab), ("B->A", &ba)].into_iter().zip(ctl).zip([jab, jba]) {
        out += &format!(
            "{name} rate {} bit/s  delay {} ns  jitter {} ns{}  loss {}  buffer {} B  queue {:?}\n",
            l.rate.map_or(0, |r| r.bits_per_sec()),
            l.delay.nanos(),
            j.amount.nanos(),
            if j.reorder { " (reordering)" } else { "" },
            l.loss,
            l.discipline.limit().bytes(args.packet_bytes),
            l.discipline
        );
        if let Some(c) = c {
            out += &format!(
                "{name} controller {}  B={} C={} default_mss={} packet={:?} {:?}\n",
                c.controller.kind().name(),
                c.buffer_bytes,
                c.link_rate.bits_per_sec(),
                c.default_mss,
                c.packet_bytes,
                c.controller
            );
        }
    }
    Ok(out)
}
