"""Exact existence of a full-rank memory that recalls all ``p`` facts.

Trained thresholds record whether Adam *found* a memory within its step
budget; the replica theory predicts whether one *exists*.  For a full-rank
``W`` existence is a convex question, decided here exactly for one instance,
independently of any training (see ``docs/linear_memory.md#exact-capacity``).

With ``delta_{mu rho} = c_mu - v_{mu rho}`` (correct candidate minus
competitor ``rho`` of input ``mu``; OP: ``v_{mu rho} = u_rho``, DP:
``v_{mu rho} = U[mu, rho]``) the margin of pair ``k = (mu, rho)`` is

    m_k(W) = delta_k^T W e_mu = <a_k, W>_F,    a_k = delta_k e_mu^T,

and all facts are recalled (strict argmax, as in ``validation.losses.recalled``)
iff ``m_k(W) > 0`` for all ``p (p - 1)`` pairs.  By Gordan's theorem exactly
one of the following holds:

* there is a ``W`` with ``<a_k, W> > 0`` for all ``k`` (feasible);
* there is ``lambda >= 0``, ``lambda != 0`` with ``sum_k lambda_k a_k = 0``
  (infeasible; ``0`` lies in the convex hull of the ``a_k``).

Both are found by one non-negative least-squares problem (Lawson-Hanson
active set, in kernel form, with constraint generation):

    min_{lambda >= 0}  || sum_k lambda_k a_k ||_F^2 + (sum_k lambda_k - 1)^2 .

At its optimum, ``x = sum_k lambda_k a_k`` and ``s = sum_k lambda_k - 1``
satisfy ``<a_k, x> + s >= 0`` for every pair (KKT), so either ``s < 0`` and
``W = x`` recalls everything with margin ``-s > 0``, or the residual is zero
and ``lambda`` is a Gordan certificate.  Only the pairs with
``lambda_k > 0`` enter the linear algebra; the Gram matrix of two pairs is the
product kernel ``(delta_k . delta_l)(e_mu . e_nu) + 1``.  The gradient over all
``p^2`` pairs is one scoring of ``x`` (two matrix products), which is how
violated pairs are found.

That active-set solver needs about as many deletions as additions, each
``O(n^2)`` with ``n ~ d^2`` active pairs, so it scales like ``d^6``.  The
default solver therefore works on the primal side of the same problem, in the
``d^2`` entries of ``W``: an augmented Lagrangian whose multipliers converge to
the NNLS ``lambda`` and whose iterates converge to ``x``, each subproblem
solved by semismooth Newton with matrix-free CG (see
:func:`exact_feasibility`); Lawson-Hanson, warm-started from its support, is
the fallback.  Either way the returned certificate is re-checked from the
fact set by :func:`verify_feasible` / :func:`verify_infeasible`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dpstrf as _dpstrf
from scipy.linalg.lapack import dtrtrs as _dtrtrs

from hcizz.checks import check_int, check_real
from validation.engine.trials import trial

__all__ = ["ExactResult", "exact_feasibility", "verify_feasible", "verify_infeasible",
           "pair_deltas", "exact_trial", "exact_params", "certificate_summary"]

#: Default tolerance on the certified cosine margin below which an instance is
#: called infeasible (see :func:`verify_infeasible`).
DEFAULT_TOL = 1e-9


@dataclass
class ExactResult:
    """Outcome of :func:`exact_feasibility`.

    Attributes
    ----------
    feasible : bool or None
        True: a memory recalling all facts exists (``W`` certifies it);
        False: none exists up to the cosine tolerance ``tol`` (``pairs``,
        ``lam`` certify it); None: undecided within ``max_iter``.
    margin : float
        Feasible: the certified cosine margin ``min_k <a_k, W> / (|a_k| |W|)``
        of ``W`` (> 0).  Infeasible: the certified upper bound ``eps`` on the
        cosine margin of *every* ``W`` (:func:`verify_infeasible`).
    W : ndarray (d, d) or None
        Feasibility certificate (scale is irrelevant).
    pairs : ndarray (m, 2) of int or None
        ``(mu, rho)`` pairs of the infeasibility certificate.
    lam : ndarray (m,) or None
        Their non-negative weights.
    optimal : bool
        The active-set problem was solved to optimality (then ``gamma`` is
        the maximal Euclidean margin of the facts scaled by ``1/sqrt(d)``).
    gamma : float
        Lawson-Hanson: ``|x| / (1 + s)`` at the last iterate (the optimal
        margin if ``optimal``); 0 for infeasible instances; nan when the
        augmented Lagrangian decided.
    active : int
        Pairs with ``lambda_k > 0`` at the end (augmented Lagrangian: in the
        last multiplier estimate).
    iterations, removals : int
        Lawson-Hanson: outer iterations (scorings of all pairs) and
        active-set removals; augmented Lagrangian: Newton steps, 0.
    seconds : float
        Wall time.
    """

    feasible: bool | None
    margin: float
    W: np.ndarray | None = None
    pairs: np.ndarray | None = None
    lam: np.ndarray | None = None
    optimal: bool = False
    gamma: float = math.nan
    active: int = 0
    iterations: int = 0
    removals: int = 0
    seconds: float = 0.0
    info: dict = field(default_factory=dict)

    def summary(self):
        """Certificate summary as a dict of JSON values."""
        return {"feasible": self.feasible, "margin": float(self.margin),
                "certificate": ("W" if self.feasible else "lambda" if self.feasible is False else None),
                "optimal": bool(self.optimal), "gamma": float(self.gamma), "active": int(self.active),
                "iterations": int(self.iterations), "removals": int(self.removals),
                "seconds": float(self.seconds)}


def pair_deltas(facts, mu, rho, dtype=np.float64):
    """Rows ``delta_{mu rho} = c_mu - v_{mu rho}`` (shape ``(len(mu), d)``).

    Parameters
    ----------
    facts : Facts
        OP or DP fact set.
    mu, rho : array_like of int
        Inputs and competitors.
    dtype : dtype
        Output dtype (the data are cast, not re-drawn).

    Returns
    -------
    ndarray
    """
    mu = np.asarray(mu, dtype=np.intp)
    rho = np.asarray(rho, dtype=np.intp)
    U = facts.U
    if facts.kind == "op":
        return U[mu].astype(dtype) - U[rho].astype(dtype)
    return U[mu, mu].astype(dtype) - U[mu, rho].astype(dtype)


def _all_margins(W, E, U, kind):
    """Margins ``c_mu^T W e_mu - v_{mu rho}^T W e_mu`` for all pairs; diagonal +inf."""
    H = E @ W.T.astype(E.dtype)
    if kind == "op":
        Z = H @ U.T
    else:
        Z = (U @ H[:, :, None])[:, :, 0]
    M = np.diagonal(Z)[:, None] - Z
    np.fill_diagonal(M, np.inf)
    return M


class _Factor:
    """Upper Cholesky factor ``R`` of ``Q = K_F + 1 1^T`` over the active pairs,
    grown by blocks and shrunk by rank-one updates, in place.

    ``R`` lives in the top-left ``n x n`` corner of a C-ordered ``cap x cap``
    buffer; the first ``n`` rows, transposed, are a Fortran-ordered array
    holding ``R^T`` with leading dimension ``cap``, which LAPACK ``dtrtrs``
    takes without a copy.  Rows are contiguous, as the Givens rotations of a
    deletion need.
    """

    def __init__(self, cap):
        self.buf = np.zeros((cap, cap))
        self.cap = cap
        self.n = 0
        self.hole = np.zeros(cap, bool)

    def _lt(self):
        return self.buf[:self.n, :].T                  # (cap, n), F-contiguous: R^T, lda = cap

    def _trs(self, b, trans):
        # trans=0: solve R^T y = b; trans=1: solve R y = b
        b2 = np.asarray(b, np.float64)
        vec = b2.ndim == 1
        x, info = _dtrtrs(self._lt(), b2.reshape(self.n, -1) if vec else b2, lower=1, trans=trans)
        if info != 0:
            raise np.linalg.LinAlgError(f"dtrtrs info={info}")
        return x[:, 0] if vec else x

    def solve(self, b):
        return self._trs(self._trs(b, 0), 1)

    def append(self, Kon, Knn, piv_tol):
        """Append columns; returns indices (into the block) that were kept."""
        n, b = self.n, Knn.shape[0]
        if n:
            C = self._trs(np.asfortranarray(Kon), 0)
            S = Knn - C.T @ C
        else:
            C = np.zeros((0, b))
            S = Knn.copy()
        if b > 256:
            kept = self._append_block(C, S, Knn, piv_tol)
            if kept is not None:
                return kept
        kept = []
        Rs = np.zeros((b, b))
        for j in range(b):
            k = len(kept)
            if k:
                r = solve_triangular(Rs[:k, :k], S[kept, j], trans="T", lower=False, check_finite=False)
                piv = S[j, j] - r @ r
            else:
                r = np.zeros(0)
                piv = S[j, j]
            if piv > piv_tol * Knn[j, j] and n + k < self.cap:
                Rs[:k, k] = r
                Rs[k, k] = math.sqrt(piv)
                kept.append(j)
        k = len(kept)
        if k:
            self.buf[:n, n:n + k] = C[:, kept]
            self.buf[n:n + k, n:n + k] = Rs[:k, :k]
            self.n = n + k
        return kept

    def _append_block(self, C, S, Knn, piv_tol):
        """Blocked version of :meth:`append` for large blocks (warm starts): pivoted
        Cholesky (LAPACK ``dpstrf``) of the Schur complement keeps the columns in
        pivot order up to the first pivot below ``piv_tol`` times its diagonal."""
        n, b = self.n, S.shape[0]
        R, piv, rank, info = _dpstrf(np.array(S, order="F"), tol=-1.0, lower=0)
        piv = piv[:rank] - 1
        dg = np.abs(np.diag(R))[:rank]
        ok = dg * dg > piv_tol * np.diag(Knn)[piv]
        k = int(np.argmin(ok)) if not ok.all() else rank
        k = min(k, self.cap - n)
        kept = piv[:k]
        if k:
            self.buf[:n, n:n + k] = C[:, kept]
            self.buf[n:n + k, n:n + k] = np.triu(R[:k, :k])
            self.n = n + k
        return [int(j) for j in kept]

    def delete(self, j):
        """Decouple slot ``j``: afterwards ``R^T R`` equals ``Q`` with row and column
        ``j`` replaced by the unit vector (a *hole*, solved as ``z_j = 0`` with a zero
        right-hand side).  Nothing is shifted: the trailing block gets the rank-one
        update ``T^T T + v v^T`` with ``v`` the old row ``j`` (one Givens rotation per
        row; rotations at holes are identities and skipped)."""
        n, R = self.n, self.buf
        v = R[j, j + 1:n].copy()
        R[:j, j] = 0.0
        R[j, j:n] = 0.0
        R[j, j] = 1.0
        self.hole[j] = True
        T = R[j + 1:n, j + 1:n]
        m = n - 1 - j
        for k in np.nonzero(v)[0]:              # v stays zero at holes
            a, bb = T[k, k], v[k]
            if bb == 0.0:
                continue
            r = math.hypot(a, bb)
            c, s = r / a, bb / a
            T[k, k] = r
            if k + 1 < m:
                row = T[k, k + 1:]
                row += s * v[k + 1:]
                row /= c
                vv = v[k + 1:]
                vv *= c
                vv -= s * row

    def compact(self):
        """Remove the holes (their rows and columns are unit vectors, so this is a
        pure selection); returns the kept slot indices."""
        n = self.n
        idx = np.nonzero(~self.hole[:n])[0]
        m = idx.size
        self.buf[:m, :m] = self.buf[np.ix_(idx, idx)]
        self.buf[:n, m:n] = 0.0
        self.buf[m:n, :n] = 0.0
        self.hole[:n] = False
        self.n = m
        return idx


def exact_feasibility(facts, *, tol=DEFAULT_TOL, batch=None, max_iter=None, optimal=False,
                      verify=True, method="auto"):
    """Decide whether a full-rank ``W`` recalling all facts exists.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set (:mod:`validation.linear_memory.data`); float32 data
        are cast to float64 exactly.
    tol : float
        Cosine tolerance of the infeasibility certificate: an instance is
        called infeasible when a ``lambda`` is found that bounds the cosine
        margin of every ``W`` by ``eps <= tol`` (default ``1e-9``).
    batch : int, optional
        Violated pairs added per outer iteration (default
        ``max(16, d^2 // 40)``).
    max_iter : int, optional
        Outer iterations before giving up (default ``20 d^2``).
    optimal : bool
        Continue to the optimum of the active-set problem even after a
        feasibility certificate is found (gives the optimal margin
        ``gamma``); default stops at the first certificate.
    verify : bool
        Verify the certificate with :func:`verify_feasible` /
        :func:`verify_infeasible` before returning (a certificate that fails
        verification is not returned; the search goes on).
    method : {"auto", "alm", "lh"}
        ``"alm"``: augmented Lagrangian phase only (may return undecided);
        ``"lh"``: Lawson-Hanson only (the earlier solver, also used for
        ``optimal=True``); ``"auto"`` (default): augmented Lagrangian, then,
        if it is undecided after its last penalty stage, Lawson-Hanson
        warm-started from its support.  ``info["method"]`` says which
        decided.

    Returns
    -------
    ExactResult

    Notes
    -----
    **Augmented Lagrangian (default).**  The NNLS problem below is the dual
    of the projection problem in ``W`` space::

        min_{x, s} 1/2 |x|_F^2 + 1/2 (1 + s)^2   s.t.  <a_k, x> + s >= 0,

    solved by the method of multipliers: for a penalty ``rho`` (1, 10, ...,
    ``1e8``) minimise ``1/2 |x|^2 + 1/2 (1+s)^2 + 1/(2 rho) sum_k
    [(lambda_k - rho (<a_k, x> + s))_+^2 - lambda_k^2]`` by semismooth Newton
    (generalised Hessian ``I + rho sum_{k active} (a_k, 1)(a_k, 1)^T``
    applied matrix-free through the product structure, ``O(p d^2 + n d)``
    per product; Jacobi-preconditioned CG; exact line search on the convex
    piecewise quadratic), then ``lambda <- (lambda - rho g)_+``.  At an
    inner optimum ``x = sum_k lambda_k a_k``, so ``lambda`` is a candidate
    Gordan certificate (checked after each update); every Newton iterate
    ``x`` whose ``p^2`` margins are all positive is a candidate memory.

    **Lawson-Hanson (fallback, ``method="lh"``).**  Active set on ``min_{lambda >= 0} |sum lambda_k a_k|^2 +
    (sum lambda_k - 1)^2`` with the Cholesky factor of the active Gram matrix
    ``(delta_k . delta_l)(e_mu . e_nu) + 1`` kept up to date (block appends,
    rank-one deletions).  The data are scaled by ``1/sqrt(d)`` inside (no
    effect on feasibility).  Each outer iteration scores all ``p^2`` pairs
    with the current ``x = sum lambda_k a_k`` (float32 while violations are
    large, float64 near the end) and adds the most violated pair of up to
    ``batch`` inputs.  The active set never exceeds ``d^2 + 1`` pairs.

    References
    ----------
    Lawson & Hanson, *Solving Least Squares Problems* (1974), ch. 23;
    Gordan's alternative; linear associative memories arXiv:2605.10795.

    Examples
    --------
    >>> from validation.linear_memory.data import make_op
    >>> exact_feasibility(make_op(6, 8, rng=0)).feasible        # p <= d
    True
    """
    tol = check_real("tol", tol, low=0, low_open=True, allow_array=False)
    if method not in ("auto", "lh", "alm"):
        raise ValueError(f"method must be 'auto', 'alm' or 'lh', got {method!r}")
    if method == "lh" or optimal:
        return _lawson_hanson(facts, tol=tol, batch=batch, max_iter=max_iter, optimal=optimal,
                              verify=verify)
    t0 = time.perf_counter()
    r1 = _alm(facts, tol=tol, verify=verify)
    if r1.feasible is not None or method == "alm":
        r1.seconds = time.perf_counter() - t0
        return r1
    r2 = _lawson_hanson(facts, tol=tol, batch=batch, max_iter=max_iter, optimal=False,
                        verify=verify, start=r1.info.pop("support"))
    r2.info.update({"alm_" + k: v for k, v in r1.info.items()})
    r2.info["alm_seconds"] = r1.seconds
    r2.info["method"] = "alm+lh"
    r2.seconds = time.perf_counter() - t0
    return r2


def _alm(facts, *, tol, verify, rho_max=1e8, rho0=1.0, newton_per_stage=80, cg_max=250):
    """Augmented Lagrangian phase of :func:`exact_feasibility` (primal, in ``W`` space).

    Solves ``min 1/2 |x|^2 + 1/2 (1 + s)^2`` s.t. ``<a_k, x> + s >= 0`` (all pairs),
    whose dual is the NNLS problem of :func:`exact_feasibility`, by the method of
    multipliers; each subproblem by semismooth Newton (matrix-free preconditioned
    CG on the product structure) with an exact line search.  Stops at the first
    verified certificate; otherwise returns an undecided result whose
    ``info["support"]`` (pairs with positive multiplier, largest first) seeds the
    Lawson-Hanson phase.
    """
    import scipy.sparse as sps

    t0 = time.perf_counter()
    p, d, kind = facts.p, facts.d, facts.kind
    sc = 1.0 / math.sqrt(d)
    E = facts.E.astype(np.float64) * sc
    U = facts.U.astype(np.float64) * sc
    ar = np.arange(p)
    C = U if kind == "op" else U[ar, ar]

    def deltas(mu, rh):
        return C[mu] - (U[rh] if kind == "op" else U[mu, rh])

    def scatter(mu):
        return sps.csr_matrix((np.ones(mu.size), (mu, np.arange(mu.size))), shape=(p, mu.size))

    # start: the Hebbian direction, s at the 2 d^2-th smallest margin (that many pairs active)
    Wh = C.T @ E
    x = 0.1 * Wh / np.linalg.norm(Wh)
    M = _all_margins(x, E, U, kind)
    kq = min(2 * d * d, p * (p - 1) // 4)
    s = -float(np.partition(M[np.isfinite(M)], kq)[kq])
    lam = np.zeros((p, p))
    rho = float(rho0)
    eps_in = 1e-2
    res = None
    n_newton = n_cg = outer = 0
    mu = rh = w = None
    while res is None and rho <= rho_max:
        for _ in range(newton_per_stage + 1):
            M = _all_margins(x, E, U, kind)
            if float(M.min()) > 0:
                ok = verify_feasible(facts, x) if verify else {"ok": True, "margin": math.nan}
                if ok["ok"]:
                    res = ExactResult(True, ok["margin"], W=x.copy())
                    break
            g = M + s
            np.fill_diagonal(g, 0.0)
            lt = lam - rho * g
            np.fill_diagonal(lt, 0.0)
            mu, rh = np.nonzero(lt > 0)
            w = lt[mu, rh]
            Dl = deltas(mu, rh)
            Sm = scatter(mu)
            Sx = (Sm @ (w[:, None] * Dl)).T @ E          # sum_k w_k a_k
            gx = x - Sx
            gs = (1.0 + s) - float(w.sum())
            gn = math.sqrt(float(np.sum(gx * gx)) + gs * gs)
            if gn <= eps_in or _ == newton_per_stage:
                break
            n_newton += 1
            Em = E[mu]
            dx = 1.0 + rho * ((Dl * Dl).T @ (Em * Em))    # Jacobi preconditioner
            ds = 1.0 + rho * mu.size

            def hv(V, vs):
                m = rho * (np.einsum("kd,kd->k", Dl, (E @ V.T)[mu]) + vs)
                return V + (Sm @ (m[:, None] * Dl)).T @ E, vs + float(m.sum())

            X, Xs = np.zeros_like(x), 0.0
            Rx, Rs = -gx, -gs
            Zx, Zs = Rx / dx, Rs / ds
            Px, Ps = Zx.copy(), Zs
            rz = float(np.sum(Rx * Zx)) + Rs * Zs
            cgtol = min(0.1, math.sqrt(gn)) * gn
            for _cg in range(cg_max):
                Qx, Qs = hv(Px, Ps)
                al = rz / (float(np.sum(Px * Qx)) + Ps * Qs)
                X += al * Px
                Xs += al * Ps
                Rx -= al * Qx
                Rs -= al * Qs
                n_cg += 1
                if math.sqrt(float(np.sum(Rx * Rx)) + Rs * Rs) <= cgtol:
                    break
                Zx, Zs = Rx / dx, Rs / ds
                rz2 = float(np.sum(Rx * Zx)) + Rs * Zs
                Px = Zx + (rz2 / rz) * Px
                Ps = Zs + (rz2 / rz) * Ps
                rz = rz2
            # exact line search: phi'(t) = 0 for the convex piecewise quadratic phi
            gd = _all_margins(X, E, U, kind)
            np.fill_diagonal(gd, 0.0)
            gd += Xs
            xd, dd = float(np.sum(x * X)), float(np.sum(X * X))
            zg = -rho * gd
            T = 2.0
            while True:
                # only pairs with a positive multiplier somewhere on [0, T] enter phi
                ci = np.flatnonzero((lt > 0) | (lt + T * zg > 0))
                z0, z1, gk = lt.ravel()[ci], zg.ravel()[ci], gd.ravel()[ci]
                t = 1.0
                for _ls in range(60):
                    z = z0 + t * z1
                    a = z > 0
                    dphi = xd + t * dd + (1 + s + t * Xs) * Xs - float(z[a] @ gk[a])
                    d2 = dd + Xs * Xs + rho * float(gk[a] @ gk[a])
                    tn = min(max(t - dphi / d2, 0.0), T)
                    done = abs(tn - t) <= 1e-12 * max(1.0, abs(t))
                    t = tn
                    if done:
                        break
                if t < T or T > 1e6:
                    break
                T *= 8.0
            x = x + t * X
            s = s + t * Xs
        if res is not None:
            break
        # multiplier update; w are the new multipliers, Sx = sum_k w_k a_k
        lam = np.maximum(lt, 0.0)
        outer += 1
        den = float(w @ (np.linalg.norm(Dl, axis=1) * np.linalg.norm(E[mu], axis=1)))
        eps = float(np.linalg.norm(Sx)) / den if den > 0 else math.inf
        if eps <= tol:
            pairs = np.stack([mu, rh], 1)
            ok = verify_infeasible(facts, pairs, w, tol=tol) if verify else {"ok": True, "eps": eps}
            if ok["ok"]:
                res = ExactResult(False, ok["eps"], pairs=pairs, lam=w.copy(), optimal=True, gamma=0.0)
                break
        rho *= 10.0
        eps_in = max(min(eps_in * 0.2, 0.1 * float(np.linalg.norm(x))), 1e-15)
    if res is None:
        res = ExactResult(None, math.nan)
        order = np.argsort(-w, kind="stable")
        res.info["support"] = np.stack([mu[order], rh[order]], 1)
    res.active = int(mu.size) if mu is not None else 0
    res.iterations = n_newton
    res.seconds = time.perf_counter() - t0
    res.info.update(method="alm", outer=outer, newton=n_newton, cg=n_cg, rho=rho)
    return res


def _lawson_hanson(facts, *, tol, batch, max_iter, optimal, verify, start=None):
    """Lawson-Hanson NNLS with constraint generation (see :func:`exact_feasibility`);
    ``start``: optional (m, 2) pairs that form the first active set."""
    t0 = time.perf_counter()
    p, d = facts.p, facts.d
    kind = facts.kind
    sc = 1.0 / math.sqrt(d)
    E = facts.E.astype(np.float64) * sc
    U = facts.U.astype(np.float64) * sc
    E32, U32 = E.astype(np.float32), U.astype(np.float32)
    C = U if kind == "op" else U[np.arange(p), np.arange(p)]
    batch = max(16, d * d // 40) if batch is None else check_int("batch", batch, low=1)
    max_iter = 20 * d * d if max_iter is None else check_int("max_iter", max_iter, low=1)
    hole_limit = max(32, (d * d + 1) // 10)
    cap = d * d + 1 + hole_limit
    fac = _Factor(cap)
    Fmu = np.zeros(cap, np.intp)
    Frho = np.zeros(cap, np.intp)
    D = np.zeros((cap, d))
    lam = np.zeros(0)
    inF = np.zeros((p, p), bool)
    n_rem = 0
    depth = 0
    single = False
    precise = False
    x = np.zeros((d, d))
    s = -1.0
    res = None
    it = 0

    def kern(mu1, D1, mu2, D2):
        return (D1 @ D2.T) * (E[mu1] @ E[mu2].T) + 1.0

    def qmul(v, act):
        # (K_F + 1 1^T) v over the active slots, identity at holes, without the kernel matrix:
        # the margins of sum_k v_k a_k on the pairs F, plus sum v
        m = fac.n
        v = np.where(act, v, 0.0)
        Gv = np.zeros((p, d))
        np.add.at(Gv, Fmu[:m], v[:, None] * D[:m])
        Hv = E @ (Gv.T @ E).T
        out = np.einsum("kj,kj->k", D[:m], Hv[Fmu[:m]]) + v.sum()
        out[~act] = 0.0
        return out

    for it in range(1, max_iter + 1):
        M = _all_margins(x, E, U, kind) if precise else _all_margins(x.astype(np.float32), E32, U32, kind)
        n = fac.n
        act = ~fac.hole[:n]
        n_act = int(act.sum())
        # --- certificates -------------------------------------------------------------
        if n_act and float(M.min()) > 0 and res is None:
            W = x.copy()
            ok = verify_feasible(facts, W) if verify else {"ok": True, "margin": math.nan}
            if ok["ok"]:
                res = ExactResult(True, ok["margin"], W=W)
                if not optimal:
                    break
            else:
                precise = True
        if n_act:
            norms = np.linalg.norm(D[:n], axis=1) * np.linalg.norm(E[Fmu[:n]], axis=1)
            eps = float(np.linalg.norm(x)) / float(lam[act] @ norms[act])
            if eps <= tol:
                sel = np.nonzero(act & (lam > 0))[0]
                pairs = np.stack([Fmu[sel], Frho[sel]], 1)
                ok = verify_infeasible(facts, pairs, lam[sel]) if verify else {"ok": True, "eps": eps}
                if ok["ok"] and ok["eps"] <= tol:
                    res = ExactResult(False, ok["eps"], pairs=pairs, lam=lam[sel].copy(), optimal=True,
                                      gamma=0.0)
                    break
                precise = True
        # --- violated pairs (negative gradient) --------------------------------------
        y = M + s
        y[inF] = np.inf
        gtol = 1e-12 if precise else 1e-6
        rowmin = y.min(axis=1)
        bad = np.nonzero(rowmin < -gtol)[0]
        if bad.size == 0:
            if not precise:
                precise = True
                continue
            if res is not None:
                res.optimal = True
            break                                       # optimal (certificates checked above)
        if n + min(batch, p) > cap:                     # make room: drop the holes
            idx = fac.compact()
            Fmu[:idx.size], Frho[:idx.size], D[:idx.size] = Fmu[idx], Frho[idx], D[idx]
            lam = lam[idx]
            n = fac.n
            act = np.ones(n, bool)
        nb = 1 if single else min(batch, bad.size, cap - n, d * d + 1 - n_act)
        if nb <= 0:
            break
        if n_act == 0 and start is not None and it == 1:
            # warm start: the support found by the augmented Lagrangian phase
            rows, cols = start[:d * d, 0], start[:d * d, 1]
        elif n_act == 0:
            # start: every input with its strongest competitor under the Hebbian memory
            # (at x = 0 all gradients are equal and carry no information)
            Mh = _all_margins(C.T @ E, E, U, kind)
            rows = np.arange(min(p, cap - n))
            cols = np.argmin(Mh[rows], axis=1)
        else:
            rows = bad[np.argsort(rowmin[bad])[:nb]]
            cols = np.argmin(y[rows], axis=1)
        Dn = C[rows] - (U[cols] if kind == "op" else U[rows, cols])
        if n:
            Kon = kern(Fmu[:n], D[:n], rows, Dn)
            Kon[~act] = 0.0                             # holes stay decoupled
        else:
            Kon = np.zeros((0, len(rows)))
        kept = fac.append(Kon, kern(rows, Dn, rows, Dn), 1e-11)
        if not kept:
            if single:
                break                                   # numerically dependent: stop
            single = True
            continue
        k = len(kept)
        Fmu[n:n + k], Frho[n:n + k] = rows[kept], cols[kept]
        D[n:n + k] = Dn[kept]
        inF[rows[kept], cols[kept]] = True
        lam = np.concatenate([lam, np.zeros(k)])
        act = ~fac.hole[:fac.n]
        # --- Lawson-Hanson inner loop ---------------------------------------------------
        while True:
            rhs = act.astype(np.float64)
            z = fac.solve(rhs)
            if precise:
                # one step of iterative refinement with the residual formed from the data
                z += fac.solve(rhs - qmul(z, act))
            z[~act] = 0.0
            neg = act & (z <= 0)
            if not neg.any():
                lam = z
                break
            alpha = float(np.min(lam[neg] / (lam[neg] - z[neg])))
            lam = lam + alpha * (z - lam)
            drop = np.nonzero(neg & (lam <= 1e-14 * max(float(lam.max()), 1e-300)))[0]
            if drop.size == 0:
                cand = np.nonzero(neg)[0]
                drop = cand[[int(np.argmin(lam[cand]))]]
            for j in drop.tolist():
                depth += fac.n - 1 - j
                fac.delete(j)
                inF[Fmu[j], Frho[j]] = False
                lam[j] = 0.0
                act[j] = False
                n_rem += 1
            if not act.any():
                break
        # no pair of the batch survived: add one pair at a time (LH guarantees progress)
        single = not np.any(inF[rows[kept], cols[kept]])
        if int(fac.hole[:fac.n].sum()) > hole_limit:
            idx = fac.compact()
            Fmu[:idx.size], Frho[:idx.size], D[:idx.size] = Fmu[idx], Frho[idx], D[idx]
            lam = lam[idx]
        n = fac.n
        G = np.zeros((p, d))
        np.add.at(G, Fmu[:n], lam[:, None] * D[:n])
        x = G.T @ E
        s = float(lam.sum()) - 1.0
    n = int((~fac.hole[:fac.n]).sum())
    gamma = float(np.linalg.norm(x)) / (1.0 + s) if n else 0.0
    if res is None:
        res = ExactResult(None, math.nan, optimal=False)
    if res.feasible is not False:
        res.gamma = gamma
    res.active, res.iterations, res.removals = int(n), it, n_rem
    res.seconds = time.perf_counter() - t0
    res.info["mean_delete_depth"] = depth / max(n_rem, 1)
    res.info.setdefault("method", "lh")
    return res


def verify_feasible(facts, W, *, chunk=256):
    """Check a feasibility certificate: ``W`` recalls every fact, strictly.

    Parameters
    ----------
    facts : Facts
    W : ndarray (d, d)

    Returns
    -------
    dict
        ``ok`` (all ``p (p-1)`` margins exceed their float64 rounding bound),
        ``margin`` (smallest cosine margin ``<a_k, W> / (|a_k|_F |W|_F)``),
        ``min_gap`` (smallest raw score gap) and ``bound`` (its rounding
        bound).

    Notes
    -----
    Independent of the solver: scores are recomputed from the fact set with
    :func:`validation.linear_memory.models.scores` in float64, then each
    correct score is compared with every competitor.  Rounding bound for a
    gap of two scores ``u^T (W e)``: ``4 d eps64 |u| |W e|`` per score
    (a generous multiple of the standard dot-product bound ``d eps |u||v|``).
    """
    from .models import scores

    E = facts.E.astype(np.float64)
    W = np.asarray(W, np.float64)
    p, d = facts.p, facts.d
    H = E @ W.T                                         # rows W e_mu
    hn = np.linalg.norm(H, axis=1)
    Wn = float(np.linalg.norm(W))
    en = np.linalg.norm(E, axis=1)
    eps = np.finfo(np.float64).eps
    ok, cos_min, gap_min, bound_at = True, math.inf, math.inf, 0.0
    for lo in range(0, p, chunk):
        hi = min(p, lo + chunk)
        sub = type(facts)(facts.kind, facts.E[lo:hi].astype(np.float64),
                          facts.U.astype(np.float64) if facts.kind == "op"
                          else facts.U[lo:hi].astype(np.float64))
        Z = scores(W, sub)                              # (hi-lo, p)
        idx = np.arange(lo, hi)
        corr = Z[np.arange(hi - lo), idx]
        cand = facts.U.astype(np.float64) if facts.kind == "op" else facts.U[lo:hi].astype(np.float64)
        cn = np.linalg.norm(cand, axis=-1)              # (p,) or (hi-lo, p)
        cc = cn[idx] if facts.kind == "op" else cn[np.arange(hi - lo), idx]
        cnb = np.broadcast_to(cn, Z.shape)
        gap = corr[:, None] - Z
        bound = 4 * d * eps * hn[lo:hi, None] * (cnb + cc[:, None])
        gap[np.arange(hi - lo), idx] = np.inf
        if facts.kind == "op":
            delta_n = np.linalg.norm(cand[idx][:, None, :] - cand[None, :, :], axis=-1)
        else:
            delta_n = np.linalg.norm(cand[np.arange(hi - lo), idx][:, None, :] - cand, axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            cosm = gap / (delta_n * en[lo:hi, None] * Wn) if Wn > 0 else np.full(gap.shape, -np.inf)
        if np.any(gap <= bound):
            ok = False
        i = np.unravel_index(np.argmin(gap), gap.shape)
        if gap[i] < gap_min:
            gap_min, bound_at = float(gap[i]), float(bound[i])
        cos_min = min(cos_min, float(np.min(cosm)))
    return {"ok": bool(ok), "margin": cos_min, "min_gap": gap_min, "bound": bound_at}


def verify_infeasible(facts, pairs, lam, *, tol=DEFAULT_TOL):
    """Check an infeasibility certificate ``sum_k lambda_k a_k ~ 0``.

    Parameters
    ----------
    facts : Facts
    pairs : array_like (m, 2) of int
        ``(mu, rho)`` with ``mu != rho``.
    lam : array_like (m,)
        Weights (must be >= 0, not all 0).
    tol : float
        Cosine tolerance.

    Returns
    -------
    dict
        ``eps = |sum_k lambda_k a_k|_F / sum_k lambda_k |a_k|_F`` and
        ``ok = eps <= tol`` (and the weights are valid), ``residual`` (the
        numerator, on the original data scale), ``support``.

    Notes
    -----
    For every ``W != 0``: ``sum_k lambda_k |a_k| |W| cos_k = <sum_k lambda_k
    a_k, W> <= |sum lambda_k a_k| |W|``, hence ``min_k cos_k <= eps``: no
    memory recalls all facts with cosine margin above ``eps``.  The sum is
    formed here from the fact set in float64 (outer products accumulated by
    ``einsum``), independently of the solver's factorisation.
    """
    pairs = np.asarray(pairs)
    lam = np.asarray(lam, np.float64)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.shape[0] != lam.shape[0]:
        raise ValueError(f"pairs must have shape (m, 2) matching lam (m,), got {pairs.shape} and {lam.shape}")
    mu, rho = pairs[:, 0], pairs[:, 1]
    valid = bool(np.all(lam >= 0) and lam.sum() > 0 and np.all(mu != rho)
                 and np.all((0 <= pairs) & (pairs < facts.p)))
    Dl = pair_deltas(facts, mu, rho)
    Ek = facts.E[mu].astype(np.float64)
    S = np.einsum("k,ki,kj->ij", lam, Dl, Ek, optimize=True)
    norms = np.linalg.norm(Dl, axis=1) * np.linalg.norm(Ek, axis=1)
    den = float(lam @ norms)
    eps = float(np.linalg.norm(S)) / den if den > 0 else math.inf
    return {"ok": bool(valid and eps <= tol), "eps": eps, "residual": float(np.linalg.norm(S)),
            "support": int(np.count_nonzero(lam))}


@trial("linear_memory.exact", aliases=("validation.linear_memory.exact:exact_trial",))
def exact_trial(params):
    """One exact-capacity trial (module level, for :func:`validation.engine.run_sweep`).

    Parameters
    ----------
    params : dict
        ``model`` ("op" or "dp"), ``d``, ``alpha`` (target load), ``seed``;
        optional ``tol``.  The facts are those of
        :func:`validation.linear_memory.capacity.capacity_trial` with the same
        ``(model, d, alpha, seed)`` (same generator, float32 draws), so exact
        and trained outcomes are about the same instances.

    Returns
    -------
    dict
        ``p``, ``load``, ``success`` (= feasible; None if undecided),
        ``margin``, ``gamma``, ``optimal``, ``active``, ``iterations``,
        ``removals``, ``certificate`` ("W"/"lambda"), ``seconds``,
        ``cpu_seconds``.
    """
    from .data import trial_rngs
    from replica.load import p_from_load, load_of
    from .data import make_facts

    model = params["model"]
    if model not in ("op", "dp"):
        raise ValueError(f"model must be 'op' or 'dp' for the exact method, got {model!r}")
    d = check_int("d", params["d"], low=1)
    p = p_from_load(params["alpha"], d)
    rf, _ = trial_rngs(params["seed"], d, p)
    t0, c0 = time.perf_counter(), time.process_time()
    facts = make_facts(model, p, d, rng=rf, dtype=np.dtype(params.get("dtype", "float32")))
    r = exact_feasibility(facts, tol=params.get("tol", DEFAULT_TOL))
    out = r.summary()
    out.update(p=p, load=float(load_of(p, d)), success=r.feasible, method=r.info.get("method", "lh"),
               seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
    return out


def exact_params(model, d, loads, seeds):
    """Parameter records (one per load and seed) for :func:`exact_trial`."""
    return [{"model": model, "d": int(d), "alpha": float(a), "seed": int(s)}
            for a in loads for s in seeds]


def certificate_summary(results):
    """Summary of the certificates of a list of :func:`exact_trial` results.

    Returns
    -------
    dict
        ``feasible``, ``infeasible``, ``undecided`` (counts),
        ``min_feasible_margin`` (smallest certified cosine margin of a
        feasibility certificate), ``max_infeasible_eps`` (largest cosine bound
        of an infeasibility certificate), ``verified`` (every decision carries
        a certificate that passed verification), ``seconds_per_instance``
        (mean wall), ``cpu_seconds_per_instance``.
    """
    fe = [r for r in results if r.get("success") is True]
    inf = [r for r in results if r.get("success") is False]
    und = [r for r in results if r.get("success") is None]
    n = max(len(results), 1)
    return {"feasible": len(fe), "infeasible": len(inf), "undecided": len(und),
            "min_feasible_margin": min((r["margin"] for r in fe), default=None),
            "max_infeasible_eps": max((r["margin"] for r in inf), default=None),
            "verified": True,
            "seconds_per_instance": sum(r["seconds"] for r in results) / n,
            "cpu_seconds_per_instance": sum(r.get("cpu_seconds", 0.0) for r in results) / n}
