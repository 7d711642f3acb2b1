"""Tiny runs of the factual-recall experiments and their input validation."""
import math

import numpy as np
import pytest

from validation.factual_recall.experiments import (fit_through_origin, largest_passing,
                                                   train_transformer, transformer_capacity)
from validation.factual_recall.memories import train_memory
from validation.factual_recall.sequential import detect_stages, train_sequential
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
