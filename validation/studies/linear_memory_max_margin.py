"""The max-margin memory near the exact threshold: ties per fact, scores and spectrum.

Each trial solves one OP instance to its maximal cosine margin
(:func:`validation.linear_memory.max_margin.max_margin_trial`, the same instances as the
exact decisions of ``linear_memory.exact_op``) at loads that approach the exact
threshold.  The summary sets, per ``d`` and load, the measured structure next to the
replica predictions: tied competitors per fact against the active-set size of the
:math:`V_p` minimiser, the normalised correct score against the minimiser's pinned
level, and the pooled singular values against the quarter circle with the Gaussian
calibration of the spectra study.

Regenerate or extend::

    nice -n 10 python -m validation study linear_memory.max_margin --workers 2

Docs: ``docs/linear_memory.md#the-max-margin-memory-at-the-threshold``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from replica import load_of, p_from_load
from replica.pinned_scores import pinned_scores
from validation.linear_memory.max_margin import max_margin_trial
from validation.linear_memory.registry import prediction
from validation.linear_memory.spectra import gaussian_calibration, pooled_ks

from .base import check_planned_dims, Study, dims_option, is_ok, fill_doc

__all__ = ["PLAN", "MaxMarginRow", "MaxMargin", "STUDIES"]

#: Per d: loads relative to the finite-p prediction, and seeds per load.  The exact OP
#: thresholds are 1.02 (d = 30), 1.06 (d = 40), 1.01 (d = 60), 1.01 (d = 80) and 1.02
#: (d = 100) times the prediction.
PLAN = {30: ((0.8, 0.9, 1.0), 4), 40: ((0.8, 0.9, 1.0), 4), 60: ((0.9, 1.0), 3), 80: ((0.9, 1.0), 3),
        100: ((0.9, 1.0), 3)}


@dataclass(frozen=True)
class MaxMarginRow(Result):
    """Max-margin memories at one ``(d, load)`` against the replica predictions.

    Parameters
    ----------
    d, p : int
        Dimension and facts.
    load, relative_load : float
        Load and load over the finite-p prediction.
    instances, feasible : int
        Instances solved and those with a memory.
    gamma_mean : float
        Mean maximal cosine margin.
    active_per_fact, active_per_fact_se : float
        Mean tied pairs per fact (pooled facts) and its standard error over instances.
    k_star : float
        Mean active-set size of the :math:`V_p` minimiser at ``p``.
    correct_mean, correct_se : float
        Mean normalised correct score and its standard error over instances.
    pinned_mean : float
        The :math:`V_p` minimiser's pinned correct score (same units).
    margin_median : float
        Median over instances of the median normalised margin.
    ks, ks_calibration, ks_calibration_sd : float
        Pooled KS distance of the singular values to the quarter circle, and its
        Gaussian-matrix calibration (mean, sd) for as many instances.

    References
    ----------
    docs/linear_memory.md#the-max-margin-memory-at-the-threshold
    """

    d: int
    p: int
    load: float
    relative_load: float
    instances: int
    feasible: int
    gamma_mean: float
    active_per_fact: float
    active_per_fact_se: float
    k_star: float
    correct_mean: float
    correct_se: float
    pinned_mean: float
    margin_median: float
    ks: float
    ks_calibration: float
    ks_calibration_sd: float


class MaxMargin(Study):
    """Max-margin OP memories near the exact threshold (see the module notes).

    References
    ----------
    docs/linear_memory.md#the-max-margin-memory-at-the-threshold
    """

    name = "linear_memory.max_margin"
    title = "max-margin memories near the exact threshold: ties per fact, scores, spectrum"
    trial = max_margin_trial
    docs = "docs/linear_memory.md#the-max-margin-memory-at-the-threshold"
    options = (dims_option(sorted(PLAN), help="dimensions (planned: " + ", ".join(map(str, sorted(PLAN))) + ")"),)

    def validate(self, options):
        return check_planned_dims(options, sorted(PLAN))

    def plan_d(self, d):
        """Return the trial parameters at ``d`` (seed-major).

        Parameters
        ----------
        d : int
            A dimension of :data:`PLAN`.

        Returns
        -------
        list of dict
            ``d``, ``alpha``, ``seed``, ``relative`` records.
        """
        rel, seeds = PLAN[d]
        c = prediction("op", d)["value"]
        return [{"d": d, "alpha": float(load_of(p_from_load(c * r, d), d)), "seed": s}
                for s in range(seeds) for r in rel]

    def plan(self, ds):
        return [q for d in ds for q in self.plan_d(d)]

    def execute(self, runner, ds):
        recs = runner(self.plan(ds))
        return list(zip(self.plan(ds), recs))

    @fill_doc
    def summarise(self, results, ds):
        """One :class:`MaxMarginRow` per ``(d, load)``.

        Parameters
        ----------
        %(record_pairs)s

        Returns
        -------
        list of MaxMarginRow
            Rows with at least one solved instance, by ``d`` then load.
        """
        groups = {}
        for q, rec in results:
            if is_ok(rec):
                groups.setdefault((q["d"], q["alpha"]), []).append(rec["result"])
        rows = []
        for (d, alpha), res in sorted(groups.items()):
            ok = [r for r in res if r["feasible"]]
            p = res[0]["p"]
            pin = pinned_scores(p, samples=4000, rng=1)
            c = prediction("op", d)["value"]
            if ok:
                per = np.array([np.dot(np.arange(len(r["active_hist"])), r["active_hist"]) / p for r in ok])
                cm = np.array([r["correct_mean"] for r in ok])
                ks, _, _ = pooled_ks([r["sv"] for r in ok], 1.0)
                cal = gaussian_calibration(d, d, len(ok))
                se = (lambda x: float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan)
                vals = dict(gamma_mean=float(np.mean([r["gamma"] for r in ok])),
                            active_per_fact=float(per.mean()), active_per_fact_se=se(per),
                            correct_mean=float(cm.mean()), correct_se=se(cm),
                            margin_median=float(np.median([r["margin_q"][1] for r in ok])),
                            ks=ks, ks_calibration=cal.ks_mean, ks_calibration_sd=cal.ks_sd)
            else:
                vals = dict.fromkeys(("gamma_mean", "active_per_fact", "active_per_fact_se", "correct_mean",
                                      "correct_se", "margin_median", "ks", "ks_calibration",
                                      "ks_calibration_sd"), math.nan)
            rows.append(MaxMarginRow(d=d, p=p, load=float(alpha), relative_load=float(alpha) / c,
                                     instances=len(res), feasible=len(ok),
                                     k_star=float(pin["k_active"].mean()),
                                     pinned_mean=float(pin["correct"].mean()), **vals))
        return rows


STUDIES = (MaxMargin(),)
