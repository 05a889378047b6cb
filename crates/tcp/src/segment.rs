//! The simulator's TCP segment: header fields as plain values, no payload
//! bytes (only their count), so moving a segment costs a few words.

use netreturn_base::{Ecn, InBand, TcpFlags};

/// Up to four SACK blocks (RFC 2018); with timestamps at most three fit.
pub const MAX_SACK_BLOCKS: usize = 4;

/// Up to four SACK blocks (RFC 2018 section 3). An empty block (left ==
/// right, which no SACK block can be) ends the list, so no count is stored:
/// that keeps a [`Segment`], and the simulator's packet slot holding one,
/// within two cache lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [(u32, u32); MAX_SACK_BLOCKS],
}

impl SackBlocks {
    pub fn len(&self) -> usize {
        self.blocks.iter().take_while(|(l, r)| l != r).count()
    }
    pub fn is_empty(&self) -> bool {
        self.blocks[0].0 == self.blocks[0].1
    }
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..self.len()]
    }
    /// Appends a block; false when four are there already or the block is
    /// empty (not a block).
    pub fn push(&mut self, left: u32, right: u32) -> bool {
        let n = self.len();
        if n < MAX_SACK_BLOCKS && left != right {
            self.blocks[n] = (left, right);
            true
        } else {
            false
        }
    }
}

/// TCP options carried by a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr), RFC 7323.
    pub timestamps: Option<(u32, u32)>,
    pub sack: SackBlocks,
}

impl Options {
    /// Bytes these options occupy on the wire, padded to 32 bits.
    pub fn wire_len(&self) -> u32 {
        let mut n = 0u32;
        if self.mss.is_some() {
            n += 4;
        }
        if self.wscale.is_some() {
            n += 3;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.timestamps.is_some() {
            n += 10;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len() as u32;
        }
        n.div_ceil(4) * 4
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// Raw 16-bit window field; the receiver's window is `window << wscale`.
    pub window: u16,
    pub opts: Options,
    /// Payload bytes (the simulator carries no payload, only its length).
    pub len: u32,
    /// Set by the sender when this segment repeats data sent before. Not on
    /// the wire; the simulator uses it for the efficiency metric (seed 000
    /// eq. 11) and the gateway ignores it.
    pub retransmission: bool,
    /// In-band fields of the IP packet carrying the segment (NGWA option,
    /// XCP header); they add [`InBand::wire_len`] bytes to the packet.
    pub inband: InBand,
    /// The ECN field of the IP packet carrying the segment (RFC 3168
    /// section 5): set by the sender, possibly marked CE on the way.
    pub ecn: Ecn,
}

impl Segment {
    /// TCP header length including options.
    pub fn header_len(&self) -> u32 {
        20 + self.opts.wire_len()
    }
    /// Sequence space this segment occupies (payload plus SYN and FIN).
    pub fn seq_len(&self) -> u32 {
        self.len + self.flags.syn() as u32 + self.flags.fin() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_lengths_are_padded_like_linux_sends_them() {
        let mut o = Options { timestamps: Some((1, 2)), ..Default::default() };
        assert_eq!(o.wire_len(), 12);
        o.sack.push(1, 2);
        o.sack.push(3, 4);
        o.sack.push(5, 6);
        // 10 + 2 + 24 = 36 bytes, the most SACK that fits with timestamps.
        assert_eq!(o.wire_len(), 36);
        let syn = Options {
            mss: Some(1460),
            wscale: Some(7),
            sack_permitted: true,
            timestamps: Some((0, 0)),
            ..Default::default()
        };
        assert_eq!(syn.wire_len(), 20);
    }
}
