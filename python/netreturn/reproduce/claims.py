"""The claims a paper's text makes about its figures, checked on our means.

A claim (``[[claims]]`` of a paper file) names a metric, a method, the
levels and a check: ``best``, ``worst``, ``top2``, ``better`` (than each of
``others``), ``zero``, ``positive``, ``worst_set``, ``close``. A value
(``[[values]]``) is a number the text gives: ``max_reduction``,
``relative_diff``; ours is computed, not judged.
"""

from __future__ import annotations

import math

from .text import f as _f, fmt_ci


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
        needed = ([me] if me else []) + list(others)
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
        elif kind == "zero":
            v = "yes" if means[me] < zero_tol else "no"
            notes.append(f"{lv}: {lab[me]} {fmt_ci(*ci[me])}")
        elif kind == "positive":
            v = "yes" if means[me] >= zero_tol else "no"
            notes.append(f"{lv}: {lab[me]} {fmt_ci(*ci[me])}")
        elif kind == "worst_set":
            k = len(others)
            worst = set(order[-k:])
            v = "yes" if worst == set(others) else "no"
            notes.append(f"{lv}: {k} worst " + ", ".join(lab[m] for m in reversed(order[-k:])))
        elif kind == "close":
            o = others[0]
            v = "yes" if _overlap(ci[me], ci[o]) else "no"
            notes.append(f"{lv}: {lab[me]} {fmt_ci(*ci[me])} vs {lab[o]} {fmt_ci(*ci[o])}")
        else:
            raise ValueError(f"unknown claim check {kind!r}")
        verdicts.append(v)
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


def claim_value(
    value: dict, stats: dict[tuple[str, str], tuple[float, float]], labels: dict[str, str]
) -> tuple[float, str]:
    """Our number for a numeric statement of the paper."""
    me = value["method"]
    if value["kind"] == "max_reduction":
        best, where = -math.inf, ""
        for (lv, m), (x, _) in stats.items():
            y = stats.get((lv, me), (math.nan, 0))[0]
            if m == me or math.isnan(x) or math.isnan(y) or x <= 0:
                continue
            red = (1 - y / x) * 100
            if red > best:
                best, where = red, f"{lv}, vs {labels[m]}"
        return (best if best > -math.inf else math.nan), where
    if value["kind"] == "relative_diff":
        lv = value["level"]
        x = stats.get((lv, me), (math.nan, 0))[0]
        y = stats.get((lv, value["other"]), (math.nan, 0))[0]
        return ((x / y - 1) * 100 if y else math.nan), f"{lv}: {_f(x)} vs {_f(y)}"
    raise ValueError(f"unknown value kind {value['kind']!r}")


def check_all(paper, table, scenarios, methods, countsets) -> tuple[list[dict], list[dict]]:
    """Every claim and value of ``paper`` about ``scenarios``, checked per
    count set on ``table`` (a :class:`~.grid.Table`): (claim rows, value rows)."""
    labels, tol, levels = paper.labels, float(paper.run.get("zero_tol", 0.005)), paper.levels
    claim_rows = []
    for c in paper["claims"]:
        if c["scenario"] not in scenarios:
            continue
        res = {}
        for cs in countsets:
            stats = {(lv, m): table.get(c["scenario"], cs, lv, m, c["metric"])[:2] for lv in levels for m in methods}
            res[cs] = check_claim(c, stats, labels, tol)
        claim_rows.append({"claim": c, "result": res})
    value_rows = []
    for v in paper.data.get("values", []):
        if v["scenario"] not in scenarios:
            continue
        res = {}
        for cs in countsets:
            stats = {(lv, m): table.get(v["scenario"], cs, lv, m, v["metric"])[:2] for lv in levels for m in methods}
            res[cs] = (
                claim_value(v, stats, labels)
                if v["method"] in methods and v.get("other", v["method"]) in methods
                else (math.nan, "n/a")
            )
        value_rows.append({"value": v, "result": res})
    return claim_rows, value_rows


def claims_frame(claim_rows: list[dict], countsets: list[str]):
    """``claims.csv``: one row per claim, verdict and notes per count set."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "source": r["claim"]["source"],
                "scenario": r["claim"]["scenario"],
                "text": r["claim"]["text"],
                **{f"{cs}_verdict": r["result"][cs][0] for cs in countsets},
                **{f"{cs}_notes": "; ".join(r["result"][cs][1]) for cs in countsets},
            }
            for r in claim_rows
        ]
    )
