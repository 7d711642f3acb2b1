"""``python -m replica alpha-c`` and ``series``: the rank-constrained capacity
(docs/rank_constrained.md#rank-constrained-capacity) and its small-kappa series."""
from __future__ import annotations

from ._docparams import fill_doc

__all__ = ["register"]


def _alpha_c(args):
    import numpy as np

    from .rank_capacity import alpha_c, alpha_c_quad, alpha_c_small_kappa
    from .theory_cli import emit

    if args.dps is not None:
        # the decimal texts as typed go to mpmath (0.1 is not rounded to a double)
        vals = alpha_c(np.array(args.kappa, dtype=object), dps=args.dps)
    else:
        vals = alpha_c(np.array([float(t) for t in args.kappa]))
    kappa = np.array([float(t) for t in args.kappa])
    rows = []
    for k, v in zip(kappa, np.atleast_1d(vals)):
        # a --dps kappa below the double range (1e-400) has no float companions
        tiny = not float(k) > 0
        row = {"kappa": float(k), "alpha_c": float(v) if args.dps is None else __import__("mpmath").nstr(v, args.dps),
               "small_kappa_2terms": None if tiny else alpha_c_small_kappa(float(k))}
        if args.check:
            row["alpha_c_quad"] = None if tiny else alpha_c_quad(float(k))
        rows.append(row)
    text = "\n".join(f"kappa={t}  alpha_c={r['alpha_c'] if args.dps else format(r['alpha_c'], '.15g')}"
                     + (f"  quad={r['alpha_c_quad']:.15g}" if args.check and r["alpha_c_quad"] is not None else "")
                     for t, r in zip(args.kappa, rows))
    emit(args, {"results": rows, "dps": args.dps}, text)
    return 0


def _series(args):
    import sympy as sp

    from hcizz.checks import check_int

    from .symbolic import SYMBOLS, alpha_c_series
    from .symbolic.functions import alpha_c_coefficients
    from .theory_cli import emit

    n = check_int("kappa_order", args.kappa_order, low=1, high=100)      # before any work
    S = alpha_c_series(n)
    kappa = SYMBOLS["kappa"]
    rows = []
    for k, ck in enumerate(alpha_c_coefficients(n)):
        e = sp.Rational(2 * k + 3, 3)
        a = sp.simplify(ck * (6 * sp.pi) ** e / sp.pi)
        rows.append({"term": k + 1, "exponent": str(e), "c_w": str(ck), "coefficient": str(a),
                     "coefficient_latex": sp.latex(a), "value": float(a)})
    head = ("alpha_c(kappa) = sum_k a_k kappa^e_k + O(" + str(S.remainder.expr).replace("**", "^")
            + ");  pi alpha_c = sum_k c_k w^(2k+1), w = (6 pi kappa)^(1/3)")
    if args.latex:
        text = "\\alpha_c(\\kappa) = " + S.latex()
        text += "\n" + "\n".join(f"a_{{{r['term']}}} = {r['coefficient_latex']} "
                                  f"\\approx {r['value']:.15g}" for r in rows)
    else:
        width = max(len(r["coefficient"]) for r in rows)
        text = head + "\n" + "\n".join(
            f"k={r['term']:<3d} e_k={r['exponent']:<6s} c_k={r['c_w']:<{max(len(x['c_w']) for x in rows)}s}  "
            f"a_k={r['coefficient']:<{width}s}  = {r['value']:.15g}" for r in rows)
    emit(args, {"order": n, "series": str(S.expansion), "latex": S.latex(), "terms": rows}, text)
    return 0


def _decimal_text(text):
    """``argparse`` type: a number literal, kept as text (exact for ``--dps``)."""
    import argparse

    try:
        float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    return text.strip()


@fill_doc
def register(sub):
    """Add the ``alpha-c`` and ``series`` subcommands.

    Parameters
    ----------
    %(replica_sub)s

    Returns
    -------
    argparse.ArgumentParser
        The ``alpha-c`` parser.

    See Also
    --------
    replica.theory_cli.register : Adds the full-rank subcommands.
    hcizz.cli.dispatch : Runs the registered subcommands.
    replica.alpha_c : The function behind ``alpha-c``.

    References
    ----------
    docs/rank_constrained.md#commands

    Examples
    --------
    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="python -m replica").add_subparsers()
    >>> print(register(sub).prog, sorted(sub.choices))
    python -m replica alpha-c ['alpha-c', 'series']
    """
    p = sub.add_parser("alpha-c", help="rank-constrained capacity alpha_c(kappa)",
                       description="alpha_c(kappa) = 1/2 - (theta_k - sin(4 theta_k)/4)/pi, "
                                   "2 theta_k + sin 2 theta_k = pi (1 - kappa)")
    p.add_argument("--kappa", type=_decimal_text, nargs="+", required=True, help="rank fraction(s) in (0, 1]")
    p.add_argument("--dps", type=int, default=None, help="evaluate in mpmath at this many digits (>= 5)")
    p.add_argument("--check", action="store_true", help="also print the quadrature oracle")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_alpha_c)

    q = sub.add_parser("series", help="small-kappa series of alpha_c(kappa), exact coefficients",
                       description="alpha_c(kappa) = 2 kappa - (6 pi kappa)^(5/3)/(20 pi) + ...: the first N "
                                   "terms (exponents (2k+1)/3, k = 1..N), coefficients exact and as floats")
    q.add_argument("--kappa-order", type=int, required=True, help="number of terms N, 1 <= N <= 100")
    q.add_argument("--latex", action="store_true", help="print the series and coefficients in LaTeX")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(func=_series)
    return p
