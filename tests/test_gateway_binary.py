"""`netreturn gateway ARGS...`: the real gateway's binary is found (explicit,
$NETRETURN_GATEWAY, $PATH, the checkout's target directories), built in a
checkout with cargo, or the error says how to build it. A shell script
stands in for the binary and for cargo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from netreturn import gateway_binary as gb

FAKE = "#!/bin/sh\necho \"fake gateway {tag}: $*\"\nexit 3\n"


def cargo_that_records_its_runs(bin_dir: Path) -> Path:
    """A cargo that only leaves a mark that it ran; returns the mark's path."""
    mark = bin_dir / "cargo-ran"
    (bin_dir / "cargo").write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    (bin_dir / "cargo").chmod(0o755)
    return mark


def fake(path: Path, tag: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAKE.format(tag=tag))
    path.chmod(0o755)
    return path


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """No gateway anywhere: an empty PATH, no $NETRETURN_GATEWAY and
    $CARGO_TARGET_DIR, and a checkout (an empty folder) of the test's own."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("NETRETURN_GATEWAY", raising=False)
    monkeypatch.delenv("CARGO_TARGET_DIR", raising=False)
    root = tmp_path / "checkout"
    root.mkdir()
    monkeypatch.setattr(gb, "checkout", lambda: root)
    return root


def test_netreturn_gateway_runs_the_binary_with_its_arguments_and_exit_status(tmp_path):
    binary = fake(tmp_path / "gw", "env")
    env = {**os.environ, "NETRETURN_GATEWAY": str(binary)}
    p = subprocess.run([sys.executable, "-m", "netreturn.cli", "gateway", "--a", "x", "--help"], env=env,
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 3, p.stderr
    assert p.stdout == "fake gateway env: --a x --help\n"


def test_the_binary_on_path_is_found_before_a_checkouts_build(nowhere, monkeypatch):
    fake(nowhere / "target" / "release" / gb.NAME, "checkout")
    on_path = fake(Path(os.environ["PATH"]) / gb.NAME, "path")
    assert gb.find() == str(on_path)


def test_netreturn_gateway_overrides_path(nowhere, monkeypatch, tmp_path):
    fake(Path(os.environ["PATH"]) / gb.NAME, "path")
    mine = fake(tmp_path / "mine", "env")
    monkeypatch.setenv("NETRETURN_GATEWAY", str(mine))
    assert gb.find() == str(mine)


def test_a_checkouts_release_build_is_preferred_to_its_debug_build(nowhere):
    debug = fake(nowhere / "target" / "debug" / gb.NAME, "debug")
    assert gb.find() == str(debug)
    release = fake(nowhere / "target" / "release" / gb.NAME, "release")
    assert gb.find() == str(release)


def test_a_relative_cargo_target_dir_is_read_from_the_checkout(nowhere, monkeypatch):
    monkeypatch.setenv("CARGO_TARGET_DIR", "elsewhere")
    built = fake(nowhere / "elsewhere" / "release" / gb.NAME)
    assert gb.find() == str(built)


def test_an_explicit_path_that_is_not_a_binary_is_an_error_not_replaced_by_another(nowhere, tmp_path):
    fake(Path(os.environ["PATH"]) / gb.NAME)
    with pytest.raises(gb.GatewayNotFound, match="not an executable"):
        gb.find(str(tmp_path / "missing"))


def test_without_a_checkout_the_error_says_how_to_build_it_and_nothing_is_built(nowhere, monkeypatch):
    monkeypatch.setattr(gb, "checkout", lambda: None)
    ran = cargo_that_records_its_runs(Path(os.environ["PATH"]))  # cargo there, but nothing to build
    with pytest.raises(gb.GatewayNotFound) as e:
        gb.ensure()
    assert "cargo build --release -p netreturn-gateway" in str(e.value)
    assert "NETRETURN_GATEWAY" in str(e.value)
    assert not ran.exists()


def test_in_a_checkout_without_cargo_the_error_says_to_install_rust(nowhere):
    with pytest.raises(gb.GatewayNotFound, match="rustup"):
        gb.ensure()


def test_in_a_checkout_with_cargo_a_missing_gateway_is_built_and_says_so(nowhere, capsys):
    cargo = Path(os.environ["PATH"]) / "cargo"
    # A cargo that checks what it is asked, then "builds" where cargo would
    # (Python: PATH holds nothing else, not even mkdir).
    cargo.write_text(f"#!{sys.executable}\n"
                     "import os, sys\n"
                     "assert sys.argv[1:] == 'build --release -p netreturn-gateway'.split(), sys.argv\n"
                     "os.makedirs('target/release')\n"
                     f"open('target/release/{gb.NAME}', 'w').write('#!/bin/sh\\n')\n"
                     f"os.chmod('target/release/{gb.NAME}', 0o755)\n")
    cargo.chmod(0o755)
    assert gb.ensure() == str(nowhere / "target" / "release" / gb.NAME)
    assert "building netreturn-gateway" in capsys.readouterr().err


def test_without_building_a_missing_gateway_is_an_error(nowhere):
    ran = cargo_that_records_its_runs(Path(os.environ["PATH"]))
    with pytest.raises(gb.GatewayNotFound, match="not found"):
        gb.ensure(build=False)
    assert not ran.exists()
