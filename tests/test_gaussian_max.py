"""gaussian_max_moments against exact small cases and mpmath quadrature of n phi Phi^(n-1)."""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from replica import gaussian_max_moments


def test_exact_small_n():
    m1, m2 = gaussian_max_moments(2)
    assert abs(m1 - 1 / math.sqrt(math.pi)) < 1e-13 and abs(m2 - 1) < 1e-13
    m1, m2 = gaussian_max_moments(3)
    assert abs(m1 - 1.5 / math.sqrt(math.pi)) < 1e-13
    assert abs(m2 - (1 + math.sqrt(3) / (2 * math.pi))) < 1e-13


def _mp_moments(n):
    """Direct quadrature in x of x^k n phi(x) Phi(x)^(n-1), 20 digits, split at the peak."""
    mp.mp.dps = 20
    n = mp.mpf(n)
    c = mp.sqrt(2 * mp.log(n))
    pts = sorted(set([-mp.inf, -10, -3, 0, 3, 10, mp.inf] + [c - 3, c - 1, c, c + 1, c + 3]))
    f = lambda x, k: x ** k * n * mp.npdf(x) * mp.ncdf(x) ** (n - 1)
    return [mp.quad(lambda x: f(x, k), pts) for k in (1, 2)]


@pytest.mark.parametrize("n", [7, 10**6, 10**15])
def test_against_mpmath(n):
    ref = _mp_moments(n)
    got = gaussian_max_moments(n)
    for g, r in zip(got, ref):
        assert abs(g / float(r) - 1) < 1e-10


def test_vectorised_matches_scalar():
    ns = np.array([2, 10, 1e5, 1e15])
    m1, m2 = gaussian_max_moments(ns)
    for i, n in enumerate(ns):
        assert (m1[i], m2[i]) == gaussian_max_moments(n)


@pytest.mark.parametrize("bad", [1, 1.9, 2e15, float("nan"), "3", None, [3, 1]])
def test_bad_input(bad):
    with pytest.raises(ValueError, match="n must be"):
        gaussian_max_moments(bad)


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=2, max_value=1e15))
def test_properties(n):
    m1, m2 = gaussian_max_moments(n)
    var = m2 - m1 * m1
    assert 0 < var < 1                     # max of N(0,1)s: 0 < Var < 1
    assert m1 > 0 and m1 < math.sqrt(2 * math.log(n)) + 1e-12   # E M_n <= sqrt(2 ln n)
    assert gaussian_max_moments(min(2 * n, 1e15))[0] >= m1
