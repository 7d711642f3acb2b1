"""The tail-mean law and the Hebbian memory under the tail-average margin (TAM).

Oracles: closed forms of the tail-mean law (k = 1: the maximum, k = m: the sample mean),
Monte Carlo of sorted normals with its standard error, the top-1 conditional model at k = 1,
and a direct simulation of the Hebbian memory (its own code path: matrices, fresh competitors,
weighted tail means)."""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from replica import (hebbian_recall_probability, hebbian_tam_probability, hebbian_tam_threshold,
                     hebbian_threshold, p_from_load)
from replica.listwise import tail_mean_sf


def _tail_means(X, k):
    """Weighted tail mean of every row of X (its own implementation of T_k)."""
    K = math.ceil(k - 1e-12)
    top = -np.sort(-X, axis=1)[:, :K]
    w = np.full(K, 1.0 / k)
    w[-1] = (k - K + 1) / k
    return top @ w


@pytest.mark.parametrize("m,tol", [(2, 5e-5), (4, 1e-5), (30, 1e-5), (157, 1e-5)])
def test_tail_mean_sf_is_the_sample_mean_at_k_equal_m(m, tol):
    # T_m is the mean of m standard normals: N(0, 1/m).  The lattice error of the
    # (m-1)-fold convolution and the 200-node outer rule are below 1e-5 (measured 2e-6) except
    # for one value above the K-th (K = 2): the outer integrand then has a kink at t = x and the
    # Gauss-Legendre error falls only as nodes^-2 (measured 3.8e-5 at m = 2).
    x = np.linspace(-3, 3, 25) / math.sqrt(m)
    assert np.max(np.abs(tail_mean_sf(x, m, m) - ndtr(-x * math.sqrt(m)))) < tol


