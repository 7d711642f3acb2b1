"""Normalised scores and margins of trained memories vs the finite-``p`` capacity-point prediction.

The prediction (:func:`replica.pinned_scores.pinned_scores`) comes from the
minimiser of ``V_p``: at the capacity the correct score of a fact is the mean
of its unperturbed score and of its ``k*`` largest competitors, which end
tied with it (zero margin).  :func:`margin_trial` trains one OP memory (default
preset) at a given load and returns its normalised correct scores, margins and
the profile of its largest competitors, for :func:`validation.engine.run_sweep`
(stored in :data:`STORE`; regenerate with
``nice -n 10 python -m validation.linear_memory.margins``).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from hcizz.cli import ArgumentParser

__all__ = ["STORE", "DS", "margin_trial", "margin_params", "observables", "predicted", "compare"]

STORE = Path(__file__).resolve().parent / "stored" / "margin_trials.jsonl"
DS = (40, 60, 80)
SEEDS = 6
N_TOP = 10


def observables(correct, competitors, n_top=N_TOP):
    """Compute per-row normalised correct score, largest competitor, margin and top gaps.

    Parameters
    ----------
    correct : ndarray, shape (p,)
        Correct scores in competitor-std units
        (:func:`validation.linear_memory.mechanism.normalized_scores`).
    competitors : ndarray, shape (p, p - 1)
        Competitor scores in the same units.
    n_top : int
        Number of largest competitors in the gap profile.

    Returns
    -------
    dict
        Arrays ``correct``, ``row_max`` (largest competitor), ``margin``
        (``correct - row_max``) and ``gaps`` (``correct`` minus the ``n_top``
        largest competitors, shape (p, n_top)); the same keys as
        :func:`predicted`, so the two are compared key by key.

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    top = -np.sort(-competitors, axis=1)[:, :n_top]
    return {"correct": correct, "row_max": top[:, 0], "margin": correct - top[:, 0],
            "gaps": correct[:, None] - top}


def margin_trial(params):
    """Train one OP memory at load ``alpha`` (default preset); normalised score observables.

    Parameters
    ----------
    params : dict
        ``d``, ``alpha``, ``seed`` (facts and initialisation exactly as in
        :func:`validation.linear_memory.capacity.capacity_trial`, so the same
        instance), optional ``steps``.

    Returns
    -------
    dict
        ``p``, ``load``, ``success``, ``steps``; on success also ``correct`` and
        ``margin`` (lists, 5 significant digits) and ``gap_profile`` (mean of
        correct minus the ``j``-th largest competitor, ``j = 1..10``).

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from .capacity import trial_rngs
    from .data import load_of, make_facts, p_from_load
    from .mechanism import normalized_scores
    from .train import train

    d, seed = int(params["d"]), int(params["seed"])
    p = p_from_load(params["alpha"], d)
    rf, ri = trial_rngs(seed, d, p)
    facts = make_facts("op", p, d, rng=rf)
    over = {"steps": params["steps"]} if "steps" in params else {}
    res = train(facts, model="full", rng=ri, **over)
    out = {"p": p, "load": float(load_of(p, d)), "success": bool(res.success), "steps": int(res.steps)}
    if res.success:
        c, q = normalized_scores(res.W.astype(np.float64), facts.astype(np.float64))
        ob = observables(c, q)
        out.update(correct=[float(f"{v:.5g}") for v in ob["correct"]],
                   margin=[float(f"{v:.5g}") for v in ob["margin"]],
                   gap_profile=ob["gaps"].mean(axis=0).tolist())
    return out


FRACS = (1.0, 0.95)


def margin_params(ds=DS, seeds=SEEDS, fracs=FRACS):
    """List the trials at fractions ``fracs`` of the self-consistent finite-``p`` capacity of each ``d``.

    Parameters
    ----------
    ds : sequence of int
        Dimensions.
    seeds : int
        Trials per load.
    fracs : sequence of float
        Fractions of :func:`validation.linear_memory.theory.full_rank_threshold`.

    Returns
    -------
    list of dict
        :func:`margin_trial` parameters.

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from .theory import full_rank_threshold

    out = []
    for d in ds:
        a = float(full_rank_threshold(d).value)
        out += [{"kind": "margins", "model": "op", "d": int(d), "alpha": a if f == 1.0 else f * a,
                 "seed": int(s)} for f in fracs for s in range(seeds)]
    return out


