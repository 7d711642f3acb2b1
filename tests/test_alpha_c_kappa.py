"""Rank-constrained capacity alpha_c(kappa): closed form vs mpmath vs quadrature."""
import mpmath as mp
import numpy as np
import pytest

from replica.rank_capacity import (alpha_c, alpha_c_quad, alpha_c_small_kappa, capacity_from_profile,
                                   coupling_maximiser_check, quantile_coupling, theta_kappa)


def test_endpoints_and_paper_values():
    assert alpha_c(1.0) == 0.5
    assert alpha_c(np.array([1.0]))[0] == 0.5
    # The closed form (checked against two independent quadratures below) does not
    # reproduce the 0.46 (kappa = 0.5) quoted in the paper summary; see docs/rank_constrained.md.
    assert alpha_c(0.5) == pytest.approx(0.4468653969390, abs=1e-12)
    assert alpha_c(0.25) == pytest.approx(0.3114562756392, abs=1e-12)
    assert abs(alpha_c(0.5) - 0.46) > 0.01


def test_against_mpmath_path_on_random_kappa():
    kappa = np.random.default_rng(0).uniform(0, 1, 10_000)
    kappa = np.concatenate([kappa[kappa > 0], 10.0 ** -np.arange(1, 13), [1 - 1e-12, 1.0]])
    got = alpha_c(kappa)
    ref = alpha_c(kappa, dps=25)
    rel = max(abs((mp.mpf(g) - r) / r) for g, r in zip(got, ref))
    assert rel < 1e-13


def test_against_quadrature_oracle():
    for k in [1e-3, 0.01, 0.1, 0.25, 0.5, 0.77, 0.999, 1.0]:
        assert alpha_c(k) == pytest.approx(alpha_c_quad(k), rel=1e-12)


def test_mpmath_value_solves_theta_equation():
    with mp.workdps(50):
        th = mp.findroot(lambda t: 2 * t + mp.sin(2 * t) - mp.pi * mp.mpf(3) / 4, 0.5)
        ref = mp.mpf(1) / 2 - (th - mp.sin(4 * th) / 4) / mp.pi
        assert abs(alpha_c(0.25, dps=40) - ref) < mp.mpf(10) ** -38
    assert theta_kappa(0.25) == pytest.approx(float(th), abs=1e-15)


def test_small_kappa_expansion():
    k = np.array([1e-6, 1e-5, 1e-4, 1e-3])
    a = alpha_c(k)
    err1 = np.abs(a - alpha_c_small_kappa(k, order=1))
    err2 = np.abs(a - alpha_c_small_kappa(k, order=2))
    # leading correction ~ kappa^(5/3), next ~ kappa^(7/3): check the exponents from successive ratios
    slope1 = np.diff(np.log(err1)) / np.diff(np.log(k))
    slope2 = np.diff(np.log(err2)) / np.diff(np.log(k))
    assert np.allclose(slope1, 5 / 3, atol=0.01)
    assert np.allclose(slope2, 7 / 3, atol=0.02)


def test_derivative_is_half_squared_quantile():
    # d alpha_c / d kappa = X_qc(1 - kappa)^2 / 2 (fundamental theorem of calculus)
    from hcizz import qc_quantile

    for k in (0.2, 0.6, 0.9):
        h = 1e-5
        num = (alpha_c(k + h) - alpha_c(k - h)) / (2 * h)
        assert num == pytest.approx(qc_quantile(1 - k) ** 2 / 2, rel=1e-8)


def test_monotone_and_vectorised_shape():
    k = np.linspace(0.01, 1, 200).reshape(20, 10)
    a = alpha_c(k)
    assert a.shape == (20, 10)
    assert np.all(np.diff(a.ravel()) > 0)


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.0000001, float("nan"), [0.5, 2.0], "x"])
def test_bad_kappa(bad):
    with pytest.raises(ValueError, match="kappa"):
        alpha_c(bad)


def test_bad_dps():
    with pytest.raises(ValueError, match="dps"):
        alpha_c(0.5, dps=2)


@pytest.mark.parametrize("kappa", [1.0, 0.5, 0.25])
def test_truncated_quarter_circle_maximises_coupling(kappa):
    res = coupling_maximiser_check(kappa, rng=1, n_trials=10)
    assert res["optimum"] == pytest.approx(alpha_c(kappa), rel=1e-9)
    assert max(res["others"]) < res["optimum"]
    assert res["ok"]


def test_coupling_of_sampled_spectrum_approaches_optimum():
    from hcizz import truncated_quarter_circle

    law = truncated_quarter_circle(0.5)
    s = np.sort(law.ppf((np.arange(2000) + 0.5) / 2000))
    c = capacity_from_profile(s, 0.5)
    assert c <= alpha_c(0.5) * (1 + 1e-12)
    assert c == pytest.approx(alpha_c(0.5), rel=1e-5)
    # Cauchy-Schwarz bound for an arbitrary spectrum (flat)
    assert quantile_coupling(np.ones(100), 0.5) ** 2 / 2 < alpha_c(0.5)


