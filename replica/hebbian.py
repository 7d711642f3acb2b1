r"""Hebbian (outer-product) memory :math:`W_H = \sum_\nu u_\nu e_\nu^T`: finite-size
(conditional) and independent-Gaussian-model predictions, and direct simulation."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from hcizz.checks import check_int, check_real, check_rng
from hcizz.estimate import Estimate
from hcizz.results import Result

from ._docparams import fill_doc
from .listwise import tail_mean_sf

__all__ = ["HEBBIAN_LIMIT", "hebbian", "hebbian_recall_probability", "hebbian_threshold",
           "hebbian_tam_probability", "hebbian_tam_threshold",
           "hebbian_score_moments", "hebbian_matrix", "hebbian_simulate", "HebbianPrediction"]

#: Large-``d`` limit of the Hebbian capacity ``alpha_H`` (all facts recalled).
HEBBIAN_LIMIT = 1.0 / 8.0

_Z = np.linspace(-14.0, 14.0, 5601)
_DZ = _Z[1] - _Z[0]
_PHIZ = np.exp(-0.5 * _Z ** 2) / math.sqrt(2.0 * math.pi) * _DZ


def hebbian_score_moments(d, p, *, exact=False):
    r"""Return the normalised Gaussian-model parameters :math:`(m, s)` of the correct score.

    Competitor scores divided by their standard deviation are :math:`\sim N(0,1)`; the
    correct score is :math:`\sim N(m, s^2)`.  ``exact=False``: the independent-Gaussian
    model, :math:`m = d/\sqrt{p + 2d}`, :math:`s^2 = (p + 4d)/(p + 2d)`.  ``exact=True``:
    the exact moments of :math:`W_H` with shared candidates (derived in the Notes of
    :func:`hebbian_recall_probability`): competitor variance
    :math:`d^2 (p + 2 + 2d)`, correct mean :math:`d^2` and variance :math:`d^2 (p + 3 + 4d)`.

    Parameters
    ----------
    d : float or array_like
        Dimension.
    p : float or array_like
        Number of facts.
    exact : bool, optional
        Use the exact moments instead of the independent-Gaussian model's.

    Returns
    -------
    m : ndarray
        Mean of the correct score in units of the competitors' standard deviation.
    s : ndarray
        Standard deviation of the correct score in the same units.

    See Also
    --------
    replica.hebbian_recall_probability : Recall probability from these parameters.
    replica.hebbian_simulate : Measured raw score moments, for comparison.

    References
    ----------
    docs/theory_full_rank.md#exact-score-moments

    Examples
    --------
    >>> m, s = hebbian_score_moments(100, 50)
    >>> print(f"{m:.6f} {s:.6f}")
    6.324555 1.341641
    >>> print(*(f"{x:.6f}" for x in hebbian_score_moments(100, 50, exact=True)))
    6.299408 1.340753
    """
    d = np.asarray(d, dtype=float)
    p = np.asarray(p, dtype=float)
    if exact:
        vc, vr = p + 2.0 + 2.0 * d, p + 3.0 + 4.0 * d
    else:
        vc, vr = p + 2.0 * d, p + 4.0 * d
    return d / np.sqrt(vc), np.sqrt(vr / vc)


def _log_p_single_fail(m, s, p):
    """``ln P(fact not recalled)`` and ``P(fail)`` in the Gaussian model (trapezoid in z)."""
    m, s, p = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (m, s, p)))
    y = m[..., None] + s[..., None] * _Z
    miss = -np.expm1((p[..., None] - 1.0) * log_ndtr(y))     # 1 - Phi(y)^(p-1)
    return (miss * _PHIZ).sum(axis=-1)


# ---- conditional (per-input normalised) model -------------------------------------------
_X = np.linspace(-12.0, 6.0, 361)                        # outer Gaussian x, step 0.05
_WX = np.exp(-0.5 * _X ** 2) / math.sqrt(2.0 * math.pi) * (_X[1] - _X[0])
_G = np.linspace(-10.0, 10.0, 81)                        # OP: competitor's own g, step 0.25
_WG = np.exp(-0.5 * _G ** 2) / math.sqrt(2.0 * math.pi) * (_G[1] - _G[0])
_XC_STEP = 6                                             # OP: coarse x step 0.3
_MODELS = ("conditional", "theory")


def _chi2_nodes(k, n):
    """Gauss nodes and weights (summing to 1) for ``E f(X)``, ``X ~ chi^2_k`` (real ``k >= 0``).

    ``k <= 200``: generalised Gauss-Laguerre (exact for polynomials of degree ``2n-1``);
    larger ``k``: Wilson-Hilferty ``X = k (1 - c + z sqrt(c))^3``, ``c = 2/(9k)``, with
    Gauss-Hermite nodes in ``z`` (relative error of the law ``O(k^-1)``, immaterial there);
    ``k < 1e-3``: a point mass at ``k``.
    """
    from scipy.special import gammaln, roots_genlaguerre, roots_hermitenorm

    if k < 1e-3:                       # point mass at the mean (error O(k))
        return np.full(1, max(k, 0.0)), np.ones(1)
    if k <= 200:
        y, w = roots_genlaguerre(n, k / 2.0 - 1.0)
        return 2.0 * y, w / math.exp(gammaln(k / 2.0))
    z, w = roots_hermitenorm(n)
    c = 2.0 / (9.0 * k)
    return k * (1.0 - c + z * math.sqrt(c)) ** 3, w / w.sum()


def _problem(problem):
    pr = str(problem).upper() if isinstance(problem, str) else problem
    if pr not in ("OP", "DP"):
        raise ValueError(f"problem must be 'op' or 'dp', got {problem!r}")
    return pr


def _check_model(model):
    if model not in _MODELS:
        raise ValueError(f"model must be one of {_MODELS}, got {model!r}")
    return model


def _dp_scores(d, p, n, extra=0.0):
    """Normalised correct scores ``s`` (nodes, x) and node weights (nodes,) of the DP conditional model.

    ``s = r B / sqrt(B^2 + K Q + extra)``: ``extra`` adds a competitor variance
    (``d^2 - 1`` for the OP approximation of :func:`hebbian_tam_probability`).
    """
    r2, wr = _chi2_nodes(d, n)
    Q, wq = _chi2_nodes(d - 1.0, n - 1)
    a, wa = _chi2_nodes(d, n)
    K, wk = _chi2_nodes(p - 1.0, n)
    R, A, KK, QQ = np.meshgrid(np.sqrt(r2), np.sqrt(a), K, Q, indexing="ij")
    w = np.einsum("i,j,k,l->ijkl", wr, wa, wk, wq).ravel()
    R, A, KK, QQ = (v.ravel()[:, None] for v in (R, A, KK, QQ))
    B = R * A + np.sqrt(KK) * _X                           # (nodes, x)
    return R * B / np.sqrt(B * B + KK * QQ + extra), w


def _conditional_fail(d, p, problem, nodes=None):
    """``(1 - P_1, P_1)`` of the conditional model at scalar ``d``, ``p`` (see
    :func:`hebbian_recall_probability`)."""
    n = nodes or (6 if problem == "DP" else 4)
    if problem == "DP":
        s, w = _dp_scores(d, p, n)
        logpi = log_ndtr(s)
    else:
        r2, wr = _chi2_nodes(d, n)
        Q, wq = _chi2_nodes(d - 1.0, n - 1)
        # sqrt(|e_mu|^2) ~ chi_d is merged into the Gaussian x: chi_d ~ N(sqrt(d - 1/2), 1/2)
        K, wk = _chi2_nodes(p - 2.0, n)
        q, wqq = _chi2_nodes(d - 1.0, 3)
        R, KK, QQ = np.meshgrid(np.sqrt(r2), K, Q, indexing="ij")
        w = np.einsum("i,k,l->ikl", wr, wk, wq).ravel()
        R, KK, QQ = (v.ravel()[:, None, None] for v in (R, KK, QQ))
        xc = _X[::_XC_STEP]                                 # coarse x; ln f is interpolated
        B0 = R * math.sqrt(max(d - 0.5, 0.0)) + np.sqrt(KK + 0.5 * R * R) * xc[None, :, None]
        V2 = KK * QQ
        g = _G[None, None, :]
        f = 0.0
        for qi, wi in zip(q, wqq):
            D = np.sqrt(V2 + ((R - g) * g - qi) ** 2 + 1e-300)
            f = f + wi * (ndtr(-(R - g) * B0 / D) @ _WG)
        lf = CubicSpline(xc, np.log(np.clip(f, 1e-300, 1.0)), axis=1)(_X)
        with np.errstate(divide="ignore"):                  # pi = 0 -> ln pi = -inf is exact
            logpi = np.log1p(-np.minimum(np.exp(lf), 1.0))
    lp = (p - 1.0) * logpi                                  # ln P(recall | outer), (nodes, x)
    fail = (-np.expm1(lp) @ _WX) @ w
    p1 = (np.exp(lp) @ _WX) @ w
    return float(fail), float(p1)


def hebbian_recall_probability(d, p, *, all_facts=True, exact_moments=False, model="conditional",
                               problem="op"):
    r"""Compute the model probability that a Hebbian memory :math:`W_H = \sum_\nu u_\nu e_\nu^T` recalls its facts.

    Parameters
    ----------
    d : float or array_like
        Dimension, :math:`d \ge 1`.
    p : float or array_like
        Number of facts, :math:`p \ge 2` (real values allowed, for root finding).
    all_facts : bool
        ``True``: probability that all ``p`` facts are recalled; ``False``:
        probability that one given fact is recalled.
    exact_moments : bool
        ``model="theory"`` only: use the exact score moments instead of the independent-Gaussian model's
        (see :func:`hebbian_score_moments`).
    model : {"conditional", "theory"}
        ``"conditional"`` (default): per-input normalised finite-size model
        (below); ``"theory"``: the independent-Gaussian model.
    problem : {"op", "dp"}
        Candidates: the stored :math:`u_\rho` (``"op"``, default) or fresh
        competitors per input (``"dp"``).  The theory model does not
        distinguish them.

    Returns
    -------
    float or ndarray
        The probability, broadcast shape of ``d`` and ``p``.

    See Also
    --------
    replica.hebbian : All predictions at one dimension, in one record.
    replica.hebbian_threshold : The load at which this probability is 1/2.
    replica.hebbian_score_moments : The score parameters of the theory model.
    replica.hebbian_simulate : Direct simulation, for comparison.

    Notes
    -----
    **Theory model.**  Score of candidate :math:`\rho` for input :math:`\mu`:
    :math:`z = u_\rho^T W_H e_\mu`.  With :math:`e, u \sim N(0, I_d)`: the correct score
    is :math:`|u_\mu|^2 |e_\mu|^2 + \sum_{\nu \ne \mu} (u_\mu \cdot u_\nu)(e_\nu \cdot e_\mu)`
    with mean :math:`d^2` and variance
    :math:`(d^2+2d)^2 - d^4 + (p-1) d^2 = d^2 (p + 3 + 4d)`; a competitor score is
    :math:`(u_\rho \cdot u_\mu)|e_\mu|^2 + |u_\rho|^2 (e_\rho \cdot e_\mu) + \dots` with
    mean 0 and variance :math:`2 d (d^2 + 2d) + (p-2) d^2 = d^2 (p + 2 + 2d)` (all cross
    covariances vanish by symmetry).  The independent-Gaussian model keeps the
    leading terms.  The Gaussian model treats the normalised competitor scores as
    i.i.d. :math:`N(0,1)` and the correct score as :math:`N(m, s^2)`, independently
    across facts, so

    .. math:: P_1 = \int D z\, \Phi(m + s z)^{p-1}, \qquad P_{all} = P_1^p .

    :math:`1 - P_1` is computed as
    :math:`\int Dz\, (1 - e^{(p-1) \ln \Phi(m + s z)})` (with ``expm1``) by the
    trapezoid rule on :math:`z \in [-14, 14]` (step 0.005).

    **Conditional model.**  All scores of input :math:`\mu` are linear in
    :math:`h = W_H e_\mu = a u_\mu + \sum_{\nu \ne \mu} c_\nu u_\nu`
    (:math:`a = |e_\mu|^2`, :math:`c_\nu = e_\nu \cdot e_\mu = \sqrt{a}\, y_\nu`,
    :math:`y_\nu` i.i.d. :math:`N(0,1)`).  Split every :math:`u_\nu` into
    :math:`g_\nu = u_\nu \cdot u_\mu / r` (:math:`r = |u_\mu|`) and the part orthogonal
    to :math:`u_\mu`.  Dividing by :math:`\sqrt{a}`, the correct score is :math:`r B`
    and a competitor's :math:`g B + y q_\perp + |V| \zeta` (OP; DP:
    :math:`g B + |V| \zeta`) with

    * :math:`B = \sqrt{a}\, r + T`, :math:`T = \sum_\nu y_\nu g_\nu \sim \sqrt{K} x`,
      :math:`K = \sum_\nu y_\nu^2 \sim \chi^2`, :math:`x \sim N(0,1)`;
    * :math:`|V|^2 = |\sum_\nu y_\nu u_\nu^\perp|^2 = K Q`, :math:`Q \sim \chi^2_{d-1}`;
    * :math:`q_\perp = |u_\rho^\perp|^2 \sim \chi^2_{d-1}`, :math:`\zeta, g, y \sim N(0,1)`.

    DP (fresh competitors, :math:`K \sim \chi^2_{p-1}`): given the per-input scalars
    the competitors are exactly i.i.d. and
    :math:`P(\text{recall} \mid \cdot) = \Phi(s)^{p-1}`,
    :math:`s = r B / \sqrt{B^2 + K Q}`, so :math:`P_1` is exact.  OP: the
    competitor's own :math:`y_\rho g_\rho` is part of :math:`B`; with
    :math:`B_0 = B - y_\rho g_\rho` (:math:`K \sim \chi^2_{p-2}`) and the competitors
    taken independent given :math:`(r, B_0, V)`, integrating :math:`y` and
    :math:`\zeta` exactly,

    .. math:: 1 - \pi = E_{g, q_\perp} \Phi\left(-\frac{(r - g) B_0}
              {\sqrt{|V|^2 + ((r - g) g - q_\perp)^2}}\right),
              \qquad P(\text{recall} | .) = \pi^{p-1}.

    Then :math:`P_1 = E[P(\text{recall} \mid \cdot)]` over the per-input scalars and
    :math:`P_{all} = P_1^p` (facts taken independent).  Quadrature: Gauss-Laguerre
    (or Wilson-Hilferty/Gauss-Hermite for :math:`k > 200`) in the chi-square
    scalars (DP 6 nodes, :math:`Q` 5; OP 4 nodes, :math:`Q` 3, :math:`q_\perp` 3;
    quadrature error of :math:`P_1` about :math:`10^{-4}` at :math:`d = 20`,
    :math:`3 \cdot 10^{-4}` at :math:`d = 7`, :math:`p = 3`), trapezoid in :math:`x` on
    :math:`[-12, 6]` (step 0.05) and :math:`g` on :math:`[-10, 10]` (step 0.25); for OP
    :math:`\chi_d = \sqrt{a}` is replaced by :math:`N(\sqrt{d - 1/2}, 1/2)` and merged
    into :math:`x`, and :math:`\ln(1 - \pi)` is computed at every 6th :math:`x` and
    interpolated by a cubic spline.  Valid for :math:`p \lesssim 10^{25}` (the
    relevant :math:`x \sim -\sqrt{2 \ln p}` must lie in the grid).  Neglected:
    correlations between facts and between the competitors of one input beyond the
    shared :math:`(r, B_0, V)`.

    References
    ----------
    docs/theory_full_rank.md#independent-gaussian-model;
    docs/theory_full_rank.md#conditional-model

    Examples
    --------
    >>> print(f"{hebbian_recall_probability(1000, 100, model='theory'):.6f}")
    1.000000
    >>> print(f"{hebbian_recall_probability(50, 41, problem='dp'):.4f}")
    0.9134
    """
    d = check_real("d", d, low=1)
    p = check_real("p", p, low=2)
    _check_model(model)
    pr = _problem(problem)
    if model == "theory":
        m, s = hebbian_score_moments(d, p, exact=exact_moments)
        fail = _log_p_single_fail(m, s, p)
    else:
        db, pb = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(p, dtype=float))
        fail = np.array([_conditional_fail(float(di), float(pi), pr)[0]
                         for di, pi in zip(db.ravel(), pb.ravel())]).reshape(db.shape)
    if all_facts:
        out = np.exp(np.asarray(p, dtype=float) * np.log1p(-np.minimum(fail, 1.0)))
    else:
        out = 1.0 - fail
    return float(out) if np.ndim(out) == 0 else out


def _threshold_p(d, level, all_facts, exact_moments, model="theory", problem="op"):
    def f(lp):
        return hebbian_recall_probability(d, math.exp(lp), all_facts=all_facts,
                                          exact_moments=exact_moments, model=model,
                                          problem=problem) - level
    lo = math.log(2.0)
    if f(lo) <= 0:
        return math.nan
    if model != "theory":          # start from the cheap theory root (the conditional one is larger)
        pt = _threshold_p(d, level, all_facts, exact_moments)
        if math.isfinite(pt) and math.log(pt) > lo and f(math.log(pt)) > 0:
            lo = math.log(pt)
    hi = lo
    while f(hi) > 0:
        lo = hi
        hi += 0.5 if model != "theory" else 1.0
        if hi > 80:
            return math.nan
    return math.exp(brentq(f, lo, hi, xtol=1e-12 if model == "theory" else 1e-7))


@fill_doc
def hebbian_threshold(d, *, level=0.5, all_facts=True, exact_moments=False, model="conditional",
                      problem="op"):
    r"""Find the load :math:`\alpha = p \ln p / d^2` at which the model recall probability is ``level``.

    Parameters
    ----------
    d : float or array_like
        Dimension(s), :math:`d \ge 2`.
    level : float
        Probability level, :math:`0 < \mathrm{level} < 1` (default 1/2).
    all_facts : bool
        Threshold for recalling all facts (default; tends to 1/8 as
        :math:`d \to \infty`) or one typical fact (tends to 1/2).
    exact_moments : bool
        See :func:`hebbian_score_moments` (``model="theory"`` only).
    model : {"conditional", "theory"}
        See :func:`hebbian_recall_probability` (default ``"conditional"``).
    %(hebbian_problem)s

    Returns
    -------
    float or ndarray
        :math:`\alpha_H(d)` (``nan`` if even :math:`p = 2` is below ``level``).

    See Also
    --------
    replica.hebbian_recall_probability : The probability whose level is found.
    replica.hebbian : Thresholds and probabilities in one record.
    replica.alpha_c_finite : The optimal (replica) capacity, for comparison.

    Notes
    -----
    :math:`p` is treated as a real variable; the root in :math:`\ln p` is bracketed
    (unit steps; half steps from the theory-model root for the conditional
    model) and refined by Brent's method (:math:`\ln p` to :math:`10^{-12}`,
    conditional :math:`10^{-7}`).  Convergence to 1/8 is slow (the extreme-value
    corrections are of relative order :math:`\ln \ln p / \ln p`).

    %(refs_hebbian)s

    Examples
    --------
    >>> print(f"{hebbian_threshold(100, model='theory'):.5f}")
    0.04238
    >>> print(hebbian_threshold([100, 1000], model="theory", all_facts=False))
    [0.53090457 0.58301366]
    """
    d = check_real("d", d, low=2, high=1e15)
    level = check_real("level", level, low=0, high=1, low_open=True, high_open=True,
                       allow_array=False)
    _check_model(model)
    pr = _problem(problem)
    ds = np.atleast_1d(d)
    out = []
    for di in ds.ravel():
        pc = _threshold_p(float(di), level, all_facts, exact_moments, model, pr)
        out.append(pc * math.log(pc) / di ** 2 if math.isfinite(pc) else math.nan)
    out = np.array(out).reshape(ds.shape)
    return float(out[0]) if np.ndim(d) == 0 else out


def _tam_fail(d, p, tau, problem):
    """``1 - P_1`` of the Gaussian-competitor model under TAM at scalar ``d``, real ``p``: exact
    given the per-input scalars for DP; for OP (``d^2 - 1`` added to the competitor variance)
    only the starting point of the OP threshold search (see :func:`hebbian_tam_probability`)."""
    m = p - 1.0
    k = min(max(tau * m, 1.0), m)
    s, w = _dp_scores(d, p, 6, extra=0.0 if problem == "DP" else d * d - 1.0)
    grid = np.linspace(max(float(s.min()), -12.0), min(float(s.max()), 40.0), 1201)
    sf = tail_mean_sf(grid, m, k)
    with np.errstate(divide="ignore"):
        lsf = np.log(np.clip(sf, 1e-300, 1.0))
    fail_s = np.exp(np.interp(s, grid, lsf))                # P(T_k > s) at every node
    return float((fail_s @ _WX) @ w)


class _OpScalars:
    """Draws of the OP scalar model for one ``d`` (common random numbers over ``p``: the
    competitors of a smaller ``p`` are a prefix of the columns, ``chi^2_{p-2}`` is drawn
    through one uniform per input)."""

    def __init__(self, d, m_max, samples, rng):
        n = samples
        self.d, self.m_max = d, m_max
        self.r = np.sqrt(rng.chisquare(d, n))
        self.sa = np.sqrt(rng.chisquare(d, n))
        self.u = rng.random(n)
        self.x = rng.standard_normal(n)
        self.Q = rng.chisquare(d - 1, n)
        shape = (n, m_max)
        self.g = rng.standard_normal(shape, dtype=np.float32)
        self.y = rng.standard_normal(shape, dtype=np.float32)
        self.z = rng.standard_normal(shape, dtype=np.float32)
        self.q = rng.chisquare(d - 1, shape).astype(np.float32)

    def fail(self, p, tau):
        """``(1 - P_1, its standard error)`` at integer ``p``."""
        from scipy.stats import chi2

        m = p - 1
        k = max(tau * m, 1.0)
        K = math.ceil(k - 1e-12)
        Kp = chi2.ppf(self.u, p - 2) if p > 2 else np.zeros_like(self.u)
        B0 = (self.sa * self.r + np.sqrt(Kp) * self.x)[:, None].astype(np.float32)
        V = np.sqrt(Kp * self.Q)[:, None].astype(np.float32)
        rg = self.r[:, None].astype(np.float32) - self.g[:, :m]
        D = rg * B0 + self.y[:, :m] * (rg * self.g[:, :m] - self.q[:, :m]) - V * self.z[:, :m]
        low = np.sort(np.partition(D, K - 1, axis=1)[:, :K], axis=1)   # the K smallest c - z
        wts = np.full(K, 1.0 / k)
        wts[-1] = (k - K + 1) / k
        f = float(np.mean(low.astype(np.float64) @ wts <= 0.0))
        return f, math.sqrt(max(f * (1.0 - f), 1.0 / self.r.size) / self.r.size)


def _p_estimate(f, se, p, all_facts):
    if not all_facts:
        return Estimate(1.0 - f, se, n=0)
    v = (1.0 - f) ** p
    return Estimate(v, p * (1.0 - f) ** (p - 1) * se, n=0)


@fill_doc
def hebbian_tam_probability(d, p, tau, *, all_facts=True, problem="dp", samples=20_000, rng=0):
    r"""Compute the model probability that a Hebbian memory passes the tail-average-margin criterion.

    Parameters
    ----------
    d : float or array_like
        Dimension, :math:`d \ge 2` (OP: a scalar).
    p : float or array_like
        Number of facts and of candidates per input, :math:`p \ge 2` (DP: real
        values allowed, for root finding; OP: a whole number).
    tau : float
        Tail fraction, :math:`0 < \tau \le 1`; the tail holds
        :math:`k = \max(\tau (p - 1), 1)` competitors (:func:`replica.listwise.tail_size`).
    all_facts : bool
        ``True`` (default): probability that all ``p`` facts pass; ``False``:
        probability that one given fact passes.
    problem : {"dp", "op"}
        ``"dp"`` (default): fresh competitors per input, a quadrature that is
        exact given the per-input scalars; ``"op"``: the stored outputs as
        competitors, the scalar model of the Notes by Monte Carlo.
    samples : int
        OP: inputs drawn (default 20000).
    rng : None, int or Generator
        OP: the seed of the draws (default 0, reproducible).

    Returns
    -------
    float or ndarray or Estimate
        DP: the probability, broadcast shape of ``d`` and ``p``; OP: an
        :class:`~hcizz.estimate.Estimate` (value and its Monte Carlo standard error).

    %(raises_range)s

    See Also
    --------
    replica.hebbian_tam_threshold : The load at which this probability is 1/2.
    replica.hebbian_recall_probability : The same model under top-1.
    replica.listwise.tail_mean_sf : The law of the tail mean used here.

    Notes
    -----
    **DP.**  The conditional model of :func:`hebbian_recall_probability`:
    given the per-input scalars, the normalised correct score is
    :math:`s = r B / \sqrt{B^2 + K Q}` and the :math:`m = p - 1` competitor
    scores are i.i.d. :math:`N(0, 1)` (exactly, for fresh competitors), so a
    fact passes TAM when :math:`s > T_k`, the tail mean of :math:`m` standard
    normals, and

    .. math:: 1 - P_1 = \mathbb E\, P(T_k > s), \qquad P_{all} = P_1^p

    (facts taken independent, as for top-1).  :math:`P(T_k > s)` is
    :func:`replica.listwise.tail_mean_sf` on a grid of 1201 points in :math:`s`,
    interpolated in :math:`\ln`; the outer expectation uses the DP nodes of
    the top-1 model (6 chi-square nodes per scalar, trapezoid in :math:`x`).

    **OP.**  A stored competitor :math:`u_\rho` carries its own term
    :math:`y_\rho |u_\rho^\perp|^2`, as large as the signal term, and its
    :math:`y_\rho g_\rho` is part of the correct score.  In the variables of the
    top-1 OP model, :math:`c - z_\rho = (r - g_\rho) B_0 + y_\rho ((r - g_\rho) g_\rho - q_\rho)
    - |V| \zeta_\rho` with :math:`(g, y, \zeta) \sim N(0, 1)`,
    :math:`q \sim \chi^2_{d-1}` per competitor and the shared :math:`(r, B_0, V)`;
    the fact passes when the mean of the :math:`k` smallest of these
    differences is positive.  The competitors are taken independent given
    the shared scalars, as in the top-1 model (whose value this reproduces at
    :math:`k = 1`, tests), and the expectation is a Monte Carlo over
    ``samples`` inputs with :math:`m` competitors each.

    %(refs_hebbian_tam)s

    Examples
    --------
    >>> print(f"{hebbian_tam_probability(40, 50, 0.2):.4f}")
    0.8999
    >>> print(hebbian_tam_probability(20, 12, 0.2, problem="op"))
    0.53021 ± 0.01
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True, allow_array=False)
    pr = _problem(problem)
    if pr == "OP":
        d = check_int("d", d, low=2, high=10**4)
        p = check_int("p", p, low=2, high=10**5)
        samples = check_int("samples", samples, low=100, high=10**7)
        f, se = _OpScalars(d, p - 1, samples, check_rng(rng)).fail(p, tau)
        return _p_estimate(f, se, p, all_facts)
    d = check_real("d", d, low=2, high=1e6)
    p = check_real("p", p, low=2, high=1e9)
    db, pb = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(p, dtype=float))
    fail = np.array([_tam_fail(float(di), float(pi), tau, pr)
                     for di, pi in zip(db.ravel(), pb.ravel())]).reshape(db.shape)
    out = np.exp(pb * np.log1p(-np.minimum(fail, 1.0))) if all_facts else 1.0 - fail
    return float(out) if np.ndim(out) == 0 else out


