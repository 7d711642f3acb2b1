"""Exact existence of a full-rank memory (validation.linear_memory.exact).

Oracles: facts whose feasibility is known by construction (p <= d; planted
contradictions), an independent dense LP (scipy HiGHS) on tiny instances,
Adam training on the same instances, and certificates re-checked here with
plain Python loops.
"""
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from validation.linear_memory.capacity import capacity_trial
from validation.linear_memory.data import Facts, make_op, make_dp
from validation.studies.base import STORED_DIR
from validation.linear_memory.exact import (LazyDPFacts, exact_feasibility, exact_trial, verify_feasible,
                                            verify_infeasible)


def _loop_recalls_all(W, f):
    # independent check of a feasibility certificate: python loop, strict inequality
    for mu in range(f.p):
        cand = f.U if f.kind == "op" else f.U[mu]
        h = W @ f.E[mu].astype(np.float64)
        s = [float(np.asarray(cand[r], np.float64) @ h) for r in range(f.p)]
        if any(s[r] >= s[mu] for r in range(f.p) if r != mu):
            return False
    return True


def _loop_cert_eps(f, pairs, lam):
    # independent check of an infeasibility certificate: sum of outer products by a loop
    S = np.zeros((f.d, f.d))
    den = 0.0
    for (mu, rho), l in zip(pairs, lam):
        assert l >= 0 and mu != rho
        c = f.U[mu] if f.kind == "op" else f.U[mu, mu]
        v = f.U[rho] if f.kind == "op" else f.U[mu, rho]
        delta = np.asarray(c, np.float64) - np.asarray(v, np.float64)
        e = np.asarray(f.E[mu], np.float64)
        S += l * np.outer(delta, e)
        den += l * np.linalg.norm(delta) * np.linalg.norm(e)
    big = np.abs(S).max()                                # |S| without squaring entries near 1e200
    return (np.linalg.norm(S / big) * big if big > 0 else 0.0) / den


def _lp_feasible(f):
    # independent oracle: max t s.t. <a_k, W> >= t for all pairs, |W_ij| <= 1 (HiGHS)
    p, d = f.p, f.d
    rows = []
    for mu in range(p):
        for rho in range(p):
            if rho != mu:
                c = f.U[mu] if f.kind == "op" else f.U[mu, mu]
                v = f.U[rho] if f.kind == "op" else f.U[mu, rho]
                rows.append(np.outer(np.asarray(c, float) - v, f.E[mu]).ravel())
    A = np.array(rows)
    A_ub = np.hstack([-A, np.ones((len(rows), 1))])
    c = np.zeros(d * d + 1)
    c[-1] = -1
    r = linprog(c, A_ub=A_ub, b_ub=np.zeros(len(rows)), bounds=[(-1, 1)] * (d * d) + [(None, None)],
                method="highs")
    assert r.status == 0
    return -r.fun


@pytest.mark.parametrize("kind, p, d", [("op", 8, 8), ("op", 5, 12), ("dp", 8, 8), ("dp", 3, 6)])
def test_p_le_d_always_feasible(kind, p, d):
    # p <= d: the inputs are independent, so W e_mu can be chosen freely per fact; every
    # correct candidate is a vertex of its candidate set (general position) -> feasible
    f = (make_op if kind == "op" else make_dp)(p, d, rng=3)
    r = exact_feasibility(f)
    assert r.feasible is True
    assert _loop_recalls_all(r.W, f)
    assert r.margin > 0


def test_planted_contradiction_same_input_two_answers():
    # facts 0 and 1 share their input but want different outputs: u0.h > u1.h and u1.h > u0.h
    f = make_op(6, 10, rng=1)
    E = f.E.copy()
    E[1] = E[0]
    f = Facts("op", E, f.U)
    r = exact_feasibility(f)
    assert r.feasible is False
    # the certificate is checked by a loop here; 1e-9 = the documented cosine tolerance
    assert _loop_cert_eps(f, r.pairs, r.lam) <= 1e-9
    assert verify_infeasible(f, r.pairs, r.lam)["ok"]


