r"""Quarter-circle law and its truncation (the capacity spectrum).

The quarter-circle law is the law of the singular values of a square :math:`d \times d`
matrix with i.i.d. :math:`N(0, 1)` entries divided by :math:`\sqrt d` as :math:`d \to \infty`:

.. math::

    \rho_{qc}(s) = \frac{\sqrt{4 - s^2}}{\pi}, \qquad 0 \le s \le 2 .

With :math:`s = 2 \sin\theta` its CDF is :math:`F(s) = (2 \theta + \sin 2 \theta) / \pi`; the
quantile function :math:`X_{qc}(u)` solves :math:`2 \theta + \sin 2 \theta = \pi u`.  Even
moments are the Catalan numbers (:math:`E s^2 = 1`).

Numerics
--------
Write :math:`y = \pi - 2 \theta`; then :math:`1 - F = (y - \sin y) / \pi`.  For :math:`u \le 1/2` we
solve :math:`z + \sin z = \pi u` (:math:`z = 2 \theta`, derivative in :math:`[1, 2]`, Newton from
:math:`z = \pi u / 2`); for :math:`u > 1/2` we solve :math:`y - \sin y = \pi (1 - u)` by Newton on
the cube root :math:`(y - \sin y)^{1/3}`, which is nearly linear in :math:`y` (the cubic
behaviour at the edge :math:`s = 2` is removed), starting at :math:`y = (6 \pi (1-u))^{1/3}`.
:math:`y - \sin y` is evaluated by its Taylor series for :math:`|y| < 1.5` (no
cancellation), so upper-tail quantiles are accurate to machine precision
relative to :math:`2 - X`.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

from .checks import check_int, check_real
from .numerics import (SpectralLaw, _PairedQuantiles, chunked, dd_floor, dd_from_mp, gauss_legendre, invert_monotone,
                       x_minus_sin, xms_over_cube)
from ._docparams import fill_doc

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


@fill_doc
def qc_upper_angle(c):
    r"""Solve :math:`y - \sin y = c` for :math:`y` in :math:`[0, \pi]`, vectorised.

    Parameters
    ----------
    c : array_like
        Right-hand side in :math:`[0, \pi]`.

    Returns
    -------
    ndarray
        The root :math:`y`, accurate to a few ulp relative to :math:`y` for every
        :math:`c` in :math:`[0, \pi]`, subnormal :math:`c` included
        (:math:`y \approx (6 c)^{1/3}`, so :math:`y` is never below
        :math:`3 \cdot 10^{-108}`).

    See Also
    --------
    hcizz.numerics.x_minus_sin : The left-hand side :math:`y - \sin y`, without cancellation.
    hcizz.qc_quantile : The quarter-circle quantile, which uses this angle.
    replica.rank_capacity.theta_kappa : The capacity angle :math:`\theta_\kappa = (\pi - y)/2`.

    Notes
    -----
    :math:`y` is an analytic odd function of :math:`w = (6 c)^{1/3}` on
    :math:`[0, (6 \pi)^{1/3}]`; a degree-18 Chebyshev fit of :math:`y / w` in
    :math:`w^2` (built once from a cube-root Newton solve) gives :math:`y` to about
    :math:`10^{-13}` relative and one Newton step on :math:`y - \sin y - c` finishes
    it.  The step is taken in relative form,
    :math:`y \leftarrow y (1 - 2 \rho c / (y^3 S^2))` with
    :math:`\rho = (y - \sin y)/c - 1 = y^3 R(y)/c - 1`, :math:`R = (y - \sin y)/y^3`
    (:func:`hcizz.numerics.xms_over_cube`) and :math:`S = \sin(y/2)/(y/2)`, with
    :math:`c` and :math:`y^3` rescaled by exact powers of two below :math:`2^{-900}`:
    nothing underflows, so subnormal :math:`c` keeps its digits.  Used for the
    quarter-circle upper tail (:math:`c = \pi (1 - u)`) and for
    :math:`\theta_\kappa` (:math:`c = \pi \kappa`, :math:`\theta_\kappa = (\pi - y) / 2`).
    Measured against mpmath (50 digits) on a log grid of :math:`c` from
    :math:`5 \cdot 10^{-324}` to :math:`\pi`: worst relative error
    :math:`1.8 \cdot 10^{-16}` (``tests/test_domain_sweep.py``).

    %(refs_numerics)s

    Examples
    --------
    >>> y = qc_upper_angle([1.0, np.pi])
    >>> print(y, y - np.sin(y))
    [1.93456321 3.14159265] [1.         3.14159265]
    >>> print(f"{qc_upper_angle(1e-300):.10e}")          # (6e-300)**(1/3)
    1.8171205928e-100
    """
    return chunked(_upper_angle_fast, c)


_TWO900, _TWO300 = 2.0 ** 900, 2.0 ** 300


def _upper_angle_fast(c):
    coef = _yfit()
    c = np.asarray(c, dtype=float)
    w = np.cbrt(6.0 * c)   # 6 c is exact (subnormal c included); cbrt is correctly rounded
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
    # one Newton step in relative form; c and y^3 rescaled exactly where y^3 could underflow
    tiny = c < 2.0 ** -900
    cs = np.where(tiny, c * _TWO900, c)
    ys = np.where(tiny, y * _TWO300, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        y3c = ys ** 3 / cs                     # y^3 / c
        rho = y3c * xms_over_cube(y) - 1.0     # (y - sin y) / c - 1
        S = np.sinc(y / (2 * _PI))             # sin(y/2) / (y/2)
        y = y * (1.0 - 2.0 * rho / (y3c * S * S))
    return np.where(c > 0, np.clip(y, 0.0, _PI), 0.0)


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


@fill_doc
def qc_quantile(u):
    r"""Quarter-circle quantile function :math:`X_{qc}(u)`.

    Parameters
    ----------
    u : array_like
        Probabilities in ``[0, 1]``.

    Returns
    -------
    ndarray
        :math:`X_{qc}(u) = 2 \sin\theta` with :math:`2 \theta + \sin 2 \theta = \pi u`.

    See Also
    --------
    hcizz.qc_quantile_mp : The same quantile in mpmath (an independent oracle).
    hcizz.quarter_circle.QuarterCircle : The law (its ``ppf`` is this function).
    replica.symbolic.QCQuantile : The quantile as a sympy function.

    %(refs_quarter_circle)s

    Examples
    --------
    >>> print(qc_quantile([0.0, 0.5, 1.0]))
    [0.         0.80794551 2.        ]
    """
    u = check_real("u", u, low=0, high=1)
    arr = np.asarray(u, dtype=float)
    out = _quantile(arr, 1.0 - arr)
    return out if out.ndim else float(out)


@fill_doc
def qc_quantile_mp(u, dps=50):
    r"""Compute the quarter-circle quantile :math:`X_{qc}(u)` in mpmath at ``dps`` digits.

    Solves :math:`2 \theta + \sin 2 \theta = \pi u` with ``mpmath.findroot`` (Newton,
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
        :math:`X_{qc}(u) = 2 \sin\theta`.

    See Also
    --------
    hcizz.qc_quantile : The float code path, vectorised.

    %(refs_quarter_circle)s

    Examples
    --------
    The value is rounded to the caller's mpmath precision, so set it too:

    >>> import mpmath
    >>> with mpmath.workdps(30):
    ...     print(mpmath.nstr(qc_quantile_mp("0.5", 30), 25))
    0.8079455065990344186379235
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


@fill_doc
def qc_moment(n, lower=0.0):
    r"""Compute the partial moment :math:`\int_{lower}^2 s^n \rho_{qc}(s)\, ds` of the quarter circle.

    Parameters
    ----------
    n : array_like
        Moment order(s) :math:`> -1`.
    lower : float
        Lower limit in ``[0, 2]``.

    Returns
    -------
    float or ndarray
        The partial moment, shape of ``n``.

    See Also
    --------
    hcizz.quarter_circle.QuarterCircle : The law (its ``moment`` is the full moment).
    replica.symbolic.quarter_circle_moment : The full moments exactly, in sympy.

    Notes
    -----
    With :math:`s = 2 \sin\theta`,

    .. math::

        \int_{a}^2 s^n \rho_{qc}(s)\, ds = \frac{2^{n+1}}{\pi}
        B\Bigl(\frac{n+1}{2}, \frac32\Bigr)\, I_u\Bigl(\frac32, \frac{n+1}{2}\Bigr),
        \qquad u = 1 - (a/2)^2 = \frac{(2 - a)(2 + a)}{4}

    (:math:`a` = ``lower``; :math:`I_u` the regularised incomplete beta function;
    :math:`u` formed from :math:`2 - a`, exact for :math:`a \ge 1`, so a lower limit
    near 2 loses nothing).  For :math:`a = 0` and even :math:`n = 2k` this is the
    Catalan number :math:`C_k`.  The power of two is applied exactly (``ldexp``), so
    the result is ``inf`` only where the moment exceeds the largest double
    (:math:`n \gtrsim 1030`).  Relative accuracy against mpmath
    (``tests/test_domain_sweep.py``, ``lower`` up to :math:`2 - 2^{-52}`):
    :math:`3.7 \cdot 10^{-15}` for :math:`n` in :math:`[-0.9, 200]`,
    :math:`5 \cdot 10^{-13}` at :math:`n = 1000` (scipy's beta function there).

    %(refs_quarter_circle)s

    Examples
    --------
    The even moments are the Catalan numbers:

    >>> print(qc_moment([0, 1, 2, 4, 6]))
    [1.         0.84882636 1.         2.         5.        ]
    >>> print(f"{qc_moment(2, lower=1.0):.10f}")
    0.8044988905
    """
    n = np.asarray(check_real("n", n, low=-1, low_open=True), dtype=float)
    lower = check_real("lower", lower, low=0, high=2, allow_array=False)
    a = (n + 1) / 2
    # 2^(n+1) B(a, 3/2) / pi with the power of two applied exactly (ldexp): no early overflow
    k = np.floor(n + 1)
    with np.errstate(over="ignore"):
        full = np.ldexp(2.0 ** (n + 1 - k) * special.beta(a, 1.5) / _PI, k.astype(int))
    if lower == 0:
        return full if full.ndim else float(full)
    out = full * special.betainc(1.5, a, (2.0 - lower) * (2.0 + lower) / 4.0)
    return out if out.ndim else float(out)


def _qc_cdf_sf(s):
    """(cdf, sf) of the quarter circle, each accurate in its own tail."""
    s = np.clip(np.asarray(s, dtype=float), 0.0, 2.0)
    th = np.arcsin(s / 2)
    cdf_low = (2 * th + np.sin(2 * th)) / _PI
    y = 4 * np.arcsin(np.sqrt((2 - s) / 4))
    sf_up = x_minus_sin(y) / _PI
    return cdf_low, sf_up


@fill_doc
class QuarterCircle(_PairedQuantiles, SpectralLaw):
    r"""Quarter-circle law :math:`\rho(s) = \sqrt{4 - s^2} / \pi` on :math:`[0, 2]`.

    A ``scipy.stats.rv_continuous``: ``pdf, cdf, sf, ppf, isf, moment, rvs``
    (``rvs(size, rng=...)``), vectorised with machine-precision tails.

    Parameters
    ----------
    **kw
        Keyword arguments of ``scipy.stats.rv_continuous`` (``name``, ...).

    See Also
    --------
    hcizz.truncated_quarter_circle : Its top-:math:`\kappa` part, the capacity spectrum.
    hcizz.qc_moment : Its partial moments.
    hcizz.marchenko_pastur : The law of the squared singular values.

    Notes
    -----
    Singular values of :math:`G / \sqrt{d}` for :math:`G` square with i.i.d.
    :math:`N(0,1)` entries; the squared singular values follow Marchenko-Pastur with
    ratio 1.  Moments: :math:`E s^n = 2^{n+1} B((n+1)/2, 3/2) / \pi` (even ones
    Catalan).

    %(refs_quarter_circle)s

    Examples
    --------
    >>> from hcizz import quarter_circle
    >>> print(f"{quarter_circle.moment(2):.12f} {quarter_circle.moment(4):.12f}")
    1.000000000000 2.000000000000
    >>> print(f"{quarter_circle.mean():.10f} {quarter_circle.cdf(1.0):.10f}")
    0.8488263632 0.6089977810
    """

    def __init__(self, **kw):        # the law's own signature (``SpectralLaw`` takes ``*args``)
        super().__init__(**kw)

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

    _quantile_pair = staticmethod(_quantile)

    def _munp(self, n):
        return qc_moment(n)

    def _stats(self):
        m1 = qc_moment(1)
        return m1, 1.0 - m1 ** 2, None, None

    def _entropy(self):
        # -Int rho log rho = log(pi) - 1/2 (s = 2 sin theta; Int cos^2 log cos = pi (1 - 2 log 2) / 8)
        return np.log(_PI) - 0.5


@lru_cache(maxsize=512)
def _tqc_edge(kappa):
    """``(y_a, a_hi, a_lo, d_a)`` for ``y_a - sin y_a = pi kappa`` (mpmath, >= 40 digits).

    ``a_hi + a_lo`` is the lower edge ``a* = 2 cos(y_a/2)`` as a double-double and
    ``d_a = 2 - a* = 4 sin^2(y_a/4)`` (rounded once), for the edge distances.
    """
    if kappa == 1.0:
        return _PI, 0.0, 0.0, 2.0
    import mpmath as mp

    # y ~ (6 pi kappa)^(1/3): y - sin y cancels ~ (2/3) |log10 kappa| digits
    dps = 45 + int(2 * max(0.0, -np.log10(kappa)) / 3)
    with mp.workdps(dps):
        k = mp.mpf(kappa)
        c = mp.pi * k
        y0 = mp.cbrt(6 * c) if kappa < 1e-6 else mp.mpf(float(qc_upper_angle(np.pi * kappa)))
        y = mp.findroot(lambda v: v - mp.sin(v) - c, y0)
        a = 2 * mp.cos(y / 2)
        d = 4 * mp.sin(y / 4) ** 2
        return (float(y),) + dd_from_mp(a) + (float(d),)


_NQ = 64            # Gauss-Legendre nodes for the moments (error below 1e-16, see Notes)


class TruncatedQuarterCircle(_PairedQuantiles, SpectralLaw):
    r"""Nonzero part of the capacity spectrum (a truncated quarter circle).

    The quarter circle restricted to its top :math:`\kappa` quantiles
    :math:`[X_{qc}(1 - \kappa), 2]`, renormalised to mass 1.

    Parameters
    ----------
    kappa : float
        Rank fraction :math:`m / d` in :math:`(0, 1]` (any positive double, subnormals
        included).
    **kw
        Keyword arguments of ``scipy.stats.rv_continuous`` (``name``, ...).

    Attributes
    ----------
    kappa : float
    atom : float
        :math:`1 - \kappa`: mass at zero of the full singular-value law of :math:`W`.
    lower : float
        :math:`X_{qc}(1 - \kappa)`, the lower edge, rounded down to a double (so the
        float support ``[lower, 2]`` contains the exact one).

    See Also
    --------
    hcizz.truncated_quarter_circle : Construct the law.
    hcizz.quarter_circle.QuarterCircle : The untruncated law.
    replica.alpha_c : The capacity, half the second moment of the full law.

    Notes
    -----
    Density :math:`\sqrt{4 - s^2} / (\pi \kappa)` on :math:`[a, 2]`,
    :math:`a = X_{qc}(1-\kappa) = 2 \cos(y_a/2)` with :math:`y_a - \sin y_a = \pi \kappa`.
    The overall scale of :math:`W` is not fixed by the capacity argument; use
    ``scale=`` to rescale (e.g. to unit second moment of the full law,
    :math:`\mathrm{scale} = 1 / \sqrt{2 \alpha_c(\kappa)}`).

    Numerics (every :math:`\kappa` down to :math:`5 \cdot 10^{-324}`).  The edge
    :math:`a` is computed once in mpmath and kept as a double-double, so
    :math:`x - a` is exact to rounding at every double :math:`x`.  With
    :math:`y = 4 \arcsin\sqrt{(2 - s)/4}`:
    :math:`\mathrm{sf}(s) = (y/y_a)^3 R(y)/R(y_a)` (:math:`R = (y - \sin y)/y^3`) and
    :math:`\pi \kappa\, \mathrm{cdf}(s) = 2 (D - \sin D) + 4 \sin^2((y + y_a)/4) \sin D`,
    with :math:`D = \theta_s - \theta_a` from
    :math:`\sin D = (s - a)(s + a)/(s c_a + a c_s)`, :math:`c_x = \sqrt{4 - x^2}`: sums
    of non-negative terms, each side accurate relative to itself.  ``ppf`` solves
    the lower side for :math:`s - a` (Newton) and the upper side through
    :func:`qc_upper_angle`.  Moments, ``var``, skewness, kurtosis and entropy are
    Gauss-Legendre integrals in :math:`t = y/y_a \in [0, 1]` (weight
    :math:`(\sin(t y_a/2)/(y_a/2))^2`,
    :math:`2 - s = (y_a^2/4)(\sin(t y_a/4)/(y_a/4))^2`): entire integrands of
    :math:`t`, every quantity scaled to order one, so nothing cancels or underflows
    before the final scaling; ``var`` (about :math:`0.0116 (6 \pi \kappa)^{4/3}`)
    underflows gradually to 0 below :math:`\kappa \approx 10^{-232}`, and the mean
    rounds to 2 below :math:`\kappa \approx 10^{-24}`.  Measured worst relative errors against mpmath (50
    digits) on the log grid ``kappa`` = 5e-324 ... 1 (47 values,
    ``tests/test_domain_sweep.py -m slow``): mean 2.4e-16, var 1.1e-15,
    skewness 6.9e-15, kurtosis 1.5e-15, ``moment(5)``/``moment(8)`` 7.7e-16,
    entropy 2.9e-16, ``cdf``/``sf`` (at doubles next to both edges, tails down
    to 1e-300) 6.3e-16, ``ppf``/``isf`` (``q`` down to 1e-300) 2.3e-16.  Stated
    (and tested) accuracy: 2e-15 relative for moments, ``cdf``, ``sf``,
    ``ppf``, ``isf`` and entropy (absolute where ``|h| < 1``), 2e-14 for the
    skewness; values below the normal range are exact to within the
    smallest normal double.

    References
    ----------
    arXiv:2605.10795 (singular values of the memory at capacity);
    docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation;
    docs/reliability.md#spectral-laws-at-the-edges-of-their-domain

    Examples
    --------
    >>> from hcizz import truncated_quarter_circle
    >>> law = truncated_quarter_circle(0.5)
    >>> print(law.atom, law.cdf(2.0))
    0.5 1.0
    >>> law = truncated_quarter_circle(1e-15)
    >>> print(f"{law.mean():.12f} {law.var():.6e}")
    1.999999999894 2.149932e-21
    """

    _param_names = ("kappa",)

    def __init__(self, kappa, **kw):        # the law's own signature (``SpectralLaw`` takes ``*args``)
        super().__init__(kappa, **kw)

    def _setup(self, kappa):
        kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
        self.kappa = kappa
        self.atom = 1.0 - kappa
        ya, a_hi, a_lo, da = _tqc_edge(kappa)
        self._ya, self._a_hi, self._a_lo, self._da = ya, a_hi, a_lo, da
        self._a = a_hi + a_lo
        self._ca = float(np.sqrt(da * (4.0 - da)))   # sqrt(4 - a^2)
        self._Rya = float(xms_over_cube(ya))
        self._pik = _PI * kappa                      # normalisation (only where kappa is normal)
        self.lower = dd_floor(a_hi, a_lo)
        self._moments = None
        return self.lower, 2.0

    # --- pieces in the edge variables
    def _lower_mass(self, e, dx, x):
        """``pi kappa cdf`` from ``e = x - a`` (exact), ``dx = 2 - x`` and ``x`` (rounded)."""
        a, ca = self._a, self._ca
        e = np.maximum(e, 0.0)
        dx = np.clip(dx, 0.0, 4.0)
        cx = np.sqrt(dx * (4.0 - dx))
        with np.errstate(invalid="ignore", divide="ignore"):
            den = x * ca + a * cx
            sinD = np.where(den > 0, e * ((x + a) / den), 0.0)   # (x + a)/den first: no underflow
        sinD = np.clip(sinD, 0.0, 1.0)
        D = np.arcsin(sinD)
        y = 4.0 * np.arcsin(np.sqrt(np.minimum(dx, self._da) / 4.0))
        return 2.0 * x_minus_sin(D) + 4.0 * np.sin((y + self._ya) / 4.0) ** 2 * sinD

    def _upper_frac(self, dx):
        """``sf`` from ``dx = 2 - x``: ``(y/y_a)^3 R(y)/R(y_a)``."""
        y = np.minimum(4.0 * np.arcsin(np.sqrt(np.clip(dx, 0.0, 4.0) / 4.0)), self._ya)
        return (y / self._ya) ** 3 * (xms_over_cube(y) / self._Rya)

    def _edge_vars(self, x):
        x = np.asarray(x, dtype=float)
        return (x - self._a_hi) - self._a_lo, 2.0 - x, x

    # (for subnormal kappa no double lies strictly inside the support, and the divisions by
    # pi kappa below only see zeros there; errstate keeps the outside values quiet)
    def _pdf(self, x):
        e, dx, x = self._edge_vars(x)
        cx = np.sqrt(np.clip(dx, 0.0, None) * np.clip(2.0 + x, 0.0, None))
        with np.errstate(over="ignore"):
            return np.where(e >= 0, cx / self._pik, 0.0)

    def _cdf(self, x):
        e, dx, x = self._edge_vars(x)
        with np.errstate(over="ignore"):
            low = self._lower_mass(e, dx, x) / self._pik
        return np.where(low < 0.5, low, 1.0 - self._upper_frac(dx))

    def _sf(self, x):
        e, dx, x = self._edge_vars(x)
        with np.errstate(over="ignore"):
            low = self._lower_mass(e, dx, x) / self._pik
        return np.where(low < 0.5, 1.0 - low, self._upper_frac(dx))

    def _quantile_pair(self, p, pc):
        """Quantile at ``p`` with ``pc = 1 - p`` given accurately."""
        p = np.asarray(p, dtype=float)
        pc = np.asarray(pc, dtype=float)
        out = np.empty(np.broadcast(p, pc).shape)
        low = p <= 0.5
        # upper side: (y/y_a)^3 R(y)/R(y_a) = pc, i.e. y - sin y = pi kappa pc
        c = self._pik * np.where(low, 0.5, pc)
        y = np.where(c > 1e-290, qc_upper_angle(np.maximum(c, 1e-290)),
                     self._ya * np.cbrt(np.where(low, 0.5, pc) * 6.0 * self._Rya))  # y < 1e-96 there
        out[...] = 2.0 - 4.0 * np.sin(y / 4.0) ** 2
        if np.any(low) and self._da > 2.0 ** -56:   # below, every quantile rounds to 2
            pl = p[low] if p.ndim else p
            a, da = self._a, self._da

            def F(e):
                return self._lower_mass(e, da - e, a + e) / self._pik

            def dF(e):
                dx = da - e
                return np.sqrt(np.clip(dx, 0, None) * (4.0 - dx)) / self._pik

            e0 = pl * self._pik / self._ca
            e = invert_monotone(F, dF, pl, 0.0, da, e0)
            xl = self._a_hi + (self._a_lo + e)
            if out.ndim:
                out[low] = xl
            else:
                out[...] = xl
        return np.clip(out, self.lower, 2.0)

    # --- moments by quadrature in t = y / y_a
    def _tq(self):
        if self._moments is None:
            t, w = gauss_legendre(_NQ)
            h, h4 = self._ya / 2.0, self._ya / 4.0
            wt = w * (np.sin(t * h) / h) ** 2
            wt = wt / wt.sum()
            delta = (np.sin(t * h4) / h4) ** 2          # (2 - s) / (y_a^2 / 4)
            mu = float(np.sum(wt * delta))
            c = delta - mu
            m2, m3, m4 = (float(np.sum(wt * c ** k)) for k in (2, 3, 4))
            # the mean directly (s = 2 cos(t y_a / 2) > 0: a positive integrand, no cancellation)
            mean = float(np.sum(wt * 2.0 * np.cos(t * h)))
            self._moments = (t, wt, delta, mean, m2, m3, m4)
        return self._moments

    def _stats(self):
        _, _, _, mean, m2, m3, m4 = self._tq()
        scale = self._ya ** 2 / 4.0                    # 2 - s = scale * delta
        var = (scale * np.sqrt(m2)) ** 2               # underflows gradually, never below 0
        return mean, var, -m3 / m2 ** 1.5, m4 / m2 ** 2 - 3.0

    def _munp(self, n):
        n = np.asarray(n, dtype=float)
        t, wt, delta, _, _, _, _ = self._tq()
        half = self._ya ** 2 / 8.0                    # (2 - s)/2 = half * delta
        out = []
        for k in np.ravel(n):
            if k == 0:
                out.append(1.0)
            elif k * self._ya ** 2 <= 20.0:           # smooth in t: Gauss-Legendre
                mean = np.sum(wt * np.exp(k * np.log1p(-half * delta)))
                out.append(float(np.exp(k * np.log(2.0) + np.log(mean))) if k > 1000
                           else float(2.0 ** k * mean))
            else:                                      # peaked integrand, kappa not small: closed form
                a = (k + 1) / 2
                u = np.sin(self._ya / 2) ** 2          # cos^2 theta_a
                with np.errstate(over="ignore", divide="ignore"):
                    lg = ((k + 1) * np.log(2.0) + special.betaln(1.5, a)
                          + np.log(special.betainc(1.5, a, u)) - np.log(self._pik))
                out.append(float(np.exp(lg)))
        return np.reshape(out, n.shape) if n.ndim else out[0]

    def _entropy(self):
        # h = log(pi kappa) - E log(2 sin(y/2)) = log(pi kappa / y_a) - E log t - E log sinc(t y_a/2);
        # E log t with t = u^3 (integrand ~ u^8 log u: Gauss-Legendre converges like n^-18)
        u, w = gauss_legendre(_NQ)
        t = u ** 3
        h = self._ya / 2.0
        wt = w * 3 * u * u * (np.sin(t * h) / h) ** 2
        wt = wt / wt.sum()
        e_log = np.sum(wt * (3 * np.log(u) + np.log(np.sinc(t * h / _PI))))
        return float(np.log(_PI) + np.log(self.kappa) - np.log(self._ya) - e_log)


#: The quarter-circle law (a ``scipy.stats.rv_continuous`` instance).
quarter_circle = QuarterCircle(name="quarter_circle")


def truncated_quarter_circle(kappa):
    r"""Return the capacity spectrum's nonzero part for rank fraction ``kappa``.

    Parameters
    ----------
    kappa : float
        Rank fraction :math:`m / d` in :math:`(0, 1]`.

    Returns
    -------
    TruncatedQuarterCircle
        A ``scipy.stats.rv_continuous`` on :math:`[X_{qc}(1 - \kappa), 2]` with density
        :math:`\sqrt{4 - s^2} / (\pi \kappa)`; ``.atom`` :math:`= 1 - \kappa` is the mass
        at zero of the full singular-value law (see :class:`TruncatedQuarterCircle`).

    Raises
    ------
    ValueError
        If ``kappa`` is not a real number in ``(0, 1]``.

    See Also
    --------
    hcizz.quarter_circle.TruncatedQuarterCircle : The law's class and its numerics.
    replica.alpha_c : The capacity this spectrum reaches.
    hcizz.mp_product : The spectrum at initialisation, for comparison.

    References
    ----------
    arXiv:2605.10795 (singular values of the memory at capacity);
    docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation

    Examples
    --------
    The lower edge is the quarter-circle quantile at :math:`1 - \kappa`:

    >>> law = truncated_quarter_circle(0.25)
    >>> print(law.atom, f"{law.ppf(0.0):.12f} {qc_quantile(0.75):.12f}")
    0.75 1.269409187952 1.269409187952
    >>> print(f"{law.mean():.10f}")
    1.5667658301
    """
    return TruncatedQuarterCircle(kappa, name="truncated_quarter_circle")
