"""Split the report into a short main text and its appendix of details.

``report.md`` keeps, for every (sub)section, its result paragraph, its key
figure and its key table; commands, store paths, CPU-time tables and the
secondary tables go to ``report_details.md``, which holds every section in
full under the same headings (so each section of ``report.md`` links to its
details by the same anchor).  The split is a rule on the rendered Markdown
(:func:`condense`), so every section follows it without code of its own.

A section may mark blocks explicitly: a block that starts with
``<!-- details -->`` always goes to the appendix, one that starts with
``<!-- main -->`` always stays (the markers are removed from both files).
"""
from __future__ import annotations

import re

from .claims import slug
from .base import fill_doc

__all__ = ["blocks", "condense", "strip_markers", "KEY_TABLE_ROWS", "KEY_TABLE_COLUMNS", "DETAILS_FILE"]

#: The appendix written next to report.md.
DETAILS_FILE = "report_details.md"
#: A section's first table stays in report.md when it has at most this many rows.
KEY_TABLE_ROWS = 7
#: ... and at most this many columns (a wider table is a secondary one).
KEY_TABLE_COLUMNS = 10
#: A kept paragraph is cut after the sentence that crosses this many characters.
MAX_PARAGRAPH = 320
#: Sentences about how a number was produced (commands, stores, timings) stay in the appendix.
_HOW = re.compile(r"python -m |\.jsonl|\.py\b|\bCPU\b|\bs wall\b|trials/s|--[a-z]")
_SENTENCE = re.compile(r"(?<=[.;!?])\s+")


