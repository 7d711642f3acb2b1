"""Energetic term ``G_p(t)`` of the replica-symmetric free entropy (docs/theory_full_rank.md#computing-the-energy-term)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.special import log_ndtr, ndtri

from hcizz.checks import check_int, check_memory, check_real, check_rng
from hcizz.estimate import Estimate
from hcizz.results import Result

from ._control_variates import cv_mean, hermite_features
from ._docparams import fill_doc
from ._logconcave import log_integral_concave, log_neg_log_ndtr

__all__ = ["energy_G", "energy_G_limit", "log_f_p", "EtaSample", "sample_eta", "cv_features"]

#: Default mean number of competitors sampled exactly (above the bulk level c0).
N_TOP = 48
_CHUNK = 192
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@fill_doc
def energy_G_limit(t):
    r"""Return the large-``p`` limit :math:`G(t) = -1/(1-t)` of the energetic term.

    Parameters
    ----------
    t : float or array_like
        Overlap, :math:`0 \le t < 1`.

    Returns
    -------
    float or ndarray
        :math:`-1 / (1 - t)`.

    See Also
    --------
    replica.energy_G : The finite-``p`` term :math:`G_p(t)`, which tends to this limit.
    replica.free_entropy : The free entropy this term enters.

    %(refs_paper_large_p)s

    Examples
    --------
    >>> print(energy_G_limit([0.0, 0.5, 0.9]))
    [ -1.  -2. -10.]
    """
    t = check_real("t", t, low=0, high=1, high_open=True)
    return -1.0 / (1.0 - t)


@dataclass(frozen=True)
@fill_doc
class EtaSample(Result):
    r"""A draw of the disorder :math:`\eta` in compressed form.

    Produced by :func:`sample_eta`: the competitors above the level :math:`c_0` are
    stored exactly, the others only by their count.

    Parameters
    ----------
    m : int
        Number of competitors, :math:`p - 1`.
    eta1 : ndarray, shape (S,)
        Level of the correct candidate.
    top : ndarray, shape (S, K)
        Competitor levels sampled exactly (padded entries are ``-inf``).
    mask : ndarray of bool, shape (S, K)
        True for real entries of ``top``.
    n_bulk : ndarray of int, shape (S,)
        Number of remaining competitors, i.i.d. :math:`N(0,1)` conditioned on :math:`< c_0`.
    c0 : float
        Bulk level (``+inf`` when every competitor is in ``top``).

    See Also
    --------
    replica.energy.sample_eta : Draw a sample (its Examples show one).
    replica.energy.log_f_p : Evaluate :math:`\ln f_p(t; \eta)` on a sample.

    %(refs_energy_term)s

    Examples
    --------
    >>> import numpy as np
    >>> eta = sample_eta(1000, 3, np.random.default_rng(0))
    >>> print(type(eta).__name__, eta.m, eta.top.shape, eta.n_bulk)
    EtaSample 999 (3, 61) [959 938 940]
    """

    m: int
    eta1: np.ndarray
    top: np.ndarray
    mask: np.ndarray
    n_bulk: np.ndarray
    c0: float


@fill_doc
def sample_eta(p, samples, rng, n_top=N_TOP):
    r"""Draw ``samples`` disorder vectors :math:`\eta` for ``p`` candidates.

    If :math:`p - 1 \le 4 n_{top}` every competitor is drawn.  Otherwise the level
    :math:`c_0 = \Phi^{-1}(1 - n_{top}/(p-1))` splits the competitors: their number
    above :math:`c_0` is :math:`\mathrm{Binomial}(p-1, n_{top}/(p-1))` and, given that
    number, they are i.i.d. normals conditioned on :math:`> c_0`, drawn exactly
    through their tail probability :math:`U n_{top}/(p-1)`; the others (the bulk) are
    i.i.d. conditioned on :math:`< c_0` and are integrated out (see :func:`log_f_p`).

    Parameters
    ----------
    %(p_unchecked)s
    samples : int
        Number of disorder vectors.
    %(generator)s
    n_top : int, optional
        Mean number of competitors drawn exactly above :math:`c_0` (default 48).

    Returns
    -------
    EtaSample
        The compressed draws.

    See Also
    --------
    replica.energy.EtaSample : The record returned.
    replica.energy.log_f_p : Evaluate :math:`\ln f_p(t; \eta)` on the draws.
    replica.energy_G : The mean of :math:`\ln f_p / \ln p` over such draws.

    %(refs_energy_term)s

    Examples
    --------
    >>> import numpy as np
    >>> eta = sample_eta(1000, 3, np.random.default_rng(0))
    >>> print(eta.m, f"{eta.c0:.4f}", eta.mask.sum(axis=1), eta.n_bulk)
    999 1.6641 [40 61 59] [959 938 940]
    """
    m = p - 1
    cols = m if m <= 4 * n_top else n_top          # a lower bound of the drawn columns per sample
    # eta_1, the counts and, per drawn column, a uniform, a normal (float64) and a mask byte
    check_memory(samples * (16.0 + 17.0 * cols),
                 f"disorder samples={samples} p={p} ({cols} drawn competitors per sample, float64)")
    eta1 = rng.standard_normal(samples)
    if m <= 4 * n_top:
        top = rng.standard_normal((samples, m))
        return EtaSample(m, eta1, top, np.ones_like(top, dtype=bool),
                         np.zeros(samples, dtype=np.int64), math.inf)
    q0 = n_top / m
    c0 = float(-ndtri(q0))
    count = rng.binomial(m, q0, size=samples)
    K = int(count.max()) if samples else 0
    # rng.random() lies on the grid k 2^-53, 0 included, and -ndtri(0) = inf: shift
    # to the cell midpoints (k + 1/2) 2^-53, in (0, 1), so every draw is finite
    u = rng.random((samples, K)) + 2.0 ** -54
    top = -ndtri(u * q0)                 # exact: N(0,1) conditioned on > c0
    mask = np.arange(K)[None, :] < count[:, None]
    top = np.where(mask, top, -np.inf)
    return EtaSample(m, eta1, top, mask, (m - count).astype(np.int64), c0)


class _Bulk:
    """Tabulated ``h(a) = E[ln Phi(a - beta Z) | Z < c0]`` and its second
    moment, as cubic splines of ``ln(-h)`` on a grid of ``a`` (step 0.05)."""

    def __init__(self, beta, c0, a_lo, a_hi, step=0.05, max_points=8000):
        self.beta, self.c0 = beta, c0
        self.a_lo = a_lo
        self.a_hi = a_hi
        # The range grows like beta = sqrt(t/(1-t)); so does the scale on which h
        # varies (h(a) = E ln Phi(a - beta Z), Z spread 1), except for an O(1)-wide
        # feature of amplitude O(phi(c0)/beta) in h'' at the truncation a ~ beta c0.
        # Capping the number of nodes (step 0.05 up to t ~ 0.9999) keeps the cost
        # bounded as t -> 1 (it grew like beta: 94 s at t = 1 - 1e-9, p = 1000).
        if (a_hi - a_lo) / step + 1 > max_points:
            a = np.linspace(a_lo, a_hi, max_points)        # ends exactly at a_hi
        else:
            a = np.arange(a_lo, a_hi + step, step)
        # In z the integrand falls off on the scale 1/(beta |a - beta z|) next to its
        # maximum; the bisection that brackets the mass must resolve that scale, or
        # every quadrature node misses the peak (ln of 0 = -inf for t -> 1).
        bisect_iter = 14 + max(0, math.ceil(math.log2(max(beta, 1.0) / 8.0)))
        logphic0 = float(log_ndtr(c0))
        res = []
        for power in (1.0, 2.0):
            def logf(z, idx, power=power):
                return (-0.5 * z * z - _LOG_SQRT_2PI
                        + power * log_neg_log_ndtr(a[idx, None] - beta * z))
            n = a.size
            res.append(log_integral_concave(logf, np.full(n, -12.0), np.full(n, c0),
                                            width=1.0, n_nodes=32, bisect_iter=bisect_iter)
                       - logphic0)
        self.a = a
        self.lh, self.ls2 = res
        self.spl = CubicSpline(a, self.lh)
        self.spl2 = CubicSpline(a, self.ls2)
        self.slope = float(self.spl(a_lo, 1))

    def log_neg_h(self, x):
        """``ln(-h(x))``; below the grid ``h`` is continued by its tangent at
        ``a_lo``, ``h(x) = h0 (1 + s (x - a_lo))`` with ``s = (ln(-h))'(a_lo)``
        (``h = -exp(ln(-h))`` so ``h' = h s``); ``h`` is concave, so the tangent
        overestimates it: those ``x`` carry no mass)."""
        x = np.minimum(x, self.a_hi)
        below = x < self.a_lo
        out = self.spl(np.maximum(x, self.a_lo))
        if np.any(below):
            h0 = -np.exp(self.lh[0])
            hx = h0 + (h0 * self.slope) * (x - self.a_lo)
            out = np.where(below, np.log(np.maximum(-hx, 1e-300)), out)
        return out

    def var(self, x):
        """Per-competitor variance of ``ln Phi(x - beta Z)`` given ``Z < c0``."""
        x = np.clip(x, self.a_lo, self.a_hi)
        return np.maximum(np.exp(self.spl2(x)) - np.exp(2.0 * self.spl(x)), 0.0)


@fill_doc
def cv_features(eta, p):
    r"""Return the zero-mean control variates of a disorder sample.

    The columns are :math:`\mathrm{He}_1(\eta_1), \dots, \mathrm{He}_4(\eta_1)`,
    :math:`M - E M`, :math:`M^2 - E M^2` and :math:`\eta_1 (M - E M)`, with :math:`M`
    the largest competitor (moments from :func:`replica.gaussian_max_moments`).
    With a bulk, :math:`M` lies in ``eta.top`` unless no competitor exceeds
    :math:`c_0` (probability about :math:`e^{-n_{top}}`, then :math:`c_0` is used: a
    negligible bias).

    Parameters
    ----------
    %(eta_sample)s
    p : int
        Number of candidates.

    Returns
    -------
    ndarray, shape (S, 7)
        One row of features per sample.

    See Also
    --------
    replica.energy_G : Regresses :math:`\ln f_p` on these features.
    replica.gaussian_max_moments : The moments of :math:`M` used to centre them.

    References
    ----------
    docs/theory_full_rank.md#control-variates

    Examples
    --------
    >>> import numpy as np
    >>> F = cv_features(sample_eta(1000, 3, np.random.default_rng(0)), 1000)
    >>> print(F.shape, F[0].round(4))
    (3, 7) [ 0.1257 -0.9842 -0.3752  2.9054  0.408   2.6874  0.0513]
    """
    from .gaussian_max import gaussian_max_moments

    M = np.max(np.where(eta.mask, eta.top, -np.inf), axis=1, initial=-np.inf)
    M = np.where(np.isfinite(M), M, eta.c0 if math.isfinite(eta.c0) else 0.0)
    mu1, mu2 = (0.0, 1.0) if p == 2 else gaussian_max_moments(p - 1)
    T = M - mu1
    return np.column_stack([hermite_features(eta.eta1, 4), T, M * M - mu2, eta.eta1 * T])


@fill_doc
def log_f_p(t, eta, *, bulk_error=False):
    r"""Compute :math:`\ln f_p(t; \eta)` for each disorder sample in ``eta``.

    :math:`f_p(t; \eta) = \int D\xi \prod_{\rho \ge 2} \Phi(\xi + \beta_t (\eta_1 - \eta_\rho))`,
    :math:`\beta_t = \sqrt{t/(1-t)}`.  Competitors in ``eta.top`` enter exactly; the
    ``n_bulk`` competitors below :math:`c_0` enter through their conditional mean
    :math:`n_{bulk}\, h(\xi + \beta \eta_1)` (see :func:`energy_G`, Notes).

    Parameters
    ----------
    t : float
        Overlap, :math:`0 \le t < 1` (not validated here).
    %(eta_sample)s
    bulk_error : bool, optional
        Also return the bound on the error of the bulk treatment.

    Returns
    -------
    logf : ndarray, shape (S,)
        :math:`\ln f_p(t; \eta_i)` per sample.
    bias_bound : ndarray, shape (S,)
        Only with ``bulk_error=True``: posterior mean over :math:`\xi` of
        :math:`n_{bulk} \mathrm{Var}[\ln \Phi(\xi + \beta(\eta_1 - Z)) \mid Z < c_0]`, the
        leading-order bound on the error of ``logf`` caused by the bulk treatment.

    See Also
    --------
    replica.energy.sample_eta : Draw the disorder samples.
    replica.energy_G : The mean :math:`E_\eta[\ln f_p] / \ln p`.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#computing-the-energy-term

    Examples
    --------
    At :math:`t = 0` every factor is :math:`\Phi(\xi)`, so :math:`f_p = 1/p`:

    >>> import numpy as np
    >>> eta = sample_eta(1000, 3, np.random.default_rng(0))
    >>> print(log_f_p(0.0, eta).round(4), log_f_p(0.5, eta).round(4))
    [-6.9078 -6.9078 -6.9078] [-10.8101 -12.2257  -8.9439]
    """
    beta = math.sqrt(t / (1.0 - t))
    S = eta.eta1.shape[0]
    m = eta.m
    use_bulk = math.isfinite(eta.c0)
    out = np.empty(S)
    err = np.zeros(S)
    top_max = np.where(eta.mask.any(axis=1), np.max(eta.top, axis=1, initial=-np.inf),
                       -np.inf)
    if use_bulk:
        top_max = np.maximum(top_max, eta.c0)
    xi_hi = np.maximum(beta * (top_max - eta.eta1), 0.0) + math.sqrt(2.0 * math.log(m + 1)) + 14.0
    bulk = None
    if use_bulk and beta > 0:
        a_lo = -11.0 - beta * (float(np.max(-eta.eta1, initial=0.0)) + 1.0)
        a_hi = beta * eta.c0 + 40.0
        bulk = _Bulk(beta, eta.c0, a_lo, a_hi)
    for s0 in range(0, S, _CHUNK):
        sl = slice(s0, min(S, s0 + _CHUNK))
        e1 = eta.eta1[sl]
        top = eta.top[sl]
        mask = eta.mask[sl]
        nb = eta.n_bulk[sl].astype(float)
        # drop padding columns that are empty in this chunk
        keep = mask.any(axis=0)
        top, mask = top[:, keep], mask[:, keep]
        gap = beta * (e1[:, None] - np.where(mask, top, 0.0))     # (s, K)

        def logf(x, idx, gap=gap, mask=mask, e1=e1, nb=nb):
            g = gap[idx]
            args = x[:, :, None] + g[:, None, :]
            terms = np.where(mask[idx][:, None, :], log_ndtr(args), 0.0).sum(axis=2)
            val = -0.5 * x * x - _LOG_SQRT_2PI + terms
            if use_bulk:
                if bulk is None:        # beta = 0: the bulk term is ln Phi(xi) exactly
                    val = val + nb[idx, None] * log_ndtr(x)
                else:
                    lh = bulk.log_neg_h(x + beta * e1[idx, None])
                    val = val - nb[idx, None] * np.exp(lh)
            return val

        extra = None
        if bulk_error and bulk is not None:
            def extra(x, idx, w, e1=e1, nb=nb):
                v = nb[idx, None] * bulk.var(x + beta * e1[idx, None])
                return (w * v).sum(axis=1)
        n = top.shape[0]
        res = log_integral_concave(logf, np.full(n, -10.0), xi_hi[sl], width=1.0,
                                   extra=extra)
        if extra is None:
            out[sl] = res
        else:
            out[sl], err[sl] = res
    if bulk_error:
        return out, err
    return out


@fill_doc
def energy_G(t, p=None, *, samples=400, rng=None, n_top=N_TOP, control_variates=True):
    r"""Estimate the energetic term :math:`G_p(t) = E_\eta[\ln f_p(t; \eta)] / \ln p` of the RS free entropy.

    Parameters
    ----------
    t : float or array_like
        Overlap, :math:`0 \le t < 1`.  For an array, the same disorder samples are
        used at every ``t`` (common random numbers: the result is a smooth
        function of ``t`` and differences between ``t`` values are precise).
    p : int, optional
        Number of candidates, :math:`2 \le p \le 10^9`.  ``None`` gives the large-``p``
        limit :math:`-1/(1-t)` (exact, standard error 0).
    %(eta_samples)s
    %(randomness_rng)s
    n_top : int
        Mean number of competitors sampled exactly above the bulk level.
    control_variates : bool
        Regress :math:`\ln f_p` on zero-mean control variates (:func:`cv_features`)
        to reduce the variance (default); ``False`` gives the plain sample mean.

    Returns
    -------
    Estimate
        ``value`` and ``stderr`` (arrays if ``t`` is an array);
        ``info["bulk_bias_bound"]``: bound on the bias caused by the bulk
        treatment (in units of :math:`G`), ``info["c0"]``, ``info["n_top"]``.

    See Also
    --------
    replica.energy_G_limit : The large-``p`` limit :math:`-1/(1-t)`.
    replica.energy.log_f_p : :math:`\ln f_p(t; \eta)` per disorder sample.
    replica.free_entropy : The RS free entropy built from this term.

    Notes
    -----
    For each :math:`\eta` the integral over :math:`\xi` is done in log space: the
    integrand :math:`\varphi(\xi) \prod_\rho \Phi(\xi + \beta_t(\eta_1 - \eta_\rho))` is
    log-concave with log-curvature :math:`\le -1`, so its mass lies within
    :math:`\pm 9` of its mode; the mode is found by golden-section search and the
    integral by Gauss-Legendre quadrature (24 nodes each side of the mode) between
    the points where the integrand has dropped by :math:`e^{-40}`.  ``log_ndtr`` keeps
    every factor finite for :math:`t` near 1.

    Large :math:`p`: the :math:`p - 1` competitors are split at the deterministic level
    :math:`c_0` with :math:`P(\eta > c_0) = n_{top}/(p-1)`.  The competitors above
    :math:`c_0` (Binomial count, mean :math:`n_{top}`) are drawn exactly
    (:func:`sample_eta`).  A deterministic level is used rather than the
    :math:`K`-th order statistic (Renyi sampling as in
    :class:`replica.order_stats.TopNormals`): then the law of the bulk,
    :math:`N(0,1)` conditioned on :math:`< c_0`, is the same for every sample and its
    contribution is tabulated once per call; the split is still exact in
    distribution.  The :math:`n_b` competitors below :math:`c_0` are i.i.d. given
    :math:`n_b` and enter the log of the integrand through the sum
    :math:`B(\xi) = \sum_{bulk} \ln \Phi(\xi + \beta(\eta_1 - \eta_\rho))`, which is
    replaced by its conditional mean :math:`n_b h(\xi + \beta \eta_1)`,

    .. math::

        h(a) = E[\ln \Phi(a - \beta Z) \mid Z < c_0]

    (tabulated once per call by the same log-concave quadrature over :math:`Z`,
    spline of :math:`\ln(-h)` with step 0.05).  Writing
    :math:`e^{B} = e^{E B}(1 + \delta)`, the error of :math:`\ln f` is
    :math:`E \ln(1 + \langle\delta\rangle)` where :math:`\langle\cdot\rangle` is the
    posterior average over :math:`\xi`; to second order it lies between :math:`-v/2`
    and :math:`v/2` with
    :math:`v = \langle n_b \mathrm{Var}[\ln \Phi(\xi + \beta(\eta_1 - Z)) \mid Z < c_0]\rangle`.
    Since every bulk competitor lies below :math:`c_0`, :math:`v` is small when the
    posterior puts the correct candidate above :math:`c_0`; the routine returns
    :math:`\overline{v}/\ln p` as ``info["bulk_bias_bound"]`` and the tests check the
    bulk treatment against exact sampling of all competitors.

    Variance reduction: :math:`\ln f_p` depends mostly on :math:`\eta_1` and on the
    largest competitor :math:`M`; the mean is estimated by regression on
    :math:`\mathrm{He}_1, \dots, \mathrm{He}_4(\eta_1)`, :math:`M - E M`,
    :math:`M^2 - E M^2`, :math:`\eta_1 (M - E M)` (all exactly mean 0;
    :func:`cv_features`).

    References
    ----------
    arXiv:2605.10795 (the replica-symmetric free entropy);
    docs/theory_full_rank.md#computing-the-energy-term

    Examples
    --------
    >>> print(energy_G(0.5).value)
    -2.0
    >>> print(round(energy_G(0.0, 1000, samples=20, rng=0).value, 8))
    -1.0
    >>> est = energy_G(0.5, 1000, samples=200, rng=0)
    >>> print(f"{est.value:.3f} +- {est.stderr:.3f}")
    -1.720 +- 0.003
    """
    t = check_real("t", t, low=0, high=1, high_open=True)
    if p is None:
        return Estimate(-1.0 / (1.0 - t), 0.0 * np.asarray(t) if np.ndim(t) else 0.0,
                        info={"method": "limit -1/(1-t)"})
    p = check_int("p", p, low=2, high=10**9)
    samples = check_int("samples", samples, low=2)
    n_top = check_int("n_top", n_top, low=4)
    rng = check_rng(rng)
    eta = sample_eta(p, samples, rng, n_top)
    ts = np.atleast_1d(t)
    vals, errs, bias = [], [], []
    lp = math.log(p)
    F = cv_features(eta, p)
    for ti in ts:
        lf, b = log_f_p(float(ti), eta, bulk_error=True)
        if control_variates:
            mean, se, _ = cv_mean(lf, F)
        else:
            mean, se = lf.mean(), lf.std(ddof=1) / math.sqrt(samples)
        vals.append(mean / lp)
        errs.append(se / lp)
        bias.append(b.mean() / lp)
    info = {"c0": eta.c0, "n_top": n_top, "p": p, "bulk_bias_bound": bias if np.ndim(t) else bias[0],
            "method": "MC over eta, log-concave quadrature over xi"}
    if np.ndim(t) == 0:
        return Estimate(float(vals[0]), float(errs[0]), samples, info)
    return Estimate(np.array(vals), np.array(errs), samples, info)
