#!/usr/bin/env python3
"""Writes the hand-made part of the seed corpora (docs/fuzzing.md).

* corpus/wire_parsers/: Ethernet frames of every class the classifier
  knows: TCP/IPv4 SYN, SYN-ACK, ACK, data, with TCP options, IPv4 options
  and an NGWA option, VLAN-tagged and padded, a bad IPv4 header checksum, a
  bad TCP checksum, a fragment, UDP, ARP, IPv6, truncated.
* corpus/scenario_loader/: every bundled scenario (scenarios/**.toml), and
  one with `--set` overrides.

corpus/gateway_pipeline/ holds inputs libFuzzer found and `-merge=1` kept
(its input is a structure read by `arbitrary`, not a frame).

Run from anywhere: python3 fuzz/make_seeds.py
"""
import hashlib
import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload, opts=b"", frag=0, bad=False):
    hl = 20 + len(opts)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | hl // 4, 0, hl + len(payload), 1, frag, 64, proto, 0,
                    bytes(src), bytes(dst)) + opts
    c = csum(h)
    if bad:
        c ^= 0x0101
    return h[:10] + struct.pack("!H", c) + h[12:] + payload


def tcp(src, dst, sport, dport, seq, ack, flags, window, opts=b"", payload=b"", bad=False):
    opts = opts + b"\0" * (-len(opts) % 4)
    hl = 20 + len(opts)
    h = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (hl // 4) << 4, flags, window, 0, 0) + opts
    pseudo = struct.pack("!4s4sBBH", bytes(src), bytes(dst), 0, 6, hl + len(payload))
    c = csum(pseudo + h + payload)
    if bad:
        c ^= 0x0101
    return h[:16] + struct.pack("!H", c) + h[18:] + payload


def eth(payload, ethertype=0x0800, vlans=0):
    h = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1])
    for _ in range(vlans):
        h += struct.pack("!HH", 0x8100, 5)
    return h + struct.pack("!H", ethertype) + payload


A, B = [10, 0, 0, 1], [10, 0, 0, 2]
SYN_OPTS = bytes([2, 4, 0x05, 0xB4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7])
NGWA = bytes([33, 6, 0, 0, 0x75, 0x30, 1, 1])
SYN, ACK, PSH, FIN, RST = 0x02, 0x10, 0x08, 0x01, 0x04


def frames():
    def seg(src, dst, sp, dp, flags, window, opts=b"", payload=b"", ipopts=b"", **kw):
        badtcp = kw.pop("badtcp", False)
        return ipv4(src, dst, 6, tcp(src, dst, sp, dp, 1, 1, flags, window, opts, payload, bad=badtcp), ipopts, **kw)

    yield "syn", eth(seg(A, B, 40000, 5001, SYN, 64240, SYN_OPTS))
    yield "synack", eth(seg(B, A, 5001, 40000, SYN | ACK, 65160, SYN_OPTS))
    yield "ack", eth(seg(A, B, 40000, 5001, ACK, 502))
    yield "ack_padded", eth(seg(B, A, 5001, 40000, ACK, 469)) + b"\0" * 6
    yield "data", eth(seg(A, B, 40000, 5001, ACK | PSH, 502, b"", b"x" * 200))
    yield "data_ts_sack", eth(seg(B, A, 5001, 40000, ACK, 469,
                                  bytes([1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 7, 1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2])))
    yield "fin", eth(seg(A, B, 40000, 5001, FIN | ACK, 502))
    yield "rst", eth(seg(B, A, 5001, 40000, RST, 0))
    yield "ngwa_marked", eth(seg(A, B, 40000, 5001, ACK | PSH, 502, b"", b"y" * 100, NGWA))
    yield "ngwa_with_rr", eth(seg(A, B, 40000, 5001, ACK, 502, b"", b"", NGWA + bytes([7, 7, 4, 0, 0, 0, 0, 0])))
    yield "ngwa_bad_len", eth(seg(A, B, 40000, 5001, ACK, 502, b"", b"", bytes([33, 5, 0, 0, 0, 0, 0, 0])))
    yield "ip_options_full", eth(seg(A, B, 40000, 5001, ACK, 502, b"", b"", bytes([1] * 40)))
    yield "vlan1", eth(seg(A, B, 40000, 5001, SYN, 64240, SYN_OPTS), vlans=1)
    yield "vlan2", eth(seg(B, A, 5001, 40000, ACK, 469), ethertype=0x0800, vlans=2)
    yield "bad_ip_checksum", eth(seg(B, A, 5001, 40000, ACK, 469, bad=True))
    yield "bad_tcp_checksum", eth(seg(B, A, 5001, 40000, ACK, 469, badtcp=True))
    yield "fragment", eth(seg(A, B, 40000, 5001, ACK, 502, b"", b"z" * 16, frag=0x2000))
    yield "udp", eth(ipv4(A, B, 17, struct.pack("!HHHH", 1, 2, 12, 0) + b"udp!"))
    yield "arp", eth(bytes(28), ethertype=0x0806) + bytes(4)
    yield "ipv6", eth(bytes([0x60]) + bytes(39), ethertype=0x86DD)
    yield "truncated_tcp", eth(seg(A, B, 40000, 5001, ACK, 502))[:40]
    yield "ihl_too_big", bytearray(eth(seg(A, B, 40000, 5001, ACK, 502)))
    yield "tcp_doff_bad", eth(ipv4(A, B, 6, bytes(12) + bytes([0xF0]) + bytes(7)))


def main():
    out = HERE / "corpus" / "wire_parsers"
    out.mkdir(parents=True, exist_ok=True)
    for name, f in frames():
        f = bytearray(f)
        if name == "ihl_too_big":
            f[14] = 0x4F
        (out / name).write_bytes(bytes(f))
    out = HERE / "corpus" / "scenario_loader"
    out.mkdir(parents=True, exist_ok=True)
    for p in sorted((ROOT / "scenarios").rglob("*.toml")):
        rel = p.relative_to(ROOT / "scenarios")
        (out / str(rel).replace("/", "_")).write_bytes(p.read_bytes())
    ewt2 = (ROOT / "scenarios" / "ewt" / "scenario2.toml").read_text()
    (out / "ewt_scenario2_with_set").write_text(ewt2 + "\n#--set\nflows=3\nqueue=\"awm\"\n")
    print("seeds written;", hashlib.sha1(b"".join(sorted(p.read_bytes() for p in out.iterdir()))).hexdigest()[:8])


if __name__ == "__main__":
    main()
