//! The default port: `PACKET_MMAP` rings shared with the kernel
//! (`TPACKET_V2`), so frames move without a system call each.
//!
//! * **Receive**: a `PACKET_RX_RING` on a socket bound to the interface.
//!   The kernel writes each frame into the next free slot (in the softirq
//!   of whoever transmitted it into the veth) and flips the slot's status
//!   to `TP_STATUS_USER`; the bridge reads slots in ring order. No
//!   `recvmmsg`, no socket queue, no per-frame `msghdr`; each frame is
//!   copied into a pooled buffer and its slot handed back at once. The
//!   slot's header also carries the time the kernel received the frame,
//!   which becomes its arrival time. `TPACKET_V2` rather than V3: V3
//!   hands over whole blocks, which the kernel closes only when full or when
//!   its retire timer fires (milliseconds), a latency a link emulator cannot
//!   have; V2 hands over each frame the moment it is written.
//!   A frame too large for a slot (an offload aggregate) comes with
//!   `TP_STATUS_COPY`: the kernel queued a full copy on the socket
//!   (`PACKET_COPY_THRESH`), read with `recv`. A VLAN tag the kernel took
//!   out of the frame (`rxvlan` offload) is put back where it was.
//! * **Transmit**: a `PACKET_TX_RING` on a second, send-only socket. The
//!   bridge copies a frame into the next free slot, marks it
//!   `TP_STATUS_SEND_REQUEST`, and one `send(fd, NULL, 0)` per loop turn has
//!   the kernel transmit every pending slot. The kernel would normally attach
//!   the slot's pages to the skb without copying; with veth that skb is
//!   delivered locally, and the slot is handed back to us when the receiving
//!   IP layer orphans the skb, long before its data is read: rewriting the
//!   slot would then change bytes a receiving socket still holds. So the
//!   socket has `PACKET_VNET_HDR` and every frame a virtio-net header whose
//!   `hdr_len` is the whole frame: the kernel copies it into the skb's linear
//!   area (one copy, as `sendmsg` does) and keeps no reference to the slot.
//!   A slot is busy until the skb made from it is freed (by the receiving
//!   host), so the ring's size bounds the frames in flight towards a slow
//!   receiver; when none is free, frames wait in order in an overflow queue
//!   (back-pressure, as from a NIC's transmit ring).
//!   A frame the kernel refuses (`ENOBUFS`: the receiving veth's backlog is
//!   full) is dropped and counted, as `sendmmsg` did: it is marked
//!   malformed (`hdr_len` beyond its length) and, with `PACKET_LOSS`, the
//!   kernel skips it on the next `send`. A socket buffer that is full
//!   (`EAGAIN`) only delays the pending slots to the next turn.

use super::socket::{set_buffer, setsockopt, setsockopt_int, PacketSocket};
use super::socket::{PACKET_COPY_THRESH, PACKET_LOSS, PACKET_OUTGOING, PACKET_RX_RING, PACKET_TX_RING};
use super::socket::{PACKET_VERSION, PACKET_VNET_HDR, SOL_PACKET};
use super::{Pool, Port};
use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_COPY: u32 = 1 << 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
/// `TPACKET_ALIGN(sizeof(struct tpacket2_hdr))`: where the `sockaddr_ll`
/// of a received frame starts, and where a transmitted frame's data starts.
const HDR2: usize = 32;
/// `struct virtio_net_hdr`.
const VNET_HDR: usize = 10;
const ETH_HLEN: usize = 14;
/// Memory of one ring, at most.
pub const MAX_RING_BYTES: usize = 32 << 20;
/// Frames waiting for a free transmit slot, at most; beyond, dropped.
const OVERFLOW_MAX: usize = 8192;

/// `struct tpacket2_hdr` (linux/if_packet.h).
#[repr(C)]
struct Tpacket2Hdr {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_sec: u32,
    tp_nsec: u32,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
    tp_padding: [u8; 4],
}

/// `struct tpacket_req`.
#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

