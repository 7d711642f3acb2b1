r"""Capacity of the rank-constrained linear memory :math:`W = Q R^T / \sqrt{d m}`.

``docs/rank_constrained.md#closed-form``: with rank fraction :math:`\kappa = m / d` in :math:`(0, 1]`,

.. math::

    \alpha_c(\kappa) = \frac12 \int_{1-\kappa}^{1} X_{qc}(u)^2\, du
                     = \frac12 - \frac{\theta_\kappa - \sin(4\theta_\kappa)/4}{\pi},
    \qquad 2\theta_\kappa + \sin 2\theta_\kappa = \pi (1 - \kappa).

Float path
----------
With :math:`y = \pi - 2 \theta_\kappa` the defining equation is :math:`y - \sin y = \pi \kappa`
and the closed form becomes :math:`\alpha_c = (2y - \sin 2y) / (4 \pi)`: no cancellation
for small :math:`\kappa` (:math:`x - \sin x` is summed as a Taylor series for small :math:`x`).
:math:`y` comes from :func:`hcizz.quarter_circle.qc_upper_angle` (Chebyshev start +
one Newton step), vectorised.

Small-kappa expansion (derived here; checked in ``python -m replica check``):

.. math::

    \alpha_c(\kappa) = 2 \kappa - \frac{(6 \pi \kappa)^{5/3}}{20 \pi} + O(\kappa^{7/3})

Independent oracles: :func:`alpha_c` with ``dps=`` (mpmath Newton in ``theta``
on the closed form, with guard digits against the cancellation in ``1/2 - ...``),
and :func:`alpha_c_quad` (``brentq`` for the edge + ``quad`` of :math:`s^2 \rho_{qc}`).
"""
from __future__ import annotations

import math

import numpy as np

from hcizz.checks import check_real
from hcizz.numerics import chunked, x_minus_sin
from hcizz.quarter_circle import qc_quantile, qc_upper_angle

from ._docparams import fill_doc

__all__ = ["alpha_c", "alpha_c_quad", "alpha_c_small_kappa", "theta_kappa",
           "quantile_coupling", "capacity_from_profile", "coupling_maximiser_check"]


def _check_kappa(kappa, allow_array=True):
    return check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=allow_array)


@fill_doc
def theta_kappa(kappa):
    r"""Solve :math:`2 \theta + \sin 2 \theta = \pi (1 - \kappa)` for :math:`\theta` in :math:`[0, \pi/2)`.

    Parameters
    ----------
    kappa : array_like
        Rank fraction(s) in :math:`(0, 1]`.

    Returns
    -------
    ndarray or float
        :math:`\theta_\kappa = (\pi - y) / 2` with :math:`y - \sin y = \pi \kappa`.  For
        small :math:`\kappa` prefer :math:`\pi/2 - \theta = y/2` (see
        :func:`hcizz.quarter_circle.qc_upper_angle`).

    See Also
    --------
    hcizz.quarter_circle.qc_upper_angle : The angle :math:`y`, accurate for small :math:`\kappa`.
    replica.alpha_c : The capacity, a closed form in this angle.

    %(refs_closed_form)s

    Examples
    --------
    >>> print(theta_kappa([0.25, 0.5, 1.0]))
    [0.68762618 0.4158556  0.        ]
    """
    k = _check_kappa(kappa)
    th = (np.pi - qc_upper_angle(np.pi * np.asarray(k, dtype=float))) / 2
    return th if np.ndim(th) else float(th)


