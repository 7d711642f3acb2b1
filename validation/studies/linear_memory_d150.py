"""Capacity thresholds at the paper's size (d = 100 and 150): adaptive design, learning-rate and budget checks.

Two studies:

* ``linear_memory.d150`` -- the groups of :data:`PLAN` (full rank OP and
  rank-constrained memories, ``kappa`` = 0.5, 0.25, at ``d`` = 100 and 150, and
  the learning-rate check at ``d`` = 100), each measured by
  :func:`validation.linear_memory.capacity.measure_capacity` with
  ``design="adaptive"``: a first round at :data:`START` times the group's
  finite-``p`` prediction, then rounds of :data:`BATCH` loads chosen from the
  current logistic fit until the 95% CI half-width is <= :data:`CI_HALFWIDTH`
  or the group's trial cap is reached; float32, stop at the first step where
  all facts are recalled, the group's step budget and Adam rate.  The adaptive
  path is a deterministic function of the seeded outcomes, so a replay follows
  it through the committed store and a rerun continues where it stopped.
* ``linear_memory.d150_budget`` -- stored 4096-step failures near the OP
  threshold at ``d`` = 100 rerun with a 16384-step budget (:data:`LONG_BUDGET`):
  does a longer run recall them?  (:func:`long_budget` joins them with the
  4096-step trials and refits.)

Regenerate, extend or resume (after an interruption, SIGKILL included)::

    nice -n 10 python -m validation study linear_memory.d150 --workers 2
    nice -n 10 python -m validation study linear_memory.d150_budget

Notes
-----
Choices of the plan, and why (the record of how they were made):

* **Adam rate** :data:`LR` = 0.01 (the check: :data:`LR_CHECK`).  The default preset's 0.1 (chosen at
  ``d <= 60``) fails at ``d = 100`` from load ~0.82 on, recall collapsing to
  25-90 % after 4096 steps; on the same instances rates 0.03 and 0.01 recall
  more (0.01: 99.3 % at load 0.853, where 0.1 reaches 52 %), and at load
  0.887 rate 0.01 (4096 steps) and 0.003 (8192 steps) end at the same loss
  and recall (55 %): converged.  The lr 0.1 and 0.03 groups at ``d = 100``
  are kept as the record of this check (their first round is the same four
  instances as the first round of the lr 0.01 group).
* **First round** :data:`START`: thresholds measured at ``d <= 80`` sit 0-5 %
  above the finite-``p`` prediction, and loads above the threshold cost the
  whole step budget, so the first loads lean just above the prediction.
* **Rounds** of :data:`BATCH` = 4 loads (two workers, two trials each) until
  the half-width :data:`CI_HALFWIDTH` = 0.03 or the group's cap.
* **Long-budget reruns** (:data:`LONG_BUDGET`): the two 4096-step failures of
  the OP ``d = 100`` group closest to its threshold, ``p`` = 1203 (load 0.8532,
  seed 1, 99.3 % recalled) and ``p`` = 1207 (load 0.8565, seed 10, 82.7 %).

Docs: ``docs/linear_memory.md#thresholds-at-d--100-and-150``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from validation.linear_memory.capacity import (BudgetThreshold, ThresholdRecord, budget_thresholds,
                                               capacity_trial, measure_capacity, trial_params)
from validation.logistic import fit_threshold
from replica import load_of

from .base import Option, Study, fill_doc, is_ok

__all__ = ["LR", "PLAN", "LR_CHECK", "PAPER", "CI_HALFWIDTH", "BATCH", "START", "BUDGETS", "LONG_BUDGET", "group_key",
           "group_theory", "GroupThreshold", "NearBudgetThreshold", "PaperSizeThresholds", "Refit", "LongBudget",
           "long_budget", "STUDIES"]

#: Target 95% CI half-width of every group.
CI_HALFWIDTH = 0.03
#: Loads per adaptive round.
BATCH = 4
#: First-round loads relative to the finite-p prediction (see the notes).
START = (0.97, 1.01, 1.05, 1.09)
#: Adam learning rate of the plan (see the notes; also the rate of the other studies from d = 100 on).
LR = 0.01
#: Threshold groups in priority order: (model, kappa, d, lr) -> step budget and trial cap of the
#: adaptive design.
PLAN = {
    ("op", None, 100, LR): {"steps": 4096, "max_trials": 40},
    ("op", None, 150, LR): {"steps": 4096, "max_trials": 36},
    ("lowrank", 0.5, 150, LR): {"steps": 4096, "max_trials": 32},
    ("lowrank", 0.25, 150, LR): {"steps": 4096, "max_trials": 32},
    ("lowrank", 0.5, 100, LR): {"steps": 4096, "max_trials": 40},
    ("lowrank", 0.25, 100, LR): {"steps": 4096, "max_trials": 40},
}
#: The learning-rate check as it was run (OP, d = 100, 4096 steps, float32): per group (lr None:
#: the default preset's 0.1), the ``(p, seed)`` of its trials.  Both runs were stopped early and
#: the rate-0.1 group by a revision of the design after its second round (seeds 8-11 appear
#: twice), so these are a record, listed trial by trial, not an adaptive path a replay could
#: follow; the first four (three at rate 0.03) are the first-round instances of the rate-0.01
#: group of :data:`PLAN`.
LR_CHECK = {
    ("op", None, 100, 0.03): ((1161, 0), (1203, 1), (1244, 2)),
    ("op", None, 100, None): ((1161, 0), (1203, 1), (1244, 2), (1286, 3), (949, 5), (840, 6), (1056, 4),
                              (730, 7), (1073, 9), (1041, 8), (1105, 10), (1137, 11), (1013, 8), (1064, 9),
                              (1114, 10), (1164, 11), (1087, 12), (1137, 13), (1187, 14), (1236, 15),
                              (1088, 16), (1138, 17)),
}
#: The linear-memory paper's d = 150 thresholds (arXiv:2605.10795, its table), per kappa.
PAPER = {1.0: 0.50, 0.5: 0.46, 0.25: 0.31}
#: Step budgets of the budget table (success(B) = success and steps <= B).
BUDGETS = (256, 512, 1024, 2048, 4096)
#: Long-budget reruns (see the notes): (model, kappa, d, lr, p, seed, steps).
LONG_BUDGET = (("op", None, 100, LR, 1203, 1, 16384),
               ("op", None, 100, LR, 1207, 10, 16384))


@fill_doc
def group_theory(model, kappa, d):
    """Compute the finite-``p`` capacity prediction of one group.

    Parameters
    ----------
    model : {"op", "lowrank"}
        Memory model of the group (any other value than ``"op"`` is treated
        as rank-constrained).
    kappa : float or None
        Rank ratio of a rank-constrained group (the prediction uses the actual
        ``m / d``); ignored for ``"op"``.
    %(d)s

    Returns
    -------
    dict
        ``value`` (the predicted threshold load), ``stderr`` (its Monte Carlo
        standard error) and ``kappa_eff`` (1.0 for ``"op"``, else ``m / d``).

    See Also
    --------
    validation.linear_memory.registry.prediction : The full-rank prediction.
    validation.linear_memory.theory.lowrank_finite_prediction : The rank-constrained one.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    from validation.linear_memory.registry import prediction
    from validation.linear_memory.theory import lowrank_finite_prediction

    if model == "op":
        t = prediction("op", d)
        return {"value": float(t["value"]), "stderr": float(t["stderr"]), "kappa_eff": 1.0}
    e = lowrank_finite_prediction(d, kappa)
    return {"value": float(e["value"]), "stderr": float(e["stderr"]), "kappa_eff": float(e["kappa_eff"])}


