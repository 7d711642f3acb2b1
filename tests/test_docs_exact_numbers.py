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

from validation.studies import get_study

PAGE = Path(__file__).resolve().parents[1] / "docs" / "linear_memory.md"


def _rows():
    text = PAGE.read_text()
    block = text.split("<!-- exact-thresholds -->", 1)[1].split("<!-- /exact-thresholds -->", 1)[0]
    rows = []
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and cells[0].isdigit():
            rows.append(cells)
    return rows


def _interval(cell):
    m = re.fullmatch(r"([0-9.]+) \[([0-9.]+), ([0-9.]+)\]", cell)
    assert m, cell
    return tuple(float(x) for x in m.groups())


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
