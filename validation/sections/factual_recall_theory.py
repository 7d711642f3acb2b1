"""Factual-recall report, parts 5-8: the memories and the learning dynamics against theory.

Rendering only.  The numbers come from the studies of
:mod:`validation.studies.factual_recall_memory` (``factual_recall.linear_memory``,
``.mlp_memory``, ``.escape_times``, ``.transformer_budget``): quick mode replays
their committed stores (no training) and the fits are recomputed; full mode runs
their plans on stores in the report folder, seeded from the committed ones
(committed trials reused, missing ones computed on the report's pool).  Every
sentence that states a conclusion is built from the numbers it cites; the
verdicts compare a prediction with a confidence interval.
"""
from __future__ import annotations

import math
import os
import time

import numpy as np

from validation.factual_recall.theory import COVER_PER_WEIGHT, escape_rates
from validation.factual_recall.trials import RECALL_LEVEL
from validation.sections.base import fill_doc, md_table
from validation.sections.figstyle import THEORY_ZORDER, legend_outside
from validation.studies import get_study
from validation.studies.factual_recall_capacity import FPP_PLAN
from validation.studies.factual_recall_memory import (ESCAPE_PLAN, LINEAR_PLAN, MLP_PLAN,
                                                      TRANSFORMER_PLAN)

__all__ = ["render", "fmt_ci", "run_study"]

#: N below which "99 % recalled" means "all recalled" (ceil(0.99 N) = N).
_ALL_BELOW = round(1 / (1 - RECALL_LEVEL))


def fmt_ci(lo, hi, f="{:.3f}"):
    """Format an interval ``[lo, hi]`` with ``-inf`` / ``inf`` for open ends.

    Parameters
    ----------
    lo, hi : float
        The ends.
    f : str, optional
        Format of one end.

    Returns
    -------
    str
        ``"[lo, hi]"``.

    References
    ----------
    docs/factual_recall.md#measured-results

    Examples
    --------
    >>> fmt_ci(0.5, math.inf)
    '[0.500, inf]'
    """
    a = f.format(lo) if math.isfinite(lo) else "-inf"
    b = f.format(hi) if math.isfinite(hi) else "inf"
    return f"[{a}, {b}]"


@fill_doc
def run_study(ctx, name, *, always_replay=False, **options):
    """Replay (quick mode) or compute (full mode) one study for the report.

    Parameters
    ----------
    ctx : validation.sections.base.Context
        The report context.
    name : str
        The study.
    always_replay : bool, optional
        Replay in both modes (studies too long for a report run).
    **options
        The study's options (see :meth:`validation.studies.base.Study.run`).

    Returns
    -------
    run : validation.studies.base.StudyRun
        The run.
    source : str
        ``"stored"`` for a replay, else the store's path.

    %(ref_memories_against_theory)s
    """
    study = get_study(name)
    compute = not (ctx.quick or always_replay)
    run = study.run(compute=compute, store=ctx.out / f"{name}.jsonl" if compute else None,
                    executor=ctx.executor, workers=max(1, min(2, os.cpu_count() or 1)),
                    progress=False, missing="skip", **options)
    return run, (str(run.store) if compute else "stored")


def _source_text(ctx, names):
    stores = ", ".join(f"`{get_study(n).stored}`" for n in names)
    cmds = "; ".join(f"`{get_study(n).command()}`" for n in names)
    if ctx.quick:
        return (f"Quick mode: the trials are read back from the committed stores {stores} of "
                "`validation/studies/stored/` (engine JSONL stores, no training in this run); fits, "
                f"theory and figures are recomputed. Regenerate with {cmds}.")
    return (f"Full mode: the studies run on stores in the report folder, seeded from the committed "
            f"{stores} (committed trials reused, missing ones computed; resumable). Regenerate the "
            f"committed stores with {cmds}.")


def _list(items):
    items = list(items)
    return ", ".join(map(str, items)) if items else "none"


def _at(sub, every):
    """``"at every d (8, 16)"`` / ``"at no d (8, 16)"`` / ``"at d = 8 (of 8, 16)"``."""
    sub, every = list(sub), list(every)
    if sub == every:
        return f"at every d ({_list(every)})"
    if not sub:
        return f"at no d ({_list(every)})"
    return f"at d = {_list(sub)} (of {_list(every)})"


