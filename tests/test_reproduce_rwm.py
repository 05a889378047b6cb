"""RWM (seed 003) in the reproduction framework: its paper file
(paper/rwm.toml) and every statement judged from the testbed's tables. The
runs need root and namespaces (tests/testbed); the judging is tested here
on tables built by hand."""

import pandas as pd

from netreturn.reproduce import statements as st
from netreturn.testbed import rwm


def _fct(none_median: float, bdp_median: float, rtts=(20.0, 140.0), drops=None) -> pd.DataFrame:
    """FCT tables by hand: no control's median, RWM's (exact BDP; -10 % a
    little slower and steadier, +10 % a little slower); ``drops``: the edge
    queue's drops per run of RWM at each RTT (none elsewhere)."""
    rows = []
    for n in (1, 4):
        for rtt in rtts:
            for s, med in (("none", none_median), ("bdp-10%", bdp_median * 1.05), ("bdp", bdp_median),
                           ("bdp+10%", bdp_median * 1.02)):
                iqr = 0.5 if s == "bdp-10%" else 1.0
                rows.append({"flows": n, "rtt_ms": rtt, "setting": s, "fct_p25_s": med - iqr, "fct_median_s": med,
                             "fct_p75_s": med + iqr, "fct_mean_s": med, "finish_spread_median": 0.4 if s == "none"
                             else 0.05, "slowest_improvement_pct": float("nan") if s == "none" or n == 1 else 30.0,
                             "median_improvement_pct": float("nan") if s == "none"
                             else (none_median - med) / none_median * 100,
                             "drops_mean": (drops or {}).get(rtt, 0.0) if s != "none" else 0.0})
    return pd.DataFrame(rows)


def _rtt() -> pd.DataFrame:
    return pd.DataFrame([{"rtt_ms": 20.0, "setting": s, "flows": n, "std": sd, "mean": m, "p25": m, "p50": m,
                          "p75": m, "max": m} for s, sd, m in (("none", 12.0, 50.0), ("bdp", 0.3, 21.0))
                         for n in (1, 4)])


def test_the_paper_file_holds_table_i_and_the_improvements():
    assert rwm.PAPER["fct_median_improvement_pct"] == {"one": 46, "four": 70}
    none1 = next(t for t in rwm.PAPER["table1"] if t["control"] == "none" and t["flows"] == 1)
    assert (none1["std"], none1["mean"], none1["max"]) == (12.8, 53.2, 71.2)


def test_every_statement_is_judged_and_the_verdicts_follow_the_tables():
    fct, rtt = _fct(15.0, 10.0), _rtt()
    j = {s["id"]: rwm.judge(s, fct, rtt) for s in rwm.PAPER["statements"]}
    assert set(j) == {s["id"] for s in rwm.PAPER["statements"]}
    assert all(x.verdict in st.VERDICTS for x in j.values())
    assert j["fig3b-140ms-median-1.5x"].verdict == "holds" and "1.50" in j["fig3b-140ms-median-1.5x"].measured
    assert j["fig3b-bdp-best"].verdict == "holds"
    assert j["table1-std-higher"].verdict == "holds"
    assert j["table1-rwm-nominal"].verdict == "holds"
    # A testbed where RWM does nothing: the statements fail from the same tables.
    same = {s["id"]: rwm.judge(s, _fct(10.0, 10.0), rtt) for s in rwm.PAPER["statements"]}
    assert same["fig3b-140ms-median-1.5x"].verdict == "fails"
    assert same["fig3b-140ms-p75-below-p25"].verdict == "fails"


def test_statements_about_what_was_not_run_are_not_measurable_with_why():
    fct = _fct(15.0, 10.0)
    fct = fct[fct.rtt_ms == 20.0]
    j = rwm.judge(next(s for s in rwm.PAPER["statements"] if s["id"] == "fig3b-140ms-median-1.5x"), fct, _rtt())
    assert j.verdict == "not measurable" and "140 ms" in j.why


def _raw() -> list[dict]:
    """Testbed runs made by hand (the real ones need root and namespaces):
    every setting, 1 and 4 downloads, 20 and 140 ms, two repetitions; RWM's
    downloads finish sooner and see a steadier RTT."""
    raw = []
    for n in (1, 4):
        for rtt in (20, 140):
            for s in rwm.SETTINGS:
                for seed in (1, 2):
                    base = (15.0 if s == "none" else 10.0) * rtt / 20
                    fct = [base + 0.3 * i + 0.1 * seed for i in range(n)]
                    ser = [[(0.02 * k, rtt + (12.0 if s == "none" else 0.3) * ((k % 5) - 2) + 25.0 * (s == "none"))
                            for k in range(50)] for _ in range(n)]
                    raw.append({"world": "testbed", "seed": seed, "wall_s": 1.0,
                                "params": {"flows": n, "rtt": f"{rtt}ms", "setting": s},
                                "summary": {"fct_max_s": max(fct), "retransmits": 0, "queue_drops": 0},
                                "flows": {"fct_s": fct, "goodput_mbps": [8.0 / n] * n},
                                "series": {"rtt": ser}})
    return raw


