"""Capacity thresholds at the paper's size (d = 100 and 150), adaptive design, committed store.

Groups (in priority order, :data:`validation.linear_memory.d150.PLAN`): full rank OP and rank-constrained
(``kappa`` = 0.5, 0.25) memories at ``d`` = 100 and 150, each measured by
:func:`validation.linear_memory.capacity.measure_capacity` with
``design="adaptive"`` (rounds of :data:`BATCH` loads chosen from the current
logistic fit until the 95% CI half-width is <= :data:`CI_HALFWIDTH` or the
group's trial cap is reached), float32, stop at the first step where all
facts are recalled, and the step budget of the group.  Every trial is
appended to the engine's JSONL store :data:`validation.linear_memory.d150.STORE` (committed, shipped as
package data); the report reads it and computes nothing.  Regenerate,
extend or resume (after an interruption, SIGKILL included) with::

    nice -n 10 python -m validation.linear_memory.d150 --workers 2

(the adaptive path is a deterministic function of the seeded outcomes, so a
rerun replays the finished rounds from the store and continues).
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

from hcizz.cli import ArgumentParser

__all__ = ["STORE", "LR", "PLAN", "PAPER", "CI_HALFWIDTH", "BATCH", "START", "group_key", "group_theory", "run_group",
           "stored_results", "summarise", "budget_table", "lr_check", "LONG_BUDGET", "LONG_STORE", "long_budget_check",
           "trained_threshold"]

#: Committed store of the d = 100/150 trials.
STORE = Path(__file__).resolve().parent / "stored" / "d150.jsonl"
#: Target 95% CI half-width of every group.
CI_HALFWIDTH = 0.03
#: Loads per adaptive round (two workers, two trials each).
BATCH = 4
#: First-round loads relative to the finite-p prediction (thresholds measured at
#: d <= 80 sit 0-5 % above it; loads above the threshold cost the whole budget).
START = (0.97, 1.01, 1.05, 1.09)
#: Adam learning rate of the plan.  The default preset's 0.1 (chosen at d <= 60)
#: fails at d = 100 from load ~0.82 on, recall collapsing to 25-90 % after 4096
#: steps; on the same instances lr 0.03 and 0.01 recall more (lr 0.01: 99.3 % at
#: 0.853, where 0.1 reaches 52 %), and at 0.887 lr 0.01 (4096 steps) and 0.003
#: (8192 steps) end at the same loss and recall (55 %): converged
#: (docs/linear_memory.md#thresholds-at-d--100-and-150).
LR = 0.01
#: Groups in priority order: (model, kappa, d, lr) -> {"steps": budget, "max_trials": cap,
#: "run": measured by ``main``}.  lr None: the default preset's 0.1.  The lr 0.1 and 0.03
#: groups at d = 100 are kept as the record of the learning-rate check (their first
#: round is the same four instances as the first round of the lr 0.01 group).
PLAN = {
    ("op", None, 100, LR): {"steps": 4096, "max_trials": 40, "run": True},
    ("op", None, 150, LR): {"steps": 4096, "max_trials": 36, "run": True},
    ("lowrank", 0.5, 150, LR): {"steps": 4096, "max_trials": 32, "run": True},
    ("lowrank", 0.25, 150, LR): {"steps": 4096, "max_trials": 32, "run": True},
    ("lowrank", 0.5, 100, LR): {"steps": 4096, "max_trials": 40, "run": True},
    ("lowrank", 0.25, 100, LR): {"steps": 4096, "max_trials": 40, "run": True},
    ("op", None, 100, 0.03): {"steps": 4096, "max_trials": 4, "run": False},
    ("op", None, 100, None): {"steps": 4096, "max_trials": 40, "run": False},
}
#: The linear-memory paper's d = 150 thresholds (arXiv:2605.10795, its table), per kappa.
PAPER = {1.0: 0.50, 0.5: 0.46, 0.25: 0.31}


def group_theory(model, kappa, d):
    """Compute the finite-``p`` capacity prediction of one group.

    Full rank: ``alpha_c_finite(p)``; rank ``m``: ``alpha_c_finite(p, kappa=m/d)``;
    in both, ``p`` is solved self-consistently from ``p ln p = alpha d^2``.

    Parameters
    ----------
    model : {"op", "lowrank"}
        Memory model of the group: ``"op"`` (full rank, original problem) or
        ``"lowrank"`` (any other value is treated as rank-constrained).
    kappa : float or None
        Rank ratio in (0, 1] of a rank-constrained group (the prediction uses the
        actual ``m / d`` with ``m = max(1, round(kappa d))``); ignored for ``"op"``.
    d : int
        Dimension.

    Returns
    -------
    dict
        ``value`` (the predicted threshold load), ``stderr`` (its Monte Carlo
        standard error) and ``kappa_eff`` (the rank ratio used: 1.0 for
        ``"op"``, else ``m / d``), all floats.

    See Also
    --------
    validation.linear_memory.registry.prediction : The full-rank prediction.
    validation.linear_memory.theory.lowrank_finite_threshold : The rank-constrained one.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    from .models import lowrank_m
    from .registry import prediction
    from .theory import lowrank_finite_threshold

    if model == "op":
        t = prediction("op", d)
        return {"value": float(t["value"]), "stderr": float(t["stderr"]), "kappa_eff": 1.0}
    k_eff = lowrank_m(d, kappa) / d
    e = lowrank_finite_threshold(d, k_eff)
    return {"value": float(e.value), "stderr": float(e.stderr), "kappa_eff": float(k_eff)}


