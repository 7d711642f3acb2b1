"""The token-retrieval parameter table is filled everywhere and each entry is used.

Oracle: the source text itself (every ``%(name)s`` placeholder line of the package's
modules) and, for the bisections of ``lower_bound``, an exhaustive scan of the integers.
"""
import importlib
import inspect
import pkgutil
import re

import pytest

import validation.token_retrieval as tr
from validation.token_retrieval import _docparams, lower_bound

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _objects():
    for info in pkgutil.walk_packages(tr.__path__, tr.__name__ + "."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == info.name:
                yield f"{info.name}.{name}", obj


def test_no_placeholder_is_left_unfilled():
    left = [name for name, obj in _objects() if _PLACEHOLDER.search(obj.__doc__ or "")]
    assert not left, f"docstrings with an unfilled placeholder: {left}"


def test_every_table_entry_is_used_in_the_source():
    used = set()
    for info in pkgutil.walk_packages(tr.__path__, tr.__name__ + "."):
        src = inspect.getsource(importlib.import_module(info.name))
        used |= set(_PLACEHOLDER.findall(src))
    unused = set(_docparams.PARAMS) - used
    assert not unused, f"table entries no docstring names: {sorted(unused)}"


def test_a_filled_entry_is_the_table_text():
    # the entry appears verbatim (indented by four) in a docstring that names it
    doc = tr.theory.attention_weight.__doc__
    for key in ("NdL", "V", "tau", "kind", "noise", "m", "eta", "beta", "gamma", "fresh"):
        text = "\n".join("    " + line for line in _docparams.PARAMS[key].split("\n"))
        assert text in doc, key


@pytest.mark.parametrize("threshold", [1, 2, 3, 7, 64, 100, 999])
def test_first_is_the_smallest_true_integer(threshold):
    f = lambda n: n >= threshold          # noqa: E731  (a monotone predicate)
    brute = next(n for n in range(1, 1001) if f(n))
    assert lower_bound._first(f, 1, 1000) == float(brute)
    assert lower_bound._first(lambda n: False, 1, 1000) is None


@pytest.mark.parametrize("threshold", [1, 2, 5, 16, 17, 300])
def test_first_up_is_the_smallest_true_integer(threshold):
    f = lambda n: n >= threshold          # noqa: E731
    brute = next(n for n in range(1, 1001) if f(n))
    assert lower_bound._first_up(f, 1000) == float(brute)
    assert lower_bound._first_up(f, threshold - 1) is None