def _op_threshold(d, tau, level, all_facts, samples, rng):
    """OP threshold ``n / d^2`` (Estimate): integer search from the Gaussian-competitor root,
    linear interpolation in ``n`` between the last ``n`` above ``level`` and the next."""
    def f_gauss(lp):
        fail = _tam_fail(d, math.exp(lp), tau, "OP")
        q = math.exp(math.exp(lp) * math.log1p(-min(fail, 1.0))) if all_facts else 1.0 - fail
        return q - level

    lo = math.log(2.0)
    if f_gauss(lo) > 0:
        hi = lo + 0.25
        while f_gauss(hi) > 0:
            lo, hi = hi, hi + 0.25
        n0 = max(2, int(round(math.exp(brentq(f_gauss, lo, hi, xtol=1e-4)))))
    else:
        n0 = 2
    draws = _OpScalars(d, int(1.25 * n0) + 8, samples, rng)
    cache = {}

    def prob(n):
        if n not in cache:
            f, se = draws.fail(n, tau)
            cache[n] = _p_estimate(f, se, n, all_facts)
        return cache[n]

    n = n0
    if prob(n).value > level:
        while n + 1 < draws.m_max + 1 and prob(n + 1).value > level:
            n += 1
        if n + 1 >= draws.m_max + 1:
            raise RuntimeError(f"OP threshold search left its draws at d={d}, tau={tau}")   # not reached on the grid
    else:
        while n > 2 and prob(n).value <= level:
            n -= 1
        if prob(n).value <= level:
            return Estimate(math.nan, math.nan, n=samples)
    a, b = prob(n), prob(n + 1)
    t = (a.value - level) / (a.value - b.value)
    se = math.hypot((1 - t) * a.stderr, t * b.stderr) / (a.value - b.value)
    return Estimate((n + t) / d ** 2, se / d ** 2, n=samples, info={"n_bracket": [n, n + 1]})


