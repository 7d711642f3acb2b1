"""Every public object of the API is on a reference page (docs/reference_*.rst).

The docs build turns each missing name into a warning (``docs/conf.py``, warnings
are errors in CI); this runs the same check (``docs/_ext/api_coverage.py``) in the
test suite, so a new public name without a reference entry fails here in seconds
rather than at the end of the documentation step.
"""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _load():
    spec = importlib.util.spec_from_file_location("api_coverage",
                                                  DOCS / "_ext" / "api_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


api_coverage = _load()


def test_every_public_object_is_on_a_reference_page():
    assert api_coverage.missing_names(DOCS) == []


def test_a_removed_entry_is_reported(tmp_path):
    # the check can fail: drop one entry from a copy of the pages
    for page in api_coverage.API_PAGES:
        shutil.copy(DOCS / page, tmp_path / page)
    page = tmp_path / "reference_validation.rst"
    entry = "   studies.linear_memory_listwise_max_margin.TAUS_AT\n"
    text = page.read_text()
    assert entry in text
    page.write_text(text.replace(entry, ""))
    assert api_coverage.missing_names(tmp_path) == [
        "validation.studies.linear_memory_listwise_max_margin.TAUS_AT"]
