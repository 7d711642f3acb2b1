r"""
The capacity curve: rank-constrained and finite-:math:`p`
==========================================================

Two questions about the replica-symmetric (RS) capacity of a linear associative
memory, answered with :mod:`replica`:

1. How does the capacity of a memory of rank :math:`m = \kappa d` depend on
   :math:`\kappa`?  The closed form :func:`replica.alpha_c` and its small-:math:`\kappa`
   expansion :func:`replica.alpha_c_small_kappa`,

   .. math::

      \alpha_c(\kappa) = \frac{2y - \sin 2y}{4\pi},\quad y - \sin y = \pi\kappa,
      \qquad
      \alpha_c(\kappa) = 2\kappa - \frac{(6\pi\kappa)^{5/3}}{20\pi} + O(\kappa^{7/3}).

2. How far is a memory storing :math:`p` facts from the large-:math:`p` value
   :math:`p\ln p/d^2 = 1/2`?  The finite-:math:`p` capacity
   :math:`\alpha_c(p) = \ln p / (2\,\mathbb{E}[V_p])` of :func:`replica.alpha_c_finite`,
   a Monte Carlo estimate with a standard error, from :math:`p=2` to :math:`p=10^{15}`.

The derivations are on :doc:`/rank_constrained` and :doc:`/theory_full_rank`.
"""
import math

import matplotlib.pyplot as plt
import numpy as np

import replica

# %%
# Rank-constrained capacity and its small-kappa expansion
# --------------------------------------------------------
kappa = np.geomspace(1e-3, 1.0, 200)
exact = replica.alpha_c(kappa)
order1 = replica.alpha_c_small_kappa(kappa, order=1)
order2 = replica.alpha_c_small_kappa(kappa, order=2)
for k in (0.25, 0.5, 1.0):
    print(f"alpha_c({k}) = {float(replica.alpha_c(k)):.6f}")

# The error of the two-term expansion must shrink like kappa^(7/3).
err2 = np.abs(exact - order2)
slope = np.polyfit(np.log(kappa[:60]), np.log(err2[:60]), 1)[0]
print(f"log-log slope of |alpha_c - expansion| for kappa < {kappa[59]:.3f}: {slope:.3f} "
      f"(expected 7/3 = {7 / 3:.3f})")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
ax1.plot(kappa, exact, "k-", lw=2.5, label=r"closed form $\alpha_c(\kappa)$")
ax1.plot(kappa, order1, "C0--", label=r"$2\kappa$ (order 1)")
ax1.plot(kappa, order2, "C1:", lw=2, label=r"$2\kappa - (6\pi\kappa)^{5/3}/(20\pi)$ (order 2)")
ax1.set_xlim(0, 1)
ax1.set_ylim(0, 0.6)
ax1.set_xlabel(r"rank fraction $\kappa = m/d$")
ax1.set_ylabel(r"capacity $\alpha_c = p\ln p / d^2$")
ax1.set_title("rank-constrained capacity")
ax1.legend(loc="lower right")

ax2.loglog(kappa, np.abs(exact - order1), "C0-", label="error of order 1")
ax2.loglog(kappa, err2, "C1-", label="error of order 2")
ax2.loglog(kappa, err2[0] * (kappa / kappa[0]) ** (7 / 3), "k--",
           label=r"$\propto \kappa^{7/3}$")
ax2.set_xlabel(r"rank fraction $\kappa$")
ax2.set_ylabel(r"$|\alpha_c(\kappa) - \mathrm{expansion}|$")
ax2.set_title("error of the small-$\\kappa$ expansion")
ax2.legend(loc="upper left")
plt.show()

# %%
# Finite-p capacity from p = 2 to p = 1e15
# ----------------------------------------
# Each point is a Monte Carlo estimate (4000 samples, control variates) with
# one standard error.  At ``p = 2`` the exact value is ``2 ln 2``; as
# ``p -> infinity`` the capacity decreases to ``1/2``, slowly: the correction is
# of order ``1/ln p``.
p_values = np.array([2, 3, 5, 10, 30, 100, 1e3, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12, 1e15])
est = [replica.alpha_c_finite(p, samples=4000, rng=i) for i, p in enumerate(p_values)]
value = np.array([e.value for e in est])
stderr = np.array([e.stderr for e in est])
for p, e in zip(p_values, est):
    print(f"p = {p:8.3g}: alpha_c(p) = {e.value:.5f} +- {e.stderr:.5f}")
print(f"p = 2: exact 2 ln 2 = {2 * math.log(2):.5f}, "
      f"deviation {(value[0] - 2 * math.log(2)) / stderr[0]:+.2f} standard errors")

fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
ax.errorbar(p_values, value, yerr=stderr, fmt="o", color="C0", ms=4, capsize=2,
            label=r"Monte Carlo $\ln p/(2\,\mathbb{E}[V_p])$ $\pm$ 1 s.e.", zorder=2)
ax.axhline(replica.ALPHA_C_LIMIT, color="k", ls="--", lw=2,
           label=r"large-$p$ limit $1/2$", zorder=3)
ax.plot([2], [2 * math.log(2)], "k*", ms=14, label=r"exact at $p=2$: $2\ln 2$", zorder=3)
ax.set_xscale("log")
ax.set_xlabel(r"number of facts $p$")
ax.set_ylabel(r"finite-$p$ capacity $\alpha_c(p) = p\ln p / d^2$")
ax.set_title("finite-$p$ replica-symmetric capacity")
ax.legend(loc="upper right")
plt.show()
