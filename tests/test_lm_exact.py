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
from validation.linear_memory.exact import (exact_feasibility, exact_trial, verify_feasible,
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
    return np.linalg.norm(S) / den


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


def test_certificates_verified_and_fakes_rejected():
    f = make_op(30, 8, rng=5)                            # load 30 ln 30 / 64 = 1.6: infeasible
    r = exact_feasibility(f)
    assert r.feasible is False
    v = verify_infeasible(f, r.pairs, r.lam)
    assert v["ok"] and math.isclose(v["eps"], _loop_cert_eps(f, r.pairs, r.lam), rel_tol=1e-6, abs_tol=1e-15)
    bad = r.lam.copy()
    bad[0] *= 2.0                                        # breaks sum lambda a = 0
    assert not verify_infeasible(f, r.pairs, bad)["ok"]
    neg = r.lam.copy()
    neg[0] = -neg[0]
    assert not verify_infeasible(f, r.pairs, neg)["ok"]
    g = make_op(12, 8, rng=6)                            # load 0.47: feasible
    r2 = exact_feasibility(g)
    assert r2.feasible is True and verify_feasible(g, r2.W)["ok"] and _loop_recalls_all(r2.W, g)
    assert not verify_feasible(g, np.zeros((8, 8)))["ok"]   # ties are not recall


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
