"""Theory predictions matched to each capacity measurement.

Thin adaptors around ``replica`` (nothing is re-derived here):

* full rank (OP/DP): the finite-``p`` RS capacity solved self-consistently at
  dimension ``d``: the load ``alpha*`` with ``alpha* = alpha_c_finite(p)`` where
  ``p ln p = alpha* d^2`` (:func:`full_rank_threshold`);
* low rank: ``alpha_c(kappa)`` with the *actual* ``kappa = m / d``
  (:func:`lowrank_threshold`);
* Hebbian: the Gaussian-model load where ``P(all recalled) = 1/2``
  (:func:`hebbian_threshold`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import lambertw

from hcizz._checks import check_int, check_real
from hcizz._estimate import Estimate

__all__ = ["full_rank_threshold", "lowrank_threshold", "hebbian_threshold", "prediction",
           "theory_available"]


def _replica(name):
    """``replica.<name>`` (or from its submodule while ``replica/__init__`` does
    not export it yet); ``None`` if not implemented."""
    import importlib

    try:
        rep = importlib.import_module("replica")
        if hasattr(rep, name):
            return getattr(rep, name)
    except ImportError:  # pragma: no cover
        return None
    sub = {"alpha_c_finite": "replica.finite_capacity", "alpha_c": "replica.rank_capacity",
           "hebbian_threshold": "replica.hebbian", "hebbian": "replica.hebbian"}[name]
    try:
        return getattr(importlib.import_module(sub), name)
    except (ImportError, AttributeError):
        return None


def theory_available():
    """Which predictions the installed ``replica`` provides (name -> bool)."""
    return {n: _replica(n) is not None for n in ("alpha_c_finite", "alpha_c", "hebbian_threshold")}


def _p_of(alpha, d):
    return float(np.exp(lambertw(alpha * d * d).real))


@functools.lru_cache(maxsize=64)
def full_rank_threshold(d, *, samples=20_000, rng=0, tol=1e-4):
    """Self-consistent finite-size RS capacity at dimension ``d``.

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
        ``value`` = ``alpha*`` solving ``alpha = alpha_c_finite(round(p(alpha)))``,
        ``p(alpha) = exp(W(alpha d^2))`` (Lambert W); ``stderr`` propagated from
        the Monte Carlo error of ``alpha_c_finite``; ``info``: ``p`` and the slope.

    Notes
    -----
    ``g(alpha) = alpha_c_finite(p(alpha))`` decreases slowly in ``alpha``
    (``alpha_c(p)`` decreases towards 1/2 as ``p`` grows), so the fixed point is
    unique and the iteration ``alpha <- g(alpha)`` contracts (``|g'| << 1``).
    A Monte Carlo error ``s`` on ``g`` moves the fixed point by
    ``s / (1 - g')``, reported as the standard error.  Cached (deterministic for an int ``rng``).
    """
    d = check_int("d", d, low=2)
    acf = _replica("alpha_c_finite")
    if acf is None:
        raise RuntimeError("replica.alpha_c_finite is not available")

    def g(a):
        p = max(2, int(round(_p_of(a, d))))
        return acf(p, samples=samples, rng=rng), p

    a = 0.9
    for _ in range(50):
        est, p = g(a)
        new = float(est.value)
        if abs(new - a) < tol:
            a = new
            break
        a = new
    est, p = g(a)
    h = 0.05
    (e_hi, _), (e_lo, _) = g(a + h), g(max(a - h, 1e-3))
    slope = (e_hi.value - e_lo.value) / (2 * h)
    se = float(est.stderr) / max(1.0 - slope, 1e-6)
    return Estimate(float(est.value), se, est.n, {"p": p, "slope": float(slope),
                                                  "alpha_c_finite_stderr": float(est.stderr)})


def lowrank_threshold(kappa):
    """``replica.alpha_c(kappa)`` (asymptotic rank-constrained RS capacity)."""
    kappa = check_real("kappa", kappa, low=0, high=1, low_open=True, allow_array=False)
    ac = _replica("alpha_c")
    if ac is None:
        raise RuntimeError("replica.alpha_c is not available")
    return float(ac(kappa))


def hebbian_threshold(d):
    """Gaussian-model Hebbian threshold load at dimension ``d`` (``replica.hebbian``)."""
    d = check_int("d", d, low=2)
    ht = _replica("hebbian_threshold")
    if ht is None:
        raise RuntimeError("replica.hebbian_threshold is not available")
    return float(ht(d))


def prediction(model, d, kappa=None):
    """The matching prediction for a capacity measurement.

    Returns
    -------
    dict
        ``value``, ``stderr`` and ``name`` of the prediction, plus ``half`` = 1/2
        (the large-``d`` full-rank limit) for reference.  ``value`` is NaN with
        ``name`` explaining why if the ``replica`` function is missing.
    """
    from .models import lowrank_m

    out = {"half": 0.5}
    try:
        if model in ("op", "dp"):
            e = full_rank_threshold(d)
            out.update(value=e.value, stderr=e.stderr, p=e.info["p"],
                       name="alpha_c_finite(p), self-consistent at d")
        elif model == "lowrank":
            k_eff = lowrank_m(d, kappa) / d
            out.update(value=lowrank_threshold(k_eff), stderr=0.0, kappa_eff=k_eff,
                       name="alpha_c(m/d)")
        elif model == "hebbian":
            out.update(value=hebbian_threshold(d), stderr=0.0,
                       name="Gaussian-model P(all recalled)=1/2")
            try:   # THEORY 1.4's plain model, where replica offers it as an option
                out["plain_model"] = float(_replica("hebbian_threshold")(d, model="theory"))
            except TypeError:
                pass
        else:
            raise ValueError(f"model must be one of op, dp, lowrank, hebbian, got {model!r}")
    except RuntimeError as exc:
        out.update(value=math.nan, stderr=math.nan, name=f"unavailable: {exc}")
    return out
