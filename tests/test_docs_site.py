"""The documentation site: its examples, equations, citations, offline assets and report.

* The examples of the landing page and the quickstart print what the pages show
  (same comparison as the README's: ``tests/test_readme.py``).
* Every display equation of a derivation page is numbered, labels are unique, and
  every ``{eq}`` reference names a label.
* The BibTeX of the citation page has one entry per paper, with its arXiv id.
* The shipped intersphinx inventories are read here with zlib alone (independent of
  Sphinx's reader) and match the versions and SHA-256 recorded in docs/_inv/README.md.
* ``docs/check_site.py`` flags a CDN, a remote script and a math page without the
  local MathJax (synthetic pages), and passes the built site when there is one.
* ``docs/_ext/site_report.py`` turns a report folder into site pages (links and
  figures), and the MathJax fetcher refuses a tarball that is not the pinned one.
"""
import doctest
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from test_readme import _NumericChecker, same_output

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DERIVATION_PAGES = ["theory_full_rank.md", "rank_constrained.md", "linear_memory.md",
                    "factual_recall.md", "token_retrieval.md"]
EXAMPLE_PAGES = ["index.md", "quickstart.md"]
PAPERS = {"2605.10795", "2412.06538", "2603.15923", "2605.05189"}


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


check_site = _load("check_site", DOCS / "check_site.py")
site_report = _load("site_report", DOCS / "_ext" / "site_report.py")
site_mathjax = _load("site_mathjax", DOCS / "_ext" / "site_mathjax.py")


def _blocks(page, lang):
    return re.findall(rf"```{lang}\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"),
                      flags=re.S)


# -- examples -------------------------------------------------------------------

@pytest.mark.parametrize("page", EXAMPLE_PAGES)
def test_python_examples_print_what_the_page_shows(page):
    blocks = _blocks(page, "python")
    assert blocks, f"docs/{page} has no python example"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(checker=_NumericChecker(), optionflags=doctest.ELLIPSIS)
    session = {}                 # the blocks of a page are one session, in order
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, session, f"docs/{page} python block {i}", page, 0)
        runner.run(test, clear_globs=False)
        session.update(test.globs)          # DocTest works on a copy of the globals
    res = runner.summarize(verbose=False)
    assert res.failed == 0 and res.attempted >= 4


def _console_cases():
    cases = []
    for page in EXAMPLE_PAGES:
        for block in _blocks(page, "console"):
            cmd, out = None, []
            for line in block.splitlines():
                if line.startswith("$ "):
                    if cmd:
                        cases.append((page, cmd, "\n".join(out)))
                    cmd, out = line[2:], []
                else:
                    out.append(line)
            if cmd:
                cases.append((page, cmd, "\n".join(out)))
    return cases


@pytest.mark.parametrize("page,cmd,expected", _console_cases(),
                         ids=[c for _, c, _ in _console_cases()])
