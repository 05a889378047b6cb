"""Argument types of the command lines (``netreturn ...``, ``netreturn
testbed ...``, ``netreturn validate ...``): each parses one option's text or
raises :class:`argparse.ArgumentTypeError` with what was expected.

A leaf module: it imports nothing of the package, so every command line can
use it without importing another.
"""

from __future__ import annotations

import argparse
import math
import re

#: The largest seed: what the simulator's seed holds (an unsigned 64-bit integer).
MAX_SEED = 2**64 - 1


def kv(text: str) -> tuple[str, str]:
    """``--set NAME=VALUE``."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    k, v = text.split("=", 1)
    if not k.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r} (no NAME)")
    return k.strip(), v.strip()


def sweep(text: str) -> tuple[str, list[str]]:
    """``--sweep NAME=V1,V2``; an item ``START:STOP:STEP`` is a range
    (:func:`expand_ranges`)."""
    k, v = kv(text)
    try:
        vals = expand_ranges(v)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--sweep {k}={v}: {e}") from None
    if not vals:
        raise argparse.ArgumentTypeError(f"--sweep {k}= needs at least one value")
    return k, vals


#: The most values one range may give (a typo such as 1:1e9:1 is refused,
#: not run for weeks).
MAX_RANGE = 10_000

_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/%]*)\s*$")


def expand_ranges(text: str) -> list[str]:
    """The values of a comma-separated list whose items may be ranges
    ``START:STOP:STEP``, STOP included when the steps reach it:
    ``"10:40:10"`` -> 10, 20, 30, 40; ``"5ms:20ms:5ms"`` -> 5ms, 10ms, 15ms,
    20ms (one unit for the three); ``"1,2,5:15:5"`` -> 1, 2, 5, 10, 15.
    Integers stay integers; decimals are rounded to 12 significant digits
    (0.1:0.3:0.1 gives 0.3, not 0.30000000000000004). Raises
    :class:`ValueError` saying what is wrong."""
    out: list[str] = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        if ":" not in item:
            out.append(item)
            continue
        parts = item.split(":")
        if len(parts) != 3:
            raise ValueError(f"range {item!r}: write START:STOP:STEP, e.g. 10:100:10")
        nums, units = [], []
        for p in parts:
            m = _QUANTITY.match(p)
            if not m:
                raise ValueError(f"range {item!r}: {p!r} is not a number with an optional unit")
            nums.append(m.group(1))
            units.append(m.group(2))
        unit = units[0]
        if any(u != unit for u in units):
            raise ValueError(f"range {item!r}: START, STOP and STEP need the same unit ({', '.join(units)})")
        ints = all(re.fullmatch(r"[-+]?\d+", n) for n in nums)
        start, stop, step = (int(n) if ints else float(n) for n in nums)
        if step == 0 or (stop - start) * step < 0:
            raise ValueError(f"range {item!r}: the step {nums[2]} never goes from {nums[0]} to {nums[1]}")
        count = int(math.floor((stop - start) / step + 1e-9)) + 1
        if count > MAX_RANGE:
            raise ValueError(f"range {item!r} gives {count} values; at most {MAX_RANGE}")
        for i in range(count):
            v = start + i * step
            out.append(f"{v}{unit}" if ints else f"{v:.12g}{unit}")
    return out


def positive(text: str) -> int:
    """A positive integer (``--seeds``, ``--jobs``, ``--flows``, ...)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


def seed(text: str) -> int:
    """``--seed``: what the simulator's seed holds (an unsigned 64-bit integer)."""
    try:
        n = int(text)
    except ValueError:
        n = None
    if n is None or not 0 <= n <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to {MAX_SEED}, got {text!r}")
    return n


def levels(text: str) -> list[float]:
    """``calibrate --levels``: loss ratios in %, each in (0, 100]."""
    try:
        xs = [float(x) for x in text.split(",")]
    except ValueError:
        xs = []
    if not xs or not all(0 < x <= 100 for x in xs):  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected loss ratios in %, each above 0 and at most 100, separated by "
                                         f"commas (like 0.1,0.5,1.0), got {text!r}")
    return xs


def _factor_list(text: str, allowed, expected: str) -> list[int]:
    """Comma-separated whole factors, each one whose text ``allowed``
    accepts; otherwise an error saying ``expected`` and what was given."""
    out = []
    for part in text.split(","):
        p = part.strip()
        if not allowed(p):
            raise argparse.ArgumentTypeError(f"expected {expected} separated by commas, got {text!r}")
        out.append(int(p))
    return out


def scales(text: str) -> list[int]:
    """``--ns3-scales``: factors of the scale benchmark ns-3 runs too."""
    return _factor_list(text, lambda p: p in ("1", "10", "100"), "factors among 1, 10 and 100")


def factors(text: str) -> list[int]:
    """``--scales``: the scale benchmark's factors, whole numbers from 1 to
    1000, comma separated."""
    return _factor_list(text, lambda p: p.isdigit() and 1 <= int(p) <= 1000,
                        "whole factors from 1 to 1000 (like 1,10,30,100)")


def comma_list(text: str) -> list[str]:
    """A non-empty comma-separated list of words."""
    vals = [x.strip() for x in text.split(",") if x.strip()]
    if not vals:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return vals


def losses(text: str) -> tuple[float, ...]:
    """``--loss 0.001,0.01``: loss probabilities in [0, 1]."""
    try:
        xs = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: comma-separated loss probabilities expected") from None
    if not xs or any(not 0.0 <= x <= 1.0 for x in xs):
        raise argparse.ArgumentTypeError(f"{text}: every loss probability must lie in [0, 1]")
    return xs
