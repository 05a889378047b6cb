"""Results folders (issue 26): one experiment per folder, never overwritten,
tables covering every stored run; netreturn.open() with typed columns and
time series; figures that say how many runs they rest on; netreturn plot."""

import json
import math
import random

import pandas as pd
import pytest

import netreturn
from netreturn import cli, plots, runner
from netreturn.api import expand
from netreturn.results import default_folder_name
from netreturn.scenarios import ScenarioError


def run_cli(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def small_args(small):
    return ["--set", f"flows={small['flows']}", "--set", f"file_bytes={small['file_bytes']}"]


def test_two_invocations_with_different_settings_keep_both_results_and_the_tables_cover_every_stored_run(
    tmp_path, monkeypatch, capsys, small
):
    monkeypatch.chdir(tmp_path)
    common = ["run", "ewt/scenario2", "--set", f"file_bytes={small['file_bytes']}", "-q", "--no-plots", "-j", "2"]
    rc, _, _ = run_cli(capsys, *common, "--set", "flows=4", "--sweep", "queue=droptail,red", "--seeds", "2")
    assert rc == 0
    first = tmp_path / "results" / "ewt-scenario2"
    before = pd.read_csv(first / "runs.csv")
    assert len(before) == 4 and set(before["flows"]) == {4}

    # Other settings, same scenario: a folder of their own, the first one untouched.
    rc, _, err = run_cli(capsys, *common, "--set", "flows=5", "--seed", "1")
    assert rc == 0
    second = tmp_path / "results" / "ewt-scenario2-2"
    assert "results/ewt-scenario2 holds runs of other settings; these go into results/ewt-scenario2-2" in err
    assert set(pd.read_csv(second / "runs.csv")["flows"]) == {5}
    pd.testing.assert_frame_equal(pd.read_csv(first / "runs.csv"), before)

    # The first settings again, another swept value: back into the first
    # folder, whose tables now cover its six stored runs, not just these two.
    rc, out, _ = run_cli(capsys, *common, "--set", "flows=4", "--sweep", "queue=ewt", "--seeds", "2")
    assert rc == 0
    assert "hold 6 runs: these 2 and 4 stored there before" in out
    runs = pd.read_csv(first / "runs.csv")
    stored = {p.stem for p in (first / "runs").glob("*.json")}
    assert set(runs["run"]) == stored and len(stored) == 6
    assert list(dict.fromkeys(runs["queue"])) == ["droptail", "red", "ewt"]
    summary = pd.read_csv(first / "summary.csv")
    assert set(summary["queue"]) == {"droptail", "red", "ewt"} and "flows" not in set(summary["metric"])
    assert len(pd.read_csv(first / "flows.csv")) == 6 * 4


def test_bundled_scenarios_with_the_same_file_name_have_distinct_default_folders():
    assert default_folder_name("awm/fairness") == "awm-fairness"
    assert default_folder_name("sarbe/fairness") == "sarbe-fairness"
    assert default_folder_name("ewt/scenario2.toml") == "ewt-scenario2"


def test_a_folder_given_with_other_settings_is_refused_naming_the_difference_and_keeps_its_tables(
    tmp_path, capsys, small
):
    rc, _, _ = run_cli(capsys, "run", "ewt/scenario2", *small_args(small), "--seed", "1", "--out", tmp_path,
                       "-q", "--no-plots")
    assert rc == 0
    before = (tmp_path / "runs.csv").read_text()
    rc, out, err = run_cli(capsys, "run", "ewt/scenario2", "--set", "flows=5", "--set",
                           f"file_bytes={small['file_bytes']}", "--seed", "1", "--out", tmp_path, "-q", "--no-plots")
    assert rc == 2
    assert f"--set flows: {small['flows']} there, 5 here" in err and "another folder" in err
    assert out == ""  # refused before anything ran or printed
    assert (tmp_path / "runs.csv").read_text() == before
    with pytest.raises(ScenarioError, match="out=.*--set flows"):
        netreturn.run("ewt/scenario2", set={**small, "flows": 5}, seed=1, out=tmp_path)


def test_an_interrupted_sweep_resumes_in_its_folder_and_its_tables_hold_every_run(tmp_path, small):
    ran = []
    sweep = {"queue": ["droptail", "red"]}
    netreturn.run("ewt/scenario2", set=small, sweep=sweep, seeds=2, jobs=1, out=tmp_path,
                  on_result=lambda s, r: ran.append(s.seed))
    assert len(ran) == 4
    lost = sorted((tmp_path / "runs").glob("*.json"))[0]
    lost.unlink()  # as if the sweep had been stopped before this run finished
    ran.clear()
    res = netreturn.run("ewt/scenario2", set=small, sweep=sweep, seeds=2, jobs=1, out=tmp_path,
                        on_result=lambda s, r: ran.append(s.seed))
    assert len(ran) == 1 and lost.is_file()
    assert len(pd.read_csv(tmp_path / "runs.csv")) == 4 == len(res.raw)


def test_open_reads_a_sweep_back_with_its_values_typed_so_numbers_sort_as_numbers(tmp_path, small):
    res = netreturn.run("ewt/scenario2", set={"file_bytes": small["file_bytes"]}, sweep={"flows": [17, 8]},
                        seeds=2, jobs=2, out=tmp_path / "ints")
    back = netreturn.open(tmp_path / "ints")
    for frame in (res.runs, back.runs, pd.read_csv(tmp_path / "ints" / "runs.csv")):
        assert pd.api.types.is_integer_dtype(frame["flows"])
        assert list(frame.sort_values("flows")["flows"].drop_duplicates()) == [8, 17]
    assert back.group_keys == ["flows"]
    assert list(back.runs["flows"]) == [17, 17, 8, 8]  # the order the values were given in
    assert pd.api.types.is_integer_dtype(back.flows["flows"])
    assert set(back.summary["flows"]) == {8, 17}
    # The same runs, read back: the same numbers, by run id.
    mine = res.runs.set_index("run").sort_index()
    theirs = back.runs.set_index("run").sort_index()
    pd.testing.assert_series_equal(mine["fct_mean_s"], theirs["fct_mean_s"])

    netreturn.run("sarbe/fairness", sweep={"loss": [0.01, 0.0]}, seed=1, jobs=2, out=tmp_path / "floats")
    loss = netreturn.open(tmp_path / "floats").runs["loss"]
    assert pd.api.types.is_float_dtype(loss) and sorted(loss) == [0.0, 0.01]


def test_open_gives_the_time_series_in_long_form_with_run_ids(tmp_path, small):
    netreturn.run("ewt/scenario2", set=small, sweep={"queue": ["droptail", "ewt"]}, seeds=2, jobs=2, out=tmp_path)
    back = netreturn.open(tmp_path)
    s = back.series
    assert {"run", "seed", "queue", "series", "time_s", "value"} <= set(s.columns)
    assert {"queue_bytes", "cwnd", "effective", "rtt_ms"} <= set(s["series"])
    assert set(s["run"]) <= set(back.runs["run"]) and set(s["seed"]) == {1}  # the first seed keeps its series
    q = s[(s.series == "queue_bytes") & (s.queue == "ewt")]
    assert q["time_s"].is_monotonic_increasing and (q["value"] >= 0).all()


def test_open_of_a_folder_without_runs_says_what_a_results_folder_is(tmp_path):
    with pytest.raises(FileNotFoundError, match="holds no runs.*netreturn run --out"):
        netreturn.open(tmp_path)


def test_a_single_sweep_value_is_one_value_not_a_string_of_letters(small):
    assert expand({"queue": "red"}) == [{"queue": "red"}]
    assert expand({"flows": 8, "queue": ["red", "ewt"]}) == [{"flows": 8, "queue": "red"}, {"flows": 8, "queue": "ewt"}]
    res = netreturn.run("ewt/scenario2", set=small, sweep={"queue": "red"}, seed=1)
    assert list(res.runs["queue"]) == ["red"]
    with pytest.raises(ScenarioError, match="no values to sweep"):
        netreturn.run("ewt/scenario2", set=small, sweep={"queue": []}, seed=1)
    with pytest.raises(ScenarioError, match="sweep must be a dict"):
        netreturn.run("ewt/scenario2", set=small, sweep=["queue"], seed=1)


def _rows(groups, n, rng):
    """Runs of made-up metric values, n per group: what the figure draws."""
    rows, labels = [], []
    for g in groups:
        for _ in range(n):
            rows.append({"jain_goodput": rng.uniform(0.3, 1.0), "utilization": rng.uniform(0.9, 1.0),
                         "fct_mean_s": rng.uniform(0.4, 0.6)})
            labels.append(g)
    return rows, labels


def _error_bars(fig):
    return [line for ax in fig.axes for line in ax.lines]


def test_a_one_seed_figure_shows_values_without_any_interval():
    rows, labels = _rows(["queue=droptail", "queue=red"], 1, random.Random(1))
    fig = plots.metrics_figure(rows, labels, "one seed")  # no interval, no warning (filterwarnings: error)
    assert "CI" not in fig._suptitle.get_text()
    assert _error_bars(fig) == []
    assert any("n = 1 run per group" in t.get_text() for t in fig.texts)
    plots._plt().close(fig)


def test_a_thirty_seed_figure_has_intervals_and_n_in_its_caption_without_a_warning():
    rows, labels = _rows(["queue=droptail", "queue=red", "queue=ewt"], 30, random.Random(2))
    fig = plots.metrics_figure(rows, labels, "thirty seeds")  # a warning would fail the test (filterwarnings)
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "n = 30 runs per group" in caption and "Warning" not in caption
    assert "95 % CI" in fig._suptitle.get_text()
    assert _error_bars(fig)
    # The axis is fitted to the data: utilization in [0.9, 1] does not start at zero.
    util = next(ax for ax in fig.axes if ax.get_title() == "utilization, monitored link")
    assert util.get_ylim()[0] > 0.5
    plots._plt().close(fig)


def test_fewer_than_five_runs_warn_and_their_intervals_stay_within_the_metrics_range():
    rows = [{"jain_goodput": x, "utilization": 0.5} for x in (0.35, 0.99, 0.4, 1.0)]
    labels = ["a", "a", "b", "b"]
    with pytest.warns(plots.SmallSampleWarning, match="n = 2 runs per group.*at least 5 seeds"):
        fig = plots.metrics_figure(rows, labels, "two seeds", metrics=["jain_goodput"])
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "clipped" in caption and "Jain fairness (goodput)" in caption and "Warning" in caption
    ys = [y for line in _error_bars(fig) for y in line.get_ydata() if not math.isnan(y)]
    assert ys and min(ys) >= 0.0 and max(ys) <= 1.0  # a t interval of 2 runs would reach -2 and 3
    plots._plt().close(fig)


def test_plot_redraws_a_stored_folder_as_svg_without_running_anything(tmp_path, capsys, monkeypatch, small):
    netreturn.run("ewt/scenario2", set=small, sweep={"queue": ["droptail", "red"]}, seeds=5, jobs=2, out=tmp_path)
    def no_runs(spec):
        raise AssertionError("netreturn plot ran a simulation")

    monkeypatch.setattr(runner, "execute", no_runs)
    rc, out, err = run_cli(capsys, "plot", tmp_path, "--format", "svg", "--metrics", "jain_goodput,fct_mean_s")
    assert rc == 0, err
    assert "10 stored runs in 2 group(s)" in out
    for name in ("metrics", "fct_cdf", "queue", "window", "rtt_cdf"):
        text = (tmp_path / f"{name}.svg").read_text()
        assert "<svg" in text[:1000], name
    assert not list(tmp_path.glob("*.png"))
    metrics_svg = (tmp_path / "metrics.svg").read_text()
    assert "Jain fairness" in metrics_svg and "mean FCT" in metrics_svg and "TCP efficiency" not in metrics_svg
    rc, _, err = run_cli(capsys, "plot", tmp_path, "--metrics", "jain")
    assert rc == 2 and "--metrics jain: not a metric of these runs" in err and "jain_goodput" in err


def test_a_run_folder_records_its_experiment(tmp_path, small):
    netreturn.run("ewt/scenario2", set=small, sweep={"queue": "red"}, seed=1, out=tmp_path)
    exp = json.loads((tmp_path / "experiment.json").read_text())
    assert exp["scenario"].endswith("ewt/scenario2.toml")
    assert exp["set"] == {"flows": "4", "file_bytes": "300kB"} and exp["sweep"] == {"queue": ["red"]}


def test_an_invalid_value_given_from_python_is_named_as_the_caller_wrote_it(small):
    with pytest.raises(ScenarioError) as e:
        netreturn.run("ewt/scenario2", set={**small, "queue": "fifo"}, seed=1)
    assert "set['queue'] = 'fifo'" in str(e.value) and "--set" not in str(e.value) and "droptail" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        netreturn.run("ewt/scenario2", set=small, sweep={"flows": [4, "abc"]}, seed=1)
    assert "sweep['flows'] value 'abc'" in str(e.value) and "expected integer" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        netreturn.run("ewt/scenario2", set={"flow": 3}, seed=1)
    assert "set= names an unknown parameter" in str(e.value) and "flows" in str(e.value)


def test_a_folder_made_before_experiment_json_existed_resumes_without_rerunning(tmp_path, small):
    """Folders written by an earlier version have runs but no experiment.json:
    the same sweep resumes there (nothing run again) and records its settings."""
    netreturn.run("ewt/scenario2", set=small, seeds=2, jobs=1, out=tmp_path)
    (tmp_path / "experiment.json").unlink()
    ran = []
    res = netreturn.run("ewt/scenario2", set=small, seeds=2, jobs=1, out=tmp_path,
                        on_result=lambda s, r: ran.append(s.seed))
    assert ran == [] and len(res.raw) == 2
    assert json.loads((tmp_path / "experiment.json").read_text())["set"] == {"flows": "4", "file_bytes": "300kB"}
