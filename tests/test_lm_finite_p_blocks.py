"""Helpers of the finite-p low-rank, margin and spectra studies (library and study modules)."""
import math

import numpy as np
import pytest

from validation.linear_memory import margins as mg
from validation.linear_memory import spectra as ss
from validation.studies import linear_memory_lowrank as lf


def test_observables_exact():
    correct = np.array([3.0, 1.0])
    comp = np.array([[2.5, 0.0, 2.9], [1.2, -1.0, 0.5]])
    ob = mg.observables(correct, comp, n_top=2)
    np.testing.assert_array_equal(ob["row_max"], [2.9, 1.2])
    np.testing.assert_allclose(ob["margin"], [0.1, -0.2], atol=1e-15)
    np.testing.assert_allclose(ob["gaps"], [[0.1, 0.5], [-0.2, 0.5]], atol=1e-15)


def test_lowrank_plan_brackets_theory():
    from validation.linear_memory.theory import lowrank_finite_prediction

    loads, params = lf.plan_group(20, 0.5, seeds=2)
    th = lowrank_finite_prediction(20, 0.5)
    # factors 0.88..1.16 of the prediction; loads of integer p differ from them by < one p step
    assert loads[0] < th["value"] < loads[-1]
    assert len(params) == 2 * len(loads) and all(p["model"] == "lowrank" and p["kappa"] == 0.5 for p in params)
    assert th["kappa_eff"] == 0.5


def test_summarise_recovers_a_sharp_threshold():
    # synthetic trials: success iff load < 0.8 (deterministic), 6 seeds per load
    recs = {(0.5, 20): [{"load": a, "success": a < 0.8, "steps": 10, "cpu_seconds": 0.0}
                        for a in np.linspace(0.6, 1.0, 9) for _ in range(6)]}
    row = lf.summarise_groups(recs)[0]
    # the fitted 50% point lies between the last success (0.75) and the first failure (0.8)
    assert 0.75 <= row.threshold <= 0.8 and row.ci_low <= row.threshold <= row.ci_high
    assert row.ratio == row.threshold / row.theory
    assert row.to_dict()["ci"] == [row.ci_low, row.ci_high]          # report.json keeps its "ci" key
    # a step budget below every success turns all trials into failures: no crossing
    assert math.isnan(lf.summarise_groups(recs, budget=5)[0].threshold)


def test_pooled_ks_scaling_and_calibration():
    rng = np.random.default_rng(0)
    d, m = 60, 30
    inst = [np.linalg.svd(rng.standard_normal((d, d)) / math.sqrt(d), compute_uv=False)[:m] * 3.7
            for _ in range(6)]
    ks, edge, n = ss.pooled_ks(inst, m / d)        # the arbitrary scale 3.7 is fitted away
    cal = ss.gaussian_calibration(d, m, 6, reps=20, rng=1)
    assert n == 6 * m
    # Gaussian matrices ARE the calibration: their KS is one draw of the calibration law
    assert abs(ks - cal["ks_mean"]) < 5 * cal["ks_sd"]
    # edge: X_qc(1/2) = 0.8079 up to the finite-d fluctuation of the smallest kept value
    assert abs(edge - 0.8079455065990346) < 0.1
    assert abs(cal["edge_mean"] - 0.8079455065990346) < 0.1


@pytest.mark.slow
def test_spectrum_trial_small():
    r = ss.spectrum_trial({"d": 8, "kappa": 0.5, "frac": 0.5, "seed": 0})
    assert len(r["sv"]) == 4 and r["success"] and r["margin"] > 0
    assert all(a >= b for a, b in zip(r["sv"], r["sv"][1:]))


@pytest.mark.parametrize("kappa", [1.0, 0.5])
def test_continued_training_reproduces_first_recall(kappa):
    from validation.linear_memory.data import make_facts
    from validation.linear_memory.train import train, train_past_recall

    facts = make_facts("op", 15, 10, rng=np.random.default_rng(4))   # load 0.41, below capacity
    par = "full" if kappa == 1 else "lowrank"
    init = 0.0 if kappa == 1 else None
    ref = train(facts, parametrization=par, kappa=kappa, rng=np.random.default_rng(5), init_std=init)
    cont = train_past_recall(facts, parametrization=par, kappa=kappa, extra=64, rng=np.random.default_rng(5),
                             init_std=init)
    assert ref.success and cont.first_step == ref.steps
    # same float32 arithmetic in the same order: the memory at first recall is identical
    np.testing.assert_array_equal(cont.W_first, ref.W)
    trace = cont.trace
    assert [t for t, _ in trace] == [0, 16, 32, 64]
    assert trace[-1][1] > trace[0][1] > 0           # the normalised margin grows after recall
    # oracle for the end memory: a plain Adam loop of first + 64 updates from the same initialisation
    # (no stop rule, no adam_loop): the same float32 operations, so the memory is identical
    from validation.linear_memory.models import xent_and_grad
    from validation.linear_memory.registry import get_parametrization
    from validation.linear_memory.train import get_config
    from validation.optim import Adam

    p = get_parametrization(par)
    cfg = get_config("default", init_std=init)
    params = p.init(facts, kappa, cfg, np.random.default_rng(5))
    opt = Adam(params)
    scale = 1.0 / (cfg.temperature * math.sqrt(facts.d))
    for _ in range(ref.steps + 64):
        _, dW, _ = xent_and_grad(p.memory(params), facts, scale=scale)
        opt.step(p.grads(params, dW), lr=cfg.lr)
    np.testing.assert_array_equal(p.memory(params), cont.W_end)


def test_continued_training_without_recall_has_no_end():
    from validation.linear_memory.data import make_facts
    from validation.linear_memory.train import train_past_recall

    facts = make_facts("op", 400, 10, rng=np.random.default_rng(1))   # load ~24: far beyond capacity
    cont = train_past_recall(facts, extra=8, rng=0, steps=20)
    assert cont.W_first is None and cont.W_end is None and cont.first_step is None and cont.trace == []
    with pytest.raises(ValueError, match="extra"):
        train_past_recall(facts, extra=-1, rng=0)
    with pytest.raises(ValueError, match="parametrization"):
        train_past_recall(facts, parametrization="hebbian", extra=1, rng=0)
