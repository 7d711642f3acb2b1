r"""Free-probability transforms of the laws in :mod:`hcizz`.

Conventions: Stieltjes transform :math:`G(z) = E\, 1/(z - x)` (:math:`\mathrm{Im}\, G < 0`
for :math:`\mathrm{Im}\, z > 0`); R-transform :math:`G^{-1}(g) = R(g) + 1/g`; moment
series :math:`\psi(z) = \sum_{k \ge 1} m_k z^k`; S-transform
:math:`S(w) = \chi(w) (1 + w) / w` with :math:`\chi = \psi^{-1}`.  Under free
multiplicative convolution S-transforms multiply; scaling :math:`x \to c x` divides
:math:`S` by :math:`c`.

* Marchenko-Pastur (ratio :math:`\lambda`, mean 1): :math:`R(g) = 1/(1 - \lambda g)`,
  :math:`S(w) = 1/(1 + \lambda w)`, :math:`\lambda z G^2 - (z + \lambda - 1) G + 1 = 0`.
* ``mp_product(kappa)``: :math:`S(w) = \kappa / (1 + \kappa w)^2`; :math:`\psi = z G - 1`
  solves
  :math:`\kappa^2 \psi^3 + (\kappa^2 + 2 \kappa) \psi^2 + (1 + 2 \kappa - \kappa z) \psi + 1 = 0`.
* Quarter circle: its symmetrisation is the semicircle, :math:`R_{sym}(g) = g`.
"""
from __future__ import annotations

import numpy as np

from ._docparams import fill_doc
from .checks import check_int, check_real

__all__ = ["s_transform_mp", "r_transform_mp", "s_transform_mp_product", "r_transform_semicircle",
           "stieltjes_mp", "stieltjes_mp_product", "moments_from_s_transform"]


@fill_doc
def s_transform_mp(w, ratio):
    r"""Evaluate the S-transform :math:`1 / (1 + \lambda w)` of the Marchenko-Pastur law (mean 1).

    Parameters
    ----------
    w : float or array_like
        Argument.
    %(mp_ratio)s

    Returns
    -------
    ndarray
        :math:`S(w)`.

    See Also
    --------
    hcizz.free_transforms.r_transform_mp : The R-transform of the same law.
    hcizz.free_transforms.s_transform_mp_product : The S-transform of the product law.
    hcizz.free_transforms.moments_from_s_transform : Moments from an S-transform.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> print(s_transform_mp([0.0, 1.0], 0.5))
    [1.         0.66666667]
    """
    ratio = check_real("ratio", ratio, low=0, low_open=True, allow_array=False)
    return 1.0 / (1.0 + ratio * np.asarray(w))


@fill_doc
def r_transform_mp(g, ratio):
    r"""Evaluate the R-transform :math:`1 / (1 - \lambda g)` of the Marchenko-Pastur law (free Poisson).

    Parameters
    ----------
    g : float or array_like
        Argument.
    %(mp_ratio)s

    Returns
    -------
    ndarray
        :math:`R(g)`.

    See Also
    --------
    hcizz.free_transforms.s_transform_mp : The S-transform of the same law.
    hcizz.free_transforms.stieltjes_mp : Its Stieltjes transform.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> print(r_transform_mp([0.0, 0.5], 0.5))
    [1.         1.33333333]
    """
    return s_transform_mp(-np.asarray(g), ratio)         # R(g) = S(-g) for this law (exactly)


@fill_doc
def s_transform_mp_product(w, kappa):
    r"""Evaluate the S-transform :math:`\kappa / (1 + \kappa w)^2` of ``mp_product(kappa)``.

    It is the product of two Marchenko-Pastur S-transforms divided by the
    scale :math:`1/\kappa`.

    Parameters
    ----------
    w : float or array_like
        Argument.
    %(rank_fraction)s

    Returns
    -------
    ndarray
        :math:`S(w)`.

    See Also
    --------
    hcizz.free_transforms.s_transform_mp : The factor S-transform.
    hcizz.mp_product : The law.
    hcizz.free_transforms.moments_from_s_transform : Its moments from this transform.

    %(refs_spectral_laws)s

    Examples
    --------
    The product of two Marchenko-Pastur S-transforms, times :math:`\kappa`:

    >>> print(s_transform_mp_product([0.0, 1.0], 0.5), 0.5 * s_transform_mp(1.0, 0.5) ** 2)
    [0.5        0.22222222] 0.2222222222222222
    """
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    return kappa / (1.0 + kappa * np.asarray(w)) ** 2


