"""OP/DP fact generators: shapes, seeding, independence, memory check, bad input."""
import math

import numpy as np
import pytest

from replica.load import load_of, p_from_load
from validation.linear_memory.data import make_op, make_dp, make_facts, dp_nbytes


def test_shapes_and_dtype():
    f = make_op(7, 4, rng=0)
    assert f.E.shape == (7, 4) and f.U.shape == (7, 4) and f.kind == "op"
    g = make_dp(7, 4, rng=0, dtype=np.float64)
    assert g.E.shape == (7, 4) and g.U.shape == (7, 7, 4) and g.U.dtype == np.float64
    assert make_dp(3, 2, rng=0).U.dtype == np.float32
    assert list(f.targets) == list(range(7))
    assert math.isclose(f.load, 7 * math.log(7) / 16)


def test_seeding_reproducible_and_distinct():
    a, b, c = make_dp(5, 3, rng=11), make_dp(5, 3, rng=11), make_dp(5, 3, rng=12)
    assert np.array_equal(a.U, b.U) and np.array_equal(a.E, b.E)
    assert not np.array_equal(a.U, c.U)
    gen = np.random.default_rng(3)
    x, y = make_op(4, 2, rng=gen), make_op(4, 2, rng=gen)   # one stream: consecutive draws differ
    assert not np.array_equal(x.E, y.E)


def test_moments_and_independence():
    # entries N(0,1): mean within 5 stderr of 0, variance within 5 stderr of 1;
    # correlations between E and U, and between the candidate sets of two
    # inputs (DP), within 5/sqrt(n) of 0
    f = make_dp(60, 50, rng=1, dtype=np.float64)
    u = f.U.ravel()
    n = u.size
    assert abs(u.mean()) < 5 / math.sqrt(n)
    assert abs(u.var() - 1) < 5 * math.sqrt(2 / n)
    x, y = f.U[0].ravel(), f.U[1].ravel()
    assert abs(np.corrcoef(x, y)[0, 1]) < 5 / math.sqrt(x.size)
    e = np.tile(f.E, (1, 1)).ravel()
    w = f.U[:, 0, :].ravel()
    assert abs(np.corrcoef(e, w)[0, 1]) < 5 / math.sqrt(e.size)
    g = make_op(400, 30, rng=2)
    assert abs(np.corrcoef(g.E.ravel(), g.U.ravel())[0, 1]) < 5 / math.sqrt(g.E.size)


def test_dp_memory_check_before_allocation():
    assert dp_nbytes(2000, 100, np.float32) == 2000 * 2000 * 100 * 4
    with pytest.raises(ValueError, match=r"p=100000, d=1000.*max_bytes"):
        make_dp(100_000, 1000, rng=0)           # 40 TB: must fail before allocating
    with pytest.raises(ValueError, match=r"p=50, d=10"):
        make_dp(50, 10, rng=0, max_bytes=1000)


@pytest.mark.parametrize("kw, name", [(dict(p=1, d=3), "p"), (dict(p=5, d=0), "d"),
                                      (dict(p=2.5, d=3), "p"), (dict(p=5, d=-1), "d")])
def test_bad_inputs(kw, name):
    for fn in (make_op, make_dp):
        with pytest.raises(ValueError, match=rf"^{name} must be"):
            fn(kw["p"], kw["d"], rng=0)


def test_bad_kind():
    with pytest.raises(ValueError, match="kind"):
        make_facts("xp", 3, 3)


def test_p_from_load_matches_integer_search():
    for alpha, d in [(0.5, 20), (0.93, 30), (0.03, 40), (1.2, 7)]:
        ps = np.arange(2, 20000)
        best = int(ps[np.argmin(np.abs(ps * np.log(ps) / d**2 - alpha))])
        assert p_from_load(alpha, d) == best
    with pytest.raises(ValueError, match="alpha"):
        p_from_load(-1, 10)
    with pytest.raises(ValueError, match="^d must"):
        p_from_load(0.5, 0)
    assert math.isclose(load_of(10, 2), 10 * math.log(10) / 4)


def test_fact_types_against_explicit_loops():
    """OP and DP differ only in their methods; each is checked against the definition written as loops."""
    import pickle

    from validation.linear_memory.data import DPFacts, Facts, OPFacts, fact_type

    rng = np.random.default_rng(5)
    W = rng.standard_normal((3, 3))
    X = rng.random((4, 4))
    for f in (make_op(4, 3, rng=1, dtype=np.float64), make_dp(4, 3, rng=2, dtype=np.float64)):
        cand = (lambda mu, rho: f.U[rho]) if f.kind == "op" else (lambda mu, rho: f.U[mu, rho])
        Z = np.array([[cand(mu, rho) @ W @ f.E[mu] for rho in range(4)] for mu in range(4)])
        np.testing.assert_allclose(f.score_rows(f.E @ W.T), Z, rtol=1e-13, atol=1e-13)   # rounding only
        A = np.array([sum(X[mu, rho] * cand(mu, rho) for rho in range(4)) for mu in range(4)])
        np.testing.assert_allclose(f.pull_back(X), A, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(f.correct(), [cand(mu, mu) for mu in range(4)])
        assert f.candidate_nbytes(4, 3) == f.U.nbytes // 2 and fact_type(f.kind) is type(f)
        g = pickle.loads(pickle.dumps(f))
        assert type(g) is type(f) and np.array_equal(g.U, f.U)
        assert type(f.astype(np.float32)) is type(f)
        # the three-argument form: the base class dispatches, a subclass checks its own kind
        assert type(Facts(f.kind, f.E, f.U)) is type(f) and type(type(f)(f.kind, f.E, f.U)) is type(f)
        with pytest.raises(AttributeError, match="immutable"):
            f.E = None
    assert isinstance(make_facts("dp", 3, 2, rng=0), DPFacts) and OPFacts.kind == "op"
    with pytest.raises(ValueError, match="kind must be 'dp' for DPFacts, got 'op'"):
        DPFacts("op", np.zeros((2, 2)), np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="kind must be 'op' or 'dp'"):
        Facts("xx", np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(TypeError, match="takes \\(E, U\\)"):
        OPFacts(np.zeros((2, 2)))
