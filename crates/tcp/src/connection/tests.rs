//! Unit tests of one connection, driven segment by segment.

use super::*;
use crate::CcName;

/// A client and a server after a hand-driven handshake at t = 0.
fn established(cfg: &TcpConfig) -> (Connection, Connection) {
    let mut c = Connection::client(cfg, 1000);
    let mut s = Connection::server(cfg, 5000);
    let mut out = Vec::new();
    c.open(Time::ZERO, &mut out);
    let syn = out.pop().unwrap();
    s.on_segment(Time::ZERO, &syn, &mut out);
    let syn_ack = out.pop().unwrap();
    c.on_segment(Time::ZERO, &syn_ack, &mut out);
    let ack = out.pop().unwrap();
    s.on_segment(Time::ZERO, &ack, &mut out);
    assert!(c.is_established() && s.is_established() && out.is_empty());
    (c, s)
}

/// The data segment carrying stream bytes `[k*mss, (k+1)*mss)` from `c`.
fn data(c: &Connection, k: u64) -> Segment {
    Segment {
        seq: c.iss.wrapping_add(1 + (k * c.mss) as u32),
        ack: c.irs.wrapping_add(1),
        flags: TcpFlags::ACK,
        window: 1000,
        len: c.mss as u32,
        ..Default::default()
    }
}

#[test]
fn unwrap_seq_picks_the_offset_nearest_the_reference() {
    assert_eq!(unwrap_seq(10, 5, 0), 5);
    // Past the 2^32 wrap: offset 2^32 + 3 from isn 0.
    assert_eq!(unwrap_seq(3, 0, (1 << 32) - 10), (1 << 32) + 3);
    // Slightly behind the reference stays behind it.
    assert_eq!(unwrap_seq(u32::MAX, 0, 1 << 32), (1 << 32) - 1);
}

#[test]
fn delayed_ack_is_sent_every_second_segment_or_after_200_ms() {
    // RFC 5681 section 4.2 / ns-3 DelAckCount = 2, DelAckTimeout = 200 ms.
    let cfg = TcpConfig { mss: 1000, ..Default::default() };
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    let ms = Time::from_millis;
    s.on_segment(ms(10), &data(&c, 0), &mut out);
    assert!(out.is_empty(), "first segment: ACK delayed");
    assert_eq!(s.next_timer(), Some(ms(210)));
    s.on_segment(ms(20), &data(&c, 1), &mut out);
    assert_eq!(out.len(), 1, "second full segment: ACK now");
    assert_eq!(out[0].ack, c.iss.wrapping_add(2001));
    assert_eq!(s.next_timer(), None);
    out.clear();
    s.on_segment(ms(30), &data(&c, 2), &mut out);
    s.on_timer(ms(229), &mut out);
    assert!(out.is_empty(), "early timer call does nothing");
    s.on_timer(ms(230), &mut out);
    assert_eq!(out.len(), 1, "200 ms later the delayed ACK goes out");
    assert_eq!(out[0].ack, c.iss.wrapping_add(3001));
    out.clear();
    // Out of order (segment 4 before 3): immediate ACK with a SACK block.
    s.on_segment(ms(300), &data(&c, 4), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, c.iss.wrapping_add(3001));
    let b = c.iss.wrapping_add(4001);
    assert_eq!(out[0].opts.sack.as_slice(), &[(b, b.wrapping_add(1000))]);
    out.clear();
    // Filling the hole: immediate ACK for both.
    s.on_segment(ms(310), &data(&c, 3), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, c.iss.wrapping_add(5001));
    assert_eq!(out[0].opts.sack.len(), 0);
    assert_eq!(s.stats().bytes_delivered, 5000);
}

/// An established connection (MSS 1000) that has just sent ten segments at
/// t = 0, with its peer.
fn ten_segments_sent() -> (Connection, Connection, Vec<Segment>) {
    let cfg = TcpConfig { mss: 1000, ..Default::default() };
    let (mut c, s) = established(&cfg);
    let mut sent = Vec::new();
    c.send(Time::ZERO, 10_000, &mut sent);
    assert_eq!(sent.len(), 10);
    (c, s, sent)
}

#[test]
fn after_a_timeout_data_the_receiver_sacked_is_not_sent_again() {
    // RFC 6675 section 5.1 (Errata 1610), ns-3 3.44 (`ReTxTimeout` keeps
    // the SACK scoreboard) and Linux: after an RTO the sender goes back
    // to SND.UNA but skips what the receiver SACKed before the timeout,
    // which the receiver no longer reports (3 blocks, most recent first).
    let ms = Time::from_millis;
    let (mut c, mut s, sent) = ten_segments_sent();
    // The odd segments arrive, the even ones are lost.
    let mut acks = Vec::new();
    for k in [1, 3, 5, 7, 9] {
        s.on_segment(ms(40), &sent[k], &mut acks);
    }
    assert_eq!(acks.len(), 5);
    let mut lost = Vec::new();
    for a in &acks {
        c.on_segment(ms(80), a, &mut lost);
    }
    // Fast recovery starts; its retransmissions are lost as well. Then
    // the retransmission timer expires: segment 0 again.
    let t = c.next_timer().expect("RTO armed");
    let mut rtx = Vec::new();
    c.on_timer(t, &mut rtx);
    assert_eq!(rtx.len(), 1);
    assert_eq!(rtx[0].seq, c.iss.wrapping_add(1));
    let mut ack = Vec::new();
    s.on_segment(t + ms(40), &rtx[0], &mut ack);
    assert_eq!(ack.len(), 1);
    assert_eq!(ack[0].ack, c.iss.wrapping_add(2001));
    // Segments 9, 7 and 5 reported; segment 3 not any more.
    assert_eq!(ack[0].opts.sack.len(), 3);
    let mut out = Vec::new();
    c.on_segment(t + ms(80), &ack[0], &mut out);
    let segs: Vec<u32> = out.iter().map(|g| g.seq.wrapping_sub(c.iss.wrapping_add(1)) / 1000).collect();
    assert_eq!(segs.first(), Some(&2), "the next hole first: {segs:?}");
    assert!(segs.iter().all(|k| k % 2 == 0), "nothing the receiver holds: {segs:?}");
    assert!(segs.len() >= 2, "slow start sends 2 holes: {segs:?}");
}

#[test]
fn window_field_shifted_back_never_exceeds_the_buffer() {
    // RFC 7323 section 2.3: field << shift == window rounded down.
    for buf in [1000u64, 65_535, 65_536, 131_072, 200_001, 1 << 20, 60_000_000] {
        let cfg = TcpConfig { rcv_buf: buf, ..Default::default() };
        let shift = cfg.wscale_shift();
        assert!(buf >> shift <= 0xffff, "buf {buf} shift {shift}");
        assert!(shift == 0 || buf >> (shift - 1) > 0xffff, "smallest shift for {buf}");
        let (mut c, s) = established(&cfg);
        let field = c.window_field() as u64;
        assert_eq!(field << shift, (buf >> shift) << shift);
        assert!(field << shift <= buf);
        // The peer reads the same value back.
        assert_eq!(s.snd_shift, shift);
    }
}

#[test]
fn advertised_window_shrinks_by_held_out_of_order_bytes_without_moving_the_edge_left() {
    let cfg = TcpConfig { mss: 1000, rcv_buf: 10_000, window_scaling: false, ..Default::default() };
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    s.on_segment(Time::from_millis(1), &data(&c, 2), &mut out);
    // Right edge stays at rcv_nxt + 10000 although 1000 B are held.
    assert_eq!(out[0].window, 10_000);
    out.clear();
    s.on_segment(Time::from_millis(2), &data(&c, 0), &mut out);
    // rcv_nxt moved 1000 B right with 1000 B still held: free = 9000,
    // and the old edge is also 9000 away.
    assert_eq!(out.last().unwrap().window, 9_000);
}

#[test]
fn without_window_deducts_ooo_the_window_is_the_whole_buffer_from_rcv_nxt_as_ns3s_receiver() {
    // ns-3 3.44 TcpRxBuffer::MaxRxSequence: RCV.NXT + the buffer while the
    // application has read every in-order byte, out-of-order bytes or not.
    let cfg = TcpConfig {
        mss: 1000,
        rcv_buf: 10_000,
        window_scaling: false,
        window_deducts_ooo: false,
        ..Default::default()
    };
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    s.on_segment(Time::from_millis(1), &data(&c, 2), &mut out);
    assert_eq!(out[0].window, 10_000);
    out.clear();
    s.on_segment(Time::from_millis(2), &data(&c, 0), &mut out);
    // rcv_nxt moved 1000 B right with 1000 B still held: the whole buffer
    // again, so the right edge moves 1000 B right (the default offers 9000).
    assert_eq!(out.last().unwrap().window, 10_000);
    // The held bytes lie inside the window, so they never exceed the
    // buffer: with segments 3-10 held behind the hole at 1, segment 11
    // starts at the edge and is refused.
    for k in 3..=10 {
        s.on_segment(Time::from_millis(3), &data(&c, k), &mut out);
    }
    out.clear();
    s.on_segment(Time::from_millis(4), &data(&c, 11), &mut out);
    assert_eq!(s.stats().beyond_window_received, 1);
    assert_eq!(s.ooo.held.bytes(), 9_000);
    assert!(s.ooo.held.bytes() <= cfg.rcv_buf);
    assert_eq!(out[0].window, 10_000);
}
#[test]
fn with_rcv_window_opens_the_window_starts_at_64_kib_and_grows_by_twice_the_bytes_received_as_linux() {
    // Linux `tcp_select_initial_window` (at most U16_MAX) and
    // `tcp_grow_window` (2 * advmss a full segment): rcv_ssthresh caps
    // the window `__tcp_select_window` offers, up to the buffer.
    let cfg = TcpConfig { mss: 1000, rcv_buf: 400_000, rcv_window_opens: true, ..Default::default() };
    let shift = cfg.wscale_shift();
    assert_eq!(shift, 3);
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    for k in 0..200u64 {
        s.on_segment(Time::from_millis(1 + k), &data(&c, k), &mut out);
    }
    let w: Vec<u64> = out.iter().map(|g| (g.window as u64) << shift).collect();
    // ACKs after segments 2, 4, ... (delayed ACKs of two): 65 535 + 2 x the
    // bytes received, rounded down to the scale unit; the buffer (400 000)
    // is reached after 167 233 bytes.
    assert_eq!(w[0], ((65_535 + 2 * 2_000) >> shift) << shift, "{w:?}");
    assert_eq!(w[1], ((65_535 + 2 * 4_000) >> shift) << shift, "{w:?}");
    assert!(w.windows(2).all(|p| p[0] <= p[1]), "the window only grows: {w:?}");
    assert_eq!(*w.last().unwrap(), 400_000, "never past rcv_buf: {w:?}");
    // Off (the default), the whole buffer from the first ACK.
    let cfg = TcpConfig { rcv_window_opens: false, ..cfg };
    let (c, mut s) = established(&cfg);
    out.clear();
    s.on_segment(Time::from_millis(1), &data(&c, 0), &mut out);
    s.on_segment(Time::from_millis(2), &data(&c, 1), &mut out);
    assert_eq!((out[0].window as u64) << shift, 400_000);
}

/// Drives `c`'s segments through `s` and back until both are quiet,
/// at `step` per hop; returns the time reached.
fn exchange(c: &mut Connection, s: &mut Connection, mut t: Time, mut segs: Vec<Segment>, step: Time) -> Time {
    let mut to_server = true;
    while !segs.is_empty() {
        t += step;
        let mut next = Vec::new();
        for g in &segs {
            if to_server {
                s.on_segment(t, g, &mut next);
            } else {
                c.on_segment(t, g, &mut next);
            }
        }
        segs = next;
        to_server = !to_server;
    }
    t
}

