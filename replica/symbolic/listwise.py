r"""Symbolic objects of the listwise (tail-average margin) theory and of top-1 at a margin, and their checks.

The large-``p`` results of ``docs/listwise.md`` and
``docs/theory_full_rank.md#capacity-at-a-margin`` as
:class:`~replica.symbolic.Formula` objects: Gardner's margin integral
``Gamma(c) = E[(c - Z)_+^2]`` in closed form, the Gaussian tail mean
``kappa_tau``, the TAM capacity ``alpha_c(tau; gamma) = 1/Gamma(kappa_tau + gamma)``,
its small-tail expansion, and the top-1 capacity at a margin ``g sqrt(2 ln p)``
derived from the replica-symmetric free entropy with the raised energy term.

``CHECKS`` (run by ``python -m replica check``): the closed form of ``Gamma`` is
the integral ``E[(c - Z)_+^2]``; ``Gamma' = 2 E[(c - Z)_+]``; ``Gamma(c) / (1 + c^2)
-> 1`` as ``c -> infinity``; ``tau -> 1`` gives Gardner's capacity 2; the margin
capacity ``1 / (2 (1 + g)^2)`` from the free entropy, reducing to 1/2 at ``g = 0``;
the small-tail expansion against the exact law at ``tau = 1e-12`` and ``1e-40``.
"""
from __future__ import annotations

import mpmath as mp
import sympy as sp

from .formula import SYMBOLS, Formula, limit
from .full_rank import free_entropy_functional
from .._docparams import fill_doc

__all__ = ["gardner_energy", "gaussian_tail_mean", "tam_capacity", "tam_capacity_small_tail",
           "margin_energy_term", "margin_capacity", "CHECKS"]

_c, _tau, _gam, _g = SYMBOLS["c"], SYMBOLS["tau"], SYMBOLS["gamma"], SYMBOLS["g"]
_q, _a, _t, _L = SYMBOLS["q"], SYMBOLS["alpha"], SYMBOLS["t"], SYMBOLS["L"]
_zv = sp.Symbol("zeta", real=True)          # integration variable of E[.] over Z ~ N(0, 1)


def _Phi(x):
    return (1 + sp.erf(x / sp.sqrt(2))) / 2


def _phi(x):
    return sp.exp(-x ** 2 / 2) / sp.sqrt(2 * sp.pi)


@fill_doc
def gardner_energy():
    r"""Return Gardner's margin integral :math:`\Gamma(c) = (1 + c^2) \Phi(c) + c \varphi(c)`.

    Returns
    -------
    Formula
        In the symbol ``c`` (a real margin level); ``Phi`` written through
        ``erf``.  ``relations[0]`` is the definition
        ``Gamma(c) = E[(c - Z)_+^2]``, ``Z ~ N(0, 1)``, as an integral; its
        reciprocal is the perceptron capacity at margin ``c``.

    See Also
    --------
    replica.gardner_energy : The same integral, numerically.
    replica.symbolic.tam_capacity : The capacity :math:`1/\Gamma`.

    %(refs_listwise_large_p)s

    Examples
    --------
    >>> G = gardner_energy()
    >>> G.expr.subs(G.symbols[0], 0)
    1/2
    >>> round(G(1.0), 8)
    1.92466022
    """
    expr = (1 + _c ** 2) * _Phi(_c) + _c * _phi(_c)
    defn = sp.Eq(sp.Function("Gamma")(_c), sp.Integral((_c - _zv) ** 2 * _phi(_zv), (_zv, -sp.oo, _c)))
    return Formula(expr, (_c,), "Gamma(c) = E[(c - Z)_+^2]", (defn,))


@fill_doc
def gaussian_tail_mean():
    r"""Return the mean :math:`\kappa_\tau = \varphi(z_\tau) / \tau` of the upper :math:`\tau` tail of a standard normal.

    Returns
    -------
    Formula
        In ``tau``, with ``z_tau = sqrt(2) erfinv(1 - 2 tau)`` (``relations[0]``).

    See Also
    --------
    replica.gaussian_tail_mean : The same tail mean, numerically.
    replica.symbolic.tam_capacity : The capacity at this tail mean.

    %(refs_listwise_large_p)s

    Examples
    --------
    >>> K = gaussian_tail_mean()
    >>> round(K(0.5), 6)                  # sqrt(2/pi)
    0.797885
    """
    z = sp.sqrt(2) * sp.erfinv(1 - 2 * _tau)
    return Formula(_phi(z) / _tau, (_tau,), "kappa_tau",
                   (sp.Eq(sp.Symbol("z_tau"), z), sp.And(_tau > 0, _tau <= 1)))


