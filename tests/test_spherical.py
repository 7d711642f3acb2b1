"""Spherical (HCIZ) integrals: d = 2 quadrature, Monte Carlo, and the three limits."""
import math

import numpy as np
import pytest

from hcizz import quarter_circle, qc_quantile
from hcizz.spherical import (hciz_exact_d2, hciz_mc, hciz_small_theta, quantile_coupling_value,
                             rank_one_mc, rank_one_spherical_integral, rectangular_r_transform,
                             spherical_integral)

A2 = np.array([0.5, 1.5])
B2 = np.array([1.0, 2.0])


def test_d2_quadrature_converged():
    assert hciz_exact_d2(1.0, A2, B2, n_angle=64) == pytest.approx(hciz_exact_d2(1.0, A2, B2, n_angle=1024), rel=1e-13)


def test_d2_small_theta_coefficient_exact():
    # theta^2 coefficient is m2(A) m2(B)/2 at every d; the next term is O(theta^4)
    for th in (1e-2, 1e-3):
        J = hciz_exact_d2(th, A2, B2)
        assert J / hciz_small_theta(th, A2, B2) == pytest.approx(1, abs=5 * th ** 2)


def test_d2_large_theta_laplace_rate():
    # J/theta -> sum sorted a b / d with correction -(d-1) ln(theta)/(2 d theta) + c/theta
    c = quantile_coupling_value(A2, B2)
    assert c == pytest.approx((0.5 * 1 + 1.5 * 2) / 2)
    # r(theta) = theta (J/theta - c) + ln(theta)/4 = r_inf + b/theta + O(theta^-2): the
    # successive differences must shrink in the ratio of the 1/theta increments
    # (2.857 for theta = 100, 300, 1000); the O(theta^-2) term changes it by O(1/100)
    res = []
    for th in (100.0, 300.0, 1000.0):
        J = hciz_exact_d2(th, A2, B2, n_angle=4096)     # peak width ~ theta^-1/2: resolve it
        res.append(th * (J / th - c + math.log(th) / (4 * th)))
    ratio = (res[0] - res[1]) / (res[1] - res[2])
    assert ratio == pytest.approx((1 / 100 - 1 / 300) / (1 / 300 - 1 / 1000), rel=0.03)


def test_mc_matches_d2_quadrature():
    for th in (0.3, 1.0):
        est = hciz_mc(th, A2, B2, n=20000, rng=1)
        assert abs(est.value - hciz_exact_d2(th, A2, B2)) < 5 * est.stderr


def test_mc_small_theta_d6():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 1.5, 6), rng.uniform(0.5, 1.5, 6)
    th = 0.05
    est = hciz_mc(th, a, b, n=20000, rng=2)
    # O(theta^4) remainder is ~1e-6 here, far below the standard error
    assert abs(est.value - hciz_small_theta(th, a, b)) < 5 * est.stderr + 1e-5


def test_quantile_coupling_law_vs_grid():
    # Int X_qc^2 = 1 (second moment), law quadrature vs a fine empirical grid
    assert quantile_coupling_value(quarter_circle, quarter_circle) == pytest.approx(1.0, abs=1e-6)
    grid = qc_quantile((np.arange(4000) + 0.5) / 4000)
    assert quantile_coupling_value(grid, quarter_circle) == pytest.approx(1.0, abs=1e-4)


def test_rank_one_gaussian_is_theta_squared_over_two():
    th = np.array([0.1, 0.4, 0.8, 0.95])
    assert np.allclose(rank_one_spherical_integral(th, quarter_circle), th ** 2 / 2, rtol=1e-8)
    # rectangular R-transform of the quarter circle is C(z) = z
    assert np.allclose(rectangular_r_transform(np.array([0.1, 0.5]), quarter_circle), [0.1, 0.5], rtol=1e-8)


def test_rank_one_envelope_identity():
    # dJ/dtheta = R_sym(theta) = C(theta^2)/theta for a non-Gaussian profile
    s = np.linspace(0.2, 1.8, 300)
    th, h = 0.3, 1e-5
    num = (rank_one_spherical_integral(th + h, s) - rank_one_spherical_integral(th - h, s)) / (2 * h)
    assert num == pytest.approx(rectangular_r_transform(th * th, s) / th, rel=1e-7)


def test_rank_one_importance_sampling_converges_like_one_over_d():
    th = 0.6
    dev = []
    for d in (50, 200):
        s = qc_quantile((np.arange(d) + 0.5) / d)
        est = rank_one_mc(th, s, n=4000, rng=3)
        assert est.info["ess"] > 0.5 * est.n  # the tilt removes the weight degeneracy
        dev.append(abs(est.value - th ** 2 / 2))
        assert dev[-1] < 0.5 / d + 5 * est.stderr
    assert 2 < dev[0] / dev[1] < 8  # O(1/d) finite-size correction


