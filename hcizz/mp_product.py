r"""Initialisation spectrum of ``W = Q R^T / sqrt(d m)``: the free product of two
Marchenko-Pastur laws.

For ``Q, R`` ``d x m`` with i.i.d. ``N(0, 1)`` entries and ``m = kappa d``, the
squared singular values of ``W`` are 0 with mass ``1 - kappa`` and otherwise
follow ``nu_kappa = (1/kappa) (MP_kappa [x] MP_kappa)`` (``[x]``: free
multiplicative convolution, ``MP_kappa`` the law of ``Q^T Q / d``, mean 1).

Algebraic equation (*derived here*)
-----------------------------------
``S_{MP_kappa}(z) = 1 / (1 + kappa z)``, so ``S_nu(z) = kappa / (1 + kappa z)^2``.
With ``psi(z) = sum_k m_k z^k`` and ``z = psi / (1 + psi) * S(psi)`` at
``z = 1/x``, ``psi = x G(x) - 1`` solves the cubic

.. math::

    P_x(\psi) = \kappa^2 \psi^3 + (\kappa^2 + 2\kappa)\psi^2 + (1 + 2\kappa - \kappa x)\psi + 1 = 0 .

Its Cardano discriminant factors exactly:
``Delta = x (x - x_-)(x_+ - x) / (27 kappa^3)`` with edges

.. math::

    x_\pm = \frac{8 + 20\kappa - \kappa^2 \pm (\kappa + 8)\sqrt{\kappa(\kappa + 8)}}{8\kappa},
    \qquad x_- = \frac{(1-\kappa)^3}{\kappa^2 x_+} .

Inside ``(x_-, x_+)`` ``Delta > 0``: one real root and a complex-conjugate pair;
the physical branch ``G(x - i0)`` is the member of the pair with positive
imaginary part, and the density is ``Im psi / (pi x)``.  With Cardano's
``u, v = cbrt(-q/2 +- sqrt(Delta))`` the pair's imaginary part is
``(sqrt 3 / 2)(u - v) = sqrt(3 Delta) / (u^2 + u v + v^2)`` (no cancellation), so
the density is accurate to rounding up to both edges.  At ``kappa = 1`` this is the
Fuss-Catalan law on ``[0, 27/4]`` (moments ``binom(3k, k) / (2k + 1)``, density
``~ x^(-2/3)`` at 0).

Moments (Lagrange inversion of ``psi = z (1 + psi)(1 + kappa psi)^2 / kappa``):

.. math::

    m_k = \frac{1}{k \kappa^k} \sum_{j=0}^{k-1} \binom{k}{j+1}\binom{2k}{j} \kappa^j .

Scaled variables (*derived here*; used for every ``kappa``).  With
``X = kappa x``, ``epsilon = sqrt(kappa)`` and ``zeta = (X - 1)/epsilon`` the law
of ``zeta`` has order-one support ``[zeta_-, zeta_+]``,
``zeta_+- = (epsilon (20 - kappa) +- (kappa + 8)^(3/2)) / 8`` (length
``(kappa + 8)^(3/2)/4``), and tends to the semicircle of radius ``2 sqrt 2`` as
``kappa -> 0``.  ``sigma = kappa psi`` solves the cubic with order-one
coefficients ``sigma^3 + (2 + kappa) sigma^2 + (1 + 2 kappa - X) sigma + kappa = 0``
(Cardano ``p = -((1-kappa)^2 + 3X)/3``, ``q = (9(kappa+2)X - 2(1-kappa)^3)/27``,
``Delta = kappa X (zeta - zeta_-)(zeta_+ - zeta)/27``), and the density of ``zeta``
is

.. math::

    f_\zeta = \frac{\sqrt{(\zeta - \zeta_-)(\zeta_+ - \zeta)/X}}{3\pi (u^2 + u v + v^2)},
    \qquad X = X_- + \epsilon (\zeta - \zeta_-),\quad X_- = (1-\kappa)^3 / X_+ ,

with no cancellation and nothing of order ``1/kappa`` (the pdf in ``x`` is
``epsilon f_zeta``; ``zeta - zeta_- = epsilon (x - x_-)`` with ``x_-`` a
double-double, exact at every double ``x``).  Mean ``1/kappa``, variance
``2/kappa``, skewness ``5 sqrt(kappa) / (2 sqrt 2)``, excess kurtosis
``7 kappa / 2 - 1`` (from the moment formula below).

CDF: the density in ``phi`` with ``zeta = zeta_- + L w^3``, ``w = (1 - cos phi)/2``,
is smooth on ``[0, pi]`` in both regimes (soft edges and the ``x^(-2/3)``
crossover as ``kappa -> 1``); it is integrated once by composite Gauss-Legendre
on panels graded geometrically toward both ends, and on each panel the
logarithm of the CDF (of the survival function) relative to its value at the
panel's end nearer the edge is stored as a Chebyshev interpolant, evaluated in
``phi`` on the lower half and in ``pi - phi`` on the upper half, so both tails are
accurate relative to themselves.  On the two end panels (within ``1e-23`` of an
edge in ``w``) the leading edge power law ``F = A f(A)/(1 + alpha)``
(``alpha = 1/2`` at a soft edge, ``-2/3`` at the hard edge of ``kappa = 1``) is
exact to double precision.
"""
from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np
from numpy.polynomial import chebyshev as C

