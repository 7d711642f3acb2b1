"""Factual-recall report, parts 9-10: transformer capacity at ``T = 32`` and the trade-off map.

Rendering only.  Both report modes replay the committed stores of the studies of
:mod:`validation.studies.factual_recall_capacity` (about an hour of CPU, too long
for a report run): ``factual_recall.facts_per_param``, ``.facts_per_param_cosine``,
``.fpp_optimizer_scan``, ``.fpp_schedule_check`` and ``.tradeoff``; the fits and
figures are recomputed.  Every sentence that states a conclusion is built from
the numbers it cites.
"""
from __future__ import annotations

import math

import numpy as np

from validation.factual_recall.fits import LAW_CUT
from validation.factual_recall.search import MAX_HEADS
from validation.factual_recall.theory import PAPER_FACTS_PER_PARAM
from validation.factual_recall.trials import COSINE_FINAL, COSINE_WARMUP
from validation.sections.base import fill_doc, md_table
from validation.sections.figstyle import legend_outside
from validation.sections.factual_recall_theory import fmt_ci, run_study
from validation.studies import get_study
from validation.studies.factual_recall_capacity import (FPP_PLAN, TRADEOFF_PLAN, best_of_optimizers,
                                                        optimizer_settings, summarize_fpp)

__all__ = ["render"]

_PAPER = PAPER_FACTS_PER_PARAM


def _ratio_text(r):
    """``"{r}x below"`` / ``"{1/r}x above"`` for the paper's value over a measured one."""
    return f"{r:.1f}x below" if r >= 1 else f"{1 / r:.1f}x above"


def _grid_ratio(ratio):
    k = round(1 / math.log2(ratio))
    return f"2^(1/{k})" if math.isclose(2 ** (1 / k), ratio, rel_tol=1e-12) else f"{ratio:.4f}"


@fill_doc
def render(ctx, md, data, figs):
    """Append parts 9 (facts per parameter at ``T = 32``) and 10 (trade-off map).

    %(render_parameters)s
    data : dict
        The section's ``report.json`` entry, extended (``facts_per_param`` is
        replaced; the fixed-budget fit of part 2 moves to
        ``facts_per_param.fixed_budget_part2``).
    %(render_figs)s

    References
    ----------
    docs/factual_recall.md#facts-per-parameter-budget-checked
    """
    names = ["factual_recall.facts_per_param", "factual_recall.tradeoff"]
    how = ("Both report modes read the committed stores "
           + " and ".join(f"`{get_study(n).stored}`" for n in names)
           + " of `validation/studies/stored/` back (no training in this run; fits and figures "
           "recomputed); they hold about an hour of CPU, so neither mode recomputes them. "
           "Regenerate / extend (resumable): "
           + "; ".join(f"`{get_study(n).command()} --workers 2`" for n in names) + ".")
    _facts_per_param(ctx, md, data, figs, how)
    _tradeoff(ctx, md, data, figs, how)


# ---------------------------------------------------------------------------- 9. facts per parameter

