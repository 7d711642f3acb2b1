"""Finite-``p`` replica-symmetric capacity ``alpha_c(p) = ln p / (2 E[V_p])`` (docs/theory_full_rank.md#finite-p-capacity),
and its rank-constrained form ``alpha_c(kappa) ln p / E[V_p]``."""
from __future__ import annotations

import math

import numpy as np

from hcizz.checks import check_int, check_memory, check_real, check_rng
from hcizz.estimate import Estimate

from ._control_variates import cv_mean, hermite_features
from .gaussian_max import gaussian_max_moments
from .order_stats import TopNormals
from .rank_capacity import alpha_c

__all__ = ["alpha_c_finite", "v_p", "v_p_from_gaps", "sample_v_p", "alpha_c_margin_limit", "ALPHA_C_LIMIT",
           "MARGIN_MAX"]

#: Large-``p`` limit of the capacity (docs/theory_full_rank.md).
ALPHA_C_LIMIT = 0.5
#: Largest margin accepted, in competitor-score units (docs/theory_full_rank.md#capacity-at-a-margin):
#: a margin this large already makes the correct score an outlier at any ``p`` up to 1e15,
#: and larger ones only enlarge the set of competitors the projection involves.
MARGIN_MAX = 20.0
_BLOCK = 1 << 15


def v_p_from_gaps(gaps, *, complete=True):
    """Compute ``V = min_{x>=0} x^2/2 + 1/2 sum_j (g_j - x)_+^2`` for sorted gaps.

    Parameters
    ----------
    gaps : ndarray, shape (S, K)
        ``g_j = eta_(j) - eta_1`` in descending order along axis 1 (the ``K``
        largest competitors).
    complete : bool
        Whether ``gaps`` holds all competitors (then any active set is complete).

    Returns
    -------
    V : ndarray, shape (S,)
        The minimum, per row.
    k_active : ndarray of int, shape (S,)
        Size of the active set ``{j : g_j > x*}``.
    ok : ndarray of bool, shape (S,)
        True where the active set is provably complete: ``k_active < K`` (the
        first inactive gap is among the sampled ones, and every unsampled gap
        is smaller) or ``complete``.

    Notes
    -----
    With ``x_k = (g_1 + ... + g_k)/(k+1)`` (``x_0 = 0``), ``x_k`` is a weighted
    average of ``x_{k-1}`` and ``g_k``; so the condition ``g_k > x_{k-1}`` holds
    for a prefix ``k = 1..k*`` and then fails for good.  Stationarity
    ``x (1 + k) = sum of the k active gaps`` with active set ``{g > x}`` is
    satisfied by ``x* = x_{k*}``, the unique minimiser of the strictly convex
    objective.

    References
    ----------
    docs/theory_full_rank.md#computing-v-for-one-sample
    """
    g = np.asarray(gaps, dtype=float)
    S, K = g.shape
    cs = np.cumsum(g, axis=1)
    kk = np.arange(1, K + 1, dtype=float)
    x = cs / (kk + 1.0)
    xprev = np.concatenate([np.zeros((S, 1)), x[:, :-1]], axis=1)
    k_act = (g > xprev).sum(axis=1)
    xs = np.where(k_act > 0, x[np.arange(S), np.maximum(k_act - 1, 0)], 0.0)
    act = np.arange(K)[None, :] < k_act[:, None]
    V = 0.5 * xs ** 2 + 0.5 * np.where(act, (g - xs[:, None]) ** 2, 0.0).sum(axis=1)
    ok = (k_act < K) | complete
    return V, k_act, ok


