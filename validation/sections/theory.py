"""Report section ``theory``: replica theory of the full-rank linear memory (docs/theory_full_rank.md)."""
from __future__ import annotations

import math
import time

import numpy as np

from replica import p_of_load
from validation.sections.base import SectionResult, fill_doc, md_table

KEY = "theory"
TITLE = "Replica theory of the full-rank linear memory"
DOCS = "docs/theory_full_rank.md"  # model and derivations; linked under the section heading

P_CAPACITY = [2, 3, 5, 10, 30, 100, 300, 1000, 10**4, 10**5, 10**6, 10**7, 10**9, 10**12, 10**15]
P_ENERGY = [10, 1000, 10**6, 10**9]
D_HEBB = [50, 200, 1000]
D_THRESH = [20, 50, 100, 200, 1000, 10**4, 10**6, 10**9]


@fill_doc
def build(ctx):
    """Build the report section ``theory``: replica theory of the full-rank linear memory against its oracles.

    %(section_build)s

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md#finite-p-capacity
    """
    import matplotlib.pyplot as plt

    from replica import (alpha_c_finite, energy_G, hebbian_recall_probability, hebbian_simulate,
                         hebbian_threshold, saddle)
    from validation.sections.figstyle import legend_outside

    quick = ctx.quick
    ss = np.random.SeedSequence([ctx.seed, 2])
    seeds = iter(ss.spawn(64))
    data, md, figs = {}, [], []
    t_start = time.perf_counter()

    # ---- 1. finite-p capacity -------------------------------------------------------
    ctx.progress("theory: alpha_c(p) for p = 2 .. 1e15")
    n_cap = 20_000 if quick else 200_000
    cap = []
    for p in P_CAPACITY:
        e = alpha_c_finite(p, samples=n_cap, rng=next(seeds))
        cap.append({"p": p, "alpha_c": e.value, "stderr": e.stderr, "E_V": e.info["E_V"],
                    "E_V_stderr": e.info["E_V_stderr"], "pc_over_d2": e.info["pc_over_d2"],
                    "mean_active": e.info["mean_active"], "max_order_stats": e.info["max_order_stats"]})
    data["alpha_c"] = {"samples": n_cap, "limit": 0.5, "rows": cap,
                       "exact_p2": 2 * math.log(2)}
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.errorbar([r["p"] for r in cap], [r["alpha_c"] for r in cap],
                yerr=[r["stderr"] for r in cap], fmt="o-", ms=4, capsize=3,
                label=r"$\alpha_c(p)=\ln p/(2E[V_p])$ (RS, finite $p$)")
    ax.axhline(0.5, color="k", ls="--", lw=1, label=r"limit $1/2$")
    ax.plot([2], [2 * math.log(2)], "r*", ms=10, label=r"exact $2\ln 2$ at $p=2$")
    ax.set_xscale("log")
    ax.set_xlabel(r"number of facts $p$")
    ax.set_ylabel(r"$\alpha_c(p)$")
    legend_outside(ax)
    ax.set_title("Finite-p capacity approaches 1/2 slowly")
    figs.append(ctx.savefig(fig, "theory_alpha_c.png"))

    md.append("### Finite-p capacity\n\n"
              f"`alpha_c_finite(p, samples={n_cap})`: Monte Carlo over the disorder with the top "
              "order statistics of the p-1 competitors sampled exactly (Renyi), control variates; "
              "p_c/d^2 = 1/(2 E[V_p]). Exact value at p = 2: 2 ln 2 = "
              f"{2 * math.log(2):.6f}. Limit: 1/2.\n\n")
    md.append(md_table(["p", "alpha_c(p)", "stderr", "E[V_p]", "p_c/d^2", "mean active set"],
                       [[r["p"], r["alpha_c"], r["stderr"], r["E_V"], r["pc_over_d2"], r["mean_active"]]
                        for r in cap], {0: ".3g", 1: ".5f", 2: ".1e", 3: ".5f", 4: ".4g", 5: ".2f"}))
    md.append("\n![alpha_c(p) from p = 2 to 1e15 against the limit 1/2](theory_alpha_c.png)\n")

    # ---- 2. energy term G_p(t) ----------------------------------------------------------
    ctx.progress("theory: G_p(t) for p = 10 .. 1e9")
    ts = np.array([0.0, 0.2, 0.4, 0.6, 0.75, 0.85, 0.9, 0.95]) if quick else \
        np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97])
    n_g = 120 if quick else 1000
    grows = []
    for p in P_ENERGY:
        e = energy_G(ts, p, samples=n_g, rng=next(seeds))
        grows.append({"p": p, "t": ts.tolist(), "G": np.asarray(e.value).tolist(),
                      "stderr": np.asarray(e.stderr).tolist(),
                      "bulk_bias_bound": list(np.atleast_1d(e.info["bulk_bias_bound"]))})
    limit = (-1.0 / (1.0 - ts)).tolist()
    data["energy_G"] = {"samples": n_g, "t": ts.tolist(), "limit": limit, "rows": grows}
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.8))
    for r in grows:
        axs[0].errorbar(ts, r["G"], yerr=r["stderr"], fmt="o-", ms=3, capsize=2, label=f"p = {r['p']:.0e}")
        axs[1].errorbar(ts, (1 - ts) * np.array(r["G"]), yerr=(1 - ts) * np.array(r["stderr"]),
                        fmt="o-", ms=3, capsize=2, label=f"p = {r['p']:.0e}")
    axs[0].plot(ts, limit, "k--", label=r"$-1/(1-t)$")
    axs[1].axhline(-1, color="k", ls="--", label=r"limit $-1$")
    axs[0].set_xlabel("t")
    axs[0].set_ylabel(r"$G_p(t)$")
    axs[1].set_xlabel("t")
    axs[1].set_ylabel(r"$(1-t)\,G_p(t)$")
    legend_outside(axs[0])
    legend_outside(axs[1])
    axs[1].set_title("slow convergence to the limit")
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "theory_energy_G.png"))
    md.append("\n### Energy term G_p(t)\n\n"
              f"`energy_G(t, p, samples={n_g})` (common disorder samples across t for each p) "
              "against the large-p limit -1/(1-t). G_p(0) = -1 exactly for every p. The convergence is "
              "slow (relative corrections of order ln ln p / ln p). "
              "The bulk-approximation bias bound (`info['bulk_bias_bound']`) is at most "
              f"{max(max(r['bulk_bias_bound']) for r in grows):.1e} in units of G.\n\n")
    hdr = ["t", "limit"] + [f"G_p, p={r['p']:.0e}" for r in grows]
    rows = []
    for i, t in enumerate(ts):
        rows.append([t, limit[i]] + [f"{r['G'][i]:.4f} ± {r['stderr'][i]:.1e}" for r in grows])
    md.append(md_table(hdr, rows, {0: ".2f", 1: ".4f"}))
    md.append("\n![G_p(t) for several p against -1/(1-t)](theory_energy_G.png)\n")

    # ---- 3. free entropy and its minimiser -----------------------------------------------
    ctx.progress("theory: saddle point q*(alpha), phi(alpha)")
    p_fe = 1000
    n_fe = 120 if quick else 600
    alphas = np.array([0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.49,
                       0.55, 0.6, 0.65, 0.7, 0.75, 0.8])
    lim = saddle(alphas)
    fin = saddle(alphas, p_fe, samples=n_fe, rng=next(seeds))
    data["saddle"] = {"alpha": alphas.tolist(), "limit_q": np.asarray(lim.q).tolist(),
                      "limit_phi": np.asarray(lim.phi).tolist(), "p": p_fe, "samples": n_fe,
                      "finite_q": np.asarray(fin.q).tolist(), "finite_q_stderr": np.asarray(fin.q_stderr).tolist(),
                      "finite_phi": np.asarray(fin.phi).tolist(),
                      "finite_phi_stderr": np.asarray(fin.phi_stderr).tolist(),
                      "finite_alpha_c": fin.alpha_c, "finite_alpha_c_stderr": fin.info["alpha_c_stderr"],
                      "finite_E_V": fin.info["E_V"], "finite_E_V_stderr": fin.info["E_V_stderr"]}
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.8))
    a_line = np.linspace(0, 0.499, 300)
    axs[0].plot(a_line, 2 * a_line, "k-", label=r"limit $q^*=2\alpha$")
    axs[0].errorbar(alphas, fin.q, yerr=fin.q_stderr, fmt="o", ms=4, capsize=2, label=f"p = {p_fe}")
    axs[1].plot(a_line, 0.5 * np.log1p(-2 * a_line), "k-", label=r"limit $\frac{1}{2}\ln(1-2\alpha)$")
    ok = np.isfinite(fin.phi)
    axs[1].errorbar(alphas[ok], np.asarray(fin.phi)[ok], yerr=np.asarray(fin.phi_stderr)[ok], fmt="o",
                    ms=4, capsize=2, label=f"p = {p_fe}")
    for ax in axs:
        ax.axvline(0.5, color="gray", ls=":", lw=1)
        ax.axvline(fin.alpha_c, color="C0", ls=":", lw=1)
        ax.set_xlabel(r"$\alpha$")
        legend_outside(ax)
    axs[0].set_ylabel(r"$q^*(\alpha)$")
    axs[1].set_ylabel(r"$\phi(\alpha)$")
    fig.tight_layout()
    figs.append(ctx.savefig(fig, "theory_saddle.png"))
    from validation.sections.claims import verdict

    at_p = next((r for r in cap if r["p"] == p_fe), None)
    ac_p, ac_se = (at_p["alpha_c"], at_p["stderr"]) if at_p else (float("nan"), 0.0)
    n_ac, z95 = n_cap, 1.959963984540054
    saddle_verdict = verdict(ac_p, (fin.alpha_c - z95 * fin.info["alpha_c_stderr"],
                                    fin.alpha_c + z95 * fin.info["alpha_c_stderr"]),
                             estimate=fin.alpha_c, prediction_stderr=ac_se)
    data["saddle"]["finite_alpha_c_vs_table"] = saddle_verdict
    md.append("\n### Free entropy and saddle point\n\n"
              f"Limit (closed form): q* = 2 alpha, phi = 1/2 ln(1 - 2 alpha), capacity 1/2. Finite p = {p_fe}: "
              f"`saddle(alpha, {p_fe}, samples={n_fe})` with common random numbers and a spline in sqrt(1-t); "
              f"its capacity (phi = -inf beyond) is {fin.alpha_c:.4f} ± {fin.info['alpha_c_stderr']:.4f} "
              f"from {n_fe} disorder samples, the same quantity as alpha_c_finite({p_fe}) = "
              f"{ac_p:.4f} ± {ac_se:.4f} of the finite-p table ({n_ac} samples, control variates): "
              f"{saddle_verdict}"
              " (sigma: the two standard errors combined; the saddle point is the cheap estimate, "
              "the table the precise one).\n\n")
    md.append(md_table(["alpha", "q* limit", "phi limit", f"q* (p={p_fe})", f"phi (p={p_fe})"],
                       [[a, ql, pl, f"{qf:.4f} ± {qe:.1e}", f"{pf:.4f} ± {pe:.1e}"]
                        for a, ql, pl, qf, qe, pf, pe in zip(alphas, lim.q, lim.phi, fin.q, fin.q_stderr,
                                                            fin.phi, fin.phi_stderr)],
                       {0: ".2f", 1: ".3f", 2: ".4f"}))
    md.append("\n![q*(alpha) and phi(alpha), limit and finite p](theory_saddle.png)\n")

    # ---- 4. Hebbian vs optimal -----------------------------------------------------------
    ctx.progress("theory: Hebbian models and simulation")
    a_h = np.linspace(0.01, 0.3 if quick else 0.5, 25 if quick else 50)
    curves = []
    for d in D_HEBB:
        ps = np.array([p_of_load(a, d) for a in a_h])
        curves.append({"d": d, "alpha": a_h.tolist(), "p": ps.tolist(),
                       "P_all_theory": hebbian_recall_probability(d, ps, model="theory").tolist(),
                       "P_all_conditional_op": hebbian_recall_probability(d, ps).tolist(),
                       "P_single_theory": hebbian_recall_probability(d, ps, all_facts=False,
                                                                     model="theory").tolist()})
    d_sim = 50
    a_sim = [0.02, 0.04, 0.06, 0.08, 0.1, 0.15]
    trials = 100 if quick else 400
    sim = []
    d_list = [d_sim] if quick else [20, d_sim, 100]
    for dd, problem, a in [(dd, pr, a) for dd in d_list for pr in ("op", "dp") for a in a_sim]:
        if a > (0.1 if dd == 20 else 0.15):
            continue
        ctx.progress(f"theory: Hebbian simulation d={dd} {problem} alpha={a}")
        p = max(2, int(round(p_of_load(a, dd))))
        r = hebbian_simulate(dd, p, trials=trials, rng=next(seeds),
                             problem=problem)
        sim.append({"d": dd, "problem": problem, "alpha": p * math.log(p) / dd ** 2, "p": p,
                    "P_all": r["all"].value, "P_all_stderr": r["all"].stderr,
                    "single": r["single"].value, "single_stderr": r["single"].stderr,
                    "theory_P_all": hebbian_recall_probability(dd, p, model="theory"),
                    "conditional_P_all": hebbian_recall_probability(dd, p, problem=problem),
                    "conditional_single": hebbian_recall_probability(dd, p, problem=problem,
                                                                     all_facts=False)})
    thr = [{"d": d, "alpha_H_theory": hebbian_threshold(d, model="theory"),
            "alpha_H_conditional_op": hebbian_threshold(d),
            "alpha_H_conditional_dp": hebbian_threshold(d, problem="dp"),
            "alpha_single_theory": hebbian_threshold(d, all_facts=False, model="theory")}
           for d in D_THRESH]
    data["hebbian"] = {"curves": curves, "simulation": {"d": d_list, "trials": trials, "rows": sim},
                       "thresholds": thr, "limit": 0.125}
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for k, c in enumerate(curves):
        ax.plot(c["alpha"], c["P_all_theory"], ":", color=f"C{k}", label=f"independent-Gaussian model, d = {c['d']}")
        ax.plot(c["alpha"], c["P_all_conditional_op"], "-", color=f"C{k}",
                label=f"conditional model (OP), d = {c['d']}")
    op_rows = [s for s in sim if s["problem"] == "op" and s["d"] == d_sim]
    from validation.sections.figstyle import wilson_interval

    # P(all) is a fraction of `trials` instances: 95% Wilson interval (inside [0, 1])
    y_sim = np.array([s["P_all"] for s in op_rows])
    w_lo, w_hi = wilson_interval(np.round(y_sim * trials), np.full(len(op_rows), trials))
    ax.errorbar([s["alpha"] for s in op_rows], y_sim, yerr=[y_sim - w_lo, w_hi - y_sim],
                fmt="ks", ms=4, capsize=2, zorder=1,
                label=f"simulation (OP), d = {d_sim}, 95% Wilson interval")
    ax.axvline(0.125, color="C3", ls="--", lw=1, label="Hebbian limit 1/8")
    ax.axvline(0.5, color="k", ls="--", lw=1, label="optimal limit 1/2")
    for r in cap:
        if r["p"] == 1000:
            ax.axvline(r["alpha_c"], color="k", ls=":", lw=1, label=f"optimal RS, p = 1e3: {r['alpha_c']:.3f}")
    ax.set_xlabel(r"$\alpha = p\ln p/d^2$")
    ax.set_ylabel("P(all facts recalled)")
    legend_outside(ax)
    figs.append(ctx.savefig(fig, "theory_hebbian.png"))
    md.append("\n### Hebbian rule vs optimal\n\n"
              "Direct simulation of W_H = sum u e^T at "
              f"d = {', '.join(map(str, d_list))} ({trials} instances per point; OP: the stored u are the candidates, DP: "
              "fresh competitors per input) against the independent-Gaussian model "
              "(`model=\"theory\"`, one curve for both problems) and the per-input conditional model "
              "(`model=\"conditional\"`, the default; docs/theory_full_rank.md#conditional-model). The independent-Gaussian model "
              "normalises every score by the global competitor standard deviation and is far too "
              "pessimistic at these sizes; the conditional model normalises by |W e_mu| per input.\n\n")
    md.append(md_table(["d", "problem", "alpha", "p", "P(all) simulation", "P(all) Gaussian model",
                        "P(all) conditional", "single fact (sim)", "single fact (conditional)"],
                       [[s["d"], s["problem"].upper(), s["alpha"], s["p"],
                         f"{s['P_all']:.3f} ± {s['P_all_stderr']:.2g}", s["theory_P_all"],
                         s["conditional_P_all"], f"{s['single']:.4f} ± {s['single_stderr']:.1g}",
                         s["conditional_single"]] for s in sim],
                       {2: ".3f", 5: ".3f", 6: ".3f", 8: ".4f"}))
    md.append("\nThreshold loads (P(all recalled) = 1/2) of both models, against the limits 1/8 "
              "(all facts) and 1/2 (a typical fact, Gaussian model):\n\n")
    md.append(md_table(["d", "alpha_H Gaussian model", "alpha_H conditional OP", "alpha_H conditional DP",
                        "single fact (Gaussian model)"],
                       [[t["d"], t["alpha_H_theory"], t["alpha_H_conditional_op"],
                         t["alpha_H_conditional_dp"], t["alpha_single_theory"]] for t in thr],
                       {0: ".3g", 1: ".4f", 2: ".4f", 3: ".4f", 4: ".4f"}))
    md.append("\n![Hebbian P(all recalled) vs load: simulation, independent-Gaussian model (dotted) and conditional "
              "model (solid), against the optimal capacity](theory_hebbian.png)\n")
    data["seconds"] = time.perf_counter() - t_start
    return SectionResult("".join(md), data, figs)

