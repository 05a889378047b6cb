"""The shared machinery of `netreturn reproduce`: a paper that brings only
its data file gets its grid, capacity search, calibration, tables and
claim checks."""

import pytest

from netreturn.reproduce import claims, grid
from netreturn.reproduce.paper import Paper
from netreturn.reproduce.store import Bar, Options, Runs, check_build
from netreturn.reproduce.text import Report

TINY = '''
title = "A tiny paper"
seed_file = "none.txt"
methods = ["droptail", "ewt"]
levels = ["mild", "heavy"]

[loss_target]
mild = 0.1
heavy = 1.0

[counts.scenario2]
mild = 2
heavy = 3

[[statements]]
id = "fig1-ewt-loses-less"
where = "Fig. 1"
scenario = "scenario2"
levels = ["mild", "heavy"]
quote = "EWT loses less than DropTail."
metric = "tcp_data_loss_pct"
check = "better"
sense = "min"
method = "ewt"
others = ["droptail"]

[run]
heading = "A tiny paper, reproduced"
sections = "section 1"
method_param = "queue"
count_param = "flows"
proposed = "ewt"
baseline = "droptail"
counts = "counts"
bottleneck = "R1->R2"

[run.scenarios.scenario2]
file = "ewt/scenario2.toml"

[run.labels]
droptail = "DropTail"
ewt = "EWT"

[[run.metrics]]
column = "tcp_data_loss_pct"
label = "TCP loss ratio (%)"
better = "min"
scenarios = ["scenario2"]
'''


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return Paper.load("tiny", p)


def test_a_paper_that_brings_only_its_data_gets_grid_capacity_calibration_and_claims(tmp_path, tiny):
    opts = Options(out=tmp_path / "out", seeds=2, max_flows=4, first_seeds=2, jobs=1, progress=False,
                   sets={"file_bytes": "150kB"}).resolve(tiny)
    assert opts.methods == ["droptail", "ewt"] and opts.scenarios == ["scenario2"]
    check_build(opts)
    runs = Runs(opts, Bar(False), tiny)
    ev = grid.Evaluation(runs, opts, tiny)
    runs.drain()
    table = ev.table()
    for lv, n in (("mild", 2), ("heavy", 3)):
        assert table.flows("scenario2", "paper", lv) == n
        for m in tiny.methods:
            assert table.get("scenario2", "paper", lv, m, "tcp_data_loss_pct")[2] == 2  # both seeds
    # The baseline's capacity is the calibration; its grid ran at those counts.
    assert set(ev.calibrated["scenario2"]) == {"mild", "heavy"}
    assert {g.countset for g in table.groups} >= {"paper"}
    rows = grid.capacity_rows(ev.capacity.searches, tiny)
    assert {(r["method"], r["level"]) for r in rows} == {(m, lv) for m in tiny.methods for lv in tiny.levels}
    claim_rows, _ = claims.check_all(tiny, table, opts.scenarios, opts.methods, ["paper"])
    assert len(claim_rows) == 1 and claim_rows[0]["result"]["paper"][0] in {"yes", "no", "tie", "partly"}
    assert all(p.suffix == ".json" for p in (opts.out / "runs").iterdir()) and runs.executed > 0

    doc = Report(tiny, opts)
    doc.header(runs, "build")
    assert doc.lines[0] == "# A tiny paper, reproduced"
    assert "netreturn reproduce tiny" in "\n".join(doc.lines)


