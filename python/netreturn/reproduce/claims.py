"""The statements a paper's text makes about its figures, judged on the means
of a grid of (scenario, level, method) cells.

A statement (``[[statements]]`` of a paper file, see :mod:`.statements`)
with a grid check names a metric, a method (or methods), the levels and the
check: ``best``, ``worst``, ``top2``, ``better`` (than each of ``others``),
``lower``, ``zero``, ``positive``, ``worst_set``, ``close``, ``similar``,
``falls``, ``rises``. One with a value check gives a number of the text
(``max_reduction``, ``relative_diff``), judged against ours within its
``tolerance``. Other checks belong to the paper's module.
"""

from __future__ import annotations

import math

from .statements import FAILS, HOLDS, NOT_MEASURABLE, PARTLY, Judgement
from .text import f as _f, fmt_ci

CLAIM_CHECKS = {"best", "worst", "top2", "better", "lower", "zero", "positive", "worst_set", "close", "similar",
                "falls", "rises"}
VALUE_CHECKS = {"max_reduction", "relative_diff"}


def _better(a: float, b: float, sense: str) -> bool:
    return a > b if sense == "max" else a < b


def _ranked(means: dict[str, float], sense: str) -> list[str]:
    """Methods from best to worst."""
    return sorted(means, key=lambda m: -means[m] if sense == "max" else means[m])


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    (ma, ha), (mb, hb) = a, b
    ha = 0.0 if math.isnan(ha) else ha
    hb = 0.0 if math.isnan(hb) else hb
    return abs(ma - mb) <= ha + hb


def check_claim(claim: dict, stats: dict[tuple[str, str], tuple[float, float]], labels: dict[str, str],
                zero_tol: float) -> tuple[str, list[str]]:
    """``stats[(level, method)] = (mean, ci)``; returns (verdict, one note per
    level). Verdicts: yes, no, tie (within the 95 % CIs), partly, n/a.
    ``labels``: the methods' names in notes; ``zero_tol``: the largest
    mean that counts as zero."""
    sense = claim.get("sense", "max")
    kind = claim["check"]
    verdicts, notes = [], []
    for lv in claim["levels"]:
        means = {m: s[0] for (lvl, m), s in stats.items() if lvl == lv and not math.isnan(s[0])}
        ci = {m: stats[(lv, m)] for m in means}
        me = claim.get("method")
        others = claim.get("others", [])
        group = list(claim.get("methods", [me] if me else []))
        needed = ([me] if me else []) + list(others) + group
        if not means or any(x not in means for x in needed):
            verdicts.append("n/a")
            notes.append(f"{lv}: n/a")
            continue
        order = _ranked(means, sense)
        lab = labels
        if kind in ("best", "worst", "top2"):
            ref = (
                order[0]
                if kind == "best"
                else order[-1]
                if kind == "worst"
                else order[1]
                if len(order) > 1
                else order[0]
            )
            if kind == "top2":
                ok = me in order[:2]
                tie = not ok and _overlap(ci[me], ci[order[1]])
            else:
                ok = ref == me
                tie = not ok and _overlap(ci[me], ci[ref])
            v = "yes" if ok else "tie" if tie else "no"
            which = {"best": "best", "worst": "worst", "top2": "2nd"}[kind]
            notes.append(f"{lv}: {which} {lab[ref]} {_f(means[ref])}" + ("" if ok else f", {lab[me]} {_f(means[me])}"))
        elif kind == "better":
            bad = [o for o in others if not _better(means[me], means[o], sense)]
            tie = bool(bad) and all(_overlap(ci[me], ci[o]) for o in bad)
            v = "yes" if not bad else "tie" if tie else "no"
            notes.append(
                f"{lv}: {lab[me]} {_f(means[me])}"
                + (f", not better than {', '.join(lab[o] + ' ' + _f(means[o]) for o in bad)}" if bad else "")
            )
        elif kind == "lower":
            bad = [o for o in others if not means[me] < means[o]]
            tie = not bad and any(_overlap(ci[me], ci[o]) for o in others)
            v = "no" if bad else "tie" if tie else "yes"
            notes.append(f"{lv}: {lab[me]} {fmt_ci(*ci[me])} vs "
                         + ", ".join(f"{lab[o]} {fmt_ci(*ci[o])}" for o in others))
        elif kind in ("zero", "positive"):
            ok = [means[m] < zero_tol if kind == "zero" else means[m] >= zero_tol for m in group]
            v = "yes" if all(ok) else "no" if not any(ok) else "partly"
            notes.append(f"{lv}: " + ", ".join(f"{lab[m]} {fmt_ci(*ci[m])}" for m in group))
        elif kind == "similar":
            apart = [(a, b) for i, a in enumerate(group) for b in group[i + 1:] if not _overlap(ci[a], ci[b])]
            v = "yes" if not apart else "no"
            notes.append(f"{lv}: " + ", ".join(f"{lab[m]} {fmt_ci(*ci[m])}" for m in group)
                         + (f" (apart: {', '.join(lab[a] + '/' + lab[b] for a, b in apart)})" if apart else ""))
        elif kind == "worst_set":
            k = len(others)
            worst = set(order[-k:])
            v = "yes" if worst == set(others) else "no"
            notes.append(f"{lv}: {k} worst " + ", ".join(lab[m] for m in reversed(order[-k:])))
        elif kind == "close":
            o = others[0]
            v = "yes" if _overlap(ci[me], ci[o]) else "no"
            notes.append(f"{lv}: {lab[me]} {fmt_ci(*ci[me])} vs {lab[o]} {fmt_ci(*ci[o])}")
        elif kind in ("falls", "rises"):
            # Judged between consecutive levels below (the trend), not per level.
            continue
        else:
            raise ValueError(f"unknown claim check {kind!r}")
        verdicts.append(v)
    if kind in ("falls", "rises"):
        verdicts, notes = _trend(claim, stats, labels, kind)
    real = [v for v in verdicts if v != "n/a"]
    if not real:
        overall = "n/a"
    elif all(v == "yes" for v in real):
        overall = "yes"
    elif all(v == "no" for v in real):
        overall = "no"
    elif all(v in ("yes", "tie") for v in real):
        overall = "tie"
    else:
        overall = "partly"
    return overall, notes


