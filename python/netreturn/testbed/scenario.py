"""Simulator scenario files, run in the testbed: one file, both worlds.

A testbed scenario is an ordinary simulator scenario (docs/scenarios.md):
``netreturn run FILE`` simulates it, ``netreturn testbed sweep FILE`` runs
it with real Linux TCP through the real gateway. The file is read by the
simulator's own loader through the native extension (``[params]``, ``--set``
overrides, ``"{name}"`` substitution, units, every schema check) and
resolved by the model both worlds share (``netreturn_scenario::Resolved``,
what ``netreturn show-config`` prints); this module only maps it onto
namespaces:

* ``topology.kind = "dumbbell"`` only. ``pairs`` sender and receiver
  namespaces (``left<i>`` -> ``<prefix>-s<i>``, ``right<i>`` -> ``-r<i>``).
* Two gateways in series. Hop ``bottleneck`` is the dumbbell's ``R1->R2``
  link, run by ``netreturn-gateway --config FILE --set NAME=VALUE...`` (the
  scenario file and the user's settings, as given): the gateway resolves
  the link as the simulator does, both directions (rate, one-way delay,
  loss and ``loss_direction``, queue, buffer, RED table, the window
  controller and its table, ``reverse = {...}``, ``[ngwa]``). Nothing of it
  is read or rewritten here. Hop ``path`` (a WAN emulator, controller none)
  comes first and carries the rest of the propagation delay, the access
  and receiver links' (each direction as resolved), at the senders'
  aggregate access rate (access rate x ``pairs``). A constant delay in
  series with a FIFO commutes with it, so the queue, the drops and every
  RTT are those of the dumbbell; the controller sees the same handshakes
  and the same queue.
* Access and receiver links must be DropTail and lossless (an error says
  so otherwise). With the label ``access = "shaped"`` (``--access shaped``,
  the default of ``testbed sweep`` and ``testbed compare``) each host's
  link is rate-limited on its own, both directions, at its resolved rate
  and buffer. A run without the label (``--access aggregate``, the runs
  made before the label existed, and ``testbed rwm``'s default) limits the
  senders only together, in the WAN emulator, and so needs every host's
  link at least as fast as the bottleneck.
* ``tcp.cc``: the registry's controls that Linux runs (cubic, reno, newreno;
  Linux reno is NewReno with SACK: :mod:`.registry`). The resolved
  ``rcv_buf`` / ``snd_buf`` (when the file sets them) become the autotuning
  ceilings (``tcp_rmem`` / ``tcp_wmem`` max), and ``rcv_buf`` each
  receiver's buffer from the handshake on (``tcp_rmem``'s default), as the
  simulator's receivers offer it. Other TCP fields are the
  kernel's and are listed as notes when a file sets them.
* ``traffic``: ``tcp-file`` entries only (``from``/``to`` = ``left``/``right``
  or ``left<i>``/``right<i>``), starts fixed or drawn from ``uniform`` /
  ``exponential`` with the repetition's seed.
* ``run.stop`` bounds a run (the testbed's timeout); ``run.seeds`` is the
  default number of repetitions.
* ``[ngwa]`` (mode 1..8): the bottleneck gateway marks (the file's table,
  role router), an edge gateway before the receivers applies the receiver
  rule (role receiver-edge), real receivers being unpatched (docs/decisions.md §2.6).

Errors name the file, the field and what is allowed (exit status 2).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .. import _native
from ..scenarios import ScenarioError, flow_starts, load, model, overrides_list, resolve as resolve_scenario
from . import registry
from .runner import DATAPATHS, FlowPlan, Hop, HostLinks, check_gateway_args, link_args

#: TCP fields of the simulator the kernel decides for itself.
KERNEL_TCP = ["segment_size", "sack", "timestamps", "window_scaling", "delayed_ack_count",
              "delayed_ack_timeout", "min_rto", "initial_cwnd", "recovery", "cubic"]


def controllers() -> list[str]:
    """The window controllers' names, from the registry (crates/control)."""
    return registry.controllers()


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



# -- the resolved model ------------------------------------------------------
#
# Read through `_native.resolve` (`netreturn_scenario::Resolved` as data):
# the values both worlds run, nothing re-derived here.