@fill_doc
def render(ctx, md, data, figs):
    """Append parts 5-8 to the section's Markdown, ``report.json`` entry and figures.

    Parts: 5 the linear memory against the finite-``p`` replica capacity,
    6 the MLP memory against the counting bounds, 7 escape times, 8 the
    transformer budget study.

    %(render_parameters)s
    data : dict
        The section's ``report.json`` entry, extended.
    %(render_figs)s

    %(ref_memories_against_theory)s
    """
    lin = _linear(ctx, md, data, figs)
    sm = _mlp(ctx, md, data, figs)
    _escape(ctx, md, data, figs)
    _budget(ctx, md, data, figs, lin, sm)


# ---------------------------------------------------------------------------- 5. linear memory

def _linear(ctx, md, data, figs):
    import matplotlib.pyplot as plt

    ctx.progress("factual_recall: theory 1/4 linear memory vs alpha_c_finite")
    t0 = time.process_time()
    run, src = run_study(ctx, "factual_recall.linear_memory")
    s = run.outcome
    groups, main = s.groups, s.main()
    gauss = s.gaussian()
    per_d = {}
    for g in main:
        fa, f9 = g.final_all, g.final_99
        per_d[str(g.d)] = {
            "N_all": fa.N, "N_all_ci": [fa.N_ci_low, fa.N_ci_high], "alpha_all": fa.threshold,
            "alpha_all_ci": [fa.ci_low, fa.ci_high],
            "N_99": f9.N, "N_99_ci": [f9.N_ci_low, f9.N_ci_high], "alpha_99": f9.threshold,
            "alpha_99_ci": [f9.ci_low, f9.ci_high],
            "theory_alpha_c_finite": g.theory.alpha, "theory_stderr": g.theory.stderr,
            "theory_N": g.theory.N, "ratio": g.ratio_all, "ratio_99": g.ratio_99, "steps": g.steps,
            "lr": g.lr, "trials": g.trials, "converged_budget": g.converged}
    data["linear_memory_vs_theory"] = {
        "per_d": per_d,
        "budget_study": [{"d": g.d, "lr": g.lr, "inputs": g.inputs, "outputs": g.outputs,
                          "fits": g.fits, "converged": g.converged} for g in groups],
        "outputs_check": [{"d": g.d, "inputs": g.inputs, "outputs": g.outputs,
                           "alpha_all": g.final_all.threshold,
                           "ci": [g.final_all.ci_low, g.final_all.ci_high], "ratio": g.ratio_all}
                          for g in groups if g.lr == s.main_lr],
        "criterion": "all facts recalled (theory); 99% (paper)", "source": src,
        "trials": sum(g.trials for g in groups),
        "train_cpu_seconds": float(sum(g.cpu_seconds for g in groups))}
    rel = LINEAR_PLAN["rel"]
    md.append("\n### 5. The linear memory against the finite-p replica capacity\n")
    md.append("The linear memory of part 1 (`N` inputs, `N` outputs, `W` in `R^{d x d}`, "
              "cross-entropy) is the original problem (OP) of the linear-memory paper "
              "(arXiv:2605.10795), so `replica.alpha_c_finite`, solved self-consistently at "
              "each `d` (`alpha = alpha_c_finite(p)` with `p ln p = alpha d^2`), predicts its "
              "capacity `N ln N / d^2` with no free parameter for the criterion *all facts "
              f"recalled*. Trials: constant-rate Adam (lr {s.main_lr:g}) from `W = 0`, stopped at "
              f"the first step with every fact recalled; `N` on a grid of {min(rel):g}-"
              f"{max(rel):g}x the predicted `N`, several seeds each; the capacity is the 50% point "
              "of a logistic fit over `N` (in the load) with a 95% profile-likelihood CI that holds "
              "the seed spread and the `N` resolution. "
              + _source_text(ctx, ["factual_recall.linear_memory"]) + "\n")
    rows = []
    for g in main:
        fa, f9 = g.final_all, g.final_99
        rows.append((g.d, f"{fa.N:.1f} {fmt_ci(fa.N_ci_low, fa.N_ci_high, f='{:.1f}')}",
                     f"{f9.N:.1f} {fmt_ci(f9.N_ci_low, f9.N_ci_high, f='{:.1f}')}",
                     f"{g.theory.N:.1f}", f"{fa.threshold:.3f}",
                     f"{g.theory.alpha:.3f} +- {g.theory.stderr:.4f}",
                     f"{g.ratio_all:.3f}", f"{g.ratio_99:.3f}",
                     f"{g.steps} / {g.converged['all']}"))
    md.append(md_table(["d", "N_all [95% CI]", "N_99 [95% CI]", "N theory",
                        "alpha_all = N ln N / d^2", "alpha_c_finite (theory)", "ratio all",
                        "ratio 99%", "budget B_max / converged from"], rows))
    if gauss:
        md.append("\nSphere against Gaussian embeddings, same draws (`g / |g|` against "
                  "`g / sqrt(d)`), same trainer:\n")
        gds = {h.d for h in gauss}
        gr = [(g.d, g.inputs, g.outputs, f"{g.final_all.threshold:.3f}",
               fmt_ci(g.final_all.ci_low, g.final_all.ci_high), f"{g.theory.alpha:.3f}",
               f"{g.ratio_all:.3f}")
              for g in sorted([g for g in groups if g.lr == s.main_lr],
                              key=lambda g: (g.d, g.inputs, g.outputs)) if g.d in gds]
        md.append(md_table(["d", "inputs", "outputs", "alpha_all", "95% CI", "theory", "ratio"], gr))
    quoted = data["linear_memory_vs_theory"].setdefault("quoted", {})
    md.append("\n" + _linear_reading(s, quoted) + "\n")
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    dd = np.array([g.d for g in main])
    ax[0].plot(s.curve_d, s.curve_alpha, "k-", zorder=THEORY_ZORDER,
               label=r"theory: finite-$p$ replica $\alpha_c$, self-consistent")
    for crit, mk, lab in (("all", "o", "sphere memory, all recalled"),
                          ("99", "s", "sphere memory, 99%")):
        y = np.array([g.final(crit).threshold for g in main])
        lo = np.array([g.final(crit).ci_low for g in main])
        hi = np.array([g.final(crit).ci_high for g in main])
        off = 1.0 if crit == "all" else 1.04
        ax[0].errorbar(dd * off, y, yerr=[np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)],
                       fmt=mk, capsize=3, label=lab)
    for g in gauss:
        if g.inputs == "gaussian":
            fa = g.final_all
            ax[0].errorbar([g.d * 0.96], [fa.threshold],
                           yerr=[[fa.threshold - fa.ci_low], [fa.ci_high - fa.threshold]],
                           fmt="^", c="C3", capsize=3,
                           label=("Gaussian in/out (OP data), all recalled"
                                  if g.d == gauss[0].d else None))
    ax[0].set_xscale("log", base=2)
    ax[0].set(xlabel=r"dimension $d$", ylabel=r"capacity load $N\ln N/d^2$",
              title=r"linear memory vs finite-$p$ replica theory")
    legend_outside(ax[0], below=True)
    dcol = {d: f"C{i}" for i, d in enumerate(sorted({g.d for g in groups}))}
    lrs = sorted({g.lr for g in groups})
    styles = dict(zip(lrs, ["--", "-", ":", "-."])) if len(lrs) <= 4 else {}
    for g in groups:
        if g.inputs != "sphere" or g.outputs != "sphere":
            continue
        b = np.array([r.budget for r in g.fits.all])
        y = np.array([r.threshold for r in g.fits.all]) / g.theory.alpha
        ax[1].plot(b, y, styles.get(g.lr, "-"), c=dcol[g.d], marker="o", ms=3,
                   label=f"d={g.d}, lr={g.lr:g}")
    ax[1].axhline(1.0, c="k", lw=0.8, zorder=THEORY_ZORDER, label="theory")
    ax[1].set_xscale("log", base=2)
    ax[1].set(xlabel=r"step budget $B$ (Adam steps)", ylabel="measured / theory load (all recalled)",
              title="budget study")
    legend_outside(ax[1], below=True, ncol=2)
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "fr_linear_vs_theory.png"))
    md.append(f"\n![linear memory vs theory]({figs[-1]})\n")
    data["linear_memory_vs_theory"]["render_cpu_seconds"] = time.process_time() - t0
    return s


