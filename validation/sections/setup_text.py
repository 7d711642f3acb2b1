"""The "Setup" section that opens ``report.md``: the model and every term of the tables.

Not a report section of its own (it computes nothing and has no ``build``):
:func:`validation.report.reproduce` puts :func:`setup_markdown` between the
header and the first section.  Every term links to the docs page that defines it
(``docs/<page>.md#<anchor>``, anchors are GitHub-style heading slugs; the test
suite checks that each one exists).
"""
from __future__ import annotations

__all__ = ["TERMS", "GROUPS", "setup_markdown"]

_FR = "docs/theory_full_rank.md"
_RC = "docs/rank_constrained.md"
_LM = "docs/linear_memory.md"
_FRT = "docs/factual_recall.md"
_TR = "docs/token_retrieval.md"

#: Groups of terms, in the order they are printed: (key, heading).
GROUPS = [
    ("memory", "Linear associative memory (sections theory, spectra, linear_memory)"),
    ("training", "Trained memories and thresholds (section linear_memory)"),
    ("transformer", "Factual recall in a one-layer transformer (section factual_recall)"),
    ("retrieval", "Token retrieval (section token_retrieval)"),
]

#: Every term used in the report's tables: (group, term, definition, docs target).
#: Formulas are in backticks (plain-text math, as in the rest of the report).
TERMS = [
    ("memory", "facts",
     "`p` pairs `(e_mu, u_mu)` of an input `e_mu` (`x_mu` in the papers) and an output `u_mu` "
     "(`y_mu`) in `R^d`, all entries i.i.d. `N(0, 1)`", f"{_FR}#facts-scores-and-recall"),
    ("memory", "W",
     "the memory, a `d x d` matrix; the score of candidate `rho` for input `mu` is "
     "`z_{mu rho} = u_rho^T W e_mu`", f"{_FR}#facts-scores-and-recall"),
    ("memory", "recalled",
     "fact `mu` is recalled when its own output has the strictly largest score among the "
     "candidates of input `mu`; a memory stores a fact set when it recalls all `p` facts",
     f"{_FR}#facts-scores-and-recall"),
    ("memory", "OP",
     "original problem: all inputs share the candidate set `u_1 .. u_p`", f"{_FR}#original-problem-op"),
    ("memory", "DP",
     "decoupled problem: every input has its own `p` fresh candidates (the correct one among "
     "them) while `W` is still shared; the replica theory is computed for the DP",
     f"{_FR}#decoupled-problem-dp"),
    ("memory", "load alpha = p ln p / d^2",
     "`p ln p` (facts times the `ln p` needed to name one of `p` outputs) per parameter of `W`; "
     "a column `p ln p / d^2` or `alpha` is this load", f"{_FR}#load-and-capacity"),
    ("memory", "alpha_c(p)",
     "finite-p replica-symmetric capacity `ln p / (2 E[V_p])` (`p_c/d^2 = 1/(2 E[V_p])`); it "
     "tends to 1/2 as `p` grows", f"{_FR}#finite-p-capacity"),
    ("memory", "G_p(t)",
     "energy term of the replica-symmetric free entropy, `E ln f_p(t; eta) / ln p`; its "
     "large-p limit is `-1/(1-t)`", f"{_FR}#replica-symmetric-free-entropy"),
    ("memory", "E[V_p], active set",
     "`V_p` is the least quadratic cost of lifting the correct score above all competitors "
     "(the limit `q -> 1`); the active set is the competitors it must push down",
     f"{_FR}#order-statistics-method"),
    ("memory", "q*, phi",
     "minimising overlap and value of the free entropy `phi(alpha) = min_q Phi_p(q; alpha)`; "
     "in the large-p limit `q* = 2 alpha` and `phi = 1/2 ln(1 - 2 alpha)`", f"{_FR}#large-p-limit"),
    ("memory", "Hebbian",
     "the memory `W_H = sum_nu u_nu e_nu^T` (no training), with two models of its recall "
     "probability: independent-Gaussian and conditional", f"{_FR}#hebbian-rule"),
    ("memory", "P(all), single fact, alpha_H",
     "probability that all `p` facts / one given fact are recalled; `alpha_H` is the load where "
     "`P(all) = 1/2` (tends to 1/8)", f"{_FR}#independent-gaussian-model"),
    ("memory", "kappa",
     "rank fraction `m/d` of the two-layer memory `W = Q R^T / sqrt(d m)`, `Q, R` in `R^{d x m}`",
     f"{_RC}#the-model"),
    ("memory", "alpha_c(kappa)",
     "large-d capacity of the rank-kappa memory, `1/2 Int_{1-kappa}^1 X_qc(u)^2 du`; "
     "`alpha_c(1) = 1/2`", f"{_RC}#rank-constrained-capacity"),
    ("memory", "X_qc, atom, KS",
     "quarter-circle quantile function; mass of zero singular values (`1 - kappa`); "
     "Kolmogorov-Smirnov distance between a measured spectrum and a law",
     f"{_RC}#spectra-at-capacity-and-at-initialisation"),
    ("memory", "J(theta)",
     "spherical (HCIZ) integral `d^-2 ln E exp(theta d Tr(A O B O'^T))` over Haar `O, O'`",
     f"{_RC}#reduction-to-a-quantile-coupling"),
    ("memory", "MC, AIS, ESS",
     "estimators of `J`: plain Haar Monte Carlo, annealed importance sampling; effective "
     "sample size `(sum w)^2 / sum w^2` of their weights",
     f"{_RC}#annealed-importance-sampling-at-large-theta-d2"),
    ("training", "threshold (alpha_emp)",
     "load where the fraction of trials that reach exact recall of all `p` facts is 1/2, from "
     "a logistic fit over a grid of loads x seeds", f"{_LM}#empirical-capacity-threshold"),
    ("training", "95% CI",
     "profile-likelihood (Wilks) confidence interval of the threshold",
     f"{_LM}#empirical-capacity-threshold"),
    ("training", "theory",
     "the matching prediction: `alpha_c(p)` solved self-consistently at `d` (OP, DP), "
     "`alpha_c(m/d)` (low rank), the conditional Hebbian model", f"{_LM}#empirical-capacity-threshold"),
    ("training", "/OP",
     "threshold divided by the OP threshold at the same `d` (for low rank compared with "
     "`alpha_c(m/d)/alpha_c(1)`)", f"{_LM}#empirical-capacity-threshold"),
    ("training", "correct / competitor scores",
     "scores of a row divided by the standard deviation of its `p - 1` competitor scores; "
     "trained memories pin the correct score just above the largest competitor",
     f"{_FR}#mechanism-pinned-correct-scores"),
    ("training", "preset",
     "optimiser settings: `default` (Adam lr 0.1, temperature 0.05, up to 4096 steps) or "
     "`paper` (lr 1e-2, at most 512 steps)", f"{_LM}#protocol"),
    ("training", "stderr, ±",
     "Monte Carlo standard error of the number it follows", f"{_FR}#control-variates"),
    ("transformer", "S, R, D",
     "subjects, relations and answers per relation: `S R` facts `(s, r) -> a*(s, r)`, each answer "
     "in the block of `D` answers of relation `r`, `D R` answers in all", f"{_FRT}#task"),
    ("transformer", "T",
     "sequence length: subject, relation, `T - 3` noise tokens and the final EOS",
     f"{_FRT}#task"),
    ("transformer", "d, H, d_h, m",
     "embedding dimension, attention heads, head size and MLP width of the one-layer "
     "transformer; parameters counted `4 H d_h d + 2 m d`", f"{_FRT}#model"),
    ("transformer", "N",
     "number of facts (memories: input-output pairs on the unit sphere; transformer: `S R`); "
     "stored means recalled at >= 99% accuracy", f"{_FRT}#associative-memories"),
    ("retrieval", "N, V",
     "training sequences (one per fact, distinct informative tokens) and vocabulary size "
     "(`V = 4N` in the experiments)", f"{_TR}#task"),
    ("retrieval", "d, L",
     "embedding dimension (random `N(0, I/d)` embeddings, `d < V` allowed) and sequence length "
     "(one informative token marked by a trigger, `L - 1` noise tokens)", f"{_TR}#task"),
    ("retrieval", "retrieval, recall",
     "after the three early-phase GD steps, all `N` attention argmaxes are on the informative "
     "token (retrieval) / all `N` samples get their label (recall)", f"{_TR}#model"),
    ("retrieval", "beta",
     "step-size convention of the early phase, `beta = ||W1||_F`", f"{_TR}#early-phase-and-full-training"),
]

