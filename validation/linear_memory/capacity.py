"""Empirical capacity: trials, load grids and the logistic threshold fit.

One *trial* draws a fact set at load ``alpha`` (``p ln p = alpha d^2``, ``p``
rounded to an integer, the actual load recorded), trains (or builds the
Hebbian memory) and records success = exact recall of all ``p`` facts.
The empirical capacity is the load where the success probability crosses
1/2, from a logistic fit over a grid of loads and seeds
(:func:`fit_threshold`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import math
import time

import numpy as np
from scipy import optimize, stats

from hcizz.checks import check_int, check_real
from .data import make_facts, p_from_load, load_of, DEFAULT_MAX_BYTES
from .train import train, MODELS

__all__ = ["capacity_trial", "trial_params", "load_grid", "fit_threshold", "extension_loads",
           "ThresholdFit", "success_counts", "trial_rngs"]


def trial_rngs(seed, d, p):
    """Independent generators for the facts and the initialisation of a trial.

    The facts depend on ``(seed, d, p)`` only, so OP, low-rank and Hebbian
    trials with equal ``(seed, d, p)`` see the same facts (paired comparison).
    """
    ss = np.random.SeedSequence(entropy=int(seed), spawn_key=(int(d), int(p)))
    a, b = ss.spawn(2)
    return np.random.default_rng(a), np.random.default_rng(b)


def capacity_trial(params):
    """One capacity trial (module-level, for :func:`validation.engine.run_sweep`).

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
        ``p``, ``load`` (actual ``p ln p / d^2``), ``success`` (bool),
        ``accuracy``, ``steps`` (steps taken; with a constant learning rate
        a success within ``steps`` is also a success for every larger
        budget), ``loss``, ``seconds`` (wall) and ``cpu_seconds`` (process
        CPU time: the cost on an unloaded core).
    """
    model = params["model"]
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    d = check_int("d", params["d"], low=1)
    p = p_from_load(params["alpha"], d)
    seed = params["seed"]
    kind = "dp" if model == "dp" else "op"
    dtype = np.dtype(params.get("dtype", "float32"))
    _check_capacity_memory(model, d, p, dtype)     # before anything is allocated
    rf, ri = trial_rngs(seed, d, p)
    t0, c0 = time.perf_counter(), time.process_time()
    facts = make_facts(kind, p, d, rng=rf, dtype=dtype,
                       max_bytes=params.get("max_bytes", DEFAULT_MAX_BYTES))
    over = {k: params[k] for k in ("lr", "steps", "temperature", "init_std", "warmup",
                                   "final", "stop_accuracy") if k in params}
    res = train(facts, model={"op": "full", "dp": "full"}.get(model, model),
                kappa=params.get("kappa", 1.0), preset=params.get("preset", "default"),
                rng=ri, **over)
    return {"p": p, "load": float(load_of(p, d)), "success": bool(res.success),
            "accuracy": res.accuracy, "steps": int(res.steps), "loss": float(res.loss),
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}


def _check_capacity_memory(model, d, p, dtype):
    """``ValueError`` naming the sizes if one trial's facts and weights
    (``2 p d + 2 d^2`` floats: keys, values, ``W`` and its gradient) cannot fit."""
    from validation._memory import check_memory

    item = np.dtype(dtype).itemsize
    check_memory(item * (2.0 * p * d + 2.0 * d * d),
                 f"capacity --model {model} d={d} p={p} (largest load; facts 2 p d + weights "
                 f"2 d^2 in {np.dtype(dtype).name})")


def load_grid(center, *, n=7, rel=0.25, d=None):
    """Loads ``center * linspace(1 - rel, 1 + rel, n)``.

    With ``d`` given, loads mapping to the same integer ``p`` are merged and
    the loads are those of the integer ``p`` (sorted, unique).
    """
    center = check_real("center", center, low=0, low_open=True, allow_array=False)
    n = check_int("n", n, low=1)
    rel = check_real("rel", rel, low=0, high=1, high_open=True, allow_array=False)
    grid = center * np.linspace(1 - rel, 1 + rel, n) if n > 1 else np.array([center])
    if d is None:
        return [float(a) for a in grid]
    ps = sorted({p_from_load(a, d) for a in grid})
    return [float(load_of(p, d)) for p in ps]


def trial_params(model, d, loads, seeds, *, kappa=None, preset="default", **extra):
    """Parameter records (one per load and seed) for :func:`capacity_trial`."""
    out = []
    for a in loads:
        for s in seeds:
            rec = {"model": model, "d": int(d), "alpha": float(a), "seed": int(s),
                   "preset": preset}
            if model == "lowrank":
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


def success_counts(loads, success):
    """Per-load ``[load, successes, trials]`` rows sorted by load."""
    loads = np.asarray(loads, float)
    success = np.asarray(success, bool)
    rows = []
    for a in np.unique(loads):
        m = loads == a
        rows.append([float(a), int(success[m].sum()), int(m.sum())])
    return rows


@dataclass(frozen=True)
class ThresholdFit(Mapping):
    """Result of :func:`fit_threshold`: a frozen record, readable by attribute
    (``fit.threshold``) and, for existing callers, as a read-only mapping
    (``fit["threshold"]``, ``dict(fit)``); ``to_dict()`` gives plain values.

    Attributes
    ----------
    threshold : float
        Load ``alpha50`` where the fitted success probability is 1/2 (NaN when
        the data do not bracket it).
    width : float
        Logistic width ``w``.
    ci_low, ci_high : float
        Profile-likelihood confidence interval of ``threshold``.
    counts : list
        ``[load, successes, trials]`` rows.
    n : int
        Number of trials.
    level : float
        Confidence level.
    method : str
        How the fit was made.

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold
    """

    threshold: float
    width: float
    ci_low: float
    ci_high: float
    counts: list
    n: int
    level: float
    method: str

    def to_dict(self):
        """The fields as a plain ``dict``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __getitem__(self, key):
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self.__dataclass_fields__)

    def __len__(self):
        return len(self.__dataclass_fields__)


