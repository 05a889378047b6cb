//! The Linux side: packet sockets, and the event loop that feeds the
//! sans-IO pipeline with frames and `CLOCK_MONOTONIC` time.
//!
//! * A [`Port`] per interface moves frames between the interface and the
//!   loop. [`ring::RingPort`] (the default, `--io ring`) uses `PACKET_MMAP`
//!   rings shared with the kernel: no system call per frame on receive, one
//!   `send` per loop turn for all frames on transmit. [`mmsg::MmsgPort`]
//!   (`--io mmsg`, and the fallback when rings cannot be set up) uses
//!   batched `recvmmsg` / `sendmmsg`. Both bind to their interface in
//!   promiscuous mode, ignore the frames this host sends
//!   (`PACKET_IGNORE_OUTGOING`: a bridge must not read back its own output),
//!   and bypass the interface's qdisc (`PACKET_QDISC_BYPASS`: the emulated
//!   queue is ours; a qdisc would be a second, hidden one).
//! * Frames live in buffers of a [`Pool`], recycled (last in, first out,
//!   so the buffer a frame is copied into is still in cache): nothing is
//!   allocated per frame once the pool has grown to the number of frames in
//!   flight. A frame is copied out of the receive ring at once, not lent to
//!   the pipeline in its slot: the kernel fills slots strictly in order and
//!   stops at one still in use, so a frame held by a long delay line would
//!   block the ring (and profiles showed the copy from a just-written slot
//!   costs the same cache misses wherever it goes).
//! * Arrival times are the kernel's receive times where the port has them
//!   (the ring's per-frame timestamp): a frame that arrived while the loop
//!   slept is not delayed by the wake-up on top of the emulated delay.
//! * One thread, one `epoll` set: both receiving sockets and a `timerfd`.
//!   Departures are timed by the pipeline's departure clock; the loop arms
//!   the timerfd (absolute `CLOCK_MONOTONIC`, timer slack set to 1 ns with
//!   `prctl` so the kernel does not defer it by its default 50 us) for the
//!   next departure, and busy-polls instead when that departure is closer
//!   than `--spin-us`: a timer interrupt and wake-up cost roughly 5-20 us,
//!   about the serialization time of one 1500-byte frame at 1 Gb/s (12 us),
//!   so at high rates sleeping would add jitter and lower the throughput; at
//!   low rates the loop sleeps and costs nothing.
//!
//! VLAN: with `rxvlan` offload the kernel strips an 802.1Q tag into
//! metadata on receive; the ring port puts it back into the frame, the
//! mmsg port cannot (the testbed turns the offload off).

pub mod mmsg;
pub mod ring;
pub mod socket;

use crate::cli::{Args, Io};
use crate::pipeline::{Dir, Pipeline, WindowHook};
use netreturn_base::Time;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use socket::cvt;

/// Frames up to this size live in recycled buffers of this capacity.
const POOL_CAP: usize = 2048;
/// Buffers kept for reuse, at most.
const POOL_MAX: usize = 16384;

/// Recycled frame buffers.
#[derive(Default)]
pub struct Pool {
    bufs: Vec<Vec<u8>>,
}

impl Pool {
    /// An empty buffer with room for `len` bytes.
    pub fn get(&mut self, len: usize) -> Vec<u8> {
        if len <= POOL_CAP {
            self.bufs.pop().unwrap_or_else(|| Vec::with_capacity(POOL_CAP))
        } else {
            Vec::with_capacity(len)
        }
    }

    /// Takes a buffer back (only the standard size is kept).
    pub fn put(&mut self, mut v: Vec<u8>) {
        if v.capacity() == POOL_CAP && self.bufs.len() < POOL_MAX {
            v.clear();
            self.bufs.push(v);
        }
    }
}