@fill_doc
def group_key(model, kappa, d, lr=LR):
    """Format the row name of a group.

    Parameters
    ----------
    model : str
        Memory model of the group (``"op"``, ``"lowrank"``).
    kappa : float or None
        Rank ratio; None (full rank) leaves the ``kappa=`` part out.
    %(d)s
    lr : float or None
        Adam learning rate; None stands for the default preset's 0.1.

    Returns
    -------
    str
        ``"<model> d=<d>[ kappa=<kappa>] lr=<lr>"`` (``%g`` numbers), with
        ``" lr=0.1 (default preset)"`` when ``lr`` is None.

    %(ref_d150)s

    Examples
    --------
    >>> group_key("op", None, 150)
    'op d=150 lr=0.01'
    >>> group_key("lowrank", 0.5, 100, 0.03)
    'lowrank d=100 kappa=0.5 lr=0.03'
    >>> group_key("op", None, 100, None)
    'op d=100 lr=0.1 (default preset)'
    """
    return (f"{model} d={d}" + (f" kappa={kappa:g}" if kappa is not None else "")
            + (f" lr={lr:g}" if lr is not None else " lr=0.1 (default preset)"))


@fill_doc
@dataclass(frozen=True)
class GroupThreshold(ThresholdRecord):
    """The adaptive threshold of one group, its theory and its cost.

    Parameters
    ----------
    model : str
        ``"op"`` or ``"lowrank"``.
    kappa : float or None
        Rank ratio.
    %(d)s
    lr : float
        Adam rate (0.1 for the default preset).
    threshold : float
        Logistic 1/2 point of all the group's trials.
    %(ci_pair)s
    halfwidth : float
        ``(ci_high - ci_low) / 2``.
    theory_finite_p, theory_stderr, kappa_eff : float
        :func:`group_theory`.
    paper : float or None
        The paper's value at ``d = 150``.
    trials, successes : int
        Trials and successes.
    wall_seconds, cpu_seconds : float
        Summed trial wall time over 2 workers, and CPU time.
    steps_budget : int
        Step budget.
    counts : list
        ``[load, successes, trials]`` rows.
    failure_accuracy : list of float
        Fraction recalled by each failure (by seed).
    success_steps_max : int or None
        Most steps a success took.
    max_success_load : float or None
        Largest load recalled.
    measured : bool
        A threshold of the table (False: the learning-rate check).
    done : bool
        Half-width <= :data:`CI_HALFWIDTH` or trial cap reached.

    %(ref_d150)s
    """

    model: str
    kappa: float | None
    d: int
    lr: float
    threshold: float
    ci_low: float
    ci_high: float
    halfwidth: float
    theory_finite_p: float
    theory_stderr: float
    kappa_eff: float
    paper: float | None
    trials: int
    successes: int
    wall_seconds: float
    cpu_seconds: float
    steps_budget: int
    counts: list
    failure_accuracy: list
    success_steps_max: int | None
    max_success_load: float | None
    measured: bool
    done: bool


