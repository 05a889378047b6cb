"""Simulator scenario files, run in the testbed: one file, both worlds.

A testbed scenario is an ordinary simulator scenario (docs/scenarios.md):
``netreturn run FILE`` simulates it, ``netreturn testbed sweep FILE`` runs
it with real Linux TCP through the real gateway. This module reads the file
with the simulator's rules (``[params]``, ``--set`` overrides, ``"{name}"``
substitution, units) and maps what it describes onto namespaces:

* ``topology.kind = "dumbbell"`` only. ``pairs`` sender and receiver
  namespaces (``left<i>`` -> ``<prefix>-s<i>``, ``right<i>`` -> ``-r<i>``).
* Two gateways in series. Hop ``path`` (a WAN emulator, controller none)
  carries the propagation delay of the whole path (access + bottleneck +
  receivers round trips, half each way) at the senders' aggregate access
  rate (``access.rate`` x ``pairs``). Hop ``bottleneck`` is the dumbbell's
  ``R1->R2`` queue: ``bottleneck.rate``, ``queue``, ``buffer``, ``loss``, and
  the window controller with its ``gateway.<method>`` parameters, no delay.
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

import math
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .runner import FlowPlan, Hop

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]

REPO_SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"

QUEUES = ["droptail", "red", "ared", "ewt", "ewa", "awm", "sap-law", "rwm"]
CONTROLLERS = {"ewt": "ewt", "ewa": "ewa", "awm": "awm", "sap-law": "saplaw", "rwm": "rwm"}
#: gateway.<method>.<key> -> the gateway's --ctl key.
CTL_KEYS = {
    "ewt": {"st": "st"},
    "ewa": {"alpha": "alpha", "w_up": "wup", "w_down": "wdown", "interval": "interval", "low": "tl", "high": "th"},
    "awm": {"target": "target", "beta": "beta", "design_rtt": "design_rtt", "estimator": "n"},
    "sap-law": {"udp_time_constant": "tau"},
    "rwm": {"delta": "delta", "share": "share", "classes": "class"},
}
CC = {"cubic": "cubic", "reno": "reno", "newreno": "reno"}
#: TCP fields of the simulator the kernel decides for itself.
KERNEL_TCP = ["segment_size", "sack", "timestamps", "window_scaling", "delayed_ack_count",
              "delayed_ack_timeout", "min_rto", "initial_cwnd", "recovery", "hystart",
              "fast_convergence", "tcp_friendliness"]


class TestbedScenarioError(ValueError):
    """A scenario the testbed cannot run: names the file, the field and
    what is allowed."""

    __test__ = False  # not a pytest class

    def __init__(self, file: str, field: str, message: str):
        super().__init__(f"{file}: field `{field}`: {message}" if field else f"{file}: {message}")
        self.file, self.field, self.message = file, field, message


# -- units (the simulator's, crates/sim/src/units.rs) -------------------------

_NUM = re.compile(r"^\s*([-+]?[0-9_]*\.?[0-9_]+(?:[eE][-+]?[0-9]+)?)\s*(.*?)\s*$")


def _split(s: str) -> tuple[float, str] | None:
    m = _NUM.match(s)
    if not m:
        return None
    return float(m.group(1).replace("_", "")), m.group(2)


def parse_time(v: Any) -> float:
    """Seconds from "80ms", "1.5s", a number of seconds."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if v < 0:
            raise ValueError(f"{v} must not be negative")
        return float(v)
    sp = _split(str(v))
    units = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0}
    if sp is None or sp[1] not in units:
        raise ValueError(f"{v!r} is not a time like \"80ms\"; units: ns, us, ms, s, min")
    if sp[0] < 0:
        raise ValueError(f"time {v!r} must not be negative")
    return sp[0] * units[sp[1]]


