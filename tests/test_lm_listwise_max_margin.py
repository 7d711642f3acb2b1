"""validation.linear_memory.listwise_max_margin and its study.

Oracles: plain Python loops for the per-row scores, tail means (fractional tail included)
and margins; the KKT condition of the max-margin TAM problem (the optimal W is a
non-negative combination of the tail vertices of the pinned facts, checked by scipy's NNLS,
an independent solver) and the verifier of the exact study at 0.999 gamma*; scipy's
two-sample KS statistic; the committed store replays with nothing computed.
"""
import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import nnls

from validation.linear_memory.data import make_facts
from validation.linear_memory.exact_listwise import (_trial_facts, listwise_feasibility, listwise_margins,
                                                     verify_listwise_feasible)
from validation.linear_memory.listwise_max_margin import (POLISH, listwise_max_margin_trial, pinned_facts,
                                                          tam_row_scores)
from validation.studies import get_study
from validation.studies.linear_memory_listwise_max_margin import ks_distance, summary_table


def _loop_scores(kind, E, U, W, tau):
    """Per row: correct, tail mean, margin over the row's competitor s.d., and the raw margin."""
    p = E.shape[0]
    k = max(tau * (p - 1), 1.0)
    out = []
    for mu in range(p):
        h = [sum(W[i][j] * E[mu][j] for j in range(E.shape[1])) for i in range(E.shape[1])]
        cand = (lambda r: U[r]) if kind == "op" else (lambda r: U[mu][r])
        z = [float(np.dot(cand(r), h)) for r in range(p)]
        comp = sorted((z[r] for r in range(p) if r != mu), reverse=True)
        left, tail = k, 0.0
        for c in comp:                       # the tail mean: weight 1/k each until k is used up
            w = min(1.0, left)
            if w <= 0:
                break
            tail += w * c
            left -= w
        tail /= k
        m = sum(comp) / len(comp)
        s = math.sqrt(sum((c - m) ** 2 for c in comp) / (len(comp) - 1))
        out.append((z[mu] / s, tail / s, (z[mu] - tail) / s, z[mu] - tail))
    return np.array(out)


@pytest.mark.parametrize("kind,tau", [("op", 0.3), ("dp", 0.3), ("dp", 0.05), ("op", 1.0)])
def test_row_scores_and_pins_against_a_loop(kind, tau):
    rng = np.random.default_rng(1)
    p, d = 9, 4                                    # k = 2.4 at tau = 0.3 (a fractional tail)
    facts = make_facts(kind, p, d, rng=rng, dtype=np.float64)
    E, U = np.asarray(facts.E), np.asarray(facts.U)
    W = rng.standard_normal((d, d))
    ref = _loop_scores(kind, E, U, W, tau)
    s = tam_row_scores(facts, W, tau=tau)
    for j, key in enumerate(("correct", "tail_mean", "tam_margin")):
        np.testing.assert_allclose(s[key], ref[:, j], rtol=1e-10, atol=1e-12)
    unit = math.sqrt(np.mean(E * E)) * math.sqrt(np.mean(U * U)) * np.linalg.norm(W)
    raw = ref[:, 3] / unit
    pinned, gamma = pinned_facts(facts, W, tau=tau, rtol=1e-3)
    assert gamma == pytest.approx(raw.min(), rel=1e-10)
    assert pinned.tolist() == (raw <= raw.min() + 1e-3 * abs(raw.min())).tolist()
    # the solver's own margins, a separate code path
    np.testing.assert_allclose(raw, listwise_margins(facts, W, tau=tau), rtol=1e-9)


def _optimum(params):
    """The trial's two solves, done here: gamma*, the optimal memory and the facts."""
    _, _, facts = _trial_facts(params)
    r = listwise_feasibility(facts, tau=params["tau"], optimal=True)
    assert r.feasible and r.optimal and r.verified
    r2 = listwise_feasibility(facts, tau=params["tau"], margin=r.gamma_low * (1 - POLISH))
    assert r2.feasible and r2.verified
    return facts, r.gamma_low, r.gamma_high, np.asarray(r2.W, float)


@pytest.mark.parametrize("params", [{"model": "dp", "d": 6, "n": 14, "tau": 0.2, "seed": 0},
                                    {"model": "op", "d": 6, "n": 12, "tau": 0.3, "seed": 1}])
