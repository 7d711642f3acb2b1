"""Symbolic identities of the rank-constrained model (run by ``python -m replica check``)."""
import pytest

from replica.symbolic import CHECK_MODULES
from replica.symbolic.rank_constrained import CHECKS


def test_registered():
    assert "replica.symbolic.rank_constrained" in CHECK_MODULES


@pytest.mark.parametrize("name,fn", CHECKS, ids=[c[0][:40] for c in CHECKS])
def test_check_passes(name, fn):
    ok, detail = fn()
    assert ok, detail
