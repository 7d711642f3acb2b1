"""energy_G / log_f_p against closed forms, mpmath, exact sampling and the p -> inf limit."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate
from scipy.stats import norm

from replica import energy_G
from replica.energy import EtaSample, log_f_p, sample_eta


@pytest.mark.parametrize("p", [2, 50, 1000, 10**9])
def test_G_at_zero_is_minus_one(p):
    e = energy_G(0.0, p, samples=30, rng=1)
    assert abs(e.value + 1) < 1e-9 and e.stderr < 1e-9


def test_limit():
    e = energy_G(np.array([0.0, 0.5, 0.9]))
    np.testing.assert_allclose(e.value, [-1.0, -2.0, -10.0])
    assert np.all(e.stderr == 0)


@pytest.mark.parametrize("t", [0.0, 0.3, 0.9, 0.999, 0.999999])
def test_p2_closed_form_per_eta(t):
    eta = sample_eta(2, 400, np.random.default_rng(2))
    b = math.sqrt(t / (1 - t))
    exact = norm.logcdf(b * (eta.eta1 - eta.top[:, 0]) / math.sqrt(2))
    got = log_f_p(t, eta)
    np.testing.assert_allclose(got, exact, rtol=1e-11, atol=1e-12)


def _mp_logf(t, eta1, comps):
    """ln f by mpmath in log space, breakpoints around the mode (independent of log_f_p)."""
    mp.mp.dps = 18
    b = mp.sqrt(mp.mpf(t) / (1 - mp.mpf(t)))
    g = [b * (mp.mpf(eta1) - mp.mpf(c)) for c in comps]
    L = lambda x: -x ** 2 / 2 + mp.fsum(mp.log(mp.ncdf(x + gg)) for gg in g)
    dL = lambda x: -x + mp.fsum(mp.npdf(x + gg) / mp.ncdf(x + gg) for gg in g)
    xm = mp.findroot(dL, max(0, max(-gg for gg in g)))
    Lm = L(xm)
    pts = [-mp.inf] + [xm + k for k in range(-9, 10)] + [mp.inf]   # mass within +-9 (curvature <= -1)
    return float(mp.log(mp.quad(lambda x: mp.exp(L(x) - Lm), pts)) + Lm - mp.log(2 * mp.pi) / 2)


@pytest.mark.parametrize("t", [0.2, 0.99])
def test_small_p_against_mpmath(t):
    eta = sample_eta(6, 2, np.random.default_rng(5))
    got = log_f_p(t, eta)
    for s in range(2):
        ref = _mp_logf(t, eta.eta1[s], eta.top[s])
        assert abs(got[s] - ref) < 1e-10 * max(1, abs(ref))


def test_monte_carlo_p2_against_quadrature():
    # eta1 - eta2 = sqrt2 Z: G_2(t) = E ln Phi(beta Z) / ln 2, one-dimensional quadrature
    t = 0.7
    b = math.sqrt(t / (1 - t))
    ref = integrate.quad(lambda z: norm.pdf(z) * norm.logcdf(b * z), -40, 40, limit=200)[0] / math.log(2)
    e = energy_G(t, 2, samples=4000, rng=3)
    assert abs(e.value - ref) < 5 * e.stderr
    plain = energy_G(t, 2, samples=4000, rng=4, control_variates=False)
    assert abs(plain.value - ref) < 5 * plain.stderr


def test_bulk_treatment_against_exact_sampling():
    """Same eta: all 999 competitors exactly vs top above c0 + bulk mean (p = 1000)."""
    rng = np.random.default_rng(7)
    p, S, n_top = 1000, 60, 48
    ref = sample_eta(p, 1, rng, n_top)          # only to get c0
    c0 = ref.c0
    eta1 = rng.standard_normal(S)
    comps = rng.standard_normal((S, p - 1))
    exact = EtaSample(p - 1, eta1, comps, np.ones_like(comps, bool), np.zeros(S, np.int64), math.inf)
    above = comps > c0
    K = above.sum(axis=1).max()
    top = np.full((S, K), -np.inf)
    for i in range(S):
        v = comps[i][above[i]]
        top[i, :v.size] = v
    approx = EtaSample(p - 1, eta1, top, np.isfinite(top), (p - 1 - above.sum(axis=1)).astype(np.int64), c0)
    for t in (0.5, 0.9):
        le = log_f_p(t, exact)
        la, bound = log_f_p(t, approx, bulk_error=True)
        diff = la - le
        se = diff.std(ddof=1) / math.sqrt(S)
        # systematic error within the leading-order bound (plus noise)
        assert abs(diff.mean()) < bound.mean() + 5 * se
        assert abs(diff.mean()) < 0.01 * abs(le.mean())


def test_slow_convergence_to_limit():
    """G_p(0.5) approaches -2 from above, monotonically and slowly (common seeds)."""
    ps = [10, 1000, 10**6, 10**9]
    ests = [energy_G(0.5, p, samples=200, rng=11) for p in ps]
    for a, b in zip(ests, ests[1:]):
        assert b.value < a.value - 3 * math.hypot(a.stderr, b.stderr)
    assert all(e.value > -2 for e in ests)
    # still far from the limit at p = 1e9: relative corrections ~ ln ln p / ln p
    assert ests[-1].value + 2 > 0.05


@pytest.mark.parametrize("kw,match", [
    (dict(t=1.0, p=10), "t must be"), (dict(t=-0.1, p=10), "t must be"),
    (dict(t=float("nan"), p=10), "t must be"), (dict(t=0.5, p=1), "p must be"),
    (dict(t=0.5, p=2.5), "p must be"), (dict(t=0.5, p="7"), "p must be"),
    (dict(t=0.5, p=2e9), "p must be"), (dict(t=0.5, p=10, samples=1), "samples must be"),
    (dict(t=0.5, p=10, rng="x"), "rng must be"), (dict(t="0.5", p=10), "t must be"),
])
def test_bad_input(kw, match):
    t = kw.pop("t")
    with pytest.raises(ValueError, match=match):
        energy_G(t, **kw)


@settings(max_examples=12, deadline=None)
@given(st.floats(min_value=0, max_value=0.999), st.integers(min_value=2, max_value=10**9))
def test_properties(t, p):
    e = energy_G(t, p, samples=24, rng=0)
    assert np.isfinite(e.value) and np.isfinite(e.stderr)
    # E_eta f_p(t; eta) = 1/p (exchangeable scores), so Jensen gives G_p(t) <= -1
    assert e.value <= -1 + 1e-9 + 5 * e.stderr


_NOT_T = st.one_of(st.floats(max_value=0.0, exclude_max=True), st.floats(min_value=1.0),
                   st.just(float("nan")))


@settings(max_examples=30, deadline=None)
@given(_NOT_T)
def test_rejects_t_outside(t):
    with pytest.raises(ValueError, match=r"^t must be a real number in \[0, 1\), got"):
        energy_G(t)
    with pytest.raises(ValueError, match=r"^t must be a real number in \[0, 1\), got"):
        energy_G([0.5, t], 10, samples=10)


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.integers(max_value=1), st.integers(min_value=10**9 + 1),
                 st.floats(allow_nan=True).filter(lambda x: not (x == int(x) if math.isfinite(x) else False))))
def test_rejects_p_outside(p):
    with pytest.raises(ValueError, match=r"^p must be an integer in \[2, 1e\+09\], got"):
        energy_G(0.5, p, samples=10)


@pytest.mark.parametrize("p", [10, 1000])
def test_laplace_limit_near_t_one(p):
    """(1-t) G_p(t) -> -E[V_p]/ln p (docs/theory_full_rank.md) at 1 - t = 1e-15, where the brackets of the
    xi integral reach 1e8 (regression: ln f was +inf there, and the bulk table took hours);
    Laplace corrections O((1-t) ln(1/(1-t))) ~ 4e-14 are far below the standard errors."""
    from replica import v_p

    t = 1 - 1e-15
    e = energy_G(t, p, samples=200, rng=8)
    ref = v_p(p, samples=20000, rng=9)
    lp = math.log(p)
    got, se = (1 - t) * e.value * lp, (1 - t) * e.stderr * lp
    assert np.isfinite(got) and got < 0
    assert abs(got + ref.value) < 5 * math.hypot(se, ref.stderr)


# ----------------------------------------------- edges: continuation below the grid, u = 0
def test_bulk_continuation_below_grid_is_the_tangent():
    from scipy.special import log_ndtr

    from replica.energy import _Bulk

    beta, c0 = 1.0, 1.5
    bulk = _Bulk(beta, c0, -3.0, 3.0)

    def h_true(x):
        # oracle: E[ln Phi(x - beta Z) | Z < c0] by adaptive quadrature
        num = integrate.quad(lambda z: norm.pdf(z) * log_ndtr(x - beta * z), -np.inf, c0,
                             epsabs=1e-13, epsrel=1e-12)[0]
        return num / norm.cdf(c0)

    h0, h1 = h_true(-3.0), h_true(-2.999)
    xs = np.array([-3.5, -5.0, -8.0])
    h_cont = -np.exp(bulk.log_neg_h(xs))
    slope = (h1 - h0) / 1e-3  # forward difference: O(1e-3 h'') ~ 1e-3 relative
    for x, hc in zip(xs, h_cont):
        tangent = h0 + slope * (x - (-3.0))
        # the continuation is the tangent at a_lo (spline slope vs finite
        # difference: 1e-3 relative, times |x - a_lo| <= 5)
        assert abs(hc - tangent) < 1e-2 * abs(tangent)
        # and, h being concave, an overestimate of h (more negative below: h increasing)
        assert h_true(x) <= hc < h0


def test_uniform_zero_gives_finite_tail_draws(monkeypatch):
    class ZeroRng:
        """A generator whose random() returns exact zeros (possible in numpy)."""

        def __init__(self):
            self._g = np.random.default_rng(0)

        def standard_normal(self, size):
            return self._g.standard_normal(size)

        def binomial(self, n, q, size):
            return np.full(size, 3)

        def random(self, size):
            return np.zeros(size)

    eta = sample_eta(10**6, 4, ZeroRng())
    assert np.all(np.isfinite(eta.top[eta.mask]))
    # u = 2^-54: the draw is the 1 - 2^-54 q0 quantile of the tail, ~8.5 standard
    # deviations for q0 = n_top / (p - 1); finite and above the split level c0
    assert np.all(eta.top[eta.mask] > eta.c0)
