"""The in-place optimisers of ``validation.optim`` share one ``step`` (the update count and
the call of the update rule); each rule checked against its closed form."""
import numpy as np

from validation.factual_recall import sequential
from validation.optim import Adam, GradientDescent, Optimizer, adam_loop


def test_gradient_descent_steps_are_the_closed_form():
    # k steps of p -= lr g on f(w) = |w|^2 / 2 (g = w): w_k = (1 - lr)^k w_0 exactly in
    # binary floating point for lr = 0.5 (each step halves w); tolerance 0
    w0 = np.array([3.0, -1.25])
    w = w0.copy()
    opt = GradientDescent([w])
    for _ in range(5):
        opt.step([w.copy()], lr=0.5)
    assert opt.t == 5
    np.testing.assert_array_equal(w, w0 * 0.5 ** 5)


def test_adam_first_step_is_a_sign_step():
    # bias-corrected first Adam step: m_hat = g, v_hat = g^2, so the update is
    # lr g / (|g| + eps): lr sign(g) up to the relative eps / |g| <= 1e-6 (|g| >= 1e-2)
    w = np.zeros(3)
    opt = Adam([w])
    opt.step([np.array([0.2, -5.0, 1e-2])], lr=0.01)
    assert opt.t == 1
    np.testing.assert_allclose(w, -0.01 * np.array([1.0, -1.0, 1.0]), rtol=2e-6)


def test_both_are_optimizers_and_the_old_name_still_imports():
    assert issubclass(Adam, Optimizer) and issubclass(GradientDescent, Optimizer)
    assert sequential.GradientDescent is GradientDescent


def test_adam_loop_runs_gradient_descent():
    # adam_loop with optimizer=GradientDescent on f(w) = |w|^2 / 2: after 3 updates of
    # lr 0.5 the parameters are w_0 / 8 exactly (tolerance 0, see above)
    w = np.array([8.0, 4.0])

    def evaluate(t):
        return 0.5 * float(w @ w), [w.copy()], None

    res = adam_loop([w], evaluate, steps=3, lr=0.5, optimizer=GradientDescent([w]))
    np.testing.assert_array_equal(w, [1.0, 0.5])
    assert res.steps == 3
