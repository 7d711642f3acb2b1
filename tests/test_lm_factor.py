"""The Cholesky factor shared by the exact solvers: appends, deletions (holes), solves.

Oracle: the dense matrix the factor must represent, :math:`Q` with the rows and columns of
deleted slots replaced by unit vectors, factored and solved by numpy.  Tolerances: the
factors are backward stable, so entries agree to a small multiple of machine epsilon times
the condition number of ``Q`` (here about 1e3): 1e-9 absolute on O(1) entries.
"""
import numpy as np
import pytest

from validation.linear_memory.exact import _Factor
from validation.linear_memory.exact_listwise import _ListFactor


def _spd(n, rng):
    A = rng.standard_normal((n, n + 5))
    return A @ A.T / n + 0.1 * np.eye(n)


@pytest.mark.parametrize("cls", [_Factor, _ListFactor])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_deletions_leave_the_factor_of_the_reduced_matrix(cls, seed):
    rng = np.random.default_rng(seed)
    n = 40
    Q = _spd(n, rng)
    fac = cls(n + 8)
    for lo, hi in ((0, 13), (13, 31), (31, n)):             # grown in blocks, as the solvers do
        kept = fac.append(Q[:lo, lo:hi], Q[lo:hi, lo:hi], 1e-11)
        assert kept == list(range(hi - lo))
    holes = rng.choice(n, size=9, replace=False)
    for j in holes.tolist():
        fac.delete(j)
    target = Q.copy()
    target[holes, :] = 0.0
    target[:, holes] = 0.0
    target[holes, holes] = 1.0
    R = np.triu(np.asarray(fac.buf[:n, :n]))
    np.testing.assert_allclose(R.T @ R, target, atol=1e-9)
    assert np.all(np.diag(R) > 0)
    b = rng.standard_normal(n)
    b[holes] = 0.0
    np.testing.assert_allclose(fac.solve(b), np.linalg.solve(target, b), atol=1e-9)
    assert fac.hole[holes].all() and fac.hole[:n].sum() == holes.size


@pytest.mark.parametrize("cls", [_Factor, _ListFactor])
def test_compact_keeps_the_active_factor(cls):
    rng = np.random.default_rng(5)
    n = 25
    Q = _spd(n, rng)
    fac = cls(n)
    fac.append(np.zeros((0, n)), Q, 1e-11)
    for j in (3, 10, 24):
        fac.delete(j)
    keep = fac.compact()
    assert keep.tolist() == [i for i in range(n) if i not in (3, 10, 24)]
    m = keep.size
    R = np.triu(np.asarray(fac.buf[:m, :m]))
    np.testing.assert_allclose(R.T @ R, Q[np.ix_(keep, keep)], atol=1e-9)
