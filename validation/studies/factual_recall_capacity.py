"""Transformer capacity at ``T = 32``: facts per parameter, optimisers, the attention / MLP trade-off.

Five studies, all on the trial
:func:`~validation.factual_recall.trials.transformer_budget_trial` (constant-rate or
cosine Adam on fresh batches, accuracy on every fact evaluated on a grid of steps,
stop at >= 99 %, so one run gives the outcome at every budget up to its own):

* ``factual_recall.facts_per_param`` -- for every configuration
  ``(d, H d_h / d, m / d, steps)`` of :data:`FPP_PLAN` and every seed, an
  adaptive search over the number of facts ``N`` on a geometric grid (ratio
  ``2^(1/4)``, :func:`~validation.factual_recall.search.grid_facts`): bracket
  the 99 % point by moves of four grid points (a factor 2), then bisect on the
  grid (:func:`~validation.factual_recall.search.next_grid_index`).  The
  capacity is the 50 % point of one logistic fit of success against ``ln N``
  over every seed and ``N`` (:func:`~validation.factual_recall.fits.fit_capacity`);
  :func:`summarize_fpp` gives facts / parameter, bits / parameter and the slope
  of facts against parameters;
* ``factual_recall.facts_per_param_cosine`` -- the same search with the cosine
  schedule: every configuration (``--protocol all``, :data:`FPP_COSINE_ALL_PLAN`,
  the default) or the largest one alone (``--protocol largest``,
  :data:`FPP_COSINE_PLAN`, the first run; its paths are complete and reused);
* ``factual_recall.fpp_optimizer_scan`` -- the cosine search at the peak rates
  and batch sizes of :data:`FPP_SCAN_SETTINGS`; :func:`best_of_optimizers`
  takes the best setting per configuration over the three studies and applies
  the paper's search criterion
  (docs/factual_recall.md#search-criterion-against-the-50-point);
* ``factual_recall.fpp_schedule_check`` -- per configuration, a constant-rate
  trial that failed just above its capacity, rerun with the cosine schedule
  (same task, initialisation and batches);
* ``factual_recall.tradeoff`` -- at a fixed number of facts, success on a grid
  of heads ``H`` and MLP widths ``m``
  (:data:`TRADEOFF_PLAN`); :func:`~validation.factual_recall.fits.fit_boundary`
  fits the iso-capacity boundary ``((c_a A)^p + (c_m M)^p)^(1/p) = N``.

A search runs in rounds (:meth:`FactsPerParam.execute`): each round asks for the
next trial of every unfinished path.  The next index of a path is decided from
*every* trial of its configuration and seed on the grid that its store holds
(so a change of the search rule reuses the trials made under the old one), and
the capacity fit uses every such trial; a replay reads the same store and
follows the same path without computing.

Regenerate or extend (resumable; the new store is in your folder)::

    nice -n 10 python -m validation study factual_recall.facts_per_param --workers 2
    nice -n 10 python -m validation study factual_recall.tradeoff --workers 2

The committed stores hold about an hour of CPU (facts per parameter) and
40 min (the optimiser scan, 13.2 min wall at load 4).
Docs: ``docs/factual_recall.md#facts-per-parameter-budget-checked`` and the
sections after it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result, optional
from validation.engine import trial_key
from validation.factual_recall.fits import (BoundaryFit, FactsCapacity, SearchCriterion, SlopeFit,
                                            converged_budget, fit_boundary, fit_capacity, fit_slope,
                                            search_criterion)
from validation.factual_recall.search import grid_facts, next_grid_index, shape_of
from validation.factual_recall.theory import PAPER_FACTS_PER_PARAM
from validation.factual_recall.transformer import OneLayerTransformer
from validation.factual_recall.trials import transformer_budget_trial

from .base import Option, Runner, Study, fill_doc, is_ok, ok_pairs

__all__ = ["FPP_PLAN", "FPP_COSINE_PLAN", "FPP_CONSTANT_K", "FPP_COSINE_ALL_PLAN",
           "FPP_SCAN_CONFIGS", "FPP_SCAN_SETTINGS", "TRADEOFF_PLAN", "SCHEDULE_CHECK",
           "fpp_base", "search_paths", "scan_plans", "optimizer_settings", "schedule_check_params",
           "tradeoff_params", "SearchRecords", "FppConfig", "FppSummary", "summarize_fpp",
           "SettingCapacity", "OptimizerConfig", "OptimizerSummary", "ScanSummary", "best_of_optimizers",
           "ScheduleCheckRow", "TradeoffGrid", "TradeoffSummary", "summarize_tradeoff",
           "FactsPerParam", "FactsPerParamCosine", "OptimizerScan", "ScheduleCheck", "Tradeoff",
           "STUDIES"]

#: Facts-per-parameter study: ``configs`` are ``(d, H d_h / d, m / d, steps)``;
#: ``N0 = rate0 * params`` is the grid origin, seed ``s`` starts at grid index
#: ``start[s]``.
FPP_PLAN = {"D": 8, "T": 32, "batch": 256, "lr": 0.01, "eval_every": 500, "eval_repeats": 2,
            "seeds": 3, "ratio": 2 ** 0.25, "rate0": 0.04, "start": (0, 1, -1), "max_trials": 8,
            "configs": ((16, 1.0, 1.0, 6000), (16, 0.25, 4.0, 6000), (16, 4.0, 0.25, 6000),
                        (32, 1.0, 1.0, 8000), (32, 0.5, 0.5, 8000),
                        (64, 0.25, 0.25, 12000), (64, 1.0, 1.0, 12000))}

#: The largest configuration again with the cosine schedule (5 % warm-up, decay to 1 %)
#: instead of the constant rate: same tasks, initialisations and batches per
#: ``(N, seed)``; starts near the constant-rate capacity.
FPP_COSINE_PLAN = dict(FPP_PLAN, schedule="cosine", configs=((64, 1.0, 1.0, 12000),),
                       start=(4, 5, 3))

#: Trade-off study: ``d``, ``d_h`` fixed, heads ``H`` and MLP widths ``m`` on a grid,
#: ``facts`` fixed (square split).
TRADEOFF_PLAN = {"d": 16, "d_h": 4, "H": (1, 2, 3, 4, 5, 6, 8, 16), "m": (0, 4, 8, 16, 32, 64, 128),
                 "facts": 100, "D": 8, "T": 32, "batch": 256, "lr": 0.01, "steps": 6000,
                 "eval_every": 500, "eval_repeats": 2, "seeds": 3}

#: Grid index (on the :data:`FPP_PLAN` grid) nearest to each configuration's
#: constant-rate capacity (``round(4 log2(N / N0))`` from the committed constant-rate
#: store): the optimiser searches start there.
FPP_CONSTANT_K = {(16, 1.0, 1.0, 6000): 5, (16, 0.25, 4.0, 6000): 1, (16, 4.0, 0.25, 6000): 0,
                  (32, 1.0, 1.0, 8000): 4, (32, 0.5, 0.5, 8000): 6,
                  (64, 0.25, 0.25, 12000): 4, (64, 1.0, 1.0, 12000): 2}

#: Every configuration of :data:`FPP_PLAN` with the cosine schedule (lr 0.01, batch 256),
#: stored next to the largest one (the d = 64 1/1 paths of :data:`FPP_COSINE_PLAN` are
#: complete and are reused as they are).  Paths start one and two grid points above the
#: constant-rate capacity and at it (:data:`FPP_CONSTANT_K`), move by 2 grid points (a
#: factor 2^(1/2)) until bracketed, then bisect; at most 6 trials.
FPP_COSINE_ALL_PLAN = dict(FPP_PLAN, schedule="cosine",
                           starts={c: (k + 1, k + 2, k) for c, k in FPP_CONSTANT_K.items()},
                           step=2, max_trials=6)

#: Optimiser scan: the cosine schedule at these ``(lr, batch[, configs])`` settings, in
#: this order of priority (lr 0.01, batch 256 is :data:`FPP_COSINE_ALL_PLAN`); same steps
#: and search as there.  ``configs`` defaults to :data:`FPP_SCAN_CONFIGS`; batch 1024
#: costs 4x per step, so it is scanned on fewer.
FPP_SCAN_CONFIGS = ((16, 1.0, 1.0, 6000), (32, 1.0, 1.0, 8000))
FPP_SCAN_SETTINGS = ((0.003, 256), (0.01, 1024, ((16, 1.0, 1.0, 6000),)),
                     (0.03, 256, ((16, 1.0, 1.0, 6000),)),
                     (0.01, 1024, ((32, 1.0, 1.0, 8000),)),
                     (0.01, 1024, ((64, 1.0, 1.0, 12000),)))

#: Paired schedule check: per configuration of :data:`FPP_PLAN`, ``(config, facts, seed)``
#: of a constant-rate trial that failed just above the capacity (the smallest failed
#: ``N`` of the constant-rate store when the check was set up).
SCHEDULE_CHECK = (((16, 1.0, 1.0, 6000), 100, 2), ((16, 0.25, 4.0, 6000), 110, 2),
                  ((16, 4.0, 0.25, 6000), 144, 2), ((32, 1.0, 1.0, 8000), 576, 2),
                  ((32, 0.5, 0.5, 8000), 289, 2), ((64, 0.25, 0.25, 12000), 576, 2),
                  ((64, 1.0, 1.0, 12000), 1640, 2))


# ----------------------------------------------------------------------------- plans

@fill_doc
def fpp_base(cfg, plan):
    """Return the trial parameters shared by every trial of one configuration (all but ``facts``, ``seed``).

    Parameters
    ----------
    cfg : tuple
        ``(d, H d_h / d, m / d, steps)``.
    plan : dict
        A facts-per-parameter plan (:data:`FPP_PLAN` or a variant).

    Returns
    -------
    dict
        Model shape (:func:`~validation.factual_recall.search.shape_of`), task
        and optimiser settings of the plan.

    %(ref_fpp_budget)s
    """
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


def _success(result, budget):
    t = result.get("t_99")
    return t is not None and t <= budget


@fill_doc
def search_paths(plan, ok):
    """Return every adaptive path of ``plan`` given the stored records ``ok``.

    Parameters
    ----------
    plan : dict
        A facts-per-parameter plan.
    ok : dict
        Store key -> ok engine record (``read_store(...).ok``).

    Returns
    -------
    list of tuple
        ``(config, seed, tested, next)``: ``tested`` maps the grid index of
        every stored trial of the configuration and seed to its
        ``(params, result)``; ``next`` is the parameter record of the path's
        next trial (None when the path is done).

    Notes
    -----
    The next index is decided from everything the store holds on the path's
    grid, so a change of the search rule reuses the trials already made.  Two
    grid indices can map onto one task (the square split); the path then
    stops.

    %(ref_fpp_budget)s
    """
    out = []
    for cfg in plan["configs"]:
        base, n0 = fpp_base(cfg, plan), _n0(cfg, plan)
        grid = {}
        for k in range(-24, 40):
            grid.setdefault(grid_facts(k, n0, plan["ratio"]), k)
        starts = plan.get("starts", {}).get(cfg, plan["start"])
        for s in range(plan["seeds"]):
            start = starts[s % len(starts)]
            tested = {}
            for f, k in grid.items():
                p = dict(base, facts=f, seed=s)
                rec = ok.get(trial_key(p, transformer_budget_trial))
                if rec is not None:
                    tested[k] = (p, rec["result"])
            k = next_grid_index({j: _success(r, base["steps"]) for j, (_, r) in tested.items()},
                                start, max_trials=plan["max_trials"], step=plan.get("step", 4))
            nxt = None
            if k is not None:
                f = grid_facts(k, n0, plan["ratio"])
                if grid.get(f) == k:     # else the split maps two grid points onto one task
                    nxt = dict(base, facts=f, seed=s)
            out.append((cfg, s, tested, nxt))
    return out


@fill_doc
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
        :data:`FPP_COSINE_ALL_PLAN` with the setting's ``lr``, ``batch`` and
        configurations (one store for every setting; the trial parameters
        tell the settings apart).

    %(ref_optimiser_scan_paper)s

    Examples
    --------
    >>> [(p["lr"], p["batch"], p["schedule"]) for p in scan_plans()][:2]
    [(0.003, 256, 'cosine'), (0.01, 1024, 'cosine')]
    """
    return [dict(FPP_COSINE_ALL_PLAN, lr=float(st[0]), batch=int(st[1]),
                 configs=tuple(st[2] if len(st) > 2 else configs)) for st in settings]


