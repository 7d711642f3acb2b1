"""Report section: linear associative memories trained in numpy vs theory.

Capacity thresholds (OP, DP, low rank, Hebbian) against the finite-size RS
capacity, ``alpha_c(kappa)``, 1/2 and the Hebbian Gaussian model; the
normalised-score mechanism; spectra of trained memories; the exact capacity;
the finite-``p`` low-rank, margin and spectra studies; the paper's size.  The
section only renders: every number comes from a study of
:mod:`validation.studies` (``linear_memory.capacity``, ``.exact_op``,
``.exact_dp``, ``.exact_adaptive``, ``.d150``, ``.d150_budget``, ``.lowrank_finite_p``, ``.margins``,
``.spectra``, ``.adaptive_design``).  The capacity sweep runs on a store in
the report folder (both modes: nothing of it is committed), so an interrupted
build resumes; the other studies replay their committed stores in quick mode
and compute on a store in the report folder, seeded from the committed one,
in full mode.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from validation.sections.base import SectionResult, fill_doc, md_table
from validation.sections.figstyle import THEORY_ZORDER, legend_outside

KEY = "linear_memory"
TITLE = "Linear associative memories: trained capacity vs replica theory"
DOCS = "docs/linear_memory.md"  # model and derivations; linked under the section heading

#: Folder of the committed stores, as the report names it.
_STORED = "validation/studies/stored"


def _study(ctx, name, store_name, **options):
    """Replay (quick) or compute (full, on ``store_name`` in the report folder) one study."""
    from validation.studies import get_study

    study = get_study(name)
    return study.run(compute=not ctx.quick, store=None if ctx.quick else ctx.out / store_name,
                     executor=ctx.executor, workers=2, missing="skip", **options)


@fill_doc
def build(ctx):
    """Build the report section ``linear_memory``: trained capacity of linear memories (OP, DP, low rank, Hebbian) against the replica theory.

    %(section_build)s

    References
    ----------
    arXiv:2605.10795; docs/linear_memory.md#measured-comparison-quick-report
    """
    from validation.studies import get_study

    config = "quick" if ctx.quick else "full"
    t_start = time.perf_counter()
    study = get_study("linear_memory.capacity")
    from validation.studies.linear_memory_capacity import CONFIGS

    cfg = CONFIGS[config]
    n_workers = getattr(ctx.executor, "workers", cfg["workers"])  # the report's pool, if any
    ctx.progress(f"linear_memory: capacity sweep ({config}) on {n_workers} workers")
    store = ctx.out / "linear_memory_trials.jsonl"
    run = study.run(compute=True, store=store, executor=ctx.executor, workers=cfg["workers"], config=config)
    sweep = run.outcome
    theories = sweep.theories
    t_sweep = time.perf_counter() - t_start
    n_reused = run.reused
    data_rows = [r.to_dict() for r in sweep.rows]
    ctx.progress("linear_memory: exact capacity (existence of a memory)")
    d150 = _study(ctx, "linear_memory.d150", "d150_trials.jsonl")
    exact, exact_meta, exact_md, exact_figs = _exact(ctx, cfg, data_rows, d150)
    ctx.progress("linear_memory: mechanism and spectra")
    mech, mech_md, mech_figs = _mechanism(ctx, sweep.mechanism)
    fp_md, fp_data, fp_figs = _finite_p_blocks(ctx, d150)
    # the low-rank prediction at this d: the finite-p rank-constrained capacity of the study
    # linear_memory.lowrank_finite_p (the large-d alpha_c(m/d) is shown next to it)
    lr_theory = {(r["kappa"], r["d"]): (r["theory"], r["theory_stderr"])
                 for r in fp_data.get("lowrank_finite_p", {}).get("rows", [])}
    rows = []
    for row in data_rows:
        name = row["model"].upper() + (f" k={row['kappa']:g}" if row["kappa"] else "")
        th, th_se, th_name = row["theory"], row["theory_stderr"], \
            (row["theory_name"].split(",")[0] if row["theory_name"] else "")
        if row["model"] == "lowrank" and (row["kappa"], row["d"]) in lr_theory:
            th, th_se = lr_theory[(row["kappa"], row["d"])]
            th_name = f"alpha_c(kappa, p) (large d: {_f(row['theory'])})"
        row["theory_finite_p"] = th if row["model"] == "lowrank" else None
        rows.append([name, row["d"], ("-" if row["model"] == "hebbian" else row["preset"]), _f(row["threshold"]),
                     f"[{_f(row['ci_low'])}, {_f(row['ci_high'])}]",
                     _f(th) + (f" ± {th_se:.1g}" if th_se else ""), th_name,
                     _f(row["ratio_to_op"]) if row["ratio_to_op"] else "", row["trials"]])
    fig_name = _capacity_figure(ctx, data_rows, lr_theory)
    n_trials = sweep.trials

    seconds = time.perf_counter() - t_start
    md = [f"### Capacity thresholds\n",
          "Empirical threshold = load `alpha = p ln p / d^2` where the fraction of instances "
          "trained to recall **all** p facts crosses 1/2 (logistic fit, 95% profile-likelihood CI; "
          f"{cfg['seeds']} seeds per load, Hebbian {cfg['hebbian_seeds']}; training: "
          + (f"default preset with its step budget cut to {cfg['steps']}" if cfg["steps"] else "default preset")
          + "; `paper` = lr 1e-2, <= 512 steps, stop at 99.9%). Theory: full rank = "
          "`alpha_c_finite(p)` solved self-consistently at this d (large-d limit 1/2); low rank = "
          "the finite-p rank-constrained capacity `alpha_c(kappa, p)` where the low-rank study has "
          "this d (its large-d value `alpha_c(m/d)` in the prediction column; the column `/OP` gives "
          "the low-rank threshold divided "
          "by the OP threshold at the same d, to compare with `alpha_c(kappa)/alpha_c(1)` = "
          + ", ".join(f"{_f(theories[(m, k, cfg['ds'][0])]['value'] / 0.5)} (k={k:g})"
                      for m, k in cfg["groups"] if m == "lowrank" and math.isfinite(theories[(m, k, cfg['ds'][0])]['value']))
          + "); Hebbian = conditional finite-size model of `replica.hebbian` (P(all recalled) = 1/2).\n",
          md_table(["model", "d", "preset", "alpha_emp", "95% CI", "theory", "prediction", "/OP", "trials"], rows),
          f"\n![Empirical thresholds: alpha_emp - 1/2 against 1/ln p (left) and all models against d (right)]({fig_name})\n",
          f"\nSweep: {n_trials} trials ({n_reused} reused from the store "
          f"`{store.name}`) in {t_sweep:.0f} s wall on {n_workers} workers "
          f"(training summed over trials: {sum(r['train_seconds'] for r in data_rows):.0f} s wall, "
          f"{sum(r['train_cpu_seconds'] for r in data_rows):.0f} s CPU; the difference is load from "
          "other processes); "
          f"section total {seconds:.0f} s. Every row is reproduced exactly (same loads, seeds and "
          "step budget) by the command stored as its `command` in `report.json`; for the first row: "
          f"`{data_rows[0]['command']}`. The sweep is the study `linear_memory.capacity` "
          f"(`{study.command(config=config)}`).\n"]
    plain = [(r["d"], theories[("hebbian", None, r["d"])].get("plain_model")) for r in data_rows
             if r["model"] == "hebbian"]
    if any(v is not None for _, v in plain):
        md.append("\nHebbian theory column: `replica.hebbian.hebbian_threshold(d)` (its default model); "
                  "the plain independent-Gaussian model gives "
                  + ", ".join(f"{v:.3f} (d={d})" for d, v in plain if v is not None) + ".\n")
    md += exact_md
    md += mech_md
    md += fp_md
    seconds = time.perf_counter() - t_start
    data = {"alpha_c_kappa_over_half": {str(k): theories[(m, k, cfg["ds"][0])]["value"] / 0.5
                                        for m, k in cfg["groups"] if m == "lowrank"},
            "rows": data_rows, "mechanism": mech, "config": {k: v for k, v in cfg.items()},
            "sweep_seconds": t_sweep, "seconds": seconds, "trials_reused": n_reused,
            "trials": n_trials, "exact": exact, "exact_meta": exact_meta, **fp_data}
    return SectionResult("\n".join(md), data, [fig_name] + exact_figs + mech_figs + fp_figs)


def _exact(ctx, cfg, data_rows, d150):
    """Exact capacity (existence of a full-rank memory) next to theory and training.

    The numbers come from the study ``linear_memory.exact_op``
    (:mod:`validation.studies.linear_memory_exact`): quick mode replays its
    committed store and computes nothing; full mode runs the planned trials on
    a store in the report folder seeded from the committed one.
    """
    from validation.sections.claims import exact_verdict
    from validation.studies import get_study
    from validation.studies.linear_memory_exact import PLAN, TIMING

    t0 = time.perf_counter()
    study = get_study("linear_memory.exact_op")
    ds = sorted(PLAN) + sorted(d for d in TIMING if d not in PLAN)
    run = study.run(compute=not ctx.quick, store=None if ctx.quick else ctx.out / "linear_memory_exact.jsonl",
                    executor=ctx.executor, workers=cfg["workers"], missing="skip", ds=tuple(ds))
    stored = f"validation/studies/stored/{study.stored}"
    if ctx.quick:
        source = f"read from the committed store `{stored}` (quick mode computes no exact decision)"
    else:
        source = (f"computed on the store `{Path(run.store).name}` in the report folder, seeded from the "
                  f"committed `{stored}` ({run.reused} reused, {run.computed} computed)")
    summary = run.outcome
    trained = {r["d"]: r for r in data_rows if r["model"] == "op" and r["preset"] == "default"}
    exact, rows, timing, trows = {}, [], {}, []
    for d in ds:
        e = summary.get(d)
        if e is None:
            continue
        timing[str(d)] = {"instances": e.instances, "p": e.p_values,
                          "feasible": sum(c[1] for c in e.counts) if e.threshold_fit else None,
                          "infeasible": None, "undecided": e.undecided,
                          "cpu_seconds_mean": e.cpu_seconds_per_instance, "cpu_seconds_median": e.cpu_seconds_median,
                          "cpu_seconds_max": e.cpu_seconds_max, "seconds_mean": e.seconds_per_instance,
                          "solvers": e.solvers, "threshold_fit": e.threshold_fit}
        tm = timing[str(d)]
        recs = [r["result"] for r in run.results[d] if r is not None and r["status"] == "ok"]
        tm["feasible"] = sum(r["success"] is True for r in recs)
        tm["infeasible"] = sum(r["success"] is False for r in recs)
        trows.append([d, ", ".join(map(str, tm["p"])) if len(tm["p"]) <= 2 else f"{tm['p'][0]}-{tm['p'][-1]}",
                      tm["instances"], f"{tm['feasible']} / {tm['infeasible']} / {tm['undecided']}",
                      f"{1e3 * tm['cpu_seconds_median']:.0f}", f"{1e3 * tm['cpu_seconds_mean']:.0f}",
                      f"{1e3 * tm['cpu_seconds_max']:.0f}", f"{1e3 * tm['seconds_mean']:.0f}",
                      ", ".join(f"{k}: {v}" for k, v in tm["solvers"].items())])
        if d not in PLAN:
            continue
        tr = trained.get(d)
        tr_src = "main sweep (default preset, lr 0.1)" if tr else None
        if tr is None:       # d >= 100: the stored adaptive d = 100/150 thresholds (Adam lr 0.01)
            from validation.studies.linear_memory_d150 import LR, group_key

            st = d150.outcome.rows.get(group_key("op", None, d, LR))
            if st is not None:
                tr = {"threshold": st.threshold, "ci_low": st.ci_low, "ci_high": st.ci_high}
                tr_src = (f"stored d = 100/150 sweep (Adam lr {st.lr:g}, {st.steps_budget} steps, "
                          f"{st.trials} adaptive trials)")
        und = e.undecided
        sec, cpu = e.seconds_per_instance, e.cpu_seconds_per_instance
        exact[str(d)] = {"threshold": e.threshold, "ci": [e.ci_low, e.ci_high],
                         "theory": e.theory, "theory_stderr": e.theory_stderr,
                         "trained_threshold": tr["threshold"] if tr else None,
                         "trained_ci": [tr["ci_low"], tr["ci_high"]] if tr else None,
                         "trained_source": tr_src,
                         "seconds_per_instance": sec, "cpu_seconds_per_instance": cpu,
                         "p_at_threshold": e.p_at_threshold,
                         "counts": e.counts, "instances": e.instances, "undecided": und,
                         "missing": e.missing,
                         "max_infeasible_eps": e.max_infeasible_eps,
                         "min_feasible_margin": e.min_feasible_margin,
                         "max_active": e.max_active,
                         "cpu_seconds_median": e.cpu_seconds_median,
                         "cpu_seconds_max": e.cpu_seconds_max,
                         "solvers": e.solvers}
        e = exact[str(d)]
        e["verdict"] = exact_verdict(e)
        rows.append([d, _f(e["threshold"]), f"[{_f(e['ci'][0])}, {_f(e['ci'][1])}]",
                     f"{_f(e['theory'])} ± {e['theory_stderr']:.1g}", e["verdict"],
                     (_f(e["trained_threshold"]) + ("*" if d not in trained else "")) if tr else "-",
                     f"[{_f(tr['ci_low'])}, {_f(tr['ci_high'])}]" if tr else "-",
                     f"{e['instances']}" + (f" ({und} undecided)" if und else "")])
    missing = {d: summary[d].missing for d in ds if d in summary}
    md = ["\n### Exact capacity: does a memory exist?\n"]
    if exact:
        agree = [int(d) for d, e in exact.items() if e["verdict"] == "agrees"]
        above = [int(d) for d, e in exact.items() if e["ci"][0] > e["theory"]]
        md.append("<!-- main -->\nThe load up to which *some* full-rank memory recalls all facts "
                  f"(exact decision, d = {min(map(int, exact))}-{max(map(int, exact))}) agrees with "
                  f"the finite-p replica capacity alpha_c_finite(p) at d = "
                  + (", ".join(map(str, agree)) or "none")
                  + (f"; at d = {', '.join(map(str, above))} its 95% CI lies above the prediction "
                     f"(verdict column), by {min(exact[str(d)]['threshold'] - exact[str(d)]['theory'] for d in above):.3f}"
                     f"-{max(exact[str(d)]['threshold'] - exact[str(d)]['theory'] for d in above):.3f} in load"
                     if above else "")
                  + ". The replica-symmetric value is thus a slight underestimate of the existence "
                    "threshold at these sizes rather than an upper bound that training fails to reach.\n"
                  if above else
                  "<!-- main -->\nThe load up to which *some* full-rank memory recalls all facts "
                  f"agrees with alpha_c_finite(p) at d = {', '.join(map(str, agree)) or 'none'}.\n")
    md += ["<!-- details -->\nFor each instance (the same OP facts as the trained trial of equal d, load and seed), "
          "`validation.linear_memory.exact` decides whether *any* full-rank W recalls all p facts "
          "(strict argmax; solver: augmented Lagrangian in W space with semismooth Newton-CG, "
          "warm-started Lawson-Hanson NNLS as fallback), with a certificate checked independently "
          "of the solver: a W whose "
          "p(p-1) score gaps are recomputed and all positive, or non-negative weights on pairs "
          "with sum_k lambda_k (c_mu - u_rho) e_mu^T = 0 up to a cosine bound <= 1e-9 "
          "(docs/linear_memory.md#exact-capacity). Threshold: the same logistic fit and 95% "
          f"profile-likelihood CI as the trained thresholds. Decisions {source}.\n"]
    if rows:
        md.append(md_table(["d", "alpha_exact", "95% CI", "theory (finite-p RS)", "verdict", "alpha_trained",
                            "trained CI", "instances"], rows))
    if any(str(d) in exact and d not in trained and exact[str(d)]["trained_threshold"] is not None for d in ds):
        md.append("\n\\* trained threshold from the stored d = 100/150 sweep "
                  f"(`{_STORED}/linear_memory.d150.jsonl`, Adam lr 0.01, adaptive design; "
                  "docs/linear_memory.md#thresholds-at-d--100-and-150); the other trained thresholds come "
                  "from this section's capacity sweep.\n")
    if trows:
        md.append("\nCost of one exact decision (one core; CPU ms of the process, wall ms inflated by the "
                  "other jobs on the machine; solver that decided: `alm` = augmented Lagrangian, `alm+lh` = "
                  "Lawson-Hanson fallback, `lh` = earlier solver)."
                  + (" Rows without a threshold above are timing-only instances "
                     "(`validation.studies.linear_memory_exact.TIMING`)." if TIMING else "") + "\n")
        md.append(md_table(["d", "p", "instances", "feasible / infeasible / undecided", "CPU ms median",
                            "CPU ms mean", "CPU ms max", "wall ms mean", "solver"], trows))
    miss = {d: m for d, m in missing.items() if m}
    if miss:
        md.append("\nPlanned instances not in the store (not used): "
                  + ", ".join(f"d={d}: {m}" for d, m in miss.items()) + ".\n")
    dp_rows, fs_md = _exact_dp(ctx, cfg, exact)
    md += fs_md
    md += _exact_adaptive(ctx, exact)
    figs = []
    if rows:
        figs.append(_exact_figure(ctx, exact, timing))
        md.append(f"\n![Exact, trained and predicted thresholds against d]({figs[0]})\n")
    meta = {"store": stored, "quick_reads_store": bool(ctx.quick),
            "plan": {str(d): {"rel_loads": [float(x) for x in PLAN[d][0]], "seeds": PLAN[d][1]} for d in sorted(PLAN)},
            "timing_plan": {str(d): {"rel_loads": [float(x) for x in TIMING[d][0]], "seeds": TIMING[d][1]}
                            for d in sorted(TIMING)},
            "timing": timing,
            "seconds": time.perf_counter() - t0}
    return exact, meta, md, figs


def _exact_dp(ctx, cfg, exact):
    """DP exact thresholds and the finite-size law (OP against DP, excess fits) into ``exact``.

    Adds ``exact["dp"]`` (``d`` -> threshold row, as the OP rows) and
    ``exact["finite_size"]`` (``op_vs_dp``, ``excess_fits``, ``best_vanishing_law``); returns
    the DP table rows and the markdown.  The fits are
    :mod:`validation.linear_memory.finite_size` on the stored decisions.
    """
    from validation.linear_memory.finite_size import compare_models, excess_fits
    from validation.sections.claims import exact_verdict
    from validation.studies import get_study

    study = get_study("linear_memory.exact_dp")
    run = study.run(compute=not ctx.quick, store=None if ctx.quick else ctx.out / "linear_memory_exact_dp.jsonl",
                    executor=ctx.executor, workers=cfg["workers"], missing="skip")
    dp = {}
    for d, e in sorted(run.outcome.items()):
        if not e.threshold_fit or not math.isfinite(e.threshold):
            continue
        row = {"threshold": e.threshold, "ci": [e.ci_low, e.ci_high], "theory": e.theory,
               "theory_stderr": e.theory_stderr, "p_at_threshold": e.p_at_threshold, "counts": e.counts,
               "instances": e.instances, "undecided": e.undecided, "missing": e.missing,
               "cpu_seconds_per_instance": e.cpu_seconds_per_instance, "solvers": e.solvers}
        row["verdict"] = exact_verdict(row)
        dp[str(d)] = row
    op_rows = [{"d": int(d), **e} for d, e in exact.items() if d.isdigit()]
    dp_rows = [{"d": int(d), **e} for d, e in dp.items()]
    comp = compare_models(op_rows, dp_rows)
    fits = {}
    for name, rr in (("op", op_rows), ("dp", dp_rows)):
        try:
            fits[name] = [f.to_dict() for f in excess_fits(rr)]
        except ValueError:                     # fewer than two thresholds
            fits[name] = []
    vanish = {name: [f for f in fl if not f["offset"]] for name, fl in fits.items()}
    best = {name: max(fl, key=lambda f: f["p_value"]) if fl else None for name, fl in vanish.items()}
    exact["dp"] = dp
    exact["finite_size"] = {"op_vs_dp": [c.to_dict() for c in comp], "excess_fits": fits,
                            "best_vanishing_law": best}
    md = []
    if not dp:
        return [], md
    same = [c.d for c in comp if c.verdict == "agrees"]
    differ = [c for c in comp if c.verdict != "agrees"]
    dp_agree = [int(d) for d, e in dp.items() if e["verdict"] == "agrees"]
    md.append("\n#### OP against DP and the finite-size law\n")
    md.append("<!-- main -->\nDP memories (one candidate set per fact, the problem the finite-p replica "
              "calculation describes) were decided exactly at d = " + ", ".join(dp) + " with the same "
              "relative loads as OP. The DP existence threshold agrees with alpha_c_finite(p) at d = "
              + (", ".join(map(str, dp_agree)) or "none") + "; OP and DP agree at d = "
              + (", ".join(map(str, same)) or "none")
              + ("; they differ at " + ", ".join(f"d = {c.d} (OP - DP = {c.difference:.3f} +- {c.stderr:.3f})"
                                                for c in differ) if differ else "") + ".\n")
    md.append(md_table(["d", "alpha_exact DP", "95% CI", "theory (finite-p RS)", "verdict", "OP - DP",
                        "+- s.e.", "OP vs DP"],
                       [[d, _f(e["threshold"]), f"[{_f(e['ci'][0])}, {_f(e['ci'][1])}]",
                         f"{_f(e['theory'])} ± {e['theory_stderr']:.1g}", e["verdict"],
                         next((f"{c.difference:.3f}" for c in comp if c.d == int(d)), "-"),
                         next((f"{c.stderr:.3f}" for c in comp if c.d == int(d)), "-"),
                         next((c.verdict for c in comp if c.d == int(d)), "-")] for d, e in dp.items()]))
    frows = [[name.upper(), f["form"], "B + A x" if f["offset"] else "A x", f"{f['amplitude']:.3f}",
              f"{f['amplitude_stderr']:.3f}", f"{f['constant']:.4f}" if f["offset"] else "-",
              f"{f['constant_stderr']:.4f}" if f["offset"] else "-", f"{f['chi2']:.1f}", f["dof"],
              f"{f['p_value']:.3g}"] for name, fl in fits.items() for f in fl]
    if frows:
        md.append("<!-- details -->\nRelative excess r = alpha_exact / alpha_c_finite - 1 against d, weighted "
                  "least squares with the errors taken as known (docs/linear_memory.md#finite-size-law-op-against-dp); "
                  "a small p-value rejects the law.\n")
        md.append(md_table(["model", "x(d)", "law", "A", "s.e.", "B", "s.e.", "chi2", "dof", "p-value"], frows))
    return dp, md


def _exact_adaptive(ctx, exact):
    """The adaptive exact thresholds (study ``linear_memory.exact_adaptive``) into ``exact["adaptive"]``.

    ``exact["adaptive"]`` is ``{"op": {d: row}, "dp": {d: row}, "op_vs_dp": {d: difference}}``;
    each row sits beside the grid threshold of the same model and ``d`` where there is one
    (``grid_difference``).  A difference carries the standard error read off the two 95%
    intervals (half-width / 1.96 each) and its verdict: "agrees" when it is within 1.96
    standard errors of 0.
    """
    def diff(a, b, hw_a, hw_b):
        se = math.hypot(hw_a, hw_b) / 1.96
        z = (a - b) / se
        return {"difference": a - b, "stderr": se, "z": z, "verdict": "agrees" if abs(z) <= 1.96 else "differs"}

    run = _study(ctx, "linear_memory.exact_adaptive", "linear_memory_exact_adaptive.jsonl")
    out = {"op": {}, "dp": {}, "op_vs_dp": {}}
    for (model, d), r in sorted(run.outcome.items()):
        row = {"threshold": r.threshold, "ci": [r.ci_low, r.ci_high], "halfwidth": r.halfwidth,
               "theory": r.theory, "trials": r.trials, "verified": r.verified, "stop": r.stop,
               "wall_seconds": r.wall_seconds, "cpu_seconds": r.cpu_seconds}
        grid = exact.get(str(d)) if model == "op" else (exact.get("dp") or {}).get(str(d))
        if grid is not None and math.isfinite(grid["threshold"]):
            row["grid_difference"] = diff(r.threshold, grid["threshold"], r.halfwidth,
                                          (grid["ci"][1] - grid["ci"][0]) / 2)
        out[model][str(d)] = row
    for d, o in out["op"].items():
        q = out["dp"].get(d)
        if q is not None:
            out["op_vs_dp"][d] = diff(o["threshold"], q["threshold"], o["halfwidth"], q["halfwidth"])
    exact["adaptive"] = out
    md = []
    for model in ("op", "dp"):
        for d, r in out[model].items():
            g = r.get("grid_difference")
            md.append(f"<!-- details -->\nAdaptive exact {model.upper()} threshold (study "
                      f"`linear_memory.exact_adaptive`, docs/linear_memory.md#exact-capacity), d = {d}: "
                      f"{_f(r['threshold'])} [{_f(r['ci'][0])}, {_f(r['ci'][1])}] (half-width "
                      f"{r['halfwidth']:.4f}) from {r['trials']} certified decisions in "
                      f"{r['wall_seconds'] / 60:.1f} min wall"
                      + (f"; the grid threshold {g['verdict']} with it (difference {g['difference']:+.4f} "
                         f"+- {g['stderr']:.4f})" if g else "") + ".\n")
    for d, c in out["op_vs_dp"].items():
        md.append(f"<!-- details -->\nAdaptive OP - DP at d = {d}: {c['difference']:+.4f} +- {c['stderr']:.4f} "
                  f"({c['verdict']}).\n")
    return md


def _exact_figure(ctx, exact, timing):
    import matplotlib.pyplot as plt

    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4.8))
    ds = sorted(int(k) for k in exact if k.isdigit())
    th = {d: exact[str(d)]["theory"] for d in ds}
    for off, key, ci, lab, fmt, col in ((-0.6, "threshold", "ci", "exact OP: a memory exists", "o", "C0"),
                                        (0.6, "trained_threshold", "trained_ci", "trained (Adam: default preset; d >= 100 lr 0.01)",
                                         "s", "C1")):
        sel = [d for d in ds if exact[str(d)][key] is not None and math.isfinite(exact[str(d)][key])]
        if not sel:
            continue
        rr = [exact[str(d)] for d in sel]
        y = np.array([r[key] for r in rr])
        lo = [r[key] - r[ci][0] if math.isfinite(r[ci][0]) else 0 for r in rr]
        hi = [r[ci][1] - r[key] if math.isfinite(r[ci][1]) else 0 for r in rr]
        xs = [d + off for d in sel]
        a1.errorbar(xs, y, yerr=[lo, hi], fmt=fmt, color=col, capsize=3, label=lab)
        a2.errorbar(xs, y - np.array([th[d] for d in sel]), yerr=[lo, hi], fmt=fmt, color=col, capsize=3,
                    label=lab)
    dp = exact.get("dp") or {}
    if dp:
        dd = sorted(int(k) for k in dp)
        y = np.array([dp[str(d)]["threshold"] for d in dd])
        err = [[dp[str(d)]["threshold"] - dp[str(d)]["ci"][0] for d in dd],
               [dp[str(d)]["ci"][1] - dp[str(d)]["threshold"] for d in dd]]
        a1.errorbar([d + 1.2 for d in dd], y, yerr=err, fmt="D", color="C2", capsize=3,
                    label="exact DP: a memory exists")
        a2.errorbar([d + 1.2 for d in dd], y - np.array([dp[str(d)]["theory"] for d in dd]), yerr=err,
                    fmt="D", color="C2", capsize=3, label="exact DP")
    a1.plot(ds, [th[d] for d in ds], "k^--", zorder=THEORY_ZORDER,
            label=r"finite-$p$ RS: $\alpha_c(p)$, self-consistent")
    a1.set_xlabel(r"dimension $d$")
    a1.set_ylabel(r"threshold load $p\ln p/d^2$")
    a1.set_title("full rank OP and DP (large-d limit: 1/2)")
    legend_outside(a1, below=True)
    a2.axhline(0, color="k", ls="--", lw=1, zorder=THEORY_ZORDER, label=r"finite-$p$ RS prediction")
    a2.set_xlabel(r"dimension $d$")
    a2.set_ylabel(r"threshold $-$ finite-$p$ RS prediction")
    a2.set_title("difference from theory, 95% CIs")
    legend_outside(a2, below=True)
    ts = sorted(int(k) for k in timing)
    a3.plot(ts, [timing[str(d)]["cpu_seconds_mean"] for d in ts], "o-", color="C0", label="mean")
    a3.plot(ts, [timing[str(d)]["cpu_seconds_median"] for d in ts], "s--", color="C2", label="median")
    a3.plot(ts, [timing[str(d)]["cpu_seconds_max"] for d in ts], "v:", color="C3", label="slowest instance")
    ds = ts
    a3.set_xscale("log")
    a3.set_yscale("log")
    a3.minorticks_off()
    a3.set_xticks(ds)
    a3.set_xticklabels([str(d) for d in ds])
    a3.set_xlabel(r"dimension $d$")
    a3.set_ylabel("CPU seconds per instance (one core)")
    a3.set_title("cost of one exact decision")
    legend_outside(a3, below=True)
    fig.tight_layout()
    return ctx.savefig(fig, "linear_memory_exact.png")


def _f(x, spec=".3f"):
    if x is None:
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return format(x, spec)


def _capacity_figure(ctx, rows, lr_theory=None):
    import matplotlib.pyplot as plt

    lr_theory = lr_theory or {}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.4))
    colors = {"op": "C0", "dp": "C1", "lowrank": "C2", "hebbian": "C3"}
    for m in ("op", "dp"):
        rr = [r for r in rows if r["model"] == m and r["preset"] == "default" and r["p_at_threshold"]]
        if rr:
            x = [1 / math.log(r["p_at_threshold"]) for r in rr]
            y = [r["threshold"] - 0.5 for r in rr]
            lo = [r["threshold"] - r["ci_low"] if math.isfinite(r["ci_low"]) else 0 for r in rr]
            hi = [r["ci_high"] - r["threshold"] if math.isfinite(r["ci_high"]) else 0 for r in rr]
            a1.errorbar(x, y, yerr=[lo, hi], fmt="o", color=colors[m], capsize=3, label=f"{m.upper()} (trained)")
    rr = [r for r in rows if r["model"] == "op" and r["preset"] == "default" and r["theory"] is not None
          and math.isfinite(r["theory"])]
    if rr:
        from replica.load import p_from_load

        x = [1 / math.log(p_from_load(r["theory"], r["d"])) for r in rr]
        a1.plot(x, [r["theory"] - 0.5 for r in rr], "k^--", zorder=THEORY_ZORDER,
                label=r"theory $\alpha_c(p)$ (finite $p$)")
    a1.axhline(0, color="gray", lw=0.8)
    a1.set_xlabel(r"$1/\ln p$ ($p$ at the threshold)")
    a1.set_ylabel(r"$\alpha - 1/2$")
    legend_outside(a1)
    a1.set_title("full rank: finite-size excess over 1/2")
    for r in rows:
        if r["preset"] != "default" or r["threshold"] is None or not math.isfinite(r["threshold"]):
            continue
        m, k = r["model"], r["kappa"]
        mk = {None: "o", 0.5: "s", 0.25: "D"}.get(k, "o")
        a2.plot(r["d"], r["threshold"], mk, color=colors[m])
        th = lr_theory.get((k, r["d"]), (r["theory"],))[0] if m == "lowrank" else r["theory"]
        if th is not None and math.isfinite(th):
            a2.plot(r["d"], th, "_", ms=14, mew=2, color=colors[m], zorder=3)
    for m, lab in colors.items():
        a2.plot([], [], "o", color=lab, label={"op": "OP", "dp": "DP", "lowrank": "low rank",
                                               "hebbian": "Hebbian"}[m])
    a2.plot([], [], "k_", ms=14, mew=2, label=r"theory at this $d$ (same colour)")
    a2.axhline(0.5, color="gray", lw=0.8, ls=":")
    a2.set_xlabel(r"dimension $d$")
    a2.set_ylabel(r"threshold load $\alpha = p\ln p/d^2$")
    a2.set_yscale("log")
    legend_outside(a2)
    a2.set_title(r"trained (square $\kappa=0.5$, diamond $\kappa=0.25$)")
    fig.tight_layout()
    return ctx.savefig(fig, "linear_memory_capacity.png")


def _mechanism(ctx, m):
    """Scores and spectra at the largest recalled load of the OP / low-rank groups (rendered from
    :class:`validation.studies.linear_memory_capacity.Mechanism`)."""
    import matplotlib.pyplot as plt
    from validation.linear_memory.mechanism import hcizz_law

    d = m.d
    out, md, figs = {}, ["\n### Mechanism: normalised scores\n"], []
    if m.scores is not None:
        sc = m.scores
        st, sh = sc["trained"], sc["hebbian"]
        out["scores"] = sc
        (c_t, q_t), (c_h, q_h) = m.score_arrays["trained"], m.score_arrays["hebbian"]
        p, load = sc["p"], sc["load"]
        fig, axs = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
        for ax, (c, q, lab) in zip(axs, ((c_t, q_t, "trained (default preset)"), (c_h, q_h, "Hebbian"))):
            bins = np.linspace(min(q.min(), c.min()) - 0.2, max(q.max(), c.max()) + 0.2, 80)
            ax.hist(q.ravel(), bins=bins, density=True, alpha=0.5, label="competitors")
            ax.hist(c, bins=bins, density=True, alpha=0.6, label="correct")
            ax.axvline(st["sqrt_2lnp"], color="k", ls="--", label=r"$\sqrt{2\ln p}$")
            ax.set_title(rf"{lab}: $d={d}$, $p={p}$, $\alpha={load:.3f}$")
            ax.set_xlabel("score / competitor std")
        axs[0].set_ylabel("density")
        legend_outside(axs[1])
        fig.tight_layout()
        figs.append(ctx.savefig(fig, "linear_memory_scores.png"))
        md.append(f"OP facts at d = {d}, the largest load recalled in the sweep (alpha = {load:.3f}, "
                  f"p = {p}); Hebbian memory of the same facts. Trained correct scores (competitor-std "
                  f"units): variance {st['correct_var']:.3f}, mean {st['correct_mean']:.3f} against a mean "
                  f"largest competitor of {st['row_max_competitor_mean']:.3f} and sqrt(2 ln p) = "
                  f"{st['sqrt_2lnp']:.3f} (the large-p extreme level); Hebbian ones: variance "
                  f"{sh['correct_var']:.3f}. Their finite-p level is predicted by the V_p minimiser "
                  "(subsection below).\n")
        md.append(md_table(["memory", "correct mean", "correct var", "sqrt(2 ln p)",
                            "mean row-max competitor", "min correct", "max competitor",
                            "competitor var", "recall"],
                           [[n, s["correct_mean"], s["correct_var"], s["sqrt_2lnp"],
                             s["row_max_competitor_mean"], s["correct_min"],
                             s["competitor_max"], s["competitor_var"], s["recall"]]
                            for n, s in (("trained", st), ("Hebbian", sh))],
                           {i: ".3f" for i in range(1, 9)}))
        md.append("![Normalised scores: trained vs Hebbian](linear_memory_scores.png)\n")
    md.append("\n### Spectra of trained memories\n")
    spec_rows = m.spectra_table
    fig, axs = plt.subplots(1, 3, figsize=(13, 3.6))
    if m.spectrum_full is not None:
        sq = m.spectrum_full
        out["spectrum_full"] = {k: v for k, v in sq.to_dict().items() if k != "sv"}
        _overlay(axs[0], sq["sv"], hcizz_law("quarter_circle"), "full rank, trained",
                 "quarter-circle law")
    if m.spectrum_lowrank is not None:
        sq, k_eff = m.spectrum_lowrank, m.lowrank_m / d
        out["spectrum_lowrank"] = {k: v for k, v in sq.to_dict().items() if k != "sv"}
        _overlay(axs[1], sq["sv"], hcizz_law("truncated_quarter_circle", k_eff),
                 rf"rank $\kappa={k_eff:.2f}$, trained", "truncated quarter circle")
        si = m.spectrum_init
        out["spectrum_init"] = {k: v for k, v in si.to_dict().items() if k != "sq"}
        _overlay(axs[2], si["sq"], hcizz_law("mp_product", k_eff), rf"rank $\kappa={k_eff:.2f}$, at init",
                 "product Marchenko-Pastur law", xlabel=r"squared singular value $s^2$")
    for ax in list(axs)[:3]:
        if not ax.has_data():
            ax.set_visible(False)        # no empty panels
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "linear_memory_spectra.png"))
    if spec_rows:
        md.append("Only the scale is fitted (second-moment match) for trained memories; nothing at "
                  "initialisation. KS = Kolmogorov-Smirnov distance (singular values are not independent "
                  f"samples, so no p-value); d = {d} gives only {d} or fewer values.\n")
        md.append(md_table(["spectrum", "load", "law", "KS", "n"],
                           [[a, _f(b) if b is not None else "", c, _f(k) if k is not None else "nan", n]
                            for a, b, c, k, n in spec_rows]))
        md.append("![Singular values vs laws](linear_memory_spectra.png)\n")
    out["spectra_table"] = spec_rows
    return out, md, figs


def _overlay(ax, values, law, title, law_label="law", xlabel="singular value / fitted scale"):
    ax.hist(values, bins=max(8, int(math.sqrt(len(values)) * 2)), density=True, alpha=0.6,
            label="measured")
    if law is not None:
        lo, hi = law.support()
        lo = max(lo, 1e-9)
        hi = hi if math.isfinite(hi) else max(values) * 1.2
        xs = np.linspace(lo, hi, 400)
        ax.plot(xs, law.pdf(xs), "k-", zorder=THEORY_ZORDER, label=law_label)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    legend_outside(ax, below=True)



# ---------------------------------------------------------------------------
# Finite-p low-rank capacity, the V_p score/margin prediction, the spectra study, the paper's size
# and the adaptive design (keys `lowrank_finite_p`, `margin_prediction`, `spectra_study`, `d150`,
# `adaptive_design`): studies with committed stores.


def _finite_p_blocks(ctx, d150):
    """Markdown, data and figures of the appended subsections."""
    md, data, figs = [], {}, []
    a, b, c = _lowrank_finite_p(ctx)
    md += a
    data["lowrank_finite_p"] = b
    figs += c
    a, b, c = _margin_prediction(ctx)
    md += a
    data["margin_prediction"] = b
    figs += c
    a, b, c = _spectra_study(ctx)
    md += a
    data["spectra_study"] = b
    figs += c
    a, b, c = _d150(ctx, d150)
    md += a
    data["d150"] = b
    figs += c
    a, b = _adaptive_design(ctx)
    md += a
    data["adaptive_design"] = b
    return md, data, figs


def _d150(ctx, main):
    """The paper's size: the d = 100/150 thresholds of the study ``linear_memory.d150`` (read from
    its committed store in quick mode, which computes nothing) and the long-budget reruns of
    ``linear_memory.d150_budget``."""
    import matplotlib.pyplot as plt
    from replica import alpha_c
    from validation.studies.linear_memory_d150 import LR, PAPER, long_budget

    ctx.progress("linear_memory: d = 100/150 thresholds (studies linear_memory.d150, linear_memory.d150_budget)")
    summ = main.outcome
    rows = {k: r.to_dict() for k, r in summ.rows.items()}
    budgets = {k: [b.to_dict() for b in bl] for k, bl in summ.budget.items()}
    src = f"{_STORED}/linear_memory.d150.jsonl"
    how = ("read from the committed store" if ctx.quick else
           f"run on the store `{Path(main.store).name}` in the report folder, seeded from the committed one "
           f"({main.reused} reused, {main.computed} computed)")
    md = ["\n### The paper's size: d = 100 and d = 150\n",
          "Thresholds of full-rank (OP) and rank-constrained memories at d = 100 and 150, measured by the "
          "adaptive design (`measure_capacity(design=\"adaptive\")`: rounds of 4 loads chosen from the "
          "current logistic fit until the 95% CI half-width is <= 0.03 or a trial cap; default preset "
          f"but Adam lr {LR:g} (see the learning-rate check below), float32, stop at the first full "
          "recall, 4096 steps). "
          f"Trials {how} (committed: `{src}`); regenerate or continue with `nice -n 10 python -m "
          "validation study linear_memory.d150 --workers 2`. Theory: the finite-p capacity "
          "`alpha_c_finite(p, kappa=m/d)` with p "
          "self-consistent at d; paper: the linear-memory paper's d = 150 table (arXiv:2605.10795).\n"]
    table = []
    checks = {k: r for k, r in rows.items() if not r["measured"]}
    rows = {k: r for k, r in rows.items() if r["measured"]}
    for k, r in rows.items():
        name = "OP" if r["model"] == "op" else f"k={r['kappa']:g}"
        table.append([name, r["d"], f"{r['lr']:g}", _f(r["threshold"]), f"[{_f(r['ci'][0])}, {_f(r['ci'][1])}]",
                      f"{r['theory_finite_p']:.3f} ± {r['theory_stderr']:.1g}",
                      _f(r["paper"], ".2f") if r["paper"] is not None else "-",
                      r["trials"], f"{r['cpu_seconds'] / 60:.0f}", "yes" if r["done"] else "**no** (partial)"])
    if table:
        md.append(md_table(["model", "d", "Adam lr", "alpha_emp", "95% CI", "finite-p theory", "paper", "trials",
                            "CPU min", "complete"], table))
    missing = summ.missing
    if missing:
        md.append("\nNot yet in the store (not measured): " + ", ".join(missing) + ".\n")
    lrc = summ.lr_check
    if lrc:
        by_load = {}
        for r in lrc:
            by_load.setdefault(r["load"], {})[r["lr"]] = r["accuracy"]
        both = {a: v for a, v in by_load.items() if 0.1 in v and LR in v}
        worse = sum(v[0.1] < v[LR] for v in both.values())
        md.append("\nLearning-rate check (d = 100, OP, the first round's four instances, identical for every "
                  f"learning rate; 4096 steps): the default preset's lr 0.1 recalls a smaller fraction of the "
                  f"facts than lr {LR:g} at {worse} of the {len(both)} loads both were run at, so the plan uses lr "
                  f"{LR:g}:\n")
        md.append(md_table(["load", "seed", "Adam lr", "success", "recalled fraction", "steps", "final loss"],
                           [[f"{r['load']:.4f}", r["seed"], f"{r['lr']:g}", "yes" if r["success"] else "no",
                             f"{r['accuracy']:.3f}", r["steps"], f"{r['loss']:.3f}"] for r in lrc]))
    long_run = _study(ctx, "linear_memory.d150_budget", "d150_budget_trials.jsonl")
    long = long_budget(long_run.outcome, main.results)
    lb = long.rows
    if lb:
        md.append("\nLonger budget (stored 4096-step failures near the threshold rerun with "
                  f"{lb[0]['steps_budget']} steps; study `linear_memory.d150_budget`, store "
                  f"`{_STORED}/linear_memory.d150_budget.jsonl`):\n")
        md.append(md_table(["load", "seed", "Adam lr", "recalled at 4096 steps", "budget", "success",
                            "steps", "recalled"],
                           [[f"{r['load']:.4f}", r["seed"], f"{r['lr']:g}", _f(r["accuracy_4096"]),
                             r["steps_budget"], "yes" if r["success"] else "no", r["steps"],
                             f"{r['accuracy']:.3f}"] for r in lb]))
        sub = {k: f.to_dict() for k, f in long.refit.items()}
        for k, f in sub.items():
            md.append(f"\n{k} with these reruns' outcomes in place of their 4096-step ones: threshold "
                      f"{_f(f['threshold'])} [{_f(f['ci'][0])}, {_f(f['ci'][1])}] (the 4096-step fit above "
                      "is a lower estimate where a rerun succeeds).\n")
        d150_long_refit = sub
    else:
        d150_long_refit = {}
    brows = []
    for k, bl in budgets.items():
        if k in checks:
            continue
        for b in bl:
            brows.append([k, b["budget"], _f(b["threshold"]), f"[{_f(b['ci'][0])}, {_f(b['ci'][1])}]",
                          f"{b['near_successes']}/{b['near_trials']}"])
    if brows:
        md.append("\nStep budget (from the same trials: with a constant learning rate a run with budget B "
                  "is the first B steps of the stored run, so success(B) = success and steps <= B):\n")
        md.append(md_table(["group", "budget B", "threshold(B)", "95% CI", "successes within +-3% of the "
                            "full-budget threshold"], brows))
    figs = []
    if rows:
        fig, ax = plt.subplots(figsize=(10.5, 4.6))
        cols = {None: "C0", 0.5: "C1", 0.25: "C2"}
        for k, r in rows.items():
            c = cols.get(r["kappa"], "C3")
            lab = "OP" if r["model"] == "op" else rf"$\kappa={r['kappa']:g}$"
            bounded = math.isfinite(r["ci"][0]) and math.isfinite(r["ci"][1])
            if bounded:
                ax.errorbar([r["d"] - 2], [r["threshold"]],
                            yerr=[[r["threshold"] - r["ci"][0]], [r["ci"][1] - r["threshold"]]],
                            fmt="o", color=c, capsize=3, label=f"{lab}: measured (95% CI)")
            ax.plot([r["d"] + 2], [r["theory_finite_p"]], "^", color=c, mfc="none", ms=8,
                    zorder=THEORY_ZORDER, label=rf"{lab}: finite-$p$ theory")
            if not bounded and r["max_success_load"] is not None:
                ax.plot([r["d"] - 2], [r["max_success_load"]], "v", color=c, ms=8,
                        label=f"{lab}: largest load recalled so far (no finite CI yet)")
        for kap, c in ((1.0, "C0"), (0.5, "C1"), (0.25, "C2")):
            ax.axhline(float(alpha_c(kap)), color=c, ls=":", lw=1)
            lab = "OP" if kap == 1.0 else rf"$\kappa={kap:g}$"
            ax.plot([156], [PAPER[kap]], "s", color=c, ms=7, label=f"{lab}: paper ($d$ = 150)")
        ax.text(0.01, 0.02, r"dotted: large-$d$ $\alpha_c(\kappa)$", transform=ax.transAxes)
        ax.set_xlim(85, 170)
        ax.set_xticks([100, 150])
        ax.set_xlabel(r"dimension $d$")
        ax.set_ylabel(r"threshold load $p\ln p/d^2$")
        ax.set_title(r"$d$ = 100 / 150: measured, finite-$p$ theory, paper")
        h, l = ax.get_legend_handles_labels()
        seen = {}
        for hh, ll in zip(h, l):
            seen.setdefault(ll, hh)
        ax.legend(seen.values(), seen.keys(), loc="center left", bbox_to_anchor=(1.01, 0.5))
        fig.tight_layout()
        figs.append(ctx.savefig(fig, "linear_memory_d150.png"))
        md.append(f"\n![d = 100/150 thresholds against the finite-p theory and the paper]({figs[0]})\n")
    data = {k: {kk: r[kk] for kk in ("model", "kappa", "d", "lr", "threshold", "ci", "theory_finite_p",
                                      "theory_stderr", "paper", "trials", "wall_seconds", "cpu_seconds",
                                      "steps_budget", "counts", "done", "failure_accuracy",
                                      "success_steps_max", "max_success_load")} for k, r in rows.items()}
    return md, {"rows": data, "budget": budgets, "lr_check": lrc, "long_budget": lb,
                "long_budget_refit": d150_long_refit, "store": src, "read_from_store": True,
                "missing": missing, "lr": LR,
                "lr_check_rows": {k: {kk: r[kk] for kk in ("threshold", "ci", "trials", "failure_accuracy")}
                                  for k, r in checks.items()}}, figs


def _adaptive_design(ctx):
    """Trials needed for a 0.03 CI half-width: fixed grid against adaptive design (study
    ``linear_memory.adaptive_design``; replayed from its committed store in quick mode)."""
    from validation.studies.linear_memory_adaptive import GRID_FACTORS, REPLICATES, TARGET

    ctx.progress("linear_memory: fixed grid vs adaptive design (study linear_memory.adaptive_design)")
    try:
        run = _study(ctx, "linear_memory.adaptive_design", "adaptive_design_trials.jsonl")
    except LookupError as exc:
        return ([f"\n### Adaptive design\n\nNot available: {exc}.\n"],
                {"error": str(exc)})
    rows = run.outcome
    table = [[d, r["replicates"], f"{r['trials_grid']:.1f} ± {r['trials_grid_stderr']:.1f}",
              f"{r['trials_adaptive']:.1f} ± {r['trials_adaptive_stderr']:.1f}", f"{r['trials_ratio']:.2f}",
              f"{r['cpu_seconds_grid']:.1f}", f"{r['cpu_seconds_adaptive']:.1f}",
              f"{r['reached_grid']}/{r['replicates']}, {r['reached_adaptive']}/{r['replicates']}"]
             for d, r in rows.items()]
    md = ["\n### Adaptive design: trials for a given CI\n",
          f"OP thresholds at small d measured to a 95% CI half-width <= {TARGET} by the report's fixed grid "
          f"({len(GRID_FACTORS)} loads, one more seed per load until the target is met) and by the adaptive "
          f"design, each replicate from the same seed pool; {REPLICATES} replicates (mean ± standard error). "
          + ("Replayed from" if ctx.quick else "Run on a copy of") + f" the committed store "
          f"`{_STORED}/linear_memory.adaptive_design.jsonl` (regenerate: `nice -n 10 python -m validation "
          "study linear_memory.adaptive_design`); the design and its simulated CI coverage: "
          "docs/sweeps.md#adaptive-threshold-design.\n",
          md_table(["d", "replicates", "trials grid", "trials adaptive", "ratio", "CPU s grid",
                    "CPU s adaptive", "target reached (grid, adaptive)"], table)]
    return md, rows


def _lowrank_finite_p(ctx):
    import matplotlib.pyplot as plt
    from validation.studies.linear_memory_lowrank import DS, KAPPAS, SEEDS, SHORT_BUDGET

    t0 = time.perf_counter()
    ds = (20, 30) if ctx.quick else DS
    ctx.progress("linear_memory: low-rank thresholds vs the finite-p rank-constrained capacity")
    run = _study(ctx, "linear_memory.lowrank_finite_p", "lowrank_finite_p_trials.jsonl", ds=ds)
    summ = run.outcome
    n, reused = run.trials, run.reused
    short = {(r.kappa, r.d): r for r in summ.short_budget}
    rows = [{**r.to_dict(), f"threshold_budget_{SHORT_BUDGET}": short[(r.kappa, r.d)].threshold} for r in summ.rows]
    table = [[f"{r['kappa']:g}", r["d"], f"{r['kappa_eff']:.3f}", _f(r["threshold"]),
              f"[{_f(r['ci'][0])}, {_f(r['ci'][1])}]", f"{r['theory']:.3f} ± {r['theory_stderr']:.1g}",
              _f(r["ratio"]), "yes" if r["theory_in_ci"] else "**no**", f"{r['alpha_c_kappa']:.3f}",
              _f(r[f"threshold_budget_{SHORT_BUDGET}"]), r["trials"]] for r in rows]
    n_in = summ.agree
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, k in enumerate(KAPPAS):
        rr = [r for r in rows if r["kappa"] == k and math.isfinite(r["threshold"])]
        if not rr:
            continue
        x = np.array([r["d"] for r in rr], float)
        y = np.array([r["threshold"] for r in rr])
        lo = np.array([r["threshold"] - r["ci"][0] if math.isfinite(r["ci"][0]) else 0 for r in rr])
        hi = np.array([r["ci"][1] - r["threshold"] if math.isfinite(r["ci"][1]) else 0 for r in rr])
        th = np.array([r["theory"] for r in rr])
        col = f"C{i}"
        a1.errorbar(x * (1 + 0.01 * (i - 1)), y, yerr=[lo, hi], fmt="o", color=col, capsize=3,
                    label=rf"trained, $\kappa={k:g}$")
        a1.plot(x, th, "-", color=col, zorder=THEORY_ZORDER,
                label=rf"$\alpha_c(\kappa)\,\ln p/E[V_p]$, $\kappa={k:g}$")
        a1.plot(x, [r["alpha_c_kappa"] for r in rr], ":", color=col, zorder=THEORY_ZORDER)
        a2.errorbar(x * (1 + 0.01 * (i - 1)), y / th, yerr=[lo / th, hi / th],
                    fmt="o-", color=col, capsize=3, label=rf"$\kappa={k:g}$")
    a1.plot([], [], "k:", label=r"$\alpha_c(\kappa)$ (large $p$)")
    for a in (a1, a2):
        a.set_xscale("log")
        a.set_xticks(list(ds), [str(d) for d in ds])
        a.minorticks_off()
        a.set_xlabel(r"dimension $d$")
    a1.set_ylabel(r"threshold load $\alpha = p\ln p/d^2$")
    a1.set_title(r"trained thresholds and finite-$p$ theory")
    a2.axhline(1.0, color="k", lw=0.8, zorder=THEORY_ZORDER)
    a2.set_ylabel(r"trained threshold / finite-$p$ theory")
    a2.set_title("ratio (95% CI scaled by the theory)")
    legend_outside(a1)
    legend_outside(a2)
    fig.tight_layout()
    figs = [ctx.savefig(fig, "linear_memory_lowrank_finite_p.png")]
    src = f"the committed store `{_STORED}/linear_memory.lowrank_finite_p.jsonl`"
    md = ["\n### Low rank against the finite-p rank-constrained capacity\n",
          "Theory: `alpha_c(kappa, p) = alpha_c(kappa) ln p / E[V_p]` "
          "(`replica.alpha_c_finite(p, kappa=m/d)`, docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories), "
          "solved self-consistently with `p ln p = alpha d^2` at each d; `m = round(kappa d)` and the theory uses "
          "the actual `m/d`. Trials: two-layer memory, default preset (4096 steps), "
          f"{SEEDS} seeds x 8 loads around the prediction (+ extension); logistic fit with 95% "
          f"profile-likelihood CI. Column `B={SHORT_BUDGET}`: the same trials counted as successes only if they "
          f"succeeded within {SHORT_BUDGET} steps (step-budget check).\n",
          md_table(["kappa", "d", "m/d", "alpha_emp", "95% CI", "alpha_c(kappa, p)", "emp/theory",
                    "theory in CI", "alpha_c(kappa)", f"B={SHORT_BUDGET}", "trials"], table),
          f"\nThe theory lies inside the CI for {n_in} of {len(rows)} (kappa, d) points; "
          f"trained/theory ranges from {_f(summ.ratio_min)} to {_f(summ.ratio_max)}"
          + (" (every point above 1)" if summ.ratio_min is not None and summ.ratio_min > 1 else "")
          + "; the CI excludes the theory at "
          + (", ".join(f"kappa={r['kappa']:g} d={r['d']} ({r['ratio']:.3f})" for r in rows if not r["theory_in_ci"])
             or "no point")
          + f". {n} trials, {reused} reused from "
          + (src if ctx.quick else f"`{Path(run.store).name}` (seeded from {src})")
          + f", {time.perf_counter() - t0:.0f} s for this subsection. Regenerate the store: "
            "`nice -n 10 python -m validation study linear_memory.lowrank_finite_p --workers 2`.\n",
          "\n![Low-rank thresholds vs alpha_c(kappa) ln p / E[V_p]](linear_memory_lowrank_finite_p.png)\n"]
    byk = {}
    for r in rows:
        byk.setdefault(f"{r['kappa']:g}", {})[str(r["d"])] = {"threshold": r["threshold"], "ci": r["ci"],
                                                             "theory": r["theory"]}
    data = {"rows": rows, "by_kappa": byk, "trials": n, "reused": reused,
            "store": f"{_STORED}/linear_memory.lowrank_finite_p.jsonl",
            "seconds": time.perf_counter() - t0}
    return md, data, figs


def _margin_prediction(ctx):
    import matplotlib.pyplot as plt

    t0 = time.perf_counter()
    ctx.progress("linear_memory: normalised scores at the finite-p capacity vs the V_p minimiser")
    run = _study(ctx, "linear_memory.margins", "margin_trials.jsonl", config="quick" if ctx.quick else "full")
    summ = run.outcome
    rows = summ.rows

    def _m(st):
        return f"{st['mean']:.3f} [{st['q10']:.3f}, {st['q90']:.3f}]"

    table, table_t = [], []
    for r in rows:
        t, q, ty = r["trained"], r["predicted"], r["typical"]
        table.append([r["d"], r["p"], f"{r['lr']:g}", f"{r['load']:.3f} ({r['load_fraction']:.2f})",
                      f"{r['memories']}/{r['trials']}",
                      f"{t['correct']['mean']:.3f} ± {t['correct']['mean_se']:.3f}",
                      f"{q['correct']['mean']:.3f} ± {q['correct']['mean_se']:.3f}",
                      f"{t['correct']['var']:.3f}", f"{q['correct']['var']:.3f}",
                      f"{t['row_max_mean']:.3f}", f"{q['row_max_mean']:.3f}",
                      f"{_m(t['margin'])}", f"0 (mass {q['frac_margin_zero']:.3f})", f"{q['k_active_mean']:.2f}",
                      f"{r['sqrt_2lnp']:.3f}"])
        table_t.append([r["d"], r["p"], f"{r['lr']:g}", f"{r['load_fraction']:.2f}",
                        "1 (at capacity: the V_p limit)" if ty is None else f"{ty['q_star']:.3f} ± {ty['q_stderr']:.3f}",
                        f"{t['correct']['mean']:.3f}", "-" if ty is None else f"{ty['correct']['mean']:.3f}",
                        f"{t['correct']['var']:.3f}", "-" if ty is None else f"{ty['correct']['var']:.3f}",
                        _m(t["margin"]), "-" if ty is None else _m(ty["margin"]),
                        f"{t['frac_margin_below_0.05']:.2f}",
                        "-" if ty is None else f"{ty['frac_margin_below_0.05']:.2f}"])
    gap_rows = []
    for r in rows:
        gap_rows.append([r["d"], r["p"], f"{r['lr']:g}", f"{r['load_fraction']:.2f}"]
                        + [f"{r['trained']['gap_profile'][j]:.3f} / {r['predicted']['gap_profile'][j]:.3f} / "
                           + ("-" if r["typical"] is None else f"{r['typical']['gap_profile'][j]:.3f}")
                           for j in (0, 2, 4, 9)])
    from validation.studies.linear_memory_margins import TREND_RATES

    trends, trend_rows = summ.trends, []
    for lr, lab in TREND_RATES:
        for w in ("excess", "margin", "excess_typical", "margin_typical"):
            for f in (1.0, 0.95, 0.90):
                t = trends[f"{w}@{f:g}@lr={lab.split(':')[0]}"]
                if len(t["d"]) >= 3:
                    trend_rows.append([w, lab, f"{f:.2f}", ", ".join(map(str, t["d"])),
                                       ", ".join(f"{y:.3f}±{e:.3f}" for y, e in zip(t["y"], t["se"])),
                                       f"{t['slope']:+.4f} ± {t['slope_se']:.4f}", f"{t['chi2']:.1f}/{t['dof']}"])
    lr_rows = []
    for q in summ.rate_pairs:
        a, b = q["lr_0.1"], q["lr_0.01"]
        lr_rows.append([q["d"], q["p"], f"{q['load_fraction']:.2f}", q["quantity"],
                        f"{a['mean']:.3f} ± {a['mean_se']:.3f} ({a['memories']}/{a['trials']})",
                        f"{b['mean']:.3f} ± {b['mean_se']:.3f} ({b['memories']}/{b['trials']})",
                        f"{q['z']:+.1f}"])
    fig, axs = plt.subplots(1, 3, figsize=(16, 5.4))
    # one protocol in the panels: 0.95 of capacity, Adam rate 0.01 where measured (else the row at 0.95);
    # three d (smallest, middle, largest) keep them readable; rate 0.1 twins dashed in the margin panel
    at95 = {}
    for r in rows:
        if abs(r["load_fraction"] - 0.95) <= 0.01 and (r["d"] not in at95 or r["lr"] == 0.01):
            at95[r["d"]] = r
    dsel = sorted(at95)
    dsel = sorted({dsel[0], dsel[len(dsel) // 2], dsel[-1]}) if dsel else []
    sel = [at95[d] for d in dsel]
    for i, r in enumerate(sel):
        col = f"C{i}"
        bins = np.linspace(1.0, 3.8, 57)
        lab = f"$d={r['d']}$, $p={r['p']}$, lr {r['lr']:g}"
        axs[0].hist(r["_corr"], bins=bins, density=True, histtype="stepfilled", alpha=0.25, color=col,
                    label=f"trained {lab}")
        axs[0].hist(r["_pred_corr"], bins=bins, density=True, histtype="step", lw=1.8, color=col,
                    label=rf"$V_p$ minimiser, $p={r['p']}$")
        if r["_typ_corr"] is not None:
            axs[0].hist(r["_typ_corr"], bins=bins, density=True, histtype="step", lw=1.4, ls=":", color=col,
                        label=rf"typical memory, $q^*={r['typical']['q_star']:.3f}$")
        j = np.arange(1, len(r["trained"]["gap_profile"]) + 1)
        axs[1].plot(j, r["trained"]["gap_profile"], "o", color=col, label=f"trained {lab}")
        axs[1].plot(j, r["predicted"]["gap_profile"], "-", color=col, zorder=THEORY_ZORDER,
                    label=rf"$V_p$ minimiser, $p={r['p']}$")
        if r["typical"] is not None:
            axs[1].plot(j, r["typical"]["gap_profile"], ":", color=col, lw=1.8, zorder=THEORY_ZORDER,
                        label=rf"typical memory, $q^*={r['typical']['q_star']:.3f}$")
        m = np.sort(r["_marg"])
        axs[2].plot(m, np.arange(1, m.size + 1) / m.size, "-", color=col, label=f"trained {lab}")
        if r["_typ_marg"] is not None:
            mt = np.sort(r["_typ_marg"])
            axs[2].plot(mt, np.arange(1, mt.size + 1) / mt.size, ":", color=col, lw=1.8, zorder=THEORY_ZORDER,
                        label=rf"typical memory, $q^*={r['typical']['q_star']:.3f}$")
        twin = [o for o in rows if o["d"] == r["d"] and o["p"] == r["p"] and o["lr"] != r["lr"]]
        if twin:
            mo = np.sort(twin[0]["_marg"])
            axs[2].plot(mo, np.arange(1, mo.size + 1) / mo.size, "--", color=col,
                        label=f"trained $d={r['d']}$, lr {twin[0]['lr']:g} (same instances)")
    axs[2].axvline(0.0, color="k", lw=1.5, zorder=THEORY_ZORDER, label=r"$V_p$ minimiser: atom at 0 (mass $1-1/p$)")
    axs[0].set_xlabel("correct score / competitor std")
    axs[0].set_ylabel("density")
    axs[0].set_title(r"correct scores at 0.95 $\times$ finite-$p$ capacity")
    axs[1].set_xlabel(r"$j$ (rank of competitor)")
    axs[1].set_ylabel(r"mean of correct $-$ $j$-th largest competitor (std units)")
    axs[1].set_title(r"gap profile: active competitors are tied in the $V_p$ limit")
    axs[2].set_xlabel("margin = correct - largest competitor (std units)")
    axs[2].set_ylabel("empirical CDF over facts")
    axs[2].set_title(r"margins: trained vs typical memory at $q^*$")
    axs[2].set_xlim(-0.01, 0.25)
    axs[0].set_xlim(1.0, 3.8)
    for ax in axs:
        legend_outside(ax, below=True, frameon=False)    # one column: two would run into the next panel
    fig.tight_layout()
    figs = [ctx.savefig(fig, "linear_memory_margin_prediction.png")]
    src = f"{_STORED}/linear_memory.margins.jsonl"
    big = summ.stored_only_d
    md = ["\n### Scores and margins at the finite-p capacity: the V_p minimiser\n",
          "Predictions (docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p): at capacity "
          "(`replica.pinned_scores.pinned_scores`) the correct score of a fact becomes the mean of "
          "its own unperturbed score and of its k* active (largest) competitors, which end tied with it, so the "
          "margin is 0 with probability 1 - 1/p; below capacity (`replica.pinned_scores.typical_scores` at the "
          "RS overlap q* = `replica.saddle(load, p).q`) a typical memory's scores are sqrt(q*) eta + "
          "sqrt(1 - q*) zeta with zeta conditioned on recall. Trained: OP memories (default preset; Adam rate "
          "0.1 below d = 100, where it fails near the capacity from d = 100 on, and 0.01 at every d, so both "
          "rates on the same instances at d = 40-100), stopped at first full recall, at 1, 0.95 and 0.90 of the self-consistent finite-p capacity load of each d; "
          "successful instances only; scores divided by each row's competitor std, for all. `±`: standard "
          "error (trained: spread of the per-memory means).\n"
          + (f"\nQuick mode: the d = {', '.join(map(str, big))} rows are read from the stored trials "
             f"(`{src}`), not recomputed.\n" if big else ""),
          md_table(["d", "p", "lr", "load (x capacity)", "recalled/trials", "correct mean (trained)",
                    "correct mean (V_p)", "var (trained)", "var (V_p)", "row-max (trained)", "row-max (V_p)",
                    "margin mean [q10, q90] (trained)", "margin (V_p)", "k* (V_p)", "sqrt(2 ln p)"], table),
          "\nBelow capacity: trained vs a typical memory at the RS overlap q*:\n",
          md_table(["d", "p", "lr", "load fraction", "q*", "correct mean (trained)", "correct mean (typical)",
                    "var (trained)", "var (typical)", "margin mean [q10, q90] (trained)",
                    "margin mean [q10, q90] (typical)", "margin < 0.05 (trained)", "margin < 0.05 (typical)"],
                   table_t),
          "\nGap profile (mean of correct minus the j-th largest competitor), trained / V_p minimiser / typical "
          "memory at q*:\n",
          md_table(["d", "p", "lr", "load fraction", "j = 1", "j = 3", "j = 5", "j = 10"], gap_rows),
          "\nTrend with d (weighted least squares y = a + b ln p over the rows at one load fraction and one Adam "
          "rate; excess = trained minus V_p-minimiser correct mean; *_typical = trained minus typical-memory "
          "prediction; slope ± its standard error, chi2/dof of the fit):\n",
          md_table(["quantity", "Adam rate", "load fraction", "d", "y ± se", "slope per unit ln p", "chi2/dof"],
                   trend_rows),
          ("\nAdam rate 0.1 vs 0.01 on the same instances (z = difference / combined standard error):\n"
           if lr_rows else ""),
          md_table(["d", "p", "load fraction", "quantity", "lr 0.1", "lr 0.01", "z"], lr_rows) if lr_rows else "",
          "\n" + _margin_reading(rows, summ.rate_pairs) + "\n",
          f"\n{run.trials} trials ({run.reused} reused from "
          + (f"`{src}`" if ctx.quick else f"`{Path(run.store).name}`, seeded from `{src}`")
          + f"), {time.perf_counter() - t0:.0f} s. Regenerate: "
          "`nice -n 10 python -m validation study linear_memory.margins --workers 2`.\n",
          "\n![Correct scores, gap profile and margins vs the V_p minimiser and the typical memory]"
          "(linear_memory_margin_prediction.png)\n"]
    data = {"rows": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
            "store": src, "trials": run.trials, "reused": run.reused,
            "trends": trends, "stored_only_d": big,
            "seconds": time.perf_counter() - t0}
    return md, data, figs


def _margin_reading(rows, pairs):
    """The reading of the margin block, every statement counted from the rows it cites."""
    if not rows:
        return ""
    dm = [r["trained"]["correct"]["mean"] - r["predicted"]["correct"]["mean"] for r in rows]
    vr = [r["trained"]["correct"]["var"] / r["predicted"]["correct"]["var"] for r in rows]
    lv = [r["trained"]["correct"]["mean"] / r["sqrt_2lnp"] for r in rows]
    zero = [r["predicted"]["frac_margin_zero"] for r in rows]
    out = [f"Trained correct scores against the V_p minimiser: trained minus predicted mean {min(dm):.3f} to "
           f"{max(dm):.3f}, trained/predicted variance {min(vr):.2f} to {max(vr):.2f}; the trained means are "
           f"{min(lv):.2f} to {max(lv):.2f} times sqrt(2 ln p). The V_p minimiser's margin is exactly 0 for a "
           f"fraction {min(zero):.3f} to {max(zero):.3f} of the facts (its active competitors tie), so it does "
           "not predict the margins."]
    ty = [r for r in rows if r["typical"] is not None]
    if ty:
        smaller = sum(r["typical"]["margin"]["mean"] < r["trained"]["margin"]["mean"] for r in ty)
        heavier = sum(r["typical"]["frac_margin_below_0.05"] > r["trained"]["frac_margin_below_0.05"] for r in ty)
        out.append(f"Below capacity the typical memory at q* has a smaller mean margin than the trained memories in "
                   f"{smaller} of {len(ty)} rows and more mass below 0.05 in {heavier} of {len(ty)}.")
    zc = [abs(q["z"]) for q in pairs if q["quantity"] == "correct mean"]
    zm = [abs(q["z"]) for q in pairs if q["quantity"] == "margin mean"]
    if zc and zm:
        out.append(f"On the same instances the Adam rate (0.1 against 0.01) moves the mean margin by |z| = "
                   f"{min(zm):.1f} to {max(zm):.1f} and the mean correct score by |z| = {min(zc):.1f} to "
                   f"{max(zc):.1f}, so a d-trend that mixes the two rates mixes two protocols; see the docs for the "
                   "reading.")
    return " ".join(out)


def _spectra_study(ctx):
    """Pooled trained spectra vs the law, next to a Gaussian calibration (key `spectra_study`; study
    ``linear_memory.spectra``)."""
    import matplotlib.pyplot as plt
    from validation.studies.linear_memory_spectra import KAPPAS

    t0 = time.perf_counter()
    ctx.progress("linear_memory: spectra study (pooled instances, Gaussian calibration)")
    run = _study(ctx, "linear_memory.spectra", "spectra_study_trials.jsonl", config="quick" if ctx.quick else "full")
    summ = run.outcome
    rows, rows_c, main_rows, extra = summ.rows, summ.rows_continued, summ.main_rows, summ.extrapolation
    n, reused = summ.trials, summ.reused
    big, ctl, near = summ.stored_large_d, summ.lr_control, summ.stored_near_capacity
    table_c = [[f"{r['kappa']:g}", r["d"], f"{r['load_fraction']:g}", f"{r['instances']}/{r['trials']}",
                _f(r["ks"]), (f"{r['ks_calibration']:.3f} ± {r['ks_calibration_sd']:.3f}"
                              if r["ks_calibration"] is not None else "nan"),
                _f(r["edge"]), _f(r["edge_theory"]),
                " → ".join(f"{m:.4f}" for _, m in r["margin_trace_mean"]) if r["margin_trace_mean"] else "nan"]
               for r in rows_c]
    table = [[f"{r['kappa']:g}", r["d"], f"{r['load_fraction']:g}", f"{r['lr']:g}", f"{r['load']:.3f}",
              f"{r['instances']}/{r['trials']}", r["n_values"], _f(r["ks"]),
              (f"{r['ks_calibration']:.3f} ± {r['ks_calibration_sd']:.3f}" if r["ks_calibration"] is not None else "nan"),
              _f(r["edge"]), _f(r["edge_calibration"]), _f(r["edge_theory"]),
              _f(r["margin_mean"], ".4f")] for r in rows]
    table_x = [[f"{e['kappa']:g}", f"{e['load_fraction']:g}", e["quantity"], e["variable"],
                ",".join(map(str, e["sizes"])), f"{e['intercept']:.3f} ± {e['intercept_se']:.3f}",
                f"[{e['intercept_ci'][0]:.3f}, {e['intercept_ci'][1]:.3f}]",
                f"{e['slope']:.3g} ± {e['slope_se']:.2g}", f"{e['chi2']:.1f}/{e['dof']}"] for e in extra]
    figs = [_spectra_study_hist(ctx, plt, summ.panels, KAPPAS)]
    figs.append(_spectra_study_extrapolation(ctx, plt, KAPPAS, main_rows, extra))
    src = f"{_STORED}/linear_memory.spectra.jsonl"
    md = ["\n### Spectra study: pooled instances against a Gaussian calibration\n",
          "OP facts at fractions of the finite-p capacity `alpha_c(kappa, p)` of each d; full rank from "
          "**zero** initialisation (a random init already has a quarter-circle spectrum), low rank from its "
          "N(0,1) init; default preset (Adam lr 0.1) below d = 100, Adam lr 0.01 at d = 150 (where 0.1 fails), "
          "stopped at first full recall; successful instances pooled, each "
          "scaled by its own second-moment match. `KS cal.`: the KS distance of the top m singular values of "
          "the same number of Gaussian d x d matrices (whose top-kappa law is exactly this one), mean ± sd over "
          "40 repetitions: what a perfect match would show at this size. Edge: mean smallest of the m scaled "
          "values vs X_qc(1 - m/d) and its Gaussian calibration. Margin: mean over instances of the smallest "
          "(correct - largest competitor) / ||W||_F at stop. Rows with lr 0.01 below d = 100 are the "
          "learning-rate control (same instances as the lr 0.1 rows).\n",
          md_table(["kappa", "d", "load frac", "lr", "load", "recalled/trials", "values", "KS", "KS cal.",
                    "edge", "edge cal.", "X_qc(1-kappa)", "margin"], table),
          "\nContinued training: the same instances trained on for 2048 more steps after the first full "
          "recall (same optimiser, constant rate). Margin: mean normalised margin at first recall → +512 → "
          "+1024 → +2048 steps (still rising at the end: not converged).\n",
          md_table(["kappa", "d", "load frac", "recalled/trials", "KS", "KS cal.", "edge", "X_qc(1-kappa)",
                    "margin: first recall → +512 → +1024 → +2048"], table_c),
          "\n**Extrapolation to d = inf** (`validation.studies.linear_memory_spectra.extrapolation`). "
          "`ks_excess` = pooled KS minus its "
          "Gaussian calibration, `edge_gap` = calibration edge minus trained edge: both are 0 at every d for a "
          "perfect match. Weighted least squares of each against 1/d and 1/ln p (p the number of facts), over "
          "all sizes and without the smallest; `± se` from 200 bootstrap resamplings of the recalled instances "
          "plus the calibration's Monte Carlo error; chi2/dof far above 1 means the points are not on a line "
          "within their errors (then the intercept is model-dependent). A row needs >= 3 sizes with >= 2 "
          "recalled instances. " + ("Quick mode: computed" if ctx.quick else "Computed") + " from the stored "
          "trials of all sizes (nothing run for it).\n",
          md_table(["kappa", "load frac", "quantity", "vs", "d", "intercept (d = inf) ± se", "95% CI",
                    "slope ± se", "chi2/dof"], table_x),
          "\n" + _spectra_verdict(summ.verdicts, extra, rows, main_rows) + "\n",
          f"\n{n} trials run or replayed for d < 100 ({reused} reused from `{src}`); the d = 150 rows "
          f"({len(big)} trials), the lr control ({len(ctl)} trials) and the 0.9 x capacity rows below d = 100 "
          f"({len(near)} trials) are read from the committed store"
          + (" (quick mode too)" if ctx.quick else "") + f"; {time.perf_counter() - t0:.0f} s. Regenerate "
          "(the whole plan, `validation.studies.linear_memory_spectra.PLAN`): "
          "`nice -n 10 python -m validation study linear_memory.spectra --workers 2`.\n",
          "\n![Pooled trained spectra against the law](linear_memory_spectra_study.png)\n",
          "\n![KS and edge against 1/d](linear_memory_spectra_extrapolation.png)\n"]
    data = {"rows": rows, "rows_continued": rows_c, "extrapolation": extra, "trials": n, "reused": reused,
            "stored_large_d_trials": len(big), "lr_control_trials": len(ctl), "stored_near_capacity_trials": len(near),
            "store": src, "seconds": time.perf_counter() - t0}
    return md, data, figs


def _spectra_study_hist(ctx, plt, panels, kappas):
    """Pooled histograms against the law: one row per d, one column per kappa (the panels of
    :class:`validation.studies.linear_memory_spectra.SpectraSummary`)."""
    from validation.linear_memory.spectra import law_of

    ds = sorted({p["d"] for p in panels})
    at = {(p["d"], p["kappa"]): p for p in panels}
    fig, axs = plt.subplots(len(ds), len(kappas), figsize=(4.2 * len(kappas), 3.3 * len(ds)), squeeze=False)
    for i, d in enumerate(ds):
        for j, k in enumerate(kappas):
            ax = axs[i, j]
            p = at.get((d, k))
            if p is None:
                ax.set_axis_off()
                continue
            m, pool = p["m"], p["values"]
            law = law_of(m / d)
            ax.hist(pool, bins=max(8, int(2 * math.sqrt(pool.size))), density=True, alpha=0.5,
                    label=f"trained, {p['instances']} instances pooled")
            lo, hi = law.support()
            xs = np.linspace(max(float(lo), 1e-6), float(hi), 300)
            ax.plot(xs, law.pdf(xs), "k-", zorder=THEORY_ZORDER,
                    label="quarter circle" if m == d else f"truncated quarter circle ($m/d$ = {m}/{d})")
            ax.set_xlabel(r"singular value of $W/\sqrt{d}$, scaled (2nd moment)")
            ax.set_ylabel("density")
            ax.set_title(rf"$d={d}$, $\kappa={k:g}$, load {p['frac']:g} $\times$ capacity, lr {p['lr']:g}")
            legend_outside(ax, below=True)
    fig.tight_layout()
    return ctx.savefig(fig, "linear_memory_spectra_study.png")


def _spectra_study_extrapolation(ctx, plt, kappas, rows, extra):
    """KS (top row) and edge (bottom row) against 1/d per kappa: points per load fraction, Gaussian
    calibration band, law value, and the all-size 1/d fit of KS excess / edge gap."""
    from hcizz.quarter_circle import qc_quantile

    colors = {0.6: "tab:blue", 0.8: "tab:orange", 0.9: "tab:purple", 1.0: "tab:red"}
    fig, axs = plt.subplots(2, len(kappas), figsize=(4.4 * len(kappas), 7.0), squeeze=False)
    fits = {(e["kappa"], e["load_fraction"], e["quantity"]): e for e in extra
            if e["variable"] == "1/d" and len(e["sizes"]) == max(len(g["sizes"]) for g in extra
                                                                  if g["kappa"] == e["kappa"]
                                                                  and g["load_fraction"] == e["load_fraction"])}
    for j, k in enumerate(kappas):
        for i, (q, key, cal_key, cal_sd) in enumerate([("ks_excess", "ks", "ks_calibration", "ks_calibration_sd"),
                                                       ("edge_gap", "edge", "edge_calibration", None)]):
            ax = axs[i, j]
            if q == "edge_gap" and k >= 1:
                ax.set_axis_off()
                continue
            law_value = 0.0
            for f, c in colors.items():
                rr = sorted([r for r in rows if r["kappa"] == k and r["load_fraction"] == f and r[key] is not None],
                            key=lambda r: -r["d"])         # 1/d ascending
                if not rr:
                    continue
                x = np.array([1.0 / r["d"] for r in rr])
                e = fits.get((k, f, q))
                yerr = None
                if e is not None:
                    sd = dict(zip(np.round(e["x"], 12), e["y_sd"]))
                    yerr = [sd.get(round(xi, 12), 0.0) for xi in x]
                ax.errorbar(x, [r[key] for r in rr], yerr=yerr, fmt="o", color=c, ms=4, capsize=2,
                            label=f"trained, load {f:g} x capacity")
                cal = np.array([r[cal_key] for r in rr])
                ax.plot(x, cal, ":", color=c, lw=1, label="Gaussian calibration (± sd)" if f == 0.6 else None)
                if cal_sd is not None:
                    band = np.array([r[cal_sd] for r in rr])
                    ax.fill_between(x, cal - band, cal + band, color=c, alpha=0.12, lw=0)
                if q == "edge_gap":
                    law_value = float(qc_quantile(1 - k))
                if e is not None:
                    xf = np.concatenate([[0.0], x])
                    if q == "ks_excess":
                        yf = np.concatenate([[e["intercept"]], cal + e["intercept"] + e["slope"] * x])
                    else:
                        yf = np.concatenate([[law_value - e["intercept"]], cal - e["intercept"] - e["slope"] * x])
                    ax.plot(xf, yf, "--", color=c, lw=1)
                    ax.errorbar([0.0], [yf[0]], yerr=[1.96 * e["intercept_se"]], fmt="s", color=c, ms=4, capsize=3)
            ax.axhline(law_value, color="k", lw=1.2, zorder=THEORY_ZORDER,
                       label=r"law (KS = 0; edge $X_{qc}(1-\kappa)$)")
            ax.set_xlabel(r"$1/d$")
            ax.set_ylabel("pooled KS distance to the law" if q == "ks_excess"
                          else "edge: mean smallest scaled singular value")
            ax.set_title(rf"$\kappa = {k:g}$" + (" (full rank)" if k >= 1 else "")
                         + (rf", edge law $X_{{qc}}(1-\kappa) = {law_value:.3f}$" if q == "edge_gap" else ""))
            ax.set_xlim(-0.003, 0.054)
    # one legend, in the empty full-rank edge panel
    h, lab = axs[0, 1].get_legend_handles_labels()
    axs[1, 0].legend(h, lab, loc="center", title=r"$d$ = 20, 40, 80 (lr 0.1), 150 (lr 0.01)")
    fig.text(0.5, 0.005, r"dotted + band: Gaussian calibration (mean ± sd); dashed: $1/d$ fit of KS excess / edge gap "
             r"over all sizes, square at $1/d = 0$: its extrapolation ± 95%", ha="center")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return ctx.savefig(fig, "linear_memory_spectra_extrapolation.png")


def _spectra_verdict(verdicts, extra, rows, main_rows):
    """The verdict paragraph: per rank and load fraction, the d = inf intercepts of the KS excess
    and the edge gap (all sizes, 1/d and 1/ln p), whether 0 is inside their 95% intervals and
    whether a line fits (both decided by the study: ``SpectraSummary.verdicts``)."""
    flags = {(v["kappa"], v["load_fraction"], v["quantity"], v["variable"], tuple(v["sizes"])): v for v in verdicts}

    def fit(k, f, q, v):
        c = [e for e in extra if e["kappa"] == k and e["load_fraction"] == f and e["quantity"] == q
             and e["variable"] == v]
        return max(c, key=lambda e: len(e["sizes"])) if c else None

    def show(e):
        lo, hi = e["intercept_ci"]
        flag = flags[(e["kappa"], e["load_fraction"], e["quantity"], e["variable"], tuple(e["sizes"]))]
        tag = "0 inside" if flag["zero_inside"] else "0 excluded"
        bad = ", line rejected" if flag["line_rejected"] else ""
        return f"{e['intercept']:.3f} [{lo:.3f}, {hi:.3f}] ({tag}{bad})"

    parts = []
    for k in sorted({e["kappa"] for e in extra}, reverse=True):
        for f in sorted({e["load_fraction"] for e in extra if e["kappa"] == k}):
            qs = ["ks_excess"] + (["edge_gap"] if k < 1 else [])
            txt = []
            for q in qs:
                a, b = fit(k, f, q, "1/d"), fit(k, f, q, "1/ln p")
                if a is None:
                    continue
                txt.append(f"{q.replace('_', ' ')} at d = inf: {show(a)} in 1/d, {show(b)} in 1/ln p")
            if txt:
                ds = fit(k, f, "ks_excess", "1/d")["sizes"]
                parts.append(f"kappa = {k:g}, load {f:g} x capacity (d = {', '.join(map(str, ds))}): "
                             + "; ".join(txt))
    return ("**Verdict** (extrapolation over all stored sizes; a perfect limit has intercept 0; `line rejected`: "
            "chi2/dof > 4). " + ". ".join(parts) + ". " + _spectra_reading(verdicts, extra, rows, main_rows)
            + " Details: docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration.")


def _spectra_reading(verdicts, extra, rows, main_rows):
    """The reading of the verdicts, every statement counted from them and from the rows it cites."""
    def widest(vs):                     # the all-size fit of each (kappa, fraction, quantity, variable)
        best = {}
        for v in vs:
            k = (v["kappa"], v["load_fraction"], v["quantity"], v["variable"])
            if k not in best or len(v["sizes"]) > len(best[k]["sizes"]):
                best[k] = v
        return list(best.values())

    low = widest([v for v in verdicts if v["kappa"] < 1])
    out = []
    below = [v for v in low if v["load_fraction"] < 0.9 and not v["line_rejected"]]
    if below:
        n = sum(not v["zero_inside"] for v in below)
        fr = sorted({v["load_fraction"] for v in below})
        out.append(f"Reading: below 0.9 x capacity (load {', '.join(f'{f:g}' for f in fr)} x capacity) the low-rank "
                   f"intercepts exclude 0 in {n} of the {len(below)} fits whose line is not rejected "
                   f"({sum(v['line_rejected'] for v in low if v['load_fraction'] < 0.9)} rejected)")
    near = [v for v in low if v["load_fraction"] == 0.9]
    if near:
        excl = {x: sum(not v["zero_inside"] for v in near if v["variable"] == x) for x in ("1/d", "1/ln p")}
        per = [f"{excl[x]} of {sum(v['variable'] == x for v in near)} in {x}" for x in excl]
        ds = sorted({d for v in near for d in v["sizes"]})
        out.append("at 0.9 x capacity they exclude 0 in " + " and ".join(per)
                   + (f" (the two variables disagree, and d = {ds[0]}-{ds[-1]} do not tell them apart)"
                      if excl["1/d"] != excl["1/ln p"] else ""))
    series, falling = {}, 0
    for r in main_rows:
        if r["kappa"] < 1 and r["ks"] is not None and r["ks_calibration"] is not None:
            series.setdefault((r["kappa"], r["d"]), []).append((r["load_fraction"], r["ks"] - r["ks_calibration"]))
    for pts in series.values():
        ys = [y for _, y in sorted(pts)]
        falling += len(ys) > 1 and all(b < a for a, b in zip(ys, ys[1:]))
    multi = sum(len(p) > 1 for p in series.values())
    if multi:
        out.append(f"the KS excess falls with every step of the load towards the capacity in {falling} of the "
                   f"{multi} (kappa, d) series")
    cap = [r for r in main_rows if r["kappa"] < 1 and r["load_fraction"] == 1.0 and r["d"] == max(r2["d"] for r2 in main_rows)]
    if cap:
        out.append("at the capacity load the largest d recalls "
                   + ", ".join(f"{r['instances']}/{r['trials']} (kappa = {r['kappa']:g})" for r in cap)
                   + " instances (a size enters the fit with at least 2)")
    ctl = {(r["kappa"], r["d"], r["load_fraction"]): r for r in rows if r["lr"] != 0.1 and r["d"] < 100}
    pairs = []
    for r in main_rows:
        c = ctl.get((r["kappa"], r["d"], r["load_fraction"]))
        if c is not None and r["lr"] == 0.1 and r["ks"] is not None and c["ks"] is not None and r["ks_calibration_sd"]:
            pairs.append(f"{r['load_fraction']:g} x capacity, kappa = {r['kappa']:g}: "
                         f"{(c['ks'] - r['ks']) / r['ks_calibration_sd']:+.1f}")
    if pairs:
        out.append(f"the Adam rate 0.01 instead of 0.1 on the same instances at d = {min(c[1] for c in ctl)} moves the pooled KS "
                   "by (in calibration sd) " + "; ".join(pairs))
    return "; ".join(out) + ("." if out else "")
