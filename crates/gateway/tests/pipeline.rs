//! The bridge without sockets: frames and times in, frames and times out.

use netreturn_base::{Rate, TcpFlags, Time};
use netreturn_control::queue::{Discipline, DropTail, Limit};
use netreturn_control::{QueueEvent, QueueEventKind, TcpView};
use netreturn_gateway::pipeline::{Dir, LinkConfig, NoController, Pipeline, WindowHook};
use netreturn_wire::frame::{build_tcp_frame, tcp_checksums_ok, tcp_view};
use proptest::prelude::*;

fn link(rate: Option<Rate>, delay: Time, limit: Limit) -> LinkConfig {
    LinkConfig { rate, delay, loss: 0.0, discipline: Discipline::DropTail(DropTail::new(limit)), aqm: None }
}

fn data(len: usize) -> Vec<u8> {
    build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 40000, 5001, 1, 1, TcpFlags::ACK, 500, &[], &vec![7; len])
}

fn ack(window: u16) -> Vec<u8> {
    build_tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], 5001, 40000, 1, 1, TcpFlags::ACK, window, &[], &[])
}

/// Runs the pipeline at every wake-up until idle; returns (time, dir, frame)
/// for each frame out.
fn drain<H: WindowHook>(p: &mut Pipeline<H>, from: Time) -> Vec<(Time, Dir, Vec<u8>)> {
    let mut out = Vec::new();
    let mut now = from;
    p.poll(now, &mut |d, f| out.push((now, d, f)));
    while let Some(t) = p.next_wakeup() {
        now = t;
        p.poll(now, &mut |d, f| out.push((now, d, f)));
    }
    out
}

#[test]
fn frames_leave_spaced_by_serialization_time_then_delay() {
    // 1500-byte frames at 100 Mb/s take 120 us each; 10 ms of delay after.
    let mut p: Pipeline<NoController> = Pipeline::new(
        link(Some(Rate::mbps(100)), Time::from_millis(10), Limit::Packets(100)),
        link(None, Time::ZERO, Limit::Packets(100)),
        None,
        1,
    );
    let f = data(1500 - 54);
    assert_eq!(f.len(), 1500);
    for _ in 0..3 {
        p.on_frame(Time::ZERO, Dir::AtoB, f.clone());
    }
    let out = drain(&mut p, Time::ZERO);
    let times: Vec<_> = out.iter().map(|o| o.0).collect();
    let ms10 = Time::from_millis(10);
    assert_eq!(
        times,
        vec![ms10 + Time::from_micros(120), ms10 + Time::from_micros(240), ms10 + Time::from_micros(360)]
    );
    assert!(out.iter().all(|o| o.1 == Dir::AtoB && o.2 == f), "frames pass unchanged");
    assert_eq!(p.stats().a_to_b.forwarded, 3);
}

#[test]
fn an_idle_link_does_not_bank_credit() {
    // Departure clock, not a token bucket: after an idle second, two frames
    // arriving together still leave one serialization time apart.
    let mut p: Pipeline<NoController> = Pipeline::new(
        link(Some(Rate::mbps(100)), Time::ZERO, Limit::Packets(100)),
        link(None, Time::ZERO, Limit::Packets(100)),
        None,
        1,
    );
    let f = data(1446);
    p.on_frame(Time::ZERO, Dir::AtoB, f.clone());
    drain(&mut p, Time::ZERO);
    let t1 = Time::from_secs(1);
    p.on_frame(t1, Dir::AtoB, f.clone());
    p.on_frame(t1, Dir::AtoB, f.clone());
    let out = drain(&mut p, t1);
    assert_eq!(out[0].0, t1 + Time::from_micros(120));
    assert_eq!(out[1].0, t1 + Time::from_micros(240));
}

#[test]
fn arp_udp_and_garbage_pass_byte_for_byte_and_are_counted() {
    let mut p: Pipeline<NoController> = Pipeline::new(
        link(None, Time::ZERO, Limit::Packets(100)),
        link(None, Time::ZERO, Limit::Packets(100)),
        None,
        1,
    );
    let mut arp = vec![0xffu8; 42];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    let mut bad_ip = data(10);
    bad_ip[14] = 0x4f; // IHL says 60 bytes: headers do not hold together
    let short = vec![1u8, 2, 3];
    for f in [&arp, &bad_ip, &short] {
        p.on_frame(Time::ZERO, Dir::BtoA, f.clone());
    }
    let out = drain(&mut p, Time::ZERO);
    let frames: Vec<_> = out.into_iter().map(|o| o.2).collect();
    assert_eq!(frames, vec![arp, bad_ip, short]);
    let s = p.stats().b_to_a;
    assert_eq!((s.non_tcp, s.malformed_passed, s.forwarded), (1, 2, 3));
}

