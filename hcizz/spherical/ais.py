r"""Annealed importance sampling for the spherical integral at large ``theta d^2``:
tempered targets ``exp(beta theta d T)`` with exact Gibbs updates of ``O`` and ``O'``
on random 2-planes (von Mises angles, rotations and reflections); see
:mod:`hcizz.spherical`."""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..checks import check_int, check_real, check_rng
from ..estimate import Estimate
from .exact_d2 import _log_i0, hciz_exact_d2  # noqa: F401  (hciz_exact_d2: the doctest oracle)
from .monte_carlo import _haar
from ._profiles import _theta_pair
from .._docparams import fill_doc

__all__ = ["hciz_ais"]


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


@fill_doc
def hciz_ais(theta, a, b, *, chains=1000, levels=100, sweeps=None, power=4.0, rng=None):
    r"""Annealed importance sampling (AIS) estimate of :math:`J_d(\theta)`.

    Tempered targets :math:`\pi_k(O, O') \propto \exp(\beta_k \theta d\, T(O, O'))` on
    Haar :math:`O(d) \times O(d)`,
    :math:`T = \mathrm{Tr}(A O B O'^T) = \sum_{ij} a_i b_j O_{ij} O'_{ij}`,
    :math:`\beta_k = (k / K)^{power}`; independent chains start from exact Haar draws.

    Parameters
    ----------
    %(field_theta)s
    a, b : array_like
        Singular values (same length :math:`d \ge 2`).
    chains : int
        Independent AIS chains (vectorised: batched over a chain axis).
    levels : int
        Number of temperatures :math:`K`.
    sweeps : int, optional
        MCMC steps per level (default ``d``).  One step updates
        :math:`\lfloor d/2 \rfloor` disjoint random row pairs of :math:`O` and then of
        :math:`O'`.
    power : float
        Schedule exponent (:math:`\beta_k = (k/K)^{power}`; large powers spend levels
        near :math:`\beta = 0` where the weight increments are largest relative to
        :math:`\beta`).
    rng : None, int or Generator
        Seed or generator.

    Returns
    -------
    Estimate
        ``value`` :math:`= \ln(\overline{w}) / d^2`, ``stderr`` by the delta method
        :math:`\mathrm{std}(w) / (\sqrt{chains}\, \overline{w}\, d^2)`; ``info``:
        ``ess`` (effective sample size :math:`(\sum w)^2 / \sum w^2` of the final
        weights), ``levels``, ``sweeps``, ``chains``, ``mean_T`` (mean of
        :math:`T / \sum_i a_{(i)} b_{(i)}` under the final chains, near 1 at large
        :math:`\theta`).

    See Also
    --------
    hcizz.hciz_mc : Plain Monte Carlo, for small :math:`\theta d^2`.
    hcizz.hciz_exact_d2 : The exact :math:`d = 2` value.
    hcizz.spherical_integral : All methods behind one function.

    Notes
    -----
    AIS (Neal 2001): with :math:`x_k \sim K_k(x_{k-1}, \cdot)` a
    :math:`\pi_k`-invariant kernel,
    :math:`w = \prod_k \exp((\beta_k - \beta_{k-1}) \theta d\, T(x_{k-1}))` has
    :math:`E w = Z(1) / Z(0) = E_{Haar} \exp(\theta d T)` exactly, for any schedule
    and any (even non-ergodic) invariant kernel; the schedule only controls the
    variance.  The kernel is an exact Gibbs update on 2-planes: given :math:`O'`,
    :math:`T` restricted to :math:`G O` with :math:`G \in O(2)` acting on rows
    :math:`p, q` is :math:`\mathrm{const} + R \cos(\phi - \phi_0)` on each of the two
    components of :math:`O(2)`, so the conditional of :math:`G` is a two-component
    von Mises mixture with component odds
    :math:`I_0(\kappa R_{rot}) : I_0(\kappa R_{ref})`, :math:`\kappa = \beta \theta d`.
    Left multiplication by Haar-distributed :math:`O(2)` elements preserves Haar
    measure on :math:`O(d)`, so the update is the conditional law of :math:`O` on its
    :math:`O(2)`-orbit; disjoint pairs are conditionally independent (:math:`T` is a
    sum over rows) and are updated together.  The reflections let chains move
    between the components :math:`\det O \det O' = \pm 1`, whose masses differ by
    :math:`\sim \exp(2 \theta d\, a_{min} b_{min})` at large :math:`\theta`.

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
    >>> print(f"{est.value:.3f} +- {est.stderr:.3f}", f"{hciz_exact_d2(5.0, [0.5, 1.5], [1.0, 2.0]):.3f}")
    7.502 +- 0.011 7.499
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
