"""Singular-value profiles of the spherical integrals: an array of singular values or a
law with ``ppf`` (and an optional ``atom`` at zero), checked and turned into quadrature
nodes.  Private helpers shared by the estimators of :mod:`hcizz.spherical`."""
from __future__ import annotations

import numpy as np

from ..checks import check_array, check_real
from ..numerics import gauss_legendre

__all__: list[str] = []   # private to hcizz.spherical


def _is_law(p):
    return hasattr(p, "ppf") and not isinstance(p, np.ndarray)


def _profile_nodes(p, n=400):
    """Quadrature nodes/weights in u in (0,1) and X_p(u) for a law (with atom)."""
    t, w = gauss_legendre(n)
    # u = 1 - (1 - t)^3 smooths an X ~ c - (1-u)^(2/3) edge at u -> 1
    u = 1 - (1 - t) ** 3
    wu = w * 3 * (1 - t) ** 2
    atom = float(getattr(p, "atom", 0.0))
    v = np.clip((u - atom) / (1 - atom), 0, 1)
    x = np.where(u > atom, p.ppf(v), 0.0)
    return u, wu, x


def _svals(name, a):
    arr = check_array(name, a, ndim=1)
    if arr.size == 0 or np.any(arr < 0):
        raise ValueError(f"{name} must be a non-empty 1-d array of singular values >= 0")
    return arr


def _theta_pair(theta, a, b):
    """Validate ``theta >= 0`` and two singular-value profiles of equal length."""
    th = check_real("theta", theta, low=0, allow_array=False)
    a = _svals("a", a)
    b = _svals("b", b)
    if a.size != b.size:
        raise ValueError(f"a and b must have the same length, got {a.size} and {b.size}")
    return th, a, b


def _m2(name, p):
    if _is_law(p):
        atom = float(getattr(p, "atom", 0.0))
        return (1 - atom) * float(p.moment(2))
    s = _svals(name, p)
    return float(np.mean(s * s))
