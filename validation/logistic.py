r"""Logistic regression: the one home of the binomial-logistic likelihood and its fits.

Two experiments fit a success probability :math:`\sigma(\eta) = 1 / (1 + e^{-\eta})`
to pass/fail trials, in two regimes that need two solvers of the same
likelihood:

* :func:`fit_logistic` -- several regressors, many runs (the token-retrieval
  boundary :math:`P(\mathrm{success} \mid \log N, \log d, \log L)`): Newton's method (iteratively
  reweighted least squares) with an optional ridge on the slopes, which keeps
  the estimate finite under complete separation; the inverse penalised Fisher
  information is the covariance.
* :func:`fit_threshold` -- one regressor, a few trials per value (the
  capacity threshold of a linear memory against its load, the adaptive design,
  the token-retrieval boundary against :math:`\log N`): the profile likelihood of
  the 1/2 point on a grid, the maximum refined by Nelder-Mead, and a
  likelihood-ratio (Wilks) interval, returned as one result class,
  :class:`ThresholdFit` (``params``, ``conf_int(alpha)``, ``predict``,
  ``summary()``).  This is kept apart from IRLS on purpose: with a few trials
  per value the data are often completely separated, where the
  maximum-likelihood slope is infinite, the Fisher information is singular
  (no Wald interval) and bootstrap resamples are degenerate, while the profile
  interval stays finite, bracketed by the values where successes and failures
  overlap (docs/linear_memory.md#empirical-capacity-threshold).

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
from hcizz.results import Result
from validation._docparams import fill_doc, returned_by

__all__ = ["log_likelihood", "LogisticFit", "fit_logistic", "ThresholdFit", "fit_threshold",
           "success_counts"]


def log_likelihood(eta, successes, trials=1):
    r"""Binomial log-likelihood of a logistic model, up to the binomial coefficients.

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
        :math:`\sum_i [k_i \eta_i - n_i\, \mathrm{softplus}(\eta_i)]` over the last axis.

    See Also
    --------
    validation.logistic.fit_logistic : The fit that maximises it.

    Notes
    -----
    :math:`k \log \sigma(\eta) + (n - k) \log \sigma(-\eta) = k \eta - n \log(1 + e^\eta)`;
    the softplus :math:`\log(1 + e^\eta) = \max(\eta, 0) + \mathrm{log1p}(e^{-|\eta|})` neither
    overflows nor loses digits for large :math:`|\eta|`.

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold;
    docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    Two Bernoulli trials at even odds, one success: :math:`2 \ln(1/2)`.

    >>> print(f"{log_likelihood(np.array([0.0, 0.0]), np.array([1, 0])):.6f}", f"{2 * np.log(0.5):.6f}")
    -1.386294 -1.386294
    """
    eta = np.asarray(eta, float)
    softplus = np.maximum(eta, 0.0) + np.log1p(np.exp(-np.abs(eta)))
    return (successes * eta - trials * softplus).sum(-1)


@fill_doc(record_links=returned_by(
    "validation.logistic.fit_logistic",
    "docs/token_retrieval.md#the-boundary-law"))
@dataclass(frozen=True)
class LogisticFit(Result):
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

    %(record_links)s
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
        Penalty :math:`\mathrm{ridge}\, \|b_{1:}\|^2 / 2` on the slopes (>= 0, default 0).
    maxiter : int, optional
        Newton steps at most (>= 1, default 100).
    tol : float, optional
        Stop when the largest step component is below ``tol`` (> 0).

    Returns
    -------
    LogisticFit
        Coefficients, covariance, log-likelihood, steps, convergence flag.

    See Also
    --------
    validation.logistic.fit_threshold : A logistic threshold with its profile interval.

    Notes
    -----
    Maximises :math:`l(b) - \mathrm{ridge}\, \|b_{1:}\|^2 / 2` with :math:`l` from
    :func:`log_likelihood` and :math:`\eta = X b`.  Newton step
    :math:`(X^T W X + P)^{-1} (X^T (k - n \mu) - P b)`, :math:`\mu = \sigma(X b)`,
    :math:`W = \mathrm{diag}(n \mu (1 - \mu))`,
    :math:`P = \mathrm{ridge}\, \mathrm{diag}(0, 1, \dots, 1)`, from
    ``b = 0``.  The log-likelihood is concave, so with ``ridge > 0`` the
    maximiser is unique and finite even under complete separation.

    References
    ----------
    McCullagh and Nelder, *Generalized Linear Models* (1989), section 4.4;
    docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    Two groups of four runs with 1 and 3 successes: the fitted probabilities
    are the observed fractions, :math:`\sigma(b_0) = 1/4` and :math:`\sigma(b_0 + b_1) = 3/4`.

    >>> X = np.column_stack([np.ones(8), np.repeat([0.0, 1.0], 4)])
    >>> f = fit_logistic(X, [1, 0, 0, 0, 1, 1, 1, 0])
    >>> print(np.round(f.coef, 6), np.round([-np.log(3), 2 * np.log(3)], 6))
    [-1.098612  2.197225] [-1.098612  2.197225]
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


@fill_doc
def success_counts(x, success):
    """Count successes and trials per distinct regressor value.

    Parameters
    ----------
    %(trial_x)s %(trial_success)s

    Returns
    -------
    list of list
        ``[x, successes, trials]`` rows sorted by ``x``.

    See Also
    --------
    validation.logistic.fit_threshold : Fits these counts.

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold

    Examples
    --------
    >>> success_counts([0.5, 0.4, 0.5], [True, True, False])
    [[0.4, 1, 1], [0.5, 1, 2]]
    """
    x = np.asarray(x, float).ravel()
    success = np.asarray(success, bool).ravel()
    xs, inv = np.unique(x, return_inverse=True)
    ks = np.bincount(inv, weights=success.astype(float), minlength=xs.size)
    ns = np.bincount(inv, minlength=xs.size)
    return [[float(a), int(k), int(n)] for a, k, n in zip(xs, ks, ns)]


def _profile(x, k, n, level, n_grid, n_width, wmin):
    r"""Profile likelihood of ``x50`` in :math:`\mathrm{expit}((x_{50} - x) / w)` (decreasing).

    Returns ``(x50, w, ci_low, ci_high, loglik, on_edge)``; see :func:`fit_threshold`.
    """
    xmin, xmax = float(x.min()), float(x.max())
    span = max(xmax - xmin, 0.05 * max(abs(xmax), 1e-12))
    lo, hi = xmin - span, xmax + span
    A = np.linspace(lo, hi, n_grid)
    Wd = np.exp(np.linspace(np.log(wmin), np.log(2 * span), n_width))

    def loglik(a50, w):
        return log_likelihood((a50[..., None] - x) / w[..., None], k, n)

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
    return a50, w, ci_low, ci_high, lmax, on_edge


@dataclass(frozen=True)
class ThresholdFit(Result):
    r"""Result of :func:`fit_threshold`: a logistic threshold with its profile-likelihood interval.

    The one threshold-fit result of the package (capacity thresholds, the
    adaptive design, token-retrieval boundaries).  In the style of a
    likelihood-model result: it holds the data summary and the fit settings,
    so :meth:`conf_int` at another level and :meth:`predict` are derived from
    it.

    Parameters
    ----------
    threshold : float
        Maximum-likelihood ``x50``, where the fitted success probability is 1/2
        (NaN when the data do not bracket it: all successes, all failures, or the
        maximum on the edge of the search range).
    width : float
        Maximum-likelihood logistic width ``w``.
    ci_low, ci_high : float
        Profile-likelihood interval of ``x50`` at ``level`` (``-inf`` / ``inf``
        where it reaches the edge of the search range).
    counts : list
        ``[x, successes, trials]`` rows.
    n : int
        Number of trials.
    level : float
        Confidence level of ``ci_low``, ``ci_high``.
    method : str
        How the fit was made.
    increasing : bool
        Direction of the model: False, :math:`\sigma((x_{50} - x) / w)` (success
        below the threshold, a capacity); True, :math:`\sigma((x - x_{50}) / w)`.
    loglik : float
        Maximum log-likelihood.
    min_width : float
        Smallest width considered.
    n_grid, n_width : int
        Grid sizes of the profile.

    See Also
    --------
    validation.logistic.fit_threshold : The function that returns it.

    References
    ----------
    Venzon and Moolgavkar, Appl. Statist. 37, 87 (1988);
    docs/linear_memory.md#empirical-capacity-threshold

    Examples
    --------
    >>> f = fit_threshold([0.5, 0.6, 0.7, 0.8], [1, 1, 0, 0])
    >>> f.params.shape, float(f.predict(0.4)) > 0.99
    ((2,), True)
    """

    threshold: float
    width: float
    ci_low: float
    ci_high: float
    counts: list
    n: int
    level: float
    method: str
    increasing: bool = False
    loglik: float = math.nan
    min_width: float = math.nan
    n_grid: int = 481
    n_width: int = 61

    _estimate = "threshold"

    @property
    def params(self):
        """``array([x50, w])``, the maximum-likelihood parameters."""
        return np.array([self.threshold, self.width])

    @property
    def halfwidth(self):
        """Half-width ``(ci_high - ci_low) / 2`` of the interval."""
        return (self.ci_high - self.ci_low) / 2

    def conf_int(self, alpha=0.05):
        """Return the profile-likelihood interval of the threshold at level ``1 - alpha``.

        Parameters
        ----------
        alpha : float, optional
            One minus the confidence level, in (0, 1) (default 0.05).

        Returns
        -------
        tuple of float
            ``(ci_low, ci_high)`` at ``level = 1 - alpha``: the stored interval
            when ``1 - alpha`` is the fit's level, else recomputed from the counts.
        """
        if isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and 0 < alpha < 1 \
                and math.isclose(1 - alpha, self.level, rel_tol=0, abs_tol=1e-12):
            return (self.ci_low, self.ci_high)
        level = check_real("alpha", alpha, low=0, high=1, low_open=True, high_open=True,
                           allow_array=False)
        f = fit_threshold([c[0] for c in self.counts for _ in range(c[2])],
                          [i < c[1] for c in self.counts for i in range(c[2])],
                          increasing=self.increasing, level=1 - level, n_grid=self.n_grid,
                          n_width=self.n_width, min_width=self.min_width)
        return (f.ci_low, f.ci_high)

    def predict(self, x):
        r"""Return the fitted success probability at ``x``.

        Parameters
        ----------
        x : array_like
            Regressor values.

        Returns
        -------
        ndarray or float
            :math:`\sigma((x_{50} - x) / w)` (``increasing``: :math:`\sigma((x - x_{50}) / w)`);
            NaN where the threshold is NaN.
        """
        z = (np.asarray(x, float) - self.threshold) / self.width
        out = special.expit(z if self.increasing else -z)
        return float(out) if np.ndim(out) == 0 else out

    def summary(self):
        """Return a short text report: the threshold, its interval, the width and the data.

        Returns
        -------
        str
            A few lines.
        """
        lines = [f"Logistic threshold fit ({'increasing' if self.increasing else 'decreasing'}), "
                 f"{self.n} trials at {len(self.counts)} values",
                 f"  threshold  {self.threshold:.6g}   {100 * self.level:g}% CI [{self.ci_low:.6g}, "
                 f"{self.ci_high:.6g}]",
                 f"  width      {self.width:.3g}   log-likelihood {self.loglik:.4g}",
                 "  x: successes/trials  " + ", ".join(f"{c[0]:.4g}: {c[1]}/{c[2]}" for c in self.counts)]
        return "\n".join(lines)


@fill_doc
def fit_threshold(x, success, *, increasing=False, level=0.95, n_grid=481, n_width=61, min_width=None):
    r"""Fit a logistic threshold to pass/fail trials, with a profile-likelihood interval.

    Model: :math:`P(\mathrm{success} \mid x) = \sigma((x_{50} - x) / w)` (``increasing=True``:
    :math:`\sigma((x - x_{50}) / w)`).  The one threshold fit of the package: capacity
    thresholds against load, the adaptive design, token-retrieval boundaries
    against :math:`\log N`.

    Parameters
    ----------
    %(trial_x)s %(trial_success)s
    increasing : bool, optional
        Direction of the model (default False: success below the threshold).
    level : float, optional
        Confidence level of the interval (in (0, 1), default 0.95).
    n_grid, n_width : int, optional
        Grid sizes in ``x50`` and :math:`\log w` of the profile (>= 3 and >= 2).
    min_width : float, optional
        Smallest width ``w`` considered (> 0; default ``1e-3 * median |x|``,
        at least ``1e-12``): keeps the likelihood bounded under complete
        separation.

    Returns
    -------
    ThresholdFit
        Threshold, width, interval, per-value counts, settings.

    Raises
    ------
    ValueError
        Empty or unequal inputs, non-finite ``x``, ``level`` outside (0, 1),
        ``min_width <= 0``, grid sizes too small.

    See Also
    --------
    validation.logistic.success_counts : The counts it fits.
    validation.adaptive.adaptive_threshold : A sequential design around this fit.

    Notes
    -----
    The profile :math:`\max_w l(x_{50}, w)` of the binomial log-likelihood
    :func:`log_likelihood` is evaluated on an ``n_grid x n_width`` grid
    (``x50`` over the data's range extended by one span on each side, ``w``
    log-uniform from ``min_width`` to twice the span); the maximum is refined
    by Nelder-Mead from the best grid point.  The interval is
    :math:`\{x_{50} : \max_w \ell(x_{50}, w) \geq \ell_{\max} - \chi^2_1(\text{level})/2\}`
    (Wilks), its ends on the grid.  A profile interval rather than Wald or a
    bootstrap: with a few trials per value the data are often
    (quasi-)separated, where the Fisher information is singular and bootstrap
    resamples are degenerate, while the profile interval stays finite.  The
    increasing model is fitted as the decreasing one in ``-x``.

    References
    ----------
    Venzon and Moolgavkar, Appl. Statist. 37, 87 (1988) (profile-likelihood
    intervals); docs/linear_memory.md#empirical-capacity-threshold

    Examples
    --------
    Two trials at each of four loads; the interval at 95 % and at 68 %:

    >>> f = fit_threshold([0.5, 0.5, 0.6, 0.6, 0.7, 0.7, 0.8, 0.8], [1, 1, 1, 0, 1, 0, 0, 0])
    >>> print(f"{f.threshold:.3f} [{f.ci_low:.3f}, {f.ci_high:.3f}]")
    0.650 [0.339, 0.961]
    >>> print("[{:.3f}, {:.3f}]".format(*f.conf_int(0.32)))
    [0.590, 0.710]
    >>> g = fit_threshold(np.log([4, 8, 16, 32]), [0, 0, 1, 1], increasing=True, min_width=0.01)
    >>> print(f"{np.exp(g.threshold):.2f}")
    11.47
    """
    level = check_real("level", level, low=0, high=1, low_open=True, high_open=True, allow_array=False)
    n_grid = check_int("n_grid", n_grid, low=3)
    n_width = check_int("n_width", n_width, low=2)
    xv = np.asarray(x, float).ravel()
    yv = np.asarray(success, float).ravel()
    if xv.size != yv.size or xv.size == 0:
        raise ValueError(f"x and success must have equal nonzero length, got {xv.size} and {yv.size}")
    if not np.all(np.isfinite(xv)):
        raise ValueError(f"x must be finite, got {xv[~np.isfinite(xv)][:3].tolist()}")
    if min_width is None:
        wmin = max(1e-3 * float(np.median(np.abs(xv))), 1e-12)
    else:
        wmin = check_real("min_width", min_width, low=0, low_open=True, allow_array=False)
    counts = success_counts(xv, yv.astype(bool))
    xs, ks, ns = (np.array(c, float) for c in zip(*counts))
    sign = -1.0 if increasing else 1.0
    a50, w, lo, hi, lmax, on_edge = _profile(sign * xs, ks, ns, level, n_grid, n_width, wmin)
    if increasing:
        a50, lo, hi = -a50, -hi, -lo
    if on_edge or yv.all() or not yv.any():
        a50 = math.nan
    return ThresholdFit(threshold=a50, width=w, ci_low=lo, ci_high=hi, counts=counts, n=int(xv.size),
                        level=level, method="logistic MLE, profile-likelihood CI",
                        increasing=bool(increasing), loglik=lmax, min_width=wmin, n_grid=n_grid,
                        n_width=n_width)
