//! netreturn's scenario model: one file describes one network, wherever it
//! runs.
//!
//! A scenario file (TOML, docs/scenarios.md) is read once here, in three
//! steps that the simulator (`netreturn-sim`), the real gateway
//! (`netreturn-gateway --config`) and the Python bindings all share:
//!
//! 1. [`scenario`]: the schema, `[params]` and `--set`, and the checks serde
//!    cannot express; every error names the file, the field and the
//!    parameter the user set.
//! 2. [`topology`]: nodes and duplex links become interfaces, one per
//!    direction, with the reverse direction's queue and loss applied
//!    (`reverse = {...}`, `loss_direction`), and static routes.
//! 3. [`resolve`]: every interface becomes an explicit [`resolve::LinkDir`]
//!    (rate in bit/s, delay in ns, buffer in bytes, the queue discipline,
//!    the window controller's full configuration) and every endpoint a
//!    [`netreturn_tcp::TcpConfig`]. What runs is what this prints
//!    (`netreturn show-config`).
//!
//! The registries of mechanisms live with the mechanisms
//! (`netreturn_control::registry` for queues, controllers and stages,
//! `netreturn_tcp` for congestion controls); this crate only reads them.

pub mod ngwa;
pub mod resolve;
pub mod scenario;
pub mod topology;
pub use netreturn_base::units;

pub use resolve::{LinkDir, Resolved};
pub use scenario::{Scenario, ScenarioError};