#[test]
fn data_beyond_the_advertised_right_edge_is_dropped_and_acknowledged() {
    // RFC 9293 section 3.10.7.4: the receiver advertised 10 000 B, so a
    // segment starting at byte 10 000 or later is not acceptable.
    let cfg = TcpConfig { mss: 1000, rcv_buf: 10_000, window_scaling: false, ..Default::default() };
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    s.on_segment(Time::from_millis(1), &data(&c, 10), &mut out);
    assert_eq!(out.len(), 1, "answered at once");
    assert_eq!(out[0].ack, c.iss.wrapping_add(1), "nothing accepted");
    assert_eq!(out[0].opts.sack.len(), 0, "not held as out-of-order data");
    assert_eq!(s.stats().beyond_window_received, 1);
    // The last segment inside the window is held.
    out.clear();
    s.on_segment(Time::from_millis(2), &data(&c, 9), &mut out);
    assert_eq!(out[0].opts.sack.len(), 1);
    assert_eq!(s.ooo.held.bytes(), 1000);
}

#[test]
fn a_sender_never_sends_new_data_past_snd_una_plus_the_window_after_a_timeout() {
    // Issue 9: after a timeout, SACKed bytes leave the flight size, and
    // the sender used to compare that flight size with min(cwnd, rwnd),
    // running 1.24 MB past SND.UNA into a 1 MB receive buffer. The
    // right edge is SND.UNA + SND.WND whatever is SACKed.
    let cfg = TcpConfig { mss: 1000, rcv_buf: 8_000, window_scaling: false, ..Default::default() };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 100_000, &mut sent);
    assert_eq!(sent.len(), 8, "the window admits 8 segments");
    // Segment 0 is lost; 1..8 arrive and are SACKed.
    let mut acks = Vec::new();
    for g in &sent[1..] {
        s.on_segment(ms(10), g, &mut acks);
    }
    // Only the first two dupACKs reach the sender; then a timeout.
    let mut more = Vec::new();
    for a in &acks[..2] {
        c.on_segment(ms(20), a, &mut more);
    }
    let t = c.next_timer().unwrap();
    let mut rtx = Vec::new();
    c.on_timer(t, &mut rtx);
    // The last ACK (all 7 segments SACKed) arrives after the timeout.
    c.on_segment(t + ms(1), acks.last().unwrap(), &mut rtx);
    let edge = c.snd_una + c.rwnd;
    for g in rtx.iter().chain(&more) {
        let off = g.seq.wrapping_sub(c.iss) as u64;
        assert!(off + g.len as u64 <= edge.max(off + 1), "segment at {off} past the edge {edge}");
    }
    assert!(c.snd_max <= 1 + 8_000, "snd_max {} beyond the receive buffer", c.snd_max);
}

/// An RFC 793 sender (no congestion control, no SACK, timestamps or window
/// scaling) with 1000-byte segments and a `rcv_buf`-byte window, the rest
/// of `cfg` kept.
fn rfc793_sender(rcv_buf: u64, cfg: TcpConfig) -> TcpConfig {
    TcpConfig {
        mss: 1000,
        cc: crate::CcKind::None(Default::default()),
        sack: false,
        timestamps: false,
        rcv_buf,
        window_scaling: false,
        ..cfg
    }
}

/// An RFC 793 sender (no congestion window, no SACK) with a 7500-byte
/// window that has sent 7300 B (seven 1000-byte segments and one of 300)
/// and holds more data; then its retransmission timer expires. Returns the
/// go-back-N's segments as (offset, length), and the right edge.
fn go_back_n_into_a_window_ending_mid_segment(cfg: TcpConfig) -> (Vec<(u64, u64)>, u64) {
    let cfg = rfc793_sender(7_500, cfg);
    let (mut c, _s) = established(&cfg);
    let mut sent = Vec::new();
    c.send(Time::ZERO, 7_300, &mut sent);
    assert_eq!(sent.len(), 8);
    // More data, which the window does not admit: a 1000-byte segment at
    // 7300 would end past 7500.
    c.send(Time::from_millis(5), 10_000, &mut sent);
    assert_eq!(sent.len(), 8);
    assert_eq!(c.snd_max, 1 + 7_300);
    let t = c.next_timer().expect("RTO armed");
    let mut rtx = Vec::new();
    c.on_timer(t, &mut rtx);
    let segs = rtx.iter().map(|g| (g.seq.wrapping_sub(c.iss) as u64, g.len as u64)).collect();
    (segs, c.snd_una + c.rwnd)
}

#[test]
fn a_go_back_n_resend_carries_no_new_byte_past_the_right_edge() {
    // RFC 9293 section 3.8.6: segments "fit the current window". The
    // go-back-N cuts 1000-byte segments from SND.UNA; the last one starts
    // at 7000 below SND.MAX (7300), so it counted as a retransmission and
    // went out whole, its new bytes 7300-8000 past the edge at 7500.
    let (segs, edge) = go_back_n_into_a_window_ending_mid_segment(TcpConfig::default());
    assert_eq!(edge, 1 + 7_500);
    for &(off, len) in &segs {
        assert!(off + len <= edge, "segment {off}+{len} past the right edge {edge}: {segs:?}");
    }
    // Everything sent before is resent, and the new bytes up to the edge.
    assert_eq!(segs.first(), Some(&(1, 1000)));
    assert_eq!(segs.last(), Some(&(1 + 7_000, 500)), "{segs:?}");
    assert_eq!(segs.iter().map(|s| s.1).sum::<u64>(), 7_500);
}

#[test]
fn with_resend_ends_at_snd_max_a_go_back_n_resends_only_what_was_sent() {
    // ns-3 3.44 resends its sent list, Linux its retransmission queue:
    // the last resend ends at SND.MAX (7300), and a 1000-byte segment of
    // new data does not fit the 200 bytes left before the edge.
    let (segs, edge) =
        go_back_n_into_a_window_ending_mid_segment(TcpConfig { resend_ends_at_snd_max: true, ..Default::default() });
    assert_eq!(edge, 1 + 7_500);
    assert_eq!(segs.last(), Some(&(1 + 7_000, 300)), "{segs:?}");
    assert_eq!(segs.iter().map(|s| s.1).sum::<u64>(), 7_300);
}

/// An RFC 793 sender whose application wrote 512 bytes at a time, each
/// sent alone (15 segments fill the 7680-byte window), and whose timer
/// then expires twice: the two go-back-Ns' segments as (offset, length).
fn go_back_n_twice_over_512_byte_writes(cfg: TcpConfig) -> (Vec<(u64, u64)>, Vec<(u64, u64)>) {
    let cfg = rfc793_sender(7_680, cfg);
    let (mut c, _s) = established(&cfg);
    let mut sent = Vec::new();
    for k in 0..15 {
        c.send(Time::from_millis(k), 512, &mut sent);
    }
    assert_eq!(sent.iter().map(|g| g.len).collect::<Vec<_>>(), vec![512; 15]);
    let mut rounds = Vec::new();
    for _ in 0..2 {
        let t = c.next_timer().expect("RTO armed");
        let mut rtx = Vec::new();
        c.on_timer(t, &mut rtx);
        rounds.push(rtx.iter().map(|g| (g.seq.wrapping_sub(c.iss) as u64, g.len as u64)).collect::<Vec<_>>());
    }
    (rounds.remove(0), rounds.remove(0))
}

#[test]
fn with_resend_merges_sent_a_go_back_n_resends_each_sent_segment_with_the_next_as_ns3s_sent_list() {
    // ns-3 3.44 TcpTxBuffer::GetTransmittedSegment: the 512-byte segment at
    // SND.NXT and the next one, at most an MSS: 1000 B, then the 24 B left
    // of the second with the third, 536 B, and again. The list keeps that
    // cut, so the backed-off expiry cuts from the 1000- and 536-byte
    // segments: 536 + 464 of the next, 536 + 464, 72 + 928, then 72 + 536.
    let (first, second) =
        go_back_n_twice_over_512_byte_writes(TcpConfig { resend_merges_sent: true, ..Default::default() });
    let want: Vec<(u64, u64)> = (0..5).flat_map(|k| [(1 + 1536 * k, 1000), (1 + 1536 * k + 1000, 536)]).collect();
    assert_eq!(first, want);
    let again = [(1, 1000), (1001, 1000), (2001, 1000), (3001, 1000), (4001, 608), (4609, 1000), (5609, 1000)];
    assert_eq!(second, [&again[..], &[(6609, 1000), (7609, 72)]].concat());
    // Ours' own cut: full segments from SND.UNA.
    let (first, _) = go_back_n_twice_over_512_byte_writes(TcpConfig::default());
    assert_eq!(first.iter().map(|s| s.1).collect::<Vec<_>>(), vec![1000, 1000, 1000, 1000, 1000, 1000, 1000, 680]);
}

/// `s`'s ACK for nothing new, closing its window to `c` (a real receiver
/// whose application stopped reading; our simulated receivers never do).
fn zero_window_ack(c: &Connection, s: &Connection) -> Segment {
    Segment {
        seq: s.iss.wrapping_add(1),
        ack: c.iss.wrapping_add(1),
        flags: TcpFlags::ACK,
        window: 0,
        ..Default::default()
    }
}

#[test]
fn a_zero_window_is_probed_by_the_persist_timer_until_it_opens() {
    // RFC 9293 section 3.8.6.1, Linux tcp_probe_timer: with nothing
    // outstanding and a closed window, the sender probes with
    // SEG.SEQ = SND.UNA - 1 at RTO, 2 RTO, ...; the receiver answers each
    // probe with an ACK carrying its window, and the data flows again.
    let cfg = TcpConfig { mss: 1000, window_scaling: false, ..Default::default() };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    // The peer closes its window (a real receiver whose application
    // stopped reading; our simulated receivers never do).
    let zero = zero_window_ack(&c, &s);
    let mut out = Vec::new();
    c.on_segment(ms(1), &zero, &mut out);
    c.send(ms(2), 5_000, &mut out);
    assert!(out.is_empty(), "nothing goes into a closed window");
    let first = c.next_timer().expect("persist timer armed");
    assert_eq!(first, ms(2) + c.rtt.rto());
    c.on_timer(first, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].seq.wrapping_sub(c.iss), out[0].len), (0, 0), "probe below SND.UNA, no data");
    assert_eq!(c.next_timer(), Some(first + Time(c.rtt.rto().0 * 2)), "backed off");
    // The receiver answers the probe with its (open) window.
    let mut answer = Vec::new();
    s.on_segment(first + ms(1), &out[0], &mut answer);
    assert_eq!(answer.len(), 1, "a probe is always answered");
    assert!(answer[0].window > 0);
    let mut data_out = Vec::new();
    c.on_segment(first + ms(2), &answer[0], &mut data_out);
    assert_eq!(data_out.len(), 5, "the window opened: all 5000 B go");
    assert_eq!(c.stats().window_probes, 1);
    exchange(&mut c, &mut s, first + ms(2), data_out, ms(1));
    assert_eq!(s.stats().bytes_delivered, 5_000);
}

#[test]
fn the_segment_at_snd_una_is_retransmitted_into_a_closed_window() {
    // Linux tcp_retransmit_skb: the retransmission at SND.UNA goes out
    // whatever the window and serves as a zero-window probe. Without it
    // the timeout of issue 9 sent nothing for 600 s.
    let cfg = TcpConfig { mss: 1000, window_scaling: false, ..Default::default() };
    let (mut c, s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 3_000, &mut sent);
    assert_eq!(sent.len(), 3);
    // An ACK for nothing new closes the window.
    let zero = zero_window_ack(&c, &s);
    let mut out = Vec::new();
    c.on_segment(ms(5), &zero, &mut out);
    let t = c.next_timer().unwrap();
    c.on_timer(t, &mut out);
    assert_eq!(out.len(), 1, "one retransmission at SND.UNA");
    assert_eq!(out[0].seq, c.iss.wrapping_add(1));
    assert_eq!(out[0].len, 1000);
}

