"""Domain sweep of the theory functions, edges included: never NaN, never a
silent infinity, every value within its stated accuracy.

* ``alpha_c_finite`` for ``p`` in ``[2, 1e15]`` (log grid): finite value and
  standard error; ``p = 2`` equals ``2 ln 2`` within 5 standard errors; every
  value lies in ``(1/2, 2 ln 2]`` up to 5 standard errors (``alpha_c(p)``
  decreases from ``2 ln 2`` to ``1/2``, ``tests/test_finite_capacity.py``).
* ``energy_G`` for ``t`` in ``[0, 1 - 1e-12]``: ``p = 2`` against its
  one-dimensional quadrature ``E ln Phi(beta sqrt2 Z) / ln 2`` within 5
  standard errors; large ``p``: finite, ``<= -1`` up to 5 standard errors
  (Jensen) and above the limit ``-1/(1-t)`` (slow approach from above).
* ``alpha_c`` for ``kappa`` in ``[1e-300, 1]``: the float path against the
  mpmath path (``dps = 30``) to 1e-13 relative.
* the spectral laws' ``pdf``, ``cdf``, ``sf``, ``ppf``, ``isf`` at and beyond the
  edges of their support: finite where the density is finite, ``cdf`` in
  ``[0, 1]``, ``0`` / ``1`` beyond the edges, ``ppf(0)`` / ``ppf(1)`` the edges;
  a probability outside ``[0, 1]`` is a ``ValueError``, not a NaN.
* edge numerics of the laws against independent mpmath oracles (50 digits, or
  30 for the slow MP-product quadratures), over their whole parameter range:
  ``truncated_quarter_circle`` for ``kappa`` down to ``5e-324``,
  ``marchenko_pastur`` for ratios from ``1e-300`` to ``1e300``, ``mp_product``
  down to the smallest normal double: moments, ``var``, skewness, kurtosis,
  entropy, ``cdf`` and ``sf`` at doubles next to the edges, ``ppf`` and ``isf``
  down to ``q = 1e-300``; and the helpers (``qc_upper_angle``, ``x - sin x``,
  ``qc_quantile``, ``qc_moment``, the moment sums, the Stieltjes transforms).
  Each tolerance is the stated accuracy of the law's docstring (a few times the
  worst value measured on the slow grid).

``-m slow`` runs finer grids.
"""
import math

import mpmath
import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from hcizz import (marchenko_pastur, mp_moment, mp_product, mp_product_moment, qc_moment, qc_quantile,
                   quarter_circle, truncated_quarter_circle)
from hcizz.free_transforms import stieltjes_mp, stieltjes_mp_product
from hcizz.numerics import x_minus_sin, xms_over_cube
from hcizz.quarter_circle import qc_upper_angle
from replica import alpha_c, alpha_c_finite, energy_G

P_GRID = [2, 3, 10, 1e3, 1e6, 1e9, 1e12, 1e15]
T_GRID = [0.0, 0.3, 0.9, 0.999, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12]


@pytest.mark.parametrize("p", P_GRID)
def test_alpha_c_finite_domain(p):
    e = alpha_c_finite(p, samples=2000, rng=1)
    assert math.isfinite(e.value) and math.isfinite(e.stderr) and e.stderr > 0
    # monotone from 2 ln 2 (p = 2) to 1/2 (p -> inf); 5 standard errors of slack
    assert 0.5 - 5 * e.stderr < e.value < 2 * math.log(2) + 5 * e.stderr
    if p == 2:
        assert abs(e.value - 2 * math.log(2)) < 5 * e.stderr
    # stated accuracy: the standard error is a small fraction of the value at 2000 samples
    assert e.stderr < 0.05 * e.value


@pytest.mark.parametrize("p", [1, 0, -1, 1e15 + 2**20, 1e300, float("inf"), float("nan"), 2.5])
def test_alpha_c_finite_beyond_domain(p):
    with pytest.raises(ValueError, match="p must be an integer"):
        alpha_c_finite(p, samples=10)


def _g2_quadrature(t):
    # p = 2: G_2(t) = E ln Phi(b Z) / ln 2, b = sqrt(t/(1-t)), one standard normal Z
    # (as in tests/test_energy.py::test_monte_carlo_p2_against_quadrature)
    b = math.sqrt(t / (1 - t))
    if b == 0:
        return math.log(0.5) / math.log(2)
    # ln Phi(b z) ~ -(b z)^2/2 for z < 0: split at 0 and scale the range with 1/b
    f = lambda z: norm.pdf(z) * norm.logcdf(b * z)  # noqa: E731
    lo = integrate.quad(f, -40, 0, points=[-1 / b, -10 / b] if b > 1 else None, limit=400,
                        epsabs=0, epsrel=1e-12)[0]
    hi = integrate.quad(f, 0, 40, limit=400, epsabs=1e-300, epsrel=1e-12)[0]
    return (lo + hi) / math.log(2)


@pytest.mark.parametrize("t", T_GRID)
def test_energy_G_p2_domain(t):
    e = energy_G(t, 2, samples=2000, rng=2)
    ref = _g2_quadrature(t)
    assert math.isfinite(e.value) and math.isfinite(e.stderr)
    # Monte Carlo over eta: 5 standard errors (plus 1e-12 relative for the
    # deterministic quadratures when the stderr is tiny)
    assert abs(e.value - ref) < 5 * e.stderr + 1e-9 * abs(ref)


@pytest.mark.parametrize("t", T_GRID)
def test_energy_G_large_p_domain(t):
    e = energy_G(t, 10**6, samples=64, rng=3)
    assert math.isfinite(e.value) and math.isfinite(e.stderr)
    bias = e.info.get("bulk_bias_bound", 0.0)
    # Jensen: G_p(t) <= -1; and G_p(t) > -1/(1-t) (approach to the limit from above).
    # The standard error covers the Monte Carlo over eta only; the deterministic
    # xi quadrature adds ~1e-11 relative (measured 1.5e-11 at t = 0, p = 1e6, where
    # G = -1 exactly; tests/test_energy.py allows 1e-9 there): 1e-9 relative slack
    quad = 1e-9 * abs(e.value)
    assert e.value <= -1 + 5 * e.stderr + bias + quad
    assert e.value > -1 / (1 - t) - 5 * e.stderr - bias - quad
    lim = energy_G(t)
    assert math.isfinite(float(lim.value if hasattr(lim, "value") else lim))


