"""Leading-order theory of the token-retrieval early phase
(validation/token_retrieval/theory.py) against exact hand computations,
independent closed forms and Monte Carlo simulation of the actual code."""
import math

import numpy as np
import pytest

from validation.token_retrieval.moments import MOMENT_KEYS, measure_moments
from validation.token_retrieval import theory as th
from validation.token_retrieval.early_phase import early_phase, evaluate
from validation.token_retrieval.task import make_embeddings, sample_sequences

# quantity -> (function, key, squared?) of the theory
_PRED = {"A": ("s", "A", False), "mu_inf": ("s", "mu_inf", False), "var_inf": ("s", "var_inf", False),
         "mu_noise": ("s", "mu_noise", False), "var_noise": ("s", "var_noise", False),
         "mu_noise_fresh": ("f", "mu_noise", False), "var_noise_fresh": ("f", "var_noise", False),
         "alpha": ("m", "alpha", False), "Gs": ("m", "Gs", False), "Gc": ("m", "Gc", False),
         "var_0": ("m", "sd_0", True), "var_1": ("m", "sd_1", True), "var_c": ("m", "sd_c", True)}


def _predicted(N, d, L, kind, tau=1.0, m=None):
    kw = dict(kind=kind, tau=tau, m=m)
    src = {"s": th.score_moments(N, d, L, **kw), "f": th.score_moments(N, d, L, fresh=True, **kw),
           "m": th.margin_moments(N, d, L, **kw)}
    out = {}
    for q, (w, k, sq) in _PRED.items():
        v = float(src[w][k])
        out[q] = v * v if sq else v
    return out


def test_hand_case_one_hot():
    # One one-hot sequence of length 2 (V = 2): by hand (tests/test_tr_model.py) the early phase
    # gives w~ = (c/4)(e0 + z - e1) with c = 1 - sigmoid(3 eta / 4) -> 1/2 as eta -> 0, so
    # A = 1/8, informative score 1/4, noise score -1/8, all variances 0.  The theory is leading
    # order in eta: relative error O(eta) = 1e-6 here; tolerance 1e-5 (absolute, values ~0.1).
    eta = 1e-6
    rng = np.random.default_rng(0)
    emb = make_embeddings(2, 6, kind="orthogonal", rng=rng)
    b = sample_sequences(emb, 1, 2, rng=rng)
    ep = early_phase(emb, b, eta=eta, beta=10.0)
    wt = ep.W1 @ emb.q / (emb.q @ emb.q) / (ep.gamma * eta / (2 * 1))
    s = b.X[0] @ wt
    mo = th.score_moments(1, 6, 2, V=2, kind="orthogonal")
    assert abs(mo["A"] - emb.z_trig @ wt) < 1e-5 and abs(mo["A"] - 0.125) < 1e-15
    assert abs(mo["mu_inf"] - s[b.pos[0]]) < 1e-5
    assert abs(mo["mu_noise"] - s[1 - b.pos[0]]) < 1e-5
    assert mo["var_inf"] == 0.0 and mo["var_noise"] == 0.0
    # margin: l_t - l_o = (gamma / N) ||h2||^2 with h2 = a (e0 + z) + (1 - a) e1 (V1 part O(eta))
    ev = evaluate(ep.W1, ep.V2, emb, b)
    a = float(ev["attn_inf"][0])
    mm = th.margin_moments(1, 6, 2, V=2, kind="orthogonal", alpha=a)
    lg = ev["logits"][0] / ep.gamma
    t = b.targets[0]
    assert abs(mm["Gs"] - (lg[t] - lg[1 - t])) < 1e-5
    assert abs(mm["Gs"] - (2 * a * a + (1 - a) ** 2)) < 1e-15
    assert mm["sd_c"] == 0.0 and mm["sd_0"] == 0.0


@pytest.mark.parametrize("N,L", [(8, 4), (32, 16), (64, 64)])
def test_orthonormal_is_the_zero_interference_limit(N, L):
    # the same formulas: kind="orthogonal" equals kind="random" with every 1/d term -> 0;
    # at d = 1e12 the 1/d terms are <= 1e-12 relative (float64 rounding ~1e-15)
    V = 4 * N
    big = 10 ** 12
    for fresh in (False, True):
        o = th.score_moments(N, V + 2, L, kind="orthogonal", fresh=fresh)
        r = th.score_moments(N, big, L, kind="random", fresh=fresh)
        for k in ("A", "mu_inf", "var_inf", "mu_noise", "var_noise"):
            assert abs(o[k] - r[k]) <= 1e-9 * max(1.0, abs(o[k])), k
    mo = th.margin_moments(N, V + 2, L, kind="orthogonal", alpha=1.0)
    # perfect attention, orthonormal: self Gram 1 + tau^2, cross tau^2, no noise at all
    assert mo["Gs"] == 2.0 and mo["Gc"] == 1.0 and mo["sd_0"] == 0.0 and mo["sd_1"] == 0.0