/// Ten segments sent, the first lost and the next four delivered: the
/// receiver's four duplicate ACKs reach the sender, the k-th (from 0) with
/// its window field lowered by `lower(k)`, as a gateway would. Returns the
/// sender and what it sent in answer.
fn four_dupacks(cfg: &TcpConfig, lower: impl Fn(u16) -> u16) -> (Connection, Vec<Segment>) {
    let (mut c, mut s) = established(cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 10_000, &mut sent);
    let mut acks = Vec::new();
    for g in &sent[1..5] {
        s.on_segment(ms(10), g, &mut acks);
    }
    assert_eq!(acks.len(), 4);
    let mut out = Vec::new();
    for (k, a) in acks.iter_mut().enumerate() {
        a.window -= lower(k as u16);
        c.on_segment(ms(20), a, &mut out);
    }
    (c, out)
}

#[test]
fn sack_dupacks_count_whatever_the_window_says() {
    // RFC 6675 section 2: an ACK carrying new SACK information is a
    // duplicate whatever its window. A window-rewriting gateway changes
    // the window of nearly every ACK; three such ACKs must still start
    // fast recovery.
    let cfg = TcpConfig { mss: 1000, rcv_buf: 1 << 20, ..Default::default() };
    let (c, out) = four_dupacks(&cfg, |k| 100 * (k + 1));
    assert_eq!(c.stats().fast_retransmits, 1);
    assert!(out.iter().any(|g| g.retransmission && g.seq == c.iss.wrapping_add(1)));
}

#[test]
fn a_duplicate_ack_shrinks_the_send_window_under_rfc_9293_and_not_under_linuxs_rule() {
    // RFC 9293 section 3.10.7.4: SND.WL1 = SEG.SEQ and SND.WL2 =< SEG.ACK,
    // so each duplicate ACK's window is taken, a gateway's smaller one too.
    let cfg = TcpConfig { mss: 1000, rcv_buf: 1 << 20, ..Default::default() };
    let (c, _) = four_dupacks(&cfg, |k| 100 * (k + 1));
    let (before, _) = four_dupacks(&cfg, |_| 0);
    assert_eq!(c.rwnd, before.rwnd - (400 << c.snd_shift));
    // Linux tcp_may_update_window: an ACK that neither advances SND.UNA nor
    // carries newer data may only open the window (or close it to zero).
    // The first of them is the first ACK past the handshake, newer data
    // (SEG.SEQ = IRS + 1 > SND.WL1 = IRS, as Linux's `after(ack_seq,
    // snd_wl1)`), so its window is taken; the three after it are not.
    let linux = TcpConfig { window_update_grows_only: true, ..cfg };
    let (c, _) = four_dupacks(&linux, |k| 100 * (k + 1));
    assert_eq!(c.rwnd, before.rwnd - (100 << c.snd_shift));
    // Larger windows are taken under either rule.
    let (c, _) = four_dupacks(&linux, |k| 400 - 100 * k);
    assert_eq!(c.rwnd, before.rwnd - (100 << c.snd_shift));
    // The loss is still found: the window rule does not touch the count.
    assert_eq!(c.stats().fast_retransmits, 1);
}

#[test]
fn an_ack_without_new_sack_information_is_not_a_duplicate() {
    // RFC 6675 section 2 condition (e): repeating what the scoreboard
    // already holds says nothing about a new arrival.
    let cfg = TcpConfig { mss: 1000, rcv_buf: 1 << 20, ..Default::default() };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 10_000, &mut sent);
    let mut acks = Vec::new();
    s.on_segment(ms(10), &sent[1], &mut acks);
    let mut out = Vec::new();
    for _ in 0..5 {
        c.on_segment(ms(20), &acks[0], &mut out);
    }
    assert_eq!(c.stats().dupacks_received, 1);
    assert_eq!(c.stats().fast_retransmits, 0);
}

#[test]
fn without_sack_a_changed_window_hides_a_duplicate_ack() {
    // RFC 5681 section 2 (the strict definition, kept without SACK): an
    // ACK whose window differs from the previous one is not a duplicate.
    // Behind a window-rewriting gateway this blinds fast retransmit
    // (docs/tcp.md, "Duplicate ACKs behind a gateway").
    let cfg = TcpConfig { mss: 1000, sack: false, rcv_buf: 1 << 20, ..Default::default() };
    let (c, _) = four_dupacks(&cfg, |k| 100 * (k + 1));
    assert_eq!(c.stats().fast_retransmits, 0);
    // The same ACKs with an unchanged window trigger it.
    let (c, _) = four_dupacks(&cfg, |_| 0);
    assert_eq!(c.stats().fast_retransmits, 1);
}

#[test]
fn standard_tcp_counts_triple_dupacks_it_does_not_act_on() {
    // Seed 001 Table 2 reports triple-dupACK events for RFC 793 TCP (4001
    // of them), which has no fast retransmit: they are counted on arrival.
    use crate::config::CcKind;
    let cfg = TcpConfig { mss: 1000, cc: CcKind::None(Default::default()), ..Default::default() };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 10_000, &mut sent);
    let mut acks = Vec::new();
    for g in &sent[1..8] {
        s.on_segment(ms(10), g, &mut acks);
    }
    let mut out = Vec::new();
    for a in &acks {
        c.on_segment(ms(20), a, &mut out);
    }
    assert_eq!(c.stats().dupacks_received, 7);
    assert_eq!(c.stats().triple_dupacks, 1, "one run of three, counted once");
    assert_eq!(c.stats().dupacks_past_threshold, 5, "a run of 7: the 3rd to the 7th");
    assert_eq!(c.stats().fast_retransmits, 0);
    assert!(out.iter().all(|g| !g.retransmission));
}

#[test]
fn the_receiver_echoes_the_xcp_feedback_its_data_arrived_with() {
    // XCP section 3.1: the receiver copies H_feedback into its ACK; a
    // delayed ACK covering two segments echoes the sum of both.
    let cfg = TcpConfig { mss: 1000, ..Default::default() };
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    let with = |k: u64, feedback: i32| {
        let mut g = data(&c, k);
        g.inband = InBand::Xcp(XcpFields { cwnd: 10_000, rtt_us: 50_000, feedback, ack: false });
        g
    };
    s.on_segment(Time::from_millis(1), &with(0, 300), &mut out);
    assert!(out.is_empty(), "delayed");
    s.on_segment(Time::from_millis(2), &with(1, -100), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].inband, InBand::Xcp(XcpFields { feedback: 200, ack: true, ..Default::default() }));
    // The next ACK echoes nothing it did not receive.
    out.clear();
    s.on_segment(Time::from_millis(3), &data(&c, 2), &mut out);
    s.on_timer(Time::from_millis(300), &mut out);
    assert_eq!(out[0].inband, InBand::None);
}

/// NGWA receivers (seed 001 section 2): data segment `k` carrying `Wngwa`.
fn ngwa_data(c: &Connection, k: u64, wngwa: u32) -> Segment {
    Segment { inband: InBand::Ngwa(wngwa), ..data(c, k) }
}

#[test]
fn an_ngwa_receiver_advertises_the_least_of_buffer_wmax_and_wngwa() {
    // Seed 001 eq. 2: Wa = min(Wb, Wmax, Wngwa).
    let ngwa = netreturn_control::ngwa_receiver::NgwaConfig { wmax: 64_000, smoothing: None, option_bytes: 8 };
    let cfg = TcpConfig { mss: 1000, rcv_buf: 100_000, window_scaling: false, ngwa: Some(ngwa), ..Default::default() };
    let (c, mut s) = established(&cfg);
    assert_eq!(s.mss, 992, "seed 001 section 4.2: the segment shortened by the option");
    let mut out = Vec::new();
    s.on_segment(Time::from_millis(1), &ngwa_data(&c, 0, 40_000), &mut out);
    s.on_segment(Time::from_millis(2), &ngwa_data(&c, 1, 40_000), &mut out);
    // The handshake offered min(65535, 100000); the edge stays there, so
    // the window falls only as data arrives: 65535 - 1984 bytes received.
    assert_eq!(out.last().unwrap().window, 65_535 - 2 * 992);
    // Once RCV.NXT has caught up with Wngwa's edge, Wngwa rules.
    let mut k = 2;
    while s.adv_edge - s.rcv_nxt > 40_000 {
        out.clear();
        s.on_segment(Time::from_millis(2 + k), &ngwa_data(&c, k, 40_000), &mut out);
        k += 1;
    }
    out.clear();
    s.on_segment(Time::from_millis(100), &ngwa_data(&c, k, 40_000), &mut out);
    s.on_segment(Time::from_millis(101), &ngwa_data(&c, k + 1, 40_000), &mut out);
    assert_eq!(out.last().unwrap().window, 40_000);
    // A larger value raises it, up to Wmax.
    out.clear();
    s.on_segment(Time::from_millis(102), &ngwa_data(&c, k + 2, 90_000), &mut out);
    s.on_segment(Time::from_millis(103), &ngwa_data(&c, k + 3, 90_000), &mut out);
    assert_eq!(out.last().unwrap().window, 64_000);
}

#[test]
fn a_falling_wngwa_never_moves_the_advertised_right_edge_left() {
    // RFC 9293 section 3.8.6.2.2 against seed 001 eq. 2: the window falls
    // by the data received, never by taking back offered space.
    let ngwa = netreturn_control::ngwa_receiver::NgwaConfig { wmax: 64_000, smoothing: None, option_bytes: 8 };
    let cfg = TcpConfig { mss: 1000, rcv_buf: 64_000, window_scaling: false, ngwa: Some(ngwa), ..Default::default() };
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    let mut edge = 0u64;
    for k in 0..90u64 {
        let w = if k < 10 { 60_000 } else { 2_000 };
        s.on_segment(Time::from_millis(1 + k), &ngwa_data(&c, k, w), &mut out);
        for a in out.drain(..) {
            let right = (a.ack.wrapping_sub(c.iss) as u64) + a.window as u64;
            assert!(right >= edge, "edge moved left at segment {k}");
            edge = right;
        }
    }
    assert_eq!(s.window_field(), 2_000, "the edge reached, Wngwa rules");
}

#[test]
fn a_receiver_that_may_shrink_its_window_offers_a_falling_wngwa_at_once() {
    // The switch of issue 24 (NGWA: "whether the receiver may shrink its
    // window"): with shrink_window the field is min(Wb, Wmax, Wngwa) at
    // once (seed 001 eq. 2), the edge moving left; data inside the edge
    // offered before is still accepted.
    let ngwa = netreturn_control::ngwa_receiver::NgwaConfig { wmax: 64_000, smoothing: None, option_bytes: 8 };
    let cfg = TcpConfig {
        mss: 1000,
        rcv_buf: 64_000,
        window_scaling: false,
        shrink_window: true,
        ngwa: Some(ngwa),
        ..Default::default()
    };
    let (c, mut s) = established(&cfg);
    let mut out = Vec::new();
    s.on_segment(Time::from_millis(1), &ngwa_data(&c, 0, 60_000), &mut out);
    s.on_segment(Time::from_millis(2), &ngwa_data(&c, 1, 2_000), &mut out);
    let a = out.last().unwrap();
    assert_eq!(a.window, 2_000, "Wngwa at once, not the old edge");
    let far = s.adv_edge;
    assert!(far > s.rcv_nxt + 2_000, "the furthest edge offered is kept for acceptance");
    // A segment beyond the new edge but inside the old one is accepted.
    out.clear();
    s.on_segment(Time::from_millis(3), &ngwa_data(&c, 5, 2_000), &mut out);
    assert_eq!(s.stats.beyond_window_received, 0);
    assert_eq!(s.stats.out_of_order_received, 1);
}

