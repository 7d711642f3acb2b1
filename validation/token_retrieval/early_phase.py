r"""Three-step early phase of gradient descent from zero, and full training.

Early phase (docs/token_retrieval.md#early-phase-and-full-training)::

    V1 = -eta   grad_V L(W=0,  V=0)
    W1 = -gamma grad_W L(W=0,  V=V1)
    V2 = V1 - gamma grad_V L(W=W1, V=V1)

with a small ``eta`` (``V1`` stays in the linear regime of the softmax) and a
large ``gamma``.  ``gamma`` is either given, or fixed by ``beta`` through
:math:`\gamma = \beta / \|\nabla_W\|_F` so that :math:`\|W_1\|_F = \beta` (our normalised
choice: the attention sharpness after step 2 no longer depends on the 1/N,
1/L^2 prefactors of the mean-loss gradient; the same ``gamma`` is used for
step 3).  The predictor after the early phase is ``(W1, V2)``.
"""
from __future__ import annotations

import math
import functools
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real
from hcizz.results import Result
from validation.optim import adam_loop, warmup_cosine

from .model import forward, loss_and_grads, margins
from ._docparams import fill_doc

__all__ = ["EarlyPhase", "Evaluation", "early_phase", "evaluate", "train_gd"]


@fill_doc
@dataclass(frozen=True)
class EarlyPhase(Result):
    """Result of :func:`early_phase` (``V1``, ``W1``, ``V2`` and ``gamma``).

    Parameters
    ----------
    V1 : ndarray, shape (d, k)
        Value matrix after step 1.
    W1 : ndarray, shape (d, d)
        Key-query matrix after step 2.
    V2 : ndarray, shape (d, k)
        Value matrix after step 3; the predictor is ``(W1, V2)``.
    gamma : float
        Step size of steps 2 and 3.
    eta : float
        Step size of step 1.

    See Also
    --------
    validation.token_retrieval.early_phase.early_phase : Run the three early-phase steps on the training ``batch``.
    validation.token_retrieval.early_phase.evaluate
        Compute recall statistics of the predictor ``(W, Wv)`` on ``batch``.

    %(ref_early_phase_full_training)s
    """

    V1: np.ndarray
    W1: np.ndarray
    V2: np.ndarray
    gamma: float
    eta: float


class _GradientDescent:
    """Plain gradient descent with the interface of :class:`validation.optim.Adam` (``step(grads, lr=)``),
    so that :func:`validation.optim.adam_loop` runs both optimisers of :func:`train_gd`."""

    def __init__(self, params):
        self.params = list(params)

    def step(self, grads, *, lr):
        for p, g in zip(self.params, grads):
            p -= lr * g


@fill_doc
@dataclass(frozen=True)
class Evaluation(Result):
    """Recall statistics of a predictor on a batch (:func:`evaluate`).

    Parameters
    ----------
    accuracy : float
        Fraction of the sequences recalled.
    all : bool
        Whether every sequence is recalled.
    margins : ndarray, shape (N,)
        Target logit minus the best other logit.
    attn_inf : ndarray, shape (N,)
        Attention weight on the informative position.
    logits : ndarray, shape (N, V)
        The logits.

    See Also
    --------
    validation.token_retrieval.early_phase.evaluate
        Compute recall statistics of the predictor ``(W, Wv)`` on ``batch``.
    validation.token_retrieval.early_phase.EarlyPhase
        Result of ``early_phase`` (``V1``, ``W1``, ``V2`` and ``gamma``).

    %(ref_retrieval_probability)s
    """

    accuracy: float
    all: bool
    margins: np.ndarray
    attn_inf: np.ndarray
    logits: np.ndarray


def _zeros(emb, A):
    d = emb.d
    k = d if A is None else A.shape[0]
    return np.zeros((d, d), dtype=emb.E.dtype), np.zeros((d, k), dtype=emb.E.dtype)