@pytest.mark.parametrize("N,d,L,kind,seeds,tau,m", [(16, 256, 4, "random", 8, 1.0, None),
                                                    (8, 64, 4, "random", 12, 1.0, None),
                                                    (16, 128, 4, "orthogonal", 8, 1.0, None),
                                                    pytest.param(16, 256, 4, "random", 8, 1.5, None,
                                                                 marks=pytest.mark.slow),
                                                    pytest.param(16, 256, 4, "random", 8, 0.7, None,
                                                                 marks=pytest.mark.slow),
                                                    pytest.param(16, 256, 4, "random", 8, 1.0, 256,
                                                                 marks=pytest.mark.slow)])
def test_moments_against_simulation(N, d, L, kind, seeds, tau, m):
    # Every derived mean and variance against the simulated one (measure_moments: per-task values,
    # stderr = sd / sqrt(seeds)).  Tolerance: 5 stderr (the stderr is itself estimated from
    # >= 8 tasks: P(|t_7| > 5) = 1.6e-3 per quantity if the theory were exact) plus the
    # neglected terms: O(1 - alpha) residual-attention terms in the
    # logits (the margins model the off-informative attention crudely), bounded by
    # 4 (1 + tau^2)(1 - alpha_sim) for Gs, Gc and by 4 (1 - alpha_sim) for alpha itself; the
    # orthonormal logit variances are exactly 0 in the theory and O((1 - alpha)^2) in simulation.
    sim = measure_moments(N, d, L, seeds=seeds, seed=1, kind=kind, trig_scale=tau, m=m)
    pred = _predicted(N, d, L, kind, tau, m)
    one_minus_alpha = 1.0 - sim["alpha"]["mean"]
    for q in MOMENT_KEYS:
        s = sim[q]
        tol = 5 * s["stderr"]
        if q == "alpha":
            tol += 4 * one_minus_alpha
        if q in ("Gs", "Gc"):
            tol += 4 * (1 + tau ** 2) * one_minus_alpha
        if kind == "orthogonal" and q in ("var_0", "var_1", "var_c"):
            tol += 4 * one_minus_alpha ** 2
        assert abs(pred[q] - s["mean"]) <= tol, (q, pred[q], s["mean"], s["stderr"])


def test_p_beat_against_monte_carlo():
    # Gaussian extreme-value step against a direct simulation: 200000 draws, binomial stderr
    # <= 0.0012; tolerance 5 stderr
    rng = np.random.default_rng(3)
    mu_c, sd_c, groups = 1.0, 0.5, [(0.2, 0.4, 7), (0.0, 0.3, 20)]
    n = 200_000
    c = mu_c + sd_c * rng.standard_normal(n)
    ok = np.ones(n, bool)
    for mu, sd, cnt in groups:
        ok &= c > (mu + sd * rng.standard_normal((n, cnt))).max(axis=1)
    p = float(th._p_beat(mu_c, sd_c, groups)[0])
    assert abs(p - ok.mean()) < 5 * math.sqrt(p * (1 - p) / n)


def test_relu_kernel_closed_forms():
    # arc-cosine kernel: k(0) = 1/pi, k(1) = 1; 4 Var(relu X relu Y) at c = 1 is
    # 4 (E relu^4 - (E relu^2)^2) = 4 (3/2 - 1/4) = 5 (Gaussian moments); quadrature error < 1e-10
    k0, _ = th._relu_moments(0.0)
    k1, v1 = th._relu_moments(1.0)
    assert abs(k0 - 1 / math.pi) < 1e-15 and abs(k1 - 1.0) < 1e-15 and abs(v1 - 5.0) < 1e-10
    # c = 0: relu X, relu Y independent: 4 (E relu^2)^2 - k^2 = 4/4 - 1/pi^2
    _, v0 = th._relu_moments(0.0)
    assert abs(v0 - (1.0 - 1.0 / math.pi ** 2)) < 1e-10


