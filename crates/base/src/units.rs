//! The one parser of quantities, shared by scenario files, the real
//! gateway's command line and its `--config` file, and (through the Python
//! bindings) the testbed: times ("80ms"), rates ("45Mbps"), sizes ("97kB",
//! "100p").
//!
//! A bare number means seconds, bits per second or bytes. Prefixes are
//! decimal (k = 1000), as in the papers' tables; binary prefixes (KiB, MiB)
//! are accepted too. A negative, non-finite or unknown value is an error
//! that names what is allowed; nothing silently becomes zero.

use crate::{Rate, Time};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// Time units and their factor to seconds.
pub const TIME_UNITS: &[(&str, f64)] =
    &[("", 1.0), ("s", 1.0), ("sec", 1.0), ("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9), ("min", 60.0)];

/// Rate units and their factor to bits per second. The `bit` forms are the
/// spelling of `tc` and of the gateway's `--rate` ("100mbit").
pub const RATE_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("bps", 1.0),
    ("b/s", 1.0),
    ("bit", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("kb/s", 1e3),
    ("Kb/s", 1e3),
    ("kbit", 1e3),
    ("Kbit", 1e3),
    ("Mbps", 1e6),
    ("mbps", 1e6),
    ("Mb/s", 1e6),
    ("Mb", 1e6),
    ("mbit", 1e6),
    ("Mbit", 1e6),
    ("Gbps", 1e9),
    ("gbps", 1e9),
    ("Gb/s", 1e9),
    ("gbit", 1e9),
    ("Gbit", 1e9),
];

/// Size units and their factor to bytes (packets are separate: `p`,
/// `pkts`, `packets`).
pub const SIZE_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("k", 1e3),
    ("MB", 1e6),
    ("M", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1024.0 * 1024.0),
    ("Mbit", 1e6 / 8.0),
    ("Mb", 1e6 / 8.0),
];
const PACKET_UNITS: &[&str] = &["p", "pkts", "packets"];

/// Splits "97 kB" into (97.0, "kB"); `None` if no number leads.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let mut end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    // "e" may also start a unit; back off until the number parses.
    loop {
        let num: String = s[..end].chars().filter(|&c| c != '_').collect();
        if let Ok(v) = num.parse::<f64>() {
            return Some((v, s[end..].trim()));
        }
        if end == 0 {
            return None;
        }
        end -= 1;
    }
}

fn factor(table: &[(&str, f64)], unit: &str) -> Option<f64> {
    table.iter().find(|(u, _)| *u == unit).map(|(_, k)| *k)
}

pub fn parse_time(s: &str) -> Result<Time, String> {
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("{s:?} is not a time like \"80ms\"; allowed: ns, us, ms, s, min"))?;
    let k = factor(TIME_UNITS, unit)
        .ok_or_else(|| format!("unknown time unit {unit:?} in {s:?}; allowed: ns, us, ms, s, min"))?;
    if v < 0.0 || !v.is_finite() {
        return Err(format!("time {s:?} must be finite and not negative"));
    }
    Ok(Time::from_secs_f64(v * k))
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (v, unit) = split_number(s).ok_or_else(|| {
        format!("{s:?} is not a rate like \"45Mbps\"; allowed: bps, kbps, Mbps, Gbps, kbit, mbit, gbit")
    })?;
    let k = factor(RATE_UNITS, unit).ok_or_else(|| {
        format!("unknown rate unit {unit:?} in {s:?}; allowed: bps, kbps, Mbps, Gbps, kbit, mbit, gbit")
    })?;
    if v <= 0.0 || !v.is_finite() {
        return Err(format!("rate {s:?} must be positive"));
    }
    Ok(Rate((v * k).round() as u64))
}

/// A size in bytes or, for queue limits and thresholds, in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    Packets(u32),
}

impl Size {
    /// Bytes, counting a packet as `typical_packet` bytes.
    pub fn bytes(self, typical_packet: u32) -> u64 {
        match self {
            Size::Bytes(b) => b,
            Size::Packets(p) => p as u64 * typical_packet as u64,
        }
    }
}

pub fn parse_size(s: &str) -> Result<Size, String> {
    const ALLOWED: &str = "B, kB, MB, GB, KiB, MiB, Mbit, p (packets)";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not a size like \"97kB\"; allowed: {ALLOWED}"))?;
    if v < 0.0 || !v.is_finite() {
        return Err(format!("size {s:?} must not be negative"));
    }
    if PACKET_UNITS.contains(&unit) {
        return Ok(Size::Packets(v.round() as u32));
    }
    let k =
        factor(SIZE_UNITS, unit).ok_or_else(|| format!("unknown size unit {unit:?} in {s:?}; allowed: {ALLOWED}"))?;
    Ok(Size::Bytes((v * k).round() as u64))
}

