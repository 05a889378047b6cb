//! The Linux side: AF_PACKET raw sockets and the event loop.
//!
//! * One `AF_PACKET`/`SOCK_RAW` socket per interface, bound to it,
//!   promiscuous (the bridge forwards frames addressed to the hosts behind
//!   it, not to itself), with `PACKET_IGNORE_OUTGOING` so a socket does not
//!   read back the frames the bridge itself sends out of that interface
//!   (a loop otherwise), and `PACKET_QDISC_BYPASS` (the emulated queue is
//!   ours; the interface's qdisc would be a second, hidden one).
//! * Batched I/O: `recvmmsg` / `sendmmsg` move up to `--batch` frames per
//!   system call.
//! * One thread, one `epoll` set: both sockets and a `timerfd`. Departures
//!   are timed by the pipeline's departure clock; the loop arms the timerfd
//!   (absolute `CLOCK_MONOTONIC`, timer slack set to 1 ns with `prctl` so the
//!   kernel does not defer it by its default 50 us) for the next departure,
//!   and busy-polls instead when that departure is closer than `--spin-us`:
//!   a timer interrupt and wake-up cost roughly 5-20 us, about the
//!   serialization time of one 1500-byte frame at 1 Gb/s (12 us), so at high
//!   rates sleeping would add jitter and lower the throughput; at low rates
//!   the loop sleeps and costs nothing.
//!
//! VLAN: the kernel strips an 802.1Q tag into metadata on receive when the
//! interface offloads VLAN (`rxvlan`); the testbed turns that off with
//! `ethtool -K IF rxvlan off txvlan off` so tags reach the bridge and go out
//! again inside the frame.

use crate::cli::Args;
use crate::pipeline::{Dir, Pipeline, WindowHook};
use netreturn_base::Time;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_OUTGOING: u8 = 4;
/// Receive buffers are this large so that even an offload aggregate
/// (up to 64 KiB) arrives whole and is passed on untouched.
const RX_BUF: usize = 65536 + 64;
/// Frames up to this size live in recycled buffers.
const POOL_CAP: usize = 2048;

/// `CLOCK_MONOTONIC` as a [`Time`].
pub fn monotonic_now() -> Time {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    Time(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: passes a pointer to a live c_int and its size.
    cvt(unsafe {
        libc::setsockopt(fd, level, name, &v as *const _ as *const libc::c_void, std::mem::size_of::<libc::c_int>() as u32)
    })
    .map(|_| ())
}

/// A raw packet socket bound to one interface.
pub struct PacketSocket {
    fd: OwnedFd,
    pub ifname: String,
}

impl PacketSocket {
    pub fn open(ifname: &str) -> io::Result<PacketSocket> {
        let cname = CString::new(ifname).map_err(|_| io::Error::other("bad interface name"))?;
        // SAFETY: plain C calls with valid arguments; the fd is owned below.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::other(format!("no interface '{ifname}'")));
        }
        // Protocol 0: receive nothing until bound, so no frame of another
        // interface slips in between socket() and bind().
        let raw = cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex as i32;
        cvt(unsafe {
            libc::bind(raw, &sll as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32)
        })?;
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex as i32;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        cvt(unsafe {
            libc::setsockopt(
                raw,
                libc::SOL_PACKET,
                libc::PACKET_ADD_MEMBERSHIP,
                &mreq as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::packet_mreq>() as u32,
            )
        })?;
        // Linux >= 4.20; without it, outgoing frames are filtered by
        // pkttype in recv_batch anyway.
        let _ = setsockopt_int(raw, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
        let _ = setsockopt_int(raw, libc::SOL_PACKET, PACKET_QDISC_BYPASS, 1);
        // Large buffers absorb bursts while the loop is busy elsewhere;
        // the FORCE variants ignore rmem_max (we are root).
        let big = 32 << 20;
        if setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, big).is_err() {
            let _ = setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, big);
        }
        if setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, big).is_err() {
            let _ = setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, big);
        }
        let s = PacketSocket { fd, ifname: ifname.to_string() };
        s.drain();
        Ok(s)
    }

    fn drain(&self) {
        let mut b = [0u8; 2048];
        // SAFETY: valid buffer.
        while unsafe { libc::recv(self.fd.as_raw_fd(), b.as_mut_ptr() as *mut _, b.len(), libc::MSG_DONTWAIT) } > 0 {}
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Buffers for one `recvmmsg` batch.
pub struct RxBatch {
    bufs: Vec<Vec<u8>>,
    iovs: Vec<libc::iovec>,
    addrs: Vec<libc::sockaddr_ll>,
    hdrs: Vec<libc::mmsghdr>,
}

impl RxBatch {
    pub fn new(n: usize) -> RxBatch {
        let bufs: Vec<Vec<u8>> = (0..n).map(|_| vec![0u8; RX_BUF]).collect();
        RxBatch {
            bufs,
            iovs: Vec::with_capacity(n),
            addrs: vec![unsafe { std::mem::zeroed() }; n],
            hdrs: Vec::with_capacity(n),
        }
    }

    /// Receives up to a batch without blocking; calls `f` with each frame
    /// sent to (not by) this host's interface.
    pub fn recv(&mut self, sock: &PacketSocket, mut f: impl FnMut(&[u8])) -> io::Result<usize> {
        let n = self.bufs.len();
        self.iovs.clear();
        self.hdrs.clear();
        for i in 0..n {
            self.iovs.push(libc::iovec { iov_base: self.bufs[i].as_mut_ptr() as *mut _, iov_len: RX_BUF });
        }
        for i in 0..n {
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = &mut self.addrs[i] as *mut _ as *mut libc::c_void;
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            h.msg_hdr.msg_iov = &mut self.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            self.hdrs.push(h);
        }
        // SAFETY: every header points at live buffers owned by self.
        let r = unsafe {
            libc::recvmmsg(sock.raw(), self.hdrs.as_mut_ptr(), n as u32, libc::MSG_DONTWAIT, std::ptr::null_mut())
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(0),
                _ => Err(e),
            };
        }
        for i in 0..r as usize {
            if self.addrs[i].sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            let len = (self.hdrs[i].msg_len as usize).min(RX_BUF);
            f(&self.bufs[i][..len]);
        }
        Ok(r as usize)
    }
}