def _loglik(a50, s, x, k, n):
    # binomial log-likelihood (up to a constant) of k successes out of n at
    # loads x, success probability sigma((a50 - x)/s); log-sigmoid computed stably
    # k log sig(t) + (n-k) log sig(-t) = k t - n softplus(t)
    t = (a50[..., None] - x) / s[..., None]
    sp = np.maximum(t, 0.0) + np.log1p(np.exp(-np.abs(t)))
    return (k * t - n * sp).sum(-1)


def fit_threshold(loads, success, *, level=0.95, n_grid=481, n_width=61, min_width=None):
    """Logistic fit of success probability against load, with a profile-likelihood CI.

    Model: ``P(success | alpha) = 1 / (1 + exp((alpha - alpha50) / w))``.

    Parameters
    ----------
    loads : array_like
        Load of each trial.
    success : array_like of bool
        Outcome of each trial.
    level : float
        Confidence level of the interval (default 0.95).
    n_grid, n_width : int
        Grid sizes in ``alpha50`` and ``log w`` for the profile likelihood.
    min_width : float, optional
        Smallest width ``w`` considered (default ``1e-3 * median load``):
        keeps the likelihood bounded under complete separation.

    Returns
    -------
    ThresholdFit
        ``threshold`` (MLE of ``alpha50``; NaN if the data never cross 1/2,
        i.e. the maximum sits on the edge of the search range), ``width``,
        ``ci_low``, ``ci_high`` (profile-likelihood interval; ``-inf``/``inf``
        where it reaches the edge of the search range, which extends one grid
        span beyond the data), ``counts`` (per-load successes/trials),
        ``n``, ``method``.

    Notes
    -----
    The interval is ``{alpha50 : max_w l(alpha50, w) >= l_max - chi2_1(level)/2}``
    (Wilks).  It is preferred to Wald/Fisher intervals because with a few
    seeds per load the likelihood is strongly asymmetric and often
    (quasi-)separated, where the Fisher information is singular and bootstrap
    resamples are degenerate; the profile interval stays finite and is
    bracketed by the loads where successes and failures overlap.  The
    profile is computed on a grid (``n_grid x n_width``) and the MLE refined
    by Nelder-Mead from the best grid point.
    """
    x = np.asarray(loads, float).ravel()
    y = np.asarray(success, float).ravel()
    if x.size != y.size or x.size == 0:
        raise ValueError(f"loads and success must have equal nonzero length, got {x.size} and {y.size}")
    counts = success_counts(x, y.astype(bool))
    xs, ks, ns = (np.array(c, float) for c in zip(*counts))
    xmin, xmax = float(x.min()), float(x.max())
    span = max(xmax - xmin, 0.05 * max(abs(xmax), 1e-12))
    lo, hi = xmin - span, xmax + span
    wmin = float(min_width) if min_width is not None else 1e-3 * float(np.median(np.abs(x)))
    wmin = max(wmin, 1e-12)
    A = np.linspace(lo, hi, n_grid)
    Wd = np.exp(np.linspace(np.log(wmin), np.log(2 * span), n_width))
    ll = _loglik(A[:, None], np.broadcast_to(Wd, (n_grid, n_width)), xs, ks, ns)
    prof = ll.max(axis=1)
    i, j = np.unravel_index(np.argmax(ll), ll.shape)

    def nll(v):
        w = math.exp(v[1])
        if w < wmin:
            return np.inf
        return -float(_loglik(np.array(v[0]), np.array(w), xs, ks, ns))

    r = optimize.minimize(nll, [A[i], math.log(Wd[j])], method="Nelder-Mead",
                          options={"xatol": 1e-7 * span, "fatol": 1e-10})
    a50, w = (float(r.x[0]), math.exp(r.x[1])) if r.fun <= -ll[i, j] else (float(A[i]), float(Wd[j]))
    lmax = max(-float(r.fun), float(ll[i, j]))
    cut = lmax - stats.chi2.ppf(level, 1) / 2
    inside = np.nonzero(prof >= cut)[0]
    ci_low = -math.inf if inside[0] == 0 else float(A[inside[0]])
    ci_high = math.inf if inside[-1] == n_grid - 1 else float(A[inside[-1]])
    on_edge = a50 <= lo + (hi - lo) / (n_grid - 1) or a50 >= hi - (hi - lo) / (n_grid - 1)
    if on_edge or y.all() or not y.any():
        a50 = math.nan
    return ThresholdFit(threshold=a50, width=w, ci_low=ci_low, ci_high=ci_high,
                        counts=counts, n=int(x.size), level=level,
                        method="logistic MLE, profile-likelihood CI")