def _merged_scan_plans():
    """The scan plans with those of one ``(lr, batch)`` merged over their configurations."""
    merged = {}     # scan settings named twice (for different configurations) are one setting
    for pl in scan_plans():
        key = (pl["lr"], pl["batch"])
        if key in merged:
            merged[key] = dict(merged[key], configs=merged[key]["configs"]
                               + tuple(c for c in pl["configs"] if c not in merged[key]["configs"]))
        else:
            merged[key] = pl
    return list(merged.values())


@fill_doc
def optimizer_settings():
    """List every optimiser setting of the facts-per-parameter studies, with its plan and study.

    Returns
    -------
    list of dict
        ``schedule``, ``lr``, ``batch``, ``plan`` and ``study`` (the study whose
        store holds it): :data:`FPP_PLAN`, :data:`FPP_COSINE_ALL_PLAN`, then the
        plans of :func:`scan_plans`, those of one ``(lr, batch)`` merged into
        one plan over their configurations.

    %(ref_optimiser_scan_paper)s

    Examples
    --------
    >>> [(s["schedule"], s["lr"], s["batch"]) for s in optimizer_settings()][:3]
    [('constant', 0.01, 256), ('cosine', 0.01, 256), ('cosine', 0.003, 256)]
    """
    out = [{"schedule": "constant", "lr": float(FPP_PLAN["lr"]), "batch": FPP_PLAN["batch"],
            "plan": FPP_PLAN, "study": "factual_recall.facts_per_param"},
           {"schedule": "cosine", "lr": float(FPP_COSINE_ALL_PLAN["lr"]),
            "batch": FPP_COSINE_ALL_PLAN["batch"], "plan": FPP_COSINE_ALL_PLAN,
            "study": "factual_recall.facts_per_param_cosine"}]
    out += [{"schedule": "cosine", "lr": pl["lr"], "batch": pl["batch"], "plan": pl,
             "study": "factual_recall.fpp_optimizer_scan"} for pl in _merged_scan_plans()]
    return out


