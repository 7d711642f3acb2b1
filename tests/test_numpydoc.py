"""The public API of ``hcizz`` and ``replica`` passes numpydoc validation in full.

``tests/test_docstrings.py`` checks every package against a chosen subset of the
numpydoc codes.  The two theory packages are held to the whole list (the scipy
standard): every public function and class -- the names in the ``__all__`` of each
public module of ``hcizz`` and ``replica`` -- has a See Also section, an Examples
section, a Returns section whose first line is the type, and so on.  Only these are
excused:

* ``ES01`` (extended summary) everywhere: a one-line summary plus Parameters / Returns /
  Notes is enough for a small helper.
* ``PR01`` / ``PR02`` for classes whose ``__init__`` comes from the standard library
  (``hcizz.cli.ArgumentParser``: its parameter list is ``argparse``'s, documented
  there, and differs between Python versions).

The ``SpectralLaw`` subclasses are checked in full: each declares its own
``__init__(param, **kw)``, so numpydoc compares their Parameters with the real
signature (``tests/test_docstrings.py`` also compares them with ``_param_names``).

Two checks go beyond numpydoc: every name in a See Also section is fully qualified
and resolves to an importable object (so that Sphinx can link it), and no example's
expected output is a bare ``True`` / ``False`` (an example prints values).

numpydoc is an optional test dependency (the ``test`` and ``docs`` extras); without it
this module is skipped.
"""
import importlib
import inspect
import pkgutil
import re

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")
from numpydoc.docscrape import get_doc_object  # noqa: E402  (after the importorskip)

PACKAGES = ("hcizz", "replica")

#: numpydoc codes excused for every object
EXCUSED = {"ES01"}



def _public_modules():
    out = []
    for pkg in PACKAGES:
        out.append(pkg)
        for info in pkgutil.walk_packages(importlib.import_module(pkg).__path__, pkg + "."):
            if not any(part.startswith("_") and part != "__main__" for part in info.name.split(".")):
                out.append(info.name)
    return out


def _public_objects():
    """``module.qualname`` of every function and class in a public ``__all__``, named
    where it is defined (a re-export is checked once)."""
    seen = []
    for modname in _public_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue                      # constants, submodules, the version string
            qualified = f"{obj.__module__}.{obj.__qualname__}"
            if qualified.split(".")[0] in PACKAGES and qualified not in seen:
                seen.append(qualified)
    return seen


PUBLIC = _public_objects()


def _object(name):
    modname, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(modname), attr)


def _resolve(name):
    """The object a fully qualified See Also entry names (``replica.alpha_c``), or None.

    Names are written in full, as the API pages document them, so that Sphinx links
    them from any page (a short name would resolve against the page's module only)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _constructor_outside_the_project(obj):
    module = getattr(getattr(obj, "__init__", None), "__module__", None) or "builtins"
    return module.split(".")[0] not in PACKAGES


def test_the_inventory():
    # a broken collector must not turn this module into a silent pass
    assert len(PUBLIC) > 100
    assert {"replica.finite_capacity.alpha_c_finite", "hcizz.quarter_circle.qc_moment"} <= set(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_numpydoc_validates(name):
    obj = _object(name)
    foreign = inspect.isclass(obj) and _constructor_outside_the_project(obj)
    excused = set(EXCUSED)
    if foreign:
        excused |= {"PR01", "PR02"}
    errors = [f"{code}: {msg}" for code, msg in numpydoc_validate.validate(name)["errors"]
              if code not in excused]
    assert not errors, f"{name}:\n" + "\n".join(errors)


@pytest.mark.parametrize("name", PUBLIC)
def test_see_also_resolves(name):
    obj = _object(name)
    entries = get_doc_object(obj)["See Also"]
    names = [target for funcs, _ in entries for target, _role in funcs]
    assert names, f"{name}: empty See Also"
    unresolved = [n for n in names if _resolve(n) is None]
    assert not unresolved, f"{name}: See Also names that do not import: {unresolved}"
    assert obj not in [_resolve(n) for n in names], f"{name}: See Also names the object itself"


_BARE_BOOL = re.compile(r"^\s*>>>.*\n\s*(True|False)\s*$", re.M)


@pytest.mark.parametrize("name", PUBLIC)
def test_examples_print_values(name):
    doc = inspect.getdoc(_object(name)) or ""
    hit = _BARE_BOOL.search(doc)
    assert hit is None, f"{name}: an example prints a bare boolean:\n{hit.group(0)}"


def _bad(x):
    """does something

    Examples
    --------
    >>> _bad(1) > 0
    True
    """
    return x


def test_the_checks_see_a_bad_docstring():
    # each check flags what it is meant to flag (a broken check must not pass silently)
    codes = {code for code, _ in numpydoc_validate.validate(get_doc_object(_bad))["errors"]}
    assert {"SS02", "SS03", "PR01", "RT01", "SA01"} <= codes - EXCUSED
    assert _BARE_BOOL.search(inspect.getdoc(_bad))
    assert _resolve("replica.no_such_function") is None
    assert _resolve("replica.alpha_c") is importlib.import_module("replica").alpha_c
