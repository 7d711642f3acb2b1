"""Tiny runs of the factual-recall experiments and their input validation."""
import math

import numpy as np
import pytest

from validation.factual_recall.experiments import (experiment_rng, fit_through_origin,
                                                   largest_passing, train_transformer,
                                                   transformer_capacity)
from validation.factual_recall.memories import train_memory
from validation.factual_recall.sequential import (block_losses, detect_stages,
                                                  linear_attention_loss, train_sequential)
from validation.factual_recall.task import make_task
from validation.factual_recall.transformer import OneLayerTransformer


@pytest.mark.parametrize("target", [1, 2, 37, 64, 1000])
def test_largest_passing_exact(target):
    n, log = largest_passing(lambda k: k <= target, 5, rtol=0)
    assert n == target
    assert all(ok == (k <= target) for k, ok in log)


def test_largest_passing_nothing_passes():
    assert largest_passing(lambda k: False, 8)[0] == 0


def test_fit_through_origin_exact_line():
    est = fit_through_origin([1, 2, 4], [0.5, 1.0, 2.0])
    assert est.value == pytest.approx(0.5) and est.stderr == pytest.approx(0, abs=1e-12)
    assert est.info["ratio_min"] == pytest.approx(0.5) == est.info["ratio_max"]


def test_linear_memory_stores_n_le_d():
    """N <= d facts with independent inputs are exactly storable (W = U^T (X^T)^+ gives
    score 1 on the target, < 1 elsewhere): training must reach full recall."""
    r = train_memory("linear", 12, 16, steps=300, rng=0)
    assert r["accuracy"] == 1.0 and r["params"] == 256


def test_linear_memory_fails_far_above_capacity():
    """N ln N = 750 against d^2 = 36 parameters: 150 random unit outputs in R^6 cannot all
    win their own row of a rank-6 score matrix, so recall must be far from complete."""
    r = train_memory("linear", 150, 6, steps=200, rng=0)
    assert r["accuracy"] < 0.5


def test_mlp_memory_counts_and_learns():
    r = train_memory("mlp", 40, 8, m=16, steps=600, rng=1)
    assert r["params"] == 2 * 16 * 8 and r["accuracy"] == 1.0


def test_transformer_param_count_formula():
    net = OneLayerTransformer(12, 3, 5, 7, vocab=20, n_answers=6, rng=0)
    assert net.param_count == 4 * 3 * 5 * 12 + 2 * 7 * 12
    counted = sum(p.size for name, p in zip("QKVOW1bW2", net.params) if p.ndim > 1)
    assert counted == net.param_count  # every weight matrix, biases excluded


def test_transformer_learns_tiny_task():
    task = make_task(4, 3, 4, T=6, rng=0)
    res = train_transformer(task, 16, 2, 8, 16, steps=300, batch=64, lr=2e-2, rng=1,
                            eval_repeats=4)
    assert res["accuracy"] >= 0.95
    assert res["loss"] < 0.3


def test_transformer_capacity_tiny():
    res = transformer_capacity(8, 1, 8, 8, D=4, T=4, steps=60, batch=32, start=4,
                               rng=0, rtol=0.5)
    assert res["params"] == 4 * 8 * 8 + 2 * 8 * 8
    passing = [n for n, a in res["evaluated"] if a >= 0.99]
    assert res["facts"] == 0 or res["facts"] in passing
    assert res["facts_per_param"] == res["facts"] / res["params"]


def test_sequential_relation_before_subject():
    out = train_sequential(32, 2, 4, T=5, steps=400, lr=4.0, init=1e-3, eval_every=5, rng=0)
    st = out["stages"]
    assert st["order"] == "relation-first"
    assert abs(out["total"][0] - math.log(8)) < 1e-3  # uniform start
    # the intermediate plateau sits at ln D: mass spread over the right block
    assert st["plateau2"] == pytest.approx(math.log(4), abs=0.05)
    assert st["final"] < 0.1


def test_detect_stages_on_synthetic_curves():
    step = np.arange(100)
    rel = np.where(step < 20, 1.0, 0.01)
    sub = np.where(step < 60, 2.0, 0.01)
    tot = rel + sub
    st = detect_stages(step, tot, rel, sub)
    assert st["relation_learnt"] == 20 and st["subject_learnt"] == 60
    assert st["plateau1"] == pytest.approx(3.0) and st["plateau2"] == pytest.approx(2.01)
    assert st["order"] == "relation-first"


