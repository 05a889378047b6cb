//! The one parser of quantities, shared by scenario files, the real
//! gateway's command line and its `--config` file, and (through the Python
//! bindings) the testbed: times ("80ms"), rates ("45Mbps"), sizes ("97kB",
//! "100p").
//!
//! In a scenario file or a gateway config a quantity must carry its unit:
//! a bare number (`rtt = 20`, or `"20"`) is refused with a hint, since 20
//! could be milliseconds as well as seconds (a bare `0` is allowed: zero
//! has no unit). The plain parsers below, used by command-line flags and
//! Python callers, read a bare number as seconds, bits per second or bytes.
//! Prefixes are
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
    ("GiB", 1024.0 * 1024.0 * 1024.0),
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

/// The longest time a file or flag may give: 10^9 s (about 32 years).
/// Longer values would saturate the nanosecond clock once added to `now`
/// (a delay of "1e300s" once made the gateway a black hole).
pub const MAX_SECS: f64 = 1e9;
/// The fastest rate: 10^15 bit/s (1 Pb/s).
pub const MAX_BPS: f64 = 1e15;
/// The largest size: 10^15 bytes (1 PB), or 10^9 packets.
pub const MAX_BYTES: f64 = 1e15;
pub const MAX_PACKETS: f64 = 1e9;

/// The checks every quantity passes after its unit is applied: finite, not
/// negative, not past `max`, and not a positive value that rounds to zero
/// in the internal unit (`1e-12s` is not 0 ns, `0.1bps` not 0 bit/s).
fn check_range(s: &str, what: &str, v: f64, max: f64, max_text: &str, smallest: &str) -> Result<(), String> {
    if v.is_nan() {
        return Err(format!("{what} {s:?} is not a number"));
    }
    if v.is_infinite() {
        return Err(format!("{what} {s:?} must be finite (at most {max_text})"));
    }
    if v < 0.0 {
        return Err(format!("{what} {s:?} must not be negative"));
    }
    if v > max {
        return Err(format!("{what} {s:?} is larger than the largest allowed, {max_text}"));
    }
    if v > 0.0 && v.round() == 0.0 {
        return Err(format!("{what} {s:?} rounds to zero; the smallest is {smallest}"));
    }
    Ok(())
}

pub fn parse_time(s: &str) -> Result<Time, String> {
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("{s:?} is not a time like \"80ms\"; allowed: ns, us, ms, s, min"))?;
    let k = factor(TIME_UNITS, unit)
        .ok_or_else(|| format!("unknown time unit {unit:?} in {s:?}; allowed: ns, us, ms, s, min"))?;
    check_range(s, "time", v * k * 1e9, MAX_SECS * 1e9, "1e9 s", "1ns")?;
    Ok(Time::from_secs_f64(v * k))
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (v, unit) = split_number(s).ok_or_else(|| {
        format!("{s:?} is not a rate like \"45Mbps\"; allowed: bps, kbps, Mbps, Gbps, kbit, mbit, gbit")
    })?;
    let k = factor(RATE_UNITS, unit).ok_or_else(|| {
        format!("unknown rate unit {unit:?} in {s:?}; allowed: bps, kbps, Mbps, Gbps, kbit, mbit, gbit")
    })?;
    check_range(s, "rate", v * k, MAX_BPS, "1e15 bit/s", "1 bit/s")?;
    if v * k == 0.0 {
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
    const ALLOWED: &str = "B, kB, MB, GB, KiB, MiB, GiB, Mbit, p (packets)";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not a size like \"97kB\"; allowed: {ALLOWED}"))?;
    if PACKET_UNITS.contains(&unit) {
        check_range(s, "size", v, MAX_PACKETS, "1e9 packets", "1p")?;
        return Ok(Size::Packets(v.round() as u32));
    }
    let k =
        factor(SIZE_UNITS, unit).ok_or_else(|| format!("unknown size unit {unit:?} in {s:?}; allowed: {ALLOWED}"))?;
    check_range(s, "size", v * k, MAX_BYTES, "1e15 bytes", "1 byte")?;
    Ok(Size::Bytes((v * k).round() as u64))
}

