"""The SARBE paper (SARBE + LDED, Le Tuan Anh and Hong, ICCS 2005) reproduced:
``netreturn reproduce sarbe``.

Experiments (docs/decisions.md §5.5, scenarios under ``scenarios/sarbe/``):

- ``tracking``: Fig. 2a, the estimates of SARBE, the original Westwood (the
  paper's comparator, per-ACK samples) and Westwood+ against the available
  bandwidth while a CBR changes its rate;
- ``ack_compression``: Fig. 2b, the same with a reverse FTP from 30 to 120 s;
- ``lossy``: Fig. 3b, goodput of Reno, NewReno, Westwood, Westwood+ and
  SARBE vs the wireless hop's loss rate;
- ``cwnd``: Fig. 4, cwnd and ssthresh without random loss;
- ``fairness``: Fig. 5a, Jain's index of 10 flows of one variant vs loss;
- ``friendliness``: Fig. 5b, k of 10 flows Reno, Westwood or Westwood+ and
  10 - k SARBE (k = 1..9) at 1 % loss against the fair share;
- ``hop@RATE,DELAY``: the experiments that cross the wireless hop (Figs.
  3b, 4, 5a, 5b) again at other rates and delays of that hop (the paper
  does not give them), every statement judged at each.

The paper's "Westwood" statements are judged against the original Westwood;
the same statements with Westwood+ in its place are judged in a table of
their own.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from ..runner import RunSpec, run_many
from ..stats import fmt_ci, mean_ci
from . import statements as _st
from .paper import PAPER_DIR

PAPER_FILE = PAPER_DIR / "sarbe.toml"
# The checks this module judges (paper/sarbe.toml explains each).
CHECKS = {"tracking_worse", "tracking_close", "overestimate", "best_goodput", "gain", "fewer_losses", "timeouts",
          "high_fairness", "coexist"}


def load_paper(path: str | Path = PAPER_FILE) -> dict:
    """The SARBE paper's data, checked: ValueError naming the file and field."""
    return _st.load(path, ("seed_file", "gain_vs_reno_1pct_pct", "gain_vs_westwood_1pct_pct",
                           "westwood_overestimate_mbps"), CHECKS)


PAPER = load_paper()

CCS = ["reno", "newreno", "westwood", "westwood+", "sarbe"]
LABEL = {"reno": "Reno", "newreno": "NewReno", "westwood": "Westwood", "westwood+": "Westwood+",
         "sarbe": "SARBE+LDED"}
# The controls with a bandwidth estimate (Fig. 2).
ESTIMATORS = ("westwood", "westwood+", "sarbe")
# SARBE's partners in Fig. 5b, and how many of the ten flows they are
# (the figure's x-axis; the rest are SARBE).
OTHERS = ("reno", "westwood", "westwood+")
FRIEND_K = list(range(1, 10))
# Fig. 5b's k in a --quick run.
QUICK_FRIEND_K = [1, 5, 9]
LOSSES = [1e-5, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1]
FAIR_LOSSES = [1e-4, 1e-3, 1e-2, 1e-1]
# (rate, delay) of the wireless hop: ours first, then the sensitivity.
WIRELESS = [("10Mbps", "1ms"), ("10Mbps", "10ms"), ("2Mbps", "1ms"), ("54Mbps", "1ms")]
# The experiments that cross the wireless hop, rerun at each other setting.
HOP_EXPERIMENTS = ("lossy", "cwnd", "fairness", "friendliness")
# Fig. 5b's k at the other hop settings (the whole sweep at ours).
HOP_FRIEND_K = [1, 5, 9]
# A CBR schedule with 2-s steps (the sensitivity of Fig. 2a).
FAST_RATES = ["1Mbps", "0.25Mbps", "1.25Mbps", 0, "0.75Mbps", "0.5Mbps", "1Mbps", 0, "1.25Mbps", "0.25Mbps", 0,
              "0.75Mbps", 0, "1Mbps"]
FAST_SCHEDULE = [[f"{2 * (k + 1)}s", r] for k, r in enumerate(FAST_RATES)]
# Bytes on the wire per 1000-B segment (IP 20 + TCP 20 + timestamps 12):
# the available bandwidth is measured on the wire, estimates in payload.
PAYLOAD_SHARE = 1000 / 1052


def hop_key(exp: str, rate: str, delay: str) -> str:
    """The key of experiment ``exp`` rerun with the wireless hop at ``rate``
    and ``delay`` (the sensitivity)."""
    return f"{exp}@{rate},{delay}"


def _hop_specs(quick: bool, seeds: int, hop: dict, friend_k: list[int]) -> dict[str, list[RunSpec]]:
    """The experiments that cross the wireless hop (HOP_EXPERIMENTS), with
    the hop's parameters ``hop`` (empty: the scenario's, ours)."""
    losses = [1e-3, 1e-2, 1e-1] if quick else LOSSES
    seq = range(1, seeds + 1)
    return {
        "lossy": [RunSpec.make("sarbe/lossy_link", {"tcp": cc, "loss": p, **hop}, k)
                  for cc in CCS for p in losses for k in seq],
        "cwnd": [RunSpec.make("sarbe/cwnd_traces", {"tcp": cc, **hop}, 1, keep_series=not hop) for cc in CCS],
        "fairness": [RunSpec.make("sarbe/fairness", {"tcp": cc, "loss": p, **hop}, k)
                     for cc in CCS for p in ([1e-2] if quick else FAIR_LOSSES) for k in seq],
        # Fig. 5b: k of the ten flows `other`, the rest SARBE.
        "friendliness": [RunSpec.make("sarbe/friendliness", {"tcp": "sarbe", "other": o, "mine": 10 - n,
                                                             "others": n, **hop}, k)
                         for o in OTHERS for n in friend_k for k in seq],
    }


