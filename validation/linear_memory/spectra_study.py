"""Finite-size study of trained spectra against the (truncated) quarter circle.

For rank fraction ``kappa`` (1: full rank from zero initialisation; < 1: the
two-layer memory with its default N(0, 1) initialisation), dimension ``d`` and
load fraction ``f`` of the finite-``p`` capacity
(:func:`validation.linear_memory.theory.lowrank_finite_threshold`), train OP
memories of several seeds (default preset, stop at first full recall) and pool
the top ``m = round(kappa d)`` singular values of the successful ones, each
instance scaled by its own second-moment match to the law (the only fitted
parameter).  Two numbers are reported next to each other:

* ``ks``: Kolmogorov-Smirnov distance of the pooled trained values to
  ``hcizz.truncated_quarter_circle(m/d)`` (``quarter_circle`` at full rank);
* ``ks_calibration``: the same statistic for the top ``m`` singular values of
  as many ``d x d`` Gaussian matrices (whose top-``kappa`` spectrum converges
  to exactly this law), i.e. the distance a perfect match would show at this
  ``d`` and sample size (mean and spread over repetitions);

and the edge (smallest of the ``m`` scaled values, mean over instances) against
``X_qc(1 - m/d)`` and against its Gaussian calibration.  Trials are engine
trials (:func:`spectrum_trial`), stored in :data:`STORE`; regenerate with
``nice -n 10 python -m validation.linear_memory.spectra_study``.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from dataclasses import dataclass

import numpy as np

from hcizz.cli import ArgumentParser

from validation.results import Result

__all__ = ["STORE", "spectrum_trial", "study_params", "pooled_ks", "gaussian_calibration",
           "GaussianCalibration", "summarise"]

STORE = Path(__file__).resolve().parent / "stored" / "spectra_study.jsonl"
KAPPAS = (1.0, 0.5, 0.25)
FRACS = (0.6, 0.8, 1.0)


def _law(k_eff):
    import hcizz

    return hcizz.quarter_circle if k_eff >= 1 else hcizz.truncated_quarter_circle(k_eff)


def _theory_load(d, kappa):
    from .models import lowrank_m
    from .theory import lowrank_finite_threshold

    return float(lowrank_finite_threshold(d, lowrank_m(d, kappa) / d).value)


def _norm_margin(W, facts):
    from .models import scores

    Z = scores(W, facts)
    idx = np.arange(facts.p)
    corr = Z[idx, idx].copy()
    Z[idx, idx] = -np.inf
    return float((corr - Z.max(axis=1)).min() / np.linalg.norm(W))


def _train_on(facts, kappa, rng, steps, extra):
    """The default preset's loop (Adam, lr 0.1 constant, temperature 0.05), but going on for
    ``extra`` steps after the first full recall; returns (W at first recall, W at the end,
    first-recall step, margins along the continuation)."""
    from validation.optim import Adam
    from .models import init_lowrank, lowrank_W, lowrank_grads, xent_and_grad
    from .train import get_config

    cfg = get_config("default")
    d = facts.d
    scale = 1.0 / (cfg.temperature * math.sqrt(d))
    if kappa >= 1:
        params = [np.zeros((d, d), dtype=facts.E.dtype)]
    else:
        params = list(init_lowrank(d, kappa, rng=rng, dtype=facts.E.dtype))
    opt = Adam(params)
    W_first, t_first, trace = None, None, []
    f64 = facts.astype(np.float64)
    for t in range(steps + extra):
        W = params[0] if kappa >= 1 else lowrank_W(*params)
        _, dW, corr = xent_and_grad(W, facts, scale=scale)
        if W_first is None and corr.all():
            W_first, t_first = W.copy(), t
        if t_first is not None and (t - t_first) in (0, extra // 4, extra // 2, extra):
            trace.append([t - t_first, _norm_margin(W.astype(np.float64), f64)])
        if t_first is not None and t - t_first >= extra:
            return W_first, W, t_first, trace
        if t_first is None and t >= steps:
            break
        grads = [dW] if kappa >= 1 else list(lowrank_grads(params[0], params[1], dW))
        opt.step(grads, lr=cfg.lr)
    return W_first, None, t_first, trace


def spectrum_trial(params):
    """Train one memory; return its top ``m`` singular values (of ``W / sqrt(d)``).

    Parameters
    ----------
    params : dict
        ``d``, ``kappa``, ``frac`` (load as a fraction of the finite-``p``
        capacity at this ``d``), ``seed``; optional ``steps``.

    Returns
    -------
    dict
        ``p``, ``load``, ``success``, ``steps``, ``sv`` (descending, 6
        significant digits), ``margin`` (smallest correct-minus-largest-competitor
        score over facts divided by ``||W||_F``, the normalised margin at stop).

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    from .capacity import trial_rngs
    from .data import load_of, make_facts, p_from_load
    from .models import lowrank_m, scores
    from .train import train

    d, kappa, seed = int(params["d"]), float(params["kappa"]), int(params["seed"])
    p = p_from_load(params["frac"] * _theory_load(d, kappa), d)
    rf, ri = trial_rngs(seed, d, p)
    facts = make_facts("op", p, d, rng=rf)
    if params.get("extra_steps"):
        # continued training after the first full recall (``extra_steps`` more steps)
        m = lowrank_m(d, kappa)
        W1, W2, t1, trace = _train_on(facts, kappa, ri, params.get("steps", 4096), int(params["extra_steps"]))
        out = {"p": p, "load": float(load_of(p, d)), "success": W2 is not None,
               "steps": -1 if t1 is None else int(t1), "margin_trace": trace}
        if W2 is not None:
            sv = np.linalg.svd(W2.astype(np.float64) / math.sqrt(d), compute_uv=False)[:m]
            out.update(sv=[float(f"{v:.6g}") for v in sv], margin=trace[-1][1], margin_first=trace[0][1])
        else:
            out.update(sv=[], margin=float("nan"))
        return out
    over = {"steps": params["steps"]} if "steps" in params else {}
    if kappa >= 1:
        res = train(facts, model="full", rng=ri, init_std=0.0, **over)
    else:
        res = train(facts, model="lowrank", kappa=kappa, rng=ri, **over)
    W = res.W.astype(np.float64)
    m = lowrank_m(d, kappa)
    sv = np.linalg.svd(W / math.sqrt(d), compute_uv=False)[:m]
    Z = scores(W, facts.astype(np.float64))
    idx = np.arange(p)
    corr = Z[idx, idx].copy()
    Z[idx, idx] = -np.inf
    margin = float((corr - Z.max(axis=1)).min() / np.linalg.norm(W))
    return {"p": p, "load": float(load_of(p, d)), "success": bool(res.success), "steps": int(res.steps),
            "sv": [float(f"{v:.6g}") for v in sv], "margin": margin}