@dataclass(frozen=True)
class LinkDir:
    """One direction of a link as the scenario model resolved it."""

    name: str  # "R1->R2"
    rate_bps: int
    delay_s: float
    buffer_bytes: int
    queue: str  # the discipline holding the packets (droptail under a controller)
    loss: float
    controller: str | None
    stage: str | None


@dataclass(frozen=True)
class Resolved:
    """What the testbed needs of ``netreturn_scenario::Resolved``."""

    text: str  # show_config's, for the record
    packet_bytes: int
    bottleneck: str | None  # a link direction's name
    links: dict[str, LinkDir]
    cc: str  # the endpoints' congestion control, a registry name (NGWA and XCP applied)
    rcv_buf: int
    snd_buf: int


def resolved(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Resolved:
    """The scenario as both worlds run it (``_native.resolve``)."""
    r = model(path, overrides)
    links = {
        x["name"]: LinkDir(x["name"], x["rate_bps"], x["delay_ns"] / 1e9, x["buffer_bytes"], x["queue"], x["loss"],
                           x["controller"], x["stage"])
        for x in r["links"]
    }
    t = r["tcp"]
    return Resolved(r["text"], r["packet_bytes"], r["bottleneck"], links, t["cc"], t["rcv_buf"], t["snd_buf"])


def reverse(name: str) -> str:
    """The other direction of a link: ``R1->R2`` -> ``R2->R1``."""
    a, b = name.split("->")
    return f"{b}->{a}"


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
    cc: str  # Linux's name
    tcp_mem_max: int
    timeout: float
    reps: int
    base_rtt_s: float
    bottleneck_bps: float
    bottleneck_hop: int
    buffer_bytes: float
    notes: list[str] = field(default_factory=list)
    paper: dict | None = None
    model: Resolved | None = None
    #: The bottleneck's ``gateway.rwm`` table as the file gives it (with
    #: parameters substituted), for RWM at the senders' edge too.
    rwm_table: dict | None = None
    #: The senders' aggregate access rate (the WAN emulator's), bit/s.
    access_bps: float = 0.0
    #: Every receiver's socket buffer from the handshake on (``tcp_rmem``'s
    #: default), the file's ``tcp.rcv_buf``; None: Linux's 128 KiB, autotuned.
    rcv_buf_start: int | None = None
    #: Each end host's link as the file resolves it (rates and buffers).
    host_links: HostLinks | None = None
    #: Run with each host's link rate-limited on its own (the testbed label
    #: ``access = "shaped"``); otherwise only the hops limit rates.
    shaped: bool = False
    #: Linux settings every end host takes before a run (label ``sysctl``).
    host_sysctls: tuple[tuple[str, str], ...] = ()
    #: The overrides the plan was made with (``NAME=VALUE`` pairs), for the
    #: simulator's draws of the same scenario (:meth:`flow_plan`).
    overrides: tuple[tuple[str, str], ...] = ()

    def flow_plan(self, rep: int) -> list[FlowPlan]:
        """Start times of repetition ``rep``: fixed ones as written; drawn
        ones (``uniform``, ``exponential``) are the simulator's own draws
        for seed ``rep`` (``_native.flow_starts``), so repetition r of the
        testbed and seed r of the simulator start their flows at the same
        times and the two worlds compare run by run. (Before 2026-11-28 the
        testbed drew its own from the same distributions; with four flows
        the draws alone moved the mean FCT by several per cent,
        docs/testbed.md, "The same start times in both worlds".)"""
        if all(f["start"][0] == "fixed" for f in self.flows):
            starts = [f["start"][1] for f in self.flows]
        else:
            starts = flow_starts(self.file, rep, dict(self.overrides))
            if len(starts) != len(self.flows):
                raise TestbedScenarioError(self.file, "traffic", f"the simulator makes {len(starts)} TCP flows of "
                                           f"it and the testbed {len(self.flows)}; allowed: tcp-file traffic only")
        return [FlowPlan(f["sender"], f["receiver"], f["nbytes"], round(t, 6)) for f, t in zip(self.flows, starts)]


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


def _edge_hops(file: str, doc: dict) -> list[Hop]:
    """NGWA (``[ngwa]``, mode 1..8): the bottleneck gateway reads the table
    from the file and marks (role router); an edge gateway before the
    receivers applies the receiver rule (role receiver-edge), real
    receivers being unpatched (docs/decisions.md §2.6). The edge is not a link of the
    scenario, so it takes the table's keys as ``--ngwa KEY=VALUE`` (the
    gateway reads them with the simulator's parser, and refuses what Linux
    cannot honour: modes without CW). Returns the edge hop to append."""
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
    if n.get("role", "router") != "router":
        raise TestbedScenarioError(file, "ngwa.role", f"{n['role']!r}: the testbed's bottleneck gateway marks and "
                                   "an edge gateway runs the receiver rule; allowed: router")
    args = [x for k, v in n.items() if k != "role" for x in ("--ngwa", f"{k}={toml_literal(v)}")]
    return [Hop(name="edge", rate=None, delay="0us", args=args + ["--ngwa", "role=receiver-edge"])]


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


def _edges(file: str, r: Resolved) -> dict[str, LinkDir]:
    """The dumbbell's access and receiver links, both directions, by the
    field that describes them (every pair's are the same: one spec)."""
    names = {"topology.access": "left0->R1", "topology.access.reverse": "R1->left0",
             "topology.receivers": "R2->right0", "topology.receivers.reverse": "right0->R2"}
    missing = [n for n in names.values() if n not in r.links]
    if missing:
        raise TestbedScenarioError(file, "topology", f"no link {missing[0]} in the resolved dumbbell")
    return {f: r.links[n] for f, n in names.items()}


def plan(name: str | Path, overrides: Mapping[str, Any] | None = None, access: str = "aggregate") -> Plan:
    """Validates ``name`` with ``overrides`` (the simulator's loader and
    model) and maps it onto the testbed. ``access`` is the run's label of
    that name (:data:`ACCESS`): only with ``"shaped"``, which limits each
    host's link on its own, may a host's link be slower than the
    bottleneck."""
    path, doc, params = read(name, overrides)
    file = str(path)
    model = resolved(path, overrides)
    notes: list[str] = []
    # The simulator's loader has checked the schema (fields, types, units)
    # and the model has resolved every link; what follows is what the
    # testbed can and cannot emulate.
    topo = doc["topology"]
    kind = topo.get("kind")
    if kind != "dumbbell":
        raise TestbedScenarioError(file, "topology.kind", f"{kind!r}: the testbed maps dumbbell topologies only; "
                                   "allowed: dumbbell")
    pairs = topo.get("pairs")
    if not isinstance(pairs, int) or isinstance(pairs, bool) or not 1 <= pairs <= 16:
        raise TestbedScenarioError(file, "topology.pairs", f"{pairs!r}: the testbed runs 1..16 pairs")
    assert model.bottleneck is not None, "a dumbbell has a bottleneck"
    bott, bott_ba = model.links[model.bottleneck], model.links[reverse(model.bottleneck)]
    if bott.stage or bott_ba.stage:
        st = "topology.bottleneck" + (".reverse" if not bott.stage else "")
        raise TestbedScenarioError(file, f"{st}.queue", f"{bott.stage or bott_ba.stage!r}: the real gateway runs "
                                   "no router stage; allowed: " + ", ".join(registry.queues() + controllers()))
    edges = _edges(file, model)
    for at, link in edges.items():
        if link.rate_bps < bott.rate_bps and access != "shaped":
            raise TestbedScenarioError(
                file,
                f"{at}.rate",
                f"{fmt_rate(link.rate_bps)} is below the bottleneck's {fmt_rate(bott.rate_bps)}: "
                "without --access shaped the testbed limits no host's link on its own; allowed: >= "
                "topology.bottleneck.rate, or --access shaped",
            )
        if link.queue != "droptail" or link.controller or link.stage:
            what = link.controller or link.stage or link.queue
            raise TestbedScenarioError(file, f"{at}.queue", f"{what!r}: only the bottleneck "
                                       "runs a queue discipline in the testbed; allowed: droptail")
        if link.loss:
            raise TestbedScenarioError(file, f"{at}.loss", "the testbed emulates loss on the bottleneck "
                                       "only; allowed: 0")
    tcp = doc.get("tcp", {}) or {}
    try:
        cc = registry.linux_cc(model.cc)
    except ValueError as e:
        mode = (doc.get("ngwa") or {}).get("mode")
        if mode and model.cc != tcp.get("cc"):  # NGWA's modes pick the endpoints' control (CW: NewReno)
            raise TestbedScenarioError(file, "ngwa.mode", f"{mode} makes the endpoints' congestion control "
                                       f"{model.cc!r}: {e}") from None
        raise TestbedScenarioError(file, "tcp.cc", str(e)) from None
    for k in tcp:
        if k in KERNEL_TCP:
            notes.append(f"tcp.{k} = {tcp[k]!r} is the simulator's; the testbed uses the kernel's setting")
    bufs = [b for k, b in (("rcv_buf", model.rcv_buf), ("snd_buf", model.snd_buf)) if k in tcp]
    tcp_mem_max = max(bufs + [1 << 20]) if bufs else 64 << 20
    # The file's receive buffer from the handshake on, as the simulator's
    # receivers offer it (tcp_rmem's default as well as its ceiling): from
    # Linux's 128 KiB default, autotuning held the window at 80 kB through a
    # slow start's third round trip (docs/testbed.md, "The receivers' buffer
    # from the start").
    rcv_buf_start = model.rcv_buf if "rcv_buf" in tcp else None
    # Hops: the rest of the path, then the bottleneck as the file says.
    acc, acc_ba = edges["topology.access"], edges["topology.access.reverse"]
    rcv, rcv_ba = edges["topology.receivers"], edges["topology.receivers.reverse"]
    path_ab, path_ba = acc.delay_s + rcv.delay_s, rcv_ba.delay_s + acc_ba.delay_s
    path_hop = Hop(name="path", rate=fmt_rate(acc.rate_bps * pairs), delay=fmt_time(path_ab),
                   queue="droptail,packets=10000")
    if fmt_time(path_ba) != fmt_time(path_ab):
        path_hop.args = ["--delay-ba", fmt_time(path_ba)]
    sets = [f"{k}={v}" for k, v in overrides_list(overrides)]
    hops = [path_hop, Hop(name="bottleneck", config=str(path.resolve()), sets=sets)]
    hops += _edge_hops(file, doc)
    base_rtt = path_ab + path_ba + bott.delay_s + bott_ba.delay_s
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
                overrides=tuple(overrides_list(overrides)), cc=cc, tcp_mem_max=tcp_mem_max,
                rcv_buf_start=rcv_buf_start,
                timeout=min(stop, 600.0), reps=int(reps),
                base_rtt_s=base_rtt, bottleneck_bps=bott.rate_bps, bottleneck_hop=1,
                buffer_bytes=bott.buffer_bytes, notes=notes, paper=doc.get("paper"), model=model,
                rwm_table=_rwm_table(topo) if bott.controller == "rwm" else None,
                access_bps=acc.rate_bps * pairs,
                host_links=HostLinks(acc.rate_bps, acc_ba.rate_bps, rcv_ba.rate_bps, rcv.rate_bps,
                                     acc.buffer_bytes, acc_ba.buffer_bytes, rcv_ba.buffer_bytes, rcv.buffer_bytes))