def _specs(quick: bool, seeds: int) -> dict[str, list[RunSpec]]:
    s: dict[str, list[RunSpec]] = {}
    s["tracking"] = [RunSpec.make("sarbe/tracking", {"tcp": cc}, 1, keep_series=True) for cc in ESTIMATORS]
    # Sensitivity to the CBR schedule the paper does not give: 2-s steps.
    s["tracking_fast"] = [RunSpec.make("sarbe/tracking", {"tcp": cc, "schedule": FAST_SCHEDULE}, 1, keep_series=True)
                          for cc in ESTIMATORS]
    s["ack_compression"] = [RunSpec.make("sarbe/ack_compression", {"tcp": cc}, 1, keep_series=True)
                            for cc in ESTIMATORS]
    losses = [1e-3, 1e-2, 1e-1] if quick else LOSSES
    s.update(_hop_specs(quick, seeds, {}, QUICK_FRIEND_K if quick else FRIEND_K))
    # The pseudo-code's kept cwnd against an ns-2 NewReno exit (cwnd = oCwnd).
    s["restore"] = [RunSpec.make("sarbe/lossy_link", {"tcp": "sarbe", "loss": p, "restore_cwnd": False}, k)
                    for p in losses for k in range(1, seeds + 1)]
    # What each estimator says at 1 % loss, beside what the flow gets.
    s["estimates"] = [RunSpec.make("sarbe/cwnd_traces", {"tcp": cc, "loss": 0.01, "ts_tick": tick}, 1, keep_series=True)
                      for cc, tick in (("westwood", "1ms"), ("westwood+", "1ms"), ("sarbe", "1ms"), ("sarbe", "1us"))]
    s["ack_compression"] += [RunSpec.make("sarbe/ack_compression", {"tcp": "sarbe", "ts_tick": "1us"}, 1,
                                          keep_series=True)]
    # The wireless hop the paper does not give: every experiment that
    # crosses it again at each other rate and delay.
    for rate, delay in WIRELESS[1:]:
        hop = {"bottleneck_rate": rate, "wireless_delay": delay}
        for exp, specs in _hop_specs(quick, seeds, hop, [5] if quick else HOP_FRIEND_K).items():
            s[hop_key(exp, rate, delay)] = specs
    return s


def _p(r: dict, k: str) -> str:
    return r["params"].get(k, "")


def lossy_table(results: list[dict]) -> dict[tuple[str, float], tuple[float, float, int]]:
    """(cc, loss) -> goodput mean, 95 % CI, n."""
    groups: dict[tuple[str, float], list[float]] = {}
    for r in results:
        groups.setdefault((_p(r, "tcp"), float(_p(r, "loss"))), []).append(r["summary"]["goodput_mean_mbps"])
    return {k: mean_ci(v) for k, v in groups.items()}


def _gain(table: dict, a: str, b: str, loss: float) -> float:
    return table[(a, loss)][0] / table[(b, loss)][0] - 1.0


def tracking_error(r: dict, t0: float = 0.0, t1: float = math.inf) -> tuple[float, float]:
    """Mean and mean absolute (estimate - available payload bandwidth), Mb/s,
    over [t0, t1), the first 2 s (slow start) left out."""
    q = r["queue_series"]
    tr = r["traces"][0]
    avail = dict(zip(q["time_s"], q["avail_mbps"]))
    diffs = []
    for t, b in zip(tr["time_s"], tr["bwe_mbps"]):
        a = avail.get(t)
        if a is None or b is None or t < max(t0, 2.0) or t >= t1:
            continue
        diffs.append(b - a * PAYLOAD_SHARE)
    if not diffs:
        return math.nan, math.nan
    return sum(diffs) / len(diffs), sum(abs(d) for d in diffs) / len(diffs)


def fairness_table(results: list[dict]) -> dict[tuple[str, float], list[float]]:
    """Fig. 5a: Jain's index of each run, by (variant, loss)."""
    fj: dict[tuple[str, float], list[float]] = {}
    for r in results:
        fj.setdefault((_p(r, "tcp"), float(_p(r, "loss"))), []).append(r["summary"]["jain_goodput"])
    return fj


