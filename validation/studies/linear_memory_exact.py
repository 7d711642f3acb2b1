"""Exact capacity thresholds: does a full-rank memory that recalls all facts exist?

Each trial decides one instance exactly, with a certificate either way
(:func:`validation.linear_memory.exact.exact_trial`, deterministic in
``(model, d, alpha, seed)``); the threshold is the logistic fit of the
decisions against load (:func:`validation.logistic.fit_threshold`).  Loads are
the finite-``p`` replica prediction at ``d``
(:func:`validation.linear_memory.registry.prediction`, the same for OP and DP)
times the relative loads of :data:`PLAN`, so OP and DP are decided at the same
loads.  Two studies, one per fact model:

* ``linear_memory.exact_op`` -- one shared output set (OP);
* ``linear_memory.exact_dp`` -- each fact its own candidates (DP);
* ``linear_memory.exact_adaptive`` -- one threshold per fact model and ``d`` by the
  adaptive design (:func:`validation.adaptive.adaptive_threshold`): rounds of
  :data:`ADAPTIVE` ``["batch"]`` loads chosen from the current fit until the
  95% CI half-width is <= :data:`ADAPTIVE` ``["ci_halfwidth"]`` (the speed target of
  the exact solver: ``benchmarks/bench_exact.py --adaptive 150``).

Regenerate or extend (decided instances are reused)::

    nice -n 10 python -m validation study linear_memory.exact_op --d 20,30 --workers 2
    nice -n 10 python -m validation study linear_memory.exact_adaptive --d 150 --workers 2

Docs: ``docs/linear_memory.md#exact-capacity``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from validation.linear_memory.capacity import ThresholdRecord, measure_capacity
from validation.linear_memory.exact import exact_params, exact_trial
from validation.linear_memory.registry import prediction
from validation.logistic import fit_threshold
from replica import load_of, p_from_load

from .base import Study, check_planned_dims, dims_option, fill_doc, models_option, ok_pairs

__all__ = ["PLAN", "TIMING", "DP_DECIDED", "ADAPTIVE", "ExactThreshold", "ExactThresholds",
           "AdaptiveExactThreshold", "AdaptiveExact", "STUDIES"]

#: Per d: relative loads around the finite-size RS prediction and seeds per load.
PLAN = {20: (np.linspace(0.85, 1.15, 7), 8), 30: (np.linspace(0.85, 1.15, 7), 8),
        40: (np.linspace(0.88, 1.12, 5), 8),
        60: (np.array([0.9, 0.95, 0.97, 1.0, 1.03, 1.1]), 24),
        80: (np.array([0.92, 0.96, 1.0, 1.02, 1.04]), 12), 100: (np.array([0.92, 0.96, 1.0, 1.02, 1.04]), 12),
        150: (np.array([0.97, 1.0, 1.03, 1.06]), 8)}

#: Timing-only instances (too few for a threshold): per d, relative loads and seeds (none planned now:
#: the two d = 150 timing instances at 0.97 are part of the d = 150 threshold plan).
TIMING = {}

#: Dimensions at which the committed DP store holds every planned instance (the default of
#: ``linear_memory.exact_dp``; extend with ``--d 150``).
DP_DECIDED = (20, 30, 40, 60, 80, 100)

#: Settings of the adaptive design of ``linear_memory.exact_adaptive``: target 95% CI half-width,
#: trial cap, loads per round (one per worker) and first seed (one new seed per trial from
#: ``seed0`` on; 1000 keeps them apart from the grid's seeds 0 to 23).  The first round is
#: :func:`~validation.linear_memory.capacity.adaptive_settings`' default: 0.95 and 1.05 times the
#: finite-``p`` prediction.
ADAPTIVE = {"ci_halfwidth": 0.01, "max_trials": 40, "batch": 2, "seed0": 1000}
#: Dimensions of the committed adaptive runs (the default of ``linear_memory.exact_adaptive``).
ADAPTIVE_DIMS = (150,)


@fill_doc
@dataclass(frozen=True)
class ExactThreshold(ThresholdRecord):
    """The exact threshold at one ``d`` and the cost of its decisions.

    Parameters
    ----------
    %(d)s
    threshold : float
        Logistic 1/2 point of the decisions (NaN without a fit: timing-only
        instances, or decisions that do not bracket it).
    %(ci_pair)s
    theory, theory_stderr : float
        The finite-``p`` prediction at ``d`` and its Monte Carlo standard error.
    p_at_threshold : int or None
        ``p`` at the threshold load.
    counts : list
        ``[load, feasible, decided]`` rows.
    instances, undecided, missing : int
        Decided instances, undecided ones, planned ones not in the store.
    seconds_per_instance, cpu_seconds_per_instance, cpu_seconds_median, cpu_seconds_max : float
        Wall and CPU seconds per instance.
    max_infeasible_eps : float or None
        Largest certificate bound of an infeasible instance.
    min_feasible_margin : float or None
        Smallest cosine margin of a certified memory.
    max_active : int
        Largest active set of a decision.
    solvers : dict
        Solver that decided -> instances.
    p_values : list of int
        Distinct ``p`` of the instances.
    threshold_fit : bool
        Whether ``d`` has a threshold plan (False: timing only).

    References
    ----------
    docs/linear_memory.md#exact-capacity
    """

    d: int
    threshold: float
    ci_low: float
    ci_high: float
    theory: float
    theory_stderr: float
    p_at_threshold: int | None
    counts: list
    instances: int
    undecided: int
    missing: int
    seconds_per_instance: float
    cpu_seconds_per_instance: float
    cpu_seconds_median: float
    cpu_seconds_max: float
    max_infeasible_eps: float | None
    min_feasible_margin: float | None
    max_active: int
    solvers: dict
    p_values: list
    threshold_fit: bool


class ExactThresholds(Study):
    """Exact thresholds of one fact model at the planned dimensions (see the module notes).

    Parameters
    ----------
    model : {"op", "dp"}
        The fact model.

    References
    ----------
    docs/linear_memory.md#exact-capacity
    """

    trial = exact_trial
    docs = "docs/linear_memory.md#exact-capacity"

    def __init__(self, model):
        self.model = model
        self.name = f"linear_memory.exact_{model}"
        self.title = (f"exact existence thresholds of full-rank {model.upper()} memories against d "
                      "(certified decisions, no training)")
        default = tuple(sorted(PLAN) + sorted(TIMING)) if model == "op" else DP_DECIDED
        self.options = (dims_option(default, low=1, help="dimensions (planned: "
                                    + ", ".join(map(str, sorted(PLAN) + sorted(TIMING))) + ")"),)

    def validate(self, options):
        return check_planned_dims(options, sorted(PLAN) + sorted(TIMING))

    def plan_d(self, d):
        """Return the parameter records of the planned trials at ``d``.

        Parameters
        ----------
        d : int
            A dimension of :data:`PLAN` or :data:`TIMING`.

        Returns
        -------
        list of dict
            :func:`~validation.linear_memory.exact.exact_trial` parameters,
            seed-major (an interrupted run still covers every load).
        """
        rel, seeds = PLAN[d] if d in PLAN else TIMING[d]
        c = prediction("op", d)["value"]
        loads = sorted({float(load_of(p_from_load(c * r, d), d)) for r in rel})
        return sorted(exact_params(self.model, d, loads, range(seeds)), key=lambda q: (q["seed"], q["alpha"]))

    def plan(self, ds):
        return [q for d in ds for q in self.plan_d(d)]

    def execute(self, runner, ds):
        recs = runner(self.plan(ds))
        out, i = {}, 0
        for d in ds:
            n = len(self.plan_d(d))
            out[d] = recs[i:i + n]
            i += n
        return out

    def summarise(self, results, ds):
        """Fit the threshold at every ``d``; one :class:`ExactThreshold` per ``d``.

        Parameters
        ----------
        results : dict
            ``d`` -> records, as :meth:`execute` returns them.
        ds : tuple of int
            The dimensions.

        Returns
        -------
        dict
            ``d`` -> :class:`ExactThreshold` (dimensions without a decided
            instance are left out).
        """
        rows = {}
        for d in ds:
            recs = results[d]
            res = [r for _, r in ok_pairs(recs)]
            if not res:
                continue
            dec = [r for r in res if r.get("success") is not None]
            th = prediction("op", d)
            if d in PLAN and dec:
                fit = fit_threshold([r["load"] for r in dec], [r["success"] for r in dec])
                thr, lo, hi, counts = fit.threshold, fit.ci_low, fit.ci_high, fit.counts
            else:
                thr, lo, hi, counts = math.nan, math.nan, math.nan, []
            cpu = np.array([r.get("cpu_seconds", math.nan) for r in res])
            rows[d] = ExactThreshold(
                d=d, threshold=thr, ci_low=lo, ci_high=hi, theory=th["value"], theory_stderr=th["stderr"],
                p_at_threshold=p_from_load(thr, d) if math.isfinite(thr) else None, counts=counts,
                instances=len(res), undecided=sum(r["success"] is None for r in res),
                missing=sum(r is None or r["status"] != "ok" for r in recs),
                seconds_per_instance=float(np.mean([r["seconds"] for r in res])),
                cpu_seconds_per_instance=float(cpu.mean()), cpu_seconds_median=float(np.median(cpu)),
                cpu_seconds_max=float(cpu.max()),
                max_infeasible_eps=max((r["margin"] for r in res if r["success"] is False), default=None),
                min_feasible_margin=min((r["margin"] for r in res if r["success"] is True), default=None),
                max_active=max(r["active"] for r in res),
                solvers={m: sum(r.get("method", "lh") == m for r in res)
                         for m in sorted({r.get("method", "lh") for r in res})},
                p_values=sorted({int(r["p"]) for r in res}), threshold_fit=d in PLAN)
        return rows


@fill_doc
@dataclass(frozen=True)
class AdaptiveExactThreshold(ThresholdRecord):
    """One adaptive exact threshold and what it cost.

    Parameters
    ----------
    model : {"op", "dp"}
        The fact model.
    %(d)s
    threshold : float
        Logistic 1/2 point of the decisions.
    %(ci_pair)s
    halfwidth : float
        ``(ci_high - ci_low) / 2``.
    theory, theory_stderr : float
        The finite-``p`` prediction at ``d`` and its Monte Carlo standard error.
    trials : int
        Decided instances (every one certified: ``verified``).
    verified : int
        Instances whose certificate passed the independent check.
    stop : {"target", "max_trials"}
        Why the design stopped.
    counts : list
        ``[load, feasible, decided]`` rows.
    rounds : list of dict
        Per round: ``trials``, ``threshold``, ``ci_low``, ``ci_high``, ``loads``.
    cpu_seconds, cpu_seconds_max : float
        CPU seconds of all decisions, and of the slowest one.
    wall_seconds : float
        Elapsed wall time of the run that computed the decisions: last
        finish minus first start over the store's records (the run's own
        clock, not a replay's).

    References
    ----------
    docs/linear_memory.md#exact-capacity
    """

    model: str
    d: int
    threshold: float
    ci_low: float
    ci_high: float
    halfwidth: float
    theory: float
    theory_stderr: float
    trials: int
    verified: int
    stop: str
    counts: list
    rounds: list
    cpu_seconds: float
    cpu_seconds_max: float
    wall_seconds: float


def _wall_span(recs):
    """Seconds from the first record's start to the last one's finish (engine time stamps)."""
    from datetime import datetime

    t = [(datetime.fromisoformat(r["finished"].replace("Z", "+00:00")).timestamp(), r["seconds"]) for r in recs]
    return max(f for f, _ in t) - min(f - s for f, s in t)


class AdaptiveExact(Study):
    """``linear_memory.exact_adaptive``: one exact threshold per fact model and ``d`` by the adaptive design (see the module notes).

    References
    ----------
    docs/linear_memory.md#exact-capacity
    """

    name = "linear_memory.exact_adaptive"
    title = ("exact OP and DP thresholds by the adaptive design, to a 95% CI half-width of "
             f"{ADAPTIVE['ci_halfwidth']:g} (the exact solver's speed target)")
    trial = exact_trial
    docs = "docs/linear_memory.md#exact-capacity"
    options = (dims_option(ADAPTIVE_DIMS, low=2, help="dimensions (committed: "
                           + ", ".join(map(str, ADAPTIVE_DIMS)) + ")"), models_option())

    def execute(self, runner, ds, models):
        """Run (or replay) the adaptive design for each fact model at each ``d``.

        Parameters
        ----------
        runner : validation.studies.base.Runner
            Runs or replays the rounds.
        ds : tuple of int
            The dimensions.
        models : tuple of str
            The fact models (``"op"``, ``"dp"``).

        Returns
        -------
        dict
            ``(model, d)`` -> ``(measurement, records)``: the
            :class:`~validation.linear_memory.capacity.CapacityMeasurement` and
            the engine records of its trials, in the order run.
        """
        out = {}
        for model in models:
            for d in ds:
                recs = []

                def run(params, recs=recs):
                    got = runner(params)
                    recs.extend(r for r in got if r is not None)
                    return got

                m = measure_capacity(model, d, method="exact", design="adaptive", runner=run, **ADAPTIVE)
                out[model, d] = (m, recs)
        return out

    def summarise(self, results, ds, models):
        """One :class:`AdaptiveExactThreshold` per fact model and ``d``.

        Parameters
        ----------
        results : dict
            What :meth:`execute` returns.
        ds : tuple of int
            The dimensions.
        models : tuple of str
            The fact models.

        Returns
        -------
        dict
            ``(model, d)`` -> :class:`AdaptiveExactThreshold`.
        """
        rows = {}
        for (model, d), (m, recs) in results.items():
            res = [r["result"] for r in recs]
            cpu = [r.get("cpu_seconds", math.nan) for r in res]
            rows[model, d] = AdaptiveExactThreshold(
                model=model, d=d, threshold=m.threshold, ci_low=m.ci_low, ci_high=m.ci_high,
                halfwidth=(m.ci_high - m.ci_low) / 2, theory=m.theory["value"],
                theory_stderr=m.theory["stderr"], trials=m.trials,
                verified=int(m.certificates["verified_count"]), stop=m.stop, counts=m.counts,
                rounds=m.history, cpu_seconds=float(np.sum(cpu)), cpu_seconds_max=float(np.max(cpu)),
                wall_seconds=float(_wall_span(recs)))
        return rows


STUDIES = (ExactThresholds("op"), ExactThresholds("dp"), AdaptiveExact())
