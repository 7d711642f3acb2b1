"""alpha_c_finite(p, kappa=...): the rank-constrained finite-p capacity alpha_c(kappa) ln p / E[V_p].

Oracles: the full-rank value from E[V_p] (v_p, same draws), mpmath alpha_c(kappa)
(Newton in theta at 30 digits, a separate code path), E[V_2] = 1/4 exactly.
"""
import json
import math

import numpy as np
import pytest

from hcizz.cli import run_cli
from replica import alpha_c, alpha_c_finite, v_p
from replica.__main__ import main


@pytest.mark.parametrize("p", [2, 163, 10**6])
def test_kappa_one_is_the_full_rank_value_exactly(p):
    e = alpha_c_finite(p, kappa=1.0, samples=3000, rng=11)
    ev = v_p(p, samples=3000, rng=11)          # same seed -> same draws, E[V_p] only
    # ln p * (1/2) is exact (halving), so both are the correctly rounded ln p / (2 E[V])
    assert e.value == math.log(p) / (2 * ev.value)
    assert e.value == alpha_c_finite(p, samples=3000, rng=11).value
    assert e.info["alpha_c_kappa"] == 0.5


def test_product_structure_against_mpmath():
    kap = np.array([0.05, 0.25, 0.5, 0.75, 1.0])
    p = 500
    lo = alpha_c_finite(p, kappa=kap, samples=4000, rng=3)
    full = alpha_c_finite(p, samples=4000, rng=3)
    ref = np.array([float(2 * alpha_c(float(k), dps=30)) for k in kap])
    # value/full = 2 alpha_c(kappa): float alpha_c is accurate to ~1e-15 relative and
    # the ratio adds ~3 roundings, so 1e-13 relative is a generous bound
    np.testing.assert_allclose(lo.value / full.value, ref, rtol=1e-13)
    np.testing.assert_allclose(lo.stderr / full.stderr, ref, rtol=1e-13)
    np.testing.assert_allclose(lo.info["pc_over_d2"] * math.log(p), lo.value, rtol=1e-14)
    assert lo.value.shape == kap.shape and lo.info["E_V"] == full.info["E_V"]


def test_vectorised_equals_scalar_calls():
    kap = [[0.3, 0.6], [0.9, 1.0]]
    arr = alpha_c_finite(1000, kappa=kap, samples=2000, rng=5)
    assert arr.value.shape == (2, 2)
    for i in range(2):
        for j in range(2):
            s = alpha_c_finite(1000, kappa=kap[i][j], samples=2000, rng=5)
            # same draws; alpha_c of an array and of a scalar agree to a few ulp
            assert abs(arr.value[i, j] - s.value) <= 4e-16 * s.value
            assert abs(arr.stderr[i, j] - s.stderr) <= 4e-16 * s.stderr


@pytest.mark.parametrize("kappa", [0.25, 0.5])
def test_p2_closed_form(kappa):
    # E[V_2] = 1/4 exactly, so alpha_c(kappa, 2) = 4 ln 2 alpha_c(kappa)
    e = alpha_c_finite(2, kappa=kappa, samples=40_000, rng=1)
    exact = 4 * math.log(2) * float(alpha_c(kappa, dps=30))
    assert abs(e.value - exact) < 5 * e.stderr        # 5 sigma: false-alarm rate ~6e-7
    assert e.stderr < 0.01 * exact


def test_monotone_in_kappa_and_below_full_rank():
    e = alpha_c_finite(300, kappa=np.linspace(0.1, 1.0, 10), samples=2000, rng=2)
    assert np.all(np.diff(e.value) > 0)               # alpha_c(kappa) increases strictly


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan"), float("inf"), "0.5", None, True, [0.5, 0.0]])
def test_bad_kappa_refused_before_sampling(bad):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"^kappa must be a real number in \(0, 1\]"):
        alpha_c_finite(10, kappa=bad, samples=10, rng=rng)
    assert rng.bit_generator.state == state          # nothing drawn on a refused call


def _cli(argv, capsys):
    rc = run_cli(main, argv, prog="python -m replica")
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_kappa_json(capsys):
    rc, out, err = _cli(["alpha-c-finite", "163", "--kappa", "0.5", "1", "--samples", "2000", "--json"], capsys)
    assert rc == 0, err
    rows = json.loads(out)["results"]
    assert [r["kappa"] for r in rows] == [0.5, 1.0]
    ref = float(alpha_c(0.5, dps=30)) / 0.5
    assert abs(rows[0]["value"] / rows[1]["value"] - ref) < 1e-13   # shared E[V_p]
    assert rows[1]["limit"] == 0.5


@pytest.mark.parametrize("argv", [["alpha-c-finite", "163", "--kappa", "0"],
                                  ["alpha-c-finite", "163", "--kappa", "0.5", "2"]])
def test_cli_bad_kappa_one_line_exit_2(argv, capsys):
    rc, out, err = _cli(argv, capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "kappa must be" in err


def test_self_consistent_lowrank_threshold():
    from replica.load import load_of
    from validation.linear_memory.theory import full_rank_threshold, lowrank_finite_threshold

    e = lowrank_finite_threshold(30, 0.5, samples=4000)
    p = e.info["p"]
    # fixed point: the value is alpha_c(0.5, p) at the p whose load is closest to it
    assert e.value == alpha_c_finite(p, kappa=0.5, samples=4000, rng=0).value
    assert abs(load_of(p, 30) - e.value) < (load_of(p + 1, 30) - load_of(p, 30))
    assert lowrank_finite_threshold(30, 1.0, samples=4000).value == full_rank_threshold(30, samples=4000).value
