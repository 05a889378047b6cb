"""FQ-CoDel's flow queues in one run of each simulator: where the packets go
(overflow, CoDel drop, mark; TCP or UDP), FQ's overflow batches on the TCP
flows of the first 10 s (their size, the sender's state at the drop, the
losses before each flow's first reaction), and CoDel's dropping states seen
through the marks (a flow's marks less than 100 ms apart counted as one).

ns-3: ``python -m netreturn.ns3ref ... --drop-log D --cong-log C``. Ours:
``netreturn-sim ... --aqm-trace T`` and the 31 flows' packet logs
(``--log-flow F --log-window 0,12 --log-out DIR/fF.log``).

    python scripts/fq_flowqueues.py --ns3 D C --ours T DIR [--flows 31]

docs/validation.md, "FQ-CoDel with ECN: the flow queues compared", quotes
its output.
"""

from __future__ import annotations

import argparse
import bisect
import collections

Event = tuple[float, str, int]  # time (s), "over" | "codel" | "mark", TCP flow or -1 (UDP and others)


def ns3_events(drop_log: str) -> list[Event]:
    out = []
    for line in open(drop_log):
        f = line.rstrip("\n").split("\t")
        kind = "mark" if "mark" in f[1] else ("codel" if "Target" in f[1] else "over")
        out.append((float(f[0]), kind, int(f[4])))
    return out


def ours_events(trace: str, iface: str = "R1->R2") -> list[Event]:
    out = []
    kinds = {"overflow": "over", "drop": "codel", "mark": "mark"}
    for line in open(trace):
        f = line.rstrip("\n").split("\t")
        if f[0] != iface or f[2] not in kinds:
            continue
        proto, flow = f[3].split()
        out.append((float(f[1]), kinds[f[2]], int(flow) if proto == "tcp" and f[4] == "0" else -1))
    return out


States = dict[int, list[tuple[float, str]]]  # flow -> (time, state entered)


def ns3_states(cong_log: str) -> States:
    st: States = collections.defaultdict(list)
    for line in open(cong_log):
        f = line.split("\t")
        st[int(f[1])].append((float(f[0]), "loss" if f[3] == "rto" else f[3]))
    return st


def ours_states(log_dir: str, flows: int) -> States:
    st: States = collections.defaultdict(list)
    for fl in range(flows):
        last = None
        for line in open(f"{log_dir}/f{fl}.log"):
            f = line.split()
            if len(f) < 2 or f[1] not in ("state", "timer"):
                continue
            if f[1] == "timer":
                s = "loss"
            else:
                kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
                s = "recovery" if kv.get("rec") == "1" else ("cwr" if kv.get("cwr") == "1" else "open")
                if last == "loss" and s == "open" and kv.get("una") != kv.get("max"):
                    s = "loss"
            if s != last:
                st[fl].append((float(f[0]), s))
                last = s
    return st


def state_at(st: States, flow: int, t: float) -> str:
    times = [x[0] for x in st[flow]]
    i = bisect.bisect_right(times, t) - 1
    return st[flow][i][1] if i >= 0 else "open"


def report(name: str, ev: list[Event], st: States, flows: int) -> None:
    print(f"== {name}")
    c = collections.Counter((k, "udp" if fl < 0 else "tcp") for _, k, fl in ev)
    print("  whole run: " + ", ".join(f"{k[1]} {k[0]} {v}" for k, v in sorted(c.items())))
    batches: dict[tuple[float, int], int] = collections.Counter()
    for t, k, fl in ev:
        if k == "over" and fl >= 0 and t < 10:
            batches[(round(t, 9), fl)] += 1
    sizes = sorted(batches.values())
    print(f"  TCP overflow, 0-10 s: {sum(sizes)} packets in {len(sizes)} batches, mean "
          f"{sum(sizes) / max(1, len(sizes)):.1f}, max {max(sizes, default=0)}")
    by_state: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for (t, fl), n in batches.items():
        s = state_at(st, fl, t)
        by_state[s][0] += 1
        by_state[s][1] += n
    print("  batches (packets) by the sender's state: "
          + ", ".join(f"{s} {b} ({p})" for s, (b, p) in sorted(by_state.items())))
    per: dict[int, list[tuple[float, str]]] = collections.defaultdict(list)
    for t, k, fl in ev:
        if fl >= 0:
            per[fl].append((t, k))
    first_kind: collections.Counter = collections.Counter()
    lost_before = batches_before = 0
    for fl in range(flows):
        e = sorted(per[fl])
        signals = [t for t, k in e if k in ("over", "mark")]
        if not signals:
            continue
        reaction = next(((t, s) for t, s in st[fl] if t > signals[0] and s in ("recovery", "cwr", "loss")), None)
        end = reaction[0] if reaction else float("inf")
        first_kind[reaction[1] if reaction else "none"] += 1
        lost_before += sum(1 for t, k in e if k == "over" and t < end)
        batches_before += len({round(t, 9) for t, k in e if k == "over" and t < end})
    print(f"  first reaction: {dict(first_kind)}; overflow before it: {lost_before} packets in "
          f"{batches_before} batches")
    for t0, t1 in ((0, 10), (10, 1e9)):
        states = []
        for e in per.values():
            marks = sorted(t for t, k in e if k == "mark" and t0 <= t < t1)
            n = 0
            for a, b in zip([None] + marks, marks):
                if a is not None and b - a <= 0.1001:
                    n += 1
                else:
                    if n:
                        states.append(n)
                    n = 1
            if n:
                states.append(n)
        long_marks = sum(s for s in states if s >= 10)
        print(f"  marks [{t0}, {'end' if t1 > 1e8 else t1}) s: {sum(states)} in {len(states)} dropping states, "
              f"{long_marks} in states of 10+, longest {max(states, default=0)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns3", nargs=2, metavar=("DROP_LOG", "CONG_LOG"))
    ap.add_argument("--ours", nargs=2, metavar=("AQM_TRACE", "LOG_DIR"))
    ap.add_argument("--flows", type=int, default=31)
    a = ap.parse_args()
    if a.ns3:
        report("ns-3", ns3_events(a.ns3[0]), ns3_states(a.ns3[1]), a.flows)
    if a.ours:
        report("ours", ours_events(a.ours[0]), ours_states(a.ours[1], a.flows), a.flows)


if __name__ == "__main__":
    main()
