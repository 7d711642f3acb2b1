"""Statistical limits of token retrieval (validation/token_retrieval/lower_bound.py) against
closed forms and direct Monte Carlo simulation of the learners and predictors they describe."""
import math

import numpy as np
import pytest
from scipy import special, stats

from validation.token_retrieval import lower_bound as lb
from validation.token_retrieval.task import make_embeddings, sample_sequences


def _gauss_sequences(rng, n, d, L, z):
    """n sequences with Gaussian noise tokens; the informative slot is a fresh Gaussian + z."""
    X = rng.standard_normal((n, L, d)) / math.sqrt(d)
    pos = rng.integers(0, L, size=n)
    X[np.arange(n), pos] += z
    return X, pos


def test_best_of_closed_forms():
    # L = 2: P(a + g0 > g1) = Phi(a / sqrt 2) exactly; quadrature error < 1e-10 at 64 nodes
    a = np.array([-2.0, 0.0, 0.7, 3.0])
    assert np.allclose(lb.best_of(a, 2), special.ndtr(a / math.sqrt(2)), atol=1e-10)
    # a = 0: by symmetry the informative one is the largest of L with probability 1/L; the
    # integrand Phi^(L-1) is smooth but not polynomial: 64-node Gauss-Hermite to 1e-4 relative
    for L in (3, 10, 64):
        assert abs(float(lb.best_of(0.0, L)) * L - 1.0) < 1e-4


@pytest.mark.parametrize("N,d,L", [(1, 16, 8), (20, 16, 8), (5, 32, 64)])
def test_oracle_against_simulation(N, d, L):
    # the argmax x.z rule on N fresh Gaussian-noise sequences, 4000 tasks: |MC - exact| < 4 SE
    rng = np.random.default_rng(N * 1000 + d + L)
    T = 4000
    ok = np.empty(T, bool)
    for t in range(T):
        z = rng.standard_normal(d) / math.sqrt(d)
        X, pos = _gauss_sequences(rng, N, d, L, z)
        ok[t] = np.all(np.argmax(X @ z, axis=1) == pos)
    p = float(lb.oracle_retrieval(N, d, L))
    se = math.sqrt(max(p * (1 - p), 1e-4) / T)
    assert abs(ok.mean() - p) < 4 * se


