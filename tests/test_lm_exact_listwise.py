"""Exact top-1-at-a-margin and TAM decisions (validation.linear_memory.exact_listwise).

Oracles: the lifted linear program of the tail mean (Rockafellar-Uryasev form
``t + (1/k) sum_j (s_j - t)_+``) solved by scipy's HiGHS for the zero-margin
decisions; the lifted quadratic program ``min |W|^2/2`` s.t. margins ``>= 1``
solved by SLSQP for the best margin ``gamma*`` (decides every ``gamma > 0``);
the zero-margin top-1 solver of ``validation.linear_memory.exact``; tail means
and certificates re-checked here with plain Python loops.
"""
import math

import numpy as np
import pytest
from scipy.optimize import linprog, minimize

from validation.linear_memory.data import make_dp, make_op
from validation.linear_memory.exact import exact_feasibility
from validation.linear_memory.exact_listwise import (listwise_exact_trial, listwise_feasibility,
                                                     listwise_margins, score_unit, verify_listwise_feasible,
                                                     verify_listwise_infeasible)
from replica.listwise import tail_size


def _cand(f, mu, rho):
    return np.asarray(f.U[rho] if f.kind == "op" else f.U[mu, rho], np.float64)


def _lifted(f, k):
    """Constraint rows of the lifted problem in variables (W (d^2), t (p), s (p, p-1)):
    A_ub x <= b_ub for  c.W e - t - (1/k) sum s >= 1  and  v.W e - t - s <= 0."""
    p, d = f.p, f.d
    unit = score_unit(f)
    nv = d * d + p + p * (p - 1)
    A, b = [], []
    sidx = {}
    for mu in range(p):
        for rho in range(p):
            if rho != mu:
                sidx[mu, rho] = len(sidx)
    for mu in range(p):
        e = np.asarray(f.E[mu], np.float64)
        row = np.zeros(nv)
        row[:d * d] = -np.outer(_cand(f, mu, mu), e).ravel()
        row[d * d + mu] = 1.0
        for rho in range(p):
            if rho != mu:
                row[d * d + p + sidx[mu, rho]] = 1.0 / k
        A.append(row)
        b.append(-unit)                                    # margin >= 1 score unit
        for rho in range(p):
            if rho != mu:
                row = np.zeros(nv)
                row[:d * d] = np.outer(_cand(f, mu, rho), e).ravel()
                row[d * d + mu] = -1.0
                row[d * d + p + sidx[mu, rho]] = -1.0
                A.append(row)
                b.append(0.0)
    bounds = [(None, None)] * (d * d + p) + [(0, None)] * (p * (p - 1))
    return np.array(A), np.array(b), bounds, nv


def _lp_feasible(f, k):
    # HiGHS: is {margins >= 1} non-empty?  (homogeneous: iff some W has all margins > 0)
    A, b, bounds, nv = _lifted(f, k)
    r = linprog(np.zeros(nv), A_ub=A, b_ub=b, bounds=bounds, method="highs")
    assert r.status in (0, 2), r.message
    return r.status == 0


