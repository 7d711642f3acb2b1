"""API pages: plain-text citations in docstrings become links.

Docstrings are read in a terminal (``help()``) as often as on the site, so they
cite the derivation pages as ``docs/<page>.md#<anchor>`` and papers as
``arXiv:<id>``, in plain text.  On the site both become links:

* ``docs/<page>.md#<anchor>`` (also inside double back-quotes) links to the
  built page ``<page>.html#<anchor>``, relative to the API page.  The anchor is
  the heading slug that MyST writes as an ``id`` (``myst_heading_anchors``);
  :mod:`check_site` fails the build's check when a link's page or anchor does not
  exist, so a renamed heading cannot leave a dead link behind.
* ``arXiv:<id>`` links to ``https://arxiv.org/abs/<id>``.

The rewriting runs on the reStructuredText that numpydoc produces (this
extension is listed after ``numpydoc`` in ``conf.py``), only outside literal
blocks and inline code other than a lone citation.
"""
from __future__ import annotations

import re

#: ``docs/page.md#anchor`` or ``docs/page.md``, optionally as ````...```` inline code
DOC_REF = re.compile(r"(?<![\w/`<])(``)?docs/([A-Za-z0-9_]+)\.md(?:#([A-Za-z0-9_\-]+))?(?(1)``)")
#: ``arXiv:2605.10795`` (new-style identifiers, optional version)
ARXIV = re.compile(r"(?<![\w/<`])arXiv:(\d{4}\.\d{4,5}(?:v\d+)?)(?![\w`>])")


def _relative_uri(app, target):
    docname = app.env.docname
    try:
        return app.builder.get_relative_uri(docname, target)
    except Exception:  # a builder without relative URIs (e.g. text): no link
        return None


def link_citations(lines, relative_uri):
    """Rewrite the citations of one docstring (a list of rst lines) in place.

    Parameters
    ----------
    lines : list of str
        The reStructuredText lines of a docstring, as numpydoc leaves them.
    relative_uri : callable
        ``relative_uri(page)`` gives the URI of the docs page ``page`` (without
        ``.md``) relative to the current page, or None when no link is possible.

    Returns
    -------
    int
        The number of citations turned into links.
    """
    n = 0
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                continue
        if stripped.startswith(">>>") or stripped.startswith("..."):
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if nxt and len(set(nxt)) == 1 and nxt[0] in "=-~^\"'`#*+" and len(nxt) >= 3:
            continue                       # a section title: its underline must keep its length

        def doc(m):
            nonlocal n
            page, anchor = m.group(2), m.group(3)
            uri = relative_uri(page)
            if uri is None:
                return m.group(0)
            n += 1
            label = f"docs/{page}.md" + (f"#{anchor}" if anchor else "")
            return f"`{label} <{uri}{'#' + anchor if anchor else ''}>`__"

        def arxiv(m):
            nonlocal n
            n += 1
            return f"`arXiv:{m.group(1)} <https://arxiv.org/abs/{m.group(1)}>`__"

        new = DOC_REF.sub(doc, line)
        new = ARXIV.sub(arxiv, new)
        lines[i] = new
        if stripped.endswith("::") and not stripped.startswith(".."):
            literal_indent = indent
        elif stripped.startswith(".. code") or stripped.startswith(".. math"):
            literal_indent = indent
    return n


def _constant_doc(name, obj, lines):
    """A module constant documented only by its type's docstring gets its ``#:`` comment.

    Autosummary summarises a ``dict`` or ``tuple`` constant by the first sentence of
    ``dict.__doc__`` (markup-breaking text such as ``dict(**kwargs)``); the module's
    ``#:`` comment is what the constant means.
    """
    doc = type(obj).__doc__ or ""
    if not lines or not doc or not "\n".join(lines).strip().startswith(doc.strip().split("\n")[0]):
        return
    modname, _, attr = name.rpartition(".")
    text = []
    try:
        from sphinx.pycode import ModuleAnalyzer
        text = list(ModuleAnalyzer.for_module(modname).find_attr_docs().get(("", attr), []))
    except Exception:  # no source: fall back to the type
        pass
    lines[:] = [t for t in text if t.strip()] or [f"A module constant (``{type(obj).__name__}``)."]


def _process(app, what, name, obj, options, lines):
    if what in ("data", "attribute"):
        _constant_doc(name, obj, lines)
    link_citations(lines, lambda page: _relative_uri(app, page))


def setup(app):
    app.connect("autodoc-process-docstring", _process, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
