"""Theory checks of the factual-recall memories and dynamics
(validation/factual_recall/theory_check.py)."""
import math

import numpy as np
import pytest

from replica import p_of_load
from scipy.special import comb

from validation.factual_recall import theory_check as tc
from validation.factual_recall.task import FactTask, structured_answers
from validation.factual_recall.sequential import _counts


# ----------------------------------------------------------------------------- embeddings

def test_embeddings_sphere_and_gaussian_are_paired():
    G = np.random.default_rng(0).standard_normal((50, 7))
    S, Gs = tc.embeddings("sphere", G), tc.embeddings("gaussian", G)
    # unit rows: float64 normalisation error ~ d * eps = 1.6e-15; 1e-12 leaves margin
    assert np.allclose(np.linalg.norm(S, axis=1), 1.0, atol=1e-12, rtol=0)
    # the same draw: identical directions, Gaussian scaled by 1/sqrt(d) exactly
    assert np.allclose(Gs * math.sqrt(7), G, rtol=1e-14, atol=0)
    assert np.allclose(Gs / np.linalg.norm(Gs, axis=1, keepdims=True), S, atol=1e-12, rtol=0)


def test_embeddings_bad_kind():
    with pytest.raises(ValueError, match="kind"):
        tc.embeddings("cube", np.ones((2, 2)))


@pytest.mark.parametrize("alpha,d", [(0.5, 20), (0.93, 32), (1.1, 8)])
def test_p_of_load_inverts_the_load(alpha, d):
    n = float(p_of_load(alpha, d))
    # Lambert W in double precision: relative error ~1e-15; 1e-12 is safe
    assert n * math.log(n) == pytest.approx(alpha * d * d, rel=1e-12)


# ----------------------------------------------------------------------------- linear trial

def test_linear_trial_stores_n_le_d():
    """N <= d independent sphere inputs: W = U^T (X^T)^+ recalls every fact (score 1 on
    the target against < 1 elsewhere), so training from 0 must reach full recall."""
    r = tc.linear_recall_trial({"d": 16, "n": 12, "seed": 3, "steps": 500})
    assert r["t_all"] is not None and r["final_accuracy"] == 1.0
    assert r["t_99"] == r["t_all"]            # n < 100: 99% is all of them


def test_linear_trial_fails_far_above_capacity():
    """150 outputs in R^6: N ln N = 752 >> d^2 = 36; a rank-6 score matrix cannot make each
    of 150 generic outputs win its own row, so full recall is impossible."""
    r = tc.linear_recall_trial({"d": 6, "n": 150, "seed": 0, "steps": 300})
    assert r["t_all"] is None and r["t_99"] is None and r["steps"] == 300


def test_linear_trial_budget_prefix_property():
    """Constant rate: a run with budget B is the first B steps of a longer run, so the
    success step is the same whenever it lies within the smaller budget."""
    p = {"d": 12, "n": 36, "seed": 1, "lr": 0.5}
    long = tc.linear_recall_trial(dict(p, steps=3000))
    assert long["t_all"] is not None
    short = tc.linear_recall_trial(dict(p, steps=long["t_all"]))
    assert short["t_all"] == long["t_all"]
    shorter = tc.linear_recall_trial(dict(p, steps=long["t_all"] - 1))
    assert shorter["t_all"] is None


def test_linear_trial_t99_before_t_all_above_100_facts():
    r = tc.linear_recall_trial({"d": 24, "n": 110, "seed": 0, "steps": 4000, "lr": 0.5})
    assert r["t_all"] is not None and r["t_99"] <= r["t_all"]


def test_linear_trial_bad_input():
    with pytest.raises(ValueError, match="n"):
        tc.linear_recall_trial({"d": 8, "n": 1, "seed": 0})
    with pytest.raises(ValueError, match="kind"):
        tc.linear_recall_trial({"d": 8, "n": 4, "seed": 0, "outputs": "cube"})


def test_mlp_trial_learns_and_counts():
    r = tc.mlp_recall_trial({"d": 8, "m": 16, "n": 40, "seed": 1, "steps": 2000})
    assert r["t_all"] is not None and r["load"] == pytest.approx(40 / 128, rel=1e-15)


# ----------------------------------------------------------------------------- fits

