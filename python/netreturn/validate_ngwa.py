"""``netreturn validate --scenario ngwa``: NGWA's scenarios (the NGWA paper section 3,
docs/decisions.md §5.2) in ns-3 3.44, the paper's own simulator, with NGWA's
router rule, receiver rule and flow division in the harness
(:mod:`netreturn.ns3ngwa`, ``ns3cxx/ngwa.cc``), and in netreturn: a row per
test of the paper's Table 2 (RFC 793 TCP, NewReno, modes 1-8), the metrics
of :data:`netreturn.ns3ngwa.METRICS` in both scenarios ``netreturn reproduce
ngwa`` runs (Table 2's ``ngwa/rate`` and Fig. 3's ``ngwa/window``).

ns-3 runs are kept under ``<out>/ns3/`` (one JSON per scenario, row and
seed), so a rerun runs only new ones; each row leaves a cell record
``<out>/cells/ngwa_<row>.json`` for ``netreturn validate --summary``.

``--ns3-rfc793 strict`` runs the rows whose senders are RFC 793 TCP (CW
off) with the repaired stand-in (:data:`netreturn.ns3ngwa.RFC793`): records
``ngwa_<row>_rfc793-strict.json``, beside the as-built ones.
``--ns3-newreno rfc6582`` does the same for the rows whose senders are
NewReno (CW on; :data:`netreturn.ns3ngwa.NEWRENO`): records
``ngwa_<row>_newreno-rfc6582.json``.
``--ngwa-ours resend-snd-max`` runs ours' side with a setting of ours
(:data:`OURS`; records ``ngwa_<row>..._ours-resend-snd-max.json``): a rule
where the two implementations differ and both are allowed (branch ngwa10);
``--ngwa-ours ns3-resend-ns3-window`` resends and receives as ns-3,
``ns3-resend-window-queue`` with the router's extra queued packet too
(branch ngwa11).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Sequence

from .files import atomic_write
from .table import ci, render, unit_of

__all__ = ["REFERENCE", "cell_name", "main", "ns3_cache_path", "run_cell", "table"]

#: The reference as the summary names it.
REFERENCE = "ns-3 3.44 (ns3cxx/ngwa.cc)"
#: Phase randomization in both simulators (run.phase in ours, the same
#: offsets in ns-3): the window scenario starts its flows at fixed times,
#: so without it every seed would repeat one run in both.
PHASE_NS = 1_000_000
#: The fewest seeds a scenario of a cell is compared over (``run_cell(cached=True)``).
MIN_SEEDS = 3
#: Ours' settings a cell may switch (``--ngwa-ours``): name -> scenario settings. ``resend-snd-max``: a
#: go-back-N resend ends at SND.MAX, new data in segments of its own, as ns-3 3.44 resends its sent list
#: (docs/tcp.md ``resend_ends_at_snd_max``; docs/validation.md, branch ngwa10). ``ns3-resend-ns3-window``: a
#: resend cut from the segments as first sent, each with the next up to an MSS, as ns-3's sent list (docs/tcp.md
#: ``resend_merges_sent``), and the receiver offering its whole buffer from RCV.NXT, the out-of-order bytes it
#: holds inside it, as ns-3's ``TcpRxBuffer::MaxRxSequence`` (``window_deducts_ooo``); ``ns3-resend-window-queue``:
#: that, and the router's buffer one 1040-byte packet larger, as ns-3's, whose device queue holds one packet
#: under every queue disc ("NGWA in ns-3") (branch ngwa11).
_NS3_RESEND_WINDOW = {"tcp.resend_merges_sent": "true", "tcp.window_deducts_ooo": "false"}
OURS = {"resend-snd-max": {"tcp.resend_ends_at_snd_max": "true"},
        "ns3-resend-ns3-window": _NS3_RESEND_WINDOW,
        "ns3-resend-window-queue": {**_NS3_RESEND_WINDOW, "buffer": f"{97_000 + 1040}B"}}
#: Where each scenario's metrics stand in a record (the ``where`` of a row).
WHERE = {"ngwa/rate": "Table 2 (rate, 600 s)", "ngwa/window": "Fig. 3 (window, 180 s)"}


def rows() -> list[tuple[str, str, dict]]:
    """Table 2's tests: (name, key, scenario parameters), as ``reproduce ngwa``."""
    from .reproduce.ngwa import ROWS

    return ROWS


