"""The public sympy objects of ``replica.symbolic`` against independent numbers.

Oracles: the numerical package functions (``replica.free_entropy``, ``saddle``,
``alpha_c`` and its mpmath path, ``alpha_c_finite``, ``hebbian_score_moments``,
``v_p_from_gaps``, ``hcizz`` spectral functions), scipy minimisation and
quadrature, mpmath quadrature, Monte Carlo with its standard error, and small-kappa
fits of the numerical capacity.  Each tolerance is stated next to its assertion.
"""
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

import hcizz
import replica
from replica import symbolic as rs
from hcizz.quarter_circle import qc_upper_angle
from replica.finite_capacity import v_p_from_gaps
from replica.symbolic.functions import (CapacityAngle, QCQuantile, alpha_c_coefficients,
                                        capacity_angle_coefficients)

EPS = np.finfo(float).eps


# ---------------------------------------------------------------------------
# Formula

def test_formula_basics():
    Phi = rs.free_entropy_functional()
    q, alpha = Phi.symbols
    assert (q.name, alpha.name) == ("q", "alpha") and Phi.symbol("alpha") is alpha
    assert q is rs.SYMBOLS["q"]                  # one symbol per name across objects
    assert rs.saddle_point().q_star.symbols[0] is alpha
    with pytest.raises(ValueError, match="name must be one of"):
        Phi.symbol("beta")
    with pytest.raises(ValueError, match="values must be 2 numbers"):
        Phi(0.5)
    out = Phi(np.array([0.0, 0.5]), 0.25)
    assert out.shape == (2,) and isinstance(Phi(0.5, 0.25), float)
    # a constant broadcasts to the shape of its arguments
    assert rs.Formula(sp.Integer(3), (alpha,))(np.zeros(4)).shape == (4,)
    sub = Phi.subs(alpha, sp.Rational(1, 4))
    assert sub.symbols == (q,) and sub.name == Phi.name
    assert "\\log" in Phi.latex()
    S = rs.alpha_c_series(2)
    assert "O\\left(" in S.latex() and "O\\left(" not in S.latex(remainder=False)
    assert S.expansion == S.expr + S.remainder
    # evalf takes exact values without rounding: Phi(1/2; 1/4) = 1/2 ln(1/2)
    assert abs(Phi.evalf("1/2", "1/4", dps=40) - sp.log(sp.Rational(1, 2)) / 2) < sp.Float("1e-39")


# ---------------------------------------------------------------------------
# full rank: against the numerical functions

def test_free_entropy_agrees_with_numeric_on_grid():
    Phi = rs.free_entropy_functional()
    qs = np.linspace(0.0, 0.99, 34)
    for a in (0.0, 0.1, 0.3, 0.5, 2.0):
        got = Phi(qs, a)
        want = replica.free_entropy(qs, a)
        # same closed form; log(1-q) against log1p(-q) and the 1/(1-q) terms: a few ulp of
        # the largest term, which is at most (1/2 + a)/(1 - q)
        scale = (0.5 + a) / (1 - qs) + np.abs(np.log1p(-qs))
        np.testing.assert_array_less(np.abs(got - want), 8 * EPS * scale + 1e-300)


def test_energy_term_agrees_with_numeric():
    G = rs.energy_term()
    ts = np.linspace(0, 0.999, 50)
    np.testing.assert_allclose(G(ts), replica.energy_G_limit(ts), rtol=4 * EPS)
    np.testing.assert_allclose(G(ts), replica.energy_G(ts).value, rtol=4 * EPS)
    Gp = rs.energy_term("finite-p")
    assert Gp.relations[0].rhs == -1 and Gp.relations[1].rhs == -rs.SYMBOLS["E_V"] / sp.log(rs.SYMBOLS["p"])
    with pytest.raises(ValueError, match="form must be"):
        rs.energy_term("small-p")


