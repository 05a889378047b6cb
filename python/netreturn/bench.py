"""``netreturn bench``: the simulator's speed, side by side with ns-3.

Prints wall time, events per second, packet hops per second and peak memory
for EWT scenario 2 with 31 flows under DropTail (the issue's anchor: ns-3
3.44 needs 6.3 s and 2.3 M events for it), and the ns-3 run of the same
scenario when the `ns3` package is installed. ``--sweep`` also times the
full baseline sweep (2 scenarios x 3 queues x 3 levels x 30 seeds).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

ANCHOR_NS3_WALL_S = 6.3
ANCHOR_NS3_EVENTS = 2.3e6
LEVELS = {"ewt/scenario1": [8, 17, 24], "ewt/scenario2": [13, 24, 31]}


def _one_run_in_child(scenario: str, sets: dict, seed: int) -> dict:
    """One run in a fresh process, so its peak RSS is the simulation's."""
    code = (
        "import json,resource,time,netreturn._native as n;"
        f"t=time.perf_counter();r=n.run({str(_path(scenario))!r},{seed},{list(sets.items())!r});w=time.perf_counter()-t;"
        "print(json.dumps({'wall_s':w,'events':r['summary']['events'],"
        "'hops':sum(r['ifaces']['tx_packets']),'maxrss_kb':resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _path(scenario: str):
    from .scenarios import resolve

    return resolve(scenario)


def main(a) -> int:
    from . import _native
    from .runner import RunSpec, run_many

    scenario, sets, seed = "ewt/scenario2", {"flows": "31", "queue": "droptail"}, 1
    # Peak memory of an idle interpreter with the module loaded, to subtract.
    idle = json.loads(subprocess.run(
        [sys.executable, "-c", "import json,resource,netreturn._native;print(json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))"],
        check=True, capture_output=True, text=True).stdout)
    best = None
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        r = _native.run(str(_path(scenario)), seed, list(sets.items()))
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]:
            best = (wall, r)
    wall, r = best
    events = r["summary"]["events"]
    hops = sum(r["ifaces"]["tx_packets"])
    child = _one_run_in_child(scenario, sets, seed)
    small = _one_run_in_child(scenario, {"flows": "4", "queue": "droptail"}, seed)
    print("EWT scenario 2, 31 flows, DropTail, seed 1")
    print(f"{'':28}{'netreturn':>14}{'ns-3 (anchor)':>16}{'ns-3 (here)':>14}")
    ns3 = None
    if not a.no_ns3:
        try:
            from . import ns3ref

            if ns3ref.available():
                ns3 = ns3ref.run_ns3(flows=31, queue="droptail", seed=seed)
        except Exception as e:  # the reference is optional; say why it is missing
            print(f"(ns-3 reference run failed: {e})")
    def row(label, ours, anchor, here):
        f = lambda x: "-" if x is None else (f"{x:,.3f}" if isinstance(x, float) and x < 100 else f"{x:,.0f}")
        print(f"{label:28}{f(ours):>14}{f(anchor):>16}{f(here):>14}")
    row("wall time (s)", wall, ANCHOR_NS3_WALL_S, ns3 and ns3.get("wall_s"))
    row("events", float(events), ANCHOR_NS3_EVENTS, ns3 and ns3.get("events"))
    row("events / s", events / wall, ANCHOR_NS3_EVENTS / ANCHOR_NS3_WALL_S,
        ns3 and ns3.get("events") and ns3["events"] / ns3["wall_s"])
    row("packet hops / s", hops / wall, None, None)
    row("simulated time (s)", r["summary"]["sim_time_s"], None, ns3 and ns3.get("sim_time_s"))
    print(f"speed-up vs ns-3 anchor: {ANCHOR_NS3_WALL_S / wall:,.0f}x"
          + (f"; vs ns-3 measured here: {ns3['wall_s'] / wall:,.0f}x" if ns3 and ns3.get("wall_s") else ""))
    print(f"peak memory: 31 flows {(child['maxrss_kb'] - idle) / 1024:.1f} MiB, 4 flows {(small['maxrss_kb'] - idle) / 1024:.1f} MiB "
          f"above an idle interpreter ({idle / 1024:.0f} MiB)")
    if a.sweep:
        specs = [
            RunSpec.make(sc, {"flows": n, "queue": q}, s)
            for sc, levels in LEVELS.items()
            for q in ("droptail", "red", "ared")
            for n in levels
            for s in range(1, 31)
        ]
        t0 = time.perf_counter()
        run_many(specs, out=None, progress=True)
        print(f"full baseline sweep: {len(specs)} runs in {time.perf_counter() - t0:.1f} s wall on all cores")
    return 0
