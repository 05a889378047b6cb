"""The RWM paper's experiment (section IV, docs/decisions.md §5.4) in the
namespace testbed, scaled to what one machine sustains.

sender -> WAN emulator (netreturn-gateway, controller none: the delay for a
total RTT of 20..140 ms) -> edge gateway (netreturn-gateway: 100 Mb/s access
link, 500-packet queue, RWM or no controller) -> receiver. CUBIC senders,
60 MB socket buffer ceilings. One and four simultaneous downloads; RWM with
the exact BDP, BDP - 10 %, BDP + 10 %, and no controller; ``reps``
repetitions each (scenarios/testbed/rwm.toml holds every fixed number).
Testbed-only options (:func:`.scenario.with_testbed`): a jitter sweep on the
bottleneck gateway's delay line (the paper's NetEm +/-3 ms) and RWM at both
edges (the paper's Fig. 1); each combination is reported on its own, with
the paper's 140 ms statements side by side (:func:`statements_140ms`).

Outputs (``--out``): the sweep's ``runs/*.json`` (resume), ``runs.csv``,
``flows.csv``, ``summary.csv`` (as ``netreturn run``), and
``fct.csv`` (FCT quartiles per RTT / flows / setting, median improvement over
no control), ``rtt_table.csv`` (the paper's Table I: RTT std, mean,
quartiles, max), ``paper.csv`` (our figures next to the paper's claims),
``fct_boxplot.png`` (Fig. 3), ``slowest_boxplot.png`` (Fig. 5),
``throughput.png`` (Fig. 4: per-flow throughput over time, four flows),
``window.png`` (cwnd against the window the sender sees).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..reproduce import statements as _st
from ..reproduce.paper import PAPER_DIR
from ..stats import finite as _finite, mean_ci
from ..table import num, render, unit_of
from .scenario import TESTBED_LABELS, TestbedScenarioError, plan as make_plan, testbed_labels, with_testbed
from .sweep import Options, TbSpec, describe, quantile, run_specs, write_tables

SCENARIO = "testbed/rwm"
#: The paper's four controller settings: name -> scenario parameters.
SETTINGS: dict[str, dict[str, Any]] = {
    "none": {"queue": "droptail"},
    "bdp-10%": {"queue": "rwm", "delta": -0.1},
    "bdp": {"queue": "rwm", "delta": 0.0},
    "bdp+10%": {"queue": "rwm", "delta": 0.1},
}
PAPER_FILE = PAPER_DIR / "rwm.toml"
# The checks judged here (paper/rwm.toml explains each).
CHECKS = {"median_ratio", "improvement", "p75_below_p25", "bdp_best", "under_steadier", "finish_together",
          "slowest_better", "rtt_nominal", "rtt_std_higher", "standing_queue", "table1_mean", "margin_reduced",
          "tail_drop", "over_lower_p25"}


def load_paper(path: str | Path = PAPER_FILE) -> dict:
    """The RWM paper's data, checked: ValueError naming the file and field."""
    return _st.load(path, ("seed_file", "fct_median_improvement_pct", "table1"), CHECKS)


PAPER = load_paper()
DEFAULT_RTTS = ["20ms", "60ms", "100ms", "140ms"]
DEFAULT_FLOWS = [1, 4]
GROUP = ["flows", "rtt", "setting"]
#: The testbed-only settings a sweep may vary (scenario.TESTBED_LABELS):
#: each combination is reported on its own.
VARIANT = list(TESTBED_LABELS)
COLORS = {"none": "#c44e52", "bdp-10%": "#8172b2", "bdp": "#4c72b0", "bdp+10%": "#55a868"}


def _ms(rtt: str) -> float:
    from .scenario import parse_time

    # rounded: 0.06 s x 1000 is 60.00000000000001, and the statements name RTTs as whole ms
    return round(parse_time(rtt) * 1000, 6)


def specs(rtts: Sequence[str], flows: Sequence[int], settings: Sequence[str], reps: int,
          sets: Mapping[str, Any] | None = None, scenario: str = SCENARIO,
          jitters: Sequence[str] = ("0ms",), rwm_edges: str = "receiver",
          datapath: str = "packet", access: str = "aggregate", sysctl: Any = None) -> list[TbSpec]:
    """Every run of the grid: RTT x downloads x setting x jitter, ``reps``
    each; ``jitters`` (the gateway's ``--jitter``, a sweep) and
    ``rwm_edges`` (``both``: RWM at the senders' edge too) are testbed-only
    settings (:func:`.scenario.with_testbed`)."""
    for s in settings:
        if s not in SETTINGS:
            raise TestbedScenarioError(scenario, "setting", f"unknown setting {s!r}; allowed: {', '.join(SETTINGS)}")
    out = []
    for j in jitters:
        for rtt in rtts:
            for n in flows:
                for s in settings:
                    ov = {**dict(sets or {}), "rtt": rtt, "flows": int(n), **SETTINGS[s]}
                    labels = {"setting": s, **testbed_labels(j, rwm_edges, scenario, datapath, access, sysctl)}
                    # validates (file, field, allowed values), the jitter against this RTT too
                    with_testbed(make_plan(scenario, ov, access), labels)
                    for r in range(1, reps + 1):
                        out.append(TbSpec.make(scenario, ov, r, labels))
    return out


