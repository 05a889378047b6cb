"""The Python package's modules import each other without cycles (issue 22
scope 4), and every module imports.

The graph is built with ``ast`` over ``python/netreturn/**/*.py``: every
``import`` and ``from ... import`` statement, relative ones resolved, counts,
including the lazy imports inside functions: a lazy import hides a cycle
from Python's import machinery, not from the design (the two modules still
need each other), so it is no excuse here.

Not counted:

* the implicit import of a parent package (``netreturn.testbed`` when
  ``netreturn.testbed.netns`` is imported): Python initialises a package
  before its submodules whatever the importer says, and a package
  ``__init__`` that re-exports its submodules' names would otherwise make
  every package a cycle;
* imports by computed name (``importlib.import_module(name)``), which the
  source does not spell out;
* modules outside the package (the standard library, numpy, ...) and the
  compiled ``_native`` module, which imports nothing of ours.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "python"
PKG = "netreturn"


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted((ROOT / PKG).rglob("*.py")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


MODULES = _modules()
#: Compiled modules of the package (their stubs): they import nothing of ours.
COMPILED = {f"{PKG}.{p.stem}" for p in (ROOT / PKG).glob("*.pyi")}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target>`` written in ``module``."""
    base = module.split(".")
    if not _is_package(module):
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(name: str) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its source."""
    tree = ast.parse(MODULES[name].read_text(), str(MODULES[name]))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node.level, node.module) if node.level else (node.module or "")
            for a in node.names:
                sub = f"{base}.{a.name}"
                # `from . import x` where x is a submodule imports x (and its
                # parent, not counted); otherwise a name of module `base`.
                out.add(sub if sub in MODULES or sub in COMPILED else base)
    return {m for m in out if m in MODULES and m != name}


def graph() -> dict[str, set[str]]:
    return {m: imports_of(m) for m in MODULES}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``g`` as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(g[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(g):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_relative_imports_resolve_as_python_resolves_them():
    assert _resolve("netreturn.testbed.cli", 2, "args") == "netreturn.args"
    assert _resolve("netreturn.testbed.cli", 1, "netns") == "netreturn.testbed.netns"
    assert _resolve("netreturn.testbed", 1, "cli") == "netreturn.testbed.cli"
    assert _resolve("netreturn.cli", 1, None) == "netreturn"
    assert "netreturn.testbed.netns" in imports_of("netreturn.testbed.cli")


def test_the_package_has_no_import_cycle():
    g = graph()
    assert len(g) > 30 and sum(map(len, g.values())) > 50  # the graph was read
    cycle = find_cycle(g)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("name", sorted(m for m in MODULES if not m.endswith("__main__")))
def test_every_module_imports(name):
    importlib.import_module(name)  # ns-3, Dask, matplotlib: imported lazily, not needed here
