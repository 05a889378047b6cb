"""``netreturn validate --scenario sarbe/lossy_link``: the SARBE paper's lossy
wireless link (docs/decisions.md §5.5) in ns-3 3.44 and in netreturn, one table per
congestion control, a row per loss rate (issue 14 item 5).

Ours runs ``scenarios/sarbe/lossy_link.toml`` with ``tcp`` = the congestion
control and ``loss`` = the wireless hop's loss; ns-3 runs the same document
through :mod:`netreturn.ns3lossy` (``TcpNewReno`` or ``TcpWestwoodPlus``).
Each seed is an independent replication in both (their loss draws come from
different generators); a cell is mean ± 95 % CI and the verdict the same as
:func:`netreturn.validate.agree`. ns-3 results are kept under
``<out>/ns3/`` (one JSON per cc/loss/seed), so a rerun only runs new ones.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from .files import atomic_write
from .stats import agree, mean_ci
from .table import ci, render, unit_of

SCENARIO = "sarbe/lossy_link"
#: Fig. 3b's loss rates (0.001 % to 10 %), as fractions: the scenario's ``loss``.
LOSSES = (0.00001, 0.0001, 0.001, 0.01, 0.03, 0.1)
#: (metric, label) compared per loss rate.
METRICS = [
    ("goodput_mean_mbps", "goodput (Mb/s)"),
    ("tcp_data_loss_pct", "data loss (%)"),
    ("tcp_efficiency_pct", "efficiency (%)"),
    ("fast_recoveries", "fast recoveries"),
    ("timeouts", "RTOs"),
]


def ns3_cache_path(out: Path, cc: str, loss: float, seed: int, renosack: str = "linux", sets: dict | None = None,
                   westwood: str = "ns3", loss_exit: str = "ns3") -> Path:
    """Where one ns-3 run of the lossy link is kept: ``<out>/ns3/lossy2_<cc>_..._loss<p>_seed<n>.json``."""
    # v2: `timeouts` counts every RTO expiry (v1 counted entries into CA_LOSS).
    tag = "".join(f"_{k}-{v}" for k, v in sorted((sets or {}).items()))
    if cc == "westwood+" and westwood != "ns3":
        tag += f"_westwood-{westwood}"
    if loss_exit != "ns3":
        tag += f"_lossexit-{loss_exit}"
    return Path(out) / "ns3" / f"lossy2_{cc}_renosack-{renosack}{tag}_loss{loss:g}_seed{seed}.json"


def _ns3(cc: str, loss_rates: tuple[float, ...], seeds: list[int], out: Path,
         renosack: str = "linux", sets: dict | None = None, westwood: str = "ns3",
         loss_exit: str = "ns3") -> dict[float, list[dict]]:
    from . import ns3lossy, ns3ref

    (out / "ns3").mkdir(parents=True, exist_ok=True)
    path = lambda loss, s: ns3_cache_path(out, cc, loss, s, renosack, sets, westwood, loss_exit)  # noqa: E731
    res = {}
    for loss in loss_rates:
        todo = [s for s in seeds if not path(loss, s).exists()]
        if todo:
            if not ns3ref.available():
                raise RuntimeError("ns-3 is not installed: pip install 'netreturn[ns3]' (PyPI package ns3==3.44.post0)")
            for r in ns3lossy.run_lossy(cc, loss, todo, renosack=renosack, overrides=sets, westwood=westwood,
                                        loss_exit=loss_exit):
                atomic_write(path(loss, r["seed"]), json.dumps(r, allow_nan=True))
        runs = [json.loads(path(loss, s).read_text()) for s in seeds]
        for r in runs:  # cached before ns3lossy computed it
            r.setdefault("tcp_data_loss_pct", ns3lossy.data_loss_pct(r))
        res[loss] = runs
    return res


#: The reference of the repaired cell: ns-3 with Westwood+'s delivered count
#: as Linux's (``--ns3-westwood deduct``; issue 25 item 3).
REPAIRED_LABEL = "ns-3 3.44 with Westwood+'s count repaired"
#: ... and its estimator as Linux's (``--ns3-westwood linux``), with SACK.
SACK_REPAIRED_LABEL = "ns-3 3.44 with SACK, Westwood+'s count and estimator as Linux's"
#: ... with cwnd grown on the ACK that ends CA_LOSS as RFC 5681 section 3.1
#: (``--ns3-loss-exit rfc5681``; ns-3 3.44 gives that ACK no segment).
LOSS_EXIT_LABEL = "ns-3 3.44 with SACK, cwnd grown on the ACK that ends CA_LOSS"


#: Both simulators with SACK, aligned (``--set`` of the summary's SACK
#: cells): RFC 6675 recovery with PRR in both (ns-3 with ns-3-dev's repaired
#: PRR), and ours restarting the retransmission timer only on a recovery's
#: first partial ACK, as ns-3 does in every recovery (``tcp.sack_impatient``;
#: docs/validation.md, "Westwood+ with SACK on both sides, ns-3 repaired");
#: and ours setting ssthresh at a loss from RFC 6675's pipe, as ns-3's
#: ``EnterRecovery`` and ``ReTxTimeout`` do (``tcp.loss_ssthresh = "ns3"``;
#: docs/validation.md, "NewReno with SACK: the FlightSize that sets ssthresh").
SACK_ALIGNED = {"sack": "true", "recovery": "prr", "tcp.sack_impatient": "true", "tcp.loss_ssthresh": "ns3"}
#: Without SACK, ours setting ssthresh at a loss from the flight ns-3 counts
#: on its scoreboard guessed from duplicate ACKs (``tcp.loss_ssthresh =
#: "ns3"``; docs/validation.md, "NewReno without SACK: ns-3's flight at a
#: loss").
NOSACK_ALIGNED = {"tcp.loss_ssthresh": "ns3"}
#: Against ns-2.35, ours setting ssthresh at a loss as ns-2's NewReno does:
#: half its uninflated window in whole segments (``tcp.loss_ssthresh =
#: "ns2"``; docs/validation.md, "NewReno against ns-2.35: the ssthresh at a
#: timeout inside a recovery").
NS2_ALIGNED = {"tcp.loss_ssthresh": "ns2"}


def cell_of(cc: str, renosack: str, westwood: str, sets: dict | None = None, loss_exit: str = "ns3") -> str | None:
    """The summary's cell record a run of Fig. 3b makes: ns-3
    with the Reno scoreboard cleared at recovery's end (``lossy_<cc>``), and
    for Westwood+ also with its delivered count repaired
    (``lossy_westwood+_repaired``); with recovery left without loss marks
    too (``renosack="rfc6582"``) the same names ending ``_rfc6582``, with no
    guessed mark outside recovery (``"rfc6582-strict"``) ending
    ``_rfc6582_strict``; with
    SACK in both, aligned (:data:`SACK_ALIGNED`), ``lossy_newreno_sack`` and,
    Westwood+ with its count and estimator repaired (``westwood="linux"``),
    ``lossy_westwood+_sack_repaired``; those two with ns-3's CA_LOSS exit
    repaired too (``loss_exit="rfc5681"``) ending ``_lossexit``; without
    SACK, ns-3 with ``rfc6582-strict`` and the CA_LOSS exit repaired,
    ``..._rfc6582_strict_lossexit``, and NewReno so with ours on
    :data:`NOSACK_ALIGNED` too,
    ``lossy_newreno_rfc6582_strict_lossexit_ns3flight``; None for other
    configurations."""
    if loss_exit not in ("ns3", "rfc5681"):
        return None
    exit_tail = "_lossexit" if loss_exit == "rfc5681" else ""
    if sets and dict(sets) == NOSACK_ALIGNED:
        ok = cc == "newreno" and renosack == "rfc6582-strict" and loss_exit == "rfc5681"
        return "lossy_newreno_rfc6582_strict_lossexit_ns3flight" if ok else None
    if sets:
        if dict(sets) != SACK_ALIGNED or renosack != "linux":
            return None
        if cc == "newreno":
            return "lossy_newreno_sack" + exit_tail
        return "lossy_westwood+_sack_repaired" + exit_tail if westwood == "linux" else None
    if renosack not in ("linux", "rfc6582", "rfc6582-strict") or (exit_tail and renosack != "rfc6582-strict"):
        return None
    tail = {"linux": "", "rfc6582": "_rfc6582", "rfc6582-strict": "_rfc6582_strict"}[renosack] + exit_tail
    if cc == "newreno" or westwood == "ns3":
        return f"lossy_{cc}{tail}"
    return f"lossy_{cc}_repaired{tail}" if westwood == "deduct" else None


#: The ns-2.35 reference (``--reference ns2``; issue 25 item 3): ns-2's own
#: Agent/TCP/Newreno and TCPSink (netreturn.ns2lossy), its cell and label.
NS2_CELL = "lossy_newreno_ns2"
NS2_LABEL = "ns-2.35 (Agent/TCP/Newreno, TCPSink)"
#: ... with ns-2's recovery point repaired to RFC 6582's (``--ns2-newreno rfc6582``).
NS2_RFC6582_LABEL = NS2_LABEL + ", RFC 6582's recovery point (lessCareful_ 1)"


def ns2_cell_of(sets: dict | None, newreno: str = "careful") -> str | None:
    """The summary's cell record a run of Fig. 3b against ns-2 makes:
    ``lossy_newreno_ns2``, ending ``_rfc6582`` with ns-2's recovery point
    repaired, and then ``_ns2ssthresh`` with ours on ns-2's ssthresh
    (:data:`NS2_ALIGNED`); None for other settings of ours."""
    base = NS2_CELL + ("_rfc6582" if newreno == "rfc6582" else "")
    if not sets:
        return base
    return base + "_ns2ssthresh" if dict(sets) == NS2_ALIGNED else None


def ns2_cache_path(out: Path, cc: str, loss: float, seed: int, newreno: str = "careful") -> Path:
    """Where one ns-2 run of the lossy link is kept: ``<out>/ns2/lossy_<cc>_loss<p>_seed<n>.json``,
    with ``_<rule>`` after ``<cc>`` when ns-2's NewReno rule is not the shipped one
    (``ns2lossy.NEWRENO_RULES``)."""
    tail = "" if newreno == "careful" else f"_{newreno}"
    return Path(out) / "ns2" / f"lossy_{cc}{tail}_loss{loss:g}_seed{seed}.json"


def _ns2(cc: str, loss_rates: tuple[float, ...], seeds: list[int], out: Path, sets: dict,
         newreno: str = "careful") -> dict:
    from . import ns2lossy

    res = {}
    for loss in loss_rates:
        todo = [s for s in seeds if not ns2_cache_path(out, cc, loss, s, newreno).exists()]
        if todo:
            ns2_cache_path(out, cc, loss, todo[0], newreno).parent.mkdir(parents=True, exist_ok=True)
            for r in ns2lossy.run_lossy(cc, loss, todo, overrides=sets, newreno=newreno):
                atomic_write(ns2_cache_path(out, cc, loss, r["seed"], newreno), json.dumps(r, allow_nan=True))
        res[loss] = [json.loads(ns2_cache_path(out, cc, loss, s, newreno).read_text()) for s in seeds]
    return res


#: The section of docs/validation.md on this link (the start of its heading).
EXPLAINED_LOSSY = "Westwood+ and NewReno on the SARBE paper's lossy link"
#: ... and with ns-3's Reno scoreboard repaired (``--ns3-renosack rfc6582-strict``).
EXPLAINED_STRICT = "ns-3's NewReno without SACK as RFC 6582, repaired"


def explained(labels: list[str], section: str) -> str:
    """A line per metric that differs between ns-3 and netreturn, saying
    where docs/validation.md explains it ("" when all agree)."""
    return "\n".join(f'DIFFER {label}: explained in docs/validation.md, section "{section}..."' for label in labels)


def table(cc: str, rows: list[dict], ref: str = "ns-3") -> str:
    """A text table: a row per loss rate, ns-3 / ours per metric (each in its unit's format)."""
    body = []
    for r in rows:
        cells = [f"{r['loss'] * 100:g}"]
        for key, _ in METRICS:
            a, b = r[key]["ns3"], r[key]["netreturn"]
            v = r[key]["agree"]
            cells.append(f"{ci(*a[:2], unit_of(key))} / {ci(*b[:2], unit_of(key))}{' DIFFER' if v is False else ''}")
        body.append(cells)
    header = [f"{cc}: loss %"] + [f"{label}: {ref} / netreturn" for _, label in METRICS]
    return render(header, body)


def ours_runs(cc: str, loss_rates, nseeds: int, sets: dict, reference: str = "ns3", jobs: int | None = None,
              out: Path | None = None, progress: bool = False) -> list[dict]:
    """Our runs of Fig. 3b's loss rates, seeds 1..``nseeds``, a row each
    (with its ``loss``). Against ns-2, ours runs ns-2's rules where ns-2 has
    no switch (``ns2lossy.ALIGN``: the timer restarted at a fast
    retransmit)."""
    from .api import run
    from .ns2lossy import ALIGN

    ours_sets = {**ALIGN, **sets} if reference == "ns2" else sets
    res = run(SCENARIO, set={**ours_sets, "tcp": cc}, sweep={"loss": list(loss_rates)}, seeds=nseeds, jobs=jobs,
              out=out, progress=progress, tables=False)
    return res.run_rows()


def main(a, out: Path) -> int:
    seeds = list(range(1, a.seeds + 1))
    ccs = [a.cc] if a.cc else ["newreno", "westwood+"]
    loss_rates = a.loss or LOSSES
    renosack = getattr(a, "ns3_renosack", None) or "linux"
    westwood = getattr(a, "ns3_westwood", None) or "ns3"
    loss_exit = getattr(a, "ns3_loss_exit", None) or "ns3"
    # --set NAME=VALUE: parameters of the scenario (e.g. sack=true recovery=prr,
    # min_rto=1s), in both simulators.
    sets = dict(getattr(a, "sets", None) or [])
    reference = getattr(a, "reference", None) or "ns3"
    ns2_newreno = getattr(a, "ns2_newreno", None) or "careful"
    if reference == "ns2" and any(cc != "newreno" for cc in ccs):
        print(f"netreturn: error: --reference ns2 runs --cc newreno only (ns-2.35's Agent/TCP/Newreno), "
              f"not {', '.join(ccs)}", file=sys.stderr)
        return 2
    texts, csv = [], ["cc,loss,metric,ns3_mean,ns3_ci,netreturn_mean,netreturn_ci,agree"]
    for cc in ccs:
        if reference == "ns2":
            print(f"{SCENARIO}, {cc}, loss {', '.join(f'{x * 100:g} %' for x in loss_rates)}, seeds 1..{a.seeds}: "
                  f"{NS2_RFC6582_LABEL if ns2_newreno == 'rfc6582' else NS2_LABEL} vs netreturn")
        else:
            print(f"{SCENARIO}, {cc}, loss {', '.join(f'{x * 100:g} %' for x in loss_rates)}, seeds 1..{a.seeds}: "
                  f"ns-3 3.44 (Reno scoreboard: {renosack}"
                  f"{', Westwood+ count: ' + westwood if cc != 'newreno' else ''}) vs netreturn")
        try:
            if reference == "ns2":
                ns3 = _ns2(cc, loss_rates, seeds, out, sets, ns2_newreno)
            else:
                ns3 = _ns3(cc, loss_rates, seeds, out, renosack, sets, westwood, loss_exit)
        except RuntimeError as e:
            print(f"netreturn: error: {e}", file=sys.stderr)
            return 2
        ours = ours_runs(cc, loss_rates, a.seeds, sets, reference, a.jobs, out / "netreturn", not a.quiet)
        rows = []
        for loss in loss_rates:
            mine = [r for r in ours if math.isclose(float(r["loss"]), loss)]
            row: dict = {"loss": loss}
            for key, _ in METRICS:
                x = mean_ci(r.get(key, math.nan) for r in ns3[loss])
                y = mean_ci(r.get(key, math.nan) for r in mine)
                row[key] = {"ns3": x, "netreturn": y, "agree": agree(x, y)}
                csv.append(f"{cc},{loss},{key},{x[0]},{x[1]},{y[0]},{y[1]},{row[key]['agree']}")
            rows.append(row)
        cell = cell_of(cc, renosack, westwood, sets, loss_exit)
        if reference == "ns2":
            cell = None if tuple(loss_rates) != LOSSES else ns2_cell_of(sets, ns2_newreno)
        elif cell and tuple(loss_rates) != LOSSES and not cell.endswith("_repaired"):
            cell = None  # the shipped cells hold the whole of Fig. 3b; the repaired one may hold some of it
        if cell:  # a cell of the summary
            from .valrecords import record, write_record

            ns2_label = NS2_RFC6582_LABEL if ns2_newreno == "rfc6582" else NS2_LABEL
            label3 = (ns2_label if reference == "ns2" else LOSS_EXIT_LABEL if cell.endswith("_lossexit")
                      else SACK_REPAIRED_LABEL if cell.endswith("_sack_repaired")
                      else REPAIRED_LABEL if "_repaired" in cell else "ns-3 3.44")
            write_record(out, cell, record(
                label3, [(key, label, [r.get(key, math.nan) for r in ns3[loss]],
                          [r.get(key, math.nan) for r in ours if math.isclose(float(r["loss"]), loss)],
                          f"loss {loss * 100:g} %") for loss in loss_rates for key, label in METRICS],
                cc=cc, losses=list(loss_rates), seeds=seeds,
                **(({"ns2_newreno": ns2_newreno} if ns2_newreno != "careful" else {}) if reference == "ns2"
                   else {"renosack": renosack, "westwood": westwood}),
                **({"loss_exit": loss_exit} if loss_exit != "ns3" else {}),
                **({"sets": dict(sets)} if sets else {})))
        differ = explained([f"{cc}, loss {r['loss'] * 100:g} %, {label}" for r in rows for key, label in METRICS
                            if r[key]["agree"] is False],
                           EXPLAINED_STRICT if renosack == "rfc6582-strict" else EXPLAINED_LOSSY)
        texts.append(table(cc, rows, "ns-2" if reference == "ns2" else "ns-3") + (f"\n\n{differ}" if differ else ""))
        print("\n" + texts[-1] + "\n")
    stem = "validation_lossy_ns2" if reference == "ns2" else "validation_lossy"
    (out / f"{stem}.txt").write_text("\n\n".join(texts) + "\n")
    (out / f"{stem}.csv").write_text("\n".join(csv) + "\n")
    print(f"tables: {out / (stem + '.txt')}, {out / (stem + '.csv')}")
    return 0