@pytest.mark.parametrize("kind", ["op", "dp"])
def test_planted_contradiction_correct_inside_hull(kind):
    # the correct candidate of fact 2 is the midpoint of two competitors: never a strict argmax
    f = (make_op if kind == "op" else make_dp)(7, 10, rng=2, dtype=np.float64)
    U = f.U.copy()
    if kind == "op":
        U[2] = 0.5 * (U[0] + U[1])
    else:
        U[2, 2] = 0.5 * (U[2, 0] + U[2, 1])
    f = Facts(kind, f.E, U)
    r = exact_feasibility(f)
    assert r.feasible is False
    assert _loop_cert_eps(f, r.pairs, r.lam) <= 1e-9      # documented cosine tolerance
    assert set(map(int, r.pairs[:, 0])) >= {2}


@pytest.mark.parametrize("kind, d, ps", [("op", 4, [6, 9, 12, 16, 24]), ("op", 5, [10, 14, 18, 26]),
                                         ("dp", 4, [6, 9, 12, 16])])
def test_agrees_with_independent_lp(kind, d, ps):
    # decisions match a dense LP over all p(p-1) pairs; the LP optimum t* is either clearly
    # positive or 0 up to HiGHS's 1e-7 feasibility tolerance
    seen = set()
    for i, p in enumerate(ps):
        f = (make_op if kind == "op" else make_dp)(p, d, rng=100 + i)
        t = _lp_feasible(f)
        r = exact_feasibility(f)
        assert r.feasible is (t > 1e-7), (p, t, r.feasible)
        seen.add(r.feasible)
    assert seen == {True, False}                         # both outcomes exercised


@pytest.mark.parametrize("model", ["op", "dp"])
def test_agrees_with_training_where_training_succeeds(model):
    # the same (model, d, alpha, seed) gives the same facts in both trial functions;
    # a trained success is a feasibility certificate, so exact must say feasible there
    n_succ = 0
    for alpha in (0.6, 0.9, 1.2):
        for seed in range(3):
            prm = {"model": model, "d": 10, "alpha": alpha, "seed": seed}
            tr = capacity_trial({**prm, "preset": "default", "steps": 1500})
            ex = exact_trial(prm)
            assert ex["p"] == tr["p"]
            if tr["success"]:
                n_succ += 1
                assert ex["success"] is True
            assert ex["success"] is not None
    assert n_succ >= 3                                   # the check was exercised


def _pair_norms(f, pairs):
    # |a_k|_F = |delta_k| |e_mu|, by a loop
    out = []
    for mu, rho in pairs:
        c = f.U[mu] if f.kind == "op" else f.U[mu, mu]
        v = f.U[rho] if f.kind == "op" else f.U[mu, rho]
        out.append(np.linalg.norm(np.asarray(c, float) - v) * np.linalg.norm(np.asarray(f.E[mu], float)))
    return np.array(out)


def test_certificates_verified_and_fakes_rejected():
    f = make_op(30, 8, rng=5)                            # load 30 ln 30 / 64 = 1.6: infeasible
    r = exact_feasibility(f)
    assert r.feasible is False and r.verified is True
    v = verify_infeasible(f, r.pairs, r.lam)
    eps = _loop_cert_eps(f, r.pairs, r.lam)
    assert v["ok"] and math.isclose(v["eps"], eps, rel_tol=1e-6, abs_tol=1e-15)
    # fakes that provably break sum_k lambda_k a_k = 0, whatever the weights' rounding:
    # (1) double the largest weighted term t_j = lambda_j |a_j| >= T / m (T = sum of all terms, m of them):
    #     |S'| >= t_j - eps T, so eps' >= (1/m - eps) / 2
    t = r.lam * _pair_norms(f, r.pairs)
    j = int(np.argmax(t))
    m = len(t)
    bad = r.lam.copy()
    bad[j] *= 2.0
    bound = (1.0 / m - eps) / 2
    assert bound > 1e-9 and _loop_cert_eps(f, r.pairs, bad) >= bound
    assert not verify_infeasible(f, r.pairs, bad)["ok"]
    # (2) add a pair outside the support with a term equal to T: eps' >= (1 - eps) / 2
    inside = {tuple(q) for q in r.pairs.tolist()}
    extra = next((mu, rho) for mu in range(f.p) for rho in range(f.p) if mu != rho and (mu, rho) not in inside)
    pairs2 = np.vstack([r.pairs, [extra]])
    lam2 = np.append(r.lam, t.sum() / _pair_norms(f, [extra])[0])
    assert _loop_cert_eps(f, pairs2, lam2) >= (1 - eps) / 2
    assert not verify_infeasible(f, pairs2, lam2)["ok"]
    neg = r.lam.copy()
    neg[j] = -neg[j]
    assert not verify_infeasible(f, r.pairs, neg)["ok"]
    assert not verify_infeasible(f, [[0, 0]], [1.0])["ok"]                  # mu == rho
    assert not verify_infeasible(f, [[0, f.p]], [1.0])["ok"]                # out of range
    g = make_op(12, 8, rng=6)                            # load 0.47: feasible
    r2 = exact_feasibility(g)
    assert r2.feasible is True and r2.verified is True
    assert verify_feasible(g, r2.W)["ok"] and _loop_recalls_all(r2.W, g)
    assert not verify_feasible(g, np.zeros((8, 8)))["ok"]   # ties are not recall
    assert not verify_feasible(g, -r2.W)["ok"] and not _loop_recalls_all(-r2.W, g)   # every margin negated


