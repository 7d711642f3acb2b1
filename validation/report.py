"""The main job: ``python -m validation reproduce`` builds the report.

Each report section lives in ``validation/sections/<key>.py`` and exposes

* ``KEY`` (top-level key of ``report.json``), ``TITLE``;
* ``build(ctx) -> SectionResult``.

A section's result is cached in ``DIR/.sections/<key>.json`` as soon as it is
finished, so an interrupted ``reproduce`` resumes with the remaining sections
(``--fresh`` recomputes everything).  All files are written atomically.
"""
from __future__ import annotations

import importlib
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from hcizz import __version__

from ._io import atomic_write_json, atomic_write_text, to_jsonable

__all__ = ["SectionResult", "Context", "SECTIONS", "reproduce", "reproduce_command", "docs_href"]

#: Report sections in order: (key, module).
SECTIONS = [
    ("theory", "validation.sections.theory"),
    ("spectra", "validation.sections.spectra"),
    ("linear_memory", "validation.sections.linear_memory"),
    ("factual_recall", "validation.sections.factual_recall"),
    ("token_retrieval", "validation.sections.token_retrieval"),
]


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

    References
    ----------
    docs/index.md#assocmem-documentation
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

    References
    ----------
    docs/index.md#assocmem-documentation
    """

    out: Path
    quick: bool
    seed: int = 0

    def progress(self, msg):
        """Print one progress line on stderr.

        Parameters
        ----------
        msg : str
            The message (prefixed with ``[reproduce]``).
        """
        print(f"[reproduce] {msg}", file=sys.stderr, flush=True)

    def savefig(self, fig, name):
        """Save a matplotlib figure atomically as ``out/name`` (PNG) and close it.

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

        path = self.out / name
        tmp = path.with_name(f".{path.name}.tmp.png")
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
        plt.close(fig)
        tmp.replace(path)
        return name


def _load(module):
    return importlib.import_module(module)


def reproduce_command(out="report", *, quick=False, sections=None, fresh=False, seed=0):
    """Return the ``python -m validation reproduce`` command line equivalent to a :func:`reproduce` call.

    It is recorded as ``meta.command`` in ``report.json``.

    Parameters
    ----------
    out : str or Path, optional
        Output folder.
    quick : bool, optional
        Quick mode.
    sections : list of str, optional
        Section keys (``None``: all).
    fresh : bool, optional
        Ignore cached sections.
    seed : int, optional
        Root seed (omitted from the command when 0).

    Returns
    -------
    str
        The shell-quoted command line.

    References
    ----------
    docs/index.md#assocmem-documentation

    Examples
    --------
    >>> reproduce_command("my report", quick=True, seed=3)
    "python -m validation reproduce --out 'my report' --quick --seed 3"
    """
    import shlex

    words = ["python", "-m", "validation", "reproduce", "--out", str(out)]
    if quick:
        words.append("--quick")
    if sections is not None:
        words += ["--sections", ",".join(sections)]
    if fresh:
        words.append("--fresh")
    if seed != 0:
        words += ["--seed", str(seed)]
    return shlex.join(words)


#: The repository's docs folder (absent in a non-editable install).
_DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"


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

    References
    ----------
    docs/index.md#assocmem-documentation

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


def _section_docs_line(mod, out):
    """The line linking a section (module attribute ``DOCS``) to its docs page."""
    docs = getattr(mod, "DOCS", None)
    if not docs:
        return ""
    return f"Model, definitions and derivations: [{docs}]({docs_href(docs, out)}).\n\n"


