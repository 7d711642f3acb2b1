r"""Random fact sets for linear associative memories (docs/theory_full_rank.md#the-model).

* **OP** (original problem): inputs ``E`` (p, d) and one shared candidate set
  ``U`` (p, d); the correct candidate of input :math:`\mu` is :math:`u_\mu`.
* **DP** (decoupled problem): input :math:`\mu` has its own ``p`` candidates
  ``U[mu]`` (p, d); the correct one is ``U[mu, mu]``.  ``U`` has :math:`p^2 d`
  numbers, so its size is checked against a memory limit before allocation.

All entries are i.i.d. :math:`\mathcal{N}(0, 1)` (recall is scale invariant) drawn from the
``rng`` argument only.
"""
from __future__ import annotations

import inspect

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from replica.load import load_of
from ._docparams import fill_doc

__all__ = ["Facts", "OPFacts", "DPFacts", "FACT_TYPES", "fact_type", "make_facts", "make_op", "make_dp", "dp_nbytes", "DEFAULT_MAX_BYTES", "trial_rngs"]

#: Default cap on the DP candidate tensor (bytes).
DEFAULT_MAX_BYTES = 4 * 2**30


def _check_pd(p, d):
    return check_int("p", p, low=2), check_int("d", d, low=1)


def _split_args(args, kwargs):
    """``(kind, E, U)`` from ``(E, U)``, ``(kind, E, U)`` or keywords (kind None when not given)."""
    kw = dict(kwargs)
    names = ("kind", "E", "U") if len(args) + len(kw) == 3 else ("E", "U")
    if len(args) > len(names) or set(kw) - set(names[len(args):]) or len(args) + len(kw) != len(names):
        raise TypeError(f"a fact set takes (E, U) or (kind, E, U), got {len(args)} positional and "
                        f"keywords {sorted(kw)}")
    vals = dict(zip(names, args), **kw)
    return vals.get("kind"), vals["E"], vals["U"]


class _FactShape:
    """``p``, ``d`` and the load of a fact set, read from its inputs ``E`` (p, d)
    (shared by :class:`Facts` and ``validation.linear_memory.exact.LazyDPFacts``)."""

    __slots__ = ()

    @property
    def p(self):
        """Number of facts."""
        return self.E.shape[0]

    @property
    def d(self):
        """Dimension."""
        return self.E.shape[1]

    @property
    def load(self):
        r""":math:`\alpha = p \ln p / d^2`."""
        return load_of(self.p, self.d)


