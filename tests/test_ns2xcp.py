"""netreturn.ns2xcp: the ns-2.35 XCP comparison (issue 25, item 2)."""

from __future__ import annotations

import json
import re

import pytest

from netreturn import _native, ns2xcp
from netreturn.scenarios import resolve as scenario_path

SMALL = {"bottleneck_rate": "10Mbps", "buffer": "100kB", "flows": "5", "queue": "xcp"}
needs_ns2 = pytest.mark.skipif(ns2xcp.ns2_binary() is None,
                               reason="ns-2 is not installed (apt-get install ns2; scripts/install-system-deps.sh)")


def test_the_ns2_script_builds_every_link_direction_with_its_buffer_and_every_flow_with_ns2s_end_systems():
    text, monitored = ns2xcp.tcl_script("awm/capacity", SMALL, 3, 10.0)
    model = _native.resolve(str(scenario_path("awm/capacity")), list(SMALL.items()))
    links = re.findall(r"^link_dir (\S+) (\S+) (\d+) (\S+) (\d+) ([01])$", text, re.M)
    assert len(links) == len(model["links"])
    by_name = {f"{a}->{b}": (int(rate), float(delay), int(limit), xcp == "1")
               for a, b, rate, delay, limit, xcp in links}
    for link in model["links"]:
        rate, delay, limit, xcp = by_name[link["name"]]
        assert rate == link["rate_bps"] and delay == pytest.approx(link["delay_ns"] * 1e-9)
        assert limit * model["packet_bytes"] == link["buffer_bytes"], link["name"]
        assert xcp == (link.get("stage") == "xcp")
    assert monitored == ["R1->R2", "R2->R1"]
    # 5 flows each way, left i -> right i and back, starting within [0, 2] s.
    flows = re.findall(r"^flow (\d+) (\S+) (\S+) \[\$startrng uniform 0.0 2.0\]$", text, re.M)
    assert [(s, d) for _, s, d in flows] == [(f"left{i}", f"right{i}") for i in range(5)] + \
        [(f"right{i}", f"left{i}") for i in range(5)]
    # ns-2's end systems as shipped: its initial window (2) is not touched.
    assert "set windowInit_" not in text
    assert "$defaultRNG seed 3\n" in text


def test_a_scenario_the_template_cannot_build_is_refused_naming_the_file():
    with pytest.raises(ValueError, match=r"web\.toml: traffic kind 'tcp-web'"):
        ns2xcp.tcl_script("awm/web", {"queue": "xcp"}, 1, 10.0)


@needs_ns2
def test_ns2_and_ours_agree_on_a_small_two_way_xcp_dumbbell():
    # 5 flows each way over 10 Mb/s, 100 kB buffer, 12 s, 3 seeds each.
    # Tolerances (means of 3 seeds): utilization after start-up within 0.05
    # of ns-2's, the mean queue within 20 kB (a fifth of the buffer). ns-2's
    # XCP drops nothing after start-up here (issue 25); ours still does in
    # some seeds (docs/xcp.md, "Against ns-2.35"), so drops are compared in
    # the table, not asserted equal.
    r = ns2xcp.compare("capacity-10M", [1, 2, 3], 12.0, overrides={"flows": "5"})

    def mean(side, name, key):
        return sum(x["links"][name][key] for x in r[side]) / len(r[side])

    for name in ("R1->R2", "R2->R1"):
        assert abs(mean("ns2", name, "utilization_after") - mean("ours", name, "utilization_after")) < 0.05, name
        assert abs(mean("ns2", name, "queue_mean_kb") - mean("ours", name, "queue_mean_kb")) < 20, name
        assert mean("ns2", name, "drops_after") == 0, name
    assert "Jain index of goodput" in ns2xcp.table(r)


