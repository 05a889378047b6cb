//! "Standard TCP" as in RFC 793: no congestion control at all.
//!
//! The sender is limited only by the receiver's window and repairs losses
//! only by timeout: RFC 793 keeps every unacknowledged segment on a
//! retransmission queue and resends it when its timer expires. With one
//! timer per connection (RFC 6298) that becomes go-back-N: on expiry the
//! connection resends from `snd_una` everything the receiver window allows
//! (the cwnd collapse to one segment has no effect since [`NoCc::window`] is
//! unbounded), with exponential backoff of the timer.

use super::{CongestionControl, Window};

#[derive(Clone, Copy, Debug, Default)]
pub struct NoCc;

impl CongestionControl for NoCc {
    fn window(&self, _w: &Window) -> u64 {
        u64::MAX
    }
    fn fast_retransmit(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_tcp_has_no_window_and_no_fast_retransmit() {
        let w = Window { cwnd: 536, ssthresh: u64::MAX, mss: 536 };
        assert_eq!(NoCc.window(&w), u64::MAX);
        assert!(!NoCc.fast_retransmit());
    }
}