@fill_doc
def tam_capacity():
    r"""Return the large-``p`` TAM capacity :math:`\alpha_c(\tau; \gamma) = 1 / \Gamma(\kappa_\tau + \gamma)`.

    Returns
    -------
    Formula
        In ``(tau, gamma)``: the tail fraction and the margin in competitor-score
        units.  Its numerical function agrees with :func:`replica.tam_capacity`
        (``p=None``).

    See Also
    --------
    replica.tam_capacity : The same capacity numerically, also at finite ``p``.
    replica.symbolic.tam_capacity_small_tail : Its small-tail expansion.

    %(refs_listwise_paper_large_p)s

    Examples
    --------
    >>> A = tam_capacity()
    >>> round(A(0.05, 0.0), 6)
    0.190476
    """
    c = gaussian_tail_mean().expr + _gam
    return Formula(1 / gardner_energy().expr.subs(_c, c), (_tau, _gam), "alpha_c(tau; gamma)",
                   (sp.And(_tau > 0, _tau <= 1),))


def tam_capacity_small_tail(terms=4):
    r"""Return the small-tail expansion of :math:`1 / \alpha_c(\tau)` in :math:`L = \ln(1/\tau)`, margin 0.

    Parameters
    ----------
    terms : int, optional
        Terms of ``2L - ln(4 pi L) + 3 + (ln(4 pi L) - 5)/(2L)``: 1 to 4 (default 4).

    Returns
    -------
    Formula
        ``1 / alpha_c`` truncated, in ``L``; ``remainder`` is
        ``O((ln L)^2 / L^2)``, the size of the first omitted term.

    Raises
    ------
    ValueError
        If ``terms`` is not 1, 2, 3 or 4.

    See Also
    --------
    replica.tam_capacity_small_tau : The expansion, numerically.
    replica.symbolic.tam_capacity : The capacity expanded.

    References
    ----------
    docs/listwise.md#small-tail-behaviour

    Examples
    --------
    >>> S = tam_capacity_small_tail()
    >>> S.expr
    2*L - log(4*pi*L) + 3 + (log(4*pi*L) - 5)/(2*L)
    """
    if terms not in (1, 2, 3, 4):
        raise ValueError(f"terms must be 1, 2, 3 or 4, got {terms!r}")
    parts = [2 * _L, -sp.log(4 * sp.pi * _L), sp.Integer(3),
             (sp.log(4 * sp.pi * _L) - 5) / (2 * _L)]
    return Formula(sp.Add(*parts[:terms], evaluate=False), (_L,), "1/alpha_c(tau), L = ln(1/tau)",
                   (sp.Eq(_L, sp.log(1 / _tau)),), sp.Order(sp.log(_L) ** 2 / _L ** 2, (_L, sp.oo)))


@fill_doc
def margin_energy_term():
    r"""Return the large-``p`` energy term at a margin :math:`g \sqrt{2 \ln p}`: :math:`G(t) = -(1 + g)^2 / (1 - t)`.

    Returns
    -------
    Formula
        In ``(t, g)``.

    See Also
    --------
    replica.symbolic.margin_capacity : The capacity derived from it.
    replica.symbolic.energy_term : The term without a margin.

    Notes
    -----
    The counting argument of ``energy_term()`` with every competitor level
    raised by the margin: the correct score must reach :math:`(1 + g) / \sqrt{1 - t}`
    in units of :math:`\sqrt{2 \ln p}`, which multiplies the energy by :math:`(1 + g)^2`.

    %(refs_margin_capacity)s

    Examples
    --------
    >>> margin_energy_term().expr
    -(g + 1)**2/(1 - t)
    """
    return Formula(-(1 + _g) ** 2 / (1 - _t), (_t, _g), "G(t) at margin g sqrt(2 ln p), large p")


