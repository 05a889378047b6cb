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
//!   sender explicitly.

use netreturn_control::xcp::{XcpRouter, XcpRouterConfig};
use netreturn_tcp::{CcKind, TcpConfig, XcpConfig};

use crate::scenario::{CcName, QueueMethod, Scenario};

const XCP: QueueMethod = QueueMethod::Stage(netreturn_control::StageKind::Xcp);
use crate::topology::Topology;
use crate::world::World;

/// Whether any link of the scenario's topology runs XCP.
pub fn uses_xcp(topo: &Topology) -> bool {
    topo.ifaces.iter().any(|f| f.method == QueueMethod::Stage(netreturn_control::StageKind::Xcp))
}

/// The senders' congestion control once XCP's routers are known: XCP on an
/// XCP network, the scenario's choice otherwise.
pub fn sender_cc(s: &Scenario, topo: &Topology, cfg: &mut TcpConfig) {
    if uses_xcp(topo) || s.tcp.cc == CcName::Xcp {
        cfg.cc =
            CcKind::Xcp(XcpConfig { ignore_handshake_rtt: s.tcp.xcp_ignore_handshake_rtt, ..XcpConfig::default() });
    }
}

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
