"""Hebbian rule: exact score moments vs simulation, Gaussian-model quadrature vs mpmath, thresholds."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from replica import (HEBBIAN_LIMIT, hebbian, hebbian_recall_probability, hebbian_score_moments,
                     hebbian_simulate, hebbian_threshold)


@pytest.mark.parametrize("d,p", [(12, 30), (25, 60)])
def test_exact_score_moments_by_simulation(d, p):
    r = hebbian_simulate(d, p, trials=300, rng=d)
    for key, ref in [("competitor_var", d * d * (p + 2 + 2 * d)), ("correct_mean", d * d),
                     ("correct_var", d * d * (p + 3 + 4 * d))]:
        e = r[key]
        assert abs(e.value - ref) < 5 * e.stderr, key


def test_model_quadrature_against_mpmath():
    d, p = 40.0, 150.0
    m, s = hebbian_score_moments(d, p)
    mp.mp.dps = 20
    P1 = mp.quad(lambda z: mp.npdf(z) * mp.ncdf(m + s * z) ** (p - 1), [-mp.inf, -5, 0, 5, mp.inf])
    assert abs(hebbian_recall_probability(d, p, all_facts=False) - float(P1)) < 1e-10
    assert abs(hebbian_recall_probability(d, p) - float(P1 ** p)) < 1e-10 * max(float(P1 ** p), 1e-300) + 1e-300


def test_threshold_is_half_and_tends_to_eighth():
    for d in [50.0, 1e3]:
        a = hebbian_threshold(d)
        p = math.exp(float(mp.lambertw(a * d * d).real))     # p ln p = a d^2
        assert abs(hebbian_recall_probability(d, p) - 0.5) < 1e-8
    big = hebbian_threshold(np.array([1e6, 1e9, 1e12]))
    assert np.all(np.diff(big) < 0) and np.all(big > HEBBIAN_LIMIT)   # approaches 1/8 from above
    assert big[-1] - HEBBIAN_LIMIT < 0.01
    single = hebbian_threshold(1e12, all_facts=False)
    assert 0.5 < single < 0.53


def test_simulation_vs_model_recall():
    """Direct simulation vs the Gaussian model (MC with stderr).  Where the model gives ~0 the
    simulation recalls no instance fully; at p << d the model is pessimistic (it treats the
    O(d^3) score terms, which are shared across competitors, as independent noise): this is a
    measured property, shown in the report, not hidden."""
    r = hebbian_simulate(20, 150, trials=40, rng=2)
    assert hebbian_recall_probability(20, 150) < 1e-6 and r["all"].value == 0.0
    r = hebbian_simulate(60, 20, trials=200, rng=1)
    model = hebbian_recall_probability(60, 20)
    assert r["all"].value > model + 5 * r["all"].stderr
    assert r["single"].value > hebbian_recall_probability(60, 20, all_facts=False)


def test_entry_point():
    h = hebbian(200, alpha=0.05)
    assert abs(h.p * math.log(h.p) / 200 ** 2 - 0.05) < 1e-9
    assert h.limit == 0.125 and 0 <= h.p_all <= h.p_single <= 1
    h2 = hebbian(200)
    assert math.isnan(h2.p) and h2.alpha_threshold == h.alpha_threshold


@pytest.mark.parametrize("call,match", [
    (lambda: hebbian_recall_probability(0.5, 10), "d must be"),
    (lambda: hebbian_recall_probability(10, 1), "p must be"),
    (lambda: hebbian_recall_probability(10, float("nan")), "p must be"),
    (lambda: hebbian_threshold(10, level=1.0), "level must be"),
    (lambda: hebbian(10, 5, alpha=0.1), "not both"),
    (lambda: hebbian(10, alpha=-1), "alpha must be"),
    (lambda: hebbian_simulate(10, 1), "p must be"),
    (lambda: hebbian_simulate(10, 5, problem="XX"), "problem must be"),
    (lambda: hebbian_simulate("10", 5), "d must be"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1, max_value=1e6), st.floats(min_value=2, max_value=1e8))
def test_properties(d, p):
    pa = hebbian_recall_probability(d, p)
    p1 = hebbian_recall_probability(d, p, all_facts=False)
    assert 0 <= pa <= p1 + 1e-15 <= 1 + 1e-15
    assert hebbian_recall_probability(d, 2 * p) <= pa + 1e-12
