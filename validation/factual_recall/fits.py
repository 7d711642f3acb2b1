r"""Fits of the factual-recall studies: capacities, slopes, escape times, the trade-off boundary.

Every function takes trial results (plain dicts of
:mod:`validation.factual_recall.trials`) or numbers and returns a result record
(:class:`hcizz.results.Result`), intervals as ``ci_low`` / ``ci_high``:

* capacities: :func:`capacity_fits` (logistic threshold per step budget, in the
  load), :func:`fit_capacity` (facts at 50 % success, logistic in :math:`\ln N`),
  :func:`converged_budget` (the budget from which a threshold stops moving);
* lines and slopes: :func:`fit_line` (OLS with a Student-t interval),
  :func:`fit_origin_slope` and :func:`fit_log_ratio` (:math:`y = c x` through the
  origin, weighted), :func:`fit_slope` (facts against parameters over
  configurations);
* :func:`fit_escape_slopes` (escape steps against the initial scale and the
  learning rate, with the saddle prediction);
* :func:`search_criterion` (what a binary search reports against the 50 % point);
* :func:`~validation.factual_recall.fits.fit_boundary` (the iso-capacity boundary of the attention / MLP
  trade-off, profile-likelihood intervals).

Several results write their interval as ``"ci": [low, high]`` in ``to_dict()``
(the key ``report.json`` has always used; :class:`IntervalResult`).
docs/factual_recall.md#memories-against-theory and the sections after it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np
from scipy import optimize, stats

from hcizz.results import Result, optional
from validation.logistic import fit_threshold
from validation._docparams import fill_doc, returned_by
from .theory import escape_rates

__all__ = ["IntervalResult", "BudgetFit", "CapacityFits", "capacity_fits", "converged_budget",
           "LineFit", "SlopeCheck", "fit_line", "PlateauEscape", "EscapeSlopes",
           "fit_escape_slopes", "FactsCapacity", "fit_capacity", "OriginSlope",
           "fit_origin_slope", "RatioSlope", "fit_log_ratio", "SlopeFit", "fit_slope",
           "SeedSearch", "SearchCriterion", "search_criterion", "BoundaryLaw", "BoundaryFit",
           "fit_boundary", "LAW_CUT"]

#: Log-likelihood difference of a 95 % profile-likelihood statement about one
#: parameter, ``chi2_1(0.95) / 2`` (1.92).
LAW_CUT = float(stats.chi2.ppf(0.95, 1) / 2)


def _level(default=0.95):
    """A field holding the confidence level, left out of ``to_dict()``."""
    return field(default=default, metadata={"hidden": True})


class IntervalResult(Result):
    """A result whose main interval ``ci_low`` / ``ci_high`` is written as ``"ci": [low, high]``.

    ``to_dict()`` leaves out the fields declared with ``metadata={"hidden":
    True}`` (the confidence ``level``) and the unset optional ones, and packs
    the interval under the key ``"ci"`` that ``report.json`` has always used.

    See Also
    --------
    hcizz.results.Result : The record base class it extends.

    References
    ----------
    docs/architecture.md#one-result-protocol
    """

    __slots__ = ()

    def to_dict(self):
        """Return the fields, the interval as ``"ci": [ci_low, ci_high]``.

        Returns
        -------
        dict
            Plain values (nested results stay objects).
        """
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.metadata.get("hidden") or (v is None and f.metadata.get("omit_if_none")):
                continue
            out[f.name] = v
        if "ci_low" in out:
            out["ci"] = [out.pop("ci_low"), out.pop("ci_high")]
        return out


# ----------------------------------------------------------------------------- capacities

@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.capacity_fits",
    "arXiv:2605.10795; docs/factual_recall.md#measurement",
    "validation.logistic.fit_threshold : The logistic fit behind it."))
@dataclass(frozen=True)
class BudgetFit(Result):
    """Logistic capacity threshold at one step budget (a row of :func:`capacity_fits`).

    Parameters
    ----------
    budget : int
        Step budget: success is ``t <= budget``.
    threshold : float
        Abscissa (load) at 50 % success (NaN if the data never cross 1/2).
    ci_low, ci_high : float
        Its 95 % profile-likelihood interval.
    successes, trials : int
        Successes within the budget, and trials.

    %(record_links)s
    """

    budget: int
    threshold: float
    ci_low: float
    ci_high: float
    successes: int
    trials: int

    _estimate = "threshold"
    level = 0.95


@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.capacity_fits",
    "docs/factual_recall.md#measurement",
    "validation.factual_recall.fits.converged_budget : The budget from which a fit stops moving."))
@dataclass(frozen=True)
class CapacityFits(Result):
    """Capacity fits of one configuration per step budget, for both criteria (:func:`capacity_fits`).

    Parameters
    ----------
    all : list of BudgetFit
        Criterion *all facts recalled* (``t_all``), one per budget.
    p99 : list of BudgetFit
        Criterion *at least 99 % recalled* (``t_99``); ``to_dict()`` and
        ``res["99"]`` name it ``"99"``.

    %(record_links)s
    """

    all: list
    p99: list

    def to_dict(self):
        """Return ``{"all": [...], "99": [...]}``.

        Returns
        -------
        dict
            The two lists of :class:`BudgetFit`.
        """
        return {"all": self.all, "99": self.p99}

    def criterion(self, crit):
        """Return the fits of criterion ``crit`` (``"all"`` or ``"99"``).

        Parameters
        ----------
        crit : {"all", "99"}
            The criterion.

        Returns
        -------
        list of BudgetFit
            One per budget, in increasing budget.
        """
        if crit not in ("all", "99"):
            raise ValueError(f"crit must be 'all' or '99', got {crit!r}")
        return self.all if crit == "all" else self.p99


def _success(records, crit, budget):
    key = "t_all" if crit == "all" else "t_99"
    return np.array([r[key] is not None and r[key] <= budget for r in records])


def capacity_fits(records, *, budgets, load_key="load"):
    """Fit the logistic capacity threshold per criterion and step budget.

    Parameters
    ----------
    records : list of dict
        Results of :func:`~validation.factual_recall.trials.linear_recall_trial`
        (or :func:`~validation.factual_recall.trials.mlp_recall_trial`, or
        transformer trials with a ``load`` field) for one configuration, run
        with the largest budget.
    budgets : sequence of int
        Step budgets; success within ``B`` is ``t <= B``.
    load_key : str
        Record field used as the abscissa of the fit (``"load"``).

    Returns
    -------
    CapacityFits
        Per criterion (``all``, ``"99"``) one :class:`BudgetFit` per budget:
        the load at 50 % success and its 95 % profile-likelihood interval
        (:func:`validation.logistic.fit_threshold`), and the success count.

    See Also
    --------
    validation.logistic.fit_threshold : The logistic threshold fit of each budget.
    validation.factual_recall.fits.converged_budget : Reads the converged budget off the result.

    Notes
    -----
    The fit is monotone in ``N`` by construction (a logistic in the load, an
    increasing function of ``N``), pools every seed and every ``N``, and its
    interval holds both the seed spread and the ``N`` resolution.

    References
    ----------
    arXiv:2605.10795; docs/factual_recall.md#measurement

    Examples
    --------
    >>> recs = [{"load": x, "t_all": 10 if x < 1 else None, "t_99": 10 if x < 1 else None}
    ...         for x in (0.5, 0.8, 0.9, 1.1, 1.2, 1.5)]
    >>> f = capacity_fits(recs, budgets=[5, 10])
    >>> [r.successes for r in f.all], 0.9 < f.all[1].threshold < 1.1
    ([0, 3], True)
    """
    x = np.array([r[load_key] for r in records], float)
    out = {}
    for crit in ("all", "99"):
        rows = []
        for b in budgets:
            s = _success(records, crit, b)
            f = fit_threshold(x, s)
            rows.append(BudgetFit(budget=int(b), threshold=f.threshold, ci_low=f.ci_low,
                                  ci_high=f.ci_high, successes=int(s.sum()), trials=int(s.size)))
        out[crit] = rows
    return CapacityFits(all=out["all"], p99=out["99"])


def converged_budget(fits, value="threshold"):
    """Return the budget from which a fitted capacity stops moving (None if none).

    Parameters
    ----------
    fits : sequence of result
        Fits in increasing budget, each with ``budget``, the estimate ``value``
        and ``ci_low`` / ``ci_high`` (:class:`BudgetFit`, :class:`FactsCapacity`).
    value : str, optional
        Name of the estimate (``"threshold"``; ``"facts"`` for :class:`FactsCapacity`).

    Returns
    -------
    int or None
        The smallest budget ``B`` whose estimate and every larger budget's lie
        inside ``B``'s interval.

    See Also
    --------
    validation.factual_recall.fits.capacity_fits : The fits it reads.

    References
    ----------
    docs/factual_recall.md#measurement

    Examples
    --------
    >>> fits = [BudgetFit(1, 0.5, 0.4, 0.6, 3, 9), BudgetFit(2, 0.8, 0.7, 0.9, 5, 9),
    ...         BudgetFit(4, 0.85, 0.75, 0.95, 6, 9)]
    >>> converged_budget(fits)
    2
    """
    for i, r in enumerate(fits):
        v = getattr(r, value)
        if not math.isfinite(v):
            continue
        if all(math.isfinite(getattr(q, value)) and r.ci_low <= getattr(q, value) <= r.ci_high
               for q in fits[i:]):
            return r.budget
    return None


# ----------------------------------------------------------------------------- lines

@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_line",
    "docs/factual_recall.md#escape-times",
    "validation.factual_recall.fits.SlopeCheck : The same fit with the slope theory predicts."))
@dataclass(frozen=True)
class LineFit(IntervalResult):
    r"""Ordinary least-squares line :math:`y = \mathrm{intercept} + \mathrm{slope}\, x` (:func:`fit_line`).

    Parameters
    ----------
    slope, intercept : float
        Coefficients.
    stderr : float
        Standard error of the slope.
    ci_low, ci_high : float
        Student-t interval of the slope at ``level``.
    %(points_n)s %(hidden_level)s

    %(record_links)s
    """

    slope: float
    intercept: float
    stderr: float
    ci_low: float
    ci_high: float
    n: int
    level: float = _level()

    _estimate = "slope"


@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_escape_slopes",
    "docs/factual_recall.md#escape-times",
    "validation.factual_recall.theory.escape_rates : The theory slopes."))
@dataclass(frozen=True)
class SlopeCheck(LineFit):
    """A :class:`~validation.factual_recall.fits.LineFit` with the slope theory predicts (:func:`fit_escape_slopes`).

    Parameters
    ----------
    slope, intercept, stderr, ci_low, ci_high : float
        As :class:`LineFit`.
    %(points_n)s %(hidden_level)s
    theory : float
        The predicted slope.

    %(record_links)s
    """

    theory: float = math.nan

    def agrees(self):
        """Return whether the predicted slope lies inside the interval.

        Returns
        -------
        bool
            ``ci_low <= theory <= ci_high``.
        """
        return bool(self.ci_low <= self.theory <= self.ci_high)


def fit_line(x, y, level=0.95):
    r"""Fit :math:`y = a + b x` by ordinary least squares, with a Student-t interval of the slope.

    Parameters
    ----------
    x, y : array_like (n,)
        Points, ``n >= 3`` with at least two distinct ``x``.
    level : float
        Confidence level of the interval.

    Returns
    -------
    LineFit
        Slope, intercept, the slope's standard error and interval, ``n``.

    See Also
    --------
    validation.factual_recall.fits.fit_origin_slope : A line through the origin, weighted.
    validation.factual_recall.fits.LineFit : The result.

    Notes
    -----
    :math:`s^2 = \|r\|^2 / (n - 2)`, :math:`\mathrm{cov} = s^2 (A^T A)^{-1}`, interval
    :math:`b \pm t_{n-2}((1 + \mathrm{level}) / 2)\, \mathrm{se}(b)`: independent, homoscedastic residuals.

    References
    ----------
    docs/factual_recall.md#escape-times

    Examples
    --------
    >>> f = fit_line([0, 1, 2, 3], [1.0, 3.0, 5.0, 7.0])
    >>> round(f.slope, 12), round(f.intercept, 12), f.n
    (2.0, 1.0, 4)
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    A = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    r = y - A @ coef
    dof = len(x) - 2
    s2 = float(r @ r) / dof
    cov = s2 * np.linalg.inv(A.T @ A)
    se = math.sqrt(cov[1, 1])
    q = stats.t.ppf(0.5 + level / 2, dof)
    return LineFit(slope=float(coef[1]), intercept=float(coef[0]), stderr=se,
                   ci_low=float(coef[1] - q * se), ci_high=float(coef[1] + q * se), n=int(len(x)),
                   level=level)


