"""Which public objects of the API are on no reference page.

Every name in the ``__all__`` of a public module of ``replica``, ``hcizz`` and
``validation`` (no underscore in its dotted path) must be listed, under any of its
public names, on one of :data:`API_PAGES`.  ``conf.py`` turns each missing name into
a build warning; ``tests/test_api_coverage.py`` runs the same check in the test
suite.  No Sphinx import: the names on a page are read from its text.
"""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

#: Public modules whose ``__all__`` must be documented (CLI plumbing is
#: documented through its module docstring and the command-line pages).
API_PAGES = ["reference_replica.rst", "reference_hcizz.rst", "reference_validation.rst"]


def _public_modules():
    import pkgutil
    for pkg in ("replica", "hcizz", "validation"):
        mod = importlib.import_module(pkg)
        yield pkg
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            yield info.name


def _documented_names(docs):
    names, current = set(), None
    for page in API_PAGES:
        for line in (Path(docs) / page).read_text().splitlines():
            m = re.match(r"\.\. (?:current)?module:: (\S+)", line.strip())
            if m:
                current = m.group(1)
                continue
            m = re.match(r"^\s{3,}(~?[A-Za-z_][\w.]*)\s*$", line)
            if m and current is not None:
                names.add(f"{current}.{m.group(1).lstrip('~')}")
    return names


def resolve(dotted):
    """Resolve like autosummary: ``MODULE.OBJ`` first, then longer module paths."""
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            for attr in parts[i:]:
                obj = getattr(obj, attr)
            return obj
        except (ImportError, AttributeError):
            continue
    return importlib.import_module(dotted)


def missing_names(docs):
    """Dotted names of public objects on no page of :data:`API_PAGES` in ``docs``."""
    documented = _documented_names(docs)
    seen = []
    for name in documented:
        try:
            seen.append(resolve(name))
        except Exception:  # autosummary itself reports unresolvable names
            pass
    missing = []
    for modname in _public_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or name.startswith("__"):   # e.g. __version__
                continue
            # an object counts as documented under any of its public names
            if not any(obj is other for other in seen):
                missing.append(f"{modname}.{name}")
    return sorted(missing)
