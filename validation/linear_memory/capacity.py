r"""Empirical capacity: trials, load grids and the logistic threshold fit.

One *trial* draws a fact set at load ``alpha`` (:math:`p \ln p = \alpha d^2`, ``p``
rounded to an integer, the actual load recorded), trains (or builds the
Hebbian memory) and records success = exact recall of all ``p`` facts.
The empirical capacity is the load where the success probability crosses
1/2, from a logistic fit over a grid of loads and seeds
(:func:`validation.logistic.fit_threshold`).
"""
from __future__ import annotations

from dataclasses import dataclass

import time

import numpy as np

from hcizz.checks import check_int, check_real
from validation.logistic import fit_threshold, success_counts
from replica.load import p_from_load, load_of
from .data import make_facts, trial_rngs, DEFAULT_MAX_BYTES
from .train import train
from .registry import MEMORY_MODELS, get_model
from hcizz.results import Result, optional
from validation.engine.trials import trial
from ._docparams import fill_doc

__all__ = ["capacity_trial", "trial_params", "load_grid", "extension_loads", "grid_center", "measure_capacity",
           "CapacityMeasurement", "adaptive_settings", "budget_thresholds", "BudgetThreshold",
           "ThresholdEstimate", "ThresholdRecord", "MAX_D", "MAX_TRAINED_D", "MAX_SEEDS", "MAX_LOAD"]

#: Largest dimension the trained linear-memory studies accept (their plans stop at d = 150;
#: the memory of a trial grows like p d ~ d^3 / ln d and its training time faster).
MAX_TRAINED_D = 400
#: Largest dimension :func:`measure_capacity` accepts (its weights alone, 2 d^2 floats, take 8 TB at 1e6).
MAX_D = 10**6
#: Most trials per load one measurement or study may ask for.
MAX_SEEDS = 10_000
#: Largest load p ln p / d^2 accepted (every capacity is below 1; the bound keeps p finite).
MAX_LOAD = 1e6


@fill_doc
@trial("linear_memory.capacity", aliases=("validation.linear_memory.capacity:capacity_trial",))
def capacity_trial(params):
    r"""One capacity trial (module-level, for :func:`validation.engine.run_sweep`).

    Parameters
    ----------
    params : dict
        ``model`` in {"op", "dp", "lowrank", "hebbian"}, ``d``, ``alpha``
        (target load), ``seed``; optional ``kappa`` (low-rank), ``preset``
        ("default"/"paper"), ``dtype`` ("float32"/"float64"), ``max_bytes``
        (DP limit) and :class:`~validation.linear_memory.train.TrainConfig`
        overrides ``lr``, ``steps``, ``temperature``, ``init_std``,
        ``warmup``, ``final``, ``stop_accuracy``.

    Returns
    -------
    dict
        ``p``, ``load`` (actual :math:`p \ln p / d^2`), ``success`` (bool),
        ``accuracy``, ``steps`` (steps taken; with a constant learning rate
        a success within ``steps`` is also a success for every larger
        budget), ``loss``, ``seconds`` (wall) and ``cpu_seconds`` (process
        CPU time: the cost on an unloaded core).  A plain dict: it is an
        engine store record.

    See Also
    --------
    validation.linear_memory.capacity.trial_params : One parameter record per load and seed.
    validation.linear_memory.capacity.measure_capacity : Sweep of these trials and a logistic fit.

    Notes
    -----
    The model's declaration (:func:`validation.linear_memory.registry.get_model`)
    gives the fact set and the parametrisation trained.

    %(ref_protocol)s
    """
    model = params["model"]
    decl = get_model(model)
    d = int(params["d"])                           # checked by measure_capacity / the study plans
    p = p_from_load(params["alpha"], d)
    seed = params["seed"]
    kind = decl.facts
    dtype = np.dtype(params.get("dtype", "float32"))
    _check_capacity_memory(model, d, p, dtype)     # before anything is allocated
    rf, ri = trial_rngs(seed, d, p)
    t0, c0 = time.perf_counter(), time.process_time()
    facts = make_facts(kind, p, d, rng=rf, dtype=dtype,
                       max_bytes=params.get("max_bytes", DEFAULT_MAX_BYTES))
    over = {k: params[k] for k in ("lr", "steps", "temperature", "init_std", "warmup",
                                   "final", "stop_accuracy") if k in params}
    res = train(facts, parametrization=decl.parametrization,
                kappa=params.get("kappa", 1.0), preset=params.get("preset", "default"),
                rng=ri, **over)
    return {"p": p, "load": float(load_of(p, d)), "success": bool(res.success),
            "accuracy": res.accuracy, "steps": int(res.steps), "loss": float(res.loss),
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}