def friendliness_table(results: list[dict]) -> dict[tuple[str, int], tuple[list[float], list[float], float]]:
    """Fig. 5b, by (the variant SARBE shares with, how many of the ten flows
    it has): per run, the mean goodput of the SARBE flows and of the others,
    each over the fair share (the mean of all ten); and the mean fair share,
    Mb/s. A run without ``others`` has 5 and 5 (the scenario's default)."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for r in results:
        groups.setdefault((_p(r, "other"), int(_p(r, "others") or 5)), []).append(r)
    table = {}
    for (o, n), rs in sorted(groups.items(), key=lambda kv: (OTHERS.index(kv[0][0]) if kv[0][0] in OTHERS else 9,
                                                            kv[0][1])):
        # The first 10 - n flows are SARBE, the last n the others (the
        # traffic order); the flows table is by columns.
        mine_n = 10 - n
        g = [r["flows"]["goodput_mbps"][:10] for r in rs]
        fair = [sum(x) / 10 for x in g]
        mine = [sum(x[:mine_n]) / mine_n / f for x, f in zip(g, fair)]
        other = [sum(x[mine_n:]) / n / f for x, f in zip(g, fair)]
        table[(o, n)] = (mine, other, sum(fair) / len(fair))
    return table


def _vs_loss(plt: Any, out: Path, name: str, title: str, ylabel: str,
             cells: dict[tuple[str, float], tuple[float, float]]) -> str:
    """One curve per control against the wireless loss, with 95 % CIs:
    ``cells`` maps (control, loss) to (mean, CI half-width)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for cc in CCS:
        pts = sorted((p * 100, m, h) for (c, p), (m, h) in cells.items() if c == cc)
        ax.errorbar([x for x, _, _ in pts], [m for _, m, _ in pts], yerr=[0 if math.isnan(h) else h for *_, h in pts],
                    marker="o", label=LABEL[cc], capsize=3)
    ax.set_xscale("log")
    ax.set_xlabel("wireless loss (% of packets)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "figures" / name, dpi=110)
    plt.close(fig)
    return name


def figures(res: dict[str, list[dict]], out: Path) -> list[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    for key, title, name in (("tracking", "Fig. 2a: bandwidth estimate", "fig2a_tracking.png"),
                             ("ack_compression", "Fig. 2b: ACK compression", "fig2b_ack_compression.png")):
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for r in res[key]:
            tr = r["traces"][0]
            tick = _p(r, "ts_tick")
            ax.plot(tr["time_s"], [math.nan if b is None else b for b in tr["bwe_mbps"]],
                    label=LABEL[_p(r, "tcp")] + (f" ({tick} ticks)" if tick else ""))
        q = res[key][0]["queue_series"]
        ax.plot(q["time_s"], [math.nan if a is None else a * PAYLOAD_SHARE for a in q["avail_mbps"]], "k:",
                label="available (payload)")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("Mb/s")
        ax.set_title(title)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "figures" / name, dpi=110)
        plt.close(fig)
        made.append(name)
    table = lossy_table(res["lossy"])
    made.append(_vs_loss(plt, out, "fig3b_goodput.png", "Fig. 3b: goodput vs loss", "goodput (Mb/s)",
                         {k: v[:2] for k, v in table.items()}))
    fig, axes = plt.subplots(1, len(res["cwnd"]), figsize=(4 * len(res["cwnd"]), 3.2), sharey=True)
    for ax, r in zip(axes, res["cwnd"]):
        tr = r["traces"][0]
        ax.plot(tr["time_s"], [c / 1000 for c in tr["cwnd"]], label="cwnd")
        ax.plot(tr["time_s"], [min(s / 1000, 1e3) for s in tr["ssthresh"]], label="ssthresh")
        ax.set_ylim(0, 200)
        ax.set_title(LABEL[_p(r, "tcp")])
        ax.set_xlabel("time (s)")
    axes[0].set_ylabel("segments")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out / "figures" / "fig4_cwnd.png", dpi=110)
    plt.close(fig)
    made.append("fig4_cwnd.png")
    fj = fairness_table(res["fairness"])
    if fj:
        made.append(_vs_loss(plt, out, "fig5a_fairness.png", "Fig. 5a: fairness", "Jain's index, 10 flows",
                             {k: mean_ci(v)[:2] for k, v in fj.items()}))
    ft = friendliness_table(res["friendliness"])
    if ft:
        # As the paper's Fig. 5b, against the number of the ten flows that
        # are Reno or Westwood (the rest SARBE), but per flow over its run's
        # fair share rather than in kb/s.
        fig, ax = plt.subplots(figsize=(7, 4))
        for j, o in enumerate(x for x in OTHERS if any(k[0] == x for k in ft)):
            ns = sorted(n for (x, n) in ft if x == o)
            for vals, ls, who in ((1, "-", LABEL[o]), (0, "--", f"SARBE vs {LABEL[o]}")):
                pts = [mean_ci(ft[(o, n)][vals])[:2] for n in ns]
                ax.errorbar(ns, [m for m, _ in pts], yerr=[0 if math.isnan(h) else h for _, h in pts], ls=ls,
                            marker="o", color=f"C{j}", capsize=3, label=who)
        ax.axhline(1.0, color="k", ls=":", label="fair share")
        ax.set_xlabel("number of Reno, Westwood or Westwood+ connections (of 10; the rest SARBE)")
        ax.set_ylabel("mean goodput per flow / fair share")
        ax.set_title("Fig. 5b: friendliness at 1 % loss")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "figures" / "fig5b_friendliness.png", dpi=110)
        plt.close(fig)
        made.append("fig5b_friendliness.png")
    return made


