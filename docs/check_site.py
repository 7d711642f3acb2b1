"""Check the built site for offline use: math renders from the shipped MathJax.

Usage::

    python docs/check_site.py [docs/_build/html]

For every HTML page of the built site:

* a page with math (an element of class ``math``) loads MathJax from the site's
  own copy, ``_static/mathjax/tex-chtml.js``, by a relative path that resolves to
  an existing file;
* no page mentions a CDN, and no page loads a script or a stylesheet from another
  host (the site must work without internet access).

Prints one line per problem and a summary; exits 1 if there is a problem.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

MATHJAX = "_static/mathjax/tex-chtml.js"
#: hosts that serve MathJax or other front-end packages; none may appear in the site
CDN_HOSTS = ("cdn.jsdelivr.net", "cdnjs.cloudflare.com", "unpkg.com", "cdn.mathjax.org",
             "polyfill.io", "ajax.googleapis.com", "code.jquery.com", "fonts.googleapis.com")
_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=\"([^\"]*)\"", re.I)
_LINK = re.compile(r"<link\b[^>]*>", re.I)
_HREF = re.compile(r"\bhref=\"([^\"]*)\"", re.I)
_MATH = re.compile(r"class=\"math[\s\"]", re.I)


def _remote(url: str) -> bool:
    return url.startswith(("http://", "https://", "//"))


def check_page(page: Path, root: Path) -> tuple[list[str], bool]:
    """Problems of one page, and whether the page has math."""
    html = page.read_text(encoding="utf-8", errors="replace")
    name = page.relative_to(root).as_posix()
    problems = []
    for host in CDN_HOSTS:
        if host in html:
            problems.append(f"{name}: mentions the CDN {host}")
    scripts = _SCRIPT.findall(html)
    for src in scripts:
        if _remote(src):
            problems.append(f"{name}: loads the script {src} from another host")
    for tag in _LINK.findall(html):
        if "stylesheet" in tag.lower() or "preload" in tag.lower():
            for href in _HREF.findall(tag):
                if _remote(href):
                    problems.append(f"{name}: loads {href} from another host")
    has_math = bool(_MATH.search(html))
    if has_math:
        local = [s for s in scripts if s.split("?")[0].endswith(MATHJAX)]
        if not local:
            problems.append(f"{name}: has math but does not load {MATHJAX}")
        for src in local:
            target = (page.parent / src.split("?")[0]).resolve()
            if target != (root / MATHJAX).resolve() or not target.is_file():
                problems.append(f"{name}: its MathJax {src} is not the site's {MATHJAX}")
    return problems, has_math


def check_site(root: Path) -> tuple[list[str], int, int]:
    """All problems of the site at ``root``; the number of pages and of pages with math."""
    root = Path(root)
    if not (root / "index.html").is_file():
        return [f"{root}: no index.html (not a built site)"], 0, 0
    if not (root / MATHJAX).is_file():
        return [f"{root}: no {MATHJAX}"], 0, 0
    problems, pages, with_math = [], 0, 0
    for page in sorted(root.rglob("*.html")):
        rel = page.relative_to(root).parts
        if rel[0] in ("_static", "_sources", "_images", "_downloads"):
            continue
        pages += 1
        found, has_math = check_page(page, root)
        problems += found
        with_math += has_math
    return problems, pages, with_math


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0] if argv else Path(__file__).resolve().parent / "_build" / "html")
    problems, pages, with_math = check_site(root)
    for line in problems:
        print(line)
    print(f"check_site: {pages} pages, {with_math} with math, {len(problems)} problems "
          f"(MathJax from {MATHJAX}, no CDN)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
