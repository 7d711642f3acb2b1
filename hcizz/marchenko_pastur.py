r"""Marchenko-Pastur law (mean 1) as a ``scipy.stats`` distribution.

``marchenko_pastur(ratio)`` is the limiting eigenvalue law of ``X^T X / d`` for a
``d x m`` matrix ``X`` with i.i.d. ``N(0, 1)`` entries and ``m / d -> ratio``:

.. math::

    \rho(x) = \frac{\sqrt{(\lambda_+ - x)(x - \lambda_-)}}{2 \pi \lambda x},
    \qquad \lambda_\pm = (1 \pm \sqrt\lambda)^2,

plus an atom ``1 - 1/lambda`` at 0 when ``lambda > 1``.  As for every law in
``hcizz`` the distribution object describes the nonzero part renormalised to
mass 1 and ``.atom`` holds the mass at zero.

CDF in closed form (*derived here*): with ``x = 1 + lambda - 2 sqrt(lambda) cos t``,
``t in [0, pi]``, the full-law CDF is

.. math::

    F = \frac1\pi\Big[\frac{\sin t}{\sqrt\lambda} + \frac{(1+\lambda) t}{2\lambda}
        - \frac{|1-\lambda|}{\lambda}
        \operatorname{atan2}\big((1+\sqrt\lambda)\sin\tfrac t2, |1-\sqrt\lambda|\cos\tfrac t2\big)\Big],

and symmetrically for the upper tail in ``s = pi - t``.  Near either edge the
terms cancel (``F ~ t^3``), so there the CDF is instead a 32-point
Gauss-Legendre quadrature of the smooth angular density
``2 sin^2 t / (pi x(t))``.
"""
from __future__ import annotations

import numpy as np

from .checks import check_int, check_real
from .numerics import SpectralLaw, TailInverter, gauss_legendre, invert_monotone

__all__ = ["marchenko_pastur", "MarchenkoPastur", "mp_moment"]


def mp_moment(k, ratio):
    r"""Compute the moments of the full Marchenko-Pastur law (Narayana polynomials).

    Parameters
    ----------
    k : int
        Order, ``k >= 0``.
    ratio : float
        ``lambda = m / d > 0`` (finite).

    Returns
    -------
    float
        ``E x^k = sum_{j=0}^{k-1} ratio^j binom(k, j) binom(k, j+1) / k`` for
        ``k >= 1`` (the atom at zero contributes nothing), 1 for ``k = 0``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz

    Examples
    --------
    >>> mp_moment(2, 0.5), mp_moment(3, 1.0)
    (1.5, 5.0)
    """
    from math import comb

    k = check_int("k", k, low=0)
    ratio = check_real("ratio", ratio, low=0, high=np.inf, low_open=True, high_open=True,
                       allow_array=False)
    if k == 0:
        return 1.0
    return sum(ratio ** j * comb(k, j) * comb(k, j + 1) for j in range(k)) / k


