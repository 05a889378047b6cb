"""``netreturn study modern`` (issue 27): the window controllers against
modern AQMs and senders. Its quick form runs here; every statement is
judged from the runs of the invocation (nothing frozen)."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

from netreturn.reproduce import modern, statements as st
from netreturn.reproduce.text import f
from reproduce_checks import check_statement_table


def _row(mechanism: str, sender: str, seed: int, scenario: str = "ewt2", **metrics) -> dict:
    base = {c: math.nan for c, _, _ in modern.METRICS}
    return {"part": "grid", "scenario": scenario, "aqm": "", "mechanism": mechanism, "sender": sender, "seed": seed,
            **base, "tcp_data_loss_pct": 1.0, **metrics}


def _opts(**kw) -> modern.Options:
    o = modern.Options(**{"mechanisms": [m["name"] for m in modern.STUDY["mechanisms"]],
                          "senders": ["cubic", "newreno", "dctcp", "prague"], **kw})
    return o


def _statement(sid: str) -> dict:
    return next(s for s in modern.STUDY["statements"] if s["id"] == sid)


def test_a_delay_statement_holds_only_where_every_comparison_is_lower_beyond_the_cis():
    s = {**_statement("window-delay"), "a": ["ewt"]}
    clear = [_row("droptail", "cubic", i, qdelay_p99_ms=50 + i) for i in (1, 2, 3)] + [
        _row("ewt", "cubic", i, qdelay_p99_ms=10 + i) for i in (1, 2, 3)]
    j = modern.judge(s, modern.Cells(clear), _opts())
    assert j.verdict == st.HOLDS and "EWT 12 vs DropTail 52 ms" in j.measured
    close = [_row("droptail", "cubic", i, qdelay_p99_ms=50 + 5 * i) for i in (1, 2, 3)] + [
        _row("ewt", "cubic", i, qdelay_p99_ms=49 + 5 * i) for i in (1, 2, 3)]
    j = modern.judge(s, modern.Cells(close), _opts())
    assert j.verdict == st.PARTLY and "only within the 95 % CIs" in j.why
    worse = [_row("droptail", "cubic", i, qdelay_p99_ms=10 + i) for i in (1, 2, 3)] + [
        _row("ewt", "cubic", i, qdelay_p99_ms=50 + i) for i in (1, 2, 3)]
    assert modern.judge(s, modern.Cells(worse), _opts()).verdict == st.FAILS


def test_a_statement_about_a_sender_the_build_lacks_is_not_measurable_and_names_it():
    rows = [_row("droptail", "cubic", i, qdelay_p99_ms=10.0 + i) for i in (1, 2)]
    j = modern.judge(_statement("bbr-delay"), modern.Cells(rows), _opts(unavailable=["bbr"]))
    assert j.verdict == st.NOT_MEASURABLE and "no `bbr` congestion control" in j.why


def test_the_queueing_delay_percentiles_are_the_queue_series_over_the_rate_after_the_start_up():
    # 100 samples over 10 s; the first 20 % (2 s) hold a huge queue that the
    # percentiles leave out; then 1000..80000 bytes at 8 Mb/s: 1..80 ms.
    t = [i * 0.1 for i in range(100)]
    b = [10**9] * 20 + [1000 * (k + 1) for k in range(80)]
    r = {"summary": {"sim_time_s": 10.0}, "queue_series": {"time_s": t, "bytes": b}, "flows": {}}
    m = modern.measure(r, 8e6)
    assert m["qdelay_p50_ms"] == pytest.approx(40.5)
    assert m["qdelay_p99_ms"] == pytest.approx(1 + 0.99 * 79)


def test_the_web_mice_fct_percentiles_count_only_finished_mice():
    flows = {"fct_s": [9.0, 0.1, 0.2, None, 0.3], "web": [False, True, True, True, True]}
    m = modern.measure({"summary": {"sim_time_s": 1.0}, "flows": flows}, 1e6)
    assert m["web_fct_p50_s"] == pytest.approx(0.2) and m["web_fct_p99_s"] == pytest.approx(0.298)


def test_ngwa_runs_once_per_scenario_on_a_copy_of_the_scenario_with_its_table(tmp_path):
    o = modern.resolve(modern.Options(out=tmp_path, seeds=1, mechanisms=["ngwa", "ewt"], senders=["cubic"],
                                      scenarios=["ewt2"]))
    grid = [c for c in modern.plan(o) if c.part == "grid"]
    assert sorted((c.mechanism, c.sender) for c in grid) == [("ewt", "cubic"), ("ngwa", "newreno")]
    ngwa = next(c for c in grid if c.mechanism == "ngwa")
    assert "\n[ngwa]\nmode = 6\n" in Path(ngwa.spec.scenario).read_text()
    assert dict(ngwa.spec.overrides)["queue"] == "droptail"


def test_the_gateway_part_runs_bbr_as_a_part_of_its_own_only_when_the_senders_have_it(tmp_path):
    def parts(senders: list[str]) -> dict[str, set[str]]:
        o = modern.resolve(modern.Options(out=tmp_path, seeds=1, mechanisms=["droptail"], senders=senders,
                                          scenarios=["ewt2"]))
        got: dict[str, set[str]] = {}
        for c in modern.plan(o):
            if c.part == "gateway":
                got.setdefault(c.scenario, set()).add(c.sender)
                assert dict(c.spec.overrides)["tcp"] == c.sender  # the sender's own tcp.cc
        return got

    rates = modern.STUDY["gateway"]["rates"]
    assert parts(["cubic"]) == {f"gateway link {r}": {"cubic"} for r in rates}
    assert parts(["cubic", "bbr"]) == {**{f"gateway link {r}": {"cubic"} for r in rates},
                                       **{f"gateway link {r}, BBR": {"bbr"} for r in rates}}


def test_a_study_file_naming_an_unknown_mechanism_is_refused_with_the_file_and_the_statement(tmp_path):
    bad = tmp_path / "modern.toml"
    bad.write_text(modern.STUDY_FILE.read_text().replace('a = ["fq_codel", "pie", "dualpi2"]\nb = "droptail"',
                                                         'a = ["fq_codel", "pie", "dualpi3"]\nb = "droptail"', 1))
    with pytest.raises(ValueError, match=r"modern\.toml: statements\[0\] \(aqm-delay\)\.a: 'dualpi3' is not one of"):
        modern.load(bad)


def _measured(report: str, sid: str) -> str:
    return re.search(rf"^\| {sid} \|.*$", report, re.M)[0]


def test_the_quick_study_judges_every_statement_from_its_own_runs_and_other_seeds_change_them(tmp_path):
    from netreturn import cli

    out = tmp_path / "study"
    assert cli.main(["study", "modern", "--quick", "--seeds", "1", "--out", str(out), "-q", "-j", "2"]) == 0
    verdicts = check_statement_table(out, modern.STUDY["statements"])
    assert verdicts["ecn-loss"] == "not measurable"  # no DCTCP column in the quick grid
    report = (out / "report.md").read_text()
    assert "smoke test" in report and "netreturn study modern --quick --seeds 1" in report
    assert (out / "figures" / "qdelay_p99_ms.png").stat().st_size > 5000
    assert (out / "figures" / "gateway.png").stat().st_size > 5000
    # The L4S row quotes the means of runs.csv.
    with (out / "runs.csv").open() as fh:
        runs = list(csv.DictReader(fh))

    def mean_of(sc: str, m: str, snd: str, col: str) -> float:
        xs = [float(r[col]) for r in runs if (r["scenario"], r["mechanism"], r["sender"]) == (sc, m, snd)]
        return sum(xs) / len(xs)

    row = _measured(report, "l4s-delay")
    for sc in ("ewt2", "web"):
        want = (f"{sc}/DualPI2 Prague (ECT(1)) {f(mean_of(sc, 'dualpi2', 'prague', 'qdelay_p50_ms'))} vs CUBIC "
                f"{f(mean_of(sc, 'dualpi2', 'cubic', 'qdelay_p50_ms'))} ms")
        assert want in row
    # BBR runs in the quick grid too: its window statement quotes BBR's own runs.
    row = _measured(report, "bbr-windows-loss")
    for sc in ("ewt2", "web"):
        want = (f"{sc}/BBR EWT {f(mean_of(sc, 'ewt', 'bbr', 'tcp_data_loss_pct'))} vs DropTail "
                f"{f(mean_of(sc, 'droptail', 'bbr', 'tcp_data_loss_pct'))} %")
        assert want in row
    one = {s["id"]: _measured(report, s["id"]) for s in modern.STUDY["statements"]}
    # Issue 24's "nothing frozen": a second seed changes the numbers quoted.
    assert cli.main(["study", "modern", "--quick", "--seeds", "2", "--out", str(out), "-q", "-j", "2"]) == 0
    two = (out / "report.md").read_text()
    changed = [sid for sid, text in one.items() if "**not measurable**" not in text and _measured(two, sid) != text]
    assert {"aqm-delay", "l4s-delay", "mice-fq", "gateway-loss"} <= set(changed)


def test_an_unknown_mechanism_is_refused_naming_the_option_and_what_is_allowed(tmp_path, capsys):
    from netreturn import cli

    assert cli.main(["study", "modern", "--quick", "--mechanisms", "ewt,codle", "--out", str(tmp_path), "-q"]) == 2
    err = capsys.readouterr().err
    assert "--mechanisms codle: allowed droptail, red, ewt, awm, rwm, ngwa, fq_codel, pie, dualpi2" in err
    assert not (tmp_path / "runs").exists()  # refused before any run
