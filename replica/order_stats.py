"""Top order statistics of many i.i.d. standard normals, sampled exactly."""
from __future__ import annotations

import numpy as np
from scipy.special import ndtri_exp

from ._docparams import fill_doc

__all__ = ["TopNormals"]


@fill_doc
class TopNormals:
    r"""Sequential exact sampler of the largest of ``m`` i.i.d. :math:`N(0,1)` variables.

    Renyi's representation: if :math:`X_{(1)} \ge X_{(2)} \ge \dots` are the order
    statistics of :math:`m` i.i.d. :math:`N(0,1)` variables, then
    :math:`-\ln \Phi(X_{(k)}) = S_k = \sum_{j \le k} E_j / (m - j + 1)` with
    :math:`E_j` i.i.d. :math:`\mathrm{Exp}(1)`.  Hence
    :math:`X_{(k)} = \Phi^{-1}(e^{-S_k})` (:func:`scipy.special.ndtri_exp`, accurate
    for :math:`S_k` as small as :math:`1/m = 10^{-15}`), and the sequence can be
    extended one block at a time, for any subset of the samples, without ever
    drawing the other :math:`m - k` values.

    Parameters
    ----------
    m : int
        Number of variables (any integer >= 1; ``m`` up to 1e15 is exact).
    samples : int
        Number of independent sequences.
    rng : numpy.random.Generator
        Generator used for every draw.

    See Also
    --------
    replica.finite_capacity.sample_v_p : Draws :math:`V_p` from these order statistics.
    replica.gaussian_max_moments : Exact moments of the largest one.

    %(refs_order_statistics)s

    Examples
    --------
    The four largest of :math:`10^{15}` normals, three times (about
    :math:`\sqrt{2 \ln 10^{15}} = 8.3`):

    >>> top = TopNormals(10**15, 3, np.random.default_rng(0))
    >>> print(top.extend(np.arange(3), 4).round(4))
    [[7.989  7.8753 7.8739 7.8737]
     [8.0151 7.8441 7.8102 7.7806]
     [7.8119 7.666  7.6254 7.6254]]
    """

    def __init__(self, m, samples, rng):
        self.m = int(m)
        self.rng = rng
        self.cum = np.zeros(samples)              # S_k of the last value drawn
        self.k = np.zeros(samples, dtype=np.int64)

    def extend(self, rows, K):
        """Draw the next ``K`` order statistics for the sequences ``rows``.

        All rows must have drawn the same number ``k`` so far and ``k + K <= m``.

        Parameters
        ----------
        rows : array_like of int
            Indices of the sequences to extend.
        K : int
            Number of further order statistics.

        Returns
        -------
        ndarray, shape (len(rows), K)
            The values ``X_(k+1) >= ... >= X_(k+K)``, descending along axis 1.
        """
        rows = np.asarray(rows)
        k0 = int(self.k[rows[0]]) if rows.size else 0
        if k0 + K > self.m:
            raise ValueError(f"K must be <= m - k = {self.m - k0}, got {K}")
        E = self.rng.standard_exponential((rows.size, K))
        denom = (self.m - k0) - np.arange(K, dtype=float)
        cums = self.cum[rows, None] + np.cumsum(E / denom[None, :], axis=1)
        self.cum[rows] = cums[:, -1]
        self.k[rows] += K
        return ndtri_exp(-cums)
