"""The side-by-side verdict of `netreturn validate` (no ns-3 needed)."""

import math

import pytest

from netreturn.validate import agree, compare, table


def test_agree_uses_the_combined_confidence_intervals():
    # |10 - 12| = 2 <= hypot(1.5, 1.5) = 2.12: agree.
    assert agree((10.0, 1.5, 5), (12.0, 1.5, 5)) is True
    # |10 - 13| = 3 > 2.12: differ.
    assert agree((10.0, 1.5, 5), (13.0, 1.5, 5)) is False
    # One replication has no CI: no verdict.
    assert agree((10.0, math.nan, 1), (10.0, 1.0, 5)) is None


def test_compare_summarizes_each_simulator_over_its_seeds():
    ns3 = [{"tcp_packet_loss_pct": x, "timeouts": 50} for x in (1.8, 1.9, 2.0)]
    ours = [{"tcp_packet_loss_pct": x, "timeouts": 400} for x in (9.9, 10.0, 10.1)]
    rows = {r["metric"]: r for r in compare(ns3, ours)}
    assert math.isclose(rows["tcp_packet_loss_pct"]["ns3"][0], 1.9)
    assert math.isclose(rows["tcp_packet_loss_pct"]["netreturn"][0], 10.0)
    assert rows["tcp_packet_loss_pct"]["agree"] is False
    # Metrics missing on both sides have no verdict rather than a false one.
    assert rows["fct_mean_s"]["agree"] is None
    text = table(list(rows.values()))
    assert "DIFFER" in text and "TCP loss, data and ACKs" in text
    assert "1.9 ± 0.25" in text and "10 ± 0.25" in text  # %, 3 significant digits, the CI to 2


def test_the_table_shows_each_unit_in_one_format():
    ns3 = [{"queue_mean_bytes": x, "fct_mean_s": 2.0 + x / 1e5, "jain_goodput": 0.9} for x in (13000.0, 14000.0)]
    rows = compare(ns3, ns3)
    text = table(rows)
    line = {ln.split("  ")[0]: ln for ln in text.splitlines()}
    # bytes as kB with 1 decimal (not 1.35e+04), seconds as ms, ratios to 3 decimals.
    assert "13.5 ± 6.4" in line["queue, time mean (kB)"] and "e+0" not in text
    assert "2135 ± 64" in line["FCT, mean (ms)"]
    assert "0.900 ± 0.000" in line["Jain index of goodput"]


def test_validate_defaults_to_the_upstream_prr_and_offers_every_queue():
    from netreturn.cli import build_parser

    a = build_parser().parse_args(["validate"])
    assert a.ns3_prr == "upstream" and a.scenario == "ewt/scenario2" and a.flows is None and not a.aligned
    a = build_parser().parse_args(["validate", "--scenario", "ewt/scenario1", "--queue", "awm", "--aligned",
                                   "--ns3-prr", "ns3"])
    assert (a.scenario, a.queue, a.aligned, a.ns3_prr) == ("ewt/scenario1", "awm", True, "ns3")
    for q in ("droptail", "red", "ared", "ewt", "awm", "codel", "fq_codel", "pie", "fq_pie", "cobalt"):
        assert build_parser().parse_args(["validate", "--queue", q]).queue == q


def test_the_aqm_comparisons_run_the_same_senders_in_ours_and_cache_ns3_apart_from_cubic_without_ecn():
    from netreturn.cli import build_parser
    from netreturn.scenarios import load
    from netreturn.validate import ours_scenario, ours_settings, variant_tag

    a = build_parser().parse_args(["validate", "--queue", "fq_codel", "--tcp", "dctcp", "--ecn"])
    assert (a.tcp, a.ecn) == ("dctcp", True)
    d = build_parser().parse_args(["validate"])
    assert (d.tcp, d.ecn) == ("cubic", False)
    # Runs cached before --tcp and --ecn keep their names; the others get their own.
    assert variant_tag() == "" and variant_tag("dctcp") == "_dctcp" and variant_tag("cubic", True) == "_ecn"
    settings = ours_settings(31, "fq_codel", 1_000_000, "dctcp", True)
    assert settings == {"flows": 31, "queue": "fq_codel", "run.phase": "1000000ns", "tcp": "dctcp", "tcp.ecn": "true"}
    assert ours_settings(31, "ared") == {"flows": 31, "queue": "ared", "ared_mode": "ns3"}
    # RED with --ecn marks in both: red.ecn in ours (ns-3: RedQueueDisc::UseEcn).
    red = ours_settings(31, "red", 0, "cubic", True)
    assert red["topology.bottleneck.red.ecn"] == "true" and red["tcp.ecn"] == "true"
    for other in (ours_settings(31, "red"), ours_settings(31, "fq_codel", 0, "cubic", True)):
        assert "topology.bottleneck.red.ecn" not in other
    link = load(ours_scenario("ewt/scenario2", True), red)["document"]["topology"]["bottleneck"]
    assert link["red"]["ecn"] is True
    tcp = load(ours_scenario("ewt/scenario2", True), settings)["document"]["tcp"]
    assert (tcp["cc"], tcp["ecn"]) == ("dctcp", True)


