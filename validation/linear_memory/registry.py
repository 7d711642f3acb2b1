r"""Memory models, each declared once.

A *memory model* of the capacity experiments is one :class:`MemoryModel`
record in :data:`MEMORY_MODELS`: its name (the ``--model`` choice of
``python -m validation capacity`` and the ``model`` of a trial record), the
fact set it stores (OP or DP), its :class:`Parametrization` (how ``W`` is
built from trainable parameters, their initialisation and the chain rule),
the theory prediction it is compared with, and the defaults of its load grid.
Training (:func:`validation.linear_memory.train.train`), trials and the
threshold measurement (:mod:`validation.linear_memory.capacity`), the theory
(:func:`validation.linear_memory.registry.prediction`) and the CLI's choices and
help are all derived from this table, so adding a model is one
:func:`register_model` call.

Built-in models (docs/linear_memory.md#model):

* ``op``, ``dp``: full-rank ``W`` (parametrisation ``full``) on OP or DP facts;
* ``lowrank``: :math:`W = Q R^T / \sqrt{d m}`, :math:`m = \kappa d` (parametrisation
  ``lowrank``, OP facts);
* ``hebbian``: :math:`W_H = \sum_\mu u_\mu e_\mu^T` (parametrisation ``hebbian``, no
  training, OP facts).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ._docparams import fill_doc
from .data import FACT_TYPES

__all__ = ["Parametrization", "MemoryModel", "MEMORY_MODELS",
           "register_model", "unregister_model", "get_model", "get_parametrization",
           "model_names", "prediction"]


@dataclass(frozen=True)
class Parametrization:
    r"""How a memory ``W`` (d, d) is built from its parameters.

    Parameters
    ----------
    name : str
        Name accepted by ``train(model=...)`` (e.g. ``"full"``).
    init : callable or None
        ``init(facts, kappa, cfg, rng) -> list of ndarray``: the trainable
        parameters at initialisation (``cfg`` a
        :class:`~validation.linear_memory.train.TrainConfig`, ``rng`` a
        ``Generator``).  ``None`` for a rule without training.
    memory : callable
        ``memory(params) -> W``; for a rule without training
        ``memory(facts) -> W``.
    grads : callable or None
        ``grads(params, dW) -> list of ndarray``: the chain rule from
        ``dloss/dW`` to the gradients of the parameters (same order as
        ``params``).  ``None`` for a rule without training.
    description : str
        One line for the documentation.

    See Also
    --------
    validation.linear_memory.registry.get_parametrization : Fetch a registered parametrisation by name.
    validation.linear_memory.registry.MemoryModel : A model declaration, which names its parametrisation.

    Notes
    -----
    Training minimises the cross-entropy of the scores :math:`u_\rho^T W e_\mu`
    (:func:`validation.linear_memory.models.xent_and_grad` gives ``dW``);
    ``grads`` only composes that gradient with ``dW/dparams``.  The
    parameters are updated in place by Adam, so ``memory`` must be read
    again after every step.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#model
    """

    name: str
    init: Optional[Callable]
    memory: Callable
    grads: Optional[Callable]
    description: str = ""

    @property
    def trained(self):
        """Whether the memory is trained (``False`` for a closed-form rule such as Hebbian).

        Returns
        -------
        bool
            ``True`` when ``init`` is given.
        """
        return self.init is not None


@dataclass(frozen=True)
class MemoryModel:
    """One memory model of the capacity experiments, declared once.

    Parameters
    ----------
    name : str
        The model's name: ``--model`` choice of ``python -m validation
        capacity``, ``model`` of trial records and of
        :func:`~validation.linear_memory.capacity.measure_capacity`.
    facts : {"op", "dp"}
        The fact set it stores.
    parametrization : Parametrization
        How ``W`` is built and trained.
    theory : callable
        ``theory(d, kappa) -> dict`` with at least ``value``, ``stderr`` and
        ``name`` (the prediction of the capacity threshold compared with
        the measurement; see
        :func:`validation.linear_memory.registry.prediction`).
    help : str
        One line for the CLI help.
    needs_kappa : bool
        The model takes a rank ratio ``kappa`` in (0, 1] (recorded in its
        trials).
    exact : bool
        ``method="exact"`` (certified existence of a full-rank memory) applies.
    grid : tuple of (int, float)
        Default automatic load grid ``(n_loads, rel)``: ``n_loads`` loads in
        ``center * [1 - rel, 1 + rel]``.
    grid_center : callable or None
        ``grid_center(d, kappa, theory) -> float``, where the automatic grid
        is centred (a placement heuristic); ``None``: ``theory["value"]``.

    See Also
    --------
    validation.linear_memory.registry.register_model : Make a declared model available by name.
    validation.linear_memory.registry.get_model : Fetch a registered declaration by name.

    Notes
    -----
    The record is frozen; registering a model under an existing name
    replaces nothing (it raises), so a declaration cannot be changed behind
    the back of a running sweep.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#model

    Examples
    --------
    >>> m = get_model("lowrank")
    >>> m.facts, m.parametrization.name, m.needs_kappa
    ('op', 'lowrank', True)
    """

    name: str
    facts: str
    parametrization: Parametrization
    theory: Callable
    help: str = ""
    needs_kappa: bool = False
    exact: bool = False
    grid: tuple = (7, 0.3)
    grid_center: Optional[Callable] = None

    def center(self, d, kappa=None, theory=None):
        """Centre of the automatic load grid.

        Parameters
        ----------
        d : int
            Dimension.
        kappa : float, optional
            Rank ratio (models with ``needs_kappa``).
        theory : dict, optional
            The model's prediction at ``(d, kappa)`` if already computed.

        Returns
        -------
        float
            ``grid_center(d, kappa, theory)``, by default the predicted threshold.
        """
        th = theory if theory is not None else self.theory(d, kappa)
        if self.grid_center is None:
            return th["value"]
        return self.grid_center(d, kappa, th)


#: The registered memory models, by name (insertion order is the CLI's order).
MEMORY_MODELS: dict = {}


def register_model(model):
    """Add a memory model to :data:`MEMORY_MODELS`.

    Parameters
    ----------
    model : MemoryModel
        The declaration; its ``name`` must be new, and a parametrisation name
        already in use must refer to the same :class:`Parametrization`.

    Returns
    -------
    MemoryModel
        ``model`` (so the call can be used as an expression).

    See Also
    --------
    validation.linear_memory.registry.unregister_model : Undo a registration (toy models of tests).
    validation.linear_memory.registry.model_names : Names of all registered models.

    References
    ----------
    docs/architecture.md#where-to-add
    """
    if not isinstance(model, MemoryModel):
        raise ValueError(f"model must be a MemoryModel, got {type(model).__name__}")
    if model.name in MEMORY_MODELS:
        raise ValueError(f"model name must be new, {model.name!r} is already registered")
    if model.facts not in FACT_TYPES:
        raise ValueError(f"facts must be one of {', '.join(map(repr, FACT_TYPES))}, got {model.facts!r}")
    known = {m.parametrization.name: m.parametrization
             for m in MEMORY_MODELS.values()}.get(model.parametrization.name)
    if known is not None and known is not model.parametrization:
        raise ValueError(f"parametrization name {model.parametrization.name!r} is already used "
                         "by a different Parametrization")
    MEMORY_MODELS[model.name] = model
    return model


def unregister_model(name):
    """Remove a memory model from :data:`MEMORY_MODELS` (e.g. a test's toy model).

    Parameters
    ----------
    name : str
        A registered name.

    Returns
    -------
    MemoryModel
        The removed declaration.

    See Also
    --------
    validation.linear_memory.registry.register_model : Register a declared model under its name.

    References
    ----------
    docs/architecture.md#where-to-add
    """
    get_model(name)
    return MEMORY_MODELS.pop(name)


@fill_doc
def get_model(name):
    """The declaration of a registered memory model.

    Parameters
    ----------
    name : str or MemoryModel
        A registered name (a ``MemoryModel`` is returned as is).

    Returns
    -------
    MemoryModel
        The declaration.

    See Also
    --------
    validation.linear_memory.registry.model_names : Every name this lookup accepts.
    validation.linear_memory.registry.prediction : Evaluate the theory of the declaration.

    %(ref_model)s

    Examples
    --------
    >>> get_model("dp").parametrization.name
    'full'
    """
    if isinstance(name, MemoryModel):
        return name
    try:
        return MEMORY_MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(f"model must be one of {model_names()}, got {name!r}") from None


@fill_doc
def model_names():
    """Return the names of the registered memory models.

    Returns
    -------
    tuple of str
        In registration order (``("op", "dp", "lowrank", "hebbian")`` plus any
        added model).

    See Also
    --------
    validation.linear_memory.registry.get_model : Look a declaration up by one of these names.

    %(ref_model)s
    """
    return tuple(MEMORY_MODELS)


@fill_doc
def get_parametrization(name):
    """A parametrisation of a registered model, by name.

    Parameters
    ----------
    name : str or Parametrization
        ``"full"``, ``"lowrank"``, ``"hebbian"`` or the parametrisation name of
        another registered model (a ``Parametrization`` is returned as is).

    Returns
    -------
    Parametrization
        The parametrisation.

    See Also
    --------
    validation.linear_memory.registry.Parametrization : How the parameters of a memory build ``W``.

    %(ref_model)s

    Examples
    --------
    >>> get_parametrization("lowrank").trained
    True
    """
    if isinstance(name, Parametrization):
        return name
    known = {m.parametrization.name: m.parametrization for m in MEMORY_MODELS.values()}
    try:
        return known[name]
    except (KeyError, TypeError):
        raise ValueError(f"model must be one of {sorted(known)} (a parametrization), got {name!r}") from None


# ---------------------------------------------------------------------------
# the built-in models

def _full_init(facts, kappa, cfg, rng):
    d, dtype = facts.d, facts.E.dtype
    if cfg.init_std > 0:
        W = rng.standard_normal((d, d), dtype=dtype.type) * dtype.type(cfg.init_std / math.sqrt(d))
    else:
        W = np.zeros((d, d), dtype=dtype)
    return [W]


def _lowrank_init(facts, kappa, cfg, rng):
    from .models import init_lowrank

    return list(init_lowrank(facts.d, kappa, rng=rng, dtype=facts.E.dtype))


def _lowrank_memory(params):
    from .models import lowrank_W

    return lowrank_W(*params)


def _lowrank_grads(params, dW):
    from .models import lowrank_grads

    return list(lowrank_grads(params[0], params[1], dW))


def _hebbian_memory(facts):
    from .models import hebbian_W

    return hebbian_W(facts)


FULL = Parametrization("full", init=_full_init, memory=lambda params: params[0],
                       grads=lambda params, dW: [dW],
                       description="full-rank W, i.i.d. N(0, init_std^2/d) at initialisation")
LOWRANK = Parametrization("lowrank", init=_lowrank_init, memory=_lowrank_memory, grads=_lowrank_grads,
                          description="W = Q R^T / sqrt(d m), m = kappa d, Q and R i.i.d. N(0, 1)")
HEBBIAN = Parametrization("hebbian", init=None, memory=_hebbian_memory, grads=None,
                          description="Hebbian rule W_H = sum_mu u_mu e_mu^T (no training)")


def _full_rank_theory(d, kappa=None):
    from .theory import full_rank_threshold

    e = full_rank_threshold(d)
    return {"half": 0.5, "value": e.value, "stderr": e.stderr, "p": e.info["p"],
            "name": "alpha_c_finite(p), self-consistent at d"}


def _lowrank_theory(d, kappa):
    from .models import lowrank_m
    from .theory import lowrank_threshold

    k_eff = lowrank_m(d, kappa) / d
    return {"half": 0.5, "value": lowrank_threshold(k_eff), "stderr": 0.0, "kappa_eff": k_eff,
            "name": "alpha_c(m/d)"}


def _hebbian_theory(d, kappa=None):
    from replica import hebbian_threshold

    # OP data: the conditional model of replica.hebbian (its default) with problem="op"
    return {"half": 0.5, "value": float(hebbian_threshold(d, problem="op")), "stderr": 0.0,
            "name": "conditional Hebbian model, P(all recalled)=1/2",
            "plain_model": float(hebbian_threshold(d, model="theory", problem="op"))}


def _lowrank_center(d, kappa, theory):
    # alpha_c(kappa) is a large-d number; at laptop sizes full-rank thresholds sit ~1.8x
    # above their large-d limit 1/2, so scale by the full-rank finite-size factor
    return theory["value"] * _full_rank_theory(d)["value"] / 0.5


register_model(MemoryModel("op", "op", FULL, _full_rank_theory, help="full-rank W on OP facts",
                           exact=True))
register_model(MemoryModel("dp", "dp", FULL, _full_rank_theory, help="full-rank W on DP facts",
                           exact=True))
register_model(MemoryModel("lowrank", "op", LOWRANK, _lowrank_theory,
                           help="low-rank Q R^T/sqrt(dm) on OP facts (needs --kappa)",
                           needs_kappa=True, grid_center=_lowrank_center))
register_model(MemoryModel("hebbian", "op", HEBBIAN, _hebbian_theory,
                           help="Hebbian sum u e^T on OP facts (no training)", grid=(9, 0.7)))


def prediction(model, d, kappa=None):
    r"""Compute the matching prediction for a capacity measurement of a registered model.

    Parameters
    ----------
    model : str
        A registered memory model (:func:`validation.linear_memory.registry.model_names`:
        ``"op"``, ``"dp"``, ``"lowrank"``, ``"hebbian"``, ...).
    d : int
        Dimension.
    kappa : float, optional
        Rank ratio (low rank only); the prediction uses the actual :math:`m / d`.

    Returns
    -------
    dict
        The model's declared ``theory(d, kappa)``: ``value``, ``stderr`` and
        ``name`` of the prediction, plus ``half`` = 1/2 (the large-``d``
        full-rank limit) for reference.  Full rank also ``p`` (the number of
        facts at the fixed point, :func:`validation.linear_memory.theory.full_rank_threshold`); low rank
        ``kappa_eff`` (the actual :math:`m / d`, :func:`validation.linear_memory.theory.lowrank_threshold`);
        Hebbian ``plain_model`` (the independent-Gaussian model's threshold,
        :func:`replica.hebbian_threshold`).  The keys depend on the model,
        so this is a plain ``dict``.

    See Also
    --------
    validation.linear_memory.registry.get_model : The declaration whose theory is evaluated.
    validation.linear_memory.capacity.measure_capacity : The empirical threshold the prediction accompanies.

    Notes
    -----
    Full rank: the fixed point ``alpha* = alpha_c_finite(p(alpha*))`` with
    :math:`p \ln p = \alpha d^2`; low rank: :math:`\alpha_c(m/d)`; Hebbian: the load
    where the conditional finite-size model gives :math:`P(\mathrm{all\ recalled}) = 1/2`.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#model;
    docs/theory_full_rank.md#hebbian-rule

    Examples
    --------
    >>> round(prediction("lowrank", 20, 0.5)["kappa_eff"], 2)
    0.5
    """
    return get_model(model).theory(d, kappa)
