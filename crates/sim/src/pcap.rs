//! pcap capture of simulated interfaces (readable by Wireshark / tshark).
//!
//! The simulator carries header fields, not bytes; a capture synthesizes
//! the IPv4 and TCP/UDP headers (with TCP options) of each packet as it
//! starts transmission and records the packet's full length with only the
//! headers captured (like `tcpdump -s` with a short snap length). Link type
//! 101 (raw IPv4). The TCP checksum is left zero: there is no payload to sum.

use netreturn_base::{FlowKey, Time};
use netreturn_tcp::Segment;

const LINKTYPE_RAW: u32 = 101;

/// A pcap file being built in memory; the caller writes [`Pcap::bytes`].
#[derive(Clone, Debug)]
pub struct Pcap {
    buf: Vec<u8>,
}

impl Default for Pcap {
    fn default() -> Self {
        Pcap::new()
    }
}

impl Pcap {
    pub fn new() -> Pcap {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond timestamps
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&65_535u32.to_le_bytes());
        buf.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        Pcap { buf }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Records a packet of `size` bytes on the wire (IP packet), whose
    /// 5-tuple in its direction of travel is `key`: TCP segment `tcp`, or a
    /// UDP datagram if `None`.
    pub fn record(&mut self, now: Time, size: u32, tcp: Option<&Segment>, key: FlowKey) {
        let mut h = Vec::with_capacity(80);
        let l4 = if tcp.is_none() { 17 } else { 6 };
        // IPv4 header (RFC 791), no options.
        h.extend_from_slice(&[0x45, 0]);
        h.extend_from_slice(&(size.min(65_535) as u16).to_be_bytes());
        h.extend_from_slice(&[0, 0, 0x40, 0, 64, l4, 0, 0]);
        h.extend_from_slice(&key.src.to_be_bytes());
        h.extend_from_slice(&key.dst.to_be_bytes());
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        if let Some(s) = tcp {
            let mut opts = Vec::with_capacity(40);
            if let Some(m) = s.opts.mss {
                opts.extend_from_slice(&[2, 4]);
                opts.extend_from_slice(&m.to_be_bytes());
            }
            if s.opts.sack_permitted {
                opts.extend_from_slice(&[4, 2]);
            }
            if let Some((v, e)) = s.opts.timestamps {
                opts.extend_from_slice(&[8, 10]);
                opts.extend_from_slice(&v.to_be_bytes());
                opts.extend_from_slice(&e.to_be_bytes());
            }
            if let Some(w) = s.opts.wscale {
                opts.extend_from_slice(&[1, 3, 3, w]);
            }
            let blocks = s.opts.sack.as_slice();
            if !blocks.is_empty() {
                opts.extend_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
                for (l, r) in blocks {
                    opts.extend_from_slice(&l.to_be_bytes());
                    opts.extend_from_slice(&r.to_be_bytes());
                }
            }
            while opts.len() % 4 != 0 {
                opts.push(1);
            }
            opts.truncate(40);
            h.extend_from_slice(&key.sport.to_be_bytes());
            h.extend_from_slice(&key.dport.to_be_bytes());
            h.extend_from_slice(&s.seq.to_be_bytes());
            h.extend_from_slice(&s.ack.to_be_bytes());
            h.push(((20 + opts.len()) as u8 / 4) << 4);
            h.push(s.flags.0);
            h.extend_from_slice(&s.window.to_be_bytes());
            h.extend_from_slice(&[0, 0, 0, 0]);
            h.extend_from_slice(&opts);
        } else {
            h.extend_from_slice(&key.sport.to_be_bytes());
            h.extend_from_slice(&key.dport.to_be_bytes());
            h.extend_from_slice(&((size - 20).min(65_535) as u16).to_be_bytes());
            h.extend_from_slice(&[0, 0]);
        }
        let ns = now.nanos();
        self.buf.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&(h.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(&size.to_le_bytes());
        self.buf.extend_from_slice(&h);
    }
}

fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = b.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netreturn_base::TcpFlags;

    #[test]
    fn a_record_has_a_valid_ipv4_header_and_the_full_original_length() {
        let mut pc = Pcap::new();
        let mut seg = Segment { seq: 1, ack: 2, flags: TcpFlags::ACK, window: 500, len: 1458, ..Default::default() };
        seg.opts.timestamps = Some((7, 9));
        let key = FlowKey { src: 0x0a00_0001, dst: 0x0a00_0002, sport: 1000, dport: 80, proto: 6 };
        pc.record(Time::from_millis(1500), 1510, Some(&seg), key);
        let b = pc.bytes();
        assert_eq!(b.len(), 24 + 16 + 20 + 32);
        let rec = &b[24..];
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(rec[4..8].try_into().unwrap()), 500_000_000);
        assert_eq!(u32::from_le_bytes(rec[12..16].try_into().unwrap()), 1510);
        let ip = &rec[16..36];
        assert_eq!(checksum(ip), 0, "IPv4 header checksum verifies");
        let tcp = &rec[36..];
        assert_eq!(tcp[12] >> 4, 8, "data offset covers 12 option bytes");
        assert_eq!(u16::from_be_bytes([tcp[14], tcp[15]]), 500);
    }
}