def rfc793_rows() -> list[str]:
    """The rows of Table 2 whose senders are RFC 793 TCP (no congestion
    window): the ones ``--ns3-rfc793`` changes."""
    from .ns3ngwa import MODES

    return [k for _, k, ov in rows()
            if (not MODES[int(ov["ngwa_mode"])][0] if int(ov.get("ngwa_mode", 0)) else ov.get("tcp") == "none")]


def newreno_rows() -> list[str]:
    """The rows of Table 2 whose senders are NewReno (CW on): the ones
    ``--ns3-newreno`` changes."""
    rfc793 = rfc793_rows()
    return [k for _, k, _ in rows() if k not in rfc793]


def _tag(rfc793: str, newreno: str = "ns3", mark: str = "qdisc", ours: str = "") -> str:
    return (("" if rfc793 == "ns3" else f"_rfc793-{rfc793}") + ("" if newreno == "ns3" else f"_newreno-{newreno}")
            + ("" if mark == "qdisc" else f"_mark-{mark}") + (f"_ours-{ours}" if ours else ""))


def cell_name(key: str, rfc793: str = "ns3", newreno: str = "ns3", mark: str = "qdisc", ours: str = "") -> str:
    """The cell record of Table 2's row ``key`` (e.g. ``mode6``), with the
    RFC 793 stand-in ``rfc793`` (``strict``: ``ngwa_mode3_rfc793-strict``)
    or the NewReno variant ``newreno`` (``ngwa_mode1_newreno-rfc6582``), routers marking at ``mark``
    (``tx``: ``ngwa_mode1_mark-tx``), ours with the settings :data:`OURS` names ``ours``
    (``resend-snd-max``: ``ngwa_mode3_..._ours-resend-snd-max``)."""
    return f"ngwa_{key}{_tag(rfc793, newreno, mark, ours)}"


def ns3_cache_path(out: Path, scenario: str, key: str, seed: int, rfc793: str = "ns3",
                   newreno: str = "ns3", mark: str = "qdisc") -> Path:
    """Where the ns-3 run of ``scenario``, row ``key``, ``seed`` is kept."""
    return (Path(out) / "ns3" / f"ngwa_{scenario.split('/')[-1]}_{key}{_tag(rfc793, newreno, mark)}"
            f"_phase{PHASE_NS}ns_seed{seed}.json")


def fill(scenario: str, keys: Sequence[str], seeds: Sequence[int], out: Path, rfc793: str = "ns3",
         newreno: str = "ns3", mark: str = "qdisc") -> None:
    """Run in ns-3 what the store lacks of rows ``keys`` of ``scenario``:
    one subprocess for the rows that lack the same seeds (cling's start-up,
    40-70 s, paid once), and store each run."""
    from . import ns3ngwa, ns3ref

    ovs = {k: ov for _, k, ov in rows()}
    todo: dict[tuple[int, ...], list[str]] = {}
    for k in keys:
        missing = tuple(s for s in seeds
                        if not ns3_cache_path(out, scenario, k, s, rfc793, newreno, mark).exists())
        if missing:
            todo.setdefault(missing, []).append(k)
    if todo and not ns3ref.available():
        raise RuntimeError("ns-3 is not installed: pip install 'netreturn[ns3]' (PyPI package ns3==3.44.post0)")
    for missing, ks in todo.items():
        def keep(i: int, r: dict, ks: list[str] = ks) -> None:  # each run stored as it arrives
            path = ns3_cache_path(out, scenario, ks[i], r["seed"], rfc793, newreno, mark)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, json.dumps(r, allow_nan=True))

        ns3ngwa.run_ngwa_many(scenario, [ovs[k] for k in ks], list(missing), phase_ns=PHASE_NS, on_run=keep,
                              rfc793=rfc793, newreno=newreno, mark=mark)


def _ns3(scenario: str, key: str, seeds: Sequence[int], out: Path, rfc793: str = "ns3",
         newreno: str = "ns3", mark: str = "qdisc") -> list[dict]:
    fill(scenario, [key], seeds, out, rfc793, newreno, mark)
    return [json.loads(ns3_cache_path(out, scenario, key, s, rfc793, newreno, mark).read_text()) for s in seeds]


