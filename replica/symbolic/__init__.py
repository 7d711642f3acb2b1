r"""The replica theory as sympy objects, and the derivations run by ``python -m replica check``.

**Objects.**  Every public function returns a :class:`Formula`: a sympy
expression with its named symbols (``q, alpha = Phi.symbols``), the relations
it holds under and, for expansions, its remainder.  A formula evaluates
numerically (``Phi(0.5, 0.25)``, through ``sympy.lambdify``; it agrees with the
numerical functions of :mod:`replica`), to any precision (``Phi.evalf(...)``)
and prints in LaTeX (``Phi.latex()``); its ``expr`` is an ordinary sympy
expression to differentiate, expand or take limits of.  :func:`series` and
:func:`limit` wrap sympy's and raise :class:`SymbolicUndecided` instead of
returning an unevaluated answer.

* full rank (:mod:`replica.symbolic.full_rank`): :func:`free_entropy_functional`,
  :func:`energy_term`, :func:`saddle_point_equation`, :func:`saddle_point`,
  :func:`v_p_objective`, :func:`v_p_piecewise`, :func:`expected_v_p`,
  :func:`finite_capacity`, :func:`hebbian_signal_to_noise`,
  :func:`hebbian_score_spread`, :func:`hebbian_load_threshold`;
* rank-constrained (:mod:`replica.symbolic.rank_constrained`):
  :func:`alpha_c_integral`, :func:`alpha_c_closed_form`,
  :func:`alpha_c_parametric`, :func:`alpha_c_series`,
  :func:`quarter_circle_density`, :func:`quarter_circle_moment`,
  :func:`mp_product_cubic`, :func:`mp_product_moment_series`,
  :func:`mp_product_edges`; the sympy functions ``X_qc``
  (:class:`~replica.symbolic.functions.QCQuantile`) and ``y(kappa)``
  (:class:`~replica.symbolic.functions.CapacityAngle`).

**Checks.**  Each module listed in :data:`CHECK_MODULES` exposes ``CHECKS``, a
list of ``(name, callable)``; the callable performs a derivation with the
objects above and returns ``(ok: bool, detail: str)``.

* listwise and margin (:mod:`replica.symbolic.listwise`): :func:`gardner_energy`,
  :func:`gaussian_tail_mean`, :func:`tam_capacity`, :func:`tam_capacity_small_tail`,
  :func:`margin_energy_term`, :func:`margin_capacity`.

**Adding a theory** (the extension point, used by the listwise theory of
arXiv:2605.05189): write a module
``replica/symbolic/<theory>.py`` whose public functions return :class:`Formula`
objects and whose ``CHECKS`` derive its limits with them; append its import name
to :data:`CHECK_MODULES` and re-export its public names here.  ``python -m
replica check`` then runs its checks, and the count it prints grows with them.
"""
from __future__ import annotations

import importlib

from .formula import SYMBOLS, Formula, SymbolicUndecided, limit, series
from .full_rank import (SaddlePoint, energy_term, expected_v_p, finite_capacity,
                        free_entropy_functional, hebbian_load_threshold, hebbian_score_spread,
                        hebbian_signal_to_noise, saddle_point, saddle_point_equation, v_p_objective,
                        v_p_piecewise)
from .functions import CapacityAngle, QCQuantile
from .listwise import (gardner_energy, gaussian_tail_mean, margin_capacity, margin_energy_term,
                       tam_capacity, tam_capacity_small_tail)
from .rank_constrained import (alpha_c_closed_form, alpha_c_integral, alpha_c_parametric,
                               alpha_c_series, mp_product_cubic, mp_product_edges,
                               mp_product_moment_series, quarter_circle_density,
                               quarter_circle_moment)
from .._docparams import fill_doc

__all__ = [
    "Formula", "SymbolicUndecided", "series", "limit", "SYMBOLS",
    "free_entropy_functional", "energy_term", "saddle_point_equation", "saddle_point",
    "SaddlePoint", "v_p_objective", "v_p_piecewise", "expected_v_p", "finite_capacity",
    "hebbian_signal_to_noise", "hebbian_score_spread", "hebbian_load_threshold",
    "alpha_c_integral", "alpha_c_closed_form", "alpha_c_parametric", "alpha_c_series",
    "quarter_circle_density", "quarter_circle_moment", "mp_product_cubic",
    "mp_product_moment_series", "mp_product_edges", "QCQuantile", "CapacityAngle",
    "gardner_energy", "gaussian_tail_mean", "tam_capacity", "tam_capacity_small_tail",
    "margin_energy_term", "margin_capacity",
    "CHECK_MODULES", "iter_checks", "run_checks",
]

#: Modules holding symbolic checks (each defines ``CHECKS``); a new theory
#: appends its module here (see the module docstring, "Adding a theory").
CHECK_MODULES = [
    "replica.symbolic.full_rank",
    "replica.symbolic.rank_constrained",
    "replica.symbolic.listwise",
]


@fill_doc
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

    See Also
    --------
    replica.symbolic.run_checks : Run them all and collect the results.

    %(refs_symbolic_checks)s

    Examples
    --------
    >>> checks = list(iter_checks())
    >>> print(len(checks), checks[0][0])
    19 replica.symbolic.full_rank
    >>> module, name, check = checks[12]
    >>> print(name)
    alpha_c series against replica.alpha_c to its order (kappa = 1e-4, 1e-6)
    >>> ok, detail = check()
    >>> print(ok, detail.split(":")[0])
    True orders 1..6 at kappa = 1e-4, 1e-6
    """
    for modname in CHECK_MODULES:
        mod = importlib.import_module(modname)
        for name, fn in mod.CHECKS:
            yield modname, name, fn


@fill_doc
def run_checks():
    """Run every check; return a list of dicts ``module, name, ok, detail``.

    An exception inside a check counts as a failure (its message is the detail).

    Returns
    -------
    list of dict
        One record per check with keys ``module``, ``name``, ``ok`` and ``detail``.

    See Also
    --------
    replica.symbolic.iter_checks : The checks, one at a time.

    %(refs_symbolic_checks)s

    Examples
    --------
    All checks take about half a minute (``python -m replica check`` runs them):

    >>> results = run_checks()                      # doctest: +SKIP
    >>> print(len(results), sum(r["ok"] for r in results))  # doctest: +SKIP
    19 19
    """
    out = []
    for modname, name, fn in iter_checks():
        try:
            ok, detail = fn()
        except Exception as exc:  # a crashing derivation is a failed check
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        out.append({"module": modname, "name": name, "ok": bool(ok), "detail": str(detail)})
    return out