@pytest.mark.parametrize("t", [1.0, 1 + 1e-16, -1e-300, float("nan"), float("inf"), -float("inf")])
def test_energy_G_beyond_domain(t):
    with pytest.raises(ValueError, match="t must be"):
        energy_G(t, 10, samples=10)


def test_alpha_c_domain():
    kappa = np.concatenate([[1e-300, 1e-200, 1e-100, 1e-30, 1e-10, 1e-5], np.linspace(0.01, 1, 12)])
    got = alpha_c(kappa)
    assert np.all(np.isfinite(got)) and np.all(got > 0)
    ref = alpha_c(kappa, dps=30)
    with mpmath.workdps(30):
        rel = np.array([float(abs(mpmath.mpf(g) - r) / r) for g, r in zip(got, ref)])
    # float path vs 30-digit mpmath path: 1e-13 relative (measured worst ~1e-15)
    assert np.all(rel < 1e-13), rel
    for bad in (0.0, -1e-300, 1 + 1e-15, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="kappa must be"):
            alpha_c(bad)


_LAWS = [("quarter_circle", quarter_circle), ("truncated_qc(0.3)", truncated_quarter_circle(0.3)),
         ("truncated_qc(1e-9)", truncated_quarter_circle(1e-9)), ("truncated_qc(1)", truncated_quarter_circle(1.0)),
         ("mp(0.1)", marchenko_pastur(0.1)), ("mp(0.5)", marchenko_pastur(0.5)),
         ("mp(1)", marchenko_pastur(1.0)), ("mp(10)", marchenko_pastur(10.0)),
         ("mp_product(0.5)", mp_product(0.5)), ("mp_product(1)", mp_product(1.0)),
         ("truncated_qc(1e-300)", truncated_quarter_circle(1e-300)),
         ("truncated_qc(5e-324)", truncated_quarter_circle(5e-324)),
         ("mp(1e-300)", marchenko_pastur(1e-300)), ("mp(1e300)", marchenko_pastur(1e300)),
         ("mp(1 - 2^-52)", marchenko_pastur(1 - 2 ** -52)),
         ("mp_product(1e-300)", mp_product(1e-300)), ("mp_product(2.2e-308)", mp_product(2.2250738585072014e-308))]


@pytest.mark.parametrize("name, law", _LAWS, ids=[n for n, _ in _LAWS])
def test_law_edges(name, law):
    a, b = (float(v) for v in law.support())
    eps = 1e-12 * max(1.0, b)
    inside = np.array([a + eps, (a + b) / 2, b - eps])
    beyond = np.array([-np.inf, -1e300, a - 1.0, a - eps, b + eps, b + 1.0, 1e300, np.inf])
    beyond = beyond[(beyond < a) | (beyond > b)]          # 1e300 lies inside the support of mp(1e300)
    xs = np.concatenate([[a, b], inside, beyond])
    pdf, cdf, sf = law.pdf(xs), law.cdf(xs), law.sf(xs)
    assert not np.any(np.isnan(pdf)) and not np.any(np.isnan(cdf)) and not np.any(np.isnan(sf))
    # the density is finite except at a = 0 of MP(1), where it diverges like x^(-1/2)
    assert np.all(np.isfinite(pdf)) and np.all(pdf >= 0)
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all((sf >= 0) & (sf <= 1))
    # beyond the edges: exactly 0 density, cdf 0 / 1
    below, above = beyond < a, beyond > b
    assert np.all(law.pdf(beyond) == 0)
    assert np.all(law.cdf(beyond[below]) == 0) and np.all(law.cdf(beyond[above]) == 1)
    assert np.all(law.sf(beyond[below]) == 1) and np.all(law.sf(beyond[above]) == 0)
    # cdf + sf = 1 to rounding, at and inside the edges
    assert np.all(np.abs(law.cdf(inside) + law.sf(inside) - 1) < 1e-13)
    # ppf / isf at the edges of [0, 1] are the edges of the support
    q = np.array([0.0, 1e-300, 1e-16, 0.5, 1 - 1e-16, 1.0])
    ppf = law.ppf(q)
    assert np.all(np.isfinite(ppf)) and ppf[0] == pytest.approx(a, abs=1e-12) and ppf[-1] == pytest.approx(b, rel=1e-12)
    assert np.all(np.diff(ppf) >= 0)
    assert np.all(np.isfinite(law.isf(q)))
    # a probability outside [0, 1] is an error, not a NaN
    for bad in (-0.1, 1.1, -1e-300, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="q must be a real number in \\[0, 1\\]"):
            law.ppf(bad)
        with pytest.raises(ValueError, match="q must be a real number in \\[0, 1\\]"):
            law.isf([0.5, bad])


@pytest.mark.slow
@pytest.mark.parametrize("p", np.unique(np.round(np.logspace(math.log10(2), 15, 40))).tolist())
def test_alpha_c_finite_domain_fine(p):
    test_alpha_c_finite_domain(p)


@pytest.mark.slow
@pytest.mark.parametrize("t", (1 - np.logspace(0, -12, 25)).tolist())
def test_energy_G_domain_fine(t):
    test_energy_G_p2_domain(t)
    test_energy_G_large_p_domain(t)


@pytest.mark.slow
def test_alpha_c_domain_fine():
    kappa = np.logspace(-300, 0, 600)
    got = alpha_c(kappa)
    ref = alpha_c(kappa, dps=25)
    with mpmath.workdps(25):
        rel = np.array([float(abs(mpmath.mpf(g) - r) / r) for g, r in zip(got, ref)])
    assert np.all(np.isfinite(got)) and np.all(rel < 1e-13), rel.max()  # as in test_alpha_c_domain


# ---------------------------------------------------------------------------
# Edge numerics of the spectral laws against independent mpmath oracles.
#
# Every oracle works from the law's definition, in mpmath, with its own
# formulation and precision control, and shares no code with hcizz: the edge of
# the truncated quarter circle from 2 theta + sin 2 theta = pi (1 - kappa) (hcizz
# solves y - sin y = pi kappa in floats), its CDF and moments by quadrature of
# sqrt(d (4 - d)) in d = 2 - s, Marchenko-Pastur by quadrature of its density and
# the closed-form CDF in the angle, the MP product by quadrature of Im psi / (pi x)
# with psi from the real root of the cubic (bracketed Newton) and Vieta (hcizz uses
# Cardano in a scaled variable), and at kappa = 1 the Fuss-Catalan closed form.
# mp.quad's tolerance is absolute, so every quadrature runs on [0, 1] after
# rescaling.  ``_rel`` is the relative error, counted in units of the smallest
# normal double below the normal range (where a double has fewer digits).
DPS = 50
TINY = 2.2250738585072014e-308


