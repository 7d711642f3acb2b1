"""The success boundary of a grid of runs: success fractions, boundary points, the
power-law fit of the boundary (least squares, bootstrap over seeds), the logistic
regression of per-run success and the likelihood-ratio test of the product form
(docs/token_retrieval.md#the-boundary-law).

The logistic fits use :mod:`validation.logistic`, the package's one home of the
logistic likelihood.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from scipy import stats

from hcizz.checks import check_int, check_real, check_rng
from validation.logistic import fit_logistic

__all__ = ["aggregate", "boundary_points", "fit_boundary", "logistic_fit", "multiplicative_test"]


def aggregate(records, key, by=("N", "d", "L")):
    """Average the success flag ``key`` per configuration.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.
    key : str
        Success flag (or fraction) to average, e.g. ``"retrieval"``.
    by : tuple of str
        Fields that identify a configuration.

    Returns
    -------
    dict
        ``{config tuple: (fraction, count)}``, sorted by configuration.

    References
    ----------
    docs/token_retrieval.md#measured

    Examples
    --------
    >>> aggregate([{"N": 2, "d": 8, "L": 3, "ok": True},
    ...            {"N": 2, "d": 8, "L": 3, "ok": False}], "ok")
    {(2, 8, 3): (0.5, 2)}
    """
    for i, r in enumerate(records):
        missing = [b for b in (key,) + tuple(by) if b not in r]
        if missing:
            raise ValueError(f"records[{i}] has no field(s) {missing} (key={key!r}, by={tuple(by)})")
    acc = defaultdict(list)
    for r in records:
        acc[tuple(r[b] for b in by)].append(float(r[key]))
    return {k: (float(np.mean(v)), len(v)) for k, v in sorted(acc.items())}


def boundary_points(frac, *, along="N", by=("N", "d", "L"), direction="up", level=0.5):
    """Locate where the success fraction crosses ``level`` along one variable.

    Parameters
    ----------
    frac : dict
        Output of :func:`aggregate` (values ``(fraction, count)``).
    along : str
        Variable scanned (one of ``by``).
    by : tuple of str
        Fields of the configuration tuples (the keys of ``frac``).
    direction : {"up", "down"}
        ``"up"``: first crossing from below (success grows with the
        variable); ``"down"``: last crossing from above.
    level : float
        Crossing level.

    Returns
    -------
    list of dict
        One per slice with a crossing: the other variables and ``along``
        (geometric interpolation between the bracketing grid points).

    Notes
    -----
    Between grid points ``x_t < x_{t+1}`` with fractions
    ``f_t < level <= f_{t+1}``: ``log x_c = log x_t + w (log x_{t+1} -
    log x_t)``, ``w = (level - f_t) / (f_{t+1} - f_t)``.

    References
    ----------
    docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    >>> p, = boundary_points({(4, 10, 2): (0.0, 3), (16, 10, 2): (1.0, 3)})
    >>> p["d"], p["L"], round(p["N"], 9)              # geometric midpoint of 4 and 16
    (10, 2, 8.0)
    """
    by = tuple(by)
    if along not in by:
        raise ValueError(f"along must be one of {by}, got {along!r}")
    if direction not in ("up", "down"):
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    level = check_real("level", level, low=0, high=1, low_open=True, high_open=True,
                       allow_array=False)
    ia = by.index(along)
    slices = defaultdict(list)
    for k, (f, _) in frac.items():
        rest = tuple(x for i, x in enumerate(k) if i != ia)
        slices[rest].append((k[ia], f))
    out = []
    others = [b for b in by if b != along]
    for rest, pts in sorted(slices.items()):
        pts.sort()
        xs = np.log([p[0] for p in pts])
        fs = np.array([p[1] for p in pts])
        if direction == "down":
            xs, fs = xs[::-1], fs[::-1]
        x = None
        for t in range(len(fs) - 1):
            if fs[t] < level <= fs[t + 1]:
                w = (level - fs[t]) / (fs[t + 1] - fs[t])
                x = xs[t] + w * (xs[t + 1] - xs[t])
                break
        if x is not None:
            rec = dict(zip(others, rest))
            rec[along] = float(np.exp(x))
            out.append(rec)
    return out


def _ls(y, Xd):
    coef, *_ = np.linalg.lstsq(Xd, y, rcond=None)
    res = y - Xd @ coef
    dof = max(1, len(y) - Xd.shape[1])
    s2 = float(res @ res) / dof
    cov = s2 * np.linalg.pinv(Xd.T @ Xd)
    return coef, np.sqrt(np.diag(cov)), dof


def fit_boundary(records, key, *, along="N", covars=("d", "L"), direction="up", n_boot=200,
                 rng=None, level=0.5):
    """Fit the power law ``along_c = C * prod_v v^{alpha_v}`` to the success boundary.

    Boundary points from :func:`boundary_points`; least squares of
    ``log along_c`` on ``log covars``; uncertainties (a) from the least-squares
    covariance and (b) from a bootstrap resampling seeds (with replacement)
    within each configuration.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid` (or any dicts with the fields used).
    key : str
        Success flag, e.g. ``"retrieval"`` or ``"recall"``.
    along : str
        Variable along which the boundary is located.
    covars : tuple of str
        Regressors (their logs) of ``log along_c``.
    direction : {"up", "down"}
        See :func:`boundary_points`.
    n_boot : int
        Bootstrap resamples (>= 0; errors from the bootstrap need >= 20
        successful resamples).
    rng : None, int, SeedSequence or Generator
        Randomness of the bootstrap.
    level : float
        See :func:`boundary_points`.

    Returns
    -------
    dict
        ``points``, ``exponents`` ``{v: {"value", "stderr", "ci95_boot",
        "stderr_boot"}}``, ``log_prefactor``, ``n_points``, ``n_boot_ok``;
        ``exponents`` is empty if fewer than ``len(covars) + 2`` points exist.
        With two covariates and >= 5 points also ``interaction``: the
        coefficient ``g`` of ``log v1 log v2`` added to the fit (a test of the
        product form: ``g = 0`` iff the exponents do not drift), with its
        least-squares error, t-test ``p_value`` and bootstrap error.

    Notes
    -----
    ``log along_c = c_0 + sum_v alpha_v log v + noise``; least-squares
    standard errors ``sqrt(diag(s^2 (X^T X)^{-1}))`` with
    ``s^2 = RSS / (n - p - 1)`` and Student-t 95% intervals.  The product form
    is *assumed* by this fit; ``interaction`` and
    :func:`multiplicative_test` test it.

    References
    ----------
    arXiv:2603.15923 (the scaling of the boundary); docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    Success iff ``N > 2 d`` (exactly): the fitted exponent of ``d`` is 1.

    >>> recs = [{"N": N, "d": d, "L": L, "ok": N > 2 * d} for N in (2, 4, 8, 16, 32, 64)
    ...         for d in (2, 4, 8) for L in (2, 4)]
    >>> f = fit_boundary(recs, "ok", n_boot=0)
    >>> round(f["exponents"]["d"]["value"], 6), abs(round(f["exponents"]["L"]["value"], 6))
    (1.0, 0.0)
    """
    n_boot = check_int("n_boot", n_boot, low=0)
    by = (along,) + tuple(covars)
    frac = aggregate(records, key, by=by)
    pts = boundary_points(frac, along=along, by=by, direction=direction, level=level)
    res = {"points": pts, "n_points": len(pts), "exponents": {}, "along": along,
           "covars": list(covars), "direction": direction, "key": key}
    p = len(covars)
    if len(pts) < p + 2:
        return res

    def design(pp):
        return np.column_stack([np.ones(len(pp))] + [np.log([q[c] for q in pp]) for c in covars])

    def design_int(pp):
        D = design(pp)
        return np.column_stack([D, D[:, 1] * D[:, 2]]) if p == 2 else D

    y = np.log([q[along] for q in pts])
    coef, se, dof = _ls(y, design(pts))
    do_int = p == 2 and len(pts) >= 5
    if do_int:
        ci, sei, dofi = _ls(y, design_int(pts))
    # Bootstrap over seeds, hand-written rather than scipy.stats.bootstrap: a
    # resample whose fractions cross 1/2 at too few grid points has no fit and
    # is dropped (counted in n_boot_ok), which scipy's statistic cannot express
    # (it would turn the interval into NaN); and keeping our draws keeps the
    # stored and reported intervals reproducible for the same seed.
    rng = check_rng(rng)
    groups = defaultdict(list)
    for r in records:
        groups[tuple(r[b] for b in by)].append(float(r[key]))
    keys = list(groups)
    boots = []
    for _ in range(n_boot):
        fb = {}
        for k in keys:
            v = np.asarray(groups[k])
            fb[k] = (float(v[rng.integers(0, len(v), len(v))].mean()), len(v))
        pb = boundary_points(fb, along=along, by=by, direction=direction, level=level)
        if len(pb) >= p + 2:
            yb = np.log([q[along] for q in pb])
            cb, _, _ = _ls(yb, design(pb))
            if do_int:
                cb = np.append(cb, _ls(yb, design_int(pb))[0][-1] if len(pb) >= 5 else np.nan)
            boots.append(cb)
    boots = np.array(boots)
    tq = stats.t.ppf(0.975, dof)
    for i, c in enumerate(covars):
        e = {"value": float(coef[i + 1]), "stderr": float(se[i + 1]),
             "ci95_ls": [float(coef[i + 1] - tq * se[i + 1]), float(coef[i + 1] + tq * se[i + 1])]}
        if len(boots) >= 20:
            e["stderr_boot"] = float(boots[:, i + 1].std(ddof=1))
            e["ci95_boot"] = [float(np.percentile(boots[:, i + 1], 2.5)),
                              float(np.percentile(boots[:, i + 1], 97.5))]
        res["exponents"][c] = e
    if do_int:
        g = {"value": float(ci[-1]), "stderr": float(sei[-1]),
             "p_value": float(2 * stats.t.sf(abs(ci[-1] / sei[-1]), dofi)) if sei[-1] > 0 else None}
        gb = boots[:, -1][np.isfinite(boots[:, -1])] if len(boots) else np.array([])
        if len(gb) >= 20:
            g["stderr_boot"] = float(gb.std(ddof=1))
            g["ci95_boot"] = [float(np.percentile(gb, 2.5)), float(np.percentile(gb, 97.5))]
        res["interaction"] = g
    res["log_prefactor"] = float(coef[0])
    res["n_boot_ok"] = len(boots)
    return res


def logistic_fit(records, key, *, variables=("N", "d", "L"), ridge=1e-3):
    """Fit a logistic regression of per-run success on the logs of ``variables``.

    ``P(success) = sigmoid(b_0 + sum_v b_v log v)``; the boundary
    ``P = 1/2`` is ``N_c = exp(-b_0/b_N) prod_{v != N} v^{-b_v/b_N}``.
    Exponents ``-b_v / b_N`` with delta-method standard errors from the
    Fisher information (a ridge ``ridge * ||b||^2 / 2`` on the slopes keeps
    the fit finite under complete separation).  The fit is
    :func:`validation.logistic.fit_logistic` (IRLS).

    Parameters
    ----------
    records : list of dict
        Per-run results with fields ``key`` and ``variables``.
    key : str
        Success flag.
    variables : tuple of str
        Regressors (their logs); the first is the scanned one (``N``).
    ridge : float
        Penalty on the slopes (>= 0).

    Returns
    -------
    dict
        ``coef``, ``stderr``, ``exponents`` ``{v: {"value", "stderr"}}``,
        ``loglik``, ``n``.

    References
    ----------
    docs/token_retrieval.md#the-boundary-law
    """
    ridge = check_real("ridge", ridge, low=0, allow_array=False)
    if len(records) < len(variables) + 1:
        raise ValueError(f"records must hold at least {len(variables) + 1} runs, got {len(records)}")
    y = np.array([float(r[key]) for r in records])
    Xd = np.column_stack([np.ones(len(y))] + [np.log([float(r[v]) for r in records])
                                               for v in variables])
    f = fit_logistic(Xd, y, ridge=ridge)
    b, cov, ll, se = f.coef, f.cov, f.loglik, f.stderr
    out = {"coef": dict(zip(("const",) + tuple(variables), map(float, b))),
           "stderr": dict(zip(("const",) + tuple(variables), map(float, se))),
           "loglik": ll, "n": len(y), "exponents": {}, "key": key}
    i0 = 1  # first variable is the scanned one
    for i, v in enumerate(variables[1:], start=2):
        val = -b[i] / b[i0]
        gr = np.zeros(len(b))
        gr[i] = -1.0 / b[i0]
        gr[i0] = b[i] / b[i0] ** 2
        out["exponents"][v] = {"value": float(val), "stderr": float(np.sqrt(gr @ cov @ gr))}
    return out


def multiplicative_test(records, key, *, variables=("N", "d", "L"), ridge=1e-3):
    """Test by likelihood ratio whether the boundary depends on one product ``prod v^{c_v}``.

    The null is the logistic model linear in the ``log v``; the alternative
    adds all pairwise products ``log v log w``.

    Parameters
    ----------
    records : list of dict
        Per-run results, as in :func:`logistic_fit`.
    key : str
        Success flag.
    variables : tuple of str
        Regressors (their logs).
    ridge : float
        Penalty on the slopes (>= 0).

    Returns
    -------
    dict
        ``lr`` (twice the log-likelihood gain), ``df``, ``p_value``
        (chi-square), ``loglik_null``, ``loglik_alt``.

    Notes
    -----
    ``lr = 2 (l_alt - l_null)`` is compared with a chi-square of
    ``df = k (k - 1) / 2`` degrees of freedom (``k`` variables; Wilks).  The
    log-likelihoods are evaluated at the ridge-penalised estimates, so the
    chi-square reference is approximate when ``ridge > 0``.

    References
    ----------
    docs/token_retrieval.md#the-boundary-law
    """
    ridge = check_real("ridge", ridge, low=0, allow_array=False)
    if len(records) < len(variables) * (len(variables) + 1) // 2 + 2:
        raise ValueError(f"records must hold more runs than parameters of the alternative model, "
                         f"got {len(records)}")
    y = np.array([float(r[key]) for r in records])
    logs = [np.log([float(r[v]) for r in records]) for v in variables]
    X0 = np.column_stack([np.ones(len(y))] + logs)
    inter = [logs[i] * logs[j] for i in range(len(logs)) for j in range(i + 1, len(logs))]
    X1 = np.column_stack([X0] + inter)
    l0 = fit_logistic(X0, y, ridge=ridge).loglik
    l1 = fit_logistic(X1, y, ridge=ridge).loglik
    lr = max(0.0, 2 * (l1 - l0))
    df = len(inter)
    return {"lr": lr, "df": df, "p_value": float(stats.chi2.sf(lr, df)),
            "loglik_null": l0, "loglik_alt": l1, "key": key}