def test_dispatch_and_bad_input():
    assert spherical_integral(1e-3, A2, B2) == pytest.approx(hciz_exact_d2(1e-3, A2, B2))
    assert spherical_integral(2.0, A2, B2, method="large_theta") == pytest.approx(2 * 1.75)
    with pytest.raises(ValueError, match="theta"):
        spherical_integral(-1.0, A2, B2, method="exact")
    with pytest.raises(ValueError, match="method"):
        spherical_integral(1.0, A2, B2, method="nope")
    with pytest.raises(ValueError, match="b"):
        hciz_mc(1.0, A2, np.ones(3))


# ---------------------------------------------------------------------------
# annealed importance sampling (AIS)

def test_ais_matches_d2_quadrature_where_plain_mc_collapses():
    from hcizz.spherical import hciz_ais
    for th in (2.0, 30.0):
        est = hciz_ais(th, A2, B2, chains=400, levels=40, rng=11)
        exact = hciz_exact_d2(th, A2, B2, n_angle=4096)
        assert abs(est.value - exact) < 5 * est.stderr
        assert est.info["ess"] > 0.1 * est.n and est.info["levels"] == 40
    # at theta d^2 = 120 plain Haar sampling is dominated by a handful of samples
    plain = hciz_mc(30.0, A2, B2, n=20000, rng=12)
    assert plain.info["ess"] < 0.01 * plain.n


def test_ais_matches_plain_mc_d3_to_d5():
    from hcizz.spherical import hciz_ais
    rng = np.random.default_rng(5)
    for d in (3, 4, 5):
        a, b = rng.uniform(0.5, 1.5, d), rng.uniform(0.5, 1.5, d)
        th = 4.0 / d ** 2                              # theta d^2 = 4
        plain = hciz_mc(th, a, b, n=40000, rng=d)
        assert plain.info["ess"] > 0.1 * plain.n        # plain MC is reliable here
        est = hciz_ais(th, a, b, chains=300, levels=20, rng=10 + d)
        assert abs(est.value - plain.value) < 5 * math.hypot(est.stderr, plain.stderr)


def test_ais_large_theta_respects_von_neumann_and_convexity():
    from hcizz.spherical import hciz_ais
    rng = np.random.default_rng(7)
    d = 3
    a, b = rng.uniform(0.5, 1.5, d), rng.uniform(0.5, 1.5, d)
    c = quantile_coupling_value(a, b)        # (1/d) sum a_(i) b_(i): J <= theta c exactly
    thetas = (2.0, 8.0, 32.0)                # theta d^2 up to 288
    ratios, ses = [], []
    for th in thetas:
        est = hciz_ais(th, a, b, chains=300, levels=100, rng=int(th))
        assert est.info["ess"] > 0.05 * est.n
        assert -5 * est.stderr < est.value < th * c + 5 * est.stderr   # Jensen (E T = 0), von Neumann
        ratios.append(est.value / th)
        ses.append(est.stderr / th)
    # J is a cumulant generating function (convex, J(0) = 0) so J/theta is nondecreasing
    for i in range(2):
        assert ratios[i + 1] > ratios[i] - 5 * math.hypot(ses[i], ses[i + 1])
    # ... and approaches c from below; the Laplace rate (d - 1) ln(theta) / (2 d theta) predicts
    # the gap to shrink by 0.31 from theta = 2 to 32 (plus an O(1/theta) term)
    gaps = c - np.array(ratios)
    assert gaps[2] > -5 * ses[2]
    assert gaps[2] < 0.5 * gaps[0]


def test_ais_dispatch_and_bad_input():
    est = spherical_integral(3.0, A2, B2, method="ais", n=200, levels=20, rng=0)
    assert abs(est.value - hciz_exact_d2(3.0, A2, B2)) < 5 * est.stderr
    assert est.info["method"] == "ais"
    from hcizz.spherical import hciz_ais
    with pytest.raises(ValueError, match="chains"):
        hciz_ais(1.0, A2, B2, chains=1)
    with pytest.raises(ValueError, match="b"):
        hciz_ais(1.0, A2, np.ones(3))
    with pytest.raises(ValueError, match="b"):
        spherical_integral(1.0, A2, None, method="ais")


# ------------------------------------------------- rank one across the transition, large d
import mpmath  # noqa: E402

from hcizz.spherical import log_bessel_i, rank_one_mc, rank_one_spherical_integral  # noqa: E402