def grid_center(model, d, kappa=None, theory=None):
    """Where to centre the default load grid (a placement heuristic, not a prediction).

    Full rank and Hebbian: the matching prediction.  Low rank: ``alpha_c(kappa)``
    times the finite-size factor ``alpha*_full(d) / (1/2)`` of the full-rank
    prediction, because at laptop sizes full-rank thresholds sit ~1.8x above
    their large-``d`` limit and ``alpha_c(kappa)`` is a large-``d`` number.
    """
    from .theory import prediction

    th = theory if theory is not None else prediction(model, d, kappa)
    c = th["value"]
    if model == "lowrank":
        c = c * prediction("op", d)["value"] / 0.5
    return c


def measure_capacity(model, d, *, kappa=None, seeds=6, alphas=None, preset="default",
                     store=None, workers=None, executor="processes", progress=True,
                     extend=None, n_loads=None, rel=None, seed0=0, method="train", design="grid",
                     ci_halfwidth=0.03, max_trials=200, batch=None, **overrides):
    """Empirical capacity of one model at one ``d`` (and ``kappa``) vs theory.

    Parameters
    ----------
    model : {"op", "dp", "lowrank", "hebbian"}
    d : int
        Dimension (>= 2).
    kappa : float, optional
        Rank ratio in (0, 1] (low rank only; required there).
    seeds : int
        Trials per load (seeds ``seed0 .. seed0 + seeds - 1``).
    alphas : sequence of float, optional
        Loads; default: a grid around :func:`grid_center` (7 loads, +-30%;
        Hebbian: 9 loads, +-70%).
    preset : {"default", "paper"}
    store : path, optional
        JSONL store of :func:`validation.engine.run_sweep` (reruns reuse trials).
    workers, executor, progress
        Passed to ``run_sweep``.
    extend : int, optional
        Rounds of adaptive extension: while the success rate at the largest
        load is >= 1/2 (or at the smallest < 1/2) the grid is extended by two
        loads beyond it, so the crossing is bracketed.  Default: 2 with the
        automatic grid, 0 (exactly the given loads) with ``alphas``.
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
        Training only (``method="train"``).
    ci_halfwidth : float
        Target CI half-width of the adaptive design (> 0).
    max_trials : int
        Trial cap of the adaptive design (>= 1).
    batch : int, optional
        Loads per adaptive round (default: ``workers``, or 2).
    **overrides
        Training overrides (``steps``, ``lr``, ...).

    Returns
    -------
    dict
        ``model``, ``d``, ``kappa``, ``preset``, ``threshold``, ``ci_low``,
        ``ci_high``, ``width``, ``counts`` (``[load, successes, trials]``),
        ``theory`` (dict of :func:`validation.linear_memory.theory.prediction`),
        ``trials``, ``train_seconds`` (sum over trials), ``seconds`` (wall),
        ``method``, ``design``; exact only: ``certificates``
        (:func:`validation.linear_memory.exact.certificate_summary`);
        adaptive only: ``history`` (per round: trials, threshold, CI, loads),
        ``stop`` (``"target"`` or ``"max_trials"``), ``seed_list``.
    """
    from validation.engine import run_sweep
    from .theory import prediction

    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if method not in ("train", "exact"):
        raise ValueError(f"method must be 'train' or 'exact', got {method!r}")
    if method == "exact" and model not in ("op", "dp"):
        raise ValueError(f"method 'exact' decides full-rank memories: model must be 'op' or 'dp', got {model!r}")
    d = check_int("d", d, low=2)
    if model == "lowrank":
        if kappa is None:
            raise ValueError("kappa is required for model 'lowrank' (a value in (0, 1])")
        kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    seeds = check_int("seeds", seeds, low=1)
    if preset not in ("default", "paper"):
        raise ValueError(f"preset must be 'default' or 'paper', got {preset!r}")
    if design not in ("grid", "adaptive"):
        raise ValueError(f"design must be 'grid' or 'adaptive', got {design!r}")
    if design == "adaptive":
        if method != "train":
            raise ValueError(f"design 'adaptive' needs method 'train', got {method!r}")
        check_real("ci_halfwidth", ci_halfwidth, low=0, low_open=True, allow_array=False)
        max_trials = check_int("max_trials", max_trials, low=1)
        batch = check_int("batch", batch if batch is not None else (workers or 2), low=1)
    if extend is None:
        extend = 0 if alphas is not None else 2
    extend = check_int("extend", extend, low=0)
    t0 = time.perf_counter()
    theory = prediction(model, d, kappa)
    if design == "adaptive":
        return _measure_adaptive(model, d, kappa, preset, theory, alphas, store, workers, executor,
                                 progress, seed0, ci_halfwidth, max_trials, batch, overrides, t0)
    if alphas is None:
        c = grid_center(model, d, kappa, theory)
        heb = model == "hebbian"
        loads = load_grid(c, n=n_loads or (9 if heb else 7), rel=rel or (0.7 if heb else 0.3), d=d)
    else:
        loads = [float(load_of(p_from_load(a, d), d)) for a in alphas]
        loads = sorted(set(loads))
    if model == "dp":
        from .data import dp_nbytes

        p_max = p_from_load(max(loads) * (1.5 if alphas is None and extend else 1.0), d)
        if dp_nbytes(p_max, d) > DEFAULT_MAX_BYTES:
            raise ValueError(
                f"p={p_max}, d={d}: the DP candidate tensor of the largest load needs p^2 d * 4 = "
                f"{dp_nbytes(p_max, d) / 2**30:.2f} GiB per worker > {DEFAULT_MAX_BYTES / 2**30:.0f} GiB; "
                f"use a smaller d or smaller --alphas")
    _check_capacity_memory(model, d, p_from_load(max(loads), d), overrides.get("dtype") or "float32")
    # training overrides are checked here, not first inside every trial (where a
    # bad --steps became a failed sweep and a traceback)
    from .train import TrainConfig, get_config

    get_config(preset, **{k: v for k, v in overrides.items() if k in TrainConfig.__dataclass_fields__})
    seed_list = list(range(seed0, seed0 + seeds))
    label = f"capacity {model} d={d}" + (f" kappa={kappa:g}" if model == "lowrank" else "")
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
        recs = run_sweep(fn, params, store=store, workers=workers, executor=executor,
                         progress=progress, label=label)
        bad = [r for r in recs if r["status"] != "ok"]
        if bad:
            raise RuntimeError(f"{len(bad)} trial(s) failed, first: {bad[0]['error']}")
        results += [r["result"] for r in recs]
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
    extra["design"] = "grid"
    return {**extra, "model": model, "d": d, "kappa": kappa, "preset": preset,
            "threshold": fit.threshold, "ci_low": fit.ci_low, "ci_high": fit.ci_high,
            "width": fit.width, "counts": fit.counts, "theory": theory,
            "trials": len(results), "train_seconds": float(sum(r["seconds"] for r in results)),
            "train_cpu_seconds": float(sum(r.get("cpu_seconds", 0.0) for r in results)),
            "steps_mean": float(np.mean([r.get("steps", 0) for r in results])),
            "seconds": time.perf_counter() - t0}


