"""Theory adaptors of the factual-recall checks: what each measurement is compared with.

* :func:`theory_prediction`: the finite-size replica capacity of the linear
  memory (the OP of arXiv:2605.10795) solved self-consistently at ``d``
  (:func:`validation.linear_memory.theory.full_rank_threshold`);
* :func:`counting_bounds`: Cover's / Gardner's counting reference points for
  the two-class MLP memory of the same size;
* :func:`escape_rates`: the linearised growth rates of the relation and subject
  modes of the sequential-learning model at its saddle (no free parameter);
* :data:`PAPER_FACTS_PER_PARAM`: the transformer's facts per parameter
  reported by arXiv:2412.06538, the guide line of the capacity figures.

docs/factual_recall.md#memories-against-theory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hcizz.checks import check_int
from hcizz.results import Result
from replica import p_of_load
from validation.linear_memory.theory import full_rank_threshold
from validation._docparams import fill_doc, returned_by

__all__ = ["theory_prediction", "CapacityPrediction", "counting_bounds", "CountingBounds",
           "escape_rates", "EscapeRates", "PAPER_FACTS_PER_PARAM", "COVER_PER_WEIGHT"]

#: Facts per parameter of the one-layer transformer reported by arXiv:2412.06538
#: (about 0.15 at ``D = 8``; the guide line of the report's capacity figures).
PAPER_FACTS_PER_PARAM = 0.15

#: Random dichotomies per adjustable weight of one threshold unit at the 1/2 point
#: (Cover 1965; Gardner 1988, zero margin).
COVER_PER_WEIGHT = 2.0


@fill_doc(record_links=returned_by(
    "validation.factual_recall.theory.theory_prediction",
    "docs/theory_full_rank.md#load-and-capacity"))
@dataclass(frozen=True)
class CapacityPrediction(Result):
    r"""Finite-size capacity of the linear memory at ``d`` (:func:`theory_prediction`), a frozen record.

    Parameters
    ----------
    alpha : float
        Self-consistent ``alpha_c_finite`` at ``d``.
    stderr : float
        Its Monte Carlo standard error.
    N : float
        Real :math:`N` with :math:`N \ln N = \alpha d^2`.

    %(record_links)s
    """

    alpha: float
    stderr: float
    N: float


def theory_prediction(d):
    r"""``alpha_c_finite`` solved self-consistently at ``d`` and the matching ``N``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).

    Returns
    -------
    CapacityPrediction
        ``alpha`` and ``stderr`` (``validation.linear_memory.theory.full_rank_threshold``:
        :math:`\alpha = \alpha_c^\mathrm{finite}(p)` with :math:`p \ln p = \alpha d^2`), ``N``
        (real, :math:`N \ln N = \alpha d^2`).

    See Also
    --------
    validation.linear_memory.theory.full_rank_threshold : The finite-size threshold it solves for.
    validation.factual_recall.theory.CapacityPrediction : The result.

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md; docs/linear_memory.md.

    Examples
    --------
    >>> t = theory_prediction(16)      # doctest: +SKIP
    >>> round(t.alpha, 3), round(t.N)  # doctest: +SKIP
    (0.993, 62)
    """
    d = check_int("d", d, low=2)
    e = full_rank_threshold(d)
    return CapacityPrediction(alpha=float(e.value), stderr=float(e.stderr),
                              N=float(p_of_load(e.value, d)))


@fill_doc(record_links=returned_by(
    "validation.factual_recall.theory.counting_bounds",
    "docs/factual_recall.md#mlp-memory-against-counting-bounds"))
@dataclass(frozen=True)
class CountingBounds(Result):
    r"""Counting reference points for the MLP memory (:func:`counting_bounds`), a frozen record.

    Parameters
    ----------
    params : int
        :math:`2 m d`.
    cover_bound : float
        :math:`2\, \mathrm{params} / (m d) = 4`.
    effective_weights : int
        :math:`m d + 2 m`.
    cover_effective : float
        :math:`2 (m d + 2 m) / (m d)`.
    classes : int
        Number of output classes.

    %(record_links)s
    """

    params: int
    cover_bound: float
    effective_weights: int
    cover_effective: float
    classes: int


def counting_bounds(d, m, classes=2):
    r"""Counting bounds on the number of two-class facts for the MLP memory's size.

    Parameters
    ----------
    d, m : int
        Input dimension and width.
    classes : int
        Number of output classes (the effective-weight count assumes 2).

    Returns
    -------
    CountingBounds
        ``params`` = :math:`2 m d` (the paper's count); ``cover_bound`` =
        :math:`2\, \mathrm{params} / (m d) = 4`: Cover's function counting / Gardner's zero-margin capacity
        of 2 patterns per adjustable weight applied to that count, in units of
        :math:`m d`; ``effective_weights`` = :math:`m d + 2 m` (with two classes the
        memory is the network :math:`x \mapsto a \cdot \mathrm{relu}(W_1 x + b)`,
        :math:`a = W_2^T (u_1 - u_2)`:
        ``W2`` enters only through its ``m`` numbers ``a``); ``cover_effective``
        = :math:`2 (m d + 2 m) / (m d) = 2 + 4 / d`.

    See Also
    --------
    validation.factual_recall.trials.mlp_recall_trial : The MLP memory these bounds are for.

    Notes
    -----
    Cover (1965): :math:`C(N, n) = 2 \sum_{k<n} \binom{N-1}{k}` of the :math:`2^N`
    dichotomies of ``N`` points in general position are realisable by a
    threshold unit with ``n`` adjustable weights; the fraction is 1/2 at
    :math:`N = 2 n`.  Gardner (1988): the typical volume of zero-margin solutions
    vanishes at :math:`N / n = 2`.  Both are statements about a *single*
    threshold unit; a network with hidden units can exceed 2 per weight
    (the upper bound grows like ``log`` of the number of hidden units), so
    these are reference points, not bounds, for the MLP.

    References
    ----------
    T. M. Cover, IEEE Trans. Electron. Comput. EC-14, 326 (1965); E. Gardner,
    J. Phys. A 21, 257 (1988); docs/factual_recall.md#mlp-memory-against-counting-bounds.

    Examples
    --------
    >>> b = counting_bounds(16, 16)
    >>> b["cover_bound"], b["cover_effective"]
    (4.0, 2.25)
    """
    d = check_int("d", d, low=1)
    m = check_int("m", m, low=1)
    params = 2 * m * d
    eff = m * d + 2 * m
    return CountingBounds(params=params, cover_bound=COVER_PER_WEIGHT * params / (m * d), effective_weights=eff,
                          cover_effective=COVER_PER_WEIGHT * eff / (m * d), classes=int(classes))


@fill_doc(record_links=returned_by(
    "validation.factual_recall.theory.escape_rates",
    "docs/factual_recall.md#escape-times"))
@dataclass(frozen=True)
class EscapeRates(Result):
    r"""Linearised growth rates at the saddle (:func:`escape_rates`), a frozen record.

    Parameters
    ----------
    relation : float
        Rate of the relation mode, :math:`\sqrt{(1 - 1/R) / D} / R`.
    subject : float
        Rate of the subject mode, :math:`\sqrt{(1 - 1/D) / R} / S`.

    %(record_links)s
    """

    relation: float
    subject: float


def escape_rates(S, R, D):
    r"""Linearised growth rates of the relation and subject modes at the saddle.

    Parameters
    ----------
    S, R, D : int
        Subjects, relations, answers per relation (``S`` a multiple of ``D``
        so that the answers are uniform).

    Returns
    -------
    EscapeRates
        ``relation`` = :math:`\sqrt{(1 - 1/R) / D} / R`, ``subject`` =
        :math:`\sqrt{(1 - 1/D) / R} / S`.

    See Also
    --------
    validation.factual_recall.fits.fit_escape_slopes : The measured escape slopes compared with it.

    Notes
    -----
    Near ``k = 0, W = 0`` the softmax is uniform and the gradient of the mean
    cross-entropy couples each token ``v``'s score ``k_v`` and value column
    ``w_v`` through :math:`M_v = E[c_v (p - e_y)]` (:math:`c_v` the count of :math:`v`,
    :math:`p` uniform): :math:`dk_v/dt = -M_v \cdot w_v`, :math:`dw_v/dt = -k_v M_v`, whose
    unstable mode grows as :math:`e^{|M_v| t}`.  A relation token is in :math:`1/R`
    of the facts, whose answers are uniform on its block:
    :math:`|M_r|^2 = (1/D - 1/(D R)) / R^2`; a subject token in :math:`1/S` of them,
    answers one per block: :math:`|M_s|^2 = (1/R - 1/(D R)) / S^2`.  Once the
    relation is learnt (mass uniform on the right block), :math:`|M_s|` is
    unchanged, so the subject mode grows at the same rate throughout.  The
    logits of a mode are the product :math:`k_v w_v` of two amplitudes of size
    :math:`\mathrm{init}\, e^{\lambda t}`, so escape (logits of order 1) takes
    :math:`t \sim \ln(1/\mathrm{init}) / \lambda` in continuous time; plain GD at rate ``lr``
    multiplies the amplitude by :math:`1 + \mathrm{lr}\, \lambda` per step, so the predicted
    slope of the escape step against :math:`\ln(1/\mathrm{init})` is
    :math:`1 / \ln(1 + \mathrm{lr}\, \lambda)` (:math:`\sim 1 / (\mathrm{lr}\, \lambda)`).

    References
    ----------
    arXiv:2412.06538 (sequential learning); docs/factual_recall.md#escape-times.

    Examples
    --------
    >>> r = escape_rates(64, 4, 8)
    >>> round(r["relation"], 5), round(r["subject"], 5)
    (0.07655, 0.00731)
    """
    S = check_int("S", S, low=1)
    R = check_int("R", R, low=2)
    D = check_int("D", D, low=2)
    return EscapeRates(relation=math.sqrt((1 - 1 / R) / D) / R,
                       subject=math.sqrt((1 - 1 / D) / R) / S)
