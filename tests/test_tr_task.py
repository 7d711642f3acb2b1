"""Token-retrieval task generator (validation/token_retrieval/task.py)."""
import numpy as np
import pytest

from validation.token_retrieval.task import make_embeddings, sample_sequences


def test_sequences_structure():
    emb = make_embeddings(50, 16, rng=1)
    b = sample_sequences(emb, 30, 7, rng=2)
    assert b.X.shape == (30, 7, 16) and b.tokens.shape == (30, 7)
    rows = np.arange(30)
    # informative token at pos, embedding e_y + z_trig; noise tokens are plain e_v
    assert np.array_equal(b.tokens[rows, b.pos], b.informative)
    np.testing.assert_allclose(b.X[rows, b.pos], emb.E[b.informative] + emb.z_trig)
    mask = np.ones((30, 7), bool)
    mask[rows, b.pos] = False
    np.testing.assert_allclose(b.X[mask], emb.E[b.tokens[mask]])
    # noise tokens never equal the informative token
    assert not np.any((b.tokens == b.informative[:, None]) & mask)
    assert np.all((b.tokens >= 0) & (b.tokens < 50))
    # distinct facts and permutation labels
    assert len(set(b.informative.tolist())) == 30
    assert np.array_equal(b.targets, emb.perm[b.informative])
    assert sorted(emb.perm.tolist()) == list(range(50))


def test_noise_uniform_over_other_tokens():
    # chi-square test of the noise-token frequencies (V - 1 = 4 equally likely values)
    from scipy import stats
    emb = make_embeddings(5, 8, rng=0)
    y = np.zeros(4000, dtype=int)
    b = sample_sequences(emb, 4000, 3, rng=1, informative=y)
    mask = np.ones(b.tokens.shape, bool)
    mask[np.arange(4000), b.pos] = False
    counts = np.bincount(b.tokens[mask], minlength=5)
    assert counts[0] == 0
    assert stats.chisquare(counts[1:]).pvalue > 1e-4


def test_random_embedding_scale():
    # entries N(0, 1/d): E||e||^2 = 1 with variance 2/d per row
    V, d = 400, 64
    emb = make_embeddings(V, d, rng=3)
    sq = np.sum(emb.E ** 2, axis=1)
    assert abs(sq.mean() - 1) < 5 * np.sqrt(2 / d / V)
    # overlaps x = e_u . e_v of disjoint pairs are independent with E[d x^2] = 1
    # and Var[d x^2] = 2 + 6/d (from E x^4 = (3d + 6) / d^3 for N(0, 1/d) entries)
    E = make_embeddings(20_000, d, rng=4).E
    x = np.sum(E[0::2] * E[1::2], axis=1)           # 10^4 pairs: 5 sigma = 0.07
    assert abs(np.mean(d * x ** 2) - 1) < 5 * np.sqrt((2 + 6 / d) / len(x))


def test_orthogonal_is_one_hot():
    emb = make_embeddings(6, 9, kind="orthogonal", rng=0)
    F = np.vstack([emb.E, emb.z_trig, emb.q])
    np.testing.assert_allclose(F @ F.T, np.eye(8))
    np.testing.assert_allclose(emb.U @ emb.U.T, np.eye(6))


def test_gaussian_noise_and_trig_scale():
    emb = make_embeddings(10, 32, rng=0, trig_scale=0.5)
    emb1 = make_embeddings(10, 32, rng=0)
    np.testing.assert_allclose(emb.z_trig, 0.5 * emb1.z_trig)
    b = sample_sequences(emb, 5, 4, rng=1, noise="gaussian")
    assert np.sum(b.tokens == -1) == 5 * 3


def test_seeded():
    a = sample_sequences(make_embeddings(20, 8, rng=5), 10, 4, rng=6)
    b = sample_sequences(make_embeddings(20, 8, rng=5), 10, 4, rng=6)
    np.testing.assert_array_equal(a.X, b.X)


@pytest.mark.parametrize("kw,name", [(dict(V=1, d=4), "V"), (dict(V=5, d=0), "d")])
def test_bad_embedding_sizes(kw, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        make_embeddings(**kw)


@pytest.mark.parametrize("N,L,name", [(0, 3, "N"), (3, 1, "L")])
def test_bad_sequence_sizes(N, L, name):
    emb = make_embeddings(10, 4, rng=0)
    with pytest.raises(ValueError, match=f"^{name} must"):
        sample_sequences(emb, N, L, rng=0)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="d must be >= V"):
        make_embeddings(5, 6, kind="orthogonal")
    with pytest.raises(ValueError, match="kind"):
        make_embeddings(5, 6, kind="sphere")
    emb = make_embeddings(5, 4, rng=0)
    with pytest.raises(ValueError, match="N must be <= V"):
        sample_sequences(emb, 6, 3)
    with pytest.raises(ValueError, match="noise"):
        sample_sequences(emb, 2, 3, noise="x")