def study_params(ds, kappas=KAPPAS, fracs=FRACS, seeds=8, extra_steps=None):
    """List the trial parameters of the spectra study.

    Parameters
    ----------
    ds : sequence of int
        Dimensions.
    kappas : sequence of float
        Rank ratios (1: full rank).
    fracs : sequence of float
        Loads as fractions of the finite-``p`` capacity at each ``d``.
    seeds : int
        Trials per ``(d, kappa, frac)``.
    extra_steps : int, optional
        Continue training that long after the first full recall.

    Returns
    -------
    list of dict
        :func:`spectrum_trial` parameters.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    out = [{"kind": "spectra_study", "d": int(d), "kappa": float(k), "frac": float(f), "seed": int(s)}
           for d in ds for k in kappas for f in fracs for s in range(seeds)]
    if extra_steps:
        for p in out:
            p["extra_steps"] = int(extra_steps)
    return out


def _scaled(sv, law):
    sv = np.asarray(sv, float)
    return sv * math.sqrt(float(law.moment(2)) / float(np.mean(sv * sv)))


def pooled_ks(instances, k_eff):
    """Compute the KS distance of pooled, per-instance scaled singular values to the law.

    Parameters
    ----------
    instances : list of array_like
        Top ``m`` singular values of each memory.
    k_eff : float
        Actual rank ratio ``m / d`` (1: quarter circle, else the truncated
        quarter circle).

    Returns
    -------
    ks : float
        Kolmogorov-Smirnov statistic of the pooled values, each instance
        scaled by its second-moment match to the law.
    edge : float
        Mean over instances of the smallest scaled value (the lower edge).
    n : int
        Number of pooled values.

    References
    ----------
    docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation
    """
    from scipy import stats

    law = _law(k_eff)
    scaled = [_scaled(s, law) for s in instances]
    pool = np.concatenate(scaled)
    ks = float(stats.kstest(pool, law.cdf).statistic)
    edge = float(np.mean([s.min() for s in scaled]))
    return ks, edge, int(pool.size)


@dataclass(frozen=True)
class GaussianCalibration(Result):
    """Calibration of the pooled KS distance on Gaussian matrices (:func:`gaussian_calibration`).

    Parameters
    ----------
    ks_mean, ks_sd : float
        Mean and standard deviation over repetitions of the pooled KS distance.
    edge_mean, edge_sd : float
        Mean and standard deviation of the mean lower edge.
    reps : int
        Number of repetitions.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """

    ks_mean: float
    ks_sd: float
    edge_mean: float
    edge_sd: float
    reps: int


def gaussian_calibration(d, m, instances, *, reps=40, rng=0):
    """Calibrate the pooled KS distance and edge on i.i.d. Gaussian matrices.

    Parameters
    ----------
    d : int
        Dimension.
    m : int
        Number of top singular values kept.
    instances : int
        Gaussian ``d x d`` matrices (entries ``N(0, 1/d)``) pooled per
        repetition, as many as trained memories.
    reps : int
        Repetitions.
    rng : int or Generator
        Randomness.

    Returns
    -------
    GaussianCalibration
        Mean and standard deviation over repetitions of :func:`pooled_ks`'s
        distance and edge: the size of the KS distance that finite ``d`` and
        pooling alone produce for a matrix that does follow the law.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    rng = np.random.default_rng(rng)
    ks, edge = [], []
    for _ in range(reps):
        inst = [np.linalg.svd(rng.standard_normal((d, d)) / math.sqrt(d), compute_uv=False)[:m]
                for _ in range(instances)]
        k, e, _ = pooled_ks(inst, m / d)
        ks.append(k)
        edge.append(e)
    return GaussianCalibration(ks_mean=float(np.mean(ks)), ks_sd=float(np.std(ks, ddof=1)),
                               edge_mean=float(np.mean(edge)), edge_sd=float(np.std(edge, ddof=1)),
                               reps=reps)


