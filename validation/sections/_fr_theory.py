"""Factual-recall report, parts 5-8: the memories and the learning dynamics against theory.

Rendering only; the experiments are :mod:`validation.factual_recall.theory_check`
(docs/factual_recall.md#memories-against-theory).  Quick mode reads the stored
full-mode sweeps of ``validation/factual_recall/stored/`` back (no training) and
refits them; full mode runs the plans on ``<out>/theory_check_store/``, a copy of
the stored sweeps (stored trials reused, missing ones computed on the report's pool).
"""
from __future__ import annotations

import math
import time

import numpy as np

from validation.sections.base import md_table
from validation.factual_recall import theory_check as tc

_MAIN_LR = tc.LINEAR_PLAN["lr"]


def _fmt_ci(lo, hi, f="{:.3f}"):
    a = f.format(lo) if math.isfinite(lo) else "-inf"
    b = f.format(hi) if math.isfinite(hi) else "inf"
    return f"[{a}, {b}]"


def _records(ctx, which):
    if ctx.quick:
        return tc.run_plan(which, compute=False), "stored"
    import os

    import shutil

    store = ctx.out / "theory_check_store"
    name = _STORE_NAMES[which]
    if not (store / name).exists() and (tc.STORE_DIR / name).exists():
        # the paper-size runs stored with the package are reused; missing trials are computed
        store.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tc.STORE_DIR / name, store / name)
    return (tc.run_plan(which, store_dir=store, progress=False, executor=ctx.executor,
                        workers=max(1, min(2, os.cpu_count() or 1))), str(store))


#: store file of each plan (``theory_check.run_plan``)
_STORE_NAMES = {"linear": "linear_memory.jsonl", "mlp": "mlp_memory.jsonl",
                "escape": "escape_times.jsonl", "transformer": "transformer_budget.jsonl"}