@fill_doc
def schedule_check_params(plan=FPP_PLAN, check=SCHEDULE_CHECK):
    """Build the parameter records of the paired cosine-schedule check.

    Parameters
    ----------
    plan : dict
        Plan of the constant-rate study the check pairs with (:data:`FPP_PLAN`);
        gives the shared run settings.
    check : sequence of (config, facts, seed)
        Trials to rerun (default :data:`SCHEDULE_CHECK`).

    Returns
    -------
    list of dict
        Parameter records (``schedule="cosine"``); the task, initialisation and
        batches are those of the constant-rate trial (same seed and sizes), so
        only the learning-rate schedule differs.

    %(ref_fpp_budget_paper)s
    """
    return [dict(fpp_base(cfg, plan), facts=int(f), seed=int(s), schedule="cosine")
            for cfg, f, s in check]


@fill_doc
def tradeoff_params(plan=TRADEOFF_PLAN):
    """Build the parameter records of the trade-off grid (every ``H``, ``m`` and seed).

    Parameters
    ----------
    plan : dict
        Trade-off plan (:data:`TRADEOFF_PLAN`).

    Returns
    -------
    list of dict
        :func:`~validation.factual_recall.trials.transformer_budget_trial`
        records, seed outermost (an interrupted run leaves whole grids),
        constant learning rate.

    %(ref_tradeoff_paper)s
    """
    out = []
    for s in range(plan["seeds"]):
        for H in plan["H"]:
            for m in plan["m"]:
                out.append({"d": plan["d"], "H": H, "d_h": plan["d_h"], "m": m,
                            "facts": plan["facts"], "D": plan["D"], "T": plan["T"],
                            "batch": plan["batch"], "lr": float(plan["lr"]),
                            "schedule": "constant", "steps": plan["steps"],
                            "eval_every": plan["eval_every"],
                            "eval_repeats": plan["eval_repeats"], "seed": s})
    return out


# ----------------------------------------------------------------------------- searches

@fill_doc
@dataclass(frozen=True)
class SearchRecords(Result):
    """The trials of one facts-per-parameter search (what the search studies execute).

    Parameters
    ----------
    records : dict
        Configuration tuple -> ``(params, result)`` of every stored trial of it
        (any ``N``, the plan's seeds), sorted by seed then facts.
    pending : int
        Paths whose next trial is not in the store.

    %(ref_fpp_budget)s
    """

    records: dict
    pending: int