def summarise(results):
    """Summarise the spectra study, one row per ``(kappa, d, frac, extra_steps)``.

    Parameters
    ----------
    results : list of dict
        :func:`spectrum_trial` results, each with its ``d``, ``kappa`` and ``frac``.

    Returns
    -------
    list of dict
        Table rows (plain dicts): pooled KS distance and edge against the
        (truncated) quarter circle, their Gaussian calibration
        (:func:`gaussian_calibration`), the predicted edge, margins.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    from hcizz.quarter_circle import qc_quantile
    from .models import lowrank_m

    groups = {}
    for r in results:
        groups.setdefault((r["kappa"], r["d"], r["frac"], r.get("extra_steps", 0)), []).append(r)
    rows = []
    for (k, d, f, ex), rr in sorted(groups.items(), key=lambda t: (-t[0][0], t[0][1], t[0][2], t[0][3])):
        ok = [r for r in rr if r["success"]]
        m = lowrank_m(d, k)
        row = {"kappa": k, "d": d, "load_fraction": f, "extra_steps": ex, "m": m, "instances": len(ok),
               "trials": len(rr),
               "margin_first_mean": (float(np.mean([r["margin_first"] for r in ok]))
                                     if ok and "margin_first" in ok[0] else None),
               "margin_trace_mean": (np.mean([r["margin_trace"] for r in ok], axis=0).tolist()
                                     if ok and "margin_trace" in ok[0] else None),
               "load": float(np.mean([r["load"] for r in rr])),
               "edge_theory": float(qc_quantile(1 - m / d)) if m < d else None,
               "margin_mean": float(np.mean([r["margin"] for r in ok])) if ok else None}
        if ok:
            ks, edge, n = pooled_ks([r["sv"] for r in ok], m / d)
            cal = gaussian_calibration(d, m, len(ok), rng=1000 * d + m)
            row.update(ks=ks, ks_calibration=cal["ks_mean"], ks_calibration_sd=cal["ks_sd"],
                       edge=edge if m < d else None,
                       edge_calibration=cal["edge_mean"] if m < d else None, n_values=n)
        else:
            row.update(ks=None, ks_calibration=None, ks_calibration_sd=None, edge=None,
                       edge_calibration=None, n_values=0)
        rows.append(row)
    return rows


def run(ds, *, seeds=8, store=STORE, workers=2, progress=True, fracs=FRACS, extra_steps=None,
        executor="processes"):
    from validation.engine import run_sweep

    params = study_params(ds, fracs=fracs, seeds=seeds, extra_steps=extra_steps)
    # the trial function by its importable name (also when this module runs as ``__main__``)
    from validation.linear_memory.spectra_study import spectrum_trial as trial

    recs = run_sweep(trial, params, store=store, workers=workers, progress=progress,
                     executor=executor, label="spectra study")
    res = [{**r["result"], "d": p["d"], "kappa": p["kappa"], "frac": p["frac"],
            "extra_steps": p.get("extra_steps", 0)} for p, r in zip(params, recs) if r["status"] == "ok"]
    return res, recs.stats.n_skipped, len(params)


def main(argv=None):
    ap = ArgumentParser(prog="python -m validation.linear_memory.spectra_study",
                                 description="pooled trained spectra vs the truncated quarter circle")
    ap.add_argument("--d", default="20")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--store", default=str(STORE))
    ap.add_argument("--fracs", default=",".join(map(str, FRACS)), help="load fractions of the capacity")
    ap.add_argument("--extra-steps", type=int, default=None,
                    help="continue training this many steps after the first full recall")
    a = ap.parse_args(argv)
    res, reused, n = run([int(x) for x in a.d.split(",")], seeds=a.seeds, store=a.store, workers=a.workers,
                         fracs=[float(x) for x in a.fracs.split(",")], extra_steps=a.extra_steps)
    for r in summarise(res):
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
    print(f"{n} trials ({reused} reused)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
