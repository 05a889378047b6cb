"""Every link direction of a run, not only the monitored one.

The headline table describes one link direction (``monitor_link`` of each
run: ``run.monitor``, else the declared bottleneck, else the traffic's
slowest link). ``netreturn run --per-link`` prints this table beside it, so a
user can see at once whether the monitored link is the one that carries the
drops; ``links.csv`` holds it per run.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .stats import mean_ci
from .table import ci, render, unit_of

#: Per-link metrics, in print order, with a label.
LINK_METRICS: list[tuple[str, str]] = [
    ("utilization", "utilization"),
    ("queue_drops", "queue drops"),
    ("loss_drops", "link-loss drops"),
    ("queue_mean_bytes", "mean queue (kB)"),
    ("queue_max_bytes", "max queue (kB)"),
    ("acks_rewritten", "ACKs rewritten"),
]


def link_rows(results: Iterable[dict], group_keys: Sequence[str] = ()) -> list[dict]:
    """One row per run and link direction: the swept parameters, the seed,
    the link's name, whether it is the run's monitored link, and
    :data:`LINK_METRICS` (with ``tx_packets``)."""
    out = []
    for r in results:
        f = r.get("ifaces") or {}
        names = f.get("iface") or []
        params = r.get("params") or {}
        for i, name in enumerate(names):
            row: dict[str, Any] = {k: params.get(k) for k in group_keys}
            row["seed"] = r.get("seed")
            row["link"] = name
            row["monitored"] = name == r.get("monitor_link")
            for k, _ in LINK_METRICS + [("tx_packets", "")]:
                col = f.get(k)
                row[k] = col[i] if col is not None and i < len(col) else None
            out.append(row)
    return out


def link_table(rows: Sequence[dict], group_keys: Sequence[str] = ()) -> str:
    """The mean ± 95 % CI over seeds of every link direction that sent a
    packet, busiest first within each group; the monitored one is marked
    with ``*``."""
    keys = list(group_keys)
    by: dict[tuple, list[dict]] = {}
    for r in rows:
        by.setdefault((tuple(r.get(k) for k in keys), r["link"]), []).append(r)
    order = {g: i for i, g in enumerate(dict.fromkeys(g for g, _ in by))}  # the sweep's own order
    body = []
    for (g, link), rs in by.items():
        if not any((r.get("tx_packets") or 0) > 0 for r in rs):
            continue
        stats = [mean_ci(r.get(k) for r in rs) for k, _ in LINK_METRICS]
        mark = " *" if any(r["monitored"] for r in rs) else ""
        cells = [ci(m, h, unit_of(k)) for (k, _), (m, h, _n) in zip(LINK_METRICS, stats)]
        busy = stats[0][0] if stats[0][0] == stats[0][0] else 0.0  # NaN sorts last
        body.append((order[g], -busy, [*g, link + mark, *cells]))
    body.sort(key=lambda x: (x[0], x[1]))
    header = keys + ["link"] + [label for _, label in LINK_METRICS]
    align = ["left"] * (len(keys) + 1) + ["right"] * len(LINK_METRICS)
    note = "* the monitored link: the headline table's utilization, queue and drops describe it"
    return render(header, [row for _, _, row in body], align=align) + "\n" + note

