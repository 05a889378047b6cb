//! The list of mechanisms: every window controller and queue discipline is
//! declared here once, with its name in scenario files, its config type and
//! its state type. The closed enums ([`ControllerConfig`], [`Controller`]),
//! the `gateway = { ... }` table of a link ([`GatewayParams`]), the names a
//! link's `queue` accepts ([`Method`]) and the documentation table are all
//! generated from that list; the simulator, the real gateway, the Python
//! testbed and `netreturn list` read it from here.
//!
//! Adding a window controller `foo` (docs/mechanisms.md walks through it):
//! 1. `src/foo.rs`: `FooConfig` (serde, `#[serde(default,
//!    deny_unknown_fields)]`, `Default`), `Foo::new(FooConfig, Bottleneck)`
//!    and `impl WindowController for Foo`;
//! 2. `src/lib.rs`: `pub mod foo;`
//! 3. one line in `controllers!` below.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

use netreturn_base::{FlowKey, Time};

use crate::controller::{Bottleneck, FlowInfo, WindowController};
use crate::queue::aqm::AqmParams;
use crate::queue::{AdaptiveRed, AdaptiveRedConfig, Discipline, DropTail, Limit, Red, RedConfig, RedParams};
use crate::view::QueueEvent;

macro_rules! controllers {
    ($( $variant:ident, $field:ident = $name:literal, $title:literal, $paper:literal,
        needs_rate: $needs_rate:literal, $module:ident :: $state:ident ( $cfg:ident ); )*) => {
        /// Which controller a gateway runs, with its settings.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ControllerConfig {
            $( $variant(crate::$module::$cfg), )*
        }

        /// The closed set of controllers (STYLE.md: a config enum rather
        /// than trait objects, so the per-ACK path is a `match`, not a
        /// virtual call).
        #[derive(Clone, Debug)]
        pub enum Controller {
            $( $variant(crate::$module::$state), )*
        }

        /// A controller's name, without settings.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ControllerKind {
            $( $variant, )*
        }

        impl ControllerKind {
            /// Every controller, in the order of the papers.
            pub const ALL: &'static [ControllerKind] = &[$( ControllerKind::$variant, )*];

            /// The name in scenario files (`queue = "sap-law"`), on the
            /// gateway's command line and in the testbed.
            pub const fn name(self) -> &'static str {
                match self { $( ControllerKind::$variant => $name, )* }
            }
            /// The name in reports and traces ("SAP-LAW").
            pub const fn title(self) -> &'static str {
                match self { $( ControllerKind::$variant => $title, )* }
            }
            /// Where the algorithm comes from.
            pub const fn paper(self) -> &'static str {
                match self { $( ControllerKind::$variant => $paper, )* }
            }
            /// Whether the controller needs the link rate `C`.
            pub const fn needs_rate(self) -> bool {
                match self { $( ControllerKind::$variant => $needs_rate, )* }
            }
            /// The keys of its `gateway.<name>` table.
            pub fn keys(self) -> &'static [&'static str] {
                match self { $( ControllerKind::$variant => struct_fields::<crate::$module::$cfg>(), )* }
            }
            /// Its settings with every key at the default.
            pub fn default_config(self) -> ControllerConfig {
                match self { $( ControllerKind::$variant => ControllerConfig::$variant(Default::default()), )* }
            }
        }

        impl ControllerConfig {
            pub fn kind(&self) -> ControllerKind {
                match self { $( ControllerConfig::$variant(_) => ControllerKind::$variant, )* }
            }
        }

        impl Default for ControllerConfig {
            fn default() -> ControllerConfig {
                ControllerKind::ALL[0].default_config()
            }
        }

        impl Controller {
            pub fn new(cfg: &ControllerConfig, link: Bottleneck) -> Controller {
                match cfg {
                    $( ControllerConfig::$variant(c) => Controller::$variant(crate::$module::$state::new(c.clone(), link)), )*
                }
            }

            /// A short name for traces and reports.
            pub fn name(&self) -> &'static str {
                match self { $( Controller::$variant(_) => ControllerKind::$variant.title(), )* }
            }
        }

        macro_rules! dispatch {
            ($self_:expr, $c:ident => $e:expr) => {
                match $self_ { $( Controller::$variant($c) => $e, )* }
            };
        }

        /// A link's `gateway` table: one sub-table per controller, so that a
        /// sweep over `queue` can carry the parameters of every method (the
        /// one `queue` names is used), and the settings every gateway shares.
        #[derive(Clone, Debug, Default, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct GatewayParams {
            $( #[serde(rename = $name, default)] pub $field: Option<crate::$module::$cfg>, )*
            /// Window scale assumed for flows whose handshake was not seen
            /// (RFC 7323: 0..=14).
            #[serde(default, deserialize_with = "wscale")]
            pub assume_wscale: Option<u8>,
            /// The controller sees its queue once per `tick` (what the
            /// kernel datapath does, issue 28), not at every enqueue and
            /// dequeue; unset: every event.
            #[serde(default)]
            pub tick: Option<netreturn_base::Time>,
        }

        impl GatewayParams {
            /// The settings of controller `kind`: its table, or the defaults.
            pub fn config(&self, kind: ControllerKind) -> ControllerConfig {
                match kind {
                    $( ControllerKind::$variant => ControllerConfig::$variant(self.$field.clone().unwrap_or_default()), )*
                }
            }
        }
    };
}

