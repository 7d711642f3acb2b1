r"""Trained spectra against the (truncated) quarter circle: the trial, the pooled statistic, its calibration, the extrapolation.

For rank fraction ``kappa`` (1: full rank from zero initialisation; < 1: the
two-layer memory with its default N(0, 1) initialisation), dimension ``d`` and
load fraction ``f`` of the finite-``p`` capacity
(:func:`validation.linear_memory.theory.lowrank_finite_threshold`),
:func:`spectrum_trial` trains one OP memory (default preset, stop at first
full recall, or continue past it) and returns its top :math:`m = \mathrm{round}(\kappa d)`
singular values.  The successful instances of a setting are pooled, each
scaled by its own second-moment match to the law (the only fitted
parameter):

* :func:`pooled_ks`: Kolmogorov-Smirnov distance of the pooled values to
  ``hcizz.truncated_quarter_circle(m/d)`` (``quarter_circle`` at full rank),
  and the mean lower edge;
* :func:`gaussian_calibration`: the same statistics for the top ``m``
  singular values of as many :math:`d \times d` Gaussian matrices (whose top-``kappa``
  spectrum converges to exactly this law), i.e. what a perfect match shows at
  this ``d`` and sample size;
* :func:`extrapolate`: a weighted straight-line fit to :math:`d = \infty` with errors
  from :func:`bootstrap_instances` over instances.

The study that runs these trials and fits (its plan, committed store and
summary) is :mod:`validation.studies.linear_memory_spectra`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from validation.engine.trials import trial

from ._docparams import fill_doc

__all__ = ["law_of", "spectrum_trial", "scaled_values", "pooled_ks", "gaussian_calibration",
           "GaussianCalibration", "LineFit", "bootstrap_instances", "extrapolate", "ks_edge_instance",
           "ks_edge_statistic"]


@fill_doc
def law_of(k_eff):
    """Return the law of the top ``k_eff`` fraction of singular values at capacity.

    Parameters
    ----------
    k_eff : float
        Rank ratio :math:`m / d` in (0, 1].

    Returns
    -------
    hcizz.numerics.SpectralLaw
        ``hcizz.quarter_circle`` for ``k_eff >= 1``, else
        ``hcizz.truncated_quarter_circle(k_eff)``.

    See Also
    --------
    validation.linear_memory.spectra.pooled_ks : KS distance of scaled singular values to this law.

    %(ref_spectra_init)s

    Examples
    --------
    >>> round(float(law_of(1.0).moment(2)), 6)
    1.0
    """
    import hcizz

    return hcizz.quarter_circle if k_eff >= 1 else hcizz.truncated_quarter_circle(k_eff)


def _theory_load(d, kappa):
    from .models import lowrank_m
    from .theory import lowrank_finite_threshold

    return float(lowrank_finite_threshold(d, lowrank_m(d, kappa) / d).value)


@fill_doc
@trial("linear_memory.spectrum", aliases=("validation.linear_memory.spectra_study:spectrum_trial",))
def spectrum_trial(params):
    r"""Train one memory; return its top ``m`` singular values (of :math:`W / \sqrt{d}`).

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
        score over facts divided by :math:`\|W\|_F`, the normalised margin at stop).

    See Also
    --------
    validation.linear_memory.spectra.scaled_values : Rescale the returned values to a law's second moment.

    %(ref_spectra_study)s
    """
    from replica.load import load_of, p_from_load
    from .data import make_facts, trial_rngs
    from .models import lowrank_m
    from .train import normalised_margin, train, train_past_recall

    d, kappa, seed = int(params["d"]), float(params["kappa"]), int(params["seed"])
    p = p_from_load(params["frac"] * _theory_load(d, kappa), d)
    rf, ri = trial_rngs(seed, d, p)
    facts = make_facts("op", p, d, rng=rf)
    if params.get("extra_steps"):
        # continued training after the first full recall (``extra_steps`` more steps)
        m = lowrank_m(d, kappa)
        cont = train_past_recall(facts, parametrization="full" if kappa >= 1 else "lowrank", kappa=kappa,
                                 extra=int(params["extra_steps"]), rng=ri, steps=params.get("steps", 4096),
                                 lr=params.get("lr"), init_std=0.0 if kappa >= 1 else None)
        W2, t1, trace = cont.W_end, cont.first_step, cont.trace
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
        res = train(facts, parametrization="full", rng=ri, init_std=0.0, **over)
    else:
        res = train(facts, parametrization="lowrank", kappa=kappa, rng=ri, **over)
    W = res.W.astype(np.float64)
    m = lowrank_m(d, kappa)
    sv = np.linalg.svd(W / math.sqrt(d), compute_uv=False)[:m]
    margin = normalised_margin(W, facts.astype(np.float64))
    return {"p": p, "load": float(load_of(p, d)), "success": bool(res.success), "steps": int(res.steps),
            "sv": [float(f"{v:.6g}") for v in sv], "margin": margin}


@fill_doc
def scaled_values(sv, law):
    """Scale singular values by their second-moment match to a law.

    Parameters
    ----------
    sv : array_like
        Singular values of one memory.
    law : hcizz.numerics.SpectralLaw
        The law (:func:`law_of`).

    Returns
    -------
    ndarray
        ``c sv`` with ``c^2 mean(sv^2) = E_law[s^2]``.

    See Also
    --------
    validation.linear_memory.spectra.pooled_ks : Pooled KS distance of values scaled this way.

    %(ref_spectra_init)s

    Examples
    --------
    >>> scaled_values([2.0, 2.0], law_of(1.0)).tolist()
    [1.0, 1.0]
    """
    sv = np.asarray(sv, float)
    return sv * math.sqrt(float(law.moment(2)) / float(np.mean(sv * sv)))


@fill_doc
def pooled_ks(instances, k_eff):
    """Compute the KS distance of pooled, per-instance scaled singular values to the law.

    Parameters
    ----------
    instances : list of array_like
        Top ``m`` singular values of each memory.
    k_eff : float
        Actual rank ratio :math:`m / d` (1: quarter circle, else the truncated
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

    See Also
    --------
    validation.linear_memory.spectra.gaussian_calibration : What this distance is for i.i.d. Gaussian matrices.
    validation.linear_memory.spectra.ks_edge_statistic : Faster pooled distance and edge from prepared instances.

    %(ref_spectra_init)s
    """
    from scipy import stats

    law = law_of(k_eff)
    scaled = [scaled_values(s, law) for s in instances]
    pool = np.concatenate(scaled)
    ks = float(stats.kstest(pool, law.cdf).statistic)
    edge = float(np.mean([s.min() for s in scaled]))
    return ks, edge, int(pool.size)


@fill_doc
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

    See Also
    --------
    validation.linear_memory.spectra.gaussian_calibration : Monte Carlo on Gaussian matrices that fills this record.

    %(ref_spectra_study)s
    """

    ks_mean: float
    ks_sd: float
    edge_mean: float
    edge_sd: float
    reps: int


#: Seeded calibrations already computed in this process (the study asks for the same
#: ``(d, m, instances)`` at several loads and learning rates).
_CALIBRATION_CACHE = {}


@fill_doc
def gaussian_calibration(d, m, instances, *, reps=40, rng=0):
    r"""Calibrate the pooled KS distance and edge on i.i.d. Gaussian matrices.

    Parameters
    ----------
    d : int
        Dimension.
    m : int
        Number of top singular values kept.
    instances : int
        Gaussian :math:`d \times d` matrices (entries :math:`\mathcal{N}(0, 1/d)`) pooled per
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

    See Also
    --------
    validation.linear_memory.spectra.GaussianCalibration : Mean and spread of the calibrated statistics.
    validation.linear_memory.spectra.pooled_ks : KS statistic under calibration.

    %(ref_spectra_study)s
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


@fill_doc
@dataclass(frozen=True)
class LineFit(Result):
    """Weighted straight-line fit ``y = intercept + slope * x`` (:func:`extrapolate`).

    Parameters
    ----------
    intercept : float
        Weighted least-squares estimate of the value at :math:`x = 0` (weights
        ``1 / y_sd**2``).
    intercept_se : float
        Its standard error: spread of the fit over the bootstrap replicates of
        ``y``, plus the propagated offset uncertainty.
    intercept_ci_low, intercept_ci_high : float
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

    See Also
    --------
    validation.linear_memory.spectra.extrapolate : Weighted fit with bootstrap errors that yields this record.

    Notes
    -----
    ``to_dict()`` writes the interval as ``"intercept_ci": [low, high]`` (the
    key of ``report.json``).

    %(ref_spectra_study)s
    """

    intercept: float
    intercept_se: float
    intercept_ci_low: float
    intercept_ci_high: float
    slope: float
    slope_se: float
    chi2: float
    dof: int
    x: tuple
    y: tuple
    y_sd: tuple

    _estimate = "intercept"
    level = 0.95

    @property
    def ci_low(self):
        """Lower end of the intercept's 95% interval (the main estimate's, for :meth:`conf_int`)."""
        return self.intercept_ci_low

    @property
    def ci_high(self):
        """Upper end of the intercept's 95% interval."""
        return self.intercept_ci_high

    def to_dict(self):
        """Return the fields, the interval as ``"intercept_ci": [low, high]``.

        Returns
        -------
        dict
            Plain values.
        """
        out = super().to_dict()
        out["intercept_ci"] = [out.pop("intercept_ci_low"), out.pop("intercept_ci_high")]
        return out


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

    See Also
    --------
    validation.linear_memory.spectra.extrapolate : Straight-line fit whose errors come from such replicates.

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