def build_theory_checks(ctx, md, data, figs):
    """Append parts 5 (linear memory vs ``alpha_c_finite``), 6 (MLP memory vs counting
    bounds), 7 (escape times) and 8 (transformer budget study) to ``md`` / ``data`` /
    ``figs``."""
    import matplotlib.pyplot as plt

    src_txt = ("Quick mode: the trials are the stored full-mode sweeps of "
               "`validation/factual_recall/stored/` read back (engine JSONL store, no training "
               "in this run); fits, theory and figures are recomputed. Regenerate with "
               "`python -m validation.factual_recall.theory_check linear mlp escape transformer`."
               if ctx.quick else "Full mode: the plans run on `theory_check_store/` of the "
               "report folder, a copy of the stored sweeps of `validation/factual_recall/stored/` "
               "(stored trials reused, missing ones computed; resumable). Regenerate the stored "
               "sweeps with `python -m validation.factual_recall.theory_check linear mlp escape "
               "transformer`.")

    if ctx.quick:
        missing = [w for w in ("linear", "mlp", "escape", "transformer")
                   if not tc.run_plan(w, compute=False)]
        if missing:
            md.append("\n### 5-8. Theory checks\n")
            md.append(f"Not rendered: the stored sweeps {missing} were not found in "
                      f"`{tc.STORE_DIR}` (an installation without the package data?). Run "
                      "`python -m validation.factual_recall.theory_check linear mlp escape "
                      "transformer` or the full mode.\n")
            data["theory_checks_missing"] = missing
            return

    # ------------------------------------------------------------------ 5. linear vs theory
    ctx.progress("factual_recall: theory 1/4 linear memory vs alpha_c_finite")
    t0 = time.process_time()
    recs, src = _records(ctx, "linear")
    groups = tc.summarize_linear(recs)
    main = [g for g in groups if g["lr"] == _MAIN_LR and g["inputs"] == g["outputs"] == "sphere"]
    gauss = [g for g in groups if g["outputs"] == "gaussian"]
    per_d = {}
    for g in main:
        fa, f9 = g["final"]["all"], g["final"]["99"]
        per_d[str(g["d"])] = {
            "N_all": fa["N"], "N_all_ci": fa["N_ci"], "alpha_all": fa["threshold"],
            "alpha_all_ci": [fa["ci_low"], fa["ci_high"]],
            "N_99": f9["N"], "N_99_ci": f9["N_ci"], "alpha_99": f9["threshold"],
            "alpha_99_ci": [f9["ci_low"], f9["ci_high"]],
            "theory_alpha_c_finite": g["theory"]["alpha"],
            "theory_stderr": g["theory"]["stderr"], "theory_N": g["theory"]["N"],
            "ratio": g["ratio_all"], "ratio_99": g["ratio_99"], "steps": g["steps"],
            "lr": g["lr"], "trials": g["trials"], "converged_budget": g["converged"]}
    budget = [{"d": g["d"], "lr": g["lr"], "inputs": g["inputs"], "outputs": g["outputs"],
               "fits": g["fits"], "converged": g["converged"]} for g in groups]
    outputs_check = [{"d": g["d"], "inputs": g["inputs"], "outputs": g["outputs"],
                      "alpha_all": g["final"]["all"]["threshold"],
                      "ci": [g["final"]["all"]["ci_low"], g["final"]["all"]["ci_high"]],
                      "ratio": g["ratio_all"]} for g in groups if g["lr"] == _MAIN_LR]
    data["linear_memory_vs_theory"] = {
        "per_d": per_d, "budget_study": budget, "outputs_check": outputs_check,
        "criterion": "all facts recalled (theory); 99% (paper)", "source": src,
        "trials": len(recs), "train_cpu_seconds": float(sum(g["cpu_seconds"] for g in groups))}
    md.append("\n### 5. The linear memory against the finite-p replica capacity\n")
    md.append("The linear memory of part 1 (`N` inputs, `N` outputs, `W` in `R^{d x d}`, "
              "cross-entropy) is the original problem (OP) of the linear-memory paper "
              "(arXiv:2605.10795), so `replica.alpha_c_finite`, solved self-consistently at "
              "each `d` (`alpha = alpha_c_finite(p)` with `p ln p = alpha d^2`), predicts its "
              "capacity `N ln N / d^2` with no free parameter for the criterion *all facts "
              "recalled*. Trials: constant-rate Adam (lr "
              f"{_MAIN_LR:g}) from `W = 0`, stopped at the first step with every fact recalled; "
              "`N` on a grid of 0.6-1.4x the predicted `N`, several seeds each; the capacity is "
              "the "
              "50% point of a logistic fit over `N` (in the load) with a 95% profile-likelihood "
              "CI that holds the seed spread and the `N` resolution. " + src_txt + "\n")
    rows = []
    for g in main:
        fa, f9 = g["final"]["all"], g["final"]["99"]
        rows.append((g["d"], f"{fa['N']:.1f} {_fmt_ci(*fa['N_ci'], f='{:.1f}')}",
                     f"{f9['N']:.1f} {_fmt_ci(*f9['N_ci'], f='{:.1f}')}",
                     f"{g['theory']['N']:.1f}", f"{fa['threshold']:.3f}",
                     f"{g['theory']['alpha']:.3f} +- {g['theory']['stderr']:.4f}",
                     f"{g['ratio_all']:.3f}", f"{g['ratio_99']:.3f}",
                     f"{g['steps']} / {g['converged']['all']}"))
    md.append(md_table(["d", "N_all [95% CI]", "N_99 [95% CI]", "N theory",
                        "alpha_all = N ln N / d^2", "alpha_c_finite (theory)", "ratio all",
                        "ratio 99%", "budget B_max / converged from"], rows))
    if gauss:
        md.append("\nSphere against Gaussian embeddings, same draws (`g / |g|` against "
                  "`g / sqrt(d)`), same trainer:\n")
        gr = []
        for g in sorted([g for g in groups if g["lr"] == _MAIN_LR],
                        key=lambda g: (g["d"], g["inputs"], g["outputs"])):
            if g["d"] not in {h["d"] for h in gauss}:
                continue
            fa = g["final"]["all"]
            gr.append((g["d"], g["inputs"], g["outputs"], f"{fa['threshold']:.3f}",
                       _fmt_ci(fa["ci_low"], fa["ci_high"]), f"{g['theory']['alpha']:.3f}",
                       f"{g['ratio_all']:.3f}"))
        md.append(md_table(["d", "inputs", "outputs", "alpha_all", "95% CI", "theory",
                            "ratio"], gr))
    md.append("\n" + _linear_reading(main, groups) + "\n")
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
    dd = np.array([g["d"] for g in main])
    dgrid = np.array(sorted(set([8, 12, 16, 24, 32, 48, 64]) | set(dd.tolist())))
    th = np.array([tc.theory_prediction(int(d))["alpha"] for d in dgrid])
    ax[0].plot(dgrid, th, "k-", label="theory: alpha_c_finite, self-consistent")
    for crit, mk, lab in (("all", "o", "sphere memory, all recalled"),
                          ("99", "s", "sphere memory, 99%")):
        y = np.array([g["final"][crit]["threshold"] for g in main])
        lo = np.array([g["final"][crit]["ci_low"] for g in main])
        hi = np.array([g["final"][crit]["ci_high"] for g in main])
        off = 1.0 if crit == "all" else 1.04
        ax[0].errorbar(dd * off, y, yerr=[np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)],
                       fmt=mk, capsize=3, label=lab)
    for g in gauss:
        if g["inputs"] == "gaussian":
            fa = g["final"]["all"]
            ax[0].errorbar([g["d"] * 0.96], [fa["threshold"]],
                           yerr=[[fa["threshold"] - fa["ci_low"]],
                                 [fa["ci_high"] - fa["threshold"]]],
                           fmt="^", c="C3", capsize=3,
                           label=("Gaussian in/out (OP data), all recalled"
                                  if g["d"] == gauss[0]["d"] else None))
    ax[0].set_xscale("log", base=2)
    ax[0].set(xlabel="d", ylabel="capacity load N ln N / d^2",
              title="linear memory vs finite-p replica theory")
    ax[0].legend(fontsize=7)
    dcol = {d: f"C{i}" for i, d in enumerate(sorted({g["d"] for g in groups}))}
    lrs = sorted({g["lr"] for g in groups})
    styles = dict(zip(lrs, ["--", "-", ":", "-."])) if len(lrs) <= 4 else {}
    for g in groups:
        if g["inputs"] != "sphere" or g["outputs"] != "sphere":
            continue
        f = g["fits"]["all"]
        b = np.array([r["budget"] for r in f])
        y = np.array([r["threshold"] for r in f]) / g["theory"]["alpha"]
        ax[1].plot(b, y, styles.get(g["lr"], "-"), c=dcol[g["d"]], marker="o", ms=3,
                   label=f"d={g['d']}, lr={g['lr']:g}")
    ax[1].axhline(1.0, c="k", lw=0.8, label="theory")
    ax[1].set_xscale("log", base=2)
    ax[1].set(xlabel="step budget B (Adam steps)", ylabel="measured / theory load (all recalled)",
              title="budget study")
    ax[1].legend(fontsize=7, ncol=2)
    figs.append(ctx.savefig(fig, "fr_linear_vs_theory.png"))
    md.append(f"\n![linear memory vs theory]({figs[-1]})\n")
    data["linear_memory_vs_theory"]["render_cpu_seconds"] = time.process_time() - t0

    # ------------------------------------------------------------------ 6. MLP vs counting
    ctx.progress("factual_recall: theory 2/4 MLP memory vs counting bounds")
    recs, src = _records(ctx, "mlp")
    sm = tc.summarize_mlp(recs)
    pooled = sm["pooled"]["99"]
    keys = ("d", "m", "steps", "params", "effective_weights", "c_99", "c_99_ci", "c_all",
            "c_all_ci", "cover_effective", "converged", "trials")
    data["mlp_memory"] = {
        "c": pooled["c"], "ci": pooled["ci"], "criterion": "99% recalled, N = c m d",
        "c_all": sm["pooled"]["all"]["c"], "ci_all": sm["pooled"]["all"]["ci"],
        "cover_bound": 4.0,
        "cover_bound_note": "2 facts per adjustable weight (Cover 1965; Gardner 1988, zero "
                            "margin) x the paper's 2 m d parameters, in units of m d",
        "cover_effective": {f"{r['d']}x{r['m']}": r["cover_effective"] for r in sm["best"]},
        "spread": sm["spread"], "configs": [{k: r[k] for k in keys} for r in sm["configs"]],
        "pooled_over": [f"{r['d']}x{r['m']} ({r['steps']} steps)" for r in sm["best"]],
        "source": src}
    lp = tc.MLP_PLAN["long"]
    md.append("\n### 6. The MLP memory against the counting bounds\n")
    md.append("Two output classes, width `m`, `N = c m d` facts for `c` in 1..4, "
              f"{tc.MLP_PLAN['seeds']} seeds, constant-rate Adam (lr {tc.MLP_PLAN['lr']:g}) up "
              f"to {tc.MLP_PLAN['steps']} steps (and {lp['steps']} steps, {lp['seeds']} seeds, "
              f"`c` >= {min(lp['c']):g}, where 8192 had not converged), stopped when all facts "
              "are recalled; `c` is the 50% point of a logistic fit over `N / (m d)` with its "
              "95% profile-likelihood CI. " + src_txt + "\n")
    md.append(md_table(["d", "m", "steps", "c (99%) [95% CI]", "c (all) [95% CI]",
                        "facts / effective weight (99%)",
                        "Cover, effective weights 2(md+2m)/(md)", "Cover, 2md params",
                        "converged from (99% / all)"],
                       [(r["d"], r["m"], r["steps"],
                         _c_ci(r, "99"), _c_ci(r, "all"),
                         f"{_per_eff(r, '99'):.2f}", f"{r['cover_effective']:.2f}",
                         f"{r['cover_bound']:.0f}",
                         f"{r['converged']['99']} / {r['converged']['all']}")
                        for r in sm["configs"]]))
    md.append("\n(CI ends below 0 are shown as 0: the fit's range extends below the grid; "
              "facts per effective weight = `c m d / (m d + 2 m)`.)\n")
    md.append("\n" + _mlp_reading(sm) + "\n")
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    rows = sm["configs"]
    xs = np.arange(len(rows))
    for crit, mk, off, lab in (("99", "o", -0.1, "measured c, 99%"),
                               ("all", "s", 0.1, "measured c, all recalled")):
        y = np.array([r[f"c_{crit}"] for r in rows])
        lo = np.array([max(r[f"c_{crit}_ci"][0], 0.0) for r in rows])
        hi = np.array([r[f"c_{crit}_ci"][1] for r in rows])
        ax.errorbar(xs + off, y, yerr=[np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)],
                    fmt=mk, capsize=3, label=lab)
    ax.plot(xs, [r["cover_effective"] for r in rows], "k_", ms=18, mew=2,
            label="Cover/Gardner, effective weights: 2 + 4/d")
    ax.axhline(4.0, c="gray", ls="--", lw=1, label="Cover/Gardner on 2 m d parameters: 4")
    ax.set_xticks(xs, [f"{r['d']}x{r['m']}\n{r['steps'] // 1024}k" for r in rows], fontsize=8)
    ax.set(xlabel="d x m, step budget (k = 1024 Adam steps)", ylabel="c = N / (m d)",
           ylim=(0, 4.5), title="MLP memory, two classes")
    ax.legend(fontsize=7, loc="lower right")
    figs.append(ctx.savefig(fig, "fr_mlp_vs_counting.png"))
    md.append(f"\n![MLP memory vs counting bounds]({figs[-1]})\n")

    # ------------------------------------------------------------------ 7. escape times
    ctx.progress("factual_recall: theory 3/4 saddle-escape times")
    recs, src = _records(ctx, "escape")
    pl = tc.ESCAPE_PLAN
    es = tc.fit_escape_slopes(recs, pl["S"], pl["R"], pl["D"])
    slopes, ci = {}, {}
    for st in ("relation", "subject"):
        slopes[f"{st}_init_scaled"] = es[st]["init_slope_scaled"]["slope"]
        ci[f"{st}_init_scaled"] = es[st]["init_slope_scaled"]["ci"]
        if es[st]["lr_exponent"] is not None:
            slopes[f"{st}_lr_exponent"] = es[st]["lr_exponent"]["slope"]
            ci[f"{st}_lr_exponent"] = es[st]["lr_exponent"]["ci"]
    data["escape_times"] = {"slopes": slopes, "ci": ci, "fits": es, "plan": dict(pl),
                            "theory": {"init_scaled": 1.0, "lr_exponent_flow": -1.0,
                                       "rates": tc.escape_rates(pl["S"], pl["R"], pl["D"])},
                            "trials": [dict(p, **r) for p, r in recs], "source": src}
    md.append("\n### 7. Escape times from the plateaus\n")
    lam = tc.escape_rates(pl["S"], pl["R"], pl["D"])
    md.append(f"Model of part 4 (`S = {pl['S']}`, `R = {pl['R']}`, `D = {pl['D']}`, "
              f"`T = {pl['T']}`), init scale in {list(pl['inits'])}, lr in {list(pl['lrs'])}, "
              f"{pl['seeds']} seeds. Escape step = first step where the relation (subject) "
              "loss falls below half its initial value. Gradient-flow prediction at the saddle "
              "(docs/factual_recall.md#escape-times): each token's score and value column form a "
              "bilinear pair whose unstable mode grows at rate `lambda = |M_v|`, "
              f"`lambda_rel = sqrt((1 - 1/R)/D)/R = {lam['relation']:.5f}`, "
              f"`lambda_subj = sqrt((1 - 1/D)/R)/S = {lam['subject']:.5f}`, so the escape step is "
              "`ln(1/init) / ln(1 + lr lambda)` + const: slope 1 of "
              "`ln(1 + lr lambda) t` against `ln(1/init)`, and `t ~ 1/lr` (exponent -1 in "
              "gradient flow). " + src_txt + "\n")
    rows = []
    for st in ("relation", "subject"):
        e = es[st]
        for lr, f in e["init_slope"].items():
            rows.append((st, f"dt/d ln(1/init), lr={lr}", f"{f['slope']:.2f}",
                         _fmt_ci(*f["ci"], f="{:.2f}"), f"{f['theory']:.2f}"))
        f = e["init_slope_scaled"]
        rows.append((st, "d[ln(1+lr lambda) t]/d ln(1/init), all lr", f"{f['slope']:.3f}",
                     _fmt_ci(*f["ci"]), "1"))
        if e["lr_exponent"] is not None:
            f = e["lr_exponent"]
            rows.append((st, f"d ln t / d ln lr (init={e['lr_exponent_init']:g})",
                         f"{f['slope']:.3f}", _fmt_ci(*f["ci"]),
                         f"{e['lr_exponent_theory']:.3f} (flow: -1)"))
    md.append(md_table(["plateau", "slope", "measured", "95% CI", "theory"], rows))
    md.append("\n" + _escape_reading(es) + "\n")
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for j, st in enumerate(("relation", "subject")):
        for i, lr in enumerate(pl["lrs"]):
            pts = [(p["init"], r[f"t_{st}"]) for p, r in recs if p["lr"] == lr
                   and r[f"t_{st}"] is not None]
            if not pts:
                continue
            x = np.log(1 / np.array([p[0] for p in pts]))
            ax[j].plot(x, [p[1] for p in pts], "o", c=f"C{i}", ms=4, label=f"lr={lr:g} measured")
            f = es[st]["init_slope"].get(f"{lr:g}")
            if f is not None:
                xs = np.linspace(x.min(), x.max(), 10)
                # theory slope drawn through the mean of the points (the offset is not predicted)
                ax[j].plot(xs, np.mean([p[1] for p in pts]) + f["theory"] * (xs - x.mean()), "-",
                           c=f"C{i}", lw=1, label=f"lr={lr:g} theory slope")
        ax[j].set(xlabel="ln(1 / init scale)", ylabel="escape step (GD steps)",
                  title=f"{st} plateau")
        ax[j].legend(fontsize=7)
    figs.append(ctx.savefig(fig, "fr_escape_times.png"))
    md.append(f"\n![escape times]({figs[-1]})\n")

    # ------------------------------------------------------------------ 8. budget study
    ctx.progress("factual_recall: theory 4/4 transformer budget study")
    recs, src = _records(ctx, "transformer")
    tp = tc.TRANSFORMER_PLAN
    tb = tc.summarize_transformer(recs)
    lin_conv = {str(g["d"]): g["converged"]["all"] for g in main}
    mlp_conv = {f"{r['d']}x{r['m']}": r["converged"]["99"] for r in sm["best"]}
    data["budget_study"] = {
        "transformer": {"shape": dict(zip(("d", "H", "d_h", "m"), tp["shape"]), D=tp["D"],
                                      T=tp["T"], batch=tp["batch"]),
                        "params": tb["params"], "rows": tb["rows"],
                        "converged": tb["converged"], "source": src},
        "linear_memory": {"converged_budget": lin_conv,
                          "detail": "factual_recall.linear_memory_vs_theory.budget_study"},
        "mlp_memory": {"converged_budget": mlp_conv, "detail": "factual_recall.mlp_memory.configs"}}
    d_, H_, dh_, m_ = tp["shape"]
    md.append("\n### 8. Budget study of the transformer (small size)\n")
    md.append(f"One shape of part 2 (`d = {d_}`, `H = {H_}`, `d_h = {dh_}`, `m = {m_}`, "
              f"{tb['params']} parameters; `D = {tp['D']}`, `T = {tp['T']}`, batch "
              f"{tp['batch']}), facts in {list(tp['facts'])} (square split), {tp['seeds']} "
              "seeds. Constant-rate Adam runs give every budget from one run (accuracy on "
              f"every fact, evaluated every {tp['constant']['eval_every']} steps on fresh "
              "sequences); cosine runs (the schedule of part 2) are one budget each. Capacity = "
              "50% point of the logistic fit of success (>= 99% recalled) over the number of "
              "facts. " + src_txt + "\n")
    md.append(md_table(["schedule", "lr", "budget (steps)", "facts at 99% [95% CI]",
                        "facts / param", "successes / trials"],
                       [(r["schedule"], f"{r['lr']:g}", r["budget"],
                         f"{r['facts']:.1f} {_fmt_ci(*r['ci'], f='{:.1f}')}",
                         f"{r['facts_per_param']:.4f}", f"{r['successes']} / {r['trials']}")
                        for r in tb["rows"]]))
    md.append("\n" + _budget_reading(tb) + "\n")
    _capacity_studies(ctx, md, data, figs)


