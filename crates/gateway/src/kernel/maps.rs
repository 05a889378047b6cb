//! The kernel datapath's maps as user space sees them: the layouts of
//! `bpf/datapath.bpf.c`, field for field (`#[repr(C)]`, sizes checked by the
//! tests), and what a [`KernelWindow`] becomes in them. Pure code: tested
//! without a kernel.

use netreturn_base::FlowKey;
use netreturn_control::gateway::lowered_field;
use netreturn_control::{KernelWindow, WindowRule};

/// `struct nr_key`: a flow as its ACKs carry it, addresses and ports in
/// network byte order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NrKey {
    pub saddr: u32,
    pub daddr: u32,
    pub sport: u16,
    pub dport: u16,
}

impl NrKey {
    /// The map key of `key` (host order in [`FlowKey`]).
    pub fn of(key: &FlowKey) -> NrKey {
        NrKey { saddr: key.src.to_be(), daddr: key.dst.to_be(), sport: key.sport.to_be(), dport: key.dport.to_be() }
    }

    pub fn flow_key(&self) -> FlowKey {
        FlowKey {
            src: u32::from_be(self.saddr),
            dst: u32::from_be(self.daddr),
            sport: u16::from_be(self.sport),
            dport: u16::from_be(self.dport),
            proto: FlowKey::TCP,
        }
    }
}

/// `struct nr_window`: one flow's window rule, written by user space only.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NrWindow {
    pub num: u64,
    pub den: u64,
    pub floor: u64,
    pub shift: u8,
    pub rule_on: u8,
    pub steady: u8,
    pub keep_edge: u8,
    pub pad: [u8; 4],
}

/// `struct nr_seen`: what the programs learn of a flow with a `windows`
/// entry, written by them only.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NrSeen {
    pub last_ns: u64,
    pub bytes: u64,
    /// NGWA edge: the values data A -> B carried, summed and counted.
    pub ngwa_sum: u64,
    pub ngwa_n: u64,
    pub ngwa_last: u32,
    /// `keep_edge`: ACK + window of the last ACK let through.
    pub edge: u32,
    pub edge_set: u8,
    pub pad: [u8; 7],
}

/// `struct nr_node`: an NGWA router's `W_node` in one direction.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NrNode {
    pub w: u32,
    pub valid: u32,
}

/// The largest `Wr` an ACK can carry: 65535 << 14 (RFC 7323 section 2.3).
const MAX_WR: u64 = 65_535 << 14;

impl NrWindow {
    /// The entry for `w` (without a rule, the flow's ACKs pass as they
    /// are).
    pub fn of(w: &KernelWindow) -> NrWindow {
        let mut e = NrWindow {
            steady: w.steady as u8,
            shift: w.shift,
            floor: w.floor,
            keep_edge: w.keep_edge as u8,
            ..NrWindow::default()
        };
        if let Some(rule) = w.rule {
            e.rule_on = 1;
            (e.num, e.den) = match rule {
                WindowRule::Bytes(b) => (b, 0),
                WindowRule::Fraction { den: 0, .. } => (1, 1),
                WindowRule::Fraction { num, den } => reduce(num, den),
            };
        }
        e
    }

    /// What the kernel program writes for an ACK whose raw window field is
    /// `raw` (the arithmetic of `nr_ack` without `keep_edge`, for the tests
    /// that run the real program against it): `Some(field)` iff the window
    /// is lowered.
    pub fn field(&self, raw: u16) -> Option<u16> {
        if self.rule_on == 0 {
            return None;
        }
        let shift = (self.shift & 15) as u32;
        let wr = (raw as u64) << shift;
        // The program multiplies in 64 bits (the fraction is reduced so
        // that it cannot overflow, `reduce`).
        let want = wr.wrapping_mul(self.num).checked_div(self.den).unwrap_or(self.num);
        lowered_field(raw, shift, want, self.floor)
    }
}

/// `num / den` with `num * MAX_WR` kept inside u64 (the kernel multiplies
/// in 64 bits): both are shifted right together when needed, which changes
/// the fraction by less than one part in 2^20 for any fraction <= 1.
fn reduce(mut num: u64, mut den: u64) -> (u64, u64) {
    while num.checked_mul(MAX_WR).is_none() {
        num >>= 1;
        den = (den >> 1).max(1);
    }
    (num, den)
}