def _rwm_table(topo: dict) -> dict:
    """The bottleneck's ``gateway.rwm`` table as written (may be empty:
    RWM's defaults)."""
    return dict(((topo.get("bottleneck") or {}).get("gateway") or {}).get("rwm") or {})


# -- testbed-only settings ------------------------------------------------------
#
# What a scenario file cannot say because the simulator has no such thing:
# labels of a run (``TbSpec.labels``), part of its identity, applied to the
# plan's hops. Absent labels mean the defaults (no jitter, RWM at the
# receivers' edge only, the packet datapath, the hosts' links not shaped
# one by one), so runs made before these existed keep their keys.

#: label -> default.
TESTBED_LABELS = {"jitter": "0ms", "rwm_edges": "receiver", "datapath": "packet", "access": "aggregate",
                  "sysctl": ""}
RWM_EDGES = ("receiver", "both")
#: ``access``: "aggregate", the senders' links limited together by the WAN
#: emulator (access rate x pairs); "shaped", each host's link on its own too
#: (:meth:`.netns.Topology.shape_hosts`), as the simulator's dumbbell.
ACCESS = ("aggregate", "shaped")


def access_of(labels: Mapping[str, str] | None) -> str:
    """The ``access`` of a run with these testbed labels (absent: the
    default, :data:`TESTBED_LABELS`)."""
    return dict(labels or {}).get("access", TESTBED_LABELS["access"])


