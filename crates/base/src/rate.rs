use crate::Time;
use std::fmt;

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(b: u64) -> Rate {
        Rate(b)
    }
    pub const fn kbps(k: u64) -> Rate {
        Rate(k * 1_000)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    pub fn from_mbps_f64(m: f64) -> Rate {
        Rate((m * 1e6).round().max(0.0) as u64)
    }
    pub const fn bits_per_sec(self) -> u64 {
        self.0
    }
    pub fn bytes_per_sec_f64(self) -> f64 {
        self.0 as f64 / 8.0
    }
    pub fn mbps_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }

    /// Serialization time of `bytes` at this rate, rounded up to the next
    /// nanosecond so a link never transmits faster than its rate.
    ///
    /// Called for every packet on every hop. The bit-nanoseconds fit in 64
    /// bits for any packet (up to ~2.3 GB), and a 64-bit division is one
    /// instruction where a 128-bit one is a library call; the wide path
    /// remains for the rest.
    pub fn tx_time(self, bytes: u64) -> Time {
        debug_assert!(self.0 > 0, "zero rate has no serialization time");
        let bits = bytes as u128 * 8 * 1_000_000_000;
        match u64::try_from(bits) {
            Ok(b) => Time(b.div_ceil(self.0)),
            Err(_) => Time(bits.div_ceil(self.0 as u128) as u64),
        }
    }

    /// Bytes carried at this rate during `dt` (bandwidth-delay product when
    /// `dt` is a round-trip time).
    pub fn bytes_in(self, dt: Time) -> u64 {
        (self.0 as u128 * dt.0 as u128 / 8 / 1_000_000_000) as u64
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} Mb/s", self.mbps_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_of_a_full_frame() {
        // 1500 B at 100 Mb/s = 12000 bits / 1e8 = 120 us.
        assert_eq!(Rate::mbps(100).tx_time(1500), Time::from_micros(120));
        // 1 B at 3 b/s = 8/3 s, rounded up.
        assert_eq!(Rate::bps(3).tx_time(1), Time(2_666_666_667));
        // Past 64 bits of bit-nanoseconds (the 128-bit path): 4 GB at
        // 1 Tb/s = 32 ms.
        assert_eq!(Rate::mbps(1_000_000).tx_time(4_000_000_000), Time::from_millis(32));
    }

    #[test]
    fn bandwidth_delay_product() {
        // EWT scenario 2: 45 Mb/s x 80 ms = 450 kB.
        assert_eq!(Rate::mbps(45).bytes_in(Time::from_millis(80)), 450_000);
    }
}