class MarchenkoPastur(SpectralLaw):
    r"""Marchenko-Pastur law with ratio ``lambda = m / d`` and mean 1 (nonzero part).

    Parameters
    ----------
    ratio : float
        ``lambda > 0``.

    Attributes
    ----------
    ratio : float
    atom : float
        ``max(0, 1 - 1/ratio)``: mass at zero of the full law.
    edges : tuple
        ``((1 - sqrt(ratio))^2, (1 + sqrt(ratio))^2)``.

    Notes
    -----
    The nonzero part has density ``max(1, ratio) * rho(x)``.  Its moments are
    ``max(1, ratio) * sum_j ratio^j N(k, j)`` (Narayana numbers).  ``ppf`` is a
    safeguarded Newton inversion in the angle ``t``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz

    Examples
    --------
    >>> from hcizz import marchenko_pastur
    >>> law = marchenko_pastur(0.5)
    >>> round(float(law.mean()), 12), round(float(law.var()), 12)
    (1.0, 0.5)
    """

    _param_names = ("ratio",)

    def _setup(self, ratio):
        ratio = check_real("ratio", ratio, low=0, low_open=True, allow_array=False)
        if not np.isfinite(ratio):
            raise ValueError(f"ratio must be a finite real number > 0, got {ratio!r}")
        self.ratio = ratio
        self.atom = max(0.0, 1.0 - 1.0 / ratio)
        self._mass = min(1.0, 1.0 / ratio)
        q = np.sqrt(ratio)
        self._q = q
        self.edges = (float((1 - q) ** 2), float((1 + q) ** 2))
        # pole of the angular density at distance acosh((1+l)/(2 sqrt l)) from t = 0
        delta = np.arccosh(max((1 + ratio) / (2 * q), 1.0))
        self._t0 = float(min(0.6, 3 * delta)) if ratio != 1 else 0.0
        return self.edges

    # ---- angle variables
    def _t_of_x(self, x):
        q = self._q
        return 2 * np.arcsin(np.sqrt(np.clip((x - self.edges[0]) / (4 * q), 0, 1)))

    def _s_of_x(self, x):
        q = self._q
        return 2 * np.arcsin(np.sqrt(np.clip((self.edges[1] - x) / (4 * q), 0, 1)))

    def _x_of_t(self, t):
        q = self._q
        return self.edges[0] + 4 * q * np.sin(t / 2) ** 2

    def _dens_t(self, t):
        """Full-law density in ``t``: ``2 sin^2 t / (pi x(t))``."""
        return 2 * np.sin(t) ** 2 / (np.pi * self._x_of_t(t))

    def _dens_s(self, s):
        q = self._q
        return 2 * np.sin(s) ** 2 / (np.pi * (self.edges[1] - 4 * q * np.sin(s / 2) ** 2))

    def _closed_lower(self, t):
        lam, q = self.ratio, self._q
        at = np.arctan2((1 + q) * np.sin(t / 2), abs(1 - q) * np.cos(t / 2))
        return (np.sin(t) / q + (1 + lam) * t / (2 * lam) - abs(1 - lam) / lam * at) / np.pi

    def _closed_upper(self, s):
        lam, q = self.ratio, self._q
        at = np.arctan2(abs(1 - q) * np.sin(s / 2), (1 + q) * np.cos(s / 2))
        return (-np.sin(s) / q + (1 + lam) * s / (2 * lam) - abs(1 - lam) / lam * at) / np.pi

    @staticmethod
    def _gl(dens, t):
        nodes, w = gauss_legendre(32)
        tt = t[..., None] * nodes
        return t * np.sum(w * dens(tt), axis=-1)

    def _F_t(self, t):
        """Full-law lower-tail mass ``F(t)`` (accurate relative to itself)."""
        t = np.asarray(t, dtype=float)
        out = self._closed_lower(t)
        small = t < self._t0
        if np.any(small):
            out = np.array(out, copy=True)
            out[small] = self._gl(self._dens_t, t[small])
        return out

    def _G_s(self, s):
        """Full-law upper-tail mass ``1 - F`` as a function of ``s = pi - t``."""
        s = np.asarray(s, dtype=float)
        out = self._closed_upper(s)
        small = s < 0.6
        if np.any(small):
            out = np.array(out, copy=True)
            out[small] = self._gl(self._dens_s, s[small])
        return out

    # ---- scipy hooks
    def _pdf(self, x):
        lm, lp = self.edges
        with np.errstate(invalid="ignore", divide="ignore"):
            v = np.sqrt(np.clip((lp - x) * (x - lm), 0, None)) / (2 * np.pi * self.ratio * x)
        return np.where((x > lm) & (x < lp), v, 0.0) / self._mass

    def _cdf(self, x):
        t = self._t_of_x(x)
        low = self._F_t(t) / self._mass
        up = self._G_s(self._s_of_x(x)) / self._mass
        return np.where(t < np.pi / 2, low, 1.0 - up)

    def _sf(self, x):
        t = self._t_of_x(x)
        low = self._F_t(t) / self._mass
        up = self._G_s(self._s_of_x(x)) / self._mass
        return np.where(t < np.pi / 2, 1.0 - low, up)

    def _solve_t(self, q, lower_tail):
        """Angle ``t`` with ``cdf = q`` (lower_tail) or ``sf = q`` (upper tail)."""
        m = self._mass
        q = np.asarray(q, dtype=float)
        if lower_tail:
            F = lambda t: self._F_t(t) / m  # noqa: E731
            dF = lambda t: self._dens_t(t) / m  # noqa: E731
        else:  # solve in s = pi - t for the upper tail
            F = lambda s: self._G_s(s) / m  # noqa: E731
            dF = lambda s: self._dens_s(s) / m  # noqa: E731
        if lower_tail:
            if getattr(self, "_inv_low", None) is None:
                self._inv_low = TailInverter(F, np.pi)
            x0 = self._inv_low(q)
        else:
            if getattr(self, "_inv_up", None) is None:
                self._inv_up = TailInverter(F, np.pi)
            x0 = self._inv_up(q)
        return invert_monotone(F, dF, q, 0.0, np.pi, x0)

    def _ppf(self, q):
        q = np.asarray(q, dtype=float)
        lowside = q <= 0.5
        t = self._solve_t(np.where(lowside, q, 0.5), True)
        s = self._solve_t(np.where(lowside, 0.5, 1.0 - q), False)
        lm, lp = self.edges
        xq = 4 * self._q
        return np.where(lowside, lm + xq * np.sin(t / 2) ** 2, lp - xq * np.sin(s / 2) ** 2)

    def _isf(self, q):
        q = np.asarray(q, dtype=float)
        upside = q <= 0.5
        s = self._solve_t(np.where(upside, q, 0.5), False)
        t = self._solve_t(np.where(upside, 0.5, 1.0 - q), True)
        lm, lp = self.edges
        xq = 4 * self._q
        return np.where(upside, lp - xq * np.sin(s / 2) ** 2, lm + xq * np.sin(t / 2) ** 2)

    def _munp(self, n):
        n = np.asarray(n)
        vals = [mp_moment(int(k), self.ratio) / self._mass for k in np.ravel(n)]
        return np.reshape(vals, np.shape(n)) if np.ndim(n) else vals[0]


def marchenko_pastur(ratio):
    """Marchenko-Pastur law of ``X^T X / d`` (``X`` is ``d x m``, ``ratio = m/d``), nonzero part.

    Parameters
    ----------
    ratio : float
        ``lambda = m / d > 0`` (finite).

    Returns
    -------
    MarchenkoPastur
        A ``scipy.stats.rv_continuous`` on ``[(1 - sqrt ratio)^2, (1 + sqrt ratio)^2]``;
        ``.atom = max(0, 1 - 1/ratio)`` is the mass at zero of the full law.

    Raises
    ------
    ValueError
        If ``ratio`` is not a finite real number ``> 0``.

    References
    ----------
    docs/rank_constrained.md#spectral-laws-hcizz

    Examples
    --------
    >>> law = marchenko_pastur(4.0)
    >>> law.atom, law.edges, round(float(law.mean()), 12)
    (0.75, (1.0, 9.0), 4.0)
    """
    return MarchenkoPastur(ratio, name="marchenko_pastur")
