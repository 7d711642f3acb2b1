r"""Symbolic objects of the rank-constrained memory (docs/rank_constrained.md) and their checks.

Public functions return :class:`~replica.symbolic.Formula` objects: the
quarter-circle density and moments, the capacity ``alpha_c(kappa)`` as an
integral over the quarter-circle quantile, in closed form through
``y - sin y = pi kappa`` and as a parametric curve, its small-``kappa`` series
to any order, and the ``mp_product`` cubic with its moments and edges.

``CHECKS`` lists the derivations run by ``python -m replica check``: the
quarter-circle normalisation and Catalan moments; the closed form equals
``1/2 Int_{1-kappa}^1 X_qc^2`` (derivative in kappa and boundary values); the
small-``kappa`` expansion by three routes (undetermined coefficients, Puiseux
composition, Lagrange-Bürmann) and against :func:`replica.alpha_c` to its
order; the Fuss-Catalan moments of ``mp_product(1)``; the moment formula and
edges of ``mp_product(kappa)``.
"""
from __future__ import annotations

import sympy as sp

from .formula import SYMBOLS, Formula
from .functions import CapacityAngle, QCQuantile, alpha_c_coefficients
from .._docparams import fill_doc

__all__ = ["quarter_circle_density", "quarter_circle_moment", "alpha_c_integral",
           "alpha_c_closed_form", "alpha_c_parametric", "alpha_c_series", "mp_product_cubic",
           "mp_product_moment_series", "mp_product_edges", "CHECKS"]

_k, _s, _u, _y = SYMBOLS["kappa"], SYMBOLS["s"], SYMBOLS["u"], SYMBOLS["y"]
_th, _z, _psi, _x = SYMBOLS["theta"], SYMBOLS["z"], SYMBOLS["psi"], SYMBOLS["x"]


def _zero(expr):
    return sp.simplify(expr) == 0


def _check_order(name, n, high=100):
    from hcizz.checks import check_int

    return check_int(name, n, low=1, high=high)


# ---------------------------------------------------------------------------
# quarter circle

@fill_doc
def quarter_circle_density():
    r"""Return the quarter-circle density :math:`\rho_{qc}(s) = \sqrt{4 - s^2}/\pi` on :math:`[0, 2]`.

    Returns
    -------
    Formula
        ``rho_qc`` in ``s``; ``relations``: ``0 <= s <= 2`` and the CDF in the
        angle, ``F(2 sin theta) = (2 theta + sin 2 theta)/pi``.

    See Also
    --------
    hcizz.quarter_circle.QuarterCircle : The law, numerically.
    replica.symbolic.quarter_circle_moment : Its moments.

    %(refs_quarter_circle)s

    Examples
    --------
    >>> rho = quarter_circle_density()
    >>> rho.expr, sp.integrate(rho.expr, (rho.symbols[0], 0, 2))
    (sqrt(4 - s**2)/pi, 1)
    """
    cdf = sp.Eq(sp.Function("F")(2 * sp.sin(_th)), (2 * _th + sp.sin(2 * _th)) / sp.pi)
    return Formula(sp.sqrt(4 - _s ** 2) / sp.pi, (_s,), "rho_qc(s)", (sp.And(_s >= 0, _s <= 2), cdf))


@fill_doc
def quarter_circle_moment(k):
    r"""Return the moment :math:`\int_0^2 s^k \rho_{qc}(s)\, ds` exactly (even :math:`k`: the Catalan number :math:`C_{k/2}`).

    Parameters
    ----------
    k : int
        Order, ``0 <= k <= 40``.

    Returns
    -------
    sympy.Expr
        The moment, integrated by sympy after ``s = 2 sin t`` (the density
        becomes ``(2 cos t)^2/pi``).

    See Also
    --------
    hcizz.qc_moment : The moments numerically (also truncated).
    replica.symbolic.quarter_circle_density : The density integrated.

    %(refs_quarter_circle)s

    Examples
    --------
    >>> [quarter_circle_moment(k) for k in (0, 1, 2, 4)]
    [1, 8/(3*pi), 1, 2]
    """
    from hcizz.checks import check_int

    k = check_int("k", k, low=0, high=40)
    t = sp.Symbol("t", positive=True)
    integrand = sp.expand(sp.fu((2 * sp.sin(t)) ** k * (2 * sp.cos(t)) ** 2 / sp.pi))
    return sp.simplify(sp.integrate(integrand, (t, 0, sp.pi / 2)))


