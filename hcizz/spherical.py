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
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .checks import check_array, check_int, check_real, check_rng
from .estimate import Estimate
from .numerics import gauss_legendre

__all__ = ["spherical_integral", "hciz_large_theta", "hciz_small_theta", "hciz_exact_d2",
           "hciz_mc", "hciz_ais", "rank_one_spherical_integral", "rank_one_mc",
           "rectangular_r_transform",
           "quantile_coupling_value", "log_bessel_i"]


# ---------------------------------------------------------------------------
# profiles: either an array of singular values or a law with .ppf (+ .atom)


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


def quantile_coupling_value(a, b, *, n=400):
    r"""Compute the quantile coupling ``Int_0^1 X_A(u) X_B(u) du`` of two singular-value profiles.

    By von Neumann's trace inequality this is the maximum of
    ``Tr(A O B O'^T) / d`` over orthogonal ``O, O'`` (sorted singular values
    aligned), hence the large-``theta`` slope of the spherical integral.

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

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#reduction-to-a-quantile-coupling
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


def hciz_large_theta(a, b, **kw):
    r"""Return the large-``theta`` slope ``lim J(theta)/theta = Int_0^1 X_A X_B du``.

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
        The limit of ``J(theta) / theta``.

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
    """
    return quantile_coupling_value(a, b, **kw)


def hciz_small_theta(theta, a, b):
    r"""Return the small-``theta`` expansion ``theta^2 m2(A) m2(B) / 2`` of ``J(theta)``.

    The ``theta^2`` coefficient is exact at every ``d`` (``E T^2 = m2(A) m2(B)``
    under Haar ``O, O'``); the error is ``O(theta^4)``.

    Parameters
    ----------
    theta : float or array_like
        Field(s).
    a, b : array_like or law
        Singular-value profiles; ``m2`` is the mean square singular value
        (for a law, the second moment times ``1 - atom``).

    Returns
    -------
    ndarray
        ``theta^2 m2(A) m2(B) / 2``, shape of ``theta``.

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
    """
    th = check_real("theta", theta)
    return np.asarray(th) ** 2 * _m2("a", a) * _m2("b", b) / 2


# ---------------------------------------------------------------------------
# d = 2 exact quadrature


def _log_i0(r):
    return np.log(special.i0e(r)) + r


def hciz_exact_d2(theta, a, b, *, n_angle=512):
    r"""Compute ``J_2(theta)`` for ``2 x 2`` matrices, exact up to the trapezoidal rule.

    The ``O'`` average is a Bessel function in closed form; the remaining
    average over the rotation angle of ``O`` (with and without reflection) is
    periodic and analytic, so the trapezoidal rule converges exponentially.

    Parameters
    ----------
    theta : float or array_like
        Field(s) ``>= 0``.
    a, b : array_like, length 2
        Singular values.
    n_angle : int, optional
        Trapezoid points in the angle, ``>= 8`` (default 512).

    Returns
    -------
    float or ndarray
        ``J_2(theta) = ln E exp(2 theta Tr(A O B O'^T)) / 4``.

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
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


# ---------------------------------------------------------------------------
# Monte Carlo for any d


def _haar(rng, n, d):
    g = rng.standard_normal((n, d, d))
    q, r = np.linalg.qr(g)
    sign = np.sign(np.diagonal(r, axis1=1, axis2=2))
    sign[sign == 0] = 1
    return q * sign[:, None, :]


def hciz_mc(theta, a, b, *, n=20000, rng=None, batch=2000):
    r"""Monte Carlo estimate of ``J_d(theta)`` (``d = len(a) = len(b)``).

    Plain sampling of Haar ``O, O'`` (QR of Gaussian matrices with sign fix);
    ``Tr(A O B O'^T) = a^T (O * O') b``.  The estimate is
    ``ln(mean w) / d^2`` with ``w = exp(theta d T)`` (computed as log-mean-exp) and
    delta-method standard error ``std(w) / (sqrt(n) mean(w) d^2)``.  Reliable while
    the relative spread of ``w`` is moderate (``theta d^2`` of order a few);
    ``info["ess"]`` reports the effective sample size.

    Parameters
    ----------
    theta : float
        Field ``>= 0``.
    a, b : array_like
        Singular values of ``A`` and ``B`` (same length ``d``).
    n : int, optional
        Number of Haar samples, ``>= 2`` (default 20000).
    rng : None, int or Generator, optional
        Seed or generator.
    batch : int, optional
        Samples drawn per batch (memory bound; default 2000).

    Returns
    -------
    Estimate
        ``J_d(theta)`` with its delta-method standard error; ``info`` holds
        ``method``, ``d`` and ``ess``.

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
    """
    th, a, b = _theta_pair(theta, a, b)
    n = check_int("n", n, low=2)
    rng = check_rng(rng)
    d = a.size
    ts = []
    for start in range(0, n, batch):
        m = min(batch, n - start)
        o1 = _haar(rng, m, d)
        o2 = _haar(rng, m, d)
        ts.append(((o1 * o2) @ b) @ a)      # a^T (O * O') b, batched matmul
    T = np.concatenate(ts)
    lw = th * d * T
    mx = lw.max()
    w = np.exp(lw - mx)
    mean = w.mean()
    val = (math.log(mean) + mx) / d ** 2
    se = w.std(ddof=1) / (math.sqrt(n) * mean) / d ** 2
    ess = w.sum() ** 2 / np.sum(w * w)
    return Estimate(val, se, n, {"method": "haar-mc", "d": d, "ess": float(ess)})


# ---------------------------------------------------------------------------
# annealed importance sampling for any d


def _gibbs_o2_rows(x, u, a, kappa, pairs, rng):
    r"""One exact Gibbs update of disjoint row pairs of ``x`` (in place).

    ``x``: ``(C, d, d)`` orthogonal matrices, ``u``: ``(C, d, d)`` so that
    ``T = sum_i a_i <x_i, u_i>`` (rows).  For every pair ``(p, q)`` in ``pairs``
    (disjoint), rows ``p, q`` of ``x`` are left-multiplied by ``G in O(2)`` drawn
    from its conditional law ``prop exp(kappa T(G x))`` on Haar ``O(2)``:
    rotation ``[[c, -s], [s, c]]`` or reflection ``[[c, s], [s, -c]]`` chosen with
    odds ``I_0(kappa R_rot) : I_0(kappa R_ref)``, then the angle from a von Mises law.
    ``kappa``: scalar >= 0.
    """
    p, q = pairs
    rp, rq = x[:, p, :], x[:, q, :]                    # (C, m, d)
    up, uq = u[:, p, :], u[:, q, :]
    ap, aq = a[p], a[q]
    xpp = np.sum(rp * up, axis=-1)
    xqq = np.sum(rq * uq, axis=-1)
    xpq = np.sum(rp * uq, axis=-1)
    xqp = np.sum(rq * up, axis=-1)
    al1, be1 = ap * xpp + aq * xqq, aq * xpq - ap * xqp     # rotation: c al1 + s be1
    al2, be2 = ap * xpp - aq * xqq, ap * xqp + aq * xpq     # reflection: c al2 + s be2
    r1, r2 = np.hypot(al1, be1), np.hypot(al2, be2)
    refl = rng.random(r1.shape) < special.expit(_log_i0(kappa * r2) - _log_i0(kappa * r1))
    al = np.where(refl, al2, al1)
    be = np.where(refl, be2, be1)
    phi = np.arctan2(be, al) + rng.vonmises(0.0, kappa * np.hypot(al, be))
    c, s = np.cos(phi)[..., None], np.sin(phi)[..., None]
    sg = np.where(refl, -1.0, 1.0)[..., None]
    new_p = c * rp + (-s * sg) * rq                      # rotation: c rp - s rq; reflection: c rp + s rq
    new_q = s * rp + (c * sg) * rq                       # rotation: s rp + c rq; reflection: s rp - c rq
    x[:, p, :] = new_p
    x[:, q, :] = new_q


def _ais_schedule(levels, power=4.0):
    k = np.arange(levels + 1) / levels
    return k ** power


def hciz_ais(theta, a, b, *, chains=1000, levels=100, sweeps=None, power=4.0, rng=None):
    r"""Annealed importance sampling (AIS) estimate of ``J_d(theta)``.

    Tempered targets ``pi_k(O, O') prop exp(beta_k theta d T(O, O'))`` on Haar
    ``O(d) x O(d)``, ``T = Tr(A O B O'^T) = sum_ij a_i b_j O_ij O'_ij``,
    ``beta_k = (k / K)^power``; independent chains start from exact Haar draws.

    Parameters
    ----------
    theta : float
        Field ``>= 0``.
    a, b : array_like
        Singular values (same length ``d >= 2``).
    chains : int
        Independent AIS chains (vectorised: batched over a chain axis).
    levels : int
        Number of temperatures ``K``.
    sweeps : int, optional
        MCMC steps per level (default ``d``).  One step updates ``floor(d/2)``
        disjoint random row pairs of ``O`` and then of ``O'``.
    power : float
        Schedule exponent (``beta_k = (k/K)^power``; large powers spend levels near
        ``beta = 0`` where the weight increments are largest relative to ``beta``).
    rng : None, int or Generator
        Seed or generator.

    Returns
    -------
    Estimate
        ``value = ln(mean w) / d^2``, ``stderr`` by the delta method
        ``std(w) / (sqrt(chains) mean(w) d^2)``; ``info``: ``ess`` (effective
        sample size ``(sum w)^2 / sum w^2`` of the final weights), ``levels``,
        ``sweeps``, ``chains``, ``mean_T`` (mean of ``T / sum_i a_(i) b_(i)``
        under the final chains, near 1 at large ``theta``).

    Notes
    -----
    AIS (Neal 2001): with ``x_k ~ K_k(x_{k-1}, .)`` a ``pi_k``-invariant kernel,
    ``w = prod_k exp((beta_k - beta_{k-1}) theta d T(x_{k-1}))`` has
    ``E w = Z(1) / Z(0) = E_Haar exp(theta d T)`` exactly, for any schedule and
    any (even non-ergodic) invariant kernel; the schedule only controls the
    variance.  The kernel is an exact Gibbs update on 2-planes: given ``O'``,
    ``T`` restricted to ``G O`` with ``G in O(2)`` acting on rows ``p, q`` is
    ``const + R cos(phi - phi_0)`` on each of the two components of ``O(2)``,
    so the conditional of ``G`` is a two-component von Mises mixture with
    component odds ``I_0(kappa R_rot) : I_0(kappa R_ref)``, ``kappa = beta theta d``.
    Left multiplication by Haar-distributed ``O(2)`` elements preserves Haar
    measure on ``O(d)``, so the update is the conditional law of ``O`` on its
    ``O(2)``-orbit; disjoint pairs are conditionally independent (``T`` is a
    sum over rows) and are updated together.  The reflections let chains move
    between the components ``det O det O' = +-1``, whose masses differ by
    ``~exp(2 theta d a_min b_min)`` at large ``theta``.

    The standard error is reliable only while the ESS is a sizeable fraction of
    ``chains`` (the weight distribution is then not heavy-tailed in practice).

    References
    ----------
    R. M. Neal, "Annealed importance sampling", Statistics and Computing 11 (2001) 125;
    docs/rank_constrained.md#annealed-importance-sampling-at-large-theta-d2

    Examples
    --------
    >>> import numpy as np
    >>> est = hciz_ais(5.0, [0.5, 1.5], [1.0, 2.0], chains=400, levels=40, rng=0)
    >>> abs(est.value - hciz_exact_d2(5.0, [0.5, 1.5], [1.0, 2.0])) < 5 * est.stderr
    True
    """
    th, a, b = _theta_pair(theta, a, b)
    d = a.size
    if d < 2:
        raise ValueError(f"a and b must have length d >= 2 for AIS, got {d}")
    chains = check_int("chains", chains, low=2)
    levels = check_int("levels", levels, low=1)
    sweeps = d if sweeps is None else check_int("sweeps", sweeps, low=1)
    power = check_real("power", power, low=0, low_open=True, allow_array=False)
    rng = check_rng(rng)
    o1 = _haar(rng, chains, d)
    o2 = _haar(rng, chains, d)
    betas = _ais_schedule(levels, power)
    k0 = th * d
    logw = np.zeros(chains)
    m = d // 2

    def tval():
        return ((o1 * o2) @ b) @ a

    for k in range(1, levels + 1):
        logw += (betas[k] - betas[k - 1]) * k0 * tval()
        kap = betas[k] * k0
        for _ in range(sweeps):
            perm = rng.permutation(d)
            pairs = (perm[:m], perm[m:2 * m])
            _gibbs_o2_rows(o1, o2 * b, a, kap, pairs, rng)
            perm = rng.permutation(d)
            pairs = (perm[:m], perm[m:2 * m])
            _gibbs_o2_rows(o2, o1 * b, a, kap, pairs, rng)
    mx = logw.max()
    w = np.exp(logw - mx)
    mean = w.mean()
    val = float((math.log(mean) + mx) / d ** 2)
    se = float(w.std(ddof=1) / (math.sqrt(chains) * mean) / d ** 2)
    ess = w.sum() ** 2 / np.sum(w * w)
    cmax = float(np.sum(np.sort(a) * np.sort(b)))
    mean_t = float(np.mean(tval())) / cmax if cmax > 0 else 0.0
    return Estimate(val, se, chains, {"method": "ais", "d": d, "ess": float(ess), "levels": levels,
                                      "sweeps": sweeps, "chains": chains, "power": power,
                                      "mean_T": mean_t})


# ---------------------------------------------------------------------------
# rank-one (rectangular) spherical integral


def _sym_expect(a, n=400):
    """Nodes/weights of the singular-value law of ``a`` (array or law) and the
    upper edge of its support (``s_max``)."""
    if _is_law(a):
        u, w, x = _profile_nodes(a, n)
        edge = float(a.support()[1]) if hasattr(a, "support") else math.inf
        if not math.isfinite(edge):
            edge = float(np.max(x))
        return x, w, max(edge, float(np.max(x)))
    s = _svals("a", a)
    return s, np.full(s.size, 1.0 / s.size), float(np.max(s))


def _saddle(theta, x, w, smax=None):
    """Solve ``E gamma / (gamma^2 - theta^2 s^2) = 1`` for ``gamma > theta s_max``."""
    smax = float(np.max(x)) if smax is None else smax
    lo = theta * smax
    if theta == 0:
        return 1.0, False

    def g(gam):
        return np.sum(w * gam / (gam * gam - theta * theta * x * x)) - 1

    hi = max(2 * lo, 1 + theta * smax + theta ** 2 * np.sum(w * x * x) + 1)
    eps = 1e-14 * max(lo, 1)
    if g(lo + eps) < 0:  # transition: no interior saddle; freeze at the edge
        return lo, True
    gam = optimize.brentq(g, lo + eps, hi, xtol=1e-15, rtol=1e-15)
    return gam, False


def rank_one_spherical_integral(theta, a, *, n=400):
    r"""Compute the large-``d`` limit of ``J^(1)(theta) = d^-1 ln E exp(theta d u^T A v)``.

    Parameters
    ----------
    theta : float or array_like
        Field(s) ``>= 0``.
    a : array_like or law
        Singular values of ``A`` (the saddle point is then evaluated with their
        empirical law) or a distribution such as :data:`hcizz.quarter_circle`.
    n : int, optional
        Gauss-Legendre nodes for the expectation over a law (default 400).

    Returns
    -------
    float or ndarray
        ``ext_gamma [gamma - E ln(gamma^2 - theta^2 s^2) / 2] - 1``; beyond the
        transition the saddle is frozen at ``gamma = theta s_max`` (``s_max``:
        upper edge of the law's support), where the value is
        ``theta s_max - ln theta - E ln(s_max^2 - s^2) / 2 - 1``: finite,
        continuous across the transition with a continuous first derivative.

    Notes
    -----
    Quarter circle: ``theta^2 / 2`` for ``theta <= 1`` and
    ``2 theta - ln theta - 3/2`` above (``E ln(4 - s^2) = 1``: the logarithmic
    potential of the semicircle at its edge); checked against an independent
    mpmath evaluation for ``theta`` up to 10 (``tests/test_spherical.py``).

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical

    Examples
    --------
    >>> from hcizz import quarter_circle
    >>> round(rank_one_spherical_integral(0.5, quarter_circle), 10)
    0.125
    """
    th = np.atleast_1d(check_real("theta", theta, low=0))
    x, w, smax = _sym_expect(a, n)
    out = []
    for t in th:
        t = float(t)
        gam, frozen = _saddle(t, x, w, smax)
        if frozen:
            # gamma = t s_max exactly: ln(gamma^2 - t^2 s^2) = 2 ln t + ln(s_max^2 - s^2),
            # finite at every node (the nodes lie inside the support) and integrable at the edge
            val = gam - math.log(t) - 0.5 * np.sum(w * np.log((smax - x) * (smax + x))) - 1
        else:
            val = gam - 0.5 * np.sum(w * np.log(gam * gam - t * t * x * x)) - 1
        out.append(val)
    out = np.asarray(out, dtype=float)
    return out if np.ndim(theta) else float(out[0])


def rectangular_r_transform(z, a, *, n=400):
    r"""Compute the rectangular R-transform at ratio 1, ``C(z) = gamma(sqrt z) - 1``.

    ``gamma(theta)`` is the saddle of :func:`rank_one_spherical_integral`, so
    ``C(z) = sqrt(z) R_sym(sqrt z)`` with ``R_sym`` the R-transform of the
    symmetrised singular-value law, and ``J^(1)(theta) = Int_0^{theta^2} C(t)/(2t) dt``.
    Quarter circle: ``C(z) = z`` below the transition.

    Parameters
    ----------
    z : float or array_like
        Argument(s) ``>= 0`` (``z = theta^2``).
    a : array_like or law
        Singular values of ``A`` or a distribution.
    n : int, optional
        Gauss-Legendre nodes for the expectation over a law (default 400).

    Returns
    -------
    float or ndarray
        ``C(z)``, shape of ``z``.

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
    """
    zz = np.atleast_1d(check_real("z", z, low=0))
    x, w, smax = _sym_expect(a, n)
    out = np.array([_saddle(math.sqrt(t), x, w, smax)[0] - 1 for t in zz])
    return out if np.ndim(z) else float(out[0])


def _debye_poly(t):
    """Debye polynomials ``u_1..u_4(t)`` of the uniform expansion of ``I_nu``."""
    t2 = t * t
    u1 = t * (3 - 5 * t2) / 24
    u2 = t2 * (81 - 462 * t2 + 385 * t2 * t2) / 1152
    u3 = t * t2 * (30375 - 369603 * t2 + 765765 * t2 ** 2 - 425425 * t2 ** 3) / 414720
    u4 = t2 * t2 * (4465125 - 94121676 * t2 + 349922430 * t2 ** 2 - 446185740 * t2 ** 3
                    + 185910725 * t2 ** 4) / 39813120
    return u1, u2, u3, u4


def log_bessel_i(nu, k):
    r"""Compute ``ln I_nu(k)`` for ``nu >= 0`` and ``k > 0`` without under/overflow.

    ``nu < 50``: ``ln ive(nu, k) + k`` (scipy), with the leading term of the
    power series ``nu ln(k/2) - ln Gamma(nu+1) + ln1p(k^2 / (4 (nu+1)))``
    where ``ive`` underflows. ``nu >= 50``: Debye's uniform asymptotic
    expansion in ``z = k / nu`` (DLMF 10.41.3) with four correction terms,

    .. math::

        \ln I_\nu(\nu z) = \nu\eta - \tfrac12\ln(2\pi\nu) - \tfrac14\ln(1+z^2)
            + \ln\Big(1 + \sum_{k=1}^4 u_k(t)\,\nu^{-k}\Big),

    ``eta = sqrt(1+z^2) + ln(z / (1 + sqrt(1+z^2)))``, ``t = 1/sqrt(1+z^2)``,
    uniformly valid in ``z``; the neglected term is ``O(nu^-5)`` relative
    (below 1e-11 at ``nu = 50``), checked against mpmath in
    ``tests/test_spherical.py``.

    Parameters
    ----------
    nu : float
        Order ``>= 0`` (a scalar; it selects the method).
    k : float or array_like
        Argument(s) ``> 0``.

    Returns
    -------
    ndarray
        ``ln I_nu(k)``, shape of ``k``.

    References
    ----------
    DLMF 10.41 (https://dlmf.nist.gov/10.41);
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
    """
    k = np.asarray(k, dtype=float)
    if nu >= 50:
        z = k / nu
        sq = np.sqrt(1 + z * z)
        eta = sq + np.log(z / (1 + sq))
        t = 1 / sq
        u1, u2, u3, u4 = _debye_poly(t)
        corr = np.log1p(u1 / nu + u2 / nu ** 2 + u3 / nu ** 3 + u4 / nu ** 4)
        return nu * eta - 0.5 * math.log(2 * math.pi * nu) - 0.25 * np.log1p(z * z) + corr
    with np.errstate(divide="ignore", under="ignore"):
        e = special.ive(nu, k)
        direct = np.log(e) + k
    series = nu * np.log(k / 2) - special.gammaln(nu + 1) + np.log1p(k * k / (4 * (nu + 1)))
    return np.where(e > 1e-280, direct, series)


def rank_one_mc(theta, a, *, n=20000, rng=None, importance=True):
    r"""Monte Carlo estimate of ``J^(1)_d(theta) = d^-1 ln E_{u,v} exp(theta d u^T A v)``.

    The ``u`` average is exact: ``E_u exp(k u_1) = Gamma(d/2) (2/k)^(d/2-1) I_{d/2-1}(k)``
    at ``k = theta d |A v|``.  With ``importance=True`` ``v`` is drawn from the angular
    central Gaussian ``v = g/|g|``, ``g ~ N(0, diag(1 / (1 - c s_i^2)))``,
    ``c = theta^2 / gamma^2`` (saddle of the large-``d`` problem), whose density
    with respect to the uniform law is ``prod(1 - c s^2)^(1/2) (v^T S^-1 v)^(-d/2)``;
    otherwise ``v`` is uniform.  Standard error by the delta method.

    Parameters
    ----------
    theta : float
        Field ``>= 0``.
    a : array_like
        Singular values of ``A`` (length ``d``).
    n : int, optional
        Number of samples of ``v``, ``>= 2`` (default 20000).
    rng : None, int or Generator, optional
        Seed or generator.
    importance : bool, optional
        Sample ``v`` from the saddle-tilted angular central Gaussian (default
        True) instead of uniformly.

    Returns
    -------
    Estimate
        ``J^(1)_d(theta)`` with its standard error; ``info["ess"]``: effective
        sample size of the weights, ``info["tilt"]``: the tilt ``c``.

    References
    ----------
    docs/rank_constrained.md#spherical-integrals-hcizzspherical
    """
    th = check_real("theta", theta, low=0, allow_array=False)
    s = _svals("a", a)
    n = check_int("n", n, low=2)
    rng = check_rng(rng)
    d = s.size
    nu = d / 2 - 1
    if importance and th > 0:
        gam, frozen = _saddle(th, s, np.full(d, 1.0 / d))
        c = (th / gam) ** 2 * (0.999 if frozen else 1.0)
    else:
        c = 0.0
    prec = 1 - c * s * s  # diagonal of Sigma^-1
    g = rng.standard_normal((n, d)) / np.sqrt(prec)
    v = g / np.linalg.norm(g, axis=1, keepdims=True)
    k = th * d * np.linalg.norm(v * s, axis=1)
    # log E_u exp(k u_1); k = 0 gives 0. ln I_nu(k) by log_bessel_i: ln(ive)
    # underflows for large nu (d = 400, theta = 0.01 gave -0.019 instead of 5e-5)
    kk = np.maximum(k, 1e-300)
    logc = np.where(k > 0, special.gammaln(d / 2) + nu * np.log(2 / kk) + log_bessel_i(nu, kk), 0.0)
    log_dens = 0.5 * np.sum(np.log(prec)) - (d / 2) * np.log(np.sum(v * v * prec, axis=1))
    lw = logc - log_dens
    mx = lw.max()
    w = np.exp(lw - mx)
    mean = w.mean()
    val = (math.log(mean) + mx) / d
    se = w.std(ddof=1) / (math.sqrt(n) * mean) / d
    ess = w.sum() ** 2 / np.sum(w * w)
    return Estimate(val, se, n, {"method": "rank-one IS" if c > 0 else "rank-one MC", "d": d,
                                 "ess": float(ess), "tilt": float(c)})


# ---------------------------------------------------------------------------


def spherical_integral(theta, a, b=None, *, method="auto", n=None, rng=None, levels=100):
    r"""Compute the spherical integral ``J(theta)`` of two singular-value profiles.

    Parameters
    ----------
    theta : float or array_like
        Conjugate field(s) ``>= 0``.
    a : array_like or law
        Singular values of ``A`` (length ``d``) or a distribution (large-``d`` limits).
    b : array_like, law or None
        Singular values of ``B``; ``None`` means rank-one ``B`` (the rectangular
        spherical integral ``d^-1 ln E exp(theta d u^T A v)``).
    method : {"auto", "large_theta", "small_theta", "rank_one", "exact", "mc", "ais"}
        ``"large_theta"``: ``theta * Int X_A X_B``; ``"small_theta"``:
        ``theta^2 m2 m2 / 2``; ``"rank_one"``: large-``d`` rank-one limit;
        ``"exact"``: ``d = 2`` quadrature; ``"mc"``: Monte Carlo (:func:`hciz_mc`,
        or :func:`rank_one_mc` when ``b`` is None); ``"ais"``: annealed importance
        sampling (:func:`hciz_ais`, reliable at large ``theta d^2``).  ``"auto"``: exact for
        ``d = 2``, Monte Carlo for arrays, the rank-one limit for laws with
        ``b=None``.
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

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#spherical-integrals-hcizzspherical

    Examples
    --------
    >>> import numpy as np
    >>> a = b = np.array([1.0, 2.0])
    >>> round(spherical_integral(1e-3, a, b, method="exact") / 1e-6, 4)  # theta^2 m2^2 / 2
    3.125
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