_INTRO = (
    "A *linear associative memory* stores `p` facts `(e_mu, u_mu)` in a `d x d` matrix `W`: "
    "input `mu` scores every candidate output by `u_rho^T W e_mu`, and the fact is recalled "
    "when its own output scores highest. The questions are how large the load "
    "`alpha = p ln p / d^2` can be while some `W` recalls all facts (replica theory: 1/2 "
    "for large `d`, larger at finite `p`), what training, a rank constraint and the Hebbian "
    "rule achieve, and how the same storage appears in one-layer transformers "
    "(factual recall, token retrieval). The terms used in the tables:"
)


def setup_markdown(href=None):
    """Build the Markdown of the "Setup" section (with its ``## Setup`` heading).

    Parameters
    ----------
    href : callable, optional
        Maps a docs target ``"docs/<page>.md#<anchor>"`` to the link written in the
        report (e.g. a path relative to the report folder); default: the target itself.

    Returns
    -------
    str
        Markdown: the setup of every experiment with links to its docs page.

    References
    ----------
    arXiv:2605.10795; arXiv:2412.06538; arXiv:2603.15923;
    docs/theory_full_rank.md#original-problem-op

    Examples
    --------
    >>> md = setup_markdown()
    >>> md.splitlines()[0]
    '## Setup'
    >>> "([docs](docs/theory_full_rank.md#original-problem-op))." in md
    True
    """
    href = href or (lambda target: target)
    lines = ["## Setup", "", _INTRO, ""]
    for key, heading in GROUPS:
        lines.append(f"*{heading}*")
        lines.append("")
        for group, term, definition, target in TERMS:
            if group == key:
                lines.append(f"* `{term}`: {definition} ([docs]({href(target)})).")
        lines.append("")
    return "\n".join(lines)