def _alpha_c_mp(value, dps):
    import mpmath as mp

    from hcizz.checks import check_real_mp

    with mp.workdps(dps + 20):
        k0 = check_real_mp("kappa", value, low=0, high=1, low_open=True)
        guard = 12 + max(0, int(mp.floor(-mp.log10(k0))) + 1)
    with mp.workdps(dps + guard):
        # converted again at the full working precision: "0.1", Fraction(1, 10)
        # and mpf('0.1') are never rounded through a float
        kk = check_real_mp("kappa", value, low=0, high=1, low_open=True)
        target = mp.pi * (1 - kk)
        # start from the float angle y = pi - 2 theta (y - sin y = pi kappa; for kappa
        # below the float range y = (6 pi kappa)^(1/3) to leading order), then Newton
        # on 2 th + sin 2 th (derivative 4 cos^2 th)
        kf = float(kk)
        y0 = mp.mpf(float(qc_upper_angle(np.pi * kf))) if kf > 1e-290 else mp.cbrt(6 * mp.pi * kk)
        th = (mp.pi - y0) / 2
        # Newton doubles the number of correct digits from ~15 (float start);
        # one extra step beyond the count needed for dps + guard digits
        n_iter = 2 + max(0, math.ceil(math.log2((dps + guard) / 14.0)))
        for _ in range(n_iter):
            c2, s2 = mp.cos_sin(2 * th)
            th -= (2 * th + s2 - target) / (2 + 2 * c2)
        a = mp.mpf(1) / 2 - (th - mp.sin(4 * th) / 4) / mp.pi
    with mp.workdps(dps):
        return +a


def _alpha_chunk(k):
    # one cache-sized chunk: y - sin y = pi kappa, alpha = (2y - sin 2y) / (4 pi)
    return x_minus_sin(2 * qc_upper_angle(np.pi * k)) / (4 * np.pi)