def group_key(model, kappa, d, lr=LR):
    """Format the row name of a group (the key of the rows of ``summarise`` and ``budget_table``).

    Parameters
    ----------
    model : str
        Memory model of the group (``"op"``, ``"lowrank"``).
    kappa : float or None
        Rank ratio; None (full rank) leaves the ``kappa=`` part out.
    d : int
        Dimension.
    lr : float or None
        Adam learning rate of the group; None stands for the default preset's 0.1.

    Returns
    -------
    str
        ``"<model> d=<d>[ kappa=<kappa>] lr=<lr>"`` (numbers in ``%g`` format), with
        ``" lr=0.1 (default preset)"`` at the end when ``lr`` is None.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150

    Examples
    --------
    >>> group_key("op", None, 150)
    'op d=150 lr=0.01'
    >>> group_key("lowrank", 0.5, 100, 0.03)
    'lowrank d=100 kappa=0.5 lr=0.03'
    >>> group_key("op", None, 100, None)
    'op d=100 lr=0.1 (default preset)'
    """
    return (f"{model} d={d}" + (f" kappa={kappa:g}" if kappa is not None else "")
            + (f" lr={lr:g}" if lr is not None else " lr=0.1 (default preset)"))


def run_group(model, kappa, d, lr=LR, *, store=STORE, workers=2, progress=True, **plan):
    """Run (or resume from ``store``) the adaptive threshold measurement of one group.

    Calls :func:`~validation.linear_memory.capacity.measure_capacity` with
    ``design="adaptive"``: a first round at :data:`START` times the group's
    finite-``p`` prediction (:func:`validation.linear_memory.d150.group_theory`), then rounds of :data:`BATCH`
    loads until the 95% CI half-width is <= :data:`CI_HALFWIDTH` or the trial cap
    is reached; float32, the step budget and trial cap of the group's :data:`validation.linear_memory.d150.PLAN`
    entry (a group not in the plan: 4096 steps, 32 trials).  Trials already in
    ``store`` are reused, not retrained.

    Parameters
    ----------
    model : {"op", "lowrank"}
        Memory model of the group.
    kappa : float or None
        Rank ratio in (0, 1] (``"lowrank"``); None for ``"op"``.
    d : int
        Dimension.
    lr : float or None
        Adam learning rate; None trains with the default preset's rate (0.1).
    store : path
        Engine JSONL store the trials are read from and appended to.
    workers : int
        Worker processes of the sweep.
    progress : bool
        Print progress.
    **plan
        Overrides of the group's plan entry: ``steps`` (step budget) and
        ``max_trials`` (trial cap); other keys are ignored.

    Returns
    -------
    CapacityMeasurement
        The result of :func:`~validation.linear_memory.capacity.measure_capacity`:
        ``threshold``, ``ci_low``, ``ci_high``, ``trials``, ``counts``,
        ``history``, ``stop``, ``seed_list``, times and the prediction.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150;
    docs/sweeps.md#adaptive-threshold-design
    """
    from .capacity import measure_capacity

    cfg = {**PLAN.get((model, kappa, d, lr), {"steps": 4096, "max_trials": 32}), **plan}
    over = {"lr": lr} if lr is not None else {}
    th = group_theory(model, kappa, d)["value"]
    return measure_capacity(model, d, kappa=kappa, design="adaptive", alphas=[th * f for f in START],
                            ci_halfwidth=CI_HALFWIDTH, max_trials=cfg["max_trials"], batch=BATCH,
                            store=store, workers=workers, progress=progress, steps=cfg["steps"],
                            dtype="float32", **over)


