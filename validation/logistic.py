r"""Logistic regression: the one home of the binomial-logistic likelihood and its fits.

Two experiments fit a success probability ``sigma(eta) = 1 / (1 + exp(-eta))``
to pass/fail trials, in two regimes that need two solvers of the same
likelihood:

* :func:`fit_logistic` -- several regressors, many runs (the token-retrieval
  boundary ``P(success | log N, log d, log L)``): Newton's method (iteratively
  reweighted least squares) with an optional ridge on the slopes, which keeps
  the estimate finite under complete separation; the inverse penalised Fisher
  information is the covariance.
* :func:`threshold_profile` -- one regressor, a few seeds per load (the
  capacity threshold of a linear memory, ``P(success | alpha) =
  sigma((alpha50 - alpha) / w)``): the profile likelihood of ``alpha50`` on a
  grid, the maximum refined by Nelder-Mead, and a likelihood-ratio (Wilks)
  interval.  This is kept apart from IRLS on purpose: with a few seeds per
  load the data are often completely separated, where the maximum-likelihood
  slope is infinite, the Fisher information is singular (no Wald interval)
  and bootstrap resamples are degenerate, while the profile interval stays
  finite, bracketed by the loads where successes and failures overlap
  (docs/linear_memory.md#empirical-capacity-threshold).

Both evaluate :func:`log_likelihood`.  ``scipy.special.expit`` is the
sigmoid.  ``statsmodels`` would give
the unpenalised IRLS fit too, but it is not a dependency of the package and
has no profile interval under separation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
from scipy import optimize, special, stats

from hcizz.checks import check_int, check_real

__all__ = ["log_likelihood", "LogisticFit", "fit_logistic", "ThresholdProfile",
           "threshold_profile"]


def log_likelihood(eta, successes, trials=1):
    """Binomial log-likelihood of a logistic model, up to the binomial coefficients.

    Parameters
    ----------
    eta : array_like
        Linear predictor (log-odds of success), last axis over observations.
    successes : array_like
        Successes per observation (broadcast against ``eta``).
    trials : array_like, optional
        Trials per observation (default 1: Bernoulli outcomes).

    Returns
    -------
    ndarray or float
        ``sum_i [k_i eta_i - n_i softplus(eta_i)]`` over the last axis.

    Notes
    -----
    ``k log sigma(eta) + (n - k) log sigma(-eta) = k eta - n log(1 + e^eta)``;
    the softplus ``log(1 + e^eta) = max(eta, 0) + log1p(e^-|eta|)`` neither
    overflows nor loses digits for large ``|eta|``.

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold;
    docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    Two Bernoulli trials at even odds, one success: ``2 ln(1/2)``.

    >>> bool(np.isclose(log_likelihood(np.array([0.0, 0.0]), np.array([1, 0])), 2 * np.log(0.5)))
    True
    """
    eta = np.asarray(eta, float)
    softplus = np.maximum(eta, 0.0) + np.log1p(np.exp(-np.abs(eta)))
    return (successes * eta - trials * softplus).sum(-1)


@dataclass(frozen=True)
class LogisticFit:
    """Result of :func:`fit_logistic`.

    Parameters
    ----------
    coef : ndarray
        Estimated coefficients (one per column of the design matrix).
    cov : ndarray
        Inverse penalised Fisher information at ``coef`` (the covariance of
        the estimate for ``ridge = 0``).
    loglik : float
        :func:`log_likelihood` at ``coef`` (without the penalty).
    n_iter : int
        Newton steps taken.
    converged : bool
        Whether the last step was below the tolerance.

    References
    ----------
    docs/token_retrieval.md#the-boundary-law
    """

    coef: np.ndarray
    cov: np.ndarray
    loglik: float
    n_iter: int
    converged: bool

    @property
    def stderr(self):
        """Standard errors ``sqrt(diag(cov))``."""
        return np.sqrt(np.diag(self.cov))

    def to_dict(self):
        """Return the fields as plain JSON values.

        Returns
        -------
        dict
            ``coef`` and ``cov`` as lists, the other fields as they are.
        """
        return {f.name: (v.tolist() if isinstance(v := getattr(self, f.name), np.ndarray) else v)
                for f in fields(self)}


def fit_logistic(X, successes, trials=1, *, ridge=0.0, maxiter=100, tol=1e-10):
    r"""Fit a logistic regression by Newton's method (IRLS), optionally ridge-penalised.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Design matrix; column 0 is the intercept (not penalised).
    successes : array_like, shape (n,)
        Successes per row (0/1 for Bernoulli outcomes).
    trials : array_like, optional
        Trials per row (default 1).
    ridge : float, optional
        Penalty ``ridge ||b_{1:}||^2 / 2`` on the slopes (>= 0, default 0).
    maxiter : int, optional
        Newton steps at most (>= 1, default 100).
    tol : float, optional
        Stop when the largest step component is below ``tol`` (> 0).

    Returns
    -------
    LogisticFit
        Coefficients, covariance, log-likelihood, steps, convergence flag.

    Notes
    -----
    Maximises ``l(b) - ridge ||b_{1:}||^2 / 2`` with ``l`` from
    :func:`log_likelihood` and ``eta = X b``.  Newton step
    ``(X^T W X + P)^{-1} (X^T (k - n mu) - P b)``, ``mu = expit(X b)``,
    ``W = diag(n mu (1 - mu))``, ``P = ridge diag(0, 1, ..., 1)``, from
    ``b = 0``.  The log-likelihood is concave, so with ``ridge > 0`` the
    maximiser is unique and finite even under complete separation.

    References
    ----------
    McCullagh and Nelder, *Generalized Linear Models* (1989), section 4.4;
    docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    Two groups of four runs with 1 and 3 successes: the fitted probabilities
    are the observed fractions, ``expit(b0) = 1/4`` and ``expit(b0 + b1) = 3/4``.

    >>> X = np.column_stack([np.ones(8), np.repeat([0.0, 1.0], 4)])
    >>> f = fit_logistic(X, [1, 0, 0, 0, 1, 1, 1, 0])
    >>> bool(np.allclose(f.coef, [-np.log(3), 2 * np.log(3)], rtol=0, atol=1e-9))
    True
    """
    ridge = check_real("ridge", ridge, low=0, allow_array=False)
    maxiter = check_int("maxiter", maxiter, low=1)
    tol = check_real("tol", tol, low=0, low_open=True, allow_array=False)
    X = np.asarray(X, float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d design matrix, got shape {X.shape}")
    k = np.asarray(successes, float)
    n = np.broadcast_to(np.asarray(trials, float), k.shape)
    if k.shape != (X.shape[0],):
        raise ValueError(f"successes must have one entry per row of X ({X.shape[0]}), got shape {k.shape}")
    b = np.zeros(X.shape[1])
    P = ridge * np.eye(X.shape[1])
    P[0, 0] = 0.0
    converged, it = False, 0
    for it in range(1, maxiter + 1):
        mu = special.expit(X @ b)
        H = (X * (n * mu * (1 - mu))[:, None]).T @ X + P
        step = np.linalg.solve(H, X.T @ (k - n * mu) - P @ b)
        b = b + step
        if np.max(np.abs(step)) < tol:
            converged = True
            break
    eta = X @ b
    mu = special.expit(eta)
    H = (X * (n * mu * (1 - mu))[:, None]).T @ X + P
    return LogisticFit(coef=b, cov=np.linalg.inv(H), loglik=float(log_likelihood(eta, k, n)),
                       n_iter=it, converged=converged)


@dataclass(frozen=True)
class ThresholdProfile:
    """Result of :func:`threshold_profile`.

    Parameters
    ----------
    threshold : float
        Maximum-likelihood ``x50`` (where the success probability is 1/2).
    width : float
        Maximum-likelihood width ``w``.
    ci_low, ci_high : float
        Profile-likelihood interval of ``x50`` (``-inf`` / ``inf`` where it
        reaches the edge of the search range).
    loglik : float
        Maximum log-likelihood.
    on_edge : bool
        The maximum sits on the first or last grid cell of ``x50`` (the data
        do not bracket a crossing of 1/2).

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold
    """

    threshold: float
    width: float
    ci_low: float
    ci_high: float
    loglik: float
    on_edge: bool

    def to_dict(self):
        """Return the fields as a plain ``dict``.

        Returns
        -------
        dict
            One entry per field.
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}


