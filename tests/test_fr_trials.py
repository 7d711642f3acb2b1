"""Trials, theory adaptors and fits of the factual-recall memories and dynamics
(validation/factual_recall/{trials,theory,fits}.py) and the studies that plan them
(validation/studies/factual_recall_memory.py)."""
import math

import numpy as np
import pytest

from replica import p_of_load
from scipy.special import comb

from validation.factual_recall import fits as ft
from validation.factual_recall import theory as th
from validation.factual_recall import trials as tr
from validation.studies import factual_recall_memory as fm
from validation.studies import get_study
from validation.factual_recall.task import FactTask, structured_answers
from validation.factual_recall.sequential import _counts


# ----------------------------------------------------------------------------- embeddings

def test_embeddings_sphere_and_gaussian_are_paired():
    G = np.random.default_rng(0).standard_normal((50, 7))
    S, Gs = tr.embeddings("sphere", G), tr.embeddings("gaussian", G)
    # unit rows: float64 normalisation error ~ d * eps = 1.6e-15; 1e-12 leaves margin
    assert np.allclose(np.linalg.norm(S, axis=1), 1.0, atol=1e-12, rtol=0)
    # the same draw: identical directions, Gaussian scaled by 1/sqrt(d) exactly
    assert np.allclose(Gs * math.sqrt(7), G, rtol=1e-14, atol=0)
    assert np.allclose(Gs / np.linalg.norm(Gs, axis=1, keepdims=True), S, atol=1e-12, rtol=0)


def test_embeddings_bad_kind():
    with pytest.raises(ValueError, match="kind"):
        tr.embeddings("cube", np.ones((2, 2)))


@pytest.mark.parametrize("alpha,d", [(0.5, 20), (0.93, 32), (1.1, 8)])
def test_p_of_load_inverts_the_load(alpha, d):
    n = float(p_of_load(alpha, d))
    # Lambert W in double precision: relative error ~1e-15; 1e-12 is safe
    assert n * math.log(n) == pytest.approx(alpha * d * d, rel=1e-12)


# ----------------------------------------------------------------------------- linear trial

def test_linear_trial_stores_n_le_d():
    """N <= d independent sphere inputs: W = U^T (X^T)^+ recalls every fact (score 1 on
    the target against < 1 elsewhere), so training from 0 must reach full recall."""
    r = tr.linear_recall_trial({"d": 16, "n": 12, "seed": 3, "steps": 500})
    assert r["t_all"] is not None and r["final_accuracy"] == 1.0
    assert r["t_99"] == r["t_all"]            # n < 100: 99% is all of them


def test_linear_trial_fails_far_above_capacity():
    """150 outputs in R^6: N ln N = 752 >> d^2 = 36; a rank-6 score matrix cannot make each
    of 150 generic outputs win its own row, so full recall is impossible."""
    r = tr.linear_recall_trial({"d": 6, "n": 150, "seed": 0, "steps": 300})
    assert r["t_all"] is None and r["t_99"] is None and r["steps"] == 300


def test_linear_trial_budget_prefix_property():
    """Constant rate: a run with budget B is the first B steps of a longer run, so the
    success step is the same whenever it lies within the smaller budget."""
    p = {"d": 12, "n": 36, "seed": 1, "lr": 0.5}
    long = tr.linear_recall_trial(dict(p, steps=3000))
    assert long["t_all"] is not None
    short = tr.linear_recall_trial(dict(p, steps=long["t_all"]))
    assert short["t_all"] == long["t_all"]
    shorter = tr.linear_recall_trial(dict(p, steps=long["t_all"] - 1))
    assert shorter["t_all"] is None


def test_linear_trial_t99_before_t_all_above_100_facts():
    r = tr.linear_recall_trial({"d": 24, "n": 110, "seed": 0, "steps": 4000, "lr": 0.5})
    assert r["t_all"] is not None and r["t_99"] <= r["t_all"]


def test_linear_trial_bad_input():
    with pytest.raises(ValueError, match="n"):
        tr.linear_recall_trial({"d": 8, "n": 1, "seed": 0})
    with pytest.raises(ValueError, match="kind"):
        tr.linear_recall_trial({"d": 8, "n": 4, "seed": 0, "outputs": "cube"})


