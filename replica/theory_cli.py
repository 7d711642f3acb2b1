"""Subcommands of ``python -m replica`` for the full-rank theory (docs/theory_full_rank.md#the-model)."""
from __future__ import annotations

import argparse
import json
import math

import numpy as np

from ._docparams import fill_doc

__all__ = ["register", "emit", "number"]


def _jsonable(x):
    # the project's one JSON policy (docs/reliability.md#json)
    from hcizz.jsonout import to_json_value

    return to_json_value(x)


@fill_doc
def number(text):
    """Parse a number for ``argparse``: an ``int`` for an integer literal, else a ``float``.

    Keeps ``p = 1`` an int so that error messages echo the value as typed
    (``got 1``, not ``got 1.0``); ``1e15`` stays a float (accepted by
    :func:`hcizz.checks.check_int` since it is integral).

    Parameters
    ----------
    text : str
        The command-line text.

    Returns
    -------
    int or float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not a number.

    See Also
    --------
    hcizz.checks.check_int : Validates the parsed number.
    hcizz.cli.parse_list : Parses a comma-separated list of numbers.

    %(refs_bad_input)s

    Examples
    --------
    >>> print(repr(number("1")), repr(number("1e15")), repr(number("0.5")))
    1 1000000000000000.0 0.5
    """
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None


@fill_doc
def emit(args, record, text):
    """Print ``record`` as strict JSON (with ``--json``) or ``text``.

    Non-finite floats become the strings ``"inf"``, ``"-inf"``, ``"nan"``
    (:mod:`hcizz.jsonout`).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments; JSON is printed when ``args.json`` is true.
    record : dict
        The machine-readable result.
    text : str
        The human-readable result.

    See Also
    --------
    hcizz.jsonout.dumps : Strict JSON with non-finite floats as strings.

    %(refs_json)s

    Examples
    --------
    >>> import argparse
    >>> emit(argparse.Namespace(json=True), {"p": 2, "value": float("inf")}, "p=2")
    {"p": 2, "value": "inf"}
    >>> emit(argparse.Namespace(json=False), {"p": 2}, "p=2")
    p=2
    """
    if getattr(args, "json", False):
        print(json.dumps(_jsonable(record), sort_keys=True, allow_nan=False))
    else:
        print(text)


def _add(sub, name, help_, func):
    p = sub.add_parser(name, help=help_, description=help_)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=func)
    return p


def _monte_carlo_options(args, default_samples, when="--p"):
    """Refuse ``--samples``/``--seed`` without a finite ``--p`` (nothing is sampled there);
    return ``(samples, seed)`` with the defaults filled in."""
    if args.p is None:
        for flag, value in (("--samples", args.samples), ("--seed", args.seed)):
            if value is not None:
                raise ValueError(f"{flag} applies only with {when} (the Monte Carlo at finite p; without it "
                                 f"the value is the closed-form limit), got {flag} {value}")
    return (default_samples if args.samples is None else args.samples,
            0 if args.seed is None else args.seed)


def _est(e):
    return {"value": e.value, "stderr": e.stderr, "n": e.n}


def _gaussian_max(args):
    from hcizz.checks import check_real
    from .gaussian_max import gaussian_max_moments

    for n in args.n:                      # one-line error naming the value as typed
        check_real("n", n, low=2, high=1e15)
    m1, m2 = gaussian_max_moments(np.array(args.n, dtype=float))
    rows = [{"n": n, "E_M": a, "E_M2": b} for n, a, b in zip(args.n, m1, m2)]
    emit(args, {"results": rows},
         "\n".join(f"n={r['n']:.6g}  E[M_n]={r['E_M']:.15g}  E[M_n^2]={r['E_M2']:.15g}" for r in rows))
    return 0


def _energy(args):
    from .energy import energy_G

    args.samples, args.seed = _monte_carlo_options(args, 400)
    e = energy_G(args.t, args.p, samples=args.samples, rng=args.seed)
    args.p = None if args.p is None else int(e.info["p"])
    rec = {"t": args.t, "p": args.p, **_est(e), "limit": -1.0 / (1.0 - args.t),
           "bulk_bias_bound": e.info.get("bulk_bias_bound", 0.0)}
    emit(args, rec, f"G_p(t={args.t:g}; p={args.p}) = {e}   (limit -1/(1-t) = {rec['limit']:.6g})")
    return 0


