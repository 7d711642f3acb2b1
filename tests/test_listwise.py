"""replica.listwise (TAM capacity) against independent oracles.

Oracles: a generic convex solver (SLSQP) for the projection onto the TAM set;
the top-1 minimiser ``v_p_from_gaps`` at ``k = 1``; the closed forms at
``tau = 1`` (a half-space) and ``p = 2``; mpmath quadrature of the Gaussian
tail mean, of Gardner's margin integral, of the free entropy and of the means of
order statistics; ``gaussian_max_moments`` for the bias of the largest
competitor; Gardner's perceptron capacity at ``tau = 1``; the asymptotic
expansions with their stated remainders.
"""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

from replica import alpha_c_finite, gaussian_max_moments
from replica.finite_capacity import v_p_from_gaps
from replica.listwise import (CensoredNormal, gardner_energy, gaussian_tail_mean, tail_mean_bias,
                              tail_size, tam_capacity, tam_capacity_expansion,
                              tam_capacity_small_tau, tam_finite_p_coefficient, tam_free_entropy,
                              tam_projection, tam_score_laws, tam_scores)


# --------------------------------------------------------------------------
# the projection (the finite-dimensional variational problem)
# --------------------------------------------------------------------------
def _tail_mean_of(x, k):
    s = np.sort(x)[::-1]
    J = math.ceil(k) - 1
    return (s[:J].sum() + (k - J) * s[J]) / k


def _slsqp(eta, k, margin):
    """Independent oracle: min 1/2 |lam - eta|^2 over (lam, c, s) with the linear-program
    form of the tail mean, lam_1 - c - sum(s)/k >= margin, s >= lam_rho - c, s >= 0."""
    p = eta.size
    x0 = np.concatenate([eta, [0.0], np.zeros(p - 1)])

    def jac(x):
        g = np.zeros_like(x)
        g[:p] = x[:p] - eta
        return g

    cons = [{"type": "ineq", "fun": lambda x: x[0] - x[p] - x[p + 1:].sum() / k - margin},
            {"type": "ineq", "fun": lambda x: x[p + 1:] - (x[1:p] - x[p])},
            {"type": "ineq", "fun": lambda x: x[p + 1:]}]
    r = minimize(lambda x: 0.5 * np.sum((x[:p] - eta) ** 2), x0, jac=jac, constraints=cons,
                 method="SLSQP", options={"ftol": 1e-14, "maxiter": 2000})
    # status 8 (line search stalls) happens at convergence with so tight an ftol; the point
    # must be feasible either way, so r.fun bounds the minimum from above
    assert r.status in (0, 8), r.message
    assert min(np.min(c["fun"](r.x)) for c in cons) > -1e-10
    return r.fun


def test_projection_against_generic_solver():
    rng = np.random.default_rng(0)
    for trial in range(60):
        p = int(rng.integers(2, 20))
        m = p - 1
        k = float(rng.uniform(1, m)) if trial % 3 else float(rng.integers(1, m + 1))
        margin = float(rng.uniform(0, 1.5)) if trial % 2 else 0.0
        eta = rng.standard_normal(p)
        a = np.sort(eta[1:])[::-1][None, :]
        r = tam_projection(a, eta[:1], k, margin=margin)
        # SLSQP solves this small QP to ~1e-12 in the objective (ftol 1e-14; measured
        # differences <= 1e-13): 1e-9 leaves room without hiding a wrong active set,
        # which changes V at order 1e-2 or more
        assert abs(r["V"][0] - _slsqp(eta, k, margin)) < 1e-9
        # the minimiser is feasible with the constraint binding, and V is its distance
        lam_c = np.maximum(np.minimum(a[0], r["c"][0]), a[0] - r["y"][0])
        lam_1 = eta[0] + r["mu"][0]
        if r["V"][0] > 0:
            assert abs(lam_1 - _tail_mean_of(lam_c, k) - margin) < 1e-12 * (1 + abs(lam_1))
            assert abs(r["tail"][0] - _tail_mean_of(lam_c, k)) < 1e-12 * (1 + abs(lam_1))
        dist = 0.5 * (r["mu"][0] ** 2 + np.sum((lam_c - a[0]) ** 2))
        assert abs(dist - r["V"][0]) < 1e-12 * (1 + dist)