def stored_results(store=STORE, steps=4096):
    """Read the trial results of a store with one step budget, grouped by group.

    Parameters
    ----------
    store : path
        Engine JSONL store (default: the committed :data:`validation.linear_memory.d150.STORE`).  A missing
        file gives ``{}``.
    steps : int
        Step budget of the trials kept; trials with another budget (the
        longer-budget checks) are left out.

    Returns
    -------
    dict
        ``(model, kappa, d, lr)`` -> list of the completed trials' result dicts
        (``load``, ``success``, ``accuracy``, ``steps``, ``loss``, ``seconds``,
        ...), each with ``seed``, ``steps_budget`` and ``finished`` (time stamp
        of the record) added; ``lr`` is None for trials run with the default
        preset's rate.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    from validation.engine import read_store

    if not Path(store).exists():
        return {}
    out = {}
    for rec in read_store(store, warn=False).ok.values():
        prm = rec["params"]
        if prm.get("steps") != steps:
            continue
        g = (prm["model"], prm.get("kappa"), prm["d"], prm.get("lr"))
        out.setdefault(g, []).append({**rec["result"], "seed": prm["seed"],
                                      "steps_budget": prm.get("steps"), "finished": rec.get("finished")})
    return out


def summarise(results=None):
    """Summarise every stored group in one row (threshold fit, theory, paper value, cost).

    The threshold is the logistic fit of *all* the group's trials (the adaptive
    run's final fit).  Groups of :data:`validation.linear_memory.d150.PLAN` come first, in priority order.

    Parameters
    ----------
    results : dict, optional
        Trials grouped as by :func:`validation.linear_memory.d150.stored_results`; default: the 4096-step
        trials of the committed :data:`validation.linear_memory.d150.STORE`.

    Returns
    -------
    dict
        :func:`validation.linear_memory.d150.group_key` -> row dict: ``model``, ``kappa``, ``d``, ``lr`` (0.1 for
        the default preset), ``threshold``, ``ci`` (95% profile-likelihood
        interval), ``halfwidth``, ``theory_finite_p``, ``theory_stderr``,
        ``kappa_eff`` (:func:`validation.linear_memory.d150.group_theory`), ``paper`` (the paper's value at
        d = 150, else None), ``trials``, ``successes``, ``wall_seconds`` (sum of
        trial walls / 2 workers), ``cpu_seconds``, ``steps_budget``, ``counts``
        (``[load, successes, trials]`` rows), ``failure_accuracy`` (fraction of
        facts recalled by each failure), ``success_steps_max`` and
        ``max_success_load`` (None without a success), ``measured`` (the group's
        ``run`` flag in :data:`validation.linear_memory.d150.PLAN`) and ``done`` (half-width <=
        :data:`CI_HALFWIDTH` or trial cap reached).

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    from validation.logistic import fit_threshold

    results = stored_results() if results is None else results
    rows = {}
    for g in [g for g in PLAN if g in results] + [g for g in results if g not in PLAN]:
        model, kappa, d, lr = g
        res = sorted(results[g], key=lambda r: r["seed"])
        fit = fit_threshold([r["load"] for r in res], [r["success"] for r in res])
        th = group_theory(model, kappa, d)
        hw = (fit.ci_high - fit.ci_low) / 2
        cap = PLAN.get(g, {}).get("max_trials", math.inf)
        rows[group_key(*g)] = {
            "model": model, "kappa": kappa, "d": d, "lr": lr if lr is not None else 0.1,
            "threshold": fit.threshold,
            "ci": [fit.ci_low, fit.ci_high], "halfwidth": hw,
            "theory_finite_p": th["value"], "theory_stderr": th["stderr"], "kappa_eff": th["kappa_eff"],
            "paper": PAPER.get(1.0 if model == "op" else kappa) if d == 150 else None,
            "trials": len(res), "successes": int(sum(r["success"] for r in res)),
            "wall_seconds": float(sum(r["seconds"] for r in res)) / 2,
            "cpu_seconds": float(sum(r.get("cpu_seconds", 0.0) for r in res)),
            "steps_budget": res[0]["steps_budget"], "counts": fit.counts,
            "failure_accuracy": [round(float(r["accuracy"]), 4) for r in res if not r["success"]],
            "success_steps_max": max((int(r["steps"]) for r in res if r["success"]), default=None),
            "max_success_load": max((float(r["load"]) for r in res if r["success"]), default=None),
            "measured": bool(PLAN.get(g, {}).get("run", True)),
            "done": bool(hw <= CI_HALFWIDTH or len(res) >= cap)}
    return rows