/// One interface, as the loop sees it.
pub trait Port {
    /// Reads up to `max` frames without blocking, handed to `f` in arrival
    /// order with the `CLOCK_REALTIME` nanoseconds at which the kernel
    /// received each, when the port knows it; returns how many were read.
    fn recv(&mut self, max: usize, pool: &mut Pool, f: &mut impl FnMut(Vec<u8>, Option<u64>)) -> io::Result<usize>;
    /// Queues `frame` for transmission (in order); its buffer goes back to
    /// `pool` once copied out.
    fn send(&mut self, frame: Vec<u8>, pool: &mut Pool);
    /// Hands queued frames to the kernel; returns how many the kernel
    /// refused (dropped: counted as tx errors).
    fn flush(&mut self, pool: &mut Pool) -> u64;
    /// Frames are still waiting for the kernel (a full ring or socket
    /// buffer): the loop must come back soon instead of sleeping.
    fn backlogged(&self) -> bool;
    /// Frames lost on receive since the last call: (delivered truncated,
    /// dropped by the kernel because the ring or socket buffer was full).
    fn take_rx_losses(&mut self) -> (u64, u64);
    /// The descriptor that becomes readable when frames arrive.
    fn poll_fd(&self) -> RawFd;
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_MONOTONIC` as a [`Time`].
pub fn monotonic_now() -> Time {
    Time(clock_ns(libc::CLOCK_MONOTONIC))
}

/// Maps the kernel's `CLOCK_REALTIME` receive stamps to `CLOCK_MONOTONIC`.
///
/// The offset between the clocks only drifts (NTP slewing) or steps, but
/// measuring it takes two clock reads, and a thread preempted between them
/// would measure it milliseconds off (and release frames that early): a
/// sample counts only if two monotonic reads around the realtime read are
/// close together.
pub struct ClockMap {
    real_minus_mono: Option<i128>,
}

impl ClockMap {
    pub fn new() -> ClockMap {
        let mut c = ClockMap { real_minus_mono: None };
        for _ in 0..100 {
            if c.refresh() {
                break;
            }
        }
        c
    }

    /// Takes a new sample of the offset; false if it was disturbed (the
    /// previous one is kept).
    pub fn refresh(&mut self) -> bool {
        let m1 = clock_ns(libc::CLOCK_MONOTONIC) as i128;
        let r = clock_ns(libc::CLOCK_REALTIME) as i128;
        let m2 = clock_ns(libc::CLOCK_MONOTONIC) as i128;
        if m2 - m1 > 5_000 {
            return false;
        }
        self.real_minus_mono = Some(r - (m1 + m2) / 2);
        true
    }

    /// The arrival time to give the pipeline for a frame the kernel received
    /// at `kernel_real` (`CLOCK_REALTIME` ns; `None`: unknown, the frame is
    /// stamped now, when it is read, never before it arrived): the kernel's
    /// receive time, so that the emulated link does not add the bridge's own
    /// wake-up latency to its delay, kept within [`floor`, the present] so
    /// that times given to the pipeline never go back (and a clock step
    /// cannot throw a frame out of order). `now` is a recent monotonic
    /// reading (a frame stamped later is checked against the clock).
    pub fn arrival(&self, kernel_real: Option<u64>, now: Time, floor: Time) -> Time {
        let t = match (kernel_real, self.real_minus_mono) {
            (Some(r), Some(off)) => {
                let m = (r as i128 - off).max(0) as u64;
                if m > now.nanos() {
                    m.min(monotonic_now().nanos())
                } else {
                    m
                }
            }
            _ => monotonic_now().nanos(),
        };
        Time(t).max(floor)
    }
}

impl Default for ClockMap {
    fn default() -> ClockMap {
        ClockMap::new()
    }
}

pub(crate) static STOP: AtomicBool = AtomicBool::new(false);
pub(crate) static DUMP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}
extern "C" fn on_dump(_: libc::c_int) {
    DUMP.store(true, Ordering::Relaxed);
}

pub(crate) fn install_signals() {
    for (sig, h) in
        [(libc::SIGINT, on_stop as extern "C" fn(libc::c_int)), (libc::SIGTERM, on_stop), (libc::SIGUSR1, on_dump)]
    {
        // SAFETY: the handlers only store to atomics (async-signal-safe).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = h as usize;
            sa.sa_flags = 0; // no SA_RESTART: epoll_wait returns EINTR
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

pub(crate) fn write_stats_file(path: &str, json: &str) {
    let tmp = format!("{path}.tmp");
    if std::fs::write(&tmp, format!("{json}\n")).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

/// Extra fields of the JSON counters, computed from the pipeline.
pub type Extra<H> = dyn Fn(&Pipeline<H>) -> Vec<(&'static str, String)>;

/// Runs the bridge until SIGINT/SIGTERM or `args.duration`; returns the
/// final counters as JSON. `extra` adds fields to every JSON dump (the
/// controller's own statistics, say).
pub fn run<H: WindowHook>(args: &Args, pipe: &mut Pipeline<H>, extra: &Extra<H>) -> io::Result<String> {
    if args.io == Io::Ring {
        let open = |i: &str| ring::RingPort::open(i, args.max_frame, args.ring_frames, args.tx_ring_frames);
        match open(&args.iface_a).and_then(|a| Ok([a, open(&args.iface_b)?])) {
            Ok(ports) => return run_ports(args, pipe, extra, ports),
            Err(e) => eprintln!("netreturn-gateway: packet rings unavailable ({e}); using recvmmsg/sendmmsg"),
        }
    }
    let ports = [mmsg::MmsgPort::open(&args.iface_a, args.batch)?, mmsg::MmsgPort::open(&args.iface_b, args.batch)?];
    run_ports(args, pipe, extra, ports)
}

/// The event loop over the two ports: `ports[0]` is interface A (A -> B
/// frames arrive there, B -> A frames leave there), `ports[1]` is B.
fn run_ports<H: WindowHook, P: Port>(
    args: &Args,
    pipe: &mut Pipeline<H>,
    extra: &Extra<H>,
    mut ports: [P; 2],
) -> io::Result<String> {
    install_signals();
    // SAFETY: plain syscalls; fds owned below.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let ep = unsafe { OwnedFd::from_raw_fd(cvt(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
    let tfd = unsafe {
        OwnedFd::from_raw_fd(cvt(libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC))?)
    };
    for (fd, tag) in [(ports[0].poll_fd(), 0u64), (ports[1].poll_fd(), 1), (tfd.as_raw_fd(), 2)] {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag };
        cvt(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
    }
    let mut pool = Pool::default();
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
    let start = monotonic_now();
    let end = args.duration.map(|d| start + d);
    let mut next_stats = start;
    let mut armed: Option<Time> = None;
    let mut last_rx = start;
    // The latest time given to the pipeline.
    let mut clock = start;
    let mut clocks = ClockMap::new();
    // Ingress direction of each port, and the port each direction leaves by.
    const INGRESS: [Dir; 2] = [Dir::AtoB, Dir::BtoA];
    let egress = |d: Dir| match d {
        Dir::AtoB => 1,
        Dir::BtoA => 0,
    };
    let collect_losses = |pipe: &mut Pipeline<H>, ports: &mut [P; 2]| {
        for (p, dir) in ports.iter_mut().zip(INGRESS) {
            let (truncated, dropped) = p.take_rx_losses();
            pipe.count_rx_losses(dir, truncated, dropped);
        }
    };
    let json = |p: &Pipeline<H>| p.stats().to_json(&extra(p));

    while !STOP.load(Ordering::Relaxed) {
        let now = monotonic_now();
        clocks.refresh();
        if end.is_some_and(|e| now >= e) {
            break;
        }
        if DUMP.swap(false, Ordering::Relaxed) {
            collect_losses(pipe, &mut ports);
            eprintln!("{}", json(pipe));
        }
        if now >= next_stats {
            if let Some(p) = &args.stats_file {
                collect_losses(pipe, &mut ports);
                write_stats_file(p, &json(pipe));
            }
            next_stats = now + Time::from_secs(1);
        }
        let mut got = 0;
        for (port, dir) in ports.iter_mut().zip(INGRESS) {
            got += port.recv(args.batch, &mut pool, &mut |f, kernel_real| {
                clock = clocks.arrival(kernel_real, now, clock);
                pipe.on_frame(clock, dir, f)
            })?;
        }
        clock = clock.max(monotonic_now());
        pipe.poll(clock, &mut |dir, f| ports[egress(dir)].send(f, &mut pool));
        for (port, ingress) in ports.iter_mut().zip(INGRESS) {
            // Frames leaving by this port travel the other direction.
            let dir = if ingress == Dir::AtoB { Dir::BtoA } else { Dir::AtoB };
            for _ in 0..port.flush(&mut pool) {
                pipe.count_tx_error(dir);
            }
        }
        if got > 0 {
            last_rx = now;
            continue; // more may be waiting: read again before sleeping
        }
        let now = monotonic_now();
        let mut timeout_ms: libc::c_int = 1000;
        // --idle-spin-us: keep polling a little after the last frame, so
        // the next frame of a busy stream does not pay for a wake-up.
        let spinning = now < last_rx + args.idle_spin || ports.iter().any(|p| p.backlogged());
        match pipe.next_wakeup() {
            _ if spinning => timeout_ms = 0,
            Some(w) if w <= now + args.spin => timeout_ms = 0,
            Some(w) => {
                if armed != Some(w) {
                    arm(tfd.as_raw_fd(), Some(w));
                    armed = Some(w);
                }
                timeout_ms = -1;
            }
            None => {}
        }
        if timeout_ms == 0 {
            continue;
        }
        // Wake for the stats file and the end of the run at the latest.
        let cap = next_stats.min(end.unwrap_or(Time::MAX)).saturating_sub(now);
        let cap_ms = (cap.nanos().div_ceil(1_000_000)).min(1000) as libc::c_int;
        if timeout_ms < 0 || timeout_ms > cap_ms {
            timeout_ms = cap_ms;
        }
        // SAFETY: events buffer is live.
        let n = unsafe { libc::epoll_wait(ep.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, timeout_ms) };
        for e in events.iter().take(n.max(0) as usize) {
            if e.u64 == 2 {
                let mut buf = [0u8; 8];
                // SAFETY: reading the expiration count clears readiness.
                unsafe { libc::read(tfd.as_raw_fd(), buf.as_mut_ptr() as *mut _, 8) };
                armed = None;
            } else if e.events & libc::EPOLLERR as u32 != 0 {
                // The interface went down or away (a ring port never sees
                // the error in a receive call): stop, as recvmmsg would.
                if let Some(err) = socket::take_error(ports[e.u64 as usize].poll_fd()) {
                    return Err(err);
                }
            }
        }
    }
    collect_losses(pipe, &mut ports);
    let j = json(pipe);
    if let Some(p) = &args.stats_file {
        write_stats_file(p, &j);
    }
    Ok(j)
}

/// Arms the timerfd at absolute monotonic time `at`.
fn arm(tfd: RawFd, at: Option<Time>) {
    let ns = at.map_or(0, |t| t.nanos().max(1));
    let spec = libc::itimerspec {
        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
        it_value: libc::timespec { tv_sec: (ns / 1_000_000_000) as i64, tv_nsec: (ns % 1_000_000_000) as i64 },
    };
    // SAFETY: valid itimerspec.
    unsafe { libc::timerfd_settime(tfd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrival_times_come_from_the_kernel_stamp_within_floor_and_present() {
        let c = ClockMap::new();
        let off = c.real_minus_mono.expect("an undisturbed sample in 100 tries");
        let now = monotonic_now();
        let real = |t: Time| (t.nanos() as i128 + off) as u64;
        let floor = now.saturating_sub(Time::from_millis(5));
        // Received 1 ms ago: that time (within the offset's precision).
        let a = c.arrival(Some(real(now.saturating_sub(Time::from_millis(1)))), now, floor);
        let want = now.saturating_sub(Time::from_millis(1));
        assert!(a.nanos().abs_diff(want.nanos()) < 50_000, "{a:?} vs {want:?}");
        // Before the floor: the floor (times never go back).
        assert_eq!(c.arrival(Some(real(now.saturating_sub(Time::from_secs(1)))), now, floor), floor);
        // In the future (a clock step): no later than the present.
        let f = c.arrival(Some(real(now + Time::from_secs(10))), now, floor);
        assert!(f >= now && f <= monotonic_now());
        // Unknown: read now, never before the call.
        let before = monotonic_now();
        let u = c.arrival(None, now, floor);
        assert!(u >= before && u <= monotonic_now());
    }
}
