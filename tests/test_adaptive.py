"""Adaptive threshold design (validation.adaptive), measure_capacity(design="adaptive")
and the d = 100/150 study's summaries (validation.studies.linear_memory_d150)."""
import math

import numpy as np
import pytest

from validation.adaptive import AdaptiveResult, adaptive_threshold, next_loads
from validation.logistic import fit_threshold


def _step(at):
    """Noiseless trials: success iff load < at (an exact oracle for the threshold)."""
    def run(loads, seeds):
        return loads, [x < at for x in loads]
    return run


def test_noiseless_step_is_bracketed():
    r = adaptive_threshold(_step(0.7), fit_threshold, [0.5, 0.9], target_halfwidth=0.02, max_trials=60)
    assert isinstance(r, AdaptiveResult) and r.stop == "target"
    x, y = np.array(r.loads), np.array(r.success)
    # the true step lies between the largest success and the smallest failure;
    # the fit's 1/2 point and its interval must contain it there (no noise)
    assert x[y].max() < 0.7 <= x[~y].min()
    assert r.ci_low <= 0.7 <= r.ci_high
    assert r.halfwidth <= 0.02
    assert r.trials == len(r.seeds) == len(set(r.seeds))        # one seed per trial
    assert r.seeds == list(range(r.trials))


def test_walks_out_of_an_unbracketed_start():
    # all successes at the start: the design must walk up until the step at 1.6 is crossed
    r = adaptive_threshold(_step(1.6), fit_threshold, [0.8, 0.9], target_halfwidth=0.05, max_trials=80)
    assert max(r.loads) >= 1.6 and r.ci_low <= 1.6 <= r.ci_high
    # all failures at the start: walk down, never below `lower`
    r = adaptive_threshold(_step(0.3), fit_threshold, [0.8, 0.9], target_halfwidth=0.05, max_trials=80,
                           lower=0.2)
    assert min(r.loads) >= 0.2 and r.ci_low <= 0.3 <= r.ci_high


def test_deterministic_path_and_trial_cap():
    # a seeded noisy logistic: the same outcomes give the same path (what makes a
    # store-backed rerun replay instead of recompute); the cap is respected exactly
    def make():
        def run(loads, seeds):
            u = [np.random.default_rng(s).random() for s in seeds]
            return loads, [ui < 1 / (1 + math.exp((x - 0.8) / 0.03)) for ui, x in zip(u, loads)]
        return run
    a = adaptive_threshold(make(), fit_threshold, [0.7, 0.9], target_halfwidth=1e-6, max_trials=23)
    b = adaptive_threshold(make(), fit_threshold, [0.7, 0.9], target_halfwidth=1e-6, max_trials=23)
    assert a.loads == b.loads and a.success == b.success and a.history == b.history
    assert a.trials == 23 and a.stop == "max_trials"


def test_next_loads_rules():
    class F:
        threshold, width, ci_low, ci_high = 0.8, 0.001, 0.7, 0.9
    # all successes: k steps above the largest load
    assert next_loads(F, [0.5, 0.6], [True, True], batch=2, step=0.1) == pytest.approx([0.7, 0.8])
    # all failures: below the smallest, floored at `lower`
    assert next_loads(F, [0.5, 0.6], [False, False], batch=2, step=0.3, lower=0.1) == pytest.approx([0.2, 0.1])
    # bracketed: symmetric around the fit, spread = max(min(max(h/2, w), h), min_spread)
    got = next_loads(F, [0.7, 0.9], [True, False], batch=3, step=0.1)
    assert got == pytest.approx([0.75, 0.8, 0.85])            # h = 0.1, s = 0.05
    got = next_loads(F, [0.7, 0.9], [True, False], batch=4, step=0.1, min_spread=0.09)
    assert got == pytest.approx([0.71, 0.77, 0.83, 0.89])
    got = next_loads(F, [0.7, 0.9], [True, False], batch=2, step=0.1, min_spread=0.09)
    assert got == pytest.approx([0.77, 0.83])                 # the inner pair of a batch of 4