@fill_doc
def hebbian_tam_threshold(d, tau, *, level=0.5, all_facts=True, problem="dp", samples=20_000, rng=0):
    r"""Find the load :math:`n / d^2` at which the Hebbian memory passes TAM with probability ``level``.

    Parameters
    ----------
    d : float or array_like
        Dimension(s), :math:`d \ge 2` (OP: a scalar).
    tau : float
        Tail fraction, :math:`0 < \tau \le 1`.
    level : float
        Probability level, :math:`0 < \mathrm{level} < 1` (default 1/2).
    all_facts : bool
        Threshold for all facts passing (default) or one typical fact.
    problem : {"dp", "op"}
        See :func:`hebbian_tam_probability`.
    samples : int
        OP: inputs drawn per evaluation (default 20000).
    rng : None, int or Generator
        OP: the seed of the draws (default 0; the same draws serve every ``n``).

    Returns
    -------
    float or ndarray or Estimate
        The load :math:`n / d^2` (the TAM convention of
        :func:`replica.tam_capacity`; ``nan`` if even :math:`n = 2` is below
        ``level``); OP: an :class:`~hcizz.estimate.Estimate`.

    %(raises_range)s

    See Also
    --------
    replica.hebbian_tam_probability : The probability whose level is found.
    replica.hebbian_threshold : The top-1 threshold (load :math:`n \ln n / d^2`).

    Notes
    -----
    DP: the root in :math:`\ln n` (``n`` real) is bracketed in steps of 0.25 from
    :math:`n = 2` and refined by Brent's method to :math:`10^{-6}` in :math:`\ln n`.
    OP: whole :math:`n` from the root of the Gaussian-competitor model (the DP
    formula with :math:`d^2 - 1` added to the competitor variance) up or down
    until the level is crossed, with common random numbers (one set of draws,
    prefixes of its competitors), then linear interpolation between the two
    whole :math:`n` around the crossing; the standard error is that of the
    two probabilities divided by their difference.  Requiring all facts keeps
    the Hebbian memory on the :math:`d^2 / \ln n` scale under TAM too: the
    worst of :math:`n` correct scores must clear the tail mean, so the
    threshold load :math:`n / d^2` falls slowly with :math:`d`.

    %(refs_hebbian_tam)s

    Examples
    --------
    >>> print(f"{hebbian_tam_threshold(40, 0.2):.4f}")
    0.0465
    """
    tau = check_real("tau", tau, low=0, high=1, low_open=True, allow_array=False)
    level = check_real("level", level, low=0, high=1, low_open=True, high_open=True, allow_array=False)
    pr = _problem(problem)
    if pr == "OP":
        d = check_int("d", d, low=2, high=10**4)
        samples = check_int("samples", samples, low=100, high=10**7)
        return _op_threshold(d, tau, level, all_facts, samples, check_rng(rng))
    d = check_real("d", d, low=2, high=1e6)

    def f(lp, di):
        fail = _tam_fail(di, math.exp(lp), tau, pr)
        q = math.exp(math.exp(lp) * math.log1p(-min(fail, 1.0))) if all_facts else 1.0 - fail
        return q - level

    out = []
    for di in np.atleast_1d(d).ravel():
        di = float(di)
        lo = math.log(2.0)
        if f(lo, di) <= 0:
            out.append(math.nan)
            continue
        hi = lo + 0.25
        while f(hi, di) > 0:
            lo, hi = hi, hi + 0.25
        n = math.exp(brentq(f, lo, hi, args=(di,), xtol=1e-6))
        out.append(n / di ** 2)
    out = np.array(out).reshape(np.shape(d))
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
@fill_doc
class HebbianPrediction(Result):
    r"""Gaussian-model predictions for a Hebbian memory at dimension ``d``, as returned by :func:`hebbian`.

    Parameters
    ----------
    d, p, alpha : float
        Dimension, number of facts and load :math:`p \ln p / d^2` (``nan`` if not given).
    m, s : float
        Normalised mean and standard deviation of the correct score.
    p_single, p_all : float
        Probability that one fact / all facts are recalled.
    alpha_threshold : float
        Load at which ``p_all = 1/2`` at this ``d``.
    alpha_single : float
        Load at which ``p_single = 1/2`` at this ``d``.
    limit : float, optional
        1/8, the large-``d`` limit of ``alpha_threshold``.
    info : dict, optional
        The model options used (``exact_moments``, ``model``, ``problem``).

    See Also
    --------
    replica.hebbian : Returns this record (its Examples show one).

    %(refs_hebbian)s

    Examples
    --------
    >>> h = hebbian(100, 50, model="theory")
    >>> print(f"{h.alpha:.6f} {h.m:.6f} {h.alpha_threshold:.6f} {h.limit}")
    0.019560 6.324555 0.042383 0.125
    """

    d: float
    p: float
    alpha: float
    m: float
    s: float
    p_single: float
    p_all: float
    alpha_threshold: float
    alpha_single: float
    limit: float = HEBBIAN_LIMIT
    info: dict = field(default_factory=dict, compare=False)