// The one list of window controllers. Adding one is one line here.
controllers! {
    Ewt, ewt = "ewt", "EWT", "Early Window Tailoring (the EWT paper §4, Algorithm 1)", needs_rate: false, ewt::Ewt(EwtConfig);
    Ewa, ewa = "ewa", "EWA", "Explicit Window Adaptation (Kalampoukas et al. 1998; the EWT paper §3.1, eqs. 2-3)", needs_rate: false, ewa::Ewa(EwaConfig);
    Awm, awm = "awm", "AWM", "Active Window Management (the AWM paper §2)", needs_rate: true, awm::Awm(AwmConfig);
    SapLaw, sap_law = "sap-law", "SAP-LAW", "Smart Access Point with Limited Advertised Window (the EWT paper §3.2, eq. 5)", needs_rate: true, saplaw::SapLaw(SapLawConfig);
    Rwm, rwm = "rwm", "RWM", "Receive Window Modulation (the RWM paper §III, Algorithm 1)", needs_rate: true, rwm::Rwm(RwmConfig);
}

impl WindowController for Controller {
    fn on_queue(&mut self, now: Time, ev: &QueueEvent) {
        dispatch!(self, c => c.on_queue(now, ev))
    }
    fn on_data_other(&mut self, now: Time, bytes: u32) {
        dispatch!(self, c => c.on_data_other(now, bytes))
    }
    fn on_inband(&mut self, now: Time, seg: &crate::view::TcpView, ib: &netreturn_base::InBand) {
        dispatch!(self, c => c.on_inband(now, seg, ib))
    }
    fn on_flow_start(&mut self, now: Time, flow: &FlowInfo) {
        dispatch!(self, c => c.on_flow_start(now, flow))
    }
    fn on_flow_end(&mut self, now: Time, flow: &FlowInfo) {
        dispatch!(self, c => c.on_flow_end(now, flow))
    }
    fn classify(&self, key: &FlowKey) -> u16 {
        dispatch!(self, c => c.classify(key))
    }
    fn window(&mut self, now: Time, flow: &FlowInfo) -> Option<u64> {
        dispatch!(self, c => c.window(now, flow))
    }
    fn rule(&mut self, now: Time, flow: &FlowInfo) -> Option<crate::controller::WindowRule> {
        dispatch!(self, c => c.rule(now, flow))
    }
    fn floor(&self, flow: &FlowInfo) -> u64 {
        dispatch!(self, c => c.floor(flow))
    }
}

fn wscale<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    let s = i64::deserialize(d)?;
    if !(0..=14).contains(&s) {
        return Err(de::Error::custom(format!("{s} is outside 0..=14 (RFC 7323)")));
    }
    Ok(Some(s as u8))
}

/// The queue disciplines a link can run on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueKind {
    DropTail,
    Red,
    Ared,
    CoDel,
    FqCoDel,
    Pie,
    FqPie,
    DualPi2,
    Cobalt,
}