@fill_doc
class Facts(_FactShape):
    r"""A fact set: inputs ``E`` (p, d) and their candidates ``U``; one subclass per problem.

    :class:`OPFacts` (original problem, one shared candidate set) and
    :class:`DPFacts` (decoupled problem, each input its own candidates) differ
    only in how a score row is formed from :math:`W e_\mu` and how a gradient is
    pulled back to ``d`` dimensions; everything else (training, scores,
    recall) is written once against these methods.

    Parameters
    ----------
    E : ndarray, shape (p, d)
        Inputs :math:`e_\mu` as rows.
    U : ndarray, shape (p, d) for OP, (p, p, d) for DP
        Candidates: ``U[rho]`` (OP) or ``U[mu, rho]`` (DP).

    See Also
    --------
    validation.linear_memory.data.make_facts : Draw a Gaussian fact set of either problem.
    validation.linear_memory.data.fact_type : The subclass that a problem name selects.

    Notes
    -----
    ``Facts(kind, E, U)`` builds the subclass named by ``kind`` (``"op"`` or
    ``"dp"``, :data:`FACT_TYPES`); a subclass also accepts the same three
    arguments when ``kind`` is its own (``type(facts)(facts.kind, E, U)``).
    ``kind`` is a class attribute, kept readable for code that reports which
    problem a set belongs to.  The correct candidate of input :math:`\mu` has index
    :math:`\mu` in both problems, so the targets are ``arange(p)``.  The load is
    :math:`\alpha = p \ln p / d^2`.  Instances are immutable (the arrays are not
    copied).

    %(ref_full_rank_model)s

    Examples
    --------
    >>> f = Facts("dp", np.zeros((3, 2)), np.zeros((3, 3, 2)))
    >>> type(f).__name__, f.kind, f.p, f.d
    ('DPFacts', 'dp', 3, 2)
    """

    __slots__ = ("E", "U")
    #: Name of the problem (``"op"`` or ``"dp"``), set by each subclass.
    kind = None

    def __new__(cls, *args, **kwargs):
        if cls is Facts:
            cls = fact_type(_split_args(args, kwargs)[0])
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        kind, E, U = _split_args(args, kwargs)
        if kind is not None and kind != self.kind:
            raise ValueError(f"kind must be {self.kind!r} for {type(self).__name__}, got {kind!r}")
        object.__setattr__(self, "E", E)
        object.__setattr__(self, "U", U)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __reduce__(self):
        return (type(self), (self.E, self.U))

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p}, d={self.d}, dtype={self.E.dtype})"

    @property
    def targets(self):
        """Index of the correct candidate of each input: ``arange(p)``."""
        return np.arange(self.p)

    def astype(self, dtype):
        """Return the same facts with arrays cast to ``dtype`` (no copy if already).

        Parameters
        ----------
        dtype : dtype
            Target floating dtype.

        Returns
        -------
        Facts
            The cast fact set (same subclass).
        """
        return type(self)(self.E.astype(dtype, copy=False), self.U.astype(dtype, copy=False))

    def score_rows(self, H):
        r"""Return the score matrix from the rows :math:`H_\mu = W e_\mu`.

        Parameters
        ----------
        H : ndarray, shape (p, d)
            :math:`E W^T` (possibly scaled).

        Returns
        -------
        ndarray, shape (p, p)
            ``Z[mu, rho]``: score of candidate :math:`\rho` of input :math:`\mu`.
        """
        raise NotImplementedError

    def pull_back(self, X):
        r"""Return :math:`A_\mu = \sum_\rho X_{\mu\rho} v_{\mu\rho}`, the candidates weighted by ``X``.

        Parameters
        ----------
        X : ndarray, shape (p, p)
            Weights per (input, candidate), e.g. softmax probabilities.

        Returns
        -------
        ndarray, shape (p, d)
            One ``d``-vector per input.
        """
        raise NotImplementedError

    @classmethod
    @fill_doc
    def candidate_nbytes(cls, p, d, dtype=np.float32):
        """Return the bytes of the candidate tensor ``U`` of a fact set of this problem.

        Parameters
        ----------
        %(nbytes_args)s

        Returns
        -------
        int
            ``p d * itemsize`` (OP) or ``p^2 d * itemsize`` (DP).
        """
        raise NotImplementedError

    @classmethod
    @fill_doc
    def draw(cls, p, d, *, rng=None, dtype=np.float32, max_bytes=DEFAULT_MAX_BYTES):
        r"""Draw a fact set of this problem, all entries i.i.d. :math:`\mathcal{N}(0, 1)`.

        Parameters
        ----------
        %(p)s %(d)s
        rng : None, int or Generator
            Randomness.
        %(dtype)s
        max_bytes : int
            Memory cap of the candidate tensor (DP only).

        Returns
        -------
        Facts
            The fact set (``E`` is drawn before ``U``).
        """
        raise NotImplementedError

    def correct(self):
        r"""Return the correct candidate of each input, as rows (p, d).

        Returns
        -------
        ndarray, shape (p, d)
            :math:`u_\mu` (OP) or ``U[mu, mu]`` (DP).
        """
        raise NotImplementedError