def run(out: Path, rtts=DEFAULT_RTTS, flows=DEFAULT_FLOWS, settings=tuple(SETTINGS), reps: int | None = None,
        sets: Mapping[str, Any] | None = None, opts: Options | None = None, progress: bool = True,
        scenario: str = SCENARIO, jitters: Sequence[str] = ("0ms",), rwm_edges: str = "receiver") -> list[dict]:
    reps = reps or make_plan(scenario, dict(sets or {})).reps
    sp = specs(rtts, flows, settings, reps, sets, scenario, jitters, rwm_edges)
    return run_specs(sp, out, opts, progress, desc="RWM testbed")


def with_defaults(raw: list[dict]) -> list[dict]:
    """Runs with every testbed label present (absent = its default), so
    runs made before a label existed group with the default variant."""
    out = []
    for r in raw:
        p = {**TESTBED_LABELS, **r["params"]}
        out.append({**r, "params": p})
    return out


def variant(r: dict) -> tuple[str, ...]:
    return tuple(str(r["params"].get(k, d)) for k, d in TESTBED_LABELS.items())


def variant_name(v: Sequence[str]) -> str:
    j, edges = v
    jit = "no jitter" if j in ("0ms", "0", "0us", "0s") else f"jitter +/-{j}"
    return f"{jit}, RWM at {'both edges' if edges == 'both' else 'the receivers edge'}"


def load_runs(out: Path) -> list[dict]:
    raw = []
    for p in sorted((Path(out) / "runs").glob("*.json")):
        try:
            r = json.loads(p.read_text())
        except json.JSONDecodeError:
            continue
        if r.get("world") == "testbed" and "setting" in r.get("params", {}):
            raw.append(r)
    return raw


# -- analysis -----------------------------------------------------------------

def _key(r: dict) -> tuple[int, float, str]:
    p = r["params"]
    return int(p["flows"]), _ms(p["rtt"]), p["setting"]


def _groups(raw: list[dict]) -> dict[tuple[int, float, str], list[dict]]:
    g: dict[tuple[int, float, str], list[dict]] = {}
    for r in raw:
        g.setdefault(_key(r), []).append(r)
    return g


def fct_table(raw: list[dict]):
    """Per flows / RTT / setting: per-transfer FCT quartiles (every transfer
    an independent event, as in the paper's Fig. 3), the slowest of each run
    (Fig. 5), the spread inside a run, and the median improvement over no
    control (the paper's "distance between the 50th percentiles")."""
    import pandas as pd


    rows = []
    for (n, rtt, s), rs in sorted(
        _groups(raw).items(), key=lambda kv: (kv[0][0], kv[0][1], list(SETTINGS).index(kv[0][2]))
    ):
        fcts = _finite([x for r in rs for x in r["flows"]["fct_s"]])
        slow = _finite([r["summary"].get("fct_max_s") for r in rs])
        spread = _finite([(max(r["flows"]["fct_s"]) - min(r["flows"]["fct_s"])) / max(r["flows"]["fct_s"])
                          for r in rs if len(_finite(r["flows"]["fct_s"])) == n and n > 1])
        m, h, _ = mean_ci(fcts)
        rows.append({"flows": n, "rtt_ms": rtt, "setting": s, "runs": len(rs), "transfers": len(fcts),
                     "fct_p25_s": quantile(fcts, 0.25), "fct_median_s": quantile(fcts, 0.5),
                     "fct_p75_s": quantile(fcts, 0.75), "fct_mean_s": m, "fct_ci95_s": h,
                     "slowest_median_s": quantile(slow, 0.5) if n > 1 else math.nan,
                     "finish_spread_median": quantile(spread, 0.5) if spread else math.nan,
                     "goodput_sum_mbps": quantile(_finite([sum(_finite(r["flows"]["goodput_mbps"])) for r in rs]), 0.5),
                     "retransmits_mean": mean_ci(_finite([r["summary"].get("retransmits") for r in rs]))[0],
                     "drops_mean": mean_ci(_finite([r["summary"].get("queue_drops") for r in rs]))[0]})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    base = df[df.setting == "none"].set_index(["flows", "rtt_ms"])
    imp, imp_slow = [], []
    for _, r in df.iterrows():
        k = (r.flows, r.rtt_ms)
        if k in base.index and r.setting != "none":
            b = base.loc[k]
            imp.append((b.fct_median_s - r.fct_median_s) / b.fct_median_s * 100)
            imp_slow.append((b.slowest_median_s - r.slowest_median_s) / b.slowest_median_s * 100
                            if r.flows > 1 else math.nan)
        else:
            imp.append(math.nan)
            imp_slow.append(math.nan)
    df["median_improvement_pct"] = imp
    df["slowest_improvement_pct"] = imp_slow
    return df