def _trend(claim: dict, stats: dict, labels: dict[str, str], kind: str) -> tuple[list[str], list[str]]:
    """``falls``/``rises``: each method's mean moves the stated way from one
    level to the next; a step within the CIs is a tie."""
    verdicts, notes = [], []
    lv = claim["levels"]
    for m in claim["methods"]:
        xs = [stats.get((x, m), (math.nan, math.nan)) for x in lv]
        if any(math.isnan(x[0]) for x in xs):
            verdicts.append("n/a")
            notes.append(f"{labels.get(m, m)}: n/a")
            continue
        for a, b in zip(xs, xs[1:]):
            moved = b[0] < a[0] if kind == "falls" else b[0] > a[0]
            verdicts.append("yes" if moved else "tie" if _overlap(a, b) else "no")
        notes.append(f"{labels[m]} " + " → ".join(fmt_ci(*x) for x in xs))
    return verdicts, notes


def claim_value(
    value: dict, stats: dict[tuple[str, str], tuple[float, float]], labels: dict[str, str]
) -> tuple[float, str]:
    """Our number for a numeric statement of the paper."""
    me = value["method"]
    if value["check"] == "max_reduction":
        best, where = -math.inf, ""
        for (lv, m), (x, _) in stats.items():
            y = stats.get((lv, me), (math.nan, 0))[0]
            if m == me or math.isnan(x) or math.isnan(y) or x <= 0:
                continue
            red = (1 - y / x) * 100
            if red > best:
                best, where = red, f"{lv}, vs {labels[m]}"
        return (best if best > -math.inf else math.nan), where
    if value["check"] == "relative_diff":
        lv = value["level"]
        x = stats.get((lv, me), (math.nan, 0))[0]
        y = stats.get((lv, value["other"]), (math.nan, 0))[0]
        return ((x / y - 1) * 100 if y else math.nan), f"{lv}: {_f(x)} vs {_f(y)}"
    raise ValueError(f"unknown value check {value['check']!r}")


def check_all(paper, table, scenarios, methods, countsets) -> tuple[list[dict], list[dict]]:
    """Every statement of ``paper`` with a grid or value check about
    ``scenarios``, judged per count set on ``table`` (a
    :class:`~.grid.Table`): (claim rows, value rows), each row
    ``{"claim"|"value": statement, "result": {countset: ...}}``."""
    labels, tol, levels = paper.labels, float(paper.run.get("zero_tol", 0.005)), paper.levels
    claim_rows, value_rows = [], []
    for c in paper.data.get("statements", []):
        if c["check"] not in CLAIM_CHECKS | VALUE_CHECKS or c.get("scenario") not in scenarios:
            continue
        res = {}
        for cs in countsets:
            stats = {(lv, m): table.get(c["scenario"], cs, lv, m, c["metric"])[:2] for lv in levels for m in methods}
            if c["check"] in CLAIM_CHECKS:
                res[cs] = check_claim(c, stats, labels, tol)
            elif c["method"] in methods and c.get("other", c["method"]) in methods:
                res[cs] = claim_value(c, stats, labels)
            else:
                res[cs] = (math.nan, "n/a")
        (claim_rows if c["check"] in CLAIM_CHECKS else value_rows).append(
            {"claim" if c["check"] in CLAIM_CHECKS else "value": c, "result": res})
    return claim_rows, value_rows


def judgement(verdict: str, notes: list[str]) -> Judgement:
    """A grid check's result as a :class:`~.statements.Judgement`."""
    measured = "; ".join(notes)
    if verdict == "yes":
        return Judgement(HOLDS, measured)
    if verdict == "tie":
        return Judgement(PARTLY, measured, "the stated ordering is not ours, but the 95 % CIs overlap")
    if verdict == "partly":
        return Judgement(PARTLY, measured, "holds at some levels only")
    if verdict == "no":
        return Judgement(FAILS, measured)
    return Judgement(NOT_MEASURABLE, measured, "a method or level it needs was not run (--methods, --scenarios)")


def value_judgement(value: dict, ours: float, where: str) -> Judgement:
    """A number of the paper against ours: holds within ``tolerance``
    (relative, default 0.25), partly with the same sign, fails otherwise."""
    paper = float(value["paper"])
    measured = f"{ours:+.2f} % ({where}); paper {paper:+.2f} %"
    if math.isnan(ours):
        return Judgement(NOT_MEASURABLE, measured, "a method it needs was not run (--methods, --scenarios)")
    tol = float(value.get("tolerance", 0.25))
    if abs(ours - paper) <= tol * abs(paper):
        return Judgement(HOLDS, measured)
    if ours * paper > 0:
        return Judgement(PARTLY, measured, f"same sign, more than {tol * 100:.0f} % from the paper's number")
    return Judgement(FAILS, measured)
