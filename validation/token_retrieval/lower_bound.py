r"""Statistical limits of token retrieval in our formulation: what any predictor or learner can do.

Three questions, stated for the task of ``validation.token_retrieval.task``
(docs/token_retrieval.md#which-question-a-lower-bound-answers):

* **storage** -- does *some* predictor of our form (any key ``w``, hard attention, any readout
  ``W_v``) recall all ``N`` given training facts?  Upper bound: Cover counting
  (:func:`validation.token_retrieval.theory.counting_bound`, :math:`N \lesssim d^2 / \log V`); lower
  bound: an explicit predictor that stores any :math:`N \leq d - 1` facts
  (:func:`storage_construction_bound`).  ``L`` enters both only through logarithms.
* **retrieval on fresh sequences, knowing the trigger** -- with Gaussian noise tokens the
  Bayes-optimal rule given ``z`` is the linear key :math:`w = z`; :func:`oracle_retrieval`
  computes its success probability exactly: no learner, with any number of samples, does
  better.  It needs :math:`d \tau^2 \gtrsim 2 \log(N L)`.
* **learning the trigger from ``N`` sequences** -- a learner that picks, in each training
  sequence, the slot of largest norm and averages those slots needs one sequence
  (:func:`norm_learner_bound`), so the sample complexity of retrieval is :math:`O(1)` in ``L``
  wherever retrieval is possible at all; the Fano bound :func:`fano_samples` is polynomial in
  ``L`` (:math:`N \gtrsim L d / e^{d \tau^2}`) only for weak triggers, where the oracle fails anyway.
  Restricted to learners that see the *mean-pooled* sequences (the statistics of uniform
  attention, i.e. of the first gradient step), the optimum is exact
  (:func:`mean_pool_retrieval`) and needs :math:`N d \tau^4 \gtrsim L \log(N L)`: there ``N``, ``d`` and
  ``L`` are coupled multiplicatively.

All probabilities are exact one- to three-dimensional integrals (Gauss quadrature), no
Monte Carlo.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from hcizz.checks import check_int, check_real
from hcizz.results import Result

from .theory import counting_boundary
from ._docparams import fill_doc

__all__ = ["best_of", "oracle_retrieval", "mean_pool_retrieval", "norm_learner_bound",
           "storage_construction_bound", "fano_samples", "LowerBound", "lower_bound",
           "lower_bound_boundaries"]

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(64)
_GH_W = _GH_W / _GH_W.sum()


def _chi2_nodes(k, n=32):
    r"""Nodes and weights of :math:`\chi^2_k / k`: generalised Gauss-Laguerre for the Gamma(k/2) law
    (exact for polynomials of degree < 2n in the variable)."""
    x, w = special.roots_genlaguerre(n, k / 2.0 - 1.0)
    w = w / w.sum()
    return 2.0 * x / k, w


@fill_doc
def best_of(a, L):
    r"""Compute :math:`F_L(a) = P(a + g_0 > \max_{0 < j < L} g_j)` for i.i.d. standard normal :math:`g_j`.

    Parameters
    ----------
    a : float or ndarray
        Signal-to-noise ratio of the informative score (gap over one noise standard deviation).
    L : int
        Sequence length (:math:`L - 1` competitors, >= 2).

    Returns
    -------
    ndarray
        :math:`\int \phi(g) \Phi(g + a)^{L-1} \, dg` (Gauss-Hermite, 64 nodes).

    See Also
    --------
    validation.token_retrieval.lower_bound.oracle_retrieval
        Compute the probability that the Bayes-optimal rule, knowing ``z``, retrieves ``N`` fresh sequences.
    validation.token_retrieval.lower_bound.mean_pool_retrieval
        Compute the best fresh-sequence retrieval of any learner that sees only mean-pooled sequences.

    %(ref_lower_bound_question)s

    Examples
    --------
    >>> float(best_of(0.0, 2))        # two equal Gaussians: 1/2
    0.5
    """
    L = check_int("L", L, low=2)
    a = np.asarray(a, float)
    x = a[..., None] + _GH_X
    return np.exp((L - 1) * special.log_ndtr(x)) @ _GH_W


def _zpdf(d, tau):
    r"""Nodes/weights of :math:`\|z\|` for :math:`z \sim \mathcal{N}(0, \tau^2 I / d)`."""
    s, w = _chi2_nodes(d, 64)
    return tau * np.sqrt(s), w


@fill_doc
def oracle_retrieval(N, d, L, *, tau=1.0):
    r"""Compute the probability that the Bayes-optimal rule, knowing ``z``, retrieves ``N`` fresh sequences.

    Gaussian noise tokens (``noise="gaussian"``): no learner, whatever its training data,
    retrieves all ``N`` fresh sequences with a higher probability.

    Parameters
    ----------
    N : int or ndarray
        Number of fresh sequences (>= 1).
    d, L : int
        Dimension and sequence length.
    tau : float
        Trigger scale.

    Returns
    -------
    ndarray
        :math:`\mathbb{E}_z[F_L(\sqrt{d}\, \|z\|)^N]` (:func:`best_of`).

    See Also
    --------
    validation.token_retrieval.lower_bound.best_of
        Compute :math:`F_L(a) = P(a + g_0 > \max_{j<L} g_j)` for i.i.d. standard normal ``g``.
    validation.token_retrieval.lower_bound.mean_pool_retrieval
        Compute the best fresh-sequence retrieval of any learner that sees only mean-pooled sequences.

    Notes
    -----
    Given :math:`z`, the slots of a fresh sequence are independent :math:`\mathcal{N}(0, I/d)`
    except the informative one, :math:`\mathcal{N}(z, I/d)` (its token embedding is a fresh
    Gaussian for the learner); the posterior of the informative position is proportional to
    :math:`\exp(d\, x_i \cdot z)`, so the maximum a posteriori rule is
    :math:`\operatorname{argmax}_i x_i \cdot z`.  Its scores are :math:`\|z\|^2 + g_0` and
    :math:`g_j` with :math:`g \sim \mathcal{N}(0, \|z\|^2 / d)`, and the :math:`N` sequences are
    independent given :math:`z`.

    %(ref_lower_bound_question_paper)s

    Examples
    --------
    >>> round(float(oracle_retrieval(1, 256, 64)), 6)
    1.0
    >>> [round(float(p), 3) for p in oracle_retrieval([1, 10, 100], 16, 64)]
    [0.891, 0.462, 0.08]
    """
    d = check_int("d", d, low=1)
    L = check_int("L", L, low=2)
    tau = check_real("tau", tau, low=0, low_open=True, allow_array=False)
    N = np.asarray(N)
    r, w = _zpdf(d, tau)
    F = best_of(math.sqrt(d) * r, L)
    return np.exp(N[..., None] * np.log(np.maximum(F, 1e-300))) @ w


def _noisy_key_success(sig2, d, L, tau, K):
    r""":math:`\mathbb{E}[F_L(\sqrt{d}\, z \cdot \hat w)^K]` for the key :math:`w = z + \epsilon`, :math:`\epsilon \sim \mathcal{N}(0, \sigma^2 I)`."""
    sig = math.sqrt(sig2)
    r, wr = _zpdf(d, tau)
    c, wc = _chi2_nodes(d - 1, 24)
    g, wg = _GH_X[::2], _GH_W[::2] / _GH_W[::2].sum()
    R = r[:, None, None]
    par = R + sig * g[None, :, None]
    dot = R * par / np.sqrt(par ** 2 + sig2 * (d - 1) * c[None, None, :])
    F = best_of(math.sqrt(d) * dot, L)
    W = wr[:, None, None] * wg[None, :, None] * wc[None, None, :]
    return float(np.sum(W * np.exp(K * np.log(np.maximum(F, 1e-300)))))


@fill_doc
def mean_pool_retrieval(N, d, L, *, tau=1.0, fresh=None):
    r"""Compute the best fresh-sequence retrieval of any learner that sees only mean-pooled sequences.

    The learner sees :math:`h_n = \frac{1}{L} \sum_i x_{n,i}` of :math:`N` training sequences
    (what uniform attention passes on; Gaussian noise tokens) and outputs a key :math:`w`.

    Parameters
    ----------
    N : int
        Training sequences (>= 1).
    d, L : int
        Dimension and sequence length.
    tau : float
        Trigger scale.
    fresh : int, optional
        Number of fresh sequences that must all be retrieved (default ``N``).

    Returns
    -------
    float
        ``max_learner P(all fresh sequences retrieved)``.

    See Also
    --------
    validation.token_retrieval.lower_bound.oracle_retrieval
        Compute the probability that the Bayes-optimal rule, knowing ``z``, retrieves ``N`` fresh sequences.
    validation.token_retrieval.lower_bound.norm_learner_bound
        Bound the failure probability of a one-pass learner of the trigger from ``N`` sequences.

    Notes
    -----
    :math:`L h_n = z + e_{y_n} + \sum_\text{noise} x \sim \mathcal{N}(z, (L/d) I)` i.i.d.
    (labels are independent of the vectors), so the sample mean :math:`m = z + \epsilon`,
    :math:`\epsilon \sim \mathcal{N}(0, L/(d N)\, I)`, is sufficient.  With unit key :math:`u`
    the informative score exceeds a noise score by :math:`z \cdot u` over noise of standard
    deviation :math:`1/\sqrt{d}`, so the success probability is
    :math:`\mathbb{E}[F_L(\sqrt{d}\, z \cdot u)^K]`; given :math:`m`, :math:`z \cdot u` is
    Gaussian with mean increasing in :math:`m \cdot u` (:math:`z` has a rotation-invariant
    prior), so :math:`u = m / \|m\|` is optimal and

    .. math::

        z\\cdot\\hat m = \\frac{\\|z\\|(\\|z\\| + \\epsilon_\\parallel)}
        {\\sqrt{(\\|z\\| + \\epsilon_\\parallel)^2 + \\sigma^2\\chi^2_{d-1}}},\\qquad
        \\sigma^2 = \\frac{L}{dN}.

    The expectation over :math:`\|z\|`, :math:`\epsilon_\parallel` and the chi-square is a
    product quadrature.  At large :math:`d`:
    :math:`\sqrt{d}\, z \cdot \hat m \approx \sqrt{d}\, \tau^2 / \sqrt{\tau^2 + L/N}`.

    %(ref_lower_bound_question)s

    Examples
    --------
    >>> mean_pool_retrieval(64, 256, 16) > mean_pool_retrieval(4, 256, 16)
    True
    """
    N = check_int("N", N, low=1)
    d = check_int("d", d, low=2)
    L = check_int("L", L, low=2)
    tau = check_real("tau", tau, low=0, low_open=True, allow_array=False)
    K = N if fresh is None else check_int("fresh", fresh, low=1)
    return _noisy_key_success(L / (d * N), d, L, tau, K)


@fill_doc
def norm_learner_bound(N, d, L, *, tau=1.0, fresh=1):
    r"""Bound the failure probability of a one-pass learner of the trigger from ``N`` sequences.

    The learner takes the largest-norm slot of each training sequence and uses their mean as
    the key ``w``; the bound is on P(it fails to retrieve ``fresh`` fresh sequences).

    Parameters
    ----------
    N : int
        Training sequences (>= 1).
    d, L : int
        Dimension (>= 8) and sequence length.
    tau : float
        Trigger scale.
    fresh : int
        Fresh sequences to retrieve.

    Returns
    -------
    float
        An upper bound (union bound, in [0, 1]) on the failure probability.

    See Also
    --------
    validation.token_retrieval.lower_bound.mean_pool_retrieval
        Compute the best fresh-sequence retrieval of any learner that sees only mean-pooled sequences.
    validation.token_retrieval.lower_bound.fano_samples
        Lower-bound the number of sequences any learner needs to estimate the trigger direction.

    Notes
    -----
    Gaussian noise tokens.  The informative slot has :math:`\|x\|^2 = \|e + z\|^2`, :math:`1/d` times
    a noncentral chi-square, the noise slots :math:`\chi^2_d / d`; step 1 misses in a sequence with
    probability at most :math:`(L-1)\, P(\chi^2_d/d > t) + P(\|e+z\|^2 \leq t)` for every threshold ``t``
    (minimised over a grid).  The key :math:`w' = z + (1/N) \sum_n e_{y_n}`, i.e.
    :math:`z + \epsilon` with :math:`\epsilon \sim \mathcal{N}(0, I/(dN))`, equals the learner's key when nothing is missed,
    so P(failure) <= P(miss) + P(``w'`` fails), and ``w'`` retrieves ``K`` fresh sequences with
    probability :math:`\mathbb{E}[F_L(\sqrt{d}\, z \cdot w'/\|w'\|)^K]` (the same integral as
    :func:`mean_pool_retrieval` with :math:`L/(dN)` replaced by :math:`1/(dN)`).  Nothing here grows
    with ``L`` except the :math:`L - 1` competitors, so :math:`O(1)` training sequences suffice once
    :math:`d \tau^4 \gtrsim \log L` (docs, eq. tokret-lb6).

    %(ref_lower_bound_question)s

    Examples
    --------
    >>> round(norm_learner_bound(1, 256, 64), 4), round(norm_learner_bound(1, 64, 16), 3)
    (0.0005, 0.144)
    """
    N = check_int("N", N, low=1)
    d = check_int("d", d, low=8)
    L = check_int("L", L, low=2)
    tau = check_real("tau", tau, low=0, low_open=True, allow_array=False)
    fresh = check_int("fresh", fresh, low=1)
    r, wr = _zpdf(d, tau)
    # step 1, one sequence: min over a threshold t of (L-1) P(chi2_d/d > t) + P(||e+z||^2 <= t)
    ts = 1.0 + tau * tau * np.linspace(0.05, 0.95, 37)
    p_hi = stats.chi2.sf(d * ts, d)
    p_lo = np.array([float(np.sum(wr * stats.ncx2.cdf(d * t, d, d * r * r))) for t in ts])
    miss = float(min(1.0, N * np.min((L - 1) * p_hi + p_lo)))
    # step 2: without a miss w = z + eps, eps ~ N(0, I/(d N)) (unconditionally defined key)
    fail = 1.0 - _noisy_key_success(1.0 / (d * N), d, L, tau, fresh)
    return float(min(1.0, miss + max(fail, 0.0)))


@fill_doc
def storage_construction_bound(N, d, L, V, *, tau=1.0):
    r"""Bound the failure probability of an explicit predictor of our form storing ``N`` given facts.

    The predictor uses the key :math:`w = z`, hard attention and the readout that interpolates.

    Parameters
    ----------
    N, d, L, V : int
        Training facts (:math:`1 \leq N \leq d - 1`), dimension, length, vocabulary (:math:`V \geq N`).
    tau : float
        Trigger scale.

    Returns
    -------
    float
        Upper bound on P(the predictor does not recall all ``N`` training facts).

    See Also
    --------
    validation.token_retrieval.theory.counting_bound
        Bound :math:`P(\text{recall of all } N)` from above for *any* predictor of our form with hard attention.
    validation.token_retrieval.lower_bound.lower_bound
        Evaluate the statistical limits of retrieval and storage at one ``(N, d, L)``.

    Notes
    -----
    Random embeddings, vocabulary noise.  Attention: the informative slot beats noise token
    ``k`` iff :math:`\|z\|^2 + (e_y - e_k) \cdot z > 0`, and :math:`(e_y - e_k) \cdot z \sim \mathcal{N}(0, 2 \|z\|^2 / d)`
    given ``z``, so the :math:`N (L - 1)` comparisons fail with probability at most
    :math:`N (L-1)\, \mathbb{E}\, \Phi(-\|z\| \sqrt{d/2})`.  Readout: the :math:`N \leq d - 1` attended vectors
    :math:`e_{y_n} + z` are linearly independent (with probability one), so some ``W_v`` maps each
    to ``u_{t_n}``; the logits of sample ``n`` are then ``u_k . u_{t_n}``, and label ``k`` beats
    the target with probability :math:`\mathbb{E}\, \Phi(-\|u\| \sqrt{d})` (:math:`u_k \cdot u_t \sim \mathcal{N}(0, \|u_t\|^2 / d)`
    given ``u_t``).  Union over :math:`N (V - 1)` pairs.  ``L`` enters only through the factor
    :math:`L - 1` of the first union, so the storage capacity is at least :math:`d - 1` whenever
    :math:`d \tau^2 \gtrsim 4 \log(N L)` (docs, eq. tokret-lb2).

    %(ref_lower_bound_question)s

    Examples
    --------
    >>> storage_construction_bound(64, 256, 64, 256) < 1e-3
    True
    """
    N = check_int("N", N, low=1)
    d = check_int("d", d, low=2)
    L = check_int("L", L, low=2)
    V = check_int("V", V, low=2)
    tau = check_real("tau", tau, low=0, low_open=True, allow_array=False)
    if N > d - 1:
        raise ValueError(f"N must be <= d - 1 = {d - 1} for the interpolating readout, got {N}")
    if V < N:
        raise ValueError(f"V must be >= N = {N}, got {V}")
    r, wr = _zpdf(d, tau)
    p_att = float(np.sum(wr * special.ndtr(-r * math.sqrt(d / 2.0))))
    ru, wu = _zpdf(d, 1.0)
    p_lab = float(np.sum(wu * special.ndtr(-ru * math.sqrt(d))))
    return float(min(1.0, N * (L - 1) * p_att + N * (V - 1) * p_lab))


@fill_doc
def fano_samples(d, L, *, tau=1.0, cos=0.9, error=0.5):
    r"""Lower-bound the number of sequences any learner needs to estimate the trigger direction.

    The estimate must reach cosine ``cos`` with probability ``>= 1 - error``.

    Parameters
    ----------
    d, L : int
        Dimension (>= 2) and sequence length (>= 2).
    tau : float
        Trigger scale.
    cos : float
        Target cosine between the estimate and ``z``, in :math:`(1/\sqrt{2}, 1)`.
    error : float
        Allowed failure probability (in (0, 1)).

    Returns
    -------
    float
        ``N_min``: with fewer sequences every estimator fails with probability > ``error``.

    See Also
    --------
    validation.token_retrieval.lower_bound.norm_learner_bound
        Bound the failure probability of a one-pass learner of the trigger from ``N`` sequences.
    validation.token_retrieval.lower_bound.lower_bound
        Evaluate the statistical limits of retrieval and storage at one ``(N, d, L)``.

    Notes
    -----
    Gaussian noise tokens; ``z`` uniform on a packing of the sphere of radius ``tau`` at angle
    :math:`2 \theta` (:math:`\cos \theta = \cos`): an estimate within angle ``theta`` of ``z`` identifies the
    packing point.  A maximal packing has :math:`M \geq 1 / \sigma(\mathrm{cap}(2 \theta))` points and a cap
    ``{x . v >= eps}`` of the unit sphere has measure :math:`\leq e^{-d \epsilon^2 / 2}`, so
    :math:`\log M \geq d \cos^2(2 \theta) / 2`.  Fano: :math:`I(z; \mathrm{data}) \geq (1 - \mathrm{error}) \log M - \log 2`.
    Per sequence, :math:`I \leq \mathrm{KL}(P_z \,\|\, P_0)`, at most :math:`d \tau^2 / 2` (the sequence is a garbling
    of the informative slot with its position) and at most :math:`\log(1 + \chi^2)` with
    :math:`\chi^2(P_z \,\|\, P_0) = (e^{d \tau^2} - 1) / L` (likelihood ratio
    :math:`(1/L) \sum_i \exp(d\, x_i \cdot z - d \tau^2 / 2)`).  The second bound makes ``N_min`` grow
    linearly with ``L`` when :math:`d \tau^2 \lesssim \log L` -- where even the oracle of
    :func:`oracle_retrieval` cannot retrieve (docs: the Fano bound).

    %(ref_lower_bound_question)s

    Examples
    --------
    >>> fano_samples(256, 64) < 1.0          # strong trigger: one sequence may suffice
    True
    >>> fano_samples(32, 64, tau=0.1) > 100  # weak trigger: N grows with L
    True
    """
    d = check_int("d", d, low=2)
    L = check_int("L", L, low=2)
    tau = check_real("tau", tau, low=0, low_open=True, allow_array=False)
    cos = check_real("cos", cos, low=1 / math.sqrt(2), high=1, low_open=True, high_open=True,
                     allow_array=False)
    error = check_real("error", error, low=0, high=1, low_open=True, high_open=True, allow_array=False)
    c2 = 2 * cos * cos - 1                                    # cos(2 theta)
    need = (1 - error) * d * c2 * c2 / 2 - math.log(2.0)
    if need <= 0:
        return 0.0
    x = d * tau * tau
    mix = math.log1p(math.expm1(x) / L) if x < 700 else x - math.log(L)
    return float(need / min(x / 2, mix))


@fill_doc
@dataclass(frozen=True)
class LowerBound(Result):
    r"""Statistical limits at one ``(N, d, L)`` (:func:`lower_bound`).

    Parameters
    ----------
    N, d, L, V : int
        Sizes.
    tau : float
        Trigger scale.
    counting : float
        Upper bound on P(recall all ``N`` given facts), any predictor of our form.
    storage_failure : float or None
        Upper bound on the failure probability of the explicit storage predictor (:math:`N \leq d - 1`).
    oracle : float
        P(the Bayes rule knowing ``z`` retrieves ``N`` fresh sequences), an upper bound for any learner.
    mean_pool : float
        Best P(retrieve ``N`` fresh sequences) of learners seeing mean-pooled training sequences.
    learner_failure : float
        Upper bound on the failure of the norm learner (one fresh sequence, ``N`` training ones).
    fano_N : float
        Fano lower bound on the training sequences needed to estimate ``z`` to cosine 0.9.

    See Also
    --------
    validation.token_retrieval.lower_bound.lower_bound
        Evaluate the statistical limits of retrieval and storage at one ``(N, d, L)``.
    validation.token_retrieval.lower_bound.lower_bound_boundaries
        Compute the boundaries in ``N`` of the statistical limits, for the phase diagrams.

    %(ref_lower_bound_question)s
    """

    N: int
    d: int
    L: int
    V: int
    tau: float
    counting: float
    storage_failure: float | None
    oracle: float
    mean_pool: float
    learner_failure: float
    fano_N: float

    _estimate = "oracle"

    def conf_int(self, alpha=0.05):
        """Return ``(oracle, oracle)``: the bounds are exact numbers, not estimates.

        Parameters
        ----------
        alpha : float, optional
            Ignored (kept for the protocol).

        Returns
        -------
        tuple of float
            ``(oracle, oracle)``.
        """
        return (self.oracle, self.oracle)


@fill_doc
def lower_bound(N, d, L, *, V=None, tau=1.0):
    r"""Evaluate the statistical limits of retrieval and storage at one ``(N, d, L)``.

    Parameters
    ----------
    N, d, L : int
        Training facts, dimension (>= 8), sequence length.
    V : int, optional
        Vocabulary (default :math:`4 N`).
    tau : float
        Trigger scale.

    Returns
    -------
    LowerBound
        Counting bound, storage construction, oracle, mean-pooled optimum, norm learner, Fano.

    See Also
    --------
    validation.token_retrieval.lower_bound.lower_bound_boundaries
        Compute the boundaries in ``N`` of the statistical limits, for the phase diagrams.
    validation.token_retrieval.theory.counting_bound
        Bound :math:`P(\text{recall of all } N)` from above for *any* predictor of our form with hard attention.

    %(ref_lower_bound_question_paper)s

    Examples
    --------
    >>> lb = lower_bound(64, 128, 16)
    >>> lb.counting, lb.oracle > 0.99, lb.fano_N < 1
    (1.0, True, True)
    """
    from .theory import counting_bound

    N = check_int("N", N, low=1)
    d = check_int("d", d, low=8)
    L = check_int("L", L, low=2)
    V = check_int("V", V if V is not None else max(2, 4 * N), low=2)
    st = storage_construction_bound(N, d, L, V, tau=tau) if N <= d - 1 else None
    return LowerBound(N=N, d=d, L=L, V=V, tau=float(tau), counting=counting_bound(N, d, L, V),
                      storage_failure=st, oracle=float(oracle_retrieval(N, d, L, tau=tau)),
                      mean_pool=mean_pool_retrieval(N, d, L, tau=tau),
                      learner_failure=norm_learner_bound(N, d, L, tau=tau),
                      fano_N=fano_samples(d, L, tau=tau))


def _bisect(f, lo, hi):
    """Smallest integer in (lo, hi] with ``f`` True, given ``f(lo)`` False and ``f(hi)`` True
    (``f`` monotone)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if f(mid):
            hi = mid
        else:
            lo = mid
    return float(hi)


def _first(f, lo, hi, up=True):
    """Smallest integer ``N`` in [lo, hi] with ``f(N)`` True (bisection on a monotone predicate)."""
    if not f(hi):
        return None
    if f(lo):
        return float(lo)
    return _bisect(f, lo, hi)


def _first_up(f, hi):
    """Smallest ``N`` with ``f(N)`` on the first doubling bracket :math:`[N/2, N]` where it turns
    True (the success region of a learner is an interval in ``N``); None before ``hi``."""
    lo, n = 0, 1
    while n <= hi and not f(n):
        lo, n = n, 2 * n
    if n > hi:
        return None
    return _bisect(f, lo, n)


@fill_doc
def lower_bound_boundaries(d, L, *, vocab_ratio=4.0, tau=1.0, level=0.5, n_max=2 ** 16):
    """Compute the boundaries in ``N`` of the statistical limits, for the phase diagrams.

    Parameters
    ----------
    d, L : int
        Dimension (>= 8) and sequence length.
    vocab_ratio : float
        ``V = round(vocab_ratio N)``.
    tau : float
        Trigger scale.
    level : float
        Probability level.
    n_max : int
        Largest ``N`` searched.

    Returns
    -------
    dict
        ``N_counting`` (no predictor stores more with probability ``>= level``),
        ``N_storage`` (:math:`d - 1`: the explicit predictor stores this many with probability
        ``>= level``, or None if its bound exceeds ``1 - level`` there),
        ``N_oracle_max`` (from it on no learner retrieves all ``N`` fresh sequences with
        probability ``>= level``, Gaussian noise tokens), ``N_mean_pool`` (the lower end of
        the interval of ``N`` in which the best mean-pooled learner retrieves all ``N`` fresh
        sequences with probability ``>= level``; None if empty).

    See Also
    --------
    validation.token_retrieval.lower_bound.lower_bound
        Evaluate the statistical limits of retrieval and storage at one ``(N, d, L)``.
    validation.token_retrieval.theory.counting_boundary
        Find the smallest ``N`` (with ``V = vocab_ratio N``) at which ``counting_bound`` drops below
        ``level``.

    %(ref_lower_bound_question)s

    Examples
    --------
    >>> b = lower_bound_boundaries(32, 16)
    >>> b["N_storage"], b["N_mean_pool"], b["N_oracle_max"]
    (31.0, 11.0, 1203.0)
    """
    d = check_int("d", d, low=8)
    L = check_int("L", L, low=2)
    n_oracle = _first(lambda n: float(oracle_retrieval(n, d, L, tau=tau)) < level, 1, n_max)
    n_mp = _first_up(lambda n: mean_pool_retrieval(n, d, L, tau=tau) >= level, n_oracle or n_max)
    Vs = max(2, int(round(vocab_ratio * (d - 1))))
    st = storage_construction_bound(d - 1, d, L, Vs, tau=tau)
    return {"d": d, "L": L, "N_counting": counting_boundary(d, L, vocab_ratio=vocab_ratio, level=level),
            "N_storage": float(d - 1) if st <= 1 - level else None,
            "N_oracle_max": n_oracle, "N_mean_pool": n_mp}
