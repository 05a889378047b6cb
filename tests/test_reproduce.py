"""`netreturn reproduce ewt`: the paper's numbers, the flow-count search, and
a tiny end-to-end reproduction that must resume without running anything."""

import csv
import json
import re
from pathlib import Path

import pytest

from netreturn import cli
from netreturn.calibrate import LevelSearch, search_levels
from netreturn.reproduce import ewt as reproduce
from netreturn.reproduce.claims import CLAIM_CHECKS
from reproduce_checks import check_statement_table

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO.parent / "shared" / "SPEC.md"

# docs/decisions.md §5.1, heavy level of Table 6: TCP / UDP loss ratio (%).
SPEC_TABLE6_HEAVY = {"droptail": (0.52, 0.43), "red": (0.83, 0.62), "ared": (0.62, 0.50),
                     "ewa": (0.19, 0.05), "awm": (0.04, 0.02), "ewt": (0.0, 0.0)}


def test_the_paper_file_parses_and_matches_the_spec():
    p = reproduce.load_paper()
    for m, (tcp, udp) in SPEC_TABLE6_HEAVY.items():
        assert p["table6"][m]["heavy"] == [tcp, udp], m
    assert p["table2"]["scenario1"] == {"mild": 8, "medium": 17, "heavy": 24}
    assert p["table2"]["scenario2"] == {"mild": 13, "medium": 24, "heavy": 31}
    assert p["capacity"]["gain_over_best_competitor_pct"] == 49.3
    assert p["capacity"]["gain_over_droptail_pct"] == 75.8
    assert p["loss_target"] == {"mild": 0.1, "medium": 0.5, "heavy": 1.0}
    assert set(p["table6"]) == set(reproduce.METHODS)
    # Every statement names a known check; a grid check a known metric and methods.
    for c in p["statements"]:
        assert c["check"] in reproduce.STATEMENT_CHECKS, c
        if c["check"] in CLAIM_CHECKS:
            assert c["metric"] in {m for m, *_ in reproduce.METRICS}, c
        for m in [c.get("method")] + c.get("others", []) + c.get("methods", []):
            assert m is None or m in reproduce.METHODS, c


def test_the_paper_file_agrees_with_the_spec_text_and_is_the_only_place_of_its_numbers():
    """The SPEC quotes the heavy row of Table 6; the paper file carries the
    whole table, and the scenario files no copy of it (issue 24: one place
    for a paper's numbers)."""
    p = reproduce.load_paper()
    if SPEC.is_file():
        text = " ".join(SPEC.read_text().split())
        text = text[text.index("heavy level TCP/UDP"):]
        for name, m in [
            ("DropTail", "droptail"),
            ("RED", "red"),
            ("ARED", "ared"),
            ("EWA", "ewa"),
            ("AWM", "awm"),
            ("EWT", "ewt"),
        ]:
            hit = re.search(rf"\b{name} (\d+(?:\.\d+)?)/(\d+(?:\.\d+)?)", text)
            assert hit, name
            assert [float(hit.group(1)), float(hit.group(2))] == p["table6"][m]["heavy"], name
    for sc in ("scenario1", "scenario2"):
        assert "paper" not in reproduce._toml_load(REPO / "scenarios" / "ewt" / f"{sc}.toml"), sc


def test_a_bad_paper_file_is_refused(tmp_path):
    bad = tmp_path / "ewt.toml"
    text = reproduce.PAPER_FILE.read_text().replace("mild = 8\n", "mild = 80\n", 1)
    bad.write_text(text)
    with pytest.raises(ValueError, match="table2.scenario1"):
        reproduce.load_paper(bad)


def _exact(f):
    return lambda n, seeds: [f(n)] * len(seeds)


