"""``python -m replica alpha-c``: the rank-constrained capacity (docs/rank_constrained.md#rank-constrained-capacity)."""
from __future__ import annotations

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


def _decimal_text(text):
    """``argparse`` type: a number literal, kept as text (exact for ``--dps``)."""
    import argparse

    try:
        float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    return text.strip()


def register(sub):
    """Add the ``alpha-c`` subcommand.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers object of ``python -m replica``.

    Returns
    -------
    argparse.ArgumentParser
        The new subcommand's parser.

    References
    ----------
    docs/rank_constrained.md#commands
    """
    p = sub.add_parser("alpha-c", help="rank-constrained capacity alpha_c(kappa)",
                       description="alpha_c(kappa) = 1/2 - (theta_k - sin(4 theta_k)/4)/pi, "
                                   "2 theta_k + sin 2 theta_k = pi (1 - kappa)")
    p.add_argument("--kappa", type=_decimal_text, nargs="+", required=True, help="rank fraction(s) in (0, 1]")
    p.add_argument("--dps", type=int, default=None, help="evaluate in mpmath at this many digits (>= 5)")
    p.add_argument("--check", action="store_true", help="also print the quadrature oracle")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_alpha_c)
    return p
