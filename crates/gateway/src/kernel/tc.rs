//! What the kernel datapath sets up around its programs, and takes down
//! again: the bridge that forwards between A and B, and the shaper of each
//! direction (`htb` at the line rate over a byte or packet FIFO, the
//! bottleneck's queue), whose backlog the controllers read through
//! rtnetlink at each tick.

use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;

use netreturn_base::Rate;

/// Runs `ip` / `tc`; the error names the command and what it printed.
pub fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e} (is iproute2 installed?)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{cmd} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// The interface's index, or an error naming it.
pub fn ifindex(name: &str) -> Result<u32, String> {
    let c = std::ffi::CString::new(name).map_err(|_| format!("interface {name:?}: not a name"))?;
    // SAFETY: a NUL-terminated string.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        // Worded as the packet datapath's (`sys::socket`).
        0 => Err(format!("no interface '{name}'")),
        i => Ok(i),
    }
}

/// Whether `iface` is already a bridge port (its `master` link exists).
pub fn has_master(iface: &str) -> bool {
    std::path::Path::new(&format!("/sys/class/net/{iface}/master")).exists()
}

/// The per-namespace switches that hand bridged frames to netfilter
/// (`br_netfilter`, loaded on many hosts, e.g. by Docker). On, the bridge
/// validates IPv4 headers and drops malformed ones, where a gateway must
/// pass what it does not understand (SPEC.md section 1 rule 6); a
/// per-bridge option can only add to them, so they are turned off in the
/// gateway's namespace while it runs.
const BR_NETFILTER: [&str; 3] = [
    "/proc/sys/net/bridge/bridge-nf-call-iptables",
    "/proc/sys/net/bridge/bridge-nf-call-ip6tables",
    "/proc/sys/net/bridge/bridge-nf-call-arptables",
];

/// A Linux bridge joining A and B, made by this process and deleted on
/// drop (the ports go back to being plain interfaces, the netfilter
/// switches to what they were).
pub struct Bridge {
    name: String,
    restore: Vec<&'static str>,
}

impl Bridge {
    pub fn create(a: &str, b: &str) -> Result<Bridge, String> {
        let name = format!("nrk{}", std::process::id() % 1_000_000);
        run("ip", &["link", "add", &name, "type", "bridge"])?;
        let mut br = Bridge { name, restore: Vec::new() };
        for path in BR_NETFILTER {
            if std::fs::read_to_string(path).is_ok_and(|v| v.trim() == "1") {
                std::fs::write(path, "0").map_err(|e| format!("{path}: {e}"))?;
                br.restore.push(path);
            }
        }
        for dev in [a, b] {
            run("ip", &["link", "set", "dev", dev, "master", &br.name])?;
            run("ip", &["link", "set", "dev", dev, "up"])?;
        }
        run("ip", &["link", "set", "dev", &br.name, "up"])?;
        Ok(br)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = run("ip", &["link", "del", &self.name]);
        for path in &self.restore {
            let _ = std::fs::write(path, "1");
        }
    }
}

/// The FIFO under the shaper: its limit in bytes (`bfifo`) or in packets
/// (`pfifo`), as the link's buffer was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fifo {
    Bytes(u64),
    Packets(u64),
}

/// The handle of the FIFO under a [`Shaper`]: `10:`.
pub const FIFO_HANDLE: u32 = 0x0010_0000;

/// `htb` at `rate` on the egress of one interface with one class, over a
/// FIFO of the link's buffer: the bottleneck queue the kernel runs. The
/// root qdisc is deleted on drop (the interface's default comes back).
pub struct Shaper {
    iface: String,
    pub ifindex: u32,
}

impl Shaper {
    pub fn create(iface: &str, rate: Rate, fifo: Fifo) -> Result<Shaper, String> {
        let ifindex = ifindex(iface)?;
        let bits = format!("{}bit", rate.bits_per_sec());
        run("tc", &["qdisc", "replace", "dev", iface, "root", "handle", "1:", "htb", "default", "1"])?;
        let sh = Shaper { iface: iface.to_string(), ifindex };
        run(
            "tc",
            &["class", "add", "dev", iface, "parent", "1:", "classid", "1:1", "htb", "rate", &bits, "ceil", &bits],
        )?;
        let (kind, limit) = match fifo {
            Fifo::Bytes(b) => ("bfifo", b),
            Fifo::Packets(p) => ("pfifo", p),
        };
        run(
            "tc",
            &["qdisc", "add", "dev", iface, "parent", "1:1", "handle", "10:", kind, "limit", &limit.to_string()],
        )?;
        Ok(sh)
    }
}

