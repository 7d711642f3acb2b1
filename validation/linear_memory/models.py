r"""Linear associative memories: scores, cross-entropy gradients, Hebbian rule.

Score of candidate :math:`\rho` for input :math:`\mu`: :math:`z_{\mu\rho} = u_\rho^T W e_\mu`
(docs/theory_full_rank.md#the-model).  Everything is BLAS-shaped:

* OP: :math:`Z = (E W^T) U^T` — two matrix products, ``(p, p)`` result;
* DP: :math:`h = E W^T` then ``Z = (U @ h[:, :, None])[..., 0]`` — one batched
  matrix product over the ``(p, p, d)`` candidate tensor (no einsum, no Python
  loop over inputs).

Training minimises the mean cross-entropy of the correct candidate among the
``p`` candidates of the logits ``scale * Z`` (``scale`` is a fixed inverse
temperature, e.g. :math:`1/d`, which only sets the parameter scale Adam works at).

Low-rank (two-layer) memory: :math:`W = Q R^T / \sqrt{d m}`, ``Q, R`` of shape
``(d, m)``, :math:`m = \kappa d` (docs/rank_constrained.md#the-model).
"""
from __future__ import annotations

import math

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from replica.hebbian import hebbian_matrix
from validation.losses import xent_overwrite
from ._docparams import fill_doc

__all__ = ["scores", "xent_and_grad", "xent_overwrite", "hebbian_W", "lowrank_m", "init_lowrank",
           "lowrank_W", "lowrank_grads", "correct_candidates"]


@fill_doc
def scores(W, facts):
    r"""Compute the score matrix :math:`Z_{\mu\rho} = u_\rho^T W e_\mu` (shape (p, p)).

    Parameters
    ----------
    %(W)s %(facts)s

    Returns
    -------
    ndarray, shape (p, p)
        Row :math:`\mu` holds the scores of the candidates of input :math:`\mu`; the
        correct one is the diagonal entry.

    See Also
    --------
    validation.linear_memory.models.correct_candidates : The correct candidate of every input, whose scores are the diagonal.
    validation.linear_memory.mechanism.normalized_scores : Scores divided by the spread of the competitors.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#facts-scores-and-recall

    Examples
    --------
    >>> from validation.linear_memory.data import make_op
    >>> f = make_op(4, 3, rng=0)
    >>> Z = scores(np.eye(3), f)
    >>> print(f"{Z[1, 2]:.6f}", f"{f.U[2] @ f.E[1]:.6f}")       # score of output 2 for input 1
    -0.561740 -0.561740
    """
    return facts.score_rows(facts.E @ W.T)              # rows W e_mu against the candidates


@fill_doc
def correct_candidates(facts):
    """Return the correct candidate of each input, as rows (p, d).

    Parameters
    ----------
    %(facts)s

    Returns
    -------
    ndarray, shape (p, d)
        ``U`` itself (OP) or the diagonal ``U[mu, mu]`` (DP).

    See Also
    --------
    validation.linear_memory.models.scores : All scores; the correct ones sit on the diagonal.

    References
    ----------
    docs/theory_full_rank.md#the-model
    """
    return facts.correct()


@fill_doc
def xent_and_grad(W, facts, *, scale=1.0):
    r"""Compute the cross-entropy of ``scale * Z`` and its gradient with respect to ``W``.

    Parameters
    ----------
    %(W)s %(facts)s
    scale : float
        Inverse temperature of the logits.

    Returns
    -------
    loss : float
        :math:`-(1/p) \sum_\mu \log \mathrm{softmax}(\mathrm{scale}\, Z_\mu)_\mu`.
    dW : ndarray, shape (d, d)
        Gradient, same dtype as the product of ``W`` and the facts.
    correct : ndarray of bool, shape (p,)
        Strict-argmax recall of each fact.

    See Also
    --------
    validation.linear_memory.models.scores : The logits before the inverse temperature.
    validation.linear_memory.train.train : Full-batch Adam on this cross-entropy.

    Notes
    -----
    With ``G = dloss/dlogits`` (:math:`(\mathrm{softmax} - \mathrm{onehot})/p`, kept factored, see
    :func:`xent_overwrite`):

    * OP: :math:`dW = \mathrm{scale}\; (G U)^T E`;
    * DP: :math:`g_\mu = \sum_\rho G_{\mu\rho} U_{\mu\rho}` computed as the batched
      product ``(G[:, None, :] @ U)[:, 0]``, then :math:`dW = \mathrm{scale}\; g^T E`.

    Both are checked against central finite differences in the tests.

    References
    ----------
    docs/linear_memory.md#training-objective
    """
    E = facts.E
    # the scale is folded into the (d, d) matrix, not applied to the (p, p) logits
    # (cast to W's dtype so that a numpy-float64 scale does not promote float32 to float64)
    H = E @ (W.T * W.dtype.type(scale) if scale != 1.0 else W.T)
    Z = facts.score_rows(H)
    loss, X, r, correct = xent_overwrite(Z, facts.targets)
    # G = r[:, None] * X - I / p; the row scaling and the one-hot part are
    # applied to the (p, d) product instead of the (p, p) matrix
    A = facts.pull_back(X)
    A *= r[:, None]
    A -= facts.correct() * A.dtype.type(1.0 / facts.p)
    dW = A.T @ E
    if scale != 1.0:
        dW *= dW.dtype.type(scale)
    return loss, dW, correct


