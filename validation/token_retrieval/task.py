r"""Token-retrieval task: embeddings, permutation labels and sequences.

The formulation is *ours*: only the abstract and reviews of Vural, Bietti,
Soltanolkotabi & Wu, "Learning to recall with transformers beyond orthogonal
embeddings" (ICLR 2026) are available.  Every modelling choice is listed in
``docs/token_retrieval.md`` and is a parameter where reasonable.

Task
----
* A vocabulary of ``V`` tokens with embeddings ``e_v`` (rows of ``E``), a fixed
  random permutation ``perm`` (the map ``Pi*``) sending token ``v`` to label
  ``perm[v]``, label unembeddings ``u_k`` (rows of ``U``), a trigger embedding
  ``z_trig`` and the EOS (query) embedding ``q``.
* ``kind="random"``: ``E``, ``U``, ``z_trig``, ``q`` have i.i.d. :math:`\mathcal{N}(0, 1/d)`
  entries (norm ~ 1, pairwise overlaps ~ :math:`1/\sqrt{d}`; :math:`d < V` allowed).
* ``kind="orthogonal"``: one-hot vectors, :math:`e_v = u_v = b_v` (``v < V``),
  :math:`z_{\mathrm{trig}} = b_V`, :math:`q = b_{V+1}` (needs :math:`d \geq V + 2`).  One-hot and any
  orthonormal frame give identical predictions (the model and GD are
  equivariant under a rotation of :math:`\mathbb{R}^d`), so one-hot is used.
* A sequence has ``L`` positions; at one position ``p`` (uniform) sits the
  informative token ``y`` whose embedding is :math:`e_y + z_{\mathrm{trig}}`; the other
  :math:`L - 1` positions hold noise tokens.  The target is ``perm[y]``.  The EOS
  query ``q`` is *not* one of the ``L`` attended positions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from ._docparams import fill_doc

__all__ = ["Embeddings", "Batch", "make_embeddings", "sample_sequences", "check_sizes"]

KINDS = ("random", "orthogonal")
NOISE = ("vocab", "gaussian")


@fill_doc
def check_sizes(*, V=None, d=None, L=None, N=None, m=None):
    """Validate the task sizes and return them as ints.

    Parameters
    ----------
    V, d, L, N, m : int, optional
        Vocabulary (>= 2), dimension (>= 1), sequence length (>= 2), number
        of sequences (>= 1), MLP width (>= 1).  ``None`` entries are skipped.

    Returns
    -------
    dict
        ``{name: int}`` for the given entries.

    Raises
    ------
    ValueError
        Naming the argument, its value and the valid range.

    See Also
    --------
    validation.token_retrieval.task.make_embeddings : Draw the fixed vectors of the task.
    validation.token_retrieval.runs.run_config
        Run the early phase once on a fresh task and return its success statistics.

    %(ref_task)s

    Examples
    --------
    >>> check_sizes(V=10, L=3)
    {'V': 10, 'L': 3}
    >>> check_sizes(L=1)
    Traceback (most recent call last):
    ...
    ValueError: L must be an integer >= 2, got 1
    """
    out = {}
    if V is not None:
        out["V"] = check_int("V", V, low=2)
    if d is not None:
        out["d"] = check_int("d", d, low=1)
    if L is not None:
        out["L"] = check_int("L", L, low=2)
    if N is not None:
        out["N"] = check_int("N", N, low=1)
    if m is not None:
        out["m"] = check_int("m", m, low=1)
    return out


#: The See Also entries of the batch and of the embeddings' draw (a ``fill_doc`` entry).
_TASK_LINKS = ("validation.token_retrieval.task.sample_sequences : Draw ``N`` sequences of length ``L``.\n"
               "validation.token_retrieval.task.Embeddings : Fixed (untrained) vectors of the task, "
               "drawn by ``make_embeddings``.")


def _axis_length(array, axis, doc):
    """Return a read-only property: the length of axis ``axis`` of the field ``array``."""
    def length(self):
        return getattr(self, array).shape[axis]

    length.__doc__ = doc
    return property(length)


@fill_doc
@dataclass(frozen=True)
class Embeddings:
    r"""Fixed (untrained) vectors of the task, drawn by :func:`make_embeddings`.

    Parameters
    ----------
    E : ndarray, shape (V, d)
        Token embeddings ``e_v``.
    U : ndarray, shape (V, d)
        Label unembeddings ``u_k`` (logit of label ``k`` is :math:`u_k^T (\ldots)`).
    z_trig : ndarray, shape (d,)
        Trigger added to the informative token.
    q : ndarray, shape (d,)
        EOS (query) embedding.
    perm : ndarray of int, shape (V,)
        Labels: token ``v`` has label ``perm[v]`` (the permutation ``Pi*``).
    kind : str
        ``"random"`` or ``"orthogonal"``.

    See Also
    --------
    validation.token_retrieval.task.make_embeddings : Draw the fixed vectors of the task.
    validation.token_retrieval.task.Batch : Hold ``N`` sequences of length ``L``, drawn by ``sample_sequences``.

    %(ref_task_paper)s
    """

    E: np.ndarray
    U: np.ndarray
    z_trig: np.ndarray
    q: np.ndarray
    perm: np.ndarray
    kind: str

    V = _axis_length("E", 0, "Vocabulary size (rows of ``E``).")
    d = _axis_length("E", 1, "Embedding dimension.")


@fill_doc(task_links=_TASK_LINKS)
@dataclass(frozen=True)
class Batch:
    """Hold ``N`` sequences of length ``L``, drawn by :func:`sample_sequences`.

    Parameters
    ----------
    X : ndarray, shape (N, L, d)
        Embedded sequences (trigger already added at ``pos``).
    tokens : ndarray of int, shape (N, L)
        Token ids (``-1`` for Gaussian noise vectors).
    pos : ndarray of int, shape (N,)
        Position of the informative token.
    informative : ndarray of int, shape (N,)
        Informative token ``y_n``.
    targets : ndarray of int, shape (N,)
        ``perm[y_n]``.

    See Also
    --------
    %(task_links)s

    %(ref_task)s
    """

    X: np.ndarray
    tokens: np.ndarray
    pos: np.ndarray
    informative: np.ndarray
    targets: np.ndarray

    N = _axis_length("X", 0, "Number of sequences.")
    L = _axis_length("X", 1, "Sequence length.")


@fill_doc(task_links=_TASK_LINKS)
def make_embeddings(V, d, *, kind="random", trig_scale=1.0, rng=None, dtype=np.float64):
    r"""Draw the fixed vectors of the task.

    Parameters
    ----------
    V : int
        Vocabulary size (>= 2); also the number of labels.
    d : int
        Embedding dimension (>= 1; :math:`d \geq V + 2` for ``kind="orthogonal"``).
    kind : {"random", "orthogonal"}
        ``"random"``: i.i.d. :math:`\mathcal{N}(0, 1/d)` entries for ``E``, ``U``,
        ``z_trig``, ``q``.  ``"orthogonal"``: one-hot (see module notes).
    trig_scale : float
        The trigger is multiplied by ``trig_scale`` (> 0): ``||z_trig|| ~ trig_scale``.
    rng : None, int, SeedSequence or Generator
        Randomness (the permutation, and the vectors for ``"random"``).
    dtype : numpy dtype
        Float type of the vectors.

    Returns
    -------
    Embeddings
        ``E``, ``U``, ``z_trig``, ``q`` and the label permutation.

    See Also
    --------
    %(task_links)s

    %(ref_task_paper)s

    Examples
    --------
    >>> emb = make_embeddings(5, 8, kind="orthogonal", rng=0)
    >>> emb.E.shape, float(abs(emb.E @ emb.z_trig).max())
    ((5, 8), 0.0)
    """
    s = check_sizes(V=V, d=d)
    V, d = s["V"], s["d"]
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    trig_scale = check_real("trig_scale", trig_scale, low=0, high=math.inf, low_open=True, high_open=True,
                            allow_array=False)
    rng = check_rng(rng)
    perm = rng.permutation(V)
    if kind == "orthogonal":
        if d < V + 2:
            raise ValueError(f"d must be >= V + 2 = {V + 2} for kind='orthogonal', got {d}")
        eye = np.eye(d, dtype=dtype)
        E = eye[:V].copy()
        U = eye[:V].copy()
        z, q = eye[V].copy(), eye[V + 1].copy()
    else:
        sc = 1.0 / np.sqrt(d)
        E = (rng.standard_normal((V, d)) * sc).astype(dtype)
        U = (rng.standard_normal((V, d)) * sc).astype(dtype)
        z = (rng.standard_normal(d) * sc).astype(dtype)
        q = (rng.standard_normal(d) * sc).astype(dtype)
    z = (z * trig_scale).astype(dtype)
    return Embeddings(E=E, U=U, z_trig=z, q=q, perm=perm, kind=kind)


@fill_doc
def sample_sequences(emb, N, L, *, rng=None, distinct=True, noise="vocab", informative=None):
    r"""Draw ``N`` sequences of length ``L``.

    Parameters
    ----------
    emb : Embeddings
        The task's fixed vectors.
    N : int
        Number of sequences (>= 1; ``<= V`` when ``distinct``).
    L : int
        Sequence length (>= 2): one informative token and :math:`L - 1` noise tokens.
    rng : None, int, SeedSequence or Generator
        Randomness.
    distinct : bool
        Informative tokens drawn without replacement (each training fact
        appears in exactly one sequence); otherwise uniform with replacement.
    noise : {"vocab", "gaussian"}
        ``"vocab"``: noise tokens uniform over the vocabulary minus the
        informative token; ``"gaussian"``: fresh :math:`\mathcal{N}(0, 1/d)` vectors (not
        in the vocabulary, token id ``-1``).
    informative : array of int, optional
        Use these informative tokens (shape ``(N,)``) instead of drawing them
        (e.g. fresh contexts for the training facts).

    Returns
    -------
    Batch
        Embedded sequences, token ids, informative positions and targets.

    See Also
    --------
    validation.token_retrieval.task.make_embeddings : Draw the fixed vectors of the task.
    validation.token_retrieval.early_phase.early_phase : Run the three early-phase steps on the training ``batch``.

    Notes
    -----
    ``X[n, i] = e_{tokens[n, i]} + [i == pos[n]] z_trig``.  All draws are
    vectorised over the ``N`` sequences.

    %(ref_task)s

    Examples
    --------
    >>> emb = make_embeddings(20, 8, rng=0)
    >>> b = sample_sequences(emb, 5, 4, rng=1)
    >>> b.X.shape, bool(np.all(b.tokens[np.arange(5), b.pos] == b.informative))
    ((5, 4, 8), True)
    >>> print(b.targets, emb.perm[b.informative])
    [10  4  5  1 11] [10  4  5  1 11]
    """
    if not isinstance(emb, Embeddings):
        raise ValueError(f"emb must be an Embeddings (see make_embeddings), got {type(emb).__name__}")
    s = check_sizes(N=N, L=L)
    N, L = s["N"], s["L"]
    if noise not in NOISE:
        raise ValueError(f"noise must be one of {NOISE}, got {noise!r}")
    rng = check_rng(rng)
    V, d = emb.V, emb.d
    if informative is None:
        if distinct:
            if N > V:
                raise ValueError(f"N must be <= V = {V} when distinct=True, got {N}")
            y = rng.choice(V, size=N, replace=False)
        else:
            y = rng.integers(0, V, size=N)
    else:
        y = np.asarray(informative, dtype=np.int64)
        if y.shape != (N,) or np.any((y < 0) | (y >= V)):
            raise ValueError(f"informative must be {N} token ids in [0, {V - 1}]")
    pos = rng.integers(0, L, size=N)
    if noise == "vocab":
        tok = rng.integers(0, V - 1, size=(N, L))
        tok += tok >= y[:, None]          # uniform over the vocabulary minus y
        tok[np.arange(N), pos] = y
        X = emb.E[tok]
    else:
        tok = np.full((N, L), -1, dtype=np.int64)
        tok[np.arange(N), pos] = y
        X = (rng.standard_normal((N, L, d)) / np.sqrt(d)).astype(emb.E.dtype)
        X[np.arange(N), pos] = emb.E[y]
    X[np.arange(N), pos] += emb.z_trig
    return Batch(X=X, tokens=tok, pos=pos, informative=y, targets=emb.perm[y])
