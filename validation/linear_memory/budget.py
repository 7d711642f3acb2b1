"""Budget study: empirical threshold against the training-step budget.

With a constant learning rate (no warm-up, no decay) a run with budget ``B``
is exactly the first ``B`` steps of a run with a larger budget, and training
stops at the first step where all facts are recalled.  So one run per trial
at the largest budget gives success at every smaller budget:
``success(B) = success and steps <= B``.  The threshold is then fitted per
budget (:func:`validation.logistic.fit_threshold`) until it
stops moving.

Run (the numbers in ``docs/linear_memory.md``)::

    python -m validation.linear_memory.budget --d 20,30 --store budget.jsonl
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from validation.logistic import fit_threshold
from .capacity import capacity_trial, load_grid, trial_params

__all__ = ["CONFIGS", "budget_thresholds", "budget_study"]

#: Candidate optimiser settings (constant learning rate) compared by the study.
CONFIGS = {
    "T1_lr0.05": {"temperature": 1.0, "lr": 0.05},
    "T0.05_lr0.1": {"temperature": 0.05, "lr": 0.1},
    "T0.05_lr0.3": {"temperature": 0.05, "lr": 0.3},
}

BUDGETS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)


def budget_thresholds(records, budgets=BUDGETS):
    """Fit the threshold at each step budget from the trial records of one configuration.

    Parameters
    ----------
    records : list of dict
        Results of :func:`capacity_trial` run with a constant learning rate
        and the largest budget (fields ``load``, ``success``, ``steps``).
    budgets : sequence of int
        Step budgets ``B`` (each at most the budget the trials ran with).

    Returns
    -------
    list of dict
        One row per budget: ``budget``, ``threshold``, ``ci_low``, ``ci_high``,
        ``successes`` (rows of a table, kept as plain dicts).

    Notes
    -----
    With a constant learning rate a run with budget ``B`` is the first ``B``
    steps of the longer run, so ``success(B) = success and steps <= B``.

    References
    ----------
    docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen
    """
    loads = np.array([r["load"] for r in records])
    out = []
    for b in budgets:
        succ = np.array([r["success"] and r["steps"] <= b for r in records])
        f = fit_threshold(loads, succ)
        out.append({"budget": int(b), "threshold": f.threshold, "ci_low": f.ci_low,
                    "ci_high": f.ci_high, "successes": int(succ.sum())})
    return out


def budget_study(ds=(20, 30), *, model="op", configs=None, seeds=6, centers=None,
                 max_budget=8192, store=None, workers=1, progress=True):
    """Run the budget study: the fitted threshold against the step budget.

    Parameters
    ----------
    ds : sequence of int
        Dimensions.
    model : str
        A registered trained model without a rank ratio (``"op"``, ``"dp"``).
    configs : dict, optional
        Name to :class:`~validation.linear_memory.train.TrainConfig` overrides
        (default :data:`CONFIGS`).
    seeds : int
        Trials per load.
    centers : dict, optional
        Grid centre per ``d`` (default: the measured thresholds, about 0.9).
    max_budget : int
        Step budget of every run; smaller budgets are read off the runs.
    store : path, optional
        JSONL sweep store.
    workers : int
        Worker processes.
    progress : bool
        Print progress.

    Returns
    -------
    dict
        ``{config: {d: {"fits": [per-budget rows of :func:`budget_thresholds`],
        "seconds": ..., "train_seconds": ...}}}``.

    References
    ----------
    docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen
    """
    from validation.engine import run_sweep

    configs = configs or CONFIGS
    centers = centers or {20: 0.95, 30: 0.93, 40: 0.91, 60: 0.88}
    out = {}
    for name, cfg in configs.items():
        out[name] = {}
        for d in ds:
            loads = load_grid(centers.get(d, 0.9), n=8, rel=0.3, d=d)
            params = trial_params(model, d, loads, range(seeds), steps=max_budget,
                                  warmup=0.0, final=1.0, **cfg)
            t0 = time.perf_counter()
            recs = run_sweep(capacity_trial, params, store=store, workers=workers,
                             progress=progress, label=f"budget {name} d={d}")
            res = [r["result"] for r in recs if r["status"] == "ok"]
            out[name][d] = {"fits": budget_thresholds(res, [b for b in BUDGETS if b <= max_budget]),
                            "seconds": time.perf_counter() - t0,
                            "train_seconds": float(sum(r["seconds"] for r in res))}
    return out


def _int_list(text):
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"d must be comma-separated integers >= 2, got {text!r}") from None
    if not vals or min(vals) < 2:
        raise ValueError(f"d must be comma-separated integers >= 2, got {text!r}")
    return vals


def _add_arguments(ap):
    ap.add_argument("--d", default="20,30", help="comma-separated dimensions (default 20,30)")
    from .registry import MEMORY_MODELS

    # trained models that take no rank ratio (the study has no --kappa)
    ap.add_argument("--model", default="op",
                    choices=[n for n, m in MEMORY_MODELS.items()
                             if m.parametrization.trained and not m.needs_kappa])
    ap.add_argument("--seeds", type=int, default=6, help="trials per load (default 6)")
    ap.add_argument("--max-budget", type=int, default=8192, help="largest step budget (default 8192)")
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help="comma-separated subset of: " + ",".join(CONFIGS))
    ap.add_argument("--store", default=None, help="JSONL sweep store (reruns reuse finished trials)")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    ap.set_defaults(func=_run)


def register(sub):
    """Add ``python -m validation capacity-budget`` to the subparsers ``sub``."""
    ap = sub.add_parser("capacity-budget", help="linear-memory threshold against the step budget")
    _add_arguments(ap)


def _run(a):
    ds = _int_list(a.d)
    names = [k for k in a.configs.split(",") if k]
    unknown = [k for k in names if k not in CONFIGS]
    if unknown or not names:
        raise ValueError(f"configs must be a comma-separated subset of {list(CONFIGS)}, got {a.configs!r}")
    for name, v in (("seeds", a.seeds), ("max-budget", a.max_budget), ("workers", a.workers)):
        if v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v}")
    res = budget_study(ds, model=a.model, configs={k: CONFIGS[k] for k in names},
                       seeds=a.seeds, max_budget=a.max_budget, store=a.store, workers=a.workers)
    print(json.dumps(res, default=float, indent=1))
    return 0


def main(argv=None):
    """``python -m validation.linear_memory.budget`` (same as ``python -m validation
    capacity-budget``): one-line errors with exit status 2, JSON on stdout."""
    from hcizz.cli import ArgumentParser

    ap = ArgumentParser(prog="python -m validation.linear_memory.budget")
    _add_arguments(ap)
    a = ap.parse_args(argv)
    return a.func(a)


if __name__ == "__main__":
    from hcizz.cli import run_cli

    sys.exit(run_cli(main, prog="python -m validation.linear_memory.budget"))