def rtt_table(raw: list[dict]):
    """The paper's Table I for every group: RTT samples (sender's smoothed
    RTT from TCP_INFO every 20 ms while data is outstanding) pooled over the
    group's runs."""
    import pandas as pd

    rows = []
    for (n, rtt, s), rs in sorted(
        _groups(raw).items(), key=lambda kv: (kv[0][1], list(SETTINGS).index(kv[0][2]), kv[0][0])
    ):
        xs = [v for r in rs for ser in r["series"]["rtt"] for _, v in ser]
        d = describe(xs)
        rows.append(
            {
                "rtt_ms": rtt,
                "setting": s,
                "flows": n,
                **{k: d[k] for k in ("std", "mean", "p25", "p50", "p75", "max")},
                "samples": d["n"],
            }
        )
    return pd.DataFrame(rows)


def _pct(x: float) -> str:
    if math.isnan(x):
        return "- (no run without control)"
    r = round(x)
    return f"{r:+d} %" if r else "0 %"


def paper_table(fct, rtt, paper: dict | None):
    """Our figures next to the paper's claims (docs/decisions.md §5.4)."""
    import pandas as pd

    paper = paper or PAPER
    rows = []
    claims = paper["fct_median_improvement_pct"]
    for n, name in ((1, "one"), (4, "four")):
        sub = fct[(fct.flows == n) & (fct.setting != "none")] if len(fct) else fct
        # An improvement needs a run without control at the same RTT.
        sub = sub[sub.median_improvement_pct.notna()] if len(sub) else sub
        if len(sub) == 0:
            continue
        best = sub.loc[sub.median_improvement_pct.idxmax()]
        exact = sub[sub.setting == "bdp"]
        ex = exact.loc[exact.median_improvement_pct.idxmax()] if len(exact) else None
        rows.append(
            {
                "claim": f"median FCT improvement, {n} download{'s' if n > 1 else ''} (up to)",
                "paper": f"{claims.get(name)} %",
                "testbed": f"{_pct(best.median_improvement_pct)} ({best.setting}, {best.rtt_ms:.0f} ms)"
                + (f"; exact BDP {_pct(ex.median_improvement_pct)} ({ex.rtt_ms:.0f} ms)" if ex is not None else ""),
            }
        )
        per = ", ".join(f"{r.rtt_ms:.0f} ms {_pct(r.median_improvement_pct)}" for _, r in exact.iterrows())
        if per:
            rows.append(
                {"claim": f"  exact BDP per RTT, {n} download{'s' if n > 1 else ''}", "paper": "-", "testbed": per}
            )
    for t in paper.get("table1", []):
        setting = "none" if t["control"] == "none" else "bdp"
        sel = rtt[(rtt.rtt_ms == 20.0) & (rtt.setting == setting) & (rtt.flows == t["flows"])] if len(rtt) else rtt
        ours = ("/".join(f"{sel.iloc[0][k]:.1f}" for k in ("std", "mean", "p25", "p50", "p75", "max"))
                if len(sel) else "not run")
        rows.append({"claim": f"Table I, 20 ms, {t['control']}, {t['flows']} flow{'s' if t['flows'] > 1 else ''}: "
                              "RTT std/mean/p25/p50/p75/max (ms)",
                     "paper": "/".join(f"{t[k]}" for k in ("std", "mean", "p25", "p50", "p75", "max")),
                     "testbed": ours})
    rows += statements_140ms(fct)
    four = fct[fct.flows == 4] if len(fct) else fct
    if len(four):
        by = four.groupby("setting").finish_spread_median.median()
        rows.append({"claim": "four flows finish together with RWM (median (max-min)/max FCT in a run)",
                     "paper": "yes (Fig. 4b); none: one greedy flow finishes first",
                     "testbed": ", ".join(f"{s} {by[s] * 100:.0f} %" for s in SETTINGS if s in by)})
        sl = four.groupby("setting").slowest_improvement_pct.median()
        rows.append({"claim": "slowest of four: median improvement over none (median over RTTs)",
                     "paper": "RWM better at every RTT (Fig. 5)",
                     "testbed": ", ".join(f"{s} {_pct(sl[s])}" for s in SETTINGS if s in sl and s != "none")})
    return pd.DataFrame(rows)


# -- the statements, judged ---------------------------------------------------

