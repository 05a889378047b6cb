"""The real-Linux testbed: network namespaces, veth pairs, the
netreturn-gateway binary between them, real TCP transfers, CSV results.

Entry point: :func:`main` (exposed as ``netreturn testbed ...``). Stdlib
only; needs root, iproute2 and ethtool.
"""

from .cli import main

__all__ = ["main"]