def _where(groups, pred):
    return [g.d for g in groups if pred(g)]


def _linear_reading(s, quoted=None):
    quoted = {} if quoted is None else quoted   # derived numbers the text quotes (-> report.json)
    main = s.main()
    if not main:
        return "No stored linear-memory trials were found."
    txt = ("**Cross-paper check.** Measured over predicted capacity load (criterion: all "
           "recalled), sphere embeddings: " + ", ".join(
               f"{g.ratio_all:.3f} at d = {g.d}" + (" (theory inside the CI)" if g.theory_inside()
                                                    else " (theory outside the CI)")
               for g in main) + ". ")
    gg = s.gaussian(both=True)
    if gg:
        txt += ("With Gaussian inputs and outputs (the OP data the theory is computed for): "
                + ", ".join(f"{g.ratio_all:.3f} at d = {g.d}"
                            + (" (theory inside the CI)" if g.theory_inside()
                               else " (theory outside the CI)") for g in gg) + ". ")
        inside = _where(gg, lambda g: g.theory_inside())
        txt += (f"The prediction, with no free parameter, lies inside the 95% CI of the Gaussian "
                f"memory {_at(inside, [g.d for g in gg])}. ")
    if len(main) >= 2:
        ys = [g.final_all.threshold for g in main]
        th = [g.theory.alpha for g in main]
        both = all(b < a for a, b in zip(ys, ys[1:])) and all(b < a for a, b in zip(th, th[1:]))
        txt += (f"From d = {main[0].d} to d = {main[-1].d} the sphere memory's capacity load goes "
                f"from {ys[0]:.3f} to {ys[-1]:.3f} and the prediction from {th[0]:.3f} to "
                f"{th[-1]:.3f}" + (": both decrease at every step in d. " if both else ". "))
    pairs = []
    for g in gg:
        m_ = next((x for x in main if x.d == g.d), None)
        if m_ is not None:
            out = not (g.final_all.ci_low <= m_.final_all.threshold <= g.final_all.ci_high)
            pairs.append((g.d, m_.final_all.threshold / g.final_all.threshold - 1, out))
    if pairs:
        quoted["sphere_over_gaussian_minus_1"] = {str(d): x for d, x, _ in pairs}
        txt += ("Unit-sphere against Gaussian outputs on the same draws: "
                + ", ".join(f"{100 * x:+.1f}% at d = {d}"
                            + (" (outside the Gaussian CI)" if out else " (inside the Gaussian CI)")
                            for d, x, out in pairs) + ". ")
    above = _where(main, lambda g: g.final_all.ci_low > g.theory.alpha)
    below = _where(main, lambda g: g.final_all.ci_high < g.theory.alpha)
    ds = [g.d for g in main]
    txt += (f"The sphere memory's CI lies above the prediction {_at(above, ds)}"
            + (f" and below it {_at(below, ds)}" if below else "")
            + " (docs/factual_recall.md#memories-against-theory discusses the sphere "
            "normalisation). ")
    same = _where(main, lambda g: g.final_all.ci_low <= g.final_99.threshold <= g.final_all.ci_high)
    txt += (f"The 99% criterion's threshold lies inside the all-recalled CI {_at(same, ds)} (below "
            f"`N = {_ALL_BELOW}` the two criteria are the same). ")
    nc = [g.d for g in main if g.converged["all"] is None]
    if nc:
        txt += f"The budget study has not converged at d = {nc} (threshold still moving). "
    else:
        txt += ("Budget study (right panel): the threshold stops moving within its CI by "
                "B = " + ", ".join(f"{g.converged['all']}" for g in main)
                + " steps at d = " + ", ".join(str(g.d) for g in main) + ". ")
        for d in sorted({g.d for g in s.groups}):
            same_d = [g for g in s.groups if g.d == d and g.inputs == g.outputs == "sphere"]
            if len(same_d) < 2:
                continue
            th_ = [g.final_all for g in same_d]
            agree = all(f.ci_low <= h.threshold <= f.ci_high for f in th_ for h in th_)
            txt += (f"At d = {d} the learning rates {', '.join(f'{g.lr:g}' for g in same_d)} end at "
                    f"thresholds {', '.join(f'{f.threshold:.3f}' for f in th_)}"
                    + (" (each inside the others' CIs). " if agree
                       else " (not all inside each other's CIs). "))
    return txt


