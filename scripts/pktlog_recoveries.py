"""Fast recoveries and retransmissions in a packet log of one TCP flow, ours
(``netreturn-sim --log-flow``) or ns-3's (``python -m netreturn.ns3lossy
--log-window``; the same line format): how many recoveries started with
SND.UNA already at the receiver (spurious), how many duplicate ACKs
preceded each entry, whether SND.UNA at entry was exactly the previous
recovery point, which retransmissions resent a segment the receiver already
held (by the sender's state after the send; ours has no CA_LOSS, so its
go-back-N after a timeout counts as "open" after the first send), what share of the data
segments reaching the receiver were duplicates, and (ns-3) how many CA_OPEN
states carried a guessed SACK or loss mark.

    python scripts/pktlog_recoveries.py LOG [--window T0,T1]

docs/validation.md, "ns-3's NewReno without SACK as RFC 6582, repaired",
quotes its output.
"""

from __future__ import annotations

import argparse
import collections


def analyse(path: str, t0: float = 0.0, t1: float = float("inf")) -> dict:
    held: set[int] = set()  # data segments (first byte) the receiver has received
    last_ack, dupacks = None, 0
    recovering = False
    recover = 0  # SND.MAX before the last recovery entry or timeout (ns-3's m_recover)
    prev_max = 0
    pending: list[tuple[int, bool]] = []  # retransmissions until the next state line
    timed_out = False
    out: dict = {"recoveries": 0, "spurious": 0, "dupacks_before_entry": collections.Counter(),
                 "entry_at_recover": 0, "arrivals": 0, "duplicates": 0, "retransmissions": 0,
                 "held_retransmissions": collections.Counter(), "open_states": 0, "open_states_marked": 0}
    for line in open(path):
        p = line.split()
        if len(p) < 3:
            continue
        t, kind = float(p[0]), p[1]
        inside = t0 <= t <= t1
        if kind == "recv" and p[2] == "data":
            seq, length = (int(x) for x in p[3].split("+"))
            if length == 0:
                continue
            if inside:
                out["arrivals"] += 1
                out["duplicates"] += seq in held
            held.add(seq)
        elif kind == "recv" and p[2] == "ack":
            a = int(p[3])
            dupacks = dupacks + 1 if a == last_ack else 0
            last_ack = a
        elif kind == "timer":
            timed_out = True
        elif kind == "send" and p[2] == "data" and len(p) > 4 and p[4] == "R":
            seq = int(p[3].split("+")[0])
            if inside:
                pending.append((seq, seq in held))
        elif kind == "state":
            kv = dict(x.split("=", 1) for x in p[2:] if "=" in x)
            now_rec = kv["rec"] == "1" if "rec" in kv else kv.get("cong") == "recovery"
            where = ("recovery" if now_rec else "timeout" if timed_out or kv.get("cong") == "loss"
                     else kv.get("cong", "open"))
            for _seq, was_held in pending:
                out["retransmissions"] += 1
                if was_held:
                    out["held_retransmissions"][where] += 1
            pending.clear()
            una = int(kv["una"])
            if now_rec and not recovering:
                if inside:
                    out["recoveries"] += 1
                    out["spurious"] += una in held
                    out["dupacks_before_entry"][dupacks] += 1
                    out["entry_at_recover"] += una == recover
                recover = prev_max
            if timed_out:
                recover = prev_max
            timed_out = False
            recovering = now_rec
            prev_max = int(kv["max"])
            if kv.get("cong") == "open" and inside:
                out["open_states"] += 1
                out["open_states_marked"] += kv.get("sacked", "0") != "0" or kv.get("lost", "0") != "0"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--window", default=None, metavar="T0,T1")
    a = ap.parse_args(argv)
    t0, t1 = (float(x) for x in a.window.split(",")) if a.window else (0.0, float("inf"))
    r = analyse(a.log, t0, t1)
    n = r["arrivals"]
    print(f"recoveries {r['recoveries']}: with SND.UNA already at the receiver {r['spurious']}, "
          f"SND.UNA = the previous recovery point {r['entry_at_recover']}, entered on the n-th duplicate ACK: "
          f"{dict(sorted(r['dupacks_before_entry'].items()))}")
    print(f"receiver: {n} data segments, {r['duplicates']} duplicates "
          f"({r['duplicates'] / n * 100 if n else 0:.1f} %)")
    print(f"retransmissions {r['retransmissions']}, of segments the receiver held: "
          f"{sum(r['held_retransmissions'].values())} {dict(r['held_retransmissions'])}")
    if r["open_states"]:
        print(f"CA_OPEN states {r['open_states']}, with a guessed SACK or loss mark {r['open_states_marked']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
