"""Loads python/netreturn/testbed as a standalone package, so these tests
run whether or not the native extension of `netreturn` is built."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PKG_DIR = Path(__file__).resolve().parents[2] / "python" / "netreturn" / "testbed"


def load_testbed():
    try:
        import netreturn.testbed as tb  # the installed package, if importable

        return tb
    except Exception:
        pass
    name = "_netreturn_testbed"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, PKG_DIR / "__init__.py", submodule_search_locations=[str(PKG_DIR)]
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def gateway_or_skip() -> str:
    """The netreturn-gateway binary the namespace tests run (conftest.py
    builds this tree's), else built here with cargo, else the test skips."""
    import shutil
    import subprocess

    import pytest

    tb = load_testbed()
    try:
        return tb.runner.find_gateway()
    except tb.netns.TestbedError:
        pass
    if shutil.which("cargo") is None:
        pytest.skip("netreturn-gateway not built and cargo missing")
    subprocess.run(["cargo", "build", "-q", "-p", "netreturn-gateway"], cwd=PKG_DIR.parents[2], check=True, timeout=900)
    return tb.runner.find_gateway()


def _needs_netns():
    import pytest

    missing = load_testbed().netns.missing_requirements()
    return pytest.mark.skipif(bool(missing), reason="; ".join(missing) or "ok")


#: The mark of a test that needs root, network namespaces and the tools:
#: skipped with the reason otherwise.
needs_netns = _needs_netns()
