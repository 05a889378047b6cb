"""The package's statistics, defined once: means, Jain's fairness index,
and the mean with its 95 % confidence interval over replications.

The papers report every figure as the mean of independent replications with
a 95 % confidence interval (the EWT paper: 30 rounds). With n replications the
half-width is t_{0.975, n-1} * s / sqrt(n); the t quantile is :func:`t975`
(a table to 30 degrees of freedom, then a series: scipy is not a dependency).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

# Student's t, two-sided 95 % (0.975 quantile), for 1..30 degrees of freedom.
_T975 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]


def t975(df: int) -> float:
    """0.975 quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        return math.nan
    if df <= 30:
        return _T975[df - 1]
    # Cornish-Fisher expansion around the normal quantile; < 1e-3 off at df > 30.
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def finite(values: Iterable[float | None]) -> list[float]:
    """The values that are numbers: None and NaN left out."""
    return [float(v) for v in values if v is not None and not math.isnan(float(v))]


def mean(values: Iterable[float], skip_missing: bool = False) -> float:
    """Arithmetic mean; NaN of no values. ``skip_missing``: None and NaN are
    left out (otherwise a NaN makes the mean NaN)."""
    xs = finite(values) if skip_missing else [float(v) for v in values]
    return sum(xs) / len(xs) if xs else math.nan


def mean_sd(values: Iterable[float]) -> tuple[float, float]:
    """Mean and population standard deviation (over n, not n - 1) of a
    series, such as a queue or window trace; NaNs of no values."""
    xs = [float(v) for v in values]
    if not xs:
        return math.nan, math.nan
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def jain(values: Iterable[float], skip_missing: bool = False) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 for equal shares,
    1/n when one of n takes everything; NaN of no values or all zeros.
    ``skip_missing``: None and NaN are left out (otherwise they give NaN)."""
    xs = finite(values) if skip_missing else [float(v) for v in values]
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if xs and s2 > 0 else math.nan


def mean_ci(values: Iterable[float]) -> tuple[float, float, int]:
    """Mean, 95 % CI half-width and count of the finite values."""
    xs = finite(values)
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, 0
    m = sum(xs) / n
    if n == 1:
        return m, math.nan, 1
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, t975(n - 1) * math.sqrt(var / n), n


def fmt_ci(m: float, h: float, digits: int = 3) -> str:
    if math.isnan(m):
        return "-"
    if math.isnan(h):
        return f"{m:.{digits}g}"
    return f"{m:.{digits}g} ± {h:.2g}"


def batch_means(series: Sequence[float], batches: int = 30) -> list[float]:
    """Means of ``batches`` equal consecutive batches (the NGWA paper's method for
    one long run); the tail that does not fill a batch is dropped."""
    n = len(series) // batches
    if n == 0:
        return []
    return [sum(series[i * n:(i + 1) * n]) / n for i in range(batches)]


def batch_means_ci(series: Sequence[float], batches: int = 30) -> tuple[float, float, int]:
    """Mean and 95 % CI half-width of one long run by the batch-means method
    (the NGWA paper's section 3.2: 30 batches): the batch means are treated as
    independent observations, so the half-width is
    t_{0.975, batches-1} * s_batch / sqrt(batches)."""
    return mean_ci(batch_means(series, batches))


def agree(a: tuple[float, float, int], b: tuple[float, float, int]) -> bool | None:
    """Whether two (mean, CI half-width, n) summaries agree within their
    spread: ``|m1 - m2| <= sqrt(h1^2 + h2^2)``; None when either lacks a CI
    (fewer than 2 finite values)."""
    (m1, h1, _), (m2, h2, _) = a, b
    if any(math.isnan(x) for x in (m1, h1, m2, h2)):
        return None
    return abs(m1 - m2) <= math.hypot(h1, h2)


def quantile(xs: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    if not xs:
        return math.nan
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)
