"""The names the testbed offers, from the registry (crates/control,
``netreturn._native.mechanisms()``): the same list the simulator, the
scenario files and ``netreturn-gateway`` accept, never a copy of it.

Congestion controls are the simulator's names; only those with a Linux
counterpart run in the testbed (:data:`LINUX_CC`: Linux reno is NewReno
with SACK).
"""

from __future__ import annotations

from .. import _native

#: Linux's module for each registry congestion control that has one.
#: BBR is Linux's tcp_bbr (v1), which the simulator's `bbr` follows
#: (docs/tcp.md); DCTCP has a Linux module too, absent from this kernel
#: (`runner.available_cc` refuses what the kernel lacks).
LINUX_CC = {"cubic": "cubic", "reno": "reno", "newreno": "reno", "bbr": "bbr", "dctcp": "dctcp"}


def _names(kind: str) -> list[str]:
    return [m["name"] for m in _native.mechanisms()[kind]]


def controllers() -> list[str]:
    """The window controllers (``ewt``, ``sap-law``, ...)."""
    return _names("controllers")


def queues() -> list[str]:
    """The queue disciplines (``droptail``, ``red``, ``ared``)."""
    return _names("queues")


def congestion_controls() -> list[str]:
    """The registry's congestion controls that Linux runs, in registry order."""
    return [n for n in _names("congestion_controls") if n in LINUX_CC]


def linux_cc(name: str) -> str:
    """Linux's name for a registry congestion control (``newreno`` -> ``reno``);
    ValueError naming the allowed ones otherwise."""
    if name not in congestion_controls():
        raise ValueError(f"{name!r} has no Linux counterpart; allowed in the testbed: "
                         + ", ".join(congestion_controls()))
    return LINUX_CC[name]