def _inside(g):
    f = g["final"]["all"]
    return f["ci_low"] <= g["theory"]["alpha"] <= f["ci_high"]


def _linear_reading(main, groups):
    if not main:
        return "No stored linear-memory trials were found."
    txt = ("**Cross-paper check.** Measured over predicted capacity load (criterion: all "
           "recalled), sphere embeddings: " + ", ".join(
               f"{g['ratio_all']:.3f} at d = {g['d']}" + (" (theory inside the CI)"
                                                         if _inside(g) else "")
               for g in main) + ". ")
    gg = [g for g in groups if g["lr"] == _MAIN_LR and g["outputs"] == "gaussian"
          and g["inputs"] == "gaussian"]
    if gg:
        txt += ("With Gaussian inputs and outputs (the OP data the theory is computed for): "
                + ", ".join(f"{g['ratio_all']:.3f} at d = {g['d']}"
                            + (" (theory inside the CI)" if _inside(g)
                               else " (theory outside the CI)")
                            for g in gg) + ". ")
    pairs = []
    for g in gg:
        m_ = next((x for x in main if x["d"] == g["d"]), None)
        if m_ is not None:
            pairs.append((g["d"], m_["final"]["all"]["threshold"]
                          / g["final"]["all"]["threshold"] - 1))
    txt += ("What agrees: the finite-p replica capacity predicts the trained capacity of "
            "this paper's linear memory, with no free parameter, when the outputs are "
            "Gaussian (the problem it is computed for), and it tracks the decrease with `d` "
            "of the sphere memory too. What does not: unit-sphere outputs store more than "
            "Gaussian ones on the same draws ("
            + ", ".join(f"{100 * x:+.1f}% at d = {d}" for d, x in pairs) + "), so the "
            "sphere memory sits above the prediction; its competitor fields have lighter "
            "tails than the Gaussian ones the theory assumes (normalising the inputs changes "
            "no argmax; docs/factual_recall.md#memories-against-theory). The 99% criterion "
            "gives the same `N` up to the grid resolution (below `N = 100` it is the same "
            "criterion). ")
    nc = [g["d"] for g in main if g["converged"]["all"] is None]
    if nc:
        txt += f"The budget study has not converged at d = {nc} (threshold still moving). "
    else:
        txt += ("Budget study (right panel): the threshold stops moving within its CI by "
                "B = " + ", ".join(f"{g['converged']['all']}" for g in main)
                + " steps at d = " + ", ".join(str(g["d"]) for g in main) + ". ")
        for d in sorted({g["d"] for g in groups}):
            same = [g for g in groups if g["d"] == d and g["inputs"] == g["outputs"] == "sphere"]
            if len(same) < 2:
                continue
            th = [g["final"]["all"] for g in same]
            agree = all(f["ci_low"] <= h["threshold"] <= f["ci_high"] for f in th for h in th)
            lrs_txt = ", ".join(f"{g['lr']:g}" for g in same)
            th_txt = ", ".join(f"{f['threshold']:.3f}" for f in th)
            txt += (f"At d = {d} the learning rates {lrs_txt} end at thresholds {th_txt}"
                    + (" (each inside the others' CIs). " if agree
                       else " (not all inside each other's CIs). "))
    return txt


