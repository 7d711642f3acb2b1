"""Token-retrieval experiments: tiny runs, boundary fits on synthetic data
with known exponents, bad inputs, CLI."""
import math

import numpy as np
import pytest

from validation.token_retrieval import experiments as ex
from validation.token_retrieval.boundary import (aggregate, boundary_points, fit_boundary, fit_power_law,
                                                 logistic_fit, multiplicative_test)
from validation.token_retrieval.runs import compare_gd, run_config
from validation.token_retrieval.success import extreme_success_prob, gaussian_success_prob


def test_run_config_tiny():
    r = run_config(4, 16, 3, seed=0)
    for k in ("recall", "retrieval", "test_acc", "margin_mean", "p_recall_snr", "gamma"):
        assert k in r
    assert 0 <= r["test_acc"] <= 1 and 0 <= r["p_recall_snr"] <= 1
    assert r["V"] == 16


def test_orthogonal_short_sequences_recall():
    # one-hot embeddings, L = 2: by hand the trigger gives the informative token
    # score advantage and the recall margin is ~1 for every sample
    for s in range(3):
        r = run_config(8, 40, 2, seed=s, kind="orthogonal")
        assert r["recall"] and r["retrieval"]


def test_mlp_runs():
    r = run_config(4, 16, 3, seed=0, m=32)
    assert r["m"] == 32


@pytest.mark.parametrize("kw,name", [(dict(N=4, d=8, L=1), "L"), (dict(N=4, d=0, L=3), "d"),
                                     (dict(N=0, d=8, L=3), "N"), (dict(N=1, d=8, L=3, V=1), "V"),
                                     (dict(N=4, d=8, L=3, m=0), "m")])
def test_bad_inputs(kw, name):
    N, d, L = kw.pop("N"), kw.pop("d"), kw.pop("L")
    with pytest.raises(ValueError, match=f"^{name} must"):
        run_config(N, d, L, **kw)


def test_gaussian_success_prob():
    Phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    assert abs(gaussian_success_prob(1.0, 2.0, 5) - Phi(0.5) ** 5) < 1e-12
    assert gaussian_success_prob(1.0, 0.0, 3) == 1.0


def test_boundary_points_interpolation():
    # fraction 0 at N=4, 1 at N=16: crossing 1/2 at the geometric midpoint 8
    frac = {(4, 10, 2): (0.0, 3), (16, 10, 2): (1.0, 3), (64, 10, 2): (1.0, 3)}
    p = boundary_points(frac)
    assert len(p) == 1 and abs(p[0]["N"] - 8.0) < 1e-12 and p[0]["d"] == 10
    frac = {(4, 10, 2): (1.0, 3), (16, 10, 2): (0.75, 3), (64, 10, 2): (0.25, 3)}
    p = boundary_points(frac, direction="down")
    assert abs(p[0]["N"] - 32.0) < 1e-9


def _synthetic(law, rng, seeds=6, noise=0.3):
    """Records whose success is N > law(d, L) * exp(noise * gaussian)."""
    recs = []
    for N in 2.0 ** np.arange(1, 14):
        for d in (8, 16, 32, 64):
            for L in (2, 4, 8, 16):
                for s in range(seeds):
                    ok = N > law(d, L) * math.exp(noise * rng.standard_normal())
                    recs.append({"N": N, "d": d, "L": L, "seed": s, "retrieval": ok})
    return recs


