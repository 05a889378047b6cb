"""Simulator scenario files, run in the testbed: one file, both worlds.

A testbed scenario is an ordinary simulator scenario (docs/scenarios.md):
``netreturn run FILE`` simulates it, ``netreturn testbed sweep FILE`` runs
it with real Linux TCP through the real gateway. The file is read by the
simulator's own loader through the native extension (``[params]``, ``--set``
overrides, ``"{name}"`` substitution, units, every schema check); this
module only maps what it describes onto namespaces:

* ``topology.kind = "dumbbell"`` only. ``pairs`` sender and receiver
  namespaces (``left<i>`` -> ``<prefix>-s<i>``, ``right<i>`` -> ``-r<i>``).
* Two gateways in series. Hop ``path`` (a WAN emulator, controller none)
  carries the propagation delay of the whole path (access + bottleneck +
  receivers round trips, half each way) at the senders' aggregate access
  rate (``access.rate`` x ``pairs``). Hop ``bottleneck`` is the dumbbell's
  ``R1->R2`` queue: ``bottleneck.rate``, ``queue``, ``buffer``, ``loss``, and
  the window controller with its ``gateway.<method>`` parameters (passed as
  ``--ctl KEY=VALUE`` with the scenario's own keys), no delay.
  A constant delay in series with a FIFO commutes with it, so the queue,
  the drops and every RTT are those of the dumbbell; the controller sees
  the same handshakes and the same queue.
* Access and receiver links are not rate-limited one by one: they must be
  at least as fast as the bottleneck (an error says so otherwise).
* ``tcp.cc``: cubic, reno, newreno (Linux reno is NewReno with SACK).
  ``tcp.rcv_buf`` / ``snd_buf`` become the autotuning ceilings
  (``tcp_rmem`` / ``tcp_wmem`` max). Other TCP fields are the kernel's and
  are listed as notes when a file sets them.
* ``traffic``: ``tcp-file`` entries only (``from``/``to`` = ``left``/``right``
  or ``left<i>``/``right<i>``), starts fixed or drawn from ``uniform`` /
  ``exponential`` with the repetition's seed.
* ``run.stop`` bounds a run (the testbed's timeout); ``run.seeds`` is the
  default number of repetitions.

Errors name the file, the field and what is allowed (exit status 2).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .. import _native
from ..scenarios import ScenarioError, load, resolve as resolve_scenario
from .runner import FlowPlan, Hop

#: Linux's names for the simulator's congestion controls (Linux reno is
#: NewReno with SACK); the others have no Linux counterpart.
CC = {"cubic": "cubic", "reno": "reno", "newreno": "reno"}
#: TCP fields of the simulator the kernel decides for itself.
KERNEL_TCP = ["segment_size", "sack", "timestamps", "window_scaling", "delayed_ack_count",
              "delayed_ack_timeout", "min_rto", "initial_cwnd", "recovery", "cubic"]


def controllers() -> list[str]:
    """The window controllers' names, from the registry (crates/control)."""
    return [c["name"] for c in _native.mechanisms()["controllers"]]


class TestbedScenarioError(ValueError):
    """A scenario the testbed cannot run: names the file, the field and
    what is allowed."""

    __test__ = False  # not a pytest class

    def __init__(self, file: str, field: str, message: str):
        super().__init__(f"{file}: field `{field}`: {message}" if field else f"{file}: {message}")
        self.file, self.field, self.message = file, field, message


# -- quantities: the one parser (crates/base/src/units.rs) ----------------------

def parse_time(v: Any) -> float:
    """Seconds from "80ms", "1.5s", a number of seconds."""
    return _native.parse_time(v)


def parse_rate(v: Any) -> float:
    """Bits per second from "45Mbps", "1Gbps", a number."""
    return float(_native.parse_rate(v))


def parse_size(v: Any) -> tuple[str, float]:
    """("bytes", n) or ("packets", n) from "97kB", "100p", a number of bytes."""
    unit, n = _native.parse_size(v)
    return unit, float(n)


def fmt_rate(bps: float) -> str:
    """The gateway's spelling of a rate."""
    if bps >= 1e9 and bps % 1e9 == 0:
        return f"{int(bps // 1e9)}gbit"
    if bps >= 1e6 and bps % 1e6 == 0:
        return f"{int(bps // 1e6)}mbit"
    if bps >= 1e3 and bps % 1e3 == 0:
        return f"{int(bps // 1e3)}kbit"
    return f"{int(round(bps))}bit"


