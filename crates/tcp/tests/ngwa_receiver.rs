//! Property tests of NGWA's receiver rule (seed 001 eq. 2 and 4) under
//! RFC 9293's window rules: over random sequences of arriving data (in
//! order, out of order, repeated) each carrying a random `Wngwa`, the
//! advertised right edge never moves left, and beyond the space already
//! offered the window is never raised above `min(Wb, Wmax, Wngwa)`.

use netreturn_base::{InBand, TcpFlags, Time};
use netreturn_tcp::{Connection, NgwaConfig, Segment, TcpConfig};
use proptest::prelude::*;

const ISS: u32 = 1000;

fn established(cfg: &TcpConfig) -> Connection {
    let mut c = Connection::client(cfg, ISS);
    let mut s = Connection::server(cfg, 5000);
    let mut out = Vec::new();
    c.open(Time::ZERO, &mut out);
    let syn = out.pop().unwrap();
    s.on_segment(Time::ZERO, &syn, &mut out);
    let syn_ack = out.pop().unwrap();
    c.on_segment(Time::ZERO, &syn_ack, &mut out);
    let ack = out.pop().unwrap();
    s.on_segment(Time::ZERO, &ack, &mut out);
    s
}

proptest! {
    #[test]
    fn an_ngwa_receiver_never_moves_its_edge_left_nor_offers_more_than_eq_2(
        events in prop::collection::vec((0u64..60, 0u32..120_000), 1..200),
        smoothing in prop::option::of(0.05f64..0.95),
        wmax in 2_000u64..80_000,
    ) {
        let mss = 1000u64;
        let ngwa = NgwaConfig { wmax, smoothing, option_bytes: 8 };
        let cfg = TcpConfig { mss: mss as u32, rcv_buf: 64_000, window_scaling: false, sack: false, timestamps: false, ngwa: Some(ngwa), ..Default::default() };
        let mut s = established(&cfg);
        let seg_len = 992u64; // the peer's segments, shortened by the option
        // The SYN-ACK offered the whole buffer from RCV.NXT = 1 (RFC 7323
        // section 2.2: unscaled, before any option arrived).
        let mut edge = 1 + 64_000u64;
        let mut acked = 0u64;
        let mut smoothed: Option<f64> = None;
        let mut out = Vec::new();
        for (i, &(k, w)) in events.iter().enumerate() {
            let seg = Segment {
                seq: ISS.wrapping_add(1 + (k * seg_len) as u32),
                ack: 5001,
                flags: TcpFlags::ACK,
                window: 60_000,
                len: seg_len as u32,
                inband: InBand::Ngwa(w),
                ..Default::default()
            };
            // The model of eq. 4 (or the last value without SE).
            smoothed = Some(match (smoothed, smoothing) {
                (Some(p), Some(a)) => (1.0 - a) * p + a * w as f64,
                _ => w as f64,
            });
            s.on_segment(Time::from_millis(1 + i as u64), &seg, &mut out);
            for a in out.drain(..) {
                let ack = a.ack.wrapping_sub(ISS) as u64;
                let right = ack + a.window as u64;
                prop_assert!(right >= edge, "edge moved left: {} -> {}", edge, right);
                prop_assert!(ack >= acked);
                let model = (smoothed.unwrap() as u64).max(mss).min(wmax).min(64_000);
                // Above what is already offered, nothing beyond eq. 2.
                prop_assert!(a.window as u64 <= model.max(edge.saturating_sub(ack)) + 1,
                    "window {} above eq. 2's {} and the old edge {}", a.window, model, edge.saturating_sub(ack));
                edge = right;
                acked = ack;
            }
        }
    }
}
