"""Grids of token-retrieval runs and the experiments built on them: phase diagrams,
boundary fits, orthogonal contrast, MLP and step-size scans, SNR prediction.

Grids are plain loops over configurations (or, with an ``executor``, sweeps of
:func:`validation.engine.run_sweep` with the trial :func:`grid_trial`).  The
pieces live by concept in their own modules and are re-exported here, the
historical import path:

* one run and its success statistics: :mod:`validation.token_retrieval.runs`
  (:func:`run_config`, :func:`compare_gd`);
* success probabilities: :mod:`validation.token_retrieval.success`;
* boundary points, fits and tests: :mod:`validation.token_retrieval.boundary`;
* measured moments: :mod:`validation.token_retrieval.moments`.

:func:`grid_trial` stays in this module on purpose: the engine keys a stored
trial by ``"module:qualname"`` of its function
(:func:`validation.engine.keys.fn_name`), so moving it would orphan stored
grid runs.
"""
from __future__ import annotations

import numpy as np

from hcizz.checks import check_int

from .boundary import aggregate, boundary_points, fit_boundary, logistic_fit, multiplicative_test
from .moments import MOMENT_KEYS, measure_moments
from .runs import check_memory_config, compare_gd, run_config
from .success import extreme_success_prob, gaussian_success_prob
from validation.engine.trials import trial

__all__ = ["run_config", "run_grid", "grid_trial", "aggregate", "boundary_points", "fit_boundary",
           "logistic_fit", "multiplicative_test", "gaussian_success_prob", "extreme_success_prob",
           "compare_gd", "measure_moments", "MOMENT_KEYS", "GRIDS", "grid_records", "fits",
           "orthogonal_contrast", "mlp_scan", "beta_scan", "snr_comparison"]


def _skippable(exc):
    """A configuration that cannot exist (``N > V``, orthogonal ``d < V + 2``)."""
    return "kind='orthogonal'" in str(exc) or "when distinct" in str(exc)


@trial("token_retrieval.grid", aliases=("validation.token_retrieval.experiments:grid_trial",))
def grid_trial(params):
    """Run one :func:`run_grid` configuration as a trial of :func:`validation.engine.run_sweep`.

    The function is module level, with JSON in and out.

    Parameters
    ----------
    params : dict
        ``N``, ``d``, ``L``, ``seed`` (seed index, copied to the result),
        ``entropy`` (the :class:`numpy.random.SeedSequence` entropy of the
        run) and any keyword of :func:`run_config` (JSON values; ``dtype`` as
        a name such as ``"float64"``).

    Returns
    -------
    dict
        The :func:`run_config` result with ``seed`` added, or
        ``{"skipped": message}`` for a configuration that cannot exist.

    References
    ----------
    docs/sweeps.md#writing-a-trial
    """
    p = dict(params)
    entropy, s = p.pop("entropy"), p.pop("seed")
    N, d, L = p.pop("N"), p.pop("d"), p.pop("L")
    try:
        r = run_config(N, d, L, seed=np.random.default_rng(np.random.SeedSequence(entropy)), **p)
    except ValueError as exc:
        if _skippable(exc):
            return {"skipped": str(exc)}
        raise
    r["seed"] = s
    return r


