r"""
Spectral laws as ``scipy.stats`` objects
========================================

:mod:`hcizz` provides the spectral laws of the rank-constrained theory as frozen
``scipy.stats.rv_continuous`` distributions: ``pdf``, ``cdf``, ``ppf``, ``rvs``,
``moment``, ... all work, with an extra ``atom`` attribute when the full law has a
point mass at zero (the distribution object describes the nonzero part).

* :data:`hcizz.quarter_circle`: singular values of :math:`G/\sqrt d` for a square
  Gaussian :math:`G`, density :math:`\sqrt{4 - s^2}/\pi` on :math:`[0, 2]`;
* :func:`hcizz.mp_product`: squared singular values of :math:`W = QR^\top/\sqrt{dm}`
  with :math:`Q, R \in \mathbb{R}^{d\times m}` Gaussian and :math:`m = \kappa d` (the
  initial spectrum of a rank-:math:`m` two-layer memory); :math:`W` has rank
  :math:`m`, so the full law has an atom :math:`1 - \kappa` at zero.

Theory is compared here with one sampled matrix; see :doc:`/rank_constrained` for
the derivations.
"""
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

import hcizz

rng = np.random.default_rng(0)

# %%
# The quarter-circle law
# ----------------------
qc = hcizz.quarter_circle
print("mean, variance:", qc.mean(), qc.var())
print("moments 2, 4, 6 (Catalan numbers 1, 2, 5):", [float(qc.moment(k)) for k in (2, 4, 6)])
print("median and 99% quantile:", qc.ppf([0.5, 0.99]))
print("cdf(ppf(u)) = u:", qc.cdf(qc.ppf([0.1, 0.5, 0.9])))
print("five variates:", qc.rvs(size=5, rng=1))

d = 600
s = np.linalg.svd(rng.standard_normal((d, d)) / np.sqrt(d), compute_uv=False)
print(f"sampled d = {d}: Kolmogorov-Smirnov distance {stats.kstest(s, qc.cdf).statistic:.4f}")

# %%
# The product law, its atom, and one sampled matrix
# -------------------------------------------------
kappa = 0.5
law = hcizz.mp_product(kappa)
lo, hi = hcizz.mp_product_edges(kappa)
print(f"mp_product({kappa}): support [{lo:.4f}, {hi:.4f}], atom at 0 = {law.atom}, "
      f"mean of the nonzero part = {float(law.mean()):.4f}")
print("moments from the law vs closed form:",
      [round(float(law.moment(k)), 6) for k in (1, 2, 3)],
      [round(float(hcizz.mp_product_moment(k, kappa)), 6) for k in (1, 2, 3)])

m = int(kappa * d)
Q, R = rng.standard_normal((d, m)), rng.standard_normal((d, m))
sv2 = np.linalg.svd(Q @ R.T / np.sqrt(d * m), compute_uv=False) ** 2
tol = 1e-8 * sv2.max()
zero_frac = np.mean(sv2 < tol)
nonzero = sv2[sv2 >= tol]
print(f"sampled d = {d}, m = {m}: fraction of zero singular values {zero_frac:.4f} "
      f"(atom {law.atom}); KS distance of the nonzero part "
      f"{stats.kstest(nonzero, law.cdf).statistic:.4f}")

# %%
# Figures: histogram of the sample, law on top
# --------------------------------------------
def histogram_and_law(ax, sample, grid, pdf, color, labels, xlabel, ylabel, loc):
    """Histogram of ``sample`` with the density ``pdf`` on ``grid`` drawn over it."""
    ax.hist(sample, bins=40, density=True, color=color, alpha=0.5, label=labels[0])
    ax.plot(grid, pdf(grid), "k-", lw=2, label=labels[1])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc=loc, fontsize=8)


fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), layout="constrained")
histogram_and_law(axes[0], s, np.linspace(0, 2, 400), qc.pdf, "C0",
                  (f"singular values, d = {d}", r"quarter circle $\sqrt{4-s^2}/\pi$"),
                  r"singular value $s$ of $G/\sqrt{d}$", "density", "lower left")
histogram_and_law(axes[1], nonzero, np.linspace(lo, hi, 400), law.pdf, "C1",
                  (f"nonzero $\\sigma^2$, d = {d}, m = {m}", rf"mp_product({kappa}).pdf"),
                  r"squared singular value $\sigma^2$ of $QR^\top/\sqrt{dm}$",
                  "density of the nonzero part", "upper right")

# Full law = atom at 0 + (1 - atom) x nonzero part: its cdf jumps at zero.
z = np.concatenate([[-0.2, 0.0], np.linspace(1e-9, hi * 1.05, 400)])
full_cdf = np.where(z < 0, 0.0, law.atom + (1 - law.atom) * law.cdf(z))
ecdf = np.searchsorted(np.sort(sv2), z, side="right") / sv2.size
axes[2].step(z, ecdf, where="post", color="C1", lw=3, alpha=0.5, label="empirical cdf (sample)")
axes[2].plot(z, full_cdf, "k-", lw=1.5, label=r"atom $1-\kappa$ + $\kappa\,$cdf")
axes[2].set_xlabel(r"squared singular value $\sigma^2$")
axes[2].set_ylabel(r"cdf of the full law, $P(\sigma^2 \leq x)$")
axes[2].legend(loc="lower right", fontsize=8)
plt.show()