# ---------------------------------------------------------------------------
# capacity alpha_c(kappa)

def alpha_c_integral():
    r"""Return :math:`\alpha_c(\kappa) = \frac12 \int_{1-\kappa}^1 X_{qc}(u)^2\, du`, an integral over the quarter-circle quantile.

    Returns
    -------
    Formula
        The unevaluated ``sympy.Integral`` in ``kappa``
        (:class:`~replica.symbolic.functions.QCQuantile` is ``X_qc``);
        ``sympy.diff`` gives ``X_qc(1 - kappa)^2/2``, :meth:`Formula.evalf`
        does the integral by mpmath quadrature and :meth:`Formula.numeric` by
        ``scipy.integrate.quad`` (scalar ``kappa``).

    See Also
    --------
    replica.symbolic.alpha_c_closed_form : Its closed form.
    replica.alpha_c : The capacity, numerically.

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#rank-constrained-capacity

    Examples
    --------
    >>> A = alpha_c_integral()
    >>> A.expr
    Integral(QCQuantile(u)**2, (u, 1 - kappa, 1))/2
    >>> sp.diff(A.expr, A.symbols[0])
    QCQuantile(1 - kappa)**2/2
    >>> A.evalf("1/2", dps=15)
    0.446865396939027
    """
    return Formula(sp.Integral(QCQuantile(_u) ** 2, (_u, 1 - _k, 1)) / 2, (_k,),
                   "alpha_c(kappa), quantile integral", (sp.And(_k > 0, _k <= 1),))


@fill_doc
def alpha_c_closed_form():
    r"""Return :math:`\alpha_c(\kappa) = (2y - \sin 2y)/(4 \pi)` with :math:`y - \sin y = \pi \kappa`.

    Returns
    -------
    Formula
        The closed form in ``kappa``, through
        :class:`~replica.symbolic.functions.CapacityAngle` ``y(kappa)``;
        ``relations`` holds the equation defining ``y``.  It differentiates
        (``d alpha_c/d kappa = 1 + cos y``), expands at ``kappa -> 0+``
        (Puiseux series) and evaluates numerically in agreement with
        :func:`replica.alpha_c`.

    See Also
    --------
    replica.alpha_c : The same closed form, vectorised in floats or mpmath.
    replica.symbolic.alpha_c_integral : The integral it evaluates.
    replica.symbolic.alpha_c_parametric : The curve in the angle :math:`y`.

    Notes
    -----
    With :math:`y = \pi - 2 \theta_\kappa` this is
    :math:`1/2 - (\theta_\kappa - \sin(4 \theta_\kappa)/4)/\pi`.

    %(refs_closed_form)s

    Examples
    --------
    >>> A = alpha_c_closed_form()
    >>> A.expr
    (-sin(2*CapacityAngle(kappa)) + 2*CapacityAngle(kappa))/(4*pi)
    >>> round(A(0.5), 12), A.expr.subs(A.symbols[0], 1)
    (0.446865396939, 1/2)
    """
    y = CapacityAngle(_k)
    return Formula((2 * y - sp.sin(2 * y)) / (4 * sp.pi), (_k,), "alpha_c(kappa), closed form",
                   (sp.Eq(y - sp.sin(y), sp.pi * _k), sp.And(_k > 0, _k <= 1)))


@fill_doc
def alpha_c_parametric():
    r"""Return the capacity curve in the angle :math:`y`: :math:`\alpha_c = (2y - \sin 2y)/(4 \pi)`, :math:`\kappa = (y - \sin y)/\pi`.

    Returns
    -------
    Formula
        ``alpha_c`` in ``y in [0, pi]``; ``relations[0]`` is
        ``Eq(kappa, (y - sin y)/pi)``.

    See Also
    --------
    replica.symbolic.alpha_c_closed_form : The capacity as a function of :math:`\kappa`.
    replica.symbolic.CapacityAngle : The angle :math:`y(\kappa)`.

    %(refs_closed_form)s

    Examples
    --------
    >>> A = alpha_c_parametric()
    >>> y, = A.symbols
    >>> sp.simplify(sp.expand_trig(sp.diff(A.expr, y) / sp.diff(A.relations[0].rhs, y)))
    cos(y) + 1
    """
    return Formula((2 * _y - sp.sin(2 * _y)) / (4 * sp.pi), (_y,), "alpha_c(y)",
                   (sp.Eq(_k, (_y - sp.sin(_y)) / sp.pi), sp.And(_y >= 0, _y <= sp.pi)))


