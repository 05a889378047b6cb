"""The package as a user installs it: the wheel is built from this tree
(``pip wheel .``, a release build), installed with its dependencies into a
fresh venv, and run from an empty folder, away from the checkout. Catches
what an editable install hides: files left out of the wheel (scenarios,
paper data, licences), paths into the checkout, undeclared dependencies.

Minutes: the release build (cached between runs under target/wheel, its own
cargo target directory, so it does not wait on target/'s lock) and PyPI
downloads (pip's cache). Deselect with ``-m "not wheel"``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parents[1]


def sh(cmd, cwd, env=None, timeout=900) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is needed to build the wheel (https://rustup.rs)")
    out = tmp_path_factory.mktemp("dist")
    target = os.environ.get("NETRETURN_WHEEL_TARGET_DIR", str(ROOT / "target" / "wheel"))
    env = {**os.environ, "CARGO_TARGET_DIR": target}
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, ROOT], cwd=ROOT, env=env, timeout=1800)
    (whl,) = out.glob("netreturn-*.whl")
    return whl


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel and its dependencies; its bin/ folder."""
    venv = tmp_path_factory.mktemp("venv")
    sh([sys.executable, "-m", "venv", venv], cwd=venv)
    sh([venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel], cwd=venv)
    return venv / "bin"


@pytest.fixture
def empty(tmp_path) -> tuple[Path, dict]:
    """An empty working folder, and an environment that cannot reach the
    checkout (no PYTHONPATH) and has no gateway to find."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NETRETURN_GATEWAY", "CARGO_TARGET_DIR")}
    return tmp_path, env


def test_the_wheel_holds_the_scenarios_the_paper_data_and_the_licences(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    bundled = sorted(p.relative_to(ROOT / "scenarios").as_posix() for p in (ROOT / "scenarios").rglob("*.toml"))
    assert bundled and all(f"netreturn/scenarios_data/{s}" in names for s in bundled)
    assert "netreturn/paper/ewt.toml" in names
    licences = {Path(n).name for n in names if ".dist-info/" in n and "LICENSE" in n}
    assert {"LICENSE-MIT", "LICENSE-APACHE"} <= licences
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT OR Apache-2.0" in meta
    assert "numpy" not in meta and "tomli" in meta


def test_the_installed_default_experiment_prints_its_table_and_writes_its_csv_from_an_empty_folder(installed, empty):
    cwd, env = empty
    p = sh([installed / "netreturn", "run", "--seeds", "2"], cwd=cwd, env=env, timeout=600)
    assert "EWT scenario 2" in p.stdout
    header = next(ln for ln in p.stdout.splitlines() if ln.startswith("metric"))
    assert header.split()[1:] == [f"queue={q}" for q in ("droptail", "red", "ewa", "awm", "ewt")]
    assert "mean FCT (" in p.stdout and "10 runs" in p.stdout  # 5 methods x 2 seeds
    summary = cwd / "results" / "ewt-scenario2" / "summary.csv"
    assert summary.is_file() and len(summary.read_text().splitlines()) > 5
    assert (cwd / "results" / "ewt-scenario2" / "metrics.png").stat().st_size > 5000


def test_the_installed_list_shows_every_bundled_scenario(installed, empty):
    cwd, env = empty
    out = sh([installed / "netreturn", "list"], cwd=cwd, env=env).stdout
    listed = [ln for ln in out.splitlines() if ln.endswith(".toml")]
    bundled = sorted(p.relative_to(ROOT / "scenarios").as_posix() for p in (ROOT / "scenarios").rglob("*.toml"))
    assert listed == bundled
    assert "invalid" not in out


def test_the_installed_version_names_the_package_version_and_the_simulator_build(installed, empty):
    cwd, env = empty
    out = sh([installed / "netreturn", "--version"], cwd=cwd, env=env).stdout
    assert re.fullmatch(r"netreturn \d+\.\d+\.\d+\S* \(simulator build [0-9a-f]{16}\)\n", out), out


def test_every_installed_reproduction_finds_its_paper_data_and_scenario_files(installed, empty):
    cwd, env = empty
    code = (
        "from netreturn.reproduce import PAPERS, awm, ngwa, sarbe\n"
        "from netreturn.reproduce.paper import Paper\n"
        "from netreturn.testbed import rwm\n"
        "from netreturn.scenarios import load\n"
        "files = list(Paper.load('ewt').scenarios.values())\n"
        "files += [f for fam in awm.FAMILIES.values() for f in fam[:1]]\n"
        "files += [ngwa.RATE, ngwa.WINDOW]\n"
        "assert all(m.PAPER['statements'] for m in (awm, ngwa, sarbe, rwm))\n"
        "for f in files:\n"
        "    load(f)\n"
        "for spec in sum(sarbe._specs(True, 1).values(), []):\n"
        "    load(spec.scenario, dict(spec.overrides))\n"
        "print(sorted(PAPERS))\n"
    )
    out = sh([installed / "python", "-c", code], cwd=cwd, env=env).stdout
    assert out.endswith("['awm', 'ewt', 'ngwa', 'sarbe']\n"), out


def test_the_installed_gateway_command_says_how_to_build_the_gateway(installed, empty):
    cwd, env = empty
    env = {**env, "PATH": f"{installed}:/usr/bin:/bin"}
    if shutil.which("netreturn-gateway", path=env["PATH"]):
        pytest.skip("a netreturn-gateway is installed system-wide")
    p = subprocess.run([installed / "netreturn", "gateway", "--help"], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2
    assert "cargo build --release -p netreturn-gateway" in p.stderr
