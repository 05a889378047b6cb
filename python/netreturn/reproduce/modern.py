"""``netreturn study modern``: the window controllers against modern AQMs
and senders (issue 27), a study no paper has published.

A grid of (scenario, mechanism, sender, seed) runs over the bundled EWT
dumbbells and the AWM paper's two-way and web-mice families, and a chain in
which a window gateway feeds an AQM bottleneck. Everything the study runs
is data, ``paper/modern.toml``: its mechanisms, senders, scenarios and the
statements it judges (each a question: holds, partly, fails, or not
measurable, with the numbers of this invocation's runs). The machinery is
the reproductions': the run store, :mod:`.statements`, :mod:`.text`.

Metrics of a run (:func:`measure`): the summary's loss, utilization,
Jain index and RTT quartiles; the queueing delay's p50 and p99, derived
here from the monitored queue's series (bytes sampled every
``run.sample_interval``, divided by the link's rate, after the first
:data:`SKIP` of the run), since the simulator reports no delay percentile;
and the web mice's p50 and p99 flow completion time from the per-flow rows.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..stats import mean_ci
from ..testbed.sweep import quantile
from . import statements as st
from .paper import PAPER_DIR
from .text import f, fmt_ci, md_table

STUDY_FILE = PAPER_DIR / "modern.toml"
CHECKS = {"lower", "sender-lower", "within", "best", "gateway"}
# The part of every run left out of the queueing delay percentiles (the
# flows' start-up).
SKIP = 0.2
GATEWAY_LINK = "R0->R1"  # the gateway's link in scenarios/study/gateway-aqm.toml
# (column, label, lower is better) of every table and figure.
METRICS = [
    ("tcp_data_loss_pct", "TCP data loss (%)", True),
    ("qdelay_p50_ms", "queueing delay p50 (ms)", True),
    ("qdelay_p99_ms", "queueing delay p99 (ms)", True),
    ("utilization", "bottleneck utilization", False),
    ("goodput_mean_mbps", "mean goodput per flow (Mb/s)", False),
    ("jain", "Jain index, long flows", False),
    ("web_fct_p50_s", "web mice FCT p50 (s)", True),
    ("web_fct_p99_s", "web mice FCT p99 (s)", True),
    ("rtt_p50_ms", "RTT p50 (ms)", True),
    ("ecn_marks", "CE marks at the bottleneck", True),
    ("timeouts", "retransmission timeouts", True),
]


def load(path: str | Path = STUDY_FILE) -> dict:
    """The study file, checked: every name a statement or a table uses is
    one the file declares (ValueError naming the file and the field)."""
    d = st.load(path, ("mechanisms", "senders", "scenarios", "gateway", "quick"), CHECKS)
    mechs = [m["name"] for m in d["mechanisms"]]
    senders = [s["name"] for s in d["senders"]]
    scens = [s["name"] for s in d["scenarios"]]
    cols = [c for c, _, _ in METRICS]

    def need(where: str, values: Any, allowed: list[str]) -> None:
        for v in values if isinstance(values, list) else [values]:
            if v not in allowed:
                raise ValueError(f"{path}: {where}: {v!r} is not one of {', '.join(allowed)}")

    for m in d["mechanisms"]:
        need(f"mechanisms ({m['name']}).senders", m.get("senders", []), senders)
    need("quick.mechanisms", d["quick"]["mechanisms"], mechs)
    need("quick.senders", d["quick"]["senders"], senders)
    g = d["gateway"]
    need("gateway.sender", g["sender"], senders)
    need("gateway.also_senders", g.get("also_senders", []), senders)
    for i, s in enumerate(d["statements"]):
        where = f"statements[{i}] ({s['id']})"
        need(f"{where}.metric", s.get("metric", []), cols)
        need(f"{where}.scenarios", s.get("scenarios", []), scens)
        if s["check"] == "sender-lower":
            need(f"{where}.a/b", [s["a"], s["b"]], senders)
            need(f"{where}.mechanisms", s["mechanisms"], mechs)
        elif s["check"] != "gateway":
            need(f"{where}.senders", s.get("senders", []), senders)
            need(f"{where}.a", s["a"], mechs)
            need(f"{where}.b", [*([s["b"]] if "b" in s else []), *s.get("b_each", [])], mechs)
    return d


STUDY = load()


@dataclass
class Options:
    out: Path | None = None
    seeds: int = 5
    quick: bool = False
    jobs: int | None = None
    progress: bool = True
    mechanisms: list[str] | None = None
    senders: list[str] | None = None
    scenarios: list[str] | None = None
    unavailable: list[str] = field(default_factory=list)  # senders this simulator build lacks


def simulator_senders() -> set[str]:
    from .. import _native

    return {c["name"] for c in _native.mechanisms()["congestion_controls"]}


def resolve(o: Options, study: dict = STUDY) -> Options:
    """Defaults (--quick's smaller grid) and the choices checked."""
    q = study["quick"]
    if o.out is None:
        o.out = Path("results") / "study-modern"
    o.out = Path(o.out)
    allowed = {"mechanisms": [m["name"] for m in study["mechanisms"]],
               "senders": [s["name"] for s in study["senders"]],
               "scenarios": [s["name"] for s in study["scenarios"]]}
    for key, names in allowed.items():
        chosen = getattr(o, key)
        if chosen is None:
            chosen = list(q[key]) if o.quick and key in q else (
                [s["name"] for s in study["scenarios"] if s.get("quick")] if o.quick and key == "scenarios"
                else list(names))
        for c in chosen:
            if c not in names:
                raise ValueError(f"--{key} {c}: allowed {', '.join(names)}")
        setattr(o, key, chosen)
    have = simulator_senders()
    cc = {s["name"]: s["cc"] for s in study["senders"]}
    o.unavailable = [s for s in o.senders if cc[s] not in have]
    o.senders = [s for s in o.senders if cc[s] in have]
    return o


def _by_name(items: list[dict]) -> dict[str, dict]:
    return {x["name"]: x for x in items}


def _ngwa_file(sc: dict, mech: dict, out: Path) -> Path:
    """The scenario with NGWA's ``[ngwa]`` table added (NGWA is a table, not
    a queue), written under ``<out>/scenarios``; Wmax is the scenario's
    receive buffer (eq. 2), so NGWA caps no window the others leave open."""
    from ..files import atomic_write
    from ..scenarios import resolve as find

    text = Path(find(sc["file"])).read_text()
    path = out / "scenarios" / f"{sc['name']}-ngwa{mech['ngwa_mode']}.toml"
    extra = f"\n[ngwa]\nmode = {int(mech['ngwa_mode'])}\nwmax = \"{sc['rcv_buf']}\"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != text + extra:
        atomic_write(path, text + extra)
    return path


@dataclass
class Cell:
    """One run of the study: where it belongs, and its spec."""

    part: str        # grid | gateway
    scenario: str
    mechanism: str   # the grid's mechanism, or the gateway's controller
    sender: str
    seed: int
    spec: Any
    aqm: str = ""    # the gateway part's bottleneck queue


def plan(o: Options, study: dict = STUDY) -> list[Cell]:
    """Every run the study asks for."""
    from ..runner import RunSpec

    mechs, senders, scens = _by_name(study["mechanisms"]), _by_name(study["senders"]), _by_name(study["scenarios"])
    cells = []
    for name in o.scenarios:
        sc = scens[name]
        stop = sc["quick_stop"] if o.quick else sc["stop"]
        for mname in o.mechanisms:
            m = mechs[mname]
            for sname in m.get("senders", o.senders):
                if sname not in o.senders and sname not in m.get("senders", []):
                    continue
                s = senders[sname]
                if s["cc"] not in simulator_senders():
                    continue
                path = _ngwa_file(sc, m, o.out) if "ngwa_mode" in m else sc["file"]
                over = {"queue": m.get("queue", mname), "tcp.cc": s["cc"], "tcp.ecn": str(bool(s["ecn"])).lower(),
                        "run.stop": stop}
                for seed in range(1, o.seeds + 1):
                    cells.append(Cell("grid", name, mname, sname, seed, RunSpec.make(path, over, seed,
                                                                                        keep_series=True)))
    g = study["gateway"]
    for sname in gateway_senders(o, study):
        s = senders[sname]
        for rate in g["quick_rates"] if o.quick else g["rates"]:
            for aqm in g["quick_aqms"] if o.quick else g["aqms"]:
                for gw in g["quick_gateways"] if o.quick else g["gateways"]:
                    over = {"aqm": aqm, "gateway": gw, "gateway_rate": rate, "tcp": s["cc"], "ecn": bool(s["ecn"]),
                            "stop": g["quick_stop"] if o.quick else g["stop"]}
                    over = {k: str(v).lower() if isinstance(v, bool) else v for k, v in over.items()}
                    for seed in range(1, o.seeds + 1):
                        cells.append(Cell("gateway", gateway_part(rate, sname, study), gw, sname, seed,
                                          RunSpec.make(g["file"], over, seed, keep_series=True), aqm=aqm))
    return cells


def gateway_senders(o: Options, study: dict = STUDY) -> list[str]:
    """The gateway part's senders: the study file's ``[gateway] sender``
    always, and each of its ``also_senders`` the invocation runs."""
    g = study["gateway"]
    return [g["sender"]] + [s for s in g.get("also_senders", []) if s in o.senders and s != g["sender"]]


def gateway_part(rate: str, sender: str | None = None, study: dict = STUDY) -> str:
    """The gateway part's name for one rate of the gateway's link (and a
    sender other than the part's own, named after the rate)."""
    if sender is None or sender == study["gateway"]["sender"]:
        return f"gateway link {rate}"
    return f"gateway link {rate}, {_lab(study)[sender]}"


def measure(r: dict, rate_bps: float) -> dict[str, float]:
    """The study's metrics of one run (see the module's docstring)."""
    s = r["summary"]
    nan = math.nan

    def num(k: str) -> float:
        v = s.get(k)
        return nan if v is None else float(v)

    q = r.get("queue_series") or {}
    t0 = SKIP * num("sim_time_s")
    delays = [b * 8 / rate_bps * 1e3 for t, b in zip(q.get("time_s", []), q.get("bytes", [])) if t >= t0]
    fl = r.get("flows") or {}
    web = sorted(x for x, w in zip(fl.get("fct_s", []), fl.get("web", [])) if w and x is not None and x > 0)
    ifs = r.get("ifaces") or {}
    # The gateway part's upstream link (the chain's first, R0->R1): how
    # much its controller did, and its queue.
    up = ifs.get("iface", []).index(GATEWAY_LINK) if GATEWAY_LINK in ifs.get("iface", []) else None
    return {
        "tcp_data_loss_pct": num("tcp_data_loss_pct"),
        "qdelay_p50_ms": quantile(delays, 0.5),
        "qdelay_p99_ms": quantile(delays, 0.99),
        "utilization": num("utilization"),
        "goodput_mean_mbps": num("goodput_mean_mbps"),
        # The long flows' index: the web family's FTP flows without the mice.
        "jain": num("jain_ftp") if "jain_ftp" in s else num("jain_goodput"),
        "web_fct_p50_s": quantile(web, 0.5),
        "web_fct_p99_s": quantile(web, 0.99),
        "web_completed": num("web_completed"),
        "rtt_p50_ms": num("rtt_p50_ms"),
        "ecn_marks": num("ecn_marks"),
        "ecn_reductions": num("ecn_reductions"),
        "timeouts": num("timeouts"),
        "flows_incomplete": num("flows_incomplete"),
        "acks_rewritten_all_links": float(sum(x or 0 for x in ifs.get("acks_rewritten", []))),
        "gateway_queue_mean_bytes": nan if up is None else float(ifs["queue_mean_bytes"][up] or 0),
    }


def execute(o: Options, cells: list[Cell], study: dict = STUDY) -> list[dict]:
    """Runs (or reads back from ``<out>/runs``) every cell; one row of
    metrics per run. In batches, so the per-flow rows of a batch are
    dropped before the next one."""
    from ..runner import run_many

    rates = {s["name"]: float(s["rate_bps"]) for s in study["scenarios"]}
    gateway_rate = float(study["gateway"]["rate_bps"])  # the bottleneck's: the monitored link
    rows: list[dict] = []
    batch = max(8, 4 * (o.jobs or 2))
    bar = _Bar(len(cells), o.progress)
    try:
        for i in range(0, len(cells), batch):
            part = cells[i:i + batch]
            results = run_many([c.spec for c in part], jobs=o.jobs, out=o.out, progress=False, bar=bar)
            for c, r in zip(part, results):
                rows.append({"part": c.part, "scenario": c.scenario, "aqm": c.aqm, "mechanism": c.mechanism,
                             "sender": c.sender, "seed": c.seed, "wall_s": r.get("wall_s"),
                             **measure(r, gateway_rate if c.part == "gateway" else rates[c.scenario])})
    finally:
        bar.close()
    return rows


class _Bar:
    def __init__(self, total: int, enabled: bool):
        self._bar = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc="study modern", unit="run", dynamic_ncols=True)

    def advance(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# -- the statements -----------------------------------------------------------

class Cells:
    """Mean, 95 % CI and n per (part, scenario, aqm, mechanism, sender, metric)."""

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self._cache: dict[tuple, tuple[float, float, int]] = {}

    def get(self, scenario: str, mechanism: str, sender: str, metric: str, aqm: str = "") -> tuple[float, float, int]:
        k = (scenario, aqm, mechanism, sender, metric)
        if k not in self._cache:
            self._cache[k] = mean_ci(r[metric] for r in self.rows if r["scenario"] == scenario and r["aqm"] == aqm
                                     and r["mechanism"] == mechanism and r["sender"] == sender
                                     and not _nan(r[metric]))
        return self._cache[k]

    def scenarios(self) -> list[str]:
        return list(dict.fromkeys(r["scenario"] for r in self.rows if r["part"] == "grid"))

    def has(self, scenario: str, mechanism: str, sender: str, aqm: str = "") -> bool:
        return self.get(scenario, mechanism, sender, "tcp_data_loss_pct", aqm)[2] > 0


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _apart(a: tuple[float, float, int], b: tuple[float, float, int]) -> bool:
    """Whether two 95 % CIs do not overlap (both with n >= 2)."""
    if a[2] < 2 or b[2] < 2 or math.isnan(a[1]) or math.isnan(b[1]):
        return False
    return abs(a[0] - b[0]) > a[1] + b[1]


def _verdict(wins: list[tuple[bool, bool, str]], what: str, why_none: str, ci: bool = True) -> st.Judgement:
    """``wins``: per comparison, (the statement holds there, clearly: the
    95 % CIs apart or no CI needed, its numbers). Holds: at every
    comparison and clearly; partly: at some, or at all but some only
    within the CIs; fails: at none. ``ci``: whether the CIs are part of
    the statement (not for a tolerance, "within 5 %")."""
    if not wins:
        return st.Judgement(st.NOT_MEASURABLE, "-", why_none)
    k = sum(w for w, _, _ in wins)
    clear = sum(w and c for w, c, _ in wins)
    shown = "; ".join(t for _, _, t in wins[:12]) + (f"; … ({len(wins) - 12} more in cells.csv)"
                                                      if len(wins) > 12 else "")
    measured = f"at {k} of {len(wins)} {what}" + (f", {clear} of them beyond the 95 % CIs" if ci else "") + f": {shown}"
    if k == 0:
        return st.Judgement(st.FAILS, measured, f"at none of the {len(wins)} {what}")
    if k == clear == len(wins):
        return st.Judgement(st.HOLDS, measured)
    why = [f"not at {len(wins) - k} of {len(wins)}"] if k < len(wins) else []
    if clear < k:
        why.append(f"{k - clear} only within the 95 % CIs")
    return st.Judgement(st.PARTLY, measured, "; ".join(why))


UNITS = {"pct": "%", "ms": "ms", "s": "s", "mbps": "Mb/s"}


def _lab(study: dict) -> dict[str, str]:
    return {**{m["name"]: m["label"] for m in study["mechanisms"]}, **{s["name"]: s["label"] for s in study["senders"]}}


def judge(s: dict, cells: Cells, o: Options, study: dict = STUDY) -> st.Judgement:
    """One statement, judged from ``cells`` (means of this invocation's runs)."""
    lab = _lab(study)
    metrics = s.get("metric", "tcp_data_loss_pct")
    metrics = metrics if isinstance(metrics, list) else [metrics]
    scens = [x for x in cells.scenarios() if x in s.get("scenarios", cells.scenarios())]
    missing_sender = [x for x in [s.get("a"), s.get("b"), *s.get("senders", [])]
                      if isinstance(x, str) and x in o.unavailable]
    why = "none of its cells was run"
    if missing_sender:
        why = (f"the simulator build has no `{', '.join(missing_sender)}` congestion control (tcp.cc); the study "
               "runs it as soon as the build lists it")
    wins: list[tuple[bool, bool, str]] = []

    def cmp(a: tuple, b: tuple, text: str, ok, ci: bool = True) -> None:
        if a[2] and b[2] and not math.isnan(a[0]) and not math.isnan(b[0]):
            wins.append((ok(a[0], b[0]), _apart(a, b) or not ci, text))

    for metric in metrics:
        unit = UNITS.get(metric.rsplit("_", 1)[-1], "")
        if s["check"] in ("lower", "within"):
            bs = [s["b"]] if "b" in s else s["b_each"]
            for sc in scens:
                for snd in s.get("senders", [x for x in o.senders]):
                    for a in s["a"]:
                        for b in bs:
                            va, vb = cells.get(sc, a, snd, metric), cells.get(sc, b, snd, metric)
                            tol = float(s.get("tolerance", 0))
                            ok = (lambda x, y: x < y) if s["check"] == "lower" else (
                                lambda x, y, tol=tol: x >= y * (1 - tol))
                            cmp(va, vb, f"{sc}/{lab[snd]} {lab[a]} {f(va[0])} vs {lab[b]} {f(vb[0])} {unit}", ok,
                                ci=s["check"] == "lower")
            what = "comparisons" if s["check"] == "lower" else f"comparisons within {float(s.get('tolerance', 0)):.0%}"
        elif s["check"] == "sender-lower":
            for sc in scens:
                for m in s["mechanisms"]:
                    va, vb = cells.get(sc, m, s["a"], metric), cells.get(sc, m, s["b"], metric)
                    cmp(va, vb, f"{sc}/{lab[m]} {lab[s['a']]} {f(va[0])} vs {lab[s['b']]} {f(vb[0])} {unit}",
                        lambda x, y: x < y)
            what = "comparisons"
        elif s["check"] == "best":
            better = max if s.get("better", "max") == "max" else min
            for sc in scens:
                for snd in s.get("senders", o.senders):
                    vals = {m: cells.get(sc, m, snd, metric) for m in o.mechanisms}
                    vals = {m: v for m, v in vals.items() if v[2] and not math.isnan(v[0])}
                    if s["a"] not in vals or len(vals) < 2:
                        continue
                    top = better(vals, key=lambda m: vals[m][0])
                    rest = [m for m in vals if m != s["a"]]
                    second = better(rest, key=lambda m: vals[m][0])
                    wins.append((top == s["a"], _apart(vals[s["a"]], vals[second]),
                                 f"{sc}/{lab[snd]} {lab[s['a']]} {f(vals[s['a']][0])}, best other {lab[second]} "
                                 f"{f(vals[second][0])}"))
            what = "scenario and sender cells"
        elif s["check"] == "gateway":
            gwrows = [r for r in cells.rows if r["part"] == "gateway"]
            aqms = list(dict.fromkeys(r["aqm"] for r in gwrows))
            gws = [g for g in dict.fromkeys(r["mechanism"] for r in gwrows) if g != "droptail"]
            sender_of = {r["scenario"]: r["sender"] for r in gwrows}
            for part in dict.fromkeys(r["scenario"] for r in gwrows):
                snd = sender_of[part]
                for aqm in aqms:
                    alone = cells.get(part, "droptail", snd, metric, aqm)
                    for g in gws:
                        vg = cells.get(part, g, snd, metric, aqm)
                        cmp(vg, alone, f"{part}: {lab[aqm]} + {lab[g]} {f(vg[0])} vs {lab[aqm]} alone "
                                       f"{f(alone[0])} {unit}", lambda x, y: x < y)
            what = "gateway and AQM pairs"
    return _verdict(wins, what, why, ci=s["check"] != "within")


def judge_all(cells: Cells, o: Options, study: dict = STUDY) -> dict[str, st.Judgement]:
    return {s["id"]: st.for_quick(s, judge(s, cells, o, study), o.quick) for s in study["statements"]}


# -- the report ---------------------------------------------------------------

def command(o: Options, study: dict = STUDY) -> str:
    q = study["quick"]
    cmd = "netreturn study modern" + (" --quick" if o.quick else "") + f" --seeds {o.seeds}"
    for key in ("mechanisms", "senders", "scenarios"):
        default = (q.get(key) if o.quick and key in q else
                   [s["name"] for s in study["scenarios"] if s.get("quick")] if o.quick and key == "scenarios"
                   else [x["name"] for x in study[key]])
        chosen = getattr(o, key) + (o.unavailable if key == "senders" else [])
        if list(chosen) != list(default):
            cmd += f" --{key} {','.join(chosen)}"
    return cmd + f" --out {o.out}"


def figures(cells: Cells, o: Options, out: Path, study: dict = STUDY) -> list[Path]:
    """One heatmap per metric (mechanism x sender, a panel per scenario),
    the cell's mean over its seeds written in it; and the gateway bars."""
    import seaborn as sns

    from ..report import _plt

    plt = _plt()
    lab = _lab(study)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    scens = cells.scenarios()
    for metric, label, lower in METRICS:
        panels = [sc for sc in scens if any(cells.get(sc, m, s, metric)[2] for m in o.mechanisms for s in o.senders)]
        if not panels:
            continue
        fig, axes = plt.subplots(1, len(panels), figsize=(3.3 * len(panels) + 1, 3.6), squeeze=False)
        for ax, sc in zip(axes[0], panels):
            import pandas as pd

            grid = pd.DataFrame([[cells.get(sc, m, s, metric)[0] if cells.get(sc, m, s, metric)[2] else math.nan
                                  for s in o.senders] for m in o.mechanisms],
                                index=[lab[m] for m in o.mechanisms], columns=[lab[s] for s in o.senders])
            sns.heatmap(grid, annot=True, fmt=".3g", cmap="rocket" if lower else "rocket_r", cbar=False, ax=ax,
                        annot_kws={"fontsize": 7})
            ax.set_title(sc, fontsize=9)
            ax.tick_params(labelsize=7)
        fig.suptitle(f"{label} (lighter is worse)" if lower else f"{label} (darker is worse)", fontsize=10)
        fig.tight_layout()
        p = out / f"{metric}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    gw = [r for r in cells.rows if r["part"] == "gateway"]
    if gw:
        import pandas as pd

        d = pd.DataFrame(gw)
        d["bottleneck"] = d["aqm"].map(lab) + "\n" + d["scenario"].str.replace("gateway link ", "gw ")
        d["gateway"] = d["mechanism"].map(lambda m: "none (AQM alone)" if m == "droptail" else lab[m])
        fig, axes = plt.subplots(3, 1, figsize=(max(6.0, 1.3 * d["bottleneck"].nunique() + 2), 8.5))
        for ax, (metric, label) in zip(axes, [("tcp_data_loss_pct", "TCP data loss (%)"),
                                              ("qdelay_p99_ms", "queueing delay p99 (ms)"),
                                              ("utilization", "bottleneck utilization")]):
            sns.barplot(data=d, x="bottleneck", y=metric, hue="gateway", errorbar=("ci", 95), ax=ax)
            ax.set_ylabel(label, fontsize=8)
            ax.set_xlabel("")
            ax.legend(fontsize=6, title="gateway", title_fontsize=7)
        fig.suptitle("a window gateway in front of an AQM bottleneck", fontsize=10)
        fig.tight_layout()
        p = out / "gateway.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def write_report(o: Options, rows: list[dict], build: str, t0: float, executed_s: float,
                 study: dict = STUDY) -> Path:
    import os
    import platform

    import pandas as pd

    from ..files import write_frame_csv
    from .store import git_rev, now

    out = Path(o.out)
    cells = Cells(rows)
    judged = judge_all(cells, o, study)
    lab = _lab(study)
    write_frame_csv(pd.DataFrame(rows), out / "runs.csv")
    agg = []
    keys = sorted({(r["part"], r["scenario"], r["aqm"], r["mechanism"], r["sender"]) for r in rows})
    for part, sc, aqm, m, snd in keys:
        for metric, _, _ in METRICS:
            mu, h, n = cells.get(sc, m, snd, metric, aqm)
            agg.append({"part": part, "scenario": sc, "aqm": aqm, "mechanism": m, "sender": snd, "metric": metric,
                        "mean": mu, "ci95": h, "n": n})
    write_frame_csv(pd.DataFrame(agg), out / "cells.csv")
    st.write(out, study["statements"], {"this study": judged})
    figs = figures(cells, o, out / "figures", study)

    L: list[str] = []
    w = L.append
    w("# Window controllers against modern AQMs and senders")
    w("")
    w("A study of our own (issue 27), not a reproduction: no paper has these numbers. The study's design, its "
      "mechanisms, senders, scenarios and the statements it judges are data: "
      "`python/netreturn/paper/modern.toml`.")
    w("")
    w(f"* command: `{command(o, study)}`" + (" (**quick smoke test: few seeds, short runs, a small grid**)"
                                             if o.quick else ""))
    w(f"* generated {now()}; simulator build `{build}`; git `{git_rev()}`; {os.cpu_count()} cores, jobs "
      f"{o.jobs or os.cpu_count()}; Python {platform.python_version()}")
    w(f"* seeds 1..{o.seeds} per cell, mean ± 95 % CI (Student's t); {len(rows)} runs, "
      f"{executed_s:.0f} s of simulation CPU time in all of them; wall time of this invocation "
      f"{time.perf_counter() - t0:.0f} s")
    if o.unavailable:
        w(f"* left out: the sender(s) {', '.join(o.unavailable)}: this simulator build has no such `tcp.cc` "
          "(adding one to the build is all the study needs: its entry is in the study file)")
    w("")
    w("## Design")
    w("")
    scs = _by_name(study["scenarios"])
    w("| scenario | what | bundled file | stop |")
    w("|---|---|---|---|")
    for name in o.scenarios:
        sc = scs[name]
        w(f"| {name} | {sc['title']} | `scenarios/{sc['file']}` | {sc['quick_stop'] if o.quick else sc['stop']} |")
    w("")
    mechs = _by_name(study["mechanisms"])
    w("* mechanisms at the bottleneck: " + ", ".join(
        f"{lab[m]} (`queue = \"{mechs[m].get('queue', m)}\"`" + (f", `[ngwa] mode = {mechs[m]['ngwa_mode']}`: "
                                                                 "NGWA's window decides, one run per scenario"
                                                                 if "ngwa_mode" in mechs[m] else "") + ")"
        for m in o.mechanisms) + ". Every one with its defaults (docs/mechanisms.md): nothing tuned. In the AWM "
      "families the queue runs on both directions of the bottleneck, as the AWM paper's footnote 1.")
    w("* senders (`tcp.cc`, `tcp.ecn`): " + ", ".join(
        f"{lab[s]} (`{_by_name(study['senders'])[s]['cc']}`, ECN {'on' if _by_name(study['senders'])[s]['ecn'] else 'off'})"  # noqa: E501
        for s in o.senders) + ". Every flow of a run uses the same sender. Where nothing marks (DropTail, RED, PIE "
      "and the window controllers, whose queues run without ECN by default) DCTCP and Prague answer a loss "
      "as NewReno does: their cells there repeat NewReno's (the same seeds, the same runs).")
    w(f"* queueing delay: the simulator reports the monitored queue's mean, not its percentiles; p50 and p99 here "
      f"are of the queue's series (bytes sampled every `run.sample_interval`) divided by the bottleneck's rate, "
      f"from {SKIP:.0%} of the run on. Under FQ-CoDel that is the drain time of the whole backlog, not the sojourn "
      "of one flow's packets (a sparse flow's packets pass the backlog); `rtt_p50_ms` in `cells.csv` is what the "
      "senders saw.")
    w("* short flows: the web family's mice (Poisson arrivals, Pareto sizes), their flow completion time's p50 and "
      "p99 over every finished mouse of a run. Fairness: Jain's index of the long flows' goodput (the web "
      "family: its FTP flows without the mice).")
    g = study["gateway"]
    w(f"* a gateway in front of an AQM: `scenarios/{g['file']}`, a chain: the gateway's link (the window "
      "controller over DropTail) feeds the AQM bottleneck (40 Mb/s); 20 flows cross both, 10 cross flows join at "
      f"the bottleneck. The gateway's link at {' and at '.join(g['quick_rates'] if o.quick else g['rates'])}: "
      "a little faster than the bottleneck, and as fast; in both the through flows get only their share of the "
      "bottleneck, so the gateway's own queue stays short (its column in the table below): EWT, which acts on "
      "its own queue, has nothing to act on, while AWM and RWM set windows from their link's rate and flow count "
      "whatever their queue. `gateway = droptail` is the AQM alone. Our simulator runs a window controller over a "
      "DropTail queue on its own link (docs/mechanisms.md): a controller over an AQM queue on the same link is "
      "not modelled. Senders: " + ", ".join(lab[x] for x in gateway_senders(o, study)) + " (a part per sender; "
      f"a sender other than {lab[g['sender']]} is named after the gateway link's rate).")
    w("")
    w("Files: `report.md`, `statements.csv`, `cells.csv` (mean, CI, n per cell and metric), `runs.csv` (one row "
      "per run), `figures/`, `runs/` (every run, resumable).")
    w("")
    L += st.section("## Statements", study["statements"], {"this study": judged}, quick=o.quick, kind="study")
    w("## Tables")
    w("")
    for metric, label, _ in METRICS:
        for sc in cells.scenarios():
            present = [m for m in o.mechanisms if any(cells.has(sc, m, s) for s in o.senders)]
            if not any(cells.get(sc, m, s, metric)[2] for m in present for s in o.senders):
                continue
            w(f"### {label}, {sc}")
            w("")
            w(md_table(["mechanism"] + [lab[s] for s in o.senders],
                       [[lab[m]] + [fmt_ci(*cells.get(sc, m, s, metric)[:2]) if cells.get(sc, m, s, metric)[2]
                                    else "-" for s in o.senders] for m in present]))
            w("")
    gw = [r for r in rows if r["part"] == "gateway"]
    if gw:
        w("### A gateway in front of an AQM bottleneck")
        w("")
        aqms = list(dict.fromkeys(r["aqm"] for r in gw))
        parts = list(dict.fromkeys(r["scenario"] for r in gw))
        sender_of = {r["scenario"]: r["sender"] for r in gw}
        gws = list(dict.fromkeys(r["mechanism"] for r in gw))
        shown = [(c, label) for c, label, _ in METRICS[:5]] + [
            ("acks_rewritten_all_links", "ACKs rewritten (all links)"),
            ("gateway_queue_mean_bytes", "gateway link's mean queue (bytes)")]
        head = ["upstream", "bottleneck", "gateway"] + [label for _, label in shown]
        body = []
        for part in parts:
            for aqm in aqms:
                for gname in gws:
                    body.append([part, lab[aqm], "none" if gname == "droptail" else lab[gname]] + [
                        fmt_ci(*cells.get(part, gname, sender_of[part], metric, aqm)[:2]) for metric, _ in shown])
        w(md_table(head, body))
        w("")
    w("## Figures")
    w("")
    for p in figs:
        w(f"![{p.stem}](figures/{p.name})")
        w("")
    path = out / "report.md"
    path.write_text("\n".join(L))
    return path


def study(o: Options) -> Path:
    """Runs the study and writes its report; returns the report's path."""
    from ..runner import native_build_id

    t0 = time.perf_counter()
    o = resolve(o)
    o.out.mkdir(parents=True, exist_ok=True)
    cells = plan(o)
    rows = execute(o, cells)
    cpu = sum(r["wall_s"] or 0 for r in rows)
    return write_report(o, rows, native_build_id(), t0, cpu)


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [x.strip() for x in text.split(",") if x.strip()]


def main(a) -> int:
    """``netreturn study modern`` (argparse namespace from cli.py)."""
    o = Options(out=a.out, seeds=a.seeds or (2 if a.quick else 5), quick=a.quick, jobs=a.jobs,
                progress=not a.quiet, mechanisms=_names(a.mechanisms), senders=_names(a.senders),
                scenarios=_names(a.scenarios))
    try:
        path = study(o)
    except ValueError as e:
        import sys

        print(f"netreturn study modern: {e}", file=sys.stderr)
        return 2
    text = path.read_text()
    tally = next((ln for ln in text.splitlines() if ln.startswith("**") and "statements:" in ln), "")
    print(f"report: {path}\n{tally}")
    return 0