def _lg(v):
    v = abs(float(v))
    return abs(math.log10(v)) if v > 0 else 330.0


def _rel(got, ref):
    ref = mpmath.mpf(ref)
    got = float(got)
    if math.isinf(got) or abs(ref) > 1.7976931348623157e308:       # overflow: inf exactly when |ref| > max
        return 0.0 if (math.isinf(got) and abs(ref) > 1.7976931348623157e308) else float("inf")
    return float(abs(mpmath.mpf(got) - ref) / max(abs(ref), TINY))


def _theta(u, tail, dps):
    """theta in [0, pi/2] with 2 theta + sin 2 theta = pi u (tail = 1 - u, both exact), bracketed Newton."""
    with mpmath.workdps(dps):
        u, tail = mpmath.mpf(u), mpmath.mpf(tail)
        lo, hi = mpmath.mpf(0), mpmath.pi / 2
        if tail < 1e-3:
            th = mpmath.pi / 2 - mpmath.cbrt(6 * mpmath.pi * tail) / 2
        elif u < 1e-3:
            th = mpmath.pi * u / 4
        else:
            th = mpmath.asin(u)
        for _ in range(400):
            f = 2 * th + mpmath.sin(2 * th) - mpmath.pi * u
            if f == 0:
                return th
            lo, hi = (lo, th) if f > 0 else (th, hi)
            d = 4 * mpmath.cos(th) ** 2
            new = th - f / d if d > 0 else (lo + hi) / 2
            if not lo <= new <= hi:
                new = (lo + hi) / 2
            if abs(new - th) <= mpmath.mpf(10) ** (-dps + 15) * (min(new, mpmath.pi / 2 - new) + mpmath.mpf(10) ** -(dps + 400)):
                return new
            th = new
    raise AssertionError("theta did not converge")


def _qc_x(u, tail):
    """(X_qc(u), 2 - X_qc(u)) for tail = 1 - u (exact mpf)."""
    if tail == 0:
        return mpmath.mpf(2), mpmath.mpf(0)
    if u == 0:
        return mpmath.mpf(0), mpmath.mpf(2)
    dps = DPS + 25 + int(_lg(tail))
    with mpmath.workdps(dps):
        th = _theta(u, tail, dps)
        return +(2 * mpmath.sin(th)), +(4 * mpmath.sin(mpmath.pi / 4 - th / 2) ** 2)


def _exact(*vals):
    """Sums and products of doubles exactly (mpmath with 1200 digits)."""
    return mpmath.workdps(DPS + 1200)


def tqc_width(kappa):
    """``2 - a`` for ``a = X_qc(1 - kappa)``, from ``2 theta + sin 2 theta = pi (1 - kappa)``."""
    with _exact():
        k = mpmath.mpf(kappa)
        u_edge, tail_edge = 1 - k, k
    return _qc_x(u_edge, tail_edge)[1]


def tqc_oracle(kappa, xs, qs):
    """Moments, cdf/sf at the doubles ``xs`` and ppf/isf at ``qs`` of truncated_quarter_circle(kappa)."""
    k = mpmath.mpf(kappa)
    da = tqc_width(kappa)
    out = {"da": da}
    with mpmath.workdps(DPS):
        g = lambda t: mpmath.sqrt(t * (4 - da * t))  # noqa: E731  sqrt(d (4 - d)) / sqrt(da), d = da t
        Z = mpmath.quad(g, [0, 1])
        E = lambda h: mpmath.quad(lambda t: h(t) * g(t), [0, 1]) / Z  # noqa: E731
        mu = E(lambda t: t)
        m2, m3, m4 = (E(lambda t, j=j: (t - mu) ** j) for j in (2, 3, 4))
        out.update(mass=Z * da ** 1.5 / (mpmath.pi * kappa), mean=2 - da * mu, var=m2 * da ** 2,
                   skew=-m3 / m2 ** 1.5, kurt=m4 / m2 ** 2 - 3,
                   entropy=mpmath.log(mpmath.pi * kappa) - mpmath.log(da) / 2 - E(lambda t: mpmath.log(g(t))),
                   m5=E(lambda t: (2 - da * t) ** 5), m8=E(lambda t: (2 - da * t) ** 8))
        cs = []
        for x in xs:
            d = 2 - mpmath.mpf(x)
            if d >= da or d <= 0:
                cs.append((mpmath.mpf(d <= 0), mpmath.mpf(d >= da)))
                continue
            hi = d * mpmath.quad(lambda t: mpmath.sqrt(d * t * (4 - d * t)), [0, 1]) / (mpmath.pi * kappa)
            cs.append((1 - hi, hi))       # the nearer tail is checked below; both are exact here
        out["cdf_sf"] = cs
    quant = []
    for q in qs:
        with _exact():
            qq = mpmath.mpf(q)
            lower = ((1 - k) + k * qq, k * (1 - qq))      # ppf: X_qc(1 - kappa (1 - q))
            upper = ((1 - k) + k * (1 - qq), k * qq)      # isf: X_qc(1 - kappa q)
        quant.append((_qc_x(*lower)[0], _qc_x(*upper)[0]))
    out["quantiles"] = quant
    return out


def _edge_points(law, lo, width):
    """Doubles next to the support's ends and spread over it (fractions of ``width`` from ``lo``)."""
    a, b = (float(v) for v in law.support())
    xs = {float(np.nextafter(a, np.inf)), float(np.nextafter(b, -np.inf))}
    with mpmath.workdps(DPS + 400):
        for f in (1e-12, 1e-6, 0.3, 0.7, 1 - 1e-6, 1 - 1e-12):
            xs.add(float(lo + width * f))
    return sorted(xs)


