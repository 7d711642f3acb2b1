r"""Quarter-circle law and its truncation (the capacity spectrum).

The quarter-circle law is the law of the singular values of a square ``d x d``
matrix with i.i.d. ``N(0, 1)`` entries divided by ``sqrt(d)`` as ``d -> inf``:

.. math::

    \rho_{qc}(s) = \frac{\sqrt{4 - s^2}}{\pi}, \qquad 0 \le s \le 2 .

With ``s = 2 sin(theta)`` its CDF is ``F(s) = (2 theta + sin 2 theta) / pi``; the
quantile function ``X_qc(u)`` solves ``2 theta + sin 2 theta = pi u``.  Even
moments are the Catalan numbers (``E s^2 = 1``).

Numerics
--------
Write ``y = pi - 2 theta``; then ``1 - F = (y - sin y) / pi``.  For ``u <= 1/2`` we
solve ``z + sin z = pi u`` (``z = 2 theta``, derivative in ``[1, 2]``, Newton from
``z = pi u / 2``); for ``u > 1/2`` we solve ``y - sin y = pi (1 - u)`` by Newton on
the cube root ``(y - sin y)^(1/3)``, which is nearly linear in ``y`` (the cubic
behaviour at the edge ``s = 2`` is removed), starting at ``y = (6 pi (1-u))^(1/3)``.
``y - sin y`` is evaluated by its Taylor series for ``|y| < 1.5`` (no
cancellation), so upper-tail quantiles are accurate to machine precision
relative to ``2 - X``.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from .checks import check_int, check_real
from .numerics import SpectralLaw, chunked, x_minus_sin

__all__ = ["quarter_circle", "truncated_quarter_circle", "qc_quantile", "qc_quantile_mp",
           "qc_upper_angle", "qc_moment", "QuarterCircle", "TruncatedQuarterCircle"]

_PI = np.pi


def _solve_lower(c):
    """Solve ``z + sin z = c`` for ``c`` in ``[0, pi/2]`` (``z`` in ``[0, 0.84]``)."""
    z = c / 2.0
    for _ in range(8):
        f = z + np.sin(z) - c
        z = z - f / (1.0 + np.cos(z))
    return z


def _upper_angle_newton(c, iters=12):
    """Robust (slower) solver of ``y - sin y = c``: Newton on the cube root."""
    c = np.asarray(c, dtype=float)
    cc = np.cbrt(c)
    y = np.minimum(np.cbrt(6.0 * c), _PI)
    final = False
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(iters):
            cf = np.cbrt(x_minus_sin(y))
            s = np.sin(y / 2)
            step = np.where(c > 0, (cf - cc) * 3.0 * cf * cf / (2.0 * s * s), 0.0)
            y_new = np.clip(y - step, 0.0, _PI)
            if final:
                y = y_new
                break
            # quadratic convergence: once steps are < 1e-9 one more step is exact
            final = bool(np.all(np.abs(y_new - y) <= 1e-9 * np.maximum(y, 1e-300)))
            y = y_new
    return np.where(c > 0, y, 0.0)


_YFIT = None
_W2MAX = (6 * np.pi) ** (2 / 3)


def _yfit():
    """Chebyshev fit of ``y / w`` in ``w^2`` (``w = (6c)^(1/3)``), built once."""
    global _YFIT
    if _YFIT is None:
        from numpy.polynomial import chebyshev as C

        t = np.cos(np.pi * (np.arange(64) + 0.5) / 64)
        w2 = (t + 1) / 2 * _W2MAX
        w = np.sqrt(w2)
        y = _upper_angle_newton(w ** 3 / 6)
        _YFIT = C.chebfit(t, y / w, 18)
    return _YFIT


def qc_upper_angle(c):
    r"""Solve ``y - sin y = c`` for ``y`` in ``[0, pi]``, vectorised.

    Parameters
    ----------
    c : array_like
        Right-hand side in ``[0, pi]``.

    Returns
    -------
    y : ndarray
        The root, accurate to a few ulp relative to ``y`` (also for tiny ``c``).

    Notes
    -----
    ``y`` is an analytic odd function of ``w = (6 c)^(1/3)`` on
    ``[0, (6 pi)^(1/3)]``; a degree-18 Chebyshev fit of ``y / w`` in ``w^2``
    (built once from a cube-root Newton solve) gives ``y`` to about ``1e-13``
    relative and one Newton step on ``y - sin y - c`` (derivative ``2 sin^2(y/2)``,
    ``y - sin y`` by its Taylor series for ``y < 1.5``) finish it.  Used for the
    quarter-circle upper tail (``c = pi (1 - u)``) and for ``theta_kappa``
    (``c = pi kappa``, ``theta_kappa = (pi - y) / 2``).

    References
    ----------
    docs/rank_constrained.md#numerics-and-oracles
    """
    return chunked(_upper_angle_fast, c)


def _upper_angle_fast(c):
    coef = _yfit()
    w = np.cbrt(6.0 * c)
    t = w * w
    t *= 2.0 / _W2MAX
    t -= 1.0
    # Clenshaw recurrence for the Chebyshev series, in place
    b1 = np.zeros_like(t)
    b2 = np.zeros_like(t)
    t2 = 2 * t
    for ck in coef[:0:-1]:
        b0 = t2 * b1
        b0 -= b2
        b0 += ck
        b2, b1 = b1, b0
    y = t * b1
    y -= b2
    y += coef[0]
    y *= w
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(1):
            s = np.sin(y / 2)
            step = np.where(c > 0, (x_minus_sin(y) - c) / (2.0 * s * s), 0.0)
            y = np.clip(y - step, 0.0, _PI)
    return y


def _quantile(u, one_minus_u):
    """X_qc from ``u`` and an accurate ``1 - u`` (arrays of equal shape)."""
    u = np.asarray(u, dtype=float)
    om = np.asarray(one_minus_u, dtype=float)
    lower = u <= 0.5
    out = np.empty(np.broadcast(u, om).shape)
    z = _solve_lower(_PI * np.where(lower, u, 0.0))
    y = qc_upper_angle(_PI * np.where(lower, 1.0, om))
    out[...] = np.where(lower, 2.0 * np.sin(z / 2), 2.0 * np.cos(y / 2))
    return out


def qc_quantile(u):
    r"""Quarter-circle quantile function ``X_qc(u)``.

    Parameters
    ----------
    u : array_like
        Probabilities in ``[0, 1]``.

    Returns
    -------
    ndarray
        ``X_qc(u) = 2 sin(theta)`` with ``2 theta + sin 2 theta = pi u``.

    References
    ----------
    docs/rank_constrained.md#quarter-circle-law

    Examples
    --------
    >>> float(qc_quantile(1.0)), float(qc_quantile(0.0))
    (2.0, 0.0)
    """
    u = check_real("u", u, low=0, high=1)
    arr = np.asarray(u, dtype=float)
    out = _quantile(arr, 1.0 - arr)
    return out if out.ndim else float(out)


def qc_quantile_mp(u, dps=50):
    r"""Compute the quarter-circle quantile ``X_qc(u)`` in mpmath at ``dps`` digits.

    Solves ``2 theta + sin 2 theta = pi u`` with ``mpmath.findroot`` (Newton,
    started from the float solution), independently of the float code path's
    series and cube-root reformulation.

    Parameters
    ----------
    u : mpf, Fraction, Decimal, str or float
        Probability in ``[0, 1]``, a scalar; exact types and decimal strings
        are never rounded through a float.
    dps : int, optional
        Decimal digits, in ``[1, 100000]`` (default 50).

    Returns
    -------
    mpmath.mpf
        ``X_qc(u) = 2 sin(theta)``.

    References
    ----------
    docs/rank_constrained.md#quarter-circle-law
    """
    import mpmath as mp

    from .checks import check_real_mp

    dps = check_int("dps", dps, low=1, high=100000)
    with mp.workdps(dps + 10):
        uu = check_real_mp("u", u, low=0, high=1)
        if uu == 0:
            return mp.mpf(0)
        if uu == 1:
            return mp.mpf(2)
        # bisection-safe start: solve in the monotone variable theta
        th0 = mp.asin(mp.mpf(float(qc_quantile(float(uu)))) / 2)
        f = lambda t: 2 * t + mp.sin(2 * t) - mp.pi * uu  # noqa: E731
        try:
            th = mp.findroot(f, th0, tol=mp.mpf(10) ** (-(dps + 5)))
        except (ValueError, ZeroDivisionError):
            th = mp.findroot(f, (mp.mpf(0), mp.pi / 2), solver="anderson")
        x = 2 * mp.sin(th)
    return +x


def qc_moment(n, lower=0.0):
    r"""Compute the partial moment ``Int_lower^2 s^n rho_qc(s) ds`` of the quarter circle.

    Parameters
    ----------
    n : array_like
        Moment order(s) ``> -1``.
    lower : float
        Lower limit in ``[0, 2]``.

    Returns
    -------
    float or ndarray
        The partial moment, shape of ``n``.

    Notes
    -----
    With ``s = 2 sin theta``:
    ``Int = 2^(n+1)/pi * B((n+1)/2, 3/2) * I^c_{(lower/2)^2}((n+1)/2, 3/2)``
    with ``I^c`` the complementary regularised incomplete beta function.  For
    ``lower = 0`` and even ``n = 2k`` this is the Catalan number ``C_k``.

    References
    ----------
    docs/rank_constrained.md#quarter-circle-law

    Examples
    --------
    >>> [round(float(qc_moment(n)), 12) for n in (0, 2, 4, 6)]
    [1.0, 1.0, 2.0, 5.0]
    """
    n = np.asarray(check_real("n", n, low=-1, low_open=True), dtype=float)
    lower = check_real("lower", lower, low=0, high=2, allow_array=False)
    a = (n + 1) / 2
    full = 2.0 ** (n + 1) / _PI * special.beta(a, 1.5)
    if lower == 0:
        return full
    return full * special.betaincc(a, 1.5, (lower / 2) ** 2)


def _qc_cdf_sf(s):
    """(cdf, sf) of the quarter circle, each accurate in its own tail."""
    s = np.clip(np.asarray(s, dtype=float), 0.0, 2.0)
    th = np.arcsin(s / 2)
    cdf_low = (2 * th + np.sin(2 * th)) / _PI
    y = 4 * np.arcsin(np.sqrt((2 - s) / 4))
    sf_up = x_minus_sin(y) / _PI
    return cdf_low, sf_up


class QuarterCircle(SpectralLaw):
    r"""Quarter-circle law ``rho(s) = sqrt(4 - s^2) / pi`` on ``[0, 2]``.

    A ``scipy.stats.rv_continuous``: ``pdf, cdf, sf, ppf, isf, moment, rvs``
    (``rvs(size, rng=...)``), vectorised with machine-precision tails.

    Notes
    -----
    Singular values of ``G / sqrt(d)`` for ``G`` square with i.i.d. ``N(0,1)``
    entries; the squared singular values follow Marchenko-Pastur with ratio 1.
    Moments: ``E s^n = 2^(n+1) B((n+1)/2, 3/2) / pi`` (even ones Catalan).

    References
    ----------
    docs/rank_constrained.md#quarter-circle-law

    Examples
    --------
    >>> from hcizz import quarter_circle
    >>> round(float(quarter_circle.moment(2)), 12), round(float(quarter_circle.moment(4)), 12)
    (1.0, 2.0)
    """

    def _setup(self):
        self.atom = 0.0
        return 0.0, 2.0

    def _pdf(self, x):
        return np.sqrt(np.clip((2 - x) * (2 + x), 0, None)) / _PI

    def _cdf(self, x):
        lo, up = _qc_cdf_sf(x)
        return np.where(x < 1, lo, 1.0 - up)

    def _sf(self, x):
        lo, up = _qc_cdf_sf(x)
        return np.where(x < 1, 1.0 - lo, up)

    def _ppf(self, q):
        return _quantile(q, 1.0 - q)

    def _isf(self, q):
        return _quantile(1.0 - q, q)

    def _munp(self, n):
        return qc_moment(n)

    def _stats(self):
        m1 = qc_moment(1)
        return m1, 1.0 - m1 ** 2, None, None


class TruncatedQuarterCircle(SpectralLaw):
    r"""Nonzero part of the capacity spectrum (a truncated quarter circle).

    The quarter circle restricted to its top ``kappa`` quantiles
    ``[X_qc(1 - kappa), 2]``, renormalised to mass 1.

    Parameters
    ----------
    kappa : float
        Rank fraction ``m / d`` in ``(0, 1]``.

    Attributes
    ----------
    kappa : float
    atom : float
        ``1 - kappa``: mass at zero of the full singular-value law of ``W``.
    lower : float
        ``X_qc(1 - kappa)``, the lower edge.

    Notes
    -----
    Density ``sqrt(4 - s^2) / (pi kappa)`` on ``[X_qc(1-kappa), 2]``.  The overall
    scale of ``W`` is not fixed by the capacity argument; use ``scale=`` to
    rescale (e.g. to unit second moment of the full law,
    ``scale = 1 / sqrt(2 alpha_c(kappa))``).
    ``cdf`` near the lower edge uses ``F(s) - F(a) = (2 D + 2 cos(th_s + th_a)
    sin D) / pi`` with ``sin D = (s - a)(s + a) / (s c_a + a c_s)``, ``c = sqrt(4 - .^2)``,
    so it has no cancellation.

    References
    ----------
    arXiv:2605.10795 (singular values of the memory at capacity);
    docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation

    Examples
    --------
    >>> from hcizz import truncated_quarter_circle
    >>> law = truncated_quarter_circle(0.5)
    >>> law.atom, round(float(law.cdf(2.0)), 12)
    (0.5, 1.0)
    """

    _param_names = ("kappa",)

    def _setup(self, kappa):
        kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
        self.kappa = kappa
        self.atom = 1.0 - kappa
        y = qc_upper_angle(_PI * kappa)
        self._ya = float(y)
        self.lower = float(2 * np.cos(y / 2)) if kappa < 1 else 0.0
        return self.lower, 2.0

    def _pdf(self, x):
        return np.sqrt(np.clip((2 - x) * (2 + x), 0, None)) / (_PI * self.kappa)

    def _cdf_low(self, x):
        a = self.lower
        s = np.clip(x, a, 2.0)
        ca = np.sqrt((2 - a) * (2 + a))
        cs = np.sqrt((2 - s) * (2 + s))
        with np.errstate(invalid="ignore", divide="ignore"):
            den = s * ca + a * cs
            sinD = np.where(den > 0, (s - a) * (s + a) / den, 0.0)
        D = np.arcsin(np.clip(sinD, -1, 1))
        # D can exceed pi/2 only if theta_s - theta_a > pi/2, impossible on [0, pi/2]
        cos_sum = (cs * ca - s * a) / 4
        return (2 * D + 2 * cos_sum * sinD) / (_PI * self.kappa)

    def _sf_up(self, x):
        _, up = _qc_cdf_sf(x)
        return up / self.kappa

    def _cdf(self, x):
        low = self._cdf_low(x)
        return np.where(low < 0.5, low, 1.0 - self._sf_up(x))

    def _sf(self, x):
        low = self._cdf_low(x)
        return np.where(low < 0.5, 1.0 - low, self._sf_up(x))

    def _ppf(self, q):
        k = self.kappa
        # clip: the edge ``lower`` and the quantile solver may differ by an ulp
        return np.clip(_quantile(1.0 - k + k * q, k * (1.0 - q)), self.lower, 2.0)

    def _isf(self, q):
        k = self.kappa
        return np.clip(_quantile(1.0 - k * q, k * q), self.lower, 2.0)

    def _munp(self, n):
        return qc_moment(n, self.lower) / self.kappa


#: The quarter-circle law (a ``scipy.stats.rv_continuous`` instance).
quarter_circle = QuarterCircle(name="quarter_circle")


def truncated_quarter_circle(kappa):
    """Return the capacity spectrum's nonzero part for rank fraction ``kappa``.

    Parameters
    ----------
    kappa : float
        Rank fraction ``m / d`` in ``(0, 1]``.

    Returns
    -------
    TruncatedQuarterCircle
        A ``scipy.stats.rv_continuous`` on ``[X_qc(1 - kappa), 2]`` with density
        ``sqrt(4 - s^2) / (pi kappa)``; ``.atom = 1 - kappa`` is the mass at zero of
        the full singular-value law (see :class:`TruncatedQuarterCircle`).

    Raises
    ------
    ValueError
        If ``kappa`` is not a real number in ``(0, 1]``.

    References
    ----------
    arXiv:2605.10795 (singular values of the memory at capacity);
    docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation

    Examples
    --------
    >>> law = truncated_quarter_circle(0.25)
    >>> law.atom, round(float(law.ppf(0.0)), 12) == round(float(qc_quantile(0.75)), 12)
    (0.75, True)
    """
    return TruncatedQuarterCircle(kappa, name="truncated_quarter_circle")
