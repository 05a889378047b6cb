"""Argument types of the command lines (``netreturn ...``, ``netreturn
testbed ...``, ``netreturn validate ...``): each parses one option's text or
raises :class:`argparse.ArgumentTypeError` with what was expected.

A leaf module: it imports nothing of the package, so every command line can
use it without importing another.
"""

from __future__ import annotations

import argparse

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
    """``--sweep NAME=V1,V2``."""
    k, v = kv(text)
    vals = [x.strip() for x in v.split(",") if x.strip()]
    if not vals:
        raise argparse.ArgumentTypeError(f"--sweep {k}= needs at least one value")
    return k, vals


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


def scales(text: str) -> list[int]:
    """``--ns3-scales``: factors of the scale benchmark, comma separated."""
    out = []
    for part in text.split(","):
        if part.strip() not in ("1", "10", "100"):
            raise argparse.ArgumentTypeError(f"expected factors among 1, 10 and 100 separated by commas, got {text!r}")
        out.append(int(part))
    return out


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