def test_capacity_fits_recovers_a_step_threshold_and_budgets():
    """Synthetic records: success iff load < 0.8, success step 100 below load 0.6 and
    1000 above.  Budget 100 must put the threshold near 0.6, budget >= 1000 near 0.8:
    with complete separation the profile CI is the gap between the last success and
    the first failure (grid spacing 0.05), so it must contain the true step."""
    recs = []
    for load in np.arange(0.4, 1.21, 0.05):
        for s in range(3):
            t = None if load >= 0.8 - 1e-12 else (100 if load < 0.6 - 1e-12 else 1000)
            recs.append({"load": float(load), "t_all": t, "t_99": t})
    f = tc.capacity_fits(recs, budgets=[100, 1000, 4000])
    lo100, hi100 = f["all"][0]["ci_low"], f["all"][0]["ci_high"]
    assert lo100 <= 0.575 <= hi100 and hi100 - lo100 < 0.2
    for row in f["all"][1:]:
        assert row["ci_low"] <= 0.775 <= row["ci_high"] and row["ci_high"] - row["ci_low"] < 0.2
    assert [r["successes"] for r in f["all"]] == [3 * 4, 3 * 8, 3 * 8]
    assert tc._converged(f["all"]) == 1000


def test_counting_bounds_closed_forms():
    b = tc.counting_bounds(16, 32)
    assert b["params"] == 1024 and b["cover_bound"] == 4.0
    assert b["effective_weights"] == 16 * 32 + 64 and b["cover_effective"] == 2 + 4 / 16


@pytest.mark.parametrize("n", [1, 3, 10, 40])
def test_cover_count_is_half_at_two_patterns_per_weight(n):
    """The reference point used for the bound: Cover's C(2n, n) = 2^(2n-1), i.e. half of
    all dichotomies (exact integer identity)."""
    N = 2 * n
    c = 2 * sum(comb(N - 1, k, exact=True) for k in range(n))
    assert 2 * c == 2 ** N


# ----------------------------------------------------------------------------- escape times

@pytest.mark.parametrize("S,R,D", [(64, 4, 8), (16, 2, 4), (24, 3, 6)])
def test_escape_rates_match_the_gradient_at_the_saddle(S, R, D):
    """|M_v| = |C^T (p - onehot) / B|_v at uniform softmax, computed from an actual batch
    (every fact once, random positions and noise): relation and subject tokens occur
    exactly once per sequence, so the closed form must hold to rounding (1e-12)."""
    task = FactTask(S, R, D, 8, structured_answers(S, R, D))
    fs, fr = task.all_facts()
    tok, y, _, _ = task.sample(0, np.random.default_rng(0), subjects=fs, relations=fr)
    C = _counts(tok, task.vocab, float).toarray()
    B, A = C.shape[0], task.n_answers
    G = np.full((B, A), 1.0 / A)
    G[np.arange(B), y] -= 1.0
    M = C.T @ G / B
    lam = tc.escape_rates(S, R, D)
    norms = np.linalg.norm(M, axis=1)
    assert np.allclose(norms[S:S + R], lam["relation"], rtol=1e-12, atol=0)
    assert np.allclose(norms[:S], lam["subject"], rtol=1e-12, atol=0)


def test_fit_escape_slopes_on_exact_theory_records():
    """Records generated from t = ln(1/init)/ln(1 + lr lambda) + 5: the pooled scaled
    slope is 1 and each per-lr slope equals its prediction exactly (OLS on exact lines;
    1e-9 covers rounding)."""
    S, R, D = 64, 4, 8
    lam = tc.escape_rates(S, R, D).to_dict()
    recs = []
    for lr in (1.0, 2.0, 4.0):
        for init in (1e-4, 1e-3, 1e-2):
            res = {f"t_{st}": math.log(1 / init) / math.log1p(lr * lam[st]) for st in lam}
            recs.append(({"lr": lr, "init": init}, res))
    out = tc.fit_escape_slopes(recs, S, R, D)
    for st in ("relation", "subject"):
        assert out[st]["init_slope_scaled"]["slope"] == pytest.approx(1.0, rel=1e-9)
        for lr, f in out[st]["init_slope"].items():
            assert f["slope"] == pytest.approx(f["theory"], rel=1e-9)


def test_crossing_interpolates():
    st = np.array([0.0, 10.0, 20.0])
    assert tc._crossing(st, np.array([1.0, 0.8, 0.2]), 0.5) == pytest.approx(15.0, rel=1e-14)
    assert tc._crossing(st, np.array([1.0, 0.8, 0.7]), 0.5) is None