#[test]
fn sarbe_after_a_timeout_has_ssthresh_ocwnd_and_cwnd_one_segment() {
    // Seed 004 section 3.2, pseudo-code B: "ssthresh = oCwnd; cwnd = 1;".
    // Without an estimate yet oCwnd is its floor of two segments.
    let cfg = TcpConfig { mss: 1000, cc: crate::CcKind::Sarbe(Default::default()), ..Default::default() };
    let (mut c, _s) = established(&cfg);
    let mut sent = Vec::new();
    c.send(Time::ZERO, 100_000, &mut sent);
    assert_eq!(c.probe().cwnd, 10_000);
    let t = c.next_timer().unwrap();
    let mut rtx = Vec::new();
    c.on_timer(t, &mut rtx);
    assert_eq!(c.probe().cwnd, 1000, "cwnd = 1 segment");
    assert_eq!(c.probe().ssthresh, 2000, "ssthresh = oCwnd (floor: 2 segments)");
    assert_eq!(rtx.len(), 1);
}

/// Segments 0, 2 and 4 of ten lost, the others arrive; then the first two
/// retransmissions arrive, two partial ACKs. Without SACK recovery
/// retransmits 0, and 2 on the first partial ACK; with SACK the SACKs mark
/// all three lost and recovery retransmits them at once. Returns the
/// sender's next timer after the first and after the second partial ACK.
fn two_partial_acks(cfg: &TcpConfig) -> (Option<Time>, Option<Time>) {
    let (mut c, mut s) = established(cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 10_000, &mut sent);
    assert_eq!(sent.len(), 10);
    let mut acks = Vec::new();
    for k in [1, 3, 5, 6, 7, 8, 9] {
        s.on_segment(ms(10), &sent[k], &mut acks);
    }
    let mut out = Vec::new();
    for a in &acks {
        c.on_segment(ms(20), a, &mut out);
    }
    assert_eq!(c.stats().fast_retransmits, 1);
    // Retransmissions sent and not yet delivered, oldest first.
    let mut rtx: std::collections::VecDeque<Segment> = out.iter().filter(|g| g.retransmission).cloned().collect();
    let mut partial = |t: u64| {
        let mut acks = Vec::new();
        s.on_segment(ms(t), &rtx.pop_front().expect("a retransmission"), &mut acks);
        let mut out = Vec::new();
        c.on_segment(ms(t + 10), acks.last().expect("an ACK"), &mut out);
        rtx.extend(out.into_iter().filter(|g| g.retransmission));
        assert!(c.in_recovery, "SND.UNA is still below the recovery point");
        c.next_timer()
    };
    let first = partial(120);
    let second = partial(230);
    (first, second)
}

#[test]
fn only_the_first_partial_ack_of_a_newreno_recovery_restarts_the_retransmission_timer() {
    // RFC 6582 section 3.2 step 5: "For the first partial ACK that arrives
    // during fast recovery, also reset the retransmit timer" (Impatient).
    let cfg = TcpConfig { mss: 1000, sack: false, delayed_ack_count: 1, rcv_buf: 1 << 20, ..Default::default() };
    let (first, second) = two_partial_acks(&cfg);
    assert!(first.is_some());
    assert_eq!(second, first, "the second partial ACK leaves the timer where the first set it");
    // Slow-but-Steady (RFC 6298 (5.3), Linux): every partial ACK restarts it.
    let (first, second) = two_partial_acks(&TcpConfig { impatient: false, ..cfg });
    assert_eq!(second.unwrap().saturating_sub(first.unwrap()), Time::from_millis(110));
}

/// Without SACK, segment 0 of ten lost, its three duplicate ACKs arriving
/// at `dup_at` ms: the sender's timer after the fast retransmit.
fn timer_after_fast_retransmit(cfg: &TcpConfig, dup_at: u64) -> Time {
    let (mut c, mut s) = established(cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 10_000, &mut sent);
    let mut acks = Vec::new();
    for seg in &sent[1..4] {
        s.on_segment(ms(10), seg, &mut acks);
    }
    let mut out = Vec::new();
    for a in &acks {
        c.on_segment(ms(dup_at), a, &mut out);
    }
    assert_eq!(c.stats().fast_retransmits, 1);
    assert!(out.iter().any(|g| g.retransmission), "segment 0 fast-retransmitted");
    c.next_timer().expect("the retransmission timer runs")
}

#[test]
fn the_fast_retransmit_restarts_the_retransmission_timer_only_when_configured_as_ns2_and_linux() {
    // RFC 6298 (5.1) starts the timer only when it is not running: the
    // fast retransmit at 150 ms leaves the expiry set by the first send
    // at 0 ms. ns-2.35 (tcp-newreno.cc `dupack_action`:
    // `reset_rtx_timer(1,0)`) and Linux (`tcp_xmit_retransmit_queue`)
    // restart it, so the retransmission has a whole RTO to be acknowledged.
    // Any window counts (ns-3's rule): the receiver's window shrinks by
    // the out-of-order bytes it holds.
    let cfg = TcpConfig {
        mss: 1000,
        sack: false,
        delayed_ack_count: 1,
        rcv_buf: 1 << 20,
        dupack_same_window: false,
        ..Default::default()
    };
    let kept = timer_after_fast_retransmit(&cfg, 150);
    let restarted = timer_after_fast_retransmit(&TcpConfig { rto_restart_on_fast_retransmit: true, ..cfg }, 150);
    assert_eq!(restarted.saturating_sub(kept), Time::from_millis(150), "kept {kept:?}, restarted {restarted:?}");
}

/// NewReno without SACK, an ACK per segment, a dupACK counted whatever its
/// window (ns-3's rule: the receiver's window shrinks by the out-of-order
/// bytes it holds).
fn newreno_without_sack() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        cc: crate::CcKind::NewReno(Default::default()),
        sack: false,
        delayed_ack_count: 1,
        rcv_buf: 1 << 20,
        dupack_same_window: false,
        ..Default::default()
    }
}

/// The ACKs `s` sends when it takes `segs` at `rx`.
fn acks_from<'a>(s: &mut Connection, segs: impl IntoIterator<Item = &'a Segment>, rx: Time) -> Vec<Segment> {
    let mut acks = Vec::new();
    for seg in segs {
        s.on_segment(rx, seg, &mut acks);
    }
    acks
}

/// `s` takes `segs` at `rx`, `c` the ACKs they make at `ack`; returns what `c` sent.
fn acks_of<'a>(
    c: &mut Connection,
    s: &mut Connection,
    segs: impl IntoIterator<Item = &'a Segment>,
    rx: Time,
    ack: Time,
) -> Vec<Segment> {
    let acks = acks_from(s, segs, rx);
    let mut out = Vec::new();
    for a in &acks {
        c.on_segment(ack, a, &mut out);
    }
    out
}

#[test]
fn a_partial_ack_ends_a_run_of_duplicate_acks_so_the_dupacks_after_it_count_as_a_new_run() {
    // RFC 5681 section 2: a duplicate ACK acknowledges "the greatest
    // acknowledgment received" (SND.UNA); a partial ACK moves SND.UNA, so the
    // duplicates after it are a new run (ns-3 3.44 `ProcessAck` sets
    // m_dupAckCount = 0 on every new ACK, in recovery or not). Ten segments,
    // 0 and 5 lost: eight dupACKs of 0 (a run, triple counted once), the
    // retransmitted 0 gives a partial ACK of 5, then the three segments sent
    // in recovery (two by limited transmit, one by inflation) give three
    // dupACKs of 5: a second triple.
    let (mut c, mut s) = established(&newreno_without_sack());
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 30_000, &mut sent);
    assert_eq!(sent.len(), 10);
    let out = acks_of(&mut c, &mut s, [1, 2, 3, 4, 6, 7, 8, 9].map(|k| &sent[k]), ms(10), ms(20));
    assert_eq!(c.stats().fast_retransmits, 1);
    assert_eq!((c.stats().triple_dupacks, c.stats().dupacks_past_threshold), (1, 6), "a run of 8");
    let rtx = *out.iter().find(|g| g.retransmission).expect("the fast retransmit");
    let fresh: Vec<Segment> = out.iter().filter(|g| g.len > 0 && !g.retransmission).copied().collect();
    assert_eq!(fresh.len(), 3, "segments 10, 11 and 12 sent in recovery");
    acks_of(&mut c, &mut s, std::iter::once(&rtx).chain(&fresh), ms(120), ms(130));
    assert!(c.in_recovery, "the ACK of 5 is partial");
    assert_eq!(c.stats().dupacks_received, 11);
    assert_eq!(c.stats().triple_dupacks, 2, "the three dupACKs after the partial ACK are a new run");
    assert_eq!(c.stats().dupacks_past_threshold, 7, "runs of 8 and 3: 6 + 1");
}

#[test]
fn after_a_timeout_limited_transmit_sends_no_resend_below_snd_max() {
    // RFC 3042 section 2 lets the first two dupACKs release "previously
    // unsent data". Ten segments, 0 lost, the dupACKs of 1-9 delayed past
    // the timeout: go-back-N resends 0 (cwnd one segment), and the first
    // late dupACK must not release the resend of 1, which the receiver
    // holds (its dupACKs then start a spurious recovery at the recovery
    // point: docs/validation.md, branch val7, rule 2).
    let (mut c, mut s) = established(&newreno_without_sack());
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 10_000, &mut sent);
    assert_eq!(sent.len(), 10);
    let late = acks_from(&mut s, &sent[1..], ms(10));
    let t = c.next_timer().expect("the retransmission timer runs");
    let mut rtx = Vec::new();
    c.on_timer(t, &mut rtx);
    assert_eq!(rtx.len(), 1, "go-back-N with cwnd one segment resends segment 0 only");
    let mut out = Vec::new();
    c.on_segment(t + ms(1), &late[0], &mut out);
    assert_eq!(c.stats().dupacks_received, 1);
    assert!(out.is_empty(), "a dupACK after the timeout released {} segment(s) below SND.MAX", out.len());
}

#[test]
fn segments_sent_by_limited_transmit_are_left_out_of_the_flight_size_that_sets_ssthresh() {
    // RFC 5681 section 3.2 step 2: "When [RFC3042] is in use, additional
    // data sent in limited transmit MUST NOT be included in this
    // calculation". Ten segments (cwnd 10), segment 0 lost: the first two
    // dupACKs send segments 10 and 11 (RFC 3042), the third sets ssthresh
    // = 10 000 / 2, not 12 000 / 2.
    let (mut c, mut s) = established(&newreno_without_sack());
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 20_000, &mut sent);
    assert_eq!(sent.len(), 10);
    let acks = acks_from(&mut s, &sent[1..4], ms(10));
    let mut out = Vec::new();
    for a in &acks[..2] {
        c.on_segment(ms(20), a, &mut out);
    }
    assert_eq!(out.iter().filter(|g| g.len > 0 && !g.retransmission).count(), 2, "RFC 3042: two new segments");
    c.on_segment(ms(20), &acks[2], &mut out);
    assert_eq!(c.stats().fast_retransmits, 1);
    assert_eq!(c.win.ssthresh, 5_000, "FlightSize without the limited-transmit segments, halved");
}

#[test]
fn with_sack_every_partial_ack_restarts_the_timer_unless_ns3s_impatient_rule_is_asked_for() {
    // RFC 6298 (5.3): "When an ACK is received that acknowledges new data,
    // restart the retransmission timer" (Linux `tcp_rearm_rto`); ns-3 3.44
    // keeps RFC 6582's Impatient rule in a SACK recovery too
    // (docs/validation.md, "Westwood+ with SACK on both sides").
    let cfg = TcpConfig { mss: 1000, sack: true, delayed_ack_count: 1, rcv_buf: 1 << 20, ..Default::default() };
    let (first, second) = two_partial_acks(&cfg);
    assert_eq!(second.unwrap().saturating_sub(first.unwrap()), Time::from_millis(110));
    let (first, second) = two_partial_acks(&TcpConfig { sack_impatient: true, ..cfg });
    assert!(first.is_some());
    assert_eq!(second, first, "the second partial ACK leaves the timer where the first set it");
}

