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

CDF: the density in ``phi`` with ``x = x_- + (x_+ - x_-) ((1 - cos phi)/2)^3``
is smooth on ``[0, pi]`` in both regimes (soft edge at ``x_-`` and the
``x^(-2/3)`` crossover as ``kappa -> 1``); it is integrated once by composite
Gauss-Legendre on panels graded geometrically toward both ends, and the CDF and
survival function are stored per panel as degree-24 Chebyshev interpolants in ``phi``.
"""
from __future__ import annotations

from math import comb

import numpy as np
from numpy.polynomial import chebyshev as C

from .checks import check_int, check_real
from .numerics import SpectralLaw, gauss_legendre, invert_monotone

__all__ = ["mp_product", "MPProduct", "mp_product_moment", "mp_product_edges",
           "mp_product_psi_imag"]

_DEG = 24


def mp_product_edges(kappa):
    """Return the support ``(x_-, x_+)`` of ``nu_kappa`` (see module notes).

    Parameters
    ----------
    kappa : float
        Rank fraction in ``(0, 1]``.

    Returns
    -------
    x_minus, x_plus : float
        Lower and upper edge; ``x_- = 0`` only at ``kappa = 1``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz

    Examples
    --------
    >>> mp_product_edges(1.0)        # Fuss-Catalan: [0, 27/4]
    (0.0, 6.75)
    """
    k = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    xp = (8 + 20 * k - k * k + (k + 8) * np.sqrt(k * (k + 8))) / (8 * k)
    xm = (1 - k) ** 3 / (k * k * xp)
    return float(xm), float(xp)


def mp_product_moment(n, kappa):
    r"""``m_n`` of ``nu_kappa`` by the Lagrange-inversion sum (exact rational in ``kappa``).

    Parameters
    ----------
    n : int
        Order, ``n >= 0``.
    kappa : float
        Rank fraction in ``(0, 1]``.

    Returns
    -------
    float
        ``m_n = (1 / (n kappa^n)) sum_{j<n} binom(n, j+1) binom(2n, j) kappa^j``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz

    Examples
    --------
    >>> mp_product_moment(2, 1.0), mp_product_moment(2, 0.5)   # (1 + 2 kappa) / kappa^2
    (3.0, 8.0)
    """
    n = check_int("n", n, low=0)
    k = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    if n == 0:
        return 1.0
    return sum(comb(n, j + 1) * comb(2 * n, j) * k ** j for j in range(n)) / (n * k ** n)


def mp_product_psi_imag(x, kappa, edges=None):
    """Compute ``Im psi(x - i0) >= 0`` of ``nu_kappa`` (0 outside the support), vectorised in ``x``.

    ``psi = x G(x) - 1`` solves the cubic of the module notes; inside the
    support its complex pair has imaginary part ``sqrt(3 Delta) / (u^2 + u v + v^2)``
    (Cardano, no cancellation).  The density is ``Im psi / (pi x)``.

    Parameters
    ----------
    x : float or array_like
        Points.
    kappa : float
        Rank fraction in ``(0, 1]`` (not validated here).
    edges : tuple of float, optional
        ``mp_product_edges(kappa)``, if already known.

    Returns
    -------
    ndarray
        ``Im psi(x - i0)``, shape of ``x``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz
    """
    k = float(kappa)
    xm, xp = edges if edges is not None else mp_product_edges(k)
    x = np.asarray(x, dtype=float)
    # depressed cubic t^3 + p t + q (psi = t - (k + 2) / (3 k)), in factored form
    p = -((1 - k) ** 2 + 3 * k * x) / (3 * k * k)
    q = (9 * k * (k + 2) * x - 2 * (1 - k) ** 3) / (27 * k ** 3)
    inside = (x > xm) & (x < xp) & (x > 0)
    with np.errstate(invalid="ignore"):
        delta = np.where(inside, x * (x - xm) * (xp - x) / (27 * k ** 3), 0.0)
    sd = np.sqrt(delta)
    # Cardano: u, v = cbrt(-q/2 +- sd); take the larger one without cancellation
    # and the other from u v = -p/3
    sgn = np.where(q > 0, -1.0, 1.0)
    big = np.cbrt(-q / 2 + sgn * sd)
    with np.errstate(invalid="ignore", divide="ignore"):
        small = np.where(big != 0, -p / (3 * big), 0.0)
        den = big * big + big * small + small * small
        im = np.where(inside & (den > 0), np.sqrt(3.0) * sd / den, 0.0)
    return im


class MPProduct(SpectralLaw):
    r"""Nonzero squared singular values of ``Q R^T / sqrt(d m)`` at initialisation.

    Parameters
    ----------
    kappa : float
        Rank fraction ``m / d`` in ``(0, 1]``.

    Attributes
    ----------
    kappa : float
    atom : float
        ``1 - kappa``: mass at zero of the squared singular values of ``W``.
    edges : tuple
        ``(x_-, x_+)``.

    Notes
    -----
    ``nu_kappa = (1/kappa) MP_kappa [x] MP_kappa``; mean ``1 / kappa`` (the full law,
    with the atom, has mean 1), second moment ``(1 + 2 kappa) / kappa^2``.  See the
    module docstring for the cubic, the root choice, the edges and the CDF.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz

    Examples
    --------
    >>> from hcizz import mp_product
    >>> law = mp_product(1.0)
    >>> [round(float(law.moment(k)), 10) for k in (1, 2, 3)]
    [1.0, 3.0, 12.0]
    """

    _param_names = ("kappa",)

    def _setup(self, kappa):
        kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
        self.kappa = kappa
        self.atom = 1.0 - kappa
        self.edges = mp_product_edges(kappa)
        self._build_tables()
        return self.edges

    # --- change of variables x(phi)
    def _x_of_phi(self, phi):
        xm, xp = self.edges
        w = (1 - np.cos(phi)) / 2
        return xm + (xp - xm) * w ** 3

    def _phi_of_x(self, x):
        xm, xp = self.edges
        w = np.cbrt(np.clip((x - xm) / (xp - xm), 0, 1))
        # phi = acos(1 - 2w) = 2 asin(sqrt(w)); near phi = pi use 2 acos(sqrt(w))
        return np.where(w < 0.5, 2 * np.arcsin(np.sqrt(w)), np.pi - 2 * np.arcsin(np.sqrt(1 - w)))

    def _pi_minus_phi_of_x(self, x):
        """``pi - phi(x)`` accurate near the upper edge."""
        xm, xp = self.edges
        L = xp - xm
        r = np.clip((xp - x) / L, 0, 1)  # 1 - w^3
        # 1 - w = r / (1 + w + w^2)
        w = np.cbrt(1 - r)
        one_minus_w = r / (1 + w + w * w)
        return 2 * np.arcsin(np.sqrt(np.clip(one_minus_w, 0, 1)))

    def _dens_phi(self, phi):
        """Density in ``phi``: ``pdf(x(phi)) dx/dphi``."""
        xm, xp = self.edges
        w = (1 - np.cos(phi)) / 2
        x = xm + (xp - xm) * w ** 3
        dx = 3 * (xp - xm) * w * w * np.sin(phi) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            pdf = np.where(x > 0, mp_product_psi_imag(x, self.kappa, self.edges) / (np.pi * x), 0.0)
        return pdf * dx

    def _build_tables(self):
        # panel breakpoints in phi, graded toward both ends
        g = np.pi * 2.0 ** -np.arange(1, 40)
        inner = np.linspace(np.pi / 4, 3 * np.pi / 4, 9)
        bps = np.unique(np.concatenate([[0.0], g[g < np.pi / 4][::-1], inner,
                                        (np.pi - g[g < np.pi / 4]), [np.pi]]))
        self._bps = bps
        nodes, wts = gauss_legendre(40)
        # mass on each panel
        a, b = bps[:-1], bps[1:]
        h = b - a
        pts = a[:, None] + h[:, None] * nodes
        mass = h * np.sum(wts * self._dens_phi(pts), axis=1)
        total = mass.sum()
        self._total_quadrature_mass = float(total)
        cum_lo = np.concatenate([[0.0], np.cumsum(mass)])
        cum_hi = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])
        # Chebyshev interpolants of F (from the left end) and S (from the right) per panel
        tj = np.cos(np.pi * (np.arange(_DEG + 1) + 0.5) / (_DEG + 1))  # in (-1, 1)
        uj = (tj + 1) / 2
        # integral from panel start to each node: GL on [a, a + uj h]
        sub = (a[:, None, None] + (uj[None, :, None] * h[:, None, None]) * nodes[None, None, :])
        part = (uj[None, :] * h[:, None]) * np.sum(wts * self._dens_phi(sub), axis=2)
        F = cum_lo[:-1, None] + part
        S = cum_hi[1:, None] + (mass[:, None] - part)
        self._cF = np.ascontiguousarray(C.chebfit(tj, F.T, _DEG))  # (DEG+1, npanel)
        self._cS = np.ascontiguousarray(C.chebfit(tj, S.T, _DEG))
        # fine tables for the initial guesses of the quantile function
        grid = np.unique(np.concatenate([np.linspace(0, np.pi, 4097), bps]))
        self._grid = grid
        self._F_tab = np.maximum.accumulate(np.cbrt(np.maximum(self._F_phi(grid), 0)))
        self._S_tab = np.maximum.accumulate(np.cbrt(np.maximum(self._S_phi(grid), 0))[::-1])

    def _panel_eval(self, coef, phi):
        from .numerics import chunked

        def ev(ph):
            idx = np.clip(np.searchsorted(self._bps, ph, side="right") - 1, 0, len(self._bps) - 2)
            a = self._bps[idx]
            t = 2 * (ph - a) / (self._bps[idx + 1] - a) - 1
            t2 = 2 * t
            b1 = np.zeros_like(t)
            b2 = np.zeros_like(t)
            for j in range(_DEG, 0, -1):  # Clenshaw, gathering one coefficient row at a time
                b0 = t2 * b1
                b0 -= b2
                b0 += coef[j][idx]
                b2, b1 = b1, b0
            return t * b1 - b2 + coef[0][idx]

        return chunked(ev, phi)

    def _F_phi(self, phi):
        return self._panel_eval(self._cF, phi)

    def _S_phi(self, phi):
        return self._panel_eval(self._cS, phi)

    # --- scipy hooks
    def _pdf(self, x):
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(x > 0, mp_product_psi_imag(x, self.kappa, self.edges) / (np.pi * x), 0.0)

    def _cdf(self, x):
        phi = self._phi_of_x(x)
        F = self._F_phi(phi)
        return np.clip(np.where(F < 0.5, F, 1.0 - self._S_phi(phi)), 0.0, 1.0)

    def _sf(self, x):
        phi = self._phi_of_x(x)
        F = self._F_phi(phi)
        return np.clip(np.where(F < 0.5, 1.0 - F, self._S_phi(phi)), 0.0, 1.0)

    def _solve_phi(self, q, use_S):
        q = np.asarray(q, dtype=float)
        if use_S:
            F = lambda p: -self._S_phi(p)  # noqa: E731  (increasing in phi)
            target = -q
        else:
            F = self._F_phi
            target = q
        grid = self._grid
        # initial guess: invert a fine table with cube-root interpolation
        if use_S:
            x0 = np.interp(np.cbrt(q), self._S_tab, grid[::-1])
        else:
            x0 = np.interp(np.cbrt(q), self._F_tab, grid)
        return invert_monotone(F, self._dens_phi, target, 0.0, np.pi, x0)

    def _ppf(self, q):
        q = np.asarray(q, dtype=float)
        return self._ppf_pair(q, 1.0 - q)

    def _isf(self, q):
        q = np.asarray(q, dtype=float)
        return self._ppf_pair(1.0 - q, q)

    def _ppf_pair(self, q, one_minus_q):
        low = q <= 0.5
        phi_l = self._solve_phi(np.where(low, q, 0.5), False)
        phi_u = self._solve_phi(np.where(low, 0.5, one_minus_q), True)
        xm, xp = self.edges
        om = np.cos(phi_u / 2) ** 2
        w = 1 - om
        return np.where(low, self._x_of_phi(phi_l), xp - (xp - xm) * om * (1 + w + w * w))

    def _munp(self, n):
        n = np.asarray(n)
        vals = [mp_product_moment(int(k), self.kappa) for k in np.ravel(n)]
        return np.reshape(vals, np.shape(n)) if np.ndim(n) else vals[0]

    @property
    def quadrature_mass(self):
        """Total mass of the pdf by the composite quadrature (should be 1)."""
        return self._total_quadrature_mass


def mp_product(kappa):
    """Law of the nonzero squared singular values of ``Q R^T / sqrt(d m)``, ``m = kappa d``.

    Parameters
    ----------
    kappa : float
        Rank fraction in ``(0, 1]``.

    Returns
    -------
    MPProduct
        ``(1/kappa) MP_kappa [x] MP_kappa`` as a ``scipy.stats.rv_continuous`` on
        ``mp_product_edges(kappa)``; ``.atom = 1 - kappa`` is the mass at zero of the
        squared singular values of ``W`` (see :class:`MPProduct` and the module notes).

    Raises
    ------
    ValueError
        If ``kappa`` is not a real number in ``(0, 1]``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz

    Examples
    --------
    >>> law = mp_product(0.5)
    >>> law.atom, round(float(law.mean()), 12), round(float(law.cdf(law.ppf(0.3))), 12)
    (0.5, 2.0, 0.3)
    """
    return MPProduct(kappa, name="mp_product")
