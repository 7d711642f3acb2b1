"""Trained thresholds under the tail-average margin (TAM), next to the exact ones and theory.

Each trial trains one full-rank OP or DP memory by full-batch Adam on the squared
hinge TAM surrogate and stops at the first step at which every fact meets the
TAM condition (success) or at the step budget (failure)
(:func:`validation.linear_memory.train_listwise.listwise_trained_trial`,
deterministic in its parameters).  The instances are those of the exact study
``linear_memory.listwise`` (same generator, same ``(model, d, n, seed)``, its
sizes for each case of :data:`TRAINED`), so the trained and exact outcomes are
about the same instances.  The threshold is the logistic fit of the trained
successes against ``n / d^2`` (:func:`validation.logistic.fit_threshold`),
next to the exact threshold (replayed from the committed store of
``linear_memory.listwise``) and the finite-``p`` replica prediction.

Regenerate or extend::

    nice -n 10 python -m validation study linear_memory.listwise_trained --d 20,30 --workers 1
    nice -n 10 python -m validation study linear_memory.listwise_trained --d 20 --steps 16000 --workers 1

Docs: ``docs/listwise.md#trained-memories``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from validation.linear_memory.capacity import ThresholdRecord
from validation.linear_memory.train_listwise import TRAIN_DEFAULTS, listwise_trained_trial
from validation.logistic import fit_threshold

from .base import Option, Runner, Study, check_planned_dims, dims_option, fill_doc, is_ok, seeds_option
from .linear_memory_listwise import CASES, CENTRE, PLAN, ListwiseStudy, case_label, theory_at

__all__ = ["TRAINED", "TrainedListwiseThreshold", "ListwiseTrainedStudy", "exact_threshold", "STUDIES"]

#: The cases trained, per d: ``(model, i)`` with ``i`` an index into the exact study's
#: :data:`~validation.studies.linear_memory_listwise.CASES` (TAM cases; the DP tau = 0.05,
#: margin 0 case first, the one trained in the first release of this study).
TRAINED = {20: (("dp", 1), ("dp", 0), ("dp", 2), ("dp", 3), ("op", 1), ("op", 0), ("op", 2), ("op", 3)),
           30: (("dp", 1), ("dp", 0), ("dp", 2), ("op", 1), ("op", 2)), 40: (("dp", 1), ("op", 1), ("op", 2))}


def _exact_records(model, case, d):
    """The exact study's planned records of one case at ``d`` (facts as drawn) and their runner."""
    ls = ListwiseStudy()
    q = [r for r in ls.plan_d(model, d) if (r["criterion"], r["tau"], r["margin"]) == case and "inputs" not in r]
    return ls, q, Runner(ls, ls.committed_store(), compute=False, progress=False, missing="skip")


@fill_doc
def exact_threshold(model, case, d):
    """Return the exact threshold of one case at ``d``, replayed from the committed store.

    Parameters
    ----------
    %(model)s
    case : tuple
        ``(criterion, tau, margin)``, one of the exact study's cases.
    %(d)s

    Returns
    -------
    ListwiseThreshold or None
        The row of ``linear_memory.listwise`` for ``model``, ``case`` and ``d``
        (None if the committed store has no fit there).

    %(ref_exact_decisions)s
    """
    ls, q, runner = _exact_records(model, case, d)
    rows = ls.summarise(list(zip(q, runner(q))), (d,), (model,))
    return rows.get((model, case_label(*case), d))


@fill_doc
@dataclass(frozen=True)
class TrainedListwiseThreshold(ThresholdRecord):
    """The trained TAM threshold at one ``d`` and step budget, next to the exact threshold and theory.

    Parameters
    ----------
    %(model)s %(d)s
    tau, margin : float
        Tail fraction and margin.
    steps_budget : int
        Adam steps allowed per run.
    lr : float
        Adam learning rate.
    threshold : float
        Logistic 1/2 point of the trained successes against ``n / d^2`` (NaN without a fit).
    %(ci_pair)s
    exact_threshold, exact_ci_low, exact_ci_high : float
        The exact threshold of the same case at ``d`` (same instance generator) and its interval.
    theory, theory_stderr, theory_limit : float
        Finite-``p`` replica prediction at ``d``, its Monte Carlo error, its large-``p`` limit.
    verdict_theory : str
        ``"agrees"`` when the prediction lies in the trained interval, else ``"differs"`` (``"no fit"``).
    verdict_exact : str
        ``"agrees"`` when the two intervals overlap, else ``"differs"`` (``"no fit"``).
    counts : list
        ``[load, successes, runs]`` rows.
    paired : list
        ``[trained success, exact feasible]`` counts over the instances decided both ways:
        ``[[both, trained only], [exact only, neither]]``.
    instances, unverified, missing : int
        Runs, successes whose memory failed the independent verifier, planned runs not in the store.
    steps_median_success : float
        Median steps of the successful runs.
    cpu_seconds_per_instance : float
        Mean CPU time of a run.

    References
    ----------
    docs/listwise.md#trained-memories
    """

    model: str
    d: int
    tau: float
    margin: float
    steps_budget: int
    lr: float
    threshold: float
    ci_low: float
    ci_high: float
    exact_threshold: float
    exact_ci_low: float
    exact_ci_high: float
    theory: float
    theory_stderr: float
    theory_limit: float
    verdict_theory: str
    verdict_exact: str
    counts: list
    paired: list
    instances: int
    unverified: int
    missing: int
    steps_median_success: float
    cpu_seconds_per_instance: float