def judge(st: dict, fct, rtt) -> _st.Judgement:
    """One statement of ``paper/rwm.toml`` from the testbed's tables
    (:func:`fct_table`, :func:`rtt_table`)."""
    c = st["check"]
    H, P, F, NM = _st.HOLDS, _st.PARTLY, _st.FAILS, _st.NOT_MEASURABLE

    def cell(n: int, rtt_ms: float, setting: str):
        sel = fct[(fct.flows == n) & (fct.rtt_ms == rtt_ms) & (fct.setting == setting)] if len(fct) else fct
        return sel.iloc[0] if len(sel) else None

    def verdict(ok: int, n: int) -> str:
        return H if ok == n else F if ok == 0 else P

    controlled = [x for x in SETTINGS if x != "none"]
    if c in ("median_ratio", "p75_below_p25"):
        none = cell(st["flows"], st["rtt_ms"], "none")
        if none is None or cell(st["flows"], st["rtt_ms"], "bdp") is None:
            return _st.Judgement(NM, "-", f"{st['flows']} downloads at {st['rtt_ms']} ms with and without RWM not run "
                                          "(--rtt, --flows, --settings)")
        if c == "median_ratio":
            x = none.fct_median_s / cell(st["flows"], st["rtt_ms"], "bdp").fct_median_s
            v = H if abs(x - st["paper"]) <= st["tolerance"] else P if x > 1 else F
            return _st.Judgement(v, f"median FCT without control / with the exact BDP: {x:.2f} (paper {st['paper']})")
        rows = {x: cell(st["flows"], st["rtt_ms"], x) for x in controlled}
        rows = {x: r for x, r in rows.items() if r is not None}
        ok = sum(r.fct_p75_s < none.fct_p25_s for r in rows.values())
        return _st.Judgement(verdict(ok, len(rows)), f"no control's 25th percentile {none.fct_p25_s:.2f} s; 75th: "
                             + ", ".join(f"{x} {r.fct_p75_s:.2f} s" for x, r in rows.items()))
    if c == "improvement":
        sub = fct[(fct.flows == st["flows"]) & (fct.setting != "none")] if len(fct) else fct
        sub = sub[sub.median_improvement_pct.notna()] if len(sub) else sub
        if not len(sub):
            return _st.Judgement(NM, "-", f"{st['flows']} downloads with and without RWM not run")
        best = sub.loc[sub.median_improvement_pct.idxmax()]
        p = PAPER["fct_median_improvement_pct"]["one" if st["flows"] == 1 else "four"]
        x = best.median_improvement_pct
        v = H if abs(x - p) <= st["tolerance"] * p else P if x > 0 else F
        return _st.Judgement(v, f"best median improvement {x:+.0f} % ({best.setting}, {best.rtt_ms:.0f} ms; paper up "
                             f"to {p} %)", "" if v == H else "scaled testbed: 100 Mb/s and 25 MB (docs/testbed.md)")
    if c in ("bdp_best", "under_steadier", "slowest_better"):
        rtts = sorted({r for r in (fct.rtt_ms if len(fct) else [])})
        parts, ok, n = [], 0, 0
        for r in rtts:
            if c == "slowest_better":
                b = cell(4, r, st["setting"])
                if b is None or math.isnan(b.slowest_improvement_pct):
                    continue
                n += 1
                ok += b.slowest_improvement_pct > 0
                parts.append(f"{r:.0f} ms {_pct(b.slowest_improvement_pct)}")
                continue
            b = cell(st["flows"], r, "bdp")
            others = [cell(st["flows"], r, x) for x in ("bdp-10%", "bdp+10%")]
            if b is None or any(o is None for o in others):
                continue
            n += 1
            if c == "bdp_best":
                ok += all(b.fct_median_s <= o.fct_median_s for o in others)
                parts.append(f"{r:.0f} ms: BDP {b.fct_median_s:.2f}, -10 % {others[0].fct_median_s:.2f}, "
                             f"+10 % {others[1].fct_median_s:.2f} s")
            else:
                u = others[0]
                ok += (u.fct_p75_s - u.fct_p25_s) < (b.fct_p75_s - b.fct_p25_s) and u.fct_mean_s > b.fct_mean_s
                parts.append(f"{r:.0f} ms: IQR -10 % {u.fct_p75_s - u.fct_p25_s:.2f} vs BDP "
                             f"{b.fct_p75_s - b.fct_p25_s:.2f} s, mean {u.fct_mean_s:.2f} vs {b.fct_mean_s:.2f} s")
        if not n:
            return _st.Judgement(NM, "-", "the settings it compares were not run (--settings, --flows)")
        what = {"bdp_best": "median FCT", "under_steadier": "FCT", "slowest_better": "slowest of four vs none"}[c]
        return _st.Judgement(verdict(ok, n), f"{what}: " + "; ".join(parts))
    if c == "margin_reduced":
        at = {r: cell(st["flows"], r, st["setting"]) for r in [*st["clear_rtts_ms"], st["rtt_ms"]]}
        if any(b is None or math.isnan(b.median_improvement_pct) for b in at.values()):
            return _st.Judgement(NM, "-", f"{st['flows']} download(s) at {', '.join(f'{r:g}' for r in at)} ms with "
                                          f"and without {st['setting']} not run (--rtt, --flows, --settings)")
        imp = {r: b.median_improvement_pct for r, b in at.items()}
        clear = [r for r in st["clear_rtts_ms"] if imp[r] > 0]
        reduced = all(imp[st["rtt_ms"]] < imp[r] for r in st["clear_rtts_ms"])
        v = H if reduced and len(clear) == len(st["clear_rtts_ms"]) else P if reduced or clear else F
        return _st.Judgement(v, f"{st['setting']}, {st['flows']} download(s): median improvement over none "
                             + ", ".join(f"{r:g} ms {_pct(x)}" for r, x in imp.items()))
    if c == "tail_drop":
        rows = {r: cell(st["flows"], r, st["setting"]) for r in sorted(set(fct.rtt_ms if len(fct) else []))}
        rows = {r: b for r, b in rows.items() if b is not None}
        if st["rtt_ms"] not in rows:
            return _st.Judgement(NM, "-", f"{st['setting']} with {st['flows']} download(s) at {st['rtt_ms']} ms "
                                          "not run (--rtt, --flows, --settings)")
        drops = {r: b.drops_mean for r, b in rows.items()}
        below = [r for r in drops if r < st["rtt_ms"]]
        # "we start measuring tail drop": drops at this RTT, none below it.
        at, earlier = drops[st["rtt_ms"]] > 0, [r for r in below if drops[r] > 0]
        v = H if at and not earlier else P if at else F
        return _st.Judgement(v, f"{st['setting']}, {st['flows']} download(s): the edge queue's drops per run "
                             + ", ".join(f"{r:g} ms {x:.0f}" for r, x in drops.items()),
                             "" if v == H else (f"drops already at {', '.join(f'{r:g}' for r in earlier)} ms" if at
                                                else "no tail drop at this RTT"))
    if c == "over_lower_p25":
        rtts = sorted(r for r in set(fct.rtt_ms if len(fct) else []) if r >= st["min_rtt_ms"])
        parts, ok, n = [], 0, 0
        for r in rtts:
            b, o = cell(st["flows"], r, "bdp"), cell(st["flows"], r, "bdp+10%")
            if b is None or o is None:
                continue
            n += 1
            lower, wider = o.fct_p25_s < b.fct_p25_s, o.fct_p75_s - o.fct_p25_s > b.fct_p75_s - b.fct_p25_s
            ok += lower and wider
            parts.append(f"{r:g} ms: p25 +10 % {o.fct_p25_s:.2f} vs BDP {b.fct_p25_s:.2f} s, IQR "
                         f"{o.fct_p75_s - o.fct_p25_s:.2f} vs {b.fct_p75_s - b.fct_p25_s:.2f} s")
        if not n:
            return _st.Judgement(NM, "-", f"BDP and BDP + 10 % from {st['min_rtt_ms']:g} ms not run "
                                          "(--rtt, --settings)")
        return _st.Judgement(verdict(ok, n), "; ".join(parts))
    if c == "finish_together":
        four = fct[fct.flows == 4] if len(fct) else fct
        by = four.groupby("setting").finish_spread_median.median() if len(four) else {}
        if st["setting"] not in by or "none" not in by:
            return _st.Judgement(NM, "-", "four downloads with and without RWM not run")
        a, b = by[st["setting"]], by["none"]
        v = H if a <= st["max_spread"] and a < b else P if a < b else F
        return _st.Judgement(v, f"median spread of finish times (max-min)/max: {st['setting']} {a * 100:.0f} %, "
                             f"none {b * 100:.0f} % (together read as within {st['max_spread'] * 100:.0f} %)")
    t20 = rtt[rtt.rtt_ms == 20.0] if len(rtt) else rtt

    def r20(setting: str, n: int):
        sel = t20[(t20.setting == setting) & (t20.flows == n)] if len(t20) else t20
        return sel.iloc[0] if len(sel) else None

    flows = sorted({int(n) for n in (t20.flows if len(t20) else [])})
    if c == "table1_mean":
        r = r20("none" if st["control"] == "none" else "bdp", st["flows"])
        if r is None:
            return _st.Judgement(NM, "-", "20 ms with these downloads not run")
        v = H if abs(r["mean"] - st["paper"]) <= st["tolerance"] * st["paper"] else F
        return _st.Judgement(v, f"mean RTT {r['mean']:.1f} ms (paper {st['paper']})")
    pairs = [(n, r20("none", n), r20("bdp", n)) for n in flows]
    if c == "rtt_std_higher":
        pairs = [(n, a, b) for n, a, b in pairs if a is not None and b is not None]
        if not pairs:
            return _st.Judgement(NM, "-", "20 ms with and without RWM not run")
        ok = sum(a["std"] > b["std"] for _, a, b in pairs)
        return _st.Judgement(verdict(ok, len(pairs)), "RTT std at 20 ms, none vs RWM: "
                             + ", ".join(f"{n} flow(s) {a['std']:.1f} vs {b['std']:.1f} ms" for n, a, b in pairs))
    got = [(n, a if c == "standing_queue" else b) for n, a, b in pairs]
    got = [(n, r) for n, r in got if r is not None]
    if not got:
        return _st.Judgement(NM, "-", "20 ms not run")
    if c == "standing_queue":
        ok = sum(r["mean"] - 20.0 >= st["min_ratio"] * 20.0 for _, r in got)
        return _st.Judgement(verdict(ok, len(got)), "no control, 20 ms: mean RTT "
                             + ", ".join(f"{n} flow(s) {r['mean']:.1f} ms" for n, r in got)
                             + f" (order of the latency read as at least {st['min_ratio'] * 20:.0f} ms of queue)")
    ok = sum(abs(r["mean"] - 20.0) <= st["tolerance_ms"] and r["std"] <= st["max_std_ms"] for _, r in got)
    return _st.Judgement(verdict(ok, len(got)), "RWM (exact BDP), 20 ms: "
                         + ", ".join(f"{n} flow(s) mean {r['mean']:.1f}, std {r['std']:.1f} ms" for n, r in got))


