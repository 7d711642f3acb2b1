r"""Linear and MLP associative memories trained with cross-entropy.

A memory stores ``N`` facts :math:`x_i \mapsto y(i)`: input embeddings ``X`` (rows) are
mapped to scores against output embeddings ``U`` (rows) and fact ``i`` is
*recalled* when the score of its output ``y(i)`` is strictly the largest.

* linear memory: :math:`\mathrm{scores} = X W^T U^T` with ``W`` in :math:`\mathbb{R}^{d \times d}`
  (:math:`d^2` parameters); docs/factual_recall.md: largest ``N`` at 99% accuracy
  scales as :math:`N \ln N \sim c\, d^2`;
* MLP memory: :math:`\mathrm{scores} = \mathrm{relu}(X W_1^T + b) W_2^T U^T` with ``W1`` (m x d),
  ``b`` (m), ``W2`` (d x m) (:math:`2 m d` parameters, bias not counted); with a
  fixed small number of output classes :math:`N \sim c\, m d`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from validation.losses import softmax_xent
from validation._docparams import fill_doc, returned_by
from validation.optim import adam_loop, warmup_cosine
from hcizz.results import Result

__all__ = ["sphere_embeddings", "linear_memory_loss", "mlp_memory_loss",
           "init_mlp_memory", "train_memory", "MemoryTrainResult"]


@fill_doc
def sphere_embeddings(n, d, rng=None, dtype=np.float64):
    r"""Draw ``n`` i.i.d. points uniform on the unit sphere of :math:`\mathbb{R}^d` (rows).

    Parameters
    ----------
    n, d : int
        Number of points (>= 1) and dimension (>= 1).
    rng : None, int or Generator
        Randomness (``np.random.default_rng``).
    dtype : numpy dtype
        Output dtype (drawn in float64).

    Returns
    -------
    ndarray, shape (n, d)
        Normalised Gaussian vectors.

    See Also
    --------
    validation.factual_recall.trials.embeddings : Sphere or Gaussian embeddings from given normals.

    %(ref_associative_memories_paper)s

    Examples
    --------
    >>> E = sphere_embeddings(5, 3, rng=0)
    >>> print(np.round(np.linalg.norm(E, axis=1), 12))
    [1. 1. 1. 1. 1.]
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    rng = check_rng(rng)
    g = rng.standard_normal((n, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return g.astype(dtype)


@fill_doc
def linear_memory_loss(W, X, U, targets, grad=True):
    r"""Compute the cross-entropy of the linear memory and its gradient in ``W``.

    Parameters
    ----------
    W : ndarray (d, d)
        The memory.
    %(X_inputs)s %(U_outputs)s %(fact_targets)s
    grad : bool
        Compute the gradient.

    Returns
    -------
    loss : float
        Mean cross-entropy of the logits :math:`L = X W^T U^T`.
    dW : ndarray (d, d) or None
        Gradient (``None`` without ``grad``).
    %(fact_correct)s

    See Also
    --------
    validation.factual_recall.memories.mlp_memory_loss : The same loss for the MLP memory.
    validation.losses.softmax_xent : The cross-entropy it uses.

    Notes
    -----
    :math:`L = X W^T U^T`, :math:`G = \partial \mathrm{loss} / \partial L` so :math:`dW = U^T G^T X`.

    %(ref_associative_memories_paper)s

    Examples
    --------
    >>> X = U = np.eye(3)                       # orthonormal facts: W = c I stores them
    >>> loss, dW, ok = linear_memory_loss(5 * np.eye(3), X, U, np.arange(3))
    >>> print(ok, f"{loss:.4f}", f"{np.log(1 + 2 * np.exp(-5)):.4f}")   # loss = ln(1 + 2 e^-5)
    [ True  True  True] 0.0134 0.0134
    """
    L = (X @ W.T) @ U.T
    loss, G, correct = softmax_xent(L, targets, grad=grad)
    if not grad:
        return loss, None, correct
    dW = (U.T @ G.T) @ X
    return loss, dW, correct


@fill_doc
def init_mlp_memory(d, m, rng=None, dtype=np.float64):
    r"""Draw the He-style initialisation ``[W1 (m, d), b (m,), W2 (d, m)]`` of an MLP memory.

    Parameters
    ----------
    d, m : int
        Input dimension and width (>= 1).
    rng : None, int or Generator
        Randomness (``W1`` drawn first).
    dtype : numpy dtype
        Parameter dtype (drawn in float64).

    Returns
    -------
    list of ndarray
        ``W1`` entries :math:`\mathcal{N}(0, 2/d)`, ``b = 0``, ``W2`` entries :math:`\mathcal{N}(0, 1/m)`.

    See Also
    --------
    validation.factual_recall.memories.mlp_memory_loss : The loss of these parameters.

    %(ref_associative_memories_paper)s

    Examples
    --------
    >>> [p.shape for p in init_mlp_memory(4, 6, rng=0)]
    [(6, 4), (6,), (4, 6)]
    """
    d = check_int("d", d, low=1)
    m = check_int("m", m, low=1)
    rng = check_rng(rng)
    W1 = rng.standard_normal((m, d)) * np.sqrt(2.0 / d)
    b = np.zeros(m)
    W2 = rng.standard_normal((d, m)) / np.sqrt(m)
    return [W1.astype(dtype), b.astype(dtype), W2.astype(dtype)]


@fill_doc
def mlp_memory_loss(params, X, U, targets, grad=True):
    r"""Compute the cross-entropy of the MLP memory :math:`x \mapsto W_2 \mathrm{relu}(W_1 x + b)` and its gradients.

    Parameters
    ----------
    params : list of ndarray
        ``[W1 (m, d), b (m,), W2 (d, m)]``.
    %(X_inputs)s %(U_outputs)s %(fact_targets)s
    %(grads_flag)s

    Returns
    -------
    %(xent)s %(param_grads)s %(fact_correct)s

    See Also
    --------
    validation.factual_recall.memories.linear_memory_loss : The same loss for the linear memory.
    validation.factual_recall.memories.init_mlp_memory : The parameters it takes.

    Notes
    -----
    :math:`P = X W_1^T + b`, :math:`H = \mathrm{relu}(P)`, :math:`Y = H W_2^T`, :math:`L = Y U^T`; with
    :math:`G = \partial \mathrm{loss} / \partial L`: :math:`dY = G U`, :math:`dW_2 = dY^T H`,
    :math:`dP = (dY W_2) \odot 1[P > 0]`, :math:`dW_1 = dP^T X`, :math:`db = \sum_\mathrm{rows} dP`.

    %(ref_associative_memories_paper)s

    Examples
    --------
    >>> params = init_mlp_memory(3, 5, rng=0)
    >>> X, U = sphere_embeddings(4, 3, rng=1), sphere_embeddings(2, 3, rng=2)
    >>> loss, grads, ok = mlp_memory_loss(params, X, U, np.array([0, 1, 1, 0]))
    >>> [g.shape for g in grads]
    [(5, 3), (5,), (3, 5)]
    """
    W1, b, W2 = params
    P = X @ W1.T + b
    Hd = np.maximum(P, 0)
    Y = Hd @ W2.T
    L = Y @ U.T
    loss, G, correct = softmax_xent(L, targets, grad=grad)
    if not grad:
        return loss, None, correct
    dY = G @ U
    dW2 = dY.T @ Hd
    dP = (dY @ W2) * (P > 0)
    dW1 = dP.T @ X
    db = dP.sum(axis=0)
    return loss, [dW1, db, dW2], correct


def _check_memory_need(kind, n, d, m, n_classes, dtype):
    r"""Refuse (``ValueError``) a memory whose arrays cannot fit: the embeddings,
    the parameters with Adam's two moments, and the :math:`n \times k` score matrix with
    its gradient (``docs/reliability.md#sizes``)."""
    from validation._memory import check_memory

    item = np.dtype(dtype).itemsize
    k = n_classes
    params = d * d if kind == "linear" else 2 * m * d + m
    hidden = 0 if kind == "linear" else n * m
    need = item * (n * d + k * d + 3.0 * params + 2.0 * n * k + 2.0 * hidden)
    check_memory(need, f"{kind} memory n={n} d={d}" + (f" m={m}" if kind == "mlp" else "")
                 + f" classes={k}: embeddings + parameters and Adam moments + scores")


@fill_doc(record_links=returned_by(
    "validation.factual_recall.memories.train_memory",
    "docs/factual_recall.md#associative-memories"))
@dataclass(frozen=True)
class MemoryTrainResult(Result):
    """Outcome of :func:`train_memory`, a frozen record with ``to_dict()``.

    Parameters
    ----------
    accuracy : float
        Fraction of facts recalled at the end.
    loss : float
        Final cross-entropy.
    params : int
        Parameter count (:math:`d^2` linear, :math:`2 m d` MLP).
    n : int
        Number of facts.

    %(record_links)s
    """

    accuracy: float
    loss: float
    params: int
    n: int


@fill_doc
def train_memory(kind, n, d, *, m=None, n_classes=None, steps=1000, lr=None, rng=None,
                 dtype=np.float32):
    """Train a linear or MLP associative memory on ``n`` random facts (full batch, Adam).

    Parameters
    ----------
    kind : {"linear", "mlp"}
    n : int
        Number of facts (inputs), >= 1.
    d : int
        Embedding dimension.
    m : int
        MLP width (``kind="mlp"`` only).
    n_classes : int, optional
        Number of output embeddings.  Linear memory: default ``n`` and fact
        ``i`` maps to output ``i`` (a bijection; ``n_classes < n`` is refused).
        MLP memory: default 2; each fact gets a uniform random class.
    steps : int
        Adam steps (warm-up 5% then cosine decay to 0.01 lr).
    lr : float, optional
        Peak learning rate (default 0.05 linear, 0.01 MLP).
    rng : None, int or Generator
        Randomness (embeddings, classes, initialisation).
    dtype : numpy dtype
        Float dtype for training.

    Returns
    -------
    MemoryTrainResult
        ``accuracy`` (fraction of facts recalled at the end), ``loss``,
        ``params`` (parameter count: :math:`d^2` or :math:`2 m d`), ``n``.

    See Also
    --------
    validation.factual_recall.memories.linear_memory_loss : Loss of the linear memory.
    validation.factual_recall.memories.mlp_memory_loss : Loss of the MLP memory.
    validation.optim.adam_loop : The training loop.

    Notes
    -----
    Full-batch Adam (:func:`validation.optim.adam_loop`) on the cross-entropy
    (see :func:`linear_memory_loss`, :func:`mlp_memory_loss`); the linear
    memory starts at ``W = 0``; the result is evaluated after the last update.

    %(ref_associative_memories_paper)s

    Examples
    --------
    >>> r = train_memory("linear", 8, 16, steps=200, rng=0)   # N <= d: exactly storable
    >>> r["accuracy"], r["params"]
    (1.0, 256)
    """
    if kind not in ("linear", "mlp"):
        raise ValueError(f"kind must be 'linear' or 'mlp', got {kind!r}")
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    steps = check_int("steps", steps, low=1)
    rng = check_rng(rng)
    if kind == "linear":
        k = n if n_classes is None else check_int("n_classes", n_classes, low=1)
        if k < n:
            raise ValueError(f"n must be <= n_classes={k} (a bijective linear memory needs one "
                             f"output per fact), got {n}")
        _check_memory_need(kind, n, d, None, k, dtype)
        X = sphere_embeddings(n, d, rng, dtype)
        U = sphere_embeddings(k, d, rng, dtype)
        targets = np.arange(n)
        params = [np.zeros((d, d), dtype)]
        lr = 0.05 if lr is None else check_real("lr", lr, low=0, low_open=True)

        def lossfn(p, grad=True):
            loss, g, c = linear_memory_loss(p[0], X, U, targets, grad)
            return loss, (None if g is None else [g]), c
        count = d * d
    else:
        if m is None:
            raise ValueError("m must be given for kind='mlp'")
        m = check_int("m", m, low=1)
        k = 2 if n_classes is None else check_int("n_classes", n_classes, low=2)
        _check_memory_need(kind, n, d, m, k, dtype)
        X = sphere_embeddings(n, d, rng, dtype)
        U = sphere_embeddings(k, d, rng, dtype)
        targets = rng.integers(0, k, size=n)
        params = init_mlp_memory(d, m, rng, dtype)
        lr = 0.01 if lr is None else check_real("lr", lr, low=0, low_open=True)

        def lossfn(p, grad=True):
            return mlp_memory_loss(p, X, U, targets, grad)
        count = 2 * m * d
    r = adam_loop(params, lambda t: lossfn(params, grad=t < steps), steps=steps,
                  lr=lambda t: warmup_cosine(t, steps, lr=lr, warmup=0.05, final=0.01))
    correct = r.info
    return MemoryTrainResult(accuracy=float(correct.mean()), loss=r.loss, params=count, n=n)
