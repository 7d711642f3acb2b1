"""validation.logistic: the one logistic likelihood, IRLS fit and profile threshold fit,
against closed forms and an independent optimiser."""
import math

import numpy as np
import pytest
from scipy import optimize

from validation.logistic import fit_logistic, fit_threshold, log_likelihood, success_counts


def _direct_loglik(eta, k, n):
    # independent oracle: k log p + (n - k) log(1 - p) with p = 1 / (1 + e^-eta), in mpmath-free
    # double precision (moderate |eta| only, where this direct form loses nothing)
    p = 1.0 / (1.0 + np.exp(-eta))
    return float(np.sum(k * np.log(p) + (n - k) * np.log1p(-p)))


def test_log_likelihood_direct_and_extreme():
    eta = np.array([-3.0, -0.5, 0.0, 1.2, 4.0])
    k = np.array([0, 1, 2, 3, 5])
    n = np.array([2, 3, 4, 3, 5])
    # both are sums of 5 terms of size <= 10 computed to a few ulp: 1e-12 is ~1000 ulp
    assert abs(float(log_likelihood(eta, k, n)) - _direct_loglik(eta, k, n)) < 1e-12
    # |eta| = 800: e^-800 underflows, the exact value is k eta - n max(eta, 0) (e^-800 is below
    # the resolution of 800 by 300 orders of magnitude)
    assert log_likelihood(np.array([800.0]), np.array([1.0])) == 0.0
    assert log_likelihood(np.array([-800.0]), np.array([1.0])) == -800.0


def test_fit_logistic_saturated_closed_form():
    # two groups, n = 20 and 30 trials with 5 and 24 successes: the MLE reproduces the
    # fractions, b0 = logit(1/4), b1 = logit(4/5) - logit(1/4), and the inverse Fisher
    # information is 1/(n p (1-p)) per group (closed forms)
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    f = fit_logistic(X, [5, 24], [20, 30])
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    # Newton stops at a step < 1e-10 and converges quadratically: error << 1e-10
    assert f.converged
    assert abs(f.coef[0] - logit(0.25)) < 1e-10
    assert abs(f.coef[1] - (logit(0.8) - logit(0.25))) < 1e-10
    v0, v1 = 1 / (20 * 0.25 * 0.75), 1 / (30 * 0.8 * 0.2)
    # the covariance is the inverse of a 2x2 matrix evaluated at the MLE: relative 1e-9
    assert f.cov[0, 0] == pytest.approx(v0, rel=1e-9)
    assert f.cov[1, 1] == pytest.approx(v0 + v1, rel=1e-9)
    assert f.stderr[0] == pytest.approx(math.sqrt(v0), rel=1e-9)
    # Bernoulli rows give the same fit as the grouped counts
    Xb = np.repeat(X, [20, 30], axis=0)
    yb = np.r_[np.ones(5), np.zeros(15), np.ones(24), np.zeros(6)]
    fb = fit_logistic(Xb, yb)
    assert np.allclose(fb.coef, f.coef, rtol=0, atol=1e-10)
    assert fb.loglik == pytest.approx(f.loglik, rel=1e-12)
    assert set(f.to_dict()) == {"coef", "cov", "loglik", "n_iter", "converged"}


def test_fit_logistic_ridge_matches_independent_optimiser():
    # complete separation: without the ridge the MLE is infinite; with it the penalised optimum
    # is finite and equals that of an independent quasi-Newton minimisation of the same objective
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 2))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(float)
    X = np.column_stack([np.ones(60), x])
    ridge = 0.1
    f = fit_logistic(X, y, ridge=ridge)

    def obj(b):
        eta = X @ b
        return -(np.sum(y * eta - np.logaddexp(0, eta)) - ridge * (b[1:] @ b[1:]) / 2)

    def grad(b):
        mu = 1 / (1 + np.exp(-(X @ b)))
        g = X.T @ (y - mu)
        g[1:] -= ridge * b[1:]
        return -g

    ref = optimize.minimize(obj, np.zeros(3), jac=grad, method="BFGS", options={"gtol": 1e-10})
    # both optima of a strongly concave objective (curvature >= ridge = 0.1): a gradient below
    # 1e-10 puts BFGS within ~1e-9 of the optimum
    assert np.allclose(f.coef, ref.x, rtol=0, atol=1e-6)
    assert f.converged and np.all(np.isfinite(f.cov))


def _trials(x, k, n):
    """Expand per-value counts into per-trial (x, success) lists."""
    xs = [xi for xi, ni in zip(x, n) for _ in range(ni)]
    ys = [j < ki for ki, ni in zip(k, n) for j in range(ni)]
    return xs, ys


