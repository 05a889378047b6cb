"""ns-2.35 reference runs of the SARBE paper's lossy wireless link (docs/decisions.md §5.5):
ns-2's own ``Agent/TCP/Newreno`` (RFC 6582-style NewReno, no SACK) with an
``Agent/TCPSink`` (an ACK per segment), a third opinion beside ns-3's
``TcpNewReno`` (issue 25 item 3; docs/validation.md, "NewReno on the lossy
link in ns-2.35").

The topology, buffers, loss and TCP settings are read from our own scenario
file (``scenarios/sarbe/lossy_link.toml`` through the one scenario loader,
as :mod:`netreturn.ns3lossy`), translated key by key into a Tcl script; a key
this module does not translate stops the run instead of being ignored.

Metrics, as validate_lossy.py / ns3lossy.py define them:

- ``goodput_mean_mbps``: bytes delivered in order (the sender's highest
  cumulative ACK ``ack_`` + 1, times the segment size) x 8 / run time;
- ``tcp_efficiency_pct``: (data packets sent - retransmitted) / sent, from
  the agent's ``ndatapack_`` and ``nrexmitpack_``;
- ``tcp_data_loss_pct``: (error-model drops + queue drops) / data packets
  sent; every link has a queue monitor whose ``pdrops_`` counts its queue's
  drops and, on the lossy link, the drops of the error model (``link-lossmodel``
  sends them to the link's drop head). The ACK path has no error model and
  never fills its 1000-packet buffers, so every drop is a data packet;
- ``timeouts``: the agent's ``nrexmit_`` (every RTO expiry, backoffs included,
  as ours counts them);
- ``fast_recoveries``: ``ncwndcuts_ - nrexmit_``: ns-2 counts one window cut
  per fast retransmit and per timeout (tcp.cc ``slowdown``), so the
  difference is the fast recoveries when no timeout is backed off (an
  approximation: a backed-off RTO makes it one lower).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
from typing import Optional

from .testbed.scenario import parse_rate, parse_size, parse_time

__all__ = ["ALIGN", "CCS", "NEWRENO_RULES", "NS", "tcl_script", "parse_output", "run_lossy", "main"]

SCENARIO = "sarbe/lossy_link"
NS = "ns"
#: Our congestion controls (scenario parameter ``tcp``) and ns-2.35's agents.
CCS = {"newreno": "Agent/TCP/Newreno"}
#: [tcp] keys translated below, and keys that change nothing in ns-2 (its
#: timestamps are exact times; SARBE's and Westwood's tables are not read by
#: NewReno; ``cc`` comes from the ``tcp`` parameter; ``rcv_buf`` 1 MB never
#: limits a 5 Mb/s x 100 ms path, so ns-2's window_ is set beyond it).
TCP_KEYS = {"segment_size", "sack", "recovery", "delayed_ack_count", "min_rto", "initial_cwnd", "timestamps",
            "rto_restart_on_fast_retransmit", "limited_transmit", "limited_transmit_resends"}
#: What ours must set to run ns-2's rules where ns-2 has no switch (issue 25,
#: docs/validation.md "The lossy link's 1-10 % loss gap"): ns-2.35's NewReno
#: restarts the retransmission timer at every fast retransmit (tcp-newreno.cc
#: ``dupack_action``, ``reset_rtx_timer(1,0)``), ours by default does not
#: (RFC 6298 (5.1), as ns-3). Applied to both documents, so ours' run and the
#: Tcl come from the same settings; validate_lossy runs ours with them.
#: Likewise its limited transmit (``TcpAgent::send_one``, ``singledup_ 1``)
#: sends the next ``t_seqno_`` on the first two dupACKs, a go-back-N resend
#: after a timeout too, where ours by default sends only new data (RFC 3042
#: section 2, as ns-3 and Linux).
ALIGN = {"tcp.rto_restart_on_fast_retransmit": "true", "tcp.limited_transmit_resends": "true"}
#: ``loss_ssthresh`` is ours' rule for the ssthresh a loss sets; ns-2 always
#: runs its own (``slowdown(CLOSE_SSTHRESH_HALF)``), which ``"ns2"`` makes ours
#: run too (validate_lossy.NS2_ALIGNED).
TCP_IGNORED = {"ts_tick", "sarbe", "westwood", "cc", "rcv_buf", "loss_ssthresh"}
LINK_KEYS = {"from", "to", "rate", "delay", "buffer", "loss", "loss_direction"}
#: ns-2.35's NewReno when three duplicate ACKs arrive before the cumulative
#: ACK has passed the last recovery point (``--ns2-newreno``):
#: ``careful``, as shipped (``bugFix_ 1``, ``lessCareful_ 0``; tcp-newreno.cc
#: ``dupack_action``: a fast retransmit only when ``highest_ack_ >
#: recover_``, a packet beyond the highest one sent at the last recovery, RFC
#: 2582's "Careful" variant), so a loss of the first packet after that point
#: waits for the timer; ``rfc6582``, ns-2 repaired in the harness
#: (``lessCareful_ 1``: also when ``highest_ack_ == recover_``), the rule of
#: RFC 6582 section 3.2 step 2 ("covers more than recover") that ours runs.
NEWRENO_RULES = ("careful", "rfc6582")


def _seconds(text) -> float:
    """Seconds, through the project's one unit parser (crates/base/src/units.rs)."""
    return parse_time(text)


