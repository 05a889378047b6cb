"""The one pcap reader (netreturn.pcap) on the captures both worlds write."""

import struct

import pytest

from netreturn.pcap import MAGIC_MICROSECONDS, MAGIC_NANOSECONDS, tcp_segments


def _ipv4_tcp(src: int, sport: int, dport: int, seq: int, ack: int, window: int, payload: int,
              ip_id: int = 7, options: int = 0) -> bytes:
    """The headers of an IPv4 TCP packet carrying ``payload`` bytes (not
    included: the captures keep headers only) and ``options`` bytes of TCP
    options."""
    tcp_len = 20 + options
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + tcp_len + payload, ip_id, 0, 64, 6, 0,
                     src.to_bytes(4, "big"), bytes([10, 0, 0, 9]))
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (tcp_len // 4) << 4, 0x10, window, 0, 0)
    return ip + tcp + bytes(options)


def _pcap(magic: int, linktype: int, records: list[tuple[int, int, bytes]]) -> bytes:
    out = struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, linktype)
    for sec, frac, frame in records:
        out += struct.pack("<IIII", sec, frac, len(frame), len(frame)) + frame
    return out


ETH = bytes(12) + b"\x08\x00"


def test_a_raw_ipv4_nanosecond_capture_gives_each_segments_headers_and_payload(tmp_path):
    f = tmp_path / "sim.pcap"
    f.write_bytes(_pcap(MAGIC_NANOSECONDS, 101, [
        (2, 500_000_000, _ipv4_tcp(0x0A000001, 5001, 80, 1000, 0, 65535, 1448)),
        (3, 1, _ipv4_tcp(0x0A000002, 80, 5001, 0, 2448, 3000, 0, ip_id=9, options=12)),
    ]))
    a, b = list(tcp_segments(f, nanoseconds=True))
    assert a.time_s == pytest.approx(2.5) and b.time_s == pytest.approx(3.000000001)
    assert (a.sport, a.dport, a.seq, a.payload, a.window, a.ip_len) == (5001, 80, 1000, 1448, 65535, 1488)
    # The options belong to the header, not the payload.
    assert (b.ack, b.payload, b.window, b.ip_id, b.src) == (2448, 0, 3000, 9, bytes([10, 0, 0, 2]))


def test_an_ethernet_microsecond_capture_skips_frames_that_are_not_ipv4_tcp(tmp_path):
    udp = bytearray(_ipv4_tcp(1, 1, 2, 0, 0, 0, 0))
    udp[9] = 17
    arp = bytes(12) + b"\x08\x06" + bytes(28)
    f = tmp_path / "testbed.pcap"
    f.write_bytes(_pcap(MAGIC_MICROSECONDS, 1, [
        (1, 250_000, ETH + bytes(udp)), (1, 500_000, arp),
        (1, 750_000, ETH + _ipv4_tcp(3, 5002, 80, 42, 0, 100, 10)), (1, 800_000, ETH + bytes(10)),
    ]))
    (s,) = list(tcp_segments(f))
    assert (s.time_s, s.sport, s.seq, s.payload) == (pytest.approx(1.75), 5002, 42, 10)


def test_a_record_cut_short_at_the_end_keeps_the_records_before_it(tmp_path):
    whole = _pcap(MAGIC_NANOSECONDS, 101, [(0, i, _ipv4_tcp(1, 5000 + i, 80, i, 0, 0, 0)) for i in range(3)])
    f = tmp_path / "cut.pcap"
    f.write_bytes(whole[:-5])
    assert [s.sport for s in tcp_segments(f)] == [5000, 5001]


@pytest.mark.parametrize("head, match", [
    (b"\xa1\xb2\xc3\xd4" + bytes(20),
     r"big.pcap: not a little-endian pcap file \(magic 0xd4c3b2a1; allowed 0xa1b2c3d4"),
    (b"\x4d\x3c\xb2\xa1" + bytes(4), r"big.pcap: not a pcap file: 8 bytes"),
    (struct.pack("<IHHiIII", MAGIC_NANOSECONDS, 2, 4, 0, 0, 65535, 113),
     r"big.pcap: link type 113 is not read \(allowed 1"),
])
def test_a_file_netreturn_cannot_read_is_refused_by_name_with_what_is_allowed(tmp_path, head, match):
    f = tmp_path / "big.pcap"
    f.write_bytes(head)
    with pytest.raises(ValueError, match=match):
        list(tcp_segments(f))


def test_a_microsecond_capture_is_refused_where_a_nanosecond_one_is_required(tmp_path):
    f = tmp_path / "us.pcap"
    f.write_bytes(_pcap(MAGIC_MICROSECONDS, 101, []))
    with pytest.raises(ValueError, match="us.pcap: not a nanosecond pcap file"):
        list(tcp_segments(f, nanoseconds=True))
    assert list(tcp_segments(f)) == []