impl QueueKind {
    pub const ALL: &'static [QueueKind] = &[
        QueueKind::DropTail,
        QueueKind::Red,
        QueueKind::Ared,
        QueueKind::CoDel,
        QueueKind::FqCoDel,
        QueueKind::Pie,
        QueueKind::FqPie,
        QueueKind::DualPi2,
        QueueKind::Cobalt,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            QueueKind::DropTail => "droptail",
            QueueKind::Red => "red",
            QueueKind::Ared => "ared",
            QueueKind::CoDel => "codel",
            QueueKind::FqCoDel => "fq_codel",
            QueueKind::Pie => "pie",
            QueueKind::FqPie => "fq_pie",
            QueueKind::DualPi2 => "dualpi2",
            QueueKind::Cobalt => "cobalt",
        }
    }
    pub const fn title(self) -> &'static str {
        match self {
            QueueKind::DropTail => "DropTail",
            QueueKind::Red => "RED",
            QueueKind::Ared => "Adaptive RED",
            QueueKind::CoDel => "CoDel",
            QueueKind::FqCoDel => "FQ-CoDel",
            QueueKind::Pie => "PIE",
            QueueKind::FqPie => "FQ-PIE",
            QueueKind::DualPi2 => "DualPI2",
            QueueKind::Cobalt => "COBALT",
        }
    }
    pub const fn paper(self) -> &'static str {
        match self {
            QueueKind::DropTail => "FIFO, drop on overflow",
            QueueKind::Red => "Floyd & Jacobson 1993; Linux-like preset of the EWT paper's Table 3",
            QueueKind::Ared => "Floyd, Gummadi & Shenker 2001",
            QueueKind::CoDel => "RFC 8289 (Nichols & Jacobson), its defaults: target 5 ms, interval 100 ms",
            QueueKind::FqCoDel => "RFC 8290: 1024 flow queues, quantum 1514 B, CoDel per flow",
            QueueKind::Pie => "RFC 8033: target 15 ms, T_UPDATE 15 ms, alpha 0.125, beta 1.25",
            QueueKind::FqPie => "Linux sch_fq_pie: the flow queues of RFC 8290, PIE (RFC 8033) per flow",
            QueueKind::DualPi2 => "RFC 9332 with Linux sch_dualpi2's defaults: target 15 ms, k = 2, step 1 ms",
            QueueKind::Cobalt => {
                "CAKE's AQM (Linux sch_cake cobalt_*, ns-3 CobaltQueueDisc): CoDel 5 ms / 100 ms and BLUE 1/256, 1/4096"
            }
        }
    }

    /// Whether the discipline decides when a packet leaves (CoDel, FQ,
    /// PIE's delay, DualPI2's coupling: [`crate::queue::aqm`]) rather than
    /// only at its arrival, so that a packet's departure is not known when
    /// it is admitted.
    pub const fn decides_at_dequeue(self) -> bool {
        !matches!(self, QueueKind::DropTail | QueueKind::Red | QueueKind::Ared)
    }

    /// The dequeue-time queue of this kind over `limit`, with the link's
    /// `aqm` table over the defaults; `salt` perturbs the flow hash of FQ
    /// kinds (drawn from the run's seed). `None` for the admission-time
    /// FIFOs.
    pub fn aqm<T>(self, limit: Limit, salt: u64, params: Option<&AqmParams>) -> Option<crate::queue::aqm::Aqm<T>> {
        use crate::queue::aqm::*;
        let p = params.cloned().unwrap_or_default();
        Some(match self {
            QueueKind::DropTail | QueueKind::Red | QueueKind::Ared => return None,
            QueueKind::CoDel => Aqm::CoDel(Single::new(CoDel::new(p.codel(false)), limit)),
            QueueKind::FqCoDel => Aqm::FqCoDel(Fq::new(p.fq(salt), limit, CoDel::new(p.codel(true)))),
            QueueKind::Pie => Aqm::Pie(Single::new(Pie::new(p.pie()), limit)),
            QueueKind::FqPie => Aqm::FqPie(Fq::new(p.fq(salt), limit, Pie::new(p.pie()))),
            QueueKind::DualPi2 => Aqm::DualPi2(DualPi2::new(p.dualpi2(), limit)),
            QueueKind::Cobalt => Aqm::Cobalt(Cobalt::new(p.cobalt(), limit)),
        })
    }

    /// The domain check of the discipline's table as it would build it:
    /// (the table, the key at fault, what is allowed). RED and ARED check
    /// their `red` table, the dequeue-time queues their `aqm` table;
    /// DropTail reads neither.
    pub fn check(
        self,
        limit: Limit,
        mean_packet: u32,
        red: Option<&RedParams>,
        aqm: Option<&AqmParams>,
    ) -> Result<(), (&'static str, &'static str, String)> {
        match self {
            QueueKind::Red | QueueKind::Ared => {
                red_config(limit, mean_packet, Time::ZERO, red).check().map_err(|(k, m)| ("red", k, m))
            }
            _ if self.decides_at_dequeue() => aqm.map_or(Ok(()), |a| a.check().map_err(|(k, m)| ("aqm", k, m))),
            _ => Ok(()),
        }
    }

    /// The admission discipline over a queue of `limit`, with the link's
    /// `red` table over the Linux-like preset (RED and ARED; DropTail
    /// ignores it). `mean_packet` is the typical packet, `idle_packet_time`
    /// its transmission time (RED's idle decay). The dequeue-time kinds
    /// ([`decides_at_dequeue`](Self::decides_at_dequeue)) hold their packets
    /// in their own [`aqm`](Self::aqm) queue; their admission FIFO is a
    /// DropTail of the same limit that stays empty.
    pub fn discipline(
        self,
        limit: Limit,
        mean_packet: u32,
        idle_packet_time: Time,
        red: Option<&RedParams>,
    ) -> Discipline {
        let red_cfg = || red_config(limit, mean_packet, idle_packet_time, red);
        match self {
            QueueKind::Red if red.and_then(|r| r.ns3_rules).unwrap_or(false) => {
                Discipline::Red(Box::new(Red::ns3(red_cfg())))
            }
            QueueKind::Red => Discipline::Red(Box::new(Red::new(red_cfg()))),
            QueueKind::Ared => Discipline::AdaptiveRed(Box::new(AdaptiveRed::new(
                AdaptiveRedConfig::recommended(red_cfg()).with_mode(red.and_then(|r| r.ared_mode).unwrap_or_default()),
            ))),
            _ => Discipline::DropTail(DropTail::new(limit)),
        }
    }
    /// The name of the link's table this discipline reads: `red` (RED and
    /// ARED), `aqm` (the dequeue-time queues), or none (DropTail).
    pub fn table(self) -> Option<&'static str> {
        match self {
            QueueKind::Red | QueueKind::Ared => Some("red"),
            _ if self.decides_at_dequeue() => Some("aqm"),
            _ => None,
        }
    }

    /// The keys of the link's table: `red` (RED and ARED) or `aqm` (the
    /// dequeue-time queues).
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            QueueKind::Red | QueueKind::Ared => struct_fields::<crate::queue::RedParams>(),
            // The keys of the `aqm` table each reads (`AqmParams`); the
            // others it ignores, so one file can sweep `queue`.
            // `device_queue` is the link's (the simulator's world reads it
            // for every dequeue-time queue).
            QueueKind::CoDel => &["ecn", "target", "interval", "device_queue", "invsqrt"],
            QueueKind::FqCoDel => &["ecn", "target", "interval", "flows", "quantum", "device_queue", "invsqrt"],
            QueueKind::Pie => &["ecn", "target", "t_update", "alpha", "beta", "max_burst", "device_queue"],
            QueueKind::FqPie => {
                &["ecn", "target", "t_update", "alpha", "beta", "max_burst", "flows", "quantum", "device_queue"]
            }
            QueueKind::DualPi2 => &["target", "t_update", "alpha", "beta", "k", "step", "c_protection", "device_queue"],
            QueueKind::Cobalt => &["ecn", "target", "interval", "device_queue"],
            QueueKind::DropTail => &[],
        }
    }
}