def test_bad_input():
    with pytest.raises(ValueError, match="tol"):
        exact_feasibility(make_op(3, 3, rng=0), tol=0)
    with pytest.raises(ValueError, match="model"):
        exact_trial({"model": "lowrank", "d": 4, "alpha": 0.5, "seed": 0})


def test_cli_exact_json_and_store(capsys, tmp_path):
    import json

    from hcizz.cli import run_cli
    from validation.__main__ import main

    store = tmp_path / "x.jsonl"
    argv = ["capacity", "--model", "op", "--method", "exact", "--d", "6", "--seeds", "3",
            "--alphas", "0.5,1.0,2.5", "--executor", "inprocess", "--store", str(store), "--json"]
    rc = run_cli(main, argv, prog="python -m validation")
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["method"] == "exact"
    for k in ("threshold", "ci_low", "ci_high", "theory", "counts", "certificates"):
        assert k in res
    c = res["certificates"]
    assert c["feasible"] + c["infeasible"] + c["undecided"] == 9 and c["undecided"] == 0
    # load 0.5 (p = 8 facts, 36 unknowns) is half the finite-size capacity (about 1 at small d);
    # load 2.5 (p = 27) is 2.5x above it
    assert res["counts"][0][1] == 3 and res["counts"][-1][1] == 0
    n = len(store.read_text().splitlines())
    assert run_cli(main, argv, prog="python -m validation") == 0      # rerun reuses the store
    assert len(store.read_text().splitlines()) == n
    assert json.loads(capsys.readouterr().out)["counts"] == res["counts"]
    rc = run_cli(main, ["capacity", "--model", "lowrank", "--kappa", "0.5", "--method", "exact",
                        "--d", "6"], prog="python -m validation")
    err = capsys.readouterr().err
    assert rc == 2 and "op or dp" in err


def test_committed_store_covers_plan_and_reproduces():
    # the report's quick mode reads the committed store: every planned d = 20 instance must be
    # there, and re-deciding one of each outcome must reproduce the stored decision
    from validation.engine import read_store, trial_key
    from validation.studies import get_study

    study = get_study("linear_memory.exact_op")
    scan = read_store(study.committed_store(), warn=False)
    assert not scan.damaged
    prm = study.plan_d(20)
    got = [scan.ok.get(trial_key(q, exact_trial)) for q in prm]
    assert all(g is not None for g in got)
    for outcome in (True, False):
        q, g = next((q, g) for q, g in zip(prm, got) if g["result"]["success"] is outcome)
        r = exact_trial(q)
        assert r["success"] is outcome and r["p"] == g["result"]["p"]


@pytest.mark.parametrize("kind, d, loads", [("op", 8, [0.8, 1.0, 1.2, 1.4]), ("dp", 8, [0.8, 1.0, 1.2, 1.4]),
                                            ("op", 12, [0.9, 1.0, 1.1])])
