"""Exact-recall detection, training success, logistic threshold fit, Hebbian scores."""
import math

import numpy as np
import pytest

from validation.linear_memory.capacity import capacity_trial, load_grid, trial_params
from validation.logistic import fit_threshold
from validation.linear_memory.data import make_op, make_dp, Facts
from validation.linear_memory.models import hebbian_W, scores
from validation.linear_memory.train import train, get_config
from validation.losses import recalled


def _all_recalled_loop(W, f):
    # independent check: python loop, strict inequality
    for mu in range(f.p):
        cand = f.U if f.kind == "op" else f.U[mu]
        s = [float(cand[r] @ W @ f.E[mu]) for r in range(f.p)]
        if any(s[r] >= s[mu] for r in range(f.p) if r != mu):
            return False
    return True


def test_exact_recall_detection_ties_and_one_failure():
    d = 4
    E = np.eye(d)
    f = Facts("op", E, np.eye(d))
    assert recalled(scores(np.eye(d), f), f.targets).all()
    W = np.eye(d)
    W[2, 2] = 0.0                                  # fact 2: all scores 0 -> tie -> not recalled
    r = recalled(scores(W, f), f.targets)
    assert list(r) == [True, True, False, True] and not _all_recalled_loop(W, f)
    W[2, 2] = -1e-12
    assert not recalled(scores(W, f), f.targets)[2]


@pytest.mark.parametrize("model, kind", [("full", "op"), ("full", "dp"), ("lowrank", "op")])
def test_training_recalls_easy_instance(model, kind):
    f = (make_op if kind == "op" else make_dp)(20, 12, rng=1, dtype=np.float32)   # load 0.42
    res = train(f, parametrization=model, kappa=0.5, rng=2, steps=400)
    assert res.success and res.accuracy == 1.0 and res.steps < 400
    assert _all_recalled_loop(res.W.astype(np.float64), f.astype(np.float64))


def test_training_overload_fails_and_flags_agree():
    # p = 3 d^2 facts (load ~ 19) cannot all be recalled by a d x d matrix
    f = make_op(48, 4, rng=3, dtype=np.float32)
    res = train(f, rng=4, steps=50)
    assert not res.success and res.steps == 50
    assert res.accuracy == pytest.approx(np.mean(recalled(scores(res.W, f), f.targets)))
    assert not _all_recalled_loop(res.W.astype(np.float64), f.astype(np.float64))


def test_paper_preset_stops_at_999_permille():
    cfg = get_config("paper")
    assert cfg.lr == 1e-2 and cfg.steps == 512 and cfg.stop_accuracy == 0.999
    with pytest.raises(ValueError, match="preset"):
        get_config("fast")
    with pytest.raises(ValueError, match="^lr must"):
        get_config("default", lr=-1)


def test_capacity_trial_deterministic_and_paired():
    prm = trial_params("op", 10, [0.5], [3], steps=300)[0]
    a, b = capacity_trial(prm), capacity_trial(dict(prm))
    assert {k: a[k] for k in ("p", "success", "steps", "loss")} == {k: b[k] for k in ("p", "success", "steps", "loss")}
    h = capacity_trial({**prm, "model": "hebbian"})
    assert h["steps"] == 0 and h["p"] == a["p"]
    with pytest.raises(ValueError, match="model"):
        capacity_trial({**prm, "model": "xx"})


def _synthetic(a0, w, loads, reps, rng):
    x = np.repeat(loads, reps)
    y = rng.random(x.size) < 1 / (1 + np.exp((x - a0) / w))
    return x, y


def test_logistic_fit_large_sample_recovers_threshold():
    rng = np.random.default_rng(0)
    x, y = _synthetic(0.93, 0.03, np.linspace(0.8, 1.06, 14), 60, rng)
    f = fit_threshold(x, y)
    se = (f.ci_high - f.ci_low) / (2 * 1.96)         # CI half-width in standard errors
    assert abs(f.threshold - 0.93) < 5 * se
    assert f.ci_low < f.threshold < f.ci_high and f.ci_high - f.ci_low < 0.03
    assert f.width == pytest.approx(0.03, rel=0.35)
    assert sum(c[2] for c in f.counts) == x.size