@fill_doc
@dataclass(frozen=True)
class NearBudgetThreshold(BudgetThreshold):
    """A :class:`~validation.linear_memory.capacity.BudgetThreshold` with the trials near the full-budget threshold.

    Parameters
    ----------
    budget : int
        Step budget ``B``.
    threshold : float
        Logistic 1/2 point of ``success(B)``.
    ci_low, ci_high : float
        Its 95% interval.
    successes : int
        Successes at budget ``B``.
    near_successes, near_trials : int
        Successes (at this budget) and trials at loads within +-3 % of the
        full-budget threshold (none when it is not finite).

    %(ref_d150)s
    """

    near_successes: int
    near_trials: int


@fill_doc
@dataclass(frozen=True)
class PaperSizeThresholds(Result):
    """Summary of ``linear_memory.d150``.

    Parameters
    ----------
    rows : dict
        :func:`group_key` -> :class:`GroupThreshold`, in :data:`PLAN` order.
    budget : dict
        :func:`group_key` -> list of :class:`NearBudgetThreshold` (the budgets of
        :data:`BUDGETS` up to the group's own).
    lr_check : list of dict
        The first-round instances of the OP ``d = 100`` groups (seeds below
        ``len(START)``, identical in every group) with each rate: ``load``,
        ``seed``, ``lr``, ``success``, ``accuracy``, ``steps``, ``loss``; sorted
        by load, then decreasing rate.
    missing : list of str
        Planned threshold groups with no trial.

    %(ref_d150)s
    """

    rows: dict
    budget: dict
    lr_check: list
    missing: list

    def summary(self):
        """Return one line per group.

        Returns
        -------
        str
            The threshold, its 95% interval, the theory and the trials of each group.
        """
        lines = [f"{k}: threshold {r.threshold:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}], finite-p theory "
                 f"{r.theory_finite_p:.4f}, {r.trials} trials" + ("" if r.measured else " (learning-rate check)")
                 for k, r in self.rows.items()]
        return "\n".join(lines + [f"missing: {', '.join(self.missing)}"] * bool(self.missing))


