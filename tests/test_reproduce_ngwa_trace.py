"""The NGWA rows Table 2 reports lossless, traced packet by packet
(reproduce/ngwa_trace.py): the captures find the drops the simulator
counted, and the cause they give follows the runs."""

import csv

import pytest

from netreturn.reproduce import ngwa, ngwa_trace as tr


def _trace(tmp_path, mode: int, rate: str, seed: int, stop: str) -> tr.Trace:
    ov = {"ngwa_mode": mode, "bottleneck_rate": rate, "run.stop": stop}
    return tr.trace(ngwa.RATE, ov, seed, tmp_path / f"m{mode}", f"mode{mode}", rate, 1)


def test_fd_windows_offered_at_the_start_and_kept_cause_the_drops_of_mode_7_at_1_2_mbps(tmp_path):
    # Seed 1's four flows start within 0.1 s; mode 7 (no CW, FD) drops
    # packets in its first two seconds at 1.2 Mb/s.
    t = _trace(tmp_path, 7, "1.2Mbps", 1, "5s")
    assert t.queue_drops and set(t.queue_drops) == {"R1->R2"}
    # Every drop the simulator counted is found in the captures, none more.
    assert len(t.drops) == sum(t.queue_drops.values())
    assert all(t.start_s[-1] < d < 5.0 for d, _ in t.drops)
    # The windows offered together exceed what the path holds at every drop,
    # each above FD's share of the whole buffer: space offered before and kept.
    assert all(w > t.path_bytes for w in t.window_sum)
    text = tr.describe(t)
    assert "older than that round trip" in text and f"{len(t.drops)} dropped segments" in text
    assert "FD's share" in text
    # A receiver that may take the space back loses nothing in that round.
    assert t.shrink_lost == 0 and "both point to the space kept behind the right edge" in text
    assert not list((tmp_path / "m7").glob("*.pcap"))


def test_mode_2s_drops_come_with_current_windows_that_without_fd_sum_above_the_path(tmp_path):
    t = _trace(tmp_path, 2, "2.0Mbps", 11, "10s")
    assert len(t.drops) == sum(t.queue_drops.values()) > 0
    text = tr.describe(t)
    assert "within that round trip: the windows were current" in text and "without FD" in text
    assert f"at {len(t.drops)} of {len(t.drops)} drops" in text or "above what the path holds at" in text
    assert "FD's share" not in text
    # The same round with a shrinking receiver still loses: no kept space to blame.
    assert t.shrink_lost > 0 and "both point to the windows themselves" in text


def test_a_file_that_is_not_the_simulators_capture_is_refused_by_name(tmp_path):
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(20))
    with pytest.raises(ValueError, match="x.pcap: not a nanosecond pcap"):
        tr.read_pcap(bad)


def test_the_worst_round_is_the_one_with_most_losses_and_lossless_rows_are_not_traced():
    assert tr.worst_round([0.0, 3.0, 7.0, 7.0]) == (3, 7.0)
    assert not tr.lossy([0.0, 0.0]) and tr.lossy([0.0, 1.0])


def test_the_report_traces_a_lossless_row_that_lost_and_says_so_in_its_reasons(tmp_path):
    # Rounds 1-3 at 2.0 Mb/s: mode 2 loses a few packets; its trace goes
    # into the report and the drops into trace/<row>_<setting>/drops.csv.
    ours = "2.0Mbps, 40ms (ours)"
    traces = ngwa.traced_losses(3, 1, tmp_path, [(ours, "2.0Mbps", None, False)])
    assert {t.row for t in traces} <= set(ngwa.ZERO_ROWS) and "mode2" in {t.row for t in traces}
    t = next(t for t in traces if t.row == "mode2")
    with open(next((tmp_path / "trace").glob("mode2_*")) / "drops.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(t.drops) == sum(t.queue_drops.values())
    lines = "\n".join(ngwa.trace_lines(traces))
    assert f"**mode 2 at {ours}**: traced round {t.seed}" in lines
    judged = {"table2-zero": ngwa._st.Judgement(ngwa._st.PARTLY, "x"),
              "table2-mode5": ngwa._st.Judgement(ngwa._st.HOLDS, "x")}
    out = ngwa.trace_reasons(judged, traces, ours)
    assert f"mode 2: traced round {t.seed}" in out["table2-zero"].why and not out["table2-mode5"].why
