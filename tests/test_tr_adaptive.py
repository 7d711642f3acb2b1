"""Adaptive design of the token-retrieval boundary (validation.token_retrieval.design, the study
token_retrieval.adaptive_boundary) and the ``increasing`` direction of validation.adaptive."""
import math

import numpy as np
import pytest
from scipy import special

import functools

from validation.adaptive import adaptive_threshold, next_loads
from validation.logistic import fit_threshold
from validation.studies import get_study
from validation.studies import token_retrieval_adaptive_boundary as ab
from validation.token_retrieval import design as ds

_STUDY = get_study("token_retrieval.adaptive_boundary")

#: the boundary fit of the study: increasing in log N, widths >= 0.01
_fit = functools.partial(fit_threshold, increasing=True, min_width=0.01)


def _synthetic(log_nc, w):
    """Trials of a known increasing logistic in log N: success iff u < expit((log N - log_nc) / w),
    u drawn from (N, seed) only, so a pair run by both designs has one outcome (as for the real trial)."""
    def run(params):
        out = []
        for q in params:
            u = np.random.default_rng([q["seed"], q["N"], 7]).random()
            out.append({"N": q["N"], "seed": q["seed"],
                        "retrieval": bool(u < special.expit((math.log(q["N"]) - log_nc) / w))})
        return out
    return run


def test_next_loads_increasing_walks_the_other_way():
    class F:
        threshold, width, ci_low, ci_high = math.nan, math.nan, -math.inf, math.inf
    # success grows with the load: only successes -> walk down (floored at `lower`), only failures -> up
    assert next_loads(F, [2.0, 2.5], [True, True], batch=2, step=0.4, lower=1.0, increasing=True) \
        == pytest.approx([1.6, 1.2])
    assert next_loads(F, [2.0, 2.5], [False, False], batch=2, step=0.4, increasing=True) == pytest.approx([2.9, 3.3])
    # default (decreasing) unchanged: only successes -> up
    assert next_loads(F, [2.0, 2.5], [True, True], batch=2, step=0.4) == pytest.approx([2.9, 3.3])
    # both outcomes, fit on its edge: bisect the gap between the largest failure and the smallest success
    got = next_loads(F, [1.0, 2.0, 3.0], [False, False, True], batch=1, step=0.4, increasing=True)
    assert got == pytest.approx([2.5])


def test_noiseless_step_in_n_is_bracketed():
    # success iff N >= 20 (exact oracle): the true step lies between N = 19 and N = 20
    def trials(loads, seeds):
        return loads, [math.exp(a) >= 19.5 for a in loads]
    snap = lambda a: math.log(max(2, round(math.exp(a))))     # noqa: E731
    r = adaptive_threshold(trials, _fit, [math.log(8), math.log(10)], target_halfwidth=0.05,
                           max_trials=80, batch=2, snap=snap, lower=math.log(2), increasing=True)
    x, y = np.exp(r.loads).round(), np.array(r.success)
    assert r.stop == "target"
    assert x[~y].max() == 19 and x[y].min() == 20          # the walk went up and found the step exactly
    # no noise: every threshold in the gap (log 19, log 20] explains the data; the fit lies in it and
    # its interval overlaps it
    assert math.log(19) <= r.threshold <= math.log(20)
    assert r.ci_low <= math.log(20) and math.log(19) <= r.ci_high and r.halfwidth <= 0.05


def test_boundary_fit_against_the_known_logistic():
    # 200 trials at each of 9 values of N with the success counts of a known logistic (k = round(n p)):
    # the MLE must return the generating parameters up to the rounding of k
    # (|dk| <= 1/2 of 200 moves a by < w * 0.5 / 200 / min p(1-p) ~ 0.004) and the profile
    # interval must match the Wald interval 1.96 sqrt([I^-1]_aa) of the closed-form Fisher information
    # (relative difference O(n^-1/2) for this n: 15 %) up to one grid cell (span * 3 / 480)
    a, w, n = math.log(20.0), 0.15, 200
    x = np.linspace(a - 0.4, a + 0.4, 9)
    p = special.expit((x - a) / w)
    k = np.round(n * p).astype(int)
    logn = np.repeat(x, n)
    succ = np.concatenate([np.arange(n) < kk for kk in k])
    f = _fit(logn, succ)
    assert f.threshold == pytest.approx(a, abs=0.005)
    assert f.width == pytest.approx(w, rel=0.05)             # same rounding argument for w
    # Fisher information of (a, w) for eta = (x - a) / w: d eta/da = -1/w, d eta/dw = -(x - a)/w^2
    g = np.stack([-np.ones_like(x) / w, -(x - a) / w ** 2])
    info = (g * (n * p * (1 - p))) @ g.T
    se = math.sqrt(np.linalg.inv(info)[0, 0])
    cell = 3 * (x[-1] - x[0]) / 480
    hw = (f.ci_high - f.ci_low) / 2
    assert abs(hw - 1.96 * se) <= 0.15 * 1.96 * se + cell
    assert f.n == 9 * n and [c[2] for c in f.counts] == [n] * 9


