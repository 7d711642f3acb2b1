"""The synthetic factual-recall task of docs/factual_recall.md#task.

``S`` subjects, ``R`` relations; relation ``r`` owns the answer block
:math:`[r D, (r + 1) D)` and fact ``(s, r)`` has answer :math:`a^*(s, r)` in that block
(uniform, fixed per task).  A sequence has length ``T``: the subject and the
relation sit at two distinct uniform positions among the first ``T - 1``, every
other position holds a uniform noise token from a separate noise vocabulary of
size :math:`S + R` and the last token is EOS.

Token ids: subjects ``[0, S)``, relations :math:`[S, S + R)`, noise
:math:`[S + R, 2 (S + R))`, EOS :math:`2 (S + R)`; vocabulary size :math:`2 (S + R) + 1`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_rng
from validation._docparams import fill_doc

__all__ = ["FactTask", "make_task", "structured_answers", "split_facts"]


def _check_ids(name, value, high, *, ndim=1):
    """``value`` as an int64 array of ``ndim`` dimensions with entries in ``[0, high)``."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):
        raise ValueError(f"{name} must be an integer array with entries in [0, {high}), got "
                         f"dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d integer array, got shape {arr.shape}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= high):
        bad = arr[(arr < 0) | (arr >= high)].flat[0]
        raise ValueError(f"{name} must have entries in [0, {high}), got {int(bad)}")
    return arr


@fill_doc
@dataclass(frozen=True)
class FactTask:
    """A factual-recall dataset (see module docstring); build with :func:`make_task`.

    Parameters
    ----------
    S : int
        Subjects (>= 1).
    R : int
        Relations (>= 1).
    D : int
        Answers per relation (>= 2).
    T : int
        Sequence length (>= 3).
    answers : int ndarray (S, R)
        :math:`a^*(s, r)` in :math:`[r D, (r + 1) D)`.

    See Also
    --------
    validation.factual_recall.task.make_task : Draws a task.

    %(ref_task_paper)s
    """

    S: int
    R: int
    D: int
    T: int
    answers: np.ndarray

    def __post_init__(self):
        S = check_int("S", self.S, low=1)
        R = check_int("R", self.R, low=1)
        D = check_int("D", self.D, low=2)
        check_int("T", self.T, low=3)
        a = _check_ids("answers", self.answers, D * R, ndim=2)
        if a.shape != (S, R):
            raise ValueError(f"answers must have shape (S, R) = ({S}, {R}), got {a.shape}")
        if np.any(a // D != np.arange(R)[None, :]):
            raise ValueError("answers must lie in the relation's block: answers[s, r] in "
                             "[r D, (r + 1) D)")

    @property
    def n_facts(self):
        """Number of facts :math:`S R`."""
        return self.S * self.R

    @property
    def n_answers(self):
        """Number of answers :math:`D R`."""
        return self.D * self.R

    @property
    def vocab(self):
        """Vocabulary size :math:`2 (S + R) + 1`."""
        return 2 * (self.S + self.R) + 1

    @property
    def eos(self):
        """Token id of EOS, :math:`2 (S + R)`."""
        return 2 * (self.S + self.R)

    def sample(self, batch, rng=None, *, subjects=None, relations=None):
        """Draw a fresh batch of sequences.

        Parameters
        ----------
        batch : int
            Number of sequences (ignored when ``subjects`` is given).
        rng : None, int or Generator
            Randomness.
        subjects, relations : int ndarray, optional
            Fix the facts of the batch (e.g. every fact once for evaluation);
            otherwise uniform.

        Returns
        -------
        tokens : int ndarray (batch, T)
            Token ids.
        targets : int ndarray (batch,)
            Answer index in :math:`[0, D R)`.
        subjects, relations : int ndarray (batch,)
            The facts of the sequences.

        Notes
        -----
        The subject position is uniform on ``[0, T - 1)`` and the relation
        position uniform on the ``T - 2`` other slots (drawn on ``[0, T - 2)``
        and shifted past the subject), so the ordered pair is uniform over the
        ``(T - 1)(T - 2)`` pairs of distinct positions.  No Python loop over
        the batch.

        Examples
        --------
        >>> task = make_task(3, 2, 2, T=4, rng=0)
        >>> s, r = task.all_facts()
        >>> tok, y, _, _ = task.sample(0, rng=1, subjects=s, relations=r)
        >>> tok.shape, bool(np.all(y == task.answers[s, r]))
        ((6, 4), True)
        """
        rng = check_rng(rng)
        S, R, T = self.S, self.R, self.T
        if subjects is None and relations is None:
            batch = check_int("batch", batch, low=1)
            subjects = rng.integers(0, S, size=batch)
            relations = rng.integers(0, R, size=batch)
        else:
            if subjects is None or relations is None:
                raise ValueError("subjects and relations must be given together, got only "
                                 + ("relations" if subjects is None else "subjects"))
            subjects = _check_ids("subjects", subjects, S)
            relations = _check_ids("relations", relations, R)
            if subjects.shape != relations.shape:
                raise ValueError(f"relations must have the shape of subjects {subjects.shape}, "
                                 f"got {relations.shape}")
            batch = subjects.shape[0]
        tokens = rng.integers(S + R, 2 * (S + R), size=(batch, T))
        ps = rng.integers(0, T - 1, size=batch)
        pr = rng.integers(0, T - 2, size=batch)
        pr = pr + (pr >= ps)  # distinct from ps, uniform on the other T-2 slots
        rows = np.arange(batch)
        tokens[rows, ps] = subjects
        tokens[rows, pr] = S + relations
        tokens[:, -1] = self.eos
        return tokens, self.answers[subjects, relations], subjects, relations

    def all_facts(self):
        """List every fact once (row-major).

        Returns
        -------
        subjects, relations : int ndarray (S R,)
            Subject and relation of each fact.

        Examples
        --------
        >>> make_task(2, 2, 2, T=3, rng=0).all_facts()
        (array([0, 0, 1, 1]), array([0, 1, 0, 1]))
        """
        s, r = np.meshgrid(np.arange(self.S), np.arange(self.R), indexing="ij")
        return s.ravel(), r.ravel()


@fill_doc
def make_task(S, R, D, T=32, rng=None, *, distinct=False):
    r"""Draw a factual-recall task.

    Parameters
    ----------
    S, R : int
        Subjects and relations (>= 1).
    D : int
        Answers per relation (>= 2).
    T : int
        Sequence length (>= 3: subject, relation, EOS).
    rng : None, int or Generator
        Randomness of the answers.
    distinct : bool
        If True, the answers of a relation are distinct across subjects (a
        random injection of the subjects into the block), which needs
        :math:`S \leq D`.

    Returns
    -------
    FactTask
        The task (answers fixed; sequences drawn by :meth:`FactTask.sample`).

    Raises
    ------
    ValueError
        ``S, R < 1``, ``D < 2``, ``T < 3`` or, with ``distinct=True``,
        :math:`S > D` (more facts per relation than the block has answers).

    See Also
    --------
    validation.factual_recall.task.split_facts : Splits a number of facts into subjects and relations.
    validation.factual_recall.task.FactTask : The task it returns.

    Notes
    -----
    :math:`\mathrm{answers}[s, r] = r D + u(s, r)` with :math:`u` i.i.d. uniform on
    :math:`\{0, \dots, D - 1\}` (or a uniform injection :math:`s \mapsto u` per relation when
    ``distinct``).  The task is fixed by ``rng``; the sequences are drawn
    afresh by :meth:`FactTask.sample`.

    %(ref_task_paper)s

    Examples
    --------
    >>> task = make_task(4, 2, 3, T=5, rng=0)
    >>> tok, y, s, r = task.sample(6, rng=1)
    >>> print(tok[:, -1], task.eos)                    # every sequence ends with EOS
    [12 12 12 12 12 12] 12
    >>> print(y, r)                                    # answer y lies in relation r's block of 3
    [3 3 0 0 4 2] [1 1 0 0 1 0]
    """
    S = check_int("S", S, low=1)
    R = check_int("R", R, low=1)
    D = check_int("D", D, low=2)
    T = check_int("T", T, low=3)
    rng = check_rng(rng)
    if distinct:
        if S > D:
            raise ValueError(f"S must be <= D={D} when answers are distinct (more facts per "
                             f"relation than answers), got {S}")
        within = np.stack([rng.permutation(D)[:S] for _ in range(R)], axis=1)
    else:
        within = rng.integers(0, D, size=(S, R))
    answers = within + D * np.arange(R)[None, :]
    return FactTask(S, R, D, T, answers)


@fill_doc
def structured_answers(S, R, D):
    r"""Build structured facts :math:`a(s, r) = \lfloor s D / S \rfloor + r D` (sequential-learning model).

    Parameters
    ----------
    S, R : int
        Subjects and relations (>= 1).
    D : int
        Answers per relation (>= 2, <= ``S``).

    Returns
    -------
    int ndarray (S, R)
        The answers.

    See Also
    --------
    validation.factual_recall.sequential.train_sequential : The model trained on these facts.

    Notes
    -----
    The answer is additive in (subject, relation): the within-block index
    :math:`\lfloor s D / S \rfloor` depends on the subject only.  Every within-block index
    is used when :math:`S \geq D`; :math:`S < D` is refused (more answers per block than
    subjects).

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> structured_answers(4, 2, 2)
    array([[0, 2],
           [0, 2],
           [1, 3],
           [1, 3]])
    """
    S = check_int("S", S, low=1)
    R = check_int("R", R, low=1)
    D = check_int("D", D, low=2)
    if S < D:
        raise ValueError(f"S must be >= D={D} for structured facts, got {S}")
    s = np.arange(S)[:, None]
    r = np.arange(R)[None, :]
    return (s * D) // S + r * D


@fill_doc
def split_facts(n_facts):
    r"""Split a number of facts into ``S`` subjects and ``R`` relations, ``R`` close to :math:`\sqrt{n}`.

    Parameters
    ----------
    n_facts : int
        Target number of facts :math:`S R` (>= 1).

    Returns
    -------
    tuple of int
        ``(S, R)`` with :math:`R = \max(1, \mathrm{round}(\sqrt{n}))` and
        :math:`S = \max(1, \mathrm{round}(n / R))`;
        :math:`S R` can differ slightly from ``n`` (128 becomes 12 x 11 = 132).

    See Also
    --------
    validation.factual_recall.task.make_task : Draws a task of ``S`` subjects and ``R`` relations.

    Notes
    -----
    A square split keeps the vocabulary :math:`2 (S + R) + 1` (and so the noise
    vocabulary :math:`S + R`) smallest for a given number of facts.

    %(ref_experiments_paper)s

    Examples
    --------
    >>> split_facts(100), split_facts(128), split_facts(3)
    ((10, 10), (12, 11), (2, 2))
    """
    n_facts = check_int("n_facts", n_facts, low=1)
    R = max(1, int(round(math.sqrt(n_facts))))
    S = max(1, int(round(n_facts / R)))
    return S, R
