"""replica.pinned_scores: the V_p minimiser's scores against a scalar minimiser, closed forms at p = 2
and the order-statistics sampler of E[V_p]."""
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from replica import v_p
from replica.pinned_scores import pinned_scores


def _draws(p, S, seed):
    # the documented draw order: eta_1 of all rows, then the (S, p - 1) competitors
    rng = np.random.default_rng(seed)
    return rng.standard_normal(S), rng.standard_normal((S, p - 1))


def test_against_scalar_minimiser():
    p, S = 12, 40
    s = pinned_scores(p, samples=S, rng=7, n_top=p - 1, normalise=False)
    e1, comp = _draws(p, S, 7)
    for i in range(S):
        f = lambda x: x * x / 2 + 0.5 * np.sum(np.maximum(comp[i] - e1[i] - x, 0) ** 2)
        r = minimize_scalar(f, bounds=(0, 10), method="bounded", options={"xatol": 1e-12})
        x = r.x if r.fun < f(0.0) else 0.0
        # f is strictly convex with curvature >= 1, so |x - x*| <= sqrt(2 (f(x) - f*)) ~ 1e-6
        assert abs(s["x"][i] - x) < 1e-5
        assert abs(s["V"][i] - f(x)) < 1e-9
        after = np.minimum(np.sort(comp[i])[::-1], e1[i] + s["x"][i])
        np.testing.assert_allclose(s["top"][i], after, rtol=0, atol=1e-12)


def test_correct_score_is_mean_of_active_set():
    s = pinned_scores(200, samples=300, rng=3, n_top=199, normalise=False)
    e1, comp = _draws(200, 300, 3)
    top = -np.sort(-comp, axis=1)
    for i in range(300):
        k = s["k_active"][i]
        ref = (e1[i] + top[i, :k].sum()) / (k + 1)
        assert abs(s["correct"][i] - ref) < 1e-12       # a few roundings of O(1) numbers
        assert np.all(top[i, :k] > s["correct"][i]) and (k == 199 or top[i, k] <= s["correct"][i])
    assert np.all(s["margin"][s["k_active"] > 0] == 0.0)


def test_p2_closed_form():
    # p = 2: c = eta_1 + (eta_2 - eta_1)_+ / 2, so E[c] = E[(eta_2 - eta_1)_+] / 2 = 1 / (2 sqrt(pi))
    s = pinned_scores(2, samples=200_000, rng=1, n_top=1, normalise=False)
    c = s["correct"]
    se = c.std(ddof=1) / math.sqrt(c.size)
    assert abs(c.mean() - 1 / (2 * math.sqrt(math.pi))) < 5 * se
    # and E[V_2] = 1/4
    assert abs(s["V"].mean() - 0.25) < 5 * s["V"].std(ddof=1) / math.sqrt(c.size)


@pytest.mark.parametrize("p", [50, 400])
def test_mean_v_against_order_statistics_sampler(p):
    s = pinned_scores(p, samples=20_000, rng=p, normalise=False)
    ev = v_p(p, samples=20_000, rng=p + 1)           # Renyi order statistics + control variates
    se = math.hypot(s["V"].std(ddof=1) / math.sqrt(s["V"].size), ev.stderr)
    assert abs(s["V"].mean() - ev.value) < 5 * se


def test_zero_margin_mass_and_normalisation():
    p, S = 100, 20_000
    s = pinned_scores(p, samples=S, rng=2)
    frac = np.mean(s["margin"] == 0.0)
    # P(k* >= 1) = 1 - 1/p exactly (eta_1 is not the largest of p); binomial 5-sigma band
    assert abs(frac - (1 - 1 / p)) < 5 * math.sqrt((1 / p) * (1 - 1 / p) / S)
    assert np.all(s["margin"] >= 0) and np.all(np.diff(s["top"], axis=1) <= 0)
    assert np.allclose(s["gaps"], s["correct"][:, None] - s["top"])


@pytest.mark.parametrize("kw,word", [({"p": 1}, "p must be"), ({"p": 2}, "p must be >= 3"),
                                     ({"p": 10, "samples": 1}, "samples must be"),
                                     ({"p": 10, "n_top": 10}, "n_top must be"),
                                     ({"p": 10**6, "samples": 100}, "samples \\* p"),
                                     ({"p": 10, "rng": 1.5}, "rng must be")])
def test_bad_input(kw, word):
    with pytest.raises(ValueError, match=word):
        pinned_scores(**kw)


@pytest.mark.parametrize("mod", ["replica.pinned_scores", "replica.finite_capacity"])
def test_docstring_examples(mod):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(mod))
    assert res.failed == 0 and res.attempted > 0