#[test]
fn after_a_timeout_an_ack_covering_sacked_data_grows_cwnd_only_by_what_it_newly_delivered() {
    // Segment 0 is lost twice (its fast retransmission too); 1-9 arrive
    // and are SACKed. After the RTO (cwnd one segment) the retransmission
    // of 0 is acknowledged with all ten: 1000 bytes newly delivered, 9000
    // delivered before. RFC 6937 DeliveredData, Linux and ns-3 grow cwnd
    // by 1000; counting the 10 000 would grow it to ssthresh at once.
    let ms = Time::from_millis;
    let (mut c, mut s, sent) = ten_segments_sent();
    let mut acks = Vec::new();
    for seg in &sent[1..] {
        s.on_segment(ms(40), seg, &mut acks);
    }
    let mut lost = Vec::new();
    for a in &acks {
        c.on_segment(ms(80), a, &mut lost);
    }
    let t = c.next_timer().expect("RTO armed");
    let mut rtx = Vec::new();
    c.on_timer(t, &mut rtx);
    assert_eq!(c.win.cwnd, 1000, "one segment after the timeout");
    assert!(c.win.ssthresh >= 2000);
    let mut ack = Vec::new();
    s.on_segment(t + ms(40), &rtx[0], &mut ack);
    assert_eq!(ack.last().unwrap().ack, c.iss.wrapping_add(10_001), "everything delivered");
    let mut out = Vec::new();
    c.on_segment(t + ms(80), ack.last().unwrap(), &mut out);
    assert_eq!(c.win.cwnd, 2000, "1000 bytes newly delivered: cwnd {} (ssthresh {})", c.win.cwnd, c.win.ssthresh);
}

/// Segment 0 of twenty is lost, and so is its fast retransmission; every
/// other segment arrives. Returns the resends of segment 0 the SACKs of the
/// data sent after that retransmission brought, each with the time the
/// retransmission timer was then due, and the time it was due before them.
fn lost_fast_retransmission(cfg: TcpConfig) -> (Vec<Time>, Option<Time>) {
    let ms = Time::from_millis;
    let (mut c, mut s) = established(&cfg);
    let mut sent = Vec::new();
    c.send(Time::ZERO, 20_000, &mut sent);
    assert_eq!(sent.len(), 10, "the initial window");
    let mut acks = Vec::new();
    for seg in &sent[1..] {
        s.on_segment(ms(40), seg, &mut acks);
    }
    // Nine dupACKs: the third starts the recovery and retransmits segment
    // 0 (lost again); limited transmit and PRR send new data around it.
    let mut more = Vec::new();
    for a in &acks {
        c.on_segment(ms(80), a, &mut more);
    }
    let head = c.iss.wrapping_add(1);
    let first = more.iter().position(|g| g.seq == head && g.retransmission).expect("fast retransmit of segment 0");
    let after: Vec<Segment> = more[first + 1..].iter().filter(|g| g.len > 0 && !g.retransmission).copied().collect();
    assert!(!after.is_empty(), "new data goes after the fast retransmission");
    let due_before = c.next_timer();
    let mut acks = Vec::new();
    for seg in &after {
        s.on_segment(ms(120), seg, &mut acks);
    }
    let mut resends = Vec::new();
    for a in &acks {
        let mut out = Vec::new();
        c.on_segment(ms(160), a, &mut out);
        if out.iter().any(|g| g.seq == head && g.len > 0) {
            resends.push(c.next_timer().unwrap());
        }
    }
    (resends, due_before)
}

#[test]
fn a_lost_retransmission_goes_again_once_data_sent_after_it_is_sacked_as_linux_rack_finds_it() {
    // RFC 8985 section 6.2: a segment is lost when one sent after it is
    // delivered (reo_wnd 0 in recovery while no reordering was seen, Linux
    // `tcp_rack_reo_wnd`); `tcp_xmit_retransmit_queue` resends the head
    // and rearms the timer. RFC 6675 alone waits for the timer.
    let cfg = TcpConfig { mss: 1000, sack: true, delayed_ack_count: 1, rcv_buf: 1 << 20, ..Default::default() };
    let (resends, due) = lost_fast_retransmission(cfg);
    assert!(resends.is_empty(), "RFC 6675: no resend before the timer (due {due:?})");
    let (resends, due) = lost_fast_retransmission(TcpConfig { resend_lost_retransmit: true, ..cfg });
    assert_eq!(resends.len(), 1, "the first SACK of later data finds it lost, once");
    let due = due.expect("timer running");
    assert!(resends[0] > due, "the timer restarts with the resend ({:?} after {due:?})", resends[0]);
}

// ---------------------------------------------------------------
// ECN (RFC 3168 section 6.1; DCTCP's receiver, RFC 8257 section 3.2)

fn ecn_cfg(cc: CcName) -> TcpConfig {
    TcpConfig { mss: 1000, ecn: true, cc: crate::CcParams::default().kind(cc), ..Default::default() }
}

#[test]
fn ecn_is_agreed_in_the_handshake_only_when_both_ends_offer_it() {
    let cfg = ecn_cfg(CcName::NewReno);
    let mut c = Connection::client(&cfg, 1000);
    let mut s = Connection::server(&cfg, 5000);
    let mut out = Vec::new();
    c.open(Time::ZERO, &mut out);
    // Section 6.1.1: an ECN-setup SYN carries ECE and CWR ...
    assert_eq!(out[0].flags, TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR);
    s.on_segment(Time::ZERO, &out.pop().unwrap(), &mut out);
    // ... and the SYN-ACK that accepts it ECE alone.
    assert_eq!(out[0].flags, TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE);
    c.on_segment(Time::ZERO, &out.pop().unwrap(), &mut out);
    assert!(c.ecn_ok && s.ecn_ok);
    // A server that does not offer ECN answers without ECE, and neither
    // end uses it.
    let plain = TcpConfig { ecn: false, ..cfg };
    let mut c = Connection::client(&cfg, 1000);
    let mut s = Connection::server(&plain, 5000);
    c.open(Time::ZERO, &mut out);
    s.on_segment(Time::ZERO, &out.pop().unwrap(), &mut out);
    assert!(!out[0].flags.ece());
    c.on_segment(Time::ZERO, &out.pop().unwrap(), &mut out);
    assert!(!c.ecn_ok && !s.ecn_ok);
    c.send(Time::ZERO, 5000, &mut out);
    assert!(out.iter().all(|g| g.ecn == Ecn::NotEct), "no ECT without agreement");
}

#[test]
fn a_ce_mark_is_echoed_on_every_ack_until_a_cwr_arrives() {
    let (mut c, mut s) = established(&ecn_cfg(CcName::NewReno));
    let ms = Time::from_millis;
    let mut data_out = Vec::new();
    c.send(ms(0), 6000, &mut data_out);
    assert!(data_out.iter().all(|g| g.ecn == Ecn::Ect0), "new data is ECT(0) (section 6.1.2)");
    let mut acks = Vec::new();
    let mut marked = data_out[0];
    marked.ecn = Ecn::Ce;
    s.on_segment(ms(10), &marked, &mut acks);
    s.on_segment(ms(10), &data_out[1], &mut acks);
    for g in &data_out[2..] {
        s.on_segment(ms(11), g, &mut acks);
    }
    assert_eq!(acks.len(), 3);
    assert!(acks.iter().all(|a| a.flags.ece()), "ECE latched after one CE (section 6.1.3)");
    assert!(acks.iter().all(|a| a.ecn == Ecn::NotEct), "pure ACKs are not ECT (section 6.1.4)");
    // The sender reduces once and owes a CWR on its next new data.
    let before = c.probe().cwnd;
    let mut more = Vec::new();
    for a in &acks {
        c.on_segment(ms(20), a, &mut more);
    }
    assert_eq!(c.stats().ecn_reductions, 1, "one reduction per window (section 6.1.2)");
    assert!(c.probe().cwnd < before);
    c.send(ms(20), 2000, &mut more);
    let first_new = more.iter().find(|g| g.len > 0).expect("new data");
    assert!(first_new.flags.cwr(), "CWR on the first new data after the reduction");
    assert_eq!(more.iter().filter(|g| g.flags.cwr()).count(), 1, "and only on that one");
    // Its arrival clears the echo.
    let mut after = Vec::new();
    for g in more.iter().filter(|g| g.len > 0) {
        s.on_segment(ms(30), g, &mut after);
    }
    s.on_timer(ms(300), &mut after);
    assert!(!after.is_empty() && !after.last().unwrap().flags.ece(), "ECE cleared by CWR");
}

#[test]
fn a_classic_sender_sends_retransmissions_not_ect() {
    let (mut c, _s) = established(&ecn_cfg(CcName::NewReno));
    let mut out = Vec::new();
    c.send(Time::ZERO, 3000, &mut out);
    let t = c.next_timer().expect("RTO armed");
    let mut rtx = Vec::new();
    c.on_timer(t, &mut rtx);
    assert!(rtx[0].retransmission && rtx[0].ecn == Ecn::NotEct, "RFC 3168 section 6.1.5");
}

#[test]
fn a_dctcp_receiver_echoes_each_segments_ce_state_and_acks_at_once_when_it_changes() {
    let (mut c, mut s) = established(&ecn_cfg(CcName::Dctcp));
    let ms = Time::from_millis;
    let mut data_out = Vec::new();
    c.send(ms(0), 6000, &mut data_out);
    assert!(data_out.iter().all(|g| g.ecn == Ecn::Ect0));
    let mut acks = Vec::new();
    // Segment 0 unmarked (ACK delayed), segment 1 marked: the state
    // changes, so segment 0 is ACKed at once without ECE; then segment 1
    // waits for its own (delayed) ACK with ECE.
    s.on_segment(ms(10), &data_out[0], &mut acks);
    assert!(acks.is_empty());
    let mut marked = data_out[1];
    marked.ecn = Ecn::Ce;
    s.on_segment(ms(10), &marked, &mut acks);
    assert_eq!(acks.len(), 1, "an immediate ACK of the unmarked segment");
    assert!(!acks[0].flags.ece());
    assert_eq!(acks[0].ack, c.iss.wrapping_add(1001));
    s.on_segment(ms(11), &data_out[2], &mut acks);
    // Segment 2 is unmarked: the state changes back, so segment 1 (marked)
    // is ACKed at once with ECE.
    assert_eq!(acks.len(), 2);
    assert!(acks[1].flags.ece());
    assert_eq!(acks[1].ack, c.iss.wrapping_add(2001));
    // No latching: the next ACK carries the state of the data it covers.
    s.on_segment(ms(12), &data_out[3], &mut acks);
    assert_eq!(acks.len(), 3);
    assert!(!acks[2].flags.ece());
    // DCTCP sends its ACKs ECT too (Linux tcp_ecn_send for a control that
    // needs ECN).
    assert!(acks.iter().all(|a| a.ecn == Ecn::Ect0));
}