def _mp_rank_one_qc(theta, dps=25):
    """Independent mpmath evaluation of the variational formula for the quarter
    circle: min over gamma >= 2 theta of gamma - E ln(gamma^2 - theta^2 s^2)/2 - 1,
    E over rho(s) = sqrt(4 - s^2)/pi on [0, 2] by mpmath.quad; saddle by findroot."""
    with mpmath.workdps(dps):
        th = mpmath.mpf(theta)

        def E(f):
            return mpmath.quad(lambda s: f(s) * mpmath.sqrt(4 - s * s) / mpmath.pi, [0, 1, 2])

        def F(g):
            return g - E(lambda s: mpmath.log(g * g - th * th * s * s)) / 2 - 1

        def dF(g):
            return 1 - E(lambda s: g / (g * g - th * th * s * s))

        edge = 2 * th
        if dF(edge) >= 0:      # the minimum of the convex F sits at the edge (frozen)
            return F(edge)
        g = mpmath.findroot(dF, (edge * (1 + mpmath.mpf(10) ** -8), edge + 2 + th * th), solver="anderson")
        return F(g)


@pytest.mark.parametrize("theta", [0.3, 0.9, 0.999, 1.001, 1.2, 2.0, 5.0, 10.0])
def test_rank_one_across_transition_matches_mpmath(theta):
    got = rank_one_spherical_integral(theta, quarter_circle)
    ref = float(_mp_rank_one_qc(theta))
    closed = theta ** 2 / 2 if theta <= 1 else 2 * theta - math.log(theta) - 1.5
    # mpmath (25 digits) vs closed form: both exact to ~1e-15 (quad of an
    # edge-singular log converges to working precision on the split [0, 1, 2])
    assert abs(ref - closed) < 1e-12
    # Gauss-Legendre (400 nodes, cubic edge map) on an integrand with a log
    # singularity at the edge: measured error 1.4e-14; 1e-11 leaves margin
    assert math.isfinite(got) and abs(got - ref) < 1e-11 * max(1.0, ref)


def test_rank_one_continuous_across_transition():
    # value and slope continuous at theta = 1: J(1 +- h) = 1/2 +- h + O(h^2)
    h = 1e-6
    lo, hi = rank_one_spherical_integral(np.array([1 - h, 1 + h]), quarter_circle)
    assert abs((hi - lo) / (2 * h) - 1.0) < 1e-4  # slope 1 on both sides; O(h) + rounding/h
    assert abs(rank_one_spherical_integral(1.0, quarter_circle) - 0.5) < 1e-12


@pytest.mark.parametrize("nu", [0.0, 0.5, 7.0, 49.0, 50.0, 199.0, 499.0, 999.0])
def test_log_bessel_i_matches_mpmath(nu):
    ks = np.array([1e-12, 1e-6, 1e-2, 1.0, 30.0, 1e3, 1e5])
    got = log_bessel_i(nu, ks)
    with mpmath.workdps(30):
        ref = np.array([float(mpmath.log(mpmath.besseli(nu, k))) for k in ks])
    # direct branch: scipy ive to a few ulp; Debye branch (nu >= 50): the
    # neglected u_5 / nu^5 term is below 1e-11 (measured worst 7e-12 at nu = 50)
    assert np.all(np.abs(got - ref) <= 1e-10 * np.maximum(1.0, np.abs(ref)))


@pytest.mark.parametrize("d, theta", [(400, 0.01), (1000, 0.1), (1000, 1.0), (2000, 0.5)])
def test_rank_one_mc_large_d_equal_singular_values_exact(d, theta):
    # A = s O: u^T A v = s u_1 in law for every v, so every weight is the same and
    # the estimator must equal the exact J = (ln Gamma(d/2) + nu ln(2/k) + ln I_nu(k)) / d,
    # k = theta d s, evaluated here in mpmath
    s = 1.5
    e = rank_one_mc(theta, np.full(d, s), n=50, rng=0)
    nu, k = d / 2 - 1, theta * d * s
    with mpmath.workdps(30):
        ref = float((mpmath.loggamma(mpmath.mpf(d) / 2) + nu * mpmath.log(2 / mpmath.mpf(k))
                     + mpmath.log(mpmath.besseli(nu, k))) / d)
    # all weights equal up to rounding: relative error ~1e-13 of the O(theta d) terms
    assert abs(e.value - ref) < 1e-11 * max(1.0, abs(ref)) and e.stderr < 1e-12


def test_haar_from_ortho_group_is_the_qr_construction():
    # oracle: QR of a Gaussian matrix with the signs of diag(R) divided out (Mezzadri 2007),
    # written out here; scipy's ortho_group must give the same draws bit for bit, so the Monte
    # Carlo streams (and stored numbers) of hciz_mc / hciz_ais are unchanged
    from hcizz.spherical.monte_carlo import _haar
    for n, d in ((4, 1), (3, 2), (50, 6)):
        g = np.random.default_rng(7).standard_normal((n, d, d))
        q, r = np.linalg.qr(g)
        ref = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
        got = _haar(np.random.default_rng(7), n, d)
        assert got.shape == (n, d, d) and np.array_equal(got, ref)
        # orthogonal to rounding: d terms of size <= 1, error ~ d eps
        assert np.abs(got @ np.swapaxes(got, 1, 2) - np.eye(d)).max() < 1e-14
