"""The exact-threshold table of docs/linear_memory.md against the committed stores.

The table between the markers ``<!-- exact-thresholds -->`` and ``<!-- /exact-thresholds -->``
is typed in the page; this test replays the studies ``linear_memory.exact_op`` and
``linear_memory.exact_dp`` (nothing computed) and checks every threshold, interval end,
prediction and instance count printed there, so the page cannot drift from the stores.
"""
import math
import re
from pathlib import Path

import pytest

from docs_tables import interval as _interval, plus_minus as _pm, table_rows
from validation.studies import get_study
from validation.linear_memory.finite_size import compare_models, excess_fits, threshold_points

PAGE = Path(__file__).resolve().parents[1] / "docs" / "linear_memory.md"


def _rows():
    return [r for r in table_rows(PAGE, "exact-thresholds") if len(r) >= 6 and r[0].isdigit()]


@pytest.fixture(scope="module")
def outcomes():
    return {m: get_study(f"linear_memory.exact_{m}").run(compute=False, progress=False, missing="skip").outcome
            for m in ("op", "dp")}


def test_table_lists_every_fitted_threshold(outcomes):
    rows = _rows()
    assert rows, "no exact-threshold table between the markers"
    shown = {(int(r[0]), r[1].lower()) for r in rows}
    fitted = {(d, m) for m, out in outcomes.items() for d, e in out.items() if math.isfinite(e.threshold)}
    assert shown == fitted


def test_numbers_are_the_stores(outcomes):
    # columns: d | model | threshold [95% CI] | finite-p RS | instances | seeds per load
    for d, model, thr, theory, inst, *_ in _rows():
        e = outcomes[model.lower()][int(d)]
        t, lo, hi = _interval(thr)
        # printed to 3 decimals: half a unit of the last digit
        assert abs(t - e.threshold) <= 5e-4 and abs(lo - e.ci_low) <= 5e-4 and abs(hi - e.ci_high) <= 5e-4, (d, model)
        assert abs(float(theory) - e.theory) <= 5e-4, (d, model)
        assert int(inst) == e.instances, (d, model)


# ---- the OP-vs-DP and excess-fit tables of "Finite-size law: OP against DP" ----------------

def _rows_of(outcomes, model):
    return [e for _, e in sorted(outcomes[model].items())]


def test_op_vs_dp_table_is_recomputed(outcomes):
    rows = table_rows(PAGE, "op-vs-dp")
    pts = {m: {q.d: q for q in threshold_points(_rows_of(outcomes, m))} for m in ("op", "dp")}
    comp = {c.d: c for c in compare_models(_rows_of(outcomes, "op"), _rows_of(outcomes, "dp"))}
    assert {int(r[0]) for r in rows} == set(pts["op"]) | set(pts["dp"])
    for d, op, dp, diff, verdict in rows:
        d = int(d)
        for cell, m in ((op, "op"), (dp, "dp")):
            if cell == "-":
                assert d not in pts[m]
                continue
            r, s = _pm(cell)
            # printed to 3 decimals: half a unit of the last digit
            assert abs(r - pts[m][d].excess) <= 5e-4 and abs(s - pts[m][d].excess_stderr) <= 5e-4, (d, m)
        if diff == "-":
            assert d not in comp
            continue
        m = re.fullmatch(r"([+-][0-9.]+) \(([0-9.]+)\)", diff)
        assert m, diff
        assert abs(float(m.group(1)) - comp[d].difference) <= 5e-4 and abs(float(m.group(2)) - comp[d].stderr) <= 5e-4
        assert verdict == comp[d].verdict, d        # the verdict is computed, not typed


def test_excess_fit_table_is_recomputed(outcomes):
    rows = table_rows(PAGE, "excess-fits")
    fits = {m: {(f.form, f.offset): f for f in excess_fits(_rows_of(outcomes, m))} for m in ("op", "dp")}
    assert {(r[0].lower(), r[1]) for r in rows} == {(m, form) for m in fits for form, _ in fits[m]}
    for model, form, amp, chi, pv, floor, chi_f, pv_f in rows:
        f0, f1 = fits[model.lower()][(form, False)], fits[model.lower()][(form, True)]
        a, s = _pm(amp)
        b, sb = _pm(floor)
        # amplitudes and floors to 3 decimals, chi2 to 1, p-values to 4: half a unit of the last digit
        assert abs(a - f0.amplitude) <= 5e-4 and abs(s - f0.amplitude_stderr) <= 5e-4, (model, form)
        assert abs(b - f1.constant) <= 5e-4 and abs(sb - f1.constant_stderr) <= 5e-4, (model, form)
        for cell, f in ((chi, f0), (chi_f, f1)):
            c, dof = cell.split(" / ")
            assert abs(float(c) - f.chi2) <= 0.05 and int(dof) == f.dof, (model, form)
        assert abs(float(pv) - f0.p_value) <= 5e-5 and abs(float(pv_f) - f1.p_value) <= 5e-5, (model, form)


def test_prose_claims_of_the_finite_size_law(outcomes):
    # The verdict paragraph says: every OP law rejected (p <= 0.0007); every DP law acceptable
    # (p = 0.35-0.45); no DP excess at all gives sum (r/s)^2 = 7.9 on 6 points (p = 0.25); OP above
    # the prediction at every d, DP inside its CI at every d.
    from scipy.stats import chi2

    text = PAGE.read_text()
    op_p = [f.p_value for f in excess_fits(_rows_of(outcomes, "op"))]
    dp_p = [f.p_value for f in excess_fits(_rows_of(outcomes, "dp"))]
    assert max(op_p) < 0.00075 and "(p <= 0.0007)" in text
    assert (round(min(dp_p), 2), round(max(dp_p), 2)) == (0.35, 0.45) and "(p = 0.35-0.45)" in text
    dp = threshold_points(_rows_of(outcomes, "dp"))
    s = sum((q.excess / q.excess_stderr) ** 2 for q in dp)
    assert len(dp) == 6 and round(s, 1) == 7.9 and round(chi2.sf(s, len(dp)), 2) == 0.25
    assert "$\\sum (r/s)^2 = 7.9$ on 6 points (p = 0.25)" in text
    assert all(e.ci_low > e.theory for e in outcomes["op"].values() if math.isfinite(e.threshold))
    outside = sorted(d for d, e in outcomes["dp"].items()
                     if math.isfinite(e.threshold) and not e.ci_low <= e.theory <= e.ci_high)
    assert outside == []