def _c_ci(r, crit):
    lo, hi = r[f"c_{crit}_ci"]
    return f"{r[f'c_{crit}']:.2f} {_fmt_ci(max(lo, 0.0), hi, f='{:.2f}')}"


def _per_eff(r, crit):
    return r[f"c_{crit}"] * r["d"] * r["m"] / r["effective_weights"]


def _mlp_reading(sm):
    p = sm["pooled"]["99"]
    base = sm["best"]
    big = [r for r in base if r["m"] >= 16]
    small = [r for r in base if r["m"] < 16]
    e99 = [_per_eff(r, "99") for r in big]
    eall = [_per_eff(r, "all") for r in big]
    txt = (f"Pooled over the {len(base)} configurations at {tc.MLP_PLAN['steps']} steps: "
           f"**c = {p['c']:.2f}** (99% criterion; 95% CI {_fmt_ci(*p['ci'], f='{:.2f}')}; "
           f"all-recalled criterion c = {sm['pooled']['all']['c']:.2f} "
           f"{_fmt_ci(*sm['pooled']['all']['ci'], f='{:.2f}')}); the per-configuration values "
           f"range over {sm['spread'][0]:.2f}..{sm['spread'][1]:.2f}, wider than the pooled CI, "
           "so `c` is not one constant over these sizes, and the pooled value is a summary, "
           "not a law. ")
    longs = [r for r in sm["configs"] if r["steps"] > tc.MLP_PLAN["steps"]]
    ok = []
    for r in longs:
        b = next(x for x in base if (x["d"], x["m"]) == (r["d"], r["m"]))
        ok.append(b["c_99_ci"][0] <= r["c_99"] <= b["c_99_ci"][1])
    if longs:
        txt += (f"The {longs[0]['steps']}-step runs put "
                + ("every configuration they repeat inside the CI of its "
                   f"{tc.MLP_PLAN['steps']}-step value: the budget has converged. " if all(ok)
                   else f"{sum(ok)} of {len(ok)} configurations inside the CI of the "
                   f"{tc.MLP_PLAN['steps']}-step value: the budget has not fully converged. "))
    if big:
        txt += (f"**Against the counting bounds** "
                "(docs/factual_recall.md#mlp-memory-against-counting-bounds). Cover's function "
                "counting and Gardner's zero-margin capacity both give 2 random facts per "
                "adjustable weight of a single threshold unit. Counted on the paper's `2 m d` "
                f"parameters that is `c = 4`; measured: {min(r['c_99'] for r in big):.2f}.."
                f"{max(r['c_99'] for r in big):.2f} for `m >= 16`, i.e. "
                f"{min(r['c_99'] for r in big) / 2:.2f}..{max(r['c_99'] for r in big) / 2:.2f} "
                "facts per parameter, well below 2. But with two classes `W2` acts only through "
                "the `m` numbers `a = W2^T (u_1 - u_2)`, so the memory has `m d + 2 m` "
                "effective weights, not `2 m d`; per effective weight it stores "
                f"{min(e99):.2f}..{max(e99):.2f} facts at 99% ({min(eall):.2f}..{max(eall):.2f} "
                "with all recalled): about the single-unit value 2, somewhat above it at 99% "
                "(which tolerates 1% errors, and a network with hidden units may exceed 2 per "
                "weight). So the measured `c ~ 2.5` is about what the counting argument gives "
                "once the weights that cannot matter are not counted: the gap to `c = 4` is "
                "mostly in the parameter count, not in the training. ")
    for r in small:
        txt += (f"The smallest memory (d = {r['d']}, m = {r['m']}) is the exception: "
                f"c = {r['c_99']:.2f}, {_per_eff(r, '99'):.2f} facts per effective weight; we "
                "did not establish whether this is the optimiser (few hidden ReLUs, dead "
                "units) or the architecture. ")
    return txt


def _budget_reading(tb):
    best = max((r for r in tb["rows"] if math.isfinite(r["facts"])),
               key=lambda r: r["facts"], default=None)
    if best is None:
        return "No configuration stored any fact on this grid."
    conv = ", ".join(f"lr {k}: {v}" for k, v in tb["converged"].items())
    return (f"Largest capacity on this grid: {best['facts']:.1f} facts "
            f"({best['facts_per_param']:.4f} facts per parameter; {best['schedule']}, lr "
            f"{best['lr']:g}, {best['budget']} steps). Budget from which the constant-rate "
            f"capacity stops moving within its CI: {conv}. Only one small shape at `T = 8` "
            "here; part 9 repeats the budget check at `T = 32` for every configuration of "
            "the facts-per-parameter study (`d` = 16-64, the paper's ratios).")


def _escape_reading(es):
    a = es["relation"]["init_slope_scaled"]
    b = es["subject"]["init_slope_scaled"]
    return (f"Pooled over the learning rates, `ln(1 + lr lambda) t` grows with `ln(1/init)` "
            f"at slope {a['slope']:.3f} {_fmt_ci(*a['ci'])} (relation) and {b['slope']:.3f} "
            f"{_fmt_ci(*b['ci'])} (subject) against the predicted 1.")