def test_logistic_fit_coverage():
    # 95% profile-likelihood intervals: coverage over 40 synthetic experiments of
    # the size used in practice (7 loads x 6 seeds); P(coverage <= 30/40 | 0.95) < 1e-4
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(40):
        x, y = _synthetic(0.9, 0.05, 0.9 * np.linspace(0.7, 1.3, 7), 6, rng)
        f = fit_threshold(x, y)
        hits += f.ci_low <= 0.9 <= f.ci_high
    assert hits > 30


def test_logistic_fit_unbracketed_and_separated():
    f = fit_threshold([0.5, 0.6, 0.7], [True, True, True])
    assert math.isnan(f.threshold) and f.ci_high == math.inf and f.ci_low > 0.6
    g = fit_threshold([0.5, 0.6, 0.7, 0.8], [True, True, False, False])   # complete separation
    assert 0.6 <= g.threshold <= 0.7 and g.ci_low < 0.65 < g.ci_high
    with pytest.raises(ValueError, match="x and success"):
        fit_threshold([0.5], [True, False])


def test_load_grid():
    assert load_grid(1.0, n=3, rel=0.5) == [0.5, 1.0, 1.5]
    g = load_grid(0.9, n=7, rel=0.3, d=20)
    assert g == sorted(set(g)) and all(0.5 < a < 1.3 for a in g)


def test_hebbian_scores_match_gaussian_model():
    # Exact moments of W_H with shared candidates (derived independently of the
    # code: see replica.hebbian): competitor variance d^2 (p + 2 + 2d), correct
    # mean d^2 and variance d^2 (p + 3 + 4d).  Normalised by the competitor std:
    # correct ~ (m, s^2) of replica.hebbian_score_moments(exact=True), competitor
    # variance 1.  Tolerances: 5 Monte Carlo standard errors.
    from replica.hebbian import hebbian_score_moments

    d, p, n = 12, 30, 400
    gen = np.random.default_rng(5)
    corr, comp = [], []
    mask = ~np.eye(p, dtype=bool)
    for _ in range(n):
        f = make_op(p, d, rng=gen)
        Z = scores(hebbian_W(f), f)
        corr.append(np.diag(Z))
        comp.append(Z[mask])
    corr, comp = np.concatenate(corr), np.concatenate(comp)
    sc = d * math.sqrt(p + 2 + 2 * d)                # exact competitor std
    m, s = hebbian_score_moments(d, p, exact=True)
    c = corr / sc
    # scores of one instance are dependent: stderr from the spread of per-instance means
    cm = c.reshape(n, p).mean(1)
    assert abs(c.mean() - m) < 5 * cm.std(ddof=1) / math.sqrt(n)
    cv = ((c - m) ** 2).reshape(n, p).mean(1)
    assert abs(cv.mean() - s * s) < 5 * cv.std(ddof=1) / math.sqrt(n)
    qv = (comp / sc).reshape(n, -1) ** 2
    qm = qv.mean(1)
    assert abs(qm.mean() - 1) < 5 * qm.std(ddof=1) / math.sqrt(n)
    # and the approximate independent-Gaussian model is within 10% of the exact one here
    m0, s0 = hebbian_score_moments(d, p)
    assert abs(m0 / m - 1) < 0.1 and abs(s0 / s - 1) < 0.1


def test_mechanism_spectra_of_random_matrices():
    # Gaussian d x d / sqrt(d): quarter circle (scale fitted: ~1); Q R^T / sqrt(dm)
    # at init: mp_product(kappa).  Finite-d KS distances are O(1/d) here.
    from validation.linear_memory.mechanism import (spectrum_vs_quarter_circle,
                                                    init_spectrum_vs_mp_product)
    from validation.linear_memory.models import init_lowrank, lowrank_W

    rng = np.random.default_rng(12)
    d = 200
    sq = spectrum_vs_quarter_circle(rng.standard_normal((d, d)), 1.0)
    assert sq["ks"] < 0.05 and abs(sq["scale"] - 1) < 0.05
    Q, R = init_lowrank(d, 0.5, rng=rng, dtype=np.float64)
    si = init_spectrum_vs_mp_product(lowrank_W(Q, R), 0.5)
    assert si["ks"] < 0.08 and abs(si["mean"] - 2.0) < 0.1      # mean of nonzero part = 1/kappa


