"""Trained full-rank memories under the tail-average margin (TAM) criterion.

:mod:`validation.linear_memory.exact_listwise` decides whether *some*
full-rank ``W`` meets the TAM condition of ``docs/listwise.md``; this module
asks whether full-batch Adam *finds* one, on the same instances (the facts of
:func:`~validation.linear_memory.exact_listwise.listwise_exact_trial` for the
same ``(model, d, n, seed)``).

**The surrogate.**  With the data scaled as the exact decision scales them
(inputs by ``1/sigma_e``, candidates by ``1/sigma_u``, so a competitor score
has standard deviation about ``|W|_F``), ``z_{mu rho} = v_{mu rho}^T W e_mu``
and ``T_k`` the tail mean of the ``k = max(tau (p - 1), 1)`` largest
competitor scores of fact ``mu``, the loss is the mean squared hinge

.. math::

    L(W) = \\frac1p \\sum_\\mu \\max\\bigl(0,\\ \\kappa + T_k(z_\\mu) - z_{\\mu\\mu}
           + \\gamma |W|_F\\bigr)^2,

convex in ``W`` (``T_k`` is a maximum of linear functions, ``|W|_F`` a norm,
the hinge of a convex function squared is convex).  The hinge offset
``kappa > 0`` fixes the scale of ``W`` (the TAM condition is invariant under
``W -> c W``); ``gamma`` is the margin in competitor-score units.  When the
instance is feasible with margin above ``gamma`` some ``W`` has ``L = 0``
(scale a strictly feasible memory up), so the minimum of the convex loss is
0; the run stops at the first step at which every fact meets the TAM
condition at margin ``gamma`` (success), or at the step budget (failure).  A
trained success is therefore a feasibility certificate, and the trained
threshold can only lie below the exact one (up to sampling), approaching it as
the budget grows.
"""
from __future__ import annotations

import math
import time

import numpy as np

from hcizz.checks import check_int, check_real
from validation.engine.trials import trial
from validation.optim import adam_loop

from ._docparams import fill_doc
from .exact_listwise import (_arrays, _scores, _sweep_args, _tail, _tail_k, _trial_facts, _weights,
                             listwise_capacity_from_records, verify_listwise_feasible)

__all__ = ["tam_loss_and_grad", "train_tam", "listwise_trained_trial", "trained_listwise_params",
           "measure_trained_listwise_capacity", "TRAIN_DEFAULTS"]

#: Defaults of :func:`train_tam` (Adam rate, step budget, hinge offset, init scale).
TRAIN_DEFAULTS = {"lr": 0.05, "steps": 4000, "kappa": 1.0, "init_std": 1.0}


def _scaled(facts):
    kind, E, U, C = _arrays(facts)
    se = math.sqrt(float(np.mean(E * E)))
    su = math.sqrt(float(np.mean(U * U)))
    if se == 0 or su == 0:
        raise ValueError("facts must have nonzero inputs and candidates")
    return kind, E / se, U / su, C / su


def _loss_grad(kind, E, U, C, W, k, kappa, margin):
    """Squared-hinge loss, gradient, per-fact margins ``g_mu / |W|`` on scaled data."""
    p = E.shape[0]
    Z = _scores(kind, E, U, C, W)
    g, idx = _tail(Z, k)                                    # g = z_mumu - T_k
    nw = float(np.linalg.norm(W))
    h = np.maximum(0.0, kappa - g + margin * nw)
    loss = float(np.mean(h * h))
    w = _weights(k)
    V = U[idx] if kind == "op" else U[np.arange(p)[:, None], idx]       # (p, K, d)
    D = np.einsum("k,mkd->md", w, V) - C                    # d(T_k - z_mumu)/d(W e_mu)
    G = (2.0 / p) * (D * h[:, None]).T @ E
    if margin and nw > 0:
        G += (2.0 / p) * float(h.sum()) * margin * W / nw
    return loss, G, (g / nw if nw > 0 else g * math.nan)


