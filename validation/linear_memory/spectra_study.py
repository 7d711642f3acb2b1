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
``X_qc(1 - m/d)`` and against its Gaussian calibration.  From ``d =``
:data:`LARGE_D` on the trials use Adam lr 0.01 (:data:`validation.linear_memory.d150.LR`),
where the preset's 0.1 fails.  :func:`extrapolation` fits the KS excess (KS minus
calibration) and the edge gap (calibration edge minus trained edge) against
``1/d`` and ``1/ln p`` by weighted least squares, errors by a bootstrap over
instances.  Trials are engine trials (:func:`spectrum_trial`), stored in
:data:`STORE`; regenerate with
``nice -n 10 python -m validation.linear_memory.spectra_study`` (options
``--d``, ``--kappas``, ``--fracs``, ``--lr``, ``--extra-steps``).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from dataclasses import dataclass

import numpy as np

from hcizz.cli import ArgumentParser

from hcizz.results import Result
from validation.engine.trials import trial

__all__ = ["STORE", "LARGE_D", "spectrum_trial", "study_params", "pooled_ks", "gaussian_calibration",
           "GaussianCalibration", "summarise", "LineFit", "bootstrap_instances", "extrapolate",
           "extrapolation", "stored_results"]

STORE = Path(__file__).resolve().parent / "stored" / "spectra_study.jsonl"
KAPPAS = (1.0, 0.5, 0.25)
FRACS = (0.6, 0.8, 1.0)
#: From this ``d`` on the trials use Adam lr :data:`validation.linear_memory.d150.LR` (0.01)
#: instead of the default preset's 0.1, which fails there; below it the lr is the
#: preset's unless given explicitly (so the trial keys of ``d <= 80`` are those of the
#: preset).
LARGE_D = 100


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


def _train_on(facts, kappa, rng, steps, extra, lr=None):
    """The default preset's loop (Adam, lr 0.1 constant unless ``lr`` is given, temperature 0.05),
    but going on for ``extra`` steps after the first full recall; returns (W at first recall,
    W at the end, first-recall step, margins along the continuation)."""
    from validation.optim import Adam
    from .models import init_lowrank, lowrank_W, lowrank_grads, xent_and_grad
    from .train import get_config

    cfg = get_config("default")
    lr = cfg.lr if lr is None else float(lr)
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
        opt.step(grads, lr=lr)
    return W_first, None, t_first, trace


