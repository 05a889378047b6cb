"""`reproduce ewt`'s explanations of the fairness gap, Fig. 3 and Fig. 10, and
its Fig. 1: every number they print comes from the runs they are given."""

import re
from pathlib import Path

import pytest

from netreturn.reproduce import ewt as reproduce, ewt_evidence as ev, statements as st
from netreturn.reproduce.grid import Group, Table


def _run(goodput, loss, rto, seed=1):
    return {"seed": seed, "summary": {}, "extra": {"goodput_mbps": goodput, "loss_pct": loss, "timeouts": rto,
                                                   "start_s": [1.0] * len(goodput), "fct_s": [10.0] * len(goodput)}}


def test_the_top_flow_is_the_one_with_the_highest_goodput_compared_with_the_median_of_the_others():
    t = ev.top_flow([_run([0.2, 1.0, 0.3, 0.25], [4.0, 0.1, 5.0, 6.0], [20, 0, 30, 10]),
                     _run([2.0, 0.5, 0.5, 0.5], [1.0, 2.0, 3.0, 4.0], [1, 2, 3, 4])])
    assert t["runs"] == 2
    # run 1: top 1.0 / median 0.275; run 2: top 2.0 / median 0.5
    assert t["ratio"] == pytest.approx((1.0 / 0.275 + 2.0 / 0.5) / 2)
    assert t["loss_top"] == pytest.approx((0.1 + 1.0) / 2)
    assert t["loss_rest"] == pytest.approx((5.0 + 3.0) / 2)
    assert t["rto_top"] == pytest.approx(0.5) and t["rto_rest"] == pytest.approx((20 + 3) / 2)
    assert ev.top_flow([_run([1.0], [0.0], [0])]) is None  # one flow: no "others"


def test_a_flow_is_held_by_ewt_when_its_advertised_window_is_below_its_cwnd():
    trace = {"cwnd": [10, 20, 30, 40], "rwnd": [50, 10, 30, 5]}
    assert ev.bound_share(trace) == pytest.approx(0.5)  # equal is not held: cwnd limits as much
    runs = [{"extra": {"goodput_mbps": [1.0, 0.2], "loss_pct": [0.0, 3.0], "timeouts": [0, 9]},
             "traces": [{"flow": 0, "cwnd": [10] * 4, "rwnd": [5] * 4}, {"flow": 1, "cwnd": [10] * 4,
                                                                           "rwnd": [50] * 4}]}]
    fl = ev.traced_flows(runs)
    assert [(x["bound"], x["goodput"], x["rto"]) for x in fl] == [(1.0, 1.0, 0), (0.0, 0.2, 9)]
    # Per run the top flow's held share against the other flows'.
    assert ev.top_held(fl) == ([1.0], 0.0)
    assert ev.top_held(fl + [dict(x, run=1, goodput=1 - x["goodput"]) for x in fl]) == ([1.0, 0.0], 0.5)


def _table(ewt_runs, droptail_runs, red_runs):
    groups = []
    for m, runs in (("ewt", ewt_runs), ("droptail", droptail_runs), ("red", red_runs)):
        for lv in reproduce.LEVELS:
            rs = [dict(r, summary={"jain_goodput": r["jain"]}) for r in runs]
            groups.append(Group("scenario1", "paper", lv, m, 8, rs))
    return Table(groups, ["droptail", "red", "ewt"], ["jain_goodput"])


