"""``netreturn validate-xcp``: our XCP beside ns-2.35's own (issue 25, item 2).

The AWM paper compares AWM with XCP in ns-2; ns-2.35 (Debian's
``ns2``) ships the authors' XCP: ``Queue/XCP`` routers, ``Agent/TCP/Reno/XCP``
senders and ``Agent/TCPSink/XCPSink`` sinks. This module builds the same
network in ns-2 from the resolved scenario (:func:`tcl_script`: every link
direction's rate, delay and buffer in bytes from ``netreturn._native.resolve``,
the flows from the scenario's ``[[traffic]]``; template ``ns2xcp.tcl``), runs
it over seeds, runs ours with matching end systems (initial window 2, an ACK
per segment: the AWM families' XCP defaults), and compares, per XCP link
direction, utilization, drops (all, and after the flows' start-up), the mean
queue, and Jain's index of the flows' goodput.

What is matched and what is not:

* Same topology, rates, delays, buffers (bytes), data packet size on the
  wire, flow count and start window (uniform over [0, 2] s; each simulator
  draws its own times, so runs are compared as samples over seeds).
* ns-2's senders are Reno with XCP's window (no slow start, no handshake:
  the first window carries no RTT); ours NewReno with SACK and a handshake.
* ns-2's end systems are aligned with ours in two settings unless asked
  for otherwise (``ns2``, :data:`NS2_VARIANTS`): the minimum RTO (ours 1 s,
  RFC 6298 (2.4); ns-2's 0.2 s) and the ACK's size (ours 68 bytes with
  timestamps and XCP's header; ns-2's 40). ns-2's XCP senders take an RTT
  sample from every ACK's timestamp, so their rttvar shrinks to a few ticks
  and their RTO to about srtt: with 0.2 s as the floor, a path longer than
  that times out spuriously whenever its queue grows (no packet lost, cwnd
  back to 1), and XCP's long-RTT flows spend much of the run restarting
  (docs/xcp.md).
* Drops "after start-up" count from ``STARTUP_S``; ours are taken as the
  difference of two runs of the same seed stopped at ``STARTUP_S`` and at
  the end (the simulator is deterministic per seed).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .files import atomic_write
from .stats import agree, jain, mean_ci
from .table import render

#: Flows start within [0, 2] s in every AWM family; drops after this are
#: "after start-up".
STARTUP_S = 2.0
#: Seconds per run of the cells of ``netreturn validate --summary``; a run of
#: another length is a comparison of its own and leaves no record.
SUMMARY_STOP_S = 20.0
TEMPLATE = Path(__file__).with_name("ns2xcp.tcl")
#: ns-2's end systems: ``aligned`` (minimum RTO and ACK size as ours),
#: ``rto`` (the minimum RTO only) or ``shipped`` (ns-2's ``minrto_`` 0.2 s
#: and 40-byte ACKs).
NS2_VARIANTS = ("aligned", "rto", "shipped")

#: The cases compared: (scenario, overrides). The capacity family at its
#: smallest point (where ours dropped most) and its default, and the
#: parking lot; all with XCP and the scenario's own end systems (ns-2's).
CASES: dict[str, tuple[str, dict[str, str]]] = {
    "capacity-10M": ("awm/capacity", {"bottleneck_rate": "10Mbps", "buffer": "100kB"}),
    "capacity-150M": ("awm/capacity", {}),
    "parking-lot": ("awm/parking-lot", {}),
}

#: Per link direction, in both simulators.
LINK_METRICS = [
    ("utilization", "utilization"),
    ("utilization_after", "utilization after start-up"),
    ("drops", "drops"),
    ("drops_after", "drops after start-up"),
    ("queue_mean_kb", "queue, time mean (kB)"),
]


def ns2_binary() -> str | None:
    """The ns-2 interpreter, if installed (Debian's ``ns2`` puts it at /usr/bin/ns)."""
    return shutil.which("ns")


def _scenario(name: str) -> str:
    from .scenarios import resolve as scenario_path

    return str(scenario_path(name))


def _pairs(overrides: dict[str, str]) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in overrides.items()]