def test_cli_alpha_c(capsys):
    import json

    from replica.__main__ import main

    assert main(["alpha-c", "--kappa", "1", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    vals = [r["alpha_c"] for r in out["results"]]
    assert vals[0] == 0.5 and abs(vals[1] - alpha_c_quad(0.5)) < 1e-12
    assert main(["alpha-c", "--kappa", "0.25", "--dps", "30"]) == 0
    assert "0.31145627563918" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# property-based tests over the whole parameter domain (hypothesis)
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1.0))
def test_properties(kappa):
    a = alpha_c(kappa)
    # 0 < alpha_c <= min(1/2, 2 kappa): X_qc^2 <= 4 on the top kappa quantiles and
    # the full integral is 1/2; strictly below 2 kappa unless the quantiles all sit at 2
    assert 0 < a <= 0.5 and a <= 2 * kappa * (1 + 4e-16)     # (up to rounding)
    assert a == pytest.approx(float(alpha_c(kappa, dps=30)), rel=1e-13)
    if kappa < 1e-4:      # small-kappa expansion, error O(kappa^(7/3)) relative kappa^(4/3)
        assert a == pytest.approx(alpha_c_small_kappa(kappa), rel=10 * kappa ** (4 / 3) + 1e-15)


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0, exclude_min=True),
                 st.just(float("nan"))))
def test_rejects_kappa_outside(kappa):
    with pytest.raises(ValueError, match=r"^kappa must be a real number in \(0, 1\], got"):
        alpha_c(kappa)
    with pytest.raises(ValueError, match=r"^kappa must be"):
        alpha_c(np.array([0.5, kappa]))


# ------------------------------------------------ dps: high-precision inputs, never via float
import decimal  # noqa: E402
import fractions  # noqa: E402

import mpmath  # noqa: E402

from hcizz import qc_quantile_mp  # noqa: E402


def _alpha_c_oracle(kappa_mpf, dps):
    """Independent mpmath oracle: y - sin y = pi kappa by mpmath's secant
    method from the leading-order start (6 pi kappa)^(1/3) (no float code), alpha = (2y - sin 2y) / (4 pi)."""
    with mpmath.workdps(dps + 20):
        k = mpmath.mpf(kappa_mpf)
        y0 = min(mpmath.cbrt(6 * mpmath.pi * k), mpmath.pi)  # leading order y^3 / 6 = pi kappa
        y = mpmath.findroot(lambda y: y - mpmath.sin(y) - mpmath.pi * k, y0,
                            tol=(mpmath.mpf(10) ** -(dps + 10) * y0) ** 2)
        return (2 * y - mpmath.sin(2 * y)) / (4 * mpmath.pi)


@pytest.mark.parametrize("kappa", [mpmath.mpf("0.5"), fractions.Fraction(1, 3), decimal.Decimal("0.1"),
                                   "0.1", "1e-20", 0.25, np.float64(0.75), 1])
def test_alpha_c_dps_accepts_exact_inputs(kappa):
    dps = 30
    got = alpha_c(kappa, dps=dps)
    with mpmath.workdps(60):
        if isinstance(kappa, fractions.Fraction):
            exact = mpmath.mpf(kappa.numerator) / kappa.denominator
        else:
            exact = mpmath.mpf(str(kappa)) if isinstance(kappa, (str, decimal.Decimal)) else mpmath.mpf(kappa)
        ref = _alpha_c_oracle(exact, dps)
        # dps digits: relative error below 10^-(dps-2) (two digits for the last-place rounding)
        assert abs(got - ref) <= mpmath.mpf(10) ** -(dps - 2) * abs(ref)


def test_alpha_c_dps_does_not_round_through_float():
    with mpmath.workdps(60):
        a_text, a_float = alpha_c("0.1", dps=40), alpha_c(0.1, dps=40)
        # the double 0.1 is 0.1 + 5.55e-18; alpha_c' ~ 1.5 at 0.1, so the two
        # differ by ~8e-18, far above the 1e-38 accuracy of either
        assert abs(a_text - a_float) > 1e-18
        assert abs(a_text - _alpha_c_oracle(mpmath.mpf("0.1"), 40)) < 1e-38


def test_alpha_c_dps_array_of_mixed_inputs():
    out = alpha_c(["0.5", fractions.Fraction(1, 2), mpmath.mpf("0.5")], dps=25)
    assert out.dtype == object and out[0] == out[1] == out[2]


@pytest.mark.parametrize("bad", ["abc", "nan", "1/3", "2", "0", "-0.1", float("nan"), True, None, 1j])
def test_alpha_c_dps_rejects(bad):
    with pytest.raises(ValueError, match="kappa must be a real number in \\(0, 1\\]"):
        alpha_c(bad, dps=20)


@pytest.mark.parametrize("dps", [0, 4, -1, 2.5, "20", 10**6])
def test_alpha_c_bad_dps(dps):
    with pytest.raises(ValueError, match="dps must be an integer"):
        alpha_c(0.5, dps=dps)


def test_qc_quantile_mp_exact_inputs():
    # X_qc(u): 2 th + sin 2 th = pi u, X = 2 sin th; u = 1/2 oracle by findroot at 50 digits
    with mpmath.workdps(50):
        th = mpmath.findroot(lambda t: 2 * t + mpmath.sin(2 * t) - mpmath.pi / 2, (0, mpmath.pi / 2),
                             solver="anderson")
        ref = 2 * mpmath.sin(th)
        for u in ("0.5", fractions.Fraction(1, 2), mpmath.mpf("0.5"), decimal.Decimal("0.5")):
            assert abs(qc_quantile_mp(u, dps=40) - ref) < 1e-38
    with pytest.raises(ValueError, match="dps must be an integer"):
        qc_quantile_mp(0.5, dps=0)
    with pytest.raises(ValueError, match="u must be a real number"):
        qc_quantile_mp("x", dps=20)
