"""Public API docstrings follow numpydoc and cite their sources.

Every public function and class of the modules in :data:`IN_SCOPE` (the names in a
module's ``__all__``, or, for a module without ``__all__``, the functions and classes it
defines without a leading underscore) is checked with ``numpydoc.validate.validate``
against :data:`ENFORCED`, and must have a ``References`` section (an arXiv id and/or a
``docs/<page>.md#anchor``; those anchors are checked by ``tests/test_docs_links.py``).
The public methods and properties those classes define are checked against the same
codes (their References are the class's).

numpydoc is an optional test dependency (the ``test`` and ``docs`` extras); without it
this module is skipped.
"""
import importlib
import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")
from numpydoc.docscrape import get_doc_object  # noqa: E402  (after the importorskip)

#: modules whose public objects are checked
IN_SCOPE = [
    # shared layer and spectral laws
    "hcizz", "hcizz.checks", "hcizz.cli", "hcizz.estimate", "hcizz.results", "hcizz.docstrings", "hcizz.numerics", "hcizz.jsonout",
    "hcizz.free_transforms", "hcizz.marchenko_pastur", "hcizz.mp_product",
    "hcizz.quarter_circle", "hcizz.spherical",
    "hcizz.spherical.limits", "hcizz.spherical.exact_d2", "hcizz.spherical.monte_carlo",
    "hcizz.spherical.ais", "hcizz.spherical.rank_one",
    # replica theory
    "replica", "replica.__main__", "replica.energy", "replica.finite_capacity",
    "replica.free_entropy", "replica.gaussian_max", "replica.hebbian", "replica.order_stats",
    "replica.rank_capacity", "replica.load", "replica.rank_cli", "replica.theory_cli", "replica.pinned_scores", "replica.listwise", "replica.geometry",
    "replica.symbolic", "replica.symbolic.full_rank", "replica.symbolic.rank_constrained",
    "replica.symbolic.formula", "replica.symbolic.functions", "replica.symbolic.listwise",
    # validation: engine, token retrieval and the shared pieces
    "validation.engine", "validation.engine.cli", "validation.engine.executors",
    "validation.engine.keys", "validation.engine.trials", "validation.engine.pool", "validation.engine.progress", "validation.engine.store",
    "validation.engine.sweep",
    "validation.token_retrieval", "validation.token_retrieval.cli",
    "validation.token_retrieval.early_phase", "validation.token_retrieval.experiments",
    "validation.token_retrieval.model", "validation.token_retrieval.task",
    "validation.token_retrieval.theory", "validation.token_retrieval.trials",
    "validation.token_retrieval.runs", "validation.token_retrieval.success",
    "validation.token_retrieval.boundary", "validation.token_retrieval.moments",
    "validation.token_retrieval.design", "validation.token_retrieval.predictions",
    "validation.token_retrieval.exact",
    "validation.token_retrieval.token_theory", "validation.token_retrieval.lower_bound",
    "validation.token_retrieval.comparison",
    "validation.logistic", "validation.adaptive",
    "validation._io", "validation.report", "validation.losses", "validation.optim",
    "validation.__main__", "validation.report_cli",
    "validation.studies", "validation.studies.base", "validation.studies.cli",
    "validation.studies.linear_memory_exact",
    "validation.studies.token_retrieval_grid", "validation.studies.token_retrieval_adaptive_boundary",
    "validation.studies.factual_recall_memory", "validation.studies.factual_recall_capacity",
    "validation.studies.factual_recall_paper",
    "validation.studies.linear_memory_capacity", "validation.studies.linear_memory_d150",
    "validation.studies.linear_memory_lowrank", "validation.studies.linear_memory_margins",
    "validation.studies.linear_memory_spectra", "validation.studies.linear_memory_adaptive",
    "validation.studies.linear_memory_budget", "validation.studies.linear_memory_listwise",
    "validation.studies.linear_memory_listwise_trained", "validation.studies.linear_memory_max_margin",
    "validation.studies.linear_memory_listwise_max_margin", "validation.linear_memory.listwise_max_margin",
    # validation: linear memories (exact decisions pending, see PENDING_MODULES)
    "validation.linear_memory",
    "validation.linear_memory.capacity", "validation.linear_memory.cli",
    "validation.linear_memory.data", "validation.linear_memory.finite_size",
    "validation.linear_memory.exact_listwise", "validation.linear_memory.max_margin",
    "validation.linear_memory.train_listwise",
    "validation.linear_memory.margins", "validation.linear_memory.mechanism",
    "validation.linear_memory.models", "validation.linear_memory.registry",
    "validation.linear_memory.spectra", "validation.linear_memory.theory",
    "validation.linear_memory.train",
    # validation: factual recall
    "validation.factual_recall", "validation.factual_recall.cli",
    "validation.factual_recall.experiments", "validation.factual_recall.memories",
    "validation.factual_recall.sequential", "validation.factual_recall.task",
    "validation.factual_recall.trials", "validation.factual_recall.transformer",
    "validation.factual_recall.theory", "validation.factual_recall.fits",
    "validation.factual_recall.search",
    # validation: report sections (their build(ctx) functions)
    "validation.sections", "validation.sections.base", "validation.sections.factual_recall",
    "validation.sections.factual_recall_theory", "validation.sections.factual_recall_capacity",
    "validation.sections.factual_recall_paper",
    "validation.sections.linear_memory", "validation.sections.setup_text",
    "validation.sections.spectra", "validation.sections.theory",
    "validation.sections.token_retrieval", "validation.sections.claims",
    "validation.sections.layout", "validation.sections.prose", "validation.sections.figstyle",
    "validation.sections.listwise",
]

