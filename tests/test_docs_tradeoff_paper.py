"""The paper-model trade-off map of docs/factual_recall.md and the fits its bullets cite, against
the committed store (replayed: nothing is trained)."""
from pathlib import Path

import pytest

from docs_tables import table_rows
from validation.studies import get_study

PAGE = Path(__file__).resolve().parents[1] / "docs" / "factual_recall.md"


@pytest.fixture(scope="module")
def summary():
    run = get_study("factual_recall.tradeoff").run(compute=False, progress=False, variant="paper")
    assert run.missing == 0 and run.computed == 0
    return run.outcome


def test_map_is_the_store(summary):
    g = summary.grid
    rows = table_rows(PAGE, "tradeoff-paper")
    assert [int(r[0].split()[0]) for r in rows] == list(g.H)
    for i, r in enumerate(rows):
        for j, cell in enumerate(r[1:]):
            acc, frac = cell.split()
            # accuracy to 3 decimals: half a unit of the last digit
            assert abs(float(acc) - g.accuracy[i][j]) <= 5e-4
            assert frac == f"({round(g.success[i][j] * g.trials[i][j])}/{g.trials[i][j]})"


def test_cited_fits(summary):
    text = PAGE.read_text().split("<!-- /tradeoff-paper -->", 1)[1].split("\n## ", 1)[0]
    assert summary.routing_H == 2 and "**Routing row `H = 2`** (512 attention parameters)" in text
    bf, add = summary.boundary_fit, summary.boundary_fit.fits["1"]
    assert bf.n_trials == 147 and bf.p_ci == [1.0] and round(bf.additive_vs_max, 1) == 8.2
    assert (f"`c_a` =\n  {add.c_a:.4f} [{add.c_a_ci_low:.4f}, {add.c_a_ci_high:.4f}] and `c_m` = "
            f"{add.c_m:.4f} [{add.c_m_ci_low:.4f}, {add.c_m_ci_high:.4f}]") in text
    every = summary.boundary_fit_all.fits["1"]
    assert (f"{every.c_a:.4f} [{every.c_a_ci_low:.4f}, {every.c_a_ci_high:.4f}] and "
            f"{every.c_m:.4f} [{every.c_m_ci_low:.4f}, {every.c_m_ci_high:.4f}]") in text
    assert not add.c_m_ci_low <= 0.22 <= add.c_m_ci_high      # the paper's c_m is outside
