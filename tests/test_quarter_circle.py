"""Quarter-circle law, its quantile X_qc and the truncated (capacity) spectrum."""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, stats

from hcizz import qc_quantile, qc_quantile_mp, quarter_circle, truncated_quarter_circle


def _catalan(k):
    return math.comb(2 * k, k) // (k + 1)


def test_quantile_matches_mpmath_to_machine_precision():
    u = np.concatenate([np.linspace(0, 1, 301), 10.0 ** -np.arange(1, 16),
                        1 - 10.0 ** -np.arange(1, 16)])
    x = qc_quantile(u)
    with mp.workdps(40):
        for ui, xi in zip(u, x):
            ref = qc_quantile_mp(float(ui), 40)
            # a few ulp relative (the edge region u -> 1 included)
            assert abs(mp.mpf(xi) - ref) <= 1e-15 * ref


def test_quantile_mpmath_solves_defining_equation():
    with mp.workdps(60):
        x = qc_quantile_mp(0.3, 50)
        th = mp.asin(x / 2)
        assert abs(2 * th + mp.sin(2 * th) - mp.pi * mp.mpf(0.3)) < mp.mpf(10) ** -48


def test_density_normalised_and_catalan_moments():
    f = quarter_circle.pdf
    assert integrate.quad(f, 0, 2, epsabs=1e-14)[0] == pytest.approx(1, abs=1e-12)
    for k in range(1, 7):
        assert quarter_circle.moment(2 * k) == pytest.approx(_catalan(k), rel=1e-13)
        # odd moments against direct quadrature
        q = integrate.quad(lambda s: s ** (2 * k - 1) * f(s), 0, 2, epsabs=1e-14)[0]
        assert quarter_circle.moment(2 * k - 1) == pytest.approx(q, rel=1e-11)


def test_cdf_is_integral_of_pdf_and_tails_relative():
    xs = np.array([1e-6, 0.1, 0.7, 1.3, 1.9, 2 - 1e-6, 2 - 1e-10])
    for x in xs:
      with mp.workdps(40):
        lo = mp.quad(lambda s: mp.sqrt(4 - s * s) / mp.pi, [0, x])
        hi = mp.quad(lambda s: mp.sqrt(4 - s * s) / mp.pi, [x, 2])
        assert abs(quarter_circle.cdf(x) - lo) <= 1e-14 * lo
        assert abs(quarter_circle.sf(x) - hi) <= 1e-14 * hi


def test_ppf_cdf_roundtrip():
    x = np.linspace(0, 2, 20001)
    assert np.max(np.abs(quarter_circle.ppf(quarter_circle.cdf(x)) - x)) < 1e-12
    assert np.max(np.abs(quarter_circle.isf(quarter_circle.sf(x)) - x)) < 1e-12


def test_moments_against_samples_within_stderr():
    n = 10 ** 6
    s = quarter_circle.rvs(size=n, rng=12)
    for k in (1, 2, 3, 4):
        v = s ** k
        se = v.std() / math.sqrt(n)
        assert abs(v.mean() - quarter_circle.moment(k)) < 5 * se


def test_singular_values_of_gaussian_matrix_ks():
    # singular values are rigid: the KS distance to the limit is O(log d / d), far below
    # the iid scale 1.36/sqrt(d); the bound 10/d allows the log factor (d = 1000 runs in
    # tests/test_mp_product.py and the report, where a Wishart calibration is shown)
    d = 400
    g = np.random.default_rng(3).standard_normal((d, d))
    s = np.linalg.svd(g / math.sqrt(d), compute_uv=False)
    ks = stats.kstest(s, quarter_circle.cdf).statistic
    assert ks < 10 / d