def parse_rate(v: Any) -> float:
    """Bits per second from "45Mbps", "1Gbps", a number."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        r = float(v)
    else:
        sp = _split(str(v))
        units = {"": 1.0, "bps": 1.0, "b/s": 1.0, "kbps": 1e3, "Kbps": 1e3, "kb/s": 1e3, "Kb/s": 1e3,
                 "Mbps": 1e6, "mbps": 1e6, "Mb/s": 1e6, "Mb": 1e6, "Gbps": 1e9, "gbps": 1e9, "Gb/s": 1e9}
        if sp is None or sp[1] not in units:
            raise ValueError(f"{v!r} is not a rate like \"45Mbps\"; units: bps, kbps, Mbps, Gbps")
        r = sp[0] * units[sp[1]]
    if not r > 0 or math.isinf(r):
        raise ValueError(f"rate {v!r} must be positive")
    return r


def parse_size(v: Any) -> tuple[str, float]:
    """("bytes", n) or ("packets", n) from "97kB", "100p", a number of bytes."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if v < 0:
            raise ValueError(f"{v} must not be negative")
        return "bytes", float(v)
    sp = _split(str(v))
    units = {"": 1.0, "B": 1.0, "kB": 1e3, "KB": 1e3, "k": 1e3, "MB": 1e6, "M": 1e6, "GB": 1e9,
             "KiB": 1024.0, "MiB": 1024.0 ** 2, "Mbit": 1e6 / 8, "Mb": 1e6 / 8}
    if sp is not None and sp[1] in ("p", "pkts", "packets"):
        return "packets", float(round(sp[0]))
    if sp is None or sp[1] not in units:
        raise ValueError(f"{v!r} is not a size like \"97kB\"; units: B, kB, MB, GB, KiB, MiB, Mbit, p (packets)")
    if sp[0] < 0:
        raise ValueError(f"size {v!r} must not be negative")
    return "bytes", sp[0] * units[sp[1]]


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


# -- reading a scenario ------------------------------------------------------

def resolve(name: str | Path) -> Path:
    """A path as given, or relative to the repository's ``scenarios/``."""
    p = Path(name)
    for c in (p, p.with_suffix(".toml"), REPO_SCENARIOS / p, (REPO_SCENARIOS / p).with_suffix(".toml")):
        if c.is_file():
            return c
    raise TestbedScenarioError(str(name), "", f"no such scenario file (looked in . and {REPO_SCENARIOS})")


def parse_override(value: Any) -> Any:
    """A --set value: a TOML literal (numbers, booleans, quoted strings), else
    the bare string (as the simulator reads it)."""
    if not isinstance(value, str):
        return value
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value


