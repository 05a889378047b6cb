//! XCP in a scenario (SPEC.md 2.7): the one place that turns `queue = "xcp"`
//! on a link into XCP routers and XCP senders, so that the scenario
//! vocabulary can move it wholesale.
//!
//! * Every link whose `queue` is `xcp` gets an [`XcpRouter`] on both of its
//!   interfaces (data and reverse direction: XCP works in both, and the
//!   reverse flows' data meets the reverse interface), over the DropTail
//!   buffer the link declares.
//! * If any link runs XCP, every TCP endpoint runs the XCP sender (an XCP
//!   router can steer only XCP senders); `[tcp] cc = "xcp"` asks for the
//!   sender explicitly. That choice is the scenario model's
//!   (`netreturn_scenario::resolve::endpoint_config`).

use netreturn_control::xcp::{XcpRouter, XcpRouterConfig};

use crate::scenario::QueueMethod;
use crate::world::World;
pub use netreturn_scenario::resolve::uses_xcp;

const XCP: QueueMethod = QueueMethod::Stage(netreturn_control::StageKind::Xcp);

/// Attaches an XCP router to both interfaces of every XCP link.
pub fn attach_routers(w: &mut World) -> Result<(), String> {
    let names: Vec<String> = w
        .topo
        .ifaces
        .iter()
        .enumerate()
        .filter(|(i, _)| w.topo.ifaces[i & !1].method == XCP || w.topo.ifaces[i | 1].method == XCP)
        .map(|(_, f)| f.name.clone())
        .collect();
    for n in names {
        w.attach_stage(&n, Box::new(XcpRouter::new(XcpRouterConfig::default())))?;
    }
    Ok(())
}