class ListwiseTrainedStudy(Study):
    """Trained TAM thresholds of OP and DP memories on the exact study's instances (see the module notes).

    References
    ----------
    docs/listwise.md#trained-memories
    """

    name = "linear_memory.listwise_trained"
    trial = listwise_trained_trial
    docs = "docs/listwise.md#trained-memories"
    title = ("trained thresholds under the tail-average margin (Adam on a squared-hinge surrogate), OP and DP, "
             "three tail fractions and a margin, against the exact thresholds on the same instances and the "
             "finite-p theory")
    options = (dims_option(tuple(sorted(TRAINED)),
                           help=f"dimensions (trained: {', '.join(map(str, sorted(TRAINED)))})"),
               seeds_option(8),
               Option("steps", "--steps", int, TRAIN_DEFAULTS["steps"], "Adam step budget per run", low=1,
                      high=10**6))

    def validate(self, options):
        return check_planned_dims(options, sorted(TRAINED))   # the dimensions with trained cases

    def plan(self, ds, seeds, steps):
        out = []
        for d in ds:
            rel = PLAN[d][0]
            for model, i in TRAINED[d]:
                _, tau, margin = CASES[i]
                ns = sorted({max(2, int(round(CENTRE[d][i] * r))) for r in rel})
                out += [{"model": model, "d": int(d), "n": n, "tau": tau, "margin": margin, "seed": s,
                         "lr": TRAIN_DEFAULTS["lr"], "steps": int(steps)} for n in ns for s in range(seeds)]
        return sorted(out, key=lambda q: (q["d"], q["seed"], q["model"], q["tau"], q["margin"], q["n"]))

    def execute(self, runner, ds, seeds, steps):
        params = self.plan(ds, seeds, steps)
        return list(zip(params, runner(params)))

    @fill_doc
    def summarise(self, results, ds, seeds, steps):
        """Fit the trained threshold at every ``d``; one :class:`TrainedListwiseThreshold` each.

        Parameters
        ----------
        %(record_pairs)s
        seeds : int
            Runs per load.
        steps : int
            The step budget.

        Returns
        -------
        dict
            ``(model, case label, d)`` -> :class:`TrainedListwiseThreshold`
            (label of :func:`~validation.studies.linear_memory_listwise.case_label`).
        """
        rows = {}
        for d in ds:
            for model, i in TRAINED[d]:
                crit, tau, margin = case = CASES[i]
                pairs = [(q, r) for q, r in results if q["d"] == d and q["model"] == model and q["tau"] == tau
                         and q["margin"] == margin]
                row = _trained_row(model, case, d, CENTRE[d][i], pairs, steps)
                if row is not None:
                    rows[(model, case_label(*case), d)] = row
        return rows


def _trained_row(model, case, d, centre, pairs, steps):
    """The :class:`TrainedListwiseThreshold` of one (model, case, d) from its (params, record) pairs."""
    crit, tau, margin = case
    res = [(q, r["result"]) for q, r in pairs if is_ok(r)]
    if not res:
        return None
    loads = [r["p"] / d**2 for _, r in res]
    ok = [bool(r["success"]) for _, r in res]
    th = theory_at(crit, tau, margin, centre, d)
    ex = exact_threshold(model, case, d)
    ex_thr, ex_lo, ex_hi = (ex.threshold, ex.ci_low, ex.ci_high) if ex is not None else (math.nan,) * 3
    if len(set(ok)) > 1:
        fit = fit_threshold(loads, ok)
        thr, lo, hi, counts = fit.threshold, fit.ci_low, fit.ci_high, fit.counts
        v_th = "agrees" if lo <= th["value"] <= hi else "differs"
        v_ex = ("no fit" if not math.isfinite(ex_thr) else
                "agrees" if lo <= ex_hi and ex_lo <= hi else "differs")
    else:
        thr = lo = hi = math.nan
        counts = [[x, sum(o for y, o in zip(loads, ok) if y == x), loads.count(x)] for x in sorted(set(loads))]
        v_th = v_ex = "no fit"
    exact = _exact_outcomes(model, case, d)
    paired = [[0, 0], [0, 0]]
    for (q, r) in res:
        e = exact.get((q["n"], q["seed"]))
        if e is not None:
            paired[0 if r["success"] else 1][0 if e else 1] += 1
    st = [r["steps"] for _, r in res if r["success"]]
    return TrainedListwiseThreshold(
        model=model, d=d, tau=tau, margin=margin, steps_budget=int(steps), lr=TRAIN_DEFAULTS["lr"], threshold=thr,
        ci_low=lo, ci_high=hi, exact_threshold=ex_thr, exact_ci_low=ex_lo, exact_ci_high=ex_hi,
        theory=th["value"], theory_stderr=th["stderr"], theory_limit=th["limit"], verdict_theory=v_th,
        verdict_exact=v_ex, counts=counts, paired=paired, instances=len(res),
        unverified=sum(r["success"] and r["verified"] is not True for _, r in res),
        missing=sum(not is_ok(r) for _, r in pairs),
        steps_median_success=float(np.median(st)) if st else math.nan,
        cpu_seconds_per_instance=float(np.mean([r["cpu_seconds"] for _, r in res])))


def _exact_outcomes(model, case, d):
    """``(n, seed) -> exact feasible`` for the instances of one case the committed exact store decided."""
    _, q, runner = _exact_records(model, case, d)
    return {(a["n"], a["seed"]): r["result"]["success"] for a, r in zip(q, runner(q))
            if is_ok(r) and r["result"]["success"] is not None}


STUDIES = (ListwiseTrainedStudy(),)
