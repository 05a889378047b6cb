#!/usr/bin/env python3
"""Re-run the simulator's side of stored Linux-agreement cell records.

`netreturn testbed compare` writes a cell record per setting
(`<out>/cells/linux_<scenario>_<setting>.json`) holding, per metric, every
testbed repetition ("ref") and every simulator seed ("ours"). When the
simulator's TCP changes (e.g. a key of the Linux profile), the testbed's
runs stay valid: this script re-runs only the simulator for each record's
setting and seeds and rewrites "ours", keeping "ref" as measured.

    scripts/resim_testbed_cells.py docs/validation_issue25 [--match sim_profile-linux]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="directory holding cells/linux_*.json")
    ap.add_argument("--match", default="", help="only records whose file name contains this")
    a = ap.parse_args()

    from netreturn.api import run
    from netreturn.testbed.compare import AGREEMENT, _sim_frame
    from netreturn.testbed.scenario import plan as make_plan
    from netreturn.valrecords import write_record

    paths = sorted(p for p in (a.out / "cells").glob("linux_*.json") if a.match in p.name)
    if not paths:
        print(f"no cell records linux_*{a.match}* under {a.out / 'cells'}", file=sys.stderr)
        return 2
    for p in paths:
        rec = json.loads(p.read_text())
        setting = dict(rec["setting"])
        profile = setting.pop("sim_profile", "ns3")
        scenario, n = rec["scenario"], int(rec["runs_sim"])
        pl = make_plan(scenario, setting)
        res = run(scenario, set={**setting, "tcp.profile": profile}, seeds=n, progress=False, tables=False)
        sim = _sim_frame(res, pl.base_rtt_s * 1000)
        cols = dict(AGREEMENT)
        changed = 0
        for m in rec["metrics"]:
            if m["metric"] in cols and m["metric"] in sim:
                new = [float(x) for x in sim[m["metric"]].tolist()]
                changed += new != m["ours"]
                m["ours"] = new
        write_record(a.out, p.stem, rec)
        print(f"{p.name}: simulator re-run ({n} seeds, profile {profile}); "
              f"{changed} of {len(rec['metrics'])} metrics changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
