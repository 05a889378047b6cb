"""`netreturn show SCENARIO`: the topology drawn (SVG) and printed, from the
resolved model (issue 26 item 9)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from netreturn import cli, topology
from netreturn.scenarios import model

SVG = "{http://www.w3.org/2000/svg}"


def _texts(path) -> list[tuple[str, str]]:
    """Every text of the drawing with its colour."""
    root = ET.parse(path).getroot()
    return [(t.text or "", t.get("fill", "")) for t in root.iter(f"{SVG}text")]


def test_the_text_lists_every_link_direction_with_its_rate_delay_buffer_and_queue(tmp_path, capsys):
    assert cli.main(["show", "ewt/scenario2", "--set", "flows=4", "--set", "queue=ewt",
                     "--out", str(tmp_path / "t.svg")]) == 0
    out = capsys.readouterr().out
    m = model("ewt/scenario2", {"flows": 4, "queue": "ewt"})
    lines = {line.split()[0]: line for line in out.splitlines() if "->" in line.split(" ", 1)[0]}
    assert set(lines) == {d["name"] for d in m["links"]} and len(lines) == 18
    for d in m["links"]:
        line = lines[d["name"]]
        for shown in (topology.rate(d["rate_bps"]), topology.delay(d["delay_ns"]), topology.buffer(d), d["queue"]):
            assert shown in line, (d["name"], shown, line)
    assert "45 Mb/s" in lines["R1->R2"] and "40 ms" in lines["R1->R2"] and "97 kB" in lines["R1->R2"]
    assert "ewt" in lines["R1->R2"] and "monitored" in lines["R1->R2"]
    assert "monitored" not in lines["R2->R1"]
    assert "100 p = 151 kB" in lines["left0->R1"]  # a limit in packets, with its bytes


def test_the_drawing_names_every_link_and_marks_the_monitored_one(tmp_path):
    out = tmp_path / "t.svg"
    assert cli.main(["show", "ewt/scenario2", "--set", "flows=4", "--set", "queue=ewt", "--out", str(out)]) == 0
    texts = _texts(out)
    m = model("ewt/scenario2", {"flows": 4, "queue": "ewt"})
    for d in m["links"]:
        assert any(t.startswith(f"{d['name']}: ") for t, _ in texts), d["name"]
    marked = [t for t, colour in texts if colour == topology.MONITORED]
    assert len(marked) == 1 and marked[0].startswith("R1->R2: 45 Mb/s, 40 ms, 97 kB, droptail + ewt")
    assert "monitored" in marked[0]
    thick = [ln for ln in ET.parse(out).getroot().iter(f"{SVG}line") if ln.get("stroke") == topology.MONITORED]
    assert len(thick) == 1
    assert {t for t, _ in texts} >= {"R1", "R2", "left0", "left3", "right0", "right3"}


def test_many_hosts_of_a_router_are_one_box_naming_their_range(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["show", "ewt/scenario2"]) == 0  # 31 flows a side; drawn to the default file
    texts = [t for t, _ in _texts(tmp_path / "scenario2-topology.svg")]
    assert "left0 … left30 (31 hosts)" in texts and "right0 … right30 (31 hosts)" in texts
    assert "to R1: 100 Mb/s, 1 ms, 100 p = 151 kB, droptail" in texts
    assert not any(t.startswith("left5->R1") for t in texts)


def test_the_lossy_links_drawing_marks_its_monitored_link_and_the_loss_on_the_wireless_hop(tmp_path):
    """The SARBE paper's lossy link: the monitored link is R1->R2 (the 5 Mb/s
    hop), not the first one; the wireless hop R2->D loses 1 %."""
    out = tmp_path / "s.svg"
    assert cli.main(["show", "sarbe/lossy_link", "--out", str(out)]) == 0
    texts = _texts(out)
    marked = [t for t, colour in texts if colour == topology.MONITORED]
    assert len(marked) == 1 and marked[0].startswith("R1->R2: 5 Mb/s, 50 ms") and "monitored" in marked[0]
    assert any(t.startswith("R2->D:") and "loss 1 %" in t for t, _ in texts)
    assert not any(t.startswith("S->R1:") and "monitored" in t for t, _ in texts)


def test_an_out_file_that_is_not_svg_and_an_unknown_scenario_are_clear_errors(tmp_path, capsys):
    assert cli.main(["show", "ewt/scenario2", "--out", str(tmp_path / "t.png")]) == 2
    assert "t.png" in capsys.readouterr().err
    assert cli.main(["show", "ewt/nosuch", "--out", str(tmp_path / "t.svg")]) == 2
    assert "ewt/nosuch" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
