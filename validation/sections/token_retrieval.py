"""Report section: token retrieval with random embeddings (docs/token_retrieval.md).

Early-phase GD (three steps from zero) of a one-layer attention model on the
token-retrieval task; phase diagrams over (N, d, L), power-law boundary fits
with uncertainties, a test of multiplicative dependence, random vs
orthogonal embeddings, a Gaussian signal-to-noise prediction of success and
a comparison with full training.  The formulation is ours
(docs/token_retrieval.md).
"""
from __future__ import annotations

import numpy as np

from validation.report import SectionResult, md_table
from validation.token_retrieval import experiments as ex
from validation.token_retrieval.cli import (beta_scan, fits, grid_records, mlp_scan,
                                           orthogonal_contrast, snr_comparison)

KEY = "token_retrieval"
TITLE = "Token retrieval with random embeddings: early-phase GD and its phase boundary"
DOCS = "docs/token_retrieval.md"  # model and derivations; linked under the section heading


def _table(header, rows, fmt=None):
    """md_table with missing values (None) shown as '-'."""
    fmt = fmt or {}
    out = []
    for r in rows:
        out.append(["-" if c is None else (format(c, fmt[i]) if i in fmt and not isinstance(c, str) else c)
                    for i, c in enumerate(r)])
    return md_table(header, out)


def _exp_rows(name, f):
    rows = []
    for v, e in f["exponents"].items():
        rows.append([name, v, e["value"], e["stderr"], e.get("stderr_boot"),
                     str([round(x, 2) for x in e.get("ci95_boot", e.get("ci95_ls", []))])])
    return rows


def _heat(ax, frac, xs, ys, xkey, ykey, fixed, title):
    M = np.full((len(ys), len(xs)), np.nan)
    for i, y in enumerate(ys):
        for j, x in enumerate(xs):
            k = {xkey: x, ykey: y, **fixed}
            v = frac.get((k["N"], k["d"], k["L"]))
            if v is not None:
                M[i, j] = v[0]
    im = ax.imshow(M, origin="lower", vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs], fontsize=7)
    ax.set_yticks(range(len(ys)), [str(y) for y in ys], fontsize=7)
    ax.set_xlabel(xkey)
    ax.set_ylabel(ykey)
    ax.set_title(title, fontsize=8)
    return im