def test_boundary_fit_not_bracketed_and_bad_input():
    f = _fit(np.log([4, 8, 16]), [True, True, True])
    assert math.isnan(f.threshold)
    with pytest.raises(ValueError, match="equal nonzero length"):
        _fit([1.0, 2.0], [True])
    with pytest.raises(ValueError, match="min_width"):
        fit_threshold([1.0, 2.0], [True, False], increasing=True, min_width=0)


def _compare(run, **kw):
    """The study's design (its grid and caps unless given) on any run(params)."""
    kw = {"grid_ns": ab.GRID_NS, "s_max": ab.S_MAX, "start": ab.START, "batch": ab.BATCH, **kw}
    return ds.compare_designs(kw.pop("boundaries", ab.BOUNDARIES), kw.pop("replicates", ab.REPLICATES),
                              kw.pop("target", ab.TARGET), run=run, **kw)


def test_compare_on_a_synthetic_boundary_recovers_it_with_fewer_trials():
    # known boundary N_c = 20, width 0.1 in log N; the first adaptive round is centred 20 % low (16).
    # Target half-width 0.15 of log N_c, caps 6 seeds per grid value = 48 trials per design
    true = math.log(20.0)
    res = _compare(_synthetic(true, 0.1), boundaries=((1, 2),), replicates=6, target=0.15,
                   centre=lambda d, L: 16.0, s_max=6)
    r, = res
    assert isinstance(r, ds.DesignComparison) and r.replicates == 6
    # pooled fit of every distinct trial: its 95 % interval contains the truth (deterministic seeds)
    assert r.conf_int() == (r.ci_low, r.ci_high)
    assert r.ci_low <= 20.0 <= r.ci_high and r.ci_high - r.ci_low > 0
    assert abs(math.log(r.threshold) - true) <= 0.1
    # per replicate the adaptive interval covers the truth in most replicates: nominal 0.95, measured
    # 0.87-0.95 for this stopping rule (docs/sweeps.md#adaptive-threshold-design); with 6 replicates
    # P(at most 3 covered | p = 0.87) = 0.03
    cov = sum(x.ci_low <= 20.0 <= x.ci_high for x in r.runs["adaptive"])
    assert cov >= 4
    # fewer trials than the fixed grid, by more than 3 standard errors of the difference
    # (a grid stuck at its cap has standard error 0; the adaptive one's is > 0 unless all replicates agree)
    diff = r.trials_grid - r.trials_adaptive
    assert diff > 0 and diff > 3 * math.hypot(r.trials_grid_stderr, r.trials_adaptive_stderr)
    assert r.trials_ratio == pytest.approx(r.trials_adaptive / r.trials_grid)
    assert r.reached_adaptive >= r.reached_grid
    d = r.to_dict()
    assert {"threshold", "ci", "trials_grid", "trials_adaptive", "target_halfwidth"} <= set(d)
    assert "ci_low" not in d and d["ci"] == [r.ci_low, r.ci_high]
    # to_dict / from_dict round trip through JSON values (the committed summary's format)
    from hcizz.jsonout import from_json_value, to_json_value
    assert ds.DesignComparison.from_dict(from_json_value(to_json_value(r))) == r


def test_designs_draw_the_same_trials(tmp_path):
    # the draw of a trial is a function of (N, d, L, seed) only: recompute it by hand from the documented
    # SeedSequence and compare with the stored records of both designs
    from validation.engine import read_store, stored_runner
    from validation.token_retrieval.runs import run_config

    store = tmp_path / "s.jsonl"
    kw = dict(boundaries=((32, 4),), replicates=1, target=0.3, grid_ns=tuple(range(2, 13)), s_max=2,
              centre=lambda d, L: 6.0)
    res, = _compare(stored_runner(ds.boundary_trial, store, compute=True), **kw)
    ok = read_store(store, warn=False).ok.values()
    # keyed by the trial's stable name, so the study can replay it
    assert {v["fn"] for v in ok} == {"token_retrieval.boundary"}
    recs = [v["result"] for v in ok]
    by = {(x["N"], x["seed"]): x for x in recs}
    # one stored record per distinct (N, seed): a pair both designs asked for is run once
    assert len(by) == len(recs) == res.trials_pooled
    n_grid, n_ad = res.runs["grid"][0].trials, res.runs["adaptive"][0].trials
    assert len(recs) < n_grid + n_ad                        # the first adaptive round lies on the grid
    for (N, s), x in sorted(by.items())[:6]:
        ref = run_config(N, 32, 4, seed=np.random.default_rng(np.random.SeedSequence([ds.ROOT, 32, 4, N, s])))
        assert x["retrieval"] == ref["retrieval"] and x["gap_mean"] == ref["gap_mean"]
    # a replay reads the same trials and runs nothing
    again, = _compare(stored_runner(ds.boundary_trial, store, compute=False), **kw)
    assert again.runs["grid"][0].threshold == res.runs["grid"][0].threshold
    assert again.runs["adaptive"][0].trials == n_ad


