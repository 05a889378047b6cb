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