#: The RWM paper's section IV.B on Fig. 3b (four downloads), 140 ms.
MEDIAN_RATIO_QUOTE = ("At 140ms of RTT is possible to observe that the 50th percentile for the FCT of the "
                      "uncontrolled scenario is almost 1.5 times higher than the controlled scenario")
QUARTILE_QUOTE = ("the 75th percentile of any of the controlled tests is better than the 25th percentile of "
                  "the non-controlled case")
#: "almost 1.5 times": held when the ratio is within this of 1.5.
MEDIAN_RATIO_TOLERANCE = 0.15


def statements_140ms(fct) -> list[dict]:
    """The paper's two statements about four downloads at 140 ms, judged
    from ``fct`` (one variant's :func:`fct_table`): the uncontrolled median
    FCT about 1.5 x the controlled one (each RWM setting), and every
    controlled 75th percentile below the uncontrolled 25th."""
    if not len(fct):
        return []
    at = fct[(fct.flows == 4) & (fct.rtt_ms == 140.0)]
    none = at[at.setting == "none"]
    ctl = at[at.setting != "none"]
    if not len(none) or not len(ctl):
        return []
    b = none.iloc[0]
    ratios = {r.setting: b.fct_median_s / r.fct_median_s for _, r in ctl.iterrows()}
    near = [s for s, x in ratios.items() if abs(x - 1.5) <= MEDIAN_RATIO_TOLERANCE]
    better = [s for s, x in ratios.items() if x > 1.0]
    verdict = ("holds" if len(near) == len(ratios) else "partly" if near or better else "fails")
    below = {r.setting: r.fct_p75_s < b.fct_p25_s for _, r in ctl.iterrows()}
    v2 = "holds" if all(below.values()) else "partly" if any(below.values()) else "fails"
    return [
        {"claim": "140 ms, four downloads: median FCT without control / with RWM (\"almost 1.5 times\")",
         "paper": "~1.5", "testbed": ", ".join(f"{s} {x:.2f}x" for s, x in ratios.items()) + f": {verdict}"},
        {"claim": "140 ms, four downloads: every controlled 75th percentile below the uncontrolled 25th",
         "paper": "yes",
         "testbed": f"none p25 {b.fct_p25_s:.2f} s; "
         + ", ".join(f"{r.setting} p75 {r.fct_p75_s:.2f} s" for _, r in ctl.iterrows()) + f": {v2}"},
    ]


