"""Finding and validating scenario files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from . import _native

# The repository's scenarios/ directory (an editable install or a checkout).
REPO_SCENARIOS = Path(__file__).resolve().parent.parent.parent / "scenarios"

DEFAULT_SCENARIO = "ewt/scenario2.toml"


class ScenarioError(ValueError):
    """A scenario file or parameter is invalid: names the file, the field and
    what is allowed."""

    def __init__(self, message: str, file: str = "", field: str = "", detail: str = ""):
        super().__init__(message)
        self.file = file
        self.field = field
        self.detail = detail


def resolve(name: str | Path) -> Path:
    """A scenario path as given, or relative to the repository's
    ``scenarios/`` (``ewt/scenario2`` finds ``scenarios/ewt/scenario2.toml``)."""
    p = Path(name)
    candidates = [p, p.with_suffix(".toml"), REPO_SCENARIOS / p, (REPO_SCENARIOS / p).with_suffix(".toml")]
    for c in candidates:
        if c.is_file():
            return c
    raise ScenarioError(f"{name}: no such scenario file (looked in . and {REPO_SCENARIOS})", str(name))


def list_scenarios() -> list[str]:
    if not REPO_SCENARIOS.is_dir():
        return []
    return sorted(str(p.relative_to(REPO_SCENARIOS)) for p in REPO_SCENARIOS.rglob("*.toml"))


def overrides_list(overrides: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Parameter overrides as the native layer takes them (TOML literals)."""
    out = []
    for k, v in (overrides or {}).items():
        if isinstance(v, bool):
            s = "true" if v else "false"
        elif isinstance(v, (int, float)):
            s = repr(v)
        else:
            s = str(v)
        out.append((str(k), s))
    return out


def load(name: str | Path, overrides: Mapping[str, Any] | None = None) -> dict:
    """Validates a scenario with its overrides; returns its description."""
    path = resolve(name)
    try:
        return _native.load_scenario(str(path), overrides_list(overrides))
    except _native.NativeScenarioError as e:
        msg, file, field, detail = e.args
        raise ScenarioError(msg, file, field, detail) from None


def show_config(name: str | Path, overrides: Mapping[str, Any] | None = None) -> str:
    """The scenario as it will run, resolved once for the simulator and the
    real gateway: each link direction's rate, delay, buffer in bytes, queue,
    controller and its parameters, and the endpoints' TCP settings."""
    path = resolve(name)
    try:
        return _native.show_config(str(path), overrides_list(overrides))
    except _native.NativeScenarioError as e:
        msg, file, field, detail = e.args
        raise ScenarioError(msg, file, field, detail) from None