def budget_table(results=None, budgets=(256, 512, 1024, 2048, 4096)):
    """Compute the step-budget study of the stored groups.

    Per group and budget ``B``, the threshold is refitted with
    ``success(B) = success and steps <= B``: with a constant learning rate a run
    with budget ``B`` is the first ``B`` steps of the stored run, so this is
    exact for every ``B`` up to the stored budget.

    Parameters
    ----------
    results : dict, optional
        Trials grouped as by :func:`validation.linear_memory.d150.stored_results`; default: the 4096-step
        trials of the committed :data:`validation.linear_memory.d150.STORE`.
    budgets : sequence of int
        Step budgets ``B``; those above a group's stored budget are skipped.

    Returns
    -------
    dict
        :func:`validation.linear_memory.d150.group_key` -> list with one dict per budget: ``budget``,
        ``threshold``, ``ci`` (95% interval), ``successes`` (at that budget),
        ``near_successes`` and ``near_trials`` (successes and trials at loads
        within +-3 % of the full-budget threshold; none when that threshold is
        not finite).

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    from validation.logistic import fit_threshold

    results = stored_results() if results is None else results
    out = {}
    for g, res in results.items():
        x = np.array([r["load"] for r in res])
        full = fit_threshold(x, [r["success"] for r in res]).threshold
        near = np.abs(x / full - 1) <= 0.03 if math.isfinite(full) else np.zeros(x.size, bool)
        rows = []
        for b in budgets:
            if b > (res[0]["steps_budget"] or 4096):
                continue
            s = np.array([r["success"] and r["steps"] <= b for r in res])
            f = fit_threshold(x, s)
            rows.append({"budget": int(b), "threshold": f.threshold, "ci": [f.ci_low, f.ci_high],
                         "successes": int(s.sum()), "near_successes": int(s[near].sum()),
                         "near_trials": int(near.sum())})
        out[group_key(*g)] = rows
    return out


#: Longer-budget reruns of stored failures near the threshold: (model, kappa, d, lr, load, seed, steps).
LONG_BUDGET = [("op", None, 100, LR, 0.8532366180317538, 1, 16384),
               ("op", None, 100, LR, 0.856474311786472, 10, 16384)]
#: Their store (a separate file: the main sweep holds the lock of ``STORE`` while it runs).
LONG_STORE = STORE.with_name("d150_budget.jsonl")


def long_budget_check(store=LONG_STORE, compute=False, workers=2):
    """Rerun stored 4096-step failures near the threshold with a longer budget.

    The instances of :data:`LONG_BUDGET`: does a longer run recall them?

    Parameters
    ----------
    store : path
        The store of the reruns (the 4096-step trials are read from :data:`validation.linear_memory.d150.STORE`).
    compute : bool
        Run the missing reruns (else read what is stored).
    workers : int
        Worker processes when computing.

    Returns
    -------
    list of dict
        ``load``, ``seed``, ``lr``, ``steps_budget``, ``success``, ``steps``,
        ``accuracy``, ``loss``, and ``accuracy_4096``/``loss_4096`` of the
        4096-step trial of the same instance (None if not stored); only the
        reruns found in ``store``, empty if it does not exist.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    from validation.engine import read_store, run_sweep, trial_key
    from .capacity import capacity_trial, trial_params

    params = [trial_params(m, d, [a], [sd], kappa=k, steps=st, dtype="float32", lr=lr)[0]
              for m, k, d, lr, a, sd, st in LONG_BUDGET]
    if compute:
        run_sweep(capacity_trial, params, store=store, workers=workers, label="d150 long budget")
    if not Path(store).exists():
        return []
    ok = read_store(store, warn=False).ok
    main = read_store(STORE, warn=False).ok if STORE.exists() else {}
    out = []
    for q in params:
        rec = ok.get(trial_key(q, capacity_trial))
        if rec is None:
            continue
        base = main.get(trial_key({**q, "steps": 4096}, capacity_trial))
        r = rec["result"]
        out.append({"load": r["load"], "seed": q["seed"], "lr": q["lr"], "steps_budget": q["steps"],
                    "success": r["success"], "steps": r["steps"], "accuracy": r["accuracy"], "loss": r["loss"],
                    "accuracy_4096": base["result"]["accuracy"] if base else None,
                    "loss_4096": base["result"]["loss"] if base else None})
    return out