def test_replay_needs_the_trials_and_bad_arguments(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(LookupError, match="not in"):
        _STUDY.run(store=tmp_path / "empty.jsonl", progress=False, boundaries="128:8", replicates=1)
    with pytest.raises(ValueError, match="replicates"):
        _compare(_synthetic(3.0, 0.1), replicates=0)
    with pytest.raises(ValueError, match="target"):
        _compare(_synthetic(3.0, 0.1), target=0.0)
    with pytest.raises(ValueError, match="s_max"):                 # 8 values x 126 seeds > a pool of 1000
        _compare(_synthetic(3.0, 0.1), s_max=126)
    # the study's options are checked before anything is read
    for opts, match in [(dict(boundaries="128-8"), "--boundaries items must be d:L pairs"),
                        (dict(boundaries="128:1"), "--boundaries items must be d:L pairs"),
                        (dict(replicates=0), r"--replicates must be an integer in \[1, 1000\]"),
                        (dict(target=float("inf")), r"--target must be a real number in \(0, 10\]")]:
        with pytest.raises(ValueError, match=match):
            _STUDY.run(store=tmp_path / "none.jsonl", **opts)


def test_cli_bad_input_is_one_line(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-m", "validation", "study", "token_retrieval.adaptive_boundary",
                        "--boundaries", "128-8", "--replay"], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--boundaries" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_study_replays_replicate_zero_of_the_committed_comparison():
    # the designs are deterministic functions of the stored outcomes: replaying one replicate of a default
    # boundary follows the committed path round by round and computes nothing
    run = _STUDY.run(compute=False, progress=False, boundaries="128:16", replicates=1)
    assert run.computed == 0 and run.reused == run.trials > 0 and run.missing == 0
    ref = _STUDY.committed_summary().boundaries[1]
    got, = run.outcome.boundaries
    assert got.runs["grid"][0] == ref.runs["grid"][0] and got.runs["adaptive"][0] == ref.runs["adaptive"][0]
    assert "d=128 L=16: N_c" in run.summary()


@pytest.mark.slow
def test_study_computes_on_a_user_store_seeded_from_the_committed_one(tmp_path, monkeypatch):
    # compute=True starts from a copy of the committed store in the working folder: nothing is recomputed
    monkeypatch.chdir(tmp_path)
    opts = dict(boundaries="128:16", replicates=1)
    run = _STUDY.run(compute=True, executor="inprocess", progress=False, **opts)
    assert run.computed == 0 and run.reused == run.trials > 0
    assert run.store == str(tmp_path / "token_retrieval.adaptive_boundary.jsonl")
    rep = _STUDY.run(compute=False, progress=False, **opts)
    assert ab.same_comparison(rep.outcome.boundaries, run.outcome.boundaries)


def test_committed_summary_is_consistent():
    # the committed result the quick report reads: one record per default boundary, internally consistent
    res = _STUDY.committed_summary().boundaries
    assert [(r.d, r.L) for r in res] == [tuple(b) for b in ab.BOUNDARIES]
    for r in res:
        assert r.replicates == ab.REPLICATES and r.target_halfwidth == ab.TARGET
        for k in ("grid", "adaptive"):
            t = np.array([x.trials for x in r.runs[k]], float)
            assert len(t) == r.replicates and r[f"trials_{k}"] == pytest.approx(t.mean(), rel=1e-12)
            assert r[f"reached_{k}"] == sum(x.reached for x in r.runs[k])
            # a replicate that reached the target has an interval at most twice the target wide (in log N)
            for x in r.runs[k]:
                if x.reached:
                    assert math.log(x.ci_high / x.ci_low) <= 2 * r.target_halfwidth + 1e-12
            assert t.max() <= len(ab.GRID_NS) * ab.S_MAX
        assert r.ci_low <= r.threshold <= r.ci_high


def test_read_comparisons_refuses_other_files(tmp_path):
    with pytest.raises(LookupError, match="no adaptive-design summary"):
        ds.read_comparisons(tmp_path / "none.json")
    (tmp_path / "x.json").write_text('{"boundaries": [{"d": 1}]}')
    with pytest.raises(ValueError, match="not an adaptive-design summary"):
        ds.read_comparisons(tmp_path / "x.json")


def test_same_comparison_tolerates_only_last_digits():
    r = _STUDY.committed_summary().boundaries
    from dataclasses import replace
    assert ab.same_comparison(r, [replace(r[0], centre=r[0].centre * (1 + 1e-15))] + r[1:])
    assert not ab.same_comparison(r, [replace(r[0], centre=r[0].centre * (1 + 1e-9))] + r[1:])
    assert not ab.same_comparison(r, [replace(r[0], trials_pooled=r[0].trials_pooled + 1)] + r[1:])


@pytest.mark.slow
def test_replay_of_the_committed_store_equals_the_summary():
    # the full report replays the committed store: it must reproduce the committed summary (the designs are
    # deterministic functions of the stored outcomes; the theory's centre to its last digits); ~700 fits
    rep = _STUDY.run(compute=False, progress=False)
    assert ab.same_comparison(rep.outcome.boundaries, _STUDY.committed_summary().boundaries)
