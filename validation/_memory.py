"""Memory checks made by every experiment entry point before it allocates.

An experiment whose arrays cannot fit is refused up front with a
``ValueError`` that names the sizes, the memory they need and the limit
(the CLIs turn it into one line and exit status 2), instead of dying in
``numpy`` with a ``MemoryError`` and a traceback, or swapping the machine.
The functions live in the shared layer (:func:`hcizz.checks.check_memory`,
also used by ``replica`` for its Monte Carlo sample sizes); this module keeps
the names the experiments import. See ``docs/reliability.md#sizes``.
"""
from __future__ import annotations

from hcizz.checks import MEMORY_FRACTION as FRACTION
from hcizz.checks import check_memory, fmt_bytes, memory_limit

__all__ = ["memory_limit", "check_memory", "fmt_bytes", "FRACTION"]
