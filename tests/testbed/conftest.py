"""The namespace tests run the gateway built from this tree.

`runner.find_gateway` takes the first binary it finds ($NETRETURN_GATEWAY,
$PATH, then the cargo target directories), which may be an old build; so,
unless $NETRETURN_GATEWAY names one, the session builds the gateway (a no-op
when it is up to date) and points $NETRETURN_GATEWAY at it. Only as root
(the namespace tests are skipped otherwise) and only where cargo is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def _gateway_built_from_this_tree():
    if os.environ.get("NETRETURN_GATEWAY") or shutil.which("cargo") is None or os.geteuid() != 0:
        yield
        return
    r = subprocess.run(["cargo", "build", "-q", "-p", "netreturn-gateway"], cwd=ROOT, timeout=1800)
    tdir = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    path = (tdir if tdir.is_absolute() else ROOT / tdir) / "debug" / "netreturn-gateway"
    if r.returncode != 0 or not path.is_file():
        yield  # the tests find (or build) a binary themselves
        return
    os.environ["NETRETURN_GATEWAY"] = str(path)
    try:
        yield
    finally:
        os.environ.pop("NETRETURN_GATEWAY", None)
