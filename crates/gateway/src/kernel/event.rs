//! A segment the kernel programs report to user space (`struct nr_event` of
//! `bpf/datapath.bpf.c`): the SYNs, FINs and RSTs of every flow, and every
//! segment of a flow the controller is not yet steady on. Pure code.

use netreturn_base::{FlowKey, TcpFlags, TcpView, Time};
use netreturn_wire::tcp::syn_options;

/// `struct nr_event`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent {
    pub ts: u64,
    pub saddr: u32,
    pub daddr: u32,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub window: u16,
    pub flags: u8,
    pub dir: u8,
    pub payload_len: u32,
    pub opt_len: u8,
    pub pad: [u8; 3],
    pub opts: [u8; 40],
}

/// Which program reported the segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `nr_data`: A -> B, the watched queue's direction.
    Data,
    /// `nr_ack`: B -> A.
    Ack,
}

/// One reported segment, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// CLOCK_MONOTONIC, when the program saw it.
    pub at: Time,
    pub side: Side,
    pub view: TcpView,
}

impl Event {
    /// Decodes the bytes of one ring-buffer record; `None` if they are not
    /// one whole `nr_event` (never from the program itself).
    pub fn decode(bytes: &[u8]) -> Option<Event> {
        if bytes.len() < std::mem::size_of::<RawEvent>() {
            return None;
        }
        // SAFETY: RawEvent is plain old data of this size; the read is
        // unaligned-safe.
        let r: RawEvent = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
        let flags = TcpFlags(r.flags);
        // Window scale and MSS: from a SYN's options only (RFC 7323 section
        // 2.2), with the wire crate's one parser.
        let (wscale, mss) =
            if flags.syn() { syn_options(&r.opts[..(r.opt_len as usize).min(r.opts.len())]) } else { (None, None) };
        let view = TcpView {
            key: FlowKey {
                src: u32::from_be(r.saddr),
                dst: u32::from_be(r.daddr),
                sport: u16::from_be(r.sport),
                dport: u16::from_be(r.dport),
                proto: FlowKey::TCP,
            },
            flags,
            seq: u32::from_be(r.seq),
            ack: u32::from_be(r.ack),
            window: u16::from_be(r.window),
            wscale,
            mss,
            payload_len: r.payload_len,
        };
        let side = if r.dir == 0 { Side::Data } else { Side::Ack };
        Some(Event { at: Time(r.ts), side, view })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_syn() -> RawEvent {
        let mut opts = [0u8; 40];
        // MSS 1460, NOP, window scale 7 (RFC 9293 3.2, RFC 7323 2.2).
        opts[..8].copy_from_slice(&[2, 4, 0x05, 0xb4, 1, 3, 3, 7]);
        RawEvent {
            ts: 5_000,
            saddr: u32::from_be_bytes([10, 77, 2, 1]).to_be(),
            daddr: u32::from_be_bytes([10, 77, 1, 1]).to_be(),
            sport: 40_000u16.to_be(),
            dport: 5001u16.to_be(),
            seq: 7u32.to_be(),
            ack: 0,
            window: 64_240u16.to_be(),
            flags: TcpFlags::SYN.0,
            dir: 1,
            payload_len: 0,
            opt_len: 8,
            pad: [0; 3],
            opts,
        }
    }

    fn bytes(r: &RawEvent) -> Vec<u8> {
        // SAFETY: reading the bytes of a plain struct.
        unsafe { std::slice::from_raw_parts((r as *const RawEvent).cast::<u8>(), std::mem::size_of::<RawEvent>()) }
            .to_vec()
    }

    #[test]
    fn the_event_layout_is_that_of_the_c_struct() {
        assert_eq!(std::mem::size_of::<RawEvent>(), 80);
        assert_eq!(std::mem::offset_of!(RawEvent, payload_len), 32);
        assert_eq!(std::mem::offset_of!(RawEvent, opts), 40);
    }

    #[test]
    fn a_reported_syn_decodes_with_its_scale_and_mss() {
        let e = Event::decode(&bytes(&raw_syn())).unwrap();
        assert_eq!(e.side, Side::Ack);
        assert_eq!(e.at, Time(5_000));
        assert_eq!(e.view.key.src, 0x0a4d_0201);
        assert_eq!((e.view.key.sport, e.view.key.dport), (40_000, 5001));
        assert_eq!((e.view.wscale, e.view.mss, e.view.window, e.view.seq), (Some(7), Some(1460), 64_240, 7));
    }

    #[test]
    fn options_of_a_segment_that_is_no_syn_are_ignored_and_a_short_record_is_refused() {
        let mut r = raw_syn();
        r.flags = TcpFlags::ACK.0;
        let e = Event::decode(&bytes(&r)).unwrap();
        assert_eq!((e.view.wscale, e.view.mss), (None, None));
        assert_eq!(Event::decode(&bytes(&r)[..79]), None);
        // An option length beyond the buffer is clamped, never a panic.
        r.flags = TcpFlags::SYN.0;
        r.opt_len = 255;
        assert!(Event::decode(&bytes(&r)).is_some());
    }
}
