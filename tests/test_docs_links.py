"""Docs pages: every cited ``docs/<page>.md#anchor`` exists, math delimiters are MyST-safe.

Anchors are GitHub-style heading slugs (lower case, punctuation other than ``-``/``_``
removed, spaces to hyphens, ``-1``, ``-2`` ... for repeated headings), which is also
what MyST's ``heading_anchors`` produces for headings without math.
"""
import re
from pathlib import Path

import pytest

from validation.sections.setup_text import TERMS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MODEL_PAGES = ["theory_full_rank.md", "listwise.md", "rank_constrained.md", "linear_memory.md",
               "factual_recall.md", "token_retrieval.md"]


#: the closing line of a numbered display equation, ``$$ (label)``
EQ_CLOSE = re.compile(r"^\$\$ \(([A-Za-z0-9][A-Za-z0-9\-]*)\)$")


def _slug(heading):
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")


def _prose_lines(text):
    """Lines outside fenced code blocks (``` or ~~~), with their line numbers."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(```|~~~)", line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            continue
        if fence is None:
            yield n, line


def anchors(page):
    """The set of heading anchors of ``docs/<page>``."""
    seen, out = {}, set()
    for _, line in _prose_lines((DOCS / page).read_text()):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = _slug(m.group(2))
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.add(s if k == 0 else f"{s}-{k}")
    return out


def test_slug_rule():
    # examples worked out by hand from the GitHub rule
    assert _slug("Spherical integrals (`hcizz.spherical`)") == "spherical-integrals-hcizzspherical"
    assert _slug("Original problem (OP)") == "original-problem-op"
    assert _slug("Annealed importance sampling at large `theta d^2`") == \
        "annealed-importance-sampling-at-large-theta-d2"


def _check(page, anchor, where):
    assert (DOCS / page).is_file(), f"{where}: no page docs/{page}"
    if anchor:
        assert anchor in anchors(page), f"{where}: no heading with anchor #{anchor} in docs/{page}"


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_links_between_docs_pages_resolve(page):
    text = (DOCS / page).read_text()
    for n, line in _prose_lines(text):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if "://" in target:
                continue
            path, _, anchor = target.partition("#")
            if path and not path.endswith(".md"):
                continue
            _check(path or page, anchor, f"docs/{page}:{n}")


def test_setup_terms_point_at_existing_anchors():
    for _, term, _, target in TERMS:
        page, _, anchor = target.partition("#")
        assert page.startswith("docs/") and anchor, (term, target)
        _check(page[len("docs/"):], anchor, f"setup term {term!r}")


def test_docs_references_in_the_repository_resolve():
    """Every ``docs/<page>.md#anchor`` cited in code, tests, README or docs exists."""
    pattern = re.compile(r"docs/([A-Za-z0-9_]+\.md)#([A-Za-z0-9_\-]+)")
    files = [ROOT / "README.md"] + sorted(DOCS.glob("*.md"))
    for sub in ("replica", "hcizz", "validation", "tests", "benchmarks"):
        files += sorted((ROOT / sub).rglob("*.py"))
    found = 0
    for f in files:
        if not f.is_file():
            continue
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            for page, anchor in pattern.findall(line):
                found += 1
                _check(page, anchor, f"{f.relative_to(ROOT)}:{n}")
    assert found > 0          # at least the setup text cites anchors


@pytest.mark.parametrize("page", MODEL_PAGES)
def test_math_delimiters_are_myst_dollarmath(page):
    """Display math: ``$$`` alone on its line (the closing one may carry an equation
    label, ``$$ (label)``), balanced; inline ``$...$`` closed on its line."""
    text = (DOCS / page).read_text()
    display = 0
    n_inline = 0
    for n, line in _prose_lines(text):
        if line.startswith("    ") and not line.strip().startswith(("$", "*", "-")):
            continue                                      # indented code block
        if line.strip() == "$$" or (display % 2 == 1 and EQ_CLOSE.match(line.strip())):
            display += 1
            continue
        assert "$$" not in line, f"docs/{page}:{n}: '$$' must stand on its own line"
        bare = re.sub(r"`[^`]*`", "", line)               # code spans hold no math
        if display % 2 == 0:
            assert bare.count("$") % 2 == 0, f"docs/{page}:{n}: unbalanced inline '$'"
            n_inline += bare.count("$") // 2
    assert display % 2 == 0, f"docs/{page}: unbalanced '$$'"
    assert display + n_inline > 0, f"docs/{page} has no math"


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_docs_cite_no_unshipped_spec(page):
    text = (DOCS / page).read_text()
    assert "THEORY" not in text


@pytest.mark.parametrize("page", MODEL_PAGES)
def test_model_pages_say_where_they_differ_from_the_papers(page):
    assert any(a.startswith("where-we-differ-from-the-paper") for a in anchors(page))


def test_no_project_file_cites_the_unshipped_spec():
    """No source, test, benchmark, docs or README line cites a THEORY file or its
    section numbers: the package's math lives in docs/ (LICENSE's legal phrase
    "theory of liability" is not a citation)."""
    import re

    root = DOCS.parent
    pattern = re.compile(r"THEORY(\.md|\s*§|\s+\d|\s+section|\s+says|'s|:)")
    files = [root / "README.md", *root.glob("docs/**/*.md")]
    for sub in ("replica", "hcizz", "validation", "tests", "benchmarks", "docs"):
        files += (root / sub).glob("**/*.py")
    hits = []
    for f in files:
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and "pattern = re.compile" not in line:
                hits.append(f"{f.relative_to(root)}:{i}: {line.strip()}")
    assert not hits, "\n".join(hits)


def test_docstring_citations_become_links():
    # docs/_ext/site_api.py rewrites the rst that numpydoc produces; worked out by hand
    import sys
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from site_api import link_citations
    finally:
        sys.path.pop(0)
    lines = ["See docs/theory_full_rank.md#the-model and ``docs/sweeps.md``; arXiv:2605.10795.",
             "::",
             "",
             "    docs/listwise.md#large-p-limit stays literal",
             ">>> 'docs/listwise.md' and arXiv:2412.06538 in a doctest stay",
             "back to prose: arXiv:2603.15923v2",
             "Policy (docs/sweeps.md)",
             "-----------------------"]
    n = link_citations(lines, lambda page: f"../{page}.html")
    assert n == 4
    assert lines[0] == ("See `docs/theory_full_rank.md#the-model <../theory_full_rank.html#the-model>`__"
                        " and `docs/sweeps.md <../sweeps.html>`__; "
                        "`arXiv:2605.10795 <https://arxiv.org/abs/2605.10795>`__.")
    assert lines[3] == "    docs/listwise.md#large-p-limit stays literal"
    assert lines[4].startswith(">>> 'docs/listwise.md'")
    assert lines[5] == "back to prose: `arXiv:2603.15923v2 <https://arxiv.org/abs/2603.15923v2>`__"
    assert lines[6] == "Policy (docs/sweeps.md)"              # a title keeps the length of its underline
    # no builder URI: the text is left alone
    keep = ["docs/sweeps.md"]
    assert link_citations(keep, lambda page: None) == 0 and keep == ["docs/sweeps.md"]