@fill_doc
def alpha_c_series(order=2):
    r"""Return the small-``kappa`` expansion of :math:`\alpha_c(\kappa)` to ``order`` terms, with exact coefficients.

    Parameters
    ----------
    order : int, optional
        Number of terms, ``1 <= order <= 100`` (default 2:
        ``2 kappa - (6 pi kappa)^(5/3)/(20 pi)``, as
        :func:`replica.alpha_c_small_kappa`).

    Returns
    -------
    Formula
        ``sum_{k < order} c_k (6 pi)^((2k+3)/3) kappa^((2k+3)/3) / pi`` in
        ``kappa``; ``remainder`` ``O(kappa^((2 order + 3)/3))``; ``relations``:
        ``w = (6 pi kappa)^(1/3)`` and ``pi alpha_c = sum c_k w^(2k+3)`` with the
        rational ``c_k`` of
        :func:`~replica.symbolic.functions.alpha_c_coefficients`.

    See Also
    --------
    replica.alpha_c_small_kappa : The expansion to second order, numerically.
    replica.symbolic.functions.alpha_c_coefficients : Its coefficients.

    Notes
    -----
    Only odd powers of :math:`w` occur (:math:`y` and :math:`2y - \sin 2y` are odd), so
    the exponents of :math:`\kappa` are :math:`1, 5/3, 7/3, 3, 11/3, \dots`.  The coefficients
    come from Lagrange-Bürmann inversion; ``python -m replica check`` compares
    them with the expansion of :func:`alpha_c_closed_form` by ``sympy.series``
    and with :func:`replica.alpha_c` at small ``kappa``.

    %(refs_small_kappa)s

    Examples
    --------
    >>> S = alpha_c_series(3)
    >>> S.expr
    9*6**(1/3)*pi**(4/3)*kappa**(7/3)/140 - 3*6**(2/3)*pi**(2/3)*kappa**(5/3)/10 + 2*kappa
    >>> S.remainder
    O(kappa**3)
    >>> import replica
    >>> r = float(replica.alpha_c(1e-4)) - S(1e-4)           # the remainder is the next term
    >>> nxt = (alpha_c_series(4).expr - S.expr).subs(S.symbols[0], sp.Rational(1, 10**4))
    >>> f"{r:.3e} {float(nxt):.3e}"
    '6.348e-14 6.345e-14'
    """
    order = _check_order("order", order)
    c = alpha_c_coefficients(order)
    expr = sum(ck * (6 * sp.pi) ** sp.Rational(2 * k + 3, 3) / sp.pi * _k ** sp.Rational(2 * k + 3, 3)
               for k, ck in enumerate(c))
    w = sp.Symbol("w", positive=True)
    rel = (sp.Eq(w, sp.cbrt(6 * sp.pi * _k)),
           sp.Eq(sp.pi * sp.Symbol("alpha_c"), sum(ck * w ** (2 * k + 3) for k, ck in enumerate(c))))
    return Formula(expr, (_k,), f"alpha_c(kappa), {order} terms at kappa -> 0", rel,
                   sp.Order(_k ** sp.Rational(2 * order + 3, 3), (_k, 0)))


# ---------------------------------------------------------------------------
# mp_product: the nonzero squared singular values of Q R^T / sqrt(d m)

@fill_doc
def mp_product_cubic():
    r"""Return the cubic :math:`(1 + \psi)(1 + \kappa \psi)^2 - \kappa x \psi` of the ``mp_product`` law.

    Returns
    -------
    Formula
        The polynomial in ``(psi, x, kappa)``; its root ``psi = x G(x) - 1``
        (``G`` the Stieltjes transform) is the moment generating function
        ``sum_n m_n x^-n`` (from the S-transform ``kappa/(1 + kappa w)^2``).

    See Also
    --------
    hcizz.mp_product : The law, numerically.
    replica.symbolic.mp_product_moment_series : Its moments from this cubic.
    replica.symbolic.mp_product_edges : Its support edges.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> mp_product_cubic().expr
    -kappa*psi*x + (psi + 1)*(kappa*psi + 1)**2
    """
    return Formula((1 + _psi) * (1 + _k * _psi) ** 2 - _k * _x * _psi, (_psi, _x, _k),
                   "mp_product cubic")


