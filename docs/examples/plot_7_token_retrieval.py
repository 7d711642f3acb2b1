r"""
Token retrieval: the early phase of gradient descent
====================================================

Token retrieval with random, non-orthogonal embeddings (after Vural, Bietti,
Soltanolkotabi, Wu, arXiv:2603.15923; the task, model and step sizes are our
reconstruction, see :doc:`/token_retrieval`).  Each of :math:`N` training
sequences of length :math:`L` hides one informative token (marked by a trigger
added to its embedding) among noise tokens; the label is a fixed permutation of
the informative token.  A one-layer attention model is trained by three steps of
gradient descent from zero (:func:`validation.token_retrieval.early_phase`).

Two events are measured for each run (:func:`validation.token_retrieval.runs.run_config`):
*retrieval* (all :math:`N` attentions peak on the informative position) and
*recall* (all :math:`N` training samples answered correctly).  The theory drawn
on top is the project's signal-to-noise model
(:func:`validation.token_retrieval.success.extreme_success_prob`): the bulk
means and variances of the scores of each run, turned into the probability
that every sample's correct score beats all its competitors.  It is an
extrapolation from bulk statistics to a tail event, not a closed form.
With one-hot (orthogonal) embeddings there is no cross-talk between labels, and
recall does not degrade as :math:`N` grows (its few failures here are at the
smallest :math:`N`, where the few samples make the early phase less reliable).
"""
import matplotlib.pyplot as plt
import numpy as np

from validation.token_retrieval.runs import run_config

d, L, seeds = 128, 4, 12
N_values = [2, 4, 8, 12, 16, 24, 31]      # vocabulary V = 4N; one-hot needs d >= V + 2
rows = []
for N in N_values:
    runs = [run_config(N, d, L, seed=s) for s in range(seeds)]
    ortho = [run_config(N, d, L, seed=s, kind="orthogonal") for s in range(seeds)]
    rows.append({
        "N": N,
        "recall": np.mean([r["recall"] for r in runs]),
        "recall_snr": np.mean([r["p_recall_snr"] for r in runs]),
        "retrieval": np.mean([r["retrieval"] for r in runs]),
        "retrieval_snr": np.mean([r["p_retrieval_snr"] for r in runs]),
        "recall_orth": np.mean([r["recall"] for r in ortho]),
    })
    print(f"N = {N:3d}: recall {rows[-1]['recall']:.2f} (SNR model {rows[-1]['recall_snr']:.2f}), "
          f"retrieval {rows[-1]['retrieval']:.2f} (SNR model {rows[-1]['retrieval_snr']:.2f}), "
          f"one-hot recall {rows[-1]['recall_orth']:.2f}")

N = np.array(N_values)
se = lambda f: np.sqrt(np.maximum(f * (1 - f), 0.25 / seeds) / seeds)   # binomial s.e.
recall = np.array([r["recall"] for r in rows])
retrieval = np.array([r["retrieval"] for r in rows])

# %%
# Success fraction against the number of training sequences
# ---------------------------------------------------------
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
ax1.errorbar(N, recall, yerr=se(recall), fmt="o", color="C0", capsize=2,
             label=f"random embeddings ({seeds} seeds, $\\pm$ 1 s.e.)", zorder=2)
ax1.plot(N, [r["recall_orth"] for r in rows], "s", color="C2", mfc="none",
         label="one-hot embeddings", zorder=2)
ax1.plot(N, [r["recall_snr"] for r in rows], "k-", lw=2, label="SNR model (random)", zorder=3)
ax1.set_xscale("log", base=2)
ax1.set_xlabel("training sequences $N$ (vocabulary $V = 4N$)")
ax1.set_ylabel("fraction of runs recalling all $N$ samples")
ax1.set_title(f"recall after three GD steps, d = {d}, L = {L}")
ax1.legend(loc="lower left", fontsize=8)

ax2.errorbar(N, retrieval, yerr=se(retrieval), fmt="o", color="C1", capsize=2,
             label=f"random embeddings ({seeds} seeds, $\\pm$ 1 s.e.)", zorder=2)
ax2.plot(N, [r["retrieval_snr"] for r in rows], "k-", lw=2, label="SNR model", zorder=3)
ax2.set_xscale("log", base=2)
ax2.set_xlabel("training sequences $N$")
ax2.set_ylabel("fraction of runs retrieving all $N$ tokens")
ax2.set_title(f"retrieval after three GD steps, d = {d}, L = {L}")
ax2.set_ylim(-0.05, 1.05)
ax2.legend(loc="lower right", fontsize=8)
plt.show()

# %%
# Recall of every sample fails once the label cross-talk, of order
# ``sqrt(N / d)`` per logit, competes with the unit margin: the window of
# success shrinks as ``N`` grows at fixed ``d``.  Phase diagrams over
# ``(N, d, L)`` and fitted boundaries are on :doc:`/token_retrieval`.