def sample_v_p(p, samples, rng, k0=None, margin=0.0):
    """Draw ``samples`` values of ``V_p(eta)`` exactly (top order statistics only).

    Parameters
    ----------
    p : int
        Number of candidates (``p - 1`` competitors); not validated here.
    samples : int
        Number of disorder samples.
    rng : numpy.random.Generator
        Generator (already constructed).
    k0 : int, optional
        Number of order statistics drawn first (default
        ``min(p - 1, 8 + 2 ceil(ln p))``); doubled where the active set fills them.
    margin : float, optional
        Margin ``gamma >= 0`` (not validated here): the gaps become
        ``eta_(j) - eta_1 + gamma`` (docs/theory_full_rank.md#capacity-at-a-margin).

    Returns
    -------
    V, k_active, K_used, eta1, top1 : ndarray, shape (samples,)
        ``V_p``, size of the active set, number of order statistics drawn, the
        correct candidate's level ``eta_1`` and the largest competitor.

    References
    ----------
    docs/theory_full_rank.md#order-statistics-method
    """
    m = p - 1
    if k0 is None:
        k0 = int(min(m, 8 + 2 * math.ceil(math.log(p))))
    V = np.empty(samples)
    kact = np.empty(samples, dtype=np.int64)
    kused = np.empty(samples, dtype=np.int64)
    E1 = np.empty(samples)
    T1 = np.empty(samples)
    for s0 in range(0, samples, _BLOCK):
        n = min(_BLOCK, samples - s0)
        eta1 = rng.standard_normal(n)
        top = TopNormals(m, n, rng)
        rows = np.arange(n)
        levels = top.extend(rows, min(k0, m))
        E1[s0:s0 + n] = eta1
        T1[s0:s0 + n] = levels[:, 0]
        pending = rows
        while True:
            Ks = levels.shape[1]
            gaps = levels - eta1[pending, None]
            if margin:                   # margin 0 keeps the historical arithmetic exactly
                gaps = gaps + margin
            v, ka, ok = v_p_from_gaps(gaps, complete=(Ks == m))
            done = ok
            V[s0 + pending[done]] = v[done]
            kact[s0 + pending[done]] = ka[done]
            kused[s0 + pending[done]] = Ks
            if np.all(done):
                break
            # extend the incomplete rows (their active set reaches the last sample)
            levels = levels[~done]
            pending = pending[~done]
            more = min(Ks, m - Ks)
            levels = np.concatenate([levels, top.extend(pending, more)], axis=1)
    return V, kact, kused, E1, T1


def v_p(p, *, margin=0.0, samples=20_000, rng=None):
    """Estimate ``E[V_p]`` by Monte Carlo with control variates; see :func:`alpha_c_finite`.

    Parameters
    ----------
    p : int
        Number of candidates, ``2 <= p <= 1e15``.
    margin : float, optional
        Margin ``0 <= gamma <= 20`` in competitor-score units (default 0).
    samples : int, optional
        Monte Carlo samples of ``eta`` (default 20000).
    rng : None, int, SeedSequence or Generator, optional
        Randomness.

    Returns
    -------
    Estimate
        ``E[V_p]`` with its standard error; ``info`` holds the active-set sizes
        and the control-variate variance ratio.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#finite-p-capacity
    """
    p = check_int("p", p, low=2, high=10**15)
    margin = _check_margin(margin)
    samples = check_int("samples", samples, low=2)
    rng = check_rng(rng)
    ev, se_v, info = _mean_v(p, samples, rng, True, margin)
    return Estimate(ev, se_v, samples, info)


def _check_margin(margin):
    return check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)


def alpha_c_margin_limit(g):
    r"""Return the large-``p`` top-1 capacity ``1 / (2 (1 + g)^2)`` at a margin ``g sqrt(2 ln p)``.

    Parameters
    ----------
    g : float or array_like
        Margin in units of the extreme-value scale ``sqrt(2 ln p)``, ``g >= 0``.

    Returns
    -------
    float or ndarray
        :math:`\lim_{p\to\infty} \alpha_c(p; \gamma = g\sqrt{2\ln p}) = 1/(2(1+g)^2)`.

    Raises
    ------
    ValueError
        If ``g`` is negative or NaN.

    Notes
    -----
    The counting argument of docs/theory_full_rank.md#large-p-limit with the
    constraint raised by ``gamma``: the correct score must clear every
    competitor level by ``gamma``, so ``s_min = (1 + g)/sqrt(1-t)`` and
    ``G(t) = -(1+g)^2/(1-t)`` (docs/theory_full_rank.md#capacity-at-a-margin).
    A fixed margin (``g -> 0``) leaves the limit at 1/2.

    References
    ----------
    docs/theory_full_rank.md#capacity-at-a-margin

    Examples
    --------
    >>> print(alpha_c_margin_limit([0.0, 0.5, 1.0]))
    [0.5        0.22222222 0.125     ]
    """
    g = check_real("g", g, low=0, high=math.inf, high_open=True)
    out = 0.5 / np.square(1.0 + np.asarray(g, dtype=float))
    return float(out) if np.ndim(out) == 0 else out


