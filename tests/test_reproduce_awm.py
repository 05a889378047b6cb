"""`netreturn reproduce awm`: seed 002's six families, their points, the
paper's numbers and statements as data (paper/awm.toml), and a tiny
end-to-end reproduction (fairness, short runs) that writes its CSVs and
report, judges every statement and resumes."""

import csv
import math

from netreturn.reproduce import awm as ra
from netreturn.stats import jain


def test_every_family_parses_and_its_sweep_lists_are_parallel():
    for fam in ra.FAMILIES:
        pts = ra.points(fam)
        assert pts, fam
        for pt in pts:
            if "buffer" in pt:
                assert ra.size_bytes(pt["buffer"]) > 0


def test_the_fairness_numbers_are_the_papers_table_1():
    # SPEC.md 5.3: Jain AWM 1.0000 / 0.7007, XCP 1.0000 / 0.9954, NC 0.9937 / 0.4392.
    assert ra.PAPER["table1"] == {"awm": [1.0, 0.7007], "xcp": [1.0, 0.9954], "droptail": [0.9937, 0.4392]}


def test_sizes_use_decimal_prefixes():
    assert ra.size_bytes("1500kB") == 1.5e6
    assert ra.size_bytes("187500B") == 187500
    assert math.isclose(ra.size_bytes("30MB"), 3e7)


