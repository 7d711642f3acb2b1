"""Report section ``listwise``: top-1 or top-k -- exact TAM and margin thresholds, the Hebbian memory.

Renders the studies ``linear_memory.listwise`` (exact decisions under the
tail-average margin and top-1 at a margin, against the finite-``p`` replica
predictions) and ``linear_memory.listwise_hebbian`` (the Hebbian memory under
both criteria), :mod:`validation.studies.linear_memory_listwise`.  Quick mode
replays their committed stores; full mode runs the planned trials on stores in
the report folder seeded from the committed ones.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

__all__ = ["build"]

KEY = "listwise"
TITLE = "Top-1 or top-k: listwise (tail-average margin) capacity and capacity at a margin"
DOCS = "docs/listwise.md"  # model and derivations; linked under the section heading


def _run(ctx, name, fname):
    from validation.studies import get_study

    study = get_study(name)
    run = study.run(compute=not ctx.quick, store=None if ctx.quick else ctx.out / fname,
                    executor=ctx.executor, missing="skip")
    stored = f"validation/studies/stored/{study.stored}"
    if ctx.quick:
        src = f"read from the committed store `{stored}` (quick mode computes nothing)"
    else:
        src = (f"computed on `{Path(run.store).name}` in the report folder, seeded from `{stored}` "
               f"({run.reused} reused, {run.computed} computed)")
    return run, src


def _fmt(x, nd=4):
    return "-" if x is None or not math.isfinite(x) else f"{x:.{nd}f}"


def build(ctx):
    """Build the report section ``listwise``: exact TAM / margin thresholds and the Hebbian memory.

    Parameters
    ----------
    ctx : validation.report.Context
        The report context: quick or full mode, output folder, figure saving
        and progress.

    Returns
    -------
    SectionResult
        Markdown, the ``report.json`` entry ``listwise`` (``theory``,
        ``exact``, ``hebbian``, ``trained``) and the figure.

    References
    ----------
    arXiv:2605.05189; docs/listwise.md
    """
    from replica import tam_capacity
    from validation.sections.base import SectionResult, md_table
    from validation.studies.linear_memory_listwise import HEBBIAN_TAUS

    t0 = time.perf_counter()
    ex_run, ex_src = _run(ctx, "linear_memory.listwise", "linear_memory_listwise.jsonl")
    hb_run, hb_src = _run(ctx, "linear_memory.listwise_hebbian", "linear_memory_listwise_hebbian.jsonl")
    tr_run, tr_src = _run(ctx, "linear_memory.listwise_trained", "linear_memory_listwise_trained.jsonl")
    exact = ex_run.outcome
    hebb = hb_run.outcome

    taus = (0.01, 0.05, 0.2, 0.5, 1.0)
    margins = (0.0, 0.1, 0.5)
    limits = {f"{t:g}": {f"{g:g}": float(tam_capacity(t, margin=g)) for g in margins} for t in taus}
    data = {"theory": {"tam_limit": limits, "top1_limit": 0.5}, "exact": {}, "hebbian": {}, "trained": {}}
    trows, same, paired_total = [], 0, 0
    for (model, label, d), r in sorted(tr_run.outcome.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
        data["trained"].setdefault(model, {}).setdefault(str(d), {})[label] = r.to_dict()
        (both, t_only), (e_only, neither) = r.paired
        same += both + neither
        paired_total += both + t_only + e_only + neither
        trows.append([model.upper(), d, label, f"{_fmt(r.threshold)} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]",
                      f"{_fmt(r.exact_threshold)} [{_fmt(r.exact_ci_low)}, {_fmt(r.exact_ci_high)}]",
                      _fmt(r.theory), r.verdict_theory, r.verdict_exact,
                      f"{both + neither} of {both + t_only + e_only + neither}", r.instances, r.steps_budget])

    rows = []
    for (model, label, d), r in sorted(exact.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0])):
        data["exact"].setdefault(model, {}).setdefault(str(d), {})[label] = r.to_dict()
        unit = "n/d^2" if r.criterion == "tam" else "n ln n/d^2"
        rows.append([model.upper(), d, label, unit, f"{_fmt(r.threshold)} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]",
                     f"{_fmt(r.theory)} ± {_fmt(r.theory_stderr, 5)}", _fmt(r.theory_limit),
                     _fmt(r.threshold / r.theory, 3) if math.isfinite(r.threshold) else "-", r.verdict,
                     f"{r.instances} ({r.undecided} undecided, {r.unverified} unverified)",
                     f"{r.cpu_seconds_per_instance:.2f}"])
    n_agree = sum(r.verdict == "agrees" for r in exact.values())
    n_fit = sum(r.verdict in ("agrees", "differs") for r in exact.values())
    ratios = [r.threshold / r.theory for r in exact.values() if math.isfinite(r.threshold)]
    hrows = []
    for (model, d, label), r in sorted(hebb.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        data["hebbian"].setdefault(model, {}).setdefault(str(d), {})[label] = r.to_dict()
        hrows.append([model.upper(), d, label, f"{_fmt(r.threshold)} [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]",
                      _fmt(r.n_threshold, 1),
                      _fmt(r.theory) + (f" ± {r.theory_stderr:.4f}" if r.theory_stderr else ""), r.verdict,
                      r.instances])
    fitted_h = [r for r in hebb.values() if r.verdict in ("agrees", "differs")]
    h_groups = [("Top-1", [r for r in fitted_h if r.criterion == "top1"]),
                ("TAM, DP", [r for r in fitted_h if r.criterion != "top1" and r.model == "dp"]),
                ("TAM, OP", [r for r in fitted_h if r.criterion != "top1" and r.model == "op"])]

    fig_name = _figure(ctx, exact, hebb, HEBBIAN_TAUS)
    md = [
        "Exact decisions (a memory meeting the criterion exists or not, with a verified certificate; "
        "`validation.linear_memory.exact_listwise`) for OP and DP facts, against the finite-p "
        "replica predictions `replica.tam_capacity(tau, n)` and `replica.alpha_c_finite(p, margin=)` at "
        f"the same d (docs: [listwise.md]({_href(ctx)})). Exact decisions: {ex_src}. Hebbian memory: {hb_src}.",
        "",
        md_table(["model", "d", "case", "load", "exact threshold [95% CI]", "theory ± s.e.",
                  "large-p limit", "exact / theory", "verdict", "instances", "CPU s / instance"], rows),
        "",
        (f"The prediction lies inside the 95% interval in {n_agree} of {n_fit} fitted cases; exact / theory "
         f"ranges from {min(ratios):.3f} to {max(ratios):.3f}." if ratios else "No case has a fitted threshold."),
        "",
        "**Hebbian memory** `sum_mu c_mu e_mu^T` (no solver): load where *all* facts pass with probability "
        "1/2 (top-1: `n ln n / d^2`; TAM: `n / d^2`), against the conditional Hebbian model: "
        "`replica.hebbian_threshold(d, problem=...)` for top-1, `replica.hebbian_tam_threshold(d, tau, "
        "problem=...)` for TAM (exact given the per-input scalars for DP; the scalar model by Monte Carlo, ± its "
        "standard error, for OP).",
        "",
        md_table(["model", "d", "criterion", "threshold [95% CI]", "n at threshold", "conditional model", "verdict",
                  "instances"], hrows),
        "",
        " ".join(f"{name}: the conditional Hebbian model lies inside the interval in "
                 f"{sum(r.verdict == 'agrees' for r in sel)} of {len(sel)} fits." for name, sel in h_groups if sel),
        "",
        "**Trained memories** (full-batch Adam on the squared hinge of the TAM condition, stopped at the first "
        "step at which every fact meets it; `validation.linear_memory.train_listwise`, the same instances as "
        f"the exact decisions; {tr_src}): trained threshold against the exact one and the theory; "
        "'paired' counts the instances decided by both on which training succeeds exactly where a memory "
        "exists.",
        "",
        md_table(["model", "d", "case", "trained threshold [95% CI]", "exact threshold [95% CI]", "theory",
                  "trained vs theory", "trained vs exact", "paired: same outcome", "instances", "step budget"],
                 trows),
        "",
        (f"Training and the exact decision give the same outcome on {same} of {paired_total} paired instances."
         if paired_total else ""),
        "",
        f"Regenerate: `nice -n 10 python -m validation study linear_memory.listwise --workers 1` and "
        f"`python -m validation study linear_memory.listwise_hebbian`; "
        f"`nice -n 10 python -m validation study linear_memory.listwise_trained`.",
        "",
    ]
    figs = []
    if fig_name:
        md.insert(4, f"![listwise thresholds]({fig_name})\n")
        figs = [fig_name]
    ctx.progress(f"listwise: done in {time.perf_counter() - t0:.1f} s")
    return SectionResult("\n".join(md), data, figs)


def _href(ctx):
    from validation.sections.base import docs_href

    return docs_href("docs/listwise.md#exact-decisions", ctx.out)


def _figure(ctx, exact, hebb, taus):
    import matplotlib.pyplot as plt
    import numpy as np

    from replica import p_from_load
    from validation.sections.figstyle import THEORY_ZORDER, legend_outside

    tam0 = {k: r for k, r in exact.items() if r.criterion == "tam" and r.margin == 0 and math.isfinite(r.threshold)}
    if not tam0 and not hebb:
        return None
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(17, 4.6))
    for model, mk, col in (("op", "o", "C0"), ("dp", "s", "C1")):
        sel = sorted((r for r in tam0.values() if r.model == model and r.d == 20), key=lambda r: r.tau)
        if sel:
            x = np.array([r.tau for r in sel]) * (0.93 if model == "op" else 1.07)
            y = np.array([r.threshold for r in sel])
            a1.errorbar(x, y, yerr=[y - [r.ci_low for r in sel], [r.ci_high for r in sel] - y], fmt=mk, color=col,
                        capsize=3, label=f"exact {model.upper()}, d = 20")
    th = sorted({(r.tau, r.theory, r.theory_limit) for r in tam0.values() if r.d == 20})
    if th:
        a1.plot([t[0] for t in th], [t[1] for t in th], "k^--", zorder=THEORY_ZORDER,
                label=r"finite-$p$ RS at $d$ = 20")
        a1.plot([t[0] for t in th], [t[2] for t in th], "k:", zorder=THEORY_ZORDER,
                label=r"large-$p$ limit $1/\Gamma(\kappa_\tau)$")
    a1.set_xscale("log")
    a1.set_xlabel(r"tail fraction $\tau$")
    a1.set_ylabel(r"threshold load $n/d^2$")
    a1.set_title("TAM at zero margin")
    legend_outside(a1, below=True, ncol=2)
    # exact / theory for every fitted case
    fitted = sorted((r for r in exact.values() if math.isfinite(r.threshold)),
                    key=lambda r: (r.criterion, r.tau or 0, r.margin, r.d, r.model))
    labels = []
    for i, r in enumerate(fitted):
        col = "C0" if r.model == "op" else "C1"
        a2.errorbar(i, r.threshold / r.theory, yerr=[[(r.threshold - r.ci_low) / r.theory],
                                                     [(r.ci_high - r.threshold) / r.theory]],
                    fmt="o" if r.model == "op" else "s", color=col, capsize=3)
        labels.append(f"{r.model} d{r.d} {r.criterion}" + (f" {r.tau:g}" if r.tau else "") + f" g{r.margin:g}")
    a2.axhline(1.0, color="k", ls="--", lw=1, zorder=THEORY_ZORDER)
    a2.set_xticks(range(len(labels)))
    a2.set_xticklabels(labels, rotation=75)
    a2.set_xlabel(r"case (model, $d$, criterion, $\tau$, margin $g$)")
    a2.set_ylabel(r"exact threshold / finite-$p$ RS prediction")
    a2.set_title("all cases (95% CI)")
    model_labelled = False
    for model, mk in (("op", "o"), ("dp", "s")):
        for j, crit in enumerate(["top1"] + [f"tam tau={t:g}" for t in taus]):
            sel = sorted((r for r in hebb.values() if r.model == model and r.criterion == crit
                          and math.isfinite(r.n_threshold)), key=lambda r: r.d)
            if sel:
                ds = np.array([r.d for r in sel], float)
                y = np.array([r.n_threshold for r in sel]) / ds ** 2
                if crit == "top1":       # the interval of the load n ln n / d^2, as facts / d^2
                    lo = np.array([float(p_from_load(r.ci_low, r.d)) for r in sel]) / ds ** 2
                    hi = np.array([float(p_from_load(r.ci_high, r.d)) for r in sel]) / ds ** 2
                    th = np.array([float(p_from_load(r.theory, r.d)) for r in sel]) / ds ** 2
                else:
                    lo, hi, th = (np.array([getattr(r, a) for r in sel]) for a in ("ci_low", "ci_high", "theory"))
                x = ds + (-1.0 if model == "op" else 1.0)
                a3.errorbar(x, y, yerr=[y - lo, hi - y], fmt=mk, color=f"C{j}", capsize=2, ms=4,
                            label=f"Hebbian {model.upper()}, {crit}", alpha=0.9 if model == "op" else 0.6)
                a3.plot(x, th, "--" if model == "op" else ":", color=f"C{j}", lw=1.2, zorder=THEORY_ZORDER,
                        label=None if model_labelled else "conditional model (OP --, DP ..)")
                model_labelled = True
    a3.set_xlabel(r"dimension $d$")
    a3.set_ylabel(r"facts at the all-facts threshold / $d^2$")
    a3.set_title("Hebbian memory")
    legend_outside(a3)
    fig.tight_layout()
    return ctx.savefig(fig, "listwise_thresholds.png")