# ---------------------------------------------------------------------------- 6. MLP memory

def _c_ci(r, crit):
    c, lo, hi = r.c(crit)
    return f"{c:.2f} {fmt_ci(max(lo, 0.0), hi, f='{:.2f}')}"


def _mlp(ctx, md, data, figs):
    import matplotlib.pyplot as plt

    ctx.progress("factual_recall: theory 2/4 MLP memory vs counting bounds")
    run, src = run_study(ctx, "factual_recall.mlp_memory")
    sm = run.outcome
    cover = 2 * COVER_PER_WEIGHT
    data["mlp_memory"] = {
        "c": sm.pooled_99.c, "ci": [sm.pooled_99.ci_low, sm.pooled_99.ci_high],
        "criterion": "99% recalled, N = c m d",
        "c_all": sm.pooled_all.c, "ci_all": [sm.pooled_all.ci_low, sm.pooled_all.ci_high],
        "cover_bound": cover,
        "cover_bound_note": "2 facts per adjustable weight (Cover 1965; Gardner 1988, zero "
                            "margin) x the paper's 2 m d parameters, in units of m d",
        "cover_effective": {f"{r.d}x{r.m}": r.bounds.cover_effective for r in sm.best},
        "spread": [sm.spread_low, sm.spread_high],
        "configs": [{"d": r.d, "m": r.m, "steps": r.steps, "params": r.bounds.params,
                     "effective_weights": r.bounds.effective_weights, "c_99": r.c_99,
                     "c_99_ci": [r.c_99_ci_low, r.c_99_ci_high], "c_all": r.c_all,
                     "c_all_ci": [r.c_all_ci_low, r.c_all_ci_high],
                     "cover_effective": r.bounds.cover_effective, "converged": r.converged,
                     "trials": r.trials} for r in sm.configs],
        "pooled_over": [f"{r.d}x{r.m} ({r.steps} steps)" for r in sm.best],
        "source": src}
    lp = MLP_PLAN["long"]
    md.append("\n### 6. The MLP memory against the counting bounds\n")
    md.append(f"Two output classes, width `m`, `N = c m d` facts for `c` in {min(MLP_PLAN['c']):g}.."
              f"{max(MLP_PLAN['c']):g}, {MLP_PLAN['seeds']} seeds, constant-rate Adam (lr "
              f"{MLP_PLAN['lr']:g}) up to {MLP_PLAN['steps']} steps (and {lp['steps']} steps, "
              f"{lp['seeds']} seeds, `c` >= {min(lp['c']):g}, where {MLP_PLAN['steps']} had not "
              "converged), stopped when all facts are recalled; `c` is the 50% point of a logistic "
              "fit over `N / (m d)` with its 95% profile-likelihood CI. "
              + _source_text(ctx, ["factual_recall.mlp_memory"]) + "\n")
    md.append(md_table(["d", "m", "steps", "c (99%) [95% CI]", "c (all) [95% CI]",
                        "facts / effective weight (99%)",
                        "Cover, effective weights 2(md+2m)/(md)", "Cover, 2md params",
                        "converged from (99% / all)"],
                       [(r.d, r.m, r.steps, _c_ci(r, "99"), _c_ci(r, "all"),
                         f"{r.per_effective_weight('99')[0]:.2f}", f"{r.bounds.cover_effective:.2f}",
                         f"{r.bounds.cover_bound:.0f}",
                         f"{r.converged['99']} / {r.converged['all']}") for r in sm.configs]))
    md.append("\n(CI ends below 0 are shown as 0: the fit's range extends below the grid; "
              "facts per effective weight = `c m d / (m d + 2 m)`.)\n")
    md.append("\n" + _mlp_reading(sm) + "\n")
    fig, ax = plt.subplots(figsize=(8, 3.8))
    rows = sm.configs
    xs = np.arange(len(rows))
    for crit, mk, off, lab in (("99", "o", -0.1, "measured c, 99%"),
                               ("all", "s", 0.1, "measured c, all recalled")):
        y = np.array([r.c(crit)[0] for r in rows])
        lo = np.array([max(r.c(crit)[1], 0.0) for r in rows])
        hi = np.array([r.c(crit)[2] for r in rows])
        ax.errorbar(xs + off, y, yerr=[np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)],
                    fmt=mk, capsize=3, label=lab)
    ax.plot(xs, [r.bounds.cover_effective for r in rows], "k_", ms=18, mew=2, zorder=THEORY_ZORDER,
            label=f"Cover/Gardner, effective weights: {COVER_PER_WEIGHT:g} + {2 * COVER_PER_WEIGHT:g}/d")
    ax.axhline(cover, c="gray", ls="--", lw=1, zorder=THEORY_ZORDER,
               label=rf"Cover/Gardner on $2md$ parameters: {cover:g}")
    ax.set_xticks(xs, [f"{r.d}x{r.m}\n{r.steps // 1024}k" for r in rows])
    ax.set(xlabel=r"$d\times m$, step budget (k = 1024 Adam steps)", ylabel=r"$c = N/(md)$",
           ylim=(0, 4.5), title="MLP memory, two classes")
    legend_outside(ax, below=True, ncol=2)
    figs.append(ctx.savefig(fig, "fr_mlp_vs_counting.png"))
    md.append(f"\n![MLP memory vs counting bounds]({figs[-1]})\n")
    return sm


