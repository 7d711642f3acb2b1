r"""Mechanism diagnostics: normalised score statistics and singular-value spectra.

* Scores in normalised units: each row of the score matrix is divided by the
  standard deviation of its :math:`p - 1` competitor scores.  A memory at capacity
  holds its correct scores in a narrow band (small variance) at the level of
  the largest competitors; at finite ``p`` this level is the mean of the
  correct score and the :math:`k^*` active competitors of the :math:`V_p` minimiser
  (:func:`replica.pinned_scores.pinned_scores`), well below the large-``p``
  value :math:`\sqrt{2 \ln p}` (``docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p``).
  Hebbian correct scores spread with variance about 1.
* Spectra (docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation): singular values of the trained ``W`` against
  the (truncated) quarter circle after fitting only the scale, and of the
  low-rank ``W`` at initialisation against ``hcizz.mp_product(kappa)``; the
  distance is the Kolmogorov-Smirnov statistic.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats

from hcizz.results import Result
from .models import scores
from ._docparams import fill_doc

__all__ = ["normalized_scores", "score_summary", "singular_values", "spectrum_vs_quarter_circle",
           "init_spectrum_vs_mp_product", "hcizz_law", "ScoreSummary", "SpectrumComparison",
           "InitSpectrum", "InitSpectrumSample", "sample_init_spectra"]


@fill_doc
def hcizz_law(name, *args):
    """Return the law ``hcizz.<name>``, called with ``args`` if given.

    Parameters
    ----------
    name : str
        A law of :mod:`hcizz` (``"quarter_circle"``, ``"truncated_quarter_circle"``,
        ``"mp_product"``, ...).
    *args
        Its parameters (e.g. ``kappa``).

    Returns
    -------
    object
        ``hcizz.<name>(*args)`` (a frozen law), or the callable itself without ``args``.

    See Also
    --------
    validation.linear_memory.mechanism.spectrum_vs_quarter_circle : Comparison of a spectrum with such a law.

    %(ref_spectra_init)s

    Examples
    --------
    >>> round(float(hcizz_law("quarter_circle").moment(2)), 6)
    1.0
    """
    import hcizz

    f = getattr(hcizz, name)
    return f(*args) if args else f


@fill_doc
def normalized_scores(W, facts):
    r"""Divide correct and competitor scores by the competitor standard deviation.

    Parameters
    ----------
    %(W)s %(facts)s

    Returns
    -------
    correct : ndarray, shape (p,)
        :math:`z_{\mu\mu} / \sigma_\mu`.
    competitors : ndarray, shape (p, p - 1)
        :math:`z_{\mu\rho} / \sigma_\mu` for :math:`\rho \neq \mu`.

    See Also
    --------
    validation.linear_memory.mechanism.score_summary : Moments and tails of these normalised scores.
    validation.linear_memory.models.scores : Raw scores before normalisation.

    Notes
    -----
    :math:`\sigma_\mu` is the sample standard deviation of the :math:`p - 1` competitor
    scores of input :math:`\mu` (no mean subtraction of the scores themselves;
    competitor means are 0 in distribution).

    %(ref_mechanism_paper)s
    """
    Z = np.asarray(scores(W, facts), dtype=np.float64)
    p = Z.shape[0]
    idx = np.arange(p)
    correct = Z[idx, idx].copy()
    mask = ~np.eye(p, dtype=bool)
    comp = Z[mask].reshape(p, p - 1)
    sig = comp.std(axis=1, ddof=1)
    return correct / sig, comp / sig[:, None]


@fill_doc
@dataclass(frozen=True)
class ScoreSummary(Result):
    r"""Statistics of normalised scores (:func:`score_summary`), a frozen record with ``to_dict()``.

    Parameters
    ----------
    p : int
        Number of facts.
    correct_mean, correct_var : float
        Mean and sample variance of the correct scores.
    competitor_mean, competitor_var : float
        Mean and sample variance of all competitor scores.
    sqrt_2lnp : float
        :math:`\sqrt{2 \ln p}`, the large-``p`` level of the largest of ``p`` standard normals.
    correct_min : float
        Smallest correct score.
    competitor_max : float
        Largest competitor score.
    row_max_competitor_mean : float
        Mean over inputs of the largest competitor: the finite-``p`` extreme
        level, below :math:`\sqrt{2 \ln p}`.
    margin_min : float
        Smallest correct score minus the largest competitor of its row.
    frac_correct_above_sqrt_2lnp : float
        Fraction of correct scores above :math:`\sqrt{2 \ln p}`.
    recall : float
        Fraction of rows whose correct score beats all competitors.

    See Also
    --------
    validation.linear_memory.mechanism.score_summary : Computes these statistics from normalised scores.

    %(ref_mechanism)s
    """

    p: int
    correct_mean: float
    correct_var: float
    competitor_mean: float
    competitor_var: float
    sqrt_2lnp: float
    correct_min: float
    competitor_max: float
    row_max_competitor_mean: float
    margin_min: float
    frac_correct_above_sqrt_2lnp: float
    recall: float


@fill_doc
def score_summary(correct, competitors):
    r"""Summarise normalised scores.

    Parameters
    ----------
    correct : ndarray, shape (p,)
        Normalised correct scores (:func:`normalized_scores`).
    competitors : ndarray, shape (p, p - 1)
        Normalised competitor scores, one row per input.

    Returns
    -------
    ScoreSummary
        Means, variances, extremes, the level :math:`\sqrt{2 \ln p}` and the recall
        (read as ``res.recall`` or ``res["recall"]``).

    See Also
    --------
    validation.linear_memory.mechanism.normalized_scores : Normalised correct and competitor scores of one memory.

    Notes
    -----
    A memory at capacity holds its correct scores in a narrow band just above
    the mean largest competitor, which at finite ``p`` lies well below
    :math:`\sqrt{2 \ln p}`; Hebbian correct scores spread with variance about 1.

    %(ref_mechanism_paper)s

    Examples
    --------
    >>> s = score_summary(np.array([3.0, 2.0]), np.array([[0.0], [2.5]]))
    >>> s.recall, s["margin_min"]
    (0.5, -0.5)
    """
    p = correct.size
    lvl = math.sqrt(2 * math.log(p))
    return ScoreSummary(
        p=int(p), correct_mean=float(correct.mean()), correct_var=float(correct.var(ddof=1)),
        competitor_mean=float(competitors.mean()), competitor_var=float(competitors.var(ddof=1)),
        sqrt_2lnp=lvl, correct_min=float(correct.min()),
        competitor_max=float(competitors.max()),
        row_max_competitor_mean=float(competitors.max(axis=1).mean()),
        margin_min=float((correct - competitors.max(axis=1)).min()),
        frac_correct_above_sqrt_2lnp=float(np.mean(correct > lvl)),
        recall=float(np.mean(correct > competitors.max(axis=1))))


@fill_doc
def singular_values(W):
    r"""Compute the singular values of :math:`W / \sqrt{d}` in decreasing order.

    Parameters
    ----------
    W : array_like, shape (d, d)
        The memory.

    Returns
    -------
    ndarray, shape (d,)
        Singular values of :math:`W / \sqrt{d}` (float64), largest first.

    See Also
    --------
    validation.linear_memory.mechanism.spectrum_vs_quarter_circle : KS distance of these values to the quarter circle.

    %(ref_spectra_init)s

    Examples
    --------
    >>> singular_values(np.diag([2.0, 4.0]))
    array([2.82842712, 1.41421356])
    """
    W = np.asarray(W, dtype=np.float64)
    return np.linalg.svd(W / math.sqrt(W.shape[0]), compute_uv=False)


def _ks(x, dist):
    return float(stats.kstest(x, dist.cdf).statistic)


@fill_doc
@dataclass(frozen=True)
class SpectrumComparison(Result):
    r"""Singular values against a law (:func:`spectrum_vs_quarter_circle`), a frozen record.

    Parameters
    ----------
    scale : float
        The one fitted parameter: ``c`` with :math:`c^2 \, \mathrm{mean}(s^2) = \mathbb{E}_{\mathrm{law}}[s^2]`.
    ks : float
        Kolmogorov-Smirnov statistic of :math:`c s` against the law.
    n : int
        Number of singular values compared.
    sv : list of float
        The scaled singular values :math:`c s`.
    law : str
        ``"quarter_circle"`` or ``"truncated_quarter_circle(kappa)"``.

    See Also
    --------
    validation.linear_memory.mechanism.spectrum_vs_quarter_circle : Computes this comparison from a memory.

    %(ref_spectra_init)s
    """

    scale: float
    ks: float
    n: int
    sv: list
    law: str


@fill_doc
def spectrum_vs_quarter_circle(W, kappa=1.0, *, rank=None):
    r"""Compare the nonzero singular values of ``W`` with the (truncated) quarter circle.

    Parameters
    ----------
    %(W)s
    kappa : float
        Rank fraction; 1 compares all singular values with the quarter circle,
        :math:`\kappa < 1` the top ``rank`` with ``hcizz.truncated_quarter_circle(kappa)``.
    rank : int, optional
        Number of nonzero singular values (default :math:`\mathrm{round}(\kappa d)`).

    Returns
    -------
    SpectrumComparison
        ``scale`` (the one fitted parameter: second-moment match
        :math:`c^2 \, \mathrm{mean}(s^2) = \mathbb{E}_{\mathrm{law}}[s^2]`), ``ks`` (KS statistic of :math:`c s`
        against the law), ``n``, ``sv`` (scaled singular values), ``law``.

    See Also
    --------
    validation.linear_memory.mechanism.singular_values : Sorted singular values of :math:`W / \sqrt{d}`.
    hcizz.quarter_circle : Limiting singular-value law at full rank.

    Notes
    -----
    Fitting the scale by the second moment (not by minimising KS) keeps the
    KS distance an honest goodness-of-fit number.  The KS p-value is not
    reported: singular values are not independent samples.

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation
    """
    s = singular_values(W)
    d = s.size
    k = d if kappa >= 1 else (rank if rank is not None else max(1, int(round(kappa * d))))
    s = s[:k]
    law = hcizz_law("quarter_circle") if kappa >= 1 else hcizz_law("truncated_quarter_circle", kappa)
    m2 = float(law.moment(2))
    c = math.sqrt(m2 / float(np.mean(s * s)))
    return SpectrumComparison(
        scale=c, ks=_ks(c * s, law), n=int(k), sv=(c * s).tolist(),
        law="quarter_circle" if kappa >= 1 else f"truncated_quarter_circle({kappa:g})")


@fill_doc
@dataclass(frozen=True)
class InitSpectrum(Result):
    r"""Initial low-rank spectrum against ``mp_product`` (:func:`init_spectrum_vs_mp_product`).

    Parameters
    ----------
    ks : float
        Kolmogorov-Smirnov statistic of the squared singular values against
        ``hcizz.mp_product(kappa)``.
    n : int
        Number of squared singular values compared.
    sq : list of float
        The top ``n`` squared singular values.
    mean : float
        Their mean.
    law_mean : float
        Mean of the law (:math:`1 / \kappa`).

    See Also
    --------
    validation.linear_memory.mechanism.init_spectrum_vs_mp_product : Computes this comparison from one initial draw.

    %(ref_spectra_init)s
    """

    ks: float
    n: int
    sq: list
    mean: float
    law_mean: float


@fill_doc
def init_spectrum_vs_mp_product(W0, kappa, *, rank=None):
    r"""Compare the squared singular values of :math:`W_0 = Q R^T / \sqrt{d m}` with ``hcizz.mp_product(kappa)``.

    No parameter is fitted.

    Parameters
    ----------
    W0 : ndarray, shape (d, d)
        The low-rank memory at initialisation.
    kappa : float
        Rank fraction :math:`m / d`.
    rank : int, optional
        Number of nonzero singular values (default :math:`\mathrm{round}(\kappa d)`).

    Returns
    -------
    InitSpectrum
        ``ks``, ``n``, ``sq`` (the top :math:`\mathrm{round}(\kappa d)` squared singular
        values of ``W0``), ``mean`` and ``law_mean``.

    See Also
    --------
    validation.linear_memory.mechanism.sample_init_spectra : Many initial draws pooled against the law.
    hcizz.mp_product : Law of the squared singular values of :math:`Q R^T`.

    Notes
    -----
    ``W0`` has i.i.d.-like entries of variance :math:`1/d` (:math:`\|W_0\|_F^2 \sim d`), so
    its squared singular values average 1 over all ``d`` of them and
    :math:`1/\kappa` over the nonzero ones, the mean of ``mp_product(kappa)``.

    %(ref_spectra_init)s
    """
    law = hcizz_law("mp_product", kappa)
    d = W0.shape[0]
    k = rank if rank is not None else max(1, int(round(kappa * d)))
    sq = np.linalg.svd(np.asarray(W0, np.float64), compute_uv=False)[:k] ** 2
    return InitSpectrum(ks=_ks(sq, law), n=int(k), sq=sq.tolist(), mean=float(sq.mean()),
                        law_mean=float(law.mean()))


@fill_doc
@dataclass(frozen=True)
class InitSpectrumSample(Result):
    r"""Sampled initial low-rank spectra of one ``kappa`` against ``mp_product`` (:func:`sample_init_spectra`).

    Parameters
    ----------
    kappa : float
        Nominal rank fraction.
    d, m : int
        Dimension and rank :math:`m = \mathrm{round}(\kappa d)`.
    ks : float
        KS distance of the ``m`` nonzero squared singular values of the first
        sampled matrix to ``hcizz.mp_product(kappa)``.
    ks_calibration_mp : float
        KS distance of the eigenvalues of the first :math:`Q^T Q / d` to their exact
        limit ``hcizz.marchenko_pastur(m / d)``: what finite ``d`` alone gives.
    sample_m2, sample_m2_stderr : float
        Mean over matrices of the second moment of the squared singular values,
        and its standard error (NaN for one matrix).
    n_matrices : int
        Matrices sampled.
    law_m2 : float
        Second moment of ``mp_product(kappa)``.
    edges : list of float
        Support of the law's continuous part.
    atom : float
        Its atom at 0.
    eigenvalues : ndarray
        The ``m`` squared singular values of the first matrix (for figures).
    seconds : float
        Wall time of the sampling.

    See Also
    --------
    validation.linear_memory.mechanism.sample_init_spectra : Pools many initial draws into this record.

    %(ref_spectra_init)s
    """

    kappa: float
    d: int
    m: int
    ks: float
    ks_calibration_mp: float
    sample_m2: float
    sample_m2_stderr: float
    n_matrices: int
    law_m2: float
    edges: list
    atom: float
    eigenvalues: np.ndarray
    seconds: float


@fill_doc
def sample_init_spectra(d, reps, *, rng=None):
    r"""Sample :math:`Q R^T / \sqrt{d m}` at initialisation and compare its spectrum with ``mp_product(kappa)``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    reps : dict
        ``kappa -> number of matrices`` (``kappa`` in (0, 1]), sampled in this
        order from one generator.
    rng : None, int, sequence of int, SeedSequence or Generator
        Randomness (``numpy.random.default_rng(rng)``).

    Returns
    -------
    list of InitSpectrumSample
        One per ``kappa``.

    See Also
    --------
    validation.linear_memory.mechanism.init_spectrum_vs_mp_product : Comparison for one initial draw only.

    Notes
    -----
    With ``Q, R`` i.i.d. :math:`\mathcal{N}(0, 1)` of shape ``(d, m)``, the nonzero squared
    singular values of :math:`Q R^T / \sqrt{d m}` are the eigenvalues of
    :math:`(Q^T Q)^{1/2} (R^T R) (Q^T Q)^{1/2} / (d m)`, an :math:`m \times m` symmetric
    matrix: no :math:`d \times d` decomposition is needed.  Eigenvalues are rigid, so
    the KS distance at finite ``d`` is :math:`O(\log d / d)`, far below the
    critical value of independent samples; the Marchenko-Pastur calibration
    of :math:`Q^T Q / d` shows what finite ``d`` explains.

    %(ref_spectra_init)s

    Examples
    --------
    >>> s = sample_init_spectra(200, {0.5: 2}, rng=0)[0]
    >>> s.m, s.n_matrices, bool(s.ks < 0.05)
    (100, 2, True)
    """
    from hcizz.checks import check_int, check_real, check_rng

    d = check_int("d", d, low=2)
    rng = check_rng(rng)
    out = []
    for k, n in reps.items():
        k = check_real("kappa", k, low=0, high=1, low_open=True, allow_array=False)
        n = check_int("reps", n, low=1)
        m = int(round(k * d))
        t0 = time.perf_counter()
        m2s = []
        for r in range(n):
            Q = rng.standard_normal((d, m))
            R = rng.standard_normal((d, m))
            w, V = np.linalg.eigh(Q.T @ Q)
            half = (V * np.sqrt(np.clip(w, 0, None))) @ V.T
            e = np.linalg.eigvalsh(half @ (R.T @ R) @ half) / (d * m)
            m2s.append(float(np.mean(e ** 2)))
            if r == 0:
                ev = e
                ks_mp = stats.kstest(w / d, hcizz_law("marchenko_pastur", m / d).cdf).statistic
        law = hcizz_law("mp_product", k)
        m2 = float(np.mean(m2s))
        m2_se = float(np.std(m2s, ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
        out.append(InitSpectrumSample(
            kappa=k, d=d, m=m, ks=stats.kstest(ev, law.cdf).statistic, ks_calibration_mp=ks_mp,
            sample_m2=m2, sample_m2_stderr=m2_se, n_matrices=n, law_m2=float(law.moment(2)),
            edges=list(law.edges), atom=law.atom, eigenvalues=ev, seconds=time.perf_counter() - t0))
    return out
