//! NGWA's end-host rules (seed 001 sections 2 and 4.2; SPEC.md 2.6).
//!
//! The receiver remembers the last `Wngwa` its data arrived with (the path
//! minimum of the routers' free queue space, carried in an IPv4 option) and
//! advertises `Wa = min(Wb, Wmax, Wngwa)` (seed 001 eq. 2); with the
//! smoothing option (SE) it uses `W = (1 - a) W + a Wngwa` instead of the
//! last value (seed 001 eq. 4). The sender shortens its segments by the
//! option's bytes, so a full segment still fits the MTU once a router has
//! inserted the option (seed 001 section 4.2, "Outgoing TCP").
//!
//! How `Wa` meets RFC 9293's rule that the right edge of the advertised
//! window never moves left (`Connection::window_field`): `Wa` is what the
//! receiver *offers* beyond RCV.NXT; the window field carries
//! `max(Wa, edge - RCV.NXT)`. A falling `Wngwa` therefore shrinks the
//! advertised window only as fast as data arrives (the edge stays put
//! while RCV.NXT moves toward it), at most by one window per round trip,
//! and it never takes back space already offered. The paper's Linux
//! implementation computes its window in `tcp_select_window`, which keeps
//! the same rule, so this is also how the paper's receiver behaved.

/// Settings of an NGWA end host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NgwaConfig {
    /// `Wmax` of seed 001 eq. 2, bytes (64 kB in the paper's simulations).
    pub wmax: u64,
    /// SE (seed 001 eq. 4): the weight `a` of a new value, `0 < a < 1`
    /// (0.3 in the paper); `None` uses the last value as it came.
    pub smoothing: Option<f64>,
    /// Bytes the option adds to an IPv4 packet, taken off the sender's
    /// segment size (seed 001 section 4.2).
    pub option_bytes: u32,
}

impl Default for NgwaConfig {
    fn default() -> NgwaConfig {
        NgwaConfig { wmax: 64_000, smoothing: None, option_bytes: 8 }
    }
}

/// What an NGWA receiver remembers: `Wngwa` (smoothed with SE).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NgwaReceiver {
    /// No value yet: no data with the option has arrived.
    w: Option<f64>,
}

impl NgwaReceiver {
    /// Data arrived carrying `value` (seed 001 section 2: "the variable
    /// Wngwa is extracted from the IP header and deposited into the
    /// memory").
    pub fn on_value(&mut self, cfg: &NgwaConfig, value: u32) {
        let v = value as f64;
        self.w = Some(match (self.w, cfg.smoothing) {
            // Seed 001 eq. 4: W = (1 - a) W + a Wngwa. The paper gives no
            // initial value; the first sample is taken as it is, the usual
            // start of an exponentially weighted mean.
            (Some(w), Some(a)) => (1.0 - a) * w + a * v,
            _ => v,
        });
    }

    /// The `Wngwa` term of eq. 2 in bytes, `None` before any value arrived.
    pub fn window(&self) -> Option<u64> {
        self.w.map(|w| w as u64)
    }

    /// `Wa = min(Wb, Wmax, Wngwa)` (seed 001 eq. 2), never below `floor`.
    /// The floor (one MSS) is ours: the paper is silent, and a window
    /// below one segment would leave the sender waiting for its persist
    /// timer (SPEC.md 1 rule 4 floors every gateway's window the same way).
    pub fn advertise(&self, cfg: &NgwaConfig, wb: u64, floor: u64) -> u64 {
        let wa = wb.min(cfg.wmax);
        match self.window() {
            Some(w) => wa.min(w.max(floor)),
            None => wa,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothing_follows_equation_4_on_a_hand_computed_sequence() {
        // a = 0.3; values 10000, 20000, 0, 5000:
        // W1 = 10000 (first value)
        // W2 = 0.7 * 10000 + 0.3 * 20000 = 13000
        // W3 = 0.7 * 13000 + 0.3 * 0     = 9100
        // W4 = 0.7 * 9100  + 0.3 * 5000  = 7870
        let cfg = NgwaConfig { smoothing: Some(0.3), ..Default::default() };
        let mut r = NgwaReceiver::default();
        let mut seen = vec![];
        for v in [10_000, 20_000, 0, 5_000] {
            r.on_value(&cfg, v);
            seen.push(r.window().unwrap());
        }
        assert_eq!(seen, vec![10_000, 13_000, 9_100, 7_870]);
    }

    #[test]
    fn without_smoothing_the_last_value_counts() {
        let cfg = NgwaConfig::default();
        let mut r = NgwaReceiver::default();
        for v in [10_000, 20_000, 3_000] {
            r.on_value(&cfg, v);
        }
        assert_eq!(r.window(), Some(3_000));
    }

    #[test]
    fn the_advertised_window_is_the_least_of_buffer_wmax_and_wngwa_never_below_one_mss() {
        let cfg = NgwaConfig { wmax: 64_000, ..Default::default() };
        let mut r = NgwaReceiver::default();
        assert_eq!(r.advertise(&cfg, 100_000, 1000), 64_000, "eq. 2 with no value yet: min(Wb, Wmax)");
        r.on_value(&cfg, 30_000);
        assert_eq!(r.advertise(&cfg, 100_000, 1000), 30_000);
        assert_eq!(r.advertise(&cfg, 20_000, 1000), 20_000, "the buffer is smaller");
        r.on_value(&cfg, 200);
        assert_eq!(r.advertise(&cfg, 100_000, 1000), 1000, "floored at one MSS");
        assert_eq!(r.advertise(&cfg, 500, 1000), 500, "but never above the buffer");
    }
}
