r"""The max-margin full-rank memory: structure and spectrum without an optimiser's bias.

The exact solver's optimum (:func:`validation.linear_memory.exact.exact_feasibility`
with ``optimal=True``) is the memory of largest cosine margin on an instance.  Near the
exact threshold its margin tends to 0 and, by the replica argument, its structure
should approach that of the :math:`V_p` minimiser
(docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p): a few competitors
per fact tied with the correct score, the correct score pinned at the mean of its own
and of its active competitors' scores.  Its singular values test the quarter-circle
claim of the linear-memory paper (arXiv:2605.10795) with no training involved.

* :func:`max_margin_trial` -- one instance (module level, for the sweep engine);
* :func:`active_counts` and :func:`normalised_margins` -- what it measures, from
  ``W`` alone (no solver internals).

Docs: docs/linear_memory.md#the-max-margin-memory-at-the-threshold.
"""
from __future__ import annotations

import math
import time

import numpy as np

from validation.engine import trial

from ._docparams import fill_doc
from .exact import _trial_instance, exact_feasibility
from replica.load import load_of

__all__ = ["active_counts", "normalised_margins", "max_margin_trial", "ACTIVE_RTOL"]

#: Relative tolerance of "active": a pair whose margin is within this fraction of
#: the smallest one counts as tied with it (the solver's optimum is accurate to about
#: ``1e-6`` relative; counts change by under 1 % between ``1e-4`` and ``1e-2``).
ACTIVE_RTOL = 1e-3


def _op_arrays(E, U, W):
    """``E``, ``U``, ``W`` as float arrays of an OP fact set and a memory, shapes checked."""
    E, U, W = (np.asarray(a, float) for a in (E, U, W))
    if E.ndim != 2 or E.shape[0] < 2:
        raise ValueError(f"E must be a (p, d) array with p >= 2, got shape {E.shape}")
    if U.shape != E.shape:
        raise ValueError(f"U must have the shape of E {E.shape}, got {U.shape}")
    if W.shape != (E.shape[1], E.shape[1]):
        raise ValueError(f"W must be ({E.shape[1]}, {E.shape[1]}), got shape {W.shape}")
    return E, U, W


def _pair_margins(E, U, W):
    r"""Margins ``m[mu, rho]`` of the OP pairs in the solver's units (``inf`` on the diagonal):
    unit inputs, candidates scaled to unit root-mean-square norm, per unit :math:`\|W\|_F`."""
    Z = (E @ W.T) @ U.T                                   # Z[mu, rho] = (W e_mu) . u_rho
    scale = np.linalg.norm(E, axis=1)[:, None] * math.sqrt(float(np.mean((U * U).sum(axis=1)))) \
        * np.linalg.norm(W)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = (np.diag(Z)[:, None] - Z) / scale
    np.fill_diagonal(m, np.inf)
    return m


@fill_doc
def active_counts(E, U, W, *, rtol=ACTIVE_RTOL):
    r"""Count, per fact, the competitor pairs tied at the smallest margin.

    Parameters
    ----------
    E : ndarray, shape (p, d)
        Inputs (rows).
    U : ndarray, shape (p, d)
        Candidates (OP: shared; the correct one of input :math:`\mu` is ``U[mu]``).
    W : ndarray, shape (d, d)
        A memory recalling every fact.
    rtol : float, optional
        Relative tolerance of the tie (:data:`ACTIVE_RTOL`).

    Returns
    -------
    counts : ndarray of int, shape (p,)
        Pairs :math:`(\mu, \rho)` with margin at most :math:`(1 + \mathrm{rtol})\gamma`.
    gamma : float
        The smallest margin :math:`\gamma = \min_{\mu\rho}
        (W e_\mu)\cdot(u_\mu - u_\rho) / (\|e_\mu\|\, \bar u\, \|W\|_F)`, with
        :math:`\bar u` the root-mean-square candidate norm: the Euclidean margin the exact
        solver maximises (its ``gamma`` for ``optimal=True``).

    See Also
    --------
    validation.linear_memory.max_margin.normalised_margins : The margins in score units.
    validation.linear_memory.exact.exact_feasibility : The solver whose optimum this reads.

    %(ref_max_margin)s

    Examples
    --------
    Two facts in two dimensions, the identity memory: both pairs tie at
    :math:`1 / \sqrt{2}` (unit inputs and candidates, :math:`\|I\|_F = \sqrt{2}`).

    >>> import numpy as np
    >>> counts, gamma = active_counts(np.eye(2), np.eye(2), np.eye(2))
    >>> print(counts, f"{gamma:.4f}")
    [1 1] 0.7071
    """
    c = _pair_margins(*_op_arrays(E, U, W))
    gamma = float(c.min())
    return (c <= gamma * (1.0 + rtol) + 1e-15).sum(axis=1), gamma