#[test]
fn a_pacing_control_spaces_its_segments_and_wakes_itself_with_the_timer() {
    // BBR paces (draft-cardwell-iccrg-bbr-congestion-control-00 section
    // 4.2.1): of ten segments the window admits, one leaves now and the
    // next when its time at the pacing rate has passed, which
    // `next_timer` reports.
    let cfg = TcpConfig { mss: 1000, cc: crate::CcKind::Bbr(Default::default()), ..Default::default() };
    let (mut c, _s) = established(&cfg);
    let mut out = Vec::new();
    c.send(Time::ZERO, 10_000, &mut out);
    assert_eq!(out.len(), 1);
    let rate = c.cc.pacing_rate().expect("BBR paces");
    let gap = Time::from_secs_f64(1000.0 / rate);
    assert_eq!(c.next_timer(), Some(gap), "the pacing time comes before the RTO");
    c.on_timer(gap - Time(1), &mut out);
    assert_eq!(out.len(), 1, "not yet");
    c.on_timer(gap, &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(c.next_timer(), Some(gap + gap));
    // An unpaced control sends the whole window at once.
    let (mut r, _s) = established(&TcpConfig { mss: 1000, ..Default::default() });
    let mut burst = Vec::new();
    r.send(Time::ZERO, 10_000, &mut burst);
    assert_eq!(burst.len(), 10);
    assert!(r.rate.is_none(), "no delivery records for a control that does not ask");
}

#[test]
fn a_sacked_segment_counts_as_delivered_once_when_sacked() {
    // draft-cheng-iccrg-delivery-rate-estimation-00 section 3.3: a segment
    // is delivered when first SACKed or cumulatively ACKed, whichever is
    // first; the cumulative ACK that later covers it adds nothing.
    let ms = Time::from_millis;
    let cfg = TcpConfig { mss: 1000, cc: crate::CcKind::Bbr(Default::default()), ..Default::default() };
    let (mut c, mut s) = established(&cfg);
    let mut sent = Vec::new();
    c.send(Time::ZERO, 10_000, &mut sent);
    while sent.len() < 10 {
        let t = c.next_timer().expect("pacing timer");
        c.on_timer(t, &mut sent);
    }
    assert!(sent[9].seq != sent[8].seq, "ten distinct segments");
    let delivered = |c: &Connection| c.rate.as_ref().expect("rates").delivered;
    // Segment 0 is lost; the other nine arrive and are SACKed.
    let mut acks = Vec::new();
    for seg in &sent[1..] {
        s.on_segment(ms(20), seg, &mut acks);
    }
    let mut out = Vec::new();
    for a in &acks {
        c.on_segment(ms(40), a, &mut out);
    }
    assert_eq!(delivered(&c), 9_000, "nine SACKed segments");
    // The retransmission fills the hole: one more segment, not ten.
    let rtx: Vec<Segment> = out.iter().filter(|g| g.retransmission).cloned().collect();
    assert_eq!(rtx.len(), 1);
    let mut ack = Vec::new();
    s.on_segment(ms(60), &rtx[0], &mut ack);
    c.on_segment(ms(80), ack.last().expect("an ACK"), &mut out);
    assert!(c.all_data_acked());
    assert_eq!(delivered(&c), 10_000);
    assert!(c.rate.as_ref().unwrap().sent.is_empty(), "records go as SND.UNA passes them");
}

/// The ECE flags of the receiver's ACKs when segment 0 arrives marked CE
/// and segment `cwr_at` carries the sender's CWR (unmarked), segments 0 to
/// 3 in order, ACKed every second one.
fn echoes_around_a_cwr(past_cwr: bool, cwr_at: u64) -> Vec<bool> {
    let cfg = TcpConfig { mss: 1000, ecn: true, ecn_echo_past_cwr: past_cwr, ..Default::default() };
    let (c, mut s) = established(&cfg);
    assert!(s.ecn_ok);
    let mut out = Vec::new();
    for k in 0..4 {
        let mut g = data(&c, k);
        g.ecn = if k == 0 { Ecn::Ce } else { Ecn::Ect0 };
        if k == cwr_at {
            g.flags = g.flags | TcpFlags::CWR;
        }
        s.on_segment(Time::from_millis(10 + k), &g, &mut out);
    }
    out.iter().map(|a| a.flags.ece()).collect()
}

#[test]
fn with_ns3s_echo_rule_a_cwr_behind_an_unacknowledged_mark_leaves_the_echo_on() {
    // ns-3 3.44 `TcpSocketBase::DoForwardUp`: a CWR sets `ECN_IDLE` only
    // from a state other than `ECN_CE_RCVD`, the state a CE leaves until an
    // ACK goes out. Segment 0 (CE) waits for its delayed ACK when segment 1
    // brings the CWR: ns-3 keeps echoing, RFC 3168 section 6.1.3 and Linux
    // (`tcp_ecn_accept_cwr`) stop.
    assert_eq!(echoes_around_a_cwr(false, 1), [false, false], "RFC 3168: the CWR ends the echo");
    assert_eq!(echoes_around_a_cwr(true, 1), [true, true], "ns-3: the unechoed mark outlives the CWR");
    // Once an ACK has echoed the mark, the CWR ends it under both rules.
    assert_eq!(echoes_around_a_cwr(false, 2), [true, false]);
    assert_eq!(echoes_around_a_cwr(true, 2), [true, false]);
}

/// An ECN-capable pair (MSS 1000, CUBIC, SACK, PRR) whose sender, after a
/// first window of ten segments acknowledged without a mark, has twenty in
/// flight (slow start): the receiver got them at 30 ms, the first marked CE
/// and segment `lost` of the twenty (if any) dropped. Returns the sender, the
/// receiver, the sender's cwnd before their ACKs, and those ACKs (all with
/// ECE: RFC 3168 section 6.1.3 latches it until a CWR arrives).
/// An ECN connection on `cfg` whose first window (10 segments, sent at 0)
/// was acknowledged at 20 ms: the second window, 20 segments, as sent.
fn ecn_second_window(cfg: &TcpConfig) -> (Connection, Connection, Vec<Segment>) {
    let (mut c, mut s) = established(cfg);
    assert!(c.ecn_ok && s.ecn_ok, "ECN negotiated");
    let ms = Time::from_millis;
    let mut first = Vec::new();
    c.send(Time::ZERO, 1_000_000, &mut first);
    let mut acks = Vec::new();
    for g in &first {
        s.on_segment(ms(10), g, &mut acks);
    }
    let mut sent = Vec::new();
    for a in &acks {
        c.on_segment(ms(20), a, &mut sent);
    }
    assert_eq!(sent.len(), 20, "slow start doubled the window");
    (c, s, sent)
}

fn window_first_marked(lost: Option<usize>) -> (Connection, Connection, u64, Vec<Segment>) {
    window_first_marked_by(lost, RecoveryFromCwr::Linux)
}

/// [`window_first_marked`] with the rule for a loss found in the CWR state.
fn window_first_marked_by(lost: Option<usize>, rule: RecoveryFromCwr) -> (Connection, Connection, u64, Vec<Segment>) {
    let cfg = TcpConfig { mss: 1000, ecn: true, rcv_buf: 1 << 20, recovery_from_cwr: rule, ..Default::default() };
    let (c, mut s, mut sent) = ecn_second_window(&cfg);
    let ms = Time::from_millis;
    sent[0].ecn = Ecn::Ce;
    let mut acks = Vec::new();
    for (k, g) in sent.iter().enumerate() {
        if Some(k) != lost {
            s.on_segment(ms(30), g, &mut acks);
        }
    }
    assert!(acks.iter().all(|a| a.flags.ece()), "every ACK echoes the mark");
    let cwnd0 = c.win.cwnd;
    (c, s, cwnd0, acks)
}

#[test]
fn an_ece_reduces_cwnd_over_the_window_by_prr_and_does_not_grow_it_meanwhile() {
    // RFC 3168 section 6.1.2 (one reduction per window) with RFC 6937's
    // PRR spreading it, as Linux's and ns-3's CWR state: cwnd is not cut
    // to ssthresh at once, and no ACK of the reduced window raises it.
    let (mut c, mut s, cwnd0, acks) = window_first_marked(None);
    let mut out = Vec::new();
    c.on_segment(Time::from_millis(40), &acks[0], &mut out);
    assert_eq!(c.stats().ecn_reductions, 1);
    let ssthresh = c.win.ssthresh;
    assert!(ssthresh < cwnd0, "ssthresh {ssthresh} from cwnd {cwnd0}");
    assert!(c.in_cwr && c.win.cwnd > ssthresh, "cwnd {} cut at once to {ssthresh}", c.win.cwnd);
    for a in &acks[1..] {
        c.on_segment(Time::from_millis(40), a, &mut out);
        assert!(c.win.cwnd <= cwnd0, "cwnd grew to {} while reducing", c.win.cwnd);
    }
    assert_eq!(c.stats().ecn_reductions, 1, "one reduction for the window");
    // PRR sent about ssthresh while the window was acknowledged.
    let during: u64 = out.iter().map(|g| g.len as u64).sum();
    assert!(during.abs_diff(ssthresh) <= c.mss, "sent {during} B for ssthresh {ssthresh}");
    // The first ACK beyond the reduced window ends the state at ssthresh.
    let mut acks2 = Vec::new();
    for g in &out {
        s.on_segment(Time::from_millis(50), g, &mut acks2);
    }
    let mut more = Vec::new();
    c.on_segment(Time::from_millis(60), &acks2[0], &mut more);
    assert!(!c.in_cwr);
    assert!(c.win.cwnd >= ssthresh && c.win.cwnd <= ssthresh + c.mss, "cwnd {} at the end", c.win.cwnd);
}

#[test]
fn a_loss_in_the_window_of_an_ecn_reduction_does_not_cut_ssthresh_again() {
    // RFC 3168 section 6.1.2: "the TCP sender's congestion window should
    // be reduced only once in response to a series of dropped and/or CE
    // packets from a single window of data" (Linux `tcp_enter_recovery`
    // keeps the CWR's ssthresh). The window's first segment marked, its
    // second (stream bytes 11 000..12 000) lost.
    let (mut c, _s, _, acks) = window_first_marked(Some(1));
    let lost_seq = c.iss.wrapping_add(1 + 11_000);
    let mut out = Vec::new();
    c.on_segment(Time::from_millis(40), &acks[0], &mut out);
    let ssthresh = c.win.ssthresh;
    assert_eq!(c.stats().ecn_reductions, 1);
    for a in &acks[1..] {
        c.on_segment(Time::from_millis(40), a, &mut out);
    }
    assert_eq!(c.stats().fast_retransmits, 1, "the loss is repaired by fast retransmit");
    assert!(out.iter().any(|g| g.retransmission && g.seq == lost_seq));
    assert_eq!(c.win.ssthresh, ssthresh, "ssthresh cut a second time for one window");
}

#[test]
fn with_ns3s_rule_a_loss_in_the_cwr_state_is_resent_once_under_it_without_a_fast_recovery() {
    // ns-3 3.44 `TcpSocketBase::DupAck` enters recovery from `CA_DISORDER`
    // only; in `CA_CWR` its `SendPendingData` resends the segment NextSeg
    // finds lost (RFC 6675 rule 1) while cwnd - pipe allows. The same
    // window as above: its first segment marked, its second lost.
    let (mut c, mut s, _, acks) = window_first_marked_by(Some(1), RecoveryFromCwr::Ns3);
    let lost_seq = c.iss.wrapping_add(1 + 11_000);
    let ms = Time::from_millis;
    let mut out = Vec::new();
    c.on_segment(ms(40), &acks[0], &mut out);
    let ssthresh = c.win.ssthresh;
    assert!(c.in_cwr && c.stats().ecn_reductions == 1);
    for a in &acks[1..] {
        c.on_segment(ms(40), a, &mut out);
    }
    assert_eq!(c.stats().fast_retransmits, 0, "a fast recovery entered from CWR");
    assert!(c.in_cwr && !c.in_recovery, "the CWR state left before the hole is repaired");
    let resent: Vec<&Segment> = out.iter().filter(|g| g.retransmission).collect();
    assert_eq!(resent.len(), 1, "resent: {:?}", resent.iter().map(|g| g.seq).collect::<Vec<_>>());
    assert_eq!(resent[0].seq, lost_seq);
    assert_eq!(c.win.ssthresh, ssthresh, "ssthresh cut again");
    assert!(out.iter().any(|g| !g.retransmission && g.len > 0), "no new data sent under the CWR's window");
    // The resent segment arrives: its ACK covers the window the ECE found
    // in flight; the CWR state lasts until an ACK passes it (ns-3
    // `ackNumber > m_recover`), and no recovery was entered meanwhile.
    let mut ack = Vec::new();
    s.on_segment(ms(50), resent[0], &mut ack);
    let mut more = Vec::new();
    c.on_segment(ms(60), ack.last().expect("the receiver ACKs the hole"), &mut more);
    assert_eq!(c.snd_una, c.ecn_recover, "the hole not repaired");
    assert!(!more.iter().any(|g| g.retransmission), "a segment resent after the hole was repaired");
    assert_eq!(c.stats().fast_retransmits, 0);
}

#[test]
fn with_linuxs_rule_the_same_loss_enters_fast_recovery_from_the_cwr_state() {
    let (mut c, _s, _, acks) = window_first_marked_by(Some(1), RecoveryFromCwr::Linux);
    let mut out = Vec::new();
    for a in &acks {
        c.on_segment(Time::from_millis(40), a, &mut out);
    }
    assert_eq!(c.stats().fast_retransmits, 1);
    assert!(c.in_recovery && !c.in_cwr);
}

/// A window of twenty segments (slow start from ten, MSS 1000, SACK, ECN,
/// ns-3's rule for a loss in the CWR state) whose first segment is lost and
/// second marked CE: every ACK the receiver sends is a duplicate carrying
/// SACK and ECE. Returns the sender after all of them.
fn dupacks_echoing_a_mark(ece_on_new_ack_only: bool) -> Connection {
    let cfg = TcpConfig {
        mss: 1000,
        ecn: true,
        rcv_buf: 1 << 20,
        recovery_from_cwr: RecoveryFromCwr::Ns3,
        ece_on_new_ack_only,
        ..Default::default()
    };
    let (mut c, mut s, mut sent) = ecn_second_window(&cfg);
    let ms = Time::from_millis;
    sent[1].ecn = Ecn::Ce;
    let mut dupacks = Vec::new();
    for g in &sent[1..] {
        s.on_segment(ms(30), g, &mut dupacks);
    }
    let una = c.snd_una;
    assert!(dupacks.iter().all(|a| a.flags.ece() && a.ack == c.iss.wrapping_add(1 + 10_000)), "ACKs past the hole");
    let mut out = Vec::new();
    for a in &dupacks {
        c.on_segment(ms(40), a, &mut out);
    }
    assert_eq!(c.snd_una, una, "an ACK advanced SND.UNA");
    c
}

#[test]
fn an_ece_on_a_duplicate_ack_starts_a_reduction_that_keeps_the_loss_from_a_fast_recovery() {
    // RFC 3168 section 6.1.2 (and Linux `tcp_ack`'s FLAG_ECE) reads ECE on
    // every ACK: the first dupACK's ECE enters CWR, and under ns-3's CWR
    // rule the third dupACK then starts no recovery.
    let c = dupacks_echoing_a_mark(false);
    assert_eq!(c.stats().ecn_reductions, 1);
    assert!(c.in_cwr && !c.in_recovery);
    assert_eq!(c.stats().fast_retransmits, 0);
}

#[test]
fn with_ns3s_ece_rule_a_duplicate_acks_ece_is_ignored_and_the_loss_starts_a_fast_recovery() {
    // ns-3 3.44 `TcpSocketBase::ReceivedAck` reads ECE only `if (ackNumber >
    // oldHeadSequence && ...)`: the dupACKs' ECE starts nothing, and
    // `DupAck` goes from CA_DISORDER to CA_RECOVERY at the third.
    let c = dupacks_echoing_a_mark(true);
    assert_eq!(c.stats().ecn_reductions, 0, "a duplicate ACK's ECE reduced cwnd");
    assert!(c.in_recovery && !c.in_cwr);
    assert_eq!(c.stats().fast_retransmits, 1);
}

/// Forty segments in flight (MSS 1000, NewReno, SACK, PRR), the first
/// thirty lost: the ten SACKed ones' dupACKs arrive, the third starts a
/// recovery whose pipe is far below ssthresh (twenty segments).
/// Returns what the sender sent in answer to each dupACK after the third.
fn sent_per_dupack_in_a_deep_recovery(bound: PrrBound) -> Vec<usize> {
    let cfg = TcpConfig {
        mss: 1000,
        cc: crate::CcKind::NewReno(Default::default()),
        delayed_ack_count: 1,
        rcv_buf: 1 << 20,
        prr_bound: bound,
        ..Default::default()
    };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut window = Vec::new();
    c.send(ms(0), 1_000_000, &mut window);
    for round in 1..=2u64 {
        window = acks_of(&mut c, &mut s, &window, ms(20 * round - 10), ms(20 * round));
    }
    assert_eq!(window.len(), 40, "slow start doubled the window twice");
    let dupacks = acks_from(&mut s, &window[30..], ms(50));
    let mut per_ack = Vec::new();
    for (k, a) in dupacks.iter().enumerate() {
        let mut out = Vec::new();
        c.on_segment(ms(60), a, &mut out);
        if k == 2 {
            assert!(
                c.in_recovery && c.pipe() + 5_000 < c.win.ssthresh,
                "pipe {} ssthresh {}",
                c.pipe(),
                c.win.ssthresh
            );
        }
        if k > 2 {
            per_ack.push(out.len());
        }
    }
    per_ack
}

#[test]
fn below_ssthresh_prr_ssrb_sends_one_more_segment_per_dupack_than_the_safe_ack_bound() {
    // RFC 6937 section 3.1 PRR-SSRB: limit = MAX(prr_delivered - prr_out,
    // DeliveredData) + MSS on every ACK. RFC 9937 (and Linux
    // `tcp_cwnd_reduction`, ns-3 `TcpPrrRecovery`) add the MSS only on an
    // ACK that advances SND.UNA without a new loss; a dupACK delivering one
    // segment releases one.
    let ssrb = sent_per_dupack_in_a_deep_recovery(PrrBound::Ssrb);
    let safe = sent_per_dupack_in_a_deep_recovery(PrrBound::SafeAck);
    assert_eq!(safe, vec![1; safe.len()], "the conservative bound: one segment out per segment delivered");
    assert_eq!(ssrb, vec![2; ssrb.len()], "slow start: two out per segment delivered");
}

#[test]
fn the_safe_ack_bound_adds_a_segment_on_a_partial_ack_that_marks_no_new_loss() {
    let safe = |c: &Connection| c.prr_safe_ack;
    let cfg = TcpConfig {
        mss: 1000,
        delayed_ack_count: 1,
        rcv_buf: 1 << 20,
        prr_bound: PrrBound::SafeAck,
        ..Default::default()
    };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 100_000, &mut sent);
    // Segment 0 lost: nine dupACKs (not safe), then the retransmission's
    // cumulative ACK (safe: SND.UNA advances, nothing newly lost).
    let mut out = acks_of(&mut c, &mut s, &sent[1..], ms(10), ms(20));
    assert!(c.in_recovery && !safe(&c));
    let rtx = *out.iter().find(|g| g.retransmission).expect("the fast retransmit");
    out.clear();
    let acks = acks_from(&mut s, [&rtx], ms(30));
    c.on_segment(ms(40), &acks[0], &mut out);
    assert!(safe(&c), "an ACK advancing SND.UNA with no new loss");
}

