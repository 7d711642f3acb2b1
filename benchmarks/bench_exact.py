"""CPU seconds per exact decision against d: the package's solver and an independent HiGHS LP.

For every dimension in ``--ds`` the instances of
:func:`validation.linear_memory.exact.exact_trial` at the loads ``--rel``
times the finite-p prediction and the seeds ``0 .. --seeds - 1`` are decided
by the package (:func:`~validation.linear_memory.exact.exact_feasibility`,
DP candidates redrawn in blocks) and, for ``d <= --lp-max-d``, by a linear
programme written here independently of the package's solver:

    maximise t  subject to  (c_mu - v_{mu rho})^T h_mu >= t  for the working pairs,
                            h_mu = W e_mu,  |W_ij| <= 1,  t <= 1,

solved by HiGHS (``scipy.optimize.linprog(method="highs")``, sparse rows
through the auxiliary ``h_mu``) with constraint generation: the working set
starts with every input's ``--lp-start`` strongest competitors under the
Hebbian memory; after each LP all ``p (p - 1)`` margins of its ``W`` are
scored, and the LP stops with "feasible" if all are positive, with
"infeasible" if its optimum ``t`` is ``<= 1e-7`` (HiGHS's feasibility
tolerance; a subset of the pairs already admits no positive margin), and
otherwise adds each input's ``--lp-add`` most violated competitors.

With ``--adaptive D`` it measures instead one exact threshold (``--model``) at ``D`` by the
adaptive design (the study ``linear_memory.exact_adaptive``, on a fresh store
unless ``--store`` names one) and prints its interval, trials and wall time
against the speed target (95% CI half-width <= 0.01 in <= 60 minutes wall on
2 cores).

Prints one line per instance (decisions, CPU seconds of both, the ratio LP /
package where the LP ran and finished within ``--lp-limit`` seconds) and a
table of the per-d means.  CPU seconds are ``time.process_time`` of this
process with one BLAS thread; no timing is asserted anywhere.

Usage::

    nice -n 10 python benchmarks/bench_exact.py --ds 20 30 --lp-max-d 30
    nice -n 10 python benchmarks/bench_exact.py --ds 60 100 150 --seeds 2 --lp-max-d 0
    nice -n 10 python benchmarks/bench_exact.py --model dp --ds 30 60 100 --lp-max-d 0
    nice -n 10 python benchmarks/bench_exact.py --adaptive 150 --workers 2
    nice -n 10 python benchmarks/bench_exact.py --adaptive 150 --model dp --workers 2
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sps  # noqa: E402
from scipy.optimize import linprog  # noqa: E402


def lp_decide(E, cand, kind, *, start=4, add=4, limit=600.0):
    """Decide an instance by HiGHS with constraint generation (see the module docstring).

    Returns ``(decision, rounds, pairs)``; decision None if the time limit was hit.
    """
    E = np.asarray(E, np.float64)
    p, d = E.shape
    C = cand if kind == "op" else cand[np.arange(p), np.arange(p)]

    def all_margins(W):
        H = E @ W.T
        Z = H @ cand.T if kind == "op" else np.einsum("mrd,md->mr", cand, H)
        M = np.diagonal(Z)[:, None] - Z
        np.fill_diagonal(M, np.inf)
        return M

    nW, nH = d * d, p * d
    nv = nW + nH + 1
    # equality rows h_{mu i} - sum_j W_ij E_{mu j} = 0
    mu_i = np.arange(p * d)
    rows = np.concatenate([mu_i, np.repeat(mu_i, d)])
    cols = np.concatenate([nW + mu_i,
                           (np.arange(d)[None, :, None] * d + np.arange(d)[None, None, :]).repeat(p, 0).ravel()])
    vals = np.concatenate([np.ones(p * d), -np.repeat(E, d, axis=0).ravel()])
    A_eq = sps.csr_matrix((vals, (rows, cols)), shape=(p * d, nv))
    b_eq = np.zeros(p * d)
    bounds = [(-1.0, 1.0)] * nW + [(None, None)] * nH + [(None, 1.0)]
    c = np.zeros(nv)
    c[-1] = -1.0
    M = all_margins(C.T @ E)
    work = set()
    for mu in range(p):
        for rho in np.argsort(M[mu])[:start]:
            work.add((mu, int(rho)))
    t0 = time.perf_counter()
    rounds = 0
    while True:
        rounds += 1
        pairs = np.array(sorted(work))
        mu, rho = pairs[:, 0], pairs[:, 1]
        D = C[mu] - (cand[rho] if kind == "op" else cand[mu, rho])
        n = len(pairs)
        r = np.concatenate([np.repeat(np.arange(n), d), np.arange(n)])
        cc = np.concatenate([(nW + mu[:, None] * d + np.arange(d)[None, :]).ravel(), np.full(n, nv - 1)])
        v = np.concatenate([-D.ravel(), np.ones(n)])
        A_ub = sps.csr_matrix((v, (r, cc)), shape=(n, nv))
        left = limit - (time.perf_counter() - t0)
        if left <= 0:
            return None, rounds, n
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(n), A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                      method="highs", options={"time_limit": left})
        if res.status != 0:
            return None, rounds, n
        t = -res.fun
        if t <= 1e-7:
            return False, rounds, n
        W = res.x[:nW].reshape(d, d)
        M = all_margins(W)
        if float(M.min()) > 0:
            return True, rounds, n
        new = 0
        for m_ in np.nonzero(M.min(axis=1) <= 0)[0]:
            for rr in np.argsort(M[m_])[:add]:
                if M[m_, rr] <= 0 and (m_, int(rr)) not in work:
                    work.add((int(m_), int(rr)))
                    new += 1
        if new == 0:                                    # violations only inside the working set
            return None, rounds, n


def main(argv=None):
    from replica import p_from_load
    from validation.linear_memory.data import make_facts, trial_rngs
    from validation.linear_memory.exact import LazyDPFacts, exact_feasibility
    from validation.linear_memory.registry import prediction

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("op", "dp"), default="op")
    ap.add_argument("--ds", type=int, nargs="+", default=[20, 30, 60, 100, 150])
    ap.add_argument("--rel", type=float, nargs="+", default=[0.98, 1.02],
                    help="loads relative to the finite-p prediction")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--lp-max-d", type=int, default=30, help="run the LP up to this d (0: never)")
    ap.add_argument("--lp-limit", type=float, default=600.0, help="wall seconds per LP instance")
    ap.add_argument("--lp-start", type=int, default=4)
    ap.add_argument("--lp-add", type=int, default=4)
    ap.add_argument("--adaptive", type=int, default=None, metavar="D",
                    help="measure one adaptive exact OP threshold at D instead (the speed target)")
    ap.add_argument("--workers", type=int, default=2, help="workers of --adaptive (default 2)")
    ap.add_argument("--store", default=None, help="store of --adaptive (default: a fresh temporary file)")
    a = ap.parse_args(argv)
    if a.adaptive is not None:
        if a.adaptive < 2 or a.workers < 1:
            ap.error("--adaptive must be >= 2 and --workers >= 1")
        return adaptive(a.model, a.adaptive, a.workers, a.store)
    if any(d < 2 for d in a.ds) or a.seeds < 1 or not a.rel or any(not (r > 0) for r in a.rel):
        ap.error("--ds must be >= 2, --seeds >= 1, --rel > 0")
    print(f"exact decisions, model {a.model}, loads {a.rel} x prediction, seeds 0..{a.seeds - 1}; "
          f"CPU s (process time, 1 BLAS thread)", flush=True)
    table = []
    for d in a.ds:
        pred = prediction(a.model, d)["value"]
        ours, lps, ratios = [], [], []
        for rel in a.rel:
            p = p_from_load(pred * rel, d)
            for seed in range(a.seeds):
                rf, _ = trial_rngs(seed, d, p)
                f = (LazyDPFacts(p, d, rng=rf) if a.model == "dp"
                     else make_facts(a.model, p, d, rng=rf, dtype=np.float32))
                c0 = time.process_time()
                r = exact_feasibility(f)
                c = time.process_time() - c0
                ours.append(c)
                line = (f"d={d:4d} p={p:5d} load={pred * rel:.4f} seed={seed}: package {r.feasible!s:5} "
                        f"{c:8.2f} s ({r.info['method']}, {r.info.get('newton', r.info.get('alm_newton', 0))} "
                        f"Newton steps)")
                if d <= a.lp_max_d:
                    fm = f.materialize() if a.model == "dp" else f
                    c0 = time.process_time()
                    dec, rounds, n = lp_decide(fm.E, np.asarray(fm.U, np.float64), a.model,
                                               start=a.lp_start, add=a.lp_add, limit=a.lp_limit)
                    cl = time.process_time() - c0
                    line += f" | LP {dec!s:5} {cl:8.2f} s ({rounds} rounds, {n} pairs)"
                    if dec is not None:
                        lps.append(cl)
                        ratios.append(cl / c)
                        line += f" ratio {cl / c:6.1f}" + ("" if dec is r.feasible else "  DECISIONS DIFFER")
                    else:
                        line += " (did not finish)"
                print(line, flush=True)
        table.append((d, len(ours), float(np.mean(ours)), float(np.median(ours)), float(np.max(ours)),
                      float(np.mean(lps)) if lps else math.nan, len(lps),
                      (float(np.min(ratios)), float(np.median(ratios)), float(np.max(ratios))) if ratios else None))
    print("\n| d | instances | package CPU s mean | median | max | LP CPU s mean (n finished) | ratio LP/package min / median / max |")
    print("|---|---|---|---|---|---|---|")
    for d, n, m, med, mx, lm, nl, rat in table:
        rs = "-" if rat is None else f"{rat[0]:.1f} / {rat[1]:.1f} / {rat[2]:.1f}"
        ls = "-" if nl == 0 else f"{lm:.1f} ({nl})"
        print(f"| {d} | {n} | {m:.2f} | {med:.2f} | {mx:.2f} | {ls} | {rs} |")


def adaptive(model, d, workers, store):
    """One adaptive exact threshold of ``model`` at ``d`` (study ``linear_memory.exact_adaptive``), timed."""
    from validation.studies import get_study
    from validation.studies.linear_memory_exact import ADAPTIVE

    store = store or os.path.join(tempfile.mkdtemp(), "bench_exact_adaptive.jsonl")
    t0 = time.perf_counter()
    run = get_study("linear_memory.exact_adaptive").run(compute=True, store=store, workers=workers,
                                                         progress=True, ds=(d,), models=(model,))
    wall = time.perf_counter() - t0
    r = run.outcome[model, d]
    target = ADAPTIVE["ci_halfwidth"]
    print(f"exact {model.upper()} d={d}: threshold {r.threshold:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}] (half-width "
          f"{r.halfwidth:.4f}; target <= {target:g}: {'met' if r.halfwidth <= target else 'not met'}), "
          f"finite-p prediction {r.theory:.4f}, {r.trials} decisions ({r.verified} verified), stop {r.stop}; "
          f"wall {wall:.0f} s ({wall / 60:.1f} min; target <= 60 min on 2 cores: "
          f"{'met' if wall <= 3600 else 'not met'}), {workers} workers, decision CPU {r.cpu_seconds:.0f} s "
          f"(slowest {r.cpu_seconds_max:.0f} s); store {store}", flush=True)


if __name__ == "__main__":
    main()
