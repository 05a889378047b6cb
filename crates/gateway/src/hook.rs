//! The window controller as the pipeline and NGWA's receiver edge see it
//! ([`WindowHook`]), apart from both so that neither needs the other for it
//! (issue 22: no module cycle).

use netreturn_base::{InBand, Time};
use netreturn_control::{QueueEvent, TcpView};

/// The window controller as the pipeline sees it: the
/// `netreturn_control::gateway::WindowGateway` interface, behind a trait so
/// the pipeline is tested with doubles and the binary plugs the real
/// gateway in.
pub trait WindowHook {
    /// A TCP segment travelling in the data direction (A -> B) arrived.
    fn on_data(&mut self, now: Time, seg: &TcpView);
    /// A non-TCP frame of `bytes` travelling A -> B arrived.
    fn on_data_other(&mut self, now: Time, bytes: u32);
    /// The watched (A -> B) queue changed.
    fn on_queue(&mut self, now: Time, ev: &QueueEvent);
    /// A TCP segment B -> A is being forwarded; `Some(w)` is the new raw
    /// window field, returned only when it must be lowered.
    fn on_ack(&mut self, now: Time, seg: &TcpView) -> Option<u16>;
    /// A TCP segment A -> B leaves its queue carrying in-band fields (NGWA's
    /// receiver edge, [`crate::ngwa`]).
    fn on_inband(&mut self, _now: Time, _seg: &TcpView, _ib: &InBand) {}
}

/// The "no controller" hook of link-emulator mode.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoController;

impl WindowHook for NoController {
    fn on_data(&mut self, _: Time, _: &TcpView) {}
    fn on_data_other(&mut self, _: Time, _: u32) {}
    fn on_queue(&mut self, _: Time, _: &QueueEvent) {}
    fn on_ack(&mut self, _: Time, _: &TcpView) -> Option<u16> {
        None
    }
}
