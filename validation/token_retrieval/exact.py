r"""The key vector of the early phase in closed form (leading order in ``eta``), for given
embeddings and in the orthogonal limit from the token counts alone.

After step 2 the key-query matrix is :math:`W_1 = c\, \tilde w q^T` with a scalar :math:`c > 0` and

.. math::

    \tilde w = \sum_n P_n v_n, \quad v_n = \sum_m K_{mn} h_m, \quad K_{mn} = (u_{t_m} - \bar u) \cdot (u_{t_n} - \bar u),

``P_n`` the centred second-moment matrix of sequence ``n`` and ``h_n`` its mean
(docs/token_retrieval.md#steps-1-and-2-the-key-vector).  Argmax attention depends only on
:math:`\tilde w`, so :func:`key_vector` decides retrieval exactly (up to the :math:`O(\eta)` softmax
corrections of step 2) without running the three gradient steps.

Because :math:`P_n v_n = \sum_i x_{n,i} ((x_{n,i} - h_n) \cdot v_n)`, the key vector is a combination
of the token embeddings and the trigger, :math:`\tilde w = \sum_k c_k e_k + A_z z`, and the attention
score of a noise token ``k`` is :math:`e_k \cdot \tilde w`: **the same number in every sequence that
contains ``k``** (docs/token_retrieval.md#token-level-theory).  In the orthogonal limit
(:math:`e_k \cdot e_l = \delta_{kl}`, ``z`` orthogonal to the tokens, the label kernel replaced by its
mean :math:`K_{mn} = \delta_{mn} - 1/V`) the coefficients are functions of the token counts only;
:func:`orthogonal_key` computes them in :math:`O(N L)` operations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real
from ._docparams import fill_doc

__all__ = ["key_vector", "token_counts", "OrthogonalKey", "orthogonal_key"]


def key_vector(emb, batch):
    r"""Compute the key vector :math:`\tilde w` of the early phase at leading order in :math:`\eta`.

    Parameters
    ----------
    emb : Embeddings
        The task's fixed vectors (:func:`~validation.token_retrieval.task.make_embeddings`).
    batch : Batch
        The ``N`` training sequences.

    Returns
    -------
    w : ndarray, shape (d,)
        :math:`\tilde w = \sum_n P_n v_n` (no MLP).
    beta : ndarray, shape (N, L)
        Slot coefficients :math:`\beta_{n,i} = (x_{n,i} - h_n) \cdot v_n`, so that
        :math:`\tilde w = \sum_{n,i} \beta_{n,i} x_{n,i}`.

    See Also
    --------
    validation.token_retrieval.exact.orthogonal_key
        Compute the key vector's coefficients in the orthogonal limit from the token counts.
    validation.token_retrieval.theory.score_moments
        Compute leading-order moments of the attention scores :math:`x \cdot \tilde w` after step 2.

    Notes
    -----
    Step 1 is exact: :math:`V_1 = \frac{\eta}{N} \sum_n (u_{t_n} - \bar u) h_n^T`.  At step 2
    the logits are :math:`O(\eta)`; dropping them, the gradient reaching the attention output
    of sequence :math:`n` is :math:`-(\eta / N^2) v_n` and the softmax Jacobian at uniform
    attention gives :math:`W_1 = \frac{\gamma \eta}{L N^2} \tilde w q^T`.  The early phase's
    :math:`W_1 q` is parallel to :math:`\tilde w` up to relative :math:`O(\eta)` (tested in
    ``tests/test_tr_token_theory.py``).

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#steps-1-and-2-the-key-vector

    Examples
    --------
    >>> from validation.token_retrieval.task import make_embeddings, sample_sequences
    >>> emb = make_embeddings(16, 32, rng=0)
    >>> b = sample_sequences(emb, 4, 3, rng=1)
    >>> w, beta = key_vector(emb, b)
    >>> w.shape, bool(np.allclose(beta.sum(axis=1), 0.0))     # each row of beta sums to 0
    ((32,), True)
    """
    X = batch.X
    ut = emb.U[batch.targets] - emb.U.mean(axis=0)
    K = ut @ ut.T
    h = X.mean(axis=1)
    v = K @ h
    beta = np.einsum("nid,nd->ni", X - h[:, None, :], v)
    return np.einsum("nid,ni->d", X, beta), beta


@fill_doc
def token_counts(tokens):
    r"""Return the multiplicity of each slot's token in its own sequence.

    Parameters
    ----------
    tokens : ndarray of int, shape (N, L)
        Token ids (any integers; equal ids in one row are the same token).

    Returns
    -------
    ndarray of int, shape (N, L)
        ``r[n, i]`` = number of positions ``j`` of row ``n`` with ``tokens[n, j] == tokens[n, i]``.

    See Also
    --------
    validation.token_retrieval.exact.orthogonal_key
        Compute the key vector's coefficients in the orthogonal limit from the token counts.
    validation.token_retrieval.exact.key_vector
        Compute the key vector :math:`\tilde w` of the early phase at leading order in ``eta``.

    %(ref_token_level_theory)s

    Examples
    --------
    >>> token_counts(np.array([[3, 1, 3], [2, 2, 2]])).tolist()
    [[2, 1, 2], [3, 3, 3]]
    """
    tokens = np.asarray(tokens)
    N, L = tokens.shape
    lo = tokens.min() if tokens.size else 0
    key = np.arange(N)[:, None] * (int(tokens.max()) - int(lo) + 1) + (tokens - lo)
    _, inv, cnt = np.unique(key.ravel(), return_inverse=True, return_counts=True)
    return cnt[inv].reshape(N, L)


@fill_doc
@dataclass(frozen=True)
class OrthogonalKey:
    r"""Coefficients of the key vector in the orthogonal limit (:func:`orthogonal_key`).

    Parameters
    ----------
    c : ndarray, shape (n_tokens,)
        Token coefficients ``c_k``: the attention score of token ``k`` (:math:`e_k \cdot \tilde w`).
    A : float
        Trigger coefficient :math:`A = z \cdot \tilde w / \|z\|^2`.
    inf_scores : ndarray, shape (N,)
        Informative scores :math:`c_{y_n} + \tau^2 A`.
    noise_scores : ndarray, shape (N, L - 1)
        Scores of the noise slots of each sequence (``c`` of their tokens).
    slot_tokens : ndarray of int, shape (N, L)
        Token ids used (Gaussian noise slots get their own ids ``>= V``).
    counts : ndarray of int, shape (n_tokens,)
        ``C_k``: number of slots holding token ``k`` in the training set.
    multiplicity : ndarray of int, shape (N, L)
        Multiplicity of each slot's token in its sequence.

    See Also
    --------
    validation.token_retrieval.exact.orthogonal_key
        Compute the key vector's coefficients in the orthogonal limit from the token counts.
    validation.token_retrieval.token_theory.draw_scores
        Draw one task's attention scores from the token-level theory.

    %(ref_token_level_theory)s
    """

    c: np.ndarray
    A: float
    inf_scores: np.ndarray
    noise_scores: np.ndarray
    slot_tokens: np.ndarray
    counts: np.ndarray
    multiplicity: np.ndarray


@fill_doc
def orthogonal_key(tokens, pos, V, *, tau=1.0):
    r"""Compute the key vector's coefficients in the orthogonal limit from the token counts.

    Parameters
    ----------
    tokens : ndarray of int, shape (N, L)
        Token ids of the training sequences (``-1``: a Gaussian noise vector, counted as a
        token of its own).
    pos : ndarray of int, shape (N,)
        Informative positions.
    V : int
        Vocabulary size (the label kernel's centring :math:`-1/V`).
    tau : float
        Trigger scale (:math:`\|z\|^2 = \tau^2`).

    Returns
    -------
    OrthogonalKey
        Token coefficients, trigger coefficient, informative and noise scores.

    See Also
    --------
    validation.token_retrieval.exact.token_counts : Return the multiplicity of each slot's token in its own sequence.
    validation.token_retrieval.exact.key_vector
        Compute the key vector :math:`\tilde w` of the early phase at leading order in ``eta``.

    Notes
    -----
    With one-hot tokens and the mean label kernel :math:`K_{mn} = \delta_{mn} - 1/V`,
    :math:`v_n = h_n - H/V` (:math:`H = \sum_m h_m`).  In the basis of the tokens and ``z``,
    :math:`h_n = (C_n + z)/L` with ``C_n`` the count vector of sequence ``n``, so

    .. math::

        \beta_{n,i} = \frac{C_n[k]}{L} - \frac{C[k]}{LV} - h_n\cdot v_n
        + [i = p_n]\,\frac{\tau^2 (1 - N/V)}{L},\qquad
        h_n\cdot v_n = \frac{1}{L^2}\Big(\sum_k C_n[k]^2 - \frac1V\sum_k C_n[k]C[k]
        + \tau^2\big(1 - \tfrac NV\big)\Big)

    (``k`` the slot's token, :math:`C = \sum_n C_n`), ``c_k`` is the sum of ``beta`` over the slots
    holding ``k`` and :math:`A = \sum_n \beta_{n,p_n}`.  Every collision (a token repeated in a
    sequence, shared between sequences, or equal to another sequence's informative token) is
    exact; this is the :math:`1/d \to 0` limit of the model with the labels' random overlaps
    averaged.  Equal to the key vector of the one-hot task with the centred label kernel
    (tested against :func:`key_vector` on one-hot embeddings).

    %(ref_token_level_theory)s

    Examples
    --------
    One sequence of length 2, :math:`V = 2` (the hand case of the docs: :math:`A = 1/8`,
    informative score :math:`1/4`, noise score :math:`-1/8`):

    >>> ok = orthogonal_key(np.array([[0, 1]]), np.array([0]), 2)
    >>> ok.A, float(ok.inf_scores[0]), float(ok.noise_scores[0, 0])
    (0.125, 0.25, -0.125)
    """
    tokens = np.array(tokens, dtype=np.int64)
    if tokens.ndim != 2 or tokens.shape[1] < 2:
        raise ValueError(f"tokens must have shape (N, L) with L >= 2, got {tokens.shape}")
    N, L = tokens.shape
    pos = np.asarray(pos, dtype=np.int64)
    if pos.shape != (N,) or np.any((pos < 0) | (pos >= L)):
        raise ValueError(f"pos must be {N} positions in [0, {L - 1}], got {pos!r}")
    V = check_int("V", V, low=2)
    tau = check_real("tau", tau, low=0, low_open=True, allow_array=False)
    t2 = tau * tau
    gauss = tokens < 0
    if np.any(gauss):                                  # fresh Gaussian vectors: one id each
        tokens[gauss] = V + np.arange(int(gauss.sum()))
    if np.any(tokens[~gauss] >= V):
        raise ValueError(f"tokens must be ids in [0, {V - 1}] (or -1), got max {int(tokens.max())}")
    n_tok = max(V, int(tokens.max()) + 1)
    C = np.bincount(tokens.ravel(), minlength=n_tok).astype(float)
    r = token_counts(tokens)
    rows = np.arange(N)
    # sum_k C_n[k]^2 = sum_i r_{n,i};  sum_k C_n[k] C[k] = sum_i C[tok_{n,i}]
    Ct = C[tokens]
    hv = (r.sum(axis=1) - Ct.sum(axis=1) / V + t2 * (1.0 - N / V)) / L ** 2
    beta = r / L - Ct / (L * V) - hv[:, None]
    beta[rows, pos] += t2 * (1.0 - N / V) / L
    c = np.bincount(tokens.ravel(), weights=beta.ravel(), minlength=n_tok)
    A = float(beta[rows, pos].sum())
    mask = np.ones((N, L), bool)
    mask[rows, pos] = False
    noise = c[tokens[mask]].reshape(N, L - 1)
    return OrthogonalKey(c=c, A=A, inf_scores=c[tokens[rows, pos]] + t2 * A, noise_scores=noise,
                         slot_tokens=tokens, counts=C.astype(np.int64), multiplicity=r)
