r"""Free-probability transforms of the laws in :mod:`hcizz`.

Conventions: Stieltjes transform ``G(z) = E 1/(z - x)`` (``Im G < 0`` for
``Im z > 0``); R-transform ``G^{-1}(g) = R(g) + 1/g``; moment series
``psi(z) = sum_{k>=1} m_k z^k``; S-transform ``S(w) = chi(w) (1 + w) / w`` with
``chi = psi^{-1}``.  Under free multiplicative convolution S-transforms
multiply; scaling ``x -> c x`` divides ``S`` by ``c``.

* Marchenko-Pastur (ratio ``lam``, mean 1): ``R(g) = 1/(1 - lam g)``,
  ``S(w) = 1/(1 + lam w)``, ``lam z G^2 - (z + lam - 1) G + 1 = 0``.
* ``mp_product(kappa)``: ``S(w) = kappa / (1 + kappa w)^2``; ``psi = z G - 1``
  solves ``kappa^2 psi^3 + (kappa^2 + 2 kappa) psi^2 + (1 + 2 kappa - kappa z) psi + 1 = 0``.
* Quarter circle: its symmetrisation is the semicircle, ``R_sym(g) = g``.
"""
from __future__ import annotations

import numpy as np

from .checks import check_int, check_real

__all__ = ["s_transform_mp", "r_transform_mp", "s_transform_mp_product", "r_transform_semicircle",
           "stieltjes_mp", "stieltjes_mp_product", "moments_from_s_transform"]


def s_transform_mp(w, ratio):
    """Evaluate the S-transform ``1 / (1 + ratio w)`` of the Marchenko-Pastur law (mean 1).

    Parameters
    ----------
    w : float or array_like
        Argument.
    ratio : float
        Aspect ratio ``lambda > 0``.

    Returns
    -------
    ndarray
        ``S(w)``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
    """
    ratio = check_real("ratio", ratio, low=0, low_open=True, allow_array=False)
    return 1.0 / (1.0 + ratio * np.asarray(w))


def r_transform_mp(g, ratio):
    """Evaluate the R-transform ``1 / (1 - ratio g)`` of the Marchenko-Pastur law (free Poisson).

    Parameters
    ----------
    g : float or array_like
        Argument.
    ratio : float
        Aspect ratio ``lambda > 0``.

    Returns
    -------
    ndarray
        ``R(g)``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
    """
    ratio = check_real("ratio", ratio, low=0, low_open=True, allow_array=False)
    return 1.0 / (1.0 - ratio * np.asarray(g))


def s_transform_mp_product(w, kappa):
    """Evaluate the S-transform ``kappa / (1 + kappa w)^2`` of ``mp_product(kappa)``.

    It is the product of two Marchenko-Pastur S-transforms divided by the
    scale ``1/kappa``.

    Parameters
    ----------
    w : float or array_like
        Argument.
    kappa : float
        Rank fraction in ``(0, 1]``.

    Returns
    -------
    ndarray
        ``S(w)``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
    """
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    return kappa / (1.0 + kappa * np.asarray(w)) ** 2


def r_transform_semicircle(g):
    """Evaluate the R-transform ``R(g) = g`` of the unit semicircle (symmetrised quarter circle).

    Parameters
    ----------
    g : float or array_like
        Argument.

    Returns
    -------
    ndarray
        ``g`` as an array.

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
    """
    return np.asarray(g)


def stieltjes_mp(z, ratio):
    r"""Evaluate the Stieltjes transform of the full Marchenko-Pastur law (atom included).

    ``G = (z + lam - 1 - sqrt(z - l_-) sqrt(z - l_+)) / (2 lam z)``; the product of
    principal square roots has its cut exactly on ``[l_-, l_+]`` and behaves
    like ``z`` at infinity, so this is the physical branch off the support.

    Parameters
    ----------
    z : complex or array_like
        Points off the support.
    ratio : float
        Aspect ratio ``lambda > 0``.

    Returns
    -------
    ndarray of complex
        ``G(z) = E 1/(z - x)`` over the full law (atom at 0 included).

    Notes
    -----
    The two numerators ``n_-+ = z + lam - 1 -+ root`` satisfy
    ``n_- n_+ = 4 lam z``, so ``G = n_- / (2 lam z) = 2 / n_+``; the larger of
    the two is formed (its terms add) and the other is never needed, so
    neither tiny nor huge ratios cancel.  The edges ``l_-+`` are double-doubles
    (as in :class:`hcizz.MarchenkoPastur`), so ``z - l_-+`` is exact near the edges.
    At ``z = 0`` with ``ratio > 1`` (the atom) the value is infinite.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
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


def stieltjes_mp_product(z, kappa):
    r"""Evaluate the Stieltjes transform of ``mp_product(kappa)`` (nonzero part, mass 1) off the real axis.

    The physical root of the cubic for ``psi = z G - 1`` is the one with
    ``Im G Im z < 0`` closest to the large-``|z|`` behaviour ``G ~ 1/z + m_1/z^2``.

    Parameters
    ----------
    z : complex or array_like
        Points off the real axis.
    kappa : float
        Rank fraction in ``[2.2250738585072014e-308, 1]``.

    Returns
    -------
    ndarray of complex
        ``G(z)``, shape of ``z``.

    Notes
    -----
    For ``kappa >= 1e-4`` the roots are the companion-matrix eigenvalues of the
    scaled cubic ``sigma^3 + (2 + kappa) sigma^2 + (1 + 2 kappa - kappa z) sigma +
    kappa`` (``sigma = kappa psi``, order-one coefficients).  Below, where the two
    physical candidates are ``O(sqrt(kappa))`` next to a root near ``-2``, the
    cubic in ``chi = sqrt(kappa) psi``, ``eps chi^3 + (2 + kappa) chi^2 + (2 eps -
    zeta) chi + 1`` with ``zeta = (kappa z - 1)/eps`` (``kappa z - 1`` by an exact
    product), is deflated: the large root by Newton, the other two from Vieta's
    formulas, with no cancellation; ``G = (eps + chi)/(eps z)``.  Away from the
    support (``|kappa z - 1| >= 0.1``) ``psi`` is small and the other roots are near
    ``-2/kappa``: Newton on the cubic in ``psi`` from ``-1/(1 + 2 kappa - kappa z)``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
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


def moments_from_s_transform(s_coeffs, n):
    r"""Compute the moments ``m_1..m_n`` from the Taylor coefficients of an S-transform.

    Parameters
    ----------
    s_coeffs : array_like
        ``S(w) = sum_j s_j w^j`` (at least ``n`` coefficients; ``s_0 != 0``).
    n : int
        Number of moments.

    Returns
    -------
    ndarray
        ``m_1, ..., m_n``.

    Raises
    ------
    ValueError
        If ``s_0 = 0``.

    Notes
    -----
    ``chi(w) = S(w) w / (1 + w)`` and ``psi = chi^{-1}`` by power-series
    reversion (fixed-point iteration ``psi <- (z - (chi(psi) - c_1 psi)) / c_1``
    truncated at order ``n``).  Independent of the closed-form moment sums.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
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