def _check_capacity_memory(model, d, p, dtype):
    r"""``ValueError`` naming the sizes if one trial's facts, weights and scores
    (:math:`2 p d + 2 d^2 + p^2` floats: keys, values, ``W`` and its gradient, the
    :math:`p \times p` score matrix of recall) cannot fit."""
    from validation._memory import check_memory

    item = np.dtype(dtype).itemsize
    check_memory(item * (2.0 * p * d + 2.0 * d * d + float(p) * p),
                 f"capacity --model {model} d={d} p={p} (largest load; facts 2 p d + weights "
                 f"2 d^2 + scores p^2 in {np.dtype(dtype).name})")


def _check_candidates(model, d, p, where):
    """``ValueError`` naming p and d if the candidate tensor of the model's facts exceeds the per-worker cap."""
    from .data import fact_type

    ft = fact_type(get_model(model).facts)
    need = ft.candidate_nbytes(p, d)
    if need > DEFAULT_MAX_BYTES:
        raise ValueError(f"p={p}, d={d}: the {ft.kind.upper()} candidate tensor {where} needs "
                         f"{need / 2**30:.2f} GiB per worker > {DEFAULT_MAX_BYTES / 2**30:.0f} GiB; "
                         "use a smaller d or smaller loads (alphas)")


@fill_doc
def load_grid(center, *, n=7, rel=0.25, d=None):
    """Build the load grid ``center * linspace(1 - rel, 1 + rel, n)``.

    Parameters
    ----------
    center : float
        Centre (> 0).
    n : int
        Number of loads.
    rel : float
        Relative half-width in [0, 1).
    d : int, optional
        With ``d`` given, loads mapping to the same integer ``p`` are merged
        and the loads are those of the integer ``p`` (sorted, unique).

    Returns
    -------
    list of float
        The loads.

    See Also
    --------
    validation.linear_memory.capacity.grid_center : Centre of the default grid for a model.
    validation.linear_memory.capacity.extension_loads : More loads where the crossing lies outside the grid.

    %(ref_protocol)s

    Examples
    --------
    >>> load_grid(1.0, n=3, rel=0.5)
    [0.5, 1.0, 1.5]
    """
    center = check_real("center", center, low=0, low_open=True, allow_array=False)
    n = check_int("n", n, low=1)
    rel = check_real("rel", rel, low=0, high=1, high_open=True, allow_array=False)
    grid = center * np.linspace(1 - rel, 1 + rel, n) if n > 1 else np.array([center])
    if d is None:
        return [float(a) for a in grid]
    ps = sorted({p_from_load(a, d) for a in grid})
    return [float(load_of(p, d)) for p in ps]


@fill_doc
def trial_params(model, d, loads, seeds, *, kappa=None, preset="default", **extra):
    """List the parameter records (one per load and seed) for :func:`capacity_trial`.

    Parameters
    ----------
    %(model)s
    d : int
        Dimension.
    loads : sequence of float
        Target loads.
    seeds : iterable of int
        Seeds.
    kappa : float, optional
        Rank ratio, recorded only for models that take one (``needs_kappa``).
    preset : str
        Training preset.
    **extra
        More fields (training overrides); ``None`` values are left out.

    Returns
    -------
    list of dict
        Trial parameters (their keys are the trial's identity in a store).

    See Also
    --------
    validation.linear_memory.capacity.capacity_trial : Consumer of these parameter records.
    validation.linear_memory.capacity.load_grid : Loads spread evenly around a centre.

    %(ref_protocol)s
    """
    out = []
    for a in loads:
        for s in seeds:
            rec = {"model": model, "d": int(d), "alpha": float(a), "seed": int(s),
                   "preset": preset}
            if get_model(model).needs_kappa:
                rec["kappa"] = float(kappa)
            rec.update({k: v for k, v in extra.items() if v is not None})
            out.append(rec)
    return out


