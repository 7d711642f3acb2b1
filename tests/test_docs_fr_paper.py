"""The paper-protocol table of docs/factual_recall.md and the ratios its text cites, against the
committed store (replayed for both model variants; nothing is trained)."""
from pathlib import Path

import pytest

from validation.studies import get_study

PAGE = Path(__file__).resolve().parents[1] / "docs" / "factual_recall.md"


@pytest.fixture(scope="module")
def paths():
    out = {}
    for v in ("paper", "ours"):
        run = get_study("factual_recall.paper_protocol").run(compute=False, progress=False, variant=v)
        assert run.missing == 0 and run.outcome.pending == 0
        out[v] = {}
        for q in run.outcome.paths:
            out[v].setdefault(q.d, []).append(q)
    return out


def _section():
    return PAGE.read_text().split("## The paper's protocol against the paper's code", 1)[1].split("\n## ", 1)[0]


def _rows():
    return {int(line.split("|")[1]): [c.strip() for c in line.strip().strip("|").split("|")]
            for line in _section().splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()}


def test_table_is_the_store(paths):
    rows = _rows()
    assert set(rows) == set(paths["paper"]) == {16, 32, 64}
    for d, r in rows.items():
        ours_paper = [q.outcome.S for q in paths["paper"][d]]
        assert r[5].startswith(", ".join(map(str, ours_paper)))
        assert r[6] == ", ".join(f"{q.facts_per_param:.3f}" for q in paths["paper"][d])
        assert r[7] == ", ".join(str(q.outcome.S) for q in paths["ours"][d])
        assert int(r[2]) == paths["paper"][d][0].params


def test_cost_ratios_cited(paths):
    text = " ".join(_section().split())
    for d, cited in ((16, "0.86x"), (32, "0.77x"), (64, "1.05x")):
        mean = lambda qs: sum(q.outcome.S ** 2 for q in qs) / len(qs)
        assert (f"({cited})" in text or f"({cited} in mean facts)" in text) and f"{mean(paths['ours'][d]) / mean(paths['paper'][d]):.2f}x" == cited
    ratios = [sum(q.outcome.S ** 2 for q in paths["ours"][d]) / sum(q.outcome.S ** 2 for q in paths["paper"][d])
              for d in (16, 32, 64)]
    assert (round(min(ratios), 2), round(max(ratios), 2)) == (0.77, 1.05)
    assert "0.77-1.05 times the paper model's facts" in PAGE.read_text()
