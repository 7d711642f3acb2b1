"""Report section: factual recall in one-layer transformers (docs/factual_recall.md).

Rendering only: parts 1-4 are the four quick experiments of
:func:`validation.factual_recall.experiments.run_experiments` (trained in this run,
on the report's pool); parts 5-8 (:mod:`validation.sections.factual_recall_theory`),
9-10 (:mod:`validation.sections.factual_recall_capacity`) and 11
(:mod:`validation.sections.factual_recall_paper`) render the factual-recall
studies of :mod:`validation.studies`.
"""
from __future__ import annotations

import numpy as np

from validation.factual_recall import experiments as ex
from validation.factual_recall.theory import PAPER_FACTS_PER_PARAM
from validation.sections import factual_recall_capacity, factual_recall_paper, factual_recall_theory
from validation.sections.base import SectionResult, fill_doc, md_table
from validation.sections.figstyle import legend_below, legend_outside
from validation.studies.factual_recall_capacity import FPP_PLAN

KEY = "factual_recall"
TITLE = "Factual recall in one-layer transformers"
DOCS = "docs/factual_recall.md"  # model and derivations; linked under the section heading


@fill_doc
def build(ctx):
    """Build the report section ``factual_recall``: factual recall in one-layer transformers and associative memories.

    %(section_build)s

    References
    ----------
    arXiv:2412.06538; arXiv:2605.10795; docs/factual_recall.md#measured-results
    """
    import matplotlib.pyplot as plt

    md, data, figs = [], {}, []
    ctx.progress("factual_recall: experiments 1-4 on the worker pool")
    res = ex.run_experiments(ex.EXPERIMENTS, quick=ctx.quick, seed=ctx.seed, executor=ctx.executor,
                             workers=2)
    mode = "quick" if ctx.quick else "full"
    cmd = "python -m validation factual-recall {} " + ("--quick " if ctx.quick else "") + \
        f"--seed {ctx.seed}"

    # ---------------------------------------------------------------- 1. memories
    ctx.progress("factual_recall: 1/4 associative-memory capacity")
    mem = res["memory"]
    data["memory"] = mem
    lf, mf = mem["linear_fit"], mem["mlp_fit"]
    md.append("### 1. Associative-memory capacity\n")
    md.append(f"Largest `N` recalled at >= {mem['threshold']:.0%} accuracy (bisection over `N`, "
              f"one seed per size, {mem['linear_steps']} / {mem['mlp_steps']} full-batch Adam "
              f"steps for linear / MLP). MLP memories map `N` inputs to "
              f"{mem['mlp_classes']} random classes. Same experiment: `{cmd.format('memory')}`.\n")
    md.append(md_table(["d", "params d^2", "N", "N ln N / d^2"],
                       [(r["d"], r["params"], r["N"], r["c"]) for r in mem["linear"]],
                       {3: ".3f"}))
    md.append(f"\nFit `N ln N = c d^2`: c = {lf['value']:.3f} +- {lf['stderr']:.3f} "
              f"(per-size ratios {lf['info']['ratio_min']:.3f}..{lf['info']['ratio_max']:.3f}). "
              f"With {mem['linear_steps']} steps and one seed per size this is a lower bound on the "
              f"capacity, not a measurement of it: part 5 measures the same memory to convergence "
              f"(many seeds, step budget checked) against the finite-p replica capacity.\n")
    md.append(md_table(["d", "m", "params 2md", "N", "N / (m d)"],
                       [(r["d"], r["m"], r["params"], r["N"], r["c"]) for r in mem["mlp"]],
                       {4: ".3f"}))
    md.append(f"\nFit `N = c m d`: c = {mf['value']:.3f} +- {mf['stderr']:.3f} (per-size "
              f"ratios {mf['info']['ratio_min']:.3f}..{mf['info']['ratio_max']:.3f}). At these "
              f"sizes {mem['threshold']:.0%} of `N < {round(1 / (1 - mem['threshold']))}` facts "
              f"means no error at all, so the smallest sizes are the noisiest, and a fixed step "
              f"budget makes large sizes lower bounds.\n")
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    x = np.array([r["params"] for r in mem["linear"]])
    ax[0].plot(x, [r["NlnN"] for r in mem["linear"]], "o", label="measured")
    ax[0].plot(x, lf["value"] * x, "-", label=rf"$c\,d^2$, $c={lf['value']:.2f}$")
    ax[0].set(xlabel=r"$d^2$ (parameters)", ylabel=r"$N\ln N$", title="linear memory")
    legend_outside(ax[0])
    x = np.array([r["d"] * r["m"] for r in mem["mlp"]])
    ax[1].plot(x, [r["N"] for r in mem["mlp"]], "o", label="measured")
    ax[1].plot(x, mf["value"] * x, "-", label=rf"$c\,md$, $c={mf['value']:.2f}$")
    ax[1].set(xlabel=r"$md$", ylabel=r"facts stored $N$", title=f"MLP memory ({mem['mlp_classes']} classes)")
    legend_outside(ax[1])
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "fr_memory_capacity.png"))
    md.append(f"\n![associative-memory capacity]({figs[-1]})\n")

    # ---------------------------------------------------------------- 2. transformer
    ctx.progress("factual_recall: 2/4 transformer facts vs parameters")
    tr = res["transformer"]
    data["transformer"] = tr
    fpp = tr["facts_per_param"]
    data["facts_per_param"] = {"value": fpp["value"], "stderr": fpp["stderr"],
                               "ratio_min": fpp["info"]["ratio_min"],
                               "ratio_max": fpp["info"]["ratio_max"],
                               "ratio_std": fpp["info"]["ratio_std"], "n_configs": fpp["n"],
                               "mode": mode, "paper": PAPER_FACTS_PER_PARAM,
                               "paper_over_measured": PAPER_FACTS_PER_PARAM / fpp["value"]
                               if fpp["value"] > 0 else None}
    ratio = data["facts_per_param"]["paper_over_measured"]
    if ratio is None:
        cmp_txt = "ours is 0 (no configuration stored any fact at this budget)"
    elif ratio >= 1:
        cmp_txt = f"ours is {ratio:.1f}x lower"
    else:
        cmp_txt = f"ours is {1 / ratio:.1f}x higher"
    md.append("\n### 2. Facts stored vs parameters (one-layer transformer)\n")
    md.append(f"`D = {tr['D']}`, `T = {tr['T']}`, {tr['steps']} Adam steps of {tr['batch']} "
              f"fresh sequences, accuracy over every fact on {tr['eval_repeats']} fresh "
              f"sequences each; `S = R` (square split). Same experiment: "
              f"`{cmd.format('transformer')}`.\n")
    md.append(md_table(["d", "H", "d_h", "m", "H d_h / d", "m / d", "params", "facts",
                        "facts / param"],
                       [(r["d"], r["H"], r["d_h"], r["m"], r["attn_ratio"], r["mlp_ratio"],
                         r["params"], r["facts"], r["facts_per_param"]) for r in tr["rows"]],
                       {4: ".2f", 5: ".2f", 8: ".4f"}))
    md.append(f"\n**Facts per parameter: {fpp['value']:.4f} +- {fpp['stderr']:.4f}** "
              f"(slope through the origin; per-configuration ratios "
              f"{fpp['info']['ratio_min']:.4f}..{fpp['info']['ratio_max']:.4f}, std "
              f"{fpp['info']['ratio_std']:.4f}). The paper reports about "
              f"{PAPER_FACTS_PER_PARAM:g} at `D = {tr['D']}`; {cmp_txt}. Our models are much smaller "
              f"(d <= {max(r['d'] for r in tr['rows'])} against the paper's hundreds) and trained "
              f"for a fixed, short budget ({tr['steps']} steps), so these are lower bounds on what "
              f"the architecture can store at this budget; part 9 measures it at "
              f"`T = {FPP_PLAN['T']}` with budget-checked training (report key "
              f"`facts_per_param`; this part's fit moves to "
              f"`facts_per_param.fixed_budget_part2`).\n")
    fig, ax = plt.subplots(figsize=(5.5, 4.2), layout="constrained")
    x = np.array([r["params"] for r in tr["rows"]])
    sc = ax.scatter(x, [r["facts"] for r in tr["rows"]], c=[r["d"] for r in tr["rows"]], label="measured")
    xs = np.linspace(0, x.max() * 1.05, 10)
    ax.plot(xs, fpp["value"] * xs, "-", label=f"fit {fpp['value']:.3f} facts/param")
    ax.plot(xs, PAPER_FACTS_PER_PARAM * xs, ":",
            label=f"paper {PAPER_FACTS_PER_PARAM:g} facts/param")
    ax.set(xlabel=r"parameters $4Hd_hd + 2md$", ylabel="facts stored (≥ 99% recalled)",
           ylim=(0, max(r["facts"] for r in tr["rows"]) * 1.5 + 1))
    fig.colorbar(sc, ax=ax, label=r"width $d$")
    legend_below(fig, ax, ncol=1)
    figs.append(ctx.savefig(fig, "fr_transformer_capacity.png"))
    md.append(f"\n![facts stored vs parameters]({figs[-1]})\n")

    # ---------------------------------------------------------------- 3. trade-off
    ctx.progress("factual_recall: 3/4 attention / MLP trade-off")
    to = res["tradeoff"]
    data["tradeoff"] = to
    md.append("\n### 3. Trade-off between attention and MLP parameters\n")
    md.append(f"Accuracy on a fixed set of {to['facts']} facts (`S = {to['S']}`, `R = {to['R']}`, "
              f"`D = {to['D']}`, `d = {to['d']}`, `d_h = {to['d_h']}`, `T = {to['T']}`). "
              f"Rows: heads `H` (attention params `4 H d_h d`); columns: MLP width `m` "
              f"(MLP params `2 m d`). Same experiment: `{cmd.format('tradeoff')}`.\n")
    md.append(md_table(["H \\ m"] + [f"m={m} ({p})" for m, p in zip(to["m"], to["mlp_params"])],
                       [[f"H={H} ({p})"] + list(row) for H, p, row in
                        zip(to["H"], to["attention_params"], to["accuracy"])],
                       {j: ".3f" for j in range(1, len(to["m"]) + 1)}))
    accs = np.array(to["accuracy"])
    att_only = [H for H, a in zip(to["H"], accs[:, 0]) if a >= 0.99]
    md.append(f"\nAttention alone (`m = 0`) stores all {to['facts']} facts at >= 99% from "
              f"`H = {att_only[0]}` on ({to['attention_params'][to['H'].index(att_only[0])]} "
              f"attention params)." if att_only else
              f"\nAttention alone (`m = 0`) never reaches 99% on this grid.")
    lo_acc, hi_acc = accs[0, 0], accs[0, -1]
    move = ("raises" if hi_acc > lo_acc else "lowers" if hi_acc < lo_acc else "leaves")
    md.append(f" With the smallest attention (`H = {to['H'][0]}`), growing the MLP {move} the "
              f"accuracy {'at' if move == 'leaves' else 'from'} {lo_acc:.3f} (`m = 0`)"
              + ("" if move == "leaves" else f" to {hi_acc:.3f} (`m = {to['m'][-1]}`)")
              + (": the MLP stores facts that the value matrices of this attention do not."
                 if move == "raises" else ".")
              + " Attention cannot be removed entirely here (`H d_h > 0` is required): it is the "
              "only path from the subject and relation positions to EOS, so 'MLP alone' means the "
              "smallest attention row.\n")
    data["tradeoff"]["attention_only_min_H"] = att_only[0] if att_only else None
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    im = ax.imshow(np.array(to["accuracy"]), origin="lower", vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(to["m"])), [str(p) for p in to["mlp_params"]])
    ax.set_yticks(range(len(to["H"])), [str(p) for p in to["attention_params"]])
    ax.set(xlabel="MLP parameters", ylabel="attention parameters",
           title=f"accuracy, {to['facts']} facts")
    fig.colorbar(im, ax=ax, label="fraction of facts recalled")
    figs.append(ctx.savefig(fig, "fr_tradeoff.png"))
    md.append(f"\n![trade-off map]({figs[-1]})\n")

    # ---------------------------------------------------------------- 4. sequential
    ctx.progress("factual_recall: 4/4 sequential learning")
    sq = res["sequential"]
    st = sq["stages"]
    data["sequential"] = {k: v for k, v in sq.items() if k not in ("step", "total", "relation",
                                                                  "subject")}
    data["sequential"]["curves"] = {k: np.asarray(sq[k]).tolist() for k in
                                    ("step", "total", "relation", "subject")}
    data["stage_boundaries"] = {"relation_learnt": st["relation_learnt"],
                                "subject_learnt": st["subject_learnt"], "order": st["order"],
                                "plateau1": st["plateau1"], "plateau2": st["plateau2"],
                                "ln_DR": sq["ln_DR"], "ln_D": sq["ln_D"]}
    md.append("\n### 4. Sequential learning: relations before subjects\n")
    md.append(f"Linear attention with one-hot embeddings, structured facts "
              f"`a(s, r) = floor(s D / S) + r D`, `S = {sq['S']}`, `R = {sq['R']}`, "
              f"`D = {sq['D']}`, `T = {sq['T']}`, plain GD (lr {sq['lr']}, init scale "
              f"{sq['init']}). A component counts as learnt once its loss falls below 10% of "
              f"its initial value and stays there; the boundaries are read off the curves. "
              f"Same experiment: `{cmd.format('sequential')}`.\n")
    p2 = "none" if st["plateau2"] is None else f"{st['plateau2']:.3f}"
    md.append(md_table(["quantity", "measured", "theory"],
                       [("plateau 1 (total loss)", f"{st['plateau1']:.3f}", f"ln(DR) = {sq['ln_DR']:.3f}"),
                        ("plateau 2 (total loss)", p2, f"ln D = {sq['ln_D']:.3f}"),
                        ("relation learnt at step", st["relation_learnt"], "-"),
                        ("subject learnt at step", st["subject_learnt"], "-"),
                        ("order", st["order"], "relation-first"),
                        ("final total loss", f"{st['final']:.4f}", "-> 0")]))
    fig, ax = plt.subplots(figsize=(6, 3.8), layout="constrained")
    step = np.asarray(sq["step"])
    for k in ("total", "relation", "subject"):
        ax.plot(step, sq[k], label=k)
    ax.axhline(sq["ln_DR"], ls=":", c="k", lw=0.8)
    ax.axhline(sq["ln_D"], ls="--", c="k", lw=0.8)
    ax.text(step[-1], sq["ln_DR"], r" $\ln DR$", va="center")
    ax.text(step[-1], sq["ln_D"], r" $\ln D$", va="center")
    for b in (st["relation_learnt"], st["subject_learnt"]):
        if b is not None:
            ax.axvline(b, c="gray", lw=0.8)
    ax.set_xscale("symlog", linthresh=10)
    ax.set(xlabel="GD step (linear below 10, log above)", ylabel="loss (nats)", xlim=(0, step[-1]))
    legend_below(fig, ax, ncol=3)
    figs.append(ctx.savefig(fig, "fr_sequential.png"))
    md.append(f"\n![sequential learning]({figs[-1]})\n")

    # ---------------------------------------------------------------- 5-10. the studies
    factual_recall_theory.render(ctx, md, data, figs)
    factual_recall_capacity.render(ctx, md, data, figs)
    factual_recall_paper.render(ctx, md, data, figs)
    return SectionResult("\n".join(md), data, figs)