def test_optimum_satisfies_kkt(params):
    facts, lo, hi, W = _optimum(params)
    assert 0 < lo and (hi - lo) <= 1e-9 * hi                          # certified bracket closed
    g = listwise_margins(facts, W, tau=params["tau"])
    assert g.min() >= lo * (1 - 1e-9)                                 # every fact at least gamma*
    pinned, gamma = pinned_facts(facts, W, tau=params["tau"])
    assert gamma == pytest.approx(lo, rel=1e-9)
    assert pinned.any() and np.all(np.abs(g[pinned] - lo) <= 1e-6 * lo)
    assert verify_listwise_feasible(facts, W, tau=params["tau"], margin=0.999 * lo)["ok"]
    assert not verify_listwise_feasible(facts, W, tau=params["tau"], margin=1.001 * lo)["ok"]
    # KKT of max_W min_mu g_mu(W) / |W|: W is a non-negative combination of the vertex matrices
    # (c_mu - sum_r w_r v_{mu r}) e_mu^T of the pinned facts, w a vertex of the subdifferential of
    # the tail mean at the optimum (competitors tied at the tail boundary, as the projection
    # makes them, may share the remaining weight in any way), enumerated by a loop
    E, U = np.asarray(facts.E, float), np.asarray(facts.U, float)
    p = E.shape[0]
    k = max(params["tau"] * (p - 1), 1.0)
    cols = []
    for mu in np.nonzero(pinned)[0]:
        cand = (lambda r: U[r]) if facts.kind == "op" else (lambda r: U[mu, r])
        h = W @ E[mu]
        z = {r: float(cand(r) @ h) for r in range(p) if r != mu}
        t = sorted(z.values(), reverse=True)[math.ceil(k) - 1]        # the boundary score
        tol = 1e-7 * max(abs(v) for v in z.values())
        above = [r for r in z if z[r] > t + tol]
        tied = [r for r in z if abs(z[r] - t) <= tol]
        mass = k - len(above)                                         # in units of 1/k
        full = int(math.floor(mass + 1e-12))
        for top in itertools.combinations(tied, full):
            rest = [r for r in tied if r not in top]
            for frac in (rest if mass - full > 1e-12 else [None]):
                v = sum(cand(r) for r in above + list(top)) + (0 if frac is None else (mass - full) * cand(frac))
                cols.append(np.outer(cand(mu) - v / k, E[mu]).ravel())
    lam, res = nnls(np.array(cols).T, W.ravel())
    assert res / np.linalg.norm(W) < 1e-4


def test_trial_record_is_deterministic_and_consistent():
    params = {"model": "dp", "d": 6, "n": 14, "tau": 0.2, "seed": 0}
    a, b = listwise_max_margin_trial(params), listwise_max_margin_trial(dict(params))
    a.pop("cpu_seconds"), b.pop("cpu_seconds")
    assert a == b
    assert a["feasible"] and a["optimal"] and a["verified"] and a["polished"]
    assert a["gamma"] == pytest.approx(a["gamma_low"], rel=1e-6)
    assert a["pinned"] == sum(a["is_pinned"]) >= 1 and len(a["correct"]) == a["p"] == 14
    assert a["correct"] == sorted(a["correct"]) and a["k"] == pytest.approx(0.2 * 13)
    facts, _, _, W = _optimum(params)
    s = tam_row_scores(facts, W, tau=0.2)
    np.testing.assert_allclose(a["correct"], np.sort(s["correct"]), rtol=1e-6)
    np.testing.assert_allclose(np.sort(a["tam_margin"]), np.sort(s["tam_margin"]), rtol=1e-6)


def test_infeasible_instance_records_no_scores():
    out = listwise_max_margin_trial({"model": "dp", "d": 3, "n": 30, "tau": 0.05, "seed": 0})
    assert out["feasible"] is False and "correct" not in out and "polished" not in out


def test_ks_distance_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(57), rng.standard_normal(301) + 0.2
    assert ks_distance(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)