@fill_doc
def extrapolate(x, y, replicates, *, offset_se=None):
    r"""Fit :math:`y = a + b x` by weighted least squares; errors from bootstrap replicates.

    Parameters
    ----------
    x : array_like, shape (n,)
        Abscissae (e.g. :math:`1/d` or :math:`1/\ln p`), at least 3 distinct values.
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
        Intercept (the value at :math:`x = 0`, i.e. :math:`d = \infty`), slope, their
        standard errors, a 95% interval of the intercept and the fit's chi^2.

    See Also
    --------
    validation.linear_memory.spectra.bootstrap_instances : Replicates that give the fit its errors.
    validation.linear_memory.spectra.LineFit : Intercept, slope and intervals of the fit.

    Notes
    -----
    With ``s_i^2 = var_boot(y_i) + offset_se_i^2`` and weights :math:`w_i = 1/s_i^2`
    the estimates are linear in ``y``: :math:`a = c_a \cdot y`, :math:`b = c_b \cdot y` with
    :math:`(c_a, c_b) = (X^T W X)^{-1} X^T W`.  Their variance is the variance of
    :math:`c \cdot y^*` over the replicates :math:`y^*` plus ``sum_i c_i^2 offset_se_i^2``
    (no normality assumed for ``y``).  :math:`\chi^2 / \mathrm{dof}` far above 1 says the points are
    not on a line in ``x`` within their errors: then the intercept is a
    model-dependent extrapolation and its standard error understates the
    uncertainty.

    %(ref_spectra_study)s

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
    return LineFit(intercept=float(a), intercept_se=a_se, intercept_ci_low=float(a - 1.96 * a_se),
                   intercept_ci_high=float(a + 1.96 * a_se),
                   slope=float(b), slope_se=b_se, chi2=chi2, dof=int(x.size - 2),
                   x=tuple(map(float, x)), y=tuple(map(float, y)), y_sd=tuple(map(float, np.sqrt(var))))


@fill_doc
def ks_edge_instance(sv, k_eff):
    """Prepare one instance for the fast pooled statistic :func:`ks_edge_statistic`.

    Parameters
    ----------
    sv : array_like
        Top ``m`` singular values of one memory.
    k_eff : float
        Rank ratio :math:`m / d`.

    Returns
    -------
    tuple
        The law's CDF at the scaled values (ndarray) and the smallest scaled value.

    See Also
    --------
    validation.linear_memory.spectra.ks_edge_statistic : Pooled distance and edge of prepared instances.

    %(ref_spectra_study)s
    """
    law = law_of(k_eff)
    sc = scaled_values(sv, law)
    return np.asarray(law.cdf(sc), float), float(sc.min())


@fill_doc
def ks_edge_statistic(instances):
    """Return (pooled KS distance, mean edge) of instances prepared by :func:`ks_edge_instance`.

    Equal to :func:`pooled_ks` up to rounding (the KS distance depends on the
    values only through their CDF values, the law being continuous), without
    re-evaluating the law: the statistic the bootstrap resamples.

    Parameters
    ----------
    instances : list of tuple
        Prepared instances.

    Returns
    -------
    ks : float
        KS distance of the pooled values.
    edge : float
        Mean of the instances' smallest scaled values.

    See Also
    --------
    validation.linear_memory.spectra.ks_edge_instance : Prepare one instance for this statistic.
    validation.linear_memory.spectra.pooled_ks : Same distance, computed from raw singular values.

    %(ref_spectra_study)s
    """
    u = np.sort(np.concatenate([i[0] for i in instances]))
    n = u.size
    k = np.arange(1, n + 1)
    ks = max(float(np.max(k / n - u)), float(np.max(u - (k - 1) / n)))
    return ks, float(np.mean([i[1] for i in instances]))
