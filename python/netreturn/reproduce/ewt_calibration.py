"""EWT's RFC 7928 calibration across what the paper leaves unstated.

The paper (section 5.3) raised the number of DropTail flows until the
segment loss reached about 0.1 / 0.5 / 1 %: its Table 2 is that
calibration's answer. Two things that decide the loss at a given count are
not in the paper: the receivers' buffer (the window a flow may have in
flight; ours 1 MB, ns-3's default 128 KiB) and the access queues (ours 100
packets). This module sets DropTail's calibration under each setting side
by side (every number from the searches it is given), with the arithmetic
that tells whether one flow alone can overflow a queue: if it can, the loss
at one flow is that flow's own overshoot, the levels are all reached at the
smallest count, and they say nothing about congestion from sharing the
bottleneck (:func:`~netreturn.calibrate.degenerate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..calibrate import LevelSearch, degenerate
from .text import f as _f, md_table as _md_table


@dataclass(frozen=True)
class Setting:
    """One combination of the unstated parameters, its DropTail searches
    (scenario -> LevelSearch) and its scenario files (scenario -> (file,
    overrides)) to read the path from."""

    access: str
    rcv_buf: str
    ours: bool
    searches: dict
    files: dict


def path_budget(scenario_file: str, sets: dict | None = None) -> dict:
    """What one flow may have in flight against what the path holds, in
    segments, read from the resolved scenario (with ``sets``): the window
    (the receivers' buffer), the bandwidth-delay product of the bottleneck
    rate left after constant-rate UDP over the round trip of access,
    bottleneck and receivers' links, the bottleneck's buffer and a sender's
    access queue (with that link's rate: when it is the bottleneck's, a lone
    flow queues there first)."""
    from .. import _native
    from ..scenarios import load

    doc = load(scenario_file, dict(sets or {}))["document"]
    tcp, topo = doc["tcp"], doc["topology"]
    mss = int(tcp["segment_size"])

    def size(v) -> tuple[str, int]:
        kind, n = _native.parse_size(str(v))
        return kind, int(n)

    def segs(v) -> float:
        kind, n = size(v)
        return float(n) if kind == "packets" else n / mss

    rtt = sum(float(_native.parse_time(str(topo[k]["rtt"]))) for k in ("access", "bottleneck", "receivers"))
    rate = float(_native.parse_rate(str(topo["bottleneck"]["rate"])))
    udp = sum(float(_native.parse_rate(str(t["rate"]))) for t in doc.get("traffic", []) if t.get("kind") == "udp-cbr")
    bdp = (rate - udp) * rtt / 8 / mss
    return {"mss": mss, "window": segs(tcp["rcv_buf"]), "bdp": bdp, "buffer": segs(topo["bottleneck"]["buffer"]),
            "access": segs(topo["access"]["buffer"]), "rtt_s": rtt, "rate_bps": rate, "udp_bps": udp,
            "access_is_bottleneck": float(_native.parse_rate(str(topo["access"]["rate"]))) <= rate}


def why_line(b: dict) -> str:
    """The arithmetic of :func:`path_budget` in words: can one flow alone
    overflow a queue, and from how many window-limited flows on the
    bottleneck overflows."""
    hold = b["bdp"] + b["buffer"]
    w = b["window"]
    udp = f" − UDP {b['udp_bps'] / 1e6:g} Mb/s" if b["udp_bps"] else ""
    s = (f"one flow's window {w:.0f} segments against the path's {b['bdp']:.0f} (({b['rate_bps'] / 1e6:g} "
         f"Mb/s{udp}) × {b['rtt_s'] * 1000:g} ms) plus the bottleneck buffer's {b['buffer']:.0f}")
    if b["access_is_bottleneck"]:
        # A sender's access link is as slow as the bottleneck: a lone flow
        # queues in its access queue, never at the bottleneck; from two flows
        # on they arrive faster than the bottleneck sends.
        lone = b["bdp"] + b["access"]
        first = max(2, math.floor(hold / w) + 1) if w > 0 else 2
        s += " (its access link is as slow as the bottleneck, so a lone flow queues in its access queue): "
        s += (f"one flow alone overflows its {b['access']:.0f}-packet access queue ({w:.0f} > {lone:.0f})"
              if w > lone else f"the {b['access']:.0f}-packet access queue holds a lone flow ({w:.0f} ≤ {lone:.0f})")
        s += f"; the bottleneck overflows from {first} flows on ({first} × {w:.0f} > {hold:.0f})"
    elif w > hold:
        s += f": one flow alone overflows it ({w:.0f} > {hold:.0f})"
    else:
        first = math.floor(hold / w) + 1 if w > 0 else 0
        s += f": window-limited flows overflow it from {first} flows on ({first} × {w:.0f} > {hold:.0f})"
    return s


def _counts(search: LevelSearch | None, targets: Sequence[float]) -> list[int | None] | None:
    if search is None:
        return None
    res = search.result()
    return [res[t] for t in targets]


def _curve(search: LevelSearch) -> str:
    return ", ".join(f"{n}: {_f(search.mean(n)[0])}" for n in sorted(search.values))


def nearness(ours: Sequence[int | None], paper: Sequence[int]) -> float:
    """How far a calibration is from the paper's counts: the geometric mean
    of ours / paper over the levels found (1 = the paper's); NaN if none."""
    r = [math.log(o / p) for o, p in zip(ours, paper) if o is not None and p]
    return math.exp(sum(r) / len(r)) if r else math.nan


def section(settings: list[Setting], scenarios: Sequence[str], levels: Sequence[str], targets: Sequence[float],
            paper_counts: dict, baseline: str, max_flows: int) -> list[str]:
    """Section 1b: DropTail's calibration per scenario and setting, its
    loss at every count probed, whether the levels are distinct, and why."""
    present = [s for s in settings if any((sc, baseline) in s.searches for sc in scenarios)]
    if len(present) < 2:
        return []
    out = ["### 1b. The calibration across what the paper leaves unstated", "",
           "The paper's Table 2 is its own calibration's answer (section 5.3), so it is the target a calibration "
           "can be checked against. Two settings that decide DropTail's loss at a given count are not in the "
           "paper: the receivers' buffer (a flow's largest window) and the access queues. DropTail's calibration "
           "(the same search as section 6) under each setting this report ran, with the mean TCP loss at every "
           "count the search probed:", ""]
    fmt = lambda xs: " / ".join(f"> {max_flows}" if x is None else str(x) for x in xs)  # noqa: E731
    nearest: dict[str, tuple[float, Setting]] = {}
    for sc in scenarios:
        pc = [paper_counts[sc][lv] for lv in levels]
        body, whys = [], []
        for s in present:
            search = s.searches.get((sc, baseline))
            counts = _counts(search, targets)
            if counts is None:
                continue
            why = degenerate(counts)
            near = nearness(counts, pc)
            if not why and not math.isnan(near) and (sc not in nearest or abs(math.log(near))
                                                     < abs(math.log(nearest[sc][0]))):
                nearest[sc] = (near, s)
            body.append([s.access + (" (ours)" if s.ours else ""), s.rcv_buf + (" (ours)" if s.ours else ""),
                         fmt(counts), "-" if math.isnan(near) else f"{near:.2f}",
                         ("degenerate: " + why.split(":")[0]) if why else "distinct", _curve(search)])
            f = s.files.get(sc)
            if f is not None:
                whys.append(f"- {s.access} access queues, {s.rcv_buf} receive buffer: "
                            + why_line(path_budget(*f)) + ".")
        if not body:
            continue
        out += [f"**{sc}** (paper, Table 2: {fmt(pc)})", "",
                _md_table(["access queues", "receive buffer", "flows mild / medium / heavy",
                           "ours / paper (geometric mean)", "levels", "DropTail TCP loss % at flows probed"], body),
                "", "Why, from the scenario's own numbers:", ""] + whys + [""]
    out += ["Where one flow's window exceeds what the path and the buffer hold, the loss at one flow is that "
            "flow's own slow-start overshoot, so every level is reached at the smallest count; where flows are "
            "window-limited the loss stays zero until their windows together exceed the path and the buffer, "
            "then jumps: levels that fall on one count are that step. Neither measures the congestion that "
            "RFC 7928's levels stand for.", ""]
    ours = next((s for s in present if s.ours), None)
    used = (f"The calibrated count set (sections 2-3) and section 6 use the scenario's own settings "
            f"({ours.access} access queues, {ours.rcv_buf} receive buffer: docs/decisions.md §6), where every method "
            "runs; they are not chosen to bring any result near the paper. ") if ours else ""
    if nearest:
        used += ("Nearest the paper's Table 2 with distinct levels: " + "; ".join(
            f"{sc}: {s.access} access queues, {s.rcv_buf} receive buffer (counts {near:.2f} × the paper's)"
            for sc, (near, s) in nearest.items()) + ". ")
    bad = [sc for sc in scenarios if not any(sc == k for k in nearest)]
    if bad:
        used += f"No setting run here gives distinct levels in {', '.join(bad)}. "
    if ours:
        deg = [sc for sc in scenarios if degenerate(_counts(ours.searches.get((sc, baseline)), targets) or [])]
        if deg:
            used += (f"Where our own calibration is degenerate ({', '.join(deg)}), section 6's counts compare single "
                     "flows' overshoot, not how many flows a method serves at a congestion level: its gains are "
                     "reported, but they do not measure section 5.6's claim (`--sensitivity full` runs section 6 "
                     "with the other receive buffer too).")
    out += [used.strip(), ""]
    return out


def degenerate_scenarios(searches: dict, scenarios: Sequence[str], targets: Sequence[float], baseline: str
                         ) -> list[str]:
    """The scenarios whose DropTail calibration in ``searches`` is degenerate."""
    return [sc for sc in scenarios if degenerate(_counts(searches.get((sc, baseline)), targets) or [])]
