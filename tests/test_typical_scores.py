"""replica.pinned_scores.typical_scores: the scores of a typical memory at overlap q < 1, against closed
forms (q = 0, p = 2), a brute-force rejection sampler and the q -> 1 limit (pinned_scores)."""
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import ks_2samp, norm

from replica import gaussian_max_moments
from replica.pinned_scores import pinned_scores, typical_scores


def _se(x):
    return x.std(ddof=1) / math.sqrt(x.size)


def test_q0_is_the_maximum_of_p_normals():
    # q = 0: no quenched part; the correct score is the largest of p i.i.d. normals
    p, S = 20, 40_000
    s = typical_scores(p, 0.0, samples=S, rng=3, normalise=False, n_top=p - 1)
    m1, m2 = gaussian_max_moments(p)
    c = s["correct"]
    assert abs(c.mean() - m1) < 5 * _se(c)                       # 5 Monte Carlo standard errors
    assert abs(np.mean(c * c) - m2) < 5 * _se(c * c)
    assert np.all(s["margin"] > 0) and np.all(np.diff(s["top"], axis=1) <= 0)


@pytest.mark.parametrize("q", [0.5, 0.95, 0.999])
def test_p2_closed_forms(q):
    # p = 2, D = eta_1 - eta_2 ~ N(0, 2), b = beta D.  Given eta:
    #   E[xi] = phi(b/sqrt2) / (sqrt2 Phi(b/sqrt2))      (integrate xi phi(xi) Phi(xi + b) by parts),
    #   margin X = sqrt(q) D + sqrt(1-q) (xi - zeta) is N(sqrt(q) D, 2(1-q)) conditioned on X > 0.
    p, S = 2, 200_000
    s = typical_scores(p, q, samples=S, rng=11, normalise=False, n_top=1)
    beta, sr, sq = math.sqrt(q / (1 - q)), math.sqrt(1 - q), math.sqrt(q)
    dens = lambda D: norm.pdf(D / math.sqrt(2)) / math.sqrt(2)
    mills = lambda t: math.exp(norm.logpdf(t) - norm.logcdf(t))
    e_corr = quad(lambda D: dens(D) * sr * mills(beta * D / math.sqrt(2)) / math.sqrt(2), -40, 40,
                  limit=400, epsabs=1e-12)[0]
    sd = sr * math.sqrt(2)
    e_marg = quad(lambda D: dens(D) * (sq * D + sd * mills(sq * D / sd)), -40, 40, limit=400, epsabs=1e-12)[0]
    # quadrature error ~1e-10, far below the Monte Carlo standard errors (~1e-3)
    assert abs(s["correct"].mean() - e_corr) < 5 * _se(s["correct"])
    assert abs(s["margin"].mean() - e_marg) < 5 * _se(s["margin"])
    np.testing.assert_allclose(s["margin"], s["gaps"][:, 0], rtol=0, atol=1e-9)   # two routes, O(1) numbers


def test_against_brute_force_rejection():
    # draw zeta for each eta until the correct candidate wins (q = 0.3 keeps E[1/f_p] finite and small)
    p, q, S = 6, 0.3, 20_000
    rng = np.random.default_rng(5)
    eta = rng.standard_normal((S, p))
    z = np.empty_like(eta)
    todo = np.arange(S)
    while todo.size:
        zz = math.sqrt(q) * eta[todo] + math.sqrt(1 - q) * rng.standard_normal((todo.size, p))
        ok = zz[:, 0] > zz[:, 1:].max(axis=1)
        z[todo[ok]] = zz[ok]
        todo = todo[~ok]
    sig = z[:, 1:].std(axis=1, ddof=1)
    corr_bf = z[:, 0] / sig
    marg_bf = (z[:, 0] - z[:, 1:].max(axis=1)) / sig
    s = typical_scores(p, q, samples=S, rng=6)
    for a, b in ((s["correct"], corr_bf), (s["margin"], marg_bf)):
        assert abs(a.mean() - b.mean()) < 5 * math.hypot(_se(a), _se(b))   # two independent samples
        # same law: a KS p-value below 1e-4 would reject it (fixed seeds, so deterministic)
        assert ks_2samp(a, b).pvalue > 1e-4


def test_limit_q_to_1_is_the_v_p_minimiser():
    # same seed -> same eta (documented draw order); xi = beta x* + O(1) with xi 1-strongly log-concave
    # (sd <= 1), so sqrt(q)-scaled correct scores differ from the V_p minimiser's by O(1/beta);
    # observed max over 300 rows: 1.96/beta at both 1 - q = 1e-4 and 1e-6; bound 8/beta
    p, S = 30, 300
    r = pinned_scores(p, samples=S, rng=5, normalise=False, n_top=p - 1)
    for eps in (1e-4, 1e-6):
        q = 1 - eps
        s = typical_scores(p, q, samples=S, rng=5, normalise=False, n_top=p - 1)
        beta = math.sqrt(q / eps)
        assert np.max(np.abs(s["correct"] / math.sqrt(q) - r["correct"])) < 8 / beta


@pytest.mark.parametrize("kw,word", [({"p": 2}, "p must be an integer >= 3"), ({"p": 10, "q": 1.0}, "q must be"),
                                     ({"p": 10, "q": -0.1}, "q must be"),
                                     ({"p": 10, "samples": 1}, "samples must be"),
                                     ({"p": 10, "n_top": 10}, "n_top must be"),
                                     ({"p": 10, "newton": -1}, "newton must be"),
                                     ({"p": 10**6, "samples": 100}, "samples \\* p"),
                                     ({"p": 10, "rng": 1.5}, "rng must be")])
def test_bad_input(kw, word):
    kw = {"q": 0.5, **kw}
    with pytest.raises(ValueError, match=word):
        typical_scores(**kw)
