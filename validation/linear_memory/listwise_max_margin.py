r"""The max-margin TAM memory: its per-fact scores against the replica laws at capacity.

The exact listwise solver's optimum (:func:`validation.linear_memory.exact_listwise.listwise_feasibility`
with ``optimal=True``) is the memory of largest tail-average margin :math:`\gamma^*` on an
instance.  In the replica picture the max-margin memory at a load below capacity is the
capacity-point memory at margin :math:`\gamma^*`, so its normalised scores should follow the
laws of docs/listwise.md#laws-of-the-scores-at-capacity: a fraction of the facts pinned at
the margin, the others keeping their Gaussian score (:func:`replica.tam_scores` at finite
``p``, :func:`replica.tam_score_laws` at large ``p``).

* :func:`tam_row_scores` -- per fact, the correct score, the tail mean of the competitor
  scores and their difference, in units of the row's competitor spread (the normalisation
  of ``replica.tam_scores(normalise=True)``);
* :func:`pinned_facts` -- which facts sit at the smallest margin of the memory;
* :func:`listwise_max_margin_trial` -- one instance (module level, for the sweep engine).

Docs: docs/listwise.md#score-laws-at-the-certified-optimum.
"""
from __future__ import annotations

import math
import time

import numpy as np

from hcizz.checks import check_real
from validation.engine import trial

from .exact_listwise import _arrays, _trial_facts, listwise_feasibility, score_unit
from ._docparams import fill_doc

__all__ = ["tam_row_scores", "pinned_facts", "listwise_max_margin_trial", "PINNED_RTOL", "POLISH"]

#: Relative tolerance of "pinned": a fact whose TAM margin is within this fraction of the
#: smallest margin of the memory (:math:`\gamma^*` at the optimum) counts as sitting at it.
PINNED_RTOL = 1e-3

#: Relative shortfall of the margin asked of the second solve (:func:`listwise_max_margin_trial`):
#: its certified memory has margin at least :math:`(1 - \mathrm{POLISH})\gamma^*`, so its
#: direction is within :math:`\sqrt{2\,\mathrm{POLISH}}` of the optimum's (in practice the
#: optimum itself, to about ``1e-12`` relative, on the instances checked).
POLISH = 1e-6


def _checked(facts, W, tau):
    """``(kind, E, U, C, W, k)`` in float64, every argument checked."""
    from replica.listwise import tail_size

    kind, E, U, C = _arrays(facts)
    tau = check_real("tau", tau, low=0, high=1, low_open=True, allow_array=False)
    W = np.asarray(W, np.float64)
    d = E.shape[1]
    if W.shape != (d, d):
        raise ValueError(f"W must have shape {(d, d)}, got {W.shape}")
    if not np.all(np.isfinite(W)) or not np.any(W):
        raise ValueError("W must be finite and not zero")
    return kind, E, U, C, W, float(tail_size(tau, E.shape[0]))


def _correct_and_competitors(kind, E, U, C, W):
    """Correct scores (p,) and competitor scores (p, p - 1), competitors in index order."""
    H = E @ W.T                                               # rows W e_mu
    p = E.shape[0]
    Z = H @ U.T if kind == "op" else np.einsum("mrd,md->mr", U, H)
    off = ~np.eye(p, dtype=bool)
    return np.einsum("md,md->m", C, H), Z[off].reshape(p, p - 1)


def _tail_means(comp, k):
    """Tail means :math:`T_k` of the rows of ``comp`` (fractional ``k``: the last one part-weighted)."""
    desc = -np.sort(-comp, axis=1)
    w = np.clip(k - np.arange(desc.shape[1]), 0.0, 1.0) / k
    return desc @ w