def fmt_time(s: float) -> str:
    return f"{round(s * 1e6)}us"


def toml_literal(v: Any) -> str:
    """A value of the scenario document written back as a TOML literal, the
    form the gateway's ``--ctl KEY=VALUE`` reads (formatting, not parsing)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_literal(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"{v!r} has no TOML form")


# -- reading a scenario ------------------------------------------------------

def resolve(name: str | Path) -> Path:
    """A path as given, or a bundled scenario (the simulator's lookup)."""
    try:
        return resolve_scenario(name)
    except ScenarioError as e:
        raise TestbedScenarioError(str(name), "", e.detail or str(e)) from None


def read(name: str | Path, overrides: Mapping[str, Any] | None = None) -> tuple[Path, dict, dict]:
    """(path, document with parameters substituted, parameters), from the
    simulator's loader: a file it rejects raises its ScenarioError (file,
    field, what is allowed)."""
    path = resolve(name)
    info = load(path, dict(overrides or {}))
    doc = dict(info["document"])
    doc.pop("params", None)
    return path, doc, info["params"]


# -- the mapping -------------------------------------------------------------

@dataclass
class Plan:
    """What one scenario (with its overrides) runs in the testbed."""

    file: str
    name: str
    params: dict
    senders: int
    receivers: int
    hops: list[Hop]
    flows: list[dict]  # {sender, receiver, nbytes, start: ("fixed", s) | ("uniform", a, b) | ("exponential", m)}
    cc: str
    tcp_mem_max: int
    timeout: float
    reps: int
    base_rtt_s: float
    bottleneck_bps: float
    bottleneck_hop: int
    buffer_bytes: float
    notes: list[str] = field(default_factory=list)
    paper: dict | None = None

    def flow_plan(self, rep: int) -> list[FlowPlan]:
        """Start times of repetition ``rep`` (seeded like the simulator's
        seeds, though not the same draws)."""
        rng = random.Random(rep * 7919 + 17)
        out = []
        for f in self.flows:
            st = f["start"]
            if st[0] == "uniform":
                t = rng.uniform(st[1], st[2])
            elif st[0] == "exponential":
                t = rng.expovariate(1.0 / st[1]) if st[1] > 0 else 0.0
            else:
                t = st[1]
            out.append(FlowPlan(f["sender"], f["receiver"], f["nbytes"], round(t, 6)))
        return out


def _get(file: str, d: dict, key: str, at: str, conv=None, default=None, required=False):
    if key not in d:
        if required:
            raise TestbedScenarioError(file, f"{at}.{key}" if at else key, "missing")
        return default
    v = d[key]
    if conv is None:
        return v
    try:
        return conv(v)
    except (ValueError, TypeError) as e:
        raise TestbedScenarioError(file, f"{at}.{key}" if at else key, str(e)) from None


def _link(file: str, topo: dict, name: str) -> dict:
    at = f"topology.{name}"
    d = topo[name]
    rate = _get(file, d, "rate", at, parse_rate, required=True)
    delay = _get(file, d, "delay", at, parse_time)
    rtt = _get(file, d, "rtt", at, parse_time)
    one_way = delay if delay is not None else (rtt / 2 if rtt is not None else 0.0)
    queue = _get(file, d, "queue", at, default="droptail")
    buffer = _get(file, d, "buffer", at, parse_size, default=("packets", 100.0))
    loss = _get(file, d, "loss", at, float, default=0.0)
    if not 0.0 <= loss < 1.0:
        raise TestbedScenarioError(file, f"{at}.loss", f"{loss} is not a probability in [0, 1)")
    return {"rate": rate, "one_way": one_way, "queue": queue, "buffer": buffer, "loss": loss,
            "gateway": d.get("gateway"), "red": d.get("red"), "at": at}


def _ctl(file: str, link: dict, method: str) -> list[str]:
    """--ctl arguments for the controller ``method``: its ``gateway.<method>``
    table as the scenario writes it (the gateway reads the same keys with
    the same parser; the simulator's loader has checked them already)."""
    g = link["gateway"] or {}
    out = []
    if "assume_wscale" in g:
        out.append(f"assume_wscale={toml_literal(g['assume_wscale'])}")
    for k, v in (g.get(method) or {}).items():
        out.append(f"{k}={toml_literal(v)}")
    return out


def _ngwa_hops(file: str, doc: dict, bottleneck: Hop) -> list[Hop]:
    """NGWA (``[ngwa]``, mode 1..8): the bottleneck gateway marks (role
    router) and an edge gateway before the receivers applies the receiver
    rule (role receiver-edge), real receivers being unpatched (SPEC.md 2.6).
    The table's keys go to both as ``--ngwa KEY=VALUE``, read by the
    gateway with the simulator's parser, which also refuses what Linux
    cannot honour (modes without CW). Returns the edge hop to append."""
    n = doc.get("ngwa") or {}
    if not n.get("mode"):
        return []
    if "routers" in n:
        raise TestbedScenarioError(
            file,
            "ngwa.routers",
            "names simulated interfaces; the testbed marks at the "
            "bottleneck gateway and runs the receiver rule at an edge gateway; allowed: no routers key",
        )
    args = [x for k, v in n.items() if k != "role" for x in ("--ngwa", f"{k}={toml_literal(v)}")]
    bottleneck.args = bottleneck.args + args + ["--ngwa", "role=router"]
    return [Hop(name="edge", rate=None, delay="0us", args=args + ["--ngwa", "role=receiver-edge"])]


def _queue_spec(file: str, link: dict, mss: int) -> tuple[str, float]:
    """The gateway's --queue for a link, and the buffer in bytes."""
    unit, n = link["buffer"]
    limit = f"packets={int(n)}" if unit == "packets" else f"bytes={int(n)}"
    buf_bytes = n * (mss + 52) if unit == "packets" else n
    q = link["queue"]
    if q in ("red", "ared"):
        # Unset keys: the gateway's Linux-like preset, the simulator's too
        # (min B/12, max B/4, w_q 0.002, max_p 0.02; docs/scenarios.md).
        parts = [q, f"bytes={int(buf_bytes)}"]
        for k, v in (link["red"] or {}).items():
            parts.append(f"{k}={toml_literal(v)}")
        return ",".join(parts), buf_bytes
    return f"droptail,{limit}", buf_bytes


def _host(file: str, name: Any, at: str, side: str, n: int) -> list[int]:
    if name == side:
        return list(range(n))
    m = re.fullmatch(rf"{side}(\d+)", str(name))
    if m and int(m.group(1)) < n:
        return [int(m.group(1))]
    raise TestbedScenarioError(
        file, at, f"{name!r} is not a host of this side; allowed: {side}, {side}0..{side}{n - 1}"
    )


def _start(file: str, v: Any, at: str):
    try:
        if isinstance(v, dict):
            if "uniform" in v and len(v) == 1 and isinstance(v["uniform"], list) and len(v["uniform"]) == 2:
                a, b = (parse_time(x) for x in v["uniform"])
                return ("uniform", a, b)
            if "exponential" in v and len(v) == 1:
                return ("exponential", parse_time(v["exponential"]))
            raise ValueError("expected a time, { uniform = [a, b] } or { exponential = mean }")
        return ("fixed", parse_time(v if v is not None else 0))
    except ValueError as e:
        raise TestbedScenarioError(file, at, str(e)) from None


def plan(name: str | Path, overrides: Mapping[str, Any] | None = None) -> Plan:
    """Validates ``name`` with ``overrides`` (the simulator's loader) and
    maps it onto the testbed."""
    path, doc, params = read(name, overrides)
    file = str(path)
    notes: list[str] = []
    # The simulator's loader has checked the schema (fields, types, units);
    # what follows is what the testbed can and cannot emulate.
    topo = doc["topology"]
    kind = topo.get("kind")
    if kind != "dumbbell":
        raise TestbedScenarioError(file, "topology.kind", f"{kind!r}: the testbed maps dumbbell topologies only; "
                                   "allowed: dumbbell")
    pairs = topo.get("pairs")
    if not isinstance(pairs, int) or isinstance(pairs, bool) or not 1 <= pairs <= 16:
        raise TestbedScenarioError(file, "topology.pairs", f"{pairs!r}: the testbed runs 1..16 pairs")
    access, bott, recv = (_link(file, topo, n) for n in ("access", "bottleneck", "receivers"))
    for link in (access, recv):
        if link["rate"] < bott["rate"]:
            raise TestbedScenarioError(
                file,
                f"{link['at']}.rate",
                f"{fmt_rate(link['rate'])} is below the bottleneck's {fmt_rate(bott['rate'])}: "
                "the testbed emulates one rate limit, the bottleneck's; allowed: >= topology.bottleneck.rate",
            )
        if link["queue"] != "droptail":
            raise TestbedScenarioError(file, f"{link['at']}.queue", f"{link['queue']!r}: only the bottleneck "
                                       "runs a queue discipline in the testbed; allowed: droptail")
        if link["loss"]:
            raise TestbedScenarioError(file, f"{link['at']}.loss", "the testbed emulates loss on the bottleneck "
                                       "only; allowed: 0")
    tcp = doc.get("tcp", {}) or {}
    cc_name = tcp.get("cc", "cubic")
    if cc_name not in CC:
        raise TestbedScenarioError(file, "tcp.cc", f"{cc_name!r} has no Linux counterpart; allowed in the testbed: "
                                   + ", ".join(CC))
    for k in tcp:
        if k in KERNEL_TCP:
            notes.append(f"tcp.{k} = {tcp[k]!r} is the simulator's; the testbed uses the kernel's setting")
    mss = 1448  # Linux over a 1500-byte MTU with timestamps
    bufs = []
    for k in ("rcv_buf", "snd_buf"):
        if k in tcp:
            unit, n = _get(file, tcp, k, "tcp", parse_size)
            bufs.append(int(n * (mss + 52) if unit == "packets" else n))
    tcp_mem_max = max(bufs + [1 << 20]) if bufs else 64 << 20
    # Hops.
    method = bott["queue"]
    queue, buf_bytes = _queue_spec(file, bott, mss)
    controller = method if method in controllers() else "none"
    ctl = _ctl(file, bott, method) if controller != "none" else []
    one_way = access["one_way"] + bott["one_way"] + recv["one_way"]
    path_rate = access["rate"] * pairs
    hops = [
        Hop(name="path", rate=fmt_rate(path_rate), delay=fmt_time(one_way), queue="droptail,packets=10000"),
        Hop(name="bottleneck", rate=fmt_rate(bott["rate"]), delay="0us", queue=queue, controller=controller,
            ctl=ctl, loss=bott["loss"]),
    ]
    hops += _ngwa_hops(file, doc, hops[1])
    # Traffic.
    traffic = doc.get("traffic", []) or []
    if not isinstance(traffic, list) or not traffic:
        raise TestbedScenarioError(file, "traffic", "needs at least one [[traffic]] of kind tcp-file")
    flows: list[dict] = []
    for i, t in enumerate(traffic):
        at = f"traffic[{i}]"
        if t.get("kind") != "tcp-file":
            raise TestbedScenarioError(file, f"{at}.kind", f"{t.get('kind')!r}: the testbed runs file transfers "
                                       "only; allowed: tcp-file")
        src = _host(file, t.get("from"), f"{at}.from", "left", pairs)
        dst = _host(file, t.get("to"), f"{at}.to", "right", pairs)
        count = t.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 64:
            raise TestbedScenarioError(file, f"{at}.count", f"{count!r}: allowed 1..64 flows")
        unit, nbytes = _get(file, t, "bytes", at, parse_size, required=True)
        if unit == "packets" or nbytes < 1:
            raise TestbedScenarioError(file, f"{at}.bytes", "a file size in bytes like \"25MB\"")
        start = _start(file, t.get("start"), f"{at}.start")
        for k in range(count):
            flows.append({"sender": src[k % len(src)], "receiver": dst[k % len(dst)], "nbytes": int(nbytes),
                          "start": start})
    if len(flows) > 64:
        raise TestbedScenarioError(file, "traffic", f"{len(flows)} flows; the testbed runs at most 64")
    run = doc.get("run", {}) or {}
    stop = _get(file, run, "stop", "run", parse_time, default=3600.0)
    reps = run.get("seeds", 30)
    for k, v in run.items():
        if k in ("warmup",) and parse_time(v) > 0:
            notes.append("run.warmup is ignored by the testbed (every flow counts)")
    return Plan(file=file, name=doc["name"], params=params, senders=pairs, receivers=pairs, hops=hops, flows=flows,
                cc=CC[cc_name], tcp_mem_max=tcp_mem_max, timeout=min(stop, 600.0), reps=int(reps),
                base_rtt_s=2 * one_way, bottleneck_bps=bott["rate"], bottleneck_hop=1, buffer_bytes=buf_bytes,
                notes=notes, paper=doc.get("paper"))
