r"""Exact decisions for top-1 recall at a margin and for the tail-average margin (TAM).

:mod:`validation.linear_memory.exact` decides whether a full-rank ``W``
recalls every fact (top-1, zero margin).  This module decides the two
criteria of ``docs/listwise.md`` for one instance, with certificates checked
by independent verifiers:

* **TAM at tail fraction tau**: with :math:`z_{\mu\rho} = v_{\mu\rho}^T W e_\mu` and
  :math:`k = \max(\tau (p - 1), 1)` (:func:`replica.listwise.tail_size`), fact
  :math:`\mu` is retrieved when :math:`z_{\mu\mu} - T_k(z_{\mu\rho}, \rho \neq \mu) \geq
  \gamma s(W)`, :math:`T_k` the tail mean of the ``k`` largest competitor scores
  (equation (1) of ``docs/listwise.md``, fractional ``k`` included);
* **top-1 at margin gamma**: the case :math:`k = 1` (:math:`T_1` is the largest
  competitor score).

The margin is in units of the competitor-score scale :math:`s(W) = \sigma_e \sigma_u
\|W\|_F` (:math:`\sigma_e^2`, :math:`\sigma_u^2`: mean squared entry of the inputs and of
all candidates; for standard normal data :math:`s(W) \sim \|W\|_F`, the standard
deviation of a competitor score), the unit of ``replica.tam_capacity`` and
``replica.alpha_c_finite(p, margin=)``.  At :math:`\gamma = 0` the criterion is
strict (:math:`> 0`), as top-1 recall is; :math:`W = 0` is not a memory.

**The decision.**  :math:`g_\mu(W) = z_{\mu\mu} - T_k(z_\mu)` is concave and
positively homogeneous, so the best margin :math:`\gamma^* = \max_W \min_\mu g_\mu(W) /
s(W)` decides every ``gamma`` at once: feasible iff :math:`\gamma^* \geq \gamma`
(:math:`> 0` at :math:`\gamma = 0`).  Since :math:`T_k(a) = \max_{w \in \Delta_k} w \cdot a` with
:math:`\Delta_k = \{0 \leq w_j \leq 1/k, \sum w = 1\}`, :math:`g_\mu(W) = \min_w \langle a_\mu(w), W \rangle`
with :math:`a_\mu(w) = (c_\mu - \sum_\rho w_\rho v_{\mu\rho}) e_\mu^T`, and
:math:`\gamma^* s = \mathrm{dist}(0, \mathrm{conv}\{a_\mu(w)\})` (the minimum-norm point of a polytope
whose vertices are the :math:`a_\mu(w)` at the vertices ``w`` of :math:`\Delta_k`: the
:math:`\lceil k \rceil - 1` largest competitors at weight :math:`1/k` and the next at the
remaining weight).  Both sides give certificates:

* any ``W``: :math:`\gamma^* \geq \min_\mu g_\mu(W) / s(W)` (:func:`verify_listwise_feasible`);
* any weights :math:`\lambda_i \geq 0` on vertices ``(mu_i, w_i)``: for every ``W``,
  :math:`\sum_i \lambda_i g_{\mu_i}(W) \leq \langle X, W \rangle \leq \|X\| \|W\|` with :math:`X = \sum_i
  \lambda_i a_{\mu_i}(w_i)`, so :math:`\gamma^* \leq \|X\| / (\sigma_e \sigma_u \sum_i
  \lambda_i)` (:func:`verify_listwise_infeasible`).

The solver (:func:`listwise_feasibility`) is Lawson-Hanson on
:math:`\min_{\lambda \geq 0} \|\sum_i \lambda_i a_i\|^2 + (\sum_i \lambda_i - 1)^2` with
vertex generation: each outer iteration computes the exact tail mean of every
fact under the current :math:`x = \sum \lambda_i a_i` (one sort per fact), adds the
most violated vertices, and re-solves on the active vertices with the
Cholesky factor of their Gram matrix :math:`(\delta_i \cdot \delta_j)(e_i \cdot e_j) + 1`
kept up to date.  At the optimum :math:`\gamma^* s = \|x\| / (1 + s)` with :math:`s =
\sum \lambda - 1`, and the two bounds above meet; the solver stops at the first
bound that decides ``gamma``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.linalg.lapack import dtpqrt as _dtpqrt

from hcizz.checks import check_int, check_real
from validation.engine.trials import trial

from .capacity import ThresholdEstimate
from .exact import DEFAULT_TOL, _ActiveSet, _Decision, _Factor
from ._docparams import fill_doc

__all__ = ["ListwiseResult", "listwise_feasibility", "listwise_margins", "verify_listwise_feasible",
           "verify_listwise_infeasible", "score_unit", "listwise_exact_trial", "CRITERIA",
           "listwise_load", "listwise_prediction", "listwise_params", "ListwiseCapacity",
           "measure_listwise_capacity", "listwise_capacity_from_records", "hebbian_listwise_trial",
           "HEBBIAN_TAUS"]

#: The criteria decided here.
CRITERIA = ("top1", "tam")


@fill_doc
@dataclass
class ListwiseResult(_Decision):
    r"""Outcome of :func:`listwise_feasibility`.

    Parameters
    ----------
    feasible : bool or None
        True: a memory meets the criterion at margin ``gamma`` (``W``
        certifies it); False: none does (``cert`` certifies it; at :math:`\gamma =
        0` up to the tolerance ``tol``); None: undecided (a tie
        :math:`|\gamma^* - \gamma|` below the solver's resolution, or the iteration
        limit).
    margin : float
        Feasible: the certified margin :math:`\min_\mu g_\mu(W) / s(W)` of ``W``;
        infeasible: the certified upper bound on the margin of every ``W``.
    W : ndarray (d, d) or None
        Feasibility certificate (for the facts as given).
    optimal : bool
        The minimum-norm problem was solved to optimality (``gamma_low`` and
        ``gamma_high`` then agree to rounding).
    active, iterations, removals : int
        Active vertices, outer iterations, active-set removals.
    seconds : float
        Wall time.
    verified : bool or None
        The returned certificate passed its verifier (None: undecided).
    info : dict
        Verifier report under ``"verification"``.
    gamma_low, gamma_high : float
        Certified bracket of the best margin :math:`\gamma^*` at the last iterate
        (``gamma_low`` may be negative or nan before the first iterate).
    k : float
        Tail size (1 for top-1).
    cert : dict or None
        Infeasibility certificate: ``mu`` (m,), ``idx`` (m, ceil(k))
        competitor indices of each vertex, largest first (the last one at the
        fractional weight), ``lam`` (m,) weights.

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_feasibility : Solver whose decision, bracket and certificate this records.

    %(ref_exact_decisions)s
    """

    gamma_low: float = math.nan
    gamma_high: float = math.nan
    k: float = 1.0
    cert: dict | None = None

    def _summary_extra(self):
        return {"gamma_low": float(self.gamma_low), "gamma_high": float(self.gamma_high), "k": float(self.k)}

class _ListFactor(_Factor):
    """The Cholesky factor of :mod:`validation.linear_memory.exact`, stored column-major, with
    deletions by one LAPACK call instead of a Python loop of Givens rotations.

    :math:`T^T T + v v^T` is :math:`R^T R` for the ``R`` of the QR factorisation of
    :math:`[T; v^T]`, a triangle over one row, which ``dtpqrt`` factors in :math:`O(m^2)`
    without forming ``Q``.  In a column-major buffer the trailing block ``T`` is a set of
    contiguous column pieces, so it goes to LAPACK and back by plain copies, and the first
    ``n`` columns are ``R`` with leading dimension ``cap`` for ``dtrtrs``.
    """

    def __init__(self, cap):
        super().__init__(cap)
        self.buf = np.zeros((cap, cap), order="F")

    def _tri(self, trans):
        return self.buf[:, :self.n], 0, 1 - trans      # R itself (upper, lda = cap): R^T y = b is trans=1

    def _update(self, T, v):
        m = T.shape[0]
        a, _, _, info = _dtpqrt(0, min(32, m), np.asfortranarray(T), v[None, :], overwrite_a=1, overwrite_b=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"dtpqrt info={info}")
        neg = np.diag(a) < 0                             # Householder reflections may flip a row
        if neg.any():
            a[neg] *= -1.0
        T[:] = a


def _arrays(facts):
    """``(kind, E, U, C)`` in float64 with checks (``C``: correct candidates)."""
    kind = getattr(facts, "kind", None)
    if kind not in ("op", "dp"):
        raise ValueError(f"facts.kind must be 'op' or 'dp', got {kind!r}")
    E = np.asarray(facts.E, np.float64)
    U = np.asarray(facts.U, np.float64)
    if E.ndim != 2 or E.shape[0] < 2 or E.shape[1] < 1:
        raise ValueError(f"facts.E must be a (p, d) array with p >= 2, d >= 1, got shape {E.shape}")
    p, d = E.shape
    want = (p, d) if kind == "op" else (p, p, d)
    if U.shape != want:
        raise ValueError(f"facts.U must have shape {want} for {kind} facts, got {U.shape}")
    if not (np.all(np.isfinite(E)) and np.all(np.isfinite(U))):
        raise ValueError("facts.E and facts.U must be finite")
    C = U if kind == "op" else U[np.arange(p), np.arange(p)]
    return kind, E, U, C


@fill_doc
def score_unit(facts):
    r"""Return :math:`\sigma_e \sigma_u`: the competitor-score scale per unit :math:`\|W\|_F`.

    Parameters
    ----------
    %(facts)s

    Returns
    -------
    float
        Root mean square entry of the inputs times that of all candidates
        (1 in expectation for standard normal data).

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_margins : Margins of every fact, in this unit.

    %(ref_exact_decisions)s

    Examples
    --------
    >>> from validation.linear_memory.data import Facts
    >>> import numpy as np
    >>> print(score_unit(Facts("op", 2 * np.ones((3, 2)), 3 * np.ones((3, 2)))))
    6.0
    """
    _, E, U, _ = _arrays(facts)
    return math.sqrt(float(np.mean(E * E))) * math.sqrt(float(np.mean(U * U)))


def _tail_k(criterion, tau, p):
    from replica.listwise import tail_size

    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if criterion == "top1":
        if tau is not None:
            raise ValueError(f"tau must be None for criterion='top1', got {tau!r}")
        return 1.0
    if tau is None:
        raise ValueError("tau is required for criterion='tam' (0 < tau <= 1)")
    return float(tail_size(tau, p))


def _scores(kind, E, U, C, W):
    r"""All scores :math:`z_{\mu\rho}` (p, p) of ``W``."""
    H = E @ W.T                                            # rows W e_mu
    if kind == "op":
        return H @ U.T
    return (U @ H[:, :, None])[:, :, 0]                   # batched (p, d) @ (d, 1)


def _tail(Z, k):
    """Correct-minus-tail-mean margins (p,) and the tail vertex (p, K) of score rows ``Z``."""
    p = Z.shape[0]
    K = int(math.ceil(k - 1e-12))
    comp = Z.copy()
    comp[np.arange(p), np.arange(p)] = -np.inf
    part = np.argpartition(-comp, K - 1, axis=1)[:, :K]
    vals = np.take_along_axis(comp, part, 1)
    order = np.argsort(-vals, axis=1, kind="stable")
    idx = np.take_along_axis(part, order, 1)
    w = _weights(k)
    T = np.take_along_axis(comp, idx, 1) @ w
    return np.diag(Z) - T, idx


def _weights(k):
    K = int(math.ceil(k - 1e-12))
    w = np.full(K, 1.0 / k)
    w[-1] = (k - (K - 1)) / k
    return w


@fill_doc
def listwise_margins(facts, W, *, criterion="tam", tau=None):
    r"""Return the margins :math:`g_\mu(W) = z_{\mu\mu} - T_k(z_\mu)` of every fact, in score units.

    Parameters
    ----------
    %(facts)s
    W : array_like (d, d)
        Memory.
    criterion : {"top1", "tam"}
        Top-1 (:math:`k = 1`) or tail-average margin.
    tau : float, optional
        Tail fraction (``tam`` only).

    Returns
    -------
    ndarray (p,)
        :math:`g_\mu(W) / s(W)` (:func:`score_unit`); a fact meets the criterion at
        margin ``gamma`` when its entry is :math:`\geq \gamma`.

    See Also
    --------
    validation.linear_memory.exact_listwise.score_unit : Competitor-score scale in which margins are measured.
    validation.linear_memory.exact_listwise.verify_listwise_feasible : Certificate check built on these margins.

    References
    ----------
    docs/listwise.md#the-tam-criterion

    Examples
    --------
    >>> from validation.linear_memory.data import make_op
    >>> f = make_op(5, 8, rng=0)
    >>> g1 = listwise_margins(f, np.eye(8), criterion="top1")
    >>> g2 = listwise_margins(f, np.eye(8), tau=1.0)
    >>> bool(np.all(g2 >= g1))                     # the mean is below the maximum
    True
    """
    kind, E, U, C = _arrays(facts)
    k = _tail_k(criterion, tau, E.shape[0])
    W = np.asarray(W, np.float64)
    if W.shape != (E.shape[1],) * 2:
        raise ValueError(f"W must have shape {(E.shape[1],) * 2}, got {W.shape}")
    g, _ = _tail(_scores(kind, E, U, C, W), k)
    nw = float(np.linalg.norm(W))
    return g / (score_unit(facts) * nw) if nw > 0 else g * math.nan


@fill_doc
def verify_listwise_feasible(facts, W, *, criterion="tam", tau=None, margin=0.0):
    r"""Check a feasibility certificate directly on the facts as given.

    Parameters
    ----------
    %(facts)s
    W : array_like (d, d)
        Candidate memory.
    criterion : {"top1", "tam"}
        As in :func:`listwise_margins`.
    tau : float, optional
        As in :func:`listwise_margins`.
    margin : float
        Margin :math:`\gamma \geq 0` to certify.

    Returns
    -------
    dict
        ``margin`` (:math:`\min_\mu g_\mu(W) / s(W)`, computed from sorted scores in
        float64) and ``ok`` (``margin >= gamma``, strictly :math:`> 0` at
        :math:`\gamma = 0`).

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_margins : Per-fact margins that are checked.
    validation.linear_memory.exact_listwise.verify_listwise_infeasible : Counterpart for certificates of infeasibility.

    %(ref_exact_decisions)s
    """
    margin = check_real("margin", margin, low=0, allow_array=False)
    g = listwise_margins(facts, W, criterion=criterion, tau=tau)
    m = float(np.min(g)) if np.all(np.isfinite(g)) else -math.inf
    ok = m > 0 if margin == 0 else m >= margin
    return {"ok": bool(ok), "margin": m}


@fill_doc
def verify_listwise_infeasible(facts, cert, *, criterion="tam", tau=None, margin=0.0, tol=DEFAULT_TOL):
    r"""Check an infeasibility certificate: an upper bound on the margin of every ``W``.

    Parameters
    ----------
    %(facts)s
    cert : dict
        ``mu`` (m,), ``idx`` (m, ceil(k)) distinct competitor indices
        (``!= mu``) of each vertex, ``lam`` (m,) weights :math:`\geq 0`, not all 0.
    criterion : {"top1", "tam"}
        As in :func:`listwise_margins`.
    tau : float, optional
        As in :func:`listwise_margins`.
    margin : float
        Margin :math:`\gamma \geq 0` the bound must fall below.
    tol : float
        At :math:`\gamma = 0`: the bound must be ``<= tol``.

    Returns
    -------
    dict
        ``bound`` :math:`= \|X\|_F / (s \sum \lambda)` with :math:`X = \sum_i \lambda_i
        (c_{\mu_i} - \sum_j w_j v_{\mu_i, \mathrm{idx}_{ij}}) e_{\mu_i}^T` formed here from the
        facts (``w`` the tail weights :math:`1/k, \ldots, 1/k, (k - \lceil k \rceil + 1)/k`),
        and ``ok`` (valid certificate and ``bound < gamma``, or ``<= tol`` at
        :math:`\gamma = 0`).

    See Also
    --------
    validation.linear_memory.exact_listwise.verify_listwise_feasible : Counterpart for certificates of feasibility.

    Notes
    -----
    Every vertex weight vector lies in :math:`\Delta_k`, so :math:`\langle a_{\mu_i}(w_i), W \rangle \geq
    g_{\mu_i}(W)` for every ``W``, and :math:`\min_\mu g_\mu(W) \sum \lambda \leq \|X\| \|W\|`:
    no memory has margin above ``bound``.

    %(ref_exact_decisions)s
    """
    margin = check_real("margin", margin, low=0, allow_array=False)
    tol = check_real("tol", tol, low=0, allow_array=False)
    kind, E, U, C = _arrays(facts)
    p = E.shape[0]
    k = _tail_k(criterion, tau, p)
    K = int(math.ceil(k - 1e-12))
    mu = np.asarray(cert["mu"])
    idx = np.asarray(cert["idx"])
    lam = np.asarray(cert["lam"], np.float64)
    bad = {"ok": False, "bound": math.inf}
    if (mu.ndim != 1 or idx.shape != (mu.size, K) or lam.shape != mu.shape or mu.size == 0
            or not np.issubdtype(mu.dtype, np.integer) or not np.issubdtype(idx.dtype, np.integer)):
        return bad
    if not (np.all((0 <= mu) & (mu < p)) and np.all((0 <= idx) & (idx < p)) and np.all(np.isfinite(lam))
            and np.all(lam >= 0) and lam.sum() > 0):
        return bad
    if np.any(idx == mu[:, None]):
        return bad
    srt = np.sort(idx, axis=1)
    if K > 1 and np.any(srt[:, 1:] == srt[:, :-1]):
        return bad
    w = _weights(k)
    V = U[idx] if kind == "op" else U[mu[:, None], idx]       # (m, K, d)
    Dl = C[mu] - np.einsum("k,mkd->md", w, V)
    X = np.einsum("m,mi,mj->ij", lam, Dl, E[mu], optimize=True)
    bound = float(np.linalg.norm(X)) / (score_unit(facts) * float(lam.sum()))
    ok = bound <= tol if margin == 0 else bound < margin
    return {"ok": bool(ok), "bound": bound}


def listwise_feasibility(facts, *, criterion="tam", tau=None, margin=0.0, tol=DEFAULT_TOL, batch=None,
                         max_iter=None, optimal=False, verify=True):
    r"""Decide whether a full-rank memory meets the top-1 or TAM criterion at a margin.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set (:mod:`validation.linear_memory.data`), :math:`p \geq 2`.
    criterion : {"top1", "tam"}
        Top-1 recall at margin ``gamma`` or the tail-average margin at tail
        fraction ``tau`` (see the module docstring).
    tau : float, optional
        Tail fraction :math:`0 < \tau \leq 1` (``tam`` only); :math:`k = \max(\tau (p - 1), 1)`.
    margin : float
        :math:`\gamma \geq 0` in units of the competitor-score scale (:func:`score_unit`).
    tol : float
        At :math:`\gamma = 0`: an instance is called infeasible when the certified
        bound on the best margin is ``<= tol`` (default ``1e-9``).
    batch : int, optional
        Vertices added per outer iteration (default ``max(16, d^2 // 40)``).
    max_iter : int, optional
        Outer iterations before giving up (default :math:`20 d^2`).
    optimal : bool
        Continue to the optimum (the bracket ``gamma_low, gamma_high`` then
        gives :math:`\gamma^*`), even after a decision; a feasible result's
        ``W`` is then the optimal memory itself, verified, with ``margin``
        :math:`\approx \gamma^*` (until this release: the first memory certified).
    verify : bool
        Check the certificate with the verifiers before returning.

    Returns
    -------
    ListwiseResult
        Decision, certificate and the certified bracket of :math:`\gamma^*`.

    Raises
    ------
    ValueError
        Bad ``facts``, ``criterion``, ``tau``, ``margin``, ``tol``, ``batch``
        or ``max_iter``.

    See Also
    --------
    validation.linear_memory.exact_listwise.verify_listwise_feasible : Independent check of a memory meeting the criterion.
    validation.linear_memory.exact_listwise.verify_listwise_infeasible : Independent check of a bound on every memory's margin.
    validation.linear_memory.exact.exact_feasibility : Top-1 recall at margin 0, with screened pair margins.

    Notes
    -----
    The data are scaled by :math:`1/\sigma_e` and :math:`1/\sigma_u` inside (the
    decision is invariant: margins are measured in units of :math:`\sigma_e
    \sigma_u \|W\|_F`); certificates are verified on the facts as given.  The
    solver stops at the first verified bound that decides ``gamma``; when
    the problem is solved to optimality without one (:math:`\gamma^*` within about
    ``1e-10`` of ``gamma``) the result is undecided.

    References
    ----------
    Lawson & Hanson, *Solving Least Squares Problems* (1974), ch. 23;
    listwise retrieval arXiv:2605.05189; docs/listwise.md.

    Examples
    --------
    >>> from validation.linear_memory.data import make_op
    >>> r = listwise_feasibility(make_op(15, 6, rng=0), tau=0.2, optimal=True)
    >>> r.feasible, r.verified, bool(abs(r.gamma_high - r.gamma_low) < 1e-9)
    (True, True, True)
    >>> r2 = listwise_feasibility(make_op(15, 6, rng=0), tau=0.2, margin=r.gamma_high * 1.001)
    >>> r2.feasible, r2.verified
    (False, True)
    """
    kind, E0, U0, C0 = _arrays(facts)
    p, d = E0.shape
    k = _tail_k(criterion, tau, p)
    margin = check_real("margin", margin, low=0, allow_array=False)
    tol = check_real("tol", tol, low=0, low_open=True, allow_array=False)
    batch = max(16, d * d // 40) if batch is None else check_int("batch", batch, low=1)
    max_iter = 20 * d * d if max_iter is None else check_int("max_iter", max_iter, low=1)
    t0 = time.perf_counter()
    se = math.sqrt(float(np.mean(E0 * E0)))
    su = math.sqrt(float(np.mean(U0 * U0)))
    if se == 0 or su == 0:
        res = ListwiseResult(None, math.nan, k=k)
        res.info["reason"] = "all inputs or all candidates are zero"
        return res
    E, U, C = E0 / se, U0 / su, C0 / su
    wts = _weights(k)
    kw = {"criterion": criterion, "tau": tau, "margin": margin}

    def deltas(mu, idx):
        V = U[idx] if kind == "op" else U[mu[:, None], idx]
        return C[mu] - np.einsum("k,mkd->md", wts, V)

    hole_limit = max(32, (d * d + 1) // 10)
    cap = d * d + 1 + hole_limit
    fac = _ListFactor(cap)
    A = _ActiveSet(fac, E, (len(wts),))                 # A.idx: the K tail candidates of a vertex
    keys = set()
    x = np.zeros((d, d))
    s = -1.0
    res = None
    lo_b, hi_b = -math.inf, math.inf
    n_rem = 0
    single = precise = False
    it = 0

    def decide(cand, feasible):
        if verify:
            v = (verify_listwise_feasible(facts, cand.W, **kw) if feasible else
                 verify_listwise_infeasible(facts, cand.cert, tol=tol, **kw))
            cand.info["verification"] = v
            cand.verified = bool(v["ok"])
            cand.margin = v["margin"] if feasible else v["bound"]
            return cand.verified
        return True

    for it in range(1, max_iter + 1):
        n = fac.n
        act = ~fac.hole[:n]
        n_act = int(act.sum())
        if n_act:
            g, vidx = _tail(_scores(kind, E, U, C, x), k)
        else:
            g, vidx = _tail(_scores(kind, E, U, C, C.T @ E), k)    # Hebbian start
        # --- certificates: the bracket of gamma* -------------------------------------------
        if n_act:
            nx = float(np.linalg.norm(x))
            lo_b = float(g.min()) / nx if nx > 0 else -math.inf
            hi_b = nx / (1.0 + s)
            if res is None and (lo_b > 0 if margin == 0 else lo_b >= margin):
                cand = ListwiseResult(True, lo_b, W=x.copy())
                if decide(cand, True):
                    res = cand
                    if not optimal:
                        break
                else:
                    precise = True
            if res is None and (hi_b <= tol if margin == 0 else hi_b < margin):
                sel = np.nonzero(act & (A.lam > 0))[0]
                cand = ListwiseResult(False, hi_b, cert={"mu": A.mu[sel].copy(), "idx": A.idx[sel].copy(),
                                                         "lam": A.lam[sel] / (se * su)})
                if decide(cand, False):
                    res = cand
                    if not optimal:
                        break
                else:
                    precise = True
        # --- violated vertices -----------------------------------------------------------
        y = g + s if n_act else np.full(p, -1.0)
        gtol = 1e-12 if precise else 1e-7
        bad = np.nonzero(y < -gtol)[0]
        bad = np.array([m for m in bad.tolist() if (m, *vidx[m].tolist()) not in keys], np.intp)
        if bad.size == 0:
            if not precise:
                precise = True
                continue
            if res is not None:
                if optimal and res.feasible:            # the optimum itself, not the first certified memory
                    best = ListwiseResult(True, float(g.min()) / float(np.linalg.norm(x)), W=x.copy())
                    if decide(best, True):
                        res = best
                res.optimal = True
            else:
                res = ListwiseResult(None, math.nan, optimal=True)
            break
        if n + min(batch, p) > cap:
            A.compact()
            n = fac.n
            act = np.ones(n, bool)
        nb = 1 if single else min(batch if n_act else p, bad.size, cap - n, d * d + 1 - n_act)
        if nb <= 0:
            break
        rows = bad[np.argsort(y[bad], kind="stable")[:nb]]
        cols = vidx[rows]
        kept = A.add(rows, cols, deltas(rows, cols), act)
        if not kept:
            if single:
                break
            single = True
            continue
        for j in kept:
            keys.add((int(rows[j]), *cols[j].tolist()))
        act = ~fac.hole[:fac.n]
        for j in A.solve(act, precise):                   # Lawson-Hanson inner loop
            keys.discard((int(A.mu[j]), *A.idx[j].tolist()))
            n_rem += 1
        single = not any((int(rows[j]), *cols[j].tolist()) in keys for j in kept)
        if int(fac.hole[:fac.n].sum()) > hole_limit:
            A.compact()
        x, s = A.memory()
    if res is None:
        res = ListwiseResult(None, math.nan)
    res.k = k
    res.gamma_low, res.gamma_high = lo_b, hi_b
    res.active = int((~fac.hole[:fac.n]).sum())
    res.iterations, res.removals = it, n_rem
    res.seconds = time.perf_counter() - t0
    return res


def _trial_facts(params):
    """``(d, p, facts)`` of a trial record (``model``, ``d``, ``n``, ``seed``): checked, then
    drawn in float32 from the fact generator of :func:`validation.linear_memory.data.trial_rngs`."""
    from .data import make_facts, trial_rngs

    model = params["model"]
    if model not in ("op", "dp"):
        raise ValueError(f"model must be 'op' or 'dp', got {model!r}")
    d = check_int("d", params["d"], low=1)
    p = check_int("n", params["n"], low=2)
    rf, _ = trial_rngs(params["seed"], d, p)
    return d, p, make_facts(model, p, d, rng=rf, dtype=np.float32)


@fill_doc
@trial("linear_memory.listwise_exact")
def listwise_exact_trial(params):
    r"""One exact listwise / margin decision (module level, for the sweep engine).

    Parameters
    ----------
    params : dict
        ``model`` ("op"/"dp"), ``d``, ``n`` (number of facts ``p``),
        ``criterion`` ("top1"/"tam"), ``tau`` (tam; None for top1),
        ``margin``, ``seed``; optional ``inputs``: ``"gaussian"`` (default,
        the facts as drawn) or ``"sphere"`` (every input and candidate
        rescaled to norm :math:`\sqrt{d}`, which removes the norm fluctuations the
        Gaussian-equivalent theory ignores).  The facts are drawn as in
        :func:`validation.linear_memory.exact.exact_trial` (same generator for
        the same ``(d, p, seed)``, float32 draws).

    Returns
    -------
    dict
        ``p``, ``load_quadratic`` (:math:`p / d^2`), ``success`` (None if
        undecided) and the ``ListwiseResult.summary()`` fields, with
        ``cpu_seconds``.

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_params : One record per number of facts and seed.
    validation.linear_memory.exact_listwise.listwise_feasibility : Exact decision made by each trial.

    %(ref_exact_decisions)s
    """
    c0 = time.process_time()
    d, p, facts = _trial_facts(params)
    inputs = params.get("inputs", "gaussian")
    if inputs == "sphere":
        from .data import Facts

        def unit(X):
            X = np.asarray(X, np.float64)
            return X * (math.sqrt(d) / np.linalg.norm(X, axis=-1, keepdims=True))

        facts = Facts(facts.kind, unit(facts.E), unit(facts.U))
    elif inputs != "gaussian":
        raise ValueError(f"inputs must be 'gaussian' or 'sphere', got {inputs!r}")
    r = listwise_feasibility(facts, criterion=params["criterion"], tau=params.get("tau"),
                             margin=params.get("margin", 0.0))
    out = r.summary()
    out.update(p=p, load_quadratic=p / d**2, success=r.feasible, cpu_seconds=time.process_time() - c0)
    return out


def listwise_load(criterion, n, d):
    r"""Return the load of ``n`` facts in dimension ``d`` in the criterion's units.

    Parameters
    ----------
    criterion : {"top1", "tam"}
        ``"tam"``: :math:`n / d^2` (the quadratic scale of ``replica.tam_capacity``);
        ``"top1"``: :math:`n \ln n / d^2` (that of ``replica.alpha_c_finite``).
    n : int or array_like
        Number of facts.
    d : int
        Dimension.

    Returns
    -------
    float or ndarray
        The load.

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_prediction : Replica prediction, on this load scale.

    References
    ----------
    docs/listwise.md#the-tam-criterion

    Examples
    --------
    >>> print(listwise_load("tam", 100, 10), round(listwise_load("top1", 100, 10), 4))
    1.0 4.6052
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    n = np.asarray(n, np.float64)
    out = n / d**2 if criterion == "tam" else n * np.log(n) / d**2
    return float(out) if out.ndim == 0 else out


def listwise_prediction(criterion, d, *, tau=None, margin=0.0, samples=20_000, rng=0):
    r"""Return the replica prediction at dimension ``d``: the fixed point :math:`n = n(\alpha_c(n))`.

    Parameters
    ----------
    criterion : {"top1", "tam"}
        Top-1 at margin ``gamma`` (:func:`replica.alpha_c_finite`) or TAM at
        tail fraction ``tau`` (:func:`replica.tam_capacity`).
    d : int
        Dimension (>= 2).
    tau : float, optional
        Tail fraction (``tam`` only).
    margin : float
        Margin :math:`\gamma \geq 0` in competitor-score units.
    samples : int
        Monte Carlo samples per evaluation.
    rng : int
        Seed, the same for every evaluation (common random numbers).

    Returns
    -------
    dict
        ``value`` (the load, :func:`listwise_load` units, at the fixed point
        ``load = alpha_c(tau or margin, n)``), ``stderr`` (the Monte Carlo error
        of ``alpha_c`` at the fixed point), ``p`` (facts there), ``limit``
        (large-``p`` value: :math:`1/\Gamma(\kappa_\tau + \gamma)` for TAM, 1/2 for
        top-1), ``name``.

    See Also
    --------
    replica.tam_capacity : Capacity under the tail-average margin.
    replica.alpha_c_finite : Finite-``p`` capacity under top-1 recall.

    References
    ----------
    docs/listwise.md#finite-p-corrections

    Examples
    --------
    >>> r = listwise_prediction("tam", 20, tau=0.2, samples=4000)
    >>> r["p"], round(r["value"], 2)
    (142, 0.35)
    """
    from replica import alpha_c_finite, p_from_load, tam_capacity

    d = check_int("d", d, low=2)
    _tail_k(criterion, tau, 2)
    margin = check_real("margin", margin, low=0, allow_array=False)

    def g(n):
        if criterion == "tam":
            return tam_capacity(tau, n, margin=margin, samples=samples, rng=rng)
        return alpha_c_finite(n, margin=margin, samples=samples, rng=rng)

    def n_of(a):
        return max(2, int(round(a * d * d))) if criterion == "tam" else max(2, int(p_from_load(a, d)))

    a = float(tam_capacity(tau, margin=margin)) if criterion == "tam" else 0.9
    seen = []
    for _ in range(30):
        n = n_of(a)
        if n in seen:
            break
        seen.append(n)
        a = float(g(n).value)
    n = n_of(a)
    est = g(n)
    limit = float(tam_capacity(tau, margin=margin)) if criterion == "tam" else 0.5
    name = (f"tam_capacity(tau={tau:g}, n, margin={margin:g}) fixed point" if criterion == "tam"
            else f"alpha_c_finite(p, margin={margin:g}) fixed point")
    return {"value": float(est.value), "stderr": float(est.stderr), "p": int(n), "limit": limit, "name": name}


@fill_doc
def listwise_params(model, d, ns, seeds, *, criterion, tau=None, margin=0.0, inputs=None):
    r"""Return the parameter records (one per ``n`` and seed) of :func:`listwise_exact_trial`.

    Parameters
    ----------
    model : {"op", "dp"}
        Fact model.
    d : int
        Dimension.
    ns : sequence of int
        Numbers of facts.
    seeds : sequence of int
        Seeds.
    criterion : {"top1", "tam"}
        Criterion.
    tau : float, optional
        Tail fraction (``tam``).
    margin : float
        Margin.
    inputs : {None, "sphere"}
        ``"sphere"``: inputs and candidates rescaled to norm :math:`\sqrt{d}`
        (:func:`listwise_exact_trial`); None: as drawn (no key in the record).

    Returns
    -------
    list of dict
        The records.

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_exact_trial : Decides one instance per record.

    %(ref_exact_decisions)s
    """
    extra = {} if inputs is None else {"inputs": inputs}
    return [{"model": model, "d": int(d), "n": int(n), "criterion": criterion,
             "tau": None if tau is None else float(tau), "margin": float(margin), "seed": int(s), **extra}
            for n in ns for s in seeds]


@fill_doc
@dataclass(frozen=True, kw_only=True)
class ListwiseCapacity(ThresholdEstimate):
    """Result of :func:`measure_listwise_capacity`: an exact threshold next to its prediction.

    Parameters
    ----------
    %(fact_model)s
    d : int
        Dimension.
    %(case)s
    threshold, ci_low, ci_high, width : float
        Logistic fit of the decisions against the load (:func:`listwise_load`).
    counts : list
        ``[load, feasible, decided]`` rows.
    theory : dict
        :func:`listwise_prediction`.
    trials, undecided, unverified : int
        Instances, undecided ones, decided ones whose certificate did not verify
        (trained: runs, 0, successes whose memory failed the verifier).
    cpu_seconds : float
        Summed CPU time of the decisions (or of the training runs).
    method : {"exact", "train"}
        Exact decisions (does a memory exist?) or trained successes (did Adam find one?).

    See Also
    --------
    validation.linear_memory.exact_listwise.measure_listwise_capacity : Sweep and fit that build this record.
    validation.linear_memory.train_listwise.measure_trained_listwise_capacity : The same from trained runs.

    %(ref_exact_decisions)s
    """

    model: str
    d: int
    criterion: str
    tau: float | None
    margin: float
    threshold: float
    ci_low: float
    ci_high: float
    width: float
    counts: list
    theory: dict
    trials: int
    undecided: int
    unverified: int
    cpu_seconds: float
    method: str = "exact"


def _sweep_args(model, d, criterion, tau, margin, seeds, ns, n_loads, rel, theory):
    """Check the arguments of a listwise sweep (exact or trained); the sizes and the prediction."""
    if model not in ("op", "dp"):
        raise ValueError(f"model must be 'op' or 'dp' for listwise sweeps, got {model!r}")
    d = check_int("d", d, low=2)
    _tail_k(criterion, tau, 2)
    margin = check_real("margin", margin, low=0, allow_array=False)
    seeds = check_int("seeds", seeds, low=1)
    n_loads = check_int("n_loads", n_loads, low=2)
    rel = check_real("rel", rel, low=0, high=1, low_open=True, high_open=True, allow_array=False)
    if ns is not None:
        ns = sorted({check_int("ns", v, low=2) for v in np.atleast_1d(np.asarray(ns, dtype=object))})
    if theory is None:
        theory = listwise_prediction(criterion, d, tau=tau, margin=margin)
    if ns is None:
        ns = sorted({max(2, int(round(theory["p"] * f))) for f in np.linspace(1 - rel, 1 + rel, n_loads)})
    return d, margin, seeds, ns, theory


@fill_doc
def measure_listwise_capacity(model, d, *, criterion="tam", tau=None, margin=0.0, seeds=4, ns=None,
                              n_loads=7, rel=0.25, seed0=0, store=None, workers=None, executor="processes",
                              progress=True, runner=None, theory=None, method="exact"):
    r"""Measure the exact threshold of one criterion at one ``d`` and set it next to theory.

    Parameters
    ----------
    model : {"op", "dp"}
        Fact model.
    d : int
        Dimension (>= 2).
    criterion : {"top1", "tam"}
        Criterion.
    %(listwise_grid)s
    %(sweep_args)s
    runner : callable, optional
        ``runner(params) -> records`` (e.g. a study's runner); then ``store``,
        ``workers``, ``executor``, ``progress`` are not used.
    theory : dict, optional
        A precomputed :func:`listwise_prediction` (default: computed here).
    method : {"exact"}
        Exact decisions only (checked; trained runs on the same instances:
        :func:`~validation.linear_memory.train_listwise.measure_trained_listwise_capacity`).

    Returns
    -------
    ListwiseCapacity
        The threshold and its prediction.

    Raises
    ------
    ValueError
        Any argument out of range (checked before any decision).

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_exact_trial : A single exact decision of the sweep.
    validation.linear_memory.exact_listwise.listwise_prediction : Replica prediction reported beside the threshold.

    %(ref_exact_decisions)s
    """
    if method != "exact":
        raise ValueError(f"method must be 'exact' here, got {method!r} (trained runs: "
                         "validation.linear_memory.train_listwise.measure_trained_listwise_capacity)")
    d, margin, seeds, ns, theory = _sweep_args(model, d, criterion, tau, margin, seeds, ns, n_loads, rel, theory)
    params = listwise_params(model, d, ns, range(seed0, seed0 + seeds), criterion=criterion, tau=tau,
                             margin=margin)
    if runner is None:
        from validation.engine import run_sweep

        recs = run_sweep(listwise_exact_trial, params, store=store, workers=workers, executor=executor,
                         progress=progress, label=f"listwise {criterion} {model} d={d}")
    else:
        recs = runner(params)
    return listwise_capacity_from_records(model, d, criterion, tau, margin, recs, theory)


def listwise_capacity_from_records(model, d, criterion, tau, margin, records, theory, method="exact"):
    r"""Fit the threshold of sweep records (exact decisions or trained runs) and set it next to theory.

    Parameters
    ----------
    model : {"op", "dp"}
        Fact model.
    d : int
        Dimension.
    criterion : {"top1", "tam"}
        Criterion.
    tau : float or None
        Tail fraction (``tam``).
    margin : float
        Margin.
    records : list of dict or None
        Sweep records (:func:`validation.engine.run_sweep`); a record's
        ``result`` has ``p``, ``success`` (None: undecided), ``verified`` and
        ``cpu_seconds``.  Records that are None or not ``ok`` are left out.
    theory : dict
        :func:`listwise_prediction` at ``d``.
    method : {"exact", "train"}
        What the records are (stored in the result).

    Returns
    -------
    ListwiseCapacity
        The logistic fit (:func:`validation.logistic.fit_threshold`) of the
        successes against :func:`listwise_load`; NaN threshold when the
        outcomes do not vary.

    See Also
    --------
    validation.linear_memory.exact_listwise.measure_listwise_capacity : Exact decisions, then this fit.
    validation.linear_memory.train_listwise.measure_trained_listwise_capacity : Trained runs, then this fit.

    References
    ----------
    docs/listwise.md#exact-decisions
    """
    from validation.logistic import fit_threshold

    if method not in ("exact", "train"):
        raise ValueError(f"method must be 'exact' or 'train', got {method!r}")
    res = [r["result"] for r in records if r is not None and r["status"] == "ok"]
    dec = [r for r in res if r["success"] is not None]
    loads = [listwise_load(criterion, r["p"], d) for r in dec]
    if dec and len({r["success"] for r in dec}) > 1:
        fit = fit_threshold(loads, [r["success"] for r in dec])
        thr, lo, hi, w, counts = fit.threshold, fit.ci_low, fit.ci_high, fit.width, fit.counts
    else:
        thr = lo = hi = w = math.nan
        counts = [[float(x), int(sum(r["success"] for r, y in zip(dec, loads) if y == x)),
                   int(sum(y == x for y in loads))] for x in sorted(set(loads))]
    if method == "exact":
        unverified = sum(r.get("verified") is not True for r in dec)
    else:                                  # a trained failure has no certificate to verify
        unverified = sum(r["success"] is True and r.get("verified") is not True for r in dec)
    return ListwiseCapacity(model=model, d=d, criterion=criterion, tau=tau, margin=margin, threshold=thr,
                            ci_low=lo, ci_high=hi, width=w, counts=counts, theory=theory, trials=len(res),
                            undecided=len(res) - len(dec), unverified=unverified,
                            cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in res)), method=method)


