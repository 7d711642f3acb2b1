r"""Sequential learning: linear attention with one-hot embeddings (docs/factual_recall.md).

With one-hot embeddings ``e_v`` and EOS as the only query, a linear-attention
layer (no softmax) :math:`f(X) = \sum_t W_{OV} e_{x_t} (e_{x_t}^T W_{KQ} e_{\mathrm{EOS}})` depends on
``W_KQ`` only through the vector :math:`k = W_{KQ}\, e_{\mathrm{EOS}}` in :math:`\mathbb{R}^V`.  We therefore
train ``k`` (attention score of each token) and ``W`` = ``W_OV`` (:math:`D R \times V`):

:math:`\mathrm{logits}_b = \sum_t k[x_{b,t}]\, W[:, x_{b,t}] = W (c_b \odot k)`

where ``c_b`` counts the tokens of sequence ``b``.  With the structured facts
:math:`a(s, r) = \lfloor s D / S \rfloor + r D` the target is additive in (subject,
relation), so this model can fit the task exactly.  Trained by plain gradient
descent from a small initialisation; we track

* total loss :math:`-\ln p(a^*)`, starting at :math:`\ln(D R)`;
* relation loss :math:`-\ln \sum_{a \in \text{block } r} p(a)` (mass on the correct block);
* subject loss :math:`-\ln \sum_{r'} p(c(s) + r' D)` (mass on the correct index
  :math:`c(s) = \lfloor s D / S \rfloor` inside the blocks).

Expected (arXiv:2412.06538; docs/factual_recall.md#experiments): the total loss plateaus at :math:`\ln(D R)`, then at :math:`\ln D` (relation
learnt, subject not: the model answers with a plausible answer of the right
type), then converges.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from validation.losses import softmax_xent
from validation._docparams import fill_doc, returned_by
from validation.optim import GradientDescent, adam_loop
from hcizz.results import Result
from .task import FactTask, structured_answers

__all__ = ["linear_attention_loss", "train_sequential", "detect_stages", "block_losses",
           "StageTimes", "GradientDescent"]


def _counts(tokens, vocab, dtype):
    """Token counts ``(B, vocab)`` of each sequence as a CSR sparse matrix."""
    from scipy import sparse

    B, T = tokens.shape
    C = sparse.csr_matrix((np.ones(B * T, dtype), tokens.ravel(), np.arange(0, B * T + 1, T)),
                          shape=(B, vocab))
    C.sum_duplicates()
    return C


@fill_doc
def linear_attention_loss(k, W, counts, targets, grad=True):
    r"""Compute the cross-entropy of the one-hot linear-attention model and its gradients.

    Parameters
    ----------
    k : ndarray (V,)
        Attention score of each token against the EOS query.
    W : ndarray (A, V)
        Value/output map (:math:`A = D R` answers).
    counts : ndarray or scipy sparse matrix (B, V)
        Token counts of each sequence.
    targets : int ndarray (B,)
        Answer index of each sequence.
    %(grads_flag)s

    Returns
    -------
    %(xent)s
    grads : list of ndarray or None
        ``[dk (V,), dW (A, V)]`` (``None`` without ``grad``).
    logits : ndarray (B, A)
        :math:`C (k \odot W^T)`.

    See Also
    --------
    validation.factual_recall.sequential.train_sequential : Trains the model on this loss.
    validation.factual_recall.sequential.block_losses : The relation and subject parts of the loss.

    Notes
    -----
    :math:`\mathrm{logits} = C (k \odot W^T)` (:math:`C` the counts); with
    :math:`G = \partial \mathrm{loss} / \partial \mathrm{logits}` and :math:`M = C^T G` (:math:`V \times A`):
    :math:`dW = (k \odot M)^T` and :math:`dk = \sum_a M \odot W^T`.
    With a sparse :math:`C` every product costs :math:`O(B T A)`.

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> C = np.array([[2.0, 1.0, 0.0]])            # one sequence: token 0 twice, token 1 once
    >>> k, W = np.array([1.0, 0.5, 3.0]), np.eye(2, 3)
    >>> linear_attention_loss(k, W, C, np.array([0]))[2]   # logits = W (c * k)
    array([[2. , 0.5]])
    """
    k = np.asarray(k)
    W = np.asarray(W)
    if k.ndim != 1 or W.ndim != 2 or W.shape[1] != k.shape[0]:
        raise ValueError(f"k must have shape (V,) and W shape (A, V), got {k.shape} and {W.shape}")
    if counts.ndim != 2 or counts.shape[1] != k.shape[0]:
        raise ValueError(f"counts must have shape (B, V={k.shape[0]}), got {counts.shape}")
    kW = k[:, None] * W.T                     # (V, A)
    logits = np.asarray(counts @ kW)
    loss, G, _ = softmax_xent(logits, targets, grad=grad)
    if not grad:
        return loss, None, logits
    M = np.asarray(counts.T @ G)              # (V, A)
    dW = (k[:, None] * M).T
    dk = (M * W.T).sum(axis=1)
    return loss, [dk, dW], logits


@fill_doc
def block_losses(logits, targets, D):
    r"""Compute the total, relation-only and subject-only losses of logits ``(B, D R)``.

    Parameters
    ----------
    logits : ndarray (B, D R)
        Answer ``a`` belongs to block ``a // D`` (its relation) at within-block
        index ``a % D``.
    targets : int ndarray (B,)
        Answer index of each sequence.
    D : int
        Answers per relation (>= 2, dividing the number of logits).

    Returns
    -------
    total, relation, subject : float
        The mean of :math:`-\ln p(\mathrm{target})`; the mean of :math:`-\ln` of the mass
        on the target's block; the mean of :math:`-\ln` of the mass on the target's
        within-block index summed over all blocks.

    See Also
    --------
    validation.factual_recall.sequential.linear_attention_loss : The total loss.

    Notes
    -----
    At uniform logits the three are :math:`\ln(D R)`, :math:`\ln R` and :math:`\ln D`; a model
    that knows the relation but not the subject (mass spread uniformly over the
    right block) has total :math:`\ln D`, relation ``0`` and subject :math:`\ln D`.

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> np.round(block_losses(np.zeros((1, 6)), np.array([4]), 3), 4)   # D=3, R=2
    array([1.7918, 0.6931, 1.0986])
    """
    logits = np.asarray(logits)
    B, A = logits.shape
    D = check_int("D", D, low=2)
    if A % D:
        raise ValueError(f"D must divide the number of answers {A}, got {D}")
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    p = np.exp(logp).reshape(B, A // D, D)          # (B, R, D)
    rows = np.arange(B)
    total = -logp[rows, targets].mean()
    rel = -np.log(p.sum(axis=2)[rows, targets // D]).mean()
    subj = -np.log(p.sum(axis=1)[rows, targets % D]).mean()
    return float(total), float(rel), float(subj)


@fill_doc
def train_sequential(S, R, D, *, T=8, steps=3000, lr=1.0, init=1e-3, batch=None,
                     eval_every=10, rng=None, dtype=np.float64):
    r"""Train the one-hot linear-attention model by plain GD and record the losses.

    Parameters
    ----------
    S, R, D : int
        Subjects, relations (>= 1), answers per relation (>= 2), :math:`S \geq D`.
    T : int
        Sequence length (>= 3).
    steps : int
        Gradient steps.
    lr : float
        Constant learning rate (plain gradient descent, no momentum).
    init : float
        Standard deviation of the initial ``k`` and ``W`` (small: the dynamics
        start near the saddle at 0).
    batch : int, optional
        Sequences per step; default: every fact once per step (:math:`S R`
        sequences with fresh positions and noise), i.e. gradient descent on the
        empirical loss up to the noise tokens.
    eval_every : int
        Record the three losses every this many steps (and at the end).
    rng : None, int or Generator
        Randomness (initialisation, sequences).
    dtype : numpy dtype
        Parameter dtype.

    Returns
    -------
    dict
        A trajectory record (plain dict, extended by its callers): ``step``
        (int array), ``total``, ``relation``, ``subject`` (loss arrays),
        ``ln_DR``, ``ln_D``, the settings, and the ``stages``
        (:class:`StageTimes`) found by :func:`detect_stages`.

    See Also
    --------
    validation.factual_recall.sequential.detect_stages : Reads the stages off its losses.
    validation.optim.GradientDescent : The update it uses.

    Notes
    -----
    Trained on :func:`validation.optim.adam_loop` with :class:`validation.optim.GradientDescent`
    as its optimiser.  The gradient ``[dk, dW]`` is :func:`linear_attention_loss`'s (checked
    against finite differences); the losses are evaluated on a fixed set
    holding every fact twice.  A relation column of ``W`` receives gradient
    from :math:`1/R` of the sequences and a subject column from :math:`1/S`, so with
    :math:`S \gg R` the relation is learnt first.

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> out = train_sequential(16, 2, 4, T=4, steps=300, lr=4.0, rng=0)
    >>> out["stages"]["order"], bool(abs(out["total"][0] - np.log(8)) < 1e-3)
    ('relation-first', True)
    """
    S = check_int("S", S, low=1)
    R = check_int("R", R, low=1)
    D = check_int("D", D, low=2)
    T = check_int("T", T, low=3)
    steps = check_int("steps", steps, low=1)
    eval_every = check_int("eval_every", eval_every, low=1)
    lr = check_real("lr", lr, low=0, low_open=True)
    init = check_real("init", init, low=0, low_open=True)
    rng = check_rng(rng)
    task = FactTask(S, R, D, T, structured_answers(S, R, D))
    V, A = task.vocab, task.n_answers
    k = (init * rng.standard_normal(V)).astype(dtype)
    W = (init * rng.standard_normal((A, V))).astype(dtype)
    fs, fr = task.all_facts()
    if batch is not None:
        batch = check_int("batch", batch, low=1)
    rec = {"step": [], "total": [], "relation": [], "subject": []}
    # fixed evaluation set: every fact twice with its own noise
    ev_tok, ev_y, _, _ = task.sample(0, rng, subjects=np.tile(fs, 2), relations=np.tile(fr, 2))
    ev_C = _counts(ev_tok, V, dtype)

    def evaluate(step):
        # the three losses on the evaluation set every ``eval_every`` steps and at the
        # end, then the gradient of a fresh batch
        if step % eval_every == 0 or step == steps:
            _, _, logits = linear_attention_loss(k, W, ev_C, ev_y, grad=False)
            for key, v in zip(("total", "relation", "subject"), block_losses(logits, ev_y, D)):
                rec[key].append(v)
            rec["step"].append(step)
        if step == steps:
            return math.nan, None, None
        if batch is None:
            tok, y, _, _ = task.sample(0, rng, subjects=fs, relations=fr)
        else:
            tok, y, _, _ = task.sample(batch, rng)
        loss, grads, _ = linear_attention_loss(k, W, _counts(tok, V, dtype), y)
        return loss, grads, None

    adam_loop([k, W], evaluate, steps=steps, lr=lr, optimizer=GradientDescent([k, W]))
    out = {key: np.asarray(v) for key, v in rec.items()}
    out.update(ln_DR=float(np.log(D * R)), ln_D=float(np.log(D)), S=S, R=R, D=D, T=T,
               lr=lr, init=init, steps=steps)
    out["stages"] = detect_stages(out["step"], out["total"], out["relation"], out["subject"])
    return out


def _first_settled_below(curve, level):
    """First index from which ``curve`` stays strictly below ``level`` to the end
    (None if its last value is not below): a transient dip does not count."""
    above = np.flatnonzero(~(curve < level))
    if above.size == 0:
        return 0
    i = int(above[-1]) + 1
    return None if i == len(curve) else i


@fill_doc(record_links=returned_by(
    "validation.factual_recall.sequential.detect_stages",
    "docs/factual_recall.md#escape-times"))
@dataclass(frozen=True)
class StageTimes(Result):
    """Stage boundaries of a sequential-learning run (:func:`detect_stages`), a frozen record.

    Parameters
    ----------
    relation_learnt : int or None
        First recorded step from which the relation loss stays below ``frac``
        times its initial value.
    subject_learnt : int or None
        The same for the subject loss.
    plateau1 : float
        Mean total loss before the relation loss has dropped for good by 10%.
    plateau2 : float or None
        Median total loss between the relation being learnt and the subject
        loss dropping by 10%.
    final : float
        Last total loss.
    order : {"relation-first", "subject-first", "undetermined"}
        Which component is learnt first.

    %(record_links)s
    """

    relation_learnt: Optional[int]
    subject_learnt: Optional[int]
    plateau1: float
    plateau2: Optional[float]
    final: float
    order: str


@fill_doc
def detect_stages(step, total, relation, subject, frac=0.1):
    r"""Read the stage boundaries off the loss curves (no reference to the theory values).

    Parameters
    ----------
    step : ndarray
        Steps at which the losses were recorded.
    total, relation, subject : ndarray
        Loss curves.
    frac : float in (0, 0.9)
        A component is "learnt" once its loss falls below ``frac`` times its
        initial value and stays there.

    Returns
    -------
    StageTimes
        ``relation_learnt`` and ``subject_learnt``: first recorded step from
        which the relation (resp. subject) loss stays below ``frac`` times its
        initial value (None if it does not end there); ``plateau1`` = mean total
        loss before the relation loss has dropped (for good) by 10%;
        ``plateau2`` = median total loss between the step the relation is
        learnt and the step the subject loss has dropped by 10% (None when that
        window is empty); ``final`` = last total loss; ``order`` =
        "relation-first", "subject-first" or "undetermined".

    See Also
    --------
    validation.factual_recall.sequential.train_sequential : The run whose losses it reads.
    validation.factual_recall.theory.escape_rates : The theory of the escape times.

    Notes
    -----
    Every threshold is relative to the curve's own first value, so the
    detector uses neither :math:`\ln(D R)` nor :math:`\ln D`; "stays below" (the last
    crossing) makes it insensitive to transient dips and to oscillations
    before the drop.  A curve whose initial value is not positive (e.g. the
    relation loss when ``R = 1``) is never "learnt".

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> t = np.arange(6)
    >>> rel = np.array([1, 1, .05, .01, .01, .01]); sub = np.array([2, 2, 2, 2, .1, .1])
    >>> st = detect_stages(t, rel + sub, rel, sub)
    >>> st["relation_learnt"], st["subject_learnt"], st["order"]
    (2, 4, 'relation-first')
    """
    frac = check_real("frac", frac, low=0, high=0.9, low_open=True, high_open=True,
                      allow_array=False)
    step, total = np.asarray(step), np.asarray(total, dtype=float)
    relation, subject = np.asarray(relation, dtype=float), np.asarray(subject, dtype=float)
    n = len(step)
    if n < 1 or not all(c.shape == (n,) for c in (step, total, relation, subject)):
        raise ValueError(f"step, total, relation and subject must be 1-d of one length >= 1, got "
                         f"shapes {step.shape}, {total.shape}, {relation.shape}, {subject.shape}")

    def settled(curve, f):
        return _first_settled_below(curve, f * curve[0]) if curve[0] > 0 else None

    i_rel = settled(relation, frac)
    i_sub = settled(subject, frac)
    i_rel_start = settled(relation, 0.9)
    i_sub_start = settled(subject, 0.9)
    plateau1 = float(np.mean(total[: max(i_rel_start or len(total), 1)]))
    plateau2 = None
    if i_rel is not None:
        hi = i_sub_start if i_sub_start is not None else len(total)
        if hi > i_rel:
            plateau2 = float(np.median(total[i_rel:hi]))
    if i_rel is not None and (i_sub is None or i_rel < i_sub):
        order = "relation-first"
    elif i_sub is not None and (i_rel is None or i_sub < i_rel):
        order = "subject-first"
    else:
        order = "undetermined"
    return StageTimes(relation_learnt=None if i_rel is None else int(step[i_rel]),
                      subject_learnt=None if i_sub is None else int(step[i_sub]),
                      plateau1=plateau1, plateau2=plateau2, final=float(total[-1]), order=order)