@fill_doc
def mp_product_moment_series(order, kappa="symbolic"):
    r"""Return the moment series :math:`\psi(z) = \sum_{n=1}^{order} m_n z^n` of ``mp_product(kappa)``, :math:`z = 1/x`.

    Parameters
    ----------
    order : int
        Highest moment, ``1 <= order <= 12``.
    kappa : "symbolic" or number, optional
        Rank fraction; ``"symbolic"`` (default) keeps the symbol.

    Returns
    -------
    Formula
        The truncated series in ``z`` (and ``kappa``), ``remainder``
        ``O(z^(order + 1))``; at ``kappa = 1`` the Fuss-Catalan numbers
        ``binom(3n, n)/(2n + 1)``.

    See Also
    --------
    hcizz.mp_product_moment : The moments, numerically.
    replica.symbolic.mp_product_cubic : The cubic solved.

    Notes
    -----
    :func:`mp_product_cubic` at ``x = 1/z`` is the fixed point
    ``psi = z (1 + psi)(1 + kappa psi)^2 / kappa``, iterated on truncated
    series (each iteration fixes one more coefficient).

    %(refs_spectral_laws)s

    Examples
    --------
    >>> mp_product_moment_series(4, kappa=1).expr
    55*z**4 + 12*z**3 + 3*z**2 + z
    """
    order = _check_order("order", order, high=12)
    k = _k if (isinstance(kappa, str) and kappa == "symbolic") else sp.nsimplify(kappa)
    cubic = mp_product_cubic().expr.subs({_k: k, _x: 1 / _z})
    # P(psi; 1/z) = 0  <=>  psi = z (1 + psi)(1 + k psi)^2 / k
    fixed = sp.expand((cubic + k * _psi / _z) * _z / k)
    psi = sp.Integer(0)
    for _ in range(order + 1):        # a polynomial in z: truncate after z^order
        full = sp.Poly(sp.expand(fixed.subs(_psi, psi)), _z)
        psi = sum(c * _z ** e for (e,), c in full.terms() if e <= order)
    syms = (_z, _k) if k == _k else (_z,)
    return Formula(psi, syms, f"mp_product moments up to {order}", (), sp.Order(_z ** (order + 1)))


@fill_doc
def mp_product_edges():
    r"""Return the support edges :math:`x_-, x_+` of ``mp_product(kappa)``.

    Returns
    -------
    Formula
        ``Tuple(x_-, x_+)`` in ``kappa``,
        ``x_(+-) = (8 + 20 kappa - kappa^2 +- (kappa + 8) sqrt(kappa (kappa + 8)))/(8 kappa)``;
        the discriminant of :func:`mp_product_cubic` in ``psi`` is
        ``4 kappa^5 x (x - x_-)(x - x_+)`` (a check).

    See Also
    --------
    hcizz.mp_product_edges : The edges, numerically.
    replica.symbolic.mp_product_cubic : The cubic whose discriminant gives them.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> E = mp_product_edges()
    >>> E.expr.subs(E.symbols[0], 1)
    (0, 27/4)
    """
    root = (_k + 8) * sp.sqrt(_k * (_k + 8))
    base = 8 + 20 * _k - _k ** 2
    return Formula(sp.Tuple(sp.simplify((base - root) / (8 * _k)), sp.simplify((base + root) / (8 * _k))),
                   (_k,), "mp_product edges")


# ---------------------------------------------------------------------------
# checks

def check_qc_moments():
    rho = quarter_circle_density()
    t = sp.symbols("t", positive=True)
    # s = 2 sin t maps [0, pi/2] onto [0, 2]; rho(s) ds = (2 cos t)^2 / pi dt
    dens = sp.simplify(rho.expr.subs(rho.symbols[0], 2 * sp.sin(t)) * 2 * sp.cos(t))
    norm = sp.integrate(sp.expand(sp.fu(dens)), (t, 0, sp.pi / 2))
    ok = _zero(norm - 1) and quarter_circle_moment(0) == 1
    got = []
    for k in range(1, 5):
        m = quarter_circle_moment(2 * k)
        got.append(m)
        ok &= _zero(m - sp.catalan(k))
    return ok, f"norm={norm}, even moments={got} (Catalan 1, 2, 5, 14)"


