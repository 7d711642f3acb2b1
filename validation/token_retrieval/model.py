r"""One attention layer + value/output matrix for token retrieval (numpy).

Model (ours; see ``docs/token_retrieval.md``)
--------------------------------------------
For a sequence :math:`X = (x_1, \ldots, x_L)` (rows in :math:`\mathbb{R}^d`) and the EOS query
``q``::

    s_i    = x_i^T W q                      (W = W_KQ, d x d, trained)
    a      = softmax(s)                      (over the L positions)
    h      = sum_i a_i x_i                   (attention output, R^d)
    f      = h            or  sqrt(2/m) relu(A h)   (fixed random MLP, width m)
    logits = U Wv f                          (Wv: d x k trained, k = d or m)

``U`` (V x d) holds the fixed label unembeddings ``u_k``, so the logit of
label ``k`` is :math:`u_k^T W_v f`: the trained value/output matrix ``Wv`` (called
``V`` in the issue) maps the attention output into the label-embedding space.
The loss is the mean cross-entropy of :func:`validation.losses.softmax_xent`.

Because the query is always ``q``, :math:`\nabla_W = g\, q^T` is rank one; from a zero
start ``W`` stays of the form :math:`w\, q^T`.
"""
from __future__ import annotations

import numpy as np

from hcizz.checks import check_int, check_rng
from validation.losses import softmax_xent, top1_margins
from ._docparams import fill_doc

__all__ = ["make_mlp", "forward", "loss_and_grads", "margins"]


@fill_doc
def make_mlp(m, d, *, rng=None, dtype=np.float64):
    r"""Draw the fixed random MLP layer ``A`` (m x d) of :math:`f(h) = \sqrt{2/m}\, \mathrm{relu}(A h)`.

    The entries of ``A`` are i.i.d. :math:`\mathcal{N}(0, 1)`.

    Parameters
    ----------
    m : int
        Width of the MLP (>= 1).
    d : int
        Embedding dimension (>= 1).
    rng : None, int, SeedSequence or Generator
        Randomness of ``A``.
    dtype : numpy dtype
        Float type of ``A``.

    Returns
    -------
    A : ndarray, shape (m, d)
        The MLP layer.

    See Also
    --------
    validation.token_retrieval.model.forward : Run the forward pass on a batch.
    validation.losses.top1_margins : The same margin for any score matrix.
    validation.token_retrieval.early_phase.early_phase : Run the three early-phase steps on the training ``batch``.
    validation.token_retrieval.experiments.mlp_scan
        Locate the recall boundary ``N_max`` with a fixed random MLP of width ``m``.

    Notes
    -----
    With this scaling :math:`\mathbb{E} \|f(h)\|^2 = \|h\|^2` for any :math:`h` (ReLU second
    moment is 1/2), so the MLP neither amplifies nor shrinks the signal.

    %(ref_model)s

    Examples
    --------
    >>> make_mlp(32, 8, rng=0).shape
    (32, 8)
    """
    m = check_int("m", m, low=1)
    d = check_int("d", d, low=1)
    return check_rng(rng).standard_normal((m, d)).astype(dtype)


def _softmax_rows(s):
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=1, keepdims=True)


def _check_shapes(W, Wv, emb, X, A):
    """``ValueError`` naming the argument whose shape does not fit the model."""
    d = emb.d
    if np.ndim(X) != 3 or np.shape(X)[2] != d:
        raise ValueError(f"X must have shape (N, L, d={d}), got {np.shape(X)}")
    if np.shape(W) != (d, d):
        raise ValueError(f"W must have shape (d, d) = ({d}, {d}), got {np.shape(W)}")
    if A is not None and (np.ndim(A) != 2 or np.shape(A)[1] != d):
        raise ValueError(f"A must have shape (m, d={d}), got {np.shape(A)}")
    k = d if A is None else np.shape(A)[0]
    if np.shape(Wv) != (d, k):
        raise ValueError(f"Wv must have shape (d, k) = ({d}, {k}) (k = d without MLP, m with it), "
                         f"got {np.shape(Wv)}")


def forward(W, Wv, emb, X, A=None):
    r"""Run the forward pass on a batch.

    Parameters
    ----------
    W : ndarray, shape (d, d)
        Key-query matrix ``W_KQ``.
    Wv : ndarray, shape (d, k)
        Value/output matrix (:math:`k = d` without MLP, :math:`k = m` with it).
    emb : Embeddings
        The task's fixed vectors (query ``q``, unembeddings ``U``).
    X : ndarray, shape (N, L, d)
        Embedded sequences.
    A : ndarray, shape (m, d), optional
        Fixed MLP layer (see :func:`make_mlp`).

    Returns
    -------
    dict
        ``a`` (N, L) attention, ``h`` (N, d), ``pre`` (N, m) or None, ``f``
        (N, k) features, ``logits`` (N, V).

    Raises
    ------
    ValueError
        Shapes of ``W``, ``Wv``, ``X`` or ``A`` that do not fit ``emb.d``.

    See Also
    --------
    validation.token_retrieval.model.loss_and_grads
        Compute the mean cross-entropy, its analytic gradients and recall flags.
    validation.token_retrieval.model.margins
        Compute the per-sample margin :math:`\mathrm{logit}_{\mathrm{target}} - \max_{k \neq \mathrm{target}} \mathrm{logit}_k`.

    Notes
    -----
    :math:`s_{n,i} = x_{n,i}^T W q`, :math:`a_n = \mathrm{softmax}(s_n)`,
    :math:`h_n = \sum_i a_{n,i} x_{n,i}`, :math:`f_n = h_n` or
    :math:`\sqrt{2/m}\, \mathrm{relu}(A h_n)`, :math:`\text{logits}_n = U W_v f_n`; every
    step is one matmul over the whole batch.

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#model

    Examples
    --------
    >>> from validation.token_retrieval.task import make_embeddings, sample_sequences
    >>> emb = make_embeddings(10, 8, rng=0)
    >>> b = sample_sequences(emb, 4, 3, rng=1)
    >>> c = forward(np.zeros((8, 8)), np.zeros((8, 8)), emb, b.X)
    >>> c["a"][0].tolist(), c["logits"].shape          # uniform attention at W = 0
    ([0.3333333333333333, 0.3333333333333333, 0.3333333333333333], (4, 10))
    """
    _check_shapes(W, Wv, emb, X, A)
    N, L, d = X.shape
    s = (X.reshape(N * L, d) @ (W @ emb.q)).reshape(N, L)
    a = _softmax_rows(s)
    h = (a[:, None, :] @ X)[:, 0, :]
    if A is None:
        pre, f = None, h
    else:
        pre = h @ A.T
        f = np.sqrt(2.0 / A.shape[0]) * np.maximum(pre, 0.0)
    logits = (f @ Wv.T) @ emb.U.T
    return {"a": a, "h": h, "pre": pre, "f": f, "logits": logits}