/// Sends `frames` out of `sock` with `sendmmsg`, in order; returns how many
/// the kernel refused (they are dropped: counted as tx errors).
pub fn send_batch(sock: &PacketSocket, frames: &[Vec<u8>], batch: usize) -> usize {
    let mut failed = 0;
    let mut iovs: Vec<libc::iovec> = Vec::with_capacity(batch);
    let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(batch);
    let mut i = 0;
    while i < frames.len() {
        let end = (i + batch).min(frames.len());
        iovs.clear();
        hdrs.clear();
        for f in &frames[i..end] {
            iovs.push(libc::iovec { iov_base: f.as_ptr() as *mut _, iov_len: f.len() });
        }
        for k in 0..end - i {
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_iov = &mut iovs[k];
            h.msg_hdr.msg_iovlen = 1;
            hdrs.push(h);
        }
        // SAFETY: headers point at live frames; the socket is bound, so no
        // address is needed.
        let r = unsafe { libc::sendmmsg(sock.raw(), hdrs.as_mut_ptr(), hdrs.len() as u32, 0) };
        if r < 0 {
            let e = io::Error::last_os_error().raw_os_error();
            if e == Some(libc::EINTR) {
                continue;
            }
            // The first frame was refused (ENOBUFS when the peer's backlog
            // is full, EMSGSIZE above the MTU...): drop it, go on.
            failed += 1;
            i += 1;
        } else {
            i += r as usize;
        }
    }
    failed
}

static STOP: AtomicBool = AtomicBool::new(false);
static DUMP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}
extern "C" fn on_dump(_: libc::c_int) {
    DUMP.store(true, Ordering::Relaxed);
}

fn install_signals() {
    for (sig, h) in [
        (libc::SIGINT, on_stop as extern "C" fn(libc::c_int)),
        (libc::SIGTERM, on_stop),
        (libc::SIGUSR1, on_dump),
    ] {
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

fn write_stats_file(path: &str, json: &str) {
    let tmp = format!("{path}.tmp");
    if std::fs::write(&tmp, format!("{json}\n")).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

/// Runs the bridge until SIGINT/SIGTERM or `args.duration`; returns the
/// final counters as JSON. `extra` adds fields to every JSON dump (the
/// controller's own statistics, say).
pub fn run<H: WindowHook>(
    args: &Args,
    pipe: &mut Pipeline<H>,
    extra: &dyn Fn(&Pipeline<H>) -> Vec<(&'static str, String)>,
) -> io::Result<String> {
    let a = PacketSocket::open(&args.iface_a)?;
    let b = PacketSocket::open(&args.iface_b)?;
    install_signals();
    // SAFETY: plain syscalls; fds owned below.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    let ep = unsafe { OwnedFd::from_raw_fd(cvt(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
    let tfd = unsafe {
        OwnedFd::from_raw_fd(cvt(libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC))?)
    };
    for (fd, tag) in [(a.raw(), 0u64), (b.raw(), 1), (tfd.as_raw_fd(), 2)] {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag };
        cvt(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
    }
    let mut rx = RxBatch::new(args.batch);
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut out: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
    let start = monotonic_now();
    let end = args.duration.map(|d| start + d);
    let mut next_stats = start;
    let mut armed: Option<Time> = None;
    let mut last_rx = start;
    let json = |p: &Pipeline<H>| p.stats().to_json(&extra(p));

    while !STOP.load(Ordering::Relaxed) {
        let now = monotonic_now();
        if end.is_some_and(|e| now >= e) {
            break;
        }
        if DUMP.swap(false, Ordering::Relaxed) {
            eprintln!("{}", json(pipe));
        }
        if now >= next_stats {
            if let Some(p) = &args.stats_file {
                write_stats_file(p, &json(pipe));
            }
            next_stats = now + Time::from_secs(1);
        }
        let mut got = 0;
        for (sock, dir) in [(&a, Dir::AtoB), (&b, Dir::BtoA)] {
            got += rx.recv(sock, |f| {
                let mut v = if f.len() <= POOL_CAP {
                    pool.pop().unwrap_or_else(|| Vec::with_capacity(POOL_CAP))
                } else {
                    Vec::with_capacity(f.len())
                };
                v.extend_from_slice(f);
                pipe.on_frame(now, dir, v);
            })?;
        }
        pipe.poll(monotonic_now(), &mut |dir, f| out[dir as usize].push(f));
        for (i, (sock, dir)) in [(&b, Dir::AtoB), (&a, Dir::BtoA)].into_iter().enumerate() {
            debug_assert_eq!(dir as usize, i);
            if out[i].is_empty() {
                continue;
            }
            let failed = send_batch(sock, &out[i], args.batch);
            for _ in 0..failed {
                pipe.count_tx_error(dir);
            }
            for mut f in out[i].drain(..) {
                if f.capacity() == POOL_CAP && pool.len() < 4096 {
                    f.clear();
                    pool.push(f);
                }
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
        let spinning = now < last_rx + args.idle_spin;
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
            }
        }
    }
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