def extension_loads(loads, results, d, *, min_step=0.0):
    """Two more loads beyond each end of the grid where the crossing is not bracketed.

    Parameters
    ----------
    loads : sorted sequence of float
        The current grid of loads.
    results : list of dict
        Trial results with ``load`` and ``success``.
    d : int
        Dimension (new loads are rounded to loads of integer ``p``).
    min_step : float
        With a single load, the step is ``min_step * loads[-1]``.

    Returns
    -------
    list of float
        New loads, sorted, none already in ``loads``: two above the grid while the
        success rate at its largest load is >= 1/2, two below while the rate at its
        smallest load is < 1/2 (spaced by the grid's mean step).

    See Also
    --------
    validation.linear_memory.capacity.load_grid : The evenly spaced first grid being extended.

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold
    """
    counts = success_counts([r["load"] for r in results], [r["success"] for r in results])
    step = (loads[-1] - loads[0]) / max(1, len(loads) - 1) or min_step * loads[-1]
    new = []
    if counts[-1][1] * 2 >= counts[-1][2]:
        new += [loads[-1] + step, loads[-1] + 2 * step]
    if counts[0][1] * 2 < counts[0][2]:
        new += [max(loads[0] - k * step, 1e-3) for k in (1, 2)]
    return sorted({float(load_of(p_from_load(a, d), d)) for a in new} - set(loads))


@dataclass(frozen=True, kw_only=True)
class CapacityMeasurement(Result):
    """Result of :func:`measure_capacity`: a frozen record with ``to_dict()``.

    Readable by attribute (``res.threshold``) and, for callers written for
    the earlier plain dict, as a read-only mapping (``res["threshold"]``);
    :func:`hcizz.jsonout.to_json_value` writes ``to_dict()``.

    Parameters
    ----------
    method : {"train", "exact"}
        What a success means (trained recall, or existence of a memory).
    certificates : dict, optional
        Exact method only: :func:`validation.linear_memory.exact.certificate_summary`.
    seconds_per_instance : float, optional
        Exact method only: the certificates' time per decided instance.
    model : str
        The registered memory model.
    d : int
        Dimension.
    kappa : float or None
        Rank ratio (models that take one).
    preset : str
        Training preset.
    threshold, ci_low, ci_high, width : float
        The logistic fit (:class:`validation.logistic.ThresholdFit`): load where the success rate
        crosses 1/2, its profile-likelihood 95% interval and the width.
    counts : list
        ``[load, successes, trials]`` rows.
    theory : dict
        The model's prediction (:func:`validation.linear_memory.registry.prediction`).
    trials : int
        Number of trials.
    train_seconds, train_cpu_seconds : float
        Summed wall and CPU time of the trials.
    steps_mean : float
        Mean number of training steps taken.
    seconds : float
        Wall time of the measurement.
    design : {"grid", "adaptive"}
        How the loads were chosen (fixed grid, or sequential design around the
        current fit: :func:`validation.adaptive.adaptive_threshold`).
    history : list, optional
        Adaptive design only: per round, the trials, threshold, CI and loads.
    stop : {"target", "max_trials"}, optional
        Adaptive design only: why the design stopped.
    seed_list : list, optional
        Adaptive design only: the seed of each trial.

    See Also
    --------
    validation.linear_memory.capacity.measure_capacity : The sweep and threshold fit that build this record.

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold; docs/sweeps.md#adaptive-threshold-design
    """

    method: str
    certificates: dict = optional()
    seconds_per_instance: float = optional()
    model: str
    d: int
    kappa: float
    preset: str
    threshold: float
    ci_low: float
    ci_high: float
    width: float
    counts: list
    theory: dict
    trials: int
    train_seconds: float
    train_cpu_seconds: float
    steps_mean: float
    seconds: float
    design: str = "grid"
    history: list = optional()
    stop: str = optional()
    seed_list: list = optional()


