"""Analytic gradients of the factual-recall models vs central finite differences (float64)."""
import numpy as np
import pytest

from validation.losses import softmax_xent
from validation.factual_recall.memories import (init_mlp_memory, linear_memory_loss,
                                                mlp_memory_loss, sphere_embeddings)
from validation.factual_recall.sequential import _counts, linear_attention_loss
from validation.factual_recall.task import make_task
from validation.factual_recall.transformer import OneLayerTransformer


def fd_check(f, params, grads, rng, n_probe=12, h=1e-6, rtol=1e-6, atol=1e-8):
    """Compare ``grads`` with central differences of ``f(params)`` on random entries
    of every parameter plus one random direction per parameter.

    Tolerance: the central difference has truncation error ``h^2 |f_3| / 6 ~ 1e-12``
    (``f_3`` the third derivative) and rounding error ``~ eps |f| / h ~ 5e-10`` for
    losses of order 1 in float64, so ``atol = 1e-8`` is 20x above the noise floor
    while still catching a 1e-5 relative error in a gradient entry of size 1e-2 (a
    bound ``rtol * max(1, |g|)`` would not)."""
    for p, g in zip(params, grads):
        assert g.shape == p.shape and g.dtype == np.float64
        if p.size == 0:
            continue
        idx = rng.choice(p.size, size=min(n_probe, p.size), replace=False)
        directions = [np.eye(1, p.size, i).reshape(p.shape) for i in idx]
        directions.append(rng.standard_normal(p.shape))
        for u in directions:
            old = p.copy()
            p += h * u
            fp = f()
            p[...] = old - h * u
            fm = f()
            p[...] = old
            num = (fp - fm) / (2 * h)
            ana = float(np.sum(g * u))
            assert abs(num - ana) <= rtol * abs(ana) + atol, (num, ana)


def test_linear_memory_gradient():
    rng = np.random.default_rng(0)
    X, U = sphere_embeddings(7, 5, rng), sphere_embeddings(9, 5, rng)
    y = rng.integers(0, 9, 7)
    W = rng.standard_normal((5, 5))
    _, dW, _ = linear_memory_loss(W, X, U, y)
    fd_check(lambda: linear_memory_loss(W, X, U, y, grad=False)[0], [W], [dW], rng)


def test_mlp_memory_gradient():
    rng = np.random.default_rng(1)
    X, U = sphere_embeddings(11, 6, rng), sphere_embeddings(3, 6, rng)
    y = rng.integers(0, 3, 11)
    params = init_mlp_memory(6, 8, rng)
    params[1] += 0.3 * rng.standard_normal(8)  # non-zero biases
    _, grads, _ = mlp_memory_loss(params, X, U, y)
    fd_check(lambda: mlp_memory_loss(params, X, U, y, grad=False)[0], params, grads, rng)


@pytest.mark.parametrize("variant", ["ours", "paper"])
@pytest.mark.parametrize("m", [0, 7])
def test_transformer_gradient(m, variant):
    rng = np.random.default_rng(2)
    task = make_task(5, 3, 2, T=6, rng=rng)
    net = OneLayerTransformer(6, 3, 2, m, vocab=task.vocab, n_answers=task.n_answers,
                              rng=rng, dtype=np.float64, variant=variant)
    for p in net.params:  # larger weights: non-trivial softmax and ReLU pattern
        p *= 2.0
    if m:
        net.params[5] += 0.3 * rng.standard_normal(m)
    tok, y, _, _ = task.sample(9, rng)
    _, grads, _ = net.loss(tok, y)
    fd_check(lambda: net.loss(tok, y, grad=False)[0], net.params, grads, rng)


