"""What bit a newcomer first (issue 26): the link a headline describes, a
number without its unit, fields reachable only through [params], sweeps
written value by value."""

import csv
import subprocess
import sys

import pytest

import netreturn
from netreturn import args
from netreturn.api import sweep_values
from netreturn.scenarios import ScenarioError, load

CHAIN = """
name = "chain"
[topology]
kind = "chain"
hops = 3
link = {{ rate = "10Mbps", delay = "5ms" }}
{overrides}
access = {{ rate = "1Gbps", delay = "1ms" }}
end_hosts = 1
[[traffic]]
kind = "tcp-file"
from = "src0"
to = "dst0"
bytes = "200kB"
[run]
stop = "3s"
{run}
"""


def chain(tmp_path, overrides="", run=""):
    p = tmp_path / "chain.toml"
    p.write_text(CHAIN.format(overrides=overrides, run=run))
    return p


def cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "netreturn.cli", *map(str, argv)], capture_output=True, text=True,
                          cwd=cwd)


def test_a_chain_of_equal_links_without_monitor_stops_and_asks_for_the_link(tmp_path):
    p = chain(tmp_path)
    r = cli("run", p, "--seeds", "1", "--no-plots", "--out", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "run.monitor" in r.stderr and "R0->R1, R1->R2, R2->R3" in r.stderr
    assert 'monitor = "R1->R2"' in r.stderr, r.stderr
    assert not (tmp_path / "out" / "runs.csv").exists(), "nothing ran"


def test_the_slowest_hop_is_reported_and_every_output_names_it(tmp_path):
    p = chain(tmp_path, overrides='overrides = { "1" = { rate = "5Mbps", delay = "5ms" } }')
    out = tmp_path / "out"
    r = cli("run", p, "--seeds", "2", "--no-plots", "--per-link", "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "monitored link: R1->R2" in r.stdout
    assert "R1->R2 *" in r.stdout, "the per-link table marks it"
    with open(out / "links.csv") as f:
        rows = list(csv.DictReader(f))
    marked = {row["link"] for row in rows if row["monitored"] == "True"}
    assert marked == {"R1->R2"}
    # The marked link is the one that queued: the others carry no backlog.
    peak = {row["link"]: float(row["queue_max_bytes"]) for row in rows if row["seed"] == "1"}
    assert peak["R1->R2"] == max(peak.values())


def test_a_number_without_its_unit_is_refused_with_the_spellings_meant(tmp_path):
    p = chain(tmp_path, overrides='overrides = { "1" = { rate = "5Mbps", delay = 20 } }')
    with pytest.raises(ScenarioError) as e:
        load(p)
    assert e.value.field == "topology.overrides.1.delay"
    assert '20 has no unit; write "20ms" or "20s"' in str(e.value)


def test_any_field_is_reachable_by_its_path_from_python_and_the_command_line(tmp_path):
    p = chain(tmp_path, run='monitor = "R1->R2"')
    res = netreturn.run(p, set={"topology.link.rate": "2Mbps"}, seeds=1, jobs=1)
    slow = res.runs["goodput_mean_mbps"].iloc[0]
    res = netreturn.run(p, set={"topology.link.rate": "20Mbps"}, seeds=1, jobs=1)
    fast = res.runs["goodput_mean_mbps"].iloc[0]
    assert slow < 2.0 < fast, (slow, fast)
    r = cli("show-config", p, "--set", "topology.link.rate=7Mbps", cwd=tmp_path)
    assert r.returncode == 0 and "R1->R2         rate      7000000 bit/s" in r.stdout, r.stdout + r.stderr
    r = cli("show-config", p, "--set", "topology.lnk.rate=7Mbps", cwd=tmp_path)
    assert r.returncode == 2 and "no `lnk` in topology" in r.stderr, r.stderr


def test_a_sweep_range_gives_every_value_with_its_unit_and_refuses_a_runaway():
    assert args.expand_ranges("10:40:10") == ["10", "20", "30", "40"]
    assert args.expand_ranges("1, 2, 5:15:5") == ["1", "2", "5", "10", "15"]
    assert args.expand_ranges("5ms:20ms:5ms") == ["5ms", "10ms", "15ms", "20ms"]
    assert args.expand_ranges("0.1:0.3:0.1") == ["0.1", "0.2", "0.3"]
    assert args.expand_ranges("40:10:-15") == ["40", "25", "10"]
    assert args.sweep("flows=2:6:2") == ("flows", ["2", "4", "6"])
    assert sweep_values({"flows": "2:6:2"}) == {"flows": ["2", "4", "6"]}
    for bad, why in (("1:2", "START:STOP:STEP"), ("1:5:0", "never goes"), ("1ms:5s:1ms", "same unit"),
                     ("1:1e9:1", "at most")):
        with pytest.raises(ValueError, match=why):
            args.expand_ranges(bad)
