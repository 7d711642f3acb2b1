r"""Theory predictions matched to each capacity measurement.

Thin adaptors around ``replica`` (nothing is re-derived here):

* full rank (OP/DP): the finite-``p`` RS capacity solved self-consistently at
  dimension ``d``: the load :math:`\alpha^*` with ``alpha* = alpha_c_finite(p)`` where
  :math:`p \ln p = \alpha^* d^2` (:func:`full_rank_threshold`);
* low rank: :math:`\alpha_c(\kappa)` with the *actual* :math:`\kappa = m / d`
  (:func:`lowrank_threshold`);
* low rank at finite ``p``: :math:`\alpha_c(\kappa, p)` solved self-consistently at
  ``d`` with the actual :math:`\kappa = m / d` (:func:`lowrank_finite_threshold`,
  :func:`lowrank_finite_prediction`);
* Hebbian: the load where the conditional finite-size model of
  ``replica.hebbian`` gives :math:`P(\mathrm{all\ recalled}) = 1/2` (:func:`replica.hebbian_threshold`).
"""
from __future__ import annotations

import functools

import numpy as np

from hcizz.checks import check_int, check_real
from hcizz.estimate import Estimate
from replica import alpha_c, alpha_c_finite, p_of_load

__all__ = ["full_rank_threshold", "lowrank_threshold", "lowrank_finite_threshold", "lowrank_finite_prediction"]


@functools.lru_cache(maxsize=64)
def full_rank_threshold(d, *, samples=20_000, rng=0, tol=1e-4):
    r"""Self-consistent finite-size RS capacity at dimension ``d``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    samples : int
        Monte Carlo samples per call of ``replica.alpha_c_finite``.
    rng : int
        Seed; every evaluation uses the same seed (common random numbers), so
        the fixed-point map is a smooth function of ``alpha``.
    tol : float
        Stop when successive iterates differ by less than ``tol``.

    Returns
    -------
    Estimate
        ``value`` = :math:`\alpha^*` solving ``alpha = alpha_c_finite(round(p(alpha)))``,
        :math:`p(\alpha) = \exp(W(\alpha d^2))` (Lambert W); ``stderr`` propagated from
        the Monte Carlo error of ``alpha_c_finite``; ``info``: ``p`` and the slope.

    Notes
    -----
    ``g(alpha) = alpha_c_finite(p(alpha))`` decreases slowly in ``alpha``
    (:math:`\alpha_c(p)` decreases towards 1/2 as ``p`` grows), so the fixed point is
    unique and the iteration :math:`\alpha \leftarrow g(\alpha)` contracts (:math:`|g'| \ll 1`).
    A Monte Carlo error ``s`` on ``g`` moves the fixed point by
    :math:`s / (1 - g')`, reported as the standard error.  Cached (deterministic for an int ``rng``).

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#load-and-capacity
    """
    d = check_int("d", d, low=2)
    return _self_consistent(d, None, start=0.9, step=lambda a: 0.05, samples=samples, rng=rng,
                            tol=tol)


def _self_consistent(d, kappa, *, start, step, samples, rng, tol):
    """Fixed point ``alpha = alpha_c_finite(p(alpha)[, kappa])`` by iteration from
    ``start``, with the standard error propagated through the slope of the map
    (central difference of half-width ``step(alpha*)``); ``kappa=None``: full rank."""
    kw = {} if kappa is None else {"kappa": kappa}

    def g(a):
        p = max(2, int(round(p_of_load(a, d))))
        return alpha_c_finite(p, samples=samples, rng=rng, **kw), p

    a = start
    for _ in range(50):
        est, p = g(a)
        new = float(est.value)
        if abs(new - a) < tol:
            a = new
            break
        a = new
    est, p = g(a)
    h = step(a)
    (e_hi, _), (e_lo, _) = g(a + h), g(max(a - h, 1e-3))
    slope = (e_hi.value - e_lo.value) / (2 * h)
    se = float(est.stderr) / max(1.0 - slope, 1e-6)
    info = {"p": p, "slope": float(slope)}
    if kappa is not None:
        info["kappa"] = kappa
    info["alpha_c_finite_stderr"] = float(est.stderr)
    return Estimate(float(est.value), se, est.n, info)


