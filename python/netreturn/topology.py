"""``netreturn show SCENARIO``: the topology as it will run, drawn (SVG) and
as text: each link's rate, delay, buffer, queue, controller, and the
monitored link.

Everything shown comes from the resolved model (``_native.resolve``, the
one the simulator and the real gateway run; :func:`netreturn.scenarios.model`),
nothing is re-derived here. The SVG is written by hand (no Graphviz): the
routers in a row, or on a circle when they do not form a chain; the hosts of
a router fanned out beside it, or drawn as one box when there are more than
:data:`FAN` of them (a dumbbell of 31 flows per side stays legible).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .files import atomic_write
from .scenarios import load, model
from .table import render

#: Hosts of one router drawn one by one up to this many; more are one box.
FAN = 4
MONITORED = "#d62728"
LINE = "#555555"


# -- units as a person reads them --------------------------------------------

def rate(bps: float) -> str:
    for factor, unit in ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")):
        if bps >= factor:
            return f"{bps / factor:.3g} {unit}"
    return f"{bps:.3g} b/s"


def delay(ns: float) -> str:
    return f"{ns / 1e6:.3g} ms" if ns >= 1e5 or ns == 0 else f"{ns / 1e3:.3g} µs"


def size(b: float) -> str:
    for factor, unit in ((1e6, "MB"), (1e3, "kB")):
        if b >= factor:
            return f"{b / factor:.3g} {unit}"
    return f"{b:.0f} B"


def buffer(d: Mapping[str, Any]) -> str:
    """The queue limit as the scenario gave it (packets or bytes), with its bytes."""
    limit = d.get("limit")
    b = d.get("buffer_bytes")
    if limit and limit[0] == "packets":
        return f"{limit[1]} p = {size(b)}"
    return size(b) if b is not None else "unlimited"


def discipline(d: Mapping[str, Any]) -> str:
    """The queue, and the window-rewriting controller over it if any."""
    return d["queue"] + (f" + {d['controller']}" if d.get("controller") else "")


def describe(d: Mapping[str, Any]) -> str:
    """One link direction on one line."""
    extra = f", loss {d['loss'] * 100:.3g} %" if d.get("loss") else ""
    return f"{d['name']}: {rate(d['rate_bps'])}, {delay(d['delay_ns'])}, {buffer(d)}, {discipline(d)}{extra}"


# -- the text ----------------------------------------------------------------

def text(m: Mapping[str, Any], title: str = "") -> str:
    """A table of every link direction, the monitored one marked."""
    rows = []
    for d in m["links"]:
        role = ", ".join(r for r, name in (("monitored", m.get("monitored")), ("bottleneck", m.get("bottleneck")))
                         if name == d["name"])
        rows.append([d["name"], rate(d["rate_bps"]), delay(d["delay_ns"]), buffer(d), d["queue"],
                     d.get("controller") or "-", f"{d['loss'] * 100:.3g} %" if d.get("loss") else "0", role])
    t = m["tcp"]
    head = [f"{title}" if title else "",
            f"monitored link: {m.get('monitored')}   bottleneck: {m.get('bottleneck') or 'none declared'}   "
            f"packet: {m['packet_bytes']} B   TCP: {t['cc']}, MSS {t['mss']} B, receive buffer {t['rcv_buf']:,} B",
            f"links ({len(m['links'])} directions):"]
    return "\n".join(h for h in head if h) + "\n" + render(
        ["link", "rate", "delay", "buffer", "queue", "controller", "loss", ""], rows,
        align=["left", "right", "right", "right", "left", "left", "right", "left"]) + "\n"


# -- the drawing -------------------------------------------------------------

@dataclass
class Edge:
    """A link: its two ends and its directions (one or two)."""

    a: str
    b: str
    dirs: list[dict]


def edges(m: Mapping[str, Any]) -> list[Edge]:
    """The links, each direction paired with its reverse, in the model's order."""
    out: dict[frozenset, Edge] = {}
    for d in m["links"]:
        a, b = d["from"], d["to"]
        e = out.setdefault(frozenset((a, b)), Edge(a, b, []))
        e.dirs.append(d)
    return list(out.values())


def _core_order(core: list[str], adj: dict[str, set], monitored: dict | None) -> tuple[list[str], bool]:
    """The routers in drawing order, and whether they form a chain (drawn in a row)."""
    sub = {n: adj[n] & set(core) for n in core}
    n_edges = sum(len(v) for v in sub.values()) // 2
    ends = [n for n in core if len(sub[n]) <= 1]
    chain = len(core) >= 1 and n_edges == len(core) - 1 and all(len(v) <= 2 for v in sub.values())
    start = ends[0] if chain and ends else (monitored["from"] if monitored and monitored["from"] in sub else core[0])
    order, seen, todo = [], {start}, [start]
    while todo:  # breadth first: a chain comes out in its order
        n = todo.pop(0)
        order.append(n)
        for x in sorted(sub[n] - seen, key=core.index):
            seen.add(x)
            todo.append(x)
    order += [n for n in core if n not in seen]
    if chain and monitored and monitored["from"] in order and monitored["to"] in order \
            and order.index(monitored["from"]) > order.index(monitored["to"]):
        order.reverse()  # the monitored direction runs left to right
    return order, chain