def _hop_res(res: dict[str, list[dict]], rate: str, delay: str) -> dict[str, list[dict]]:
    """``res`` with the experiments that cross the wireless hop taken from
    the runs at ``rate``, ``delay`` (Fig. 2's experiments have no such hop)."""
    if (rate, delay) == WIRELESS[0]:
        return res
    return {**res, **{exp: res[hop_key(exp, rate, delay)] for exp in HOP_EXPERIMENTS}}


def hop_settings(res: dict[str, list[dict]]) -> list[tuple[str, str]]:
    """The wireless-hop settings run: ours first, then those of the sensitivity."""
    return [WIRELESS[0]] + [(r, d) for r, d in WIRELESS[1:] if hop_key("lossy", r, d) in res]


def _hop_label(rate: str, delay: str) -> str:
    return f"hop {rate}, {delay}" + (" (ours)" if (rate, delay) == WIRELESS[0] else "")


def not_best_lines(res: dict[str, list[dict]]) -> list[str]:
    """Fig. 3b where SARBE is not the best: the loss rates, who beats it, by
    how much and whether the 95 % CIs overlap, and what the runs show of
    why (bottleneck utilization, drops at the bottleneck queue, fast
    recoveries, retransmission timeouts per run: the lossy runs' summaries)."""
    table = lossy_table(res["lossy"])
    losses = sorted({p for (_, p) in table})
    bad = {p: [o for o in CCS if o != "sarbe" and table[(o, p)][0] >= table[("sarbe", p)][0]] for p in losses}
    bad = {p: os for p, os in bad.items() if os}
    if not bad:
        return ["SARBE's mean goodput is the highest at every loss rate run."]
    from ..scenarios import load

    min_rto = load("sarbe/lossy_link")["params"].get("min_rto", "the")
    keys = (("utilization", "bottleneck utilization", 3), ("queue_drops", "drops at the bottleneck queue", 4),
            ("fast_recoveries", "fast recoveries", 3), ("timeouts", "retransmission timeouts", 3))
    by: dict[tuple[str, float], list[dict]] = {}
    for r in res["lossy"]:
        by.setdefault((_p(r, "tcp"), float(_p(r, "loss"))), []).append(r["summary"])
    L = ["| loss % | control | goodput (Mb/s) | CIs vs SARBE | " + " | ".join(k[1] for k in keys) + " |",
         "|---" * (4 + len(keys)) + "|"]
    sent = []
    for p, os in bad.items():
        s_m, s_h = table[("sarbe", p)][:2]
        for cc in ["sarbe", *os]:
            m, h = table[(cc, p)][:2]
            disjoint = abs(m - s_m) > h + s_h
            cis = "-" if cc == "sarbe" else ("disjoint" if disjoint else "overlap")
            L.append(f"| {p * 100:g} | {LABEL[cc]} | {fmt_ci(m, h)} | {cis} | "
                     + " | ".join(fmt_ci(*mean_ci(x[k] for x in by[(cc, p)])[:2], d) for k, _, d in keys) + " |")
        best = max(os, key=lambda o: table[(o, p)][0])
        mean = {cc: {k: mean_ci(x[k] for x in by[(cc, p)])[0] for k, _, _ in keys} for cc in ("sarbe", best)}
        s, b = mean["sarbe"], mean[best]
        more_to = s["timeouts"] > b["timeouts"]
        sent.append(
            f"At {p * 100:g} % {LABEL[best]} gets {table[(best, p)][0]:.3f} Mb/s to SARBE's {s_m:.3f} "
            f"({(s_m / table[(best, p)][0] - 1) * 100:+.1f} %, the CIs "
            f"{'disjoint' if abs(table[(best, p)][0] - s_m) > table[(best, p)][1] + s_h else 'overlapping'}): "
            f"SARBE keeps the bottleneck busy {s['utilization'] * 100:.1f} % of the time against "
            f"{b['utilization'] * 100:.1f} %, and with {s['queue_drops']:.0f} drops at the queue against "
            f"{b['queue_drops']:.0f} it takes {s['timeouts']:.1f} retransmission timeouts a run against "
            f"{b['timeouts']:.1f}"
            + (" — its overflows end in a timeout more often, and each idles the link for at least the "
               f"{min_rto} minimum RTO (the scenario's `min_rto`)." if more_to else "."))
    return [
        "The paper: \"for any random error rate, the goodput of the proposed TCP is better than other versions\" "
        "(fig3b-better-any-loss). Where our runs disagree (mean ± 95 % CI over the seeds; the other columns are "
        "means per run of the same runs):", "", *L, "", *sent, "",
        "At these loss rates the wireless hop hardly matters and the bottleneck queue's overflows decide: the "
        "paper explains its gain there by Fig. 4 (LDED lets SARBE leave slow start before the queue overflows, "
        "while Reno and Westwood time out); the timeouts without random loss are in the Fig. 4 statements above."]