#: PENDING: packages whose docstrings have not been brought up to this standard yet.
#: To extend the check, document a package's public objects and move its modules
#: from here into IN_SCOPE.
PENDING_MODULES = [
    "validation.linear_memory.exact",        # certified existence of a memory (being reworked)
]

#: numpydoc error codes that fail the test
ENFORCED = {
    "GL01", "GL02", "GL03",  # placement of the quotes, no double blank lines
    "GL06", "GL07",          # unknown section / sections out of order
    "GL08",                  # the object has no docstring
    "SS01", "SS02", "SS03",  # one-line summary present, capitalised, ending with a period
    "SS05",                  # summary starts with a verb in the infinitive ("Compute", not "Computes")
    "SS06",                  # summary fits on one line
    "PR01", "PR02",          # every argument documented, no unknown argument documented
    "PR03",                  # arguments documented in the order of the signature
    "PR04", "PR06",          # every argument has a type (``*args``/``**kwargs`` exempt), spelt int/bool/str
    "PR07", "PR08", "PR09",  # every argument described, capitalised, ending with a period
    "PR10",                  # "name : type" spacing
    "RT01", "RT03",          # a function that returns a value has a described Returns
    "RT04", "RT05",          # return descriptions capitalised and ending with a period
    "YD01",                  # a generator has a Yields section
}
# Deliberately NOT enforced:
#   ES01  extended summary: a one-line summary plus Parameters/Returns is enough for
#         small helpers; the objects whose meaning needs it have one.
#   SA01  See Also: cross-links are added where they help, not on every object.
#   EX01  Examples: doctests exist for the main entry points; many functions need seconds
#         of compute, a sweep store or a trained model, which do not belong in a docstring.
#   RT02  "the first line of Returns holds only the type": we name a returned value where
#         the name is used in the text (``y : ndarray``), as numpydoc allows for tuples.


def _object(name):
    """The object named ``module.attr`` or ``module.Class.attr``."""
    modname, _, attr = name.rpartition(".")
    try:
        return getattr(importlib.import_module(modname), attr)
    except ModuleNotFoundError:                     # a method: module.Class.attr
        return getattr(_object(modname), attr)


def _public_objects():
    seen, out = set(), []
    for modname in IN_SCOPE:
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [n for n, o in vars(mod).items()
                     if not n.startswith("_") and (inspect.isfunction(o) or inspect.isclass(o))
                     and getattr(o, "__module__", None) == modname]
        for name in names:
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue            # constants, submodules, the version string
            if getattr(obj, "__module__", None) in PENDING_MODULES:
                continue            # a package's re-export of a pending module's object
            # named where it is defined: ``hcizz.mp_product`` is a module, the function
            # is ``hcizz.mp_product.mp_product``; re-exports are checked once
            qualified = f"{obj.__module__}.{obj.__qualname__}"
            if qualified not in seen:
                seen.add(qualified)
                out.append(qualified)
    return out


PUBLIC = _public_objects()


def _inherits_its_doc(cls, attr, member):
    """An override without a docstring of its own whose base method is documented: it keeps
    the base's contract and the docs show the base's text (``autodoc_inherit_docstrings``),
    e.g. a study's ``plan`` / ``execute``."""
    if not inspect.isfunction(member) or member.__doc__:
        return False
    return any(getattr(getattr(base, attr, None), "__doc__", None) for base in cls.__mro__[1:])