def test_k1_is_the_top1_minimiser_on_the_same_draws():
    rng = np.random.default_rng(1)
    for p, margin in [(2, 0.0), (10, 0.0), (300, 0.0), (300, 0.7)]:
        eta1 = rng.standard_normal(500)
        a = -np.sort(-rng.standard_normal((500, p - 1)), axis=1)
        V_top, _, _ = v_p_from_gaps(a - eta1[:, None] + margin)
        V_tam = tam_projection(a, eta1, 1.0, margin=margin)["V"]
        # two exact closed forms of one minimum: rounding only
        np.testing.assert_allclose(V_tam, V_top, rtol=1e-12, atol=1e-13)


def test_tau_one_is_a_half_space():
    rng = np.random.default_rng(2)
    m = 40
    eta1 = rng.standard_normal(300)
    a = -np.sort(-rng.standard_normal((300, m)), axis=1)
    for margin in (0.0, 0.8):
        V = tam_projection(a, eta1, float(m), margin=margin)["V"]
        exact = 0.5 * np.maximum(margin - eta1 + a.mean(axis=1), 0) ** 2 / (1 + 1 / m)
        np.testing.assert_allclose(V, exact, rtol=1e-12, atol=1e-14)


def test_half_space_lower_bound_and_monotone_in_k():
    """A ⊂ {lam_1 - w.lam >= gamma} (w: the tail weights of eta) gives V >= the
    half-space distance for every row; T_k decreasing in k gives V decreasing in k."""
    rng = np.random.default_rng(3)
    m = 200
    eta1 = rng.standard_normal(400)
    a = -np.sort(-rng.standard_normal((400, m)), axis=1)
    prev = None
    for k in (1.0, 2.5, 7.0, 20.0, 60.3, 200.0):
        J = math.ceil(k) - 1
        f = k - J
        T = (a[:, :J].sum(axis=1) + f * a[:, J]) / k
        omega = (J + f * f) / k ** 2
        V = tam_projection(a, eta1, k, margin=0.3)["V"]
        assert np.all(V >= 0.5 * np.maximum(0.3 - eta1 + T, 0) ** 2 / (1 + omega) - 1e-12)
        if prev is not None:
            assert np.all(V <= prev + 1e-12)
        prev = V


def test_incomplete_rows_are_flagged():
    # only 3 of many competitors drawn, and a huge rise needed: the clamp group
    # reaches the last drawn value, which must be flagged, never returned as exact
    a = np.array([[0.3, 0.2, 0.1]])
    r = tam_projection(a, np.array([-30.0]), 2.0, complete=False)
    assert not r["ok"][0]
    assert tam_projection(a, np.array([-30.0]), 2.0, complete=True)["ok"][0]


# --------------------------------------------------------------------------
# closed forms of the large-p law
# --------------------------------------------------------------------------
def test_gaussian_tail_mean_against_mpmath():
    mp.mp.dps = 30
    for tau in (1e-12, 1e-4, 0.01, 0.05, 0.2, 0.5, 0.9, 0.999999):
        z = -mp.sqrt(2) * mp.erfinv(2 * mp.mpf(tau) - 1)
        ref = mp.quad(lambda x: x * mp.npdf(x), [z, mp.inf]) / tau
        # double precision phi(isf(tau))/tau: relative 1e-13 (ndtri is accurate to ~1e-15)
        assert abs(gaussian_tail_mean(tau) - float(ref)) < 1e-13 * abs(float(ref)) + 1e-15
    assert gaussian_tail_mean(1.0) == 0.0
    # Mills-ratio expansion kappa = z + 1/z - 2/z^3 + O(z^-5)
    z = float(-ndtri(1e-12))
    assert abs(gaussian_tail_mean(1e-12) - (z + 1 / z - 2 / z ** 3)) < 10 / z ** 5


