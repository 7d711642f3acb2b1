r"""Plain Monte Carlo for the spherical integral at any ``d``: Haar ``O, O'`` from
``scipy.stats.ortho_group`` and a log-mean-exp estimate with a delta-method standard
error; see :mod:`hcizz.spherical`."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..checks import check_int, check_rng
from ..estimate import Estimate
from ._profiles import _theta_pair
from .._docparams import fill_doc

__all__ = ["hciz_mc"]


def _haar(rng, n, d):
    """``n`` Haar matrices of ``O(d)``, shape ``(n, d, d)``: ``scipy.stats.ortho_group``
    (QR of a Gaussian matrix with the signs of ``diag R`` divided out; the same
    draws, bit for bit, as the hand-written QR this replaced)."""
    return stats.ortho_group.rvs(d, size=n, random_state=rng).reshape(n, d, d)


@fill_doc
def hciz_mc(theta, a, b, *, n=20000, rng=None, batch=2000):
    r"""Monte Carlo estimate of :math:`J_d(\theta)` (``d = len(a) = len(b)``).

    Plain sampling of Haar :math:`O, O'` (``scipy.stats.ortho_group``);
    :math:`\mathrm{Tr}(A O B O'^T) = a^T (O \circ O') b`.  The estimate is
    :math:`\ln(\overline{w}) / d^2` with :math:`w = e^{\theta d T}` (computed as
    log-mean-exp) and delta-method standard error
    :math:`\mathrm{std}(w) / (\sqrt{n}\, \overline{w}\, d^2)`.  Reliable while the
    relative spread of :math:`w` is moderate (:math:`\theta d^2` of order a few);
    ``info["ess"]`` reports the effective sample size.

    Parameters
    ----------
    %(field_theta)s
    a, b : array_like
        Singular values of ``A`` and ``B`` (same length ``d``).
    n : int, optional
        Number of Haar samples, ``>= 2`` (default 20000).
    %(seed_rng)s
    batch : int, optional
        Samples drawn per batch (memory bound; default 2000).

    Returns
    -------
    Estimate
        ``J_d(theta)`` with its delta-method standard error; ``info`` holds
        ``method``, ``d`` and ``ess``.

    See Also
    --------
    hcizz.hciz_ais : Annealed importance sampling, reliable at large :math:`\theta d^2`.
    hcizz.hciz_exact_d2 : The exact :math:`d = 2` value.
    hcizz.spherical_integral : All methods behind one function.

    %(refs_spherical)s

    Examples
    --------
    Against the exact :math:`d = 2` value 0.32284:

    >>> est = hciz_mc(0.5, [0.5, 1.5], [1.0, 2.0], n=20000, rng=0)
    >>> print(f"{est.value:.4f} +- {est.stderr:.4f}")
    0.3220 +- 0.0029
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
