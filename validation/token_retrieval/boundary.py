"""The success boundary of a grid of runs: success fractions, boundary points, the
power-law fit of the boundary (least squares, bootstrap over seeds), the logistic
regression of per-run success and the likelihood-ratio test of the product form
(docs/token_retrieval.md#the-boundary-law).

The logistic fits use :mod:`validation.logistic`, the package's one home of the
logistic likelihood.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from scipy import stats

from hcizz.checks import check_int, check_real, check_rng
from hcizz.results import Result, optional
from validation.logistic import fit_logistic
from ._docparams import fill_doc

__all__ = ["aggregate", "boundary_points", "fit_power_law", "fit_boundary", "logistic_fit",
           "multiplicative_test", "PowerLaw", "Exponent", "ProductTerm", "BoundaryFit",
           "LogisticBoundary", "ProductFormTest"]


def _with_boot(out, r):
    """``out`` with the bootstrap ``stderr_boot`` and ``"ci95_boot"`` (``[low, high]``, the
    ``report.json`` key) of the record ``r`` added where it has them."""
    if r.stderr_boot is not None:
        out["stderr_boot"] = r.stderr_boot
        out["ci95_boot"] = [r.boot_ci_low, r.boot_ci_high]
    return out


@fill_doc
@dataclass(frozen=True)
class Exponent(Result):
    r"""One fitted exponent of a boundary law, with its standard errors and 95 % intervals.

    Parameters
    ----------
    value : float
        The exponent.
    stderr : float
        Its standard error (least squares, or the delta method of a logistic fit).
    ci_low, ci_high : float, optional
        Its Student-t 95 % least-squares interval (absent for a logistic fit).
    stderr_boot : float, optional
        Bootstrap standard error (when at least 20 resamples had a fit).
    boot_ci_low, boot_ci_high : float, optional
        The 2.5 and 97.5 percentiles of the bootstrap.

    See Also
    --------
    validation.token_retrieval.boundary.PowerLaw
        Least-squares power law :math:`\mathrm{along} = e^{\mathrm{log\_prefactor}} \prod_v v^{\alpha_v}` (``fit_power_law``).
    validation.token_retrieval.boundary.BoundaryFit
        Power-law fit of a simulated success boundary (``fit_boundary``).

    Notes
    -----
    ``to_dict()`` writes the intervals as ``"ci95_ls"`` and ``"ci95_boot"``
    (``[low, high]``), the keys ``report.json`` has always used.

    %(ref_the_boundary_law)s
    """

    value: float
    stderr: float
    ci_low: float = optional()
    ci_high: float = optional()
    stderr_boot: float = optional()
    boot_ci_low: float = optional()
    boot_ci_high: float = optional()

    _estimate = "value"
    level = 0.95

    def conf_int(self, alpha=0.05):
        """Return the 95 % least-squares interval ``(low, high)`` (``alpha = 0.05`` only).

        Parameters
        ----------
        alpha : float, optional
            0.05.

        Returns
        -------
        tuple of float
            ``(ci_low, ci_high)``.

        Raises
        ------
        NotImplementedError
            For an exponent without an interval (a logistic fit's).
        """
        if self.ci_low is None:
            raise NotImplementedError("Exponent of a logistic fit has no interval (use value, stderr)")
        return super().conf_int(alpha)

    def to_dict(self):
        """Return the fields, the intervals as ``"ci95_ls"`` / ``"ci95_boot"`` lists.

        Returns
        -------
        dict
            ``value``, ``stderr`` and, where set, ``ci95_ls``, ``stderr_boot``, ``ci95_boot``.
        """
        out = {"value": self.value, "stderr": self.stderr}
        if self.ci_low is not None:
            out["ci95_ls"] = [self.ci_low, self.ci_high]
        return _with_boot(out, self)


@fill_doc
@dataclass(frozen=True)
class ProductTerm(Result):
    r"""The coefficient ``g`` of :math:`\log v_1 \log v_2` added to a two-covariate boundary fit.

    Parameters
    ----------
    value, stderr : float
        ``g`` and its least-squares standard error.
    p_value : float or None
        Two-sided t-test of :math:`g = 0` (None when the standard error is 0).
    stderr_boot : float, optional
        Bootstrap standard error.
    boot_ci_low, boot_ci_high : float, optional
        Bootstrap 2.5 and 97.5 percentiles (``to_dict()``: ``"ci95_boot"``).

    See Also
    --------
    validation.token_retrieval.boundary.multiplicative_test
        Test by likelihood ratio whether the boundary depends on one product :math:`\prod_v v^{c_v}`.
    validation.token_retrieval.boundary.fit_boundary
        Fit the power law :math:`\mathrm{along}_c = C \prod_v v^{\alpha_v}` to the success boundary.

    %(ref_the_boundary_law)s
    """

    value: float
    stderr: float
    p_value: float | None
    stderr_boot: float = optional()
    boot_ci_low: float = optional()
    boot_ci_high: float = optional()

    def to_dict(self):
        """Return the fields, the bootstrap interval as ``"ci95_boot"``.

        Returns
        -------
        dict
            ``value``, ``stderr``, ``p_value`` and, where set, ``stderr_boot``, ``ci95_boot``.
        """
        return _with_boot({"value": self.value, "stderr": self.stderr, "p_value": self.p_value}, self)


@fill_doc
@dataclass(frozen=True)
class PowerLaw(Result):
    r"""Least-squares power law :math:`\text{along} = e^{c_0} \prod_v v^{\alpha_v}` (:func:`fit_power_law`).

    Parameters
    ----------
    log_prefactor : float
        ``c_0``.
    exponents : dict
        ``{v: Exponent}`` (value, least-squares stderr and 95 % interval).
    n_points : int
        Points fitted.
    dof : int
        Residual degrees of freedom (at least 1).

    See Also
    --------
    validation.token_retrieval.boundary.fit_power_law
        Fit :math:`\mathrm{along} = C \prod_v v^{\alpha_v}` to points by least squares in the logs: the one power-law fit.
    validation.token_retrieval.boundary.Exponent
        One fitted exponent of a boundary law, with its standard errors and 95 % intervals.

    %(ref_the_boundary_law)s
    """

    log_prefactor: float
    exponents: dict
    n_points: int
    dof: int

    def coef(self):
        """Return ``[log_prefactor, alpha_1, alpha_2, ...]`` in the order of the covariates.

        Returns
        -------
        list of float
            The coefficients.
        """
        return [self.log_prefactor] + [e.value for e in self.exponents.values()]


@fill_doc
@dataclass(frozen=True)
class BoundaryFit(Result):
    r"""Power-law fit of a simulated success boundary (:func:`~validation.token_retrieval.boundary.fit_boundary`).

    Parameters
    ----------
    points : list of dict
        Boundary points (:func:`boundary_points`).
    n_points : int
        Their number.
    exponents : dict
        ``{v: Exponent}``; empty if fewer than ``len(covars) + 2`` points exist.
    along : str
        The scanned variable.
    covars : list of str
        The regressors.
    direction : {"up", "down"}
        Crossing direction.
    key : str
        The success flag.
    interaction : ProductTerm, optional
        Test of the product form (two covariates, >= 5 points).
    log_prefactor : float, optional
        ``c_0`` of the fit.
    n_boot_ok : int, optional
        Bootstrap resamples with a fit.

    See Also
    --------
    validation.token_retrieval.boundary.fit_boundary
        Fit the power law :math:`\mathrm{along}_c = C \prod_v v^{\alpha_v}` to the success boundary.
    validation.token_retrieval.boundary.LogisticBoundary
        Logistic regression of per-run success on the logs of the variables (``logistic_fit``).

    %(ref_the_boundary_law)s
    """

    points: list
    n_points: int
    exponents: dict
    along: str
    covars: list
    direction: str
    key: str
    interaction: ProductTerm = optional()
    log_prefactor: float = optional()
    n_boot_ok: int = optional()


@fill_doc
@dataclass(frozen=True)
class LogisticBoundary(Result):
    r"""Logistic regression of per-run success on the logs of the variables (:func:`logistic_fit`).

    Parameters
    ----------
    coef, stderr : dict
        Coefficients ``{"const", v...}`` and their Fisher standard errors.
    loglik : float
        Log-likelihood at the (ridge-penalised) estimate.
    n : int
        Runs.
    exponents : dict
        ``{v: Exponent}`` of the boundary :math:`N_c \sim \prod_v v^{-b_v / b_N}` (delta-method errors).
    key : str
        The success flag.

    See Also
    --------
    validation.token_retrieval.boundary.logistic_fit
        Fit a logistic regression of per-run success on the logs of ``variables``.
    validation.token_retrieval.boundary.BoundaryFit
        Power-law fit of a simulated success boundary (``fit_boundary``).

    %(ref_the_boundary_law)s
    """

    coef: dict
    stderr: dict
    loglik: float
    n: int
    exponents: dict
    key: str


@fill_doc
@dataclass(frozen=True)
class ProductFormTest(Result):
    r"""Likelihood-ratio test of the product form of the boundary (:func:`multiplicative_test`).

    Parameters
    ----------
    lr : float
        Twice the log-likelihood gain of the alternative.
    df : int
        Degrees of freedom.
    p_value : float
        Chi-square tail probability.
    loglik_null, loglik_alt : float
        The two log-likelihoods.
    key : str
        The success flag.

    See Also
    --------
    validation.token_retrieval.boundary.multiplicative_test
        Test by likelihood ratio whether the boundary depends on one product :math:`\prod_v v^{c_v}`.
    validation.token_retrieval.boundary.ProductTerm
        The coefficient ``g`` of :math:`\log v_1 \log v_2` added to a two-covariate boundary fit.

    %(ref_the_boundary_law)s
    """

    lr: float
    df: int
    p_value: float
    loglik_null: float
    loglik_alt: float
    key: str


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

    See Also
    --------
    validation.token_retrieval.boundary.boundary_points
        Locate where the success fraction crosses ``level`` along one variable.
    validation.token_retrieval.experiments.run_grid : Run ``run_config`` over the product grid ``Ns x ds x Ls``.

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


@fill_doc
def boundary_points(frac, *, along="N", by=("N", "d", "L"), direction="up", level=0.5):
    r"""Locate where the success fraction crosses ``level`` along one variable.

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

    See Also
    --------
    validation.token_retrieval.boundary.aggregate : Average the success flag ``key`` per configuration.
    validation.token_retrieval.boundary.fit_boundary
        Fit the power law :math:`\mathrm{along}_c = C \prod_v v^{\alpha_v}` to the success boundary.

    Notes
    -----
    Between grid points :math:`x_t < x_{t+1}` with fractions
    :math:`f_t < \text{level} \leq f_{t+1}`:
    :math:`\log x_c = \log x_t + w (\log x_{t+1} - \log x_t)`,
    :math:`w = (\text{level} - f_t) / (f_{t+1} - f_t)`.

    %(ref_the_boundary_law)s

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


def _design(points, covars):
    return np.column_stack([np.ones(len(points))] + [np.log([q[c] for q in points]) for c in covars])


@fill_doc
def fit_power_law(points, *, along="N", covars=("d", "L")):
    r"""Fit :math:`\text{along} = C \prod_v v^{\alpha_v}` to points by least squares in the logs: the one power-law fit.

    Parameters
    ----------
    points : list of dict
        Points with positive fields ``along`` and ``covars`` (boundary points
        of a simulation, or of the theory).
    along : str
        The fitted variable.
    covars : tuple of str
        The regressors.

    Returns
    -------
    PowerLaw
        ``log_prefactor`` (:math:`\log C`), ``exponents`` ``{v: Exponent}`` with
        least-squares standard errors and Student-t 95 % intervals,
        ``n_points`` and ``dof``.

    Raises
    ------
    ValueError
        With fewer than ``len(covars) + 1`` points.

    See Also
    --------
    validation.token_retrieval.boundary.fit_boundary
        Fit the power law :math:`\mathrm{along}_c = C \prod_v v^{\alpha_v}` to the success boundary.
    validation.token_retrieval.boundary.PowerLaw
        Least-squares power law :math:`\mathrm{along} = e^{\mathrm{log\_prefactor}} \prod_v v^{\alpha_v}` (``fit_power_law``).

    Notes
    -----
    :math:`\log \text{along} = c_0 + \sum_v \alpha_v \log v + \text{noise}`, solved by
    :func:`numpy.linalg.lstsq`; standard errors
    :math:`\sqrt{\operatorname{diag}(s^2 (X^T X)^{-1})}` with
    :math:`s^2 = \mathrm{RSS} / \max(1, n - p - 1)`.

    %(ref_the_boundary_law)s

    Examples
    --------
    >>> pts = [{"N": 3.0 * d ** 0.5 * L, "d": d, "L": L} for d in (4, 16, 64) for L in (2, 8)]
    >>> f = fit_power_law(pts)
    >>> [round(c, 9) for c in f.coef()]                       # log 3, 1/2, 1
    [1.098612289, 0.5, 1.0]
    """
    covars = tuple(covars)
    if len(points) < len(covars) + 1:
        raise ValueError(f"points must hold at least {len(covars) + 1} points for {len(covars)} covariates, "
                         f"got {len(points)}")
    y = np.log([q[along] for q in points])
    coef, se, dof = _ls(y, _design(points, covars))
    tq = stats.t.ppf(0.975, dof)
    ex = {c: Exponent(value=float(coef[i + 1]), stderr=float(se[i + 1]),
                      ci_low=float(coef[i + 1] - tq * se[i + 1]), ci_high=float(coef[i + 1] + tq * se[i + 1]))
          for i, c in enumerate(covars)}
    return PowerLaw(log_prefactor=float(coef[0]), exponents=ex, n_points=len(points), dof=int(dof))


def fit_boundary(records, key, *, along="N", covars=("d", "L"), direction="up", n_boot=200,
                 rng=None, level=0.5):
    r"""Fit the power law :math:`\text{along}_c = C \prod_v v^{\alpha_v}` to the success boundary.

    Boundary points from :func:`boundary_points`; least squares of
    :math:`\log \mathrm{along}_c` on ``log covars``; uncertainties (a) from the least-squares
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
        Regressors (their logs) of :math:`\log \mathrm{along}_c`.
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
    BoundaryFit
        ``points``, ``exponents`` ``{v: Exponent}`` (least-squares and
        bootstrap errors and intervals), ``log_prefactor``, ``n_points``,
        ``n_boot_ok``; ``exponents`` is empty (and ``log_prefactor`` unset) if
        fewer than ``len(covars) + 2`` points exist.  With two covariates and
        >= 5 points also ``interaction`` (:class:`ProductTerm`): the
        coefficient ``g`` of :math:`\log v_1 \log v_2` added to the fit (a test of the
        product form: :math:`g = 0` iff the exponents do not drift), with its
        least-squares error, t-test ``p_value`` and bootstrap error.

    See Also
    --------
    validation.token_retrieval.boundary.boundary_points
        Locate where the success fraction crosses ``level`` along one variable.
    validation.token_retrieval.boundary.fit_power_law
        Fit :math:`\mathrm{along} = C \prod_v v^{\alpha_v}` to points by least squares in the logs: the one power-law fit.
    validation.token_retrieval.boundary.logistic_fit
        Fit a logistic regression of per-run success on the logs of ``variables``.

    Notes
    -----
    :math:`\log \text{along}_c = c_0 + \sum_v \alpha_v \log v + \text{noise}`;
    least-squares standard errors :math:`\sqrt{\operatorname{diag}(s^2 (X^T X)^{-1})}` with
    :math:`s^2 = \mathrm{RSS} / (n - p - 1)` and Student-t 95% intervals.  The product form
    is *assumed* by this fit; ``interaction`` and
    :func:`multiplicative_test` test it.

    References
    ----------
    arXiv:2603.15923 (the scaling of the boundary); docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    Success iff :math:`N > 2 d` (exactly): the fitted exponent of ``d`` is 1.

    >>> recs = [{"N": N, "d": d, "L": L, "ok": N > 2 * d} for N in (2, 4, 8, 16, 32, 64)
    ...         for d in (2, 4, 8) for L in (2, 4)]
    >>> f = fit_boundary(recs, "ok", n_boot=0)
    >>> round(f.exponents["d"].value, 6), abs(round(f.exponents["L"].value, 6))
    (1.0, 0.0)
    """
    n_boot = check_int("n_boot", n_boot, low=0)
    covars = tuple(covars)
    by = (along,) + covars
    frac = aggregate(records, key, by=by)
    pts = boundary_points(frac, along=along, by=by, direction=direction, level=level)
    head = dict(points=pts, n_points=len(pts), along=along, covars=list(covars), direction=direction, key=key)
    p = len(covars)
    if len(pts) < p + 2:
        return BoundaryFit(exponents={}, **head)

    def design_int(pp):
        D = _design(pp, covars)
        return np.column_stack([D, D[:, 1] * D[:, 2]]) if p == 2 else D

    law = fit_power_law(pts, along=along, covars=covars)
    y = np.log([q[along] for q in pts])
    do_int = p == 2 and len(pts) >= 5
    if do_int:
        ci, sei, dofi = _ls(y, design_int(pts))
    # Bootstrap over seeds, hand-written rather than scipy.stats.bootstrap: a
    # resample whose fractions cross 1/2 at too few grid points has no fit and
    # is dropped (counted in n_boot_ok), which scipy's statistic cannot express
    # (it would turn the interval into NaN); and keeping our draws keeps the
    # reported intervals reproducible for the same seed.
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
            cb, _, _ = _ls(yb, _design(pb, covars))
            if do_int:
                cb = np.append(cb, _ls(yb, design_int(pb))[0][-1] if len(pb) >= 5 else np.nan)
            boots.append(cb)
    boots = np.array(boots)
    exponents = {}
    for i, c in enumerate(covars):
        e = law.exponents[c]
        if len(boots) >= 20:
            e = Exponent(value=e.value, stderr=e.stderr, ci_low=e.ci_low, ci_high=e.ci_high,
                         stderr_boot=float(boots[:, i + 1].std(ddof=1)),
                         boot_ci_low=float(np.percentile(boots[:, i + 1], 2.5)),
                         boot_ci_high=float(np.percentile(boots[:, i + 1], 97.5)))
        exponents[c] = e
    g = None
    if do_int:
        gb = boots[:, -1][np.isfinite(boots[:, -1])] if len(boots) else np.array([])
        boot = ({"stderr_boot": float(gb.std(ddof=1)), "boot_ci_low": float(np.percentile(gb, 2.5)),
                 "boot_ci_high": float(np.percentile(gb, 97.5))} if len(gb) >= 20 else {})
        g = ProductTerm(value=float(ci[-1]), stderr=float(sei[-1]),
                        p_value=float(2 * stats.t.sf(abs(ci[-1] / sei[-1]), dofi)) if sei[-1] > 0 else None,
                        **boot)
    return BoundaryFit(exponents=exponents, interaction=g, log_prefactor=law.log_prefactor,
                       n_boot_ok=len(boots), **head)


@fill_doc
def logistic_fit(records, key, *, variables=("N", "d", "L"), ridge=1e-3):
    r"""Fit a logistic regression of per-run success on the logs of ``variables``.

    :math:`P(\text{success}) = \sigma(b_0 + \sum_v b_v \log v)`; the boundary
    :math:`P = 1/2` is :math:`N_c = e^{-b_0/b_N} \prod_{v \ne N} v^{-b_v/b_N}`.
    Exponents :math:`-b_v / b_N` with delta-method standard errors from the
    Fisher information (a ridge :math:`\text{ridge}\, \|b\|^2 / 2` on the slopes keeps
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
    LogisticBoundary
        ``coef``, ``stderr``, ``exponents`` ``{v: Exponent}`` (value and
        delta-method stderr), ``loglik``, ``n``.

    See Also
    --------
    validation.token_retrieval.boundary.multiplicative_test
        Test by likelihood ratio whether the boundary depends on one product :math:`\prod_v v^{c_v}`.
    validation.logistic.fit_logistic
        Fit a logistic regression by Newton's method (IRLS), optionally ridge-penalised.

    %(ref_the_boundary_law)s
    """
    ridge = check_real("ridge", ridge, low=0, allow_array=False)
    if len(records) < len(variables) + 1:
        raise ValueError(f"records must hold at least {len(variables) + 1} runs, got {len(records)}")
    y = np.array([float(r[key]) for r in records])
    Xd = np.column_stack([np.ones(len(y))] + [np.log([float(r[v]) for r in records])
                                               for v in variables])
    f = fit_logistic(Xd, y, ridge=ridge)
    b, cov, ll, se = f.coef, f.cov, f.loglik, f.stderr
    exponents = {}
    i0 = 1  # first variable is the scanned one
    for i, v in enumerate(variables[1:], start=2):
        val = -b[i] / b[i0]
        gr = np.zeros(len(b))
        gr[i] = -1.0 / b[i0]
        gr[i0] = b[i] / b[i0] ** 2
        exponents[v] = Exponent(value=float(val), stderr=float(np.sqrt(gr @ cov @ gr)))
    return LogisticBoundary(coef=dict(zip(("const",) + tuple(variables), map(float, b))),
                            stderr=dict(zip(("const",) + tuple(variables), map(float, se))),
                            loglik=ll, n=len(y), exponents=exponents, key=key)


@fill_doc
def multiplicative_test(records, key, *, variables=("N", "d", "L"), ridge=1e-3):
    r"""Test by likelihood ratio whether the boundary depends on one product :math:`\prod_v v^{c_v}`.

    The null is the logistic model linear in the :math:`\log v`; the alternative
    adds all pairwise products :math:`\log v \log w`.

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
    ProductFormTest
        ``lr`` (twice the log-likelihood gain), ``df``, ``p_value``
        (chi-square), ``loglik_null``, ``loglik_alt``.

    See Also
    --------
    validation.token_retrieval.boundary.logistic_fit
        Fit a logistic regression of per-run success on the logs of ``variables``.
    validation.token_retrieval.boundary.ProductFormTest
        Likelihood-ratio test of the product form of the boundary (``multiplicative_test``).

    Notes
    -----
    :math:`\mathrm{lr} = 2 (l_\text{alt} - l_\text{null})` is compared with a chi-square of
    :math:`k (k - 1) / 2` degrees of freedom (``df``; :math:`k` variables; Wilks).  The
    log-likelihoods are evaluated at the ridge-penalised estimates, so the
    chi-square reference is approximate when ``ridge > 0``.

    %(ref_the_boundary_law)s
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
    return ProductFormTest(lr=lr, df=df, p_value=float(stats.chi2.sf(lr, df)), loglik_null=l0,
                           loglik_alt=l1, key=key)