def test_gardner_energy_against_mpmath():
    # the closed form at 80 digits: its cancellation (a factor ~kappa^4 <= 1e6) costs 6
    mp.mp.dps = 80
    for kap in (-30.0, -12.0, -5.0, -2.5, -2.0, -1.0, 0.0, 0.7, 3.0, 9.0):
        k = mp.mpf(kap)
        ref = float((1 + k * k) * mp.ncdf(k) + k * mp.npdf(k))
        # closed form at kappa >= -2: rounding 1e-16 times the cancellation factor
        # (<= 20 at -2); the quadrature branch below -2: 1e-14 (docstring)
        assert abs(gardner_energy(kap) - ref) < 1e-13 * ref


def test_limit_closed_forms_and_gardner():
    # tau = 1: beat the mean of all competitors: Gardner's perceptron, alpha_c(0) = 2,
    # and at margin 1 Gardner's 1/Gamma(1) (0.5196...); exact formulas, rounding only
    assert tam_capacity(1.0) == pytest.approx(2.0, rel=1e-14)
    mp.mp.dps = 30
    gard1 = 1 / (2 * mp.ncdf(1) + mp.npdf(1))
    assert tam_capacity(1.0, margin=1.0) == pytest.approx(float(gard1), rel=1e-13)
    taus = np.array([1e-8, 1e-4, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0])
    lim = tam_capacity(taus)
    assert np.all(np.diff(lim) > 0)                       # a looser list stores more
    assert np.all(tam_capacity(taus, margin=0.5) < lim)   # a margin stores less


def test_small_tau_law_and_its_remainder():
    """1/alpha_c = 2L - ln(4 pi L) + 3 + (ln(4 pi L) - 5)/(2L) + O((ln L)^2/L^2)
    (docs/listwise.md#small-tail-behaviour): the leading law's relative error is
    (ln(4 pi L) - 5)/(4 L^2) up to O((ln L)^2/L^3)."""
    for tau in (1e-2, 1e-3, 1e-6, 1e-12, 1e-50, 1e-300):
        L = -math.log(tau)
        rel = tam_capacity_small_tau(tau) / tam_capacity(tau) - 1
        assert abs(rel - (math.log(4 * math.pi * L) - 5) / (4 * L * L)) < math.log(L) ** 2 / L ** 3


def test_tau_to_zero_joins_the_top1_law():
    # tau = 1/p: n ln n / d^2 = ln p * alpha_c(1/p) decreases to 1/2 (d^2 ~ 2 n ln n);
    # from the small-tau law it is 1/2 + (ln(4 pi L) - 3)/(4L) + O((ln L/L)^2)
    ps = [1e3, 1e6, 1e15, 1e50, 1e300]
    vals = [math.log(p) * tam_capacity(1 / p) for p in ps]
    assert all(a > b > 0.5 for a, b in zip(vals, vals[1:]))
    L = math.log(1e300)
    assert abs(vals[-1] - 0.5 - (math.log(4 * math.pi * L) - 3) / (4 * L)) < (math.log(L) / L) ** 2


# --------------------------------------------------------------------------
# free entropy (the scalar variational principle at large p)
# --------------------------------------------------------------------------
def _phi_mp(q, alpha, kap):
    if q == 0:
        return alpha * mp.log(mp.ncdf(-kap))
    q = mp.mpf(q)
    sq, sr = mp.sqrt(q), mp.sqrt(1 - q)
    t0 = kap / sq
    g = mp.quad(lambda t: mp.npdf(t) * mp.log(mp.ncdf((sq * t - kap) / sr)),
                [-mp.inf, t0 - 40 * sr, t0 - sr, t0, t0 + sr, t0 + 40 * sr, mp.inf])
    return mp.log(1 - q) / 2 + q / (2 * (1 - q)) + alpha * g


