r"""
Checking a limit symbolically
=============================

The large-:math:`p` results of the replica computation are exact formulas, so they
can be checked by a computer-algebra system rather than by numbers.  This example
does two derivations with sympy by hand, then runs the registered checks of
:mod:`replica.symbolic` (the same ones as ``python -m replica check``).

**Saddle point.**  For :math:`p \to \infty` the energy term is
:math:`G(q) = -1/(1-q)` and the replica-symmetric free entropy is

.. math::

   \Phi(q;\alpha) = \tfrac12 \ln(1-q) + \frac{q}{2(1-q)} + \alpha\, G(q).

Its stationary point is :math:`q^* = 2\alpha` with value
:math:`\phi = \tfrac12\ln(1-2\alpha)`, which diverges at :math:`\alpha_c = 1/2`.

**Hebbian 1/8.**  With :math:`W = \sum_\mu u_\mu e_\mu^\top` the correct score has
mean-to-noise ratio :math:`m = d/\sqrt{p+2d} \to \sqrt{\ln p / \alpha}`; all facts are
recalled when :math:`m` exceeds the largest of :math:`p` competitor scores,
:math:`\sqrt{2\ln p}`, by the fluctuation of the largest noise term,
:math:`m - \sqrt{2\ln p} = \sqrt{2\ln p}`, which gives :math:`\alpha_H = 1/8`
(and :math:`1/2` for a single fact).  See :doc:`/theory_full_rank`.
"""
import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

import replica
from replica.symbolic import run_checks

# %%
# The saddle point q* = 2 alpha
# -----------------------------
q, alpha = sp.symbols("q alpha", positive=True)
Phi = sp.log(1 - q) / 2 + q / (2 * (1 - q)) - alpha / (1 - q)
q_star = sp.solve(sp.together(sp.diff(Phi, q)), q)
phi_star = sp.simplify(Phi.subs(q, q_star[0]))
print("stationary points:", q_star)
print("Phi''(q*) =", sp.simplify(sp.diff(Phi, q, 2).subs(q, q_star[0])))
print("phi(alpha) =", phi_star, " -> as alpha -> 1/2-:",
      sp.limit(phi_star, alpha, sp.Rational(1, 2), dir="-"))
assert q_star == [2 * alpha]
assert sp.simplify(sp.expand_log(phi_star - sp.log(1 - 2 * alpha) / 2, force=True)) == 0

# %%
# The Hebbian threshold 1/8
# -------------------------
L, a = sp.symbols("L alpha", positive=True)       # L = ln p
m = sp.sqrt(L / a)                                 # large-p signal-to-noise ratio
all_facts = sp.solve(sp.Eq(m - sp.sqrt(2 * L), sp.sqrt(2 * L)), a)
one_fact = sp.solve(sp.Eq(m, sp.sqrt(2 * L)), a)
print("all facts recalled up to alpha =", all_facts, "; a single fact up to alpha =", one_fact)
assert all_facts == [sp.Rational(1, 8)] and one_fact == [sp.Rational(1, 2)]

# %%
# Every registered derivation
# ---------------------------
# :func:`replica.symbolic.run_checks` runs the checks of every module listed in
# :data:`replica.symbolic.CHECK_MODULES`; a crashing derivation counts as a failure.
results = run_checks()
for r in results:
    print(f"[{'ok' if r['ok'] else 'FAIL'}] {r['module'].rsplit('.', 1)[-1]}: {r['name']}")
print(f"{sum(r['ok'] for r in results)} of {len(results)} derivations hold")

# %%
# The symbolic saddle against the numerical one
# ---------------------------------------------
# :func:`replica.saddle` locates the stationary point numerically (``p=None``: the
# large-p energy term); its ``q`` and ``phi`` must lie on the symbolic curves.
alphas = np.linspace(0.02, 0.48, 12)
num = [replica.saddle(x) for x in alphas]
grid = np.linspace(0.0, 0.495, 300)
phi_of = sp.lambdify(alpha, phi_star, "numpy")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
ax1.plot(alphas, [s.q for s in num], "o", color="C0", label="replica.saddle (numerical)",
         zorder=2)
ax1.plot(grid, 2 * grid, "k-", lw=1.5, label=r"sympy: $q^* = 2\alpha$", zorder=3)
ax1.set_xlabel(r"load $\alpha = p\ln p/d^2$")
ax1.set_ylabel(r"overlap at the saddle $q^*$")
ax1.legend(loc="upper left")
ax2.plot(alphas, [s.phi for s in num], "o", color="C1", label="replica.saddle (numerical)",
         zorder=2)
ax2.plot(grid, phi_of(grid), "k-", lw=1.5, label=r"sympy: $\frac{1}{2}\ln(1-2\alpha)$", zorder=3)
ax2.axvline(0.5, color="grey", ls=":", label=r"$\alpha_c = 1/2$")
ax2.set_xlabel(r"load $\alpha = p\ln p/d^2$")
ax2.set_ylabel(r"free entropy at the saddle $\phi$")
ax2.legend(loc="lower left")
plt.show()
