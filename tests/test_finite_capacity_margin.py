"""alpha_c_finite(p, margin=...): top-1 capacity at a margin (docs/theory_full_rank.md#capacity-at-a-margin).

Oracles: the values of the margin-free function before the margin existed (same
seed, same number), the exact p = 2 value, brute-force sampling of all p
normals with V by bisection, and the large-p law at a margin on the
extreme-value scale.
"""
import math

import numpy as np
import pytest

from replica import alpha_c, alpha_c_finite, v_p
from replica.finite_capacity import alpha_c_margin_limit
from replica.listwise import gardner_energy

#: alpha_c_finite(p, samples=20000, rng=0).value as printed (repr) by the code before
#: the margin argument was added (commit 1fe801a); margin = 0 must give the same doubles
BEFORE = {2: 1.3901315047931742, 100: 0.9618232515134699, 1000: 0.8509225460273199,
          10**6: 0.7050766852367772, 10**15: 0.5958781026763047}


@pytest.mark.parametrize("p", sorted(BEFORE))
def test_margin_zero_is_the_old_function(p):
    # BEFORE was recorded on another machine: the same draws, so only the summation order of the
    # BLAS kernels differs (seen: 1e-16 to 6e-16 relative); 1e-13 relative is rounding, nothing more.
    # The three spellings of margin 0 must agree exactly with each other on one machine.
    a = alpha_c_finite(p, samples=20000, rng=0).value
    assert a == pytest.approx(BEFORE[p], rel=1e-13, abs=0)
    assert alpha_c_finite(p, margin=0.0, samples=20000, rng=0).value == a
    assert alpha_c_finite(p, margin=0, samples=20000, rng=0).value == a


def test_margin_to_zero_is_continuous():
    # same draws: V_p moves by at most gamma * (1 + k*) * max gap ~ 1e-8 relative at gamma = 1e-9
    a = alpha_c_finite(1000, samples=20000, rng=0).value
    b = alpha_c_finite(1000, margin=1e-9, samples=20000, rng=0).value
    assert b < a and (a - b) / a < 1e-7


def test_p2_exact():
    # one competitor: V = (g + gamma)_+^2 / 4, g ~ N(0, 2): E[V] = Gamma(gamma/sqrt 2)/2
    for g in (0.3, 1.0, 2.5):
        e = alpha_c_finite(2, margin=g, samples=40000, rng=1)
        exact = math.log(2) / gardner_energy(g / math.sqrt(2))
        assert abs(e.value - exact) < 5 * e.stderr


def _brute_v(p, S, rng, margin):
    """Independent oracle: all p normals, V by bisection on the derivative x - sum (g - x)_+."""
    eta = rng.standard_normal((S, p))
    g = np.sort(eta[:, 1:], axis=1)[:, ::-1] - eta[:, :1] + margin
    lo, hi = np.zeros(S), np.maximum(g.max(axis=1), 0)
    for _ in range(60):
        mid = (lo + hi) / 2
        up = mid - np.maximum(g - mid[:, None], 0).sum(axis=1) > 0
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    x = (lo + hi) / 2
    return x * x / 2 + 0.5 * (np.maximum(g - x[:, None], 0) ** 2).sum(axis=1)


@pytest.mark.parametrize("p,S,margin", [(10, 8000, 0.5), (300, 3000, 0.5), (300, 3000, 2.0)])
def test_against_brute_force(p, S, margin):
    V = _brute_v(p, S, np.random.default_rng(p), margin)
    e = v_p(p, margin=margin, samples=5000, rng=p + 1)
    assert abs(e.value - V.mean()) < 5 * math.hypot(V.std(ddof=1) / math.sqrt(S), e.stderr)


def test_monotone_in_margin_and_product_with_rank():
    vals = [alpha_c_finite(1000, margin=g, samples=20000, rng=2).value for g in (0, 0.1, 0.5, 1, 3)]
    assert all(a > b for a, b in zip(vals, vals[1:]))
    # rank constraint: alpha_c(kappa, p; gamma) = 2 alpha_c(kappa) alpha_c(1, p; gamma), same draws
    lo = alpha_c_finite(1000, kappa=0.5, margin=0.5, samples=20000, rng=3).value
    full = alpha_c_finite(1000, margin=0.5, samples=20000, rng=3).value
    assert lo == pytest.approx(2 * alpha_c(0.5) * full, rel=1e-14)


def test_large_p_law_at_a_scaled_margin():
    """gamma = g sqrt(2 ln p): alpha_c -> 1/(2 (1+g)^2).  The ratio to the margin-free
    capacity, divided by 2, approaches that limit from below as p grows (slowly, like
    the margin-free capacity itself)."""
    g = 0.5
    lim = alpha_c_margin_limit(g)
    ratios = []
    for p in (10**3, 10**6, 10**15):
        a = alpha_c_finite(p, margin=g * math.sqrt(2 * math.log(p)), samples=20000, rng=4)
        b = alpha_c_finite(p, samples=20000, rng=5)
        ratios.append(0.5 * a.value / b.value)
        assert a.info["limit_scaled"] == pytest.approx(lim, rel=1e-14)
    assert ratios[0] < ratios[1] < ratios[2] < lim
    # a fixed margin does not change the large-p limit 1/2: its effect shrinks like
    # 1/sqrt(ln p); the scaled law at g = gamma/sqrt(2 ln p) tracks that shrinking
    assert alpha_c_margin_limit(0.0) == 0.5


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), 21, "1", None, [0.1, 0.2]])
def test_bad_margin(bad):
    with pytest.raises(ValueError, match="margin must be"):
        alpha_c_finite(10, margin=bad, samples=10)
    with pytest.raises(ValueError, match="g must be"):
        alpha_c_margin_limit(-1.0)