def reproduce(out="report", *, quick=False, sections=None, fresh=False, seed=0):
    """Build ``out/report.md``, ``out/report.json`` and PNG figures.

    Parameters
    ----------
    out : str or Path
        Output folder (created).
    quick : bool
        Quick mode.
    sections : list of str, optional
        Keys to build (default: all available).  Unknown keys raise ValueError.
    fresh : bool
        Ignore cached section results from an earlier (interrupted) run.
    seed : int
        Root seed.

    Returns
    -------
    dict
        The content of ``report.json``.

    Raises
    ------
    ValueError
        On an unknown section, a negative seed or an output folder that is a
        file or cannot be created; nothing is written then.

    References
    ----------
    docs/index.md#assocmem-documentation;
    docs/reliability.md#bad-input-classes-and-what-each-gives
    """
    import matplotlib

    matplotlib.use("Agg")
    from hcizz.checks import check_int

    out = Path(out)
    known = [k for k, _ in SECTIONS]
    if sections is None:
        wanted = known
    else:
        for s in sections:
            if s not in known:
                raise ValueError(f"sections must be a subset of {known}, got {s!r}")
        wanted = [k for k in known if k in sections]
    seed = check_int("seed", seed, low=0)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out must be a folder, got the existing file {str(out)!r}")
    # everything is checked before the first file is written
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"out must be a folder that can be created, got {str(out)!r} "
                         f"({exc.strerror})") from None
    cache = out / ".sections"
    ctx = Context(out=out, quick=quick, seed=seed)
    report, md_parts, timings = {}, [], {}
    t_all = time.perf_counter()
    for key, modname in SECTIONS:
        if key not in wanted:
            continue
        try:
            mod = _load(modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                ctx.progress(f"section {key}: not implemented yet, skipped")
                continue
            raise
        cfile = cache / f"{key}.json"
        cached = None
        if cfile.exists() and not fresh:
            import json

            try:
                cached = json.loads(cfile.read_text())
                if cached.get("quick") != quick or cached.get("seed") != seed:
                    cached = None
                elif not all((out / f).exists() for f in cached.get("figures", [])):
                    cached = None
            except (ValueError, OSError):
                cached = None
        if cached is not None:
            ctx.progress(f"section {key}: reusing finished result from {cfile}")
            res = SectionResult(cached["markdown"], cached["data"], cached["figures"])
            timings[key] = cached.get("seconds")
        else:
            ctx.progress(f"section {key}: building ({'quick' if quick else 'full'} mode)")
            t0 = time.perf_counter()
            res = mod.build(ctx)
            timings[key] = time.perf_counter() - t0
            atomic_write_json(cfile, {"quick": quick, "seed": seed, "markdown": res.markdown,
                                      "data": to_jsonable(res.data), "figures": res.figures,
                                      "seconds": timings[key]})
            ctx.progress(f"section {key}: done in {timings[key]:.1f} s")
        report[key] = res.data
        md_parts.append(f"## {mod.TITLE}\n\n{_section_docs_line(mod, out)}{res.markdown.strip()}\n")
    total = time.perf_counter() - t_all
    meta = {"quick": quick, "seed": seed, "python": platform.python_version(),
            "platform": platform.platform(), "seconds": timings, "total_seconds": total,
            "command": reproduce_command(out, quick=quick, sections=sections, fresh=fresh,
                                         seed=seed),
            "version": __version__}
    report["meta"] = meta
    header = (f"# Associative-memory capacity: theory vs simulation\n\n"
              f"Generated by `{meta['command']}` (assocmem {__version__}) "
              f"({'quick' if quick else 'full'} mode, seed {seed}); "
              f"every number below is also in `report.json`.\n\n"
              f"Section run times (s): "
              + ", ".join(f"{k} {v:.1f}" for k, v in timings.items() if v is not None) + "\n\n")
    atomic_write_json(out / "report.json", report)
    from .sections.setup_text import setup_markdown

    setup = setup_markdown(lambda target: docs_href(target, out)) + "\n"
    atomic_write_text(out / "report.md", header + setup + "\n".join(md_parts))
    ctx.progress(f"wrote {out / 'report.md'} and {out / 'report.json'} in {total:.1f} s")
    return to_jsonable(report)


def md_table(header, rows, fmt=None):
    """Render a markdown table; ``fmt`` maps column index to a format spec."""
    fmt = fmt or {}
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            spec = fmt.get(i)
            cells.append(format(c, spec) if spec and c is not None else str(c))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
