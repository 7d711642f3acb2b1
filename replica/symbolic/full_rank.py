r"""Symbolic objects of the full-rank linear memory (docs/theory_full_rank.md) and their checks.

Public functions return :class:`~replica.symbolic.Formula` objects (a sympy
expression with its named symbols): the replica-symmetric free entropy
``Phi(q; alpha)`` with the large-``p`` energy term or a symbolic one, the
energy term itself, the saddle-point equation and its solution, the finite-``p``
capacity through ``E[V_p]`` (exact at ``p = 2, 3``) and the Hebbian
signal-to-noise ratio with its threshold.

``CHECKS`` lists the derivations run by ``python -m replica check``; each uses
these objects and compares with the claimed closed form by
``simplify(result - claim) == 0``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from hcizz.results import Result

from .formula import SYMBOLS, Formula, SymbolicUndecided, limit
from .._docparams import fill_doc

__all__ = ["free_entropy_functional", "energy_term", "saddle_point_equation", "saddle_point",
           "SaddlePoint", "v_p_objective", "v_p_piecewise", "expected_v_p", "finite_capacity",
           "hebbian_signal_to_noise", "hebbian_score_spread", "hebbian_load_threshold", "CHECKS"]

_q, _t, _a = SYMBOLS["q"], SYMBOLS["t"], SYMBOLS["alpha"]
_p, _d, _L, _EV = SYMBOLS["p"], SYMBOLS["d"], SYMBOLS["L"], SYMBOLS["E_V"]
_x = SYMBOLS["x"]


def _zero(expr):
    return sp.simplify(expr) == 0


# ---------------------------------------------------------------------------
# energy term and free entropy

@fill_doc
def energy_term(form="large-p"):
    r"""Return the energy term :math:`G(t)` of the replica-symmetric free entropy.

    Parameters
    ----------
    form : {"large-p", "finite-p"}, optional
        ``"large-p"`` (default): the limit ``G(t) = -1/(1 - t)``, derived here by
        the counting argument of the Notes.  ``"finite-p"``: ``G_p(t)`` as an
        undefined sympy function, with its exact value at ``t = 0`` and its
        Laplace limit at ``t -> 1`` as ``relations``.

    Returns
    -------
    Formula
        ``G(t)`` in the symbol ``t``.  Large ``p``: ``relations`` holds the
        level ``y* = sqrt(t)`` of the competitors that decide the recall.

    Raises
    ------
    ValueError
        If ``form`` is not one of the two names.

    See Also
    --------
    replica.energy_G : Its numerical value at finite ``p``.
    replica.energy_G_limit : Its large-``p`` limit, numerically.
    replica.symbolic.free_entropy_functional : The free entropy it enters.

    Notes
    -----
    On the scale :math:`\sqrt{2 \ln p}` the correct candidate's noise must exceed
    :math:`s \sqrt{2 \ln p}` with :math:`s - \beta y \ge \sqrt{1 - y^2}` at every
    competitor level :math:`y \in [0, 1]`, :math:`\beta^2 = t/(1-t)`; so
    :math:`\ln f_p \sim -\ln p\, s_{min}^2` with
    :math:`s_{min} = \max_y [\beta y + \sqrt{1 - y^2}]`.  The maximum is found by
    ``sympy.solve`` of the derivative (:math:`y^* = \beta/\sqrt{1 + \beta^2} = \sqrt t`),
    and :math:`s_{min}^2 = 1 + \beta^2 = 1/(1-t)`.  At finite :math:`p`,
    :math:`G_p(0) = -1` and :math:`(1 - t) G_p(t) \to -E[V_p]/\ln p` as :math:`t \to 1`
    (Laplace's method).

    %(refs_paper_large_p)s

    Examples
    --------
    >>> G = energy_term()
    >>> G.expr, G.relations
    (-1/(1 - t), (Eq(y_*, sqrt(t)),))
    >>> G(0.5)
    -2.0
    >>> energy_term("finite-p").relations[1]
    Eq(Limit((1 - t)*G_p(t), t, 1, dir='-'), -E_V/log(p))
    """
    if form == "finite-p":
        Gp = sp.Function("G_p")(_t)
        rel = (sp.Eq(Gp.subs(_t, 0), -1),
               sp.Eq(sp.Limit((1 - _t) * Gp, _t, 1, dir="-"), -_EV / sp.log(_p)))
        return Formula(Gp, (_t,), "G_p(t)", rel)
    if form != "large-p":
        raise ValueError(f"form must be 'large-p' or 'finite-p', got {form!r}")
    beta, y = sp.symbols("beta y", positive=True)
    level = beta * y + sp.sqrt(1 - y ** 2)
    ys = sp.solve(sp.diff(level, y), y)
    if len(ys) != 1:                       # pragma: no cover - sympy regression guard
        raise SymbolicUndecided(f"expected one maximiser of {level}, got {ys}", ys)
    s2 = sp.simplify(level.subs(y, ys[0]) ** 2)              # 1 + beta^2
    b2 = _t / (1 - _t)
    G = sp.factor(sp.together(sp.simplify(-s2.subs(beta, sp.sqrt(b2)))))
    ystar = sp.simplify(ys[0].subs(beta, sp.sqrt(b2)))
    # written as in the docs: -1/(1-t), and y* = sqrt(t) (a ratio of square roots, >= 0)
    if not (_zero(G + 1 / (1 - _t)) and _zero(ystar ** 2 - _t)):  # pragma: no cover - sympy guard
        raise SymbolicUndecided(f"counting argument gave G = {G}, y* = {ystar}", G)
    return Formula(-1 / (1 - _t), (_t,), "G(t), large p", (sp.Eq(sp.Symbol("y_*"), sp.sqrt(_t)),))


def _energy_in_q(energy):
    if energy is None or energy == "large-p":
        return energy_term().expr.subs(_t, _q)
    if energy == "symbolic":
        return sp.Function("G")(_q)
    if callable(energy) and not isinstance(energy, sp.Basic):
        return sp.sympify(energy(_q))
    if isinstance(energy, Formula):
        energy = energy.expr.subs(energy.symbols[0], _q) if energy.symbols else energy.expr
    e = sp.sympify(energy)
    return e.subs(_t, _q)


@fill_doc
def free_entropy_functional(energy="large-p"):
    r"""Return the replica-symmetric free entropy :math:`\Phi(q; \alpha) = \frac12 \ln(1-q) + q/(2(1-q)) + \alpha G(q)`.

    Parameters
    ----------
    energy : {"large-p", "symbolic"}, sympy expression or callable, optional
        The energy term ``G``: ``"large-p"`` (default) ``-1/(1-q)``
        (:func:`energy_term`); ``"symbolic"`` an undefined function ``G(q)``;
        an expression in ``t`` or ``q`` (or a :class:`Formula`), or a callable
        ``q -> expression``.

    Returns
    -------
    Formula
        ``Phi`` in the symbols ``(q, alpha)``; ``relations``: ``0 <= q < 1``.
        Its numerical function agrees with :func:`replica.free_entropy`
        (``p=None``) for the large-``p`` energy.

    See Also
    --------
    replica.free_entropy : The same free entropy, numerically.
    replica.symbolic.saddle_point_equation : Its stationarity condition.
    replica.symbolic.energy_term : The energy term :math:`G`.

    %(refs_paper_free_entropy)s

    Examples
    --------
    >>> Phi = free_entropy_functional("symbolic")
    >>> Phi.expr
    alpha*G(q) + q/(2 - 2*q) + log(1 - q)/2
    >>> q, alpha = Phi.symbols
    >>> sp.simplify(sp.diff(Phi.expr, q))
    alpha*Derivative(G(q), q) + q/(2*(q - 1)**2)
    """
    G = _energy_in_q(energy)
    Phi = sp.log(1 - _q) / 2 + _q / (2 * (1 - _q)) + _a * G
    return Formula(Phi, (_q, _a), "Phi(q; alpha)", (sp.And(_q >= 0, _q < 1),))


@fill_doc
def saddle_point_equation(energy="large-p"):
    r"""Return the stationarity condition :math:`\partial\Phi/\partial q = 0` of the free entropy.

    Parameters
    ----------
    energy : {"large-p", "symbolic"}, sympy expression or callable, optional
        The energy term, as for :func:`free_entropy_functional`.

    Returns
    -------
    Formula
        ``Eq(dPhi/dq, 0)`` (the derivative over a common denominator) in
        ``(q, alpha)``.

    See Also
    --------
    replica.symbolic.saddle_point : Its solution.
    replica.symbolic.free_entropy_functional : The free entropy differentiated.

    %(refs_large_p)s

    Examples
    --------
    >>> saddle_point_equation().expr
    Eq((-2*alpha + q)/(2*(q - 1)**2), 0)
    >>> saddle_point_equation("symbolic").expr
    Eq(alpha*Derivative(G(q), q) + q/(2*(q - 1)**2), 0)
    """
    Phi = free_entropy_functional(energy)
    dphi = sp.diff(Phi.expr, _q)
    dphi = sp.factor(sp.together(dphi)) if not dphi.has(sp.Derivative) else sp.simplify(dphi)
    return Formula(sp.Eq(dphi, 0), (_q, _a), "dPhi/dq = 0", Phi.relations)


@dataclass(frozen=True)
@fill_doc
class SaddlePoint(Result):
    r"""Solution of the saddle-point equation, as returned by :func:`saddle_point`.

    Parameters
    ----------
    equation : Formula
        The equation solved, ``dPhi/dq = 0``.
    q_star : Formula
        The minimiser ``q*(alpha)``.
    phi : Formula
        The free entropy at the saddle, ``phi(alpha) = Phi(q*; alpha)``.
    curvature : Formula
        ``Phi''(q*)`` (positive: a minimum).
    alpha_c : sympy.Expr
        The capacity: the load at which ``(1 - q) Phi -> 0`` as ``q -> 1``.

    See Also
    --------
    replica.symbolic.saddle_point : Returns this record (its Examples show one).
    replica.Saddle : The numerical counterpart.

    %(refs_large_p)s

    Examples
    --------
    >>> s = saddle_point()
    >>> print(type(s).__name__, s.q_star.expr, s.alpha_c)
    SaddlePoint 2*alpha 1/2
    """

    equation: Formula
    q_star: Formula
    phi: Formula
    curvature: Formula
    alpha_c: object


@fill_doc
def saddle_point(energy="large-p"):
    r"""Solve the saddle-point equation: :math:`q^* = 2\alpha`, :math:`\phi = \frac12 \ln(1 - 2\alpha)`, :math:`\alpha_c = 1/2`.

    Parameters
    ----------
    energy : {"large-p"}, sympy expression or callable, optional
        The energy term, as for :func:`free_entropy_functional`; it must give an
        equation that ``sympy.solve`` solves with a single root.

    Returns
    -------
    SaddlePoint
        ``q_star``, ``phi`` and ``curvature`` as formulas in ``alpha``, and
        ``alpha_c`` from the coefficient ``lim_{q -> 1} (1 - q) Phi``.  The
        numbers agree with :func:`replica.saddle` (``p=None``).

    Raises
    ------
    SymbolicUndecided
        If sympy finds no single stationary point (e.g. ``energy="symbolic"``:
        use :func:`saddle_point_equation`), or cannot decide the limit.

    See Also
    --------
    replica.symbolic.SaddlePoint : The record returned.
    replica.saddle : The numerical saddle point, also at finite ``p``.

    %(refs_paper_large_p)s

    Examples
    --------
    >>> s = saddle_point()
    >>> s.q_star.expr, s.phi.expr, s.curvature.expr, s.alpha_c
    (2*alpha, log(1 - 2*alpha)/2, 1/(2*(1 - 2*alpha)**2), 1/2)
    >>> round(s.phi(0.2), 12)
    -0.255412811883
    """
    Phi = free_entropy_functional(energy)
    eq = saddle_point_equation(energy)
    if eq.expr.has(sp.Derivative):
        raise SymbolicUndecided("the stationarity condition involves an unspecified G'(q): "
                                f"{eq.expr}; no closed-form solution", eq.expr)
    sols = sp.solve(eq.expr, _q)
    if len(sols) != 1:
        raise SymbolicUndecided(f"stationary points of {Phi.expr}: {sols}; expected exactly one", sols)
    qs = sp.simplify(sols[0])
    curv = sp.factor(sp.simplify(sp.diff(Phi.expr, _q, 2).subs(_q, qs)))
    phi = sp.simplify(sp.expand_log(sp.simplify(Phi.expr.subs(_q, qs)), force=True))
    phi = sp.logcombine(phi, force=True) if phi.has(sp.log) else phi
    if _zero(sp.expand_log(phi - sp.log(1 - 2 * _a) / 2, force=True)):
        phi = sp.log(1 - 2 * _a) / 2
    if _zero(curv - 1 / (2 * (1 - 2 * _a) ** 2)):
        curv = 1 / (2 * (1 - 2 * _a) ** 2)
    coef = sp.simplify(limit((1 - _q) * Phi.expr, _q, 1, dir="-"))
    roots = sp.solve(sp.Eq(coef, 0), _a)
    if len(roots) != 1:
        raise SymbolicUndecided(f"lim (1-q) Phi = {coef} vanishes at {roots}; expected one load", roots)
    rel = (sp.Eq(sp.Symbol("q*"), qs), sp.Eq(sp.Symbol("lim_{q->1} (1-q) Phi"), coef))
    return SaddlePoint(eq, Formula(qs, (_a,), "q*(alpha)", rel),
                       Formula(phi, (_a,), "phi(alpha)", (sp.And(_a >= 0, _a < roots[0]),)),
                       Formula(curv, (_a,), "Phi''(q*)"), roots[0])


# ---------------------------------------------------------------------------
# finite p: V_p and E[V_p]

def _gap_symbols(p):
    return tuple(sp.Symbol(f"g_{j}", real=True) for j in range(2, p + 1))


def v_p_objective(p):
    r"""Return the objective :math:`x^2/2 + \frac12 \sum_\rho (g_\rho - x)_+^2` whose minimum over :math:`x \ge 0` is :math:`V_p`.

    Parameters
    ----------
    p : int
        Number of candidates, ``2 <= p <= 64``.

    Returns
    -------
    Formula
        The objective in ``(x, g_2, ..., g_p)``, ``g_rho = eta_rho - eta_1``.

    See Also
    --------
    replica.symbolic.v_p_piecewise : Its minimum as a ``Piecewise``.
    replica.finite_capacity.v_p_from_gaps : The minimum, numerically.

    References
    ----------
    docs/theory_full_rank.md#laplace-limit-of-the-energy-term

    Examples
    --------
    >>> v_p_objective(3).expr
    x**2/2 + Max(0, g_2 - x)**2/2 + Max(0, g_3 - x)**2/2
    """
    from hcizz.checks import check_int

    p = check_int("p", p, low=2, high=64)
    gs = _gap_symbols(p)
    obj = _x ** 2 / 2 + sum(sp.Max(g - _x, 0) ** 2 for g in gs) / 2
    return Formula(obj, (_x,) + gs, "V_p objective", (_x >= 0,))


def _branches(gs):
    """``(condition, x*, V)`` for every ordering and active-set size (the prefix rule)."""
    from itertools import permutations

    out = []
    for order in permutations(range(len(gs))):
        srt = [gs[i] for i in order]
        cond = [srt[i] >= srt[i + 1] for i in range(len(srt) - 1)]
        for k in range(len(srt) + 1):
            c = list(cond)
            xs = [sum(srt[:i], sp.S.Zero) / (i + 1) for i in range(len(srt) + 1)]
            c += [srt[i] > xs[i] for i in range(k)]             # the first k gaps are active
            if k < len(srt):
                c.append(srt[k] <= xs[k])                       # and the (k+1)-th is not
            x = xs[k]
            V = sp.expand(x ** 2 / 2 + sum((g - x) ** 2 for g in srt[:k]) / 2)
            out.append((sp.And(*c), x, V))
    return out


@fill_doc
def v_p_piecewise(p):
    r"""Return :math:`V_p(g) = \min_{x \ge 0} [x^2/2 + \frac12 \sum_\rho (g_\rho - x)_+^2]` as a sympy ``Piecewise``.

    Parameters
    ----------
    p : int
        Number of candidates, ``2 <= p <= 4``.

    Returns
    -------
    Formula
        ``Piecewise`` in the gaps ``(g_2, ..., g_p)``; ``relations`` holds the
        minimiser ``x*`` as a ``Piecewise`` on the same pieces.

    See Also
    --------
    replica.symbolic.v_p_objective : The objective minimised.
    replica.symbolic.expected_v_p : Its exact mean for :math:`p = 2, 3`.

    Notes
    -----
    Sort the gaps :math:`g_{(1)} \ge g_{(2)} \ge \dots` and let :math:`x_k` be the sum
    of the :math:`k` largest over :math:`k + 1`.  The active set is the prefix
    :math:`k` with :math:`g_{(i)} > x_{i-1}` for :math:`i \le k` and
    :math:`g_{(k+1)} \le x_k`; then :math:`x^* = x_k` and
    :math:`V = x_k^2/2 + \frac12 \sum_{i \le k} (g_{(i)} - x_k)^2`
    (docs/theory_full_rank.md#computing-v-for-one-sample).  One piece per
    ordering of the gaps and active-set size.

    %(refs_v_one_sample)s

    Examples
    --------
    >>> v_p_piecewise(2).expr
    Piecewise((0, g_2 <= 0), (g_2**2/4, True))
    """
    from hcizz.checks import check_int

    p = check_int("p", p, low=2, high=4)
    gs = _gap_symbols(p)
    br = _branches(gs)
    if p == 2:                            # one gap: conditions g <= 0 and g > 0
        br = [(gs[0] <= 0, sp.S.Zero, sp.S.Zero), (gs[0] > 0, gs[0] / 2, gs[0] ** 2 / 4)]
    V = sp.Piecewise(*[(v, c) for c, _, v in br])
    X = sp.Piecewise(*[(x, c) for c, x, _ in br])
    return Formula(V, gs, "V_p(g)", (sp.Eq(sp.Symbol("x*"), X),))


def _helmert(p):
    """Orthonormal basis of the hyperplane ``sum eta = 0`` of ``R^p``."""
    rows = []
    for k in range(1, p):
        v = [sp.Integer(1)] * k + [sp.Integer(-k)] + [sp.Integer(0)] * (p - k - 1)
        rows.append(sp.Matrix(v) / sp.sqrt(k * (k + 1)))
    return rows


def _piece_at(V, point):
    """The expression of the ``Piecewise`` ``V`` that applies at the numeric ``point``."""
    for expr, cond in V.args:
        if bool(cond.subs(point)):
            return expr
    raise ValueError("no piece applies")        # pragma: no cover - the pieces cover R^m


def expected_v_p(p):
    r"""Return the exact :math:`E[V_p]` for :math:`p = 2` (1/4) and :math:`p = 3` (5/12).

    Parameters
    ----------
    p : int
        ``2`` or ``3``.

    Returns
    -------
    Formula
        The exact value (no symbols); ``relations`` holds the integral it
        evaluates.

    Raises
    ------
    ValueError
        If ``p`` is not 2 or 3 (use :func:`replica.v_p`, a Monte Carlo
        estimate, for larger ``p``).

    See Also
    --------
    replica.v_p : The Monte Carlo estimate for any ``p``.
    replica.symbolic.finite_capacity : The capacity from this mean.

    Notes
    -----
    The gaps :math:`g_\rho = \eta_\rho - \eta_1` depend on :math:`\eta` only through
    its projection on the hyperplane :math:`\sum_\rho \eta_\rho = 0`, an isotropic
    Gaussian in :math:`m = p - 1` dimensions, :math:`r w` with :math:`r^2 \sim \chi^2_m`
    independent of the direction :math:`w`.  :math:`V_p` is homogeneous of degree 2
    (every piece of :func:`v_p_piecewise` is a quadratic form on a cone), so
    :math:`E[V_p] = E[r^2] \langle V_p(w) \rangle = m \langle V_p(w) \rangle`, the
    average over the unit sphere of the hyperplane.  :math:`p = 2`: the sphere is
    two points, :math:`E[V_2] = \frac12 (\frac12 + 0) = 1/4`.  :math:`p = 3`: a circle;
    the cones are sectors whose edges are the angles where a condition of the
    ``Piecewise`` changes, and ``sympy.integrate`` does each sector exactly.

    References
    ----------
    docs/theory_full_rank.md#exact-case-of-two-facts

    Examples
    --------
    >>> expected_v_p(2).expr, expected_v_p(3).expr
    (1/4, 5/12)
    """
    from hcizz.checks import check_int

    return _expected_v_p(check_int("p", p, low=2, high=3))


@lru_cache(maxsize=None)
def _expected_v_p(p):
    V = v_p_piecewise(p)
    gs = V.symbols
    basis = _helmert(p)
    m = p - 1
    if m == 1:
        vals = []
        for sgn in (1, -1):
            eta = sgn * basis[0]
            vals.append(V.expr.subs({gs[0]: eta[1] - eta[0]}))
        avg = sum(vals) / 2
        rel = sp.Eq(sp.Symbol("E[V_2]"), sp.Rational(1, 2) * sum(vals))
    else:
        ph = sp.Symbol("phi", real=True)
        eta = sp.cos(ph) * basis[0] + sp.sin(ph) * basis[1]
        gph = {g: sp.expand(eta[j + 1] - eta[0]) for j, g in enumerate(gs)}    # a cos + b sin
        # edges: zeros in phi of every linear form in the conditions
        angles = set()
        for rel_ in V.expr.atoms(sp.core.relational.Relational):
            form = sp.expand((rel_.lhs - rel_.rhs).subs(gph))
            a, b = form.coeff(sp.cos(ph)), form.coeff(sp.sin(ph))
            if a == 0 and b == 0:
                continue
            base = sp.atan2(-a, b)              # a cos + b sin = 0
            for k in range(-2, 3):
                ang = sp.simplify(base + k * sp.pi)
                if 0 <= float(ang) < 2 * math.pi:
                    angles.add(ang)
        edges = sorted(angles, key=float)
        edges.append(edges[0] + 2 * sp.pi)
        total = sp.S.Zero
        for lo, hi in zip(edges[:-1], edges[1:]):
            mid = (float(lo) + float(hi)) / 2
            point = {g: float(e.subs(ph, mid)) for g, e in gph.items()}
            piece = _piece_at(V.expr, point)
            total += sp.integrate(sp.expand(sp.expand_trig(piece.subs(gph))), (ph, lo, hi))
        avg = sp.simplify(total / (2 * sp.pi))
        rel = sp.Eq(sp.Symbol(f"E[V_{p}]"), m * sp.Integral(V.expr.subs(gph), (ph, 0, 2 * sp.pi))
                    / (2 * sp.pi))
    return Formula(sp.nsimplify(sp.simplify(m * avg)), (), f"E[V_{p}]", (rel,))


def finite_capacity(p=None, *, kappa=1):
    r"""Return the finite-``p`` replica-symmetric capacity :math:`\alpha_c(\kappa, p) = \alpha_c(\kappa) \ln p / E[V_p]`.

    Parameters
    ----------
    p : int or None, optional
        ``None`` (default): ``p`` and ``E_V = E[V_p]`` stay symbols.  ``2`` or
        ``3``: the exact ``E[V_p]`` of :func:`expected_v_p` is inserted.  Another
        integer ``>= 2``: ``p`` is inserted and ``E_V`` stays a symbol.
    kappa : number, str or sympy expression, optional
        Rank fraction in ``(0, 1]`` (default 1, full rank, where
        ``alpha_c(1) = 1/2``); ``"symbolic"`` keeps the symbol ``kappa`` with
        the closed form of :func:`~replica.symbolic.alpha_c_closed_form`.

    Returns
    -------
    Formula
        The capacity in the remaining symbols, ``(p, E_V)`` in general and
        ``()`` at ``p = 2, 3`` and full rank; ``relations`` holds the ``q -> 1``
        coefficient whose root it is.  Numerically it agrees with
        :func:`replica.alpha_c_finite` (within its standard error at
        ``p = 2, 3``).

    See Also
    --------
    replica.alpha_c_finite : The same capacity, numerically, for any ``p``.
    replica.symbolic.expected_v_p : The exact :math:`E[V_p]` for small ``p``.

    Notes
    -----
    Near :math:`q \to 1`, :math:`G_p(q) \sim -E[V_p]/(\ln p\, (1-q))` (:func:`energy_term`,
    ``"finite-p"``) and the entropic term is :math:`c_S(\kappa)/(1-q)` with
    :math:`c_S = \alpha_c(\kappa)` (1/2 at full rank, where the full entropic term
    is used), so :math:`(1 - q) \Phi \to c_S - \alpha E[V_p]/\ln p`; the capacity is
    its root in :math:`\alpha`.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#finite-p-capacity;
    docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories

    Examples
    --------
    >>> finite_capacity().expr
    log(p)/(2*E_V)
    >>> finite_capacity(2).expr, finite_capacity(3).expr
    (2*log(2), 6*log(3)/5)
    >>> round(finite_capacity(3)(), 6)
    1.318335
    """
    from hcizz.checks import check_int

    from .rank_constrained import alpha_c_closed_form

    kap = SYMBOLS["kappa"]
    Gp = -_EV / (sp.log(_p) * (1 - _q))            # leading q -> 1 part of G_p
    if isinstance(kappa, str) and kappa == "symbolic":
        cS = alpha_c_closed_form().expr
        ent = cS / (1 - _q)
    else:
        k = sp.nsimplify(kappa) if isinstance(kappa, (int, float, str)) else sp.sympify(kappa)
        if not (k.is_number and 0 < k <= 1):
            raise ValueError(f"kappa must be a number in (0, 1] or 'symbolic', got {kappa!r}")
        if k == 1:
            ent = sp.log(1 - _q) / 2 + _q / (2 * (1 - _q))
        else:
            ent = alpha_c_closed_form().expr.subs(kap, k) / (1 - _q)
    coef = sp.simplify(limit((1 - _q) * (ent + _a * Gp), _q, 1, dir="-"))
    roots = sp.solve(sp.Eq(coef, 0), _a)
    if len(roots) != 1:                           # pragma: no cover - linear in alpha
        raise SymbolicUndecided(f"coefficient {coef} has roots {roots}", roots)
    expr = sp.simplify(roots[0])
    rel = [sp.Eq(sp.Symbol("lim_{q->1} (1-q) Phi"), coef)]
    if p is not None:
        p = check_int("p", p, low=2)
        expr = expr.subs(_p, p)
        if p in (2, 3):
            ev = expected_v_p(p).expr
            rel.append(sp.Eq(_EV, ev))
            expr = sp.expand_log(sp.simplify(expr.subs(_EV, ev)), force=True)
    syms = tuple(s for s in (kap, _p, _EV) if s in expr.free_symbols)
    return Formula(expr, syms, "alpha_c(kappa, p)", tuple(rel))


# ---------------------------------------------------------------------------
# Hebbian rule

@fill_doc
def hebbian_signal_to_noise(form="finite", *, exact_moments=False):
    r"""Return the Hebbian signal-to-noise ratio :math:`m`: :math:`d/\sqrt{p + 2d}`, or :math:`\sqrt{\ln p / \alpha}` at large ``p``.

    Parameters
    ----------
    form : {"finite", "large-p"}, optional
        ``"finite"`` (default): ``m(d, p)``.  ``"large-p"``: its limit as
        ``p -> oo`` at fixed load ``alpha = p L/d^2`` (``L = ln p``), derived
        with :func:`~replica.symbolic.limit`.
    exact_moments : bool, optional
        ``"finite"`` only: the exact moments, ``m = d/sqrt(p + 2 + 2d)``,
        instead of the independent-Gaussian model's.

    Returns
    -------
    Formula
        ``m`` in ``(d, p)`` or ``(L, alpha)``; agrees with the first value of
        :func:`replica.hebbian_score_moments`.

    Raises
    ------
    ValueError
        If ``form`` is not one of the two names.

    See Also
    --------
    replica.hebbian_score_moments : The same ratio, numerically.
    replica.symbolic.hebbian_score_spread : The spread of the correct score.

    %(refs_paper_independent_gaussian)s

    Examples
    --------
    >>> hebbian_signal_to_noise().expr, hebbian_signal_to_noise("large-p").expr
    (d/sqrt(2*d + p), sqrt(L)/sqrt(alpha))
    >>> round(hebbian_signal_to_noise()(100, 50), 12)
    6.324555320337
    """
    extra = 2 if exact_moments else 0
    m = _d / sp.sqrt(_p + extra + 2 * _d)
    if form == "finite":
        return Formula(m, (_d, _p), "Hebbian m(d, p)" + (", exact moments" if exact_moments else ""))
    if form != "large-p":
        raise ValueError(f"form must be 'finite' or 'large-p', got {form!r}")
    a = sp.Symbol("alpha", positive=True)
    m2 = sp.simplify((m ** 2).subs(_d, sp.sqrt(_p * _L / a)))
    lim = limit(m2, _p, sp.oo)
    m_large = sp.sqrt(lim.subs(a, _a))
    return Formula(m_large, (_L, _a), "Hebbian m, large p",
                   (sp.Eq(_a, _p * _L / _d ** 2), sp.Eq(sp.Symbol("m^2"), lim.subs(a, _a))))


def hebbian_score_spread(*, exact_moments=False):
    r"""Return the spread :math:`s = \sqrt{(p + 4d)/(p + 2d)}` of the correct Hebbian score.

    Parameters
    ----------
    exact_moments : bool, optional
        Use the exact moments, ``s^2 = (p + 3 + 4d)/(p + 2 + 2d)``.

    Returns
    -------
    Formula
        ``s`` in ``(d, p)``, in units of the competitors' standard deviation;
        agrees with the second value of :func:`replica.hebbian_score_moments`.

    See Also
    --------
    replica.hebbian_score_moments : The same spread, numerically.
    replica.symbolic.hebbian_signal_to_noise : The mean of the correct score.

    References
    ----------
    docs/theory_full_rank.md#independent-gaussian-model

    Examples
    --------
    >>> hebbian_score_spread().expr
    sqrt(4*d + p)/sqrt(2*d + p)
    """
    if exact_moments:
        s = sp.sqrt(_p + 3 + 4 * _d) / sp.sqrt(_p + 2 + 2 * _d)
    else:
        s = sp.sqrt(_p + 4 * _d) / sp.sqrt(_p + 2 * _d)
    return Formula(s, (_d, _p), "Hebbian s(d, p)")


@fill_doc
def hebbian_load_threshold(all_facts=True):
    r"""Return the large-``d`` Hebbian capacity: ``1/8`` (all facts recalled) or ``1/2`` (one fact).

    Parameters
    ----------
    all_facts : bool, optional
        ``True`` (default): all ``p`` facts, the worst correct score
        ``m - sqrt(2 ln p)`` must beat the best competitor ``sqrt(2 ln p)``;
        ``False``: one typical fact, ``m > sqrt(2 ln p)``.

    Returns
    -------
    Formula
        The load (no symbols); ``relations`` holds the equation in
        ``(L, alpha)`` it solves, with ``m`` from
        :func:`hebbian_signal_to_noise` (``"large-p"``).

    Raises
    ------
    SymbolicUndecided
        If sympy does not find exactly one root.

    See Also
    --------
    replica.hebbian_threshold : The finite-``d`` threshold, numerically.
    replica.symbolic.hebbian_signal_to_noise : The ratio whose extreme-value balance gives 1/8.

    %(refs_paper_independent_gaussian)s

    Examples
    --------
    >>> hebbian_load_threshold().expr, hebbian_load_threshold(all_facts=False).expr
    (1/8, 1/2)
    """
    m = hebbian_signal_to_noise("large-p").expr
    edge = sp.sqrt(2 * _L)
    eq = sp.Eq(m - edge, edge) if all_facts else sp.Eq(m, edge)
    roots = sp.solve(eq, _a)
    if len(roots) != 1:                           # pragma: no cover - sympy regression guard
        raise SymbolicUndecided(f"{eq} has roots {roots}", roots)
    return Formula(roots[0], (), "Hebbian alpha_H" + ("" if all_facts else ", single fact"), (eq,))


# ---------------------------------------------------------------------------
# checks (python -m replica check)

def check_saddle():
    """q* = 2 alpha solves dPhi/dq = 0, is a minimum, and phi = 1/2 ln(1 - 2 alpha)."""
    Phi = free_entropy_functional()
    eq = saddle_point_equation()
    sols = sp.solve(eq.expr, _q)
    if len(sols) != 1 or not _zero(sols[0] - 2 * _a):
        return False, f"stationary points {sols}, expected [2*alpha]"
    s = saddle_point()
    curv = sp.simplify(sp.diff(Phi.expr, _q, 2).subs(_q, 2 * _a))
    # curvature 1/(2 (1 - 2 alpha)^2) > 0 on [0, 1/2)
    if not (_zero(curv - 1 / (2 * (1 - 2 * _a) ** 2)) and _zero(s.curvature.expr - curv)):
        return False, f"Phi''(q*) = {curv}, saddle_point(): {s.curvature.expr}"
    phi = sp.simplify(Phi.expr.subs(_q, 2 * _a))
    ok = _zero(sp.expand_log(phi - sp.log(1 - 2 * _a) / 2, force=True)) and \
        _zero(s.q_star.expr - 2 * _a) and _zero(sp.expand_log(s.phi.expr - phi, force=True))
    return ok, f"dPhi/dq = 0 -> q* = {sols[0]}; Phi''(q*) = {curv} > 0; phi = {s.phi.expr}"


def check_alpha_c():
    """alpha_c = 1/2: phi(alpha) -> -inf as alpha -> 1/2-, and (1-q) Phi -> 1/2 - alpha as q -> 1."""
    s = saddle_point()
    lim = limit(s.phi, "alpha", sp.Rational(1, 2), dir="-")
    coef = limit((1 - _q) * free_entropy_functional().expr, _q, 1, dir="-")
    root = sp.solve(sp.Eq(coef, 0), _a)
    ok = lim == -sp.oo and _zero(coef - (sp.Rational(1, 2) - _a)) and root == [sp.Rational(1, 2)] \
        and s.alpha_c == sp.Rational(1, 2)
    return ok, f"lim phi = {lim}; lim_(q->1) (1-q) Phi = {coef}, vanishes at alpha = {root}"


def check_energy_limit():
    """Large p: G(t) = -1/(1-t) from the counting argument, G(0) = -1 and (1 - t) G(t) -> -1 as t -> 1."""
    G = energy_term()
    at0 = G.expr.subs(_t, 0)
    lim = limit((1 - _t) * G.expr, _t, 1, dir="-")
    ystar = G.relations[0].rhs
    ok = _zero(G.expr + 1 / (1 - _t)) and at0 == -1 and lim == -1 and _zero(ystar - sp.sqrt(_t))
    return ok, (f"s_min^2 = max_y (beta y + sqrt(1-y^2))^2 at y* = {ystar}: G(t) = {G.expr}; "
                f"G(0) = {at0}; lim_(t->1-) (1-t) G(t) = {lim}")


def check_ev2():
    """E[V_2] = 1/4 (so p_c/d^2 = 1/(2 E V_2) = 2 and alpha_c(2) = 2 ln 2)."""
    obj = v_p_objective(2)
    x, g = obj.symbols
    active = obj.expr.subs(sp.Max(0, g - x), g - x)          # g > 0 active branch, x < g
    xs = sp.solve(sp.diff(active, x), x)[0]
    V = sp.simplify(active.subs(x, xs))                       # g^2/4 for g > 0; V = 0 for g <= 0
    Vp = v_p_piecewise(2)
    piece_ok = _zero(Vp.expr.subs(Vp.symbols[0], 3) - V.subs(g, 3)) and Vp.expr.subs(Vp.symbols[0], -1) == 0
    # g = eta_2 - eta_1 ~ N(0, 2): direct integral, against the sphere average of expected_v_p
    dens = sp.exp(-g ** 2 / 4) / sp.sqrt(4 * sp.pi)
    EV = sp.simplify(sp.integrate(V * dens, (g, 0, sp.oo)))
    fc = finite_capacity(2)
    pc = sp.simplify(1 / (2 * EV))
    ok = _zero(xs - g / 2) and _zero(V - g ** 2 / 4) and _zero(EV - sp.Rational(1, 4)) \
        and expected_v_p(2).expr == EV and pc == 2 and _zero(fc.expr - 2 * sp.log(2)) and piece_ok
    return ok, f"x* = {xs}, V_2 = {V} (g>0), E[V_2] = {EV}, p_c/d^2 = {pc}, alpha_c(2) = {fc.expr}"


def check_ev3():
    """E[V_3] = 5/12 (sector integrals on the circle), so alpha_c(3) = 6 ln 3 / 5 and p_c/d^2 = 6/5."""
    Vp = v_p_piecewise(3)
    g2, g3 = Vp.symbols
    # the two-active piece: x* = (g2 + g3)/3 and V = (g2^2 - g2 g3 + g3^2)/3
    obj = v_p_objective(3)
    x = obj.symbols[0]
    both = obj.expr.subs({sp.Max(0, g2 - x): g2 - x, sp.Max(0, g3 - x): g3 - x})
    xs = sp.solve(sp.diff(both, x), x)[0]
    V2 = sp.expand(both.subs(x, xs))
    pt = {g2: 2, g3: 1.5}                                     # both active: 1.5 > 2/2
    ok = _zero(xs - (g2 + g3) / 3) and _zero(V2 - (g2 ** 2 - g2 * g3 + g3 ** 2) / 3) and \
        abs(float(Vp.expr.subs(pt)) - float(V2.subs(pt))) < 1e-15
    EV = expected_v_p(3).expr
    ac = finite_capacity(3).expr
    ok = ok and EV == sp.Rational(5, 12) and _zero(ac - 6 * sp.log(3) / 5) and \
        _zero(sp.Rational(1, 2) / EV - sp.Rational(6, 5))
    return ok, f"x* = {xs} (both active), E[V_3] = {EV}, alpha_c(3) = {ac}, p_c/d^2 = {sp.Rational(1, 2) / EV}"


def _phi_n(z):
    return sp.exp(-z ** 2 / 2) / sp.sqrt(2 * sp.pi)


def _Phi_n(z):
    return (1 + sp.erf(z / sp.sqrt(2))) / 2


def check_fp0():
    """f_p(0) = Int Dxi Phi(xi)^(p-1) = 1/p: d/dxi [Phi^p / p] = phi Phi^(p-1), limits 1/p and 0."""
    xi, P = sp.Symbol("xi", real=True), _p
    F = _Phi_n(xi) ** P / P
    deriv_ok = _zero(sp.diff(F, xi) - _phi_n(xi) * _Phi_n(xi) ** (P - 1))
    top = limit(F, xi, sp.oo)
    bottom = limit(_Phi_n(xi), xi, -sp.oo)        # Phi(-inf) = 0, so F(-inf) = 0 for p > 0
    G0 = energy_term("finite-p").relations[0].rhs
    ok = deriv_ok and _zero(top - 1 / P) and bottom == 0 and G0 == -1
    return ok, f"antiderivative Phi^p/p verified; F(+inf) = {top}, Phi(-inf) = {bottom} => f_p(0) = 1/p, G_p(0) = -1"


def check_f2():
    """p = 2: Int Dxi Phi(xi + c) = Phi(c/sqrt 2) (derivative in c and value at c = 0)."""
    xi, c = sp.symbols("xi c", real=True)
    d_lhs = sp.simplify(sp.integrate(_phi_n(xi) * _phi_n(xi + c), (xi, -sp.oo, sp.oo)))
    d_rhs = sp.diff(_Phi_n(c / sp.sqrt(2)), c)
    at0 = sp.integrate(_phi_n(xi) * _Phi_n(xi), (xi, -sp.oo, sp.oo))
    ok = _zero(d_lhs - d_rhs) and _zero(at0 - sp.Rational(1, 2)) and \
        _zero(_Phi_n(0) - sp.Rational(1, 2))
    return ok, f"d/dc LHS = {d_lhs} = d/dc Phi(c/sqrt2); both 1/2 at c = 0 => f_2 = Phi(beta(eta1-eta2)/sqrt2)"


def check_hebbian():
    """Hebbian 1/8: m = d/sqrt(p + 2d) -> sqrt(ln p/alpha); m - sqrt(2 ln p) = sqrt(2 ln p) at alpha = 1/8."""
    m_large = hebbian_signal_to_noise("large-p")
    m2 = m_large.relations[1].rhs
    aH = hebbian_load_threshold().expr
    single = hebbian_load_threshold(all_facts=False).expr
    ok = _zero(m2 - _L / _a) and _zero(m_large.expr - sp.sqrt(_L / _a)) and \
        aH == sp.Rational(1, 8) and single == sp.Rational(1, 2)
    return ok, (f"m^2 -> {m2}; all facts: m - sqrt(2 ln p) = sqrt(2 ln p) => alpha_H = [{aH}]; "
                f"single fact: m = sqrt(2 ln p) => alpha = [{single}]")


#: ``(name, callable)`` pairs run by :func:`replica.symbolic.run_checks`.
CHECKS = [
    ("saddle: q* = 2 alpha, phi = 1/2 ln(1 - 2 alpha)", check_saddle),
    ("capacity: alpha_c = 1/2", check_alpha_c),
    ("large-p energy: (1 - t) G(t) -> -1 as t -> 1 (G = -1/(1-t))", check_energy_limit),
    ("finite p = 2: E[V_2] = 1/4, p_c/d^2 = 2", check_ev2),
    ("finite p = 3: E[V_3] = 5/12, alpha_c(3) = 6 ln 3 / 5", check_ev3),
    ("f_p(0) = 1/p (G_p(0) = -1)", check_fp0),
    ("p = 2 closed form f_2 = Phi(c/sqrt 2)", check_f2),
    ("Hebbian: alpha_H = 1/8 (single fact 1/2)", check_hebbian),
]
