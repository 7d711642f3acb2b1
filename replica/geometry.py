r"""The per-fact cost :math:`V` with the true :math:`d`-dimensional candidate geometry.

The finite-``p`` capacity :func:`replica.alpha_c_finite` is
:math:`\ln p / (2 E[V_p])`, where :math:`V_p` is the least squared change of a fact's
scores that puts the correct candidate on top, the scores being moved *independently*
(docs/theory_full_rank.md#finite-p-capacity).  In a memory of dimension :math:`d` the
scores of one fact, :math:`z_\rho = y_\rho \cdot u` with :math:`u = W^\top x`, cannot
move independently: :math:`p > d` candidates share :math:`d` directions, and the
differences :math:`y_\rho - y_1` of the competitors that become active have a Gram
matrix whose entries fluctuate by :math:`O(d^{-1/2})` around :math:`1 + \delta`.  This
module measures what that does to :math:`V` (issue 26, candidate 1 of the theory of the
finite-size excess; docs/linear_memory.md#the-excess-over-the-finite-p-theory):

.. math::

    V_d(u_0) = \min_{\Delta u \in \mathbb R^d} \tfrac12 \|\Delta u\|^2
    \quad\text{s.t.}\quad (y_\rho - y_1)\cdot(u_0 + \Delta u) \le 0
    \ \ \forall \rho \ge 2,

against :math:`V_p` evaluated on the same scores :math:`\eta = Y u_0` (a paired
comparison: the only difference is the geometry).  With orthonormal candidates
(possible for :math:`p \le d`) the two coincide exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from hcizz.checks import check_array, check_int, check_rng
from hcizz.estimate import Estimate
from hcizz.results import Result

from ._docparams import fill_doc
from .finite_capacity import v_p_from_gaps

__all__ = ["v_true", "v_geometry", "GeometryV", "CANDIDATE_LAWS"]

#: Laws of the candidate vectors :func:`v_geometry` draws: ``"gaussian"`` (i.i.d.
#: :math:`N(0, 1/d)` entries, the law of the exact decisions) or ``"sphere"`` (the same
#: vectors divided by their norms).
CANDIDATE_LAWS = ("gaussian", "sphere")


@fill_doc
def v_true(Y, u0):
    r"""Compute the least cost :math:`\tfrac12\|\Delta u\|^2` that puts candidate 0 on top.

    Parameters
    ----------
    Y : array_like, shape (p, d)
        Candidate vectors; row 0 is the correct one, ``p >= 2``.
    u0 : array_like, shape (d,)
        The fact's read-out vector before the change (its scores are ``Y @ u0``).

    Returns
    -------
    V : float
        :math:`\min \tfrac12\|\Delta u\|^2` subject to
        :math:`(y_\rho - y_0)\cdot(u_0 + \Delta u) \le 0` for every :math:`\rho \ge 1`.
    k_active : int
        Number of constraints with a positive multiplier at the optimum (the active
        competitors).

    See Also
    --------
    replica.geometry.v_geometry : Its mean over random instances, paired with :math:`V_p`.
    replica.finite_capacity.v_p_from_gaps : The same minimum with independent scores.

    Notes
    -----
    The constraints say that :math:`u = u_0 + \Delta u` lies in the polyhedral cone
    :math:`C = \{u : A u \le 0\}`, :math:`A_\rho = y_\rho - y_0`, so :math:`u_0 + \Delta u^*`
    is the projection of :math:`u_0` on :math:`C`.  By Moreau's decomposition
    :math:`-\Delta u^*` is the projection of :math:`u_0` on the polar cone
    :math:`\{A^\top\lambda : \lambda \ge 0\}`, i.e. :math:`\Delta u^* = -A^\top\lambda^*`
    with :math:`\lambda^*` the non-negative least-squares solution of
    :math:`A^\top\lambda \approx u_0` (no rank condition on :math:`A`).  It is solved on
    the competitors closest to the correct score and the working set is doubled until
    every constraint holds (relative violation below :math:`10^{-9}`).

    %(refs_lm_excess)s

    Examples
    --------
    Orthonormal candidates: the scores move independently and the cost is
    :math:`V_p` of the gaps (here one gap of 1 is shared half-half: :math:`V = 1/4`).

    >>> import numpy as np
    >>> Y = np.eye(3)
    >>> V, k = v_true(Y, np.array([0.0, 1.0, -2.0]))
    >>> print(f"{V:.6f} {k}")
    0.250000 1
    """
    Y = check_array("Y", Y, ndim=2)
    u0 = check_array("u0", u0, ndim=1)
    p, d = Y.shape
    check_int("p (rows of Y)", p, low=2)
    if u0.shape[0] != d:
        raise ValueError(f"u0 must have length {d} (the columns of Y), got {u0.shape[0]}")
    eta = Y @ u0
    A = Y[1:] - Y[0]
    gap = eta[1:] - eta[0]                       # A @ u0: positive where a competitor leads
    if gap.max() <= 0:
        return 0.0, 0
    order = np.argsort(-gap)
    tol = 1e-9 * (1.0 + np.abs(gap).max())
    K = min(p - 1, max(4, d // 2))
    while True:
        S = order[:K]
        lam, _ = nnls(A[S].T, u0, maxiter=50 * K)
        du = -A[S].T @ lam
        if (A @ (u0 + du)).max() <= tol or K == p - 1:
            return 0.5 * float(du @ du), int((lam > 0).sum())
        K = min(p - 1, 2 * K)


@dataclass(frozen=True)
@fill_doc
class GeometryV(Result):
    r"""Mean per-fact cost with the true geometry against :math:`V_p` on the same scores.

    Parameters
    ----------
    p : int
        Candidates per fact.
    d : int
        Dimension.
    candidates : str
        Law of the candidate vectors (:data:`CANDIDATE_LAWS`).
    v_true : hcizz.estimate.Estimate
        Mean of :math:`V_d` (:func:`v_true`) over the instances.
    v_scores : hcizz.estimate.Estimate
        Mean of :math:`V_p` evaluated on the same scores (independent-score cost).
    ratio : hcizz.estimate.Estimate
        :math:`E[V_d] / E[V_p]`, standard error by the delta method on the pairs.
    k_true : float
        Mean number of active competitors with the true geometry.
    k_scores : float
        Mean active-set size of :math:`V_p` on the same scores.

    See Also
    --------
    replica.geometry.v_geometry : Returns this record.

    %(refs_lm_excess)s

    Examples
    --------
    >>> res = v_geometry(30, 40, samples=20, rng=0)
    >>> print(type(res).__name__, res.p, res.d, res.candidates)
    GeometryV 30 40 gaussian
    """

    p: int
    d: int
    candidates: str
    v_true: Estimate
    v_scores: Estimate
    ratio: Estimate
    k_true: float
    k_scores: float

    @fill_doc
    def conf_int(self, alpha=0.05):
        """Return the normal-approximation interval of ``ratio``.

        %(conf_int_params)s

        %(ci_returns)s

        See Also
        --------
        hcizz.estimate.Estimate.conf_int : The interval it delegates to.

        Examples
        --------
        >>> lo, hi = v_geometry(30, 40, samples=20, rng=0).conf_int()
        >>> print(lo < hi)
        True
        """
        return self.ratio.conf_int(alpha)


@fill_doc
def v_geometry(p, d, *, samples=2000, candidates="gaussian", rng=None):
    r"""Estimate :math:`E[V_d]/E[V_p]`: the effect of the candidates' geometry on the cost.

    Parameters
    ----------
    p : int
        Candidates per fact (``2 <= p <= 100000``).
    d : int
        Dimension (``2 <= d <= 2000``).
    samples : int, optional
        Random instances (one fact each; ``1 <= samples <= 10**6``, default 2000).
    candidates : {"gaussian", "sphere"}, optional
        Law of the candidate vectors (:data:`CANDIDATE_LAWS`).
    rng : None, int or numpy.random.Generator, optional
        Source of randomness.

    Returns
    -------
    GeometryV
        Both means, their ratio with a paired standard error, and the active-set sizes.

    See Also
    --------
    replica.geometry.v_true : The per-instance minimum.
    replica.alpha_c_finite : The capacity :math:`\ln p/(2E[V_p])` whose :math:`V_p` this tests.

    Notes
    -----
    Each instance draws :math:`Y \in \mathbb R^{p\times d}` (candidates) and
    :math:`u_0 \sim N(0, I_d)`, so that the scores :math:`\eta = Y u_0` are, given
    :math:`u_0`, i.i.d. :math:`N(0, \|u_0\|^2/d)` for Gaussian candidates, as in the
    replica calculation.  A ratio below 1 means the true geometry makes storing a fact
    cheaper, i.e. a capacity above :func:`replica.alpha_c_finite` by the factor
    :math:`1/\mathrm{ratio}` (to first order, if the rest of the calculation is
    unchanged).  The standard error of the ratio :math:`R = \bar V_d/\bar V_p` is that
    of the mean of :math:`(V_d - R V_p)/\bar V_p`.

    %(refs_lm_excess)s

    Examples
    --------
    >>> res = v_geometry(164, 30, samples=200, rng=1)
    >>> print(f"{res.ratio.value:.3f} +- {res.ratio.stderr:.3f}")
    1.018 +- 0.023
    """
    p = check_int("p", p, low=2, high=100_000)
    d = check_int("d", d, low=2, high=2000)
    samples = check_int("samples", samples, low=1, high=10 ** 6)
    if candidates not in CANDIDATE_LAWS:
        raise ValueError(f"candidates must be one of {CANDIDATE_LAWS}, got {candidates!r}")
    rng = check_rng(rng)
    vt = np.empty(samples)
    vs = np.empty(samples)
    kt = np.empty(samples)
    ks = np.empty(samples)
    for i in range(samples):
        Y = rng.standard_normal((p, d)) / np.sqrt(d)
        if candidates == "sphere":
            Y /= np.linalg.norm(Y, axis=1, keepdims=True)
        u0 = rng.standard_normal(d)
        vt[i], kt[i] = v_true(Y, u0)
        eta = Y @ u0
        V, k, _ = v_p_from_gaps(np.sort(eta[1:] - eta[0])[::-1][None, :])
        vs[i], ks[i] = V[0], k[0]
    n = samples
    se = (lambda x: float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"))
    R = float(vt.mean() / vs.mean())
    return GeometryV(p=p, d=d, candidates=candidates,
                     v_true=Estimate(float(vt.mean()), se(vt), n),
                     v_scores=Estimate(float(vs.mean()), se(vs), n),
                     ratio=Estimate(R, se((vt - R * vs) / vs.mean()), n),
                     k_true=float(kt.mean()), k_scores=float(ks.mean()))