/// Geometry of a ring: `frame_nr` slots of `frame_size` bytes (a power of
/// two, at least 2048), packed into blocks of 16 slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub frame_size: usize,
    pub frame_nr: usize,
    pub frames_per_block: usize,
}

impl Geometry {
    /// Slots large enough for `max_frame` bytes plus the ring's own headers
    /// (at most 96 bytes in front of a received frame), `frames` of them
    /// (rounded up to whole blocks), but no more than [`MAX_RING_BYTES`] in
    /// all (jumbo frames get fewer slots).
    pub fn new(max_frame: usize, frames: usize) -> Geometry {
        let frame_size = (max_frame + 128).next_power_of_two().max(2048);
        let per = 16;
        let frames = frames.min(MAX_RING_BYTES / frame_size);
        let frame_nr = frames.max(per).div_ceil(per) * per;
        Geometry { frame_size, frame_nr, frames_per_block: per }
    }

    pub fn block_size(&self) -> usize {
        self.frame_size * self.frames_per_block
    }

    pub fn bytes(&self) -> usize {
        self.frame_size * self.frame_nr
    }

    /// Byte offset of slot `i` in the mapping.
    pub fn offset(&self, i: usize) -> usize {
        (i / self.frames_per_block) * self.block_size() + (i % self.frames_per_block) * self.frame_size
    }

    /// The largest frame a transmit slot holds (after the slot header and
    /// the virtio-net header; `hdr_len` is 16 bits).
    pub fn tx_capacity(&self) -> usize {
        (self.frame_size - HDR2 - VNET_HDR).min(u16::MAX as usize)
    }
}

/// A ring mapped into our address space.
struct Ring {
    map: *mut u8,
    geo: Geometry,
}

impl Ring {
    /// Creates the ring `opt` (`PACKET_RX_RING` or `PACKET_TX_RING`) on
    /// `fd` and maps it.
    fn new(fd: RawFd, opt: libc::c_int, geo: Geometry) -> io::Result<Ring> {
        let req = TpacketReq {
            block_size: geo.block_size() as u32,
            block_nr: (geo.frame_nr / geo.frames_per_block) as u32,
            frame_size: geo.frame_size as u32,
            frame_nr: geo.frame_nr as u32,
        };
        setsockopt(fd, SOL_PACKET, opt, &req)?;
        // SAFETY: maps the ring just created on fd; unmapped in Drop.
        let map = unsafe {
            libc::mmap(std::ptr::null_mut(), geo.bytes(), libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Ring { map: map as *mut u8, geo })
    }

    fn slot(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.geo.frame_nr);
        // SAFETY: offset(i) + frame_size <= bytes() for i < frame_nr.
        unsafe { self.map.add(self.geo.offset(i)) }
    }

    /// The slot's status word, shared with the kernel.
    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: tp_status is the first, 4-byte aligned field of the slot
        // header; the kernel and we access it as a 32-bit word.
        unsafe { &*(self.slot(i) as *const AtomicU32) }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new().
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.geo.bytes()) };
    }
}

/// Copies a received frame into `dst`, putting back the 802.1Q/802.1ad tag
/// the kernel removed into metadata (`vlan` = (TPID, TCI)), if any.
pub fn copy_frame(dst: &mut Vec<u8>, data: &[u8], vlan: Option<(u16, u16)>) {
    dst.clear();
    match vlan {
        Some((tpid, tci)) if data.len() >= 12 => {
            dst.extend_from_slice(&data[..12]);
            dst.extend_from_slice(&tpid.to_be_bytes());
            dst.extend_from_slice(&tci.to_be_bytes());
            dst.extend_from_slice(&data[12..]);
        }
        _ => dst.extend_from_slice(data),
    }
}

/// One interface through a receive ring and a transmit ring.
pub struct RingPort {
    // Field order: each ring is unmapped before its socket is closed.
    rx: Ring,
    rx_sock: PacketSocket,
    rx_next: usize,
    tx: Ring,
    tx_sock: PacketSocket,
    /// Next slot we write.
    tx_next: usize,
    /// Oldest slot we marked for sending that the kernel may not have
    /// taken yet; `tx_unsent` slots from there on are in that state.
    tx_kernel: usize,
    tx_unsent: usize,
    /// Frames waiting for a free slot, in order.
    overflow: VecDeque<Vec<u8>>,
    /// A whole oversize frame (`TP_STATUS_COPY`).
    big: Vec<u8>,
    truncated: u64,
    refused: u64,
}

