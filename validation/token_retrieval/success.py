"""Success probabilities of a run from score statistics: the Gaussian SNR model of the
margins and the Gaussian extreme-value model of the bulk scores
(docs/token_retrieval.md#retrieval-probability)."""
from __future__ import annotations

import numpy as np
from scipy import stats

from hcizz.checks import check_int, check_real
from ._docparams import fill_doc

__all__ = ["gaussian_success_prob", "extreme_success_prob"]


@fill_doc
def gaussian_success_prob(mean, std, n):
    r"""Compute :math:`\Phi(\mathrm{mean} / \mathrm{std})^n`, the Gaussian-model probability that all margins are positive.

    The ``n`` margins are taken independent
    :math:`\mathcal{N}(\mathrm{mean}, \mathrm{std}^2)` (the Gaussian SNR model).

    Parameters
    ----------
    mean : float
        Mean margin.
    std : float
        Standard deviation of the margin (>= 0; 0 gives :math:`1[\mathrm{mean} > 0]`).
    n : int
        Number of samples (>= 0).

    Returns
    -------
    float
        The probability.

    See Also
    --------
    validation.token_retrieval.success.extreme_success_prob
        Compute the Gaussian extreme-value model of "all ``n`` samples succeed".
    validation.token_retrieval.model.margins
        Compute the per-sample margin :math:`\mathrm{logit}_{\mathrm{target}} - \max_{k \neq \mathrm{target}} \mathrm{logit}_k`.

    %(ref_retrieval_probability)s

    Examples
    --------
    >>> round(gaussian_success_prob(0.0, 1.0, 2), 3)
    0.25
    """
    mean = check_real("mean", mean, allow_array=False)
    std = check_real("std", std, low=0, allow_array=False)
    n = check_int("n", n, low=0)
    if std <= 0:
        return float(mean > 0)
    return float(np.exp(n * stats.norm.logcdf(mean / std)))


@fill_doc
def extreme_success_prob(mu_c, sd_c, groups, n, *, nodes=80):
    r"""Compute the Gaussian extreme-value model of "all ``n`` samples succeed".

    A sample's correct score is :math:`\mathcal{N}(\mu_c, \sigma_c^2)` (``mu_c``,
    ``sd_c``); its competitors form groups ``(mu, sd, count)`` of independent
    :math:`\mathcal{N}(\mu, \sigma^2)` scores.  The sample succeeds if the
    correct score beats all competitors:

    .. math::

        p = \mathbb{E}_g \prod_{\text{groups}}
            \Phi\left(\frac{\mu_c + \sigma_c g - \mu}{\sigma}\right)^{\text{count}},
        \qquad g \sim \mathcal{N}(0, 1)

    (Gauss-Hermite quadrature with ``nodes`` nodes) and :math:`P(\text{all}) = p^n`
    (samples independent).

    Parameters
    ----------
    mu_c, sd_c : float
        Mean and std of the correct score.
    groups : list of (float, float, int)
        Competitor groups.
    n : int
        Number of samples.
    nodes : int, optional
        Gauss-Hermite nodes (default 80).

    Returns
    -------
    float
        :math:`P(\text{all}) = p^n`.

    See Also
    --------
    validation.token_retrieval.success.gaussian_success_prob
        Compute ``Phi(mean / std) ** n``, the Gaussian-model probability that all margins are positive.
    validation.token_retrieval.experiments.snr_comparison
        Compare SNR predictions with measured success, per configuration and at the boundary.

    Notes
    -----
    The inputs are *bulk* statistics (means and stds over many scores), the
    output is a tail event (a maximum over ``sum count`` competitors and
    ``n`` samples): this is the extrapolation the SNR prediction tests.
    Checked against a direct Monte Carlo simulation in
    ``tests/test_tr_experiments.py``.

    %(ref_retrieval_probability)s

    Examples
    --------
    One competitor, both scores :math:`\mathcal{N}(0, 1)`: the correct one wins with
    probability 1/2.

    >>> round(extreme_success_prob(0.0, 1.0, [(0.0, 1.0, 1)], 1), 6)
    0.5
    """
    mu_c = check_real("mu_c", mu_c, allow_array=False)
    sd_c = check_real("sd_c", sd_c, low=0, allow_array=False)
    n = check_int("n", n, low=0)
    nodes = check_int("nodes", nodes, low=1)
    for i, g in enumerate(groups):
        if len(g) != 3:
            raise ValueError(f"groups[{i}] must be (mu, sd, count), got {g!r}")
        check_real(f"groups[{i}] sd", g[1], low=0, allow_array=False)
        check_int(f"groups[{i}] count", g[2], low=0)
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    logp = np.zeros_like(x)
    for mu, sd, cnt in groups:
        if cnt <= 0:
            continue
        if sd <= 0:
            logp += np.where(mu_c + sd_c * x > mu, 0.0, -np.inf)
        else:
            logp += cnt * stats.norm.logcdf((mu_c + sd_c * x - mu) / sd)
    p = float(np.sum(w * np.exp(logp)))
    return float(min(1.0, max(0.0, p)) ** n)