@fill_doc
def hebbian(d, p=None, *, alpha=None, exact_moments=False, model="conditional", problem="op"):
    r"""Predict recall and capacity of the Hebbian rule (conditional or independent-Gaussian model).

    Parameters
    ----------
    d : float
        Dimension, :math:`2 \le d \le 10^{15}`.
    p : float, optional
        Number of facts (:math:`\ge 2`).  Give ``p`` or ``alpha``, or neither (then only
        the thresholds are computed).
    alpha : float, optional
        Load; ``p`` solves :math:`p \ln p = \alpha d^2`.
    exact_moments : bool
        See :func:`hebbian_score_moments`.
    model : {"conditional", "theory"}
        Model for the probabilities and thresholds (see
        :func:`hebbian_recall_probability`); ``m, s`` are always the independent-Gaussian model's
        Gaussian-model parameters.
    %(hebbian_problem)s

    Returns
    -------
    HebbianPrediction
        Score parameters, recall probabilities and thresholds at this ``d``.

    See Also
    --------
    replica.HebbianPrediction : The record returned.
    replica.hebbian_recall_probability : The recall probability at any ``d``, ``p``.
    replica.hebbian_threshold : The threshold load alone, for arrays of ``d``.
    replica.hebbian_simulate : Direct simulation of the memory.

    Notes
    -----
    The correct score is about :math:`m \sim \sqrt{\ln p / \alpha}` and the largest of
    :math:`p` competitors about :math:`\sqrt{2 \ln p}`; the worst of :math:`p` correct
    scores is about :math:`m - \sqrt{2 \ln p}`.  Recalling all facts needs
    :math:`m - \sqrt{2 \ln p} > \sqrt{2 \ln p}`, i.e. :math:`\alpha < 1/8`
    (``HEBBIAN_LIMIT``), four times below the optimal capacity 1/2; a typical single
    fact needs :math:`m > \sqrt{2 \ln p}`, i.e. :math:`\alpha < 1/2`.  At finite
    :math:`d` the thresholds are computed from :func:`hebbian_recall_probability`.

    %(refs_paper_hebbian)s

    Examples
    --------
    >>> h = hebbian(100, 50, model="theory")
    >>> print(f"{h.p_single:.4f} {h.p_all:.3f} {h.limit}")
    0.9978 0.895 0.125
    >>> print(f"{hebbian(100, 50).p_all:.3f}")          # conditional model, OP
    0.999
    """
    d = check_real("d", d, low=2, high=1e15, allow_array=False)
    if p is not None and alpha is not None:
        raise ValueError("give p or alpha, not both")
    if alpha is not None:
        alpha = check_real("alpha", alpha, low=0, low_open=True, allow_array=False)
        target = alpha * d * d
        if target <= 2 * math.log(2):
            raise ValueError(f"alpha must give p >= 2 at d={d:g} (alpha > {2 * math.log(2) / d ** 2:g}), got {alpha!r}")
        p = math.exp(brentq(lambda lp: math.exp(lp) * lp - target, math.log(2), math.log(target) + 2))
    _check_model(model)
    kw = {"exact_moments": exact_moments, "model": model, "problem": _problem(problem)}
    if p is not None:
        p = check_real("p", p, low=2, allow_array=False)
        m, s = hebbian_score_moments(d, p, exact=exact_moments)
        p1 = hebbian_recall_probability(d, p, all_facts=False, **kw)
        pa = hebbian_recall_probability(d, p, all_facts=True, **kw)
        a = p * math.log(p) / d ** 2
    else:
        m = s = p1 = pa = a = p = math.nan
    return HebbianPrediction(d, p, a, float(m), float(s), float(p1), float(pa),
                             hebbian_threshold(d, **kw), hebbian_threshold(d, all_facts=False, **kw),
                             info=kw)