def test_alm_and_lawson_hanson_agree(kind, d, loads):
    # the two solvers share no code path (primal augmented Lagrangian with CG vs dual NNLS
    # with Cholesky updates); each certificate is re-checked by the python loops above
    from replica.load import p_from_load

    seen = set()
    for i, a in enumerate(loads):
        f = (make_op if kind == "op" else make_dp)(p_from_load(a, d), d, rng=200 + i)
        ra = exact_feasibility(f, method="alm")
        rl = exact_feasibility(f, method="lh")
        assert ra.feasible is rl.feasible and ra.feasible is not None, (a, ra.feasible, rl.feasible)
        assert ra.info["method"] == "alm" and rl.info["method"] == "lh"
        if ra.feasible:
            assert _loop_recalls_all(ra.W, f) and _loop_recalls_all(rl.W, f)
        else:
            assert _loop_cert_eps(f, ra.pairs, ra.lam) <= 1e-9     # documented cosine tolerance
        seen.add(ra.feasible)
    assert seen == {True, False}                                   # both outcomes exercised


def test_warm_started_lawson_hanson_from_alm_support():
    # the fallback path: an augmented-Lagrangian phase stopped early (rho <= 10) hands its
    # support to Lawson-Hanson, whose first active set (> 256 pairs) is factored by the
    # blocked pivoted Cholesky; the decision must equal the cold start's, with a valid certificate
    from validation.linear_memory.exact import _alm, _lawson_hanson

    for seed, expect in ((0, False), (2, True)):       # d = 20, load 0.97: one of each outcome
        prm = {"model": "op", "d": 20, "alpha": 0.9713, "seed": seed}
        from validation.linear_memory.data import trial_rngs
        from replica.load import p_from_load
        from validation.linear_memory.data import make_facts
        p = p_from_load(prm["alpha"], 20)
        f = make_facts("op", p, 20, rng=trial_rngs(seed, 20, p)[0])
        r0 = _alm(f, tol=1e-9, verify=True, rho_max=10.0)
        assert r0.feasible is None and r0.info["support"].shape[0] > 256
        rw = _lawson_hanson(f, tol=1e-9, batch=None, max_iter=None, optimal=False, verify=True,
                            start=r0.info["support"])
        rc = exact_feasibility(f, method="lh")
        assert rw.feasible is rc.feasible is expect
        if expect:
            assert _loop_recalls_all(rw.W, f)
        else:
            assert _loop_cert_eps(f, rw.pairs, rw.lam) <= 1e-9    # documented cosine tolerance


def test_bad_method():
    with pytest.raises(ValueError, match="method"):
        exact_feasibility(make_op(3, 3, rng=0), method="simplex")


def test_committed_store_covers_every_planned_instance():
    # the report's table and cost panel are read from the store: every instance of PLAN and
    # TIMING must be there, decided (no None), with a solver recorded and a CPU time
    from validation.engine import read_store, trial_key
    from validation.studies import get_study
    from validation.studies.linear_memory_exact import PLAN, TIMING

    study = get_study("linear_memory.exact_op")
    scan = read_store(study.committed_store(), warn=False)
    for d in sorted(PLAN) + sorted(TIMING):
        for q in study.plan_d(d):
            g = scan.ok.get(trial_key(q, exact_trial))
            assert g is not None, q
            r = g["result"]
            assert r["success"] in (True, False) and r["method"] in ("alm", "alm+lh", "lh")
            assert r["cpu_seconds"] > 0 and r["p"] >= d


# --- input handling: scale invariance, zero pairs, bad input ---------------------------------------

def _scaled(f, cE, cU, rows=None):
    E = np.asarray(f.E, np.float64) * cE
    if rows is not None:
        E = E * rows[:, None]
    return Facts(f.kind, E, np.asarray(f.U, np.float64) * cU)


def _loop_decision_ok(f, r):
    # the certificate, re-checked from the given (scaled) facts by the loops above
    if r.feasible:
        return _loop_recalls_all(r.W, f)
    return _loop_cert_eps(f, r.pairs, r.lam) <= 1e-9     # documented cosine tolerance


@pytest.mark.parametrize("kind, p, d, expect", [("op", 14, 8, True), ("op", 30, 8, False),
                                                ("dp", 14, 8, True), ("dp", 34, 8, False)])
