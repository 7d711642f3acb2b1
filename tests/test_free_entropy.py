"""free_entropy / saddle: closed form in the limit, finite differences, finite-p minimiser."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from replica import alpha_c_finite, energy_G, free_entropy, saddle


def test_limit_functional_formula():
    q, a = 0.3, 0.2
    ref = 0.5 * math.log(0.7) + 0.3 / 1.4 - 0.2 / 0.7
    assert abs(free_entropy(q, a) - ref) < 1e-14


@pytest.mark.parametrize("alpha", [0.0, 0.05, 0.2, 0.45, 0.499])
def test_limit_saddle_by_finite_differences(alpha):
    s = saddle(alpha)
    assert abs(s.q - 2 * alpha) < 1e-15
    assert abs(s.phi - 0.5 * math.log(1 - 2 * alpha)) < 1e-13
    h = 1e-5 * (1 - s.q)
    q = max(s.q, h)
    d1 = (free_entropy(q + h, alpha) - free_entropy(q - h, alpha)) / (2 * h)
    d2 = (free_entropy(q + h, alpha) - 2 * free_entropy(q, alpha) + free_entropy(q - h, alpha)) / h ** 2
    if alpha > 0:
        assert abs(d1) < 1e-6 / (1 - s.q) ** 2 and d2 > 0
    # the minimum over a grid is not below phi
    grid = np.linspace(0, 0.9999, 20001)
    assert free_entropy(grid, alpha).min() >= s.phi - 1e-12


def test_limit_beyond_capacity():
    s = saddle(np.array([0.5, 0.7]))
    assert np.all(s.q == 1) and np.all(np.isneginf(s.phi))


def test_finite_p_minimiser_against_direct_evaluation():
    """The spline-based minimiser against direct G_p with the same disorder (common seed)."""
    p, S, alpha = 1000, 120, 0.3
    s = saddle(alpha, p, samples=S, rng=4)
    h = 0.03
    qs = np.array([s.q - h, s.q, s.q + h])
    direct = free_entropy(qs, alpha, p, samples=S, rng=4)    # same eta draws
    # With the same draws both are the same linear functional of the per-sample ln f
    # (the control-variate mean is linear in the samples), so the only difference is
    # the cubic-spline interpolation error in r = sqrt(1-q) (O(h^4)).  Estimate it by
    # halving the step (n_grid 16 -> 31, nested nodes): e_16 ~ (phi_16 - phi_31) 16/15
    # (phi is a minimum, so the shift of q* is second order); allow 3x that.
    fine = saddle(alpha, p, samples=S, rng=4, n_grid=31)
    err16 = abs(s.phi - fine.phi) * 16 / 15
    assert abs(direct.value[1] - s.phi) < 3 * err16 + 1e-12
    assert abs(direct.value[1] - s.phi) < 1e-5 * abs(s.phi)    # and it is small
    assert direct.value[0] > direct.value[1] and direct.value[2] > direct.value[1]
    # the delta-method errors are positive and below the Monte Carlo scale 1/sqrt(S)
    assert 0 < s.q < 1 and 0 < s.q_stderr < 1 / math.sqrt(S) and 0 < s.phi_stderr < 1 / math.sqrt(S)
    # the capacity of the CRN functional agrees with alpha_c_finite
    ac = alpha_c_finite(p, samples=20000, rng=1)
    se_crn = s.alpha_c * s.info["E_V_stderr"] / s.info["E_V"]
    assert abs(s.alpha_c - ac.value) < 5 * math.hypot(ac.stderr, se_crn)


def test_finite_p_beyond_capacity():
    s = saddle(np.array([0.2, 5.0]), 50, samples=60, rng=0)
    assert s.q[1] == 1 and np.isneginf(s.phi[1])
    assert s.q[0] < 1 and np.isfinite(s.phi[0])


@pytest.mark.parametrize("kw,match", [
    (dict(q=1.0, alpha=0.1), "q must be"), (dict(q=-0.2, alpha=0.1), "q must be"),
    (dict(q=0.2, alpha=-0.1), "alpha must be"), (dict(q=0.2, alpha=float("nan")), "alpha must be"),
    (dict(q=0.2, alpha=0.1, p=1), "p must be"), (dict(q="a", alpha=0.1), "q must be"),
])
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        free_entropy(**kw)


@pytest.mark.parametrize("kw,match", [
    (dict(alpha=-1), "alpha must be"), (dict(alpha=float("nan")), "alpha must be"),
    (dict(alpha=0.1, p=1), "p must be"), (dict(alpha=0.1, p=2.2), "p must be"),
    (dict(alpha=[0.1, -0.1]), "alpha must be"),
])
def test_bad_saddle_input(kw, match):
    with pytest.raises(ValueError, match=match):
        saddle(**kw)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0, max_value=0.499), st.floats(min_value=0, max_value=0.999))
def test_phi_is_infimum(alpha, q):
    s = saddle(alpha)
    assert free_entropy(q, alpha) >= s.phi - 1e-12


_NOT_ALPHA = st.one_of(st.floats(max_value=0.0, exclude_max=True), st.just(float("nan")),
                       st.just(float("inf")))


@settings(max_examples=30, deadline=None)
@given(_NOT_ALPHA)
def test_rejects_alpha_outside(alpha):
    with pytest.raises(ValueError, match=r"^alpha must be a real number in \[0, inf\), got"):
        free_entropy(0.2, alpha)
    with pytest.raises(ValueError, match=r"^alpha must be a real number in \[0, inf\), got"):
        saddle([0.1, alpha])
    with pytest.raises(ValueError, match=r"^alpha must be"):
        saddle(alpha, 10, samples=10)
