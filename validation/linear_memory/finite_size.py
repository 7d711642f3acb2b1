r"""The finite-size law of the exact capacity: OP against DP, and the excess over the finite-p theory.

The exact thresholds of :mod:`validation.studies.linear_memory_exact` are
logistic 1/2 points of certified decisions with profile-likelihood intervals;
the finite-``p`` replica-symmetric prediction (:func:`replica.alpha_c_finite`)
carries its own Monte Carlo error.  This module compares them without any new
computation:

* :func:`compare_models` -- OP against DP at each ``d`` (the linear-memory
  paper's conjecture that both have the same capacity, at finite size);
* :func:`excess_fits` -- the relative excess ``threshold / theory - 1`` against
  ``d`` fitted by a vanishing law :math:`A x(d)` and by :math:`B + A x(d)`, for
  :math:`x = 1/d`, :math:`1/\sqrt{d}` and :math:`\ln p / d`, with their goodness of fit.

Verdicts are computed from the numbers (a 95 % interval that contains zero, a
chi-square p-value), never typed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from hcizz.results import Result

from ._docparams import fill_doc

__all__ = ["ThresholdPoint", "ModelComparison", "ExcessFit", "threshold_points", "compare_models",
           "excess_fits", "FORMS"]

_Z95 = float(stats.norm.ppf(0.975))

#: The regressors of the excess fits: name -> x(d, p).  ``p/d^2`` is the order of the
#: neglected corrections of the entropic term (facts per weight; docs/linear_memory.md,
#: "The excess over the finite-p theory", candidate 2).
FORMS = {"1/d": lambda d, p: 1.0 / d,
         "1/sqrt(d)": lambda d, p: 1.0 / math.sqrt(d),
         "ln p/d": lambda d, p: math.log(p) / d,
         "p/d^2": lambda d, p: p / d**2}


@fill_doc
@dataclass(frozen=True)
class ThresholdPoint(Result):
    """One exact threshold reduced to a Gaussian estimate of the relative excess.

    Parameters
    ----------
    d : int
        Dimension.
    p : int
        ``p`` at the threshold load.
    threshold, stderr : float
        The threshold and its standard error (half the width of the 95 %
        interval over ``2 * 1.96``).
    theory, theory_stderr : float
        The finite-``p`` prediction and its Monte Carlo standard error.
    excess, excess_stderr : float
        ``threshold / theory - 1`` and its standard error (both errors by the
        delta method).

    See Also
    --------
    validation.linear_memory.finite_size.threshold_points : Builds these points from exact thresholds.

    %(ref_finite_size)s
    """

    d: int
    p: int
    threshold: float
    stderr: float
    theory: float
    theory_stderr: float
    excess: float
    excess_stderr: float


@fill_doc
@dataclass(frozen=True)
class ModelComparison(Result):
    """OP against DP at one ``d``.

    Parameters
    ----------
    d : int
        Dimension.
    op, dp : float
        The two thresholds.
    difference, stderr : float
        ``op - dp`` and its standard error.
    ci_low, ci_high : float
        95 % interval of the difference.
    z : float
        ``difference / stderr``.
    verdict : str
        ``"agrees"`` if the interval contains 0, else ``"differs by X (z sigma)"``.

    See Also
    --------
    validation.linear_memory.finite_size.compare_models : Builds one such comparison per dimension.

    %(ref_finite_size)s
    """

    d: int
    op: float
    dp: float
    difference: float
    stderr: float
    ci_low: float
    ci_high: float
    z: float
    verdict: str

    _estimate = "difference"
    level = 0.95


@fill_doc
@dataclass(frozen=True)
class ExcessFit(Result):
    """A weighted least-squares fit of the relative excess against :math:`x(d)`.

    Parameters
    ----------
    form : str
        The regressor, a key of :data:`FORMS`.
    offset : bool
        Whether the law has a constant (:math:`B + A x`) or vanishes (:math:`A x`).
    amplitude, amplitude_stderr : float
        ``A`` and its standard error.
    constant, constant_stderr : float
        ``B`` and its standard error (0 and 0 without an offset).
    chi2 : float
        Sum of squared standardised residuals.
    dof : int
        Points minus parameters.
    p_value : float
        :math:`P(\\chi^2_{\\mathrm{dof}} \\geq \\chi^2)` (NaN when ``dof = 0``).
    points : int
        Number of thresholds fitted.

    See Also
    --------
    validation.linear_memory.finite_size.excess_fits : Weighted least squares that yields this fit.

    %(ref_finite_size)s
    """

    form: str
    offset: bool
    amplitude: float
    amplitude_stderr: float
    constant: float
    constant_stderr: float
    chi2: float
    dof: int
    p_value: float
    points: int


def _stderr_from_ci(lo, hi):
    return (hi - lo) / (2 * _Z95)


@fill_doc
def threshold_points(rows):
    """Reduce exact thresholds to :class:`ThresholdPoint` (rows without a finite fit are left out).

    Parameters
    ----------
    rows : iterable
        Records with ``d``, ``threshold``, ``ci_low``/``ci_high`` (or ``ci``),
        ``theory``, ``theory_stderr`` and ``p_at_threshold`` (an
        :class:`~validation.studies.linear_memory_exact.ExactThreshold` or its
        ``to_dict()``).

    Returns
    -------
    list of ThresholdPoint
        Sorted by ``d``.

    See Also
    --------
    validation.linear_memory.finite_size.compare_models : OP and DP thresholds, dimension by dimension.
    validation.linear_memory.finite_size.excess_fits : Relative excess regressed on :math:`x(d)`.

    %(ref_finite_size)s

    Examples
    --------
    >>> pt = threshold_points([{"d": 40, "threshold": 1.02, "ci": [1.00, 1.04], "theory": 1.0,
    ...                         "theory_stderr": 0.0, "p_at_threshold": 300}])[0]
    >>> print(f"{pt.excess:.3f} {pt.excess_stderr:.4f}")
    0.020 0.0102
    """
    out = []
    for r in rows:
        r = r.to_dict() if isinstance(r, Result) else dict(r)
        lo, hi = r["ci"] if "ci" in r else (r["ci_low"], r["ci_high"])
        thr = r["threshold"]
        if not all(math.isfinite(v) for v in (thr, lo, hi)) or r.get("p_at_threshold") is None:
            continue
        se = _stderr_from_ci(lo, hi)
        th, th_se = r["theory"], r["theory_stderr"]
        ex = thr / th - 1.0
        ex_se = math.hypot(se / th, thr * th_se / th ** 2)
        out.append(ThresholdPoint(d=int(r["d"]), p=int(r["p_at_threshold"]), threshold=float(thr),
                                  stderr=float(se), theory=float(th), theory_stderr=float(th_se),
                                  excess=float(ex), excess_stderr=float(ex_se)))
    return sorted(out, key=lambda q: q.d)


def compare_models(op_rows, dp_rows):
    """OP against DP at every ``d`` where both have a threshold.

    Parameters
    ----------
    op_rows, dp_rows : iterable
        Exact thresholds of the two fact models (see :func:`threshold_points`).

    Returns
    -------
    list of ModelComparison
        One per common ``d``, sorted.

    See Also
    --------
    validation.linear_memory.finite_size.threshold_points : Gaussian estimates being compared.

    Notes
    -----
    The two thresholds come from independent instances, so the standard error
    of the difference is :math:`\\sqrt{s_{op}^2 + s_{dp}^2}`, each read off its
    95 % profile interval as :math:`(hi - lo) / (2 \\cdot 1.96)`.

    References
    ----------
    arXiv:2605.10795 (Conjecture 1: OP and DP have the same capacity);
    docs/linear_memory.md#finite-size-law-op-against-dp

    Examples
    --------
    >>> row = lambda t: {"d": 30, "threshold": t, "ci": [t - 0.02, t + 0.02], "theory": 1.0,
    ...                  "theory_stderr": 0.0, "p_at_threshold": 200}
    >>> c = compare_models([row(1.00)], [row(0.97)])[0]
    >>> print(f"{c.difference:.3f} {c.stderr:.4f}", c.verdict)
    0.030 0.0144 differs by 0.030 (2.1 sigma)
    """
    op = {q.d: q for q in threshold_points(op_rows)}
    dp = {q.d: q for q in threshold_points(dp_rows)}
    out = []
    for d in sorted(set(op) & set(dp)):
        a, b = op[d], dp[d]
        diff = a.threshold - b.threshold
        se = math.hypot(a.stderr, b.stderr)
        lo, hi = diff - _Z95 * se, diff + _Z95 * se
        z = diff / se if se > 0 else math.inf
        verdict = "agrees" if lo <= 0.0 <= hi else f"differs by {diff:.3f} ({abs(z):.1f} sigma)"
        out.append(ModelComparison(d=d, op=a.threshold, dp=b.threshold, difference=diff, stderr=se,
                                   ci_low=lo, ci_high=hi, z=z, verdict=verdict))
    return out


@fill_doc
def excess_fits(rows, forms=tuple(FORMS)):
    """Fit the relative excess over the finite-``p`` theory against ``d``.

    Parameters
    ----------
    rows : iterable
        Exact thresholds (see :func:`threshold_points`).
    forms : sequence of str, optional
        Keys of :data:`FORMS` (default: all of them).

    Returns
    -------
    list of ExcessFit
        For each form, the vanishing law :math:`A x` then :math:`B + A x` (the latter
        only with at least three points).

    Raises
    ------
    ValueError
        If a form is unknown, or fewer than two thresholds are finite.

    See Also
    --------
    validation.linear_memory.finite_size.threshold_points : Gaussian estimates being fitted.

    Notes
    -----
    With excesses :math:`r_i`, standard errors :math:`s_i` and design matrix
    :math:`X` (columns :math:`x(d_i)`, and 1 with an offset), the estimate is
    :math:`\\hat\\beta = (X^T S^{-2} X)^{-1} X^T S^{-2} r`, its covariance
    :math:`(X^T S^{-2} X)^{-1}` (the errors are taken as known, not rescaled by
    the residual scatter), and :math:`\\chi^2 = \\sum_i (r_i - X_i\\hat\\beta)^2 / s_i^2`
    on :math:`n - k` degrees of freedom.  A small p-value rejects the law; an
    offset whose 95 % interval excludes 0 says the excess does not vanish in
    that form.

    %(ref_finite_size)s

    Examples
    --------
    >>> rows = [{"d": d, "threshold": 1 + 0.5 / d, "ci": [1 + 0.5 / d - 0.01, 1 + 0.5 / d + 0.01],
    ...          "theory": 1.0, "theory_stderr": 0.0, "p_at_threshold": 10 * d} for d in (20, 40, 80)]
    >>> f = excess_fits(rows, forms=("1/d",))[0]
    >>> print(f"{f.amplitude:.4f}", f.chi2 < 1e-20, f.dof)          # exact data: chi2 at rounding level
    0.5000 True 2
    """
    for f in forms:
        if f not in FORMS:
            raise ValueError(f"forms must be among {sorted(FORMS)}, got {f!r}")
    pts = threshold_points(rows)
    if len(pts) < 2:
        raise ValueError(f"rows must hold at least 2 finite thresholds, got {len(pts)}")
    r = np.array([q.excess for q in pts])
    w = 1.0 / np.array([q.excess_stderr for q in pts]) ** 2
    out = []
    for form in forms:
        x = np.array([FORMS[form](q.d, q.p) for q in pts])
        for offset in (False, True):
            if offset and len(pts) < 3:
                continue
            X = np.column_stack([x, np.ones_like(x)]) if offset else x[:, None]
            F = X.T @ (w[:, None] * X)
            cov = np.linalg.inv(F)
            beta = cov @ (X.T @ (w * r))
            chi2 = float(np.sum(w * (r - X @ beta) ** 2))
            dof = len(pts) - X.shape[1]
            out.append(ExcessFit(form=form, offset=offset, amplitude=float(beta[0]),
                                 amplitude_stderr=float(math.sqrt(cov[0, 0])),
                                 constant=float(beta[1]) if offset else 0.0,
                                 constant_stderr=float(math.sqrt(cov[1, 1])) if offset else 0.0,
                                 chi2=chi2, dof=dof,
                                 p_value=float(stats.chi2.sf(chi2, dof)) if dof > 0 else math.nan,
                                 points=len(pts)))
    return out
