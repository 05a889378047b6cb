"""The runs of an evaluation and their statistics, for any paper.

* :class:`Grid`: cells (scenario, level, method) at given counts per
  scenario and level, ``seeds`` runs each;
* :class:`Capacity`: per scenario and method a
  :class:`~netreturn.calibrate.LevelSearch` for the first count whose mean
  loss reaches each level, all searches advancing at once;
* :class:`Table`: mean, 95 % CI and n per cell and metric, and the CSVs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..calibrate import LevelSearch
from ..stats import mean, mean_ci
from .paper import Paper
from .store import Options, Runs


@dataclass
class Group:
    """One (scenario, count set, level, method) cell: its count and runs."""

    scenario: str
    countset: str
    level: str
    method: str
    flows: int
    runs: list[dict]


class Grid:
    """Cells (scenario, level, method) at given flow counts, ``seeds`` runs each.

    ``share_if``: with ``variants``, a variant's run is asked for only when
    the same run of the scenario itself (same count, method, seed) fails
    ``share_if(result)``; otherwise that run stands for it (:attr:`shared`
    counts them). For a variant that changes something the run never
    reached (a buffer that never dropped), the two runs are the same events.
    """

    def __init__(self, runs: Runs, opts: Options, counts: dict[str, dict[str, int | None]], countset: str,
                 series: set[tuple[str, int, str]], phase: str, variants: dict | None = None, share_if=None):
        self.cells = []
        self.shared = 0
        self.asked = 0
        for sc in opts.scenarios:
            if variants is not None and variants.get(sc) is None:
                continue
            v = variants.get(sc) if variants else None
            for lv in runs.paper.levels:
                n = counts.get(sc, {}).get(lv)
                if n is None:
                    continue
                for m in opts.methods:
                    keys: list[str | None] = []
                    for s in range(1, opts.seeds + 1):
                        spec = runs.spec(sc, n, m, s, keep_series=(s == 1 and (sc, n, m) in series), variant=v)
                        self.asked += 1
                        if share_if is None or v is None:
                            keys.append(runs.request(spec, phase, Runs.BULK))
                            continue
                        keys.append(None)
                        base = runs.spec(sc, n, m, s)
                        bk = base.key()
                        runs.request(base, phase, Runs.BULK, callback=lambda r, keys=keys, i=s - 1, bk=bk,
                                     spec=spec: self._decide(keys, i, bk, spec, phase, share_if, r))
                    self.cells.append((sc, lv, m, n, keys))
        self.runs = runs
        self.countset = countset

    def _decide(self, keys: list, i: int, base: str, spec, phase: str, share_if, r: dict) -> None:
        if share_if(r):
            keys[i] = base
            self.shared += 1
        else:
            keys[i] = self.runs.request(spec, phase, Runs.BULK)

    def groups(self) -> list[Group]:
        return [
            Group(sc, self.countset, lv, m, n, [self.runs.get(k) for k in keys]) for sc, lv, m, n, keys in self.cells
        ]


class Capacity:
    """The flow-capacity searches (one :class:`LevelSearch` per scenario and
    method), all advancing at once: each asks for its next probe's runs the
    moment the previous probe's runs are in, so no search waits for another."""

    def __init__(self, runs: Runs, opts: Options, paper: Paper, variants: dict | None = None,
                 phase: str = "capacity search", on_done=None, metric: str = "tcp_data_loss_pct"):
        self.runs, self.phase, self.on_done, self.variants, self.metric = runs, phase, on_done, variants, metric
        targets = [paper.loss_target(lv) for lv in paper.levels]
        self.searches: dict[tuple[str, str], LevelSearch] = {}
        self._waiting: dict[tuple[str, str], dict] = {}
        for sc in opts.scenarios:
            if variants is not None and variants.get(sc) is None:
                continue
            counts = paper.counts(sc)
            start = {paper.loss_target(lv): min(opts.max_flows, counts[lv]) for lv in paper.levels}
            for m in opts.methods:
                self.searches[(sc, m)] = LevelSearch(targets, min_flows=1, max_flows=opts.max_flows,
                                                     max_seeds=opts.seeds, first_seeds=opts.first_seeds,
                                                     exact=opts.exact, start=start)
        for k in self.searches:
            self._step(k)

    def _step(self, k: tuple[str, str]) -> None:
        s = self.searches[k]
        want = s.wanted()
        if not want:
            if self.on_done:
                self.on_done(k, s)
            return
        need = [(n, seed) for n, kk in sorted(want.items()) for seed in range(s.seeds_at(n) + 1, kk + 1)]
        self._waiting[k] = {"need": len(need), "got": {}}
        sc, m = k
        v = self.variants.get(sc) if self.variants else None
        for n, seed in need:
            self.runs.request(self.runs.spec(sc, n, m, seed, variant=v), self.phase, Runs.SEARCH,
                              callback=lambda r, k=k, n=n, seed=seed: self._got(k, n, seed, r))

    def _got(self, k: tuple[str, str], n: int, seed: int, r: dict) -> None:
        w = self._waiting[k]
        v = r["summary"].get(self.metric)
        w["got"][(n, seed)] = math.nan if v is None else v
        if len(w["got"]) < w["need"]:
            return
        by_n: dict[int, list[tuple[int, float]]] = {}
        for (nn, sd), loss in w["got"].items():
            by_n.setdefault(nn, []).append((sd, loss))
        for nn, vals in by_n.items():
            self.searches[k].add(nn, [x for _, x in sorted(vals)])
        del self._waiting[k]
        self._step(k)


