r"""
Top-1 or top-k: how many facts fit
==================================

A full-rank linear memory :math:`W \in \mathbb R^{d\times d}` stores :math:`n` facts.  How many
depends on what counts as recall:

* **top-1**: the correct score beats every competitor.  Capacity
  :math:`n \ln n / d^2 = \alpha_c(p)` (:func:`replica.alpha_c_finite`), so :math:`n` grows like
  :math:`d^2/\ln d^2`;
* **top-k (tail-average margin, TAM)**: the correct score beats the *mean* of the top
  :math:`\tau` fraction of competitors, which puts the correct target in the top
  :math:`\lceil\tau(n-1)\rceil` list.  Capacity :math:`n / d^2 = \alpha_c(\tau, n)`
  (:func:`replica.tam_capacity`), with the large-:math:`n` limit :math:`1/\Gamma(\kappa_\tau)`:
  no logarithm.

Both at the same dimension, then one instance decided exactly under both criteria
(:func:`validation.linear_memory.exact_listwise.listwise_feasibility`, certified either way).
Derivations on :doc:`/listwise`.
"""
import matplotlib.pyplot as plt
import numpy as np

import replica
from validation.linear_memory.data import make_dp
from validation.linear_memory.exact_listwise import listwise_feasibility, listwise_prediction

# %%
# Facts that fit at dimension d (replica fixed points n = n(alpha_c(n)))
# ------------------------------------------------------------------------
ds = [20, 40, 80]
taus = [0.01, 0.05, 0.2]
rows = {}
for d in ds:
    top1 = listwise_prediction("top1", d, samples=4000)
    tams = [listwise_prediction("tam", d, tau=t, samples=4000) for t in taus]
    rows[d] = (top1["p"], [r["p"] for r in tams])
    print(f"d = {d:3d}: top-1 n = {top1['p']:5d}   " +
          "   ".join(f"TAM tau={t:g}: n = {r['p']:5d}" for t, r in zip(taus, tams)))

# %%
# One instance, two criteria: decided exactly
# -------------------------------------------
# At d = 12 the top-1 capacity is about n = 40 facts and the TAM capacity at tau = 0.2 about 54
# (the fixed points above, at d = 12).  Take n = 48: in between.
d, n = 12, 48
facts = make_dp(n, d, rng=0)
r1 = listwise_feasibility(facts, criterion="top1", optimal=True)
r2 = listwise_feasibility(facts, criterion="tam", tau=0.2, optimal=True)
for name, r in (("top-1", r1), ("TAM tau=0.2", r2)):
    print(f"{name:12s}: feasible = {r.feasible}, certificate verified = {r.verified}, "
          f"best margin in [{r.gamma_low:.4f}, {r.gamma_high:.4f}]")

# %%
# The capacity curves
# -------------------
tau_grid = np.geomspace(1e-3, 1.0, 100)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
ax1.semilogx(tau_grid, replica.tam_capacity(tau_grid), "k-", label=r"TAM, large $n$: $1/\Gamma(\kappa_\tau)$")
ax1.semilogx(tau_grid, replica.tam_capacity(tau_grid, margin=0.5), "k--", label=r"TAM at margin 0.5")
ax1.set_xlabel(r"tail fraction $\tau$")
ax1.set_ylabel(r"capacity $n / d^2$")
ax1.set_title("listwise capacity (no logarithm)")
ax1.legend(loc="upper left")
for j, t in enumerate(taus):
    ax2.plot(ds, [rows[d][1][j] for d in ds], "o-", color=f"C{j + 1}", label=f"TAM, tau = {t:g}")
ax2.plot(ds, [rows[d][0] for d in ds], "ks-", label="top-1")
ax2.set_xscale("log")
ax2.set_yscale("log")
ax2.set_xlabel("dimension d")
ax2.set_ylabel("facts that fit, n")
ax2.set_title("finite-p replica predictions")
ax2.legend(loc="upper left")
plt.show()