def tam_loss_and_grad(facts, W, *, tau, kappa=1.0, margin=0.0):
    """Return the squared-hinge TAM surrogate and its gradient at ``W``.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set, ``p >= 2``.
    W : array_like (d, d)
        Memory (acting on the scaled data, see the module notes).
    tau : float
        Tail fraction ``0 < tau <= 1``.
    kappa : float
        Hinge offset (> 0).
    margin : float
        Margin ``gamma >= 0`` in competitor-score units.

    Returns
    -------
    loss : float
        :math:`L(W)` of the module notes.
    grad : ndarray (d, d)
        Its gradient (a subgradient at ties of the tail).
    margins : ndarray (p,)
        ``(z_{mu mu} - T_k(z_mu)) / |W|_F`` on the scaled data: the margins of
        :func:`~validation.linear_memory.exact_listwise.listwise_margins`.

    See Also
    --------
    validation.linear_memory.train_listwise.train_tam : Adam on this loss.
    validation.linear_memory.exact_listwise.listwise_margins : The margins on the facts as given.

    References
    ----------
    listwise retrieval arXiv:2605.05189; docs/listwise.md#trained-memories

    Examples
    --------
    >>> from validation.linear_memory.data import make_dp
    >>> f = make_dp(6, 4, rng=0)
    >>> loss, G, g = tam_loss_and_grad(f, np.zeros((4, 4)), tau=0.5)
    >>> print(loss, G.shape)                     # every hinge is kappa = 1 at W = 0
    1.0 (4, 4)
    """
    kind, E, U, C = _scaled(facts)
    p, d = E.shape
    k = _tail_k("tam", tau, p)
    kappa = check_real("kappa", kappa, low=0, low_open=True, allow_array=False)
    margin = check_real("margin", margin, low=0, allow_array=False)
    W = np.asarray(W, np.float64)
    if W.shape != (d, d):
        raise ValueError(f"W must have shape {(d, d)}, got {W.shape}")
    return _loss_grad(kind, E, U, C, W, k, kappa, margin)


def train_tam(facts, *, tau, margin=0.0, lr=TRAIN_DEFAULTS["lr"], steps=TRAIN_DEFAULTS["steps"],
              kappa=TRAIN_DEFAULTS["kappa"], init_std=TRAIN_DEFAULTS["init_std"], rng=None, criterion="tam"):
    """Train a full-rank memory by full-batch Adam on the TAM surrogate; stop at the first TAM success.

    Parameters
    ----------
    facts : Facts
        OP or DP fact set, ``p >= 2``.
    tau : float or None
        Tail fraction ``0 < tau <= 1`` (None with ``criterion="top1"``).
    margin : float
        Margin ``gamma >= 0`` the memory must meet (strictly ``> 0`` at 0).
    lr : float
        Constant Adam learning rate (> 0).
    steps : int
        Step budget (>= 1).
    kappa : float
        Hinge offset (> 0).
    init_std : float
        ``W`` starts with i.i.d. ``N(0, init_std^2 / d)`` entries (0: zeros).
    rng : None, int or Generator
        Initialisation randomness.
    criterion : {"tam", "top1"}
        ``"top1"``: the tail is the single largest competitor (``k = 1``), so
        the condition is top-1 recall at margin ``gamma``.

    Returns
    -------
    dict
        ``success`` (every fact meets the condition), ``steps`` (updates
        applied), ``loss``, ``margin`` (smallest margin of the returned
        memory), ``fraction`` (facts meeting the condition), ``W`` (the
        memory for the facts as given: the scaling is undone, so
        ``listwise_margins(facts, W)`` are its margins).

    See Also
    --------
    validation.linear_memory.train_listwise.tam_loss_and_grad : The loss trained.
    validation.linear_memory.exact_listwise.listwise_feasibility : Whether any memory meets the condition.

    Notes
    -----
    The loop is :func:`validation.optim.adam_loop`; the stop rule reads the
    margins of the parameters *before* update ``t``, so a stop returns the
    memory that met the condition.

    References
    ----------
    D. P. Kingma and J. Ba, arXiv:1412.6980; arXiv:2605.05189; docs/listwise.md#trained-memories

    Examples
    --------
    >>> from validation.linear_memory.data import make_dp
    >>> r = train_tam(make_dp(20, 8, rng=0), tau=0.2, rng=0)
    >>> r["success"], r["margin"] > 0
    (True, True)
    """
    from hcizz.checks import check_rng

    kind, E, U, C = _scaled(facts)
    p, d = E.shape
    k = _tail_k(criterion, tau, p)
    margin = check_real("margin", margin, low=0, allow_array=False)
    lr = check_real("lr", lr, low=0, low_open=True, allow_array=False)
    steps = check_int("steps", steps, low=1)
    kappa = check_real("kappa", kappa, low=0, low_open=True, allow_array=False)
    init_std = check_real("init_std", init_std, low=0, allow_array=False)
    rng = check_rng(rng)
    W = rng.standard_normal((d, d)) * (init_std / math.sqrt(d)) if init_std > 0 else np.zeros((d, d))

    def evaluate(t):
        loss, G, g = _loss_grad(kind, E, U, C, W, k, kappa, margin)
        return loss, [G], g

    def met(g):
        return bool(np.all(g > 0)) if margin == 0 else bool(np.all(g >= margin))

    r = adam_loop([W], evaluate, steps=steps, lr=lr, stop=lambda t, loss, g: met(g))
    g = r.info
    se = math.sqrt(float(np.mean(np.asarray(facts.E, np.float64) ** 2)))
    su = math.sqrt(float(np.mean(np.asarray(facts.U, np.float64) ** 2)))
    ok = bool(np.all(np.isfinite(g))) and met(g)
    return {"success": ok, "steps": int(r.steps), "loss": float(r.loss),
            "margin": float(np.min(g)) if np.all(np.isfinite(g)) else -math.inf,
            "fraction": float(np.mean(g > 0 if margin == 0 else g >= margin)), "W": W / (se * su)}


