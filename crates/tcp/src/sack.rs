//! SACK bookkeeping on both ends: the sender's scoreboard (RFC 6675) and the
//! receiver's out-of-order queue with its SACK block order (RFC 2018).
//!
//! Both work on unwrapped 64-bit sequence offsets (see `connection.rs`), so
//! no comparison here has to care about wrap-around. Ranges are half-open
//! `[left, right)`, sorted, disjoint and never adjacent (merged).

/// Sorted, merged set of byte ranges with a running byte total.
#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    ranges: Vec<(u64, u64)>,
    bytes: u64,
}

impl RangeSet {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.bytes = 0;
    }

    /// Adds `[l, r)`; returns how many bytes were new.
    pub fn insert(&mut self, l: u64, r: u64) -> u64 {
        if l >= r {
            return 0;
        }
        // First range whose right edge reaches l (touching ranges merge).
        let i = self.ranges.partition_point(|&(_, rr)| rr < l);
        let mut j = i;
        let (mut nl, mut nr) = (l, r);
        let mut covered = 0;
        while j < self.ranges.len() && self.ranges[j].0 <= r {
            let (al, ar) = self.ranges[j];
            covered += ar - al;
            nl = nl.min(al);
            nr = nr.max(ar);
            j += 1;
        }
        let before = self.bytes;
        self.bytes = self.bytes - covered + (nr - nl);
        if j == i {
            self.ranges.insert(i, (nl, nr));
        } else {
            self.ranges[i] = (nl, nr);
            self.ranges.drain(i + 1..j);
        }
        self.bytes - before
    }

    /// Forgets everything below `point`.
    pub fn trim_below(&mut self, point: u64) {
        let mut n = 0;
        while n < self.ranges.len() && self.ranges[n].1 <= point {
            self.bytes -= self.ranges[n].1 - self.ranges[n].0;
            n += 1;
        }
        if n > 0 {
            self.ranges.drain(..n);
        }
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < point {
                self.bytes -= point - first.0;
                first.0 = point;
            }
        }
    }

    /// The range containing `x`, if any.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, r)| r <= x);
        self.ranges.get(i).copied().filter(|&(l, _)| l <= x)
    }

    /// Bytes of the set inside `[a, b)`.
    pub fn bytes_in(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        self.bytes_below(b) - self.bytes_below(a)
    }

    /// Bytes of the set below `x`. Called for every pipe estimate, with `x`
    /// usually near one end of a long scoreboard, so the ranges are summed
    /// from whichever end is closer (the running total gives the rest).
    pub fn bytes_below(&self, x: u64) -> u64 {
        let rs = &self.ranges;
        match (rs.first(), rs.last()) {
            (Some(&(l, _)), Some(&(_, r))) if l < x && x < r => {}
            (Some(_), Some(&(_, r))) if x >= r => return self.bytes,
            _ => return 0,
        }
        // Ranges [0, i) end at or below x; range i may straddle it.
        let i = rs.partition_point(|&(_, r)| r <= x);
        let part = rs.get(i).map_or(0, |&(l, _)| x.saturating_sub(l));
        if i <= rs.len() - i {
            rs[..i].iter().map(|&(l, r)| r - l).sum::<u64>() + part
        } else {
            self.bytes - rs[i..].iter().map(|&(l, r)| r - l).sum::<u64>() + part
        }
    }

    /// Smallest `x >= from` not in the set, and where the run of such bytes
    /// ends (the next range's left edge, or `u64::MAX`).
    pub fn next_gap(&self, from: u64) -> (u64, u64) {
        let i = self.ranges.partition_point(|&(_, r)| r <= from);
        match self.ranges.get(i) {
            Some(&(l, r)) if l <= from => {
                let end = self.ranges.get(i + 1).map_or(u64::MAX, |n| n.0);
                (r, end)
            }
            Some(&(l, _)) => (from, l),
            None => (from, u64::MAX),
        }
    }
}

/// The sender's view of what the receiver holds above `snd_una` (RFC 6675
/// section 3: the scoreboard).
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    pub sacked: RangeSet,
}

impl Scoreboard {
    /// Highest SACKed offset (one past the last SACKed byte), or 0.
    pub fn high_sacked(&self) -> u64 {
        self.sacked.ranges().last().map_or(0, |r| r.1)
    }

    /// Every un-SACKed byte below the returned offset is lost by RFC 6675's
    /// IsLost (section 4): DupThresh discontiguous SACKed ranges above it, or
    /// more than (DupThresh - 1) * SMSS SACKed bytes above it. Returns 0
    /// when no byte is lost. Holes lie between ranges, so the test is made
    /// once per hole, scanning ranges from the top.
    pub fn lost_below(&self, mss: u64, dupthresh: u32) -> u64 {
        self.lost_edge(mss, dupthresh).0
    }