@fill_doc
def margin_capacity():
    r"""Return the large-``p`` top-1 capacity at a margin :math:`g \sqrt{2 \ln p}`, derived from the free entropy.

    Returns
    -------
    Formula
        ``alpha_c(g) = 1 / (2 (1 + g)^2)``: the load at which
        ``lim_{q -> 1} (1 - q) Phi(q; alpha)`` vanishes for the energy of
        :func:`margin_energy_term`.  Agrees with
        :func:`replica.finite_capacity.alpha_c_margin_limit`.

    See Also
    --------
    replica.finite_capacity.alpha_c_margin_limit : The same capacity, numerically.
    replica.symbolic.margin_energy_term : The energy term it comes from.

    %(refs_margin_capacity)s

    Examples
    --------
    >>> margin_capacity().expr
    1/(2*(g + 1)**2)
    """
    Phi = free_entropy_functional(energy=margin_energy_term().expr.subs(_t, _q))
    coef = limit((1 - _q) * Phi.expr, _q, 1, dir="-")
    root = sp.solve(sp.Eq(coef, 0), _a)
    return Formula(sp.factor(root[0]), (_g,), "alpha_c(g), top-1 at margin g sqrt(2 ln p)",
                   (sp.Eq(coef, 0),))


# ---------------------------------------------------------------------------
# checks (python -m replica check)

def check_gardner_integral():
    """Gamma(c) in closed form is E[(c - Z)_+^2], and Gamma'(c) = 2 E[(c - Z)_+]."""
    G = gardner_energy()
    integral = G.relations[0].rhs.doit().rewrite(sp.erf)
    d1 = (sp.diff(G.expr, _c) - 2 * sp.integrate((_c - _zv) * _phi(_zv), (_zv, -sp.oo, _c))).rewrite(sp.erf)
    r0, r1 = sp.simplify(sp.expand(integral - G.expr)), sp.simplify(sp.expand(d1))
    return r0 == 0 and r1 == 0, f"E[(c - Z)_+^2] - Gamma = {r0}; Gamma' - 2 E[(c - Z)_+] = {r1}"


def check_gardner_limits():
    """Gamma(0) = 1/2 (Gardner's 2 at tau = 1) and Gamma(c)/(1 + c^2) -> 1 as c -> infinity."""
    G = gardner_energy()
    g0 = sp.nsimplify(G.expr.subs(_c, 0))
    big = limit(G.expr / (1 + _c ** 2), _c, sp.oo)
    kt = limit(gaussian_tail_mean(), "tau", 1, dir="-")
    ok = g0 == sp.Rational(1, 2) and big == 1 and kt == 0
    return ok, f"Gamma(0) = {g0} (alpha_c = {1 / g0}); lim Gamma/(1+c^2) = {big}; kappa_tau -> {kt} at tau = 1"


def check_margin_capacity():
    """Top-1 at a margin g sqrt(2 ln p): alpha_c = 1/(2 (1 + g)^2), 1/2 at g = 0."""
    A = margin_capacity()
    ok = sp.simplify(A.expr - 1 / (2 * (1 + _g) ** 2)) == 0 and A.expr.subs(_g, 0) == sp.Rational(1, 2)
    return ok, f"alpha_c(g) = {A.expr}, alpha_c(0) = {A.expr.subs(_g, 0)}"


def check_small_tail():
    """The small-tail expansion of 1/alpha_c(tau): each term shrinks the error (tau = 1e-12, 1e-40)."""
    A = tam_capacity()
    with mp.workdps(60):
        detail, ok = [], True
        for tau in (mp.mpf("1e-12"), mp.mpf("1e-40")):
            exact = mp.mpf(str(1 / A.evalf(sp.Float(str(tau), 60), 0, dps=60)))
            L = mp.log(1 / tau)
            errs = [abs(exact - mp.mpf(str(tam_capacity_small_tail(n).evalf(sp.Float(str(L), 60), dps=60))))
                    for n in (3, 4)]
            bound = mp.log(L) ** 2 / L ** 2                 # the stated remainder's size
            ok &= errs[1] < errs[0] / 4 and errs[1] < bound
            detail.append(f"tau={mp.nstr(tau, 2)}: 3 terms {mp.nstr(errs[0], 3)}, 4 terms {mp.nstr(errs[1], 3)}"
                          f" (< (ln L)^2/L^2 = {mp.nstr(bound, 3)})")
    return bool(ok), "; ".join(detail)


CHECKS = [
    ("listwise: Gamma(c) = E[(c - Z)_+^2], Gamma' = 2 E[(c - Z)_+]", check_gardner_integral),
    ("listwise: Gamma(0) = 1/2 (tau = 1 is Gardner's 2), Gamma ~ 1 + c^2", check_gardner_limits),
    ("margin: top-1 alpha_c(g) = 1/(2 (1 + g)^2), 1/2 at g = 0", check_margin_capacity),
    ("listwise: small-tail expansion of 1/alpha_c(tau)", check_small_tail),
]
