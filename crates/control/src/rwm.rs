//! Receive Window Modulation (seed 003 §III, Algorithm 1; SPEC.md §2.5).
//!
//! Each flow gets the bandwidth-delay product of its class's share of the
//! access link, split equally among the class's flows:
//! `BDP_f = C * P_c * RTT_f / |flows in c|`, and its ACKs carry at most
//! `BDP_f * (1 + delta)`.
//!
//! Algorithm 1 recomputes every flow's window "when a new incoming flow is
//! registered" (and on removal). The result depends on the flow only through
//! `RTT_f` and its class, and on the table only through the class sizes, so
//! this module keeps the class sizes, updated on register / remove, and
//! evaluates the formula when an ACK passes: the same windows as recomputing
//! the whole table, in O(1) per event.

use std::ops::RangeInclusive;

use netreturn_base::{FlowKey, Time};
use serde::{Deserialize, Deserializer};

use crate::controller::{Bottleneck, FlowInfo, WindowController};

/// A traffic class (seed 003 §III: "classes can be defined by the user based
/// on the application port").
/// In scenario files `{ ports = [lo, hi], share = 0.5 }`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "ClassSpec")]
pub struct TrafficClass {
    /// Port ranges; a flow belongs to the class if either of its ports lies
    /// in one of them. Classes are tried in order; the first match wins.
    pub ports: Vec<RangeInclusive<u16>>,
    /// `P_c`, the class's share of the access link capacity, in [0, 1].
    pub share: f64,
}

/// RWM settings.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RwmConfig {
    pub classes: Vec<TrafficClass>,
    /// `P` of the default class, for flows no class matches.
    #[serde(rename = "share")]
    pub default_share: f64,
    /// `delta`: the window is `BDP_f * (1 + delta)`; the paper studies
    /// -0.1, 0 and +0.1 (seed 003 §IV).
    #[serde(deserialize_with = "delta_in_range")]
    pub delta: f64,
}

/// A traffic class as written: one port range and its share.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassSpec {
    ports: [u16; 2],
    share: f64,
}

impl TryFrom<ClassSpec> for TrafficClass {
    type Error = String;
    fn try_from(c: ClassSpec) -> Result<TrafficClass, String> {
        let [lo, hi] = c.ports;
        if lo > hi {
            return Err(format!("ports: expected [lo, hi] with lo <= hi, got [{lo}, {hi}]"));
        }
        if !(0.0..=1.0).contains(&c.share) {
            return Err(format!("share: {} is not a fraction in [0, 1]", c.share));
        }
        Ok(TrafficClass { ports: vec![lo..=hi], share: c.share })
    }
}

/// `delta` beyond [-0.99, 10] is a typo, not an experiment: -1 would pin
/// every window to the floor.
fn delta_in_range<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let delta = f64::deserialize(d)?;
    if !(-0.99..=10.0).contains(&delta) {
        return Err(serde::de::Error::custom(format!("{delta} is outside [-0.99, 10] (the paper uses -0.1, 0, 0.1)")));
    }
    Ok(delta)
}

impl Default for RwmConfig {
    /// One class holding the whole link, exact BDP: seed 003's experiments
    /// ("all the traffic flows ... belonging to a single traffic class").
    fn default() -> RwmConfig {
        RwmConfig { classes: Vec::new(), default_share: 1.0, delta: 0.0 }
    }
}

/// RWM state: the number of registered flows per class.
#[derive(Clone, Debug)]
pub struct Rwm {
    cfg: RwmConfig,
    /// `C`, bytes per second.
    capacity: f64,
    /// `|flow table_c|`, indexed by class; the default class is last.
    flows: Vec<u32>,
}

impl Rwm {
    pub fn new(cfg: RwmConfig, link: Bottleneck) -> Rwm {
        let flows = vec![0; cfg.classes.len() + 1];
        Rwm { cfg, capacity: link.link_rate.bytes_per_sec_f64(), flows }
    }

    fn share(&self, class: u16) -> f64 {
        match self.cfg.classes.get(class as usize) {
            Some(c) => c.share,
            None => self.cfg.default_share,
        }
    }

    /// Flows registered in `class`.
    pub fn flows_in(&self, class: u16) -> u32 {
        self.flows.get(class as usize).copied().unwrap_or(0)
    }

    /// `BDP_f` in bytes (seed 003 Algorithm 1), before `delta`.
    pub fn bdp(&self, class: u16, rtt: Time) -> f64 {
        // Cc <- C * Pc
        let cc = self.capacity * self.share(class);
        // BDPf <- (Cc * RTTf) / len(flow table_c)
        cc * rtt.secs_f64() / self.flows_in(class).max(1) as f64
    }

    fn slot(&mut self, class: u16) -> &mut u32 {
        let last = self.flows.len() - 1;
        &mut self.flows[(class as usize).min(last)]
    }
}

impl WindowController for Rwm {
    fn classify(&self, key: &FlowKey) -> u16 {
        self.cfg
            .classes
            .iter()
            .position(|c| c.ports.iter().any(|r| r.contains(&key.sport) || r.contains(&key.dport)))
            .unwrap_or(self.cfg.classes.len()) as u16
    }