    /// [`Scoreboard::lost_below`], with the SACKed bytes below that offset
    /// (the scan from the top has summed those above it).
    fn lost_edge(&self, mss: u64, dupthresh: u32) -> (u64, u64) {
        let ranges = self.sacked.ranges();
        let mut above_bytes = 0u64;
        for (k, &(l, r)) in ranges.iter().enumerate().rev() {
            above_bytes += r - l;
            let above_count = (ranges.len() - k) as u32;
            if above_count >= dupthresh || above_bytes > (dupthresh as u64 - 1) * mss {
                return (l, self.sacked.bytes() - above_bytes);
            }
        }
        (0, 0)
    }

    /// RFC 6675 IsLost(seq).
    pub fn is_lost(&self, seq: u64, mss: u64, dupthresh: u32) -> bool {
        seq < self.lost_below(mss, dupthresh) && self.sacked.containing(seq).is_none()
    }

    /// RFC 6675 SetPipe (section 4): for each un-SACKed byte in
    /// `[una, snd_max)`, count 1 if it is not lost and 1 if it was
    /// retransmitted (below `high_rxt`).
    ///
    /// Called on every ACK and every send in recovery, over scoreboards of
    /// hundreds of ranges at high rates: the SACKed bytes below each of the
    /// three bounds are found once each, the lost bound's from the scan that
    /// finds it.
    pub fn pipe(&self, una: u64, snd_max: u64, high_rxt: u64, mss: u64, dupthresh: u32) -> u64 {
        let set = &self.sacked;
        let at_una = set.bytes_below(una);
        // Un-SACKed bytes in [una, b), given the SACKed bytes below b.
        let unsacked = |b: u64, sacked_below_b: u64| if una >= b { 0 } else { (b - una) - (sacked_below_b - at_una) };
        let below = |b: u64| set.bytes_below(b);
        let at_max = below(snd_max);
        let (edge, at_edge) = self.lost_edge(mss, dupthresh);
        let lost = if edge <= snd_max { unsacked(edge, at_edge) } else { unsacked(snd_max, at_max) };
        let rxt_end = high_rxt.min(snd_max);
        let rexmit = unsacked(rxt_end, if rxt_end == snd_max { at_max } else { below(rxt_end) });
        unsacked(snd_max, at_max) - lost + rexmit
    }
}

/// Receiver side: out-of-order data held, and the order in which its ranges
/// are reported in SACK blocks.
#[derive(Clone, Debug, Default)]
pub struct OooQueue {
    pub held: RangeSet,
    /// Ranges in reporting order: RFC 2018 section 4, the first block holds
    /// the most recently received segment, then the most recently reported
    /// other blocks.
    recent: [(u64, u64); 4],
    n_recent: usize,
}

impl OooQueue {
    /// Stores out-of-order data `[l, r)` (all above `rcv_nxt`).
    pub fn insert(&mut self, l: u64, r: u64) {
        self.held.insert(l, r);
        let Some(first) = self.held.containing(l) else { return };
        let mut next = [(0u64, 0u64); 4];
        next[0] = first;
        let mut n = 1;
        for k in 0..self.n_recent {
            // A block reported before may have merged into a bigger range.
            let Some(cur) = self.held.containing(self.recent[k].0) else { continue };
            if n < next.len() && !next[..n].contains(&cur) {
                next[n] = cur;
                n += 1;
            }
        }
        self.recent = next;
        self.n_recent = n;
    }

    /// Delivers the run starting at `rcv_nxt`; returns the new `rcv_nxt`.
    pub fn advance(&mut self, rcv_nxt: u64) -> u64 {
        let mut nxt = rcv_nxt;
        if let Some(&(l, r)) = self.held.ranges().first() {
            if l <= nxt {
                nxt = nxt.max(r);
            }
        }
        self.held.trim_below(nxt);
        // Drop blocks now covered by the cumulative ACK.
        let mut n = 0;
        for k in 0..self.n_recent {
            if self.recent[k].1 > nxt {
                self.recent[n] = self.recent[k];
                n += 1;
            }
        }
        self.n_recent = n;
        nxt
    }

