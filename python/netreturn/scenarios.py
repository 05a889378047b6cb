"""Finding and validating scenario files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from . import _native

# The bundled scenario files are package data, beside this module, so a
# checkout, an editable install and an installed wheel find them the same
# way. (The repository's top-level `scenarios` is a symlink to this folder,
# for the README's paths and the Rust tests.) A plain path, not
# importlib.resources: the native loader opens files by name, and a package
# with an extension module is never imported from a zip.
BUNDLED_SCENARIOS = Path(__file__).resolve().parent / "scenarios_data"

DEFAULT_SCENARIO = "ewt/scenario2.toml"

# Seeds are u64 in the simulator.
MAX_SEED = 2**64 - 1


class ScenarioError(ValueError):
    """A scenario file or parameter is invalid: names the file, the field and
    what is allowed."""

    def __init__(self, message: str, file: str = "", field: str = "", detail: str = ""):
        super().__init__(message)
        self.file = file
        self.field = field
        self.detail = detail


def resolve(name: str | Path) -> Path:
    """A scenario path as given, or one of the bundled scenarios
    (``ewt/scenario2`` finds ``scenarios/ewt/scenario2.toml``)."""
    if not str(name).strip():
        raise ScenarioError("the scenario's name is empty; give a scenario file or a name from `netreturn list`")
    p = Path(name)
    candidates = [p, BUNDLED_SCENARIOS / p]
    # "/", "." and ".." have no name to put a suffix on.
    candidates = [c for x in candidates for c in ((x, x.with_suffix(".toml")) if x.name else (x,))]
    for c in candidates:
        if c.is_file():
            return c
    # Something is there, but not a file to read: say what (a FIFO would block a reader).
    for c in candidates:
        if c.is_dir():
            raise ScenarioError(f"{name}: is a directory, not a scenario file; the scenarios in it: "
                                f"{_scenarios_in(c)}", str(name))
        if c.exists():
            raise ScenarioError(f"{name}: is not a regular file; a scenario is a TOML file", str(name))
    detail = f"no such scenario file (looked in . and {BUNDLED_SCENARIOS})"
    raise ScenarioError(f"{name}: {detail}", str(name), "", detail)


def _scenarios_in(d: Path, most: int = 8) -> str:
    # Two levels, not rglob: the directory may be / or a home.
    found = sorted(str(p.relative_to(d)) for pattern in ("*.toml", "*/*.toml") for p in d.glob(pattern))
    if not found:
        return "none"
    return ", ".join(found[:most]) + (f" and {len(found) - most} more" if len(found) > most else "")


def list_scenarios() -> list[str]:
    """The bundled scenarios, as names :func:`resolve` takes."""
    return sorted(p.relative_to(BUNDLED_SCENARIOS).as_posix() for p in BUNDLED_SCENARIOS.rglob("*.toml"))


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


def param_value(text: Any) -> Any:
    """A parameter value as the scenario reads it, the inverse of
    :func:`overrides_list`: ``"17"`` is the integer 17, ``"0.5"`` a float,
    ``"true"`` a boolean (TOML literals); anything else (``"red"``,
    ``"300kB"``) stays the string it is. Values that are not strings are
    returned as they are. So a swept ``flows`` sorts 8 before 17."""
    if not isinstance(text, str) or "\n" in text or "#" in text:
        return text
    from ._toml import loads

    try:
        v = loads(f"v = {text}")["v"]
    except ValueError:  # not a TOML literal: a word such as red, or 300kB
        return text
    return v if isinstance(v, (bool, int, float)) else text


def _native_call(fn: Any, name: str | Path, overrides: Mapping[str, Any] | None, *args: Any) -> Any:
    """``fn(path, *args, overrides)`` of the native module on scenario
    ``name``, its errors raised as :class:`ScenarioError` (file, field,
    detail)."""
    path = resolve(name)
    try:
        return fn(str(path), *args, overrides_list(overrides))
    except _native.NativeScenarioError as e:
        msg, file, field, detail = e.args
        raise ScenarioError(msg, file, field, detail) from None


def load(name: str | Path, overrides: Mapping[str, Any] | None = None) -> dict:
    """Validates a scenario with its overrides; returns its description."""
    return _native_call(_native.load_scenario, name, overrides)


def swept(e: ScenarioError, keys: Iterable[str]) -> ScenarioError:
    """``e`` with its wording fixed for a value that came from ``--sweep``:
    the native loader knows overrides only as ``--set NAME=VALUE``."""
    msg, detail = str(e), e.detail
    for k in keys:
        if e.field == f"params.{k}":  # an unknown parameter: "--set names an unknown parameter"
            msg, detail = (x.replace("--set names", "--sweep names", 1).replace("e.g. --set ", "e.g. --sweep ")
                           for x in (msg, detail))
        msg, detail = (x.replace(f"--set {k}=", f"--sweep {k}=") for x in (msg, detail))
    return ScenarioError(msg, e.file, e.field, detail)


def for_python(e: ScenarioError, sets: Mapping[str, Any], sweep: Mapping[str, Any]) -> ScenarioError:
    """``e`` (worded for the command line by :func:`swept`) reworded for a
    caller of :func:`netreturn.run`: ``--set queue=fifo`` becomes
    ``set['queue'] = 'fifo'`` and ``--sweep flows=abc`` ``sweep['flows']
    value 'abc'``, with the values as the caller gave them."""
    msg, detail = str(e), e.detail
    for flag, values, fmt in (("--set", sets, "set[{k!r}] = {v!r}"), ("--sweep", sweep, "sweep[{k!r}] value {v!r}")):
        for k, v in values.items():
            text = overrides_list({k: v})[0][1]
            msg, detail = (x.replace(f"{flag} {k}={text}", fmt.format(k=k, v=v)) for x in (msg, detail))
        msg, detail = (x.replace(f"{flag} names", f"{flag.lstrip('-')}= names")
                       .replace(f"e.g. {flag} topology.bottleneck.rate=10Mbps",
                                f"e.g. {flag.lstrip('-')}={{'topology.bottleneck.rate': '10Mbps'}}")
                       for x in (msg, detail))
    return ScenarioError(msg, e.file, e.field, detail)


def show_config(name: str | Path, overrides: Mapping[str, Any] | None = None) -> str:
    """The scenario as it will run, resolved once for the simulator and the
    real gateway: each link direction's rate, delay, buffer in bytes, queue,
    controller and its parameters, and the endpoints' TCP settings."""
    return _native_call(_native.show_config, name, overrides)


def model(name: str | Path, overrides: Mapping[str, Any] | None = None) -> dict:
    """The scenario as it will run, as data (``_native.resolve``): packet
    size, bottleneck, monitored link, every link direction (rate, delay,
    loss, queue, buffer, controller) and the TCP settings."""
    return _native_call(_native.resolve, name, overrides)


def flow_starts(name: str | Path, seed: int, overrides: Mapping[str, Any] | None = None) -> list[float]:
    """Each TCP flow's start (s) as the simulator draws it for ``seed``
    (``_native.flow_starts``), in the order of the flows' numbers."""
    return _native_call(_native.flow_starts, name, overrides, seed)