// ---------------------------------------------------------------
// How a loss sets ssthresh (`TcpConfig::loss_ssthresh`)

/// What a loss and then a timeout inside its recovery leave: NewReno,
/// ten segments in flight, segment 0 lost, the receiver's ACKs of segments
/// 1..=`acked` arriving (the first two dupACKs send segments 10 and 11 by
/// limited transmit, the third starts a recovery, the rest send new data
/// under PRR with `sack`, else inflate cwnd, RFC 6582), then the
/// retransmission timer expiring inside the recovery.
struct LossThenTimeout {
    /// ssthresh the fast retransmit set.
    at_loss: u64,
    /// Just before the expiry: SND.MAX - SND.UNA, RFC 6675's pipe, cwnd - ssthresh.
    flight: u64,
    pipe: u64,
    inflation: u64,
    /// ssthresh after the expiry.
    at_timeout: u64,
}

fn loss_then_timeout(rule: LossSsthresh, sack: bool, acked: usize) -> LossThenTimeout {
    let cfg = TcpConfig {
        mss: 1000,
        cc: crate::CcKind::NewReno(Default::default()),
        sack,
        recovery: Recovery::Prr,
        delayed_ack_count: 1,
        rcv_buf: 1 << 20,
        loss_ssthresh: rule,
        ..Default::default()
    };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 40_000, &mut sent);
    assert_eq!(sent.len(), 10);
    let mut out = acks_of(&mut c, &mut s, &sent[1..=acked], ms(40), ms(80));
    assert!(c.in_recovery, "three dupACKs start a recovery");
    let at_loss = c.win.ssthresh;
    let (flight, pipe, inflation) = (c.snd_max - c.snd_una, c.pipe(), c.win.cwnd.saturating_sub(c.win.ssthresh));
    let t = c.next_timer().expect("the retransmission timer runs");
    c.on_timer(t, &mut out);
    assert_eq!(c.stats().timeouts, 1);
    LossThenTimeout { at_loss, flight, pipe, inflation, at_timeout: c.win.ssthresh }
}

/// With SACK, segments 1-9 SACKed: (ssthresh at the fast retransmit,
/// SND.MAX - SND.UNA and pipe before the timeout, ssthresh after it).
fn ssthresh_at_a_loss_and_a_timeout_in_recovery(rule: LossSsthresh) -> (u64, u64, u64, u64) {
    let r = loss_then_timeout(rule, true, 9);
    (r.at_loss, r.flight, r.pipe, r.at_timeout)
}

#[test]
fn a_fast_retransmit_halves_the_flight_without_limited_transmit_or_ns3s_pipe_or_linuxs_cwnd() {
    // At the third dupACK 12 segments are outstanding, two of them sent by
    // limited transmit (RFC 5681 section 3.2 step 2: not counted), so
    // FlightSize = 10 segments; the pipe leaves out the three SACKed
    // segments and the head IsLost() marks: 8 (ns-3 EnterRecovery's
    // BytesInFlight); Linux halves cwnd, 10 segments.
    assert_eq!(ssthresh_at_a_loss_and_a_timeout_in_recovery(LossSsthresh::Rfc5681).0, 5000);
    assert_eq!(ssthresh_at_a_loss_and_a_timeout_in_recovery(LossSsthresh::Ns3).0, 4000);
    assert_eq!(ssthresh_at_a_loss_and_a_timeout_in_recovery(LossSsthresh::Linux).0, 5000);
}

#[test]
fn a_timeout_inside_a_sack_recovery_halves_the_outstanding_data_or_ns3s_pipe_or_keeps_linuxs_reduction() {
    // RFC 5681 (4): ssthresh "no more than" max(FlightSize / 2, 2 SMSS).
    // PRR sent new data during the recovery, so SND.MAX - SND.UNA is now
    // larger than the pipe, which leaves out the nine SACKed segments.
    let (reduced, flight, pipe, ssthresh) = ssthresh_at_a_loss_and_a_timeout_in_recovery(LossSsthresh::Rfc5681);
    assert!(flight > 10_000 && pipe < flight / 2, "flight {flight}, pipe {pipe}");
    assert_eq!(ssthresh, flight / 2, "RFC 5681's FlightSize: all that is not cumulatively acknowledged");
    assert!(ssthresh > reduced, "and so above the recovery's own reduction");
    // ns-3 3.44 ReTxTimeout: GetSsThresh(m_tcb, BytesInFlight()), the pipe.
    let (reduced, _, pipe, ssthresh) = ssthresh_at_a_loss_and_a_timeout_in_recovery(LossSsthresh::Ns3);
    assert_eq!(ssthresh, (pipe / 2).max(2000));
    assert!(ssthresh < reduced);
    // Linux tcp_enter_loss: no second reduction inside the window.
    let (reduced, _, _, ssthresh) = ssthresh_at_a_loss_and_a_timeout_in_recovery(LossSsthresh::Linux);
    assert_eq!(ssthresh, reduced);
}

