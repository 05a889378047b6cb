"""Ours' side of the stored cell records, run again; the reference's kept.

A cell record (:mod:`netreturn.valrecords`) holds, per metric, every
reference run ("ref") and every run of ours ("ours"). When our simulator
changes, the reference runs stay valid, and where their raw store is not on
this machine (the dumbbells' ns-3 runs, the testbed's repetitions) they
still live in the records. :func:`resim` re-runs only ours for each
record's configuration and seeds and rewrites "ours", so the summary can be
remade after a change of ours without starting any reference simulator
(``netreturn validate --summary --resim-ours --out DIR``). At an unchanged
build it rewrites nothing: the records' "ours" are reproducible
(``tests/test_valresim.py``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable, Iterable

#: A record's ours' runs: {(metric, where): [value per run]}.
Ours = dict[tuple[str, str], list[float]]


def _dumbbell_senders(rec: dict, name: str) -> tuple[str, bool]:
    """(tcp, ecn) of a dumbbell record: those whose cell name
    (:func:`netreturn.validate.cell_tag`) is the record's own; older records
    do not store them."""
    from .validate import DEFAULT_PRR, cell_tag

    fixed = (rec["flows"], rec["queue"], rec.get("prr", DEFAULT_PRR), rec["scenario"], bool(rec.get("aligned")),
             rec.get("phase_ns", 0))
    tail = (rec.get("ns3_ecn", "ns3"), rec.get("ns3_fqcodel", "ns3"), rec.get("ours_sets"))
    stored = (rec.get("tcp", "cubic"), bool(rec.get("ecn", False)))
    for tcp, ecn in [stored, *((t, e) for t in ("cubic", "newreno", "dctcp", "bbr", "prague") for e in (False, True))]:
        if cell_tag(*fixed, tcp, ecn, *tail) == name:
            return tcp, ecn
    raise ValueError(f"no sender gives the cell name {name!r}")


def _dumbbell(rec: dict, jobs: int | None, name: str = "") -> Ours:
    from .validate import ours_runs, ours_scenario, ours_settings

    tcp, ecn = _dumbbell_senders(rec, name) if name else (rec.get("tcp", "cubic"), bool(rec.get("ecn", False)))
    settings = ours_settings(rec["flows"], rec["queue"], rec.get("phase_ns", 0), tcp, ecn, rec.get("ours_sets"))
    scenario = rec.get("netreturn_scenario") or ours_scenario(rec["scenario"], bool(rec.get("aligned")))
    runs = ours_runs(scenario, settings, list(rec["seeds"]), jobs)
    keys = {k for r in runs for k in r}
    return {(k, ""): [r.get(k, math.nan) for r in runs] for k in keys}


def _ngwa(rec: dict, jobs: int | None, name: str = "") -> Ours:
    from . import ns3ngwa
    from .validate_ngwa import WHERE, _ours

    out: Ours = {}
    for scenario, seeds in rec["seeds_by_scenario"].items():
        runs = _ours(scenario, rec["overrides"], seeds, jobs)
        for m, _ in ns3ngwa.METRICS:
            out[(m, WHERE[scenario])] = [r.get(m, math.nan) for r in runs]
    return out


def _lossy(rec: dict, jobs: int | None, name: str = "") -> Ours:
    from .validate_lossy import METRICS, NS2_LABEL, ours_runs

    losses = list(rec["losses"])
    # Every ns-2 record's reference label starts with NS2_LABEL (the repaired
    # ones add what was repaired); ours then runs ns2lossy.ALIGN.
    ns2 = str(rec.get("reference", "")).startswith(NS2_LABEL)
    rows = ours_runs(rec["cc"], losses, len(rec["seeds"]), dict(rec.get("sets") or {}), "ns2" if ns2 else "ns3", jobs)
    return {(key, f"loss {loss * 100:g} %"): [r.get(key, math.nan) for r in rows
                                               if math.isclose(float(r["loss"]), loss)]
            for loss in losses for key, _ in METRICS}


def _linux(rec: dict, jobs: int | None, name: str = "") -> Ours:
    from .api import run
    from .testbed.compare import AGREEMENT, _sim_frame
    from .testbed.scenario import plan

    setting = dict(rec["setting"])
    profile = setting.pop("sim_profile", "ns3")
    pl = plan(rec["scenario"], setting)
    res = run(rec["scenario"], set={**setting, "tcp.profile": profile}, seeds=int(rec["runs_sim"]), jobs=jobs,
              progress=False, tables=False)
    sim = _sim_frame(res, pl.base_rtt_s * 1000)
    return {(col, ""): [float(x) for x in sim[col].tolist()] for col, _ in AGREEMENT if col in sim}


def kind_of(rec: dict) -> str | None:
    """Which configuration a record describes: ``dumbbell``, ``ngwa``,
    ``lossy``, ``linux``; None for one whose ours' side this module does not
    make (XCP's records: ``netreturn validate --summary --regenerate
    --cached`` remakes them from ns-2's stored runs)."""
    if "runs_testbed" in rec:
        return "linux"
    if "flows" in rec and "queue" in rec:
        return "dumbbell"
    if "row" in rec and "seeds_by_scenario" in rec:
        return "ngwa"
    if "cc" in rec and "losses" in rec:
        return "lossy"
    return None


RUNNERS: dict[str, Callable[[dict, int | None, str], Ours]] = {
    "dumbbell": _dumbbell, "ngwa": _ngwa, "lossy": _lossy, "linux": _linux}


def resim_record(rec: dict, jobs: int | None = None, name: str = "") -> tuple[dict, int]:
    """``rec`` (stored as ``name``) with ours' runs made again by this
    build, and how many of its metric cells changed. Raises ValueError for a
    record of no known kind, or when ours' runs do not cover a metric cell
    of the record."""
    kind = kind_of(rec)
    if kind is None:
        raise ValueError("a record of no kind this module re-runs (XCP: regenerate it from ns-2's store)")
    ours = RUNNERS[kind](rec, jobs, name)
    changed = 0
    metrics = []
    for m in rec["metrics"]:
        key = (m["metric"], m.get("where", ""))
        if key not in ours:
            raise ValueError(f"ours' runs have no {key[0]!r} at {key[1]!r}")
        new = [float(x) for x in ours[key]]
        same = len(new) == len(m["ours"]) and all(
            (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(new, (float(x) for x in m["ours"])))
        changed += not same
        metrics.append({**m, "ours": new})
    return {**rec, "metrics": metrics}, changed


def resim(out: Path, match: str = "", jobs: int | None = None, progress: bool = False,
          names: Iterable[str] | None = None) -> list[str]:
    """Re-run ours' side of every record under ``<out>/cells/`` (whose name
    contains ``match``; or those of ``names``) and rewrite it; returns a line
    per record: its name and how many metric cells changed, or why it was
    left."""
    from .valrecords import CELLS, read_record, write_record

    paths = sorted((Path(out) / CELLS).glob("*.json"))
    wanted = set(names) if names is not None else None
    lines = []
    for p in paths:
        name = p.stem
        if match not in name or (wanted is not None and name not in wanted):
            continue
        rec = read_record(out, name)
        if rec is None:
            continue
        try:
            new, changed = resim_record(rec, jobs, name)
        except ValueError as e:
            lines.append(f"{name}: left as stored ({e})")
            continue
        if changed:
            write_record(out, name, new)
        lines.append(f"{name}: {changed} of {len(rec['metrics'])} metric cells changed")
        if progress:
            print(lines[-1], flush=True)
    return lines
