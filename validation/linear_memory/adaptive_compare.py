"""Fixed grid against adaptive design: trials needed for a given threshold CI.

For full-rank OP memories at small ``d`` (cheap trials), each replicate ``r``
uses the seed pool starting at ``1000 r``:

* **grid** — the report's full-mode grid (:data:`validation.linear_memory.adaptive_compare.GRID_FACTORS` times the
  finite-``p`` prediction, 8 loads), seeds ``1000 r + 0 .. S - 1`` at every
  load, ``S = 1, 2, ...`` until the 95% CI half-width of
  :func:`~validation.logistic.fit_threshold` is <= the target
  (trials: ``8 S``);
* **adaptive** — :func:`~validation.linear_memory.capacity.measure_capacity`
  with ``design="adaptive"`` (same start, batch and stopping rule as the
  d = 100/150 runs of :mod:`validation.linear_memory.d150`), seeds
  ``1000 r, 1000 r + 1, ...``.

Both designs run the same trial function (default preset, 4096 steps,
float32) and stop on the same target.  The trials are stored in the
committed store :data:`validation.linear_memory.adaptive_compare.STORE`; the report replays both designs from it
(computing nothing).  Regenerate with::

    nice -n 10 python -m validation.linear_memory.adaptive_compare
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["STORE", "DS", "REPLICATES", "TARGET", "GRID_FACTORS", "compare", "summarise"]

STORE = Path(__file__).resolve().parent / "stored" / "adaptive_design.jsonl"
DS = (20, 30)
REPLICATES = 8
TARGET = 0.03
GRID_FACTORS = tuple(float(x) for x in np.round(np.linspace(0.75, 1.15, 8), 4))
S_MAX = 12
STEPS = 4096


def _runner(store, compute):
    """``run(params) -> results`` on ``store`` (:func:`validation.engine.stored_runner`)."""
    from validation.engine import stored_runner
    from .capacity import capacity_trial

    return stored_runner(capacity_trial, store, compute=compute)


def _grid(d, r, target, run, theory):
    from validation.logistic import fit_threshold
    from .capacity import trial_params
    from replica.load import load_of, p_from_load

    loads = sorted({float(load_of(p_from_load(theory * f, d), d)) for f in GRID_FACTORS})
    res = []
    for S in range(1, S_MAX + 1):
        res += run(trial_params("op", d, loads, [1000 * r + S - 1], steps=STEPS, dtype="float32"))
        f = fit_threshold([x["load"] for x in res], [x["success"] for x in res])
        if (f.ci_high - f.ci_low) / 2 <= target:
            break
    return {"trials": len(res), "threshold": f.threshold, "ci": [f.ci_low, f.ci_high],
            "reached": bool((f.ci_high - f.ci_low) / 2 <= target),
            "cpu_seconds": float(sum(x.get("cpu_seconds", 0.0) for x in res))}


def _adaptive(d, r, target, run, theory):
    from validation.adaptive import adaptive_threshold
    from validation.logistic import fit_threshold
    from .capacity import _adaptive_settings, trial_params
    from .d150 import BATCH, START

    st = _adaptive_settings("op", d, None, {"value": theory}, [theory * f for f in START])
    res = []

    def trials(loads, seeds):
        params = [trial_params("op", d, [a], [s], steps=STEPS, dtype="float32")[0] for a, s in zip(loads, seeds)]
        out = run(params)
        res.extend(out)
        return [x["load"] for x in out], [x["success"] for x in out]

    ad = adaptive_threshold(trials, fit_threshold, st["start"], target_halfwidth=target, max_trials=8 * S_MAX,
                            batch=BATCH, seed0=1000 * r, step=st["step"], snap=st["snap"], lower=st["lower"])
    return {"trials": ad.trials, "threshold": ad.threshold, "ci": [ad.ci_low, ad.ci_high],
            "reached": ad.stop == "target",
            "cpu_seconds": float(sum(x.get("cpu_seconds", 0.0) for x in res))}


def compare(ds=DS, replicates=REPLICATES, target=TARGET, *, store=STORE, compute=True):
    """Run (or replay) the fixed grid and the adaptive design on every ``(d, replicate)``.

    Full-rank OP memories, default preset, 4096 steps, float32.  Replicate ``r``
    draws its seeds from ``1000 r, 1000 r + 1, ...`` in both designs.  The grid
    runs the loads :data:`validation.linear_memory.adaptive_compare.GRID_FACTORS` times the finite-``p`` prediction (each
    rounded to a whole number of facts), one more seed per load per round, up to
    12 seeds; the adaptive design uses the settings of
    :mod:`validation.linear_memory.d150` (start, batch), capped at 96 trials.
    Both stop at the first 95% CI half-width <= ``target``.

    Parameters
    ----------
    ds : sequence of int
        Dimensions.
    replicates : int
        Replicates per dimension and design.
    target : float
        Target 95% CI half-width of the threshold.
    store : path
        Engine JSONL store of the trials (default: the committed :data:`validation.linear_memory.adaptive_compare.STORE`).
    compute : bool
        True: run the missing trials in process and append them to ``store``;
        False: replay from ``store`` only, training nothing.

    Returns
    -------
    dict
        ``d`` -> ``{"grid": [...], "adaptive": [...], "theory": float}``: per
        design a list with one dict per replicate (``trials``, ``threshold``,
        ``ci``, ``reached`` (the target was met before the cap), ``cpu_seconds``
        (summed trial CPU time)); ``theory`` is the finite-``p`` prediction.

    Raises
    ------
    LookupError
        With ``compute=False``, when a trial the designs need is not in ``store``.

    References
    ----------
    arXiv:2605.10795; docs/sweeps.md#adaptive-threshold-design
    """
    from .registry import prediction

    run = _runner(store, compute)
    out = {}
    for d in ds:
        th = prediction("op", d)["value"]
        out[d] = {"grid": [_grid(d, r, target, run, th) for r in range(replicates)],
                  "adaptive": [_adaptive(d, r, target, run, th) for r in range(replicates)],
                  "theory": th}
    return out


def summarise(res, target=TARGET):
    """Summarise a comparison per ``d``: mean trials and CPU time of each design, their ratio.

    Parameters
    ----------
    res : dict
        The output of :func:`validation.linear_memory.adaptive_compare.compare`.
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
            n = np.array([x["trials"] for x in v[k]], float)
            c = np.array([x["cpu_seconds"] for x in v[k]], float)
            row[f"trials_{k}"] = float(n.mean())
            row[f"trials_{k}_stderr"] = float(n.std(ddof=1) / math.sqrt(n.size)) if n.size > 1 else math.nan
            row[f"cpu_seconds_{k}"] = float(c.mean())
            row[f"reached_{k}"] = int(sum(x["reached"] for x in v[k]))
            row[f"thresholds_{k}"] = [x["threshold"] for x in v[k]]
        row["trials_ratio"] = row["trials_adaptive"] / row["trials_grid"]
        row["cpu_ratio"] = row["cpu_seconds_adaptive"] / row["cpu_seconds_grid"]
        rows[str(d)] = row
    return rows


if __name__ == "__main__":
    t0 = time.perf_counter()
    ds = tuple(int(a) for a in sys.argv[1:]) or DS
    s = summarise(compare(ds))
    for d, r in s.items():
        print(f"d={d}: trials grid {r['trials_grid']:.1f} ± {r['trials_grid_stderr']:.1f}, adaptive "
              f"{r['trials_adaptive']:.1f} ± {r['trials_adaptive_stderr']:.1f} (ratio {r['trials_ratio']:.2f}); "
              f"CPU s grid {r['cpu_seconds_grid']:.1f}, adaptive {r['cpu_seconds_adaptive']:.1f}; "
              f"reached {r['reached_grid']}/{r['replicates']} and {r['reached_adaptive']}/{r['replicates']}",
              flush=True)
    print(f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