/// Indexes into `counters`: a block of [`Counter::PER_DIR`] per direction
/// (0: A -> B, 1: B -> A), then the global ones (`enum` of the C file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Packets = 0,
    Bytes,
    Tcp,
    Other,
    OtherBytes,
    NotIpv4,
    Fragments,
    Malformed,
}

impl Counter {
    pub const PER_DIR: u32 = 8;
    pub const ACKS_SEEN: u32 = 16;
    pub const ACKS_REWRITTEN: u32 = 17;
    pub const EVENTS: u32 = 18;
    pub const EVENTS_LOST: u32 = 19;
    /// NGWA's block per direction ([`NgwaCounter`]).
    pub const NGWA: u32 = 20;
    pub const COUNT: u32 = Counter::NGWA + 2 * NgwaCounter::PER_DIR;

    pub fn at(self, dir: u32) -> u32 {
        dir * Counter::PER_DIR + self as u32
    }
}

/// NGWA's counters, a block per direction (`N_*` of the C file), named as
/// the packet datapath's `NgwaWireStats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NgwaCounter {
    MssClamped = 0,
    Inserted,
    Lowered,
    Kept,
    TooBig,
    OptionsFull,
    BadOptions,
    ValuesRead,
    Stripped,
    Unsupported,
}

impl NgwaCounter {
    pub const PER_DIR: u32 = 10;

    pub fn at(self, dir: u32) -> u32 {
        Counter::NGWA + dir * NgwaCounter::PER_DIR + self as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_layouts_are_those_of_the_c_structs() {
        assert_eq!(std::mem::size_of::<NrKey>(), 12);
        assert_eq!(std::mem::size_of::<NrWindow>(), 32);
        assert_eq!(std::mem::offset_of!(NrWindow, shift), 24);
        assert_eq!(std::mem::offset_of!(NrWindow, keep_edge), 27);
        assert_eq!(std::mem::size_of::<NrSeen>(), 48);
        assert_eq!(std::mem::offset_of!(NrSeen, edge), 36);
        assert_eq!(std::mem::size_of::<NrNode>(), 8);
    }

    #[test]
    fn a_key_goes_to_network_order_and_back() {
        let k = FlowKey { src: 0x0a4d_0101, dst: 0x0a4d_0201, sport: 5001, dport: 40_000, proto: FlowKey::TCP };
        let n = NrKey::of(&k);
        assert_eq!(n.saddr.to_ne_bytes(), [10, 77, 1, 1]);
        assert_eq!(n.sport.to_ne_bytes(), 5001u16.to_be_bytes());
        assert_eq!(n.flow_key(), k);
    }

    #[test]
    fn a_huge_fraction_is_reduced_so_the_kernel_product_cannot_overflow() {
        let (n, d) = reduce(1 << 40, 3 << 40);
        assert!(n.checked_mul(MAX_WR).is_some());
        assert!(((n as f64 / d as f64) - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(reduce(70_000, 97_000), (70_000, 97_000));
    }

    #[test]
    fn the_kernel_arithmetic_never_raises_and_keeps_the_floor() {
        let mut w = KernelWindow {
            ack_key: FlowKey { src: 1, dst: 2, sport: 3, dport: 4, proto: FlowKey::TCP },
            shift: 7,
            rule: Some(WindowRule::Fraction { num: 1, den: 10 }),
            floor: 1460,
            steady: true,
            keep_edge: false,
        };
        let e = NrWindow::of(&w);
        // Wr = 1000 << 7 = 128 000; a tenth is 12 800: 100 units.
        assert_eq!(e.field(1000), Some(100));
        // Wr = 20 << 7 = 2560; a tenth (256) is below the floor 1460: 12 units.
        assert_eq!(e.field(20), Some(12));
        // Wr = 11 << 7 = 1408 is below the floor: never raised.
        assert_eq!(e.field(11), None);
        w.rule = None;
        assert_eq!(NrWindow::of(&w).field(1000), None);
    }
}
