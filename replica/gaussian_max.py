"""Moments of the maximum of ``n`` i.i.d. standard normal variables."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri_exp

from hcizz.checks import check_real

__all__ = ["gaussian_max_moments"]

# Trapezoid nodes in u = ln s (s ~ Exp(1)); see Notes of gaussian_max_moments.
_U_LO, _U_HI, _H = -60.0, 4.5, 0.05
_U = np.arange(_U_LO, _U_HI + _H / 2, _H)
_S = np.exp(_U)
_W = _H * np.exp(_U - _S)          # e^{-s} ds = e^{u - e^u} du
_W /= _W.sum()                     # exact normalisation (removes a 6e-14 rounding bias)


def gaussian_max_moments(n):
    r"""Compute the first two moments of :math:`M_n = \max(X_1, \dots, X_n)`, :math:`X_i` i.i.d. :math:`N(0, 1)`.

    Parameters
    ----------
    n : float or array_like
        Number of variables, :math:`2 \le n \le 10^{15}` (real values are accepted:
        the formula below is analytic in :math:`n`).

    Returns
    -------
    m1 : float or ndarray
        :math:`E[M_n]`, relative accuracy about 1e-12.
    m2 : float or ndarray
        :math:`E[M_n^2]`, relative accuracy about 1e-12.

    See Also
    --------
    replica.order_stats.TopNormals : Exact draws of the top order statistics.
    replica.energy.cv_features : Control variates centred with these moments.

    Notes
    -----
    Since :math:`\Phi(M_n)^n` is uniform, :math:`S = -n \ln \Phi(M_n)` is
    :math:`\mathrm{Exp}(1)` (Renyi), so :math:`M_n = \Phi^{-1}(e^{-S/n})` exactly and

    .. math:: E[g(M_n)] = \int_0^\infty e^{-s} g(\Phi^{-1}(e^{-s/n}))\,ds .

    :math:`\Phi^{-1}(e^{y})` is evaluated by :func:`scipy.special.ndtri_exp`, which
    is accurate both for tiny tails (:math:`s/n` down to :math:`10^{-40}`) and for
    :math:`y \to -\infty`.  The substitution :math:`s = e^u` removes the logarithmic
    singularity at :math:`s = 0` (the integrand becomes :math:`e^{u - e^u} g`,
    decaying exponentially as :math:`u \to -\infty` and doubly exponentially as
    :math:`u \to \infty`); the integrand is analytic in the strip
    :math:`|\mathrm{Im}\, u| < \pi/2`, so the trapezoid rule with step :math:`h = 0.05`
    on :math:`u \in [-60, 4.5]` has discretisation error of order
    :math:`e^{-\pi^2 / h}` (negligible) and truncation error below :math:`10^{-24}`.

    References
    ----------
    docs/theory_full_rank.md#maximum-of-n-gaussians

    Examples
    --------
    For two variables :math:`E[M_2] = 1/\sqrt{\pi}` and :math:`E[M_2^2] = 1`:

    >>> m1, m2 = gaussian_max_moments(2)
    >>> print(f"{m1:.10f} {m2:.10f}")
    0.5641895835 1.0000000000
    >>> print(*gaussian_max_moments([10, 1000]))
    [1.53875273 3.24143577] [ 2.71210379 10.63036126]
    """
    n = check_real("n", n, low=2, high=1e15)
    scalar = np.ndim(n) == 0
    nn = np.atleast_1d(np.asarray(n, dtype=float))
    m = ndtri_exp(-_S[None, :] / nn.ravel()[:, None])
    m1 = (m * _W).sum(axis=1).reshape(nn.shape)
    m2 = (m * m * _W).sum(axis=1).reshape(nn.shape)
    if scalar:
        return float(m1[0]), float(m2[0])
    return m1, m2