def test_the_search_finds_the_boundaries_of_a_monotone_loss():
    levels = [0.1, 0.5, 1.0]
    f = lambda n: 0.05 * n  # noqa: E731  first reaches 0.1 at 2, 0.5 at 10, 1.0 at 20
    s = search_levels(_exact(f), levels, max_flows=200, max_seeds=30)
    assert s.result() == {0.1: 2, 0.5: 10, 1.0: 20}
    # Far fewer counts than a linear scan to 20; each decided without all 30 seeds.
    assert len(s.values) <= 16
    assert all(len(v) < 30 for v in s.values.values())
    # A staircase with its steps anywhere, and a start hint.
    for a, b, c in [(1, 1, 1), (3, 57, 58), (90, 91, 150), (7, 7, 200)]:
        g = lambda n, a=a, b=b, c=c: 0.0 if n < a else 0.2 if n < b else 0.7 if n < c else 3.0  # noqa: E731
        for start in (None, {0.1: 13, 0.5: 24, 1.0: 31}):
            s = search_levels(_exact(g), levels, max_flows=200, max_seeds=5, start=start)
            assert s.result() == {0.1: a, 0.5: b, 1.0: c}, (a, b, c, start)


def test_the_search_reports_a_level_never_reached_as_none():
    s = search_levels(_exact(lambda n: 0.3 if n >= 40 else 0.0), [0.1, 0.5, 1.0], max_flows=64, max_seeds=4)
    assert s.result() == {0.1: 40, 0.5: None, 1.0: None}
    assert 64 in s.values


def test_the_search_adds_seeds_only_where_the_ci_straddles_the_level():
    # Seed k gives a loss of n/10 +- 0.3 (alternating): near n = 10 (level 1.0)
    # the CI straddles the level, far from it a few seeds decide.
    def noisy(n, seeds):
        return [n / 10 + (0.3 if k % 2 else -0.3) for k in seeds]

    s = search_levels(noisy, [1.0], max_flows=100, max_seeds=30, first_seeds=6)
    assert s.result() == {1.0: 10}
    assert len(s.values[10]) == 30  # decided by the mean of all seeds
    far = [n for n in s.values if abs(n - 10) >= 5]
    assert far and all(len(s.values[n]) == 6 for n in far)
    # exact=True runs every probe on every seed.
    s2 = search_levels(noisy, [1.0], max_flows=100, max_seeds=30, exact=True)
    assert s2.result() == {1.0: 10} and all(len(v) == 30 for v in s2.values.values())


def test_a_levelsearch_driven_by_hand_repeats_its_probes():
    """Decisions depend only on seeds 1..k, so replaying the same losses
    asks for exactly the same runs (what makes a rerun free)."""
    f = lambda n, seeds: [((n * 7 + k * 3) % 11) / 10 + n / 30 for k in seeds]  # noqa: E731
    logs = []
    for _ in range(2):
        s, log = LevelSearch([0.1, 0.5, 1.0], max_flows=80, max_seeds=12, first_seeds=3), []
        while (w := s.wanted()):
            for n, k in sorted(w.items()):
                log.append((n, k))
                s.add(n, f(n, list(range(s.seeds_at(n) + 1, k + 1))))
        logs.append((log, s.result()))
    assert logs[0] == logs[1]


def test_claims_are_checked_against_our_means():
    claim = {"check": "best", "sense": "min", "method": "ewt", "levels": ["mild", "heavy"]}
    stats = {("mild", "ewt"): (1.0, 0.1), ("mild", "red"): (2.0, 0.1),
             ("heavy", "ewt"): (3.0, 0.5), ("heavy", "red"): (2.8, 0.5)}
    verdict, notes = reproduce.check_claim(claim, stats)
    assert verdict == "tie"  # heavy: red is lower but the CIs overlap
    assert len(notes) == 2 and "RED" in notes[1]
    stats[("heavy", "red")] = (1.0, 0.1)
    assert reproduce.check_claim(claim, stats)[0] == "partly"
    zero = {"check": "zero", "method": "ewt", "levels": ["mild"]}
    assert reproduce.check_claim(zero, {("mild", "ewt"): (0.0, 0.0)})[0] == "yes"
    assert reproduce.check_claim(zero, {("mild", "ewt"): (0.2, 0.0)})[0] == "no"


def test_capacity_gains_follow_the_papers_definition():
    rows = []
    for m, counts in {"droptail": (10, 20, 30), "awm": (20, 30, 40), "ewt": (30, 45, 60)}.items():
        for lv, n in zip(reproduce.LEVELS, counts):
            rows.append({"scenario": "scenario2", "method": m, "level": lv, "flows": n, "censored": False, "bound": n})
    g = reproduce.capacity_gains(rows, ["droptail", "awm", "ewt"])
    assert g["mean_gain_best_pct"] == pytest.approx((50 + 50 + 50) / 3)
    assert g["mean_gain_baseline_pct"] == pytest.approx((200 + 125 + 100) / 3)
    assert not g["censored"]


