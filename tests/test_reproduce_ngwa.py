"""`netreturn reproduce ngwa`: the paper file (paper/ngwa.toml) and the
quick form end to end: every statement judged from the runs."""

import csv

import pytest

from netreturn import cli
from netreturn.reproduce import ngwa
from reproduce_checks import check_statement_table


def test_the_paper_file_holds_table_2_and_the_triple_dupacks_the_text_gives():
    # SPEC.md 5.2 / seed 001 Table 2 and section 3.3.
    assert ngwa.PAPER["table2_lost"] == {"rfc793": 4001, "newreno": 328, "mode1": 7, "mode2": 0, "mode3": 1063,
                                         "mode4": 869, "mode5": 0, "mode6": 0, "mode7": 0, "mode8": 0}
    assert {k: ngwa.PAPER["fig6_triple_dupacks"][k] for k in ("mode1", "mode3", "mode4")} == \
        {"mode1": 30, "mode3": 5279, "mode4": 2833}
    # Every value of Table 2 is a statement of its own.
    assert {s["row"] for s in ngwa.PAPER["statements"] if s["id"].startswith("table2-") and s["check"] == "value"} \
        == set(ngwa.PAPER["rows"])


def test_a_statement_naming_an_unknown_row_is_refused(tmp_path):
    bad = tmp_path / "ngwa.toml"
    bad.write_text(ngwa.PAPER_FILE.read_text().replace('rows = ["mode7", "mode8"]', 'rows = ["mode9", "mode8"]'))
    with pytest.raises(ValueError, match=r"fig3-modes78-start-high.*'mode9'"):
        ngwa.load_paper(bad)


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """The quick reproduction with rounds 1..2 and 1..3: seeds -> out."""
    outs = {}
    for k in (2, 3):
        outs[k] = tmp_path_factory.mktemp(f"ngwa{k}")
        assert cli.main(["reproduce", "ngwa", "--quick", "--seeds", str(k), "--out", str(outs[k]), "-q"]) == 0
    return outs


def test_the_quick_reproduction_judges_every_statement_from_its_runs(quick_runs):
    out = quick_runs[2]
    verdicts = check_statement_table(out, ngwa.PAPER["statements"])
    # The testbed's statements cannot be measured by a simulation; the
    # quick form does not judge Table 2's values (quick = false).
    assert all(verdicts[s["id"]] == "not measurable" for s in ngwa.PAPER["statements"]
               if s["check"] == "testbed" or s.get("quick") is False)
    report = (out / "report.md").read_text()
    assert "smoke test, not a reproduction" in report
    assert (out / "figures" / "fig3_window.png").stat().st_size > 3000
    # The measured values beside the verdicts are table2.csv's.
    with (out / "table2.csv").open() as fh:
        t2 = {r["row"]: r for r in csv.DictReader(fh)}
    for s in ngwa.PAPER["statements"]:
        if s["check"] == "value" and s["metric"] == "lost":
            row = t2[s["row"]]
            shown = f"{ngwa.LABEL[s['row']]} {ngwa.fmt_ci(float(row['lost_mean']), float(row['lost_ci95']), 4)}"
            assert f"**not measurable** — {shown} (paper {s['paper']})" in report, s["id"]


def _section(report: str, title: str) -> str:
    return report.split(title, 1)[1].split("\n## ", 1)[0]


def test_fig6_is_compared_with_the_paper_under_both_countings_of_triple_dupacks(quick_runs):
    # Issue 24: the paper's 5279 and 2833 against ours, saying how each side
    # counts; both counts are table2.csv's (the runs').
    out = quick_runs[2]
    report = (out / "report.md").read_text()
    fig6 = _section(report, "## Fig. 6: how each side counts triple dupACKs")
    assert "DupAck (header, ++m_dupAckCount)" in fig6 and "count >= 3" in fig6
    with (out / "table2.csv").open() as fh:
        t2 = {r["row"]: r for r in csv.DictReader(fh)}
    for name, key, _ in ngwa.ROWS:
        row = t2[key]
        cells = [ngwa.fmt_ci(float(row[f"{m}_mean"]), float(row[f"{m}_ci95"]), 4) for m in ("triple_dupacks", "past")]
        assert f"| {name} | {ngwa.fmt_ci(float(row['lost_mean']), float(row['lost_ci95']), 4)} | {cells[0]} | " \
               f"{cells[1]} |" in fig6, name
        # A run of n duplicate ACKs counts once one way, n - 2 the other.
        assert float(row["past_mean"]) >= float(row["triple_dupacks_mean"])
    # Fig. 6's statements have a verdict under the second counting too.
    for st in ngwa.PAPER["statements"]:
        line = next(ln for ln in report.splitlines() if ln.startswith(f"| {st['id']} |"))
        assert line.count("**") == (4 if st.get("metric") == "triple_dupacks" else 2), st["id"]


