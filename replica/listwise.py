r"""Listwise (tail-average-margin, TAM) capacity of a full-rank linear memory (docs/listwise.md#the-tam-criterion).

Fact ``mu`` satisfies the TAM criterion at tail fraction ``tau`` and margin
``gamma`` when its correct score exceeds the mean of the largest ``k = tau (p - 1)``
of its ``p - 1`` competitor scores by ``gamma`` times the competitor-score
scale.  The replica-symmetric (Gardner-volume) capacity in facts per parameter
``n / d^2`` is

.. math::

    \alpha_c(\tau, p) = \frac{1}{2\, \mathbb E[V_{p,\tau}(\eta)]},
    \qquad
    V_{p,\tau}(\eta) = \tfrac12 \operatorname{dist}^2(\eta, A_{\tau,\gamma}),

with ``A`` the (convex) set of score vectors meeting the criterion, and its
large-``p`` limit is Gardner's perceptron capacity at the margin
``kappa_tau + gamma``, ``kappa_tau = phi(z_tau) / tau`` the mean of the upper
``tau`` tail of a standard normal.  The derivations are on ``docs/listwise.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, stats
from scipy.special import log_ndtr, ndtr, ndtri

from hcizz.checks import check_int, check_real, check_rng
from hcizz.estimate import Estimate
from hcizz.results import Result
from hcizz.numerics import gauss_legendre

from ._control_variates import cv_mean
from ._docparams import fill_doc
from .finite_capacity import MARGIN_MAX
from .free_entropy import entropic_term
from .order_stats import TopNormals

__all__ = [
    "gaussian_tail_mean", "gardner_energy", "tail_size", "tam_capacity", "tam_capacity_expansion",
    "tam_finite_p_coefficient", "tam_capacity_small_tau", "tam_free_entropy", "tam_projection",
    "tail_mean_bias", "tail_mean_sf", "check_mc_size", "tam_scores", "tam_score_laws", "TamLaws", "CensoredNormal",
]

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Largest ``samples * (order statistics per sample)`` a Monte Carlo call may draw.
_MAX_NUMBERS = 10**9
_BLOCK_NUMBERS = 1 << 22          # numbers held at once (32 MiB of float64)
_K_ASYMPTOTIC = 10**6             # tail sizes above this use the asymptotic bias


def _phi(x):
    return _INV_SQRT_2PI * np.exp(-0.5 * np.square(x))


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


# ---------------------------------------------------------------------------
# closed forms of the large-p theory
# ---------------------------------------------------------------------------
@fill_doc
def gaussian_tail_mean(tau):
    r"""Return the mean :math:`\kappa_\tau` of the upper :math:`\tau` tail of a standard normal.

    Parameters
    ----------
    %(tau_fractions)s

    Returns
    -------
    float or ndarray
        :math:`\kappa_\tau = \mathbb E[Z \mid Z > z_\tau] = \phi(z_\tau)/\tau`,
        :math:`z_\tau = \Phi^{-1}(1-\tau)`; ``0`` at ``tau = 1``.

    Raises
    ------
    ValueError
        If ``tau`` is not in ``(0, 1]``.

    See Also
    --------
    replica.listwise.tail_size : The finite-``p`` tail size :math:`k` of the criterion.
    replica.tam_capacity : The TAM capacity, a function of this tail mean.
    replica.symbolic.gaussian_tail_mean : The same tail mean as a sympy expression.

    Notes
    -----
    This is the level the correct score must reach at large ``p``
    (docs/listwise.md#large-p-limit).  As ``tau -> 0``,
    :math:`\kappa_\tau = z_\tau + 1/z_\tau - 2/z_\tau^3 + O(z_\tau^{-5})`.

    %(refs_listwise_paper_large_p)s

    Examples
    --------
    >>> print(np.round(gaussian_tail_mean([0.01, 0.05, 0.2, 0.5, 1.0]), 6))
    [2.665214 2.062713 1.39981  0.797885 0.      ]
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True)
    t = np.asarray(tau, dtype=float)
    z = -ndtri(t)                       # isf; -inf at tau = 1, where phi(z) = 0
    return _out(np.where(t == 1.0, 0.0, _phi(z) / t))


@fill_doc
def gardner_energy(kappa):
    r"""Return Gardner's margin integral :math:`\Gamma(\kappa) = E[(\kappa - Z)_+^2]`, :math:`Z \sim N(0, 1)`.

    Parameters
    ----------
    kappa : float or array_like
        Margin, any real number.

    Returns
    -------
    float or ndarray
        :math:`\Gamma(\kappa) = (1+\kappa^2)\Phi(\kappa) + \kappa\phi(\kappa)`;
        its reciprocal is the perceptron capacity at margin ``kappa``.

    Raises
    ------
    ValueError
        If ``kappa`` is NaN or not real.

    See Also
    --------
    replica.tam_capacity : The TAM capacity built from this integral.
    replica.symbolic.gardner_energy : The same integral as a sympy expression.

    Notes
    -----
    For negative :math:`\kappa` the two terms of the closed form cancel (a relative
    rounding error of :math:`10^{-16}` times about :math:`\kappa^4`); below :math:`\kappa = -2`
    the function therefore integrates
    :math:`\phi(\kappa)\int_0^\infty s^2 e^{-|\kappa| s - s^2/2}\, ds`
    (``s = kappa - t``) with 64 Gauss-Legendre nodes on ``[0, 40/|kappa|]``:
    relative error below 1e-14 against mpmath (underflow to 0 below
    ``kappa = -38``, where the value is below 1e-300).

    %(refs_listwise_large_p)s

    Examples
    --------
    >>> print(gardner_energy([0.0, 1.0, 3.0]))
    [0.5        1.92466022 9.99979656]
    """
    kappa = check_real("kappa", kappa, low=-math.inf, high=math.inf)
    k = np.asarray(kappa, dtype=float)
    out = (1.0 + k * k) * ndtr(k) + k * _phi(k)
    neg = k < -2.0
    if np.any(neg):
        # (kappa - t)_+^2 phi(t): with s = kappa - t > 0 the integrand is
        # s^2 phi(kappa - s) = s^2 phi(kappa) exp(-s |kappa| - s^2/2): mass on s ~ 1/|kappa|
        a = -k[neg]
        x, w = gauss_legendre(64)
        scale = 40.0 / a
        s = scale[:, None] * x[None, :]
        val = (w[None, :] * s * s * np.exp(-s * a[:, None] - 0.5 * s * s)).sum(axis=1) * scale
        out = np.array(out, dtype=float)
        out[neg] = val * _phi(a)
    return _out(out)