def report(res: dict[str, list[dict]], seeds: int, wall: float, made: list[str], quick: bool = False,
           out: Path | None = None) -> str:
    L: list[str] = ["# The SARBE paper (SARBE + LDED) reproduced", ""]
    L.append(f"Paper: {PAPER['title']} (docs/bibliography.md); its numbers and statements are in "
             "`python/netreturn/paper/sarbe.toml`. Its \"Westwood\" is the original TCP Westwood (per-ACK samples, "
             "`tcp.cc = \"westwood\"`); Westwood+ (`westwood+`, one sample per RTT) is shown beside it.")
    L.append("")
    L.append(f"Seeds 1..{seeds} per point; {sum(len(v) for v in res.values())} runs in {wall:.1f} s. "
             "Parameters the paper does not give are in the scenario files (`scenarios/sarbe/`).")
    if quick:
        L += ["", f"**`--quick`: a smoke test, not a reproduction** ({seeds} seeds; loss rates "
              f"{', '.join(f'{p * 100:g} %' for p in sorted({float(_p(r, 'loss')) for r in res['lossy']}))}; "
              f"fairness at 1 % only; Fig. 5b at {', '.join(map(str, QUICK_FRIEND_K))} of ten)."]
    judged = {st["id"]: _st.for_quick(st, judge(st, res), quick) for st in PAPER["statements"]}
    columns = {"this report's runs": judged}
    L += [""] + _st.section("## The paper's statements, judged", PAPER["statements"], columns, quick)
    plus = {st["id"]: _st.for_quick(st, judge(pst, res), quick) for st in PAPER["statements"]
            for pst in [with_westwood_plus(st)] if pst is not None}
    L += ["## The Westwood statements with Westwood+ in the original's place", "",
          "The same statements judged against Westwood+ (Linux's and ns-3's Westwood, one bandwidth sample per RTT): "
          "not the paper's comparator, so not in the tally above.", "",
          "| id | ours, Westwood+ in Westwood's place |", "|---|---|"]
    for sid, j in plus.items():
        L.append(f"| {sid} | " + _st._cell(f"**{j.verdict}** — {j.measured}" + (f". Why: {j.why}" if j.why else ""))
                 + " |")
    columns["Westwood+ in Westwood's place"] = plus
    L += ["", "## Fig. 3b: goodput (Mb/s) vs wireless loss, mean ± 95 % CI", ""]
    table = lossy_table(res["lossy"])
    losses = sorted({p for (_, p) in table})
    L.append("| loss % | " + " | ".join(LABEL[c] for c in CCS) + " |")
    L.append("|---" * (len(CCS) + 1) + "|")
    for p in losses:
        L.append(f"| {p * 100:g} | " + " | ".join(fmt_ci(*table[(c, p)][:2]) for c in CCS) + " |")
    L += ["", "### Where SARBE is not the best", "", *not_best_lines(res)]
    if ("sarbe", 0.01) in table:
        L += ["", "## The paper's headline at 1 % loss", "", "| | paper | ours |", "|---|---|---|"]
        paper = {"reno": f"+{PAPER['gain_vs_reno_1pct_pct']:.1f} %",
                 "westwood": f"+{PAPER['gain_vs_westwood_1pct_pct']:.1f} %"}
        for o in ("reno", "newreno", "westwood", "westwood+"):
            L.append(f"| SARBE vs {LABEL[o]} | {paper.get(o, '-')} | {_gain(table, 'sarbe', o, 0.01) * 100:+.1f} % |")
    hops = hop_settings(res)
    if len(hops) > 1:
        hop_cols = {_hop_label(r, d): {st["id"]: _st.for_quick(st, judge(st, _hop_res(res, r, d)), quick)
                                       for st in PAPER["statements"]} for r, d in hops}
        L += ["", "## Sensitivity: the wireless hop (its rate and delay are not given by the paper)", "",
              "Every experiment that crosses the wireless hop (Figs. 3b, 4, 5a and 5b) run again with the hop at each "
              f"rate and delay ({seeds} seeds; Fig. 5b at {', '.join(map(str, HOP_FRIEND_K if not quick else [5]))} "
              "of ten away from ours), and every statement judged at each; Fig. 2's experiments have no wireless hop "
              "and repeat the first column. `statements.csv` has what was measured at each.", "",
              "| id | " + " | ".join(hop_cols) + " |", "|---" * (len(hop_cols) + 1) + "|"]
        for st in PAPER["statements"]:
            vs = [hop_cols[c][st["id"]].verdict for c in hop_cols]
            sid = st["id"] if len(set(vs)) == 1 else f"**{st['id']}** (moves)"
            L.append(f"| {sid} | " + " | ".join(vs) + " |")
        moved = [st for st in PAPER["statements"] if len({hop_cols[c][st["id"]].verdict for c in hop_cols}) > 1]
        L += ["", f"{len(moved)} of {len(PAPER['statements'])} verdicts move with the hop"
              + (": " + ", ".join(st["id"] for st in moved) + "." if moved else ".")]
        for st in moved:
            L += ["", f"- **{st['id']}**: " + "; ".join(f"{c}: {hop_cols[c][st['id']].verdict} — "
                                                        f"{hop_cols[c][st['id']].measured}" for c in hop_cols)]
        L += ["", "### The 1 % gains at each hop setting", "",
              "| wireless hop | " + " | ".join(LABEL[c] for c in CCS) + " | "
              + " | ".join(f"vs {LABEL[o]}" for o in ("reno", "westwood", "westwood+")) + " |",
              "|---" * (len(CCS) + 4) + "|"]
        for r, d in hops:
            t = lossy_table(_hop_res(res, r, d)["lossy"])
            if not all((c, 0.01) in t for c in CCS):
                continue
            L.append(f"| {r}, {d} | " + " | ".join(f"{t[(c, 0.01)][0]:.3f}" for c in CCS) + " | "
                     + " | ".join(f"{_gain(t, 'sarbe', o, 0.01) * 100:+.0f} %"
                                  for o in ("reno", "westwood", "westwood+")) + " |")
        columns.update({c: j for c, j in hop_cols.items() if c != _hop_label(*WIRELESS[0])})
    if out is not None:
        _st.write(out, PAPER["statements"], columns)
    if res["restore"]:
        rt = lossy_table(res["restore"])
        L += ["", "## SARBE's kept cwnd: restored after recovery (ours) or ns-2 NewReno's exit at oCwnd", "",
              "| loss % | restored (default) | cwnd = oCwnd at exit |", "|---|---|---|"]
        for p in sorted({p for (_, p) in rt}):
            L.append(f"| {p * 100:g} | {fmt_ci(*table[('sarbe', p)][:2])} | {fmt_ci(*rt[('sarbe', p)][:2])} |")
    if res["estimates"]:
        L += ["", "## Estimates at 1 % loss, one seed, 10-100 s (Mb/s of payload; link 5 Mb/s = 4.75 of payload)", "",
              "| | TSval tick | mean estimate | goodput |", "|---|---|---|---|"]
        for r in res["estimates"]:
            tr = r["traces"][0]
            xs = [b for t, b in zip(tr["time_s"], tr["bwe_mbps"]) if t >= 10 and b is not None]
            L.append(f"| {LABEL[_p(r, 'tcp')]} | {_p(r, 'ts_tick')} | {sum(xs) / max(len(xs), 1):.3f} | "
                     f"{r['summary']['goodput_mean_mbps']:.3f} |")
    est = [("westwood", "1ms"), ("westwood+", "1ms"), ("sarbe", "1ms"), ("sarbe", "1us")]
    L += ["", "## Fig. 2: estimate minus available bandwidth (Mb/s of payload)", "",
          "| experiment | interval | Westwood mean / mean abs | Westwood+ mean / mean abs | SARBE mean / mean abs "
          "| SARBE, 1 us ticks |", "|---|---|---|---|---|---|"]
    for key, spans in (
        ("tracking", [(0, 30)]),
        ("tracking_fast", [(0, 30)]),
        ("ack_compression", [(0, 30), (30, 120), (120, 150)]),
    ):
        by_cc = {(_p(r, "tcp"), _p(r, "ts_tick") or "1ms"): r for r in res[key]}
        for t0, t1 in spans:
            cells = []
            for k in est:
                if k not in by_cc:
                    cells.append("-")
                    continue
                m, a = tracking_error(by_cc[k], t0, t1)
                cells.append(f"{m:+.3f} / {a:.3f}")
            L.append(f"| {key} | {t0}-{t1} s | " + " | ".join(cells) + " |")
    L += ["", f"The paper: Westwood overestimates by more than {PAPER['westwood_overestimate_mbps']:g} Mb/s "
          "during the reverse FTP; SARBE stays near the truth.", ""]
    L += ["## Fig. 5a: Jain's index of 10 flows of one variant", "",
          "| loss % | " + " | ".join(LABEL[c] for c in CCS) + " |", "|---" * (len(CCS) + 1) + "|"]
    fj = fairness_table(res["fairness"])
    for p in sorted({p for (_, p) in fj}):
        L.append(f"| {p * 100:g} | " + " | ".join(fmt_ci(*mean_ci(fj[(c, p)])[:2]) for c in CCS) + " |")
    ft = friendliness_table(res["friendliness"])
    L += ["", "## Fig. 5b: k of ten flows Reno, Westwood or Westwood+, the rest SARBE, at 1 % loss", "",
          "Mean goodput per flow over the run's fair share (the mean of the ten), mean ± 95 % CI over the seeds.", "",
          "| others | k | SARBE flows | other flows | fair share (Mb/s) |", "|---|---|---|---|---|"]
    for (o, n), (mine, other, fs) in ft.items():
        L.append(f"| {LABEL[o]} | {n} | {fmt_ci(*mean_ci(mine)[:2])} | {fmt_ci(*mean_ci(other)[:2])} | {fs:.3f} |")
    if made:
        L += ["", "Figures: " + ", ".join(f"![{m}](figures/{m})" for m in made)]
    return "\n".join(L) + "\n"


