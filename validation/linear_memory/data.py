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

__all__ = ["Facts", "make_facts", "make_op", "make_dp", "dp_nbytes",
           "DEFAULT_MAX_BYTES", "p_from_load", "load_of"]

#: Default cap on the DP candidate tensor (bytes).
DEFAULT_MAX_BYTES = 4 * 2**30


@dataclass(frozen=True)
class Facts:
    """A fact set.

    Attributes
    ----------
    kind : {"op", "dp"}
    E : ndarray, shape (p, d)
        Inputs ``e_mu`` as rows.
    U : ndarray, shape (p, d) for OP, (p, p, d) for DP
        Candidates: ``U[rho]`` (OP) or ``U[mu, rho]`` (DP).

    Notes
    -----
    The correct candidate of input ``mu`` has index ``mu`` in both problems,
    so the targets are ``arange(p)``.
    """

    kind: str
    E: np.ndarray
    U: np.ndarray

    @property
    def p(self):
        return self.E.shape[0]

    @property
    def d(self):
        return self.E.shape[1]

    @property
    def targets(self):
        return np.arange(self.p)

    @property
    def load(self):
        """``alpha = p ln p / d^2``."""
        return load_of(self.p, self.d)

    def astype(self, dtype):
        """Same facts with arrays cast to ``dtype`` (no copy if already)."""
        return Facts(self.kind, self.E.astype(dtype, copy=False), self.U.astype(dtype, copy=False))


def load_of(p, d):
    """Load ``alpha = p ln p / d^2``."""
    return p * np.log(p) / d**2


def p_from_load(alpha, d):
    """Integer number of facts whose load ``p ln p / d^2`` is closest to ``alpha``.

    Parameters
    ----------
    alpha : float
        Target load (> 0).
    d : int
        Dimension (>= 1).

    Returns
    -------
    int
        ``p >= 2``: rounding of ``exp(W(alpha d^2))`` (Lambert W), which solves
        ``p ln p = alpha d^2`` exactly.

    Examples
    --------
    >>> p_from_load(0.5, 20)        # 51 ln 51 = 200.5 = 0.5 * 20^2
    51
    """
    from scipy.special import lambertw

    alpha = check_real("alpha", alpha, low=0, low_open=True, allow_array=False)
    d = check_int("d", d, low=1)
    x = alpha * d * d
    p = float(np.exp(lambertw(x).real))
    lo, hi = max(2, int(np.floor(p))), max(2, int(np.ceil(p)))
    return lo if abs(load_of(lo, d) - alpha) <= abs(load_of(hi, d) - alpha) else hi


def dp_nbytes(p, d, dtype=np.float32):
    """Bytes of the DP candidate tensor: ``p^2 d * itemsize``."""
    return int(p) * int(p) * int(d) * np.dtype(dtype).itemsize


def _check_pd(p, d):
    return check_int("p", p, low=2), check_int("d", d, low=1)


def make_op(p, d, *, rng=None, dtype=np.float64):
    """OP fact set: ``E`` and shared candidates ``U``, both (p, d), i.i.d. N(0,1).

    Parameters
    ----------
    p : int
        Number of facts (>= 2).
    d : int
        Dimension (>= 1).
    rng : None, int or Generator
        Randomness (``np.random.default_rng``).
    dtype : dtype
        float32 or float64.

    Returns
    -------
    Facts

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
    """DP fact set: ``E`` (p, d) and per-input candidates ``U`` (p, p, d).

    Parameters
    ----------
    p, d, rng, dtype
        As in :func:`make_op`.
    max_bytes : int
        Refuse (``ValueError`` naming p and d) if ``p^2 d * itemsize`` exceeds
        it; checked before anything is allocated.

    Returns
    -------
    Facts

    Notes
    -----
    ``U[mu, rho]`` is candidate ``rho`` of input ``mu``; ``U[mu, mu]`` is the
    correct one.  Rows of different inputs are independent, so the recall
    events of different inputs are independent given ``W``.

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
    """Dispatch to :func:`make_op` (``kind="op"``) or :func:`make_dp` (``"dp"``)."""
    if kind == "op":
        return make_op(p, d, rng=rng, dtype=dtype)
    if kind == "dp":
        return make_dp(p, d, rng=rng, dtype=dtype, max_bytes=max_bytes)
    raise ValueError(f"kind must be 'op' or 'dp', got {kind!r}")
