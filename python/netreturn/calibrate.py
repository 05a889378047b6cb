"""RFC 7928 congestion levels (seed 000 section 5.3).

With DropTail, the flow count is raised one at a time; the first count whose
mean TCP loss ratio over the seeds reaches a level's target is that level
(mild about 0.1 %, medium 0.5 %, heavy 1 %). Loss grows with the number of
flows but not strictly (seed noise), so the scan is linear like the paper's,
and it stops once the heaviest level is reached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .runner import RunSpec, run_many
from .scenarios import load
from .stats import mean_ci

LEVEL_NAMES = {0.1: "mild", 0.5: "medium", 1.0: "heavy"}


def calibrate(
    scenario: str,
    levels: Sequence[float] = (0.1, 0.5, 1.0),
    seeds: int = 5,
    sets: dict | None = None,
    param: str = "flows",
    max_flows: int = 100,
    jobs: int | None = None,
    out: str | Path | None = None,
    progress: bool = True,
    start: int = 1,
    metric: str = "tcp_loss_pct",
) -> list[tuple[str, float, int | None, float]]:
    """Returns (level name, target %, smallest count reaching it or None,
    mean loss % at that count) per level."""
    sets = {**(sets or {}), "queue": (sets or {}).get("queue", "droptail")}
    info = load(scenario, sets)
    if param not in info["params"]:
        from .scenarios import ScenarioError

        raise ScenarioError(f"{scenario}: --param {param}: not a parameter of this scenario ({', '.join(info['params'])})")
    targets = sorted(levels)
    found: dict[float, tuple[int, float]] = {}
    out = Path(out) if out else Path("results") / "calibrate" / Path(scenario).stem
    n = start
    while n <= max_flows and len(found) < len(targets):
        specs = [RunSpec.make(scenario, {**sets, param: n}, s) for s in range(1, seeds + 1)]
        res = run_many(specs, jobs=jobs, out=out, progress=False)
        loss, _, _ = mean_ci(r["summary"][metric] for r in res)
        if progress:
            print(f"  {param}={n:>3}: mean loss {loss:.3f} %")
        for t in targets:
            if t not in found and loss >= t:
                found[t] = (n, loss)
        n += 1
    return [(LEVEL_NAMES.get(t, f"{t}%"), t, *(found.get(t, (None, float("nan"))))) for t in targets]
