"""Optimisers and learning-rate schedules shared by every training loop.

Single home of Adam and the warm-up + cosine schedule (used by the linear
memories, the transformer and the token-retrieval experiments).
"""
from __future__ import annotations

import math

import numpy as np

from hcizz.checks import check_int, check_real

__all__ = ["Adam", "warmup_cosine"]


def warmup_cosine(step, total, *, lr, warmup=0.0, final=0.0):
    """Return the learning rate at ``step`` (0-based) of a warm-up + cosine schedule.

    Linear warm-up over the first ``warmup`` fraction of the ``total`` steps,
    then cosine decay to ``final * lr``.

    Parameters
    ----------
    step : int
        Current step, ``0 <= step < total``.
    total : int
        Step budget (>= 1).
    lr : float
        Peak learning rate (> 0).
    warmup : float
        Warm-up fraction of ``total`` in [0, 1).
    final : float
        Final learning rate as a fraction of ``lr`` in [0, 1].

    Returns
    -------
    float
        The learning rate.

    Notes
    -----
    With ``w = max(1, round(warmup * total))`` warm-up steps (none if
    ``warmup == 0``): ``lr (step + 1) / w`` for ``step < w``, then
    ``lr [final + (1 - final) (1 + cos(pi s)) / 2]`` with
    ``s = (step - w) / max(1, total - w)``.

    References
    ----------
    docs/linear_memory.md#protocol

    Examples
    --------
    >>> [round(warmup_cosine(s, 4, lr=1.0, warmup=0.5), 3) for s in range(4)]
    [0.5, 1.0, 1.0, 0.5]
    """
    nw = 0 if warmup <= 0 else max(1, int(round(warmup * total)))
    if step < nw:
        return lr * (step + 1) / nw
    s = (step - nw) / max(1, total - nw)
    return lr * (final + (1.0 - final) * 0.5 * (1.0 + math.cos(math.pi * s)))


class Adam:
    """Adam (Kingma & Ba) acting in place on a list of numpy arrays.

    Parameters
    ----------
    params : list of ndarray
        Parameters, updated in place by :meth:`step`.
    betas : tuple of float
        ``(beta1, beta2)``.
    eps : float
        Denominator offset.

    References
    ----------
    D. P. Kingma and J. Ba, "Adam: a method for stochastic optimization",
    arXiv:1412.6980.

    Examples
    --------
    >>> w = np.array([1.0, -2.0])
    >>> opt = Adam([w])
    >>> for _ in range(200):
    ...     opt.step([2 * w], lr=0.1)
    >>> bool(np.all(np.abs(w) < 1e-2))
    True
    """

    def __init__(self, params, *, betas=(0.9, 0.999), eps=1e-8):
        self.params = list(params)
        self.b1 = check_real("betas[0]", betas[0], low=0, high=1, high_open=True)
        self.b2 = check_real("betas[1]", betas[1], low=0, high=1, high_open=True)
        self.eps = check_real("eps", eps, low=0, low_open=True)
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def step(self, grads, *, lr):
        """Apply one Adam update with learning rate ``lr``, in place.

        Parameters
        ----------
        grads : list of ndarray
            Gradients, in the order of the parameters.
        lr : float
            Learning rate of this step.
        """
        self.t += 1
        b1, b2 = self.b1, self.b2
        c1 = 1.0 - b1 ** self.t
        c2 = 1.0 - b2 ** self.t
        step = lr * math.sqrt(c2) / c1
        eps = self.eps * math.sqrt(c2)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            p -= step * m / (np.sqrt(v) + eps)