def _search(runner, plan, max_rounds):
    """Run the adaptive search of ``plan`` on ``runner`` round by round; return its records."""
    for _ in range(max_rounds):
        todo = [n for *_, n in search_paths(plan, runner.stored_ok()) if n is not None]
        if not todo:
            break
        runner(todo)                      # a replay finds them or reports them missing
        if not runner.compute:
            break
    ok = runner.stored_ok()
    pending = sum(1 for *_, n in search_paths(plan, ok) if n is not None)
    params = []
    for cfg in plan["configs"]:
        base = fpp_base(cfg, plan)
        params += [(cfg, r["params"]) for r in ok.values() if r["params"]["seed"] < plan["seeds"]
                   and all(r["params"].get(k) == v for k, v in base.items())]
    recs = {}
    for (cfg, _), rec in zip(params, runner([p for _, p in params])):
        if is_ok(rec):
            recs.setdefault(cfg, []).append((rec["params"], rec["result"]))
    recs = {cfg: sorted(recs[cfg], key=lambda pr: (pr[0]["seed"], pr[0]["facts"]))
            for cfg in plan["configs"] if cfg in recs}
    return SearchRecords(records=recs, pending=pending)


# ----------------------------------------------------------------------------- summaries


@fill_doc
@dataclass(frozen=True)
class FppConfig(Result):
    """Capacity of one configuration: facts, facts / parameter, bits / parameter, budget study.

    Parameters
    ----------
    config : tuple
        ``(d, H d_h / d, m / d, steps)``.
    d, H, d_h, m : int
        Model shape.
    attn_ratio, mlp_ratio : float
        ``H d_h / d`` and ``m / d``.
    params : int
        Parameter count.
    steps : int
        Budget.
    D : int
        Answers per relation (``log2 D`` bits per fact).
    capacity : validation.factual_recall.fits.FactsCapacity
        The fit at the full budget.
    budgets : list of FactsCapacity
        The fit at ``steps / 8, / 4, / 2`` (rounded down to the evaluation
        grid) and ``steps``.
    converged : int or None
        Smallest budget from which every larger budget's capacity lies in its interval.
    cpu_seconds : float
        CPU seconds of the trials.
    trials, seeds : int
        Trials and seeds.

    Notes
    -----
    ``facts``, ``ci_low`` / ``ci_high``, ``facts_per_param``, ``bits_per_param``
    and their intervals are read off ``capacity``; ``to_dict()`` writes the
    keys of ``report.json`` (``ci``, ``facts_per_param_ci``, ``bits_per_param_ci``).

    %(ref_fpp_budget)s
    """

    config: tuple
    d: int
    H: int
    d_h: int
    m: int
    attn_ratio: float
    mlp_ratio: float
    params: int
    steps: int
    D: int
    capacity: FactsCapacity
    budgets: list
    converged: int | None
    cpu_seconds: float
    trials: int
    seeds: int

    _estimate = "facts"
    level = 0.95

    @property
    def facts(self):
        """Capacity (facts at 50 % success)."""
        return self.capacity.facts

    @property
    def ci_low(self):
        """Lower end of the capacity's interval."""
        return self.capacity.ci_low

    @property
    def ci_high(self):
        """Upper end of the capacity's interval."""
        return self.capacity.ci_high

    @property
    def facts_per_param(self):
        """``facts / params``."""
        return self.capacity.facts / self.params

    @property
    def facts_per_param_ci(self):
        """Interval of ``facts / params``."""
        return [c / self.params for c in (self.ci_low, self.ci_high)]

    @property
    def bits_per_param(self):
        """``facts log2(D) / params``."""
        return self.capacity.facts * math.log2(self.D) / self.params

    @property
    def bits_per_param_ci(self):
        """Interval of ``bits_per_param``."""
        return [c * math.log2(self.D) / self.params for c in (self.ci_low, self.ci_high)]

    def to_dict(self):
        """Return the keys of ``report.json`` (the fields, the derived values and their intervals).

        Returns
        -------
        dict
            Plain values (nested results stay objects).
        """
        return {"d": self.d, "H": self.H, "d_h": self.d_h, "m": self.m, "attn_ratio": self.attn_ratio,
                "mlp_ratio": self.mlp_ratio, "params": self.params, "steps": self.steps,
                "capacity": self.capacity, "facts": self.facts, "ci": [self.ci_low, self.ci_high],
                "facts_per_param": self.facts_per_param, "facts_per_param_ci": self.facts_per_param_ci,
                "bits_per_param": self.bits_per_param, "bits_per_param_ci": self.bits_per_param_ci,
                "budgets": self.budgets, "converged": self.converged, "cpu_seconds": self.cpu_seconds,
                "trials": self.trials, "seeds": self.seeds}


