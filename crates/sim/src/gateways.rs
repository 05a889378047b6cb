//! Building a window-rewriting gateway from a link's scenario entry:
//! `queue = "ewt"` with optional `gateway = { st = "29kB" }` parameters.

use crate::scenario::QueueMethod;
use crate::topology::IfaceSpec;
use crate::units::{parse_size, parse_time};
use netreturn_control::awm::{AwmConfig, NEstimator};
use netreturn_control::controller::ControllerConfig;
use netreturn_control::ewa::EwaConfig;
use netreturn_control::ewt::EwtConfig;
use netreturn_control::gateway::{GatewayConfig, WindowGateway};
use netreturn_control::rwm::{RwmConfig, TrafficClass};
use netreturn_control::saplaw::SapLawConfig;

/// Reads the gateway parameter table, refusing keys the controller lacks.
struct Params<'a> {
    table: Option<&'a toml::Table>,
    /// The controller's key under `gateway` (`ewt`, `awm`, ...), for errors.
    name: &'static str,
    allowed: &'static [&'static str],
}

impl<'a> Params<'a> {
    fn new(v: Option<&'a toml::Value>, name: &'static str, allowed: &'static [&'static str]) -> Result<Params<'a>, String> {
        let table = match v {
            None => None,
            Some(toml::Value::Table(t)) => Some(t),
            Some(_) => return Err(format!("gateway.{name}: must be a table of parameters")),
        };
        if let Some(t) = table {
            for k in t.keys() {
                if !allowed.contains(&k.as_str()) {
                    return Err(format!("unknown parameter gateway.{name}.{k}; allowed: {}", allowed.join(", ")));
                }
            }
        }
        Ok(Params { table, name, allowed })
    }
    /// The full key of parameter `k`, as errors name it.
    fn field(&self, k: &str) -> String {
        format!("gateway.{}.{k}", self.name)
    }
    fn get(&self, k: &str) -> Option<&'a toml::Value> {
        debug_assert!(self.allowed.contains(&k));
        self.table.and_then(|t| t.get(k))
    }
    fn bytes(&self, k: &str, mtu: u32) -> Result<Option<u64>, String> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(toml::Value::String(s)) => parse_size(s).map(|x| Some(x.bytes(mtu))).map_err(|e| format!("{}: {e}", self.field(k))),
            Some(v) => Err(format!("{}: expected a size like \"29kB\", got {v}", self.field(k))),
        }
    }
    fn float(&self, k: &str) -> Result<Option<f64>, String> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::Float(f)) => Ok(Some(*f)),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(v) => Err(format!("{}: expected a number, got {v}", self.field(k))),
        }
    }
    fn time(&self, k: &str) -> Result<Option<netreturn_base::Time>, String> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::String(s)) => parse_time(s).map(Some).map_err(|e| format!("{}: {e}", self.field(k))),
            Some(toml::Value::Float(f)) => Ok(Some(netreturn_base::Time::from_secs_f64(*f))),
            Some(toml::Value::Integer(i)) => Ok(Some(netreturn_base::Time::from_secs(*i as u64))),
            Some(v) => Err(format!("{}: expected a time like \"200ms\", got {v}", self.field(k))),
        }
    }
}

const GATEWAY_KEYS: [&str; 6] = ["ewt", "ewa", "awm", "sap-law", "rwm", "assume_wscale"];