def _interp_bias_bound(points, interaction=False, noise=0.3, h=math.log(2)):
    """Bound on the bias of each fitted coefficient caused by locating the
    crossing by linear interpolation in log N on a grid of spacing ``h``.

    With infinitely many seeds the success fraction of :func:`_synthetic` is
    ``Phi(x / noise)``, ``x = log(N / law)``; interpolating it linearly
    between grid points at ``-a`` and ``h - a`` puts the crossing at
    ``x* = -a + h (1/2 - f0) / (f1 - f0)`` instead of 0.  ``B = max_a |x*|``
    bounds the error of every boundary point, so coefficient ``j`` of the
    least squares ``pinv(X) y`` is off by at most ``B * sum_i |pinv(X)_ji|``.
    """
    from scipy import stats
    a = np.linspace(1e-9, h - 1e-9, 4001)
    f0, f1 = stats.norm.cdf(-a / noise), stats.norm.cdf((h - a) / noise)
    B = np.max(np.abs(-a + h * (0.5 - f0) / (f1 - f0)))
    ld, lL = np.log([p["d"] for p in points]), np.log([p["L"] for p in points])
    cols = [np.ones(len(points)), ld, lL] + ([ld * lL] if interaction else [])
    return B * np.abs(np.linalg.pinv(np.column_stack(cols))).sum(axis=1)


def test_fit_boundary_recovers_exponents():
    rng = np.random.default_rng(0)
    recs = _synthetic(lambda d, L: 3.0 * L ** 1.5 / d, rng)
    f = fit_boundary(recs, "retrieval", n_boot=60, rng=1)
    bias = _interp_bias_bound(f.points)
    for j, (v, true) in enumerate((("d", -1.0), ("L", 1.5)), start=1):
        e = f.exponents[v]
        # statistical error (5 bootstrap sigma) + the grid-interpolation bias bound
        assert abs(e.value - true) < 5 * e.stderr_boot + bias[j]
        # the least-squares interval is the Student-t one of the stated stderr (dof = points - 3)
        from scipy import stats
        tq = stats.t.ppf(0.975, f.n_points - 3)
        assert e.conf_int() == pytest.approx((e.value - tq * e.stderr, e.value + tq * e.stderr), rel=1e-12)
    lg = logistic_fit(recs, "retrieval")
    for v, true in (("d", -1.0), ("L", 1.5)):
        e = lg.exponents[v]
        assert abs(e.value - true) < 5 * e.stderr


def test_logistic_fit_recovers_coefficients():
    rng = np.random.default_rng(2)
    n = 4000
    recs = []
    b = np.array([-1.0, 2.0, -1.0, 0.5])
    for _ in range(n):
        N, d, L = np.exp(rng.uniform(0, 3, 3))
        eta = b @ [1, np.log(N), np.log(d), np.log(L)]
        recs.append({"N": N, "d": d, "L": L, "ok": rng.random() < 1 / (1 + np.exp(-eta))})
    lg = logistic_fit(recs, "ok", ridge=0.0)
    for name, true in zip(("const", "N", "d", "L"), b):
        assert abs(lg.coef[name] - true) < 5 * lg.stderr[name]


def test_multiplicative_test_detects_interaction():
    rng = np.random.default_rng(3)
    prod = _synthetic(lambda d, L: 3.0 * L / d, rng)
    assert multiplicative_test(prod, "retrieval").p_value > 1e-3
    inter = _synthetic(lambda d, L: 3.0 * L ** (1 + np.log(d)) / d, rng)
    assert multiplicative_test(inter, "retrieval").p_value < 1e-6


def test_grid_and_cli(capsys):
    from validation.__main__ import main
    recs = ex.run_grid((2, 4), (8,), (2,), seeds=2, seed=0)
    assert len(recs) == 4 and {r["seed"] for r in recs} == {0, 1}
    rc = main(["token-retrieval", "phase", "--N", "2,4", "--d", "8", "--L", "2", "--seeds", "1",
               "--json"])
    assert rc == 0 and '"recall"' in capsys.readouterr().out


def test_compare_gd_tiny():
    r = compare_gd(4, 16, 3, seed=0, steps=40)
    assert set(r.keys()) >= {"early", "gd"} and 0 <= r.gd["test_acc"] <= 1