def _group_row(g, res):
    model, kappa, d, lr = g
    res = sorted(res, key=lambda r: r["seed"])
    fit = fit_threshold([r["load"] for r in res], [r["success"] for r in res])
    th = group_theory(model, kappa, d)
    hw = (fit.ci_high - fit.ci_low) / 2
    cap = PLAN[g]["max_trials"] if g in PLAN else len(LR_CHECK.get(g, ())) or math.inf
    return GroupThreshold(
        model=model, kappa=kappa, d=d, lr=lr if lr is not None else 0.1, threshold=fit.threshold,
        ci_low=fit.ci_low, ci_high=fit.ci_high, halfwidth=hw, theory_finite_p=th["value"],
        theory_stderr=th["stderr"], kappa_eff=th["kappa_eff"],
        paper=PAPER.get(1.0 if model == "op" else kappa) if d == 150 else None,
        trials=len(res), successes=int(sum(r["success"] for r in res)),
        wall_seconds=float(sum(r["seconds"] for r in res)) / 2,
        cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in res)),
        steps_budget=res[0]["steps_budget"], counts=fit.counts,
        failure_accuracy=[round(float(r["accuracy"]), 4) for r in res if not r["success"]],
        success_steps_max=max((int(r["steps"]) for r in res if r["success"]), default=None),
        max_success_load=max((float(r["load"]) for r in res if r["success"]), default=None),
        measured=g not in LR_CHECK,
        done=bool(hw <= CI_HALFWIDTH or len(res) >= cap))


def _budget_rows(res, budgets=BUDGETS):
    x = np.array([r["load"] for r in res])
    full = fit_threshold(x, [r["success"] for r in res]).threshold
    near = np.abs(x / full - 1) <= 0.03 if math.isfinite(full) else np.zeros(x.size, bool)
    use = [b for b in budgets if b <= (res[0]["steps_budget"] or 4096)]
    out = []
    for b, f in zip(use, budget_thresholds(res, use)):
        s = np.array([bool(r["success"]) and r["steps"] <= b for r in res])
        out.append(NearBudgetThreshold(**{k: getattr(f, k) for k in ("budget", "threshold", "ci_low", "ci_high",
                                                                       "successes")},
                                       near_successes=int(s[near].sum()), near_trials=int(near.sum())))
    return out


