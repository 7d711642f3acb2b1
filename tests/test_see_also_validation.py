"""Every public object of validation's library layers has a See Also section whose names are
fully qualified and resolve to an importable object (what Sphinx needs to link them).

The library layers are ``validation.engine``, the shared fits / optimisers / losses / report
modules, ``validation.linear_memory``, ``validation.factual_recall`` and
``validation.token_retrieval`` (issue 24 part 6, the scipy standard of the theory packages,
``tests/test_numpydoc.py``).  The studies and the report sections are exempt: their public
objects are the report's machinery, run through ``python -m validation study`` and
``reproduce`` rather than called.
"""
import importlib
import inspect
import pkgutil

import pytest

docscrape = pytest.importorskip("numpydoc.docscrape")
from test_numpydoc import _resolve  # noqa: E402  (the resolver the theory packages are held to)

MODULES = ["validation.logistic", "validation.optim", "validation.adaptive", "validation.losses",
           "validation.report"]
for _pkg in ("validation.factual_recall", "validation.engine", "validation.linear_memory",
             "validation.token_retrieval"):
    MODULES.append(_pkg)
    MODULES += [i.name for i in pkgutil.walk_packages(importlib.import_module(_pkg).__path__, _pkg + ".")
                if not i.name.rsplit(".", 1)[-1].startswith("_")]


def _objects():
    out = {}
    for m in MODULES:
        mod = importlib.import_module(m)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ in MODULES:
                out[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return out


OBJECTS = _objects()


def test_the_inventory():
    assert len(OBJECTS) > 340 and "validation.engine.sweep.run_sweep" in OBJECTS
    assert "validation.linear_memory.exact.exact_feasibility" in OBJECTS
    assert "validation.token_retrieval.theory.retrieval_boundary" in OBJECTS


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_see_also_is_present_and_resolves(name):
    doc = docscrape.get_doc_object(OBJECTS[name])
    entries = [n for group, _ in doc["See Also"] for n, _role in group]
    assert entries, f"{name} has no See Also section"
    for target in entries:
        assert target.startswith(("validation.", "hcizz.", "replica.")), target
        assert _resolve(target) is not None, f"{name}: See Also {target} does not resolve"