# -- figures ------------------------------------------------------------------

def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _boxes(
    ax, data: dict[tuple[float, str], list[float]], rtts: list[float], settings: list[str], ylabel: str, title: str
):
    w = 0.8 / max(1, len(settings))
    for j, s in enumerate(settings):
        pos = [i + (j - (len(settings) - 1) / 2) * w for i in range(len(rtts))]
        vals = [data.get((rtt, s), []) for rtt in rtts]
        keep = [(p, v) for p, v in zip(pos, vals) if v]
        if not keep:
            continue
        bp = ax.boxplot([v for _, v in keep], positions=[p for p, _ in keep], widths=w * 0.85, patch_artist=True,
                        showfliers=True, flierprops={"markersize": 2})
        for b in bp["boxes"]:
            b.set_facecolor(COLORS.get(s, "#999999"))
            b.set_alpha(0.75)
        for med in bp["medians"]:
            med.set_color("black")
        ax.plot([], [], color=COLORS.get(s, "#999999"), linewidth=6, label=s)
    ax.set_xticks(range(len(rtts)))
    ax.set_xticklabels([f"{r:.0f} ms" for r in rtts])
    ax.set_xlabel("total RTT")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left")


def plot_fct(raw: list[dict], path: Path, slowest: bool = False) -> Path | None:
    plt = _plt()
    g = _groups(raw)
    counts = sorted({k[0] for k in g if not slowest or k[0] > 1})
    if not counts:
        return None
    settings = [s for s in SETTINGS if any(k[2] == s for k in g)]
    fig, axes = plt.subplots(1, len(counts), figsize=(6 * len(counts), 4), squeeze=False)
    for ax, n in zip(axes[0], counts):
        rtts = sorted({k[1] for k in g if k[0] == n})
        data = {}
        for (m, rtt, s), rs in g.items():
            if m != n:
                continue
            data[(rtt, s)] = (_finite([r["summary"].get("fct_max_s") for r in rs]) if slowest
                              else _finite([x for r in rs for x in r["flows"]["fct_s"]]))
        what = "slowest of the four downloads" if slowest else f"{n} download{'s' if n > 1 else ''} at once"
        _boxes(ax, data, rtts, settings, "FCT (s)", what)
    fig.suptitle(
        "RWM testbed: "
        + ("maximum FCT of each run (paper Fig. 5)" if slowest else "flow completion time (paper Fig. 3)")
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _pick(raw: list[dict], n: int, rtt: float, setting: str) -> dict | None:
    rs = sorted([r for r in raw if _key(r) == (n, rtt, setting)], key=lambda r: r["rep"])
    return rs[0] if rs else None


def plot_throughput(raw: list[dict], path: Path, rtt_ms: float = 60.0, bin_s: float = 0.5) -> Path | None:
    """Per-flow throughput over time of four simultaneous downloads, no
    control against exact-BDP RWM (paper Fig. 4, first repetition)."""
    plt = _plt()
    rtts = sorted({_key(r)[1] for r in raw if _key(r)[0] == 4})
    if not rtts:
        return None
    rtt = min(rtts, key=lambda x: abs(x - rtt_ms))
    runs = [(s, _pick(raw, 4, rtt, s)) for s in ("none", "bdp")]
    runs = [(s, r) for s, r in runs if r is not None]
    if not runs:
        return None
    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 3.6), squeeze=False, sharey=True)
    for ax, (s, r) in zip(axes[0], runs):
        dt0 = r["series"].get("throughput_interval_s") or 0.1
        m = max(1, round(bin_s / dt0))  # coarser bins: reads arrive in bursts
        dt = dt0 * m
        for k, ser in enumerate(r["series"]["throughput_mbps"]):
            t0 = r["flows"]["start_s"][k] or 0.0
            ys = [sum(ser[i:i + m]) / len(ser[i:i + m]) for i in range(0, len(ser), m)]
            ax.plot([t0 + dt0 * min(i + m, len(ser)) for i in range(0, len(ser), m)], ys, linewidth=0.9,
                    label=f"flow {k}", drawstyle="steps-pre")
        ax.set_title(
            f"{'no control' if s == 'none' else 'RWM, exact BDP'} (RTT {rtt:.0f} ms, rep {r['rep']})", fontsize=10
        )
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"throughput (Mb/s, {dt:g} s bins)")
        ax.legend(fontsize=7)
    fig.suptitle("RWM testbed: four concurrent downloads (paper Fig. 4)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_window(raw: list[dict], path: Path, rtt_ms: float = 60.0) -> Path | None:
    """cwnd against the window the sender sees (snd_wnd), flow 0."""
    plt = _plt()
    rtts = sorted({_key(r)[1] for r in raw})
    if not rtts:
        return None
    rtt = min(rtts, key=lambda x: abs(x - rtt_ms))
    n = 4 if any(_key(r)[0] == 4 for r in raw) else 1
    runs = [(s, _pick(raw, n, rtt, s)) for s in ("none", "bdp")]
    runs = [(s, r) for s, r in runs if r is not None and r["series"].get("window0")]
    if not runs:
        return None
    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 3.6), squeeze=False)
    for ax, (s, r) in zip(axes[0], runs):
        w = r["series"]["window0"]
        ax.plot([x[0] for x in w], [x[1] / 1000 for x in w], label="cwnd", linewidth=0.9)
        ax.plot(
            [x[0] for x in w],
            [(x[2] or 0) / 1000 for x in w],
            label="window seen by the sender (snd_wnd)",
            linewidth=0.9,
        )
        ax.set_yscale("log")
        ax.set_title(
            f"{'no control' if s == 'none' else 'RWM, exact BDP'}: flow 0 of {n}, RTT {rtt:.0f} ms", fontsize=10
        )
        ax.set_xlabel("time (s)")
        ax.set_ylabel("kB")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _fmt(df, floatfmt: str = "{:.3g}") -> str:
    """A frame as a table: columns named with a unit (``fct_mean_s``,
    ``median_improvement_pct``) in that unit's format (seconds shown as ms,
    the name saying so), the others with ``floatfmt``."""
    cols = list(df.columns)
    units = {c: unit_of(c) for c in cols}
    header = [c[:-2] + "_ms" if units[c] == "s" else c for c in cols]
    body = []
    for _, r in df.iterrows():
        body.append(
            [
                num(v, units[c])
                if units[c] != "count"
                else (
                    floatfmt.format(v)
                    if isinstance(v, float) and not math.isnan(v)
                    else ("-" if isinstance(v, float) else str(v))
                )
                for c, v in zip(cols, r)
            ]
        )
    return render(header, body)