def _packets(text, where: str) -> int:
    unit, n = parse_size(text)
    if unit != "packets":
        raise ValueError(f"{SCENARIO}: {where} buffer must be in packets ('62p') for ns-2, not {text!r}")
    return int(n)


def _ns2_rate(text) -> str:
    """A rate as plain bits per second, which ns-2's ``bw_parse`` takes."""
    return str(int(parse_rate(text)))


def _document(cc: str, loss: float, overrides: Optional[dict] = None) -> dict:
    """Our scenario file with its parameters substituted (the native loader)."""
    from .scenarios import load

    return load(SCENARIO, {"tcp": cc, "loss": loss, **ALIGN, **(overrides or {})})["document"]


def tcl_script(doc: dict, cc: str, seed: int, newreno: str = "careful") -> str:
    """The ns-2.35 Tcl script of one run of our scenario document
    (``newreno``: one of :data:`NEWRENO_RULES`)."""
    if cc not in CCS:
        raise ValueError(f"cc must be one of {', '.join(CCS)}, not {cc!r}")
    if newreno not in NEWRENO_RULES:
        raise ValueError(f"ns-2's NewReno rule must be one of {', '.join(NEWRENO_RULES)}, not {newreno!r}")
    tcp = doc["tcp"]
    unknown = set(tcp) - TCP_KEYS - TCP_IGNORED
    if unknown:
        raise ValueError(f"{SCENARIO}: [tcp] keys with no ns-2 translation here: {sorted(unknown)}")
    if str(tcp.get("sack", False)).lower() == "true" or tcp.get("recovery", "classic") != "classic":
        raise ValueError(f"{SCENARIO}: ns-2's Newreno agent has no SACK and classic recovery only; "
                         f"sack={tcp.get('sack')!r}, recovery={tcp.get('recovery')!r}")
    if str(tcp.get("rto_restart_on_fast_retransmit", False)).lower() != "true":
        raise ValueError(f"{SCENARIO}: ns-2's Newreno agent restarts the retransmission timer at every fast "
                         f"retransmit (tcp-newreno.cc dupack_action); tcp.rto_restart_on_fast_retransmit must be "
                         f"true, not {tcp.get('rto_restart_on_fast_retransmit')!r}")
    lt = str(tcp.get("limited_transmit", True)).lower() != "false"
    if lt and str(tcp.get("limited_transmit_resends", False)).lower() != "true":
        raise ValueError(f"{SCENARIO}: ns-2's limited transmit (singledup_ 1) sends the next segment on a dupACK, a "
                         f"go-back-N resend too (tcp.cc send_one); tcp.limited_transmit_resends must be true while "
                         f"tcp.limited_transmit is, not {tcp.get('limited_transmit_resends')!r}")
    if int(tcp.get("delayed_ack_count", 1)) != 1:
        raise ValueError(f"{SCENARIO}: Agent/TCPSink ACKs every segment; delayed_ack_count must be 1, "
                         f"not {tcp.get('delayed_ack_count')!r}")
    topo = doc["topology"]
    (tr,) = doc["traffic"]
    if tr.get("kind") != "tcp-bulk" or set(tr) - {"kind", "from", "to"}:
        raise ValueError(f"{SCENARIO}: one tcp-bulk flow with no other keys expected, not {tr}")
    lines = ["set ns [new Simulator]", f"ns-random {int(seed)}"]
    lines += [f"set n({n}) [$ns node]" for n in topo["nodes"]]
    lossy = []
    for link in topo["links"]:
        extra = set(link) - LINK_KEYS
        if extra:
            raise ValueError(f"{SCENARIO}: link keys with no ns-2 translation here: {sorted(extra)}")
        a, b = link["from"], link["to"]
        lines.append(f"$ns duplex-link $n({a}) $n({b}) {_ns2_rate(link['rate'])} "
                     f"{_seconds(link['delay'])} DropTail")
        q = _packets(link["buffer"], f"link {a}->{b}")
        # Ours: the reverse direction gets the same buffer, DropTail.
        lines += [f"$ns queue-limit $n({a}) $n({b}) {q}", f"$ns queue-limit $n({b}) $n({a}) {q}"]
        if float(link.get("loss", 0.0)) > 0:
            dirs = [(a, b)] + ([(b, a)] if link.get("loss_direction", "both") == "both" else [])
            lossy += [(x, y, float(link["loss"])) for x, y in dirs]
    for k, (x, y, p) in enumerate(lossy):
        # Random packet loss at the link's end (after the queue, as ns-3's
        # receive error model), its own RNG stream per seed.
        lines += [f"set rng{k} [new RNG]", f"$rng{k} seed {int(seed) * 1000 + k + 1}",
                  f"set rv{k} [new RandomVariable/Uniform]", f"$rv{k} use-rng $rng{k}",
                  f"set em{k} [new ErrorModel]", f"$em{k} unit pkt", f"$em{k} set rate_ {p!r}",
                  f"$em{k} ranvar $rv{k}", f"$ns link-lossmodel $em{k} $n({x}) $n({y})"]
    mons = []
    for link in topo["links"]:
        for x, y in ((link["from"], link["to"]), (link["to"], link["from"])):
            mons.append(f"qm_{x}_{y}")
            lines.append(f"set qm_{x}_{y} [$ns monitor-queue $n({x}) $n({y}) \"\"]")
    seg = int(tcp["segment_size"])
    lines += [f"set tcp [new {CCS[cc]}]",
              f"$tcp set packetSize_ {seg}",
              "$tcp set window_ 1000000",  # no receive-window limit (ours: 1 MB)
              f"$tcp set windowInit_ {int(tcp['initial_cwnd'])}",
              f"$tcp set minrto_ {_seconds(tcp['min_rto'])}",
              # RFC 3042 limited transmit: ns-2's singledup_ (1 by default, as ours).
              f"$tcp set singledup_ {int(lt)}",
              # NEWRENO_RULES: RFC 6582's recovery point is ns-2's "Less
              # Careful" variant (tcp-newreno.cc dupack_action, recovered1).
              *(["$tcp set lessCareful_ 1"] if newreno == "rfc6582" else []),
              # RFC 7323 timestamps (RTT from every ACK's echo), on unless
              # the scenario turns them off, as ours' default.
              f"$tcp set timestamps_ {'true' if str(tcp.get('timestamps', True)).lower() == 'true' else 'false'}",
              "set sink [new Agent/TCPSink]",
              f"$ns attach-agent $n({tr['from']}) $tcp", f"$ns attach-agent $n({tr['to']}) $sink",
              "$ns connect $tcp $sink",
              "set ftp [new Application/FTP]", "$ftp attach-agent $tcp",
              "$ns at 0.0 {$ftp start}",
              "proc finish {} {",
              "  global tcp " + " ".join(mons),
              "  set qd 0",
              *[f"  set qd [expr $qd + [${m} set pdrops_]]" for m in mons],
              '  puts "NS2 ack [$tcp set ack_] ndatapack [$tcp set ndatapack_] nrexmitpack '
              '[$tcp set nrexmitpack_] nrexmit [$tcp set nrexmit_] ncwndcuts [$tcp set ncwndcuts_] drops $qd"',
              "  exit 0", "}",
              f"$ns at {_seconds(doc['run']['stop'])} finish",
              "$ns run"]
    return "\n".join(lines) + "\n"


