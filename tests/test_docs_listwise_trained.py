"""The trained-TAM table of docs/listwise.md against the committed store.

The table between ``<!-- trained-tam -->`` and ``<!-- /trained-tam -->`` is typed in the page;
this test replays the study ``linear_memory.listwise_trained`` (and, through it, the exact
study's committed decisions; nothing is computed) and checks every number, count and verdict
printed there, and the totals the bullets under the table cite.
"""
import math
from pathlib import Path

import pytest

from docs_tables import interval as _interval, table_rows
from validation.studies import get_study

PAGE = Path(__file__).resolve().parents[1] / "docs" / "listwise.md"


def _rows():
    return table_rows(PAGE, "trained-tam")


@pytest.fixture(scope="module")
def outcome():
    return get_study("linear_memory.listwise_trained").run(compute=False, progress=False, missing="skip").outcome


def _find(outcome, model, d, tau, margin):
    hits = [r for (m, _, dd), r in outcome.items() if m == model and dd == d and r.tau == tau and r.margin == margin]
    assert len(hits) == 1, (model, d, tau, margin)
    return hits[0]


def test_table_lists_every_row(outcome):
    shown = {(r[1].lower(), int(r[0]), float(r[2]), float(r[3])) for r in _rows()}
    assert shown == {(m, d, r.tau, r.margin) for (m, _, d), r in outcome.items()}


def test_numbers_and_verdicts_are_the_store(outcome):
    for d, model, tau, margin, trained, exact, theory, v_th, v_ex, paired, runs, steps, cpu in _rows():
        r = _find(outcome, model.lower(), int(d), float(tau), float(margin))
        # printed to 4 decimals: half a unit of the last digit
        for cell, vals in ((trained, (r.threshold, r.ci_low, r.ci_high)),
                           (exact, (r.exact_threshold, r.exact_ci_low, r.exact_ci_high))):
            assert all(abs(a - b) <= 5e-5 for a, b in zip(_interval(cell), vals)), (d, model, tau, margin)
        assert abs(float(theory) - r.theory) <= 5e-5
        assert (v_th, v_ex) == (r.verdict_theory, r.verdict_exact)     # computed, not typed
        (both, t_only), (e_only, neither) = r.paired
        assert [int(x) for x in paired.split(" / ")] == [both, neither, e_only, t_only]
        assert int(runs) == r.instances
        assert int(steps) == round(r.steps_median_success)
        assert abs(float(cpu) - r.cpu_seconds_per_instance) <= 0.05


def test_totals_cited_under_the_table(outcome):
    rows = list(outcome.values())
    text = PAGE.read_text()
    paired = sum(sum(r.paired[0]) + sum(r.paired[1]) for r in rows)
    same = sum(r.paired[0][0] + r.paired[1][1] for r in rows)
    e_only = sum(r.paired[1][0] for r in rows)
    assert sum(r.paired[0][1] for r in rows) == 0          # no trained success without a memory
    assert f"on the {paired} instances decided both ways it gives\n  the exact outcome on {same}" in text
    assert f"the {e_only} misses are instances that admit a memory" in text
    n_ex = sum(r.verdict_exact == "agrees" for r in rows)
    n_th = sum(r.verdict_theory == "agrees" for r in rows)
    assert f"overlap in\n  all {len(rows)} cases" in text and n_ex == len(rows)
    assert f"in {n_th} of {len(rows)}" in text
    med = [r.steps_median_success for r in rows if math.isfinite(r.steps_median_success)]
    assert f"takes {min(med):.0f}-{max(med):.0f} steps" in text