/// A quantity read from a string with units or from a bare number; what
/// scenario files and gateway configs hold.
macro_rules! quantity {
    ($name:ident, $inner:ty, $parse:ident, $what:expr, $from_num:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if v < 0.0 || !v.is_finite() {
                            return Err(E::custom(format!("{v} must be finite and not negative; expected {}", $what)));
                        }
                        $from_num(v).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl<'de> Deserialize<'de> for $inner {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $name::deserialize(d).map(|q| q.0)
            }
        }
    };
}

quantity!(TimeQ, Time, parse_time, "a time like \"80ms\" or a number of seconds", |v: f64| Ok::<_, String>(
    Time::from_secs_f64(v)
));
quantity!(RateQ, Rate, parse_rate, "a rate like \"45Mbps\" or a number of bits per second", |v: f64| {
    if v == 0.0 {
        Err("a rate must be positive".to_string())
    } else {
        Ok(Rate(v.round() as u64))
    }
});
quantity!(SizeQ, Size, parse_size, "a size like \"97kB\", \"100p\" or a number of bytes", |v: f64| Ok::<_, String>(
    Size::Bytes(v.round() as u64)
));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_parse_as_the_papers_write_them() {
        assert_eq!(parse_time("80ms").unwrap(), Time::from_millis(80));
        assert_eq!(parse_time("1.5 s").unwrap(), Time::from_millis(1500));
        assert_eq!(parse_rate("13.35Mbps").unwrap(), Rate(13_350_000));
        assert_eq!(parse_rate("45Mb/s").unwrap(), Rate::mbps(45));
        assert_eq!(parse_size("97kB").unwrap(), Size::Bytes(97_000));
        assert_eq!(parse_size("100p").unwrap(), Size::Packets(100));
        assert_eq!(parse_size("5Mbit").unwrap(), Size::Bytes(625_000));
        assert_eq!(parse_size("1_000_000").unwrap(), Size::Bytes(1_000_000));
    }

    #[test]
    fn the_gateways_tc_spellings_mean_the_same_rates() {
        assert_eq!(parse_rate("100mbit").unwrap(), Rate::mbps(100));
        assert_eq!(parse_rate("1Gbit").unwrap(), Rate::mbps(1000));
        assert_eq!(parse_rate("500kbit").unwrap(), Rate::kbps(500));
        assert_eq!(parse_size("97KiB").unwrap(), Size::Bytes(97 * 1024));
        assert_eq!(parse_time("250us").unwrap(), Time::from_micros(250));
    }

    #[test]
    fn negative_and_garbage_values_are_errors_never_zero() {
        // The old gateway parser read all of these as 0 bytes.
        assert!(parse_size("-5k").is_err());
        assert!(parse_size("29q").unwrap_err().contains("allowed: B, kB"));
        assert!(parse_time("-1ms").is_err());
        assert!(parse_rate("-3Mbps").is_err());
        assert!(parse_rate("NaN").is_err());
    }

    #[test]
    fn bad_units_name_what_is_allowed() {
        let e = parse_time("80 parsecs").unwrap_err();
        assert!(e.contains("allowed: ns, us, ms, s"), "{e}");
        assert!(parse_rate("fast").unwrap_err().contains("allowed: bps"));
        assert!(parse_rate("0Mbps").is_err());
    }

    #[test]
    fn numbers_mean_seconds_bits_per_second_and_bytes() {
        use serde::de::value::Error;
        use serde::de::IntoDeserializer;
        let t = Time::deserialize(IntoDeserializer::<Error>::into_deserializer(2.5f64)).unwrap();
        let r = Rate::deserialize(IntoDeserializer::<Error>::into_deserializer(1000u64)).unwrap();
        let s = Size::deserialize(IntoDeserializer::<Error>::into_deserializer(1500i64)).unwrap();
        assert_eq!((t, r, s), (Time::from_millis(2500), Rate(1000), Size::Bytes(1500)));
        assert!(Size::deserialize(IntoDeserializer::<Error>::into_deserializer(-1i64)).is_err());
        assert!(Rate::deserialize(IntoDeserializer::<Error>::into_deserializer(0u64)).is_err());
    }
}
