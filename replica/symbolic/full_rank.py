"""Symbolic derivations for the full-rank linear memory (docs/theory_full_rank.md).

Every check derives its identity with sympy (solving, integrating,
differentiating, taking limits) and compares the result with the claimed
closed form by ``simplify(result - claim) == 0``; none evaluates numbers.
"""
from __future__ import annotations

import sympy as sp

__all__ = ["CHECKS"]

q, a, t = sp.symbols("q alpha t", real=True)
x, g, c, xi = sp.symbols("x g c xi", real=True)
P = sp.symbols("p", positive=True)
L = sp.symbols("L", positive=True)          # L = ln p


def _phi(z):
    return sp.exp(-z ** 2 / 2) / sp.sqrt(2 * sp.pi)


def _Phi(z):
    return (1 + sp.erf(z / sp.sqrt(2))) / 2


def _zero(expr):
    return sp.simplify(expr) == 0


def _functional():
    G = -1 / (1 - q)
    return sp.log(1 - q) / 2 + q / (2 * (1 - q)) + a * G


def check_saddle():
    """q* = 2 alpha solves dPhi/dq = 0, is a minimum, and phi = 1/2 ln(1 - 2 alpha)."""
    Phi = _functional()
    sols = sp.solve(sp.Eq(sp.together(sp.diff(Phi, q)), 0), q)
    if len(sols) != 1 or not _zero(sols[0] - 2 * a):
        return False, f"stationary points {sols}, expected [2*alpha]"
    curv = sp.simplify(sp.diff(Phi, q, 2).subs(q, 2 * a))
    # curvature 1/(2 (1 - 2 alpha)^2) > 0 on [0, 1/2)
    if not _zero(curv - 1 / (2 * (1 - 2 * a) ** 2)):
        return False, f"Phi''(q*) = {curv}"
    phi = sp.simplify(Phi.subs(q, 2 * a))
    ok = _zero(sp.expand_log(phi - sp.log(1 - 2 * a) / 2, force=True))
    return ok, f"dPhi/dq = 0 -> q* = {sols[0]}; Phi''(q*) = {curv} > 0; phi = {sp.simplify(phi)}"


def check_alpha_c():
    """alpha_c = 1/2: phi(alpha) -> -inf as alpha -> 1/2-, and (1-q) Phi -> 1/2 - alpha as q -> 1."""
    phi = sp.log(1 - 2 * a) / 2
    lim = sp.limit(phi, a, sp.Rational(1, 2), dir="-")
    coef = sp.limit((1 - q) * _functional(), q, 1, dir="-")
    root = sp.solve(sp.Eq(coef, 0), a)
    ok = lim == -sp.oo and _zero(coef - (sp.Rational(1, 2) - a)) and root == [sp.Rational(1, 2)]
    return ok, f"lim phi = {lim}; lim_(q->1) (1-q) Phi = {coef}, vanishes at alpha = {root}"


def check_ev2():
    """E[V_2] = 1/4 (so p_c/d^2 = 1/(2 E V_2) = 2 and alpha_c(2) = 2 ln 2)."""
    obj = x ** 2 / 2 + (g - x) ** 2 / 2           # g > 0 active branch, x < g
    xs = sp.solve(sp.diff(obj, x), x)[0]
    V = sp.simplify(obj.subs(x, xs))               # g^2/4 for g > 0; V = 0 for g <= 0
    # g = eta_2 - eta_1 ~ N(0, 2)
    dens = sp.exp(-g ** 2 / 4) / sp.sqrt(4 * sp.pi)
    EV = sp.simplify(sp.integrate(V * dens, (g, 0, sp.oo)))
    pc = sp.simplify(1 / (2 * EV))
    ac = sp.simplify(sp.log(2) / (2 * EV))
    ok = _zero(xs - g / 2) and _zero(V - g ** 2 / 4) and _zero(EV - sp.Rational(1, 4)) \
        and pc == 2 and _zero(ac - 2 * sp.log(2))
    return ok, f"x* = {xs}, V_2 = {V} (g>0), E[V_2] = {EV}, p_c/d^2 = {pc}, alpha_c(2) = {ac}"


