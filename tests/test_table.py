"""One table renderer, one number format per unit (python/netreturn/table.py)."""

import math

from netreturn.table import ci, num, render, unit_of


def test_units_come_from_the_metric_names():
    assert [unit_of(m) for m in ("queue_mean_bytes", "goodput_mean_mbps", "fct_mean_s", "rtt_mean_ms",
                                 "tcp_data_loss_pct", "jain_goodput", "utilization", "timeouts", "retransmitted_kB")] \
        == ["bytes", "Mb/s", "s", "ms", "%", "ratio", "ratio", "count", "kB"]


def test_each_unit_has_one_format():
    assert num(13712.0, "bytes") == "13.7"          # kB, 1 decimal, never 1.37e+04
    assert num(2.3456, "s") == "2346"               # seconds shown as ms
    assert num(0.0512, "ms") == "0.0512"
    assert num(94.12, "Mb/s") == "94.1" and num(0.06123, "Mb/s") == "0.0612"
    assert num(0.8751, "ratio") == "0.875"
    assert num(1003.4) == "1003" and num(12.34) == "12.3"
    assert num(None) == "-" and num(math.nan, "%") == "-"


def test_a_mean_and_its_ci_share_the_format():
    assert ci(13712.0, 520.0, "bytes") == "13.7 ± 0.5"
    assert ci(65.83, 1.234, "%") == "65.8 ± 1.2"
    assert ci(0.9, math.nan, "ratio") == "0.900"
    assert ci(math.nan, 1.0) == "-"


def test_plain_and_markdown_tables():
    text = render(["metric", "a"], [["queue (kB)", "13.7"], ["Jain", None]]).splitlines()
    assert text[0].split() == ["metric", "a"] and set(text[1]) == {"-", " "}
    assert text[2].endswith("13.7") and text[3].endswith("-")  # numbers right-aligned, missing as "-"
    md = render(["x", "y"], [["1", "2.50"]], markdown=True).splitlines()
    assert md[0].startswith("| x") and set(md[1]) <= {"|", "-", ":"} and "2.50" in md[2]  # not re-parsed as 2.5
