"""The SARBE paper's reproduction: the scenarios run and the report's arithmetic."""

import math

from netreturn import _native
from netreturn.reproduce.sarbe import PAYLOAD_SHARE, fairness_table, friendliness_table, lossy_table, tracking_error
from netreturn.scenarios import resolve


def test_every_sarbe_scenario_runs_with_every_new_congestion_control():
    for name in ("lossy_link", "tracking", "ack_compression", "cwnd_traces", "fairness", "friendliness"):
        for cc in ("westwood+", "sarbe"):
            r = _native.run(str(resolve(f"sarbe/{name}")), 1, [("tcp", f'"{cc}"')])
            assert r["summary"]["goodput_mean_mbps"] > 0, (name, cc)


def test_the_traced_estimate_and_the_available_bandwidth_line_up():
    r = _native.run(str(resolve("sarbe/tracking")), 1, [("tcp", '"sarbe"')])
    q, tr = r["queue_series"], r["traces"][0]
    assert len(q["avail_mbps"]) == len(q["time_s"])
    assert all(not math.isnan(b) for t, b in zip(tr["time_s"], tr["bwe_mbps"]) if t > 1)
    mean, mean_abs = tracking_error(r)
    assert mean_abs < 0.5, mean_abs


def test_tracking_error_compares_the_estimate_with_the_payload_share_of_the_available_bandwidth():
    r = {"queue_series": {"time_s": [2.0, 3.0], "avail_mbps": [1.0, 1.0]},
         "traces": [{"time_s": [2.0, 3.0], "bwe_mbps": [1.0, PAYLOAD_SHARE]}]}
    mean, mean_abs = tracking_error(r)
    assert math.isclose(mean, (1.0 - PAYLOAD_SHARE) / 2)
    assert math.isclose(mean_abs, (1.0 - PAYLOAD_SHARE) / 2)


def test_the_lossy_table_groups_runs_by_control_and_loss():
    runs = [{"params": {"tcp": "sarbe", "loss": "0.01"}, "summary": {"goodput_mean_mbps": g}} for g in (1.0, 3.0)]
    m, h, n = lossy_table(runs)[("sarbe", 0.01)]
    assert (m, n) == (2.0, 2) and h > 0


def test_friendliness_compares_each_group_with_the_fair_share_of_its_own_run():
    # 5 SARBE flows at 3 Mb/s and 5 Reno flows at 1 Mb/s: fair share 2,
    # so 1.5 and 0.5; a second run with twice the rates gives the same.
    runs = [{"params": {"other": "reno"}, "flows": {"goodput_mbps": [3.0 * k] * 5 + [1.0 * k] * 5}} for k in (1, 2)]
    mine, other, fair = friendliness_table(runs)["reno"]
    assert mine == [1.5, 1.5] and other == [0.5, 0.5] and fair == 3.0
    assert "westwood+" not in friendliness_table(runs)


def test_the_fairness_table_groups_jain_by_control_and_loss():
    runs = [
        {"params": {"tcp": t, "loss": "0.001"}, "summary": {"jain_goodput": j}}
        for t, j in (("reno", 0.9), ("reno", 0.8), ("sarbe", 1.0))
    ]
    assert fairness_table(runs) == {("reno", 0.001): [0.9, 0.8], ("sarbe", 0.001): [1.0]}


def test_the_quick_reproduction_judges_every_statement_from_its_runs(tmp_path):
    from netreturn import cli
    from netreturn.reproduce import sarbe
    from reproduce_checks import check_statement_table

    out = tmp_path / "sarbe"
    assert cli.main(["reproduce", "sarbe", "--quick", "--seeds", "2", "--out", str(out), "-q"]) == 0
    verdicts = check_statement_table(out, sarbe.PAPER["statements"])
    assert all(verdicts[s["id"]] == "not measurable" for s in sarbe.PAPER["statements"] if s.get("quick") is False)
    report = (out / "report.md").read_text()
    assert "smoke test, not a reproduction" in report
    # The 1 % gains beside the verdicts are the goodput table's (fig3b_goodput.csv).
    import csv

    with (out / "fig3b_goodput.csv").open() as fh:
        g = {(r["tcp"], float(r["loss"])): float(r["goodput_mbps"]) for r in csv.DictReader(fh)}
    gain = (g[("sarbe", 0.01)] / g[("reno", 0.01)] - 1) * 100
    assert f"SARBE vs Reno at 1 %: {gain:+.1f} % (paper +76.6 %)" in report
    assert all((out / "figures" / f).stat().st_size > 3000 for f in ("fig3b_goodput.png", "fig4_cwnd.png"))