def test_console_examples_print_what_the_page_shows(page, cmd, expected):
    r = subprocess.run(cmd.replace("python -m", f"{sys.executable} -m"), shell=True,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert same_output(expected, r.stdout), \
        f"docs/{page} shows:\n{expected}\nprogram prints:\n{r.stdout}"


def test_the_quickstart_has_a_console_example():
    assert any(page == "quickstart.md" for page, _, _ in _console_cases())


# -- numbered equations -----------------------------------------------------------

def _display_equations(page):
    """(closing line, label or None) of every ``$$`` display equation of a page."""
    out, inside = [], False
    fence = None
    for line in (DOCS / page).read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*(```|~~~)", line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            continue
        if fence:
            continue
        s = line.strip()
        if not inside and s == "$$":
            inside = True
        elif inside and s.startswith("$$"):
            m = re.fullmatch(r"\$\$(?: \(([A-Za-z0-9][A-Za-z0-9\-]*)\))?", s)
            assert m, f"docs/{page}: malformed closing line {s!r}"
            out.append(m.group(1))
            inside = False
    assert not inside, f"docs/{page}: unclosed $$"
    return out


@pytest.mark.parametrize("page", DERIVATION_PAGES)
def test_every_display_equation_of_a_derivation_page_is_numbered(page):
    labels = _display_equations(page)
    assert labels, f"docs/{page} has no display equation"
    assert None not in labels, f"docs/{page}: a display equation has no label"
    # the text refers to its equations
    refs = re.findall(r"\{eq\}`([^`]+)`", (DOCS / page).read_text(encoding="utf-8"))
    assert len(refs) >= 3, f"docs/{page}: the text refers to no numbered equation"


def test_equation_labels_are_unique_and_references_resolve():
    labels = {}
    for page in sorted(p.name for p in DOCS.glob("*.md")):
        for label in _display_equations(page):
            if label is None:
                continue
            key = label.lower()            # HTML ids are case-folded
            assert key not in labels, f"label {label} in docs/{page} and docs/{labels[key]}"
            labels[key] = page
    for page in sorted(DOCS.glob("*.md")):
        for ref in re.findall(r"\{eq\}`([^`]+)`", page.read_text(encoding="utf-8")):
            assert ref.lower() in labels, f"docs/{page.name}: {{eq}}`{ref}` names no label"


# -- citation -------------------------------------------------------------------

def _bibtex_entries(text):
    """(type, key, fields) of each entry; braces must balance."""
    entries = []
    for m in re.finditer(r"@(\w+)\{([^,\s]+),", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1]
        fields = dict((k.lower(), " ".join(v.split())) for k, v in
                      re.findall(r"(\w+)\s*=\s*\{((?:[^{}]|\{[^{}]*\})*)\}", body))
        entries.append((m.group(1).lower(), m.group(2), fields))
    return entries


def test_citation_page_has_one_bibtex_entry_per_paper_and_one_for_the_package():
    text = "\n".join(_blocks("citing.md", "bibtex"))
    entries = _bibtex_entries(text)
    keys = [k for _, k, _ in entries]
    assert len(keys) == len(set(keys)) == 5
    eprints = {f["eprint"] for _, _, f in entries if "eprint" in f}
    assert eprints == PAPERS
    for kind, key, fields in entries:
        assert {"title", "author", "year"} <= set(fields), key
        if "eprint" in fields:
            assert fields["url"] == f"https://arxiv.org/abs/{fields['eprint']}", key
            assert fields["archiveprefix"] == "arXiv", key
    (package,) = [f for kind, _, f in entries if kind == "software"]
    assert package["version"] == site_version()


def site_version():
    cfg = (ROOT / "setup.cfg").read_text()
    return re.search(r"^version = (\S+)", cfg, flags=re.M).group(1)


# -- intersphinx inventories -------------------------------------------------------

def _read_inventory(path):
    """Project, version and {(role, name): uri} of a Sphinx v2 inventory (zlib only)."""
    raw = path.read_bytes()
    head = raw.split(b"\n", 4)
    assert head[0] == b"# Sphinx inventory version 2", path
    project = head[1].decode().removeprefix("# Project: ")
    version = head[2].decode().removeprefix("# Version: ")
    body = zlib.decompress(head[4]).decode()
    entries = {}
    for line in body.splitlines():
        m = re.match(r"(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+(\S*)\s+(.*)$", line)
        if m:
            uri = m.group(4)
            if uri.endswith("$"):
                uri = uri[:-1] + m.group(1)
            entries[(m.group(2), m.group(1))] = uri
    return project, version, entries


def _inventory_table():
    rows = {}
    for line in (DOCS / "_inv" / "README.md").read_text().splitlines():
        m = re.match(r"\| `(\w+)\.inv` \| (.+?) \| .+? \| `([0-9a-f]{64})` \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


@pytest.mark.parametrize("name,expect", [
    ("numpy", ("NumPy", ("py:class", "numpy.random.Generator"))),
    ("scipy", ("SciPy", ("py:data", "scipy.special.ndtri_exp"))),
    ("mpmath", ("mpmath", ("py:function", "mpmath.quad"))),
    ("python", ("Python", ("py:exception", "ValueError"))),
])
def test_shipped_inventory_is_the_recorded_one(name, expect):
    path = DOCS / "_inv" / f"{name}.inv"
    table = _inventory_table()
    project_version, sha = table[name]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    project, version, entries = _read_inventory(path)
    assert project_version == f"{project} {version}"
    assert project == expect[0] and expect[1] in entries
    assert len(entries) > 300


def test_intersphinx_mapping_reads_only_shipped_files():
    text = (DOCS / "conf.py").read_text()
    block = text[text.index("intersphinx_mapping = {"):]
    block = block[:block.index("}") + 1]
    pairs = re.findall(r'"(\w+)": \("(https://[^"]+)", "([^"]+)"\)', block)
    assert {p for p, _, _ in pairs} == {"python", "numpy", "scipy", "mpmath"}
    for _, _, local in pairs:
        assert (DOCS / local).is_file(), local


# -- the offline check of the built site -------------------------------------------

_PAGE = """<html><head>{head}</head><body>{body}</body></html>"""


def _site(tmp_path, pages, with_mathjax=True):
    (tmp_path / "index.html").write_text(_PAGE.format(head="", body="home"))
    if with_mathjax:
        mj = tmp_path / "_static" / "mathjax"
        mj.mkdir(parents=True)
        (mj / "tex-chtml.js").write_text("// MathJax")
    for name, html in pages.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(html)
    return check_site.check_site(tmp_path)


MATH = '<span class="math notranslate nohighlight">\\(x\\)</span>'


def test_check_site_passes_math_with_the_local_mathjax(tmp_path):
    ok = _PAGE.format(head='<script defer src="../_static/mathjax/tex-chtml.js"></script>',
                      body=MATH)
    problems, pages, with_math = _site(tmp_path, {"sub/page.html": ok})
    assert problems == [] and pages == 2 and with_math == 1


@pytest.mark.parametrize("head,why", [
    ("", "does not load"),
    ('<script src="_static/mathjax/tex-chtml.js"></script>', "is not the site's"),
    ('<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>',
     "CDN"),
])
def test_check_site_flags_math_without_the_local_mathjax(tmp_path, head, why):
    # a page one level down must reach _static through ../
    problems, _, _ = _site(tmp_path, {"sub/page.html": _PAGE.format(head=head, body=MATH)})
    assert problems and any(why in p for p in problems), problems


def test_check_site_flags_remote_assets_on_pages_without_math(tmp_path):
    head = ('<link rel="stylesheet" href="https://example.org/x.css" />'
            '<script src="//example.org/x.js"></script>')
    problems, _, _ = _site(tmp_path, {"p.html": _PAGE.format(head=head, body="text")})
    assert len(problems) == 2


def test_check_site_needs_the_mathjax_copy(tmp_path):
    problems, _, _ = _site(tmp_path, {}, with_mathjax=False)
    assert problems and "no _static/mathjax" in problems[0]


def test_built_site_renders_math_offline():
    site = DOCS / "_build" / "html"
    if not (site / "index.html").is_file():
        pytest.skip("the site is not built (bash docs/build.sh)")
    problems, pages, with_math = check_site.check_site(site)
    assert problems == [], problems[:10]
    assert with_math >= 5 and pages > with_math
    gallery = (site / "auto_examples" / "index.html").read_text(encoding="utf-8")
    assert "_static/mathjax/tex-chtml.js" in gallery


# -- the report as site pages ------------------------------------------------------

def _report(tmp_path):
    src = tmp_path / "report"
    src.mkdir()
    (src / "report.md").write_text(
        "# Report\n\nIntro.\n\n## A\n\n"
        "See [docs/theory_full_rank.md#load-and-capacity](docs/theory_full_rank.md#load-and-capacity)"
        " and [the details](report_details.md#b).\n\n"
        "![the capacity](cap.png)\n\n[PDF](cap.pdf) [web](https://arxiv.org/abs/2605.10795)\n\n"
        "```\n[not a link](docs/x.md)\n```\n")
    (src / "report_details.md").write_text("# Details\n\n## B\n\nBack to [report](report.md).\n")
    for name in ("cap.png", "cap.pdf", "report.json", "trials.jsonl"):
        (src / name).write_bytes(b"x")
    return src


def test_report_pages_rewrite_links_and_copy_the_figures(tmp_path):
    dest = tmp_path / "site_report"
    written = site_report.import_report(_report(tmp_path), dest)
    assert sorted(written) == sorted(["index.md", "report_details.md", "cap.png", "cap.pdf",
                                      "report.json"])
    index = (dest / "index.md").read_text()
    assert "](../theory_full_rank.md#load-and-capacity)" in index
    assert "](report_details.md#b)" in index and "![the capacity](cap.png)" in index
    assert "](https://arxiv.org/abs/2605.10795)" in index
    assert "[not a link](docs/x.md)" in index          # code blocks are left alone
    assert "{download}`report.json <report.json>`" in index
    assert ":hidden:\n\nreport_details\n" in index     # the appendix is under the report
    assert index.index("{download}") > index.index("# Report")
    assert "](index.md)" in (dest / "report_details.md").read_text()
    assert not (dest / "trials.jsonl").exists()        # only what a page uses


def test_report_links_relative_to_a_report_folder_inside_the_checkout(tmp_path):
    # ``reproduce --out docs/_build/report`` links the docs pages relative to its folder
    docs = tmp_path / "docs"
    src = docs / "_build" / "report"
    src.mkdir(parents=True)
    (docs / "theory_full_rank.md").write_text("# Theory\n")
    (src / "report.md").write_text(
        "# R\n\n[a](../../theory_full_rank.md#the-model) [b](docs/theory_full_rank.md)"
        " [c](../../missing.md)\n")
    site_report.import_report(src, docs / "report", docs=docs)
    text = (docs / "report" / "index.md").read_text()
    assert "[a](../theory_full_rank.md#the-model)" in text
    assert "[b](../theory_full_rank.md)" in text
    assert "[c](../missing.md)" in text               # no such page: Sphinx flags it


def test_report_placeholder_without_a_report(tmp_path):
    dest = tmp_path / "site_report"
    assert site_report.import_report(None, dest) == ["index.md"]
    text = (dest / "index.md").read_text()
    assert text.startswith("# Validation report") and "ASSOCMEM_DOCS_REPORT" in text


def test_report_folder_without_report_md_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no report.md"):
        site_report.import_report(tmp_path, tmp_path / "out")


# -- the MathJax pin ------------------------------------------------------------------

def test_mathjax_fetcher_refuses_a_tarball_that_is_not_the_pinned_one(tmp_path, monkeypatch):
    fake = tmp_path / "mathjax-3.2.2.tgz"
    fake.write_bytes(b"not mathjax")
    monkeypatch.setenv("ASSOCMEM_MATHJAX_TARBALL", str(fake))
    with pytest.raises(RuntimeError, match="is not the pinned"):
        site_mathjax.tarball()


def test_mathjax_pin_is_an_npm_sha512_integrity():
    algo, _, digest = site_mathjax.INTEGRITY.partition("-")
    assert algo == "sha512" and len(digest) == 88 and digest.endswith("==")
    assert re.fullmatch(r"\d+\.\d+\.\d+", site_mathjax.VERSION)
    conf = (DOCS / "conf.py").read_text()
    assert f'mathjax_path = "mathjax/{site_mathjax.ENTRY}"' in conf


def test_mathjax_cached_tarball_is_the_pinned_one():
    cached = site_mathjax.cache_dir() / site_mathjax.TARBALL
    if os.environ.get("ASSOCMEM_MATHJAX_TARBALL"):
        cached = Path(os.environ["ASSOCMEM_MATHJAX_TARBALL"])
    if not cached.is_file():
        pytest.skip("MathJax not fetched on this machine")
    assert site_mathjax._check(cached) == cached
