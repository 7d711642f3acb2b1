"""Model gradients (finite differences) and the three-step early phase on a
case computed by hand."""
import math

import numpy as np
import pytest

from validation.token_retrieval.early_phase import early_phase, evaluate, train_gd
from validation.token_retrieval.model import forward, loss_and_grads, make_mlp, margins
from validation.token_retrieval.task import Batch, make_embeddings, sample_sequences


def _fd(f, P, eps=1e-6):
    G = np.zeros_like(P)
    for idx in np.ndindex(P.shape):
        old = P[idx]
        P[idx] = old + eps
        fp = f()
        P[idx] = old - eps
        fm = f()
        P[idx] = old
        G[idx] = (fp - fm) / (2 * eps)
    return G


@pytest.mark.parametrize("m", [None, 7])
def test_gradients_match_finite_differences(m):
    rng = np.random.default_rng(0)
    d = 5
    emb = make_embeddings(6, d, rng=rng)
    b = sample_sequences(emb, 4, 3, rng=rng)
    A = None if m is None else make_mlp(m, d, rng=rng)
    W = rng.standard_normal((d, d))
    Wv = rng.standard_normal((d, d if m is None else m))
    loss, gW, gV, _ = loss_and_grads(W, Wv, emb, b, A)
    f = lambda: loss_and_grads(W, Wv, emb, b, A, grad=False)[0]
    # central differences, eps = 1e-6: truncation eps^2 |f(3)|/6 ~ 1e-13, rounding
    # ~ 2^-52 |loss| / eps ~ 1e-9 (loss = O(1)); atol 1e-8 is ~10x the larger one.
    # (A ReLU pre-activation within eps of its kink has probability ~1e-6 here.)
    np.testing.assert_allclose(gW, _fd(f, W), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gV, _fd(f, Wv), rtol=1e-6, atol=1e-8)


def test_forward_against_loop():
    # attention/logits recomputed sample by sample with plain formulas
    rng = np.random.default_rng(1)
    emb = make_embeddings(5, 4, rng=rng)
    b = sample_sequences(emb, 3, 4, rng=rng)
    W, Wv = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    c = forward(W, Wv, emb, b.X)
    for n in range(3):
        s = np.array([b.X[n, i] @ W @ emb.q for i in range(4)])
        a = np.exp(s) / np.exp(s).sum()
        h = sum(a[i] * b.X[n, i] for i in range(4))
        np.testing.assert_allclose(c["logits"][n], [emb.U[k] @ Wv @ h for k in range(5)])


def _hand_case(eta, gamma):
    """One-hot embeddings, V = 2, d = 4, L = 2, N = 1: informative token y = 0
    at position 0, noise token j = 1, target t = perm[0]."""
    emb = make_embeddings(2, 4, kind="orthogonal", rng=0)
    E, z = emb.E, emb.z_trig
    X = np.stack([E[0] + z, E[1]])[None]
    t = int(emb.perm[0])
    b = Batch(X=X, tokens=np.array([[0, 1]]), pos=np.array([0]), informative=np.array([0]),
              targets=np.array([t]))
    return emb, b, t


def test_three_steps_by_hand():
    eta, gamma = 0.3, 5.0
    emb, b, t = _hand_case(eta, gamma)
    e0, e1, z, q = emb.E[0], emb.E[1], emb.z_trig, emb.q
    ut, uo = emb.U[t], emb.U[1 - t]
    sig = lambda x: 1.0 / (1.0 + math.exp(-x))
    # step 1: uniform attention, h = (e0 + z + e1)/2, p = (1/2, 1/2)
    V1 = eta / 4 * np.outer(ut - uo, e0 + z + e1)
    # step 2: logits +-3 eta/8, c = 1 - p_t; W1 = gamma eta c / 8 (e0 + z - e1) q^T
    c = 1 - sig(3 * eta / 4)
    W1 = gamma * eta * c / 8 * np.outer(e0 + z - e1, q)
    # step 3: scores gamma eta c/4 and -gamma eta c/8; a_inf = sig(3 gamma eta c/8)
    ai = sig(3 * gamma * eta * c / 8)
    h2 = ai * (e0 + z) + (1 - ai) * e1
    lt = eta / 4 * (1 + ai)
    c2 = 1 - sig(2 * lt)
    V2 = V1 + gamma * c2 * np.outer(ut - uo, h2)
    ep = early_phase(emb, b, eta=eta, gamma=gamma)
    np.testing.assert_allclose(ep.V1, V1, atol=1e-14)
    np.testing.assert_allclose(ep.W1, W1, atol=1e-14)
    np.testing.assert_allclose(ep.V2, V2, atol=1e-13)
    r = evaluate(ep.W1, ep.V2, emb, b)
    assert r["all"] and abs(r["attn_inf"][0] - ai) < 1e-14