@fill_doc
class OPFacts(Facts):
    r"""An OP fact set: one candidate set ``U`` (p, d) shared by all inputs (see :class:`Facts`).

    Parameters
    ----------
    E : ndarray, shape (p, d)
        Inputs :math:`e_\mu` as rows.
    U : ndarray, shape (p, d)
        Candidates :math:`u_\rho`; the correct one of input :math:`\mu` is :math:`u_\mu`.

    See Also
    --------
    validation.linear_memory.data.make_op : Draw an OP fact set with i.i.d. N(0, 1) entries.
    validation.linear_memory.data.DPFacts : The decoupled problem, each input with its own candidates.

    %(ref_full_rank_model)s
    """

    __slots__ = ()
    kind = "op"

    @classmethod
    def candidate_nbytes(cls, p, d, dtype=np.float32):
        return int(p) * int(d) * np.dtype(dtype).itemsize

    @classmethod
    def draw(cls, p, d, *, rng=None, dtype=np.float32, max_bytes=DEFAULT_MAX_BYTES):
        p, d = _check_pd(p, d)
        rng = check_rng(rng)
        E = rng.standard_normal((p, d), dtype=np.dtype(dtype).type)
        U = rng.standard_normal((p, d), dtype=np.dtype(dtype).type)
        return cls(E, U)

    def score_rows(self, H):
        return H @ self.U.T

    def pull_back(self, X):
        return X @ self.U

    def correct(self):
        return self.U


@fill_doc
class DPFacts(Facts):
    r"""A DP fact set: input :math:`\mu` has its own candidates ``U[mu]`` (p, d) (see :class:`Facts`).

    Parameters
    ----------
    E : ndarray, shape (p, d)
        Inputs :math:`e_\mu` as rows.
    U : ndarray, shape (p, p, d)
        ``U[mu, rho]``: candidate :math:`\rho` of input :math:`\mu`; the correct one is ``U[mu, mu]``.

    See Also
    --------
    validation.linear_memory.data.make_dp : Draw a DP fact set with i.i.d. N(0, 1) entries.
    validation.linear_memory.exact.LazyDPFacts : The same numbers, redrawn block by block instead of held.

    %(ref_full_rank_model)s
    """

    __slots__ = ()
    kind = "dp"

    @classmethod
    def candidate_nbytes(cls, p, d, dtype=np.float32):
        return dp_nbytes(p, d, dtype)

    @classmethod
    def draw(cls, p, d, *, rng=None, dtype=np.float32, max_bytes=DEFAULT_MAX_BYTES):
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
        return cls(E, U)

    def score_rows(self, H):
        return (self.U @ H[:, :, None])[:, :, 0]           # batched (p,d)@(d,1)

    def pull_back(self, X):
        return (X[:, None, :] @ self.U)[:, 0, :]

    def correct(self):
        idx = np.arange(self.p)
        return self.U[idx, idx]


#: The fact-set types by problem name.
FACT_TYPES = {"op": OPFacts, "dp": DPFacts}

