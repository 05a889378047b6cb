//! Bytes <-> headers for the real gateway, in the manner of smoltcp's `wire`
//! module (STYLE.md): each header is a zero-copy view `Packet<T: AsRef<[u8]>>`
//! over a buffer, with its field ranges named in a `field` module,
//! `new_checked` for untrusted bytes (after it succeeds, every getter is in
//! bounds and no getter panics), setters on `T: AsMut<[u8]>`, and
//! `fill_checksum`.
//!
//! * [`ethernet`]: Ethernet II, with 802.1Q / 802.1ad tag detection.
//! * [`ipv4`]: IPv4 (RFC 791), options including NGWA (type 33, SPEC.md 2.6),
//!   fragment detection.
//! * [`tcp`]: TCP (RFC 9293) with an options iterator (RFC 9293, 7323, 2018).
//! * [`udp`]: UDP (RFC 768).
//! * [`xcp`]: the XCP congestion header (Katabi et al. 2002; SPEC.md 2.7).
//! * [`checksum`]: the Internet checksum (RFC 1071) and its incremental
//!   update (RFC 1624).
//! * [`frame`]: one-call parsing of an Ethernet frame into a
//!   [`netreturn_base::TcpView`] plus the offsets the gateway needs to
//!   rewrite the window in place.
//!
//! Nothing here allocates or does I/O.

/// Declares `Packet<T>`, a module's zero-copy view over a buffer, with
/// `new_unchecked`, `into_inner` and `new_checked`: the fixed header
/// (`HEADER_LEN`) must fit in the buffer, then the module's own
/// `fn check(&self, buffer_len: usize) -> Result<()>` validates what the
/// header declares.
macro_rules! packet_view {
    ($(#[$doc:meta])*) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct Packet<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> Packet<T> {
            /// A view without checks: getters may panic on a short buffer.
            pub const fn new_unchecked(buffer: T) -> Packet<T> {
                Packet { buffer }
            }

            /// A view of untrusted bytes: after this succeeds every getter
            /// is in bounds (see `check` for what is validated).
            pub fn new_checked(buffer: T) -> $crate::Result<Packet<T>> {
                let p = Packet { buffer };
                let len = p.buffer.as_ref().len();
                if len < HEADER_LEN {
                    return Err($crate::Error::Truncated);
                }
                p.check(len)?;
                Ok(p)
            }

            pub fn into_inner(self) -> T {
                self.buffer
            }
        }
    };
}

/// A length a header declares: at least `min` (else the header is
/// malformed) and within the buffer's `len` (else it is truncated).
pub(crate) fn declared_len(declared: usize, min: usize, len: usize) -> Result<()> {
    if declared < min {
        Err(Error::Malformed)
    } else if declared > len {
        Err(Error::Truncated)
    } else {
        Ok(())
    }
}

pub mod checksum;
pub mod ethernet;
pub mod frame;
pub mod ipv4;
pub mod tcp;
pub mod udp;
pub mod xcp;

/// Why a buffer could not be read as a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The buffer is shorter than the header (or than a length it declares).
    Truncated,
    /// A field holds a value the header cannot have (version, header length,
    /// a length field smaller than the header...).
    Malformed,
    /// The IPv4 header checksum does not verify (RFC 791 section 3.1): the
    /// header was corrupted on the way. A gateway passes such a frame
    /// untouched: rewriting it would recompute a valid checksum over a
    /// corrupted header (laundering it).
    BadChecksum,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Truncated => f.write_str("truncated"),
            Error::Malformed => f.write_str("malformed"),
            Error::BadChecksum => f.write_str("bad IPv4 header checksum"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = core::result::Result<T, Error>;

/// Big-endian reads and writes at fixed offsets (callers check bounds first).
#[inline]
pub(crate) fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
#[inline]
pub(crate) fn set_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
#[inline]
pub(crate) fn set_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