def test_saddle_point_agrees_with_numeric_and_with_a_minimiser():
    from scipy.optimize import minimize_scalar

    s = rs.saddle_point()
    alphas = np.linspace(0.0, 0.49, 25)
    num = replica.saddle(alphas)
    np.testing.assert_allclose(s.q_star(alphas), num.q, rtol=0, atol=4 * EPS)
    # log(1 - 2a) against log1p(-2a): a few ulp of |phi| plus eps of the argument
    np.testing.assert_allclose(s.phi(alphas), num.phi, rtol=8 * EPS, atol=4 * EPS)
    # an independent solver: minimise the lambdified functional with Brent's method;
    # the minimiser is found to xatol = 1e-10
    Phi = rs.free_entropy_functional()
    for a in (0.05, 0.2, 0.4):
        res = minimize_scalar(lambda q: Phi(q, a), bounds=(0, 0.999), method="bounded",
                              options={"xatol": 1e-10})
        assert abs(res.x - s.q_star(a)) < 1e-8
        # the curvature by a central second difference (step 1e-4: truncation ~ 1e-8 Phi'''')
        h = 1e-4
        q0 = s.q_star(a)
        d2 = (Phi(q0 + h, a) - 2 * Phi(q0, a) + Phi(q0 - h, a)) / h ** 2
        assert abs(d2 - s.curvature(a)) < 1e-5 * s.curvature(a)
    assert s.alpha_c == sp.Rational(1, 2) == 2 * sp.Rational(replica.ALPHA_C_LIMIT).limit_denominator(4) / 2


def test_saddle_point_refuses_a_symbolic_energy():
    eq = rs.saddle_point_equation("symbolic")
    assert eq.expr.has(sp.Derivative)
    with pytest.raises(rs.SymbolicUndecided, match="unspecified G'"):
        rs.saddle_point("symbolic")
    # a user energy term: G = -c/(1-q) gives q* = 2 c alpha
    c = sp.Rational(3, 2)
    s = rs.saddle_point(-c / (1 - rs.SYMBOLS["t"]))
    assert sp.simplify(s.q_star.expr - 2 * c * rs.SYMBOLS["alpha"]) == 0 and s.alpha_c == 1 / (2 * c)


@pytest.mark.parametrize("p", [2, 3, 4])
def test_v_p_piecewise_agrees_with_the_numeric_prefix_rule(p):
    V = rs.v_p_piecewise(p)
    rng = np.random.default_rng(p)
    eta = rng.standard_normal((200, p))
    gaps = eta[:, 1:] - eta[:, [0]]
    want, _, _ = v_p_from_gaps(-np.sort(-gaps, axis=1))
    f = V.numeric()
    got = np.array([f(*row) for row in gaps])
    # both compute x_k = (sum of the k largest)/(k+1) and a sum of squares: a few ulp
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    # the objective's minimum over x >= 0 (scipy) is the same
    from scipy.optimize import minimize_scalar
    obj = rs.v_p_objective(p).numeric()
    for row, w in zip(gaps[:5], want[:5]):
        res = minimize_scalar(lambda x: obj(x, *row), bounds=(0, 10), method="bounded",
                              options={"xatol": 1e-12})
        assert abs(res.fun - w) < 1e-12


def test_expected_v_p_against_quadrature_and_monte_carlo():
    from scipy.integrate import quad

    assert rs.expected_v_p(2).expr == sp.Rational(1, 4)
    assert rs.expected_v_p(3).expr == sp.Rational(5, 12)
    with pytest.raises(ValueError, match="p must be"):
        rs.expected_v_p(4)
    # independent route: E[V_3] = (2 / 2 pi) Int V(g(phi)) dphi on the unit circle of the
    # plane sum(eta) = 0, V by the numerical prefix rule; quad's error estimate is < 1e-12
    e1 = np.array([1.0, -1.0, 0.0]) / math.sqrt(2)
    e2 = np.array([1.0, 1.0, -2.0]) / math.sqrt(6)

    def V(phi):
        eta = math.cos(phi) * e1 + math.sin(phi) * e2
        g = np.sort(eta[1:] - eta[0])[::-1][None, :]
        return float(v_p_from_gaps(g)[0][0])

    pts = [k * math.pi / 6 for k in range(1, 12)]
    val, err = quad(V, 0, 2 * math.pi, points=pts, limit=200, epsabs=1e-13)
    assert err < 1e-11 and abs(2 * val / (2 * math.pi) - 5 / 12) < 1e-11
    # Monte Carlo of the package (control variates), 5 standard errors
    for p, exact in ((2, sp.Rational(1, 4)), (3, sp.Rational(5, 12))):
        est = replica.v_p(p, samples=40_000, rng=p)
        assert abs(est.value - float(exact)) < 5 * est.stderr, (p, est)


