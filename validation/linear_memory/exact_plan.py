"""The exact-capacity sweep of the report: plan, committed store, threshold fits.

The decisions are deterministic functions of ``(model, d, alpha, seed)``
(:func:`validation.linear_memory.exact.exact_trial`), stored in the JSONL
sweep store :data:`STORE` committed with the package, so that the report's
quick mode reads them instead of recomputing (``d = 60`` instances take
minutes each).  Regenerate or extend with::

    nice -n 10 python -m validation.linear_memory.exact_plan [d ...]

which runs :func:`validation.engine.run_sweep` on :data:`STORE` (decided
instances are reused, new ones appended).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["STORE", "PLAN", "TIMING", "plan_params", "fit_exact", "run"]

#: Committed store of exact decisions (OP facts).
STORE = Path(__file__).with_name("stored") / "exact_op.jsonl"

#: Per d: relative loads around the finite-size RS prediction and seeds per load.
PLAN = {20: (np.linspace(0.85, 1.15, 7), 8), 30: (np.linspace(0.85, 1.15, 7), 6),
        40: (np.linspace(0.88, 1.12, 5), 4), 60: (np.array([0.9, 0.95, 1.0, 1.1]), 4),
        80: (np.array([0.92, 0.96, 1.0, 1.02, 1.04]), 6), 100: (np.array([0.92, 0.96, 1.0, 1.02, 1.04]), 6)}

#: Timing-only instances (too few for a threshold): per d, relative loads and seeds.
TIMING = {150: (np.array([0.97]), 2)}


def plan_params(d, model="op"):
    """Parameter records of the planned exact trials at dimension ``d`` (``PLAN``,
    else ``TIMING``)."""
    from .data import load_of, p_from_load
    from .exact import exact_params
    from .theory import prediction

    rel, seeds = PLAN[d] if d in PLAN else TIMING[d]
    c = prediction(model, d)["value"]
    loads = sorted({float(load_of(p_from_load(c * r, d), d)) for r in rel})
    return exact_params(model, d, loads, range(seeds))


def fit_exact(results):
    """Logistic fit (:func:`validation.logistic.fit_threshold`) of decided results."""
    from validation.logistic import fit_threshold

    dec = [r for r in results if r.get("success") is not None]
    return fit_threshold([r["load"] for r in dec], [r["success"] for r in dec])


def run(ds, *, store=STORE, workers=1, executor="inprocess"):
    """Run (or complete) the planned trials at the dimensions ``ds`` on ``store``."""
    from validation.engine import run_sweep
    from .exact import exact_trial

    out = {}
    for d in ds:
        # seed-major order: an interrupted run still covers every load
        prm = sorted(plan_params(d), key=lambda q: (q["seed"], q["alpha"]))
        recs = run_sweep(exact_trial, prm, store=store, workers=workers, executor=executor,
                         progress=True, label=f"exact op d={d}")
        res = [r["result"] for r in recs if r["status"] == "ok"]
        if d not in PLAN:
            print(f"d={d} (timing only): " + ", ".join(
                f"load {r['load']:.4f} p={r['p']} {r['success']} {r['cpu_seconds']:.1f} s CPU" for r in res), flush=True)
            continue
        out[d] = (fit_exact(res), res)
        f = out[d][0]
        print(f"d={d}: threshold {f.threshold:.4f} [{f.ci_low:.4f}, {f.ci_high:.4f}] counts {f.counts} "
              f"mean {np.mean([r['seconds'] for r in res]):.1f} s wall, "
              f"{np.mean([r['cpu_seconds'] for r in res]):.1f} s CPU per instance", flush=True)
    return out


if __name__ == "__main__":
    run([int(a) for a in sys.argv[1:]] or [20, 30])