@pytest.mark.parametrize("variant", ["ours", "paper"])
def test_transformer_forward_matches_naive_loops(variant):
    """Independent oracle for the batched forward: per-sample, per-head loops (the paper's
    variant has no EOS residual: the attention output alone enters the MLP)."""
    rng = np.random.default_rng(3)
    task = make_task(4, 2, 3, T=5, rng=rng)
    net = OneLayerTransformer(5, 2, 3, 4, vocab=task.vocab, n_answers=task.n_answers,
                              rng=rng, dtype=np.float64, variant=variant)
    net.params[5] += 0.5
    tok, _, _, _ = task.sample(3, rng)
    Q, K, V, O, W1, b, W2 = net.params
    logits, _ = net.forward(tok)
    for i in range(3):
        X = net.E[tok[i]]
        z = X[-1].copy() if variant == "ours" else np.zeros(5)
        for h in range(2):
            s = np.array([X[t] @ K[h] @ Q[h].T @ X[-1] for t in range(5)]) / np.sqrt(3)
            a = np.exp(s - s.max())
            a /= a.sum()
            z += O[h].T @ (V[h].T @ (a @ X))
        yv = z + W2.T @ np.maximum(W1.T @ z + b, 0)
        np.testing.assert_allclose(logits[i], net.U @ yv, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dense", [False, True])
def test_linear_attention_gradient(dense):
    rng = np.random.default_rng(4)
    task = make_task(6, 2, 3, T=5, rng=rng)
    tok, y, _, _ = task.sample(10, rng)
    C = _counts(tok, task.vocab, np.float64)
    if dense:
        C = C.toarray()
    k = rng.standard_normal(task.vocab)
    W = rng.standard_normal((task.n_answers, task.vocab))
    _, grads, _ = linear_attention_loss(k, W, C, y)
    fd_check(lambda: linear_attention_loss(k, W, C, y, grad=False)[0], [k, W], grads, rng)


def test_linear_attention_logits_match_definition():
    """logits = sum_t k[x_t] W[:, x_t] computed token by token."""
    rng = np.random.default_rng(5)
    task = make_task(6, 2, 3, T=5, rng=rng)
    tok, y, _, _ = task.sample(4, rng)
    k = rng.standard_normal(task.vocab)
    W = rng.standard_normal((task.n_answers, task.vocab))
    _, _, logits = linear_attention_loss(k, W, _counts(tok, task.vocab, np.float64), y, grad=False)
    ref = np.stack([sum(k[v] * W[:, v] for v in row) for row in tok])
    np.testing.assert_allclose(logits, ref, rtol=1e-12)


def test_truncated_normal_constant_matches_scipy():
    # the rescaling constant is the standard deviation of N(0, 1) truncated to [-2, 2]
    from scipy.stats import truncnorm
    from validation.factual_recall.transformer import _TRUNC2_STD
    assert abs(truncnorm(-2, 2).std() - _TRUNC2_STD) < 1e-15


def test_paper_variant_initialisation_statistics():
    """Variances of the paper's initialisation against their definitions (Monte Carlo).

    Q, K, V: variance 1/d_h; O: 1/d; W1: 1/d, W2: 1/m, both bounded by 2 std / 0.8796
    (normal truncated at two standard deviations).  With n entries of a variance-v
    law the sample variance has standard error v sqrt((kurtosis - 1) / n) <= v sqrt(2 / n)
    (kurtosis 3 for the normal, 2.37 for the truncated one); 5 standard errors."""
    d, H, d_h, m = 64, 8, 8, 256
    net = OneLayerTransformer(d, H, d_h, m, vocab=3, n_answers=2, rng=5, dtype=np.float64,
                              variant="paper")
    Q, K, V, O, W1, b, W2 = net.params
    for w, v in ((Q, 1 / d_h), (K, 1 / d_h), (V, 1 / d_h), (O, 1 / d), (W1, 1 / d), (W2, 1 / m)):
        se = v * np.sqrt(2 / w.size)
        assert abs(w.var() - v) < 5 * se, (w.shape, w.var(), v)
    for w, v in ((W1, 1 / d), (W2, 1 / m)):
        assert np.abs(w).max() <= 2 * np.sqrt(v) / 0.87962566103423978 * (1 + 1e-12)
    assert not b.any()
    # the default variant keeps its own initialisation: Q entries of variance 1/d
    ours = OneLayerTransformer(d, H, d_h, m, vocab=3, n_answers=2, rng=5, dtype=np.float64)
    assert abs(ours.params[0].var() - 1 / d) < 5 * np.sqrt(2 / Q.size) / d


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant must be one of"):
        OneLayerTransformer(4, 1, 4, 4, vocab=3, n_answers=2, variant="flax")