def access_text(access: str) -> str:
    """How a run with the label ``access`` emulates the hosts' links, for
    the header of a sweep or comparison."""
    if access == "shaped":
        return "shaped, each host's link at the file's rates and buffers (--access shaped)"
    return ("aggregate, the senders limited together by the WAN emulator at access rate x pairs, no host's link on "
            "its own (--access aggregate)")


#: ``sysctl``: the Linux settings every end host's namespace takes before a
#: run (``--host-sysctl NAME=VALUE``), to switch one rule of Linux's TCP
#: (``net.ipv4.tcp_recovery=0``: no RACK) the way the simulator's settings
#: switch one of its own. Only the namespaced TCP and core settings.
HOST_SYSCTL = re.compile(r"net\.(ipv4\.tcp_[a-z0-9_]+|core\.[a-z0-9_]+)")


def host_sysctls(text: str, file: str = "") -> tuple[tuple[str, str], ...]:
    """The settings a ``sysctl`` label names (``"a=1;b=2"``), checked: a
    namespaced TCP or core setting this kernel has. Errors name the option,
    the setting and what is allowed."""
    out = []
    for item in filter(None, (x.strip() for x in str(text).split(";"))):
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not value:
            raise TestbedScenarioError(file, "--host-sysctl", f"{item!r}: expected NAME=VALUE")
        if not HOST_SYSCTL.fullmatch(name):
            raise TestbedScenarioError(file, "--host-sysctl", f"{name!r}; allowed: net.ipv4.tcp_* and net.core.* "
                                       "(the settings each network namespace has of its own)")
        if not Path("/proc/sys", *name.split(".")).exists():
            raise TestbedScenarioError(file, "--host-sysctl", f"{name!r}: this kernel has no such setting")
        out.append((name, value))
    return tuple(sorted(out))


