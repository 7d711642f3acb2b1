r"""The spherical integral at ``d = 2``, exact: the ``O'`` average is a Bessel function
in closed form, the ``O`` average a periodic analytic integral done by the trapezoidal
rule; see :mod:`hcizz.spherical`."""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..checks import check_int, check_real
from ._profiles import _svals
from .._docparams import fill_doc

__all__ = ["hciz_exact_d2"]


def _log_i0(r):
    return np.log(special.i0e(r)) + r


@fill_doc
def hciz_exact_d2(theta, a, b, *, n_angle=512):
    r"""Compute :math:`J_2(\theta)` for :math:`2 \times 2` matrices, exact up to the trapezoidal rule.

    The :math:`O'` average is a Bessel function in closed form; the remaining
    average over the rotation angle of :math:`O` (with and without reflection) is
    periodic and analytic, so the trapezoidal rule converges exponentially.

    Parameters
    ----------
    %(fields_theta)s
    a, b : array_like, length 2
        Singular values.
    n_angle : int, optional
        Trapezoid points in the angle, :math:`\ge 8` (default 512).

    Returns
    -------
    float or ndarray
        :math:`J_2(\theta) = \ln E \exp(2 \theta\, \mathrm{Tr}(A O B O'^T)) / 4`.

    See Also
    --------
    hcizz.hciz_mc : Monte Carlo at any :math:`d`, checked against this.
    hcizz.hciz_ais : Annealed importance sampling, for large fields.
    hcizz.hciz_large_theta : The large-field slope.

    %(refs_spherical)s

    Examples
    --------
    Between the small-field law :math:`1.5625\, \theta^2` and the large-field slope 1.75:

    >>> print(*(f"{j:.6f}" for j in hciz_exact_d2([0.1, 1.0, 10.0], [0.5, 1.5], [1.0, 2.0])))
    0.015468 0.968449 16.071454
    """
    th = np.atleast_1d(check_real("theta", theta, low=0))
    a = _svals("a", a)
    b = _svals("b", b)
    if a.size != 2 or b.size != 2:
        raise ValueError("a and b must have exactly 2 singular values for the d = 2 formula")
    n_angle = check_int("n_angle", n_angle, low=8)
    phi = 2 * np.pi * np.arange(n_angle) / n_angle
    c, s = np.cos(phi), np.sin(phi)
    out = []
    for t in th:
        logs = []
        for refl in (1.0, -1.0):
            # O = [[c, -s*refl], [s, c*refl]] (rotation, or rotation times diag(1, -1))
            o11, o12, o21, o22 = c, -s * refl, s, c * refl
            k = 2 * t  # theta * d
            n11 = k * a[0] * o11 * b[0]
            n12 = k * a[0] * o12 * b[1]
            n21 = k * a[1] * o21 * b[0]
            n22 = k * a[1] * o22 * b[1]
            r1 = np.hypot(n11 + n22, n21 - n12)
            r2 = np.hypot(n11 - n22, n21 + n12)
            l1, l2 = _log_i0(r1), _log_i0(r2)
            logs.append(np.logaddexp(l1, l2) - math.log(2))
        logs = np.concatenate(logs)
        lme = special.logsumexp(logs) - math.log(logs.size)
        out.append(lme / 4)
    out = np.asarray(out)
    return out if np.ndim(theta) else float(out[0])