def test_bbr_and_the_repaired_ns3_ece_answer_get_their_own_ns3_store_and_reference_name(tmp_path):
    from netreturn.cli import build_parser
    from netreturn.validate import cell_tag, ns3_cache_path, ns3_label, ours_settings

    a = build_parser().parse_args(["validate", "--queue", "droptail", "--tcp", "bbr"])
    assert (a.tcp, a.ns3_ecn) == ("bbr", "ns3")
    assert ours_settings(31, "droptail", 0, "bbr")["tcp"] == "bbr"
    a = build_parser().parse_args(["validate", "--queue", "red", "--ecn", "--ns3-ecn", "rfc3168"])
    assert a.ns3_ecn == "rfc3168"
    # A repaired ns-3 run never reads a run of ns-3 as shipped from the store, nor the other way round.
    shipped = ns3_cache_path(tmp_path, 31, "red", 1, ecn=True)
    repaired = ns3_cache_path(tmp_path, 31, "red", 1, ecn=True, ns3_ecn="rfc3168")
    assert shipped != repaired and shipped.name == "flows31_red_prr-upstream_ecn_seed1.json"
    assert cell_tag(31, "red", ecn=True, ns3_ecn="rfc3168") == "flows31_red_prr-upstream_ecn_ecn-rfc3168"
    assert ns3_label() == "ns-3 3.44, PRR upstream"
    assert ns3_label(ns3_ecn="rfc3168") == "ns-3 3.44, PRR upstream, ECE answer rfc3168"
    # DCTCP's loss repair applies to DCTCP senders: refused for others before anything runs.
    from netreturn.validate import run_cell

    with pytest.raises(ValueError, match="dctcp"):
        run_cell("ewt/scenario2", 31, "red", [1], tmp_path, tcp="cubic", ecn=True, ns3_ecn="rfc8257")
    assert not (tmp_path / "ns3").exists()


def test_the_linux_fq_codel_repair_of_ns3_gets_its_own_store_and_name_and_is_refused_for_other_queues(tmp_path):
    from netreturn.cli import build_parser
    from netreturn.validate import cell_tag, ns3_cache_path, ns3_label, run_cell

    a = build_parser().parse_args(["validate", "--queue", "fq_codel", "--tcp", "dctcp", "--ns3-ecn", "rfc8257",
                                   "--ns3-fqcodel", "linux"])
    assert a.ns3_fqcodel == "linux"
    assert build_parser().parse_args(["validate"]).ns3_fqcodel == "ns3"
    shipped = ns3_cache_path(tmp_path, 31, "fq_codel", 1, tcp="dctcp", ns3_ecn="rfc8257")
    repaired = ns3_cache_path(tmp_path, 31, "fq_codel", 1, tcp="dctcp", ns3_ecn="rfc8257", ns3_fqcodel="linux")
    assert shipped != repaired
    # The runs cached before the repair keep their names.
    assert shipped.name == "flows31_fq_codel_prr-upstream_dctcp_ecn-rfc8257_seed1.json"
    assert cell_tag(31, "fq_codel", tcp="dctcp", ns3_ecn="rfc8257", ns3_fqcodel="linux") == (
        "flows31_fq_codel_prr-upstream_dctcp_ecn-rfc8257_fqcodel-linux")
    assert ns3_label(ns3_ecn="rfc8257", ns3_fqcodel="linux").endswith("ECE answer rfc8257, FQ-CoDel linux")
    # The DCTCP receiver's echo repair on top: its own store and name, DCTCP only.
    echo = ns3_cache_path(tmp_path, 31, "fq_codel", 1, tcp="dctcp", ns3_ecn="rfc8257-echo", ns3_fqcodel="linux-mark")
    assert echo.name == "flows31_fq_codel_prr-upstream_dctcp_ecn-rfc8257-echo_fqcodel-linux-mark_seed1.json"
    assert build_parser().parse_args(["validate", "--tcp", "dctcp", "--ns3-ecn", "rfc8257-echo"]).ns3_ecn == (
        "rfc8257-echo")
    with pytest.raises(ValueError, match="rfc8257-echo.*dctcp"):
        run_cell("ewt/scenario2", 31, "fq_codel", [1], tmp_path, ecn=True, ns3_ecn="rfc8257-echo")
    with pytest.raises(ValueError, match="fq_codel.*'red'"):
        run_cell("ewt/scenario2", 31, "red", [1], tmp_path, ns3_fqcodel="linux")
    with pytest.raises(ValueError, match="ns3_fqcodel must be one of ns3, linux, linux-mark"):
        run_cell("ewt/scenario2", 31, "fq_codel", [1], tmp_path, ns3_fqcodel="rfc8290")
    # The mark-scheduling repair on top: its own store and name.
    assert build_parser().parse_args(["validate", "--queue", "fq_codel", "--ecn", "--ns3-fqcodel",
                                      "linux-mark"]).ns3_fqcodel == "linux-mark"
    assert cell_tag(31, "fq_codel", ecn=True, ns3_fqcodel="linux-mark") == (
        "flows31_fq_codel_prr-upstream_ecn_fqcodel-linux-mark")
    with pytest.raises(ValueError, match="fq_codel.*'codel'"):
        run_cell("ewt/scenario2", 31, "codel", [1], tmp_path, ecn=True, ns3_fqcodel="linux-mark")
    assert not (tmp_path / "ns3").exists()