def _qp_best_margin(f, k):
    # SLSQP on min |W|^2 / 2 s.t. margins >= 1 (score units): gamma* = 1 / |W*|
    A, b, bounds, nv = _lifted(f, k)
    d2 = f.d ** 2
    r0 = linprog(np.zeros(nv), A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if r0.status != 0:
        return -math.inf
    r = minimize(lambda x: 0.5 * x[:d2] @ x[:d2], r0.x, jac=lambda x: np.r_[x[:d2], np.zeros(nv - d2)],
                 constraints=[{"type": "ineq", "fun": lambda x: b - A @ x, "jac": lambda x: -A}],
                 bounds=bounds, method="SLSQP", options={"ftol": 1e-13, "maxiter": 3000})
    # status 8 (line search stalls) happens at the optimum to rounding; accept it when the
    # point is feasible to 1e-9 (then |W*| is correct to the tolerance of the comparison)
    assert r.status in (0, 8), r.message
    assert float(np.max(A @ r.x - b)) <= 1e-9 * score_unit(f)
    return 1.0 / math.sqrt(2 * r.fun)


def _loop_margins(f, W, k):
    # independent tail mean: sort each row in Python, fractional last weight
    unit = score_unit(f) * np.linalg.norm(W)
    out = []
    K = math.ceil(k - 1e-12)
    for mu in range(f.p):
        h = W @ np.asarray(f.E[mu], np.float64)
        comp = sorted((float(_cand(f, mu, r) @ h) for r in range(f.p) if r != mu), reverse=True)
        T = (sum(comp[:K - 1]) + (k - K + 1) * comp[K - 1]) / k
        out.append((float(_cand(f, mu, mu) @ h) - T) / unit)
    return np.array(out)


def _instances(n_inst, seed, wide=False, small=False):
    # p around the transition: top-1 and small tails near 2d..3d, tau = 1 near 2 d^2
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_inst):
        kind = ("op", "dp")[i % 2]
        d = int(rng.integers(3, 5))
        p = (int(rng.integers(d * d, 3 * d * d)) if wide else int(rng.integers(d, 2 * d + 2)) if small
             else int(rng.integers(d + 2, 3 * d + 4)))
        f = (make_op if kind == "op" else make_dp)(p, d, rng=int(rng.integers(2**31)))
        out.append(f)
    return out


@pytest.mark.parametrize("criterion,tau", [("top1", None), ("tam", 0.3), ("tam", 1.0)])
def test_zero_margin_decisions_match_highs(criterion, tau):
    # 40 random OP/DP instances at d = 3, 4 around the transition: identical decisions
    n_f = n_i = 0
    for f in _instances(40, 1 if tau is None else int(10 * tau), wide=tau == 1.0):
        k = 1.0 if tau is None else float(tail_size(tau, f.p))
        r = listwise_feasibility(f, criterion=criterion, tau=tau)
        assert r.verified is True
        assert r.feasible == _lp_feasible(f, k)
        n_f += r.feasible
        n_i += not r.feasible
        if criterion == "top1":
            assert r.feasible == exact_feasibility(f).feasible
    assert n_f >= 5 and n_i >= 5                          # both outcomes are exercised


@pytest.mark.parametrize("criterion,tau", [("top1", None), ("tam", 0.2)])
def test_best_margin_matches_qp(criterion, tau):
    # gamma* from our optimum vs SLSQP on the lifted QP; SLSQP's ftol 1e-13 on |W|^2 gives
    # gamma* to ~1e-7 relative, so 1e-5 relative leaves a margin of 100
    n_pos = 0
    for f in _instances(40, 7 if tau is None else 8, small=True):
        k = 1.0 if tau is None else float(tail_size(tau, f.p))
        r = listwise_feasibility(f, criterion=criterion, tau=tau, optimal=True)
        g_or = _qp_best_margin(f, k)
        if g_or == -math.inf:
            assert r.feasible is False and r.gamma_high <= 1e-9
            continue
        n_pos += 1
        assert r.gamma_low <= r.gamma_high * (1 + 1e-9) + 1e-12   # a valid bracket
        assert r.gamma_high == pytest.approx(g_or, rel=1e-5)
        # the decision at gamma = 0.1 and 0.5 agrees with the oracle's gamma* (no tie within 1e-5)
        for gam in (0.1, 0.5, 0.999 * g_or, 1.001 * g_or):
            if gam > 0 and abs(g_or - gam) > 1e-5 * gam:
                rg = listwise_feasibility(f, criterion=criterion, tau=tau, margin=gam)
                assert rg.verified is True
                assert rg.feasible == (g_or > gam)
    assert n_pos >= 10