def test_free_entropy_against_mpmath():
    mp.mp.dps = 25
    for tau, margin in ((0.05, 0.0), (0.5, 0.3), (1.0, 0.0)):
        kap = gaussian_tail_mean(tau) + margin
        for q in (0.0, 0.3, 0.9, 0.999, 1 - 1e-8):
            ref = float(_phi_mp(q, 0.2, kap))
            got = tam_free_entropy(q, 0.2, tau, margin=margin)
            # 64-point Gauss-Legendre per piece of a smooth integrand: ~1e-13 relative;
            # q/(2(1-q)) up to 5e7 costs 1e-16 * 5e7 absolute in the entropic part
            assert abs(got - ref) < 1e-11 * (1 + abs(ref)), (tau, q)


def test_free_entropy_laplace_limit_gives_the_capacity():
    """(1 - q) Phi(q; alpha) -> 1/2 - alpha Gamma(kappa)/2, zero at alpha_c = 1/Gamma.
    Corrections: O((1-q) ln(1/(1-q))) from the logarithm in ln Phi(u) ~ -u^2/2 - ln|u|."""
    for tau in (0.01, 0.2, 1.0):
        kap = gaussian_tail_mean(tau)
        ac = tam_capacity(tau)
        for alpha in (0.5 * ac, ac, 1.5 * ac):
            eps = 1e-9
            lim = 0.5 - alpha * gardner_energy(kap) / 2
            got = eps * tam_free_entropy(1 - eps, alpha, tau)
            assert abs(got - lim) < 10 * eps * math.log(1 / eps)
    # the minimiser q*(alpha) moves towards 1 as alpha -> alpha_c (convex problem: RS)
    qs = np.linspace(0.0, 0.999, 400)
    ac = tam_capacity(0.2)
    qstar = [qs[np.argmin(tam_free_entropy(qs, f * ac, 0.2))] for f in (0.2, 0.6, 0.95)]
    assert qstar[0] < qstar[1] < qstar[2]


# --------------------------------------------------------------------------
# finite p
# --------------------------------------------------------------------------
def test_tail_mean_bias_against_mpmath_order_statistics():
    mp.mp.dps = 20

    def EX(j, m):          # E of the j-th largest of m standard normals
        c = mp.factorial(m) / (mp.factorial(j - 1) * mp.factorial(m - j))
        return mp.quad(lambda x: x * c * mp.npdf(x) * (1 - mp.ncdf(x)) ** (j - 1) * mp.ncdf(x) ** (m - j),
                       [-mp.inf, -2, 0, 1, 2, 3, mp.inf])

    for m, k in ((9, 3.0), (19, 2.5), (30, 1.0), (12, 11.5)):
        J = math.ceil(k) - 1
        ET = (sum(EX(j, m) for j in range(1, J + 1)) + (k - J) * EX(J + 1, m)) / k
        ref = float(ET) - gaussian_tail_mean(k / m)
        # adaptive quadrature at epsrel 1e-12 of an O(1) integral, divided by k
        assert abs(tail_mean_bias(m, k) - ref) < 1e-12


def test_tail_mean_bias_of_the_maximum_and_asymptotics():
    # k = 1: E[max of m normals] from the independent Exp(1)-substitution quadrature
    for m in (10, 1000, 10**6, 10**12):
        ref = gaussian_max_moments(m)[0] - gaussian_tail_mean(1 / m)
        assert abs(tail_mean_bias(m, 1.0) - ref) < 1e-10
    # large k: k b -> -tau (1 - tau)/(2 phi(z_tau)); the next order is relative
    # 1/(m tau (1 - tau)) (the counts above and below the tail edge)
    for tau in (0.01, 0.3, 0.5, 0.9):
        m = 10**6
        k = tau * m
        z = -ndtri(tau)
        asym = -tau * (1 - tau) / (2 * math.exp(-z * z / 2) / math.sqrt(2 * math.pi))
        assert abs(k * tail_mean_bias(m, k) / asym - 1) < 1 / (m * tau * (1 - tau))