def _tails_and_quantiles(law, xs, ref, worst, tol, param):
    """Worst errors of the nearer tail at ``xs`` and of ppf/isf at ``QS``; assert them below ``tol``."""
    for x, (lo, hi) in zip(xs, ref["cdf_sf"]):
        worst["cdf"] = max(worst.get("cdf", 0), _rel(law.cdf(x), lo) if lo <= hi else 0.0)
        worst["sf"] = max(worst.get("sf", 0), _rel(law.sf(x), hi) if hi <= lo else 0.0)
        # the far tail: accurate to rounding of 1 - (near tail)
        assert abs(float(law.cdf(x)) + float(law.sf(x)) - 1) < 4e-16
    for q, (xl, xu) in zip(QS, ref["quantiles"]):
        worst["ppf"] = max(worst.get("ppf", 0), _rel(law.ppf(q), xl))
        worst["isf"] = max(worst.get("isf", 0), _rel(law.isf(q), xu))
    bad = {k: v for k, v in worst.items() if not v <= tol[k]}
    assert not bad, (param, bad)
    return worst


QS = [1e-300, 1e-100, 1e-20, 1e-6, 0.3, 0.7, 1 - 1e-10, 1 - 2 ** -53]

# stated accuracies (docstring Notes; measured worst on the slow grid x ~2-4)
TQC_TOL = dict(mean=1e-15, var=2e-15, skew=2e-14, kurt=5e-15, m5=2e-15, m8=2e-15, entropy=1e-15,
               cdf=2e-15, sf=2e-15, ppf=1e-15, isf=1e-15)


def check_tqc(kappa, tol=TQC_TOL):
    law = truncated_quarter_circle(kappa)
    da = tqc_width(kappa)
    with mpmath.workdps(DPS + 400):
        xs = _edge_points(law, 2 - da, da)
    ref = tqc_oracle(kappa, xs, QS)
    worst = {}
    assert abs(ref["mass"] - 1) < 1e-40                      # the oracle's edge and normalisation agree
    # the float support [lower, 2] contains the exact one, and lower is the double just below a
    with mpmath.workdps(DPS + 400):
        a_exact = 2 - da
        assert law.lower <= a_exact and (np.nextafter(law.lower, 3) > a_exact or law.lower == 0)
    mean, var, skew, kurt = law.stats(moments="mvsk")
    for name, got in (("mean", mean), ("var", var), ("skew", skew), ("kurt", kurt), ("entropy", law.entropy()),
                      ("m5", law.moment(5)), ("m8", law.moment(8))):
        err = _rel(got, ref[name]) if name != "entropy" else float(abs(got - ref[name]) / max(1, abs(ref[name])))
        worst[name] = err
    return _tails_and_quantiles(law, xs, ref, worst, tol, kappa)


TQC_GRID = [1.0, 1 - 2 ** -52, 0.5, 1e-6, 1e-15, 1e-100, 5e-324]


@pytest.mark.parametrize("kappa", TQC_GRID)
def test_truncated_quarter_circle_against_mpmath(kappa):
    check_tqc(kappa)


def mp_geometry(ratio):
    """``(l_-, l_+ - l_-)`` of Marchenko-Pastur at 20 digits beyond the width ``4 sqrt ratio``."""
    with mpmath.workdps(DPS + 20 + int(_lg(ratio) / 2)):
        q = mpmath.sqrt(mpmath.mpf(ratio))
        return (1 - q) ** 2, 4 * q


def mp_oracle(ratio, xs, qs):
    """Marchenko-Pastur (nonzero part): moments by quadrature of the density in
    v = (x - l_-)/(4 sqrt ratio); cdf/sf at ``xs`` by quadrature from the nearer edge;
    ppf/isf at ``qs`` by bracketed Newton on the closed-form CDF in the angle (module notes),
    at enough digits for its 1/ratio and t^3 cancellations; skewness and kurtosis from the
    exact Narayana moments (rational in ratio) at high precision."""
    lm, W = mp_geometry(ratio)
    m = min(mpmath.mpf(1), mpmath.mpf(ratio))
    with mpmath.workdps(DPS + 20 + int(_lg(ratio) / 2)):
        vs = [(mpmath.mpf(x) - lm) / W for x in xs]
    out = {"lm": lm, "W": W}
    with mpmath.workdps(DPS):
        f = lambda v: W * W * mpmath.sqrt(v * (1 - v)) / (2 * mpmath.pi * m * (lm + W * v))  # noqa: E731
        half = mpmath.mpf(1) / 2
        E = lambda h: (mpmath.quad(lambda v: h(v) * f(v), [0, half])  # noqa: E731
                       + mpmath.quad(lambda v: h(v) * f(v), [half, 1]))
        Z = E(lambda v: 1)
        vb = E(lambda v: v) / Z
        out.update(mass=Z, mean=lm + W * vb, var=W * W * E(lambda v: (v - vb) ** 2) / Z,
                   entropy=mpmath.log(W) - E(lambda v: mpmath.log(f(v) / Z)) / Z)
        cs = []
        for v in vs:
            if v <= 0 or v >= 1:
                cs.append((mpmath.mpf(v >= 1), mpmath.mpf(v <= 0)))
            elif v <= half:
                lo = v * mpmath.quad(lambda t: f(v * t), [0, 1])
                cs.append((lo, 1 - lo))
            else:
                hi = (1 - v) * mpmath.quad(lambda t: f(1 - (1 - v) * t), [0, 1])
                cs.append((1 - hi, hi))
        out["cdf_sf"] = cs
    with mpmath.workdps(DPS + 20 + 2 * int(_lg(ratio))):
        lam = mpmath.mpf(ratio)
        sig = max(mpmath.mpf(1), lam)
        mo = [sig * mpmath.fsum(lam ** j * mpmath.binomial(n, j) * mpmath.binomial(n, j + 1) / n for j in range(n))
              for n in (1, 2, 3, 4)]
        c2 = mo[1] - mo[0] ** 2
        out["skew"] = (mo[2] - 3 * mo[0] * mo[1] + 2 * mo[0] ** 3) / c2 ** 1.5
        out["kurt"] = (mo[3] - 4 * mo[0] * mo[2] + 6 * mo[0] ** 2 * mo[1] - 3 * mo[0] ** 4) / c2 ** 2 - 3
    out["quantiles"] = [(_mp_quantile(ratio, qq, False, lm, W), _mp_quantile(ratio, qq, True, lm, W)) for qq in qs]
    return out