def test_extreme_success_prob_monte_carlo():
    # oracle: direct simulation of the Gaussian scores (MC stderr stated)
    rng = np.random.default_rng(5)
    mu_c, sd_c, groups, n = 2.0, 0.5, [(1.0, 0.4, 3), (0.0, 0.6, 10)], 2
    M = 200_000
    c = mu_c + sd_c * rng.standard_normal((M, n))
    ok = np.ones((M, n), bool)
    for mu, sd, cnt in groups:
        w = mu + sd * rng.standard_normal((M, n, cnt))
        ok &= c > w.max(axis=2)
    ok = ok.all(axis=1)
    p_mc, se = ok.mean(), ok.std() / np.sqrt(M)
    p = extreme_success_prob(mu_c, sd_c, groups, n)
    assert abs(p - p_mc) < 5 * se
    # a single competitor with sd_c = 0 reduces to Phi(.)^n
    assert abs(extreme_success_prob(1.0, 0.0, [(0.0, 2.0, 1)], 3)
               - gaussian_success_prob(1.0, 2.0, 3)) < 1e-12


def test_fit_boundary_interaction():
    rng = np.random.default_rng(6)
    f0 = fit_boundary(_synthetic(lambda d, L: 3.0 * L ** 1.5 / d, rng), "retrieval", n_boot=50, rng=0)
    g0 = f0.interaction
    assert abs(g0.value) < 5 * g0.stderr + _interp_bias_bound(f0.points, True)[3]
    f1 = fit_boundary(_synthetic(lambda d, L: 3.0 * L ** (0.5 + 0.5 * np.log(d)) / d, rng),
                      "retrieval", n_boot=50, rng=0)
    g1 = f1.interaction
    assert abs(g1.value - 0.5) < 5 * g1.stderr + _interp_bias_bound(f1.points, True)[3]
    assert g1.p_value < 0.05


@pytest.mark.slow
def test_report_section_quick(tmp_path):
    # about 20 s CPU: the quick report section end to end
    from validation.report import reproduce
    rep = reproduce(tmp_path, quick=True, sections=["token_retrieval"], fresh=True)
    tr = rep["token_retrieval"]
    # quick mode fits no power-law boundary (too few points; docs/token_retrieval.md#quick-report)
    # but carries the theory-vs-simulation contract of the section
    assert {"theory", "theory_vs_sim", "moments_check", "lower_bound"} <= set(tr)
    tvs = tr["theory_vs_sim"]
    assert tvs["points"] and 0 <= tvs["mean_abs_error"] <= tvs["max_abs_error"] <= 1
    assert all("stderr" in m and "predicted" in m for m in tr["moments_check"])
    assert all("stderr" in e for e in tr["exponents"]["retrieval_logistic"].values())


_FRAC = {(4, 10, 2): (0.0, 3), (16, 10, 2): (1.0, 3)}
_RECS = [{"N": N, "d": d, "L": 2, "ok": N > d} for N in (2, 4, 8, 16) for d in (2, 4)]


