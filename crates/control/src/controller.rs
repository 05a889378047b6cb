//! The window-controller interface shared by EWT, EWA, AWM, SAP-LAW and RWM.
//! The closed enum that dispatches to them is generated from the list in
//! [`crate::registry`].
//!
//! A controller only *computes* a window. The rules every window-rewriting
//! gateway obeys (SPEC.md section 1: never raise, the MSS / MTU floor, window
//! scaling, leaving unknown flows alone) are enforced once, by
//! [`crate::gateway::WindowGateway`], around whichever controller is
//! configured.

use netreturn_base::{FlowKey, InBand, Rate, Time};

use crate::view::{QueueEvent, TcpView};

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
    /// What a size given in packets ("20p") weighs, if set
    /// ([`crate::GatewayConfig::packet_bytes`]).
    pub packet_bytes: Option<u32>,
}

impl Bottleneck {
    /// The packet size a size given in packets ("20p") counts: the
    /// configured packet, else an MTU of `default_mss + 40` (IPv4 and TCP
    /// headers without options).
    pub fn mtu(&self) -> u32 {
        self.packet_bytes.unwrap_or(self.default_mss + 40)
    }
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
    /// The ACK's acknowledgment number (the receiver's RCV.NXT), where the
    /// window starts; zero for flow start / end notifications.
    pub ack: u32,
}

/// A controller's window for one flow in a form a kernel datapath applies
/// to each ACK without calling back (issue 28): the eBPF program computes
/// `apply(Wr)` from the ACK's own `Wr`, then the gateway's rules (floor,
/// never raise, scale rounding) exactly as [`crate::gateway::WindowGateway`]
/// does in user space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowRule {
    /// A window in bytes, whatever the ACK carries (AWM's swnd, SAP-LAW's,
    /// RWM's, EWA's).
    Bytes(u64),
    /// `Wr * num / den` (EWT's `Ba / B * Wr`, seed 000 eq. 10).
    Fraction { num: u64, den: u64 },
}

impl WindowRule {
    /// The window for an ACK carrying `wr` bytes. A fraction is computed in
    /// integers, in u128 only when `num * wr` overflows u64.
    pub fn apply(self, wr: u64) -> u64 {
        match self {
            WindowRule::Bytes(w) => w,
            WindowRule::Fraction { den: 0, .. } => wr,
            WindowRule::Fraction { num, den } => match num.checked_mul(wr) {
                Some(p) => p / den,
                None => (num as u128 * wr as u128 / den as u128) as u64,
            },
        }
    }
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

    /// A segment of an active flow leaves the watched queue in the data
    /// direction carrying in-band fields `ib` (the NGWA option: the receiver
    /// rule at a receiver's edge gateway, `crate::ngwa::NgwaEdge`).
    /// Called only by callers that read in-band fields (the real gateway),
    /// and only when [`WindowController::READS_INBAND`] is set.
    fn on_inband(&mut self, _now: Time, _seg: &TcpView, _ib: &InBand) {}

    /// Whether [`WindowController::on_inband`] does anything: lets the
    /// gateway skip the flow lookup for the controllers that do not.
    const READS_INBAND: bool = false;

    /// The traffic class of a flow, from its data-direction key (RWM).
    fn classify(&self, _key: &FlowKey) -> u16 {
        0
    }

    /// The window this controller wants for the ACK of `flow`, in bytes, or
    /// `None` to leave the ACK alone. The gateway applies the floor and the
    /// never-raise rule to it.
    fn window(&mut self, now: Time, flow: &FlowInfo) -> Option<u64>;

    /// [`WindowController::window`] for every ACK of `flow` until the next
    /// call, as a rule a kernel datapath applies to each ACK's own `Wr`
    /// (`flow.wr` is 0 here: no ACK is at hand). The default is the window
    /// in bytes, right for every controller whose window does not depend on
    /// `Wr`; a controller whose window does (EWT) overrides it.
    fn rule(&mut self, now: Time, flow: &FlowInfo) -> Option<WindowRule> {
        self.window(now, flow).map(WindowRule::Bytes)
    }

    /// Whether the window of [`WindowController::window`] is never below
    /// what is left of the window the flow's last ACK offered (`edge - ACK`,
    /// RFC 9293 section 3.8.6.2.2): the NGWA edge's rule. A kernel datapath
    /// then keeps that edge per flow, since [`WindowController::rule`]
    /// sees no ACK.
    const KEEPS_RIGHT_EDGE: bool = false;

    /// The smallest window the controller may impose (SPEC.md section 1
    /// rule 4): one MSS by default.
    fn floor(&self, flow: &FlowInfo) -> u64 {
        flow.mss as u64
    }
}
