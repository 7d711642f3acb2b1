r"""Closed-form leading-order theory of the three-step early phase.

Everything here is derived in ``docs/token_retrieval.md#theory-of-the-early-phase``
for *our* formulation (``validation.token_retrieval.task`` / ``model`` /
``early_phase``): Gaussian (``kind="random"``) or one-hot (``"orthogonal"``)
embeddings, vocabulary (``noise="vocab"``) or Gaussian noise tokens, ``V``
labels given by a permutation, the step-size conventions ``beta`` (fixed
:math:`\|W_1\|_F`) or a literal ``gamma``, trigger scale ``tau`` and the optional
fixed random ReLU MLP of width ``m``.

Units.  After step 2 the key-query matrix is :math:`W_1 = c\, \tilde w q^T` with a positive
scalar ``c`` (:math:`c = \gamma \eta / (L N^2)`) and

.. math::

    \tilde w = \sum_{n,m} K_{mn} P_n h_m, \qquad K_{mn} = (u_{t_m} - \bar u) \cdot (u_{t_n} - \bar u),
    \qquad P_n = \sum_i (x_{n,i} - h_n)(x_{n,i} - h_n)^T

(``h_n`` the uniform-attention average of sequence ``n``).  Every attention
*score* moment below is a moment of :math:`x \cdot \tilde w`; argmax attention does not depend
on ``c``.  Every *logit* moment is one of :math:`(N / \gamma)\, u_k^T V_2 f`, i.e. of
:math:`\sum_n K'_{kn} \Gamma_n` with the Gram :math:`\Gamma_n = f_n' \cdot f`.

The leading order keeps, for every random inner product between independent
vectors, its first non-vanishing moment (:math:`1/d` for Gaussian embeddings, the
collision probability :math:`1/(V-1)` for repeated vocabulary tokens) and drops
products of two such small factors unless they are summed ``N`` or ``L``
times; the neglected terms and their size are listed in the docs.  The one-hot
(orthonormal) case is the same formulas with every :math:`1/d` interference term
set to zero (``kind="orthogonal"``).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from hcizz.checks import check_int, check_real

from ._docparams import fill_doc

__all__ = ["score_moments", "weight_norm2", "attention_weight", "margin_moments",
           "success_probs", "predict", "retrieval_boundary", "recall_boundary",
           "counting_bound", "counting_boundary", "counting_capacity", "boundary_combination"]

_CM = 0.5 + 1.0 / math.pi      # MLP: E[J_n^T f_m] along h_m and h_n (m != n), see docs
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / _GH_W.sum()
_GQ_X, _GQ_W = np.polynomial.hermite_e.hermegauss(8)
_GQ_W = _GQ_W / _GQ_W.sum()


def _check(N, d, L, V, tau, kind, noise, m):
    N = check_int("N", N, low=1)
    d = check_int("d", d, low=1)
    L = check_int("L", L, low=2)
    V = check_int("V", V if V is not None else max(2, 4 * N), low=2)
    if V < N:
        raise ValueError(f"V must be >= N = {N} (distinct informative tokens), got {V}")
    tau = check_real("tau", tau, low=0, low_open=True, allow_array=False)
    if kind not in ("random", "orthogonal"):
        raise ValueError(f"kind must be 'random' or 'orthogonal', got {kind!r}")
    if noise not in ("vocab", "gaussian"):
        raise ValueError(f"noise must be 'vocab' or 'gaussian', got {noise!r}")
    if kind == "orthogonal" and noise != "vocab":
        raise ValueError("noise must be 'vocab' when kind='orthogonal' (Gaussian noise vectors are "
                         f"not orthonormal), got {noise!r}")
    if kind == "orthogonal" and d < V + 2:
        raise ValueError(f"d must be >= V + 2 = {V + 2} for kind='orthogonal', got {d}")
    if m is not None:
        m = check_int("m", m, low=1)
    return N, d, L, V, float(tau), m


def _kappas(N, V, m):
    r"""Mean z-weight ``kappa_z`` and own-sequence weight ``kappa_s`` of
    :math:`v_n = \sum_m K_{mn} J_n^T f_m` (no MLP: :math:`1 - N/V` and :math:`1 - 1/V`)."""
    k_nn = 1.0 - 1.0 / V
    k_off = -(N - 1.0) / V                 # sum_{m != n} E K_mn
    if m is None:
        return k_nn + k_off, k_nn
    return k_nn + _CM * k_off, k_nn + k_off / math.pi


@fill_doc
def score_moments(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None, fresh=False,
                  _zeta=1.0, _skap=1.0):
    r"""Compute leading-order moments of the attention scores :math:`x \cdot \tilde w` after step 2.

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s %(kind)s
    noise : {"vocab", "gaussian"}
        Noise tokens from the vocabulary (collisions) or fresh Gaussian vectors.
    m : int, optional
        Width of the fixed random MLP (None: no MLP).
    fresh : bool
        Moments on fresh sequences (same facts, new noise and positions)
        instead of the training sequences.
    _zeta, _skap : float
        Internal: the seed-level factors :math:`\|z\|^2 / \tau^2` and
        :math:`\sum_n \kappa_n / \mathbb{E}[\ldots]` at a quadrature node of :func:`success_probs`
        (both 1, their mean, for the mean moments).

    Returns
    -------
    dict
        ``A`` (mean trigger coefficient :math:`z \cdot \tilde w / \|z\|^2`), ``mu_inf``,
        ``var_inf`` (informative score, per-sequence variance), ``mu_noise``,
        ``var_noise`` (a noise-token score), ``gap`` (``mu_inf - mu_noise``),
        ``rel_global`` (relative std of the seed-level factor shared by all
        signals), and ``parts``: the named contributions (``signal``,
        ``self``, ``cross``, ``trigger_crosstalk``, ``collisions``) to the
        means and variances.

    See Also
    --------
    validation.token_retrieval.theory.weight_norm2 : Compute the leading-order :math:`\mathbb{E}\, \|\tilde w\|^2`.
    validation.token_retrieval.theory.attention_weight
        Predict the mean attention weight on the informative position after step 2.
    validation.token_retrieval.moments.measure_moments
        Measure the simulated counterparts of the theory's moments, with standard errors.

    Notes
    -----
    :math:`A = N \kappa_z \lambda (\tau^2/L + 1/d) - 2 N \kappa_s \mathbb{E}[R]\, \tau^2 / L^2`
    with :math:`\lambda = 1 - 1/L`, :math:`\mathbb{E}[R] = (L-1)(L-2) / (2 (V-1))` the
    expected number of colliding noise pairs in a sequence, :math:`\kappa_z`,
    :math:`\kappa_s` the mean label-kernel weights (:math:`1 - N/V` and :math:`1 - 1/V`
    without MLP).  The informative score is :math:`\tau^2 A` plus its own spike
    :math:`\kappa_z \tau^2 \lambda / L` and collision terms; the variances add the
    trigger cross-talk :math:`A^2 \tau^2 / d`, collisions,
    own-sequence Gram fluctuations, cross-talk with the other sequences,
    coherent Gram sums and the label-kernel cross-talk (each term, its
    origin and its size in the docs page).

    References
    ----------
    Vural, Bietti, Soltanolkotabi, Wu, arXiv:2603.15923 (setting);
    docs/token_retrieval.md#theory-of-the-early-phase (derivation).

    Examples
    --------
    >>> mo = score_moments(64, 128, 16)
    >>> mo["gap"] > 0, round(mo["A"], 3)
    (True, 2.959)
    """
    N, d, L, V, tau, m = _check(N, d, L, V, tau, kind, noise, m)
    t2 = tau * tau
    lam = 1.0 - 1.0 / L
    ed = 0.0 if kind == "orthogonal" else 1.0 / d          # Gaussian interference switch
    rep = 1.0 if noise == "vocab" else 0.0                 # vocabulary collisions
    kz, ks = _kappas(N, V, m)
    ER = rep * (L - 1) * (L - 2) / (2.0 * (V - 1))         # colliding pairs per sequence
    # _zeta = ||z||^2 / tau^2 and _skap = sum_n kappa_n / E[...]: seed-level factors (quadrature
    # nodes of success_probs); both are 1 for the mean moments
    A = (N * kz * lam * (t2 / L + ed) - N * ks * 2 * ER * t2 / L ** 2) * _zeta * _skap
    sr2 = (L + 1 + t2) * ed                                # Gram-row fluctuation of one slot
    spike = kz * t2 * lam / L                              # coefficient of e_{y_n} in w~
    var_kappa = (N + 1) * ed                               # Var kappa_n (random unembeddings)
    # occurrences of a given token as noise in the *other* training sequences
    n_other = N if fresh else N - 1
    occ = rep * n_other * (L - 1) / (V - 1)
    q_inf = rep * (N - 1) / (V - 1)                        # noise token = another informative
    dbl = rep * n_other * (L - 1) * (L - 2) / (2.0 * (V - 1) ** 2)  # doubled occurrences
    tx = A * A * t2 * _zeta * ed                                   # trigger cross-talk (e . z) A
    cross_rand = N * spike ** 2 * ed + N * ks ** 2 * sr2 * ed / L      # overlaps with other seqs
    per_occ = (kz * t2 + ks * 2 * ER) / L ** 2                # centring of one noise occurrence
    occ_var = occ * (ks ** 2 * sr2 / L ** 2 + per_occ ** 2)
    # a doubled token in a sequence scores (1/L)(n(n-1) - 2 R n / L) = (2/L)(1 - 2/L) (R >= 1 then)
    dv = 2.0 / L * (1.0 - 2.0 / L)
    dbl_mu, dbl_var = ks * dv * dbl, ks ** 2 * dv ** 2 * dbl
    # the o ~ N L / V occurrences of a vocabulary token see the *same* V fixed overlaps
    # e_k . e_j about N L^2 / V^2 times each: their Gram-row fluctuations add coherently
    coh = rep * ks ** 2 * n_other ** 2 * (L - 1) ** 4 / ((V - 1) ** 3 * L ** 2) * ed
    # overlap of a token coefficient with another token's direction: collision parts of the
    # V vocabulary coefficients seen through e_k . e_j (variance 1/d each)
    coll_var = q_inf * (1 - q_inf) * spike ** 2 + occ_var + dbl_var
    cross_coll = rep * V * coll_var * ed
    # cross-talk of the off-diagonal label kernel: r_n = sum_{m != n} K_mn h_m^(e) (K_mn second
    # moment kvar) seen through P_n; a slot overlaps an unrelated direction with second moment eps
    kvar = ed + 1.0 / V ** 2
    eps = ed + rep / (V - 1)
    off_fresh = ks ** 2 * N * (N - 1) * kvar * eps ** 2
    off_occ = ks ** 2 * (N - 1) * kvar * eps / L
    # second order: each occurrence of a token contributes (1/L) sum_i (e_k . x_i)^2 ~ lam / d
    occ_bulk = ks * lam * ed
    # informative token (its own training sequence, or its twin for fresh)
    o_y = rep * (N - 1) * (L - 1) / (V - 1)
    mu_inf = t2 * _zeta * A + spike - o_y * per_occ - ks * 2 * ER / L ** 2 + (o_y + 1) * occ_bulk \
        + ks * dv * rep * (N - 1) * (L - 1) * (L - 2) / (2.0 * (V - 1) ** 2)
    var_inf = (tx + (t2 * lam * (1 + t2) / L) ** 2 * var_kappa * (1.0 if m is None else _CM ** 2)
               + ks ** 2 * lam ** 2 * sr2 / L ** 2
               + o_y * (ks ** 2 * sr2 / L ** 2 + per_occ ** 2) + dbl_var + cross_rand + coh
               + cross_coll + off_fresh + (o_y + 1) * off_occ)
    # a noise token
    mu_noise = q_inf * spike - occ * (per_occ - occ_bulk) + dbl_mu
    var_noise = tx + coll_var + cross_rand + coh + cross_coll + off_fresh + occ * off_occ
    parts = {"signal": {"trigger": t2 * A, "own_spike": spike},
             "var_noise": {"trigger_crosstalk": tx, "cross": cross_rand,
                           "collisions": coll_var, "coherent_gram": coh,
                           "collision_crosstalk": cross_coll,
                           "label_kernel_crosstalk": off_fresh + occ * off_occ}}
    if not fresh:
        p2 = rep * (L - 2) / (V - 1)                       # own sequence holds a second copy
        own_mu = -kz * t2 / L ** 2 + ks * (dv * p2 - 2 * ER / L ** 2) + occ_bulk
        own_var = ks ** 2 * (lam ** 2 * sr2 / L ** 2 + dv ** 2 * p2 * (1 - p2)) \
            + (1 + t2) * spike ** 2 * ed + off_occ
        mu_noise += own_mu
        var_noise += own_var
        parts["var_noise"]["self"] = own_var
    rel_global = math.sqrt(10.0 * ed)                      # ||z||^4 and sum kappa, seed level
    return {"A": A, "mu_inf": mu_inf, "var_inf": var_inf, "mu_noise": mu_noise,
            "var_noise": var_noise, "gap": mu_inf - mu_noise, "rel_global": rel_global,
            "parts": parts, "N": N, "d": d, "L": L, "V": V, "tau": tau, "kind": kind,
            "noise": noise, "m": m, "fresh": bool(fresh)}


@fill_doc
def weight_norm2(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None):
    r"""Compute the leading-order :math:`\mathbb{E} \|\tilde w\|^2`.

    It sets the attention sharpness under the ``beta`` convention
    (scores :math:`\beta \|q\|\, x \cdot \tilde w / \|\tilde w\|`).

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s %(kind)s %(noise)s %(m)s

    Returns
    -------
    float
        :math:`\mathbb{E} \|\tilde w\|^2`.

    See Also
    --------
    validation.token_retrieval.theory.score_moments
        Compute leading-order moments of the attention scores :math:`x \cdot \tilde w` after step 2.
    validation.token_retrieval.theory.attention_weight
        Predict the mean attention weight on the informative position after step 2.

    Notes
    -----
    .. math::

        \|\tilde w\|^2 = \tau^2 A^2 + N s^2 + N \kappa_s^2 r^2 / L
            + 4 N \kappa_s^2 \mathbb{E}[R] / L^2 + (\text{collision-coherent token coefficients})

    with the spike :math:`s = \kappa_z \tau^2 \lambda / L` and the Gram-row fluctuation
    :math:`r^2 = (L + 1 + \tau^2) / d` of one slot (:func:`score_moments`): trigger
    direction, the :math:`N` informative directions, the Gram-row fluctuation vectors
    and the collision vectors, treated as orthogonal (their overlaps are one order
    higher).

    %(ref_attention_scores)s

    Examples
    --------
    >>> weight_norm2(64, 128, 16) > 0
    True
    """
    mo = score_moments(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m)
    N, d, L, V, t2 = mo["N"], mo["d"], mo["L"], mo["V"], mo["tau"] ** 2
    lam = 1.0 - 1.0 / L
    ed = 0.0 if kind == "orthogonal" else 1.0 / d
    rep = 1.0 if noise == "vocab" else 0.0
    kz, ks = _kappas(N, V, m)
    ER = rep * (L - 1) * (L - 2) / (2.0 * (V - 1))
    spike = kz * t2 * lam / L
    sr2 = (L + 1 + t2) * ed
    occ = rep * N * (L - 1) / V
    return float(t2 * mo["A"] ** 2 + N * spike ** 2 + N * ks ** 2 * sr2 / L
                 + 4.0 * N * ks ** 2 * ER / L ** 2
                 + rep * V * (occ * kz * t2 / L ** 2) ** 2 + N * (L - 1) / L ** 3 * kz ** 2 * t2 ** 2)


def _scale(N, L, mo, wn2, eta, beta, gamma):
    if gamma is not None:
        return gamma * eta / (L * N ** 2)
    return beta / math.sqrt(wn2)


@fill_doc
def attention_weight(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None,
                     eta=0.1, beta=10.0, gamma=None, fresh=False):
    r"""Predict the mean attention weight on the informative position after step 2.

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s %(kind)s %(noise)s %(m)s %(eta)s %(beta)s %(gamma)s %(fresh)s

    Returns
    -------
    float
        The mean attention weight ``alpha``.

    See Also
    --------
    validation.token_retrieval.theory.score_moments
        Compute leading-order moments of the attention scores :math:`x \cdot \tilde w` after step 2.
    validation.token_retrieval.theory.margin_moments
        Compute leading-order moments of the (normalised) logits after step 3.

    Notes
    -----
    Scores are :math:`t\, x \cdot \tilde w` with :math:`t = \beta / \|\tilde w\|`
    (``beta`` convention, :math:`\|q\| \approx 1`) or :math:`t = \gamma \eta / (L N^2)`.
    With the informative score :math:`\mu_\text{inf} + \sigma_\text{inf} g` and
    independent Gaussian noise scores,
    :math:`\mathbb{E} \sum_j e^{t s_j} = (L - 1) \exp(t \mu_0 + t^2 \sigma_0^2 / 2)`
    (log-normal mean) and

    .. math::

        \alpha = \mathbb{E}_g \left[\frac{1}{1 + (L - 1)
            \exp\left(t (\mu_0 - \mu_\text{inf} - \sigma_\text{inf} g) + t^2 \sigma_0^2 / 2\right)}\right]

    (Gauss-Hermite in :math:`g`).

    %(ref_attention_scores)s

    Examples
    --------
    >>> 0.9 < attention_weight(256, 256, 4) <= 1.0
    True
    """
    eta = check_real("eta", eta, low=0, low_open=True, allow_array=False)
    if gamma is None:
        beta = check_real("beta", beta, low=0, low_open=True, allow_array=False)
    else:
        gamma = check_real("gamma", gamma, low=0, low_open=True, allow_array=False)
    mo = score_moments(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m, fresh=fresh)
    wn2 = weight_norm2(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m)
    t = _scale(mo["N"], mo["L"], mo, wn2, eta, beta, gamma)
    ex = t * (mo["mu_noise"] - mo["mu_inf"] - math.sqrt(mo["var_inf"]) * _GH_X) \
        + 0.5 * t * t * mo["var_noise"]
    ex = np.minimum(ex, 700.0)
    return float(np.sum(_GH_W / (1.0 + (mo["L"] - 1) * np.exp(ex))))


def _relu_moments(c):
    r"""For unit-variance Gaussians X, Y with correlation c:
    :math:`k = 2\, \mathbb{E}[\mathrm{relu}\, X\, \mathrm{relu}\, Y]` and :math:`v = 4 \operatorname{Var}(\mathrm{relu}\, X\, \mathrm{relu}\, Y)` (Gauss-Hermite)."""
    th = math.acos(max(-1.0, min(1.0, c)))
    k = (math.sin(th) + (math.pi - th) * c) / math.pi
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    X = x[:, None]
    Y = c * x[:, None] + math.sqrt(max(0.0, 1 - c * c)) * x[None, :]
    W = w[:, None] * w[None, :]
    e22 = float(np.sum(W * (np.maximum(X, 0) * np.maximum(Y, 0)) ** 2))
    return k, 4.0 * e22 - k * k


@fill_doc
def margin_moments(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None,
                   eta=0.1, beta=10.0, gamma=None, fresh=False, alpha=None):
    r"""Compute leading-order moments of the (normalised) logits after step 3.

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s %(kind)s %(noise)s %(m)s %(eta)s %(beta)s %(gamma)s %(fresh)s
    alpha : float, optional
        Attention weight on the informative position (default: the
        prediction of :func:`attention_weight`).

    Returns
    -------
    dict
        ``Gs``, ``Gc`` (self and cross Gram), ``mu_c``, ``sd_c`` (correct
        logit), ``mu_1``, ``sd_1`` (the :math:`N - 1` other trained labels),
        ``mu_0``, ``sd_0`` (the :math:`V - N` untrained labels); all logits are
        measured from the common :math:`-(1/V) \sum_n \Gamma_n` and in units of
        :math:`\gamma / N`; ``alpha``, ``alpha_f`` (fresh) and ``parts``.

    See Also
    --------
    validation.token_retrieval.theory.attention_weight
        Predict the mean attention weight on the informative position after step 2.
    validation.token_retrieval.theory.success_probs
        Predict P(retrieval), P(recall) and fresh accuracy without fitted parameters.

    Notes
    -----
    :math:`V_2 = \frac{1}{N} \sum_n (u_{t_n} - \bar u)(\eta h_n + \gamma h_n')^T` to
    leading order in :math:`\eta`, so :math:`l_k = \sum_n K'_{kn} \Gamma_n` with
    :math:`K'_{kn} = u_k \cdot (u_{t_n} - \bar u)`.  With
    :math:`h_n' = \alpha x_{n,p} + (1 - \alpha)\,(\text{mean of the noise tokens})`:
    :math:`\Gamma_\text{self} = \alpha^2 (1 + \tau^2) + (1 - \alpha)^2 / (L - 1)` (signal),
    :math:`\Gamma_\text{cross} = \alpha^2 \tau^2` (trigger value pollution: every trained
    label gains it); the random overlaps :math:`u_k \cdot u_{t_n}` (variance :math:`1/d`)
    add :math:`\sum_n \Gamma_n^2 / d` to each logit's variance (cross-talk).  With
    the MLP the Gram is the arc-cosine kernel plus its :math:`O(1/m)` fluctuation.

    %(ref_step_3_logits)s

    Examples
    --------
    >>> mm = margin_moments(16, 256, 4)
    >>> mm["mu_c"] > mm["mu_1"] > mm["mu_0"]
    True
    """
    eta = check_real("eta", eta, low=0, low_open=True, allow_array=False)
    N, d, L, V, tau, m = _check(N, d, L, V, tau, kind, noise, m)
    t2 = tau * tau
    ed = 0.0 if kind == "orthogonal" else 1.0 / d
    a = attention_weight(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m, eta=eta, beta=beta,
                         gamma=gamma) if alpha is None else float(alpha)
    af = attention_weight(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m, eta=eta,
                          beta=beta, gamma=gamma, fresh=True) if fresh else a
    rep = 1.0 if noise == "vocab" else 0.0
    pc = rep / (V - 1)                                      # collision probability of two slots
    # residual (1 - alpha) attention on the noise tokens: self overlap 1/(L-1) (plus collisions
    # inside the sequence); two different sequences share ~(L-1)^2/(V-1) noise tokens
    res = (1 - a) ** 2 / (L - 1) * (1 + (L - 2) * pc)
    if fresh:
        n_self = a * af * (1 + t2) + (1 - a) * (1 - af) * pc
        n_cross = a * af * t2 + (1 - a) * (1 - af) * pc
        res = 0.0
        var_res = rep * ((1 - a) * (1 - af)) ** 2 / ((L - 1) ** 2 * (V - 1))
    else:
        n_self = a * a * (1 + t2) + res
        n_cross = a * a * t2 + (1 - a) ** 2 * pc + 2 * a * (1 - a) * pc
        var_res = rep * (1 - a) ** 4 / ((L - 1) ** 2 * (V - 1))
    # Gram fluctuations measured from the common alpha^2 ||z||^2: the target keeps
    # ||e_y||^2 - 1 + e_y.z (shared by all its competitors), a trained competitor m adds
    # e_{y_m}.z + e_y.e_{y_m}
    aa2 = (a * (af if fresh else a)) ** 2
    var_self_fluct = aa2 * (2 + t2) * ed
    var_cross_fluct = aa2 * (1 + t2) * ed + var_res
    if m is None:
        Gs, Gc = n_self, n_cross
        vm_s = vm_c = 0.0
    else:
        ns = math.sqrt(a * a * (1 + t2) + res)              # ||h_n'||
        nf = math.sqrt(af * af * (1 + t2)) if fresh else ns
        ks, vs = _relu_moments(min(1.0, n_self / (ns * nf)))
        kc, vc = _relu_moments(min(1.0, n_cross / (ns * nf)))
        Gs, Gc = ns * nf * ks, ns * nf * kc
        vm_s, vm_c = (ns * nf) ** 2 * vs / m, (ns * nf) ** 2 * vc / m
    if gamma is not None:                                   # the V1 part (eta h_n . f')
        g_eta = eta * (a if not fresh else af) / L
        Gs, Gc = gamma * Gs + g_eta * (1 + t2), gamma * Gc + g_eta * t2
        sc = 1.0 / gamma
        Gs, Gc = Gs * sc, Gc * sc
    # u_k . (u_{t_n} - u_bar) = sum_j u_k . u_j (1[j = t_n] - 1/V): the centring by u_bar removes
    # the fraction N/V of the cross-talk variance
    xr = 1.0 - N / V
    var_T = (N - 1) * xr * Gc ** 2 * ed + 2 * Gs ** 2 * ed + var_self_fluct + vm_s
    var_1 = (N - 2) * xr * Gc ** 2 * ed + (Gs - Gc) ** 2 * ed + 2 * Gc ** 2 * ed + var_cross_fluct + vm_c
    var_0 = ((N - 1) * xr * Gc ** 2 + Gs ** 2) * ed
    return {"Gs": Gs, "Gc": Gc, "mu_c": Gs, "sd_c": math.sqrt(var_T), "mu_1": Gc,
            "sd_1": math.sqrt(max(var_1, 0.0)), "mu_0": 0.0, "sd_0": math.sqrt(var_0),
            "alpha": a, "alpha_f": af, "N": N, "V": V,
            "parts": {"signal": Gs - Gc, "trigger_pollution": Gc,
                      "cross_talk_var": (N - 1) * xr * Gc ** 2 * ed, "mlp_var": vm_s + vm_c}}


def _p_beat(mu_c, sd_c, groups):
    """P(N(mu_c, sd_c^2) beats every competitor of ``groups``), vectorised over
    arrays of ``mu_c``, ``sd_c`` and the groups' ``mu``, ``sd`` (broadcast;
    Gauss-Hermite in the correct score)."""
    mu_c = np.atleast_1d(np.asarray(mu_c, float))
    sd_c = np.asarray(sd_c, float)
    x = (mu_c + sd_c * np.zeros_like(mu_c))[..., None] + np.asarray(sd_c)[..., None] * _GH_X
    lp = np.zeros_like(x)
    for mu, sd, cnt in groups:
        if cnt <= 0:
            continue
        mu = np.asarray(mu, float)[..., None]
        sd = np.asarray(sd, float)[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            zz = np.where(sd > 0, (x - mu) / np.where(sd > 0, sd, 1.0), np.sign(x - mu) * np.inf)
        lp = lp + cnt * special.log_ndtr(zz)
    return np.sum(_GH_W * np.exp(lp), axis=-1)


@fill_doc
def success_probs(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None, eta=0.1,
                  beta=10.0, gamma=None):
    r"""Predict P(retrieval), P(recall) and fresh accuracy without fitted parameters.

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s %(kind)s %(noise)s %(m)s %(eta)s %(beta)s %(gamma)s

    Returns
    -------
    dict
        ``p_retrieval_seq`` (one training sequence: argmax attention on the
        informative position), ``p_retrieval`` (all ``N``), ``p_recall_seq``,
        ``p_recall`` (all ``N`` mapped to their label), ``test_acc``
        (fresh-sequence accuracy), ``p_retrieval_fresh_seq``, ``p_margin_seq``
        (positive margin of one training sample given retrieval), ``alpha``.

    See Also
    --------
    validation.token_retrieval.theory.predict
        Return ``success_probs`` together with the moments it uses (one JSON-friendly dict).
    validation.token_retrieval.token_theory.token_theory
        Predict the early phase's success probabilities from the token-level theory.
    validation.token_retrieval.runs.run_config
        Run the early phase once on a fresh task and return its success statistics.

    Notes
    -----
    One sequence: the informative score
    :math:`\mathcal{N}(\mu_\text{inf}, \sigma_\text{inf}^2)` must beat :math:`L - 1`
    independent :math:`\mathcal{N}(\mu_0, \sigma_0^2)` noise scores,
    :math:`p = \mathbb{E}_g \Phi\left((\mu_\text{inf} + \sigma_\text{inf} g - \mu_0) / \sigma_0\right)^{L-1}`.
    All :math:`N`: :math:`\mathbb{E}_G[p(G)^N]` where :math:`G` is the seed-level factors
    :math:`\|z\|^2 / \tau^2` and :math:`\sum_n \kappa_n / \mathbb{E}[\ldots]` (relative
    std :math:`\sqrt{2/d}` each; 8 x 8 Gauss-Hermite nodes); the sequences are otherwise
    treated as independent.  Recall of one training sample: retrieval and a correct
    logit above the :math:`N - 1` trained and :math:`V - N` untrained competitors
    (:func:`margin_moments`); all :math:`N`:
    :math:`\mathbb{E}_G[(p_\text{ret}(G)\, p_\text{margin})^N]`.  Fresh accuracy:
    :math:`P(\text{retrieval on a fresh sequence})\, P(\text{margin} > 0 \mid \text{fresh})`
    (a fresh sequence whose attention misses the informative token is counted as an
    error).

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#retrieval-probability

    Examples
    --------
    >>> p = success_probs(128, 256, 4)
    >>> p["p_retrieval"] > 0.9
    True
    """
    N, d, L, V, tau, m = _check(N, d, L, V, tau, kind, noise, m)
    eta = check_real("eta", eta, low=0, low_open=True, allow_array=False)
    beta = None if beta is None else check_real("beta", beta, low=0, low_open=True, allow_array=False)
    gamma = None if gamma is None else check_real("gamma", gamma, low=0, low_open=True,
                                                  allow_array=False)
    return dict(_success_probs(N, d, L, V, tau, kind, noise, m, eta, beta, gamma))


@functools.lru_cache(maxsize=8192)
def _success_probs(N, d, L, V, tau, kind, noise, m, eta, beta, gamma):
    out = {}
    for fresh in (False, True):
        mo = score_moments(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m, fresh=fresh)
        Lm1 = mo["L"] - 1
        # seed-level factors ||z||^2 / tau^2 and sum_n kappa_n / E: relative std sqrt(2/d) each
        r = math.sqrt(2.0 * (0.0 if kind == "orthogonal" else 1.0 / mo["d"]))
        zeta = np.maximum(1e-3, 1 + r * _GQ_X)[:, None]
        skap = np.maximum(1e-3, 1 + r * _GQ_X)[None, :]
        mg = score_moments(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m, fresh=fresh,
                           _zeta=zeta, _skap=skap)
        p = _p_beat(mg["mu_inf"], np.sqrt(mg["var_inf"]),
                    [(mg["mu_noise"], np.sqrt(mg["var_noise"]), Lm1)])
        p = np.clip(p, 0.0, 1.0).ravel()
        w = (_GQ_W[:, None] * _GQ_W[None, :]).ravel()
        key = "p_retrieval_fresh_seq" if fresh else "p_retrieval_seq"
        out[key] = float(np.sum(w * p))
        if not fresh:
            out["p_retrieval"] = float(np.sum(w * p ** mo["N"]))
            p_nodes, w_nodes = p, w
    Nn, Vv = mo["N"], mo["V"]
    for fresh in (False, True):
        mm = margin_moments(N, d, L, V=V, tau=tau, kind=kind, noise=noise, m=m, eta=eta, beta=beta,
                            gamma=gamma, fresh=fresh)
        pm = float(_p_beat(mm["mu_c"], mm["sd_c"],
                           [(mm["mu_1"], mm["sd_1"], Nn - 1), (mm["mu_0"], mm["sd_0"], Vv - Nn)]).ravel()[0])
        if fresh:
            out["test_acc"] = out["p_retrieval_fresh_seq"] * pm
        else:
            # a training sample is recalled when its attention finds the informative token and
            # its margin is positive (where retrieval fails the attention output is a noise
            # token shared with other sequences, and recall fails: docs)
            out["p_margin_seq"] = pm
            out["p_recall_seq"] = out["p_retrieval_seq"] * pm
            out["p_recall"] = float(np.sum(w_nodes * (p_nodes * pm) ** Nn))
            out["alpha"] = mm["alpha"]
    return out


@fill_doc
def predict(N, d, L, **kw):
    """Return :func:`success_probs` together with the moments it uses (one JSON-friendly dict).

    Parameters
    ----------
    N, d, L : int
        Training sequences, dimension, length.
    **kw
        Options of :func:`success_probs`.

    Returns
    -------
    dict
        ``probs``, ``scores`` (training), ``scores_fresh``, ``margins``,
        ``weight_norm2``.

    See Also
    --------
    validation.token_retrieval.theory.success_probs
        Predict P(retrieval), P(recall) and fresh accuracy without fitted parameters.
    validation.token_retrieval.moments.moment_check
        Check every moment of the theory against the simulation at the given configurations.

    %(ref_theory_of_the_early_phase)s

    Examples
    --------
    >>> sorted(predict(16, 64, 4))
    ['margins', 'probs', 'scores', 'scores_fresh', 'weight_norm2']
    """
    sk = {k: kw[k] for k in ("V", "tau", "kind", "noise", "m") if k in kw}
    strip = lambda dct: {k: v for k, v in dct.items() if k != "parts"}
    return {"probs": success_probs(N, d, L, **kw),
            "scores": strip(score_moments(N, d, L, **sk)),
            "scores_fresh": strip(score_moments(N, d, L, fresh=True, **sk)),
            "margins": strip(margin_moments(N, d, L, **kw)),
            "weight_norm2": weight_norm2(N, d, L, **sk)}


def _crossing(f, Ns, level=0.5, direction="up"):
    """Geometric-interpolated crossing of ``level`` by ``f(N)`` on the grid
    ``Ns`` (first upward / last downward crossing), or None."""
    vals = [f(N) for N in Ns]
    xs = np.log(np.asarray(Ns, float))
    fs = np.asarray(vals)
    if direction == "down":
        xs, fs = xs[::-1], fs[::-1]
    for t in range(len(fs) - 1):
        if fs[t] < level <= fs[t + 1]:
            w = (level - fs[t]) / (fs[t + 1] - fs[t])
            return float(np.exp(xs[t] + w * (xs[t + 1] - xs[t])))
    return None


def _boundary(key, direction, d, L, Ns, vocab_ratio, level, kw):
    r"""Crossing of ``level`` by ``success_probs(N, d, L, V=round(vocab_ratio N))[key]``
    along ``Ns`` (default :math:`2^1, \ldots, 2^{11}` in steps of :math:`2^{0.5}`)."""
    Ns = Ns if Ns is not None else np.unique(np.round(2 ** np.arange(1, 11.01, 0.5)).astype(int))
    f = lambda N: success_probs(int(N), d, L, V=max(2, int(round(vocab_ratio * N))), **kw)[key]
    return _crossing(f, Ns, level, direction)


@fill_doc
def retrieval_boundary(d, L, *, Ns=None, vocab_ratio=4.0, level=0.5, **kw):
    r"""Predict :math:`N_c(d, L)`, the smallest ``N`` with :math:`P(\text{retrieval of all } N) \geq` ``level``.

    Parameters
    ----------
    %(dL)s %(Ns)s %(vocab_ratio)s %(crossing_level)s %(success_kw)s

    Returns
    -------
    float or None
        Crossing (geometric interpolation), None if none in ``Ns``.

    See Also
    --------
    validation.token_retrieval.theory.recall_boundary
        Predict :math:`N_{\max}(d, L)`, the last ``N`` with :math:`P(\text{recall of all } N) \geq` ``level``.
    validation.token_retrieval.theory.success_probs
        Predict P(retrieval), P(recall) and fresh accuracy without fitted parameters.

    %(ref_the_boundary_law)s

    Examples
    --------
    >>> 4 < retrieval_boundary(128, 16) < 64
    True
    """
    return _boundary("p_retrieval", "up", d, L, Ns, vocab_ratio, level, kw)


@fill_doc
def recall_boundary(d, L, *, Ns=None, vocab_ratio=4.0, level=0.5, **kw):
    r"""Predict :math:`N_{\max}(d, L)`, the last ``N`` with :math:`P(\text{recall of all } N) \geq` ``level``.

    Parameters
    ----------
    %(dL)s %(Ns)s %(vocab_ratio)s %(crossing_level)s %(success_kw)s

    Returns
    -------
    float or None
        Last downward crossing (geometric interpolation), None if none in ``Ns``.

    See Also
    --------
    validation.token_retrieval.theory.retrieval_boundary
        Predict :math:`N_c(d, L)`, the smallest ``N`` with :math:`P(\text{retrieval of all } N) \geq` ``level``.
    validation.token_retrieval.theory.counting_boundary
        Find the smallest ``N`` (with ``V = vocab_ratio N``) at which ``counting_bound`` drops below
        ``level``.

    %(ref_the_boundary_law)s

    Examples
    --------
    >>> 4 < recall_boundary(256, 4) < 128
    True
    """
    return _boundary("p_recall", "down", d, L, Ns, vocab_ratio, level, kw)


@fill_doc
def boundary_combination(N, d, L, *, vocab_ratio=4.0, tau=1.0):
    r"""Compute the combination of ``(N, d, L)`` that sets the retrieval boundary at leading order.

    It is the squared signal-to-noise ratio of one score gap,
    ``snr2 = gap^2 / (var_inf + var_noise)``, divided by the :math:`2 \log(L - 1)`
    it must exceed for the maximum of :math:`L - 1` noise scores.

    Parameters
    ----------
    N, d, L : int or array of int
        Training sequences, dimension, length (broadcast together).
    vocab_ratio : float
        ``V = round(vocab_ratio N)``.
    tau : float
        Trigger scale.

    Returns
    -------
    ndarray
        ``snr2 / (2 log(L-1))`` (> 1: retrieval of one sequence succeeds).

    See Also
    --------
    validation.token_retrieval.theory.score_moments
        Compute leading-order moments of the attention scores :math:`x \cdot \tilde w` after step 2.
    validation.token_retrieval.theory.retrieval_boundary
        Predict :math:`N_c(d, L)`, the smallest ``N`` with :math:`P(\text{retrieval of all } N) \geq` ``level``.

    Notes
    -----
    For :math:`V = 4N` (docs): :math:`\mathrm{gap} \sim (\tau^4 / L)(N k_z - L/4)` and
    :math:`\mathrm{var} \sim \mathrm{gap}^2 / (\tau^2 d) + 1/(8N) + L/(64 N^2) + 1/(4d) + 1/(dL)
    + N(N-1)/d^3`; the retrieval boundary of all ``N`` sequences sits at
    :math:`x \approx 1.5`.  ``N``, ``d`` and ``L`` enter multiplicatively through ``x``,
    which is not a single power law (collision-dominated :math:`N_c \sim L` at large
    ``d``; cross-talk-dominated at small ``d``).

    %(ref_the_boundary_law)s

    Examples
    --------
    >>> float(boundary_combination(64, 128, 16)) > 1
    True
    """
    f = np.vectorize(lambda n, dd, ll: _comb(int(n), int(dd), int(ll), vocab_ratio, tau))
    return f(N, d, L)


def _comb(N, d, L, vr, tau):
    mo = score_moments(N, d, L, V=max(2, int(round(vr * N))), tau=tau)
    return mo["gap"] ** 2 / (mo["var_inf"] + mo["var_noise"]) / (2 * math.log(max(L - 1, 2)))


@fill_doc
def counting_capacity(d, k, N, V):
    r"""Bound the log-number of label assignments of ``N`` fixed inputs a linear readout realises.

    The readout is :math:`\operatorname{argmax}_k u_k^T W_v f` with
    :math:`W_v \in \mathbb{R}^{d \times k}`; the result is an upper bound.

    Parameters
    ----------
    d, k : int
        Rows and columns of ``Wv`` (:math:`k = d` without MLP, ``m`` with it).
    N, V : int
        Inputs and labels.

    Returns
    -------
    float
        :math:`\log S` with :math:`S = 2 \sum_{i < D} \binom{M - 1}{i}`,
        :math:`M = N (V - 1)` pairwise margin functions, :math:`D = d k` (Cover's
        function counting for sign patterns of :math:`M` linear functions of :math:`D`
        parameters through the origin); every realised assignment is a distinct sign
        pattern.

    See Also
    --------
    validation.token_retrieval.theory.counting_bound
        Bound :math:`P(\text{recall of all } N)` from above for *any* predictor of our form with hard attention.
    validation.token_retrieval.lower_bound.storage_construction_bound
        Bound the failure probability of an explicit predictor of our form storing ``N`` given facts.

    %(ref_counting_bound)s

    Examples
    --------
    >>> round(counting_capacity(2, 2, 3, 2), 6) == round(math.log(2 * (1 + 2 + 1)), 6)
    True
    """
    d = check_int("d", d, low=1)
    k = check_int("k", k, low=1)
    N = check_int("N", N, low=1)
    V = check_int("V", V, low=2)
    D = d * k
    M = N * (V - 1)
    if D >= M:
        return M * math.log(2.0)
    i = np.arange(D)
    lt = special.gammaln(M) - special.gammaln(i + 1) - special.gammaln(M - i)
    return float(math.log(2.0) + special.logsumexp(lt))


@fill_doc
def counting_bound(N, d, L, V, *, m=None):
    r"""Bound :math:`P(\text{recall of all } N)` from above for *any* predictor of our form with hard attention.

    The predictor may use any :math:`w \in \mathbb{R}^d` (attention = argmax of
    :math:`x_i \cdot w`) and any readout :math:`W_v`; the bound is information-theoretic.

    Parameters
    ----------
    N, d, L, V : int
        Training facts, dimension, sequence length, vocabulary (:math:`V \geq N`).
    m : int, optional
        MLP width (the readout then has :math:`d m` parameters).

    Returns
    -------
    float
        :math:`\min(1, S_\text{attn} S_\text{read} (V - N)! / V!)`.

    See Also
    --------
    validation.token_retrieval.theory.counting_capacity
        Bound the log-number of label assignments of ``N`` fixed inputs a linear readout realises.
    validation.token_retrieval.theory.counting_boundary
        Find the smallest ``N`` (with ``V = vocab_ratio N``) at which ``counting_bound`` drops below
        ``level``.

    Notes
    -----
    The ``N`` targets ``perm[y_n]`` are distinct and uniformly random given
    the inputs: one of :math:`V! / (V - N)!` equally likely assignments.  The
    attention pattern (which position each of the :math:`N` sequences selects) is
    a sign pattern of the :math:`M' = N L (L - 1) / 2` linear functions
    :math:`(x_i - x_j) \cdot w` of :math:`d` parameters, so at most
    :math:`S_\text{attn} = 2 \sum_{i<d} \binom{M' - 1}{i}` patterns occur; for each, the
    attention outputs are fixed and the readout realises at most
    :math:`S_\text{read}` assignments (:func:`counting_capacity`).  A predictor
    therefore recalls all :math:`N` with probability at most
    :math:`S_\text{attn} S_\text{read} (V - N)! / V!`.  It drops below 1/2 roughly when
    :math:`N \log V > d k \log(e N V / (d k)) + d \log(e N L^2 / (2 d))`: :math:`N` is
    limited by :math:`d k / \log V`, and :math:`L` enters only through a logarithm.
    (Softmax attention with :math:`\|W\| \leq \beta` is the limit of hard attention
    only as :math:`\beta \to \infty`; the bound is stated for hard attention.)

    %(ref_counting_bound)s

    Examples
    --------
    >>> counting_bound(4, 8, 4, 16)
    1.0
    >>> counting_bound(4000, 8, 4, 16000) < 1e-6
    True
    """
    k = d if m is None else check_int("m", m, low=1)
    N = check_int("N", N, low=1)
    L = check_int("L", L, low=2)
    V = check_int("V", V, low=2)
    if V < N:
        raise ValueError(f"V must be >= N = {N}, got {V}")
    lS = counting_capacity(d, k, N, V)
    Mp = N * L * (L - 1) // 2
    lS += counting_capacity(d, 1, Mp, 2) if d < Mp else Mp * math.log(2.0)
    lA = float(special.gammaln(V + 1) - special.gammaln(V - N + 1))
    return float(math.exp(min(0.0, lS - lA)))


@fill_doc
def counting_boundary(d, L, *, vocab_ratio=4.0, m=None, level=0.5):
    r"""Find the smallest ``N`` (with ``V = vocab_ratio N``) at which :func:`counting_bound` drops below ``level``.

    No predictor of the form recalls all ``N`` facts with probability
    ``>= level`` beyond it.

    Parameters
    ----------
    d, L : int
        Dimension and sequence length.
    vocab_ratio : float
        ``V = max(2, round(vocab_ratio N))``.
    m : int, optional
        MLP width (None: no MLP).
    level : float
        Probability level.

    Returns
    -------
    float
        The smallest such ``N`` (bisection over integers).

    Raises
    ------
    ValueError
        If the bound stays above ``level`` up to :math:`N = 2^{40}`.

    See Also
    --------
    validation.token_retrieval.theory.counting_bound
        Bound :math:`P(\text{recall of all } N)` from above for *any* predictor of our form with hard attention.
    validation.token_retrieval.theory.recall_boundary
        Predict :math:`N_{\max}(d, L)`, the last ``N`` with :math:`P(\text{recall of all } N) \geq` ``level``.

    %(ref_counting_bound)s

    Examples
    --------
    >>> counting_boundary(32, 4) > 1000
    True
    """
    lo, hi = 1, 2
    V = lambda n: max(2, int(round(vocab_ratio * n)))
    while counting_bound(hi, d, L, V(hi), m=m) >= level:
        lo, hi = hi, hi * 2
        if hi > 2 ** 40:
            raise ValueError("no crossing below N = 2^40")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if counting_bound(mid, d, L, V(mid), m=m) >= level:
            lo = mid
        else:
            hi = mid
    return float(hi)