def test_finite_capacity_agrees_with_alpha_c_finite():
    F = rs.finite_capacity()
    assert F.symbols == (rs.SYMBOLS["p"], rs.SYMBOLS["E_V"])
    # the formula through E[V_p] reproduces the package's value from its own E_V
    # (same expression ln p / (2 E_V): a few ulp)
    for p in (10, 1000):
        est = replica.alpha_c_finite(p, samples=2000, rng=0)
        assert abs(F(p, est.info["E_V"]) - est.value) < 4 * EPS * est.value
        est_k = replica.alpha_c_finite(p, kappa=0.5, samples=2000, rng=0)
        Fk = rs.finite_capacity(kappa=0.5)
        # alpha_c(1/2) through qc_upper_angle vs replica.alpha_c: about 1e-15 relative
        assert abs(Fk(p, est_k.info["E_V"]) - est_k.value) < 1e-14 * est_k.value
    # exact p = 2, 3 against Monte Carlo (5 standard errors)
    assert rs.finite_capacity(2).expr == 2 * sp.log(2)
    assert rs.finite_capacity(3).expr == 6 * sp.log(3) / 5
    for p in (2, 3):
        est = replica.alpha_c_finite(p, samples=30_000, rng=10 + p)
        assert abs(rs.finite_capacity(p)() - est.value) < 5 * est.stderr, (p, est)
    Fs = rs.finite_capacity(kappa="symbolic")
    assert Fs.symbols == (rs.SYMBOLS["kappa"], rs.SYMBOLS["p"], rs.SYMBOLS["E_V"])
    assert abs(Fs(1.0, 3, 5 / 12) - math.log(3) * 6 / 5) < 4 * EPS
    with pytest.raises(ValueError, match="kappa must be"):
        rs.finite_capacity(kappa=1.5)


def test_hebbian_against_numeric_moments():
    d = np.array([2.0, 10.0, 100.0, 1e4])[:, None]
    p = np.array([2.0, 50.0, 1e3, 1e8])[None, :]
    for exact in (False, True):
        m_num, s_num = replica.hebbian_score_moments(d, p, exact=exact)
        m = rs.hebbian_signal_to_noise(exact_moments=exact)(d, p)
        s = rs.hebbian_score_spread(exact_moments=exact)(d, p)
        np.testing.assert_allclose(m, m_num, rtol=4 * EPS)
        np.testing.assert_allclose(s, s_num, rtol=4 * EPS)
    # large p at fixed load: m(d, p) / sqrt(ln p / alpha) = sqrt(p / (p + 2d)) = 1 - d/p + ...
    m_large = rs.hebbian_signal_to_noise("large-p")
    m_fin = rs.hebbian_signal_to_noise()
    for alpha in (0.05, 0.125):
        for pp in (1e6, 1e10):
            dd = math.sqrt(pp * math.log(pp) / alpha)
            ratio = m_fin(dd, pp) / m_large(math.log(pp), alpha)
            assert abs(ratio - 1) < 2 * dd / pp
    with pytest.raises(ValueError, match="form must be"):
        rs.hebbian_signal_to_noise("small")


def test_hebbian_threshold_is_the_limit_of_the_numeric_one():
    assert rs.hebbian_load_threshold().expr == sp.Rational(1, 8)
    assert float(rs.hebbian_load_threshold().expr) == replica.HEBBIAN_LIMIT
    assert rs.hebbian_load_threshold(all_facts=False).expr == sp.Rational(1, 2)
    # the independent-Gaussian model's threshold decreases towards 1/8 from above
    # (corrections of relative order ln ln p / ln p, so only the trend is asserted)
    th = [replica.hebbian_threshold(d, model="theory") for d in (1e6, 1e9, 1e12, 1e15)]
    assert all(a > b > 0.125 for a, b in zip(th, th[1:]))


