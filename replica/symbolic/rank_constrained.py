"""Symbolic checks for the rank-constrained memory (docs/rank_constrained.md).

Each check derives an identity with sympy and returns ``(ok, detail)``:
quarter-circle normalisation and Catalan moments; the closed form of
``alpha_c(kappa)`` equals ``1/2 Int_{1-kappa}^1 X_qc^2`` (derivative in kappa and
boundary value); its small-kappa expansion; the Fuss-Catalan moments of
``mp_product(1)`` and the moment formula / edges of ``mp_product(kappa)``.
"""
from __future__ import annotations

import sympy as sp

__all__ = ["CHECKS"]


def _zero(expr):
    return sp.simplify(expr) == 0


def check_qc_moments():
    t = sp.symbols("t", positive=True)
    # s = 2 sin t maps [0, pi/2] onto [0, 2]; rho(s) ds = (2 cos t)^2 / pi dt
    dens = (2 * sp.cos(t)) ** 2 / sp.pi
    norm = sp.integrate(sp.expand(sp.fu(dens)), (t, 0, sp.pi / 2))
    ok = _zero(norm - 1)
    got = []
    for k in range(1, 5):
        integrand = sp.expand(sp.fu((2 * sp.sin(t)) ** (2 * k) * dens))
        m = sp.simplify(sp.integrate(integrand, (t, 0, sp.pi / 2)))
        got.append(m)
        ok &= _zero(m - sp.catalan(k))
    return ok, f"norm={norm}, even moments={got} (Catalan 1, 2, 5, 14)"


def check_alpha_c_closed_form():
    th = sp.symbols("theta", positive=True)
    # kappa(theta) from 2 theta + sin 2 theta = pi (1 - kappa)
    kappa = 1 - (2 * th + sp.sin(2 * th)) / sp.pi
    closed = sp.Rational(1, 2) - (th - sp.sin(4 * th) / 4) / sp.pi
    # d alpha / d kappa must be X_qc(1 - kappa)^2 / 2 = (2 sin theta)^2 / 2
    dalpha = sp.diff(closed, th) / sp.diff(kappa, th)
    ok1 = _zero(sp.simplify(sp.expand_trig(dalpha - 2 * sp.sin(th) ** 2)))
    # boundary: kappa -> 0 is theta = pi/2 where alpha must vanish; kappa = 1 is theta = 0 -> 1/2
    ok2 = _zero(closed.subs(th, sp.pi / 2)) and _zero(kappa.subs(th, sp.pi / 2))
    ok3 = _zero(closed.subs(th, 0) - sp.Rational(1, 2))
    return ok1 and ok2 and ok3, f"d alpha/d kappa = {sp.simplify(dalpha)}; alpha(theta=pi/2)=0, alpha(theta=0)=1/2"


def check_small_kappa():
    e = sp.symbols("epsilon", positive=True)  # e = kappa^(1/3)
    y = sp.symbols("y")
    # invert y - sin y = pi e^3 as a series y = sum c_j e^j
    cs = sp.symbols("c1:4")
    yser = sum(c * e ** (j + 1) for j, c in enumerate(cs))
    eq = sp.series(yser - sp.sin(yser) - sp.pi * e ** 3, e, 0, 6).removeO()
    sol = {}
    for j in range(3, 6):
        coeff = sp.expand(eq).coeff(e, j).subs(sol)
        free = [c for c in cs if c in coeff.free_symbols and c not in sol]
        if not free:
            continue
        c = free[0]
        roots = sp.solve(coeff, c)
        roots = [r for r in roots if r.is_real and (c != cs[0] or r > 0)]
        sol[c] = sp.nsimplify(roots[0]) if c != cs[0] else roots[0]
    ys = yser.subs(sol)
    alpha = sp.series((2 * ys - sp.sin(2 * ys)) / (4 * sp.pi), e, 0, 6).removeO()
    alpha = sp.expand(sp.simplify(alpha))
    target = 2 * e ** 3 - (6 * sp.pi) ** sp.Rational(5, 3) * e ** 5 / (20 * sp.pi)
    diff = sp.simplify(alpha.coeff(e, 3) - 2), sp.simplify(alpha.coeff(e, 5) - target.coeff(e, 5))
    ok = all(_zero(d) for d in diff) and alpha.coeff(e, 4) == 0
    return ok, f"alpha_c = {sp.simplify(alpha.coeff(e, 3))} kappa + ({sp.simplify(alpha.coeff(e, 5))}) kappa^(5/3) + O(kappa^(7/3))"


def check_fuss_catalan():
    z = sp.symbols("z")
    # psi = z (1 + psi)^3 (kappa = 1 cubic), solved by fixed-point iteration of series
    psi = sp.Integer(0)
    for _ in range(6):
        psi = sp.series(z * (1 + psi) ** 3, z, 0, 6).removeO()
    got = [psi.coeff(z, k) for k in range(1, 6)]
    want = [sp.binomial(3 * k, k) / (2 * k + 1) for k in range(1, 6)]
    return got == want, f"moments {got}"


def check_mp_product_moments_and_edges():
    z, k, x, p = sp.symbols("z kappa x psi", positive=True)
    # S-transform kappa/(1 + kappa w)^2  =>  psi = z (1 + psi)(1 + kappa psi)^2 / kappa
    psi = sp.Integer(0)
    for _ in range(5):
        psi = sp.expand(sp.series(z * (1 + psi) * (1 + k * psi) ** 2 / k, z, 0, 5).removeO())
    ok = True
    for n in range(1, 5):
        lag = sum(sp.binomial(n, j + 1) * sp.binomial(2 * n, j) * k ** j for j in range(n)) / (n * k ** n)
        ok &= _zero(psi.coeff(z, n) - lag)
    # free second moment from free probability: (1 + 2 kappa) / kappa^2
    ok &= _zero(psi.coeff(z, 2) - (1 + 2 * k) / k ** 2)
    # Cardano discriminant factorisation with the closed-form edges
    P = sp.expand((1 + p) * (1 + k * p) ** 2 - k * x * p)
    disc = sp.discriminant(P, p)
    xp = (8 + 20 * k - k ** 2 + (k + 8) * sp.sqrt(k * (k + 8))) / (8 * k)
    xm = (8 + 20 * k - k ** 2 - (k + 8) * sp.sqrt(k * (k + 8))) / (8 * k)
    ok &= _zero(sp.expand(disc - 4 * k ** 5 * x * (x - xm) * (x - xp)))
    ok &= _zero(sp.simplify(xm * xp - (1 - k) ** 3 / k ** 2))
    return ok, "Lagrange-inversion moments match the S-transform series (n <= 4); disc = 4 kappa^5 x (x - x-)(x - x+)"


#: ``(name, callable)`` pairs run by :func:`replica.symbolic.run_checks`.
CHECKS = [
    ("quarter-circle normalisation and Catalan moments", check_qc_moments),
    ("alpha_c closed form = 1/2 Int X_qc^2 (derivative in kappa, boundary)", check_alpha_c_closed_form),
    ("alpha_c small-kappa expansion 2k - (6 pi k)^(5/3)/(20 pi)", check_small_kappa),
    ("Fuss-Catalan moments of mp_product(1)", check_fuss_catalan),
    ("mp_product moments (S-transform) and edges (discriminant)", check_mp_product_moments_and_edges),
]