# ----------------------------------------------------------------------------- escape times

@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_escape_slopes",
    "docs/factual_recall.md#escape-times"))
@dataclass(frozen=True)
class PlateauEscape(Result):
    r"""Escape-time fits of one plateau (relation or subject), :func:`fit_escape_slopes`.

    Parameters
    ----------
    rate : float
        Linearised growth rate ``lambda`` of the mode at the saddle.
    init_slope : dict
        ``f"{lr:g}"`` -> :class:`SlopeCheck` of the escape step against
        :math:`\ln(1/\mathrm{init})` (prediction :math:`1 / \ln(1 + \mathrm{lr}\, \lambda)`).
    init_slope_scaled : SlopeCheck
        :math:`\ln(1 + \mathrm{lr}\, \lambda)\, t` against :math:`\ln(1/\mathrm{init})` pooled over the rates
        (prediction 1).
    lr_exponent : LineFit or None
        :math:`\ln t` against :math:`\ln \mathrm{lr}` at the smallest ``init`` (None with one rate).
    lr_exponent_theory : float
        Discrete-step prediction of that slope at the geometric mean rate.
    lr_exponent_flow : float
        Gradient-flow prediction, -1.
    lr_exponent_init : float
        The ``init`` of the ``lr`` fit.
    missing : int
        Runs that did not escape within their steps.

    %(record_links)s
    """

    rate: float
    init_slope: dict
    init_slope_scaled: SlopeCheck
    lr_exponent: LineFit | None
    lr_exponent_theory: float
    lr_exponent_flow: float
    lr_exponent_init: float
    missing: int


