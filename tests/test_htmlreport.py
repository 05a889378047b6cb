"""`netreturn report DIR`: a results folder's page, self-contained, opened in
headless Chromium (issue 26 item 6)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from netreturn import cli, htmlreport
from netreturn.runner import RunSpec, run_many

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; scripts/install-system-deps.sh)")


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A `netreturn run` folder: two groups of two seeds."""
    out = tmp_path_factory.mktemp("run")
    assert cli.main(["run", "ewt/scenario2", "--set", "flows=4", "--set", "file_bytes=300kB",
                     "--sweep", "queue=droptail,ewt", "--seeds", "2", "--jobs", "1", "--no-plots", "-q",
                     "--out", str(out)]) == 0
    assert cli.main(["report", str(out)]) == 0
    return out


def _chromium(page: Path, *flags: str) -> tuple[str, list[str]]:
    """Chromium's output for ``page`` and the console messages it logged
    (every one: the page logs nothing when all is well)."""
    r = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=10000", *flags, page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120, cwd=page.parent)
    return r.stdout, [line for line in r.stderr.splitlines() if ":CONSOLE" in line]


def test_the_page_is_self_contained_with_plotly_inline_and_nothing_fetched(run_folder):
    page = (run_folder / "report.html").read_text()
    assert "Plotly.newPlot" in page and len(page) > 1_000_000  # the library itself, not a link to it
    assert not re.search(r"<script[^>]+src=", page)
    assert not re.search(r"<link[^>]+href=", page)


def test_the_summary_has_one_row_per_group_with_the_csvs_numbers(run_folder):
    f = htmlreport.load(run_folder)
    assert f.group_keys == ["queue"]
    table = htmlreport.summary_table(f, ["tcp_efficiency_pct"])
    rows = re.findall(r"<tr><td>(\w+)</td><td>([^<]+)</td><td>(\d+)</td></tr>", table)
    want = {r["queue"]: r for r in htmlreport.read_csv(run_folder / "summary.csv")
            if r["metric"] == "tcp_efficiency_pct"}
    assert [q for q, _, _ in rows] == ["droptail", "ewt"]
    for q, cell, n in rows:
        assert cell.startswith(f"{want[q]['mean']:.3g}") and int(n) == 2


def test_the_settings_name_the_simulator_build_and_the_overrides(run_folder):
    import json

    page = (run_folder / "report.html").read_text()
    build = json.loads((run_folder / "manifest.json").read_text())["native_build"]
    assert f"<td>{build}</td>" in page
    assert "file_bytes=300kB" in page and "flows=4" in page
    assert "scenario2.toml" in page
    assert '<div class="topology"><svg' in page and "R1-&gt;R2: 45 Mb/s, 40 ms, 97 kB" in page
    assert "<td>queue in {droptail, ewt}</td>" in page  # experiment.json's sweep
    links = re.search(r'<table class="links">.*?</table>', page, re.S).group(0)
    assert re.search(r"<tr><td>droptail</td><td>1</td><td>R1-&gt;R2</td><td>True</td>", links)


def test_a_folder_without_results_is_a_clear_error(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path) in err and "summary.csv" in err and "runs/*.json" in err
    assert cli.main(["report", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_a_folder_with_only_the_run_store_and_a_report_md_gets_the_same_page(tmp_path, small):
    """What `netreturn reproduce` leaves: stored runs, report.md, no runs.csv of run's kind."""
    specs = [RunSpec.make("ewt/scenario2", {**small, "queue": q}, s, keep_series=(s == 1))
             for q in ("red", "awm") for s in (1, 2)]
    run_many(specs, jobs=1, out=tmp_path, progress=False)
    (tmp_path / "report.md").write_text("# Reproduction\n\nour numbers beside the paper's\n")
    out = htmlreport.write(tmp_path)
    f = htmlreport.load(tmp_path)
    assert f.group_keys == ["queue"]  # the parameter that varies across the stored runs
    assert len(f.series) == 2 and len(f.runs) == 4
    page = out.read_text()
    assert "our numbers beside the paper&#x27;s" in page
    assert page.count("<details><summary>queue=") == 4  # a flow table per run


@needs_chromium
def test_the_page_renders_in_headless_chromium_without_console_errors(run_folder):
    dom, console = _chromium(run_folder / "report.html", "--dump-dom")
    assert console == []
    assert "data-errors" not in dom
    # Every plot of the page drawn as SVG: a headline metric's bars each, the queue and the window over time.
    source = (run_folder / "report.html").read_text()
    plots = re.findall(r'<div id="((?:bar|series)\d+)" class="plot">', source)
    assert len(plots) >= 10 and "series1" in plots
    assert re.findall(r'<div id="((?:bar|series)\d+)" class="plot[^"]*js-plotly-plot', dom) == plots
    assert dom.count('class="main-svg"') >= len(plots)
    # The tables' rows: a summary row per group, a row per run.
    assert re.search(r'<table class="summary">.*?<td>droptail</td>.*?<td>ewt</td>', dom, re.S)
    runs = re.search(r'<table class="runs">.*?</table>', dom, re.S).group(0)
    assert len(re.findall(r"<tr><td>(droptail|ewt)</td><td>[12]</td>", runs)) == 4


@needs_chromium
def test_a_page_error_is_seen_by_the_same_check(tmp_path):
    """The check above can fail: a broken page trips it."""
    bad = tmp_path / "bad.html"
    bad.write_text(f"<html><head><script>{htmlreport.CATCH}</script></head><body><script>nosuch();</script>"
                   "</body></html>")
    dom, console = _chromium(bad, "--dump-dom")
    assert "data-errors" in dom and "nosuch" in dom
    assert any("nosuch" in line for line in console)


@needs_chromium
def test_a_screenshot_of_the_page_shows_the_bars_and_both_groups_lines(run_folder, tmp_path):
    import matplotlib.image

    shot = tmp_path / "page.png"
    _chromium(run_folder / "report.html", "--window-size=1280,2200", f"--screenshot={shot}")
    px = (matplotlib.image.imread(shot)[:, :, :3] * 255).round()
    assert px.std() > 20  # not a blank page

    def share(hex_colour: str) -> float:
        rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
        return float((abs(px - rgb).max(axis=2) <= 8).mean())

    assert share(htmlreport.COLOURS[0]) > 0.02  # the bars (and the first group's lines)
    assert share(htmlreport.COLOURS[1]) > 0.0001  # the second group's lines (1 px wide, anti-aliased)


def test_an_earlier_sweeps_runs_in_the_store_stay_out_of_the_page(run_folder, tmp_path):
    """The tables are the last sweep's; its time series are too."""
    import shutil as sh

    folder = tmp_path / "f"
    sh.copytree(run_folder, folder)
    spec = RunSpec.make("ewt/scenario2", {"flows": 4, "file_bytes": "300kB", "queue": "red"}, 1, keep_series=True)
    run_many([spec], jobs=1, out=folder, progress=False)  # an earlier sweep's run, with its series
    f = htmlreport.load(folder)
    assert sorted(r["params"]["queue"] for r in f.series) == ["droptail", "ewt"]