@fill_doc
def loss_and_grads(W, Wv, emb, batch, A=None, *, grad=True):
    r"""Compute the mean cross-entropy, its analytic gradients and recall flags.

    Parameters
    ----------
    W : ndarray, shape (d, d)
        Key-query matrix, as in :func:`forward`.
    Wv : ndarray, shape (d, k)
        Value/output matrix, as in :func:`forward`.
    emb : Embeddings
        The task's fixed vectors.
    batch : Batch
        Sequences ``X`` and ``targets``.
    A : ndarray, shape (m, d), optional
        Fixed MLP layer, as in :func:`forward`.
    grad : bool
        Compute the gradients.

    Returns
    -------
    loss : float
        Mean cross-entropy.
    gW : ndarray (d, d) or None
        :math:`\partial \text{loss} / \partial W = (\sum_{n,i} ds_{n,i}\, x_{n,i}) q^T`.
    gWv : ndarray (d, k) or None
        :math:`\partial \text{loss} / \partial W_v = (G U)^T f` with
        :math:`G = \partial \text{loss} / \partial \text{logits}`.
    correct : ndarray of bool (N,)
        Target logit strictly largest.

    See Also
    --------
    validation.token_retrieval.model.forward : Run the forward pass on a batch.
    validation.token_retrieval.early_phase.train_gd
        Train from zero with full-batch Adam or GD, for comparison with the early phase.

    Notes
    -----
    Back-propagation (all batched matmuls): :math:`df = G U W_v`; :math:`dh = df` or
    :math:`A^T (df \odot \sqrt{2/m}\, 1[A h > 0])`; :math:`da_{n,i} = x_{n,i}^T dh_n`;
    :math:`ds = a \odot (da - \langle a, da \rangle)` (softmax Jacobian).  Checked against central
    finite differences in ``tests/test_tr_model.py``.

    %(ref_model)s

    Examples
    --------
    At zero the logits vanish, so :math:`\mathrm{loss} = \log V` and :math:`\nabla_W = 0` (the
    value matrix is zero, no signal reaches the attention):

    >>> from validation.token_retrieval.task import make_embeddings, sample_sequences
    >>> emb = make_embeddings(10, 8, rng=0)
    >>> b = sample_sequences(emb, 4, 3, rng=1)
    >>> loss, gW, gWv, ok = loss_and_grads(np.zeros((8, 8)), np.zeros((8, 8)), emb, b)
    >>> print(f"{loss:.6f}", f"{np.log(10):.6f}", float(abs(gW).max()), ok.sum())
    2.302585 2.302585 0.0 0
    """
    X = batch.X
    N, L, d = X.shape
    c = forward(W, Wv, emb, X, A)
    loss, G, correct = softmax_xent(c["logits"], batch.targets, grad=grad)
    if not grad:
        return loss, None, None, correct
    GU = G @ emb.U                      # (N, d)
    gWv = GU.T @ c["f"]                 # (d, k)
    df = GU @ Wv                        # (N, k)
    if A is None:
        dh = df
    else:
        dh = (df * (np.sqrt(2.0 / A.shape[0]) * (c["pre"] > 0))) @ A
    da = (X @ dh[:, :, None])[:, :, 0]  # (N, L)
    a = c["a"]
    ds = a * (da - np.sum(a * da, axis=1, keepdims=True))
    g = ds.reshape(N * L) @ X.reshape(N * L, d)
    gW = np.outer(g, emb.q)
    return loss, gW, gWv, correct


@fill_doc
def margins(logits, targets):
    r"""Compute the per-sample margin :math:`\text{logit}_\text{target} - \max_{k \ne \text{target}} \text{logit}_k`.

    The margin is positive iff the sample is recalled.

    Parameters
    ----------
    logits : ndarray, shape (N, V)
        Logits of the labels.
    targets : ndarray of int, shape (N,)
        Correct labels.

    Returns
    -------
    ndarray, shape (N,)
        The margins.

    See Also
    --------
    validation.token_retrieval.model.forward : Run the forward pass on a batch.
    validation.token_retrieval.success.gaussian_success_prob
        Compute ``Phi(mean / std) ** n``, the Gaussian-model probability that all margins are positive.

    %(ref_retrieval_probability)s

    Examples
    --------
    >>> margins(np.array([[1.0, 3.0, 2.0], [0.0, 0.0, 5.0]]), np.array([1, 0])).tolist()
    [1.0, -5.0]
    """
    return top1_margins(logits, targets)