@functools.lru_cache(maxsize=64)
def lowrank_finite_threshold(d, kappa, *, samples=20_000, rng=0, tol=1e-4):
    r"""Self-consistent finite-``p`` capacity of a rank-``kappa`` memory at dimension ``d``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    kappa : float
        Rank fraction in ``(0, 1]``; pass the *actual* :math:`m / d`.
    samples, rng, tol
        As in :func:`full_rank_threshold` (common random numbers across the
        fixed-point iterations).

    Returns
    -------
    Estimate
        ``value`` = :math:`\alpha^*` solving ``alpha = replica.alpha_c_finite(p(alpha), kappa=kappa)``
        with :math:`p(\alpha) \ln p(\alpha) = \alpha d^2`; ``stderr`` = Monte Carlo
        error / ``(1 - slope)``; ``info``: ``p``, ``slope``, ``kappa``.

    Notes
    -----
    :math:`\alpha_c(\kappa, p) = \alpha_c(\kappa) \ln p / \mathbb{E}[V_p]`
    (``docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories``).
    At :math:`\kappa = 1` this is :func:`full_rank_threshold`.  The low-rank
    threshold sits at a smaller ``p`` than the full-rank one at the same
    ``d``, where :math:`\ln p / \mathbb{E}[V_p]` is larger, so the ratio of the two
    self-consistent predictions slightly exceeds :math:`\alpha_c(\kappa) / \alpha_c(1)`.

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories
    """
    d = check_int("d", d, low=2)
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    # the slope's finite-difference step scales with the fixed point (0.05 alpha*)
    return _self_consistent(d, kappa, start=1.8 * float(alpha_c(kappa)), step=lambda a: 0.05 * a,
                            samples=samples, rng=rng, tol=tol)


def lowrank_threshold(kappa):
    r"""Return ``replica.alpha_c(kappa)``, the asymptotic rank-constrained RS capacity.

    Parameters
    ----------
    kappa : float
        Rank ratio in (0, 1].

    Returns
    -------
    float
        :math:`\alpha_c(\kappa)` (1/2 at :math:`\kappa = 1`).

    See Also
    --------
    replica.alpha_c : Rank-constrained replica-symmetric capacity.
    validation.linear_memory.theory.lowrank_finite_threshold : Self-consistent threshold at finite ``d``.

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#rank-constrained-capacity

    Examples
    --------
    >>> lowrank_threshold(1.0)
    0.5
    """
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    return float(alpha_c(kappa))


def lowrank_finite_prediction(d, kappa):
    r"""Return the finite-``p`` prediction of a rank-``kappa`` memory at ``d``, with the actual rank ratio.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    kappa : float
        Nominal rank ratio in (0, 1]; the memory has :math:`m = \max(1, \mathrm{round}(\kappa d))`
        (:func:`validation.linear_memory.models.lowrank_m`) and the prediction uses :math:`m / d`.

    Returns
    -------
    dict
        ``value`` and ``stderr`` of :func:`lowrank_finite_threshold` at
        :math:`m / d`, ``p`` (facts at the fixed point), ``kappa_eff`` (:math:`m / d`)
        and ``alpha_c_kappa`` (:func:`lowrank_threshold` at :math:`m / d`, the
        large-``p`` value), all floats but ``p``.

    See Also
    --------
    validation.linear_memory.theory.lowrank_finite_threshold : Self-consistent threshold at finite ``d``.
    validation.linear_memory.models.lowrank_m : Rank actually used at this ``d``.

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories

    Examples
    --------
    >>> lowrank_finite_prediction(20, 0.5)["kappa_eff"]
    0.5
    """
    from .models import lowrank_m

    d = check_int("d", d, low=2)
    k_eff = lowrank_m(d, kappa) / d
    e = lowrank_finite_threshold(d, k_eff)
    return {"value": e.value, "stderr": e.stderr, "p": e.info["p"], "kappa_eff": k_eff,
            "alpha_c_kappa": lowrank_threshold(k_eff)}
