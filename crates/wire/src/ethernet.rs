//! Ethernet II frames (IEEE 802.3 clause 3.2.6 "Length/Type" >= 0x0600), with
//! detection of 802.1Q / 802.1ad VLAN tags so a bridge can find the network
//! layer behind them (or pass tagged frames through untouched).

use crate::{get_u16, set_u16, Error, Result};

/// EtherType values the gateway distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtherType {
    Ipv4,
    Arp,
    Ipv6,
    /// IEEE 802.1Q customer VLAN tag (TPID 0x8100).
    Vlan,
    /// IEEE 802.1ad service VLAN tag, "QinQ" (TPID 0x88A8).
    QinQ,
    Unknown(u16),
}

impl From<u16> for EtherType {
    fn from(v: u16) -> EtherType {
        match v {
            0x0800 => EtherType::Ipv4,
            0x0806 => EtherType::Arp,
            0x86dd => EtherType::Ipv6,
            0x8100 => EtherType::Vlan,
            0x88a8 => EtherType::QinQ,
            other => EtherType::Unknown(other),
        }
    }
}

impl From<EtherType> for u16 {
    fn from(t: EtherType) -> u16 {
        match t {
            EtherType::Ipv4 => 0x0800,
            EtherType::Arp => 0x0806,
            EtherType::Ipv6 => 0x86dd,
            EtherType::Vlan => 0x8100,
            EtherType::QinQ => 0x88a8,
            EtherType::Unknown(v) => v,
        }
    }
}

mod field {
    use core::ops::{Range, RangeFrom};
    pub const DESTINATION: Range<usize> = 0..6;
    pub const SOURCE: Range<usize> = 6..12;
    pub const ETHERTYPE: usize = 12;
    pub const PAYLOAD: RangeFrom<usize> = 14..;
    /// A VLAN tag is 4 bytes: TPID (the outer EtherType) then TCI, then the
    /// inner EtherType follows.
    pub const TAG_LEN: usize = 4;
}

/// Length of an untagged Ethernet II header.
pub const HEADER_LEN: usize = field::PAYLOAD.start;
/// At most this many stacked VLAN tags are looked through (802.1ad QinQ = 2).
pub const MAX_TAGS: usize = 2;

/// A zero-copy view of an Ethernet II frame (without FCS: AF_PACKET and
/// veth hand frames over without it).
#[derive(Debug, Clone)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Checks that the untagged header fits.
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(Frame { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_addr(&self) -> [u8; 6] {
        self.buffer.as_ref()[field::DESTINATION].try_into().unwrap()
    }
    pub fn src_addr(&self) -> [u8; 6] {
        self.buffer.as_ref()[field::SOURCE].try_into().unwrap()
    }
    /// The outer EtherType (the TPID if the frame is tagged).
    pub fn ethertype(&self) -> EtherType {
        get_u16(self.buffer.as_ref(), field::ETHERTYPE).into()
    }
    pub fn is_vlan_tagged(&self) -> bool {
        matches!(self.ethertype(), EtherType::Vlan | EtherType::QinQ)
    }

    /// The EtherType behind up to [`MAX_TAGS`] VLAN tags and the offset of
    /// the network-layer header, with the number of tags skipped.
    /// `Err(Truncated)` if a tag is cut short; a third stacked tag is
    /// `Err(Malformed)` (not something a bridge should interpret).
    pub fn network_layer(&self) -> Result<(EtherType, usize, usize)> {
        let b = self.buffer.as_ref();
        let mut at = field::ETHERTYPE;
        for tags in 0..=MAX_TAGS {
            let t: EtherType = get_u16(b, at).into();
            match t {
                EtherType::Vlan | EtherType::QinQ => {
                    if tags == MAX_TAGS {
                        return Err(Error::Malformed);
                    }
                    at += field::TAG_LEN;
                    if b.len() < at + 2 {
                        return Err(Error::Truncated);
                    }
                }
                _ => return Ok((t, at + 2, tags)),
            }
        }
        unreachable!("the loop returns at MAX_TAGS")
    }

    /// The payload of an untagged frame.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    pub fn set_dst_addr(&mut self, a: [u8; 6]) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&a)
    }
    pub fn set_src_addr(&mut self, a: [u8; 6]) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&a)
    }
    pub fn set_ethertype(&mut self, t: EtherType) {
        set_u16(self.buffer.as_mut(), field::ETHERTYPE, t.into())
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_ipv4_frame_has_network_layer_at_14() {
        let mut b = [0u8; 20];
        b[12..14].copy_from_slice(&[0x08, 0x00]);
        let f = Frame::new_checked(&b[..]).unwrap();
        assert_eq!(f.network_layer(), Ok((EtherType::Ipv4, 14, 0)));
        assert!(!f.is_vlan_tagged());
    }

    #[test]
    fn qinq_tags_are_looked_through() {
        let mut b = [0u8; 30];
        b[12..14].copy_from_slice(&[0x88, 0xa8]);
        b[16..18].copy_from_slice(&[0x81, 0x00]);
        b[20..22].copy_from_slice(&[0x08, 0x06]);
        let f = Frame::new_checked(&b[..]).unwrap();
        assert!(f.is_vlan_tagged());
        assert_eq!(f.network_layer(), Ok((EtherType::Arp, 22, 2)));
    }

    #[test]
    fn a_cut_tag_is_truncated_not_a_panic() {
        let mut b = [0u8; 15];
        b[12..14].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(Frame::new_checked(&b[..]).unwrap().network_layer(), Err(Error::Truncated));
        assert_eq!(Frame::new_checked(&b[..13]).unwrap_err(), Error::Truncated);
    }
}
