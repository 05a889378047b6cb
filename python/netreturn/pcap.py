"""One reader of the packet captures netreturn writes: the simulator's
(``crates/sim/src/pcap.rs``: raw IPv4, link type 101, nanosecond stamps,
headers only) and the testbed's (``scripts/testbed_capture.py``: Ethernet,
link type 1, nanosecond stamps), and any little-endian libpcap file of
either link type with microsecond stamps.

Format: the libpcap file format (draft-ietf-opsawg-pcap section 4, the
file header; section 5, the record header). Records are read one at a
time; a record cut short at the end of the file (a capture still being
written, or killed) ends the iteration, as tcpdump does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

#: draft-ietf-opsawg-pcap section 4: the magic number sets the stamps' unit.
MAGIC_MICROSECONDS = 0xA1B2C3D4
MAGIC_NANOSECONDS = 0xA1B23C4D
#: The link types read (www.tcpdump.org/linktypes.html): Ethernet, raw IP
#: (101 as libpcap writes it) and raw IPv4.
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_IPV4 = 228
#: IEEE 802 EtherType of IPv4.
ETHERTYPE_IPV4 = b"\x08\x00"
#: IPv4 protocol number of TCP (RFC 790).
IPPROTO_TCP = 6


class TcpSegment(NamedTuple):
    """The headers of one IPv4 TCP packet of a capture. ``payload`` is the
    IP total length minus both headers (the captures keep headers only);
    ``window`` is the raw 16-bit field (RFC 9293 section 3.1), unscaled."""

    time_s: float
    ip_len: int
    src: bytes
    dst: bytes
    sport: int
    dport: int
    seq: int
    ack: int
    ip_id: int
    payload: int
    window: int


def _header(path: Path, head: bytes, nanoseconds: bool) -> tuple[float, int]:
    """The stamps' unit (s) and the link header's length, or a ValueError
    that names the file and what is allowed."""
    if len(head) < 24:
        raise ValueError(f"{path}: not a pcap file: {len(head)} bytes, shorter than the 24-byte file header")
    magic, = struct.unpack_from("<I", head, 0)
    if magic not in (MAGIC_MICROSECONDS, MAGIC_NANOSECONDS):
        raise ValueError(
            f"{path}: not a little-endian pcap file (magic {magic:#010x}; allowed "
            f"{MAGIC_MICROSECONDS:#010x} for microsecond or {MAGIC_NANOSECONDS:#010x} for nanosecond stamps)")
    if nanoseconds and magic != MAGIC_NANOSECONDS:
        raise ValueError(f"{path}: not a nanosecond pcap file (netreturn's captures stamp in nanoseconds)")
    linktype, = struct.unpack_from("<I", head, 20)
    linktype &= 0x0FFF_FFFF  # section 4: the upper bits are the FCS length
    if linktype == LINKTYPE_ETHERNET:
        l2 = 14
    elif linktype in (LINKTYPE_RAW, LINKTYPE_IPV4):
        l2 = 0
    else:
        raise ValueError(f"{path}: link type {linktype} is not read (allowed {LINKTYPE_ETHERNET} Ethernet, "
                         f"{LINKTYPE_RAW} raw IP, {LINKTYPE_IPV4} raw IPv4)")
    return (1e-9 if magic == MAGIC_NANOSECONDS else 1e-6), l2


def tcp_segments(path: str | Path, *, nanoseconds: bool = False) -> Iterator[TcpSegment]:
    """The IPv4 TCP packets of a capture in capture order; other frames
    (ARP, IPv6, UDP, frames cut before the TCP header) are skipped. With
    ``nanoseconds`` a capture with microsecond stamps is refused (a check
    that the file is one netreturn wrote)."""
    path = Path(path)
    buf = path.read_bytes()
    unit, l2 = _header(path, buf[:24], nanoseconds)
    off = 24
    while off + 16 <= len(buf):
        sec, frac, caplen, _ = struct.unpack_from("<IIII", buf, off)
        off += 16
        if off + caplen > len(buf):
            return
        frame = buf[off:off + caplen]
        off += caplen
        if l2 and frame[12:14] != ETHERTYPE_IPV4:
            continue
        ip = frame[l2:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != IPPROTO_TCP:
            continue
        ihl = (ip[0] & 0x0F) * 4
        if len(ip) < ihl + 20:
            continue
        ip_len, ip_id = struct.unpack_from("!HH", ip, 2)
        sport, dport, seq, ack, doff, _, window = struct.unpack_from("!HHIIBBH", ip, ihl)
        yield TcpSegment(sec + frac * unit, ip_len, bytes(ip[12:16]), bytes(ip[16:20]), sport, dport,
                         seq, ack, ip_id, ip_len - ihl - (doff >> 4) * 4, window)
