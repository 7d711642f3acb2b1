"""Fixed grid against adaptive design: trials needed for a given threshold CI.

One study, ``linear_memory.adaptive_design``.  For full-rank OP memories at
small ``d`` (cheap trials), each replicate ``r`` draws its seeds from the pool
starting at ``1000 r``:

* **grid** -- the report's full-mode grid (:data:`GRID_FACTORS` times the
  finite-``p`` prediction, 8 loads), seeds ``1000 r + 0 .. S - 1`` at every
  load, ``S = 1, 2, ...`` (at most :data:`S_MAX`) until the 95% CI half-width
  of :func:`~validation.logistic.fit_threshold` is <= the target (trials:
  ``8 S``);
* **adaptive** -- :func:`validation.adaptive.adaptive_threshold` with the
  start and batch of the d = 100/150 runs
  (:data:`validation.studies.linear_memory_d150.START`, ``BATCH``), seeds
  ``1000 r, 1000 r + 1, ...``, capped at ``8 S_MAX`` trials.

Both designs run the same trial function (default preset, :data:`STEPS`
steps, float32) and stop on the same target.  Regenerate with::

    nice -n 10 python -m validation study linear_memory.adaptive_design

Docs: ``docs/sweeps.md#adaptive-threshold-design``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from validation.linear_memory.capacity import (MAX_TRAINED_D as MAX_D, ThresholdEstimate, adaptive_settings,
                                               capacity_trial, trial_params)
from validation.logistic import fit_threshold
from replica import load_of, p_from_load

from .base import Option, Study, dims_option, fill_doc
from .linear_memory_d150 import BATCH, START

__all__ = ["DS", "REPLICATES", "TARGET", "GRID_FACTORS", "S_MAX", "STEPS", "DesignRun", "summarise_designs",
           "STUDIES"]

DS = (20, 30)
REPLICATES = 8
#: Target 95% CI half-width.
TARGET = 0.03
#: Loads of the fixed grid relative to the finite-p prediction (the report's full-mode grid).
GRID_FACTORS = tuple(float(x) for x in np.round(np.linspace(0.75, 1.15, 8), 4))
#: Most seeds per load of the grid (the adaptive cap is ``8 S_MAX`` trials).
S_MAX = 12
STEPS = 4096


@dataclass(frozen=True)
class DesignRun(ThresholdEstimate):
    """One replicate of one design.

    Parameters
    ----------
    trials : int
        Trials used.
    threshold : float
        Final threshold.
    ci_low, ci_high : float
        Its 95% interval.
    reached : bool
        The target was met before the cap.
    cpu_seconds : float
        Summed trial CPU time.

    References
    ----------
    docs/sweeps.md#adaptive-threshold-design
    """

    trials: int
    threshold: float
    ci_low: float
    ci_high: float
    reached: bool
    cpu_seconds: float


def _results(runner, params):
    out = runner.results(params, with_params=False)
    if len(out) != len(params):
        raise LookupError(f"{len(params) - len(out)} trial(s) of the design are not in the store")
    return out


def _grid(d, r, target, runner, theory):
    loads = sorted({float(load_of(p_from_load(theory * f, d), d)) for f in GRID_FACTORS})
    res = []
    for S in range(1, S_MAX + 1):
        res += _results(runner, trial_params("op", d, loads, [1000 * r + S - 1], steps=STEPS, dtype="float32"))
        f = fit_threshold([x["load"] for x in res], [x["success"] for x in res])
        if (f.ci_high - f.ci_low) / 2 <= target:
            break
    return DesignRun(trials=len(res), threshold=f.threshold, ci_low=f.ci_low, ci_high=f.ci_high,
                     reached=bool((f.ci_high - f.ci_low) / 2 <= target),
                     cpu_seconds=float(sum(x.get("cpu_seconds", 0.0) for x in res)))


def _adaptive(d, r, target, runner, theory):
    from validation.adaptive import adaptive_threshold

    st = adaptive_settings("op", d, None, {"value": theory}, [theory * f for f in START])
    res = []

    def trials(loads, seeds):
        params = [trial_params("op", d, [a], [s], steps=STEPS, dtype="float32")[0] for a, s in zip(loads, seeds)]
        out = _results(runner, params)
        res.extend(out)
        return [x["load"] for x in out], [x["success"] for x in out]

    ad = adaptive_threshold(trials, fit_threshold, st["start"], target_halfwidth=target, max_trials=8 * S_MAX,
                            batch=BATCH, seed0=1000 * r, step=st["step"], snap=st["snap"], lower=st["lower"])
    return DesignRun(trials=ad.trials, threshold=ad.threshold, ci_low=ad.ci_low, ci_high=ad.ci_high,
                     reached=ad.stop == "target", cpu_seconds=float(sum(x.get("cpu_seconds", 0.0) for x in res)))


def summarise_designs(res, target=TARGET):
    """Summarise a comparison per ``d``: mean trials and CPU time of each design, their ratio.

    Parameters
    ----------
    res : dict
        ``d`` -> ``{"grid": [DesignRun, ...], "adaptive": [...], "theory": float}``.
    target : float
        The target CI half-width the comparison was run with (recorded in the
        rows, not re-applied).

    Returns
    -------
    dict
        ``str(d)`` -> row dict: ``ci_halfwidth`` (``target``), ``ci_width``
        (``2 target``), ``replicates``, ``theory``; per design ``k`` in
        ``grid``/``adaptive``: ``trials_k`` (mean over replicates),
        ``trials_k_stderr`` (its standard error, nan for a single replicate),
        ``cpu_seconds_k`` (mean), ``reached_k`` (replicates that met the target)
        and ``thresholds_k`` (per replicate); ``trials_ratio`` and ``cpu_ratio``
        (adaptive / grid).

    References
    ----------
    arXiv:2605.10795; docs/sweeps.md#adaptive-threshold-design
    """
    rows = {}
    for d, v in res.items():
        row = {"ci_halfwidth": target, "ci_width": 2 * target, "replicates": len(v["grid"]), "theory": v["theory"]}
        for k in ("grid", "adaptive"):
            n = np.array([x.trials for x in v[k]], float)
            c = np.array([x.cpu_seconds for x in v[k]], float)
            row[f"trials_{k}"] = float(n.mean())
            row[f"trials_{k}_stderr"] = float(n.std(ddof=1) / math.sqrt(n.size)) if n.size > 1 else math.nan
            row[f"cpu_seconds_{k}"] = float(c.mean())
            row[f"reached_{k}"] = int(sum(x.reached for x in v[k]))
            row[f"thresholds_{k}"] = [x.threshold for x in v[k]]
        row["trials_ratio"] = row["trials_adaptive"] / row["trials_grid"]
        row["cpu_ratio"] = row["cpu_seconds_adaptive"] / row["cpu_seconds_grid"]
        rows[str(d)] = row
    return rows


class AdaptiveDesignStudy(Study):
    """``linear_memory.adaptive_design``: both designs on every ``(d, replicate)`` (see the module notes).

    References
    ----------
    docs/sweeps.md#adaptive-threshold-design
    """

    name = "linear_memory.adaptive_design"
    title = "trials for a 0.03 threshold CI half-width: fixed grid against adaptive design (OP, small d)"
    trial = capacity_trial
    docs = "docs/sweeps.md#adaptive-threshold-design"
    options = (dims_option(DS, high=MAX_D),
               Option("replicates", "--replicates", int, REPLICATES, "replicates per dimension and design",
                      low=1, high=1000),
               Option("target", "--target", float, TARGET, "target 95% CI half-width", low=0, high=1,
                      low_open=True))

    def execute(self, runner, ds, replicates, target):
        """Run (or replay) both designs on every ``(d, replicate)``.

        Parameters
        ----------
        runner : validation.studies.base.Runner
            Runs or replays the rounds (a replay missing a trial raises ``LookupError``).
        ds : tuple of int
            Dimensions.
        replicates : int
            Replicates per dimension and design.
        target : float
            Target 95% CI half-width.

        Returns
        -------
        dict
            ``d`` -> ``{"grid": [...], "adaptive": [...], "theory": float}``, one
            :class:`DesignRun` per replicate.
        """
        from validation.linear_memory.registry import prediction

        out = {}
        for d in ds:
            th = prediction("op", d)["value"]
            out[d] = {"grid": [_grid(d, r, target, runner, th) for r in range(replicates)],
                      "adaptive": [_adaptive(d, r, target, runner, th) for r in range(replicates)],
                      "theory": th}
        return out

    @fill_doc
    def summarise(self, results, ds, replicates, target):
        """Per ``d``: :func:`summarise_designs`.

        Parameters
        ----------
        %(executed)s
        ds, replicates, target
            The options.

        Returns
        -------
        dict
            ``str(d)`` -> row dict.
        """
        return summarise_designs(results, target)


STUDIES = (AdaptiveDesignStudy(),)
