"""Free product of two Marchenko-Pastur laws: the initialisation spectrum of Q R^T/sqrt(dm)."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from hcizz import mp_product, mp_product_moment
from hcizz.mp_product import mp_product_psi_imag


def test_fuss_catalan_at_kappa_one():
    law = mp_product(1.0)
    assert law.edges[0] == 0.0 and law.edges[1] == pytest.approx(27 / 4, rel=1e-15)
    for k in range(1, 7):
        fc = math.comb(3 * k, k) / (2 * k + 1)
        assert law.moment(k) == pytest.approx(fc, rel=1e-14)
        assert mp_product_moment(k, 1.0) == pytest.approx(fc, rel=1e-14)


def _free_second_moment(kappa):
    # phi((ab)^2) = phi(a^2) phi(b)^2 + phi(a)^2 phi(b^2) - phi(a)^2 phi(b)^2, MP mean 1, phi(a^2) = 1 + kappa
    return (2 * (1 + kappa) - 1) / kappa ** 2


@pytest.mark.parametrize("kappa", [1.0, 0.999, 0.5, 0.25, 0.05])
def test_density_mass_and_moments_by_quadrature(kappa):
    law = mp_product(kappa)
    assert law.atom == pytest.approx(1 - kappa)
    assert law.moment(1) == pytest.approx(1 / kappa, rel=1e-14)
    assert law.moment(2) == pytest.approx(_free_second_moment(kappa), rel=1e-14)
    # integrate the pdf (Cardano) in the smoothing variable phi with adaptive quad:
    # independent of the Lagrange-inversion moment sum and of the Chebyshev tables
    for k in range(0, 4):
        q = integrate.quad(lambda p: law._x_of_phi(p) ** k * law._dens_phi(p), 0, np.pi,
                           epsabs=1e-15, epsrel=1e-13, limit=200)[0]
        assert q == pytest.approx(mp_product_moment(k, kappa), rel=1e-11)
    assert law.quadrature_mass == pytest.approx(1.0, abs=1e-13)


def test_density_matches_stieltjes_polynomial():
    # psi = x G - 1 must solve the cubic: check the complex root rebuilt from Im psi
    kappa = 0.4
    law = mp_product(kappa)
    xm, xp = law.edges
    x = np.linspace(xm, xp, 50)[1:-1]
    im = mp_product_psi_imag(x, kappa)
    for xi, ii in zip(x, im):
        roots = np.roots([kappa ** 2, kappa ** 2 + 2 * kappa, 1 + 2 * kappa - kappa * xi, 1])
        assert np.max(np.abs(roots.imag)) == pytest.approx(ii, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("kappa", [1.0, 0.5, 0.1])
def test_cdf_ppf_roundtrip_and_edges(kappa):
    law = mp_product(kappa)
    xm, xp = law.edges
    x = xm + (xp - xm) * np.linspace(0, 1, 3001)
    c = law.cdf(x)
    keep = c < 1 - 1e-6
    assert np.max(np.abs(law.ppf(c[keep]) - x[keep])) < 1e-12
    assert law.cdf(xm) == 0.0 and law.cdf(xp) == 1.0
    # cdf against adaptive quadrature of the pdf in x
    for xi in [xm + 0.01 * (xp - xm), xm + 0.4 * (xp - xm)]:
        pts = [p for p in (10 * xm,) if xm < p < xi]
        ref = integrate.quad(law.pdf, xm, xi, epsabs=1e-14, epsrel=1e-12, limit=200, points=pts or None)[0]
        assert float(law.cdf(xi)) == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_moments_against_samples():
    law = mp_product(0.5)
    n = 200_000
    s = law.rvs(size=n, rng=11)
    for k in (1, 2):
        v = s ** k
        assert abs(v.mean() - law.moment(k)) < 5 * v.std() / math.sqrt(n)


def test_sampled_matrices_ks_and_moments():
    # d = 300, m = 150 (d = 1000 is in the report and the slow test)
    rng = np.random.default_rng(4)
    d, kappa = 300, 0.5
    m = int(kappa * d)
    ev = []
    for _ in range(3):
        Q = rng.standard_normal((d, m))
        R = rng.standard_normal((d, m))
        s = np.linalg.svd(Q @ R.T / math.sqrt(d * m), compute_uv=False)
        ev.append(s[:m] ** 2)
        assert np.all(s[m:] < 1e-8)  # the atom: 1 - kappa of the singular values vanish
    ev = np.concatenate(ev)
    law = mp_product(kappa)
    assert stats.kstest(ev, law.cdf).statistic < 10 / m
    # second moment: matrix average vs free-probability value, stderr over the 3 matrices
    m2 = ev.reshape(3, m) ** 2
    per = m2.mean(axis=1)
    assert abs(per.mean() - law.moment(2)) < 5 * per.std(ddof=1) / math.sqrt(3) + 0.05


def test_sampled_matrices_d1000():
    # acceptance size d = 1000: nonzero squared singular values from the m x m symmetric form
    rng = np.random.default_rng(5)
    d = 1000
    for kappa in (1.0, 0.25):
        m = int(kappa * d)
        Q = rng.standard_normal((d, m))
        R = rng.standard_normal((d, m))
        w, V = np.linalg.eigh(Q.T @ Q)
        half = (V * np.sqrt(np.clip(w, 0, None))) @ V.T
        s = np.linalg.eigvalsh(half @ (R.T @ R) @ half) / (d * m)
        # rigid eigenvalues: KS distance O(log m / m), far below the iid scale 1.36/sqrt(m)
        assert stats.kstest(s, mp_product(kappa).cdf).statistic < 10 / m


@pytest.mark.slow
def test_moments_against_1e6_samples():
    law = mp_product(0.25)
    n = 10 ** 6
    s = law.rvs(size=n, rng=13)
    for k in (1, 2, 3):
        v = s ** k
        assert abs(v.mean() - law.moment(k)) < 5 * v.std() / math.sqrt(n)


@pytest.mark.parametrize("bad", [0.0, 1.01, float("nan"), -2])
def test_bad_kappa(bad):
    with pytest.raises(ValueError, match="kappa"):
        mp_product(bad)


def test_free_transforms_moments_and_stieltjes():
    from hcizz.free_transforms import (moments_from_s_transform, stieltjes_mp, stieltjes_mp_product)
    from hcizz import marchenko_pastur, mp_moment

    # S-transform series reversion reproduces Narayana (MP) and the Lagrange sums (mp_product)
    lam, n = 0.3, 6
    s_mp = [(-lam) ** j for j in range(n + 1)]  # 1 / (1 + lam w)
    assert np.allclose(moments_from_s_transform(s_mp, n), [mp_moment(k, lam) for k in range(1, n + 1)], rtol=1e-12)
    kappa = 0.4
    s_prod = [kappa * (j + 1) * (-kappa) ** j for j in range(n + 1)]  # kappa / (1 + kappa w)^2
    assert np.allclose(moments_from_s_transform(s_prod, n),
                       [mp_product_moment(k, kappa) for k in range(1, n + 1)], rtol=1e-12)
    s_fc = [(j + 1) * (-1.0) ** j for j in range(n + 1)]
    assert np.allclose(moments_from_s_transform(s_fc, 4), [1, 3, 12, 55], rtol=1e-13)
    # Stieltjes transforms against Gauss-Legendre quadrature of the densities (z off the support)
    from hcizz.numerics import gauss_legendre

    t, w = gauss_legendre(400)
    law = mp_product(kappa)
    phi = np.pi * t
    x_prod, wprod = law._x_of_phi(phi), np.pi * w * law._dens_phi(phi)
    mpl = marchenko_pastur(0.5)
    lm, lp = mpl.edges
    tt = np.pi * t  # x = 1 + lam - 2 sqrt(lam) cos tt, density 2 sin^2 / (pi x)
    x_mp = 1 + 0.5 - 2 * np.sqrt(0.5) * np.cos(tt)
    wmp = np.pi * w * 2 * np.sin(tt) ** 2 / (np.pi * x_mp)
    for z in (3.0 + 0.5j, 0.2 - 1.0j, -1.0 + 0.1j, 12 + 3j):
        assert abs(stieltjes_mp_product(z, kappa) - np.sum(wprod / (z - x_prod))) < 1e-10
        assert abs(stieltjes_mp(z, 0.5) - np.sum(wmp / (z - x_mp))) < 1e-10


def test_pdf_accurate_at_edges_vs_mpmath_roots():
    import mpmath as mp

    for kappa in (0.5, 0.9, 1.0):
        law = mp_product(kappa)
        xm, xp = law.edges
        L = xp - xm
        for x in (xm + 1e-10 * L, xm + 1e-3 * L, xp - 1e-3 * L, xp - 1e-10 * L):
            with mp.workdps(40):
                k = mp.mpf(kappa)
                roots = mp.polyroots([k ** 2, k ** 2 + 2 * k, 1 + 2 * k - k * mp.mpf(x), 1], maxsteps=200, extraprec=200)
                ref = max(abs(mp.im(r)) for r in roots) / (mp.pi * x)
            assert float(law.pdf(x)) == pytest.approx(float(ref), rel=1e-9)
        # upper tail: isf(sf(x)) = x near the edge
        xs = xp - L * 10.0 ** -np.arange(1, 9)
        assert np.max(np.abs(law.isf(law.sf(xs)) - xs)) < 1e-12


# ---------------------------------------------------------------------------
# property-based tests over the whole parameter domain (hypothesis)
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=8, deadline=None)        # ~0.3 s per example (adaptive quadrature)
@given(st.floats(min_value=1e-3, max_value=1.0), st.floats(min_value=1e-9, max_value=1 - 1e-9))
def test_properties(kappa, u):
    law = mp_product(kappa)
    xm, xp = law.edges
    x = float(law.ppf(u))
    assert xm <= x <= xp and abs(float(law.cdf(x)) - u) < 1e-12
    # mass and mean by adaptive quadrature of the Cardano density (independent of the
    # Chebyshev CDF tables and of the Lagrange moment sum); tolerance from quad's own
    # error estimates.  x = x_- + L s^3 tames the x^(-2/3) crossover; geometric panels
    # around s_0 = (x_-/L)^(1/3) resolve the soft edge, which for kappa -> 1 sits at
    # x_- ~ (1 - kappa)^3 (plain quad in x misses it and is off by up to 1e-4).
    xm, xp = law.edges
    L = xp - xm
    s0 = max((xm / L) ** (1 / 3), 1e-7)
    br = np.concatenate([[0.0], s0 * 4.0 ** np.arange(-2, 40)])
    br = np.append(br[br < 0.5], [0.5, 1.0])
    for j, ref in ((0, 1.0), (1, 1 / kappa)):
        f = lambda s: (xm + L * s ** 3) ** j * law.pdf(xm + L * s ** 3) * 3 * L * s * s  # noqa: E731
        r = [integrate.quad(f, a, b, epsabs=0, epsrel=1e-13, limit=100) for a, b in zip(br[:-1], br[1:])]
        assert abs(sum(v for v, _ in r) - ref) < 10 * sum(e for _, e in r) + 4e-16 * ref * len(r)


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0, exclude_min=True),
                 st.just(float("nan"))))
def test_rejects_kappa_outside(kappa):
    with pytest.raises(ValueError, match=r"^kappa must be a real number in \(0, 1\], got"):
        mp_product(kappa)
    with pytest.raises(ValueError, match=r"^kappa must be"):
        mp_product_moment(2, kappa)


@pytest.mark.parametrize("bad", [-1, 1.5, float("nan"), "2", None])
def test_moment_rejects_bad_order(bad):
    with pytest.raises(ValueError, match=r"^n must be an integer >= 0, got"):
        mp_product_moment(bad, 0.5)