def _versus(lo, hi, ref):
    return "inside" if lo <= ref <= hi else ("above" if lo > ref else "below")


def _mlp_reading(sm):
    p, pa = sm.pooled_99, sm.pooled_all
    base = sm.best
    one = all(p.ci_low <= r.c_99 <= p.ci_high for r in base)
    txt = (f"Pooled over the {len(base)} configurations at {sm.base_steps} steps: "
           f"**c = {p.c:.2f}** (99% criterion; 95% CI {fmt_ci(p.ci_low, p.ci_high, f='{:.2f}')}; "
           f"all-recalled criterion c = {pa.c:.2f} {fmt_ci(pa.ci_low, pa.ci_high, f='{:.2f}')}); "
           f"the per-configuration values range over {sm.spread_low:.2f}..{sm.spread_high:.2f}, "
           + ("all inside the pooled CI: consistent with one `c` over these sizes. " if one else
              "outside the pooled CI, so `c` is not one constant over these sizes and the pooled "
              "value is a summary, not a law. "))
    pairs = sm.longer()
    if pairs:
        ok = [b.c_99_ci_low <= r.c_99 <= b.c_99_ci_high for r, b in pairs]
        txt += (f"The {pairs[0][0].steps}-step runs put "
                + ("every configuration they repeat inside the CI of its "
                   f"{sm.base_steps}-step value: the budget has converged. " if all(ok)
                   else f"{sum(ok)} of {len(ok)} configurations inside the CI of the "
                   f"{sm.base_steps}-step value: the budget has not fully converged. "))
    big = [r for r in base if r.m >= 16]
    if big:
        c9 = [r.c_99 for r in big]
        fpp_hi = [r.c_99_ci_high / 2 for r in big]
        eff = [r.per_effective_weight("99") for r in big]
        effa = [r.per_effective_weight("all") for r in big]
        v = [_versus(lo, hi, COVER_PER_WEIGHT) for _, lo, hi in eff]
        ve = [_versus(r.c_99_ci_low, r.c_99_ci_high, r.bounds.cover_effective) for r in big]
        txt += ("**Against the counting bounds** "
                "(docs/factual_recall.md#mlp-memory-against-counting-bounds). Cover's function "
                f"counting and Gardner's zero-margin capacity give {COVER_PER_WEIGHT:g} random facts "
                "per adjustable weight of a single threshold unit; counted on the paper's `2 m d` "
                f"parameters that is `c = {2 * COVER_PER_WEIGHT:g}`. Measured for `m >= 16`: "
                f"c = {min(c9):.2f}..{max(c9):.2f}, i.e. {min(c9) / 2:.2f}..{max(c9) / 2:.2f} facts "
                f"per parameter (upper CI ends {min(fpp_hi):.2f}..{max(fpp_hi):.2f}"
                + (f", all below {COVER_PER_WEIGHT:g}). " if max(fpp_hi) < COVER_PER_WEIGHT else "). ")
                + "With two classes `W2` acts only through the `m` numbers `a = W2^T (u_1 - u_2)`, "
                "so the memory has `m d + 2 m` effective weights; per effective weight it stores "
                f"{min(e[0] for e in eff):.2f}..{max(e[0] for e in eff):.2f} facts at 99% "
                f"({min(e[0] for e in effa):.2f}..{max(e[0] for e in effa):.2f} with all recalled); "
                f"the single-unit value {COVER_PER_WEIGHT:g} lies inside the CI of {v.count('inside')} "
                f"of these {len(big)} configurations, the CI is above it in {v.count('above')} and "
                f"below it in {v.count('below')}. Against the effective-weight reference "
                f"`c = {COVER_PER_WEIGHT:g} + {2 * COVER_PER_WEIGHT:g}/d`: inside the CI in "
                f"{ve.count('inside')}, CI above in {ve.count('above')}, below in {ve.count('below')}. "
                "(These are single-unit numbers: a network with hidden units may store more per "
                "weight, so they are reference points, not bounds.) ")
    for r in base:
        if r.m >= 16:
            continue
        e, lo, hi = r.per_effective_weight("99")
        txt += (f"The smallest memory (d = {r.d}, m = {r.m}): c = {r.c_99:.2f}, {e:.2f} facts per "
                f"effective weight {fmt_ci(max(lo, 0.0), hi, f='{:.2f}')}, "
                f"{_versus(lo, hi, COVER_PER_WEIGHT)} the single-unit value. ")
    return txt