def _facts_per_param(ctx, md, data, figs, how):
    import matplotlib.pyplot as plt

    ctx.progress("factual_recall: facts per parameter at T = 32 (stored)")
    run, _ = run_study(ctx, "factual_recall.facts_per_param", always_replay=True)
    fp, recs, pending = run.outcome, run.results.records, run.results.pending
    fit = fp.fit
    old = data.get("facts_per_param")
    plan = FPP_PLAN
    data["facts_per_param"] = {
        "value": fit.value, "ci": [fit.ci_low, fit.ci_high], "bits_per_param": fit.bits_per_param,
        "bits_per_param_ci": fit.get("bits_per_param_ci", [math.nan, math.nan]),
        "configs": [{k: r[k] for k in ("d", "H", "d_h", "m", "attn_ratio", "mlp_ratio",
                                       "params", "steps", "facts", "ci", "facts_per_param",
                                       "facts_per_param_ci", "bits_per_param",
                                       "bits_per_param_ci", "budgets", "converged", "trials",
                                       "seeds", "cpu_seconds")} for r in fp.configs],
        "slope": fit.slope, "exponent": fit.exponent, "best": fp.best,
        "paper": _PAPER, "paper_over_measured": _PAPER / fit.value if fit.value > 0 else None,
        "settings": {"D": plan["D"], "T": plan["T"], "batch": plan["batch"],
                     "lr": plan["lr"], "schedule": "constant", "seeds": plan["seeds"],
                     "criterion": ">= 99% of facts recalled on fresh sequences",
                     "grid_ratio": plan["ratio"]},
        "pending_paths": pending, "source": "stored",
        "fixed_budget_part2": old}
    md.append(f"\n### 9. Facts per parameter at `T = {plan['T']}` (budget-checked, stored)\n")
    if not fp.configs:
        md.append("Not rendered: no stored trials in the facts-per-parameter store. " + how + "\n")
        return
    md.append(f"`T = {plan['T']}`, `D = {plan['D']}`, `H = {MAX_HEADS}` heads (fewer, of size 1, "
              f"when `H d_h < {MAX_HEADS}`), batch {plan['batch']} fresh sequences, constant-rate "
              f"Adam lr {plan['lr']:g}, every fact evaluated on {plan['eval_repeats']} fresh "
              f"sequences every {plan['eval_every']} steps, success = >= 99% recalled within the "
              f"budget. Per configuration and seed an adaptive search over `N` on a grid of ratio "
              f"{_grid_ratio(plan['ratio'])} (bracket, then refine); capacity = 50% point of one "
              f"logistic fit of success against `ln N` over every seed and `N` (95% "
              f"profile-likelihood CI). " + how + "\n")
    md.append(md_table(
        ["d", "H", "d_h", "m", "H d_h/d", "m/d", "params", "steps", "facts [95% CI]",
         "facts/param [CI]", "bits/param", "budget where converged", "trials"],
        [(r.d, r.H, r.d_h, r.m, f"{r.attn_ratio:g}", f"{r.mlp_ratio:g}", r.params, r.steps,
          f"{r.facts:.0f} {fmt_ci(r.ci_low, r.ci_high, f='{:.0f}')}",
          f"{r.facts_per_param:.4f} {fmt_ci(*r.facts_per_param_ci, f='{:.4f}')}",
          f"{r.bits_per_param:.3f}", "not converged" if r.converged is None else r.converged,
          r.trials) for r in fp.configs]))
    md.append("\n" + _fpp_reading(fp) + "\n")
    _schedule_check(ctx, md, data)
    _cosine_largest(ctx, md, data, recs)
    bo = _optimizer_part(ctx, md, data, figs, run)
    _fpp_figure(ctx, md, data, figs, fp, bo)


def _fpp_reading(fp):
    fit = fp.fit
    pend = (f" {fp.pending} search paths are unfinished (extend the store)." if fp.pending else "")
    if fit.slope is None:
        return "Fewer than two configurations have a finite capacity CI; no slope fitted." + pend
    sl, ex = fit.slope, fit.exponent
    lin = sl.linear
    txt = (f"Slope facts = c x params (fitted in logs: weighted mean of ln(facts / params)): "
           f"**c = {fit.value:.4f} {fmt_ci(fit.ci_low, fit.ci_high, f='{:.4f}')}** facts per "
           f"parameter, i.e. {fit.bits_per_param:.3f} bits per parameter (`log2 D = "
           f"{math.log2(fp.D):g}` bits per fact); reduced chi-square {sl.chi2_red:.2f} over {sl.n} "
           "configurations"
           + (f" (weighted least squares through the origin in linear scale: "
              f"{lin.slope:.4f} {fmt_ci(lin.ci_low, lin.ci_high, f='{:.4f}')})" if lin else "") + ". ")
    if ex is not None:
        one = ex.ci_low <= 1.0 <= ex.ci_high
        txt += (f"Log-log slope of facts against parameters {ex.slope:.2f} "
                f"{fmt_ci(ex.ci_low, ex.ci_high, f='{:.2f}')} (1 = constant facts per parameter; "
                + ("1 lies inside the CI" if one else "1 lies outside the CI") + "). ")
    txt += (f"Largest per-configuration value {fp.best:.4f}. The paper's guide line "
            f"({_PAPER:g} facts/param) is {_above(fp.paper_ratio())} the fitted slope.")
    return txt + pend


def _above(r):
    return f"{r:.1f}x above" if r >= 1 else f"{1 / r:.1f}x below"