@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_escape_slopes",
    "docs/factual_recall.md#escape-times"))
@dataclass(frozen=True)
class EscapeSlopes(Result):
    """Escape-time fits of both plateaus (:func:`fit_escape_slopes`).

    Parameters
    ----------
    relation, subject : PlateauEscape
        The two plateaus.

    %(record_links)s
    """

    relation: PlateauEscape
    subject: PlateauEscape

    def summary(self):
        """Return the pooled scaled slope of each plateau against its prediction.

        Returns
        -------
        str
            Two lines.
        """
        lines = ["EscapeSlopes (d[ln(1 + lr lambda) t] / d ln(1/init), pooled over lr)"]
        for st in ("relation", "subject"):
            f = getattr(self, st).init_slope_scaled
            lines.append(f"  {st:<8s} {f.slope:.4f} [{f.ci_low:.4f}, {f.ci_high:.4f}], theory "
                         f"{f.theory:g} ({'inside' if f.agrees() else 'outside'} the interval)")
        return "\n".join(lines)


@fill_doc
def fit_escape_slopes(records, S, R, D, level=0.95):
    r"""Fit the escape steps against :math:`\ln(1/\mathrm{init})` and :math:`\ln \mathrm{lr}`; compare with theory.

    Parameters
    ----------
    records : list of (params, result) pairs
        :func:`~validation.factual_recall.trials.escape_trial` parameter
        records and results.
    S, R, D : int
        Task sizes (for :func:`~validation.factual_recall.theory.escape_rates`).
    level : float
        Confidence level of the t-intervals.

    Returns
    -------
    EscapeSlopes
        For each plateau ``relation`` / ``subject`` a :class:`PlateauEscape`:
        ``init_slope`` per ``lr`` (OLS slope of the escape step against
        :math:`\ln(1/\mathrm{init})` with the prediction :math:`1 / \ln(1 + \mathrm{lr}\, \lambda)`),
        ``init_slope_scaled`` (:math:`\ln(1 + \mathrm{lr}\, \lambda)\, t` against :math:`\ln(1/\mathrm{init})`
        pooled over all ``lr``, prediction 1), ``lr_exponent`` (:math:`\ln t`
        against :math:`\ln \mathrm{lr}` at the smallest ``init``; gradient flow: -1, the
        discrete-step prediction :math:`d \ln(1/\ln(1 + \mathrm{lr}\, \lambda)) / d \ln \mathrm{lr}` at
        the geometric mean ``lr`` is ``lr_exponent_theory``).

    See Also
    --------
    validation.factual_recall.trials.escape_trial : The trials it fits.
    validation.factual_recall.theory.escape_rates : The theory it is compared with.

    Notes
    -----
    OLS with Student-t intervals (:func:`fit_line`): the residuals are the
    seed-to-seed spread of the escape step (random initial direction),
    treated as independent and homoscedastic within a fit.

    %(ref_escape_times_paper)s
    """
    lam = escape_rates(S, R, D)
    out = {}
    for stage in ("relation", "subject"):
        key = f"t_{stage}"
        rows = [(p["lr"], p["init"], r[key]) for p, r in records if r[key] is not None]
        lrs = sorted({x[0] for x in rows})
        per = {}
        for lr in lrs:
            sub = [(math.log(1 / i), t) for l_, i, t in rows if l_ == lr]
            if len({s[0] for s in sub}) >= 2 and len(sub) >= 3:
                f = fit_line(*zip(*sub), level=level)
                per[f"{lr:g}"] = SlopeCheck(**_fields(f), theory=1.0 / math.log1p(lr * lam[stage]))
        scaled = fit_line([math.log(1 / i) for _, i, _ in rows],
                          [math.log1p(l_ * lam[stage]) * t for l_, _, t in rows], level=level)
        scaled = SlopeCheck(**_fields(scaled), theory=1.0)
        i0 = min(x[1] for x in rows)
        sub = [(math.log(l_), math.log(t)) for l_, i, t in rows if i == i0]
        lre = fit_line(*zip(*sub), level=level) if len({s[0] for s in sub}) >= 2 else None
        lm = float(np.exp(np.mean([s[0] for s in sub])))
        x = lm * lam[stage]
        theo = -x / ((1 + x) * math.log1p(x))
        out[stage] = PlateauEscape(rate=lam[stage], init_slope=per, init_slope_scaled=scaled,
                                   lr_exponent=lre, lr_exponent_theory=theo, lr_exponent_flow=-1.0,
                                   lr_exponent_init=i0,
                                   missing=sum(1 for _, r in records if r[key] is None))
    return EscapeSlopes(**out)


