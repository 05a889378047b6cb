"""The NGWA paper's simulation experiments (the NGWA paper section 3, docs/decisions.md §5.2)
beside its numbers: ``netreturn reproduce ngwa [--seeds 30]
[--out results/reproduce-ngwa]`` writes ``report.md``, ``statements.csv``,
``table2.csv`` and ``figures/fig3_window.png`` (when matplotlib is there).

- Table 2 / Fig. 6: lost packets and triple dupACKs, mean of ``--seeds``
  rounds with 95 % CIs, for RFC 793 TCP, NewReno and modes 1-8; the
  triple dupACKs counted both ways a sender can count them (once per run
  of DupThresh duplicate ACKs, ours; every duplicate ACK from the third of
  a run on), against the paper's numbers.
- Figs. 4-5: per-flow transmission rate of one 10-minute run with 95 % CIs
  by batch means over 30 batches (section 3.2), and Jain's index.
- Fig. 3: the window of the connection that lives throughout, NewReno and
  modes 5-8.
- The calibration: the bottleneck (not in the paper) is the rate at which
  NewReno's losses come nearest Table 2's 328.
- ``--sensitivity``: every statement judged again at the neighbouring
  bottleneck rates and at other bottleneck RTTs (neither is in the paper).

The paper's numbers and statements are in ``paper/ngwa.toml``; every
statement is judged from the report's runs.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..runner import RunSpec, run_many
from ..stats import batch_means_ci, fmt_ci, jain, mean_ci, mean_sd
from . import ngwa_trace as _trace, statements as _st
from .paper import PAPER_DIR

PAPER_FILE = PAPER_DIR / "ngwa.toml"
# The checks this module judges (paper/ngwa.toml explains each).
CHECKS = {"plateau", "steadier", "starts_higher", "jain_lowest", "jain_at_least", "jain_below", "jain_above",
          "pairs_better", "top", "order", "zero", "value", "testbed"}


def load_paper(path: str | Path = PAPER_FILE) -> dict:
    """The NGWA paper's data, checked: ValueError naming the file and field."""
    d = _st.load(path, ("seed_file", "rows", "table2_lost", "fig6_triple_dupacks", "fig3", "fig45"), CHECKS)
    for k in d["fig45"]:
        if k not in d["rows"]:
            raise ValueError(f"{path}: fig45: row {k!r} is not one of {', '.join(d['rows'])}")
    for i, st in enumerate(d["statements"]):
        for k in [st.get("row"), *st.get("rows", []), *st.get("others", []), *sum(st.get("pairs", []), [])]:
            if k is not None and k not in d["rows"]:
                raise ValueError(f"{path}: statements[{i}] ({st['id']}): row {k!r} is not one of "
                                 f"{', '.join(d['rows'])}")
    return d


PAPER = load_paper()

RATE = "ngwa/rate.toml"
WINDOW = "ngwa/window.toml"
# (row name, key in the paper's tables, overrides)
ROWS = [
    ("RFC 793", "rfc793", {"ngwa_mode": 0, "tcp": "none"}),
    ("NewReno", "newreno", {"ngwa_mode": 0, "tcp": "newreno"}),
] + [(f"mode {m}", f"mode{m}", {"ngwa_mode": m}) for m in range(1, 9)]
CALIBRATION = ["1.2Mbps", "1.5Mbps", "1.8Mbps", "2.0Mbps", "2.2Mbps"]
# The bottleneck's round-trip time: the scenarios' (ours, not the paper's)
# first, then the sensitivity's.
RTTS = ["40ms", "20ms", "80ms"]


def _many(jobs: list[tuple[str, int, dict]], workers: int, out: Path | None = None, series: bool = False) -> list[dict]:
    """The runs (scenario, seed, overrides) through the project's runner, in
    order: in parallel, with a progress bar, and kept under ``out/runs``
    (resumable) when ``out`` is given. Runs whose time series are needed
    (``series``) are not stored: a 10-minute trace is tens of MB of JSON."""
    specs = [RunSpec.make(sc, {k: str(v) for k, v in ov.items()}, seed, keep_series=series) for sc, seed, ov in jobs]
    return run_many(specs, jobs=workers, out=None if series else out)