def _mp_quantile(ratio, q, upper, lm, W):
    mu_small = min(ratio, 1 / ratio)
    dps = DPS + 40 + int(_lg(mu_small)) + int(_lg(q)) + int(_lg(1 - q) if q < 1 else 0)
    with mpmath.workdps(dps):
        mu = mpmath.mpf(ratio) if ratio <= 1 else 1 / mpmath.mpf(ratio)
        r = mpmath.sqrt(mu)
        if upper:                      # upper tail as a function of s = pi - t
            F = lambda s: (-mpmath.sin(s) / r + (1 + mu) * s / (2 * mu)  # noqa: E731
                           - (1 - mu) / mu * mpmath.atan2((1 - r) * mpmath.sin(s / 2), (1 + r) * mpmath.cos(s / 2))) / mpmath.pi
            dens = lambda s: 2 * mpmath.sin(s) ** 2 / (mpmath.pi * ((1 + r) ** 2 - 4 * r * mpmath.sin(s / 2) ** 2))  # noqa: E731
            t = mpmath.cbrt(3 * mpmath.pi * q * (1 + r) ** 2 / 2) if q < 1e-6 else mpmath.pi / 2
        else:
            F = lambda t: (mpmath.sin(t) / r + (1 + mu) * t / (2 * mu)  # noqa: E731
                           - (1 - mu) / mu * mpmath.atan2((1 + r) * mpmath.sin(t / 2), (1 - r) * mpmath.cos(t / 2))) / mpmath.pi
            dens = lambda t: 2 * mpmath.sin(t) ** 2 / (mpmath.pi * ((1 - r) ** 2 + 4 * r * mpmath.sin(t / 2) ** 2))  # noqa: E731
            if q < 1e-6:
                delta = 2 * mpmath.asinh((1 - r) / (2 * mpmath.sqrt(r)))
                ts = mpmath.cbrt(3 * mpmath.pi * q / 2) * (1 - r) ** (mpmath.mpf(2) / 3)
                t = ts if ts < delta else mpmath.pi * r * q / 2
            else:
                t = mpmath.pi / 2
        lo, hi = mpmath.mpf(0), mpmath.pi
        for _ in range(600):
            fv = F(t) - q
            if fv == 0:
                break
            lo, hi = (lo, t) if fv > 0 else (t, hi)
            dv = dens(t) if t > 0 else mpmath.mpf(0)
            new = t - fv / dv if dv > 0 else (lo + hi) / 2
            if not lo <= new <= hi:
                new = (lo + hi) / 2
            if abs(new - t) <= mpmath.mpf(10) ** (-DPS - 10) * new:
                t = new
                break
            t = new
        else:
            raise AssertionError("no convergence")
        return (lm + W - W * mpmath.sin(t / 2) ** 2) if upper else (lm + W * mpmath.sin(t / 2) ** 2)


MP_TOL = dict(mean=4e-16, var=4e-16, skew=4e-16, kurt=4e-16, entropy=1e-15,
              cdf=4e-15, sf=4e-15, ppf=2e-15, isf=2e-15)


def check_mp(ratio, tol=MP_TOL):
    law = marchenko_pastur(ratio)
    xs = _edge_points(law, *mp_geometry(ratio))
    ref = mp_oracle(ratio, xs, QS)
    assert abs(ref["mass"] - 1) < 1e-25
    a, b = law.edges
    with mpmath.workdps(DPS + 400):     # outward rounding: the float support contains the exact one
        assert a <= ref["lm"] < np.nextafter(a, np.inf) or a == 0
        assert np.nextafter(b, 0) < ref["lm"] + ref["W"] <= b or b == np.finfo(float).max
    worst = {}
    mean, var, skew, kurt = law.stats(moments="mvsk")
    for name, got in (("mean", mean), ("var", var), ("skew", skew), ("kurt", kurt)):
        worst[name] = _rel(got, ref[name])
    worst["entropy"] = float(abs(law.entropy() - ref["entropy"]) / max(1, abs(ref["entropy"])))
    return _tails_and_quantiles(law, xs, ref, worst, tol, ratio)


MP_GRID = [1e-300, 0.5, 1.0, 1e300]


@pytest.mark.parametrize("ratio", MP_GRID)
def test_marchenko_pastur_against_mpmath(ratio):
    check_mp(ratio)


def _dps_mpp(kappa):
    """Digits for the MP-product oracle: the support's relative width is ~sqrt(kappa), and x_- ~ (1 - kappa)^3."""
    omk = 1 - kappa
    return DPS + 25 + int(_lg(kappa)) + (3 * int(_lg(omk)) if omk > 0 else 0)


def mpp_edges(kappa):
    """``(x_-, x_+)`` from the unscaled closed form (module notes of hcizz.mp_product), high precision."""
    with mpmath.workdps(_dps_mpp(kappa)):
        k = mpmath.mpf(kappa)
        s = mpmath.sqrt(k * (k + 8))
        return (8 + 20 * k - k * k - (k + 8) * s) / (8 * k), (8 + 20 * k - k * k + (k + 8) * s) / (8 * k)


def mpp_density(kappa, x, extra=0):
    """``Im psi / (pi x)``, ``sigma = kappa psi`` a root of ``sigma^3 + (2 + k) sigma^2 + (1 + 2k - k x) sigma + k``:
    the real root by bracketed Newton, the complex pair from Vieta's formulas (``extra`` guard digits:
    the pair's discriminant vanishes at the edges)."""
    D = _dps_mpp(kappa) + 20 + int(extra)
    with mpmath.workdps(D):
        k = mpmath.mpf(kappa)
        X = k * mpmath.mpf(x)
        B, C = 2 + k, 1 + 2 * k - X
        lo, hi = -B - 10, mpmath.mpf(0)                     # P(lo) < 0 < P(0) = k
        fr, fb, fc = -float(B), float(B), float(C)           # float Newton for a start
        for _ in range(30):
            fd = (3 * fr + 2 * fb) * fr + fc
            if fd == 0:
                break
            fr -= (((fr + fb) * fr + fc) * fr + float(k)) / fd
        r = mpmath.mpf(fr) if float(lo) < fr < 0 else -B
        for _ in range(500):
            P = ((r + B) * r + C) * r + k
            if P == 0:
                break
            lo, hi = (lo, r) if P > 0 else (r, hi)
            dP = (3 * r + 2 * B) * r + C
            new = r - P / dP if dP != 0 else (lo + hi) / 2
            if not lo <= new <= hi:
                new = (lo + hi) / 2
            if abs(new - r) <= mpmath.mpf(10) ** (-D + 5) * abs(new):
                r = new
                break
            r = new
        b, c = B + r, -k / r                                # the pair solves sigma^2 + b sigma + c = 0
        disc = c - b * b / 4
        return mpmath.sqrt(disc) / (mpmath.pi * X) if disc > 0 else mpmath.mpf(0)


