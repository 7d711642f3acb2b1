r"""
Check a limit yourself
======================

The large-:math:`p` results of the replica computation are exact formulas, so a
computer-algebra system can check them.  :mod:`replica.symbolic` hands out the
theory as sympy objects: each function returns a :class:`~replica.symbolic.Formula`,
an ordinary sympy expression (``.expr``) with its named symbols (``.symbols``) that
also evaluates numerically and prints in LaTeX.  Here we derive three results in a
few lines each and compare them with the numerical functions of :mod:`replica`:

* the saddle point :math:`q^* = 2\alpha` of the replica-symmetric free entropy
  :math:`\Phi(q;\alpha) = \tfrac12\ln(1-q) + \frac{q}{2(1-q)} + \alpha\,G(q)` with the
  large-:math:`p` energy term :math:`G(q) = -1/(1-q)`, and the capacity
  :math:`\alpha_c = 1/2`;
* the Hebbian threshold :math:`\alpha_H = 1/8`;
* the small-:math:`\kappa` series of the rank-constrained capacity
  :math:`\alpha_c(\kappa)`, to any order.

The math is on :doc:`/theory_full_rank` and :doc:`/rank_constrained`; the objects are
listed in the :doc:`/reference_replica`.
"""
import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

import replica
from replica import symbolic as rs

# %%
# The saddle point q* = 2 alpha
# -----------------------------
# Take the functional, differentiate, solve.  ``rs.saddle_point()`` does the same
# and also returns the value and the curvature at the saddle.
Phi = rs.free_entropy_functional()
q, alpha = Phi.symbols
q_star = sp.solve(sp.diff(Phi.expr, q), q)
phi = sp.simplify(Phi.expr.subs(q, q_star[0]))
print(r"\Phi(q;\alpha) =", Phi.latex())
print(r"q^* =", sp.latex(q_star[0]), r"\qquad \varphi(\alpha) =", sp.latex(phi))
print(r"\lim_{q\to 1^-} (1-q)\,\Phi =", sp.latex(rs.limit((1 - q) * Phi.expr, q, 1, dir="-")))
print(r"\lim_{\alpha\to 1/2^-} \varphi =", sp.latex(rs.limit(phi, alpha, sp.Rational(1, 2), dir="-")))

# %%
# Against the numerical saddle: :func:`replica.saddle` (``p=None``) for a grid of loads.
s = rs.saddle_point()
alphas = np.linspace(0.02, 0.48, 24)
num = replica.saddle(alphas)
print("max |q*_sympy - q*_numeric|   =", np.max(np.abs(s.q_star(alphas) - num.q)))
print("max |phi_sympy - phi_numeric| =", np.max(np.abs(s.phi(alphas) - num.phi)))

# %%
# With the energy term left symbolic, the stationarity condition is all sympy can
# give, and the limit at :math:`q \to 1` depends on the unknown :math:`G`:
# :func:`replica.symbolic.limit` says so instead of returning an unevaluated ``Limit``.
print(rs.saddle_point_equation("symbolic").latex())
Phi_G = rs.free_entropy_functional("symbolic")
try:
    rs.limit((1 - q) * Phi_G.expr, q, 1, dir="-")
except rs.SymbolicUndecided as exc:
    print("undecided:", exc)

# %%
# The Hebbian threshold 1/8
# -------------------------
# The correct score of the Hebbian memory has signal-to-noise ratio
# :math:`m = d/\sqrt{p+2d}`; at fixed load :math:`\alpha = p\ln p/d^2` and
# :math:`p \to \infty` it tends to :math:`\sqrt{\ln p/\alpha}`.  All facts are
# recalled while the worst correct score, :math:`m - \sqrt{2\ln p}`, beats the best
# competitor, :math:`\sqrt{2\ln p}`.
m = rs.hebbian_signal_to_noise()
m_large = rs.hebbian_signal_to_noise("large-p")
L, a = m_large.symbols
alpha_H = sp.solve(sp.Eq(m_large.expr - sp.sqrt(2 * L), sp.sqrt(2 * L)), a)
print("m =", m.latex(), r"\;\to\;", m_large.latex())
print(r"\alpha_H =", sp.latex(alpha_H[0]), "  (replica.HEBBIAN_LIMIT =", replica.HEBBIAN_LIMIT, ")")
m_num, _ = replica.hebbian_score_moments(100, 50)
print("m(d=100, p=50): sympy", m(100, 50), " numeric", float(m_num))