@pytest.mark.parametrize("call,msg", [
    (lambda f, W: tam_row_scores(f, W, tau=0.0), "tau"),
    (lambda f, W: tam_row_scores(f, W, tau=1.5), "tau"),
    (lambda f, W: tam_row_scores(f, np.eye(3), tau=0.2), "W must have shape"),
    (lambda f, W: tam_row_scores(f, np.zeros_like(W), tau=0.2), "W must be finite and not zero"),
    (lambda f, W: tam_row_scores(f, W * np.nan, tau=0.2), "W must be finite"),
    (lambda f, W: tam_row_scores(SimpleNamespace(kind="xp", E=f.E, U=f.U), W, tau=0.2), "facts.kind"),
    (lambda f, W: pinned_facts(f, W, tau=0.2, rtol=-1.0), "rtol"),
    (lambda f, W: pinned_facts(f, W, tau=0.2, rtol=1.0), "rtol"),
    (lambda f, W: listwise_max_margin_trial({"model": "xp", "d": 4, "n": 5, "tau": 0.2, "seed": 0}), "model"),
    (lambda f, W: listwise_max_margin_trial({"model": "dp", "d": 4, "n": 5, "tau": 0.0, "seed": 0}), "tau"),
    (lambda f, W: listwise_max_margin_trial({"model": "dp", "d": 4, "n": 1, "tau": 0.2, "seed": 0}), "n"),
    (lambda f, W: ks_distance([], [1.0]), "a must be"),
    (lambda f, W: ks_distance([1.0], [np.inf]), "b must be"),
])
def test_bad_input_names_the_argument(call, msg):
    facts = make_facts("dp", 5, 4, rng=0, dtype=np.float64)
    with pytest.raises(ValueError, match=msg):
        call(facts, np.eye(4))


def test_committed_store_replays_with_nothing_computed():
    s = get_study("linear_memory.listwise_max_margin")
    run = s.run(compute=False, progress=False)
    planned = len(s.plan(**s.check_options()))
    assert run.missing == 0 and run.computed == 0 and run.reused == run.trials == planned
    rows = run.outcome
    assert len(rows) == len({(q["model"], q["d"], q["tau"], q["n"]) for q in s.plan(**s.check_options())})
    for r in rows:
        assert r.feasible >= 2 and set(r.verdicts.values()) <= {"agrees", "differs"}
        assert 0 <= r.pinned <= 1 and r.gamma > 0
        assert r.verdicts["ks"] == ("agrees" if r.ks <= r.ks_calibration + 2 * r.ks_calibration_sd else "differs")
    assert len(summary_table(rows)) == len(rows) + 2


def test_docs_table_and_counts_are_the_committed_store():
    # docs/listwise.md "Score laws at the certified optimum": the table is summary_table of the
    # replayed store, line for line; the trial counts and the "agrees in N of M rows" counts
    # and z ranges of the reading are recomputed (z printed to 2 decimals: half a unit)
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "listwise.md").read_text()
    sec = page.split("### Score laws at the certified optimum")[1].split("\n## ")[0]
    run = get_study("linear_memory.listwise_max_margin").run(compute=False, progress=False)
    rows = run.outcome
    assert [ln for ln in sec.splitlines() if ln.startswith("|")] == summary_table(rows)
    res = [rec["result"] for _, rec in run.results if rec.get("status") == "ok"]
    feas = sum(bool(r["feasible"]) for r in res)
    assert f"It holds {len(res)}\ntrials: {feas} feasible" in sec
    assert f"{round(sum(r['cpu_seconds'] for r in res))} CPU s" in sec
    n = len(rows)

    def agree(q):
        return sum(r.verdicts[q] == "agrees" for r in rows)

    def zr(q):
        z = [r.z[q] for r in rows]
        return min(z), max(z)

    m = re.search(r'"agrees" in (\d+) of (\d+) rows \(\$z\$ from \$(-?[\d.]+)\$ to \$\+?([\d.]+)\$\)', sec)
    assert (int(m[1]), int(m[2])) == (agree("pinned"), n)
    assert abs(float(m[3]) - zr("pinned")[0]) <= 5e-3 and abs(float(m[4]) - zr("pinned")[1]) <= 5e-3
    assert f"agrees with `tam_scores` in {agree('tail_mean')} of\n  {n} rows" in sec
    assert f'"agrees" in {agree("correct")} rows' in sec and f'("agrees" in {agree("margin")} rows' in sec
    assert f"above the prediction in {sum(r.z['correct'] > 0 for r in rows)}\n  of {n} rows" in sec
    assert all(r.z["margin"] > 0 for r in rows) and f"in all {n} for the margin" in sec
    lo, hi = zr("correct")
    assert f"$z = {lo:.2f}$ to\n  ${hi:.2f}$" in sec
    lo, hi = zr("margin")
    assert f"$z = {lo:.2f}$ to $" in sec and f"{hi:.2f}$ (\"agrees\" in {agree('margin')}" in sec
    assert f"differs in {n - agree('ks')} of {n} rows" in sec
    ks = [r.ks for r in rows]
    assert f"is {min(ks):.3f} to {max(ks):.3f}" in sec
