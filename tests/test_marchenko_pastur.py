"""Marchenko-Pastur law: closed-form CDF, tails, moments, sampling, atoms."""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from hcizz import marchenko_pastur


def _ref_cdf(law, x):
    lam = law.ratio
    lm, lp = law.edges
    with mp.workdps(30):
        f = lambda t: mp.sqrt((lp - t) * (t - lm)) / (2 * mp.pi * lam * t) / min(1, 1 / lam)  # noqa: E731
        return mp.quad(f, [lm, x]), mp.quad(f, [x, lp])


@pytest.mark.parametrize("ratio", [0.01, 0.3, 0.9, 1.0, 2.5])
def test_cdf_and_sf_relative_accuracy(ratio):
    law = marchenko_pastur(ratio)
    lm, lp = law.edges
    w = lp - lm
    for x in [lm + 1e-9 * w, lm + 1e-3 * w, lm + 0.3 * w, lm + 0.8 * w, lp - 1e-3 * w, lp - 1e-9 * w]:
        lo, hi = _ref_cdf(law, x)
        assert float(law.cdf(x)) == pytest.approx(float(lo), rel=1e-12)
        assert float(law.sf(x)) == pytest.approx(float(hi), rel=1e-12)


@pytest.mark.parametrize("ratio", [0.1, 0.5, 1.0, 3.0])
def test_mass_moments_roundtrip(ratio):
    law = marchenko_pastur(ratio)
    assert law.atom == pytest.approx(max(0, 1 - 1 / ratio))
    assert law.cdf(law.edges[1]) == 1.0 and law.cdf(law.edges[0]) == 0.0
    # full law: atom + (1 - atom) * nonzero part; mean 1, second moment 1 + ratio
    assert (1 - law.atom) * law.moment(1) == pytest.approx(1.0, rel=1e-14)
    assert (1 - law.atom) * law.moment(2) == pytest.approx(1 + ratio, rel=1e-14)
    assert (1 - law.atom) * law.moment(3) == pytest.approx(1 + 3 * ratio + ratio ** 2, rel=1e-14)
    # moments against numerical integration of the pdf (independent of Narayana sums)
    for k in (1, 2, 3, 4):
        q = law.expect(lambda x: x ** k)
        assert law.moment(k) == pytest.approx(q, rel=1e-9)
    lm, lp = law.edges
    x = lm + (lp - lm) * np.linspace(0, 1, 2001)
    c = law.cdf(x)
    keep = c < 1 - 1e-6  # ppf(cdf) loses accuracy where cdf rounds to 1; isf covers that side
    assert np.max(np.abs(law.ppf(c[keep]) - x[keep])) < 1e-12
    s = law.sf(x)
    keep = s < 1 - 1e-6
    assert np.max(np.abs(law.isf(s[keep]) - x[keep])) < 1e-12


def test_moments_against_samples():
    law = marchenko_pastur(0.5)
    n = 200_000
    s = law.rvs(size=n, rng=7)
    for k in (1, 2, 3):
        v = s ** k
        assert abs(v.mean() - law.moment(k)) < 5 * v.std() / math.sqrt(n)


@pytest.mark.slow
def test_moments_against_1e6_samples():
    law = marchenko_pastur(0.25)
    n = 10 ** 6
    s = law.rvs(size=n, rng=8)
    for k in (1, 2, 3):
        v = s ** k
        assert abs(v.mean() - law.moment(k)) < 5 * v.std() / math.sqrt(n)


def test_wishart_eigenvalues_ks():
    d, m = 600, 300
    x = np.random.default_rng(2).standard_normal((d, m))
    ev = np.linalg.eigvalsh(x.T @ x / d)
    # eigenvalues are rigid: KS distance O(log d / d), far below the iid 1/sqrt(m)
    assert stats.kstest(ev, marchenko_pastur(m / d).cdf).statistic < 10 / m


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), None])
def test_bad_ratio(bad):
    with pytest.raises(ValueError, match="ratio"):
        marchenko_pastur(bad)


# ---------------------------------------------------------------------------
# property-based tests over the whole parameter domain (hypothesis)
from hypothesis import given, settings, strategies as st  # noqa: E402
from scipy import integrate  # noqa: E402

from hcizz import mp_moment  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(st.floats(min_value=1e-3, max_value=100.0), st.floats(min_value=1e-6, max_value=1 - 1e-6))
def test_properties(ratio, u):
    law = marchenko_pastur(ratio)
    lm, lp = law.edges
    x = float(law.ppf(u))
    assert lm <= x <= lp and abs(float(law.cdf(x)) - u) < 1e-12
    assert law.atom == pytest.approx(max(0.0, 1 - 1 / ratio), abs=1e-15)
    # mass and mean of the full law by adaptive quadrature of the density (with its
    # 1/sqrt edge singularities) against 1 and the Narayana moment (independent paths)
    # full-law density sqrt((lp - y)(y - lm)) / (2 pi ratio y): algebraic weights at the edges
    w = dict(epsabs=1e-13, limit=200, weight="alg")
    scale = 1 / (2 * math.pi * ratio)
    if lm > 0:
        m0, e0 = integrate.quad(lambda y: 1 / y, lm, lp, wvar=(0.5, 0.5), **w)
    else:                                   # ratio = 1: y^(-1/2) at the hard edge
        m0, e0 = integrate.quad(lambda y: 1.0, lm, lp, wvar=(-0.5, 0.5), **w)
    m1, e1 = integrate.quad(lambda y: 1.0, lm, lp, wvar=(0.5, 0.5), **w)
    assert abs(law.atom + scale * m0 - 1) < 10 * scale * e0 + 1e-12
    assert abs(scale * m1 - mp_moment(1, ratio)) < 10 * scale * e1 + 1e-12


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))))
def test_rejects_ratio_outside(ratio):
    with pytest.raises(ValueError, match=r"^ratio must be a .*real number .*, got"):
        marchenko_pastur(ratio)
    with pytest.raises(ValueError, match=r"^ratio must be"):
        mp_moment(2, ratio)
