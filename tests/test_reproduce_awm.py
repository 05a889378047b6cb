"""`python -m netreturn.reproduce_awm`: seed 002's six families, their
points and the paper's numbers as data, and a tiny end-to-end reproduction
(fairness, short runs) that writes its CSVs and report and resumes."""

import csv
import math

from netreturn import reproduce_awm as ra


def test_every_family_parses_and_its_sweep_lists_are_parallel():
    for fam in ra.FAMILIES:
        pts = ra.points(fam)
        assert pts, fam
        for pt in pts:
            if "buffer" in pt:
                assert ra.size_bytes(pt["buffer"]) > 0


def test_the_fairness_numbers_are_the_papers_table_1():
    # SPEC.md 5.3: Jain AWM 1.0000 / 0.7007, XCP 1.0000 / 0.9954, NC 0.9937 / 0.4392.
    assert ra.paper("fairness")["jain"] == {"awm": [1.0, 0.7007], "xcp": [1.0, 0.9954], "droptail": [0.9937, 0.4392]}


def test_sizes_use_decimal_prefixes():
    assert ra.size_bytes("1500kB") == 1.5e6
    assert ra.size_bytes("187500B") == 187500
    assert math.isclose(ra.size_bytes("30MB"), 3e7)


def test_a_short_fairness_reproduction_writes_its_tables_and_resumes(tmp_path):
    path = ra.reproduce(tmp_path, seeds=1, jobs=1, families=["fairness"], stop="3s", progress=False)
    text = path.read_text()
    assert "Table 1" in text and "| XCP | 1.0000 |" in text
    with (tmp_path / "fairness.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["method"], r["step"]) for r in rows} == {(m, s) for m in ra.METHODS for s in ("0ms", "10ms")}
    # Every run metric the tables read is one the simulator exports (a
    # renamed metric would leave a column of NaN).
    for k in ("utilization", "queue_drops", "tcp_data_loss_pct", "queue_std_norm", "robustness_index", "jain_goodput", "events"):
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
