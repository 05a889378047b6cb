/// The 5-tuple of a packet, as the gateway sees it. Addresses are IPv4 in
/// host byte order (the simulator numbers its hosts in the same space).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowKey {
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
}

/// Hashed as two words (addresses; ports and protocol) rather than five
/// fields: a flow lookup is on the per-packet path of every gateway. The
/// packing is injective, so it agrees with the derived `Eq`.
impl std::hash::Hash for FlowKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64((self.src as u64) << 32 | self.dst as u64);
        h.write_u64((self.sport as u64) << 24 | (self.dport as u64) << 8 | self.proto as u64);
    }
}

impl FlowKey {
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;

    /// The key of the packets travelling the other way.
    pub fn reversed(self) -> FlowKey {
        FlowKey { src: self.dst, dst: self.src, sport: self.dport, dport: self.sport, proto: self.proto }
    }
}

/// TCP header flags (RFC 9293 section 3.1), as a bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);
    pub const URG: TcpFlags = TcpFlags(0x20);
    pub const ECE: TcpFlags = TcpFlags(0x40);
    pub const CWR: TcpFlags = TcpFlags(0x80);

    pub const fn empty() -> TcpFlags {
        TcpFlags(0)
    }
    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn union(self, other: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | other.0)
    }
    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }
    pub fn ack(self) -> bool {
        self.contains(Self::ACK)
    }
    pub fn fin(self) -> bool {
        self.contains(Self::FIN)
    }
    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }
    pub fn ece(self) -> bool {
        self.contains(Self::ECE)
    }
    pub fn cwr(self) -> bool {
        self.contains(Self::CWR)
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        self.union(rhs)
    }
}

/// The header fields of one TCP segment that controllers read. Both the
/// simulator (from its packet structs) and the real gateway (from parsed
/// bytes, `netreturn_wire::frame`) fill it in, so controllers never depend
/// on either, and the wire parsers need nothing above this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpView {
    pub key: FlowKey,
    pub flags: TcpFlags,
    pub seq: u32,
    pub ack: u32,
    /// The raw 16-bit window field (before scaling).
    pub window: u16,
    /// Window-scale option (RFC 7323), present on SYN / SYN-ACK only.
    pub wscale: Option<u8>,
    /// MSS option, present on SYN / SYN-ACK only.
    pub mss: Option<u16>,
    /// TCP payload bytes.
    pub payload_len: u32,
}