@fill_doc
@dataclass(frozen=True)
class FppSummary(Result):
    """Per-configuration capacities and the facts-against-parameters slope (:func:`summarize_fpp`).

    Parameters
    ----------
    configs : list of FppConfig
        Configurations with stored trials, in plan order.
    fit : validation.factual_recall.fits.SlopeFit
        Facts = ``c`` params over the configurations with a finite interval.
    D, T, batch : int
        Task and batch of the plan.
    lr : float
        (Peak) rate of the plan.
    paper : float
        The paper's facts per parameter.
    best : float
        Largest per-configuration facts / parameter (NaN if none).
    pending : int
        Unfinished search paths.

    %(ref_fpp_budget_paper)s
    """

    configs: list
    fit: SlopeFit
    D: int
    T: int
    batch: int
    lr: float
    paper: float
    best: float
    pending: int = 0

    def summary(self):
        """Return the slope and one line per configuration.

        Returns
        -------
        str
            A small table.
        """
        f = self.fit
        lines = [f"FppSummary: {f.value:.4f} [{f.ci_low:.4f}, {f.ci_high:.4f}] facts per parameter "
                 f"({self.pending} paths unfinished)"]
        lines += [f"  d={r.d:<3d} {r.attn_ratio:g}/{r.mlp_ratio:g} params={r.params:<6d} facts "
                  f"{r.facts:.0f} [{r.ci_low:.0f}, {r.ci_high:.0f}] ({r.trials} trials)"
                  for r in self.configs]
        return "\n".join(lines)

    def paper_ratio(self):
        """Return the paper's facts per parameter over the fitted slope (inf without a positive slope).

        Returns
        -------
        float
            ``paper / value``.
        """
        return self.paper / self.fit.value if self.fit.value > 0 else math.inf


