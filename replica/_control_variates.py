"""Control-variate (regression) estimator of a mean, with its standard error."""
from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.hermite_e import hermevander

__all__ = ["cv_mean", "hermite_features"]


def hermite_features(x, degree=3):
    """``He_1(x) .. He_degree(x)`` (probabilists' Hermite): mean 0 under N(0,1)."""
    return hermevander(np.asarray(x, dtype=float), degree)[:, 1:]


def cv_mean(y, F):
    """Mean of ``y`` using zero-mean control variates ``F`` (shape ``(n, k)``).

    ``mean(y) - b^T mean(F)`` with ``b`` the least-squares coefficients of ``y``
    on ``F`` (plus intercept).  Unbiased up to ``O(1/n)`` (``b`` estimated);
    the standard error is ``std(residual)/sqrt(n - k - 1)``.  Returns
    ``(mean, stderr, variance_ratio)`` where ``variance_ratio`` is the residual
    variance over the variance of ``y`` (the sample-size saving factor).
    """
    y = np.asarray(y, dtype=float)
    n, k = F.shape
    if n < 5 * (k + 1):             # too few samples to fit the coefficients: plain mean
        return float(y.mean()), float(y.std(ddof=1) / math.sqrt(n)), 1.0
    A = np.column_stack([np.ones(n), F])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    mean = float(coef[0])         # intercept = mean(y) - b^T mean(F)
    se = float(math.sqrt(resid @ resid / (n - k - 1) / n))
    vy = float(y.var())
    return mean, se, (float(resid.var() / vy) if vy > 0 else 0.0)