@fill_doc
def normalised_margins(E, U, W):
    r"""Return each fact's margin and correct score in units of its competitors' spread.

    Parameters
    ----------
    E : ndarray, shape (p, d)
        Inputs (rows).
    U : ndarray, shape (p, d)
        Candidates (OP).
    W : ndarray, shape (d, d)
        The memory.

    Returns
    -------
    margin : ndarray, shape (p,)
        :math:`(z_{\mu\mu} - \max_{\rho\ne\mu} z_{\mu\rho}) / s_\mu`.
    correct : ndarray, shape (p,)
        :math:`(z_{\mu\mu} - m_\mu) / s_\mu`, with :math:`m_\mu`, :math:`s_\mu` the mean and
        standard deviation of the competitor scores of row :math:`\mu` (the normalisation
        of the trained-memory comparison, docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p).

    See Also
    --------
    validation.linear_memory.max_margin.active_counts : The ties at the smallest margin.
    replica.pinned_scores.pinned_scores : The :math:`V_p` minimiser's scores, same units.

    %(ref_max_margin)s

    Examples
    --------
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    >>> m, c = normalised_margins(E, E, np.array([[1.0, 0.2], [0.0, 1.0]]))
    >>> print(m.round(3), c.round(3))
    [ 2.    14.     0.929] [ 3.    15.     1.929]
    """
    E, U, W = _op_arrays(E, U, W)
    Z = (E @ W.T) @ U.T
    p = Z.shape[0]
    off = ~np.eye(p, dtype=bool)
    comp = Z[off].reshape(p, p - 1)
    s = comp.std(axis=1)
    diag = np.diag(Z)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (diag - comp.max(axis=1)) / s, (diag - comp.mean(axis=1)) / s


@fill_doc
@trial("linear_memory.max_margin")
def max_margin_trial(params):
    """One max-margin OP memory: its margin, ties per fact, normalised scores, spectrum.

    Parameters
    ----------
    params : dict
        ``d``, ``alpha`` (target load), ``seed``: the instance of
        :func:`validation.linear_memory.exact.exact_trial` with the same
        ``("op", d, alpha, seed)``.

    Returns
    -------
    dict
        ``p``, ``load``, ``feasible``, ``optimal``; for a feasible instance also
        ``gamma`` (the maximal margin, :func:`active_counts`), ``active_solver`` (pairs with a positive
        multiplier), ``active_hist`` (facts with 0, 1, 2, ... tied pairs),
        ``margin_q`` / ``correct_q`` (10, 50, 90 % quantiles of the normalised margin
        and correct score), ``correct_mean``, ``correct_var``, ``sv`` (singular values
        scaled to mean square 1, descending, 6 significant digits), ``cpu_seconds``.

    See Also
    --------
    validation.linear_memory.exact.exact_trial : The decision on the same instance.

    %(ref_max_margin)s
    """
    c0 = time.process_time()
    d, p, facts = _trial_instance({**params, "model": "op"})
    r = exact_feasibility(facts, optimal=True)
    out = {"p": p, "load": float(load_of(p, d)), "feasible": r.feasible, "optimal": bool(r.optimal)}
    if r.feasible:
        E, U, W = (np.asarray(a, float) for a in (facts.E, facts.U, r.W))
        counts, gamma = active_counts(E, U, W)
        margin, correct = normalised_margins(E, U, W)
        sv = np.linalg.svd(W, compute_uv=False)
        sv = sv / math.sqrt(float(np.mean(sv * sv)))
        out.update(gamma=gamma, active_solver=int(r.active),
                   active_hist=np.bincount(counts).tolist(),
                   margin_q=np.quantile(margin, [0.1, 0.5, 0.9]).tolist(),
                   correct_q=np.quantile(correct, [0.1, 0.5, 0.9]).tolist(),
                   correct_mean=float(correct.mean()), correct_var=float(correct.var()),
                   margin_mean=float(margin.mean()),
                   sv=[float(f"{v:.6g}") for v in sv])
    out["cpu_seconds"] = time.process_time() - c0
    return out