def test_normalized_scores_summary_consistent_with_recall():
    from validation.linear_memory.mechanism import normalized_scores, score_summary

    f = make_op(60, 20, rng=13)
    W = hebbian_W(f)
    c, q = normalized_scores(W, f)
    s = score_summary(c, q)
    assert q.shape == (60, 59)
    assert np.allclose(q.std(axis=1, ddof=1), 1.0)
    assert s["recall"] == pytest.approx(np.mean(recalled(scores(W, f), f.targets)))
    assert s["sqrt_2lnp"] == pytest.approx(math.sqrt(2 * math.log(60)))


def test_theory_fixed_point_and_lowrank():
    # the self-consistent load solves alpha = alpha_c_finite(p(alpha)): re-evaluate
    # alpha_c_finite at its p with an independent seed (tolerance: 5 combined stderrs;
    # p is an integer, so add the change of alpha_c over one unit of p)
    from replica.finite_capacity import alpha_c_finite
    from replica.load import p_from_load
    from validation.linear_memory.registry import prediction
    from validation.linear_memory.theory import full_rank_threshold, lowrank_threshold

    est = full_rank_threshold(20)
    p = p_from_load(est.value, 20)
    chk = alpha_c_finite(p, samples=20_000, rng=99)
    step = abs(alpha_c_finite(p + 1, samples=20_000, rng=99).value - chk.value)
    assert abs(chk.value - est.value) < 5 * math.hypot(chk.stderr, est.stderr) + step
    assert 0.5 < est.value < 1.2
    assert lowrank_threshold(1.0) == pytest.approx(0.5)
    pr = prediction("lowrank", 30, 0.25)
    assert pr["kappa_eff"] == pytest.approx(8 / 30)
    with pytest.raises(ValueError, match="kappa"):
        lowrank_threshold(0.0)


def test_measure_capacity_on_a_runner_replays_the_stored_trials(tmp_path):
    """A study's runner (params -> engine records) replaces run_sweep: the replay reads the same records."""
    from validation.engine import read_store, trial_key
    from validation.linear_memory.capacity import capacity_trial, measure_capacity

    store = tmp_path / "s.jsonl"
    kw = dict(seeds=2, alphas=[0.3, 3.0], steps=200)
    ref = measure_capacity("op", 8, store=store, executor="inprocess", progress=False, **kw)
    ok = read_store(store, warn=False).ok
    asked = []

    def runner(params):
        asked.extend(params)
        return [ok.get(trial_key(q, capacity_trial)) for q in params]

    rep = measure_capacity("op", 8, runner=runner, **kw)
    assert len(asked) == ref.trials == 4 and rep.counts == ref.counts and rep.threshold == ref.threshold
    with pytest.raises(LookupError, match="not in the store"):
        measure_capacity("op", 8, runner=lambda params: [None] * len(params), **kw)


@pytest.mark.parametrize("kw, msg", [
    ({"method": "exact", "steps": 10}, "steps: training options have no meaning with method 'exact'"),
    ({"bogus": 1}, "overrides must be training options"),
    ({"kappa": 1.5}, "kappa must be"),
    ({"extend": 11}, "extend must be an integer in \\[0, 10\\]"),
    ({"alphas": [0.5, -1.0]}, "alphas must be"),
    ({"workers": 0}, "workers must be"),
])
def test_measure_capacity_checks_each_argument_once_before_any_trial(kw, msg):
    from validation.linear_memory.capacity import measure_capacity

    def runner(params):                       # never reached: every check comes first
        raise AssertionError("a trial was asked for")

    with pytest.raises(ValueError, match=msg):
        measure_capacity("op", 8, runner=runner, **kw)