def test_mlp_trial_learns_and_counts():
    r = tr.mlp_recall_trial({"d": 8, "m": 16, "n": 40, "seed": 1, "steps": 2000})
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
    f = ft.capacity_fits(recs, budgets=[100, 1000, 4000])
    lo100, hi100 = f.all[0].ci_low, f.all[0].ci_high
    assert lo100 <= 0.575 <= hi100 and hi100 - lo100 < 0.2
    for row in f.all[1:]:
        assert row.ci_low <= 0.775 <= row.ci_high and row.ci_high - row.ci_low < 0.2
    assert [r.successes for r in f.all] == [3 * 4, 3 * 8, 3 * 8]
    assert ft.converged_budget(f.all) == 1000
    # report.json keys: the criteria are "all" and "99", the rows keep ci_low / ci_high
    assert set(f.to_dict()) == {"all", "99"} and f["99"] is f.p99
    assert set(f.all[0].to_dict()) == {"budget", "threshold", "ci_low", "ci_high", "successes",
                                       "trials"}


def test_counting_bounds_closed_forms():
    b = th.counting_bounds(16, 32)
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
    lam = th.escape_rates(S, R, D)
    norms = np.linalg.norm(M, axis=1)
    assert np.allclose(norms[S:S + R], lam["relation"], rtol=1e-12, atol=0)
    assert np.allclose(norms[:S], lam["subject"], rtol=1e-12, atol=0)


def test_fit_escape_slopes_on_exact_theory_records():
    """Records generated from t = ln(1/init)/ln(1 + lr lambda) + 5: the pooled scaled
    slope is 1 and each per-lr slope equals its prediction exactly (OLS on exact lines;
    1e-9 covers rounding)."""
    S, R, D = 64, 4, 8
    lam = th.escape_rates(S, R, D).to_dict()
    recs = []
    for lr in (1.0, 2.0, 4.0):
        for init in (1e-4, 1e-3, 1e-2):
            res = {f"t_{st}": math.log(1 / init) / math.log1p(lr * lam[st]) for st in lam}
            recs.append(({"lr": lr, "init": init}, res))
    out = ft.fit_escape_slopes(recs, S, R, D)
    for st in ("relation", "subject"):
        e = getattr(out, st)
        assert e.init_slope_scaled.slope == pytest.approx(1.0, rel=1e-9)
        assert e.init_slope_scaled.agrees()
        for lr, f in e.init_slope.items():
            assert f.slope == pytest.approx(f.theory, rel=1e-9)
        # report.json keys of a fit: the interval as "ci", no level
        assert set(e.init_slope_scaled.to_dict()) == {"slope", "intercept", "stderr", "ci", "n",
                                                      "theory"}


def test_crossing_interpolates():
    st = np.array([0.0, 10.0, 20.0])
    assert tr._crossing(st, np.array([1.0, 0.8, 0.2]), 0.5) == pytest.approx(15.0, rel=1e-14)
    assert tr._crossing(st, np.array([1.0, 0.8, 0.7]), 0.5) is None


def test_escape_trial_relation_first():
    r = tr.escape_trial({"S": 16, "R": 2, "D": 4, "T": 4, "lr": 4.0, "init": 1e-3,
                         "seed": 0, "steps": 300})
    assert r["t_relation"] < r["t_subject"]


# ----------------------------------------------------------------------------- transformer

_TINY = {"d": 8, "H": 1, "d_h": 8, "m": 8, "facts": 4, "D": 4, "T": 4, "seed": 0,
         "steps": 300, "batch": 32, "lr": 0.02, "eval_every": 50}


def test_transformer_budget_trial_learns_tiny_task_and_stops():
    """4 facts, 384 parameters: learnt well within 300 steps; the run stops at the first
    evaluation with >= 99% recalled, which is therefore its last recorded accuracy."""
    r = tr.transformer_budget_trial(_TINY)
    assert r["t_99"] is not None and r["accuracy"][-1] >= 0.99
    assert r["eval_steps"][-1] == r["t_99"] and all(a < 0.99 for a in r["accuracy"][:-1])
    assert r["params"] == 4 * 1 * 8 * 8 + 2 * 8 * 8