def test_certificates_recheck_with_loops():
    f = make_dp(14, 4, rng=3)
    r = listwise_feasibility(f, tau=0.5, optimal=True)
    k = float(tail_size(0.5, 14))
    if r.feasible:
        assert np.min(_loop_margins(f, r.W, k)) == pytest.approx(r.margin, rel=1e-10)
    # a margin just above gamma*: the lambda certificate's bound, by a loop over its vertices
    rg = listwise_feasibility(f, tau=0.5, margin=max(r.gamma_high, 0) * 1.01 + 1e-3)
    assert rg.feasible is False and rg.verified
    c = rg.cert
    K = c["idx"].shape[1]
    w = [1 / k] * (K - 1) + [(k - K + 1) / k]
    X = np.zeros((4, 4))
    for m, ix, l in zip(c["mu"], c["idx"], c["lam"]):
        assert m not in ix and len(set(ix)) == K and l >= 0
        delta = _cand(f, m, m) - sum(wj * _cand(f, m, j) for wj, j in zip(w, ix))
        X += l * np.outer(delta, np.asarray(f.E[m], np.float64))
    bound = np.linalg.norm(X) / (score_unit(f) * sum(c["lam"]))
    assert bound == pytest.approx(rg.margin, rel=1e-10)


def test_margins_match_loop_and_invariance():
    f = make_op(9, 4, rng=2)
    W = np.random.default_rng(0).standard_normal((4, 4))
    for tau in (0.1, 0.3, 0.55, 1.0):
        k = float(tail_size(tau, 9))
        np.testing.assert_allclose(listwise_margins(f, W, tau=tau), _loop_margins(f, W, k), rtol=1e-12, atol=1e-12)
    # margins are in score units: invariant under scaling W, inputs, candidates
    g = listwise_margins(f, W, tau=0.3)
    f2 = type(f)(3.0 * f.E, 0.25 * f.U)
    np.testing.assert_allclose(listwise_margins(f2, 7 * W, tau=0.3), g, rtol=1e-12)
    r1 = listwise_feasibility(f, tau=0.3, optimal=True)
    r2 = listwise_feasibility(f2, tau=0.3, optimal=True)
    assert r1.feasible == r2.feasible and r1.gamma_high == pytest.approx(r2.gamma_high, rel=1e-8)


def test_verifiers_reject_bad_certificates():
    f = make_op(12, 3, rng=0)
    r = listwise_feasibility(f, tau=0.3)
    assert r.feasible is False
    c = dict(r.cert)
    assert verify_listwise_infeasible(f, c, tau=0.3)["ok"]
    bad = dict(c, lam=-c["lam"])
    assert not verify_listwise_infeasible(f, bad, tau=0.3)["ok"]
    bad = dict(c, idx=np.repeat(c["idx"][:, :1], c["idx"].shape[1], 1))
    if c["idx"].shape[1] > 1:
        assert not verify_listwise_infeasible(f, bad, tau=0.3)["ok"]
    bad = dict(c, idx=np.broadcast_to(c["mu"][:, None], c["idx"].shape).copy())
    assert not verify_listwise_infeasible(f, bad, tau=0.3)["ok"]
    assert not verify_listwise_feasible(f, np.zeros((3, 3)), tau=0.3)["ok"]


def test_bad_arguments():
    f = make_op(5, 3, rng=0)
    with pytest.raises(ValueError, match="criterion"):
        listwise_feasibility(f, criterion="top2")
    with pytest.raises(ValueError, match="tau"):
        listwise_feasibility(f, criterion="tam")
    with pytest.raises(ValueError, match="tau"):
        listwise_feasibility(f, criterion="tam", tau=1.5)
    with pytest.raises(ValueError, match="tau"):
        listwise_feasibility(f, criterion="top1", tau=0.1)
    with pytest.raises(ValueError, match="margin"):
        listwise_feasibility(f, tau=0.1, margin=-0.1)