@fill_doc
def r_transform_semicircle(g):
    r"""Evaluate the R-transform :math:`R(g) = g` of the unit semicircle (symmetrised quarter circle).

    Parameters
    ----------
    g : float or array_like
        Argument.

    Returns
    -------
    ndarray
        :math:`g` as an array.

    See Also
    --------
    hcizz.quarter_circle.QuarterCircle : The quarter circle, whose symmetrisation this is.
    hcizz.rectangular_r_transform : The rectangular R-transform of a spectrum.

    %(refs_spherical)s

    Examples
    --------
    >>> print(r_transform_semicircle([0.5, 1.0]))
    [0.5 1. ]
    """
    return np.asarray(g)


@fill_doc
def stieltjes_mp(z, ratio):
    r"""Evaluate the Stieltjes transform of the full Marchenko-Pastur law (atom included).

    :math:`G = (z + \lambda - 1 - \sqrt{z - l_-} \sqrt{z - l_+}) / (2 \lambda z)`; the
    product of principal square roots has its cut exactly on :math:`[l_-, l_+]` and
    behaves like :math:`z` at infinity, so this is the physical branch off the support.

    Parameters
    ----------
    z : complex or array_like
        Points off the support.
    %(mp_ratio)s

    Returns
    -------
    ndarray of complex
        :math:`G(z) = E\, 1/(z - x)` over the full law (atom at 0 included).

    See Also
    --------
    hcizz.marchenko_pastur : The law.
    hcizz.free_transforms.r_transform_mp : Its R-transform.
    hcizz.free_transforms.stieltjes_mp_product : The Stieltjes transform of the product law.

    Notes
    -----
    The two numerators :math:`n_\mp = z + \lambda - 1 \mp \mathrm{root}` satisfy
    :math:`n_- n_+ = 4 \lambda z`, so :math:`G = n_- / (2 \lambda z) = 2 / n_+`; the
    larger of the two is formed (its terms add) and the other is never needed, so
    neither tiny nor huge ratios cancel.  The edges :math:`l_\mp` are double-doubles
    (as in :class:`hcizz.marchenko_pastur.MarchenkoPastur`), so :math:`z - l_\mp` is
    exact near the edges.  At :math:`z = 0` with :math:`\lambda > 1` (the atom) the
    value is infinite.

    %(refs_spectral_laws)s

    Examples
    --------
    Against the integral of the density (ratio 1/2 has no atom):

    >>> from scipy import integrate
    >>> from hcizz import marchenko_pastur
    >>> law, z = marchenko_pastur(0.5), 3.0 + 1.0j
    >>> re = integrate.quad(lambda x: law.pdf(x) * ((z - x) ** -1).real, *law.edges)[0]
    >>> print(f"{stieltjes_mp(z, 0.5):.10f} {re:.10f}")
    0.3867328406-0.2575978884j 0.3867328406
    """
    from .marchenko_pastur import _mp_edges_dd

    ratio = check_real("ratio", ratio, low=0, low_open=True, allow_array=False)
    if not np.isfinite(ratio):
        raise ValueError(f"ratio must be a finite real number > 0, got {ratio!r}")
    z = np.asarray(z, dtype=complex)
    lm_hi, lm_lo, lp_hi, lp_lo = _mp_edges_dd(ratio)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        root = np.sqrt((z - lm_hi) - lm_lo) * np.sqrt((z - lp_hi) - lp_lo)
        base = (z - 1.0) + ratio        # z - 1 is exact near the support of a small ratio
        n_minus, n_plus = base - root, base + root
        return np.where(np.abs(n_plus) >= np.abs(n_minus), 2.0 / n_plus, n_minus / (2 * ratio * z))


def _kx_minus_one(kappa, x):
    """``kappa x - 1`` for real arrays ``x`` with one rounding (Dekker's exact product, scaled)."""
    x = np.asarray(x, dtype=float)
    mk, ek = np.frexp(kappa)
    mx, ex = np.frexp(x)
    split = 134217729.0                        # 2^27 + 1
    def halves(v):
        c = split * v
        hi = c - (c - v)
        return hi, v - hi
    ah, al = halves(mk)
    bh, bl = halves(mx)
    p = mk * mx
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl     # mk mx = p + err exactly
    e = ek + ex
    with np.errstate(over="ignore", under="ignore"):
        return (np.ldexp(p, e) - 1.0) + np.ldexp(err, e)