@fill_doc
def grid_center(model, d, kappa=None, theory=None):
    r"""Return where to centre the default load grid (a placement heuristic, not a prediction).

    Parameters
    ----------
    %(model)s
    d : int
        Dimension.
    kappa : float, optional
        Rank ratio (models that take one).
    theory : dict, optional
        The model's prediction if already computed.

    Returns
    -------
    float
        :meth:`MemoryModel.center <validation.linear_memory.registry.MemoryModel.center>`
        of the model's declaration.

    See Also
    --------
    validation.linear_memory.capacity.load_grid : Evenly spaced loads around this centre.

    Notes
    -----
    Full rank and Hebbian: the matching prediction.  Low rank: :math:`\alpha_c(\kappa)`
    times the finite-size factor :math:`\alpha^*_{\mathrm{full}}(d) / (1/2)` of the full-rank
    prediction, because at laptop sizes full-rank thresholds sit ~1.8x above
    their large-``d`` limit and :math:`\alpha_c(\kappa)` is a large-``d`` number.

    %(ref_protocol)s
    """
    return get_model(model).center(d, kappa, theory)


def measure_capacity(model, d, *, kappa=None, seeds=6, alphas=None, preset="default",
                     store=None, workers=None, executor="processes", progress=True,
                     extend=None, n_loads=None, rel=None, seed0=0, method="train", design="grid",
                     ci_halfwidth=0.03, max_trials=200, batch=None, runner=None, **overrides):
    """Empirical capacity of one model at one ``d`` (and ``kappa``) vs theory.

    Parameters
    ----------
    model : str
        A registered memory model (``"op"``, ``"dp"``, ``"lowrank"``,
        ``"hebbian"``, see :mod:`validation.linear_memory.registry`).
    d : int
        Dimension (>= 2).
    kappa : float, optional
        Rank ratio in (0, 1] (models that take one, e.g. low rank; required there).
    seeds : int
        Trials per load (seeds ``seed0 .. seed0 + seeds - 1``).
    alphas : sequence of float, optional
        Loads; default: a grid around :func:`grid_center` (the declaration's
        ``grid``: 7 loads, +-30%; Hebbian: 9 loads, +-70%).
    preset : {"default", "paper"}
        Training preset.
    store : path, optional
        JSONL store of :func:`validation.engine.run_sweep` (reruns reuse trials).
    workers : int, optional
        Worker processes of ``run_sweep``.
    executor : {"processes", "inprocess", "dask"}
        Executor of ``run_sweep``.
    progress : bool
        Print progress.
    extend : int, optional
        Rounds of adaptive extension: while the success rate at the largest
        load is >= 1/2 (or at the smallest < 1/2) the grid is extended by two
        loads beyond it, so the crossing is bracketed.  Default: 2 with the
        automatic grid, 0 (exactly the given loads) with ``alphas``.
    n_loads : int, optional
        Number of loads of the automatic grid (default: the declaration's).
    rel : float, optional
        Relative half-width of the automatic grid (default: the declaration's).
    seed0 : int
        First seed.
    method : {"train", "exact"}
        ``"train"``: success = Adam recalls all facts within its budget;
        ``"exact"``: success = a memory recalling all facts exists
        (:func:`validation.linear_memory.exact.exact_trial`, full rank only,
        same facts as the trained trials of equal ``(model, d, alpha, seed)``).
    design : {"grid", "adaptive"}
        ``"grid"``: the loads above, ``seeds`` trials each (plus extension
        rounds).  ``"adaptive"``: a sequential design
        (:func:`validation.adaptive.adaptive_threshold`): a first round at
        ``alphas`` (default: the grid centre times 0.95 and 1.05), then
        ``batch`` loads per round chosen from the current logistic fit, one
        new seed per trial (``seed0, seed0 + 1, ...``), until the 95% CI
        half-width is <= ``ci_halfwidth`` or ``max_trials`` trials were run
        (``seeds``, ``extend``, ``n_loads`` and ``rel`` are not used).
        With ``method="exact"`` each trial is one certified decision; an
        undecided instance stops the design (``RuntimeError``).
    ci_halfwidth : float
        Target CI half-width of the adaptive design (> 0).
    max_trials : int
        Trial cap of the adaptive design (>= 1).
    batch : int, optional
        Loads per adaptive round (default: ``workers``, or 2).
    runner : callable, optional
        ``runner(params) -> records``: runs (or replays) a list of parameter
        records of the method's trial (:func:`capacity_trial`, or
        :func:`~validation.linear_memory.exact.exact_trial` for
        ``method="exact"``) and returns one engine record per record, in order
        (e.g. a study's :class:`validation.studies.base.Runner`; a missing
        record, ``None``, raises ``LookupError``); ``store``, ``workers``,
        ``executor`` and ``progress`` are then not used.  Default:
        :func:`validation.engine.run_sweep` on ``store``.
    **overrides
        Training overrides (``steps``, ``lr``, ...); refused with
        ``method="exact"``.

    Returns
    -------
    CapacityMeasurement
        ``model``, ``d``, ``kappa``, ``preset``, ``threshold``, ``ci_low``,
        ``ci_high``, ``width``, ``counts`` (``[load, successes, trials]``),
        ``theory`` (dict of :func:`validation.linear_memory.registry.prediction`),
        ``trials``, ``train_seconds`` (sum over trials), ``seconds`` (wall),
        ``method``, ``design``; exact only: ``certificates``
        (:func:`validation.linear_memory.exact.certificate_summary`);
        adaptive only: ``history`` (per round: trials, threshold, CI, loads),
        ``stop`` (``"target"`` or ``"max_trials"``), ``seed_list``.
        A :class:`CapacityMeasurement`.

    Raises
    ------
    ValueError
        Any argument out of range (one check each, before any trial runs;
        the message names the argument, its value and the valid range).

    See Also
    --------
    validation.linear_memory.capacity.capacity_trial : Train and score one memory at one load.
    validation.linear_memory.registry.prediction : The replica prediction reported beside the fit.
    validation.linear_memory.exact.exact_feasibility : Existence of a memory, decided exactly (``method="exact"``).

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#empirical-capacity-threshold;
    docs/linear_memory.md#exact-capacity; docs/sweeps.md#adaptive-threshold-design
    """
    from .registry import prediction

    decl = get_model(model)
    if method not in ("train", "exact"):
        raise ValueError(f"method must be 'train' or 'exact', got {method!r}")
    if method == "exact" and not decl.exact:
        exact = " or ".join(m.name for m in MEMORY_MODELS.values() if m.exact)
        raise ValueError(f"method 'exact' decides full-rank memories: model must be {exact}, got {model!r}")
    if method == "exact" and any(v is not None for v in overrides.values()):
        names = ", ".join(sorted(k for k, v in overrides.items() if v is not None))
        raise ValueError(f"{names}: training options have no meaning with method 'exact'")
    d = check_int("d", d, low=2, high=MAX_D)
    if kappa is not None:
        kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
        if not decl.needs_kappa:
            with_kappa = ", ".join(m for m, v in MEMORY_MODELS.items() if v.needs_kappa)
            raise ValueError(f"kappa applies only to the models with a rank ratio ({with_kappa}), "
                             f"not to model {model!r}, got kappa={kappa:g}")
    if decl.needs_kappa and kappa is None:
        raise ValueError(f"kappa is required for model {model!r} (a value in (0, 1])")
    seeds = check_int("seeds", seeds, low=1, high=MAX_SEEDS)
    if workers is not None:
        workers = check_int("workers", workers, low=1, high=1024)
    if alphas is not None:
        alphas = [float(a) for a in np.atleast_1d(check_real("alphas", alphas, low=0, high=MAX_LOAD,
                                                             low_open=True))]
        if not alphas:
            raise ValueError("alphas must be at least one load, got none")
    if preset not in ("default", "paper"):
        raise ValueError(f"preset must be 'default' or 'paper', got {preset!r}")
    if design not in ("grid", "adaptive"):
        raise ValueError(f"design must be 'grid' or 'adaptive', got {design!r}")
    if design == "adaptive":
        check_real("ci_halfwidth", ci_halfwidth, low=0, low_open=True, allow_array=False)
        max_trials = check_int("max_trials", max_trials, low=1)
        batch = check_int("batch", batch if batch is not None else (workers or 2), low=1)
    if extend is None:
        extend = 0 if alphas is not None else 2
    extend = check_int("extend", extend, low=0, high=10)
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if method == "train":
        # training overrides are checked here, not first inside every trial (where a
        # bad steps became a failed sweep and a traceback)
        from .train import TrainConfig, get_config

        unknown = sorted(set(overrides) - set(TrainConfig.__dataclass_fields__) - {"dtype", "max_bytes"})
        if unknown:
            raise ValueError(f"overrides must be training options ({', '.join(TrainConfig.__dataclass_fields__)}, "
                             f"dtype, max_bytes), got {', '.join(unknown)}")
        get_config(preset, **{k: v for k, v in overrides.items() if k in TrainConfig.__dataclass_fields__})
    if runner is not None:
        def sweep(fn, params, label):
            return runner(params)
    else:
        if store is not None:             # before the first trial: a path that cannot hold a store
            from hcizz.cli import check_output_file
            from validation.engine.store import check_store_file

            check_output_file("store", store)
            check_store_file(store)
        sweep = _sweep_runner(store, workers, executor, progress)
    t0 = time.perf_counter()
    theory = prediction(model, d, kappa)
    if design == "adaptive":
        return _measure_adaptive(model, d, kappa, preset, theory, alphas, sweep, seed0, ci_halfwidth,
                                 max_trials, batch, overrides, t0, method)
    if alphas is None:
        c = decl.center(d, kappa, theory)
        loads = load_grid(c, n=n_loads or decl.grid[0], rel=rel or decl.grid[1], d=d)
    else:
        loads = [float(load_of(p_from_load(a, d), d)) for a in alphas]
        loads = sorted(set(loads))
    _check_capacity_memory(model, d, p_from_load(max(loads), d), overrides.get("dtype") or "float32")
    if method == "train":             # exact decisions redraw DP candidates in blocks, never whole
        _check_candidates(model, d, p_from_load(max(loads) * (1.5 if alphas is None and extend else 1.0), d),
                          "of the largest load")
    seed_list = list(range(seed0, seed0 + seeds))
    label = f"capacity {model} d={d}" + (f" kappa={kappa:g}" if decl.needs_kappa else "")
    if method == "exact":
        from .exact import exact_trial, exact_params

        label += " (exact)"
    results = []
    done = set()
    for rnd in range(extend + 1):
        todo = [a for a in loads if a not in done]
        if method == "exact":
            fn, params = exact_trial, exact_params(model, d, todo, seed_list)
        else:
            fn = capacity_trial
            params = trial_params(model, d, todo, seed_list, kappa=kappa, preset=preset, **overrides)
        results += _ok_results(sweep(fn, params, label))
        done.update(todo)
        decided = [r for r in results if r["success"] is not None]
        if rnd == extend:
            break
        new = extension_loads(loads, decided, d, min_step=0.05)
        if not new:
            break
        loads = sorted(set(loads) | set(new))
    decided = [r for r in results if r["success"] is not None]
    fit = fit_threshold([r["load"] for r in decided], [r["success"] for r in decided])
    extra = {"method": method}
    if method == "exact":
        from .exact import certificate_summary

        extra["certificates"] = certificate_summary(results)
        extra["seconds_per_instance"] = extra["certificates"]["seconds_per_instance"]
    return CapacityMeasurement(
        **extra, model=model, d=d, kappa=kappa, preset=preset,
        threshold=fit.threshold, ci_low=fit.ci_low, ci_high=fit.ci_high,
        width=fit.width, counts=fit.counts, theory=theory,
        trials=len(results), train_seconds=float(sum(r["seconds"] for r in results)),
        train_cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in results)),
        steps_mean=float(np.mean([r.get("steps", 0) for r in results])),
        seconds=time.perf_counter() - t0, design="grid")


