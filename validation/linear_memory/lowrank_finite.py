"""Raw low-rank capacity thresholds against the finite-``p`` rank-constrained theory.

Trials: :func:`validation.linear_memory.capacity.capacity_trial` with
``model="lowrank"`` (default preset, 4096 steps), ``kappa`` in {0.25, 0.5, 0.75},
``d`` in {20, 30, 40, 60, 80}, ``seeds`` seeds on a grid of loads around the
prediction :func:`validation.linear_memory.theory.lowrank_finite_threshold`
(``alpha = alpha_c(m/d, p) = alpha_c(m/d) ln p / E[V_p]`` solved with
``p ln p = alpha d^2``).  The trials are stored with the engine in the
committed JSONL file :data:`STORE` so that the report reuses them;
regenerate (or extend) it with::

    nice -n 10 python -m validation.linear_memory.lowrank_finite --workers 2

(about 15 min of CPU on two cores for the default sizes; finished trials in
the store are skipped).
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

from hcizz.cli import ArgumentParser

__all__ = ["STORE", "KAPPAS", "DS", "plan", "run", "summarise"]

#: Committed store of the low-rank trials (path relative to the repository root).
STORE = Path(__file__).resolve().parent / "stored" / "lowrank_finite_p.jsonl"
KAPPAS = (0.25, 0.5, 0.75)
DS = (20, 30, 40, 60, 80)
#: Loads: the finite-p prediction times these factors (measured thresholds sit
#: 0-5 % above the prediction at full rank); one extension round if unbracketed.
FACTORS = tuple(np.round(np.linspace(0.88, 1.16, 8), 4))
SEEDS = 4


def _theory(d, kappa):
    from .models import lowrank_m
    from .theory import lowrank_finite_threshold, lowrank_threshold

    k_eff = lowrank_m(d, kappa) / d
    e = lowrank_finite_threshold(d, k_eff)
    return {"value": e.value, "stderr": e.stderr, "p": e.info["p"], "kappa_eff": k_eff,
            "alpha_c_kappa": lowrank_threshold(k_eff)}


def plan(d, kappa, *, seeds=SEEDS, factors=FACTORS):
    """Plan the loads and trial parameters of one ``(d, kappa)`` group.

    Parameters
    ----------
    d : int
        Dimension.
    kappa : float
        Rank ratio in (0, 1] (the prediction uses the actual ``m / d``).
    seeds : int
        Trials per load.
    factors : sequence of float
        Loads are the finite-``p`` prediction times these factors.

    Returns
    -------
    loads : list of float
        Actual loads of integer ``p``, sorted, unique.
    params : list of dict
        :func:`validation.linear_memory.capacity.capacity_trial` parameters.

    References
    ----------
    docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories
    """
    from .capacity import trial_params
    from replica.load import load_of, p_from_load

    c = _theory(d, kappa)["value"]
    loads = sorted({float(load_of(p_from_load(c * f, d), d)) for f in factors})
    return loads, trial_params("lowrank", d, loads, range(seeds), kappa=kappa)



def run(ds=DS, kappas=KAPPAS, *, store=STORE, workers=2, seeds=SEEDS, progress=True,
        executor="processes"):
    """Run (or reuse from ``store``) every trial of the low-rank finite-``p`` study.

    Parameters
    ----------
    ds : sequence of int
        Dimensions.
    kappas : sequence of float
        Rank ratios.
    store : path
        JSONL store of the engine (default: the committed :data:`STORE`).
    workers : int
        Worker processes.
    seeds : int
        Trials per load.
    progress : bool
        Print progress.
    executor : str or validation.engine.WorkerPool, optional
        Passed to ``run_sweep`` (a name or a shared ``WorkerPool``).

    Returns
    -------
    records : dict
        ``(kappa, d)`` to the list of trial results (each with its ``seed``).
    seconds : float
        Wall time.
    reused : int
        Trials found in the store.
    total : int
        Trials planned (with the extension round).

    References
    ----------
    docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories
    """
    from validation.engine import run_sweep
    from .capacity import capacity_trial, extension_loads

    t0 = time.perf_counter()
    plans = {(k, d): plan(d, k, seeds=seeds) for k in kappas for d in ds}
    params = [p for _, prm in plans.values() for p in prm]
    recs = run_sweep(capacity_trial, params, store=store, workers=workers, progress=progress,
                     executor=executor, label="lowrank finite-p")
    reused = recs.stats.n_skipped
    out = {}
    for prm, r in zip(params, recs):
        if r["status"] == "ok":
            out.setdefault((prm["kappa"], prm["d"]), []).append({**r["result"], "seed": prm["seed"]})
    more = []
    for (k, d), (loads, prm) in plans.items():
        new = extension_loads(loads, out.get((k, d), []), d)
        if new:
            from .capacity import trial_params
            more += trial_params("lowrank", d, new, range(seeds), kappa=k)
    if more:
        recs2 = run_sweep(capacity_trial, more, store=store, workers=workers, progress=progress,
                          executor=executor, label="lowrank finite-p (extension)")
        reused += recs2.stats.n_skipped
        for prm, r in zip(more, recs2):
            if r["status"] == "ok":
                out.setdefault((prm["kappa"], prm["d"]), []).append({**r["result"], "seed": prm["seed"]})
    return out, time.perf_counter() - t0, reused, len(params) + len(more)


def summarise(records, *, budget=None):
    """Fit the thresholds and compare them with the finite-``p`` theory, one row per ``(kappa, d)``.

    Parameters
    ----------
    records : dict
        ``(kappa, d)`` to trial results, as returned by :func:`run`.
    budget : int, optional
        Count a success only if it took at most ``budget`` steps (with the
        constant learning rate of the default preset this is exactly the
        outcome of a shorter run), for a step-budget convergence check.

    Returns
    -------
    list of dict
        Table rows (plain dicts): ``kappa``, ``d``, ``kappa_eff``,
        ``threshold``, ``ci``, ``theory``, ``theory_stderr``, ``theory_p``,
        ``alpha_c_kappa``, ``p_at_threshold``, ``ratio``, ``theory_in_ci``,
        ``trials``, ``counts``, ``budget``, ``train_cpu_seconds``.

    Notes
    -----
    The theory is ``alpha_c(kappa, p) = alpha_c(kappa) ln p / E[V_p]`` solved
    with ``p ln p = alpha d^2``
    (:func:`validation.linear_memory.theory.lowrank_finite_threshold`).

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories
    """
    from validation.logistic import fit_threshold
    from replica.load import p_from_load

    rows = []
    for (k, d), res in sorted(records.items()):
        succ = [bool(r["success"]) and (budget is None or r["steps"] <= budget) for r in res]
        fit = fit_threshold([r["load"] for r in res], succ)
        th = _theory(d, k)
        thr = fit.threshold
        rows.append({"kappa": k, "d": d, "kappa_eff": th["kappa_eff"], "threshold": thr,
                     "ci": [fit.ci_low, fit.ci_high], "theory": th["value"],
                     "theory_stderr": th["stderr"], "theory_p": th["p"],
                     "alpha_c_kappa": th["alpha_c_kappa"],
                     "p_at_threshold": p_from_load(thr, d) if math.isfinite(thr) else None,
                     "ratio": thr / th["value"] if math.isfinite(thr) else None,
                     "theory_in_ci": bool(fit.ci_low <= th["value"] <= fit.ci_high),
                     "trials": len(res), "counts": fit.counts, "budget": budget,
                     "train_cpu_seconds": float(sum(r.get("cpu_seconds", 0.0) for r in res))})
    return rows


def main(argv=None):
    ap = ArgumentParser(prog="python -m validation.linear_memory.lowrank_finite",
                                 description="low-rank thresholds vs alpha_c(kappa) ln p / E[V_p]")
    ap.add_argument("--d", default=",".join(map(str, DS)), help="comma-separated dimensions")
    ap.add_argument("--kappa", default=",".join(map(str, KAPPAS)), help="comma-separated rank fractions")
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--store", default=str(STORE))
    a = ap.parse_args(argv)
    ds = [int(x) for x in a.d.split(",")]
    ks = [float(x) for x in a.kappa.split(",")]
    recs, sec, reused, n = run(ds, ks, store=a.store, workers=a.workers, seeds=a.seeds)
    for r in summarise(recs):
        print(f"kappa={r['kappa']:g} d={r['d']}: {r['threshold']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
              f"  theory {r['theory']:.3f}  ratio {r['ratio'] if r['ratio'] is None else round(r['ratio'], 3)}"
              f"  trials {r['trials']}", flush=True)
    print(f"{n} trials ({reused} reused) in {sec:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from hcizz.cli import run_cli

    sys.exit(run_cli(main, prog="python -m validation.linear_memory.lowrank_finite"))