def test_the_dupack_comparison_reads_its_ratios_from_the_counts_it_is_given():
    # Nothing frozen: made-up counts, their ratios in the text.
    def loss(run: float, past: float) -> dict:
        return {k: {"lost": (100.0, 1.0, 3), "triple_dupacks": (run, 1.0, 3), "past": (past, 1.0, 3)}
                for _, k, _ in ngwa.ROWS}

    text = "\n".join(ngwa.dupack_lines(loss(40.0, 450.0)))
    assert "at most 0.40 per lost packet in any row" in text and "| 0.40 / 4.50 / 4.29 |" in text
    assert "fit a count per duplicate ACK better" in text
    text = "\n".join(ngwa.dupack_lines(loss(430.0, 4000.0)))
    assert "at most 4.30 per lost packet" in text and "fit a count once per run better" in text
    assert "ours lose 0.0 times the paper's in RFC 793, 0.3 times the paper's in NewReno" in text


def test_figs_4_and_5_stand_beside_the_papers_words_with_the_runs_shares():
    jains = {k: 1.0 for _, k, _ in ngwa.ROWS} | {"rfc793": 0.6}
    flows = {k: {"rates": [1.0] * 4, "timeouts": [0] * 4} for _, k, _ in ngwa.ROWS}
    flows["rfc793"] = {"rates": [5.0, 45.0, 5.0, 45.0], "timeouts": [9, 1, 8, 2]}
    text = "\n".join(ngwa.fig45_lines(jains, flows))
    assert "| RFC 793 | the most unfair: flows 2 and 4 take the whole bandwidth" in text and "| 0.600 | 11 % |" in text
    assert "get 5, 45, 5, 45 % of the delivered bytes and time out 9, 1, 8, 2 times: two flows starve" in text


def test_other_seeds_give_other_numbers_in_the_reasons(quick_runs):
    # Issue 24: nothing frozen. The statements' values and the Fig. 6
    # comparison move with the rounds run.
    texts = {}
    for k, out in quick_runs.items():
        report = (out / "report.md").read_text()
        texts[k] = ([ln for ln in report.splitlines() if ln.startswith("| fig6")]
                    + [_section(report, "## Fig. 6: how each side counts triple dupACKs")])
    assert texts[2][-1] != texts[3][-1]
    assert [a for a, b in zip(texts[2], texts[3]) if a != b]


def test_the_sensitivity_judges_every_statement_again_with_a_receiver_that_may_shrink_its_window(monkeypatch):
    # Issue 24: "whether the receiver may shrink its window" is a setting of
    # the sensitivity, passed to every run of it as tcp.shrink_window.
    seen = []

    def fake_losses(seeds, jobs, b, out, rtt=None, shrink=False):
        seen.append(("loss", b, rtt, shrink))
        row = {k: (1.0, 0.1, seeds) for k in ("lost", "triple_dupacks", "past", "timeouts", "jain")}
        return ["| table |"], {key: dict(row) for _, key, _ in ngwa.ROWS}

    monkeypatch.setattr(ngwa, "losses_table", fake_losses)
    monkeypatch.setattr(ngwa, "rates_table", lambda jobs, extra: seen.append(("rates", extra)) or ([], {}, {}))
    monkeypatch.setattr(ngwa, "window_figure", lambda out, jobs, extra: seen.append(("window", extra)) or ([], {}))
    monkeypatch.setattr(ngwa, "judge_all", lambda loss, jains, traces, quick: {
        s["id"]: ngwa._st.Judgement(ngwa._st.HOLDS, "x") for s in ngwa.PAPER["statements"]})
    a = type("A", (), {"seeds": 9, "jobs": 1, "quick": False})()
    lines, cols, values = ngwa.sensitivity(a, "1.8Mbps", {s["id"]: ngwa._st.Judgement(ngwa._st.FAILS, "x")
                                                           for s in ngwa.PAPER["statements"]}, None)
    assert "1.8Mbps, 40ms, receiver may shrink" in cols and set(values) == set(cols) - {"1.8Mbps, 40ms (ours)"}
    assert ("loss", "1.8Mbps", "40ms", True) in seen
    assert ("rates", {"bottleneck_rate": "1.8Mbps", "bottleneck_rtt": "40ms", "tcp.shrink_window": "true"}) in seen
    assert sum(1 for x in seen if x[0] == "loss" and x[3]) == 1  # only that setting shrinks
    assert any("tcp.shrink_window = true" in ln for ln in lines)


def test_a_receiver_that_may_shrink_its_window_changes_an_ngwa_run_and_the_default_does_not():
    from netreturn.task import RunSpec, execute

    base = {"ngwa_mode": 3, "run.stop": "60s"}
    runs = {k: execute(RunSpec.make(ngwa.RATE, {**base, **extra}, 1))["summary"]
            for k, extra in (("default", {}), ("off", {"tcp.shrink_window": "false"}),
                             ("on", {"tcp.shrink_window": "true"}))}
    keys = ("lost_packets", "triple_dupacks", "timeouts", "goodput_mean_mbps")
    assert [runs["off"][k] for k in keys] == [runs["default"][k] for k in keys]
    assert [runs["on"][k] for k in keys] != [runs["default"][k] for k in keys]