def test_ns2s_minimum_rto_and_ack_size_are_ours_unless_the_reference_is_asked_for_as_shipped():
    ours, _ = ns2xcp.tcl_script("awm/capacity", SMALL, 1, 10.0)
    assert re.search(r"^Agent/TCP set minrto_ 1$", ours, re.M)  # RFC 6298 (2.4), ours by default
    assert re.search(r"^Agent/TCPSink set packetSize_ 68$", ours, re.M)  # 40 + 12 (timestamps) + 16 (XCP)
    rto, _ = ns2xcp.tcl_script("awm/capacity", SMALL, 1, 10.0, ns2="rto")
    assert re.search(r"^Agent/TCP set minrto_ 1$", rto, re.M)
    assert not re.search(r"^Agent/TCPSink set packetSize_", rto, re.M)
    shipped, _ = ns2xcp.tcl_script("awm/capacity", SMALL, 1, 10.0, ns2="shipped")
    assert not re.search(r"^Agent/TCP set minrto_", shipped, re.M)
    assert not re.search(r"^Agent/TCPSink set packetSize_", shipped, re.M)
    # A scenario's own minimum RTO is what ns-2 gets.
    assert ns2xcp.min_rto_s(str(scenario_path("awm/capacity")), [("queue", "xcp")]) == 1.0


def test_an_unknown_choice_of_ns2s_end_systems_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match=r"'linux': allowed aligned, rto, shipped"):
        ns2xcp.tcl_script("awm/capacity", SMALL, 1, 10.0, ns2="linux")


def test_a_stored_ns2_run_is_read_not_run_again_under_the_name_of_its_end_systems(tmp_path):
    # A stored run of seed 1 under each variant's name, with a marker value
    # no simulator gives; compare must return the one of the variant asked.
    ov = {"flows": "2"}
    name = "capacity-10M_bottleneck_rate-10Mbps_buffer-100kB_flows-2_3s{}_seed1.json"
    for suffix, marker in (("_aligned", 0.111), ("", 0.222)):
        stored = {"links": {n: {k: marker for k, _ in ns2xcp.LINK_METRICS} for n in ("R1->R2", "R2->R1")},
                  "jain": marker, "timeouts": 0}
        (tmp_path / "ns2").mkdir(exist_ok=True)
        (tmp_path / "ns2" / name.format(suffix)).write_text(json.dumps(stored))
    for variant, marker in (("aligned", 0.111), ("shipped", 0.222)):
        r = ns2xcp.compare("capacity-10M", [1], 3.0, tmp_path, overrides=ov, ns2=variant)
        assert r["ns2"][0]["jain"] == marker and r["ns2_end_systems"] == variant
        assert r["ours"][0]["jain"] != marker


def test_a_further_ns2_agent_setting_reaches_the_script_and_a_malformed_one_is_refused():
    text, _ = ns2xcp.tcl_script("awm/capacity", SMALL, 1, 10.0, agent={"windowInit_": "10"})
    assert re.search(r"^Agent/TCP set windowInit_ 10$", text, re.M)
    with pytest.raises(ValueError, match=r"windowInit_=10; exec rm: a variable name and a number are allowed"):
        ns2xcp.tcl_script("awm/capacity", SMALL, 1, 10.0, agent={"windowInit_": "10; exec rm"})


def test_only_a_run_of_the_summarys_length_with_aligned_end_systems_leaves_a_cell_record(tmp_path, monkeypatch):
    import argparse

    link = {k: 0.5 for k, _ in ns2xcp.LINK_METRICS}

    def fake_compare(case, seeds, stop_s, out, *args):
        runs = [{"links": {"R1->R2": link}, "jain": 0.9, "timeouts": 0} for _ in seeds]
        return {"case": case, "scenario": "awm/capacity", "overrides": {"queue": "xcp"}, "ours_overrides": {},
                "seeds": seeds, "stop_s": stop_s, "ns2_end_systems": args[-2], "ns2_agent": args[-1],
                "ns2": runs, "ours": runs}

    monkeypatch.setattr(ns2xcp, "compare", fake_compare)
    monkeypatch.setattr(ns2xcp, "ns2_binary", lambda: "ns")
    p = argparse.ArgumentParser()
    ns2xcp.add_arguments(p)
    record = tmp_path / "cells" / "xcp_capacity-10M.json"
    for argv in (["--stop", "60"], ["--ns2", "shipped"], ["--ns2-agent", "windowInit_=10"]):
        assert ns2xcp.main(p.parse_args(["--case", "capacity-10M", "--seeds", "2", "--out", str(tmp_path), *argv])) == 0
        assert not record.exists(), argv
    assert ns2xcp.main(p.parse_args(["--case", "capacity-10M", "--seeds", "2", "--out", str(tmp_path)])) == 0
    assert json.loads(record.read_text())["ns2_end_systems"] == "aligned"
