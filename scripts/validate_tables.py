"""Per-metric tables of `netreturn validate` cells, as docs/validation_aqm/tables.md has them.

For each configuration given, reads ns-3's runs from the validate store
(``<out>/ns3/``, as ``netreturn validate`` left them), runs ours through the
run store (``<out>/netreturn``: runs already stored are read), and prints a
Markdown table per configuration: both means with 95 % CIs, ours / ns-3, the
two verdicts of the validation summary (within 10 %, within the CIs), and
under it ns-3's drops and marks by reason and the CWR entries by the state
they left, per seed. Only what the stores hold: nothing is typed in.

    PYTHONPATH=python python scripts/validate_tables.py --out /work/valrun-modern2 \
        "red --ecn" "red --ecn --ns3-ecn rfc3168" "droptail --tcp bbr" "fq_codel --tcp dctcp --ns3-ecn rfc3168"

Each configuration is ``QUEUE [--tcp T] [--ecn] [--ns3-ecn rfc3168] [--flows N] [--seeds S]``
(EWT scenario 2, aligned, phase 1 ms, ns-3-dev's PRR: the summary's cells).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from netreturn import validate
from netreturn.api import run
from netreturn.table import ci, render, unit_of
from netreturn.valrecords import within
from netreturn.valsummary import PHASE_NS

SCENARIO = "ewt/scenario2"
#: Not in these tables (as in docs/validation_aqm/tables.md, and the cell
#: records): UDP efficiency repeats UDP loss; simulated time the maximum FCT.
LEFT_OUT = validate.RECORD_LEFT_OUT
#: ns-3's per-run counts shown under each table (when the runs have them).
DETAILS = ("queue_drops_by_reason", "queue_drops_after_dequeue_by_reason", "queue_marks_by_reason",
           "ecn_reductions_from")


def config(text: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="configuration", add_help=False)
    p.add_argument("queue", choices=list(validate.QUEUES))
    p.add_argument("--tcp", choices=list(validate.TCPS), default="cubic")
    p.add_argument("--ecn", action="store_true")
    p.add_argument("--ns3-ecn", choices=list(validate.NS3_ECN), default="ns3")
    p.add_argument("--flows", type=int, default=31)
    p.add_argument("--seeds", type=int, default=None, help="default: every seed the ns-3 store holds, from 1")
    return p.parse_args(text.split())


def table(out: Path, c: argparse.Namespace) -> str:
    def path(s: int) -> Path:
        return validate.ns3_cache_path(out, c.flows, c.queue, s, validate.DEFAULT_PRR, SCENARIO, True, PHASE_NS,
                                       c.tcp, c.ecn, c.ns3_ecn)

    n = c.seeds or next(s for s in range(1, 1000) if not path(s).exists()) - 1
    if n == 0 or not all(path(s).exists() for s in range(1, n + 1)):
        raise SystemExit(f"{path(1).parent}: no ns-3 runs {path(1).name} .. seed {n} (run netreturn validate first)")
    ns3 = [json.loads(path(s).read_text()) for s in range(1, n + 1)]
    for r in ns3:  # every RTO expiry, as ours counts `timeouts` (validate._ns3_runs does the same)
        r["timeouts"] = r.get("rto_expiries", r.get("timeouts"))
    settings = validate.ours_settings(c.flows, c.queue, PHASE_NS, c.tcp, c.ecn)
    res = run(validate.ours_scenario(SCENARIO, True), set=settings, seeds=n, out=out / "netreturn", tables=False)
    ours = [validate.with_data_loss(r) for r in res.runs.to_dict("records")]
    ecn = c.ecn or c.tcp in ("dctcp", "prague")
    body = []
    for r in validate.compare(ns3, ours):
        if not ecn and r["metric"] in ("ecn_marks", "ecn_reductions"):
            continue  # nothing negotiates ECN: 0 against 0 says nothing
        if r["metric"] in LEFT_OUT or all(math.isnan(x) for x in (r["ns3"][0], r["netreturn"][0])):
            continue
        unit, (a, b) = unit_of(r["metric"]), (r["ns3"], r["netreturn"])
        ratio = b[0] / a[0] if a[0] and not math.isnan(a[0]) else math.nan
        verdict = {True: "agree", False: "DIFFER", None: "-"}[r["agree"]]
        body.append([r["label"], ci(a[0], a[1], unit), ci(b[0], b[1], unit), f"{ratio:.2f}",
                     {True: "yes", False: "no", None: "-"}[within(a, b)], verdict])
    sender = c.tcp + (" + ECN" if c.ecn else "")
    ref = validate.ns3_label(validate.DEFAULT_PRR, c.ns3_ecn)
    head = f"#### {c.queue}, {sender}: {c.flows} flows, aligned, phase 1 ms, seeds 1-{n} ({ref})\n\n"
    text = head + render(["metric", "ns-3 3.44", "netreturn", "ours / ns-3", "within 10 %", "CIs"], body,
                         markdown=True, align=["left", "right", "right", "right", "left", "left"])
    details = {k: [r[k] for r in ns3] for k in DETAILS if all(k in r for r in ns3)}
    if details:
        text += "\n\nns-3 per seed: " + json.dumps(details)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/validate"), help="the validate output folder")
    ap.add_argument("configs", nargs="+", help='e.g. "red --ecn", "droptail --tcp bbr"')
    a = ap.parse_args()
    print("\n\n".join(table(a.out, config(t)) for t in a.configs))


if __name__ == "__main__":
    main()