def _mean_v(p, samples, rng, control_variates, margin=0.0):
    k0 = 8 + 2 * math.ceil(math.log(p))      # order statistics drawn per sample at first
    # V, eta_1, the top competitor and the active counts, the K0 drawn values and 6 control variates
    check_memory(8.0 * samples * (10 + k0), f"V_p samples={samples} p={p} ({k0} order statistics per "
                 "sample, float64)")
    V, ka, ku, e1, t1 = sample_v_p(p, samples, rng, margin=margin)
    info = {"mean_active": float(ka.mean()), "max_active": int(ka.max()),
            "max_order_stats": int(ku.max())}
    if not control_variates:
        return float(V.mean()), float(V.std(ddof=1) / math.sqrt(samples)), info
    mu1, mu2 = (0.0, 1.0) if p == 2 else gaussian_max_moments(p - 1)
    T = t1 - mu1
    F = np.column_stack([hermite_features(e1, 3), T, t1 * t1 - mu2, e1 * T])
    ev, se_v, ratio = cv_mean(V, F)
    info["cv_variance_ratio"] = ratio
    return ev, se_v, info


def alpha_c_finite(p, *, kappa=1.0, margin=0.0, samples=20_000, rng=None, control_variates=True):
    """Finite-``p`` replica-symmetric capacity ``alpha_c(kappa, p) = alpha_c(kappa) ln p / E[V_p]``.

    At full rank (``kappa = 1``, the default) this is ``ln p / (2 E[V_p])``;
    with ``margin = gamma > 0`` the correct score must beat every competitor
    by ``gamma`` competitor-score units and ``V_p`` is taken at the shifted
    gaps (docs/theory_full_rank.md#capacity-at-a-margin).

    Parameters
    ----------
    p : int
        Number of facts/candidates, ``2 <= p <= 1e15`` (floats with integer
        value such as ``1e15`` are accepted).
    kappa : float or array_like
        Rank fraction ``m / d`` of a rank-constrained memory, in ``(0, 1]``
        (default 1: full rank).  An array gives arrays of values and standard
        errors of the same shape, all from one Monte Carlo estimate of
        ``E[V_p]`` (the ``kappa`` dependence is the exact factor
        :func:`replica.alpha_c`).
    margin : float
        Margin ``0 <= gamma <= 20`` (default 0): fact ``mu`` counts as stored when
        ``z_mumu - max_rho z_murho >= gamma ||W||_F``, ``||W||_F`` being the
        standard deviation of a competitor score for N(0, I_d) keys and
        candidates.  ``0`` reproduces the margin-free values exactly (same
        draws, same arithmetic).
    samples : int
        Monte Carlo samples of ``eta``.
    rng : None, int, SeedSequence or Generator
        Randomness.
    control_variates : bool
        Use the zero-mean control variates below (default); ``False`` gives the
        plain sample mean (used by tests and the benchmark as a reference).

    Returns
    -------
    Estimate
        ``value`` = ``alpha_c(kappa) ln p / mean(V)`` (``ln p / (2 mean(V))`` at
        ``kappa = 1``), ``stderr`` by the delta method, ``info``: ``E_V`` and
        its stderr, ``kappa``, ``alpha_c_kappa`` (the large-``p`` capacity
        ``alpha_c(kappa)``), ``pc_over_d2 = alpha_c(kappa) / E[V_p]`` and its
        stderr, mean and max active-set size, largest number of order
        statistics drawn, ``margin`` and ``limit_scaled`` (the large-``p``
        law :func:`alpha_c_margin_limit` at ``g = margin/sqrt(2 ln p)``, times
        ``2 alpha_c(kappa)``).

    Raises
    ------
    ValueError
        If ``p`` is not an integer in ``[2, 1e15]``, ``kappa`` not in
        ``(0, 1]``, ``margin`` negative, ``samples < 2`` or ``rng`` invalid
        (nothing is sampled).

    Notes
    -----
    Rank constraint (``docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories``):
    near ``q -> 1`` the replica-symmetric free entropy is
    ``[c_S(kappa) - alpha E[V_p] / ln p] / (1 - q)`` plus less singular terms.
    The entropic coefficient ``c_S(kappa) = alpha_c(kappa)`` (``1/2`` at full
    rank) comes from the volume of rank-``kappa d`` matrices and does not
    depend on ``p``; the energetic coefficient ``E[V_p] / ln p`` comes from
    the Gaussian scores of the facts, which depend on ``W`` only through the
    replica overlap and not on its rank.  Hence the product form
    ``alpha_c(kappa, p) = alpha_c(kappa) * ln p / E[V_p]
    = 2 alpha_c(kappa) alpha_c(1, p)``.

    ``V_p(eta) = min_{x>=0} [x^2/2 + 1/2 sum_{rho>=2} (eta_rho - eta_1 - x)_+^2]``
    (docs/theory_full_rank.md#order-statistics-method) depends only on the competitors above ``eta_1 + x*``.  For each
    sample the top ``K`` order statistics of the ``p - 1`` competitors are drawn
    exactly by Renyi's representation (:class:`replica.order_stats.TopNormals`,
    never materialising ``p`` numbers), starting with
    ``K = 8 + 2 ceil(ln p)`` and doubling ``K`` for the samples whose active set
    fills all ``K`` drawn values; when some drawn gap is inactive, every
    undrawn gap is smaller still and is inactive too, so the value is exact.
    All samples are processed as arrays (no Python loop over samples).

    Variance reduction: ``E[V_p]`` is estimated by regression on control
    variates with exactly known means, ``He_1..He_3(eta_1)`` (Hermite
    polynomials, mean 0), ``T = M - E[M]`` and ``M^2 - E[M^2]`` where ``M`` is the
    largest competitor (its moments from :func:`replica.gaussian_max_moments`),
    and ``eta_1 T`` (mean 0 by independence).  The residual variance is 0.3% to
    0.05% of ``Var(V_p)`` for ``p = 1e3 .. 1e15`` (``info["cv_variance_ratio"]``), a
    300 to 2000-fold saving in samples; the regression coefficients add a bias
    of order ``1/n``.  The ratio estimator has a bias of relative order ``Var(V)/(n E[V]^2)``, far below
    the reported standard error.

    References
    ----------
    arXiv:2605.10795 (capacity of linear associative memories);
    docs/theory_full_rank.md#finite-p-capacity

    Examples
    --------
    >>> est = alpha_c_finite(2, samples=20_000, rng=0)
    >>> bool(abs(est.value - 2 * math.log(2)) < 5 * est.stderr)
    True
    >>> lo = alpha_c_finite(1000, kappa=[0.25, 0.5], rng=0)
    >>> lo.value.shape, bool(np.all(lo.value < alpha_c_finite(1000, rng=0).value))
    ((2,), True)
    >>> for g in (0.0, 0.5, 1.0):
    ...     print(g, f"{alpha_c_finite(1000, margin=g, rng=0).value:.4f}")
    0.0 0.8509
    0.5 0.6406
    1.0 0.4972
    """
    p = check_int("p", p, low=2, high=10**15)
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True)
    margin = _check_margin(margin)
    samples = check_int("samples", samples, low=2)
    rng = check_rng(rng)
    ac = alpha_c(kappa)                      # exactly 0.5 at kappa = 1
    ev, se_v, info = _mean_v(p, samples, rng, control_variates, margin)
    lp = math.log(p)
    # ac = 1/2 makes (lp * ac) / ev the same double as lp / (2 ev) (halving is exact)
    val = (lp * ac) / ev
    se = (lp * ac) / (ev * ev) * se_v
    g = margin / math.sqrt(2.0 * lp)
    return Estimate(val, se, samples, {
        "p": p, "kappa": kappa, "alpha_c_kappa": ac, "E_V": ev, "E_V_stderr": se_v,
        "pc_over_d2": ac / ev, "pc_over_d2_stderr": ac * se_v / (ev * ev), "margin": margin,
        "limit_scaled": 2.0 * ac * alpha_c_margin_limit(g), **info})