@pytest.mark.parametrize("H,d_h", [(0, 8), (2, 0), (0, 0)])
def test_bad_heads(H, d_h):
    with pytest.raises(ValueError, match="H \\* d_h must be positive"):
        OneLayerTransformer(8, H, d_h, 4, vocab=10, n_answers=4, rng=0)


@pytest.mark.parametrize("H,d_h", [(0, 8), (3, 0)])
def test_bad_heads_capacity(H, d_h):
    with pytest.raises(ValueError, match="H \\* d_h must be positive"):
        transformer_capacity(8, H, d_h, 4, D=4, T=4, steps=1, batch=4, rng=0)


def test_bad_negative_heads():
    with pytest.raises(ValueError, match="^H must be"):
        OneLayerTransformer(8, -1, 8, 4, vocab=10, n_answers=4, rng=0)


@pytest.mark.parametrize("kw,name", [(dict(T=2), "T"), (dict(D=1), "D")])
def test_bad_capacity_inputs(kw, name):
    args = dict(D=4, T=4, steps=5, batch=4, rng=0)
    args.update(kw)
    with pytest.raises(ValueError, match=f"^{name} must"):
        transformer_capacity(8, 1, 8, 8, **args)


@pytest.mark.parametrize("kw,name", [(dict(T=2), "T"), (dict(D=1), "D"),
                                     (dict(S=2), "S")])
def test_bad_sequential_inputs(kw, name):
    args = dict(S=8, R=2, D=4, T=4, steps=2)
    args.update(kw)
    with pytest.raises(ValueError, match=f"^{name} must"):
        train_sequential(**args)


def test_more_facts_than_answers():
    with pytest.raises(ValueError, match="^S must be <= D"):
        make_task(9, 2, 8, T=4, rng=0, distinct=True)
    with pytest.raises(ValueError, match="^n must be <= n_classes"):
        train_memory("linear", 10, 4, n_classes=5, steps=1, rng=0)


def test_bad_memory_kind():
    with pytest.raises(ValueError, match="^kind must be"):
        train_memory("cubic", 10, 4)