def test_decision_scale_invariant(kind, p, d, expect):
    # recall is invariant under E -> a E (each row by its own a > 0) and U -> b U, so is the decision.
    # Loads 0.6 and 1.6-1.9 (clear cases; the finite-size threshold at d = 8 is about 1.0).
    f = (make_op if kind == "op" else make_dp)(p, d, rng=40 + p, dtype=np.float64)
    r0 = exact_feasibility(f)
    assert r0.feasible is expect and _loop_decision_ok(f, r0)
    # powers of two scale exactly, so the normalised data and hence the whole solve are identical
    for k in (-330, -7, 7, 330):
        rk = exact_feasibility(_scaled(f, 2.0**k, 2.0**-k))
        assert rk.feasible is expect and rk.info["method"] == r0.info["method"]
        if expect:
            assert np.array_equal(rk.W, r0.W)
        else:
            assert np.array_equal(rk.pairs, r0.pairs) and np.allclose(rk.lam, r0.lam, rtol=1e-12, atol=0)
    # decimal scales from 1e-100 to 1e100 (the data round): same decision, certificates re-checked
    # from the scaled facts (products stay within 1e-200 .. 1e200, far from under- and overflow)
    rng = np.random.default_rng(7)
    cases = [(1e-100, 1e-100), (1e100, 1e100), (1e-100, 1e100), (1e100, 1e-100), (1e-2, 1e-2), (1e6, 1e6)]
    for cE, cU in cases:
        g = _scaled(f, cE, cU)
        r = exact_feasibility(g)
        assert r.feasible is expect and r.verified is True and _loop_decision_ok(g, r), (cE, cU)
    rows = 10.0 ** rng.uniform(-100, 100, p)                # every input on its own scale
    g = _scaled(f, 1.0, 1.0, rows)
    r = exact_feasibility(g)
    assert r.feasible is expect and _loop_decision_ok(g, r)


@pytest.mark.parametrize("case", ["op_same_output", "dp_competitor_is_correct", "zero_input"])
def test_zero_pair_is_an_immediate_certificate(case):
    # a_k = delta_k e_mu^T = 0 gives margin 0 under every W: recall is impossible, whatever the load.
    # p <= d instances are feasible without the planted pair (test above), so the pair decides.
    kind = "dp" if case.startswith("dp") else "op"
    f = (make_op if kind == "op" else make_dp)(6, 8, rng=11, dtype=np.float64)
    E, U = f.E.copy(), f.U.copy()
    if case == "op_same_output":
        U[4] = U[1]
        want = {(1, 4), (4, 1)}
    elif case == "dp_competitor_is_correct":
        U[2, 5] = U[2, 2]
        want = {(2, 5)}
    else:
        E[3] = 0.0
        want = {(3, rho) for rho in range(6) if rho != 3}
    assert exact_feasibility(f).feasible is True
    g = Facts(kind, E, U)
    r = exact_feasibility(g)
    assert r.feasible is False and r.info["method"] == "zero_pair" and r.verified is True
    assert tuple(r.pairs[0]) in want and r.margin == 0.0
    v = verify_infeasible(g, r.pairs, r.lam)
    assert v["ok"] and v["eps"] == 0.0 and v["zero_pairs"] == 1
    # by construction: the pair's margin (c_mu - v_{mu rho})^T W e_mu is exactly 0 for any W
    mu, rho = r.pairs[0]
    c = U[mu] if kind == "op" else U[mu, mu]
    v_ = U[rho] if kind == "op" else U[mu, rho]
    for W in np.random.default_rng(0).standard_normal((5, 8, 8)):
        assert (c - v_) @ (W @ E[mu]) == 0.0
        assert not verify_feasible(g, W)["ok"] and not _loop_recalls_all(W, g)
    # a zero pair anywhere in a weighted support is enough
    v2 = verify_infeasible(g, [[0, 1], [int(mu), int(rho)]], [1.0, 1e-3])
    assert v2["ok"] and v2["eps"] == 0.0


