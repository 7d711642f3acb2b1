"""Report section ``spectra``: rank-constrained capacity, spectra and spherical integrals
(docs/rank_constrained.md)."""
from __future__ import annotations

import math
import time

import numpy as np

from validation.sections.base import SectionResult, fill_doc, md_table
from validation.sections.figstyle import THEORY_ZORDER, legend_below, legend_outside

KEY = "spectra"
TITLE = "Rank-constrained memory: alpha_c(kappa), spectra and spherical integrals"
DOCS = "docs/rank_constrained.md"  # model and derivations; linked under the section heading

PAPER_POINTS = [(1.0, 0.5), (0.5, 0.46), (0.25, 0.31)]


def _alpha_part(ctx):
    import matplotlib.pyplot as plt

    from replica.rank_capacity import alpha_c, alpha_c_quad, alpha_c_small_kappa

    ctx.progress("spectra: alpha_c(kappa) curve")
    kap = np.linspace(1e-3, 1, 400)
    a = alpha_c(kap)
    rows, pts = [], []
    for k, paper in PAPER_POINTS:
        ours = float(alpha_c(k))
        quad = alpha_c_quad(k)
        mpv = float(alpha_c(k, dps=30))
        rows.append((k, paper, ours, ours - paper, quad, mpv))
        pts.append({"kappa": k, "paper": paper, "alpha_c": ours, "alpha_c_quad": quad,
                    "alpha_c_mpmath": mpv, "difference": ours - paper})
    fig, ax = plt.subplots(figsize=(5, 3.6))
    ax.plot(kap, a, label=r"$\alpha_c(\kappa)$ (closed form)")
    ax.plot(kap[kap < 0.3], alpha_c_small_kappa(kap[kap < 0.3]), "--", lw=1,
            label=r"$2\kappa - (6\pi\kappa)^{5/3}/(20\pi)$")
    ax.plot([p[0] for p in PAPER_POINTS], [p[1] for p in PAPER_POINTS], "rx", ms=8, label="paper summary")
    ax.plot([p[0] for p in PAPER_POINTS], [r[2] for r in rows], "ko", mfc="none", label="formula")
    ax.set_xlabel(r"rank fraction $\kappa = m/d$")
    ax.set_ylabel(r"$\alpha_c$")
    legend_outside(ax)
    name = ctx.savefig(fig, "spectra_alpha_c.png")
    md = ("### Capacity alpha_c(kappa)\n\n"
          "Closed form `alpha_c = 1/2 - (theta_k - sin(4 theta_k)/4)/pi`, "
          "`2 theta_k + sin 2 theta_k = pi (1 - kappa)`, against the direct quadrature "
          "`1/2 Int_{1-kappa}^1 X_qc^2` and the mpmath path (30 digits). "
          "The values quoted by the paper are shown next to ours; the closed form agrees with two independent quadratures, so we trust it where the two differ (docs/rank_constrained.md#where-we-differ-from-the-papers).\n\n"
          + md_table(["kappa", "paper", "formula", "formula - paper", "quadrature", "mpmath"], rows,
                     {0: ".2f", 1: ".2f", 2: ".6f", 3: "+.4f", 4: ".15f", 5: ".15f"})
          + f"\n![alpha_c(kappa) with the paper's three points]({name})\n")
    return md, {"points": pts, "curve": {"kappa": kap[::20].tolist(), "alpha_c": a[::20].tolist()}}, [name]


def _capacity_spectra(ctx):
    import matplotlib.pyplot as plt

    from hcizz import truncated_quarter_circle
    from replica.rank_capacity import alpha_c

    ctx.progress("spectra: capacity spectra")
    fig, ax = plt.subplots(figsize=(5, 3.6))
    rows, data = [], []
    s = np.linspace(0, 2, 800)
    for k in (1.0, 0.5, 0.25):
        law = truncated_quarter_circle(k)
        # full-law density (mass kappa on the nonzero part), unit second moment scale
        scale = 1 / math.sqrt(2 * alpha_c(k))
        ax.plot(s * scale, k * law.pdf(s) / scale, label=rf"$\kappa={k}$, atom {1 - k:.2f} at 0")
        m2_full = k * law.moment(2)
        rows.append((k, 1 - k, law.lower, m2_full, law.mean()))
        data.append({"kappa": k, "atom": 1 - k, "lower_edge": law.lower, "full_second_moment": m2_full,
                     "nonzero_mean": float(law.mean()), "unit_m2_scale": scale})
    ax.set_xlabel("singular value of W (unit second moment)")
    ax.set_ylabel(r"density of the nonzero part (mass $\kappa$)")
    legend_outside(ax)
    name = ctx.savefig(fig, "spectra_capacity.png")
    md = ("### Capacity spectra\n\n"
          "At capacity a fraction `1 - kappa` of the singular values vanish and the rest follow the "
          "quarter circle on `[X_qc(1-kappa), 2]`. The full second moment of the unscaled law is "
          "`2 alpha_c(kappa)` (Int of `X_qc^2` over the top kappa quantiles).\n\n"
          + md_table(["kappa", "atom at 0", "lower edge X_qc(1-kappa)", "full E s^2 (= 2 alpha_c)", "nonzero mean"],
                     rows, {0: ".2f", 1: ".2f", 2: ".6f", 3: ".6f", 4: ".6f"})
          + f"\n![capacity spectra]({name})\n")
    return md, data, [name]


