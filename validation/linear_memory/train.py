r"""Full-batch training of linear associative memories with Adam.

Two presets (:data:`PRESETS`):

* ``paper`` — the protocol of seed 002: Adam, lr ``1e-2``, at most 512 full-batch
  steps, stop as soon as 99.9% of the facts are recalled.
* ``default`` — chosen by the budget study of ``docs/linear_memory.md``
  (threshold against step budget until it stops moving): logits at inverse
  temperature :math:`1 / (0.05 \sqrt{d})`, Adam lr ``0.1`` held constant
  (``warmup_cosine`` with no warm-up and ``final = 1``: warm-up and cosine
  decay did not move the threshold, and a constant rate makes a run with a
  smaller budget an exact prefix of a longer one, which the budget study
  uses), 4096 steps, stopping as soon as **all** ``p`` facts are recalled.

Success of a run is exact recall of all ``p`` facts (strict argmax) by the
returned memory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from validation.optim import adam_loop, warmup_cosine
from .models import xent_and_grad, scores
from .registry import get_parametrization
from validation.losses import recalled
from hcizz.results import Result
from ._docparams import fill_doc

__all__ = ["TrainConfig", "PRESETS", "get_config", "TrainResult", "train", "ContinuedTraining",
           "train_past_recall"]


@fill_doc
@dataclass(frozen=True)
class TrainConfig:
    r"""Optimiser settings of :func:`train`.

    Parameters
    ----------
    lr : float
        Peak Adam learning rate.
    steps : int
        Step budget (full-batch gradient steps).
    warmup : float
        Linear warm-up fraction of ``steps`` (0: none).
    final : float
        Final learning rate as a fraction of ``lr`` (cosine decay); 1 keeps it
        constant after warm-up.
    stop_accuracy : float
        Stop as soon as this fraction of facts is recalled (1: all of them).
    temperature : float
        Logits are ``Z / (temperature * sqrt(d))`` (``Z`` the raw scores, of
        order :math:`\sqrt{d}\, \|W\|_F / \sqrt{d}` at initialisation).
    init_std : float
        Full-rank ``W`` starts with i.i.d. ``N(0, init_std^2 / d)`` entries
        (0: zeros).  Low-rank ``Q, R`` always start i.i.d. :math:`\mathcal{N}(0, 1)`.

    See Also
    --------
    validation.linear_memory.train.get_config : A preset's configuration with fields replaced.
    validation.linear_memory.train.train : Full-batch Adam run under these settings.

    %(ref_budget_study)s
    """

    lr: float
    steps: int
    warmup: float = 0.0
    final: float = 1.0
    stop_accuracy: float = 1.0
    temperature: float = 1.0
    init_std: float = 1.0


#: Named training configurations (``TrainConfig`` overrides), see the module notes.
PRESETS = {
    "paper": TrainConfig(lr=1e-2, steps=512, warmup=0.0, final=1.0, stop_accuracy=0.999),
    "default": TrainConfig(lr=0.1, steps=4096, warmup=0.0, final=1.0, stop_accuracy=1.0,
                           temperature=0.05),
}


@fill_doc
def get_config(preset="default", **overrides):
    """Return the :class:`TrainConfig` of ``preset`` with fields replaced by ``overrides``.

    Parameters
    ----------
    preset : str or TrainConfig
        ``"default"`` or ``"paper"`` (:data:`PRESETS`), or a configuration.
    **overrides
        Fields to replace; ``None`` values are ignored.

    Returns
    -------
    TrainConfig
        The checked configuration (``ValueError`` naming a field out of range).

    See Also
    --------
    validation.linear_memory.train.TrainConfig : Fields and valid ranges of a configuration.
    validation.linear_memory.train.train : The Adam loop that takes the configuration.

    %(ref_protocol)s

    Examples
    --------
    >>> get_config("paper", steps=100).steps
    100
    """
    if isinstance(preset, TrainConfig):
        cfg = preset
    elif preset in PRESETS:
        cfg = PRESETS[preset]
    else:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    overrides = {k: v for k, v in overrides.items() if v is not None}
    cfg = replace(cfg, **overrides)
    check_real("lr", cfg.lr, low=0, low_open=True, allow_array=False)
    check_int("steps", cfg.steps, low=1)
    check_real("warmup", cfg.warmup, low=0, high=1, high_open=True, allow_array=False)
    check_real("final", cfg.final, low=0, high=1, allow_array=False)
    check_real("stop_accuracy", cfg.stop_accuracy, low=0, high=1, low_open=True, allow_array=False)
    check_real("temperature", cfg.temperature, low=0, low_open=True, allow_array=False)
    check_real("init_std", cfg.init_std, low=0, allow_array=False)
    return cfg


@fill_doc
@dataclass(frozen=True)
class TrainResult(Result):
    """Outcome of :func:`train`, a frozen record with ``to_dict()``.

    Parameters
    ----------
    success : bool
        All ``p`` facts recalled by ``W``.
    accuracy : float
        Fraction recalled by ``W``.
    steps : int
        Gradient steps taken (0 for Hebbian).
    loss : float
        Last cross-entropy evaluated.
    W : ndarray (d, d)
        The returned memory.
    W0 : ndarray (d, d) or None
        The memory at initialisation (trained models).

    See Also
    --------
    validation.linear_memory.train.train : Full-batch Adam on the cross-entropy, which produces this record.

    %(ref_protocol)s
    """

    success: bool
    accuracy: float
    steps: int
    loss: float
    W: np.ndarray
    W0: np.ndarray | None = None


def train(facts, *, parametrization="full", kappa=1.0, preset="default", rng=None, **overrides):
    r"""Train a memory on ``facts`` by full-batch Adam on the cross-entropy.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set (its dtype is the training dtype, e.g. float32).
    parametrization : str or Parametrization
        How ``W`` is built from the trained parameters, the parametrisation
        of a registered memory model (:mod:`validation.linear_memory.registry`;
        not the model name: models ``"op"`` and ``"dp"`` both train
        ``"full"``): ``"full"`` (full-rank ``W``), ``"lowrank"``
        (:math:`W = Q R^T / \sqrt{d m}` with :math:`m = \kappa d`), ``"hebbian"`` (no
        training), or a :class:`~validation.linear_memory.registry.Parametrization`.
    kappa : float
        Rank ratio in (0, 1] (low-rank model only).
    preset : str or TrainConfig
        ``"default"`` or ``"paper"`` (see :data:`PRESETS`).
    rng : None, int or Generator
        Initialisation randomness.
    **overrides
        Fields of :class:`TrainConfig` to replace.

    Returns
    -------
    TrainResult
        Success (all facts recalled), accuracy, steps taken, last loss, the
        memory and its initial value.

    See Also
    --------
    validation.linear_memory.train.get_config : Resolve a named preset and its overrides.
    validation.linear_memory.train.train_past_recall : Keep training for a number of steps after full recall.

    Notes
    -----
    Learning rate at step ``t``: ``warmup_cosine(t, steps, lr, warmup, final)``.
    The recall flags of step ``t`` are those of the parameters *before* update
    ``t``, so a stop returns exactly the memory that recalled; after the last
    step the final memory is evaluated once more.  The parametrisation's
    ``init``, ``memory`` and ``grads`` (its declaration in
    :mod:`validation.linear_memory.registry`) are the only model-specific steps.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#training-objective
    """
    cfg = get_config(preset, **overrides)
    par = get_parametrization(parametrization)
    rng = check_rng(rng)
    if not par.trained:
        W = par.memory(facts)
        corr = recalled(scores(W, facts), facts.targets)
        return TrainResult(bool(corr.all()), float(corr.mean()), 0, float("nan"), W)
    d, p = facts.d, facts.p
    scale = 1.0 / (cfg.temperature * math.sqrt(d))
    need = math.ceil(cfg.stop_accuracy * p - 1e-9)
    params = par.init(facts, kappa, cfg, rng)
    W0 = par.memory(params).copy()

    def evaluate(t):
        Wt = par.memory(params)
        loss, dW, corr = xent_and_grad(Wt, facts, scale=scale)
        return loss, (par.grads(params, dW) if t < cfg.steps else None), (Wt, corr)

    r = adam_loop(params, evaluate, steps=cfg.steps,
                  lr=lambda t: warmup_cosine(t, cfg.steps, lr=cfg.lr, warmup=cfg.warmup, final=cfg.final),
                  stop=lambda t, loss, info: int(info[1].sum()) >= need)
    Wt, corr = r.info
    return TrainResult(bool(corr.all()), float(corr.mean()), r.steps, r.loss, Wt, W0)


@fill_doc
@dataclass(frozen=True)
class ContinuedTraining(Result):
    r"""Outcome of :func:`train_past_recall`.

    Parameters
    ----------
    W_first : ndarray (d, d) or None
        The memory at the first step where all facts are recalled (None if
        never within the budget).
    W_end : ndarray (d, d) or None
        The memory ``extra`` steps later (None if the continuation did not
        complete).
    first_step : int or None
        The step of the first full recall.
    trace : list
        ``[steps after first recall, normalised margin]`` at 0, ``extra // 4``,
        ``extra // 2`` and ``extra`` steps after it (as far as reached); the
        margin is the smallest correct-minus-largest-competitor score over
        facts divided by :math:`\|W\|_F`.

    See Also
    --------
    validation.linear_memory.train.train_past_recall : Training beyond the first full recall, which produces this record.

    %(ref_spectra_study)s
    """

    W_first: np.ndarray | None
    W_end: np.ndarray | None
    first_step: int | None
    trace: list


@fill_doc
def normalised_margin(W, facts):
    r"""Return the smallest margin :math:`\min_\mu (z_{\mu\mu} - \max_{\rho \neq \mu} z_{\mu\rho})` over :math:`\|W\|_F`.

    Parameters
    ----------
    %(W)s
    facts : Facts
        The fact set (cast to ``W``'s dtype by the caller if wanted).

    Returns
    -------
    float
        Positive iff every fact is recalled; invariant under :math:`W \to c W`.

    %(ref_spectra_study)s

    Examples
    --------
    >>> from validation.linear_memory.data import OPFacts
    >>> f = OPFacts(np.eye(2), np.eye(2))
    >>> round(normalised_margin(np.eye(2), f), 6)        # (1 - 0) / sqrt(2)
    0.707107
    """
    Z = scores(W, facts)
    idx = np.arange(facts.p)
    corr = Z[idx, idx].copy()
    Z[idx, idx] = -np.inf
    return float((corr - Z.max(axis=1)).min() / np.linalg.norm(W))


@fill_doc
def train_past_recall(facts, *, parametrization="full", kappa=1.0, extra, preset="default", rng=None,
                      **overrides):
    """Train as :func:`train` until the first full recall, then ``extra`` steps more.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set (its dtype is the training dtype).
    parametrization : str or Parametrization
        As in :func:`train` (``"full"``, ``"lowrank"``).
    kappa : float
        Rank ratio (low rank only).
    extra : int
        Steps to continue after the first step where all facts are recalled (>= 0).
    preset : str or TrainConfig
        Training preset; its ``steps`` is the budget for *reaching* full recall.
    rng : None, int or Generator
        Initialisation randomness.
    **overrides
        Fields of :class:`TrainConfig` to replace (``lr``, ``steps``, ``init_std``, ...).

    Returns
    -------
    ContinuedTraining
        The memories at first recall and ``extra`` steps later, the first
        recall step and the normalised margin along the continuation.

    See Also
    --------
    validation.linear_memory.train.train : The same loop, stopped at the first full recall.

    Notes
    -----
    The same Adam loop (:func:`validation.optim.adam_loop`) and learning-rate
    schedule as :func:`train` (past the preset's ``steps``: its final rate; the
    default preset's rate is constant), on a budget of ``steps + extra`` updates; the
    stop rule records the memory of the first step with every fact recalled
    (the parameters before that step's update, exactly what :func:`train`
    returns) and stops ``extra`` steps later, or at step ``steps`` without a
    full recall.  The stop accuracy of the preset is not used (full recall).

    %(ref_spectra_study)s
    """
    cfg = get_config(preset, **overrides)
    extra = check_int("extra", extra, low=0)
    par = get_parametrization(parametrization)
    if not par.trained:
        raise ValueError(f"parametrization must be a trained one, got {par.name!r}")
    rng = check_rng(rng)
    d = facts.d
    scale = 1.0 / (cfg.temperature * math.sqrt(d))
    params = par.init(facts, kappa, cfg, rng)
    f64 = facts.astype(np.float64)

    def lr(t):                       # the preset's schedule; past its budget, its final rate
        return warmup_cosine(min(t, cfg.steps), cfg.steps, lr=cfg.lr, warmup=cfg.warmup, final=cfg.final)

    marks = (0, extra // 4, extra // 2, extra)
    state = {"W_first": None, "t_first": None, "W_end": None, "trace": []}

    def evaluate(t):
        Wt = par.memory(params)
        loss, dW, corr = xent_and_grad(Wt, facts, scale=scale)
        return loss, par.grads(params, dW), (Wt, corr)

    def stop(t, loss, info):
        Wt, corr = info
        if state["t_first"] is None and corr.all():
            state["W_first"], state["t_first"] = Wt.copy(), t
        t1 = state["t_first"]
        if t1 is not None and (t - t1) in marks:
            state["trace"].append([t - t1, normalised_margin(Wt.astype(np.float64), f64)])
        if t1 is not None and t - t1 >= extra:
            state["W_end"] = Wt
            return True
        return t1 is None and t >= cfg.steps

    adam_loop(params, evaluate, steps=cfg.steps + extra, lr=lr, stop=stop, final=False)
    return ContinuedTraining(W_first=state["W_first"], W_end=state["W_end"], first_step=state["t_first"],
                             trace=state["trace"])