@trial("linear_memory.listwise_trained")
def listwise_trained_trial(params):
    """One trained TAM run (module level, for the sweep engine).

    Parameters
    ----------
    params : dict
        ``model`` ("op"/"dp"), ``d``, ``n`` (facts), ``tau``, ``margin``,
        ``seed``; optional ``criterion`` (default ``"tam"``; ``"top1"`` with
        ``tau`` None), ``lr``, ``steps``, ``kappa``, ``init_std`` (defaults
        :data:`TRAIN_DEFAULTS`).  The facts are those of
        :func:`~validation.linear_memory.exact_listwise.listwise_exact_trial`
        for the same ``(model, d, n, seed)``; the initialisation is drawn from
        the second generator of :func:`validation.linear_memory.data.trial_rngs`.

    Returns
    -------
    dict
        ``p``, ``load_quadratic`` (``p / d^2``), ``success``, ``steps``,
        ``loss``, ``margin``, ``fraction``, ``verified`` (a success passes
        :func:`~validation.linear_memory.exact_listwise.verify_listwise_feasible`
        on the facts as given; None for a failure), ``cpu_seconds``.

    See Also
    --------
    validation.linear_memory.train_listwise.train_tam : The run.
    validation.linear_memory.exact_listwise.listwise_exact_trial : The exact decision on the same facts.

    References
    ----------
    docs/listwise.md#trained-memories
    """
    from .data import trial_rngs

    c0 = time.process_time()
    d, p, facts = _trial_facts(params)
    _, rinit = trial_rngs(params["seed"], d, p)
    margin = params.get("margin", 0.0)
    criterion = params.get("criterion", "tam")
    kw = {key: params.get(key, v) for key, v in TRAIN_DEFAULTS.items()}
    r = train_tam(facts, tau=params["tau"], margin=margin, rng=rinit, criterion=criterion, **kw)
    W = r.pop("W")
    verified = None
    if r["success"]:
        verified = verify_listwise_feasible(facts, W, criterion=criterion, tau=params["tau"], margin=margin)["ok"]
    r.update(p=p, load_quadratic=p / d**2, verified=verified, cpu_seconds=time.process_time() - c0)
    return r