def _sweep_runner(store, workers, executor, progress):
    """``sweep(fn, params, label) -> records`` on :func:`validation.engine.run_sweep`."""
    def sweep(fn, params, label):
        from validation.engine import run_sweep

        return run_sweep(fn, params, store=store, workers=workers, executor=executor, progress=progress,
                         label=label)

    return sweep


def _ok_results(recs):
    """The results of engine records; ``RuntimeError`` naming the first failure, ``LookupError`` a missing one."""
    bad = [r for r in recs if r is not None and r["status"] != "ok"]
    if bad:
        raise RuntimeError(f"{len(bad)} trial(s) failed, first: {bad[0]['error']}")
    if any(r is None for r in recs):
        raise LookupError(f"{sum(r is None for r in recs)} trial(s) not in the store")
    return [r["result"] for r in recs]


@fill_doc
def adaptive_settings(model, d, kappa, theory, alphas):
    """Return the first loads, walk step, load snapping and floor of the adaptive design.

    Parameters
    ----------
    %(model)s
    d : int
        Dimension.
    kappa : float or None
        Rank ratio (models that take one).
    theory : dict
        The model's prediction (``value`` at least).
    alphas : sequence of float or None
        First-round loads (default: the grid centre times 0.95 and 1.05).

    Returns
    -------
    dict
        ``center``, ``start`` (sorted first loads), ``step`` (0.1 centre),
        ``lower`` (0.05 centre) and ``snap`` (load -> load of the integer ``p``),
        the settings :func:`validation.adaptive.adaptive_threshold` takes.

    See Also
    --------
    validation.adaptive.adaptive_threshold : Sequential design of loads driven by these settings.

    References
    ----------
    docs/sweeps.md#adaptive-threshold-design
    """
    c = get_model(model).center(d, kappa, theory)
    start = sorted(alphas) if alphas is not None else [0.95 * c, 1.05 * c]
    return {"center": c, "start": start, "step": 0.1 * c, "lower": 0.05 * c,
            "snap": lambda a: float(load_of(p_from_load(a, d), d))}