def fuss_catalan_density(x):
    """Fuss-Catalan (order 2) density on (0, 27/4] in closed form (Penson and Zyczkowski,
    arXiv:1103.3453): the oracle for mp_product(1)."""
    with mpmath.workdps(mpmath.mp.dps + 20):
        x = mpmath.mpf(x)
        r = 27 + 3 * mpmath.sqrt(81 - 12 * x)
        return +(mpmath.cbrt(2) * mpmath.sqrt(3) / (12 * mpmath.pi)
                 * (mpmath.cbrt(2) * r ** (mpmath.mpf(2) / 3) - 6 * mpmath.cbrt(x))
                 / (x ** (mpmath.mpf(2) / 3) * mpmath.cbrt(r)))


def mpp_tail(kappa, x, upper, edges, dps=30):
    """cdf (sf if ``upper``) of mp_product(kappa) at the double ``x``: tanh-sinh of the density from the
    lower (upper) edge, with breakpoints at the scale x_- of the branch point at x = 0 (30 digits)."""
    xm, xp = edges
    with mpmath.workdps(_dps_mpp(kappa)):
        L = xp - xm
        v = (mpmath.mpf(x) - xm) / L
        vc = xm / L
    if v <= 0 or v >= 1:
        return mpmath.mpf(int((v >= 1) != upper))
    with mpmath.workdps(dps):
        if kappa == 1:
            if upper:
                d = mpmath.mpf(27) / 4 - mpmath.mpf(x)
                return d * mpmath.quad(lambda t: fuss_catalan_density(mpmath.mpf(27) / 4 - d * t), [0, 1])
            U = mpmath.cbrt(mpmath.mpf(x))       # u = x^(1/3) removes the x^(-2/3) of the hard edge
            return U * mpmath.quad(lambda t: fuss_catalan_density((U * t) ** 3) * 3 * (U * t) ** 2, [0, 1])

        def f(u):
            with mpmath.workdps(_dps_mpp(kappa)):
                xx = xm + L * u
            return L * mpp_density(kappa, xx, _lg(min(u, 1 - u)))
        if upper:
            d = 1 - v
            return d * mpmath.quad(lambda t: f(1 - d * t), [0, 1])
        pts = [mpmath.mpf(0)] + [vc * 4 ** j / v for j in range(-3, 4) if 0 < vc * 4 ** j < v] + [mpmath.mpf(1)]
        return v * mpmath.quad(lambda t: f(v * t), pts)


def mpp_moments(kappa, edges):
    """mass, mean, var, kurtosis and entropy of mp_product(kappa) by quadrature of the density; skewness
    from the Lagrange moment sums at high precision (exact rationals in kappa: the quadrature's digits
    do not resolve 5 sqrt(kappa)/(2 sqrt 2) for tiny kappa)."""
    xm, xp = edges
    with mpmath.workdps(_dps_mpp(kappa)):
        L = xp - xm
    out = {}
    with mpmath.workdps(30):
        cache = {}

        def f(u):
            if u not in cache:
                with mpmath.workdps(_dps_mpp(kappa)):
                    xx = xm + L * u
                cache[u] = L * mpp_density(kappa, xx, _lg(min(u, 1 - u)))
            return cache[u]
        half = mpmath.mpf(1) / 2
        E = lambda h: mpmath.quad(lambda u: h(u) * f(u), [0, half]) + mpmath.quad(lambda u: h(u) * f(u), [half, 1])  # noqa: E731
        Z = E(lambda u: 1)
        ub = E(lambda u: u) / Z
        m2, m4 = (E(lambda u, j=j: (u - ub) ** j) / Z for j in (2, 4))
        with mpmath.workdps(_dps_mpp(kappa)):
            out["mean"] = xm + L * ub
        out.update(mass=Z, var=L * L * m2, kurt=m4 / m2 ** 2 - 3, entropy=mpmath.log(L) - E(lambda u: mpmath.log(f(u) / Z)) / Z)
    with mpmath.workdps(DPS + 20 + 2 * int(_lg(kappa))):
        k = mpmath.mpf(kappa)
        mo = [mpmath.fsum(mpmath.binomial(n, j + 1) * mpmath.binomial(2 * n, j) * k ** j for j in range(n)) / (n * k ** n)
              for n in (1, 2, 3)]
        c2 = mo[1] - mo[0] ** 2
        out["skew"] = (mo[2] - 3 * mo[0] * mo[1] + 2 * mo[0] ** 3) / c2 ** 1.5
    return out


# cdf near a soft edge ~ phi^9 in the table's angle: the angle's few-ulp rounding is amplified
MPP_TOL = dict(mean=4e-16, var=4e-16, skew=4e-16, kurt=4e-16, entropy=1e-15, pdf=2e-15,
               cdf=2e-14, sf=1e-14, ppf=1e-14, isf=1e-14)


