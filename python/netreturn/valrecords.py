"""Cell records: one comparison of ours with a reference simulator, kept
as ``<out>/cells/<cell>.json`` for ``netreturn validate --summary``
(:mod:`netreturn.valsummary`). Written by ``netreturn validate`` (the EWT
dumbbells, the lossy link) and ``netreturn validate-xcp``.

A record holds, per compared metric, the per-seed values of the reference
and of ours (``ref``, ``ours``), and what was compared (``reference``,
``seeds``, the configuration). The reference runs stay in their own stores
(``<out>/ns3/``, ``<out>/ns2/``); a record is made from them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

from .files import atomic_write
from .stats import agree, mean_ci

#: Records live here, under the validate output folder.
CELLS = "cells"



def record(reference: str, rows: Sequence[tuple], **about) -> dict:
    """A cell record: ``rows`` of (metric, label, reference values, our
    values[, where]), one value per seed, ``where`` naming the part of the
    cell (a link, a loss rate); a metric the reference has no value of
    (all NaN, e.g. UDP loss without a UDP flow) is left out."""
    metrics = []
    for key, label, ref, ours, *where in rows:
        ref = [float(x) for x in ref]
        if all(math.isnan(x) for x in ref):
            continue
        metrics.append({"metric": key, "label": label, "where": where[0] if where else "", "ref": ref,
                        "ours": [float(x) for x in ours]})
    return {"reference": reference, **about, "metrics": metrics}


def write_record(out: Path, name: str, rec: dict) -> Path:
    """Store a cell record as ``<out>/cells/<name>.json``."""
    path = Path(out) / CELLS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(rec, indent=1, allow_nan=True))
    return path


def read_record(out: Path, name: str) -> dict | None:
    """A stored cell record, or None. A record that does not parse is an
    error naming its file (a half-written one cannot exist: records are
    written whole)."""
    path = Path(out) / CELLS / f"{name}.json"
    if not path.exists():
        return None
    try:
        rec = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a cell record ({e}); delete it and run "
                         "`netreturn validate --summary --regenerate`") from None
    if not isinstance(rec.get("metrics"), list):
        raise ValueError(f"{path}: field 'metrics' missing: not a cell record written by netreturn validate")
    return rec


#: Agreement "within 10 %" of the reference mean.
TOLERANCE = 0.10


def within(ref: tuple[float, float, int], ours: tuple[float, float, int], tol: float = TOLERANCE) -> bool | None:
    """Whether our mean is within ``tol`` of the reference's (relative to
    the reference mean); None without both means."""
    if math.isnan(ref[0]) or math.isnan(ours[0]):
        return None
    return abs(ours[0] - ref[0]) <= tol * abs(ref[0])


def verdicts(rec: dict) -> list[dict]:
    """Per metric of a record: both summaries, and the two verdicts."""
    out = []
    for m in rec["metrics"]:
        a, b = mean_ci(m["ref"]), mean_ci(m["ours"])
        out.append({**m, "ref_ci": a, "ours_ci": b, "within": within(a, b), "ci": agree(a, b)})
    return out
