//! Building a window-rewriting gateway from a link's scenario entry:
//! `queue = "ewt"` with optional `gateway = { ewt = { st = "29kB" } }`
//! parameters. The parameters were read and checked with the scenario
//! ([`netreturn_control::GatewayParams`]); this only assembles them.

use crate::topology::IfaceSpec;
use netreturn_control::gateway::WindowGateway;

/// The gateway an interface runs, if its method names one.
pub fn build_gateway(f: &IfaceSpec, capacity_bytes: u64, mss: u32) -> Result<Option<WindowGateway>, String> {
    let Some(kind) = f.method.controller() else {
        return Ok(None);
    };
    let params = f.gateway.clone().unwrap_or_default();
    Ok(Some(WindowGateway::new(params.gateway_config(kind, capacity_bytes, f.rate, mss))))
}
