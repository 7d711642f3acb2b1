"""Trained low-rank capacity thresholds against the finite-``p`` rank-constrained theory.

One study, ``linear_memory.lowrank_finite_p``: trials of
:func:`validation.linear_memory.capacity.capacity_trial` with
``model="lowrank"`` (default preset, 4096 steps) at ``kappa`` in :data:`KAPPAS`
and ``d`` in :data:`DS`, :data:`SEEDS` seeds on a grid of loads around the
prediction :func:`validation.linear_memory.theory.lowrank_finite_prediction`
(``alpha = alpha_c(m/d, p) = alpha_c(m/d) ln p / E[V_p]`` solved with
``p ln p = alpha d^2``), with one extension round where the crossing is not
bracketed; the summary fits each threshold (:func:`validation.logistic.fit_threshold`)
and compares it with the theory.  Regenerate or extend (about 15 min of CPU on
two cores for the default sizes; finished trials are reused)::

    nice -n 10 python -m validation study linear_memory.lowrank_finite_p --workers 2

Notes
-----
Loads: the finite-``p`` prediction times :data:`FACTORS` (0.88 to 1.16 in 8
steps), because measured thresholds sit 0-5 % above the prediction at full
rank.  The summary also refits every threshold counting a success only within
:data:`SHORT_BUDGET` steps (with the preset's constant rate exactly the outcome
of the shorter run): a step-budget convergence check.

Docs: ``docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from validation.linear_memory.capacity import MAX_TRAINED_D as MAX_D, ThresholdRecord, capacity_trial, extension_loads, trial_params
from validation.logistic import fit_threshold
from replica import load_of, p_from_load

from .base import Option, Study, dims_option, fill_doc, is_ok, seeds_option

__all__ = ["KAPPAS", "DS", "FACTORS", "SEEDS", "SHORT_BUDGET", "plan_group", "LowRankThreshold",
           "summarise_groups", "STUDIES"]

KAPPAS = (0.25, 0.5, 0.75)
DS = (20, 30, 40, 60, 80)
#: Loads: the finite-p prediction times these factors (see the notes).
FACTORS = tuple(np.round(np.linspace(0.88, 1.16, 8), 4))
SEEDS = 4
#: The step-budget check of the summary (steps).
SHORT_BUDGET = 2048


@fill_doc
def plan_group(d, kappa, *, seeds=SEEDS, factors=FACTORS):
    """Plan the loads and trial parameters of one ``(d, kappa)`` group.

    Parameters
    ----------
    %(d)s
    kappa : float
        Rank ratio in (0, 1] (the prediction uses the actual ``m / d``).
    seeds : int
        Trials per load.
    factors : sequence of float
        Loads are the finite-``p`` prediction times these factors.

    Returns
    -------
    loads : list of float
        Actual loads of integer ``p``, sorted, unique.
    params : list of dict
        :func:`~validation.linear_memory.capacity.capacity_trial` parameters.

    %(ref_rank_capacity)s
    """
    from validation.linear_memory.theory import lowrank_finite_prediction

    c = lowrank_finite_prediction(d, kappa)["value"]
    loads = sorted({float(load_of(p_from_load(c * f, d), d)) for f in factors})
    return loads, trial_params("lowrank", d, loads, range(seeds), kappa=kappa)


@fill_doc
@dataclass(frozen=True)
class LowRankThreshold(ThresholdRecord):
    """The trained threshold of one ``(kappa, d)`` against the finite-``p`` theory.

    Parameters
    ----------
    kappa : float
        Nominal rank ratio.
    %(d)s
    kappa_eff : float
        Actual ``m / d``.
    threshold : float
        Logistic 1/2 point.
    %(ci_pair)s
    theory, theory_stderr : float
        ``alpha_c(kappa, p)`` at ``m / d``, self-consistent, and its Monte Carlo error.
    theory_p : int
        ``p`` at the theory's fixed point.
    alpha_c_kappa : float
        The large-``p`` ``alpha_c(m / d)``.
    p_at_threshold : int or None
        ``p`` at the threshold load.
    ratio : float or None
        Threshold over theory.
    theory_in_ci : bool
        The theory lies in the interval.
    trials : int
        Trials.
    counts : list
        ``[load, successes, trials]`` rows.
    budget : int or None
        Step budget the successes were counted at (None: the run's own).
    train_cpu_seconds : float
        CPU seconds of the trials.

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories
    """

    kappa: float
    d: int
    kappa_eff: float
    threshold: float
    ci_low: float
    ci_high: float
    theory: float
    theory_stderr: float
    theory_p: int
    alpha_c_kappa: float
    p_at_threshold: int | None
    ratio: float | None
    theory_in_ci: bool
    trials: int
    counts: list
    budget: int | None
    train_cpu_seconds: float


def summarise_groups(records, *, budget=None):
    """Fit the thresholds and compare them with the finite-``p`` theory, one row per ``(kappa, d)``.

    Parameters
    ----------
    records : dict
        ``(kappa, d)`` -> trial results (``load``, ``success``, ``steps``).
    budget : int, optional
        Count a success only if it took at most ``budget`` steps (with the
        constant learning rate of the default preset this is exactly the
        outcome of a shorter run).

    Returns
    -------
    list of LowRankThreshold
        Sorted by ``(kappa, d)``.

    Notes
    -----
    The theory is ``alpha_c(kappa, p) = alpha_c(kappa) ln p / E[V_p]`` solved
    with ``p ln p = alpha d^2``
    (:func:`validation.linear_memory.theory.lowrank_finite_prediction`).

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories
    """
    from validation.linear_memory.theory import lowrank_finite_prediction

    rows = []
    for (k, d), res in sorted(records.items()):
        succ = [bool(r["success"]) and (budget is None or r["steps"] <= budget) for r in res]
        fit = fit_threshold([r["load"] for r in res], succ)
        th = lowrank_finite_prediction(d, k)
        thr = fit.threshold
        rows.append(LowRankThreshold(
            kappa=k, d=d, kappa_eff=th["kappa_eff"], threshold=thr, ci_low=fit.ci_low, ci_high=fit.ci_high,
            theory=th["value"], theory_stderr=th["stderr"], theory_p=th["p"], alpha_c_kappa=th["alpha_c_kappa"],
            p_at_threshold=p_from_load(thr, d) if math.isfinite(thr) else None,
            ratio=thr / th["value"] if math.isfinite(thr) else None,
            theory_in_ci=bool(fit.ci_low <= th["value"] <= fit.ci_high), trials=len(res), counts=fit.counts,
            budget=budget, train_cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in res))))
    return rows


@fill_doc
@dataclass(frozen=True)
class LowRankSummary(Result):
    """Summary of ``linear_memory.lowrank_finite_p``.

    Parameters
    ----------
    rows : list of LowRankThreshold
        One per ``(kappa, d)``.
    short_budget : list of LowRankThreshold
        The same fits counting successes within :data:`SHORT_BUDGET` steps only.
    agree : int
        Rows whose interval holds the theory.
    ratio_min, ratio_max : float or None
        Range of threshold / theory.

    %(ref_rank_capacity)s
    """

    rows: list
    short_budget: list
    agree: int
    ratio_min: float | None
    ratio_max: float | None

    def summary(self):
        """Return one line per (kappa, d).

        Returns
        -------
        str
            Threshold, interval, theory and whether the theory is inside.
        """
        lines = [f"kappa={r.kappa:g} d={r.d}: threshold {r.threshold:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}], theory "
                 f"{r.theory:.4f} ({'inside' if r.theory_in_ci else 'outside'}), {r.trials} trials" for r in self.rows]
        return "\n".join(lines + [f"theory inside the interval for {self.agree} of {len(self.rows)}"])


@fill_doc
class LowRankStudy(Study):
    """``linear_memory.lowrank_finite_p``: low-rank thresholds against the finite-``p`` theory.

    %(ref_rank_capacity)s
    """

    name = "linear_memory.lowrank_finite_p"
    title = "trained low-rank thresholds against alpha_c(kappa) ln p / E[V_p] (finite-p rank-constrained capacity)"
    trial = capacity_trial
    docs = "docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories"
    options = (dims_option(DS, high=MAX_D),
               Option("kappas", "--kappa", float, KAPPAS, "rank fractions", many=True, low=0, high=1,
                      low_open=True),
               seeds_option(SEEDS))

    @fill_doc
    def execute(self, runner, ds, kappas, seeds):
        """The grid of every group, then one extension round where the crossing is not bracketed.

        Parameters
        ----------
        %(runner)s
        ds, kappas : tuple
            Dimensions and rank ratios.
        seeds : int
            Trials per load.

        Returns
        -------
        dict
            ``(kappa, d)`` -> list of trial results (each with its ``seed``).
        """
        plans = {(k, d): plan_group(d, k, seeds=seeds) for k in kappas for d in ds}
        params = [p for _, prm in plans.values() for p in prm]
        out = {}
        for prm, r in zip(params, runner(params)):
            if is_ok(r):
                out.setdefault((prm["kappa"], prm["d"]), []).append({**r["result"], "seed": prm["seed"]})
        more = []
        for (k, d), (loads, prm) in plans.items():
            new = extension_loads(loads, out.get((k, d), []), d)
            if new:
                more += trial_params("lowrank", d, new, range(seeds), kappa=k)
        if more:
            for prm, r in zip(more, runner(more)):
                if is_ok(r):
                    out.setdefault((prm["kappa"], prm["d"]), []).append({**r["result"], "seed": prm["seed"]})
        return out

    @fill_doc
    def summarise(self, results, ds, kappas, seeds):
        """Fits, the short-budget refits and the agreement counts.

        Parameters
        ----------
        %(executed)s
        ds, kappas, seeds
            The options.

        Returns
        -------
        LowRankSummary
            The summary.
        """
        rows = summarise_groups(results)
        ratios = [r.ratio for r in rows if r.ratio is not None]
        return LowRankSummary(rows=rows, short_budget=summarise_groups(results, budget=SHORT_BUDGET),
                              agree=sum(r.theory_in_ci for r in rows), ratio_min=min(ratios, default=None),
                              ratio_max=max(ratios, default=None))


STUDIES = (LowRankStudy(),)