from .checks import check_int, check_real
from .numerics import (SpectralLaw, _PairedQuantiles, chunked, dd_ceil, dd_floor, dd_from_mp, gauss_legendre,
                       invert_monotone)
from ._docparams import fill_doc

__all__ = ["mp_product", "MPProduct", "mp_product_moment", "mp_product_edges",
           "mp_product_psi_imag"]

_DEG = 24
#: smallest kappa whose support (near 1/kappa) and variance (2/kappa) are finite doubles
KAPPA_MIN = float(np.finfo(float).tiny)


def _check_kappa(kappa):
    k = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    if k < KAPPA_MIN:
        raise ValueError(f"kappa must be a real number in [{KAPPA_MIN!r}, 1] for mp_product (below it "
                         f"the support, near 1/kappa, and the variance 2/kappa exceed the largest "
                         f"double), got {kappa!r}")
    return k


@lru_cache(maxsize=512)
def _geometry(kappa):
    """Scaled geometry of ``nu_kappa`` (mpmath, 40 digits beyond the support's relative width).

    Returns ``(eps, L, zeta_m, X_m, xm_hi, xm_lo, xp_hi, xp_lo)``: ``eps = sqrt(kappa)``,
    ``L = zeta_+ - zeta_-``, ``X_- = kappa x_-`` and the edges ``x_-+`` as double-doubles.
    """
    import mpmath as mp

    with mp.workdps(45 + int(abs(np.log10(kappa)) / 2)):
        k = mp.mpf(kappa)
        e = mp.sqrt(k)
        L = (k + 8) ** mp.mpf(1.5) / 4
        zp = (e * (20 - k) + (k + 8) ** mp.mpf(1.5)) / 8
        Xp = 1 + e * zp
        Xm = (1 - k) ** 3 / Xp
        zm = (Xm - 1) / e
        return (float(e), float(L), float(zm), float(Xm)) + dd_from_mp(Xm / k) + dd_from_mp(Xp / k)


@fill_doc
def mp_product_edges(kappa):
    r"""Return the support :math:`(x_-, x_+)` of :math:`\nu_\kappa` (see module notes).

    Parameters
    ----------
    kappa : float
        Rank fraction in ``[2.2250738585072014e-308, 1]`` (below, the support,
        near :math:`1/\kappa`, is beyond the largest double).

    Returns
    -------
    x_minus : float
        Lower edge, the nearest double; :math:`x_- = 0` only at :math:`\kappa = 1`.
    x_plus : float
        Upper edge, the nearest double; ``mp_product(kappa).edges`` are the same
        edges rounded outward.

    See Also
    --------
    hcizz.mp_product : The law on this support.
    replica.symbolic.mp_product_edges : The edges in closed form, in sympy.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> print(mp_product_edges(1.0))        # Fuss-Catalan: [0, 27/4]
    (0.0, 6.75)
    >>> print(mp_product_edges(0.5))
    (0.05670027278123566, 8.818299727218765)
    """
    k = _check_kappa(kappa)
    g = _geometry(k)
    return g[4], g[6]


