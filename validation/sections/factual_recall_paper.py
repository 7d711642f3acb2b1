"""Factual-recall report, part 11: the paper's model and protocol against the paper's own code.

Rendering only.  Both report modes replay the committed store of the study
``factual_recall.paper_protocol`` (:mod:`validation.studies.factual_recall_paper`;
each size that fails costs three runs of 16384 steps, too long for a report run)
and the committed runs of the paper's code; the comparison is computed by the
study's summary.  Every sentence that states a conclusion is built from the
numbers it cites.
"""
from __future__ import annotations

from validation.sections.base import fill_doc, md_table
from validation.sections.factual_recall_theory import run_study
from validation.studies import get_study
from validation.studies.factual_recall_paper import PAPER_CODE_FILE, PAPER_PROTOCOL

__all__ = ["render"]

NAME = "factual_recall.paper_protocol"


def _one(o):
    if o.S is None:
        return "unresolved" if any(v is None for v in o.sizes.values()) else "none"
    return f"{o.S}{'' if o.bracketed else '*'}"


def _sizes(outcomes):
    """``"13, 14*"``: largest passed sizes, ``*`` where the next size was not resolved."""
    return ", ".join(_one(o) for o in outcomes) or "-"


@fill_doc
def render(ctx, md, data, figs):
    """Append part 11 (the paper's model and protocol next to the paper's code).

    %(render_parameters)s
    data : dict
        The section's ``report.json`` entry; ``paper_model``, ``paper_code_comparison`` and
        ``ours_model_paper_protocol`` (our model's paths under the same protocol) are added.
    figs : list of str
        Figure names (none added).

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#the-papers-protocol-against-the-papers-code
    """
    ctx.progress("factual_recall: paper model and protocol against the paper's code (stored)")
    study = get_study(NAME)
    run, _ = run_study(ctx, NAME, always_replay=True)
    s = run.outcome
    # our model (EOS residual, our initialisation) under the same protocol: the cost of the deviations
    ours_model = run_study(ctx, NAME, always_replay=True, variant="ours")[0].outcome
    meta = s.paper_code
    p = PAPER_PROTOCOL
    md.append("\n### 11. The paper's model and protocol against the paper's code\n")
    budgets = sorted({q.steps for q in s.paths})
    budget_txt = (f"up to {' / '.join(map(str, budgets))} Adam steps"
                  + ("" if budgets == [p["steps"]] else
                     f" (the paper's budget is {p['steps']}; runs of a longer budget are read at "
                     f"the shorter one, and so are the paper code's runs)"))
    md.append(f"Our model with `variant=\"paper\"` (no EOS residual, `Q, K, V` std `1/sqrt(d_h)`, "
              f"`O` std `1/sqrt(d)`, LeCun MLP layers) trained by the paper's protocol: batches of "
              f"{p['batch']} fresh sequences, {budget_txt}, a test set of "
              f"{p['n_test']} fresh sequences checked every {p['eval_every']} steps (stop above 99 %), "
              f"a size `S = R` passes if any of the rates "
              f"{', '.join(f'{lr:g}' for lr in p['lrs'])} passes; the capacity is the largest "
              f"passed size (facts `S^2`). The paper's own code (commit `{meta['commit'][:12]}` of "
              f"{meta['repository']}, files {', '.join(meta['files'])}) was run at the same shapes "
              f"in a separate jax environment (device: {meta['environment']['device']}; jax "
              f"{meta['environment']['jax']}, flax {meta['environment']['flax']}, optax "
              f"{meta['environment']['optax']}); its runs are committed as `{PAPER_CODE_FILE}`. "
              f"Both sides go through the same criterion function. Store `{study.stored}` "
              f"(replayed); regenerate / extend with `OMP_NUM_THREADS=1 {study.command()} "
              f"--workers 2`.\n")
    rows = []
    for r, r_ours in zip(s.comparison, ours_model.comparison):
        ours = [q for q in s.paths if (q.d, q.H, q.d_h, q.m) == (r.d, r.H, r.d_h, r.m)]
        fpp = [q.facts_per_param for q in ours if q.facts_per_param is not None]
        rows.append((r.d, r.H, r.d_h, r.m, r.params, r.budget, _sizes(r.paper_code_full),
                     _sizes(r.paper_code),
                     _sizes(r.ours),
                     ", ".join(f"{x:.3f}" for x in fpp) or "-",
                     "-" if r.within_paper_range is None else
                     ("yes" if r.within_paper_range else "no"),
                     _sizes(r_ours.ours)))
    md.append(md_table(["d", "H", "d_h", "m", "params", "budget",
                        f"paper code at {p['steps']} steps: largest passed S (per seed)",
                        "paper code at budget", "ours at budget (paper model)",
                        "ours: facts / param", "ours within paper range +-1",
                        "ours at budget (our model: EOS residual, our init)"], rows))
    md.append("\n`*`: the next size was not resolved (search unfinished), so the size is a lower "
              "bound; `unresolved`: no size passed and a size is still pending. Sizes are `S = R` "
              "(facts `S^2`). Seeds of the two sides are unrelated (jax and numpy streams).\n")
    reading = []
    for r in s.comparison:
        ps = [o.S for o in r.paper_code if o.bracketed]
        us = [o.S for o in r.ours if o.bracketed]
        if r.within_paper_range is None:
            verdict = "not resolved on " + ("either side" if not ps and not us else
                                            "our side" if not us else "the paper code's side")
        elif r.within_paper_range:
            verdict = "ours lie within one size of the paper code's"
        else:
            verdict = "ours differ from the paper code's by more than one size"
        reading.append(f"`d = {r.d}` at {r.budget} steps: paper code {ps or '-'}, ours "
                       f"{us or '-'} (resolved sizes): {verdict}")
    md.append("\nReading: " + "; ".join(reading) + ".\n")
    cost = []
    for r, r_ours in zip(s.comparison, ours_model.comparison):
        a = [o.S for o in r.ours if o.bracketed]
        b = [o.S for o in r_ours.ours if o.bracketed]
        if a and b:
            ratio = (sum(x * x for x in b) / len(b)) / (sum(x * x for x in a) / len(a))
            cost.append(f"`d = {r.d}`: our model {b} against the paper model's {a} (mean facts "
                        f"{ratio:.2f}x)")
    if cost:
        md.append("Our model under the same protocol (the cost of the EOS residual and our "
                  "initialisation, same seeds): " + "; ".join(cost) + ".\n")
    md.append(md_table(["d", "seed", "S", "lr passed", "pass step", "sizes tried (pass/fail)",
                        "CPU s"],
                       [(q.d, q.seed, "-" if q.outcome.S is None else q.outcome.S,
                         "-" if q.outcome.lr is None else f"{q.outcome.lr:g}",
                         "-" if q.outcome.pass_step is None else q.outcome.pass_step,
                         ", ".join(f"{k}:{'pass' if v else 'fail' if v is False else 'pending'}"
                                   for k, v in q.outcome.sizes.items()),
                         f"{q.cpu_seconds:.0f}") for q in s.paths]))
    if s.pending:
        md.append(f"\n{s.pending} search path(s) are not finished in the committed store.\n")
    data["paper_model"] = [q.to_dict() for q in s.paths]
    data["ours_model_paper_protocol"] = [q.to_dict() for q in ours_model.paths]
    data["paper_code_comparison"] = {"rows": [r.to_dict() for r in s.comparison],
                                     "paper_code": meta, "protocol": dict(p, lrs=list(p["lrs"])),
                                     "pending_paths": s.pending}
