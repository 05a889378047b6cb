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
import re
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


# --- Rust: the modules of each crate use each other without cycles ---------
#
# Issue 22: "no module cycle is left inside a crate". A crate's modules are
# the files and directories right under its ``src/`` (a directory module,
# ``x/mod.rs`` or ``x.rs`` beside ``x/``, with its submodules is one module;
# ``src/bin/`` holds separate crates). Module ``a`` uses ``b`` when a file of
# ``a`` names a path ``crate::b...`` (``use crate::{b, c::d}`` names both),
# or ``crate::N`` for a name ``N`` the crate root re-exports from ``b``
# (``pub use b::N;`` in ``lib.rs``: the re-export hides the module, not the
# dependency). Comments, strings and unit-test modules (``#[cfg(test)] mod``)
# do not count. ``super::`` inside a directory module stays in it (no file
# reaches past its own module that way).

CRATES = Path(__file__).resolve().parents[1] / "crates"


def _strip_rust_comments(text: str) -> str:
    """``text`` without comments (``//``, ``/* */``) and with string literals
    (``"..."``, raw ``r#"..."#``) and char literals emptied: none is a use."""
    out, i, n = [], 0, len(text)
    while i < n:
        word_start = text[i] in "br" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        raw = re.match(r'b?r(#*)"', text[i:i + 40]) if word_start else None
        char = re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) if text[i] == "'" else None
        if raw:
            end = text.find('"' + raw.group(1), i + raw.end())
            out.append('""')
            i = n if end < 0 else end + 1 + len(raw.group(1))
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif char:  # ('"' would open a string; a lifetime 'a is no literal)
            out.append("' '")
            i += char.end()
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _strip_test_modules(text: str) -> str:
    """``text`` (comments stripped) without its ``#[cfg(test)] mod x { ... }``
    blocks: a unit test may build its case with any module of the crate."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([\w:]+\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            return text
        depth, j = 0, m.end() - 1
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        text = text[:m.start()] + text[j + 1:]


def _path_heads(text: str) -> set[str]:
    """The first segment of every path after ``crate::`` in ``text``, the
    members of a braced group (``crate::{a, b::c}``) each."""
    heads: set[str] = set()
    for m in re.finditer(r"(?<![\w:])\$?crate::", text):
        i = m.end()
        if i < len(text) and text[i] == "{":
            depth, start, j = 0, i + 1, i
            while j < len(text):
                if text[j] == "{":
                    depth += 1
                elif text[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            group, depth, part = text[start:j], 0, []
            for ch in group + ",":
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                if ch == "," and depth == 0:
                    head = re.match(r"\s*(\w+)", "".join(part))
                    if head:
                        heads.add(head.group(1))
                    part = []
                else:
                    part.append(ch)
        else:
            head = re.match(r"(\w+)", text[i:])
            if head:
                heads.add(head.group(1))
    return heads


def _root_reexports(root: Path, modules: set[str]) -> dict[str, str]:
    """Names the crate root re-exports from its own modules: ``pub use
    m::{A, B};`` and ``pub use m::x::C;`` map ``A``, ``B``, ``C`` to ``m``."""
    out: dict[str, str] = {}
    text = _strip_rust_comments(root.read_text())
    for m in re.finditer(r"pub\s+use\s+(\w+)::([^;]*);", text):
        if m.group(1) not in modules:
            continue
        for name in re.findall(r"(\w+)\s*(?:[,}]|$)", m.group(2)):
            out[name] = m.group(1)
    return out


def rust_module_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same crate it uses, for crate ``src``."""
    files: dict[str, list[Path]] = {}
    for p in sorted(src.rglob("*.rs")):
        parts = p.relative_to(src).parts
        if parts[0] == "bin" or (len(parts) == 1 and parts[0] in ("lib.rs", "main.rs")):
            continue
        name = parts[0][:-3] if len(parts) == 1 else parts[0]
        files.setdefault(name, []).append(p)
    modules = set(files)
    root = src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs"
    reexports = _root_reexports(root, modules) if root.exists() else {}
    graph: dict[str, set[str]] = {}
    for name, paths in files.items():
        heads = set().union(*(_path_heads(_strip_test_modules(_strip_rust_comments(p.read_text()))) for p in paths))
        used = {h if h in modules else reexports.get(h, "") for h in heads}
        graph[name] = {u for u in used if u and u != name}
    return graph


RUST_CRATES = sorted(p.parent.name for p in CRATES.glob("*/src"))


def test_the_rust_path_reader_finds_grouped_and_reexported_uses(tmp_path):
    src = tmp_path / "src"
    (src / "w").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod a;\npub mod b;\npub mod w;\npub use b::{Thing, Other};\n")
    (src / "a.rs").write_text("use crate::{w::World, Thing};\n// crate::c in a comment\nfn f() {}\n")
    (src / "b.rs").write_text('pub struct Thing;\npub struct Other;\nconst S: &str = "crate::a";\n')
    (src / "w" / "mod.rs").write_text("mod build;\n#[cfg(test)]\nmod tests {\n    fn t() { crate::a::f() }\n}\n")
    (src / "w" / "build.rs").write_text("use super::*;\nfn g() -> crate::b::Other { crate::b::Other }\n")
    g = rust_module_graph(src)
    assert g == {"a": {"w", "b"}, "b": set(), "w": {"b"}}
    assert find_cycle(g) is None
    (src / "b.rs").write_text("pub struct Thing;\npub struct Other;\nuse crate::w::Something;\n")
    assert find_cycle(rust_module_graph(src)) == ["b", "w", "b"]


@pytest.mark.parametrize("crate", RUST_CRATES)
def test_the_modules_of_each_rust_crate_use_each_other_without_a_cycle(crate):
    g = rust_module_graph(CRATES / crate / "src")
    cycle = find_cycle(g)
    assert cycle is None, f"crates/{crate}: module cycle: " + " -> ".join(cycle)


def test_the_rust_module_graphs_were_read():
    graphs = {c: rust_module_graph(CRATES / c / "src") for c in RUST_CRATES}
    assert {"sim", "tcp", "control", "wire", "base"} <= set(graphs)
    assert "world" in graphs["sim"]["metrics"], "metrics reads the world it summarizes"
    assert sum(len(e) for g in graphs.values() for e in g.values()) > 20
