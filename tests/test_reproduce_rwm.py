"""RWM (seed 003) in the reproduction framework: its paper file
(paper/rwm.toml) and every statement judged from the testbed's tables. The
runs need root and namespaces (tests/testbed); the judging is tested here
on tables built by hand."""

import pandas as pd

from netreturn.reproduce import statements as st
from netreturn.testbed import rwm


def _fct(none_median: float, bdp_median: float) -> pd.DataFrame:
    rows = []
    for n in (1, 4):
        for rtt in (20.0, 140.0):
            for s, med in (("none", none_median), ("bdp-10%", bdp_median * 1.05), ("bdp", bdp_median),
                           ("bdp+10%", bdp_median * 1.02)):
                iqr = 0.5 if s == "bdp-10%" else 1.0
                rows.append({"flows": n, "rtt_ms": rtt, "setting": s, "fct_p25_s": med - iqr, "fct_median_s": med,
                             "fct_p75_s": med + iqr, "fct_mean_s": med, "finish_spread_median": 0.4 if s == "none"
                             else 0.05, "slowest_improvement_pct": float("nan") if s == "none" or n == 1 else 30.0,
                             "median_improvement_pct": float("nan") if s == "none"
                             else (none_median - med) / none_median * 100})
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
