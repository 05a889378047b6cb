#!/usr/bin/env python3
"""The testbed's traffic tool: real Linux TCP through plain sockets.

Standalone on purpose (stdlib only, no import of the netreturn package), so
it runs inside any namespace as ``python3 traffic.py ...``.

* ``server --port P --bytes N [--count K] [--sndbuf B] [--info FILE
  --info-interval I]``: every accepted connection gets N bytes, then the
  server closes it (the HTTP download of the RWM paper, its section
  IV). Exits after K connections. With ``--info``, the sender's own
  ``TCP_INFO`` (what ``ss -ti`` shows: smoothed RTT, cwnd, the window the
  sender sees, bytes sent / retransmitted) is sampled every I seconds for
  every connection and written to FILE as JSON when the peer has closed.
* ``client --host H --port P --bytes N --flow ID --out FILE [--start S]
  [--at T] [--interval I] [--rcvbuf B]``: connects (after sleeping S
  seconds, or at wall-clock time T so that several clients start together),
  reads until EOF, and writes one JSON object: the flow-completion time
  (connect() called -> last byte received), the goodput, and the bytes
  received in every interval (throughput over time).
* ``rtt --host H --port P --count N``: N connections to a ``server``
  (``--bytes 1 --count N``), one after the other; prints a JSON list of
  their handshake times in ms (connect(): SYN -> SYN-ACK, one round trip
  of the idle path).
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time

CHUNK = 1 << 20

#: Columns of a TCP_INFO sample (see :func:`tcp_info`).
INFO_COLUMNS = ["t_wall", "rtt_ms", "rttvar_ms", "cwnd", "ssthresh", "snd_wnd", "bytes_acked",
                "bytes_sent", "bytes_retrans", "total_retrans", "snd_mss", "ca_state", "unacked",
                "notsent_bytes", "busy_us", "rwnd_limited_us", "sndbuf_limited_us", "sacked", "lost",
                "retrans_out"]


def tcp_info(s: socket.socket) -> list:
    """One ``TCP_INFO`` sample (struct tcp_info of linux/tcp.h; fields a
    kernel does not have are None): wall time, srtt and rttvar (ms), cwnd
    and ssthresh (segments), snd_wnd (bytes, the receive window as the
    sender sees it, >= 6.x), bytes acked / sent / retransmitted,
    retransmitted segments, MSS, the congestion state (``tcpi_ca_state``:
    0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss; ``enum tcp_ca_state``),
    the segments in flight (``tcpi_unacked``, packets_out), the bytes
    written but not sent, and the time so far the connection was busy
    sending, and of that time limited by the peer's window and by the send
    buffer (``tcpi_busy_time``, ``tcpi_rwnd_limited``,
    ``tcpi_sndbuf_limited``, microseconds: the rest of the busy time is
    cwnd's, ``tcp_chrono``), and the scoreboard: segments SACKed, marked
    lost and retransmitted and not yet acknowledged (``tcpi_sacked``,
    ``tcpi_lost``, ``tcpi_retrans``), so that what is in flight,
    ``tcp_packets_in_flight`` = unacked - sacked - lost + retrans_out, can
    be set beside ssthresh (``tcp_cwnd_reduction``)."""
    b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    n = len(b)

    def u32(off):
        return struct.unpack_from("I", b, off)[0] if n >= off + 4 else None

    def u64(off):
        return struct.unpack_from("Q", b, off)[0] if n >= off + 8 else None

    rtt, rttvar = u32(68), u32(72)
    return [round(time.time(), 6), rtt / 1000 if rtt is not None else None,
            rttvar / 1000 if rttvar is not None else None, u32(80), u32(76), u32(228), u64(120),
            u64(200), u64(208), u32(100), u32(16), b[1] if n > 1 else None, u32(24), u32(144), u64(168),
            u64(176), u64(184), u32(28), u32(32), u32(36)]


def set_cc(s: socket.socket, cc: str | None) -> None:
    """Per-socket congestion control (TCP_CONGESTION). The netns-wide
    sysctl only accepts algorithms in tcp_allowed_congestion_control outside
    the initial namespace; the socket option works for any built-in one with
    CAP_NET_ADMIN."""
    if cc:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def serve(port: int, nbytes: int, count: int, sndbuf: int | None, cc: str | None = None,
          info: str | None = None, info_interval: float = 0.02) -> int:
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    set_cc(ls, cc)
    ls.bind(("0.0.0.0", port))
    ls.listen(128)
    print("ready", flush=True)
    payload = memoryview(bytes(CHUNK))
    threads = []
    conns: list[dict] = []

    def sample(c: socket.socket, rec: dict, done: threading.Event) -> None:
        while not done.wait(info_interval):
            try:
                rec["samples"].append(tcp_info(c))
            except OSError:
                return

    def send_all(c: socket.socket, peer) -> None:
        rec = {"port": port, "peer": f"{peer[0]}:{peer[1]}", "samples": []}
        done = threading.Event()
        sampler = None
        if info:
            conns.append(rec)
            rec["samples"].append(tcp_info(c))
            sampler = threading.Thread(target=sample, args=(c, rec, done), daemon=True)
            sampler.start()
        with c:
            set_cc(c, cc)
            if sndbuf:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
            left = nbytes
            try:
                while left > 0:
                    left -= c.send(payload[: min(left, CHUNK)])
                c.shutdown(socket.SHUT_WR)
                if info:
                    # The peer closes once it has every byte: then the
                    # counters (retransmissions included) are final.
                    c.settimeout(60)
                    while c.recv(4096):
                        pass
            except OSError:
                pass
            if sampler is not None:
                done.set()
                sampler.join()
                try:
                    rec["final"] = tcp_info(c)
                except OSError:
                    pass

    with ls:
        for _ in range(count):
            c, peer = ls.accept()
            t = threading.Thread(target=send_all, args=(c, peer), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()
    if info:
        with open(info, "w") as f:
            json.dump({"columns": INFO_COLUMNS, "connections": conns}, f)
    return 0


def fetch(host: str, port: int, nbytes: int, flow: int, out: str, start: float,
          interval: float, rcvbuf: int | None, at: float | None = None) -> int:
    if at is not None:
        time.sleep(max(0.0, at - time.time()))
    if start > 0:
        time.sleep(start)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    t0 = time.monotonic()
    wall0 = time.time()
    got = 0
    samples: list[list[float]] = []
    next_sample = t0 + interval
    last_got = 0
    buf = bytearray(CHUNK)
    with s:
        s.connect((host, port))
        local = s.getsockname()
        while True:
            n = s.recv_into(buf)
            now = time.monotonic()
            while now >= next_sample:
                samples.append([round(next_sample - t0, 6), (got - last_got) * 8 / interval / 1e6])
                last_got = got
                next_sample += interval
            if n == 0:
                break
            got += n
    t1 = time.monotonic()
    fct = t1 - t0
    res = {
        "flow": flow, "host": host, "port": port, "local": f"{local[0]}:{local[1]}",
        "bytes": got, "expected": nbytes, "start_wall": wall0, "fct_s": fct,
        "goodput_mbps": got * 8 / fct / 1e6 if fct > 0 else 0.0,
        "throughput": samples,
    }
    with open(out, "w") as f:
        json.dump(res, f)
    return 0 if got == nbytes else 1


def handshakes(host: str, port: int, count: int) -> int:
    rtts = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with s:
            t0 = time.perf_counter()
            s.connect((host, port))
            rtts.append(round((time.perf_counter() - t0) * 1000, 3))
            while s.recv(CHUNK):
                pass
    print(json.dumps(rtts))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="traffic")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--count", type=int, default=1)
    s.add_argument("--sndbuf", type=int, default=None)
    s.add_argument("--cc", default=None)
    s.add_argument("--info", default=None, help="write TCP_INFO samples of every connection here")
    s.add_argument("--info-interval", type=float, default=0.02)
    c = sub.add_parser("client")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--bytes", type=int, required=True)
    c.add_argument("--flow", type=int, default=0)
    c.add_argument("--out", required=True)
    c.add_argument("--start", type=float, default=0.0)
    c.add_argument("--interval", type=float, default=0.1)
    c.add_argument("--rcvbuf", type=int, default=None)
    c.add_argument("--at", type=float, default=None, help="wall-clock time (epoch s) to connect at")
    r = sub.add_parser("rtt")
    r.add_argument("--host", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--count", type=int, default=10)
    a = p.parse_args(argv)
    if a.cmd == "rtt":
        return handshakes(a.host, a.port, a.count)
    if a.cmd == "server":
        return serve(a.port, a.bytes, a.count, a.sndbuf, a.cc, a.info, a.info_interval)
    return fetch(a.host, a.port, a.bytes, a.flow, a.out, a.start, a.interval, a.rcvbuf, a.at)


if __name__ == "__main__":
    sys.exit(main())