def _free_entropy(args):
    from hcizz.checks import check_int
    from .free_entropy import free_entropy

    args.samples, args.seed = _monte_carlo_options(args, 400)
    if args.p is not None:
        args.p = check_int("p", args.p, low=2, high=10**9)
    r = free_entropy(args.q, args.alpha, args.p, samples=args.samples, rng=args.seed)
    if args.p is None:
        rec = {"q": args.q, "alpha": args.alpha, "p": None, "value": r, "stderr": 0.0}
        txt = f"Phi(q={args.q:g}; alpha={args.alpha:g}) = {r:.12g}"
    else:
        rec = {"q": args.q, "alpha": args.alpha, "p": args.p, **_est(r)}
        txt = f"Phi_p(q={args.q:g}; alpha={args.alpha:g}, p={args.p}) = {r}"
    emit(args, rec, txt)
    return 0


def _saddle(args):
    from hcizz.checks import check_int
    from .free_entropy import saddle

    args.samples, args.seed = _monte_carlo_options(args, 200)
    if args.p is not None:
        args.p = check_int("p", args.p, low=2, high=10**9)
    s = saddle(args.alpha, args.p, samples=args.samples, rng=args.seed)
    rec = {"alpha": s.alpha, "p": args.p, "q": s.q, "q_stderr": s.q_stderr, "phi": s.phi,
           "phi_stderr": s.phi_stderr, "alpha_c": s.alpha_c}
    emit(args, rec, (f"alpha={s.alpha:g} p={args.p}: q*={s.q:.10g} ± {s.q_stderr:.2g}  "
                     f"phi={s.phi:.10g} ± {s.phi_stderr:.2g}  (alpha_c of this functional {s.alpha_c:.6g})"))
    return 0


def _alpha_c(args):
    from hcizz.checks import check_int, check_real
    from .finite_capacity import MARGIN_MAX, alpha_c_finite
    from .rank_capacity import alpha_c

    kappas = [1.0] if args.kappa is None else args.kappa
    kap = check_real("kappa", kappas, low=0, high=1, low_open=True)   # refuse before sampling
    margin = check_real("margin", args.margin, low=0, high=MARGIN_MAX, allow_array=False)
    for p in args.p:
        check_int("p", p, low=2, high=10**15)
    check_int("samples", args.samples, low=2)
    limits = np.atleast_1d(alpha_c(kap))
    rows = []
    for p in args.p:
        e = alpha_c_finite(p, kappa=kap, margin=margin, samples=args.samples, rng=args.seed)
        for j, k in enumerate(kappas):
            rows.append({"p": e.info["p"], "kappa": float(k), "margin": margin,
                         "value": float(e.value[j]),
                         "stderr": float(e.stderr[j]), "n": e.n, "E_V": e.info["E_V"],
                         "E_V_stderr": e.info["E_V_stderr"],
                         "pc_over_d2": float(np.atleast_1d(e.info["pc_over_d2"])[j]),
                         "mean_active": e.info["mean_active"], "limit": float(limits[j]),
                         "limit_scaled": float(np.atleast_1d(e.info["limit_scaled"])[j])})
    limit = float(limits[0]) if len(kappas) == 1 else [float(v) for v in limits]
    show_k = args.kappa is not None
    show_m = args.margin != 0
    emit(args, {"results": rows, "limit": limit},
         "\n".join(f"p={r['p']:.6g}  " + (f"kappa={r['kappa']:g}  " if show_k else "")
                   + (f"margin={r['margin']:g}  " if show_m else "")
                   + f"alpha_c={r['value']:.6f} ± {r['stderr']:.2g}  "
                   f"E[V_p]={r['E_V']:.6f} ± {r['E_V_stderr']:.2g}  p_c/d^2={r['pc_over_d2']:.6g}"
                   for r in rows))
    return 0