def test_a_setting_of_ours_alone_names_its_own_cell_and_reaches_ours_runs_but_not_ns3s_store(tmp_path):
    from netreturn.cli import build_parser
    from netreturn.validate import cell_tag, ns3_cache_path, ours_settings

    a = build_parser().parse_args(["validate", "--queue", "fq_codel", "--ours-set", "tcp.prr_bound=safeack",
                                   "--ours-set", "tcp.recovery_from_cwr=ns3"])
    assert dict(a.ours_sets) == {"tcp.prr_bound": "safeack", "tcp.recovery_from_cwr": "ns3"}
    assert build_parser().parse_args(["validate"]).ours_sets == []
    with pytest.raises(SystemExit):
        build_parser().parse_args(["validate", "--ours-set", "tcp.prr_bound"])
    sets = {"tcp.prr_bound": "safeack"}
    assert cell_tag(31, "fq_codel", ns3_fqcodel="linux", ours_sets=sets) == (
        "flows31_fq_codel_prr-upstream_fqcodel-linux_ours-prr-bound-safeack")
    assert cell_tag(31, "fq_codel", ours_sets={}) == cell_tag(31, "fq_codel")
    assert cell_tag(31, "fq_codel", ours_sets={"tcp.cubic": '{reno_alpha="linux"}'}).endswith(
        "_ours-cubic-reno-alpha-linux")
    # ns-3 runs the same configuration whatever ours sets: one store.
    assert ns3_cache_path(tmp_path, 31, "fq_codel", 1, ns3_fqcodel="linux").name == (
        "flows31_fq_codel_prr-upstream_fqcodel-linux_seed1.json")
    assert ours_settings(31, "fq_codel", 1_000_000, ours_sets=sets) == {
        "flows": 31, "queue": "fq_codel", "run.phase": "1000000ns", "tcp.prr_bound": "safeack"}


def test_aligned_validation_runs_our_aligned_scenario_files():
    from netreturn.scenarios import load
    from netreturn.validate import ours_scenario

    assert ours_scenario("ewt/scenario2", False) == "ewt/scenario2"
    assert ours_scenario("ewt/scenario1", True) == "validate/ewt-scenario1-aligned"
    for n in (1, 2):
        load(ours_scenario(f"ewt/scenario{n}", True), {"queue": "ared"})


def test_loss_is_compared_on_data_segments_with_a_marked_fallback():
    from netreturn.validate import METRICS, with_data_loss

    assert METRICS[0][0] == "tcp_data_loss_pct"
    assert with_data_loss({"tcp_data_loss_pct": 1.0, "tcp_packet_loss_pct": 2.0}) == {"tcp_data_loss_pct": 1.0,
                                                                               "tcp_packet_loss_pct": 2.0}
    old = with_data_loss({"tcp_packet_loss_pct": 2.0})
    assert old["tcp_data_loss_pct"] == 2.0 and old["data_loss_fallback"] is True


def test_each_differ_says_which_section_of_validation_md_explains_it():
    """Under the table, a line per metric that differs, naming the section;
    every section named exists in docs/validation.md (a renamed heading fails here)."""
    from pathlib import Path

    from netreturn.validate import (
        EXPLAINED,
        EXPLAINED_ANY,
        EXPLAINED_PRR_NS3,
        EXPLAINED_RED_ECN,
        EXPLAINED_SENDERS,
        explained,
    )
    from netreturn.validate_lossy import EXPLAINED_LOSSY, EXPLAINED_STRICT

    doc = Path(__file__).resolve().parents[1] / "docs" / "validation.md"
    headings = [line.lstrip("#").strip() for line in doc.read_text().splitlines() if line.startswith("#")]
    for section in {*EXPLAINED.values(), EXPLAINED_ANY, EXPLAINED_PRR_NS3, EXPLAINED_LOSSY, EXPLAINED_RED_ECN,
                    EXPLAINED_SENDERS, EXPLAINED_STRICT}:
        assert any(h.startswith(section) for h in headings), section
    ns3 = [{"tcp_packet_loss_pct": x, "timeouts": 50 + x} for x in (1.8, 1.9, 2.0)]
    ours = [{"tcp_packet_loss_pct": x, "timeouts": 400 + x} for x in (9.9, 10.0, 10.1)]
    rows = compare(ns3, ours)
    differ = [r["label"] for r in rows if r["agree"] is False]
    lines = explained(differ, EXPLAINED["red"]).splitlines()
    assert len(differ) == 2 and len(lines) == 2
    for label, line in zip(differ, lines):
        assert line.startswith(f"DIFFER {label}: ") and 'docs/validation.md, section "The RED gap of scenario 2' in line
    assert explained([], EXPLAINED["red"]) == ""
