"""Random fact sets for linear associative memories (docs/theory_full_rank.md#the-model).

* **OP** (original problem): inputs ``E`` (p, d) and one shared candidate set
  ``U`` (p, d); the correct candidate of input ``mu`` is ``u_mu``.
* **DP** (decoupled problem): input ``mu`` has its own ``p`` candidates
  ``U[mu]`` (p, d); the correct one is ``U[mu, mu]``.  ``U`` has ``p^2 d``
  numbers, so its size is checked against a memory limit before allocation.

All entries are i.i.d. ``N(0, 1)`` (recall is scale invariant) drawn from the
``rng`` argument only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from replica.load import load_of

__all__ = ["Facts", "make_facts", "make_op", "make_dp", "dp_nbytes", "DEFAULT_MAX_BYTES", "trial_rngs"]

#: Default cap on the DP candidate tensor (bytes).
DEFAULT_MAX_BYTES = 4 * 2**30


@dataclass(frozen=True)
class Facts:
    """A fact set of the original (OP) or decoupled (DP) problem.

    Parameters
    ----------
    kind : {"op", "dp"}
        The problem.
    E : ndarray, shape (p, d)
        Inputs ``e_mu`` as rows.
    U : ndarray, shape (p, d) for OP, (p, p, d) for DP
        Candidates: ``U[rho]`` (OP) or ``U[mu, rho]`` (DP).

    Notes
    -----
    The correct candidate of input ``mu`` has index ``mu`` in both problems,
    so the targets are ``arange(p)``.  The load is ``alpha = p ln p / d^2``.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#the-model
    """

    kind: str
    E: np.ndarray
    U: np.ndarray

    @property
    def p(self):
        """Number of facts."""
        return self.E.shape[0]

    @property
    def d(self):
        """Dimension."""
        return self.E.shape[1]

    @property
    def targets(self):
        """Index of the correct candidate of each input: ``arange(p)``."""
        return np.arange(self.p)

    @property
    def load(self):
        """``alpha = p ln p / d^2``."""
        return load_of(self.p, self.d)

    def astype(self, dtype):
        """Return the same facts with arrays cast to ``dtype`` (no copy if already).

        Parameters
        ----------
        dtype : dtype
            Target floating dtype.

        Returns
        -------
        Facts
            The cast fact set.
        """
        return Facts(self.kind, self.E.astype(dtype, copy=False), self.U.astype(dtype, copy=False))


def dp_nbytes(p, d, dtype=np.float32):
    """Compute the bytes of the DP candidate tensor, ``p^2 d * itemsize``.

    Parameters
    ----------
    p : int
        Number of facts.
    d : int
        Dimension.
    dtype : dtype
        Element type.

    Returns
    -------
    int
        Size of ``U`` of :func:`make_dp` in bytes.

    References
    ----------
    docs/linear_memory.md#protocol

    Examples
    --------
    >>> dp_nbytes(10, 4)
    1600
    """
    return int(p) * int(p) * int(d) * np.dtype(dtype).itemsize


def _check_pd(p, d):
    return check_int("p", p, low=2), check_int("d", d, low=1)


def make_op(p, d, *, rng=None, dtype=np.float64):
    """Draw an OP fact set: ``E`` and shared candidates ``U``, both (p, d), i.i.d. N(0,1).

    Parameters
    ----------
    p : int
        Number of facts (>= 2).
    d : int
        Dimension (>= 1).
    rng : None, int or Generator
        Randomness (``np.random.default_rng``).
    dtype : dtype
        Float32 or float64.

    Returns
    -------
    Facts
        ``kind="op"``; ``E`` is drawn before ``U`` from ``rng``.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#the-model

    Examples
    --------
    >>> f = make_op(5, 3, rng=0)
    >>> f.E.shape, f.U.shape
    ((5, 3), (5, 3))
    """
    p, d = _check_pd(p, d)
    rng = check_rng(rng)
    E = rng.standard_normal((p, d), dtype=np.dtype(dtype).type)
    U = rng.standard_normal((p, d), dtype=np.dtype(dtype).type)
    return Facts("op", E, U)


def make_dp(p, d, *, rng=None, dtype=np.float32, max_bytes=DEFAULT_MAX_BYTES):
    """Draw a DP fact set: ``E`` (p, d) and per-input candidates ``U`` (p, p, d).

    Parameters
    ----------
    p : int
        Number of facts (>= 2).
    d : int
        Dimension (>= 1).
    rng : None, int or Generator
        Randomness (``np.random.default_rng``).
    dtype : dtype
        Float32 or float64.
    max_bytes : int
        Refuse (``ValueError`` naming p and d) if ``p^2 d * itemsize`` exceeds
        it; checked before anything is allocated.

    Returns
    -------
    Facts
        ``kind="dp"``.

    Notes
    -----
    ``U[mu, rho]`` is candidate ``rho`` of input ``mu``; ``U[mu, mu]`` is the
    correct one.  Rows of different inputs are independent, so the recall
    events of different inputs are independent given ``W``.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#the-model

    Examples
    --------
    >>> make_dp(4, 3, rng=0).U.shape
    (4, 4, 3)
    """
    p, d = _check_pd(p, d)
    max_bytes = check_real("max_bytes", max_bytes, low=0, low_open=True, allow_array=False)
    need = dp_nbytes(p, d, dtype)
    if need > max_bytes:
        raise ValueError(
            f"p={p}, d={d}: the DP candidate tensor needs p^2 d * itemsize = "
            f"{need / 2**30:.2f} GiB > max_bytes = {max_bytes / 2**30:.2f} GiB; "
            f"reduce p or d (or raise max_bytes)")
    rng = check_rng(rng)
    t = np.dtype(dtype).type
    E = rng.standard_normal((p, d), dtype=t)
    U = rng.standard_normal((p, p, d), dtype=t)
    return Facts("dp", E, U)


def make_facts(kind, p, d, *, rng=None, dtype=np.float32, max_bytes=DEFAULT_MAX_BYTES):
    """Draw an OP or DP fact set (:func:`make_op` or :func:`make_dp`).

    Parameters
    ----------
    kind : {"op", "dp"}
        The problem.
    p : int
        Number of facts (>= 2).
    d : int
        Dimension (>= 1).
    rng : None, int or Generator
        Randomness.
    dtype : dtype
        Float32 or float64.
    max_bytes : int
        Memory cap of the DP candidate tensor (DP only).

    Returns
    -------
    Facts
        The fact set.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#the-model

    Examples
    --------
    >>> make_facts("op", 4, 3, rng=0).kind
    'op'
    """
    if kind == "op":
        return make_op(p, d, rng=rng, dtype=dtype)
    if kind == "dp":
        return make_dp(p, d, rng=rng, dtype=dtype, max_bytes=max_bytes)
    raise ValueError(f"kind must be 'op' or 'dp', got {kind!r}")


def trial_rngs(seed, d, p):
    """Return independent generators for the facts and the initialisation of a trial.

    Parameters
    ----------
    seed : int
        Trial seed.
    d : int
        Dimension.
    p : int
        Number of facts.

    Returns
    -------
    rng_facts, rng_init : Generator
        Children of ``SeedSequence(seed, spawn_key=(d, p))``.

    Notes
    -----
    The facts depend on ``(seed, d, p)`` only, so OP, low-rank and Hebbian
    trials with equal ``(seed, d, p)`` see the same facts (paired comparison).

    References
    ----------
    docs/linear_memory.md#protocol
    """
    ss = np.random.SeedSequence(entropy=int(seed), spawn_key=(int(d), int(p)))
    a, b = ss.spawn(2)
    return np.random.default_rng(a), np.random.default_rng(b)