@fill_doc
def tam_row_scores(facts, W, *, tau):
    r"""Return each fact's correct score, tail mean and TAM margin in units of its competitors' spread.

    Parameters
    ----------
    %(facts)s
    W : array_like, shape (d, d)
        A memory (finite, not zero).
    tau : float
        Tail fraction, ``0 < tau <= 1``; the tail holds :math:`k = \max(\tau (p - 1), 1)`
        competitors (:func:`replica.listwise.tail_size`).

    Returns
    -------
    dict of ndarray, shape (p,)
        ``correct`` :math:`z_{\mu\mu} / s_\mu`, ``tail_mean`` :math:`T_k(z_{\mu\rho}, \rho \ne \mu)
        / s_\mu` and ``tam_margin`` (their difference), with :math:`s_\mu` the sample standard
        deviation (``ddof=1``) of the :math:`p - 1` competitor scores of row :math:`\mu`, as
        ``replica.tam_scores(normalise=True)`` divides its rows (the scores are not
        centred there either); ``offset``: the mean competitor score over :math:`s_\mu`.

    Raises
    ------
    ValueError
        Bad ``facts``, ``W`` (shape, not finite, zero) or ``tau``.

    See Also
    --------
    validation.linear_memory.listwise_max_margin.pinned_facts : The facts at the smallest margin.
    replica.tam_scores : The capacity-point memory's scores, same units.

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum

    Examples
    --------
    Three OP facts in two dimensions; at :math:`\tau = 1` the tail is both competitors.

    >>> from validation.linear_memory.data import Facts
    >>> E = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    >>> s = tam_row_scores(Facts("op", E, E), np.array([[1.0, 0.2], [0.0, 1.0]]), tau=1.0)
    >>> print(s["correct"].round(3), s["tail_mean"].round(3), s["tam_margin"].round(3))
    [ 1.414 14.142  1.162] [-0.707  3.536 -0.202] [ 2.121 10.607  1.364]
    """
    kind, E, U, C, W, k = _checked(facts, W, tau)
    correct, comp = _correct_and_competitors(kind, E, U, C, W)
    s = comp.std(axis=1, ddof=1)
    T = _tail_means(comp, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"correct": correct / s, "tail_mean": T / s, "tam_margin": (correct - T) / s,
                "offset": comp.mean(axis=1) / s}


@fill_doc
def pinned_facts(facts, W, *, tau, rtol=PINNED_RTOL):
    r"""Flag the facts whose TAM margin sits at the smallest margin of the memory.

    Parameters
    ----------
    %(facts)s
    W : array_like, shape (d, d)
        A memory (finite, not zero).
    tau : float
        Tail fraction, ``0 < tau <= 1``.
    rtol : float, optional
        Relative tolerance, ``0 <= rtol < 1`` (:data:`PINNED_RTOL`).

    Returns
    -------
    pinned : ndarray of bool, shape (p,)
        :math:`g_\mu \le \gamma + \mathrm{rtol}\,|\gamma|`.
    gamma : float
        :math:`\gamma = \min_\mu g_\mu`, with :math:`g_\mu = (z_{\mu\mu} - T_k(z_\mu)) / s(W)` the
        margins in the solver's unit :math:`s(W) = \sigma_e \sigma_u \|W\|_F`
        (:func:`validation.linear_memory.exact_listwise.score_unit`): the certified margin of
        ``W``, :math:`\gamma^*` for the optimal memory.

    Raises
    ------
    ValueError
        Bad ``facts``, ``W``, ``tau`` or ``rtol``.

    See Also
    --------
    validation.linear_memory.listwise_max_margin.tam_row_scores : The per-row normalised scores.
    validation.linear_memory.exact_listwise.listwise_margins : The same margins, the solver's code path.

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum

    Examples
    --------
    Two facts, identity memory: both margins are :math:`1 / (\sigma_e \sigma_u \|I\|_F) =
    1 / (0.5 \sqrt 2) = \sqrt 2`, both facts pinned.

    >>> from validation.linear_memory.data import Facts
    >>> pinned, gamma = pinned_facts(Facts("op", np.eye(2), np.eye(2)), np.eye(2), tau=1.0)
    >>> print(pinned, f"{gamma:.4f}")
    [ True  True] 1.4142
    """
    rtol = check_real("rtol", rtol, low=0, high=1, high_open=True, allow_array=False)
    kind, E, U, C, W, k = _checked(facts, W, tau)
    correct, comp = _correct_and_competitors(kind, E, U, C, W)
    g = (correct - _tail_means(comp, k)) / (score_unit(facts) * float(np.linalg.norm(W)))
    gamma = float(g.min())
    return g <= gamma + rtol * abs(gamma), gamma


