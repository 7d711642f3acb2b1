"""alpha_c_finite / V_p: exact p = 2, brute-force sampling of all p normals, monotone approach to 1/2."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import minimize_scalar

from replica import alpha_c_finite, gaussian_max_moments, v_p
from replica.finite_capacity import v_p_from_gaps
from replica.order_stats import TopNormals


def test_p2_exact():
    e = alpha_c_finite(2, samples=40_000, rng=0)
    assert abs(e.value - 2 * math.log(2)) < 5 * e.stderr
    assert abs(e.info["E_V"] - 0.25) < 5 * e.info["E_V_stderr"]
    assert e.stderr < 0.01


def test_v_from_gaps_against_scalar_minimiser():
    rng = np.random.default_rng(1)
    g = np.sort(rng.normal(size=(30, 12)) * 2, axis=1)[:, ::-1]
    V, k, ok = v_p_from_gaps(g)
    for i in range(30):
        f = lambda x: x * x / 2 + 0.5 * np.sum(np.maximum(g[i] - x, 0) ** 2)
        r = minimize_scalar(f, bounds=(0, 20), method="bounded", options={"xatol": 1e-12})
        assert abs(min(r.fun, f(0.0)) - V[i]) < 1e-9
    assert np.all(ok)


def _brute_v(p, S, rng):
    """Independent oracle: all p normals, V by bisection on the derivative."""
    eta = rng.standard_normal((S, p))
    top = -np.partition(-eta[:, 1:], min(199, p - 2), axis=1)[:, :min(200, p - 1)]
    g = top - eta[:, :1]
    lo, hi = np.zeros(S), np.maximum(g.max(axis=1), 0)
    for _ in range(60):                     # x - sum (g - x)_+ is increasing in x
        mid = (lo + hi) / 2
        up = mid - np.maximum(g - mid[:, None], 0).sum(axis=1) > 0
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    x = (lo + hi) / 2
    assert np.all((g <= x[:, None]).any(axis=1) | (p - 1 <= 200))   # active set inside top 200
    return x * x / 2 + 0.5 * (np.maximum(g - x[:, None], 0) ** 2).sum(axis=1)


@pytest.mark.parametrize("p,S", [(3, 20000), (10, 8000), (100, 4000), (1000, 2000), (10000, 600)])
def test_against_brute_force(p, S):
    V = _brute_v(p, S, np.random.default_rng(p))
    ev, se = V.mean(), V.std(ddof=1) / math.sqrt(S)
    e = v_p(p, samples=5000, rng=p + 1)
    assert abs(e.value - ev) < 5 * math.hypot(se, e.stderr)


def test_order_statistics_exact():
    rng = np.random.default_rng(3)
    m, S = 50, 4000
    top = TopNormals(m, S, rng).extend(np.arange(S), 5)
    brute = -np.sort(-rng.standard_normal((S, m)), axis=1)[:, :5]
    for k in range(5):
        se = math.hypot(top[:, k].std(), brute[:, k].std()) / math.sqrt(S)
        assert abs(top[:, k].mean() - brute[:, k].mean()) < 5 * se
    # the maximum of m = 1e12 normals: mean against the quadrature moments
    big = TopNormals(10**12, 20000, rng).extend(np.arange(20000), 1)[:, 0]
    m1, _ = gaussian_max_moments(10**12)
    assert abs(big.mean() - m1) < 5 * big.std() / math.sqrt(big.size)


def test_control_variates_unbiased():
    a = alpha_c_finite(1000, samples=4000, rng=5)
    b = alpha_c_finite(1000, samples=40000, rng=6, control_variates=False)
    assert abs(a.value - b.value) < 5 * math.hypot(a.stderr, b.stderr)
    assert a.stderr < b.stderr          # 4000 CV samples beat 40000 plain ones


def test_monotone_decrease_to_half():
    ps = [2, 10, 100, 1000, 10**6, 10**9, 10**15]
    est = [alpha_c_finite(p, samples=10000, rng=p % 1000) for p in ps]
    for a, b in zip(est, est[1:]):
        assert b.value < a.value - 3 * math.hypot(a.stderr, b.stderr)
    assert all(e.value > 0.5 + 5 * e.stderr for e in est)
    # slow: at p = 1e15 still well above 1/2
    assert est[-1].value - 0.5 > 0.05


@pytest.mark.parametrize("bad", [1, 0, -5, 2.5, float("nan"), "10", None, True, 2 * 10**15])
def test_bad_p(bad):
    with pytest.raises(ValueError, match="p must be"):
        alpha_c_finite(bad, samples=10)


def test_bad_samples_rng():
    with pytest.raises(ValueError, match="samples must be"):
        alpha_c_finite(10, samples=1)
    with pytest.raises(ValueError, match="rng must be"):
        alpha_c_finite(10, samples=10, rng=1.5)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=2, max_value=10**15))
def test_properties(p):
    e = alpha_c_finite(p, samples=400, rng=0)
    assert np.isfinite(e.value) and e.stderr > 0
    assert e.info["max_order_stats"] > e.info["max_active"] or e.info["max_order_stats"] == p - 1
    assert e.value > 0.5 - 5 * e.stderr


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.integers(max_value=1), st.integers(min_value=10**15 + 1),
                 st.floats(allow_nan=True).filter(lambda x: not (x == int(x) if math.isfinite(x) else False))))
def test_rejects_p_outside(p):
    with pytest.raises(ValueError, match=r"^p must be an integer in \[2, 1e\+15\], got"):
        alpha_c_finite(p, samples=10)
