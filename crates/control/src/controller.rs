//! The window-controller interface shared by EWT, EWA, AWM, SAP-LAW and RWM,
//! and the closed enum that dispatches to them.
//!
//! A controller only *computes* a window. The rules every window-rewriting
//! gateway obeys (SPEC.md section 1: never raise, the MSS / MTU floor, window
//! scaling, leaving unknown flows alone) are enforced once, by
//! [`crate::gateway::WindowGateway`], around whichever controller is
//! configured.

use netreturn_base::{FlowKey, Rate, Time};

use crate::awm::{Awm, AwmConfig};
use crate::ewa::{Ewa, EwaConfig};
use crate::ewt::{Ewt, EwtConfig};
use crate::rwm::{Rwm, RwmConfig};
use crate::saplaw::{SapLaw, SapLawConfig};
use crate::view::QueueEvent;

/// What the gateway knows of the link it guards; fixed for a controller's
/// lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bottleneck {
    /// `B`: capacity of the watched (data-direction) queue, bytes.
    pub buffer_bytes: u64,
    /// `C`: rate of the watched egress link.
    pub link_rate: Rate,
    /// MSS assumed for flows whose handshake carried no MSS option.
    pub default_mss: u32,
}

/// What a controller learns about the flow of one ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowInfo {
    /// The flow's key in the data direction (data sender -> data receiver).
    pub key: FlowKey,
    /// Handshake RTT measured at the gateway (SYN -> SYN-ACK -> ACK), when
    /// the whole handshake was seen.
    pub rtt: Option<Time>,
    /// Segment size of the flow: the smaller MSS option of the handshake, or
    /// the gateway's default.
    pub mss: u32,
    /// Traffic class (RWM); 0 for controllers without classes.
    pub class: u16,
    /// `Wr`: the window the ACK carries, in bytes, after scaling. Zero for
    /// flow start / end notifications.
    pub wr: u64,
}

/// The events a window controller reacts to. Every method takes `now`; none
/// does I/O. Defaults are no-ops, so each controller names only what it uses
/// (the smoltcp congestion-controller pattern).
pub trait WindowController {
    /// The watched queue changed (an updating event in AWM's words).
    fn on_queue(&mut self, _now: Time, _ev: &QueueEvent) {}

    /// A non-TCP packet of `bytes` travelled in the data direction.
    fn on_data_other(&mut self, _now: Time, _bytes: u32) {}

    /// A flow started filling the watched queue (first payload in the data
    /// direction of a flow the gateway tracks).
    fn on_flow_start(&mut self, _now: Time, _flow: &FlowInfo) {}

    /// A flow announced by [`WindowController::on_flow_start`] ended (FIN,
    /// RST, idle timeout or eviction).
    fn on_flow_end(&mut self, _now: Time, _flow: &FlowInfo) {}

    /// The traffic class of a flow, from its data-direction key (RWM).
    fn classify(&self, _key: &FlowKey) -> u16 {
        0
    }

    /// The window this controller wants for the ACK of `flow`, in bytes, or
    /// `None` to leave the ACK alone. The gateway applies the floor and the
    /// never-raise rule to it.
    fn window(&mut self, now: Time, flow: &FlowInfo) -> Option<u64>;

    /// The smallest window the controller may impose (SPEC.md section 1
    /// rule 4): one MSS by default.
    fn floor(&self, flow: &FlowInfo) -> u64 {
        flow.mss as u64
    }
}

/// Which controller a gateway runs, with its settings.
#[derive(Clone, Debug, PartialEq)]
pub enum ControllerConfig {
    Ewt(EwtConfig),
    Ewa(EwaConfig),
    Awm(AwmConfig),
    SapLaw(SapLawConfig),
    Rwm(RwmConfig),
}

impl Default for ControllerConfig {
    fn default() -> ControllerConfig {
        ControllerConfig::Ewt(EwtConfig::default())
    }
}

/// The closed set of controllers (STYLE.md: a config enum rather than trait
/// objects, so the per-ACK path is a `match`, not a virtual call).
#[derive(Clone, Debug)]
pub enum Controller {
    Ewt(Ewt),
    Ewa(Ewa),
    Awm(Awm),
    SapLaw(SapLaw),
    Rwm(Rwm),
}

macro_rules! dispatch {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            Controller::Ewt($c) => $e,
            Controller::Ewa($c) => $e,
            Controller::Awm($c) => $e,
            Controller::SapLaw($c) => $e,
            Controller::Rwm($c) => $e,
        }
    };
}

impl Controller {
    pub fn new(cfg: &ControllerConfig, link: Bottleneck) -> Controller {
        match cfg {
            ControllerConfig::Ewt(c) => Controller::Ewt(Ewt::new(c.clone(), link)),
            ControllerConfig::Ewa(c) => Controller::Ewa(Ewa::new(c.clone(), link)),
            ControllerConfig::Awm(c) => Controller::Awm(Awm::new(c.clone(), link)),
            ControllerConfig::SapLaw(c) => Controller::SapLaw(SapLaw::new(c.clone(), link)),
            ControllerConfig::Rwm(c) => Controller::Rwm(Rwm::new(c.clone(), link)),
        }
    }

    /// A short name for traces and reports.
    pub fn name(&self) -> &'static str {
        match self {
            Controller::Ewt(_) => "EWT",
            Controller::Ewa(_) => "EWA",
            Controller::Awm(_) => "AWM",
            Controller::SapLaw(_) => "SAP-LAW",
            Controller::Rwm(_) => "RWM",
        }
    }
}

impl WindowController for Controller {
    fn on_queue(&mut self, now: Time, ev: &QueueEvent) {
        dispatch!(self, c => c.on_queue(now, ev))
    }
    fn on_data_other(&mut self, now: Time, bytes: u32) {
        dispatch!(self, c => c.on_data_other(now, bytes))
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
    fn floor(&self, flow: &FlowInfo) -> u64 {
        dispatch!(self, c => c.floor(flow))
    }
}