def test_trial_record():
    out = listwise_exact_trial({"model": "dp", "d": 4, "n": 6, "criterion": "tam", "tau": 0.5,
                                "margin": 0.1, "seed": 0})
    assert out["p"] == 6 and out["success"] in (True, False) and out["verified"] is True


def test_cli_checks_before_work():
    import subprocess
    import sys
    base = [sys.executable, "-m", "validation", "capacity", "--d", "10"]
    for extra, word in [(["--model", "dp", "--method", "exact", "--criterion", "tam", "--tau", "1.5"], "tau"),
                        (["--model", "dp", "--criterion", "tam", "--tau", "0.5", "--preset", "paper"], "preset"),
                        (["--model", "hebbian", "--method", "exact", "--criterion", "tam", "--tau", "0.5"], "model"),
                        (["--model", "op", "--method", "exact", "--margin", "-1"], "margin")]:
        r = subprocess.run(base + extra, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and word in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_measure_listwise_capacity_small():
    from validation.linear_memory.exact_listwise import measure_listwise_capacity
    res = measure_listwise_capacity("dp", 6, criterion="tam", tau=0.5, seeds=3, executor="inprocess",
                                    progress=False)
    assert res.trials == 3 * len(res.counts) and res.unverified == 0
    th = res.theory
    assert th["p"] >= 2 and th["value"] > th["limit"] > 0


@pytest.mark.parametrize("model", ["op", "dp"])
def test_hebbian_trial_matches_independent_scoring(model):
    # top-1 against validation.losses.recalled on the scores of validation.linear_memory.models;
    # TAM by the Python-loop tail mean
    from validation.linear_memory.data import make_facts, trial_rngs
    from validation.linear_memory.exact_listwise import HEBBIAN_TAUS, hebbian_listwise_trial
    from validation.linear_memory.models import hebbian_W
    from validation.losses import recalled

    for n in (6, 15, 30):
        out = hebbian_listwise_trial({"model": model, "d": 8, "n": n, "seed": 3})
        rf, _ = trial_rngs(3, 8, n)
        f = make_facts(model, n, 8, rng=rf, dtype=np.float32)
        W = np.asarray(hebbian_W(f), np.float64)
        H = np.asarray(f.E, np.float64) @ W.T
        Z = np.stack([np.asarray(f.U if f.kind == "op" else f.U[mu], np.float64) @ H[mu] for mu in range(n)])
        rec = recalled(Z, np.arange(n))
        assert out["top1"] == [bool(rec.all()), pytest.approx(float(rec.mean()))]
        for tau in HEBBIAN_TAUS:
            g = _loop_margins(f, W, float(tail_size(tau, n)))
            assert out[f"tam_{tau:g}"] == [bool(np.all(g > 0)), pytest.approx(float(np.mean(g > 0)))]


@pytest.mark.parametrize("kind,tau", [("op", 0.2), ("dp", 0.05), ("dp", 0.3)])
def test_optimal_returns_the_optimal_memory(kind, tau):
    # with optimal=True the returned W must be the max-margin memory: its smallest margin equals the
    # certified gamma* (bracket gamma_low = gamma_high to ~1e-10; 1e-6 relative leaves room for the
    # verifier's recomputation), and it beats the first memory a decision-only run certifies
    from validation.linear_memory.data import make_dp, make_op
    f = (make_op if kind == "op" else make_dp)(14, 8, rng=4)         # load 14/64: well below capacity
    r = listwise_feasibility(f, tau=tau, optimal=True)
    assert r.feasible and r.verified and r.optimal
    g = listwise_margins(f, r.W, tau=tau).min()
    assert g == pytest.approx(r.gamma_high, rel=1e-6) and r.margin == pytest.approx(r.gamma_high, rel=1e-6)
    first = listwise_feasibility(f, tau=tau)
    assert listwise_margins(f, first.W, tau=tau).min() <= g * (1 + 1e-9)
