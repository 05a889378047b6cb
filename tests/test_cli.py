"""The command line: clear errors with exit status 2, tables, files, plots,
resumable sweeps."""

import json

import pandas as pd
import pytest

from netreturn import cli
from netreturn.runner import RunSpec, run_many


def run_cli(capsys, *argv):
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_a_bad_parameter_value_names_file_field_and_allowed_values(capsys):
    rc, out, err = run_cli(capsys, "run", "ewt/scenario2", "--set", "queue=fifo", "--seed", "1")
    assert rc == 2
    assert "scenario2.toml" in err and "topology.bottleneck.queue" in err
    assert "droptail" in err and "ared" in err
    assert "Traceback" not in err


def test_an_unknown_parameter_lists_the_known_ones(capsys):
    rc, _, err = run_cli(capsys, "run", "ewt/scenario2", "--set", "flow=3", "--seed", "1")
    assert rc == 2
    assert "params.flow" in err and "flows" in err and "file_bytes" in err


def test_list_shows_every_mechanism_of_the_registry_with_its_keys(capsys):
    from netreturn import _native

    rc, out, _ = run_cli(capsys, "list")
    assert rc == 0
    m = _native.mechanisms()
    for c in m["controllers"]:
        assert f"gateway.{c['name']} = {{ {', '.join(c['keys'])} }}" in out
    for q in m["queues"] + m["congestion_controls"]:
        assert f"    {q['name']:<10} {q['title']}" in out
    assert "gateway.ewa = { alpha, w_up, w_down" in out and "sap-law" in out


def test_a_missing_scenario_file_is_an_error_not_a_traceback(capsys):
    rc, _, err = run_cli(capsys, "run", "no/such/scenario.toml")
    assert rc == 2 and "no such scenario" in err


def test_a_syntax_error_gives_the_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[topology\nkind = "dumbbell"\n')
    rc, _, err = run_cli(capsys, "run", str(bad), "--seed", "1")
    assert rc == 2 and "bad.toml" in err and "line 2" in err


def test_a_malformed_set_argument_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "ewt/scenario2", "--set", "flows"])
    assert e.value.code == 2
    assert "NAME=VALUE" in capsys.readouterr().err


def test_run_prints_a_ci_table_and_writes_tables_and_plots(tmp_path, capsys, small):
    out = tmp_path / "res"
    rc, text, _ = run_cli(
        capsys, "run", "ewt/scenario2", "--set", f"flows={small['flows']}", "--set", f"file_bytes={small['file_bytes']}",
        "--sweep", "queue=droptail,red", "--seeds", "3", "--jobs", "2", "--out", str(out), "-q",
    )
    assert rc == 0
    assert "queue=droptail" in text and "queue=red" in text and "±" in text
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["queue"]) == {"droptail", "red"}
    assert {"metric", "mean", "ci95", "n"} <= set(summary.columns)
    fct = summary[(summary.metric == "fct_mean_s")]
    assert (fct["n"] == 3).all() and (fct["mean"] > 0).all()
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 6
    for col in ["tcp_loss_pct", "udp_loss_pct", "goodput_mean_mbps", "fct_mean_s", "jain_goodput",
                "tcp_efficiency_pct", "udp_efficiency_pct", "utilization", "robustness_index"]:
        assert col in runs.columns
    flows = pd.read_csv(out / "flows.csv")
    assert len(flows) == 6 * small["flows"]
    for png in ["metrics.png", "queue.png", "window.png"]:
        assert (out / png).stat().st_size > 5000, png


def test_an_interrupted_sweep_resumes_without_rerunning_finished_runs(tmp_path, small):
    specs = [RunSpec.make("ewt/scenario2", {**small, "queue": "droptail"}, s) for s in (1, 2, 3)]
    ran = []
    run_many(specs, jobs=1, out=tmp_path, progress=False, on_result=lambda s, r: ran.append(s.seed))
    assert sorted(ran) == [1, 2, 3]
    files = sorted((tmp_path / "runs").glob("*.json"))
    assert len(files) == 3
    # Lose one run (as if interrupted before it finished) and run the sweep again.
    lost = RunSpec.make("ewt/scenario2", {**small, "queue": "droptail"}, 2)
    (tmp_path / "runs" / f"{lost.key()}.json").unlink()
    ran.clear()
    results = run_many(specs, jobs=1, out=tmp_path, progress=False, on_result=lambda s, r: ran.append(s.seed))
    assert ran == [2]
    assert [r["seed"] for r in results] == [1, 2, 3]
    again = json.loads((tmp_path / "runs" / f"{lost.key()}.json").read_text())
    assert again["summary"]["fct_mean_s"] == results[1]["summary"]["fct_mean_s"]
