r"""Token-level theory of the three-step early phase: exact collision structure, Gaussian
interference, and the all-``N`` events from their joint law.

The attention score of a noise token ``k`` after step 2 is :math:`e_k \cdot \tilde w` -- one number per
*token*, shared by every sequence that contains ``k`` -- and the informative score of
sequence ``n`` is :math:`e_{y_n} \cdot \tilde w + \|z\|^2 A` (docs/token_retrieval.md#token-level-theory).
This module predicts the law of these numbers and of the logits after step 3:

* the token counts (collisions inside a sequence, tokens shared between sequences,
  informative tokens that reappear as noise) are drawn exactly, and the key vector's
  coefficients in the orthogonal limit are computed from them
  (:func:`validation.token_retrieval.exact.orthogonal_key`);
* the random overlaps of Gaussian embeddings add, per token, a mean shift and a Gaussian
  fluctuation whose variance is derived in the docs (random projection of the key vector,
  including the Wishart-amplified coherent Gram sums, the label-kernel cross-talk, the
  token's own Gram-row fluctuations and the trigger cross-talk), and, per task, a
  fluctuation of the trigger coefficient ``A`` (trigger overlapping the sum of all token
  embeddings, :math:`\|z\|^2`, :math:`\sum_n \kappa_n`);
* retrieval of all ``N`` sequences, recall of all ``N`` facts (per-sequence attention
  weights, exact shared-token Grams, the :math:`N - 1` trained and :math:`V - N` untrained
  competitors) and fresh-sequence accuracy are then evaluated on each draw, so the tail
  events come from the joint law (a Monte Carlo over these low-dimensional statistics: no
  ``d``-dimensional vector is drawn).

The closed-form leading-order theory of :mod:`validation.token_retrieval.theory` is its
average with the counts replaced by their means and independent Gaussian competitors.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import special

from hcizz.checks import check_int, check_real, check_rng
from hcizz.results import Result

from ._docparams import fill_doc
from .exact import orthogonal_key
from .moments import MOMENT_KEYS
from .theory import _check, _kappas, _relu_moments

__all__ = ["TokenTheory", "token_theory", "draw_scores", "recall_probability",
           "token_moments"]

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(32)
_GH_W = _GH_W / _GH_W.sum()


def _structure(N, L, V, rng, noise, informative=None):
    """Draw informative tokens, positions and noise tokens exactly as
    :func:`~validation.token_retrieval.task.sample_sequences` does."""
    y = rng.choice(V, size=N, replace=False) if informative is None else informative
    pos = rng.integers(0, L, size=N)
    if noise == "vocab":
        tok = rng.integers(0, V - 1, size=(N, L))
        tok += tok >= y[:, None]
    else:
        tok = np.full((N, L), -1, dtype=np.int64)
    tok[np.arange(N), pos] = y
    return tok, pos, y


def _cooccurrence(tok, n_tok):
    """Sparse count matrix ``C_n[k]`` (N x n_tok) and co-occurrence :math:`M = C^T C`."""
    N, L = tok.shape
    Cn = sp.csr_matrix((np.ones(N * L), (np.repeat(np.arange(N), L), tok.ravel())), shape=(N, n_tok))
    Cn.sum_duplicates()
    return Cn, (Cn.T @ Cn).tocsr()


def _gram_terms(ok, N, L, V, d, kz):
    """Gram-overlap terms of the token scores for random token embeddings (docs, eqs. tokret-tl3 to tokret-tl5).

    Returns the per-token variance that does not depend on ``A`` and the norm terms of the key
    vector orthogonal to ``z`` (``T0``, ``T1``, ``Tw``, ``T_K``)."""
    tok = ok.slot_tokens
    n_tok = ok.c.size
    Cn, M = _cooccurrence(tok, n_tok)
    C = ok.counts.astype(float)
    c0 = ok.c
    MC = M @ C
    sC2 = float(C @ C)
    rowM2 = np.asarray(M.multiply(M).sum(axis=1)).ravel()
    rowMt2 = rowM2 - 2.0 * C * MC / V + C * C * sC2 / V ** 2          # sum_l Mt_kl^2
    Mt_diag = M.diagonal() - C * C / V
    sMt2 = float(rowMt2.sum())
    g = L * C * kz - Mt_diag
    Mg = M @ g - C * float(C @ g) / V                                   # sum_l Mt_kl g_l
    Mc0 = M @ c0 - C * float(C @ c0) / V
    T0 = float(c0 @ c0)
    T1 = (sMt2 + float(Mt_diag @ Mt_diag)) / (L ** 2 * d)
    Tw = kz * kz * sC2 / d ** 2
    # label-kernel cross-talk: (1/d) sum_{n,m} E||P_n h_m||^2 with E P_n^2 = tr(P_n^2)/d
    rsum = ok.multiplicity.sum(axis=1).astype(float)                    # sum_k C_n[k]^2
    trP2 = rsum - 1.0 + L * (L - 1.0) / d
    TK = float(trP2.sum()) * float((rsum / L ** 2).sum()) / d ** 2
    var_self = (rowMt2 + Mt_diag ** 2) / (L ** 2 * d) + 2.0 * (Mg - rowMt2) / (L ** 2 * d ** 2) \
        + 2.0 * Mc0 / (L * d) + c0 * c0 / d
    return {"T0": T0, "T1": T1, "Tw": Tw, "TK": TK, "var_self": np.maximum(var_self, 0.0), "C": C,
            "sC2": sC2}


@fill_doc
def draw_scores(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None, rng=None,
                structure=None):
    r"""Draw one task's attention scores from the token-level theory.

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s
    kind : {"random", "orthogonal"}
        Embeddings; ``"orthogonal"`` leaves the exact counts only (no draw besides them).
    noise : {"vocab", "gaussian"}
        Noise tokens.
    m : int, optional
        Fixed random MLP width (changes the label-kernel weights of step 2).
    rng : None, int, SeedSequence or Generator
        Randomness of the draw.
    structure : tuple, optional
        ``(tokens, pos, informative)`` to use instead of drawing them.

    Returns
    -------
    dict
        ``scores`` (one per token id), ``A``, ``z2`` (:math:`\|z\|^2`), ``q2``,
        ``inf_scores`` (N,), ``noise_scores`` (N, L - 1), ``retrieved`` (N,) bool,
        ``w2`` (:math:`\|\tilde w\|^2`), ``tokens``, ``pos``, ``informative``, ``sd`` (per-token
        standard deviation), ``orth`` (the :class:`~validation.token_retrieval.exact.OrthogonalKey`).

    See Also
    --------
    validation.token_retrieval.token_theory.token_theory
        Predict the early phase's success probabilities from the token-level theory.
    validation.token_retrieval.exact.orthogonal_key
        Compute the key vector's coefficients in the orthogonal limit from the token counts.

    Notes
    -----
    :math:`s_k = c_k^0 + \kappa_z C_k / d + \sigma_k g_k` with :math:`c^0` the orthogonal-limit
    coefficient, ``C_k`` the number of slots holding ``k`` and independent standard normal
    ``g_k``; the informative score is :math:`s_{y_n} + \|z\|^2 A` (docs, eqs. tokret-tl1 to tokret-tl6).

    %(ref_token_level_theory_paper)s

    Examples
    --------
    >>> s = draw_scores(16, 64, 8, rng=0)
    >>> s["noise_scores"].shape, s["retrieved"].dtype
    ((16, 7), dtype('bool'))
    """
    N, d, L, V, tau, m = _check(N, d, L, V, tau, kind, noise, m)
    rng = check_rng(rng)
    return _draw(N, d, L, V, tau, kind, noise, m, rng, structure)


def _draw(N, d, L, V, tau, kind, noise, m, rng, structure=None):
    t2 = tau * tau
    lam = 1.0 - 1.0 / L
    rand = kind == "random"
    if structure is None:
        tok, pos, y = _structure(N, L, V, rng, noise)
    else:
        tok, pos, y = (np.asarray(a) for a in structure)
    kz = _kappas(N, V, m)[0]
    if rand:
        z2 = t2 * rng.chisquare(d) / d
        q2 = rng.chisquare(d) / d
        skap = max(1e-3, 1.0 + math.sqrt(2.0 / d) * rng.standard_normal())
    else:
        z2, q2, skap = t2, 1.0, 1.0
    ok = orthogonal_key(tok, pos, V, tau=math.sqrt(z2))
    n_tok = ok.c.size
    layer = None
    if m is None:
        c0, A0 = ok.c.copy(), ok.A
    else:
        # with the MLP, step 2 goes through its Jacobian: the orthogonal key with the exact
        # finite-width v_n of one drawn layer (its mean gives the weights kz, ks); the same layer
        # makes the features of step 3 (_grams)
        layer = rng.standard_normal((n_tok + 1, m))
        c0, A0 = _mlp_orthogonal_key(ok, pos, V, z2, layer)
    if not rand:
        A, scores, sd = A0, c0, np.zeros(n_tok)
        w2 = z2 * A * A + float(c0 @ c0)
    else:
        gt = _gram_terms(ok, N, L, V, d, kz)
        C = gt["C"]
        # trigger coefficient: orthogonal part (times the label-kernel factor), bulk, and the
        # trigger's overlap with the sum g = sum_k C_k e_k of all slot embeddings
        zg = math.sqrt(z2 * gt["sC2"] / d) * rng.standard_normal()
        A = A0 * skap + kz * N * lam / d + kz * zg / L + kz * zg / (d * max(z2, 1e-12))
        perp = gt["T0"] + gt["T1"] + gt["Tw"] * skap ** 2 + gt["TK"]
        var = perp / d + gt["var_self"] + z2 * (A + kz * C / L) ** 2 / d
        var[y] += ((1.0 + t2) * lam / L) ** 2 * (N + 1.0) / d
        sd = np.sqrt(var)
        scores = c0 + kz * C / d + sd * rng.standard_normal(n_tok)
        w2 = z2 * A * A + perp
    rows = np.arange(N)
    inf = scores[y] + z2 * A
    mask = np.ones((N, L), bool)
    mask[rows, pos] = False
    noise_sc = scores[ok.slot_tokens[mask]].reshape(N, L - 1)
    return {"scores": scores, "A": float(A), "z2": float(z2), "q2": float(q2), "inf_scores": inf,
            "noise_scores": noise_sc, "retrieved": inf > noise_sc.max(axis=1), "w2": float(w2),
            "tokens": ok.slot_tokens, "pos": pos, "informative": y, "sd": sd, "orth": ok, "layer": layer}


def _mlp_orthogonal_key(ok, pos, V, z2, G):
    r"""Token coefficients and trigger coefficient of the orthogonal key through a fixed random MLP
    of width ``m``, drawn exactly in the basis of the tokens and the trigger direction.

    At ``W = 0`` the attention is uniform, :math:`h_n = (C_n + z)/L`.  The step-2 vector is
    :math:`v_n = \sum_m K_{mn} J_n^T f_m` with :math:`J_n^T f_m = \frac2m A^T D_n\,
    \mathrm{relu}(A h_m)` (:math:`D_n` the ReLU gates at :math:`h_n`, :math:`K_{mn} = \delta_{mn} - 1/V`);
    with orthonormal tokens and trigger the columns of ``A`` on that basis are i.i.d. standard
    normal vectors (the rows of ``G``: tokens, then the trigger direction), so ``v_n`` carries its finite-width fluctuation (of order
    :math:`1/\sqrt m` per coordinate).  Then :math:`\beta_{n,i} = (x_{n,i} - h_n)\cdot v_n`,
    :math:`c_k = \sum_{(n,i): k_{n,i} = k}\beta_{n,i}` and :math:`A = \sum_n \beta_{n,p_n}` as in
    :func:`~validation.token_retrieval.exact.orthogonal_key` (its case :math:`v_n = h_n - H/V` without the MLP)."""
    tok = ok.slot_tokens
    N, L = tok.shape
    n_tok = ok.c.size
    rows = np.arange(N)
    Hb = sp.csr_matrix((np.full(N * L, 1.0 / L), (np.repeat(rows, L), tok.ravel())), shape=(N, n_tok))
    Hb.sum_duplicates()
    sz = math.sqrt(z2)
    m = G.shape[1]
    P = Hb @ G[:n_tok] + (sz / L) * G[n_tok][None, :]    # pre-activations A h_n, (N, m)
    R = np.maximum(P, 0.0)
    KR = R - R.sum(axis=0, keepdims=True) / V
    Vb = (2.0 / m) * ((P > 0) * KR) @ G.T                # v_n in the basis, (N, n_tok + 1)
    hv = np.asarray(Hb.multiply(Vb[:, :n_tok]).sum(axis=1)).ravel() + (sz / L) * Vb[:, n_tok]
    beta = Vb[rows[:, None], tok] - hv[:, None]
    beta[rows, pos] += sz * Vb[rows, n_tok]
    c = np.bincount(tok.ravel(), weights=beta.ravel(), minlength=n_tok)
    return c, float(beta[rows, pos].sum())


def _attention(draw, L, beta, gamma, eta, N):
    r"""Per-slot attention after step 2 (softmax of :math:`t\, x \cdot \tilde w`)."""
    tok, pos = draw["tokens"], draw["pos"]
    s = draw["scores"][tok].copy()
    rows = np.arange(tok.shape[0])
    s[rows, pos] = draw["inf_scores"]
    if gamma is not None:
        t = gamma * eta / (L * N ** 2) * draw["q2"]
    else:
        t = beta * math.sqrt(draw["q2"]) / math.sqrt(max(draw["w2"], 1e-300))
    s = t * s
    s -= s.max(axis=1, keepdims=True)
    a = np.exp(s)
    return a / a.sum(axis=1, keepdims=True)


def _h_matrix(a, tok, pos, n_tok):
    """Attention outputs in the token basis (sparse N x n_tok) and their trigger weights."""
    N, L = tok.shape
    H = sp.csr_matrix((a.ravel(), (np.repeat(np.arange(N), L), tok.ravel())), shape=(N, n_tok))
    H.sum_duplicates()
    return H, a[np.arange(N), pos]


@fill_doc
def recall_probability(Gam, var_pair, targets_self, d, V, *, kind="random", var_target=None):
    r"""Probability that each sample's correct logit beats its trained and untrained competitors.

    Parameters
    ----------
    Gam : ndarray, shape (n, N)
        Grams :math:`\Gamma_{n m} = f_n \cdot f_m'` of sample ``n``'s feature with the training
        features (row ``n``; the target's own column given by ``targets_self``).
    var_pair : ndarray, shape (n, N)
        Variance of each Gram from random overlaps.
    targets_self : ndarray of int, shape (n,)
        Column of each row's own training fact.
    d, V : int
        Dimension and vocabulary (number of labels).
    kind : {"random", "orthogonal"}
        ``"orthogonal"``: no cross-talk (one-hot unembeddings).
    var_target : ndarray, shape (n,), optional
        Variance of the correct logit's own Gram (default ``var_pair`` at the own column).

    Returns
    -------
    ndarray, shape (n,)
        Probability of a positive margin for each row.

    See Also
    --------
    validation.token_retrieval.token_theory.token_theory
        Predict the early phase's success probabilities from the token-level theory.
    validation.token_retrieval.theory.margin_moments
        Compute leading-order moments of the (normalised) logits after step 3.

    Notes
    -----
    Logit of label ``t_m`` for sample ``n``: :math:`\Gamma_{nm} + \epsilon_{nm}` plus the cross-talk
    :math:`\sum_{m'} (u_{t_m} \cdot \tilde u_{m'}) \Gamma_{n m'}`, Gaussian with variance
    :math:`X_n = (\sum_m \Gamma_{nm}^2 - (\sum_m \Gamma_{nm})^2 / V) / d` for every label (untrained
    labels: cross-talk only); the label's own overlap :math:`\|\tilde u_m\|^2` has variance :math:`2/d`
    instead of :math:`1/d`.  The overlap ``u_{t_n}.u_{t_m}`` is shared by the target logit and
    competitor ``t_m``'s logit, so the competitors are taken Gaussian given the target logit
    (conditional mean and variance), independent of each other; Gauss-Hermite quadrature in the
    target logit (docs, eq. tokret-tl7).

    %(ref_token_level_theory)s

    Examples
    --------
    >>> G = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> p = recall_probability(G, np.zeros((2, 2)), np.array([0, 1]), 10 ** 9, 8)
    >>> [round(float(x), 6) for x in p]
    [1.0, 1.0]
    """
    Gam = np.atleast_2d(np.asarray(Gam, float))
    n, N = Gam.shape
    rows = np.arange(n)
    ed = 0.0 if kind == "orthogonal" else 1.0 / d
    X = ed * np.maximum((Gam ** 2).sum(axis=1) - Gam.sum(axis=1) ** 2 / V, 0.0)
    mu_c = Gam[rows, targets_self]
    vt = var_pair[rows, targets_self] if var_target is None else var_target
    # the label overlap u_{t_n}.u_{t_m} enters the target logit (times Gamma_{nm}) and competitor
    # t_m's logit (times Gamma_{nn}): the competitors are Gaussian given the target logit
    var_c = X + vt + ed * mu_c ** 2
    var_1 = X[:, None] + var_pair + ed * Gam ** 2
    cov = ed * Gam * mu_c[:, None]
    rho = cov / np.maximum(var_c, 1e-300)[:, None]
    var_1c = np.maximum(var_1 - cov * rho, 0.0)
    x = mu_c[:, None] + np.sqrt(var_c)[:, None] * _GH_X[None, :]          # (n, nodes)
    comp = np.ones((n, N), bool)
    comp[rows, targets_self] = False
    lp = np.zeros_like(x)
    sd1 = np.sqrt(var_1c)
    lo = mu_c - 12 * np.sqrt(var_c)
    # trained competitors: only those within reach contribute (Phi = 1 to 1e-19 otherwise)
    reach = comp & ((lo[:, None] - Gam - np.abs(rho) * 12 * np.sqrt(var_c)[:, None])
                    / np.maximum(sd1, 1e-300) < 9)
    # rows in chunks, competitors out of reach masked (their Phi is 1 to 1e-19)
    step = max(1, 2 ** 21 // max(1, N * _GH_X.size))
    for i0 in range(0, n, step):
        sl = slice(i0, min(n, i0 + step))
        r = reach[sl]
        if not r.any():
            continue
        xx = x[sl][:, None, :]                                              # (b, 1, nodes)
        mu_m = Gam[sl][:, :, None] + rho[sl][:, :, None] * (xx - mu_c[sl][:, None, None])
        s1 = sd1[sl][:, :, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            zz = np.where(s1 > 0, (xx - mu_m) / np.where(s1 > 0, s1, 1.0), np.sign(xx - mu_m) * np.inf)
        lnd = special.log_ndtr(np.where(r[:, :, None], zz, np.inf))
        lp[sl] += lnd.sum(axis=1)
    n0 = V - N
    if n0 > 0:
        sd0 = np.sqrt(X)
        with np.errstate(divide="ignore", invalid="ignore"):
            zz = np.where(sd0[:, None] > 0, x / np.where(sd0 > 0, sd0, 1.0)[:, None], np.sign(x) * np.inf)
        lp += n0 * special.log_ndtr(zz)
    return np.clip(np.exp(lp) @ _GH_W, 0.0, 1.0)


def _grams(Hq, zq, Ht, zt, z2, m, d, zeta_q=None, zeta_t=None, kind="random", layer=None, rng=None):
    r"""Grams of features (query rows) with the training features, and the variance of their
    independent random-overlap part.

    ``Hq``, ``Ht``: token-basis weights (sparse), ``zq``, ``zt``: trigger weights.  The
    features' overlaps with the trigger (``zeta_q``, ``zeta_t``: :math:`f^{(E)} \cdot z`) are drawn by the
    caller and enter exactly (they are shared by all the Grams of a row or of a column); the
    remaining token-token overlaps are independent with variance
    :math:`\|f^{(E)}\|^2 \|f'^{(E)}\|^2 / d` (docs, eq. tokret-tl7).  With a fixed random MLP of
    width ``m`` the features are computed from the drawn layer (``layer``: its columns on the
    tokens, then on the trigger direction, as in :func:`_mlp_orthogonal_key`; rows for token ids
    beyond it, fresh Gaussian noise vectors, are drawn from ``rng``), so their Grams have the exact
    finite-width law given the attention outputs, and the random-overlap variance goes through the
    slope of the arc-cosine kernel."""
    G = (Hq @ Ht.T).toarray() + z2 * np.outer(zq, zt)
    eq = np.asarray(Hq.multiply(Hq).sum(axis=1)).ravel()
    et = np.asarray(Ht.multiply(Ht).sum(axis=1)).ravel()
    if zeta_q is not None:
        G = G + np.outer(zeta_q, zt) + np.outer(zq, zeta_t)
    var = np.outer(eq, et) / d if kind == "random" else np.zeros((eq.size, et.size))
    if m is not None:
        n_tok = max(Hq.shape[1], Ht.shape[1])
        if layer.shape[0] - 1 < n_tok:
            extra = rng.standard_normal((n_tok - layer.shape[0] + 1, layer.shape[1]))
            layer = np.vstack([layer[:-1], extra, layer[-1:]])
        Fq = _features(Hq, zq, zeta_q, z2, layer)
        same = Hq is Ht and zq is zt and zeta_q is zeta_t       # training rows against themselves
        Ft = Fq if same else _features(Ht, zt, zeta_t, z2, layer)
        nq, nt = np.sqrt((Fq * Fq).sum(axis=1)), np.sqrt((Ft * Ft).sum(axis=1))
        cosm = np.clip(G / np.maximum(np.outer(nq, nt), 1e-300), -1.0, 1.0)
        slope = np.interp(cosm, _ARC_C, _ARC_SLOPE)
        G = Fq @ Ft.T
        var = var * slope ** 2
    return G, var


def _features(H, a, zeta, z2, layer):
    r"""Features :math:`\sqrt{2/m}\, \mathrm{relu}(A h'_n)` of attention outputs
    :math:`h'_n = h^{(E)}_n + a_n z` (token weights ``H``, trigger weights ``a``) under the layer's
    columns ``layer`` (tokens, then :math:`z/\|z\|`); the overlap :math:`\zeta_n = h^{(E)}_n \cdot z` enters
    through the trigger column, :math:`A h'_n = \sum_k H_{nk} A e_k + (a_n \|z\| + \zeta_n/\|z\|)\, A\hat z`,
    which reproduces every Gram :math:`h'_m \cdot h'_n` up to the :math:`O(1/d)` term
    :math:`\zeta_m \zeta_n / \|z\|^2`."""
    sz = math.sqrt(z2)
    w = a * sz if zeta is None else a * sz + zeta / sz
    n = layer.shape[0] - 1
    Hs = H if H.shape[1] == n else sp.csr_matrix((H.data, H.indices, H.indptr), shape=(H.shape[0], n))
    P = Hs @ layer[:n] + np.outer(w, layer[n])
    return math.sqrt(2.0 / layer.shape[1]) * np.maximum(P, 0.0)


_ARC_C = np.linspace(-1.0, 1.0, 401)
_ARC_KV = np.array([_relu_moments(c) for c in _ARC_C])
_ARC_SLOPE = np.gradient(_ARC_KV[:, 0], _ARC_C)


@fill_doc
@dataclass(frozen=True)
class TokenTheory(Result):
    r"""Success probabilities of the early phase predicted by the token-level theory.

    Parameters
    ----------
    N, d, L, V : int
        Sizes.
    kind, noise : str
        Embeddings and noise tokens.
    m : int or None
        MLP width.
    reps : int
        Monte Carlo draws of the low-dimensional statistics.
    p_retrieval, p_retrieval_se : float
        P(argmax attention on the informative position for all ``N`` sequences) and its
        Monte Carlo standard error.
    p_retrieval_seq, p_retrieval_seq_se : float
        Per-sequence retrieval probability.
    p_recall, p_recall_se : float
        P(all ``N`` facts recalled).
    p_recall_seq, p_recall_seq_se : float
        Per-sample recall probability.
    test_acc, test_acc_se : float
        Fresh-sequence accuracy.
    alpha, A, w2 : float
        Mean attention on the informative position, trigger coefficient and :math:`\|\tilde w\|^2`.

    See Also
    --------
    validation.token_retrieval.token_theory.token_theory
        Predict the early phase's success probabilities from the token-level theory.
    validation.token_retrieval.comparison.TheoryVsSim : Theory against simulation over a grid (``theory_vs_sim``).

    %(ref_token_level_theory)s
    """

    N: int
    d: int
    L: int
    V: int
    kind: str
    noise: str
    m: int | None
    reps: int
    p_retrieval: float
    p_retrieval_se: float
    p_retrieval_seq: float
    p_retrieval_seq_se: float
    p_recall: float
    p_recall_se: float
    p_recall_seq: float
    p_recall_seq_se: float
    test_acc: float
    test_acc_se: float
    alpha: float
    A: float
    w2: float

    _estimate = "p_retrieval"

    def conf_int(self, alpha=0.05):
        """Return the normal-approximation interval of ``p_retrieval`` at level ``1 - alpha``.

        Parameters
        ----------
        alpha : float, optional
            One minus the level (default 0.05).

        Returns
        -------
        tuple of float
            ``(low, high)`` clipped to [0, 1].
        """
        from statistics import NormalDist

        z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
        return (max(0.0, self.p_retrieval - z * self.p_retrieval_se),
                min(1.0, self.p_retrieval + z * self.p_retrieval_se))


def _mean_se(x):
    x = np.asarray(x, float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0


@fill_doc
def token_theory(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None, eta=0.1,
                 beta=10.0, gamma=None, reps=200, rng=0, recall=True,
                 reps_recall_budget=8192):
    r"""Predict the early phase's success probabilities from the token-level theory.

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s %(kind)s %(noise)s %(m)s %(eta)s %(beta)s %(gamma)s
    reps : int
        Monte Carlo draws (>= 2); the standard errors are over these draws.
    rng : None, int, SeedSequence or Generator
        Randomness of the draws.
    recall : bool
        Also predict recall and fresh-sequence accuracy (the retrieval part is cheaper).
    reps_recall_budget : int
        Recall is evaluated on the first ``min(reps, ceil(reps_recall_budget / N))`` draws
        (its cost per draw grows like :math:`N^2`; the per-sample average of a draw is already an
        average over ``N`` samples).

    Returns
    -------
    TokenTheory
        Probabilities with their Monte Carlo standard errors.

    See Also
    --------
    validation.token_retrieval.token_theory.draw_scores
        Draw one task's attention scores from the token-level theory.
    validation.token_retrieval.token_theory.recall_probability
        Probability that each sample's correct logit beats its trained and untrained competitors.
    validation.token_retrieval.theory.success_probs
        Predict P(retrieval), P(recall) and fresh accuracy without fitted parameters.

    Notes
    -----
    Each draw: the counts of one task (exact), the task-level factors (:math:`\|z\|^2`,
    :math:`\|q\|^2`, :math:`\sum_n \kappa_n`, the trigger's overlap with the slot embeddings) and one
    Gaussian per token (:func:`draw_scores`); retrieval of every sequence is decided on the
    draw.  Recall: the attention of each training sequence (softmax of its scores at the
    sharpness :math:`\beta \|q\| / \|\tilde w\|`), the exact token-basis Grams of the attention outputs
    and their random-overlap variance, then :func:`recall_probability` for each sample; the
    samples of one draw are treated as independent given the draw.  Fresh accuracy: the same
    on new sequences of the same facts.

    %(ref_token_level_theory_paper)s

    Examples
    --------
    >>> r = token_theory(16, 256, 4, reps=20, rng=1)
    >>> r.p_retrieval > 0.9, 0.0 <= r.p_recall <= 1.0
    (True, True)
    """
    N, d, L, V, tau, m = _check(N, d, L, V, tau, kind, noise, m)
    eta = check_real("eta", eta, low=0, low_open=True, allow_array=False)
    if gamma is None:
        beta = check_real("beta", beta, low=0, low_open=True, allow_array=False)
    else:
        gamma = check_real("gamma", gamma, low=0, low_open=True, allow_array=False)
    reps = check_int("reps", reps, low=2)
    rng = check_rng(rng)
    # recall (an O(N^2) step per draw) on fewer draws at large N: its per-sample average over
    # N samples fluctuates little between draws
    reps_recall = max(2, min(reps, int(math.ceil(reps_recall_budget / N))))
    ret_all, ret_seq, rec_all, rec_seq, acc, alph, As, w2s = ([] for _ in range(8))
    for _ in range(reps):
        dr = _draw(N, d, L, V, tau, kind, noise, m, rng)
        ok = dr["retrieved"]
        ret_all.append(float(ok.all()))
        ret_seq.append(float(ok.mean()))
        As.append(dr["A"])
        w2s.append(dr["w2"])
        if not recall or len(rec_all) >= reps_recall:
            continue
        a = _attention(dr, L, beta, gamma, eta, N)
        n_tok = dr["scores"].size
        H, zt = _h_matrix(a, dr["tokens"], dr["pos"], n_tok)
        alph.append(float(zt.mean()))
        rand = kind == "random"
        et = np.asarray(H.multiply(H).sum(axis=1)).ravel()
        zeta_t = np.sqrt(et * dr["z2"] / d) * rng.standard_normal(N) if rand else None
        G, var = _grams(H, zt, H, zt, dr["z2"], m, d, zeta_t, zeta_t, kind, layer=dr["layer"], rng=rng)
        var_t = 2.0 * et * et / d if (m is None and rand) else None
        p = recall_probability(G, var, np.arange(N), d, V, kind=kind, var_target=var_t)
        rec_all.append(float(np.exp(np.sum(np.log(np.maximum(p, 1e-300))))))
        rec_seq.append(float(p.mean()))
        # fresh sequences: same facts, new noise tokens and positions, the same token scores
        ftok, fpos, _ = _structure(N, L, V, rng, noise, informative=dr["informative"])
        if noise == "gaussian":
            # fresh Gaussian noise vectors: new ids, scores drawn like unseen tokens
            ids = n_tok + np.arange(N * L).reshape(N, L)
            ftok = np.where(ftok < 0, ids, ftok)
            sc = np.concatenate([dr["scores"], _unseen_scores(dr, N * L, rng, kind, d)])
        else:
            sc = dr["scores"]
        fd = dict(dr, tokens=ftok, pos=fpos, scores=sc)
        af = _attention(fd, L, beta, gamma, eta, N)
        Hf, zf = _h_matrix(af, ftok, fpos, sc.size)
        Ht = sp.csr_matrix((H.data, H.indices, H.indptr), shape=(N, sc.size))
        ef = np.asarray(Hf.multiply(Hf).sum(axis=1)).ravel()
        zeta_f = np.sqrt(ef * dr["z2"] / d) * rng.standard_normal(N) if rand else None
        Gf, varf = _grams(Hf, zf, Ht, zt, dr["z2"], m, d, zeta_f, zeta_t, kind, layer=dr["layer"], rng=rng)
        vtf = (ef * et + (zf * zt) ** 2) / d if (m is None and rand) else None
        pf = recall_probability(Gf, varf, np.arange(N), d, V, kind=kind, var_target=vtf)
        acc.append(float(pf.mean()))
    ra, ra_se = _mean_se(ret_all)
    rs, rs_se = _mean_se(ret_seq)
    if recall:
        ca, ca_se = _mean_se(rec_all)
        cs, cs_se = _mean_se(rec_seq)
        ta, ta_se = _mean_se(acc)
        al = float(np.mean(alph))
    else:
        ca = ca_se = cs = cs_se = ta = ta_se = al = float("nan")
    return TokenTheory(N=N, d=d, L=L, V=V, kind=kind, noise=noise, m=m, reps=reps,
                       p_retrieval=ra, p_retrieval_se=ra_se, p_retrieval_seq=rs, p_retrieval_seq_se=rs_se,
                       p_recall=ca, p_recall_se=ca_se, p_recall_seq=cs, p_recall_seq_se=cs_se,
                       test_acc=ta, test_acc_se=ta_se, alpha=al, A=float(np.mean(As)),
                       w2=float(np.mean(w2s)))


def _unseen_scores(dr, n, rng, kind, d):
    """Scores of ``n`` fresh Gaussian noise vectors (not in the training set)."""
    if kind == "orthogonal":
        return np.zeros(n)
    sd = math.sqrt(max(dr["w2"], 0.0) / d)
    return sd * rng.standard_normal(n)


#: Quantities of :func:`token_moments` (those of :func:`validation.token_retrieval.moments.measure_moments`).


@fill_doc
def token_moments(N, d, L, *, V=None, tau=1.0, kind="random", noise="vocab", m=None, eta=0.1,
                  beta=10.0, gamma=None, reps=64, rng=0):
    r"""Predict the per-task moments of :func:`~validation.token_retrieval.moments.measure_moments`.

    Parameters
    ----------
    %(NdL)s %(V)s %(tau)s %(kind)s %(noise)s %(m)s %(eta)s %(beta)s %(gamma)s
    reps : int
        Draws (>= 2).
    rng : None, int, SeedSequence or Generator
        Randomness.

    Returns
    -------
    dict
        ``{key: {"mean", "stderr"}}`` for the keys of :data:`~validation.token_retrieval.moments.MOMENT_KEYS`: the mean over draws
        of the same per-task statistic as the simulation (scores in units of :math:`\tilde w`, logits in
        units of :math:`\gamma / N` measured from the mean untrained logit) and its Monte Carlo error.

    See Also
    --------
    validation.token_retrieval.moments.measure_moments
        Measure the simulated counterparts of the theory's moments, with standard errors.
    validation.token_retrieval.token_theory.draw_scores
        Draw one task's attention scores from the token-level theory.

    Notes
    -----
    A draw's logit moments use the Grams and variances of :func:`recall_probability`: the
    target (``Gamma_nn``) and trained competitors (``Gamma_nm``) at their drawn means, the
    within-sample variance of competitor logits as the spread of the means plus the mean
    conditional variance (cross-talk, random overlaps, label self-overlap).

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> mo = token_moments(16, 64, 4, reps=4)
    >>> sorted(mo) == sorted(MOMENT_KEYS)
    True
    """
    N, d, L, V, tau, m = _check(N, d, L, V, tau, kind, noise, m)
    reps = check_int("reps", reps, low=2)
    rng = check_rng(rng)
    ed = 0.0 if kind == "orthogonal" else 1.0 / d
    vals = {k: [] for k in MOMENT_KEYS}
    for _ in range(reps):
        dr = _draw(N, d, L, V, tau, kind, noise, m, rng)
        vals["A"].append(dr["A"])
        vals["mu_inf"].append(float(dr["inf_scores"].mean()))
        vals["var_inf"].append(float(dr["inf_scores"].var(ddof=1)) if N > 1 else np.nan)
        vals["mu_noise"].append(float(dr["noise_scores"].mean()))
        vals["var_noise"].append(float(dr["noise_scores"].var(ddof=1)))
        ftok, fpos, _ = _structure(N, L, V, rng, noise, informative=dr["informative"])
        if noise == "gaussian":
            fsc = _unseen_scores(dr, N * (L - 1), rng, kind, d)
        else:
            mask = np.ones((N, L), bool)
            mask[np.arange(N), fpos] = False
            fsc = dr["scores"][ftok[mask]]
        vals["mu_noise_fresh"].append(float(fsc.mean()))
        vals["var_noise_fresh"].append(float(fsc.var(ddof=1)))
        a = _attention(dr, L, beta, gamma, eta, N)
        H, zt = _h_matrix(a, dr["tokens"], dr["pos"], dr["scores"].size)
        vals["alpha"].append(float(zt.mean()))
        et = np.asarray(H.multiply(H).sum(axis=1)).ravel()
        zeta = np.sqrt(et * dr["z2"] / d) * rng.standard_normal(N) if kind == "random" else None
        G, var = _grams(H, zt, H, zt, dr["z2"], m, d, zeta, zeta, kind, layer=dr["layer"], rng=rng)
        rows = np.arange(N)
        X = ed * np.maximum((G ** 2).sum(axis=1) - G.sum(axis=1) ** 2 / V, 0.0)
        vt = 2.0 * et * et / d if (m is None and kind == "random") else np.diag(var)
        gs = G[rows, rows]
        vals["Gs"].append(float(gs.mean()))
        vals["var_c"].append(float(gs.var(ddof=1) + np.mean(X + vt + ed * gs ** 2)) if N > 1 else np.nan)
        vals["var_0"].append(float(X.mean()))
        if N > 1:
            off = ~np.eye(N, dtype=bool)
            Go = G[off].reshape(N, N - 1)
            vo = var[off].reshape(N, N - 1)
            vals["Gc"].append(float(Go.mean()))
            v1 = Go.var(axis=1, ddof=1) if N > 2 else np.zeros(N)
            vals["var_1"].append(float(np.mean(v1 + np.mean(X[:, None] + vo + ed * Go ** 2, axis=1))))
        else:
            vals["Gc"].append(np.nan)
            vals["var_1"].append(np.nan)
    out = {}
    for k, v in vals.items():
        v = np.asarray(v, float)
        v = v[np.isfinite(v)]
        out[k] = {"mean": float(v.mean()) if v.size else float("nan"),
                  "stderr": float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")}
    return out