/// Router stages that rewrite forward packets' in-band fields over a
/// DropTail queue (`crate::stage`), chosen as a link's `queue`. NGWA's
/// router is attached by its own `[ngwa]` table instead (its routers sit on
/// every hop of the path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StageKind {
    /// XCP's router on both directions of the link; the senders run XCP.
    Xcp,
}

impl StageKind {
    pub const ALL: &'static [StageKind] = &[StageKind::Xcp];

    pub const fn name(self) -> &'static str {
        match self {
            StageKind::Xcp => "xcp",
        }
    }
    pub const fn title(self) -> &'static str {
        match self {
            StageKind::Xcp => "XCP",
        }
    }
    pub const fn paper(self) -> &'static str {
        match self {
            StageKind::Xcp => "Katabi, Handley & Rohrs 2002; the AWM paper's reference (docs/decisions.md §2.7)",
        }
    }
}

/// What manages a link's egress queue: a discipline, a window-rewriting
/// gateway over a DropTail queue, as the papers run them (SPEC.md 2.x), or
/// a router stage over a DropTail queue. Written as one name:
/// `queue = "red"`, `queue = "ewt"`, `queue = "xcp"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Queue(QueueKind),
    Window(ControllerKind),
    Stage(StageKind),
}

impl Method {
    /// Every method, disciplines first.
    pub fn all() -> impl Iterator<Item = Method> {
        QueueKind::ALL
            .iter()
            .map(|&q| Method::Queue(q))
            .chain(ControllerKind::ALL.iter().map(|&c| Method::Window(c)))
            .chain(StageKind::ALL.iter().map(|&k| Method::Stage(k)))
    }
    pub fn name(self) -> &'static str {
        match self {
            Method::Queue(q) => q.name(),
            Method::Window(c) => c.name(),
            Method::Stage(k) => k.name(),
        }
    }
    /// The discipline of the queue under it.
    pub fn queue(self) -> QueueKind {
        match self {
            Method::Queue(q) => q,
            Method::Window(_) | Method::Stage(_) => QueueKind::DropTail,
        }
    }
    pub fn from_name(name: &str) -> Option<Method> {
        Method::all().find(|m| m.name() == name)
    }
    /// The names, comma-separated, for error messages.
    pub fn allowed() -> String {
        Method::all().map(Method::name).collect::<Vec<_>>().join(", ")
    }
    /// The window controller it runs, if any.
    pub fn controller(self) -> Option<ControllerKind> {
        match self {
            Method::Window(c) => Some(c),
            Method::Queue(_) | Method::Stage(_) => None,
        }
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Method, String> {
        Method::from_name(s).ok_or_else(|| format!("unknown queue {s:?}; allowed: {}", Method::allowed()))
    }
}

impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Method, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Method;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "one of {}", Method::allowed())
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Method, E> {
                s.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

/// The field names of a struct that derives `Deserialize`: serde passes
/// them to `deserialize_struct`, which this deserializer records and then
/// refuses. Keeps the documented keys the ones the parser accepts.
pub fn struct_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields<'a>(&'a mut &'static [&'static str]);
    #[derive(Debug)]
    struct Stop;
    impl fmt::Display for Stop {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl de::Error for Stop {
        fn custom<M: fmt::Display>(_: M) -> Stop {
            Stop
        }
    }
    impl<'de, 'a> Deserializer<'de> for Fields<'a> {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            *self.0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut out: &'static [&'static str] = &[];
    let _ = T::deserialize(Fields(&mut out));
    out
}

/// RED's configuration for a queue of `limit`: the Linux-like preset (seed
/// 000 Table 3) under the link's `red` table.
fn red_config(limit: Limit, mean_packet: u32, idle_packet_time: Time, red: Option<&RedParams>) -> RedConfig {
    let mut c = RedConfig::linux_like(limit.bytes(mean_packet), mean_packet, idle_packet_time);
    c.limit = limit;
    match red {
        Some(r) => r.apply(c),
        None => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_name_parses_back_to_itself() {
        for m in Method::all() {
            assert_eq!(m.name().parse::<Method>(), Ok(m));
        }
        assert_eq!(Method::all().count(), QueueKind::ALL.len() + ControllerKind::ALL.len() + StageKind::ALL.len());
    }

    #[test]
    fn an_unknown_method_lists_every_allowed_name() {
        let e = "fifo".parse::<Method>().unwrap_err();
        for m in Method::all() {
            assert!(e.contains(m.name()), "{e}");
        }
    }

    #[test]
    fn every_controller_documents_the_keys_its_parser_accepts() {
        assert_eq!(ControllerKind::Ewt.keys(), &["st"]);
        assert!(ControllerKind::Ewa.keys().contains(&"w_up"));
        for &k in ControllerKind::ALL {
            assert!(!k.keys().is_empty(), "{k:?} has no keys");
            assert_eq!(k.default_config().kind(), k);
        }
    }

    #[test]
    fn the_gateway_table_has_one_entry_per_controller_plus_the_shared_keys() {
        let fields = struct_fields::<GatewayParams>();
        let mut expect: Vec<&str> = ControllerKind::ALL.iter().map(|k| k.name()).collect();
        expect.extend(["assume_wscale", "tick"]);
        assert_eq!(fields, expect.as_slice());
    }
}