# ---------------------------------------------------------------------------- 9-10. T = 32 studies

def _capacity_studies(ctx, md, data, figs):
    """Parts 9 (facts per parameter at T = 32, converged budgets) and 10 (trade-off map).

    Both modes read the stored sweeps of ``validation/factual_recall/stored/`` (about an
    hour of CPU, too long for a report run); regenerate or extend them with
    ``python -m validation.factual_recall.capacity_study fpp tradeoff``."""
    import matplotlib.pyplot as plt
    from validation.factual_recall import capacity_study as cs

    how = ("Both report modes read the stored sweeps `validation/factual_recall/stored/"
           "facts_per_param.jsonl` and `tradeoff.jsonl` back (no training in this run; "
           "fits and figures recomputed); they hold about an hour of CPU, so neither mode "
           "recomputes them. Regenerate / extend (resumable): `python -m "
           "validation.factual_recall.capacity_study fpp tradeoff --workers 2`.")
    # ------------------------------------------------------------ 9. facts per parameter
    ctx.progress("factual_recall: facts per parameter at T = 32 (stored)")
    recs, pending = cs.fpp_records()
    fp = cs.summarize_fpp(recs)
    old = data.get("facts_per_param")
    plan = cs.FPP_PLAN
    data["facts_per_param"] = {
        "value": fp["value"], "ci": fp["ci"], "bits_per_param": fp["bits_per_param"],
        "bits_per_param_ci": fp.get("bits_per_param_ci", [math.nan, math.nan]),
        "configs": [{k: r[k] for k in ("d", "H", "d_h", "m", "attn_ratio", "mlp_ratio",
                                       "params", "steps", "facts", "ci", "facts_per_param",
                                       "facts_per_param_ci", "bits_per_param",
                                       "bits_per_param_ci", "budgets", "converged", "trials",
                                       "seeds", "cpu_seconds")} for r in fp["configs"]],
        "slope": fp["slope"], "exponent": fp["exponent"], "best": fp["best"],
        "paper": 0.15, "paper_over_measured": 0.15 / fp["value"] if fp["value"] > 0 else None,
        "settings": {"D": plan["D"], "T": plan["T"], "batch": plan["batch"],
                     "lr": plan["lr"], "schedule": "constant", "seeds": plan["seeds"],
                     "criterion": ">= 99% of facts recalled on fresh sequences",
                     "grid_ratio": plan["ratio"]},
        "pending_paths": pending, "source": "stored",
        "fixed_budget_part2": old}
    md.append("\n### 9. Facts per parameter at `T = 32` (budget-checked, stored)\n")
    if not fp["configs"]:
        md.append("Not rendered: no stored trials in `facts_per_param.jsonl`. " + how + "\n")
    else:
        md.append(f"`T = {plan['T']}`, `D = {plan['D']}`, `H = 8` heads (fewer, of size 1, "
                  f"when `H d_h < 8`), batch {plan['batch']} fresh sequences, constant-rate "
                  f"Adam lr {plan['lr']:g}, every fact evaluated on 2 fresh sequences every "
                  f"{plan['eval_every']} steps, success = >= 99% recalled within the budget. "
                  f"Per configuration and seed an adaptive search over `N` on a grid of ratio "
                  f"2^(1/4) (bracket, then refine); capacity = 50% point of one logistic fit of "
                  f"success against `ln N` over every seed and `N` (95% profile-likelihood CI). "
                  + how + "\n")
        md.append(md_table(
            ["d", "H", "d_h", "m", "H d_h/d", "m/d", "params", "steps", "facts [95% CI]",
             "facts/param [CI]", "bits/param", "budget where converged", "trials"],
            [(r["d"], r["H"], r["d_h"], r["m"], f"{r['attn_ratio']:g}", f"{r['mlp_ratio']:g}",
              r["params"], r["steps"], f"{r['facts']:.0f} {_fmt_ci(*r['ci'], f='{:.0f}')}",
              f"{r['facts_per_param']:.4f} {_fmt_ci(*r['facts_per_param_ci'], f='{:.4f}')}",
              f"{r['bits_per_param']:.3f}",
              "not converged" if r["converged"] is None else r["converged"], r["trials"])
             for r in fp["configs"]]))
        md.append("\n" + _fpp_reading(fp, pending) + "\n")
        sc = cs.run_schedule_check(compute=False)
        data["facts_per_param"]["schedule_check"] = sc
        done = [r for r in sc if "cosine" in r and "constant" in r]
        if done:
            md.append("\nPaired schedule check (`stored/fpp_schedule_check.jsonl`; `python -m "
                      "validation.factual_recall.capacity_study schedule`): for each "
                      "configuration, a constant-rate trial that failed just above the capacity "
                      "rerun with the same task, initialisation and batches but a cosine "
                      "schedule (5% warm-up, decay to 1% of 0.01) over the same budget.\n")
            md.append(md_table(
                ["d", "H", "d_h", "m", "facts", "seed", "steps", "constant lr: final acc",
                 "cosine: final acc", "cosine: step reaching 99%"],
                [(r["d"], r["H"], r["d_h"], r["m"], r["facts"], r["seed"], r["steps"],
                  f"{r['constant']['final_accuracy']:.3f}",
                  f"{r['cosine']['final_accuracy']:.3f}",
                  "never" if r["cosine"]["t_99"] is None else r["cosine"]["t_99"])
                 for r in done]))
            k = sum(r["cosine"]["t_99"] is not None for r in done)
            md.append(f"\nThe decaying schedule stores {k} of these {len(done)} fact sets that "
                      "the constant rate did not: " + (
                          "no sign that the constant rate is what limits the capacities."
                          if k == 0 else
                          "the schedule moves some capacities near their edge, most not; "
                          "the capacities above are for this optimiser setting."
                          if 2 * k < len(done) else
                          "the constant-rate capacities above are lower bounds for this "
                          "optimiser setting, not the architecture's limit.") + "\n")
        crec, cpend = cs.fpp_records(plan=cs.FPP_COSINE_PLAN)
        if crec:
            cf = cs.summarize_fpp(crec, cs.FPP_COSINE_PLAN)["configs"][0]
            const = next((r for r in fp["configs"] if (r["d"], r["attn_ratio"], r["mlp_ratio"])
                          == (cf["d"], cf["attn_ratio"], cf["mlp_ratio"])), None)
            data["facts_per_param"]["cosine_largest"] = {
                k: cf[k] for k in ("d", "H", "d_h", "m", "params", "steps", "facts", "ci",
                                   "facts_per_param", "facts_per_param_ci", "trials")}
            data["facts_per_param"]["cosine_largest"]["pending_paths"] = cpend
            # the slope again with the largest configuration's cosine capacity (the other
            # configurations keep their constant-rate capacities: the paired schedule check
            # found the cosine schedule no better for most of them)
            fpb = cs.summarize_fpp({**recs, **crec})
            data["facts_per_param"]["with_cosine_largest"] = {
                "value": fpb["value"], "ci": fpb["ci"], "bits_per_param": fpb["bits_per_param"],
                "exponent": fpb["exponent"], "slope": fpb["slope"]}
            md.append(f"\nThe largest configuration (`d = {cf['d']}`, {cf['params']} params) "
                      "searched again with the cosine schedule (`FPP_COSINE_PLAN`, "
                      "`stored/facts_per_param_cosine.jsonl`, same tasks and batches per "
                      f"`(N, seed)`, {cf['trials']} trials"
                      + (f", {cpend} paths unfinished" if cpend else "") +
                      f"): capacity {cf['facts']:.0f} {_fmt_ci(*cf['ci'], f='{:.0f}')}, "
                      f"{cf['facts_per_param']:.4f} facts per parameter"
                      + (f", against {const['facts']:.0f} "
                         f"{_fmt_ci(*const['ci'], f='{:.0f}')} with the constant rate."
                         if const else ".")
                      + (f" With that capacity in place of the constant-rate one, the slope "
                         f"becomes {fpb['value']:.4f} {_fmt_ci(*fpb['ci'], f='{:.4f}')} facts "
                         f"per parameter ({fpb['bits_per_param']:.3f} bits), "
                         f"{0.15 / fpb['value']:.1f}x below the paper's 0.15."
                         if math.isfinite(fpb["value"]) else "") + "\n")
        bo = _optimizer_part(ctx, md, data, figs, cs)
        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        cols = {16: "C0", 32: "C1", 64: "C2"}
        for r in fp["configs"]:
            if not math.isfinite(r["facts"]):
                continue
            lo, hi = r["ci"]
            hi_ = hi if math.isfinite(hi) else r["facts"] * 3
            ax[0].errorbar(r["params"], r["facts"], yerr=[[r["facts"] - lo], [hi_ - r["facts"]]],
                           fmt="o", color=cols.get(r["d"], "k"), capsize=3)
            ax[0].annotate(f"{r['attn_ratio']:g}/{r['mlp_ratio']:g}", (r["params"], r["facts"]),
                           textcoords="offset points",
                           xytext=(5, 5) if r["d"] == 64 else (5, -11), fontsize=7)
        cl = data["facts_per_param"].get("cosine_largest")
        if bo is not None:
            first = True
            for r in bo["configs"]:
                b = r["best"]
                if b is None or b["schedule"] == "constant":
                    continue
                ax[0].errorbar(r["params"] * 1.08, b["facts"],
                               yerr=[[b["facts"] - b["ci"][0]], [b["ci"][1] - b["facts"]]],
                               fmt="s", mfc="none", color="C3", capsize=3,
                               label="best of optimisers (where not constant lr)"
                               if first else None)
                first = False
            if math.isfinite(bo["slope"]["value"]):
                ax[0].plot(np.geomspace(5e2, 5e4, 20), bo["slope"]["value"]
                           * np.geomspace(5e2, 5e4, 20), "--", color="C3",
                           label=f"fit, best of optimisers {bo['slope']['value']:.3f}")
        elif cl and math.isfinite(cl["facts"]) and math.isfinite(cl["ci"][1]):
            ax[0].errorbar(cl["params"] * 1.08, cl["facts"],
                           yerr=[[cl["facts"] - cl["ci"][0]], [cl["ci"][1] - cl["facts"]]],
                           fmt="s", mfc="none", color="C3", capsize=3,
                           label=f"d = {cl['d']} 1/1, cosine schedule")
        for d_, c in cols.items():
            ax[0].plot([], [], "o", color=c, label=f"d = {d_}")
        xs = np.geomspace(5e2, 5e4, 20)
        if math.isfinite(fp["value"]):
            ax[0].plot(xs, fp["value"] * xs, "-", color="k",
                       label=f"fit {fp['value']:.3f} facts/param")
        ax[0].plot(xs, 0.15 * xs, ":", color="gray", label="paper guide 0.15 facts/param")
        ax[0].set(xscale="log", yscale="log", xlabel="parameters 4 H d_h d + 2 m d",
                  ylabel="facts stored at 99% (capacity)",
                  title="T = 32 (labels: H d_h/d / m/d)")
        ax[0].legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))
        marks = "osD^v<>"
        ticks = set()
        for i, r in enumerate(fp["configs"]):
            b = [x for x in r["budgets"] if math.isfinite(x["facts"])]
            ticks |= {x["budget"] for x in r["budgets"]}
            if b:
                ax[1].plot([x["budget"] for x in b], [x["facts"] / r["params"] for x in b],
                           "-", marker=marks[i % len(marks)], color=cols.get(r["d"], "k"),
                           alpha=0.8, label=f"d={r['d']} {r['attn_ratio']:g}/{r['mlp_ratio']:g}")
        ax[1].set_xscale("log")
        ax[1].set_xticks(sorted(ticks), [f"{t:g}" for t in sorted(ticks)], fontsize=7,
                         rotation=45)
        ax[1].minorticks_off()
        ax[1].set(xlabel="step budget (batch 256)",
                  ylabel="capacity / parameters", title="budget study (same runs)")
        ax[1].legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.28))
        fig.tight_layout()
        figs.append(ctx.savefig(fig, "fr_facts_per_param_t32.png"))
        md.append(f"\n![facts per parameter at T = 32]({figs[-1]})\n")

    # ------------------------------------------------------------ 10. trade-off
    ctx.progress("factual_recall: attention / MLP trade-off (stored)")
    trecs = cs.run_tradeoff(compute=False)
    ts = cs.summarize_tradeoff(trecs)
    tp = cs.TRADEOFF_PLAN
    g = ts["grid"]
    data.setdefault("tradeoff", {})
    data["tradeoff"]["grid"] = g
    data["tradeoff"]["boundary_fit"] = ts["boundary_fit"]
    data["tradeoff"]["boundary_fit_all"] = ts["boundary_fit_all"]
    data["tradeoff"]["mlp_only_choice"] = dict(
        ts["routing"], d_h=tp["d_h"],
        why="smallest attention row in which the widest MLP stores the facts in at least half "
            "of the seeds: below it not enough of the subject and relation reaches EOS for "
            "any MLP (H d_h = 0 would leave the MLP only the EOS token); the boundary law is "
            "fitted from this row up (boundary_fit), and on every row for comparison "
            "(boundary_fit_all)")
    md.append("\n### 10. Trade-off map at a fixed number of facts (stored)\n")
    if not trecs:
        md.append("Not rendered: no stored trials in `tradeoff.jsonl`. " + how + "\n")
        return
    md.append(f"`d = {g['d']}`, `d_h = {g['d_h']}`, {g['facts']} facts (`S = R`), `D = {tp['D']}`, "
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
        ["H (att params) \\ m (MLP params)"] + [f"{m} ({p})" for m, p in
                                                zip(g["m"], g["mlp_params"])],
        [[f"{H} ({p})"] + [("-" if not math.isfinite(a) else
                            f"{a:.3f} ({int(round(s * n))}/{n})")
                           for a, s, n in zip(ra, rs, rn)]
         for H, p, ra, rs, rn in zip(g["H"], g["attention_params"], g["accuracy"],
                                     g["success"], g["trials"])]))
    bf = ts["boundary_fit"]
    md.append("\n" + _tradeoff_reading(ts) + "\n")
    fig, ax = plt.subplots(figsize=(6.5, 5.2))
    acc = np.array(g["accuracy"], float)
    im = ax.imshow(acc, origin="lower", vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(g["m"])), [str(p) for p in g["mlp_params"]])
    ax.set_yticks(range(len(g["H"])), [str(p) for p in g["attention_params"]])
    suc = np.array(g["success"], float)
    for i in range(acc.shape[0]):
        for j in range(acc.shape[1]):
            if math.isfinite(suc[i, j]):
                ax.text(j, i, f"{suc[i, j]:.1f}", ha="center", va="center", fontsize=7,
                        color="w" if acc[i, j] < 0.6 else "k")
    if bf is not None:
        # boundary curves in cell coordinates: MLP params on a log grid between the columns
        mp = np.array(g["mlp_params"], float)
        ap = np.array(g["attention_params"], float)
        xcol = np.arange(1, len(mp))          # columns with m > 0 (log-spaced)
        lx, la = np.log(mp[1:]), np.log(ap)
        for key, style in (("1", "-"), ("inf", "--")):
            f = bf["fits"].get(key)
            if f is None:
                continue
            n = g["facts"]
            if key == "1":
                Ms = np.geomspace(mp[1] / 1.5, mp[-1] * 1.5, 200)
                A = (n - f["c_m"] * Ms) / f["c_a"]
            else:            # corner: A = n / c_a for M < n / c_m, then M = n / c_m
                Ms_ = n / f["c_m"]
                Ms = np.concatenate([np.geomspace(mp[1] / 1.5, Ms_, 100), np.full(100, Ms_)])
                A = np.concatenate([np.full(100, n / f["c_a"]),
                                    np.geomspace(n / f["c_a"], ap[0] / 1.5, 100)])
            ok = np.isfinite(A) & (A > 0)
            xs = np.interp(np.log(Ms[ok]), lx, xcol, left=np.nan, right=np.nan)
            ys = np.interp(np.log(A[ok]), la, np.arange(len(ap)), left=np.nan, right=np.nan)
            if ts["routing"]["H"] is not None:   # drawn where it was fitted
                ys[ys < g["H"].index(ts["routing"]["H"]) - 0.5] = np.nan
            lab = ("additive fit" if key == "1" else "max fit") + \
                f" (log-lik {f['loglik']:.1f})"
            ax.plot(xs, ys, style, color="r" if key == "1" else "orange", label=lab)
        if ts["routing"]["H"] is not None:
            ax.axhline(g["H"].index(ts["routing"]["H"]) - 0.5, color="r", lw=1.2, ls=":",
                       label="below: routing-starved rows (not fitted)")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    ax.set(xlabel="MLP parameters 2 m d", ylabel="attention parameters 4 H d_h d",
           title=f"mean accuracy, {g['facts']} facts (numbers: success fraction)")
    fig.colorbar(im, ax=ax, label="accuracy")
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "fr_tradeoff_t32.png"))
    md.append(f"\n![trade-off map at T = 32]({figs[-1]})\n")