def parse_output(text: str, *, stop_s: float, segment_size: int) -> dict:
    """The metrics of one run from the script's ``NS2 ...`` line (module docstring)."""
    line = next((ln for ln in text.splitlines() if ln.startswith("NS2 ")), None)
    if line is None:
        raise RuntimeError(f"ns-2 printed no result line:\n{text[-2000:]}")
    f = line.split()[1:]
    v = {f[i]: int(float(f[i + 1])) for i in range(0, len(f), 2)}
    sent, retx = v["ndatapack"], v["nrexmitpack"]
    delivered = (v["ack"] + 1) * segment_size
    return {
        "goodput_mean_mbps": delivered * 8 / stop_s / 1e6,
        "bytes_delivered": delivered,
        "data_packets_sent": sent,
        "retransmitted_packets": retx,
        "drops": v["drops"],
        "tcp_data_loss_pct": v["drops"] / sent * 100 if sent else math.nan,
        "tcp_efficiency_pct": (sent - min(retx, sent)) / sent * 100 if sent else 100.0,
        "timeouts": v["nrexmit"],
        "fast_recoveries": v["ncwndcuts"] - v["nrexmit"],
    }


def run_lossy(cc: str, loss: float, seeds: list[int], *, overrides: Optional[dict] = None,
              ns_binary: str = NS, newreno: str = "careful") -> list[dict]:
    """Run the lossy link in ns-2.35 once per seed; one metrics dict per seed
    (``newreno``: ns-2's rule at a new loss near the recovery point,
    :data:`NEWRENO_RULES`)."""
    if shutil.which(ns_binary) is None:
        raise RuntimeError(f"ns-2 ({ns_binary!r}) is not installed: apt-get install ns2")
    doc = _document(cc, loss, overrides)
    stop_s = _seconds(doc["run"]["stop"])
    out = []
    for s in seeds:
        p = subprocess.run([ns_binary, "-"], input=tcl_script(doc, cc, int(s), newreno), capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"ns-2 lossy-link run failed (exit {p.returncode}): cc={cc} loss={loss} "
                               f"seed={s}\n{p.stderr[-2000:]}")
        r = parse_output(p.stdout, stop_s=stop_s, segment_size=int(doc["tcp"]["segment_size"]))
        out.append({"simulator": "ns-2.35 (Debian ns2)", "scenario": SCENARIO, "cc": cc, "seed": int(s),
                    "loss": loss, **({"newreno": newreno} if newreno != "careful" else {}), **r})
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="the SARBE paper's lossy link in ns-2.35 (reference runs)")
    ap.add_argument("--cc", choices=list(CCS), default="newreno")
    ap.add_argument("--loss", type=float, action="append", required=True)
    ap.add_argument("--seeds", default="1,2,3,4,5")
    a = ap.parse_args(argv)
    for loss in a.loss:
        for r in run_lossy(a.cc, loss, [int(x) for x in a.seeds.split(",")]):
            sys.stdout.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