def early_phase(emb, batch, *, eta=0.1, gamma=None, beta=None, A=None):
    r"""Run the three early-phase steps on the training ``batch``.

    Parameters
    ----------
    emb : Embeddings
        The task's fixed vectors.
    batch : Batch
        Training set (``N`` sequences).
    eta : float
        First step size (> 0; small).
    gamma : float, optional
        Step size of steps 2 and 3 (> 0).  Exactly one of ``gamma`` and
        ``beta`` must be given.
    beta : float, optional
        Target :math:`\|W_1\|_F`; sets :math:`\gamma = \beta / \|\nabla_W\|_F`.
    A : ndarray (m, d), optional
        Fixed MLP layer.

    Returns
    -------
    EarlyPhase
        ``V1``, ``W1``, ``V2``, ``gamma`` and ``eta``.

    See Also
    --------
    validation.token_retrieval.early_phase.evaluate
        Compute recall statistics of the predictor ``(W, Wv)`` on ``batch``.
    validation.token_retrieval.early_phase.train_gd
        Train from zero with full-batch Adam or GD, for comparison with the early phase.
    validation.token_retrieval.theory.success_probs
        Predict P(retrieval), P(recall) and fresh accuracy without fitted parameters.

    Notes
    -----
    The three steps, each a full-batch gradient of the mean cross-entropy
    (:func:`~validation.token_retrieval.model.loss_and_grads`)::

        V1 = -eta grad_V(W=0, V=0)
        W1 = -gamma grad_W(W=0, V=V1)
        V2 = V1 - gamma grad_V(W=W1, V=V1)

    If ``grad_W`` vanishes exactly (degenerate task), ``beta`` gives
    ``gamma = 0`` and :math:`W_1 = 0`.  A closed form of all three steps for one
    one-hot sequence of length 2 is derived by hand and tested in
    ``tests/test_tr_model.py::test_three_steps_by_hand``.

    References
    ----------
    arXiv:2603.15923 (the early phase of gradient descent);
    docs/token_retrieval.md#early-phase-and-full-training

    Examples
    --------
    >>> from validation.token_retrieval.task import make_embeddings, sample_sequences
    >>> emb = make_embeddings(40, 16, rng=0)
    >>> b = sample_sequences(emb, 10, 4, rng=1)
    >>> ep = early_phase(emb, b, eta=0.1, beta=10.0)
    >>> round(float(np.linalg.norm(ep.W1)), 6), ep.V2.shape
    (10.0, (16, 16))
    """
    eta = check_real("eta", eta, low=0, high=math.inf, low_open=True, high_open=True,
                     allow_array=False)
    if (gamma is None) == (beta is None):
        raise ValueError("exactly one of gamma and beta must be given")
    if gamma is not None:
        gamma = check_real("gamma", gamma, low=0, high=math.inf, low_open=True, high_open=True,
                           allow_array=False)
    else:
        beta = check_real("beta", beta, low=0, high=math.inf, low_open=True, high_open=True,
                          allow_array=False)
    W0, V0 = _zeros(emb, A)
    _, _, gV0, _ = loss_and_grads(W0, V0, emb, batch, A)
    V1 = -eta * gV0
    _, gW1, _, _ = loss_and_grads(W0, V1, emb, batch, A)
    if gamma is None:
        nrm = float(np.linalg.norm(gW1))
        gamma = beta / nrm if nrm > 0 else 0.0
    W1 = -gamma * gW1
    _, _, gV2, _ = loss_and_grads(W1, V1, emb, batch, A)
    V2 = V1 - gamma * gV2
    return EarlyPhase(V1=V1, W1=W1, V2=V2, gamma=float(gamma), eta=float(eta))


