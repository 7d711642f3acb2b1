"""Report framework: section assembly, JSON content, resume after interruption, CLI errors."""
import json
import re
import subprocess
import sys
import types

import pytest

from validation import report as rep
from validation.sections import base as render


def _fake_section(key, calls, fail=False):
    mod = types.ModuleType(f"fake_{key}")
    mod.KEY, mod.TITLE = key, f"Fake {key}"

    def build(ctx):
        calls.append(key)
        if fail:
            raise KeyboardInterrupt  # an interruption in the middle of the run
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        name = ctx.savefig(fig, f"{key}.png")
        return rep.SectionResult(f"value **{len(calls)}**\n\n![fig]({name})",
                                 {"value": float(len(calls)), "nan": float("nan")}, [name])

    mod.build = build
    return mod


@pytest.fixture
def fake_sections(monkeypatch):
    calls, mods = [], {}
    monkeypatch.setattr(rep, "SECTIONS", [("a", "fake_a"), ("b", "fake_b")])
    monkeypatch.setattr(rep, "_load", lambda name: mods[name])
    return calls, mods


def test_report_written_with_one_key_per_section(tmp_path, fake_sections):
    calls, mods = fake_sections
    mods.update(fake_a=_fake_section("a", calls), fake_b=_fake_section("b", calls))
    data = rep.reproduce(tmp_path, quick=True)
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved == data
    assert set(saved) == {"a", "b", "meta", "claims"}
    assert saved["claims"] == []          # no section of a claim: an empty ledger
    assert saved["a"]["value"] == 1.0 and saved["b"]["value"] == 2.0
    assert saved["a"]["nan"] == "nan"  # strict JSON: NaN written as the string "nan" (hcizz.jsonout)
    md = (tmp_path / "report.md").read_text()
    assert "## Fake a" in md and "## Fake b" in md and "(a.png)" in md
    assert (tmp_path / "a.png").stat().st_size > 0


def test_interrupted_run_resumes_without_recomputing(tmp_path, fake_sections):
    calls, mods = fake_sections
    mods.update(fake_a=_fake_section("a", calls), fake_b=_fake_section("b", calls, fail=True))
    with pytest.raises(KeyboardInterrupt):
        rep.reproduce(tmp_path, quick=True)
    assert calls == ["a", "b"]
    assert not (tmp_path / "report.json").exists()
    mods["fake_b"] = _fake_section("b", calls)
    rep.reproduce(tmp_path, quick=True)
    assert calls == ["a", "b", "b"]  # a reused, b computed once more
    # another mode does not reuse the cache
    rep.reproduce(tmp_path, quick=False, sections=["a"])
    assert calls[-1] == "a"
    # --fresh recomputes
    n = len(calls)
    rep.reproduce(tmp_path, quick=False, sections=["a"], fresh=True)
    assert len(calls) == n + 1


def test_unknown_section_is_value_error(tmp_path, fake_sections):
    with pytest.raises(ValueError, match="sections must be a subset"):
        rep.reproduce(tmp_path, sections=["nope"])


def test_cli_error_is_one_line_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "validation", "reproduce", "--sections", "nope",
                        "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "sections" in r.stderr
    r = subprocess.run([sys.executable, "-m", "validation", "no-such-command"],
                       capture_output=True, text=True)
    assert r.returncode == 2


# ---- the Setup section and the links to the docs -----------------------------------------

#: Terms the report's tables use that the Setup section must define (issue 10, item 5).
REQUIRED_TERMS = ["W", "facts", "OP", "DP", "load", "alpha", "p ln p / d^2", "recalled", "kappa",
                  "threshold", "CI", "N", "D", "R", "T", "d", "L", "V"]