def _schedule_check(ctx, md, data):
    run, _ = run_study(ctx, "factual_recall.fpp_schedule_check", always_replay=True)
    sc = run.outcome
    data["facts_per_param"]["schedule_check"] = sc
    done = [r for r in sc if r.constant is not None and r.cosine is not None]
    if not done:
        return
    md.append(f"\nPaired schedule check (`{get_study('factual_recall.fpp_schedule_check').command()}`):"
              " for each configuration, a constant-rate trial that failed just above the capacity "
              "rerun with the same task, initialisation and batches but a cosine schedule "
              f"({COSINE_WARMUP:.0%} warm-up, decay to {COSINE_FINAL:.0%} of {FPP_PLAN['lr']:g}) over "
              "the same budget.\n")
    md.append(md_table(
        ["d", "H", "d_h", "m", "facts", "seed", "steps", "constant lr: final acc",
         "cosine: final acc", "cosine: step reaching 99%"],
        [(r.d, r.H, r.d_h, r.m, r.facts, r.seed, r.steps, f"{r.constant['final_accuracy']:.3f}",
          f"{r.cosine['final_accuracy']:.3f}",
          "never" if r.cosine["t_99"] is None else r.cosine["t_99"]) for r in done]))
    k = sum(r.cosine["t_99"] is not None for r in done)
    md.append(f"\nThe decaying schedule stores {k} of these {len(done)} fact sets that "
              "the constant rate did not: " + (
                  "no sign that the constant rate is what limits the capacities."
                  if k == 0 else
                  "the schedule moves some capacities near their edge, most not; "
                  "the capacities above are for this optimiser setting."
                  if 2 * k < len(done) else
                  "the constant-rate capacities above are lower bounds for this "
                  "optimiser setting, not the architecture's limit.") + "\n")


def _cosine_largest(ctx, md, data, recs):
    run, _ = run_study(ctx, "factual_recall.facts_per_param_cosine", always_replay=True,
                       protocol="largest")
    crec, cpend = run.results.records, run.results.pending
    if not crec:
        return
    cf = run.outcome.configs[0]
    fp = data["facts_per_param"]
    const = next((r for r in fp["configs"] if (r["d"], r["attn_ratio"], r["mlp_ratio"])
                  == (cf.d, cf.attn_ratio, cf.mlp_ratio)), None)
    fp["cosine_largest"] = {k: cf[k] for k in ("d", "H", "d_h", "m", "params", "steps", "facts", "ci",
                                               "facts_per_param", "facts_per_param_ci", "trials")}
    fp["cosine_largest"]["pending_paths"] = cpend
    # the slope again with the largest configuration's cosine capacity (the other
    # configurations keep their constant-rate capacities)
    fpb = summarize_fpp({**recs, **crec}).fit
    fp["with_cosine_largest"] = {"value": fpb.value, "ci": [fpb.ci_low, fpb.ci_high],
                                 "bits_per_param": fpb.bits_per_param, "exponent": fpb.exponent,
                                 "slope": fpb.slope}
    cmd = get_study("factual_recall.facts_per_param_cosine").command(protocol="largest")
    md.append(f"\nThe largest configuration (`d = {cf.d}`, {cf.params} params) searched again with "
              f"the cosine schedule (`{cmd}`, same tasks and batches per `(N, seed)`, {cf.trials} trials"
              + (f", {cpend} paths unfinished" if cpend else "")
              + f"): capacity {cf.facts:.0f} {fmt_ci(cf.ci_low, cf.ci_high, f='{:.0f}')}, "
              f"{cf.facts_per_param:.4f} facts per parameter"
              + (f", against {const['facts']:.0f} {fmt_ci(*const['ci'], f='{:.0f}')} with the "
                 "constant rate." if const else ".")
              + (f" With that capacity in place of the constant-rate one, the slope becomes "
                 f"{fpb.value:.4f} {fmt_ci(fpb.ci_low, fpb.ci_high, f='{:.4f}')} facts per parameter "
                 f"({fpb.bits_per_param:.3f} bits), {_ratio_text(_PAPER / fpb.value)} the paper's "
                 f"{_PAPER:g}." if math.isfinite(fpb.value) else "") + "\n")


