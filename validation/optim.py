"""Optimisers, learning-rate schedules and the one training loop.

Single home of Adam, the warm-up + cosine schedule and :func:`adam_loop`, the
loop every trainer uses (the linear memories, the factual-recall memories and
transformer, the token-retrieval model): the trainer supplies the loss and
gradients of its model and a stop rule; the loop owns the steps, the schedule,
the order "evaluate, maybe stop, update" and the final evaluation.
"""
from __future__ import annotations

import math

import numpy as np

from dataclasses import dataclass

from hcizz.checks import check_int, check_real
from hcizz.results import Result
from validation._docparams import fill_doc, returned_by

__all__ = ["Optimizer", "Adam", "GradientDescent", "warmup_cosine", "adam_loop", "LoopResult"]


def warmup_cosine(step, total, *, lr, warmup=0.0, final=0.0):
    r"""Return the learning rate at ``step`` (0-based) of a warm-up + cosine schedule.

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

    See Also
    --------
    validation.optim.adam_loop : The loop that takes a schedule.

    Notes
    -----
    With :math:`w = \max(1, \mathrm{round}(\mathrm{warmup} \cdot \mathrm{total}))` warm-up steps (none if
    ``warmup == 0``): :math:`\mathrm{lr}\, (\mathrm{step} + 1) / w` for ``step < w``, then
    :math:`\mathrm{lr}\, [\mathrm{final} + (1 - \mathrm{final}) (1 + \cos(\pi s)) / 2]` with
    :math:`s = (\mathrm{step} - w) / \max(1, \mathrm{total} - w)`.

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


@fill_doc
class Optimizer:
    """Base of the in-place optimisers: the parameters, the update count and :meth:`step`.

    A subclass writes its update rule in ``_update(grads, lr)``; :meth:`step`
    counts the update (``t``, 1 at the first step) and applies it.  Any object
    with ``step(grads, *, lr)`` can be passed as ``optimizer`` to
    :func:`adam_loop`.

    Parameters
    ----------
    %(opt_params)s

    See Also
    --------
    validation.optim.Adam : Adam.
    validation.optim.GradientDescent : Plain gradient descent.

    References
    ----------
    docs/architecture.md#where-to-add
    """

    def __init__(self, params):
        self.params = list(params)
        self.t = 0

    def step(self, grads, *, lr):
        """Apply one update with learning rate ``lr`` to every parameter, in place.

        Parameters
        ----------
        grads : list of ndarray
            Gradients, in the order of the parameters.
        lr : float
            Learning rate (step size) of this step.
        """
        self.t += 1
        self._update(grads, lr)

    def _update(self, grads, lr):
        raise NotImplementedError


@fill_doc
class Adam(Optimizer):
    """Adam (Kingma & Ba) acting in place on a list of numpy arrays.

    Parameters
    ----------
    %(opt_params)s
    betas : tuple of float
        ``(beta1, beta2)``.
    eps : float
        Denominator offset.

    See Also
    --------
    validation.optim.adam_loop : The training loop that uses it.
    validation.optim.GradientDescent : Plain gradient descent, the same interface.

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
    >>> print(np.abs(w).max() < 1e-2)                 # w -> 0, the minimiser of |w|^2
    True
    """

    def __init__(self, params, *, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params)
        self.b1 = check_real("betas[0]", betas[0], low=0, high=1, high_open=True)
        self.b2 = check_real("betas[1]", betas[1], low=0, high=1, high_open=True)
        self.eps = check_real("eps", eps, low=0, low_open=True)
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]

    def _update(self, grads, lr):
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


@fill_doc
class GradientDescent(Optimizer):
    """Plain gradient descent ``p -= lr g`` in place, with the interface of :class:`Adam`.

    Passed as ``optimizer`` to :func:`adam_loop` by the trainers whose analysis
    assumes this update (no momentum, no normalisation): the sequential-learning
    model of factual recall and the early phase of token retrieval.

    Parameters
    ----------
    %(opt_params)s

    See Also
    --------
    validation.optim.Adam : Adam, the same interface.
    validation.optim.adam_loop : The loop that takes it as ``optimizer``.

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> w = np.array([1.0, -2.0])
    >>> GradientDescent([w]).step([np.array([0.5, 0.5])], lr=2.0)
    >>> w
    array([ 0., -3.])
    """

    def _update(self, grads, lr):
        for p, g in zip(self.params, grads):
            p -= lr * g


@fill_doc(record_links=returned_by("validation.optim.adam_loop", "docs/architecture.md#where-to-add"))
@dataclass(frozen=True)
class LoopResult(Result):
    """Outcome of :func:`adam_loop`.

    Parameters
    ----------
    steps : int
        Updates applied (the stop step when the loop stopped, else the budget).
    stopped : bool
        Whether ``stop`` ended the loop before the budget.
    loss : float
        Loss of the last evaluation (the parameters as returned).
    info : object
        What the last evaluation returned besides the loss and gradients.

    %(record_links)s
    """

    steps: int
    stopped: bool
    loss: float
    info: object


def adam_loop(params, evaluate, *, steps, lr, stop=None, callback=None, final=True,
              betas=(0.9, 0.999), eps=1e-8, optimizer=None):
    r"""Run Adam on ``params`` for at most ``steps`` updates: the one training loop.

    At each step ``t = 0, 1, ...``: ``loss, grads, info = evaluate(t)`` on the
    current parameters; if ``stop(t, loss, info)`` the loop returns *without*
    updating (so the parameters returned are those that met the rule);
    ``callback(t, loss, info)`` is called; then one Adam update with the rate
    ``lr(t)`` (or the constant ``lr``).  After the budget, ``evaluate(steps)``
    is called once more on the final parameters (``final=True``).

    Parameters
    ----------
    params : list of ndarray
        Parameters, updated in place.
    evaluate : callable
        ``evaluate(t) -> (loss, grads, info)``: the loss (float), the
        gradients (list of arrays, in the order of ``params``) and anything the
        stop rule or the caller needs (e.g. which facts are recalled).
    steps : int
        Step budget (>= 0).
    lr : float or callable
        Learning rate, or ``lr(t)`` (e.g. ``functools.partial(warmup_cosine, total=steps, lr=...)``).
    stop : callable, optional
        ``stop(t, loss, info) -> bool``, evaluated before update ``t``.
    callback : callable, optional
        ``callback(t, loss, info)`` after the stop check (logging, curves).
    final : bool, optional
        Evaluate the parameters once more after the last update (default True).
    betas, eps : optional
        Adam's constants (ignored when ``optimizer`` is given).
    optimizer : Adam, optional
        An existing optimiser over ``params`` (to continue a run with its moments).

    Returns
    -------
    LoopResult
        Updates applied, whether it stopped, the last loss and info.

    Raises
    ------
    ValueError
        ``steps < 0`` or a non-positive constant ``lr``.

    See Also
    --------
    validation.optim.Adam : The default optimiser.
    validation.optim.warmup_cosine : A learning-rate schedule.

    References
    ----------
    D. P. Kingma and J. Ba, arXiv:1412.6980; docs/architecture.md#where-to-add

    Examples
    --------
    Minimise :math:`\|w\|^2` and stop once it is below ``1e-4``:

    >>> w = np.array([1.0, -2.0])
    >>> r = adam_loop([w], lambda t: (float(w @ w), [2 * w], None), steps=500, lr=0.1,
    ...               stop=lambda t, loss, info: loss < 1e-4)
    >>> r.stopped, r.steps < 500, bool(w @ w < 1e-4)
    (True, True, True)
    """
    steps = check_int("steps", steps, low=0)
    if not callable(lr):
        check_real("lr", lr, low=0, low_open=True, allow_array=False)
    opt = optimizer if optimizer is not None else Adam(params, betas=betas, eps=eps)
    loss, info = math.nan, None
    for t in range(steps):
        loss, grads, info = evaluate(t)
        if stop is not None and stop(t, loss, info):
            return LoopResult(steps=t, stopped=True, loss=loss, info=info)
        if callback is not None:
            callback(t, loss, info)
        opt.step(grads, lr=lr(t) if callable(lr) else lr)
    if final:
        loss, _, info = evaluate(steps)
    return LoopResult(steps=steps, stopped=False, loss=loss, info=info)