def _measure_adaptive(model, d, kappa, preset, theory, alphas, sweep, seed0, ci_halfwidth, max_trials,
                      batch, overrides, t0, method="train"):
    """``measure_capacity(design="adaptive")``: rounds of trials (trained, or exact decisions) chosen
    by :func:`validation.adaptive.adaptive_threshold` around :func:`validation.logistic.fit_threshold`."""
    from validation.adaptive import adaptive_threshold

    from .exact import certificate_summary, exact_params, exact_trial

    st = adaptive_settings(model, d, kappa, theory, alphas)
    start = st["start"]
    _check_capacity_memory(model, d, p_from_load(1.5 * max(start), d), overrides.get("dtype") or "float32")
    if method == "train":             # exact decisions redraw DP candidates in blocks, never whole
        _check_candidates(model, d, p_from_load(1.5 * max(start), d), "at 1.5x the largest start load")
    label = (f"capacity {model} d={d}" + (f" kappa={kappa:g}" if model == "lowrank" else "")
             + (" (exact, adaptive)" if method == "exact" else " (adaptive)"))
    results = []

    def run(loads, seeds):
        if method == "exact":
            fn, params = exact_trial, [exact_params(model, d, [a], [s])[0] for a, s in zip(loads, seeds)]
        else:
            fn = capacity_trial
            params = [trial_params(model, d, [a], [s], kappa=kappa, preset=preset, **overrides)[0]
                      for a, s in zip(loads, seeds)]
        res = _ok_results(sweep(fn, params, label))
        undecided = [q for q, r in zip(params, res) if r["success"] is None]
        if undecided:
            raise RuntimeError(f"{len(undecided)} instance(s) undecided, first: {undecided[0]}")
        results.extend(res)
        return [r["load"] for r in res], [r["success"] for r in res]

    ad = adaptive_threshold(run, fit_threshold, start, target_halfwidth=ci_halfwidth,
                            max_trials=max_trials, batch=batch, seed0=seed0, step=st["step"],
                            snap=st["snap"], lower=st["lower"])
    fit = ad.fit
    extra = {}
    if method == "exact":
        extra["certificates"] = certificate_summary(results)
        extra["seconds_per_instance"] = extra["certificates"]["seconds_per_instance"]
    return CapacityMeasurement(
        **extra, method=method, design="adaptive", model=model, d=d, kappa=kappa, preset=preset,
        threshold=fit.threshold, ci_low=fit.ci_low, ci_high=fit.ci_high, width=fit.width,
        counts=fit.counts, theory=theory, trials=ad.trials,
        history=ad.history, stop=ad.stop, seed_list=ad.seeds,
        train_seconds=float(sum(r["seconds"] for r in results)),
        train_cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in results)),
        steps_mean=float(np.mean([r.get("steps", 0) for r in results])),
        seconds=time.perf_counter() - t0)