def report(raw: list[dict], out: Path, plots: bool = True, paper: dict | None = None) -> str:
    """Writes every table and figure; returns the text to print. Runs of
    several testbed variants (a jitter sweep, RWM at both edges) are reported
    one variant after the other; the CSV tables hold them all, with a
    ``jitter`` and a ``rwm_edges`` column; the figures show the first."""
    import pandas as pd

    out = Path(out)
    if not raw:
        return "no finished runs"
    raw = with_defaults(raw)
    variants = sorted({variant(r) for r in raw}, key=lambda v: (parse_ms(v[0]), v[1]))
    several = len(variants) > 1
    write_tables(raw, out, GROUP + (VARIANT if several else []))
    if paper is None:
        try:
            paper = make_plan(SCENARIO, {}).paper
        except Exception:
            paper = None
    fcts, rtts, paps, text = [], [], [], []
    for v in variants:
        sub = [r for r in raw if variant(r) == v]
        fct, rtt = fct_table(sub), rtt_table(sub)
        pap = paper_table(fct, rtt, paper)
        for df in (fct, rtt, pap):
            for k, x in zip(VARIANT, v):
                df[k] = x
        fcts.append(fct)
        rtts.append(rtt)
        paps.append(pap)
        if several:
            text += [f"== {variant_name(v)} ==", ""]
        text += _variant_text(fct, rtt, pap)
    if several:
        text += ["The paper's 140 ms statements across the variants", _fmt(_sweep_table(paps))]
    pd.concat(fcts).to_csv(out / "fct.csv", index=False)
    pd.concat(rtts).to_csv(out / "rtt_table.csv", index=False)
    pd.concat(paps).to_csv(out / "paper.csv", index=False)
    # The statements are judged on the first variant: no jitter, RWM at the
    # receivers' edge (the paper's own set-up) when it ran.
    judged = {st["id"]: judge(st, fcts[0], rtts[0]) for st in PAPER["statements"]}
    label = "the testbed's runs" + (f" ({variant_name(variants[0])})" if several else "")
    _st.write(out, PAPER["statements"], {label: judged})
    statements = _st.section("## The paper's statements, judged", PAPER["statements"], {label: judged})
    paths: list = []
    if plots:
        fig = out / "figures"
        fig.mkdir(exist_ok=True)
        first = [r for r in raw if variant(r) == variants[0]]
        paths = [plot_fct(first, fig / "fct_boxplot.png"), plot_fct(first, fig / "slowest_boxplot.png", slowest=True),
                 plot_throughput(first, fig / "throughput.png"), plot_window(first, fig / "window.png")]
        text.append("\nplots" + (f" ({variant_name(variants[0])})" if several else "") + ": "
                    + ", ".join(str(p) for p in paths if p))
    text.append(f"tables: {out / 'fct.csv'}, {out / 'rtt_table.csv'}, {out / 'paper.csv'}, {out / 'summary.csv'}, "
                f"{out / 'runs.csv'}, {out / 'flows.csv'}, {out / 'statements.csv'}; report: {out / 'report.md'}")
    t = _st.tally(judged)
    text.append(f"testbed time: {wall_line(raw)}")
    text.append(f"statements of the paper: {t['holds']} hold, {t['partly']} partly, {t['fails']} fail, "
                f"{t['not measurable']} not measurable ({out / 'report.md'})")
    (out / "report.md").write_text("\n".join(
        ["# RWM (the RWM paper section IV) on the namespace testbed", "",
         f"Paper: {PAPER['title']} (docs/bibliography.md); its numbers and statements are in "
         "`python/netreturn/paper/rwm.toml`. Scaled: docs/testbed.md.", "",
         f"Testbed time: {wall_line(raw)}.", "", *statements,
         "## Tables", "", "```", *text[:-3], "```", ""]
        + [f"![{p.name}](figures/{p.name})" for p in paths if p]) + "\n")
    return "\n".join(text)