def test_threshold_fit_matches_independent_fit():
    # overlapping data (no separation): the MLE of (x50, w) agrees with an independent fit in
    # the (b0, b1) parametrisation, P = expit(b0 + b1 x), x50 = -b0/b1, w = -1/b1
    x = np.array([0.4, 0.5, 0.6, 0.7, 0.8])
    k = np.array([6, 5, 4, 2, 1])
    n = np.array([6, 6, 6, 6, 6])
    fit = fit_threshold(*_trials(x, k, n), min_width=1e-4)
    f = fit_logistic(np.column_stack([np.ones(5), x]), k, n)
    # Nelder-Mead stops at xatol = 1e-7 * span (4e-8) in x50; the likelihood is flat to second
    # order, so the position agrees to ~1e-6
    assert fit.threshold == pytest.approx(-f.coef[0] / f.coef[1], abs=1e-5)
    assert fit.width == pytest.approx(-1 / f.coef[1], rel=1e-4)
    assert fit.loglik == pytest.approx(f.loglik, abs=1e-9)
    assert fit.ci_low < fit.threshold < fit.ci_high
    assert np.allclose(fit.params, [fit.threshold, fit.width])
    # predict is the fitted model: 1/2 at the threshold, the IRLS probabilities at the data
    assert fit.predict(fit.threshold) == pytest.approx(0.5, abs=1e-12)
    mu = 1 / (1 + np.exp(-(f.coef[0] + f.coef[1] * x)))
    assert np.allclose(fit.predict(x), mu, rtol=0, atol=1e-5)


def test_increasing_model_is_the_mirror_image():
    # identity: the increasing fit of x is the decreasing fit of -x, mirrored
    x = np.log([4, 4, 8, 8, 16, 16, 32, 32, 64])
    y = [0, 0, 0, 1, 0, 1, 1, 1, 1]
    up = fit_threshold(x, y, increasing=True, min_width=0.01)
    down = fit_threshold(-x, y, min_width=0.01)
    assert up.threshold == pytest.approx(-down.threshold, abs=1e-12)
    assert (up.ci_low, up.ci_high) == pytest.approx((-down.ci_high, -down.ci_low), abs=1e-12)
    assert up.predict(x.max()) > 0.5 > up.predict(x.min())


def test_conf_int_at_another_level_is_a_refit():
    x, y = _trials([0.4, 0.5, 0.6, 0.7, 0.8], [6, 5, 4, 2, 1], [6] * 5)
    f95 = fit_threshold(x, y)
    f99 = fit_threshold(x, y, level=0.99)
    assert f95.conf_int() == (f95.ci_low, f95.ci_high)
    assert f95.conf_int(0.01) == pytest.approx((f99.ci_low, f99.ci_high), abs=1e-12)
    assert f99.ci_low < f95.ci_low < f95.ci_high < f99.ci_high      # a higher level is wider
    text = f95.summary()
    assert "95% CI" in text and "6/6" in text


def test_threshold_fit_separation_finite_interval():
    # complete separation between 0.6 and 0.7, three trials per load: l_max = 0 (w -> min_width).
    # At x50 = 0.6 + delta the best is w = min_width = 1e-3, l = -3 ln(1 + e^(-delta/w)) (the
    # three trials at 0.6), which is >= -chi2_1(0.95)/2 = -1.92 iff delta >= 0.11 w = 1.1e-4;
    # likewise at 0.7.  So the interval is the gap shrunk by 1.1e-4, read on a grid of cell
    # (0.9 / 480 = 1.9e-3): ci_low in [0.6, 0.6 + 1.1e-4 + 1.9e-3], ci_high symmetric.
    fit = fit_threshold(*_trials([0.5, 0.6, 0.7, 0.8], [3, 3, 0, 0], [3, 3, 3, 3]), min_width=1e-3)
    assert 0.6 <= fit.ci_low <= 0.6 + 1.1e-4 + 1.9e-3
    assert 0.7 - 1.1e-4 - 1.9e-3 <= fit.ci_high <= 0.7
    assert 0.6 < fit.threshold < 0.7
    # one trial per load: l(x50 = 0.6) = -ln 2 > -1.92, the interval reaches beyond the gap
    one = fit_threshold([0.5, 0.6, 0.7, 0.8], [1, 1, 0, 0], min_width=1e-3)
    assert one.ci_low < 0.6 and one.ci_high > 0.7 and math.isfinite(one.ci_low)


def test_not_bracketed_is_nan():
    f = fit_threshold([0.5, 0.6, 0.7], [True, True, True])
    assert math.isnan(f.threshold) and success_counts([0.5, 0.6, 0.7], [1, 1, 1])[0] == [0.5, 1, 1]


@pytest.mark.parametrize("call, match", [
    (lambda: fit_logistic(np.ones((3, 1)), [1, 0, 1], ridge=-1.0), r"^ridge must be a real number >= 0, got -1.0"),
    (lambda: fit_logistic(np.ones(3), [1, 0, 1]), r"^X must be a 2-d design matrix"),
    (lambda: fit_logistic(np.ones((3, 1)), [1, 0]), r"^successes must have one entry per row of X \(3\)"),
    (lambda: fit_logistic(np.ones((3, 1)), [1, 0, 1], maxiter=0), r"^maxiter must be an integer >= 1, got 0"),
    (lambda: fit_threshold([1.0], [1], min_width=0.0), r"^min_width must be a real number > 0"),
    (lambda: fit_threshold([1.0, 2.0], [1]), r"^x and success must have equal nonzero length"),
    (lambda: fit_threshold([1.0], [1], level=1.0), r"^level must be"),
    (lambda: fit_threshold([1.0, np.nan], [1, 0]), r"^x must be finite"),
    (lambda: fit_threshold([1.0, 2.0], [1, 0]).conf_int(1.5), r"^alpha must be"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
