r"""Exact existence of a full-rank memory that recalls all ``p`` facts.

Trained thresholds record whether Adam *found* a memory within its step
budget; the replica theory predicts whether one *exists*.  For a full-rank
``W`` existence is a convex question, decided here exactly for one instance,
independently of any training (see ``docs/linear_memory.md#exact-capacity``).

With :math:`\delta_{\mu\rho} = c_\mu - v_{\mu\rho}` (correct candidate minus
competitor :math:`\rho` of input :math:`\mu`; OP: :math:`v_{\mu\rho} = u_\rho`, DP:
:math:`v_{\mu\rho} = U_{\mu\rho}`) the margin of pair :math:`k = (\mu, \rho)` is

    m_k(W) = delta_k^T W e_mu = <a_k, W>_F,    a_k = delta_k e_mu^T,

and all facts are recalled (strict argmax, as in ``validation.losses.recalled``)
iff :math:`m_k(W) > 0` for all :math:`p (p - 1)` pairs.  By Gordan's theorem exactly
one of the following holds:

* there is a ``W`` with :math:`\langle a_k, W \rangle > 0` for all ``k`` (feasible);
* there is :math:`\lambda \geq 0`, :math:`\lambda \neq 0` with :math:`\sum_k \lambda_k a_k = 0`
  (infeasible; ``0`` lies in the convex hull of the :math:`a_k`).

A pair with :math:`a_k = 0` (an input :math:`e_\mu = 0`, or a competitor equal to the
correct candidate) has margin 0 for every ``W``: it is an infeasibility
certificate by itself (:math:`\lambda = 1` on that pair) and is returned at once.

Both certificates are found by one non-negative least-squares problem

    min_{lambda >= 0}  || sum_k lambda_k a_k ||_F^2 + (sum_k lambda_k - 1)^2 .

At its optimum, :math:`x = \sum_k \lambda_k a_k` and :math:`s = \sum_k \lambda_k - 1`
satisfy :math:`\langle a_k, x \rangle + s \geq 0` for every pair (KKT), so either :math:`s < 0` and
:math:`W = x` recalls everything with margin :math:`-s > 0`, or the residual is zero
and :math:`\lambda` is a Gordan certificate.  The default solver works on the
primal side (an augmented Lagrangian in the :math:`d^2` entries of ``W``, see
:func:`exact_feasibility`); Lawson-Hanson on the dual is the fallback.

The decision is invariant under positive scaling of each input and of all
candidates together (recall is), so the data are normalised inside: inputs to
unit norm, candidates to unit root-mean-square norm.  Only the scores are
needed, never all :math:`p (p - 1)` difference vectors at once: margins of pairs
far from active are bounded from their last exact value (safe screening,
the internal scorer), and the :math:`p^2 d` candidates of a DP instance can be
regenerated from its generator in row blocks (:class:`LazyDPFacts`).  Either
way the returned certificate is re-checked from the fact set by
:func:`verify_feasible` / :func:`verify_infeasible`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dpstrf as _dpstrf
from scipy.linalg.lapack import dtrtrs as _dtrtrs

from hcizz.checks import check_int, check_real, check_rng
from hcizz.results import Result
from validation.engine.trials import trial
from .data import _FactShape

__all__ = ["ExactResult", "LazyDPFacts", "exact_feasibility", "verify_feasible", "verify_infeasible",
           "pair_deltas", "exact_trial", "exact_params", "certificate_summary"]

#: Default tolerance on the certified cosine margin below which an instance is
#: called infeasible (see :func:`verify_infeasible`).
DEFAULT_TOL = 1e-9

#: Default size of one regenerated block of DP candidates (bytes).
DEFAULT_BLOCK_BYTES = 2**22

#: Default memory for DP candidate blocks kept after their first drawing (bytes).
DEFAULT_CACHE_BYTES = 2**30

_EPS = float(np.finfo(np.float64).eps)


@dataclass
class _Decision(Result):
    """The fields and the summary shared by the results of the exact deciders
    (:class:`ExactResult`, ``exact_listwise.ListwiseResult``; described there).

    A subclass adds its own fields and names in :meth:`_summary_extra` the summary
    entries that follow ``certificate``.
    """

    feasible: bool | None
    margin: float
    W: np.ndarray | None = None
    optimal: bool = False
    active: int = 0
    iterations: int = 0
    removals: int = 0
    seconds: float = 0.0
    verified: bool | None = None
    info: dict = field(default_factory=dict)

    def _summary_extra(self):
        return {}

    def summary(self):
        """Return the certificate summary.

        Returns
        -------
        dict
            JSON values: the decision, the certified margin or bound, the
            subclass's entries (:meth:`_summary_extra`), the solver counts.
        """
        return {"feasible": self.feasible, "margin": float(self.margin),
                "certificate": ("W" if self.feasible else "lambda" if self.feasible is False else None),
                **self._summary_extra(), "optimal": bool(self.optimal), "active": int(self.active),
                "iterations": int(self.iterations), "removals": int(self.removals),
                "seconds": float(self.seconds), "verified": self.verified}


@dataclass
class ExactResult(_Decision):
    r"""Outcome of :func:`exact_feasibility`.

    Attributes
    ----------
    feasible : bool or None
        True: a memory recalling all facts exists (``W`` certifies it);
        False: none exists up to the cosine tolerance ``tol`` (``pairs``,
        ``lam`` certify it); None: undecided within the iteration limits.
    margin : float
        Feasible: the certified cosine margin :math:`\min_k \langle a_k, W \rangle / (\|a_k\| \|W\|)`
        of ``W`` (> 0).  Infeasible: the certified upper bound ``eps`` on the
        cosine margin of *every* ``W`` (:func:`verify_infeasible`; 0 for a
        zero pair).
    W : ndarray (d, d) or None
        Feasibility certificate (scale is irrelevant; it certifies the facts
        as given, not only their normalised form).
    pairs : ndarray (m, 2) of int or None
        :math:`(\mu, \rho)` pairs of the infeasibility certificate.
    lam : ndarray (m,) or None
        Their non-negative weights.
    optimal : bool
        The active-set problem was solved to optimality (then ``gamma`` is
        the maximal Euclidean margin of the normalised facts and, for a
        feasible instance solved with ``optimal=True``, ``W`` is the
        max-margin memory itself).
    gamma : float
        Lawson-Hanson: :math:`\|x\| / (1 + s)` at the last iterate (the optimal
        margin if ``optimal``); 0 for infeasible instances; nan when the
        augmented Lagrangian decided.
    active : int
        Pairs with :math:`\lambda_k > 0` at the end (augmented Lagrangian: in the
        last multiplier estimate).
    iterations, removals : int
        Lawson-Hanson: outer iterations (scorings of all pairs) and
        active-set removals; augmented Lagrangian: Newton steps, 0.
    seconds : float
        Wall time.
    verified : bool or None
        The certificate passed :func:`verify_feasible` /
        :func:`verify_infeasible` (None: undecided, or ``verify=False``).
    info : dict
        Solver details (``method``, screening statistics, the verifier's
        report under ``"verification"``).

    See Also
    --------
    validation.linear_memory.exact.exact_feasibility : Solver whose decision and certificate this records.
    """

    pairs: np.ndarray | None = None
    lam: np.ndarray | None = None
    gamma: float = math.nan

    def _summary_extra(self):
        return {"gamma": float(self.gamma)}


class LazyDPFacts(_FactShape):
    """A DP fact set whose :math:`p^2 d` candidates are regenerated in row blocks.

    The numbers are those of :func:`validation.linear_memory.data.make_dp`
    with the same generator (``E`` first, then ``U`` row by row), but ``U``
    is never held at once: block ``b`` (rows ``bounds[b]``) is redrawn from
    the generator state recorded at its start.

    Parameters
    ----------
    p : int
        Number of facts (>= 2).
    d : int
        Dimension (>= 1).
    rng : None, int, SeedSequence or Generator
        Randomness; ``E`` is drawn from it now (the generator advances past
        ``E`` only), ``U`` from a copy of its state.
    dtype : dtype
        Float32 (default, as ``make_dp``) or float64.
    block_bytes : int
        Size of one block in bytes of ``dtype`` (at least one row).
    cache_bytes : int
        Blocks are kept after their first drawing while their total stays
        within this many bytes (default 1 GiB; 0 keeps none); the others are
        redrawn at every use.

    Attributes
    ----------
    kind : str
        ``"dp"``.
    E : ndarray (p, d)
        Inputs.
    bounds : list of (int, int)
        Row ranges of the blocks.

    See Also
    --------
    validation.linear_memory.data.make_dp : Identical draw, with every candidate held in memory.

    Notes
    -----
    Redrawing a block costs as much as drawing it (10-20 ns per number); the
    exact solver reads a block only when the screening bound of one of its
    rows fails (:func:`exact_feasibility`), and the first blocks, up to
    ``cache_bytes``, are kept.  Memory: :math:`p d` for ``E`` plus at most
    ``cache_bytes + block_bytes``.

    Examples
    --------
    >>> from validation.linear_memory.data import make_dp
    >>> lz = LazyDPFacts(6, 3, rng=1, block_bytes=150)
    >>> len(lz.bounds), bool(np.array_equal(lz.rows(0, 6), make_dp(6, 3, rng=1).U))
    (3, True)
    """

    kind = "dp"

    def __init__(self, p, d, *, rng=None, dtype=np.float32, block_bytes=DEFAULT_BLOCK_BYTES,
                 cache_bytes=DEFAULT_CACHE_BYTES):
        p = check_int("p", p, low=2)
        d = check_int("d", d, low=1)
        dt = np.dtype(dtype)
        if dt not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dt}")
        block_bytes = check_int("block_bytes", block_bytes, low=1)
        self.cache_bytes = check_int("cache_bytes", cache_bytes, low=0)
        rng = check_rng(rng)
        self.dtype = dt
        self.E = rng.standard_normal((p, d), dtype=dt.type)
        self._bg_type = type(rng.bit_generator)
        rows = max(1, block_bytes // (p * d * dt.itemsize))
        self.bounds = [(lo, min(p, lo + rows)) for lo in range(0, p, rows)]
        self._states = [rng.bit_generator.state]
        self._cache = {}
        self.drawn_rows = 0

    def block(self, b):
        """Candidates ``U[lo:hi]`` of block ``b`` (shape ``(hi - lo, p, d)``), redrawn."""
        b = check_int("b", b, low=0, high=len(self.bounds) - 1)
        if b in self._cache:
            return self._cache[b]
        while len(self._states) <= b:                   # states of earlier blocks first
            self.block(len(self._states) - 1)
        bg = self._bg_type()
        bg.state = self._states[b]
        lo, hi = self.bounds[b]
        out = np.random.Generator(bg).standard_normal((hi - lo, self.p, self.d), dtype=self.dtype.type)
        self.drawn_rows += hi - lo
        if len(self._states) == b + 1 and b + 1 < len(self.bounds):
            self._states.append(bg.state)
        if (len(self._cache) + 1) * out.nbytes <= self.cache_bytes:
            out.flags.writeable = False
            self._cache[b] = out
        return out

    def rows(self, lo, hi):
        """Candidates ``U[lo:hi]`` (redrawn block by block)."""
        lo = check_int("lo", lo, low=0, high=self.p)
        hi = check_int("hi", hi, low=lo, high=self.p)
        parts = [self.block(b)[max(lo, a) - a:min(hi, z) - a]
                 for b, (a, z) in enumerate(self.bounds) if a < hi and z > lo]
        return np.concatenate(parts) if parts else np.zeros((0, self.p, self.d), self.dtype)

    def materialize(self):
        """The same facts as a :class:`~validation.linear_memory.data.Facts` (all of ``U``)."""
        from .data import Facts

        return Facts("dp", self.E, self.rows(0, self.p))


def _dp_blocks(facts, block_bytes=DEFAULT_BLOCK_BYTES):
    """Row ranges and a block getter for the candidates of a DP fact set (lazy or in memory)."""
    if isinstance(facts, LazyDPFacts):
        return facts.bounds, facts.block
    U = facts.U
    p, d = U.shape[0], U.shape[-1]
    rows = max(1, block_bytes // (p * d * 8))
    bounds = [(lo, min(p, lo + rows)) for lo in range(0, p, rows)]
    return bounds, (lambda b: U[bounds[b][0]:bounds[b][1]])


def pair_deltas(facts, mu, rho, dtype=np.float64):
    r"""Rows :math:`\delta_{\mu\rho} = c_\mu - v_{\mu\rho}` (shape ``(len(mu), d)``).

    Parameters
    ----------
    facts : Facts or LazyDPFacts
        OP or DP fact set (a lazy one is redrawn block by block).
    mu, rho : array_like of int
        Inputs and competitors.
    dtype : dtype
        Output dtype (the data are cast, not re-drawn).

    Returns
    -------
    ndarray

    See Also
    --------
    validation.linear_memory.exact.verify_infeasible : Bound on every memory's margin from weighted rows.
    """
    mu = np.asarray(mu, dtype=np.intp)
    rho = np.asarray(rho, dtype=np.intp)
    if facts.kind == "op":
        U = facts.U
        return U[mu].astype(dtype) - U[rho].astype(dtype)
    if not isinstance(facts, LazyDPFacts):
        U = facts.U
        return U[mu, mu].astype(dtype) - U[mu, rho].astype(dtype)
    out = np.empty((mu.size, facts.d), dtype)
    for b, (lo, hi) in enumerate(facts.bounds):
        k = np.nonzero((mu >= lo) & (mu < hi))[0]
        if k.size:
            Ub = facts.block(b)
            out[k] = Ub[mu[k] - lo, mu[k]].astype(dtype) - Ub[mu[k] - lo, rho[k]].astype(dtype)
    return out


def _pow2_scale(mx, lim=100):
    """Exponent ``k`` with ``mx * 2**-k`` in ``[0.5, 1)`` if ``mx`` lies outside
    ``[2**-lim, 2**lim]``, else 0 (scaling by a power of two is exact)."""
    if not (mx > 0) or not math.isfinite(mx):
        return 0
    k = math.frexp(mx)[1]
    return k if abs(k) > lim else 0


def _check_finite(name, X):
    """Raise ``ValueError`` naming the first non-finite entry of the array ``X`` called ``name``."""
    bad = ~np.isfinite(X)
    if bad.any():
        i = tuple(int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite, got {X[i]} at index {i} ({int(bad.sum())} non-finite entries)")


class _Source:
    """Checked, normalised fact data for the solvers.

    Inputs are scaled to unit norm (exactly zero rows stay zero), candidates
    by one common factor to unit root-mean-square norm; both scalings leave
    every recall decision unchanged.  DP candidates are read (or redrawn)
    block by block and normalised on the fly, so that they need not be held.
    Raises ``ValueError`` naming the offending part of ``facts``.
    """

    def __init__(self, facts, block_bytes=DEFAULT_BLOCK_BYTES):
        kind = getattr(facts, "kind", None)
        if kind not in ("op", "dp"):
            raise ValueError(f"facts.kind must be 'op' or 'dp', got {kind!r}")
        E = np.asarray(facts.E)
        if E.ndim != 2:
            raise ValueError(f"facts.E must be a (p, d) array, got shape {E.shape}")
        p, d = E.shape
        if p < 2:
            raise ValueError(f"facts: the number of facts p must be >= 2 (a pair needs a competitor), got p={p}")
        if d < 1:
            raise ValueError(f"facts: the dimension d must be >= 1, got d={d}")
        if not np.issubdtype(E.dtype, np.floating) and not np.issubdtype(E.dtype, np.integer):
            raise ValueError(f"facts.E must be a real array, got dtype {E.dtype}")
        E = E.astype(np.float64)
        _check_finite("facts.E", E)
        self.kind, self.p, self.d = kind, p, d
        self.zero_pair = None
        mx = np.max(np.abs(E), axis=1)
        zrow = np.nonzero(mx == 0)[0]
        if zrow.size:
            self.zero_pair = (int(zrow[0]), int((zrow[0] + 1) % p))
        k = np.frexp(np.where(mx > 0, mx, 1.0))[1]
        Es = np.ldexp(E, -k[:, None])
        n = np.linalg.norm(Es, axis=1)
        self._ek, self._en = k, np.where(n > 0, n, 1.0)
        self.E = Es / self._en[:, None]
        self.rows_read = 0
        if kind == "op":
            U = np.asarray(facts.U)
            if U.shape != (p, d):
                raise ValueError(f"facts.U must have shape (p, d) = {(p, d)} for OP facts, got {U.shape}")
            U = U.astype(np.float64)
            _check_finite("facts.U", U)
            if self.zero_pair is None:
                order = np.lexsort(U.T[::-1])
                same = np.nonzero(np.all(U[order[1:]] == U[order[:-1]], axis=1))[0]
                if same.size:                           # two facts with the same output
                    self.zero_pair = (int(order[same[0]]), int(order[same[0] + 1]))
            mxu = float(np.max(np.abs(U)))
            Us = np.ldexp(U, -math.frexp(mxu)[1]) if mxu > 0 else U
            rms = math.sqrt(float(np.mean(np.sum(Us * Us, axis=1))))
            self._ku, self._fu = (math.frexp(mxu)[1] if mxu > 0 else 0), (1.0 / rms if rms > 0 else 1.0)
            self.U = Us * self._fu
            self.C = self.U
            self.bounds = [(0, p)]
            return
        # DP: one pass over the blocks for the checks, the scale and the correct candidates
        lazy = isinstance(facts, LazyDPFacts)
        if not lazy:
            U = np.asarray(facts.U)
            if U.shape != (p, p, d):
                raise ValueError(f"facts.U must have shape (p, p, d) = {(p, p, d)} for DP facts, got {U.shape}")
        self.bounds, self._get = _dp_blocks(facts, block_bytes)
        Craw = np.empty((p, d))
        kb, sq = [], []
        for b, (lo, hi) in enumerate(self.bounds):
            Ub = np.asarray(self._get(b), np.float64)
            bad = ~np.isfinite(Ub)
            if bad.any():
                i = tuple(int(v) for v in np.argwhere(bad)[0])
                i = (i[0] + lo,) + i[1:]
                raise ValueError(f"facts.U must be finite, got a non-finite entry at index {i}")
            r = np.arange(hi - lo)
            Craw[lo:hi] = Ub[r, lo + r]
            if self.zero_pair is None:
                eq = np.all(Ub == Craw[lo:hi, None, :], axis=2)
                eq[r, lo + r] = False
                if eq.any():                            # a competitor equal to the correct candidate
                    i, j = np.argwhere(eq)[0]
                    self.zero_pair = (int(lo + i), int(j))
            m = float(np.max(np.abs(Ub)))
            kk = math.frexp(m)[1] if m > 0 else -1075
            kb.append(kk)
            Us = np.ldexp(Ub, -kk) if m > 0 else Ub
            sq.append(float(np.sum(Us * Us)))
        K = max(kb)
        tot = sum(v * math.ldexp(1.0, 2 * (k - K)) for k, v in zip(kb, sq))
        rms = math.sqrt(tot / (p * p))
        self._ku, self._fu = (K if tot > 0 else 0), (1.0 / rms if rms > 0 else 1.0)
        self.rows_read = p
        self.scale = math.ldexp(self._fu, -self._ku)
        self.C = self.normalise(Craw)

    def raw_weights(self, mu, lam):
        r"""Weights of a certificate for the facts as given, from weights for the normalised
        ones: :math:`a_k` of the data is :math:`\|e_\mu\| / c` times the normalised one (``c`` the common
        candidate factor, dropped), so :math:`\lambda_k / \|e_\mu\|`, up to a common power of two."""
        k = self._ek[mu]
        return np.ldexp(np.asarray(lam, np.float64) / self._en[mu], -(k - int(k.max())))

    def normalise(self, A):
        """DP candidates as the solvers see them: float64 times the common factor."""
        return np.asarray(A, np.float64) * self.scale

    def block(self, b):
        """Normalised float64 candidates of DP block ``b``, shape ``(hi - lo, p, d)``."""
        lo, hi = self.bounds[b]
        self.rows_read += hi - lo
        return self.normalise(self._get(b))

    def raw_block(self, b):
        """Candidates of DP block ``b`` as stored, the factor that normalises them and the
        unit roundoff of their dtype (float32 data within a moderate range are used as they
        are; anything else is normalised to float64 first)."""
        lo, hi = self.bounds[b]
        self.rows_read += hi - lo
        V = np.asarray(self._get(b))
        if V.dtype == np.float32 and abs(self._ku) <= 60:
            return V, self.scale, float(np.finfo(np.float32).eps)
        return self.normalise(V), 1.0, _EPS


class _Scorer:
    r"""Margins :math:`(c_\mu - v_{\mu\rho}) \cdot (x e_\mu)` of all pairs, exact where they matter.

    A *watched* pair's difference vector is cached and its margin computed
    exactly at every call.  For every other pair the last exact margin ``m0``
    of its row, taken at :math:`h_0 = x_0 e_\mu`, gives a lower bound at the current
    :math:`h = \beta h_0 + r_\perp` (``r_perp`` orthogonal to ``h0``)::

        delta . h = beta (delta . h0) + delta_perp . r_perp >= beta m0 - |delta_perp| |r_perp|,

    with :math:`\|\delta_\perp\|^2 = \|\delta\|^2 - m_0^2 / \|h_0\|^2` stored per pair.  A row
    whose bound does not exceed the threshold ``thr`` is re-scored exactly
    (OP: one matrix product; DP: the row's block is redrawn), and its pairs
    below ``thr`` plus the ``watch_k`` pairs nearest to it (smallest
    :math:`(m - \mathrm{thr}) / \|\delta_\perp\|`) become watched.  Returned margins are exact
    for watched and re-scored rows and otherwise bounds strictly above ``thr``,
    so every pair with margin ``<= thr`` is exact and watched.
    """

    def __init__(self, src, watch_k=64):
        p, d = src.p, src.d
        self.src, self.p, self.d, self.watch_k = src, p, d, int(watch_k)
        self.H0 = np.zeros((p, d))
        self.h0n = np.zeros(p)
        self.scored = np.zeros(p, bool)
        self.m0 = np.zeros((p, p), np.float32)
        self.q = np.zeros((p, p), np.float32)
        self.watch = np.zeros((p, p), bool)
        self.slot = np.full((p, p), -1, np.int64)
        self.nw = 0
        self.wm = np.zeros(64, np.intp)
        self.wr = np.zeros(64, np.intp)
        self.D = np.zeros((64, d))
        self.cc = np.einsum("ij,ij->i", src.C, src.C)
        if src.kind == "op":
            self.vn2 = self.cc
        self.calls = 0
        self.rows_rescored = 0
        self._dead = []

    # -- watched pairs -------------------------------------------------------------------
    def _add(self, mu, rho, V):
        r"""Watch pairs :math:`(\mu, \rho)` whose competitor vectors are the rows of ``V``."""
        new = ~self.watch[mu, rho]
        mu, rho, V = mu[new], rho[new], V[new]
        n = mu.size
        if not n:
            return
        need = self.nw + n
        if need > self.D.shape[0]:
            cap = max(need, 2 * self.D.shape[0])
            self.D = np.concatenate([self.D[:self.nw], np.zeros((cap - self.nw, self.d))])
            self.wm = np.concatenate([self.wm[:self.nw], np.zeros(cap - self.nw, np.intp)])
            self.wr = np.concatenate([self.wr[:self.nw], np.zeros(cap - self.nw, np.intp)])
        sl = slice(self.nw, need)
        self.D[sl] = self.src.C[mu] - V
        self.wm[sl], self.wr[sl] = mu, rho
        self.slot[mu, rho] = np.arange(self.nw, need)
        self.watch[mu, rho] = True
        self.m0[mu, rho] = 1e30
        self.q[mu, rho] = 0.0
        self.nw = need

    def _drop(self, mu, rho):
        """Stop watching pairs; their slots are freed by :meth:`_compact`."""
        self._dead.append(self.slot[mu, rho].copy())
        self.watch[mu, rho] = False
        self.slot[mu, rho] = -1

    def _compact(self):
        if not self._dead:
            return
        alive = np.ones(self.nw, bool)
        alive[np.concatenate(self._dead)] = False
        self._dead = []
        n = int(alive.sum())
        self.D[:n] = self.D[:self.nw][alive]
        self.wm[:n] = self.wm[:self.nw][alive]
        self.wr[:n] = self.wr[:self.nw][alive]
        self.nw = n
        self.slot[self.wm[:n], self.wr[:n]] = np.arange(n)

    def deltas(self, mu, rho):
        """Difference vectors of pairs (watching them first if they are not yet)."""
        mu = np.asarray(mu, np.intp)
        rho = np.asarray(rho, np.intp)
        miss = ~self.watch[mu, rho]
        if miss.any():
            mm, rr = mu[miss], rho[miss]
            if self.src.kind == "op":
                self._add(mm, rr, self.src.U[rr])
            else:
                for b, (lo, hi) in enumerate(self.src.bounds):
                    k = (mm >= lo) & (mm < hi)
                    if k.any():
                        Vb = self.src.block(b)
                        self._add(mm[k], rr[k], Vb[mm[k] - lo, rr[k]])
        return self.D[self.slot[mu, rho]]

    def watched(self):
        """Inputs and competitors of the watched pairs (views)."""
        return self.wm[:self.nw], self.wr[:self.nw]

    def watched_margins(self, X):
        """Exact margins of the watched pairs for the memory ``X``."""
        HX = self.src.E @ X.T
        return np.einsum("kj,kj->k", self.D[:self.nw], HX[self.wm[:self.nw]])

    # -- all pairs -----------------------------------------------------------------------
    def _rescore(self, rows, H, thr, keep):
        """Margins of the given rows (all competitors), rounding-safe lower bounds, and the
        rows' new watch sets; DP rows are re-scored a whole block at a time."""
        src, p, d = self.src, self.p, self.d
        if src.kind == "op":
            chunks = [(rows, None)]
        else:
            blk = np.searchsorted([hi for _, hi in src.bounds], rows, side="right")
            chunks = [(np.arange(*src.bounds[b]), b) for b in np.unique(blk)]
            rows = np.concatenate([c[0] for c in chunks])
        out = np.empty((rows.size, p))
        pos = 0
        k = min(self.watch_k, p - 1)
        for r, b in chunks:
            n = r.size
            ar = np.arange(n)
            Hr, Cr = H[r], src.C[r]
            cc = self.cc[r, None]
            if b is None:
                Z = Hr @ src.U.T
                cv = Cr @ src.U.T
                vn2 = self.vn2[None, :]
                et = _EPS
            else:
                # scores from the stored candidates in their own precision (float32 for drawn
                # facts), then the normalising factor; rounding is bounded below
                V, sv, et = src.raw_block(b)
                ZC = V @ np.stack([Hr, Cr], axis=2).astype(V.dtype)      # (n, p, 2)
                Z = ZC[:, :, 0].astype(np.float64) * sv
                cv = ZC[:, :, 1].astype(np.float64) * sv
                vn2 = np.einsum("rpd,rpd->rp", V, V).astype(np.float64) * (sv * sv)
            ch = np.einsum("ij,ij->i", Cr, Hr)
            hn = np.sqrt(np.einsum("ij,ij->i", Hr, Hr))
            # |score error| <= (d+3) et |v| |h| (dot products of length d, inputs rounded to et)
            tv = np.sqrt(vn2) * (1 + (d + 2) * et)
            cn = np.sqrt(cc)
            err = ((d + 3) * et * tv + 16 * d * _EPS * cn) * hn[:, None]
            m = ch[:, None] - Z - err                   # lower bound of the margin
            m[ar, r] = np.inf
            dn2 = cc + vn2 - 2.0 * cv + 2 * (d + 3) * et * np.square(tv + cn)   # upper bound |delta|^2
            with np.errstate(invalid="ignore", divide="ignore"):
                mc = np.maximum(np.abs(m + err) - err, 0.0) / hn[:, None]
                q = np.sqrt(np.maximum(dn2 - mc * mc, 0.0))
            q[~np.isfinite(q)] = 0.0
            out[pos:pos + n] = m
            pos += n
            # the row's watch set is rebuilt: the pairs to keep (positive multipliers), every
            # pair whose bound is at or below thr, and the watch_k pairs nearest to it
            offd = np.ones((n, p), bool)
            offd[ar, r] = False
            sel = offd & (m <= thr)
            if keep is not None:
                sel |= keep[r]
            if k > 0:
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = np.where(offd, (m - thr) / np.maximum(q, 1e-300), np.inf)
                top = np.argpartition(ratio, k - 1, axis=1)[:, :k]
                tm = np.zeros_like(sel)
                np.put_along_axis(tm, top, True, axis=1)
                sel |= tm & offd
            old = self.watch[r]
            di, dj = np.nonzero(old & ~sel)
            if di.size:
                self._drop(r[di], dj)
            i, j = np.nonzero(sel & ~old)
            if i.size:
                self._add(r[i], j, src.U[j] if b is None else V[i, j].astype(np.float64) * sv)
            m0 = m.astype(np.float32)
            m0[~offd] = 0.0
            m0 -= np.abs(m0) * np.float32(1e-6)
            m0[sel | ~offd] = np.float32(1e30)
            self.m0[r] = m0
            q32 = (q * (1 + 1e-6)).astype(np.float32)
            q32[sel] = 0.0
            self.q[r] = q32
            self.H0[r] = Hr
            self.h0n[r] = hn
            self.scored[r] = hn > 0
        self._compact()
        self.rows_rescored += rows.size
        return rows, out

    def margins(self, x, thr, keep=None, exact=True):
        """``(p, p)`` margins of the memory ``x``: exact where ``<= thr`` (diagonal ``inf``).

        ``keep`` (bool ``(p, p)``, optional): pairs that must stay watched (exact).
        ``exact=False``: rows whose bound fails are not re-scored; their unwatched
        pairs are returned as ``inf`` (the watched pairs only: a relaxation), and
        ``complete`` is set False."""
        self.calls += 1
        self.complete = True
        H = self.src.E @ x.T
        if not H.any():                                 # x e_mu = 0: every margin is exactly 0
            M = np.zeros((self.p, self.p))
            np.fill_diagonal(M, np.inf)
            return M
        sc = self.scored
        h0n2 = np.where(sc, self.h0n**2, 1.0)
        beta = np.einsum("ij,ij->i", H, self.H0) / h0n2
        r = np.linalg.norm(H - beta[:, None] * self.H0, axis=1)
        L = self.m0 * beta[:, None]
        A = np.abs(L)
        T = self.q * r[:, None]
        L -= T
        A += T
        A *= 1e-6
        L -= A
        need = ~sc | (beta <= 0) | (L.min(axis=1) <= thr)
        rows = np.nonzero(need)[0]
        if rows.size and not exact:
            L[rows] = np.inf
            self.complete = False
        elif rows.size:
            rows, Mr = self._rescore(rows, H, thr, keep)
            L[rows] = Mr
        wm, wr = self.watched()
        L[wm, wr] = np.einsum("kj,kj->k", self.D[:self.nw], H[wm])
        np.fill_diagonal(L, np.inf)
        return L


class _Factor:
    r"""Upper Cholesky factor ``R`` of :math:`Q = K_F + \mathbf{1} \mathbf{1}^T` over the active pairs,
    grown by blocks and shrunk by rank-one updates, in place.

    ``R`` lives in the top-left :math:`n \times n` corner of a C-ordered ``cap x cap``
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

    def _tri(self, trans):
        """``(A, lower, trans)`` for ``dtrtrs``: the stored triangle and how to solve with it."""
        return self._lt(), 1, trans

    def _trs(self, b, trans):
        # trans=0: solve R^T y = b; trans=1: solve R y = b
        b2 = np.asarray(b, np.float64)
        vec = b2.ndim == 1
        a, lower, t = self._tri(trans)
        x, info = _dtrtrs(a, b2.reshape(self.n, -1) if vec else b2, lower=lower, trans=t)
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
        """Decouple slot ``j``: afterwards :math:`R^T R` equals ``Q`` with row and column
        ``j`` replaced by the unit vector (a *hole*, solved as :math:`z_j = 0` with a zero
        right-hand side).  Nothing is shifted: the trailing block gets the rank-one
        update :math:`T^T T + v v^T` with ``v`` the old row ``j`` (one Givens rotation per
        row; rotations at holes are identities and skipped)."""
        n, R = self.n, self.buf
        v = R[j, j + 1:n].copy()
        R[:j, j] = 0.0
        R[j, j:n] = 0.0
        R[j, j] = 1.0
        self.hole[j] = True
        if v.any():
            self._update(R[j + 1:n, j + 1:n], v)

    def _update(self, T, v):
        """Replace the upper triangular ``T`` in place by the factor of :math:`T^T T + v v^T`."""
        m = T.shape[0]
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


class _ActiveSet:
    r"""The active constraints of a Lawson-Hanson solver with constraint generation.

    Slot ``j`` holds a constraint ``a_j = D[j] e_{mu[j]}^T`` (``idx[j]``: which
    competitor(s) ``D[j]`` was formed from: one candidate for a pair, ``K`` for a
    listwise vertex) and its weight ``lam[j]``; ``fac`` factors
    :math:`Q = K_F + \mathbf{1} \mathbf{1}^T` over the slots (holes where a constraint was dropped).
    The pair solver of this module and the listwise solver of
    :mod:`validation.linear_memory.exact_listwise` share it.
    """

    def __init__(self, fac, E, idx_shape=()):
        cap = fac.cap
        self.fac, self.E = fac, E
        self.mu = np.zeros(cap, np.intp)
        self.idx = np.zeros((cap, *idx_shape), np.intp)
        self.D = np.zeros((cap, E.shape[1]))
        self.lam = np.zeros(0)

    def kern(self, mu1, D1, mu2, D2):
        r"""Entries of ``Q``: :math:`\langle a_i, a_j \rangle + 1` for the slots ``(mu1, D1)`` x ``(mu2, D2)``."""
        E = self.E
        return (D1 @ D2.T) * (E[mu1] @ E[mu2].T) + 1.0

    def qmul(self, v, act):
        r""":math:`Q v` over the active slots, identity at holes, without the kernel matrix:
        the margins of :math:`\sum_j v_j a_j` on the slots, plus :math:`\sum v`."""
        m, E = self.fac.n, self.E
        v = np.where(act, v, 0.0)
        Gv = np.zeros(E.shape)
        np.add.at(Gv, self.mu[:m], v[:, None] * self.D[:m])
        Hv = E @ (Gv.T @ E).T
        out = np.einsum("kj,kj->k", self.D[:m], Hv[self.mu[:m]]) + v.sum()
        out[~act] = 0.0
        return out

    def add(self, rows, cols, Dn, act):
        """Append the constraints ``(rows, cols, Dn)`` that are numerically independent
        of the active ones (holes stay decoupled); returns the kept indices into the batch."""
        fac = self.fac
        n = fac.n
        if n:
            Kon = self.kern(self.mu[:n], self.D[:n], rows, Dn)
            Kon[~act] = 0.0
        else:
            Kon = np.zeros((0, len(rows)))
        kept = fac.append(Kon, self.kern(rows, Dn, rows, Dn), 1e-11)
        if kept:
            k = len(kept)
            self.mu[n:n + k], self.idx[n:n + k], self.D[n:n + k] = rows[kept], cols[kept], Dn[kept]
            self.lam = np.concatenate([self.lam, np.zeros(k)])
        return kept

    def solve(self, act, precise):
        r"""The Lawson-Hanson inner loop: solve :math:`Q z = \mathbf{1}` on the active slots and step
        back towards the last feasible weights until :math:`z > 0` on all of them, dropping
        the slots whose weight reaches zero.  ``act`` (the active mask) is updated in
        place; ``precise`` adds one step of iterative refinement with the residual formed
        from the data.  Returns the dropped slots in the order they were dropped."""
        fac, lam = self.fac, self.lam
        dropped = []
        while True:
            rhs = act.astype(np.float64)
            z = fac.solve(rhs)
            if precise:
                z += fac.solve(rhs - self.qmul(z, act))
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
                fac.delete(j)
                lam[j] = 0.0
                act[j] = False
                dropped.append(j)
            if not act.any():
                break
        self.lam = lam
        return dropped

    def compact(self):
        """Remove the holes from the factor and the slots."""
        keep = self.fac.compact()
        m = keep.size
        self.mu[:m], self.idx[:m], self.D[:m] = self.mu[keep], self.idx[keep], self.D[keep]
        self.lam = self.lam[keep]

    def memory(self):
        r"""The primal iterate ``(x, s)``: :math:`x = \sum_j \lambda_j a_j`, :math:`s = \sum_j \lambda_j - 1`."""
        n, E = self.fac.n, self.E
        G = np.zeros(E.shape)
        np.add.at(G, self.mu[:n], self.lam[:, None] * self.D[:n])
        return G.T @ E, float(self.lam.sum()) - 1.0


def _zero_pair_result(facts, src, verify, tol):
    """Infeasibility certificate of a pair with :math:`a_k = 0` (margin 0 for every ``W``)."""
    pairs = np.array([src.zero_pair], dtype=np.intp)
    lam = np.ones(1)
    res = ExactResult(False, 0.0, pairs=pairs, lam=lam, optimal=True, gamma=0.0, active=1)
    res.info.update(method="zero_pair", zero_pair=tuple(src.zero_pair))
    if verify:
        v = verify_infeasible(facts, pairs, lam, tol=tol)
        res.info["verification"] = v
        res.verified = bool(v["ok"])
        res.margin = v["eps"]
    return res


def exact_feasibility(facts, *, tol=DEFAULT_TOL, batch=None, max_iter=None, optimal=False,
                      verify=True, method="auto"):
    r"""Decide whether a full-rank ``W`` recalling all facts exists.

    Parameters
    ----------
    facts : Facts or LazyDPFacts
        OP or DP fact set (:mod:`validation.linear_memory.data`), :math:`p \geq 2`
        facts in dimension :math:`d \geq 1`, finite entries of any scale; a
        :class:`LazyDPFacts` is redrawn block by block and never held.
    tol : float
        Cosine tolerance of the infeasibility certificate: an instance is
        called infeasible when a :math:`\lambda` is found that bounds the cosine
        margin of every ``W`` by ``eps <= tol`` (default ``1e-9``).
    batch : int, optional
        Lawson-Hanson: violated pairs added per outer iteration (default
        ``max(16, d^2 // 40)``).
    max_iter : int, optional
        Lawson-Hanson: outer iterations before giving up (default :math:`20 d^2`).
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
        ``"lh"``: Lawson-Hanson only (also used for ``optimal=True``);
        ``"auto"`` (default): augmented Lagrangian, then, if it is undecided
        after its last penalty stage, Lawson-Hanson warm-started from its
        support.  ``info["method"]`` says which decided (``"zero_pair"``
        when a pair with :math:`a_k = 0` decided before any solver ran).

    Returns
    -------
    ExactResult

    Raises
    ------
    ValueError
        For :math:`p < 2`, :math:`d < 1`, arrays of the wrong shape or non-finite
        entries (the message names the part of ``facts``), and bad
        ``tol``, ``batch``, ``max_iter`` or ``method``.

    See Also
    --------
    validation.linear_memory.exact.verify_feasible : Independent check of a memory that recalls every fact.
    validation.linear_memory.exact.verify_infeasible : Independent check of a Gordan certificate.
    validation.linear_memory.exact_listwise.listwise_feasibility : Same decision for top-1 at a margin and for TAM.

    Notes
    -----
    **Normalisation and zero pairs.**  Inputs are scaled to unit norm and all
    candidates by one factor to unit root-mean-square norm (recall, hence the
    decision, is invariant under both).  A pair with :math:`a_k = 0` (an input
    :math:`e_\mu = 0`, two OP facts with the same output, a DP competitor equal to
    the correct candidate) has margin 0 under every ``W``; the first one found
    is returned as the certificate :math:`\lambda = 1` (``margin = 0``).

    **Screened margins.**  The solvers see all :math:`p (p - 1)` margins of an
    iterate through the internal scorer: exact for the pairs that can be active
    (or violated), and elsewhere lower bounds from the last exact value of
    the row (:math:`\beta m_0 - \|\delta_\perp\| \|r_\perp\|`), so a row is re-scored only
    when its bound no longer clears the activity threshold.  For DP facts this
    is what makes large ``d`` possible: a row block of candidates is redrawn
    only when one of its rows is re-scored, and never all :math:`p^2 d` at once.

    **Augmented Lagrangian (default).**  The NNLS problem below is the dual
    of the projection problem in ``W`` space::

        min_{x, s} 1/2 |x|_F^2 + 1/2 (1 + s)^2   s.t.  <a_k, x> + s >= 0,

    solved by the method of multipliers: for a penalty :math:`\rho` (1, 10, ...,
    ``1e8``) minimise :math:`\frac{1}{2} \|x\|^2 + \frac{1}{2} (1+s)^2 + \frac{1}{2 \rho} \sum_k
    [(\lambda_k - \rho (\langle a_k, x \rangle + s))_+^2 - \lambda_k^2]` by semismooth Newton
    (generalised Hessian :math:`I + \rho \sum_{k\ \mathrm{active}} (a_k, 1)(a_k, 1)^T`
    applied matrix-free through the product structure, :math:`O(p d^2 + n d)`
    per product; preconditioned CG; exact line search on the convex
    piecewise quadratic over the watched pairs), then
    :math:`\lambda \leftarrow (\lambda - \rho g)_+`.  At an inner optimum
    :math:`x = \sum_k \lambda_k a_k`, so :math:`\lambda` is a candidate Gordan
    certificate (checked after each update); every Newton iterate ``x`` whose
    margins are all positive is a candidate memory.

    **Lawson-Hanson (fallback, ``method="lh"``).**  Active set on
    :math:`\min_{\lambda \geq 0} \|\sum_k \lambda_k a_k\|^2 + (\sum_k \lambda_k - 1)^2` with the
    Cholesky factor of the active Gram matrix :math:`(\delta_k \cdot \delta_l)(e_\mu \cdot
    e_\nu) + 1` kept up to date (block appends, rank-one deletions).  Each
    outer iteration scores all pairs with the current :math:`x = \sum \lambda_k
    a_k` and adds the most violated pair of up to ``batch`` inputs.  The
    active set never exceeds :math:`d^2 + 1` pairs.

    References
    ----------
    Lawson & Hanson, *Solving Least Squares Problems* (1974), ch. 23;
    Gordan's alternative; linear associative memories arXiv:2605.10795.

    Examples
    --------
    >>> from validation.linear_memory.data import make_op
    >>> exact_feasibility(make_op(6, 8, rng=0)).feasible        # p <= d
    True
    >>> f = make_op(4, 3, rng=0)
    >>> f.U[3] = f.U[1]                                          # two facts, one output
    >>> r = exact_feasibility(f)
    >>> r.feasible, r.info["method"], r.pairs.tolist(), r.margin
    (False, 'zero_pair', [[1, 3]], 0.0)
    """
    tol = check_real("tol", tol, low=0, low_open=True, allow_array=False)
    if method not in ("auto", "lh", "alm"):
        raise ValueError(f"method must be 'auto', 'alm' or 'lh', got {method!r}")
    if batch is not None:
        batch = check_int("batch", batch, low=1)
    if max_iter is not None:
        max_iter = check_int("max_iter", max_iter, low=1)
    t0 = time.perf_counter()
    src = _Source(facts)
    if src.zero_pair is not None:
        res = _zero_pair_result(facts, src, verify, tol)
        res.seconds = time.perf_counter() - t0
        return res
    sc = _Scorer(src)
    if method == "lh" or optimal:
        res = _lawson_hanson(facts, tol=tol, batch=batch, max_iter=max_iter, optimal=optimal,
                             verify=verify, sc=sc)
    else:
        res = _alm(facts, tol=tol, verify=verify, sc=sc)
        if res.feasible is None and method == "auto":
            r1 = res
            res = _lawson_hanson(facts, tol=tol, batch=batch, max_iter=max_iter, optimal=False,
                                 verify=verify, start=r1.info.pop("support"), sc=sc)
            res.info.update({"alm_" + k: v for k, v in r1.info.items() if k != "screen"})
            res.info["alm_seconds"] = r1.seconds
            res.info["method"] = "alm+lh"
    res.info["screen"] = {"calls": sc.calls, "rows_rescored": sc.rows_rescored, "watched": sc.nw,
                          "rows_read": int(src.rows_read),
                          "rows_drawn": int(getattr(facts, "drawn_rows", 0))}
    res.seconds = time.perf_counter() - t0
    return res


def _verified(res, facts, verify, tol):
    """Attach the verifier's report to a decided result; False if it does not pass."""
    if not verify:
        return True
    v = (verify_feasible(facts, res.W) if res.feasible else
         verify_infeasible(facts, res.pairs, res.lam, tol=tol))
    res.info["verification"] = v
    res.verified = bool(v["ok"])
    if res.feasible:
        res.margin = v["margin"]
    else:
        res.margin = v["eps"]
    return res.verified


def _phase_scorer(facts, sc):
    """The scorer of a solver phase and what the phase reads off it.

    ``sc``: the :class:`_Scorer` shared with an earlier phase, or None for a new
    one on ``facts``.  Returns ``(sc, src, p, d, E, C)``: the scorer, its source,
    the source's sizes and its ``E`` / ``C`` arrays.
    """
    if sc is None:
        sc = _Scorer(_Source(facts))
    src = sc.src
    return sc, src, src.p, src.d, src.E, src.C


def _alm(facts, *, tol, verify, rho_max=1e8, rho0=1.0, newton_per_stage=80, cg_max=250, sc=None,
         screen="stage"):
    r"""Augmented Lagrangian phase of :func:`exact_feasibility` (primal, in ``W`` space).

    Solves :math:`\min \frac{1}{2} \|x\|^2 + \frac{1}{2} (1 + s)^2` s.t. :math:`\langle a_k, x \rangle + s \geq 0` (all pairs),
    whose dual is the NNLS problem of :func:`exact_feasibility`, by the method of
    multipliers; each subproblem by semismooth Newton (matrix-free preconditioned
    CG on the product structure) with an exact line search.  Stops at the first
    verified certificate; otherwise returns an undecided result whose
    ``info["support"]`` (pairs with positive multiplier, largest first) seeds the
    Lawson-Hanson phase.  ``screen="stage"``: Newton steps between checkpoints
    see the watched pairs only (rows whose screening bound fails are not
    re-scored), and every stopping test and certificate is taken on exact
    margins; ``"exact"``: every step re-scores the rows whose bound fails.
    """
    import scipy.sparse as sps

    t0 = time.perf_counter()
    sc, src, p, d, E, C = _phase_scorer(facts, sc)
    if screen not in ("stage", "exact"):
        raise ValueError(f"screen must be 'stage' or 'exact', got {screen!r}")

    def scatter(mu):
        return sps.csr_matrix((np.ones(mu.size), (mu, np.arange(mu.size))), shape=(p, mu.size))

    # start: the Hebbian direction, s at minus the 2 d^2-th smallest margin (that many pairs
    # active), estimated from the rows of the first block when the candidates are redrawn
    Wh = C.T @ E
    x = 0.1 * Wh / np.linalg.norm(Wh)
    kq = min(2 * d * d, p * (p - 1) // 4)
    lo, hi = src.bounds[0]
    r0 = np.arange(lo, hi)
    H = E[r0] @ x.T
    if src.kind == "op":
        Ms = (np.einsum("ij,ij->i", C[r0], H)[:, None] - H @ src.U.T)
    else:
        Ms = np.einsum("ij,ij->i", C[r0], H)[:, None] - (src.block(0) @ H[:, :, None])[:, :, 0]
    Ms[np.arange(r0.size), r0] = np.inf
    vals = Ms[np.isfinite(Ms)]
    j = min((kq * vals.size) // (p * (p - 1)), vals.size - 1)
    s = -float(np.partition(vals, j)[j])
    lam = np.zeros((p, p))
    rho = float(rho0)
    eps_in = 1e-2
    res = None
    n_newton = n_cg = outer = 0
    mu = rh = w = None
    while res is None and rho <= rho_max:
        k_stage = 0
        force = screen == "exact"
        while True:
            # between checkpoints the Newton steps see the watched pairs only (a relaxation);
            # every stopping test and every certificate is taken on exact margins
            M = sc.margins(x, max(0.0, -s), keep=lam > 0, exact=force)
            if float(M.min()) > 0 and not sc.complete:
                M = sc.margins(x, max(0.0, -s), keep=lam > 0, exact=True)
            complete = sc.complete
            force = screen == "exact"
            if float(M.min()) > 0:
                cand = ExactResult(True, math.nan, W=x.copy())
                if _verified(cand, facts, verify, tol):
                    res = cand
                    break
            g = M + s
            np.fill_diagonal(g, 0.0)
            lt = lam - rho * g
            np.fill_diagonal(lt, 0.0)
            mu, rh = np.nonzero(lt > 0)
            w = lt[mu, rh]
            Dl = sc.deltas(mu, rh)
            Sm = scatter(mu)
            Sx = (Sm @ (w[:, None] * Dl)).T @ E          # sum_k w_k a_k
            gx = x - Sx
            gs = (1.0 + s) - float(w.sum())
            gn = math.sqrt(float(np.sum(gx * gx)) + gs * gs)
            if gn <= eps_in or k_stage >= newton_per_stage:
                if not complete:
                    force = True                        # checkpoint: the same x, exact margins
                    continue
                break
            n_newton += 1
            k_stage += 1
            Em = E[mu]
            ds = 1.0 + rho * mu.size
            dx = 1.0 + rho * ((Dl * Dl).T @ (Em * Em))    # Jacobi preconditioner

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
            # exact line search: phi'(t) = 0 for the convex piecewise quadratic phi over the
            # watched pairs (every pair that is active now, or violated, is watched)
            wm, wr = sc.watched()
            gk_all = sc.watched_margins(X) + Xs
            ltw = lt[wm, wr]
            zg = -rho * gk_all
            xd, dd = float(np.sum(x * X)), float(np.sum(X * X))
            T = 2.0
            while True:
                # only pairs with a positive multiplier somewhere on [0, T] enter phi
                ci = np.flatnonzero((ltw > 0) | (ltw + T * zg > 0))
                z0, z1, gk = ltw[ci], zg[ci], gk_all[ci]
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
            cand = ExactResult(False, eps, pairs=np.stack([mu, rh], 1), lam=src.raw_weights(mu, w),
                               optimal=True, gamma=0.0)
            if _verified(cand, facts, verify, tol) and cand.margin <= tol:
                res = cand
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


def _lawson_hanson(facts, *, tol, batch, max_iter, optimal, verify, start=None, sc=None):
    """Lawson-Hanson NNLS with constraint generation (see :func:`exact_feasibility`);
    ``start``: optional (m, 2) pairs that form the first active set; ``sc``: the
    :class:`_Scorer` of the facts (shared with the augmented Lagrangian phase)."""
    t0 = time.perf_counter()
    sc, src, p, d, E, C = _phase_scorer(facts, sc)
    batch = max(16, d * d // 40) if batch is None else check_int("batch", batch, low=1)
    max_iter = 20 * d * d if max_iter is None else check_int("max_iter", max_iter, low=1)
    hole_limit = max(32, (d * d + 1) // 10)
    cap = d * d + 1 + hole_limit
    fac = _Factor(cap)
    A = _ActiveSet(fac, E)                              # A.idx: the competitor rho of a pair
    inF = np.zeros((p, p), bool)
    n_rem = 0
    depth = 0
    single = False
    precise = False
    x = np.zeros((d, d))
    s = -1.0
    res = None
    it = 0
    for it in range(1, max_iter + 1):
        M = sc.margins(x, max(0.0, -s))
        n = fac.n
        act = ~fac.hole[:n]
        n_act = int(act.sum())
        # --- certificates -------------------------------------------------------------
        if n_act and float(M.min()) > 0 and res is None:
            cand = ExactResult(True, math.nan, W=x.copy())
            if _verified(cand, facts, verify, tol):
                res = cand
                if not optimal:
                    break
            else:
                precise = True
        if n_act:
            norms = np.linalg.norm(A.D[:n], axis=1) * np.linalg.norm(E[A.mu[:n]], axis=1)
            eps = float(np.linalg.norm(x)) / float(A.lam[act] @ norms[act])
            if eps <= tol:
                sel = np.nonzero(act & (A.lam > 0))[0]
                cand = ExactResult(False, eps, pairs=np.stack([A.mu[sel], A.idx[sel]], 1),
                                   lam=src.raw_weights(A.mu[sel], A.lam[sel]), optimal=True, gamma=0.0)
                if _verified(cand, facts, verify, tol) and cand.margin <= tol:
                    res = cand
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
            A.compact()
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
            Mh = sc.margins(C.T @ E, 0.0)
            rows = np.arange(min(p, cap - n))
            cols = np.argmin(Mh[rows], axis=1)
        else:
            rows = bad[np.argsort(rowmin[bad])[:nb]]
            cols = np.argmin(y[rows], axis=1)
        kept = A.add(rows, cols, sc.deltas(rows, cols), act)
        if not kept:
            if single:
                break                                   # numerically dependent: stop
            single = True
            continue
        inF[rows[kept], cols[kept]] = True
        act = ~fac.hole[:fac.n]
        # --- Lawson-Hanson inner loop ---------------------------------------------------
        dropped = A.solve(act, precise)
        for j in dropped:
            depth += fac.n - 1 - j
            inF[A.mu[j], A.idx[j]] = False
        n_rem += len(dropped)
        # no pair of the batch survived: add one pair at a time (LH guarantees progress)
        single = not np.any(inF[rows[kept], cols[kept]])
        if int(fac.hole[:fac.n].sum()) > hole_limit:
            A.compact()
        x, s = A.memory()
    n = int((~fac.hole[:fac.n]).sum())
    gamma = float(np.linalg.norm(x)) / (1.0 + s) if n else 0.0
    if optimal and res is not None and res.feasible and res.optimal and n:
        # the certificate found first is feasible, not optimal: certify the optimum itself
        final = ExactResult(True, math.nan, W=x.copy())
        if _verified(final, facts, verify, tol):
            res.W, res.margin, res.verified = final.W, final.margin, final.verified
            res.info["verification"] = final.info.get("verification", res.info.get("verification"))
    if res is None:
        res = ExactResult(None, math.nan, optimal=False)
    if res.feasible is not False:
        res.gamma = gamma
    res.active, res.iterations, res.removals = int(n), it, n_rem
    res.seconds = time.perf_counter() - t0
    res.info["mean_delete_depth"] = depth / max(n_rem, 1)
    res.info.setdefault("method", "lh")
    return res


def _facts_shape(facts):
    """``(kind, E as float64, p, d)`` with the checks every verifier needs."""
    kind = getattr(facts, "kind", None)
    if kind not in ("op", "dp"):
        raise ValueError(f"facts.kind must be 'op' or 'dp', got {kind!r}")
    E = np.asarray(facts.E, np.float64)
    if E.ndim != 2 or E.shape[0] < 2 or E.shape[1] < 1:
        raise ValueError(f"facts.E must be a (p, d) array with p >= 2, d >= 1, got shape {E.shape}")
    return kind, E, E.shape[0], E.shape[1]


def verify_feasible(facts, W, *, chunk=256):
    r"""Check a feasibility certificate: ``W`` recalls every fact, strictly.

    Parameters
    ----------
    facts : Facts or LazyDPFacts
    W : ndarray (d, d)
    chunk : int
        Inputs scored at once (OP and in-memory DP; a lazy DP fact set is
        read in its own blocks).

    Returns
    -------
    dict
        ``ok`` (all :math:`p (p-1)` margins exceed their float64 rounding bound),
        ``margin`` (smallest cosine margin :math:`\langle a_k, W \rangle / (\|a_k\|_F \|W\|_F)`;
        0 for a pair with :math:`a_k = 0`), ``min_gap`` (smallest raw score gap)
        and ``bound`` (its rounding bound).

    See Also
    --------
    validation.linear_memory.exact.verify_infeasible : Counterpart for certificates of infeasibility.
    validation.linear_memory.exact.exact_feasibility : Solver whose memories this verifies.

    Notes
    -----
    Independent of the solver: scores are recomputed from the fact set with
    :func:`validation.linear_memory.models.scores` in float64, then each
    correct score is compared with every competitor.  Rounding bound for a
    gap of two scores :math:`u^T (W e)`: :math:`4 d\, \varepsilon_{64} \|u\| \|W e\|` per score
    (a generous multiple of the standard dot-product bound :math:`d\, \varepsilon \|u\| \|v\|`).
    Data whose magnitude lies outside :math:`[2^{-100}, 2^{100}]` are first scaled by
    powers of two (exact; inputs per row, candidates per candidate set, ``W``
    as a whole), so no score under- or overflows; ``min_gap`` and ``bound``
    are on that scale.
    """
    from .data import Facts
    from .models import scores

    kind, E, p, d = _facts_shape(facts)
    W = np.asarray(W, np.float64)
    if W.shape != (d, d):
        raise ValueError(f"W must have shape (d, d) = {(d, d)}, got {W.shape}")
    chunk = check_int("chunk", chunk, low=1)
    if not np.all(np.isfinite(W)):
        return {"ok": False, "margin": math.nan, "min_gap": math.nan, "bound": math.nan}
    kE = np.array([_pow2_scale(v) for v in np.max(np.abs(E), axis=1)])
    E = np.ldexp(E, -kE[:, None])
    W = np.ldexp(W, -_pow2_scale(float(np.max(np.abs(W)))))
    if kind == "op":
        U = np.asarray(facts.U, np.float64)
        U = np.ldexp(U, -_pow2_scale(float(np.max(np.abs(U)))))
        bounds = [(lo, min(p, lo + chunk)) for lo in range(0, p, chunk)]
    elif isinstance(facts, LazyDPFacts):
        bounds, get = _dp_blocks(facts)
    else:
        bounds = [(lo, min(p, lo + chunk)) for lo in range(0, p, chunk)]
        get = None
    H = E @ W.T                                         # rows W e_mu
    hn = np.linalg.norm(H, axis=1)
    Wn = float(np.linalg.norm(W))
    en = np.linalg.norm(E, axis=1)
    ok, cos_min, gap_min, bound_at = True, math.inf, math.inf, 0.0
    for b, (lo, hi) in enumerate(bounds):
        if kind == "op":
            cand = U
        else:
            cand = np.asarray(facts.U[lo:hi] if get is None else get(b), np.float64)
            kr = np.array([_pow2_scale(v) for v in np.max(np.abs(cand), axis=(1, 2))])
            cand = np.ldexp(cand, -kr[:, None, None])
        Z = scores(W, Facts(kind, E[lo:hi], cand))    # (hi-lo, p)
        idx = np.arange(lo, hi)
        ar = np.arange(hi - lo)
        corr = Z[ar, idx]
        cn = np.linalg.norm(cand, axis=-1)              # (p,) or (hi-lo, p)
        cc = cn[idx] if kind == "op" else cn[ar, idx]
        cnb = np.broadcast_to(cn, Z.shape)
        gap = corr[:, None] - Z
        bound = 4 * d * _EPS * hn[lo:hi, None] * (cnb + cc[:, None])
        gap[ar, idx] = np.inf
        if kind == "op":
            delta_n = np.linalg.norm(cand[idx][:, None, :] - cand[None, :, :], axis=-1)
        else:
            delta_n = np.linalg.norm(cand[ar, idx][:, None, :] - cand, axis=-1)
        an = delta_n * en[lo:hi, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            cosm = np.where(an > 0, gap / (an * Wn), 0.0) if Wn > 0 else np.full(gap.shape, -np.inf)
        cosm[ar, idx] = np.inf
        if np.any(gap <= bound):
            ok = False
        i = np.unravel_index(np.argmin(gap), gap.shape)
        if gap[i] < gap_min:
            gap_min, bound_at = float(gap[i]), float(bound[i])
        cos_min = min(cos_min, float(np.min(cosm)))
    return {"ok": bool(ok), "margin": cos_min, "min_gap": gap_min, "bound": bound_at}


def verify_infeasible(facts, pairs, lam, *, tol=DEFAULT_TOL):
    r"""Check an infeasibility certificate :math:`\sum_k \lambda_k a_k \approx 0`.

    Parameters
    ----------
    facts : Facts or LazyDPFacts
    pairs : array_like (m, 2) of int
        :math:`(\mu, \rho)` with :math:`\mu \neq \rho`.
    lam : array_like (m,)
        Weights (must be >= 0, not all 0).
    tol : float
        Cosine tolerance.

    Returns
    -------
    dict
        ``eps`` :math:`= \|\sum_k \lambda_k a_k\|_F / \sum_k \lambda_k \|a_k\|_F` and
        ``ok = eps <= tol`` (and the weights and pairs are valid),
        ``residual`` (the numerator, on the original data scale),
        ``support``, ``zero_pairs`` (pairs of positive weight with
        :math:`a_k = 0`; any such pair makes ``eps = 0``).

    See Also
    --------
    validation.linear_memory.exact.verify_feasible : Counterpart for certificates of feasibility.
    validation.linear_memory.exact.pair_deltas : Difference rows of the certified pairs.

    Notes
    -----
    For every :math:`W \neq 0`: :math:`\sum_k \lambda_k \|a_k\| \|W\| \cos_k = \langle \sum_k \lambda_k
    a_k, W \rangle \leq \|\sum \lambda_k a_k\| \|W\|`, hence :math:`\min_k \cos_k \leq \mathrm{eps}`: no
    memory recalls all facts with cosine margin above ``eps``.  A pair with
    :math:`a_k = 0` (:math:`\delta_k = 0` or :math:`e_\mu = 0`, exactly) has margin 0 for
    every ``W``, which alone rules out recall (``eps = 0``).  The sum is formed
    here from the fact set in float64 (outer products accumulated by
    ``einsum``), independently of the solver's factorisation, after scaling
    inputs, differences and weights by powers of two (exact) when their
    magnitude lies outside :math:`[2^{-100}, 2^{100}]`.
    """
    tol = check_real("tol", tol, low=0, allow_array=False)
    kind, E, p, d = _facts_shape(facts)
    pairs = np.asarray(pairs)
    lam = np.asarray(lam, np.float64)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or lam.ndim != 1 or pairs.shape[0] != lam.shape[0]:
        raise ValueError(f"pairs must have shape (m, 2) matching lam (m,), got {pairs.shape} and {lam.shape}")
    bad = {"ok": False, "eps": math.inf, "residual": math.nan, "support": int(np.count_nonzero(lam)),
           "zero_pairs": 0}
    if pairs.shape[0] == 0 or not np.issubdtype(pairs.dtype, np.integer):
        return bad
    mu, rho = pairs[:, 0].astype(np.intp), pairs[:, 1].astype(np.intp)
    if not (np.all((0 <= pairs) & (pairs < p)) and np.all(np.isfinite(lam))):
        return bad
    valid = bool(np.all(lam >= 0) and lam.sum() > 0 and np.all(mu != rho))
    Dl = pair_deltas(facts, mu, rho)
    Ek = E[mu]
    zero = (lam > 0) & (np.all(Dl == 0, axis=1) | np.all(Ek == 0, axis=1))
    if valid and zero.any():
        return {"ok": True, "eps": 0.0, "residual": 0.0, "support": int(np.count_nonzero(lam)),
                "zero_pairs": int(zero.sum())}
    ke = _pow2_scale(float(np.max(np.abs(Ek))))
    kd = _pow2_scale(float(np.max(np.abs(Dl))))
    kl = _pow2_scale(float(np.max(np.abs(lam))))
    Ek, Dl, lam = np.ldexp(Ek, -ke), np.ldexp(Dl, -kd), np.ldexp(lam, -kl)
    S = np.einsum("k,ki,kj->ij", lam, Dl, Ek, optimize=True)
    norms = np.linalg.norm(Dl, axis=1) * np.linalg.norm(Ek, axis=1)
    den = float(lam @ norms)
    res = float(np.linalg.norm(S))
    eps = res / den if den > 0 else math.inf
    return {"ok": bool(valid and eps <= tol), "eps": eps, "residual": math.ldexp(res, ke + kd + kl),
            "support": int(np.count_nonzero(lam)), "zero_pairs": 0}


def _trial_instance(params):
    """``(d, p, facts)`` of an exact trial record (``model``, ``d``, ``alpha``, ``seed``,
    optional ``dtype``): the facts of :func:`exact_trial`, also used by the max-margin trial.
    DP candidates are redrawn in blocks (:class:`LazyDPFacts`), never held at once."""
    from replica.load import p_from_load

    from .data import make_facts, trial_rngs

    model = params["model"]
    if model not in ("op", "dp"):
        raise ValueError(f"model must be 'op' or 'dp' for the exact method, got {model!r}")
    d = check_int("d", params["d"], low=1)
    p = p_from_load(params["alpha"], d)
    rf, _ = trial_rngs(params["seed"], d, p)
    dtype = np.dtype(params.get("dtype", "float32"))
    if model == "dp":
        return d, p, LazyDPFacts(p, d, rng=rf, dtype=dtype)
    return d, p, make_facts(model, p, d, rng=rf, dtype=dtype)


@trial("linear_memory.exact", aliases=("validation.linear_memory.exact:exact_trial",))
def exact_trial(params):
    """One exact-capacity trial (module level, for :func:`validation.engine.run_sweep`).

    Parameters
    ----------
    params : dict
        ``model`` ("op" or "dp"), ``d``, ``alpha`` (target load), ``seed``;
        optional ``tol``, ``dtype``.  The facts are those of
        :func:`validation.linear_memory.capacity.capacity_trial` with the same
        ``(model, d, alpha, seed)`` (same generator, float32 draws), so exact
        and trained outcomes are about the same instances.  DP candidates are
        redrawn in blocks (:class:`LazyDPFacts`), never held at once.

    Returns
    -------
    dict
        ``p``, ``load``, ``success`` (= feasible; None if undecided),
        ``margin``, ``gamma``, ``optimal``, ``active``, ``iterations``,
        ``removals``, ``certificate`` ("W"/"lambda"), ``verified`` (the
        certificate passed :func:`verify_feasible` / :func:`verify_infeasible`),
        ``method``, ``seconds``, ``cpu_seconds``.

    See Also
    --------
    validation.linear_memory.exact.exact_params : One parameter record per load and seed.
    validation.linear_memory.exact.certificate_summary : Counts of decided and verified instances over many trials.
    """
    from replica.load import load_of

    t0, c0 = time.perf_counter(), time.process_time()
    d, p, facts = _trial_instance(params)
    r = exact_feasibility(facts, tol=params.get("tol", DEFAULT_TOL))
    out = r.summary()
    out.update(p=p, load=float(load_of(p, d)), success=r.feasible, method=r.info.get("method", "lh"),
               seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
    return out


def exact_params(model, d, loads, seeds):
    """Parameter records (one per load and seed) for :func:`exact_trial`.

    See Also
    --------
    validation.linear_memory.exact.exact_trial : Decides one instance per record.
    """
    return [{"model": model, "d": int(d), "alpha": float(a), "seed": int(s)}
            for a in loads for s in seeds]


def certificate_summary(results, *, tol=DEFAULT_TOL):
    """Summary of the certificates of a list of :func:`exact_trial` results.

    Parameters
    ----------
    results : list of dict
        :func:`exact_trial` results.
    tol : float
        Cosine tolerance the infeasibility bounds are checked against.

    Returns
    -------
    dict
        ``feasible``, ``infeasible``, ``undecided`` (counts),
        ``min_feasible_margin`` (smallest certified cosine margin of a
        feasibility certificate), ``max_infeasible_eps`` (largest cosine bound
        of an infeasibility certificate), ``verified`` (True: every decision
        carries a certificate that passed its verifier, with a margin :math:`> 0`
        or a bound ``<= tol``; False: at least one did not; None: no failure,
        but some records predate the verifier's verdict in the result),
        ``verified_count``, ``unverified_count`` (records without a verdict),
        ``failed_count``, ``seconds_per_instance`` (mean wall),
        ``cpu_seconds_per_instance``.

    See Also
    --------
    validation.linear_memory.exact.exact_trial : Produces the per-instance records being summarised.

    Examples
    --------
    >>> r = [{"success": True, "margin": 1e-3, "verified": True, "seconds": 1.0},
    ...      {"success": False, "margin": 2e-10, "verified": True, "seconds": 3.0}]
    >>> s = certificate_summary(r)
    >>> s["verified"], s["verified_count"], s["seconds_per_instance"]
    (True, 2, 2.0)
    >>> certificate_summary(r + [{"success": True, "margin": -1.0, "verified": True, "seconds": 1.0}])["verified"]
    False
    """
    tol = check_real("tol", tol, low=0, allow_array=False)
    fe = [r for r in results if r.get("success") is True]
    inf = [r for r in results if r.get("success") is False]
    und = [r for r in results if r.get("success") is None]
    n_ok = n_unk = n_fail = 0
    for r in fe + inf:
        v = r.get("verified")
        m = float(r.get("margin", math.nan))
        consistent = (m > 0) if r["success"] else (m <= tol)
        if v is None:
            n_unk += 1
        elif v is True and consistent:
            n_ok += 1
        else:
            n_fail += 1
    n = max(len(results), 1)
    return {"feasible": len(fe), "infeasible": len(inf), "undecided": len(und),
            "min_feasible_margin": min((r["margin"] for r in fe), default=None),
            "max_infeasible_eps": max((r["margin"] for r in inf), default=None),
            "verified": False if n_fail else (None if n_unk else True),
            "verified_count": n_ok, "unverified_count": n_unk, "failed_count": n_fail,
            "seconds_per_instance": sum(r["seconds"] for r in results) / n,
            "cpu_seconds_per_instance": sum(r.get("cpu_seconds", 0.0) for r in results) / n}
