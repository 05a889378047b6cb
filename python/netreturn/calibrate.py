"""RFC 7928 congestion levels (the EWT paper's section 5.3).

With DropTail, the flow count is raised one at a time; the first count whose
mean TCP loss ratio over the seeds reaches a level's target is that level
(mild about 0.1 %, medium 0.5 %, heavy 1 %). Loss grows with the number of
flows but not strictly (seed noise), so the scan is linear like the paper's,
and it stops once the heaviest level is reached.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable, Sequence

from .runner import RunSpec, run_many
from .scenarios import load
from .stats import mean_ci

LEVEL_NAMES = {0.1: "mild", 0.5: "medium", 1.0: "heavy"}


def degenerate(counts: Sequence[int | None], start: int = 1, param: str = "flows") -> str | None:
    """Why a calibration's answer cannot separate congestion levels, or None.

    RFC 7928 levels are meant to differ (the EWT paper section 5.3: mild, medium
    and heavy are different flow counts). Two answers make the counts
    meaningless: every level reached at the smallest count (``start``: the
    loss at one flow is already above the heaviest target, so the levels say
    nothing about congestion), or several levels at one count (the loss
    jumps past more than one target in a single step)."""
    known = [c for c in counts if c is not None]
    if len(known) < 2:
        return None
    if all(c == start for c in known):
        return (f"every level is reached at the smallest count ({param}={start}): the loss there is already above "
                "the heaviest target, so the levels do not measure congestion (look for loss that does not come "
                "from sharing the bottleneck: one flow whose window, the receivers' buffer, exceeds what the path "
                "and the buffer hold, or a sender's access queue)")
    if len(set(known)) < len(known):
        same = sorted({c for c in known if known.count(c) > 1})
        return (f"several levels fall on the same count ({', '.join(f'{param}={c}' for c in same)}): the loss jumps "
                "past more than one target in one step, so those levels are not distinct")
    return None


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
    metric: str = "tcp_data_loss_pct",
    strategy: str = "scan",
) -> list[tuple[str, float, int | None, float]]:
    """Returns (level name, target %, smallest count reaching it or None,
    mean loss % at that count) per level. ``strategy="search"`` finds the
    same counts (for a loss that grows with the count) with a
    :class:`LevelSearch` instead of the linear scan."""
    sets = {**(sets or {}), "queue": (sets or {}).get("queue", "droptail")}
    info = load(scenario, sets)
    if param not in info["params"]:
        from .scenarios import ScenarioError

        raise ScenarioError(
            f"{scenario}: --param {param}: not a parameter of this scenario ({', '.join(info['params'])})"
        )
    targets = sorted(levels)
    found: dict[float, tuple[int, float]] = {}
    out = Path(out) if out else Path("results") / "calibrate" / Path(scenario).stem
    if strategy == "search":
        def loss_at(n: int, seed_list: list[int]) -> list[float]:
            specs = [RunSpec.make(scenario, {**sets, param: n}, s) for s in seed_list]
            res = run_many(specs, jobs=jobs, out=out, progress=False)
            if progress:
                print(f"  {param}={n:>3}: seeds {seed_list[0]}..{seed_list[-1]}")
            return [math.nan if r["summary"].get(metric) is None else r["summary"][metric] for r in res]

        search = search_levels(loss_at, targets, min_flows=start, max_flows=max_flows, max_seeds=seeds)
        return [(LEVEL_NAMES.get(t, f"{t}%"), t, n, search.mean(n)[0] if n is not None else float("nan"))
                for t, n in search.result().items()]
    if strategy != "scan":
        from .scenarios import ScenarioError

        raise ScenarioError(f"unknown calibration strategy {strategy!r}; allowed: scan, search")
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


class LevelSearch:
    """The flow count at which a mean loss ratio first reaches each level,
    found by galloping and bisection instead of a linear scan.

    Loss is assumed to grow with the number of flows (as the linear scan above
    assumes when it stops at the heaviest level). For each level ``L`` the
    search keeps the smallest evaluated count whose loss reaches ``L`` (``hi``)
    and the largest smaller count whose loss stays below it (``lo``); it
    doubles ``lo`` until some count reaches ``L`` (or ``max_flows`` does not),
    then bisects until ``hi = lo + 1``: the answer is ``hi``, the RFC 7928
    count of that level, and ``hi - 1`` the largest count that stays below
    it. Counts probed for one level serve the others.

    Seeds are added at a count only while they can change the answer: a count
    is first run with ``first_seeds`` seeds; if the 95 % CI of the mean
    already lies wholly above or below ``L``, that decides it, otherwise
    ``first_seeds`` more are added, up to ``max_seeds``, where the mean
    decides (as in :func:`calibrate`). ``exact=True`` always runs
    ``max_seeds``. Decisions use seeds 1..k only, so a rerun over stored runs
    repeats the same probes.

    The search is driven from outside: :meth:`wanted` names the counts that
    need (more) seeds, :meth:`add` takes their losses, until :meth:`wanted`
    is empty; then :meth:`result` holds the answer per level.
    """

    def __init__(self, levels: Sequence[float], min_flows: int = 1, max_flows: int = 100, max_seeds: int = 30,
                 first_seeds: int = 6, exact: bool = False, start: dict | None = None):
        self.levels = sorted(float(x) for x in levels)
        self.min_flows = int(min_flows)
        self.max_flows = int(max_flows)
        self.max_seeds = int(max_seeds)
        self.first_seeds = self.max_seeds if exact else max(1, min(int(first_seeds), self.max_seeds))
        # Where to probe first per level (e.g. the paper's count), when nothing is known yet.
        self.start = {float(k): int(v) for k, v in (start or {}).items()}
        self.values: dict[int, list[float]] = {}

    # --- evidence -------------------------------------------------------
    def add(self, n: int, losses: Sequence[float]) -> None:
        """Losses of the next seeds at ``n`` (seed k+1, k+2, ... in order)."""
        self.values.setdefault(int(n), []).extend(float(x) for x in losses)

    def seeds_at(self, n: int) -> int:
        return len(self.values.get(n, ()))

    def mean(self, n: int) -> tuple[float, float, int]:
        return mean_ci(self.values.get(n, ()))

    def decide(self, n: int, level: float) -> bool | None:
        """Does the mean loss at ``n`` reach ``level``? None: not yet known."""
        k = self.seeds_at(n)
        if k < self.first_seeds:
            return None
        m, h, _ = self.mean(n)
        eps = 1e-9 * max(1.0, abs(level))  # float sums of equal values: 6 x 0.1 / 6 < 0.1
        if k >= self.max_seeds or (not math.isnan(h) and h <= eps):
            return m >= level - eps
        if math.isnan(h):
            return None
        if m - h >= level - eps:
            return True
        if m + h < level - eps:
            return False
        return None

    def _more(self, n: int) -> int:
        """Seeds in steps of ``first_seeds``: a sequential test stops at the
        first step whose CI clears the level, doubling would overshoot it."""
        k = self.seeds_at(n)
        return self.first_seeds if k < self.first_seeds else min(self.max_seeds, k + self.first_seeds)

    # --- the search -----------------------------------------------------
    def bracket(self, level: float) -> tuple[int, int]:
        """(lo, hi): the smallest count known to reach ``level`` (or
        max_flows + 1) and the largest smaller count known to stay below it
        (or min_flows - 1)."""
        hi = self.max_flows + 1
        for n in self.values:
            if n < hi and self.decide(n, level) is True:
                hi = n
        lo = self.min_flows - 1
        for n in self.values:
            if lo < n < hi and self.decide(n, level) is False:
                lo = n
        return lo, hi

    def _probe(self, level: float) -> int | None:
        lo, hi = self.bracket(level)
        if hi - lo <= 1 or lo >= self.max_flows:
            return None
        open_ = [n for n in self.values if lo < n < hi and self.decide(n, level) is None]
        if open_:  # a count inside the bracket that needs more seeds
            mid = (lo + hi) / 2
            return min(open_, key=lambda n: (abs(n - mid), n))
        if hi > self.max_flows:  # nothing reaches the level yet: gallop
            if lo < self.min_flows:
                s = self.start.get(level)
                return min(self.max_flows, max(self.min_flows, s)) if s else self.min_flows
            return min(self.max_flows, max(2 * lo, lo + 1))
        return (lo + hi) // 2

    def wanted(self) -> dict[int, int]:
        """Counts to run next -> the number of seeds each should then have."""
        want: dict[int, int] = {}
        for level in self.levels:
            n = self._probe(level)
            if n is not None:
                want[n] = max(want.get(n, 0), self._more(n))
        return want

    def done(self) -> bool:
        return not self.wanted()

    def result(self) -> dict[float, int | None]:
        """Per level: the first count whose mean loss reaches it, or None if
        even ``max_flows`` stays below it."""
        out: dict[float, int | None] = {}
        for level in self.levels:
            _, hi = self.bracket(level)
            out[level] = hi if hi <= self.max_flows else None
        return out


def search_levels(
    loss_at: Callable[[int, list[int]], list[float]],
    levels: Sequence[float] = (0.1, 0.5, 1.0),
    **kwargs,
) -> LevelSearch:
    """Runs a :class:`LevelSearch` to the end with ``loss_at(n, seeds)``
    giving the loss of each seed at ``n`` flows."""
    s = LevelSearch(levels, **kwargs)
    while True:
        want = s.wanted()
        if not want:
            return s
        for n, k in sorted(want.items()):
            have = s.seeds_at(n)
            s.add(n, loss_at(n, list(range(have + 1, k + 1))))