/// A to B at 10 Mb/s with room for two waiting frames; B to A unlimited.
fn two_frame_queue_at_10mbps() -> Pipeline<NoController> {
    Pipeline::new(
        link(Some(Rate::mbps(10)), Time::ZERO, Limit::Packets(2)),
        link(None, Time::ZERO, Limit::Packets(100)),
        None,
        1,
    )
}

#[test]
fn a_full_queue_drops_and_counts() {
    let mut p = two_frame_queue_at_10mbps();
    for _ in 0..5 {
        p.on_frame(Time::ZERO, Dir::AtoB, data(100));
    }
    let out = drain(&mut p, Time::ZERO);
    // The first frame is on the wire at once and no longer in the queue
    // (as in the simulator: `Fifo::pass` at an idle link), two wait, two
    // are dropped.
    assert_eq!(out.len(), 3);
    assert_eq!(p.stats().a_to_b.dropped_queue, 2);
}

#[test]
fn a_frame_handed_over_late_meets_the_queue_as_it_was_when_it_arrived() {
    // The I/O loop reads a batch of frames, each at its kernel receive
    // time, before it polls. 154-byte frames at 10 Mb/s take 123.2 us: of
    // three arriving at 0 one is sent at once and two wait in a 2-frame
    // buffer; by 250 us all three have started, so a fourth arriving then
    // finds the buffer empty, even though no poll ran in between.
    let mut p = two_frame_queue_at_10mbps();
    for _ in 0..3 {
        p.on_frame(Time::ZERO, Dir::AtoB, data(100));
    }
    p.on_frame(Time::from_micros(250), Dir::AtoB, data(100));
    let out = drain(&mut p, Time::from_micros(250));
    assert_eq!(p.stats().a_to_b.dropped_queue, 0);
    assert_eq!(out.len(), 4);
    // The first two were due (123.2, 246.4 us) before the first poll, at
    // 250 us; then the departure clock: the third ends at 369.6 us and the
    // fourth, queued behind it, at 492.8 us.
    let t: Vec<u64> = out.iter().map(|o| o.0.nanos()).collect();
    assert_eq!(t, vec![250_000, 250_000, 369_600, 492_800]);
}

#[test]
fn bernoulli_loss_is_seeded_and_near_its_rate() {
    let run = |seed| {
        let mut cfg = link(None, Time::ZERO, Limit::Packets(100_000));
        cfg.loss = 0.1;
        let mut p: Pipeline<NoController> = Pipeline::new(cfg, link(None, Time::ZERO, Limit::Packets(10)), None, seed);
        for i in 0..10_000u64 {
            p.on_frame(Time(i), Dir::AtoB, data(0));
        }
        p.stats().a_to_b.dropped_loss
    };
    assert_eq!(run(5), run(5), "same seed, same losses");
    let lost = run(5);
    assert!((900..1100).contains(&lost), "lost {lost} of 10000 at p = 0.1");
}

/// A test double for `WindowGateway`: records what it is shown and asks for
/// a fixed window on every ACK (never a controller of its own: the real
/// ones live in netreturn-control).
#[derive(Default)]
struct Recorder {
    data: Vec<TcpView>,
    other: Vec<u32>,
    queue: Vec<QueueEvent>,
    acks: Vec<(Time, TcpView)>,
    answer: Option<u16>,
}

impl WindowHook for Recorder {
    fn on_data(&mut self, _: Time, seg: &TcpView) {
        self.data.push(*seg);
    }
    fn on_data_other(&mut self, _: Time, bytes: u32) {
        self.other.push(bytes);
    }
    fn on_queue(&mut self, _: Time, ev: &QueueEvent) {
        self.queue.push(*ev);
    }
    fn on_ack(&mut self, now: Time, seg: &TcpView) -> Option<u16> {
        self.acks.push((now, *seg));
        self.answer
    }
}