# ---------------------------------------------------------------------------- 7. escape times

def _escape(ctx, md, data, figs):
    import matplotlib.pyplot as plt

    ctx.progress("factual_recall: theory 3/4 saddle-escape times")
    run, src = run_study(ctx, "factual_recall.escape_times")
    es = run.outcome
    recs = [(r["params"], r["result"]) for r in run.results if r is not None and r["status"] == "ok"]
    pl = ESCAPE_PLAN
    slopes, ci = {}, {}
    for st in ("relation", "subject"):
        e = es[st]
        slopes[f"{st}_init_scaled"] = e.init_slope_scaled.slope
        ci[f"{st}_init_scaled"] = [e.init_slope_scaled.ci_low, e.init_slope_scaled.ci_high]
        if e.lr_exponent is not None:
            slopes[f"{st}_lr_exponent"] = e.lr_exponent.slope
            ci[f"{st}_lr_exponent"] = [e.lr_exponent.ci_low, e.lr_exponent.ci_high]
    lam = escape_rates(pl["S"], pl["R"], pl["D"])
    data["escape_times"] = {"slopes": slopes, "ci": ci, "fits": es, "plan": dict(pl),
                            "theory": {"init_scaled": 1.0, "lr_exponent_flow": -1.0, "rates": lam},
                            "trials": [dict(p, **r) for p, r in recs], "source": src}
    md.append("\n### 7. Escape times from the plateaus\n")
    md.append(f"Model of part 4 (`S = {pl['S']}`, `R = {pl['R']}`, `D = {pl['D']}`, "
              f"`T = {pl['T']}`), init scale in {list(pl['inits'])}, lr in {list(pl['lrs'])}, "
              f"{pl['seeds']} seeds. Escape step = first step where the relation (subject) "
              "loss falls below half its initial value. Gradient-flow prediction at the saddle "
              "(docs/factual_recall.md#escape-times): each token's score and value column form a "
              "bilinear pair whose unstable mode grows at rate `lambda = |M_v|`, "
              f"`lambda_rel = sqrt((1 - 1/R)/D)/R = {lam.relation:.5f}`, "
              f"`lambda_subj = sqrt((1 - 1/D)/R)/S = {lam.subject:.5f}`, so the escape step is "
              "`ln(1/init) / ln(1 + lr lambda)` + const: slope 1 of "
              "`ln(1 + lr lambda) t` against `ln(1/init)`, and `t ~ 1/lr` (exponent -1 in "
              "gradient flow). " + _source_text(ctx, ["factual_recall.escape_times"]) + "\n")
    rows = []
    for st in ("relation", "subject"):
        e = es[st]
        for lr, f in e.init_slope.items():
            rows.append((st, f"dt/d ln(1/init), lr={lr}", f"{f.slope:.2f}",
                         fmt_ci(f.ci_low, f.ci_high, f="{:.2f}"), f"{f.theory:.2f}"))
        f = e.init_slope_scaled
        rows.append((st, "d[ln(1+lr lambda) t]/d ln(1/init), all lr", f"{f.slope:.3f}",
                     fmt_ci(f.ci_low, f.ci_high), f"{f.theory:g}"))
        if e.lr_exponent is not None:
            f = e.lr_exponent
            rows.append((st, f"d ln t / d ln lr (init={e.lr_exponent_init:g})",
                         f"{f.slope:.3f}", fmt_ci(f.ci_low, f.ci_high),
                         f"{e.lr_exponent_theory:.3f} (flow: {e.lr_exponent_flow:g})"))
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
            f = es[st].init_slope.get(f"{lr:g}")
            if f is not None:
                xs = np.linspace(x.min(), x.max(), 10)
                # theory slope drawn through the mean of the points (the offset is not predicted)
                ax[j].plot(xs, np.mean([p[1] for p in pts]) + f.theory * (xs - x.mean()), "-",
                           c=f"C{i}", lw=1, zorder=THEORY_ZORDER, label=f"lr={lr:g} theory slope")
        ax[j].set(xlabel=r"$\ln(1/s)$, $s$ = init scale", ylabel="escape step (GD steps)",
                  title=f"{st} plateau")
        legend_outside(ax[j], below=True, ncol=2)
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "fr_escape_times.png"))
    md.append(f"\n![escape times]({figs[-1]})\n")


