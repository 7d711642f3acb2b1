"""Softmax cross-entropy, its gradient and exact-recall detection.

Single home of the cross-entropy used by all training loops.
"""
from __future__ import annotations

import numpy as np

from validation._docparams import fill_doc

__all__ = ["softmax_xent", "xent_overwrite", "recalled", "top1_margins"]


@fill_doc
def softmax_xent(logits, targets, *, grad=True):
    r"""Mean softmax cross-entropy over rows, its gradient and recall flags.

    Parameters
    ----------
    logits : ndarray, shape (n, k)
        Scores; row ``i`` are the scores of the ``k`` candidates of sample ``i``.
    targets : ndarray of int, shape (n,)
        Index of the correct candidate of each row.
    grad : bool
        Also return :math:`\partial \mathrm{loss} / \partial \mathrm{logits}`.

    Returns
    -------
    loss : float
        :math:`-\frac{1}{n} \sum_i \log \mathrm{softmax}(\mathrm{logits}_i)_{\mathrm{targets}_i}`.
    dlogits : ndarray or None
        :math:`\left(\mathrm{softmax}(\mathrm{logits}) - \mathrm{onehot}(\mathrm{targets})\right) / n`, same dtype as ``logits``.
    correct : ndarray of bool, shape (n,)
        Exact recall: the target's score is strictly larger than every other.

    See Also
    --------
    validation.losses.xent_overwrite : The same loss in the buffer of the scores.
    validation.losses.recalled : The recall flags.

    Notes
    -----
    Computed with the max subtracted (no overflow); ``correct`` uses a strict
    comparison so that ties (e.g. all-zero scores at initialisation) count as
    failures.

    %(ref_training_objective)s
    """
    logits = np.asarray(logits)
    n = logits.shape[0]
    rows = np.arange(n)
    targets = np.asarray(targets)
    mx = logits.max(axis=1, keepdims=True)
    z = logits - mx
    ez = np.exp(z)
    s = ez.sum(axis=1, keepdims=True)
    loss = float(np.mean(np.log(s[:, 0]) - z[rows, targets]))
    correct = recalled(logits, targets)
    if not grad:
        return loss, None, correct
    d = ez / s
    d[rows, targets] -= 1.0
    d /= n
    return loss, d, correct


def recalled(scores, targets):
    """Flag the rows whose target score is strictly larger than every other entry.

    Parameters
    ----------
    scores : ndarray, shape (n, k)
        Scores of the ``k`` candidates of each row.
    targets : ndarray of int, shape (n,)
        Index of the correct candidate of each row.

    Returns
    -------
    ndarray of bool, shape (n,)
        Row ``i`` is recalled iff ``scores[i, targets[i]]`` beats every other
        entry of the row strictly (a tie is a failure).

    See Also
    --------
    validation.losses.softmax_xent : Returns these flags with the loss.
    validation.losses.top1_margins : The margins whose sign they are.

    References
    ----------
    docs/theory_full_rank.md#facts-scores-and-recall
    """
    return top1_margins(scores, targets) > 0


@fill_doc
def top1_margins(scores, targets):
    r"""Compute the top-1 margin of each row: its target's score minus the largest other score.

    Parameters
    ----------
    scores : ndarray, shape (n, k)
        Scores of the ``k >= 2`` candidates of each row.
    targets : ndarray of int, shape (n,)
        Index of the correct candidate of each row.

    Returns
    -------
    ndarray, shape (n,)
        :math:`s_{i, t_i} - \max_{j \ne t_i} s_{ij}`; positive iff row ``i`` is
        recalled (:func:`recalled`).

    See Also
    --------
    validation.losses.recalled : The rows with a positive margin.

    References
    ----------
    docs/theory_full_rank.md#facts-scores-and-recall

    Examples
    --------
    >>> top1_margins(np.array([[1.0, 3.0, 2.0], [0.0, 0.0, 5.0]]), np.array([1, 0])).tolist()
    [1.0, -5.0]
    """
    scores = np.asarray(scores)
    rows = np.arange(scores.shape[0])
    other = scores.copy()
    other[rows, targets] = -np.inf
    return scores[rows, targets] - other.max(axis=1)


@fill_doc
def xent_overwrite(Z, targets):
    """Softmax cross-entropy computed in the buffer of ``Z``, gradient left factored.

    Same numbers as :func:`softmax_xent` (tested against
    it), but ``Z`` is overwritten by ``exp(Z - rowmax)`` and the gradient is
    returned in factored form ``dlogits = rowscale[:, None] * Z - onehot / n``
    (``rowscale = 1 / (n * rowsum)``): the caller applies the row scaling
    after its ``(p, p) x (p, d)`` product, where it costs :math:`p d` instead of
    :math:`p^2`.  Only four passes over the ``(p, p)`` logits remain (max, subtract,
    exp, sum), with no :math:`p^2` allocation.

    Parameters
    ----------
    Z : ndarray, shape (n, k)
        Logits (float); overwritten.
    targets : ndarray of int, shape (n,)
        Index of the correct candidate of each row.

    Returns
    -------
    loss : float
        Mean cross-entropy over rows.
    Z : ndarray
        The overwritten buffer ``exp(Z - rowmax)``.
    rowscale : ndarray (n,)
        ``1 / (n * rowsum)``, in the dtype of ``Z``.
    correct : ndarray of bool
        Strict argmax recall (a tie with the target is a failure): the target
        is compared with the maximum of the other entries.

    See Also
    --------
    validation.losses.softmax_xent : The loss with a separate gradient array.

    %(ref_training_objective)s
    """
    n = Z.shape[0]
    rows = np.arange(n)
    tgt = Z[rows, targets]                       # fancy indexing: a copy
    Z[rows, targets] = -np.inf
    other = Z.max(axis=1)
    Z[rows, targets] = tgt
    correct = tgt > other
    mx = np.maximum(tgt, other)
    Z -= mx[:, None]
    np.exp(Z, out=Z)
    s = Z.sum(axis=1)
    loss = float(np.mean(np.log(s) - (tgt - mx)))
    return loss, Z, (1.0 / (s * n)).astype(Z.dtype, copy=False), correct