def _public_methods():
    """Public methods and properties defined by the public classes (inherited ones,
    e.g. scipy's ``pdf``, are documented where they are defined)."""
    out = []
    for name in PUBLIC:
        obj = _object(name)
        if inspect.isclass(obj):
            out += [f"{name}.{attr}" for attr, member in vars(obj).items()
                    if not attr.startswith("_")
                    and (inspect.isfunction(member) or isinstance(member, property))
                    and not _inherits_its_doc(obj, attr, member)]
    return out


def test_the_inventory_is_not_empty():
    # a broken collector must not turn this module into a silent pass
    assert len(PUBLIC) > 100


def test_every_public_module_is_checked_or_pending():
    """A new module cannot escape the check: it is in IN_SCOPE or under a PENDING package."""
    import pkgutil

    found = []
    for pkg in ("hcizz", "replica", "validation"):
        found.append(pkg)
        for info in pkgutil.walk_packages(importlib.import_module(pkg).__path__, pkg + "."):
            if not any(part.startswith("_") and part != "__main__" for part in info.name.split(".")):
                found.append(info.name)
    missing = [m for m in found if m not in IN_SCOPE
               and not any(m == p or m.startswith(p + ".") for p in PENDING_MODULES)
               and m != "validation"]         # exports only ``__version__``
    assert not missing, f"modules neither checked nor pending: {missing}"
    assert not set(IN_SCOPE) & set(PENDING_MODULES)


def _bad(x, y):
    """does something"""
    return x + y


def test_the_check_sees_a_bad_docstring():
    # the validator and the References check flag what they are meant to flag
    result = numpydoc_validate.validate(get_doc_object(_bad))
    codes = {code for code, _ in result["errors"]} & ENFORCED
    assert {"SS02", "SS03", "PR01", "RT01"} <= codes
    assert not "\n".join(get_doc_object(_bad)["References"]).strip()


def _spectral_law_parameter_errors(obj):
    """PR01/PR02 for a ``SpectralLaw`` subclass, against its ``_param_names``.

    Their constructor is ``SpectralLaw.__init__(*args, **kw)``, which numpydoc would
    compare the Parameters section against; the real parameters are ``_param_names``.
    """
    documented = [n.strip() for p in get_doc_object(obj)["Parameters"] for n in p.name.split(",")
                  if not n.strip().startswith("*")]          # ``**kw``: scipy's own keywords
    wanted = list(obj._param_names)
    errors = [f"PR01: parameter {n!r} not documented" for n in wanted if n not in documented]
    errors += [f"PR02: unknown parameter {n!r}" for n in documented if n not in wanted]
    return errors


def _constructor_outside_the_project(obj):
    """A class whose ``__init__`` comes from the standard library (``argparse``, an
    exception): its parameter list is documented there and differs between Python
    versions, so PR01/PR02 are not checked against it."""
    init = getattr(obj, "__init__", None)
    module = getattr(init, "__module__", None) or "builtins"
    return module.split(".")[0] not in ("hcizz", "replica", "validation")


@pytest.mark.parametrize("name", PUBLIC)
def test_numpydoc(name):
    from hcizz.numerics import SpectralLaw

    obj = _object(name)
    result = numpydoc_validate.validate(name)
    law = inspect.isclass(obj) and issubclass(obj, SpectralLaw) and obj is not SpectralLaw
    foreign = inspect.isclass(obj) and _constructor_outside_the_project(obj)
    errors = [f"{code}: {msg}" for code, msg in result["errors"]
              if code in ENFORCED and not ((law or foreign) and code in ("PR01", "PR02"))]
    if law:
        errors += _spectral_law_parameter_errors(obj)
    assert not errors, f"{name}:\n" + "\n".join(errors)


PUBLIC_METHODS = _public_methods()


@pytest.mark.parametrize("name", PUBLIC_METHODS)
def test_numpydoc_methods(name):
    # the same codes as for functions; References are the class's (not repeated per method)
    result = numpydoc_validate.validate(name)
    errors = [f"{code}: {msg}" for code, msg in result["errors"] if code in ENFORCED]
    assert not errors, f"{name}:\n" + "\n".join(errors)


@pytest.mark.parametrize("name", PUBLIC)
def test_has_references(name):
    refs = "\n".join(get_doc_object(_object(name))["References"]).strip()
    assert refs, f"{name}: no References section"
    assert "arXiv:" in refs or "docs/" in refs, f"{name}: References cite no paper or docs page"
