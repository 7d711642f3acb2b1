r"""Spherical (Harish-Chandra-Itzykson-Zuber type) integrals over O(d) x O(d).

For ``d x d`` matrices with singular values ``a``, ``b`` (diagonal ``A``, ``B``)
and independent Haar ``O, O'`` in ``O(d)``:

.. math::

    J_d(\theta) = d^{-2} \ln E \exp\big(\theta d \operatorname{Tr}(A O B O'^T)\big).

Limits (docs/rank_constrained.md#spherical-integrals-hcizzspherical)
-------------------------
* ``theta -> inf``: ``J / theta -> Int_0^1 X_A(u) X_B(u) du`` (von Neumann: the
  maximum of ``Tr(A O B O'^T)`` aligns sorted singular values).  At finite ``d``
  this is exact for the empirical profiles, approached with the Laplace rate
  ``J/theta = c - (d - 1) ln(theta) / (2 d theta) + O(1/theta)``.
* small ``theta``: ``J = theta^2 m2(A) m2(B) / 2 + O(theta^4)``; the ``theta^2``
  coefficient is exact at every ``d`` (``E T^2 = m2(A) m2(B)`` for Haar ``O, O'``).
* rank-one ``B`` (rectangular spherical integral): with ``u, v`` uniform on the
  sphere, ``J^(1)_d(theta) = d^-1 ln E exp(theta d u^T A v)``.  *Derived here*
  (Gaussian representation of ``u, v`` with Lagrange multipliers; it agrees with
  Benaych-Georges' rectangular R-transform at ratio 1):

  .. math::

      J^{(1)}(\theta) = \operatorname{ext}_\gamma\Big[\gamma - \tfrac12 E\ln(\gamma^2 - \theta^2\sigma^2)\Big] - 1
                      = \int_0^{\theta^2} \frac{C(t)}{2t}\,dt,

  where ``E 1/(gamma - theta s)`` over the symmetrised singular-value law equals 1
  at the saddle and ``C(theta^2) = gamma(theta) - 1 = theta R_sym(theta)`` is the
  rectangular R-transform (``R_sym``: R-transform of the symmetrised law).  For
  Gaussian ``A`` (quarter circle) ``R_sym(t) = t`` and ``J^(1) = theta^2 / 2``
  below the transition ``theta = 1``.  Above it the saddle sticks to the edge
  ``gamma = theta sigma_max`` and ``J^(1) = 2 theta - ln theta - 3/2``
  (continuous with its first derivative at ``theta = 1``; tested against mpmath
  up to ``theta = 10``).

Finite-``d`` estimators
-----------------------
* ``d = 2``: exact.  ``E_{O'} exp Tr(O'^T N) = (I_0(r) + I_0(r')) / 2`` with
  ``r = |(N11 + N22, N21 - N12)|``, ``r' = |(N11 - N22, N21 + N12)|``; the
  remaining average over ``O`` (rotation angle, with and without reflection)
  is a periodic analytic integral done by the trapezoidal rule.
* any ``d``: Monte Carlo over Haar ``O, O'`` (QR of Gaussian matrices) with a
  log-mean-exp estimate and a delta-method standard error; for rank-one ``B``
  the ``u`` average is done exactly (von Mises-Fisher normaliser, a Bessel
  function) and ``v`` is importance-sampled from the angular central Gaussian
  tilted by the saddle point, which removes the exponential weight degeneracy.
* any ``d``, large ``theta d^2``: annealed importance sampling (:func:`hciz_ais`)
  through tempered targets ``exp(beta theta d T)``, with exact Gibbs updates of
  ``O`` and ``O'`` on random 2-planes (von Mises angles, rotations and reflections).

The estimators live by concept in the submodules and are re-exported here:
:mod:`~hcizz.spherical.limits` (large and small ``theta``, quantile coupling),
:mod:`~hcizz.spherical.exact_d2`, :mod:`~hcizz.spherical.monte_carlo`,
:mod:`~hcizz.spherical.ais` and :mod:`~hcizz.spherical.rank_one`;
:func:`spherical_integral` chooses among them.
"""
from __future__ import annotations

import numpy as np

from ..checks import check_real
from .ais import hciz_ais
from .exact_d2 import hciz_exact_d2
from .limits import hciz_large_theta, hciz_small_theta, quantile_coupling_value
from .monte_carlo import hciz_mc
from ._profiles import _is_law
from .rank_one import log_bessel_i, rank_one_mc, rank_one_spherical_integral, rectangular_r_transform

