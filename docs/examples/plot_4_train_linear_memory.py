r"""
Training a linear memory and reading its threshold
==================================================

A linear associative memory :math:`W \in \mathbb{R}^{d\times d}` stores :math:`p` facts
:math:`e_\mu \mapsto u_\mu` (random unit-scale vectors) if, for every input, the
correct output has the largest score :math:`u_\rho^\top W e_\mu` among the :math:`p`
candidates.  We train :math:`W` by full-batch Adam on the cross-entropy at several
loads :math:`\alpha = p\ln p/d^2`, a few seeds each, and fit the load where the
success probability crosses 1/2 (:func:`validation.logistic.fit_threshold`,
logistic model, 95% profile-likelihood interval).

The theory to compare with is the finite-size replica-symmetric capacity at this
:math:`d` (:func:`validation.linear_memory.theory.full_rank_threshold`: the fixed
point of :math:`\alpha = \alpha_c(p(\alpha))`), not the large-:math:`d` value 1/2.

All trainings go through the experiment engine
(:func:`validation.engine.run_sweep`) with an append-only store: every finished
trial is a line of a JSONL file, and a rerun with the same store reads the
results back instead of training again.  The protocol and the measured
comparison at larger :math:`d` are on :doc:`/linear_memory`; the engine is
described on :doc:`/sweeps`.
"""
import os
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np

from validation.engine import read_store
from validation.linear_memory import measure_capacity

# %%
# Run the sweep (about 30 trainings at d = 16)
# --------------------------------------------
# ``executor="inprocess"`` keeps this example in one process; on a real machine
# use the default ``"processes"`` with ``workers=...``.  A store in a fresh
# temporary directory makes this run train from scratch.
store = os.path.join(tempfile.mkdtemp(prefix="assocmem_gallery_"), "linear_memory.jsonl")
d = 16
t0 = time.perf_counter()
res = measure_capacity("op", d, seeds=4, store=store, executor="inprocess", progress=False)
first = time.perf_counter() - t0
th = res["theory"]
print(f"{res['trials']} trainings, {res['train_cpu_seconds']:.1f} s CPU in training, "
      f"{first:.1f} s wall including the theory")
print(f"measured threshold: {res['threshold']:.3f}, 95% CI [{res['ci_low']:.3f}, "
      f"{res['ci_high']:.3f}]")
print(f"theory ({th['name']}): {th['value']:.3f} +- {th['stderr']:.4f} (p = {th['p']}); "
      f"large-d limit {th['half']}")

# %%
# Rerun: every trial is read back from the store
# ----------------------------------------------
t0 = time.perf_counter()
again = measure_capacity("op", d, seeds=4, store=store, executor="inprocess", progress=False)
print(f"rerun: {time.perf_counter() - t0:.2f} s, same threshold: "
      f"{again['threshold'] == res['threshold']}")
print(f"the store holds {len(read_store(store).ok)} finished trials")

# %%
# Success fraction against load, theory on top
# --------------------------------------------
counts = np.array(res["counts"], dtype=float)          # rows: load, successes, trials
load, succ, n = counts.T
frac = succ / n
se = np.sqrt(np.maximum(frac * (1 - frac), 0.25 / n) / n)   # binomial s.e. (floored at 0/1)
grid = np.linspace(load.min(), load.max(), 200)
fit = 1 / (1 + np.exp((grid - res["threshold"]) / res["width"]))

fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
ax.errorbar(load, frac, yerr=se, fmt="o", color="C0", capsize=2,
            label=f"trained, {int(n[0])} seeds per load ($\\pm$ 1 s.e.)", zorder=2)
ax.plot(grid, fit, "C0-", lw=1, label="logistic fit", zorder=2)
ax.axvspan(res["ci_low"], res["ci_high"], color="C0", alpha=0.15,
           label="95% CI of the fitted threshold")
ax.axvline(th["value"], color="k", lw=2, label=f"finite-size RS theory {th['value']:.3f}",
           zorder=3)
ax.set_xlabel(r"load $\alpha = p\ln p / d^2$")
ax.set_ylabel("fraction of trainings that store every fact")
ax.set_title(f"linear memory, d = {d}: threshold vs theory")
ax.set_ylim(-0.05, 1.1)
ax.legend(loc="lower left", fontsize=8)
plt.show()

# %%
# At this small size the large-d value 1/2 is far off; the finite-size theory
# is the relevant prediction.  With four seeds per load the interval is wide:
# more seeds (and larger ``d``) narrow it, see :doc:`/linear_memory`.

import shutil  # noqa: E402

shutil.rmtree(os.path.dirname(store))   # the temporary store is not needed any more