def _optimizer_part(ctx, md, data, figs, fpp_run):
    """Best-of-optimisers capacities (``facts_per_param.best_optimizer``), the search
    criterion against the 50 % point (``facts_per_param.search_criterion``) and the scan
    figure.  Returns the optimiser summary (None when only the constant rate is stored)."""
    import matplotlib.pyplot as plt

    cos, _ = run_study(ctx, "factual_recall.facts_per_param_cosine", always_replay=True)
    scan, _ = run_study(ctx, "factual_recall.fpp_optimizer_scan", always_replay=True)
    found = {"factual_recall.facts_per_param": lambda st: fpp_run.results,
             "factual_recall.facts_per_param_cosine": lambda st: cos.results,
             "factual_recall.fpp_optimizer_scan": lambda st: scan.results[(st["lr"], st["batch"])]}
    settings = optimizer_settings()
    so = best_of_optimizers([(st, found[st["study"]](st)) for st in settings])
    fpd = data["facts_per_param"]
    crit = []
    for r in so.configs:
        for q in r.settings:
            sc = q.search
            crit.append({"d": r.d, "attn_ratio": r.attn_ratio, "mlp_ratio": r.mlp_ratio,
                         "schedule": q.schedule, "lr": q.lr, "batch": q.batch,
                         "capacity_50": sc.capacity_50.facts,
                         "one_search": sc.one_search, "one_search_mid": sc.one_search_mid,
                         "best_of_searches": sc.best_of_searches,
                         "one_search_over_50": sc.one_search_over_50,
                         "one_search_mid_over_50": sc.one_search_mid_over_50,
                         "best_of_searches_over_50": sc.best_of_searches_over_50,
                         "seeds": len(sc.per_seed)})

    def rng_(k, const=False):
        v = [c[k] for c in crit if math.isfinite(c[k]) and (not const or c["schedule"] == "constant")]
        return [min(v, default=math.nan), max(v, default=math.nan)]

    fpd["search_criterion"] = {
        "rows": crit,
        "range_one_search_over_50": rng_("one_search_over_50"),
        "range_best_of_searches_over_50": rng_("best_of_searches_over_50"),
        "constant_rate_range_one_search_over_50": rng_("one_search_over_50", True),
        "constant_rate_range_best_of_searches_over_50": rng_("best_of_searches_over_50", True),
        "what": "largest N that passed on one search path (per seed, geometric mean over "
                "seeds), the same at the bracket midpoint, and the largest pass over all "
                "seeds (best of several searches), each over the 50% point of the logistic "
                "fit of the same trials"}
    md.append("\nSearch criterion against the 50% point (every configuration and optimiser "
              "setting with stored trials): what a binary search reports, the largest `N` that "
              "passed on its path (one search: geometric mean over seeds; best of the searches: "
              "the largest over seeds, as the paper's best of three learning rates), and the "
              "geometric midpoint of each path's last pass and first failure (the path's own "
              "threshold without the grid's rounding down), over our 50% point.\n")
    md.append(md_table(
        ["d", "H d_h/d", "m/d", "setting", "50% point", "one search", "/ 50%",
         "bracket midpoint / 50%", "best of searches", "/ 50%"],
        [(c["d"], f"{c['attn_ratio']:g}", f"{c['mlp_ratio']:g}", _setting_name(c))
         + tuple("-" if not math.isfinite(c[k]) else f.format(c[k]) for k, f in
                 (("capacity_50", "{:.0f}"), ("one_search", "{:.0f}"),
                  ("one_search_over_50", "{:.2f}"), ("one_search_mid_over_50", "{:.2f}"),
                  ("best_of_searches", "{:.0f}"), ("best_of_searches_over_50", "{:.2f}")))
         for c in crit]))
    sc_ = fpd["search_criterion"]
    lo1, hi1 = sc_["constant_rate_range_one_search_over_50"]
    lob, hib = sc_["constant_rate_range_best_of_searches_over_50"]
    ao, bo_ = sc_["range_one_search_over_50"], sc_["range_best_of_searches_over_50"]
    top = max((q for r in so.configs for q in r.settings
               if math.isfinite(q.search.best_of_searches_over_50)),
              key=lambda q: q.search.best_of_searches_over_50, default=None)
    md.append(f"\nIn the constant-rate study one search reports {lo1:.2f}-{hi1:.2f} times our "
              f"50% point (the largest pass is the grid point under the path's own "
              f"threshold) and the best of the searches {lob:.2f}-{hib:.2f} times it: the "
              f"paper's criterion explains at most {max(hi1, hib):.2f}x of the distance to the "
              f"paper there. Over every setting the ranges are {ao[0]:.2f}-{ao[1]:.2f} and "
              f"{bo_[0]:.2f}-{bo_[1]:.2f}"
              + ("" if top is None else
                 f"; the largest best-of-searches ratio ({top.search.best_of_searches_over_50:.2f}, "
                 f"{top.name()}) comes from searches whose seeds "
                 + ("ended at different largest passes, where one lucky search overstates what a "
                    "typical draw stores" if top.search.seeds_disagree() else
                    "all ended at the same largest pass")) + ".\n")
    if not any(q.schedule != "constant" or q.lr != FPP_PLAN["lr"]
               for r in so.configs for q in r.settings):
        return None
    sl = so.slope
    names = []
    for st in settings:
        nm = _setting_name(st)
        if nm not in names and any(q.name() == nm for r in so.configs for q in r.settings):
            names.append(nm)
    fpd["best_optimizer"] = {
        "value": sl.value, "ci": [sl.ci_low, sl.ci_high], "bits_per_param": sl.bits_per_param,
        "bits_per_param_ci": sl.get("bits_per_param_ci", [math.nan, math.nan]),
        "slope": sl.slope, "exponent": sl.exponent,
        "paper_over_measured": _PAPER / sl.value if sl.value > 0 else None,
        "largest_pass_slope": {k: so.search_slope[k] for k in ("value", "ci", "bits_per_param")},
        "configs": [{k: r[k] for k in ("d", "H", "d_h", "m", "attn_ratio", "mlp_ratio",
                                       "params", "steps", "best", "constant_over_best",
                                       "largest_pass", "largest_pass_over_best")}
                    | {"settings": [{k: v for k, v in q.to_dict().items() if k != "search"}
                                    for q in r.settings]}
                    for r in so.configs],
        "pending": so.pending,
        "settings_scanned": names,
        "note": "best = largest capacity among the settings measured for that configuration "
                "(the scan covers only some configurations); the maximum of noisy estimates "
                "is biased upward, the CI is the chosen setting's own"}
    cell = {(r.d, r.attn_ratio, r.mlp_ratio, q.name()): q for r in so.configs for q in r.settings}
    md.append("\nBest of optimisers (the studies `factual_recall.facts_per_param_cosine` and "
              "`factual_recall.fpp_optimizer_scan`, committed stores `"
              + get_study("factual_recall.facts_per_param_cosine").stored + "` and `"
              + get_study("factual_recall.fpp_optimizer_scan").stored + "`): capacity [95% CI] per "
              "configuration and setting (schedule, peak lr / batch; cosine = "
              f"{COSINE_WARMUP:.0%} warm-up, decay to {COSINE_FINAL:.0%}), same steps and criterion, "
              "same tasks, initialisations and seeds per `(N, seed)`; '-' not measured.\n")

    def _cell(q):
        r = q.row
        return (("none" if not math.isfinite(r.facts) else f"{r.facts:.0f}")
                + f" {fmt_ci(r.ci_low, r.ci_high, f='{:.0f}')}")

    md.append(md_table(
        ["d", "H d_h/d", "m/d", "params"] + names + ["best", "facts/param", "bits/param"],
        [[r.d, f"{r.attn_ratio:g}", f"{r.mlp_ratio:g}", r.params]
         + ["-" if (r.d, r.attn_ratio, r.mlp_ratio, nm) not in cell else
            _cell(cell[(r.d, r.attn_ratio, r.mlp_ratio, nm)]) for nm in names]
         + ([r.best.name(), f"{r.best.row.facts_per_param:.4f}",
             f"{math.log2(so.D) * r.best.row.facts_per_param:.3f}"] if r.best else ["-", "-", "-"])
         for r in so.configs]))
    if math.isfinite(sl.value):
        ss = so.search_slope
        md.append(f"\nWith the best setting per configuration the slope is **c = "
                  f"{sl.value:.4f} {fmt_ci(sl.ci_low, sl.ci_high, f='{:.4f}')} facts per parameter, "
                  f"{sl.bits_per_param:.3f} bits per parameter** (reduced chi-square "
                  f"{sl.slope.chi2_red:.1f}), {_ratio_text(_PAPER / sl.value)} the paper's "
                  f"{_PAPER:g} (constant rate: {fpd['value']:.4f}). With the paper's criterion on top "
                  f"(largest `N` that passed in any search of any setting) it is "
                  f"{ss.value:.4f} {fmt_ci(ss.ci_low, ss.ci_high, f='{:.4f}')}, "
                  f"{_ratio_text(_PAPER / ss.value)}.\n")
    scan_rows = [r for r in so.configs if len(r.settings) > 2]
    if scan_rows:
        fig, ax = plt.subplots(1, len(scan_rows), figsize=(4.6 * len(scan_rows), 5.0), squeeze=False)
        for a, r in zip(ax[0], scan_rows):
            for b, mk, col in ((256, "o", "C0"), (1024, "s", "C3")):
                allq = [q for q in r.settings if q.schedule == "cosine" and q.batch == b]
                qs = sorted([q for q in allq if math.isfinite(q.row.facts)], key=lambda q: q.lr)
                sh = 1.06 if b == 1024 else 1.0
                if qs:
                    y = np.array([q.row.facts_per_param for q in qs])
                    lo = np.array([q.row.facts_per_param_ci[0] for q in qs])
                    hi = np.array([q.row.facts_per_param_ci[1] for q in qs])
                    hi = np.where(np.isfinite(hi), hi, 0.2)
                    a.errorbar([q.lr * sh for q in qs], y, yerr=[y - lo, hi - y],
                               fmt=mk + "-", color=col, capsize=3,
                               label=f"cosine, batch {b} (95% CI)")
                ub = [q for q in allq if not math.isfinite(q.row.facts)
                      and math.isfinite(q.row.facts_per_param_ci[1])]
                if ub:   # every trial failed (or passed): only a bound
                    a.plot([q.lr * sh for q in ub], [q.row.facts_per_param_ci[1] for q in ub],
                           "v", color=col, mfc="none", ms=8,
                           label=f"cosine, batch {b}: upper CI end (no 50% crossing)")
            c = next((q for q in r.settings if q.schedule == "constant"), None)
            if c is not None:
                a.axhspan(*c.row.facts_per_param_ci, color="gray", alpha=0.2)
                a.axhline(c.row.facts_per_param, color="gray",
                          label=f"constant lr {c.lr:g}, batch {c.batch} (band: CI)")
            a.axhline(_PAPER, ls=":", color="k", label=f"paper guide {_PAPER:g}")
            a.set(xscale="log", xlim=(2e-3, 5e-2), ylim=(0, 0.2),
                  xlabel="peak learning rate (Adam)",
                  ylabel="capacity / parameters (facts at 99%)",
                  title=f"d = {r.d}, {r.attn_ratio:g}/{r.mlp_ratio:g}, {r.steps} steps")
            a.set_xticks([0.003, 0.01, 0.03], ["0.003", "0.01", "0.03"])
            a.minorticks_off()
            legend_outside(a, below=True)
        fig.tight_layout()
        figs.append(ctx.savefig(fig, "fr_optimizer_scan_t32.png"))
        md.append(f"\n![optimiser scan at T = 32]({figs[-1]})\n")
    return so


