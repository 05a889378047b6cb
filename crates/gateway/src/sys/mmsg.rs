//! The fallback port (`--io mmsg`): one socket per interface, frames copied
//! in and out with batched `recvmmsg` / `sendmmsg`. For kernels or sandboxes
//! without `PACKET_MMAP` rings; slower (a `msghdr` and a socket-queue skb per
//! frame), otherwise the same: `PACKET_AUXDATA` gives each frame's VLAN tag,
//! which the kernel always takes out of the frame on receive, so that it is
//! put back as the ring port does.

use super::ring::copy_frame;
use super::socket::{set_buffer, setsockopt_int, PacketSocket, PACKET_OUTGOING, SOL_PACKET};
use super::{Pool, Port};
use std::io;
use std::os::fd::RawFd;

/// Receive buffers are this large so that even an offload aggregate
/// (up to 64 KiB) arrives whole and is passed on untouched.
const RX_BUF: usize = 65536 + 64;
const PACKET_AUXDATA: libc::c_int = 8;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
/// Room for one `cmsghdr` carrying a `tpacket_auxdata`.
const CMSG_BUF: usize = 64;

/// `struct tpacket_auxdata`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Auxdata {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
}

/// The VLAN tag in a message's `PACKET_AUXDATA`, if any.
fn vlan_of(h: &libc::msghdr) -> Option<(u16, u16)> {
    // SAFETY: the control buffer was filled by the kernel up to
    // msg_controllen; the CMSG macros stay within it.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == SOL_PACKET && (*c).cmsg_type == PACKET_AUXDATA {
                let a = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const Auxdata);
                if a.tp_status & TP_STATUS_VLAN_VALID == 0 {
                    return None;
                }
                let tpid = if a.tp_status & TP_STATUS_VLAN_TPID_VALID != 0 { a.tp_vlan_tpid } else { 0x8100 };
                return Some((tpid, a.tp_vlan_tci));
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
        None
    }
}

pub struct MmsgPort {
    sock: PacketSocket,
    bufs: Vec<Vec<u8>>,
    iovs: Vec<libc::iovec>,
    addrs: Vec<libc::sockaddr_ll>,
    ctls: Vec<[u64; CMSG_BUF / 8]>,
    hdrs: Vec<libc::mmsghdr>,
    out: Vec<Vec<u8>>,
    batch: usize,
}

// SAFETY: the iovec / mmsghdr pointers only ever point into this value's
// own buffers, and are rebuilt before each use.
unsafe impl Send for MmsgPort {}

impl MmsgPort {
    pub fn open(ifname: &str, batch: usize) -> io::Result<MmsgPort> {
        let sock = PacketSocket::new(ifname)?;
        sock.bypass_qdisc();
        // Large buffers absorb bursts while the loop is busy elsewhere.
        set_buffer(sock.raw(), false, 32 << 20);
        set_buffer(sock.raw(), true, 32 << 20);
        setsockopt_int(sock.raw(), SOL_PACKET, PACKET_AUXDATA, 1)?;
        sock.bind(true)?;
        Ok(MmsgPort {
            sock,
            bufs: (0..batch).map(|_| vec![0u8; RX_BUF]).collect(),
            iovs: Vec::with_capacity(batch),
            addrs: vec![unsafe { std::mem::zeroed() }; batch],
            ctls: vec![[0u64; CMSG_BUF / 8]; batch],
            hdrs: Vec::with_capacity(batch),
            out: Vec::new(),
            batch,
        })
    }
}

impl Port for MmsgPort {
    fn recv(&mut self, max: usize, pool: &mut Pool, f: &mut impl FnMut(Vec<u8>, Option<u64>)) -> io::Result<usize> {
        let n = max.min(self.bufs.len());
        self.iovs.clear();
        self.hdrs.clear();
        for b in &mut self.bufs[..n] {
            self.iovs.push(libc::iovec { iov_base: b.as_mut_ptr() as *mut _, iov_len: RX_BUF });
        }
        for i in 0..n {
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = &mut self.addrs[i] as *mut _ as *mut libc::c_void;
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            h.msg_hdr.msg_iov = &mut self.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = self.ctls[i].as_mut_ptr() as *mut libc::c_void;
            h.msg_hdr.msg_controllen = CMSG_BUF;
            self.hdrs.push(h);
        }
        // SAFETY: every header points at live buffers owned by self.
        let r = unsafe {
            libc::recvmmsg(self.sock.raw(), self.hdrs.as_mut_ptr(), n as u32, libc::MSG_DONTWAIT, std::ptr::null_mut())
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
            let mut v = pool.get(len + 4);
            copy_frame(&mut v, &self.bufs[i][..len], vlan_of(&self.hdrs[i].msg_hdr));
            f(v, None);
        }
        Ok(r as usize)
    }

    fn send(&mut self, frame: Vec<u8>, _: &mut Pool) {
        self.out.push(frame);
    }

    fn flush(&mut self, pool: &mut Pool) -> u64 {
        let mut failed = 0;
        let mut iovs: Vec<libc::iovec> = Vec::with_capacity(self.batch);
        let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(self.batch);
        let mut i = 0;
        while i < self.out.len() {
            let end = (i + self.batch).min(self.out.len());
            iovs.clear();
            hdrs.clear();
            for f in &self.out[i..end] {
                iovs.push(libc::iovec { iov_base: f.as_ptr() as *mut _, iov_len: f.len() });
            }
            for iov in iovs.iter_mut() {
                let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                h.msg_hdr.msg_iov = iov;
                h.msg_hdr.msg_iovlen = 1;
                hdrs.push(h);
            }
            // SAFETY: headers point at live frames; the socket is bound, so
            // no address is needed.
            let r = unsafe { libc::sendmmsg(self.sock.raw(), hdrs.as_mut_ptr(), hdrs.len() as u32, 0) };
            if r < 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // The first frame was refused (ENOBUFS when the peer's
                // backlog is full, EMSGSIZE above the MTU...): drop it.
                failed += 1;
                i += 1;
            } else {
                i += r as usize;
            }
        }
        for f in self.out.drain(..) {
            pool.put(f);
        }
        failed
    }

    fn backlogged(&self) -> bool {
        false
    }

    fn take_rx_losses(&mut self) -> (u64, u64) {
        (0, self.sock.take_drops())
    }

    fn poll_fd(&self) -> RawFd {
        self.sock.raw()
    }
}
