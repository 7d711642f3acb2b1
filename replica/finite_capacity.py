"""Finite-``p`` replica-symmetric capacity ``alpha_c(p) = ln p / (2 E[V_p])`` (docs/theory_full_rank.md#finite-p-capacity),
and its rank-constrained form ``alpha_c(kappa) ln p / E[V_p]``."""
from __future__ import annotations

import math

import numpy as np

from hcizz.checks import check_int, check_memory, check_real, check_rng
from hcizz.estimate import Estimate

from ._control_variates import cv_mean, hermite_features
from ._docparams import fill_doc
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


@fill_doc
def v_p_from_gaps(gaps, *, complete=True):
    r"""Compute :math:`V = \min_{x\ge 0} x^2/2 + \frac12 \sum_j (g_j - x)_+^2` for sorted gaps.

    Parameters
    ----------
    gaps : ndarray, shape (S, K)
        :math:`g_j = \eta_{(j)} - \eta_1` in descending order along axis 1 (the ``K``
        largest competitors).
    complete : bool
        Whether ``gaps`` holds all competitors (then any active set is complete).

    Returns
    -------
    V : ndarray, shape (S,)
        The minimum, per row.
    k_active : ndarray of int, shape (S,)
        Size of the active set :math:`\{j : g_j > x^*\}`.
    ok : ndarray of bool, shape (S,)
        True where the active set is provably complete: ``k_active < K`` (the
        first inactive gap is among the sampled ones, and every unsampled gap
        is smaller) or ``complete``.

    See Also
    --------
    replica.finite_capacity.sample_v_p : Draw the gaps and evaluate this minimum per sample.
    replica.v_p : Monte Carlo estimate of the mean of this minimum.

    Notes
    -----
    With :math:`x_k = (g_1 + \dots + g_k)/(k+1)` (:math:`x_0 = 0`), :math:`x_k` is a
    weighted average of :math:`x_{k-1}` and :math:`g_k`; so the condition
    :math:`g_k > x_{k-1}` holds for a prefix :math:`k = 1, \dots, k^*` and then fails
    for good.  Stationarity, :math:`(1 + k)\, x` equal to the sum of the :math:`k`
    active gaps with active set :math:`\{g > x\}`, is satisfied by
    :math:`x^* = x_{k^*}`, the unique minimiser of the strictly convex objective.

    %(refs_v_one_sample)s

    Examples
    --------
    Gaps 1 and 0.5 (and one negative): the first gap alone is active, :math:`x^* = 1/2`,
    :math:`V = 1/8 + 1/8`.

    >>> V, k_active, ok = v_p_from_gaps([[1.0, 0.5, -2.0]])
    >>> print(V, k_active, ok)
    [0.25] [1] [ True]
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


@fill_doc
def sample_v_p(p, samples, rng, k0=None, margin=0.0):
    r"""Draw ``samples`` values of :math:`V_p(\eta)` exactly (top order statistics only).

    Parameters
    ----------
    %(p_unchecked)s
    samples : int
        Number of disorder samples.
    %(generator)s
    k0 : int, optional
        Number of order statistics drawn first (default
        :math:`\min(p - 1, 8 + 2 \lceil \ln p \rceil)`); doubled where the active set
        fills them.
    margin : float, optional
        Margin :math:`\gamma \ge 0` (not validated here): the gaps become
        :math:`\eta_{(j)} - \eta_1 + \gamma` (docs/theory_full_rank.md#capacity-at-a-margin).

    Returns
    -------
    V : ndarray, shape (samples,)
        :math:`V_p` per sample.
    k_active : ndarray of int, shape (samples,)
        Size of the active set.
    K_used : ndarray of int, shape (samples,)
        Number of order statistics drawn.
    eta1 : ndarray, shape (samples,)
        The correct candidate's level :math:`\eta_1`.
    top1 : ndarray, shape (samples,)
        The largest competitor.

    See Also
    --------
    replica.finite_capacity.v_p_from_gaps : The minimum for given sorted gaps.
    replica.order_stats.TopNormals : Exact top order statistics of many normals.
    replica.v_p : Mean of these draws with control variates.

    %(refs_order_statistics)s

    Examples
    --------
    >>> import numpy as np
    >>> V, k_active, K_used, eta1, top1 = sample_v_p(1000, 4, np.random.default_rng(0))
    >>> print(np.round(V, 4), k_active, K_used)
    [3.1672 3.8122 1.7144 2.8569] [ 5  9 10  9] [22 22 22 22]
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
    r"""Estimate :math:`E[V_p]` by Monte Carlo with control variates; see :func:`alpha_c_finite`.

    Parameters
    ----------
    p : int
        Number of candidates, ``2 <= p <= 1e15``.
    margin : float, optional
        Margin :math:`0 \le \gamma \le 20` in competitor-score units (default 0).
    samples : int, optional
        Monte Carlo samples of :math:`\eta` (default 20000).
    rng : None, int, SeedSequence or Generator, optional
        Randomness.

    Returns
    -------
    Estimate
        :math:`E[V_p]` with its standard error; ``info`` holds the active-set sizes
        and the control-variate variance ratio.

    See Also
    --------
    replica.alpha_c_finite : The capacity :math:`\ln p / (2 E[V_p])` from this mean.
    replica.finite_capacity.sample_v_p : The exact draws of :math:`V_p` it averages.

    Notes
    -----
    :math:`V_p(\eta) = \min_{x \ge 0} \bigl[x^2/2 + \frac12 \sum_{\rho \ge 2}
    (\eta_\rho - \eta_1 + \gamma - x)_+^2\bigr]` for i.i.d. standard normal
    :math:`\eta_1, \dots, \eta_p`; the sampling and the control variates are
    described in :func:`alpha_c_finite`.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#finite-p-capacity

    Examples
    --------
    >>> est = v_p(1000, rng=0)
    >>> print(f"{est.value:.4f} +- {est.stderr:.4f}")
    4.0590 +- 0.0017
    """
    p = check_int("p", p, low=2, high=10**15)
    margin = _check_margin(margin)
    samples = check_int("samples", samples, low=2)
    rng = check_rng(rng)
    ev, se_v, info = _mean_v(p, samples, rng, True, margin)
    return Estimate(ev, se_v, samples, info)


def _check_margin(margin):
    return check_real("margin", margin, low=0, high=MARGIN_MAX, allow_array=False)


@fill_doc
def alpha_c_margin_limit(g):
    r"""Return the large-``p`` top-1 capacity :math:`1 / (2 (1 + g)^2)` at a margin :math:`g \sqrt{2 \ln p}`.

    Parameters
    ----------
    g : float or array_like
        Margin in units of the extreme-value scale :math:`\sqrt{2 \ln p}`, :math:`g \ge 0`.

    Returns
    -------
    float or ndarray
        :math:`\lim_{p\to\infty} \alpha_c(p; \gamma = g\sqrt{2\ln p}) = 1/(2(1+g)^2)`.

    Raises
    ------
    ValueError
        If ``g`` is negative or NaN.

    See Also
    --------
    replica.alpha_c_finite : The finite-``p`` capacity at a margin (``margin=``).
    replica.alpha_c : The large-``p`` capacity of a rank-constrained memory, without a margin.
    replica.tam_capacity : The large-``p`` capacity under the tail-average margin criterion.

    Notes
    -----
    The counting argument of docs/theory_full_rank.md#large-p-limit with the
    constraint raised by :math:`\gamma`: the correct score must clear every
    competitor level by :math:`\gamma`, so :math:`s_{\min} = (1 + g)/\sqrt{1-t}` and
    :math:`G(t) = -(1+g)^2/(1-t)` (docs/theory_full_rank.md#capacity-at-a-margin).
    A fixed margin (:math:`g \to 0`) leaves the limit at 1/2.

    %(refs_margin_capacity)s

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


@fill_doc
def alpha_c_finite(p, *, kappa=1.0, margin=0.0, samples=20_000, rng=None, control_variates=True):
    r"""Finite-``p`` replica-symmetric capacity :math:`\alpha_c(\kappa, p) = \alpha_c(\kappa) \ln p / E[V_p]`.

    At full rank (:math:`\kappa = 1`, the default) this is :math:`\ln p / (2 E[V_p])`;
    with ``margin`` :math:`= \gamma > 0` the correct score must beat every competitor
    by :math:`\gamma` competitor-score units and :math:`V_p` is taken at the shifted
    gaps (docs/theory_full_rank.md#capacity-at-a-margin).

    Parameters
    ----------
    p : int
        Number of facts/candidates, ``2 <= p <= 1e15`` (floats with integer
        value such as ``1e15`` are accepted).
    kappa : float or array_like
        Rank fraction :math:`m / d` of a rank-constrained memory, in :math:`(0, 1]`
        (default 1: full rank).  An array gives arrays of values and standard
        errors of the same shape, all from one Monte Carlo estimate of
        :math:`E[V_p]` (the ``kappa`` dependence is the exact factor
        :func:`replica.alpha_c`).
    margin : float
        Margin :math:`0 \le \gamma \le 20` (default 0): fact :math:`\mu` counts as stored when
        :math:`z_{\mu\mu} - \max_\rho z_{\mu\rho} \ge \gamma \|W\|_F`, :math:`\|W\|_F` being the
        standard deviation of a competitor score for :math:`N(0, I_d)` keys and
        candidates.  ``0`` reproduces the margin-free values exactly (same
        draws, same arithmetic).
    %(eta_samples)s
    %(randomness_rng)s
    control_variates : bool
        Use the zero-mean control variates below (default); ``False`` gives the
        plain sample mean (used by tests and the benchmark as a reference).

    Returns
    -------
    Estimate
        ``value`` = :math:`\alpha_c(\kappa) \ln p / \overline{V}` (:math:`\ln p / (2 \overline{V})` at
        :math:`\kappa = 1`), ``stderr`` by the delta method, ``info``: ``E_V`` and
        its stderr, ``kappa``, ``alpha_c_kappa`` (the large-``p`` capacity
        :math:`\alpha_c(\kappa)`), ``pc_over_d2`` :math:`= \alpha_c(\kappa) / E[V_p]` and its
        stderr, mean and max active-set size, largest number of order
        statistics drawn, ``margin`` and ``limit_scaled`` (the large-``p``
        law :func:`alpha_c_margin_limit` at :math:`g = \gamma/\sqrt{2 \ln p}`, times
        :math:`2 \alpha_c(\kappa)`).

    Raises
    ------
    ValueError
        If ``p`` is not an integer in ``[2, 1e15]``, ``kappa`` not in
        ``(0, 1]``, ``margin`` negative, ``samples < 2`` or ``rng`` invalid
        (nothing is sampled).

    See Also
    --------
    replica.alpha_c : The large-``p`` capacity :math:`\alpha_c(\kappa)` of a rank-constrained memory.
    replica.finite_capacity.alpha_c_margin_limit : The large-``p`` capacity at a margin.
    replica.tam_capacity : The capacity under the tail-average margin criterion.
    replica.v_p : The mean :math:`E[V_p]` alone.
    replica.saddle : The replica-symmetric saddle point at a given load.

    Notes
    -----
    Rank constraint (``docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories``):
    near :math:`q \to 1` the replica-symmetric free entropy is
    :math:`[c_S(\kappa) - \alpha E[V_p] / \ln p] / (1 - q)` plus less singular terms.
    The entropic coefficient :math:`c_S(\kappa) = \alpha_c(\kappa)` (1/2 at full
    rank) comes from the volume of rank-:math:`\kappa d` matrices and does not
    depend on :math:`p`; the energetic coefficient :math:`E[V_p] / \ln p` comes from
    the Gaussian scores of the facts, which depend on :math:`W` only through the
    replica overlap and not on its rank.  Hence the product form

    .. math::

        \alpha_c(\kappa, p) = \alpha_c(\kappa) \frac{\ln p}{E[V_p]}
        = 2 \alpha_c(\kappa)\, \alpha_c(1, p).

    The minimum

    .. math::

        V_p(\eta) = \min_{x \ge 0} \Bigl[\frac{x^2}{2} + \frac12 \sum_{\rho \ge 2}
        (\eta_\rho - \eta_1 - x)_+^2\Bigr]

    (docs/theory_full_rank.md#order-statistics-method) depends only on the
    competitors above :math:`\eta_1 + x^*`.  For each sample the top :math:`K`
    order statistics of the :math:`p - 1` competitors are drawn exactly by Renyi's
    representation (:class:`replica.order_stats.TopNormals`, never materialising
    :math:`p` numbers), starting with :math:`K = 8 + 2 \lceil \ln p \rceil` and
    doubling :math:`K` for the samples whose active set fills all :math:`K` drawn
    values; when some drawn gap is inactive, every undrawn gap is smaller still and
    is inactive too, so the value is exact.  All samples are processed as arrays
    (no Python loop over samples).

    Variance reduction: :math:`E[V_p]` is estimated by regression on control
    variates with exactly known means, :math:`\mathrm{He}_1, \dots, \mathrm{He}_3(\eta_1)`
    (Hermite polynomials, mean 0), :math:`T = M - E[M]` and :math:`M^2 - E[M^2]` where
    :math:`M` is the largest competitor (its moments from
    :func:`replica.gaussian_max_moments`), and :math:`\eta_1 T` (mean 0 by
    independence).  The residual variance is 0.3% to 0.05% of :math:`\mathrm{Var}(V_p)`
    for :math:`p = 10^3 \dots 10^{15}` (``info["cv_variance_ratio"]``), a 300 to
    2000-fold saving in samples; the regression coefficients add a bias of order
    :math:`1/n`.  The ratio estimator has a bias of relative order
    :math:`\mathrm{Var}(V)/(n E[V]^2)`, far below the reported standard error.

    References
    ----------
    arXiv:2605.10795 (capacity of linear associative memories);
    docs/theory_full_rank.md#finite-p-capacity

    Examples
    --------
    At :math:`p = 2` the capacity is :math:`2 \ln 2 = 1.3863` exactly:

    >>> est = alpha_c_finite(2, samples=20_000, rng=0)
    >>> print(f"{est.value:.3f} +- {est.stderr:.3f}")
    1.390 +- 0.006

    A rank constraint scales the capacity by :math:`2 \alpha_c(\kappa)`:

    >>> print(alpha_c_finite(1000, kappa=[0.25, 0.5, 1.0], rng=0).value.round(4))
    [0.5301 0.7605 0.8509]
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
