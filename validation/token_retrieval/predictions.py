"""The closed-form theory (:mod:`validation.token_retrieval.theory`) over grids and against
simulated runs: success probabilities at every grid point, the predicted boundaries with their
power-law summaries, the counting bound (docs/token_retrieval.md#theory-of-the-early-phase).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result

from . import theory as th
from .boundary import aggregate, fit_power_law
from ._docparams import fill_doc

__all__ = ["success_grid", "TheoryVsSimulation", "theory_vs_simulation", "PredictedBoundaries",
           "predicted_boundaries"]


@fill_doc
def success_grid(key, Ns, ds, Ls):
    """Evaluate the theory's success probability ``key`` on a product grid (:math:`V = 4 N`).

    Parameters
    ----------
    key : {"p_retrieval", "p_recall", "p_retrieval_seq", "p_recall_seq", "test_acc"}
        A key of :func:`validation.token_retrieval.theory.success_probs`.
    Ns, ds, Ls : sequence of int
        Grid values.

    Returns
    -------
    ndarray, shape (len(Ls), len(ds), len(Ns))
        The probabilities.

    See Also
    --------
    validation.token_retrieval.theory.success_probs
        Predict P(retrieval), P(recall) and fresh accuracy without fitted parameters.
    validation.token_retrieval.predictions.theory_vs_simulation
        Compare the theory with the simulated success fractions at every grid point.

    %(ref_retrieval_probability)s

    Examples
    --------
    >>> success_grid("p_retrieval", [4, 64], [128], [4]).shape
    (1, 1, 2)
    """
    out = np.zeros((len(Ls), len(ds), len(Ns)))
    for a, L in enumerate(Ls):
        for b, d in enumerate(ds):
            for c, N in enumerate(Ns):
                out[a, b, c] = th.success_probs(int(N), int(d), int(L), V=max(2, 4 * int(N)))[key]
    return out


@fill_doc
@dataclass(frozen=True)
class TheoryVsSimulation(Result):
    """The theory's success probabilities against the simulated fractions of a grid (:func:`theory_vs_simulation`).

    Parameters
    ----------
    points : list of dict
        Per grid point ``N, d, L, seeds`` and, for ``p_retrieval``,
        ``p_recall`` (all-``N`` events), ``retrieval_seq``, ``recall_seq``
        (per-sequence fractions) and ``test_acc``: ``<q>_pred`` and ``<q>_sim``;
        ``p_retrieval_stderr`` / ``p_recall_stderr``: binomial standard errors
        of the simulated fractions.
    mean_abs_error, max_abs_error : float
        Over ``p_retrieval`` and ``p_recall`` together.
    by_quantity : dict
        ``{q: {"mean_abs_error", "max_abs_error", "n"}}``.
    by_d : dict
        ``{"d": {"retrieval_mae", "recall_mae"}}``.
    by_L : dict
        ``{L: {"retrieval_mae", "retrieval_seq_mae"}}``.
    combination : dict
        ``{(N, d, L): x}``, the predicted signal-to-noise combination
        (:func:`validation.token_retrieval.theory.boundary_combination`).

    See Also
    --------
    validation.token_retrieval.predictions.theory_vs_simulation
        Compare the theory with the simulated success fractions at every grid point.
    validation.token_retrieval.comparison.TheoryVsSim : Theory against simulation over a grid (``theory_vs_sim``).

    %(ref_retrieval_probability)s
    """

    points: list
    mean_abs_error: float
    max_abs_error: float
    by_quantity: dict
    by_d: dict
    by_L: dict
    combination: dict


@fill_doc
def theory_vs_simulation(records):
    r"""Compare the theory with the simulated success fractions at every grid point.

    Parameters
    ----------
    records : list of dict
        Runs of a grid (:func:`validation.token_retrieval.experiments.run_grid`, :math:`V = 4 N`).

    Returns
    -------
    TheoryVsSimulation
        Points, summary errors and the predicted combination per point.

    See Also
    --------
    validation.token_retrieval.predictions.success_grid
        Evaluate the theory's success probability ``key`` on a product grid (:math:`V = 4 N`).
    validation.token_retrieval.comparison.theory_vs_sim
        Compare the token-level and the closed-form theory with simulated runs, point by point.

    Notes
    -----
    The standard error of a simulated fraction ``f`` over ``n`` seeds is
    :math:`\sqrt{\max(f (1 - f), 1 / 4n) / n}`: the binomial one, floored where
    ``f`` is 0 or 1 so that a fraction measured on few seeds never claims to
    be exact.

    %(ref_retrieval_probability)s
    """
    fr = {k: aggregate(records, k) for k in ("recall", "retrieval", "test_acc", "retrieval_acc", "recall_acc")}
    tvs = []
    for (N, d, L), (f, n) in fr["retrieval"].items():
        p = th.success_probs(N, d, L, V=max(2, 4 * N))
        se = lambda x: math.sqrt(max(x * (1 - x), 0.25 / n) / n)   # noqa: E731  (MC stderr of a fraction)
        k = (N, d, L)
        tvs.append({"N": N, "d": d, "L": L, "seeds": n,
                    "p_retrieval_pred": p["p_retrieval"], "p_retrieval_sim": f,
                    "p_retrieval_stderr": se(f),
                    "p_recall_pred": p["p_recall"], "p_recall_sim": fr["recall"][k][0],
                    "p_recall_stderr": se(fr["recall"][k][0]),
                    "retrieval_seq_pred": p["p_retrieval_seq"], "retrieval_seq_sim": fr["retrieval_acc"][k][0],
                    "recall_seq_pred": p["p_recall_seq"], "recall_seq_sim": fr["recall_acc"][k][0],
                    "test_acc_pred": p["test_acc"], "test_acc_sim": fr["test_acc"][k][0]})
    err = {}
    for q in ("p_retrieval", "p_recall", "retrieval_seq", "recall_seq", "test_acc"):
        e = np.array([abs(r[f"{q}_pred"] - r[f"{q}_sim"]) for r in tvs])
        err[q] = {"mean_abs_error": float(e.mean()), "max_abs_error": float(e.max()), "n": int(e.size)}
    both = np.array([abs(r["p_retrieval_pred"] - r["p_retrieval_sim"]) for r in tvs]
                    + [abs(r["p_recall_pred"] - r["p_recall_sim"]) for r in tvs])
    by_d = {}
    for d in sorted({r["d"] for r in tvs}):
        e = [abs(r["p_retrieval_pred"] - r["p_retrieval_sim"]) for r in tvs if r["d"] == d]
        e2 = [abs(r["p_recall_pred"] - r["p_recall_sim"]) for r in tvs if r["d"] == d]
        by_d[str(d)] = {"retrieval_mae": float(np.mean(e)), "recall_mae": float(np.mean(e2))}
    by_L = {}
    for L in sorted({r["L"] for r in tvs}):
        sel = [r for r in tvs if r["L"] == L]
        by_L[L] = {"retrieval_mae": float(np.mean([abs(r["p_retrieval_pred"] - r["p_retrieval_sim"]) for r in sel])),
                   "retrieval_seq_mae": float(np.mean([abs(r["retrieval_seq_pred"] - r["retrieval_seq_sim"])
                                                       for r in sel]))}
    comb = {(r["N"], r["d"], r["L"]): float(th.boundary_combination(r["N"], r["d"], r["L"])) for r in tvs}
    return TheoryVsSimulation(points=tvs, mean_abs_error=float(both.mean()), max_abs_error=float(both.max()),
                              by_quantity=err, by_d=by_d, by_L=by_L, combination=comb)


@fill_doc
@dataclass(frozen=True)
class PredictedBoundaries(Result):
    r"""The theory's boundaries and the counting bound over ``ds x Ls``, with power-law summaries (:func:`predicted_boundaries`).

    Parameters
    ----------
    ds, Ls : list of int
        The grid.
    retrieval, recall : list of dict
        ``{"d", "L", "N"}`` where the predicted :math:`P(\text{all } N) = 1/2` crosses
        (:func:`~validation.token_retrieval.theory.retrieval_boundary`,
        :func:`~validation.token_retrieval.theory.recall_boundary`).
    counting : list of dict
        ``{"d", "L", "N_counting"}``
        (:func:`~validation.token_retrieval.theory.counting_boundary`) at every point.
    retrieval_law : PowerLaw or None
        :math:`N_c \sim d^a L^b` fitted to ``retrieval`` (None with fewer than 3 crossings).
    recall_law : PowerLaw or None
        The same for ``recall`` (None with fewer than 4 crossings).
    counting_law : PowerLaw
        The same for ``counting``.
    local_L_exponent : dict
        ``{"d": slope}``: the slope of :math:`\log N_c` against :math:`\log L` at
        ``d = 32`` and ``d = 256`` where both are in ``ds`` (least squares,
        :func:`numpy.polyfit`).
    combination_at_retrieval : list of float
        The predicted combination ``x``
        (:func:`~validation.token_retrieval.theory.boundary_combination`) at
        each retrieval crossing, ``N`` rounded to an integer.

    See Also
    --------
    validation.token_retrieval.predictions.predicted_boundaries
        Locate the theory's retrieval and recall boundaries and the counting bound, and summarise them by
        power laws.
    validation.token_retrieval.boundary.fit_power_law
        Fit :math:`\mathrm{along} = C \prod_v v^{\alpha_v}` to points by least squares in the logs: the one power-law fit.

    %(ref_the_boundary_law)s
    """

    ds: list
    Ls: list
    retrieval: list
    recall: list
    counting: list
    retrieval_law: object
    recall_law: object
    counting_law: object
    local_L_exponent: dict
    combination_at_retrieval: list


@fill_doc
def predicted_boundaries(ds, Ls):
    r"""Locate the theory's retrieval and recall boundaries and the counting bound, and summarise them by power laws.

    Parameters
    ----------
    ds, Ls : sequence of int
        Dimensions and sequence lengths (:math:`V = 4 N`, default step sizes).

    Returns
    -------
    PredictedBoundaries
        The crossings and their least-squares power laws
        (:func:`~validation.token_retrieval.boundary.fit_power_law`).

    See Also
    --------
    validation.token_retrieval.theory.counting_boundary
        Find the smallest ``N`` (with ``V = vocab_ratio N``) at which ``counting_bound`` drops below
        ``level``.
    validation.token_retrieval.theory.recall_boundary
        Predict :math:`N_{\max}(d, L)`, the last ``N`` with :math:`P(\text{recall of all } N) \geq` ``level``.
    validation.token_retrieval.predictions.PredictedBoundaries
        The theory's boundaries and the counting bound over ``ds x Ls``, with power-law summaries
        (``predicted_boundaries``).

    %(ref_the_boundary_law)s

    Examples
    --------
    >>> pb = predicted_boundaries((64, 256), (4, 16))
    >>> len(pb.counting), round(pb.counting_law.exponents["d"].value, 1)
    (4, 2.0)
    >>> [(p["d"], p["L"]) for p in pb.retrieval], pb.retrieval_law is None     # two crossings: no law
    ([(64, 16), (256, 16)], True)
    """
    ret, rec, low = [], [], []
    for d in ds:
        for L in Ls:
            nc = th.retrieval_boundary(d, L)
            if nc is not None:
                ret.append({"d": d, "L": L, "N": nc})
            nm = th.recall_boundary(d, L)
            if nm is not None:
                rec.append({"d": d, "L": L, "N": nm})
            low.append({"d": d, "L": L, "N_counting": th.counting_boundary(d, L)})
    loc = {}
    for d in (32, 256):
        pts = sorted((p["L"], p["N"]) for p in ret if p["d"] == d)
        if len(pts) >= 2:
            loc[str(d)] = float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])
    return PredictedBoundaries(
        ds=list(ds), Ls=list(Ls), retrieval=ret, recall=rec, counting=low,
        retrieval_law=fit_power_law(ret) if len(ret) >= 3 else None, recall_law=fit_power_law(rec) if len(rec) >= 4 else None,
        counting_law=fit_power_law(low, along="N_counting"), local_L_exponent=loc,
        combination_at_retrieval=[float(th.boundary_combination(max(1, round(p["N"])), p["d"], p["L"]))
                                  for p in ret])