@dataclass(frozen=True)
class ThresholdEstimate(Result):
    """Base of the records whose main estimate is ``threshold``, with its 95% interval ``ci_low`` / ``ci_high``.

    A subclass adds its fields (``threshold``, ``ci_low`` and ``ci_high``
    among them); :meth:`~hcizz.results.Result.conf_int` returns the interval
    and ``to_dict()`` writes ``ci_low`` and ``ci_high`` as two keys
    (:class:`ThresholdRecord` packs them into one).

    See Also
    --------
    validation.linear_memory.capacity.ThresholdRecord : The same record, its interval written as ``"ci"``.
    hcizz.results.Result : Protocol of every result record.

    References
    ----------
    docs/architecture.md#one-result-protocol
    """

    _estimate = "threshold"
    level = 0.95


@dataclass(frozen=True)
class ThresholdRecord(ThresholdEstimate):
    """Base of the threshold records: main estimate ``threshold``, 95% interval ``ci_low`` / ``ci_high``.

    A subclass adds its fields (``threshold``, ``ci_low`` and ``ci_high``
    among them); ``to_dict()`` writes the interval as ``"ci": [ci_low, ci_high]``,
    the key ``report.json`` has always used.

    See Also
    --------
    validation.linear_memory.capacity.BudgetThreshold : A threshold refitted at one step budget.
    validation.linear_memory.capacity.ThresholdEstimate : The base that declares the estimate and its level.
    hcizz.results.Result : Protocol of every result record.

    References
    ----------
    docs/architecture.md#one-result-protocol
    """

    _ci_pair = True