def _groups(nodes: list[str]) -> dict[str, list[str]]:
    """The scenario's host groups by name, as the topologies name hosts:
    ``left<i>``, ``right<i>``, ``src<j>``, ``dst<j>``, and ``h<i>_<j>`` in
    group ``at<i>`` (docs/scenarios.md, "Topologies")."""
    g: dict[str, list[tuple[int, str]]] = {}
    for n in nodes:
        m = re.fullmatch(r"(left|right|src|dst)(\d+)", n)
        if m:
            g.setdefault(m[1], []).append((int(m[2]), n))
            continue
        m = re.fullmatch(r"h(\d+)_(\d+)", n)
        if m:
            g.setdefault(f"at{m[1]}", []).append((int(m[2]), n))
    return {k: [n for _, n in sorted(v)] for k, v in g.items()}


def _seconds(v: Any) -> float:
    from ._native import parse_time

    return float(parse_time(v))


def _check_variant(ns2: str) -> None:
    if ns2 not in NS2_VARIANTS:
        raise ValueError(f"ns-2 end systems {ns2!r}: allowed {', '.join(NS2_VARIANTS)}")


def min_rto_s(path: str, pairs: list[tuple[str, str]]) -> float:
    """Our senders' minimum RTO in seconds, as the simulator resolves the
    scenario (``tcp.min_rto``; RFC 6298 (2.4)'s 1 s unless set)."""
    from . import _native

    m = re.search(r"\bmin_rto: Time\((\d+)\)", _native.show_config(path, pairs))
    if m is None:
        raise RuntimeError(f"{path}: the resolved configuration shows no min_rto (show-config changed?)")
    return int(m[1]) * 1e-9


def tcl_script(scenario: str, overrides: dict[str, str], seed: int, stop_s: float,
               ns2: str = "aligned", agent: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """The ns-2 script of one run, and the XCP link directions it monitors.
    ``ns2``: ns-2's end systems, aligned with ours or as shipped
    (:data:`NS2_VARIANTS`); ``agent``: further ``Agent/TCP`` settings, e.g.
    ``{"windowInit_": "10"}`` for our initial window.

    Raises ValueError naming the scenario when it holds something the
    template cannot build (traffic other than ``tcp-bulk``, a start other
    than ``uniform``, a queue other than DropTail or XCP), an ``ns2``
    not in :data:`NS2_VARIANTS`, or an ``agent`` setting that is not a name
    and a number."""
    from . import _native

    _check_variant(ns2)
    for k, v in (agent or {}).items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", k) or not re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", v):
            raise ValueError(f"ns-2 Agent/TCP setting {k}={v}: a variable name and a number are allowed "
                             "(e.g. windowInit_=10)")

    path = _scenario(scenario)
    pairs = _pairs(overrides)
    model = _native.resolve(path, pairs)
    doc = _native.load_scenario(path, pairs)["document"]
    links = model["links"]
    nodes: list[str] = []
    for link in links:
        for n in (link["from"], link["to"]):
            if n not in nodes:
                nodes.append(n)
    lines, monitored = [], []
    for link in links:
        xcp = link.get("stage") == "xcp"
        if not xcp and link["queue"] != "droptail":
            raise ValueError(f"{path}: link {link['name']}: queue {link['queue']!r}; the ns-2 template builds "
                             "only DropTail and XCP")
        limit = max(1, round(link["buffer_bytes"] / model["packet_bytes"]))
        lines.append(f"link_dir {link['from']} {link['to']} {link['rate_bps']} {link['delay_ns'] * 1e-9:.9f} "
                     f"{limit} {int(xcp)}")
        if xcp:
            monitored.append(link["name"])
    groups = _groups(nodes)
    flows, i = [], 0
    for t in doc.get("traffic", []):
        if t.get("kind") != "tcp-bulk":
            raise ValueError(f"{path}: traffic kind {t.get('kind')!r}; the ns-2 template runs tcp-bulk only")
        start = t.get("start", "0s")
        if isinstance(start, dict) and "uniform" in start:
            lo, hi = (_seconds(x) for x in start["uniform"])
            when = f"[$startrng uniform {lo} {hi}]"
        elif isinstance(start, (str, int, float)):
            when = f"{_seconds(start)}"
        else:
            raise ValueError(f"{path}: traffic start {start!r}; the ns-2 template takes a time or uniform")
        src, dst = groups.get(t["from"], [t["from"]]), groups.get(t["to"], [t["to"]])
        for k in range(int(t["count"])):
            flows.append(f"flow {i} {src[k % len(src)]} {dst[k % len(dst)]} {when}")
            i += 1
    tcp = model["tcp"]
    # A full data segment as it sits in our queues: segment + 52 + XCP's 16;
    # an ACK the same headers without a segment (SACK blocks aside).
    data_bytes = tcp["mss"] + 52 + 16
    ack_bytes = 52 + 16
    fields = {
        "SEED": str(seed),
        "PAYLOAD": str(data_bytes - 40),
        "PKT": str(model["packet_bytes"]),
        "NODES": "\n".join(f"set node({n}) [$ns node]" for n in nodes),
        "LINKS": "\n".join(lines),
        "MONITORED": " ".join("{" + n.replace("->", " ") + "}" for n in monitored),
        "FLOWS": "\n".join(flows),
        "MINRTO": (f"Agent/TCP set minrto_ {min_rto_s(path, pairs):g}" if ns2 in ("aligned", "rto")
                   else "# minrto_ stays ns-2's (0.2 s): the reference as shipped"),
        "ACK": (f"Agent/TCPSink set packetSize_ {ack_bytes}" if ns2 == "aligned"
                else "# packetSize_ of the sinks stays ns-2's (40 bytes): the reference as shipped"),
        "AGENT": "\n".join(f"Agent/TCP set {k} {v}" for k, v in (agent or {}).items())
                 or "# no further Agent/TCP settings",
        "STARTUP": str(STARTUP_S),
        "STOP": str(stop_s),
    }
    text = TEMPLATE.read_text()
    for k, v in fields.items():
        text = text.replace(f"@{k}@", v)
    return text, monitored