def testbed_labels(jitter: Any = None, rwm_edges: str | None = None, file: str = "",
                   datapath: str | None = None, access: str | None = None,
                   sysctl: Any = None) -> dict[str, str]:
    """The labels of a run with these settings; defaults are left out.
    ``sysctl``: ``NAME=VALUE`` pairs (a list, or one ``;``-separated text)."""
    out = {}
    if sysctl:
        text = ";".join(sysctl) if isinstance(sysctl, (list, tuple)) else str(sysctl)
        pairs = host_sysctls(text, file)
        if pairs:
            out["sysctl"] = ";".join(f"{k}={v}" for k, v in pairs)
    if access is not None:
        if access not in ACCESS:
            raise TestbedScenarioError(file, "--access", f"{access!r}; allowed: {', '.join(ACCESS)}")
        if access != TESTBED_LABELS["access"]:
            out["access"] = access
    if datapath is not None:
        # The bottleneck gateway's (netreturn-gateway --datapath): on kernel
        # a packet-datapath hop in front carries its delay and loss
        # (runner.plan_hops).
        if datapath not in DATAPATHS:
            raise TestbedScenarioError(file, "--datapath", f"{datapath!r}; allowed: {', '.join(DATAPATHS)}")
        if datapath != TESTBED_LABELS["datapath"]:
            out["datapath"] = datapath
    if jitter is not None:
        try:
            j = parse_time(jitter)
        except ValueError as e:
            raise TestbedScenarioError(file, "--jitter", f"{jitter!r}: {e}") from None
        if not 0 <= j <= 1:
            raise TestbedScenarioError(file, "--jitter", f"{jitter!r}: allowed 0 .. 1s")
        if j > 0:
            out["jitter"] = str(jitter)
    if rwm_edges is not None:
        if rwm_edges not in RWM_EDGES:
            raise TestbedScenarioError(file, "--rwm-edges", f"{rwm_edges!r}; allowed: {', '.join(RWM_EDGES)}")
        if rwm_edges != TESTBED_LABELS["rwm_edges"]:
            out["rwm_edges"] = rwm_edges
    return out


