//! Counters of the gateway, per direction where it matters, printed as JSON.

use std::fmt::Write;

/// Counters of one direction of the bridge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirStats {
    /// Frames read from the ingress interface.
    pub received: u64,
    /// Frames handed to the egress interface.
    pub forwarded: u64,
    pub forwarded_bytes: u64,
    /// Frames refused by the queue discipline (tail drop or RED).
    pub dropped_queue: u64,
    /// Frames dropped by the Bernoulli loss model.
    pub dropped_loss: u64,
    /// TCP/IPv4 frames seen.
    pub tcp: u64,
    /// Frames that are not TCP/IPv4 (ARP, IPv6, UDP, ICMP, ...), passed.
    pub non_tcp: u64,
    /// IPv4 fragments, passed untouched.
    pub fragments: u64,
    /// Frames whose IPv4/TCP headers do not hold together, passed untouched
    /// (SPEC.md section 1 rule 6).
    pub malformed_passed: u64,
    /// Frames above the maximum frame size (GRO/TSO aggregates when offloads
    /// were left on), passed untouched and unparsed.
    pub oversize: u64,
    /// ACKs whose window field the controller lowered.
    pub rewritten: u64,
    /// Frames an AQM marked CE instead of dropping (RFC 3168 section 5).
    pub ecn_marked: u64,
    /// Frames the egress socket refused (ENOBUFS...): lost.
    pub tx_errors: u64,
    /// Frames the kernel dropped before the bridge read them (its receive
    /// ring or socket buffer was full): lost.
    pub rx_dropped: u64,
    /// Frames the kernel delivered truncated (too big for a ring slot, and
    /// no room for a full copy): dropped, since a frame must pass whole.
    pub rx_truncated: u64,
}

/// Counters of both directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Data direction A -> B (the watched queue).
    pub a_to_b: DirStats,
    /// ACK direction B -> A (where windows are rewritten).
    pub b_to_a: DirStats,
}

impl Stats {
    /// Sum over both directions of one counter.
    pub fn total(&self, f: impl Fn(&DirStats) -> u64) -> u64 {
        f(&self.a_to_b) + f(&self.b_to_a)
    }

    /// One JSON object: totals at the top level (the names the testbed
    /// reads), then each direction.
    pub fn to_json(&self, extra: &[(&str, String)]) -> String {
        let mut s = String::from("{");
        type Counter = (&'static str, fn(&DirStats) -> u64);
        let totals: [Counter; 15] = [
            ("received", |d| d.received),
            ("forwarded", |d| d.forwarded),
            ("forwarded_bytes", |d| d.forwarded_bytes),
            ("dropped_queue", |d| d.dropped_queue),
            ("dropped_loss", |d| d.dropped_loss),
            ("tcp", |d| d.tcp),
            ("non_tcp", |d| d.non_tcp),
            ("fragments", |d| d.fragments),
            ("malformed_passed", |d| d.malformed_passed),
            ("oversize", |d| d.oversize),
            ("rewritten", |d| d.rewritten),
            ("ecn_marked", |d| d.ecn_marked),
            ("tx_errors", |d| d.tx_errors),
            ("rx_dropped", |d| d.rx_dropped),
            ("rx_truncated", |d| d.rx_truncated),
        ];
        for (name, f) in totals {
            let _ = write!(s, "\"{name}\":{},", self.total(f));
        }
        for (name, d) in [("a_to_b", &self.a_to_b), ("b_to_a", &self.b_to_a)] {
            let _ = write!(s, "\"{name}\":{{");
            for (i, (n, f)) in totals.iter().enumerate() {
                let _ = write!(s, "{}\"{n}\":{}", if i > 0 { "," } else { "" }, f(d));
            }
            s.push_str("},");
        }
        for (k, v) in extra {
            let _ = write!(s, "\"{k}\":{v},");
        }
        s.pop();
        s.push('}');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_totals_and_directions() {
        let mut st = Stats::default();
        st.a_to_b.forwarded = 3;
        st.b_to_a.forwarded = 4;
        st.b_to_a.rewritten = 2;
        let j = st.to_json(&[("controller", "\"ewt\"".into())]);
        assert!(j.starts_with("{\"received\":0,\"forwarded\":7,"), "{j}");
        assert!(j.contains("\"rewritten\":2"));
        assert!(j.contains("\"b_to_a\":{\"received\":0,\"forwarded\":4"));
        assert!(j.ends_with("\"controller\":\"ewt\"}"), "{j}");
    }
}