@fill_doc
@dataclass(frozen=True)
class BudgetThreshold(ThresholdRecord):
    """The threshold refitted at one step budget (:func:`budget_thresholds`).

    Parameters
    ----------
    budget : int
        Step budget ``B``.
    threshold : float
        Logistic 1/2 point of ``success(B) = success and steps <= B``.
    ci_low, ci_high : float
        Its 95% profile-likelihood interval.
    successes : int
        Successes at budget ``B``.

    See Also
    --------
    validation.linear_memory.capacity.budget_thresholds : Refits one such record per step budget.

    Notes
    -----
    ``to_dict()`` writes the interval as ``"ci": [ci_low, ci_high]``
    (:class:`ThresholdRecord`).

    %(ref_budget_study)s
    """

    budget: int
    threshold: float
    ci_low: float
    ci_high: float
    successes: int


@fill_doc
def budget_thresholds(records, budgets):
    """Refit the threshold at each step budget from the trials of one run at a larger budget.

    Parameters
    ----------
    records : list of dict
        :func:`capacity_trial` results run with a constant learning rate and
        a budget at least ``max(budgets)`` (fields ``load``, ``success``,
        ``steps``).
    budgets : sequence of int
        Step budgets ``B``.

    Returns
    -------
    list of BudgetThreshold
        One per budget, in the order given.

    See Also
    --------
    validation.linear_memory.capacity.BudgetThreshold : Refitted threshold at a single step budget.

    Notes
    -----
    With a constant learning rate (no warm-up, no decay) a run with budget
    ``B`` is exactly the first ``B`` steps of the longer run, and training
    stops at the first full recall, so ``success(B) = success and steps <= B``
    is the outcome the shorter run would have had.

    %(ref_budget_study)s

    Examples
    --------
    >>> recs = [{"load": a, "success": a < 0.8, "steps": 100 if a < 0.7 else 900}
    ...         for a in (0.5, 0.6, 0.7, 0.75, 0.85, 0.9) for _ in range(4)]
    >>> [(b.budget, b.successes) for b in budget_thresholds(recs, (128, 1024))]
    [(128, 8), (1024, 16)]
    """
    loads = np.array([r["load"] for r in records])
    out = []
    for b in budgets:
        succ = np.array([bool(r["success"]) and r["steps"] <= b for r in records])
        f = fit_threshold(loads, succ)
        out.append(BudgetThreshold(budget=int(b), threshold=f.threshold, ci_low=f.ci_low, ci_high=f.ci_high,
                                   successes=int(succ.sum())))
    return out