@trial("linear_memory.spectrum", aliases=("validation.linear_memory.spectra_study:spectrum_trial",))
def spectrum_trial(params):
    """Train one memory; return its top ``m`` singular values (of ``W / sqrt(d)``).

    Parameters
    ----------
    params : dict
        ``d``, ``kappa``, ``frac`` (load as a fraction of the finite-``p``
        capacity at this ``d``), ``seed``; optional ``steps``, ``lr`` (Adam
        learning rate; default the preset's 0.1) and ``extra_steps``.

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
    from .data import trial_rngs
    from replica.load import load_of, p_from_load
    from .data import make_facts
    from .models import lowrank_m, scores
    from .train import train

    d, kappa, seed = int(params["d"]), float(params["kappa"]), int(params["seed"])
    p = p_from_load(params["frac"] * _theory_load(d, kappa), d)
    rf, ri = trial_rngs(seed, d, p)
    facts = make_facts("op", p, d, rng=rf)
    if params.get("extra_steps"):
        # continued training after the first full recall (``extra_steps`` more steps)
        m = lowrank_m(d, kappa)
        W1, W2, t1, trace = _train_on(facts, kappa, ri, params.get("steps", 4096), int(params["extra_steps"]),
                                      lr=params.get("lr"))
        out = {"p": p, "load": float(load_of(p, d)), "success": W2 is not None,
               "steps": -1 if t1 is None else int(t1), "margin_trace": trace}
        if W2 is not None:
            sv = np.linalg.svd(W2.astype(np.float64) / math.sqrt(d), compute_uv=False)[:m]
            out.update(sv=[float(f"{v:.6g}") for v in sv], margin=trace[-1][1], margin_first=trace[0][1])
        else:
            out.update(sv=[], margin=float("nan"))
        return out
    over = {k: params[k] for k in ("steps", "lr") if k in params}
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


def study_params(ds, kappas=KAPPAS, fracs=FRACS, seeds=8, extra_steps=None, lr=None):
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
    lr : float, optional
        Adam learning rate of every trial.  Default: the preset's (no ``lr``
        key, so the keys of earlier trials are unchanged) for ``d <`` :data:`LARGE_D`,
        :data:`validation.linear_memory.d150.LR` from :data:`LARGE_D` on.

    Returns
    -------
    list of dict
        :func:`spectrum_trial` parameters.

    Raises
    ------
    ValueError
        ``d < 4``, ``kappa`` outside (0, 1], ``frac`` outside (0, 1.5],
        ``seeds < 1``, ``extra_steps < 0`` or ``lr <= 0`` (checked before any
        trial is run or stored).

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration

    Examples
    --------
    >>> [sorted(q) for q in study_params([20, 150], kappas=[0.5], fracs=[1.0], seeds=1)]
    [['d', 'frac', 'kappa', 'kind', 'seed'], ['d', 'frac', 'kappa', 'kind', 'lr', 'seed']]
    """
    from hcizz.checks import check_int, check_real

    ds = [check_int("d", d, low=4) for d in ds]
    kappas = [check_real("kappa", k, low=0.0, high=1.0, low_open=True, allow_array=False) for k in kappas]
    fracs = [check_real("frac", f, low=0.0, high=1.5, low_open=True, allow_array=False) for f in fracs]
    seeds = check_int("seeds", seeds, low=1)
    if extra_steps is not None:
        extra_steps = check_int("extra_steps", extra_steps, low=0)
    if lr is not None:
        lr = check_real("lr", lr, low=0.0, low_open=True, allow_array=False)
    out = [{"kind": "spectra_study", "d": int(d), "kappa": float(k), "frac": float(f), "seed": int(s)}
           for d in ds for k in kappas for f in fracs for s in range(seeds)]
    from .d150 import LR

    for p in out:
        if extra_steps:
            p["extra_steps"] = int(extra_steps)
        if lr is not None:
            p["lr"] = float(lr)
        elif p["d"] >= LARGE_D:
            p["lr"] = float(LR)
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


#: Seeded calibrations already computed in this process (the study asks for the same
#: ``(d, m, instances)`` at several loads and learning rates).
_CALIBRATION_CACHE = {}


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
        pooling alone produce for a matrix that does follow the law.  Calls
        with an integer seed are cached for the life of the process (the
        result is a pure function of the arguments).

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    key = (int(d), int(m), int(instances), int(reps), rng) if isinstance(rng, (int, np.integer)) else None
    if key is not None and key in _CALIBRATION_CACHE:
        return _CALIBRATION_CACHE[key]   # a seeded calibration is a pure function of its arguments
    rng = np.random.default_rng(rng)
    ks, edge = [], []
    for _ in range(reps):
        inst = [np.linalg.svd(rng.standard_normal((d, d)) / math.sqrt(d), compute_uv=False)[:m]
                for _ in range(instances)]
        k, e, _ = pooled_ks(inst, m / d)
        ks.append(k)
        edge.append(e)
    out = GaussianCalibration(ks_mean=float(np.mean(ks)), ks_sd=float(np.std(ks, ddof=1)),
                              edge_mean=float(np.mean(edge)), edge_sd=float(np.std(edge, ddof=1)),
                              reps=reps)
    if key is not None:
        _CALIBRATION_CACHE[key] = out
    return out