def hebbian_W(facts):
    r"""Build the Hebbian memory :math:`W_H = \sum_\mu u_\mu e_\mu^T` of a fact set.

    The fact-set form of :func:`replica.hebbian_matrix` (the one
    implementation of the rule), applied to the inputs and their correct
    candidates.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set; the correct candidate of input :math:`\mu` is :math:`u_\mu`
        (OP) or ``U[mu, mu]`` (DP).

    Returns
    -------
    ndarray, shape (d, d)
        ``replica.hebbian_matrix(facts.E, correct_candidates(facts))``.

    See Also
    --------
    validation.linear_memory.models.scores : Score any memory, this one included.
    validation.linear_memory.exact_listwise.hebbian_listwise_trial : Top-1 and TAM recall of the Hebbian memory.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#hebbian-rule

    Examples
    --------
    >>> from validation.linear_memory.data import make_op
    >>> f = make_op(3, 2, rng=1)
    >>> W = hebbian_W(f)
    >>> print(np.round(W, 4))
    [[-0.0394 -0.9036]
     [ 0.793   0.3382]]
    >>> print(np.abs(W - sum(np.outer(f.U[i], f.E[i]) for i in range(3))).max() < 1e-12)
    True
    """
    return hebbian_matrix(facts.E, correct_candidates(facts))


@fill_doc
def lowrank_m(d, kappa):
    r"""Compute the inner width :math:`m = \max(1, \mathrm{round}(\kappa d))` of the two-layer memory.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    kappa : float
        Rank ratio in (0, 1].

    Returns
    -------
    int
        ``m``; the actual rank ratio is :math:`m / d`.

    See Also
    --------
    validation.linear_memory.models.init_lowrank : Gaussian factors with ``m`` columns.

    %(ref_rank_model)s

    Examples
    --------
    >>> lowrank_m(30, 0.25)
    8
    """
    d = check_int("d", d, low=1)
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    return max(1, int(round(kappa * d)))


@fill_doc
def init_lowrank(d, kappa, *, rng=None, dtype=np.float32):
    r"""Draw ``Q, R`` of shape (d, m) with i.i.d. N(0, 1) entries (m = kappa d).

    Parameters
    ----------
    d : int
        Dimension.
    kappa : float
        Rank ratio in (0, 1] (:func:`lowrank_m`).
    rng : None, int or Generator
        Randomness (``Q`` drawn first).
    %(dtype)s

    Returns
    -------
    Q, R : ndarray, shape (d, m)
        The two factors.

    See Also
    --------
    validation.linear_memory.models.lowrank_m : How ``m`` follows from ``kappa`` and ``d``.
    validation.linear_memory.models.lowrank_W : Build the memory :math:`Q R^T / \sqrt{d m}` from them.

    Notes
    -----
    At this initialisation the nonzero squared singular values of
    :math:`Q R^T / \sqrt{d m}` follow ``hcizz.mp_product(kappa)`` as :math:`d \to \infty`.

    %(ref_spectra_init)s
    """
    m = lowrank_m(d, kappa)
    rng = check_rng(rng)
    t = np.dtype(dtype).type
    return rng.standard_normal((d, m), dtype=t), rng.standard_normal((d, m), dtype=t)


@fill_doc
def lowrank_W(Q, R):
    r"""Build the low-rank memory :math:`W = Q R^T / \sqrt{d m}`.

    Parameters
    ----------
    %(Q)s %(R)s

    Returns
    -------
    ndarray, shape (d, d)
        ``W`` of rank at most ``m``.

    See Also
    --------
    validation.linear_memory.models.lowrank_grads : Its gradient with respect to ``Q`` and ``R``.
    validation.linear_memory.models.init_lowrank : Gaussian ``Q`` and ``R`` at initialisation.

    %(ref_rank_model)s
    """
    d, m = Q.shape
    return (Q @ R.T) * (1.0 / math.sqrt(d * m))


@fill_doc
def lowrank_grads(Q, R, dW):
    r"""Apply the chain rule for :math:`W = Q R^T / \sqrt{d m}`.

    Parameters
    ----------
    %(Q)s %(R)s
    dW : ndarray, shape (d, d)
        Gradient of the loss with respect to ``W``.

    Returns
    -------
    dQ, dR : ndarray, shape (d, m)
        :math:`dQ = dW\, R / \sqrt{d m}`, :math:`dR = dW^T Q / \sqrt{d m}`.

    See Also
    --------
    validation.linear_memory.models.lowrank_W : The product whose chain rule this is.

    %(ref_rank_model)s
    """
    d, m = Q.shape
    c = 1.0 / math.sqrt(d * m)
    return (dW @ R) * c, (dW.T @ Q) * c