def _fields(res):
    return {f.name: getattr(res, f.name) for f in fields(res)}


# ----------------------------------------------------------------------------- capacity in ln N

@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_capacity",
    "arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked"))
@dataclass(frozen=True)
class FactsCapacity(IntervalResult):
    r"""Facts stored at 50 % success within a step budget (:func:`fit_capacity`).

    Parameters
    ----------
    budget : int
        Step budget.
    facts : float
        ``exp`` of the fitted threshold in :math:`\ln N` (NaN if the data never cross 1/2).
    ci_low, ci_high : float
        Profile-likelihood interval (``0`` / ``inf`` at the edges).
    successes, trials : int
        Successes within the budget, and trials.
    %(hidden_level)s

    %(record_links)s
    """

    budget: int
    facts: float
    ci_low: float
    ci_high: float
    successes: int
    trials: int
    level: float = _level()

    _estimate = "facts"


def _t99_success(result, budget):
    t = result.get("t_99")
    return t is not None and t <= budget


@fill_doc
def fit_capacity(facts, results, budget, level=0.95):
    r"""Fit the capacity (facts at 50 % success) by a logistic fit in :math:`\ln N`.

    Parameters
    ----------
    facts : array_like
        Facts :math:`S R` of each trial.
    results : list of dict
        Trial results (``t_99``).
    budget : int
        Success = ``t_99 <= budget`` (>= 99 % recalled within the budget).
    level : float
        Confidence level of the profile-likelihood interval.

    Returns
    -------
    FactsCapacity
        ``facts`` and its interval, success counts.

    See Also
    --------
    validation.logistic.fit_threshold : The logistic fit in :math:`\ln N`.
    validation.factual_recall.fits.fit_slope : Facts against parameters over configurations.

    Notes
    -----
    :func:`validation.logistic.fit_threshold` on ``(ln N, success)``: every
    seed and every ``N`` in one likelihood.

    %(ref_facts_per_param_paper)s

    Examples
    --------
    >>> res = [{"t_99": 10 if n <= 100 else None} for n in (50, 80, 100, 130, 160)]
    >>> c = fit_capacity([50, 80, 100, 130, 160], res, budget=500)
    >>> 100 <= c.facts <= 130, c.successes
    (True, 3)
    """
    s = np.array([_t99_success(r, budget) for r in results])
    f = fit_threshold(np.log(np.asarray(facts, float)), s, level=level)
    ex = lambda v: float(math.exp(v)) if math.isfinite(v) else (0.0 if v < 0 else math.inf)
    return FactsCapacity(budget=int(budget),
                         facts=ex(f.threshold) if math.isfinite(f.threshold) else math.nan,
                         ci_low=ex(f.ci_low), ci_high=ex(f.ci_high), successes=int(s.sum()),
                         trials=int(s.size), level=level)


# ----------------------------------------------------------------------------- slopes

def _widened(se, red, n, level):
    """Standard error widened by the reduced chi-square ``red`` when above 1, and the
    quantile of the interval (Student-t with ``n - 1`` degrees of freedom; normal for
    ``n <= 2``)."""
    se_eff = se * math.sqrt(max(1.0, red)) if n > 1 else se
    q = stats.t.ppf(0.5 + level / 2, n - 1) if n > 2 else stats.norm.ppf(0.5 + level / 2)
    return se_eff, q


@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_origin_slope",
    "docs/factual_recall.md#facts-per-parameter-budget-checked"))
@dataclass(frozen=True)
class OriginSlope(IntervalResult):
    """Weighted least-squares slope of :math:`y = c x` (:func:`fit_origin_slope`).

    Parameters
    ----------
    slope : float
        ``c``.
    stderr : float
        Its standard error, widened by the reduced chi-square when above 1.
    ci_low, ci_high : float
        Interval at ``level``.
    chi2_red : float
        Reduced chi-square (NaN for one point).
    %(points_n)s %(hidden_level)s

    %(record_links)s
    """

    slope: float
    stderr: float
    ci_low: float
    ci_high: float
    chi2_red: float
    n: int
    level: float = _level()

    _estimate = "slope"


@fill_doc
def fit_origin_slope(x, y, sig, level=0.95):
    r"""Fit :math:`y = c x` by weighted least squares, the interval widened by the reduced chi-square.

    Parameters
    ----------
    x, y : array_like (n,)
        Points.
    sig : array_like (n,)
        Standard errors of ``y`` (weights :math:`1 / \mathrm{sig}^2`).
    level : float
        Confidence level.

    Returns
    -------
    OriginSlope
        :math:`c = \sum w x y / \sum w x^2`,
        :math:`\mathrm{se} = \sqrt{\max(1, \chi^2_\mathrm{red}) / \sum w x^2}`,
        Student-t interval with ``n - 1`` degrees of freedom (normal for ``n <= 2``).

    See Also
    --------
    validation.factual_recall.fits.fit_log_ratio : The same slope fitted in logs.
    validation.factual_recall.experiments.fit_through_origin : The unweighted least-squares slope.

    %(ref_facts_per_param)s

    Examples
    --------
    >>> f = fit_origin_slope([1, 2, 4], [0.5, 1.0, 2.0], [0.1, 0.1, 0.1])
    >>> round(f.slope, 12), f.chi2_red
    (0.5, 0.0)
    """
    x, y, sig = (np.asarray(v, float) for v in (x, y, sig))
    w = 1.0 / sig ** 2
    c = float(np.sum(w * x * y) / np.sum(w * x * x))
    se = math.sqrt(1.0 / np.sum(w * x * x))
    n = len(x)
    chi2 = float(np.sum(w * (y - c * x) ** 2))
    red = chi2 / (n - 1) if n > 1 else math.nan
    se_eff, q = _widened(se, red, n, level)
    return OriginSlope(slope=c, stderr=se_eff, ci_low=c - q * se_eff, ci_high=c + q * se_eff,
                       chi2_red=red, n=n, level=level)


