"""Normalised scores and margins of trained memories, and their finite-``p`` capacity-point predictions.

The prediction (:func:`replica.pinned_scores.pinned_scores`) comes from the
minimiser of :math:`V_p`: at the capacity the correct score of a fact is the mean
of its unperturbed score and of its :math:`k^*` largest competitors, which end tied
with it (zero margin).  Below the capacity the replica-symmetric overlap
:math:`q^* < 1` gives a second prediction, the scores of a *typical* memory
(:func:`replica.pinned_scores.typical_scores` at ``q* = replica.saddle(load, p).q``),
with positive margins.  :func:`margin_trial` trains one OP memory at a given
load and returns its normalised correct scores, margins and the profile of its
largest competitors (an engine trial); :func:`observables` computes the same
observables from any score matrix, :func:`predicted` and
:func:`typical_predicted` the two predictions with the same keys.  The study
that runs the trials and compares (its plan, committed store and summary) is
:mod:`validation.studies.linear_memory_margins`.
"""
from __future__ import annotations

import numpy as np

from validation.engine.trials import trial

from ._docparams import fill_doc

__all__ = ["N_TOP", "margin_trial", "observables", "predicted", "typical_predicted"]

#: Number of largest competitors in the gap profile.
N_TOP = 10


@fill_doc
def observables(correct, competitors, n_top=N_TOP):
    """Compute per-row normalised correct score, largest competitor, margin and top gaps.

    Parameters
    ----------
    correct : ndarray, shape (p,)
        Correct scores in competitor-std units
        (:func:`validation.linear_memory.mechanism.normalized_scores`).
    competitors : ndarray, shape (p, p - 1)
        Competitor scores in the same units.
    n_top : int
        Number of largest competitors in the gap profile.

    Returns
    -------
    dict
        Arrays ``correct``, ``row_max`` (largest competitor), ``margin``
        (``correct - row_max``) and ``gaps`` (``correct`` minus the ``n_top``
        largest competitors, shape (p, n_top)); the same keys as
        :func:`predicted`, so the two are compared key by key.

    See Also
    --------
    validation.linear_memory.margins.predicted : Prediction from the minimiser of :math:`V_p`, at capacity.
    validation.linear_memory.margins.typical_predicted : Prediction for a typical memory below capacity.

    %(ref_mechanism)s
    """
    top = -np.sort(-competitors, axis=1)[:, :n_top]
    return {"correct": correct, "row_max": top[:, 0], "margin": correct - top[:, 0],
            "gaps": correct[:, None] - top}


@fill_doc
@trial("linear_memory.margins", aliases=("validation.linear_memory.margins:margin_trial",))
def margin_trial(params):
    r"""Train one OP memory at load ``alpha`` (default preset); normalised score observables.

    Parameters
    ----------
    params : dict
        ``d``, ``alpha``, ``seed`` (facts and initialisation exactly as in
        :func:`validation.linear_memory.capacity.capacity_trial`, so the same
        instance), optional ``steps`` and ``lr`` (Adam rate; default: the
        default preset's 0.1); other keys (``kind``, ``model``) are labels of
        the study's records and are not read.

    Returns
    -------
    dict
        ``p``, ``load``, ``success``, ``steps``; on success also ``correct`` and
        ``margin`` (lists, 5 significant digits) and ``gap_profile`` (mean of
        correct minus the ``j``-th largest competitor, :math:`j = 1, \ldots, 10`).

    See Also
    --------
    validation.linear_memory.margins.observables : Score observables recorded per trained memory.

    %(ref_mechanism)s
    """
    from replica.load import load_of, p_from_load
    from .data import make_facts, trial_rngs
    from .mechanism import normalized_scores
    from .train import train

    d, seed = int(params["d"]), int(params["seed"])
    p = p_from_load(params["alpha"], d)
    rf, ri = trial_rngs(seed, d, p)
    facts = make_facts("op", p, d, rng=rf)
    over = {k: params[k] for k in ("steps", "lr") if k in params}
    res = train(facts, parametrization="full", rng=ri, **over)
    out = {"p": p, "load": float(load_of(p, d)), "success": bool(res.success), "steps": int(res.steps)}
    if res.success:
        c, q = normalized_scores(res.W.astype(np.float64), facts.astype(np.float64))
        ob = observables(c, q)
        out.update(correct=[float(f"{v:.5g}") for v in ob["correct"]],
                   margin=[float(f"{v:.5g}") for v in ob["margin"]],
                   gap_profile=ob["gaps"].mean(axis=0).tolist())
    return out