def _count_runs(out: Path) -> int:
    return len(list((out / "runs").glob("*.json")))


def test_quick_reproduction_writes_the_report_and_resumes_without_rerunning(tmp_path, capsys):
    out = tmp_path / "rep"
    argv = ["reproduce", "ewt", "--quick", "--scenarios", "2", "--methods", "droptail,ewt", "--seeds", "2",
            "--set", "file_bytes=150kB", "--max-flows", "6", "--first-seeds", "2", "--out", str(out), "-q"]
    assert cli.main(argv) == 0
    first = capsys.readouterr().out
    n = _count_runs(out)
    assert n > 20
    assert re.search(rf"{n} distinct runs \({n} run now, 0 reused\)", first)
    report = (out / "report.md").read_text()
    for heading in ["## Key numbers beside the paper", "## 1. Congestion levels", "## 3. Scenario 2",
                    "## 4. Table 6", "## 5. Time series", "## 6. Flow capacity", "## 7. Sensitivity",
                    "## 8. The paper's statements", "## 9. Where we differ from the paper"]:
        assert heading in report, heading
    assert "0.52 / 0.43" in report  # Table 6 heavy DropTail, the paper's column
    # DropTail's calibration under each unstated setting (issue 24): ours, the access queues', the receive buffer's.
    sweep = report.split("### 1b. The calibration across what the paper leaves unstated", 1)[1].split("\n## ", 1)[0]
    assert "| 100p (ours) " in sweep and "| 1000p " in sweep and "| 128 KiB " in sweep
    assert "+49.3 %" in report and "+75.8 %" in report
    for png in re.findall(r"\]\((figures/[^)]+\.png)\)", report):
        assert (out / png).stat().st_size > 3000, png
    assert (out / "figures" / "fig3_scenario2_queue.png").is_file()
    for name in ["summary.csv", "runs.csv", "table6.csv", "capacity.csv", "statements.csv"]:
        assert (out / name).stat().st_size > 100, name
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["native_build"] == reproduce.native_build_id()
    # Every statement of the paper file (at least 30, issue 24) has its verdict.
    statements = reproduce.load_paper()["statements"]
    assert len(statements) >= 30
    verdicts = check_statement_table(out, statements)
    # Fig. 1 runs on our scenarios (the paper gives none of its settings).
    assert verdicts["s1-fig1-monopoly"] in ("holds", "partly", "fails")
    assert verdicts["sec5.6-gain-best"] == "not measurable"  # --quick: a capacity search up to a few flows

    # Again: nothing runs, the same report comes out.
    mtimes = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    assert cli.main(argv) == 0
    again = capsys.readouterr().out
    assert re.search(rf"{n} distinct runs \(0 run now, {n} reused\)", again)
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")} == mtimes

    # Interrupted: lose a few runs; only those run again.
    lost = sorted((out / "runs").glob("*.json"))[:3]
    for p in lost:
        p.unlink()
    assert cli.main(argv) == 0
    assert re.search(rf"{n} distinct runs \(3 run now, {n - 3} reused\)", capsys.readouterr().out)
    assert _count_runs(out) == n


def test_runs_from_another_simulator_build_are_set_aside(tmp_path, capsys):
    out = tmp_path / "rep"
    argv = ["reproduce", "ewt", "--quick", "--scenarios", "2", "--methods", "ewt", "--seeds", "1",
            "--set", "file_bytes=100kB", "--max-flows", "2", "--sensitivity", "off", "--out", str(out), "-q"]
    assert cli.main(argv) == 0
    n = _count_runs(out)
    (out / "manifest.json").write_text(json.dumps({"native_build": "0000000000000000"}))
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "rebuilt" in captured.err
    assert len(list((out / "stale-0000000000000000").glob("*.json"))) == n
    assert re.search(rf"{n} distinct runs \({n} run now, 0 reused\)", captured.out)


def test_unknown_methods_and_papers_are_errors_not_tracebacks(tmp_path, capsys):
    assert cli.main(["reproduce", "ewt", "--methods", "fifo", "--out", str(tmp_path), "-q"]) == 2
    assert "fifo" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "pink"])


