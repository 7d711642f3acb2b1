r"""The result type of the symbolic interface and the helpers around it.

:class:`Formula` bundles a sympy expression with its named symbols (in the order
its numerical function takes them), the relations it is valid under and, for a
truncated expansion, the order of the remainder.  :func:`series` and
:func:`limit` wrap sympy's and refuse to return an undecided answer: where sympy
gives up, or returns an unevaluated ``Limit`` or a bounded oscillation, they
raise :class:`SymbolicUndecided` with what sympy returned.
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from .._docparams import fill_doc
from .functions import NUMERIC_IMPLEMENTATIONS

__all__ = ["Formula", "SymbolicUndecided", "series", "limit", "SYMBOLS"]


def _sym(name, **assumptions):
    return sp.Symbol(name, **assumptions)


#: The named symbols shared by every object of :mod:`replica.symbolic` (one
#: symbol per name, with the same assumptions everywhere, so that expressions
#: from different functions combine): ``q``, ``t`` overlaps (real); ``alpha``
#: load ``p ln p / d^2`` (nonnegative); ``kappa`` rank fraction (positive);
#: ``p``, ``d`` numbers of facts and dimension (positive); ``L = ln p``
#: (positive); ``E_V = E[V_p]`` (positive); ``y`` the angle of
#: ``y - sin y = pi kappa``, ``theta = (pi - y)/2``, ``s`` a singular value and
#: ``u`` a quantile level; ``x`` the raise of the correct score in ``V_p``;
#: ``z`` a series variable; ``psi`` the unknown of the ``mp_product`` cubic;
#: ``tau`` the tail fraction of the listwise criterion (positive), ``gamma`` a
#: margin in competitor-score units and ``g`` one in units of ``sqrt(2 ln p)``
#: (nonnegative), ``c`` Gardner's margin level (real).
SYMBOLS = types.MappingProxyType({
    "q": _sym("q", real=True), "t": _sym("t", real=True),
    "alpha": _sym("alpha", nonnegative=True), "kappa": _sym("kappa", positive=True),
    "p": _sym("p", positive=True), "d": _sym("d", positive=True),
    "L": _sym("L", positive=True), "E_V": _sym("E_V", positive=True),
    "y": _sym("y", nonnegative=True), "theta": _sym("theta", nonnegative=True),
    "s": _sym("s", nonnegative=True), "u": _sym("u", real=True),
    "x": _sym("x", real=True), "z": _sym("z"), "psi": _sym("psi"),
    "tau": _sym("tau", positive=True), "gamma": _sym("gamma", nonnegative=True),
    "g": _sym("g", nonnegative=True), "c": _sym("c", real=True),
})


@fill_doc
class SymbolicUndecided(ArithmeticError):
    """Sympy could not decide a limit or an expansion (raised instead of an unevaluated object).

    Parameters
    ----------
    message : str
        What was asked and what sympy returned.
    result : object, optional
        Sympy's answer (an unevaluated ``Limit``, an ``AccumBounds``, ...), or
        ``None`` when sympy raised.

    See Also
    --------
    replica.symbolic.limit : Raises it for a limit sympy cannot decide.
    replica.symbolic.series : Raises it for an expansion sympy cannot decide.

    %(refs_symbolic_interface)s

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> try:
    ...     limit(sp.sin(1 / x), x, 0)
    ... except SymbolicUndecided as err:
    ...     print(err.result)
    AccumBounds(-1, 1)
    """

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
@fill_doc
class Formula:
    r"""A sympy expression with its named symbols, as returned by :mod:`replica.symbolic`.

    Parameters
    ----------
    expr : sympy.Basic
        The expression (a ``sympy.Eq`` for an equation, a ``sympy.Tuple`` for
        several values).
    symbols : tuple of sympy.Symbol
        Its free symbols, in the order the numerical function
        (:meth:`numeric`) takes them; ``q, alpha = Phi.symbols`` unpacks them.
    name : str, optional
        What the expression is, e.g. ``"Phi(q; alpha)"``.
    relations : tuple of sympy.Basic, optional
        What holds alongside ``expr``: the range of validity, the equation
        that defines an implicit quantity, the equation a solution solves.
    remainder : sympy.Order, optional
        For a truncated expansion, its remainder ``O(...)``; ``expr`` is the
        truncated sum (no ``O`` term, so that it can be evaluated).

    See Also
    --------
    replica.symbolic.series : Expand a formula with its remainder.
    replica.symbolic.limit : Take a limit of a formula's expression.
    replica.symbolic.free_entropy_functional : A formula of the full-rank theory.

    %(refs_symbolic_interface)s

    Examples
    --------
    >>> from replica.symbolic import free_entropy_functional
    >>> Phi = free_entropy_functional()
    >>> q, alpha = Phi.symbols
    >>> Phi.expr
    -alpha/(1 - q) + q/(2 - 2*q) + log(1 - q)/2
    >>> round(Phi(0.5, 0.25), 12)          # 1/2 ln(1/2)
    -0.34657359028
    >>> sp.factor(sp.diff(Phi.expr, q))
    (-2*alpha + q)/(2*(q - 1)**2)
    """

    expr: object
    symbols: tuple
    name: str = ""
    relations: tuple = ()
    remainder: object = None
    _fn: object = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "expr", sp.sympify(self.expr))
        syms = tuple(self.symbols)
        if not all(isinstance(s, sp.Symbol) for s in syms):
            raise ValueError(f"symbols must be sympy Symbols, got {syms!r}")
        object.__setattr__(self, "symbols", syms)
        object.__setattr__(self, "relations", tuple(sp.sympify(r) for r in self.relations))

    def symbol(self, name):
        """Return the symbol called ``name``.

        Parameters
        ----------
        name : str
            Name of one of ``symbols``.

        Returns
        -------
        sympy.Symbol
            The symbol.

        Raises
        ------
        ValueError
            If no symbol has this name.
        """
        for s in self.symbols:
            if s.name == name:
                return s
        raise ValueError(f"name must be one of {[s.name for s in self.symbols]}, got {name!r}")

    @property
    def expansion(self):
        """The expression with its remainder ``O(...)`` added (``expr`` if there is none).

        Returns
        -------
        sympy.Expr
            ``expr + remainder``.
        """
        return self.expr if self.remainder is None else self.expr + self.remainder

    def latex(self, *, remainder=True):
        r"""Return the LaTeX of the expression.

        Parameters
        ----------
        remainder : bool, optional
            Append the remainder ``O(...)`` of a truncated expansion (default).

        Returns
        -------
        str
            ``sympy.latex`` of the expression; a truncated expansion is written
            in increasing powers of its variable.
        """
        if self.remainder is None or not self.remainder.variables or not isinstance(self.expr, sp.Add):
            return sp.latex(self.expansion if remainder else self.expr)
        var = self.remainder.variables[0]
        terms = sorted(sp.Add.make_args(self.expr), key=lambda t: t.as_coeff_exponent(var)[1])
        out = sp.latex(terms[0])
        for t in terms[1:]:
            out += f" - {sp.latex(-t)}" if t.could_extract_minus_sign() else f" + {sp.latex(t)}"
        return out + (f" + {sp.latex(self.remainder)}" if remainder else "")

    def numeric(self):
        """Return the numerical function of the expression (``sympy.lambdify``, cached).

        The arguments are ``symbols``, in order; numpy arrays broadcast.
        :class:`~replica.symbolic.functions.QCQuantile` and
        :class:`~replica.symbolic.functions.CapacityAngle` are evaluated by
        :func:`hcizz.qc_quantile` and :func:`hcizz.quarter_circle.qc_upper_angle`, the rest by
        scipy and numpy.

        Returns
        -------
        callable
            ``f(*values)``.
        """
        if self._fn is None:
            fn = sp.lambdify(self.symbols, self.expr,
                             modules=[dict(NUMERIC_IMPLEMENTATIONS), "scipy", "numpy"])
            object.__setattr__(self, "_fn", fn)
        return self._fn

    def __call__(self, *values):
        """Evaluate the expression numerically.

        Parameters
        ----------
        *values : float or array_like
            One value per symbol, in the order of ``symbols``.

        Returns
        -------
        float or ndarray
            The value, a float for scalar arguments (the broadcast shape of the
            arguments otherwise).

        Raises
        ------
        ValueError
            If the number of values is not the number of symbols.
        """
        if len(values) != len(self.symbols):
            raise ValueError(f"values must be {len(self.symbols)} numbers "
                             f"({', '.join(s.name for s in self.symbols)}), got {len(values)}")
        out = self.numeric()(*values)
        if isinstance(out, tuple):
            return tuple(self._shape(v, values) for v in out)
        return self._shape(out, values)

    @staticmethod
    def _shape(out, values):
        shape = np.broadcast_shapes(*(np.shape(v) for v in values)) if values else ()
        out = np.broadcast_to(np.asarray(out, dtype=float), shape)
        return float(out) if out.ndim == 0 else np.array(out)

    def evalf(self, *values, dps=30):
        """Evaluate the expression at ``dps`` decimal digits (sympy ``evalf``, mpmath).

        Parameters
        ----------
        *values : number, str or sympy number
            One value per symbol (exact values such as ``"1/3"`` or
            ``sympy.Rational(1, 3)`` are not rounded).
        dps : int, optional
            Decimal digits (default 30).

        Returns
        -------
        sympy.Float or sympy.Tuple
            The value (integrals are done by mpmath quadrature).

        Raises
        ------
        ValueError
            If the number of values is not the number of symbols.
        """
        from hcizz.checks import check_int

        dps = check_int("dps", dps, low=1, high=100000)
        if len(values) != len(self.symbols):
            raise ValueError(f"values must be {len(self.symbols)} numbers, got {len(values)}")
        sub = {s: sp.sympify(v, rational=True) for s, v in zip(self.symbols, values)}
        return self.expr.subs(sub).evalf(dps)

    def subs(self, *args, **kwargs):
        """Substitute into the expression; symbols that disappear are dropped.

        Parameters
        ----------
        *args
            As for ``sympy.Basic.subs`` (a dict, or ``old, new``).
        **kwargs
            Passed to ``sympy.Basic.subs``.

        Returns
        -------
        Formula
            The substituted formula (same name, relations substituted too).
        """
        expr = self.expr.subs(*args, **kwargs)
        rel = tuple(r.subs(*args, **kwargs) for r in self.relations)
        free = expr.free_symbols
        syms = tuple(s for s in self.symbols if s in free)
        syms += tuple(sorted((s for s in free if s not in syms and isinstance(s, sp.Symbol)),
                             key=lambda s: s.name))
        rem = None if self.remainder is None else self.remainder.subs(*args, **kwargs)
        return Formula(expr, syms, self.name, rel, rem)


def _as_expr(f):
    return (f.expr, f) if isinstance(f, Formula) else (sp.sympify(f), None)


def _variable(f, formula, x):
    if isinstance(x, str):
        if formula is not None:
            return formula.symbol(x)
        named = [s for s in f.free_symbols if getattr(s, "name", None) == x]
        if len(named) == 1:          # the expression's own symbol, with its assumptions
            return named[0]
        return SYMBOLS[x] if x in SYMBOLS else sp.Symbol(x)
    if x is not None:
        return sp.sympify(x)
    syms = formula.symbols if formula is not None else tuple(sorted(f.free_symbols, key=str))
    if len(syms) != 1:
        raise ValueError(f"x must name the variable of an expression in {len(syms)} symbols "
                         f"({', '.join(map(str, syms))})")
    return syms[0]


def _undecided_parts(expr):
    bad = [a for a in sp.preorder_traversal(expr)
           if isinstance(a, (sp.Limit, sp.calculus.accumulationbounds.AccumBounds))]
    if expr.has(sp.nan) or expr.has(sp.zoo):
        bad.append(sp.nan)
    return bad


#: what sympy raises when it cannot expand or take a limit (it becomes :class:`SymbolicUndecided`)
_SYMPY_FAILURES = (NotImplementedError, ValueError, TypeError, sp.PoleError)


@fill_doc
def series(f, x=None, x0=0, n=6, dir="+"):
    r"""Expand a formula or expression about ``x0``, with its remainder; refuse undecided output.

    Parameters
    ----------
    f : Formula or sympy expression
        What to expand.
    %(variable)s
    x0 : number or sympy expression, optional
        Point of expansion (default 0; ``sympy.oo`` allowed).
    n : int, optional
        Order: terms up to ``(x - x0)^n`` exclusive, as in ``sympy.series``
        (default 6).
    dir : {"+", "-"}, optional
        Side of a one-sided (Puiseux) expansion (default ``"+"``).

    Returns
    -------
    Formula
        The truncated expansion in ``expr`` (no ``O`` term) and its
        ``remainder``.

    Raises
    ------
    SymbolicUndecided
        If sympy raises, or its expansion has undefined (``nan``, ``zoo``)
        or unevaluated (``Limit``) coefficients.
    ValueError
        If ``x`` is not given for an expression of several symbols, or ``dir``
        is not ``"+"`` or ``"-"``.

    See Also
    --------
    replica.symbolic.limit : Limits, with the same refusal of undecided output.
    replica.symbolic.alpha_c_series : A series with exact coefficients.

    %(refs_symbolic_interface)s

    Examples
    --------
    >>> from replica.symbolic import saddle_point
    >>> phi = saddle_point().phi
    >>> series(phi, n=4).expr
    -4*alpha**3/3 - alpha**2 - alpha
    >>> series(phi, n=4).remainder
    O(alpha**4)
    """
    from hcizz.checks import check_int

    expr, formula = _as_expr(f)
    var = _variable(expr, formula, x)
    n = check_int("n", n, low=1, high=10000)
    if dir not in ("+", "-"):
        raise ValueError(f"dir must be '+' or '-', got {dir!r}")
    try:
        ser = sp.series(expr, var, x0, n, dir=dir)
    except _SYMPY_FAILURES as exc:
        raise SymbolicUndecided(f"sympy cannot expand {expr} about {var} = {x0}: "
                                f"{type(exc).__name__}: {exc}") from exc
    body = ser.removeO()
    rem = ser - body if ser.has(sp.Order) else None
    bad = _undecided_parts(body)
    if bad:
        raise SymbolicUndecided(f"sympy's expansion of {expr} about {var} = {x0} has undecided "
                                f"coefficients ({bad[0]}): {ser}", ser)
    syms = formula.symbols if formula is not None else tuple(sorted(body.free_symbols, key=str))
    syms = tuple(s for s in syms if s in body.free_symbols) or tuple(
        sorted(body.free_symbols, key=str))
    name = f"series of {formula.name or expr} about {var} = {x0}" if formula is not None else \
        f"series about {var} = {x0}"
    rel = formula.relations if formula is not None else ()
    return Formula(body, syms, name, rel, rem)


@fill_doc
def limit(f, x=None, x0=0, dir="+"):
    r"""Take a limit with sympy and raise where sympy cannot decide it.

    Parameters
    ----------
    f : Formula or sympy expression
        The expression.
    %(variable)s
    x0 : number or sympy expression, optional
        Limit point (default 0; ``sympy.oo`` allowed).
    dir : {"+", "-", "+-"}, optional
        From above, below, or both sides (default ``"+"``).

    Returns
    -------
    sympy.Expr
        The limit (possibly ``oo`` or ``-oo``, or an expression in the other
        symbols).

    Raises
    ------
    SymbolicUndecided
        If sympy raises, or returns an unevaluated ``Limit``, an
        ``AccumBounds`` (the expression oscillates: no limit) or ``nan``; the
        message says what sympy returned and ``exc.result`` holds it.
    ValueError
        If ``x`` is not given for an expression of several symbols, or ``dir``
        is not one of ``"+"``, ``"-"``, ``"+-"``.

    See Also
    --------
    replica.symbolic.series : Expansions, with the same refusal of undecided output.
    replica.symbolic.SymbolicUndecided : Raised when sympy cannot decide.

    %(refs_symbolic_interface)s

    Examples
    --------
    >>> from replica.symbolic import energy_term, free_entropy_functional
    >>> G = energy_term()
    >>> t, = G.symbols
    >>> limit((1 - t) * G.expr, t, 1, dir="-")
    -1
    >>> Phi = free_entropy_functional(energy="symbolic")      # G(q) left unspecified
    >>> q, alpha = Phi.symbols
    >>> try:
    ...     limit((1 - q) * Phi.expr, q, 1, dir="-")
    ... except SymbolicUndecided as exc:
    ...     print(type(exc.result).__name__)
    Limit
    """
    expr, formula = _as_expr(f)
    var = _variable(expr, formula, x)
    if dir not in ("+", "-", "+-"):
        raise ValueError(f"dir must be '+', '-' or '+-', got {dir!r}")
    try:
        res = sp.limit(expr, var, x0, dir=dir)
    except _SYMPY_FAILURES as exc:
        raise SymbolicUndecided(f"sympy cannot decide the limit of {expr} as {var} -> {x0}{dir}: "
                                f"{type(exc).__name__}: {exc}") from exc
    bad = _undecided_parts(res)
    if bad:
        what = ("an unevaluated limit" if isinstance(bad[0], sp.Limit) else
                "no limit (the expression oscillates within these bounds)"
                if isinstance(bad[0], sp.calculus.accumulationbounds.AccumBounds) else
                "an undefined value")
        raise SymbolicUndecided(f"sympy cannot decide the limit of {expr} as {var} -> {x0}{dir}: "
                                f"it returned {what}: {res}", res)
    return res
