"""EWT's RFC 7928 calibration across the settings the paper leaves out
(issue 24): why it degenerates, from the scenario's own numbers, and the
calibration under each setting side by side (reproduce/ewt_calibration.py)."""

from __future__ import annotations

import re

from netreturn.calibrate import LevelSearch
from netreturn.reproduce import ewt_calibration as cal
from netreturn.scenarios import resolve

S1 = str(resolve("ewt/scenario1"))
S2 = str(resolve("ewt/scenario2"))
TARGETS = [0.1, 0.5, 1.0]
LEVELS = ["mild", "medium", "heavy"]


def test_the_path_budget_is_read_from_the_scenario_and_follows_its_parameters():
    b = cal.path_budget(S2)
    small = cal.path_budget(S2, {"rcv_buf": "131072B"})
    assert b["mss"] == 1458 and b["window"] == 1_000_000 / 1458
    assert small["window"] == 131072 / 1458
    # 45 Mb/s less the 13.35 Mb/s UDP flow over 2 + 80 + 2 ms.
    assert abs(b["bdp"] - (45e6 - 13.35e6) * 0.084 / 8 / 1458) < 1e-6
    assert b["buffer"] == 97000 / 1458
    assert not b["access_is_bottleneck"]
    assert cal.path_budget(S1)["access_is_bottleneck"]  # every link of scenario 1 runs at 4 Mb/s


def test_one_flow_overflows_alone_where_its_window_exceeds_the_path_and_the_buffer():
    assert "one flow alone overflows it (686 > 294)" in cal.why_line(cal.path_budget(S2))
    # ns-3's default receive buffer: 90 segments; 4 x 90 > 294 > 3 x 90.
    assert "from 4 flows on (4 × 90 > 294)" in cal.why_line(cal.path_budget(S2, {"rcv_buf": "131072B"}))
    # Scenario 1: a lone flow queues at its own 4 Mb/s access link first.
    assert "overflows its 100-packet access queue" in cal.why_line(cal.path_budget(S1))
    assert "from 3 flows on" in cal.why_line(cal.path_budget(S1, {"rcv_buf": "131072B"}))


def _search(losses: dict[int, float]) -> LevelSearch:
    s = LevelSearch(TARGETS, min_flows=1, max_flows=64, max_seeds=1, first_seeds=1)
    for n, x in losses.items():
        s.add(n, [x])
    return s


def _section(ours: dict[int, float], other: dict[int, float]) -> str:
    settings = [cal.Setting("100p", "1MB", True, {("scenario2", "droptail"): _search(ours)},
                            {"scenario2": (S2, {})}),
                cal.Setting("100p", "128 KiB", False, {("scenario2", "droptail"): _search(other)},
                            {"scenario2": (S2, {"rcv_buf": "131072B"})})]
    return "\n".join(cal.section(settings, ["scenario2"], LEVELS, TARGETS, {"scenario2": {"mild": 13, "medium": 24,
                                                                                          "heavy": 31}},
                                 "droptail", 64))


def test_the_section_flags_a_degenerate_calibration_and_names_the_setting_nearest_the_paper():
    text = _section({1: 2.2, 2: 1.9}, {3: 0.05, 4: 0.2, 7: 0.4, 8: 0.6, 16: 0.9, 17: 1.1})
    rows = {r.split("|")[2].strip(): r for r in text.splitlines() if r.startswith("| 100p")}
    assert "degenerate: every level is reached at the smallest count" in rows["1MB (ours)"]
    assert "1 / 1 / 1" in rows["1MB (ours)"]
    assert "4 / 8 / 17" in rows["128 KiB"] and "distinct" in rows["128 KiB"]
    # ours / paper as a geometric mean: (4/13 * 8/24 * 17/31) ** (1/3)
    assert f"{(4 / 13 * 8 / 24 * 17 / 31) ** (1 / 3):.2f}" in rows["128 KiB"]
    assert re.search(r"Nearest the paper's Table 2 with distinct levels: scenario2: 100p access queues, 128 KiB", text)
    assert "Where our own calibration is degenerate (scenario2)" in text
    # The losses shown are the searches': other runs, other numbers.
    moved = _section({1: 3.3, 2: 1.9}, {3: 0.05, 4: 0.2, 7: 0.4, 8: 0.6, 16: 0.9, 17: 1.1})
    assert "1: 2.2," in text and "1: 3.3," in moved


def test_no_setting_is_named_nearest_when_every_calibration_is_degenerate():
    text = _section({1: 2.2}, {3: 1.2, 2: 0.0})
    assert "Nearest the paper" not in text
    assert "No setting run here gives distinct levels in scenario2" in text


def test_calibrate_says_why_from_the_scenario_when_its_answer_is_degenerate(monkeypatch, capsys):
    from netreturn import calibrate as calmod, cli

    monkeypatch.setattr(calmod, "calibrate", lambda *a, **k: [("mild", 0.1, 1, 2.2), ("medium", 0.5, 1, 2.2),
                                                              ("heavy", 1.0, 1, 2.2)])
    assert cli.main(["calibrate", "ewt/scenario2", "-q"]) == 0
    err = capsys.readouterr().err
    assert "degenerate calibration" in err and "one flow alone overflows it (686 > 294)" in err
    assert cli.main(["calibrate", "ewt/scenario2", "-q", "--set", "rcv_buf=131072B"]) == 0
    assert "from 4 flows on (4 × 90 > 294)" in capsys.readouterr().err


def test_the_capacity_gain_is_also_given_over_the_scenarios_whose_levels_are_distinct():
    from netreturn.reproduce import ewt
    from netreturn.reproduce.store import Options

    def rows(sc, flows):
        return [{"scenario": sc, "level": lv, "method": m, "flows": n, "bound": n, "censored": False}
                for m, ns in flows.items() for lv, n in zip(LEVELS, ns)]

    sweep = [cal.Setting("100p", "1MB", True, {}, {}),
             cal.Setting("100p", ewt.RCVBUF_LABEL, False,
                         {("scenario1", "droptail"): _search({2: 0.0, 3: 1.2}),
                          ("scenario2", "droptail"): _search({3: 0.05, 4: 0.2, 8: 0.6, 16: 0.9, 17: 1.1})}, {})]
    cap = (rows("scenario1", {"droptail": [3, 3, 3], "ewt": [30, 30, 30], "awm": [3, 3, 3]})
           + rows("scenario2", {"droptail": [4, 8, 17], "ewt": [8, 8, 17], "awm": [4, 16, 34]}))
    opts = Options(scenarios=["scenario1", "scenario2"], methods=["droptail", "awm", "ewt"])
    ok, g = ewt.distinct_gains(opts, sweep, cap)
    assert ok == ["scenario2"]  # scenario 1's levels share a count
    # EWT / best other - 1 per level: 8/4, 8/16, 17/34 -> +100, -50, -50 %; over DropTail +100, 0, 0 %.
    assert g["mean_gain_best_pct"] == (100 - 50 - 50) / 3
    assert g["mean_gain_baseline_pct"] == 100 / 3
    assert ewt.distinct_gains(opts, sweep[:1], cap) == ([], {"cases": []})