@fill_doc
def summarize_fpp(records, plan=FPP_PLAN, level=0.95, pending=0):
    """Summarise the records of a facts-per-parameter search: capacities, budget study and slope.

    Parameters
    ----------
    records : dict
        Configuration -> ``(params, result)`` list (``SearchRecords.records``).
    plan : dict
        The plan the records were made with (its ``configs``, ``D``, ``T``,
        ``batch``, ``lr`` and ``eval_every``).
    level : float
        Confidence level of every interval.
    pending : int, optional
        Unfinished paths (carried into the summary).

    Returns
    -------
    FppSummary
        One :class:`FppConfig` per configuration with records and the slope
        (:func:`~validation.factual_recall.fits.fit_slope`).

    %(ref_fpp_budget_paper)s
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
        rows.append(FppConfig(config=cfg, d=d, H=H, d_h=d_h, m=m, attn_ratio=cfg[1], mlp_ratio=cfg[2],
                              params=P, steps=steps, D=D, capacity=buds[-1], budgets=buds,
                              converged=converged_budget(buds, value="facts"),
                              cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in res)),
                              trials=len(recs), seeds=len({p["seed"] for p, _ in recs})))
    fit = fit_slope([r.params for r in rows], [r.facts for r in rows], [r.ci_low for r in rows],
                    [r.ci_high for r in rows], D, level)
    return FppSummary(configs=rows, fit=fit, D=D, T=plan["T"], batch=plan["batch"], lr=plan["lr"],
                      paper=PAPER_FACTS_PER_PARAM,
                      best=max((r.facts_per_param for r in rows if math.isfinite(r.facts)),
                               default=math.nan), pending=pending)


@fill_doc
@dataclass(frozen=True)
class SettingCapacity(Result):
    """Capacity of one configuration at one optimiser setting, with the search criterion.

    Parameters
    ----------
    schedule : str
        ``"constant"`` or ``"cosine"``.
    lr : float
        (Peak) Adam rate.
    batch : int
        Batch size.
    row : FppConfig
        The capacity at that setting.
    search : validation.factual_recall.fits.SearchCriterion
        The paper's criterion on the same trials.

    Notes
    -----
    ``to_dict()`` writes ``schedule, lr, batch, facts, ci, facts_per_param,
    facts_per_param_ci, trials, cpu_seconds, search`` (the ``report.json`` keys).

    %(ref_optimiser_scan)s
    """

    schedule: str
    lr: float
    batch: int
    row: FppConfig
    search: SearchCriterion


    def name(self):
        """Return ``"<schedule> <lr>/<batch>"``, the setting's label.

        Returns
        -------
        str
            The label.
        """
        return f"{self.schedule} {self.lr:g}/{self.batch}"

    def to_dict(self):
        """Return the ``report.json`` keys of this setting.

        Returns
        -------
        dict
            Plain values (``search`` stays a result).
        """
        r = self.row
        return {"schedule": self.schedule, "lr": self.lr, "batch": self.batch, "facts": r.facts,
                "ci": [r.ci_low, r.ci_high], "facts_per_param": r.facts_per_param,
                "facts_per_param_ci": r.facts_per_param_ci, "trials": r.trials,
                "cpu_seconds": r.cpu_seconds, "search": self.search}


@fill_doc
@dataclass(frozen=True)
class OptimizerConfig(Result):
    """One configuration over every optimiser setting with stored trials (:func:`best_of_optimizers`).

    Parameters
    ----------
    d, H, d_h, m : int
        Model shape.
    attn_ratio, mlp_ratio : float
        The ratios.
    params, steps : int
        Parameter count and budget.
    settings : list of SettingCapacity
        One per setting with stored trials.
    best : SettingCapacity or None
        The setting with the largest finite capacity with a finite interval.
    constant_over_best : float
        Constant-rate capacity over the best (NaN if either is missing).
    largest_pass : float
        Largest ``N`` that passed in any search of any setting.
    largest_pass_over_best : float
        ``largest_pass / best``.

    %(ref_optimiser_scan)s
    """

    d: int
    H: int
    d_h: int
    m: int
    attn_ratio: float
    mlp_ratio: float
    params: int
    steps: int
    settings: list
    best: SettingCapacity | None
    constant_over_best: float
    largest_pass: float
    largest_pass_over_best: float


@fill_doc
@dataclass(frozen=True)
class OptimizerSummary(Result):
    """The best optimiser per configuration and the slopes it gives (:func:`best_of_optimizers`).

    Parameters
    ----------
    configs : list of OptimizerConfig
        Configurations of :data:`FPP_PLAN` with stored trials.
    slope : validation.factual_recall.fits.SlopeFit
        The slope with the best capacity per configuration.
    search_slope : validation.factual_recall.fits.SlopeFit
        The same with ``largest_pass`` per configuration (its interval taken
        from the best setting's relative interval).
    pending : list of dict
        Unfinished search paths per setting.
    D : int
        Answers per relation.
    paper : float
        The paper's facts per parameter.

    Notes
    -----
    The best of several noisy capacities is biased upward (the maximum of
    estimates with +-20-30 % intervals); the intervals given are those of the
    chosen setting's own fit, not corrected for the choice.  The paper makes
    the same choice (best of three learning rates).

    %(ref_optimiser_scan)s
    """

    configs: list
    slope: SlopeFit
    search_slope: SlopeFit
    pending: list
    D: int
    paper: float


@fill_doc
@dataclass(frozen=True)
class ScanSummary(Result):
    """Summary of ``factual_recall.fpp_optimizer_scan``: one :class:`FppSummary` per setting.

    Parameters
    ----------
    settings : dict
        ``"cosine <lr>/<batch>"`` -> :class:`FppSummary`.

    %(ref_optimiser_scan)s
    """

    settings: dict

    def summary(self):
        """Return the summary of every setting.

        Returns
        -------
        str
            The settings' summaries, one block each.
        """
        return "\n".join(f"{k}: " + v.summary() for k, v in self.settings.items())


@fill_doc
def best_of_optimizers(searches, level=0.95):
    """Combine the searches of every optimiser setting: capacity per setting, the best, the slopes.

    Parameters
    ----------
    searches : list of (dict, SearchRecords)
        Per setting of :func:`optimizer_settings` (in that order) the setting
        and the records its study executed.
    level : float
        Confidence level of the intervals.

    Returns
    -------
    OptimizerSummary
        Per configuration of :data:`FPP_PLAN` the settings, the best one and
        the paper's criterion; the slope with the best capacities and with
        the largest passes.

    %(ref_optimiser_scan_paper)s
    """
    D = FPP_PLAN["D"]
    rows = {cfg: None for cfg in FPP_PLAN["configs"]}
    pending = []
    for st, found in searches:
        recs = found.records
        pending.append({k: st[k] for k in ("schedule", "lr", "batch")} | {"pending": found.pending})
        for r in summarize_fpp(recs, st["plan"], level).configs:
            cfg = r.config
            if cfg not in rows:
                continue
            if rows[cfg] is None:
                rows[cfg] = {k: getattr(r, k) for k in ("d", "H", "d_h", "m", "attn_ratio",
                                                         "mlp_ratio", "params", "steps")}
                rows[cfg]["settings"] = []
            rows[cfg]["settings"].append(SettingCapacity(schedule=st["schedule"], lr=st["lr"],
                                                         batch=st["batch"], row=r,
                                                         search=search_criterion(recs[cfg])))
    out = []
    for cfg, row in rows.items():
        if row is None:
            continue
        ok = [q for q in row["settings"] if math.isfinite(q.row.facts) and 0 < q.row.ci_low
              and math.isfinite(q.row.ci_high)]
        best = max(ok, key=lambda q: q.row.facts, default=None)
        const = next((q for q in row["settings"] if q.schedule == "constant"), None)
        lp = max((q.search.best_of_searches for q in row["settings"]
                  if math.isfinite(q.search.best_of_searches)), default=math.nan)
        out.append(OptimizerConfig(**row, best=best,
                                   constant_over_best=(const.row.facts / best.row.facts
                                                       if best and const else math.nan),
                                   largest_pass=lp,
                                   largest_pass_over_best=lp / best.row.facts if best else math.nan))
    good = [r for r in out if r.best is not None]
    slope = fit_slope([r.params for r in good], [r.best.row.facts for r in good],
                      [r.best.row.ci_low for r in good], [r.best.row.ci_high for r in good], D, level)
    sp = [r for r in good if math.isfinite(r.largest_pass)]
    search_slope = fit_slope([r.params for r in sp], [r.largest_pass for r in sp],
                             [r.largest_pass * r.best.row.ci_low / r.best.row.facts for r in sp],
                             [r.largest_pass * r.best.row.ci_high / r.best.row.facts for r in sp], D, level)
    return OptimizerSummary(configs=out, slope=slope, search_slope=search_slope, pending=pending,
                            D=D, paper=PAPER_FACTS_PER_PARAM)


@fill_doc
@dataclass(frozen=True)
class ScheduleCheckRow(Result):
    """One pair of the schedule check: the constant-rate trial and its cosine rerun.

    Parameters
    ----------
    d, H, d_h, m : int
        Model shape.
    facts, seed, steps : int
        The trial.
    constant, cosine : dict, optional
        ``final_accuracy`` and ``t_99`` of each run (absent while not stored).

    %(ref_fpp_budget)s
    """

    d: int
    H: int
    d_h: int
    m: int
    facts: int
    seed: int
    steps: int
    constant: dict | None = optional()
    cosine: dict | None = optional()


@dataclass(frozen=True)
class TradeoffGrid(Result):
    """The trade-off map: mean accuracy and success fraction per ``(H, m)`` cell.

    Parameters
    ----------
    H, m : list of int
        Heads (rows) and MLP widths (columns).
    d, d_h, facts : int
        Model width, head size and number of facts.
    attention_params, mlp_params : list of int
        ``4 H d_h d`` per row and ``2 m d`` per column.
    accuracy, success : list of list of float
        Mean final accuracy and fraction of seeds with >= 99 %, ``[i_H][i_m]``
        (NaN in empty cells).
    trials : list of list of int
        Trials per cell.
    T, D, steps, batch : int
        Task and training settings.
    lr : float
        Adam rate.

    References
    ----------
    docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """

    H: list
    m: list
    d: int
    d_h: int
    facts: int
    attention_params: list
    mlp_params: list
    accuracy: list
    success: list
    trials: list
    T: int
    D: int
    steps: int
    batch: int
    lr: float


@dataclass(frozen=True)
class TradeoffSummary(Result):
    """Summary of ``factual_recall.tradeoff`` (:func:`summarize_tradeoff`).

    Parameters
    ----------
    grid : TradeoffGrid
        The map.
    routing_H : int or None
        ``H`` of the smallest attention row in which the widest MLP stores the
        facts in at least half of the seeds (the "MLP only" end; None if none).
    routing_attention_params : int or None
        Its attention parameters.
    boundary_fit : validation.factual_recall.fits.BoundaryFit or None
        The boundary law fitted from the routing row up (every ``m``).
    boundary_fit_all : validation.factual_recall.fits.BoundaryFit or None
        The same on every row.

    References
    ----------
    docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """

    grid: TradeoffGrid
    routing_H: int | None
    routing_attention_params: int | None
    boundary_fit: BoundaryFit | None
    boundary_fit_all: BoundaryFit | None

    def summary(self):
        """Return the routing row and the boundary laws.

        Returns
        -------
        str
            A few lines.
        """
        lines = [f"TradeoffSummary: {self.grid.facts} facts, routing row H = {self.routing_H}"]
        bf = self.boundary_fit
        if bf is not None:
            for k in ("1", "inf"):
                f = bf.fits.get(k)
                if f is not None:
                    lines.append(f"  p={k:<4s} c_a {f.c_a:.4f}, c_m {f.c_m:.4f}, log-lik {f.loglik:.2f}")
            lines.append(f"  additive - max log-lik {bf.additive_vs_max:+.2f}: preferred "
                         f"{bf.preferred_law() or 'neither'}")
        return "\n".join(lines)


@fill_doc
def summarize_tradeoff(records, plan=TRADEOFF_PLAN):
    """Summarise the trade-off grid: accuracy / success map and its boundary fit.

    Parameters
    ----------
    records : list of (params, result)
        Trials of the trade-off grid.
    plan : dict
        The plan the records were made with (:data:`TRADEOFF_PLAN`).

    Returns
    -------
    TradeoffSummary
        The map, the routing row and the boundary fits (None when the trials
        are all successes or all failures; ``boundary_fit`` also without a
        routing row).

    Notes
    -----
    The "MLP only" end of the trade-off is the routing row: the smallest
    attention of the grid that brings enough of the subject and relation to
    the EOS position for the MLP to store the facts.  Fitting the boundary
    law on rows below it would mix the routing cut (a different mechanism)
    into the additive-versus-max question.

    %(ref_tradeoff_paper)s
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
    grid = TradeoffGrid(H=Hs, m=ms, d=d, d_h=d_h, facts=facts or plan["facts"],
                        attention_params=[OneLayerTransformer.count_params(d, H, d_h, 0) for H in Hs],
                        mlp_params=[OneLayerTransformer.count_params(d, 0, 0, m) for m in ms],
                        accuracy=acc.tolist(), success=suc.tolist(), trials=cnt.tolist(),
                        T=plan["T"], D=plan["D"], steps=plan["steps"], batch=plan["batch"],
                        lr=plan["lr"])
    A, M, Y = np.array(A, float), np.array(M, float), np.array(Y, bool)
    route = next((i for i in range(len(Hs)) if np.isfinite(suc[i, -1]) and suc[i, -1] >= 0.5),
                 None)
    fit = fit_all = None
    if Y.size and Y.any() and not Y.all():
        fit_all = fit_boundary(A, M, Y, grid.facts)
        if route is not None:
            keep = A >= grid.attention_params[route]
            if Y[keep].any() and not Y[keep].all():
                fit = fit_boundary(A[keep], M[keep], Y[keep], grid.facts)
    return TradeoffSummary(grid=grid, routing_H=None if route is None else Hs[route],
                           routing_attention_params=None if route is None
                           else grid.attention_params[route],
                           boundary_fit=fit, boundary_fit_all=fit_all)


# ----------------------------------------------------------------------------- studies

_MAX_ROUNDS = Option("max_rounds", "--max-rounds", int, 20,
                     "most search rounds (each runs the next trial of every unfinished path)", low=0,
                     high=1000)


@fill_doc
class FactsPerParam(Study):
    """Facts per parameter at ``T = 32``, constant rate: the adaptive search (see the module notes).

    %(ref_fpp_budget_paper)s
    """

    name = "factual_recall.facts_per_param"
    title = ("transformer capacity per configuration at T = 32 (adaptive search over the number of "
             "facts, constant-rate Adam) and the facts-per-parameter slope")
    trial = transformer_budget_trial
    docs = "docs/factual_recall.md#facts-per-parameter-budget-checked"
    options = (_MAX_ROUNDS,)

    def search_plan(self, **options):
        """Return the plan of the search (:data:`FPP_PLAN`).

        Parameters
        ----------
        **options
            The checked options.

        Returns
        -------
        dict
            The plan.
        """
        return FPP_PLAN

    def execute(self, runner, max_rounds, **options):
        return _search(runner, self.search_plan(**options), max_rounds)

    def summarise(self, results, max_rounds, **options):
        """Summarise the search (:func:`summarize_fpp`).

        Parameters
        ----------
        results : SearchRecords
            What :meth:`execute` returned.
        max_rounds : int
            The option (unused).
        **options
            The other options (those of :meth:`search_plan`).

        Returns
        -------
        FppSummary
            Capacities and slope.
        """
        return summarize_fpp(results.records, self.search_plan(**options), pending=results.pending)


@fill_doc
class FactsPerParamCosine(FactsPerParam):
    """The facts-per-parameter search with the cosine schedule (``--protocol all`` or ``largest``).

    %(ref_optimiser_scan)s
    """

    name = "factual_recall.facts_per_param_cosine"
    title = ("the facts-per-parameter search with the cosine schedule (every configuration, or the "
             "largest alone)")
    docs = "docs/factual_recall.md#optimiser-scan-and-best-of-optimisers-capacity"
    options = (Option("protocol", "--protocol", str, "all",
                      "all: every configuration (FPP_COSINE_ALL_PLAN); largest: d = 64 1/1 alone "
                      "(FPP_COSINE_PLAN)", choices=("all", "largest")), _MAX_ROUNDS)

    def search_plan(self, protocol="all", **options):
        return FPP_COSINE_ALL_PLAN if protocol == "all" else FPP_COSINE_PLAN


@fill_doc
class OptimizerScan(Study):
    """The cosine search at the peak rates and batch sizes of :data:`FPP_SCAN_SETTINGS`.

    %(ref_optimiser_scan)s
    """

    name = "factual_recall.fpp_optimizer_scan"
    title = "the facts-per-parameter search over peak learning rates and batch sizes (cosine schedule)"
    trial = transformer_budget_trial
    docs = "docs/factual_recall.md#optimiser-scan-and-best-of-optimisers-capacity"
    options = (_MAX_ROUNDS,)

    @fill_doc
    def execute(self, runner, max_rounds):
        """Search every setting in turn on the one store.

        Parameters
        ----------
        %(runner)s
        max_rounds : int
            Most rounds per setting.

        Returns
        -------
        dict
            ``(lr, batch)`` -> :class:`SearchRecords`.
        """
        return {(pl["lr"], pl["batch"]): _search(runner, pl, max_rounds) for pl in _merged_scan_plans()}

    def summarise(self, results, max_rounds):
        """Summarise each setting (:func:`summarize_fpp`).

        Parameters
        ----------
        results : dict
            What :meth:`execute` returned.
        max_rounds : int
            The option (unused).

        Returns
        -------
        ScanSummary
            ``"cosine <lr>/<batch>"`` -> :class:`FppSummary`.
        """
        plans = {(pl["lr"], pl["batch"]): pl for pl in _merged_scan_plans()}
        return ScanSummary({f"cosine {lr:g}/{b}": summarize_fpp(s.records, plans[(lr, b)],
                                                                pending=s.pending)
                            for (lr, b), s in results.items()})


@fill_doc
class ScheduleCheck(Study):
    """Constant-rate trials that failed just above capacity, rerun with the cosine schedule.

    %(ref_fpp_budget)s
    """

    name = "factual_recall.fpp_schedule_check"
    title = "constant-rate trials just above capacity rerun with the cosine schedule (paired)"
    trial = transformer_budget_trial
    docs = "docs/factual_recall.md#facts-per-parameter-budget-checked"

    def plan(self):
        return schedule_check_params()

    def execute(self, runner):
        """Run the cosine reruns; read their constant-rate partners from the committed constant-rate store.

        Parameters
        ----------
        runner : Runner
            Computes or replays the cosine trials.

        Returns
        -------
        list of tuple
            ``(params, cosine record, constant record)`` (None where not stored).
        """
        params = self.plan()
        cos = runner(params)
        fpp = FACTS_PER_PARAM
        partners = Runner(fpp, fpp.committed_store(), compute=False, progress=False,
                          missing="skip")([dict(p, schedule="constant") for p in params])
        return list(zip(params, cos, partners))

    def summarise(self, results):
        """Pair each cosine rerun with its constant-rate trial.

        Parameters
        ----------
        results : list of tuple
            What :meth:`execute` returned.

        Returns
        -------
        list of ScheduleCheckRow
            One per configuration.
        """
        out = []
        for p, cos, const in results:
            runs = {}
            for name, rec in (("constant", const), ("cosine", cos)):
                if is_ok(rec):
                    runs[name] = {"final_accuracy": rec["result"]["accuracy"][-1],
                                  "t_99": rec["result"]["t_99"]}
            out.append(ScheduleCheckRow(**{k: p[k] for k in ("d", "H", "d_h", "m", "facts", "seed",
                                                             "steps")}, **runs))
        return out


@fill_doc
class Tradeoff(Study):
    """The attention / MLP trade-off map at a fixed number of facts (see the module notes).

    %(ref_tradeoff_paper)s
    """

    name = "factual_recall.tradeoff"
    title = "success over heads x MLP width at a fixed number of facts and the iso-capacity boundary"
    trial = transformer_budget_trial
    docs = "docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters"
    options = (Option("variant", "--variant", str, "ours",
                      "model variant: ours (EOS residual, our init) or paper (the paper's model)",
                      choices=("ours", "paper")),)

    def plan(self, variant="ours"):
        recs = tradeoff_params()
        # the records of our model carry no variant key (the committed store's keys)
        return recs if variant == "ours" else [{**q, "variant": variant} for q in recs]

    @fill_doc
    def summarise(self, results, variant="ours"):
        """Summarise the grid (:func:`summarize_tradeoff`).

        %(records_params)s
        variant : str
            Model variant (the same summary for both).

        Returns
        -------
        TradeoffSummary
            Map, routing row and boundary fits.
        """
        return summarize_tradeoff(ok_pairs(results))


FACTS_PER_PARAM = FactsPerParam()
STUDIES = (FACTS_PER_PARAM, FactsPerParamCosine(), OptimizerScan(), ScheduleCheck(), Tradeoff())
