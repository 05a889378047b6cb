"""Seed 004 (SARBE + LDED, Le Tuan Anh and Hong, ICCS 2005) reproduced:
``netreturn reproduce sarbe``.

Experiments (SPEC.md 5.5, scenarios under ``scenarios/sarbe/``):

- ``tracking``: Fig. 2a, SARBE's and Westwood+'s estimates against the
  available bandwidth while a CBR changes its rate;
- ``ack_compression``: Fig. 2b, the same with a reverse FTP from 30 to 120 s;
- ``lossy``: Fig. 3b, goodput of Reno, NewReno, Westwood+ and SARBE vs the
  wireless hop's loss rate, and the sensitivity of the 1 % gains to the
  wireless hop's rate and delay (not given by the paper);
- ``cwnd``: Fig. 4, cwnd and ssthresh without random loss;
- ``fairness``: Fig. 5a, Jain's index of 10 flows of one variant vs loss;
- ``friendliness``: Fig. 5b, 5 SARBE flows with 5 Reno or 5 Westwood+ flows
  at 1 % loss against the fair share.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from ..runner import RunSpec, run_many
from ..stats import fmt_ci, mean_ci

CCS = ["reno", "newreno", "westwood+", "sarbe"]
LABEL = {"reno": "Reno", "newreno": "NewReno", "westwood+": "Westwood+", "sarbe": "SARBE+LDED"}
LOSSES = [1e-5, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1]
FAIR_LOSSES = [1e-4, 1e-3, 1e-2, 1e-1]
# (rate, delay) of the wireless hop: ours first, then the sensitivity.
WIRELESS = [("10Mbps", "1ms"), ("10Mbps", "10ms"), ("2Mbps", "1ms"), ("54Mbps", "1ms")]
# A CBR schedule with 2-s steps (the sensitivity of Fig. 2a).
FAST_RATES = ["1Mbps", "0.25Mbps", "1.25Mbps", 0, "0.75Mbps", "0.5Mbps", "1Mbps", 0, "1.25Mbps", "0.25Mbps", 0,
              "0.75Mbps", 0, "1Mbps"]
FAST_SCHEDULE = [[f"{2 * (k + 1)}s", r] for k, r in enumerate(FAST_RATES)]
# What the paper states (section 4.1 and Fig. 2b).
PAPER = {
    "gain_vs_reno_1pct": 0.766,
    "gain_vs_westwood_1pct": 0.179,
    "westwood_overestimate_mbps": 2.0,
}
# Bytes on the wire per 1000-B segment (IP 20 + TCP 20 + timestamps 12):
# the available bandwidth is measured on the wire, estimates in payload.
PAYLOAD_SHARE = 1000 / 1052


def _specs(quick: bool, seeds: int) -> dict[str, list[RunSpec]]:
    s: dict[str, list[RunSpec]] = {}
    s["tracking"] = [RunSpec.make("sarbe/tracking", {"tcp": cc}, 1, keep_series=True) for cc in ("westwood+", "sarbe")]
    # Sensitivity to the CBR schedule the paper does not give: 2-s steps.
    s["tracking_fast"] = [RunSpec.make("sarbe/tracking", {"tcp": cc, "schedule": FAST_SCHEDULE}, 1, keep_series=True)
                          for cc in ("westwood+", "sarbe")]
    s["ack_compression"] = [RunSpec.make("sarbe/ack_compression", {"tcp": cc}, 1, keep_series=True)
                            for cc in ("westwood+", "sarbe")]
    s["cwnd"] = [RunSpec.make("sarbe/cwnd_traces", {"tcp": cc}, 1, keep_series=True) for cc in CCS]
    losses = [1e-3, 1e-2, 1e-1] if quick else LOSSES
    s["lossy"] = [RunSpec.make("sarbe/lossy_link", {"tcp": cc, "loss": p}, k)
                  for cc in CCS for p in losses for k in range(1, seeds + 1)]
    s["sensitivity"] = [RunSpec.make("sarbe/lossy_link", {"tcp": cc, "loss": 0.01, "bottleneck_rate": r,
                                                          "wireless_delay": d}, k)
                        for cc in ("reno", "westwood+", "sarbe") for (r, d) in WIRELESS[1:]
                        for k in range(1, seeds + 1)]
    # The pseudo-code's kept cwnd against an ns-2 NewReno exit (cwnd = oCwnd).
    s["restore"] = [RunSpec.make("sarbe/lossy_link", {"tcp": "sarbe", "loss": p, "restore_cwnd": False}, k)
                    for p in losses for k in range(1, seeds + 1)]
    # What each estimator says at 1 % loss, beside what the flow gets.
    s["estimates"] = [RunSpec.make("sarbe/cwnd_traces", {"tcp": cc, "loss": 0.01, "ts_tick": tick}, 1, keep_series=True)
                      for cc, tick in (("westwood+", "1ms"), ("sarbe", "1ms"), ("sarbe", "1us"))]
    s["ack_compression"] += [RunSpec.make("sarbe/ack_compression", {"tcp": "sarbe", "ts_tick": "1us"}, 1,
                                          keep_series=True)]
    s["fairness"] = [RunSpec.make("sarbe/fairness", {"tcp": cc, "loss": p}, k)
                     for cc in CCS for p in ([1e-2] if quick else FAIR_LOSSES) for k in range(1, seeds + 1)]
    s["friendliness"] = [RunSpec.make("sarbe/friendliness", {"tcp": "sarbe", "other": o}, k)
                         for o in ("reno", "westwood+") for k in range(1, seeds + 1)]
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


def friendliness_table(results: list[dict]) -> dict[str, tuple[list[float], list[float], float]]:
    """Fig. 5b, by the variant SARBE shares with: per run, the mean goodput
    of the 5 SARBE flows and of the 5 others, each over the fair share (the
    mean of all 10); and the mean fair share, Mb/s."""
    table = {}
    for o in ("reno", "westwood+"):
        rs = [r for r in results if _p(r, "other") == o]
        if not rs:
            continue
        # Flows 0-4 are SARBE, 5-9 the others (the traffic order); the
        # flows table is by columns.
        g = [r["flows"]["goodput_mbps"][:10] for r in rs]
        fair = [sum(x) / 10 for x in g]
        mine = [sum(x[:5]) / 5 / f for x, f in zip(g, fair)]
        other = [sum(x[5:]) / 5 / f for x, f in zip(g, fair)]
        table[o] = (mine, other, sum(fair) / len(fair))
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
    fig.savefig(out / name, dpi=110)
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
        fig.savefig(out / name, dpi=110)
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
    fig.savefig(out / "fig4_cwnd.png", dpi=110)
    plt.close(fig)
    made.append("fig4_cwnd.png")
    fj = fairness_table(res["fairness"])
    if fj:
        made.append(_vs_loss(plt, out, "fig5a_fairness.png", "Fig. 5a: fairness", "Jain's index, 10 flows",
                             {k: mean_ci(v)[:2] for k, v in fj.items()}))
    ft = friendliness_table(res["friendliness"])
    if ft:
        fig, ax = plt.subplots(figsize=(6, 4))
        for k, (o, (mine, other, _)) in enumerate(ft.items()):
            for j, (vals, who) in enumerate(((mine, "SARBE"), (other, LABEL[o]))):
                m, h = mean_ci(vals)[:2]
                ax.bar(
                    k * 3 + j, m, yerr=0 if math.isnan(h) else h, capsize=3, color=f"C{j}" if j == 0 else f"C{k + 2}"
                )
                ax.text(k * 3 + j, 0.02, who, rotation=90, ha="center", va="bottom", color="white")
        ax.axhline(1.0, color="k", ls=":", label="fair share")
        ax.set_xticks([k * 3 + 0.5 for k in range(len(ft))], [f"5 SARBE + 5 {LABEL[o]}" for o in ft])
        ax.set_ylabel("mean goodput per flow / fair share")
        ax.set_title("Fig. 5b: friendliness at 1 % loss")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "fig5b_friendliness.png", dpi=110)
        plt.close(fig)
        made.append("fig5b_friendliness.png")
    return made


def report(res: dict[str, list[dict]], seeds: int, wall: float, made: list[str]) -> str:
    L: list[str] = ["# Seed 004 (SARBE + LDED) reproduced", ""]
    L.append(f"{seeds} seeds per point; {sum(len(v) for v in res.values())} runs in {wall:.1f} s. "
             "Parameters the paper does not give are in the scenario files (`scenarios/sarbe/`).")
    L += ["", "## Fig. 3b: goodput (Mb/s) vs wireless loss, mean ± 95 % CI", ""]
    table = lossy_table(res["lossy"])
    losses = sorted({p for (_, p) in table})
    L.append("| loss % | " + " | ".join(LABEL[c] for c in CCS) + " |")
    L.append("|---" * (len(CCS) + 1) + "|")
    for p in losses:
        L.append(f"| {p * 100:g} | " + " | ".join(fmt_ci(*table[(c, p)][:2]) for c in CCS) + " |")
    if (("sarbe", 0.01) in table):
        L += [
            "",
            "## The paper's headline at 1 % loss",
            "",
            "| | paper | ours |",
            "|---|---|---|",
            f"| SARBE vs Reno | +{PAPER['gain_vs_reno_1pct'] * 100:.1f} % | {_gain(table, 'sarbe', 'reno', 0.01) * 100:+.1f} % |",  # noqa: E501
            f"| SARBE vs NewReno | - | {_gain(table, 'sarbe', 'newreno', 0.01) * 100:+.1f} % |",
            f"| SARBE vs Westwood(+) | +{PAPER['gain_vs_westwood_1pct'] * 100:.1f} % | "
            f"{_gain(table, 'sarbe', 'westwood+', 0.01) * 100:+.1f} % |",
        ]
    if res["sensitivity"] and all((c, 0.01) in table for c in ("reno", "westwood+", "sarbe")):
        by: dict[tuple[str, str, str], list[float]] = {}
        for r in res["sensitivity"]:
            by.setdefault((_p(r, "bottleneck_rate"), _p(r, "wireless_delay"), _p(r, "tcp")), []).append(
                r["summary"]["goodput_mean_mbps"])
        base = {c: table[(c, 0.01)][0] for c in ("reno", "westwood+", "sarbe") if (c, 0.01) in table}
        L += ["", "## Sensitivity of the 1 % gains to the wireless hop (not given by the paper)", "",
              "| wireless hop | Reno | Westwood+ | SARBE | vs Reno | vs Westwood+ |", "|---|---|---|---|---|---|"]
        rows = [(WIRELESS[0][0], WIRELESS[0][1], base)] + [
            (rt, d, {c: mean_ci(by[(rt, d, c)])[0] for c in ("reno", "westwood+", "sarbe")}) for (rt, d) in WIRELESS[1:]
            if (rt, d, "sarbe") in by]
        for rt, d, g in rows:
            if len(g) < 3:
                continue
            L.append(
                f"| {rt}, {d} | {g['reno']:.3f} | {g['westwood+']:.3f} | {g['sarbe']:.3f} | "
                f"{(g['sarbe'] / g['reno'] - 1) * 100:+.0f} % | {(g['sarbe'] / g['westwood+'] - 1) * 100:+.0f} % |"
            )
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
    L += ["", "## Fig. 2: estimate minus available bandwidth (Mb/s of payload)", "",
          "| experiment | interval | Westwood+ mean / mean abs | SARBE mean / mean abs | SARBE, 1 us ticks |",
          "|---|---|---|---|---|"]
    for key, spans in (
        ("tracking", [(0, 30)]),
        ("tracking_fast", [(0, 30)]),
        ("ack_compression", [(0, 30), (30, 120), (120, 150)]),
    ):
        by_cc = {(_p(r, "tcp"), _p(r, "ts_tick") or "1ms"): r for r in res[key]}
        for t0, t1 in spans:
            cells = []
            for k in (("westwood+", "1ms"), ("sarbe", "1ms"), ("sarbe", "1us")):
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
    L += ["", "## Fig. 5b: 5 SARBE flows with 5 others at 1 % loss (mean goodput per flow / fair share)", "",
          "| others | SARBE flows | other flows | fair share (Mb/s) |", "|---|---|---|---|"]
    for o, (mine, other, fs) in friendliness_table(res["friendliness"]).items():
        L.append(f"| {LABEL[o]} | {fmt_ci(*mean_ci(mine)[:2])} | {fmt_ci(*mean_ci(other)[:2])} | {fs:.3f} |")
    if made:
        L += ["", "Figures: " + ", ".join(made)]
    return "\n".join(L) + "\n"


def main(a: argparse.Namespace) -> int:
    quick = bool(getattr(a, "quick", False))
    seeds = getattr(a, "seeds", None) or (3 if quick else 10)
    out = Path(getattr(a, "out", None) or "results/reproduce-sarbe")
    out.mkdir(parents=True, exist_ok=True)
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
    text = report(res, seeds, wall, made)
    (out / "report.md").write_text(text)
    print(text)
    print(f"report: {out / 'report.md'}")
    return 0


def run(**kw: Any) -> int:
    """``netreturn.reproduce.sarbe.run(seeds=3, quick=True)`` from Python."""
    return main(argparse.Namespace(**kw))
