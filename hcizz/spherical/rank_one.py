r"""The rank-one (rectangular) spherical integral ``d^-1 ln E exp(theta d u^T A v)``:
its large-``d`` limit through a saddle point, the rectangular R-transform at ratio 1,
``ln I_nu`` without under/overflow, and importance-sampled Monte Carlo at finite ``d``;
see :mod:`hcizz.spherical`."""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from ..checks import check_int, check_real, check_rng
from ..estimate import Estimate
from ._profiles import _is_law, _profile_nodes, _svals
from .._docparams import fill_doc

__all__ = ["rank_one_spherical_integral", "rectangular_r_transform", "log_bessel_i", "rank_one_mc"]


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


@fill_doc
def rank_one_spherical_integral(theta, a, *, n=400):
    r"""Compute the large-``d`` limit of :math:`J^{(1)}(\theta) = d^{-1} \ln E \exp(\theta d\, u^T A v)`.

    Parameters
    ----------
    %(fields_theta)s
    a : array_like or law
        Singular values of ``A`` (the saddle point is then evaluated with their
        empirical law) or a distribution such as :data:`hcizz.quarter_circle`.
    %(law_nodes)s

    Returns
    -------
    float or ndarray
        :math:`\mathrm{ext}_\gamma [\gamma - E \ln(\gamma^2 - \theta^2 s^2) / 2] - 1`;
        beyond the transition the saddle is frozen at :math:`\gamma = \theta s_{max}`
        (:math:`s_{max}`: upper edge of the law's support), where the value is
        :math:`\theta s_{max} - \ln \theta - E \ln(s_{max}^2 - s^2) / 2 - 1`: finite,
        continuous across the transition with a continuous first derivative.

    See Also
    --------
    hcizz.rank_one_mc : Monte Carlo at finite :math:`d`.
    hcizz.rectangular_r_transform : The rectangular R-transform of the same saddle.
    hcizz.spherical_integral : The square (full-rank) integral.

    Notes
    -----
    Quarter circle: :math:`\theta^2 / 2` for :math:`\theta \le 1` and
    :math:`2 \theta - \ln \theta - 3/2` above (:math:`E \ln(4 - s^2) = 1`: the
    logarithmic potential of the semicircle at its edge); checked against an
    independent mpmath evaluation for :math:`\theta` up to 10
    (``tests/test_spherical.py``).

    %(refs_spherical)s

    Examples
    --------
    Quarter circle: :math:`\theta^2/2` below the transition,
    :math:`2\theta - \ln\theta - 3/2` above:

    >>> from hcizz import quarter_circle
    >>> print(rank_one_spherical_integral([0.5, 2.0], quarter_circle))
    [0.125      1.80685282]
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


@fill_doc
def rectangular_r_transform(z, a, *, n=400):
    r"""Compute the rectangular R-transform at ratio 1, :math:`C(z) = \gamma(\sqrt z) - 1`.

    :math:`\gamma(\theta)` is the saddle of :func:`rank_one_spherical_integral`, so
    :math:`C(z) = \sqrt{z}\, R_{sym}(\sqrt z)` with :math:`R_{sym}` the R-transform of
    the symmetrised singular-value law, and
    :math:`J^{(1)}(\theta) = \int_0^{\theta^2} C(t)/(2t)\, dt`.  Quarter circle:
    :math:`C(z) = z` below the transition.

    Parameters
    ----------
    z : float or array_like
        Argument(s) :math:`\ge 0` (:math:`z = \theta^2`).
    a : array_like or law
        Singular values of ``A`` or a distribution.
    %(law_nodes)s

    Returns
    -------
    float or ndarray
        :math:`C(z)`, shape of ``z``.

    See Also
    --------
    hcizz.rank_one_spherical_integral : The integral of :math:`C(t)/(2t)`.
    hcizz.free_transforms.r_transform_semicircle : The R-transform of the symmetrised quarter circle.

    %(refs_spherical)s

    Examples
    --------
    >>> from hcizz import quarter_circle
    >>> print(rectangular_r_transform([0.25, 0.5], quarter_circle))
    [0.25 0.5 ]
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
    r"""Compute :math:`\ln I_\nu(k)` for :math:`\nu \ge 0` and :math:`k > 0` without under/overflow.

    :math:`\nu < 50`: ``ln ive(nu, k) + k`` (scipy), with the leading term of the
    power series :math:`\nu \ln(k/2) - \ln \Gamma(\nu+1) + \ln(1 + k^2 / (4 (\nu+1)))`
    where ``ive`` underflows. :math:`\nu \ge 50`: Debye's uniform asymptotic
    expansion in :math:`z = k / \nu` (DLMF 10.41.3) with four correction terms,

    .. math::

        \ln I_\nu(\nu z) = \nu\eta - \tfrac12\ln(2\pi\nu) - \tfrac14\ln(1+z^2)
            + \ln\Big(1 + \sum_{k=1}^4 u_k(t)\,\nu^{-k}\Big),

    :math:`\eta = \sqrt{1+z^2} + \ln(z / (1 + \sqrt{1+z^2}))`, :math:`t = 1/\sqrt{1+z^2}`,
    uniformly valid in :math:`z`; the neglected term is :math:`O(\nu^{-5})` relative
    (below :math:`10^{-11}` at :math:`\nu = 50`), checked against mpmath in
    ``tests/test_spherical.py``.

    Parameters
    ----------
    nu : float
        Order :math:`\ge 0` (a scalar; it selects the method).
    k : float or array_like
        Argument(s) :math:`> 0`.

    Returns
    -------
    ndarray
        :math:`\ln I_\nu(k)`, shape of ``k``.

    See Also
    --------
    scipy.special.ive : The exponentially scaled Bessel function used for small orders.
    hcizz.rank_one_mc : Uses it for the exact average over :math:`u`.

    References
    ----------
    DLMF 10.41 (https://dlmf.nist.gov/10.41);
    docs/rank_constrained.md#spherical-integrals-hcizzspherical

    Examples
    --------
    Finite where :math:`I_\nu` itself overflows (:math:`k = 1000`) or is tiny
    (:math:`\nu = 60`, :math:`k = 1`):

    >>> print(log_bessel_i(0.0, [1.0, 1000.0]))
    [2.35914359e-01 9.95627309e+02]
    >>> print(f"{log_bessel_i(60.0, 1.0):.8f}")
    -230.21290603
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


@fill_doc
def rank_one_mc(theta, a, *, n=20000, rng=None, importance=True):
    r"""Monte Carlo estimate of :math:`J^{(1)}_d(\theta) = d^{-1} \ln E_{u,v} \exp(\theta d\, u^T A v)`.

    The :math:`u` average is exact:
    :math:`E_u e^{k u_1} = \Gamma(d/2) (2/k)^{d/2-1} I_{d/2-1}(k)` at
    :math:`k = \theta d |A v|`.  With ``importance=True`` :math:`v` is drawn from the
    angular central Gaussian :math:`v = g/|g|`,
    :math:`g \sim N(0, \mathrm{diag}(1 / (1 - c s_i^2)))`, :math:`c = \theta^2 / \gamma^2`
    (saddle of the large-:math:`d` problem), whose density with respect to the
    uniform law is :math:`\prod_i (1 - c s_i^2)^{1/2} (v^T S^{-1} v)^{-d/2}`; otherwise
    :math:`v` is uniform.  Standard error by the delta method.

    Parameters
    ----------
    %(field_theta)s
    a : array_like
        Singular values of ``A`` (length ``d``).
    n : int, optional
        Number of samples of ``v``, ``>= 2`` (default 20000).
    %(seed_rng)s
    importance : bool, optional
        Sample ``v`` from the saddle-tilted angular central Gaussian (default
        True) instead of uniformly.

    Returns
    -------
    Estimate
        :math:`J^{(1)}_d(\theta)` with its standard error; ``info["ess"]``: effective
        sample size of the weights, ``info["tilt"]``: the tilt :math:`c`.

    See Also
    --------
    hcizz.rank_one_spherical_integral : The large-:math:`d` limit.
    hcizz.spherical.log_bessel_i : The Bessel function of the exact :math:`u` average.

    %(refs_spherical)s

    Examples
    --------
    Quarter-circle quantiles at :math:`d = 200` against the limit :math:`\theta^2/2 = 0.125`:

    >>> import numpy as np
    >>> from hcizz import quarter_circle
    >>> a = quarter_circle.ppf((np.arange(200) + 0.5) / 200)
    >>> est = rank_one_mc(0.5, a, n=2000, rng=0)
    >>> print(f"{est.value:.5f} +- {est.stderr:.5f}")
    0.12483 +- 0.00001
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
