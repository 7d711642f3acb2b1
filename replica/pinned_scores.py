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
the others keep their score.  See
``docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p``.
"""
from __future__ import annotations

import numpy as np

from hcizz.checks import check_int, check_rng

from .finite_capacity import v_p_from_gaps

__all__ = ["pinned_scores"]

_MAX_NUMBERS = 2 * 10**7


def pinned_scores(p, *, samples=2000, rng=None, n_top=None, normalise=True):
    r"""Sample the per-fact scores of the capacity-point memory at finite ``p``.

    Parameters
    ----------
    p : int
        Number of candidates per fact, ``2 <= p`` and ``samples * p <= 2e7``
        (all ``p`` scores are drawn, as for a trained memory).
    samples : int
        Independent facts (rows), ``>= 2``.
    rng : None, int, SeedSequence or Generator
        Source of randomness (``numpy.random.default_rng(rng)``).
    n_top : int, optional
        Number of largest competitors returned per row (``1 <= n_top <= p - 1``;
        default ``min(10, p - 1)``).
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

    Notes
    -----
    Exact for the model (no quadrature): every row draws ``eta`` i.i.d. N(0, 1)
    (``eta_1`` for all rows first, then the ``(samples, p - 1)`` competitors),
    sorts the competitors and applies the closed-form minimiser of
    :func:`replica.finite_capacity.v_p_from_gaps`.  The margin is zero with
    probability ``1 - 1/p`` (the correct score is not the largest
    ``eta``); the prediction for the margins of a memory trained *below*
    capacity is therefore not contained in this limit (the margins there
    scale with the distance to capacity).

    References
    ----------
    arXiv:2605.10795 (linear associative memories: pinned correct scores).

    Examples
    --------
    >>> s = pinned_scores(163, samples=500, rng=0)
    >>> bool(np.all(s["margin"][s["k_active"] > 0] == 0.0))
    True
    >>> 1.7 < float(s["correct"].mean()) < 2.2
    True
    """
    p = check_int("p", p, low=2)
    samples = check_int("samples", samples, low=2)
    if samples * p > _MAX_NUMBERS:
        raise ValueError(f"samples * p must be <= {_MAX_NUMBERS:.0e}, got {samples} * {p} = {samples * p}")
    n_top = check_int("n_top", min(10, p - 1) if n_top is None else n_top, low=1, high=p - 1)
    if normalise and p < 3:
        raise ValueError(f"p must be >= 3 with normalise=True (a standard deviation of p - 1 competitors), got {p}")
    rng = check_rng(rng)
    eta1 = rng.standard_normal(samples)
    comp = -np.sort(-rng.standard_normal((samples, p - 1)), axis=1)      # descending
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
