"""Transformer capacity at T = 32: facts per parameter and the attention / MLP trade-off.

Two stored studies (docs/factual_recall.md#facts-per-parameter-budget-checked and
docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters):

1. **Facts per parameter.**  For every configuration ``(d, H d_h / d, m / d)`` of
   :data:`FPP_PLAN` and every seed, an adaptive search over the number of facts
   ``N`` on a geometric grid (ratio ``2^(1/4)``): bracket the 99 % point by steps
   of four grid points (a factor 2), then bisect on the grid
   (:func:`next_grid_index`).  Each trial is
   :func:`validation.factual_recall.theory_check.transformer_budget_trial`
   (constant-rate Adam, fresh batches, accuracy on every fact evaluated on a
   grid of steps, stop at >= 99 %), so one run gives the outcome at every budget
   up to its own (budget study for free).  The capacity is the 50 % point of a
   logistic fit of success against ``ln N`` pooling every seed and every ``N``
   (:func:`fit_capacity`), monotone in ``N`` by construction; its profile
   likelihood interval includes the seed spread and the ``N`` resolution.
   :func:`summarize_fpp` gives facts / parameter, bits / parameter and the
   fitted slope of facts against parameters.
2. **Trade-off.**  At a fixed number of facts, success and accuracy on a grid of
   heads ``H`` (attention parameters ``4 H d_h d``) and MLP widths ``m`` (MLP
   parameters ``2 m d``), :data:`TRADEOFF_PLAN`; :func:`fit_boundary` fits the
   iso-capacity boundary ``((c_a A)^p + (c_m M)^p)^(1/p) = N`` (``p = 1``:
   additive, ``p -> inf``: max) by maximum likelihood and profiles ``p``.

3. **Optimisers.**  Every configuration searched again with the cosine schedule
   (:data:`FPP_COSINE_ALL_PLAN`) and two configurations over peak learning rates and batch
   sizes (:func:`scan_plans`); :func:`summarize_optimizers` takes the best setting per
   configuration, refits the slope and applies the paper's search criterion
   (:func:`search_criterion`, docs/factual_recall.md#search-criterion-against-the-50-point).

Regenerate (resumable, appends to the stores of ``validation/factual_recall/stored/``):
``python -m validation.factual_recall.capacity_study fpp tradeoff --workers 2``;
the optimiser studies: ``python -m validation.factual_recall.capacity_study fpp-cosine-all
fpp-scan --workers 2``.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from hcizz.cli import ArgumentParser
from scipy import optimize, stats

from validation.logistic import fit_threshold
from .experiments import _split_facts
from .transformer import OneLayerTransformer
from . import theory_check as tc

__all__ = ["FPP_PLAN", "FPP_COSINE_PLAN", "FPP_CONSTANT_K", "FPP_COSINE_ALL_PLAN",
           "FPP_SCAN_SETTINGS", "FPP_SCAN_CONFIGS", "scan_plans", "search_criterion",
           "optimizer_settings", "summarize_optimizers", "TRADEOFF_PLAN", "shape_of", "grid_facts", "next_grid_index",
           "fit_capacity", "fpp_records", "run_fpp", "summarize_fpp", "tradeoff_params",
           "run_tradeoff", "fit_boundary", "summarize_tradeoff", "SCHEDULE_CHECK",
           "schedule_check_params",
           "run_schedule_check"]

#: Facts-per-parameter study (``stored/facts_per_param.jsonl``): ``configs`` are
#: ``(d, H d_h / d, m / d, steps)``; ``N0 = rate0 * params`` is the grid origin,
#: seed ``s`` starts at grid index ``start[s]``.
FPP_PLAN = {"D": 8, "T": 32, "batch": 256, "lr": 0.01, "eval_every": 500, "eval_repeats": 2,
            "seeds": 3, "ratio": 2 ** 0.25, "rate0": 0.04, "start": (0, 1, -1), "max_trials": 8,
            "configs": ((16, 1.0, 1.0, 6000), (16, 0.25, 4.0, 6000), (16, 4.0, 0.25, 6000),
                        (32, 1.0, 1.0, 8000), (32, 0.5, 0.5, 8000),
                        (64, 0.25, 0.25, 12000), (64, 1.0, 1.0, 12000))}

#: The largest configuration again with the cosine schedule (5 % warm-up, decay to 1 %)
#: instead of the constant rate (``stored/facts_per_param_cosine.jsonl``): same tasks,
#: initialisations and batches per ``(N, seed)``; starts near the constant-rate capacity.
FPP_COSINE_PLAN = dict(FPP_PLAN, schedule="cosine", configs=((64, 1.0, 1.0, 12000),),
                       start=(4, 5, 3), store="facts_per_param_cosine.jsonl")

#: Trade-off study (``stored/tradeoff.jsonl``): ``d``, ``d_h`` fixed, heads ``H``
#: and MLP widths ``m`` on a grid, ``facts`` fixed (square split).
TRADEOFF_PLAN = {"d": 16, "d_h": 4, "H": (1, 2, 3, 4, 5, 6, 8, 16), "m": (0, 4, 8, 16, 32, 64, 128), "facts": 100,
                 "D": 8, "T": 32, "batch": 256, "lr": 0.01, "steps": 6000, "eval_every": 500,
                 "eval_repeats": 2, "seeds": 3}

#: Grid index (on the :data:`FPP_PLAN` grid) nearest to each configuration's
#: constant-rate capacity (``stored/facts_per_param.jsonl``, ``round(4 log2(N / N0))``):
#: the optimiser searches below start there.
FPP_CONSTANT_K = {(16, 1.0, 1.0, 6000): 5, (16, 0.25, 4.0, 6000): 1, (16, 4.0, 0.25, 6000): 0,
                  (32, 1.0, 1.0, 8000): 4, (32, 0.5, 0.5, 8000): 6,
                  (64, 0.25, 0.25, 12000): 4, (64, 1.0, 1.0, 12000): 2}

#: Every configuration of :data:`FPP_PLAN` with the cosine schedule (lr 0.01, batch 256),
#: stored next to the largest one in ``stored/facts_per_param_cosine.jsonl`` (the d = 64
#: 1/1 paths of :data:`FPP_COSINE_PLAN` are complete and are reused as they are).  Paths
#: start one and two grid points above the constant-rate capacity and at it
#: (:data:`FPP_CONSTANT_K`), move by 2 grid points (a factor 2^(1/2)) until bracketed,
#: then bisect; at most 6 trials.
FPP_COSINE_ALL_PLAN = dict(FPP_PLAN, schedule="cosine", store="facts_per_param_cosine.jsonl",
                           starts={c: (k + 1, k + 2, k) for c, k in FPP_CONSTANT_K.items()},
                           step=2, max_trials=6)

#: Optimiser scan (``stored/fpp_optimizer_scan.jsonl``): the cosine schedule at these
#: ``(lr, batch[, configs])`` settings, in this order of priority (lr 0.01, batch 256 is
#: :data:`FPP_COSINE_ALL_PLAN`); same steps and search as there.  ``configs`` defaults
#: to :data:`FPP_SCAN_CONFIGS`; batch 1024 costs 4x per step, so it is scanned on fewer.
FPP_SCAN_CONFIGS = ((16, 1.0, 1.0, 6000), (32, 1.0, 1.0, 8000))
FPP_SCAN_SETTINGS = ((0.003, 256), (0.01, 1024, ((16, 1.0, 1.0, 6000),)),
                     (0.03, 256, ((16, 1.0, 1.0, 6000),)),
                     (0.01, 1024, ((32, 1.0, 1.0, 8000),)),
                     (0.01, 1024, ((64, 1.0, 1.0, 12000),)))

_FPP_STORE = "facts_per_param.jsonl"
_TRADEOFF_STORE = "tradeoff.jsonl"


def shape_of(d, attn_ratio, mlp_ratio, max_heads=8):
    """``(d, H, d_h, m)`` for the ratios ``H d_h / d`` and ``m / d``.

    Parameters
    ----------
    d : int
        Embedding dimension of the model.
    attn_ratio, mlp_ratio : float
        ``H d_h / d`` and ``m / d``.
    max_heads : int
        Heads used when ``H d_h >= max_heads`` (the paper's 8); below that
        ``H = H d_h`` heads of size 1.

    Returns
    -------
    tuple of int
        ``(d, H, d_h, m)``: embedding dimension, number of heads, head size
        ``round(attn_ratio d) / H`` and MLP width ``round(mlp_ratio d)``.

    Raises
    ------
    ValueError
        If ``round(attn_ratio d) < 1`` or it is not a multiple of the number of
        heads.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked

    Examples
    --------
    >>> shape_of(16, 1.0, 1.0), shape_of(16, 0.25, 4.0)
    ((16, 8, 2, 16), (16, 4, 1, 64))
    """
    hd = int(round(attn_ratio * d))
    m = int(round(mlp_ratio * d))
    if hd < 1:
        raise ValueError(f"attn_ratio * d must be >= 1, got {attn_ratio} * {d}")
    H = max_heads if hd >= max_heads else hd
    if hd % H:
        raise ValueError(f"H d_h = {hd} is not a multiple of {H} heads")
    return int(d), H, hd // H, m


def grid_facts(k, n0, ratio):
    """Number of facts ``S R`` (square split) at grid index ``k`` of a geometric grid.

    Parameters
    ----------
    k : int
        Grid index (negative below the origin).
    n0 : float
        Grid origin: the target number of facts at ``k = 0`` (the study uses
        ``rate0`` times the parameter count).
    ratio : float
        Ratio of consecutive grid points (``2^(1/4)`` in the study).

    Returns
    -------
    int
        ``S R`` for the square split ``R = round(sqrt(n))``, ``S = round(n / R)``
        of the target ``n = max(4, round(n0 ratio^k))``; it can differ slightly
        from ``n`` (128 becomes 12 x 11 = 132), and two neighbouring indices can
        give the same number.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked

    Examples
    --------
    >>> grid_facts(0, 64, 2 ** 0.25), grid_facts(4, 64, 2 ** 0.25)   # 128 -> 11 x 12
    (64, 132)
    """
    S, R = _split_facts(max(4, int(round(n0 * ratio ** k))))
    return S * R


def next_grid_index(tested, start, *, max_trials=8, step=4):
    """Next grid index of one adaptive path, or None when the path is done.

    Parameters
    ----------
    tested : dict
        ``{k: success}`` of the trials made so far on this path.
    start : int
        Grid index of the path's first trial.
    max_trials : int
        Most trials on one path: None is returned once ``tested`` holds this many.
    step : int
        Grid indices per move while not bracketed (4: a factor 2 in ``N`` on the
        ``2^(1/4)`` grid).

    Returns
    -------
    int or None
        ``start`` first; while only successes (failures) are known, ``step``
        indices above the largest success (below the smallest failure); once
        bracketed, the index halfway between the largest success and the
        smallest failure (bisection on the grid); None once they are adjacent
        (or inverted) or after ``max_trials`` trials.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked

    Examples
    --------
    >>> next_grid_index({}, 0), next_grid_index({0: True}, 0), next_grid_index({0: True, 4: False}, 0)
    (0, 4, 2)
    >>> next_grid_index({0: True, 2: False, 1: True}, 0) is None
    True
    """
    if not tested:
        return int(start)
    if len(tested) >= max_trials:
        return None
    ok = [k for k, s in tested.items() if s]
    bad = [k for k, s in tested.items() if not s]
    if not bad:
        return max(ok) + step
    if not ok:
        return min(bad) - step
    lo, hi = max(ok), min(bad)
    if hi - lo > 1:
        return (lo + hi) // 2
    return None


def _success(result, budget):
    t = result.get("t_99")
    return t is not None and t <= budget


def fit_capacity(facts, results, budget, level=0.95):
    """Capacity (facts at 50 % success) from a logistic fit in ``ln N``.

    Parameters
    ----------
    facts : array_like
        Facts ``S R`` of each trial.
    results : list of dict
        Trial results (``t_99``).
    budget : int
        Success = ``t_99 <= budget`` (>= 99 % recalled within the budget).
    level : float
        Confidence level of the profile-likelihood interval.

    Returns
    -------
    dict
        ``budget`` (as given), ``facts`` (``exp`` of the fitted threshold in ``ln N``; NaN if the data
        never cross 1/2), ``ci`` (profile-likelihood interval, ``0``/``inf`` at
        the edges), ``successes``, ``trials``.

    Notes
    -----
    :func:`validation.logistic.fit_threshold` on
    ``(ln N, success)``: every seed and every ``N`` in one likelihood.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked
    """
    s = np.array([_success(r, budget) for r in results])
    f = fit_threshold(np.log(np.asarray(facts, float)), s, level=level)
    ex = lambda v: float(math.exp(v)) if math.isfinite(v) else (0.0 if v < 0 else math.inf)
    return {"budget": int(budget), "facts": ex(f.threshold) if math.isfinite(f.threshold)
            else math.nan, "ci": [ex(f.ci_low), ex(f.ci_high)], "successes": int(s.sum()),
            "trials": int(s.size)}


def _fpp_base(cfg, plan):
    d, a, b, steps = cfg
    d, H, d_h, m = shape_of(d, a, b)
    return {"d": d, "H": H, "d_h": d_h, "m": m, "D": plan["D"], "T": plan["T"],
            "batch": plan["batch"], "lr": float(plan["lr"]),
            "schedule": plan.get("schedule", "constant"),
            "steps": int(steps), "eval_every": plan["eval_every"],
            "eval_repeats": plan["eval_repeats"]}


def _n0(cfg, plan):
    d, H, d_h, m = shape_of(*cfg[:3])
    return plan["rate0"] * OneLayerTransformer.count_params(d, H, d_h, m)


def _paths(plan, ok):
    """Every adaptive path given the stored records ``ok`` (key -> record): the list of
    (config, seed, tested {k: (params, result)}, next params or None).  ``tested`` holds
    every stored trial of the path's configuration and seed that sits on the grid, so the
    next index is decided from everything known (a change of the search rule reuses the
    trials already made)."""
    from validation.engine import trial_key

    out = []
    for cfg in plan["configs"]:
        base, n0 = _fpp_base(cfg, plan), _n0(cfg, plan)
        grid = {}
        for k in range(-24, 40):
            grid.setdefault(grid_facts(k, n0, plan["ratio"]), k)
        starts = plan.get("starts", {}).get(cfg, plan["start"])
        for s in range(plan["seeds"]):
            start = starts[s % len(starts)]
            tested = {}
            for f, k in grid.items():
                p = dict(base, facts=f, seed=s)
                rec = ok.get(trial_key(p, tc.transformer_budget_trial))
                if rec is not None:
                    tested[k] = (p, rec["result"])
            k = next_grid_index({j: _success(r, base["steps"]) for j, (_, r) in tested.items()},
                                start, max_trials=plan["max_trials"],
                                step=plan.get("step", 4))
            nxt = None
            if k is not None:
                f = grid_facts(k, n0, plan["ratio"])
                if grid.get(f) == k:     # else the split maps two grid points onto one task
                    nxt = dict(base, facts=f, seed=s)
            out.append((cfg, s, tested, nxt))
    return out


def _store_ok(path):
    from validation.engine import read_store

    if not Path(path).exists():
        return {}
    return read_store(path, warn=False).ok


def fpp_records(store_dir=tc.STORE_DIR, plan=FPP_PLAN):
    """Read the stored facts-per-parameter trials and count the unfinished paths.

    Parameters
    ----------
    store_dir : path
        Directory of the JSONL stores (default: the package's
        ``validation/factual_recall/stored/``).
        The store read is ``plan["store"]`` (default ``facts_per_param.jsonl``).
    plan : dict
        Study plan, :data:`FPP_PLAN` or :data:`FPP_COSINE_PLAN` (its ``configs``,
        ``seeds``, ``ratio``, ``start``, ``max_trials`` and run settings).

    Returns
    -------
    records : dict
        Per config tuple with at least one stored trial, the list of
        ``(params, result)`` of every stored trial of that configuration (any
        ``N``, seeds of the plan), whether or not the current search rule
        visits it, sorted by seed then facts.
    pending : int
        Paths whose next trial is not stored yet.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked
    """
    ok = _store_ok(Path(store_dir) / plan.get("store", _FPP_STORE))
    paths = _paths(plan, ok)
    recs = {}
    for cfg in plan["configs"]:
        base = _fpp_base(cfg, plan)
        got = [(r["params"], r["result"]) for r in ok.values()
               if r["params"]["seed"] < plan["seeds"]
               and all(r["params"].get(k) == v for k, v in base.items())]
        if got:
            recs[cfg] = sorted(got, key=lambda pr: (pr[0]["seed"], pr[0]["facts"]))
    return recs, sum(1 for *_, n in paths if n is not None)


def run_fpp(store_dir=tc.STORE_DIR, plan=FPP_PLAN, *, workers=1, max_rounds=20,
            progress=True):
    """Run (resume) the adaptive facts-per-parameter study round by round.

    Parameters
    ----------
    store_dir : path
        Directory of the JSONL stores (default: the package's
        ``validation/factual_recall/stored/``).
        New trials are appended to ``plan["store"]`` (default
        ``facts_per_param.jsonl``), which is created if missing.
    plan : dict
        Study plan, :data:`FPP_PLAN` or :data:`FPP_COSINE_PLAN`.
    workers : int
        Worker processes for the sweep (1: run in this process).
    max_rounds : int
        Most rounds; each round runs the next trial of every unfinished path.
    progress : bool
        Print the sweep's progress lines and summary line on stderr.

    Returns
    -------
    dict
        ``records`` and ``pending`` as returned by :func:`fpp_records` after the
        last round (``pending > 0`` if ``max_rounds`` stopped the search).

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked
    """
    from validation.engine import run_sweep

    path = Path(store_dir) / plan.get("store", _FPP_STORE)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(max_rounds):
        todo = [n for *_, n in _paths(plan, _store_ok(path)) if n is not None]
        if not todo:
            break
        run_sweep(tc.transformer_budget_trial, todo, store=path, workers=workers,
                  executor="processes" if workers > 1 else "inprocess", progress=progress,
                  label="facts-per-param")
    recs, pending = fpp_records(store_dir, plan)
    return {"records": recs, "pending": pending}


def scan_plans(settings=FPP_SCAN_SETTINGS, configs=FPP_SCAN_CONFIGS):
    """Build the plans of the optimiser scan: one per ``(lr, batch)`` setting.

    Parameters
    ----------
    settings : sequence of tuple
        ``(lr, batch)`` or ``(lr, batch, configs)``: Adam learning rate (peak of
        the cosine schedule), batch size and the configurations scanned at that
        setting (default :data:`FPP_SCAN_SETTINGS`).
    configs : sequence of tuple
        Configurations ``(d, H d_h / d, m / d, steps)`` of a setting that names
        none (default :data:`FPP_SCAN_CONFIGS`).

    Returns
    -------
    list of dict
        Plans for :func:`run_fpp` / :func:`fpp_records`: :data:`FPP_COSINE_ALL_PLAN`
        with the setting's ``lr``, ``batch`` and configurations and the
        store ``fpp_optimizer_scan.jsonl`` (one store for every setting; the
        trial parameters tell the settings apart).

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#optimiser-scan-and-best-of-optimisers-capacity

    Examples
    --------
    >>> [(p["lr"], p["batch"], p["schedule"]) for p in scan_plans()][:2]
    [(0.003, 256, 'cosine'), (0.01, 1024, 'cosine')]
    """
    return [dict(FPP_COSINE_ALL_PLAN, lr=float(st[0]), batch=int(st[1]),
                 configs=tuple(st[2] if len(st) > 2 else configs),
                 store="fpp_optimizer_scan.jsonl") for st in settings]


def _through_origin(x, y, sig, level=0.95):
    """Weighted slope of ``y = c x`` with a CI widened by the reduced chi-square."""
    x, y, sig = (np.asarray(v, float) for v in (x, y, sig))
    w = 1.0 / sig ** 2
    c = float(np.sum(w * x * y) / np.sum(w * x * x))
    se = math.sqrt(1.0 / np.sum(w * x * x))
    n = len(x)
    chi2 = float(np.sum(w * (y - c * x) ** 2))
    red = chi2 / (n - 1) if n > 1 else math.nan
    se_eff = se * math.sqrt(max(1.0, red)) if n > 1 else se
    q = stats.t.ppf(0.5 + level / 2, n - 1) if n > 2 else stats.norm.ppf(0.5 + level / 2)
    return {"slope": c, "stderr": se_eff, "ci": [c - q * se_eff, c + q * se_eff],
            "chi2_red": red, "n": n}


def _log_ratio_fit(x, y, sig_ln, level=0.95):
    """``y = c x`` fitted in logs: weighted mean of ``ln(y / x)`` (weights ``1 / sig_ln^2``),
    CI widened by the reduced chi-square (relative errors, no bias toward small ``y``)."""
    r = np.log(np.asarray(y, float) / np.asarray(x, float))
    w = 1.0 / np.asarray(sig_ln, float) ** 2
    mu = float(np.sum(w * r) / np.sum(w))
    n = len(r)
    se = math.sqrt(1.0 / np.sum(w))
    red = float(np.sum(w * (r - mu) ** 2)) / (n - 1) if n > 1 else math.nan
    se_eff = se * math.sqrt(max(1.0, red)) if n > 1 else se
    q = stats.t.ppf(0.5 + level / 2, n - 1) if n > 2 else stats.norm.ppf(0.5 + level / 2)
    return {"slope": math.exp(mu), "stderr_ln": se_eff,
            "ci": [math.exp(mu - q * se_eff), math.exp(mu + q * se_eff)], "chi2_red": red,
            "n": n}


def summarize_fpp(records, plan=FPP_PLAN, level=0.95):
    """Per-configuration capacities, the budget study and the facts-vs-parameters slope.

    Parameters
    ----------
    records : dict
        From :func:`fpp_records` / :func:`run_fpp`.
    plan : dict
        The plan the records were made with (its ``configs``, ``D``, ``T``,
        ``batch``, ``lr`` and ``eval_every``).
    level : float
        Confidence level of every interval (capacities, slope, exponent).

    Returns
    -------
    dict
        ``configs``: per configuration ``d, H, d_h, m``, ratios, ``params``,
        ``steps``, ``capacity`` (:func:`fit_capacity` at the full budget),
        ``facts_per_param`` and ``bits_per_param`` (``facts log2(D) / params``)
        with CIs, ``budgets`` (the fit at ``steps / 8, / 4, / 2`` rounded down to the evaluation grid, and ``steps``) and
        ``converged`` (smallest budget from which every larger budget's
        capacity lies in its CI; None if none); ``slope``: facts = ``c`` params
        fitted in logs over the configurations with a finite CI (weighted mean of
        ``ln(facts / params)``, weights from the CI in ``ln N``, CI widened by the
        reduced chi-square; ``slope["linear"]`` is the weighted least-squares
        fit through the origin in linear scale, which with relative errors
        favours the configurations with fewer facts); ``exponent``: OLS slope of
        ``ln facts`` against ``ln params`` with its CI; ``value`` / ``ci`` (the
        slope), ``bits_per_param`` (slope times ``log2 D``) and
        ``bits_per_param_ci``, ``best`` (largest per-configuration facts /
        parameter), ``paper`` (0.15, the paper's facts per parameter), ``D``,
        ``T``, ``batch``, ``lr`` (from the plan).  With fewer than two
        configurations with a finite CI, ``slope`` is None and ``value``,
        ``ci``, ``bits_per_param`` are NaN; with fewer than three,
        ``exponent`` is None.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked
    """
    D = plan["D"]
    rows = []
    for cfg in plan["configs"]:
        recs = records.get(cfg, [])
        if not recs:
            continue
        d, H, d_h, m = shape_of(*cfg[:3])
        steps = cfg[3]
        P = OneLayerTransformer.count_params(d, H, d_h, m)
        facts = [p["facts"] for p, _ in recs]
        res = [r for _, r in recs]
        ev = plan["eval_every"]
        buds = [fit_capacity(facts, res, b, level) for b in
                sorted({max(ev, steps // k // ev * ev) for k in (8, 4, 2)} | {steps})]
        cap = buds[-1]
        conv = tc._converged([{"budget": b["budget"], "threshold": b["facts"],
                               "ci_low": b["ci"][0], "ci_high": b["ci"][1]} for b in buds])
        rows.append({"d": d, "H": H, "d_h": d_h, "m": m, "attn_ratio": cfg[1],
                     "mlp_ratio": cfg[2], "params": P, "steps": steps, "capacity": cap,
                     "facts": cap["facts"], "ci": cap["ci"],
                     "facts_per_param": cap["facts"] / P,
                     "facts_per_param_ci": [c / P for c in cap["ci"]],
                     "bits_per_param": cap["facts"] * math.log2(D) / P,
                     "bits_per_param_ci": [c * math.log2(D) / P for c in cap["ci"]],
                     "budgets": buds, "converged": conv,
                     "cpu_seconds": float(sum(r.get("cpu_seconds", 0.0) for r in res)),
                     "trials": len(recs),
                     "seeds": len({p["seed"] for p, _ in recs})})
    out = {"configs": rows, "D": D, "T": plan["T"], "batch": plan["batch"], "lr": plan["lr"],
           "paper": 0.15, "best": max((r["facts_per_param"] for r in rows
                                       if math.isfinite(r["facts"])), default=math.nan)}
    out.update(_slope_block(rows, D, level))
    return out


def _slope_block(rows, D, level):
    """Slope facts = c params over the rows with a finite CI (see :func:`summarize_fpp`)."""
    good = [r for r in rows if math.isfinite(r["facts"]) and 0 < r["ci"][0]
            and math.isfinite(r["ci"][1])]
    out = {"value": math.nan, "ci": [math.nan, math.nan], "bits_per_param": math.nan,
           "slope": None, "exponent": None}
    if len(good) >= 2:
        x = [r["params"] for r in good]
        y = [r["facts"] for r in good]
        sig_ln = [(math.log(r["ci"][1]) - math.log(r["ci"][0]))
                  / (2 * stats.norm.ppf(0.5 + level / 2)) for r in good]
        sl = _log_ratio_fit(x, y, sig_ln, level)
        sl["linear"] = _through_origin(x, y, [v * s_ for v, s_ in zip(y, sig_ln)], level)
        out.update(slope=sl, value=sl["slope"], ci=sl["ci"],
                   bits_per_param=sl["slope"] * math.log2(D),
                   bits_per_param_ci=[c * math.log2(D) for c in sl["ci"]])
        if len(good) >= 3:
            out["exponent"] = tc._ols(np.log(x), np.log(y), level=level)
    return out


def search_criterion(records):
    """What a binary search's "largest N that passed" reports, against the 50 % point.

    Parameters
    ----------
    records : list of (params, result)
        Stored trials of one configuration and one optimiser setting (every
        seed), e.g. one value of :func:`fpp_records`; ``params`` holds
        ``facts``, ``seed`` and ``steps`` (success = ``t_99 <= steps``).

    Returns
    -------
    dict
        ``per_seed``: per seed the largest ``N`` that passed (``largest_pass``;
        NaN if none), the smallest that failed (``smallest_fail``; NaN if
        none) and ``bracket_mid``, the geometric midpoint of the largest pass
        and the smallest failure above it (the seed's own threshold without the
        grid's rounding down; NaN unless both exist); ``one_search``: geometric
        mean over seeds of ``largest_pass`` (what one search reports, on
        average), ``one_search_mid`` the same of ``bracket_mid``;
        ``best_of_searches``: the largest
        pass over all seeds (the best of several searches, as the paper's best
        of three learning rates); ``capacity_50``: :func:`fit_capacity` at the
        full budget (``facts`` and ``ci``); ``one_search_over_50``,
        ``one_search_mid_over_50`` and ``best_of_searches_over_50``: the
        ratios to the 50 % point.

    Notes
    -----
    On a path that brackets and then bisects a monotone threshold, the
    largest pass is the last grid point below the first failure, i.e. up to
    one grid step (``2^(1/4)``) below the path's own threshold.  A search
    reports its own draw of the task and the initialisation, so when outcomes
    vary between draws (a logistic of width ``w`` in ``ln N``) the largest
    pass of a lucky seed can lie above the 50 % point of all draws, and the
    best of several searches more so.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#search-criterion-against-the-50-point

    Examples
    --------
    >>> recs = [({"facts": f, "seed": s, "steps": 100}, {"t_99": 50 if f <= c else None})
    ...         for s, c in ((0, 100), (1, 150)) for f in (64, 100, 150, 200)]
    >>> r = search_criterion(recs)
    >>> r["per_seed"][1]["largest_pass"], r["best_of_searches"]
    (150, 150)
    """
    per = []
    for sd in sorted({p["seed"] for p, _ in records}):
        got = [(p["facts"], _success(r, p["steps"])) for p, r in records if p["seed"] == sd]
        ok = [f for f, s_ in got if s_]
        bad = [f for f, s_ in got if not s_]
        lo = max(ok) if ok else math.nan
        hi = min((f for f in bad if not f < lo), default=math.nan)
        per.append({"seed": sd, "largest_pass": lo, "smallest_fail": min(bad) if bad else
                    math.nan, "bracket_mid": math.sqrt(lo * hi)})

    def gmean(key):
        v = np.array([q[key] for q in per], float)
        return float(np.exp(np.mean(np.log(v)))) if v.size and np.all(np.isfinite(v)) \
            else math.nan

    one, mid = gmean("largest_pass"), gmean("bracket_mid")
    best = max((q["largest_pass"] for q in per if math.isfinite(q["largest_pass"])),
               default=math.nan)
    cap = fit_capacity([p["facts"] for p, _ in records],
                       [dict(r, t_99=r["t_99"] if _success(r, p["steps"]) else None)
                        for p, r in records], max(p["steps"] for p, _ in records))
    c50 = cap["facts"]
    fin = math.isfinite(c50) and c50 > 0
    return {"per_seed": per, "one_search": one, "one_search_mid": mid,
            "best_of_searches": best, "capacity_50": {"facts": c50, "ci": cap["ci"]},
            "one_search_over_50": one / c50 if fin else math.nan,
            "one_search_mid_over_50": mid / c50 if fin else math.nan,
            "best_of_searches_over_50": best / c50 if fin else math.nan}


def optimizer_settings():
    """Every optimiser setting of the facts-per-parameter studies, with its plan.

    Returns
    -------
    list of dict
        ``schedule``, ``lr``, ``batch``, ``plan`` (:data:`FPP_PLAN`,
        :data:`FPP_COSINE_ALL_PLAN`, then the plans of :func:`scan_plans`, those
        of one ``(lr, batch)`` merged into one plan over their configurations).

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#optimiser-scan-and-best-of-optimisers-capacity

    Examples
    --------
    >>> [(s["schedule"], s["lr"], s["batch"]) for s in optimizer_settings()][:3]
    [('constant', 0.01, 256), ('cosine', 0.01, 256), ('cosine', 0.003, 256)]
    """
    out = [{"schedule": "constant", "lr": float(FPP_PLAN["lr"]), "batch": FPP_PLAN["batch"],
            "plan": FPP_PLAN},
           {"schedule": "cosine", "lr": float(FPP_COSINE_ALL_PLAN["lr"]),
            "batch": FPP_COSINE_ALL_PLAN["batch"], "plan": FPP_COSINE_ALL_PLAN}]
    merged = {}     # scan settings named twice (for different configurations) are one setting
    for pl in scan_plans():
        key = (pl["lr"], pl["batch"])
        if key in merged:
            merged[key] = dict(merged[key], configs=merged[key]["configs"]
                               + tuple(c for c in pl["configs"] if c not in merged[key]["configs"]))
        else:
            merged[key] = pl
    out += [{"schedule": "cosine", "lr": pl["lr"], "batch": pl["batch"], "plan": pl}
            for pl in merged.values()]
    return out


def summarize_optimizers(store_dir=tc.STORE_DIR, level=0.95):
    """Capacity per configuration and optimiser setting, the best of them, and the slope.

    Parameters
    ----------
    store_dir : path
        Directory of the JSONL stores (default: the package's
        ``validation/factual_recall/stored/``): ``facts_per_param.jsonl``,
        ``facts_per_param_cosine.jsonl`` and ``fpp_optimizer_scan.jsonl``.
    level : float
        Confidence level of the intervals.

    Returns
    -------
    dict
        ``configs``: per configuration of :data:`FPP_PLAN` (``d, H, d_h, m``,
        ratios, ``params``, ``steps``) the list ``settings`` (per optimiser
        setting with stored trials: ``schedule``, ``lr``, ``batch``, ``facts``,
        ``ci``, ``facts_per_param``, ``trials``, ``cpu_seconds`` and ``search``,
        :func:`search_criterion` of that setting), ``best`` (the setting with
        the largest finite capacity with a finite CI), ``constant_over_best``,
        ``largest_pass`` (the largest ``N`` that passed in any search of any
        setting: the paper's criterion with the best of every setting) and
        ``largest_pass_over_best``; ``slope``: :func:`summarize_fpp`'s slope
        block (``value``, ``ci``, ``bits_per_param``, ``slope``, ``exponent``)
        with the best capacity per configuration; ``search_slope``: the same
        with ``largest_pass`` per configuration (its CI taken from the best
        setting's relative CI);
        ``pending``: unfinished search paths per setting; ``paper``: 0.15.

    Notes
    -----
    The best of several noisy capacities is biased upward (the maximum of
    estimates with +-20-30 % intervals); the intervals given are those of the
    chosen setting's own fit, not corrected for the choice.  The paper makes
    the same choice (best of three learning rates).

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#optimiser-scan-and-best-of-optimisers-capacity
    """
    D = FPP_PLAN["D"]
    rows = {cfg: None for cfg in FPP_PLAN["configs"]}
    pending = []
    for st in optimizer_settings():
        recs, pend = fpp_records(store_dir, st["plan"])
        pending.append({k: st[k] for k in ("schedule", "lr", "batch")} | {"pending": pend})
        summ = summarize_fpp(recs, st["plan"], level)
        for cfg, r in zip([c for c in st["plan"]["configs"] if c in recs], summ["configs"]):
            if cfg not in rows:
                continue
            if rows[cfg] is None:
                rows[cfg] = {k: r[k] for k in ("d", "H", "d_h", "m", "attn_ratio",
                                               "mlp_ratio", "params", "steps")}
                rows[cfg]["settings"] = []
            rows[cfg]["settings"].append(
                {"schedule": st["schedule"], "lr": st["lr"], "batch": st["batch"],
                 "facts": r["facts"], "ci": r["ci"], "facts_per_param": r["facts_per_param"],
                 "facts_per_param_ci": r["facts_per_param_ci"], "trials": r["trials"],
                 "cpu_seconds": r["cpu_seconds"], "search": search_criterion(recs[cfg])})
    out = []
    for cfg, row in rows.items():
        if row is None:
            continue
        ok = [q for q in row["settings"] if math.isfinite(q["facts"]) and 0 < q["ci"][0]
              and math.isfinite(q["ci"][1])]
        best = max(ok, key=lambda q: q["facts"], default=None)
        const = next((q for q in row["settings"] if q["schedule"] == "constant"), None)
        row["best"] = best
        row["constant_over_best"] = (const["facts"] / best["facts"]
                                     if best and const else math.nan)
        row["largest_pass"] = max((q["search"]["best_of_searches"] for q in row["settings"]
                                   if math.isfinite(q["search"]["best_of_searches"])),
                                  default=math.nan)
        row["largest_pass_over_best"] = (row["largest_pass"] / best["facts"] if best
                                         else math.nan)
        out.append(row)
    best_rows = [dict(r, facts=r["best"]["facts"], ci=r["best"]["ci"]) for r in out
                 if r["best"] is not None]
    srows = []
    for r in out:
        b, lp = r["best"], r["largest_pass"]
        if b is None or not math.isfinite(lp):
            continue
        srows.append(dict(r, facts=lp, ci=[lp * c / b["facts"] for c in b["ci"]]))
    return {"configs": out, "slope": _slope_block(best_rows, D, level),
            "search_slope": _slope_block(srows, D, level), "pending": pending, "D": D,
            "paper": 0.15}


#: Paired schedule check (``stored/fpp_schedule_check.jsonl``): per configuration of
#: :data:`FPP_PLAN`, ``(config, facts, seed)`` of a constant-rate trial that failed just
#: above the capacity (the smallest failed ``N`` of the store when the check was set up).
SCHEDULE_CHECK = (((16, 1.0, 1.0, 6000), 100, 2), ((16, 0.25, 4.0, 6000), 110, 2),
                  ((16, 4.0, 0.25, 6000), 144, 2), ((32, 1.0, 1.0, 8000), 576, 2),
                  ((32, 0.5, 0.5, 8000), 289, 2), ((64, 0.25, 0.25, 12000), 576, 2),
                  ((64, 1.0, 1.0, 12000), 1640, 2))


def schedule_check_params(plan=FPP_PLAN, check=SCHEDULE_CHECK):
    """Build the parameter records of the paired cosine-schedule check.

    The trials of ``check`` are rerun with the cosine schedule (5 % warm-up,
    decay to 1 %) at the same budget.

    Parameters
    ----------
    plan : dict
        Plan of the constant-rate study the check pairs with (:data:`FPP_PLAN`);
        gives the shared run settings.
    check : sequence of (config, facts, seed)
        Trials to rerun: ``config`` as in ``plan["configs"]``, the number of
        facts and the seed (default :data:`SCHEDULE_CHECK`).

    Returns
    -------
    list of dict
        Parameter records (``schedule="cosine"``); the task, initialisation and
        batches are those of the constant-rate trial (same seed and sizes), so only
        the learning-rate schedule differs.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked
    """
    return [dict(_fpp_base(cfg, plan), facts=int(f), seed=int(s), schedule="cosine")
            for cfg, f, s in check]


def run_schedule_check(store_dir=tc.STORE_DIR, plan=FPP_PLAN, *, workers=1, compute=True,
                       progress=True):
    """Run (resume) or read back the paired cosine-schedule check.

    Parameters
    ----------
    store_dir : path
        Directory of the JSONL stores (default: the package's
        ``validation/factual_recall/stored/``).
        The cosine trials live in ``fpp_schedule_check.jsonl``, their
        constant-rate partners are read from ``facts_per_param.jsonl``.
    plan : dict
        Plan of the constant-rate study (:data:`FPP_PLAN`); the trials are those
        of :data:`SCHEDULE_CHECK`.
    workers : int
        Worker processes for the sweep (1: run in this process).
    compute : bool
        False: read the stored trials only (``stored/fpp_schedule_check.jsonl``).
    progress : bool
        Print the sweep's progress lines and summary line on stderr.

    Returns
    -------
    list of dict
        One per configuration: ``d, H, d_h, m, facts, seed, steps``, ``constant``
        (final accuracy, ``t_99`` of the constant-rate trial) and ``cosine`` (the
        same for the cosine run); a key is absent while its trial is not stored.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked
    """
    from validation.engine import run_sweep, trial_key

    path = Path(store_dir) / "fpp_schedule_check.jsonl"
    params = schedule_check_params(plan)
    if compute and params:
        path.parent.mkdir(parents=True, exist_ok=True)
        run_sweep(tc.transformer_budget_trial, params, store=path, workers=workers,
                  executor="processes" if workers > 1 else "inprocess", progress=progress,
                  label="schedule-check")
    ok, base = _store_ok(path), _store_ok(Path(store_dir) / _FPP_STORE)
    out = []
    for p in params:
        row = {k: p[k] for k in ("d", "H", "d_h", "m", "facts", "seed", "steps")}
        c = base.get(trial_key(dict(p, schedule="constant"), tc.transformer_budget_trial))
        r = ok.get(trial_key(p, tc.transformer_budget_trial))
        for name, rec in (("constant", c), ("cosine", r)):
            if rec is not None:
                row[name] = {"final_accuracy": rec["result"]["accuracy"][-1],
                             "t_99": rec["result"]["t_99"]}
        out.append(row)
    return out


# ----------------------------------------------------------------------------- trade-off

def tradeoff_params(plan=TRADEOFF_PLAN):
    """Parameter records of the trade-off grid (every ``H``, ``m`` and seed).

    Parameters
    ----------
    plan : dict
        Trade-off plan (:data:`TRADEOFF_PLAN`): ``d``, ``d_h``, the grids ``H`` and
        ``m``, ``facts``, ``seeds`` and the run settings.

    Returns
    -------
    list of dict
        Records for :func:`validation.factual_recall.theory_check.transformer_budget_trial`,
        one per seed, ``H`` and ``m`` (seed outermost), constant learning rate.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """
    out = []
    for s in range(plan["seeds"]):     # seed outermost: an interrupted run leaves whole grids
        for H in plan["H"]:
            for m in plan["m"]:
                out.append({"d": plan["d"], "H": H, "d_h": plan["d_h"], "m": m,
                            "facts": plan["facts"], "D": plan["D"], "T": plan["T"],
                            "batch": plan["batch"], "lr": float(plan["lr"]),
                            "schedule": "constant", "steps": plan["steps"],
                            "eval_every": plan["eval_every"],
                            "eval_repeats": plan["eval_repeats"], "seed": s})
    return out


def run_tradeoff(store_dir=tc.STORE_DIR, plan=TRADEOFF_PLAN, *, workers=1, compute=True,
                 progress=True):
    """Run (resume) or read back the trade-off grid.

    Parameters
    ----------
    store_dir : path
        Directory of the JSONL stores (default: the package's
        ``validation/factual_recall/stored/``).
        The grid is stored in ``tradeoff.jsonl`` (created if missing).
    plan : dict
        Trade-off plan (:data:`TRADEOFF_PLAN`).
    workers : int
        Worker processes for the sweep (1: run in this process).
    compute : bool
        False: read the stored trials only.
    progress : bool
        Print the sweep's progress lines and summary line on stderr.

    Returns
    -------
    list of (params, result)
        The grid's trials that finished without error, in the order of
        :func:`tradeoff_params`; with ``compute=False`` the trials not stored
        yet are left out.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """
    from validation.engine import run_sweep, trial_key

    path = Path(store_dir) / _TRADEOFF_STORE
    params = tradeoff_params(plan)
    if compute:
        path.parent.mkdir(parents=True, exist_ok=True)
        recs = run_sweep(tc.transformer_budget_trial, params, store=path, workers=workers,
                         executor="processes" if workers > 1 else "inprocess",
                         progress=progress, label="tradeoff")
        return [(r["params"], r["result"]) for r in recs if r["status"] == "ok"]
    ok = _store_ok(path)
    out = []
    for p in params:
        r = ok.get(trial_key(p, tc.transformer_budget_trial))
        if r is not None:
            out.append((r["params"], r["result"]))
    return out


def _combine(A, M, ca, cm, p):
    a, m = ca * np.asarray(A, float), cm * np.asarray(M, float)
    if math.isinf(p):
        return np.maximum(a, m)
    hi = np.maximum(np.maximum(a, m), 1e-300)
    return hi * ((a / hi) ** p + (m / hi) ** p) ** (1.0 / p)


def _nll(theta, A, M, y, n, p):
    lca, lcm, lw = theta
    cap = np.maximum(_combine(A, M, math.exp(lca), math.exp(lcm), p), 1e-300)
    z = (np.log(cap) - math.log(n)) / math.exp(lw)
    # log sigma(z) and log sigma(-z), stably
    return float(np.sum(np.where(y, np.logaddexp(0, -z), np.logaddexp(0, z))))


def _fit_p(A, M, y, n_facts, p, x0s=None):
    """Minimum of :func:`_nll` over ``(ln c_a, ln c_m, ln w)`` at exponent ``p``."""
    top = None
    for x0 in x0s or [[a, b, math.log(0.2)] for a in (-4.0, -2.0) for b in (-4.0, -2.0)]:
        r = optimize.minimize(_nll, x0, args=(A, M, y, n_facts, p), method="Nelder-Mead",
                              options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 4000})
        if top is None or r.fun < top.fun:
            top = r
    return top


def _profile_nll(i, v, theta, A, M, y, n_facts, p):
    """Profile of :func:`_nll` with coordinate ``i`` of ``theta`` held at ``v``: the minimum
    over the other two, started from ``theta`` (the MLE or the previous profile point)."""
    free = [j for j in range(3) if j != i]

    def f(u):
        t = np.empty(3)
        t[i], t[free] = v, u
        return _nll(t, A, M, y, n_facts, p)

    r = optimize.minimize(f, np.asarray(theta, float)[free], method="Nelder-Mead",
                          options={"xatol": 1e-7, "fatol": 1e-9, "maxiter": 4000})
    t = np.asarray(theta, float).copy()
    t[i], t[free] = v, r.x
    return float(r.fun), t


def _profile_interval(i, theta, nll_min, A, M, y, n_facts, p, level, span=8.0):
    """Profile-likelihood interval of ``exp(theta[i])``: the ``v`` with
    ``2 (profile(v) - nll_min) <= chi2_1(level)``; walks out from the MLE by doubling steps
    (0.02 .. ``span`` in the log) and refines each crossing with Brent's method; ``0`` /
    ``inf`` where the profile stays inside the cut up to ``span`` (a factor ``e^span``)."""
    cut = stats.chi2.ppf(level, 1) / 2
    out = []
    for sgn in (-1.0, 1.0):
        t_in, v_in, v_out, step = np.asarray(theta, float), float(theta[i]), None, 0.02
        while step <= span:
            v = float(theta[i]) + sgn * step
            g, t = _profile_nll(i, v, t_in, A, M, y, n_facts, p)
            if g - nll_min > cut:
                v_out = v
                break
            t_in, v_in, step = t, v, 2 * step
        if v_out is None:
            out.append(0.0 if sgn < 0 else math.inf)
            continue
        t0 = t_in
        h = lambda v: _profile_nll(i, v, t0, A, M, y, n_facts, p)[0] - nll_min - cut
        out.append(math.exp(optimize.brentq(h, min(v_in, v_out), max(v_in, v_out),
                                            xtol=1e-5)))
    return out


def fit_boundary(A, M, success, n_facts, *, ps=(1.0, 1.5, 2.0, 3.0, 5.0, 10.0, math.inf),
                 ci_ps=(1.0, math.inf), level=0.95):
    """Iso-capacity boundary ``((c_a A)^p + (c_m M)^p)^(1/p) = N``, fitted per ``p``.

    Parameters
    ----------
    A, M : array_like
        Attention and MLP parameters of each trial.
    success : array_like of bool
        Trial stored the ``n_facts`` facts (>= 99 %).
    n_facts : int
        Number of facts ``N`` every trial had to store.
    ps : sequence of float
        Exponents profiled; ``1`` is the additive law, ``inf`` the max law.
    ci_ps : sequence of float
        Exponents (among ``ps``) whose ``c_a`` and ``c_m`` get profile-likelihood
        intervals (default: the additive and the max law).
    level : float
        Confidence level of those intervals.

    Returns
    -------
    dict
        ``fits``: per ``p`` the maximum-likelihood ``c_a``, ``c_m``, ``width``
        and ``loglik``, and for ``p`` in ``ci_ps`` also ``c_a_ci`` and
        ``c_m_ci`` (profile-likelihood intervals at ``level``; ``0`` / ``inf``
        where the profile does not leave the cut within a factor ``e^8``);
        ``ci_level``; ``best_p``; ``additive_vs_max`` (``loglik(1) -
        loglik(inf)``, positive favours the additive law); ``p_ci`` (the ``p``
        values within ``chi2_1(0.95) / 2`` of the best log-likelihood),
        ``n_trials`` and ``n_facts``.  ``additive_vs_max`` is NaN unless ``ps``
        holds both ``1`` and ``inf``.

    Notes
    -----
    ``P(success) = sigma((ln C(A, M) - ln N) / w)`` with capacity ``C`` the
    ``l_p`` combination of ``c_a A`` and ``c_m M``.  Both laws have the same
    number of free parameters (``c_a, c_m, w``), so their log-likelihoods are
    compared directly; a difference above ``chi2_1(0.95)/2 = 1.92`` is the
    usual profile-likelihood 95 % statement about ``p``.  The interval of
    ``c_a`` at fixed ``p`` is ``{c_a : max_{c_m, w} l >= l_max - chi2_1(level)/2}``
    (Wilks), likewise for ``c_m``; the profile maximum is found by Nelder-Mead
    over the other two parameters and the crossing by Brent's method.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """
    A, M = np.asarray(A, float), np.asarray(M, float)
    y = np.asarray(success, bool)
    fits = {}
    best = None
    for p in ps:
        top = _fit_p(A, M, y, n_facts, p)
        lca, lcm, lw = top.x
        key = "inf" if math.isinf(p) else f"{p:g}"
        fits[key] = {"p": p, "c_a": math.exp(lca), "c_m": math.exp(lcm),
                     "width": math.exp(lw), "loglik": -float(top.fun)}
        if p in ci_ps:
            fits[key]["c_a_ci"] = _profile_interval(0, top.x, top.fun, A, M, y, n_facts, p,
                                                    level)
            fits[key]["c_m_ci"] = _profile_interval(1, top.x, top.fun, A, M, y, n_facts, p,
                                                    level)
        if best is None or fits[key]["loglik"] > fits[best]["loglik"]:
            best = key
    lmax = fits[best]["loglik"]
    cut = stats.chi2.ppf(0.95, 1) / 2
    return {"fits": fits, "best_p": fits[best]["p"], "ci_level": level,
            "additive_vs_max": fits["1"]["loglik"] - fits["inf"]["loglik"]
            if "1" in fits and "inf" in fits else math.nan,
            "p_ci": [fits[k]["p"] for k in fits if fits[k]["loglik"] >= lmax - cut],
            "n_trials": int(y.size), "n_facts": int(n_facts)}


def summarize_tradeoff(records, plan=TRADEOFF_PLAN):
    """Accuracy / success map of the trade-off grid and its boundary fit.

    Parameters
    ----------
    records : list of (params, result)
        Trials of the trade-off grid, e.g. from :func:`run_tradeoff`.
    plan : dict
        The plan the records were made with (:data:`TRADEOFF_PLAN`): its ``d``,
        ``d_h``, grids ``H`` and ``m``, ``facts`` and run settings.

    Returns
    -------
    dict
        ``grid``: ``H``, ``m``, ``attention_params`` (``4 H d_h d``),
        ``mlp_params`` (``2 m d``), ``accuracy`` (mean final accuracy per cell,
        [i_H][i_m]), ``success`` (fraction of seeds with >= 99 %), ``trials``
        (count per cell; empty cells have NaN accuracy and success), and ``d``,
        ``d_h``, ``facts``, ``T``, ``D``, ``steps``, ``batch``, ``lr``;
        ``routing``: ``H`` of the smallest attention row in which the widest
        MLP stores the facts in at least half of the seeds (below it the MLP
        cannot help: not enough of the subject and relation reaches EOS; None
        if no row qualifies) and its attention parameters; ``boundary_fit``:
        :func:`fit_boundary` on the rows from that one up (every ``m``,
        including ``m = 0``); ``boundary_fit_all``: the same on every row.
        A fit is None when its trials are all successes or all failures
        (``boundary_fit`` also when there is no routing row).

    Notes
    -----
    The "MLP only" end of the trade-off is the routing row: the smallest
    attention of the grid that brings enough of the subject and relation to
    the EOS position for the MLP to store the facts.  Fitting the boundary
    law on rows below it would mix the routing cut (a different mechanism)
    into the additive-versus-max question.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """
    d, d_h = plan["d"], plan["d_h"]
    Hs, ms = list(plan["H"]), list(plan["m"])
    acc = np.full((len(Hs), len(ms)), np.nan)
    suc = np.full((len(Hs), len(ms)), np.nan)
    cnt = np.zeros((len(Hs), len(ms)), int)
    A, M, Y = [], [], []
    facts = None
    for p, r in records:
        i, j = Hs.index(p["H"]), ms.index(p["m"])
        facts = r["facts"]
        a = float(r["accuracy"][-1])
        ok = _success(r, p["steps"])
        acc[i, j] = a if cnt[i, j] == 0 else acc[i, j] + a
        suc[i, j] = ok if cnt[i, j] == 0 else suc[i, j] + ok
        cnt[i, j] += 1
        A.append(OneLayerTransformer.count_params(d, p["H"], d_h, 0))
        M.append(OneLayerTransformer.count_params(d, 0, 0, p["m"]))
        Y.append(ok)
    with np.errstate(invalid="ignore"):
        acc, suc = acc / np.where(cnt, cnt, 1), suc / np.where(cnt, cnt, 1)
    acc[cnt == 0] = np.nan
    suc[cnt == 0] = np.nan
    grid = {"H": Hs, "m": ms, "d": d, "d_h": d_h, "facts": facts or plan["facts"],
            "attention_params": [OneLayerTransformer.count_params(d, H, d_h, 0) for H in Hs],
            "mlp_params": [OneLayerTransformer.count_params(d, 0, 0, m) for m in ms],
            "accuracy": acc.tolist(), "success": suc.tolist(), "trials": cnt.tolist(),
            "T": plan["T"], "D": plan["D"], "steps": plan["steps"], "batch": plan["batch"],
            "lr": plan["lr"]}
    out = {"grid": grid, "boundary_fit": None, "boundary_fit_all": None,
           "routing": {"H": None, "attention_params": None}}
    A, M, Y = np.array(A, float), np.array(M, float), np.array(Y, bool)
    route = next((i for i in range(len(Hs)) if np.isfinite(suc[i, -1]) and suc[i, -1] >= 0.5),
                 None)
    if route is not None:
        out["routing"] = {"H": Hs[route], "attention_params": grid["attention_params"][route]}
    if Y.size and Y.any() and not Y.all():
        out["boundary_fit_all"] = fit_boundary(A, M, Y, grid["facts"])
        if route is not None:
            keep = A >= grid["attention_params"][route]
            if Y[keep].any() and not Y[keep].all():
                out["boundary_fit"] = fit_boundary(A[keep], M[keep], Y[keep], grid["facts"])
    return out


def main(argv=None):
    """CLI: run (resume) the named studies into ``--store-dir``; one JSON line each."""
    ap = ArgumentParser(prog="python -m validation.factual_recall.capacity_study",
                 description="Run the stored T = 32 transformer capacity studies.")
    ap.add_argument("which", nargs="+", choices=["fpp", "tradeoff", "schedule", "fpp-cosine",
                                                 "fpp-cosine-all", "fpp-scan"])
    ap.add_argument("--store-dir", default=str(tc.STORE_DIR))
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--max-rounds", type=int, default=20)
    a = ap.parse_args(argv)
    if a.workers < 1:
        print(f"{ap.prog}: error: --workers must be >= 1, got {a.workers}", file=sys.stderr)
        return 2
    if a.max_rounds < 0:
        print(f"{ap.prog}: error: --max-rounds must be >= 0, got {a.max_rounds}",
              file=sys.stderr)
        return 2
    for w in a.which:
        if w in ("fpp", "fpp-cosine", "fpp-cosine-all"):
            r = run_fpp(a.store_dir, {"fpp": FPP_PLAN, "fpp-cosine": FPP_COSINE_PLAN,
                                      "fpp-cosine-all": FPP_COSINE_ALL_PLAN}[w],
                        workers=a.workers, max_rounds=a.max_rounds)
            n = sum(len(v) for v in r["records"].values())
            print(json.dumps({"study": w, "trials": n, "pending_paths": r["pending"]}))
        elif w == "fpp-scan":
            for pl in scan_plans():
                r = run_fpp(a.store_dir, pl, workers=a.workers, max_rounds=a.max_rounds)
                n = sum(len(v) for v in r["records"].values())
                print(json.dumps({"study": w, "lr": pl["lr"], "batch": pl["batch"],
                                  "trials": n, "pending_paths": r["pending"]}), flush=True)
        elif w == "schedule":
            rows = run_schedule_check(a.store_dir, workers=a.workers)
            print(json.dumps({"study": w, "trials": len(rows)}))
        else:
            recs = run_tradeoff(a.store_dir, workers=a.workers)
            print(json.dumps({"study": w, "trials": len(recs)}))
    return 0


if __name__ == "__main__":
    from hcizz.cli import run_cli

    sys.exit(run_cli(main, prog="python -m validation.factual_recall.capacity_study"))