@fill_doc
def stieltjes_mp_product(z, kappa):
    r"""Evaluate the Stieltjes transform of ``mp_product(kappa)`` (nonzero part, mass 1) off the real axis.

    The physical root of the cubic for :math:`\psi = z G - 1` is the one with
    :math:`\mathrm{Im}\, G\, \mathrm{Im}\, z < 0` closest to the large-:math:`|z|`
    behaviour :math:`G \sim 1/z + m_1/z^2`.

    Parameters
    ----------
    z : complex or array_like
        Points off the real axis.
    %(tiny_kappa)s

    Returns
    -------
    ndarray of complex
        :math:`G(z)`, shape of ``z``.

    See Also
    --------
    hcizz.mp_product : The law.
    hcizz.mp_product.mp_product_psi_imag : The limit on the support, which gives the density.
    hcizz.free_transforms.s_transform_mp_product : Its S-transform.

    Notes
    -----
    For :math:`\kappa \ge 10^{-4}` the roots are the companion-matrix eigenvalues of
    the scaled cubic
    :math:`\sigma^3 + (2 + \kappa) \sigma^2 + (1 + 2 \kappa - \kappa z) \sigma + \kappa`
    (:math:`\sigma = \kappa \psi`, order-one coefficients).  Below, where the two
    physical candidates are :math:`O(\sqrt{\kappa})` next to a root near :math:`-2`,
    the cubic in :math:`\chi = \sqrt{\kappa}\, \psi`,
    :math:`\epsilon \chi^3 + (2 + \kappa) \chi^2 + (2 \epsilon - \zeta) \chi + 1` with
    :math:`\zeta = (\kappa z - 1)/\epsilon` (:math:`\kappa z - 1` by an exact product),
    is deflated: the large root by Newton, the other two from Vieta's formulas, with
    no cancellation; :math:`G = (\epsilon + \chi)/(\epsilon z)`.  Away from the
    support (:math:`|\kappa z - 1| \ge 0.1`) :math:`\psi` is small and the other roots
    are near :math:`-2/\kappa`: Newton on the cubic in :math:`\psi` from
    :math:`-1/(1 + 2 \kappa - \kappa z)`.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> print(f"{stieltjes_mp_product(10.0 + 1.0j, 1.0):.10f}")
    0.1135203673-0.0138193682j
    """
    from .mp_product import _check_kappa

    k = _check_kappa(kappa)
    z = np.asarray(z, dtype=complex)
    flat = z.ravel()
    omk2 = (1.0 - k) ** 2

    def eta_newton(eta, X, steps):
        # eta = z G = 1 + psi solves kappa^2 eta^3 + 2 kappa (1-kappa) eta^2 + ((1-kappa)^2 - X) eta + X = 0
        for _ in range(steps):
            f = ((k * k * eta + 2 * k * (1 - k)) * eta + (omk2 - X)) * eta + X
            d = (3 * k * k * eta + 4 * k * (1 - k)) * eta + (omk2 - X)
            eta = eta - f / d
        return eta

    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        X = k * flat
        if k >= 1e-4:
            comp = np.zeros((flat.size, 3, 3), dtype=complex)
            comp[:, 0, 0] = -(2 + k)
            comp[:, 0, 1] = -(1 + 2 * k - X)
            comp[:, 0, 2] = -k
            comp[:, 1, 0] = 1
            comp[:, 2, 1] = 1
            eta = (k + np.linalg.eigvals(comp)) / k                # (n, 3), eta = 1 + sigma / kappa
        else:
            e = np.sqrt(k)
            Xm1 = _kx_minus_one(k, flat.real) + 1j * (k * flat.imag)          # kappa z - 1, exact
            zeta = Xm1 / e
            B = 2 + k
            sr = np.full(flat.shape, -B, dtype=complex)          # sigma_r = eps chi_r near -(2 + kappa)
            for _ in range(8):
                f = ((sr + B) * sr + e * (2 * e - zeta)) * sr + k
                d = (3 * sr + 2 * B) * sr + e * (2 * e - zeta)
                sr = sr - f / d
            P = -1.0 / sr                                        # product of the two others
            S = ((2 * e - zeta) + e / sr) / sr                   # their sum
            D = np.sqrt(S * S - 4 * P)
            r1 = np.where(np.abs(S + D) >= np.abs(S - D), (S + D) / 2, (S - D) / 2)
            r2 = P / r1
            chi = np.stack([r1, r2, sr / e], axis=1)
            eta = (e + chi) / e
            # away from the support (|kappa z - 1| >= 0.1) eta is the root of a perturbed linear
            # equation and the others are near -2/kappa: Newton from the linear solution
            far = np.abs(Xm1) >= 0.1
            if np.any(far):
                eta0 = -X[far] / (omk2 - X[far])
                eta[far] = eta_newton(eta0, X[far], 40)[:, None]
        G = eta / flat[:, None]
        herglotz = (G.imag * np.sign(flat.imag)[:, None] <= 0)
        asym = np.abs(eta - (1 + 1 / X)[:, None])              # z G ~ 1 + m_1 / z
        score = np.where(herglotz, asym, np.inf)
        pick = np.argmin(np.where(np.isfinite(score), score, np.inf), axis=1)
        out = eta[np.arange(flat.size), pick]
        if k >= 1e-4:                                            # eta near 0 (z near 0): polish
            small = np.abs(out) < 0.1
            out = np.where(small, eta_newton(out, X, 3), out)
        out = out / flat
    return out.reshape(z.shape)