def test_counting_capacity_exact():
    # Cover's count 2 sum_{i<D} C(M-1, i) against Python's exact integers
    for d, k, N, V in [(2, 3, 5, 4), (3, 3, 40, 7), (1, 1, 9, 3)]:
        D, M = d * k, N * (V - 1)
        exact = 2 ** M if D >= M else 2 * sum(math.comb(M - 1, i) for i in range(D))
        assert abs(th.counting_capacity(d, k, N, V) - math.log(exact)) < 1e-9 * math.log(exact)


def test_counting_bound_properties():
    # at most 1, decreasing in N, equal to 1 where the capacity exceeds the assignments
    vals = [th.counting_bound(N, 8, 4, 4 * N) for N in (2, 8, 32, 128, 512)]
    assert vals[0] == 1.0 and all(a >= b for a, b in zip(vals, vals[1:])) and vals[-1] < 1e-6
    nb = th.counting_boundary(8, 4)
    assert th.counting_bound(int(nb), 8, 4, 4 * int(nb)) < 0.5 <= th.counting_bound(int(nb) - 1, 8, 4,
                                                                                 4 * (int(nb) - 1))


def test_boundaries_are_crossings():
    # the predicted boundary lies between grid values whose predicted success brackets 1/2
    nc = th.retrieval_boundary(128, 16)
    Ns = np.unique(np.round(2 ** np.arange(1, 11.01, 0.5)).astype(int))
    i = np.searchsorted(Ns, nc)
    lo, hi = Ns[i - 1], Ns[i]
    p = lambda N: th.success_probs(int(N), 128, 16, V=4 * int(N))["p_retrieval"]
    assert p(lo) < 0.5 <= p(hi)
    nm = th.recall_boundary(256, 4)
    i = np.searchsorted(Ns, nm)
    q = lambda N: th.success_probs(int(N), 256, 4, V=4 * int(N))["p_recall"]
    assert q(Ns[i - 1]) >= 0.5 > q(Ns[i])


def test_probabilities_and_limits():
    p = th.success_probs(64, 256, 4)
    for k in ("p_retrieval_seq", "p_retrieval", "p_recall_seq", "p_recall", "test_acc", "alpha"):
        assert 0.0 <= p[k] <= 1.0
    assert p["p_retrieval"] <= p["p_retrieval_seq"] and p["p_recall"] <= p["p_recall_seq"]
    # more samples make the trigger signal coherent: per-sequence retrieval improves with N
    ps = [th.success_probs(N, 128, 16)["p_retrieval_seq"] for N in (4, 16, 64)]
    assert ps[0] < ps[1] < ps[2]
    # the MLP lowers the recall margin relative to its noise (arc-cosine kernel offset)
    assert th.recall_boundary(256, 4, m=256) < th.recall_boundary(256, 4)
    # argmax attention does not depend on the step-size convention
    a = th.success_probs(32, 128, 8, beta=3.0)["p_retrieval"]
    b = th.success_probs(32, 128, 8, gamma=1e4)["p_retrieval"]
    assert a == b


def test_boundary_combination_ordering():
    x = th.boundary_combination(np.array([8, 64]), 128, 16)
    assert x.shape == (2,) and x[0] < x[1]


@pytest.mark.parametrize("kw,name", [(dict(N=0, d=8, L=3), "N"), (dict(N=4, d=0, L=3), "d"),
                                     (dict(N=4, d=8, L=1), "L"), (dict(N=4, d=8, L=3, V=3), "V"),
                                     (dict(N=4, d=8, L=3, tau=0.0), "tau"),
                                     (dict(N=4, d=8, L=3, kind="x"), "kind"),
                                     (dict(N=4, d=8, L=3, noise="x"), "noise"),
                                     (dict(N=4, d=8, L=3, m=0), "m"),
                                     (dict(N=4, d=8, L=3, kind="orthogonal"), "d")])
def test_bad_inputs(kw, name):
    N, d, L = kw.pop("N"), kw.pop("d"), kw.pop("L")
    with pytest.raises(ValueError, match=f"^{name} must"):
        th.score_moments(N, d, L, **kw)
    with pytest.raises(ValueError, match=f"^{name} must"):
        th.success_probs(N, d, L, **kw)


def test_bad_step_sizes():
    with pytest.raises(ValueError, match="^eta must"):
        th.success_probs(4, 16, 3, eta=0.0)
    with pytest.raises(ValueError, match="^beta must"):
        th.attention_weight(4, 16, 3, beta=-1.0)
    with pytest.raises(ValueError, match="^V must"):
        th.counting_bound(8, 4, 3, 4)