def check_mpp(kappa, moments=True, fractions=(1e-12, 0.3, 1 - 1e-6), qs=(1e-300, 1e-20, 0.3), tol=MPP_TOL):
    law = mp_product(kappa)
    edges = mpp_edges(kappa)
    xm, xp = edges
    a, b = law.edges
    with mpmath.workdps(_dps_mpp(kappa) + 20):
        assert a <= xm < np.nextafter(a, np.inf) or a == xm == 0        # outward rounding
        assert np.nextafter(b, 0) < xp <= b
        L = xp - xm
        xs = sorted({float(np.nextafter(a, np.inf))} | {float(xm + L * f) for f in fractions})
        vs = [(mpmath.mpf(x) - xm) / L for x in xs]
    worst = {}
    dens = (lambda x: fuss_catalan_density(x)) if kappa == 1 else (lambda x: mpp_density(kappa, x, 10))
    if moments and kappa == 1:
        # Fuss-Catalan: moments binom(3k, k)/(2k + 1) = 1, 3, 12, 55 (mean 1, var 2, skew 5/2^1.5,
        # excess kurtosis 5/2); entropy by quadrature of the closed-form density in u = x^(1/3)
        with mpmath.workdps(30):
            f = lambda u: fuss_catalan_density(u ** 3) * 3 * u * u  # noqa: E731
            top = mpmath.cbrt(mpmath.mpf(27) / 4)
            ent = -mpmath.quad(lambda u: f(u) * mpmath.log(fuss_catalan_density(u ** 3)), [0, top / 2, top])
        ref = dict(mass=mpmath.mpf(1), mean=1, var=2, skew=mpmath.mpf(5) / mpmath.mpf(2) ** 1.5,
                   kurt=mpmath.mpf(5) / 2, entropy=ent)
    elif moments:
        ref = mpp_moments(kappa, edges)
    if moments:
        assert abs(ref["mass"] - 1) < 1e-25
        mean, var, skew, kurt = law.stats(moments="mvsk")
        for name, got in (("mean", mean), ("var", var), ("skew", skew), ("kurt", kurt)):
            worst[name] = _rel(got, ref[name])
        worst["entropy"] = float(abs(law.entropy() - ref["entropy"]) / max(1, abs(ref["entropy"])))
    for x, v in zip(xs, vs):
        if not 0 < v < 1:
            continue
        upper = v > 0.5
        ref_t = mpp_tail(kappa, x, upper, edges)
        key = "sf" if upper else "cdf"
        worst[key] = max(worst.get(key, 0), _rel(law.sf(x) if upper else law.cdf(x), ref_t))
        with mpmath.workdps(40):
            worst["pdf"] = max(worst.get("pdf", 0), _rel(law.pdf(x), dens(x)))
    for q in qs:
        for name, fn, upper in (("ppf", law.ppf, False), ("isf", law.isf, True)):
            xh = float(fn(q))
            with mpmath.workdps(_dps_mpp(kappa) + 20):
                v = (mpmath.mpf(xh) - xm) / L
            if not 0 < v < 1:           # rounded to a support end: the exact quantile is within an ulp
                assert xh in (a, b, 0.0), (kappa, q, xh)
                continue
            F = mpp_tail(kappa, xh, upper, edges)
            with mpmath.workdps(40):
                # relative error of the quantile to first order: (F(x_hat) - q) / (f(x_hat) x_hat)
                err = float(abs(F - q) / (dens(xh) * xh))
            worst[name] = max(worst.get(name, 0), err)
    bad = {k: v for k, v in worst.items() if not v <= tol[k]}
    assert not bad, (kappa, bad)
    return worst


MPP_GRID = [1.0, 0.5, 1e-30, 2.2250738585072014e-308]


@pytest.mark.parametrize("kappa", MPP_GRID)
def test_mp_product_against_mpmath(kappa):
    check_mpp(kappa, moments=kappa == 1e-30)


# ---------------------------------------------------------------------------
# helpers: the y - sin y = c inversion, x - sin x, X_qc, partial moments, moment sums, Stieltjes
def test_qc_upper_angle_against_mpmath():
    cs = np.concatenate([[5e-324, 1e-320, 1e-310, TINY], np.logspace(-300, 0, 31), np.linspace(0.1, np.pi, 12)])
    ys = qc_upper_angle(cs)
    worst = 0.0
    for c, y in zip(cs, ys):
        with mpmath.workdps(DPS + 10 + int(2 * _lg(c) / 3)):      # y - sin y cancels ~ 2/3 |log10 c| digits
            cc = mpmath.mpf(c)
            ref = mpmath.findroot(lambda v: v - mpmath.sin(v) - cc, mpmath.cbrt(6 * cc) if c < 1e-3 else mpmath.mpf(float(y)))
            worst = max(worst, _rel(y, ref))
    assert worst <= 4e-16, worst                    # stated: a few ulp (measured 1.8e-16)
    assert qc_upper_angle(0.0) == 0.0 and float(qc_upper_angle(np.pi)) == pytest.approx(np.pi, rel=1e-16)


def test_x_minus_sin_against_mpmath():
    xs = np.concatenate([[5e-324, 1e-200, 1e-108, 3e-108], np.logspace(-100, 2, 35), -np.logspace(-50, 1, 6),
                         [1.4999, 1.5, 1.5001, 1e10, 1e300]])
    w1 = w2 = 0.0
    for x in xs:
        with mpmath.workdps(DPS + 10 + 2 * int(_lg(x))):
            xx = mpmath.mpf(x)
            ref = xx - mpmath.sin(xx)
            w1, w2 = max(w1, _rel(x_minus_sin(x), ref)), max(w2, _rel(xms_over_cube(x), ref / xx ** 3))
    assert w1 <= 6e-16 and w2 <= 6e-16, (w1, w2)    # measured 2.7e-16, 2.0e-16
    assert x_minus_sin(np.inf) == np.inf and x_minus_sin(-np.inf) == -np.inf and xms_over_cube(np.inf) == 0.0


def test_qc_quantile_against_mpmath():
    us = np.concatenate([[5e-324, 1e-310, 1e-300, 1e-100, 1e-20], np.linspace(0.025, 0.975, 20),
                         1 - np.logspace(-1, -16, 6), [1 - 2 ** -53]])
    worst = 0.0
    for u in us:
        with _exact():
            uu = mpmath.mpf(u)
            tail = 1 - uu
        worst = max(worst, _rel(qc_quantile(u), _qc_x(uu, tail)[0]))
    assert worst <= 8e-16, worst                     # measured 3.8e-16
    assert qc_quantile(0.0) == 0.0 and qc_quantile(1.0) == 2.0


def test_qc_moment_against_mpmath():
    worst = 0.0
    for n in (-0.9, -0.5, 0, 1, 2, 3.5, 10, 50, 200):
        for lower in (0.0, 0.5, 1.0, 1.9, 2 - 1e-8, 2 - 2 ** -52):
            with mpmath.workdps(DPS):
                u = (2 - mpmath.mpf(lower)) * (2 + mpmath.mpf(lower)) / 4
                ref = 2 ** (mpmath.mpf(n) + 1) / mpmath.pi * mpmath.betainc(mpmath.mpf(3) / 2, (mpmath.mpf(n) + 1) / 2, 0, u)
            worst = max(worst, _rel(qc_moment(n, lower), ref))
    assert worst <= 1e-14, worst                     # measured 3.7e-15 (scipy's beta at n = 200)
    assert math.isinf(float(qc_moment(2000)))        # 2^2001 B(...)/pi exceeds the largest double