def test_escape_trial_relation_first():
    r = tc.escape_trial({"S": 16, "R": 2, "D": 4, "T": 4, "lr": 4.0, "init": 1e-3,
                         "seed": 0, "steps": 300})
    assert r["t_relation"] < r["t_subject"]


# ----------------------------------------------------------------------------- transformer

_TINY = {"d": 8, "H": 1, "d_h": 8, "m": 8, "facts": 4, "D": 4, "T": 4, "seed": 0,
         "steps": 300, "batch": 32, "lr": 0.02, "eval_every": 50}


def test_transformer_budget_trial_learns_tiny_task_and_stops():
    """4 facts, 384 parameters: learnt well within 300 steps; the run stops at the first
    evaluation with >= 99% recalled, which is therefore its last recorded accuracy."""
    r = tc.transformer_budget_trial(_TINY)
    assert r["t_99"] is not None and r["accuracy"][-1] >= 0.99
    assert r["eval_steps"][-1] == r["t_99"] and all(a < 0.99 for a in r["accuracy"][:-1])
    assert r["params"] == 4 * 1 * 8 * 8 + 2 * 8 * 8


def test_transformer_budget_trial_prefix_property():
    """Constant rate: a shorter budget reproduces the longer run's evaluations (same
    training stream, evaluation on its own stream)."""
    long = tc.transformer_budget_trial(dict(_TINY, facts=36, D=8, steps=200, eval_every=50))
    short = tc.transformer_budget_trial(dict(_TINY, facts=36, D=8, steps=100, eval_every=50))
    n = len(short["accuracy"])
    assert short["accuracy"] == long["accuracy"][:n]


def test_transformer_budget_trial_bad_schedule():
    with pytest.raises(ValueError, match="schedule"):
        tc.transformer_budget_trial(dict(_TINY, schedule="linear"))


# ----------------------------------------------------------------------------- stored sweeps

@pytest.mark.parametrize("which", ["linear", "mlp", "escape", "transformer"])
def test_stored_sweeps_cover_their_plan(which):
    """The stored JSONL files hold an ok record for every trial of the current plan (so
    quick mode reads complete data); a plan edit without regenerating fails here."""
    from validation.engine import read_store

    recs = tc.run_plan(which, compute=False)
    name = {"linear": "linear_memory.jsonl", "mlp": "mlp_memory.jsonl",
            "escape": "escape_times.jsonl", "transformer": "transformer_budget.jsonl"}[which]
    n_plan = len(read_store(tc.STORE_DIR / name, warn=False).ok)
    assert len(recs) > 0 and len(recs) <= n_plan
    if which == "linear":
        expected = sum(len(tc.linear_params(g)) for g in tc.LINEAR_PLAN["groups"])
    elif which == "mlp":
        expected = sum(len(tc.mlp_params(d, m)) for d, m in tc.MLP_PLAN["dm"])
        expected += sum(len(tc.mlp_params(d, m, long=True)) for d, m in tc.MLP_PLAN["long"]["dm"])
    elif which == "escape":
        expected = len(tc.escape_params())
    else:
        expected = len(tc.transformer_params())
    assert len(recs) == expected


def test_run_plan_and_cli_refuse_bad_input(capsys):
    with pytest.raises(ValueError, match="which"):
        tc.run_plan("quadratic", compute=False)
    assert tc.main(["linear", "--workers", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        tc.main(["quadratic"])
    assert exc.value.code == 2 and capsys.readouterr().err.count("\n") == 1


def test_examples_of_the_module():
    """Every Examples section of theory_check runs and gives what it shows."""
    import doctest

    res = doctest.testmod(tc, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0


def test_run_plan_compute_path_resumes_from_a_full_store(tmp_path):
    """The full-mode path (run_sweep into a store) on a copy of the stored escape sweep:
    every trial is found in the store, nothing is recomputed, and the records equal the
    read-only path's."""
    import shutil

    shutil.copy(tc.STORE_DIR / "escape_times.jsonl", tmp_path / "escape_times.jsonl")
    got = tc.run_plan("escape", store_dir=tmp_path, progress=False)
    ref = tc.run_plan("escape", compute=False)
    assert got == ref