def _ours(scenario: str, overrides: dict, seeds: Sequence[int], jobs: int | None) -> list[dict]:
    from .runner import RunSpec, run_many

    sets = {**{k: str(v) for k, v in overrides.items()}, "run.phase": f"{PHASE_NS}ns"}
    specs = [RunSpec.make(f"{scenario}.toml", sets, s) for s in seeds]
    return [r["summary"] for r in run_many(specs, jobs=jobs or 1, out=None)]


def run_cell(key: str, seeds: Sequence[int], out: Path, jobs: int | None = None, cached: bool = False,
             rfc793: str = "ns3", newreno: str = "ns3", mark: str = "qdisc", ours: str = "") -> dict:
    """Row ``key`` of Table 2 in both simulators, both scenarios; writes and
    returns its cell record. ``cached``: no ns-3 run; a scenario is compared
    over the seeds (of ``seeds``) whose ns-3 runs are stored, if at least
    :data:`MIN_SEEDS` (RuntimeError if no scenario has as many). ``rfc793``:
    ns-3's RFC 793 stand-in (:data:`netreturn.ns3ngwa.RFC793`; ``strict``
    only for the rows of :func:`rfc793_rows`); ``newreno``: ns-3's NewReno
    variant (:data:`netreturn.ns3ngwa.NEWRENO`, rows of :func:`newreno_rows`); ``mark``: when ns-3's routers
    mark (:data:`netreturn.ns3ngwa.MARKS`); ``ours``: ours' settings of :data:`OURS` (the record's
    overrides hold them, so ``--resim-ours`` runs them again)."""
    from . import ns3ngwa
    from .valrecords import record, write_record

    if rfc793 != "ns3" and key not in rfc793_rows():
        raise ValueError(f"--ns3-rfc793 {rfc793}: row {key} has congestion control (CW on); the RFC 793 stand-in "
                         f"runs only in rows {', '.join(rfc793_rows())}")
    if newreno != "ns3" and key not in newreno_rows():
        raise ValueError(f"--ns3-newreno {newreno}: row {key} has no congestion control (CW off); the NewReno "
                         f"variants run only in rows {', '.join(newreno_rows())}")
    if ours and ours not in OURS:
        raise ValueError(f"--ngwa-ours {ours}: not one of {', '.join(OURS)}")
    overrides = {**next(ov for _, k, ov in rows() if k == key), **(OURS[ours] if ours else {})}
    by_scenario = {sc: [s for s in seeds
                        if not cached or ns3_cache_path(out, sc, key, s, rfc793, newreno, mark).exists()]
                   for sc in ns3ngwa.SCENARIOS}
    by_scenario = {sc: ss for sc, ss in by_scenario.items() if len(ss) >= min(MIN_SEEDS, len(seeds))}
    if not by_scenario:
        raise RuntimeError(f"no ns-3 runs of NGWA's {key}{_tag(rfc793, newreno, mark)} stored for {MIN_SEEDS} of seeds "
                           f"{seeds[0]}-{seeds[-1]} "
                           f"under {out / 'ns3'}")
    scenarios = list(by_scenario)
    table = []
    for scenario, mine_seeds in by_scenario.items():
        ref = _ns3(scenario, key, mine_seeds, out, rfc793, newreno, mark)
        mine = _ours(scenario, overrides, mine_seeds, jobs)
        table += [(m, label, [r.get(m, math.nan) for r in ref], [r.get(m, math.nan) for r in mine], WHERE[scenario])
                  for m, label in ns3ngwa.METRICS]
    ref_name = (f"{REFERENCE}, RFC 793 stand-in {rfc793}" if rfc793 != "ns3"
                else f"{REFERENCE}, NewReno {newreno}" if newreno != "ns3" else REFERENCE)
    if mark != "qdisc":
        ref_name += f", marking at {mark}"
    if ours:
        ref_name += f"; ours with {', '.join(f'{k} = {v}' for k, v in OURS[ours].items())}"
    rec = record(ref_name, table, row=key, overrides=overrides, seeds=max(by_scenario.values(), key=len),
                 seeds_by_scenario=by_scenario, scenarios=scenarios, phase_ns=PHASE_NS,
                 **({"rfc793": rfc793} if rfc793 != "ns3" else {}),
                 **({"newreno": newreno} if newreno != "ns3" else {}),
                 **({"mark": mark} if mark != "qdisc" else {}), **({"ours": ours} if ours else {}))
    write_record(out, cell_name(key, rfc793, newreno, mark, ours), rec)
    return rec


