"""`netreturn testbed rwm`'s testbed-only settings (issue 24): the gateway's
delay jitter (the RWM paper's NetEm +/-3 ms, seed 003 section IV.A), RWM at
both edges (the paper's Fig. 1) and RWM's per-port classes (section III).

The first tests map the settings onto the gateways (no namespaces); the last
runs four real CUBIC downloads through two RWM gateways in namespaces (root,
iproute2, ethtool; skipped otherwise).
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

import pytest
from _load import gateway_or_skip, needs_netns

pytest.importorskip("pandas")
tb = pytest.importorskip("netreturn.testbed")

from netreturn.testbed import netns, runner, rwm, scenario  # noqa: E402
from netreturn.testbed.cli import main as tb_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RWM_FILE = ROOT / "scenarios" / "testbed" / "rwm.toml"


def _classes_file(tmp_path: Path) -> Path:
    """The RWM scenario with two classes: ports 5000-5001 (the testbed's
    flows 0 and 1) hold 80 % of the access link, the default class (flows 2
    and 3) 20 %."""
    text = RWM_FILE.read_text()
    old = 'gateway = { rwm = { delta = "{delta}" } }'
    assert old in text
    new = ('gateway = { rwm = { delta = "{delta}", share = 0.2, '
           'classes = [{ ports = [5000, 5001], share = 0.8 }] } }')
    f = tmp_path / "rwm-classes.toml"
    f.write_text(text.replace(old, new))
    return f


def test_jitter_goes_to_the_bottleneck_gateways_data_direction_only():
    pl = scenario.plan("testbed/rwm", {"rtt": "140ms", "flows": 4})
    j = scenario.with_testbed(pl, {"setting": "bdp", **scenario.testbed_labels("3ms")})
    # The bottleneck gateway carries the file's 70 ms each way (the WAN
    # emulator none), as the paper's NetEm sat on the client's router.
    assert j.hops[j.bottleneck_hop].name == "bottleneck"
    assert j.hops[j.bottleneck_hop].args == ["--jitter", "3000us", "--jitter-ba", "0us"]
    assert all(h.args == [] for h in j.hops if h.name != "bottleneck")
    assert pl.hops[pl.bottleneck_hop].args == [], "the plan given is left as it was"
    assert scenario.testbed_labels("0ms") == {}, "no jitter is the default: runs keep their keys"


def test_rwm_at_both_edges_adds_a_sender_edge_gateway_with_the_files_rwm_table(tmp_path):
    f = _classes_file(tmp_path)
    pl = scenario.plan(f, {"delta": 0.1, "flows": 4})
    both = scenario.with_testbed(pl, scenario.testbed_labels(rwm_edges="both"))
    names = [h.name for h in both.hops]
    assert names == ["sender-edge", "path", "bottleneck"] and both.bottleneck_hop == 2
    edge = both.hops[0]
    assert edge.controller == "rwm"
    # C is the senders' access rate; delta and the classes are the file's.
    assert sorted(edge.ctl) == ["capacity=1gbit", "classes=[{ports = [5000, 5001], share = 0.8}]", "delta=0.1",
                                "share=0.2"]
    # No RWM at the bottleneck (setting none): no RWM at the other edge either.
    none = scenario.plan(f, {"queue": "droptail"})
    assert scenario.with_testbed(none, {"rwm_edges": "both"}).hops == none.hops


def test_the_gateway_accepts_what_the_testbed_options_give_it(tmp_path):
    binary = gateway_or_skip()
    pl = scenario.plan(_classes_file(tmp_path), {"rtt": "20ms"})
    scenario.check_gateway(scenario.with_testbed(pl, {"jitter": "3ms", "rwm_edges": "both"}), binary)


@pytest.mark.parametrize("argv, words", [
    (["--jitter", "3ms,fast"], ["--jitter", "'fast'"]),
    (["--jitter", "20ms", "--rtt", "20ms"], ["--jitter", "one-way delay 10 ms"]),
    (["--jitter", "2s"], ["--jitter", "0 .. 1s"]),
])
def test_a_jitter_the_testbed_cannot_run_exits_2_naming_the_option(tmp_path, capsys, argv, words):
    assert tb_main(["rwm", *argv, "--settings", "bdp", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err


def test_rwm_edges_other_than_receiver_or_both_are_refused(capsys):
    with pytest.raises(SystemExit):
        tb_main(["rwm", "--rwm-edges", "middle"])
    assert "both" in capsys.readouterr().err


def test_the_140ms_statements_are_judged_from_the_quartiles():
    import pandas as pd

    def fct(none, ctl):
        rows = [{"flows": 4, "rtt_ms": 140.0, "setting": "none", "fct_p25_s": none[0], "fct_median_s": none[1],
                 "fct_p75_s": none[2]}]
        rows += [{"flows": 4, "rtt_ms": 140.0, "setting": s, "fct_p25_s": q[0], "fct_median_s": q[1],
                  "fct_p75_s": q[2]} for s, q in ctl.items()]
        return pd.DataFrame(rows)

    # The paper's picture: none's median 1.5 x RWM's, RWM's p75 below none's p25.
    held = rwm.statements_140ms(fct((13.0, 15.0, 18.0), {"bdp": (9.5, 10.0, 10.5)}))
    assert [r["testbed"].rsplit(": ", 1)[1] for r in held] == ["holds", "holds"]
    assert "1.50x" in held[0]["testbed"]
    # Ours at 150d68d: 1.24 x, RWM's p75 above none's p25.
    ours = rwm.statements_140ms(fct((8.1, 11.76, 14.0), {"bdp": (9.0, 9.5, 10.3), "bdp-10%": (9.6, 10.2, 10.4)}))
    assert [r["testbed"].rsplit(": ", 1)[1] for r in ours] == ["partly", "fails"]
    assert rwm.statements_140ms(fct((1, 2, 3), {})) == [], "nothing to judge without a controlled run"


def _flow_windows(raw_dir: Path, flows: int) -> list[float]:
    """Median window each flow's sender saw (TCP_INFO snd_wnd) while it had
    data outstanding."""
    out = []
    for k in range(flows):
        (info,) = runner._load_info(raw_dir / f"info{k}.json")
        w = [s["snd_wnd"] for s in info["samples"] if s.get("snd_wnd") and s.get("bytes_acked")]
        out.append(statistics.median(w))
    return out


@needs_netns
@pytest.mark.netns
def test_flows_of_one_class_divide_its_window_at_both_edges(tmp_path, capsys):
    """Four downloads, flows 0 and 1 in an 80 % class, 2 and 3 in the 20 %
    default class (seed 003 eq. 1: RWND_i = C * P_c * RTT / |class|), RWM at
    both edges: each flow of the big class sees 4 times the window of a
    flow of the small one, and the two flows of a class the same."""
    gateway_or_skip()
    f = _classes_file(tmp_path)
    out, prefix = tmp_path / "o", f"nrtc{os.getpid() % 10000}"
    argv = ["rwm", "--scenario", str(f), "--rtt", "40ms", "--flows", "4", "--settings", "bdp", "--reps", "1",
            "--rwm-edges", "both", "--set", "file_bytes=3MB", "--out", str(out), "--prefix", prefix, "--keep-raw",
            "-q", "--no-plots"]
    assert tb_main(argv) == 0
    assert netns.leftover_namespaces(prefix) == []
    (run,) = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert run["summary"]["flows_completed"] == 4
    assert [g["name"] for g in run["summary"].get("gateways", [])] in ([], ["sender-edge", "path", "bottleneck"])
    assert [h["name"] for h in run["gateway_cmds"]] == ["sender-edge", "path", "bottleneck"]
    w = _flow_windows(Path(run["raw_dir"]), 4)
    # Within a class: one window, halved between its two flows.
    assert w[0] == pytest.approx(w[1], rel=0.15) and w[2] == pytest.approx(w[3], rel=0.15), w
    # Across classes: 0.8 / 2 against 0.2 / 2 of C * RTT, a ratio of 4
    # (the window scale's 128-byte steps and the RTT measured per flow move it a little).
    ratio = (w[0] + w[1]) / (w[2] + w[3])
    assert 3.2 < ratio < 4.8, (ratio, w)
    # The 80 % class's window, 0.8 C RTT, is about 0.8 * 100 Mb/s * 40 ms = 400 kB
    # (the handshake RTT the gateway measures is at least the 40 ms path).
    assert 380_000 < w[0] + w[1] < 560_000, w
    # And the rates follow the windows: a flow of the 20 % class can send at
    # most its window per RTT, 0.1 C = 10 Mb/s (9.1 .. 9.7 measured), while
    # the class's flows are faster (up to 40 Mb/s each; their 3 MB end
    # within a few RTTs of slow start, so how much faster depends on the
    # machine's load: 18 .. 30 Mb/s measured).
    gp = run["flows"]["goodput_mbps"]
    assert max(gp[2], gp[3]) < 11.0, gp
    assert min(gp[0], gp[1]) > 1.5 * max(gp[2], gp[3]), gp