@fill_doc
class PaperSizeStudy(Study):
    """``linear_memory.d150``: adaptive thresholds of the :data:`~validation.studies.linear_memory_d150.PLAN` groups (see the module notes).

    %(ref_d150)s
    """

    name = "linear_memory.d150"
    title = "capacity thresholds at d = 100 and 150 (adaptive design, Adam lr 0.01) and the learning-rate check"
    trial = capacity_trial
    docs = "docs/linear_memory.md#thresholds-at-d--100-and-150"
    options = (Option("groups", "--groups", int, tuple(range(len(PLAN))),
                      "indices into the threshold groups, in priority order: "
                      + "; ".join(f"{i} {group_key(*g)}" for i, g in enumerate(PLAN)),
                      many=True, low=0, high=len(PLAN) - 1),
               Option("lr_check", "--lr-check", bool, True, "include the learning-rate check (LR_CHECK)"))

    def execute(self, runner, groups, lr_check):
        """Run (or replay) the adaptive design of each chosen group, in priority order, then the rate check.

        Parameters
        ----------
        runner : validation.studies.base.Runner
            Runs or replays the rounds.
        groups : tuple of int
            Indices into :data:`PLAN`.
        lr_check : bool
            Also run (replay) the trials of :data:`LR_CHECK`.

        Returns
        -------
        dict
            ``(model, kappa, d, lr)`` -> list of the group's trial results, each
            with ``seed``, ``steps_budget`` and ``finished`` (the record's time stamp).
        """
        keys = list(PLAN)
        out = {}
        for i in sorted(set(groups)):
            g = keys[i]
            model, kappa, d, lr = g
            cfg = PLAN[g]
            got = []

            def run(params, got=got):
                recs = runner(params)
                got.extend((q, r) for q, r in zip(params, recs) if is_ok(r))
                return recs

            th = group_theory(model, kappa, d)["value"]
            measure_capacity(model, d, kappa=kappa, design="adaptive", alphas=[th * f for f in START],
                             ci_halfwidth=CI_HALFWIDTH, max_trials=cfg["max_trials"], batch=BATCH, runner=run,
                             steps=cfg["steps"], dtype="float32", lr=lr)
            out[g] = _with_params(got)
        for g, trials in (LR_CHECK.items() if lr_check else ()):
            model, kappa, d, lr = g
            params = [trial_params(model, d, [float(load_of(p, d))], [sd], kappa=kappa, steps=4096,
                                   dtype="float32", lr=lr)[0] for p, sd in trials]
            out[g] = _with_params([(q, r) for q, r in zip(params, runner(params)) if is_ok(r)])
        return out

    @fill_doc
    def summarise(self, results, groups, lr_check):
        """One :class:`GroupThreshold` and budget table per group, and the learning-rate check.

        Parameters
        ----------
        %(executed)s
        groups : tuple of int
            The chosen groups.
        lr_check : bool
            Whether the rate check was run.

        Returns
        -------
        PaperSizeThresholds
            The rows, budget tables, learning-rate check and missing groups.
        """
        rows = {group_key(*g): _group_row(g, res) for g, res in results.items() if res}
        budget = {group_key(*g): _budget_rows(res) for g, res in results.items() if res}
        lrc = []
        for (m, k, d, lr), res in results.items():
            if m != "op" or d != 100:
                continue
            for r in res:
                if r["seed"] < len(START):
                    lrc.append({"load": r["load"], "seed": r["seed"], "lr": 0.1 if lr is None else lr,
                                "success": r["success"], "accuracy": r["accuracy"], "steps": r["steps"],
                                "loss": r["loss"]})
        lrc.sort(key=lambda r: (r["load"], -r["lr"]))
        keys = list(PLAN)
        missing = [group_key(*keys[i]) for i in sorted(set(groups)) if group_key(*keys[i]) not in rows]
        return PaperSizeThresholds(rows=rows, budget=budget, lr_check=lrc, missing=missing)


def _with_params(pairs):
    """Trial results with their ``seed``, ``steps_budget`` and ``finished`` (time stamp) added."""
    return [{**r["result"], "seed": q["seed"], "steps_budget": q.get("steps"), "finished": r.get("finished")}
            for q, r in pairs]


def _long_params():
    return [trial_params(m, d, [float(load_of(p, d))], [sd], kappa=k, steps=st, dtype="float32", lr=lr)[0]
            for m, k, d, lr, p, sd, st in LONG_BUDGET]


