"""The synthetic factual-recall task generator."""
import numpy as np
import pytest

from validation.factual_recall.task import make_task, structured_answers


def test_layout_positions_eos_and_blocks():
    S, R, D, T = 7, 3, 4, 6
    task = make_task(S, R, D, T=T, rng=0)
    tok, y, s, r = task.sample(2000, rng=1)
    assert tok.shape == (2000, T) and task.vocab == 2 * (S + R) + 1
    assert np.all(tok[:, -1] == task.eos) and np.all(tok[:, :-1] != task.eos)
    is_subj = tok < S
    is_rel = (tok >= S) & (tok < S + R)
    # exactly one subject and one relation, at distinct positions among the first T-1
    assert np.all(is_subj.sum(1) == 1) and np.all(is_rel.sum(1) == 1)
    ps, pr = is_subj.argmax(1), is_rel.argmax(1)
    assert np.all(ps != pr) and ps.max() <= T - 2 and pr.max() <= T - 2
    assert np.all(tok[np.arange(2000), ps] == s) and np.all(tok[np.arange(2000), pr] == S + r)
    # the rest is noise from the separate noise vocabulary [S+R, 2(S+R))
    noise = tok[:, :-1][~(is_subj | is_rel)[:, :-1]]
    assert noise.min() >= S + R and noise.max() < 2 * (S + R)
    # answers in the relation's block and equal to the fixed table
    assert np.all(y // D == r) and np.all(y == task.answers[s, r])
    # every ordered pair of distinct positions occurs (uniform placement)
    pairs = set(zip(ps.tolist(), pr.tolist()))
    assert len(pairs) == (T - 1) * (T - 2)


def test_positions_uniform_chi2():
    """Subject and relation positions uniform over the first T-1 slots (chi-square)."""
    task = make_task(5, 2, 3, T=6, rng=0)
    n = 20000
    tok, *_ = task.sample(n, rng=3)
    for mask in (tok < 5, (tok >= 5) & (tok < 7)):
        counts = np.bincount(mask.argmax(1), minlength=5)
        exp = n / 5
        chi2 = ((counts - exp) ** 2 / exp).sum()
        assert chi2 < 20.5  # chi2(4) 0.9996 quantile


def test_seeding_reproducible_and_fresh():
    a = make_task(6, 4, 3, T=5, rng=11)
    b = make_task(6, 4, 3, T=5, rng=11)
    np.testing.assert_array_equal(a.answers, b.answers)
    t1 = a.sample(50, rng=5)
    t2 = b.sample(50, rng=5)
    for u, v in zip(t1, t2):
        np.testing.assert_array_equal(u, v)
    g = np.random.default_rng(5)
    f1, f2 = a.sample(50, g)[0], a.sample(50, g)[0]
    assert not np.array_equal(f1, f2)  # fresh batches from one generator


def test_all_facts_and_fixed_facts():
    task = make_task(3, 2, 2, T=4, rng=0)
    s, r = task.all_facts()
    assert sorted(zip(s.tolist(), r.tolist())) == [(i, j) for i in range(3) for j in range(2)]
    tok, y, s2, r2 = task.sample(0, rng=1, subjects=s, relations=r)
    np.testing.assert_array_equal(s2, s)
    np.testing.assert_array_equal(y, task.answers[s, r])


def test_distinct_answers():
    task = make_task(4, 3, 4, T=4, rng=2, distinct=True)
    for r in range(3):
        assert len(set(task.answers[:, r].tolist())) == 4


def test_structured_answers():
    A = structured_answers(6, 2, 3)
    np.testing.assert_array_equal(A[:, 0], [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(A[:, 1], [3, 3, 4, 4, 5, 5])


@pytest.mark.parametrize("kw,name", [(dict(S=3, R=2, D=1, T=5), "D"),
                                     (dict(S=3, R=2, D=2, T=2), "T"),
                                     (dict(S=0, R=2, D=2, T=5), "S"),
                                     (dict(S=3, R=0, D=2, T=5), "R"),
                                     (dict(S=5, R=2, D=4, T=5, distinct=True), "S")])
def test_bad_task_inputs(kw, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        make_task(rng=0, **kw)


def test_structured_needs_enough_subjects():
    with pytest.raises(ValueError, match="^S must be >= D"):
        structured_answers(3, 2, 4)


@pytest.mark.parametrize("kw,match", [
    (dict(subjects=[4], relations=[0]), "^subjects must have entries in \\[0, 4\\), got 4"),
    (dict(subjects=[-1], relations=[0]), "^subjects must have entries in \\[0, 4\\), got -1"),
    (dict(subjects=[0], relations=[2]), "^relations must have entries in \\[0, 2\\), got 2"),
    (dict(subjects=[0]), "^subjects and relations must be given together"),
    (dict(subjects=[0, 1], relations=[0]), "^relations must have the shape"),
    (dict(subjects=[[0]], relations=[[0]]), "^subjects must be a 1-d"),
    (dict(subjects=[0.5], relations=[0]), "^subjects must be an integer array"),
])
def test_bad_fixed_facts(kw, match):
    """A negative subject used to wrap around silently (answers[-1])."""
    task = make_task(4, 2, 3, T=5, rng=0)
    with pytest.raises(ValueError, match=match):
        task.sample(0, rng=0, **kw)


def test_facttask_validates_answers():
    from validation.factual_recall.task import FactTask
    with pytest.raises(ValueError, match="^answers must lie in the relation's block"):
        FactTask(2, 2, 2, 4, np.array([[0, 0], [1, 3]]))   # answer 0 is not in block 1
    with pytest.raises(ValueError, match="^answers must have shape"):
        FactTask(2, 2, 2, 4, np.array([[0, 2]]))
    with pytest.raises(ValueError, match="^T must be"):
        FactTask(2, 2, 2, 2, np.array([[0, 2], [1, 3]]))