@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_log_ratio",
    "docs/factual_recall.md#facts-per-parameter-budget-checked"))
@dataclass(frozen=True)
class RatioSlope(IntervalResult):
    r""":math:`y = c x` fitted in logs (:func:`fit_log_ratio`).

    Parameters
    ----------
    slope : float
        :math:`c = e^{\mu}`, :math:`\mu` the weighted mean of :math:`\ln(y / x)`.
    stderr_ln : float
        Standard error of ``mu``, widened by the reduced chi-square when above 1.
    ci_low, ci_high : float
        Interval of ``c`` at ``level``.
    chi2_red : float
        Reduced chi-square.
    n : int
        Points.
    linear : OriginSlope, optional
        The same slope by weighted least squares in linear scale, when computed.
    %(hidden_level)s

    %(record_links)s
    """

    slope: float
    stderr_ln: float
    ci_low: float
    ci_high: float
    chi2_red: float
    n: int
    linear: OriginSlope | None = optional()
    level: float = _level()

    _estimate = "slope"


@fill_doc
def fit_log_ratio(x, y, sig_ln, level=0.95):
    r"""Fit :math:`y = c x` in logs: the weighted mean of :math:`\ln(y / x)`, interval widened by the reduced chi-square.

    Parameters
    ----------
    x, y : array_like (n,)
        Positive points.
    sig_ln : array_like (n,)
        Standard errors of :math:`\ln y` (weights :math:`1 / \mathrm{sig\_ln}^2`).
    level : float
        Confidence level.

    Returns
    -------
    RatioSlope
        ``c`` and its interval (relative errors: no bias toward small ``y``).

    See Also
    --------
    validation.factual_recall.fits.fit_origin_slope : The same slope by weighted least squares.

    %(ref_facts_per_param)s

    Examples
    --------
    >>> f = fit_log_ratio([100, 200], [10, 20], [0.1, 0.1])
    >>> round(f.slope, 12), f.n
    (0.1, 2)
    """
    r = np.log(np.asarray(y, float) / np.asarray(x, float))
    w = 1.0 / np.asarray(sig_ln, float) ** 2
    mu = float(np.sum(w * r) / np.sum(w))
    n = len(r)
    se = math.sqrt(1.0 / np.sum(w))
    red = float(np.sum(w * (r - mu) ** 2)) / (n - 1) if n > 1 else math.nan
    se_eff, q = _widened(se, red, n, level)
    return RatioSlope(slope=math.exp(mu), stderr_ln=se_eff, ci_low=math.exp(mu - q * se_eff),
                      ci_high=math.exp(mu + q * se_eff), chi2_red=red, n=n, level=level)


@fill_doc
@dataclass(frozen=True)
class SlopeFit(Result):
    r"""Facts against parameters over configurations (:func:`fit_slope`).

    Parameters
    ----------
    value : float
        Facts per parameter (NaN with fewer than two usable configurations).
    ci_low, ci_high : float
        Its interval.
    bits_per_param : float
        :math:`\mathrm{value} \cdot \log_2 D`.
    bits_ci_low, bits_ci_high : float or None
        Its interval (None without a fit).
    slope : RatioSlope or None
        The fit in logs, with its linear-scale companion in ``slope.linear``.
    exponent : LineFit or None
        OLS slope of :math:`\ln \mathrm{facts}` against :math:`\ln \mathrm{params}` (None with fewer than
        three configurations).
    %(hidden_level)s

    See Also
    --------
    validation.factual_recall.fits.fit_slope : The function that returns it.

    Notes
    -----
    ``to_dict()`` writes ``"ci"`` and, when there is a fit, ``"bits_per_param_ci"``
    (the keys of ``report.json``).

    %(ref_facts_per_param)s
    """

    value: float
    ci_low: float
    ci_high: float
    bits_per_param: float
    bits_ci_low: float | None
    bits_ci_high: float | None
    slope: RatioSlope | None
    exponent: LineFit | None
    level: float = 0.95

    _estimate = "value"

    def to_dict(self):
        """Return ``value``, ``ci``, ``bits_per_param`` (and ``bits_per_param_ci``), ``slope``, ``exponent``.

        Returns
        -------
        dict
            Plain values (nested results stay objects).
        """
        out = {"value": self.value, "ci": [self.ci_low, self.ci_high],
               "bits_per_param": self.bits_per_param, "slope": self.slope, "exponent": self.exponent}
        if self.bits_ci_low is not None:
            out["bits_per_param_ci"] = [self.bits_ci_low, self.bits_ci_high]
        return out