def test_bad_facts_raise_value_error_naming_the_part():
    f = make_op(5, 4, rng=0)
    with pytest.raises(ValueError, match="p must be >= 2.*p=1"):
        exact_feasibility(Facts("op", f.E[:1], f.U[:1]))
    with pytest.raises(ValueError, match="d must be >= 1.*d=0"):
        exact_feasibility(Facts("op", np.zeros((5, 0)), np.zeros((5, 0))))
    E = f.E.copy()
    E[2, 1] = np.nan
    with pytest.raises(ValueError, match="facts.E must be finite"):
        exact_feasibility(Facts("op", E, f.U))
    U = f.U.copy()
    U[3, 0] = np.inf
    with pytest.raises(ValueError, match="facts.U must be finite"):
        exact_feasibility(Facts("op", f.E, U))
    g = make_dp(5, 4, rng=0)
    U = g.U.copy()
    U[4, 2, 3] = -np.inf
    with pytest.raises(ValueError, match=r"facts.U must be finite.*\(4, 2, 3\)"):
        exact_feasibility(Facts("dp", g.E, U))
    with pytest.raises(ValueError, match="facts.U must have shape"):
        exact_feasibility(Facts("dp", g.E, g.U[:, :3]))
    with pytest.raises(ValueError, match="kind must be 'op' or 'dp'.*'lowrank'"):
        exact_feasibility(Facts("lowrank", f.E, f.U))       # refused by Facts itself
    with pytest.raises(ValueError, match="W must have shape"):
        verify_feasible(f, np.eye(3))
    with pytest.raises(ValueError, match="batch"):
        exact_feasibility(f, batch=0)
    with pytest.raises(ValueError, match="p must be an integer"):
        LazyDPFacts(1, 4, rng=0)


def test_certificate_summary_verified_is_computed():
    from validation.linear_memory.exact import certificate_summary

    res = [exact_trial({"model": m, "d": 6, "alpha": a, "seed": 0}) for m in ("op", "dp") for a in (0.5, 2.5)]
    assert [r["success"] for r in res] == [True, False, True, False]
    assert all(r["verified"] is True for r in res)
    s = certificate_summary(res)
    assert s["verified"] is True and s["verified_count"] == 4
    assert certificate_summary(res + [dict(res[0], verified=False)])["verified"] is False
    assert certificate_summary(res + [dict(res[1], margin=1e-3)])["verified"] is False   # bound above tol
    assert certificate_summary(res + [dict(res[0], margin=-1e-3)])["verified"] is False  # no margin
    old = {k: v for k, v in res[0].items() if k != "verified"}                          # a pre-check record
    s = certificate_summary(res + [old])
    assert s["verified"] is None and s["unverified_count"] == 1


# --- DP candidates redrawn in blocks; screened margins ---------------------------------------------

@pytest.mark.parametrize("p, d, dtype", [(2, 1, np.float32), (7, 3, np.float32), (40, 5, np.float64)])
def test_lazy_dp_facts_are_make_dp(p, d, dtype):
    # the same generator gives the same numbers, block by block, in any order, cached or not
    ref = make_dp(p, d, rng=np.random.default_rng(9), dtype=dtype)
    for block_bytes, cache in ((1, 0), (3 * p * d * 4 + 1, 0), (10**9, 10**9), (2 * p * d * 4, 4 * p * d * 4)):
        lz = LazyDPFacts(p, d, rng=np.random.default_rng(9), dtype=dtype, block_bytes=block_bytes,
                         cache_bytes=cache)
        assert np.array_equal(lz.E, ref.E)
        order = np.random.default_rng(1).permutation(len(lz.bounds))
        for b in list(order) + list(order[::-1]):
            lo, hi = lz.bounds[b]
            assert np.array_equal(lz.block(b), ref.U[lo:hi])
        assert np.array_equal(lz.rows(0, p), ref.U) and np.array_equal(lz.materialize().U, ref.U)
        mu, rho = np.random.default_rng(2).integers(0, p, (2, 30))
        from validation.linear_memory.exact import pair_deltas
        assert np.array_equal(pair_deltas(lz, mu, rho), pair_deltas(ref, mu, rho))


