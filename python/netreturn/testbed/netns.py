"""Network namespaces, veth pairs and bridges for the testbed.

Every object is created inside a namespace whose name starts with the
topology's prefix, so removing the namespaces removes everything (a veth
dies with either end's namespace). :meth:`Topology.destroy` is idempotent
and safe to call from ``finally`` and from signal handlers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field

#: Offloads turned off on every veth (ethtool -K names). TSO/GSO/GRO would
#: hand the gateway 64 KiB aggregates instead of wire-size frames; tx/rx
#: checksumming: with "tx" on, a frame read by AF_PACKET carries only a
#: partial checksum (the kernel would finish it on the wire), and with "rx"
#: on, veth marks frames injected by AF_PACKET CHECKSUM_UNNECESSARY, so the
#: receiver would never verify the gateway's rewritten checksums.
#: rxvlan/txvlan keep 802.1Q tags inside the frame.
OFFLOADS = ("tso", "gso", "gro", "tx", "rx", "rxvlan", "txvlan")


class TestbedError(RuntimeError):
    pass


def sh(cmd: list[str], ns: str | None = None, check: bool = True,
       capture: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    """Runs ``cmd`` (in namespace ``ns`` if given)."""
    full = (["ip", "netns", "exec", ns] if ns else []) + cmd
    r = subprocess.run(full, capture_output=capture, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise TestbedError(f"{' '.join(full)}: exit {r.returncode}: {(r.stderr or '').strip()}")
    return r


def missing_requirements() -> list[str]:
    """What prevents the testbed from running here (empty when it can)."""
    out = []
    if os.geteuid() != 0:
        out.append("must run as root (network namespaces, raw sockets)")
    for tool in ("ip", "ss"):
        if shutil.which(tool) is None:
            out.append(f"'{tool}' not found (install iproute2)")
    if shutil.which("ethtool") is None:
        out.append("'ethtool' not found (apt-get install -y ethtool)")
    return out


def available_cc() -> list[str]:
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return f.read().split()
    except OSError:
        return []


#: A host link's token bucket, bytes: a full Ethernet frame (1514) and a
#: little more (``tbf`` refuses a frame larger than its bucket).
TBF_BURST = 1600


@dataclass
class Topology:
    """``senders`` -> [LAN A] -> gateway(s) -> [LAN B] -> ``receivers``.

    With one host on a side, its veth goes straight to the gateway; with
    several, a Linux bridge in a LAN namespace joins them (so the gateway
    always has exactly two interfaces, ``a`` and ``b``).

    ``hops`` > 1 puts several gateway namespaces in series (``<prefix>-gw``,
    ``<prefix>-gw1``, ...), hop k's ``gwb`` cabled to hop k+1's ``gwa``:
    e.g. a WAN emulator followed by an edge gateway. Senders attach to the
    first hop, receivers to the last.
    """

    prefix: str
    senders: int = 1
    receivers: int = 1
    #: If set (hex CPU mask), end hosts process received frames on these
    #: CPUs (RPS). With veth, a frame the bridge transmits is otherwise
    #: processed by the receiving host's whole TCP stack inside the bridge's
    #: own send call, so the bridge's CPU would pay for the end hosts too.
    rps_mask: str | None = None
    namespaces: list[str] = field(default_factory=list)
    hops: int = 1
    #: Keep the veths' offloads (TSO/GSO, checksum offload) as the kernel
    #: sets them, as on a server whose NIC aggregates: only for the kernel's
    #: own forwarding (the bridge, the kernel datapath); the packet
    #: datapath needs wire-size frames with full checksums (OFFLOADS).
    offloads: bool = False

    @property
    def gw(self) -> str:
        return f"{self.prefix}-gw"

    def hop(self, k: int) -> str:
        """Namespace of gateway hop ``k`` (hop 0 is :attr:`gw`)."""
        return self.gw if k == 0 else f"{self.prefix}-gw{k}"

    def sender(self, i: int) -> str:
        return f"{self.prefix}-s{i}"

    def receiver(self, j: int) -> str:
        return f"{self.prefix}-r{j}"

    @staticmethod
    def sender_addr(i: int) -> str:
        return f"10.77.1.{i + 1}"

    @staticmethod
    def receiver_addr(j: int) -> str:
        return f"10.77.2.{j + 1}"

    def _ns(self, name: str) -> str:
        sh(["ip", "netns", "add", name])
        self.namespaces.append(name)
        sh(["ip", "link", "set", "lo", "up"], ns=name)
        sh(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"], ns=name, check=False)
        return name

    def _veth(self, ns1: str, if1: str, ns2: str, if2: str) -> None:
        sh(["ip", "link", "add", if1, "netns", ns1, "type", "veth", "peer", "name", if2, "netns", ns2])
        for ns, dev in ((ns1, if1), (ns2, if2)):
            if self.offloads:
                sh(["ip", "link", "set", "dev", dev, "up"], ns=ns)
                continue
            # One ethtool call for all features; one per feature if a
            # kernel refuses some of them.
            r = sh(["ethtool", "-K", dev] + [x for f in OFFLOADS for x in (f, "off")], ns=ns, check=False)
            if r.returncode != 0:
                for feat in OFFLOADS:
                    sh(["ethtool", "-K", dev, feat, "off"], ns=ns, check=False)
            sh(["ip", "link", "set", "dev", dev, "up"], ns=ns)

    def _side(self, hosts: list[str], addrs: list[str], gw_if: str, lan: str, gw_ns: str | None = None) -> None:
        gw_ns = gw_ns or self.gw
        for h, _a in zip(hosts, addrs):
            self._ns(h)
        if len(hosts) == 1:
            self._veth(hosts[0], "eth0", gw_ns, gw_if)
        else:
            self._ns(lan)
            sh(["ip", "link", "add", "br0", "type", "bridge"], ns=lan)
            sh(["ip", "link", "set", "dev", "br0", "up"], ns=lan)
            for k, h in enumerate(hosts):
                self._veth(h, "eth0", lan, f"p{k}")
                sh(["ip", "link", "set", "dev", f"p{k}", "master", "br0"], ns=lan)
            self._veth(lan, "uplink", gw_ns, gw_if)
            sh(["ip", "link", "set", "dev", "uplink", "master", "br0"], ns=lan)
        for h, a in zip(hosts, addrs):
            sh(["ip", "addr", "add", f"{a}/16", "dev", "eth0"], ns=h)
            if self.rps_mask:
                sh(["sh", "-c", f"echo {self.rps_mask} > /sys/class/net/eth0/queues/rx-0/rps_cpus"], ns=h)

    def create(self) -> None:
        try:
            for k in range(self.hops):
                self._ns(self.hop(k))
            for k in range(self.hops - 1):
                self._veth(self.hop(k), "gwb", self.hop(k + 1), "gwa")
            self._side([self.sender(i) for i in range(self.senders)],
                       [self.sender_addr(i) for i in range(self.senders)], "gwa", f"{self.prefix}-la")
            self._side([self.receiver(j) for j in range(self.receivers)],
                       [self.receiver_addr(j) for j in range(self.receivers)], "gwb", f"{self.prefix}-lb",
                       gw_ns=self.hop(self.hops - 1))
        except BaseException:
            self.destroy()
            raise

    def shape_hosts(self, links) -> None:
        """Rate-limits every end host's link, each direction on its own
        (``links``: :class:`.runner.HostLinks`): a token bucket (``tbf``) on
        the host's ``eth0`` for what it sends, and on its port of the LAN's
        bridge for what it receives (with one host on a side there is no
        bridge, and the hop next to it runs at that host's rate already:
        the WAN emulator's rate is the access rate x pairs). The bucket
        holds one full frame (1514 bytes) and a little more, so frames
        leave at the link's rate one by one as from a serializing link;
        its limit is the link's buffer."""

        def tbf(ns: str, dev: str, bps: float, limit: int) -> None:
            sh(["tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{int(bps)}bit",
                "burst", str(TBF_BURST), "limit", str(max(int(limit), 2 * TBF_BURST))], ns=ns)

        sides = ((self.senders, self.sender, f"{self.prefix}-la",
                  links.sender_bps, links.sender_limit, links.to_sender_bps, links.to_sender_limit),
                 (self.receivers, self.receiver, f"{self.prefix}-lb",
                  links.receiver_bps, links.receiver_limit, links.to_receiver_bps, links.to_receiver_limit))
        for n, host, lan, out_bps, out_limit, in_bps, in_limit in sides:
            for k in range(n):
                tbf(host(k), "eth0", out_bps, out_limit)
                if n > 1:
                    tbf(lan, f"p{k}", in_bps, in_limit)

    def kernel_bridge(self) -> None:
        """Joins ``a`` and ``b`` with a Linux bridge in every gateway
        namespace (the kernel-forwarding baseline)."""
        for k in range(self.hops):
            ns = self.hop(k)
            sh(["ip", "link", "add", "kbr", "type", "bridge"], ns=ns)
            for dev in ("gwa", "gwb"):
                sh(["ip", "link", "set", "dev", dev, "master", "kbr"], ns=ns)
            sh(["ip", "link", "set", "dev", "kbr", "up"], ns=ns)

    def destroy(self) -> None:
        for ns in reversed(self.namespaces):
            r = sh(["ip", "netns", "pids", ns], check=False)
            for pid in (r.stdout or "").split():
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
            sh(["ip", "netns", "del", ns], check=False)
        self.namespaces.clear()


def cpu_plan(n_cpus: int | None = None) -> tuple[int | None, str | None]:
    """(CPU for the gateway, RPS mask of the other CPUs) on a multi-core
    machine: the bridge gets a core of its own; (None, None) on one core."""
    n = n_cpus or os.cpu_count() or 1
    if n < 2:
        return None, None
    mask = ((1 << n) - 1) & ~1
    return 0, format(mask, "x")


def leftover_namespaces(prefix: str = "nrtb") -> list[str]:
    r = sh(["ip", "netns", "list"], check=False)
    return [ln.split()[0] for ln in (r.stdout or "").splitlines() if ln.startswith(prefix)]
