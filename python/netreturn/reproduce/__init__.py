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