def _fair_text(scale):
    """A fairness bullet from runs whose per-flow numbers scale with ``scale``."""
    ewt = [dict(_run([0.2 * scale, 2.0, 0.25, 0.3], [4.0 * scale, 0.1, 5.0, 6.0], [20, 0, 30, 10], s), jain=0.6)
           for s in (1, 2, 3)]
    dt = [dict(_run([0.5, 1.0 * scale, 0.5, 0.4], [2.0, 2.5 * scale, 3.0, 2.0], [2, 1, 3, 2], s), jain=0.8)
          for s in (1, 2, 3)]
    red = [dict(_run([0.5, 0.6, 0.5, 0.5], [5.0, 5.0, 5.0, 5.0 * scale], [3, 3, 3, 3], s), jain=0.99)
           for s in (1, 2, 3)]
    table = _table(ewt, dt, red)
    traced = {"scenario1": [{"bound": 0.9, "goodput": 2.0 * scale, "loss": 0.1, "rto": 0},
                            {"bound": 0.1, "goodput": 0.3, "loss": 4.0 * scale, "rto": 20},
                            {"bound": 0.2, "goodput": 0.25, "loss": 5.0, "rto": 25}]}
    out = ev.fairness_bullets(table, ["scenario1"], ["droptail", "red", "ewt"], reproduce.LEVELS,
                              reproduce.METHOD_LABELS, traced, "128 KiB")
    assert len(out) == 1
    return out[0], table


def test_the_fairness_reason_quotes_numbers_computed_from_its_runs_and_moves_with_them():
    a, table = _fair_text(1.0)
    b, _ = _fair_text(1.5)
    assert a != b
    assert re.findall(r"\d+\.\d+", a) != re.findall(r"\d+\.\d+", b)
    # Jain of EWT as the table has it, and the top flow's loss against the others' from the runs.
    assert "Jain 0.60 / 0.60 / 0.60" in a and "the lowest of the 3 methods" in a
    top = ev.top_flow(table.cells[("scenario1", "paper", "mild", "ewt")].runs)
    assert f"loss {reproduce._f(top['loss_top'])} / " in a
    assert "1 flow(s) were held" in a
    assert "the top flow of each run was held 0.90 of its samples, the other flows 0.15 (median)" in a
    # EWT's top flow loses far less than the others here: the protection narrative.
    assert "window-limited" in a


def test_no_fairness_reason_where_ewt_is_as_fair_as_the_others():
    runs = [dict(_run([0.5, 0.5], [1.0, 1.0], [1, 1], s), jain=1.0) for s in (1, 2)]
    table = _table(runs, [dict(r, jain=0.9) for r in runs], runs)
    assert ev.fairness_bullets(table, ["scenario1"], ["droptail", "red", "ewt"], reproduce.LEVELS,
                               reproduce.METHOD_LABELS, {}, "128 KiB") == []


def _fig1_run(delivered_end, rto=(0, 1, 2)):
    traces = []
    for i, d in enumerate(delivered_end):
        traces.append({"flow": i, "time_s": [1.0, 5.0, 20.0], "delivered": [0.0, d, d + 1e6],
                       "cwnd": [3000.0, 10000.0 * (1 + d / 1e5), 5000.0]})
    return {"traces": traces, "flows": {"start_s": [1.0, 1.0, 1.0], "fct_s": [9.0, 15.0, 19.0], "timeouts": list(rto)}}


def test_fig1_holds_only_where_one_flow_delivers_at_least_half_the_bytes_while_all_three_send():
    mono = _fig1_run([600_000, 300_000, 100_000])
    fair = _fig1_run([350_000, 330_000, 320_000])
    s = ev.fig1_stats(mono)
    assert s["top"] == 0 and s["share"][0] == pytest.approx(0.6) and s["until"] == pytest.approx(10.0)
    j = ev.fig1_judgement({("fig1", "scenario1", 1): mono, ("fig1", "scenario1", 2): mono}, ["scenario1"], 2)
    assert j.verdict == st.HOLDS and "2 of 2 runs" in j.measured
    j = ev.fig1_judgement({("fig1", "scenario1", 1): mono, ("fig1", "scenario1", 2): fair}, ["scenario1"], 2)
    assert j.verdict == st.PARTLY and "0.60 / 0.35" in j.measured
    j = ev.fig1_judgement({("fig1", "scenario1", 1): fair}, ["scenario1"], 1)
    assert j.verdict == st.FAILS
    assert ev.fig1_judgement({}, ["scenario1"], 1).verdict == st.NOT_MEASURABLE


