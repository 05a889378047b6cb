//! Scenario files (TOML): the schema, parameter substitution and validation.
//!
//! A scenario declares named parameters in `[params]`; anywhere else a
//! string `"{name}"` stands for that parameter's value, with its type. The
//! command line overrides parameters (`--set flows=24`). Every error names
//! the file, the field and what is allowed.

use crate::units::{RateQ, Size, SizeQ, TimeQ};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// A scenario error: which file, which field, what went wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: field `{}`: {}", self.file, self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// The file it was read from (for error messages); empty if built in code.
    #[serde(skip)]
    pub file: String,
    #[serde(default)]
    pub description: String,
    /// Where in the papers this experiment comes from.
    #[serde(default)]
    pub reference: String,
    /// Parameters after overrides (kept for the record and for reports).
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub run: RunSpec,
    #[serde(default)]
    pub tcp: TcpSpec,
    pub topology: TopologySpec,
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
    /// The paper's own numbers, free-form, for reports.
    #[serde(default)]
    pub paper: Option<toml::Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Hard stop; a run also ends when every finite transfer is complete.
    #[serde(default = "default_stop")]
    pub stop: TimeQ,
    /// Number of seeds a plain `netreturn run` replicates over.
    #[serde(default = "default_seeds")]
    pub seeds: u32,
    /// Period of the queue and window time series.
    #[serde(default = "default_sample")]
    pub sample_interval: TimeQ,
    /// TCP flows (by index) whose cwnd / rwnd / RTT are traced.
    #[serde(default)]
    pub trace_flows: Vec<usize>,
    /// Interfaces (by name, e.g. "R1->R2") written to a pcap file.
    #[serde(default)]
    pub pcap: Vec<String>,
    /// Interface whose queue and utilization are the run's headline
    /// (defaults to the topology's bottleneck).
    #[serde(default)]
    pub monitor: Option<String>,
    /// Ignore metrics of flows that start before this time (warm-up).
    #[serde(default)]
    pub warmup: Option<TimeQ>,
}

fn default_stop() -> TimeQ {
    TimeQ(netreturn_base::Time::from_secs(3600))
}
fn default_seeds() -> u32 {
    30
}
fn default_sample() -> TimeQ {
    TimeQ(netreturn_base::Time::from_millis(10))
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            stop: default_stop(),
            seeds: default_seeds(),
            sample_interval: default_sample(),
            trace_flows: vec![],
            pcap: vec![],
            monitor: None,
            warmup: None,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CcName {
    /// "Standard TCP" (RFC 793): no congestion window.
    None,
    Reno,
    NewReno,
    Cubic,
    /// XCP's sender (SPEC.md 2.7); needs XCP routers (`queue = "xcp"`).
    Xcp,
}

/// TCP settings for every endpoint of the scenario. Defaults are ns-3
/// 3.44's (SPEC.md section 6) except the segment size and buffers, which the
/// papers set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    #[serde(default = "default_cc")]
    pub cc: CcName,
    /// Payload bytes per full segment.
    #[serde(default = "default_segment")]
    pub segment_size: u32,
    #[serde(default = "default_buf")]
    pub rcv_buf: SizeQ,
    #[serde(default = "default_buf")]
    pub snd_buf: SizeQ,
    #[serde(default = "yes")]
    pub sack: bool,
    #[serde(default = "yes")]
    pub timestamps: bool,
    #[serde(default = "yes")]
    pub window_scaling: bool,
    #[serde(default = "default_delack")]
    pub delayed_ack_count: u32,
    #[serde(default = "default_delack_timeout")]
    pub delayed_ack_timeout: TimeQ,
    #[serde(default = "default_min_rto")]
    pub min_rto: TimeQ,
    #[serde(default = "default_iw")]
    pub initial_cwnd: u32,
    /// Loss recovery with SACK: PRR (RFC 6937, ns-3's default) or the
    /// classic RFC 6675 `cwnd = ssthresh`.
    #[serde(default = "default_recovery")]
    pub recovery: RecoveryName,
    /// CUBIC switches (RFC 9438): HyStart, fast convergence, Reno-friendly
    /// region.
    #[serde(default = "yes")]
    pub hystart: bool,
    #[serde(default = "yes")]
    pub fast_convergence: bool,
    #[serde(default = "yes")]
    pub tcp_friendliness: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryName {
    Prr,
    Classic,
}

fn default_recovery() -> RecoveryName {
    RecoveryName::Prr
}

fn default_cc() -> CcName {
    CcName::Cubic
}
fn default_segment() -> u32 {
    1458
}
fn default_buf() -> SizeQ {
    SizeQ(Size::Bytes(1 << 20))
}
fn yes() -> bool {
    true
}
fn default_delack() -> u32 {
    2
}
fn default_delack_timeout() -> TimeQ {
    TimeQ(netreturn_base::Time::from_millis(200))
}
fn default_min_rto() -> TimeQ {
    TimeQ(netreturn_base::Time::from_secs(1))
}
fn default_iw() -> u32 {
    10
}

impl Default for TcpSpec {
    fn default() -> Self {
        toml::from_str("").expect("all TCP fields have defaults")
    }
}

/// What manages a link's egress queue. The last five put a window-rewriting
/// gateway over a DropTail queue, as the papers run them (SPEC.md 2.x).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum QueueMethod {
    Droptail,
    Red,
    Ared,
    Ewt,
    Ewa,
    Awm,
    SapLaw,
    Rwm,
    /// XCP's router over DropTail, on both directions of the link; the
    /// senders run XCP (`crate::xcp`).
    Xcp,
}