def lr_check(results=None, d=100):
    """Collect the learning-rate check of the full-rank (OP) groups at one ``d``.

    The first-round instances (seeds 0-3 at the :data:`START` loads, identical in
    every group) trained with each stored learning rate.

    Parameters
    ----------
    results : dict, optional
        Trials grouped as by :func:`validation.linear_memory.d150.stored_results`; default: the 4096-step
        trials of the committed :data:`validation.linear_memory.d150.STORE`.
    d : int
        Dimension of the OP groups compared.

    Returns
    -------
    list of dict
        ``load``, ``seed``, ``lr`` (0.1 for the default preset), ``success``,
        ``accuracy``, ``steps``, ``loss``; sorted by load, then by decreasing
        learning rate.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    results = stored_results() if results is None else results
    out = []
    for (m, k, dd, lr), res in results.items():
        if m != "op" or dd != d:
            continue
        for r in res:
            if r["seed"] < len(START):
                out.append({"load": r["load"], "seed": r["seed"], "lr": 0.1 if lr is None else lr,
                            "success": r["success"], "accuracy": r["accuracy"], "steps": r["steps"],
                            "loss": r["loss"]})
    return sorted(out, key=lambda r: (r["load"], -r["lr"]))


def trained_threshold(d, model="op", kappa=None, lr=LR, store=STORE):
    """Look up the stored trained threshold of one group.

    Parameters
    ----------
    d : int
        Dimension.
    model : {"op", "lowrank"}
        Memory model of the group.
    kappa : float or None
        Rank ratio (``"lowrank"``); None for ``"op"``.
    lr : float or None
        Adam learning rate of the group; None for the default preset's.
    store : path
        Engine JSONL store (default: the committed :data:`validation.linear_memory.d150.STORE`); its 4096-step
        trials are used.

    Returns
    -------
    dict or None
        The group's row of :func:`validation.linear_memory.d150.summarise` (``threshold``, ``ci``, ``trials``,
        ``theory_finite_p``, ...), or None if the store holds no trial of the group.

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#thresholds-at-d--100-and-150
    """
    res = stored_results(store)
    g = (model, kappa, d, lr)
    if g not in res:
        return None
    return summarise({g: res[g]})[group_key(*g)]


def main(argv=None):
    ap = ArgumentParser(prog="python -m validation.linear_memory.d150",
                                 description="adaptive d = 100/150 capacity thresholds into the committed store")
    ap.add_argument("--groups", default="all",
                    help="comma-separated indices into the groups of PLAN with run=True (priority order), default all")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--store", default=str(STORE))
    a = ap.parse_args(argv)
    groups = [g for g, c in PLAN.items() if c["run"]]
    if a.groups != "all":
        try:
            groups = [groups[int(i)] for i in a.groups.split(",")]
        except (ValueError, IndexError):
            print(f"error: --groups must be comma-separated indices in 0..{len(groups) - 1}, got {a.groups!r}",
                  file=sys.stderr)
            return 2
    for g in groups:
        t0 = time.perf_counter()
        r = run_group(*g, store=a.store, workers=a.workers)
        print(f"{group_key(*g)}: {r['threshold']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}] "
              f"trials {r['trials']} stop {r['stop']} wall {time.perf_counter() - t0:.0f} s "
              f"cpu {r['train_cpu_seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    from hcizz.cli import run_cli

    sys.exit(run_cli(main, prog="python -m validation.linear_memory.d150"))