@pytest.mark.parametrize("N,d,L,K", [(4, 32, 16, 1), (16, 32, 16, 16), (2, 64, 32, 3)])
def test_mean_pool_learner_against_simulation(N, d, L, K):
    # the optimal mean-pooled learner (key = mean of the pooled training sequences) simulated:
    # 3000 tasks, |MC - exact| < 4 SE; a worse mean-pooled learner (only half the sequences)
    # does not beat the optimum by more than 4 SE
    rng = np.random.default_rng(7 * N + d + L + K)
    T = 3000
    best, half = np.empty(T, bool), np.empty(T, bool)
    for t in range(T):
        z = rng.standard_normal(d) / math.sqrt(d)
        X, _ = _gauss_sequences(rng, N, d, L, z)
        h = X.mean(axis=1)
        Xf, pf = _gauss_sequences(rng, K, d, L, z)
        for key, out in ((h.sum(0), best), (h[: max(1, N // 2)].sum(0), half)):
            out[t] = np.all(np.argmax(Xf @ key, axis=1) == pf)
    p = lb.mean_pool_retrieval(N, d, L, fresh=K)
    se = math.sqrt(max(p * (1 - p), 1e-4) / T)
    assert abs(best.mean() - p) < 4 * se
    assert half.mean() < p + 4 * se


@pytest.mark.parametrize("N,d,L", [(1, 64, 16), (3, 64, 16), (1, 128, 64)])
def test_norm_learner_bound_holds(N, d, L):
    # simulate the norm learner (largest-norm slot of each training sequence, mean as the key)
    # on one fresh sequence; the MC failure rate (1500 tasks) stays below the bound + 4 SE
    rng = np.random.default_rng(N + d + L)
    T = 1500
    fail = np.empty(T, bool)
    for t in range(T):
        z = rng.standard_normal(d) / math.sqrt(d)
        X, _ = _gauss_sequences(rng, N, d, L, z)
        nrm = (X ** 2).sum(axis=2)
        w = X[np.arange(N), nrm.argmax(axis=1)].mean(axis=0)
        Xf, pf = _gauss_sequences(rng, 1, d, L, z)
        fail[t] = np.argmax(Xf[0] @ w) != pf[0]
    bound = lb.norm_learner_bound(N, d, L)
    assert bound < 0.5                      # the bound is informative here
    assert fail.mean() <= bound + 4 * math.sqrt(max(bound * (1 - bound), 1e-4) / T)


@pytest.mark.parametrize("N,d,L", [(31, 32, 16), (60, 64, 64)])
def test_storage_construction_bound_holds(N, d, L):
    # the explicit predictor on the actual task (random embeddings, vocabulary noise): key z,
    # hard attention, readout W_v mapping each attended vector to its label's unembedding
    # (least squares = interpolation for N <= d - 1); 300 tasks, failure rate <= bound + 4 SE
    V = 4 * N
    T = 300
    fails = 0
    for t in range(T):
        rng = np.random.default_rng([N, d, L, t])
        emb = make_embeddings(V, d, rng=rng)
        b = sample_sequences(emb, N, L, rng=rng)
        s = b.X @ emb.z_trig
        att = s.argmax(axis=1)
        H = b.X[np.arange(N), att]
        Wv = np.linalg.lstsq(H, emb.U[b.targets], rcond=None)[0].T        # Wv h_n = u_{t_n}
        logits = (H @ Wv.T) @ emb.U.T
        fails += not np.all(logits.argmax(axis=1) == b.targets)
    bound = lb.storage_construction_bound(N, d, L, V)
    assert bound < 0.5
    assert fails / T <= bound + 4 * math.sqrt(max(bound * (1 - bound), 1e-3) / T)


def test_storage_construction_bound_closed_form():
    # the two union terms by hand at d = 16 (1-d integrals over chi2_d / d by an independent
    # quadrature, scipy.integrate.quad; tolerance 1e-6 relative: 32-node Gauss-Legendre in u)
    from scipy.integrate import quad
    d, N, L, V = 16, 5, 8, 20
    f = lambda s, c: stats.chi2.pdf(s * d, d) * d * special.ndtr(-math.sqrt(s) * c)
    p_att = quad(f, 0, np.inf, args=(math.sqrt(d / 2),))[0]
    p_lab = quad(f, 0, np.inf, args=(math.sqrt(d),))[0]
    want = min(1.0, N * (L - 1) * p_att + N * (V - 1) * p_lab)
    assert abs(lb.storage_construction_bound(N, d, L, V) - want) < 1e-6 * want


def test_fano_by_hand_and_linear_in_L():
    d, L, tau, c, err = 64, 32, 0.1, 0.9, 0.5
    c2 = 2 * c * c - 1
    need = (1 - err) * d * c2 * c2 / 2 - math.log(2)
    per = min(d * tau ** 2 / 2, math.log1p(math.expm1(d * tau ** 2) / L))
    assert abs(lb.fano_samples(d, L, tau=tau) - need / per) < 1e-9 * need / per
    # weak trigger (d tau^2 = 0.64): the mixture term rules and N_min grows like L
    r = lb.fano_samples(d, 512, tau=tau) / lb.fano_samples(d, 64, tau=tau)
    assert 7.5 < r < 8.5
    # strong trigger (d tau^2 = 64): the complete-data term rules, L does not enter
    assert lb.fano_samples(64, 4, tau=1.0) == lb.fano_samples(64, 4096, tau=1.0)


def test_boundaries_and_L_dependence():
    # the storage interval [d - 1, N_counting] and the oracle limit depend on L only weakly;
    # the mean-pooled learner's threshold grows with L (multiplicative in N, d, L)
    b4, b64 = lb.lower_bound_boundaries(32, 4), lb.lower_bound_boundaries(32, 64)
    assert b4["N_storage"] == b64["N_storage"] == 31.0
    assert b64["N_counting"] / b4["N_counting"] < 1.05
    m = [lb.lower_bound_boundaries(64, L)["N_mean_pool"] for L in (16, 64)]
    assert m[1] > 4 * m[0]


@pytest.mark.parametrize("call", [lambda: lb.storage_construction_bound(40, 32, 4, 160),
                                  lambda: lb.fano_samples(32, 4, cos=0.5),
                                  lambda: lb.oracle_retrieval(1, 32, 1),
                                  lambda: lb.norm_learner_bound(1, 4, 8)])
def test_bad_inputs(call):
    with pytest.raises(ValueError):
        call()