def check_fp0():
    """f_p(0) = Int Dxi Phi(xi)^(p-1) = 1/p: d/dxi [Phi^p / p] = phi Phi^(p-1), limits 1/p and 0."""
    F = _Phi(xi) ** P / P
    deriv_ok = _zero(sp.diff(F, xi) - _phi(xi) * _Phi(xi) ** (P - 1))
    top = sp.limit(F, xi, sp.oo)
    bottom = sp.limit(_Phi(xi), xi, -sp.oo)        # Phi(-inf) = 0, so F(-inf) = 0 for p > 0
    ok = deriv_ok and _zero(top - 1 / P) and bottom == 0
    return ok, f"antiderivative Phi^p/p verified; F(+inf) = {top}, Phi(-inf) = {bottom} => f_p(0) = 1/p, G_p(0) = -1"


def check_f2():
    """p = 2: Int Dxi Phi(xi + c) = Phi(c/sqrt 2) (derivative in c and value at c = 0)."""
    d_lhs = sp.simplify(sp.integrate(_phi(xi) * _phi(xi + c), (xi, -sp.oo, sp.oo)))
    d_rhs = sp.diff(_Phi(c / sp.sqrt(2)), c)
    at0 = sp.integrate(_phi(xi) * _Phi(xi), (xi, -sp.oo, sp.oo))
    ok = _zero(d_lhs - d_rhs) and _zero(at0 - sp.Rational(1, 2)) and \
        _zero(_Phi(0) - sp.Rational(1, 2))
    return ok, f"d/dc LHS = {d_lhs} = d/dc Phi(c/sqrt2); both 1/2 at c = 0 => f_2 = Phi(beta(eta1-eta2)/sqrt2)"


def check_hebbian():
    """Hebbian 1/8: m = d/sqrt(p + 2d) -> sqrt(ln p/alpha); m - sqrt(2 ln p) = sqrt(2 ln p) at alpha = 1/8."""
    d = sp.symbols("d", positive=True)
    # with alpha = p ln p / d^2:  m^2 = d^2/(p + 2d) = (ln p/alpha) / (1 + 2d/p); 2d/p -> 0 when p >> d
    m2 = d ** 2 / (P + 2 * d)
    m2_sub = sp.simplify(m2.subs(d, sp.sqrt(P * L / a)))
    lim_m2 = sp.limit(m2_sub, P, sp.oo)
    m = sp.sqrt(L / a)
    cond = sp.Eq(m - sp.sqrt(2 * L), sp.sqrt(2 * L))
    aH = sp.solve(cond, a)
    single = sp.solve(sp.Eq(m, sp.sqrt(2 * L)), a)
    ok = _zero(lim_m2 - L / a) and aH == [sp.Rational(1, 8)] and single == [sp.Rational(1, 2)]
    return ok, (f"m^2 -> {lim_m2}; all facts: m - sqrt(2 ln p) = sqrt(2 ln p) => alpha_H = {aH}; "
                f"single fact: m = sqrt(2 ln p) => alpha = {single}")


#: ``(name, callable)`` pairs run by :func:`replica.symbolic.run_checks`.
CHECKS = [
    ("saddle: q* = 2 alpha, phi = 1/2 ln(1 - 2 alpha)", check_saddle),
    ("capacity: alpha_c = 1/2", check_alpha_c),
    ("finite p = 2: E[V_2] = 1/4, p_c/d^2 = 2", check_ev2),
    ("f_p(0) = 1/p (G_p(0) = -1)", check_fp0),
    ("p = 2 closed form f_2 = Phi(c/sqrt 2)", check_f2),
    ("Hebbian: alpha_H = 1/8 (single fact 1/2)", check_hebbian),
]
