"""Spectra study: the lr trial parameter and the extrapolation to d = inf (validation.linear_memory.spectra,
validation.studies.linear_memory_spectra)."""
import json
import math

import numpy as np
import pytest

from validation.engine import trial_key
from validation.linear_memory import spectra as ss
from validation.studies import get_study
from validation.studies import linear_memory_spectra as st
from validation.studies.linear_memory_d150 import LR


def test_lr_parameter_keeps_old_keys():
    # the stored study (d = 20, 40, 80, first recall and continued training) was run before
    # ``lr`` existed: its parameter records, hence keys, must be unchanged, so it replays
    from validation.engine import read_store

    keys = set(read_store(get_study("linear_memory.spectra").committed_store(), warn=False).ok)
    old = st.study_params([20, 40, 80]) + st.study_params([20, 40], fracs=(0.8, 1.0), extra_steps=2048)
    assert all("lr" not in p for p in old)
    assert all(trial_key(p, ss.spectrum_trial) in keys for p in old)
    # from LARGE_D on the d150 learning rate is a parameter; an explicit lr is one at any d
    big = st.study_params([150], kappas=[0.5], fracs=[1.0], seeds=1)
    assert big[0]["lr"] == LR == 0.01
    ctl = st.study_params([80], kappas=[0.5], fracs=[1.0], seeds=1, lr=0.01)[0]
    ref = st.study_params([80], kappas=[0.5], fracs=[1.0], seeds=1)[0]
    assert ctl["lr"] == 0.01 and {k: v for k, v in ctl.items() if k != "lr"} == ref
    assert trial_key(ctl, ss.spectrum_trial) != trial_key(ref, ss.spectrum_trial)


def test_lr_reaches_the_optimiser():
    # a different Adam rate gives a different trajectory; the preset's rate given explicitly
    # gives exactly the default one (same float32 arithmetic)
    base = {"d": 8, "kappa": 1.0, "frac": 0.5, "seed": 0}
    r0 = ss.spectrum_trial(base)
    r1 = ss.spectrum_trial({**base, "lr": 0.1})
    r2 = ss.spectrum_trial({**base, "lr": 0.01})
    assert r0 == r1
    assert r2["sv"] != r0["sv"]


def test_fast_pooled_statistic_equals_pooled_ks():
    rng = np.random.default_rng(3)
    d, m = 30, 15
    inst = [np.linalg.svd(rng.standard_normal((d, d)) / math.sqrt(d), compute_uv=False)[:m] for _ in range(5)]
    ks, edge, _ = ss.pooled_ks(inst, m / d)
    ks2, edge2 = ss.ks_edge_statistic([ss.ks_edge_instance(s, m / d) for s in inst])
    # the same statistic computed two ways (scipy's kstest vs sorted CDF values): rounding only
    assert abs(ks - ks2) < 1e-12 and abs(edge - edge2) < 1e-12


def test_extrapolate_exact_line():
    x = 1 / np.array([20.0, 40.0, 80.0, 150.0])
    y = 0.12 - 3.0 * x
    reps = y + np.random.default_rng(0).normal(0, 0.01, (300, 4))
    fit = ss.extrapolate(x, y, reps)
    # the estimator is linear in y and exact on a line: rounding only (condition number ~1e2)
    assert abs(fit.intercept - 0.12) < 1e-12 and abs(fit.slope + 3.0) < 1e-10
    assert fit.chi2 < 1e-20 and fit.dof == 2
    assert fit.intercept_ci_low < 0.12 < fit.intercept_ci_high
    assert fit.conf_int() == (fit.intercept_ci_low, fit.intercept_ci_high)
    assert fit.to_dict()["intercept_ci"] == [fit.intercept_ci_low, fit.intercept_ci_high]