def _setup_block(md):
    start = md.index("## Setup\n")
    end = md.index("\n## ", start + 1)
    return md[start:end]


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A copy of the docs in a fake checkout ``tmp_path/repo``; returns its report folder."""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(render._DOCS_DIR, repo / "docs")
    monkeypatch.setattr(render, "_DOCS_DIR", repo / "docs")
    return repo / "report"


def test_setup_section_opens_the_report(checkout, fake_sections):
    calls, mods = fake_sections
    mods.update(fake_a=_fake_section("a", calls), fake_b=_fake_section("b", calls))
    rep.reproduce(checkout, quick=True)
    tmp_path = checkout
    md = (tmp_path / "report.md").read_text()
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings[:4] == ["## Claims ledger", "## Setup", "## Fake a", "## Fake b"]
    # report.md keeps the setup's first paragraph and links the glossary in report_details.md
    assert "(report_details.md#setup)" in _setup_block(md)
    setup = _setup_block((tmp_path / "report_details.md").read_text())
    # every defined term is written as a list item with a link that resolves from the report folder
    from validation.sections.setup_text import TERMS

    items = [line for line in setup.splitlines() if line.startswith("* `")]
    assert len(items) == len(TERMS)
    for (_, term, definition, target), line in zip(TERMS, items):
        assert line.startswith(f"* `{term}`: ") and definition in line
        href = re.search(r"\]\(([^)]+)\)\)\.$", line).group(1)    # "... ([target](href))."
        path, _, anchor = href.partition("#")
        assert anchor == target.partition("#")[2]
        assert path == "../" + target.partition("#")[0]      # report/ -> ../docs/<page>
        assert (tmp_path / path).is_file()


def test_setup_defines_every_table_term():
    from validation.sections.setup_text import TERMS, setup_markdown

    names = set()
    for _, term, _, _ in TERMS:
        names.add(term)
        names.update(t.strip() for t in re.split(r"[,=(]", term))   # "S, R, D" defines S, R and D
        names.update(term.split())
    missing = [t for t in REQUIRED_TERMS if t not in names]
    assert not missing, f"Setup does not define {missing}"
    md = setup_markdown()
    for term in ("OP", "DP", "kappa", "p ln p / d^2"):
        assert term in md
    assert "THEORY" not in md


def test_each_section_links_its_docs_page(checkout, fake_sections):
    tmp_path = checkout
    calls, mods = fake_sections
    mods.update(fake_a=_fake_section("a", calls), fake_b=_fake_section("b", calls))
    mods["fake_a"].DOCS = "docs/linear_memory.md"
    rep.reproduce(tmp_path, quick=True)
    md = (tmp_path / "report.md").read_text()
    block_a = md[md.index("## Fake a"):md.index("## Fake b")]
    line = block_a.splitlines()[2]
    assert line.startswith("Model, definitions and derivations: [docs/linear_memory.md](")
    href = re.search(r"\]\(([^)]+)\)", line).group(1)
    assert (tmp_path / href).resolve() == (render._DOCS_DIR / "linear_memory.md").resolve()
    # a cached section (resume) keeps its link: the link is added at assembly, not cached
    rep.reproduce(tmp_path, quick=True)
    assert line in (tmp_path / "report.md").read_text()
    # fake_b has no DOCS attribute: no link line
    assert "Model, definitions" not in md[md.index("## Fake b"):]


@pytest.mark.parametrize("key,module", rep.SECTIONS)
def test_real_sections_name_an_existing_docs_page(key, module):
    import importlib

    mod = importlib.import_module(module)
    assert mod.DOCS.startswith("docs/") and (render._DOCS_DIR.parent / mod.DOCS).is_file(), key


def test_docs_href_outside_a_checkout(monkeypatch, tmp_path):
    target = "docs/theory_full_rank.md#the-model"
    # report folder outside the repository: the path from the repository root
    assert render.docs_href(target, tmp_path) == target
    # inside the repository: relative
    assert render.docs_href(target, render._DOCS_DIR.parent / "a" / "b") == "../../" + target
    # no docs shipped (non-editable install)
    monkeypatch.setattr(render, "_DOCS_DIR", tmp_path / "no_docs_here")
    assert render.docs_href(target, tmp_path / "report") == target


def test_output_files_follow_the_umask_and_meta_has_the_full_command(tmp_path, fake_sections):
    import os
    import stat

    calls, mods = fake_sections
    mods.update(fake_a=_fake_section("a", calls), fake_b=_fake_section("b", calls))
    old = os.umask(0o027)
    try:
        data = rep.reproduce(tmp_path / "out dir", quick=True, seed=5)
    finally:
        os.umask(old)
    out = tmp_path / "out dir"
    for name in ("report.md", "report.json"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o640   # 0o666 & ~0o027
    # the full command line: output folder (quoted), mode and seed
    assert data["meta"]["command"] == (f"python -m validation reproduce --out '{out}' --quick --seed 5")
    assert data["meta"]["version"] == rep.__version__