@pytest.mark.parametrize("call,match", [
    (lambda: run_config(4, 8, 3, vocab_ratio=0.5), r"^vocab_ratio must be a real number in \[1, inf\), got 0.5"),
    (lambda: run_config(4, 8, 3, eta=float("inf")), r"^eta must be a real number in \(0, inf\), got inf"),
    (lambda: run_config(4, 8, 3, beta=float("inf")), r"^beta must be a real number in \(0, inf\), got inf"),
    (lambda: ex.run_grid((2,), (8,), (2,), vocab_ratio=float("inf")), r"^vocab_ratio must be .* got inf"),
    (lambda: ex.run_grid((2, 0), (8,), (2,)), r"^N must be an integer >= 1, got 0"),
    (lambda: ex.run_grid((2,), (8,), (2,), foo=1), r"^run options must be among .* got foo"),
    (lambda: ex.grid_records("huge"), r"^preset must be one of quick, full, got 'huge'"),
    (lambda: run_config(4, 8, 3, seed=-1), r"^seed must be an integer >= 0, got -1"),
    (lambda: run_config(4, 8, 3, eta=0.0), r"^eta must be"),
    (lambda: run_config(4, 8, 3, V=3), r"^N must be <= V = 3"),
    (lambda: boundary_points(_FRAC, direction="left"), r"^direction must be 'up' or 'down', got 'left'"),
    (lambda: boundary_points(_FRAC, level=1.0), r"^level must be a real number in \(0, 1\), got 1.0"),
    (lambda: boundary_points(_FRAC, along="m"), r"^along must be one of"),
    (lambda: fit_boundary(_RECS, "ok", n_boot=-1), r"^n_boot must be an integer >= 0, got -1"),
    (lambda: fit_boundary(_RECS, "missing"), r"records\[0\] has no field"),
    (lambda: logistic_fit(_RECS, "ok", ridge=-1), r"^ridge must be a real number >= 0, got -1"),
    (lambda: logistic_fit(_RECS[:2], "ok"), r"^records must hold at least 4 runs, got 2"),
    (lambda: multiplicative_test(_RECS, "ok", ridge=float("nan")), r"^ridge must be"),
    (lambda: gaussian_success_prob(1.0, -1.0, 2), r"^std must be a real number >= 0, got -1.0"),
    (lambda: gaussian_success_prob(1.0, 1.0, -2), r"^n must be an integer >= 0, got -2"),
    (lambda: extreme_success_prob(1.0, -0.5, [], 2), r"^sd_c must be a real number >= 0"),
    (lambda: extreme_success_prob(1.0, 0.5, [(0, 1)], 2), r"^groups\[0\] must be \(mu, sd, count\)"),
    (lambda: extreme_success_prob(1.0, 0.5, [], 2, nodes=0), r"^nodes must be an integer >= 1, got 0"),
    (lambda: ex.run_grid((2,), (8,), (2,), seeds=0), r"^seeds must be an integer in \[1, 10000\], got 0"),
])
def test_bad_inputs_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_run_grid_through_engine_matches_serial_and_resumes(tmp_path):
    # the engine path (JSON round trip, store) gives exactly the serial results;
    # orthogonal d = 16 < V + 2 = 4N + 2 at N = 4 is skipped in both
    grid = ((2, 4), (16,), (3,))
    kw = dict(seeds=2, seed=1, kind="orthogonal")
    ref = ex.run_grid(*grid, **kw)
    store = tmp_path / "tr.jsonl"
    eng = ex.run_grid(*grid, executor="inprocess", store=store, **kw)
    assert [r["N"] for r in ref] == [2, 2] and eng == ref
    again = ex.run_grid(*grid, executor="inprocess", store=store, **kw)   # all from the store
    assert again == ref
    from validation.engine import read_store
    assert len(read_store(store).ok) == 4           # 2 runs + 2 skipped configurations
    with pytest.raises(ValueError, match="^store and workers need an executor"):
        ex.run_grid(*grid, store=store)
    with pytest.raises(ValueError, match="beta must be"):
        ex.run_grid(*grid, executor="inprocess", beta=-1.0)


def test_grid_trial_has_its_stable_name():
    # stored grid runs are keyed by the trial's stable name, which does not depend on its module
    from validation.engine.keys import fn_name
    assert fn_name(ex.grid_trial) == "token_retrieval.grid"


def test_power_law_fit_recovers_an_exact_law():
    # exact oracle: points on N = 3 d^0.5 L (no noise) -> coefficients (log 3, 0.5, 1), residual 0
    pts = [{"N": 3.0 * d ** 0.5 * L, "d": d, "L": L} for d in (4, 16, 64, 256) for L in (2, 8, 32)]
    f = fit_power_law(pts)
    assert f.coef() == pytest.approx([math.log(3), 0.5, 1.0], abs=1e-12)
    assert all(e.stderr < 1e-12 for e in f.exponents.values()) and f.dof == len(pts) - 3
    with pytest.raises(ValueError, match="at least 3 points"):
        fit_power_law(pts[:2])


