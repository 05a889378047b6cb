//! UDP headers (RFC 768).

use crate::checksum;
use crate::{get_u16, set_u16, Result};

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const LENGTH: usize = 4;
    pub const CHECKSUM: usize = 6;
}

pub const HEADER_LEN: usize = 8;

packet_view! {
    /// A zero-copy view of a UDP datagram.
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// `8 <= length field <= buffer length`.
    fn check(&self, len: usize) -> Result<()> {
        crate::declared_len(self.len() as usize, HEADER_LEN, len)
    }
    pub fn src_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::SRC_PORT)
    }
    pub fn dst_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::DST_PORT)
    }
    /// Length of header and payload (the length field).
    pub fn len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::LENGTH)
    }
    pub fn is_empty(&self) -> bool {
        self.len() as usize == HEADER_LEN
    }
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::CHECKSUM)
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.len() as usize]
    }
    /// RFC 768: a zero checksum means "not computed" and always verifies.
    pub fn verify_checksum(&self, src: [u8; 4], dst: [u8; 4]) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let b = &self.buffer.as_ref()[..self.len() as usize];
        let s = checksum::pseudo_header_v4(src, dst, crate::ipv4::protocol::UDP, self.len());
        checksum::fold(checksum::sum(s, b)) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_src_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::SRC_PORT, v)
    }
    pub fn set_dst_port(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::DST_PORT, v)
    }
    pub fn set_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::LENGTH, v)
    }
    pub fn set_checksum(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::CHECKSUM, v)
    }
    pub fn fill_checksum(&mut self, src: [u8; 4], dst: [u8; 4]) {
        self.set_checksum(0);
        let l = self.len();
        let s = checksum::pseudo_header_v4(src, dst, crate::ipv4::protocol::UDP, l);
        let c = !checksum::fold(checksum::sum(s, &self.buffer.as_ref()[..l as usize]));
        // RFC 768: a computed zero is transmitted as all ones.
        self.set_checksum(if c == 0 { 0xffff } else { c });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn checksum_round_trips_and_zero_means_none() {
        let mut b = [0u8; 12];
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_src_port(5000);
        p.set_dst_port(53);
        p.set_len(12);
        p.fill_checksum([1, 2, 3, 4], [5, 6, 7, 8]);
        assert!(p.verify_checksum([1, 2, 3, 4], [5, 6, 7, 8]));
        p.set_checksum(0);
        assert!(p.verify_checksum([9, 9, 9, 9], [5, 6, 7, 8]));
    }

    #[test]
    fn length_field_is_checked() {
        let mut b = [0u8; 8];
        b[4..6].copy_from_slice(&7u16.to_be_bytes());
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Malformed);
        b[4..6].copy_from_slice(&9u16.to_be_bytes());
        assert_eq!(Packet::new_checked(&b[..]).unwrap_err(), Error::Truncated);
    }
}
