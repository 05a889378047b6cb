"""netreturn: router-assisted TCP congestion control.

A packet-level simulator (Rust core) for gateways that rewrite the receive
window of the ACKs they forward (EWT, EWA, AWM, SAP-LAW, RWM, NGWA), their
baselines (DropTail, RED, Adaptive RED, XCP) and end-host schemes, plus a real
Linux gateway running the same controller code.
"""

from . import _native
from .api import run
from .results import Results, open_results as open
from .scenarios import ScenarioError, list_scenarios, load

__version__ = _native.__version__
__all__ = ["Results", "ScenarioError", "list_scenarios", "load", "open", "run", "__version__"]
