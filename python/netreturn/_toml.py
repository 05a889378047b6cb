"""Reading TOML on every Python the package supports: ``tomllib`` from 3.11,
its original ``tomli`` (a dependency on older Pythons) before. The one place
that knows which."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.9 and 3.10
    import tomli as tomllib


def load(path: str | Path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def loads(text: str) -> dict:
    return tomllib.loads(text)