def threshold_profile(x, successes, trials, *, level=0.95, n_grid=481, n_width=61, min_width):
    r"""Fit ``P(success | x) = expit((x50 - x) / w)`` with a profile-likelihood interval for ``x50``.

    Parameters
    ----------
    x : array_like
        Distinct regressor values (e.g. loads), 1-d.
    successes, trials : array_like
        Successes and trials at each ``x``.
    level : float, optional
        Confidence level of the interval (in (0, 1), default 0.95).
    n_grid, n_width : int, optional
        Grid sizes in ``x50`` and ``log w`` (>= 3 and >= 2).
    min_width : float
        Smallest width ``w`` considered (> 0): keeps the likelihood bounded
        under complete separation.

    Returns
    -------
    ThresholdProfile
        MLE, interval, maximum log-likelihood and the edge flag.

    Notes
    -----
    The search range of ``x50`` extends one data span beyond the data on
    each side; ``w`` runs log-uniformly from ``min_width`` to twice the span.
    The profile ``max_w l(x50, w)`` is evaluated on the grid; the maximum is
    refined by Nelder-Mead (``w >= min_width``) from the best grid point.
    The interval is ``{x50 : max_w l(x50, w) >= l_max - chi2_1(level)/2}``
    (Wilks).  A profile interval rather than a Wald interval or a bootstrap:
    with a few trials per ``x`` the data are often (quasi-)separated, the
    Fisher information is singular and bootstrap resamples are degenerate,
    while the profile interval stays finite.

    References
    ----------
    Venzon and Moolgavkar, Appl. Statist. 37, 87 (1988) (profile-likelihood
    intervals); docs/linear_memory.md#empirical-capacity-threshold

    Examples
    --------
    Complete separation between 0.6 and 0.7: the interval brackets the gap.

    >>> f = threshold_profile([0.5, 0.6, 0.7, 0.8], [1, 1, 0, 0], [1, 1, 1, 1], min_width=1e-3)
    >>> bool(0.5 <= f.ci_low <= 0.6 < 0.7 <= f.ci_high <= 0.8)
    True
    """
    level = check_real("level", level, low=0, high=1, low_open=True, high_open=True,
                       allow_array=False)
    n_grid = check_int("n_grid", n_grid, low=3)
    n_width = check_int("n_width", n_width, low=2)
    wmin = check_real("min_width", min_width, low=0, low_open=True, allow_array=False)
    xs, ks, ns = (np.asarray(v, float).ravel() for v in (x, successes, trials))
    if not (xs.size == ks.size == ns.size) or xs.size == 0:
        raise ValueError(f"x, successes and trials must have equal nonzero length, "
                         f"got {xs.size}, {ks.size} and {ns.size}")
    xmin, xmax = float(xs.min()), float(xs.max())
    span = max(xmax - xmin, 0.05 * max(abs(xmax), 1e-12))
    lo, hi = xmin - span, xmax + span
    A = np.linspace(lo, hi, n_grid)
    Wd = np.exp(np.linspace(np.log(wmin), np.log(2 * span), n_width))

    def loglik(a50, w):
        return log_likelihood((a50[..., None] - xs) / w[..., None], ks, ns)

    ll = loglik(A[:, None], np.broadcast_to(Wd, (n_grid, n_width)))
    prof = ll.max(axis=1)
    i, j = np.unravel_index(np.argmax(ll), ll.shape)

    def nll(v):
        w = math.exp(v[1])
        if w < wmin:
            return np.inf
        return -float(loglik(np.array(v[0]), np.array(w)))

    r = optimize.minimize(nll, [A[i], math.log(Wd[j])], method="Nelder-Mead",
                          options={"xatol": 1e-7 * span, "fatol": 1e-10})
    a50, w = (float(r.x[0]), math.exp(r.x[1])) if r.fun <= -ll[i, j] else (float(A[i]), float(Wd[j]))
    lmax = max(-float(r.fun), float(ll[i, j]))
    cut = lmax - stats.chi2.ppf(level, 1) / 2
    inside = np.nonzero(prof >= cut)[0]
    ci_low = -math.inf if inside[0] == 0 else float(A[inside[0]])
    ci_high = math.inf if inside[-1] == n_grid - 1 else float(A[inside[-1]])
    cell = (hi - lo) / (n_grid - 1)
    on_edge = bool(a50 <= lo + cell or a50 >= hi - cell)
    return ThresholdProfile(threshold=a50, width=w, ci_low=ci_low, ci_high=ci_high,
                            loglik=lmax, on_edge=on_edge)
