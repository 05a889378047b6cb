use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// A point in time or a span of time, in integer nanoseconds.
///
/// One type serves both: simulated clocks start at zero, so an instant is the
/// span since the start. Integer time keeps event ordering exact and runs
/// reproducible bit for bit (floating point is kept for statistics only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn from_micros(us: u64) -> Time {
        Time(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Time {
        if s.is_nan() || s <= 0.0 {
            Time(0)
        } else {
            Time((s * 1e9).round() as u64)
        }
    }
    pub const fn nanos(self) -> u64 {
        self.0
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    pub fn saturating_sub(self, rhs: Time) -> Time {
        Time(self.0.saturating_sub(rhs.0))
    }
    pub fn mul_f64(self, k: f64) -> Time {
        Time::from_secs_f64(self.secs_f64() * k)
    }
    /// Exponential backoff: `self` doubled `doublings` times, at most `cap`
    /// (RFC 6298 (5.5) for the RTO; Linux `tcp_probe0_when` for probes).
    pub fn backed_off(self, doublings: u32, cap: Time) -> Time {
        Time(self.0.saturating_mul(1u64 << doublings.min(32))).min(cap)
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        *self = *self + rhs;
    }
}
impl Sub for Time {
    type Output = Time;
    /// Panics in debug builds when time would run backward.
    fn sub(self, rhs: Time) -> Time {
        debug_assert!(self >= rhs, "time ran backward: {self} - {rhs}");
        Time(self.0.wrapping_sub(rhs.0))
    }
}
impl SubAssign for Time {
    fn sub_assign(&mut self, rhs: Time) {
        *self = *self - rhs;
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_exact_in_integer_units() {
        assert_eq!(Time::from_millis(80), Time::from_micros(80_000));
        assert_eq!(Time::from_secs(2).nanos(), 2_000_000_000);
        assert_eq!(Time::from_secs_f64(0.0015), Time::from_micros(1500));
        assert_eq!(Time::from_secs_f64(-1.0), Time::ZERO);
    }

    #[test]
    fn addition_saturates_instead_of_wrapping() {
        assert_eq!(Time::MAX + Time::from_secs(1), Time::MAX);
    }
}