def test_the_traced_copy_of_a_scenario_traces_every_flow_and_starts_them_together(tmp_path):
    path, over = ev.traced_variant(tmp_path, reproduce.SCENARIOS["scenario1"], "scenario1", 3, "50ms",
                                   '{ uniform = ["1s", "1.1s"] }', "fig1_")
    text = Path(path).read_text()
    assert over == {}
    assert "trace_flows = [0, 1, 2]" in text and 'sample_interval = "50ms"' in text
    assert 'start = { uniform = ["1s", "1.1s"] }' in text and '"8s"' not in text
    from netreturn.scenarios import load

    load(path)  # still a valid scenario


class _FakeRuns:
    """Runs' interface for a Grid: a run's result is its drops outside the
    bottleneck, given per (variant, seed)."""

    class paper:  # noqa: N801  (the attribute Grid reads)
        levels = ["mild"]

    BULK = 2

    def __init__(self, drops):
        self.drops, self.ran, self._cb, self.results = drops, [], [], {}

    class _Spec:
        def __init__(self, v, seed):
            self.v, self.seed = v, seed

        def key(self):
            return f"{self.v}-{self.seed}"

    def spec(self, sc, n, m, seed, keep_series=False, variant=None):
        return self._Spec("access" if variant else "base", seed)

    def request(self, spec, phase, priority=2, callback=None):
        k = spec.key()
        self.ran.append(k)
        self.results[k] = {"seed": spec.seed, "summary": {"drops_elsewhere": self.drops.get(k, 0)}}
        if callback:
            self._cb.append((callback, self.results[k]))
        return k

    def drain(self):
        while self._cb:
            cb, r = self._cb.pop(0)
            cb(r)

    def get(self, k):
        return self.results[k]


def test_a_variant_run_is_shared_only_where_its_base_run_dropped_nothing_outside_the_bottleneck():
    from netreturn.reproduce.grid import Grid
    from netreturn.reproduce.store import Options

    runs = _FakeRuns({"base-2": 5})
    opts = Options(seeds=3, scenarios=["scenario1"], methods=["droptail"])
    g = Grid(runs, opts, {"scenario1": {"mild": 8}}, "access", set(), "access", {"scenario1": ("x.toml", {})},
             share_if=lambda r: r["summary"].get("drops_elsewhere") == 0)
    runs.drain()
    assert (g.shared, g.asked) == (2, 3)
    assert [r["seed"] for r in g.groups()[0].runs] == [1, 2, 3]
    assert "access-2" in runs.ran and "access-1" not in runs.ran and "access-3" not in runs.ran
    # Without share_if every variant run is asked for.
    runs = _FakeRuns({})
    g = Grid(runs, opts, {"scenario1": {"mild": 8}}, "access", set(), "access", {"scenario1": ("x.toml", {})})
    assert g.shared == 0 and [k for k in runs.ran if k.startswith("access")] == ["access-1", "access-2", "access-3"]


def test_the_settings_section_9_quotes_are_the_ones_the_report_ran_with():
    from netreturn.reproduce.store import Options

    ours = reproduce.scenario_settings("scenario2", Options())
    assert (ours["rcv_buf"], ours["buffer"], ours["st"], ours["access_buffer"]) == ("1MB", "97kB", "29kB", "100p")
    moved = reproduce.scenario_settings("scenario2", Options(sets={"rcv_buf": "131072B", "buffer": "50kB",
                                                                   "ewa_alpha": 4096}))
    assert (moved["rcv_buf"], moved["buffer"], moved["ewa_alpha"]) == ("131072B", "50kB", 4096)
    assert reproduce.scenario_settings("scenario1", Options())["access_is_bottleneck"]
    assert not ours["access_is_bottleneck"]