def test_beta_normalisation():
    emb, b, _ = _hand_case(0.3, 1.0)
    ep = early_phase(emb, b, eta=0.3, beta=7.0)
    assert abs(np.linalg.norm(ep.W1) - 7.0) < 1e-12
    ep1 = early_phase(emb, b, eta=0.3, gamma=ep.gamma)
    np.testing.assert_allclose(ep1.V2, ep.V2)


def test_early_phase_is_rank_one_in_q():
    rng = np.random.default_rng(2)
    emb = make_embeddings(40, 12, rng=rng)
    b = sample_sequences(emb, 10, 5, rng=rng)
    ep = early_phase(emb, b, eta=0.1, beta=3.0)
    assert np.linalg.matrix_rank(ep.W1, tol=1e-10) == 1
    w = ep.W1 @ emb.q / (emb.q @ emb.q)
    np.testing.assert_allclose(ep.W1, np.outer(w, emb.q), atol=1e-12)


def test_margins_sign_matches_recall():
    from validation.losses import recalled
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((50, 6))
    t = rng.integers(0, 6, 50)
    assert np.array_equal(margins(logits, t) > 0, recalled(logits, t))


def test_train_gd_decreases_loss():
    rng = np.random.default_rng(4)
    emb = make_embeddings(24, 16, rng=rng)
    b = sample_sequences(emb, 6, 3, rng=rng)
    W, Wv, hist = train_gd(emb, b, steps=60, lr=0.05, log_every=10)
    # from zero all logits vanish: the first loss is exactly log V
    assert abs(hist[0][1] - math.log(24)) < 1e-12 and hist[0][2] == 0.0
    assert hist[-1][1] < hist[0][1] - 0.5
    assert hist[-1][2] == 1.0


def test_bad_step_sizes():
    emb, b, _ = _hand_case(0.3, 1.0)
    with pytest.raises(ValueError, match="exactly one"):
        early_phase(emb, b, eta=0.1)
    with pytest.raises(ValueError, match="eta"):
        early_phase(emb, b, eta=0.0, beta=1.0)
    with pytest.raises(ValueError, match="m must"):
        make_mlp(0, 3)


def test_shape_errors_name_the_argument():
    emb = make_embeddings(6, 4, rng=0)
    b = sample_sequences(emb, 3, 2, rng=1)
    Z = np.zeros((4, 4))
    with pytest.raises(ValueError, match=r"^W must have shape \(d, d\) = \(4, 4\), got \(3, 3\)"):
        forward(np.zeros((3, 3)), Z, emb, b.X)
    with pytest.raises(ValueError, match=r"^Wv must have shape .*\(4, 7\).*got \(4, 4\)"):
        loss_and_grads(Z, Z, emb, b, A=np.zeros((7, 4)))
    with pytest.raises(ValueError, match=r"^A must have shape"):
        forward(Z, Z, emb, b.X, A=np.zeros((7, 3)))
    with pytest.raises(ValueError, match=r"^X must have shape"):
        forward(Z, Z, emb, b.X[..., :3])
    with pytest.raises(ValueError, match="^emb must be an Embeddings"):
        sample_sequences("emb", 2, 3)


@pytest.mark.parametrize("kw,match", [(dict(warmup=1.0), "^warmup must be"),
                                      (dict(warmup=-0.1), "^warmup must be"),
                                      (dict(log_every=-1), "^log_every must be"),
                                      (dict(steps=0), "^steps must be"),
                                      (dict(optimizer="sgd"), "^optimizer must be")])
def test_train_gd_bad_inputs(kw, match):
    emb, b, _ = _hand_case(0.3, 1.0)
    with pytest.raises(ValueError, match=match):
        train_gd(emb, b, **kw)
