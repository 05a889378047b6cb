"""Packet captures of a testbed run, with the kernel's receive timestamps
(pcap, nanosecond resolution, headers only), for ``scripts/arrival_bursts.py``.

tcpdump is not installed on the testbed machine, so this is a packet socket
(AF_PACKET, ETH_P_ALL) with ``SO_TIMESTAMPNS``: each frame carries the time
the kernel stamped it (``__net_timestamp`` in ``netif_receive_skb`` for a
frame received, ``dev_queue_xmit_nit`` for one sent), not the time this
process read it, so a slow reader shifts nothing. The gateways send with
``PACKET_QDISC_BYPASS`` (``packet_direct_xmit``: no copy to other packet
sockets), so their output is captured where it is received, on the next
namespace's interface.

Two commands:

``watch --out DIR`` (as root, started before ``netreturn testbed sweep``;
stop it with Ctrl-C or SIGTERM afterwards) waits for each run's namespaces
(``nrtb<pid>-gw1``: the bottleneck gateway of a two-hop dumbbell run,
``--bottleneck -gw2`` on the kernel datapath, whose delays run on a
``wan`` hop in front;
``nrtb<pid>-la``: the senders' LAN) and captures, per run,

* ``runNNN-bottleneck_in.pcap``: ``gwa`` in the bottleneck gateway's
  namespace, frames received: the data as the "path" hop releases it, the
  arrivals at the bottleneck queue (the gateway's own arrival time is this
  same kernel stamp, its ring's ``tp_sec``/``tp_nsec``);
* ``runNNN-senders_lan.pcap``: ``uplink`` in the senders' LAN namespace,
  both ways: frames sent (pkttype OUTGOING: the senders' data after their
  ``tbf`` links, entering the path hop) and frames received (the ACKs as
  the path hop releases them towards the senders).

Runs are numbered in the order they start (a sweep runs them one at a time).

``capture --iface IF --out FILE [--direction in|both]`` captures one
interface of the current namespace until it disappears (``ip netns exec NS
python3 scripts/testbed_capture.py capture ...``); ``watch`` runs it.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import struct
import subprocess
import sys
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
SNAP = 128  # Ethernet + IPv4 + TCP with options: 14 + 20 + 60 at most


def capture(iface: str, out: str, direction: str) -> int:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE: a burst never overflows the socket
    s.bind((iface, 0))
    s.settimeout(0.2)
    n = lost = 0

    def account(f) -> None:
        # The testbed SIGKILLs every process of a namespace it removes
        # (Topology.destroy), so whenever the interface is idle the frames
        # so far go to disk, with the kernel's count of the frames this
        # socket lost for want of buffer (struct tpacket_stats: SOL_PACKET
        # 263, PACKET_STATISTICS 6; reading it resets it) in FILE.drops.
        nonlocal lost
        f.flush()
        lost += struct.unpack("II", s.getsockopt(263, 6, 8))[1]
        with open(out + ".drops", "w") as g:
            g.write(f"{n} frames written, {lost} lost by the socket\n")

    with open(out, "wb") as f:
        # pcap header, nanosecond timestamps (magic a1b23c4d), link type 1 (Ethernet).
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, SNAP, 1))
        while True:
            try:
                data, anc, flags, addr = s.recvmsg(SNAP, 64, socket.MSG_TRUNC)
            except socket.timeout:
                account(f)
                if not os.path.exists(f"/sys/class/net/{iface}"):
                    break
                continue
            except OSError:
                break  # the interface went away with its namespace
            if direction == "in" and addr[2] == PACKET_OUTGOING:
                continue
            sec = nsec = 0
            for level, typ, val in anc:
                if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", val[:16])
            # The frame's full length (MSG_TRUNC cut it to SNAP): IPv4 total length + Ethernet header.
            full = len(data)
            if len(data) >= 18 and data[12:14] == b"\x08\x00":
                full = struct.unpack("!H", data[16:18])[0] + 14
            cap = data[:SNAP]
            # pcap has no direction field: the analysis tells data from ACKs
            # by the servers' ports (50xx), which is the direction here.
            f.write(struct.pack("<IIII", sec, nsec, len(cap), full))
            f.write(cap)
            n += 1
        account(f)
    return 0


def _namespaces() -> set[str]:
    """Named namespaces (``ip netns add`` makes a file in /run/netns): read
    without a process per poll, so watching costs the machine nothing."""
    try:
        return set(os.listdir("/run/netns"))
    except FileNotFoundError:
        return set()


def _has_iface(ns: str, iface: str) -> bool:
    return subprocess.run(["ip", "netns", "exec", ns, "test", "-e", f"/sys/class/net/{iface}"]).returncode == 0


def watch(out: str, prefix: str, bottleneck: str = "-gw1") -> int:
    os.makedirs(out, exist_ok=True)
    # A background job of a non-interactive shell ignores SIGINT: stop on SIGTERM too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    me = os.path.abspath(__file__)
    run = 0
    busy: dict[tuple[str, str], subprocess.Popen] = {}
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    try:
        while True:
            nss = _namespaces()
            for ns in sorted(nss):
                if not ns.startswith(prefix):
                    continue
                for suffix, iface, name, direction in ((bottleneck, "gwa", "bottleneck_in", "in"),
                                                        ("-la", "uplink", "senders_lan", "both")):
                    key = (ns, iface)
                    if not ns.endswith(suffix) or (key in busy and busy[key].poll() is None):
                        continue
                    # A sweep reuses its namespaces' names run after run: a
                    # new run is a new namespace (its inode and change time), not a
                    # capture that ended early while the old one was removed.
                    try:
                        st = os.stat(f"/run/netns/{ns}")
                        ino = (st.st_ino, st.st_ctime_ns)
                    except FileNotFoundError:
                        continue
                    if seen.get(key) == ino or not _has_iface(ns, iface):
                        continue
                    seen[key] = ino
                    if name == "bottleneck_in":
                        run += 1
                    tag = run if name == "bottleneck_in" else max(run, 1)
                    path = os.path.join(out, f"run{tag:03d}-{name}.pcap")
                    busy[key] = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, me, "capture",
                                                  "--iface", iface, "--out", path, "--direction", direction])
                    print(f"{time.strftime('%H:%M:%S')} capturing {ns}:{iface} -> {path}", file=sys.stderr)
            time.sleep(0.02)
    except KeyboardInterrupt:
        for p in busy.values():
            p.wait(timeout=5)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--iface", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--direction", choices=("in", "both"), default="both")
    w = sub.add_parser("watch")
    w.add_argument("--out", required=True)
    w.add_argument("--prefix", default="nrtb")
    w.add_argument("--bottleneck", default="-gw1",
                   help="suffix of the bottleneck hop's namespace: -gw1 (path hop, bottleneck), "
                        "-gw2 with --datapath kernel (path, wan, bottleneck)")
    a = ap.parse_args(argv)
    if a.cmd == "capture":
        return capture(a.iface, a.out, a.direction)
    return watch(a.out, a.prefix, a.bottleneck)


if __name__ == "__main__":
    sys.exit(main())