def test_grid_params_seed_by_position_and_checks_before_any_run(monkeypatch):
    # the documented seeding: SeedSequence([seed, i_L, i_d, i_N, s]); grid_trial reproduces run_config on it
    q = ex.grid_params((2, 4), (16,), (3, 5), seeds=2, seed=7)
    assert [p["entropy"] for p in q[:3]] == [[7, 0, 0, 0, 0], [7, 0, 0, 0, 1], [7, 0, 0, 1, 0]]
    ref = run_config(4, 16, 5, seed=np.random.default_rng(np.random.SeedSequence([7, 1, 0, 1, 1])))
    got = ex.grid_trial(q[-1])
    assert got["seed"] == 1 and {k: got[k] for k in ref} == ref
    # a bad option of a grid is refused before the first run (nothing is run)
    calls = []
    monkeypatch.setattr(ex, "grid_trial", lambda p: calls.append(p))
    with pytest.raises(ValueError, match="^eta must be a real number in"):
        ex.run_grid((2, 4), (16,), (3,), eta=0.0, progress=calls.append)
    assert calls == []


def _assert_same_records(a, b, path="runs"):
    """Equal records: same keys, types and discrete values; floats to 1e-9 relative."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for k in a:
            _assert_same_records(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_records(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert b == pytest.approx(a, rel=1e-9, abs=0.0, nan_ok=True), path
    else:
        assert type(a) is type(b) and a == b, path


def test_grid_study_replays_the_committed_quick_preset_as_computed_serially():
    # the committed store of study token_retrieval.grid holds the quick preset at seed 0: a replay finds
    # every planned run and computes nothing, and its main-grid runs are those of the serial loop
    # (run_grid without engine or store: an independent path through the same trial)
    from validation.studies import get_study

    s = get_study("token_retrieval.grid")
    run = s.run(compute=False, progress=False)
    assert run.missing == 0 and run.computed == 0 and run.reused == run.trials == 56
    g = ex.PRESETS["quick"]["grid"]
    ref = ex.run_grid(g["Ns"], g["ds"], g["Ls"], seeds=g["seeds"], seed=0)
    got = run.results["grid"]
    assert len(got) == len(ref) == run.outcome.runs == 24
    # the stored runs were computed on another machine: outcomes, counts and keys must be identical,
    # floats equal up to the rounding of a different BLAS kernel order (a few ulps, times the
    # conditioning of tail probabilities such as p_recall_snr ~ 1e-44: seen 4e-14 relative; 1e-9 is ample)
    _assert_same_records(got, ref)
    out = run.outcome
    assert out.success["retrieval"] == aggregate(ref, "retrieval")
    assert out.mlp is None and out.beta is None                     # scans: full preset only
    # the outcome's summary names the grid and the fits
    assert "token_retrieval.grid (quick, seed 0)" in out.summary()


def test_grid_study_options_and_plan():
    from validation.studies import get_study

    s = get_study("token_retrieval.grid")
    with pytest.raises(ValueError, match="--preset must be a name among quick, full, got 'huge'"):
        s.run(preset="huge")
    with pytest.raises(ValueError, match="--seed must be an integer >= 0, got -1"):
        s.run(seed=-1)
    full = s.parts("full", 0)
    assert [p for p, _, _ in full].count("mlp") == 1 + len(ex.PRESETS["full"]["mlp"]["ms"])
    assert sum(len(q) for _, _, q in full) == 1280 + 2 * 96 + 4 * 144 + 3 * 96
    assert s.command(preset="full") == "python -m validation study token_retrieval.grid --preset full"
    parts = ex.plan("quick", parts=("orthogonal",))
    with pytest.raises(ValueError, match="one result per planned run"):
        ex.group(parts, [])
    with pytest.raises(ValueError, match="parts must be among"):
        ex.plan("quick", parts=("bogus",))
