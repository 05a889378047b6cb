//! Plugs `netreturn_control::WindowGateway` (the sans-IO window-rewriting
//! gateway shared with the simulator) into the pipeline, and builds its
//! configuration from the command line. No controller logic lives here.

use crate::cli::Args;
use crate::hook::WindowHook;
use netreturn_base::{InBand, Rate, Time};
use netreturn_control::{GatewayConfig, QueueEvent, TcpView, WindowController, WindowGateway};

impl<C: WindowController> WindowHook for WindowGateway<C> {
    fn on_data(&mut self, now: Time, seg: &TcpView) {
        WindowGateway::on_data(self, now, seg)
    }
    fn on_data_other(&mut self, now: Time, bytes: u32) {
        WindowGateway::on_data_other(self, now, bytes)
    }
    fn on_queue(&mut self, now: Time, ev: &QueueEvent) {
        WindowGateway::on_queue(self, now, ev)
    }
    fn on_ack(&mut self, now: Time, seg: &TcpView) -> Option<u16> {
        WindowGateway::on_ack(self, now, seg)
    }
    fn on_inband(&mut self, now: Time, seg: &TcpView, ib: &InBand) {
        WindowGateway::on_inband(self, now, seg, ib)
    }
}

/// The gateway configuration for the controller of `args` (from
/// `--config` or `--controller` / `--ctl`), or `None` without one.
///
/// `B` is the A -> B queue's limit (a packet limit counts 1500-byte
/// packets) unless `--ctl buffer=SIZE`; `C` is the rate unless
/// `--ctl capacity=RATE` (the controllers that need `C` say so in the
/// registry).
pub fn gateway_config(args: &Args) -> Result<Option<GatewayConfig>, String> {
    let Some(kind) = args.controller else {
        return Ok(None);
    };
    if let Some(cfg) = &args.gateway_ab {
        // `--config`: resolved by the scenario model, as the simulator's.
        return Ok(Some(with_table_limits(cfg.clone(), args)));
    }
    let buffer = match args.ctl_buffer {
        Some(b) => b.bytes(args.packet_bytes),
        None => args.queue.limit.bytes(args.packet_bytes),
    };
    let link_rate = match args.ctl_capacity.or(args.rate) {
        Some(r) => r,
        None if kind.needs_rate() => {
            return Err(format!("{} needs the link capacity: --rate or --ctl capacity=RATE", kind.name()))
        }
        // The others do not use C; 1 Gb/s stands in.
        None => Rate::mbps(1000),
    };
    let mut cfg = GatewayConfig::from_params(&args.gateway, kind, buffer, link_rate, args.mss);
    // "20p" in a controller key weighs what it weighs in the queue.
    cfg.packet_bytes = Some(args.packet_bytes);
    Ok(Some(with_table_limits(cfg, args)))
}

/// The B -> A direction's controller (`reverse = { queue = "awm" }` of a
/// `--config` file), or `None`.
pub fn gateway_config_ba(args: &Args) -> Option<GatewayConfig> {
    args.gateway_ba.clone().map(|cfg| with_table_limits(cfg, args))
}

/// The flow table's bounds of `--ctl max_flows= idle_timeout=`.
fn with_table_limits(mut cfg: GatewayConfig, args: &Args) -> GatewayConfig {
    if let Some(m) = args.max_flows {
        cfg.max_flows = m;
    }
    if let Some(t) = args.idle_timeout {
        cfg.idle_timeout = t;
    }
    cfg
}

/// The controller's counters as a JSON object (added to the gateway's).
pub fn stats_json<C: WindowController>(g: &WindowGateway<C>) -> String {
    let s = g.stats();
    format!(
        "{{\"data_packets\":{},\"other_packets\":{},\"ack_dir_packets\":{},\"syns_seen\":{},\
         \"handshakes_completed\":{},\"acks_seen\":{},\"acks_rewritten\":{},\"unknown_flow_acks\":{},\
         \"non_ack_packets\":{},\"flows_tracked\":{},\"flows_active\":{},\"flows_created\":{},\
         \"flows_ended\":{},\"flows_evicted\":{},\"flows_expired\":{}}}",
        s.data_packets,
        s.other_packets,
        s.ack_dir_packets,
        s.syns_seen,
        s.handshakes_completed,
        s.acks_seen,
        s.acks_rewritten,
        s.unknown_flow_acks,
        s.non_ack_packets,
        s.flows_tracked,
        s.flows_active,
        s.flows_created,
        s.flows_ended,
        s.flows_evicted,
        s.flows_expired
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::Size;
    use netreturn_control::ewt::EwtConfig;
    use netreturn_control::ControllerConfig;

    fn args(s: &str) -> Args {
        Args::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn buffer_and_capacity_come_from_the_link() {
        let c = gateway_config(&args(
            "--a x --b y --rate 100mbit --queue droptail,bytes=97k --controller ewt --ctl st=29k --ctl assume_wscale=7",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(c.buffer_bytes, 97_000);
        assert_eq!(c.link_rate, Rate::mbps(100));
        assert_eq!(c.controller, ControllerConfig::Ewt(EwtConfig { start_threshold: Some(Size::Bytes(29_000)) }));
        assert_eq!(c.assume_wscale, Some(7));
    }

    #[test]
    fn rwm_without_a_capacity_is_refused_and_classes_parse() {
        assert!(gateway_config(&args("--a x --b y --controller rwm")).is_err());
        let c = gateway_config(&args("--a x --b y --controller rwm --ctl capacity=1gbit --ctl classes=[{ports=[80,443],share=0.7}] --ctl delta=0.1"))
            .unwrap()
            .unwrap();
        let ControllerConfig::Rwm(r) = c.controller else { panic!() };
        assert_eq!(r.classes[0].ports, vec![80..=443]);
        assert_eq!((r.classes[0].share, r.delta), (0.7, 0.1));
        assert!(Args::parse(&["--a", "x", "--b", "y", "--controller", "ewt", "--ctl", "delta=1"].map(String::from))
            .is_err());
        assert!(gateway_config(&args("--a x --b y")).unwrap().is_none());
    }
}