def _link_rates(scenario: str, overrides: dict[str, str]) -> dict[str, int]:
    from . import _native

    model = _native.resolve(_scenario(scenario), _pairs(overrides))
    return {link["name"]: link["rate_bps"] for link in model["links"]}


def run_ns2(scenario: str, overrides: dict[str, str], seed: int, stop_s: float, ns2: str = "aligned",
            agent: dict[str, str] | None = None) -> dict:
    """One ns-2 run: per monitored link direction utilization (whole run and
    after start-up), drops (all and after start-up) and mean queue; Jain's
    index of the flows' goodput over their lives; the senders' timeouts."""
    ns = ns2_binary()
    if ns is None:
        raise RuntimeError("ns-2 is not installed (Debian: apt-get install ns2; scripts/install-system-deps.sh)")
    text, _ = tcl_script(scenario, overrides, seed, stop_s, ns2, agent)
    rates = _link_rates(scenario, overrides)
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "run.tcl"
        script.write_text(text)
        p = subprocess.run([ns, str(script)], capture_output=True, text=True, cwd=d)
    if p.returncode != 0:
        raise RuntimeError(f"ns-2 failed on {scenario} seed {seed}: {p.stderr.strip()[-800:]}")
    snaps: dict[str, dict[str, tuple[float, float, float]]] = {"startup": {}, "end": {}}
    acks: dict[int, tuple[float, float]] = {}
    timeouts = 0
    for line in p.stdout.splitlines():
        f = line.split()
        if f and f[0] in snaps:
            snaps[f[0]][f[1]] = (float(f[2]), float(f[3]), float(f[4]))
        elif f and f[0] == "flow":
            acks[int(f[1])] = (float(f[2]), float(f[3]))
            timeouts += int(f[4])
    links = {}
    for name, (drops, dep, qint) in snaps["end"].items():
        d0, dep0, _ = snaps["startup"][name]
        c = rates[name] / 8.0
        links[name] = {
            "utilization": dep / (c * stop_s),
            "utilization_after": (dep - dep0) / (c * (stop_s - STARTUP_S)),
            "drops": drops,
            "drops_after": drops - d0,
            "queue_mean_kb": qint / stop_s / 1e3,
        }
    # Goodput of flow i over its life, as ours: segments acknowledged (ack_
    # counts from 0) from its start to the end.
    payload = int(text.split("Agent/TCP set packetSize_ ")[1].split()[0])
    goodputs = [(a + 1) * payload * 8 / (stop_s - t0) for a, t0 in acks.values()]
    return {"links": links, "jain": jain(goodputs), "timeouts": timeouts}