impl Drop for Shaper {
    fn drop(&mut self) {
        let _ = run("tc", &["qdisc", "del", "dev", &self.iface, "root"]);
    }
}

/// One qdisc's queue counters (`struct gnet_stats_queue`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub backlog_bytes: u32,
    pub backlog_packets: u32,
    pub drops: u32,
    /// Bytes and packets the qdisc sent (`struct gnet_stats_basic`).
    pub sent_bytes: u64,
    pub sent_packets: u64,
}

const RTM_NEWQDISC: u16 = 36;
const RTM_GETQDISC: u16 = 38;
const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;
const TCA_STATS2: u16 = 7;
const TCA_STATS_BASIC: u16 = 1;
const TCA_STATS_QUEUE: u16 = 3;
const NLM_HDR: usize = 16;
const TCMSG: usize = 20;

/// An rtnetlink socket that reads qdisc counters (one dump per call).
pub struct QdiscReader {
    fd: OwnedFd,
    buf: Vec<u8>,
    seq: u32,
}

impl QdiscReader {
    pub fn open() -> io::Result<QdiscReader> {
        // SAFETY: plain socket(2); the fd is owned at once.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(QdiscReader { fd: unsafe { OwnedFd::from_raw_fd(fd) }, buf: vec![0; 64 * 1024], seq: 0 })
    }

