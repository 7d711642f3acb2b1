"""Symbolic (sympy) derivations run as checks: ``python -m replica check``.

Each module listed in :data:`CHECK_MODULES` exposes ``CHECKS``, a list of
``(name, callable)``; the callable performs a derivation with sympy and returns
``(ok: bool, detail: str)``.
"""
from __future__ import annotations

import importlib

__all__ = ["CHECK_MODULES", "iter_checks", "run_checks"]

#: Modules holding symbolic checks (each defines ``CHECKS``).
CHECK_MODULES = [
    "replica.symbolic.full_rank",
    "replica.symbolic.rank_constrained",
]


def iter_checks():
    """Yield ``(module, name, callable)`` for every registered check.

    Yields
    ------
    module : str
        Import name of the module in :data:`CHECK_MODULES`.
    name : str
        Name of the check.
    check : callable
        ``check() -> (ok, detail)``.

    References
    ----------
    docs/api_replica.md#symbolic-checks
    """
    for modname in CHECK_MODULES:
        mod = importlib.import_module(modname)
        for name, fn in mod.CHECKS:
            yield modname, name, fn


def run_checks():
    """Run every check; return a list of dicts ``module, name, ok, detail``.

    An exception inside a check counts as a failure (its message is the detail).

    Returns
    -------
    list of dict
        One record per check with keys ``module``, ``name``, ``ok`` and ``detail``.

    References
    ----------
    docs/api_replica.md#symbolic-checks
    """
    out = []
    for modname, name, fn in iter_checks():
        try:
            ok, detail = fn()
        except Exception as exc:  # a crashing derivation is a failed check
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        out.append({"module": modname, "name": name, "ok": bool(ok), "detail": str(detail)})
    return out