def _tam(args):
    from hcizz.checks import check_int, check_real
    from .finite_capacity import MARGIN_MAX
    from .listwise import check_mc_size, tail_size, tam_capacity, tam_capacity_expansion

    # every argument is checked before any sampling
    taus = check_real("tau", args.tau, low=0, high=1, low_open=True)
    margin = check_real("margin", args.margin, low=0, high=MARGIN_MAX, allow_array=False)
    if args.method != "mc":
        for flag, value in (("--samples", args.samples), ("--seed", args.seed)):
            if value is not None:
                raise ValueError(f"{flag} applies only with --method mc (the expansion samples nothing), "
                                 f"got {flag} {value} with --method {args.method}")
    args.samples, args.seed = _monte_carlo_options(args, 20000)
    ps = [] if args.p is None else [check_int("p", p, low=2, high=10**15) for p in args.p]
    samples = check_int("samples", args.samples, low=2)
    if args.method == "mc":
        for p in ps:
            check_mc_size(taus, p, samples)
    limit = np.atleast_1d(tam_capacity(taus, margin=margin))
    rows = []
    if not ps:
        rows = [{"tau": float(t), "p": None, "k": None, "margin": margin, "value": float(v),
                 "stderr": 0.0, "n": 0, "limit": float(v), "method": "limit"}
                for t, v in zip(taus.flat if isinstance(taus, np.ndarray) else [taus], limit)]
    for p in ps:
        ks = np.atleast_1d(tail_size(taus, p))
        if args.method == "mc":
            e = tam_capacity(taus, p, margin=margin, samples=samples, rng=args.seed)
            vals, errs, n = np.atleast_1d(e.value), np.atleast_1d(e.stderr), e.n
        else:
            vals = np.atleast_1d(tam_capacity_expansion(taus, p, margin=margin))
            errs, n = np.zeros_like(vals), 0
        for j, t in enumerate(np.atleast_1d(taus)):
            rows.append({"tau": float(t), "p": p, "k": float(ks[j]), "margin": margin,
                         "value": float(vals[j]), "stderr": float(errs[j]), "n": n,
                         "limit": float(limit[j]), "method": args.method})

    def line(r):
        head = f"tau={r['tau']:g}  " + (f"p={r['p']:.6g}  k={r['k']:.6g}  " if r["p"] else "p=inf  ")
        head += f"margin={r['margin']:g}  " if margin else ""
        if r["method"] == "limit":
            return head + f"alpha_c={r['value']:.6f}  (n/d^2, closed form)"
        err = f" ± {r['stderr']:.2g}" if r["method"] == "mc" else f"  ({r['method']})"
        return head + f"alpha_c={r['value']:.6f}{err}  (n/d^2; large p {r['limit']:.6f})"

    emit(args, {"results": rows}, "\n".join(line(r) for r in rows))
    return 0


def _hebbian(args):
    from .hebbian import hebbian

    h = hebbian(args.d, args.p, alpha=args.alpha, exact_moments=args.exact_moments)
    rec = {k: getattr(h, k) for k in ("d", "p", "alpha", "m", "s", "p_single", "p_all",
                                      "alpha_threshold", "alpha_single", "limit")}
    txt = (f"d={h.d:g}: threshold load (P(all recalled)=1/2) alpha_H={h.alpha_threshold:.6g}, "
           f"single fact {h.alpha_single:.6g}, limit {h.limit}")
    if math.isfinite(h.p):
        txt += (f"\np={h.p:.6g} (alpha={h.alpha:.6g}): m={h.m:.6g} s={h.s:.6g} "
                f"P(fact recalled)={h.p_single:.6g} P(all recalled)={h.p_all:.6g}")
    emit(args, rec, txt)
    return 0


def _check(args):
    from .symbolic import run_checks

    res = run_checks()
    if args.json:
        emit(args, {"checks": res, "ok": all(r["ok"] for r in res)}, "")
    else:
        for r in res:
            print(f"[{'PASS' if r['ok'] else 'FAIL'}] {r['name']}\n       {r['detail']}")
        n_bad = sum(not r["ok"] for r in res)
        print(f"{len(res) - n_bad}/{len(res)} symbolic checks passed")
    return 0 if all(r["ok"] for r in res) else 1