def main(a: argparse.Namespace) -> int:
    quick = bool(getattr(a, "quick", False))
    seeds = getattr(a, "seeds", None) or (3 if quick else 10)
    out = Path(getattr(a, "out", None) or "results/reproduce-sarbe")
    (out / "figures").mkdir(parents=True, exist_ok=True)
    specs = _specs(quick, seeds)
    flat = [s for v in specs.values() for s in v]
    t0 = time.perf_counter()
    results = run_many(flat, jobs=getattr(a, "jobs", None), out=out, progress=not getattr(a, "quiet", False))
    wall = time.perf_counter() - t0
    res: dict[str, list[dict]] = {}
    i = 0
    for k, v in specs.items():
        res[k] = results[i:i + len(v)]
        i += len(v)
    made = figures(res, out)
    text = report(res, seeds, wall, made, quick, out)
    _tables(res, out)
    (out / "report.md").write_text(text)
    print(text)
    print(f"report: {out / 'report.md'}")
    return 0


def _tables(res: dict[str, list[dict]], out: Path) -> None:
    """Fig. 3(b), Fig. 5(a) and Fig. 5(b) as CSV."""
    import pandas as pd

    from ..files import write_frame_csv

    write_frame_csv(pd.DataFrame([{"tcp": c, "loss": p, "goodput_mbps": m, "ci95": h, "n": n}
                                  for (c, p), (m, h, n) in sorted(lossy_table(res["lossy"]).items())]),
                    out / "fig3b_goodput.csv")
    write_frame_csv(pd.DataFrame([{"tcp": c, "loss": p, "jain": m, "ci95": h, "n": n}
                                  for (c, p), xs in sorted(fairness_table(res["fairness"]).items())
                                  for m, h, n in [mean_ci(xs)]]), out / "fig5a_fairness.csv")
    write_frame_csv(pd.DataFrame([{"other": o, "others": n, "sarbe_over_fair": mean_ci(mine)[0],
                                   "sarbe_ci95": mean_ci(mine)[1], "other_over_fair": mean_ci(other)[0],
                                   "other_ci95": mean_ci(other)[1], "fair_share_mbps": fs, "n": len(mine)}
                                  for (o, n), (mine, other, fs) in friendliness_table(res["friendliness"]).items()]),
                    out / "fig5b_friendliness.csv")