@fill_doc
def fit_slope(params, facts, ci_low, ci_high, D, level=0.95):
    r"""Fit facts = ``c`` params over configurations with a finite capacity interval.

    Parameters
    ----------
    params, facts : sequence of float
        Parameter count and capacity of each configuration.
    ci_low, ci_high : sequence of float
        The capacities' intervals (at ``level``).
    D : int
        Answers per relation (:math:`\log_2 D` bits per fact).
    level : float
        Confidence level.

    Returns
    -------
    SlopeFit
        The slope in logs (:func:`fit_log_ratio`, weights from the interval in
        :math:`\ln N`) with its linear-scale companion (:func:`fit_origin_slope`,
        which with relative errors favours the configurations with fewer
        facts), the log-log exponent (:func:`fit_line`), bits per parameter.
        Configurations with a NaN capacity, a zero lower end or an infinite
        upper end are left out; fewer than two left: no fit (NaN).

    See Also
    --------
    validation.factual_recall.fits.fit_capacity : The capacity of one configuration.
    validation.factual_recall.fits.fit_log_ratio : The slope fitted in logs.

    %(ref_facts_per_param_paper)s

    Examples
    --------
    >>> f = fit_slope([100, 200, 400], [10, 20, 40], [8, 16, 32], [12.5, 25, 50], D=8)
    >>> round(f.value, 12), round(f.bits_per_param, 12), round(f.exponent.slope, 12)
    (0.1, 0.3, 1.0)
    """
    good = [(p, f, lo, hi) for p, f, lo, hi in zip(params, facts, ci_low, ci_high)
            if math.isfinite(f) and 0 < lo and math.isfinite(hi)]
    if len(good) < 2:
        return SlopeFit(value=math.nan, ci_low=math.nan, ci_high=math.nan, bits_per_param=math.nan,
                        bits_ci_low=None, bits_ci_high=None, slope=None, exponent=None, level=level)
    x = [g[0] for g in good]
    y = [g[1] for g in good]
    sig_ln = [(math.log(hi) - math.log(lo)) / (2 * stats.norm.ppf(0.5 + level / 2))
              for _, _, lo, hi in good]
    sl = fit_log_ratio(x, y, sig_ln, level)
    lin = fit_origin_slope(x, y, [v * s_ for v, s_ in zip(y, sig_ln)], level)
    sl = RatioSlope(**dict(_fields(sl), linear=lin))
    b = math.log2(D)
    return SlopeFit(value=sl.slope, ci_low=sl.ci_low, ci_high=sl.ci_high,
                    bits_per_param=sl.slope * b, bits_ci_low=sl.ci_low * b,
                    bits_ci_high=sl.ci_high * b, slope=sl,
                    exponent=fit_line(np.log(x), np.log(y), level=level) if len(good) >= 3 else None,
                    level=level)


# ----------------------------------------------------------------------------- search criterion

@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.search_criterion",
    "docs/factual_recall.md#search-criterion-against-the-50-point"))
@dataclass(frozen=True)
class SeedSearch(Result):
    """One seed's binary-search path read as the paper's criterion (:func:`search_criterion`).

    Parameters
    ----------
    seed : int
        The seed.
    largest_pass : float
        Largest ``N`` that passed (NaN if none).
    smallest_fail : float
        Smallest ``N`` that failed (NaN if none).
    bracket_mid : float
        Geometric midpoint of the largest pass and the smallest failure above
        it (NaN unless both exist).

    %(record_links)s
    """

    seed: int
    largest_pass: float
    smallest_fail: float
    bracket_mid: float


@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.search_criterion",
    "arXiv:2412.06538; docs/factual_recall.md#search-criterion-against-the-50-point"))
@dataclass(frozen=True)
class SearchCriterion(Result):
    """What a binary search's "largest N that passed" reports, against the 50 % point.

    Parameters
    ----------
    per_seed : list of SeedSearch
        One per seed.
    one_search : float
        Geometric mean over seeds of ``largest_pass`` (what one search
        reports, on average).
    one_search_mid : float
        The same of ``bracket_mid``.
    best_of_searches : float
        The largest pass over all seeds.
    capacity_50 : FactsCapacity
        The 50 % point of the logistic fit of the same trials.
    one_search_over_50, one_search_mid_over_50, best_of_searches_over_50 : float
        The ratios to the 50 % point (NaN without a positive one).

    %(record_links)s
    """

    per_seed: list
    one_search: float
    one_search_mid: float
    best_of_searches: float
    capacity_50: FactsCapacity
    one_search_over_50: float
    one_search_mid_over_50: float
    best_of_searches_over_50: float

    def to_dict(self):
        """Return the fields, ``capacity_50`` as ``{"facts": ..., "ci": [low, high]}`` (the ``report.json`` keys).

        Returns
        -------
        dict
            Plain values (``per_seed`` stays a list of results).
        """
        out = super().to_dict()
        c = self.capacity_50
        out["capacity_50"] = {"facts": c.facts, "ci": [c.ci_low, c.ci_high]}
        return out

    def seeds_disagree(self):
        """Return whether the seeds' searches ended at different largest passes.

        Returns
        -------
        bool
            True if the finite ``largest_pass`` values are not all equal.
        """
        v = {q.largest_pass for q in self.per_seed if math.isfinite(q.largest_pass)}
        return len(v) > 1


def search_criterion(records):
    r"""Read the trials of one configuration as the paper's search criterion ("largest N that passed").

    Parameters
    ----------
    records : list of (params, result)
        Stored trials of one configuration and one optimiser setting (every
        seed); ``params`` holds ``facts``, ``seed`` and ``steps`` (success =
        ``t_99 <= steps``).

    Returns
    -------
    SearchCriterion
        Per seed the largest pass, smallest failure and bracket midpoint; the
        geometric mean over seeds (one search), the best of the searches, the
        50 % point (:func:`fit_capacity` at the full budget) and the ratios.

    See Also
    --------
    validation.factual_recall.search.largest_passed : The paper's criterion on one path.
    validation.factual_recall.fits.fit_capacity : The 50 % point it is compared with.

    Notes
    -----
    On a path that brackets and then bisects a monotone threshold, the
    largest pass is the last grid point below the first failure, i.e. up to
    one grid step (:math:`2^{1/4}`) below the path's own threshold.  A search
    reports its own draw of the task and the initialisation, so when outcomes
    vary between draws (a logistic of width ``w`` in :math:`\ln N`) the largest
    pass of a lucky seed can lie above the 50 % point of all draws, and the
    best of several searches more so.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#search-criterion-against-the-50-point

    Examples
    --------
    >>> recs = [({"facts": f, "seed": s, "steps": 100}, {"t_99": 50 if f <= c else None})
    ...         for s, c in ((0, 100), (1, 150)) for f in (64, 100, 150, 200)]
    >>> r = search_criterion(recs)
    >>> r.per_seed[1].largest_pass, r.best_of_searches, r.seeds_disagree()
    (150, 150, True)
    """
    per = []
    for sd in sorted({p["seed"] for p, _ in records}):
        got = [(p["facts"], _t99_success(r, p["steps"])) for p, r in records if p["seed"] == sd]
        ok = [f for f, s_ in got if s_]
        bad = [f for f, s_ in got if not s_]
        lo = max(ok) if ok else math.nan
        hi = min((f for f in bad if not f < lo), default=math.nan)
        per.append(SeedSearch(seed=sd, largest_pass=lo, smallest_fail=min(bad) if bad else math.nan,
                              bracket_mid=math.sqrt(lo * hi)))

    def gmean(key):
        v = np.array([getattr(q, key) for q in per], float)
        return float(np.exp(np.mean(np.log(v)))) if v.size and np.all(np.isfinite(v)) \
            else math.nan

    one, mid = gmean("largest_pass"), gmean("bracket_mid")
    best = max((q.largest_pass for q in per if math.isfinite(q.largest_pass)), default=math.nan)
    cap = fit_capacity([p["facts"] for p, _ in records],
                       [dict(r, t_99=r["t_99"] if _t99_success(r, p["steps"]) else None)
                        for p, r in records], max(p["steps"] for p, _ in records))
    c50 = cap.facts
    fin = math.isfinite(c50) and c50 > 0
    return SearchCriterion(per_seed=per, one_search=one, one_search_mid=mid, best_of_searches=best,
                           capacity_50=cap, one_search_over_50=one / c50 if fin else math.nan,
                           one_search_mid_over_50=mid / c50 if fin else math.nan,
                           best_of_searches_over_50=best / c50 if fin else math.nan)


