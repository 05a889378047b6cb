from typing import Any, Literal

__version__: str

class NativeScenarioError(ValueError): ...

def load_scenario(path: str, overrides: list[tuple[str, str]] = ...) -> dict[str, Any]:
    """Validates a scenario; returns {name, description, reference, params,
    seeds, paper, file, document}: ``document`` is the file with its
    parameters substituted, as the simulator's loader read it."""

def show_config(path: str, overrides: list[tuple[str, str]] = ...) -> str:
    """The scenario as it will run (every link direction, the TCP settings), as text."""

def resolve(path: str, overrides: list[tuple[str, str]] = ...) -> dict[str, Any]:
    """The resolved model as data: packet_bytes, bottleneck, monitored, links
    (each direction: rate_bps, delay_ns, loss, queue, limit, buffer_bytes,
    controller, ...), tcp."""

def run(path: str, seed: int, overrides: list[tuple[str, str]] = ...) -> dict[str, Any]: ...
def flow_starts(path: str, seed: int, overrides: list[tuple[str, str]] = ...) -> list[float]:
    """Each TCP flow's start (s) as the simulator draws it for ``seed``."""
def mechanisms() -> dict[str, list[dict[str, Any]]]:
    """The registry: ``queues``, ``controllers`` (name, title, paper, keys,
    needs_rate) and ``congestion_controls`` (name, title)."""

def parse_time(v: str | int | float) -> float:
    """Seconds, through the one unit parser (crates/base/src/units.rs)."""

def parse_rate(v: str | int | float) -> int:
    """Bits per second."""

def parse_size(v: str | int | float) -> tuple[Literal["bytes", "packets"], int]: ...