/// NewReno with no dupACK at all: 40 kB written with `initial_cwnd`
/// segments sent, then the timer expires `n` times; ssthresh after each.
fn ssthresh_after_expiries(rule: LossSsthresh, initial_cwnd: u32, n: usize) -> Vec<u64> {
    let cfg = TcpConfig {
        mss: 1000,
        cc: crate::CcKind::NewReno(Default::default()),
        initial_cwnd,
        loss_ssthresh: rule,
        ..Default::default()
    };
    let (mut c, _s) = established(&cfg);
    let mut out = Vec::new();
    c.send(Time::ZERO, 40_000, &mut out);
    let mut after = Vec::new();
    for _ in 0..n {
        let t = c.next_timer().expect("the retransmission timer runs, backed off after the first expiry");
        c.on_timer(t, &mut out);
        after.push(c.win.ssthresh);
    }
    assert_eq!(c.stats().timeouts, n as u64);
    after
}

#[test]
fn outside_a_recovery_every_rule_halves_what_is_outstanding() {
    // No dupACK at all: the timer expires with ten segments outstanding,
    // none SACKed, so the pipe and cwnd equal SND.MAX - SND.UNA and Linux's
    // rule has no reduction of this window to keep.
    for rule in [LossSsthresh::Rfc5681, LossSsthresh::Ns3, LossSsthresh::Linux, LossSsthresh::Ns2] {
        assert_eq!(ssthresh_after_expiries(rule, 10, 1), [5000], "{rule:?}");
    }
}

#[test]
fn linux_halves_an_odd_window_to_whole_segments_where_rfc_5681_halves_its_bytes() {
    // Eleven segments outstanding when the timer expires: RFC 5681 (4)
    // halves the 11 000 bytes; Linux's `tcp_reno_ssthresh` halves the
    // segment count, 11 >> 1 = 5.
    assert_eq!(ssthresh_after_expiries(LossSsthresh::Rfc5681, 11, 1), [5500]);
    assert_eq!(ssthresh_after_expiries(LossSsthresh::Linux, 11, 1), [5000]);
    // And never below two segments (three outstanding: 3 >> 1 = 1 -> 2).
    assert_eq!(ssthresh_after_expiries(LossSsthresh::Linux, 3, 1), [2000]);
}

#[test]
fn without_sack_ns3s_flight_leaves_out_a_segment_per_duplicate_ack_at_a_fast_retransmit_and_a_timeout() {
    // Fast retransmit: 12 segments outstanding. RFC 5681 leaves out the two
    // limited transmit sent (10 -> 5000); ns-3's `EnterRecovery` halves
    // BytesInFlight() + 1 segment with three segments Reno-SACKed and the
    // head marked lost but counted in flight again: 12 - 3 - 1 + 1 = 9 -> 4500.
    // Without SACK, ACKs of segments 1-6: five are duplicates (the first
    // ACK's window differs from the handshake's, RFC 5681 section 2 (e)).
    let rfc = loss_then_timeout(LossSsthresh::Rfc5681, false, 6);
    let ns3 = loss_then_timeout(LossSsthresh::Ns3, false, 6);
    assert_eq!(rfc.at_loss, 5000);
    assert_eq!(ns3.at_loss, 4500, "12 outstanding less the three dupACKs' segments, halved");
    // Timeout: the five dupACKs have marked five segments (3 at entry, 2 in
    // recovery), which is what RFC 6582's inflation holds in cwnd: ns-3's
    // `ReTxTimeout` halves SND.MAX - SND.UNA less those five.
    assert_eq!(ns3.inflation, 5000, "cwnd = ssthresh + 3 SMSS + 2 SMSS (RFC 6582 section 3.2 steps 2 and 4)");
    assert_eq!(ns3.flight, 12_000);
    assert_eq!(ns3.at_timeout, 3500, "(12 - 5) segments, halved");
    // RFC 5681 halves all that is outstanding, above the recovery's reduction.
    assert_eq!((rfc.flight, rfc.at_timeout), (12_000, 6000));
}

#[test]
fn ns2s_rule_halves_the_window_at_a_fast_retransmit_and_the_uninflated_window_at_a_timeout_in_whole_segments() {
    // ns-2.35 `slowdown(CLOSE_SSTHRESH_HALF)`: ssthresh_ = (int)(window() / 2)
    // segments. At the fast retransmit window() = cwnd_ = 10 segments (the
    // two limited-transmit segments do not count): 5.
    let ns2 = loss_then_timeout(LossSsthresh::Ns2, false, 6);
    assert_eq!(ns2.at_loss, 5000);
    // At the timeout ns-2's NewReno holds the five dupACKs' inflation in
    // `dupwnd_`, not in cwnd_ (= 5 segments): (int)(5 / 2) = 2 segments,
    // where RFC 5681 halves the 12 outstanding (6) and ns-3 the 7 it counts
    // in flight (3.5).
    assert_eq!(ns2.inflation, 5000, "RFC 6582's cwnd = ssthresh + 5 SMSS; ns-2's cwnd_ + dupwnd_ the same");
    assert_eq!(ns2.at_timeout, 2000);
}

#[test]
fn ns2s_rule_halves_the_window_again_at_a_backed_off_expiry_where_rfc5681_keeps_ssthresh() {
    // ns-2.35 `TcpAgent::timeout` calls `slowdown(CLOSE_SSTHRESH_HALF)` at
    // every expiry; RFC 5681 section 3.1 keeps ssthresh on a repeated one.
    assert_eq!(ssthresh_after_expiries(LossSsthresh::Rfc5681, 20, 2), [10_000, 10_000]);
    assert_eq!(
        ssthresh_after_expiries(LossSsthresh::Ns2, 20, 2),
        [10_000, 2000],
        "cwnd = 1 segment halved, floored at 2"
    );
}

/// Eleven segments, the first lost; the others' dupACKs start a recovery
/// (no limited transmit), then the retransmission is acknowledged.
/// Returns (ssthresh at the fast retransmit, cwnd when the recovery ends).
fn window_after_one_recovery(rule: LossSsthresh) -> (u64, u64) {
    let cfg = TcpConfig { initial_cwnd: 11, limited_transmit: false, loss_ssthresh: rule, ..newreno_without_sack() };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 40_000, &mut sent);
    assert_eq!(sent.len(), 11);
    let mut more = acks_of(&mut c, &mut s, &sent[1..], ms(40), ms(80));
    assert!(c.in_recovery, "ten dupACKs start a recovery");
    let at_loss = c.win.ssthresh;
    // The retransmitted head (sent first; the inflation's new segments
    // follow it): its ACK covers everything sent before the recovery.
    more.sort_by_key(|seg| seg.seq.wrapping_sub(c.iss));
    let _ = acks_of(&mut c, &mut s, &more[..1], ms(120), ms(160));
    assert!(!c.in_recovery, "the retransmission's ACK covers the recovery point");
    (at_loss, c.win.cwnd)
}

#[test]
fn ns2s_rule_ends_a_recovery_with_the_unrounded_half_window_over_whole_segment_ssthresh() {
    // ns-2.35 tcp.cc `slowdown` with `precisionReduce_` (its default):
    // halfwin = windowd() / 2 = 5.5 segments; ssthresh_ = (int) halfwin = 5,
    // cwnd_ = halfwin, and tcp-newreno.cc leaves cwnd_ there when `dupwnd_`
    // is dropped at the full ACK. RFC 6582 step 6 sets cwnd = ssthresh, which
    // RFC 5681 (4) makes half of the 11-segment FlightSize.
    assert_eq!(window_after_one_recovery(LossSsthresh::Ns2), (5000, 5500));
    assert_eq!(window_after_one_recovery(LossSsthresh::Rfc5681), (5500, 5500));
}

/// Ten segments all unacknowledged until the timer expires; then the nine
/// originals after the first arrive and their dupACKs come back. Returns the
/// stream offsets (in segments) `c` sends on the first two dupACKs.
fn sent_on_dupacks_after_a_timeout(resends: bool) -> Vec<u64> {
    // (newreno_without_sack: any window counts for a duplicate ACK, since
    // the receiver's shrinks by each out-of-order segment it holds.)
    let cfg = TcpConfig { limited_transmit_resends: resends, ..newreno_without_sack() };
    let (mut c, mut s) = established(&cfg);
    let ms = Time::from_millis;
    let mut sent = Vec::new();
    c.send(ms(0), 40_000, &mut sent);
    assert_eq!(sent.len(), 10);
    let mut out = Vec::new();
    let t = c.next_timer().expect("the retransmission timer runs");
    c.on_timer(t, &mut out);
    assert_eq!(out.len(), 1, "cwnd = 1 SMSS: the head is resent alone");
    let dupacks = acks_from(&mut s, &sent[1..3], t + ms(40));
    let mut more = Vec::new();
    for a in &dupacks {
        c.on_segment(t + ms(80), a, &mut more);
    }
    more.iter().map(|seg| seg.seq.wrapping_sub(c.iss + 1) as u64 / 1000).collect()
}

#[test]
fn limited_transmit_releases_a_go_back_n_resend_only_as_ns2_does() {
    // RFC 3042 section 2: limited transmit sends "previously unsent data";
    // after a timeout the next segment is a resend below SND.MAX, so nothing
    // goes (ns-3, Linux). ns-2.35's `TcpAgent::send_one` sends the next
    // `t_seqno_` whatever it is: segments 1 and 2 again.
    assert_eq!(sent_on_dupacks_after_a_timeout(false), Vec::<u64>::new());
    assert_eq!(sent_on_dupacks_after_a_timeout(true), vec![1, 2]);
}

#[test]
fn an_ece_for_the_window_a_timeout_already_reduced_starts_no_second_reduction() {
    // RFC 3168 section 6.1.2: cwnd "should be reduced only once in response
    // to a series of dropped and/or CE packets from a single window of
    // data". The second window's first segment is CE-marked and all its
    // ACKs are lost: the timeout is that window's reduction, and the
    // receiver's ECE on the ACK of the retransmission (for the same window)
    // must not reduce again (Linux: no CWR from CA_Loss).
    let cfg = TcpConfig { mss: 1000, ecn: true, rcv_buf: 1 << 20, ..Default::default() };
    let (mut c, mut s, mut sent) = ecn_second_window(&cfg);
    let ms = Time::from_millis;
    sent[0].ecn = Ecn::Ce;
    let mut lost_acks = Vec::new();
    for g in &sent {
        s.on_segment(ms(30), g, &mut lost_acks);
    }
    assert!(lost_acks.iter().all(|a| a.flags.ece()), "the receiver echoes the mark");
    let at = c.next_timer().expect("the retransmission timer runs");
    let mut rtx = Vec::new();
    c.on_timer(at, &mut rtx);
    assert_eq!(c.stats().timeouts, 1);
    let after_rto = c.win.ssthresh;
    assert_eq!(c.win.cwnd, 1000, "RFC 5681 section 3.1: one segment after a timeout");
    let mut acks = Vec::new();
    s.on_segment(at + ms(10), &rtx[0], &mut acks);
    let ack = acks.last().expect("the duplicate is acknowledged at once");
    assert!(ack.flags.ece(), "still echoing: no CWR has reached the receiver");
    let mut more = Vec::new();
    c.on_segment(at + ms(20), ack, &mut more);
    assert_eq!(c.stats().ecn_reductions, 0, "the timed-out window's ECE reduced cwnd again");
    assert_eq!(c.win.ssthresh, after_rto);
    assert!(c.win.cwnd > 1000, "slow start goes on from the timeout's window");
}