@fill_doc
def evaluate(W, Wv, emb, batch, A=None):
    r"""Compute recall statistics of the predictor ``(W, Wv)`` on ``batch``.

    Parameters
    ----------
    W, Wv : ndarray
        Key-query and value/output matrices (e.g. ``W1``, ``V2`` of
        :func:`early_phase`).
    emb : Embeddings
        The task's fixed vectors.
    batch : Batch
        Sequences to evaluate.
    A : ndarray (m, d), optional
        Fixed MLP layer.

    Returns
    -------
    Evaluation
        ``accuracy`` (fraction recalled), ``all`` (every sample recalled),
        ``margins`` (N,) target logit minus best other logit,
        ``attn_inf`` (N,) attention weight on the informative position,
        ``logits`` (N, V).

    See Also
    --------
    validation.token_retrieval.early_phase.early_phase : Run the three early-phase steps on the training ``batch``.
    validation.token_retrieval.model.margins
        Compute the per-sample margin :math:`\mathrm{logit}_{\mathrm{target}} - \max_{k \neq \mathrm{target}} \mathrm{logit}_k`.

    %(ref_retrieval_probability)s
    """
    c = forward(W, Wv, emb, batch.X, A)
    mg = margins(c["logits"], batch.targets)
    ok = mg > 0
    return Evaluation(accuracy=float(ok.mean()), all=bool(ok.all()), margins=mg,
                      attn_inf=c["a"][np.arange(batch.N), batch.pos], logits=c["logits"])


@fill_doc
def train_gd(emb, batch, *, steps=300, lr=0.05, optimizer="adam", A=None, warmup=0.05,
             log_every=0):
    """Train from zero with full-batch Adam or GD, for comparison with the early phase.

    Parameters
    ----------
    emb : Embeddings
        The task's fixed vectors.
    batch : Batch
        Training set.
    steps : int
        Number of full-batch steps (>= 1).
    lr : float
        Peak learning rate (warm-up + cosine schedule of
        :func:`validation.optim.warmup_cosine`).
    optimizer : {"adam", "gd"}
        :class:`validation.optim.Adam` or plain gradient descent, both run by
        the one training loop :func:`validation.optim.adam_loop`.
    A : ndarray (m, d), optional
        Fixed MLP layer.
    warmup : float
        Warm-up fraction.
    log_every : int
        Record (step, loss, train accuracy) every this many steps (0: only
        the end).

    Returns
    -------
    W, Wv : ndarray
        Trained parameters.
    history : list of (int, float, float)
        ``(step, loss, training accuracy)`` records; the last one is after
        the final step.

    See Also
    --------
    validation.token_retrieval.early_phase.early_phase : Run the three early-phase steps on the training ``batch``.
    validation.token_retrieval.runs.compare_gd
        Compare the early phase with full training (Adam from zero) on the same task.

    %(ref_early_phase_full_training)s

    Examples
    --------
    >>> from validation.token_retrieval.task import make_embeddings, sample_sequences
    >>> emb = make_embeddings(24, 16, rng=4)
    >>> b = sample_sequences(emb, 6, 3, rng=5)
    >>> W, Wv, hist = train_gd(emb, b, steps=60, lr=0.05)
    >>> hist[-1][2]                                   # training accuracy
    1.0
    """
    steps = check_int("steps", steps, low=1)
    lr = check_real("lr", lr, low=0, high=math.inf, low_open=True, high_open=True,
                    allow_array=False)
    warmup = check_real("warmup", warmup, low=0, high=1, high_open=True, allow_array=False)
    log_every = check_int("log_every", log_every, low=0)
    if optimizer not in ("adam", "gd"):
        raise ValueError(f"optimizer must be 'adam' or 'gd', got {optimizer!r}")
    W, Wv = _zeros(emb, A)
    hist = []

    def evaluate(t):
        if t < steps:
            loss, gW, gV, ok = loss_and_grads(W, Wv, emb, batch, A)
            return loss, [gW, gV], ok
        loss, _, _, ok = loss_and_grads(W, Wv, emb, batch, A, grad=False)
        return loss, None, ok

    def log(t, loss, ok):
        if log_every and t % log_every == 0:
            hist.append((t, loss, float(ok.mean())))

    res = adam_loop([W, Wv], evaluate, steps=steps,
                    lr=functools.partial(warmup_cosine, total=steps, lr=lr, warmup=warmup), callback=log,
                    optimizer=None if optimizer == "adam" else _GradientDescent([W, Wv]))
    hist.append((steps, res.loss, float(res.info.mean())))
    return W, Wv, hist