def alpha_c(kappa, *, dps=None):
    r"""Compute the rank-constrained capacity :math:`\alpha_c(\kappa)` (closed form, vectorised).

    Parameters
    ----------
    kappa : array_like
        Rank fraction(s) :math:`m / d` in :math:`(0, 1]`. With ``dps`` also
        ``mpmath.mpf``, ``fractions.Fraction``, ``decimal.Decimal`` and decimal
        strings (``"0.1"``), or sequences of them: converted to mpmath at the
        working precision, never rounded through a float.
    dps : int, optional
        If given (:math:`5 \le \mathrm{dps} \le 100000`), evaluate in mpmath at ``dps``
        decimal digits (scalar: an ``mpmath.mpf``; array: an object array of ``mpf``),
        through Newton's method in :math:`\theta` on
        :math:`1/2 - (\theta - \sin(4 \theta)/4)/\pi` with guard digits: an
        independent code path used as a test oracle.

    Returns
    -------
    float or ndarray
        :math:`\alpha_c(\kappa) = (2y - \sin 2y) / (4 \pi)` with :math:`y - \sin y = \pi \kappa`.

    Raises
    ------
    ValueError
        If ``kappa`` is not in :math:`(0, 1]` (or NaN) or ``dps`` is not an integer >= 5.

    See Also
    --------
    replica.alpha_c_finite : The finite-``p`` capacity, :math:`\alpha_c(\kappa) \ln p / E[V_p]`.
    replica.alpha_c_quad : The same value by direct quadrature (an independent oracle).
    replica.alpha_c_small_kappa : Its small-:math:`\kappa` expansion.
    replica.finite_capacity.alpha_c_margin_limit : The full-rank large-``p`` capacity at a margin.
    replica.tam_capacity : The capacity under the tail-average margin criterion.
    replica.symbolic.alpha_c_closed_form : The closed form as a sympy expression.

    Notes
    -----
    With :math:`\theta_\kappa` solving :math:`2\theta + \sin 2\theta = \pi(1 - \kappa)`,

    .. math::

        \alpha_c(\kappa) = \frac12 \int_{1-\kappa}^{1} X_{qc}(u)^2\, du
        = \frac12 - \frac{\theta_\kappa - \sin(4\theta_\kappa)/4}{\pi}.

    :math:`\alpha_c(1) = 1/2` (full rank recovers the full-rank capacity 1/2);
    :math:`\alpha_c(\kappa) = 2 \kappa - (6 \pi \kappa)^{5/3} / (20 \pi) + O(\kappa^{7/3})`.
    The paper summary quotes 0.46 at :math:`\kappa = 0.5` and 0.31 at
    :math:`\kappa = 0.25`; the formula gives 0.446865 and 0.311456.  We trust the
    formula: it agrees to 20 digits with two independent evaluations
    (:func:`alpha_c_quad` and the mpmath path); see
    ``docs/rank_constrained.md#where-we-differ-from-the-papers``.

    References
    ----------
    arXiv:2605.10795 (capacity of the rank-constrained memory);
    docs/rank_constrained.md#closed-form

    Examples
    --------
    >>> print(alpha_c(1.0), alpha_c([0.25, 0.5]))
    0.5 [0.31145628 0.4468654 ]
    >>> import mpmath
    >>> print(mpmath.nstr(alpha_c(0.5, dps=30), 25))
    0.4468653969390270090567449
    """
    if dps is not None:
        from hcizz.checks import check_int

        dps = check_int("dps", dps, low=5, high=100000)
        if np.ndim(kappa) == 0:
            return _alpha_c_mp(kappa, dps)
        arr = np.asarray(kappa, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            out[idx] = _alpha_c_mp(v, dps)
        return out
    k = _check_kappa(kappa)
    arr = np.asarray(k, dtype=float)
    a = chunked(_alpha_chunk, arr)
    if np.ndim(a) == 0:
        return 0.5 if float(arr) == 1.0 else float(a)
    return np.where(arr == 1.0, 0.5, a)


@fill_doc
def alpha_c_small_kappa(kappa, order=2):
    r"""Evaluate the small-``kappa`` expansion of :math:`\alpha_c(\kappa)`.

    Order 1 is :math:`2 \kappa`; order 2 adds :math:`-(6 \pi \kappa)^{5/3} / (20 \pi)`;
    the error of the order-2 expansion is :math:`O(\kappa^{7/3})`.

    Parameters
    ----------
    kappa : float or array_like
        Rank fraction(s) in :math:`(0, 1]`.
    order : int, optional
        1 or 2 (default 2; larger values give order 2).

    Returns
    -------
    float or ndarray
        The truncated expansion, shape of ``kappa``.

    See Also
    --------
    replica.alpha_c : The exact capacity.
    replica.symbolic.alpha_c_series : The expansion to any order, symbolically.

    %(refs_small_kappa)s

    Examples
    --------
    >>> print(alpha_c_small_kappa([0.01, 0.05]), alpha_c([0.01, 0.05]))
    [0.01901375 0.08558088] [0.01902539 0.08608412]
    """
    k = np.asarray(_check_kappa(kappa), dtype=float)
    out = 2 * k
    if order >= 2:
        out = out - (6 * np.pi * k) ** (5 / 3) / (20 * np.pi)
    return out if out.ndim else float(out)


@fill_doc
def alpha_c_quad(kappa, *, epsabs=0.0, epsrel=1e-13):
    r"""Compute :math:`\alpha_c(\kappa)` by direct quadrature (test oracle, one ``kappa`` at a time).

    :math:`a = X_{qc}(1 - \kappa)` by :func:`scipy.optimize.brentq` on the
    quarter-circle CDF :math:`(2 \arcsin(s/2) + \sin(2 \arcsin(s/2))) / \pi`, then
    :math:`\alpha_c = \frac12 \int_a^2 s^2 \sqrt{4 - s^2} / \pi \, ds` with
    :func:`scipy.integrate.quad`.  Shares no code with :func:`alpha_c`.  Relative
    accuracy about :math:`10^{-16} / \kappa` (the edge is found from
    :math:`F(a) = 1 - \kappa`).

    Parameters
    ----------
    %(rank_fraction)s
    epsabs, epsrel : float, optional
        Tolerances passed to ``scipy.integrate.quad``.

    Returns
    -------
    float
        :math:`\alpha_c(\kappa)`.

    See Also
    --------
    replica.alpha_c : The closed form this checks.

    %(refs_numerics)s

    Examples
    --------
    >>> print(f"{alpha_c_quad(0.5):.14f} {alpha_c(0.5):.14f}")
    0.44686539693903 0.44686539693903
    """
    from scipy import integrate, optimize

    k = _check_kappa(kappa, allow_array=False)

    def cdf(s):
        t = math.asin(s / 2)
        return (2 * t + math.sin(2 * t)) / math.pi

    if k == 1.0:
        a = 0.0
    else:
        a = optimize.brentq(lambda s: cdf(s) - (1 - k), 0.0, 2.0, xtol=1e-17, rtol=1e-15, maxiter=200)
    val, _ = integrate.quad(lambda s: s * s * math.sqrt(max(4 - s * s, 0.0)) / math.pi, a, 2.0,
                            epsabs=epsabs, epsrel=epsrel, limit=200)
    return 0.5 * val


# ---------------------------------------------------------------------------
# Quantile coupling and its Cauchy-Schwarz maximisation


def _qc_first_moment_between(x1, x2):
    """``Int_{x1}^{x2} s rho_qc(s) ds = ((4 - x1^2)^(3/2) - (4 - x2^2)^(3/2)) / (3 pi)``."""
    return ((4 - x1 ** 2) ** 1.5 - (4 - x2 ** 2) ** 1.5) / (3 * np.pi)


@fill_doc
def quantile_coupling(profile, kappa, *, n=256):
    r"""Compute the quantile coupling of a rank-``kappa`` spectrum with the quarter circle.

    For :math:`W` whose singular values are zero on a fraction :math:`1 - \kappa` and
    have quantile profile :math:`q(v)`, :math:`v \in (0, 1)`, on the nonzero part,
    :math:`X_W(u) = q((u - 1 + \kappa) / \kappa)` for :math:`u > 1 - \kappa` and the
    coupling is

    .. math::

        C[q] = \frac{\int_{1-\kappa}^1 X_{qc}(u) X_W(u)\, du}{\left(\int_0^1 X_W(u)^2 du\right)^{1/2}}

    (scale invariant: :math:`W` is normalised to unit second moment).

    Parameters
    ----------
    profile : callable or array_like
        Either a callable ``q(v)`` (vectorised, nondecreasing, ``>= 0``) or the
        nonzero singular values of a finite matrix (treated as an empirical
        quantile function; exact evaluation through the antiderivative of
        :math:`X_{qc}`).
    %(rank_fraction)s
    n : int
        Gauss-Legendre nodes for a callable profile (with the substitution
        :math:`v = 1 - (1 - t)^3` that smooths the :math:`(1-u)^{2/3}` edge of
        :math:`X_{qc}`).

    Returns
    -------
    float
        :math:`C[q]`.  By Cauchy-Schwarz :math:`C \le \sqrt{2 \alpha_c(\kappa)}` with
        equality iff :math:`q` is proportional to the truncated quarter-circle quantile.

    See Also
    --------
    replica.capacity_from_profile : The capacity :math:`C[q]^2/2` of a profile.
    hcizz.quantile_coupling_value : The same coupling for two spectra.
    hcizz.truncated_quarter_circle : The maximising profile.

    Notes
    -----
    docs/rank_constrained.md#reduction-to-a-quantile-coupling: the
    large-conjugate-field limit of the rectangular HCIZ integral is this coupling;
    the capacity is :math:`\alpha_c = \max_q C[q]^2 / 2`.

    %(refs_paper_quantile_coupling)s

    Examples
    --------
    The truncated quarter circle reaches the bound :math:`\sqrt{2 \alpha_c(1/2)}`, a
    flat profile does not:

    >>> from hcizz import truncated_quarter_circle
    >>> law = truncated_quarter_circle(0.5)
    >>> print(f"{quantile_coupling(law.ppf, 0.5):.10f} {np.sqrt(2 * alpha_c(0.5)):.10f}")
    0.9453733622 0.9453733622
    >>> print(f"{quantile_coupling(lambda v: np.ones_like(v), 0.5):.6f}")
    0.918906
    """
    k = _check_kappa(kappa, allow_array=False)
    if callable(profile):
        from hcizz.numerics import gauss_legendre

        t, w = gauss_legendre(int(n))
        v = 1 - (1 - t) ** 3
        wv = w * 3 * (1 - t) ** 2
        q = np.asarray(profile(v), dtype=float)
        u = 1 - k + k * v
        xq = qc_quantile(u)
        num = k * np.sum(wv * xq * q)
        den = math.sqrt(k * np.sum(wv * q * q))
        return float(num / den)
    s = np.sort(np.asarray(profile, dtype=float))
    if s.ndim != 1 or s.size == 0 or np.any(~np.isfinite(s)) or s[0] < 0:
        raise ValueError("profile must be a callable or a 1-d array of finite values >= 0")
    nn = s.size
    edges_u = 1 - k + k * np.arange(nn + 1) / nn
    xe = qc_quantile(np.clip(edges_u, 0, 1))
    num = np.sum(s * _qc_first_moment_between(xe[:-1], xe[1:]))
    den = math.sqrt(k * np.mean(s * s))
    return float(num / den)


@fill_doc
def capacity_from_profile(profile, kappa, **kw):
    r"""Return :math:`C[q]^2 / 2`, the capacity reached with nonzero spectrum profile :math:`q`.

    It is at most :math:`\alpha_c(\kappa)`, with equality for the truncated quarter
    circle (see :func:`quantile_coupling`).

    Parameters
    ----------
    profile : callable or array_like
        Quantile profile :math:`q(v)` or nonzero singular values.
    %(rank_fraction)s
    **kw
        Passed to :func:`quantile_coupling` (``n``).

    Returns
    -------
    float
        :math:`C[q]^2 / 2`.

    See Also
    --------
    replica.quantile_coupling : The coupling :math:`C[q]`.
    replica.alpha_c : The maximum over profiles.
    replica.rank_capacity.coupling_maximiser_check : Checks the maximiser numerically.

    %(refs_quantile_coupling)s

    Examples
    --------
    Three singular values 1, 2, 3 at half rank, against :math:`\alpha_c(1/2) = 0.446865`:

    >>> print(f"{capacity_from_profile([1.0, 2.0, 3.0], 0.5):.6f}")
    0.431464
    """
    return quantile_coupling(profile, kappa, **kw) ** 2 / 2


@fill_doc
def coupling_maximiser_check(kappa, *, rng=None, n_trials=20):
    r"""Check that the truncated quarter circle maximises the quantile coupling.

    Evaluates :math:`C^2/2` for the truncated quarter-circle profile (must equal
    :math:`\alpha_c(\kappa)`), for random monotone perturbations of it and for a few
    other shapes (flat, linear, Marchenko-Pastur-like); all must be smaller.

    Parameters
    ----------
    %(rank_fraction)s
    rng : None, int or Generator, optional
        Randomness of the perturbations.
    n_trials : int, optional
        Number of random perturbations (default 20).

    Returns
    -------
    dict
        ``{"optimum": ..., "alpha_c": ..., "others": [...], "ok": bool}``.

    See Also
    --------
    replica.capacity_from_profile : The capacity of one profile.
    replica.alpha_c : The optimum it must reach.

    %(refs_quantile_coupling)s

    Examples
    --------
    >>> r = coupling_maximiser_check(0.5, rng=0, n_trials=5)
    >>> print(f"{r['optimum']:.10f} {r['alpha_c']:.10f} {max(r['others']):.6f}")
    0.4468653969 0.4468653969 0.446861
    """
    from hcizz.checks import check_rng
    from hcizz.quarter_circle import truncated_quarter_circle

    k = _check_kappa(kappa, allow_array=False)
    rng = check_rng(rng)
    law = truncated_quarter_circle(k)
    opt = capacity_from_profile(law.ppf, k)
    others = []
    shapes = [lambda v: np.ones_like(v), lambda v: v, lambda v: 1 + v,
              lambda v: np.sqrt(v), lambda v: law.ppf(v) ** 2]
    for _ in range(n_trials):
        a1, a2 = rng.normal(size=2) * 0.3
        shapes.append(lambda v, a1=a1, a2=a2: law.ppf(v) * np.exp(a1 * v + a2 * v * v))
    for f in shapes:
        others.append(capacity_from_profile(f, k))
    ac = float(alpha_c(k))
    ok = abs(opt - ac) <= 1e-9 * ac and max(others) < opt
    return {"optimum": opt, "alpha_c": ac, "others": others, "ok": bool(ok)}
