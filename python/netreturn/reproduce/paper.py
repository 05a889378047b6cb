"""A paper's evaluation as data: ``python/netreturn/paper/<name>.toml``.

The file holds what the paper says (its tables, loss levels, every statement
its text makes about its results, ``[[statements]]``: :mod:`.statements`) and, under ``[run]``, how a reproduction runs
and shows it: which scenario files, which parameter selects a method and
which one the congestion levels vary, the methods' labels and colours, the
metrics the paper plots, reference numbers from ns-3. :class:`Paper` reads
it for the generic machinery of this package.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._toml import load as toml_load
from . import statements as _statements

# Package data, beside the code, like the bundled scenarios (scenarios.py).
PAPER_DIR = Path(__file__).resolve().parent.parent / "paper"


def validate(d: dict, path: str | Path) -> dict:
    """What every paper file needs; ValueError naming the file and the key."""
    for key in ("title", "methods", "levels", "loss_target", "run"):
        if key not in d:
            raise ValueError(f"{path}: missing {key}")
    run = d["run"]
    for key in ("method_param", "count_param", "proposed", "baseline", "counts", "scenarios", "labels", "metrics"):
        if key not in run:
            raise ValueError(f"{path}: missing run.{key}")
    if run["counts"] not in d:
        raise ValueError(f"{path}: run.counts names [{run['counts']}], which is missing")
    for sc in run["scenarios"]:
        counts = [d[run["counts"]][sc][lv] for lv in d["levels"]]
        if counts != sorted(counts):
            raise ValueError(f"{path}: {run['counts']}.{sc}: counts must grow with the level")
    for m in d["methods"]:
        if m not in run["labels"]:
            raise ValueError(f"{path}: run.labels: no label for {m!r}")
    for lv in d["levels"]:
        if lv not in d["loss_target"]:
            raise ValueError(f"{path}: loss_target: no value for {lv!r}")
    _statements.validate(d.get("statements", []), path)
    for i, st in enumerate(d.get("statements", [])):
        if "metric" in st and st.get("scenario") not in run["scenarios"]:
            raise ValueError(f"{path}: statements[{i}] ({st['id']}): scenario {st.get('scenario')!r} is not one of "
                             f"run.scenarios ({', '.join(run['scenarios'])})")
        for m in [st.get("method"), st.get("other"), *st.get("others", []), *st.get("methods", [])]:
            if m is not None and m not in d["methods"]:
                raise ValueError(f"{path}: statements[{i}] ({st['id']}): method {m!r} is not one of "
                                 f"{', '.join(d['methods'])}")
    return d


@dataclass
class Paper:
    """A paper file, read: its raw ``data`` and named views of ``[run]``."""

    name: str
    path: Path
    data: dict

    @staticmethod
    def load(name: str, path: str | Path | None = None) -> "Paper":
        p = Path(path) if path is not None else PAPER_DIR / f"{name}.toml"
        return Paper(name, p, validate(toml_load(p), p))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    @property
    def run(self) -> dict:
        return self.data["run"]

    @property
    def methods(self) -> list[str]:
        return list(self.data["methods"])

    @property
    def levels(self) -> list[str]:
        return list(self.data["levels"])

    @property
    def scenarios(self) -> dict[str, str]:
        """Scenario key -> scenario file (relative to ``scenarios/``)."""
        return {k: v["file"] for k, v in self.run["scenarios"].items()}

    @property
    def scenario_titles(self) -> dict[str, str]:
        return {k: v.get("title", k) for k, v in self.run["scenarios"].items()}

    def cost(self, scenario_file: str) -> float:
        """Relative run time per counted unit (flow) of a scenario file."""
        for v in self.run["scenarios"].values():
            if Path(scenario_file).name == Path(v["file"]).name:
                return float(v.get("cost", 1.0))
        return 1.0

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.run["labels"])

    @property
    def colors(self) -> dict[str, str]:
        return dict(self.run.get("colors", {}))

    @property
    def metrics(self) -> list[tuple[str, str, str, tuple[str, ...]]]:
        """(column, label, better: max|min, scenarios it applies to)."""
        return [(m["column"], m["label"], m["better"], tuple(m["scenarios"])) for m in self.run["metrics"]]

    @property
    def extra_metrics(self) -> list[tuple[str, str]]:
        return [(m["column"], m["label"]) for m in self.run.get("extra_metrics", [])]

    @property
    def keep(self) -> list[str]:
        """The summary columns a reproduction keeps of each run."""
        return ([m for m, *_ in self.metrics] + [m for m, _ in self.extra_metrics]
                + ["flows_completed", "tcp_flows", "sim_time_s"])

    def counts(self, scenario: str) -> dict[str, int]:
        """The paper's count (flows) per level in ``scenario``."""
        return {lv: int(self.data[self.run["counts"]][scenario][lv]) for lv in self.levels}

    def loss_target(self, level: str) -> float:
        return float(self.data["loss_target"][level])

    @property
    def ns3_reference(self) -> dict[tuple[int, str], dict[str, float]]:
        """(flows, method) -> metric -> ns-3's mean."""
        out = {}
        for r in self.run.get("ns3_reference", []):
            r = dict(r)
            out[(int(r.pop("flows")), r.pop("method"))] = r
        return out
