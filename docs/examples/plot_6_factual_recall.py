r"""
Factual recall in a one-layer transformer, at laptop size
=========================================================

A synthetic factual-recall task (Nichani, Lee, Bietti, arXiv:2412.06538, in our own
formulation; see :doc:`/factual_recall`): :math:`S` subjects and :math:`R` relations;
each fact :math:`(s, r)` has a fixed answer in the block of :math:`D` answers owned by
relation :math:`r`.  A sequence of length :math:`T` holds the subject and the
relation at random positions among noise tokens and ends with EOS; the model must
output the answer at EOS.

Two experiments, each a few seconds:

1. **Storage grows with the parameter count.**  A one-layer transformer
   (:class:`validation.factual_recall.transformer.OneLayerTransformer`, ``4 H d_h d + 2 m d``
   parameters) is trained with Adam on fresh batches; we plot the fraction of facts
   recalled against facts per parameter for two sizes.  If storage is linear in the
   parameter count, the curves collapse.
2. **Sequential learning.**  With one-hot embeddings and linear attention, gradient
   descent from a small initialisation learns the relation before the subject: the
   loss sits on a plateau at :math:`\ln(DR)` (uniform over all answers), drops to a
   second plateau at :math:`\ln D` (right block, uniform inside it), then to 0.
"""
import math

import matplotlib.pyplot as plt
import numpy as np

from validation.factual_recall.experiments import train_transformer
from validation.factual_recall.sequential import train_sequential
from validation.factual_recall.task import make_task
from validation.factual_recall.transformer import OneLayerTransformer

# %%
# Accuracy against facts per parameter
# ------------------------------------
# ``d = 16``; two attention sizes.  ``S = R`` (a square split keeps the
# vocabulary small), ``D = 8`` answers per relation, ``T = 8``, 500 Adam steps of
# 128 fresh sequences; each fact is evaluated on 2 fresh sequences.
shapes = [(16, 2, 8, 16), (16, 4, 8, 16)]           # (d, H, d_h, m)
sides = [5, 6, 7, 8, 9, 10, 11, 12]
curves = {}
for d, H, d_h, m in shapes:
    params = OneLayerTransformer.count_params(d, H, d_h, m)
    acc = []
    for k in sides:
        task = make_task(k, k, 8, T=8, rng=k)
        r = train_transformer(task, d, H, d_h, m, steps=500, batch=128, lr=1e-2, rng=100 + k,
                              eval_repeats=2)
        acc.append(r["accuracy"])
    curves[(H, params)] = np.array(acc)
    print(f"H = {H}, {params} params: accuracy", np.round(acc, 3), "at facts",
          [k * k for k in sides])

# %%
# Sequential learning: relation first, then subject
# -------------------------------------------------
S, R, D = 64, 4, 8
out = train_sequential(S, R, D, T=8, steps=1500, lr=2.0, init=1e-3, eval_every=5, rng=0)
st = out["stages"]
print(f"plateau 1 = {st['plateau1']:.3f} (ln DR = {math.log(D * R):.3f}); "
      f"plateau 2 = {st['plateau2']:.3f} (ln D = {math.log(D):.3f})")