# ---------------------------------------------------------------------------
# rank-constrained

def test_alpha_c_closed_form_agrees_with_numeric_on_grid():
    A = rs.alpha_c_closed_form()
    kap = np.concatenate([np.logspace(-3, -0.01, 40), [0.25, 0.5, 0.75, 1.0]])
    got = A(kap)
    want = replica.alpha_c(kap)
    # the lambdified (2y - sin 2y) cancels: relative error about eps 3/(2 y^2) (y small),
    # with y = (6 pi kappa)^(1/3) to leading order; plus a few ulp
    y = np.cbrt(6 * np.pi * kap)
    np.testing.assert_array_less(np.abs(got / want - 1), 8 * EPS * (1 + 1.5 / y ** 2))
    # high precision: CapacityAngle's mpmath Newton in y against alpha_c's in theta
    for k in ("1e-12", "0.001", "0.5", "0.999"):
        assert abs(A.evalf(k, dps=40) - sp.Float(mp.nstr(replica.alpha_c(k, dps=40), 40), 40)) \
            < sp.Float(10) ** -37 * A.evalf(k, dps=20)


def test_alpha_c_integral_by_quadrature():
    A = rs.alpha_c_integral()
    for k in ("1/2", "1/10"):
        # mpmath tanh-sinh quadrature of X_qc(u)^2 (integrable (1-u)^(2/3) edge) at 20 digits
        got = A.evalf(k, dps=20)
        want = replica.alpha_c(Fraction(k), dps=25)
        with mp.workdps(25):
            assert abs(mp.mpf(str(got)) - want) < mp.mpf("1e-19")
    # lambdified: scipy quad of qc_quantile^2 (default epsrel 1.5e-8)
    assert abs(A(0.3) - replica.alpha_c(0.3)) < 1e-8 * replica.alpha_c(0.3)
    # Leibniz: d/dkappa is X_qc(1 - kappa)^2 / 2, against hcizz.qc_quantile
    d = rs.Formula(sp.diff(A.expr, A.symbols[0]), A.symbols)
    np.testing.assert_allclose(d(np.array([0.2, 0.6])), hcizz.qc_quantile(1 - np.array([0.2, 0.6])) ** 2 / 2,
                               rtol=4 * EPS)


def test_alpha_c_parametric_matches_closed_form():
    P = rs.alpha_c_parametric()
    y = P.symbols[0]
    kappa_of_y = rs.Formula(P.relations[0].rhs, (y,))
    ys = np.linspace(0.1, np.pi, 30)
    # (y, kappa(y)) lies on the numeric capacity curve; alpha_c's own y-solve is accurate
    # to a few ulp, amplified by the cancellation in 2y - sin 2y (see above)
    np.testing.assert_allclose(P(ys), replica.alpha_c(kappa_of_y(ys)), rtol=1e-13)


