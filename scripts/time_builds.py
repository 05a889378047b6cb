"""CPU time per packet hop of several `netreturn-sim` builds, interleaved.

    python3 scripts/time_builds.py ROUNDS K [--stop TIME] BINARY[@VAR=VALUE,...] ...

Runs `scenarios/bench/scaled.toml` at scale factor K (1, 10 or 100: the
flows, bottleneck rate, buffer and UDP rate of `netreturn bench --scale`,
access links at 10 Gb/s; seed 1) with each binary in turn, ROUNDS times, so
that a change of load on a shared machine falls on every build alike. Each
run is a child process; its CPU time (user + system, from `getrusage`) is
divided by its packet hops (`packet_hops_per_s x wall_s`). At 1x a process
runs the simulation 20 times (`--repeat`), so start-up and first page
faults do not count. `--stop 8s` ends each run at that simulated time
(`run.stop`); `BINARY@VAR=VALUE,...` runs that binary with those variables
set in its environment (e.g. `@GLIBC_TUNABLES=glibc.malloc.hugetlb=1`), as
a build of its own. Prints every run (with the child's peak RSS so far) and
each build's best (docs/validation.md, "Hot state apart from cold").
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

SCALES = {1: ("31", "45Mbps", "97kB", "13.35Mbps"), 10: ("310", "450Mbps", "970kB", "133.5Mbps"),
          100: ("3100", "4.5Gbps", "9.7MB", "1335Mbps")}
REPEAT = {1: 20, 10: 2, 100: 1}


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not argv[0].isdigit() or argv[1] not in ("1", "10", "100"):
        print(__doc__, file=sys.stderr)
        return 2
    rounds, k, bins = int(argv[0]), int(argv[1]), argv[2:]
    scenario = Path(__file__).resolve().parent.parent / "scenarios" / "bench" / "scaled.toml"
    args = [str(scenario), "--seed", "1", "--repeat", str(REPEAT[k]), "--set", "access_rate=10Gbps"]
    for name, value in zip(("flows", "bottleneck_rate", "buffer", "udp_rate"), SCALES[k]):
        args += ["--set", f"{name}={value}"]
    if len(bins) >= 2 and bins[0] == "--stop":
        args += ["--set", f"run.stop={bins[1]}"]
        bins = bins[2:]
    best: dict[str, float] = {}
    for r in range(rounds):
        for b in bins:
            path, _, envs = b.partition("@")
            env = dict(os.environ)
            env.update(kv.split("=", 1) for kv in envs.split(",") if kv)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run([path, *args], capture_output=True, text=True, check=True, env=env).stdout
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            summary = dict(line.split(None, 1) for line in out.splitlines() if len(line.split()) == 2)
            hops = float(summary["packet_hops_per_s"]) * float(summary["wall_s"]) * REPEAT[k]
            ns = cpu / hops * 1e9
            rss = after.ru_maxrss / 1024
            print(f"round {r} {b} x{k}: CPU {cpu:.3f} s, {hops:,.0f} hops, {ns:.1f} ns per hop, "
                  f"peak RSS so far {rss:.0f} MiB", flush=True)
            best[b] = min(best.get(b, ns), ns)
    for b, ns in best.items():
        print(f"best {b} x{k}: {ns:.1f} ns per hop")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