def test_transformer_budget_trial_prefix_property():
    """Constant rate: a shorter budget reproduces the longer run's evaluations (same
    training stream, evaluation on its own stream)."""
    long = tr.transformer_budget_trial(dict(_TINY, facts=36, D=8, steps=200, eval_every=50))
    short = tr.transformer_budget_trial(dict(_TINY, facts=36, D=8, steps=100, eval_every=50))
    n = len(short["accuracy"])
    assert short["accuracy"] == long["accuracy"][:n]


def test_transformer_budget_trial_variants():
    """No ``variant`` key is our model (the committed records' keys); ``"paper"`` changes the model
    only: same parameter count and facts, another training curve; a bad name is refused."""
    base = dict(_TINY, steps=100)
    ours, explicit = tr.transformer_budget_trial(base), tr.transformer_budget_trial(dict(base, variant="ours"))
    paper = tr.transformer_budget_trial(dict(base, variant="paper"))
    assert ours["accuracy"] == explicit["accuracy"]
    assert paper["params"] == ours["params"] and paper["facts"] == ours["facts"]
    assert paper["accuracy"] != ours["accuracy"]
    with pytest.raises(ValueError, match="variant"):
        tr.transformer_budget_trial(dict(base, variant="flax"))


def test_transformer_budget_trial_bad_schedule():
    with pytest.raises(ValueError, match="schedule"):
        tr.transformer_budget_trial(dict(_TINY, schedule="linear"))


# ----------------------------------------------------------------------------- studies

@pytest.mark.parametrize("name", ["factual_recall.linear_memory", "factual_recall.mlp_memory",
                                  "factual_recall.escape_times", "factual_recall.transformer_budget"])
def test_committed_stores_hold_exactly_their_plan(name):
    """The committed store holds an ok record for every trial of the study's plan and nothing
    else (so the report's quick mode reads complete data); a plan edit without recomputing
    fails here."""
    from validation.engine import read_store, trial_key

    s = get_study(name)
    planned = {trial_key(p, s.trial) for p in s.plan()}
    ok = read_store(s.committed_store(), warn=False).ok
    assert set(ok) == planned and len(planned) == len(s.plan())


def test_examples_of_the_modules():
    """Every Examples section of trials, theory and fits runs and gives what it shows."""
    import doctest

    for mod in (tr, th, ft):
        res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert res.failed == 0 and res.attempted > 0, mod.__name__


def test_compute_path_resumes_from_the_committed_store(tmp_path):
    """The compute path on a fresh store in the user's folder starts from a copy of the
    committed escape-time store: every trial is found, nothing is recomputed, the package
    is not written to, and the summary equals the replay's."""
    s = get_study("factual_recall.escape_times")
    before = s.committed_store().stat()
    got = s.run(compute=True, store=tmp_path / "escape.jsonl", executor="inprocess", progress=False)
    ref = s.run(compute=False, progress=False)
    assert got.computed == 0 and got.reused == ref.reused == len(fm.escape_params())
    assert got.outcome == ref.outcome
    assert s.committed_store().stat().st_mtime_ns == before.st_mtime_ns


def test_linear_summary_verdicts_follow_the_intervals():
    """The verdict helpers of the linear-memory summary read the intervals they cite."""
    run = get_study("factual_recall.linear_memory").run(compute=False, progress=False)
    s = run.outcome
    assert {g.d for g in s.main()} == {8, 16, 32, 64}
    for g in s.groups:
        f = g.final_all
        assert g.theory_inside() == (f.ci_low <= g.theory.alpha <= f.ci_high)
        assert g.ratio_all == pytest.approx(f.threshold / g.theory.alpha, rel=1e-15)
        # N ln N = load d^2 at the threshold (Lambert W inversion; rounding only)
        assert f.N * math.log(f.N) == pytest.approx(f.threshold * g.d ** 2, rel=1e-12)
    assert s.curve_d == sorted(set(fm.THEORY_CURVE_D))