def _init_spectra(ctx):
    import matplotlib.pyplot as plt

    from hcizz import mp_product
    from validation.linear_memory.mechanism import sample_init_spectra

    d = 1000
    kappas = (1.0, 0.5, 0.25)
    reps = {k: {1.0: 1, 0.5: 3, 0.25: 6}[k] * (1 if ctx.quick else 4) for k in kappas}
    ctx.progress(f"spectra: sampling Q R^T/sqrt(dm) at d={d}, kappa={', '.join(map(str, kappas))}")
    samples = sample_init_spectra(d, reps, rng=[ctx.seed, 3])
    rows, data = [], []
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), layout="constrained")
    for ax, s in zip(axes, samples):
        k, m, ks, ks_mp, ev = s.kappa, s.m, s.ks, s.ks_calibration_mp, s.eigenvalues
        m2, m2_se, n_rep = s.sample_m2, s.sample_m2_stderr, s.n_matrices
        law = mp_product(k)
        rows.append((k, m, ks, ks_mp, ks * m, 1.36 / math.sqrt(m),
                     (f"{m2:.3f} ± {m2_se:.2g} ({n_rep})" if n_rep > 1 else f"{m2:.3f} (1)"), s.law_m2, s.seconds))
        data.append({"kappa": k, "d": d, "m": m, "ks": ks, "ks_calibration_mp": ks_mp, "ks_times_m": ks * m,
                     "iid_ks_95": 1.36 / math.sqrt(m), "sample_m2": m2, "sample_m2_stderr": m2_se,
                     "n_matrices": n_rep, "law_m2": s.law_m2, "seconds": s.seconds,
                     "edges": s.edges, "atom": s.atom})
        xs = np.linspace(law.edges[0], law.edges[1], 600)[1:-1]
        ax.hist(ev, bins=60, density=True, alpha=0.5, label=f"sample $d={d}$")
        ax.plot(xs, law.pdf(xs), "k", lw=1, label="product Marchenko-Pastur law", zorder=4)
        ax.set_title(rf"$\kappa={k}$ (atom {1 - k:.2f} at 0)")
        ax.set_xlabel(r"squared singular value of $QR^T/\sqrt{dm}$")
        ax.set_ylabel("density (nonzero part)")
        if k == 1.0:
            ax.set_ylim(0, 1.2)
    legend_below(fig, axes[0])
    name = ctx.savefig(fig, "spectra_init.png")
    md = ("### Initialisation spectrum: mp_product(kappa) vs sampled Q R^T / sqrt(d m)\n\n"
          f"One sampled pair `Q, R` (`d = {d}`, `m = kappa d`) per kappa; KS distance of the `m` nonzero "
          "squared singular values to `mp_product(kappa)`. Eigenvalues are rigid, so the finite-d KS "
          "distance is `O(log d / d)`, far below the 95% critical value `1.36/sqrt(m)` that independent "
          "samples would have (shown for scale). Calibration of what finite d explains: the KS distance "
          "of the eigenvalues of the same `Q^T Q / d` to their exact limit, Marchenko-Pastur.\n\n"
          + md_table(["kappa", "m", "KS (first matrix)", "KS of Q^T Q/d vs MP (calibration)", "m * KS",
                      "iid 95% KS", "sample E x^2 ± s.e. (matrices)", "law E x^2", "seconds"], rows,
                     {0: ".2f", 2: ".4f", 3: ".4f", 4: ".2f", 5: ".4f", 7: ".4f", 8: ".1f"})
          + f"\n![initialisation spectra]({name})\n")
    return md, data, [name]