def test_the_ngwa_scenarios_send_buffer_is_ns3s_so_writes_beyond_it_are_lost():
    # docs/ngwa.md: a tcp-rate write that does not fit ns-3's SndBufSize (128 KiB)
    # is lost, as in the paper's simulator. The loader's default (1 MiB) let
    # every write of the window scenario through while four flows offered
    # 2 Mb/s to a 1.8 Mb/s bottleneck from 45 to 120 s.
    from netreturn import scenarios
    from netreturn.runner import RunSpec, run_many

    for name in ("ngwa/rate", "ngwa/window"):
        assert scenarios.model(name, {"ngwa_mode": "6"})["tcp"]["snd_buf"] == 131_072, name
    (r,) = run_many([RunSpec.make("ngwa/window.toml", {"ngwa_mode": "6"}, 1)], jobs=1, out=None)
    flows = r["flows"]
    offered = [0.5e6 / 8 * (stop - start) for start, stop in zip(flows["start_s"], (180, 180, 120, 120))]
    lost_writes = [o - d for o, d in zip(offered, flows["bytes_delivered"])]
    assert sum(lost_writes) > 1e6, f"writes refused by the send buffers: {lost_writes}"


def _stats(lost: float, newreno: float = 300.0) -> dict:
    row = {k: (0.0, 0.0, 10) for k in ("lost", "triple_dupacks", "past", "timeouts", "jain")}
    return {key: {**row, "lost": ({"rfc793": lost, "newreno": newreno}.get(key, 0.0), 1.0, 10)}
            for _, key, _ in ngwa.ROWS}


def test_a_value_statements_reason_says_how_far_the_unstated_settings_move_its_count():
    # Issue 24: the reason is computed from the sensitivity's runs, not a
    # fixed pointer: the range over the settings, and whether any reaches
    # the paper's number within the statement's tolerance.
    st = next(s for s in ngwa.PAPER["statements"] if s["id"] == "table2-rfc793")
    judged = {st["id"]: ngwa._st.Judgement(ngwa._st.FAILS, "x")}
    far = ngwa.value_reasons(judged, {"ours": _stats(19000.0), "1.2Mbps, 40ms": _stats(16000.0),
                                      "2.0Mbps, 80ms": _stats(18000.0)})[st["id"]]
    assert far.verdict == ngwa._st.FAILS
    assert "from 1.6e+04 (1.2Mbps, 40ms) to 1.9e+04 (ours), paper 4001" in far.why
    assert "no setting brings it within ±50 %" in far.why
    near = ngwa.value_reasons(judged, {"ours": _stats(19000.0), "1.2Mbps, 40ms": _stats(4100.0)})[st["id"]]
    assert "within ±25 % at 1.2Mbps, 40ms" in near.why
    partly = ngwa.value_reasons(judged, {"ours": _stats(19000.0), "1.2Mbps, 40ms": _stats(5500.0)})[st["id"]]
    assert "within ±50 % (partly) at 1.2Mbps, 40ms, within ±25 % nowhere" in partly.why
    # A setting without congestion (NewReno loses nothing) does not count as reaching the paper's number.
    calm = ngwa.value_reasons(judged, {"ours": _stats(19000.0), "1.5Mbps, 40ms": _stats(18000.0),
                                       "2.2Mbps, 40ms": _stats(4001.0, newreno=0.0)})[st["id"]]
    assert "within ±25 %" not in calm.why and "(2.2Mbps, 40ms left out: NewReno loses nothing there)" in calm.why


def test_a_statement_without_a_reason_gets_the_settings_of_the_sensitivity_where_it_holds():
    J, H, P, F = ngwa._st.Judgement, ngwa._st.HOLDS, ngwa._st.PARTLY, ngwa._st.FAILS
    judged = {"a": J(F, "x"), "b": J(P, "x"), "c": J(F, "x", "its own reason"), "d": J(H, "x")}
    cols = {"ours": judged,
            "1.5Mbps, 40ms": {"a": J(H, "x"), "b": J(F, "x"), "c": J(H, "x"), "d": J(H, "x")},
            "2.0Mbps, 80ms": {"a": J(F, "x"), "b": J(P, "x"), "c": J(H, "x"), "d": J(H, "x")},
            "2.2Mbps, 40ms": {"a": J(H, "x"), "b": J(H, "x"), "c": J(H, "x"), "d": J(H, "x")}}
    losses = {lab: _stats(100.0, newreno=0.0 if lab.startswith("2.2") else 300.0) for lab in cols}
    out = ngwa.setting_reasons(judged, cols, losses)
    assert out["a"].why.endswith("it holds at 1.5Mbps, 40ms")
    assert out["b"].why.endswith("it holds at none and partly at 2.0Mbps, 80ms")
    assert "(2.2Mbps, 40ms left out: NewReno loses nothing there)" in out["b"].why
    assert out["c"].why == "its own reason" and out["d"].why == ""
