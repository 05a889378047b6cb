"""``netreturn reproduce <paper>``: a paper's evaluation redone, its report
beside the paper's numbers.

What one paper needs is data and its own figures: ``paper/<name>.toml``
(its parameters, tables, claims, methods, labels, colours, reference
numbers; see :mod:`.paper`) and a module here with its figure functions, its
report sections and a ``main(args)``. The rest is shared:

* :mod:`.store`: options, the scheduler of all runs (searches first, the
  cores kept busy across phases), the resumable run store under
  ``<out>/runs``, the manifest that sets aside runs of another build;
* :mod:`.grid`: grids of (scenario, level, method) cells, the capacity
  search, the calibration at RFC 7928 levels, mean and CI tables;
* :mod:`.claims`: the text's statements about its figures, checked;
* :mod:`.figures` and :mod:`.text`: the common figures, Markdown, and the
  report's skeleton (header, claims, files).

:data:`PAPERS` lists the reproductions; adding one is adding its line.
"""

from __future__ import annotations

import importlib
import sys

# name -> (module under netreturn.reproduce, what `netreturn reproduce --help` says of it)
PAPERS: dict[str, tuple[str, str]] = {
    "ewt": (".ewt", "the EWT paper: both scenarios, six methods"),
    "ngwa": ("..reproduce_ngwa", "the NGWA paper: window behaviour, rates, Table 2"),
    "awm": ("..reproduce_awm", "the AWM paper: AWM vs NC vs XCP, six families"),
    "sarbe": ("..reproduce_sarbe", "the SARBE paper: estimators, lossy link, fairness"),
}


def main(a) -> int:
    """``netreturn reproduce <paper>`` (argparse namespace from cli.py)."""
    if a.paper not in PAPERS:
        print(f"netreturn: error: no reproduction for {a.paper!r}; available: {', '.join(PAPERS)}", file=sys.stderr)
        return 2
    module = importlib.import_module(PAPERS[a.paper][0], __name__)
    if getattr(module, "OWN_COMMAND_LINE", False):
        # A module with its own command line (`python -m ...`) gets the
        # options it shares with this one as arguments.
        return module.main(
            shared_argv(a) + list(getattr(module, "QUICK_ARGV", ()) if getattr(a, "quick", False) else ())
        )
    return module.main(a)


def shared_argv(a) -> list[str]:
    """``--out``, ``--seeds`` (3 with ``--quick``) and ``--jobs`` of the
    ``netreturn reproduce`` namespace, as arguments."""
    argv: list[str] = []
    if getattr(a, "out", None):
        argv += ["--out", str(a.out)]
    if getattr(a, "seeds", None):
        argv += ["--seeds", str(a.seeds)]
    elif getattr(a, "quick", False):
        argv += ["--seeds", "3"]
    if getattr(a, "jobs", None):
        argv += ["--jobs", str(a.jobs)]
    return argv