@fill_doc
def hebbian_matrix(E, U):
    r"""Build the Hebbian memory :math:`W_H = \sum_\nu u_\nu e_\nu^T = U^T E`.

    The one implementation of the Hebbian rule: :func:`hebbian_simulate` and
    ``validation.linear_memory.hebbian_W`` (which takes a fact set) call it.

    Parameters
    ----------
    E : array_like, shape (..., p, d)
        Inputs :math:`e_\nu` as rows.
    U : array_like, shape (..., p, d)
        The stored (correct) outputs :math:`u_\nu` as rows, paired with ``E``.

    Returns
    -------
    ndarray, shape (..., d, d)
        :math:`W_H` (a batch of them when ``E`` and ``U`` have leading axes), one
        matrix product, in the dtype of :math:`U^T E`.

    See Also
    --------
    replica.hebbian_simulate : Recall of this memory on random facts.
    replica.hebbian : Model predictions for its recall.

    Notes
    -----
    :math:`(W_H)_{ij} = \sum_\nu U_{\nu i} E_{\nu j}`, so
    :math:`W_H e_\mu = \sum_\nu u_\nu (e_\nu \cdot e_\mu)`: the own output
    :math:`u_\mu` with weight :math:`|e_\mu|^2 \approx d` plus crosstalk from the
    other facts.

    %(refs_paper_hebbian)s

    Examples
    --------
    >>> E = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> U = np.array([[0.0, 1.0], [3.0, 0.0]])
    >>> hebbian_matrix(E, U)               # u_1 e_1^T + u_2 e_2^T
    array([[0., 6.],
           [1., 0.]])
    """
    E = np.asarray(E)
    U = np.asarray(U)
    if E.ndim < 2 or E.shape != U.shape:
        raise ValueError(f"E and U must have equal shapes (..., p, d), got {E.shape} and {U.shape}")
    return np.matmul(U.swapaxes(-1, -2), E)


