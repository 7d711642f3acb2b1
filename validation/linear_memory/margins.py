"""Normalised scores and margins of trained memories vs the finite-``p`` capacity-point prediction.

The prediction (:func:`replica.pinned_scores.pinned_scores`) comes from the
minimiser of ``V_p``: at the capacity the correct score of a fact is the mean
of its unperturbed score and of its ``k*`` largest competitors, which end
tied with it (zero margin).  Below the capacity the replica-symmetric overlap
``q* < 1`` gives a second prediction, the scores of a *typical* memory
(:func:`replica.pinned_scores.typical_scores` at ``q* = replica.saddle(load, p).q``),
with positive margins.  :func:`margin_trial` trains one OP memory (default
preset; Adam rate :data:`validation.linear_memory.d150.LR` at ``d >= 100``) at a
given load and returns its normalised correct scores, margins and the profile
of its largest competitors, for :func:`validation.engine.run_sweep` (stored in
:data:`STORE`, the study :data:`PLAN`; regenerate or extend with
``nice -n 10 python -m validation.linear_memory.margins --workers 2``).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from hcizz.cli import ArgumentParser
from validation.engine.trials import trial

__all__ = ["STORE", "DS", "PLAN", "LR_FROM_D", "TYPICAL_MAX_FRACTION", "margin_trial", "margin_params", "study_params", "observables",
           "predicted", "typical_predicted", "compare", "trend"]

STORE = Path(__file__).resolve().parent / "stored" / "margin_trials.jsonl"
DS = (40, 60, 80)
SEEDS = 6
N_TOP = 10
#: From this ``d`` on the trials use the Adam rate ``validation.linear_memory.d150.LR`` (0.01): the
#: default preset's 0.1 fails near the capacity at ``d >= 100``
#: (docs/linear_memory.md#thresholds-at-d--100-and-150).  Below it the parameter is absent, so the
#: stored keys of the first study are unchanged.
LR_FROM_D = 100
#: The stored study, in order: (dimensions, load fractions of the finite-``p`` capacity, Adam rate).
#: Rate ``None``: the default rule (0.1 of the default preset below :data:`LR_FROM_D`, 0.01 from it);
#: a number is stored with the trial.  The rate changes the margins (docs), so both rates are run on
#: the same instances where it is cheap: 0.01 at every d (d = 40-150), 0.1 up to d = 100; at the
#: capacity load itself (d = 40-80) both rates.
PLAN = (((40, 60, 80), (1.0, 0.95), None),
        ((40, 60, 80), (0.90,), None),
        ((80,), (0.95, 0.90), 0.01),
        ((100,), (0.90,), 0.1),
        ((100, 150), (0.95, 0.90), None),
        ((40, 60), (0.95, 0.90), 0.01),
        ((100,), (0.95,), 0.1),
        ((40, 60, 80), (1.0,), 0.01))


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


@trial("linear_memory.margins", aliases=("validation.linear_memory.margins:margin_trial",))
def margin_trial(params):
    """Train one OP memory at load ``alpha`` (default preset); normalised score observables.

    Parameters
    ----------
    params : dict
        ``d``, ``alpha``, ``seed`` (facts and initialisation exactly as in
        :func:`validation.linear_memory.capacity.capacity_trial`, so the same
        instance), optional ``steps`` and ``lr`` (Adam rate; default: the
        default preset's 0.1).

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
    from .data import trial_rngs
    from replica.load import load_of, p_from_load
    from .data import make_facts
    from .mechanism import normalized_scores
    from .train import train

    d, seed = int(params["d"]), int(params["seed"])
    p = p_from_load(params["alpha"], d)
    rf, ri = trial_rngs(seed, d, p)
    facts = make_facts("op", p, d, rng=rf)
    over = {k: params[k] for k in ("steps", "lr") if k in params}
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
#: Rows at or above this fraction of the finite-p capacity get no below-capacity (typical-memory) prediction.
TYPICAL_MAX_FRACTION = 0.99


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
        ``validation.linear_memory.d150.LR`` from it.

    Returns
    -------
    list of dict
        :func:`margin_trial` parameters.

    Raises
    ------
    ValueError
        ``d < 4``, a fraction outside (0, 1.5], ``seeds < 1`` or ``lr <= 0``
        (checked before any trial is run or stored).

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from .d150 import LR
    from .theory import full_rank_threshold

    from hcizz.checks import check_int, check_real

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


def study_params(seeds=SEEDS, plan=PLAN, max_d=None):
    """List the trials of the stored study :data:`~validation.linear_memory.margins.PLAN` (without repeats).

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
        :func:`margin_trial` parameters, in plan order.

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
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


def typical_predicted(p, load, *, samples=1000, rng=0, saddle_samples=200):
    """Predict the observables of :func:`observables` for a typical memory at load ``load`` below capacity.

    Parameters
    ----------
    p : int
        Number of facts.
    load : float
        Load ``p ln p / d^2`` of the trained memories.
    samples : int
        Rows of :func:`replica.pinned_scores.typical_scores`.
    rng : int or Generator
        Randomness of the rows.
    saddle_samples : int
        Disorder samples of :func:`replica.saddle` (common random numbers, seed 0).

    Returns
    -------
    dict or None
        ``q_star`` and ``q_stderr`` (RS overlap at ``(load, p)``), ``alpha_c``
        (the saddle's capacity at this ``p``), and arrays ``correct``,
        ``row_max``, ``margin``, ``gaps`` as :func:`observables`; ``None`` when
        the load is at or beyond the RS capacity (``q* = 1``: the limit is
        :func:`predicted`).

    Notes
    -----
    Scores of one memory drawn uniformly from the solution space: per fact
    ``z = sqrt(q*) eta + sqrt(1 - q*) zeta`` with ``zeta`` conditioned on
    recall (:func:`replica.pinned_scores.typical_scores`).

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from replica import saddle
    from replica.pinned_scores import typical_scores

    sd = saddle(float(load), int(p), samples=saddle_samples, rng=0)
    if not sd.q < 1.0:
        return None
    t = typical_scores(int(p), float(sd.q), samples=samples, rng=rng, n_top=N_TOP)
    return {"q_star": float(sd.q), "q_stderr": float(sd.q_stderr), "alpha_c": float(sd.alpha_c),
            "correct": t["correct"], "row_max": t["row_max"], "margin": t["margin"], "gaps": t["gaps"]}


def _stats(x):
    x = np.asarray(x, float)
    se = x.std(ddof=1) / math.sqrt(x.size)
    q = np.quantile(x, [0.1, 0.5, 0.9])
    return {"mean": float(x.mean()), "mean_se": float(se), "var": float(x.var(ddof=1)),
            "q10": float(q[0]), "median": float(q[1]), "q90": float(q[2]), "n": int(x.size)}


def compare(results, *, samples=4000, typical_samples=1000):
    """Compare pooled trained observables of the successful trials with the predictions, per ``(d, p, lr)``.

    Parameters
    ----------
    results : list of dict
        :func:`margin_trial` results, each with its ``d`` and, where the trial
        had one, its ``lr``.
    samples : int
        Monte Carlo samples of the capacity-point prediction (:func:`predicted`).
    typical_samples : int
        Rows of the below-capacity prediction (:func:`typical_predicted`);
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

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from .theory import full_rank_threshold

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
        :data:`LR_FROM_D`, ``validation.linear_memory.d150.LR`` from it), which
        mixes two protocols.
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

    References
    ----------
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p
    """
    from .d150 import LR

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


def main(argv=None):
    from validation.engine import run_sweep

    ap = ArgumentParser(prog="python -m validation.linear_memory.margins",
                                 description="trained OP memories at the finite-p capacity: scores and margins")
    ap.add_argument("--d", default=None, help="dimensions (default: the study PLAN)")
    ap.add_argument("--fracs", default=",".join(map(str, FRACS)), help="load fractions (with --d)")
    ap.add_argument("--lr", type=float, default=None, help="Adam rate (with --d; default: the study rule)")
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--store", default=str(STORE))
    ap.add_argument("--typical-samples", type=int, default=1000)
    a = ap.parse_args(argv)
    if a.d is None:
        params = study_params(a.seeds)
    else:
        params = margin_params([int(x) for x in a.d.split(",")], a.seeds,
                               [float(x) for x in a.fracs.split(",")], a.lr)
    # the trial function by its importable name (not ``__main__``): stored keys must match the report's
    from validation.linear_memory.margins import margin_trial as trial

    recs = run_sweep(trial, params, store=a.store, workers=a.workers, label="margins")
    res = [{**r["result"], "d": prm["d"], "lr": prm.get("lr")} for prm, r in zip(params, recs)
           if r["status"] == "ok"]
    for row in compare(res, typical_samples=a.typical_samples):
        t, q, ty = row["trained"], row["predicted"], row["typical"]
        typ = ("" if ty is None else f"; typical (q*={ty['q_star']:.3f}): correct {ty['correct']['mean']:.3f}, "
               f"margin {ty['margin']['mean']:.3f}")
        print(f"d={row['d']} p={row['p']} lr={row['lr']:g} frac={row['load_fraction']:.2f} "
              f"memories={row['memories']}/{row['trials']}: correct {t['correct']['mean']:.3f} "
              f"(var {t['correct']['var']:.3f}) vs {q['correct']['mean']:.3f} (var {q['correct']['var']:.3f}); "
              f"margin mean {t['margin']['mean']:.3f} vs 0 (pred. atom {q['frac_margin_zero']:.3f}){typ}")
    return 0


if __name__ == "__main__":
    from hcizz.cli import run_cli

    sys.exit(run_cli(main, prog="python -m validation.linear_memory.margins"))