# ----------------------------------------------------------------------------- trade-off boundary

def _combine(A, M, ca, cm, p):
    a, m = ca * np.asarray(A, float), cm * np.asarray(M, float)
    if math.isinf(p):
        return np.maximum(a, m)
    hi = np.maximum(np.maximum(a, m), 1e-300)
    return hi * ((a / hi) ** p + (m / hi) ** p) ** (1.0 / p)


def _nll(theta, A, M, y, n, p):
    lca, lcm, lw = theta
    cap = np.maximum(_combine(A, M, math.exp(lca), math.exp(lcm), p), 1e-300)
    z = (np.log(cap) - math.log(n)) / math.exp(lw)
    # log sigma(z) and log sigma(-z), stably
    return float(np.sum(np.where(y, np.logaddexp(0, -z), np.logaddexp(0, z))))


def _fit_p(A, M, y, n_facts, p, x0s=None):
    r"""Minimum of :func:`_nll` over :math:`(\ln c_a, \ln c_m, \ln w)` at exponent ``p``."""
    top = None
    for x0 in x0s or [[a, b, math.log(0.2)] for a in (-4.0, -2.0) for b in (-4.0, -2.0)]:
        r = optimize.minimize(_nll, x0, args=(A, M, y, n_facts, p), method="Nelder-Mead",
                              options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 4000})
        if top is None or r.fun < top.fun:
            top = r
    return top


def _profile_nll(i, v, theta, A, M, y, n_facts, p):
    """Profile of :func:`_nll` with coordinate ``i`` of ``theta`` held at ``v``: the minimum
    over the other two, started from ``theta`` (the MLE or the previous profile point)."""
    free = [j for j in range(3) if j != i]

    def f(u):
        t = np.empty(3)
        t[i], t[free] = v, u
        return _nll(t, A, M, y, n_facts, p)

    r = optimize.minimize(f, np.asarray(theta, float)[free], method="Nelder-Mead",
                          options={"xatol": 1e-7, "fatol": 1e-9, "maxiter": 4000})
    t = np.asarray(theta, float).copy()
    t[i], t[free] = v, r.x
    return float(r.fun), t


def _profile_interval(i, theta, nll_min, A, M, y, n_facts, p, level, span=8.0):
    r"""Profile-likelihood interval of :math:`\exp(\theta_i)`: the ``v`` with
    :math:`2 (\mathrm{profile}(v) - \mathrm{nll}_{\min}) \leq \chi^2_1(\mathrm{level})`; walks out from the MLE by doubling steps
    (0.02 .. ``span`` in the log) and refines each crossing with Brent's method; ``0`` /
    ``inf`` where the profile stays inside the cut up to ``span`` (a factor :math:`e^{\mathrm{span}}`)."""
    cut = stats.chi2.ppf(level, 1) / 2
    out = []
    for sgn in (-1.0, 1.0):
        t_in, v_in, v_out, step = np.asarray(theta, float), float(theta[i]), None, 0.02
        while step <= span:
            v = float(theta[i]) + sgn * step
            g, t = _profile_nll(i, v, t_in, A, M, y, n_facts, p)
            if g - nll_min > cut:
                v_out = v
                break
            t_in, v_in, step = t, v, 2 * step
        if v_out is None:
            out.append(0.0 if sgn < 0 else math.inf)
            continue
        t0 = t_in
        h = lambda v: _profile_nll(i, v, t0, A, M, y, n_facts, p)[0] - nll_min - cut
        out.append(math.exp(optimize.brentq(h, min(v_in, v_out), max(v_in, v_out),
                                            xtol=1e-5)))
    return out


@dataclass(frozen=True)
class BoundaryLaw(Result):
    r"""The boundary law at one exponent ``p`` (an entry of ``BoundaryFit.fits``).

    Parameters
    ----------
    p : float
        Exponent (1: additive, inf: max).
    c_a, c_m : float
        Maximum-likelihood facts per attention and per MLP parameter.
    width : float
        Logistic width in :math:`\ln N`.
    loglik : float
        Maximum log-likelihood.
    c_a_ci_low, c_a_ci_high, c_m_ci_low, c_m_ci_high : float, optional
        Profile-likelihood intervals of ``c_a`` and ``c_m`` (for the exponents
        of ``ci_ps``); ``to_dict()`` writes them as ``"c_a_ci"`` / ``"c_m_ci"``.

    See Also
    --------
    validation.factual_recall.fits.BoundaryFit : The fit that holds one law per exponent.

    References
    ----------
    docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """

    p: float
    c_a: float
    c_m: float
    width: float
    loglik: float
    c_a_ci_low: float | None = None
    c_a_ci_high: float | None = None
    c_m_ci_low: float | None = None
    c_m_ci_high: float | None = None

    def to_dict(self):
        """Return the fields, the intervals as ``"c_a_ci"`` / ``"c_m_ci"`` when computed.

        Returns
        -------
        dict
            Plain values.
        """
        out = {"p": self.p, "c_a": self.c_a, "c_m": self.c_m, "width": self.width,
               "loglik": self.loglik}
        if self.c_a_ci_low is not None:
            out["c_a_ci"] = [self.c_a_ci_low, self.c_a_ci_high]
            out["c_m_ci"] = [self.c_m_ci_low, self.c_m_ci_high]
        return out


