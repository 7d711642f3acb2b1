"""What every report section uses to render: its result, its context, tables and links.

The render layer of the report: sections import it, :mod:`validation.report`
(above the sections) imports it and the sections; nothing here computes a
result.
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from hcizz import docstrings

__all__ = ["SectionResult", "Context", "md_table", "docs_href", "PARAMETERS", "fill_doc"]

#: Shared docstring entries of the sections (filled by ``fill_doc``): the ``build(ctx)``
#: every section module exports, the arguments of the part renderers
#: ``render(ctx, md, data, figs)`` and the ``ref_*`` References sections several
#: docstrings cite.
PARAMETERS = {
    "section_build": (
        "Parameters\n----------\nctx : validation.report.Context\n"
        "    The report context: quick or full mode, seed, output folder, figure\n"
        "    saving and progress.\n\nReturns\n-------\nSectionResult\n"
        "    The section's Markdown, its ``report.json`` entry (``data``; the keys\n"
        "    named on its docs page are a contract) and its figures."),
    "render_parameters": ("Parameters\n----------\nctx : validation.sections.base.Context\n"
                          "    The report context.\nmd : list of str\n    Markdown blocks, appended to."),
    "render_figs": "figs : list of str\n    Figure names, appended to.",
    # whole References sections cited by several docstrings (one text per cited page)
    "ref_report": "References\n----------\ndocs/quickstart.md#4-the-report",
    "ref_assocmem_documentation": "References\n----------\ndocs/index.md#assocmem-documentation",
    "ref_memories_against_theory": "References\n----------\ndocs/factual_recall.md#memories-against-theory",
}

#: :func:`hcizz.docstrings.fill_doc` with the sections' entries (:data:`PARAMETERS`) besides the shared ones.
fill_doc = functools.partial(docstrings.fill_doc, **PARAMETERS)


@fill_doc
@dataclass
class SectionResult:
    """What a section contributes: markdown body, JSON data and figure files.

    Parameters
    ----------
    markdown : str
        The section's body in ``report.md``.
    data : dict
        The section's entry in ``report.json`` (JSON-able).
    figures : list of str, optional
        Figure files written into the report folder.

    %(ref_assocmem_documentation)s
    """

    markdown: str
    data: dict
    figures: list = field(default_factory=list)


@dataclass
class Context:
    """Passed to every section's ``build``.

    Parameters
    ----------
    out : Path
        Report folder; figures go to ``out / name``.
    quick : bool
        Quick mode (small sizes, a few minutes in total on 2 cores).
    seed : int, optional
        Root seed; sections derive their own streams from it.
    executor : str or validation.engine.WorkerPool, optional
        What sections pass as ``run_sweep(..., executor=ctx.executor)``:
        :func:`reproduce` gives one :class:`validation.engine.WorkerPool` for
        the whole run; the default ``"processes"`` starts a pool per sweep.
    figure_checks : dict, optional
        Filled by :meth:`savefig`: figure file -> problems found by
        :func:`validation.sections.figstyle.figure_problems` (empty list: none).

    References
    ----------
    docs/index.md#assocmem-documentation; docs/sweeps.md#one-pool-for-many-sweeps
    """

    out: Path
    quick: bool
    seed: int = 0
    executor: object = "processes"
    #: figure file -> problems found by :func:`validation.sections.figstyle.figure_problems`
    figure_checks: dict = field(default_factory=dict)

    def progress(self, msg):
        """Print one progress line on stderr.

        Parameters
        ----------
        msg : str
            The message (prefixed with ``[reproduce]``).
        """
        print(f"[reproduce] {msg}", file=sys.stderr, flush=True)

    def savefig(self, fig, name):
        """Save a matplotlib figure atomically as ``out/name`` (PNG, 150 dpi) and a PDF next to it, and close it.

        Every text is raised to the report's smallest font
        (:data:`validation.sections.figstyle.MIN_FONT`) and the figure is checked
        (:func:`validation.sections.figstyle.figure_problems`: every axes has
        data and both axis labels); the problems found are kept in
        ``figure_checks[name]``.

        Parameters
        ----------
        fig : matplotlib.figure.Figure
            The figure.
        name : str
            File name inside the report folder.

        Returns
        -------
        str
            ``name``, the path relative to ``out`` for use in markdown.
        """
        import matplotlib.pyplot as plt

        from .figstyle import enforce_min_font, figure_problems

        enforce_min_font(fig)
        self.figure_checks[name] = figure_problems(fig)
        path = self.out / name
        tmp = path.with_name(f".{path.name}.tmp.png")
        fig.savefig(tmp, dpi=150, bbox_inches="tight")
        pdf = path.with_suffix(".pdf")
        tmp_pdf = pdf.with_name(f".{pdf.name}.tmp.pdf")
        fig.savefig(tmp_pdf, bbox_inches="tight")
        plt.close(fig)
        tmp.replace(path)
        tmp_pdf.replace(pdf)
        return name


#: The repository's docs folder (absent in a non-editable install).
_DOCS_DIR = Path(__file__).resolve().parent.parent.parent / "docs"


@fill_doc
def docs_href(target, out):
    """Return a link to a docs target from the report folder.

    Parameters
    ----------
    target : str
        ``"docs/<page>.md"`` or ``"docs/<page>.md#<anchor>"``.
    out : str or Path
        Report folder (where ``report.md`` is written).

    Returns
    -------
    str
        A path relative to ``out`` (with the anchor) when ``out`` lies inside the
        repository and its ``docs/`` page exists, so that the link works in a checkout
        and on GitHub; else ``target`` itself, the path from the repository root (a
        report written elsewhere, or a non-editable install, which ships no docs).

    %(ref_assocmem_documentation)s

    Examples
    --------
    >>> docs_href("docs/theory_full_rank.md#the-model", _DOCS_DIR.parent / "report")
    '../docs/theory_full_rank.md#the-model'
    """
    page, sep, anchor = target.partition("#")
    path = _DOCS_DIR / Path(page).relative_to("docs")
    out = Path(out).resolve()
    if not path.exists() or not out.is_relative_to(_DOCS_DIR.parent):
        return target
    rel = Path(os.path.relpath(path, out)).as_posix()
    return rel + sep + anchor


def md_table(header, rows, fmt=None):
    """Render a Markdown table.

    Parameters
    ----------
    header : sequence of str
        Column titles.
    rows : iterable of sequence
        The cells of each row (``None`` cells are printed as ``None``).
    fmt : dict, optional
        Column index -> format spec (``{1: ".3f"}``) for the non-None cells.

    Returns
    -------
    str
        The table, one line per row, ending with a newline.

    References
    ----------
    docs/architecture.md#where-to-add

    Examples
    --------
    >>> print(md_table(["d", "alpha"], [[20, 0.97063]], {1: ".3f"}), end="")
    | d | alpha |
    |---|---|
    | 20 | 0.971 |
    """
    fmt = fmt or {}
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            spec = fmt.get(i)
            cells.append(format(c, spec) if spec and c is not None else str(c))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