@fill_doc
class LongBudgetStudy(Study):
    """``linear_memory.d150_budget``: the :data:`LONG_BUDGET` reruns (see the module notes).

    %(ref_d150)s
    """

    name = "linear_memory.d150_budget"
    title = "stored 4096-step failures near the d = 100 OP threshold rerun with 16384 steps"
    trial = capacity_trial
    docs = "docs/linear_memory.md#thresholds-at-d--100-and-150"

    def plan(self):
        return _long_params()

    def summarise(self, results):
        """The reruns found: one dict each.

        Parameters
        ----------
        results : list
            Engine records, as the runner returns them.

        Returns
        -------
        list of dict
            ``load``, ``seed``, ``lr``, ``steps_budget``, ``success``, ``steps``,
            ``accuracy``, ``loss`` of each rerun (missing ones left out).
        """
        out = []
        for q, rec in zip(self.plan(), results):
            if rec is None or rec["status"] != "ok":
                continue
            r = rec["result"]
            out.append({"load": r["load"], "seed": q["seed"], "lr": q["lr"], "steps_budget": q["steps"],
                        "success": r["success"], "steps": r["steps"], "accuracy": r["accuracy"],
                        "loss": r["loss"]})
        return out


@fill_doc
@dataclass(frozen=True)
class Refit(ThresholdRecord):
    """A group's threshold with the long-budget reruns' outcomes in place of their 4096-step ones.

    Parameters
    ----------
    threshold : float
        Logistic 1/2 point.
    ci_low, ci_high : float
        Its 95% interval (``to_dict()``: ``"ci": [ci_low, ci_high]``).
    replaced : int
        Outcomes replaced.

    %(ref_d150)s
    """

    threshold: float
    ci_low: float
    ci_high: float
    replaced: int


@fill_doc
@dataclass(frozen=True)
class LongBudget(Result):
    """The long-budget reruns next to their 4096-step trials, and the refitted thresholds.

    Parameters
    ----------
    rows : list of dict
        One per rerun: the rerun's fields (``LongBudgetStudy.summarise``)
        and ``accuracy_4096`` / ``loss_4096`` of the 4096-step trial of the
        same instance (None if it is not among the results).
    refit : dict
        :func:`group_key` -> :class:`Refit`: the group's threshold with the
        reruns' outcomes in place of their 4096-step ones.

    %(ref_d150)s
    """

    rows: list
    refit: dict


@fill_doc
def long_budget(reruns, results):
    """Join the long-budget reruns with the 4096-step trials of ``linear_memory.d150`` and refit.

    Parameters
    ----------
    reruns : list of dict
        Outcome of ``linear_memory.d150_budget``.
    results : dict
        Results of ``linear_memory.d150`` (``StudyRun.results``).

    Returns
    -------
    LongBudget
        The joined rows and the refits (a rerun that succeeds turns a failure
        into a success, so the 4096-step fit is a lower estimate there).

    %(ref_d150)s
    """
    base = {(g[2], r["load"], r["seed"], g[3]): r for g, res in results.items() for r in res if g[0] == "op"}
    dims = {(float(load_of(p, d)), sd, lr): d for m, k, d, lr, p, sd, st in LONG_BUDGET}
    rows = []
    for r in reruns:
        b = base.get((dims.get((r["load"], r["seed"], r["lr"])), r["load"], r["seed"], r["lr"]))
        rows.append({**r, "accuracy_4096": b["accuracy"] if b else None, "loss_4096": b["loss"] if b else None})
    refit = {}
    for g, rr in results.items():
        sub = {(round(r["load"], 12), r["seed"]): r["success"] for r in rows if g[0] == "op" and g[3] == r["lr"]}
        if not sub or not any((round(r["load"], 12), r["seed"]) in sub for r in rr):
            continue
        succ = [sub.get((round(r["load"], 12), r["seed"]), r["success"]) for r in rr]
        f = fit_threshold([r["load"] for r in rr], succ)
        refit[group_key(*g)] = Refit(threshold=f.threshold, ci_low=f.ci_low, ci_high=f.ci_high, replaced=len(sub))
    return LongBudget(rows=rows, refit=refit)


STUDIES = (PaperSizeStudy(), LongBudgetStudy())