def build(ctx):
    import matplotlib.pyplot as plt

    quick = ctx.quick
    recs, g = grid_records(quick, seed=ctx.seed, progress=ctx.progress)
    Ns, ds, Ls = list(g["Ns"]), list(g["ds"]), list(g["Ls"])
    ctx.progress("token_retrieval: fitting boundaries")
    F = fits(recs, seed=ctx.seed)
    snr = snr_comparison(recs)
    ctx.progress("token_retrieval: random vs orthogonal")
    orth = orthogonal_contrast(quick, seed=ctx.seed, progress=None)
    ctx.progress("token_retrieval: MLP width and step-size scans")
    mlp = mlp_scan(quick, seed=ctx.seed, progress=None)
    bscan = beta_scan(quick, seed=ctx.seed, progress=None)
    ctx.progress("token_retrieval: early phase vs full training")
    gd_cfg = [(8, 64, 4), (32, 64, 4), (32, 128, 16)] if quick else \
        [(8, 64, 4), (32, 64, 4), (32, 128, 16), (128, 256, 8)]
    gd = [ex.compare_gd(N, d, L, seed=ctx.seed, steps=150 if quick else 400, lr=0.05)
          for (N, d, L) in gd_cfg]

    fr_rec = ex.aggregate(recs, "recall")
    fr_ret = ex.aggregate(recs, "retrieval")
    fr_test = ex.aggregate(recs, "test_acc")

    # figures: (N, d) at each L; (d, L) at several N
    figs = []
    fig, axes = plt.subplots(2, len(Ls), figsize=(3.0 * len(Ls), 5.6), squeeze=False)
    for j, L in enumerate(Ls):
        _heat(axes[0, j], fr_ret, Ns, ds, "N", "d", {"L": L}, f"retrieval, L={L}")
        im = _heat(axes[1, j], fr_rec, Ns, ds, "N", "d", {"L": L}, f"recall (all N), L={L}")
    fig.subplots_adjust(hspace=0.4)
    fig.colorbar(im, ax=axes, shrink=0.6, label="success fraction")
    figs.append(ctx.savefig(fig, "tr_phase_Nd.png"))
    Nsel = [n for n in (8, 32, 128, 512) if n in Ns]
    fig, axes = plt.subplots(2, len(Nsel), figsize=(3.0 * len(Nsel), 5.6), squeeze=False)
    for j, N in enumerate(Nsel):
        _heat(axes[0, j], fr_ret, ds, Ls, "d", "L", {"N": N}, f"retrieval, N={N}")
        im = _heat(axes[1, j], fr_test, ds, Ls, "d", "L", {"N": N}, f"fresh-sequence acc., N={N}")
    fig.subplots_adjust(hspace=0.4)
    fig.colorbar(im, ax=axes, shrink=0.6, label="fraction")
    figs.append(ctx.savefig(fig, "tr_phase_dL.png"))
    ex_ret = F["retrieval_boundary"]["exponents"]
    if ex_ret:
        fig, ax = plt.subplots(figsize=(5, 3.4))
        a, b = ex_ret["d"]["value"], ex_ret["L"]["value"]
        for L in Ls:
            xs, ys = [], []
            for (N, d, LL), (f, _) in fr_ret.items():
                if LL == L:
                    xs.append(N / (d ** a * L ** b))
                    ys.append(f)
            o = np.argsort(xs)
            ax.semilogx(np.array(xs)[o], np.array(ys)[o], "o", ms=3, label=f"L={L}")
        ax.set_xlabel(f"N / (d^{a:.2f} L^{b:.2f})")
        ax.set_ylabel("retrieval success fraction")
        ax.legend(fontsize=7)
        figs.append(ctx.savefig(fig, "tr_collapse.png"))

    # ---------------- markdown + data
    md = []
    md.append(
        "Formulation (ours; only the abstract of the paper is available, see "
        "`docs/token_retrieval.md`): V = 4N tokens with i.i.d. N(0, I/d) embeddings, label "
        "unembeddings, trigger and EOS; one informative token (embedding e_y + z_trig) among L; "
        "scores x_i^T W q, output logits U Wv h; three GD steps from zero on the mean cross-entropy "
        f"(eta = 0.1, gamma set so that ||W1||_F = beta = 10). Grid N in {Ns}, d in {ds}, L in {Ls}, "
        f"{g['seeds']} seeds per point ({len(recs)} runs). *retrieval*: argmax attention on the "
        "informative token for all N training sequences; *recall*: all N training sequences mapped "
        "to their label.\n")
    md.append("### Phase diagrams\n")
    md.append("![success over (N, d) at each L: retrieval (top) and recall (bottom)](tr_phase_Nd.png)\n")
    md.append("![retrieval and fresh-sequence accuracy over (d, L) at several N](tr_phase_dL.png)\n")
    rows = []
    for L in Ls:
        for d in ds:
            rows.append([L, d] + [f"{fr_ret[(N, d, L)][0]:.2f}/{fr_rec[(N, d, L)][0]:.2f}"
                                  if (N, d, L) in fr_ret else "-" for N in Ns])
    md.append("Success fractions retrieval/recall:\n\n" +
              _table(["L", "d"] + [f"N={N}" for N in Ns], rows))
    md.append("### Fitted boundaries\n")
    md.append(
        "Boundary points: where the success fraction crosses 1/2 along N (retrieval: upward, "
        "success needs *enough* samples; recall: downward, the value memory saturates), "
        "geometric interpolation; least squares of log N_c on log d, log L; standard errors from "
        "least squares and from 200 bootstrap resamplings of seeds. Logistic: P(retrieval) = "
        "sigmoid(b0 + bN log N + bd log d + bL log L), exponents -b_v/b_N with delta-method "
        "(Fisher) errors.\n")
    rows = _exp_rows("retrieval N_c (boundary LS)", F["retrieval_boundary"]) + \
        _exp_rows("recall N_max (boundary LS)", F["recall_boundary"])
    lg = F["retrieval_logistic"]
    for v, e in lg["exponents"].items():
        rows.append(["retrieval N_c (logistic)", v, e["value"], e["stderr"], None, "-"])
    md.append(_table(["boundary", "variable", "exponent", "stderr", "stderr (boot)", "95% CI"],
                       rows, {2: ".3f", 3: ".3f", 4: ".3f"}))
    md.append(f"Boundary points: retrieval {F['retrieval_boundary']['n_points']}, recall "
              f"{F['recall_boundary']['n_points']}.\n")
    ints = []
    for name in ("retrieval_boundary", "recall_boundary"):
        gi = F[name].get("interaction")
        if gi:
            ints.append([name.split("_")[0], gi["value"], gi["stderr"], gi.get("stderr_boot"),
                         gi["p_value"]])
    if ints:
        md.append("Product-form test on the boundary points: coefficient g of log d * log L added to "
                  "the least-squares fit (g = 0 iff log N_c is additive in log d and log L, i.e. the "
                  "boundary is N_c = C d^a L^b):\n\n" +
                  _table(["boundary", "g", "stderr", "stderr (boot)", "p (t-test)"], ints,
                           {1: ".3f", 2: ".3f", 3: ".3f", 4: ".2g"}))
    mt = F["retrieval_multiplicative"]
    md.append(
        f"Multiplicative dependence (retrieval): likelihood-ratio test of the logistic model linear in "
        f"(log N, log d, log L) against adding all pairwise products: LR = {mt['lr']:.1f}, "
        f"df = {mt['df']}, p = {mt['p_value']:.2g} "
        f"({'rejected' if mt['p_value'] < 0.01 else 'not rejected'} at 1%).\n")
    if ex_ret:
        md.append("![retrieval success against the fitted combination](tr_collapse.png)\n")
    md.append("### Random vs orthogonal embeddings\n")
    md.append(f"d = {orth['d']}, V = 4N (orthogonal needs d >= V + 2), {orth['seeds']} seeds.\n")
    idx = {(r["kind"], r["key"], r["N"], r["L"]): r["value"] for r in orth["rows"]}
    rows = []
    for L in orth["Ls"]:
        for N in orth["Ns"]:
            rows.append([L, N] + [idx.get((k, key, N, L)) for k in ("random", "orthogonal")
                                  for key in ("recall", "recall_acc", "test_acc")])
    md.append(_table(["L", "N", "rand recall", "rand acc", "rand fresh", "orth recall",
                        "orth acc", "orth fresh"], rows,
                       {i: ".2f" for i in range(2, 8)}))
    md.append("### MLP width and step-size convention\n")
    mb = {(b["d"], b["m"]): b["N"] for b in mlp["boundary"]}
    rows = [[d] + [mb.get((d, m)) for m in [0] + mlp["ms"]] for d in mlp["ds"]]
    md.append(f"Recall boundary N_max (success fraction crossing 1/2 downward along N) at L = {mlp['L']} "
              f"with the fixed random MLP of width m ({mlp['seeds']} seeds; m = 0: no MLP). "
              "A blank cell: no crossing in the N grid.\n\n" +
              _table(["d", "no MLP"] + [f"m={m}" for m in mlp["ms"]], rows,
                       {i: ".1f" for i in range(1, 2 + len(mlp["ms"]))}))
    if mlp["fit"]["exponents"]:
        e = mlp["fit"]["exponents"]
        md.append(f"Fit with MLP: N_max ~ d^({e['d']['value']:.2f} ± {e['d']['stderr']:.2f}) "
                  f"m^({e['m']['value']:.2f} ± {e['m']['stderr']:.2f}) "
                  f"({mlp['fit']['n_points']} points).\n")
    rows = [[r["beta"], r["key"], r["L"], r["N_c"], r["attn_inf"]] for r in bscan["rows"]]
    md.append(f"Step-size convention (d = {bscan['d']}): boundaries for beta = ||W1||_F in 3, 10, 30 "
              "(mean attention on the informative token in the last column).\n\n" +
              _table(["beta", "criterion", "L", "N_c", "mean attention"], rows, {3: ".1f", 4: ".3f"}))
    md.append("### Signal-to-noise prediction\n")
    md.append(
        "From each run's three-step result we take *bulk* statistics: mean/std over samples of "
        "the correct logit, of the logits of the other trained labels and of the untrained labels "
        "(recall), and of the informative and noise attention scores (retrieval). A Gaussian "
        "extreme-value model turns them into P(all N succeed) = (E_g prod_groups "
        "Phi((mu_c + sd_c g - mu)/sd)^count)^N (column *SNR*). Column *margin*: Gaussian model of "
        "the per-sample margins, Phi(mean/std)^N. Boundaries of the predicted and measured "
        "success fractions:\n")
    rows = []
    for r in snr:
        for p in r["boundary"]:
            rows.append([r["key"], p["d"], p["L"], p["N_measured"], p["N_snr"], p["N_margin"]])
    md.append(_table(["criterion", "d", "L", "N_c measured", "N_c SNR", "N_c margin"], rows,
                       {3: ".1f", 4: ".1f", 5: ".1f"}))
    md.append("Mean |measured - predicted| success fraction over configurations: " + ", ".join(
        f"{r['key']} {r['mean_abs_diff_snr']:.3f} (SNR) / {r['mean_abs_diff_margin']:.3f} (margin) "
        f"({r['n_configs']} configs)" for r in snr) + "; mean log(N_c SNR / N_c measured): " + ", ".join(
        f"{r['key']} {r['mean_log_ratio_snr']:.3f} ± {r['sd_log_ratio_snr'] or 0:.3f} (sd, "
        f"{r['n_matched_snr']} points)" if r["mean_log_ratio_snr"] is not None else f"{r['key']} -"
        for r in snr) + ".\n")
    md.append("### Early phase vs full training\n")
    rows = [[r["N"], r["d"], r["L"], r["early"]["train_acc"], r["early"]["test_acc"],
             r["gd"]["train_acc"], r["gd"]["test_acc"], r["gd"]["final_loss"]] for r in gd]
    md.append(_table(["N", "d", "L", "early train", "early fresh", "GD train", "GD fresh",
                        "GD loss"], rows, {i: ".3f" for i in range(3, 8)}))
    md.append(f"Full training: Adam from zero, {150 if quick else 400} steps, lr 0.05 (warm-up + "
              "cosine), same task.\n")

    exponents = {}
    for name, f in (("retrieval", F["retrieval_boundary"]), ("recall", F["recall_boundary"])):
        exponents[name] = {v: {"value": e["value"], "stderr": e["stderr"],
                               "stderr_boot": e.get("stderr_boot"), "ci95": e.get("ci95_boot")}
                           for v, e in f["exponents"].items()}
    exponents["retrieval_logistic"] = lg["exponents"]
    if mlp["fit"]["exponents"]:
        exponents["recall_mlp"] = {v: {"value": e["value"], "stderr": e["stderr"],
                                       "stderr_boot": e.get("stderr_boot"), "ci95": e.get("ci95_boot")}
                                   for v, e in mlp["fit"]["exponents"].items()}
    exponents["interaction"] = {name.split("_")[0]: F[name].get("interaction")
                                for name in ("retrieval_boundary", "recall_boundary")}
    data = {
        "grid": {"Ns": Ns, "ds": ds, "Ls": Ls, "seeds": g["seeds"], "runs": len(recs)},
        "settings": {"vocab_ratio": 4.0, "eta": 0.1, "beta": 10.0, "kind": "random",
                     "noise": "vocab", "trig_scale": 1.0},
        "exponents": exponents,
        "boundaries": {k: F[k] for k in ("retrieval_boundary", "recall_boundary")},
        "logistic": lg, "multiplicative_test": mt,
        "success": {"retrieval": {str(k): v[0] for k, v in fr_ret.items()},
                    "recall": {str(k): v[0] for k, v in fr_rec.items()},
                    "test_acc": {str(k): v[0] for k, v in fr_test.items()}},
        "orthogonal": orth, "snr": snr, "gd": gd, "mlp": mlp, "beta_scan": bscan,
        "command": "python -m validation reproduce" + (" --quick" if quick else "")
                   + " --sections token_retrieval",
    }
    return SectionResult("\n".join(md), data, figs)