@fill_doc
def mp_product_moment(n, kappa):
    r"""Compute the moment :math:`m_n` of :math:`\nu_\kappa` by the Lagrange-inversion sum (exact rational in ``kappa``).

    Parameters
    ----------
    n : int
        Order, :math:`n \ge 0`.
    %(rank_fraction)s

    Returns
    -------
    float
        :math:`m_n = \frac{1}{n \kappa^n} \sum_{j<n} \binom{n}{j+1} \binom{2n}{j} \kappa^j`.

    See Also
    --------
    hcizz.mp_product : The law; its ``moment`` method.
    hcizz.mp_moment : The Marchenko-Pastur moments.
    replica.symbolic.mp_product_moment_series : The moment series, in sympy.

    Notes
    -----
    The positive terms are summed in mpmath (30 digits, unbounded exponent)
    and rounded once: correctly rounded for every :math:`\kappa`, and ``inf``
    exactly when :math:`m_n` (about :math:`\kappa^{-n}`) exceeds the largest double.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> print(mp_product_moment(2, 1.0), mp_product_moment(2, 0.5))   # (1 + 2 kappa) / kappa^2
    3.0 8.0
    """
    n = check_int("n", n, low=0)
    k = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    if n == 0:
        return 1.0
    import mpmath as mp

    with mp.workdps(30):
        kk = mp.mpf(k)
        total = mp.fsum(comb(n, j + 1) * comb(2 * n, j) * kk ** j for j in range(n))
        return float(total / (n * kk ** n))


def _density_zeta(A, B, X, kappa):
    """Density of ``zeta`` from ``A = zeta - zeta_-``, ``B = zeta_+ - zeta`` and ``X = kappa x`` (module notes)."""
    A = np.clip(A, 0, None)
    B = np.clip(B, 0, None)
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        if kappa == 1.0:
            # p = -X, q = X: factor X^(1/3) out of Cardano's roots (nothing underflows as X -> 0)
            c = np.cbrt(X)
            g = np.cbrt(0.5 + np.sqrt((A / X) * (B / 27.0)))
            den = c * c * (g * g + c / 3.0 + c * c / (9.0 * g * g))
        else:
            omk = 1.0 - kappa
            p = -(omk * omk + 3.0 * X) / 3.0
            q = (9.0 * (kappa + 2.0) * X - 2.0 * omk ** 3) / 27.0
            # sqrt(kappa X A B / 27) as a product of square roots: no underflow
            sd = np.sqrt(kappa * X) * np.sqrt(A) * np.sqrt(B / 27.0)
            # Cardano: the larger cube root without cancellation, the other from u v = -p/3
            big = np.cbrt(-q / 2.0 + np.where(q > 0, -sd, sd))
            small = np.where(big != 0, -p / (3.0 * big), 0.0)
            den = big * big + big * small + small * small
        f = np.sqrt(A / X) * np.sqrt(B) / (3.0 * np.pi * den)
    return np.where((A > 0) & (B > 0) & (X > 0) & (den > 0), f, 0.0)


def _edge_vars(x, kappa, geom):
    """``(A, B, X)`` at the doubles ``x``: ``A = eps (x - x_-)``, ``B = eps (x_+ - x)`` (exact edges)."""
    eps, _, _, _, xm_hi, xm_lo, xp_hi, xp_lo = geom
    x = np.asarray(x, dtype=float)
    A = eps * ((x - xm_hi) - xm_lo)
    B = eps * ((xp_hi - x) + xp_lo)
    return A, B, kappa * x


@fill_doc
def mp_product_psi_imag(x, kappa, edges=None):
    r"""Compute :math:`\mathrm{Im}\, \psi(x - i0) \ge 0` of :math:`\nu_\kappa` (0 outside the support), vectorised in ``x``.

    :math:`\psi = x G(x) - 1` solves the cubic of the module notes; inside the
    support its complex pair has imaginary part :math:`\mathrm{Im}\, \sigma / \kappa`
    with :math:`\mathrm{Im}\, \sigma = \sqrt{3 \Delta} / (u^2 + u v + v^2)` (Cardano on
    the scaled cubic, no cancellation).  The density is
    :math:`\mathrm{Im}\, \psi / (\pi x)`.

    Parameters
    ----------
    x : float or array_like
        Points.
    kappa : float
        Rank fraction in ``[2.2250738585072014e-308, 1]`` (not validated here).
    edges : tuple of float, optional
        Accepted for compatibility and ignored: the edges are recomputed (and
        cached) as double-doubles.

    Returns
    -------
    ndarray
        :math:`\mathrm{Im}\, \psi(x - i0)`, shape of ``x``.

    See Also
    --------
    hcizz.mp_product : The law whose density this gives.
    hcizz.free_transforms.stieltjes_mp_product : Its Stieltjes transform off the axis.

    %(refs_spectral_laws)s

    Examples
    --------
    The density of the nonzero part at :math:`x = 2`, :math:`\kappa = 1/2`:

    >>> print(f"{mp_product_psi_imag(2.0, 0.5) / (np.pi * 2.0):.10f}")
    0.1428482484
    >>> print(mp_product_psi_imag([1.0, 3.0, 7.0], 1.0))       # 7 > 27/4: outside
    [0.56227951 0.56523585 0.        ]
    """
    k = float(kappa)
    geom = _geometry(k)
    A, B, X = _edge_vars(x, k, geom)
    # Im psi = Im chi / eps = pi X f_zeta / eps
    return np.pi * X * _density_zeta(A, B, X, k) / geom[0]