def test_a_short_fairness_reproduction_writes_its_tables_and_resumes(tmp_path):
    path = ra.reproduce(tmp_path, seeds=1, jobs=1, families=["fairness"], stop="3s", progress=False)
    text = path.read_text()
    assert "Table 1" in text and "| XCP | 1.0000 |" in text
    assert "why ours differs" in text and "k over D_i + q/C" in text
    # The labels say what ran; every statement of the paper file has a row.
    assert "step=10ms, stop=3s" in text
    for st in ra.PAPER["statements"]:
        assert f"| {st['id']} |" in text, st["id"]
    assert f"**{len(ra.PAPER['statements'])} statements:" in text
    with (tmp_path / "fairness.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["method"], r["step"]) for r in rows} == {(m, s) for m in ra.METHODS for s in ("0ms", "10ms")}
    # Every run metric the tables read is one the simulator exports (a
    # renamed metric would leave a column of NaN).
    for k in (
        "utilization",
        "queue_drops",
        "tcp_data_loss_pct",
        "queue_std_norm",
        "robustness_index",
        "jain_goodput",
        "events",
    ):
        assert all(r[k] not in ("", "nan") for r in rows), k
    with (tmp_path / "links.csv").open() as fh:
        links = list(csv.DictReader(fh))
    assert any(r["iface"] == "R1->R2" for r in links)
    kept = sorted(p.name for p in (tmp_path / "runs").iterdir())
    ra.reproduce(tmp_path, seeds=1, jobs=1, families=["fairness"], stop="3s", progress=False)
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == kept, "a second run must reuse every stored run"


def test_the_parking_lot_report_lists_every_forward_link_of_the_chain():
    links = [{"iface": f"R{i}->R{i + 1}", "method": "xcp", "utilization": 0.9, "loss_pct": 0.0, "robustness_index": 1.0}
             for i in range(9)]
    links += [{"iface": "R1->R0", "method": "xcp", "utilization": 0.1, "loss_pct": 0.0, "robustness_index": 1.0},
              {"iface": "src0->R0", "method": "xcp", "utilization": 0.1, "loss_pct": 0.0, "robustness_index": 1.0}]
    lines = ra.chain_links(links, ["xcp"])
    rows = [ln for ln in lines if ln.startswith("| R")]
    assert [r.split(" | ")[0] for r in rows] == [f"| R{i}->R{i + 1}" for i in range(9)]


def test_the_k_the_papers_table_1_implies_over_propagation_delays_is_0_94_for_awm_and_1_50_for_nc():
    d = ra.fairness_delays("10ms", 30)
    assert d[0] == 0.04 and math.isclose(d[-1], 0.33)
    assert abs(ra.k_for_jain(0.7007, d) - 0.936) < 0.002
    assert abs(ra.k_for_jain(0.4392, d) - 1.496) < 0.002


def test_goodput_inverse_to_the_round_trip_with_its_queueing_delay_fits_k_one():
    # AWM's case 2: one suggested window for all, goodput_i = swnd / (D_i + q/C).
    d = ra.fairness_delays("10ms", 30)
    q = 0.090
    run = {
        "summary": {"queue_mean_bytes": q * 30e6 / 8},
        "flows": {"src": [f"left{i}" for i in reversed(range(30))], "goodput_mbps": [1 / (x + q) for x in reversed(d)]},
    }
    fit = ra.rtt_fit({"family": "fairness", "step": "10ms"}, run)
    assert math.isclose(fit["k_rtt"], 1.0) and fit["k_prop"] < 0.7
    assert math.isclose(fit["queue_delay_ms"], 90.0)
    assert math.isclose(fit["jain_k1"], jain([1 / (x + q) for x in d]))


def test_the_forward_ftp_mean_leaves_out_the_mice_and_the_reverse_flows():
    run = {
        "flows": {
            "src": ["left0", "left1", "right0", "left2"],
            "web": [False, False, False, True],
            "goodput_mbps": [1.0, 3.0, 10.0, 50.0],
        }
    }
    assert ra.forward_ftp(run) == 2.0


def test_every_explained_difference_belongs_to_a_family():
    assert set(ra.DIFFERENCES) <= set(ra.FAMILIES)


def test_the_queueing_delay_the_papers_awm_index_implies_gives_that_index_back():
    d = ra.fairness_delays("10ms", 30)
    q = ra.queue_delay_for_jain(0.7007, d)
    assert 0 < q < 0.05
    assert math.isclose(jain([1 / (x + q) for x in d]), 0.7007, abs_tol=1e-6)


def test_a_statement_about_a_family_not_run_is_not_measurable_and_says_why():
    st = next(s for s in ra.PAPER["statements"] if s["family"] == "capacity")
    j = ra.judge(st, {"fairness": [{"method": "awm"}]}, [], None)
    assert j.verdict == "not measurable" and "capacity" in j.why


def test_the_fairness_reasons_move_with_the_runs():
    # Two made-up sets of runs: the AWM bullet quotes each one's own q/C and Jain.
    def rows(q, j):
        return [{"method": "awm", "step": step, "jain_goodput": j, "queue_delay_ms": q, "k_rtt": 1.0}
                for step in ("0ms", "10ms")]
    a, b = ra._fairness_why(rows(90.0, 0.88), None)[0], ra._fairness_why(rows(40.0, 0.8), None)[0]
    assert "q/C = 90 ms here and Jain 0.880" in a and "q/C = 40 ms here and Jain 0.800" in b


def test_quick_cuts_only_the_runs_longer_than_20_s_and_the_labels_say_what_ran():
    cap = ra.points("capacity", ra.QUICK_STOP)
    assert [p["stop"] for p in cap] == ["20s", "20s", "20s", "20s", "10s", "10s"]  # the sweep's 1 and 3 Gb/s: 10 s
    assert all(p["stop"] == "20s" for p in ra.points("fairness", ra.QUICK_STOP))  # the scenario's own: 120 s
    assert "stop=10s" in ra._point_label(cap[-1]) and "stop=20s" in ra._point_label(cap[0])


def test_the_quick_command_judges_every_statement_and_says_what_it_cannot(tmp_path):
    from netreturn import cli
    from reproduce_checks import check_statement_table

    out = tmp_path / "awm"
    assert cli.main(["reproduce", "awm", "--quick", "--family", "fairness", "--seeds", "2", "--stop", "4s",
                     "--out", str(out), "-q"]) == 0
    verdicts = check_statement_table(out, ra.PAPER["statements"])
    for st in ra.PAPER["statements"]:
        if st.get("family") not in (None, "fairness"):
            assert verdicts[st["id"]] == "not measurable", st["id"]
    report = (out / "report.md").read_text()
    assert "smoke test, not a reproduction" in report and "step=10ms, stop=4s" in report
    # What --quick left out is said: one seed for the sensitivity, no run-length check.
    assert "the buffer sensitivity on 1 seed" in report and "no run-length check" in report
    assert "Not checked: `--quick`" in report
    # The reason's q/C and Jain are this run's (fairness.csv).
    with (out / "fairness.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["method"] == "awm" and r["step"] == "10ms"]
    q = sum(float(r["queue_delay_ms"]) for r in rows) / len(rows)
    j = sum(float(r["jain_goodput"]) for r in rows) / len(rows)
    assert f"q/C = {q:.0f} ms here and Jain {j:.3f}" in report


def test_other_seeds_give_other_numbers_in_the_reasons(tmp_path):
    # Issue 24: nothing frozen. The fairness and round-trip families with
    # seeds 1..1 and 1..2: every reason quotes its run set's own numbers
    # (q/C, Jain and k; AWM's drops during and after the warm-up).
    def reasons(seeds: int) -> list[str]:
        path = ra.reproduce(tmp_path / f"s{seeds}", seeds=seeds, jobs=2, families=["fairness", "rtt"], stop="4s",
                            progress=False, sensitivity=False)
        return [ln for ln in path.read_text().splitlines() if ln.startswith("- why ours differs")]

    one, two = reasons(1), reasons(2)
    assert len(one) == len(two) == 3
    assert any("AWM's drops in this family" in ln or "AWM dropped nothing" in ln for ln in one)
    for a, b in zip(one, two):
        assert a != b


def test_the_capacity_reason_quotes_the_utilization_with_and_without_the_warm_up():
    def rows(whole, after):
        return [{"family": "capacity", "bottleneck_rate": "3Gbps", "buffer": "30MB", "stop": "10s", "seeds": 3,
                 "method": "awm", "seed": 1, "utilization_whole": whole, "utilization": after}]
    pt = ra.points("capacity")[-1]
    a = ra._capacity_why([{**r, **pt} for r in rows(0.86, 0.97)], None)[0]
    b = ra._capacity_why([{**r, **pt} for r in rows(0.80, 0.99)], None)[0]
    assert "3Gbps: 0.860 -> 0.970" in a and "3Gbps: 0.800 -> 0.990" in b
    # The shortest run is the one that ran (here only 3 Gb/s), and the start the scenario's.
    assert f"shortest ({pt['stop'].removesuffix('s')} s at 3Gbps)" in a and "(0s-2s)" in a


def test_the_web_reason_quotes_the_papers_numbers_from_its_file(monkeypatch):
    pt = next(p for p in ra.points("web") if float(p["mice"]) == 500.0)
    keys = ("web_throughput_mean_mbps", "ftp_throughput_mean_mbps", "ftp_fwd_throughput_mean_mbps")
    rows = [{"family": "web", **pt, "method": m, "seed": 1, **dict.fromkeys(keys, x)}
            for m, x in (("droptail", 1.0), ("xcp", 1.1))]
    a = ra._web_why(rows, None)[0]
    assert "web +10.0 %, FTP +10.0 % against NC here (paper, Fig. 4(c): web +5 %, FTP -20 %)" in a
    sts = [dict(s, paper=7.0) if s["id"] == "fig4c-xcp-web" else s for s in ra.PAPER["statements"]]
    monkeypatch.setitem(ra.PAPER, "statements", sts)
    assert "(paper, Fig. 4(c): web +7 %, FTP -20 %)" in ra._web_why(rows, None)[0]


def test_the_estimator_rows_run_awm_with_the_papers_eq_6_n_and_the_awm_rows_the_oracle():
    # Issue 24: the seed-002 families ran only the oracle N. Every family
    # now runs AWM twice; the resolved gateways say which N each uses.
    from netreturn.scenarios import model

    for fam in ra.FAMILIES:
        plan = ra.specs(fam, 1, ra.with_estimator(["awm", "xcp"]), "2s")
        methods = [tags["method"] for tags, _, _ in plan]
        assert methods.count(ra.ESTIMATOR) == methods.count("awm") > 0, fam
        for tags, spec, _ in plan:
            if tags["method"] in ("awm", ra.ESTIMATOR):
                cfgs = [ln["controller_config"] for ln in model(spec.scenario, dict(spec.overrides))["links"]
                        if ln["controller"] == "awm"]
                want = "Adaptive" if tags["method"] == ra.ESTIMATOR else "Oracle"
                assert cfgs and all(f"n_estimator: {want}" in c for c in cfgs), (fam, tags["method"])


def test_every_run_has_a_run_to_its_warm_up_that_stops_earlier():
    for fam in ra.FAMILIES:
        for tags, full, head in ra.specs(fam, 1, ["awm"], None):
            stop = dict(full.overrides).get("stop") or "60s"
            w = dict(head.overrides)["stop"]
            assert 0 < ra._native.parse_time(w) <= ra._native.parse_time(stop) / 2, (fam, tags)
            assert ra._native.parse_time(w) == tags["warmup_s"]
    # The long round trips wait ten of them; the web family no longer than the mice's start (5 s).
    rtt = {pt["rtt"]: ra.warmup("rtt", pt) for pt in ra.points("rtt")}
    assert rtt["1400ms"] == 14.0 and rtt["80ms"] == 5.0
    assert all(ra.warmup("web", pt) <= 5.0 for pt in ra.points("web"))


def test_a_run_stopped_at_the_warm_up_is_the_first_seconds_of_the_same_run_stopped_later():
    # What the warm-up cut rests on: the difference of the two runs is the
    # run after the warm-up only if the short one is the long one's prefix.
    from netreturn.task import execute

    for fam, over, w, s in (("capacity", {"bottleneck_rate": "10Mbps", "buffer": "100kB"}, "2s", "3s"),
                            ("web", {"bottleneck_rate": "10Mbps", "buffer": "100kB", "flows": 5}, "5s", "5.5s")):
        spec = ra.RunSpec.make(ra.FAMILIES[fam][0], {**over, "queue": "awm", "stop": s}, 1, keep_series=True)
        head = ra.RunSpec.make(ra.FAMILIES[fam][0], {**over, "queue": "awm", "stop": w}, 1, keep_series=True)
        a, b = execute(spec), execute(head)
        n = len(b["queue_series"]["bytes"])
        assert a["queue_series"]["bytes"][:n] == b["queue_series"]["bytes"], fam
        assert len(a["queue_series"]["bytes"]) > n


def test_the_window_after_the_warm_up_is_the_run_minus_its_first_seconds():
    # 10 s from t = 0: idle for the 2-s warm-up, then busy; the queue empty,
    # then 100 B steady; 7 drops in the warm-up, 3 after.
    def run(stop, util, qm, qs, drops, tx):
        return {"summary": {"sim_time_s": stop}, "flows": {"start_s": [0.0, 1.0]},
                "ifaces": {"iface": ["R1->R2"], "utilization": [util], "queue_mean_bytes": [qm],
                           "queue_std_bytes": [qs], "queue_drops": [drops], "tx_packets": [tx]}}
    head = run(2.0, 0.0, 0.0, 0.0, 7, 0)
    qm = 100 * 8 / 10
    full = run(10.0, 0.8, qm, math.sqrt(100 ** 2 * 8 / 10 - qm ** 2), 10, 800)
    w = ra.window(full, head, {"R1->R2": 400.0})["R1->R2"]
    assert math.isclose(w["utilization"], 1.0) and w["queue_drops"] == 3 and w["tx_packets"] == 800
    assert math.isclose(w["queue_mean_bytes"], 100.0) and abs(w["queue_std_bytes"]) < 1e-6
    assert math.isclose(w["robustness_index"], 0.0, abs_tol=1e-6)


def test_the_report_keeps_the_estimator_rows_and_the_warm_up_cut(tmp_path):
    path = ra.reproduce(tmp_path, seeds=1, jobs=1, families=["fairness"], stop="4s", progress=False,
                        sensitivity=False)
    text = path.read_text()
    assert "ours, AWM with eq. 6's N" in text and "| AWM, eq. 6 N |" in text
    assert "| point | runs | warm-up (s) | method |" in text and "ours, oracle N, whole run (warm-up included)" in text
    with (tmp_path / "fairness.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["method"] for r in rows} == set(ra.METHODS)
    # The link metrics are the window's: 2 s of the 4 s, and the whole run's are kept beside them.
    assert all(float(r["warmup_s"]) == 2.0 for r in rows)
    assert any(r["utilization"] != r["utilization_whole"] for r in rows)
    assert (tmp_path / "figures" / "fairness.png").stat().st_size > 0


def test_the_round_trip_reasons_quote_their_runs_drops_and_queue():
    def rows(after, during):
        t = [i * 0.01 for i in range(1000)]
        q = [1000.0 * (1 + math.sin(2 * math.pi * x / 0.4)) for x in t]  # a 0.4-s oscillation, full at its peaks
        pt = next(p for p in ra.points("rtt") if p["rtt"] == "200ms")
        return [{"family": "rtt", **pt, "method": "awm", "seed": s, "warmup_s": 2.0, "queue_drops": after,
                 "drops_in_warmup": during,
                 "queue_drops_whole": after + during, "buffer_bytes": 2000.0, "queue_std_norm": 0.3,
                 "fast_recoveries": after / 10,
                 "series": {"time_s": t, "bytes": q} if s == 1 else None} for s in (1, 2)]
    a = ra._rtt_why(rows(700.0, 90.0), None)[0]
    b = ra._rtt_why(rows(10.0, 0.0), None)[0]
    assert "790 drops per run (mean of 2), 700 after the warm-up (2 s) and 90 during it" in a
    assert "10 drops per run" in b
    assert "period of 0.40 s" in a
    assert "fast recovery 70 times per run" in a and "fast recovery 1 times per run" in b
    # A sine of amplitude B/2 has std B/(2 sqrt 2) = 0.354 B, in the first 10 s after the warm-up and the last.
    assert "went from 0.354 in the 10 s after the warm-up to 0.354 in the last 10 s" in a


def test_the_sensitivity_scales_every_buffer_of_a_point():
    pt = ra.points("capacity")[0]
    assert ra.scaled_buffers("capacity", pt, 0.25) == {"buffer": "25000B"}
    assert ra.scaled_buffers("parking-lot", ra.points("parking-lot")[0], 2.0) == {
        "buffer": "5000000B", "bottleneck_buffer": "2500000B"}


def test_points_that_simulate_the_same_share_one_run():
    # The AWM paper's default (150 Mb/s, 80 ms, 50 flows) is a point of three families.
    def spec(fam, pt):
        return next(s for tags, s, _ in ra.specs(fam, 1, ["awm"], None) if all(tags.get(k) == v for k, v in pt.items()))
    cap = spec("capacity", {"bottleneck_rate": "150Mbps"})
    assert ra.same_run(cap) == ra.same_run(spec("rtt", {"rtt": "80ms"})) == ra.same_run(spec("flows", {"flows": 50}))
    assert ra.same_run(cap) != ra.same_run(spec("rtt", {"rtt": "40ms"}))


def test_the_run_length_check_reruns_the_30_s_points_to_60_s_and_compares_the_halves():
    plan = ra.specs("capacity", 1, ra.with_estimator(list(ra.METHODS)), None)
    checks = ra.check_specs(plan)
    assert {plan[k][0]["stop"] for _, _, k in checks} == {"30s"}  # not the 10- and 20-s points
    assert {t["method"] for t, _, _ in checks} == {"awm", "xcp"}
    assert all(dict(s.overrides)["stop"] == "60s" and s.seed == 1 for _, s, _ in checks)
    tags, spec, k = checks[0]

    def run(stop, util, drops):
        return {"monitor_link": "R1->R2", "summary": {"sim_time_s": stop, "jain_goodput": 0.98},
                "flows": {"start_s": [0.0]},
                "ifaces": {"iface": ["R1->R2"], "utilization": [util], "queue_mean_bytes": [0.0],
                           "queue_std_bytes": [0.0], "queue_drops": [drops], "tx_packets": [1000]}}
    mains = [{}] * (2 * len(plan))
    mains[2 * k] = run(30.0, 0.9, 4)
    row = {**tags, "utilization": 0.9, "queue_std_norm": 0.1, "queue_drops": 4.0, "jain_goodput": 0.99,
           "buffer_bytes": 1e5}
    text = "\n".join(ra.convergence_section([checks[0]], [run(60.0, 0.95, 10)], mains, {"capacity": [row]}, False))
    # The second half: utilization (0.95 x 60 - 0.9 x 30) / 30 = 1.0, 6 drops.
    assert "| 0.900 \\| 1.000 |" in text and "| 4 \\| 6 |" in text and "| 0.9900 \\| 0.9800 |" in text
    assert "utilization 0.100" in text


def test_the_mice_alone_overload_the_link_from_750_per_second():
    # 30 packets of 1000 B at 750/s is 180 Mb/s on 150 Mb/s: no stationary state to converge to.
    loads = {pt["mice"]: ra.mice_load(pt) for pt in ra.points("web")}
    assert math.isclose(loads[500.0], 0.8) and math.isclose(loads[750.0], 1.2)