def _setting_name(q):
    return f"{q['schedule']} {q['lr']:g}/{q['batch']}"


def _fpp_figure(ctx, md, data, figs, fp, bo):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    cols = {16: "C0", 32: "C1", 64: "C2"}
    for r in fp.configs:
        if not math.isfinite(r.facts):
            continue
        hi_ = r.ci_high if math.isfinite(r.ci_high) else r.facts * 3
        ax[0].errorbar(r.params, r.facts, yerr=[[r.facts - r.ci_low], [hi_ - r.facts]],
                       fmt="o", color=cols.get(r.d, "k"), capsize=3)
        ax[0].annotate(f"{r.attn_ratio:g}/{r.mlp_ratio:g}", (r.params, r.facts),
                       textcoords="offset points", xytext=(5, 5) if r.d == 64 else (5, -11))
    cl = data["facts_per_param"].get("cosine_largest")
    if bo is not None:
        first = True
        for r in bo.configs:
            b = r.best
            if b is None or b.schedule == "constant":
                continue
            b = b.row
            ax[0].errorbar(r.params * 1.08, b.facts, yerr=[[b.facts - b.ci_low], [b.ci_high - b.facts]],
                           fmt="s", mfc="none", color="C3", capsize=3,
                           label="best of optimisers (where not constant lr)" if first else None)
            first = False
        if math.isfinite(bo.slope.value):
            ax[0].plot(np.geomspace(5e2, 5e4, 20), bo.slope.value * np.geomspace(5e2, 5e4, 20), "--",
                       color="C3", label=f"fit, best of optimisers {bo.slope.value:.3f}")
    elif cl and math.isfinite(cl["facts"]) and math.isfinite(cl["ci"][1]):
        ax[0].errorbar(cl["params"] * 1.08, cl["facts"],
                       yerr=[[cl["facts"] - cl["ci"][0]], [cl["ci"][1] - cl["facts"]]],
                       fmt="s", mfc="none", color="C3", capsize=3,
                       label=f"d = {cl['d']} 1/1, cosine schedule")
    for d_, c in cols.items():
        ax[0].plot([], [], "o", color=c, label=f"d = {d_}")
    xs = np.geomspace(5e2, 5e4, 20)
    if math.isfinite(fp.fit.value):
        ax[0].plot(xs, fp.fit.value * xs, "-", color="k", label=f"fit {fp.fit.value:.3f} facts/param")
    ax[0].plot(xs, _PAPER * xs, ":", color="gray", label=f"paper guide {_PAPER:g} facts/param")
    ax[0].set(xscale="log", yscale="log", xlabel=r"parameters $4Hd_hd + 2md$",
              ylabel="facts stored at 99% (capacity)",
              title=rf"$T = {fp.T}$ (labels: $Hd_h/d$ / $m/d$)")
    legend_outside(ax[0], below=True, ncol=2)
    marks = "osD^v<>"
    ticks = set()
    for i, r in enumerate(fp.configs):
        b = [x for x in r.budgets if math.isfinite(x.facts)]
        ticks |= {x.budget for x in r.budgets}
        if b:
            ax[1].plot([x.budget for x in b], [x.facts / r.params for x in b],
                       "-", marker=marks[i % len(marks)], color=cols.get(r.d, "k"),
                       alpha=0.8, label=f"d={r.d} {r.attn_ratio:g}/{r.mlp_ratio:g}")
    ax[1].set_xscale("log")
    ax[1].set_xticks(sorted(ticks), [f"{t:g}" for t in sorted(ticks)], rotation=45)
    ax[1].minorticks_off()
    ax[1].set(xlabel=f"step budget (batch {fp.batch})",
              ylabel="capacity / parameters", title="budget study (same runs)")
    legend_outside(ax[1], below=True, ncol=3)
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "fr_facts_per_param_t32.png"))
    md.append(f"\n![facts per parameter at T = 32]({figs[-1]})\n")