def _type(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string"}.get(type(v), type(v).__name__)


def _substitute(v: Any, params: dict, path: str, file: str) -> Any:
    if isinstance(v, str) and v.startswith("{") and v.endswith("}"):
        name = v[1:-1]
        if name not in params:
            raise TestbedScenarioError(file, path, f"unknown parameter {{{name}}}; declared in [params]: "
                                       + ", ".join(params))
        return params[name]
    if isinstance(v, list):
        return [_substitute(x, params, f"{path}[{i}]", file) for i, x in enumerate(v)]
    if isinstance(v, dict):
        return {k: _substitute(x, params, f"{path}.{k}" if path else k, file) for k, x in v.items()}
    return v


def read(name: str | Path, overrides: Mapping[str, Any] | None = None) -> tuple[Path, dict, dict]:
    """(path, document with parameters substituted, parameters)."""
    path = resolve(name)
    file = str(path)
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise TestbedScenarioError(file, "", f"not valid TOML: {e}") from None
    params = dict(doc.pop("params", {}) or {})
    for k, v in (overrides or {}).items():
        if k not in params:
            raise TestbedScenarioError(file, f"params.{k}", "--set names an unknown parameter; this scenario has: "
                                       + ", ".join(params))
        old, new = params[k], parse_override(v)
        ok = (type(old) is type(new)) or (isinstance(old, float) and isinstance(new, int) and not isinstance(new, bool))
        if not ok:
            raise TestbedScenarioError(file, f"params.{k}", f"--set {k}={v}: expected {_type(old)} like the default {old!r}")
        params[k] = float(new) if isinstance(old, float) else new
    return path, _substitute(doc, params, "", file), params


def validate_in_simulator(name: str | Path, overrides: Mapping[str, Any] | None) -> None:
    """The simulator's own validation of the file (every schema error with
    its field), when the native extension is importable."""
    try:
        from ..scenarios import load  # type: ignore[import-not-found]
    except Exception:
        return
    load(name, dict(overrides or {}))


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
    d = topo.get(name)
    if not isinstance(d, dict):
        raise TestbedScenarioError(file, at, "missing; a dumbbell needs access, bottleneck and receivers links")
    rate = _get(file, d, "rate", at, parse_rate, required=True)
    delay = _get(file, d, "delay", at, parse_time)
    rtt = _get(file, d, "rtt", at, parse_time)
    if delay is not None and rtt is not None:
        raise TestbedScenarioError(file, at, "give delay (one way) or rtt, not both")
    one_way = delay if delay is not None else (rtt / 2 if rtt is not None else 0.0)
    queue = _get(file, d, "queue", at, default="droptail")
    if queue not in QUEUES:
        raise TestbedScenarioError(file, f"{at}.queue", f"unknown queue {queue!r}; allowed: {', '.join(QUEUES)}")
    buffer = _get(file, d, "buffer", at, parse_size, default=("packets", 100.0))
    loss = _get(file, d, "loss", at, float, default=0.0)
    if not 0.0 <= loss < 1.0:
        raise TestbedScenarioError(file, f"{at}.loss", f"{loss} is not a probability in [0, 1)")
    return {"rate": rate, "one_way": one_way, "queue": queue, "buffer": buffer, "loss": loss,
            "gateway": d.get("gateway"), "red": d.get("red"), "at": at}


def _ctl(file: str, link: dict, method: str, mss: int) -> list[str]:
    """--ctl arguments for the controller ``method`` from ``gateway``."""
    at = f"{link['at']}.gateway"
    g = link["gateway"]
    if g is None:
        return []
    if not isinstance(g, dict):
        raise TestbedScenarioError(file, at, "must be a table like { ewt = { st = \"29kB\" } }")
    allowed_top = list(CTL_KEYS) + ["assume_wscale"]
    for k in g:
        if k not in allowed_top:
            raise TestbedScenarioError(file, f"{at}.{k}", f"unknown key; allowed: {', '.join(allowed_top)}")
    out = []
    if "assume_wscale" in g:
        out.append(f"assume_wscale={int(g['assume_wscale'])}")
    sub = g.get(method) or {}
    if not isinstance(sub, dict):
        raise TestbedScenarioError(file, f"{at}.{method}", "must be a table")
    keys = CTL_KEYS[method]
    for k, v in sub.items():
        if k not in keys:
            raise TestbedScenarioError(file, f"{at}.{method}.{k}", f"unknown key; allowed: {', '.join(keys)}")
        f = f"{at}.{method}.{k}"
        try:
            if k in ("st", "low", "high", "target"):
                unit, n = parse_size(v)
                out.append(f"{keys[k]}={int(n * (mss + 40) if unit == 'packets' else n)}")
            elif k in ("interval", "design_rtt", "udp_time_constant"):
                out.append(f"{keys[k]}={fmt_time(parse_time(v))}")
            elif k == "estimator":
                if v not in ("oracle", "adaptive"):
                    raise ValueError(f"{v!r} is not one of oracle, adaptive")
                out.append(f"n={v}")
            elif k == "classes":
                if not isinstance(v, list):
                    raise ValueError("expected a list of { ports = [lo, hi], share = 0.5 }")
                for i, c in enumerate(v):
                    if not (isinstance(c, dict) and isinstance(c.get("ports"), list) and len(c["ports"]) == 2
                            and "share" in c):
                        raise TestbedScenarioError(file, f"{f}[{i}]", "expected { ports = [lo, hi], share = 0.5 }")
                    lo, hi = c["ports"]
                    out.append(f"class={int(lo)}-{int(hi)}:{float(c['share'])}")
            else:
                out.append(f"{keys[k]}={float(v)}")
        except (ValueError, TypeError) as e:
            raise TestbedScenarioError(file, f, str(e)) from None
    return out


def _queue_spec(file: str, link: dict, mss: int) -> tuple[str, float]:
    """The gateway's --queue for a link, and the buffer in bytes."""
    unit, n = link["buffer"]
    limit = f"packets={int(n)}" if unit == "packets" else f"bytes={int(n)}"
    buf_bytes = n * (mss + 52) if unit == "packets" else n
    q = link["queue"]
    if q in ("red", "ared"):
        b = int(buf_bytes)
        red = link["red"] or {}
        at = f"{link['at']}.red"
        if not isinstance(red, dict):
            raise TestbedScenarioError(file, at, "must be a table")
        allowed = ["min_th", "max_th", "w_q", "max_p", "gentle", "byte_mode"]
        for k in red:
            if k not in allowed:
                raise TestbedScenarioError(file, f"{at}.{k}", f"unknown key; allowed: {', '.join(allowed)}")
        # Unset keys: the gateway's Linux-like preset, the simulator's too
        # (min B/12, max B/4, w_q 0.002, max_p 0.02; docs/scenarios.md).
        parts = [q, f"bytes={b}"]
        for k, gk in (("min_th", "min"), ("max_th", "max")):
            if k in red:
                try:
                    u, x = parse_size(red[k])
                except ValueError as e:
                    raise TestbedScenarioError(file, f"{at}.{k}", str(e)) from None
                parts.append(f"{gk}={int(x * (mss + 52) if u == 'packets' else x)}")
        for k, gk in (("w_q", "wq"), ("max_p", "maxp")):
            if k in red:
                parts.append(f"{gk}={float(red[k])}")
        if "gentle" in red:
            parts.append(f"gentle={str(bool(red['gentle'])).lower()}")
        if red.get("byte_mode"):
            raise TestbedScenarioError(file, f"{at}.byte_mode", "the gateway's RED counts packets; allowed: false")
        return ",".join(parts), buf_bytes
    return f"droptail,{limit}", buf_bytes


def _host(file: str, name: Any, at: str, side: str, n: int) -> list[int]:
    if name == side:
        return list(range(n))
    m = re.fullmatch(rf"{side}(\d+)", str(name))
    if m and int(m.group(1)) < n:
        return [int(m.group(1))]
    raise TestbedScenarioError(file, at, f"{name!r} is not a host of this side; allowed: {side}, {side}0..{side}{n - 1}")


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


def plan(name: str | Path, overrides: Mapping[str, Any] | None = None, simulator_check: bool = True) -> Plan:
    """Validates ``name`` with ``overrides`` and maps it onto the testbed."""
    if simulator_check:
        validate_in_simulator(name, overrides)
    path, doc, params = read(name, overrides)
    file = str(path)
    notes: list[str] = []
    known = ["name", "description", "reference", "run", "tcp", "topology", "traffic", "paper"]
    for k in doc:
        if k not in known:
            raise TestbedScenarioError(file, k, f"unknown field; allowed: params, {', '.join(known)}")
    if "name" not in doc:
        raise TestbedScenarioError(file, "name", "missing")
    topo = doc.get("topology")
    if not isinstance(topo, dict):
        raise TestbedScenarioError(file, "topology", "missing; the testbed runs kind = \"dumbbell\"")
    kind = topo.get("kind")
    if kind != "dumbbell":
        raise TestbedScenarioError(file, "topology.kind", f"{kind!r}: the testbed maps dumbbell topologies only; "
                                   "allowed: dumbbell")
    for k in topo:
        if k not in ("kind", "pairs", "access", "bottleneck", "receivers"):
            raise TestbedScenarioError(file, f"topology.{k}", "unknown field; allowed: kind, pairs, access, bottleneck, receivers")
    pairs = topo.get("pairs")
    if not isinstance(pairs, int) or isinstance(pairs, bool) or not 1 <= pairs <= 16:
        raise TestbedScenarioError(file, "topology.pairs", f"{pairs!r}: the testbed runs 1..16 pairs")
    access, bott, recv = (_link(file, topo, n) for n in ("access", "bottleneck", "receivers"))
    for link in (access, recv):
        if link["rate"] < bott["rate"]:
            raise TestbedScenarioError(file, f"{link['at']}.rate",
                                       f"{fmt_rate(link['rate'])} is below the bottleneck's {fmt_rate(bott['rate'])}: "
                                       "the testbed emulates one rate limit, the bottleneck's; allowed: >= topology.bottleneck.rate")
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
        elif k not in ("cc", "rcv_buf", "snd_buf"):
            raise TestbedScenarioError(file, f"tcp.{k}", "unknown field; allowed: cc, rcv_buf, snd_buf, "
                                       + ", ".join(KERNEL_TCP))
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
    controller = CONTROLLERS.get(method, "none")
    ctl = _ctl(file, bott, method, mss) if controller != "none" else []
    if controller == "none" and bott["gateway"] is not None:
        _ctl(file, bott, "ewt", mss)  # validates the table's keys all the same
    one_way = access["one_way"] + bott["one_way"] + recv["one_way"]
    path_rate = access["rate"] * pairs
    hops = [
        Hop(name="path", rate=fmt_rate(path_rate), delay=fmt_time(one_way), queue="droptail,packets=10000"),
        Hop(name="bottleneck", rate=fmt_rate(bott["rate"]), delay="0us", queue=queue, controller=controller,
            ctl=ctl, loss=bott["loss"]),
    ]
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
        for k in t:
            if k not in ("kind", "from", "to", "count", "bytes", "start", "port"):
                raise TestbedScenarioError(file, f"{at}.{k}", "unknown field; allowed: from, to, count, bytes, start, port")
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