def _spherical(ctx):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from hcizz import qc_quantile
    from hcizz.spherical import (hciz_ais, hciz_exact_d2, hciz_mc, hciz_small_theta,
                                 quantile_coupling_value, rank_one_mc)

    ctx.progress("spectra: spherical integrals")
    a, b = np.array([0.5, 1.5]), np.array([1.0, 2.0])
    c = quantile_coupling_value(a, b)
    thetas = [0.01, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0, 1000.0]
    rows, d2 = [], []
    n_mc = 5000 if ctx.quick else 40000
    ais_kw = dict(chains=300, levels=60) if ctx.quick else dict(chains=2000, levels=200)
    for i, th in enumerate(thetas):
        J = hciz_exact_d2(th, a, b, n_angle=4096)
        small = float(hciz_small_theta(th, a, b))
        mc = hciz_mc(th, a, b, n=n_mc, rng=[ctx.seed, 7, i]) if th <= 3 else None
        ais = hciz_ais(th, a, b, rng=[ctx.seed, 13, i], **ais_kw)
        rows.append((th, J, small, J / small, J / th, c, mc.value if mc else None, mc.stderr if mc else None,
                     mc.info["ess"] if mc else None, ais.value, ais.stderr, ais.info["ess"]))
        d2.append({"theta": th, "J_exact": J, "small_theta": small, "ratio_to_small_theta": J / small,
                   "J_over_theta": J / th, "large_theta_limit": c,
                   "mc": mc.value if mc else None, "mc_stderr": mc.stderr if mc else None,
                   "mc_ess": mc.info["ess"] if mc else None, "mc_n": n_mc,
                   "ais": ais.value, "ais_stderr": ais.stderr, "ais_ess": ais.info["ess"],
                   "ais_chains": ais.n, "ais_levels": ais.info["levels"]})
    fmt = {0: "g", 1: ".6g", 2: ".6g", 3: ".4f", 4: ".4f", 5: ".4f", 6: ".6g", 7: ".2g", 8: ".0f",
           9: ".6g", 10: ".2g", 11: ".0f"}
    md = ("### Spherical integrals\n\n"
          "`J_d(theta) = d^-2 ln E exp(theta d Tr(A O B O'^T))` at `d = 2` (`a = (0.5, 1.5)`, `b = (1, 2)`): "
          f"exact angular quadrature, Haar Monte Carlo ({n_mc} samples, with standard error and ESS), "
          f"annealed importance sampling (AIS: {ais_kw['chains']} chains, {ais_kw['levels']} levels), the small-theta "
          "expansion `theta^2 m2(A) m2(B)/2` and the large-theta limit `Int X_A X_B` "
          f"(= {c:.4f}; approached as `J/theta = c - (d-1) ln(theta)/(2 d theta) + O(1/theta)`).\n\n"
          + md_table(["theta", "J exact", "theta^2 m2 m2/2", "ratio", "J/theta", "Int X_A X_B", "MC", "MC stderr",
                      "MC ESS", "AIS", "AIS stderr", "AIS ESS"], rows, fmt))
    # d = 4: AIS where plain Haar MC collapses, against the von Neumann bound theta c
    a4, b4 = np.linspace(0.5, 1.5, 4), np.linspace(1.0, 2.0, 4)
    c4 = quantile_coupling_value(a4, b4)
    ais4_kw = dict(chains=300, levels=150) if ctx.quick else dict(chains=2000, levels=400)
    d4_rows, d4 = [], []
    for i, th in enumerate((0.25, 2.0, 8.0, 32.0)):
        mc = hciz_mc(th, a4, b4, n=n_mc, rng=[ctx.seed, 17, i])
        ais = hciz_ais(th, a4, b4, rng=[ctx.seed, 19, i], **ais4_kw)
        laplace = 3 * np.log(th) / (8 * th) if th > 1 else None   # large-theta term only
        d4_rows.append((th, mc.value, mc.stderr, mc.info["ess"], ais.value, ais.stderr, ais.info["ess"],
                        ais.value / th, c4, laplace))
        d4.append({"theta": th, "mc": mc.value, "mc_stderr": mc.stderr, "mc_ess": mc.info["ess"], "mc_n": n_mc,
                   "ais": ais.value, "ais_stderr": ais.stderr, "ais_ess": ais.info["ess"], "ais_chains": ais.n,
                   "ais_levels": ais.info["levels"], "ais_J_over_theta": ais.value / th,
                   "large_theta_limit": c4, "laplace_log_gap": laplace})
    md += ("\n`d = 4` (`a = linspace(0.5, 1.5, 4)`, `b = linspace(1, 2, 4)`): plain Haar MC against AIS "
           f"({ais4_kw['chains']} chains, {ais4_kw['levels']} levels). The von Neumann bound `J <= theta c` "
           "is exact; `J/theta` approaches `c` from below, the gap of the order of the Laplace log term "
           "`(d-1) ln(theta)/(2 d theta)` (plus an uncomputed `O(1/theta)` term). An ESS near 1 means the "
           "plain MC value and its standard error are not reliable.\n\n"
           + md_table(["theta", "MC", "MC stderr", "MC ESS", "AIS", "AIS stderr", "AIS ESS", "AIS J/theta",
                       "c", "(d-1) ln(theta)/(2 d theta)"], d4_rows,
                      {0: "g", 1: ".5g", 2: ".2g", 3: ".0f", 4: ".5g", 5: ".2g", 6: ".0f", 7: ".4f", 8: ".4f",
                       9: ".4f"}))
    # rank-one, Gaussian A (quarter-circle profile): finite d with importance sampling vs theta^2/2
    r_rows, r_data = [], []
    ds = (50, 100, 200) if ctx.quick else (50, 100, 200, 400)
    n_is = 2000 if ctx.quick else 8000
    for th in (0.3, 0.6, 0.9):
        for d in ds:
            s = qc_quantile((np.arange(d) + 0.5) / d)
            est = rank_one_mc(th, s, n=n_is, rng=[ctx.seed, 11, d, int(th * 10)])
            r_rows.append((th, d, est.value, est.stderr, th * th / 2, d * (th * th / 2 - est.value), est.info["ess"]))
            r_data.append({"theta": th, "d": d, "estimate": est.value, "stderr": est.stderr,
                           "limit": th * th / 2, "d_times_gap": d * (th * th / 2 - est.value),
                           "ess": est.info["ess"], "n": est.n})
    md += ("\nRank-one `B` (rectangular spherical integral) with Gaussian `A` (singular values on the "
           "quarter-circle quantile grid): `d^-1 ln E exp(theta d u^T A v)` by Monte Carlo with the exact "
           "`u` average and saddle-tilted importance sampling of `v`, against the limit `theta^2/2` "
           "(below the transition `theta = 1`). The column `d (limit - estimate)` is roughly constant: "
           "an `O(1/d)` finite-size correction.\n\n"
           + md_table(["theta", "d", "estimate", "stderr", "theta^2/2", "d (limit - est.)", "ESS"], r_rows,
                      {2: ".6f", 3: ".2g", 4: ".4f", 5: ".3f", 6: ".0f"}))
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    th = np.logspace(-2, 3, 60)
    J = hciz_exact_d2(th, a, b)
    axes[0].loglog(th, J, "k", zorder=THEORY_ZORDER, label=r"exact $d=2$")
    axes[0].loglog(th, hciz_small_theta(th, a, b), "--", zorder=THEORY_ZORDER, label=r"$\theta^2 m_2 m_2/2$")
    axes[0].loglog(th, c * th, ":", zorder=THEORY_ZORDER, label=r"$\theta \int X_A X_B$")
    mcs = [r for r in d2 if r["mc"] is not None]
    axes[0].errorbar([r["theta"] for r in mcs], [r["mc"] for r in mcs], yerr=[2 * r["mc_stderr"] for r in mcs],
                     fmt="o", ms=3, label="Haar MC (2 s.e.)")
    axes[0].errorbar([r["theta"] for r in d2], [r["ais"] for r in d2], yerr=[2 * r["ais_stderr"] for r in d2],
                     fmt="s", ms=3, mfc="none", label="AIS (2 s.e.)")
    axes[0].set_xlabel(r"$\theta$")
    axes[0].set_ylabel(r"$J_2(\theta)$")
    legend_outside(axes[0])
    for thv in (0.3, 0.6, 0.9):
        sel = [r for r in r_data if r["theta"] == thv]
        axes[1].errorbar([1 / r["d"] for r in sel], [r["estimate"] for r in sel],
                         yerr=[2 * r["stderr"] for r in sel], fmt="o-", ms=3, label=rf"$\theta={thv}$")
        axes[1].plot([0], [thv * thv / 2], "k*", zorder=THEORY_ZORDER)
    axes[1].set_xlabel(r"$1/d$")
    axes[1].xaxis.set_major_locator(MaxNLocator(4))       # five ticks would run into each other
    axes[1].set_ylabel(r"rank-one $J$ (stars: $\theta^2/2$)")
    legend_outside(axes[1])
    fig.tight_layout()
    name = ctx.savefig(fig, "spectra_spherical.png")
    md += f"\n![spherical integrals: limits vs finite d]({name})\n"
    return md, {"d2": d2, "d4_ais": d4, "rank_one": r_data, "coupling": c}, [name]


@fill_doc
def build(ctx):
    """Build the report section ``spectra``: rank-constrained capacity, spectral laws and spherical integrals.

    %(section_build)s

    References
    ----------
    arXiv:2605.10795; docs/rank_constrained.md#rank-constrained-capacity
    """
    parts, data, figs = [], {}, []
    for key, fn in (("alpha_c", _alpha_part), ("capacity_spectra", _capacity_spectra),
                    ("init_spectra", _init_spectra), ("spherical", _spherical)):
        t0 = time.perf_counter()
        md, dd, ff = fn(ctx)
        parts.append(md)
        data[key] = dd
        figs += ff
        ctx.progress(f"spectra: {key} done in {time.perf_counter() - t0:.1f} s")
    return SectionResult("\n".join(parts), data, figs)
