//! Sans-IO gateway logic: queue disciplines and window controllers.
//!
//! The very same code runs in the simulator (`netreturn-sim`) and in the real
//! Linux gateway (`netreturn-gateway`): nothing here does I/O or reads a
//! clock; every call takes `now`, and randomness comes from a caller's
//! [`netreturn_base::Rng`].
//!
//! * [`queue`]: FIFO queue disciplines (DropTail, RED, Adaptive RED) that
//!   share one admission helper.
//! * [`gateway`]: the window-rewriting gateway (SPEC.md section 1): it learns
//!   window scales from handshakes, asks its controller for a window and
//!   enforces the common rules (never raise, floor, leave unknown flows alone).
//! * one module per controller: [`ewt`], [`ewa`], [`awm`], [`saplaw`], [`rwm`],
//!   each declared once in [`registry`], the list everything else reads.
//! * [`stage`]: router stages that rewrite the in-band fields of forward
//!   packets; [`ngwa`] is NGWA's router rule, [`xcp`] XCP's router.

pub mod awm;
pub mod controller;
pub mod ewa;
pub mod ewt;
pub mod flows;
pub mod gateway;
pub mod ngwa;
pub mod ngwa_receiver;
pub mod queue;
pub mod registry;
pub mod rwm;
pub mod saplaw;
pub mod stage;
pub mod view;
pub mod xcp;

pub use controller::{Bottleneck, FlowInfo, WindowController, WindowRule};
pub use gateway::{GatewayConfig, GatewayStats, KernelWindow, WindowGateway};
pub use registry::{Controller, ControllerConfig, ControllerKind, GatewayParams, Method, QueueKind, StageKind};
pub use stage::{ForwardPacket, ForwardStage, QueueState, TcpMeta};
pub use view::{QueueEvent, QueueEventKind, TcpView};
