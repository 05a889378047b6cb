"""The EWT report names the access queues from the scenario files, not from
a number written into its text (issue 24: no frozen numbers in reasons)."""

from __future__ import annotations

import pytest

ewt = pytest.importorskip("netreturn.reproduce.ewt")


def test_the_access_queues_are_read_from_each_bundled_scenario():
    for sc in ("scenario1", "scenario2"):
        assert ewt.access_buffer_of(sc) == "100p"
    assert ewt._buffer_words("100p") == "100 packets"
    assert ewt._buffer_words("150kB") == "150kB"
    assert ewt._buffer_words(None) == "the scenario's"


def test_the_access_section_says_what_the_scenario_sets(monkeypatch):
    monkeypatch.setattr(ewt, "access_buffer_of", lambda sc: "250p")
    opts = ewt.Options(scenarios=["scenario2"], methods=[])
    lines = ewt.access_section(opts, {}, ewt.Table([], [], []), {}, {}, {}, {})
    assert "instead of 250 packets" in lines[0] and "ours hold 250 packets" in lines[2]
    assert "100 packets" not in "\n".join(lines)