def test_series_coefficients_by_fits_of_the_numeric_capacity():
    n = 6
    S = rs.alpha_c_series(n + 1)
    kappa = S.symbols[0]
    terms = sorted(sp.Add.make_args(S.expr), key=lambda t: t.as_coeff_exponent(kappa)[1])
    coefs = [t.as_coeff_exponent(kappa) for t in terms]
    assert [e for _, e in coefs] == [sp.Rational(2 * k + 3, 3) for k in range(n + 1)]
    # the exact coefficient of kappa^e_j is lim (alpha - S_j)/kappa^e_j; at kappa = 1e-6 the
    # estimate differs from it by the next term, |a_(j+1)| kappa^(2/3) (times 1 + O(kappa^(2/3)),
    # a factor < 1.01 here): tolerance 1.5 |a_(j+1)| kappa^(2/3)
    with mp.workdps(80):
        k = mp.mpf("1e-6")
        exact = replica.alpha_c("1e-6", dps=80)
        partial = mp.mpf(0)
        for j in range(n):
            a = mp.mpf(str(sp.N(coefs[j][0], 90)))
            e = mp.mpf(coefs[j][1].p) / coefs[j][1].q
            est = (exact - partial) / k ** e
            nxt = abs(mp.mpf(str(sp.N(coefs[j + 1][0], 90))))
            assert abs(est - a) < 1.5 * nxt * k ** (mp.mpf(2) / 3), (j, est, a)
            partial += a * k ** e
    # a fit over several kappa: least squares of (alpha - 2 kappa)/kappa^(5/3) against
    # 1, kappa^(2/3), kappa^(4/3) on kappa in [1e-5, 1e-3]; the intercept is a_2 to the
    # size of the omitted kappa^2 term, |a_5| kappa_max^2 / kappa_max^(...) < 1e-6
    ks = np.logspace(-5, -3, 12)
    al = np.array([float(replica.alpha_c(f"{kk:.17g}", dps=40) - 2 * mp.mpf(f"{kk:.17g}")) for kk in ks])
    X = np.column_stack([ks ** (5 / 3), ks ** (7 / 3), ks ** 3, ks ** (11 / 3)])
    fit = np.linalg.lstsq(X / ks[:, None] ** (5 / 3), al / ks ** (5 / 3), rcond=None)[0]
    assert abs(fit[0] - float(coefs[1][0])) < 1e-6
    assert abs(fit[1] - float(coefs[2][0])) < 1e-3
    # the numeric two-term expansion is the same function
    np.testing.assert_allclose(rs.alpha_c_series(2)(ks), replica.alpha_c_small_kappa(ks), rtol=4 * EPS)
    np.testing.assert_allclose(rs.alpha_c_series(1)(ks), replica.alpha_c_small_kappa(ks, order=1), rtol=4 * EPS)


def test_series_coefficients_three_routes():
    # Lagrange-Burmann (alpha_c_coefficients) == sympy.series of the closed form through the
    # Puiseux series of y (capacity_angle_coefficients) == series of (2y - sin 2y)/(4 pi) with
    # y from sympy's own inversion of y - sin y = w^3/6 (undetermined coefficients)
    n = 5
    w = sp.Symbol("w", positive=True)
    g = sp.symbols(f"g0:{n}")
    y = sum(gk * w ** (2 * k + 1) for k, gk in enumerate(g))
    eq = sp.expand(sp.series(y - sp.sin(y) - w ** 3 / 6, w, 0, 2 * n + 2).removeO())
    sol = {g[0]: 1}
    for k in range(1, n):
        sol[g[k]] = sp.solve(eq.coeff(w, 2 * k + 3).subs(sol), g[k])[0]
    assert [sol[gk] for gk in g] == capacity_angle_coefficients(n)
    ys = y.subs(sol)
    pa = sp.expand(sp.series((2 * ys - sp.sin(2 * ys)) / 4, w, 0, 2 * n + 3).removeO())
    assert [pa.coeff(w, 2 * k + 3) for k in range(n)] == alpha_c_coefficients(n)
    kappa = rs.SYMBOLS["kappa"]
    ser = sp.series(rs.alpha_c_closed_form().expr, kappa, 0, sp.Rational(2 * n + 3, 3)).removeO()
    assert sp.expand(ser - rs.alpha_c_series(n).expr) == 0