#: Tail fractions evaluated by :func:`hebbian_listwise_trial`.
HEBBIAN_TAUS = (0.01, 0.05, 0.2)


@trial("linear_memory.listwise_hebbian")
def hebbian_listwise_trial(params):
    r"""Score the Hebbian memory of one instance under top-1 and TAM (no solver: a closed-form ``W``).

    Parameters
    ----------
    params : dict
        ``model`` ("op"/"dp"), ``d``, ``n`` (facts), ``seed``; the facts are
        those of :func:`listwise_exact_trial` with the same ``(d, n, seed)``.

    Returns
    -------
    dict
        ``p``; ``top1`` and ``tam_<tau>`` for every tau of
        :data:`HEBBIAN_TAUS`: ``[all facts pass, fraction of facts passing]``
        at margin 0 (strict), for :math:`W_H = \sum_\mu c_\mu e_\mu^T`.

    See Also
    --------
    validation.linear_memory.models.hebbian_W : Closed-form memory whose recall is scored.
    validation.linear_memory.exact_listwise.listwise_exact_trial : Exact decision on the same facts.

    References
    ----------
    docs/listwise.md#the-hebbian-memory; docs/theory_full_rank.md#hebbian-rule
    """
    from .models import hebbian_W

    _, p, facts = _trial_facts(params)
    W = np.asarray(hebbian_W(facts), np.float64)
    kind, E, U, C = _arrays(facts)
    Z = _scores(kind, E, U, C, W)
    out = {"p": p}
    g, _ = _tail(Z, 1.0)
    out["top1"] = [bool(np.all(g > 0)), float(np.mean(g > 0))]
    for tau in HEBBIAN_TAUS:
        from replica.listwise import tail_size

        g, _ = _tail(Z, float(tail_size(tau, p)))
        out[f"tam_{tau:g}"] = [bool(np.all(g > 0)), float(np.mean(g > 0))]
    return out
