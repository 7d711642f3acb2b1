"""Margins: the study plan (stored keys, validation.studies.linear_memory_margins), the Adam-rate parameter,
the below-capacity prediction and the trend fit."""
import math

import numpy as np
import pytest

from validation.linear_memory import margins as lib
from validation.studies import get_study
from validation.studies import linear_memory_margins as mg


def test_plan_keeps_the_stored_keys_and_adds_lr_only_from_d100():
    from validation.engine import read_store, trial_key

    prm = mg.study_params()
    keys = {trial_key(q, lib.margin_trial) for q in prm}
    stored = read_store(get_study("linear_memory.margins").committed_store(), warn=False).ok
    # every committed trial is a trial of the plan: a replay of the store computes nothing it has
    assert stored and set(stored) <= keys
    for q in prm:
        if q["d"] < mg.LR_FROM_D:
            assert q.get("lr") in (None, 0.01)          # explicit 0.01 only in the d = 80 rate check
        else:
            assert q["lr"] in (0.01, 0.1)
    # the first study (d = 40-80 at 1 and 0.95 of capacity, no rate) is unchanged
    first = mg.margin_params(mg.DS, mg.SEEDS)
    assert all("lr" not in q for q in first) and all(q in prm for q in first)
    assert len({tuple(sorted(q.items())) for q in prm}) == len(prm)


def test_margin_trial_passes_the_rate():
    from validation.linear_memory.data import trial_rngs
    from replica.load import p_from_load
    from validation.linear_memory.data import make_facts
    from validation.linear_memory.train import train

    d, alpha, seed = 10, 0.35, 3
    p = p_from_load(alpha, d)
    out = {}
    for lr in (0.1, 0.01):
        r = lib.margin_trial({"d": d, "alpha": alpha, "seed": seed, "lr": lr})
        rf, ri = trial_rngs(seed, d, p)
        ref = train(make_facts("op", p, d, rng=rf), parametrization="full", rng=ri, lr=lr)
        # the same instance and optimiser: identical step count and outcome
        assert (r["success"], r["steps"]) == (bool(ref.success), int(ref.steps))
        out[lr] = r["steps"]
    assert out[0.1] != out[0.01]
    assert lib.margin_trial({"d": d, "alpha": alpha, "seed": seed})["steps"] == out[0.1]   # default rate 0.1


def test_typical_prediction_below_and_beyond_capacity():
    assert lib.typical_predicted(100, 2.0, samples=50) is None        # far beyond alpha_c(100) ~ 0.9
    t = lib.typical_predicted(100, 0.5, samples=200)
    assert 0 < t["q_star"] < 1 and np.all(t["margin"] > 0)
    np.testing.assert_allclose(t["gaps"][:, 0], t["margin"], rtol=0, atol=1e-9)


def _row(d, p, y, se, frac=0.95):
    stat = {"mean": y, "mean_se": se}
    return {"d": d, "p": p, "lr": 0.01 if d >= mg.LR_FROM_D else 0.1, "load_fraction": frac,
            "trained": {"correct": {"mean": y + 2.0, "mean_se": se}, "margin": stat},
            "predicted": {"correct": {"mean": 2.0, "mean_se": 0.0}}, "typical": None}


def test_trend_against_polyfit():
    rng = np.random.default_rng(0)
    ps = [250, 485, 783, 1140, 2272]
    lnp = np.log(ps)
    se = np.array([0.01, 0.02, 0.015, 0.01, 0.03])
    y = 0.1 - 0.01 * lnp + se * rng.standard_normal(5)
    rows = [_row(d, p, yi, ei) for d, p, yi, ei in zip((40, 60, 80, 100, 150), ps, y, se)]
    rows.append({**_row(100, 1140, 9.0, 0.01), "lr": 0.1})        # other rate: left out
    rows.append(_row(60, 463, 9.0, 0.01, frac=0.90))                # other fraction: left out
    for what in ("margin", "excess"):
        t = mg.trend(rows, what, 0.95)
        coef, cov = np.polyfit(lnp, y, 1, w=1 / se, cov="unscaled")   # independent weighted LSQ
        assert t["d"] == [40, 60, 80, 100, 150]
        assert math.isclose(t["slope"], coef[0], rel_tol=1e-9) and math.isclose(t["intercept"], coef[1], rel_tol=1e-9)
        assert math.isclose(t["slope_se"], math.sqrt(cov[0, 0]), rel_tol=1e-9)
        assert t["dof"] == 3 and t["chi2"] >= 0
    with pytest.raises(ValueError, match="what must be"):
        mg.trend(rows, "nonsense", 0.95)


@pytest.mark.slow
def test_report_block_quick_reads_the_big_d_from_the_store(tmp_path):
    from validation.sections.base import Context
    from validation.sections import linear_memory as lm

    md, data, figs = lm._margin_prediction(Context(out=tmp_path, quick=True, executor="inprocess"))
    assert not list(tmp_path.glob("*.jsonl"))           # quick mode replays the committed store
    # every quick-mode trial is in the committed store: nothing is trained, and d >= 100 is said to be stored
    assert data["reused"] == data["trials"] and data["stored_only_d"] == [100, 150]
    assert "Quick mode: the d = 100, 150 rows are read from the stored trials" in "".join(md)
    assert {r["d"] for r in data["rows"]} == {40, 100, 150}
    assert all(r["typical"] is None for r in data["rows"] if r["load_fraction"] >= mg.TYPICAL_MAX_FRACTION)
    assert (tmp_path / figs[0]).exists()


def test_margin_params_refuse_bad_input():
    """Input checks name the argument (before any trial is run or stored)."""
    from validation.studies.linear_memory_margins import margin_params

    for kw, name in (({"ds": [3]}, "d"), ({"fracs": [0.0]}, "frac"), ({"seeds": 0}, "seeds"),
                     ({"lr": -1.0}, "lr")):
        with pytest.raises(ValueError, match=name):
            margin_params(**{"ds": [20], **kw})