# ---------------------------------------------------------------------------- 10. trade-off

def _tradeoff(ctx, md, data, figs, how):
    import matplotlib.pyplot as plt

    ctx.progress("factual_recall: attention / MLP trade-off (stored)")
    run, _ = run_study(ctx, "factual_recall.tradeoff", always_replay=True)
    ts = run.outcome
    tp = TRADEOFF_PLAN
    g = ts.grid
    data.setdefault("tradeoff", {})
    data["tradeoff"]["grid"] = g
    data["tradeoff"]["boundary_fit"] = ts.boundary_fit
    data["tradeoff"]["boundary_fit_all"] = ts.boundary_fit_all
    data["tradeoff"]["mlp_only_choice"] = dict(
        H=ts.routing_H, attention_params=ts.routing_attention_params, d_h=tp["d_h"],
        why="smallest attention row in which the widest MLP stores the facts in at least half "
            "of the seeds: below it not enough of the subject and relation reaches EOS for "
            "any MLP (H d_h = 0 would leave the MLP only the EOS token); the boundary law is "
            "fitted from this row up (boundary_fit), and on every row for comparison "
            "(boundary_fit_all)")
    md.append("\n### 10. Trade-off map at a fixed number of facts (stored)\n")
    if run.reused == 0:
        md.append("Not rendered: no stored trials in the trade-off store. " + how + "\n")
        return
    md.append(f"`d = {g.d}`, `d_h = {g.d_h}`, {g.facts} facts (`S = R`), `D = {tp['D']}`, "
              f"`T = {tp['T']}`, {tp['steps']} constant-rate Adam steps (lr {tp['lr']:g}, "
              f"batch {tp['batch']}), {tp['seeds']} seeds per cell (a new task and model each); "
              "success = >= 99% recalled. Rows: heads `H` (attention params `4 H d_h d`); "
              "columns: MLP width `m` (MLP params `2 m d`). Cells: mean final accuracy "
              "(successes / seeds). 'MLP only' is the routing row: the smallest attention in "
              "which the widest MLP stores the facts in at least half of the seeds; below it "
              "not enough of the subject and relation reaches the EOS position for any MLP "
              "(with `H d_h = 0` the MLP would see only the EOS token), the paper's "
              "'vertical cut'.\n")
    md.append(md_table(
        ["H (att params) \\ m (MLP params)"] + [f"{m} ({p})" for m, p in zip(g.m, g.mlp_params)],
        [[f"{H} ({p})"] + [("-" if not math.isfinite(a) else f"{a:.3f} ({int(round(s * n))}/{n})")
                           for a, s, n in zip(ra, rs, rn)]
         for H, p, ra, rs, rn in zip(g.H, g.attention_params, g.accuracy, g.success, g.trials)]))
    bf = ts.boundary_fit
    md.append("\n" + _tradeoff_reading(ts) + "\n")
    fig, ax = plt.subplots(figsize=(6.5, 5.2))
    acc = np.array(g.accuracy, float)
    im = ax.imshow(acc, origin="lower", vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(g.m)), [str(p) for p in g.mlp_params])
    ax.set_yticks(range(len(g.H)), [str(p) for p in g.attention_params])
    suc = np.array(g.success, float)
    for i in range(acc.shape[0]):
        for j in range(acc.shape[1]):
            if math.isfinite(suc[i, j]):
                ax.text(j, i, f"{suc[i, j]:.1f}", ha="center", va="center", fontsize=7,
                        color="w" if acc[i, j] < 0.6 else "k")
    if bf is not None:
        # boundary curves in cell coordinates: MLP params on a log grid between the columns
        mp = np.array(g.mlp_params, float)
        ap = np.array(g.attention_params, float)
        xcol = np.arange(1, len(mp))          # columns with m > 0 (log-spaced)
        lx, la = np.log(mp[1:]), np.log(ap)
        for key, style in (("1", "-"), ("inf", "--")):
            f = bf.fits.get(key)
            if f is None:
                continue
            n = g.facts
            if key == "1":
                Ms = np.geomspace(mp[1] / 1.5, mp[-1] * 1.5, 200)
                A = (n - f.c_m * Ms) / f.c_a
            else:            # corner: A = n / c_a for M < n / c_m, then M = n / c_m
                Ms_ = n / f.c_m
                Ms = np.concatenate([np.geomspace(mp[1] / 1.5, Ms_, 100), np.full(100, Ms_)])
                A = np.concatenate([np.full(100, n / f.c_a),
                                    np.geomspace(n / f.c_a, ap[0] / 1.5, 100)])
            ok = np.isfinite(A) & (A > 0)
            xs = np.interp(np.log(Ms[ok]), lx, xcol, left=np.nan, right=np.nan)
            ys = np.interp(np.log(A[ok]), la, np.arange(len(ap)), left=np.nan, right=np.nan)
            if ts.routing_H is not None:   # drawn where it was fitted
                ys[ys < g.H.index(ts.routing_H) - 0.5] = np.nan
            lab = ("additive fit" if key == "1" else "max fit") + f" (log-lik {f.loglik:.1f})"
            ax.plot(xs, ys, style, color="r" if key == "1" else "orange", label=lab)
        if ts.routing_H is not None:
            ax.axhline(g.H.index(ts.routing_H) - 0.5, color="r", lw=1.2, ls=":",
                       label="below: routing-starved rows (not fitted)")
    ax.set(xlabel=r"MLP parameters $2md$", ylabel=r"attention parameters $4Hd_hd$",
           title=f"mean accuracy, {g.facts} facts (numbers: success fraction)")
    fig.colorbar(im, ax=ax, label="accuracy")
    legend_outside(ax, below=True, ncol=2)
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "fr_tradeoff_t32.png"))
    md.append(f"\n![trade-off map at T = 32]({figs[-1]})\n")