@pytest.mark.parametrize("kappa", [1.0, 0.5, 0.25, 1e-3])
def test_truncated_quarter_circle(kappa):
    law = truncated_quarter_circle(kappa)
    assert law.atom == pytest.approx(1 - kappa)
    a = law.lower
    # lower edge is X_qc(1 - kappa) from the mpmath solver
    assert a == pytest.approx(float(qc_quantile_mp(1 - kappa, 30)), abs=1e-15)
    # total mass of the full law: atom + kappa * (density mass)
    mass = integrate.quad(law.pdf, a, 2, epsabs=1e-15)[0]
    assert law.atom + kappa * mass == pytest.approx(1, abs=1e-12)
    x = np.linspace(a, 2, 5001)
    assert np.max(np.abs(law.ppf(law.cdf(x)) - x)) < 1e-12
    assert np.max(np.abs(law.isf(law.sf(x)) - x)) < 1e-12
    for k in (1, 2, 3):
        q = integrate.quad(lambda s: s ** k * law.pdf(s), a, 2, epsabs=1e-15, epsrel=1e-13)[0]
        assert law.moment(k) == pytest.approx(q, rel=1e-11)
    # cdf near the lower edge: relative accuracy vs mpmath
    for dx in (1e-9, 1e-4):
      with mp.workdps(30):
        ref = mp.quad(lambda s: mp.sqrt(4 - s * s) / (mp.pi * kappa), [a, a + dx])
        assert float(law.cdf(a + dx)) == pytest.approx(float(ref), rel=1e-9)


def test_truncated_samples_within_stderr():
    law = truncated_quarter_circle(0.5)
    n = 10 ** 6
    s = law.rvs(size=n, rng=5)
    for k in (1, 2):
        v = s ** k
        assert abs(v.mean() - law.moment(k)) < 5 * v.std() / math.sqrt(n)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan"), "a"])
def test_truncated_bad_kappa(bad):
    with pytest.raises(ValueError, match="kappa"):
        truncated_quarter_circle(bad)


def test_quantile_bad_u():
    with pytest.raises(ValueError, match="u must"):
        qc_quantile([0.2, float("nan")])
    with pytest.raises(ValueError, match="u must"):
        qc_quantile(1.5)


def test_frozen_copy_keeps_parameter():
    law = truncated_quarter_circle(0.3)
    frozen = law(scale=2.0)
    assert frozen.ppf(0.0) == pytest.approx(2 * law.lower)
    assert isinstance(law, stats.rv_continuous)


# ---------------------------------------------------------------------------
# property-based tests over the whole parameter domain (hypothesis)
from hypothesis import given, settings, strategies as st  # noqa: E402

_KAPPA = st.floats(min_value=1e-6, max_value=1.0, exclude_min=False)
_NOT_KAPPA = st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0, exclude_min=True),
                       st.just(float("nan")))


@settings(max_examples=40, deadline=None)
@given(_KAPPA, st.floats(min_value=0.0, max_value=1.0))
def test_truncated_properties(kappa, u):
    law = truncated_quarter_circle(kappa)
    x = float(law.ppf(u))
    assert law.lower <= x <= 2.0
    # round trip to rounding.  ppf returns x to within an ulp or two, and moving x by
    # one ulp moves the cdf by pdf(x) * spacing(x) (about 2e-12 for kappa = 1e-6, where
    # the density of the top quantiles is 1/kappa times that of the quarter circle);
    # the cdf evaluation itself adds a few eps.
    tol = 4 * float(law.pdf(x)) * np.spacing(x) + 8 * np.finfo(float).eps
    assert abs(float(law.cdf(x)) - u) <= tol
    # mass of the full law (quadrature of the density, independent of cdf/ppf)
    m, err = integrate.quad(law.pdf, law.lower, 2.0, epsabs=1e-14)
    assert abs(law.atom + kappa * m - 1) < 10 * kappa * err + 1e-13
    # X_qc restricted to the top kappa quantiles (away from u = 1, where forming
    # 1 - kappa + kappa u in floating point loses the digits the law keeps)
    if u <= 0.9:
        assert x == pytest.approx(qc_quantile(1 - kappa + kappa * u), abs=1e-13)


@settings(max_examples=30, deadline=None)
@given(_NOT_KAPPA)
def test_truncated_rejects_kappa_outside(kappa):
    with pytest.raises(ValueError, match=r"^kappa must be a real number in \(0, 1\], got"):
        truncated_quarter_circle(kappa)


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.floats(max_value=0.0, exclude_max=True), st.floats(min_value=1.0, exclude_min=True),
                 st.just(float("nan"))))
def test_quantile_rejects_u_outside(u):
    with pytest.raises(ValueError, match=r"^u must be a real number in \[0, 1\], got"):
        qc_quantile(u)