def test_p2_and_tau_one_exact_values():
    # p = 2: one competitor, any tau is top-1: alpha_c = 1/Gamma(gamma/sqrt 2) (2 at gamma = 0)
    for margin in (0.0, 0.6):
        e = tam_capacity([0.3, 1.0], 2, margin=margin, samples=20000, rng=4)
        exact = 1 / gardner_energy(margin / math.sqrt(2))
        assert np.all(np.abs(e.value - exact) < 5 * e.stderr)
    # tau = 1 at p = 50: the half-space, alpha_c = 1/Gamma(gamma/sqrt(1 + 1/49))
    for margin in (0.0, 0.8):
        e = tam_capacity(1.0, 50, margin=margin, samples=20000, rng=5)
        exact = 1 / gardner_energy(margin / math.sqrt(1 + 1 / 49))
        assert abs(e.value - exact) < 5 * e.stderr
        assert e.stderr < 1e-3 * exact


def test_small_tail_is_the_top1_capacity():
    # tau (p - 1) <= 1: the criterion is top-1; independent estimators agree
    for p in (100, 10**6):
        t = tam_capacity(0.5 / (p - 1), p, samples=20000, rng=6)
        a = alpha_c_finite(p, samples=20000, rng=7)
        assert abs(t.value - a.value / math.log(p)) < 5 * math.hypot(t.stderr, a.stderr / math.log(p))
    t = tam_capacity(0.5 / 999, 1000, margin=0.5, samples=20000, rng=8)
    a = alpha_c_finite(1000, margin=0.5, samples=20000, rng=9)
    assert abs(t.value - a.value / math.log(1000)) < 5 * math.hypot(t.stderr, a.stderr / math.log(1000))


def test_control_variates_unbiased():
    a = tam_capacity([0.05, 0.5], 200, samples=20000, rng=10)
    b = tam_capacity([0.05, 0.5], 200, samples=20000, rng=11, control_variates=False)
    assert np.all(np.abs(a.value - b.value) < 5 * np.hypot(a.stderr, b.stderr))
    assert np.all(a.stderr < b.stderr / 10)


def test_expansion_against_monte_carlo():
    """Remainder of the 1/k expansion: O(z_tau / k^2) from pushed competitors crossing
    unpushed ones (docs/listwise.md#finite-p-corrections; measured coefficient 0.28-0.37
    for tau from 2e-4 to 0.2), so |relative difference| <= 2 max(z_tau, 1) / k^2 + 5 sigma."""
    for p, taus in ((1000, [0.05, 0.1, 0.2, 0.5]), (10**4, [0.005, 0.02])):
        e = tam_capacity(taus, p, samples=20000, rng=12)
        x = tam_capacity_expansion(taus, p)
        k = tail_size(taus, p)
        z = np.maximum(-ndtri(np.array(taus)), 1.0)
        assert np.all(np.abs(x / e.value - 1) < 2 * z / k ** 2 + 5 * e.stderr / e.value)


def test_first_order_coefficient_against_the_expansion():
    # the expansion minus its first order is second order: bounded by twice the square of
    # the first-order term plus the 1/k^2 of omega_k (k = 5e4 .. 5e5 here)
    taus = np.array([0.05, 0.2, 0.5])
    p = 10**6 + 1
    x = tam_capacity_expansion(taus, p)
    C = tam_finite_p_coefficient(taus)
    first = tam_capacity(taus) * (1 + C / (p - 1))
    assert np.all(np.abs(x / first - 1) < 2 * (C / (p - 1)) ** 2 + 1 / (taus * (p - 1)) ** 2 + 1e-13)
    # tau = 1, margin 0: alpha_c = 2 at every p, so C = 0
    assert tam_finite_p_coefficient(1.0) == 0.0


def test_capacity_decreases_with_p_towards_the_limit():
    est = [tam_capacity(0.05, p, samples=20000, rng=13 + i) for i, p in enumerate((100, 1000, 10**4))]
    for a, b in zip(est, est[1:]):
        assert b.value < a.value - 5 * math.hypot(a.stderr, b.stderr)
    lim = tam_capacity(0.05)
    assert all(e.value > lim for e in est)


