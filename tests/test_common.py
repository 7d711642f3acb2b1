"""Shared building blocks: argument checks, Estimate, Adam, cross-entropy."""
import math

import numpy as np
import pytest

from hcizz.checks import check_int, check_real, check_rng
from hcizz.estimate import Estimate
from validation.losses import softmax_xent, recalled
from validation.optim import Adam, warmup_cosine


@pytest.mark.parametrize("bad", [1, 1.5, float("nan"), "3", None, True])
def test_check_int_rejects(bad):
    with pytest.raises(ValueError, match="p must be an integer >= 2"):
        check_int("p", bad, low=2)


def test_check_int_accepts_exact_float():
    assert check_int("p", 1e15, low=2) == 10**15


@pytest.mark.parametrize("bad", [-0.1, 1.0, float("nan"), "x", [0.2, float("nan")]])
def test_check_real_rejects(bad):
    with pytest.raises(ValueError, match=r"t must be a real number in \[0, 1\)"):
        check_real("t", bad, low=0, high=1, high_open=True)


def test_check_rng():
    assert isinstance(check_rng(3), np.random.Generator)
    with pytest.raises(ValueError, match="rng"):
        check_rng("seed")


def test_estimate_is_a_result_record():
    e = Estimate(1.0, 0.1)
    assert (e.value, e.stderr) == (1.0, 0.1)
    assert "±" in str(e)
    with pytest.raises(TypeError, match="not a container"):
        iter(e)                       # one protocol: results are records, not tuples or mappings


def test_xent_gradient_finite_differences():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 5))
    t = rng.integers(0, 5, size=7)
    loss, d, _ = softmax_xent(X, t)
    h = 1e-6
    num = np.zeros_like(X)
    for i in range(7):
        for j in range(5):
            Xp = X.copy(); Xp[i, j] += h
            Xm = X.copy(); Xm[i, j] -= h
            num[i, j] = (softmax_xent(Xp, t, grad=False)[0] - softmax_xent(Xm, t, grad=False)[0]) / (2 * h)
    assert np.allclose(d, num, atol=1e-8)
    # closed form at equal logits: ln k
    assert math.isclose(softmax_xent(np.zeros((3, 5)), [0, 1, 2])[0], math.log(5), rel_tol=1e-14)


def test_recalled_strict_ties():
    s = np.array([[1.0, 1.0], [2.0, 1.0], [0.0, 3.0]])
    assert recalled(s, np.array([0, 0, 1])).tolist() == [False, True, True]


def test_xent_no_overflow():
    loss, d, c = softmax_xent(np.array([[1e4, 0.0]]), [0])
    assert loss == 0.0 and np.all(np.isfinite(d)) and c[0]


def test_warmup_cosine_shape():
    lrs = [warmup_cosine(s, 100, lr=1.0, warmup=0.1) for s in range(100)]
    assert lrs[9] == 1.0 and lrs[0] == 0.1
    assert all(a >= b for a, b in zip(lrs[10:], lrs[11:]))
    assert lrs[-1] > 0


def test_adam_matches_reference_first_step():
    # first Adam step moves each coordinate by lr * sign(g) (bias-corrected)
    w = np.array([1.0, -3.0, 0.5])
    Adam([w]).step([np.array([0.2, -5.0, 1e-3])], lr=0.01)
    assert np.allclose(w, [0.99, -2.99, 0.49], atol=1e-6)