#[test]
fn the_controller_watches_the_data_queue_and_rewrites_acks_with_valid_checksums() {
    let hook = Recorder { answer: Some(1000), ..Default::default() };
    let mut p = Pipeline::new(
        link(Some(Rate::mbps(100)), Time::ZERO, Limit::Packets(100)),
        link(None, Time::from_millis(1), Limit::Packets(100)),
        Some(hook),
        1,
    );
    let mut arp = vec![0u8; 60];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    p.on_frame(Time::ZERO, Dir::AtoB, data(1000));
    p.on_frame(Time::ZERO, Dir::AtoB, arp);
    p.on_frame(Time::ZERO, Dir::BtoA, ack(5000));
    let out = drain(&mut p, Time::ZERO);
    let h = p.hook().unwrap();
    assert_eq!(h.data.len(), 1);
    assert_eq!(h.other, vec![60]);
    let kinds: Vec<_> = h.queue.iter().map(|e| (e.kind, e.backlog_packets)).collect();
    assert_eq!(
        kinds,
        vec![
            // The data frame starts on the idle link at once, before the
            // ARP frame arrives (the simulator's `Fifo::pass`: enqueue, then
            // dequeue), and the ARP frame after it.
            (QueueEventKind::Enqueue, 1),
            (QueueEventKind::Dequeue, 0),
            (QueueEventKind::Enqueue, 1),
            (QueueEventKind::Dequeue, 0),
        ],
        "on_queue sees the data queue only, never the ACK queue"
    );
    assert_eq!(h.acks.len(), 1);
    assert_eq!(h.acks[0].1.window, 5000);
    let (_, dir, f) = out.iter().find(|o| o.1 == Dir::BtoA).unwrap();
    assert_eq!(*dir, Dir::BtoA);
    assert_eq!(tcp_view(f).unwrap().window, 1000);
    assert!(tcp_checksums_ok(f), "SPEC rule 3: rewritten ACKs carry a correct checksum");
    assert_eq!(p.stats().b_to_a.rewritten, 1);
}

#[test]
fn a_reverse_controller_watches_the_b_to_a_queue_and_rewrites_the_acks_going_a_to_b() {
    // A scenario's `reverse = { queue = "awm" }` (seed 002 footnote 1): flows
    // both ways, one controller per direction's queue. Once `--config`
    // dropped the reverse controller without a word.
    let fwd = Recorder { answer: Some(1000), ..Default::default() };
    let rev = Recorder { answer: Some(2000), ..Default::default() };
    let mut p = Pipeline::new(
        link(Some(Rate::mbps(100)), Time::ZERO, Limit::Packets(100)),
        link(Some(Rate::mbps(100)), Time::ZERO, Limit::Packets(100)),
        Some(fwd),
        1,
    );
    p.set_hook_ba(rev);
    // Data B -> A (a flow from side B) and its ACK A -> B, and the other way.
    let data_ba = build_tcp_frame([10, 0, 0, 2], [10, 0, 0, 1], 5002, 40002, 1, 1, TcpFlags::ACK, 500, &[], &[7; 800]);
    let ack_ab = build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 40002, 5002, 1, 1, TcpFlags::ACK, 6000, &[], &[]);
    p.on_frame(Time::ZERO, Dir::BtoA, data_ba);
    p.on_frame(Time::ZERO, Dir::AtoB, ack_ab);
    p.on_frame(Time::ZERO, Dir::AtoB, data(1000));
    p.on_frame(Time::ZERO, Dir::BtoA, ack(5000));
    let out = drain(&mut p, Time::ZERO);
    let (f, r) = (p.hook().unwrap(), p.hook_ba().unwrap());
    // Each sees its own direction's arrivals and queue, and the ACKs of the
    // other direction as they leave.
    assert_eq!((f.data.len(), r.data.len()), (2, 2), "every frame arriving in its direction");
    assert!(f.queue.len() == 4 && r.queue.len() == 4, "two enqueues and two dequeues each");
    assert_eq!(f.acks.iter().map(|a| a.1.window).collect::<Vec<_>>(), vec![500, 5000]);
    assert_eq!(r.acks.iter().map(|a| a.1.window).collect::<Vec<_>>(), vec![6000, 500]);
    // Lowered, never raised, checksums right; counted where they left.
    let windows =
        |d: Dir| -> Vec<u16> { out.iter().filter(|o| o.1 == d).map(|o| tcp_view(&o.2).unwrap().window).collect() };
    assert_eq!(windows(Dir::AtoB), vec![2000, 500], "the A -> B data's window (500) is below 2000: untouched");
    assert_eq!(windows(Dir::BtoA), vec![500, 1000]);
    assert!(out.iter().all(|o| tcp_checksums_ok(&o.2)));
    assert_eq!((p.stats().a_to_b.rewritten, p.stats().b_to_a.rewritten), (1, 1));
}

#[test]
fn a_window_above_the_original_is_never_written() {
    let hook = Recorder { answer: Some(60000), ..Default::default() };
    let mut p = Pipeline::new(
        link(None, Time::ZERO, Limit::Packets(100)),
        link(None, Time::ZERO, Limit::Packets(100)),
        Some(hook),
        1,
    );
    let a = ack(5000);
    p.on_frame(Time::ZERO, Dir::BtoA, a.clone());
    let out = drain(&mut p, Time::ZERO);
    assert_eq!(out[0].2, a, "SPEC rule 1: never raise");
    assert_eq!(p.stats().b_to_a.rewritten, 0);
}

