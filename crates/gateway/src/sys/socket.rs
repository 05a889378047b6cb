//! Raw `AF_PACKET` sockets and the small `setsockopt` helpers both ports
//! share.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub const SOL_PACKET: libc::c_int = 263;
pub const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
pub const PACKET_RX_RING: libc::c_int = 5;
pub const PACKET_STATISTICS: libc::c_int = 6;
pub const PACKET_COPY_THRESH: libc::c_int = 7;
pub const PACKET_VERSION: libc::c_int = 10;
pub const PACKET_TX_RING: libc::c_int = 13;
pub const PACKET_LOSS: libc::c_int = 14;
pub const PACKET_VNET_HDR: libc::c_int = 15;
pub const PACKET_QDISC_BYPASS: libc::c_int = 20;
pub const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
/// `sll_pkttype` of a frame this host sent.
pub const PACKET_OUTGOING: u8 = 4;

pub fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

pub fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: passes a pointer to a live T and its size.
    cvt(unsafe {
        libc::setsockopt(fd, level, name, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32)
    })
    .map(|_| ())
}

pub fn setsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    setsockopt(fd, level, name, &v)
}

/// Sets a socket buffer size; the FORCE variants ignore `rmem_max` /
/// `wmem_max` (we are root), the plain ones are the fallback.
pub fn set_buffer(fd: RawFd, send: bool, bytes: libc::c_int) {
    let (force, plain) =
        if send { (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF) } else { (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF) };
    if setsockopt_int(fd, libc::SOL_SOCKET, force, bytes).is_err() {
        let _ = setsockopt_int(fd, libc::SOL_SOCKET, plain, bytes);
    }
}

/// The pending error of a socket (`SO_ERROR`, which clears it), if any.
pub fn take_error(fd: RawFd) -> Option<io::Error> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: buffer of the advertised size.
    let r = unsafe {
        libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut v as *mut _ as *mut libc::c_void, &mut len)
    };
    (r == 0 && v != 0).then(|| io::Error::from_raw_os_error(v))
}

/// The interface index of `ifname`.
pub fn ifindex(ifname: &str) -> io::Result<i32> {
    let cname = CString::new(ifname).map_err(|_| io::Error::other("bad interface name"))?;
    // SAFETY: valid C string.
    let i = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if i == 0 {
        return Err(io::Error::other(format!("no interface '{ifname}'")));
    }
    Ok(i as i32)
}

/// A raw packet socket for one interface.
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

impl PacketSocket {
    /// An unbound `SOCK_RAW` packet socket. Protocol 0: it receives nothing
    /// until bound, so no frame of another interface slips in before
    /// [`PacketSocket::bind`], and rings can be set up before the first
    /// frame arrives.
    pub fn new(ifname: &str) -> io::Result<PacketSocket> {
        let ifindex = ifindex(ifname)?;
        // SAFETY: plain call; the fd is owned right after.
        let raw = cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(PacketSocket { fd, ifindex })
    }

    /// Binds to the interface. `receive`: all protocols (`ETH_P_ALL`), in
    /// promiscuous mode (the bridge forwards frames addressed to the hosts
    /// behind it), ignoring the frames this host sends
    /// (`PACKET_IGNORE_OUTGOING`, Linux >= 4.20; the receive paths also
    /// filter on `sll_pkttype`). Otherwise protocol 0: a send-only socket.
    pub fn bind(&self, receive: bool) -> io::Result<()> {
        let raw = self.raw();
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = if receive { (libc::ETH_P_ALL as u16).to_be() } else { 0 };
        sll.sll_ifindex = self.ifindex;
        // SAFETY: valid sockaddr_ll and its size.
        cvt(unsafe {
            libc::bind(raw, &sll as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32)
        })?;
        if receive {
            let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
            mreq.mr_ifindex = self.ifindex;
            mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
            setsockopt(raw, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)?;
            let _ = setsockopt_int(raw, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
        }
        Ok(())
    }

    /// Frames sent go straight to the driver: the emulated queue is ours;
    /// the interface's qdisc would be a second, hidden one.
    pub fn bypass_qdisc(&self) {
        let _ = setsockopt_int(self.raw(), SOL_PACKET, PACKET_QDISC_BYPASS, 1);
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Frames the kernel dropped for this socket (full ring or receive
    /// buffer) since the last call (`PACKET_STATISTICS` resets on read).
    pub fn take_drops(&self) -> u64 {
        #[repr(C)]
        #[derive(Default)]
        struct TpacketStats {
            packets: u32,
            drops: u32,
        }
        let mut st = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: buffer of the advertised size.
        let r = unsafe {
            libc::getsockopt(
                self.raw(),
                SOL_PACKET,
                PACKET_STATISTICS,
                &mut st as *mut _ as *mut libc::c_void,
                &mut len,
            )
        };
        if r < 0 {
            0
        } else {
            st.drops as u64
        }
    }

    /// Sends one frame with `send` (no ring); `Err` if the kernel refused it.
    pub fn send_one(&self, frame: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: valid buffer; bound socket, no address needed.
            let r = unsafe { libc::send(self.raw(), frame.as_ptr() as *const _, frame.len(), libc::MSG_DONTWAIT) };
            if r >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }
}