def _tradeoff_reading(ts):
    head = ("No attention row lets the widest MLP store the facts: no routing row. "
            if ts.routing_H is None else
            f"Routing row ('MLP only'): `H = {ts.routing_H}` ({ts.routing_attention_params} "
            "attention params); the boundary law is fitted from there up. ")
    txt = head + _boundary_text(ts.boundary_fit)
    b = ts.boundary_fit_all
    if b is not None:
        txt += (f" On every row (routing-starved rows included): additive minus max "
                f"log-likelihood {b.additive_vs_max:+.2f}, best `p` {b.best_p:g}.")
    return txt


def _boundary_text(bf):
    if bf is None:
        return "Every trial succeeded or every trial failed there: no boundary to fit."
    f1, fi = bf.fits.get("1"), bf.fits.get("inf")
    law = bf.preferred_law()
    verdict = {"additive": "the additive law is preferred", "max": "the max law is preferred",
               None: "the data do not separate the two laws"}[law]

    def ci(f, k):
        lo = getattr(f, f"{k}_ci_low")
        return "" if lo is None else f" {fmt_ci(lo, getattr(f, f'{k}_ci_high'), f='{:.4f}')}"

    return (f"Boundary fits `((c_a A)^p + (c_m M)^p)^(1/p) = N` by maximum likelihood "
            f"({bf.n_trials} trials, `m = 0` included; brackets: "
            f"{bf.ci_level:.0%} profile-likelihood intervals): additive "
            f"(`p = 1`) `c_a = {f1.c_a:.4f}`{ci(f1, 'c_a')}, `c_m = {f1.c_m:.4f}`"
            f"{ci(f1, 'c_m')} facts per parameter, "
            f"log-likelihood {f1.loglik:.2f}; max (`p = inf`) `c_a = {fi.c_a:.4f}`"
            f"{ci(fi, 'c_a')}, `c_m = {fi.c_m:.4f}`{ci(fi, 'c_m')}, log-likelihood "
            f"{fi.loglik:.2f}. Difference "
            f"{bf.additive_vs_max:+.2f} (same number of free parameters; |difference| > "
            f"{LAW_CUT:.2f} is a 95% profile-likelihood statement): {verdict}. Best `p` on the "
            f"profile grid: {bf.best_p:g}; `p` values within the 95% profile interval: "
            f"{', '.join(f'{p:g}' for p in bf.p_ci)}.")
