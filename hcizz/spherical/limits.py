r"""Limits of the spherical integral: large ``theta`` (the quantile coupling
``Int_0^1 X_A X_B du``, von Neumann's trace inequality) and small ``theta``
(``theta^2 m2(A) m2(B) / 2``, exact at every ``d``); see :mod:`hcizz.spherical`."""
from __future__ import annotations

import numpy as np

from ..checks import check_real
from ._profiles import _is_law, _m2, _profile_nodes, _svals
from .._docparams import fill_doc

__all__ = ["quantile_coupling_value", "hciz_large_theta", "hciz_small_theta"]


@fill_doc
def quantile_coupling_value(a, b, *, n=400):
    r"""Compute the quantile coupling :math:`\int_0^1 X_A(u) X_B(u)\, du` of two singular-value profiles.

    By von Neumann's trace inequality this is the maximum of
    :math:`\mathrm{Tr}(A O B O'^T) / d` over orthogonal :math:`O, O'` (sorted singular
    values aligned), hence the large-:math:`\theta` slope of the spherical integral.

    Parameters
    ----------
    a, b : array_like or law
        Singular values (empirical quantile functions; different lengths are
        allowed) or distributions with ``ppf`` and optional ``atom`` (mass at 0).
    n : int, optional
        Gauss-Legendre nodes when a law is involved (default 400).

    Returns
    -------
    float
        The integral; exact (a sum over the common refinement of the two step
        functions) when both profiles are arrays.

    See Also
    --------
    hcizz.hciz_large_theta : The same value, as the large-field slope.
    replica.quantile_coupling : The normalised coupling with the quarter circle.

    %(refs_paper_quantile_coupling)s

    Examples
    --------
    Sorted singular values aligned: :math:`(1 \cdot 0.5 + 2 \cdot 1.5)/2`:

    >>> print(quantile_coupling_value([1.0, 2.0], [0.5, 1.5]))
    1.75
    """
    if not _is_law(a) and not _is_law(b):
        sa = np.sort(_svals("a", a))
        sb = np.sort(_svals("b", b))
        # exact integral of the product of two step functions
        br = np.unique(np.concatenate([np.arange(sa.size + 1) / sa.size, np.arange(sb.size + 1) / sb.size]))
        mid = (br[:-1] + br[1:]) / 2
        xa = sa[np.minimum((mid * sa.size).astype(int), sa.size - 1)]
        xb = sb[np.minimum((mid * sb.size).astype(int), sb.size - 1)]
        return float(np.sum(np.diff(br) * xa * xb))
    law, other = (a, b) if _is_law(a) else (b, a)
    u, w, x_law = _profile_nodes(law, n)
    if _is_law(other):
        atom = float(getattr(other, "atom", 0.0))
        v = np.clip((u - atom) / (1 - atom), 0, 1)
        x_other = np.where(u > atom, other.ppf(v), 0.0)
    else:
        so = np.sort(_svals("a" if other is a else "b", other))
        x_other = so[np.minimum((u * so.size).astype(int), so.size - 1)]
    return float(np.sum(w * x_law * x_other))


@fill_doc
def hciz_large_theta(a, b, **kw):
    r"""Return the large-``theta`` slope :math:`\lim J(\theta)/\theta = \int_0^1 X_A X_B\, du`.

    Same as :func:`quantile_coupling_value`.

    Parameters
    ----------
    a, b : array_like or law
        Singular-value profiles (arrays or laws with ``ppf``/``atom``).
    **kw
        Passed to :func:`quantile_coupling_value` (``n``).

    Returns
    -------
    float
        The limit of :math:`J(\theta) / \theta`.

    See Also
    --------
    hcizz.quantile_coupling_value : The coupling computed.
    hcizz.hciz_small_theta : The opposite limit.
    hcizz.hciz_exact_d2 : The exact :math:`d = 2` integral it bounds.

    %(refs_spherical)s

    Examples
    --------
    >>> print(hciz_large_theta([0.5, 1.5], [1.0, 2.0]))
    1.75
    """
    return quantile_coupling_value(a, b, **kw)


@fill_doc
def hciz_small_theta(theta, a, b):
    r"""Return the small-``theta`` expansion :math:`\theta^2 m_2(A) m_2(B) / 2` of :math:`J(\theta)`.

    The :math:`\theta^2` coefficient is exact at every :math:`d`
    (:math:`E T^2 = m_2(A) m_2(B)` under Haar :math:`O, O'`); the error is
    :math:`O(\theta^4)`.

    Parameters
    ----------
    theta : float or array_like
        Field(s).
    a, b : array_like or law
        Singular-value profiles; :math:`m_2` is the mean square singular value
        (for a law, the second moment times ``1 - atom``).

    Returns
    -------
    ndarray
        :math:`\theta^2 m_2(A) m_2(B) / 2`, shape of ``theta``.

    See Also
    --------
    hcizz.hciz_large_theta : The opposite limit.
    hcizz.hciz_exact_d2 : The exact :math:`d = 2` integral it approximates.

    %(refs_spherical)s

    Examples
    --------
    :math:`m_2 = 2.5` and :math:`1.25`, so the coefficient is :math:`1.5625`:

    >>> print(hciz_small_theta([0.01, 0.1], [1.0, 2.0], [0.5, 1.5]))
    [0.00015625 0.015625  ]
    """
    th = check_real("theta", theta)
    return np.asarray(th) ** 2 * _m2("a", a) * _m2("b", b) / 2
