"""The adaptive search over the number of facts of the transformer capacity studies.

The capacity of a configuration is searched on a geometric grid of numbers of
facts (:func:`grid_facts`, ratio ``2^(1/4)`` in the studies): each path
brackets the 99 % point by moves of several grid points and then bisects on
the grid (:func:`next_grid_index`); :func:`shape_of` turns the paper's ratios
``H d_h / d`` and ``m / d`` into a model shape.  The plans and the round-by-round
search live in :mod:`validation.studies.factual_recall_capacity`; the fit of the
outcomes in :func:`validation.factual_recall.fits.fit_capacity`.

docs/factual_recall.md#facts-per-parameter-budget-checked.
"""
from __future__ import annotations

from .task import split_facts

__all__ = ["shape_of", "grid_facts", "next_grid_index", "MAX_HEADS"]

#: Heads of a shape with ``H d_h >= MAX_HEADS`` (the paper's 8); below it ``H d_h``
#: heads of size 1.
MAX_HEADS = 8


def shape_of(d, attn_ratio, mlp_ratio, max_heads=MAX_HEADS):
    """``(d, H, d_h, m)`` for the ratios ``H d_h / d`` and ``m / d``.

    Parameters
    ----------
    d : int
        Embedding dimension of the model.
    attn_ratio, mlp_ratio : float
        ``H d_h / d`` and ``m / d``.
    max_heads : int
        Heads used when ``H d_h >= max_heads`` (the paper's 8); below that
        ``H = H d_h`` heads of size 1.

    Returns
    -------
    tuple of int
        ``(d, H, d_h, m)``: embedding dimension, number of heads, head size
        ``round(attn_ratio d) / H`` and MLP width ``round(mlp_ratio d)``.

    Raises
    ------
    ValueError
        If ``round(attn_ratio d) < 1`` or it is not a multiple of the number of
        heads.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked

    Examples
    --------
    >>> shape_of(16, 1.0, 1.0), shape_of(16, 0.25, 4.0)
    ((16, 8, 2, 16), (16, 4, 1, 64))
    """
    hd = int(round(attn_ratio * d))
    m = int(round(mlp_ratio * d))
    if hd < 1:
        raise ValueError(f"attn_ratio * d must be >= 1, got {attn_ratio} * {d}")
    H = max_heads if hd >= max_heads else hd
    if hd % H:
        raise ValueError(f"H d_h = {hd} is not a multiple of {H} heads")
    return int(d), H, hd // H, m


def grid_facts(k, n0, ratio):
    """Number of facts ``S R`` (square split) at grid index ``k`` of a geometric grid.

    Parameters
    ----------
    k : int
        Grid index (negative below the origin).
    n0 : float
        Grid origin: the target number of facts at ``k = 0`` (the study uses
        ``rate0`` times the parameter count).
    ratio : float
        Ratio of consecutive grid points (``2^(1/4)`` in the study).

    Returns
    -------
    int
        ``S R`` for the square split ``R = round(sqrt(n))``, ``S = round(n / R)``
        of the target ``n = max(4, round(n0 ratio^k))``; it can differ slightly
        from ``n`` (128 becomes 12 x 11 = 132), and two neighbouring indices can
        give the same number.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked

    Examples
    --------
    >>> grid_facts(0, 64, 2 ** 0.25), grid_facts(4, 64, 2 ** 0.25)   # 128 -> 11 x 12
    (64, 132)
    """
    S, R = split_facts(max(4, int(round(n0 * ratio ** k))))
    return S * R


def next_grid_index(tested, start, *, max_trials=8, step=4):
    """Next grid index of one adaptive path, or None when the path is done.

    Parameters
    ----------
    tested : dict
        ``{k: success}`` of the trials made so far on this path.
    start : int
        Grid index of the path's first trial.
    max_trials : int
        Most trials on one path: None is returned once ``tested`` holds this many.
    step : int
        Grid indices per move while not bracketed (4: a factor 2 in ``N`` on the
        ``2^(1/4)`` grid).

    Returns
    -------
    int or None
        ``start`` first; while only successes (failures) are known, ``step``
        indices above the largest success (below the smallest failure); once
        bracketed, the index halfway between the largest success and the
        smallest failure (bisection on the grid); None once they are adjacent
        (or inverted) or after ``max_trials`` trials.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked

    Examples
    --------
    >>> next_grid_index({}, 0), next_grid_index({0: True}, 0), next_grid_index({0: True, 4: False}, 0)
    (0, 4, 2)
    >>> next_grid_index({0: True, 2: False, 1: True}, 0) is None
    True
    """
    if not tested:
        return int(start)
    if len(tested) >= max_trials:
        return None
    ok = [k for k, s in tested.items() if s]
    bad = [k for k, s in tested.items() if not s]
    if not bad:
        return max(ok) + step
    if not ok:
        return min(bad) - step
    lo, hi = max(ok), min(bad)
    if hi - lo > 1:
        return (lo + hi) // 2
    return None