    /// SACK blocks to report, most recent first.
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.recent[..self.n_recent]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_set_merges_touching_and_overlapping_ranges() {
        let mut s = RangeSet::default();
        assert_eq!(s.insert(10, 20), 10);
        assert_eq!(s.insert(30, 40), 10);
        assert_eq!(s.insert(20, 30), 10, "fills the gap exactly");
        assert_eq!(s.ranges(), &[(10, 40)]);
        assert_eq!(s.insert(5, 50), 15);
        assert_eq!(s.bytes(), 45);
        s.trim_below(12);
        assert_eq!(s.ranges(), &[(12, 50)]);
        assert_eq!(s.bytes(), 38);
        assert_eq!(s.next_gap(20), (50, u64::MAX));
        assert_eq!(s.next_gap(0), (0, 12));
    }

    #[test]
    fn bytes_in_matches_a_byte_by_byte_count() {
        let mut s = RangeSet::default();
        for (l, r) in [(10, 20), (30, 35), (40, 60), (70, 71), (80, 100)] {
            s.insert(l, r);
        }
        for a in 0..110 {
            for b in 0..110 {
                let slow = (a..b).filter(|&x| s.containing(x).is_some()).count() as u64;
                assert_eq!(s.bytes_in(a, b), slow, "[{a}, {b})");
            }
        }
    }

    #[test]
    fn scoreboard_marks_lost_per_rfc6675_islost_with_dupthresh_3() {
        // Segments of 100 bytes from 0; segment 0 lost, 1 and 2 SACKed:
        // only 200 bytes and 1 range above 0, so not lost yet.
        let mss = 100;
        let mut b = Scoreboard::default();
        b.sacked.insert(100, 300);
        assert!(!b.is_lost(0, mss, 3));
        // A third SACKed segment: 300 > (3-1)*100 bytes above, so lost.
        b.sacked.insert(300, 400);
        assert!(b.is_lost(0, mss, 3));
        assert!(!b.is_lost(150, mss, 3), "SACKed bytes are never lost");
        // Pipe with snd_max = 1000: un-SACKed 0..100 (lost) and 400..1000
        // (not lost) -> 600; after retransmitting 0..100 -> 700.
        assert_eq!(b.pipe(0, 1000, 0, mss, 3), 600);
        assert_eq!(b.pipe(0, 1000, 100, mss, 3), 700);
    }

    #[test]
    fn scoreboard_counts_discontiguous_ranges_for_islost() {
        // Three separate one-byte SACKs above: 3 discontiguous ranges.
        let mut b = Scoreboard::default();
        for k in [1u64, 3, 5] {
            b.sacked.insert(k * 100, k * 100 + 1);
        }
        assert!(b.is_lost(0, 100, 3));
        // The hole at 101..300 has only two ranges and 2 bytes above.
        assert!(!b.is_lost(200, 100, 3));
    }

    proptest::proptest! {
        /// SetPipe by its definition (RFC 6675 section 4), byte by byte:
        /// each un-SACKed byte of [una, snd_max) counts 1 unless IsLost,
        /// and 1 more if retransmitted (below high_rxt).
        #[test]
        fn pipe_counts_what_rfc6675_setpipe_counts_byte_by_byte(
            ranges in proptest::collection::vec((0u64..3000, 1u64..200), 0..12),
            una in 0u64..400, extra in 0u64..3000, rxt in 0u64..3400, mss in 1u64..150,
        ) {
            let mut b = Scoreboard::default();
            for (l, n) in ranges {
                b.sacked.insert(una + l, una + l + n);
            }
            let snd_max = una + extra;
            let lost_end = b.lost_below(mss, 3);
            let mut want = 0;
            for x in una..snd_max {
                if b.sacked.containing(x).is_some() {
                    continue;
                }
                want += u64::from(x >= lost_end) + u64::from(x < rxt);
            }
            proptest::prop_assert_eq!(b.pipe(una, snd_max, rxt, mss, 3), want);
        }
    }

    #[test]
    fn receiver_reports_the_most_recent_block_first() {
        // RFC 2018 section 4 example style: holes, then arrivals out of order.
        let mut q = OooQueue::default();
        q.insert(200, 300);
        q.insert(400, 500);
        assert_eq!(q.blocks(), &[(400, 500), (200, 300)]);
        q.insert(300, 350); // extends the first range
        assert_eq!(q.blocks(), &[(200, 350), (400, 500)]);
        q.insert(600, 700);
        assert_eq!(q.blocks(), &[(600, 700), (200, 350), (400, 500)]);
        // The hole below 200 is filled: rcv_nxt jumps to 350.
        assert_eq!(q.advance(200), 350);
        assert_eq!(q.blocks(), &[(600, 700), (400, 500)]);
        assert_eq!(q.held.bytes(), 200);
    }
}