def test_screened_margins_are_lower_bounds_and_exact_below_threshold():
    # independent oracle: every margin recomputed directly from the facts (models.scores)
    from validation.linear_memory.exact import _Scorer, _Source
    from validation.linear_memory.models import scores

    for f in (make_op(60, 10, rng=3), LazyDPFacts(60, 10, rng=4, block_bytes=10 * 60 * 10 * 4, cache_bytes=0)):
        src = _Source(f)
        sc = _Scorer(src, watch_k=4)
        Ufull = src.U if f.kind == "op" else np.concatenate([src.block(b) for b in range(len(src.bounds))])
        rng = np.random.default_rng(5)
        x = src.C.T @ src.E
        for it in range(25):
            x = x + 0.15 * np.linalg.norm(x) / 10 * rng.standard_normal(x.shape) * (it % 3 == 0)
            x *= 1.0 + 0.1 * (rng.random() - 0.5)
            Z = scores(x, Facts(f.kind, src.E, Ufull))
            true = np.diagonal(Z)[:, None] - Z
            np.fill_diagonal(true, np.inf)
            fin = np.isfinite(true)
            thr = float(np.quantile(true[fin], 0.05))
            exact = it % 2 == 0
            M = sc.margins(x, thr, exact=exact)
            scale = float(np.abs(true[fin]).max())
            ok = np.isfinite(M)
            # bounds never exceed the truth (rounding of the direct computation: 1e-12 of the scale)
            assert np.all(M[ok & fin] <= true[ok & fin] + 1e-12 * scale)
            if exact:
                assert sc.complete and np.all(ok[fin])
                low = fin & (M <= thr)
                assert np.allclose(M[low], true[low], rtol=0, atol=1e-12 * scale)
                assert np.all(true[fin & ~low] > thr - 1e-12 * scale)
        assert sc.rows_rescored < 25 * f.p                   # the screen saved re-scorings


def test_lazy_dp_decisions_match_materialised_and_lp():
    # the redrawn fact set (no cache, small blocks) is decided like its materialised copy and the LP
    from replica.load import p_from_load

    seen = set()
    for i, a in enumerate((0.7, 1.0, 1.3, 1.6)):
        p = p_from_load(a, 5)
        lz = LazyDPFacts(p, 5, rng=300 + i, block_bytes=3 * p * 5 * 4, cache_bytes=0)
        full = lz.materialize()
        rl, rf = exact_feasibility(lz), exact_feasibility(full)
        t = _lp_feasible(full)
        assert rl.feasible is rf.feasible is (t > 1e-7), (a, t)
        assert rl.verified and _loop_decision_ok(full, rl)
        assert lz.drawn_rows > p                               # blocks were redrawn, not kept
        seen.add(rl.feasible)
    assert seen == {True, False}


@pytest.mark.parametrize("kind, d, loads", [("op", 10, [0.8, 1.0, 1.2]), ("dp", 10, [0.8, 1.0, 1.2])])
def test_stage_and_exact_screening_agree(kind, d, loads):
    # two screening schedules of the augmented Lagrangian (checkpoints only / every step)
    from replica.load import p_from_load
    from validation.linear_memory.exact import _alm

    for i, a in enumerate(loads):
        f = (make_op if kind == "op" else make_dp)(p_from_load(a, d), d, rng=500 + i)
        r1 = _alm(f, tol=1e-9, verify=True, screen="stage")
        r2 = _alm(f, tol=1e-9, verify=True, screen="exact")
        assert r1.feasible is r2.feasible is not None
        assert _loop_decision_ok(f, r1) and _loop_decision_ok(f, r2)


def test_committed_dp_store_reproduces_with_redrawn_candidates():
    # stored DP decisions (made with the candidates in memory) reproduce with LazyDPFacts, including
    # the instance the Lawson-Hanson fallback decided
    from validation.engine import read_store

    scan = read_store(STORED_DIR / "linear_memory.exact_dp.jsonl", warn=False)
    recs = [g for g in scan.ok.values() if g["params"]["d"] == 20]
    pick = [next(g for g in recs if g["result"]["method"] == "alm+lh"),
            next(g for g in recs if g["result"]["success"] is True),
            next(g for g in recs if g["result"]["success"] is False and g["result"]["method"] == "alm")]
    for g in pick:
        r = exact_trial(g["params"])
        assert r["success"] is g["result"]["success"] and r["p"] == g["result"]["p"] and r["verified"]
        assert set(g["result"]) <= set(r)                     # result keys stay compatible


@pytest.mark.slow
def test_committed_stores_reproduce_up_to_d40():
    # every stored instance with d <= 40 (OP and DP) re-decided: same decision, verified certificate
    from validation.engine import read_store

    n = 0
    for name in ("linear_memory.exact_op.jsonl", "linear_memory.exact_dp.jsonl"):
        for g in read_store(STORED_DIR / name, warn=False).ok.values():
            if g["params"]["d"] <= 40:
                r = exact_trial(g["params"])
                assert r["success"] is g["result"]["success"] and r["verified"], g["params"]
                n += 1
    assert n >= 170