def test_a_paper_file_without_a_label_for_a_method_is_refused(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(TINY.replace('ewt = "EWT"\n', ""))
    with pytest.raises(ValueError, match="no label for 'ewt'"):
        Paper.load("bad", p)


def test_unknown_methods_of_a_paper_are_refused_with_the_allowed_ones(tiny):
    with pytest.raises(ValueError, match="allowed: droptail, ewt"):
        Options(methods=["red"]).resolve(tiny)


def test_a_calibration_that_reaches_every_level_at_one_flow_is_called_degenerate():
    from netreturn.calibrate import degenerate

    assert "smallest count" in degenerate([1, 1, 1])
    assert "same count" in degenerate([3, 7, 7])
    assert degenerate([8, 17, 24]) is None
    assert degenerate([8, None, None]) is None  # one level found: nothing to compare


def test_the_statement_table_refuses_a_report_that_leaves_a_statement_out():
    from netreturn.reproduce import statements as st

    sts = st.validate([{"id": "a", "where": "Fig. 1", "quote": "x", "check": "c"},
                       {"id": "b", "where": "Fig. 2", "quote": "y", "check": "c", "quick": False}], "p.toml")
    j = st.Judgement(st.HOLDS, "1.0")
    with pytest.raises(ValueError, match="not judged: b"):
        st.section("## s", sts, {"ours": {"a": j}})
    lines = st.section("## s", sts, {"ours": {"a": j, "b": st.for_quick(sts[1], j, True)}}, quick=True)
    text = "\n".join(lines)
    assert "2 statements: 1 hold, 0 partly, 0 fail, 1 not measurable here" in text
    assert "cannot judge 1 statements (b)" in text


def test_a_paper_file_with_a_repeated_statement_id_or_an_unknown_verdict_is_refused():
    from netreturn.reproduce import statements as st

    with pytest.raises(ValueError, match="p.toml: statements\\[1\\]: id 'a' repeats"):
        st.validate([{"id": "a", "where": "w", "quote": "q", "check": "c"}] * 2, "p.toml")
    with pytest.raises(ValueError, match="missing quote"):
        st.validate([{"id": "a", "where": "w", "check": "c"}], "p.toml")
    with pytest.raises(ValueError, match="verdict 'maybe'"):
        st.Judgement("maybe", "")


def test_the_new_grid_checks_judge_similarity_trends_and_several_methods_at_once():
    labels = {"a": "A", "b": "B", "c": "C"}
    stats = {("mild", "a"): (1.0, 0.1), ("mild", "b"): (1.05, 0.1), ("mild", "c"): (3.0, 0.1),
             ("heavy", "a"): (0.5, 0.1), ("heavy", "b"): (1.5, 0.1), ("heavy", "c"): (0.0, 0.0)}
    similar = {"check": "similar", "methods": ["a", "b"], "levels": ["mild"]}
    assert claims.check_claim(similar, stats, labels, 0.005)[0] == "yes"
    assert claims.check_claim({**similar, "methods": ["a", "c"]}, stats, labels, 0.005)[0] == "no"
    falls = {"check": "falls", "methods": ["a"], "levels": ["mild", "heavy"]}
    assert claims.check_claim(falls, stats, labels, 0.005)[0] == "yes"
    assert claims.check_claim({**falls, "methods": ["b"]}, stats, labels, 0.005)[0] == "no"
    assert claims.check_claim({**falls, "check": "rises", "methods": ["b"]}, stats, labels, 0.005)[0] == "yes"
    positive = {"check": "positive", "methods": ["a", "c"], "levels": ["heavy"]}
    assert claims.check_claim(positive, stats, labels, 0.005)[0] == "partly"  # C has none at heavy
    lower = {"check": "lower", "method": "a", "others": ["c"], "levels": ["mild"]}
    assert claims.check_claim(lower, stats, labels, 0.005)[0] == "yes"
    assert claims.check_claim({**lower, "others": ["b"]}, stats, labels, 0.005)[0] == "tie"


def test_each_paper_subcommand_shows_only_its_own_options(capsys):
    from netreturn import cli

    def help_of(paper: str) -> str:
        with pytest.raises(SystemExit):
            cli.main(["reproduce", paper, "--help"])
        return capsys.readouterr().out

    ewt, ngwa, awm, sarbe = (help_of(p) for p in ("ewt", "ngwa", "awm", "sarbe"))
    assert "--methods" in ewt and "--max-flows" in ewt and "--sensitivity" in ewt
    assert "--sensitivity" in ngwa and "--methods" not in ngwa and "--max-flows" not in ngwa
    assert "--family" in awm and "--stop" in awm and "--methods" not in awm and "--sensitivity" not in awm
    for text in (ewt, ngwa, awm, sarbe):
        assert "--quick" in text and "--seeds" in text and "--out" in text
    assert "--family" not in sarbe and "--methods" not in sarbe and "--sensitivity" not in sarbe
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "ngwa", "--methods", "ewt"])  # an option of another paper is an error, not ignored
    assert "unrecognized arguments: --methods" in capsys.readouterr().err