def run_grid(Ns, ds, Ls, *, seeds=3, seed=0, progress=None, executor=None, store=None,
             workers=None, **kw):
    """Run :func:`run_config` over the product grid ``Ns x ds x Ls``.

    Parameters
    ----------
    Ns, ds, Ls : sequence of int
        Grid values of ``N``, ``d`` and ``L``.
    seeds : int
        Independent seeds per grid point (>= 1), derived from ``seed`` by
        ``SeedSequence([seed, i_L, i_d, i_N, s])``.
    seed : int
        Root seed (>= 0).
    progress : callable, optional
        Called with one progress line per ``(L, d)`` slice (serial path);
        with an ``executor``, any truthy value turns on the engine's own
        progress lines on stderr.
    executor : {None, "inprocess", "processes", "dask"}
        None (default): a plain loop in this process.  Otherwise the grid
        runs through :func:`validation.engine.run_sweep` (trial
        :func:`grid_trial`): parallel workers, and with ``store`` a
        resumable JSONL store.  The results are the same, bit for bit.
    store : str or Path, optional
        JSONL store of :func:`~validation.engine.run_sweep` (needs an
        ``executor``).
    workers : int, optional
        Worker processes (``executor="processes"`` or ``"dask"``).
    **kw
        Passed to :func:`run_config`.

    Returns
    -------
    list of dict
        The :func:`run_config` results, with ``seed`` (the seed index)
        added.  Configurations with ``N > V`` or an orthogonal
        ``d < V + 2`` are skipped.

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json

    Examples
    --------
    >>> recs = run_grid((2, 4), (16,), (3,), seeds=2)
    >>> [(r["N"], r["seed"]) for r in recs]
    [(2, 0), (2, 1), (4, 0), (4, 1)]
    """
    seeds = check_int("seeds", seeds, low=1)
    root = np.random.SeedSequence(check_int("seed", seed, low=0))
    out = []
    Ns, ds, Ls = list(Ns), list(ds), list(Ls)
    if executor is not None:
        return _run_grid_engine(Ns, ds, Ls, seeds, root, progress, executor, store, workers, kw)
    if store is not None or workers is not None:
        raise ValueError("store and workers need an executor (e.g. executor='processes'), "
                         f"got executor=None with store={store!r}, workers={workers!r}")
    for i, L in enumerate(Ls):
        for j, d in enumerate(ds):
            if progress:
                progress(f"token_retrieval grid: L={L} d={d} ({i * len(ds) + j + 1}/{len(Ls) * len(ds)})")
            for k, N in enumerate(Ns):
                for s in range(seeds):
                    ss = np.random.SeedSequence([root.entropy, i, j, k, s])
                    try:
                        r = run_config(N, d, L, seed=np.random.default_rng(ss), **kw)
                    except ValueError as exc:
                        if _skippable(exc):
                            continue
                        raise
                    r["seed"] = s
                    out.append(r)
    return out


def _run_grid_engine(Ns, ds, Ls, seeds, root, progress, executor, store, workers, kw):
    from validation.engine import run_sweep

    kw = dict(kw)
    if "dtype" in kw:
        kw["dtype"] = np.dtype(kw["dtype"]).name
    params = [{"N": N, "d": d, "L": L, "seed": s, "entropy": [root.entropy, i, j, k, s], **kw}
              for i, L in enumerate(Ls) for j, d in enumerate(ds) for k, N in enumerate(Ns)
              for s in range(seeds)]
    recs = run_sweep(grid_trial, params, store=store, executor=executor, workers=workers,
                     progress=bool(progress), label="token_retrieval grid")
    bad = [r for r in recs if r["status"] != "ok"]
    if bad:
        e = bad[0]["error"]
        raise (ValueError if e["type"] == "ValueError" else RuntimeError)(
            f"{len(bad)} of {len(recs)} grid runs failed; first ({bad[0]['params']}): "
            f"{e['type']}: {e['message']}")
    return [r["result"] for r in recs if "skipped" not in r["result"]]


#: Grids (N, d, L, seeds) of the quick and full modes; shared with the report.
GRIDS = {
    True: dict(Ns=(4, 16, 64), ds=(32, 128), Ls=(4, 16), seeds=2),
    False: dict(Ns=(4, 8, 16, 32, 64, 128, 256, 512), ds=(32, 64, 128, 256), Ls=(4, 8, 16, 32, 64),
                seeds=8),
}


