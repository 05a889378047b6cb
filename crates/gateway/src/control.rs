//! Plugs `netreturn_control::WindowGateway` (the sans-IO window-rewriting
//! gateway shared with the simulator) into the pipeline, and builds its
//! configuration from the command line. No controller logic lives here.

use crate::cli::{parse_rate, parse_size, parse_time, Args};
use crate::pipeline::WindowHook;
use netreturn_base::{Rate, Time};
use netreturn_control::awm::{AwmConfig, NEstimator};
use netreturn_control::ewa::EwaConfig;
use netreturn_control::ewt::EwtConfig;
use netreturn_control::rwm::{RwmConfig, TrafficClass};
use netreturn_control::saplaw::SapLawConfig;
use netreturn_control::{ControllerConfig, GatewayConfig, QueueEvent, TcpView, WindowGateway};

impl WindowHook for WindowGateway {
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
}

fn num<T: std::str::FromStr>(k: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("--ctl {k}: bad value '{v}'"))
}

/// The gateway configuration for `--controller NAME --ctl K=V ...`, or
/// `None` for `--controller none`.
///
/// `B` is the A -> B queue's limit (a packet limit counts 1500-byte
/// packets) unless `--ctl buffer=SIZE`; `C` is `--rate` unless
/// `--ctl capacity=RATE` (RWM, SAP-LAW and AWM need one of them).
pub fn gateway_config(args: &Args) -> Result<Option<GatewayConfig>, String> {
    let name = args.controller.as_str();
    if name == "none" {
        return Ok(None);
    }
    let mut buffer = args.queue.limit.bytes(1500);
    let mut capacity = args.rate;
    let mut ewt = EwtConfig::default();
    let mut ewa = EwaConfig::default();
    let mut awm = AwmConfig::default();
    let mut sap = SapLawConfig::default();
    let mut rwm = RwmConfig::default();
    let (mut assume_wscale, mut max_flows, mut idle) = (None, None, None);
    for (k, v) in &args.ctl {
        let k = k.as_str();
        match (name, k) {
            (_, "buffer") => buffer = parse_size(v)?,
            (_, "capacity") => capacity = Some(parse_rate(v)?),
            (_, "assume_wscale") => assume_wscale = Some(num::<u8>(k, v)?.min(14)),
            (_, "max_flows") => max_flows = Some(num(k, v)?),
            (_, "idle_timeout") => idle = Some(parse_time(v)?),
            ("ewt", "st") => ewt.start_threshold = Some(parse_size(v)?),
            ("ewa", "alpha") => ewa.initial_alpha = num(k, v)?,
            ("ewa", "wup") => ewa.w_up = num(k, v)?,
            ("ewa", "wdown") => ewa.w_down = num(k, v)?,
            ("ewa", "interval") => ewa.interval = parse_time(v)?,
            ("ewa", "tl") => ewa.low_threshold = Some(parse_size(v)?),
            ("ewa", "th") => ewa.high_threshold = Some(parse_size(v)?),
            ("ewa", "gain") => ewa.gain = num(k, v)?,
            ("awm", "target") => awm.target = Some(parse_size(v)?),
            ("awm", "beta") => awm.beta = Some(num(k, v)?),
            ("awm", "design_rtt") => awm.design_rtt = parse_time(v)?,
            ("awm", "n") => {
                awm.n_estimator = match v.as_str() {
                    "oracle" => NEstimator::Oracle,
                    "adaptive" => NEstimator::Adaptive,
                    _ => return Err(format!("--ctl n: oracle or adaptive, not '{v}'")),
                }
            }
            ("awm", "mtu") => awm.mtu = Some(num(k, v)?),
            ("awm", "initial_swnd") => awm.initial_swnd = Some(parse_size(v)?),
            ("awm", "max_swnd") => awm.max_swnd = Some(parse_size(v)?),
            ("saplaw", "tau") => sap.udp_rate_time_constant = parse_time(v)?,
            ("rwm", "delta") => rwm.delta = num(k, v)?,
            ("rwm", "share") => rwm.default_share = num(k, v)?,
            ("rwm", "class") => rwm.classes.push(parse_class(v)?),
            _ => return Err(format!("--ctl {k} is not a parameter of {name} (see docs/gateway.md)")),
        }
    }
    let needs_rate = matches!(name, "rwm" | "saplaw" | "awm");
    let link_rate = match capacity {
        Some(r) => r,
        None if needs_rate => return Err(format!("{name} needs the link capacity: --rate or --ctl capacity=RATE")),
        // EWT and EWA do not use C; 1 Gb/s stands in.
        None => Rate::mbps(1000),
    };
    let controller = match name {
        "ewt" => ControllerConfig::Ewt(ewt),
        "ewa" => ControllerConfig::Ewa(ewa),
        "awm" => ControllerConfig::Awm(awm),
        "saplaw" => ControllerConfig::SapLaw(sap),
        "rwm" => ControllerConfig::Rwm(rwm),
        other => return Err(format!("unknown controller '{other}' (none, ewt, ewa, awm, saplaw, rwm)")),
    };
    let mut cfg = GatewayConfig::new(controller, buffer, link_rate);
    cfg.default_mss = args.mss;
    cfg.assume_wscale = assume_wscale;
    if let Some(m) = max_flows {
        cfg.max_flows = m;
    }
    if let Some(t) = idle {
        cfg.idle_timeout = t;
    }
    Ok(Some(cfg))
}

/// `80+443+8000-8999:0.5`: port ranges joined by `+`, then the share.
fn parse_class(v: &str) -> Result<TrafficClass, String> {
    let (ports, share) = v.rsplit_once(':').ok_or_else(|| format!("--ctl class='{v}': PORTS:SHARE"))?;
    let mut ranges = Vec::new();
    for p in ports.split('+') {
        let (lo, hi) = p.split_once('-').unwrap_or((p, p));
        ranges.push(num::<u16>("class", lo)?..=num::<u16>("class", hi)?);
    }
    Ok(TrafficClass { ports: ranges, share: num("class", share)? })
}

/// The controller's counters as a JSON object (added to the gateway's).
pub fn stats_json(g: &WindowGateway) -> String {
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

    fn args(s: &str) -> Args {
        Args::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn buffer_and_capacity_come_from_the_link() {
        let c = gateway_config(&args("--a x --b y --rate 100mbit --queue droptail,bytes=97k --controller ewt --ctl st=29k"))
            .unwrap()
            .unwrap();
        assert_eq!(c.buffer_bytes, 97_000);
        assert_eq!(c.link_rate, Rate::mbps(100));
        assert_eq!(c.controller, ControllerConfig::Ewt(EwtConfig { start_threshold: Some(29_000) }));
    }

    #[test]
    fn rwm_without_a_capacity_is_refused_and_classes_parse() {
        assert!(gateway_config(&args("--a x --b y --controller rwm")).is_err());
        let c = gateway_config(&args("--a x --b y --controller rwm --ctl capacity=1gbit --ctl class=80+443:0.7 --ctl delta=0.1"))
            .unwrap()
            .unwrap();
        let ControllerConfig::Rwm(r) = c.controller else { panic!() };
        assert_eq!(r.classes[0].ports, vec![80..=80, 443..=443]);
        assert_eq!((r.classes[0].share, r.delta), (0.7, 0.1));
        assert!(gateway_config(&args("--a x --b y --controller ewt --ctl delta=1")).is_err());
        assert!(gateway_config(&args("--a x --b y")).unwrap().is_none());
    }
}
