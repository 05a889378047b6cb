//! Quantities written in scenario files: times ("80ms"), rates ("45Mbps"),
//! sizes ("97kB", "100p"). A bare number means seconds, bits per second or
//! bytes. Prefixes are decimal (k = 1000), as in the papers' tables; binary
//! prefixes (KiB, MiB) are accepted too.

use netreturn_base::{Rate, Time};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    // "e" may also start a unit; back off if the number does not parse.
    let mut end = end;
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

pub fn parse_time(s: &str) -> Result<Time, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not a time like \"80ms\""))?;
    let k = match unit {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "min" => 60.0,
        _ => return Err(format!("unknown time unit {unit:?} in {s:?}; allowed: ns, us, ms, s, min")),
    };
    if v < 0.0 || !v.is_finite() {
        return Err(format!("time {s:?} must be finite and not negative"));
    }
    Ok(Time::from_secs_f64(v * k))
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not a rate like \"45Mbps\""))?;
    let k = match unit {
        "" | "bps" | "b/s" => 1.0,
        "kbps" | "Kbps" | "kb/s" | "Kb/s" => 1e3,
        "Mbps" | "mbps" | "Mb/s" | "Mb" => 1e6,
        "Gbps" | "gbps" | "Gb/s" => 1e9,
        _ => return Err(format!("unknown rate unit {unit:?} in {s:?}; allowed: bps, kbps, Mbps, Gbps")),
    };
    if v <= 0.0 || !v.is_finite() {
        return Err(format!("rate {s:?} must be positive"));
    }
    Ok(Rate((v * k).round() as u64))
}

/// A size in bytes or, for queue limits, in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    Packets(u32),
}

impl Size {
    pub fn bytes(self, typical_packet: u32) -> u64 {
        match self {
            Size::Bytes(b) => b,
            Size::Packets(p) => p as u64 * typical_packet as u64,
        }
    }
}

pub fn parse_size(s: &str) -> Result<Size, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not a size like \"97kB\""))?;
    if v < 0.0 || !v.is_finite() {
        return Err(format!("size {s:?} must not be negative"));
    }
    let k = match unit {
        "" | "B" => 1.0,
        "kB" | "KB" | "k" => 1e3,
        "MB" | "M" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "p" | "pkts" | "packets" => return Ok(Size::Packets(v.round() as u32)),
        "Mbit" | "Mb" => 1e6 / 8.0,
        _ => {
            return Err(format!(
                "unknown size unit {unit:?} in {s:?}; allowed: B, kB, MB, GB, KiB, MiB, Mbit, p (packets)"
            ))
        }
    };
    Ok(Size::Bytes((v * k).round() as u64))
}

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
                            return Err(E::custom(format!("{v} must be finite and not negative")));
                        }
                        Ok($name($from_num(v)))
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
    };
}

quantity!(TimeQ, Time, parse_time, "a time like \"80ms\" or a number of seconds", Time::from_secs_f64);
quantity!(RateQ, Rate, parse_rate, "a rate like \"45Mbps\" or a number of bits per second", |v: f64| Rate(
    v.round() as u64
));
quantity!(SizeQ, Size, parse_size, "a size like \"97kB\", \"100p\" or a number of bytes", |v: f64| {
    Size::Bytes(v.round() as u64)
});

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
    fn bad_units_name_what_is_allowed() {
        let e = parse_time("80 parsecs").unwrap_err();
        assert!(e.contains("allowed: ns, us, ms, s"), "{e}");
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0Mbps").is_err());
    }
}