def _panels():
    """Breakpoints in ``phi`` (graded toward both ends) and, exactly, their distances to ``pi``."""
    g = np.pi * 2.0 ** -np.arange(2, 40)                  # pi/4 ... pi 2^-39
    inner = np.linspace(np.pi / 4, 3 * np.pi / 4, 9)[1:-1]
    phi = np.concatenate([[0.0], g[::-1], inner, np.pi - g, [np.pi]])
    psi = np.concatenate([[np.pi], np.pi - g[::-1], np.pi - inner, g, [0.0]])
    return phi, psi


@fill_doc
class MPProduct(_PairedQuantiles, SpectralLaw):
    r"""Nonzero squared singular values of :math:`Q R^T / \sqrt{d m}` at initialisation.

    Parameters
    ----------
    kappa : float
        Rank fraction :math:`m / d` in ``[2.2250738585072014e-308, 1]`` (below, the
        support, near :math:`1/\kappa`, is beyond the largest double: ``ValueError``).
    **kw
        Keyword arguments of ``scipy.stats.rv_continuous`` (``name``, ...).

    Attributes
    ----------
    kappa : float
    atom : float
        :math:`1 - \kappa`: mass at zero of the squared singular values of :math:`W`.
    edges : tuple
        :math:`(x_-, x_+)` rounded outward to doubles.

    See Also
    --------
    hcizz.mp_product : Construct the law.
    hcizz.mp_product_edges : Its support.
    hcizz.mp_product_moment : Its moments.
    hcizz.marchenko_pastur.MarchenkoPastur : The factor law.

    Notes
    -----
    :math:`\nu_\kappa = \kappa^{-1}\, \mathrm{MP}_\kappa \boxtimes \mathrm{MP}_\kappa`;
    mean :math:`1 / \kappa` (the full law, with the atom, has mean 1), variance
    :math:`2 / \kappa`, skewness :math:`5 \sqrt{\kappa}/(2 \sqrt 2)`, excess kurtosis
    :math:`7 \kappa / 2 - 1`.  See the module docstring for the cubic, the root
    choice, the edges, the scaled variable :math:`\zeta` and the CDF.  Every
    computation runs in :math:`\zeta`, where the law has order-one support for every
    :math:`\kappa`, and the edges are double-doubles, so nothing cancels or
    overflows before the final scaling :math:`x = (1 + \sqrt{\kappa}\, \zeta)/\kappa`;
    ``moment(n)`` is ``inf`` exactly when it exceeds the largest double
    (:math:`\kappa^n \lesssim 10^{-308}`).  Measured worst relative
    errors against mpmath on the log grid ``kappa`` = 2.2e-308 ... 1 (23
    values, ``tests/test_domain_sweep.py -m slow``): mean and variance exact to
    rounding, skewness 2.5e-16, kurtosis 1.7e-16, entropy 3.9e-16, ``pdf``
    1.0e-15, ``cdf`` 8.8e-15 and ``sf`` 3.7e-15 (at doubles next to both edges;
    near a soft edge the tail grows like ``phi^9`` in the table's angle, which
    amplifies its rounding), ``ppf`` 6.5e-15 and ``isf`` 1.8e-15 (``q`` down to
    1e-300).  Stated (and tested) accuracy: 4e-16 for the moments, 1e-15 for
    the entropy, 2e-14 for ``cdf`` and ``sf``, 1e-14 for ``ppf`` and ``isf``.

    %(refs_spectral_laws_edges)s

    Examples
    --------
    >>> from hcizz import mp_product
    >>> law = mp_product(1.0)
    >>> print([float(law.moment(k)) for k in (1, 2, 3)])
    [1.0, 3.0, 12.0]
    >>> law = mp_product(2.0 ** -1000)         # support ~ 2^1000 +- 2^501.5, one variable zeta inside
    >>> print(law.mean() / 2.0 ** 1000, law.var() / 2.0 ** 1001, f"{law.cdf(law.mean()):.12f}")
    1.0 1.0 0.500000000000
    """

    _param_names = ("kappa",)

    def __init__(self, kappa, **kw):        # the law's own signature (``SpectralLaw`` takes ``*args``)
        super().__init__(kappa, **kw)

    def _setup(self, kappa):
        kappa = _check_kappa(kappa)
        self.kappa = kappa
        self.atom = 1.0 - kappa
        geom = _geometry(kappa)
        self._geom = geom
        self._eps, self._L, self._zm, self._Xm = geom[:4]
        self._xm, self._xp = geom[4:6], geom[6:8]
        self._Lx = self._L / self._eps                  # x_+ - x_-
        self.edges = (dd_floor(*self._xm), dd_ceil(*self._xp))
        self._alpha_lo = -2.0 / 3.0 if kappa == 1.0 else 0.5
        self._build_tables()
        return self.edges

    # --- the angle variable: w = sin^2(phi/2) = cos^2(psi/2), psi = pi - phi
    @staticmethod
    def _w_pair(phi, psi):
        """``(w, 1 - w)`` from the accurate one of ``phi``, ``psi``."""
        lower = phi <= np.pi / 2
        w = np.where(lower, np.sin(phi / 2) ** 2, np.cos(psi / 2) ** 2)
        omw = np.where(lower, np.cos(phi / 2) ** 2, np.sin(psi / 2) ** 2)
        return w, omw

    def _g(self, phi, psi):
        """Density in ``phi``: ``f_zeta(zeta(phi)) dzeta/dphi``."""
        w, omw = self._w_pair(phi, psi)
        A = self._L * w ** 3
        B = self._L * omw * (1 + w + w * w)
        X = self._Xm + self._eps * A
        dz = 1.5 * self._L * w * w * np.sin(np.where(phi <= np.pi / 2, phi, psi))
        return _density_zeta(A, B, X, self.kappa) * dz

    def _angles_of_x(self, x):
        """``(phi, psi)`` at the doubles ``x``, each accurate where it is the smaller."""
        A, B, _ = _edge_vars(x, self.kappa, self._geom)
        omw3 = np.clip(B / self._L, 0, 1)
        w = np.clip(np.cbrt(A) / np.cbrt(self._L), 0, 1)   # cbrt first: A may be subnormal
        omw = omw3 / (1 + w + w * w)                    # 1 - w = (1 - w^3)/(1 + w + w^2)
        lower = w <= 0.5
        phi_l = 2 * np.arcsin(np.sqrt(np.where(lower, w, 0.0)))
        psi_u = 2 * np.arcsin(np.sqrt(np.clip(np.where(lower, 0.0, omw), 0, 1)))
        phi = np.where(lower, phi_l, np.pi - psi_u)
        psi = np.where(lower, np.pi - phi_l, psi_u)
        return phi, psi

    def _x_of_angles(self, phi, psi):
        w, omw = self._w_pair(phi, psi)
        lower = phi <= np.pi / 2
        xl = self._xm[0] + (self._xm[1] + self._Lx * w ** 3)
        xu = self._xp[0] + (self._xp[1] - self._Lx * omw * (1 + w + w * w))
        return np.where(lower, xl, xu)

    # kept for tests and callers: x(phi) and the density in phi
    def _x_of_phi(self, phi):
        phi = np.asarray(phi, dtype=float)
        return self._x_of_angles(phi, np.pi - phi)

    def _dens_phi(self, phi):
        phi = np.asarray(phi, dtype=float)
        return self._g(phi, np.pi - phi)

    def _build_tables(self):
        bphi, bpsi = _panels()
        self._bphi, self._bpsi = bphi, bpsi
        a, b = bphi[:-1], bphi[1:]
        pa, pb = bpsi[:-1], bpsi[1:]                      # psi at the panel ends (pa > pb)
        h = np.where(b <= np.pi / 2, b - a, pa - pb)
        lowp = b <= np.pi / 2                            # panel in the lower half: evaluate in phi
        self._lowp = lowp
        nodes, wts = gauss_legendre(40)

        def at(frac):
            """``(phi, psi)`` at ``a + frac h`` (``frac`` broadcast against the panel axis 0)."""
            ph = a.reshape((-1,) + (1,) * (frac.ndim - 1)) + frac * h.reshape((-1,) + (1,) * (frac.ndim - 1))
            ps = pa.reshape(ph.shape[:1] + (1,) * (frac.ndim - 1)) - frac * h.reshape((-1,) + (1,) * (frac.ndim - 1))
            lp = lowp.reshape((-1,) + (1,) * (frac.ndim - 1))
            return np.where(lp, ph, np.pi - ps), np.where(lp, np.pi - ph, ps)

        mass = h * np.sum(wts * self._g(*at(np.broadcast_to(nodes, (len(a), nodes.size)))), axis=1)
        self._total_quadrature_mass = float(mass.sum())
        mass = mass / mass.sum()
        cum_lo = np.concatenate([[0.0], np.cumsum(mass)])
        cum_hi = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])
        self._cum_lo, self._cum_hi = cum_lo, cum_hi
        tj = np.cos(np.pi * (np.arange(_DEG + 1) + 0.5) / (_DEG + 1))   # in (-1, 1)
        uj = (tj + 1) / 2
        # partial integrals from the panel start to each node and from each node to the panel end
        sub_lo = uj[None, :, None] * nodes[None, None, :]
        sub_hi = uj[None, :, None] + (1 - uj[None, :, None]) * nodes[None, None, :]
        g_lo = self._g(*at(np.broadcast_to(sub_lo, (len(a),) + sub_lo.shape[1:])))
        g_hi = self._g(*at(np.broadcast_to(sub_hi, (len(a),) + sub_hi.shape[1:])))
        norm = self._total_quadrature_mass
        part_lo = (uj[None, :] * h[:, None]) * np.sum(wts * g_lo, axis=2) / norm
        part_hi = ((1 - uj)[None, :] * h[:, None]) * np.sum(wts * g_hi, axis=2) / norm
        with np.errstate(divide="ignore", invalid="ignore"):
            LF = np.log1p(part_lo / cum_lo[:-1, None])          # log(F / F(panel start))
            LS = np.log1p(part_hi / cum_hi[1:, None])           # log(S / S(panel end))
        LF[0] = 0.0      # end panels: edge power laws instead
        LS[-1] = 0.0
        self._cF = np.ascontiguousarray(C.chebfit(tj, LF.T, _DEG))   # (DEG+1, npanel)
        self._cS = np.ascontiguousarray(C.chebfit(tj, LS.T, _DEG))

    def _local(self, phi, psi):
        """Panel index and local coordinate in ``[-1, 1]`` (from ``psi`` on the upper half)."""
        idx = np.clip(np.searchsorted(self._bphi, phi, side="right") - 1, 0, len(self._bphi) - 2)
        a, b = self._bphi[idx], self._bphi[idx + 1]
        pa, pb = self._bpsi[idx], self._bpsi[idx + 1]
        t = np.where(self._lowp[idx], 2 * (phi - a) / (b - a) - 1, 1 - 2 * (psi - pb) / (pa - pb))
        return idx, np.clip(t, -1.0, 1.0)

    @staticmethod
    def _cheb(coef, idx, t):
        t2 = 2 * t
        b1 = np.zeros_like(t)
        b2 = np.zeros_like(t)
        for j in range(_DEG, 0, -1):  # Clenshaw, gathering one coefficient row at a time
            b0 = t2 * b1
            b0 -= b2
            b0 += coef[j][idx]
            b2, b1 = b1, b0
        return t * b1 - b2 + coef[0][idx]

    def _edge_law(self, phi, psi, upper):
        """Leading edge power law on an end panel: ``A f(A)/(1 + alpha)`` (or with ``B``).

        Exact to double precision there (the next term is smaller by ``A / X_-`` or
        ``A^(1/3)``, below 1e-20).  At the hard edge of ``kappa = 1``
        ``3 A f(A) = sqrt(B) A^(1/3) / (pi (g^2 + ...))`` with ``A^(1/3) = L^(1/3) w``,
        so it does not underflow with ``A = L w^3``.
        """
        w, omw = self._w_pair(phi, psi)
        A = self._L * w ** 3
        B = self._L * omw * (1 + w + w * w)
        X = self._Xm + self._eps * A
        norm = self._total_quadrature_mass
        if upper:
            return B * _density_zeta(A, B, X, self.kappa) / (1.5 * norm)
        if self.kappa == 1.0:
            c = np.cbrt(self._L) * w                    # A^(1/3) = X^(1/3)
            with np.errstate(invalid="ignore", divide="ignore"):
                g = np.cbrt(0.5 + np.sqrt(B / 27.0))    # A = X
                out = np.sqrt(B) * c / (np.pi * (g * g + c / 3.0 + c * c / (9.0 * g * g)))
            return np.where(w > 0, out, 0.0) / norm
        return A * _density_zeta(A, B, X, self.kappa) / (1.5 * norm)

    def _F(self, phi, psi):
        def ev(args):
            ph, ps = args[0], args[1]
            idx, t = self._local(ph, ps)
            out = self._cum_lo[idx] * np.exp(self._cheb(self._cF, idx, t))
            first = idx == 0
            if np.any(first):
                out[first] = self._edge_law(ph[first], ps[first], False)
            return out

        return _chunk2(ev, phi, psi)

    def _S(self, phi, psi):
        def ev(args):
            ph, ps = args[0], args[1]
            idx, t = self._local(ph, ps)
            out = self._cum_hi[idx + 1] * np.exp(self._cheb(self._cS, idx, t))
            last = idx == len(self._bphi) - 2
            if np.any(last):
                out[last] = self._edge_law(ph[last], ps[last], True)
            return out

        return _chunk2(ev, phi, psi)

    # --- scipy hooks
    def _pdf(self, x):
        A, B, X = _edge_vars(x, self.kappa, self._geom)
        return self._eps * _density_zeta(A, B, X, self.kappa)

    def _cdf(self, x):
        phi, psi = self._angles_of_x(x)
        F = self._F(phi, psi)
        return np.clip(np.where(F < 0.5, F, 1.0 - self._S(phi, psi)), 0.0, 1.0)

    def _sf(self, x):
        phi, psi = self._angles_of_x(x)
        F = self._F(phi, psi)
        return np.clip(np.where(F < 0.5, 1.0 - F, self._S(phi, psi)), 0.0, 1.0)

    def _solve(self, q, upper):
        """``phi`` with ``F(phi) = q`` (lower) or ``psi`` with ``S = q`` (upper), bracketed per panel."""
        q = np.asarray(q, dtype=float)
        npan = len(self._bphi) - 1
        if upper:
            cum = self._cum_hi[::-1]                        # increasing in psi
            ends = self._bpsi[::-1]                         # psi breakpoints, increasing
            k = np.clip(np.searchsorted(cum, q, side="right") - 1, 0, npan - 1)
            F = lambda v: self._S(np.pi - v, v)             # noqa: E731
            dF = lambda v: self._g(np.pi - v, v) / self._total_quadrature_mass  # noqa: E731
            power = 3.0
        else:
            cum, ends = self._cum_lo, self._bphi
            k = np.clip(np.searchsorted(cum, q, side="right") - 1, 0, npan - 1)
            F = lambda v: self._F(v, np.pi - v)             # noqa: E731
            dF = lambda v: self._g(v, np.pi - v) / self._total_quadrature_mass  # noqa: E731
            power = 3.0 * (2 + 2 * self._alpha_lo)           # F ~ w^(3 (1 + alpha)) ~ phi^(6 (1 + alpha))
        # on the end panel the tail is the power law F ~ v^power: dF = power F / v there (the
        # density in the angle underflows first at the hard edge, where F ~ phi^2)
        first_end = ends[1]
        F_all, g_all = F, dF
        F = lambda v: F_all(v)                              # noqa: E731
        dF = lambda v: np.where(v < first_end, power * F_all(v) / np.where(v > 0, v, 1.0), g_all(v))  # noqa: E731
        lo, hi = ends[k], ends[k + 1]
        Flo, Fhi = cum[k], cum[k + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            geo = lo * (hi / lo) ** (np.log(q / Flo) / np.log(Fhi / Flo))
            first = hi * (q / Fhi) ** (1.0 / power)
        x0 = np.where(k == 0, first, geo)
        x0 = np.where(np.isfinite(x0), x0, 0.5 * (lo + hi))
        return invert_monotone(F, dF, q, lo, hi, x0)

    def _quantile_pair(self, q, one_minus_q):
        low = q <= 0.5
        phi_l = self._solve(np.where(low, q, 0.5), False)
        psi_u = self._solve(np.where(low, 0.5, one_minus_q), True)
        phi = np.where(low, phi_l, np.pi - psi_u)
        psi = np.where(low, np.pi - phi_l, psi_u)
        return np.clip(self._x_of_angles(phi, psi), *self.edges)

    def _munp(self, n):
        n = np.asarray(n)
        vals = [mp_product_moment(int(k), self.kappa) for k in np.ravel(n)]
        return np.reshape(vals, np.shape(n)) if np.ndim(n) else vals[0]

    def _stats(self):
        k = self.kappa
        return 1.0 / k, 2.0 / k, 5.0 * np.sqrt(k) / (2.0 * np.sqrt(2.0)), 3.5 * k - 1.0

    def _entropy(self):
        # h_x = h_zeta - log(sqrt kappa); h_zeta = -Int g log(g / zeta'(phi)) dphi on the panels
        nodes, wts = gauss_legendre(40)
        bphi, bpsi = self._bphi, self._bpsi
        total = 0.0
        for i in range(len(bphi) - 1):
            if self._lowp[i]:
                h = bphi[i + 1] - bphi[i]
                ph = bphi[i] + h * nodes
                ps = np.pi - ph
            else:
                h = bpsi[i] - bpsi[i + 1]
                ps = bpsi[i] - h * nodes
                ph = np.pi - ps
            w, _ = self._w_pair(ph, ps)
            dz = 1.5 * self._L * w * w * np.sin(np.where(ph <= np.pi / 2, ph, ps))
            g = self._g(ph, ps) / self._total_quadrature_mass
            with np.errstate(divide="ignore", invalid="ignore"):
                term = np.where(g > 0, g * np.log(g / dz), 0.0)
            total -= h * np.sum(wts * term)
        return float(total - 0.5 * np.log(self.kappa))

    @property
    def quadrature_mass(self):
        """Total mass of the pdf by the composite quadrature (should be 1)."""
        return self._total_quadrature_mass


def _chunk2(func, a, b, chunk=1 << 14):
    """``func((a, b))`` elementwise on two equal-shape float arrays, in chunks."""
    a = np.asarray(a, dtype=float)
    b = np.broadcast_to(np.asarray(b, dtype=float), a.shape)
    stacked = np.stack([a.ravel(), b.ravel()])
    out = np.empty(a.size)
    for i in range(0, a.size, chunk):
        out[i:i + chunk] = func(stacked[:, i:i + chunk])
    return out.reshape(a.shape)


@fill_doc
def mp_product(kappa):
    r"""Law of the nonzero squared singular values of :math:`Q R^T / \sqrt{d m}`, :math:`m = \kappa d`.

    Parameters
    ----------
    %(tiny_kappa)s

    Returns
    -------
    MPProduct
        :math:`\kappa^{-1}\, \mathrm{MP}_\kappa \boxtimes \mathrm{MP}_\kappa` as a
        ``scipy.stats.rv_continuous`` on ``mp_product_edges(kappa)``; ``.atom``
        :math:`= 1 - \kappa` is the mass at zero of the squared singular values of
        :math:`W` (see :class:`MPProduct` and the module notes).

    Raises
    ------
    ValueError
        If ``kappa`` is not a real number in ``(0, 1]``, or is below
        ``2.2250738585072014e-308`` (the support would exceed the largest double).

    See Also
    --------
    hcizz.mp_product.MPProduct : The law's class and its numerics.
    hcizz.truncated_quarter_circle : The spectrum at capacity, for comparison.
    hcizz.free_transforms.s_transform_mp_product : Its S-transform.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> law = mp_product(0.5)
    >>> print(law.atom, f"{law.mean():.12f} {law.cdf(law.ppf(0.3)):.12f}")
    0.5 2.000000000000 0.300000000000
    """
    return MPProduct(kappa, name="mp_product")
