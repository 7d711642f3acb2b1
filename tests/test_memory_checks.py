"""Experiment entry points refuse, before allocating, a size that cannot fit in
memory: a ValueError naming the sizes and the limit (the CLIs: one line, exit 2)."""
import pytest

from validation.factual_recall.experiments import train_transformer
from validation.factual_recall.memories import train_memory
from validation.factual_recall.task import make_task
from validation.linear_memory.capacity import capacity_trial


@pytest.fixture
def small_limit(monkeypatch):
    # 1 MiB: the smallest runs below need less, the refused ones more
    monkeypatch.setenv("ASSOCMEM_MEMORY_LIMIT", "1M")


def test_linear_and_mlp_memories(small_limit):
    # linear, n = d = 8: (8*8 + 8*8 + 3*64 + 2*64) * 4 bytes = 1.8 KiB, runs
    assert train_memory("linear", 8, 8, steps=2, rng=0)["n"] == 8
    # n = 2000, d = 64: the 2000 x 2000 score matrix and its gradient alone are
    # 2 * 4e6 * 4 bytes = 30.5 MiB > 1 MiB
    with pytest.raises(ValueError, match=r"linear memory n=2000 d=64 .* limit 1\.0 MiB"):
        train_memory("linear", 2000, 64, steps=1, rng=0)
    with pytest.raises(ValueError, match=r"mlp memory n=100000 d=64 m=64"):
        train_memory("mlp", 100000, 64, m=64, steps=1, rng=0)


def test_transformer(small_limit):
    task = make_task(2, 2, 2, T=4, rng=0)
    # d = 1024, m = 4096: the MLP alone is 2 * 4096 * 1024 floats (32 MiB with Adam)
    with pytest.raises(ValueError, match=r"transformer d=1024 H=1 d_h=8 m=4096 .* limit"):
        train_transformer(task, 1024, 1, 8, 4096, steps=1, rng=0)


def test_capacity_trial_checks_before_allocating(small_limit):
    # d = 2000: W and its gradient are 2 * 4e6 * 4 bytes = 30.5 MiB
    with pytest.raises(ValueError, match=r"capacity --model op d=2000"):
        capacity_trial({"model": "op", "d": 2000, "alpha": 0.5, "seed": 0})