# --------------------------------------------------------------------------
# laws of the scores
# --------------------------------------------------------------------------
def test_censored_normal_against_sampling():
    law = CensoredNormal(-0.3, 0.4)
    x = law.rvs(200_000, rng=0)
    se = x.std() / math.sqrt(x.size)
    assert abs(x.mean() - law.mean()) < 5 * se
    se_var = math.sqrt(np.var((x - x.mean()) ** 2) / x.size)
    assert abs(x.var() - law.var()) < 5 * se_var
    assert abs(np.mean(x == 0.4) - law.atom) < 5 * math.sqrt(law.atom * (1 - law.atom) / x.size)
    u = np.array([0.1, law.atom, 0.9, 0.99])
    assert np.all(law.cdf(law.ppf(u)) >= u - 1e-15)
    assert law.cdf(0.39) == 0.0 and law.sf(0.39) == 1.0


def test_tam_scores_against_the_large_p_laws():
    p, tau, S = 5001, 0.2, 2000
    s = tam_scores(tau, p, samples=S, rng=1, normalise=False)
    k = tail_size(tau, p)
    assert np.all(s["rank"] < k)                     # the TAM certificate
    assert np.allclose(s["tam_margin"][s["active"]], 0.0, atol=1e-9)
    # P(active) = P(eta_1 < kappa_tau + T - kappa_tau ...) = Phi((kappa + b)/sqrt(1 + v)) for Gaussian T
    z = -ndtri(tau)
    ph = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    v = ((1 + z * z) * tau - z * ph - (ph - z * tau) ** 2) / (tau ** 2 * (p - 1))
    pa = ndtr((gaussian_tail_mean(tau) + tail_mean_bias(p - 1, k)) / math.sqrt(1 + v))
    assert abs(s["active"].mean() - pa) < 5 * math.sqrt(pa * (1 - pa) / S)
    # the tail mean concentrates at kappa_tau: its mean is off by the first-order effects
    # only (bias b, and the push of the tail by omega_k (kappa - eta_1) <= omega_k kappa_max
    # in active rows), its variance is v (asymptotic, relative error O(1/k)), sampled with
    # relative error sqrt(2/S)
    laws = tam_score_laws(tau)
    b = tail_mean_bias(p - 1, k)
    first = abs(b) + (1 / k) * (laws.tail_mean + 5)
    assert abs(s["tail_mean"].mean() - laws.tail_mean) < 5 * math.sqrt(v / S) + first
    assert abs(s["tail_mean"].var() / v - 1) < 5 * math.sqrt(2 / S) + 5 / k
    # normalised rows: the competitors keep unit spread
    sn = tam_scores(tau, p, samples=200, rng=2)
    assert np.all(sn["row_max"] > sn["tail_mean"])


# --------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------
@pytest.mark.parametrize("kw,word", [
    (dict(tau=0.0), "tau must be"), (dict(tau=1.5), "tau must be"), (dict(tau=float("nan")), "tau must be"),
    (dict(tau=0.1, p=1), "p must be"), (dict(tau=0.1, p=2.5), "p must be"),
    (dict(tau=0.1, margin=-0.1), "margin must be"), (dict(tau=0.1, margin=21), "margin must be"),
    (dict(tau=0.1, p=10, samples=1), "samples must be"), (dict(tau=0.1, p=10, rng=1.5), "rng must be"),
    (dict(tau=0.5, p=10**15), "samples \\* \\(order statistics"),
])
def test_bad_input(kw, word):
    with pytest.raises(ValueError, match=word):
        tam_capacity(**kw)


def test_bad_input_other_functions():
    with pytest.raises(ValueError, match="q must be"):
        tam_free_entropy(1.0, 0.1, 0.5)
    with pytest.raises(ValueError, match="tau must be"):
        tam_capacity_small_tau(1.0)
    with pytest.raises(ValueError, match="k must be"):
        tail_mean_bias(10, 11.0)
    with pytest.raises(ValueError, match="samples \\* p must be"):
        tam_scores(0.1, 10**6, samples=100)
    with pytest.raises(ValueError, match="u must be"):
        CensoredNormal(0, 1).ppf(1.5)