def trained_listwise_params(model, d, ns, seeds, *, criterion="tam", tau=None, margin=0.0,
                            lr=TRAIN_DEFAULTS["lr"], steps=TRAIN_DEFAULTS["steps"]):
    """Return the parameter records (one per ``n`` and seed) of :func:`listwise_trained_trial`.

    Parameters
    ----------
    model : {"op", "dp"}
        Fact model.
    d : int
        Dimension.
    ns : sequence of int
        Numbers of facts.
    seeds : sequence of int
        Seeds.
    criterion : {"tam", "top1"}
        Criterion.
    tau : float or None
        Tail fraction (``tam``; None for ``top1``).
    margin : float
        Margin.
    lr : float
        Adam learning rate.
    steps : int
        Step budget.

    Returns
    -------
    list of dict
        The records; TAM records carry no ``criterion`` key, so they are the
        records of the study ``linear_memory.listwise_trained`` and a store
        seeded from its committed one reuses them.

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_params : The exact decisions' records of the same instances.

    References
    ----------
    docs/listwise.md#trained-memories
    """
    extra = {} if criterion == "tam" else {"criterion": criterion}
    return [{"model": model, "d": int(d), "n": int(n), "tau": None if tau is None else float(tau),
             "margin": float(margin), "seed": int(s), "lr": float(lr), "steps": int(steps), **extra}
            for n in ns for s in seeds]


@fill_doc
def measure_trained_listwise_capacity(model, d, *, criterion="tam", tau=None, margin=0.0, seeds=4, ns=None,
                                      n_loads=7, rel=0.25, seed0=0, lr=None, steps=None, store=None,
                                      workers=None, executor="processes", progress=True, runner=None,
                                      theory=None):
    r"""Measure the load up to which Adam finds a memory, for one criterion at one ``d``.

    The instances are those of
    :func:`~validation.linear_memory.exact_listwise.measure_listwise_capacity`
    with the same arguments (same ``(model, d, n, seed)``), so the trained
    threshold can be set next to the exact one; each run is
    :func:`listwise_trained_trial` and each success is verified independently.

    Parameters
    ----------
    model : {"op", "dp"}
        Fact model.
    d : int
        Dimension (>= 2).
    criterion : {"top1", "tam"}
        Criterion (``top1`` trains the same surrogate with a tail of one).
    %(listwise_grid)s
    lr : float, optional
        Adam learning rate (default ``TRAIN_DEFAULTS["lr"]``).
    steps : int, optional
        Step budget (default ``TRAIN_DEFAULTS["steps"]``).
    %(sweep_args)s
    runner : callable, optional
        ``runner(params) -> records``; then ``store``, ``workers``,
        ``executor``, ``progress`` are not used.
    theory : dict, optional
        A precomputed :func:`~validation.linear_memory.exact_listwise.listwise_prediction`.

    Returns
    -------
    ListwiseCapacity
        The trained threshold (``method="train"``) and its prediction.

    Raises
    ------
    ValueError
        Any argument out of range (checked before any run).

    See Also
    --------
    validation.linear_memory.exact_listwise.measure_listwise_capacity : Exact decisions on the same instances.
    validation.linear_memory.train_listwise.train_tam : One run.

    References
    ----------
    docs/listwise.md#trained-memories

    Examples
    --------
    >>> res = measure_trained_listwise_capacity("dp", 6, tau=0.5, seeds=2, executor="inprocess",
    ...                                         progress=False)
    >>> res.method, res.trials == 2 * len(res.counts), res.unverified
    ('train', True, 0)
    """
    d, margin, seeds, ns, theory = _sweep_args(model, d, criterion, tau, margin, seeds, ns, n_loads, rel, theory)
    lr = TRAIN_DEFAULTS["lr"] if lr is None else check_real("lr", lr, low=0, low_open=True, allow_array=False)
    steps = TRAIN_DEFAULTS["steps"] if steps is None else check_int("steps", steps, low=1)
    params = trained_listwise_params(model, d, ns, range(seed0, seed0 + seeds), criterion=criterion, tau=tau,
                                     margin=margin, lr=lr, steps=steps)
    if runner is None:
        from validation.engine import run_sweep

        recs = run_sweep(listwise_trained_trial, params, store=store, workers=workers, executor=executor,
                         progress=progress, label=f"listwise trained {criterion} {model} d={d}")
    else:
        recs = runner(params)
    return listwise_capacity_from_records(model, d, criterion, tau, margin, recs, theory, method="train")