def grid_records(quick, *, seed=0, Ns=None, ds=None, Ls=None, seeds=None, progress=None, **kw):
    """Run :func:`run_grid` on the grid of :data:`GRIDS` (``quick`` or full).

    Any of ``Ns``, ``ds``, ``Ls``, ``seeds`` may be overridden; the memory
    need of the largest run is checked before any run starts.

    Parameters
    ----------
    quick : bool
        Quick grid (``GRIDS[True]``) or full grid.
    seed : int, optional
        Root seed.
    Ns, ds, Ls : tuple of int, optional
        Grid values replacing the preset's.
    seeds : int, optional
        Seeds per grid point replacing the preset's.
    progress : callable, optional
        Progress callback, as in :func:`run_grid`.
    **kw
        Passed to :func:`run_grid` (and on to :func:`run_config`).

    Returns
    -------
    records : list of dict
        The :func:`run_grid` results.
    grid : dict
        The grid used (``Ns``, ``ds``, ``Ls``, ``seeds``).

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json
    """
    g = dict(GRIDS[bool(quick)])
    for k, v in (("Ns", Ns), ("ds", ds), ("Ls", Ls), ("seeds", seeds)):
        if v is not None:
            g[k] = v
    if all(isinstance(x, int) and x > 0 for k in ("Ns", "ds", "Ls") for x in g[k]):
        # the largest run of the grid must fit before any run starts
        vr = kw.get("vocab_ratio") or 4.0
        if isinstance(vr, (int, float)) and vr > 0:
            check_memory_config(max(g["Ns"]), max(g["ds"]), max(g["Ls"]),
                                max(2, round(vr * max(g["Ns"]))), kw.get("m"))
    return run_grid(g["Ns"], g["ds"], g["Ls"], seeds=g["seeds"], seed=seed, progress=progress,
                    **kw), g


def fits(records, *, seed=0):
    """Compute the boundary fits and multiplicative test used by the CLI and report.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.
    seed : int, optional
        Seed of the bootstraps.

    Returns
    -------
    dict
        ``retrieval_boundary`` and ``recall_boundary`` (:func:`fit_boundary`),
        ``retrieval_logistic`` (:func:`logistic_fit`) and
        ``retrieval_multiplicative`` (:func:`multiplicative_test`).

    References
    ----------
    docs/token_retrieval.md#the-boundary-law
    """
    return {
        "retrieval_boundary": fit_boundary(records, "retrieval", direction="up", rng=seed),
        "recall_boundary": fit_boundary(records, "recall", direction="down", rng=seed),
        "retrieval_logistic": logistic_fit(records, "retrieval"),
        "retrieval_multiplicative": multiplicative_test(records, "retrieval"),
    }


def orthogonal_contrast(quick, *, seed=0, progress=None):
    """Contrast random with orthogonal (one-hot) embeddings at equal d and V = 4N.

    Parameters
    ----------
    quick : bool
        Quick sizes (d = 64) or full (d = 256).
    seed : int, optional
        Root seed.
    progress : callable, optional
        Progress callback, as in :func:`run_grid`.

    Returns
    -------
    dict
        ``d``, ``Ns``, ``Ls``, ``seeds`` and ``rows``: success fractions per
        embedding kind, success key, ``N`` and ``L``.

    References
    ----------
    docs/token_retrieval.md#the-orthonormal-case
    """
    d = 64 if quick else 256
    Ns = (2, 4, 8, 15) if quick else (2, 4, 8, 16, 32, 63)
    Ls = (4, 16)
    seeds = 2 if quick else 8
    out = {"d": d, "Ns": list(Ns), "Ls": list(Ls), "seeds": seeds, "rows": []}
    for kind in ("random", "orthogonal"):
        recs = run_grid(Ns, (d,), Ls, seeds=seeds, seed=seed, kind=kind, progress=progress)
        for key in ("recall", "retrieval", "test_acc", "recall_acc"):
            for (N, dd, L), (f, n) in aggregate(recs, key).items():
                out["rows"].append({"kind": kind, "key": key, "N": N, "L": L, "value": f, "n": n})
    return out


def mlp_scan(quick, *, seed=0, progress=None):
    """Locate the recall boundary ``N_max`` with a fixed random MLP of width ``m`` (L = 4).

    The boundary is fitted as ``N_max ~ d^a m^b``; runs without MLP are the
    reference (``m = 0`` in the records).

    Parameters
    ----------
    quick : bool
        Quick or full sizes.
    seed : int, optional
        Root seed.
    progress : callable, optional
        Progress callback.

    Returns
    -------
    dict
        The grid, the boundary points, the fit (:func:`fit_boundary`) and the
        recall fractions.

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json
    """
    ds, ms, L = ((64,) if quick else (64, 128, 256)), ((64, 256) if quick else (64, 256, 1024)), 4
    Ns = (2, 4, 8, 16, 32) if quick else (2, 4, 8, 16, 32, 64)
    seeds = 2 if quick else 8
    recs = []
    for m in (None,) + ms:
        if progress:
            progress(f"token_retrieval mlp scan: m={m}")
        for r in run_grid(Ns, ds, (L,), seeds=seeds, seed=seed, m=m):
            r["m"] = 0 if m is None else m
            recs.append(r)
    frac = aggregate(recs, "recall", by=("N", "d", "m"))
    pts = boundary_points(frac, by=("N", "d", "m"), direction="down")
    fit = fit_boundary([r for r in recs if r["m"] > 0], "recall", covars=("d", "m"),
                       direction="down", rng=seed)
    return {"L": L, "Ns": list(Ns), "ds": list(ds), "ms": list(ms), "seeds": seeds,
            "boundary": pts, "fit": fit,
            "recall": {str(k): v[0] for k, v in frac.items()}}


