r"""Normalised scores of the capacity-point memory at finite ``p`` (the minimiser of ``V_p``).

At the finite-``p`` capacity the replica overlap tends to 1 and, for one fact,
the Laplace argument of ``docs/theory_full_rank.md`` reduces the scores of the
surviving memory to the minimiser of

.. math::

    V_p(\eta) = \min_{x \ge 0} \Big[\frac{x^2}{2}
                + \frac12 \sum_{\rho \ge 2} (\eta_\rho - \eta_1 - x)_+^2\Big],

where ``eta`` are the scores of the centre of the solution space in units of
the competitor standard deviation: the correct score rises by ``x*`` and every
competitor still above the new level is pushed down onto it.  With the ``k*``
active competitors (the largest ``k*`` ones), ``x* (1 + k*) = sum of their
gaps``, so the correct score becomes the *mean of itself and the active
competitors*:

.. math::

    c = \eta_1 + x^* = \frac{\eta_1 + \sum_{j \le k^*} \eta_{(j)}}{k^* + 1},

the ``k*`` active competitors end exactly at ``c`` (the margin is zero) and
the others keep their score.  Below the capacity (replica overlap ``q < 1``),
:func:`typical_scores` samples the scores of a typical (volume-weighted)
memory instead.  See
``docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtri_exp

from hcizz.checks import check_int, check_real, check_rng

from ._docparams import fill_doc
from .finite_capacity import v_p_from_gaps

__all__ = ["pinned_scores", "typical_scores"]

_MAX_NUMBERS = 2 * 10**7


def _check_sizes(p, samples, n_top):
    """``samples`` and ``n_top`` (default ``min(10, p - 1)``) checked against a checked ``p``."""
    samples = check_int("samples", samples, low=2)
    if samples * p > _MAX_NUMBERS:
        raise ValueError(f"samples * p must be <= {_MAX_NUMBERS:.0e}, got {samples} * {p} = {samples * p}")
    return samples, check_int("n_top", min(10, p - 1) if n_top is None else n_top, low=1, high=p - 1)


def _draw_eta(p, samples, rng):
    """The generator, then ``eta_1`` of every row and the ``(samples, p - 1)`` competitors, descending."""
    rng = check_rng(rng)
    eta1 = rng.standard_normal(samples)
    return rng, eta1, -np.sort(-rng.standard_normal((samples, p - 1)), axis=1)


@fill_doc
def pinned_scores(p, *, samples=2000, rng=None, n_top=None, normalise=True):
    r"""Sample the per-fact scores of the capacity-point memory at finite ``p``.

    Parameters
    ----------
    p : int
        Number of candidates per fact, ``2 <= p`` and ``samples * p <= 2e7``
        (all ``p`` scores are drawn, as for a trained memory).
    %(fact_samples)s %(fact_rng)s %(n_top)s
    normalise : bool
        Divide each row by the sample standard deviation (``ddof=1``) of its
        ``p - 1`` competitor scores *after* the shift, as done for trained
        memories (:func:`validation.linear_memory.mechanism.normalized_scores`);
        ``False`` keeps the units of the unperturbed competitors.

    Returns
    -------
    dict of ndarray
        ``correct`` (samples,), ``row_max`` (largest competitor), ``margin``
        (``correct - row_max``; zero whenever ``k_active >= 1``), ``k_active``
        (int), ``x`` (the shift ``x*``, unnormalised), ``top`` (samples, n_top):
        the largest competitors after the shift, descending, ``gaps``
        (``correct - top``), ``V`` (the value ``V_p(eta)``).

    Raises
    ------
    ValueError
        For ``p``, ``samples``, ``n_top`` or ``rng`` outside their ranges.

    See Also
    --------
    replica.pinned_scores.typical_scores : The scores of a typical memory below capacity.
    replica.finite_capacity.v_p_from_gaps : The minimiser applied to each row.
    replica.alpha_c_finite : The capacity at which these scores hold.

    Notes
    -----
    Exact for the model (no quadrature): every row draws :math:`\eta` i.i.d.
    :math:`N(0, 1)` (:math:`\eta_1` for all rows first, then the
    ``(samples, p - 1)`` competitors), sorts the competitors and applies the
    closed-form minimiser of :func:`replica.finite_capacity.v_p_from_gaps`: the
    correct score becomes

    .. math::

        c = \eta_1 + x^* = \frac{\eta_1 + \sum_{j \le k^*} \eta_{(j)}}{k^* + 1},

    the mean of itself and the :math:`k^*` active competitors, which end at
    :math:`c`.  The margin is zero with probability :math:`1 - 1/p` (the correct
    score is not the largest :math:`\eta`); the prediction for the margins of a
    memory trained *below* capacity is therefore not contained in this limit (the
    margins there scale with the distance to capacity).

    References
    ----------
    arXiv:2605.10795 (linear associative memories: pinned correct scores).

    Examples
    --------
    Almost every fact has active competitors, pinned at zero margin:

    >>> s = pinned_scores(163, samples=500, rng=0)
    >>> print(f"{np.mean(s['k_active'] > 0):.3f} {s['margin'][s['k_active'] > 0].max()}")
    0.996 0.0
    >>> print(f"{s['correct'].mean():.3f} +- {s['correct'].std() / np.sqrt(500):.3f}")
    1.949 +- 0.012
    """
    p = check_int("p", p, low=2)
    samples, n_top = _check_sizes(p, samples, n_top)
    if normalise and p < 3:
        raise ValueError(f"p must be >= 3 with normalise=True (a standard deviation of p - 1 competitors), got {p}")
    rng, eta1, comp = _draw_eta(p, samples, rng)
    g = comp - eta1[:, None]
    V, k, _ = v_p_from_gaps(g, complete=True)
    cs = np.cumsum(g, axis=1)
    rows = np.arange(samples)
    x = np.where(k > 0, cs[rows, np.maximum(k - 1, 0)] / (k + 1.0), 0.0)
    c = eta1 + x
    after = np.minimum(comp, c[:, None])                  # active ones pushed onto c
    scale = after.std(axis=1, ddof=1) if normalise else np.ones(samples)
    top = after[:, :n_top] / scale[:, None]
    cn = c / scale
    # exact zero margin for active rows (avoid rounding in c - min(comp, c))
    margin = np.where(k > 0, 0.0, (eta1 - comp[:, 0]) / scale)
    return {"correct": cn, "row_max": np.where(k > 0, cn, top[:, 0]), "margin": margin,
            "k_active": k, "x": x, "top": top, "gaps": cn[:, None] - top, "V": V}


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_Q_MAX = 1.0 - 1e-6
_MAX_ROUNDS = 10_000


def _log_post(xi, b):
    """``ln phi(xi) + sum_rho ln Phi(xi + b_rho)`` per row, its first and second derivative."""
    a = xi[:, None] + b
    lp = log_ndtr(a)
    lam = np.exp(-0.5 * a * a - _LOG_SQRT_2PI - lp)           # inverse Mills ratio phi/Phi
    val = -0.5 * xi * xi - _LOG_SQRT_2PI + lp.sum(axis=1)
    d1 = -xi + lam.sum(axis=1)
    d2 = -1.0 - (lam * (a + lam)).sum(axis=1)
    return val, d1, d2


@fill_doc
def typical_scores(p, q, *, samples=1000, rng=None, n_top=None, normalise=True, newton=8):
    r"""Sample the per-fact scores of a typical memory at replica overlap ``q < 1`` (below capacity).

    Parameters
    ----------
    p : int
        Number of candidates per fact, ``3 <= p`` (``2 <= p`` with
        ``normalise=False``) and ``samples * p <= 2e7``.
    q : float
        Replica-symmetric overlap, ``0 <= q <= 1 - 1e-6`` (e.g.
        ``replica.saddle(alpha, p).q``; closer to 1 the log-densities, of order
        ``q/(1-q)``, lose the precision the rejection step needs: use
        :func:`pinned_scores`, the limit ``q -> 1``).
    %(fact_samples)s %(fact_rng)s %(n_top)s
    normalise : bool
        Divide each row by the sample standard deviation (``ddof=1``) of its
        ``p - 1`` competitor scores, as for trained memories
        (:func:`validation.linear_memory.mechanism.normalized_scores`).
    newton : int
        Newton steps towards the mode of the correct candidate's noise
        (``>= 0``; only the efficiency of the exact rejection step depends on it).

    Returns
    -------
    dict of ndarray
        ``correct`` (samples,), ``row_max`` (largest competitor), ``margin``
        (``correct - row_max``, positive), ``top`` (samples, n_top): the largest
        competitors, descending, ``gaps`` (``correct - top``), ``xi`` (the
        correct candidate's noise) and ``proposals`` (rejection-step proposals
        per row, >= 1).

    Raises
    ------
    ValueError
        For ``p``, ``q``, ``samples``, ``n_top``, ``newton`` or ``rng`` outside their ranges.
    RuntimeError
        If the rejection step does not finish (it accepts with probability
        about the ratio of the posterior width of ``xi`` to 1; not observed in
        the valid range of ``q``).

    See Also
    --------
    replica.pinned_scores.pinned_scores : The limit :math:`q \to 1` (at capacity).
    replica.saddle : The overlap :math:`q^*` at a given load.

    Notes
    -----
    In the replica-symmetric solution the score of candidate :math:`\rho` of one
    fact, for one memory drawn uniformly from the solution space, is
    :math:`z_\rho = \sqrt{q}\, \eta_\rho + \sqrt{1 - q}\, \zeta_\rho` with a quenched
    part :math:`\eta` (i.i.d. :math:`N(0, 1)`, *not* reweighted) and a memory's own
    part :math:`\zeta` (i.i.d. :math:`N(0, 1)`) conditioned on recall,
    :math:`z_1 > z_\rho` for every :math:`\rho \ge 2`; the normalising constant is
    :math:`f_p(q; \eta)` of
    ``docs/theory_full_rank.md#replica-symmetric-free-entropy``.  With
    :math:`\beta = \sqrt{q/(1-q)}` and :math:`\xi = \zeta_1` recall reads
    :math:`\zeta_\rho < \xi + \beta (\eta_1 - \eta_\rho)`, so exactly:

    * :math:`\xi` has the density proportional to
      :math:`\varphi(\xi) \prod_\rho \Phi(\xi + \beta (\eta_1 - \eta_\rho))`; its
      logarithm :math:`l` is concave with :math:`l'' \le -1`, hence bounded above by
      the Gaussian :math:`l(c) + l'(c)(\xi - c) - (\xi - c)^2/2` for every :math:`c`.
      We take :math:`c` from a few Newton steps towards the mode and sample
      :math:`\xi` by rejection from that :math:`N(c + l'(c), 1)` envelope (exact for
      any :math:`c`);
    * given :math:`\xi`, the :math:`\zeta_\rho` are independent normals truncated to
      :math:`(-\infty, \xi + \beta (\eta_1 - \eta_\rho))`, drawn by the inverse CDF
      in log space (:func:`scipy.special.ndtri_exp`).

    As :math:`q \to 1` the scores divided by :math:`\sqrt{q}` tend row by row to
    those of :func:`pinned_scores` on the same :math:`\eta`, at the rate
    :math:`\sqrt{(1-q)/q}`: :math:`\xi` sits at :math:`\beta x^*` up to :math:`O(1)`.
    The margin of a fact with active competitors vanishes faster, like
    :math:`1 - q`: an active competitor's bound
    :math:`\xi + \beta (\eta_1 - \eta_\rho)` is of order :math:`-\beta`, and a normal
    truncated below :math:`-a` lies within about :math:`1/a` of it, so the margin is
    :math:`\sqrt{1-q}` times :math:`O(1/\beta)`.  At :math:`q = 0` the correct score
    is the largest of :math:`p` i.i.d. normals.  Draw order: :math:`\eta_1` of all
    rows, the ``(samples, p - 1)`` competitors (as :func:`pinned_scores`, so the
    same seed gives the same :math:`\eta`), then the rejection step, then the
    :math:`\zeta_\rho`.

    References
    ----------
    arXiv:2605.10795 (RS free entropy of linear associative memories);
    docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p

    Examples
    --------
    Below capacity every margin is positive, though small:

    >>> s = typical_scores(163, 0.9, samples=300, rng=0)
    >>> print(f"{s['margin'].min():.2e} {s['margin'].mean():.4f}")
    1.28e-04 0.0558
    >>> print(f"{s['correct'].mean():.3f} +- {s['correct'].std() / np.sqrt(300):.3f}")
    2.124 +- 0.014
    """
    p = check_int("p", p, low=2 if not normalise else 3)
    q = check_real("q", q, low=0.0, high=_Q_MAX, allow_array=False)
    samples, n_top = _check_sizes(p, samples, n_top)
    newton = check_int("newton", newton, low=0)
    rng, eta1, comp = _draw_eta(p, samples, rng)
    beta = math.sqrt(q / (1.0 - q))
    b = beta * (eta1[:, None] - comp)                      # recall: zeta_rho < xi + b_rho
    # centre of the envelope: Newton steps from where the largest competitor's bound is 0
    c = np.maximum(0.0, -b[:, 0])
    for _ in range(newton):
        _, d1, d2 = _log_post(c, b)
        step = d1 / np.minimum(d2, -1.0)                   # l'' <= -1 exactly; guard rounding
        c = np.where(np.isfinite(step), c - step, c)
    lc, d1c, _ = _log_post(c, b)
    mean = c + d1c                                         # envelope N(mean, 1), log height lc + d1c^2/2
    xi = np.empty(samples)
    tries = np.zeros(samples, dtype=np.int64)
    todo = np.arange(samples)
    for _ in range(_MAX_ROUNDS):
        if not todo.size:
            break
        x = mean[todo] + rng.standard_normal(todo.size)
        u = rng.random(todo.size)
        lx, _, _ = _log_post(x, b[todo])
        env = lc[todo] + d1c[todo] * (x - c[todo]) - 0.5 * (x - c[todo]) ** 2
        ok = np.log(u) < np.minimum(lx - env, 0.0)        # lx <= env up to rounding
        tries[todo] += 1
        xi[todo[ok]] = x[ok]
        todo = todo[~ok]
    if todo.size:                                          # pragma: no cover - a precision failure
        raise RuntimeError(f"typical_scores: {todo.size} rows not sampled in {_MAX_ROUNDS} rounds (q = {q})")
    a = xi[:, None] + b
    zeta = ndtri_exp(np.log(rng.random(a.shape)) + log_ndtr(a))          # N(0,1) given zeta < a
    zeta = np.minimum(zeta, a)                             # rounding at the cut
    sq, sr = math.sqrt(q), math.sqrt(1.0 - q)
    z1 = sq * eta1 + sr * xi
    zc = sq * comp + sr * zeta
    scale = zc.std(axis=1, ddof=1) if normalise else np.ones(samples)
    zc = -np.sort(-zc, axis=1)
    top = zc[:, :n_top] / scale[:, None]
    cn = z1 / scale
    # margin from the gaps in noise units, sqrt(1-q) (a - zeta) >= 0, without cancellation
    m = (sr * (a - zeta)).min(axis=1) / scale
    return {"correct": cn, "row_max": top[:, 0], "margin": m, "top": top, "gaps": cn[:, None] - top,
            "xi": xi, "proposals": tries}
