"""The validation report as pages of the site.

``python -m validation reproduce --out DIR`` writes ``DIR/report.md``, its
figures and ``report.json`` (and any further ``*.md`` files, such as an appendix).
When ``ASSOCMEM_DOCS_REPORT`` names such a folder, this extension copies it into
``docs/report/`` (ignored by git) before Sphinx reads the sources: ``report.md``
becomes ``report/index.md``, every other ``*.md`` a page beside it, and the files
they link or show (figures, ``report.json``, PDFs) are copied next to them, so the
site shows the report with the same figures and with its math rendered.  Links
written for the repository (``docs/PAGE.md#anchor``) become links between site
pages (whether the report cites them from the repository root or relative to its
own folder).  Without ``ASSOCMEM_DOCS_REPORT`` the page says how to include the
report.

``bash docs/build.sh`` sets the variable when it is ``quick`` or ``full``: it
first runs ``python -m validation reproduce [--quick] --out docs/_build/report``.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
DEST = DOCS / "report"
ENV = "ASSOCMEM_DOCS_REPORT"
MAIN = "report.md"

#: a Markdown link or image target: ``](target)`` or ``](target "title")``
_LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
_PLACEHOLDER = """\
# Validation report

The report compares every prediction of the theory with simulations: one section
per paper, each with its figures and tables, and every number also in
`report.json`.  This build of the site does not include it.

To include it, build the site with a report folder:

```bash
ASSOCMEM_DOCS_REPORT=quick bash docs/build.sh          # runs the quick report first
ASSOCMEM_DOCS_REPORT=/path/to/report bash docs/build.sh  # an existing report folder
```

or produce the report on its own with
`python -m validation reproduce --quick --out report` (see {doc}`../quickstart`).
"""


def _rewrite_target(target: str, pages: set[str], src: Path,
                    docs: Path) -> tuple[str, str | None]:
    """The site's form of one link target, and the report file it needs (if any)."""
    if "://" in target or target.startswith(("#", "mailto:")):
        return target, None
    path, sep, anchor = target.partition("#")
    if path.startswith("docs/") and path.endswith(".md"):
        # a page of the documentation, cited from the repository root
        page = docs / path[len("docs/"):]
    else:
        page = (src / path).resolve() if path else None
    if path in pages:
        return ("index.md" if path == MAIN else path) + sep + anchor, None
    if page is not None and page.suffix == ".md" and page.is_relative_to(docs.resolve()):
        # a page of the documentation, cited relative to the report folder (a report
        # written inside the checkout links its pages that way)
        site = (docs / DEST.name).resolve()           # where the report's pages live
        return Path(os.path.relpath(page, site)).as_posix() + sep + anchor, None
    if "/" not in path and (src / path).is_file():
        return target, path            # a figure or data file of the report
    return target, None


def convert(text: str, pages: set[str], src: Path,
            docs: Path = DOCS) -> tuple[str, set[str]]:
    """Rewrite the links of one report page; return the text and the files it uses.

    Links inside fenced code blocks are left alone.
    """
    used: set[str] = set()
    out, fence = [], None
    for line in text.splitlines(keepends=True):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            mark = m.group(1)[:3]
            fence = None if fence == mark else (fence or mark)
            out.append(line)
            continue
        if fence is None:
            def sub(m):
                new, needs = _rewrite_target(m.group(2), pages, src, docs)
                if needs:
                    used.add(needs)
                return m.group(1) + new + m.group(3)
            line = _LINK.sub(sub, line)
        out.append(line)
    return "".join(out), used


def import_report(src: Path | None, dest: Path = DEST, docs: Path = DOCS) -> list[str]:
    """Fill ``dest`` with the site pages of the report in ``src`` (or the placeholder).

    Returns the names of the files written into ``dest``.
    """
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    if src is None:
        (dest / "index.md").write_text(_PLACEHOLDER, encoding="utf-8")
        return ["index.md"]
    src = Path(src)
    if not (src / MAIN).is_file():
        raise FileNotFoundError(f"{ENV}={src}: no {MAIN} in that folder")
    pages = {p.name for p in src.glob("*.md")}
    written, used = [], {"report.json"} & {p.name for p in src.iterdir()}
    others = sorted(pages - {MAIN})
    for name in sorted(pages):
        text, files = convert((src / name).read_text(encoding="utf-8"), pages, src, docs)
        used |= files
        if name == MAIN:
            text = _with_front_matter(text, others, "report.json" in used)
        out = "index.md" if name == MAIN else name
        (dest / out).write_text(text, encoding="utf-8")
        written.append(out)
    for name in sorted(used):
        shutil.copy2(src / name, dest / name)
        written.append(name)
    return written


def _with_front_matter(text: str, others: list[str], has_json: bool) -> str:
    """Add, below the title, the link to the numbers, and a hidden toctree of the
    other report pages (so that Sphinx places them under the report)."""
    lines = text.splitlines(keepends=True)
    at = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
    extra = []
    if has_json:
        extra.append("\nEvery number of this page, machine-readable: "
                     "{download}`report.json <report.json>`.\n")
    if others:
        extra.append("\n```{toctree}\n:hidden:\n\n"
                     + "".join(f"{Path(o).stem}\n" for o in others) + "```\n")
    return "".join(lines[:at] + extra + lines[at:])


def _source() -> Path | None:
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    if value in ("quick", "full"):
        raise RuntimeError(f"{ENV}={value}: docs/build.sh produces that report first; "
                           f"to call sphinx yourself, set {ENV} to a report folder")
    path = Path(value)
    return path if path.is_absolute() else Path.cwd() / path


def _config_inited(app, config):
    written = import_report(_source())
    if not any(n.endswith(".md") and n != "index.md" for n in written):
        # a single page: no empty section navigation beside it
        config.html_sidebars = {**config.html_sidebars, "report/index": []}


def setup(app):
    app.connect("config-inited", _config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