impl RingPort {
    /// `rx_frames` and `tx_frames` slots in the receive and the transmit
    /// ring. The transmit ring is best small: its slots are written by us
    /// and read by the kernel on this CPU, and stay in cache if few; and a
    /// slot is busy until the receiving host has taken the frame (the skb is
    /// freed), so its size bounds the frames in flight to a slow receiver:
    /// beyond, frames wait in our overflow queue (back-pressure, like a
    /// NIC's transmit ring) instead of overflowing the receiver's backlog.
    pub fn open(ifname: &str, max_frame: usize, rx_frames: usize, tx_frames: usize) -> io::Result<RingPort> {
        let geo = Geometry::new(max_frame, rx_frames);
        let rx_sock = PacketSocket::new(ifname)?;
        let fd = rx_sock.raw();
        setsockopt_int(fd, SOL_PACKET, PACKET_VERSION, TPACKET_V2)?;
        // Frames too big for a slot: a full copy on the socket queue.
        setsockopt_int(fd, SOL_PACKET, PACKET_COPY_THRESH, 1)?;
        set_buffer(fd, false, 8 << 20);
        let rx = Ring::new(fd, PACKET_RX_RING, geo)?;
        // Oversize frames (which do not fit a transmit slot) leave through
        // this socket's plain send path.
        rx_sock.bypass_qdisc();
        set_buffer(fd, true, 4 << 20);
        rx_sock.bind(true)?;

        let tx_sock = PacketSocket::new(ifname)?;
        let fd = tx_sock.raw();
        setsockopt_int(fd, SOL_PACKET, PACKET_VERSION, TPACKET_V2)?;
        setsockopt_int(fd, SOL_PACKET, PACKET_VNET_HDR, 1)?;
        setsockopt_int(fd, SOL_PACKET, PACKET_LOSS, 1)?;
        tx_sock.bypass_qdisc();
        set_buffer(fd, true, 32 << 20);
        let tx = Ring::new(fd, PACKET_TX_RING, Geometry::new(max_frame, tx_frames))?;
        tx_sock.bind(false)?;
        Ok(RingPort {
            rx,
            rx_sock,
            rx_next: 0,
            tx,
            tx_sock,
            tx_next: 0,
            tx_kernel: 0,
            tx_unsent: 0,
            overflow: VecDeque::new(),
            big: vec![0u8; 65536 + 64],
            truncated: 0,
            refused: 0,
        })
    }

    fn next(&self, i: usize) -> usize {
        if i + 1 == self.tx.geo.frame_nr {
            0
        } else {
            i + 1
        }
    }

