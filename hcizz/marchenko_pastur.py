r"""Marchenko-Pastur law (mean 1) as a ``scipy.stats`` distribution.

``marchenko_pastur(ratio)`` is the limiting eigenvalue law of :math:`X^T X / d` for a
:math:`d \times m` matrix :math:`X` with i.i.d. :math:`N(0, 1)` entries and :math:`m / d \to \lambda` (``ratio``):

.. math::

    \rho(x) = \frac{\sqrt{(\lambda_+ - x)(x - \lambda_-)}}{2 \pi \lambda x},
    \qquad \lambda_\pm = (1 \pm \sqrt\lambda)^2,

plus an atom :math:`1 - 1/\lambda` at 0 when :math:`\lambda > 1`.  As for every law in
``hcizz`` the distribution object describes the nonzero part renormalised to
mass 1 and ``.atom`` holds the mass at zero.

CDF in closed form (*derived here*): with :math:`x = 1 + \lambda - 2 \sqrt\lambda \cos t`,
:math:`t \in [0, \pi]`, the full-law CDF is

.. math::

    F = \frac1\pi\Big[\frac{\sin t}{\sqrt\lambda} + \frac{(1+\lambda) t}{2\lambda}
        - \frac{|1-\lambda|}{\lambda}
        \operatorname{atan2}\big((1+\sqrt\lambda)\sin\tfrac t2, |1-\sqrt\lambda|\cos\tfrac t2\big)\Big].

Near the lower edge the terms cancel (:math:`F \sim t^3`), and for small :math:`\lambda`
they are of order :math:`1/\lambda`; there the CDF is instead a 32-point
Gauss-Legendre quadrature of the smooth angular density
:math:`2 \sin^2 t / (\pi x(t))`, as is the upper tail (see :class:`MarchenkoPastur`).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .checks import check_int, check_real
from .numerics import SpectralLaw, dd_ceil, dd_floor, dd_from_mp, gauss_legendre, invert_monotone
from ._docparams import fill_doc

__all__ = ["marchenko_pastur", "MarchenkoPastur", "mp_moment"]


def _narayana_sum(k, ratio, scale_power=0):
    """``ratio^scale_power * sum_j ratio^j binom(k, j) binom(k, j+1) / k`` rounded once to a double.

    Positive terms summed in mpmath (30 digits, unbounded exponent): no overflow
    before the final rounding, which gives ``inf`` only when the value exceeds
    the largest double.
    """
    import mpmath as mp

    with mp.workdps(30):
        r = mp.mpf(ratio)
        term = mp.mpf(1)       # j = 0: binom(k, 0) binom(k, 1) / k
        total = term
        for j in range(k - 1):
            term *= r * (k - j) * (k - j - 1) / ((j + 1) * (j + 2))
            total += term
        return float(total * r ** scale_power)


@fill_doc
def mp_moment(k, ratio):
    r"""Compute the moments of the full Marchenko-Pastur law (Narayana polynomials).

    Parameters
    ----------
    k : int
        Order, :math:`k \ge 0`.
    %(mp_lambda)s

    Returns
    -------
    float
        :math:`E x^k = \sum_{j=0}^{k-1} \lambda^j \binom{k}{j} \binom{k}{j+1} / k` for
        :math:`k \ge 1` (the atom at zero contributes nothing), 1 for :math:`k = 0`.

    See Also
    --------
    hcizz.marchenko_pastur : The law (nonzero part) whose moments these are, up to the atom.
    hcizz.mp_product_moment : The moments of the product law at initialisation.

    Notes
    -----
    The terms are positive and are summed in mpmath before one rounding, so the
    result is correctly rounded (to about :math:`10^{-16}` relative) for every
    ``ratio`` and order; it is ``inf`` exactly when the moment exceeds the largest
    double (about :math:`\lambda^{k-1} > 10^{308}`).

    %(refs_spectral_laws)s

    Examples
    --------
    >>> print(mp_moment(2, 0.5), mp_moment(3, 1.0))
    1.5 5.0
    """
    k = check_int("k", k, low=0)
    ratio = check_real("ratio", ratio, low=0, high=np.inf, low_open=True, high_open=True,
                       allow_array=False)
    if k == 0:
        return 1.0
    return _narayana_sum(k, ratio)


@lru_cache(maxsize=512)
def _mp_edges_dd(ratio):
    """Edges ``(1 -+ sqrt ratio)^2`` as double-doubles (mpmath, 40 digits beyond the offset ``2 sqrt ratio``)."""
    import mpmath as mp

    with mp.workdps(45 + int(abs(np.log10(ratio)) / 2)):
        q = mp.sqrt(mp.mpf(ratio))
        lm, lp = (1 - q) ** 2, (1 + q) ** 2
        lo_hi, lo_lo = dd_from_mp(lm)
        hi_hi, hi_lo = dd_from_mp(lp)
        if not np.isfinite(hi_hi):          # ratio within 2 sqrt(ratio) of the largest double
            hi_hi = float(np.finfo(float).max)
            hi_lo = float(lp - mp.mpf(hi_hi))
        return lo_hi, lo_lo, hi_hi, hi_lo


@fill_doc
class MarchenkoPastur(SpectralLaw):
    r"""Marchenko-Pastur law with ratio :math:`\lambda = m / d` and mean 1 (nonzero part).

    Parameters
    ----------
    ratio : float
        :math:`\lambda > 0` (any positive finite double).
    **kw
        Keyword arguments of ``scipy.stats.rv_continuous`` (``name``, ...).

    Attributes
    ----------
    ratio : float
    atom : float
        :math:`\max(0, 1 - 1/\lambda)`: mass at zero of the full law.
    edges : tuple
        :math:`((1 - \sqrt{\lambda})^2, (1 + \sqrt{\lambda})^2)`, rounded outward to
        doubles (the float support contains the exact one).

    See Also
    --------
    hcizz.marchenko_pastur : Construct the law.
    hcizz.mp_moment : The moments of the full law.
    hcizz.mp_product.MPProduct : The law of a product of two such matrices.

    Notes
    -----
    The nonzero part has density :math:`\max(1, \lambda)\, \rho(x)`.  Its moments are
    :math:`\max(1, \lambda) \sum_j \lambda^j N(k, j)` (Narayana numbers, see
    :func:`mp_moment`).

    Numerics.  With :math:`x = 1 + \lambda - 2 \sqrt{\lambda} \cos t` the nonzero
    part has, for every :math:`\lambda`, the angular density

    .. math::

        g(t) = \frac{2 \sin^2 t}{\pi (1 + \mu - 2 \sqrt{\mu} \cos t)},
        \qquad \mu = \min(\lambda, 1/\lambda)

    (for :math:`\lambda > 1` the nonzero part is :math:`\lambda\, \mathrm{MP}(1/\lambda)`,
    with the same :math:`t`), so one law in :math:`t` covers tiny and huge ratios.
    The edges are double-doubles (mpmath), so :math:`x - \lambda_-` and
    :math:`\lambda_+ - x`, hence :math:`t`, are exact to rounding at every double
    :math:`x`.  The lower tail in
    ``t`` is 32-point Gauss-Legendre of ``g`` near the edge (``t`` below three
    times the distance of the pole of ``g`` from ``t = 0``) and everywhere for
    ``mu < 0.5`` (then ``g`` is analytic in a strip wider than 0.34), else the
    closed form of the module notes (it cancels like ``1/mu`` and ``t^3``,
    harmless for ``mu >= 0.5`` away from the edge); the upper tail in
    ``s = pi - t`` is 20-point Gauss-Legendre for every ``mu`` (no pole within
    ``pi/2``).
    ``ppf`` is a safeguarded Newton inversion in ``t``, bracketed between
    points of a geometric grid in the angle (so tails down to ``1e-300``
    converge in a few steps).  Mean :math:`\max(1, \lambda)`, variance :math:`\lambda`,
    skewness :math:`\sqrt{\mu}`, excess kurtosis :math:`\mu - 1` and the entropy

    .. math::

        \ln \max(1, \lambda) + \ln(2 \pi) - 1 + \frac{\ln \mu}{2}
        - \frac{(1 - \mu) \ln(1 - \mu)}{2 \mu}

    (*derived here*: :math:`E \ln \sin t` and :math:`E \ln x` by Fourier series of
    the angular density) are closed forms.  Measured
    worst relative errors against mpmath (50 digits) on the log grid ``lambda``
    = 1e-300 ... 1e300 and around 1 (45 values, ``tests/test_domain_sweep.py
    -m slow``): mean, variance and kurtosis exact to rounding, skewness
    1.2e-16, entropy 2.7e-16, ``cdf``/``sf`` (at doubles next to both edges,
    tails down to 1e-300) 1.5e-15, ``ppf``/``isf`` (``q`` down to 1e-300)
    8.1e-16.  Stated (and tested) accuracy: 4e-16 for the moments, 1e-15 for
    the entropy (absolute where ``|h| < 1``), 4e-15 for ``cdf`` and ``sf``,
    2e-15 for ``ppf`` and ``isf``; ``moment(n)`` is ``inf`` exactly when it
    exceeds the largest double.

    %(refs_spectral_laws_edges)s

    Examples
    --------
    >>> from hcizz import marchenko_pastur
    >>> law = marchenko_pastur(0.5)
    >>> print(law.mean(), law.var(), law.edges)
    1.0 0.5 (0.08578643762690494, 2.9142135623730954)
    >>> law = marchenko_pastur(1e-30)
    >>> print(law.var(), f"{law.cdf(1.0):.12f}")     # the double 1 is mid-support
    1e-30 0.500000000000
    """

    _param_names = ("ratio",)

    def __init__(self, ratio, **kw):        # the law's own signature (``SpectralLaw`` takes ``*args``)
        super().__init__(ratio, **kw)

    def _setup(self, ratio):
        ratio = check_real("ratio", ratio, low=0, low_open=True, allow_array=False)
        if not np.isfinite(ratio):
            raise ValueError(f"ratio must be a finite real number > 0, got {ratio!r}")
        self.ratio = ratio
        self.atom = max(0.0, 1.0 - 1.0 / ratio)
        self._mass = min(1.0, 1.0 / ratio)
        # the nonzero part in t is the law of ratio mu = min(ratio, 1/ratio) <= 1
        mu = ratio if ratio <= 1 else 1.0 / ratio
        self._mu = mu
        self._r = float(np.sqrt(mu))
        # 1 - sqrt(mu) without cancellation: (1 - mu) / (1 + sqrt mu), 1 - mu = (ratio - 1)/ratio above 1
        one_m_mu = (1.0 - ratio) if ratio <= 1 else (ratio - 1.0) / ratio
        self._one_m_mu = one_m_mu
        self._one_m_r = one_m_mu / (1.0 + self._r)
        self._q4 = 4.0 * float(np.sqrt(ratio))       # x - lambda_- = q4 sin^2(t/2)
        self._lm_hi, self._lm_lo, self._lp_hi, self._lp_lo = _mp_edges_dd(ratio)
        self.edges = (dd_floor(self._lm_hi, self._lm_lo), dd_ceil(self._lp_hi, self._lp_lo))
        # pole of the angular density at distance acosh((1+mu)/(2 sqrt mu)) = 2 asinh((1 - r)/(2 sqrt r))
        delta = 2 * np.arcsinh(self._one_m_r / (2 * np.sqrt(self._r)))
        self._t0 = float(min(0.6, 3 * delta)) if mu < 1 else 0.0
        self._gl_all = mu < 0.5
        return self.edges

    # ---- angle variables (from the exact edge distances)
    def _angle(self, e):
        """The angle ``2 arcsin sqrt(e / q4)`` of a distance ``e`` to an edge."""
        # sqrt(e) / sqrt(q4), not sqrt(e / q4): e may be subnormal
        return 2 * np.arcsin(np.clip(np.sqrt(np.clip(e, 0, None)) / np.sqrt(self._q4), 0, 1))

    def _t_of_x(self, x):
        return self._angle((np.asarray(x, dtype=float) - self._lm_hi) - self._lm_lo)

    def _s_of_x(self, x):
        return self._angle((self._lp_hi - np.asarray(x, dtype=float)) + self._lp_lo)

    def _dens_t(self, t):
        """Density of the nonzero part in ``t``: ``2 sin^2 t / (pi y(t))``, ``y = (1 - r)^2 + 4 r sin^2(t/2)``."""
        r = self._r
        return 2 * np.sin(t) ** 2 / (np.pi * (self._one_m_r ** 2 + 4 * r * np.sin(t / 2) ** 2))

    def _dens_s(self, s):
        r = self._r
        return 2 * np.sin(s) ** 2 / (np.pi * ((1 + r) ** 2 - 4 * r * np.sin(s / 2) ** 2))

    def _closed_lower(self, t):
        mu, r = self._mu, self._r
        at = np.arctan2((1 + r) * np.sin(t / 2), self._one_m_r * np.cos(t / 2))
        return (np.sin(t) / r + (1 + mu) * t / (2 * mu) - self._one_m_mu / mu * at) / np.pi

    @staticmethod
    def _gl(dens, t, n=32):
        nodes, w = gauss_legendre(n)
        tt = t[..., None] * nodes
        return t * np.sum(w * dens(tt), axis=-1)

    def _F_t(self, t):
        """Lower-tail mass of the nonzero part, ``F(t)``, for ``t <= pi/2`` (accurate relative to itself)."""
        t = np.asarray(t, dtype=float)
        small = (t < self._t0) | self._gl_all
        out = np.empty(t.shape)
        if np.any(small):
            out[small] = self._gl(self._dens_t, t[small])
        if not np.all(small):
            out[~small] = self._closed_lower(t[~small])
        return out

    def _G_s(self, s):
        """Upper-tail mass ``1 - F`` as a function of ``s = pi - t``, for ``s <= pi/2``.

        The angular density has no pole within ``pi/2`` of ``[0, pi/2]`` in ``s``, so
        Gauss-Legendre is accurate there for every ``mu``.
        """
        return self._gl(self._dens_s, np.asarray(s, dtype=float), 20)

    @staticmethod
    def _on_half_circle(near, far, angle):
        """``near(angle)`` up to ``pi/2``, ``1 - far(pi - angle)`` beyond (each tail mass
        is computed where it is the smaller one, ``>= 0.18`` past ``pi/2``)."""
        angle = np.asarray(angle, dtype=float)
        low = angle <= np.pi / 2
        out = np.empty(angle.shape)
        out[low] = near(angle[low])
        out[~low] = 1.0 - far(np.pi - angle[~low])
        return out

    def _F_full(self, t):
        """``F(t)`` on ``[0, pi]``."""
        return self._on_half_circle(self._F_t, self._G_s, t)

    def _G_full(self, s):
        """``G(s) = 1 - F(pi - s)`` on ``[0, pi]``."""
        return self._on_half_circle(self._G_s, self._F_t, s)

    # ---- scipy hooks
    def _pdf(self, x):
        x = np.asarray(x, dtype=float)
        em = (x - self._lm_hi) - self._lm_lo
        ep = (self._lp_hi - x) + self._lp_lo
        with np.errstate(invalid="ignore", divide="ignore"):
            # max(1, ratio) rho(x) = sqrt(em ep) / (2 pi min(1, ratio) x)
            v = np.sqrt(np.clip(em, 0, None)) * np.sqrt(np.clip(ep, 0, None)) / (2 * np.pi * min(1.0, self.ratio) * x)
        return np.where((em > 0) & (ep > 0) & (x > 0), v, 0.0)

    def _tails(self, x):
        """``(F, S)`` at ``x``, the nearer tail by quadrature (or closed form), the other as ``1 -`` it."""
        x = np.asarray(x, dtype=float)
        t = self._t_of_x(x)
        low = t < np.pi / 2
        F = np.empty(t.shape)
        S = np.empty(t.shape)
        F[low] = self._F_t(t[low])
        S[low] = 1.0 - F[low]
        S[~low] = self._G_s(self._s_of_x(x[~low]))
        F[~low] = 1.0 - S[~low]
        return F, S

    def _cdf(self, x):
        return self._tails(x)[0]

    def _sf(self, x):
        return self._tails(x)[1]

    def _tail_table(self, lower_tail):
        """Tail mass on the geometric grid ``pi 2^(-k/2)`` (down to where it underflows)."""
        key = "_tab_low" if lower_tail else "_tab_up"
        if getattr(self, key, None) is None:
            grid = np.pi * 2.0 ** (-np.arange(0, 2200) / 2.0)
            mass = self._F_full(grid) if lower_tail else self._G_full(grid)
            keep = mass > 1e-305
            setattr(self, key, (grid[keep][::-1], mass[keep][::-1]))    # increasing
        return getattr(self, key)

    def _solve_t(self, q, lower_tail):
        """Angle ``t`` with ``cdf = q`` (lower_tail) or ``s = pi - t`` with ``sf = q``, for ``q <= 1/2``.

        The root is bracketed between consecutive points of a geometric grid in the
        angle (log-log interpolation for the start), so the safeguarded Newton
        converges in a few steps for every ``q``, however small.
        """
        q = np.asarray(q, dtype=float)
        F, dF = (self._F_full, self._dens_t) if lower_tail else (self._G_full, self._dens_s)
        grid, mass = self._tail_table(lower_tail)
        k = np.searchsorted(mass, q, side="right")            # mass[k-1] <= q < mass[k]
        below = k == 0                                          # beyond the table: extrapolate
        k = np.clip(k, 1, len(grid) - 1)
        lo, hi = grid[k - 1], grid[k]
        mlo, mhi = mass[k - 1], mass[k]
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.log(mhi / mlo) / np.log(hi / lo)             # local power of the tail
            x0 = lo * np.exp(np.log(q / mlo) / slope)
        lo = np.where(below, 0.0, lo)
        x0 = np.where(np.isfinite(x0) & (x0 > 0), x0, 0.5 * (lo + hi))
        return invert_monotone(F, dF, q, lo, hi, np.clip(x0, lo, hi))

    def _from_t(self, t):
        return self._lm_hi + (self._lm_lo + self._q4 * np.sin(t / 2) ** 2)

    def _from_s(self, s):
        return self._lp_hi + (self._lp_lo - self._q4 * np.sin(s / 2) ** 2)

    def _quantile(self, q, lower_tail):
        """``x`` with ``cdf(x) = q`` (lower_tail) or ``sf(x) = q``: solved in the tail whose
        mass is ``<= 1/2`` (``q`` itself, else ``1 - q`` in the other tail)."""
        q = np.asarray(q, dtype=float)
        near = q <= 0.5
        a = self._solve_t(np.where(near, q, 0.5), lower_tail)
        b = self._solve_t(np.where(near, 0.5, 1.0 - q), not lower_tail)
        xa, xb = (self._from_t(a), self._from_s(b)) if lower_tail else (self._from_s(a), self._from_t(b))
        return np.clip(np.where(near, xa, xb), *self.edges)

    def _ppf(self, q):
        return self._quantile(q, True)

    def _isf(self, q):
        return self._quantile(q, False)

    def _munp(self, n):
        n = np.asarray(n)
        # nonzero part: max(1, ratio) * full-law moment, summed before the one rounding
        extra = 1 if self.ratio > 1 else 0
        vals = [1.0 if int(k) == 0 else _narayana_sum(int(k), self.ratio, extra) for k in np.ravel(n)]
        return np.reshape(vals, np.shape(n)) if np.ndim(n) else vals[0]

    def _stats(self):
        # nonzero part = sigma MP(mu), sigma = max(1, ratio): mean sigma, variance sigma^2 mu = ratio,
        # skewness sqrt(mu), excess kurtosis mu - 1
        return max(1.0, self.ratio), self.ratio, self._r, -self._one_m_mu

    def _entropy(self):
        # nonzero part = sigma MP(mu); h(MP(mu)) = log(2 pi) - 1 + log(mu)/2 - (1 - mu) log(1 - mu) / (2 mu)
        # (docs/rank_constrained.md#spectral-laws-hcizz); log1p(-mu)/mu is accurate for small mu
        mu = self._mu
        tail = 0.0 if mu == 1 else self._one_m_mu * np.log1p(-mu) / (2 * mu)
        return float(np.log(max(1.0, self.ratio)) + np.log(2 * np.pi) - 1.0 + 0.5 * np.log(mu) - tail)


@fill_doc
def marchenko_pastur(ratio):
    r"""Marchenko-Pastur law of :math:`X^T X / d` (:math:`X` is :math:`d \times m`, :math:`\lambda = m/d`), nonzero part.

    Parameters
    ----------
    %(mp_lambda)s

    Returns
    -------
    MarchenkoPastur
        A ``scipy.stats.rv_continuous`` on
        :math:`[(1 - \sqrt{\lambda})^2, (1 + \sqrt{\lambda})^2]`; ``.atom``
        :math:`= \max(0, 1 - 1/\lambda)` is the mass at zero of the full law.

    Raises
    ------
    ValueError
        If ``ratio`` is not a finite real number ``> 0``.

    See Also
    --------
    hcizz.marchenko_pastur.MarchenkoPastur : The law's class and its numerics.
    hcizz.mp_moment : The moments of the full law.
    hcizz.free_transforms.stieltjes_mp : Its Stieltjes transform.
    hcizz.free_transforms.s_transform_mp : Its S-transform.

    %(refs_spectral_laws)s

    Examples
    --------
    >>> law = marchenko_pastur(4.0)
    >>> print(law.atom, law.edges, f"{law.mean():.12f}")
    0.75 (1.0, 9.0) 4.000000000000
    """
    return MarchenkoPastur(ratio, name="marchenko_pastur")