def _adaptive_settings(model, d, kappa, theory, alphas):
    """First loads, walk step, load snapping and floor of the adaptive design."""
    c = grid_center(model, d, kappa, theory)
    start = sorted(alphas) if alphas is not None else [0.95 * c, 1.05 * c]
    return {"center": c, "start": start, "step": 0.1 * c, "lower": 0.05 * c,
            "snap": lambda a: float(load_of(p_from_load(a, d), d))}


def _measure_adaptive(model, d, kappa, preset, theory, alphas, store, workers, executor, progress,
                      seed0, ci_halfwidth, max_trials, batch, overrides, t0):
    """``measure_capacity(design="adaptive")``: rounds of :func:`run_sweep` chosen
    by :func:`validation.adaptive.adaptive_threshold` around :func:`fit_threshold`."""
    from validation.adaptive import adaptive_threshold
    from validation.engine import run_sweep
    from .train import TrainConfig, get_config

    get_config(preset, **{k: v for k, v in overrides.items() if k in TrainConfig.__dataclass_fields__})
    st = _adaptive_settings(model, d, kappa, theory, alphas)
    start, c = st["start"], st["center"]
    _check_capacity_memory(model, d, p_from_load(1.5 * max(start), d), overrides.get("dtype") or "float32")
    if model == "dp":
        from .data import dp_nbytes

        if dp_nbytes(p_from_load(1.5 * max(start), d), d) > DEFAULT_MAX_BYTES:
            raise ValueError(f"d={d}: the DP candidate tensor at 1.5x the largest start load exceeds "
                             f"{DEFAULT_MAX_BYTES / 2**30:.0f} GiB per worker; use a smaller d")
    label = f"capacity {model} d={d}" + (f" kappa={kappa:g}" if model == "lowrank" else "") + " (adaptive)"
    results = []

    def run(loads, seeds):
        params = [trial_params(model, d, [a], [s], kappa=kappa, preset=preset, **overrides)[0]
                  for a, s in zip(loads, seeds)]
        recs = run_sweep(capacity_trial, params, store=store, workers=workers, executor=executor,
                         progress=progress, label=label)
        bad = [r for r in recs if r["status"] != "ok"]
        if bad:
            raise RuntimeError(f"{len(bad)} trial(s) failed, first: {bad[0]['error']}")
        res = [r["result"] for r in recs]
        results.extend(res)
        return [r["load"] for r in res], [r["success"] for r in res]

    ad = adaptive_threshold(run, fit_threshold, start, target_halfwidth=ci_halfwidth,
                            max_trials=max_trials, batch=batch, seed0=seed0, step=st["step"],
                            snap=st["snap"], lower=st["lower"])
    fit = ad.fit
    return {"method": "train", "design": "adaptive", "model": model, "d": d, "kappa": kappa,
            "preset": preset, "threshold": fit.threshold, "ci_low": fit.ci_low, "ci_high": fit.ci_high,
            "width": fit.width, "counts": fit.counts, "theory": theory, "trials": ad.trials,
            "history": ad.history, "stop": ad.stop, "seed_list": ad.seeds,
            "train_seconds": float(sum(r["seconds"] for r in results)),
            "train_cpu_seconds": float(sum(r.get("cpu_seconds", 0.0) for r in results)),
            "steps_mean": float(np.mean([r.get("steps", 0) for r in results])),
            "seconds": time.perf_counter() - t0}
