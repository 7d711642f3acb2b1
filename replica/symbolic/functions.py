r"""Sympy functions of the rank-constrained theory and their exact Puiseux coefficients.

Two functions have no elementary closed form but appear in every formula of
``docs/rank_constrained.md``; they are defined here as sympy functions that
differentiate, expand (:meth:`sympy.Expr.series`), evaluate to any precision
(:meth:`sympy.Expr.evalf`, mpmath) and print in LaTeX:

* :class:`QCQuantile` ``X_qc(u)``, the quantile function of the quarter-circle law
  ``rho_qc(s) = sqrt(4 - s^2) / pi`` on ``[0, 2]``;
* :class:`CapacityAngle` ``y(kappa)``, the root in ``[0, pi]`` of
  ``y - sin y = pi kappa`` (``y = pi - 2 theta_kappa``), in terms of which
  ``alpha_c(kappa) = (2 y - sin 2y) / (4 pi)`` and ``X_qc(1 - kappa) = 2 cos(y/2)``.

Near ``kappa = 0``, ``y`` is an odd power series in ``w = (6 pi kappa)^(1/3)``;
its coefficients, and those of ``pi alpha_c`` in ``w``, are exact rationals
obtained by Lagrange inversion (:func:`capacity_angle_coefficients`,
:func:`alpha_c_coefficients`).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp

from .._docparams import fill_doc

__all__ = ["QCQuantile", "CapacityAngle", "capacity_angle_coefficients",
           "alpha_c_coefficients", "NUMERIC_IMPLEMENTATIONS"]


# ---------------------------------------------------------------------------
# exact series: Lagrange inversion of w^3 = y^3 h(y^2)

def _h_coefficients(n):
    """``h(x) = 6 (y - sin y) / y^3`` with ``x = y^2``: ``sum_j 6 (-1)^j x^j / (2j + 3)!``."""
    return [Fraction(6 * (-1) ** j, math.factorial(2 * j + 3)) for j in range(n + 1)]


def _sin2_over_x(n):
    """``sin(y)^2 / y^2`` in ``x = y^2``: ``sum_j (-1)^j 2^(2j+1) x^j / (2j + 2)!``."""
    return [Fraction((-1) ** j * 2 ** (2 * j + 1), math.factorial(2 * j + 2)) for j in range(n + 1)]


def _power(h, a, n):
    """Coefficients ``0..n`` of ``h(x)^a`` for ``h(0) = 1`` and rational ``a`` (J. C. P. Miller's recurrence)."""
    out = [Fraction(1)]
    for j in range(1, n + 1):
        acc = sum(((a + 1) * i - j) * h[i] * out[j - i] for i in range(1, j + 1))
        out.append(acc / j)
    return out


@lru_cache(maxsize=None)
def _angle_coeffs(n_terms):
    h = _h_coefficients(n_terms)
    out = []
    for k in range(n_terms):
        # [w^(2k+1)] y = 1/(2k+1) [y^(2k)] h(y^2)^(-(2k+1)/3)
        out.append(_power(h, Fraction(-(2 * k + 1), 3), k)[k] / (2 * k + 1))
    return tuple(out)


@lru_cache(maxsize=None)
def _alpha_coeffs(n_terms):
    h = _h_coefficients(n_terms)
    sig = _sin2_over_x(n_terms)
    out = []
    for k in range(n_terms):
        # Lagrange-Burmann with H(y) = (2y - sin 2y)/4, H'(y) = sin(y)^2:
        # [w^n] H = 1/n [y^(n-1)] sin(y)^2 h(y^2)^(-n/3),  n = 2k + 3
        n = 2 * k + 3
        pw = _power(h, Fraction(-n, 3), k)
        out.append(sum(sig[i] * pw[k - i] for i in range(k + 1)) / n)
    return tuple(out)


def _exact(coefficients, n_terms):
    """``coefficients(n_terms)`` (cached ``Fraction`` s) as sympy rationals, ``n_terms`` checked."""
    from hcizz.checks import check_int

    n_terms = check_int("n_terms", n_terms, low=1, high=100)
    return [sp.Rational(c.numerator, c.denominator) for c in coefficients(n_terms)]


@fill_doc
def capacity_angle_coefficients(n_terms):
    r"""Return the exact coefficients :math:`g_k` of :math:`y = \sum_k g_k w^{2k+1}`, :math:`w = (6 \pi \kappa)^{1/3}`.

    :math:`y(\kappa)` solves :math:`y - \sin y = \pi \kappa = w^3 / 6`.  Writing
    :math:`y - \sin y = y^3 h(y^2) / 6` with :math:`h(0) = 1`, :math:`w = y h(y^2)^{1/3}` and
    Lagrange inversion gives

    .. math:: g_k = \frac{1}{2k+1}\, [x^k]\, h(x)^{-(2k+1)/3} .

    Parameters
    ----------
    %(n_terms)s

    Returns
    -------
    list of sympy.Rational
        ``g_0, ..., g_{n_terms - 1}``.

    See Also
    --------
    replica.symbolic.CapacityAngle : The angle expanded.
    replica.symbolic.functions.alpha_c_coefficients : The coefficients of the capacity.

    %(refs_small_kappa)s

    Examples
    --------
    >>> capacity_angle_coefficients(3)
    [1, 1/60, 1/1400]
    """
    return _exact(_angle_coeffs, n_terms)


@fill_doc
def alpha_c_coefficients(n_terms):
    r"""Return the exact coefficients :math:`c_k` of :math:`\pi \alpha_c = \sum_k c_k w^{2k+3}`, :math:`w = (6 \pi \kappa)^{1/3}`.

    With :math:`H(y) = (2y - \sin 2y)/4 = \pi \alpha_c` and :math:`H'(y) = \sin^2 y`,
    Lagrange-Bürmann inversion of :math:`w = y h(y^2)^{1/3}` (see
    :func:`capacity_angle_coefficients`) gives

    .. math:: c_k = \frac{1}{2k+3}\, [x^k]\, \frac{\sin^2 y}{y^2}\, h(x)^{-(2k+3)/3},
              \qquad x = y^2 .

    Hence :math:`\alpha_c(\kappa) = \sum_k c_k (6 \pi)^{(2k+3)/3} \kappa^{(2k+3)/3} / \pi`.

    Parameters
    ----------
    %(n_terms)s

    Returns
    -------
    list of sympy.Rational
        ``c_0, ..., c_{n_terms - 1}``.

    See Also
    --------
    replica.symbolic.alpha_c_series : The series built from them.
    replica.symbolic.functions.capacity_angle_coefficients : The coefficients of the angle.

    %(refs_small_kappa)s

    Examples
    --------
    >>> alpha_c_coefficients(3)
    [1/3, -1/20, 1/560]
    """
    return _exact(_alpha_coeffs, n_terms)


# ---------------------------------------------------------------------------
# mpmath evaluation

def _mp_capacity_angle(kappa, prec):
    """``y`` with ``y - sin y = pi kappa`` at ``prec`` bits (Newton with guard bits)."""
    import mpmath as mp

    from hcizz.quarter_circle import qc_upper_angle

    with mp.workprec(prec + 30):
        k = mp.mpf(kappa)
        if k == 0:
            return mp.mpf(0)
        sign = 1 if k > 0 else -1          # y is odd in kappa
        k = abs(k)
        # y - sin y ~ y^3/6 loses about -log2(kappa) bits to cancellation
        guard = 30 + max(0, -int(mp.mag(k)))
    with mp.workprec(prec + guard):
        k = abs(mp.mpf(kappa))
        c = mp.pi * k
        kf = float(k)
        if 1e-290 < kf <= 1.0:
            y = mp.mpf(float(qc_upper_angle(np.pi * kf)))
        else:
            y = mp.cbrt(6 * c) if kf <= 1.0 else c          # y - sin y = c, c > pi
        tol = mp.mpf(2) ** (-(prec + 8))
        for _ in range(200):
            f = y - mp.sin(y) - c
            step = f / (2 * mp.sin(y / 2) ** 2)
            y -= step
            if abs(step) <= tol * abs(y):
                break
        out = sign * y
    with mp.workprec(prec):
        return +out


def _mp_qc_quantile(u, prec, one_minus_u=None):
    """``X_qc(u)`` at ``prec`` bits: :func:`hcizz.qc_quantile_mp` (Newton in ``theta``) for
    ``u <= 1/2``, ``2 cos(y(1 - u)/2)`` above, where ``1 - u`` is exact and tiny
    ``1 - u`` (quadrature nodes next to the edge) keeps its digits."""
    import mpmath as mp

    from hcizz.quarter_circle import qc_quantile_mp

    with mp.workprec(prec + 20):
        u = mp.mpf(u)
        om = 1 - u if one_minus_u is None else mp.mpf(one_minus_u)
        if u <= 0.5:
            out = qc_quantile_mp(u, dps=mp.libmp.prec_to_dps(prec) + 5)
        else:
            out = 2 * mp.cos(_mp_capacity_angle(om, prec + 20) / 2)
    with mp.workprec(prec):
        return +out


def _np_capacity_angle(kappa):
    from hcizz.quarter_circle import qc_upper_angle

    k = np.asarray(kappa, dtype=float)
    return np.sign(k) * qc_upper_angle(np.pi * np.abs(k))


def _np_qc_quantile(u):
    from hcizz.quarter_circle import qc_quantile

    return qc_quantile(u)


class _ExactFunction(sp.Function):
    """A real sympy function of one argument: exact at 0 (value 0) and 1, a closed-form
    derivative, ``evalf`` through mpmath.

    A subclass sets ``_at_one`` (its value at 1), ``_odd`` (``f(-x) = -f(x)``),
    ``_latex_name``, defines ``_derivative()`` (in terms of the function itself) and
    ``_mp_value(arg, prec)`` (the value at a number, ``prec`` bits), and an ``eval``
    naming its argument (sympy takes the function's signature from ``eval``) that
    returns ``_exact_value``.
    """

    nargs = 1
    _at_one = None
    _odd = False
    _latex_name = None

    @classmethod
    def _exact_value(cls, arg):
        """The exact value at 0 and 1, ``-f(-arg)`` for an odd function, else ``None``."""
        if arg.is_zero:
            return sp.S.Zero
        if arg == 1:
            return cls._at_one
        if cls._odd and arg.could_extract_minus_sign():
            return -cls(-arg)
        return None

    def fdiff(self, argindex=1):
        """Return the derivative in the argument (the class's Notes state it).

        Parameters
        ----------
        argindex : int, optional
            Index of the argument (1, the only one).

        Returns
        -------
        sympy.Expr
            The derivative, written with the function itself.
        """
        return self._derivative()

    def _eval_is_real(self):
        return self.args[0].is_real

    def _eval_evalf(self, prec):
        arg = self.args[0].evalf(prec + 10)
        if not arg.is_Number:
            return None
        return sp.Float(self._mp_value(arg, prec), precision=prec)

    def _latex(self, printer, exp=None):
        body = r"%s\left(%s\right)" % (self._latex_name, printer._print(self.args[0]))
        return body if exp is None else r"%s^{%s}" % (body, exp)


@fill_doc
class QCQuantile(_ExactFunction):
    r"""Quarter-circle quantile function :math:`X_{qc}(u)` as a sympy function.

    :math:`X_{qc}(u) = 2 \sin\theta` with :math:`2 \theta + \sin 2 \theta = \pi u`, the inverse
    of the CDF of :math:`\rho_{qc}(s) = \sqrt{4 - s^2}/\pi` on :math:`[0, 2]`.

    Parameters
    ----------
    u : sympy expression
        Probability, :math:`0 \le u \le 1`.

    See Also
    --------
    hcizz.qc_quantile : The quantile, numerically.
    replica.symbolic.alpha_c_integral : The capacity integral over it.

    Notes
    -----
    Exact values :math:`X_{qc}(0) = 0`, :math:`X_{qc}(1) = 2`; derivative
    :math:`dX/du = 1/\rho_{qc}(X) = \pi / \sqrt{4 - X^2}`; ``evalf`` at any precision
    (:func:`hcizz.qc_quantile_mp` for :math:`u \le 1/2`, :math:`2 \cos(y(1-u)/2)`
    above: exact near the edge :math:`u \to 1`); numerically
    (:meth:`Formula.numeric`) :func:`hcizz.qc_quantile`; ``.rewrite(CapacityAngle)``
    gives :math:`2 \cos(y(1 - u)/2)`.

    %(refs_quarter_circle)s

    Examples
    --------
    >>> u = sp.Symbol("u")
    >>> QCQuantile(1), sp.diff(QCQuantile(u), u)
    (2, pi/sqrt(4 - QCQuantile(u)**2))
    >>> QCQuantile(sp.Rational(1, 2)).evalf(20)
    0.80794550659903441864
    """

    _at_one = sp.Integer(2)
    _latex_name = r"X_{\mathrm{qc}}"

    @classmethod
    def eval(cls, u):
        """Return the exact value at ``u = 0`` (0) and ``u = 1`` (2), else ``None``."""
        return cls._exact_value(u)

    def _derivative(self):
        return sp.pi / sp.sqrt(4 - self ** 2)             # dX/du = 1/rho_qc(X)

    def _mp_value(self, arg, prec):
        # 1 - u from the exact argument: u = 1 - 1e-30 keeps every digit of 1 - u
        om = (1 - self.args[0]).evalf(prec + 10)
        return _mp_qc_quantile(arg._to_mpmath(prec + 10), prec, om._to_mpmath(prec + 10))

    def _eval_rewrite_as_CapacityAngle(self, u, **kwargs):
        return 2 * sp.cos(CapacityAngle(1 - u) / 2)


@fill_doc
class CapacityAngle(_ExactFunction):
    r"""Angle :math:`y(\kappa)` in :math:`[0, \pi]` with :math:`y - \sin y = \pi \kappa`, as a sympy function.

    :math:`y = \pi - 2 \theta_\kappa`; the capacity is
    :math:`\alpha_c(\kappa) = (2y - \sin 2y)/(4 \pi)` and the truncation point of the
    quarter circle :math:`X_{qc}(1 - \kappa) = 2 \cos(y/2)`.

    Parameters
    ----------
    kappa : sympy expression
        Rank fraction (any real value: :math:`y - \sin y` is increasing on the real
        line; the capacity uses :math:`0 \le \kappa \le 1`).

    See Also
    --------
    hcizz.quarter_circle.qc_upper_angle : The angle, numerically.
    replica.symbolic.functions.capacity_angle_coefficients : Its series coefficients.

    Notes
    -----
    Exact values :math:`y(0) = 0`, :math:`y(1) = \pi`; derivative
    :math:`dy/d\kappa = \pi / (1 - \cos y)`.  ``evalf`` at any precision (Newton in
    mpmath with guard bits against the cancellation in :math:`y - \sin y`);
    numerically :func:`hcizz.quarter_circle.qc_upper_angle`.  The series at
    :math:`\kappa = 0` is the Puiseux series
    :math:`y = \sum_k g_k (6 \pi \kappa)^{(2k+1)/3}`
    (:func:`capacity_angle_coefficients`), so ``sympy.series`` and ``sympy.limit``
    of expressions in :math:`y(\kappa)` work at :math:`\kappa \to 0^+`.

    %(refs_closed_form)s

    Examples
    --------
    >>> k = sp.Symbol("kappa", positive=True)
    >>> CapacityAngle(1), sp.diff(CapacityAngle(k), k)
    (pi, pi/(1 - cos(CapacityAngle(kappa))))
    >>> sp.series(CapacityAngle(k), k, 0, 2)
    pi*kappa/10 + 6**(1/3)*pi**(1/3)*kappa**(1/3) + 3*6**(2/3)*pi**(5/3)*kappa**(5/3)/700 + O(kappa**2)
    """

    _at_one = sp.pi
    _odd = True
    _latex_name = "y"

    @classmethod
    def eval(cls, kappa):
        """Return the exact value at ``kappa = 0`` (0) and ``1`` (pi), use oddness, else ``None``."""
        return cls._exact_value(kappa)

    def _derivative(self):
        return sp.pi / (1 - sp.cos(self))                 # from y - sin y = pi kappa

    def _mp_value(self, arg, prec):
        return _mp_capacity_angle(arg._to_mpmath(prec + 10), prec)

    def _eval_is_nonnegative(self):
        return self.args[0].is_nonnegative

    def _puiseux(self, x, n):
        """Terms of ``y(arg)`` whose order in ``x`` is below ``n`` (arg -> 0 as x -> 0)."""
        arg = self.args[0]
        lead = arg.as_leading_term(x)
        _, e = lead.as_coeff_exponent(x)
        if not (e.is_number and e > 0):
            return None
        # term k is of order x^(e (2k+1)/3): keep those below x^n (plus one)
        n_terms = max(1, int(sp.ceiling((3 * sp.Integer(n) / e - 1) / 2)) + 1)
        g = capacity_angle_coefficients(n_terms)
        w = sp.cbrt(6 * sp.pi * arg)
        return sum(gk * w ** (2 * k + 1) for k, gk in enumerate(g))

    def _eval_nseries(self, x, n, logx, cdir=0):
        arg = self.args[0]
        if arg.subs(x, 0) == 0 and (cdir == 0 or cdir > 0):
            terms = self._puiseux(x, n)
            if terms is not None:
                return terms.nseries(x, n=n, logx=logx)
        return super()._eval_nseries(x, n, logx, cdir)

    def _eval_as_leading_term(self, x, logx=None, cdir=0):
        arg = self.args[0]
        a0 = arg.subs(x, 0)
        if a0 == 0:
            return sp.cbrt(6 * sp.pi * arg).as_leading_term(x, logx=logx, cdir=cdir)
        return self.func(a0)



#: Numerical implementations used by :meth:`Formula.numeric` (``sympy.lambdify``
#: namespace): ``QCQuantile`` -> :func:`hcizz.qc_quantile`, ``CapacityAngle`` ->
#: :func:`hcizz.quarter_circle.qc_upper_angle` of ``pi kappa`` (odd in ``kappa``).
NUMERIC_IMPLEMENTATIONS = {"QCQuantile": _np_qc_quantile, "CapacityAngle": _np_capacity_angle}