def test_block_losses_closed_forms():
    """Uniform logits: (ln DR, ln R, ln D); all mass spread over the right block
    (relation known, subject not): (ln D, 0, ln D)."""
    D, R = 3, 4
    y = np.array([0, 5, 11])
    t, r, s = block_losses(np.zeros((3, D * R)), y, D)
    assert (t, r, s) == pytest.approx((math.log(D * R), math.log(R), math.log(D)), abs=1e-12)
    logits = np.full((3, D * R), -60.0)
    for i, a in enumerate(y):
        logits[i, (a // D) * D:(a // D + 1) * D] = 0.0
    t, r, s = block_losses(logits, y, D)
    assert (t, r, s) == pytest.approx((math.log(D), 0.0, math.log(D)), abs=1e-12)


def _logistic(step, center, width, hi, lo):
    return lo + (hi - lo) / (1 + np.exp((step - center) / width))


def test_detect_stages_noisy_curves_with_transient_dip():
    """Smooth drops plus 2% multiplicative noise and a one-point dip of the subject
    loss to 5% of its start between the two stages: the boundaries must be within
    a few steps of the true crossings and the dip ignored."""
    rng = np.random.default_rng(0)
    step = np.arange(0, 2000, 5)
    rel = _logistic(step, 200, 15, 1.386, 0.005) * (1 + 0.02 * rng.standard_normal(step.size))
    sub = _logistic(step, 1200, 40, 2.079, 0.005) * (1 + 0.02 * rng.standard_normal(step.size))
    sub[120] = 0.05 * sub[0]                                 # step 600
    tot = rel + sub
    st = detect_stages(step, tot, rel, sub)
    # 10% crossing of a logistic drop from hi to lo << hi: center + width ln 9
    assert abs(st["relation_learnt"] - (200 + 15 * math.log(9))) <= 15
    assert abs(st["subject_learnt"] - (1200 + 40 * math.log(9))) <= 25
    assert st["order"] == "relation-first"
    assert st["plateau1"] == pytest.approx(1.386 + 2.079, rel=0.01)
    assert st["plateau2"] == pytest.approx(2.079, rel=0.03)


def test_detect_stages_subject_first_and_never():
    step = np.arange(100)
    rel = np.where(step < 70, 1.0, 0.01)
    sub = np.where(step < 30, 2.0, 0.01)
    st = detect_stages(step, rel + sub, rel, sub)
    assert (st["relation_learnt"], st["subject_learnt"], st["order"]) == (70, 30, "subject-first")
    assert st["plateau2"] is None
    st = detect_stages(step, 1 + sub, np.ones(100), sub)      # relation never learnt
    assert st["relation_learnt"] is None and st["order"] == "subject-first"
    st = detect_stages(step, 3 + 0 * sub, np.ones(100), 2 + 0 * sub)
    assert st["order"] == "undetermined" and st["plateau2"] is None


def test_sequential_subject_first_when_subjects_are_rare():
    """The detector is not tied to the expected outcome: with S = 4 < R = 16 a subject
    column of W gets gradient from 1/S of the sequences, more than a relation column
    (1/R), and the subject is learnt first."""
    out = train_sequential(4, 16, 4, T=4, steps=200, lr=4.0, init=1e-3, eval_every=5, rng=0)
    assert out["stages"]["order"] == "subject-first"
    assert out["stages"]["final"] < 0.1


@pytest.mark.parametrize("call,match", [
    (lambda: detect_stages([0, 1], [1, 1], [1, 1], [1, 1], frac=2), "^frac must"),
    (lambda: detect_stages([], [], [], []), "^step, total, relation and subject must"),
    (lambda: detect_stages([0, 1, 2], [1, 1], [1, 1], [1, 1]), "^step, total, relation"),
    (lambda: block_losses(np.zeros((2, 7)), np.array([0, 1]), 3), "^D must divide"),
    (lambda: block_losses(np.zeros((2, 6)), np.array([0, 1]), 1), "^D must be"),
    (lambda: largest_passing(lambda n: n < 5, 2, rtol=-1), "^rtol must"),
    (lambda: fit_through_origin([], []), "^x and y must"),
    (lambda: fit_through_origin([0, 0], [1, 2]), "^x must be finite and non-zero"),
    (lambda: fit_through_origin([1, 2], [1]), "^x and y must"),
    (lambda: experiment_rng(-1, "memory"), "^seed must"),
    (lambda: experiment_rng(0, "bogus"), "^name must"),
    (lambda: train_transformer(make_task(2, 2, 2, T=4, rng=0), 8, 1, 4, 4, steps=1, batch=2,
                               lr=0, rng=0), "^lr must"),
    (lambda: train_transformer(make_task(2, 2, 2, T=4, rng=0), 8, 1, 4, 4, steps=1, batch=2,
                               eval_repeats=0, rng=0), "^eval_repeats must"),
    (lambda: transformer_capacity(8, 1, 4, 4, D=2, T=4, steps=1, batch=2, threshold=2, rng=0),
     "^threshold must"),
    (lambda: OneLayerTransformer(8, 2, 4, 4, vocab=10, n_answers=4, dtype=int), "^dtype must"),
    (lambda: OneLayerTransformer(8, 2, 4, 4, vocab=10, n_answers=4).forward(np.array([[11, 9]])),
     "^tokens must have entries in \\[0, 10\\), got 11"),
    (lambda: OneLayerTransformer(8, 2, 4, 4, vocab=10, n_answers=4).loss(np.array([[1, 9]]),
                                                                         np.array([4])),
     "^targets must have entries in \\[0, 4\\), got 4"),
    (lambda: linear_attention_loss(np.zeros(5), np.zeros((3, 4)), np.zeros((2, 5)),
                                   np.array([0, 1])),
     "^k must have shape"),
])
def test_bad_inputs_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_count_params_matches_model():
    for d, H, d_h, m in [(8, 1, 8, 0), (12, 3, 5, 7), (16, 4, 2, 33)]:
        net = OneLayerTransformer(d, H, d_h, m, vocab=5, n_answers=3, rng=0)
        assert OneLayerTransformer.count_params(d, H, d_h, m) == net.param_count == \
            4 * H * d_h * d + 2 * m * d


@pytest.mark.parametrize("argv,match", [
    (["factual-recall"], "required: experiment"),
    (["factual-recall", "bogus"], "invalid choice"),
    (["factual-recall", "memory", "--seed", "x"], "invalid int value"),
    (["factual-recall", "memory", "--seed", "-1"], "seed must be an integer >= 0, got -1"),
    (["factual-recall", "sequential", "--out", "."], "out must be a file, got the folder '.'"),
])
def test_cli_errors_one_line_exit_2(argv, match, capsys):
    from hcizz.cli import run_cli
    from validation.__main__ import main
    with pytest.raises(SystemExit) as exc:          # argparse usage errors exit directly
        raise SystemExit(run_cli(main, argv, prog="python -m validation"))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and match in err