    /// Writes `frame` into the next transmit slot; false if it is not free.
    fn write_slot(&mut self, frame: &[u8]) -> bool {
        let i = self.tx_next;
        if self.tx.status(i).load(Ordering::Acquire) != TP_STATUS_AVAILABLE {
            return false;
        }
        let len = frame.len();
        debug_assert!(len <= self.tx.geo.tx_capacity());
        let p = self.tx.slot(i);
        // SAFETY: the slot is ours (AVAILABLE) and large enough
        // (len <= tx_capacity); the header fields are written before the
        // status is released to the kernel.
        unsafe {
            let h = p as *mut Tpacket2Hdr;
            (*h).tp_len = (VNET_HDR + len) as u32;
            let v = p.add(HDR2);
            // struct virtio_net_hdr: flags, gso_type, hdr_len, gso_size,
            // csum_start, csum_offset (little-endian on every host the
            // kernel calls "virtio little endian" for packet sockets).
            std::ptr::write_bytes(v, 0, VNET_HDR);
            std::ptr::copy_nonoverlapping((len as u16).to_le_bytes().as_ptr(), v.add(2), 2);
            std::ptr::copy_nonoverlapping(frame.as_ptr(), v.add(VNET_HDR), len);
        }
        self.tx.status(i).store(TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.tx_next = self.next(i);
        self.tx_unsent += 1;
        true
    }

    /// Makes the kernel skip the slot at its head: `hdr_len` beyond the
    /// frame is malformed, and `PACKET_LOSS` drops malformed slots.
    fn poison_head(&mut self) {
        let p = self.tx.slot(self.tx_kernel);
        // SAFETY: the slot is SEND_REQUEST and the kernel is not inside
        // send() (single thread): no one else touches it now.
        unsafe { std::ptr::copy_nonoverlapping(u16::MAX.to_le_bytes().as_ptr(), p.add(HDR2 + 2), 2) };
        std::sync::atomic::fence(Ordering::Release);
    }

    /// Steps over the slots the kernel has taken.
    fn reap(&mut self) {
        while self.tx_unsent > 0 && self.tx.status(self.tx_kernel).load(Ordering::Acquire) != TP_STATUS_SEND_REQUEST {
            self.tx_kernel = self.next(self.tx_kernel);
            self.tx_unsent -= 1;
        }
    }

    /// Has the kernel transmit the pending slots.
    fn kick(&mut self) {
        let mut tries = self.tx_unsent + 1;
        while self.tx_unsent > 0 && tries > 0 {
            tries -= 1;
            // SAFETY: a NULL, zero-length send on a TX-ring socket transmits
            // the ring's pending slots.
            let r = unsafe { libc::send(self.tx_sock.raw(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
            let err = if r < 0 { io::Error::last_os_error().raw_os_error() } else { None };
            self.reap();
            match err {
                None => break,
                Some(libc::EINTR) => continue,
                // Socket send buffer full: the rest goes next turn.
                Some(libc::EAGAIN) => break,
                Some(_) if self.tx_unsent > 0 => {
                    // The head slot was refused (ENOBUFS: the peer's
                    // backlog is full; EMSGSIZE...): drop it, go on.
                    self.poison_head();
                    self.refused += 1;
                }
                Some(_) => break,
            }
        }
    }

    /// Consumes `frame` (into a slot, or sent or refused when it is too big
    /// or too small for a slot); false if no slot is free.
    fn place(&mut self, frame: &[u8]) -> bool {
        if frame.len() < ETH_HLEN {
            // The kernel refuses a frame without an Ethernet header.
            self.refused += 1;
            return true;
        }
        if frame.len() > self.tx.geo.tx_capacity() {
            // Rare (offload aggregates): after what is in the ring.
            self.kick();
            if self.rx_sock.send_one(frame).is_err() {
                self.refused += 1;
            }
            return true;
        }
        self.write_slot(frame)
    }
}

impl Port for RingPort {
    fn recv(&mut self, max: usize, pool: &mut Pool, f: &mut impl FnMut(Vec<u8>, Option<u64>)) -> io::Result<usize> {
        let mut n = 0;
        while n < max {
            let i = self.rx_next;
            let status = self.rx.status(i).load(Ordering::Acquire);
            if status & TP_STATUS_USER == 0 {
                break;
            }
            let p = self.rx.slot(i);
            // SAFETY: the slot belongs to us until its status is set back
            // to TP_STATUS_KERNEL; the kernel wrote the header, the
            // sockaddr_ll right after it, and tp_mac + tp_snaplen bytes.
            let (h, pkttype) =
                unsafe { (&*(p as *const Tpacket2Hdr), (*(p.add(HDR2) as *const libc::sockaddr_ll)).sll_pkttype) };
            let (len, snap, mac) = (h.tp_len as usize, h.tp_snaplen as usize, h.tp_mac as usize);
            // When tpacket_rcv wrote the slot (CLOCK_REALTIME).
            let at = Some(h.tp_sec as u64 * 1_000_000_000 + h.tp_nsec as u64);
            let vlan = (status & TP_STATUS_VLAN_VALID != 0).then(|| {
                let tpid = if status & TP_STATUS_VLAN_TPID_VALID != 0 { h.tp_vlan_tpid } else { 0x8100 };
                (tpid, h.tp_vlan_tci)
            });
            if pkttype == PACKET_OUTGOING {
                // Not ours to forward (filtered by PACKET_IGNORE_OUTGOING
                // already on Linux >= 4.20).
            } else if status & TP_STATUS_COPY != 0 {
                // SAFETY: valid buffer.
                let r = unsafe {
                    libc::recv(self.rx_sock.raw(), self.big.as_mut_ptr() as *mut _, self.big.len(), libc::MSG_DONTWAIT)
                };
                if r as usize == len {
                    let mut v = pool.get(len + 4);
                    copy_frame(&mut v, &self.big[..len], vlan);
                    f(v, at);
                } else {
                    self.truncated += 1;
                }
            } else if snap < len || mac + snap > self.rx.geo.frame_size {
                self.truncated += 1;
            } else {
                // SAFETY: checked to lie within the slot.
                let data = unsafe { std::slice::from_raw_parts(p.add(mac), snap) };
                let mut v = pool.get(snap + 4);
                copy_frame(&mut v, data, vlan);
                f(v, at);
            }
            self.rx.status(i).store(TP_STATUS_KERNEL, Ordering::Release);
            self.rx_next = if i + 1 == self.rx.geo.frame_nr { 0 } else { i + 1 };
            n += 1;
        }
        Ok(n)
    }

    fn send(&mut self, frame: Vec<u8>, pool: &mut Pool) {
        if self.overflow.is_empty() && self.place(&frame) {
            pool.put(frame);
        } else if self.overflow.len() < OVERFLOW_MAX {
            self.overflow.push_back(frame);
        } else {
            self.refused += 1;
            pool.put(frame);
        }
    }

    fn flush(&mut self, pool: &mut Pool) -> u64 {
        self.kick();
        if !self.overflow.is_empty() {
            while let Some(f) = self.overflow.pop_front() {
                if self.place(&f) {
                    pool.put(f);
                } else {
                    self.overflow.push_front(f);
                    break;
                }
            }
            self.kick();
        }
        std::mem::take(&mut self.refused)
    }

    fn backlogged(&self) -> bool {
        self.tx_unsent > 0 || !self.overflow.is_empty()
    }

    fn take_rx_losses(&mut self) -> (u64, u64) {
        (std::mem::take(&mut self.truncated), self.rx_sock.take_drops())
    }

    fn poll_fd(&self) -> RawFd {
        self.rx_sock.raw()
    }
}

const _: () = assert!(std::mem::size_of::<Tpacket2Hdr>() == HDR2);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_never_straddle_blocks_and_fit_the_largest_frame() {
        let g = Geometry::new(1518, 4000);
        assert_eq!((g.frame_size, g.frame_nr), (2048, 4000));
        assert_eq!(g.offset(15), 15 * 2048);
        assert_eq!(g.offset(16), g.block_size());
        assert_eq!(g.offset(g.frame_nr - 1) + g.frame_size, g.bytes());
        assert!(g.tx_capacity() >= 1518 + 4);
        let j = Geometry::new(9018, 10);
        assert_eq!((j.frame_size, j.frame_nr), (16384, 16));
        assert!(j.tx_capacity() >= 9018);
        assert_eq!(Geometry::new(9018, 4096).bytes(), MAX_RING_BYTES);
        assert_eq!(Geometry::new(65536 + 64, 16).tx_capacity(), 65535);
    }

    #[test]
    fn a_stripped_vlan_tag_is_put_back_after_the_addresses() {
        let frame: Vec<u8> = (0u8..20).collect();
        let mut v = Vec::new();
        copy_frame(&mut v, &frame, None);
        assert_eq!(v, frame);
        copy_frame(&mut v, &frame, Some((0x8100, 0x2005)));
        assert_eq!(v.len(), 24);
        assert_eq!(&v[..12], &frame[..12]);
        assert_eq!(&v[12..16], &[0x81, 0x00, 0x20, 0x05]);
        assert_eq!(&v[16..], &frame[12..]);
    }
}