# the documented signature (the three-argument form of the notes is accepted too)
Facts.__signature__ = inspect.Signature([inspect.Parameter("E", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                         inspect.Parameter("U", inspect.Parameter.POSITIONAL_OR_KEYWORD)])


def fact_type(kind):
    """Return the fact-set class of a problem.

    Parameters
    ----------
    kind : {"op", "dp"}
        The problem.

    Returns
    -------
    type
        :class:`OPFacts` or :class:`DPFacts`.

    Raises
    ------
    ValueError
        For another name.

    See Also
    --------
    validation.linear_memory.data.Facts : Base class of the two fact-set types.
    validation.linear_memory.data.make_facts : Draw a fact set of the named problem.

    References
    ----------
    docs/theory_full_rank.md#the-model

    Examples
    --------
    >>> fact_type("op").__name__
    'OPFacts'
    """
    try:
        return FACT_TYPES[kind]
    except (KeyError, TypeError):
        raise ValueError(f"kind must be 'op' or 'dp', got {kind!r}") from None


@fill_doc
def dp_nbytes(p, d, dtype=np.float32):
    """Compute the bytes of the DP candidate tensor, ``p^2 d * itemsize``.

    Parameters
    ----------
    %(nbytes_args)s

    Returns
    -------
    int
        Size of ``U`` of :func:`make_dp` in bytes.

    See Also
    --------
    validation.linear_memory.data.Facts.candidate_nbytes : The byte count of either problem, as a class method.

    %(ref_protocol)s

    Examples
    --------
    >>> dp_nbytes(10, 4)
    1600
    """
    return int(p) * int(p) * int(d) * np.dtype(dtype).itemsize


@fill_doc
def make_op(p, d, *, rng=None, dtype=np.float64):
    """Draw an OP fact set: ``E`` and shared candidates ``U``, both (p, d), i.i.d. N(0,1).

    Parameters
    ----------
    %(p)s %(d)s
    rng : None, int or Generator
        Randomness (``np.random.default_rng``).
    %(dtype)s

    Returns
    -------
    Facts
        ``kind="op"``; ``E`` is drawn before ``U`` from ``rng``.

    See Also
    --------
    validation.linear_memory.data.make_dp : Per-input candidates instead of one shared set.
    validation.linear_memory.data.make_facts : Draw either problem, chosen by name.

    %(ref_full_rank_model)s

    Examples
    --------
    >>> f = make_op(5, 3, rng=0)
    >>> f.E.shape, f.U.shape
    ((5, 3), (5, 3))
    """
    return OPFacts.draw(p, d, rng=rng, dtype=dtype)


@fill_doc
def make_dp(p, d, *, rng=None, dtype=np.float32, max_bytes=DEFAULT_MAX_BYTES):
    r"""Draw a DP fact set: ``E`` (p, d) and per-input candidates ``U`` (p, p, d).

    Parameters
    ----------
    %(p)s %(d)s
    rng : None, int or Generator
        Randomness (``np.random.default_rng``).
    %(dtype)s
    max_bytes : int
        Refuse (``ValueError`` naming p and d) if ``p^2 d * itemsize`` exceeds
        it; checked before anything is allocated.

    Returns
    -------
    Facts
        ``kind="dp"``.

    See Also
    --------
    validation.linear_memory.data.make_op : One candidate set shared by every input.
    validation.linear_memory.data.dp_nbytes : Bytes of the :math:`p^2 d` tensor it allocates.
    validation.linear_memory.exact.LazyDPFacts : The same draw without holding ``U``.

    Notes
    -----
    ``U[mu, rho]`` is candidate :math:`\rho` of input :math:`\mu`; ``U[mu, mu]`` is the
    correct one.  Rows of different inputs are independent, so the recall
    events of different inputs are independent given ``W``.

    %(ref_full_rank_model)s

    Examples
    --------
    >>> make_dp(4, 3, rng=0).U.shape
    (4, 4, 3)
    """
    return DPFacts.draw(p, d, rng=rng, dtype=dtype, max_bytes=max_bytes)


@fill_doc
def make_facts(kind, p, d, *, rng=None, dtype=np.float32, max_bytes=DEFAULT_MAX_BYTES):
    """Draw an OP or DP fact set (:func:`make_op` or :func:`make_dp`).

    Parameters
    ----------
    kind : {"op", "dp"}
        The problem.
    %(p)s %(d)s
    rng : None, int or Generator
        Randomness.
    %(dtype)s
    max_bytes : int
        Memory cap of the DP candidate tensor (DP only).

    Returns
    -------
    Facts
        The fact set.

    See Also
    --------
    validation.linear_memory.data.make_op : The OP draw it dispatches to.
    validation.linear_memory.data.make_dp : The DP draw it dispatches to.
    validation.linear_memory.data.trial_rngs : The facts and initialisation generators of one trial.

    %(ref_full_rank_model)s

    Examples
    --------
    >>> make_facts("op", 4, 3, rng=0).kind
    'op'
    """
    return fact_type(kind).draw(p, d, rng=rng, dtype=dtype, max_bytes=max_bytes)


@fill_doc
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

    See Also
    --------
    validation.linear_memory.data.make_facts : Draw the facts of a trial from the first generator.

    Notes
    -----
    The facts depend on ``(seed, d, p)`` only, so OP, low-rank and Hebbian
    trials with equal ``(seed, d, p)`` see the same facts (paired comparison).

    %(ref_protocol)s
    """
    ss = np.random.SeedSequence(entropy=int(seed), spawn_key=(int(d), int(p)))
    a, b = ss.spawn(2)
    return np.random.default_rng(a), np.random.default_rng(b)
