"""Same scenario, both worlds: one scenario file run in the simulator
(``netreturn.run``) and in the namespace testbed, reported side by side.

``netreturn testbed compare [SCENARIO] --sweep queue=droptail,ewt --reps N``
writes ``<out>/sim/`` (the simulator's usual results), ``<out>/testbed/``
(the testbed sweep's), and ``compare.csv`` / ``compare.png`` with, for every
setting and world, mean ± 95 % CI over repetitions of: FCT (mean, slowest),
goodput, fairness, utilization, TCP efficiency, loss ratio, bottleneck
drops, retransmitted bytes, fast recoveries and RTO expiries (the
senders' kernels' counters in the testbed), RTT (mean, median, max),
queueing delay (RTT minus the propagation RTT), ACKs rewritten.

The repetitions are seeds in the simulator (1..N) and repeated real runs in
the testbed; repetition r starts its flows at the simulator's draws for
seed r (``Plan.flow_plan``), so the two worlds' runs pair up.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from .scenario import access_of, access_text, plan as make_plan
from .sweep import Options, expand, sweep as tb_sweep, write_tables

DEFAULT_SCENARIO = "testbed/dumbbell4"
DEFAULT_SWEEP = {"queue": ["droptail", "ewt"]}

#: (column, label) of the side-by-side table.
METRICS: list[tuple[str, str]] = [
    ("fct_mean_s", "mean FCT (ms)"),
    ("fct_max_s", "slowest FCT (ms)"),
    ("goodput_mean_mbps", "mean goodput (Mb/s)"),
    ("jain_goodput", "Jain fairness (goodput)"),
    ("utilization", "bottleneck utilization"),
    ("tcp_efficiency_pct", "TCP efficiency (%)"),
    ("tcp_data_loss_pct", "data loss (%)"),
    ("queue_drops", "bottleneck drops (packets)"),
    ("retransmitted_kB", "retransmitted (kB)"),
    ("fast_recoveries", "fast recoveries"),
    ("timeouts", "RTO expiries"),
    ("rtt_mean_ms", "mean RTT (ms)"),
    ("rtt_p50_ms", "median RTT (ms)"),
    ("rtt_max_ms", "max RTT (ms)"),
    ("queue_delay_mean_ms", "mean queueing delay (ms)"),
    ("acks_rewritten", "ACKs rewritten"),
]


def _sim_frame(res, base_rtt_ms: float):
    """The simulator's runs with the derived comparable columns."""
    runs = res.runs.copy()  # one row per entry of res.raw, in order
    runs["retransmitted_kB"] = [sum(r["flows"]["bytes_retransmitted"]) / 1000 for r in res.raw]
    runs["queue_delay_mean_ms"] = runs["rtt_mean_ms"] - base_rtt_ms
    return runs


def _tb_frame(raw: list[dict]):
    from .sweep import runs_frame

    runs = runs_frame(raw)
    runs["retransmitted_kB"] = [sum(x or 0 for x in r["flows"]["bytes_retransmitted"]) / 1000 for r in raw]
    return runs


def side_by_side(sim_runs, tb_runs, group_keys: Sequence[str], metrics=METRICS):
    """Long table: group, world, metric, mean, ci95, n."""
    import pandas as pd

    from ..stats import mean_ci

    rows = []
    for world, df in (("sim", sim_runs), ("testbed", tb_runs)):
        if df is None or df.empty:
            continue
        df = df.copy()
        for k in group_keys:
            df[k] = df[k].astype(str)
        groups = df.groupby(list(group_keys), sort=False) if group_keys else [((), df)]
        for gkey, g in groups:
            if not isinstance(gkey, tuple):
                gkey = (gkey,)
            label = ",".join(f"{k}={v}" for k, v in zip(group_keys, gkey)) or "all"
            for col, _ in metrics:
                if col not in g:
                    continue
                vals = pd.to_numeric(g[col], errors="coerce").tolist()
                m, h, n = mean_ci(vals)
                rows.append({"group": label, "world": world, "metric": col, "mean": m, "ci95": h, "n": n})
    return pd.DataFrame(rows)


def _by_setting(sim_runs, tb_runs, group_keys: Sequence[str]):
    """Each setting the testbed ran (the values of ``group_keys``, as text),
    with its testbed runs and the simulator's runs of the same setting."""
    groups = tb_runs.groupby(list(group_keys), sort=False) if group_keys else [((), tb_runs)]
    for gkey, tb in groups:
        gkey = tuple(str(v) for v in (gkey if isinstance(gkey, tuple) else (gkey,)))
        sim = sim_runs
        for k, v in zip(group_keys, gkey):
            sim = sim[sim[k].astype(str) == v]
        yield gkey, tb, sim


#: The world label of the paired differences in the long table.
PAIRED = "testbed - sim, paired"


