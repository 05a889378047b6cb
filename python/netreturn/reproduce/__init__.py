"""``netreturn reproduce <paper>``: a paper's evaluation redone, its report
beside the paper's numbers.

Every paper is data, its scenarios and its own figures: ``paper/<name>.toml``
(its tables, the numbers its text gives, every statement about its results
with quote and location, and how it runs), its scenario files, and a module
here (``ewt``, ``ngwa``, ``awm``, ``sarbe``; RWM's is
:mod:`netreturn.testbed.rwm`, on the testbed) with its figure functions, the
judges of its statements, its report sections and ``main(args)``. Every
report has the same layout: ``report.md``, ``figures/``, tables as CSV,
``statements.csv``, ``runs/``. The rest is shared:

* :mod:`.store`: options, the scheduler of all runs (searches first, the
  cores kept busy across phases), the resumable run store under
  ``<out>/runs``, the manifest that sets aside runs of another build;
* :mod:`.grid`: grids of (scenario, level, method) cells, the capacity
  search, the calibration at RFC 7928 levels, mean and CI tables;
* :mod:`.statements`: verdicts (holds, partly, fails, not measurable), the
  statement table every report carries, its tally, ``--quick``;
* :mod:`.claims`: the grid checks of a statement on mean ± CI tables;
* :mod:`.figures` and :mod:`.text`: the common figures, Markdown, and the
  report's header;
* :mod:`.commands`: one subcommand per paper with only its options.

:data:`PAPERS` (in :mod:`.commands`) lists the reproductions and their
options; adding one is adding its line.
"""

from __future__ import annotations

import importlib

from .commands import PAPERS  # noqa: F401  (re-exported: the table of reproductions)


def main(a) -> int:
    """``netreturn reproduce <paper>`` (argparse namespace from cli.py): the
    paper's module reads its own options from ``a``."""
    module = importlib.import_module(PAPERS[a.paper][0], __name__)
    return module.main(a)