def _sim_links(binary: str, path: str, pairs: list[tuple[str, str]], seed: int) -> tuple[dict, list[float], int | None]:
    """Ours through a ``netreturn-sim`` binary (an older build, for before /
    after): per-interface utilization, drops, mean queue; per-flow goodput;
    the senders' timeouts (None when the build does not print them)."""
    cmd = [binary, path, "--seed", str(seed), "--links", "--per-flow"]
    for k, v in pairs:
        cmd += ["--set", f"{k}={v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    ifaces, flows, section, columns, header = {}, [], None, [], []
    timeouts: int | None = None
    for line in out:
        f = line.split()
        if not f:
            continue
        if f[0] == "iface":
            section, columns = "iface", f
            continue
        if f[0] == "flow":
            section, header = "flow", f
            continue
        if section == "iface" and "->" in f[0]:
            row = dict(zip(columns, f))
            ifaces[f[0]] = {"utilization": float(row["utilization"]), "queue_drops": float(row["queue_drops"]),
                            "queue_mean_bytes": float(row["queue_mean_B"])}
        elif section == "flow" and f[0].isdigit():
            row = dict(zip(header, f))
            flows.append(float(row["goodput_mbps"]))
            if "timeouts" in row:
                timeouts = (timeouts or 0) + int(row["timeouts"])
    return ifaces, flows, timeouts


def _native_links(path: str, pairs: list[tuple[str, str]], seed: int) -> tuple[dict, list[float], int]:
    from . import _native

    r = _native.run(path, seed, pairs)
    i = r["ifaces"]
    ifaces = {n: {"utilization": u, "queue_drops": float(d), "queue_mean_bytes": q}
              for n, u, d, q in zip(i["iface"], i["utilization"], i["queue_drops"], i["queue_mean_bytes"])}
    return ifaces, [float(g) for g in r["flows"]["goodput_mbps"]], int(sum(r["flows"]["timeouts"]))


def run_ours(scenario: str, overrides: dict[str, str], seed: int, stop_s: float, sim: str | None = None,
             scenarios: Path | None = None) -> dict:
    """One run of ours, the same metrics as :func:`run_ns2`; after start-up
    from a second run of the same seed stopped at ``STARTUP_S``. ``sim`` and
    ``scenarios`` (a directory the scenario names resolve in) run an older
    build on its own files, for before / after."""
    path = str(scenarios / f"{scenario}.toml") if scenarios else _scenario(scenario)
    links_of = (lambda p, s: _sim_links(sim, path, p, s)) if sim else (lambda p, s: _native_links(path, p, s))
    pairs = _pairs({**overrides, "queue": "xcp"})
    end, goodputs, timeouts = links_of([*pairs, ("stop", f"{stop_s}s")], seed)
    start, _, _ = links_of([*pairs, ("stop", f"{STARTUP_S}s")], seed)
    _, monitored = tcl_script(scenario, {**overrides, "queue": "xcp"}, seed, stop_s)
    links = {}
    for name in monitored:
        e, s = end[name], start[name]
        links[name] = {
            "utilization": e["utilization"],
            "utilization_after": (e["utilization"] * stop_s - s["utilization"] * STARTUP_S) / (stop_s - STARTUP_S),
            "drops": e["queue_drops"],
            "drops_after": e["queue_drops"] - s["queue_drops"],
            "queue_mean_kb": e["queue_mean_bytes"] / 1e3,
        }
    return {"links": links, "jain": jain(goodputs), "timeouts": timeouts}


def ns2_cache_path(out: Path, case: str, seed: int, stop_s: float, overrides: dict[str, str] | None = None,
                   ns2: str = "aligned", ns2_agent: dict[str, str] | None = None) -> Path:
    """Where :func:`compare` keeps one ns-2 run:
    ``<out>/ns2/<case>_<overrides>_<stop>s<variant>_seed<n>.json`` (runs as
    shipped keep the names they had before the variants existed)."""
    ov = {**CASES[case][1], **(overrides or {}), "queue": "xcp"}
    tag = "_".join(f"{k}-{v}" for k, v in sorted(ov.items()) if k != "queue")
    variant = {"aligned": "_aligned", "rto": "_rto-ours", "shipped": ""}[ns2]
    variant += "".join(f"_{k}{v}" for k, v in sorted((ns2_agent or {}).items()))
    return Path(out) / "ns2" / f"{case}_{tag}_{stop_s:g}s{variant}_seed{seed}.json"


def compare(case: str, seeds: list[int], stop_s: float, out: Path | None = None, sim: str | None = None,
            jobs: int = 2, overrides: dict[str, str] | None = None, scenarios: Path | None = None,
            ours_only: dict[str, str] | None = None, ns2: str = "aligned",
            ns2_agent: dict[str, str] | None = None) -> dict:
    """Both simulators over ``seeds``; ns-2 runs cached as JSON under
    ``out/ns2`` (a rerun with more seeds runs only the new ones).
    ``overrides`` go to both, ``ours_only`` to ours (a variant of our end
    systems against the same reference); ``ns2``: ns-2's end systems
    (:data:`NS2_VARIANTS`; runs as shipped are cached under the names they
    had before the choice existed); ``ns2_agent``: further ``Agent/TCP``
    settings for ns-2 (:func:`tcl_script`)."""
    _check_variant(ns2)
    scenario, base = CASES[case]
    ov = {**base, **(overrides or {}), "queue": "xcp"}

    def reference(seed: int) -> dict:
        cached = ns2_cache_path(out, case, seed, stop_s, overrides, ns2, ns2_agent) if out else None
        if cached and cached.exists():
            return json.loads(cached.read_text())
        r = run_ns2(scenario, ov, seed, stop_s, ns2, ns2_agent)
        if cached:
            cached.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(cached, json.dumps(r))
        return r

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        theirs = list(ex.map(reference, seeds))
    mine = {**ov, **(ours_only or {})}
    ours = [run_ours(scenario, mine, s, stop_s, sim, scenarios) for s in seeds]
    return {"case": case, "scenario": scenario, "overrides": ov, "ours_overrides": ours_only or {}, "seeds": seeds,
            "stop_s": stop_s, "ns2_end_systems": ns2,
            "ns2_agent": ns2_agent or {}, "ns2": theirs, "ours": ours}


def _timeouts(result: dict) -> tuple[list, list] | None:
    """The senders' timeouts per seed in each simulator, when every run has
    them (ns-2 runs cached before they were counted do not)."""
    a = [r.get("timeouts") for r in result["ns2"]]
    b = [r.get("timeouts") for r in result["ours"]]
    return None if None in a or None in b else (a, b)


def table(result: dict, markdown: bool = False) -> str:
    """Per link direction and metric: ns-2 and ours, mean ± 95 % CI over
    seeds, and whether they agree within the combined spread."""
    rows = []
    verdict = {True: "yes", False: "no", None: "-"}

    def cell(s):
        m, h, _ = s
        return "nan" if math.isnan(m) else (f"{m:.3g}" if math.isnan(h) else f"{m:.3g} ± {h:.2g}")

    names = list(result["ns2"][0]["links"])
    for name in names:
        for key, label in LINK_METRICS:
            a = mean_ci(r["links"][name][key] for r in result["ns2"])
            b = mean_ci(r["links"][name][key] for r in result["ours"])
            rows.append([name, label, cell(a), cell(b), verdict[agree(a, b)]])
    a = mean_ci(r["jain"] for r in result["ns2"])
    b = mean_ci(r["jain"] for r in result["ours"])
    rows.append(["all flows", "Jain index of goodput", cell(a), cell(b), verdict[agree(a, b)]])
    if t := _timeouts(result):
        a, b = mean_ci(t[0]), mean_ci(t[1])
        rows.append(["all flows", "sender timeouts", cell(a), cell(b), verdict[agree(a, b)]])
    return render(["link", "metric", "ns-2.35", "ours", "agree"], rows, markdown=markdown)


def write_cell_record(result: dict, out: Path) -> Path:
    """The comparison as a cell record (``<out>/cells/xcp_<case>.json``,
    :mod:`netreturn.valrecords`) for ``netreturn validate --summary``."""
    from .valrecords import record, write_record

    rows: list[tuple] = []
    for name in result["ns2"][0]["links"]:
        for key, label in LINK_METRICS:
            rows.append((key, label, [r["links"][name][key] for r in result["ns2"]],
                         [r["links"][name][key] for r in result["ours"]], name))
    rows.append(("jain_goodput", "Jain index of goodput", [r["jain"] for r in result["ns2"]],
                 [r["jain"] for r in result["ours"]], "all flows"))
    if t := _timeouts(result):
        rows.append(("timeouts", "sender timeouts", *t, "all flows"))
    # ns2_end_systems: which of NS2_VARIANTS the reference ran with (results
    # made before the choice existed have none).
    about = {k: result[k] for k in ("case", "scenario", "overrides", "ours_overrides", "seeds", "stop_s",
                                    "ns2_end_systems") if k in result}
    return write_record(out, f"xcp_{result['case']}", record("ns-2.35", rows, **about))


def add_arguments(p) -> None:
    from .args import kv, positive

    p.add_argument("--case", action="append", choices=list(CASES), help="(repeatable; default: every case)")
    p.add_argument("--seeds", type=positive, default=5)
    p.add_argument("--stop", type=float, default=SUMMARY_STOP_S,
                   help=f"seconds simulated per run (default {SUMMARY_STOP_S:g}, the summary's)")
    p.add_argument("--set", dest="overrides", type=kv, action="append", default=[], metavar="NAME=VALUE",
                   help="scenario parameter for both simulators (e.g. flows=10)")
    p.add_argument("--ours-set", dest="ours_only", type=kv, action="append", default=[], metavar="NAME=VALUE",
                   help="scenario parameter for ours only, e.g. today's end systems: "
                        "--ours-set xcp_initial_cwnd=10 --ours-set xcp_ack_every=2")
    p.add_argument("--sim", default=None, help="run ours with this netreturn-sim binary (default: the extension)")
    p.add_argument("--scenarios", type=Path, default=None,
                   help="the directory ours takes its scenario files from (an older tree's scenarios/ with --sim, "
                        "or copies with a line changed); ns-2 is built from the packaged ones")
    p.add_argument("--ns2", choices=NS2_VARIANTS, default="aligned",
                   help="ns-2's end systems: aligned (default: the minimum RTO and the ACK size as ours), rto (the "
                        "minimum RTO only), or shipped (0.2 s, whose spurious timeouts on long paths docs/xcp.md "
                        "shows, and 40-byte ACKs)")
    p.add_argument("--ns2-agent", dest="ns2_agent", type=kv, action="append", default=[], metavar="NAME=VALUE",
                   help="a further Agent/TCP setting for ns-2, e.g. our initial window: --ns2-agent windowInit_=10")
    p.add_argument("--out", type=Path, default=Path("results") / "validate",
                   help="ns-2 run cache (<out>/ns2) and cell records for validate --summary (<out>/cells)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--jobs", type=positive, default=2)


def main(a) -> int:
    if ns2_binary() is None:
        print("netreturn: error: ns-2 is not installed (Debian: apt-get install ns2, or run "
              "scripts/install-system-deps.sh as root)", file=sys.stderr)
        return 2
    seeds = list(range(1, a.seeds + 1))
    for case in a.case or list(CASES):
        try:
            r = compare(case, seeds, a.stop, a.out, a.sim, a.jobs, dict(a.overrides), a.scenarios, dict(a.ours_only),
                        a.ns2, dict(a.ns2_agent))
        except ValueError as e:
            print(f"netreturn: error: {e}", file=sys.stderr)
            return 2
        ov = ", ".join(f"{k}={v}" for k, v in r["overrides"].items())
        mine = "".join(f", {k}={v}" for k, v in r["ours_overrides"].items())
        theirs = "".join(f", {k} {v}" for k, v in r["ns2_agent"].items())
        print(f"\n{case}: {r['scenario']} ({ov}), {a.stop:g} s, seeds 1..{a.seeds}: ns-2.35 XCP (end systems "
              f"{a.ns2}{theirs}) vs ours{mine}")
        print(table(r, a.markdown))
        # The plan's cell: today's ours, the case as is, ns-2's end systems
        # aligned, the summary's run length.
        if (a.out and not (a.overrides or a.ours_only or a.sim or a.scenarios or a.ns2_agent) and a.ns2 == "aligned"
                and a.stop == SUMMARY_STOP_S):
            write_cell_record(r, a.out)
    return 0