proptest! {
    /// Conservation: every frame received is forwarded, dropped, or still
    /// inside; a frame never leaves before it arrived plus the delay; times
    /// out are non-decreasing per direction.
    #[test]
    fn frames_are_conserved_and_never_early(
        arrivals in proptest::collection::vec((0u64..2_000_000, any::<bool>(), 0usize..1400), 1..200),
        limit in 1u32..50, loss in 0.0f64..0.3,
    ) {
        let mut arrivals = arrivals;
        arrivals.sort_by_key(|a| a.0);
        let mut cfg = link(Some(Rate::mbps(50)), Time::from_micros(300), Limit::Packets(limit));
        cfg.loss = loss;
        let mut p: Pipeline<NoController> = Pipeline::new(cfg.clone(), cfg, None, 9);
        let mut out: Vec<(Time, Dir, Vec<u8>)> = Vec::new();
        for &(t, ab, len) in &arrivals {
            let now = Time(t);
            while let Some(w) = p.next_wakeup() {
                if w > now { break; }
                p.poll(w, &mut |d, f| out.push((w, d, f)));
            }
            p.on_frame(now, if ab { Dir::AtoB } else { Dir::BtoA }, data(len));
        }
        out.extend(drain(&mut p, Time(arrivals.last().unwrap().0)));
        let s = p.stats();
        for d in [s.a_to_b, s.b_to_a] {
            prop_assert_eq!(d.received, d.forwarded + d.dropped_queue + d.dropped_loss);
        }
        prop_assert_eq!(out.len() as u64, s.total(|d| d.forwarded));
        let first = Time(arrivals[0].0) + Time::from_micros(300);
        prop_assert!(out.iter().all(|o| o.0 >= first));
        for dir in [Dir::AtoB, Dir::BtoA] {
            let ts: Vec<_> = out.iter().filter(|o| o.1 == dir).map(|o| o.0).collect();
            prop_assert!(ts.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}

/// The real `WindowGateway` (EWT) inside the pipeline: after a handshake
/// seen by the bridge, a data queue above `St` makes the next ACK leave
/// with a lower window and a valid checksum (SPEC 2.1 and rules 2, 3).
#[test]
fn ewt_in_the_pipeline_lowers_acks_when_the_data_queue_is_above_st() {
    use netreturn_control::ewt::EwtConfig;
    use netreturn_control::{ControllerConfig, GatewayConfig, WindowGateway};
    let cfg = GatewayConfig::new(
        ControllerConfig::Ewt(EwtConfig { start_threshold: Some(netreturn_base::Size::Bytes(29_000)) }),
        97_000,
        Rate::mbps(10),
    );
    let mut p = Pipeline::new(
        link(Some(Rate::mbps(10)), Time::ZERO, Limit::Bytes(97_000)),
        link(None, Time::ZERO, Limit::Packets(100)),
        Some(WindowGateway::new(cfg)),
        1,
    );
    let ws = [2, 4, 0x05, 0xb4, 1, 3, 3, 7]; // MSS 1460, wscale 7
    let syn = build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 40000, 5001, 0, 0, TcpFlags::SYN, 64240, &ws, &[]);
    let synack = build_tcp_frame(
        [10, 0, 0, 2],
        [10, 0, 0, 1],
        5001,
        40000,
        0,
        1,
        TcpFlags::SYN | TcpFlags::ACK,
        65160,
        &ws,
        &[],
    );
    let hs_ack = build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 40000, 5001, 1, 1, TcpFlags::ACK, 502, &[], &[]);
    let mut t = Time::ZERO;
    p.on_frame(t, Dir::AtoB, syn);
    drain(&mut p, t);
    t += Time::from_millis(1);
    p.on_frame(t, Dir::BtoA, synack);
    drain(&mut p, t);
    t += Time::from_millis(1);
    p.on_frame(t, Dir::AtoB, hs_ack);
    drain(&mut p, t);
    // 50 data segments at once: about 75 kB queued, above St = 29 kB.
    t += Time::from_millis(1);
    for _ in 0..50 {
        p.on_frame(t, Dir::AtoB, data(1446));
    }
    // The receiver's ACK advertises 469 << 7 = 60 kB.
    p.on_frame(t, Dir::BtoA, ack(469));
    let mut out = Vec::new();
    p.poll(t, &mut |d, f| out.push((d, f)));
    let (_, a) = out.iter().find(|(d, _)| *d == Dir::BtoA).expect("ACK forwarded");
    let w = tcp_view(a).unwrap().window;
    assert!(w < 469, "window lowered, got {w}");
    assert!(w as u64 * 128 >= 1460, "never below one MSS");
    assert!(tcp_checksums_ok(a));
    assert_eq!(p.stats().b_to_a.rewritten, 1);
}