def _span(names: Sequence[str]) -> str:
    return f"{names[0]} … {names[-1]} ({len(names)} hosts)" if len(names) > 1 else names[0]


def _summary(dirs: Sequence[dict], what: str) -> str:
    """One line for the like directions of a box's links: the values, or their range."""
    def spread(vals: list, fmt) -> str:
        lo, hi = min(vals), max(vals)
        return fmt(lo) if lo == hi else f"{fmt(lo)} – {fmt(hi)}"

    queues = sorted({discipline(d) for d in dirs})
    bufs = sorted({buffer(d) for d in dirs})
    return (f"{what}: {spread([d['rate_bps'] for d in dirs], rate)}, {spread([d['delay_ns'] for d in dirs], delay)}, "
            f"{' / '.join(bufs)}, {' / '.join(queues)}")


def _width(name: str) -> float:
    """A node's box, wide enough for its name."""
    return max(44.0, 7.5 * len(name) + 14)


def svg(m: Mapping[str, Any], title: str = "") -> str:
    """The topology as an SVG document."""
    es = edges(m)
    adj: dict[str, set] = {}
    for e in es:
        adj.setdefault(e.a, set()).add(e.b)
        adj.setdefault(e.b, set()).add(e.a)
    nodes = list(adj)
    leaves = {n for n in nodes if len(adj[n]) == 1 and len(adj[next(iter(adj[n]))]) > 1}
    core = [n for n in nodes if n not in leaves] or nodes
    by_name = {d["name"]: d for d in m["links"]}
    mon = by_name.get(m.get("monitored") or "")
    order, chain = _core_order(core, adj, mon)
    pos: dict[str, tuple[float, float]] = {}
    # Routers far enough apart for the labels of the links between them.
    widest = max((len(describe(d)) + 24 for e in es if e.a not in leaves and e.b not in leaves for d in e.dirs),
                 default=0)
    step = max(360.0, 6.2 * widest + 30)
    if chain:
        for i, n in enumerate(order):
            pos[n] = (i * step, 0.0)
    else:
        r = max(step, step * len(order) / (2 * math.pi))
        for i, n in enumerate(order):
            a = 2 * math.pi * i / len(order) - math.pi
            pos[n] = (r * math.cos(a), r * math.sin(a))
    centre = (sum(x for x, _ in pos.values()) / len(pos), sum(y for _, y in pos.values()) / len(pos))

    parts: list[str] = []   # drawn in order: lines, then nodes and labels on top
    labels: list[str] = []
    points: list[tuple[float, float]] = list(pos.values())

    def label(x: float, y: float, lines: Sequence[tuple[str, str]], anchor: str = "middle") -> None:
        for i, (t, colour) in enumerate(lines):
            weight = ' font-weight="bold"' if colour == MONITORED else ""
            labels.append(f'<text x="{x:.1f}" y="{y + 14 * i:.1f}" text-anchor="{anchor}" fill="{colour}"{weight}>'
                          f"{html.escape(t)}</text>")
        w = 6.2 * max(len(t) for t, _ in lines)
        x0 = x - w / 2 if anchor == "middle" else (x - w if anchor == "end" else x)
        points.extend([(x0, y - 12), (x0 + w, y + 14 * len(lines))])

    def lines_of(e: Edge) -> list[tuple[str, str]]:
        out = []
        for d in e.dirs:
            mark = d["name"] == m.get("monitored")
            tags = [t for t, on in (("monitored", mark), ("bottleneck", d["name"] == m.get("bottleneck"))) if on]
            out.append((describe(d) + (f"  [{', '.join(tags)}]" if tags else ""), MONITORED if mark else "#222222"))
        return out

    def line(p: tuple[float, float], q: tuple[float, float], monitored: bool) -> None:
        colour, width = (MONITORED, 4) if monitored else (LINE, 1.5)
        parts.append(f'<line x1="{p[0]:.1f}" y1="{p[1]:.1f}" x2="{q[0]:.1f}" y2="{q[1]:.1f}" stroke="{colour}" '
                     f'stroke-width="{width}"/>')

    def is_monitored(e: Edge) -> bool:
        return any(d["name"] == m.get("monitored") for d in e.dirs)

    # Links between routers: a line, its directions above it.
    for e in es:
        if e.a in leaves or e.b in leaves:
            continue
        p, q = pos[e.a], pos[e.b]
        line(p, q, is_monitored(e))
        label((p[0] + q[0]) / 2, (p[1] + q[1]) / 2 - 14 * len(e.dirs) - 6, lines_of(e))

    # Hosts: fanned out beside their router, or one box for many.
    hosts: dict[str, list[Edge]] = {}
    for e in es:
        if e.a in leaves or e.b in leaves:
            hub = e.b if e.a in leaves else e.a
            hosts.setdefault(hub, []).append(e)
    boxes: list[tuple[float, float, str, bool]] = []
    for hub, hes in hosts.items():
        hx, hy = pos[hub]
        if chain and len(order) > 1 and hub in (order[0], order[-1]):
            direction = (-1.0, 0.0) if hub == order[0] else (1.0, 0.0)
        elif chain and len(order) == 1:
            direction = (-1.0, 0.0)
        elif chain:
            direction = (0.0, 1.0)
        else:
            dx, dy = hx - centre[0], hy - centre[1]
            n = math.hypot(dx, dy) or 1.0
            direction = (dx / n, dy / n)
        anchor = "end" if direction[0] < -0.3 else ("start" if direction[0] > 0.3 else "middle")
        far = 220.0
        if len(hes) > FAN:
            names = [e.a if e.a in leaves else e.b for e in hes]
            bx, by = hx + far * direction[0], hy + far * direction[1]
            line((hx, hy), (bx, by), any(is_monitored(e) for e in hes))
            boxes.append((bx, by, _span(names), False))
            dirs = [d for e in hes for d in e.dirs]
            to_hub = [d for d in dirs if d["to"] == hub]
            from_hub = [d for d in dirs if d["from"] == hub]
            text_lines = [(f"{len(hes)} links {names[0]}–{hub} … {names[-1]}–{hub}", "#222222")]
            text_lines += [(_summary(to_hub, f"to {hub}"), "#222222")] if to_hub else []
            text_lines += [(_summary(from_hub, f"from {hub}"), "#222222")] if from_hub else []
            ox = {"end": -1.0, "start": 1.0, "middle": 0.0}[anchor] * (_width(_span(names)) / 2 + 10)
            label(bx + ox, by + (40 if anchor == "middle" else -8), text_lines, anchor)
            continue
        spread = 110.0
        for i, e in enumerate(hes):
            leaf = e.a if e.a in leaves else e.b
            off = (i - (len(hes) - 1) / 2) * spread
            lx = hx + far * direction[0] - off * direction[1]
            ly = hy + far * direction[1] + off * direction[0]
            line((hx, hy), (lx, ly), is_monitored(e))
            boxes.append((lx, ly, leaf, False))
            ox = {"end": -1.0, "start": 1.0, "middle": 0.0}[anchor] * (_width(leaf) / 2 + 10)
            label(lx + ox, ly + (30 if anchor == "middle" else -4), lines_of(e), anchor)
    for n in core:
        boxes.append((*pos[n], n, True))

    shapes = []
    for x, y, name, router in boxes:
        w = _width(name)
        fill = "#e8eef7" if router else "#f4f4f4"
        shapes.append(f'<rect x="{x - w / 2:.1f}" y="{y - 13:.1f}" width="{w:.1f}" height="26" '
                      f'rx="{13 if router else 3}" fill="{fill}" stroke="#333333"/>'
                      f'<text x="{x:.1f}" y="{y + 4.5:.1f}" text-anchor="middle" '
                      f'font-weight="{"bold" if router else "normal"}">{html.escape(name)}</text>')
        points.extend([(x - w / 2, y - 13), (x + w / 2, y + 13)])
    t = m["tcp"]
    foot = (f"monitored link: {m.get('monitored')} (red) · bottleneck: {m.get('bottleneck') or 'none declared'} · "
            f"packet {m['packet_bytes']} B · TCP {t['cc']}, MSS {t['mss']} B")
    x0, x1 = min(x for x, _ in points) - 20, max(x for x, _ in points) + 20
    y0, y1 = min(y for _, y in points) - 50, max(y for _, y in points) + 40
    head = (f'<text x="{x0 + 10:.1f}" y="{y0 + 22:.1f}" font-size="15" font-weight="bold">{html.escape(title)}</text>'
            f'<text x="{x0 + 10:.1f}" y="{y1 - 12:.1f}">{html.escape(foot)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{x0:.1f} {y0:.1f} {x1 - x0:.1f} {y1 - y0:.1f}" '
            f'width="{x1 - x0:.0f}" height="{y1 - y0:.0f}" font-family="sans-serif" font-size="11">'
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" fill="white"/>'
            + head + "".join(parts) + "".join(shapes) + "".join(labels) + "</svg>\n")


def title_of(scenario: str | Path, sets: Mapping[str, Any] | None) -> str:
    info = load(scenario, sets)
    extra = ", ".join(f"{k}={v}" for k, v in (sets or {}).items())
    return info["name"] + (f" ({extra})" if extra else "")


def main(a: Any) -> int:
    """``netreturn show SCENARIO [--set ...] [--out FILE.svg]``."""
    from .scenarios import ScenarioError, resolve

    sets = dict(a.sets)
    m = model(a.scenario, sets)
    title = title_of(a.scenario, sets)
    out = a.out if a.out is not None else Path(f"{Path(str(resolve(a.scenario))).stem}-topology.svg")
    if out.suffix.lower() != ".svg":
        raise ScenarioError(f"--out {out}: the drawing is SVG; give a file name ending in .svg")
    print(text(m, title), end="")
    atomic_write(out, svg(m, title))
    print(f"drawing: {out}")
    return 0