# --------------------------------------------------------------------------
# the statements, judged

# The fields of a statement that name a congestion control.
CC_FIELDS = ("worse", "better", "over", "under", "other", "cc")
CC_LISTS = ("ccs", "others")


def with_westwood_plus(st: dict) -> dict | None:
    """``st`` with Westwood+ in place of the original Westwood wherever it
    names it; None if it does not name Westwood."""
    if "westwood" not in [st.get(k) for k in CC_FIELDS] + [c for k in CC_LISTS for c in st.get(k, [])]:
        return None
    sw = {"westwood": "westwood+"}
    return {**st, **{k: sw.get(st[k], st[k]) for k in CC_FIELDS if k in st},
            **{k: [sw.get(c, c) for c in st[k]] for k in CC_LISTS if k in st}}


def judge(st: dict, res: dict[str, list[dict]]) -> _st.Judgement:
    """One statement of ``paper/sarbe.toml`` from this report's runs."""
    c = st["check"]
    H, P, F = _st.HOLDS, _st.PARTLY, _st.FAILS
    if c in ("tracking_worse", "tracking_close", "overestimate"):
        by = {_p(r, "tcp"): r for r in res[st["experiment"]] if (_p(r, "ts_tick") or "1ms") == "1ms"}
        err = {cc: tracking_error(r, st["from_s"], st["to_s"]) for cc, r in by.items()}
        span = f"{st['experiment']} {st['from_s']}-{st['to_s']} s, estimate minus available (mean / mean abs, Mb/s): "
        measured = span + ", ".join(f"{LABEL[cc]} {m:+.3f} / {a:.3f}" for cc, (m, a) in err.items())
        if c == "tracking_worse":
            ratio = err[st["worse"]][1] / err[st["better"]][1]
            need = st.get("min_ratio", 1.0)
            v = H if ratio >= need else P if ratio > 1 else F
            return _st.Judgement(v, measured + f"; {LABEL[st['worse']]}'s error {ratio:.2f} times "
                                 f"{LABEL[st['better']]}'s (read as at least {need:g} times)",
                                 "" if v == H else f"{LABEL[st['worse']]} tracks about as closely as "
                                 f"{LABEL[st['better']]} here")
        if c == "tracking_close":
            ok = err[st["cc"]][1] <= st["max_mbps"]
            return _st.Judgement(H if ok else F, measured + f" (read as within {st['max_mbps']} Mb/s)")
        d = err[st["over"]][0] - err[st["under"]][0]
        v = H if d >= PAPER["westwood_overestimate_mbps"] else P if d > 0 else F
        why = ""
        if v != H and st["over"] == "westwood+":
            why = ("the original's per-ACK samples are what ACK compression inflates (the SARBE paper section 2), "
                   "Westwood+'s per-RTT filter is not")
        elif v != H:
            # How much the reverse FTP adds to the estimate's error: the
            # interval against the 0-30 s before it, same run.
            before = tracking_error(by[st["over"]], 0, st["from_s"])[0]
            why = (f"{LABEL[st['over']]}'s mean error moves from {before:+.3f} Mb/s before the reverse FTP to "
                   f"{err[st['over']][0]:+.3f} during it: in our ACK-compression scenario its per-ACK filter "
                   f"overestimates by less than the paper's {PAPER['westwood_overestimate_mbps']:g} Mb/s")
        return _st.Judgement(v, measured + f"; difference {d:+.3f} Mb/s (paper: over "
                             f"{PAPER['westwood_overestimate_mbps']:g})", why)
    if c in ("best_goodput", "gain"):
        table = lossy_table(res["lossy"])
        losses = sorted({p for (_, p) in table})
        if c == "best_goodput":
            bad = [(p, o) for p in losses for o in CCS if o != "sarbe" and table[(o, p)][0] >= table[("sarbe", p)][0]]
            measured = "; ".join(
                f"{p * 100:g} %: SARBE {table[('sarbe', p)][0]:.3f}, "
                + ", ".join(f"{LABEL[o]} {table[(o, p)][0]:.3f}" for o in CCS if o != "sarbe") for p in losses)
            bad_losses = sorted({p for p, _ in bad})
            v = H if not bad else F if len(bad_losses) == len(losses) else P
            why = "" if not bad else (
                "not better at " + ", ".join(
                    f"{p * 100:g} % (" + ", ".join(
                        f"{LABEL[o]} {fmt_ci(*table[(o, p)][:2])} vs SARBE {fmt_ci(*table[('sarbe', p)][:2])}, CIs "
                        + ("disjoint" if abs(table[(o, p)][0] - table[("sarbe", p)][0])
                           > table[(o, p)][1] + table[("sarbe", p)][1] else "overlap")
                        for pp, o in bad if pp == p) + ")" for p in bad_losses)
                + "; see \"Where SARBE is not the best\"")
            return _st.Judgement(v, measured + " Mb/s", why)
        if ("sarbe", 0.01) not in table or (st["other"], 0.01) not in table:
            return _st.Judgement(_st.NOT_MEASURABLE, "-", "1 % loss not run")
        g = _gain(table, "sarbe", st["other"], 0.01) * 100
        p = st["paper"]
        v = H if abs(g - p) <= st["tolerance"] * p else P if g > 0 else F
        return _st.Judgement(v, f"SARBE vs {LABEL[st['other']]} at 1 %: {g:+.1f} % (paper +{p} %)")
    if c in ("fewer_losses", "timeouts"):
        by = {_p(r, "tcp"): r["summary"] for r in res["cwnd"]}
        if c == "fewer_losses":
            lost = {cc: by[cc]["lost_packets"] for cc in [st["cc"], *st["others"]]}
            ok = sum(lost[st["cc"]] < lost[o] for o in st["others"])
            v = H if ok == len(st["others"]) else F if ok == 0 else P
            return _st.Judgement(v, "lost packets without random loss (one seed): "
                                 + ", ".join(f"{LABEL[cc]} {x:.0f}" for cc, x in lost.items()))
        to = {cc: by[cc]["timeouts"] for cc in st["ccs"]}
        ok = sum(x >= 1 for x in to.values())
        v = H if ok == len(to) else F if ok == 0 else P
        quiet = [cc for cc, x in to.items() if x < 1]
        why = "; ".join(
            f"{LABEL[cc]} " + ("loses no packet: its queue never overflows" if by[cc]["lost_packets"] == 0 else
                               f"loses {by[cc]['lost_packets']:.0f} packets and recovers from them by "
                               f"{by[cc]['fast_recoveries']:.0f} fast recoveries")
            for cc in quiet)
        return _st.Judgement(v, "retransmission timeouts without random loss (one seed): "
                             + ", ".join(f"{LABEL[cc]} {x:.0f}" for cc, x in to.items()), why)
    if c == "high_fairness":
        fj = fairness_table(res["fairness"])
        cells = {(cc, p): mean_ci(xs)[0] for (cc, p), xs in fj.items() if cc in st["ccs"]}
        ok = sum(x >= st["min"] for x in cells.values())
        v = H if ok == len(cells) else F if ok == 0 else P
        return _st.Judgement(v, "Jain of 10 flows: " + ", ".join(f"{LABEL[cc]} {p * 100:g} % {x:.3f}"
                                                                 for (cc, p), x in sorted(cells.items()))
                             + f" (read as at least {st['min']})")
    if c == "coexist":
        ft = {n: v for (o, n), v in friendliness_table(res["friendliness"]).items() if o == st["other"]}
        if not ft:
            return _st.Judgement(_st.NOT_MEASURABLE, "-", f"no run with {LABEL[st['other']]}")
        cells = {n: (mean_ci(mine)[0], mean_ci(other)[0]) for n, (mine, other, _) in ft.items()}
        ok = {n: o >= st["min_share"] and m > o for n, (m, o) in cells.items()}
        v = H if all(ok.values()) else F if not any(ok.values()) else P
        bad = [n for n, x in ok.items() if not x]
        return _st.Judgement(v, f"goodput per flow over the fair share, k {LABEL[st['other']]} of ten: "
                             + "; ".join(f"k={n}: SARBE {m:.3f}, {LABEL[st['other']]} {o:.3f}"
                                         for n, (m, o) in cells.items())
                             + f" (coexisting read as at least {st['min_share']}, SARBE above)",
                             "" if v == H else "not at k = " + ", ".join(map(str, bad)))
    raise ValueError(f"{PAPER_FILE}: unknown check {c!r}")


def run(**kw: Any) -> int:
    """``netreturn.reproduce.sarbe.run(seeds=3, quick=True)`` from Python."""
    return main(argparse.Namespace(**kw))
