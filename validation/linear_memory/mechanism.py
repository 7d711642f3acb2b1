"""Mechanism diagnostics: normalised score statistics and singular-value spectra.

* Scores in normalised units: each row of the score matrix is divided by the
  standard deviation of its ``p - 1`` competitor scores.  A memory at capacity
  holds its correct scores in a narrow band (small variance) at the level of
  the largest competitors; at finite ``p`` this level is the mean of the
  correct score and the ``k*`` active competitors of the ``V_p`` minimiser
  (:func:`replica.pinned_scores.pinned_scores`), well below the large-``p``
  value ``sqrt(2 ln p)`` (``docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p``).
  Hebbian correct scores spread with variance about 1.
* Spectra (docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation): singular values of the trained ``W`` against
  the (truncated) quarter circle after fitting only the scale, and of the
  low-rank ``W`` at initialisation against ``hcizz.mp_product(kappa)``; the
  distance is the Kolmogorov-Smirnov statistic.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .models import scores

__all__ = ["normalized_scores", "score_summary", "singular_values", "spectrum_vs_quarter_circle",
           "init_spectrum_vs_mp_product", "hcizz_law"]


def hcizz_law(name, *args):
    """``hcizz.<name>`` (a law), called with ``args`` if given."""
    import hcizz

    f = getattr(hcizz, name)
    return f(*args) if args else f


def normalized_scores(W, facts):
    """Correct and competitor scores divided by the competitor standard deviation.

    Parameters
    ----------
    W : ndarray (d, d)
    facts : Facts

    Returns
    -------
    correct : ndarray (p,)
        ``z_{mu mu} / sigma_mu``.
    competitors : ndarray (p, p - 1)
        ``z_{mu rho} / sigma_mu`` for ``rho != mu``.

    Notes
    -----
    ``sigma_mu`` is the sample standard deviation of the ``p - 1`` competitor
    scores of input ``mu`` (no mean subtraction of the scores themselves;
    competitor means are 0 in distribution).
    """
    Z = np.asarray(scores(W, facts), dtype=np.float64)
    p = Z.shape[0]
    idx = np.arange(p)
    correct = Z[idx, idx].copy()
    mask = ~np.eye(p, dtype=bool)
    comp = Z[mask].reshape(p, p - 1)
    sig = comp.std(axis=1, ddof=1)
    return correct / sig, comp / sig[:, None]


def score_summary(correct, competitors):
    """Summary of normalised scores.

    Returns
    -------
    dict
        ``correct_mean``, ``correct_var``, ``competitor_mean``,
        ``competitor_var``, ``sqrt_2lnp``, ``correct_min``,
        ``competitor_max``, ``row_max_competitor_mean`` (mean over inputs of
        the largest competitor: the finite-``p`` extreme level, below
        ``sqrt(2 ln p)``), ``margin_min`` (smallest correct minus largest
        competitor), ``frac_correct_above_sqrt_2lnp``,
        ``recall`` (fraction of rows whose correct score beats all competitors).
    """
    p = correct.size
    lvl = math.sqrt(2 * math.log(p))
    return {"p": int(p), "correct_mean": float(correct.mean()), "correct_var": float(correct.var(ddof=1)),
            "competitor_mean": float(competitors.mean()), "competitor_var": float(competitors.var(ddof=1)),
            "sqrt_2lnp": lvl, "correct_min": float(correct.min()),
            "competitor_max": float(competitors.max()),
            "row_max_competitor_mean": float(competitors.max(axis=1).mean()),
            "margin_min": float((correct - competitors.max(axis=1)).min()),
            "frac_correct_above_sqrt_2lnp": float(np.mean(correct > lvl)),
            "recall": float(np.mean(correct > competitors.max(axis=1)))}


def singular_values(W):
    """Singular values of ``W / sqrt(d)`` in decreasing order."""
    W = np.asarray(W, dtype=np.float64)
    return np.linalg.svd(W / math.sqrt(W.shape[0]), compute_uv=False)


def _ks(x, dist):
    return float(stats.kstest(x, dist.cdf).statistic)


def spectrum_vs_quarter_circle(W, kappa=1.0, *, rank=None):
    """Compare the nonzero singular values of ``W`` with the (truncated) quarter circle.

    Parameters
    ----------
    W : ndarray (d, d)
    kappa : float
        Rank fraction; 1 compares all singular values with the quarter circle,
        ``kappa < 1`` the top ``rank`` with ``hcizz.truncated_quarter_circle(kappa)``.
    rank : int, optional
        Number of nonzero singular values (default ``round(kappa d)``).

    Returns
    -------
    dict
        ``scale`` (the one fitted parameter: second-moment match
        ``c^2 mean(s^2) = E_law[s^2]``), ``ks`` (KS statistic of ``c s``
        against the law), ``n``, ``sv`` (scaled singular values), ``law``.

    Notes
    -----
    Fitting the scale by the second moment (not by minimising KS) keeps the
    KS distance an honest goodness-of-fit number.  The KS p-value is not
    reported: singular values are not independent samples.
    """
    s = singular_values(W)
    d = s.size
    k = d if kappa >= 1 else (rank if rank is not None else max(1, int(round(kappa * d))))
    s = s[:k]
    law = hcizz_law("quarter_circle") if kappa >= 1 else hcizz_law("truncated_quarter_circle", kappa)
    m2 = float(law.moment(2))
    c = math.sqrt(m2 / float(np.mean(s * s)))
    return {"scale": c, "ks": _ks(c * s, law), "n": int(k), "sv": (c * s).tolist(),
            "law": "quarter_circle" if kappa >= 1 else f"truncated_quarter_circle({kappa:g})"}


def init_spectrum_vs_mp_product(W0, kappa, *, rank=None):
    """Nonzero squared singular values of ``W0 = Q R^T / sqrt(d m)`` at
    initialisation against ``hcizz.mp_product(kappa)`` (no fitted parameter).

    Returns
    -------
    dict
        ``ks``, ``n``, ``sq`` (the top ``round(kappa d)`` squared singular
        values of ``W0``), ``mean`` and ``law_mean``.

    Notes
    -----
    ``W0`` has i.i.d.-like entries of variance ``1/d`` (``||W0||_F^2 ~ d``), so
    its squared singular values average 1 over all ``d`` of them and
    ``1/kappa`` over the nonzero ones, the mean of ``mp_product(kappa)``.
    """
    law = hcizz_law("mp_product", kappa)
    d = W0.shape[0]
    k = rank if rank is not None else max(1, int(round(kappa * d)))
    sq = np.linalg.svd(np.asarray(W0, np.float64), compute_uv=False)[:k] ** 2
    return {"ks": _ks(sq, law), "n": int(k), "sq": sq.tolist(), "mean": float(sq.mean()),
            "law_mean": float(law.mean())}
