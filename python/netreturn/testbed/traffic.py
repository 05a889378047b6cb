#!/usr/bin/env python3
"""The testbed's traffic tool: real Linux TCP through plain sockets.

Standalone on purpose (stdlib only, no import of the netreturn package), so
it runs inside any namespace as ``python3 traffic.py ...``.

* ``server --port P --bytes N [--count K] [--sndbuf B]``: every accepted
  connection gets N bytes, then the server closes it (the HTTP download of
  the RWM paper, seed 003 section IV). Exits after K connections.
* ``client --host H --port P --bytes N --flow ID --out FILE [--start S]
  [--interval I] [--rcvbuf B]``: connects (after sleeping S seconds),
  reads until EOF, and writes one JSON object: the flow-completion time
  (connect() called -> last byte received), the goodput, and the bytes
  received in every interval (throughput over time).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time

CHUNK = 1 << 20


def set_cc(s: socket.socket, cc: str | None) -> None:
    """Per-socket congestion control (TCP_CONGESTION). The netns-wide
    sysctl only accepts algorithms in tcp_allowed_congestion_control outside
    the initial namespace; the socket option works for any built-in one with
    CAP_NET_ADMIN."""
    if cc:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def serve(port: int, nbytes: int, count: int, sndbuf: int | None, cc: str | None = None) -> int:
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    set_cc(ls, cc)
    ls.bind(("0.0.0.0", port))
    ls.listen(128)
    print("ready", flush=True)
    payload = memoryview(bytes(CHUNK))
    threads = []

    def send_all(c: socket.socket) -> None:
        with c:
            set_cc(c, cc)
            if sndbuf:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
            left = nbytes
            try:
                while left > 0:
                    left -= c.send(payload[: min(left, CHUNK)])
                c.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    with ls:
        for _ in range(count):
            c, _ = ls.accept()
            t = threading.Thread(target=send_all, args=(c,), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()
    return 0


def fetch(host: str, port: int, nbytes: int, flow: int, out: str, start: float,
          interval: float, rcvbuf: int | None) -> int:
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="traffic")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--count", type=int, default=1)
    s.add_argument("--sndbuf", type=int, default=None)
    s.add_argument("--cc", default=None)
    c = sub.add_parser("client")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--bytes", type=int, required=True)
    c.add_argument("--flow", type=int, default=0)
    c.add_argument("--out", required=True)
    c.add_argument("--start", type=float, default=0.0)
    c.add_argument("--interval", type=float, default=0.1)
    c.add_argument("--rcvbuf", type=int, default=None)
    a = p.parse_args(argv)
    if a.cmd == "server":
        return serve(a.port, a.bytes, a.count, a.sndbuf, a.cc)
    return fetch(a.host, a.port, a.bytes, a.flow, a.out, a.start, a.interval, a.rcvbuf)


if __name__ == "__main__":
    sys.exit(main())