def paired(sim_runs, tb_runs, group_keys: Sequence[str], metrics=METRICS):
    """Long table (group, world = :data:`PAIRED`, metric, mean, ci95, n) of
    the testbed's value minus the simulator's, run by run: repetition r
    against seed r, which start their flows at the same times
    (``Plan.flow_plan``). The spread the start times give both worlds
    alike drops out, so a difference shows where unpaired CIs overlap."""
    import pandas as pd

    from ..stats import mean_ci

    rows = []
    if sim_runs is None or tb_runs is None or sim_runs.empty or tb_runs.empty:
        return pd.DataFrame(rows)
    for gkey, g, s in _by_setting(sim_runs, tb_runs, group_keys):
        label = ",".join(f"{k}={v}" for k, v in zip(group_keys, gkey)) or "all"
        by_seed = {int(x["seed"]): x for _, x in s.iterrows()}
        for col, _ in metrics:
            if col not in g or col not in s:
                continue
            diffs = [float(x[col]) - float(by_seed[int(x["seed"])][col]) for _, x in g.iterrows()
                     if int(x["seed"]) in by_seed]
            m, h, n = mean_ci(diffs)
            rows.append({"group": label, "world": PAIRED, "metric": col, "mean": m, "ci95": h, "n": n})
    return pd.DataFrame(rows)


#: The reference the validation summary names for the testbed's runs.
LINUX_REFERENCE = "Linux 6.18 in namespaces"
#: Metrics of an agreement cell (``validate --summary``): what both worlds
#: measure the same way (the queueing delay and RTTs include the simulator's
#: sender-side NIC queue, which Linux's TSQ avoids: docs/testbed.md).
AGREEMENT: list[tuple[str, str]] = [
    ("fct_mean_s", "mean FCT"),
    ("goodput_mean_mbps", "goodput"),
    ("jain_goodput", "Jain"),
    ("utilization", "utilization"),
    ("tcp_efficiency_pct", "TCP efficiency"),
    ("tcp_data_loss_pct", "data loss"),
    ("rtt_p50_ms", "median RTT"),
    # The senders' kernels' counters (runs recorded from session 23 on; a
    # run without them leaves these cells out).
    ("fast_recoveries", "fast recoveries"),
    ("timeouts", "RTO expiries"),
]


def profile_setting(sim_profile: str) -> dict[str, str]:
    """What a cell's setting says of the simulator's TCP profile: nothing
    for its own defaults (``ns3``, the cells made before profiles existed),
    ``sim_profile`` otherwise."""
    return {} if sim_profile == "ns3" else {"sim_profile": sim_profile}


def cell_name(scenario: str, setting: Mapping[str, Any]) -> str:
    """The cell record of one setting of ``scenario`` against Linux:
    ``linux_dumbbell4_queue-ewt_tcp-cubic`` (settings in name order; a
    value's spaces, as a sysctl's ``4096 131072 N``, written ``+``)."""
    tag = "_".join(f"{k}-{str(setting[k]).replace(' ', '+')}" for k in sorted(setting))
    return f"linux_{Path(str(scenario)).stem}" + (f"_{tag}" if tag else "")


def agreement_records(sim_runs, tb_runs, group_keys: Sequence[str], scenario: str, out: Path,
                      sets: Mapping[str, Any] | None = None) -> list[Path]:
    """A cell record per setting (the values of ``group_keys``) for
    ``netreturn validate --summary``: per metric of :data:`AGREEMENT`, the
    testbed's runs as the reference and the simulator's as ours; written
    under ``<out>/cells/``. The settings of ``sets`` name the cell too."""
    import pandas as pd

    from ..valrecords import record, write_record

    paths = []
    for gkey, tb, sim in _by_setting(sim_runs, tb_runs, group_keys):
        setting = {**dict(sets or {}), **dict(zip(group_keys, gkey))}
        rows = [(col, label, pd.to_numeric(tb[col], errors="coerce").tolist(),
                 pd.to_numeric(sim[col], errors="coerce").tolist())
                for col, label in AGREEMENT if col in tb and col in sim]
        rec = record(LINUX_REFERENCE, rows, scenario=str(scenario), setting=setting, seeds=list(range(1, len(tb) + 1)),
                     runs_testbed=len(tb), runs_sim=len(sim))
        paths.append(write_record(out, cell_name(scenario, setting), rec))
    return paths


def table_text(long, metrics=METRICS) -> str:
    from ..report import ci_table

    if long.empty:
        return "(no runs)"
    groups = list(dict.fromkeys(long["group"]))
    worlds = [w for w in ("sim", "testbed", PAIRED) if (long.world == w).any()]

    def cells(col):
        for g in groups:
            for w in worlds:
                sel = long[(long.group == g) & (long.world == w) & (long.metric == col)]
                yield (sel["mean"].iloc[0], sel["ci95"].iloc[0]) if len(sel) else None

    return ci_table(["metric"] + [f"{g} {w}" for g in groups for w in worlds], metrics, cells)


