"""Scores and margins of trained memories at and below the finite-``p`` capacity, against the ``V_p`` minimiser.

One study, ``linear_memory.margins``: OP memories (default preset) trained to
their first full recall at fractions of the self-consistent finite-``p``
capacity of each ``d`` (:data:`PLAN`), each trial a
:func:`validation.linear_memory.margins.margin_trial`; the summary
(:func:`compare`, :func:`trend`) pools the normalised correct scores and
margins of the recalled instances per ``(d, p, Adam rate)`` and compares them
with the capacity-point prediction (the ``V_p`` minimiser,
:func:`~validation.linear_memory.margins.predicted`) and, below the capacity,
with a typical memory at the RS overlap ``q*``
(:func:`~validation.linear_memory.margins.typical_predicted`).  Regenerate or
extend::

    nice -n 10 python -m validation study linear_memory.margins --workers 2

Notes
-----
The Adam rate: the default preset's 0.1 fails near the capacity from
``d`` = :data:`LR_FROM_D` on (docs/linear_memory.md#thresholds-at-d--100-and-150),
so from there the trials use :data:`validation.studies.linear_memory_d150.LR`
(0.01); below it the parameter is absent, so the keys of the first study
(``d`` = 40-80 at 1 and 0.95 of the capacity) are unchanged.  The rate changes
the margins, so both rates are run on the same instances where it is cheap:
0.01 at every ``d`` (40-150), 0.1 up to ``d`` = 100, and both at the capacity
load itself (``d`` = 40-80).  The report's quick mode replays the ``quick``
configuration (``d`` = 40 at 1 and 0.95 with three seeds, and every ``d >= 100``
row).

Docs: ``docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from validation.linear_memory.margins import margin_trial, predicted, typical_predicted

from .base import Option, Study, fill_doc, is_ok
from .linear_memory_d150 import LR

__all__ = ["DS", "SEEDS", "FRACS", "PLAN", "LR_FROM_D", "TYPICAL_MAX_FRACTION", "margin_params", "study_params",
           "compare", "trend", "MarginComparison", "STUDIES"]

DS = (40, 60, 80)
SEEDS = 6
#: From this ``d`` on the trials use the Adam rate :data:`validation.studies.linear_memory_d150.LR`.
LR_FROM_D = 100
#: The study, in order: (dimensions, load fractions of the finite-``p`` capacity, Adam rate).
#: Rate ``None``: the default rule (0.1 of the default preset below :data:`LR_FROM_D`, 0.01 from it);
#: a number is stored with the trial.
PLAN = (((40, 60, 80), (1.0, 0.95), None),
        ((40, 60, 80), (0.90,), None),
        ((80,), (0.95, 0.90), 0.01),
        ((100,), (0.90,), 0.1),
        ((100, 150), (0.95, 0.90), None),
        ((40, 60), (0.95, 0.90), 0.01),
        ((100,), (0.95,), 0.1),
        ((40, 60, 80), (1.0,), 0.01))
FRACS = (1.0, 0.95)
#: Rows at or above this fraction of the finite-p capacity get no below-capacity (typical-memory) prediction.
TYPICAL_MAX_FRACTION = 0.99
#: Bound on ``samples * p`` of the below-capacity sampler (as in :func:`replica.pinned_scores.typical_scores`).
TYPICAL_MAX_NUMBERS = 2 * 10**7
#: The report's quick configuration: the first entry of :data:`PLAN` at this d with this many seeds,
#: and every row from :data:`LR_FROM_D` on.
QUICK_D, QUICK_SEEDS = 40, 3


@fill_doc
def margin_params(ds=DS, seeds=SEEDS, fracs=FRACS, lr=None):
    """List the trials at fractions ``fracs`` of the self-consistent finite-``p`` capacity of each ``d``.

    Parameters
    ----------
    ds : sequence of int
        Dimensions.
    seeds : int
        Trials per load.
    fracs : sequence of float
        Fractions of :func:`validation.linear_memory.theory.full_rank_threshold`.
    lr : float, optional
        Adam rate stored with every trial.  ``None``: no ``lr`` entry (the
        default preset's 0.1) below :data:`LR_FROM_D`, and
        :data:`validation.studies.linear_memory_d150.LR` from it.

    Returns
    -------
    list of dict
        :func:`~validation.linear_memory.margins.margin_trial` parameters.

    Raises
    ------
    ValueError
        ``d < 4``, a fraction outside (0, 1.5], ``seeds < 1`` or ``lr <= 0``
        (checked before any trial is run or stored).

    %(ref_mechanism)s
    """
    from hcizz.checks import check_int, check_real
    from validation.linear_memory.theory import full_rank_threshold

    ds = [check_int("d", d, low=4) for d in ds]
    fracs = [check_real("frac", f, low=0.0, high=1.5, low_open=True, allow_array=False) for f in fracs]
    seeds = check_int("seeds", seeds, low=1)
    if lr is not None:
        lr = check_real("lr", lr, low=0.0, low_open=True, allow_array=False)
    out = []
    for d in ds:
        a = float(full_rank_threshold(d).value)
        rate = lr if lr is not None else (LR if d >= LR_FROM_D else None)
        extra = {} if rate is None else {"lr": float(rate)}
        out += [{"kind": "margins", "model": "op", "d": int(d), "alpha": a if f == 1.0 else f * a,
                 "seed": int(s), **extra} for f in fracs for s in range(seeds)]
    return out


@fill_doc
def study_params(seeds=SEEDS, plan=PLAN, max_d=None):
    """List the trials of :data:`~validation.studies.linear_memory_margins.PLAN` (without repeats).

    Parameters
    ----------
    seeds : int
        Trials per load.
    plan : sequence
        ``(dimensions, fractions, lr)`` entries (:data:`PLAN`).
    max_d : int, optional
        Keep only dimensions ``<= max_d``.

    Returns
    -------
    list of dict
        :func:`~validation.linear_memory.margins.margin_trial` parameters, in plan order.

    %(ref_mechanism)s
    """
    out, seen = [], set()
    for ds, fracs, lr in plan:
        ds = [d for d in ds if max_d is None or d <= max_d]
        for prm in margin_params(ds, seeds, fracs, lr):
            k = tuple(sorted(prm.items()))
            if k not in seen:
                seen.add(k)
                out.append(prm)
    return out


def _stats(x):
    x = np.asarray(x, float)
    se = x.std(ddof=1) / math.sqrt(x.size)
    q = np.quantile(x, [0.1, 0.5, 0.9])
    return {"mean": float(x.mean()), "mean_se": float(se), "var": float(x.var(ddof=1)),
            "q10": float(q[0]), "median": float(q[1]), "q90": float(q[2]), "n": int(x.size)}


@fill_doc
def compare(results, *, samples=4000, typical_samples=1000):
    """Compare pooled trained observables of the successful trials with the predictions, per ``(d, p, lr)``.

    Parameters
    ----------
    results : list of dict
        :func:`~validation.linear_memory.margins.margin_trial` results, each
        with its ``d`` and, where the trial had one, its ``lr``.
    samples : int
        Monte Carlo samples of the capacity-point prediction
        (:func:`~validation.linear_memory.margins.predicted`).
    typical_samples : int
        Rows of the below-capacity prediction
        (:func:`~validation.linear_memory.margins.typical_predicted`);
        0 leaves it out.  It is computed for load fractions below
        :data:`TYPICAL_MAX_FRACTION` only: at the capacity load the RS overlap is
        1 within the Monte Carlo error of the saddle's own capacity, and the
        prediction is the ``V_p`` minimiser.

    Returns
    -------
    list of dict
        One row per ``(d, p, lr)``: ``lr`` (0.1 for the default preset),
        ``load``, ``load_fraction``, ``memories``, ``trials``, ``trained``,
        ``predicted`` (the ``V_p`` minimiser) and ``typical`` (``None`` at or
        beyond the RS capacity; else ``q_star``, ``q_stderr`` and the same
        summaries) summaries (mean, its standard error, variance, quantiles),
        ``sqrt_2lnp``, and the pooled arrays under underscore keys for figures.

    Notes
    -----
    Standard errors: trained means use the spread of the per-memory means
    (rows of one memory are correlated through ``W``); the predictions' are
    ordinary Monte Carlo standard errors.

    %(ref_mechanism)s
    """
    from validation.linear_memory.theory import full_rank_threshold

    by_d, total = {}, {}
    for r in results:
        g = (r["d"], r["p"], 0.1 if r.get("lr") is None else float(r["lr"]))
        total[g] = total.get(g, 0) + 1
        if r.get("success"):
            by_d.setdefault(g, []).append(r)
    rows = []
    for (d, p, lr), rr in sorted(by_d.items(), key=lambda t: (t[0][0], -t[0][1], -t[0][2])):
        corr = np.concatenate([r["correct"] for r in rr])
        marg = np.concatenate([r["margin"] for r in rr])
        per_mem = np.array([np.mean(r["correct"]) for r in rr])
        per_marg = np.array([np.mean(r["margin"]) for r in rr])
        gp = np.mean([r["gap_profile"] for r in rr], axis=0)
        pr = predicted(p, samples=samples, rng=d)
        tr_c, tr_m = _stats(corr), _stats(marg)
        if len(rr) > 1:
            tr_c["mean_se"] = float(per_mem.std(ddof=1) / math.sqrt(len(rr)))
            tr_m["mean_se"] = float(per_marg.std(ddof=1) / math.sqrt(len(rr)))
        else:
            tr_c["mean_se"] = tr_m["mean_se"] = float("nan")
        load = float(rr[0]["load"])
        frac = load / float(full_rank_threshold(d).value)
        # at the capacity load the below-capacity prediction is the q -> 1 limit (the V_p minimiser)
        ty = (typical_predicted(p, load, samples=typical_samples, rng=d)
              if typical_samples and frac < TYPICAL_MAX_FRACTION else None)
        typ = None if ty is None else {
            "q_star": ty["q_star"], "q_stderr": ty["q_stderr"], "alpha_c": ty["alpha_c"],
            "correct": _stats(ty["correct"]), "margin": _stats(ty["margin"]),
            "gap_profile": ty["gaps"].mean(axis=0).tolist(), "row_max_mean": float(ty["row_max"].mean()),
            "frac_margin_below_0.05": float(np.mean(ty["margin"] < 0.05))}
        rows.append({"d": d, "p": p, "lr": lr, "load": load,
                     "load_fraction": frac,
                     "memories": len(rr), "trials": total[(d, p, lr)],
                     "trained": {"correct": tr_c, "margin": tr_m, "gap_profile": gp.tolist(),
                                 "row_max_mean": float(np.mean(corr - marg)),
                                 "frac_margin_below_0.05": float(np.mean(marg < 0.05))},
                     "predicted": {"correct": _stats(pr["correct"]), "margin": _stats(pr["margin"]),
                                   "gap_profile": pr["gaps"].mean(axis=0).tolist(),
                                   "row_max_mean": float(pr["row_max"].mean()),
                                   "k_active_mean": float(pr["k_active"].mean()),
                                   "frac_margin_zero": float(np.mean(pr["margin"] == 0.0))},
                     "typical": typ,
                     "sqrt_2lnp": math.sqrt(2 * math.log(p)),
                     "_corr": corr, "_marg": marg, "_pred_corr": pr["correct"],
                     "_typ_marg": None if ty is None else ty["margin"],
                     "_typ_corr": None if ty is None else ty["correct"]})
    return rows


_QUANTITIES = ("excess", "margin", "excess_typical", "margin_typical")


def _quantity(row, what):
    t, q, ty = row["trained"], row["predicted"], row["typical"]
    if what == "excess":
        return (t["correct"]["mean"] - q["correct"]["mean"],
                math.hypot(t["correct"]["mean_se"], q["correct"]["mean_se"]))
    if what == "margin":
        return t["margin"]["mean"], t["margin"]["mean_se"]
    if ty is None:
        return math.nan, math.nan
    if what == "excess_typical":
        return (t["correct"]["mean"] - ty["correct"]["mean"],
                math.hypot(t["correct"]["mean_se"], ty["correct"]["mean_se"]))
    return (t["margin"]["mean"] - ty["margin"]["mean"],
            math.hypot(t["margin"]["mean_se"], ty["margin"]["mean_se"]))


@fill_doc
def trend(rows, what, fraction, *, lr=None, tol=0.01):
    """Fit ``y = a + b ln p`` by weighted least squares over the rows at one load fraction and one rate.

    Parameters
    ----------
    rows : list of dict
        :func:`compare` rows.
    what : str
        ``"excess"`` (trained minus ``V_p``-minimiser correct mean),
        ``"margin"`` (trained margin mean), ``"excess_typical"`` or
        ``"margin_typical"`` (trained minus typical-memory prediction).
    fraction : float
        Load fraction of the rows (within ``tol``).
    lr : float, optional
        Adam rate of the rows; ``None``: the study rule (0.1 below
        :data:`LR_FROM_D`, :data:`validation.studies.linear_memory_d150.LR` from
        it), which mixes two protocols.
    tol : float
        Tolerance on the load fraction.

    Returns
    -------
    dict
        ``what``, ``fraction``, ``lr``, and ``d``, ``ln_p``, ``y``, ``se`` (per row), ``slope``, ``slope_se``,
        ``intercept``, ``intercept_se``, ``chi2`` and ``dof`` of the fit
        (``nan`` with fewer than 3 finite rows), and ``ratio_last_first``
        (``y`` at the largest ``d`` over ``y`` at the smallest).

    Notes
    -----
    Weights ``1/se^2`` (the rows are independent instances); parameter
    standard errors from the inverse normal matrix, *not* rescaled by
    ``chi2/dof`` (the row reports ``chi2`` so that a poor fit is visible).

    %(ref_mechanism)s
    """
    if what not in _QUANTITIES:
        raise ValueError(f"what must be one of {', '.join(_QUANTITIES)}, got {what!r}")
    sel = [r for r in rows if abs(r["load_fraction"] - fraction) <= tol
           and r["lr"] == (lr if lr is not None else (LR if r["d"] >= LR_FROM_D else 0.1))]
    sel.sort(key=lambda r: r["d"])
    vals = [_quantity(r, what) for r in sel]
    keep = [(r, y, e) for r, (y, e) in zip(sel, vals) if math.isfinite(y) and e > 0]
    out = {"what": what, "fraction": fraction, "lr": lr, "d": [r["d"] for r, _, _ in keep],
           "ln_p": [math.log(r["p"]) for r, _, _ in keep], "y": [y for _, y, _ in keep],
           "se": [e for _, _, e in keep], "slope": math.nan, "slope_se": math.nan, "intercept": math.nan,
           "intercept_se": math.nan, "chi2": math.nan, "dof": max(len(keep) - 2, 0),
           "ratio_last_first": (keep[-1][1] / keep[0][1]) if len(keep) >= 2 else math.nan}
    if len(keep) >= 3:
        x, y, e = (np.array(out[k]) for k in ("ln_p", "y", "se"))
        A = np.stack([np.ones_like(x), x], axis=1) / e[:, None]
        cov = np.linalg.inv(A.T @ A)
        coef = cov @ (A.T @ (y / e))
        out.update(intercept=float(coef[0]), slope=float(coef[1]), intercept_se=float(math.sqrt(cov[0, 0])),
                   slope_se=float(math.sqrt(cov[1, 1])),
                   chi2=float(np.sum(((y - coef[0] - coef[1] * x) / e) ** 2)))
    return out


#: The trend fits of the summary: Adam rate (None: the mixed rule) and its label.
TREND_RATES = ((0.01, "0.01"), (0.1, "0.1"), (None, "mixed: 0.1 below d=100, 0.01 from it"))


@fill_doc
@dataclass(frozen=True)
class MarginComparison(Result):
    """Summary of ``linear_memory.margins``; the comparison is computed when first read.

    Parameters
    ----------
    results : list of dict
        The trial results, each with its ``d`` and ``lr``.
    typical_samples : int
        Rows of the below-capacity prediction.
    stored_only_d : list of int
        Dimensions read from the store only (the quick configuration's
        ``d >= LR_FROM_D`` rows; empty for the full one).

    Attributes
    ----------
    rows : list of dict
        :func:`compare` rows (with the pooled arrays under underscore keys).
    trends : dict
        ``"<quantity>@<fraction>@lr=<rate>"`` -> :func:`trend` fit, for every
        quantity, load fraction (1, 0.95, 0.90) and rate of ``TREND_RATES``.
    rate_pairs : list of dict
        :func:`rate_pairs` of the rows.

    Notes
    -----
    The predictions are Monte Carlo computations of a minute or more at the
    full plan, so a replay that only checks the store does not pay for them:
    ``rows`` (and so ``trends`` and ``rate_pairs``) are computed on first
    access and kept; ``to_dict()`` includes them.

    %(ref_mechanism)s
    """

    results: list
    typical_samples: int
    stored_only_d: list

    @functools.cached_property
    def rows(self):
        """:func:`compare` of the results (computed once)."""
        return compare(self.results, typical_samples=self.typical_samples)

    @functools.cached_property
    def trends(self):
        """The :func:`trend` fits of ``TREND_RATES`` x quantities x fractions (1, 0.95, 0.90)."""
        out = {}
        for lr, lab in TREND_RATES:
            for w in _QUANTITIES:
                for f in (1.0, 0.95, 0.90):
                    out[f"{w}@{f:g}@lr={lab.split(':')[0]}"] = trend(self.rows, w, f, lr=lr)
        return out

    @functools.cached_property
    def rate_pairs(self):
        """:func:`rate_pairs` of the rows."""
        return rate_pairs(self.rows)

    def to_dict(self):
        """Return the fields and the comparison (``rows`` without the pooled arrays, ``trends``, ``rate_pairs``).

        Returns
        -------
        dict
            Plain values.
        """
        out = super().to_dict()
        out.pop("results")
        out.update(rows=[{k: v for k, v in r.items() if not k.startswith("_")} for r in self.rows],
                   trends=self.trends, rate_pairs=self.rate_pairs)
        return out

    def summary(self):
        """Return one line per (d, p, Adam rate).

        Returns
        -------
        str
            Trained against predicted correct-score means and the trained margin (computes the comparison).
        """
        return "\n".join(
            f"d={r['d']} p={r['p']} lr={r['lr']:g} load {r['load_fraction']:.2f} x capacity, {r['memories']}/"
            f"{r['trials']} recalled: correct mean {r['trained']['correct']['mean']:.3f} (V_p minimiser "
            f"{r['predicted']['correct']['mean']:.3f}), margin mean {r['trained']['margin']['mean']:.3f}"
            for r in self.rows)


@fill_doc
def rate_pairs(rows):
    """Pair the rows of the same ``(d, p)`` trained at Adam rates 0.1 and another rate.

    Parameters
    ----------
    rows : list of dict
        :func:`compare` rows.

    Returns
    -------
    list of dict
        See :attr:`MarginComparison.rate_pairs`.

    %(ref_mechanism)s
    """
    out = []
    for r in rows:
        twin = [o for o in rows if o["d"] == r["d"] and o["p"] == r["p"] and o["lr"] != r["lr"]]
        if twin and r["lr"] == 0.1:
            o = twin[0]
            for name, a, b in (("correct mean", r["trained"]["correct"], o["trained"]["correct"]),
                               ("margin mean", r["trained"]["margin"], o["trained"]["margin"])):
                out.append({"d": r["d"], "p": r["p"], "load_fraction": r["load_fraction"], "quantity": name,
                            "lr_0.1": {**a, "memories": r["memories"], "trials": r["trials"]},
                            "lr_0.01": {**b, "memories": o["memories"], "trials": o["trials"]},
                            "z": (a["mean"] - b["mean"]) / math.hypot(a["mean_se"], b["mean_se"])})
    return out


@fill_doc
class MarginStudy(Study):
    """``linear_memory.margins``: the trials of :data:`~validation.studies.linear_memory_margins.PLAN` and their comparison with the predictions.

    %(ref_mechanism)s
    """

    name = "linear_memory.margins"
    title = "normalised scores and margins of trained OP memories near the finite-p capacity vs the V_p minimiser"
    trial = margin_trial
    docs = "docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p"
    options = (Option("config", "--config", str, "full",
                      "full: the whole plan; quick: the report's quick subset (d = 40 with 3 seeds, and d >= 100)",
                      choices=("full", "quick")),
               Option("typical_samples", "--typical-samples", int, 1000,
                      "rows of the below-capacity prediction (0: none)", low=0))

    def validate(self, options):
        # --typical-samples against the size bound of replica.pinned_scores.typical_scores for the
        # plan's largest p (bounded by p at load 1, above every planned load): ValueError beyond it
        from replica import p_from_load

        ts = options["typical_samples"]
        if ts:
            p_max = max(p_from_load(1.0, q["d"]) for q in self.plan(**options))
            if ts * p_max > TYPICAL_MAX_NUMBERS:
                raise ValueError(f"--typical-samples must be an integer in [0, {TYPICAL_MAX_NUMBERS // p_max}] "
                                 f"(samples * p <= {TYPICAL_MAX_NUMBERS:.0e} up to p = {p_max}, the plan's "
                                 f"largest p at load 1), got {ts}")
        return options

    def plan(self, config, typical_samples):
        full = study_params()
        if config == "full":
            return full
        return margin_params((QUICK_D,), QUICK_SEEDS) + [q for q in full if q["d"] >= LR_FROM_D]

    def summarise(self, results, config, typical_samples):
        """Compare the recalled instances with the predictions; fit the trends with ``d``.

        Parameters
        ----------
        results : list
            Engine records, in plan order.
        config : {"full", "quick"}
            The configuration.
        typical_samples : int
            Rows of the below-capacity prediction.

        Returns
        -------
        MarginComparison
            Rows, trends, rate pairs and the dimensions read from the store only.
        """
        plan = self.plan(config, typical_samples)
        res = [{**r["result"], "d": q["d"], "lr": q.get("lr")} for q, r in zip(plan, results) if is_ok(r)]
        big = sorted({q["d"] for q in plan if q["d"] >= LR_FROM_D}) if config == "quick" else []
        return MarginComparison(results=res, typical_samples=typical_samples, stored_only_d=big)


STUDIES = (MarginStudy(),)
