"""The Examples sections of the factual-recall modules run and give what they show."""
import doctest
import importlib

import pytest

MODULES = ["task", "transformer", "memories", "sequential", "experiments"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    mod = importlib.import_module(f"validation.factual_recall.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0
