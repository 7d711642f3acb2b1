r"""Replica-symmetric free entropy :math:`\Phi_p(q; \alpha)` and its minimiser (docs/theory_full_rank.md#replica-symmetric-free-entropy)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.optimize import minimize_scalar

from hcizz.checks import check_int, check_real, check_rng
from hcizz.estimate import Estimate
from hcizz.results import Result

from ._control_variates import cv_mean
from ._docparams import fill_doc
from .energy import N_TOP, cv_features, energy_G, log_f_p, sample_eta
from .finite_capacity import v_p_from_gaps

__all__ = ["free_entropy", "saddle", "Saddle", "entropic_term"]


@fill_doc
def entropic_term(q):
    r"""Compute the spherical Gardner entropy :math:`\frac12 \ln(1-q) + q/(2(1-q))`.

    Parameters
    ----------
    q : float or array_like
        Overlap, :math:`0 \le q < 1` (not validated here).

    Returns
    -------
    ndarray
        The entropic term, shape of ``q``.

    See Also
    --------
    replica.free_entropy : The RS free entropy, this term plus :math:`\alpha G_p(q)`.
    replica.energy_G : The energetic term :math:`G_p`.

    %(refs_paper_free_entropy)s

    Examples
    --------
    >>> print(entropic_term([0.0, 0.5]))
    [0.         0.15342641]
    """
    q = np.asarray(q, dtype=float)
    return 0.5 * np.log1p(-q) + q / (2.0 * (1.0 - q))


@fill_doc
def free_entropy(q, alpha, p=None, *, samples=400, rng=None):
    r"""Compute the RS free entropy :math:`\Phi_p(q; \alpha) = \frac12 \ln(1-q) + q/(2(1-q)) + \alpha G_p(q)`.

    Parameters
    ----------
    q : float or array_like
        Overlap, :math:`0 \le q < 1`.
    alpha : float
        Load :math:`p \ln p / d^2`, :math:`\alpha \ge 0`.
    p : int, optional
        ``None``: the large-``p`` limit :math:`G = -1/(1-q)` (exact float result).
        Otherwise ``G_p`` by :func:`replica.energy_G` (an :class:`Estimate`;
        arrays of ``q`` share the disorder samples).
    samples : int, optional
        Disorder samples, passed to :func:`replica.energy_G` for finite ``p``.
    rng : None, int, SeedSequence or Generator, optional
        Randomness, passed to :func:`replica.energy_G` for finite ``p``.

    Returns
    -------
    float, ndarray or Estimate
        A float or array (shape of ``q``) for ``p=None``, else an
        :class:`Estimate`.

    See Also
    --------
    replica.saddle : The minimiser over :math:`q` and the minimum.
    replica.free_entropy.entropic_term : The entropic part alone.
    replica.energy_G : The energetic term :math:`G_p(q)`.

    %(refs_paper_free_entropy)s

    Examples
    --------
    In the limit :math:`\Phi(1/2; 1/4) = \frac12 \ln \frac12`:

    >>> print(f"{free_entropy(0.5, 0.25):.8f}")
    -0.34657359
    >>> est = free_entropy(0.5, 0.25, 1000, samples=200, rng=0)
    >>> print(f"{est.value:.4f} +- {est.stderr:.4f}")
    -0.2765 +- 0.0007
    """
    q = check_real("q", q, low=0, high=1, high_open=True)
    alpha = check_real("alpha", alpha, low=0, high=math.inf, high_open=True, allow_array=False)
    ent = entropic_term(q)
    if p is None:
        out = ent - alpha / (1.0 - np.asarray(q))
        return float(out) if np.ndim(out) == 0 else out
    g = energy_G(q, p, samples=samples, rng=rng)
    return Estimate(ent + alpha * np.asarray(g.value), alpha * np.asarray(g.stderr) + 0.0,
                    g.n, g.info)


@dataclass(frozen=True)
class Saddle(Result):
    r"""Minimiser of the RS free entropy, as returned by :func:`saddle`.

    Parameters
    ----------
    alpha : float or ndarray
        Load(s).
    q : float or ndarray
        :math:`q^* = \arg\min_q \Phi_p(q; \alpha)` (1 beyond capacity).
    phi : float or ndarray
        :math:`\phi(\alpha) = \min_q \Phi_p` (``-inf`` beyond capacity).
    q_stderr, phi_stderr : float or ndarray
        Monte Carlo standard errors (0 in the limit ``p = None``).
    alpha_c : float
        Capacity of the functional used (1/2 in the limit; for finite ``p``
        :math:`\ln p / (2 \overline{V_p})` on the same disorder samples).
    info : dict
        Method details (``p``, ``samples``, ``E_V`` and its standard error, ...).

    See Also
    --------
    replica.saddle : Returns this record (its Examples show one).
    replica.alpha_c_finite : The finite-``p`` capacity with fresh samples.

    References
    ----------
    docs/theory_full_rank.md#finite-p-saddle-point

    Examples
    --------
    >>> print(saddle(0.2).summary())
    Saddle
      alpha       0.2
      q           0.4
      phi         -0.255413
      q_stderr    0
      phi_stderr  0
      alpha_c     0.5
      info        {'method': 'closed form, G = -1/(1-t)'}
      95% CI      [0.4, 0.4] (q)
    """

    alpha: object
    q: object
    phi: object
    q_stderr: object = 0.0
    phi_stderr: object = 0.0
    alpha_c: float = 0.5
    info: dict = field(default_factory=dict, compare=False)

    _estimate = "q"

    @fill_doc
    def conf_int(self, alpha=0.05):
        """Return the normal-approximation interval of ``q*`` at level ``1 - alpha``.

        %(conf_int_params)s

        Returns
        -------
        tuple
            ``(low, high)`` of ``q*``: ``q -/+ z q_stderr`` (exact, ``(q, q)``,
            in the limit ``p = None``).
        """
        return Estimate(self.q, self.q_stderr).conf_int(alpha)


def _limit_saddle(alpha):
    a = np.asarray(alpha, dtype=float)
    inside = a < 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(inside, 2.0 * np.minimum(a, 0.5), 1.0)
        phi = np.where(inside, 0.5 * np.log1p(-2.0 * np.minimum(a, 0.5)), -np.inf)
    return q, phi


class _CRNTable:
    """``u_i(t) = (1-t) ln f_p(t; eta_i) / ln p`` on a grid in ``r = sqrt(1-t)``,
    for fixed disorder samples (common random numbers), with ``u_i(1) = -V_p/ln p``."""

    def __init__(self, p, samples, rng, n_grid, n_top=N_TOP):
        self.p = p
        eta = sample_eta(p, samples, rng, n_top)
        lp = math.log(p)
        r = np.linspace(0.0, 1.0, n_grid)          # r = sqrt(1 - t)
        U = np.empty((samples, n_grid))
        for j, rj in enumerate(r[1:], start=1):
            t = 1.0 - rj * rj
            U[:, j] = rj * rj * log_f_p(max(t, 0.0), eta) / lp
        # t = 1: (1-t) ln f -> -V_p(eta) (Laplace); only competitors above eta_1 matter
        gaps = np.sort(np.where(eta.mask, eta.top, -np.inf), axis=1)[:, ::-1] - eta.eta1[:, None]
        gaps = np.where(np.isfinite(gaps), gaps, -1e6)
        V, k_act, ok = v_p_from_gaps(gaps, complete=not math.isfinite(eta.c0))
        # with a bulk: active set complete iff the first inactive gap is drawn,
        # or the bulk lies below eta_1 + x* (all bulk levels < c0)
        if math.isfinite(eta.c0):
            K = eta.mask.sum(axis=1)
            act = np.arange(gaps.shape[1])[None, :] < k_act[:, None]
            xs = np.where(act, gaps, 0.0).sum(axis=1) / (1.0 + k_act)
            ok = (k_act < K) | (eta.c0 - eta.eta1 <= xs)
        self.incomplete = int((~ok).sum())
        U[:, 0] = -V / lp
        self.r, self.U = r, U
        # control variates (cv_features): the estimate is a fixed linear
        # combination of the samples, hence smooth in r as well
        self.F = cv_features(eta, p)
        self.u = np.array([cv_mean(U[:, j], self.F)[0] for j in range(n_grid)])
        self.spl = CubicSpline(r, U, axis=1)
        self.mean_spl = CubicSpline(r, self.u)
        self.EV, self.EV_se, _ = cv_mean(V, self.F)
        self.samples = samples

    def phi(self, q, alpha):
        r = math.sqrt(1.0 - q)
        return float(entropic_term(q) + alpha * self.mean_spl(r) / (1.0 - q))


def saddle(alpha, p=None, *, samples=200, rng=0, n_grid=16):
    r"""Find the minimiser :math:`q^*` and value :math:`\phi(\alpha) = \min_{0 \le q<1} \Phi_p(q; \alpha)`.

    Parameters
    ----------
    alpha : float or array_like
        Load(s), :math:`\alpha \ge 0`.
    p : int, optional
        ``None``: the limit, :math:`q^* = 2 \alpha`, :math:`\phi = \frac12 \ln(1 - 2 \alpha)` for
        :math:`\alpha < 1/2` (:math:`q^* = 1`, :math:`\phi = -\infty` beyond).  Finite ``p``
        (:math:`2 \le p \le 10^9`): see Notes.
    samples : int
        Disorder samples for finite ``p``.
    rng : None, int, SeedSequence or Generator
        Seed of the common random numbers (default 0: deterministic).
    n_grid : int
        Number of ``t`` values at which :math:`G_p` is computed.

    Returns
    -------
    Saddle
        :math:`q^*`, :math:`\phi` and their standard errors, the capacity
        :math:`\alpha_c` of the functional used and method details.

    See Also
    --------
    replica.Saddle : The record returned.
    replica.free_entropy : The functional :math:`\Phi_p(q; \alpha)` minimised.
    replica.alpha_c_finite : The finite-``p`` capacity where :math:`q^* \to 1`.

    Notes
    -----
    Finite :math:`p`: a Monte Carlo :math:`G_p` with fresh samples at every :math:`q`
    is not a smooth function and has no well-defined minimiser.  We therefore fix
    one set of disorder samples (common random numbers, seed ``rng``) and compute,
    for every sample :math:`i`, :math:`u_i(t) = (1-t) \ln f_p(t; \eta_i)/\ln p` on a
    uniform grid of :math:`r = \sqrt{1-t}` in :math:`[0, 1]`; at :math:`r = 0` the
    Laplace limit :math:`u_i(1) = -V_p(\eta_i)/\ln p`
    (docs/theory_full_rank.md#laplace-limit-of-the-energy-term) is used.
    :math:`u_i` is smooth in :math:`r`, so a cubic spline of the sample mean gives a
    deterministic smooth :math:`G_p(q) = u(\sqrt{1-q})/(1-q)`, minimised by a grid
    search refined with Brent's method.  In these variables
    :math:`\Phi_p \sim (1/2 + \alpha u(0))/(1-q)` as :math:`q \to 1`: for
    :math:`\alpha \ge \alpha_c = \ln p/(2 \overline{V_p})` the infimum is
    :math:`-\infty` (:math:`q^* = 1`).

    Means over samples use the control variates
    :math:`\mathrm{He}_1, \dots, \mathrm{He}_4(\eta_1)`, :math:`M - E M`,
    :math:`M^2 - E M^2` and :math:`\eta_1 (M - E M)` with :math:`M` the largest
    competitor (a fixed linear combination of the samples, so the smoothness in
    :math:`t` is kept).  Uncertainty (delta method over the samples):
    :math:`\mathrm{se}(\phi) = \alpha\, \mathrm{se}(u(r^*))/(1-q^*)` (envelope theorem),
    and :math:`\mathrm{se}(q^*) = \alpha\, \mathrm{se}(G'(q^*))/\Phi''(q^*)` from the
    shift of the stationarity condition.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#finite-p-saddle-point

    Examples
    --------
    In the limit :math:`q^* = 2\alpha` and :math:`\phi = \frac12 \ln(1 - 2\alpha)`:

    >>> s = saddle(0.2)
    >>> print(f"{s.q:.6f} {s.phi:.6f}")
    0.400000 -0.255413
    """
    alpha = check_real("alpha", alpha, low=0, high=math.inf, high_open=True)
    if p is None:
        q, phi = _limit_saddle(alpha)
        if np.ndim(alpha) == 0:
            q, phi = float(q), float(phi)
        return Saddle(alpha, q, phi, 0.0 * np.asarray(q), 0.0 * np.asarray(q), 0.5,
                      {"method": "closed form, G = -1/(1-t)"})
    p = check_int("p", p, low=2, high=10**9)
    samples = check_int("samples", samples, low=10)
    n_grid = check_int("n_grid", n_grid, low=8)
    tab = _CRNTable(p, samples, check_rng(rng), n_grid)
    lp = math.log(p)
    a_c = lp / (2.0 * tab.EV)
    alphas = np.atleast_1d(alpha)
    qs, phis, qse, phise = [], [], [], []
    qgrid = 1.0 - np.linspace(1.0, 0.0, 400)[:-1] ** 2          # r grid, excluding q = 1
    for a in alphas:
        if a >= a_c:
            qs.append(1.0); phis.append(-math.inf); qse.append(0.0); phise.append(0.0)
            continue
        vals = [tab.phi(q, a) for q in qgrid]
        j = int(np.argmin(vals))
        lo, hi = qgrid[max(j - 1, 0)], qgrid[min(j + 1, len(qgrid) - 1)]
        if hi > lo:
            res = minimize_scalar(lambda q: tab.phi(q, a), bounds=(lo, hi), method="bounded",
                                  options={"xatol": 1e-10})
            qstar, phistar = float(res.x), float(res.fun)
        else:
            qstar, phistar = float(qgrid[j]), float(vals[j])
        if qstar <= 0.0 and vals[0] <= min(vals):
            qstar, phistar = 0.0, tab.phi(0.0, a)
        r = math.sqrt(1.0 - qstar)
        ui = tab.spl(r)                                   # per-sample u_i(r*)
        phise.append(a * cv_mean(ui, tab.F)[1] / (1.0 - qstar))
        # G_i'(q) = d/dq [u_i(r)/(1-q)] with dr/dq = -1/(2r)
        dui = tab.spl(r, 1)
        gi = ui / (1.0 - qstar) ** 2 + dui * (-1.0 / (2.0 * r)) / (1.0 - qstar)
        h = 1e-4 * max(min(qstar, 1.0 - qstar), 1e-3)
        d2 = (tab.phi(min(qstar + h, 1 - 1e-12), a) - 2 * phistar
              + tab.phi(max(qstar - h, 0.0), a)) / (h * h)
        qse.append(a * cv_mean(gi, tab.F)[1] / d2 if d2 > 0 else math.nan)
        qs.append(qstar); phis.append(phistar)
    info = {"p": p, "samples": samples, "n_grid": n_grid, "E_V": tab.EV,
            "alpha_c_stderr": a_c * tab.EV_se / tab.EV,
            "E_V_stderr": tab.EV_se, "incomplete_active_sets": tab.incomplete,
            "method": "common random numbers, spline in sqrt(1-t)"}
    if np.ndim(alpha) == 0:
        return Saddle(float(alpha), qs[0], phis[0], qse[0], phise[0], a_c, info)
    return Saddle(alphas, np.array(qs), np.array(phis), np.array(qse), np.array(phise), a_c, info)