def check_alpha_c_closed_form():
    A = alpha_c_closed_form()
    I = alpha_c_integral()
    P = alpha_c_parametric()
    # d/dkappa of the closed form must be X_qc(1 - kappa)^2 / 2 (Leibniz on the integral)
    d_closed = sp.diff(A.expr, _k)
    d_int = sp.diff(I.expr, _k).rewrite(CapacityAngle)
    ok1 = _zero(sp.trigsimp(sp.simplify(d_closed - d_int)))
    # the same in the angle theta: kappa = 1 - (2 theta + sin 2 theta)/pi, y = pi - 2 theta
    closed_th = P.expr.subs(_y, sp.pi - 2 * _th)
    kappa_th = P.relations[0].rhs.subs(_y, sp.pi - 2 * _th)
    ok1 &= _zero(sp.expand_trig(closed_th - (sp.Rational(1, 2) - (_th - sp.sin(4 * _th) / 4) / sp.pi)))
    ok1 &= _zero(kappa_th - (1 - (2 * _th + sp.sin(2 * _th)) / sp.pi))
    dalpha = sp.diff(closed_th, _th) / sp.diff(kappa_th, _th)
    ok1 &= _zero(sp.simplify(sp.expand_trig(dalpha - 2 * sp.sin(_th) ** 2)))
    # boundary: kappa -> 0 (theta = pi/2, y = 0) where alpha vanishes; kappa = 1 (theta = 0) -> 1/2
    ok2 = _zero(A.expr.subs(_k, 0)) and _zero(closed_th.subs(_th, sp.pi / 2)) and \
        _zero(kappa_th.subs(_th, sp.pi / 2)) and I.expr.subs(_k, 0).doit() == 0
    # the integral at kappa = 1 is half the quarter-circle second moment
    ok3 = _zero(A.expr.subs(_k, 1) - sp.Rational(1, 2)) and \
        _zero(quarter_circle_moment(2) / 2 - sp.Rational(1, 2)) and _zero(closed_th.subs(_th, 0) - sp.Rational(1, 2))
    return ok1 and ok2 and ok3, (f"d alpha/d kappa = {sp.simplify(d_closed)} = X_qc(1-kappa)^2/2 "
                                 f"= {sp.simplify(dalpha)} (theta); alpha(kappa=0)=0, alpha(kappa=1)=1/2")


def check_small_kappa():
    e = sp.symbols("epsilon", positive=True)  # e = kappa^(1/3)
    # invert y - sin y = pi e^3 as a series y = sum c_j e^j (undetermined coefficients)
    cs = sp.symbols("c1:4")
    yser = sum(c * e ** (j + 1) for j, c in enumerate(cs))
    eq = sp.series(yser - sp.sin(yser) - sp.pi * e ** 3, e, 0, 6).removeO()
    sol = {}
    for j in range(3, 6):
        coeff = sp.expand(eq).coeff(e, j).subs(sol)
        free = [c for c in cs if c in coeff.free_symbols and c not in sol]
        if not free:
            continue
        c = free[0]
        roots = sp.solve(coeff, c)
        roots = [r for r in roots if r.is_real and (c != cs[0] or r > 0)]
        sol[c] = sp.nsimplify(roots[0]) if c != cs[0] else roots[0]
    ys = yser.subs(sol)
    alpha = sp.series((2 * ys - sp.sin(2 * ys)) / (4 * sp.pi), e, 0, 6).removeO()
    alpha = sp.expand(sp.simplify(alpha))
    target = 2 * e ** 3 - (6 * sp.pi) ** sp.Rational(5, 3) * e ** 5 / (20 * sp.pi)
    pub = sp.expand(alpha_c_series(2).expr.subs(_k, e ** 3))       # the public expansion
    diff = (sp.simplify(alpha.coeff(e, 3) - 2), sp.simplify(alpha.coeff(e, 5) - target.coeff(e, 5)),
            sp.simplify(pub - target))
    ok = all(_zero(d) for d in diff) and alpha.coeff(e, 4) == 0
    return ok, f"alpha_c = {sp.simplify(alpha.coeff(e, 3))} kappa + ({sp.simplify(alpha.coeff(e, 5))}) kappa^(5/3) + O(kappa^(7/3))"