/// The gateway an interface runs, if its method names one.
pub fn build_gateway(f: &IfaceSpec, capacity_bytes: u64, mss: u32) -> Result<Option<WindowGateway>, String> {
    let mtu = mss + 40;
    // `gateway = { ewt = { st = "29kB" }, awm = { ... }, assume_wscale = 7 }`:
    // one sub-table per controller, so a sweep over `queue` can carry the
    // parameters of every method; the one `queue` names is used.
    let top = match f.gateway.as_ref() {
        None => None,
        Some(toml::Value::Table(t)) => Some(t),
        Some(_) => return Err("`gateway` must be a table like { ewt = { st = \"29kB\" } }".into()),
    };
    if let Some(t) = top {
        for k in t.keys() {
            if !GATEWAY_KEYS.contains(&k.as_str()) {
                return Err(format!("unknown key gateway.{k}; allowed: {}", GATEWAY_KEYS.join(", ")));
            }
        }
    }
    let name = QueueMethod::ALL[f.method as usize];
    let g = top.and_then(|t| t.get(name));
    let controller = match f.method {
        QueueMethod::Droptail | QueueMethod::Red | QueueMethod::Ared | QueueMethod::Xcp => return Ok(None),
        QueueMethod::Ewt => {
            let p = Params::new(g, "ewt", &["st"])?;
            ControllerConfig::Ewt(EwtConfig { start_threshold: p.bytes("st", mtu)?, ..EwtConfig::default() })
        }
        QueueMethod::Ewa => {
            let p = Params::new(g, "ewa", &["alpha", "w_up", "w_down", "interval", "low", "high"])?;
            let d = EwaConfig::default();
            ControllerConfig::Ewa(EwaConfig {
                initial_alpha: p.float("alpha")?.unwrap_or(d.initial_alpha),
                w_up: p.float("w_up")?.unwrap_or(d.w_up),
                w_down: p.float("w_down")?.unwrap_or(d.w_down),
                interval: p.time("interval")?.unwrap_or(d.interval),
                low_threshold: p.bytes("low", mtu)?.or(d.low_threshold),
                high_threshold: p.bytes("high", mtu)?.or(d.high_threshold),
                ..d
            })
        }
        QueueMethod::Awm => {
            let p = Params::new(g, "awm", &["target", "beta", "design_rtt", "estimator"])?;
            let d = AwmConfig::default();
            let n_estimator = match p.get("estimator").and_then(|v| v.as_str()) {
                None | Some("oracle") => NEstimator::Oracle,
                Some("adaptive") => NEstimator::Adaptive,
                Some(o) => return Err(format!("gateway.awm.estimator: {o:?} is not one of oracle, adaptive")),
            };
            ControllerConfig::Awm(AwmConfig {
                target: p.bytes("target", mtu)?.or(d.target),
                beta: p.float("beta")?.or(d.beta),
                design_rtt: p.time("design_rtt")?.unwrap_or(d.design_rtt),
                n_estimator,
                ..d
            })
        }
        QueueMethod::SapLaw => {
            let p = Params::new(g, "sap-law", &["udp_time_constant"])?;
            let d = SapLawConfig::default();
            ControllerConfig::SapLaw(SapLawConfig { udp_rate_time_constant: p.time("udp_time_constant")?.unwrap_or(d.udp_rate_time_constant) })
        }
        QueueMethod::Rwm => {
            let p = Params::new(g, "rwm", &["delta", "share", "classes"])?;
            let d = RwmConfig::default();
            let mut classes = vec![];
            if let Some(v) = p.get("classes") {
                let arr = v.as_array().ok_or("gateway.rwm.classes: expected a list of { ports = [lo, hi], share = 0.5 }")?;
                for (i, c) in arr.iter().enumerate() {
                    let ports = c.get("ports").and_then(|x| x.as_array()).filter(|a| a.len() == 2);
                    let share = c.get("share").and_then(|x| x.as_float().or(x.as_integer().map(|i| i as f64)));
                    match (ports, share) {
                        (Some(pr), Some(s)) => {
                            let lo = pr[0].as_integer().unwrap_or(-1);
                            let hi = pr[1].as_integer().unwrap_or(-1);
                            if !(0..=65535).contains(&lo) || !(lo..=65535).contains(&hi) {
                                return Err(format!("gateway.rwm.classes[{i}].ports: expected [lo, hi] with 0 <= lo <= hi <= 65535"));
                            }
                            classes.push(TrafficClass { ports: vec![lo as u16..=hi as u16], share: s });
                        }
                        _ => return Err(format!("gateway.rwm.classes[{i}]: expected {{ ports = [lo, hi], share = 0.5 }}")),
                    }
                }
            }
            let delta = p.float("delta")?.unwrap_or(d.delta);
            if !(-0.99..=10.0).contains(&delta) {
                return Err(format!("gateway.rwm.delta: {delta} is outside [-0.99, 10] (the paper uses -0.1, 0, 0.1)"));
            }
            ControllerConfig::Rwm(RwmConfig { classes, default_share: p.float("share")?.unwrap_or(d.default_share), delta })
        }
    };
    let mut cfg = GatewayConfig::new(controller, capacity_bytes, f.rate);
    cfg.default_mss = mss;
    if let Some(toml::Value::Integer(s)) = top.and_then(|t| t.get("assume_wscale")) {
        if !(0..=14).contains(s) {
            return Err(format!("gateway.assume_wscale: {s} is outside 0..=14 (RFC 7323)"));
        }
        cfg.assume_wscale = Some(*s as u8);
    }
    Ok(Some(WindowGateway::new(cfg)))
}