def beta_scan(quick, *, seed=0, progress=None):
    """Measure the sensitivity of the boundaries to the step size ``beta = ||W1||_F``.

    ``beta`` takes the values 3, 10 and 30 at d = 128 (d = 64 in quick mode).

    Parameters
    ----------
    quick : bool
        Quick or full sizes.
    seed : int, optional
        Root seed.
    progress : callable, optional
        Progress callback.

    Returns
    -------
    dict
        The grid and ``rows``: boundary ``N_c`` and mean informative
        attention per ``beta``, success key and ``L``.

    References
    ----------
    docs/token_retrieval.md#early-phase-and-full-training
    """
    Ns, d, Ls = ((4, 16, 64), 64, (4, 16)) if quick else ((4, 8, 16, 32, 64, 128), 128, (4, 16))
    seeds = 2 if quick else 8
    rows = []
    for beta in (3.0, 10.0, 30.0):
        if progress:
            progress(f"token_retrieval beta scan: beta={beta}")
        recs = run_grid(Ns, (d,), Ls, seeds=seeds, seed=seed, beta=beta)
        for key, direction in (("retrieval", "up"), ("recall", "down")):
            fr = aggregate(recs, key)
            bp = {b["L"]: b["N"] for b in boundary_points(fr, direction=direction)}
            for L in Ls:
                rows.append({"beta": beta, "key": key, "L": L, "N_c": bp.get(L),
                             "attn_inf": float(np.mean([r["attn_inf"] for r in recs if r["L"] == L]))})
    return {"d": d, "Ns": list(Ns), "Ls": list(Ls), "seeds": seeds, "rows": rows}


def snr_comparison(records):
    """Compare SNR predictions with measured success, per configuration and at the boundary.

    ``snr`` is the extreme-value Gaussian model of the bulk score statistics
    (:func:`~validation.token_retrieval.experiments.extreme_success_prob`),
    ``margin`` the Gaussian model of the per-sample margins.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.

    Returns
    -------
    list of dict
        One row per success key (``recall``, ``retrieval``): mean absolute
        differences, matched boundary points and the log-ratio of predicted
        to measured boundary.

    References
    ----------
    docs/token_retrieval.md#retrieval-probability
    """
    rows = []
    for key, direction in (("recall", "down"), ("retrieval", "up")):
        meas = aggregate(records, key)
        row = {"key": key, "n_configs": len(meas), "boundary": []}
        preds = {}
        for model in ("snr", "margin"):
            pred = aggregate(records, f"p_{key}_{model}")
            preds[model] = {(b["d"], b["L"]): b["N"]
                            for b in boundary_points(pred, direction=direction)}
            row[f"mean_abs_diff_{model}"] = float(np.mean([abs(meas[k][0] - pred[k][0]) for k in meas]))
        for b in boundary_points(meas, direction=direction):
            row["boundary"].append({"d": b["d"], "L": b["L"], "N_measured": b["N"],
                                    "N_snr": preds["snr"].get((b["d"], b["L"])),
                                    "N_margin": preds["margin"].get((b["d"], b["L"]))})
        lr = [np.log(p["N_snr"] / p["N_measured"]) for p in row["boundary"] if p["N_snr"]]
        row["mean_log_ratio_snr"] = float(np.mean(lr)) if lr else None
        row["sd_log_ratio_snr"] = float(np.std(lr, ddof=1)) if len(lr) > 1 else None
        row["n_matched_snr"] = len(lr)
        rows.append(row)
    return rows
