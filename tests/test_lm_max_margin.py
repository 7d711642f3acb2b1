"""validation.linear_memory.max_margin: ties, normalised scores and the trial.

Oracles: a naive double loop for the normalised scores; the KKT condition of the
max-margin problem (the optimal W is a non-negative combination of the unit pair
vectors of the tied pairs, checked by scipy's NNLS, an independent solver) for the
tie detection; hand-worked two-fact cases.
"""
import numpy as np
import pytest
from scipy.optimize import nnls

from validation.linear_memory.data import make_facts
from validation.linear_memory.exact import exact_feasibility
from validation.linear_memory.max_margin import (active_counts, max_margin_trial,
                                                 normalised_margins)


def test_two_facts_identity_tie():
    counts, gamma = active_counts(np.eye(2), np.eye(2), np.eye(2))
    # pair (0, 1): (I e0).(u0 - u1) = 1, |e0| = 1, rms |u| = 1, |I|_F = sqrt 2
    assert gamma == pytest.approx(2 ** -0.5, rel=1e-12)
    assert counts.tolist() == [1, 1]


def test_normalised_margins_against_a_loop():
    rng = np.random.default_rng(0)
    E, U, W = rng.standard_normal((7, 4)), rng.standard_normal((7, 4)), rng.standard_normal((4, 4))
    m, c = normalised_margins(E, U, W)
    for mu in range(7):
        z = [E[mu] @ W.T @ U[r] for r in range(7)]
        comp = [z[r] for r in range(7) if r != mu]
        s = np.std(comp)
        assert m[mu] == pytest.approx((z[mu] - max(comp)) / s, rel=1e-10)
        assert c[mu] == pytest.approx((z[mu] - np.mean(comp)) / s, rel=1e-10)


@pytest.mark.parametrize("d,p,seed", [(6, 12, 0), (8, 20, 1)])
def test_ties_satisfy_kkt(d, p, seed):
    facts = make_facts("op", p, d, rng=seed, dtype=np.float64)
    r = exact_feasibility(facts, optimal=True)
    assert r.feasible and r.optimal
    E, U, W = facts.E, facts.U, r.W
    counts, gamma = active_counts(E, U, W, rtol=1e-4)
    assert gamma > 0 and counts.sum() >= 1
    # the solver's own maximal margin, same units (an independent code path: its
    # normalised copy of the facts); it stops at relative accuracy ~1e-6
    assert gamma == pytest.approx(r.gamma, rel=1e-4)
    # pair vectors of the tied pairs, found by a loop: score = (W e).u = sum_ij W_ij u_i e_j,
    # so the pair vector of (m, q) is outer(u_m - u_q, e_m / |e_m|)
    cols = []
    scale = np.sqrt(np.mean((U * U).sum(axis=1))) * np.linalg.norm(W)
    for m in range(p):
        for q in range(p):
            if q != m:
                a = np.outer(U[m] - U[q], E[m] / np.linalg.norm(E[m]))
                if (a * W).sum() / scale <= gamma * (1 + 1e-4):
                    cols.append(a.ravel())
    assert counts.sum() == len(cols)
    # KKT of max_W min_k <a_k, W> / |W|: W is a non-negative combination of the tied pair
    # vectors (NNLS residual relative to |W|; the optimum is accurate to ~1e-6)
    lam, res = nnls(np.array(cols).T, W.ravel())
    assert res / np.linalg.norm(W) < 1e-3


def test_trial_record():
    out = max_margin_trial({"d": 8, "alpha": 0.6, "seed": 0})
    assert out["feasible"] and out["optimal"]
    assert sum(out["active_hist"]) == out["p"]
    sv = np.array(out["sv"])
    assert np.mean(sv ** 2) == pytest.approx(1.0, rel=1e-4)    # 6 significant digits kept
    assert np.all(np.diff(sv) <= 0)
    assert out["margin_q"][0] <= out["margin_q"][1] <= out["margin_q"][2]


@pytest.mark.parametrize("E,U,W,msg", [
    (np.ones(3), np.ones(3), np.eye(3), "E must be a \\(p, d\\) array"),
    (np.ones((3, 2)), np.ones((4, 2)), np.eye(2), "U must have the shape of E"),
    (np.ones((3, 2)), np.ones((3, 2)), np.eye(3), "W must be \\(2, 2\\)"),
])
def test_bad_shapes_name_the_argument(E, U, W, msg):
    for f in (active_counts, normalised_margins):
        with pytest.raises(ValueError, match=msg):
            f(E, U, W)


def test_docs_table_is_the_committed_store():
    # docs/linear_memory.md "The max-margin memory at the threshold": every row's d, p, counts,
    # ties and KS recomputed from the replayed study (printed to 2-4 decimals: half a unit)
    from pathlib import Path

    from validation.studies import get_study

    page = (Path(__file__).resolve().parents[1] / "docs" / "linear_memory.md").read_text()
    sec = page.split("### The max-margin memory at the threshold")[1].split("\n## ")[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in sec.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    out = {(r.d, r.p): r for r in get_study("linear_memory.max_margin").run(compute=False, progress=False).outcome}
    assert {(int(r[0]), int(r[1])) for r in rows} == set(out)
    for row in rows:
        r = out[int(row[0]), int(row[1])]
        assert row[3] == f"{r.feasible}/{r.instances}"
        assert abs(float(row[5].split()[0]) - r.active_per_fact) <= 5e-3
        assert abs(float(row[6]) - r.k_star) <= 5e-3 and abs(float(row[10]) - r.ks) <= 5e-4


def test_docs_relative_thresholds_are_the_exact_table():
    # "the exact OP thresholds are 1.02, ... times it": the OP rows of the exact-thresholds
    # table (itself checked against the stores by test_docs_exact_numbers.py), threshold over
    # the finite-p prediction, printed to 2 decimals (half a unit, plus the table's rounding)
    import re
    from pathlib import Path

    from validation.studies.linear_memory_max_margin import PLAN

    page = (Path(__file__).resolve().parents[1] / "docs" / "linear_memory.md").read_text()
    table = {int(m[1]): float(m[2]) / float(m[3]) for m in
             re.finditer(r"^\| (\d+) \| OP \| ([\d.]+) \[[^]]+\] \| ([\d.]+) \|", page, re.M)}
    sec = page.split("### The max-margin memory at the threshold")[1]
    m = re.search(r"the exact OP thresholds are ([\d., and]+) times it at d = ([\d, ]+)\)", sec)
    ratios = [float(x) for x in re.findall(r"\d\.\d\d", m[1])]
    ds = [int(x) for x in m[2].split(",")]
    assert ds == [d for d in sorted(PLAN) if d in table] == sorted(PLAN)
    for d, r in zip(ds, ratios):
        assert abs(r - table[d]) <= 0.005 + 1e-3, (d, r, table[d])
