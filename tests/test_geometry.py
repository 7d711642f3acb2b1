"""replica.geometry: the per-fact cost with the true candidate geometry.

Oracles: the closed-form independent-score minimum ``v_p_from_gaps`` (exact when the
candidates are orthonormal), SLSQP on the primal quadratic programme (an independent
solver), and the exact scaling ``V(s u0) = s^2 V(u0)``.
"""
import numpy as np
import pytest
from scipy.optimize import minimize

from replica.finite_capacity import v_p_from_gaps
from replica.geometry import v_geometry, v_true


def _orthonormal(p, d, rng):
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return Q[:p]


@pytest.mark.parametrize("p,d,seed", [(2, 2, 0), (5, 8, 1), (30, 30, 2), (17, 40, 3)])
def test_orthonormal_candidates_give_v_p(p, d, seed):
    rng = np.random.default_rng(seed)
    Y = _orthonormal(p, d, rng)
    for _ in range(5):
        u0 = rng.standard_normal(d)
        eta = Y @ u0
        V, k, _ = v_p_from_gaps(np.sort(eta[1:] - eta[0])[::-1][None, :])
        got, k_got = v_true(Y, u0)
        # orthonormal rows: |du|^2 = sum of squared score changes, the two problems are
        # the same; nnls converges to machine precision (relative 1e-10 is generous)
        assert got == pytest.approx(V[0], rel=1e-10, abs=1e-12)
        assert k_got == k[0]


def _slsqp(Y, u0):
    A = Y[1:] - Y[0]
    cons = {"type": "ineq", "fun": lambda du: -(A @ (u0 + du)), "jac": lambda du: -A}
    res = minimize(lambda du: 0.5 * du @ du, np.zeros(Y.shape[1]), jac=lambda du: du,
                   constraints=[cons], method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    assert res.success
    return res.fun


@pytest.mark.parametrize("p,d,seed", [(12, 5, 0), (60, 10, 1), (200, 20, 2), (40, 60, 3)])
def test_against_slsqp(p, d, seed):
    # includes p - 1 > d (dependent constraint directions) and p < d
    rng = np.random.default_rng(seed)
    for _ in range(3):
        Y = rng.standard_normal((p, d)) / np.sqrt(d)
        u0 = rng.standard_normal(d)
        # SLSQP stops at ftol 1e-14 on a value of order 1: agreement to 1e-7 relative
        # leaves room for its active-set tolerance
        assert v_true(Y, u0)[0] == pytest.approx(_slsqp(Y, u0), rel=1e-7, abs=1e-10)


def test_scaling_and_already_on_top():
    rng = np.random.default_rng(4)
    Y = rng.standard_normal((50, 12)) / np.sqrt(12)
    u0 = rng.standard_normal(12)
    V1, k1 = v_true(Y, u0)
    V3, k3 = v_true(Y, 3.0 * u0)
    assert V3 == pytest.approx(9.0 * V1, rel=1e-10) and k3 == k1   # homogeneous of degree 2
    # a read-out along y_0 - mean of the rest that already ranks y_0 first costs nothing
    Y2 = np.eye(4)
    assert v_true(Y2, np.array([1.0, 0.2, -0.5, 0.9])) == (0.0, 0)


def test_v_geometry_record():
    res = v_geometry(40, 20, samples=30, rng=5)
    assert res.p == 40 and res.d == 20 and res.candidates == "gaussian"
    lo, hi = res.conf_int()
    assert lo < res.ratio.value < hi
    # the ratio is the ratio of the two reported means
    assert res.ratio.value == pytest.approx(res.v_true.value / res.v_scores.value, rel=1e-12)
    assert res.v_true.n == 30 and res.k_true > 0


@pytest.mark.parametrize("kw,msg", [({"p": 1}, "p must be"), ({"d": 1}, "d must be"),
                                    ({"samples": 0}, "samples must be"),
                                    ({"candidates": "ball"}, "candidates must be")])
def test_bad_input(kw, msg):
    args = {"p": 10, "d": 10, "samples": 2, **kw}
    with pytest.raises(ValueError, match=msg):
        v_geometry(**args)


def test_v_true_bad_shapes():
    with pytest.raises(ValueError, match="u0 must have length 3"):
        v_true(np.eye(3), np.ones(2))
    with pytest.raises(ValueError):
        v_true(np.ones((1, 3)), np.ones(3))