def _setting_name(q):
    return f"{q['schedule']} {q['lr']:g}/{q['batch']}"


def _optimizer_part(ctx, md, data, figs, cs):
    """Best-of-optimisers capacities (``facts_per_param.best_optimizer``), the search
    criterion against the 50 % point (``facts_per_param.search_criterion``) and the scan
    figure.  Returns :func:`cs.summarize_optimizers` (None when only the constant rate is
    stored)."""
    import matplotlib.pyplot as plt

    so = cs.summarize_optimizers()
    fpd = data["facts_per_param"]
    # ---- criterion: every configuration and setting with stored trials
    crit = []
    for r in so["configs"]:
        for q in r["settings"]:
            sc = q["search"]
            crit.append({"d": r["d"], "attn_ratio": r["attn_ratio"], "mlp_ratio": r["mlp_ratio"],
                         "schedule": q["schedule"], "lr": q["lr"], "batch": q["batch"],
                         "capacity_50": sc["capacity_50"]["facts"],
                         "one_search": sc["one_search"], "one_search_mid": sc["one_search_mid"],
                         "best_of_searches": sc["best_of_searches"],
                         "one_search_over_50": sc["one_search_over_50"],
                         "one_search_mid_over_50": sc["one_search_mid_over_50"],
                         "best_of_searches_over_50": sc["best_of_searches_over_50"],
                         "seeds": len(sc["per_seed"])})
    def rng_(k, const=False):
        v = [c[k] for c in crit if math.isfinite(c[k])
             and (not const or c["schedule"] == "constant")]
        return [min(v, default=math.nan), max(v, default=math.nan)]

    fpd["search_criterion"] = {
        "rows": crit,
        "range_one_search_over_50": rng_("one_search_over_50"),
        "range_best_of_searches_over_50": rng_("best_of_searches_over_50"),
        "constant_rate_range_one_search_over_50": rng_("one_search_over_50", True),
        "constant_rate_range_best_of_searches_over_50": rng_("best_of_searches_over_50",
                                                             True),
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
    md.append(f"\nIn the constant-rate study one search reports {lo1:.2f}-{hi1:.2f} times our "
              f"50% point (the largest pass is the grid point under the path's own "
              f"threshold) and the best of the searches {lob:.2f}-{hib:.2f} times it: the "
              f"paper's criterion explains at most {max(hi1, hib):.2f}x of the distance to the "
              f"paper there. Over every setting the ranges are {ao[0]:.2f}-{ao[1]:.2f} and "
              f"{bo_[0]:.2f}-{bo_[1]:.2f}; the largest ratios come from searches whose seeds "
              f"disagree, where one lucky search overstates what a typical draw stores.\n")
    if not any(q["schedule"] != "constant" or q["lr"] != cs.FPP_PLAN["lr"]
               for r in so["configs"] for q in r["settings"]):
        return None
    # ---- best of optimisers
    sl = so["slope"]
    names = []
    for st in cs.optimizer_settings():
        nm = _setting_name(st)
        if nm not in names and any(_setting_name(q) == nm for r in so["configs"]
                                   for q in r["settings"]):
            names.append(nm)
    fpd["best_optimizer"] = {
        "value": sl["value"], "ci": sl["ci"], "bits_per_param": sl["bits_per_param"],
        "bits_per_param_ci": sl.get("bits_per_param_ci", [math.nan, math.nan]),
        "slope": sl["slope"], "exponent": sl["exponent"],
        "paper_over_measured": 0.15 / sl["value"] if sl["value"] > 0 else None,
        "largest_pass_slope": {k: so["search_slope"][k] for k in ("value", "ci",
                                                                  "bits_per_param")},
        "configs": [{k: r[k] for k in ("d", "H", "d_h", "m", "attn_ratio", "mlp_ratio",
                                       "params", "steps", "best", "constant_over_best",
                                       "largest_pass", "largest_pass_over_best")}
                    | {"settings": [{k: q[k] for k in q if k != "search"}
                                    for q in r["settings"]]}
                    for r in so["configs"]],
        "pending": so["pending"],
        "settings_scanned": names,
        "note": "best = largest capacity among the settings measured for that configuration "
                "(the scan covers only some configurations); the maximum of noisy estimates "
                "is biased upward, the CI is the chosen setting's own"}
    cell = {}
    for r in so["configs"]:
        for q in r["settings"]:
            cell[(r["d"], r["attn_ratio"], r["mlp_ratio"], _setting_name(q))] = q
    md.append("\nBest of optimisers (`FPP_COSINE_ALL_PLAN`, `stored/facts_per_param_cosine."
              "jsonl`, and the optimiser scan `scan_plans()`, `stored/fpp_optimizer_scan.jsonl`;"
              " `python -m validation.factual_recall.capacity_study fpp-cosine-all fpp-scan`): "
              "capacity [95% CI] per configuration and setting (schedule, peak lr / batch; "
              "cosine = 5% warm-up, decay to 1%), same steps and criterion, same tasks, "
              "initialisations and seeds per `(N, seed)`; '-' not measured.\n")
    md.append(md_table(
        ["d", "H d_h/d", "m/d", "params"] + names + ["best", "facts/param", "bits/param"],
        [[r["d"], f"{r['attn_ratio']:g}", f"{r['mlp_ratio']:g}", r["params"]]
         + [("-" if (r["d"], r["attn_ratio"], r["mlp_ratio"], nm) not in cell else
             (lambda q: ("none" if not math.isfinite(q["facts"]) else f"{q['facts']:.0f}")
              + f" {_fmt_ci(*q['ci'], f='{:.0f}')}")(
                 cell[(r["d"], r["attn_ratio"], r["mlp_ratio"], nm)])) for nm in names]
         + ([_setting_name(r["best"]), f"{r['best']['facts_per_param']:.4f}",
             f"{math.log2(so['D']) * r['best']['facts_per_param']:.3f}"] if r["best"] else ["-", "-", "-"])
         for r in so["configs"]]))
    if math.isfinite(sl["value"]):
        ss = so["search_slope"]
        md.append(f"\nWith the best setting per configuration the slope is **c = "
                  f"{sl['value']:.4f} {_fmt_ci(*sl['ci'], f='{:.4f}')} facts per parameter, "
                  f"{sl['bits_per_param']:.3f} bits per parameter** (reduced chi-square "
                  f"{sl['slope']['chi2_red']:.1f}), {0.15 / sl['value']:.1f}x below the paper's "
                  f"0.15 (constant rate: {fpd['value']:.4f}). With the paper's criterion on top "
                  f"(largest `N` that passed in any search of any setting) it is "
                  f"{ss['value']:.4f} {_fmt_ci(*ss['ci'], f='{:.4f}')}, "
                  f"{0.15 / ss['value']:.1f}x below.\n")
    # ---- scan figure: capacity / params against the peak learning rate
    scan = [r for r in so["configs"] if len(r["settings"]) > 2]
    if scan:
        fig, ax = plt.subplots(1, len(scan), figsize=(4.6 * len(scan), 5.0), squeeze=False)
        for a, r in zip(ax[0], scan):
            for b, mk, col in ((256, "o", "C0"), (1024, "s", "C3")):
                allq = [q for q in r["settings"] if q["schedule"] == "cosine"
                        and q["batch"] == b]
                qs = sorted([q for q in allq if math.isfinite(q["facts"])],
                            key=lambda q: q["lr"])
                sh = 1.06 if b == 1024 else 1.0
                if qs:
                    y = np.array([q["facts_per_param"] for q in qs])
                    lo = np.array([q["facts_per_param_ci"][0] for q in qs])
                    hi = np.array([q["facts_per_param_ci"][1] for q in qs])
                    hi = np.where(np.isfinite(hi), hi, 0.2)
                    a.errorbar([q["lr"] * sh for q in qs], y, yerr=[y - lo, hi - y],
                               fmt=mk + "-", color=col, capsize=3,
                               label=f"cosine, batch {b} (95% CI)")
                ub = [q for q in allq if not math.isfinite(q["facts"])
                      and math.isfinite(q["facts_per_param_ci"][1])]
                if ub:   # every trial failed (or passed): only a bound
                    a.plot([q["lr"] * sh for q in ub], [q["facts_per_param_ci"][1] for q in ub],
                           "v", color=col, mfc="none", ms=8,
                           label=f"cosine, batch {b}: upper CI end (no 50% crossing)")
            c = next((q for q in r["settings"] if q["schedule"] == "constant"), None)
            if c is not None:
                a.axhspan(*c["facts_per_param_ci"], color="gray", alpha=0.2)
                a.axhline(c["facts_per_param"], color="gray",
                          label=f"constant lr {c['lr']:g}, batch {c['batch']} (band: CI)")
            a.axhline(0.15, ls=":", color="k", label="paper guide 0.15")
            a.set(xscale="log", xlim=(2e-3, 5e-2), ylim=(0, 0.2),
                  xlabel="peak learning rate (Adam)",
                  ylabel="capacity / parameters (facts at 99%)",
                  title=f"d = {r['d']}, {r['attn_ratio']:g}/{r['mlp_ratio']:g}, "
                        f"{r['steps']} steps")
            a.set_xticks([0.003, 0.01, 0.03], ["0.003", "0.01", "0.03"])
            a.minorticks_off()
            a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))
        fig.tight_layout()
        figs.append(ctx.savefig(fig, "fr_optimizer_scan_t32.png"))
        md.append(f"\n![optimiser scan at T = 32]({figs[-1]})\n")
    return so