/// A quantity read from a string with units or from a bare number; what
/// scenario files and gateway configs hold.
macro_rules! quantity {
    ($name:ident, $inner:ty, $parse:ident, $what:expr, $hint:expr) => {
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
                        match split_number(s) {
                            Some((v, "")) if v != 0.0 => Err(E::custom(bare_number(&s.trim(), $hint))),
                            _ => $parse(s).map($name).map_err(E::custom),
                        }
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if v != 0.0 {
                            return Err(E::custom(bare_number(&v, $hint)));
                        }
                        $parse("0").map($name).map_err(E::custom)
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

/// The refusal of a unitless quantity, with the spellings the user may
/// have meant: `hint` holds `{}` where the number goes.
fn bare_number(v: &dyn fmt::Display, hint: &[&str]) -> String {
    let options: Vec<String> = hint.iter().map(|u| format!("\"{v}{u}\"")).collect();
    format!("{v} has no unit; write {}", options.join(" or "))
}

quantity!(TimeQ, Time, parse_time, "a time with its unit, like \"80ms\"", &["ms", "s"]);
quantity!(RateQ, Rate, parse_rate, "a rate with its unit, like \"45Mbps\"", &["Mbps", "kbps", "bps"]);
quantity!(SizeQ, Size, parse_size, "a size with its unit, like \"97kB\" or \"100p\"", &["p", "kB", "B"]);

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
    fn values_that_round_to_zero_or_saturate_are_errors_naming_the_limit() {
        // Issue 23: "0.1bps" passed as 0 bit/s and divided by zero; "1e300s"
        // saturated the clock; "1e999Mbps" was called "not positive".
        assert!(parse_rate("0.1bps").unwrap_err().contains("rounds to zero"));
        assert!(parse_rate("1e30Gbps").unwrap_err().contains("1e15 bit/s"));
        assert!(parse_rate("1e999Mbps").unwrap_err().contains("finite"));
        assert!(parse_time("1e300s").unwrap_err().contains("1e9 s"));
        assert!(parse_time("1e-12s").unwrap_err().contains("smallest is 1ns"));
        assert!(parse_size("1e30B").unwrap_err().contains("1e15 bytes"));
        assert!(parse_size("0.2p").unwrap_err().contains("rounds to zero"));
        assert!(parse_size("1e10p").is_err(), "past u32 packets");
        assert!(parse_time("nan").is_err() && parse_size("nan").is_err());
        // Zero stays a legal time and size; the largest values pass.
        assert_eq!(parse_time("0s").unwrap(), Time::ZERO);
        assert_eq!(parse_size("0B").unwrap(), Size::Bytes(0));
        assert_eq!(parse_rate("1Pbit").ok(), None, "no such unit");
        assert_eq!(parse_rate("1e15").unwrap(), Rate(1_000_000_000_000_000));
        use serde::de::value::Error;
        use serde::de::IntoDeserializer;
        assert!(Time::deserialize(IntoDeserializer::<Error>::into_deserializer(1e300f64)).is_err());
        assert!(Rate::deserialize(IntoDeserializer::<Error>::into_deserializer(0.1f64)).is_err());
    }

    #[test]
    fn bad_units_name_what_is_allowed() {
        let e = parse_time("80 parsecs").unwrap_err();
        assert!(e.contains("allowed: ns, us, ms, s"), "{e}");
        assert!(parse_rate("fast").unwrap_err().contains("allowed: bps"));
        assert!(parse_rate("0Mbps").is_err());
    }

    #[test]
    fn a_file_quantity_without_its_unit_is_refused_with_the_spellings_meant() {
        use serde::de::value::Error;
        use serde::de::IntoDeserializer;
        let err = |r: Result<Time, Error>| r.unwrap_err().to_string();
        let t = err(Time::deserialize(IntoDeserializer::<Error>::into_deserializer(20i64)));
        assert_eq!(t, r#"20 has no unit; write "20ms" or "20s""#);
        let t = err(Time::deserialize(IntoDeserializer::<Error>::into_deserializer("2.5")));
        assert_eq!(t, r#"2.5 has no unit; write "2.5ms" or "2.5s""#);
        let r = Rate::deserialize(IntoDeserializer::<Error>::into_deserializer(1000u64)).unwrap_err().to_string();
        assert!(r.contains(r#""1000Mbps""#), "{r}");
        let s = Size::deserialize(IntoDeserializer::<Error>::into_deserializer(1500i64)).unwrap_err().to_string();
        assert!(s.contains(r#""1500p""#) && s.contains(r#""1500B""#), "{s}");
        // Zero has no unit to forget; a rate must still be positive.
        let z = Time::deserialize(IntoDeserializer::<Error>::into_deserializer(0i64)).unwrap();
        assert_eq!(z, Time::ZERO);
        assert!(Rate::deserialize(IntoDeserializer::<Error>::into_deserializer(0u64)).is_err());
        // With its unit, the same number is read as written.
        let ms = Time::deserialize(IntoDeserializer::<Error>::into_deserializer("20ms")).unwrap();
        assert_eq!(ms, Time::from_millis(20));
    }

    #[test]
    fn a_flag_or_python_number_means_seconds_bits_per_second_and_bytes() {
        assert_eq!(parse_time("2.5").unwrap(), Time::from_millis(2500));
        assert_eq!(parse_rate("1000").unwrap(), Rate(1000));
        assert_eq!(parse_size("1500").unwrap(), Size::Bytes(1500));
        assert!(parse_size("-1").is_err());
        assert!(parse_rate("0").is_err());
    }
}
