"""Full-batch training of linear associative memories with Adam.

Two presets (:data:`PRESETS`):

* ``paper`` — the protocol of seed 002: Adam, lr ``1e-2``, at most 512 full-batch
  steps, stop as soon as 99.9% of the facts are recalled.
* ``default`` — chosen by the budget study of ``docs/linear_memory.md``
  (threshold against step budget until it stops moving): logits at inverse
  temperature ``1 / (0.05 sqrt(d))``, Adam lr ``0.1`` held constant
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

__all__ = ["TrainConfig", "PRESETS", "get_config", "TrainResult", "train"]


@dataclass(frozen=True)
class TrainConfig:
    """Optimiser settings of :func:`train`.

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
        order ``sqrt(d) ||W||_F / sqrt(d)`` at initialisation).
    init_std : float
        Full-rank ``W`` starts with i.i.d. ``N(0, init_std^2 / d)`` entries
        (0: zeros).  Low-rank ``Q, R`` always start i.i.d. ``N(0, 1)``.

    References
    ----------
    docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen
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

    References
    ----------
    docs/linear_memory.md#protocol

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

    References
    ----------
    docs/linear_memory.md#protocol
    """

    success: bool
    accuracy: float
    steps: int
    loss: float
    W: np.ndarray
    W0: np.ndarray | None = None


def train(facts, *, model="full", kappa=1.0, preset="default", rng=None, **overrides):
    """Train a memory on ``facts`` by full-batch Adam on the cross-entropy.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set (its dtype is the training dtype, e.g. float32).
    model : str or Parametrization
        A parametrisation of a registered memory model
        (:mod:`validation.linear_memory.registry`): ``"full"`` (full-rank
        ``W``), ``"lowrank"`` (``W = Q R^T / sqrt(d m)`` with ``m = kappa d``),
        ``"hebbian"`` (no training), or a :class:`~validation.linear_memory.registry.Parametrization`.
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
    par = get_parametrization(model)
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