def flow_rates(trace: dict, batches: int = 30, t0: float = 0.0) -> tuple[float, float, int]:
    """A flow's transmission rate (bytes/s) by batch means: the delivered
    bytes of each sampling interval over its length, from ``t0`` on."""
    t, d = trace["time_s"], trace["delivered"]
    rates = [(d[i] - d[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(t)) if t[i - 1] >= t0 and t[i] > t[i - 1]]
    return batch_means_ci(rates, batches)


def _network(bottleneck: str | None, rtt: str | None = None, shrink: bool = False) -> dict:
    """The overrides of the bottleneck's rate and RTT (None: the scenario's)
    and, with ``shrink``, a receiver that may move its window's right edge
    left (``tcp.shrink_window``; ours keeps RFC 9293 section 3.8.6.2.2's
    edge)."""
    return {**({"bottleneck_rate": bottleneck} if bottleneck else {}), **({"bottleneck_rtt": rtt} if rtt else {}),
            **({"tcp.shrink_window": "true"} if shrink else {})}


def losses_table(seeds: int, workers: int, bottleneck: str | None, out: Path | None = None, rtt: str | None = None,
                 shrink: bool = False) -> tuple[list[str], dict[str, dict[str, tuple[float, float, int]]]]:
    """Table 2 and Fig. 6 at ``bottleneck`` (and ``rtt``): the report's
    lines, and per row key the mean, 95 % CI and n of ``lost``,
    ``triple_dupacks`` (once per run of DupThresh duplicate ACKs),
    ``past`` (every duplicate ACK from the DupThresh-th of a run on),
    ``timeouts`` and ``jain``."""
    extra = _network(bottleneck, rtt, shrink)
    jobs = [(RATE, s, {**ov, **extra}) for _, _, ov in ROWS for s in range(1, seeds + 1)]
    res = _many(jobs, workers, out)
    lines = [
        "| test | lost packets (ours) | paper (Table 2) | triple dupACKs (ours) | paper (Fig. 6) | timeouts | Jain (goodput) |",  # noqa: E501
        "|---|---|---|---|---|---|---|",
    ]
    stats = {}
    for i, (name, key, _) in enumerate(ROWS):
        rs = res[i * seeds:(i + 1) * seeds]
        st = {k: mean_ci(r["summary"][col] for r in rs) for k, col in
              (("lost", "lost_packets"), ("triple_dupacks", "triple_dupacks"), ("past", "dupacks_past_threshold"),
               ("timeouts", "timeouts"), ("jain", "jain_goodput"))}
        stats[key] = st
        p_lost = PAPER["table2_lost"].get(key, "-")
        p_tri = PAPER["fig6_triple_dupacks"].get(key, "highest")
        lost, tri, to, jn = st["lost"], st["triple_dupacks"], st["timeouts"], st["jain"]
        lines.append(
            f"| {name} | {fmt_ci(lost[0], lost[1], 4)} | {p_lost} | {fmt_ci(tri[0], tri[1], 4)} | {p_tri} | {fmt_ci(to[0], to[1], 3)} | {fmt_ci(jn[0], jn[1], 3)} |"  # noqa: E501
        )
    return lines, stats


def rates_table(workers: int, extra: dict | None = None) -> tuple[list[str], dict[str, float], dict[str, dict]]:
    """Figs. 4-5: per-flow rates of one 10-minute run (``extra``: overrides
    of the network); the lines, Jain's index of the four rates, and the four
    mean rates (bytes/s) and timeouts by flow (``rates``, ``timeouts``), per
    row key."""
    res = _many([(RATE, 1, {**ov, **(extra or {})}) for _, _, ov in ROWS], workers, series=True)
    lines = [
        "| test | flow 1 | flow 2 | flow 3 | flow 4 (bytes/s, 95 % CI by 30 batch means) | Jain |",
        "|---|---|---|---|---|---|",
    ]
    jains, rates = {}, {}
    for (name, key, _), r in zip(ROWS, res):
        cells, means = [], []
        for tr in sorted(r["traces"], key=lambda x: x["flow"]):
            m, h, _ = flow_rates(tr, 30, t0=1.0)
            means.append(m)
            cells.append(fmt_ci(m, h, 5))
        jains[key] = jain(means)
        rates[key] = {"rates": means, "timeouts": list(r["flows"]["timeouts"][:len(means)])}
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {jains[key]:.4f} |")
    return lines, jains, rates


WINDOW_ROWS = [("NewReno", "newreno", {"ngwa_mode": 0})] + [(f"mode {m}", f"mode{m}", {"ngwa_mode": m})
                                                            for m in (5, 6, 7, 8)]


def span(trace: tuple[list[float], list[float]], a: float, b: float) -> tuple[float, float]:
    """Mean and standard deviation of a window trace over [a, b) seconds."""
    t, w = trace
    return mean_sd(x for ti, x in zip(t, w) if a <= ti < b)


def window_figure(out: Path | None, workers: int, extra: dict | None = None
                  ) -> tuple[list[str], dict[str, tuple[list[float], list[float]]]]:
    """Fig. 3: the lines, and the effective window (time, bytes) of the
    connection active throughout per row key (``extra``: overrides of the
    network; ``out`` None: no figure)."""
    res = _many([(WINDOW, 1, {**ov, **(extra or {})}) for _, _, ov in WINDOW_ROWS], workers, series=True)
    lines = [
        "| test | mean effective window 0-45 s | 60-120 s | 121-180 s | std 60-120 s | lost packets |",
        "|---|---|---|---|---|---|",
    ]
    traces = {}
    for (name, key, _), r in zip(WINDOW_ROWS, res):
        tr = r["traces"][0]
        traces[key] = (tr["time_s"], tr["effective"])
        a, b, c = span(traces[key], 0, 45), span(traces[key], 60, 120), span(traces[key], 121, 180)
        lines.append(
            f"| {name} | {a[0]:.0f} | {b[0]:.0f} | {c[0]:.0f} | {b[1]:.0f} | {r['summary']['lost_packets']:.0f} |"
        )
    if out is None:
        return lines, traces
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4))
        for (name, key, _) in WINDOW_ROWS:
            ax.plot(*traces[key], label=name, lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("effective window min(cwnd, rwnd) (bytes)")
        ax.set_title("the NGWA paper Fig. 3: the connection active throughout")
        ax.legend()
        (out / "figures").mkdir(exist_ok=True)
        fig.savefig(out / "figures" / "fig3_window.png", dpi=120, bbox_inches="tight")
        plt.close(fig)
        lines += ["", "![Fig. 3](figures/fig3_window.png)"]
    except ImportError:
        pass
    return lines, traces


def calibration(seeds: int, workers: int, out: Path | None = None) -> tuple[str, list[str]]:
    """NewReno's losses per bottleneck rate; the nearest to Table 2's."""
    target = PAPER["table2_lost"]["newreno"]
    jobs = [
        (RATE, s, {"ngwa_mode": 0, "tcp": "newreno", "bottleneck_rate": b})
        for b in CALIBRATION
        for s in range(1, seeds + 1)
    ]
    res = _many(jobs, workers, out)
    lines = ["| bottleneck | NewReno lost packets (mean ± 95 % CI) |", "|---|---|"]
    best, best_d = CALIBRATION[0], math.inf
    for i, b in enumerate(CALIBRATION):
        m, h, _ = mean_ci(r["summary"]["lost_packets"] for r in res[i * seeds:(i + 1) * seeds])
        lines.append(f"| {b} | {fmt_ci(m, h, 4)} |")
        if abs(m - target) < best_d:
            best, best_d = b, abs(m - target)
    return best, lines


# --------------------------------------------------------------------------
# the statements, judged

LABEL = {key: name for name, key, _ in ROWS}


def judge(st: dict, loss: dict, jains: dict[str, float], traces: dict) -> _st.Judgement:
    """One statement of ``paper/ngwa.toml`` from this report's runs:
    ``loss`` from :func:`losses_table`, ``jains`` from :func:`rates_table`,
    ``traces`` from :func:`window_figure`."""
    c = st["check"]
    H, P, F = _st.HOLDS, _st.PARTLY, _st.FAILS

    def verdict(ok: int, n: int) -> str:
        return H if ok == n else F if ok == 0 else P

    if c == "testbed":
        return _st.Judgement(_st.NOT_MEASURABLE, "-", "section 4 runs Linux hosts with iperf through a real NGWA "
                             "router; this reproduction simulates section 3 only")
    if c in ("plateau", "steadier", "starts_higher"):
        if c == "plateau":
            f = PAPER["fig3"]
            got = {k: span(traces[k], f["plateau_from_s"], f["plateau_to_s"])[0] for k in st["rows"]}
            ok = sum(abs(x - f["plateau_bytes"]) <= st["tolerance"] * f["plateau_bytes"] for x in got.values())
            return _st.Judgement(verdict(ok, len(got)), f"mean window {f['plateau_from_s']}-{f['plateau_to_s']} s: "
                                 + ", ".join(f"{LABEL[k]} {x:.0f} B" for k, x in got.items())
                                 + f" (paper {f['plateau_bytes']} B, ±{st['tolerance'] * 100:.0f} %)")
        if c == "steadier":
            sd = {k: span(traces[k], st["from_s"], st["to_s"])[1] for k in ["newreno", *st["rows"]]}
            ok = sum(sd[k] < sd["newreno"] for k in st["rows"])
            return _st.Judgement(verdict(ok, len(st["rows"])), f"window std {st['from_s']}-{st['to_s']} s: "
                                 + ", ".join(f"{LABEL[k]} {x:.0f} B" for k, x in sd.items()))
        m = {k: span(traces[k], 0, st["to_s"])[0] for k in st["rows"] + st["others"]}
        ok = sum(all(m[k] > m[o] for o in st["others"]) for k in st["rows"])
        return _st.Judgement(verdict(ok, len(st["rows"])), f"mean window 0-{st['to_s']} s: "
                             + ", ".join(f"{LABEL[k]} {x:.0f} B" for k, x in m.items()))
    if c.startswith("jain"):
        measured = "Jain of the four flows' rates: " + ", ".join(f"{LABEL[k]} {x:.3f}" for k, x in jains.items())
        if c == "jain_lowest":
            low = min(jains, key=jains.get)
            return _st.Judgement(H if low == st["row"] else F, measured, "" if low == st["row"] else
                                 f"{LABEL[low]} is the lowest")
        if c == "jain_at_least":
            ok = sum(jains[k] >= st["min"] for k in st["rows"])
            return _st.Judgement(verdict(ok, len(st["rows"])), measured + f" (read as at least {st['min']})")
        below = c == "jain_below"
        ok = sum(all((jains[k] < jains[o]) if below else (jains[k] > jains[o]) for o in st["others"])
                 for k in st["rows"])
        return _st.Judgement(verdict(ok, len(st["rows"])), measured)
    metric = st["metric"]
    if metric == "jain":
        vals = {k: (x, 0.0, 1) for k, x in jains.items()}
    else:
        vals = {k: v[metric] for k, v in loss.items()}
    show = lambda keys: ", ".join(f"{LABEL[k]} {fmt_ci(vals[k][0], vals[k][1], 4)}" for k in keys)  # noqa: E731
    if c == "pairs_better":
        better = (lambda a, b: a > b) if metric == "jain" else (lambda a, b: a < b)
        ok = sum(better(vals[a][0], vals[b][0]) for a, b in st["pairs"])
        return _st.Judgement(verdict(ok, len(st["pairs"])), f"{metric}: " + show([k for pr in st["pairs"] for k in pr]))
    if c == "top":
        order = sorted(vals, key=lambda k: -vals[k][0])
        top = set(order[:len(st["rows"])])
        ok = len(top & set(st["rows"]))
        return _st.Judgement(verdict(ok, len(st["rows"])), f"{metric}, highest first: " + show(order[:4]))
    if c == "order":
        xs = [vals[k][0] for k in st["rows"]]
        inv = sum(1 for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[i] <= xs[j])
        pairs = len(xs) * (len(xs) - 1) // 2
        v = H if inv == 0 else F if inv == pairs else P
        return _st.Judgement(v, f"{metric}: " + show(st["rows"]),
                             "" if v == H else f"{inv} of {pairs} pairs out of the stated order")
    if c == "zero":
        ok = sum(vals[k][0] < 0.5 for k in st["rows"])
        return _st.Judgement(verdict(ok, len(st["rows"])), f"{metric}: " + show(st["rows"]))
    if c == "value":
        x, h, _ = vals[st["row"]]
        p = float(st["paper"])
        ok = x < 0.5 if p == 0 else abs(x - p) <= st["tolerance"] * p
        v = H if ok else (P if p and x > 0.5 and abs(x - p) <= 2 * st["tolerance"] * p else F)
        return _st.Judgement(v, f"{LABEL[st['row']]} {fmt_ci(x, h, 4)} (paper {st['paper']})",
                             "" if ok else "the bottleneck's rate and RTT are not given by the paper: "
                             "`--sensitivity` measures whether either brings this count to the paper's (docs/ngwa.md, "
                             "\"Sensitivity\")")
    raise ValueError(f"{PAPER_FILE}: unknown check {c!r}")


# --------------------------------------------------------------------------
# Figs. 4-6 beside the paper


def per_dupack(loss: dict[str, dict]) -> dict[str, dict]:
    """``loss`` with the triple dupACKs counted per duplicate ACK (every one
    from the DupThresh-th of a run on) instead of once per run."""
    return {k: {**v, "triple_dupacks": v["past"]} for k, v in loss.items()}


def dupack_lines(loss: dict[str, dict]) -> list[str]:
    """Fig. 6: how each side counts triple dupACKs, both our counts beside
    the paper's, per lost packet, and which counting the paper's own
    numbers allow."""
    p_tri, p_lost = PAPER["fig6_triple_dupacks"], PAPER["table2_lost"]
    top = max(p_tri.values())
    L = ["| test | lost packets, ours | once per run, ours | per dupACK from the 3rd, ours | Fig. 6 | Table 2 | "
         "per lost packet: per run / per dupACK / paper |", "|---|---|---|---|---|---|---|"]
    ratios: dict[str, tuple[float, float, float]] = {}
    for name, key, _ in ROWS:
        lost, run, past = (loss[key][m][0] for m in ("lost", "triple_dupacks", "past"))
        ours = [f"{x / lost:.2f}" if lost >= 0.5 else "-" for x in (run, past)]
        if key in p_tri and p_lost.get(key):
            paper = f"{p_tri[key] / p_lost[key]:.2f}"
            if lost >= 0.5:
                ratios[key] = (run / lost, past / lost, p_tri[key] / p_lost[key])
        elif key not in p_tri and p_lost.get(key):
            paper = f"> {top / p_lost[key]:.1f}"  # "the highest": above mode 3's
        else:
            paper = "-"
        L.append(f"| {name} | {fmt_ci(*loss[key]['lost'][:2], 4)} | {fmt_ci(*loss[key]['triple_dupacks'][:2], 4)} | "
                 f"{fmt_ci(*loss[key]['past'][:2], 4)} | {p_tri.get(key, 'highest')} | {p_lost.get(key, '-')} | "
                 f"{ours[0]} / {ours[1]} / {paper} |")
    run_max = max((loss[k]["triple_dupacks"][0] / loss[k]["lost"][0] for _, k, _ in ROWS if loss[k]["lost"][0] >= 1),
                  default=math.nan)
    newreno_floor = top / p_lost["newreno"]

    def off(i: int) -> float:
        """Mean distance (in factors, log scale) of our per-lost-packet
        ratios from the paper's over the rows it gives numbers for."""
        xs = [abs(math.log(r[i] / r[2])) for r in ratios.values() if r[i] > 0]
        return math.exp(sum(xs) / len(xs)) if xs else math.nan

    f_run, f_past = off(0), off(1)
    more = [(k, loss[k]["lost"][0] / p_lost[k]) for _, k, _ in ROWS if p_lost.get(k)]
    order = sorted((k for _, k, _ in ROWS), key=lambda k: -loss[k]["past"][0])
    return [
        "Ours (`triple_dupacks`): one event per run of DupThresh (3) duplicate ACKs, counted at the sender when the "
        "third arrives, whether or not fast retransmit follows (`crates/tcp/src/connection/recovery.rs`). The "
        "paper's ns-3 (2012) sender passes every duplicate ACK to its congestion control as "
        "`DupAck (header, ++m_dupAckCount)`, any window, the count reset only by a new ACK; its RFC 793 TCP does "
        "nothing with them, so the paper's count was its own, and it does not say where it kept it. A counter at "
        "`count == 3` gives ours; one at `count >= 3` counts every duplicate ACK from the third of a run on "
        "(`dupacks_past_threshold`: a run of n gives n - 2). Both from the same runs (mean ± 95 % CI):", "", *L, "",
        f"The paper's own numbers decide: NewReno's triple dupACKs are among \"the highest\", above mode 3's {top}, "
        f"with {p_lost['newreno']} lost packets (Table 2): more than {newreno_floor:.1f} per lost packet. Counted once "
        "per run, a run needs a hole in the data, so there are hardly more runs than lost packets (ours: at most "
        f"{run_max:.2f} per lost packet in any row); counted per dupACK, each loss gives as many as the segments sent "
        "behind it. Over the rows the text gives numbers for (modes 1, 3, 4), our per-run count per lost packet is "
        f"{f_run:.1f} times off the paper's on average, the per-dupACK count {f_past:.1f} times: the paper's numbers "
        f"fit a count {'per duplicate ACK' if f_past < f_run else 'once per run'} better. Per dupACK, "
        "ours rank the rows " + " > ".join(LABEL[k] for k in order if loss[k]["past"][0] >= 0.5)
        + " (the paper: RFC 793 and NewReno highest, then mode 3, mode 4, mode 1; modes 2 and 5-8 none). The rest "
        "of the gap is in the losses themselves: ours lose " + ", ".join(f"{x:.1f} times the paper's in {LABEL[k]}"
                                                                       for k, x in more) + " (Table 2).",
    ]


def fig45_lines(jains: dict[str, float], flows: dict[str, dict]) -> list[str]:
    """Figs. 4-5 beside the paper's words (``paper.fig45``): Jain's index
    and the slowest flow's share of the fastest, and RFC 793's flows."""
    L = ["| test | the paper (section 3.2) | Jain, ours | slowest / fastest flow, ours |", "|---|---|---|---|"]
    for name, key, _ in ROWS:
        r = flows[key]["rates"]
        L.append(f"| {name} | {PAPER['fig45'].get(key, '-')} | {jains[key]:.3f} | {min(r) / max(r) * 100:.0f} % |")
    low = min(jains, key=jains.get)
    r, to = flows["rfc793"]["rates"], flows["rfc793"]["timeouts"]
    share = [x / sum(r) * 100 for x in r]
    capture = min(share) < 10
    return L + ["", f"Lowest Jain here: {LABEL[low]} ({jains[low]:.3f})"
                + ("" if low == "rfc793" else f"; RFC 793's {jains['rfc793']:.3f}") + ". In our "
                "RFC 793 run flows 1-4 get " + ", ".join(f"{x:.0f}" for x in share) + " % of the delivered bytes "
                "and time out " + ", ".join(f"{x:.0f}" for x in to) + " times: "
                + ("two flows starve, as the paper's flows 1 and 3." if capture else
                   "every flow keeps a share; no pair of flows captures the link, as the paper's flows 2 and 4 do "
                   "(one 10-minute run each, as the paper's).")]


def fig3_line(traces: dict) -> str:
    f = PAPER["fig3"]
    got = {k: span(traces[k], f["plateau_from_s"], f["plateau_to_s"])[0] for k in traces if k != "newreno"}
    return (f"The paper: modes 5-8 settle near {f['plateau_bytes']} B from about {f['plateau_from_s']} s; ours, mean "
            f"window {f['plateau_from_s']}-{f['plateau_to_s']} s: " + ", ".join(f"{LABEL[k]} {x:.0f} B"
                                                                                for k, x in got.items()) + ".")


def judge_all(loss: dict, jains: dict[str, float], traces: dict, quick: bool) -> dict[str, _st.Judgement]:
    return {st["id"]: _st.for_quick(st, judge(st, loss, jains, traces), quick) for st in PAPER["statements"]}


def value_reasons(judged: dict[str, _st.Judgement], losses: dict[str, dict], per_dup: bool = False
                  ) -> dict[str, _st.Judgement]:
    """``judged`` with the reason of every ``value`` statement that does not
    hold computed from the sensitivity's runs (``losses``: setting label ->
    :func:`losses_table`'s stats, ours first): how far the unstated rate,
    RTT and receiver's edge move the count, and whether any setting brings
    it within the statement's tolerance of the paper's. ``per_dup``: Fig.
    6's counts per duplicate ACK (:func:`per_dupack`)."""
    out = dict(judged)
    # A setting where the calibration's row (NewReno) loses nothing is not
    # congested at all (the bottleneck above the offered load): not the
    # paper's regime, whose NewReno lost 328 packets.
    calm = _calm(losses)
    for st in PAPER["statements"]:
        j = judged.get(st["id"])
        if st["check"] != "value" or j is None or j.verdict in (_st.HOLDS, _st.NOT_MEASURABLE):
            continue
        metric = "past" if per_dup and st["metric"] == "triple_dupacks" else st["metric"]
        xs = {lab: v[st["row"]][metric][0] for lab, v in losses.items() if st["row"] in v and lab not in calm}
        if len(xs) < 2:
            continue
        p, tol = float(st["paper"]), float(st["tolerance"])
        off = {lab: (0.0 if x < 0.5 else math.inf) if p == 0 else abs(x - p) / p for lab, x in xs.items()}
        near = [lab for lab, d in off.items() if d <= tol]
        part = [lab for lab, d in off.items() if tol < d <= 2 * tol]
        lo, hi = min(xs, key=xs.get), max(xs, key=xs.get)
        why = (f"the bottleneck's rate and RTT and the receiver's edge are not given by the paper; over the "
               f"{len(xs)} congested settings of the sensitivity section ours runs from {xs[lo]:.4g} ({lo}) to "
               f"{xs[hi]:.4g} ({hi}), paper {st['paper']}"
               + (f" ({', '.join(calm)} left out: NewReno loses nothing there)" if calm else "") + ": ")
        if near:
            why += f"within ±{tol * 100:.0f} % at {', '.join(near)}"
        elif part:
            why += f"within ±{2 * tol * 100:.0f} % (partly) at {', '.join(part)}, within ±{tol * 100:.0f} % nowhere"
        else:
            why += (f"no setting brings it within ±{2 * tol * 100:.0f} %, so these unstated settings do not explain "
                    "the difference")
        out[st["id"]] = _st.Judgement(j.verdict, j.measured, why)
    return out


def _calm(losses: dict[str, dict]) -> list[str]:
    """The settings without congestion: NewReno, the calibration's row,
    loses nothing there (the bottleneck above the offered load)."""
    return [lab for lab, v in losses.items() if "newreno" in v and v["newreno"]["lost"][0] < 0.5]


def setting_reasons(judged: dict[str, _st.Judgement], cols: dict[str, dict[str, _st.Judgement]],
                    losses: dict[str, dict]) -> dict[str, _st.Judgement]:
    """``judged`` with a reason for every statement that does not hold and
    has none yet: at which of the sensitivity's congested settings
    (``cols``, ours first; ``losses`` tells which are congested) it holds,
    or that it holds at none, so the unstated settings do not explain it."""
    out = dict(judged)
    calm = set(_calm(losses))
    others = {lab: col for lab, col in list(cols.items())[1:] if lab not in calm}
    if not others:
        return out
    for sid, j in judged.items():
        if j.verdict not in (_st.PARTLY, _st.FAILS) or j.why:
            continue
        held = [lab for lab, col in others.items() if sid in col and col[sid].verdict == _st.HOLDS]
        part = [lab for lab, col in others.items() if sid in col and col[sid].verdict == _st.PARTLY]
        why = (f"the bottleneck's rate and RTT and the receiver's edge are not given by the paper; of the "
               f"{len(others)} other congested settings of the sensitivity section"
               + (f" ({', '.join(sorted(calm))} left out: NewReno loses nothing there)" if calm else "") + ", ")
        if held:
            why += f"it holds at {', '.join(held)}"
        elif part:
            why += f"it holds at none and partly at {', '.join(part)}"
        else:
            why += "it holds at none, so these unstated settings do not explain the difference"
        out[sid] = _st.Judgement(j.verdict, j.measured, why)
    return out


def sensitivity_settings(best: str) -> list[tuple[str, str, str, bool]]:
    """(label, bottleneck rate, RTT, receiver may shrink) of every setting
    the sensitivity section runs besides ours (``best`` at ``RTTS[0]``)."""
    out = ([(b, RTTS[0], False) for b in CALIBRATION if b != best] + [(best, rtt, False) for rtt in RTTS[1:]]
           + [(best, RTTS[0], True)])
    return [(f"{b}, {rtt}" + (", receiver may shrink" if shrink else ""), b, rtt, shrink) for b, rtt, shrink in out]


def sensitivity(a: argparse.Namespace, best: str, ours: dict[str, _st.Judgement], out: Path
                ) -> tuple[list[str], dict[str, dict[str, _st.Judgement]], dict[str, dict]]:
    """Every statement judged again at the neighbouring bottleneck rates
    (ours: ``best``) and at the other bottleneck RTTs (``RTTS``); the
    lines, the verdicts per setting and Table 2's stats per setting."""
    seeds = max(3, a.seeds // 3)
    cols = {f"{best}, {RTTS[0]} (ours)": ours}
    values: dict[str, dict] = {}
    tables: list[str] = []
    for label, b, rtt, shrink in sensitivity_settings(best):
        t2, loss = losses_table(seeds, a.jobs, b, out, rtt, shrink)
        _, jains, _ = rates_table(a.jobs, _network(b, rtt, shrink))
        _, traces = window_figure(None, a.jobs, _network(b, rtt, shrink))
        cols[label] = judge_all(loss, jains, traces, a.quick)
        values[label] = loss
        tables += [f"### Table 2 and Fig. 6 at {label.replace(', ', ', RTT ', 1)} ({seeds} rounds)", "", *t2, ""]
    L = ["## Sensitivity: the bottleneck's rate and RTT, and the receiver's right edge (none is in the paper)", "",
         f"Every statement judged again with the bottleneck at each rate of the calibration and at RTTs "
         f"{', '.join(RTTS[1:])} (ours {RTTS[0]}), and with a receiver that may shrink its window "
         "(`tcp.shrink_window = true`: it advertises min(Wb, Wmax, Wngwa) at once, moving its right edge left, "
         "which RFC 9293 section 3.8.6.2.2 says it SHOULD NOT do and ours does not by default; data inside an edge "
         f"it offered before is still accepted); Table 2 on {seeds} rounds at each, Figs. 3-5 one run each "
         "(docs/ngwa.md).", "",
         "| id | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    moved = []
    for st in PAPER["statements"]:
        vs = [cols[c][st["id"]].verdict for c in cols]
        if len(set(vs)) > 1:
            moved.append(st["id"])
        L.append(f"| {st['id'] if len(set(vs)) == 1 else '**' + st['id'] + '** (moves)'} | " + " | ".join(vs) + " |")
    L += ["", f"{len(moved)} of {len(PAPER['statements'])} verdicts move with the bottleneck or the receiver's edge"
          + (": " + ", ".join(moved) + "." if moved else "."), "", *tables]
    return L, cols, values


#: The rows Table 2 reports without a single lost packet: where ours lose
#: some, one round is traced (:mod:`.ngwa_trace`).
ZERO_ROWS = [key for _, key, _ in ROWS if PAPER["table2_lost"].get(key) == 0]


def traced_losses(seeds: int, workers: int, out: Path, settings: list[tuple[str, str | None, str | None, bool]]
                  ) -> list[_trace.Trace]:
    """For every setting (label, bottleneck, RTT, receiver may shrink) and
    every row of :data:`ZERO_ROWS` that lost packets in its Table 2 runs
    (the stored ones of :func:`losses_table`, ``seeds`` rounds), the round
    with the most losses traced packet by packet; each trace's drops in
    ``out/trace/<row>_<setting>/drops.csv``."""
    import csv

    found = []
    for label, b, rtt, shrink in settings:
        extra = _network(b, rtt, shrink)
        for _, key, ov in ROWS:
            if key not in ZERO_ROWS:
                continue
            res = _many([(RATE, s, {**ov, **extra}) for s in range(1, seeds + 1)], workers, out)
            lost = [float(r["summary"]["lost_packets"]) for r in res]
            if not _trace.lossy(lost):
                continue
            seed, _ = _trace.worst_round(lost)
            where = out / "trace" / "".join(c if c.isalnum() or c in ".-" else "_" for c in f"{key}_{label}")
            t = _trace.trace(RATE, {**ov, **extra}, seed, where, key, label, seeds)
            with open(where / "drops.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["time_s", "flow", "flight_sum_bytes", "window_sum_bytes", "path_bytes",
                            "windows_bytes", "edge_age_s"])
                for (tt, fl), fs, ws, we, ea in zip(t.drops, t.flight_sum, t.window_sum, t.window_each,
                                                    t.edge_age):
                    w.writerow([f"{tt:.6f}", fl, f"{fs:.0f}", f"{ws:.0f}", f"{t.path_bytes:.0f}",
                                " ".join(f"{x:.0f}" for x in we), " ".join(f"{x:.3f}" for x in ea)])
            found.append(t)
    return found


def trace_lines(traces: list[_trace.Trace]) -> list[str]:
    """The report's section on the traced losses."""
    L = ["## The few losses of rows Table 2 reports lossless, traced", "",
         f"Rows with 0 lost packets in Table 2 ({', '.join(LABEL[k] for k in ZERO_ROWS)}): wherever ours lose some, "
         "the round with the most losses is run again with pcap captures of every sender's access link, the "
         "bottleneck and the ACK path (a segment entering R1 that never leaves on the bottleneck was dropped "
         "there), and, once more, with a receiver that may take offered space back (`tcp.shrink_window`). The "
         "drops with what the senders had in flight and what their receivers offered: "
         "`trace/<row>_<setting>/drops.csv`.", ""]
    if not traces:
        return L + ["None of them lost a packet in this report's runs: nothing to trace.", ""]
    for t in traces:
        L.append(f"* **{LABEL[t.row]} at {t.setting}**: {_trace.describe(t)}.")
    return L + [""]


def trace_reasons(judged: dict[str, _st.Judgement], traces: list[_trace.Trace], ours: str
                  ) -> dict[str, _st.Judgement]:
    """``judged`` with the trace of our setting (label ``ours``) added to
    the reason of every loss or dupACK statement about a traced row that
    does not hold."""
    mine = {t.row: t for t in traces if t.setting == ours}
    out = dict(judged)
    for st in PAPER["statements"]:
        j = judged.get(st["id"])
        rows = [k for k in [st.get("row"), *st.get("rows", [])] if k in mine]
        if j is None or j.verdict not in (_st.PARTLY, _st.FAILS) or st.get("metric") not in ("lost", "triple_dupacks") \
                or not rows:
            continue
        why = "; ".join(f"{LABEL[k]}: {_trace.short(mine[k])}" for k in rows)
        out[st["id"]] = _st.Judgement(j.verdict, j.measured, (j.why + ". " if j.why else "") + why
                                      + " (section \"The few losses of rows Table 2 reports lossless, traced\")")
    return out


def main(a: argparse.Namespace) -> int:
    """``netreturn reproduce ngwa`` (options: :mod:`.commands`)."""
    a.seeds = a.seeds or (3 if a.quick else 30)
    if a.out is None:
        a.out = Path("results") / "reproduce-ngwa"
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(exist_ok=True)
    best, cal = calibration(max(3, a.seeds // 3), a.jobs, out)
    t2_lines, loss = losses_table(a.seeds, a.jobs, best, out)
    doc = [
        "# NGWA reproduced",
        "",
        f"Paper: {PAPER['title']} (docs/bibliography.md); its numbers and statements are in "
        "`python/netreturn/paper/ngwa.toml`.",
        "",
        f"* command: `netreturn reproduce ngwa{' --quick' if a.quick else ''} --seeds {a.seeds}"
        f"{' --sensitivity' if a.sensitivity else ''} --out {out}`",
        f"* rounds 1..{a.seeds} per row of Table 2 (the paper: 30); Figs. 3-5 one run each, as the paper's",
        "",
    ]
    if a.quick:
        doc += [f"**`--quick`: a smoke test, not a reproduction** ({a.seeds} rounds per Table 2 row, the "
                f"calibration on {max(3, a.seeds // 3)}).", ""]
    rate_lines, jains, flows = rates_table(a.jobs)
    win_lines, traces = window_figure(out, a.jobs)
    judged = judge_all(loss, jains, traces, a.quick)
    # Fig. 6's statements again with the other counting of triple dupACKs.
    past = {st["id"]: _st.for_quick(st, judge(st, per_dupack(loss), jains, traces), a.quick)
            for st in PAPER["statements"] if st.get("metric") == "triple_dupacks"}
    sens, sens_cols, sens_values = sensitivity(a, best, judged, out) if a.sensitivity else ([], {}, {})
    ours = f"{best}, {RTTS[0]} (ours)"
    if sens_values:
        values = {ours: loss, **sens_values}
        judged, past = value_reasons(judged, values), value_reasons(past, values, per_dup=True)
        judged = setting_reasons(judged, sens_cols, values)
    dropped = traced_losses(a.seeds, a.jobs, out, [(ours, best, None, False)])
    if a.sensitivity:
        dropped += traced_losses(max(3, a.seeds // 3), a.jobs, out, sensitivity_settings(best))
    judged, past = trace_reasons(judged, dropped, ours), trace_reasons(past, dropped, ours)
    columns = {"this report's runs": judged, "triple dupACKs counted per dupACK": past}
    doc += _st.section("## The paper's statements, judged", PAPER["statements"], columns, a.quick)
    doc += ["The second column judges Fig. 6's statements again with every duplicate ACK from the third of a run "
            "counted (ns-3's `DupAck` at `count >= 3`) instead of one per run: see \"Fig. 6: how each side counts "
            "triple dupACKs\". The tally counts the first.", ""]
    _st.write(out, PAPER["statements"], {**columns, **{c: j for c, j in list(sens_cols.items())[1:]}})
    _write_table2(out / "table2.csv", loss, best)
    doc += [
        "## Calibration of the bottleneck (not given in the paper)",
        "",
        f"NewReno's lost packets against Table 2's {PAPER['table2_lost']['newreno']}; nearest: **{best}** (the "
        f"scenario's default is {_scenario_default('bottleneck_rate')}).",
        "",
        *cal,
        "",
        f"## Table 2 and Fig. 6 at {best} ({a.seeds} rounds)",
        "",
        *t2_lines,
        "",
        "## Fig. 6: how each side counts triple dupACKs",
        "",
        *dupack_lines(loss),
        "",
        "## Figs. 4-5: per-flow transmission rate (one 10-minute run, batch means)", "", *rate_lines, "",
        "### Figs. 4-5 beside the paper", "", *fig45_lines(jains, flows), "",
        "## Fig. 3: window behaviour (flow 1, active throughout)", "", fig3_line(traces), "", *win_lines, "",
        *trace_lines(dropped),
        *sens,
        "## Files", "", "`statements.csv`, `table2.csv`, `figures/fig3_window.png`; the Table 2 runs under "
        "`runs/` (a rerun reuses them); the traced losses under `trace/`.", "",
    ]
    (out / "report.md").write_text("\n".join(doc))
    print("\n".join(doc))
    return 0


def _scenario_default(param: str) -> str:
    """A parameter of the Table 2 scenario as its file sets it."""
    from ..scenarios import load

    return str(load(RATE)["params"][param])


def _write_table2(path: Path, loss: dict, bottleneck: str) -> None:
    import pandas as pd

    from ..files import write_frame_csv

    write_frame_csv(pd.DataFrame([
        {"row": k, "bottleneck_rate": bottleneck, **{f"{m}_{part}": v[m][i] for m in v for i, part in
                                                    enumerate(("mean", "ci95", "n"))},
         "paper_lost": PAPER["table2_lost"].get(k), "paper_triple_dupacks": PAPER["fig6_triple_dupacks"].get(k)}
        for k, v in loss.items()]), path)