def _reasons(report: str) -> str:
    return report.split("## 9. Where we differ from the paper, and why", 1)[1].split("### Runs with unfinished", 1)[0]


def test_the_reasons_are_computed_from_the_runs_so_other_seeds_give_other_numbers(tmp_path, capsys):
    # Issue 24: nothing frozen. Two seed sets (1..2 and 1..3) of the same
    # tiny reproduction: the reasons' numbers move with them, and those the
    # reasons quote from the runs are the runs' (summary.csv).
    texts = {}
    for k in (2, 3):
        out = tmp_path / f"seeds{k}"
        argv = ["reproduce", "ewt", "--quick", "--scenarios", "2", "--methods", "droptail,ewt", "--seeds", str(k),
                "--set", "file_bytes=150kB", "--max-flows", "4", "--first-seeds", "2", "--sensitivity", "off",
                "--out", str(out), "-q"]
        assert cli.main(argv) == 0
        report = (out / "report.md").read_text()
        reasons = _reasons(report)
        texts[k] = reasons
        summary = {(r[1], r[2], r[4], r[5]): r[6] for r in (ln.split(",") for ln in
                                                            (out / "summary.csv").read_text().splitlines()[1:])}
        m = re.search(r"DropTail loses [^(]*\(([\d.]+) / ([\d.]+) / ([\d.]+) % at", reasons)
        assert m, reasons[:300]
        for lv, shown in zip(reproduce.LEVELS, m.groups()):
            assert float(shown) == pytest.approx(float(summary[("paper", lv, "droptail", "tcp_data_loss_pct")]),
                                                 rel=5e-3), lv
        for frozen in ("0.024", "1.64 vs 1.37", "70 vs 74"):
            assert frozen not in reasons, frozen
    assert texts[2] != texts[3]
    nums = {k: re.findall(r"\d+\.\d+", t) for k, t in texts.items()}
    assert nums[2] != nums[3]


def test_full_sensitivity_searches_every_methods_capacity_with_larger_access_queues(tmp_path):
    # Issue 24: with --sensitivity full the capacity search runs for every
    # method with 1000-packet access queues too, and section 6 shows each
    # method's flows under each setting and the section 5.6 verdicts per setting.
    out = tmp_path / "full"
    argv = ["reproduce", "ewt", "--quick", "--scenarios", "2", "--methods", "droptail,ewt", "--seeds", "1",
            "--set", "file_bytes=100kB", "--max-flows", "3", "--first-seeds", "1", "--sensitivity", "full",
            "--out", str(out), "-q"]
    assert cli.main(argv) == 0
    report = (out / "report.md").read_text()
    with (out / "capacity.csv").open() as fh:
        cap = list(csv.DictReader(fh))
    variants = {r["variant"] for r in cap}
    assert variants == {"rcv_buf 1MB", f"rcv_buf {reproduce.RCVBUF_ALT}", f"access {reproduce.ACCESS_ALT}"}
    assert {r["method"] for r in cap if r["variant"].startswith("access")} == {"droptail", "ewt"}
    section = report.split("### Capacity across the settings the paper does not state", 1)[1].split("\n## ", 1)[0]
    # Each setting's flows are capacity.csv's: EWT's row, setting by setting.
    def counts(variant: str) -> str:
        rs = {r["level"]: r for r in cap if r["variant"] == variant and r["method"] == "ewt"}
        return " / ".join("> 3" if rs[lv]["censored"] == "True" else rs[lv]["flows"] for lv in reproduce.LEVELS)

    ewt_row = next(ln for ln in section.splitlines() if ln.startswith("| EWT"))
    cells = [c.strip() for c in ewt_row.strip("|").split("|")]
    assert cells[1:] == [counts("rcv_buf 1MB"), counts(f"access {reproduce.ACCESS_ALT}"),
                         counts(f"rcv_buf {reproduce.RCVBUF_ALT}")]
    for sid in ("sec5.6-ewt-most-flows", "sec5.6-gain-best", "sec5.6-gain-droptail"):
        assert re.search(rf"\| {re.escape(sid)} +\| \w", section), sid
    assert "Verdicts that move with the setting" in section or "No verdict moves with the setting" in section
