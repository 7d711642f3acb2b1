"""Scores, analytic gradients (vs central finite differences in float64), Hebbian rule."""
import math

import numpy as np
import pytest

from validation.linear_memory.data import make_op, make_dp
from validation.linear_memory.models import (scores, xent_and_grad, hebbian_W, lowrank_W,
                                             lowrank_grads, init_lowrank, lowrank_m)


def _scores_loop(W, f):
    p = f.p
    Z = np.empty((p, p))
    for mu in range(p):
        for rho in range(p):
            u = f.U[rho] if f.kind == "op" else f.U[mu, rho]
            Z[mu, rho] = u @ W @ f.E[mu]
    return Z


def _xent_loop(Z, scale):
    # independent cross-entropy: log-sum-exp written out per row
    p = Z.shape[0]
    tot = 0.0
    for mu in range(p):
        z = scale * Z[mu]
        m = z.max()
        tot += m + math.log(np.exp(z - m).sum()) - z[mu]
    return tot / p


@pytest.mark.parametrize("kind", ["op", "dp"])
def test_scores_match_definition(kind):
    f = (make_op if kind == "op" else make_dp)(6, 4, rng=1, dtype=np.float64)
    W = np.random.default_rng(2).standard_normal((4, 4))
    assert np.allclose(scores(W, f), _scores_loop(W, f), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["op", "dp"])
@pytest.mark.parametrize("scale", [1.0, 0.3])
def test_full_rank_gradient_finite_differences(kind, scale):
    f = (make_op if kind == "op" else make_dp)(7, 5, rng=3, dtype=np.float64)
    W = np.random.default_rng(4).standard_normal((5, 5)) * 0.4
    loss, dW, corr = xent_and_grad(W, f, scale=scale)
    assert math.isclose(loss, _xent_loop(_scores_loop(W, f), scale), rel_tol=1e-12)
    h = 1e-6
    fd = np.empty_like(W)
    for i in range(5):
        for j in range(5):
            Wp, Wm = W.copy(), W.copy()
            Wp[i, j] += h
            Wm[i, j] -= h
            fd[i, j] = (_xent_loop(_scores_loop(Wp, f), scale) - _xent_loop(_scores_loop(Wm, f), scale)) / (2 * h)
    assert np.allclose(dW, fd, rtol=1e-6, atol=1e-9)


def test_lowrank_gradient_finite_differences():
    f = make_op(8, 6, rng=5, dtype=np.float64)
    Q, R = init_lowrank(6, 0.5, rng=6, dtype=np.float64)
    assert Q.shape == (6, 3)
    scale = 0.5

    def loss_of(Q, R):
        W = Q @ R.T / math.sqrt(6 * 3)
        return _xent_loop(_scores_loop(W, f), scale)

    _, dW, _ = xent_and_grad(lowrank_W(Q, R), f, scale=scale)
    dQ, dR = lowrank_grads(Q, R, dW)
    h = 1e-6
    for P, G in ((Q, dQ), (R, dR)):
        fd = np.empty_like(P)
        for idx in np.ndindex(*P.shape):
            old = P[idx]
            P[idx] = old + h
            lp = loss_of(Q, R)
            P[idx] = old - h
            lm = loss_of(Q, R)
            P[idx] = old
            fd[idx] = (lp - lm) / (2 * h)
        assert np.allclose(G, fd, rtol=1e-6, atol=1e-9)


def test_float32_gradient_close_to_float64():
    f64 = make_dp(30, 10, rng=7, dtype=np.float64)
    f32 = f64.astype(np.float32)
    W = np.random.default_rng(8).standard_normal((10, 10))
    l64, g64, _ = xent_and_grad(W, f64, scale=0.1)
    l32, g32, _ = xent_and_grad(W.astype(np.float32), f32, scale=0.1)
    assert g32.dtype == np.float32
    assert abs(l32 - l64) < 1e-4 * abs(l64)
    assert np.abs(g32 - g64).max() < 1e-4 * np.abs(g64).max()


def test_hebbian_is_sum_of_outer_products():
    f = make_dp(5, 3, rng=9, dtype=np.float64)
    ref = sum(np.outer(f.U[i, i], f.E[i]) for i in range(5))
    assert np.allclose(hebbian_W(f), ref)


def test_lowrank_m_and_bad_kappa():
    assert lowrank_m(30, 0.25) == 8 and lowrank_m(30, 1.0) == 30 and lowrank_m(3, 0.01) == 1
    for k in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(ValueError, match="^kappa must"):
            lowrank_m(10, k)
    with pytest.raises(ValueError, match="^d must"):
        init_lowrank(0, 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_xent_overwrite_matches_shared_softmax_xent(dtype):
    from validation.losses import xent_overwrite
    from validation.losses import softmax_xent

    rng = np.random.default_rng(10)
    Z = (rng.standard_normal((40, 40)) * 5).astype(dtype)
    Z[3, 7] = Z[3].max() + 1                      # row 3: target 3 beaten
    Z[5, 5] = Z[5].max()                          # row 5: target ties the max -> not recalled
    t = np.arange(40)
    l1, g1, c1 = softmax_xent(Z, t)
    l2, X, r, c2 = xent_overwrite(Z.copy(), t)
    g2 = r[:, None] * X - np.eye(40, dtype=dtype) / 40
    tol = 1e-12 if dtype == np.float64 else 1e-5
    assert abs(l1 - l2) <= tol * abs(l1) and np.allclose(g1, g2, atol=tol) and g2.dtype == dtype
    assert np.array_equal(c1, c2) and not c2[3] and not c2[5]


def test_sampled_init_spectrum_equals_the_direct_svd():
    """The m x m eigenvalue route of sample_init_spectra against the SVD of the d x d matrix itself."""
    from validation.linear_memory.mechanism import sample_init_spectra

    d, k = 40, 0.5
    s = sample_init_spectra(d, {k: 2}, rng=[7, 3])[0]
    rng = np.random.default_rng([7, 3])               # the same stream: the first matrix
    m = int(round(k * d))
    Q, R = rng.standard_normal((d, m)), rng.standard_normal((d, m))
    sv2 = np.linalg.svd(Q @ R.T / np.sqrt(d * m), compute_uv=False)[:m] ** 2
    # two decompositions of the same matrix in float64: relative rounding ~1e-13 for eigenvalues O(1)
    np.testing.assert_allclose(np.sort(s.eigenvalues), np.sort(sv2), rtol=1e-10, atol=1e-12)
    assert s.m == m and s.n_matrices == 2 and s.law_m2 > 0 and math.isfinite(s.sample_m2_stderr)