def check_series_routes(n_terms=6):
    """sympy.series of the closed form (Puiseux series of y) = the Lagrange-Burmann coefficients."""
    A = alpha_c_closed_form()
    top = sp.Rational(2 * n_terms + 3, 3)              # first omitted exponent
    ser = sp.series(A.expr, _k, 0, top).removeO()
    pub = alpha_c_series(n_terms).expr
    ok = _zero(sp.expand(ser - pub))
    return ok, f"{n_terms} terms agree, up to O(kappa^{top})"


def check_series_numeric(orders=(1, 2, 3, 4, 5, 6), kappas=("1e-4", "1e-6")):
    """Remainder of the order-n series against replica.alpha_c (mpmath path): the next term, to relative
    2 |c_{n+1}/c_n| kappa^(2/3) (the terms after it fall geometrically by that ratio, << 1/2)."""
    import mpmath as mp

    from ..rank_capacity import alpha_c

    worst = 0.0
    ok = True
    c = alpha_c_series(max(orders) + 2).expr
    terms = sorted(sp.Add.make_args(c), key=lambda t: t.as_coeff_exponent(_k)[1])
    with mp.workdps(60):
        for kap in kappas:
            kk = mp.mpf(kap)
            exact = alpha_c(kap, dps=60)
            vals = [mp.mpf(str(sp.N(t.subs(_k, sp.Rational(kap)), 70))) for t in terms]
            for n in orders:
                rem = exact - mp.fsum(vals[:n])
                ratio = rem / vals[n]
                tol = 2 * abs(vals[n + 1] / vals[n])
                worst = max(worst, float(abs(ratio - 1) / tol))
                ok &= abs(ratio - 1) <= tol
            del kk
    return bool(ok), (f"orders {orders[0]}..{orders[-1]} at kappa = {', '.join(kappas)}: remainder / next term - 1 "
                      f"within {worst:.2g} of the tolerance 2 |next-to-next / next|")


def check_fuss_catalan():
    psi = mp_product_moment_series(5, kappa=1).expr
    got = [psi.coeff(_z, k) for k in range(1, 6)]
    want = [sp.binomial(3 * k, k) / (2 * k + 1) for k in range(1, 6)]
    return got == want, f"moments {got}"


def check_mp_product_moments_and_edges():
    k = _k
    psi = mp_product_moment_series(4).expr
    ok = True
    for n in range(1, 5):
        lag = sum(sp.binomial(n, j + 1) * sp.binomial(2 * n, j) * k ** j for j in range(n)) / (n * k ** n)
        ok &= _zero(psi.coeff(_z, n) - lag)
    # free second moment from free probability: (1 + 2 kappa) / kappa^2
    ok &= _zero(psi.coeff(_z, 2) - (1 + 2 * k) / k ** 2)
    # Cardano discriminant factorisation with the closed-form edges
    P = sp.expand(mp_product_cubic().expr)
    disc = sp.discriminant(P, _psi)
    xm, xp = mp_product_edges().expr
    ok &= _zero(sp.expand(disc - 4 * k ** 5 * _x * (_x - xm) * (_x - xp)))
    ok &= _zero(sp.simplify(xm * xp - (1 - k) ** 3 / k ** 2))
    return ok, "Lagrange-inversion moments match the S-transform series (n <= 4); disc = 4 kappa^5 x (x - x-)(x - x+)"


#: ``(name, callable)`` pairs run by :func:`replica.symbolic.run_checks`.
CHECKS = [
    ("quarter-circle normalisation and Catalan moments", check_qc_moments),
    ("alpha_c closed form = 1/2 Int X_qc^2 (derivative in kappa, boundary)", check_alpha_c_closed_form),
    ("alpha_c small-kappa expansion 2k - (6 pi k)^(5/3)/(20 pi)", check_small_kappa),
    ("alpha_c series: sympy.series of the closed form = Lagrange-Burmann coefficients", check_series_routes),
    ("alpha_c series against replica.alpha_c to its order (kappa = 1e-4, 1e-6)", check_series_numeric),
    ("Fuss-Catalan moments of mp_product(1)", check_fuss_catalan),
    ("mp_product moments (S-transform) and edges (discriminant)", check_mp_product_moments_and_edges),
]