@pytest.mark.parametrize("kw, name", [({"target_halfwidth": 0}, "target_halfwidth"),
                                      ({"max_trials": 0}, "max_trials"), ({"batch": 0}, "batch")])
def test_bad_arguments(kw, name):
    args = {"target_halfwidth": 0.1, "max_trials": 10, **kw}
    with pytest.raises(ValueError, match=name):
        adaptive_threshold(_step(0.5), fit_threshold, [0.4, 0.6], **args)
    with pytest.raises(ValueError, match="start"):
        adaptive_threshold(_step(0.5), fit_threshold, [], target_halfwidth=0.1, max_trials=5)


@pytest.mark.slow
def test_coverage_on_a_synthetic_logistic():
    # 60 runs on a logistic of width 0.02 (a = 0.85): benchmarks/bench_adaptive.py measured
    # coverage 0.85-0.94 for widths 0.01-0.04 with this stopping rule; 3 binomial standard
    # errors (sqrt(0.87 * 0.13 / 60) = 0.043) below 0.87 is 0.74
    cov = 0
    for i in range(60):
        rng = np.random.default_rng(i)

        def run(loads, seeds):
            x = np.asarray(loads)
            return loads, list(rng.random(x.size) < 1 / (1 + np.exp((x - 0.85) / 0.02)))
        r = adaptive_threshold(run, fit_threshold, [0.82, 0.86, 0.89, 0.93], target_halfwidth=0.03,
                               max_trials=200, batch=4, step=0.085)
        cov += r.ci_low <= 0.85 <= r.ci_high
    assert cov / 60 >= 0.74


def test_measure_capacity_adaptive_reuses_store(tmp_path):
    from validation.linear_memory.capacity import measure_capacity

    store = tmp_path / "s.jsonl"
    kw = dict(design="adaptive", store=store, executor="inprocess", progress=False, ci_halfwidth=0.08,
              max_trials=16, batch=2, steps=256)
    r = measure_capacity("op", 10, **kw)
    assert r["design"] == "adaptive" and r["trials"] <= 16 and len(r["seed_list"]) == r["trials"]
    assert r["stop"] in ("target", "max_trials")
    from validation.engine import read_store

    n = len(read_store(store, warn=False).ok)
    assert n == r["trials"]                                   # one stored trial per trial run
    again = measure_capacity("op", 10, **kw)                  # replays the path from the store
    assert again["threshold"] == r["threshold"] and again["history"] == r["history"]
    assert len(read_store(store, warn=False).ok) == n        # nothing recomputed
    with pytest.raises(ValueError, match="design"):
        measure_capacity("op", 10, design="bisect")
    with pytest.raises(ValueError, match="ci_halfwidth"):
        measure_capacity("op", 10, design="adaptive", ci_halfwidth=0.0)


def _fake(loads, succ, steps, budget=4096):
    return [{"load": x, "success": s, "steps": t, "seed": i, "steps_budget": budget, "seconds": 2.0,
             "cpu_seconds": 1.0, "accuracy": 1.0 if s else 0.9, "loss": 0.1 if s else 0.5}
            for i, (x, s, t) in enumerate(zip(loads, succ, steps))]


def test_d150_summaries_on_known_records():
    from validation.studies import get_study
    from validation.studies import linear_memory_d150 as d150

    loads = [0.70, 0.75, 0.78, 0.80, 0.82, 0.84, 0.86, 0.90]
    succ = [True, True, True, False, True, False, False, False]
    steps = [30, 40, 900, 4096, 2000, 4096, 4096, 4096]
    g = ("op", None, 150, d150.LR)
    summ = get_study("linear_memory.d150").summarise({g: _fake(loads, succ, steps)}, groups=(1,), lr_check=False)
    r = summ.rows[d150.group_key(*g)]
    fit = fit_threshold(loads, succ)
    assert r.threshold == fit.threshold and (r.ci_low, r.ci_high) == (fit.ci_low, fit.ci_high)
    assert r.to_dict()["ci"] == [fit.ci_low, fit.ci_high]                # report.json's key
    assert r.paper == 0.50 and r.trials == 8 and r.successes == 4 and r.measured
    assert r.wall_seconds == 8.0 and r.cpu_seconds == 8.0   # sum of walls / 2 workers
    # budget: success(B) = success and steps <= B, counted by hand
    bt = {b.budget: b for b in summ.budget[d150.group_key(*g)]}
    assert [bt[b].successes for b in (256, 512, 1024, 2048, 4096)] == [2, 2, 3, 4, 4]
    assert bt[4096].threshold == fit.threshold
    assert summ.missing == []