@fill_doc
def hebbian_simulate(d, p, *, trials=20, rng=None, problem="OP"):
    r"""Simulate the Hebbian memory :math:`W_H = \sum_\nu u_\nu e_\nu^T` directly.

    Parameters
    ----------
    d, p : int
        Dimension (:math:`\ge 1`) and number of facts (:math:`\ge 2`);
        ``trials * p * d`` and ``trials * p**2`` numbers are held in memory.
    trials : int
        Independent instances (processed as one batched matmul).
    %(randomness_rng)s
    problem : {"OP", "DP"} (case-insensitive)
        ``"OP"``: the candidates are the stored :math:`u_\rho`.  ``"DP"``: each input
        has its own fresh competitors; given :math:`w = W_H e_\mu` their scores are
        exactly i.i.d. :math:`N(0, |w|^2)`, which is how they are drawn.

    Returns
    -------
    dict
        ``"single"``: Estimate of the fraction of facts recalled (stderr over
        trials); ``"all"``: Estimate of P(all recalled) (binomial stderr);
        ``"competitor_var"``, ``"correct_mean"``, ``"correct_var"``: Estimates of
        the raw score moments (``OP`` only; stderr over trials).

    See Also
    --------
    replica.hebbian_matrix : The memory simulated.
    replica.hebbian : The model predictions this simulation checks.
    replica.hebbian_score_moments : The exact score moments.

    References
    ----------
    docs/theory_full_rank.md#validation-of-the-hebbian-models

    Examples
    --------
    The raw moments against the exact ones, :math:`d^2 (p + 2 + 2d) = 305000`,
    :math:`d^2 = 2500` and :math:`d^2 (p + 3 + 4d) = 557500`:

    >>> r = hebbian_simulate(50, 20, trials=50, rng=0)
    >>> for key in ("competitor_var", "correct_mean", "correct_var", "single", "all"):
    ...     print(key, f"{r[key].value:.4g} +- {r[key].stderr:.2g}")
    competitor_var 3.02e+05 +- 8.3e+03
    correct_mean 2501 +- 24
    correct_var 5.449e+05 +- 3.1e+04
    single 0.998 +- 0.0014
    all 0.96 +- 0.028
    """
    d = check_int("d", d, low=1)
    p = check_int("p", p, low=2)
    trials = check_int("trials", trials, low=2)
    problem = _problem(problem)
    rng = check_rng(rng)
    E = rng.standard_normal((trials, p, d))
    U = rng.standard_normal((trials, p, d))
    W = hebbian_matrix(E, U)                                # (T, d, d) = sum u e^T
    WE = np.matmul(E, W.transpose(0, 2, 1))                # rows: (W e_mu)^T, (T, p, d)
    idx = np.arange(p)
    out = {}
    if problem == "OP":
        Z = np.matmul(WE, U.transpose(0, 2, 1))            # Z[t, mu, rho] = u_rho . W e_mu
        correct = Z[:, idx, idx]
        comp = Z.copy()
        comp[:, idx, idx] = -np.inf
        best = comp.max(axis=2)
        cv = ((Z ** 2).sum(axis=(1, 2)) - (correct ** 2).sum(axis=1)) / (p * (p - 1))
        out["competitor_var"] = _est(cv)
        out["correct_mean"] = _est(correct.mean(axis=1))
        out["correct_var"] = _est(np.mean((correct - d * d) ** 2, axis=1))
    else:
        correct = (WE * U).sum(axis=2)
        norms = np.linalg.norm(WE, axis=2)
        best = norms * _max_std_normal(rng, (trials, p), p - 1)
    rec = correct > best
    out["single"] = _est(rec.mean(axis=1))
    allr = rec.all(axis=1).astype(float)
    pa = float(allr.mean())
    out["all"] = Estimate(pa, math.sqrt(max(pa * (1 - pa), 0.25 / trials) / trials), trials)
    return out


def _max_std_normal(rng, shape, n):
    """Exact draw of the maximum of ``n`` i.i.d. N(0,1): ``Phi^{-1}(U^{1/n})``."""
    from scipy.special import ndtri_exp

    return ndtri_exp(np.log(rng.random(shape)) / n)


def _est(x):
    x = np.asarray(x, dtype=float)
    return Estimate(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), x.size)
