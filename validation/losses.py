"""Softmax cross-entropy, its gradient and exact-recall detection.

Single home of the cross-entropy used by all training loops.
"""
from __future__ import annotations

import numpy as np

__all__ = ["softmax_xent", "recalled"]


def softmax_xent(logits, targets, *, grad=True):
    """Mean softmax cross-entropy over rows, its gradient and recall flags.

    Parameters
    ----------
    logits : ndarray, shape (n, k)
        Scores; row ``i`` are the scores of the ``k`` candidates of sample ``i``.
    targets : ndarray of int, shape (n,)
        Index of the correct candidate of each row.
    grad : bool
        Also return ``d loss / d logits``.

    Returns
    -------
    loss : float
        ``-(1/n) sum_i log softmax(logits_i)[targets_i]``.
    dlogits : ndarray or None
        ``(softmax(logits) - onehot(targets)) / n``, same dtype as ``logits``.
    correct : ndarray of bool, shape (n,)
        Exact recall: the target's score is strictly larger than every other.

    Notes
    -----
    Computed with the max subtracted (no overflow); ``correct`` uses a strict
    comparison so that ties (e.g. all-zero scores at initialisation) count as
    failures.
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
    """Boolean array: row ``i`` is recalled iff ``scores[i, targets[i]]`` is
    strictly larger than every other entry of the row."""
    scores = np.asarray(scores)
    rows = np.arange(scores.shape[0])
    tgt = scores[rows, targets]
    other = scores.copy()
    other[rows, targets] = -np.inf
    return tgt > other.max(axis=1)
