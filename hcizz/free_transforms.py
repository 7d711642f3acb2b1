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

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
    """
    ratio = check_real("ratio", ratio, low=0, low_open=True, allow_array=False)
    z = np.asarray(z, dtype=complex)
    q = np.sqrt(ratio)
    lm, lp = (1 - q) ** 2, (1 + q) ** 2
    root = np.sqrt(z - lm) * np.sqrt(z - lp)
    return (z + ratio - 1 - root) / (2 * ratio * z)


def stieltjes_mp_product(z, kappa):
    r"""Evaluate the Stieltjes transform of ``mp_product(kappa)`` (nonzero part, mass 1) off the real axis.

    The three roots of the cubic are computed as companion-matrix eigenvalues;
    the physical one is the root with ``Im G Im z < 0`` closest to the
    large-``|z|`` behaviour ``G ~ 1/z + m_1/z^2``.

    Parameters
    ----------
    z : complex or array_like
        Points off the real axis.
    kappa : float
        Rank fraction in ``(0, 1]``.

    Returns
    -------
    ndarray of complex
        ``G(z)``, shape of ``z``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
    """
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    z = np.asarray(z, dtype=complex)
    k = kappa
    flat = z.ravel()
    a2 = (k * k + 2 * k) / (k * k)
    a1 = (1 + 2 * k - k * flat) / (k * k)
    a0 = np.full(flat.shape, 1 / (k * k), dtype=complex)
    comp = np.zeros((flat.size, 3, 3), dtype=complex)
    comp[:, 0, :] = np.stack([-a2 * np.ones_like(flat), -a1, -a0], axis=1)
    comp[:, 1, 0] = 1
    comp[:, 2, 1] = 1
    psi = np.linalg.eigvals(comp)  # (n, 3)
    G = (1 + psi) / flat[:, None]
    herglotz = (G.imag * np.sign(flat.imag)[:, None] <= 0)
    asym = np.abs(G - (1 / flat + 1 / (k * flat ** 2))[:, None])
    score = np.where(herglotz, asym, np.inf)
    pick = np.argmin(score, axis=1)
    out = G[np.arange(flat.size), pick]
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
