"""The command line: clear errors with exit status 2, tables, files, plots,
resumable sweeps."""

import json
import re

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
        capsys,
        "run",
        "ewt/scenario2",
        "--set",
        f"flows={small['flows']}",
        "--set",
        f"file_bytes={small['file_bytes']}",
        "--sweep",
        "queue=droptail,red",
        "--seeds",
        "3",
        "--jobs",
        "2",
        "--out",
        str(out),
        "-q",
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
    for col in ["tcp_data_loss_pct", "udp_loss_pct", "goodput_mean_mbps", "fct_mean_s", "jain_goodput",
                "tcp_efficiency_pct", "udp_efficiency_pct", "utilization", "robustness_index"]:
        assert col in runs.columns
    flows = pd.read_csv(out / "flows.csv")
    assert len(flows) == 6 * small["flows"]
    for png in ["metrics.png", "fct_cdf.png", "queue.png", "window.png", "rtt_cdf.png"]:
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


def test_run_prints_its_table_without_importing_pandas_or_matplotlib(tmp_path, small):
    """The table is plain Python; the figures are drawn by a child process."""
    import subprocess
    import sys

    code = ("import sys\nfrom netreturn import cli\n"
            f"rc = cli.main(['run', 'ewt/scenario2', '--set', 'flows={small['flows']}', "
            f"'--set', 'file_bytes={small['file_bytes']}', '--seed', '1', '--out', {str(tmp_path)!r}, '-q'])\n"
            "print('imported:', sorted(m for m in ('pandas', 'matplotlib', 'numpy') if m in sys.modules))\n"
            "sys.exit(rc)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "imported: []" in p.stdout
    assert "mean ± 95% CI" in p.stdout and "plots:" in p.stdout
    assert (tmp_path / "metrics.png").stat().st_size > 5000


def test_a_reader_that_stops_early_ends_the_run_quietly_keeping_the_finished_runs(tmp_path, small):
    """`netreturn run ... | head -1`: no traceback, SIGPIPE's status, and
    the run store holds the run all the same."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "netreturn.cli", "run", "ewt/scenario2", "--set", f"flows={small['flows']}",
           "--set", f"file_bytes={small['file_bytes']}", "--seed", "1", "--out", str(tmp_path), "-q", "--no-plots"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.readline()
        p.stdout.close()  # the reader goes away after one line
        err = p.stderr.read()
        rc = p.wait(timeout=120)
    assert first.startswith("EWT scenario 2")
    assert rc == 141, err
    assert "Traceback" not in err
    assert list((tmp_path / "runs").glob("*.json")), "the finished run is kept"


def test_the_table_shows_readable_units_not_exponents(tmp_path, capsys, small):
    rc, text, _ = run_cli(capsys, "run", "ewt/scenario2", "--set", f"flows={small['flows']}",
                          "--set", f"file_bytes={small['file_bytes']}", "--seeds", "2", "--jobs", "1",
                          "--no-plots", "--out", str(tmp_path), "-q")
    assert rc == 0
    table = text[text.index("metric"):text.index(" runs, ")]
    assert "mean queue (kB)" in table and "mean RTT (ms)" in table and "goodput (Mb/s)" in table
    assert not re.search(r"\de[+-]\d", table), table
    queue_kb = float(re.search(r"mean queue \(kB\)\s+([\d.]+)", table).group(1))
    queue_b = pd.read_csv(tmp_path / "summary.csv").query("metric == 'queue_mean_bytes'")["mean"].iloc[0]
    assert queue_kb == pytest.approx(queue_b / 1000, abs=0.05)  # kB to 1 decimal; summary.csv keeps bytes


def test_a_failed_figure_process_still_leaves_the_table_and_says_why(tmp_path, capsys, small, monkeypatch):
    import subprocess
    import sys

    from netreturn import figures

    def broken_start(self):
        self._proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit('no display for you')"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return self

    monkeypatch.setattr(figures.FigureWorker, "start", broken_start)
    rc, text, err = run_cli(capsys, "run", "ewt/scenario2", "--set", f"flows={small['flows']}",
                            "--set", f"file_bytes={small['file_bytes']}", "--seed", "1", "--out", str(tmp_path), "-q")
    assert rc == 1
    assert "mean ± 95% CI" in text and (tmp_path / "summary.csv").is_file()
    assert "figures could not be drawn" in err and "no display for you" in err
    assert "Traceback" not in err


def test_the_default_experiment_compares_queue_disciplines_with_window_rewriting_gateways(
    tmp_path, monkeypatch, capsys
):
    import netreturn.api

    asked = {}

    class Stop(Exception):
        pass

    def fake_run(scenario, **kw):
        asked.update(kw, scenario=scenario)
        raise Stop

    monkeypatch.setattr(netreturn.api, "run", fake_run)
    with pytest.raises(Stop):
        cli.main(["run", "--no-plots", "--out", str(tmp_path), "-q"])
    assert asked["scenario"] == "ewt/scenario2.toml"
    assert asked["sweep"] == {"queue": ["droptail", "red", "ewa", "awm", "ewt"]}
    assert "sweep: queue in {droptail, red, ewa, awm, ewt}" in capsys.readouterr().out


def test_the_figure_process_draws_each_job_as_it_comes_and_lists_them_in_a_fixed_order(tmp_path, small):
    """The time series are sent before the run rows (as soon as the first
    seeds are in): both are drawn, and listed in a fixed order."""
    import netreturn
    from netreturn import figures
    from netreturn.runner import flow_rows

    res = netreturn.run("ewt/scenario2", set=small, sweep={"queue": ["droptail", "ewt"]}, seeds=2, jobs=1)
    w = figures.FigureWorker().start()
    try:
        w.submit(figures.series_job(res.raw, res.group_keys, tmp_path, "small"))
        w.submit(figures.summary_job(res.run_rows(), res.group_keys, tmp_path, "small",
                                     flow_rows(res.raw, res.group_keys), columns=res.metrics()))
        paths = w.wait()
    finally:
        w.close()
    assert [p.name for p in paths] == ["metrics.png", "fct_cdf.png", "queue.png", "window.png", "rtt_cdf.png"]
    assert all(p.stat().st_size > 5000 for p in paths)
    assert not list(tmp_path.glob(".figures-*.json"))  # the job files are cleaned up


def test_a_run_with_an_unfinished_transfer_is_kept_and_named_in_a_warning(tmp_path, capsys):
    # Transfers too large to finish by the 600 s stop time:
    # the run stays in the tables (FCT missing), and a warning names the run
    # and the flows (issue 9: no silent stall).
    rc, out, err = run_cli(capsys, "run", "ewt/scenario2", "--set", "flows=3", "--seed", "2",
                           "--out", str(tmp_path), "--no-plots", "-q", "--set", "file_bytes=5GB")
    assert rc == 0
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == 1 and runs["flows_incomplete"].iloc[0] == 3
    assert "WARNING: seed 2: 3 transfer(s) unfinished" in err
    assert "flow 0 (" in err and "B delivered" in err
    flows = pd.read_csv(tmp_path / "flows.csv")
    assert flows["fct_s"].isna().all()


def test_a_run_whose_transfers_all_finish_warns_of_nothing(tmp_path, capsys):
    rc, _, err = run_cli(capsys, "run", "ewt/scenario2", "--set", "flows=2", "--seed", "1",
                         "--out", str(tmp_path), "--no-plots", "-q", "--set", "file_bytes=200kB")
    assert rc == 0 and "WARNING" not in err


def test_a_scenario_too_large_for_the_machine_is_refused_naming_the_set_parameter(capsys):
    rc, _, err = run_cli(capsys, "run", "ewt/scenario2", "--set", "flows=100000000", "--seed", "1", "--no-plots")
    assert rc == 2
    assert "traffic[0].count" in err and "(from --set flows=100000000)" in err and "MB" in err
    assert "Traceback" not in err


def test_a_run_that_outgrows_the_memory_limit_stops_and_the_sweep_keeps_the_others(tmp_path, capsys, monkeypatch):
    # A 2 GB buffer fed 55 Mb/s more UDP than the bottleneck carries grows
    # without bound; the 97 kB run of the same sweep finishes and is kept.
    # (Both pass the estimate at start: 16 MiB and 600 s of time series.)
    monkeypatch.setenv("NETRETURN_MAX_MEMORY", "32MB")
    rc, _, err = run_cli(capsys, "run", "ewt/scenario2", "--set", "flows=1", "--set", "udp_rate=100Mbps",
                         "--sweep", "buffer=97kB,2GB", "--seed", "1", "--jobs", "1", "--no-plots", "-q",
                         "--out", str(tmp_path))
    assert rc == 2
    assert "1 run(s) of the sweep stopped" in err and "stopped at t =" in err and "32 MB limit" in err
    kept = list((tmp_path / "runs").glob("*.json"))
    assert len(kept) == 1, kept
