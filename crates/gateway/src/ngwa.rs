//! NGWA on real packets (seed 001 section 4; SPEC.md 2.6): the router rule
//! and the receiver's edge, applied by the pipeline through
//! `netreturn-wire`'s views. The router marks both directions, one
//! [`NgwaWire`] (with its own router state) per direction, as the
//! simulator's routers mark every egress; the edge serves side B's
//! receivers, on the A -> B wire.
//!
//! * **Router** (seed 001 section 4.1, "the NGWA is called by the function
//!   dequeue"): when a TCP/IPv4 frame leaves its direction's queue, the frame's
//!   IPv4 option becomes a [`netreturn_base::InBand`] and the very
//!   [`ForwardStage`] the simulator runs (`netreturn_control::ngwa::NgwaRouter`)
//!   is shown it with the queue's state; what the stage wrote goes back into
//!   the header: the option inserted (8 bytes, IHL, total length, header
//!   checksum) or its value lowered in place (RFC 1624). A frame that cannot
//!   take the option (it would pass the MTU, its header is full, its option
//!   list does not parse) is shown to the stage as one that carries no
//!   in-band field, so the stage still counts its connection, and leaves
//!   untouched. SYNs in both directions get their MSS clamped to
//!   `MTU - 40 - 8` (seed 001 section 4.2: "a reduction of the MSS by the
//!   size of NGWA option"), so a full segment still fits once marked.
//! * **Receiver edge** (SPEC.md 2.6, last point: a real receiver cannot be
//!   patched): when a frame leaves the A -> B queue (after the router step,
//!   if the gateway is both), the value it carries is handed to the window
//!   hook ([`WindowHook::on_inband`], `netreturn_control::ngwa::NgwaEdge`
//!   inside `WindowGateway`, which rewrites the ACKs going back), then the
//!   option is stripped so the receiver gets the segment the sender sent.
//!
//! Fragments, non-TCP, malformed and oversize frames never get here (the
//! pipeline classifies them at arrival and counts them) and pass untouched.

use netreturn_base::{InBand, Time};
use netreturn_control::ngwa::NgwaRouter;
use netreturn_control::stage::{ForwardPacket, ForwardStage, QueueState, TcpMeta};
use netreturn_wire::frame::TcpLocation;
use netreturn_wire::ipv4::{self, NgwaRefusal, NGWA_INSERT_LEN};
use netreturn_wire::tcp;

use crate::hook::WindowHook;

/// What a gateway does for NGWA (the `[ngwa] role` of its scenario file, or
/// `--ngwa role=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roles {
    /// Marks the data direction's packets with its queue's free space.
    pub router: bool,
    /// Reads the option, rewrites the ACKs, strips the option.
    pub edge: bool,
}

impl Roles {
    /// The role as `--ngwa role=` spells it (the JSON's `ngwa_role`).
    pub fn name(self) -> &'static str {
        match (self.router, self.edge) {
            (true, true) => "both",
            (true, false) => "router",
            _ => "receiver-edge",
        }
    }
}

/// NGWA counters of one gateway.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NgwaWireStats {
    /// SYNs whose MSS option was lowered (both directions).
    pub mss_clamped: u64,
    /// Router: TCP frames given the option.
    pub inserted: u64,
    /// Router: frames whose carried value was lowered.
    pub lowered: u64,
    /// Router: frames whose carried value was already at most ours.
    pub kept: u64,
    /// Router: frames left unmarked because the option would push them
    /// past the MTU (a flow whose SYN was not clamped, or a sender that
    /// ignores the MSS).
    pub too_big: u64,
    /// Router: frames left unmarked because their header had no room.
    pub options_full: u64,
    /// Router and edge: frames whose IPv4 option list does not parse, left
    /// untouched.
    pub bad_options: u64,
    /// Edge: frames that arrived carrying a value (handed to the hook).
    pub values_read: u64,
    /// Edge: frames whose option was stripped.
    pub stripped: u64,
}

impl NgwaWireStats {
    pub fn to_json(&self) -> String {
        format!(
            "{{\"mss_clamped\":{},\"inserted\":{},\"lowered\":{},\"kept\":{},\"too_big\":{},\"options_full\":{},\
             \"bad_options\":{},\"values_read\":{},\"stripped\":{}}}",
            self.mss_clamped,
            self.inserted,
            self.lowered,
            self.kept,
            self.too_big,
            self.options_full,
            self.bad_options,
            self.values_read,
            self.stripped
        )
    }
}

/// NGWA's per-frame work in one gateway.
#[derive(Clone, Debug)]
pub struct NgwaWire {
    /// The router stage (the simulator's), when the gateway is a router.
    router: Option<NgwaRouter>,
    edge: bool,
    /// IP packets above this are never grown.
    mtu: usize,
    stats: NgwaWireStats,
    /// The buffer a marked frame is built in; swapped with the frame's, so
    /// the old one serves the next frame (nothing allocated per frame once
    /// both have the I/O pool's capacity).
    scratch: Vec<u8>,
}

impl NgwaWire {
    /// `router`: the stage to run (a router), `None` for an edge only;
    /// `mtu`: the largest IP packet the egress carries.
    pub fn new(router: Option<NgwaRouter>, edge: bool, mtu: usize) -> NgwaWire {
        NgwaWire { router, edge, mtu, stats: NgwaWireStats::default(), scratch: Vec::with_capacity(2048) }
    }

