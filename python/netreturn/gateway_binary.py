"""The real gateway's binary, ``netreturn-gateway``: where it is, how to get
it, and ``netreturn gateway ARGS...``, which runs it.

The binary is not in the wheel (it is a separate Rust program with its own
build), so it is looked for, in this order: an explicit path,
``$NETRETURN_GATEWAY``, ``$PATH``, then, when this package runs from a
checkout, that checkout's cargo target directories (release, then debug).
A checkout with cargo builds it when it is missing; anywhere else the error
says how to build it. Standard library only: the testbed uses it too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

NAME = "netreturn-gateway"
BUILD = ["cargo", "build", "--release", "-p", NAME]


class GatewayNotFound(RuntimeError):
    """No gateway binary, and none could be built: the message says how to
    get one."""


def checkout() -> Path | None:
    """The source checkout this package runs from (an editable install or
    PYTHONPATH=python), or None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "crates" / "gateway" / "Cargo.toml").is_file() else None


def target_dirs(root: Path | None) -> list[Path]:
    """Where cargo puts the binary: $CARGO_TARGET_DIR (relative to the
    checkout, as cargo reads it there), then the checkout's target/."""
    dirs = []
    env = os.environ.get("CARGO_TARGET_DIR")
    if env:
        d = Path(env)
        dirs.append(d if d.is_absolute() or root is None else root / d)
    if root is not None:
        dirs.append(root / "target")
    return dirs


def _executable(p: str | Path | None) -> bool:
    return bool(p) and os.path.isfile(p) and os.access(p, os.X_OK)


def find(explicit: str | None = None) -> str:
    """The binary's path; GatewayNotFound (saying how to build it) if none."""
    if explicit:
        # A path the user named is never replaced by another binary.
        if _executable(explicit):
            return str(explicit)
        raise GatewayNotFound(f"{explicit}: not an executable file")
    cands: list[str | Path | None] = [os.environ.get("NETRETURN_GATEWAY"), shutil.which(NAME)]
    for d in target_dirs(checkout()):
        cands += [d / "release" / NAME, d / "debug" / NAME]
    for c in cands:
        if _executable(c):
            return str(c)
    where = "$NETRETURN_GATEWAY, $PATH" + ("".join(f", {d}/{{release,debug}}" for d in target_dirs(checkout())))
    raise GatewayNotFound(
        f"{NAME} not found (looked in {where}). It is built from a checkout of netreturn with Rust "
        f"(https://rustup.rs): `{' '.join(BUILD)}`; then put target/release/{NAME} on PATH "
        f"or set NETRETURN_GATEWAY to it")


def ensure(explicit: str | None = None, build: bool = True) -> str:
    """:func:`find`, or, when the binary is missing and this package runs
    from a checkout with cargo, builds it there first (saying so)."""
    try:
        return find(explicit)
    except GatewayNotFound:
        if explicit or not build:
            raise
    root = checkout()
    cargo = shutil.which("cargo")
    if root is None or cargo is None:
        raise GatewayNotFound(
            f"{NAME} not found, and no " + ("checkout" if root is None else "cargo") + " to build it with: "
            f"install Rust (https://rustup.rs) and run `{' '.join(BUILD)}` in a checkout of netreturn, "
            f"or set NETRETURN_GATEWAY to a built binary")
    # stderr: stdout may be a pipe to something reading the gateway's output.
    print(f"building {NAME} in {root} ({' '.join(BUILD)}) ...", file=sys.stderr, flush=True)
    if subprocess.run([cargo, *BUILD[1:]], cwd=root).returncode != 0:
        raise GatewayNotFound(f"`{' '.join(BUILD)}` failed in {root}")
    return find(None)


def main(args: Sequence[str]) -> int:
    """``netreturn gateway ARGS...``: the gateway binary with ARGS, as if run
    directly (its own ``--help``, exit status and signals)."""
    try:
        binary = ensure(None, build=True)
    except GatewayNotFound as e:
        print(f"netreturn: error: {e}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    # exec, not a child: Ctrl-C and kill reach the gateway itself, which
    # restores what it changed on the host before it exits.
    os.execv(binary, [binary, *args])
    return 0  # not reached
