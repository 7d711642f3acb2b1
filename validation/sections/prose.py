"""Check the numbers quoted in the report's sentences against the values of ``report.json``.

Sections write their prose with f-strings over the same values they put into
``report.json``; :func:`unmatched_numbers` finds every decimal number of a
sentence that no value of the section's ``report.json`` entry rounds to, so a
sentence that drifted from its numbers (a typed value, a stale constant, a
value rounded from another quantity) is caught.  Tables, code spans, links,
headings and figure lines are not prose and are skipped; integers (sizes,
counts, seeds) are skipped too, since a report is full of them.
"""
from __future__ import annotations

import math
import re

from .layout import blocks
from .base import fill_doc

__all__ = ["prose_numbers", "json_leaves", "json_numbers", "sources", "unmatched_numbers"]

#: A decimal number as printed: optional sign, digits, a point, digits, optional exponent.
_NUMBER = re.compile(r"(?<![\w.^])([+-]?\d+\.\d+(?:e[+-]?\d+)?)(%?)(?![\w.]*\d)")
_CODE = re.compile(r"`[^`]*`")
_LINK = re.compile(r"\]\([^)]*\)|arXiv:\d+\.\d+")
_NUM_IN_TEXT = re.compile(r"[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


@fill_doc
def prose_numbers(markdown, *, min_digits=2):
    """The decimal numbers quoted in the prose of a Markdown text.

    Parameters
    ----------
    markdown : str
        Report text.
    min_digits : int, optional
        Only numbers with at least this many significant digits are returned
        (``0.5`` or ``1.0`` name too many things to be checked).

    Returns
    -------
    list of (str, str)
        ``(number as printed, the paragraph it stands in)`` for paragraphs and
        list items; code spans and link targets removed first.

    %(ref_report)s

    Examples
    --------
    >>> prose_numbers("The threshold is 0.862 (`alpha = 0.5`).\\n\\n| 0.123 |\\n|---|")
    [('0.862', 'The threshold is 0.862 (`alpha = 0.5`).')]
    """
    out = []
    for kind, text in blocks(markdown):
        if kind not in ("paragraph", "list"):
            continue
        clean = _LINK.sub(" ", _CODE.sub(" ", text))
        for m in _NUMBER.finditer(clean):
            s = m.group(1) + m.group(2)
            if _significant(m.group(1)) >= min_digits:
                out.append((s, text))
    return out


def _significant(s):
    mant = s.lstrip("+-").split("e")[0].replace(".", "").lstrip("0")
    return len(mant)


@fill_doc
def json_leaves(data, path=()):
    """Every number of a JSON value with its path (numbers inside strings under the string's path).

    Parameters
    ----------
    data : object
        A JSON-able value.
    path : tuple, optional
        Prefix of the paths.

    Returns
    -------
    list of (tuple, float)
        ``(path of keys and indices, value)`` for each number.

    %(ref_report)s

    Examples
    --------
    >>> json_leaves({"a": [1.5, "by +0.02"]})
    [(('a', 0), 1.5), (('a', 1), 0.02)]
    """
    out = []
    if isinstance(data, bool) or data is None:
        return out
    if isinstance(data, (int, float)):
        if math.isfinite(data):
            out.append((path, float(data)))
    elif isinstance(data, str):
        out.extend((path, abs(float(x))) for x in _NUM_IN_TEXT.findall(data))
    elif isinstance(data, dict):
        for k, v in data.items():
            out.extend(json_leaves(v, path + (k,)))
    elif isinstance(data, (list, tuple)):
        for i, v in enumerate(data):
            out.extend(json_leaves(v, path + (i,)))
    return out


@fill_doc
def sources(printed, data):
    """The paths of ``data`` whose value rounds to a printed number.

    Parameters
    ----------
    printed : str
        The number as printed (``"0.862"``, ``"+6.2%"``).
    data : object
        A ``report.json`` entry.

    Returns
    -------
    list of tuple
        The matching paths.

    %(ref_report)s

    Examples
    --------
    >>> sources("0.862", {"a": 0.8619, "b": [0.5, 0.8624]})
    [('a',), ('b', 1)]
    """
    return [p for p, v in json_leaves(data) if _matches(printed, [v])]


@fill_doc
def json_numbers(data):
    """Every number of a ``report.json`` entry: numeric leaves and numbers written inside strings.

    Parameters
    ----------
    data : object
        A JSON-able value.

    Returns
    -------
    list of float
        The finite numbers (booleans excluded).

    %(ref_report)s

    Examples
    --------
    >>> json_numbers({"a": [1.5, {"b": "differs by +0.02 (2.1 sigma)"}], "c": True})
    [1.5, 0.02, 2.1]
    """
    return [v for _, v in json_leaves(data)]


def _matches(printed, values):
    """Whether a printed decimal is some value rounded to the printed digits (also as a percent)."""
    pct = printed.endswith("%")
    s = printed.rstrip("%")
    x = abs(float(s))
    mant = s.lstrip("+-").split("e")
    decimals = len(mant[0].split(".")[1]) - (int(mant[1]) if len(mant) > 1 else 0)
    half = 0.5 * 10.0 ** (-decimals) * (1 + 1e-9)
    for v in values:
        for w in ((100 * v,) if pct else (v, 100 * v)):
            if abs(abs(w) - x) <= half:
                return True
    return False


@fill_doc
def unmatched_numbers(markdown, data, *, min_digits=2):
    """The prose numbers of ``markdown`` that no value of ``data`` rounds to.

    Parameters
    ----------
    markdown : str
        A section's Markdown.
    data : object
        Its ``report.json`` entry (numbers inside strings count: a verdict
        string carries its difference and sigma count).
    min_digits : int, optional
        See :func:`prose_numbers`.

    Returns
    -------
    list of (str, str)
        ``(number, paragraph)`` for each number that matches nothing: a value
        ``v`` matches a number printed with ``k`` decimals when
        ``|v - x| <= 10^-k / 2`` (signs ignored; ``v`` or ``100 v`` for a
        percent).

    %(ref_report)s

    Examples
    --------
    >>> unmatched_numbers("Measured 0.862, predicted 0.844.", {"threshold": 0.8619, "theory": 0.8445})
    []
    >>> unmatched_numbers("Measured 0.862, predicted 0.850.", {"threshold": 0.8619, "theory": 0.8445})
    [('0.850', 'Measured 0.862, predicted 0.850.')]
    """
    values = json_numbers(data)
    return [(n, p) for n, p in prose_numbers(markdown, min_digits=min_digits) if not _matches(n, values)]