@fill_doc(record_links=returned_by(
    "validation.factual_recall.fits.fit_boundary",
    "arXiv:2412.06538; docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters"))
@dataclass(frozen=True)
class BoundaryFit(Result):
    r"""Iso-capacity boundary fits of the trade-off grid (:func:`~validation.factual_recall.fits.fit_boundary`).

    Parameters
    ----------
    fits : dict
        ``"1"``, ``"1.5"``, ..., ``"inf"`` -> :class:`BoundaryLaw`.
    best_p : float
        Exponent with the largest log-likelihood.
    ci_level : float
        Level of the coefficient intervals.
    additive_vs_max : float
        :math:`\mathrm{loglik}(1) - \mathrm{loglik}(\infty)` (positive favours the additive law; NaN
        unless both were fitted).
    p_ci : list of float
        Exponents within :data:`LAW_CUT` of the best log-likelihood.
    n_trials, n_facts : int
        Trials and the number of facts each had to store.

    %(record_links)s
    """

    fits: dict
    best_p: float
    ci_level: float
    additive_vs_max: float
    p_ci: list
    n_trials: int
    n_facts: int

    def preferred_law(self):
        """Return the law the data prefer at 95 %: ``"additive"``, ``"max"`` or None.

        Returns
        -------
        str or None
            ``"additive"`` if ``additive_vs_max > LAW_CUT``, ``"max"`` if it is
            below ``-LAW_CUT``, None when the data do not separate them.
        """
        if self.additive_vs_max > LAW_CUT:
            return "additive"
        if self.additive_vs_max < -LAW_CUT:
            return "max"
        return None


def fit_boundary(A, M, success, n_facts, *, ps=(1.0, 1.5, 2.0, 3.0, 5.0, 10.0, math.inf),
                 ci_ps=(1.0, math.inf), level=0.95):
    r"""Fit the iso-capacity boundary :math:`((c_a A)^p + (c_m M)^p)^{1/p} = N` per exponent :math:`p`.

    Parameters
    ----------
    A, M : array_like
        Attention and MLP parameters of each trial.
    success : array_like of bool
        Trial stored the ``n_facts`` facts (>= 99 %).
    n_facts : int
        Number of facts ``N`` every trial had to store.
    ps : sequence of float
        Exponents profiled; ``1`` is the additive law, ``inf`` the max law.
    ci_ps : sequence of float
        Exponents (among ``ps``) whose ``c_a`` and ``c_m`` get profile-likelihood
        intervals (default: the additive and the max law).
    level : float
        Confidence level of those intervals.

    Returns
    -------
    BoundaryFit
        Per ``p`` the maximum-likelihood :class:`BoundaryLaw` (intervals for
        ``ci_ps``; ``0`` / ``inf`` where the profile does not leave the cut
        within a factor :math:`e^8`); the best ``p``; ``additive_vs_max``; the
        ``p`` within :data:`LAW_CUT` of the best log-likelihood.

    See Also
    --------
    validation.factual_recall.experiments.tradeoff_experiment : A grid of attention and MLP sizes.
    validation.factual_recall.fits.BoundaryFit : The result.

    Notes
    -----
    :math:`P(\mathrm{success}) = \sigma((\ln C(A, M) - \ln N) / w)` with capacity :math:`C` the
    ``l_p`` combination of :math:`c_a A` and :math:`c_m M`.  Both laws have the same
    number of free parameters (``c_a, c_m, w``), so their log-likelihoods are
    compared directly; a difference above :math:`\chi^2_1(0.95)/2 = 1.92` is the
    usual profile-likelihood 95 % statement about ``p``.  The interval of
    ``c_a`` at fixed ``p`` is
    :math:`\{c_a : \max_{c_m, w} l \geq l_\mathrm{max} - \chi^2_1(\mathrm{level})/2\}`
    (Wilks), likewise for ``c_m``; the profile maximum is found by Nelder-Mead
    over the other two parameters and the crossing by Brent's method.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters
    """
    A, M = np.asarray(A, float), np.asarray(M, float)
    y = np.asarray(success, bool)
    fits = {}
    best = None
    for p in ps:
        top = _fit_p(A, M, y, n_facts, p)
        lca, lcm, lw = top.x
        key = "inf" if math.isinf(p) else f"{p:g}"
        kw = {}
        if p in ci_ps:
            a = _profile_interval(0, top.x, top.fun, A, M, y, n_facts, p, level)
            m = _profile_interval(1, top.x, top.fun, A, M, y, n_facts, p, level)
            kw = dict(c_a_ci_low=a[0], c_a_ci_high=a[1], c_m_ci_low=m[0], c_m_ci_high=m[1])
        fits[key] = BoundaryLaw(p=p, c_a=math.exp(lca), c_m=math.exp(lcm), width=math.exp(lw),
                                loglik=-float(top.fun), **kw)
        if best is None or fits[key].loglik > fits[best].loglik:
            best = key
    lmax = fits[best].loglik
    cut = stats.chi2.ppf(0.95, 1) / 2
    return BoundaryFit(fits=fits, best_p=fits[best].p, ci_level=level,
                       additive_vs_max=fits["1"].loglik - fits["inf"].loglik
                       if "1" in fits and "inf" in fits else math.nan,
                       p_ci=[fits[k].p for k in fits if fits[k].loglik >= lmax - cut],
                       n_trials=int(y.size), n_facts=int(n_facts))