def _fpp_reading(fp, pending):
    if fp["slope"] is None:
        return ("Fewer than two configurations have a finite capacity CI; no slope fitted."
                + (f" {pending} search paths are unfinished (extend the store)." if pending
                   else ""))
    sl, ex = fp["slope"], fp["exponent"]
    ratio = 0.15 / fp["value"] if fp["value"] > 0 else math.inf
    lin = sl.get("linear")
    txt = (f"Slope facts = c x params (fitted in logs: weighted mean of ln(facts / params)): "
           f"**c = {fp['value']:.4f} {_fmt_ci(*fp['ci'], f='{:.4f}')}** facts per parameter, "
           f"i.e. {fp['bits_per_param']:.3f} bits per parameter (`log2 D = 3` bits per fact); "
           f"reduced chi-square {sl['chi2_red']:.2f} over {sl['n']} configurations"
           + (f" (weighted least squares through the origin in linear scale: "
              f"{lin['slope']:.4f} {_fmt_ci(*lin['ci'], f='{:.4f}')})" if lin else "") + ". ")
    if ex is not None:
        txt += (f"Log-log slope of facts against parameters {ex['slope']:.2f} "
                f"{_fmt_ci(*ex['ci'], f='{:.2f}')} (1 = constant facts per parameter). ")
    txt += (f"Largest per-configuration value {fp['best']:.4f}. The paper's guide line "
            f"(0.15 facts/param) is {ratio:.1f}x above the fitted slope.")
    if pending:
        txt += f" {pending} search paths are unfinished (extend the store)."
    return txt


