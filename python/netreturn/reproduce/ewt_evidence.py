"""EWT's differences that the grid's means cannot explain, explained from
the report's own runs, and the paper's Fig. 1 redone.

* Fairness (Figs. 8 and 15): per run, the flow with the highest goodput
  against the others (its loss and RTOs), from every grid run's per-flow
  columns (:func:`flow_columns`, kept by :class:`~.store.Runs`); and traced
  runs with every flow's cwnd and advertised window, which show whose
  window EWT's (B − U) / B · Wr actually binds (the EWT paper's eq. 10).
* Fig. 3 (queue "constant") and Fig. 10 (a "balanced" window): the
  figure runs again with the receive-buffer sensitivity's Wr (the paper
  does not state its receive buffer; EWT's window scales with it).
* Fig. 1 (section 2): three DropTail connections started together, one of
  which "monopolizes" the router's memory.

Every number these functions print is computed from the runs they are
given; nothing here is a frozen value.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from statistics import median

from . import statements as _st
from .figures import after as _after, series_stats as _series_stats
from .text import f as _f, md_table as _md_table

FIG1_FLOWS = 3
TRACED_SAMPLE = "100ms"
BOUND = 0.5  # a flow "held by EWT" when its advertised window is below its cwnd this share of its samples


# --------------------------------------------------------------------------
# scenario copies


def _copy(out: Path, src: Path, name: str, text: str) -> str:
    dest = Path(out) / "scenarios" / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.is_file() or dest.read_text() != text:
        dest.write_text(text)
    return str(dest.resolve())


def traced_variant(out: Path, scenario_file: str, sc: str, flows: int, sample: str = TRACED_SAMPLE,
                   start: str | None = None, tag: str = "traced") -> tuple[str, dict] | None:
    """A copy of the scenario under ``<out>/scenarios`` that traces every
    one of its ``flows`` flows (cwnd, advertised window) every ``sample``;
    with ``start``, the TCP flows' start is replaced (Fig. 1: "transmit data
    simultaneously"). None if the file has no ``trace_flows`` line (or no
    uniform start to replace)."""
    from ..scenarios import resolve

    src = resolve(scenario_file)
    text = src.read_text()
    pat = re.compile(r"^trace_flows\s*=\s*\[[^\]]*\]\s*$", re.M)
    if not pat.search(text) or re.search(r"^sample_interval\s*=", text, re.M):
        return None
    text = pat.sub(f"trace_flows = [{', '.join(str(i) for i in range(flows))}]\n"
                   f'sample_interval = "{sample}"   # added by netreturn reproduce', text, count=1)
    if start is not None:
        spat = re.compile(r"^start = \{ uniform = \[[^\]]*\] \}", re.M)
        if not spat.search(text):
            return None
        text = spat.sub(f"start = {start}", text, count=1)
    return _copy(out, src, f"{sc}_{tag}{flows}.toml", text), {}


# --------------------------------------------------------------------------
# per-run data


def flow_columns(r: dict) -> dict:
    """What the fairness evidence keeps of every run: per flow, goodput,
    loss % and RTO expiries (:class:`~.store.Runs`' ``extract``)."""
    f = r.get("flows") or {}
    return {k: f.get(k) for k in ("goodput_mbps", "loss_pct", "timeouts", "start_s", "fct_s")}


def top_flow(runs: list[dict]) -> dict | None:
    """Per run, the flow with the highest goodput against the others:
    mean of (its goodput / the run's median goodput), and medians over the
    runs of its loss % and RTOs and of the others' (each run's median)."""
    rows = []
    for r in runs:
        x = r.get("extra") or {}
        gp, lo, to = x.get("goodput_mbps") or [], x.get("loss_pct") or [], x.get("timeouts") or []
        idx = [i for i, g in enumerate(gp) if g is not None and math.isfinite(g)]
        if len(idx) < 2 or len(lo) != len(gp) or len(to) != len(gp):
            continue
        top = max(idx, key=lambda i: gp[i])
        rest = [i for i in idx if i != top]
        med = median(gp[i] for i in idx)
        lr = [lo[i] for i in rest if lo[i] is not None]
        rows.append((gp[top] / med if med > 0 else math.nan, lo[top], median(lr) if lr else math.nan,
                     to[top], median(to[i] for i in rest)))
    if not rows:
        return None
    col = lambda k: [row[k] for row in rows if row[k] is not None and not math.isnan(row[k])]  # noqa: E731
    ratio = col(0)
    return {"runs": len(rows), "ratio": sum(ratio) / len(ratio) if ratio else math.nan,
            "loss_top": median(col(1)), "loss_rest": median(col(2)), "rto_top": median(col(3)),
            "rto_rest": median(col(4))}


def bound_share(trace: dict) -> float:
    """The share of a traced flow's samples in which its advertised window
    was below its cwnd: EWT's written window, not cwnd, limited it."""
    pairs = [(c, w) for c, w in zip(trace.get("cwnd") or [], trace.get("rwnd") or [])
             if c is not None and w is not None]
    return sum(w < c for c, w in pairs) / len(pairs) if pairs else math.nan


def traced_flows(runs: list[dict]) -> list[dict]:
    """Every traced flow of ``runs``: the run's index, bound share, goodput,
    loss %, RTOs."""
    out = []
    for k, r in enumerate(runs):
        f = r.get("flows") or r.get("extra") or {}
        for t in r.get("traces") or []:
            i = t.get("flow")
            if i is None or i >= len(f.get("goodput_mbps") or []):
                continue
            out.append({"run": k, "bound": bound_share(t), "goodput": f["goodput_mbps"][i], "loss": f["loss_pct"][i],
                        "rto": f["timeouts"][i]})
    return out


def top_held(flows: list[dict]) -> tuple[list[float], float]:
    """Per traced run, the held share of its top-goodput flow; and the
    median held share of all the other flows."""
    runs: dict[int, list[dict]] = {}
    for x in flows:
        runs.setdefault(x.get("run", 0), []).append(x)
    tops, rest = [], []
    for _, xs in sorted(runs.items()):
        ok = [x for x in xs if x["goodput"] is not None and not math.isnan(x["bound"])]
        if len(ok) < 2:
            continue
        top = max(ok, key=lambda x: x["goodput"])
        tops.append(top["bound"])
        rest += [x["bound"] for x in ok if x is not top]
    return tops, median(rest) if rest else math.nan


def _rank_corr(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    if len(xs) < 3:
        return math.nan
    a, b = ranks(xs), ranks(ys)
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    den = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return num / den if den else math.nan


# --------------------------------------------------------------------------
# the fairness gap


def fairness_bullets(table, scenarios: list[str], methods: list[str], levels: list[str], labels: dict,
                     traced: dict, rcvbuf_label: str) -> list[str]:
    """Section 9's bullets on EWT's fairness, one per scenario where EWT's
    Jain index is below DropTail's or the lowest of the methods at some
    level: who gets the goodput and why, with this report's numbers."""
    out = []
    if "ewt" not in methods:
        return out
    for sc in scenarios:
        jain = {m: [table.get(sc, "paper", lv, m, "jain_goodput")[0] for lv in levels] for m in methods}
        if any(math.isnan(x) for x in jain["ewt"]):
            continue
        lowest = [lv for i, lv in enumerate(levels) if all(jain["ewt"][i] <= jain[m][i] for m in methods)]
        if not lowest and ("droptail" not in methods or all(
                e >= d for e, d in zip(jain["ewt"], jain["droptail"]))):
            continue
        cells = {}
        for m in [x for x in ("ewt", "droptail", "red") if x in methods]:
            cells[m] = [top_flow(table.cells[(sc, "paper", lv, m)].runs) if (sc, "paper", lv, m) in table.cells
                        else None for lv in levels]
        e = cells["ewt"]
        if any(x is None for x in e):
            continue
        j = lambda xs: " / ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        head = (f"- **{sc}: EWT's goodput fairness** (Jain {j(jain['ewt'])} at the paper's counts, mild / medium / "
                "heavy" + (f"; the lowest of the {len(methods)} methods at {', '.join(lowest)}" if lowest else "")
                + "). ")
        per = []
        for m, cs in cells.items():
            if any(x is None for x in cs):
                continue
            col = lambda k, fmt, cs=cs: " / ".join(fmt(x[k]) for x in cs)  # noqa: E731
            per.append(f"{labels[m]}: top flow {col('ratio', lambda v: f'{v:.1f}×')} the median goodput, loss "
                       f"{col('loss_top', _f)} % against the others' {col('loss_rest', _f)} %, RTOs "
                       f"{col('rto_top', lambda v: f'{v:g}')} against {col('rto_rest', lambda v: f'{v:g}')}")
        body = ("In each run, the flow with the highest goodput against the others (medians over the "
                f"{min(x['runs'] for x in e)}+ runs per level; mild / medium / heavy): " + "; ".join(per) + ". ")
        protected = all(x["loss_top"] < 0.5 * x["loss_rest"] for x in e)
        tr = traced.get(sc) or []
        trace_txt = ""
        if tr:
            b = [x for x in tr if x["bound"] > BOUND]
            u = [x for x in tr if x["bound"] <= BOUND]
            med = lambda xs, k: median(x[k] for x in xs) if xs else math.nan  # noqa: E731
            rho = _rank_corr([x["bound"] for x in tr], [x["goodput"] for x in tr])
            tops, rest = top_held(tr)
            trace_txt = (f"Traced runs (EWT, every flow's cwnd and advertised window, {len(tr)} flows; section 5b): "
                         f"{len(b)} flow(s) were held by EWT's written window (advertised window below cwnd) more than "
                         f"{BOUND:.0%} of their transfer; their median goodput {_f(med(b, 'goodput'))} Mb/s, loss "
                         f"{_f(med(b, 'loss'))} %, RTOs {_f(med(b, 'rto'))}; the other {len(u)}: "
                         f"{_f(med(u, 'goodput'))} Mb/s, {_f(med(u, 'loss'))} %, {_f(med(u, 'rto'))} RTOs; rank "
                         f"correlation of the held share with goodput {rho:.2f}; the top flow of each run was held "
                         f"{' / '.join(f'{x:.2f}' for x in tops)} of its samples, the other flows {rest:.2f} "
                         "(median). ")
        why = ("EWT writes one window, (B − U) / B · Wr, into every ACK (the EWT paper's eq. 10); with Wr = 1 MB it "
               "binds "
               "only a flow whose cwnd grew above it, one that got going before the queue filled. That flow is "
               "window-limited: as U rises its window falls and it stops sending, so its packets seldom meet a full "
               "queue, while the flows whose cwnd is below the written window (in slow start, after an RTO) keep "
               "sending into the full queue and take the drops and RTOs (each at least 1 s, RFC 6298 (2.4)). The "
               "held flow finishes early with a large share; the others wait out timeouts. DropTail protects no flow "
               "this way. "
               if protected else
               "Here EWT's top flow is not spared loss, so EWT does not protect it: the spread is DropTail's, from "
               "slow-start overshoot and RTOs, with EWT's window binding rarely at Wr = 1 MB. ")
        rb = [table.get(sc, "rcvbuf", lv, "ewt", "jain_goodput")[0] for lv in levels]
        rb_txt = ""
        if not any(math.isnan(x) for x in rb):
            rb_txt = (f"With a {rcvbuf_label} receive buffer (section 7) EWT's written window binds at a far lower "
                      f"queue and its Jain index is {j(rb)}"
                      + (f" (DropTail {j([table.get(sc, 'rcvbuf', lv, 'droptail', 'jain_goodput')[0] for lv in levels])})"  # noqa: E501
                         if "droptail" in methods else "") + ": the gap follows from Wr, which the paper does not "
                      "state, not from EWT's rule. ")
        out.append(head + body + trace_txt + why + rb_txt + "Measured in this report's runs (`runs/`).")
    return out


# --------------------------------------------------------------------------
# Fig. 3 and Fig. 10 with the other receive buffer


def queue_shape(series: dict, st: float, buffer: float, t_from: float) -> dict:
    """Mean, std, the share of time at or below St (EWT idle) and within
    3 kB of B (next to overflow) of a queue series from ``t_from``."""
    b = _after(series["time_s"], series["bytes"], t_from)
    m, sd, _ = _series_stats(b)
    n = len(b) or 1
    return {"mean": m, "std": sd, "idle": sum(x <= st for x in b) / n, "full": sum(x >= buffer - 3000 for x in b) / n}


def fig3_lines(figs: dict, sc: str, st: float, buffer: float, rcvbuf_label: str) -> list[str]:
    """Fig. 3's queue at Wr = 1 MB and at the sensitivity's receive buffer:
    its shape and how often EWT's window held the traced flow."""
    rows, have = [], {}
    for tag, lab in (("fig3", "1 MB"), ("fig3rb", rcvbuf_label)):
        for m, name in (("droptail", "DropTail"), ("ewt", "EWT")):
            r = figs.get((tag, sc, m))
            if not r or not r.get("queue_series"):
                continue
            q = r["queue_series"]
            t_from = 8.0 if q["time_s"] and q["time_s"][-1] > 16.0 else 0.0
            s = queue_shape(q, st, buffer, t_from)
            tr = (r.get("traces") or [{}])[0]
            have[(tag, m)] = s
            rows.append([lab, name, f"{s['mean'] / 1000:.1f}", f"{s['std'] / 1000:.1f}", f"{s['idle']:.2f}",
                         f"{s['full']:.2f}", f"{bound_share(tr):.2f}", _f(r["summary"].get("tcp_data_loss_pct"))])
    if not rows:
        return []
    out = [_md_table(["receive buffer", "method", "mean queue (kB)", "std (kB)", f"share ≤ St ({st / 1000:g} kB)",
                      "share ≥ B − 3 kB", "flow 0 held by EWT's window", "TCP loss %"], rows), ""]
    a, b = have.get(("fig3", "ewt")), have.get(("fig3rb", "ewt"))
    da, db = have.get(("fig3", "droptail")), have.get(("fig3rb", "droptail"))
    if a and b and da and db:
        out += [f"With Wr = 1 MB, EWT's queue std is {a['std'] / 1000:.1f} kB against DropTail's "
                f"{da['std'] / 1000:.1f} kB: the written window (B − U) / B · 1 MB stays above the flows' cwnd until U "
                "is within a few kB of B, so EWT seldom holds a flow and the queue follows CUBIC's cycles. With a "
                f"{rcvbuf_label} receive buffer it is {b['std'] / 1000:.1f} kB against DropTail's "
                f"{db['std'] / 1000:.1f} kB: the statement "
                + ("holds there" if b["std"] < db["std"] else "does not hold there either") + ". (Runs of seed 1, "
                "the paper's 4 flows.)", ""]
    return out


def fig10_lines(figs: dict, rcvbuf_label: str, mss: int) -> list[str]:
    """Fig. 10's window at Wr = 1 MB and at the sensitivity's buffer: CV,
    minimum, the share of time at ≤ 2 segments, how often EWT's window held
    the flow, and the flow's RTOs."""
    rows, cv = [], {}
    for tag, lab in (("fig10", "1 MB"), ("fig10rb", rcvbuf_label)):
        for m, name in (("red", "RED"), ("ewt", "EWT")):
            r = figs.get((tag, "scenario1", m)) or next((v for k, v in figs.items() if k[0] == tag and k[2] == m), None)
            if not r or not r.get("traces"):
                continue
            t = r["traces"][0]
            e = _after(t["time_s"], t["effective"], t["time_s"][0] + 10.0 if t["time_s"] else 0)
            mu, sd, mn = _series_stats(e)
            cv[(tag, m)] = sd / mu if mu else math.nan
            low = sum(x <= 2 * mss for x in e) / (len(e) or 1)
            rto = (r.get("extra") or r.get("flows") or {}).get("timeouts") or [None]
            rows.append([lab, name, f"{cv[(tag, m)]:.2f}", f"{mn / 1000:.1f}", f"{low:.2f}", f"{bound_share(t):.2f}",
                         "-" if rto[0] is None else f"{rto[0]:g}"])
    if not rows:
        return []
    out = [_md_table(["receive buffer", "method", "CV of the effective window", "minimum (kB)",
                      "share ≤ 2 segments", "held by EWT's window", "RTOs of the flow"], rows), ""]
    if all(k in cv for k in (("fig10", "ewt"), ("fig10", "red"), ("fig10rb", "ewt"), ("fig10rb", "red"))):
        out += [f"With Wr = 1 MB, EWT's written window seldom holds the traced flow, so its effective window is its "
                f"cwnd, cut by losses and RTOs like any DropTail flow's: CV {cv[('fig10', 'ewt')]:.2f} against RED's "
                f"{cv[('fig10', 'red')]:.2f}. With a {rcvbuf_label} receive buffer: {cv[('fig10rb', 'ewt')]:.2f} "
                f"against {cv[('fig10rb', 'red')]:.2f}: the oscillation part of the statement "
                + ("holds there" if cv[("fig10rb", "ewt")] < cv[("fig10rb", "red")] else "fails there too")
                + ". (One flow, seed 1, as the paper's figure.)", ""]
    return out


# --------------------------------------------------------------------------
# Fig. 1


def fig1_stats(r: dict) -> dict | None:
    """One Fig. 1 run (three DropTail flows started together): while all
    three were sending, each flow's share of the bytes delivered and its
    median cwnd; the top flow's index; RTOs per flow."""
    tr = r.get("traces") or []
    f = r.get("flows") or r.get("extra") or {}
    if len(tr) < 2 or not f.get("fct_s"):
        return None
    ends = [s + d for s, d in zip(f["start_s"], f["fct_s"]) if s is not None and d is not None]
    if not ends:
        return None
    t_end = min(ends)
    got, cw = [], []
    for t in tr:
        d = [x for ts, x in zip(t["time_s"], t["delivered"]) if ts <= t_end]
        got.append(d[-1] if d else 0.0)
        c = [x for ts, x in zip(t["time_s"], t["cwnd"]) if ts <= t_end]
        cw.append(median(c) if c else math.nan)
    total = sum(got)
    if total <= 0:
        return None
    share = [g / total for g in got]
    top = max(range(len(share)), key=lambda i: share[i])
    return {"share": share, "top": top, "cwnd": cw, "until": t_end, "rto": [f["timeouts"][t["flow"]] for t in tr]}


def fig1_judgement(figs: dict, scenarios: list[str], seeds: int) -> _st.Judgement:
    """The monopoly statement: in how many runs one flow took at least half
    of the bytes delivered while all three were sending (fair: one third)."""
    parts, won, n = [], 0, 0
    for sc in scenarios:
        st = [fig1_stats(figs[k]) for k in sorted(figs, key=str) if k[0] == "fig1" and k[1] == sc]
        st = [s for s in st if s]
        if not st:
            continue
        w = sum(s["share"][s["top"]] >= 0.5 for s in st)
        won += w
        n += len(st)
        tops = [s["share"][s["top"]] for s in st]
        ratio = [s["cwnd"][s["top"]] / median(c for i, c in enumerate(s["cwnd"]) if i != s["top"]) for s in st]
        parts.append(f"{sc}: one flow ≥ 1/2 of the bytes in {w} of {len(st)} runs (top share "
                     f"{' / '.join(f'{x:.2f}' for x in tops)}; its median cwnd {median(ratio):.1f}× the others')")
    if not n:
        return _st.Judgement(_st.NOT_MEASURABLE, "-", "needs DropTail (--methods)")
    v = _st.HOLDS if won == n else _st.FAILS if won == 0 else _st.PARTLY
    return _st.Judgement(v, "; ".join(parts) + f" ({FIG1_FLOWS} DropTail flows started within 0.1 s, seeds 1-{seeds}, "
                         "until the first finished)",
                         "" if v == _st.HOLDS else "the paper's Fig. 1 gives no rates, delays or buffer: run on our "
                         "scenarios; judged per run")