def test_long_budget_joins_and_refits():
    from validation.studies import linear_memory_d150 as d150
    from replica import load_of

    g = ("op", None, 100, d150.LR)
    load = float(load_of(1203, 100))
    base = _fake([0.80, 0.82, load, 0.88, 0.90], [True, True, False, False, False], [10, 20, 4096, 4096, 4096])
    base[1]["seed"], base[2]["seed"] = 7, 1          # the rerun is the instance (p = 1203, seed 1)
    rerun = [{"load": load, "seed": 1, "lr": d150.LR, "steps_budget": 16384, "success": True, "steps": 5000,
              "accuracy": 1.0, "loss": 0.4}]
    lb = d150.long_budget(rerun, {g: base})
    assert lb.rows[0]["accuracy_4096"] == base[2]["accuracy"]
    refit = lb.refit[d150.group_key(*g)]
    # the rerun's success replaces the 4096-step failure: the fit of the replaced outcomes, by hand
    f = fit_threshold([r["load"] for r in base], [True, True, True, False, False])
    assert refit.threshold == f.threshold and refit.replaced == 1
    assert refit.to_dict()["ci"] == [f.ci_low, f.ci_high]


def test_adaptive_compare_replay_needs_the_trials(tmp_path):
    from validation.studies import get_study

    store = tmp_path / "empty.jsonl"
    store.write_text("")
    with pytest.raises(LookupError, match="not in"):
        get_study("linear_memory.adaptive_design").run(store=store, ds=(20,), replicates=1, progress=False)


@pytest.mark.slow
def test_report_blocks_read_the_committed_stores(tmp_path):
    # the report.json contract of issue 13/16: linear_memory.d150 rows and
    # linear_memory.adaptive_design; both blocks read committed stores and compute nothing
    from validation.sections.base import Context
    from validation.sections import linear_memory as L
    from validation.studies import get_study
    from validation.studies.linear_memory_adaptive import DS, TARGET

    ctx = Context(tmp_path, True)
    run = get_study("linear_memory.d150").run(progress=False)
    md, data, figs = L._d150(ctx, run)
    assert data["read_from_store"] and "read from the committed store" in "\n".join(md)
    for row in data["rows"].values():
        assert {"threshold", "ci", "theory_finite_p", "paper", "trials", "wall_seconds"} <= set(row)
    assert set(data["rows"]) | set(data["lr_check_rows"]) == set(run.outcome.rows)
    md, ad = L._adaptive_design(ctx)
    assert set(ad) == {str(d) for d in DS}
    for row in ad.values():
        assert row["ci_width"] == 2 * TARGET and row["trials_adaptive"] < row["trials_grid"]
    assert not list(tmp_path.glob("*.jsonl"))        # nothing computed, no store written


@pytest.mark.parametrize("argv, msg", [(["--ci-halfwidth", "0"], "ci_halfwidth must be"),
                                       (["--max-trials", "0"], "max_trials must be"),
                                       (["--method", "exact", "--steps", "100"], "training options have no meaning"),
                                       (["--model", "lowrank", "--kappa", "0.5", "--method", "exact"],
                                        "method 'exact' decides full-rank memories")])
def test_cli_adaptive_refusals(argv, msg, tmp_path, capsys):
    # a refused call prints one line, exits 2 and writes nothing
    from hcizz.cli import run_cli
    from validation.__main__ import main

    store = tmp_path / "s.jsonl"
    argv = ["capacity", "--model", "op", "--d", "12", "--design", "adaptive", "--store", str(store)] + argv
    rc = run_cli(main, argv, prog="python -m validation")
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and msg in err[0] and not store.exists()