@fill_doc
def blocks(markdown):
    """Split Markdown into blocks (kind, text).

    Parameters
    ----------
    markdown : str
        The text.

    Returns
    -------
    list of (str, str)
        Kinds ``"heading"``, ``"table"``, ``"figure"``, ``"code"``, ``"list"``,
        ``"paragraph"``, in order; blank lines separate blocks, a code fence
        is one block.

    %(ref_report)s

    Examples
    --------
    >>> [k for k, _ in blocks("# T\\n\\ntext\\n\\n| a |\\n|---|\\n| 1 |\\n\\n![f](f.png)")]
    ['heading', 'paragraph', 'table', 'figure']
    """
    out, cur, fence = [], [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            cur.append(line)
            fence = not fence
            if not fence:
                out.append("\n".join(cur))
                cur = []
            continue
        if fence:
            cur.append(line)
            continue
        if line.startswith("#"):
            if cur:
                out.append("\n".join(cur))
            out.append(line)
            cur = []
        elif not line.strip():
            if cur:
                out.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    if cur:
        out.append("\n".join(cur))
    return [(_kind(b), b) for b in out if b.strip()]


def _kind(text):
    first = text.lstrip().splitlines()[0]
    if first.startswith("```"):
        return "code"
    if first.startswith("#"):
        return "heading"
    if first.startswith("|"):
        return "table"
    if first.startswith("!["):
        return "figure"
    if first.startswith(("* ", "- ")) or re.match(r"\d+\. ", first):
        return "list"
    return "paragraph"


def _scan(text):
    """Parenthesis depth before each character (-1 inside code spans) and the top-level asides.

    Code spans are opaque and a link target ``](...)`` is no aside.  Returns ``(depths, asides)``
    with ``asides`` the ``(start, end)`` of each top-level parenthesis pair (``text[start:end]``
    includes both), or ``None`` if the parentheses or backticks do not balance.
    """
    depth, out, code, stack, asides = 0, [], False, [], []
    for i, ch in enumerate(text):
        out.append(depth if not code else -1)
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch == "(":
            link = i > 0 and text[i - 1] == "]"
            stack.append((i, link))
            depth += 0 if link else 1
        elif ch == ")":
            if not stack:
                return None
            j, link = stack.pop()
            if not link:
                depth -= 1
                if depth == 0:
                    asides.append((j, i + 1))
    return None if stack or code else (out, asides)


def _drop_how_asides(text, asides):
    """``text`` without the top-level parenthetical asides that say how a number was made."""
    pieces, i, cut = [], 0, False
    for j, k in asides:
        if _HOW.search(text[j:k]):
            pieces.append(text[i:j].rstrip())
            i, cut = k, True
    pieces.append(text[i:])
    return "".join(pieces), cut


def _sentences(text):
    """Split at sentence ends (and semicolons) outside parentheses and code spans."""
    scan = _scan(text)
    if scan is None:                                           # unbalanced: plain split
        return _SENTENCE.split(text), False
    text, cut = _drop_how_asides(text, scan[1])
    depths = _scan(text)[0]
    out, i = [], 0
    for m in _SENTENCE.finditer(text):
        if depths[m.start() - 1] == 0:
            out.append(text[i:m.start()])
            i = m.end()
    out.append(text[i:])
    return out, cut


def _short(paragraph):
    """The paragraph without its how-it-was-made sentences and asides, cut after MAX_PARAGRAPH characters.

    Sentences end at ``.;!?`` outside parentheses and code spans, so dropping a sentence never
    leaves a parenthesis open; a parenthetical aside about commands, stores or timings is dropped
    on its own, keeping the sentence around it.
    """
    kept, n = [], 0
    sentences, cut = _sentences(paragraph)
    for s in sentences:
        if _HOW.search(s):
            cut = True
            continue
        if n >= MAX_PARAGRAPH:
            cut = True
            break
        kept.append(s)
        n += len(s) + 1
    return " ".join(kept), cut


@fill_doc
def condense(markdown, details=DETAILS_FILE):
    """The main-text version of a report's Markdown.

    Parameters
    ----------
    markdown : str
        The full Markdown (what ``report_details.md`` holds).
    details : str, optional
        Link target of the appendix.

    Returns
    -------
    str
        For each part under a heading: its result paragraph (a block marked
        ``<!-- main -->``, else the last paragraph that opens in bold, such as
        ``**Verdict**``, else the first paragraph; without sentences that give
        commands, store paths or timings, and cut at a sentence after
        ``MAX_PARAGRAPH`` characters), its first figure and its first table
        when that has at most ``KEY_TABLE_ROWS`` rows and
        ``KEY_TABLE_COLUMNS`` columns; a line linking the part's full text in
        the appendix when anything was left out.

    %(ref_report)s

    Examples
    --------
    >>> md = "### Part\\n\\nResult.\\n\\nMethod.\\n\\n| a |\\n|---|\\n| 1 |\\n"
    >>> print(condense(md))
    ### Part
    <BLANKLINE>
    Result.
    <BLANKLINE>
    | a |
    |---|
    | 1 |
    <BLANKLINE>
    *Details: [Part](report_details.md#part).*
    <BLANKLINE>
    """
    parts, cur = [], [None, []]
    for kind, text in blocks(markdown):
        if kind == "heading":
            parts.append(cur)
            cur = [text, []]
        else:
            cur[1].append((kind, text))
    parts.append(cur)
    out = []
    for heading, body in parts:
        if heading is None and not body:
            continue
        title = heading.lstrip("#").strip() if heading else None
        kept, dropped = _condense_part(body)
        if heading:
            out.append(heading)
        out.extend(kept)
        if dropped and title is not None:
            out.append(f"*Details: [{title}]({details}#{slug(title)}).*")
    return "\n\n".join(out) + "\n"


def _marker(text):
    t = text.lstrip()
    for m in ("main", "details"):
        if t.startswith(f"<!-- {m} -->"):
            return m, re.sub(r"^\s*<!-- (details|main) -->\s*", "", text)
    return None, text


def _condense_part(body):
    """(kept blocks, whether anything was left out) of one part under a heading."""
    marked = [(k, t) for k, t in body]
    main = [i for i, (_, t) in enumerate(marked) if _marker(t)[0] == "main"]
    # the result paragraph: a marked one, else the last reading in bold ("**Verdict**", ...),
    # else the first paragraph
    paras = [i for i, (k, t) in enumerate(marked) if k == "paragraph" and _marker(t)[0] is None]
    bold = [i for i in paras if marked[i][1].lstrip().startswith("**")]
    if any(_kind(_marker(marked[i][1])[1]) == "paragraph" for i in main):
        result = None
    else:
        result = bold[-1] if bold else (paras[0] if paras else None)
    fig = next((i for i, (k, t) in enumerate(marked) if k == "figure"), None)
    table = next((i for i, (k, t) in enumerate(marked) if k == "table" and _marker(t)[0] is None), None)
    if table is not None:
        lines = marked[table][1].splitlines()
        if len(lines) - 2 > KEY_TABLE_ROWS or lines[0].count("|") - 1 > KEY_TABLE_COLUMNS:
            table = None
    kept, dropped = [], False
    for i, (kind, text) in enumerate(marked):
        m, clean = _marker(text)
        if m == "main":
            kept.append(clean)
        elif i == result:
            short, cut = _short(text)
            if short:
                kept.append(short)
            dropped = dropped or cut
        elif i in (fig, table):
            kept.append(text)
        else:
            dropped = True
    return kept, dropped


@fill_doc
def strip_markers(markdown):
    """The Markdown without the ``<!-- details -->`` / ``<!-- main -->`` markers (the appendix text).

    Parameters
    ----------
    markdown : str
        A section's Markdown, as the section wrote it (markers included).

    Returns
    -------
    str
        The same text without the markers.

    %(ref_report)s

    Examples
    --------
    >>> strip_markers("<!-- details -->\\nA table.")
    'A table.'
    """
    return re.sub(r"<!-- (details|main) -->\s*", "", markdown)