print(f"relation learnt at step {st['relation_learnt']}, subject at step "
      f"{st['subject_learnt']}: {st['order']}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
for (H, params), acc in curves.items():
    facts = np.array([k * k for k in sides])
    ax1.plot(facts / params, acc, "o-", ms=4, label=f"H = {H} heads, {params} parameters")
ax1.axhline(0.99, color="k", ls=":", label="0.99: the report's \"stored\" level")
ax1.set_xlabel("facts per parameter")
ax1.set_ylabel("fraction of facts recalled")
ax1.set_title("one-layer transformer, d = 16 (one training per point)")
ax1.legend(loc="lower left", fontsize=8)

ax2.plot(out["step"], out["total"], color="C0", lw=2, label="total loss", zorder=2)
ax2.plot(out["step"], out["relation"], color="C1", label="relation loss", zorder=2)
ax2.plot(out["step"], out["subject"], color="C2", label="subject loss", zorder=2)
ax2.axhline(math.log(D * R), color="k", ls="--", lw=1.2, label=r"theory plateau $\ln(DR)$",
            zorder=3)
ax2.axhline(math.log(D), color="k", ls=":", lw=1.5, label=r"theory plateau $\ln D$", zorder=3)
ax2.set_xlabel("gradient step")
ax2.set_ylabel("cross-entropy loss (nats)")
ax2.set_title(f"sequential learning, S = {S}, R = {R}, D = {D}")
ax2.legend(loc="center right", fontsize=8)
plt.show()

# %%
# At these sizes and short budgets the transformer stores roughly 0.03 facts per
# parameter, about five times less than the paper's guide line; the stored
# ``T = 32`` study at the end of this example, trained until recall stops improving,
# comes much closer (:doc:`/factual_recall`).

# %%
# Stored studies at the paper's length: facts per parameter and the trade-off
# ---------------------------------------------------------------------------
# Nothing is trained here: the committed stores of the studies
# ``factual_recall.facts_per_param`` and ``factual_recall.tradeoff``
# (:mod:`validation.studies.factual_recall_capacity`; ``T = 32``, ``H = 8`` heads,
# constant-rate Adam until 99 % of the facts are recalled) are replayed and
# refitted.  Left: capacity (50 % point of a logistic fit over ``ln N``, 95 %
# profile CI) against the parameter count, with the fitted slope and the paper's
# guide line.  Right: success fraction at a fixed 100 facts over attention and MLP
# parameters (``d = 16``).  Regenerate or extend the stores with
# ``python -m validation study factual_recall.facts_per_param`` (and
# ``factual_recall.tradeoff``).
from validation.factual_recall.theory import PAPER_FACTS_PER_PARAM
from validation.studies import get_study

fp = get_study("factual_recall.facts_per_param").run(progress=False).outcome
ts = get_study("factual_recall.tradeoff").run(progress=False).outcome
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
colors = {16: "C0", 32: "C1", 64: "C2"}
for r in fp.configs:
    if math.isfinite(r.facts) and math.isfinite(r.ci_high):
        ax1.errorbar(r.params, r.facts, yerr=[[r.facts - r.ci_low], [r.ci_high - r.facts]],
                     fmt="o", color=colors[r.d], capsize=3)
for d_, c in colors.items():
    ax1.plot([], [], "o", color=c, label=f"measured, d = {d_}")
xs = np.geomspace(1e3, 3e4, 20)
if math.isfinite(fp.fit.value):
    ax1.plot(xs, fp.fit.value * xs, "k-", label=f"fit: {fp.fit.value:.3f} facts / parameter")
ax1.plot(xs, PAPER_FACTS_PER_PARAM * xs, ":", color="gray",
         label=f"paper's guide line, {PAPER_FACTS_PER_PARAM:g}")
ax1.set(xscale="log", yscale="log", xlabel="parameters 4 H d_h d + 2 m d",
        ylabel="facts stored (>= 99 % recalled)", title="T = 32, D = 8 (stored sweep)")
ax1.legend(fontsize=8)
g = ts.grid
im = ax2.imshow(np.array(g.success, float), origin="lower", vmin=0, vmax=1,
                cmap="viridis", aspect="auto")
ax2.set_xticks(range(len(g.m)), [str(p) for p in g.mlp_params])
ax2.set_yticks(range(len(g.H)), [str(p) for p in g.attention_params])
ax2.set(xlabel="MLP parameters 2 m d", ylabel="attention parameters 4 H d_h d",
        title=f"success fraction, {g.facts} facts, d = {g.d}")
fig.colorbar(im, ax=ax2, label="fraction of seeds with >= 99 % recalled")
plt.show()
print(f"facts per parameter: {fp.fit.value:.4f} {np.round([fp.fit.ci_low, fp.fit.ci_high], 4)}; "
      f"bits per parameter: {fp.fit.bits_per_param:.3f}")