def predicted(p, *, samples=4000, rng=0):
    """Predict the observables of :func:`observables` at ``p`` from the minimiser of ``V_p``.

    Parameters
    ----------
    p : int
        Number of facts.
    samples : int
        Monte Carlo samples of :func:`replica.pinned_scores.pinned_scores`.
    rng : int or Generator
        Randomness.

    Returns
    -------
    dict
        Arrays ``correct``, ``row_max``, ``margin``, ``gaps`` (as
        :func:`observables`) and ``k_active`` (number of competitors tied with
        the correct score).

    Notes
    -----
    At the capacity the correct score of a fact is the mean of its
    unperturbed score and of its ``k*`` largest competitors, which end tied
    with it (zero margin).

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from replica.pinned_scores import pinned_scores

    s = pinned_scores(int(p), samples=samples, rng=rng, n_top=N_TOP)
    return {"correct": s["correct"], "row_max": s["row_max"], "margin": s["margin"],
            "gaps": s["gaps"], "k_active": s["k_active"]}


def _stats(x):
    x = np.asarray(x, float)
    se = x.std(ddof=1) / math.sqrt(x.size)
    q = np.quantile(x, [0.1, 0.5, 0.9])
    return {"mean": float(x.mean()), "mean_se": float(se), "var": float(x.var(ddof=1)),
            "q10": float(q[0]), "median": float(q[1]), "q90": float(q[2]), "n": int(x.size)}


def compare(results, *, samples=4000):
    """Compare pooled trained observables of the successful trials with the prediction, per ``d``.

    Parameters
    ----------
    results : list of dict
        :func:`margin_trial` results, each with its ``d``.
    samples : int
        Monte Carlo samples of the prediction (:func:`predicted`).

    Returns
    -------
    list of dict
        One row per ``(d, p)``: ``load``, ``load_fraction``, ``memories``,
        ``trials``, ``trained`` and ``predicted`` summaries (mean, its
        standard error, variance, quantiles), ``sqrt_2lnp``, and the pooled
        arrays under underscore keys for figures.

    Notes
    -----
    Standard errors: trained means use the spread of the per-memory means
    (rows of one memory are correlated through ``W``); the prediction's are
    ordinary Monte Carlo standard errors.

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from .theory import full_rank_threshold

    by_d, total = {}, {}
    for r in results:
        total[(r["d"], r["p"])] = total.get((r["d"], r["p"]), 0) + 1
        if r.get("success"):
            by_d.setdefault((r["d"], r["p"]), []).append(r)
    rows = []
    for (d, p), rr in sorted(by_d.items(), key=lambda t: (t[0][0], -t[0][1])):
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
        rows.append({"d": d, "p": p, "load": load,
                     "load_fraction": load / float(full_rank_threshold(d).value),
                     "memories": len(rr), "trials": total[(d, p)],
                     "trained": {"correct": tr_c, "margin": tr_m, "gap_profile": gp.tolist(),
                                 "row_max_mean": float(np.mean(corr - marg)),
                                 "frac_margin_below_0.05": float(np.mean(marg < 0.05))},
                     "predicted": {"correct": _stats(pr["correct"]), "margin": _stats(pr["margin"]),
                                   "gap_profile": pr["gaps"].mean(axis=0).tolist(),
                                   "row_max_mean": float(pr["row_max"].mean()),
                                   "k_active_mean": float(pr["k_active"].mean()),
                                   "frac_margin_zero": float(np.mean(pr["margin"] == 0.0))},
                     "sqrt_2lnp": math.sqrt(2 * math.log(p)),
                     "_corr": corr, "_marg": marg, "_pred_corr": pr["correct"]})
    return rows


def main(argv=None):
    from validation.engine import run_sweep

    ap = ArgumentParser(prog="python -m validation.linear_memory.margins",
                                 description="trained OP memories at the finite-p capacity: scores and margins")
    ap.add_argument("--d", default=",".join(map(str, DS)))
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--store", default=str(STORE))
    a = ap.parse_args(argv)
    params = margin_params([int(x) for x in a.d.split(",")], a.seeds)
    # the trial function by its importable name (not ``__main__``): stored keys must match the report's
    from validation.linear_memory.margins import margin_trial as trial

    recs = run_sweep(trial, params, store=a.store, workers=a.workers, label="margins")
    res = [{**r["result"], "d": prm["d"]} for prm, r in zip(params, recs) if r["status"] == "ok"]
    for row in compare(res):
        t, q = row["trained"], row["predicted"]
        print(f"d={row['d']} p={row['p']} memories={row['memories']}: correct {t['correct']['mean']:.3f} "
              f"(var {t['correct']['var']:.3f}) vs {q['correct']['mean']:.3f} (var {q['correct']['var']:.3f}); "
              f"margin mean {t['margin']['mean']:.3f} vs 0 (pred. atom {q['frac_margin_zero']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
