"""The finite-size law of the exact capacity (validation.linear_memory.finite_size).

Oracles: exact synthetic data (closed-form parameters), Monte Carlo over noise
replicates (the reported standard errors against the scatter of the estimates),
scipy.optimize.curve_fit as an independent weighted least-squares solver, and
hand-worked comparisons.
"""
import math

import numpy as np
import pytest
from scipy.optimize import curve_fit

from validation.linear_memory.finite_size import compare_models, excess_fits, threshold_points

Z = 1.959963984540054


def _row(d, thr, se, theory=1.0, th_se=0.0, p=None):
    return {"d": d, "threshold": thr, "ci": [thr - Z * se, thr + Z * se], "theory": theory,
            "theory_stderr": th_se, "p_at_threshold": p or 10 * d}


def test_excess_error_by_delta_method():
    # r = t / th - 1; var r = (se/th)^2 + (t se_th / th^2)^2, worked by hand
    pt = threshold_points([_row(50, 1.1, 0.01, theory=1.0, th_se=0.005)])[0]
    assert pt.excess == pytest.approx(0.1, rel=1e-12)
    assert pt.excess_stderr == pytest.approx(math.hypot(0.01, 1.1 * 0.005), rel=1e-12)
    # a row without a finite threshold is left out
    assert threshold_points([_row(60, math.nan, 0.01)]) == []


def test_fits_agree_with_curve_fit():
    # an independent weighted least-squares solver (absolute_sigma: errors taken as known)
    rng = np.random.default_rng(3)
    ds = np.array([20, 30, 40, 60, 80, 100])
    se = np.array([0.02, 0.015, 0.012, 0.01, 0.008, 0.008])
    thr = 1 + 0.3 / np.sqrt(ds) + 0.004 + se * rng.standard_normal(len(ds))
    rows = [_row(int(d), float(t), float(s)) for d, t, s in zip(ds, thr, se)]
    fits = {(f.form, f.offset): f for f in excess_fits(rows)}
    for form, x in (("1/d", 1 / ds), ("1/sqrt(d)", 1 / np.sqrt(ds)), ("ln p/d", np.log(10 * ds) / ds),
                    ("p/d^2", 10 * ds / ds**2)):
        (a,), cov = curve_fit(lambda x, a: a * x, x, thr - 1, sigma=se, absolute_sigma=True)
        f = fits[(form, False)]
        assert f.amplitude == pytest.approx(a, rel=1e-7) and f.amplitude_stderr == pytest.approx(
            math.sqrt(cov[0, 0]), rel=1e-6)          # curve_fit's own convergence: 1e-8 relative
        (a, b), cov = curve_fit(lambda x, a, b: a * x + b, x, thr - 1, sigma=se, absolute_sigma=True)
        f = fits[(form, True)]
        assert (f.amplitude, f.constant) == pytest.approx((a, b), rel=1e-6, abs=1e-9)
        assert f.constant_stderr == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-6)
        assert f.chi2 == pytest.approx(np.sum(((thr - 1 - a * x - b) / se) ** 2), rel=1e-6)
        assert f.dof == 4


def test_stderr_and_chi2_calibrated_by_monte_carlo():
    # 4000 noise replicates of a true law r = 0.4/d: the spread of A-hat matches its reported
    # standard error (4000 replicates: relative s.e. of an s.d. ~ 1.1 %, so 5 % is > 4 sigma), and
    # the chi2 p-values are uniform (mean 1/2 +- 5 s.e. of 0.0046)
    rng = np.random.default_rng(11)
    ds = np.array([20, 40, 60, 80, 100])
    se = np.full(5, 0.01)
    est, pv, rep = [], [], None
    for _ in range(4000):
        thr = 1 + 0.4 / ds + se * rng.standard_normal(5)
        f = excess_fits([_row(int(d), float(t), 0.01) for d, t in zip(ds, thr)], forms=("1/d",))[0]
        est.append(f.amplitude)
        pv.append(f.p_value)
        rep = f.amplitude_stderr
    assert np.mean(est) == pytest.approx(0.4, abs=5 * rep / math.sqrt(4000))
    assert np.std(est) == pytest.approx(rep, rel=0.05)
    assert abs(np.mean(pv) - 0.5) < 5 * math.sqrt(1 / 12 / 4000)


def test_compare_models_verdicts():
    op = [_row(20, 1.00, 0.01), _row(30, 1.00, 0.01)]
    dp = [_row(20, 0.98, 0.01), _row(30, 0.96, 0.01), _row(40, 1.0, 0.01)]
    c20, c30 = compare_models(op, dp)                 # d = 40 has no OP threshold: left out
    # d = 20: 0.02 / (0.01 sqrt 2) = 1.41 sigma -> the interval contains 0
    assert c20.verdict == "agrees" and c20.z == pytest.approx(0.02 / (0.01 * math.sqrt(2)), rel=1e-9)
    # d = 30: 0.04 / 0.01414 = 2.83 sigma
    assert c30.verdict == "differs by 0.040 (2.8 sigma)"
    assert c30.conf_int() == pytest.approx((0.04 - Z * 0.01 * math.sqrt(2), 0.04 + Z * 0.01 * math.sqrt(2)))


def test_bad_input():
    with pytest.raises(ValueError, match="forms must be among"):
        excess_fits([_row(20, 1, 0.01), _row(30, 1, 0.01)], forms=("d^2",))
    with pytest.raises(ValueError, match="at least 2 finite thresholds, got 1"):
        excess_fits([_row(20, 1, 0.01)])