def _escape_reading(es):
    parts = []
    for st in ("relation", "subject"):
        f = es[st].init_slope_scaled
        parts.append(f"{f.slope:.3f} {fmt_ci(f.ci_low, f.ci_high)} ({st}; the predicted {f.theory:g} "
                     + ("inside" if f.agrees() else "outside") + " the CI)")
    return ("Pooled over the learning rates, `ln(1 + lr lambda) t` grows with `ln(1/init)` "
            "at slope " + " and ".join(parts) + ".")


# ---------------------------------------------------------------------------- 8. budget study

def _budget(ctx, md, data, figs, lin, sm):
    ctx.progress("factual_recall: theory 4/4 transformer budget study")
    run, src = run_study(ctx, "factual_recall.transformer_budget")
    tb = run.outcome
    tp = TRANSFORMER_PLAN
    data["budget_study"] = {
        "transformer": {"shape": dict(zip(("d", "H", "d_h", "m"), tp["shape"]), D=tp["D"],
                                      T=tp["T"], batch=tp["batch"]),
                        "params": tb.params, "rows": tb.rows,
                        "converged": tb.converged, "source": src},
        "linear_memory": {"converged_budget": {str(g.d): g.converged["all"] for g in lin.main()},
                          "detail": "factual_recall.linear_memory_vs_theory.budget_study"},
        "mlp_memory": {"converged_budget": {f"{r.d}x{r.m}": r.converged["99"] for r in sm.best},
                       "detail": "factual_recall.mlp_memory.configs"}}
    d_, H_, dh_, m_ = tp["shape"]
    md.append("\n### 8. Budget study of the transformer (small size)\n")
    md.append(f"One shape of part 2 (`d = {d_}`, `H = {H_}`, `d_h = {dh_}`, `m = {m_}`, "
              f"{tb.params} parameters; `D = {tp['D']}`, `T = {tp['T']}`, batch "
              f"{tp['batch']}), facts in {list(tp['facts'])} (square split), {tp['seeds']} "
              "seeds. Constant-rate Adam runs give every budget from one run (accuracy on "
              f"every fact, evaluated every {tp['constant']['eval_every']} steps on fresh "
              "sequences); cosine runs (the schedule of part 2) are one budget each. Capacity = "
              "50% point of the logistic fit of success (>= 99% recalled) over the number of "
              "facts. " + _source_text(ctx, ["factual_recall.transformer_budget"]) + "\n")
    md.append(md_table(["schedule", "lr", "budget (steps)", "facts at 99% [95% CI]",
                        "facts / param", "successes / trials"],
                       [(r.schedule, f"{r.lr:g}", r.budget,
                         f"{r.facts:.1f} {fmt_ci(r.ci_low, r.ci_high, f='{:.1f}')}",
                         f"{r.facts_per_param:.4f}", f"{r.successes} / {r.trials}")
                        for r in tb.rows]))
    md.append("\n" + _budget_reading(tb) + "\n")


def _budget_reading(tb):
    best = tb.best()
    if best is None:
        return "No configuration stored any fact on this grid."
    conv = ", ".join(f"lr {k}: {v}" for k, v in tb.converged.items())
    ds = sorted({c[0] for c in FPP_PLAN["configs"]})
    return (f"Largest capacity on this grid: {best.facts:.1f} facts "
            f"({best.facts_per_param:.4f} facts per parameter; {best.schedule}, lr "
            f"{best.lr:g}, {best.budget} steps). Budget from which the constant-rate "
            f"capacity stops moving within its CI: {conv}. Only one small shape at "
            f"`T = {TRANSFORMER_PLAN['T']}` here; part 9 repeats the budget check at "
            f"`T = {FPP_PLAN['T']}` for every configuration of the facts-per-parameter study "
            f"(`d` = {ds[0]}-{ds[-1]}, the paper's ratios).")