# %%
# The small-kappa series of alpha_c(kappa)
# ----------------------------------------
# :func:`replica.symbolic.alpha_c_series` gives any number of terms, with exact
# coefficients (the exponents of :math:`\kappa` are :math:`1, 5/3, 7/3, 3, \dots`).
S4 = rs.alpha_c_series(4)
kappa = S4.symbols[0]
print(r"\alpha_c(\kappa) =", S4.latex())

# %%
# The same expansion from the closed form :math:`(2y - \sin 2y)/(4\pi)`, with
# :math:`y - \sin y = \pi\kappa`, by ``sympy.series``; and the limit of
# :math:`\alpha_c/\kappa`.
A = rs.alpha_c_closed_form()
print(sp.series(A.expr, kappa, 0, 3))
print(r"\lim_{\kappa\to 0^+} \alpha_c/\kappa =", rs.limit(A.expr / kappa, kappa, 0))

# %%
# Against the numerical capacity: the error of the :math:`n`-term series must be the
# first omitted term, :math:`a_{n+1}\kappa^{(2n+3)/3}`.  :func:`replica.alpha_c`
# with ``dps=40`` (mpmath) resolves errors far below double precision.
kap = np.logspace(-6, -0.5, 25)
exact_mp = [replica.alpha_c(f"{k:.17g}", dps=40) for k in kap]
S_all = rs.alpha_c_series(5)
terms = sorted(sp.Add.make_args(S_all.expr), key=lambda t: t.as_coeff_exponent(kappa)[1])

fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
for n in (1, 2, 3, 4):
    partial = rs.Formula(sum(terms[:n]), (kappa,))
    err = [abs(float(e - partial.evalf(f"{k:.17g}", dps=40))) for e, k in zip(exact_mp, kap)]
    nxt = rs.Formula(terms[n], (kappa,))
    label = f"{n} term{'s' if n > 1 else ''}: |replica.alpha_c - series|"
    ax.loglog(kap, err, "o", ms=4, color=f"C{n - 1}", label=label, zorder=2)
    ax.loglog(kap, np.abs(nxt(kap)), "-", color="k", lw=1, zorder=3,
              label="first omitted term (sympy)" if n == 1 else None)
ax.set_xlabel(r"rank fraction $\kappa = m/d$ (dimensionless)")
ax.set_ylabel(r"$|\alpha_c - $truncated series$|$ (load $p\ln p/d^2$)")
ax.set_title(r"small-$\kappa$ series of $\alpha_c(\kappa)$ against the numerical capacity")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
plt.show()

# %%
# The coefficients as exact closed forms and as numbers (also on the command line:
# ``python -m replica series --kappa-order 4 --latex``).
for t in terms[:4]:
    c, e = t.as_coeff_exponent(kappa)
    print(f"kappa^{e}:  {sp.latex(sp.nsimplify(t / kappa ** e))}  = {float(t / kappa ** e):.12g}")

# %%
# Every registered derivation
# ---------------------------
# :func:`replica.symbolic.run_checks` runs the checks of every module in
# :data:`replica.symbolic.CHECK_MODULES` (the same as ``python -m replica check``).
results = rs.run_checks()
for r in results:
    print(f"[{'ok' if r['ok'] else 'FAIL'}] {r['module'].rsplit('.', 1)[-1]}: {r['name']}")
print(f"{sum(r['ok'] for r in results)}/{len(results)} symbolic checks passed")