def test_moment_sums_exact():
    from fractions import Fraction
    from math import comb

    for ratio in (1e-300, 0.3, 1.0, 7.0, 1e100):
        for k in (1, 2, 5, 12):
            r = Fraction(ratio)
            exact = sum(r ** j * comb(k, j) * comb(k, j + 1) for j in range(k)) / k
            got = mp_moment(k, ratio)
            assert (got == float(exact)) if exact < 1.7e308 else math.isinf(got)   # one rounding
    assert math.isinf(mp_moment(5, 1e300))
    for kappa in (2.2250738585072014e-308, 1e-30, 0.25, 1.0):
        for n in (1, 2, 3, 7):
            kk = Fraction(kappa)
            exact = sum(comb(n, j + 1) * comb(2 * n, j) * kk ** j for j in range(n)) / (n * kk ** n)
            got = mp_product_moment(n, kappa)
            assert (got == float(exact)) if exact < 1.7e308 else math.isinf(got)


@pytest.mark.parametrize("ratio", [1e-300, 1e-8, 0.5, 2.0, 1e300])
def test_stieltjes_mp_against_mpmath(ratio):
    # oracle: the closed form (z + lam - 1 - sqrt(z - l_-) sqrt(z - l_+)) / (2 lam z) in mpmath, with
    # enough digits for its cancellation (~|log10 lam| digits); hcizz forms the larger numerator instead
    q = math.sqrt(ratio)
    c = 1 + ratio
    worst = 0.0
    for z in (c + 0.5j * q, c + 3 * q + 0.1j * q, -1 + 0.1j, 0.3 + 0.2j, 1e3j * max(1, ratio)):
        with mpmath.workdps(DPS + 20 + 2 * int(_lg(ratio))):
            lam, zz = mpmath.mpf(ratio), mpmath.mpc(z)
            sq = mpmath.sqrt(lam)
            root = mpmath.sqrt(zz - (1 - sq) ** 2) * mpmath.sqrt(zz - (1 + sq) ** 2)
            ref = complex((zz + lam - 1 - root) / (2 * lam * zz))
        worst = max(worst, abs(complex(stieltjes_mp(z, ratio)) - ref) / abs(ref))
    assert worst <= 1e-15, worst                      # measured <= 2.2e-16


def _mpp_stieltjes_ref(kappa, z, n=(48, 96)):
    """E 1/(z - x) for mp_product(kappa), kappa <= 1e-3 (soft edges far from x = 0): Gauss-Legendre in
    theta, v = sin^2(theta), which smooths both square-root edges; two rules, their difference is
    the oracle's error bound (returned)."""
    xm, xp = mpp_edges(kappa)
    with mpmath.workdps(_dps_mpp(kappa)):
        L = xp - xm
    vals = []
    for m in n:
        with mpmath.workdps(30):
            xs, ws = _mp_gauss_legendre(m)
            tot = mpmath.mpc(0)
            zz = mpmath.mpc(z)
            for t, w in zip(xs, ws):
                th = mpmath.pi / 4 * (t + 1)
                v = mpmath.sin(th) ** 2
                with mpmath.workdps(_dps_mpp(kappa)):
                    xx = xm + L * v
                dens = L * mpp_density(kappa, xx, _lg(min(v, 1 - v)))
                tot += w * mpmath.pi / 4 * mpmath.sin(2 * th) * dens / (zz - xx)
            vals.append(tot)
    return complex(vals[-1]), float(abs(vals[-1] - vals[0]) / abs(vals[-1]))


def _mp_gauss_legendre(m, _cache={}):
    """Gauss-Legendre nodes and weights on [-1, 1] at the working precision (Newton on P_m)."""
    key = (m, mpmath.mp.dps)
    if key not in _cache:
        xs, ws = [], []
        for x0 in np.polynomial.legendre.leggauss(m)[0]:     # float nodes, then Newton in mpmath
            z = mpmath.mpf(x0)
            for _ in range(100):
                p0, p1 = mpmath.mpf(1), z
                for j in range(2, m + 1):
                    p0, p1 = p1, ((2 * j - 1) * z * p1 - (j - 1) * p0) / j
                dp = m * (z * p1 - p0) / (z * z - 1)
                dz = p1 / dp
                z -= dz
                if abs(dz) < mpmath.mpf(10) ** (-mpmath.mp.dps + 3):
                    break
            xs.append(z)
            ws.append(2 / ((1 - z * z) * dp * dp))
        _cache[key] = (xs, ws)
    return _cache[key]


@pytest.mark.parametrize("kappa", [1e-5, 1e-300, pytest.param(1e-3, marks=pytest.mark.slow),
                                   pytest.param(1e-20, marks=pytest.mark.slow)])
def test_stieltjes_mp_product_against_mpmath(kappa):
    xm, xp = mpp_edges(kappa)
    with mpmath.workdps(_dps_mpp(kappa)):
        Lf, c = float(xp - xm), float((xm + xp) / 2)
    worst = 0.0
    for z in (c + 0.5j * Lf, 1.5 * c + 1j * Lf, -c + 0.1j * Lf, 0.5j):
        ref, err = _mpp_stieltjes_ref(kappa, z)
        assert err < 1e-20
        worst = max(worst, abs(complex(stieltjes_mp_product(z, kappa)) - ref) / abs(ref))
    assert worst <= 1e-14, worst                      # measured 1.1e-15


# ---------------------------------------------------------------------------
# the denser grids (-m slow): log grids of kappa from the smallest double to 1
@pytest.mark.slow
@pytest.mark.parametrize("kappa", [5e-324, 1e-320, 1e-310, *np.logspace(-300, -10, 30).tolist(),
                                   1e-8, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-6, 1 - 1e-10,
                                   1 - 2 ** -52, 1.0])
def test_truncated_quarter_circle_against_mpmath_fine(kappa):
    check_tqc(kappa)


@pytest.mark.slow
@pytest.mark.parametrize("ratio", [*np.logspace(-300, 300, 31).tolist(), 1e-8, 0.1, 0.3, 0.49, 0.51, 0.9,
                                   1 - 1e-10, 1 - 2 ** -52, 1.0, 1 + 2 ** -52, 1 + 1e-10, 1.1, 2.0, 10.0])
def test_marchenko_pastur_against_mpmath_fine(ratio):
    check_mp(ratio)


@pytest.mark.slow
@pytest.mark.parametrize("kappa", [*np.logspace(-300, -20, 15).tolist(), 2.2250738585072014e-308, 1e-10, 1e-3,
                                   0.1, 0.5, 0.9, 0.999, 1.0])
def test_mp_product_against_mpmath_fine(kappa):
    check_mpp(kappa, moments=True, fractions=(1e-12, 1e-6, 0.3, 0.7, 1 - 1e-6, 1 - 1e-12),
              qs=(1e-300, 1e-100, 1e-20, 1e-6, 0.3))