def test_the_testbed_report_judges_every_statement_of_the_paper_file(tmp_path):
    from reproduce_checks import check_statement_table

    rwm.report(_raw(), tmp_path, plots=False)
    verdicts = check_statement_table(tmp_path, rwm.PAPER["statements"])
    assert len(verdicts) == len(rwm.PAPER["statements"])
    # Both 140 ms statements are judged from these runs, not left out.
    assert verdicts["fig3b-140ms-median-1.5x"] in ("holds", "partly", "fails")
    assert verdicts["fig3b-140ms-p75-below-p25"] in ("holds", "partly", "fails")


def _statement(sid: str) -> dict:
    return next(s for s in rwm.PAPER["statements"] if s["id"] == sid)


def test_every_statement_the_paper_makes_at_140_ms_is_in_the_paper_file():
    at140 = [s for s in rwm.PAPER["statements"] if "140ms" in s["quote"] or s.get("rtt_ms") == 140]
    ids = {s["id"] for s in at140}
    # Fig. 3a: the reduced margin and the tail drop; Fig. 3b: the 1.5 x median and the quartiles.
    assert {"fig3a-140ms-margin-reduced", "fig3a-140ms-tail-drop", "fig3b-140ms-median-1.5x",
            "fig3b-140ms-p75-below-p25"} <= ids


def test_the_reduced_margin_at_140_ms_follows_the_improvements_per_rtt():
    st_ = _statement("fig3a-140ms-margin-reduced")
    rtts = (60.0, 100.0, 140.0)
    # RWM 10 s against 12 s at every RTT: the margin is the same everywhere, not reduced at 140 ms.
    same = rwm.judge(st_, _fct(12.0, 10.0, rtts), None)
    assert same.verdict == "partly" and "140 ms +17 %" in same.measured
    fct = _fct(12.0, 10.0, rtts)
    one140 = (fct.flows == 1) & (fct.rtt_ms == 140.0) & (fct.setting == "bdp")
    fct.loc[one140, "median_improvement_pct"] = 3.0
    assert rwm.judge(st_, fct, None).verdict == "holds"
    # RWM slower than no control everywhere: no clear improvement and the margin not reduced.
    assert rwm.judge(st_, _fct(9.0, 10.0, rtts), None).verdict == "fails"
    assert rwm.judge(st_, _fct(12.0, 10.0, (20.0, 140.0)), None).verdict == "not measurable"


def test_an_rtt_in_milliseconds_is_the_whole_number_a_statement_names():
    # 0.06 s x 1000 is 60.00000000000001 in floating point: the tables key
    # their rows by the RTT as the statements write it.
    assert [rwm._ms(x) for x in ("20ms", "60ms", "100ms", "140ms")] == [20.0, 60.0, 100.0, 140.0]


def test_tail_drop_at_140_ms_holds_only_where_rwm_starts_dropping_there():
    st_ = _statement("fig3a-140ms-tail-drop")
    rtts = (20.0, 60.0, 140.0)
    j = rwm.judge(st_, _fct(12.0, 10.0, rtts, drops={140.0: 300.0}), None)
    assert j.verdict == "holds" and "140 ms 300" in j.measured
    assert rwm.judge(st_, _fct(12.0, 10.0, rtts, drops={60.0: 5.0, 140.0: 300.0}), None).verdict == "partly"
    assert rwm.judge(st_, _fct(12.0, 10.0, rtts), None).verdict == "fails"


def test_overestimation_lowers_the_25th_percentile_only_if_the_tables_say_so():
    st_ = _statement("fig3b-over-lower-p25")
    rtts = (20.0, 100.0, 140.0)
    # By hand: +10 % is slower than the exact BDP with the same spread, so neither part holds.
    assert rwm.judge(st_, _fct(12.0, 10.0, rtts), None).verdict == "fails"
    fct = _fct(12.0, 10.0, rtts)
    over = (fct.flows == 4) & (fct.setting == "bdp+10%") & (fct.rtt_ms >= 100.0)
    fct.loc[over, "fct_p25_s"] = 8.0
    fct.loc[over, "fct_p75_s"] = 12.0
    j = rwm.judge(st_, fct, None)
    assert j.verdict == "holds" and "p25 +10 % 8.00 vs BDP 9.00 s" in j.measured


def test_the_report_states_the_testbed_time_from_the_runs(tmp_path):
    raw = _raw()
    for i, r in enumerate(raw):
        r["wall_s"], r["load_avg"] = 2.0 + i % 3, 1.0 + i % 5
    rwm.report(raw, tmp_path, plots=False)
    text = (tmp_path / "report.md").read_text()
    total = sum(r["wall_s"] for r in raw)
    assert f"Testbed time: {len(raw)} runs, {total:.0f} s of runs" in text
    assert "load average at their start: median 3.0 (1.0 .. 5.0)" in text