def test_capacity_angle_and_quantile_functions():
    k = rs.SYMBOLS["kappa"]
    u = rs.SYMBOLS["u"]
    # derivative against a central difference of the 40-digit value, step h = 1e-10:
    # truncation h^2 |y'''| / 6 < 1e-18 at these kappa, rounding 1e-40 / h = 1e-30
    dy = sp.diff(CapacityAngle(k), k)
    h = sp.Rational(1, 10 ** 10)
    for kk in (sp.Rational(1, 10), sp.Rational(7, 10)):
        num = (CapacityAngle(kk + h).evalf(40) - CapacityAngle(kk - h).evalf(40)) / (2 * h)
        assert abs(dy.subs(k, kk).evalf(40) - num) < 1e-16
    # evalf against the float implementations (hcizz) at a few ulp
    for kk in (1e-9, 0.3, 1.0):
        assert abs(float(CapacityAngle(sp.Float(kk)).evalf(20)) - qc_upper_angle(np.pi * kk)) \
            < 8 * EPS * qc_upper_angle(np.pi * kk)
    for uu in (0.0, 0.2, 0.5, 0.9, 1 - 1e-12, 1.0):
        assert abs(float(QCQuantile(sp.Float(uu)).evalf(20)) - hcizz.qc_quantile(uu)) < 8 * EPS * 2
    # X_qc(1 - kappa) = 2 cos(y(kappa)/2), also near the edge where hcizz.qc_quantile_mp's
    # Newton start fails (1 - u below the float resolution)
    r = QCQuantile(1 - k).rewrite(CapacityAngle)
    assert r == 2 * sp.cos(CapacityAngle(k) / 2)
    tiny = sp.Rational(1, 10 ** 30)
    assert abs(QCQuantile(1 - tiny).evalf(30) - r.subs(k, tiny).evalf(30)) < sp.Float("1e-29")
    assert abs(QCQuantile(u).diff(u).subs(u, sp.Rational(1, 3)).evalf(20)
               - sp.pi / sp.sqrt(4 - QCQuantile(sp.Rational(1, 3)) ** 2).evalf(20)) < 1e-18
    # y is odd; the quantile's latex names it
    assert CapacityAngle(-k) == -CapacityAngle(k)
    assert "X_{\\mathrm{qc}}" in sp.latex(QCQuantile(u)) and "y\\left(" in sp.latex(CapacityAngle(k))


def test_sympy_limits_of_the_closed_form():
    A = rs.alpha_c_closed_form()
    kappa = A.symbols[0]
    assert rs.limit(A.expr / kappa, kappa, 0) == 2                    # alpha_c ~ 2 kappa
    assert rs.limit(sp.diff(A.expr, kappa), kappa, 1, dir="-") == 0   # X_qc(0)^2/2


def test_quarter_circle_and_mp_product_against_hcizz():
    for kk in range(0, 7):
        assert abs(float(rs.quarter_circle_moment(kk)) - float(hcizz.qc_moment(kk))) < 1e-13
    rho = rs.quarter_circle_density()
    np.testing.assert_allclose(rho(np.array([0.0, 1.0, 1.9])), hcizz.quarter_circle.pdf([0.0, 1.0, 1.9]),
                               rtol=4 * EPS)
    E = rs.mp_product_edges()
    for kap in (0.1, 0.5, 1.0):
        lo, hi = E(kap)
        wlo, whi = hcizz.mp_product_edges(kap)
        # x_- = (b - r)/(8 kappa) cancels in float: absolute error ~ eps * b / (8 kappa)
        assert abs(lo - wlo) < 8 * EPS * (8 + 20 * kap) / (8 * kap) and abs(hi - whi) < 8 * EPS * whi
    M = rs.mp_product_moment_series(5)
    for kap in (0.25, 1.0):
        for n in range(1, 6):
            coef = M.expr.coeff(rs.SYMBOLS["z"], n).subs(rs.SYMBOLS["kappa"], sp.nsimplify(kap))
            assert abs(float(coef) - hcizz.mp_product_moment(n, kap)) < 1e-12 * float(coef)


# ---------------------------------------------------------------------------
# series / limit helpers

def test_limit_raises_where_sympy_cannot_decide():
    x = sp.Symbol("x", real=True)
    assert rs.limit(sp.sin(x) / x, x, 0) == 1
    with pytest.raises(rs.SymbolicUndecided, match="oscillates") as exc:
        rs.limit(sp.sin(1 / x), x, 0)
    assert isinstance(exc.value.result, sp.AccumBounds)
    with pytest.raises(rs.SymbolicUndecided, match="unevaluated limit") as exc:
        rs.limit(sp.Function("f")(x), x, 0)
    assert isinstance(exc.value.result, sp.Limit)
    with pytest.raises(rs.SymbolicUndecided, match="left hand limit"):
        rs.limit(sp.floor(x), x, 0, dir="+-")
    with pytest.raises(rs.SymbolicUndecided):
        rs.limit(1 / x, x, 0, dir="+-")
    with pytest.raises(ValueError, match="dir must be"):
        rs.limit(x, x, 0, dir="up")
    Phi = rs.free_entropy_functional()
    with pytest.raises(ValueError, match="x must name the variable"):
        rs.limit(Phi, None, 1)
    assert sp.simplify(rs.limit(Phi, "alpha", 0) - Phi.expr.subs(Phi.symbol("alpha"), 0)) == 0