def table(recs: dict[str, dict], markdown: bool = False) -> str:
    """A text table: a row per (test, scenario), ns-3 / ours per metric,
    DIFFER where they agree by neither 10 % nor the CIs."""
    from . import ns3ngwa
    from .valrecords import verdicts

    body = []
    for name, rec in recs.items():
        by = {}
        for v in verdicts(rec):
            by.setdefault(v["where"], []).append(v)
        for where, vs in by.items():
            cells = [name, where]
            for v in vs:
                unit = unit_of(v["metric"])
                mark = "" if v["within"] or v["ci"] else " DIFFER"
                cells.append(f"{ci(*v['ref_ci'][:2], unit)} / {ci(*v['ours_ci'][:2], unit)}{mark}")
            body.append(cells)
    header = ["test", "scenario"] + [f"{label}: ns-3 / netreturn" for _, label in ns3ngwa.METRICS]
    return render(header, body, markdown=markdown)


def main(a, out: Path) -> int:
    """``netreturn validate --scenario ngwa``: every test of Table 2 (or
    ``--ngwa-rows``) in both simulators, both scenarios; ns-3 runs already
    stored are read, not run again."""
    seeds = list(range(1, a.seeds + 1))
    rfc793 = getattr(a, "ns3_rfc793", None) or "ns3"
    newreno = getattr(a, "ns3_newreno", None) or "ns3"
    mark = getattr(a, "ns3_ngwa_mark", None) or "qdisc"
    ours = getattr(a, "ngwa_ours", None) or ""
    if rfc793 != "ns3" and newreno != "ns3":
        print("netreturn: error: --ns3-rfc793 and --ns3-newreno act on different rows (CW off, CW on): "
              "give one of them", file=sys.stderr)
        return 2
    wanted = [k.strip() for k in (getattr(a, "ngwa_rows", None) or "").split(",") if k.strip()]
    known = (rfc793_rows() if rfc793 != "ns3" else newreno_rows() if newreno != "ns3"
             else [k for _, k, _ in rows()])
    bad = [k for k in wanted if k not in known]
    if bad:
        what = (f"a row of RFC 793 senders (--ns3-rfc793 {rfc793})" if rfc793 != "ns3"
                else f"a row of NewReno senders (--ns3-newreno {newreno})" if newreno != "ns3"
                else "a test of Table 2")
        print(f"netreturn: error: --ngwa-rows {a.ngwa_rows}: {', '.join(bad)} is not {what}; "
              f"allowed: {', '.join(known)}", file=sys.stderr)
        return 2
    from .ns3ngwa import SCENARIOS

    keys = [k for k in known if not wanted or k in wanted]
    try:
        for scenario in SCENARIOS:  # every row's ns-3 runs first, one subprocess per scenario
            fill(scenario, keys, seeds, out, rfc793, newreno, mark)
    except RuntimeError as e:
        print(f"netreturn: error: {e}", file=sys.stderr)
        return 2
    recs = {}
    for name, key, _ in rows():
        if key not in keys:
            continue
        if not a.quiet:
            print(f"NGWA, {name}: ns-3 3.44 (RFC 793 stand-in: {rfc793}) and netreturn, seeds 1..{a.seeds}"
                  if key in rfc793_rows() else
                  f"NGWA, {name}: ns-3 3.44 (NewReno: {newreno}) and netreturn, seeds 1..{a.seeds}", flush=True)
        try:
            recs[name] = run_cell(key, seeds, out, a.jobs, rfc793=rfc793, newreno=newreno, mark=mark, ours=ours)
        except RuntimeError as e:
            print(f"netreturn: error: {e}", file=sys.stderr)
            return 2
    text = table(recs)
    print(text)
    stem = f"validation_ngwa{_tag(rfc793, newreno, mark, ours)}"
    (out / f"{stem}.txt").write_text(text + "\n")
    (out / f"{stem}.md").write_text(table(recs, markdown=True) + "\n")
    print(f"tables: {out / (stem + '.txt')}, {out / (stem + '.md')} (docs/validation.md's); "
          f"cell records: {out / 'cells'}/ngwa_*{_tag(rfc793, newreno, mark, ours)}.json")
    return 0