@pytest.mark.parametrize("m", [1, 7, 1000])
def test_tail_mean_sf_is_the_maximum_at_k_one(m):
    x = np.linspace(-2, 5, 15)
    mp.mp.dps = 30
    ref = np.array([float(1 - mp.ncdf(mp.mpf(float(v))) ** m) for v in x])
    assert np.allclose(tail_mean_sf(x, m, 1.0), ref, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("m,k", [(2, 1.5), (20, 2.5), (99, 5.0), (150, 30.0), (155, 31.4)])
def test_tail_mean_sf_against_monte_carlo(m, k):
    rng = np.random.default_rng(int(m * 10 + k * 10))
    T = _tail_means(rng.standard_normal((100_000, m)), k)
    xs = np.quantile(T, [0.01, 0.1, 0.5, 0.9, 0.99])
    mc = (T[:, None] > xs).mean(axis=0)
    se = np.sqrt(mc * (1 - mc) / T.size)
    assert np.all(np.abs(tail_mean_sf(xs, m, k) - mc) < 4.5 * se)    # 5 points, 4.5 s.e. each


def test_tail_mean_sf_bad_input():
    with pytest.raises(ValueError, match="k"):
        tail_mean_sf(0.0, 10, 11)
    with pytest.raises(ValueError, match="m"):
        tail_mean_sf(0.0, 0.5, 1)
    with pytest.raises(ValueError, match="nodes"):
        tail_mean_sf(0.0, 10, 2, nodes=2)


@pytest.mark.parametrize("d,p", [(20, 10), (40, 40), (60, 80)])
def test_tam_reduces_to_top1_for_a_one_competitor_tail_dp(d, p):
    # tau (p - 1) < 1: the tail is the largest competitor and the DP model is the top-1 one,
    # up to the ln-interpolation of the survival function on its 1201-point grid (relative 1e-4).
    top1 = 1 - hebbian_recall_probability(d, p, problem="dp", all_facts=False)
    tam = 1 - hebbian_tam_probability(d, p, 1e-6, problem="dp", all_facts=False)
    assert abs(tam / top1 - 1) < 1e-4


def _simulate(d, p, tau, problem, trials, rng):
    """P(one fact passes), P(all pass) of W_H = U^T E under TAM, by direct simulation."""
    k = max(tau * (p - 1), 1.0)
    single, every = [], []
    for _ in range(trials):
        E = rng.standard_normal((p, d))
        U = rng.standard_normal((p, d))
        H = E @ (E.T @ U)                          # row mu: h_mu = W_H e_mu
        correct = np.einsum("ij,ij->i", H, U)
        if problem == "dp":
            comp = np.einsum("mjd,md->mj", rng.standard_normal((p, p - 1, d)), H)
        else:
            S = H @ U.T
            comp = S[~np.eye(p, dtype=bool)].reshape(p, p - 1)
        ok = correct > _tail_means(comp, k)
        single.append(ok.mean())
        every.append(ok.all())
    single, every = np.array(single), np.array(every, float)
    return (single.mean(), single.std(ddof=1) / math.sqrt(trials),
            every.mean(), every.std(ddof=1) / math.sqrt(trials))


@pytest.mark.parametrize("d,p,tau", [(20, 30, 0.2), (30, 40, 0.05), (40, 60, 0.2)])
def test_dp_model_against_direct_simulation(d, p, tau):
    """The DP model is exact given the per-input scalars; facts are taken independent.
    Direct simulation, 400 instances: single-fact and all-facts probabilities within 4 s.e."""
    s1, e1, sa, ea = _simulate(d, p, tau, "dp", 400, np.random.default_rng(d * p))
    assert abs(hebbian_tam_probability(d, p, tau, all_facts=False) - s1) < 4 * e1
    assert abs(hebbian_tam_probability(d, p, tau) - sa) < 4 * ea
    assert 0.05 < sa < 0.95                       # an informative point


@pytest.mark.parametrize("d,p", [(20, 10), (40, 40)])
def test_op_scalar_model_is_the_top1_model_at_one_competitor(d, p):
    """k = 1: the OP scalar model (Monte Carlo) against the top-1 OP conditional model (a
    quadrature of the same representation), within 4 Monte Carlo standard errors."""
    e = hebbian_tam_probability(d, p, 1e-9, problem="op", all_facts=False, samples=40_000, rng=1)
    assert abs(e.value - hebbian_recall_probability(d, p, problem="op", all_facts=False)) < 4 * e.stderr


@pytest.mark.parametrize("d,p,tau", [(20, 14, 0.2), (40, 60, 0.2)])
def test_op_scalar_model_against_direct_simulation(d, p, tau):
    """Direct simulation of W_H with the stored outputs as competitors (600 instances) against
    the OP scalar model: single-fact and all-facts probabilities within 4 combined s.e."""
    s1, e1, sa, ea = _simulate(d, p, tau, "op", 600, np.random.default_rng(d * p + 1))
    one = hebbian_tam_probability(d, p, tau, problem="op", all_facts=False)
    every = hebbian_tam_probability(d, p, tau, problem="op")
    assert abs(one.value - s1) < 4 * math.hypot(one.stderr, e1)
    assert abs(every.value - sa) < 4 * math.hypot(every.stderr, ea)


def test_op_threshold_is_the_half_level():
    e = hebbian_tam_threshold(20, 0.2, problem="op")
    lo, hi = e.info["n_bracket"]
    assert hi == lo + 1 and lo <= e.value * 400 <= hi
    # other draws (a call sizes its own): the bracket ends straddle 1/2 within 4 s.e.
    a = hebbian_tam_probability(20, lo, 0.2, problem="op")
    b = hebbian_tam_probability(20, hi, 0.2, problem="op")
    assert a.value + 4 * a.stderr > 0.5 > b.value - 4 * b.stderr and a.value > b.value


def test_tam_threshold_is_the_half_level():
    d, tau = 40, 0.2
    a = hebbian_tam_threshold(d, tau)
    assert abs(hebbian_tam_probability(d, a * d * d, tau) - 0.5) < 1e-5
    assert hebbian_tam_threshold(d, tau, all_facts=False) > 3 * a     # one typical fact: far larger


def test_tam_threshold_bad_input():
    with pytest.raises(ValueError, match="tau"):
        hebbian_tam_threshold(40, 0.0)
    with pytest.raises(ValueError, match="problem"):
        hebbian_tam_threshold(40, 0.2, problem="xp")
    with pytest.raises(ValueError, match="level"):
        hebbian_tam_threshold(40, 0.2, level=1.0)


def test_gaussian_competitor_op_model_cited_in_the_docs():
    """docs/listwise.md#the-hebbian-memory: the Gaussian-competitor OP model (the search's
    starting point) gives 0.0213 and 0.0300 at d = 20 (tau 0.05, 0.2), 4-6 % below the
    scalar model's 0.0223 and 0.0319."""
    from scipy.optimize import brentq

    from replica.hebbian import _tam_fail

    def gauss(d, tau):
        f = lambda lp: math.exp(math.exp(lp) * math.log1p(-_tam_fail(d, math.exp(lp), tau, "OP"))) - 0.5
        return math.exp(brentq(f, math.log(3.0), math.log(200.0), xtol=1e-8)) / d ** 2

    for tau, g_doc, mc_doc in [(0.05, 0.0213, 0.0223), (0.2, 0.0300, 0.0319)]:
        g, mc = gauss(20, tau), hebbian_tam_threshold(20, tau, problem="op").value
        assert round(g, 4) == g_doc and round(mc, 4) == mc_doc
        assert 0.04 <= 1 - g / mc <= 0.065