def plot(long, path: Path, title: str, metrics=METRICS) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [(c, lab) for c, lab in metrics if c in set(long.metric) and long[long.metric == c]["mean"].notna().any()]
    groups = list(dict.fromkeys(long["group"]))
    cols = 4
    rows = max(1, math.ceil(len(names) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.7 * rows), squeeze=False)
    for ax, (c, label) in zip(axes.flat, names):
        for j, (world, color) in enumerate((("sim", "#4c72b0"), ("testbed", "#dd8452"))):
            xs, ys, es = [], [], []
            for i, g in enumerate(groups):
                sel = long[(long.group == g) & (long.world == world) & (long.metric == c)]
                if len(sel):
                    xs.append(i + (j - 0.5) * 0.38)
                    ys.append(sel["mean"].iloc[0])
                    es.append(0 if math.isnan(sel["ci95"].iloc[0]) else sel["ci95"].iloc[0])
            ax.bar(xs, ys, width=0.36, yerr=es, capsize=2, color=color, label=world)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([g.split("=")[-1] if g.count("=") == 1 else g for g in groups], fontsize=7)
        ax.set_title(label, fontsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    if names:
        axes.flat[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def compare(out: Path, scenario: str = DEFAULT_SCENARIO, sweep: Mapping[str, Sequence[Any]] | None = None,
            sets: Mapping[str, Any] | None = None, reps: int | None = None, opts: Options | None = None,
            progress: bool = True, plots: bool = True, jobs: int | None = None,
            labels: Mapping[str, str] | None = None, sim_profile: str = "ns3") -> str:
    """Runs both worlds; writes the tables; returns the text to print. The
    simulator's TCP takes ``sim_profile``'s defaults (``tcp.profile``): its
    cells carry it in their setting (and name) unless it is ``ns3``."""
    from ..api import run as sim_run

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sweep = dict(sweep if sweep is not None else DEFAULT_SWEEP)
    sets = dict(sets or {})
    keys = list(sweep)
    pl = None
    for c in expand(sweep):
        # both worlds' validation, before anything runs
        pl = make_plan(scenario, {**sets, **c}, access_of(labels))
    assert pl is not None
    n = reps or pl.reps
    sim_sets = {**sets, "tcp.profile": sim_profile}
    sim_out = out / ("sim" if sim_profile == "ns3" else f"sim-{sim_profile}")
    res = sim_run(scenario, set=sim_sets, sweep=sweep, seeds=n, out=sim_out, progress=progress, jobs=jobs,
                  tables=False)
    sim_runs = _sim_frame(res, pl.base_rtt_s * 1000)
    sim_runs.to_csv(sim_out / "runs.csv", index=False)
    res.flows.to_csv(sim_out / "flows.csv", index=False)
    raw, _, _ = tb_sweep(scenario, out / "testbed", sets, sweep, n, opts, progress, labels)
    write_tables(raw, out / "testbed", keys)
    tb_runs = _tb_frame(raw)
    import pandas as pd

    long = pd.concat([side_by_side(sim_runs, tb_runs, keys), paired(sim_runs, tb_runs, keys)], ignore_index=True)
    long.to_csv(out / "compare.csv", index=False)
    # The testbed's labels that are not defaults (--access shaped, --datapath
    # kernel) name the cells too: each is another testbed.
    cells = agreement_records(sim_runs, tb_runs, keys, scenario, out,
                              {**sets, **profile_setting(sim_profile), **dict(labels or {})})
    text = [f"{pl.name}: {pl.file}",
            f"  propagation RTT {pl.base_rtt_s * 1000:.0f} ms, bottleneck {pl.bottleneck_bps / 1e6:g} Mb/s, "
            f"buffer {pl.buffer_bytes / 1000:.0f} kB, {len(pl.flows)} flows; {n} repetitions per world; the "
            f"simulator's TCP profile: {sim_profile}",
            f"  the testbed's hosts' links: {access_text(access_of(labels))}",
            *([f"  every end host sets: {(labels or {})['sysctl'].replace(';', ', ')} (--host-sysctl)"]
              if (labels or {}).get("sysctl") else []),
            *(f"  note: {x}" for x in pl.notes), "",
            table_text(long)]
    if plots:
        text.append(
            "\nplot: " + str(plot(long, out / "compare.png", f"{pl.name}: simulator vs testbed (mean, 95 % CI)"))
        )
    text.append(f"tables: {out / 'compare.csv'}, {sim_out}/, {out / 'testbed'}/; agreement cells "
                f"(netreturn validate --summary --out {out}): {', '.join(p.stem for p in cells)}")
    return "\n".join(text)