    /// The counters of the qdisc `handle` on interface `ifindex`, or `None`
    /// if it is not there.
    pub fn read(&mut self, ifindex: u32, handle: u32) -> io::Result<Option<QueueStats>> {
        self.seq = self.seq.wrapping_add(1);
        let mut req = [0u8; NLM_HDR + TCMSG];
        req[0..4].copy_from_slice(&((NLM_HDR + TCMSG) as u32).to_ne_bytes());
        req[4..6].copy_from_slice(&RTM_GETQDISC.to_ne_bytes());
        let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
        req[6..8].copy_from_slice(&flags.to_ne_bytes());
        req[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        // tcmsg: family AF_UNSPEC, the interface (the kernel dumps that one
        // interface's qdiscs; others are skipped below anyway).
        req[NLM_HDR + 4..NLM_HDR + 8].copy_from_slice(&(ifindex as i32).to_ne_bytes());
        // SAFETY: sending a buffer we own to the kernel (nl_pid 0).
        let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as u16;
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                req.as_ptr().cast(),
                req.len(),
                0,
                (&sa as *const libc::sockaddr_nl).cast(),
                size_of::<libc::sockaddr_nl>() as u32,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut found = None;
        loop {
            // SAFETY: receiving into a buffer we own.
            let n = unsafe { libc::recv(self.fd.as_raw_fd(), self.buf.as_mut_ptr().cast(), self.buf.len(), 0) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            match parse_dump(&self.buf[..n as usize], ifindex, handle, self.seq) {
                Parsed::More(f) => found = found.or(f),
                Parsed::Done(f) => return Ok(found.or(f)),
                Parsed::Error(e) => return Err(io::Error::from_raw_os_error(e)),
            }
        }
    }
}

enum Parsed {
    More(Option<QueueStats>),
    Done(Option<QueueStats>),
    Error(i32),
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_ne_bytes([b[i], b[i + 1]])
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Walks one datagram of an rtnetlink qdisc dump for the qdisc `handle` of
/// `ifindex`. Bounds are checked at every step: a short or odd message ends
/// the walk, never a panic.
fn parse_dump(b: &[u8], ifindex: u32, handle: u32, seq: u32) -> Parsed {
    let mut found = None;
    let mut off = 0;
    while off + NLM_HDR <= b.len() {
        let len = u32_at(b, off) as usize;
        let kind = u16_at(b, off + 4);
        if len < NLM_HDR || off + len > b.len() {
            break;
        }
        let msg_seq = u32_at(b, off + 8);
        if msg_seq == seq {
            match kind {
                NLMSG_DONE => return Parsed::Done(found),
                NLMSG_ERROR if len >= NLM_HDR + 4 => {
                    let e = u32_at(b, off + NLM_HDR) as i32;
                    if e != 0 {
                        return Parsed::Error(-e);
                    }
                }
                RTM_NEWQDISC if len >= NLM_HDR + TCMSG => {
                    let t = off + NLM_HDR;
                    if u32_at(b, t + 4) == ifindex && u32_at(b, t + 8) == handle {
                        found = Some(stats_of(&b[t + TCMSG..off + len]));
                    }
                }
                _ => {}
            }
        }
        off += (len + 3) & !3;
    }
    Parsed::More(found)
}

/// The `TCA_STATS2` counters among a qdisc message's attributes.
fn stats_of(attrs: &[u8]) -> QueueStats {
    let mut s = QueueStats::default();
    for (kind, data) in rtattrs(attrs) {
        if kind == TCA_STATS2 {
            for (k, d) in rtattrs(data) {
                if k == TCA_STATS_QUEUE && d.len() >= 12 {
                    s.backlog_packets = u32_at(d, 0);
                    s.backlog_bytes = u32_at(d, 4);
                    s.drops = u32_at(d, 8);
                } else if k == TCA_STATS_BASIC && d.len() >= 12 {
                    s.sent_bytes = u64::from_ne_bytes(d[0..8].try_into().expect("8 bytes"));
                    s.sent_packets = u32_at(d, 8) as u64;
                }
            }
        }
    }
    s
}

/// The (type, payload) of each `struct rtattr` in `b` (4-byte aligned).
fn rtattrs(b: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut off = 0;
    std::iter::from_fn(move || {
        if off + 4 > b.len() {
            return None;
        }
        let len = u16_at(b, off) as usize;
        if len < 4 || off + len > b.len() {
            return None;
        }
        let item = (u16_at(b, off + 2) & 0x3fff, &b[off + 4..off + len]);
        off += (len + 3) & !3;
        Some(item)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(kind: u16, data: &[u8]) -> Vec<u8> {
        let mut v = ((4 + data.len()) as u16).to_ne_bytes().to_vec();
        v.extend(kind.to_ne_bytes());
        v.extend(data);
        while !v.len().is_multiple_of(4) {
            v.push(0);
        }
        v
    }

    fn qdisc_msg(seq: u32, ifindex: u32, handle: u32, backlog: u32) -> Vec<u8> {
        let mut q = Vec::new();
        for x in [3u32, backlog, 9, 0, 0] {
            q.extend(x.to_ne_bytes());
        }
        let mut basic = 1234u64.to_ne_bytes().to_vec();
        basic.extend(5u32.to_ne_bytes());
        basic.extend(0u32.to_ne_bytes());
        let stats2 = [attr(TCA_STATS_BASIC, &basic), attr(TCA_STATS_QUEUE, &q)].concat();
        let mut tcmsg = vec![0u8; TCMSG];
        tcmsg[4..8].copy_from_slice(&ifindex.to_ne_bytes());
        tcmsg[8..12].copy_from_slice(&handle.to_ne_bytes());
        let body = [tcmsg, attr(1, b"bfifo\0"), attr(TCA_STATS2, &stats2)].concat();
        let mut m = ((NLM_HDR + body.len()) as u32).to_ne_bytes().to_vec();
        m.extend(RTM_NEWQDISC.to_ne_bytes());
        m.extend(0u16.to_ne_bytes());
        m.extend(seq.to_ne_bytes());
        m.extend(0u32.to_ne_bytes());
        m.extend(body);
        m
    }

    #[test]
    fn the_fifo_under_the_shaper_is_found_among_the_dumped_qdiscs() {
        let b = [qdisc_msg(7, 4, 0x0001_0000, 1), qdisc_msg(7, 4, FIFO_HANDLE, 4500), qdisc_msg(7, 5, FIFO_HANDLE, 1)]
            .concat();
        let Parsed::More(Some(s)) = parse_dump(&b, 4, FIFO_HANDLE, 7) else { panic!("not found") };
        assert_eq!((s.backlog_bytes, s.backlog_packets, s.drops), (4500, 3, 9));
        assert_eq!((s.sent_bytes, s.sent_packets), (1234, 5));
        // Another dump's messages are not this one's.
        assert!(matches!(parse_dump(&b, 4, FIFO_HANDLE, 8), Parsed::More(None)));
    }

    #[test]
    fn a_truncated_dump_ends_the_walk_without_a_panic() {
        let b = qdisc_msg(7, 4, FIFO_HANDLE, 4500);
        for cut in 0..b.len() {
            let _ = parse_dump(&b[..cut], 4, FIFO_HANDLE, 7);
        }
    }
}
