"""Exact thresholds under the listwise (TAM) criterion and top-1 at a margin, against replica theory.

Each trial decides one instance exactly, with a verified certificate either
way (:func:`validation.linear_memory.exact_listwise.listwise_exact_trial`,
deterministic in ``(model, d, n, criterion, tau, margin, seed)``).  The
threshold is the logistic fit of the decisions against the criterion's load
(``n / d^2`` for TAM, ``n ln n / d^2`` for top-1;
:func:`validation.linear_memory.exact_listwise.listwise_load`), next to the
replica prediction at the same ``d`` (the fixed point ``load = alpha_c(n)`` of
``replica.tam_capacity`` / ``replica.alpha_c_finite(p, margin=)``, one Monte
Carlo evaluation at the planned centre ``n``, with its standard error).

Study ``linear_memory.listwise``: the :data:`CASES` (criterion, tail fraction,
margin) for OP and DP at the planned dimensions.  Study
``linear_memory.listwise_hebbian``: the Hebbian memory ``sum_mu c_mu e_mu^T``
of the same instances scored under top-1 and TAM (all facts pass, and the
fraction that does), its top-1 transition against ``replica.hebbian_threshold``.
Regenerate or extend::

    nice -n 10 python -m validation study linear_memory.listwise --d 20 --workers 1
    nice -n 10 python -m validation study linear_memory.listwise_hebbian --workers 1

Docs: ``docs/listwise.md#exact-decisions``.

Notes
-----
:data:`CENTRE` holds the predicted ``n`` at each ``(case, d)``: the fixed
points of :func:`validation.linear_memory.exact_listwise.listwise_prediction`
(20000 samples, seed 0), written here so that the plan is known without
sampling; ``summarise`` re-evaluates the prediction at that ``n`` and reports
how far the fixed point is from it.  The decision cost grows fast with ``d``
(CPU seconds per instance: 0.23 on average at ``d = 20``, 5.1 at ``d = 30``,
31 at ``d = 40`` on the committed runs), which is why the plans at ``d = 30``
and ``40`` are small (two seeds per size, zero-margin TAM cases only; at
``d = 40`` the tail fractions 0.05 and 0.2).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from validation.linear_memory.capacity import ThresholdRecord
from validation.linear_memory.exact_listwise import (HEBBIAN_TAUS, hebbian_listwise_trial, listwise_exact_trial,
                                                     listwise_load, listwise_params)
from validation.logistic import fit_threshold

from .base import check_planned_dims, Study, dims_option, fill_doc, is_ok, models_option, ok_pairs

__all__ = ["CASES", "CENTRE", "PLAN", "SPHERE_PLAN", "ListwiseThreshold", "ListwiseStudy", "case_label", "theory_at",
           "HEBBIAN_PLAN", "HebbianListwise", "HebbianListwiseStudy", "STUDIES"]

#: (criterion, tau, margin) decided.
CASES = (("tam", 0.01, 0.0), ("tam", 0.05, 0.0), ("tam", 0.2, 0.0), ("tam", 0.05, 0.1), ("tam", 0.05, 0.5),
         ("top1", None, 0.1), ("top1", None, 0.5))

#: Predicted number of facts at each d, per case (fixed points of listwise_prediction, 20000 samples).
CENTRE = {20: (87, 93, 142, 87, 68, 82, 66), 30: (165, 191, 313, 178, 137, 156, 126),
          40: (263, 325, 552, 302, 231, 247, 202)}

#: Per d: relative sizes around the centre, seeds per size, cases planned (indices into CASES).
PLAN = {20: (np.linspace(0.8, 1.2, 7), 4, tuple(range(len(CASES)))),
        30: (np.linspace(0.85, 1.15, 5), 2, (0, 1, 2)),
        40: (np.linspace(0.88, 1.12, 5), 2, (1, 2))}

#: Control at d = 20 (OP, margin cases): inputs and candidates rescaled to norm sqrt(d).
#: Relative sizes, seeds, cases.  At a positive margin the decision is no longer invariant
#: under rescaling each input, so the chi fluctuations of Gaussian norms (relative size
#: 1/sqrt(2d)) enter; the replica computation takes every norm at sqrt(d).
SPHERE_PLAN = {20: (np.linspace(0.8, 1.2, 7), 4, (3, 4, 5, 6))}


@fill_doc
def case_label(criterion, tau, margin):
    """Return a short label of a case, ``"tam tau=0.05 margin=0.1"``.

    Parameters
    ----------
    %(case)s

    Returns
    -------
    str
        The label.

    %(ref_exact_decisions)s
    """
    return criterion + (f" tau={tau:g}" if tau is not None else "") + f" margin={margin:g}"


@fill_doc
@functools.lru_cache(maxsize=None)
def theory_at(criterion, tau, margin, n, d):
    """Return the replica prediction evaluated at ``n`` facts: value, stderr, limit and the fixed-point gap.

    Parameters
    ----------
    %(case)s
    n : int
        Number of facts (the planned centre).
    %(d)s

    Returns
    -------
    dict
        ``value``, ``stderr`` (load units of :func:`listwise_load`), ``limit``
        (large ``p``), ``p`` (= ``n``), ``fixed_point_gap`` (``n`` implied by
        the value minus ``n``; within about 1 when ``n`` is the fixed point).

    References
    ----------
    docs/listwise.md#finite-p-corrections
    """
    from replica import alpha_c_finite, p_from_load, tam_capacity

    if criterion == "tam":
        est = tam_capacity(tau, n, margin=margin, samples=20_000, rng=0)
        implied = est.value * d * d
        limit = float(tam_capacity(tau, margin=margin))
    else:
        est = alpha_c_finite(n, margin=margin, samples=20_000, rng=0)
        implied = p_from_load(est.value, d)
        limit = 0.5
    return {"value": float(est.value), "stderr": float(est.stderr), "limit": limit, "p": int(n),
            "fixed_point_gap": float(implied - n)}


@fill_doc
@dataclass(frozen=True)
class ListwiseThreshold(ThresholdRecord):
    """The exact threshold of one case at one ``d`` for one fact model, next to theory.

    Parameters
    ----------
    %(model)s %(d)s
    inputs : str
        ``"gaussian"`` (facts as drawn) or ``"sphere"`` (norms set to ``sqrt(d)``).
    %(case)s
    threshold : float
        Logistic 1/2 point of the decisions (load units of :func:`listwise_load`).
    %(ci_pair)s
    theory, theory_stderr, theory_limit : float
        Replica prediction at ``d``, its Monte Carlo error, its large-``p`` limit.
    verdict : str
        ``"agrees"`` when the prediction lies in the interval, else ``"differs"``
        (``"no fit"`` without a bracketed crossing).
    counts : list
        ``[load, feasible, decided]`` rows.
    instances, undecided, unverified, missing : int
        Instances, undecided ones, decided ones whose certificate failed, planned ones not in the store.
    cpu_seconds_per_instance : float
        Mean CPU time of a decision.

    %(ref_exact_decisions)s
    """

    model: str
    d: int
    inputs: str
    criterion: str
    tau: float | None
    margin: float
    threshold: float
    ci_low: float
    ci_high: float
    theory: float
    theory_stderr: float
    theory_limit: float
    verdict: str
    counts: list
    instances: int
    undecided: int
    unverified: int
    missing: int
    cpu_seconds_per_instance: float


@fill_doc
class ListwiseStudy(Study):
    """Exact TAM and top-1-at-a-margin thresholds of OP and DP memories (see the module notes).

    %(ref_exact_decisions)s
    """

    name = "linear_memory.listwise"
    trial = listwise_exact_trial
    docs = "docs/listwise.md#exact-decisions"
    title = ("exact thresholds under the tail-average margin and top-1 at a margin, OP and DP, "
             "against the finite-p replica predictions")
    options = (dims_option((20, 30, 40), help=f"dimensions (planned: {', '.join(map(str, sorted(PLAN)))})"),
               models_option())

    def validate(self, options):
        return check_planned_dims(options, sorted(PLAN))

    @fill_doc
    def plan_d(self, model, d):
        """Return the planned trial records at ``d`` for one fact model.

        Parameters
        ----------
        %(model)s
        d : int
            A dimension of ``PLAN``.

        Returns
        -------
        list of dict
            :func:`listwise_exact_trial` parameters, seed-major.
        """
        out = []
        plans = [(PLAN, None)] + ([(SPHERE_PLAN, "sphere")] if model == "op" and d in SPHERE_PLAN else [])
        for table, inputs in plans:
            rel, seeds, cases = table[d]
            for i in cases:
                crit, tau, margin = CASES[i]
                ns = sorted({max(2, int(round(CENTRE[d][i] * r))) for r in rel})
                out += listwise_params(model, d, ns, range(seeds), criterion=crit, tau=tau, margin=margin,
                                       inputs=inputs)
        return sorted(out, key=lambda q: (q.get("inputs", ""), q["seed"],
                                          CASES.index((q["criterion"], q["tau"], q["margin"])), q["n"]))

    def plan(self, ds, models):
        return [q for d in ds for m in models for q in self.plan_d(m, d)]

    def execute(self, runner, ds, models):
        recs = runner(self.plan(ds, models))
        params = self.plan(ds, models)
        return list(zip(params, recs))

    @fill_doc
    def summarise(self, results, ds, models):
        """Fit the threshold of every (model, case, d); one :class:`ListwiseThreshold` each.

        Parameters
        ----------
        %(record_pairs)s
        models : tuple of str
            The fact models.

        Returns
        -------
        dict
            ``(model, case label, d)`` -> :class:`ListwiseThreshold`.
        """
        groups = {}
        for q, rec in results:
            key = (q["model"], (q["criterion"], q["tau"], q["margin"]), q["d"], q.get("inputs", "gaussian"))
            groups.setdefault(key, []).append(rec)
        rows = {}
        for (model, case, d, inputs), recs in groups.items():
            crit, tau, margin = case
            res = [r for _, r in ok_pairs(recs)]
            if not res:
                continue
            dec = [r for r in res if r["success"] is not None]
            th = theory_at(crit, tau, margin, CENTRE[d][CASES.index(case)], d)
            loads = [listwise_load(crit, r["p"], d) for r in dec]
            if len({r["success"] for r in dec}) > 1:
                fit = fit_threshold(loads, [r["success"] for r in dec])
                thr, lo, hi, counts = fit.threshold, fit.ci_low, fit.ci_high, fit.counts
                verdict = "agrees" if lo <= th["value"] <= hi else "differs"
            else:
                thr = lo = hi = math.nan
                counts = []
                verdict = "no fit"
            label = case_label(*case) + (" sphere" if inputs == "sphere" else "")
            rows[model, label, d] = ListwiseThreshold(
                model=model, d=d, inputs=inputs, criterion=crit, tau=tau, margin=margin, threshold=thr, ci_low=lo, ci_high=hi,
                theory=th["value"], theory_stderr=th["stderr"], theory_limit=th["limit"], verdict=verdict,
                counts=counts, instances=len(res), undecided=len(res) - len(dec),
                unverified=sum(r.get("verified") is not True for r in dec),
                missing=sum(r is None or r["status"] != "ok" for r in recs),
                cpu_seconds_per_instance=float(np.mean([r.get("cpu_seconds", math.nan) for r in res])))
        return rows



#: Hebbian plan: dimensions, sizes per d (geometric between d^2/100 and d^2/6), seeds per size.
HEBBIAN_PLAN = {"ds": (20, 40, 60), "sizes": 14, "seeds": 16}


@fill_doc
@dataclass(frozen=True)
class HebbianListwise(ThresholdRecord):
    """Threshold of the Hebbian memory under one criterion at one ``d``, with the fraction of facts passing.

    Parameters
    ----------
    %(model)s %(d)s
    criterion : str
        ``"top1"`` or ``"tam tau=..."``.
    threshold : float
        Load (``n ln n / d^2`` for top-1, ``n / d^2`` for TAM) where all facts pass with probability 1/2.
    %(ci_pair)s
    n_threshold : float
        The threshold as a number of facts.
    theory : float
        The conditional Hebbian model at ``d``: top-1 ``replica.hebbian_threshold(d, problem=model)``;
        TAM ``replica.hebbian_tam_threshold(d, tau, problem=model)`` (a quadrature, exact given the
        per-input scalars, for DP; the scalar model by Monte Carlo for OP).
    theory_stderr : float
        Monte Carlo standard error of ``theory`` (0 for the quadratures).
    verdict : str
        ``"agrees"``/``"differs"`` (theory inside the interval or not), ``"no theory"`` (the model has no
        root), ``"no fit"``.
    fraction : list
        ``[n, mean fraction of facts passing, its standard error, instances]`` rows.
    instances : int
        Instances.

    References
    ----------
    docs/listwise.md#the-hebbian-memory
    """

    model: str
    d: int
    criterion: str
    threshold: float
    ci_low: float
    ci_high: float
    n_threshold: float
    theory: float
    theory_stderr: float
    verdict: str
    fraction: list
    instances: int


class HebbianListwiseStudy(Study):
    """The Hebbian memory ``sum_mu c_mu e_mu^T`` under top-1 and TAM, OP and DP (see the module notes).

    References
    ----------
    docs/listwise.md#the-hebbian-memory
    """

    name = "linear_memory.listwise_hebbian"
    trial = hebbian_listwise_trial
    docs = "docs/listwise.md#the-hebbian-memory"
    title = "Hebbian memory: all-facts transition under top-1 and the tail-average margin"
    options = (dims_option(HEBBIAN_PLAN["ds"], low=4, high=200), models_option())

    @staticmethod
    @fill_doc
    def sizes(d):
        """Return the planned numbers of facts at ``d``.

        Parameters
        ----------
        %(d)s

        Returns
        -------
        list of int
            Sorted sizes.
        """
        return sorted({max(2, int(round(x))) for x in np.geomspace(d * d / 100, d * d / 6, HEBBIAN_PLAN["sizes"])})

    def plan(self, ds, models):
        return [{"model": m, "d": int(d), "n": n, "seed": s} for s in range(HEBBIAN_PLAN["seeds"])
                for d in ds for m in models for n in self.sizes(d)]

    def execute(self, runner, ds, models):
        params = self.plan(ds, models)
        return list(zip(params, runner(params)))

    def summarise(self, results, ds, models):
        """Fit the all-facts threshold of every (model, d, criterion).

        Parameters
        ----------
        results : list
            ``(params, record)`` pairs.
        ds : tuple of int
            The dimensions.
        models : tuple of str
            The fact models.

        Returns
        -------
        dict
            ``(model, d, criterion)`` -> :class:`HebbianListwise`.
        """
        from replica import hebbian_tam_threshold, hebbian_threshold, p_from_load

        groups = {}
        for q, rec in results:
            if is_ok(rec):
                groups.setdefault((q["model"], q["d"]), []).append(rec["result"])
        rows = {}
        crits = ["top1"] + [f"tam_{t:g}" for t in HEBBIAN_TAUS]
        for (model, d), res in groups.items():
            for c in crits:
                ok = [r[c][0] for r in res]
                crit = "top1" if c == "top1" else "tam"
                loads = [listwise_load(crit, r["p"], d) for r in res]
                frac = []
                for n in sorted({r["p"] for r in res}):
                    f = np.array([r[c][1] for r in res if r["p"] == n])
                    frac.append([n, float(f.mean()), float(f.std(ddof=1) / math.sqrt(f.size)) if f.size > 1
                                 else math.nan, int(f.size)])
                if c == "top1":
                    theory, theory_se = float(hebbian_threshold(d, problem=model)), 0.0
                elif model == "op":
                    est = hebbian_tam_threshold(d, float(c[4:]), problem=model)
                    theory, theory_se = float(est.value), float(est.stderr)
                else:
                    theory, theory_se = float(hebbian_tam_threshold(d, float(c[4:]), problem=model)), 0.0
                if len(set(ok)) > 1:
                    fit = fit_threshold(loads, ok)
                    thr, lo, hi = fit.threshold, fit.ci_low, fit.ci_high
                    n_thr = (float(p_from_load(thr, d)) if crit == "top1" else thr * d * d)
                    verdict = ("no theory" if not math.isfinite(theory) else "agrees" if lo <= theory <= hi
                               else "differs")
                else:
                    thr = lo = hi = n_thr = math.nan
                    verdict = "no fit"
                label = "top1" if c == "top1" else f"tam tau={c[4:]}"
                rows[model, d, label] = HebbianListwise(
                    model=model, d=d, criterion=label, threshold=thr, ci_low=lo, ci_high=hi, n_threshold=n_thr,
                    theory=theory, theory_stderr=theory_se, verdict=verdict, fraction=frac, instances=len(res))
        return rows


STUDIES = (ListwiseStudy(), HebbianListwiseStudy())