@fill_doc
def predicted(p, *, samples=4000, rng=0):
    """Predict the observables of :func:`observables` at ``p`` from the minimiser of :math:`V_p`.

    Parameters
    ----------
    p : int
        Number of facts.
    samples : int
        Monte Carlo samples of :func:`replica.pinned_scores.pinned_scores`.
    rng : int or Generator
        Randomness.

    Returns
    -------
    dict
        Arrays ``correct``, ``row_max``, ``margin``, ``gaps`` (as
        :func:`observables`) and ``k_active`` (number of competitors tied with
        the correct score).

    See Also
    --------
    validation.linear_memory.margins.typical_predicted : Same observables for a typical memory below capacity.
    validation.linear_memory.margins.observables : Measured counterpart, compared key by key.

    Notes
    -----
    At the capacity the correct score of a fact is the mean of its
    unperturbed score and of its :math:`k^*` largest competitors, which end tied
    with it (zero margin).

    %(ref_mechanism_paper)s
    """
    from replica.pinned_scores import pinned_scores

    s = pinned_scores(int(p), samples=samples, rng=rng, n_top=N_TOP)
    return {"correct": s["correct"], "row_max": s["row_max"], "margin": s["margin"],
            "gaps": s["gaps"], "k_active": s["k_active"]}


@fill_doc
def typical_predicted(p, load, *, samples=1000, rng=0, saddle_samples=200):
    r"""Predict the observables of :func:`observables` for a typical memory at load ``load`` below capacity.

    Parameters
    ----------
    p : int
        Number of facts.
    load : float
        Load :math:`p \ln p / d^2` of the trained memories.
    samples : int
        Rows of :func:`replica.pinned_scores.typical_scores`.
    rng : int or Generator
        Randomness of the rows.
    saddle_samples : int
        Disorder samples of :func:`replica.saddle` (common random numbers, seed 0).

    Returns
    -------
    dict or None
        ``q_star`` and ``q_stderr`` (RS overlap at ``(load, p)``), ``alpha_c``
        (the saddle's capacity at this ``p``), and arrays ``correct``,
        ``row_max``, ``margin``, ``gaps`` as :func:`observables`; ``None`` when
        the load is at or beyond the RS capacity (:math:`q^* = 1`: the limit is
        :func:`predicted`).

    See Also
    --------
    validation.linear_memory.margins.predicted : Same observables at capacity, from the minimiser of :math:`V_p`.

    Notes
    -----
    Scores of one memory drawn uniformly from the solution space: per fact
    :math:`z = \sqrt{q^*}\, \eta + \sqrt{1 - q^*}\, \zeta` with ``zeta`` conditioned on
    recall (:func:`replica.pinned_scores.typical_scores`).

    %(ref_mechanism_paper)s
    """
    from replica import saddle
    from replica.pinned_scores import typical_scores

    sd = saddle(float(load), int(p), samples=saddle_samples, rng=0)
    if not sd.q < 1.0:
        return None
    t = typical_scores(int(p), float(sd.q), samples=samples, rng=rng, n_top=N_TOP)
    return {"q_star": float(sd.q), "q_stderr": float(sd.q_stderr), "alpha_c": float(sd.alpha_c),
            "correct": t["correct"], "row_max": t["row_max"], "margin": t["margin"], "gaps": t["gaps"]}
