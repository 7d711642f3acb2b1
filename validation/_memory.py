"""Memory checks made by every experiment entry point before it allocates.

An experiment whose arrays cannot fit is refused up front with a
``ValueError`` that names the sizes, the memory they need and the limit
(the CLIs turn it into one line and exit status 2), instead of dying in
``numpy`` with a ``MemoryError`` and a traceback, or swapping the machine.

The limit is :data:`FRACTION` of the physical memory (``os.sysconf``), or
the number of bytes in the environment variable ``ASSOCMEM_MEMORY_LIMIT``
(suffixes ``K``, ``M``, ``G``, ``T`` for powers of 1024 allowed). The needs
passed in are *lower bounds* (the arrays that must exist at once), so a
refusal is never wrong; a run that passes may still need somewhat more.
See ``docs/reliability.md#sizes``.
"""
from __future__ import annotations

import os

__all__ = ["physical_memory", "memory_limit", "check_memory", "fmt_bytes", "FRACTION"]

#: Fraction of the physical memory one experiment may plan to use.
FRACTION = 0.75

_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def physical_memory():
    """Physical memory in bytes (``os.sysconf``), or None where unknown."""
    try:
        n = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    return int(n) if n > 0 else None


def memory_limit():
    """``(limit_bytes, description)``: what one experiment may plan to use."""
    env = os.environ.get("ASSOCMEM_MEMORY_LIMIT", "").strip().upper().removesuffix("IB").removesuffix("B")
    if env:
        num, suf = (env[:-1], env[-1]) if env[-1] in _SUFFIX else (env, "")
        try:
            val = float(num) * _SUFFIX[suf]
        except ValueError:
            raise ValueError("ASSOCMEM_MEMORY_LIMIT must be a number of bytes such as 8G, got "
                             f"{os.environ['ASSOCMEM_MEMORY_LIMIT']!r}") from None
        if not val > 0:
            raise ValueError(f"ASSOCMEM_MEMORY_LIMIT must be positive, got {os.environ['ASSOCMEM_MEMORY_LIMIT']!r}")
        return val, "ASSOCMEM_MEMORY_LIMIT"
    phys = physical_memory()
    if phys is None:
        return float("inf"), "physical memory unknown"
    return FRACTION * phys, f"{FRACTION:.0%} of the {fmt_bytes(phys)} of physical memory"


def fmt_bytes(n):
    """``n`` bytes as a short human-readable text (``"93.9 TiB"``)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1024
    return f"{n:.3g} EiB"  # pragma: no cover


def check_memory(nbytes, what):
    """Raise ``ValueError`` if ``nbytes`` exceeds :func:`memory_limit`.

    Parameters
    ----------
    nbytes : float
        Lower bound of the memory the computation needs at once.
    what : str
        The computation and its sizes, e.g. ``"capacity op d=100000 p=2.6e8:
        facts 2 p d float32 + weights d^2"``.

    Returns
    -------
    float
        ``nbytes`` (when it fits).

    Examples
    --------
    >>> check_memory(1e3, "a tiny array")
    1000.0
    >>> check_memory(1e30, "a huge array d=1e15")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: a huge array d=1e15 needs at least ... of memory, more than the limit ...
    """
    nbytes = float(nbytes)
    limit, desc = memory_limit()
    if not nbytes <= limit:
        raise ValueError(f"{what} needs at least {fmt_bytes(nbytes)} of memory, more than the limit "
                         f"{fmt_bytes(limit)} ({desc}); use smaller sizes")
    return nbytes
