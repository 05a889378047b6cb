"""Every table the command lines print (``run``, ``validate``, ``reproduce``,
``testbed``), rendered one way, with one number format per unit.

A metric's unit comes from its name (``queue_mean_bytes``: bytes,
``fct_mean_s``: seconds, ``goodput_mean_mbps``: Mb/s, ``*_pct``: %, ...;
:func:`unit_of`) and is shown as:

========== ============ ==========================================
stored      shown        format
========== ============ ==========================================
bytes       kB           1 decimal (13.7)
kB          kB           1 decimal
Mb/s        Mb/s         3 significant digits (0.0612, 1.34, 94.1)
seconds     ms           3 significant digits, no exponent (3215, 45.3, 0.0512)
ms          ms           3 significant digits, no exponent
%           %            3 significant digits (0.0123, 1.25, 98.7)
ratio       (none)       3 decimals (Jain, utilization: 0.875)
count       (none)       3 significant digits, no exponent (1003)
========== ============ ==========================================

A mean with its 95 % CI half-width prints as ``mean ± half-width``, the
half-width with the same decimals (fixed formats) or 2 significant digits.
Tables are rendered by ``tabulate`` (plain text or GitHub Markdown); the
cells are strings, never re-parsed as numbers.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

#: unit -> (factor from stored to shown, shown unit, decimals or None for significant digits)
UNITS: dict[str, tuple[float, str, int | None]] = {
    "bytes": (1e-3, "kB", 1),
    "kB": (1.0, "kB", 1),
    "Mb/s": (1.0, "Mb/s", None),
    "s": (1e3, "ms", None),
    "ms": (1.0, "ms", None),
    "%": (1.0, "%", None),
    "ratio": (1.0, "", 3),
    "count": (1.0, "", None),
}

#: Metrics whose unit the name does not say.
RATIOS = ("jain_goodput", "jain_ftp", "jain", "utilization", "robustness_index", "queue_std_norm")


def unit_of(metric: str) -> str:
    """The unit a metric is stored in, from its name."""
    if metric in RATIOS or metric.startswith("jain"):
        return "ratio"
    for suffix, unit in (("_bytes", "bytes"), ("_kB", "kB"), ("_mbps", "Mb/s"), ("_ms", "ms"), ("_s", "s"),
                         ("_pct", "%")):
        if metric.endswith(suffix):
            return unit
    return "count"


def bounds(metric: str) -> tuple[float, float]:
    """The range a metric's values can take: Jain's index and utilization
    in [0, 1], percentages in [0, 100], sizes, rates, times and counts at
    least 0; other ratios unbounded. A 95 % CI drawn for a metric is clipped
    to it (a t interval from a few runs can reach past the possible)."""
    if metric.startswith("jain") or metric == "utilization":
        return 0.0, 1.0
    unit = unit_of(metric)
    if unit == "%":
        return 0.0, 100.0
    if unit == "ratio":
        return -math.inf, math.inf
    return 0.0, math.inf


def shown_unit(unit: str) -> str:
    """The unit a value is shown in (``"s"`` -> ``"ms"``); "" for ratios and counts."""
    return UNITS[unit][1]


def scale(unit: str) -> float:
    """The factor from the stored unit to the shown one."""
    return UNITS[unit][0]


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def sig(x: float, digits: int = 3) -> str:
    """``digits`` significant digits, without an exponent for large numbers
    (1003, not 1e+03)."""
    if abs(x) >= 10 ** digits:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def num(x: float | None, unit: str = "count") -> str:
    """One value, stored in ``unit``, in its shown unit's format; "-" if missing."""
    if _missing(x):
        return "-"
    factor, _, decimals = UNITS[unit]
    x = float(x) * factor
    return f"{x:.{decimals}f}" if decimals is not None else sig(x)


def ci(m: float | None, h: float | None, unit: str = "count") -> str:
    """``mean ± half-width`` (stored in ``unit``) in the shown unit's format;
    the mean alone without a half-width; "-" without a mean."""
    if _missing(m):
        return "-"
    if _missing(h):
        return num(m, unit)
    factor, _, decimals = UNITS[unit]
    h = float(h) * factor
    return f"{num(m, unit)} ± {h:.{decimals}f}" if decimals is not None else f"{num(m, unit)} ± {sig(h, 2)}"


def render(header: Sequence[str], rows: Sequence[Sequence[Any]], markdown: bool = False,
           align: Sequence[str] | None = None) -> str:
    """A table of strings: plain text (first column left-aligned, the others
    right-aligned, a rule under the header) or GitHub Markdown."""
    from tabulate import tabulate

    n = len(header)
    if align is None:
        align = ["left"] + ["right"] * (n - 1)
    body = [["-" if _missing(c) else str(c) for c in r] for r in rows]
    return tabulate(body, headers=list(header), tablefmt="github" if markdown else "simple",
                    disable_numparse=True, colalign=list(align))