@fill_doc
def moments_from_s_transform(s_coeffs, n):
    r"""Compute the moments :math:`m_1, \dots, m_n` from the Taylor coefficients of an S-transform.

    Parameters
    ----------
    s_coeffs : array_like
        :math:`S(w) = \sum_j s_j w^j` (at least ``n`` coefficients; :math:`s_0 \ne 0`).
    n : int
        Number of moments.

    Returns
    -------
    ndarray
        :math:`m_1, \dots, m_n`.

    Raises
    ------
    ValueError
        If :math:`s_0 = 0`.

    See Also
    --------
    hcizz.mp_moment : Closed-form Marchenko-Pastur moments.
    hcizz.mp_product_moment : Closed-form moments of the product law.

    Notes
    -----
    :math:`\chi(w) = S(w)\, w / (1 + w)` and :math:`\psi = \chi^{-1}` by power-series
    reversion (fixed-point iteration
    :math:`\psi \leftarrow (z - (\chi(\psi) - c_1 \psi)) / c_1` truncated at order
    :math:`n`).  Independent of the closed-form moment sums.

    %(refs_spectral_laws)s

    Examples
    --------
    :math:`S = 1/(1 + w)` (Marchenko-Pastur, ratio 1) gives the Catalan numbers,
    :math:`S = 1/(1 + w)^2` (``mp_product(1)``) the Fuss-Catalan numbers:

    >>> print(moments_from_s_transform([1.0, -1.0, 1.0, -1.0], 4))
    [ 1.  2.  5. 14.]
    >>> print(moments_from_s_transform([1.0, -2.0, 3.0, -4.0], 4))
    [ 1.  3. 12. 55.]
    """
    n = check_int("n", n, low=1)
    s = np.zeros(n + 1)
    sc = np.asarray(s_coeffs, dtype=float)[: n + 1]
    s[: sc.size] = sc
    # chi(w) = w S(w) / (1 + w): coefficients c_1..c_n
    inv1pw = (-1.0) ** np.arange(n + 1)
    prod = np.convolve(s, inv1pw)[: n]
    c = np.concatenate([[0.0], prod])  # c[j] coefficient of w^j, j = 0..n
    if c[1] == 0:
        raise ValueError("s_coeffs must have s_0 != 0")

    def compose(series):  # chi(series) truncated at order n (series has zero constant term)
        out = np.zeros(n + 1)
        power = np.zeros(n + 1)
        power[0] = 1.0
        for j in range(1, n + 1):
            power = np.convolve(power, series)[: n + 1]
            out += c[j] * power
        return out

    psi = np.zeros(n + 1)
    zser = np.zeros(n + 1)
    zser[1] = 1.0
    for _ in range(n + 1):
        psi = (zser - (compose(psi) - c[1] * psi)) / c[1]
    return psi[1:]