def with_testbed(pl: Plan, labels: Mapping[str, str]) -> Plan:
    """``pl`` with the testbed-only settings of ``labels`` applied (labels
    that are not among :data:`TESTBED_LABELS`, like the RWM experiment's
    ``setting``, are ignored):

    * ``jitter``: the bottleneck gateway's data direction varies its delay
      by a uniform draw in [-jitter, +jitter] per packet (``netreturn-gateway
      --jitter``), packets kept in order; the ACK direction is not jittered,
      so the RTT varies by +/- jitter, the RWM paper's "variability of
      +/-3ms" on its one NetEm link, on the router close to the client
      (section IV.A). The jitter must not exceed that direction's delay
      (the gateway never releases a packet before it is sent).
    * ``rwm_edges = "both"``: RWM also runs at the senders' edge, a gateway
      between the senders and the WAN emulator (the paper's Fig. 1: "both
      edge routers implement RWM"), with the same ``gateway.rwm`` table and
      the senders' access rate as its capacity ``C``. Where the bottleneck
      runs no RWM (setting none) nothing is added.
    * ``access = "shaped"``: each end host's link is rate-limited on its
      own, both directions, at the file's access and receiver rates
      (:class:`.runner.HostLinks`); by default only the WAN emulator limits
      the senders, together, at access rate x pairs.
    * ``sysctl = "NAME=VALUE;..."``: every end host's namespace sets these
      before the run (:func:`host_sysctls`).
    """
    from dataclasses import replace

    lab = {k: v for k, v in labels.items() if k in TESTBED_LABELS}
    if not lab:
        return pl
    # Validated as the command line is (``sysctl`` by host_sysctls, below).
    for k in ("jitter", "rwm_edges", "datapath", "access"):
        if k in lab:
            testbed_labels(**{k: lab[k]}, file=pl.file)
    hops = [replace(h, args=list(h.args)) for h in pl.hops]
    one_way = pl.model.links[pl.model.bottleneck].delay_s if pl.model and pl.model.bottleneck else 0.0
    if "jitter" in lab and parse_time(lab["jitter"]) > one_way + 1e-12:
        raise TestbedScenarioError(pl.file, "--jitter", f"{lab['jitter']!r} exceeds the bottleneck's one-way delay "
                                   f"{one_way * 1000:g} ms; allowed: 0 .. that delay")
    bottleneck_hop = pl.bottleneck_hop
    if "jitter" in lab:
        # The bottleneck gateway carries the file's propagation delay (the
        # WAN emulator only the access links'): the paper's NetEm sat on the
        # router close to the client too. Only the data direction jitters.
        j = fmt_time(parse_time(lab["jitter"]))
        hops[bottleneck_hop].args += ["--jitter", j, "--jitter-ba", "0us"]
    if lab.get("rwm_edges") == "both" and pl.rwm_table is not None:
        ctl = [f"capacity={fmt_rate(pl.access_bps)}"] + [f"{k}={toml_literal(v)}" for k, v in pl.rwm_table.items()]
        hops.insert(0, Hop(name="sender-edge", rate=None, delay="0us", controller="rwm", ctl=ctl))
        bottleneck_hop += 1
    return replace(pl, hops=hops, bottleneck_hop=bottleneck_hop, shaped=access_of(lab) == "shaped",
                   host_sysctls=host_sysctls(lab.get("sysctl", ""), pl.file))


def check_gateway(pl: Plan, binary: str) -> None:
    """Every hop's settings through the gateway's own parser and checks
    (no interface is opened): what it refuses raises a TestbedScenarioError
    with its message (which names the file and the field)."""
    for h in pl.hops:
        msg = check_gateway_args(binary, link_args(h) + h.args)
        if msg:
            raise TestbedScenarioError(pl.file, "", f"netreturn-gateway refuses the {h.name} hop: {msg}")