    pub fn roles(&self) -> Roles {
        Roles { router: self.router.is_some(), edge: self.edge }
    }
    pub fn stats(&self) -> &NgwaWireStats {
        &self.stats
    }
    pub fn router(&self) -> Option<&NgwaRouter> {
        self.router.as_ref()
    }

    /// The MSS a SYN may announce: a full segment plus the option fits the
    /// MTU (20 bytes of IPv4 and 20 of TCP header, RFC 9293 3.7.1's MSS
    /// excluding both). A clamp, not a subtraction, so that routers in a
    /// chain do not take 8 bytes each.
    pub fn mss_ceiling(&self) -> u16 {
        (self.mtu.saturating_sub(40 + NGWA_INSERT_LEN)).min(u16::MAX as usize) as u16
    }

    /// A frame arrived (either direction): a router clamps the MSS of SYNs.
    pub fn on_arrival(&mut self, frame: &mut [u8], loc: &mut TcpLocation) {
        if self.router.is_none() || !loc.view.flags.syn() {
            return;
        }
        let ip = ipv4::Packet::new_unchecked(&frame[loc.ip_offset..]);
        let end = loc.ip_offset + ip.total_len() as usize;
        let mut seg = tcp::Packet::new_unchecked(&mut frame[loc.tcp_offset..end]);
        let max = self.mss_ceiling();
        if seg.clamp_mss(max).is_some() {
            loc.view.mss = Some(max);
            self.stats.mss_clamped += 1;
        }
    }

    /// A TCP/IPv4 frame of the data direction leaves its queue at `at`:
    /// the router step, then the edge step. `frame` may grow or shrink by
    /// the option's bytes.
    pub fn on_dequeue<H: WindowHook>(
        &mut self,
        at: Time,
        frame: &mut Vec<u8>,
        loc: &TcpLocation,
        queue: &QueueState,
        hook: Option<&mut H>,
    ) {
        if let Some(r) = self.router.as_mut() {
            mark(r, at, frame, &mut self.scratch, loc, queue, self.mtu, &mut self.stats);
        }
        if !self.edge {
            return;
        }
        let ip = ipv4::Packet::new_unchecked(&frame[loc.ip_offset..]);
        if ip.header_len() == ipv4::HEADER_LEN {
            return;
        }
        let Some(w) = ip.ngwa() else { return };
        self.stats.values_read += 1;
        if let Some(h) = hook {
            h.on_inband(at, &loc.view, &InBand::Ngwa(w));
        }
        let total = ip.total_len() as usize;
        let end = loc.ip_offset + total;
        match ipv4::strip_ngwa(&mut frame[loc.ip_offset..end]) {
            Some(n) => {
                // Whatever followed the packet (Ethernet padding) follows it still.
                frame.drain(loc.ip_offset + n..end);
                self.stats.stripped += 1;
            }
            None => self.stats.bad_options += 1,
        }
    }
}

/// The router step: the stage sees the frame's option as `InBand` and what
/// it leaves there is written back into the header.
#[allow(clippy::too_many_arguments)]
fn mark(
    stage: &mut impl ForwardStage,
    at: Time,
    frame: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    loc: &TcpLocation,
    queue: &QueueState,
    mtu: usize,
    stats: &mut NgwaWireStats,
) {
    let v = &loc.view;
    let meta =
        TcpMeta { key: v.key, syn: v.flags.syn(), fin: v.flags.fin(), rst: v.flags.rst(), payload_len: v.payload_len };
    let (total, carried, room) = {
        let ip = ipv4::Packet::new_unchecked(&frame[loc.ip_offset..]);
        let carried = if ip.header_len() > ipv4::HEADER_LEN { ip.ngwa() } else { None };
        // A packet that can carry no option is shown as such (`inband:
        // None`): the stage still counts its connection (FD), writes nothing.
        let room = match carried {
            Some(_) => Ok(()),
            None => ipv4::ngwa_insertable(&ip, mtu),
        };
        (ip.total_len() as usize, carried, room)
    };
    let mut ib = carried.map_or(InBand::None, InBand::Ngwa);
    let mut fp = ForwardPacket { tcp: Some(meta), size: total as u32, inband: room.is_ok().then_some(&mut ib) };
    stage.on_dequeue(at, &mut fp, queue);
    match (room, carried, ib) {
        (Err(NgwaRefusal::TooBig), ..) => stats.too_big += 1,
        (Err(NgwaRefusal::OptionsFull), ..) => stats.options_full += 1,
        (Err(NgwaRefusal::BadOptions), ..) => stats.bad_options += 1,
        (Ok(()), Some(old), InBand::Ngwa(new)) if new < old => {
            let mut ip = ipv4::Packet::new_unchecked(&mut frame[loc.ip_offset..]);
            ip.set_ngwa(new);
            stats.lowered += 1;
        }
        (Ok(()), Some(_), _) => stats.kept += 1,
        (Ok(()), None, InBand::Ngwa(w)) => {
            // The frame is built anew in `scratch` (Ethernet header, then the
            // packet with the option); Ethernet padding after the packet is
            // dropped: the frame is longer than the 60-byte minimum now.
            let fixed = loc.ip_offset + ipv4::HEADER_LEN;
            scratch.clear();
            scratch.extend_from_slice(&frame[..fixed]);
            scratch.extend_from_slice(&[0; NGWA_INSERT_LEN]);
            scratch.extend_from_slice(&frame[fixed..loc.ip_offset + total]);
            ipv4::finish_insert(&mut scratch[loc.ip_offset..], w);
            std::mem::swap(frame, scratch);
            stats.inserted += 1;
        }
        (Ok(()), None, _) => {}
    }
}