def summarise(results):
    """Summarise the spectra study, one row per ``(kappa, d, frac, extra_steps)``.

    Parameters
    ----------
    results : list of dict
        :func:`spectrum_trial` results, each with its ``d``, ``kappa`` and ``frac``
        (and ``extra_steps``, ``lr`` where set).

    Returns
    -------
    list of dict
        Table rows (plain dicts), one per ``(kappa, d, frac, extra_steps, lr)``
        (``lr`` 0.1 where the preset's): pooled KS distance and edge against the
        (truncated) quarter circle, their Gaussian calibration
        (:func:`gaussian_calibration`), the predicted edge, margins.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    from hcizz.quarter_circle import qc_quantile
    from .models import lowrank_m
    from .train import PRESETS

    groups = {}
    for r in results:
        lr = r.get("lr")
        groups.setdefault((r["kappa"], r["d"], r["frac"], r.get("extra_steps", 0),
                           PRESETS["default"].lr if lr is None else float(lr)), []).append(r)
    rows = []
    for (k, d, f, ex, lr), rr in sorted(groups.items(),
                                        key=lambda t: (-t[0][0], t[0][1], t[0][2], t[0][3], -t[0][4])):
        ok = [r for r in rr if r["success"]]
        m = lowrank_m(d, k)
        row = {"kappa": k, "d": d, "load_fraction": f, "extra_steps": ex, "lr": lr, "m": m, "instances": len(ok),
               "trials": len(rr),
               "margin_first_mean": (float(np.mean([r["margin_first"] for r in ok]))
                                     if ok and "margin_first" in ok[0] else None),
               "margin_trace_mean": (np.mean([r["margin_trace"] for r in ok], axis=0).tolist()
                                     if ok and "margin_trace" in ok[0] else None),
               "load": float(np.mean([r["load"] for r in rr])), "p": float(np.mean([r["p"] for r in rr])),
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

# ---------------------------------------------------------------------------
# Extrapolation in 1/d or 1/ln p


@dataclass(frozen=True)
class LineFit(Result):
    """Weighted straight-line fit ``y = intercept + slope * x`` (:func:`extrapolate`).

    Parameters
    ----------
    intercept : float
        Weighted least-squares estimate of the value at ``x = 0`` (weights
        ``1 / y_sd**2``).
    intercept_se : float
        Its standard error: spread of the fit over the bootstrap replicates of
        ``y``, plus the propagated offset uncertainty.
    intercept_ci : tuple of float
        Normal 95% interval ``intercept ± 1.96 intercept_se``.
    slope : float
        Weighted least-squares slope.
    slope_se : float
        Its standard error (as ``intercept_se``).
    chi2 : float
        Weighted residual sum of squares ``sum((y - fit)**2 / y_sd**2)``.
    dof : int
        Degrees of freedom ``len(x) - 2``.
    x, y, y_sd : tuple of float
        The fitted points and their standard errors.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """

    intercept: float
    intercept_se: float
    intercept_ci: tuple
    slope: float
    slope_se: float
    chi2: float
    dof: int
    x: tuple
    y: tuple
    y_sd: tuple


def bootstrap_instances(groups, statistic, *, boot=200, rng=0):
    """Bootstrap a statistic of pooled instances, resampling instances within each group.

    Parameters
    ----------
    groups : sequence of sequence
        One list of instances per point (e.g. per ``d``); an instance is any
        object ``statistic`` accepts in a list (e.g. the singular values of one
        trained memory).
    statistic : callable
        ``statistic(list_of_instances) -> float or 1-d array`` (e.g. the pooled
        KS distance and edge).
    boot : int
        Bootstrap replicates (>= 2).
    rng : int or Generator
        Randomness of the resampling.

    Returns
    -------
    values : ndarray, shape (n_groups, q)
        The statistic of each group's own instances (``q`` = its length, 1 for
        a scalar).
    replicates : ndarray, shape (boot, n_groups, q)
        The statistic of each group's instances resampled with replacement
        (same count), groups independent.

    Notes
    -----
    The nonparametric bootstrap over instances (memories trained on
    independent fact sets) treats the instances of a group as i.i.d.; its
    spread estimates the sampling error of the statistic, its mean may be
    biased (a pooled KS distance of resampled, partly repeated instances is
    slightly larger), so only the spread is used by :func:`extrapolate`.

    References
    ----------
    Efron & Tibshirani, An Introduction to the Bootstrap (1993);
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration

    Examples
    --------
    >>> v, r = bootstrap_instances([[1.0, 2.0, 3.0], [4.0, 4.0]], np.mean, boot=50)
    >>> v[:, 0].tolist(), r.shape
    ([2.0, 4.0], (50, 2, 1))
    """
    if int(boot) < 2:
        raise ValueError(f"boot must be >= 2, got {boot!r}")
    if any(len(g) < 1 for g in groups):
        raise ValueError("groups must each hold at least one instance")
    rng = np.random.default_rng(rng)
    values = np.array([np.atleast_1d(np.asarray(statistic(list(g)), float)) for g in groups])
    reps = np.empty((int(boot),) + values.shape)
    for b in range(int(boot)):
        for i, g in enumerate(groups):
            pick = rng.integers(0, len(g), size=len(g))
            reps[b, i] = np.atleast_1d(np.asarray(statistic([g[j] for j in pick]), float))
    return values, reps


def _wls_coefficients(x, w):
    """Rows c_a, c_b with intercept = c_a . y and slope = c_b . y (weighted least squares)."""
    X = np.column_stack([np.ones_like(x), x])
    A = X.T * w
    return np.linalg.solve(A @ X, A)


def extrapolate(x, y, replicates, *, offset_se=None):
    """Fit ``y = a + b x`` by weighted least squares; errors from bootstrap replicates.

    Parameters
    ----------
    x : array_like, shape (n,)
        Abscissae (e.g. ``1/d`` or ``1/ln p``), at least 3 distinct values.
    y : array_like, shape (n,)
        Measured values (e.g. KS minus its calibration).
    replicates : array_like, shape (boot, n)
        Bootstrap replicates of ``y`` (:func:`bootstrap_instances`), groups
        independent.
    offset_se : array_like, shape (n,), optional
        Standard error of a constant subtracted from each ``y`` (e.g. the Monte
        Carlo error of the calibration mean), added in quadrature.

    Returns
    -------
    LineFit
        Intercept (the value at ``x = 0``, i.e. ``d = inf``), slope, their
        standard errors, a 95% interval of the intercept and the fit's chi^2.

    Notes
    -----
    With ``s_i^2 = var_boot(y_i) + offset_se_i^2`` and weights ``w_i = 1/s_i^2``
    the estimates are linear in ``y``: ``a = c_a . y``, ``b = c_b . y`` with
    ``(c_a, c_b) = (X^T W X)^{-1} X^T W``.  Their variance is the variance of
    ``c . y^*`` over the replicates ``y^*`` plus ``sum_i c_i^2 offset_se_i^2``
    (no normality assumed for ``y``).  ``chi2 / dof`` far above 1 says the points are
    not on a line in ``x`` within their errors: then the intercept is a
    model-dependent extrapolation and its standard error understates the
    uncertainty.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration

    Examples
    --------
    >>> x = np.array([0.05, 0.025, 0.0125])
    >>> reps = 0.3 + 2 * x + np.random.default_rng(0).normal(0, 0.01, (400, 3))
    >>> fit = extrapolate(x, 0.3 + 2 * x, reps)
    >>> round(fit.intercept, 12), round(fit.slope, 12), fit.dof
    (0.3, 2.0, 1)
    """
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    reps = np.asarray(replicates, float)
    if x.ndim != 1 or np.unique(x).size < 3:
        raise ValueError(f"x must be 1-d with at least 3 distinct values, got {x.tolist()!r}")
    if y.shape != x.shape or reps.ndim != 2 or reps.shape[1] != x.size or reps.shape[0] < 2:
        raise ValueError(f"y must have shape {x.shape} and replicates (boot >= 2, {x.size}), "
                         f"got {y.shape} and {reps.shape}")
    off = np.zeros_like(x) if offset_se is None else np.asarray(offset_se, float)
    if off.shape != x.shape or np.any(off < 0):
        raise ValueError(f"offset_se must be {x.size} values >= 0, got {off.tolist()!r}")
    var = reps.var(axis=0, ddof=1) + off ** 2
    if np.any(var <= 0) or not np.all(np.isfinite(var)):
        raise ValueError(f"replicates must have a positive, finite spread at every x, got variances {var.tolist()!r}")
    w = 1.0 / var
    C = _wls_coefficients(x, w)
    a, b = C @ y
    cov = np.cov(reps @ C.T, rowvar=False) + (C * off ** 2) @ C.T
    a_se, b_se = math.sqrt(cov[0, 0]), math.sqrt(cov[1, 1])
    chi2 = float(np.sum(w * (y - a - b * x) ** 2))
    return LineFit(intercept=float(a), intercept_se=a_se, intercept_ci=(float(a - 1.96 * a_se), float(a + 1.96 * a_se)),
                   slope=float(b), slope_se=b_se, chi2=chi2, dof=int(x.size - 2),
                   x=tuple(map(float, x)), y=tuple(map(float, y)), y_sd=tuple(map(float, np.sqrt(var))))


def _ks_edge_instance(sv, k_eff):
    """One instance prepared for fast pooled KS: (law CDF of its scaled values, its smallest scaled value)."""
    law = _law(k_eff)
    sc = _scaled(sv, law)
    return np.asarray(law.cdf(sc), float), float(sc.min())


def _ks_edge_statistic(instances):
    """(pooled KS distance, mean edge) of prepared instances: equals :func:`pooled_ks` (the KS
    distance depends on the values only through their CDF values, the law being continuous)."""
    u = np.sort(np.concatenate([i[0] for i in instances]))
    n = u.size
    k = np.arange(1, n + 1)
    ks = max(float(np.max(k / n - u)), float(np.max(u - (k - 1) / n)))
    return ks, float(np.mean([i[1] for i in instances]))


def _main_protocol(r):
    """The study's main protocol: stop at first recall, the preset's lr below LARGE_D and
    d150.LR from it on (the defaults of :func:`study_params`)."""
    from .d150 import LR

    lr = r.get("lr")
    return (not r.get("extra_steps")) and (lr is None if r["d"] < LARGE_D else lr == LR)


def extrapolation(results, rows=None, *, boot=200, rng=0, min_sizes=3):
    """Extrapolate the pooled KS excess and the edge gap to ``d = inf``, in ``1/d`` and ``1/ln p``.

    Parameters
    ----------
    results : list of dict
        :func:`spectrum_trial` results with ``d``, ``kappa``, ``frac`` (and
        ``extra_steps``, ``lr``) as returned by ``run``; only the main protocol
        (stop at first recall; lr of :func:`study_params`'s default) is used.
    rows : list of dict, optional
        :func:`summarise` of ``results`` (computed if not given): the
        calibrations.
    boot : int
        Bootstrap replicates over instances.
    rng : int
        Seed of the bootstrap.
    min_sizes : int
        Fit a ``(kappa, frac)`` only with this many sizes having >= 2 recalled
        instances (>= 3).

    Returns
    -------
    list of dict
        One entry per ``(kappa, load_fraction, quantity, variable, sizes)``:
        ``quantity`` ``"ks_excess"`` (pooled KS minus its Gaussian calibration
        mean) or ``"edge_gap"`` (calibration edge minus trained edge; low rank
        only), ``variable`` ``"1/d"`` or ``"1/ln p"``, ``sizes`` the ``d`` used
        (all, and without the smallest), and the :class:`LineFit` fields; a
        perfect match has intercept 0 for both quantities.

    Notes
    -----
    Both quantities are differences to what Gaussian matrices (whose limit is
    exactly the law) show at the same ``d`` and number of pooled instances, so
    the finite-``d`` bias of the statistic itself is removed; their limits at
    ``d = inf`` are the KS distance and the edge distance of the limiting
    trained spectrum to the law.  Errors: :func:`bootstrap_instances` over the
    recalled instances of each ``(kappa, d, frac)`` (one seed for all), plus the
    calibration's Monte Carlo error ``sd / sqrt(reps)``.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    if int(min_sizes) < 3:
        raise ValueError(f"min_sizes must be >= 3, got {min_sizes!r}")
    main = [r for r in results if _main_protocol(r)]
    rows = summarise(main) if rows is None else rows
    from .d150 import LR
    from .models import lowrank_m
    from .train import PRESETS

    cal = {(r["kappa"], r["d"], r["load_fraction"]): r for r in rows
           if not r["extra_steps"] and r["lr"] == (PRESETS["default"].lr if r["d"] < LARGE_D else LR)}

    out = []
    for k, f in sorted({(r["kappa"], r["frac"]) for r in main}, key=lambda t: (-t[0], t[1])):
        ds = sorted({r["d"] for r in main if r["kappa"] == k and r["frac"] == f})
        groups, use = [], []
        for d in ds:
            ok = [r for r in main if r["kappa"] == k and r["frac"] == f and r["d"] == d and r["success"]]
            if len(ok) >= 2 and (k, d, f) in cal:
                m = lowrank_m(d, k)
                groups.append([_ks_edge_instance(r["sv"], m / d) for r in ok])
                use.append(d)
        if len(use) < int(min_sizes):
            continue
        vals, reps = bootstrap_instances(groups, _ks_edge_statistic, boot=boot, rng=rng)
        cr = [cal[(k, d, f)] for d in use]
        ks_cal = np.array([c["ks_calibration"] for c in cr])
        ks_cal_se = np.array([c["ks_calibration_sd"] for c in cr]) / math.sqrt(40)
        quantities = {"ks_excess": (vals[:, 0] - ks_cal, reps[:, :, 0] - ks_cal, ks_cal_se)}
        if k < 1:
            e_cal = np.array([c["edge_calibration"] for c in cr])
            quantities["edge_gap"] = (e_cal - vals[:, 1], e_cal - reps[:, :, 1], np.zeros(len(use)))
        xs = {"1/d": 1.0 / np.array(use, float),
              "1/ln p": 1.0 / np.log([c["p"] for c in cr])}
        subsets = [tuple(range(len(use)))] + ([tuple(range(1, len(use)))] if len(use) > int(min_sizes) else [])
        for qn, (y, yr, se) in quantities.items():
            for vn, x in xs.items():
                for sub in subsets:
                    i = list(sub)
                    fit = extrapolate(x[i], y[i], yr[:, i], offset_se=se[i])
                    out.append({"kappa": k, "load_fraction": f, "quantity": qn, "variable": vn,
                                "sizes": [use[j] for j in i], "boot": int(boot), **fit.to_dict()})
    return out


def stored_results(store=STORE, *, min_d=0):
    """Read the spectra-study trials of a store without running anything.

    Parameters
    ----------
    store : path
        Engine JSONL store (default: the committed :data:`STORE`); a missing
        file gives ``[]``.
    min_d : int
        Keep the trials with ``d >= min_d`` only.

    Returns
    -------
    list of dict
        The completed trials' results, each with ``d``, ``kappa``, ``frac``,
        ``seed``, ``extra_steps`` (0: stopped at first recall) and ``lr`` (None:
        the preset's) added, as returned by the study's runner; input of
        :func:`summarise` and :func:`extrapolation`.

    References
    ----------
    docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration
    """
    from validation.engine import read_store

    if not Path(store).exists():
        return []
    out = []
    for rec in read_store(store, warn=False).ok.values():
        p = rec["params"]
        if p.get("kind") != "spectra_study" or p["d"] < min_d:
            continue
        out.append({**rec["result"], "d": p["d"], "kappa": p["kappa"], "frac": p["frac"], "seed": p["seed"],
                    "extra_steps": p.get("extra_steps", 0), "lr": p.get("lr")})
    return sorted(out, key=lambda r: (r["d"], -r["kappa"], r["frac"], r["extra_steps"],
                                      -1.0 if r["lr"] is None else r["lr"], r["seed"]))


def run(ds, *, seeds=8, store=STORE, workers=2, progress=True, fracs=FRACS, extra_steps=None,
        executor="processes", kappas=KAPPAS, lr=None):
    from validation.engine import run_sweep

    params = study_params(ds, kappas=kappas, fracs=fracs, seeds=seeds, extra_steps=extra_steps, lr=lr)
    # the trial function by its importable name (also when this module runs as ``__main__``)
    from validation.linear_memory.spectra_study import spectrum_trial as trial

    recs = run_sweep(trial, params, store=store, workers=workers, progress=progress,
                     executor=executor, label="spectra study")
    res = [{**r["result"], "d": p["d"], "kappa": p["kappa"], "frac": p["frac"],
            "extra_steps": p.get("extra_steps", 0), "lr": p.get("lr")}
           for p, r in zip(params, recs) if r["status"] == "ok"]
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
    ap.add_argument("--kappas", default=",".join(map(str, KAPPAS)), help="rank ratios (1: full rank)")
    ap.add_argument("--lr", type=float, default=None,
                    help=f"Adam learning rate (default: the preset's 0.1 below d = {LARGE_D}, 0.01 from it on)")
    a = ap.parse_args(argv)
    res, reused, n = run([int(x) for x in a.d.split(",")], seeds=a.seeds, store=a.store, workers=a.workers,
                         fracs=[float(x) for x in a.fracs.split(",")], extra_steps=a.extra_steps,
                         kappas=[float(x) for x in a.kappas.split(",")], lr=a.lr)
    for r in summarise(res):
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
    print(f"{n} trials ({reused} reused)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from hcizz.cli import run_cli

    sys.exit(run_cli(main, prog="python -m validation.linear_memory.spectra_study"))