def stat(runs_: Iterable[dict], metric: str) -> tuple[float, float, int]:
    return mean_ci(r["summary"].get(metric) for r in runs_)


class Table:
    """Mean, CI and n per (scenario, count set, level, method, metric)."""

    def __init__(self, groups: list[Group], methods: Sequence[str], keep: Sequence[str]):
        self.groups = groups
        self.methods = list(methods)
        self.keep = list(keep)
        self.cells: dict[tuple[str, str, str, str], Group] = {(g.scenario, g.countset, g.level, g.method): g
                                                              for g in groups}

    def get(self, sc: str, cs: str, lv: str, m: str, metric: str) -> tuple[float, float, int]:
        g = self.cells.get((sc, cs, lv, m))
        if g is None:
            return math.nan, math.nan, 0
        return stat(g.runs, metric)

    def flows(self, sc: str, cs: str, lv: str) -> int | None:
        for m in self.methods:
            g = self.cells.get((sc, cs, lv, m))
            if g is not None:
                return g.flows
        return None

    def frame(self):
        import pandas as pd

        rows = []
        for g in self.groups:
            for metric in self.keep:
                m, h, n = stat(g.runs, metric)
                rows.append({"scenario": g.scenario, "countset": g.countset, "level": g.level, "flows": g.flows,
                             "method": g.method, "metric": metric, "mean": m, "ci95": h, "n": n})
        return pd.DataFrame(rows)

    def runs_frame(self):
        import pandas as pd

        rows = []
        for g in self.groups:
            for r in g.runs:
                rows.append({"scenario": g.scenario, "countset": g.countset, "level": g.level, "flows": g.flows,
                             "method": g.method, "seed": r["seed"], **r["summary"], "wall_s": r.get("wall_s")})
        return pd.DataFrame(rows)


def capacity_rows(searches: dict[tuple[str, str], LevelSearch], paper: Paper) -> list[dict]:
    rows = []
    for (sc, m), s in searches.items():
        res = s.result()
        for lv in paper.levels:
            t = paper.loss_target(lv)
            n = res[t]
            at = s.mean(n) if n is not None else (math.nan, math.nan, 0)
            below = s.mean(n - 1) if n is not None and n > 1 else (math.nan, math.nan, 0)
            rows.append({"scenario": sc, "method": m, "level": lv, "target_pct": t, "flows": n,
                         "censored": n is None, "bound": s.max_flows + 1 if n is None else n,
                         "loss_at": at[0], "loss_at_ci": at[1], "seeds_at": at[2],
                         "loss_below": below[0], "seeds_below": below[2],
                         "probes": len(s.values), "runs": sum(len(v) for v in s.values.values())})
    return rows