def test_bootstrap_extrapolation_recovers_known_intercept():
    # synthetic "instances": value = a + b x + N(0, s), n per size; statistic = mean.
    a, b, s, n = 0.05, 2.0, 0.1, 50
    x = 1 / np.array([20.0, 40.0, 80.0, 150.0])
    rng = np.random.default_rng(11)
    groups = [list(a + b * xi + s * rng.standard_normal(n)) for xi in x]
    vals, reps = ss.bootstrap_instances(groups, np.mean, boot=400, rng=5)
    fit = ss.extrapolate(x, vals[:, 0], reps[:, :, 0])
    # exact standard error of the WLS intercept with the true variances s^2/n (equal weights)
    X = np.column_stack([np.ones(4), x])
    se_true = math.sqrt(np.linalg.inv(X.T @ X)[0, 0] * s * s / n)
    # intercept within 4 true standard errors (a 6e-5 two-sided event for a Gaussian estimate)
    assert abs(fit.intercept - a) < 4 * se_true
    # bootstrap SE vs exact: relative error ~ sqrt(1/(2(n-1))) = 0.10 (sample variances)
    # + 1/sqrt(2*400) = 0.035 (replicates) + bias sqrt((n-1)/n) - 1 = -0.01; 0.35 is > 3 sigma
    assert abs(fit.intercept_se / se_true - 1) < 0.35
    # chi^2 with 2 degrees of freedom: P(chi2 > 13.8) = 0.001
    assert fit.chi2 < 13.8


def test_extrapolation_of_a_perfect_match_is_zero():
    # "trained" spectra that are Gaussian matrices follow the law exactly: the KS excess and the
    # edge gap (both relative to the Gaussian calibration) must extrapolate to 0
    rng = np.random.default_rng(2)
    res = []
    for d in (12, 24, 48):
        for seed in range(8):
            sv = np.linalg.svd(rng.standard_normal((d, d)) / math.sqrt(d), compute_uv=False)[:d // 2]
            res.append({"d": d, "kappa": 0.5, "frac": 1.0, "seed": seed, "success": True, "sv": sv.tolist(),
                        "p": d * d / 4, "load": 0.5, "margin": 0.0, "extra_steps": 0, "lr": None})
    fits = st.extrapolation(res, boot=200, rng=0)
    assert {(f["quantity"], f["variable"]) for f in fits} == {
        ("ks_excess", "1/d"), ("ks_excess", "1/ln p"), ("edge_gap", "1/d"), ("edge_gap", "1/ln p")}
    for f in fits:
        assert f["sizes"] == [12, 24, 48]
        # a null effect: |intercept| below 4 of its standard errors (bootstrap + calibration error)
        assert abs(f["intercept"]) < 4 * f["intercept_se"], f


@pytest.mark.parametrize("kw, name", [
    ({"x": [0.1, 0.1, 0.2]}, "x"),
    ({"y": [0.1, 0.2]}, "y"),
    ({"replicates": np.ones((5, 3))}, "replicates"),
    ({"offset_se": [-1.0, 0.0, 0.0]}, "offset_se"),
])
def test_extrapolate_rejects_bad_input(kw, name):
    args = {"x": [0.1, 0.05, 0.025], "y": [0.3, 0.2, 0.1],
            "replicates": np.random.default_rng(0).normal(size=(10, 3))}
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        ss.extrapolate(args.pop("x"), args.pop("y"), args.pop("replicates"), **args)


def test_bootstrap_rejects_bad_input():
    with pytest.raises(ValueError, match="boot"):
        ss.bootstrap_instances([[1.0]], np.mean, boot=1)
    with pytest.raises(ValueError, match="groups"):
        ss.bootstrap_instances([[1.0], []], np.mean)
    with pytest.raises(ValueError, match="min_sizes"):
        st.extrapolation([], min_sizes=2)


@pytest.mark.parametrize("args, msg", [
    (["linear_memory.spectra", "--config", "huge"], "--config must be a name among full, quick"),
    (["linear_memory.lowrank_finite_p", "--d", "1"], "--d item must be an integer in [2, 400]"),
    (["linear_memory.lowrank_finite_p", "--kappa", "1.5"], "--kappa item must be"),
    (["linear_memory.margins", "--typical-samples", "-1"], "--typical-samples must be an integer >= 0"),
    (["linear_memory.adaptive_design", "--target", "0"], "--target must be a real number in (0, 1]"),
    (["linear_memory.budget", "--configs", "T9"], "--configs item"),
    (["linear_memory.d150", "--groups", "6"], "--groups item must be an integer in [0, 5]"),
    (["linear_memory.capacity", "--config", "x"], "--config must be a name"),
])
def test_study_cli_refuses_bad_input_before_writing(tmp_path, args, msg):
    """Bad input: one line on stderr naming the flag, exit status 2, and the store is never created."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    store = tmp_path / "s.jsonl"
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "validation", "study", *args, "--store", str(store)],
                       capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)},
                       timeout=120)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and msg in r.stderr, r.stderr
    assert not store.exists() and list(tmp_path.iterdir()) == []