impl QueueMethod {
    pub const ALL: [&'static str; 9] = ["droptail", "red", "ared", "ewt", "ewa", "awm", "sap-law", "rwm", "xcp"];
}

/// One direction of a point-to-point link (the other direction gets the same
/// rate, delay and buffer under DropTail, unless the builder says otherwise).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: RateQ,
    /// One-way propagation delay...
    #[serde(default)]
    pub delay: Option<TimeQ>,
    /// ...or the round-trip propagation delay of the link (delay = rtt / 2),
    /// as the papers' tables give it.
    #[serde(default)]
    pub rtt: Option<TimeQ>,
    #[serde(default = "default_method")]
    pub queue: QueueMethod,
    /// Queue capacity: bytes ("97kB") or packets ("100p").
    #[serde(default = "default_buffer")]
    pub buffer: SizeQ,
    /// Bernoulli loss probability per packet on this link (lossy / wireless).
    #[serde(default)]
    pub loss: f64,
    /// Gateway parameters (read when `queue` names a gateway).
    #[serde(default)]
    pub gateway: Option<toml::Value>,
    /// RED parameters overriding the Linux-like preset.
    #[serde(default)]
    pub red: Option<RedSpec>,
}

fn default_method() -> QueueMethod {
    QueueMethod::Droptail
}
fn default_buffer() -> SizeQ {
    // ns-3's default device queue.
    SizeQ(Size::Packets(100))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    pub min_th: Option<SizeQ>,
    pub max_th: Option<SizeQ>,
    pub w_q: Option<f64>,
    pub max_p: Option<f64>,
    pub gentle: Option<bool>,
    pub byte_mode: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum TopologySpec {
    /// n sources -> R1 -> R2 -> n receivers (seed 000 Fig. 4). Hosts are
    /// `left0..`, `right0..`; groups `left`, `right`; the bottleneck
    /// interface is `R1->R2`.
    Dumbbell { pairs: u32, access: LinkSpec, bottleneck: LinkSpec, receivers: LinkSpec },
    /// A chain of routers R0..Rk joined by `hops` links (parking lot, seed
    /// 002 section 3.5). Each router Ri has `hosts_per_router` hosts
    /// `hRi_j` (groups `at0`..`atk`) on access links; `end_hosts` hosts
    /// `src0..`/`dst0..` hang off R0 and Rk (groups `src`, `dst`).
    Chain {
        hops: u32,
        link: LinkSpec,
        /// Per-hop overrides, by hop index.
        #[serde(default)]
        overrides: BTreeMap<String, LinkSpec>,
        access: LinkSpec,
        #[serde(default)]
        hosts_per_router: u32,
        #[serde(default)]
        end_hosts: u32,
    },
    /// One bottleneck R1->R2 shared by `flows` sender/receiver pairs whose
    /// access links give each pair its own round-trip time:
    /// rtt_i = base_rtt + step * i (seed 002 Table 1 case 2).
    MultiRtt { pairs: u32, bottleneck: LinkSpec, access_rate: RateQ, base_rtt: TimeQ, step: TimeQ },
    /// An explicit graph.
    Graph { nodes: Vec<String>, links: Vec<GraphLink>, #[serde(default)] groups: BTreeMap<String, Vec<String>> },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    #[serde(flatten)]
    pub spec: LinkSpec,
}

/// A random or fixed time.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Dist {
    Fixed(TimeQ),
    Uniform { uniform: [TimeQ; 2] },
    Exponential { exponential: TimeQ },
}

impl Default for Dist {
    fn default() -> Self {
        Dist::Fixed(TimeQ(netreturn_base::Time::ZERO))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum TrafficSpec {
    /// `count` TCP transfers of `bytes` each (flow i from `from`[i], to
    /// `to`[i], cycling through the groups).
    TcpFile {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        bytes: SizeQ,
        #[serde(default)]
        start: Dist,
        #[serde(default = "default_port")]
        port: u16,
    },
    /// Long-lived TCP transfers from `start` until `stop` (or the run's end).
    TcpBulk {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        #[serde(default)]
        start: Dist,
        #[serde(default)]
        stop: Option<TimeQ>,
        #[serde(default = "default_port")]
        port: u16,
    },
    /// Short web-like TCP transfers (the XCP paper's and seed 002's mice,
    /// SPEC.md 2.7): arrivals a Poisson process of `rate` new flows per
    /// second from `start` to `stop` (default: the run's stop), sizes
    /// Pareto with mean `mean_size` (default 30 packets) and `shape`
    /// (default 1.35). Arrival k goes from `from`[k] to `to`[k], cycling.
    TcpWeb {
        from: String,
        to: String,
        rate: f64,
        #[serde(default = "default_web_size")]
        mean_size: SizeQ,
        #[serde(default = "default_web_shape")]
        shape: f64,
        #[serde(default)]
        start: Option<TimeQ>,
        #[serde(default)]
        stop: Option<TimeQ>,
        #[serde(default = "default_port")]
        port: u16,
    },
    /// Constant-bit-rate UDP.
    UdpCbr {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        rate: RateQ,
        #[serde(default = "default_udp_packet")]
        packet: u32,
        #[serde(default)]
        start: Dist,
        #[serde(default)]
        stop: Option<TimeQ>,
    },
    /// UDP On/Off source: exponential on and off periods, `rate` while on.
    UdpOnOff {
        from: String,
        to: String,
        #[serde(default = "one")]
        count: u32,
        rate: RateQ,
        #[serde(default = "default_udp_packet")]
        packet: u32,
        on: TimeQ,
        off: TimeQ,
        #[serde(default)]
        start: Dist,
        #[serde(default)]
        stop: Option<TimeQ>,
    },
}

fn one() -> u32 {
    1
}
fn default_web_size() -> SizeQ {
    SizeQ(Size::Packets(30))
}
fn default_web_shape() -> f64 {
    1.35
}
fn default_port() -> u16 {
    80
}
fn default_udp_packet() -> u32 {
    1400
}

const TOPOLOGY_KINDS: &[&str] = &["dumbbell", "chain", "multi-rtt", "graph"];
const TRAFFIC_KINDS: &[&str] = &["tcp-file", "tcp-bulk", "tcp-web", "udp-cbr", "udp-on-off"];

/// Turns `{ kind = "k", rest.. }` into `{ k = { rest.. } }`.
fn untag(v: &mut toml::Value, at: &str, kinds: &[&str], tags: &mut Vec<(String, String)>) -> Result<(), (String, String)> {
    let toml::Value::Table(t) = v else {
        return Err((at.to_string(), "expected a table".into()));
    };
    let kind = match t.remove("kind") {
        Some(toml::Value::String(k)) if kinds.contains(&k.as_str()) => k,
        Some(other) => return Err((format!("{at}.kind"), format!("unknown kind {other}; allowed: {}", kinds.join(", ")))),
        None => return Err((format!("{at}.kind"), format!("missing; allowed: {}", kinds.join(", ")))),
    };
    let rest = std::mem::take(t);
    t.insert(kind.clone(), toml::Value::Table(rest));
    tags.push((at.to_string(), kind));
    Ok(())
}

/// Replaces every string `"{name}"` with the parameter's value.
fn substitute(v: &mut toml::Value, params: &BTreeMap<String, toml::Value>, path: &str) -> Result<(), (String, String)> {
    match v {
        toml::Value::String(s) => {
            if let Some(name) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                match params.get(name) {
                    Some(p) => *v = p.clone(),
                    None => {
                        let known: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
                        return Err((path.to_string(), format!("unknown parameter {{{name}}}; declared in [params]: {}", known.join(", "))));
                    }
                }
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                substitute(x, params, &format!("{path}[{i}]"))?;
            }
        }
        toml::Value::Table(t) => {
            for (k, x) in t.iter_mut() {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                substitute(x, params, &p)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Parses an override value as TOML (numbers, booleans, quoted strings),
/// falling back to a bare string (`queue=red`).
pub fn parse_override(value: &str) -> toml::Value {
    let doc = format!("v = {value}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(value.to_string())),
        Err(_) => toml::Value::String(value.to_string()),
    }
}

impl Scenario {
    /// How errors found after parsing name the scenario: its file if known.
    pub fn origin(&self) -> String {
        if self.file.is_empty() { self.name.clone() } else { self.file.clone() }
    }

    /// Loads a scenario from TOML text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let err = |field: &str, message: String| ScenarioError { file: file.to_string(), field: field.to_string(), message };
        let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| err("", e.message().to_string() + &span_hint(text, e.span())))?;
        let mut params = match doc.remove("params") {
            Some(toml::Value::Table(t)) => t.into_iter().collect::<BTreeMap<_, _>>(),
            Some(_) => return Err(err("params", "must be a table of name = value".into())),
            None => BTreeMap::new(),
        };
        for (name, value) in overrides {
            let Some(old) = params.get(name) else {
                let known: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
                return Err(err(&format!("params.{name}"), format!("--set names an unknown parameter; this scenario has: {}", known.join(", "))));
            };
            let new = parse_override(value);
            let compatible = matches!(
                (old, &new),
                (toml::Value::Integer(_), toml::Value::Integer(_))
                    | (toml::Value::Float(_), toml::Value::Float(_) | toml::Value::Integer(_))
                    | (toml::Value::Boolean(_), toml::Value::Boolean(_))
                    | (toml::Value::String(_), toml::Value::String(_))
            );
            if !compatible {
                return Err(err(&format!("params.{name}"), format!("--set {name}={value}: expected {} like the default {old}", old.type_str())));
            }
            let new = match (old, new) {
                (toml::Value::Float(_), toml::Value::Integer(i)) => toml::Value::Float(i as f64),
                (_, n) => n,
            };
            params.insert(name.clone(), new);
        }
        let mut root = toml::Value::Table(doc);
        substitute(&mut root, &params, "").map_err(|(f, m)| err(&f, m))?;
        // `kind = "dumbbell"` tables become `{ dumbbell = { ... } }`, which
        // serde reads as an externally tagged enum and, unlike an internally
        // tagged one, with the full path of any error inside.
        let mut tags: Vec<(String, String)> = vec![];
        if let toml::Value::Table(t) = &mut root {
            if let Some(v) = t.get_mut("topology") {
                untag(v, "topology", TOPOLOGY_KINDS, &mut tags).map_err(|(f, m)| err(&f, m))?;
            }
            if let Some(toml::Value::Array(a)) = t.get_mut("traffic") {
                for (i, v) in a.iter_mut().enumerate() {
                    untag(v, &format!("traffic[{i}]"), TRAFFIC_KINDS, &mut tags).map_err(|(f, m)| err(&f, m))?;
                }
            }
        }
        if let toml::Value::Table(t) = &mut root {
            t.insert("params".into(), toml::Value::Table(params.clone().into_iter().collect()));
        }
        let scenario: Scenario = serde_path_to_error::deserialize(root).map_err(|e| {
            let mut field = e.path().to_string();
            if field == "." {
                field.clear();
            }
            for (at, kind) in &tags {
                if let Some(rest) = field.strip_prefix(&format!("{at}.{kind}")) {
                    field = format!("{at}{rest}");
                }
            }
            err(&field, e.into_inner().to_string())
        })?;
        scenario.validate().map_err(|(f, m)| err(&f, m))?;
        let mut scenario = scenario;
        scenario.file = file.to_string();
        Ok(scenario)
    }

    pub fn from_file(path: &Path, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError { file: file.clone(), field: String::new(), message: format!("cannot read: {e}") })?;
        Scenario::from_toml(&text, &file, overrides)
    }

    /// Checks that serde's types cannot express.
    fn validate(&self) -> Result<(), (String, String)> {
        let check_link = |path: &str, l: &LinkSpec| -> Result<(), (String, String)> {
            if l.delay.is_some() && l.rtt.is_some() {
                return Err((format!("{path}.delay"), "give either `delay` (one way) or `rtt`, not both".into()));
            }
            if !(0.0..=1.0).contains(&l.loss) {
                return Err((format!("{path}.loss"), format!("{} is not a probability in [0, 1]", l.loss)));
            }
            if l.buffer.0.bytes(1500) == 0 {
                return Err((format!("{path}.buffer"), "must be larger than zero".into()));
            }
            Ok(())
        };
        match &self.topology {
            TopologySpec::Dumbbell { pairs, access, bottleneck, receivers } => {
                if *pairs == 0 {
                    return Err(("topology.pairs".into(), "must be at least 1".into()));
                }
                check_link("topology.access", access)?;
                check_link("topology.bottleneck", bottleneck)?;
                check_link("topology.receivers", receivers)?;
            }
            TopologySpec::Chain { hops, link, access, .. } => {
                if *hops == 0 {
                    return Err(("topology.hops".into(), "must be at least 1".into()));
                }
                check_link("topology.link", link)?;
                check_link("topology.access", access)?;
            }
            TopologySpec::MultiRtt { pairs, bottleneck, .. } => {
                if *pairs == 0 {
                    return Err(("topology.pairs".into(), "must be at least 1".into()));
                }
                check_link("topology.bottleneck", bottleneck)?;
            }
            TopologySpec::Graph { links, .. } => {
                for (i, l) in links.iter().enumerate() {
                    check_link(&format!("topology.links[{i}]"), &l.spec)?;
                }
            }
        }
        if self.tcp.segment_size < 64 || self.tcp.segment_size > 65_000 {
            return Err(("tcp.segment_size".into(), format!("{} is outside 64..=65000 bytes", self.tcp.segment_size)));
        }
        for (i, t) in self.traffic.iter().enumerate() {
            if let TrafficSpec::UdpCbr { packet, .. } | TrafficSpec::UdpOnOff { packet, .. } = t {
                if *packet == 0 || *packet > 65_000 {
                    return Err((format!("traffic[{i}].packet"), "must be between 1 and 65000 bytes".into()));
                }
            }
        }
        Ok(())
    }
}

fn span_hint(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(r) => {
            let line = text[..r.start.min(text.len())].matches('\n').count() + 1;
            format!(" (line {line})")
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINI: &str = r#"
        name = "mini"
        [params]
        flows = 4
        queue = "droptail"
        [topology]
        kind = "dumbbell"
        pairs = "{flows}"
        access = { rate = "100Mbps", rtt = "2ms" }
        bottleneck = { rate = "45Mbps", rtt = "80ms", queue = "{queue}", buffer = "97kB" }
        receivers = { rate = "100Mbps", rtt = "2ms" }
        [[traffic]]
        kind = "tcp-file"
        from = "left"
        to = "right"
        count = "{flows}"
        bytes = "5MB"
        start = { uniform = ["1s", "8s"] }
    "#;

    #[test]
    fn parameters_are_substituted_with_their_types_and_overridable() {
        let s = Scenario::from_toml(MINI, "mini.toml", &[("flows".into(), "31".into()), ("queue".into(), "red".into())]).unwrap();
        match &s.topology {
            TopologySpec::Dumbbell { pairs, bottleneck, .. } => {
                assert_eq!(*pairs, 31);
                assert_eq!(bottleneck.queue, QueueMethod::Red);
            }
            _ => panic!("not a dumbbell"),
        }
    }

    #[test]
    fn a_bad_value_names_file_field_and_allowed_values() {
        let e = Scenario::from_toml(MINI, "mini.toml", &[("queue".into(), "fifo".into())]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("mini.toml: field `topology.bottleneck.queue`"), "{msg}");
        assert!(msg.contains("droptail") && msg.contains("ared"), "{msg}");
    }

    #[test]
    fn an_unknown_override_lists_the_parameters() {
        let e = Scenario::from_toml(MINI, "mini.toml", &[("flow".into(), "3".into())]).unwrap_err();
        assert_eq!(e.field, "params.flow");
        assert!(e.message.contains("flows, queue"), "{}", e.message);
    }

    #[test]
    fn an_override_of_the_wrong_type_is_refused() {
        let e = Scenario::from_toml(MINI, "mini.toml", &[("flows".into(), "many".into())]).unwrap_err();
        assert!(e.message.contains("expected integer"), "{}", e.message);
    }

    #[test]
    fn unknown_fields_are_refused() {
        let text = MINI.replace("bytes = \"5MB\"", "bytes = \"5MB\"\nbites = 3");
        let e = Scenario::from_toml(&text, "x.toml", &[]).unwrap_err();
        assert!(e.message.contains("bites"), "{e}");
    }

    #[test]
    fn a_bad_unit_is_reported_at_its_field() {
        let text = MINI.replace("\"45Mbps\"", "\"45 parsecs\"");
        let e = Scenario::from_toml(&text, "x.toml", &[]).unwrap_err();
        assert_eq!(e.field, "topology.bottleneck.rate");
    }

    #[test]
    fn syntax_errors_give_the_line() {
        let e = Scenario::from_toml("name = \"x\"\n[topology\n", "x.toml", &[]).unwrap_err();
        assert!(e.message.contains("line 2"), "{e}");
    }
}