def capacity_gains(rows: list[dict], methods: Sequence[str], levels: Sequence[str], proposed: str,
                   baseline: str) -> dict:
    """``proposed``'s count over the best other method and over ``baseline``,
    per (scenario, level), and their means (EWT's paper: 49.3 % and 75.8 %)."""
    by = {(r["scenario"], r["level"], r["method"]): r for r in rows}
    cases = []
    for sc in sorted({r["scenario"] for r in rows}):
        for lv in levels:
            e = by.get((sc, lv, proposed))
            if e is None:
                continue
            comp = [by[(sc, lv, m)] for m in methods if m != proposed and (sc, lv, m) in by]
            if not comp:
                continue
            best = max(comp, key=lambda r: r["bound"])
            dt = by.get((sc, lv, baseline))
            cases.append({
                "scenario": sc, "level": lv, "proposed": e["bound"], "proposed_censored": e["censored"],
                "best": best["method"], "best_flows": best["bound"], "best_censored": best["censored"],
                "gain_best_pct": (e["bound"] / best["bound"] - 1) * 100,
                "baseline": dt["bound"] if dt else None, "baseline_censored": dt["censored"] if dt else None,
                "gain_baseline_pct": (e["bound"] / dt["bound"] - 1) * 100 if dt else math.nan,
            })
    return {
        "cases": cases,
        "mean_gain_best_pct": mean([c["gain_best_pct"] for c in cases]),
        "mean_gain_baseline_pct": mean(
            [c["gain_baseline_pct"] for c in cases if not math.isnan(c["gain_baseline_pct"])]
        ),
        "censored": any(c["proposed_censored"] or c["best_censored"] or c["baseline_censored"] for c in cases),
    }


class Evaluation:
    """The runs every reproduction asks for: the grid at the paper's counts,
    the capacity search per scenario and method, and the grid again at the
    counts of our own calibration (the baseline method's capacity: RFC 7928
    levels), which starts as soon as the baseline's search is done.

    A paper adds its own requests (more grids in :attr:`grids`, figure runs)
    before :meth:`Runs.drain`, then reads :meth:`table`, :attr:`calibrated`
    and :attr:`capacity`.
    """

    def __init__(self, runs: Runs, opts: Options, paper: Paper, series: set[tuple[str, int, str]] = frozenset()):
        self.runs, self.opts, self.paper = runs, opts, paper
        self.calibrated: dict[str, dict[str, int | None]] = {sc: {lv: None for lv in paper.levels}
                                                             for sc in opts.scenarios}
        self.grids: list[Grid] = []
        self.paper_counts = {sc: paper.counts(sc) for sc in opts.scenarios}
        self.capacity = Capacity(runs, opts, paper, on_done=self._calibrated_grid)
        self.grids.append(Grid(runs, opts, self.paper_counts, "paper", series, "paper counts"))

    def _calibrated_grid(self, k: tuple[str, str], search: LevelSearch) -> None:
        sc, m = k
        if m != self.paper.run["baseline"]:
            return
        res = search.result()
        self.calibrated[sc] = {lv: res[self.paper.loss_target(lv)] for lv in self.paper.levels}
        self.grids.append(Grid(self.runs, Options(**{**self.opts.__dict__, "scenarios": [sc]}), self.calibrated,
                               "calibrated", set(), "calibrated counts"))

    def table(self) -> Table:
        return Table([g for grid in self.grids for g in grid.groups()], self.paper.methods, self.paper.keep)
