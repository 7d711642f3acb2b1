"""Top order statistics of many i.i.d. standard normals, sampled exactly."""
from __future__ import annotations

import numpy as np
from scipy.special import ndtri_exp

__all__ = ["TopNormals"]


class TopNormals:
    """Sequential exact sampler of the largest of ``m`` i.i.d. N(0,1) variables.

    Renyi's representation: if ``X_(1) >= X_(2) >= ...`` are the order statistics
    of ``m`` i.i.d. N(0,1) variables, then ``-ln Phi(X_(k)) = sum_{j<=k}
    E_j / (m - j + 1)`` with ``E_j`` i.i.d. Exp(1).  Hence
    ``X_(k) = Phi^{-1}(exp(-S_k))`` (``scipy.special.ndtri_exp``, accurate for
    ``S_k`` as small as ``1/m = 1e-15``), and the sequence can be extended one
    block at a time, for any subset of the samples, without ever drawing the
    other ``m - k`` values.

    Parameters
    ----------
    m : int
        Number of variables (any integer >= 1; ``m`` up to 1e15 is exact).
    samples : int
        Number of independent sequences.
    rng : numpy.random.Generator
        Generator used for every draw.

    References
    ----------
    docs/theory_full_rank.md#order-statistics-method

    Examples
    --------
    >>> top = TopNormals(10**15, 3, np.random.default_rng(0))
    >>> x = top.extend(np.arange(3), 4)
    >>> x.shape, bool(np.all(np.diff(x, axis=1) <= 0))
    ((3, 4), True)
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