@fill_doc
def tail_size(tau, p):
    r"""Return the tail size :math:`k = \max(\tau (p - 1), 1)` of the TAM criterion.

    Parameters
    ----------
    %(tau_fractions)s
    p : int
        Number of candidates per fact (``p - 1`` competitors), ``p >= 2``.

    Returns
    -------
    float or ndarray
        The (possibly fractional) number of competitors averaged; a tail
        smaller than one competitor is the largest competitor (top-1).

    Raises
    ------
    ValueError
        If ``tau`` or ``p`` is out of range.

    See Also
    --------
    replica.gaussian_tail_mean : The large-``p`` tail mean at fraction :math:`\tau`.
    replica.listwise.tail_mean_bias : The finite-:math:`k` bias of the tail mean.

    References
    ----------
    docs/listwise.md#the-tam-criterion

    Examples
    --------
    >>> print(tail_size([0.001, 0.05, 1.0], 101))
    [  1.   5. 100.]
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True)
    p = check_int("p", p, low=2, high=10**15)
    return _out(np.maximum(np.asarray(tau) * (p - 1), 1.0))


def tam_capacity_small_tau(tau, *, margin=0.0):
    r"""Return the small-tail law :math:`1 / (2L - \ln(4 \pi L) + 3 + 2 \gamma \sqrt{2L})`, :math:`L = \ln(1/\tau)`.

    Parameters
    ----------
    tau : float or array_like
        Tail fraction, ``0 < tau < 1``.
    margin : float
        Margin ``0 <= gamma <= 20`` in units of the competitor-score scale.

    Returns
    -------
    float or ndarray
        The asymptotic capacity ``n / d^2`` as ``tau -> 0``.

    Raises
    ------
    ValueError
        If ``tau`` is not in ``(0, 1)`` or ``margin`` outside ``[0, 20]``.

    See Also
    --------
    replica.tam_capacity : The exact large-``p`` capacity.
    replica.symbolic.tam_capacity_small_tail : The expansion derived symbolically.

    Notes
    -----
    From :math:`\alpha_c(\tau) = 1/\Gamma(\kappa_\tau + \gamma)` with
    :math:`\Gamma(\kappa) = 1 + \kappa^2 + O(\phi(\kappa)/\kappa^3)`,
    :math:`\kappa_\tau^2 = z_\tau^2 + 2 + O(z_\tau^{-2})` and
    :math:`z_\tau^2 = 2L - \ln(4\pi L) + O(\ln L / L)`; the margin adds
    :math:`2\gamma\kappa_\tau + \gamma^2 \approx 2\gamma\sqrt{2L} + \gamma^2`.
    The relative error is :math:`(\ln(4\pi L) - 5)/(4L^2) + O((\ln L)^2/L^3)`
    (docs/listwise.md#small-tail-behaviour).  At :math:`\tau = 1/p` the leading
    term gives :math:`n \ln n / d^2 \to 1/2`, the top-1 law.

    References
    ----------
    arXiv:2605.05189; docs/listwise.md#small-tail-behaviour

    Examples
    --------
    >>> print(np.round(tam_capacity_small_tau([1e-2, 1e-6, 1e-12]), 5))
    [0.12267 0.03926 0.01908]
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True, high_open=True)
    margin = check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)
    L = -np.log(np.asarray(tau, dtype=float))
    den = 2.0 * L - np.log(4.0 * math.pi * L) + 3.0
    if margin:
        den = den + 2.0 * margin * np.sqrt(2.0 * L) + margin * margin
    return _out(1.0 / den)


