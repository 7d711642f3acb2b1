"""Sphinx configuration of the assocmem documentation site.

Build (warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

or ``bash docs/build.sh``.  Requires the ``docs`` extra: ``pip install -e ".[docs]"``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# Document the checkout the docs live in, even if another copy is installed.
sys.path.insert(0, str(ROOT))
# The site's own extensions (MathJax shipped with the site, the report as pages).
sys.path.insert(0, str(DOCS / "_ext"))
import api_coverage  # noqa: E402  (docs/_ext)
from api_coverage import resolve as _resolve  # noqa: E402
# Gallery scripts are run in subprocess-free mode; keep BLAS to the 2 cores CI has.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "agg")

project = "assocmem"
author = "the assocmem authors"
copyright = "the assocmem authors, BSD-3-Clause"
try:
    from importlib.metadata import version as _version
    release = _version("assocmem")
except Exception:  # not installed: documenting a bare checkout
    release = "0.1.0"
version = release

# The landing page (docs/index.md) is the toctree root: its hidden toctree is the
# top bar.
root_doc = "index"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    "site_mathjax",      # docs/_ext: the pinned MathJax in _static/mathjax
    "site_report",       # docs/_ext: the validation report as pages under report/
    "site_api",          # docs/_ext: docs/*.md#... and arXiv ids in docstrings as links
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "generated/*.examples", "generated/backreferences", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.json",
                    "examples/GALLERY_HEADER.rst", "_ext", "_inv", "_static",
                    "sg_execution_times.rst", "auto_examples/sg_execution_times.rst"]
templates_path = ["_templates"]

# -- MyST: the existing Markdown pages, with $...$ / $$...$$ math -------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_dmath_double_inline = True
myst_heading_anchors = 4

# -- math: MathJax from _static (docs/_ext/site_mathjax.py), numbered equations --
# The pinned MathJax 3 copy that the build unpacks into docs/_static/mathjax; no CDN.
mathjax_path = "mathjax/tex-chtml.js"
# MathJax 3 configuration (myst-parser adds the classes it may typeset); equation
# numbers are Sphinx's ("$$ ... $$ (label)", referenced with {eq}`label`).
mathjax3_config = {"tex": {"tags": "none"}}
math_eqref_format = "({number})"

# -- autodoc / autosummary / numpydoc ----------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True
# Docstring examples are checked by the test suite, not executed here.

# Broken cross-references are errors (with -W), also those to Python, NumPy, SciPy
# and mpmath: intersphinx resolves them against the inventories shipped in
# docs/_inv (CI cannot reach those sites; docs/_inv/README.md says where each
# inventory comes from).  Links go to each project's current documentation.
nitpicky = True
# References into private (underscore) modules are deliberately not documented.
nitpick_ignore_regex = [(r"py:.*", r".*\._\w+\..*")]
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", "_inv/python.inv"),
    "numpy": ("https://numpy.org/doc/stable", "_inv/numpy.inv"),
    "scipy": ("https://docs.scipy.org/doc/scipy", "_inv/scipy.inv"),
    "mpmath": ("https://mpmath.org/doc/current", "_inv/mpmath.inv"),
}
intersphinx_timeout = 1            # never used: every inventory is a local file

# -- sphinx-gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "min_reported_time": 1,
    "abort_on_example_error": True,
    "show_memory": False,
    "plot_gallery": "True",
    # the timing pages load jQuery, DataTables and Bootstrap from CDNs; the site
    # must work offline (docs/check_site.py), so they are not written
    "write_computation_times": False,
    # "Examples using X" on every API page whose object a gallery example uses
    # (docs/_templates/autosummary/*.rst include the mini-gallery)
    "doc_module": ("replica", "hcizz", "validation"),
    "backreferences_dir": "generated/backreferences",
    "inspect_global_variables": False,
}

# -- HTML ---------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "assocmem"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    # the top bar: the nine short labels of the root toctree, none hidden under "More"
    "header_links_before_dropdown": 9,
    "navbar_align": "left",
}
# single pages have no section navigation: no empty left column there
html_sidebars = {page: [] for page in ("index", "install", "quickstart", "citing",
                                       "changelog")}
html_sidebars["report/*"] = []   # the report's wide tables get the page's full width
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["site.css"]

# -- coverage check: every public object of the API is on a reference page ---
# (docs/_ext/api_coverage.py; tests/test_api_coverage.py runs the same check)
def _check_api_coverage(app):
    from sphinx.util import logging
    log = logging.getLogger("assocmem.api")
    for name in api_coverage.missing_names(DOCS):
        log.warning("public object %s is on no API reference page (%s)", name,
                    ", ".join(api_coverage.API_PAGES))


# -- cross-references to re-exported objects -----------------------------------
# A docstring in ``validation.linear_memory.capacity`` that writes
# :func:`capacity_trial` means the object documented as
# ``validation.linear_memory.capacity_trial`` (its public, re-exported name).
# Resolve such references by object identity against the documented objects.
_DOCUMENTED = None


def _documented_objects(env):
    global _DOCUMENTED
    if _DOCUMENTED is None:
        _DOCUMENTED = {}
        for name, entry in env.get_domain("py").objects.items():
            if entry.objtype == "module":
                continue
            try:
                _DOCUMENTED.setdefault(id(_resolve(name)), (name, entry.objtype))
            except Exception:
                pass
    return _DOCUMENTED


def _resolve_reexported(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode
    py = env.get_domain("py")
    target = node["reftarget"].lstrip("~.")
    if node.get("reftype") == "mod":
        # a module without its own page: link the reference page that lists it
        for name, entry in py.objects.items():
            if name.startswith(target + "."):
                return make_refnode(app.builder, node["refdoc"], entry.docname, "", contnode,
                                    target)
        return None
    modname, clsname = node.get("py:module"), node.get("py:class")
    candidates = []
    if modname:
        parts = modname.split(".")
        if clsname:
            candidates.append(f"{modname}.{clsname}.{target}")
        candidates += [".".join(parts[:i] + [target]) for i in range(len(parts), 0, -1)]
    candidates.append(target)
    table = _documented_objects(env)
    hit = None
    for cand in candidates:
        try:
            obj = _resolve(cand)
        except Exception:
            continue
        hit = table.get(id(obj))
        if hit is not None:
            break
    if hit is None:
        # no usable context (e.g. an autosummary summary line, or a docstring shown
        # under its re-exported name): accept a unique documented suffix match
        objs = {}
        for name, entry in py.objects.items():
            if name.endswith("." + target) and entry.objtype != "module":
                try:
                    objs.setdefault(id(_resolve(name)), name)
                except Exception:
                    pass
        if len(objs) == 1:
            hit = (next(iter(objs.values())), None)
    if hit is None:
        return None
    name = hit[0]
    return make_refnode(app.builder, node["refdoc"], py.objects[name].docname, name, contnode,
                        name)


def _resolve_external_ufunc(app, env, node, contnode):
    """``:func:`scipy.special.ndtri_exp``` and the like: NumPy and SciPy list their
    ufuncs as data in their inventories, so a ``func`` reference to one is retried
    as ``obj`` (any object type) against the shipped inventories."""
    if node.get("refdomain") != "py" or node.get("reftype") not in ("func", "meth"):
        return None
    if not node["reftarget"].lstrip("~.").startswith(("numpy.", "scipy.")):
        return None
    from sphinx.ext import intersphinx
    retry = node.deepcopy()
    retry["reftype"] = "obj"
    return intersphinx.missing_reference(app, env, retry, contnode)


def setup(app):
    app.connect("builder-inited", _check_api_coverage)
    app.connect("missing-reference", _resolve_external_ufunc)
    app.connect("missing-reference", _resolve_reexported)