def _sig(x, digits=7):
    return [float(f"{v:.{digits}g}") for v in np.asarray(x, float)]


@trial("linear_memory.listwise_max_margin")
def listwise_max_margin_trial(params):
    r"""One max-margin TAM memory (margin 0 criterion): its certified margin and per-fact scores.

    Parameters
    ----------
    params : dict
        ``model`` ("op"/"dp"), ``d``, ``n`` (facts), ``tau``, ``seed``: the facts of
        :func:`validation.linear_memory.exact_listwise.listwise_exact_trial` with the same
        ``(model, d, n, seed)`` (float32 draws), solved to the optimum.

    Returns
    -------
    dict
        ``p``, ``k`` (tail size), ``feasible``, ``optimal``, ``verified``, ``gamma_low`` /
        ``gamma_high`` (the solver's certified bracket of :math:`\gamma^*`), ``active``
        (solver vertices), ``cpu_seconds``; for a feasible instance also ``gamma`` (smallest
        margin of the returned memory, :func:`pinned_facts`), ``pinned`` (facts at it),
        ``offset_mean`` (mean competitor score over the row spread, averaged over facts) and,
        one entry per fact ordered by increasing correct score (7 significant digits),
        ``correct``, ``tail_mean``, ``tam_margin`` (:func:`tam_row_scores`) and ``is_pinned``.

    Raises
    ------
    ValueError
        Bad ``model``, ``d``, ``n`` or ``tau``.

    See Also
    --------
    validation.linear_memory.exact_listwise.listwise_exact_trial : The decision on the same instance.

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum

    Examples
    --------
    Fourteen DP facts in six dimensions: 13 of them sit at the optimal margin.

    >>> r = listwise_max_margin_trial({"model": "dp", "d": 6, "n": 14, "tau": 0.2, "seed": 0})
    >>> print(r["p"], r["feasible"], r["pinned"], f"{r['gamma']:.4f}", f"{r['gamma_high']:.4f}")
    14 True 13 0.2897 0.2897
    """
    c0 = time.process_time()
    tau = check_real("tau", params["tau"], low=0, high=1, low_open=True, allow_array=False)
    d, p, facts = _trial_facts(params)
    r = listwise_feasibility(facts, criterion="tam", tau=tau, margin=0.0, optimal=True)
    out = {"p": p, "k": float(r.k), "feasible": r.feasible, "optimal": bool(r.optimal),
           "verified": r.verified, "gamma_low": float(r.gamma_low), "gamma_high": float(r.gamma_high),
           "active": int(r.active)}
    W = None
    if r.feasible and r.optimal and r.gamma_low > 0:
        # a second run at margin (1 - POLISH) gamma* returns a memory certified at that margin,
        # the optimum itself.  Written when optimal=True still returned the first memory
        # certified (margin 0 only); since that fix r.W is the optimum already, and the second
        # run is kept so that the committed records are reproduced bit for bit
        r2 = listwise_feasibility(facts, criterion="tam", tau=tau, margin=r.gamma_low * (1.0 - POLISH))
        out["polished"] = bool(r2.feasible and r2.verified)
        W = r2.W if out["polished"] else None
    if W is not None:
        s = tam_row_scores(facts, W, tau=tau)
        pinned, gamma = pinned_facts(facts, W, tau=tau)
        order = np.argsort(s["correct"], kind="stable")
        out.update(gamma=gamma, pinned=int(pinned.sum()), offset_mean=float(s["offset"].mean()),
                   correct=_sig(s["correct"][order]), tail_mean=_sig(s["tail_mean"][order]),
                   tam_margin=_sig(s["tam_margin"][order]), is_pinned=pinned[order].tolist())
    out["cpu_seconds"] = time.process_time() - c0
    return out