@fill_doc
def tam_finite_p_coefficient(tau, *, margin=0.0):
    r"""Return :math:`C(\tau)` of the first-order finite-``p`` law :math:`\alpha_c(\tau, p) = \alpha_c(\tau) (1 + C/(p-1))`.

    Parameters
    ----------
    %(tau_fractions)s
    margin : float
        Margin ``0 <= gamma <= 20`` (competitor-score units).

    Returns
    -------
    float or ndarray
        :math:`C(\tau) = \frac1\tau - \frac{\Gamma'(\kappa)\, b_\tau + \Phi(\kappa)\, s_\tau^2/\tau^2}{\Gamma(\kappa)}`,
        with :math:`\kappa = \kappa_\tau + \gamma`,
        :math:`\Gamma'(\kappa) = 2(\kappa\Phi(\kappa) + \phi(\kappa))`,
        :math:`b_\tau = -(1-\tau)/(2\phi(z_\tau))` (the bias of the empirical
        tail mean, times ``p - 1``) and
        :math:`s_\tau^2 = \operatorname{Var}((Z - z_\tau)_+)`.

    Raises
    ------
    ValueError
        If ``tau`` is not in ``(0, 1]`` or ``margin`` outside ``[0, 20]``.

    See Also
    --------
    replica.tam_capacity_expansion : The finite-``p`` capacity to second order.
    replica.tam_capacity : The large-``p`` capacity and its Monte Carlo at finite ``p``.

    Notes
    -----
    Three effects of order :math:`1/(p-1)` (docs/listwise.md#finite-p-corrections):
    the :math:`k` averaged competitors can be pushed down (:math:`1/k`), the empirical
    tail mean is biased low (:math:`b`) and it fluctuates
    (:math:`s^2/(\tau^2 (p-1))`).  At :math:`\tau = 1` the tail mean is the sample
    mean (:math:`b = 0`, variance :math:`1/(p-1)`) and
    :math:`C = 1 - \Phi(\gamma)/\Gamma(\gamma)`, the first order of the exact
    :math:`1/\Gamma(\gamma/\sqrt{1 + 1/(p-1)})`; it vanishes at zero margin, where
    :math:`\alpha_c(1, p) = 2` for every :math:`p`.

    %(refs_listwise_finite_p)s

    Examples
    --------
    >>> print(np.round(tam_finite_p_coefficient([0.05, 0.2, 0.5, 1.0]), 4))
    [22.4964  5.667   2.051   0.    ]
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True)
    margin = check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)
    t = np.asarray(tau, dtype=float)
    one = t == 1.0
    tt = np.where(one, 0.5, t)                     # placeholder where tau = 1
    z = -ndtri(tt)
    ph = _phi(z)
    kt = np.where(one, 0.0, ph / tt)
    kap = kt + margin
    G = np.asarray(gardner_energy(kap))
    dG = 2.0 * (kap * ndtr(kap) + _phi(kap))
    b = np.where(one, 0.0, -(1.0 - tt) / (2.0 * ph))
    ex = ph - z * tt                                # E (Z - z)_+
    ex2 = (1.0 + z * z) * tt - z * ph               # E (Z - z)_+^2
    s2 = np.where(one, 1.0, ex2 - ex * ex)          # tau = 1: Var(Z) = 1
    C = 1.0 / t - (dG * b + ndtr(kap) * s2 / (t * t)) / G
    return _out(C)


def _check_tau_margin(tau, margin):
    tau = check_real("tau", tau, low=0, high=1, low_open=True)
    margin = check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)
    return tau, margin


# ---------------------------------------------------------------------------
# exact tail-mean bias (order statistics, by quadrature)
# ---------------------------------------------------------------------------
@fill_doc
def tail_mean_bias(m, k):
    r"""Return :math:`E[T_k] - \kappa_{k/m}`, the bias of the tail mean of ``m`` i.i.d. standard normals.

    Parameters
    ----------
    m : int
        Number of normals (competitors), ``1 <= m <= 1e15``.
    k : float
        Tail size, ``1 <= k <= m`` (fractional allowed).

    Returns
    -------
    float
        :math:`\mathbb E[T_k(X)] - \kappa_{k/m}` where :math:`T_k` averages
        the ``ceil(k) - 1`` largest values and ``k - ceil(k) + 1`` times the next.

    Raises
    ------
    ValueError
        If ``m`` or ``k`` is out of range.

    See Also
    --------
    replica.listwise.tail_size : The tail size :math:`k` at a fraction :math:`\tau`.
    replica.gaussian_tail_mean : The limit :math:`\kappa_\tau` of the tail mean.

    Notes
    -----
    With :math:`B \sim \mathrm{Bin}(m-1, \bar\Phi(x))` the number of other
    values above ``x``, the expected weight of a value at ``x`` is
    :math:`w(x) = (1-f) P(B \le J-1) + f P(B \le J)` (``J = ceil(k) - 1``,
    ``f = k - J``), so

    .. math::

        k\, \mathbb E[T_k] - k\kappa_\tau
        = m \int (x - z_\tau)\, \phi(x)\, [w(x) - 1\{x > z_\tau\}]\, dx ,

    (the weights and the step both integrate to ``k`` against ``m phi``, which
    allows the ``- z_tau``).  The integrand is smooth away from ``z_tau``; adaptive
    quadrature on pieces cut at ``z_tau`` and at ``+-4, +-12`` step widths
    ``sqrt(tau (1-tau)/m)/phi(z_tau)``.  Agrees with mpmath sums of exact
    order-statistic means to 1e-15 at small ``m`` (tests).  Asymptotically
    :math:`k\, b \to -\tau(1-\tau)/(2\phi(z_\tau))`, which is used for
    ``k > 1e6`` (the difference is below 1e-8 relative there).

    %(refs_listwise_finite_p)s

    Examples
    --------
    >>> print(round(tail_mean_bias(9, 3.0), 12), round(tail_mean_bias(999, 1.0), 4))
    -0.094372190093 -0.1257
    """
    m = check_int("m", m, low=1, high=10**15)
    k = check_real("k", k, low=1, high=m, allow_array=False)
    if m == 1 or k == m:
        return 0.0                    # T_k = the only value / the sample mean: unbiased
    tau = k / m
    z = float(-ndtri(tau))
    if k > _K_ASYMPTOTIC:
        # the step of w is too narrow for the quadrature; the first order is exact
        # to a relative 1e-8 of b already at k = 5e6 (docs/listwise.md#finite-p-corrections)
        return -tau * (1.0 - tau) / (2.0 * float(_phi(z))) / k
    J = math.ceil(k) - 1
    f = k - J
    binom = stats.binom

    def integrand(x):
        u = float(ndtr(-x))
        w = (1.0 - f) * (binom.cdf(J - 1, m - 1, u) if J >= 1 else 0.0) + f * binom.cdf(J, m - 1, u)
        return m * (x - z) * _phi(x) * (w - (1.0 if x > z else 0.0))

    sx = math.sqrt(tau * (1.0 - tau) / m) / float(_phi(z))
    top = max(12.0, math.sqrt(2.0 * math.log(m)) + 12.0)
    edges = sorted({-40.0, z - 12 * sx, z - 4 * sx, z, z + 4 * sx, z + 12 * sx, top})
    edges = [e for e in edges if -40.0 <= e <= top]
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        val, _ = integrate.quad(integrand, a, b, limit=400, epsabs=1e-14, epsrel=1e-12)
        total += val
    return total / k


def _excess_sum_sf(t, J, h):
    """Lattice law of the sum of ``J`` i.i.d. excesses ``X - t`` of ``N(0, 1) | X > t``.

    Returns ``(y, sf)``: ``sf[i] = P(sum > y[i])`` at the right edges ``y`` of the
    lattice cells (cell masses of width ``h`` placed at their centres, ``J``-fold
    convolution by FFT).
    """
    lt = log_ndtr(-t)
    mean1 = math.exp(float(-0.5 * t * t - 0.5 * math.log(2 * math.pi) - lt)) - t   # E[X - t | X > t]
    span = J * (mean1 + 1.0) + 12.0 * math.sqrt(J) + 12.0
    n = int(2 ** math.ceil(math.log2(max(span / h, 64.0))))
    y1 = h * np.arange(min(n, int(14.0 / h) + 2) + 1)
    r = np.exp(log_ndtr(-(t + y1)) - lt)                     # P(X - t > y | X > t)
    mass = np.zeros(n)
    mass[:y1.size - 1] = r[:-1] - r[1:]
    conv = np.fft.irfft(np.fft.rfft(mass) ** J, n)
    conv = np.clip(conv, 0.0, None)
    sf = np.cumsum(conv[::-1])[::-1]                          # P(sum index >= i)
    sf = np.append(sf[1:], 0.0)                               # P(sum index > i)
    y = h * (np.arange(n) + 0.5 * J + 0.5)                    # right edge of cell i
    return y, np.minimum(sf, 1.0)


@fill_doc
def tail_mean_sf(x, m, k, *, nodes=200):
    r"""Return :math:`P(T_k > x)`, the survival function of the tail mean of ``m`` i.i.d. standard normals.

    Parameters
    ----------
    x : float or array_like
        Points.
    m : float
        Number of normals (competitors), :math:`1 \le m \le 10^{9}`; real values are
        allowed (the law of the order statistics is continued through the beta
        law below), for root finding in :math:`m`.
    k : float
        Tail size, :math:`1 \le k \le m` (fractional allowed, as in
        :func:`replica.listwise.tail_size`).
    nodes : int
        Gauss-Legendre nodes of the outer integral (default 200).

    Returns
    -------
    float or ndarray
        :math:`P(T_k > x)`, shape of ``x``.

    Raises
    ------
    ValueError
        If ``m``, ``k`` or ``nodes`` is out of range.

    See Also
    --------
    replica.listwise.tail_mean_bias : The mean of :math:`T_k` (its bias against :math:`\kappa_\tau`).
    replica.hebbian_tam_probability : Uses this law for the Hebbian memory under TAM.

    Notes
    -----
    :math:`T_k` averages the :math:`K - 1` largest values (:math:`K = \lceil k \rceil`)
    and :math:`k - K + 1` times the :math:`K`-th.  Given the :math:`K`-th largest
    :math:`X_{(K)} = t`, the :math:`K - 1` values above it are i.i.d.
    :math:`N(0, 1)` conditioned on :math:`X > t`, so with :math:`S` the sum of their
    excesses over :math:`t`,

    .. math:: P(T_k > x) = \int P\bigl(S > k (x - t) \mid t\bigr)\, dF_{(K)}(t),
              \qquad \Phi(X_{(K)}) \sim \mathrm{Beta}(m - K + 1, K).

    The outer integral is Gauss-Legendre in the beta probability (``nodes``
    nodes); the law of :math:`S` is the :math:`(K-1)`-fold convolution (FFT) of the
    excess law discretised in cells of width :math:`h = \min(0.01, s_1 / 40)`
    (:math:`s_1` the excess standard deviation at :math:`t`), cell masses exact,
    placed at the cell centres.  :math:`k = 1` is the closed form
    :math:`1 - \Phi(x)^m`.  Checked against the exact laws at :math:`k = 1` and
    :math:`k = m` (the sample mean, :math:`N(0, 1/m)`) and against Monte Carlo at
    fractional :math:`k` (tests): absolute error below :math:`10^{-4}`.

    %(refs_listwise_finite_p)s

    Examples
    --------
    >>> print(f"{float(tail_mean_sf(0.5, 4, 4)):.5f}")          # the mean of 4: 1 - Phi(1)
    0.15866
    >>> print(f"{float(tail_mean_sf(1.8, 99, 5.0)):.4f}")
    0.8089
    """
    m = check_real("m", m, low=1, high=1e9, allow_array=False)
    k = check_real("k", k, low=1, high=m, allow_array=False)
    nodes = check_int("nodes", nodes, low=8, high=4096)
    x = np.asarray(x, dtype=float)
    K = math.ceil(k - 1e-12)
    if K == 1:
        return _out(-np.expm1(m * log_ndtr(x)))
    J = K - 1
    v, wv = gauss_legendre(nodes)
    t = ndtri(stats.beta.ppf(v, m - K + 1.0, K))
    out = np.zeros(x.shape)
    for ti, wi in zip(t, wv):
        lt = float(log_ndtr(-ti))
        mean1 = math.exp(float(-0.5 * ti * ti - 0.5 * math.log(2 * math.pi) - lt)) - ti
        var1 = max(1.0 + ti * (mean1 + ti) - (mean1 + ti) ** 2 + 0.0, 1e-12)   # Var(X | X > t)
        h = min(0.01, math.sqrt(var1) / 40.0)
        y, sf = _excess_sum_sf(float(ti), J, h)
        out += wi * np.interp(k * (x - ti), y, sf, left=1.0, right=0.0)
    return _out(np.clip(out, 0.0, 1.0))


# ---------------------------------------------------------------------------
# exact projection onto the TAM set
# ---------------------------------------------------------------------------
@fill_doc
def tam_projection(levels, eta1, k, *, margin=0.0, complete=True):
    r"""Project score vectors onto the TAM set exactly: :math:`V = \frac12 \mathrm{dist}^2(\eta, A)` and the minimiser.

    Parameters
    ----------
    levels : ndarray, shape (S, K)
        The ``K`` largest competitor scores of each row, descending along axis 1.
    eta1 : ndarray, shape (S,)
        The correct candidate's score.
    k : float
        Tail size, ``1 <= k <= K`` (:func:`tail_size`).
    %(tam_margin)s
    complete : bool
        Whether ``levels`` holds all competitors of each row.

    Returns
    -------
    dict of ndarray
        ``V`` (S,), the half squared distance; ``mu`` (the rise of the
        correct score), ``y`` (the push of the competitors above the clamp),
        ``c`` (the clamp level), ``J`` and ``L`` (int: sizes of the pushed and
        the clamped groups), ``tail`` (the tail mean of the projected
        competitors), ``ok`` (bool: False where the clamped group reaches the
        last drawn competitor of an incomplete row; those values are not
        valid and the row needs more order statistics).

    Raises
    ------
    ValueError
        If the shapes do not match or ``k`` is not in ``[1, K]``.

    See Also
    --------
    replica.tam_capacity : Averages :math:`V` of this projection at finite ``p``.
    replica.finite_capacity.v_p_from_gaps : The top-1 projection (:math:`k = 1`).

    Notes
    -----
    :math:`A = \{\lambda : \lambda_1 \ge T_k(\lambda_2, \dots, \lambda_p) + \gamma\}`, :math:`T_k` the tail
    mean (docs/listwise.md#the-tam-criterion), is convex.  Its projection
    (docs/listwise.md#solving-the-projection) raises the correct score by
    :math:`\mu = k y`, lowers each competitor by :math:`\min(y, (a_j - c)_+)`: the top
    :math:`J` by :math:`y`, the next :math:`L` onto the level :math:`c`, and leaves the rest.  For
    fixed ``(J, L)`` the KKT conditions are linear,

    .. math::

        y = \frac{k G + S_J + (k-J) S_P / L}{k^2 + J + (k-J)^2/L},
        \qquad c = \frac{S_P - (k - J) y}{L},

    (:math:`G = \gamma - \eta_1`, :math:`S_J` the sum of the top :math:`J`, :math:`S_P` of
    the clamped :math:`L`).  Following the solution as :math:`G` grows from the value
    where the constraint starts to bind (:math:`J = \lceil k \rceil - 1`, :math:`L = 1`),
    the group changes only by the next competitor joining the clamp (:math:`L + 1`)
    or the lowest pushed one reaching it (:math:`J - 1`, :math:`L + 1`); each row takes
    the event that comes first until its :math:`y` is consistent.  At ``k = 1``
    this is the top-1 problem :func:`replica.finite_capacity.v_p_from_gaps`.

    References
    ----------
    docs/listwise.md#solving-the-projection

    Examples
    --------
    >>> r = tam_projection(np.array([[1.0, 0.5, -0.2]]), np.array([0.0]), 2.0)
    >>> print(round(float(r["V"][0]), 6), round(float(r["tail"][0]), 6), round(float(r["mu"][0]), 6))
    0.1875 0.5 0.5
    """
    a = np.asarray(levels, dtype=float)
    e1 = np.asarray(eta1, dtype=float)
    if a.ndim != 2 or e1.shape != (a.shape[0],):
        raise ValueError(f"levels must have shape (S, K) and eta1 shape (S,), got {a.shape} and {e1.shape}")
    S, K = a.shape
    k = check_real("k", k, low=1, high=K, allow_array=False)
    G = float(margin) - e1
    cs = np.zeros((S, K + 1))
    np.cumsum(a, axis=1, out=cs[:, 1:])
    J0 = math.ceil(k) - 1
    f0 = k - J0
    Tk = (cs[:, J0] + f0 * a[:, J0]) / k
    active = G + Tk > 0.0
    J = np.full(S, J0, dtype=np.int64)
    L = np.ones(S, dtype=np.int64)
    y = np.zeros(S)
    c = a[:, J0].copy()
    ok = np.ones(S, dtype=bool)
    todo = np.nonzero(active)[0]
    while todo.size:
        Ji, Li = J[todo], L[todo]
        SJ = cs[todo, Ji]
        SP = cs[todo, Ji + Li] - SJ
        w = k - Ji                       # weight of the clamp group in the tail, in (0, L]
        yi = (k * G[todo] + SJ + w * SP / Li) / (k * k + Ji + w * w / Li)
        ci = (SP - w * yi) / Li
        nxt = Ji + Li                    # index of the first competitor below the clamp group
        hasA = nxt < K
        aA = a[todo, np.minimum(nxt, K - 1)]
        yA = np.where(hasA, (SP - Li * aA) / w, np.inf)
        hasB = Ji >= 1
        aB = a[todo, np.maximum(Ji - 1, 0)]
        room = Li - w                    # c + y = (S_P + room y)/L rises only if room > 0
        yB = np.where(hasB & (room > 0), (Li * aB - SP) / np.where(room > 0, room, 1.0), np.inf)
        lack = (~hasA) & (not complete) & (yi > 0)
        fine = (yi <= np.minimum(yA, yB)) | lack
        done = todo[fine]
        y[done], c[done] = yi[fine], ci[fine]
        ok[todo[lack & fine]] = False
        # one event per unfinished row: the one reached at the smaller push
        rest = ~fine
        evA = rest & (yA <= yB)
        evB = rest & ~(yA <= yB)
        L[todo[evA]] += 1
        J[todo[evB]] -= 1
        L[todo[evB]] += 1
        todo = todo[rest]
    mu = np.where(active, k * y, 0.0)
    col = np.arange(K)[None, :]
    inP = active[:, None] & (col >= J[:, None]) & (col < (J + L)[:, None])
    sq = np.where(inP, np.square(a - c[:, None]), 0.0).sum(axis=1)
    V = np.where(active, 0.5 * mu * mu + 0.5 * (J * y * y + sq), 0.0)
    tail = np.where(active, e1 + mu - float(margin), Tk)
    return {"V": V, "mu": mu, "y": np.where(active, y, 0.0), "c": c, "J": J, "L": L,
            "tail": tail, "ok": ok}


def _tail_mean(a, k):
    """T_k of descending rows ``a`` (the ``ceil(k)`` largest are drawn)."""
    J0 = math.ceil(k) - 1
    return (a[:, :J0].sum(axis=1) + (k - J0) * a[:, J0]) / k


def _first_draw(p, kmax):
    return int(min(p - 1, math.ceil(kmax) + 8 + 2 * math.ceil(math.sqrt(kmax))))


def check_mc_size(tau, p, samples):
    r"""Refuse a Monte Carlo call of :func:`tam_capacity` that would draw more than 1e9 order statistics.

    Parameters
    ----------
    tau : float or array_like
        Tail fraction(s), already checked.
    p : int
        Number of candidates, already checked.
    samples : int
        Disorder samples, already checked.

    Raises
    ------
    ValueError
        If ``samples * (ceil(k) + 8 + 2 ceil(sqrt(k)))`` (capped at
        ``samples * (p - 1)``) exceeds 1e9 for the largest tail size ``k``.

    See Also
    --------
    replica.tam_capacity : The Monte Carlo this guards.
    replica.tam_capacity_expansion : The sampling-free alternative for large :math:`\tau p`.

    References
    ----------
    docs/listwise.md#monte-carlo-at-finite-p

    Examples
    --------
    >>> print(check_mc_size(0.05, 1000, 1000))
    None
    >>> try:
    ...     check_mc_size(0.5, 10**6, 10**4)
    ... except ValueError as err:
    ...     print(err)
    samples * (order statistics per sample) must be <= 1e+09, got 10000 * 501424 (use tam_capacity_expansion for large tau * p)
    """
    kmax = float(np.max(np.maximum(np.asarray(tau, dtype=float) * (p - 1), 1.0)))
    K0 = _first_draw(p, kmax)
    if samples * K0 > _MAX_NUMBERS:
        raise ValueError(f"samples * (order statistics per sample) must be <= {_MAX_NUMBERS:.0e}, "
                         f"got {samples} * {K0} (use tam_capacity_expansion for large tau * p)")


def _sample_v(p, ks, margin, samples, rng):
    """Draw ``samples`` rows once and return, per tail size in ``ks``, V, T_k(eta_c), and eta_1."""
    m = p - 1
    K0 = _first_draw(p, max(ks))
    block = max(1, min(samples, _BLOCK_NUMBERS // max(K0, 1)))
    V = np.empty((len(ks), samples))
    T = np.empty((len(ks), samples))
    E1 = np.empty(samples)
    used = np.zeros(samples, dtype=np.int64)
    for s0 in range(0, samples, block):
        n = min(block, samples - s0)
        eta1 = rng.standard_normal(n)
        E1[s0:s0 + n] = eta1
        top = TopNormals(m, n, rng)
        levels = top.extend(np.arange(n), K0)
        rows = np.arange(n)
        used[s0:s0 + n] = K0
        pending = [np.ones(n, dtype=bool) for _ in ks]
        while True:
            Ks = levels.shape[1]
            need = np.zeros(rows.size, dtype=bool)
            for i, k in enumerate(ks):
                sel = pending[i][rows]
                if not np.any(sel):
                    continue
                r = tam_projection(levels[sel], eta1[rows[sel]], k, margin=margin,
                                   complete=(Ks == m))
                good = r["ok"]
                idx = rows[sel][good]
                V[i, s0 + idx] = r["V"][good]
                T[i, s0 + idx] = _tail_mean(levels[sel][good], k)
                pending[i][idx] = False
                need[np.nonzero(sel)[0][~good]] = True
            if not np.any(need):
                break
            # extend the rows whose clamp group reached the last drawn competitor
            keep = need
            levels, rows = levels[keep], rows[keep]
            more = min(Ks, m - Ks)
            levels = np.concatenate([levels, top.extend(rows, more)], axis=1)
            used[s0 + rows] = Ks + more
    return V, T, E1, used


def tam_capacity(tau, p=None, *, margin=0.0, samples=20_000, rng=None, control_variates=True):
    r"""Compute the replica-symmetric TAM capacity :math:`\alpha_c(\tau) = n / d^2`.

    Parameters
    ----------
    tau : float or array_like
        Tail fraction, ``0 < tau <= 1``; the criterion averages the largest
        ``k = max(tau (p - 1), 1)`` competitor scores.
    p : int, optional
        Number of candidates per fact, ``2 <= p <= 1e15``.  ``None`` (default):
        the large-``p`` limit, in closed form.
    margin : float
        Margin ``0 <= gamma <= 20``: the correct score must exceed the tail mean by
        ``gamma`` competitor-score units (docs/listwise.md#the-tam-criterion).
    samples : int
        Monte Carlo samples of the disorder (finite ``p``), ``>= 2``.
    rng : None, int, SeedSequence or Generator
        Randomness (finite ``p``).
    control_variates : bool
        Use the zero-mean control variates of the Notes (default); ``False``
        gives the plain sample mean.

    Returns
    -------
    float, ndarray or Estimate
        ``p=None``: :math:`1/\Gamma(\kappa_\tau + \gamma)`, a float or an array
        of the shape of ``tau``.  Finite ``p``: an :class:`Estimate` of
        :math:`1/(2\,\mathbb E[V_{p,\tau}])` (value and stderr of the shape
        of ``tau``; all ``tau`` from the same disorder draws) with ``info``:
        ``p``, ``k`` (tail sizes), ``E_V`` and its stderr, ``limit`` (the
        large-``p`` value), ``margin``, ``max_order_stats`` and
        ``cv_variance_ratio``.

    Raises
    ------
    ValueError
        If ``tau`` is not in ``(0, 1]``, ``p`` not an integer in ``[2, 1e15]``,
        ``margin`` outside ``[0, 20]``, ``samples < 2``, ``rng`` invalid, or
        ``samples * (tau_max (p - 1) + ...)`` exceeds 1e9 order statistics
        (then use :func:`tam_capacity_expansion`, accurate when
        ``tau (p - 1)`` is large).  Nothing is sampled before the checks.

    See Also
    --------
    replica.tam_capacity_expansion : The finite-``p`` capacity without sampling.
    replica.tam_capacity_small_tau : Its small-:math:`\tau` law.
    replica.tam_free_entropy : The free entropy whose singularity gives the capacity.
    replica.alpha_c_finite : The top-1 (:math:`\tau \to 0`) capacity at finite ``p``.
    replica.finite_capacity.alpha_c_margin_limit : The top-1 large-``p`` capacity at a margin.

    Notes
    -----
    Derivation on docs/listwise.md#replica-symmetric-capacity.  For each
    sample the ``ceil(k) + 8 + 2 ceil(sqrt(k))`` largest of the ``p - 1``
    competitors are drawn exactly by Renyi's representation
    (:class:`replica.order_stats.TopNormals`) and extended where the clamped
    group of the projection reaches the last one drawn; the projection is exact
    (:func:`tam_projection`).  Control variates, with exactly known means
    (``kappa = kappa_tau + gamma``, ``T`` the tail mean of the drawn competitors,
    whose mean :math:`\kappa_\tau + b` comes from :func:`tail_mean_bias`):
    :math:`(\kappa - \eta_1)_+^2`, :math:`(\kappa - \eta_1)_+`,
    :math:`1\{\eta_1 < \kappa\}`, ``T``, :math:`(\kappa - \eta_1)_+ (T - \mathbb E T)`,
    :math:`1\{\eta_1<\kappa\}(T - \mathbb E T)`.
    The standard error of the capacity is the delta method on ``E[V]``.

    At :math:`k = 1` (:math:`\tau \le 1/(p-1)`) the criterion is top-1 and the value is
    :func:`replica.alpha_c_finite` divided by :math:`\ln p`; at :math:`\tau = 1` it is
    :math:`1/\Gamma(\gamma / \sqrt{1 + 1/(p-1)})` exactly (2 at zero margin).

    References
    ----------
    arXiv:2605.05189 (listwise retrieval, TAM criterion);
    docs/listwise.md#replica-symmetric-capacity

    Examples
    --------
    >>> print(np.round(tam_capacity([0.01, 0.05, 0.2, 0.5, 1.0]), 5))
    [0.12342 0.19048 0.34129 0.65771 2.     ]
    >>> est = tam_capacity(1.0, 50, samples=4000, rng=0)
    >>> print(f"{est.value:.4f} +- {est.stderr:.4f}")
    2.0001 +- 0.0013
    """
    tau, margin = _check_tau_margin(tau, margin)
    kt = np.asarray(gaussian_tail_mean(tau))
    limit = _out(1.0 / np.asarray(gardner_energy(kt + margin)))
    if p is None:
        return limit
    p = check_int("p", p, low=2, high=10**15)
    samples = check_int("samples", samples, low=2)
    rng = check_rng(rng)
    check_mc_size(tau, p, samples)
    taus = np.atleast_1d(np.asarray(tau, dtype=float))
    ks = [float(v) for v in np.maximum(taus * (p - 1), 1.0)]
    V, T, E1, used = _sample_v(p, ks, margin, samples, rng)
    m = p - 1
    ev = np.empty(len(ks))
    se = np.empty(len(ks))
    ratio = np.ones(len(ks))
    for i, k in enumerate(ks):
        if not control_variates:
            ev[i] = V[i].mean()
            se[i] = V[i].std(ddof=1) / math.sqrt(samples)
            continue
        kap_t = float(gaussian_tail_mean(k / m))       # k/m = tau, or 1/m below one competitor
        ET = kap_t + tail_mean_bias(m, k)
        kk = kap_t + margin
        h = np.maximum(kk - E1, 0.0)
        ind = (E1 < kk).astype(float)
        dT = T[i] - ET
        Phi_k = float(ndtr(kk))
        F = np.column_stack([h * h - float(gardner_energy(kk)),
                             h - (kk * Phi_k + float(_phi(kk))),
                             ind - Phi_k, dT, h * dT, ind * dT])
        ev[i], se[i], ratio[i] = cv_mean(V[i], F)
    val = 1.0 / (2.0 * ev)
    err = se / (2.0 * ev * ev)
    scalar = np.ndim(tau) == 0
    pick = (lambda x: float(x[0])) if scalar else (lambda x: x)
    return Estimate(pick(val), pick(err), samples, {
        "p": p, "k": pick(np.asarray(ks)), "margin": margin, "E_V": pick(ev), "E_V_stderr": pick(se),
        "limit": limit, "max_order_stats": int(used.max()),
        "cv_variance_ratio": pick(ratio)})


@fill_doc
def tam_capacity_expansion(tau, p, *, margin=0.0):
    r"""Return the finite-``p`` TAM capacity to second order in ``1/k``, without sampling.

    Parameters
    ----------
    %(tau_fractions)s
    p : int
        Number of candidates per fact, ``2 <= p <= 1e15``.
    %(tam_margin)s

    Returns
    -------
    float or ndarray
        :math:`(1 + \omega_k) / [(1 + v)\, \Gamma((\kappa_\tau + \gamma + b)/\sqrt{1 + v})]`
        with ``k = tail_size(tau, p)``, :math:`\omega_k = (J + f^2)/k^2`
        (``J = ceil(k) - 1``, ``f = k - J``; ``1/k`` for integer ``k``),
        ``b`` = :func:`tail_mean_bias` and
        :math:`v = \operatorname{Var}((Z - z_\tau)_+)/(\tau^2 (p-1))`.

    %(raises_range)s

    See Also
    --------
    replica.tam_finite_p_coefficient : The first-order coefficient :math:`C(\tau)`.
    replica.tam_capacity : The Monte Carlo value it approximates.

    Notes
    -----
    The projection onto the half-space :math:`\{\lambda_1 - w \cdot \lambda \ge \gamma\}`,
    :math:`w` the tail weights of the unperturbed competitors, contains the TAM set,
    so :math:`V \ge \tfrac12 (\gamma - \eta_1 + T_k)_+^2/(1 + \omega_k)` for every
    sample; the two differ only when a pushed competitor crosses an unpushed
    one, a correction of relative order :math:`k^{-2}`.  Treating the tail mean
    :math:`T_k` as Gaussian with mean :math:`\kappa_\tau + b` and its asymptotic variance
    :math:`v` gives the formula (the remainders are :math:`O(k^{-2})`:
    docs/listwise.md#finite-p-corrections).  Accurate for :math:`k \gtrsim 20`; for
    small :math:`k` use :func:`tam_capacity`.

    %(refs_listwise_finite_p)s

    Examples
    --------
    >>> print(np.round(tam_capacity_expansion([0.05, 0.2, 0.5], 1000), 4))
    [0.1948 0.3432 0.6591]
    """
    tau, margin = _check_tau_margin(tau, margin)
    p = check_int("p", p, low=2, high=10**15)
    m = p - 1
    taus = np.atleast_1d(np.asarray(tau, dtype=float))
    out = np.empty(taus.shape)
    for i, t in enumerate(taus):
        k = max(t * m, 1.0)
        te = k / m                       # effective tail fraction (1/m below one competitor)
        J = math.ceil(k) - 1
        f = k - J
        omega = (J + f * f) / (k * k)
        if te >= 1.0:
            kt, b, s2 = 0.0, 0.0, 1.0
        else:
            z = float(-ndtri(te))
            ph = float(_phi(z))
            kt = ph / te
            b = tail_mean_bias(m, k)
            ex = ph - z * te
            s2 = (1.0 + z * z) * te - z * ph - ex * ex
        v = s2 / (te * te * m)
        out[i] = (1.0 + omega) / ((1.0 + v) * float(gardner_energy((kt + margin + b) / math.sqrt(1.0 + v))))
    return _out(out.reshape(np.shape(tau)))


# ---------------------------------------------------------------------------
# large-p replica-symmetric free entropy (Gardner's, at margin kappa_tau + gamma)
# ---------------------------------------------------------------------------
@fill_doc
def tam_free_entropy(q, alpha, tau, *, margin=0.0):
    r"""Compute the large-``p`` RS free entropy of the TAM volume, :math:`\Phi(q; \alpha)`.

    Parameters
    ----------
    q : float or array_like
        Replica overlap, ``0 <= q < 1``.
    alpha : float
        Load ``n / d^2``, ``alpha >= 0``.
    %(tau_fraction)s
    %(tam_margin)s

    Returns
    -------
    float or ndarray
        :math:`\tfrac12\ln(1-q) + \tfrac{q}{2(1-q)} + \alpha \int D t\,
        \ln \Phi\bigl((\sqrt q\, t - \kappa)/\sqrt{1-q}\bigr)`,
        :math:`\kappa = \kappa_\tau + \gamma`.

    %(raises_range)s

    See Also
    --------
    replica.tam_capacity : The capacity where this free entropy diverges.
    replica.free_entropy : The top-1 replica-symmetric free entropy.

    Notes
    -----
    At large :math:`p` the tail mean of the competitors is the constant
    :math:`\kappa_\tau` in every replica, so only the correct score is constrained
    (docs/listwise.md#large-p-limit).  As ``q -> 1``,
    :math:`(1-q)\,\Phi \to \tfrac12 - \tfrac{\alpha}{2}\Gamma(\kappa)`, which
    vanishes at the capacity.  The ``t`` integral uses Gauss-Legendre rules
    (64 nodes) on pieces cut at :math:`0, \pm 6, \pm 12`, at
    :math:`t_0 = \kappa/\sqrt{q}` and at :math:`t_0 \pm 5 \sqrt{(1-q)/q}`,
    :math:`t_0 \pm 40 \sqrt{(1-q)/q}`, over :math:`[-40, 40]`.

    %(refs_listwise_large_p)s

    Examples
    --------
    >>> print(f"{tam_free_entropy(0.0, 1.0, 1.0):.10f} {math.log(0.5):.10f}")
    -0.6931471806 -0.6931471806
    >>> print(np.round(tam_free_entropy([0.5, 0.9], 0.3, 0.2), 8))
    [-1.09814512 -1.58357805]
    """
    q = check_real("q", q, low=0, high=1, high_open=True)
    alpha = check_real("alpha", alpha, low=0, high=math.inf, high_open=True, allow_array=False)
    tau = check_real("tau", tau, low=0, high=1, low_open=True, allow_array=False)
    margin = check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)
    kap = float(gaussian_tail_mean(tau)) + margin
    qq = np.atleast_1d(np.asarray(q, dtype=float))
    x, w = gauss_legendre(64)
    vals = np.empty(qq.shape)
    for i, qi in enumerate(qq):
        if qi == 0.0:
            vals[i] = float(log_ndtr(-kap))
            continue
        sq, sr = math.sqrt(qi), math.sqrt(1.0 - qi)
        t0 = kap / sq
        wdt = 40.0 * sr / sq
        near = (t0 - wdt, t0 - wdt / 8, t0, t0 + wdt / 8, t0 + wdt)
        cuts = sorted({-40.0, -12.0, -6.0, 0.0, 6.0, 12.0, 40.0, *(c for c in near if -40.0 < c < 40.0)})
        tot = 0.0
        for a, b in zip(cuts[:-1], cuts[1:]):
            t = a + (b - a) * x
            tot += (b - a) * float(np.sum(w * _phi(t) * log_ndtr((sq * t - kap) / sr)))
        vals[i] = tot
    out = np.asarray(entropic_term(qq)) + alpha * vals
    return _out(out.reshape(np.shape(q)))


# ---------------------------------------------------------------------------
# laws of the scores at capacity
# ---------------------------------------------------------------------------
@fill_doc
class CensoredNormal:
    r"""Law of :math:`\max(\mathrm{loc} + Z, \mathrm{level})`, :math:`Z \sim N(0, 1)`: a normal whose lower part is pinned at ``level``.

    An atom of mass :math:`\Phi(\text{level} - \text{loc})` at ``level`` and the
    normal density above it; the methods follow ``scipy.stats`` (``cdf``,
    ``sf``, ``ppf``, ``mean``, ``var``, ``std``, ``rvs``).

    Parameters
    ----------
    loc : float
        Mean of the uncensored normal.
    level : float
        Censoring level.

    See Also
    --------
    replica.tam_score_laws : Returns the laws of the scores as censored normals.
    scipy.stats.norm : The uncensored law.

    %(refs_listwise_score_laws)s

    Examples
    --------
    >>> law = CensoredNormal(0.0, 1.0)
    >>> print(round(law.atom, 6), round(law.mean(), 6), round(law.cdf(0.99), 6))
    0.841345 1.083315 0.0
    """

    def __init__(self, loc, level):
        self.loc = check_real("loc", loc, allow_array=False)
        self.level = check_real("level", level, allow_array=False)

    def _split(self, x, below, sign):
        """``below`` under ``level``, ``Phi(sign (x - loc))`` from ``level`` on."""
        x = np.asarray(x, dtype=float)
        return _out(np.where(x < self.level, below, ndtr(sign * (x - self.loc))))

    @property
    def atom(self):
        r"""Mass pinned at ``level``, :math:`\Phi(\mathrm{level} - \mathrm{loc})`.

        Returns
        -------
        float
            The probability of the atom.
        """
        return float(ndtr(self.level - self.loc))

    @fill_doc
    def cdf(self, x):
        r"""Evaluate the distribution function.

        %(points_params)s

        Returns
        -------
        float or ndarray
            :math:`P(X \le x)`: 0 below ``level``, :math:`\Phi(x - \mathrm{loc})` from ``level`` on.
        """
        return self._split(x, 0.0, 1.0)

    @fill_doc
    def sf(self, x):
        r"""Evaluate the survival function ``1 - cdf``.

        %(points_params)s

        Returns
        -------
        float or ndarray
            :math:`P(X > x)`.
        """
        return self._split(x, 1.0, -1.0)

    def ppf(self, u):
        r"""Evaluate the quantile function.

        Parameters
        ----------
        u : float or array_like
            Probabilities in ``[0, 1]``.

        Returns
        -------
        float or ndarray
            ``level`` for :math:`u \le` ``atom``, else :math:`\mathrm{loc} + \Phi^{-1}(u)`.
        """
        u = check_real("u", u, low=0, high=1)
        u = np.asarray(u, dtype=float)
        return _out(np.where(u <= self.atom, self.level, self.loc + ndtri(u)))

    def mean(self):
        r"""Return the mean :math:`\mathrm{level} + \delta \Phi(\delta) + \varphi(\delta)`, :math:`\delta = \mathrm{loc} - \mathrm{level}`.

        Returns
        -------
        float
            The mean.
        """
        d = self.loc - self.level
        return float(self.level + d * ndtr(d) + _phi(d))

    def var(self):
        r"""Return the variance :math:`\Gamma(\delta) - (\delta \Phi(\delta) + \varphi(\delta))^2`.

        Returns
        -------
        float
            The variance (:math:`X - \mathrm{level} = (\delta + Z)_+`).
        """
        d = self.loc - self.level
        m1 = d * ndtr(d) + _phi(d)
        return float(gardner_energy(d) - m1 * m1)

    def std(self):
        """Return the standard deviation.

        Returns
        -------
        float
            ``sqrt(var())``.
        """
        return math.sqrt(self.var())

    @fill_doc
    def rvs(self, size=None, rng=None):
        r"""Draw random variates.

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape (default: one float).
        %(randomness_rng)s

        Returns
        -------
        float or ndarray
            Draws of :math:`\max(\mathrm{loc} + Z, \mathrm{level})`.
        """
        g = check_rng(rng)
        return _out(np.maximum(self.loc + g.standard_normal(size), self.level))

    def __repr__(self):
        return f"CensoredNormal(loc={self.loc!r}, level={self.level!r})"


@dataclass(frozen=True)
@fill_doc
class TamLaws(Result):
    r"""Large-``p`` laws of one fact's scores at the TAM capacity (competitor-score units).

    Parameters
    ----------
    tau : float
        Tail fraction.
    margin : float
        Margin ``gamma``.
    tail_mean : float
        The tail mean of the competitors, :math:`\kappa_\tau` (deterministic).
    correct : CensoredNormal
        Correct score, :math:`\max(\eta_1, \kappa_\tau + \gamma)`.
    tam_margin : CensoredNormal
        Correct score minus tail mean, :math:`\max(\eta_1 - \kappa_\tau, \gamma)`.
    competitor : scipy.stats.rv_frozen
        One competitor score, standard normal (each moves by :math:`O(1/k)`).
    pinned : float
        Fraction of facts whose TAM margin is exactly :math:`\gamma`,
        :math:`\Phi(\kappa_\tau + \gamma)`.

    See Also
    --------
    replica.tam_score_laws : Returns this record (its Examples show one).
    replica.tam_scores : Samples of the same scores at finite ``p``.

    %(refs_listwise_score_laws)s

    Examples
    --------
    >>> laws = tam_score_laws(0.05)
    >>> print(type(laws).__name__, f"{laws.tail_mean:.6f} {laws.pinned:.6f}")
    TamLaws 2.062713 0.980430
    """

    tau: float
    margin: float
    tail_mean: float
    correct: CensoredNormal
    tam_margin: CensoredNormal
    competitor: object
    pinned: float

    def percentile(self, u):
        r"""Return the law of the correct score's percentile among the competitors, :math:`\Phi(\mathrm{correct})`.

        Parameters
        ----------
        u : float or array_like
            Percentile levels in ``[0, 1]``.

        Returns
        -------
        float or ndarray
            :math:`P(\Phi(\mathrm{correct}) \le u)`: 0 below :math:`\Phi(\kappa_\tau + \gamma)`, then
            :math:`u` (the percentile of an unconstrained fact is uniform).
        """
        u = check_real("u", u, low=0, high=1)
        u = np.asarray(u, dtype=float)
        return _out(np.where(u < self.pinned, 0.0, u))


@fill_doc
def tam_score_laws(tau, *, margin=0.0):
    r"""Return the large-``p`` laws of the correct score, the tail mean and the margin at capacity.

    Parameters
    ----------
    %(tau_fraction)s
    %(tam_margin)s

    Returns
    -------
    TamLaws
        ``correct`` = law of :math:`\max(\eta_1, \kappa_\tau + \gamma)`,
        ``tam_margin`` = law of :math:`\max(\eta_1 - \kappa_\tau, \gamma)`,
        ``tail_mean`` = :math:`\kappa_\tau`, ``competitor`` = N(0, 1),
        ``pinned`` = :math:`\Phi(\kappa_\tau + \gamma)`.

    Raises
    ------
    ValueError
        If ``tau`` or ``margin`` is out of range.

    See Also
    --------
    replica.listwise.TamLaws : The record returned.
    replica.listwise.CensoredNormal : The law of the correct score and of the margin.
    replica.tam_scores : Finite-``p`` samples of the same scores.

    Notes
    -----
    At the capacity the solution volume shrinks to one memory and each fact's
    scores are the projection of the Gaussian vector ``eta`` onto the TAM set
    (docs/listwise.md#laws-of-the-scores-at-capacity).  At large ``p`` the
    projection only raises the correct score to the level :math:`\kappa_\tau + \gamma`
    when it is below.  Finite-``p`` laws: :func:`tam_scores`.

    %(refs_listwise_paper_score_laws)s

    Examples
    --------
    >>> laws = tam_score_laws(0.05)
    >>> print(round(laws.tail_mean, 6), round(laws.pinned, 6), round(laws.correct.mean(), 6))
    2.062713 0.98043 2.069879
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True, allow_array=False)
    margin = check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)
    kt = float(gaussian_tail_mean(tau))
    return TamLaws(tau=tau, margin=margin, tail_mean=kt,
                   correct=CensoredNormal(0.0, kt + margin),
                   tam_margin=CensoredNormal(-kt, margin),
                   competitor=stats.norm(), pinned=float(ndtr(kt + margin)))


_MAX_SCORES = 2 * 10**7


@fill_doc
def tam_scores(tau, p, *, margin=0.0, samples=2000, rng=None, normalise=True):
    r"""Sample the per-fact scores of the TAM capacity-point memory at finite ``p``.

    Parameters
    ----------
    %(tau_fraction)s
    p : int
        Number of candidates per fact, ``p >= 3`` and ``samples * p <= 2e7``
        (all ``p`` scores are drawn, as for a trained memory).
    %(tam_margin)s
    samples : int
        Independent facts (rows), ``>= 2``.
    %(randomness_rng)s
    normalise : bool
        Divide each row by the sample standard deviation (``ddof=1``) of its
        ``p - 1`` competitor scores after the projection, as done for trained
        memories; ``False`` keeps the units of the unperturbed competitors.

    Returns
    -------
    dict of ndarray
        ``correct``, ``tail_mean`` (of the projected competitors), ``tam_margin``
        (``correct - tail_mean``: ``margin`` in the rows where the constraint
        binds, before normalisation), ``row_max`` (largest projected
        competitor), ``rank`` (int: number of competitors strictly above the
        correct score; competitors projected onto it are ties of the exact
        minimiser and do not count), ``active`` (bool: the constraint binds), ``V``, ``k``
        (the tail size, a float).

    %(raises_range)s

    See Also
    --------
    replica.tam_score_laws : Their large-``p`` laws.
    replica.pinned_scores.pinned_scores : The top-1 counterpart.
    replica.listwise.tam_projection : The projection that moves the scores.

    Notes
    -----
    The minimiser of :func:`tam_projection` for each row of i.i.d. N(0, 1)
    scores (docs/listwise.md#laws-of-the-scores-at-capacity).  Rank 0 means
    the correct candidate is top-1; TAM guarantees rank ``< k``.

    %(refs_listwise_paper_score_laws)s

    Examples
    --------
    >>> s = tam_scores(0.05, 1000, samples=400, rng=0, normalise=False)
    >>> print(s["k"], s["rank"].max(), f"{s['active'].mean():.4f}", np.abs(s["tam_margin"][s["active"]]).max())
    49.95 26 0.9875 0.0
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True, allow_array=False)
    p = check_int("p", p, low=3)
    margin = check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)
    samples = check_int("samples", samples, low=2)
    if samples * p > _MAX_SCORES:
        raise ValueError(f"samples * p must be <= {_MAX_SCORES:.0e}, got {samples} * {p} = {samples * p}")
    rng = check_rng(rng)
    m = p - 1
    k = max(tau * m, 1.0)
    eta1 = rng.standard_normal(samples)
    comp = -np.sort(-rng.standard_normal((samples, m)), axis=1)
    r = tam_projection(comp, eta1, k, margin=margin, complete=True)
    act = r["mu"] > 0
    after = np.where(act[:, None],
                     np.maximum(np.minimum(comp, r["c"][:, None]), comp - r["y"][:, None]), comp)
    correct = eta1 + r["mu"]
    tail = np.where(act, correct - margin, _tail_mean(comp, k))
    scale = after.std(axis=1, ddof=1) if normalise else np.ones(samples)
    # competitors strictly above the correct score; those projected onto it (a tie in
    # exact arithmetic, the boundary of the closed TAM set) do not count
    rank = (after > correct[:, None] + 1e-9 * (1.0 + np.abs(correct[:, None]))).sum(axis=1)
    return {"correct": correct / scale, "tail_mean": tail / scale,
            "tam_margin": np.where(act, margin, correct - tail) / scale,
            "row_max": after[:, 0] / scale, "rank": rank, "active": act, "V": r["V"], "k": k}
