"""The Hebbian table of docs/listwise.md and the counts and gaps its bullets cite, against the
committed store (replayed through the study ``linear_memory.listwise_hebbian``; nothing is
computed but the conditional model's thresholds)."""
import re
from pathlib import Path

import pytest

from docs_tables import interval, table_rows
from validation.studies import get_study

PAGE = Path(__file__).resolve().parents[1] / "docs" / "listwise.md"


@pytest.fixture(scope="module")
def outcome():
    return get_study("linear_memory.listwise_hebbian").run(compute=False, progress=False).outcome


def test_table_is_the_store(outcome):
    rows = table_rows(PAGE, "hebbian-listwise")
    assert {(m.lower(), int(d), c) for m, d, c, *_ in rows} == set(outcome)
    for model, d, crit, thr, n_thr, theory, verdict in rows:
        r = outcome[model.lower(), int(d), crit]
        # printed to 4 (threshold, model) and 1 (facts) decimals: half a unit of the last digit
        assert all(abs(a - b) <= 5e-5 for a, b in zip(interval(thr), (r.threshold, r.ci_low, r.ci_high)))
        assert abs(float(n_thr) - r.n_threshold) <= 0.05
        value, _, se = theory.partition(" ± ")
        assert abs(float(value) - r.theory) <= 5e-5
        assert (abs(float(se) - r.theory_stderr) <= 5e-5) if se else r.theory_stderr == 0
        assert verdict == r.verdict                       # computed, not typed


def _section():
    text = PAGE.read_text()
    return text.split("## The Hebbian memory", 1)[1].split("\n## ", 1)[0]


def test_counts_cited_in_the_bullets(outcome):
    rows = [r for r in outcome.values() if r.verdict in ("agrees", "differs")]
    groups = {"Top-1": [r for r in rows if r.criterion == "top1"],
              "TAM, DP": [r for r in rows if r.criterion != "top1" and r.model == "dp"],
              "TAM, OP": [r for r in rows if r.criterion != "top1" and r.model == "op"]}
    text = _section()
    for name, cited in [("Top-1", re.search(r"interval in (\d+) of (\d+)\s+fits", text)),
                        ("TAM, DP", re.search(r"TAM, DP\*\*: the model lies inside the interval in (\d+) of (\d+)", text)),
                        ("TAM, OP", re.search(r"TAM, OP\*\*: (\d+) of (\d+)", text))]:
        sel = groups[name]
        assert cited and (int(cited.group(1)), int(cited.group(2))) == (
            sum(r.verdict == "agrees" for r in sel), len(sel)), name


def test_op_misses_cited(outcome):
    # "The two outside are the cases whose tail is a single competitor (tau = 0.01 at d = 40 and 60)
    # ... at the upper edge of the interval (0.0169 against [0.0149, 0.0169]; 0.0160 against ...)"
    out = sorted((d, c) for (m, d, c), r in outcome.items() if m == "op" and c != "top1" and r.verdict == "differs")
    assert out == [(40, "tam tau=0.01"), (60, "tam tau=0.01")]
    assert all(0.01 * (r.n_threshold - 1) < 1 for (m, d, c), r in outcome.items() if (d, c) in out and m == "op")
    for d in (40, 60):
        r = outcome["op", d, "tam tau=0.01"]
        assert r.theory > r.ci_high and f"{r.theory:.4f} against [{r.ci_low:.4f}, {r.ci_high:.4f}]" in _section()
        assert outcome["op", d, "top1"].verdict == "agrees"