def _tradeoff_reading(ts):
    r = ts["routing"]
    head = ("No attention row lets the widest MLP store the facts: no routing row. "
            if r["H"] is None else
            f"Routing row ('MLP only'): `H = {r['H']}` ({r['attention_params']} attention "
            "params); the boundary law is fitted from there up. ")
    txt = head + _boundary_text(ts["boundary_fit"])
    if ts["boundary_fit_all"] is not None:
        b = ts["boundary_fit_all"]
        txt += (f" On every row (routing-starved rows included): additive minus max "
                f"log-likelihood {b['additive_vs_max']:+.2f}, best `p` {b['best_p']:g}.")
    return txt


def _boundary_text(bf):
    if bf is None:
        return "Every trial succeeded or every trial failed there: no boundary to fit."
    f1, fi = bf["fits"].get("1"), bf["fits"].get("inf")
    dl = bf["additive_vs_max"]
    verdict = ("the additive law is preferred" if dl > 1.92 else
               "the max law is preferred" if dl < -1.92 else
               "the data do not separate the two laws")
    ci = lambda f, k: (f" {_fmt_ci(*f[k + '_ci'], f='{:.4f}')}" if k + "_ci" in f else "")
    return (f"Boundary fits `((c_a A)^p + (c_m M)^p)^(1/p) = N` by maximum likelihood "
            f"({bf['n_trials']} trials, `m = 0` included; brackets: "
            f"{bf.get('ci_level', 0.95):.0%} profile-likelihood intervals): additive "
            f"(`p = 1`) `c_a = {f1['c_a']:.4f}`{ci(f1, 'c_a')}, `c_m = {f1['c_m']:.4f}`"
            f"{ci(f1, 'c_m')} facts per parameter, "
            f"log-likelihood {f1['loglik']:.2f}; max (`p = inf`) `c_a = {fi['c_a']:.4f}`"
            f"{ci(fi, 'c_a')}, `c_m = {fi['c_m']:.4f}`{ci(fi, 'c_m')}, log-likelihood "
            f"{fi['loglik']:.2f}. Difference "
            f"{dl:+.2f} (same number of free parameters; |difference| > 1.92 is a 95% "
            f"profile-likelihood statement): {verdict}. Best `p` on the profile grid: "
            f"{bf['best_p']:g}; `p` values within the 95% profile interval: "
            f"{', '.join(f'{p:g}' for p in bf['p_ci'])}.")
