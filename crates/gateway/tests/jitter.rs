//! The delay line's jitter (`--jitter`), without sockets: the RWM paper's
//! NetEm link varied its delay by +/- 3 ms (seed 003 section IV.A).

use netreturn_base::{Rate, TcpFlags, Time};
use netreturn_control::queue::{Discipline, DropTail, Limit};
use netreturn_gateway::pipeline::{Dir, Jitter, LinkConfig, NoController, Pipeline};
use netreturn_wire::frame::{build_tcp_frame, tcp_view};

const DELAY_MS: u64 = 20;
const JITTER_MS: u64 = 3;

fn link(rate: Option<Rate>) -> LinkConfig {
    LinkConfig {
        rate,
        delay: Time::from_millis(DELAY_MS),
        loss: 0.0,
        discipline: Discipline::DropTail(DropTail::new(Limit::Packets(100_000))),
        aqm: None,
    }
}

/// A data frame numbered `i` (its sequence number).
fn frame(i: u32) -> Vec<u8> {
    build_tcp_frame([10, 0, 0, 1], [10, 0, 0, 2], 40000, 5001, i, 1, TcpFlags::ACK, 500, &[], &[7; 100])
}

fn number(f: &[u8]) -> u32 {
    tcp_view(f).expect("a TCP frame").seq
}

fn pipeline(rate: Option<Rate>, jitter: Time, reorder: bool, seed: u64) -> Pipeline<NoController> {
    let mut p = Pipeline::new(link(rate), link(None), None, seed);
    p.set_jitter(Dir::AtoB, Jitter { amount: jitter, reorder });
    p
}

/// Sends `n` frames A -> B, frame `i` at `i * gap`, and returns (frame
/// number, arrival, departure) in the order they leave.
fn run(p: &mut Pipeline<NoController>, n: u32, gap: Time) -> Vec<(u32, Time, Time)> {
    let mut out = Vec::new();
    let arrival = |i: u32| Time::from_nanos(gap.nanos() * i as u64);
    for i in 0..n {
        let now = arrival(i);
        // Everything due before this arrival first, as the I/O loop does.
        while let Some(t) = p.next_wakeup().filter(|&t| t < now) {
            p.poll(t, &mut |_, f| out.push((number(&f), arrival(number(&f)), t)));
        }
        p.on_frame(now, Dir::AtoB, frame(i));
        p.poll(now, &mut |_, f| out.push((number(&f), arrival(number(&f)), now)));
    }
    while let Some(t) = p.next_wakeup() {
        p.poll(t, &mut |_, f| out.push((number(&f), arrival(number(&f)), t)));
    }
    out
}

fn delays_ms(out: &[(u32, Time, Time)]) -> Vec<f64> {
    out.iter().map(|&(_, a, d)| (d - a).millis_f64()).collect()
}

#[test]
fn jittered_delays_stay_within_the_delay_plus_or_minus_the_jitter_and_spread_over_it() {
    // Frames 10 ms apart (more than twice the jitter): the FIFO rule never
    // holds one back, so every delay is the uniform draw itself.
    let out = run(&mut pipeline(None, Time::from_millis(JITTER_MS), false, 7), 2000, Time::from_millis(10));
    assert_eq!(out.len(), 2000, "no frame lost");
    let d = delays_ms(&out);
    let (lo, hi) = ((DELAY_MS - JITTER_MS) as f64, (DELAY_MS + JITTER_MS) as f64);
    assert!(d.iter().all(|&x| (lo..=hi).contains(&x)), "every delay in [{lo}, {hi}] ms");
    let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = d.iter().cloned().fold(0.0, f64::max);
    // 2000 uniform draws over 6 ms: the extremes come within 0.05 ms of the
    // bounds (a miss has probability (1 - 0.05/6)^2000 ~ 5e-8 per side).
    assert!(min < lo + 0.05 && max > hi - 0.05, "spread over the whole range: {min} .. {max}");
}

#[test]
fn the_mean_jittered_delay_is_the_base_delay() {
    let out = run(&mut pipeline(None, Time::from_millis(JITTER_MS), false, 11), 4000, Time::from_millis(10));
    let d = delays_ms(&out);
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    // Uniform on [-3, 3] ms: std sqrt(3) ms, so the mean of 4000 draws has a
    // standard error of 0.027 ms; 0.15 ms is more than 5 of them.
    assert!((mean - DELAY_MS as f64).abs() < 0.15, "mean delay {mean} ms, base {DELAY_MS} ms");
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / d.len() as f64;
    assert!((var.sqrt() - 3f64.sqrt()).abs() < 0.1, "std {} ms, a uniform's is sqrt(3)", var.sqrt());
}

#[test]
fn fifo_jitter_keeps_back_to_back_frames_in_order() {
    // 154-byte frames at 10 Mb/s leave the queue 123 us apart, far closer
    // than the 6 ms the jitter spans, so many draws would overtake.
    let out = run(&mut pipeline(Some(Rate::mbps(10)), Time::from_millis(JITTER_MS), false, 3), 3000, Time::ZERO);
    let order: Vec<u32> = out.iter().map(|o| o.0).collect();
    assert_eq!(order, (0..3000).collect::<Vec<_>>(), "the frames leave in the order they came");
    let departures: Vec<Time> = out.iter().map(|o| o.2).collect();
    assert!(departures.windows(2).all(|w| w[0] <= w[1]));
    // No frame leaves before its serialization ends plus delay - jitter.
    let tx = Rate::mbps(10).tx_time(154);
    for (k, &(i, _, d)) in out.iter().enumerate() {
        let earliest = Time::from_nanos(tx.nanos() * (k as u64 + 1)) + Time::from_millis(DELAY_MS - JITTER_MS);
        assert!(d >= earliest, "frame {i} left at {d}, before {earliest}");
        let latest = Time::from_nanos(tx.nanos() * (k as u64 + 1)) + Time::from_millis(DELAY_MS + JITTER_MS);
        assert!(d <= latest, "frame {i} left at {d}, after {latest}");
    }
}

#[test]
fn reordering_jitter_lets_frames_overtake_each_other_as_netem_does() {
    let out = run(&mut pipeline(Some(Rate::mbps(10)), Time::from_millis(JITTER_MS), true, 3), 3000, Time::ZERO);
    assert_eq!(out.len(), 3000);
    let order: Vec<u32> = out.iter().map(|o| o.0).collect();
    let overtaken = order.windows(2).filter(|w| w[0] > w[1]).count();
    assert!(overtaken > 100, "frames 123 us apart with +/- 3 ms draws overtake often: {overtaken}");
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..3000).collect::<Vec<_>>(), "every frame leaves once");
    let departures: Vec<Time> = out.iter().map(|o| o.2).collect();
    assert!(departures.windows(2).all(|w| w[0] <= w[1]), "each leaves when its release time comes");
}

#[test]
fn a_seed_fixes_every_jittered_departure_and_another_seed_changes_them() {
    let go = |seed| {
        run(&mut pipeline(Some(Rate::mbps(10)), Time::from_millis(JITTER_MS), false, seed), 500, Time::from_micros(700))
    };
    assert_eq!(go(5), go(5));
    assert_ne!(go(5), go(6));
}

#[test]
fn no_jitter_means_the_constant_delay_line_of_before() {
    let out = run(&mut pipeline(None, Time::ZERO, false, 1), 100, Time::from_micros(300));
    assert!(delays_ms(&out).iter().all(|&d| d == DELAY_MS as f64));
}