def test_series_returns_the_expansion_and_raises_when_undecided():
    s = rs.series(rs.saddle_point().phi, n=4)
    a = rs.SYMBOLS["alpha"]
    assert s.expr == -a - a ** 2 - 4 * a ** 3 / 3 and s.remainder == sp.O(a ** 4)
    # the expansion agrees with the function to the size of the first omitted term (2 alpha^4)
    for av in (1e-2, 1e-3):
        assert abs(s(av) - rs.saddle_point().phi(av)) < 2.5 * av ** 4
    x = sp.Symbol("x")
    with pytest.raises(rs.SymbolicUndecided, match="cannot expand"):
        rs.series(sp.gamma(1 / x), x, 0, 3)
    # free entropy near q -> 1 with the symbolic energy: a Laurent series in 1 - q
    Phi = rs.free_entropy_functional()
    lead = rs.series((1 - rs.SYMBOLS["q"]) * Phi.expr, "q", 1, 1, dir="-")
    assert sp.simplify(lead.expr - (sp.Rational(1, 2) - a)) == 0


# ---------------------------------------------------------------------------
# checks and CLI

def test_new_checks_are_registered():
    from replica.symbolic import full_rank, rank_constrained

    names = [n for n, _ in full_rank.CHECKS + rank_constrained.CHECKS]
    assert len(names) == 15
    assert any("(1 - t) G(t) -> -1" in n for n in names)
    assert any("series against replica.alpha_c" in n for n in names)


def test_series_cli(capsys):
    import json

    from hcizz.cli import run_cli
    from replica.__main__ import main

    assert run_cli(main, ["series", "--kappa-order", "3"], prog="python -m replica") == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[1].split()[:3] == ["k=1", "e_k=1", "c_k=1/3"]
    # the printed floats are the exact coefficients (15 significant digits)
    vals = [float(line.split("= ")[-1]) for line in out[1:]]
    exact = [2.0, -3 * 6 ** (2 / 3) * math.pi ** (2 / 3) / 10, 9 * 6 ** (1 / 3) * math.pi ** (4 / 3) / 140]
    np.testing.assert_allclose(vals, exact, rtol=1e-14)
    assert abs(vals[1] + (6 * math.pi) ** (5 / 3) / (20 * math.pi)) < 1e-14
    assert run_cli(main, ["series", "--kappa-order", "2", "--latex"], prog="python -m replica") == 0
    out = capsys.readouterr().out
    assert out.startswith("\\alpha_c(\\kappa) = 2 \\kappa") and "\\approx" in out
    assert run_cli(main, ["series", "--kappa-order", "4", "--json"], prog="python -m replica") == 0
    rec = json.loads(capsys.readouterr().out)
    assert [t["exponent"] for t in rec["terms"]] == ["1", "5/3", "7/3", "3"]
    assert rec["terms"][3]["coefficient"] == "9*pi**2/1400"


@pytest.mark.parametrize("argv,word", [
    (["series", "--kappa-order", "0"], "kappa_order must be an integer in [1, 100], got 0"),
    (["series", "--kappa-order", "101"], "kappa_order must be"),
    (["series", "--kappa-order", "1.5"], "invalid int value"),
    (["series"], "required"),
])
def test_series_cli_bad_input(argv, word, capsys):
    from hcizz.cli import run_cli
    from replica.__main__ import main

    with pytest.raises(SystemExit) as exc:
        raise SystemExit(run_cli(main, argv, prog="python -m replica"))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert word in err and err.count("\n") == 1


def test_replica_symbolic_is_reachable_from_the_package():
    # a lazy export: ``import replica`` does not import sympy, ``replica.symbolic`` works
    import subprocess
    import sys

    code = ("import sys, replica; assert 'sympy' not in sys.modules; "
            "print(replica.symbolic.hebbian_load_threshold().expr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "1/8", r.stderr
