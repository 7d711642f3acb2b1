"""Every number quoted in the report's sentences comes from the section's report.json values.

The oracle is the section's own ``report.json`` entry, written by the same build but read back
from disk: a sentence that quotes a number no value of its section rounds to fails
(:func:`validation.sections.prose.unmatched_numbers`).  Its power is shown by corruption: every
prose number with a single source in ``report.json`` is flagged once that source is changed.
The default suite renders the two sections that replay committed results in seconds
(``spectra``, ``token_retrieval``); the slow test renders the whole quick report.
"""
import copy
import json

import pytest

from validation import report as rep
from validation.sections.claims import CLAIM_KEYS
from validation.sections.prose import json_leaves, prose_numbers, sources, unmatched_numbers

FAST_SECTIONS = ["spectra", "token_retrieval"]


def _sections(out):
    res = {}
    for f in sorted((out / ".sections").glob("*.json")):
        c = json.loads(f.read_text())
        res[f.stem] = (c["markdown"], c["data"])
    return res


@pytest.fixture(scope="module")
def fast_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("prose")
    rep.reproduce(out, quick=True, sections=FAST_SECTIONS, executor="inprocess")
    return out


def _set(data, path, value):
    o = data
    for k in path[:-1]:
        o = o[k]
    o[path[-1]] = value


def _check_sections(secs):
    bad = {k: unmatched_numbers(md, data) for k, (md, data) in secs.items()}
    bad = {k: [(n, p[:160]) for n, p in v] for k, v in bad.items() if v}
    assert not bad, f"prose numbers with no source in report.json: {bad}"


def _corruption_is_caught(secs):
    """Corrupt the single source of each uniquely sourced prose number: the number must be flagged."""
    tried = 0
    for key, (md, data) in secs.items():
        leaves = {p for p, v in json_leaves(data) if _numeric_at(data, p)}
        for number, _ in prose_numbers(md, min_digits=3):
            src = sources(number, data)
            if len(src) != 1 or src[0] not in leaves:
                continue
            bad = copy.deepcopy(data)
            old = _get(bad, src[0])
            _set(bad, src[0], old * 1.37 + 0.5)     # far outside the printed rounding
            flagged = [n for n, _ in unmatched_numbers(md, bad, min_digits=3)]
            assert number in flagged, (key, number, src[0])
            tried += 1
    return tried


def _get(data, path):
    o = data
    for k in path:
        o = o[k]
    return o


def _numeric_at(data, path):
    v = _get(data, path)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def test_fast_sections_quote_only_report_values(fast_report):
    secs = _sections(fast_report)
    assert set(secs) == set(FAST_SECTIONS)
    _check_sections(secs)


def test_a_corrupted_value_makes_its_sentence_fail(fast_report):
    tried = _corruption_is_caught(_sections(fast_report))
    assert tried >= 3     # the sections quote at least a few uniquely sourced numbers


def test_ledger_in_report_json(fast_report):
    saved = json.loads((fast_report / "report.json").read_text())
    assert all(tuple(r) == CLAIM_KEYS for r in saved["claims"])
    md = (fast_report / "report.md").read_text()
    assert md.index("## Claims ledger") < md.index("## Setup")
    for r in saved["claims"]:
        assert r["verdict"] in md


@pytest.mark.slow
def test_whole_quick_report(tmp_path):
    """The whole quick report: prose numbers sourced, corruption caught, report.md <= 40 kB."""
    rep.reproduce(tmp_path, quick=True)
    secs = _sections(tmp_path)
    _check_sections(secs)
    assert _corruption_is_caught(secs) >= 10
    assert (tmp_path / "report.md").stat().st_size <= 40_000
    assert (tmp_path / "report_details.md").stat().st_size > (tmp_path / "report.md").stat().st_size


# ----------------------------------------------------------------------------- figures
def _figure_checks(out):
    return json.loads((out / ".figure_checks.json").read_text())


def test_fast_section_figures_have_labels_data_and_a_pdf(fast_report):
    checks = _figure_checks(fast_report)
    assert checks, "no figure was checked"
    bad = {k: v for k, v in checks.items() if v}
    assert not bad, f"figures with empty or unlabelled axes: {bad}"
    for name in checks:
        png, pdf = fast_report / name, (fast_report / name).with_suffix(".pdf")
        assert png.stat().st_size > 0 and pdf.read_bytes()[:5] == b"%PDF-"


def test_figure_check_finds_an_empty_and_an_unlabelled_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from validation.sections.figstyle import figure_problems

    fig, (a, b, c) = plt.subplots(1, 3)
    a.plot([0, 1], [0, 1]); a.set(xlabel="x", ylabel="y")
    b.plot([0, 1], [1, 0]); b.set(xlabel="x")
    assert figure_problems(fig) == ["axes 1: no y label", "axes 2: no data", "axes 2: no x label",
                                    "axes 2: no y label"]
    plt.close(fig)


def test_wilson_interval_against_scipy():
    import numpy as np
    from scipy.stats import binomtest

    from validation.sections.figstyle import wilson_interval

    for k, n in [(0, 2), (1, 2), (2, 2), (3, 10), (99, 100), (0, 1)]:
        ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        lo, hi = wilson_interval(k, n)
        # both are the closed form: equal to rounding (1e-12)
        assert np.isclose(lo, ref.low, atol=1e-12) and np.isclose(hi, ref.high, atol=1e-12)
        assert 0 <= lo <= k / n <= hi <= 1
        assert (lo == 0) == (k == 0) and (hi == 1) == (k == n)    # exact ends, no rounding residue
    with pytest.raises(ValueError, match="k must lie"):
        wilson_interval(3, 2)


@pytest.mark.slow
def test_whole_quick_report_figures(tmp_path):
    rep.reproduce(tmp_path, quick=True)
    checks = _figure_checks(tmp_path)
    assert not {k: v for k, v in checks.items() if v}
    for name in checks:
        assert (tmp_path / name).with_suffix(".pdf").is_file()
