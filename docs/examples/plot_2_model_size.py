r"""
How big must my model be?
=========================

Given a number of facts :math:`p` to store and a rank ratio :math:`\kappa = m/d`,
at which dimension :math:`d` does a linear associative memory :math:`W` (a
:math:`d\times d` matrix of rank :math:`m`) store them?

The capacity is a load :math:`\alpha = p\ln p / d^2`, so the smallest dimension is

.. math::

   d_{\min} = \sqrt{\frac{p \ln p}{\alpha_c}} .

Three levels of theory:

* **large-p, full rank** (:data:`replica.ALPHA_C_LIMIT`): :math:`\alpha_c = 1/2`;
* **finite p, full rank** (:func:`replica.alpha_c_finite`): the RS capacity
  :math:`\ln p / (2\,\mathbb{E}[V_p])` at the actual :math:`p`, a Monte Carlo estimate
  whose standard error propagates to :math:`d` as :math:`\delta d / d = \delta\alpha / (2\alpha)`;
* **rank** :math:`\kappa` (:func:`replica.alpha_c`): the asymptotic
  :math:`\alpha_c(\kappa)`.  It is a large-:math:`d` number; at finite size we scale the
  finite-:math:`p` full-rank capacity by :math:`\alpha_c(\kappa)/\alpha_c(1)`.  That
  product rule is **an empirical observation, not a theorem**: trained low-rank memories
  at :math:`d \le 60` store :math:`\alpha_c(\kappa)/\alpha_c(1)` times what a full-rank
  memory stores at the same :math:`d` (:doc:`/linear_memory`, section "Measured").

A Hebbian memory (no training, :math:`W = \sum_\mu u_\mu e_\mu^\top`) needs far more
room: its large-:math:`p` capacity is :data:`replica.HEBBIAN_LIMIT` :math:`= 1/8`.
"""
import math

import matplotlib.pyplot as plt
import numpy as np

import replica


def required_dimension(p, kappa=1.0, *, samples=4000, rng=0):
    """Smallest ``d`` (and rank ``m``) at which ``p`` facts fit, with the Monte
    Carlo standard error of ``d``; the finite-``p`` RS capacity times
    ``alpha_c(kappa) / alpha_c(1)`` (see the text above)."""
    est = replica.alpha_c_finite(p, samples=samples, rng=rng)
    ratio = float(replica.alpha_c(kappa)) / float(replica.alpha_c(1.0))
    alpha = est.value * ratio
    d = math.sqrt(p * math.log(p) / alpha)
    d_err = d * est.stderr / (2 * est.value)
    return d, d_err, kappa * d


# %%
# A table: facts -> dimension
# ---------------------------
print(f"{'p':>8} {'kappa':>6} {'d (large p)':>12} {'d (finite p)':>20} {'rank m':>8} "
      f"{'d Hebbian':>10}")
print("(Hebbian: full rank, large-p limit 1/8)")
for p in (10**3, 10**6, 10**9):
    for kappa in (1.0, 0.5, 0.25):
        d_inf = math.sqrt(p * math.log(p) / float(replica.alpha_c(kappa)))
        d, d_err, m = required_dimension(p, kappa)
        d_heb = (f"{math.sqrt(p * math.log(p) / replica.HEBBIAN_LIMIT):10.1f}" if kappa == 1
                 else f"{'-':>10}")
        print(f"{p:8.0e} {kappa:6.2f} {d_inf:12.1f} {d:11.1f} +- {d_err:5.2f} {math.ceil(m):8d} "
              f"{d_heb}")

# %%
# The inverse question, as a check: at ``d = 91`` how many facts does the
# finite-size theory allow?  :func:`validation.linear_memory.theory.full_rank_threshold`
# solves ``alpha = alpha_c_finite(p(alpha))`` with ``p ln p = alpha d^2``; it should
# give back about 1000 facts.
from replica import p_from_load
from validation.linear_memory.theory import full_rank_threshold

star = full_rank_threshold(91, samples=4000)
print(f"d = 91: alpha* = {star.value:.4f} +- {star.stderr:.4f}, "
      f"p = {p_from_load(star.value, 91)} facts")

# %%
# The finite-p correction lowers the required dimension: at ``p = 1e3`` the RS
# capacity is about 0.85 instead of 0.5, so ``d`` is ``sqrt(0.5 / 0.85)``, about 0.77
# times the large-p answer.  The correction fades only like ``1 / ln p``.
#
# Dimension against the number of facts
# -------------------------------------
p_grid = np.round(np.geomspace(100, 1e12, 13))
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
scale = np.sqrt(p_grid * np.log(p_grid))
for kappa, color in ((1.0, "C0"), (0.5, "C1"), (0.25, "C2")):
    rows = np.array([required_dimension(p, kappa, rng=i) for i, p in enumerate(p_grid)])
    ax1.errorbar(p_grid, rows[:, 0] / scale, yerr=rows[:, 1] / scale, fmt="o", color=color,
                 ms=4, label=rf"finite $p$, $\kappa = {kappa:g}$", zorder=2)
    ax1.axhline(1 / math.sqrt(float(replica.alpha_c(kappa))), color=color, ls="--",
                label=rf"large $p$, $\kappa = {kappa:g}$", zorder=3)
ax1.set_xscale("log")
ax1.set_xlabel("number of facts $p$")
ax1.set_ylabel(r"$d_{\min} / \sqrt{p \ln p}$  $(= 1/\sqrt{\alpha_c})$")
ax1.set_title("dimension needed to store $p$ facts")
ax1.legend(fontsize=8, ncol=2, loc="lower right")

# Rank against dimension at a fixed number of facts: a lower rank needs a larger
# d, but fewer parameters 2 m d in the factorised form W = A B^T.
p = 10**6
kappas = np.linspace(0.05, 1.0, 20)
dims = np.array([required_dimension(p, k)[0] for k in kappas])
ax2.plot(kappas, dims, "o-", color="C0", ms=4, label=r"dimension $d_{\min}$")
ax2.plot(kappas, kappas * dims, "s-", color="C1", ms=4, label=r"rank $m = \kappa d_{\min}$")
ax2.plot(kappas, 2 * kappas * dims ** 2 / 1e3, "^-", color="C2", ms=4,
         label=r"parameters $2 m d_{\min}$ / 1000")
ax2.set_yscale("log")
ax2.set_xlabel(r"rank fraction $\kappa = m/d$")
ax2.set_ylabel("size (finite-$p$ theory)")
ax2.set_title(f"$p = 10^6$ facts: rank against dimension")
ax2.legend(loc="lower right", fontsize=8)
plt.show()