__all__ = ["spherical_integral", "hciz_large_theta", "hciz_small_theta", "hciz_exact_d2",
           "hciz_mc", "hciz_ais", "rank_one_spherical_integral", "rank_one_mc",
           "rectangular_r_transform",
           "quantile_coupling_value", "log_bessel_i"]


def spherical_integral(theta, a, b=None, *, method="auto", n=None, rng=None, levels=100):
    r"""Compute the spherical integral :math:`J(\theta)` of two singular-value profiles.

    Parameters
    ----------
    theta : float or array_like
        Conjugate field(s) :math:`\ge 0`.
    a : array_like or law
        Singular values of ``A`` (length ``d``) or a distribution (large-``d`` limits).
    b : array_like, law or None
        Singular values of ``B``; ``None`` means rank-one ``B`` (the rectangular
        spherical integral :math:`d^{-1} \ln E \exp(\theta d\, u^T A v)`).
    method : {"auto", "large_theta", "small_theta", "rank_one", "exact", "mc", "ais"}
        ``"large_theta"``: :math:`\theta \int X_A X_B`; ``"small_theta"``:
        :math:`\theta^2 m_2(A) m_2(B) / 2`; ``"rank_one"``: large-``d`` rank-one limit;
        ``"exact"``: :math:`d = 2` quadrature; ``"mc"``: Monte Carlo (:func:`hciz_mc`,
        or :func:`rank_one_mc` when ``b`` is None); ``"ais"``: annealed importance
        sampling (:func:`hciz_ais`, reliable at large :math:`\theta d^2`).  ``"auto"``:
        exact for :math:`d = 2`, Monte Carlo for arrays, the rank-one limit for laws
        with ``b=None``.
    n : int, optional
        Monte Carlo samples (default 20000) or, for ``"ais"``, chains (default 1000).
    rng : None, int or Generator, optional
        Seed or generator (``"mc"`` and ``"ais"`` only).
    levels : int, optional
        AIS temperatures (``"ais"`` only; default 100).

    Returns
    -------
    float, ndarray or Estimate
        A number or array for the deterministic methods, an :class:`Estimate`
        for ``"mc"`` and ``"ais"``.

    See Also
    --------
    hcizz.hciz_exact_d2 : The exact :math:`d = 2` integral.
    hcizz.hciz_large_theta : The large-field slope.
    hcizz.hciz_small_theta : The small-field expansion.
    hcizz.hciz_mc : Plain Monte Carlo.
    hcizz.hciz_ais : Annealed importance sampling.
    hcizz.rank_one_spherical_integral : The large-``d`` rank-one limit.

    Notes
    -----
    For :math:`d \times d` matrices with singular values :math:`a, b` and Haar
    :math:`O, O'`,

    .. math::

        J_d(\theta) = \frac{1}{d^2} \ln E \exp\bigl(\theta d\, \mathrm{Tr}(A O B O'^T)\bigr).

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#spherical-integrals-hcizzspherical

    Examples
    --------
    >>> import numpy as np
    >>> a = b = np.array([1.0, 2.0])
    >>> print(f"{spherical_integral(1e-3, a, b, method='exact') / 1e-6:.4f}")  # theta^2 m2^2 / 2
    3.1250
    """
    methods = ("auto", "large_theta", "small_theta", "rank_one", "exact", "mc", "ais")
    if method not in methods:
        raise ValueError(f"method must be one of {methods}, got {method!r}")
    if method == "auto":
        if b is None:
            method = "rank_one" if _is_law(a) else "mc"
        elif not _is_law(a) and not _is_law(b) and np.size(a) == 2 and np.size(b) == 2:
            method = "exact"
        else:
            method = "mc"
    if method == "large_theta":
        if b is None:
            raise ValueError("b is required for the large-theta limit of the full spherical integral")
        return np.asarray(check_real("theta", theta, low=0)) * quantile_coupling_value(a, b)
    if method == "small_theta":
        return hciz_small_theta(theta, a, b)
    if method == "rank_one":
        return rank_one_spherical_integral(theta, a)
    if method == "exact":
        return hciz_exact_d2(theta, a, b)
    if method == "ais":
        if b is None:
            raise ValueError("b is required for method='ais' (use method='mc' for rank-one b)")
        return hciz_ais(theta, a, b, chains=1000 if n is None else n, levels=levels, rng=rng)
    n = 20000 if n is None else n
    if b is None:
        return rank_one_mc(theta, a, n=n, rng=rng)
    return hciz_mc(theta, a, b, n=n, rng=rng)