    /// Algorithm 1 "procedure NEW FLOW REGISTERED".
    fn on_flow_start(&mut self, _now: Time, flow: &FlowInfo) {
        *self.slot(flow.class) += 1;
    }

    fn on_flow_end(&mut self, _now: Time, flow: &FlowInfo) {
        let n = self.slot(flow.class);
        *n = n.saturating_sub(1);
    }

    fn window(&mut self, _now: Time, flow: &FlowInfo) -> Option<u64> {
        // Algorithm 1: "if WSCALEf not recorded then skip to next flow"; a
        // flow without a handshake RTT is skipped likewise.
        let rtt = flow.rtt?;
        // RWNDf <- min(RWNDf, BDPf (1 + delta)); the min is the gateway's.
        Some((self.bdp(flow.class, rtt) * (1.0 + self.cfg.delta)).max(0.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::Rate;

    fn key(port: u16, i: u32) -> FlowKey {
        FlowKey { src: 100 + i, dst: 1, sport: port, dport: 50_000 + i as u16, proto: FlowKey::TCP }
    }

    fn info(rwm: &Rwm, k: FlowKey, rtt_ms: u64) -> FlowInfo {
        FlowInfo {
            key: k,
            rtt: Some(Time::from_millis(rtt_ms)),
            mss: 1460,
            class: rwm.classify(&k),
            wr: u64::MAX,
            ack: 0,
        }
    }

    /// seed 003 eq. 1: sum over classes and flows of RWND_i / RTT_i, each
    /// class weighted by its share, gives the link capacity; flows of one
    /// class get equal rates whatever their RTT.
    #[test]
    fn windows_of_two_classes_satisfy_equation_1() {
        let link =
            Bottleneck { buffer_bytes: 1 << 20, link_rate: Rate::mbps(100), default_mss: 1460, packet_bytes: None };
        let cfg = RwmConfig {
            classes: vec![
                TrafficClass { ports: vec![80..=80, 443..=443], share: 0.7 },
                TrafficClass { ports: vec![20..=22], share: 0.3 },
            ],
            default_share: 0.0,
            delta: 0.0,
        };
        let mut rwm = Rwm::new(cfg, link);
        let table = [(443, 20), (80, 40), (80, 140), (22, 30), (21, 60)];
        let flows: Vec<FlowInfo> =
            table.iter().enumerate().map(|(i, &(p, rtt))| info(&rwm, key(p, i as u32), rtt)).collect();
        for f in &flows {
            rwm.on_flow_start(Time::ZERO, f);
        }
        assert_eq!((rwm.flows_in(0), rwm.flows_in(1), rwm.flows_in(2)), (3, 2, 0));
        let c = 100e6 / 8.0;
        let mut total = 0.0;
        for f in &flows {
            let w = rwm.window(Time::ZERO, f).unwrap() as f64;
            let rate = w / f.rtt.unwrap().secs_f64();
            let (share, n) = if f.class == 0 { (0.7, 3.0) } else { (0.3, 2.0) };
            assert!((rate - c * share / n).abs() < 1e-3 * c, "class {} rate {rate}", f.class);
            total += rate;
        }
        // Eq. 1 (the shares are applied through C_c = C * P_c).
        assert!((total - c).abs() < 1e-3 * c, "total {total}");

        // A removal hands the class's capacity to the remaining flows.
        rwm.on_flow_end(Time::ZERO, &flows[0]);
        let w = rwm.window(Time::ZERO, &flows[1]).unwrap() as f64;
        assert!((w - c * 0.7 / 2.0 * 0.040).abs() < 2.0);
    }

    #[test]
    fn delta_scales_the_bdp_by_ten_percent_either_way() {
        let link =
            Bottleneck { buffer_bytes: 1 << 20, link_rate: Rate::mbps(1000), default_mss: 1460, packet_bytes: None };
        for (delta, expected) in [(-0.1, 2_250_000.0), (0.0, 2_500_000.0), (0.1, 2_750_000.0)] {
            let mut rwm = Rwm::new(RwmConfig { delta, ..RwmConfig::default() }, link);
            let f = info(&rwm, key(80, 0), 20);
            rwm.on_flow_start(Time::ZERO, &f);
            let w = rwm.window(Time::ZERO, &f).unwrap() as f64;
            assert!((w - expected).abs() <= 1.0, "delta {delta}: {w}");
        }
    }

    #[test]
    fn unmatched_ports_fall_into_the_default_class() {
        let link =
            Bottleneck { buffer_bytes: 1 << 20, link_rate: Rate::mbps(10), default_mss: 1460, packet_bytes: None };
        let cfg = RwmConfig {
            classes: vec![TrafficClass { ports: vec![80..=80], share: 0.5 }],
            default_share: 0.5,
            delta: 0.0,
        };
        let rwm = Rwm::new(cfg, link);
        assert_eq!(rwm.classify(&key(80, 0)), 0);
        assert_eq!(rwm.classify(&key(8080, 0)), 1);
    }
}
