r"""The load :math:`\alpha = p \ln p / d^2` and its inverse: the one home of the conversion.

Capacities of the linear-memory paper (arXiv:2605.10795) are loads
:math:`\alpha = p \ln p / d^2`; experiments choose an integer number of facts
``p`` for a target load.  :func:`p_of_load` solves :math:`p \ln p = \alpha d^2`
exactly through the Lambert W function, :math:`p = e^{W(\alpha d^2)}`;
:func:`p_from_load` rounds it to the integer ``p >= 2`` whose load is closest.
"""
from __future__ import annotations

import numpy as np

from hcizz.checks import check_int, check_real

from ._docparams import fill_doc

__all__ = ["load_of", "p_of_load", "p_from_load"]


@fill_doc
def load_of(p, d):
    r"""Compute the load :math:`\alpha = p \ln p / d^2`.

    Parameters
    ----------
    p : int or array_like
        Number of facts (> 0).
    d : int or array_like
        Dimension.

    Returns
    -------
    float or ndarray
        :math:`p \ln p / d^2`.

    See Also
    --------
    replica.p_of_load : The inverse, for real :math:`p`.
    replica.p_from_load : The integer :math:`p` whose load is closest to a target.

    %(refs_paper_model)s

    Examples
    --------
    >>> print(f"{load_of(51, 20):.4f}")     # 51 ln 51 = 200.52
    0.5013
    >>> print(load_of(np.array([51, 100]), 20))
    [0.50130777 1.15129255]
    """
    return p * np.log(p) / np.asarray(d, float) ** 2 if np.ndim(d) else p * np.log(p) / d**2


@fill_doc
def p_of_load(alpha, d):
    r"""Solve :math:`p \ln p = \alpha d^2` for real ``p``: :math:`p = e^{W(\alpha d^2)}`.

    Parameters
    ----------
    alpha : float or array_like
        Load (>= 0).
    d : float or array_like
        Dimension (> 0).

    Returns
    -------
    float or ndarray
        The real solution (``>= 1``; :math:`W` is the principal branch of the
        Lambert function), broadcast over ``alpha`` and ``d``.

    See Also
    --------
    replica.load_of : The load of a given :math:`p`.
    replica.p_from_load : The same, rounded to the best integer :math:`p \ge 2`.

    Notes
    -----
    :math:`p \ln p = x` with :math:`p = e^{w}` is :math:`w e^{w} = x`, so
    :math:`w = W(x)`, computed by ``scipy.special.lambertw`` to double precision.

    %(refs_paper_model)s

    Examples
    --------
    >>> p = p_of_load(0.5, 20)
    >>> print(f"{p:.6f} {p * np.log(p):.9f}")
    50.893910 200.000000000
    """
    from scipy.special import lambertw

    dd = np.asarray(d, float)
    x = np.asarray(alpha, float) * dd * dd          # alpha d d: the rounding of the callers it replaced
    if np.any(x < 0) or np.any(np.isnan(x)):
        raise ValueError(f"alpha * d^2 must be >= 0, got {alpha!r} and {d!r}")
    out = np.exp(lambertw(x).real)
    return float(out) if out.ndim == 0 else out


@fill_doc
def p_from_load(alpha, d):
    r"""Return the integer number of facts whose load :math:`p \ln p / d^2` is closest to ``alpha``.

    Parameters
    ----------
    alpha : float
        Target load (> 0).
    %(d)s

    Returns
    -------
    int
        ``p >= 2``: the floor or ceiling of :func:`p_of_load`, whichever load is
        closer to ``alpha``.

    See Also
    --------
    replica.p_of_load : The real solution of :math:`p \ln p = \alpha d^2`.
    replica.load_of : The load of a given :math:`p`.

    %(refs_paper_model)s

    Examples
    --------
    >>> print(p_from_load(0.5, 20))        # 51 ln 51 = 200.5 = 0.5 * 20^2
    51
    """
    alpha = check_real("alpha", alpha, low=0, low_open=True, allow_array=False)
    d = check_int("d", d, low=1)
    p = p_of_load(alpha, d)
    lo, hi = max(2, int(np.floor(p))), max(2, int(np.ceil(p)))
    return lo if abs(load_of(lo, d) - alpha) <= abs(load_of(hi, d) - alpha) else hi