@fill_doc
def register(sub):
    """Add the full-rank theory subcommands to ``sub``.

    The subcommands are ``gaussian-max``, ``energy-G``, ``free-entropy``,
    ``saddle``, ``alpha-c-finite``, ``tam-capacity``, ``hebbian`` and ``check``.

    Parameters
    ----------
    %(replica_sub)s

    See Also
    --------
    replica.rank_cli.register : Adds the rank-constrained subcommands.
    hcizz.cli.dispatch : Runs the registered subcommands.

    %(refs_replica_cli_json)s

    Examples
    --------
    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="python -m replica").add_subparsers()
    >>> register(sub)
    >>> print(" ".join(sorted(sub.choices)))
    alpha-c-finite check energy-G free-entropy gaussian-max hebbian saddle tam-capacity
    """
    p = _add(sub, "gaussian-max", "moments of the maximum of n i.i.d. N(0,1)", _gaussian_max)
    p.add_argument("n", type=number, nargs="+", help="n (2 <= n <= 1e15)")

    p = _add(sub, "energy-G", "energy term G_p(t) (Monte Carlo over eta)", _energy)
    p.add_argument("--t", type=float, required=True, help="overlap 0 <= t < 1")
    p.add_argument("--p", type=number, default=None, help="number of candidates (omit: limit)")
    p.add_argument("--samples", type=int, default=None, help="Monte Carlo samples at finite --p (default 400)")
    p.add_argument("--seed", type=int, default=None, help="seed at finite --p (default 0)")

    p = _add(sub, "free-entropy", "RS free entropy Phi_p(q; alpha)", _free_entropy)
    p.add_argument("--q", type=float, required=True)
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--p", type=number, default=None)
    p.add_argument("--samples", type=int, default=None, help="Monte Carlo samples at finite --p (default 400)")
    p.add_argument("--seed", type=int, default=None, help="seed at finite --p (default 0)")

    p = _add(sub, "saddle", "minimiser q* and value phi of the RS free entropy", _saddle)
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--p", type=number, default=None)
    p.add_argument("--samples", type=int, default=None, help="Monte Carlo samples at finite --p (default 200)")
    p.add_argument("--seed", type=int, default=None, help="seed at finite --p (default 0)")

    p = _add(sub, "alpha-c-finite", "finite-p RS capacity alpha_c(kappa) ln p / E[V_p] "
             "(full rank: ln p / (2 E[V_p]))", _alpha_c)
    p.add_argument("p", type=number, nargs="+", help="p (integer 2 <= p <= 1e15)")
    p.add_argument("--kappa", type=number, nargs="+", default=None,
                   help="rank fraction(s) m/d in (0, 1] (default: full rank, 1)")
    p.add_argument("--margin", type=number, default=0,
                   help="margin in competitor-score units, 0 <= margin <= 20 (default 0)")
    p.add_argument("--samples", type=int, default=20000)
    p.add_argument("--seed", type=int, default=0)

    p = _add(sub, "tam-capacity", "listwise (tail-average-margin) capacity n/d^2 at tail fraction(s) tau "
             "(closed form without --p; Monte Carlo or expansion at finite p)", _tam)
    p.add_argument("--tau", type=number, nargs="+", required=True, help="tail fraction(s) in (0, 1]")
    p.add_argument("--p", type=number, nargs="+", default=None,
                   help="candidates per fact, integer 2 <= p <= 1e15 (omit: large-p limit)")
    p.add_argument("--margin", type=number, default=0,
                   help="margin in competitor-score units, 0 <= margin <= 20 (default 0)")
    p.add_argument("--method", choices=("mc", "expansion"), default="mc",
                   help="finite p: exact Monte Carlo (default) or the second-order 1/k expansion")
    p.add_argument("--samples", type=int, default=None, help="Monte Carlo samples at finite --p (default 20000)")
    p.add_argument("--seed", type=int, default=None, help="seed at finite --p (default 0)")

    p = _add(sub, "hebbian", "Gaussian-model predictions for the Hebbian rule", _hebbian)
    p.add_argument("--d", type=float, required=True)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--p", type=float, default=None)
    g.add_argument("--alpha", type=float, default=None)
    p.add_argument("--exact-moments", action="store_true")

    _add(sub, "check", "run every registered symbolic derivation (exit 1 on failure)", _check)
