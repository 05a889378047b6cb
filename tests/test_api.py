"""The Python API and the simulator seen from Python."""

import json

import pytest

import netreturn
from netreturn import _native
from netreturn.scenarios import resolve


def test_the_same_scenario_and_seed_give_the_same_numbers(small):
    path = str(resolve("ewt/scenario2"))
    sets = [(k, str(v)) for k, v in small.items()]
    a = _native.run(path, 7, sets)
    b = _native.run(path, 7, sets)
    # json.dumps spells NaN identically, so equal text means bit-equal floats.
    assert json.dumps(a["summary"]) == json.dumps(b["summary"])
    assert a["flows"]["fct_s"] == b["flows"]["fct_s"]
    c = _native.run(path, 8, sets)
    assert c["summary"]["fct_mean_s"] != a["summary"]["fct_mean_s"]


def test_run_returns_dataframes_per_run_and_per_flow(small):
    res = netreturn.run("ewt/scenario2", set=small, sweep={"queue": ["droptail", "ared"]}, seeds=2, jobs=1)
    runs = res.runs
    assert len(runs) == 4 and set(runs["queue"]) == {"droptail", "ared"}
    assert (runs["flows_completed"] == small["flows"]).all()
    assert len(res.flows) == 4 * small["flows"]
    s = res.summary
    assert set(s.columns) >= {"queue", "metric", "mean", "ci95", "n"}
    assert "goodput" in res.table()


def test_udp_cross_traffic_is_measured(small):
    res = netreturn.run("ewt/scenario2", set=small, seed=1)
    row = res.runs.iloc[0]
    # 13.35 Mb/s of UDP crosses the 45 Mb/s bottleneck: its goodput shows in the UDP table.
    assert 0 <= row["udp_loss_pct"] < 50
    assert 50 < row["udp_efficiency_pct"] <= 100


def test_the_ewa_parameters_of_a_scenario_reach_the_gateway(small):
    """`ewa_alpha` is EWA's initial alpha: a larger one lets larger windows
    through at flow start, so the queue fills higher."""
    path = str(resolve("ewt/scenario2"))
    sets = [(k, str(v)) for k, v in small.items() if k != "queue"] + [("queue", "ewa")]
    low = _native.run(path, 3, sets + [("ewa_alpha", "256")])["summary"]
    high = _native.run(path, 3, sets + [("ewa_alpha", "8192")])["summary"]
    assert low["acks_rewritten"] > 0 and high["acks_rewritten"] > 0
    assert high["queue_max_bytes"] > low["queue_max_bytes"]


def test_results_are_made_json_safe_in_one_pass_without_losing_values():
    """NaN and infinities become None wherever they are (JSON has neither);
    lists of finite numbers are kept as they are."""
    from netreturn.runner import json_safe

    nan, inf = float("nan"), float("inf")
    r = {"summary": {"a": nan, "b": 1.5, "c": 3}, "flows": {"fct_s": [1.0, nan, 2.0], "n": [1, 2, True],
                                                         "src": ["left0", None], "x": [inf, -inf]},
         "nested": [[1.0, nan], (2, 3)], "big": [10**400, 1.0]}
    s = json_safe(r)
    assert s == {"summary": {"a": None, "b": 1.5, "c": 3}, "flows": {"fct_s": [1.0, None, 2.0], "n": [1, 2, True],
                                                                   "src": ["left0", None], "x": [None, None]},
                 "nested": [[1.0, None], [2, 3]], "big": [10**400, 1.0]}
    json.dumps(s, allow_nan=False)


def test_stored_runs_of_another_simulator_build_are_run_again_not_reused(small, tmp_path, capsys):
    # `netreturn run --out`, `validate` and sweeps resume from their run
    # store; a rebuilt simulator may give other results, so its stored runs
    # are set aside (as `reproduce` does), never silently reused.
    out = tmp_path / "store"
    first = netreturn.run("ewt/scenario2", set=small, seeds=2, jobs=1, out=out)
    n = len(list((out / "runs").glob("*.json")))
    assert n == 2
    (out / "manifest.json").write_text(json.dumps({"native_build": "0000000000000000"}))
    again = netreturn.run("ewt/scenario2", set=small, seeds=2, jobs=1, out=out)
    assert "rebuilt" in capsys.readouterr().err
    assert len(list((out / "stale-0000000000000000").glob("*.json"))) == n
    assert len(list((out / "runs").glob("*.json"))) == n
    assert list(again.runs["fct_mean_s"]) == list(first.runs["fct_mean_s"])
    # The same build resumes: nothing set aside.
    netreturn.run("ewt/scenario2", set=small, seeds=2, jobs=1, out=out)
    assert "rebuilt" not in capsys.readouterr().err


def test_the_scale_benchmark_prices_a_packet_hop_from_the_cpu_time_of_a_fresh_process(capsys):
    from netreturn import bench

    rows = bench.scale(factors=(1,), ns3_scales=())
    (r,) = rows
    assert r["incomplete"] == 0, "every transfer of scenario 2 completes"
    assert r["hops"] > r["events"] / 2 > 0
    assert 0 < r["cpu_s"] <= r["wall_s"] * 1.05
    assert r["ns_per_hop"] == r["cpu_s"] / r["hops"] * 1e9
    assert r["maxrss_kb"] > 0
    assert "1x" in capsys.readouterr().out


def test_the_gateway_benchmark_prices_each_aqm_per_packet_hop_beside_droptail(capsys):
    from netreturn import bench

    table = bench.gateway_cost(1, seeds=range(1, 2), queues=("codel",))
    assert list(table) == ["droptail", "codel"], "DropTail is always the reference"
    for q, t in table.items():
        assert t["hops"] > t["events"] / 2 > 0, q
        assert t["ns_per_hop"] == t["cpu_s"] / t["hops"] * 1e9
    out = capsys.readouterr().out
    assert "hop vs DT" in out
    codel = next(line for line in out.splitlines() if line.startswith("codel"))
    assert codel.split()[-1] == f"{table['codel']['ns_per_hop'] / table['droptail']['ns_per_hop'] - 1:+.1%}"


def test_the_scale_benchmark_runs_the_factors_asked_for_each_against_the_first(capsys):
    from netreturn import bench

    rows = bench.scale(factors=(1, 2), ns3_scales=())
    assert [r["scale"] for r in rows] == [1, 2]
    assert rows[1]["events"] > rows[0]["events"] * 1.5, "twice the flows and rates: about twice the events"
    out = capsys.readouterr().out
    assert "vs 1x" in out
    two = next(line for line in out.splitlines() if line.lstrip().startswith("2x"))
    assert two.split()[1] == "62" and "90Mbps" in two
    assert two.split()[-3] == f"{rows[1]['ns_per_hop'] / rows[0]['ns_per_hop']:.2f}"


def test_a_scale_factor_outside_1_to_1000_is_refused_naming_the_option(capsys):
    from netreturn.cli import main

    with pytest.raises(SystemExit) as e:
        main(["bench", "--scale", "--scales", "1,0"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--scales" in err and "from 1 to 1000" in err and "'1,0'" in err