def wall_line(raw: list[dict]) -> str:
    """The testbed's time, from the runs themselves: how many, the sum of
    their wall times (set-up and teardown of the namespaces included; the
    command adds its start and this report), and the machine's load average
    as each run started (the testbed runs in real time, so load stretches
    what a run measures, not only how long it takes)."""
    walls = _finite([r.get("wall_s") for r in raw])
    loads = _finite([r.get("load_avg") for r in raw])
    if not walls:
        return f"{len(raw)} runs (no wall times recorded)"
    total = sum(walls)
    text = (f"{len(raw)} runs, {total:.0f} s of runs ({total / 60:.1f} min; one run {min(walls):.1f} .. "
            f"{max(walls):.1f} s)")
    if loads:
        text += (f", load average at their start: median {quantile(loads, 0.5):.1f} "
                 f"({min(loads):.1f} .. {max(loads):.1f})")
    return text


def parse_ms(t: str) -> float:
    try:
        return _ms(t)
    except ValueError:
        return math.inf


def _sweep_table(paps):
    """The 140 ms statements, one row per variant."""
    import pandas as pd

    rows = []
    for pap in paps:
        sel = pap[pap.claim.str.startswith("140 ms")] if len(pap) else pap
        for _, r in sel.iterrows():
            rows.append({"jitter": r.jitter, "rwm_edges": r.rwm_edges, "claim": r.claim, "testbed": r.testbed})
    return pd.DataFrame(rows)


def _variant_text(fct, rtt, pap) -> list[str]:
    return [
        "FCT per transfer (ms): quartiles over every download of every repetition; "
        "improvement = distance of the medians to no control",
        _fmt(
            fct[
                [
                    "flows",
                    "rtt_ms",
                    "setting",
                    "runs",
                    "fct_p25_s",
                    "fct_median_s",
                    "fct_p75_s",
                    "fct_mean_s",
                    "fct_ci95_s",
                    "slowest_median_s",
                    "median_improvement_pct",
                    "retransmits_mean",
                    "drops_mean",
                ]
            ]
        ),
        "",
        "RTT seen by the senders (ms; srtt from TCP_INFO every 20 ms while data is outstanding), the paper's Table I",
        _fmt(rtt[[c for c in rtt.columns if c not in VARIANT]], "{:.1f}"),
        "",
        "Against the paper (docs/decisions.md §5.4)",
        _fmt(pap[[c for c in pap.columns if c not in VARIANT]]),
        "",
    ]
