"""``python -m validation capacity``: empirical capacity of one memory model vs theory.

The command only parses: every argument is checked once, by
:func:`validation.linear_memory.capacity.measure_capacity`, before any trial
runs (one line on stderr and exit status 2 for a bad one).

Examples::

    python -m validation capacity --model op --d 20 --seeds 4 --json
    python -m validation capacity --model lowrank --kappa 0.5 --d 30 --store lm.jsonl
    python -m validation capacity --model hebbian --d 40 --alphas 0.02,0.03,0.04
    python -m validation capacity --model op --method exact --d 20 --seeds 6 --json
    python -m validation capacity --model op --d 30 --design adaptive --ci-halfwidth 0.03 --json
    python -m validation capacity --model dp --method exact --criterion tam --tau 0.05 --margin 0.1 --d 20
    python -m validation capacity --model dp --method train --criterion tam --tau 0.05 --d 20 --seeds 4
"""
from __future__ import annotations

import json
import math
import sys

from hcizz.cli import parse_list
from validation._io import to_jsonable

__all__ = ["register", "run"]


def register(sub):
    """Add the ``capacity`` subcommand to an ``argparse`` subparsers object.

    The ``--model`` choices and their help are read from the registered
    memory models (:data:`validation.linear_memory.registry.MEMORY_MODELS`)
    when the parser is built.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of ``python -m validation``.

    Returns
    -------
    argparse.ArgumentParser
        The ``capacity`` parser (its ``func`` default is :func:`run`).

    See Also
    --------
    validation.linear_memory.cli.run : Executes the subcommand once its arguments are parsed.

    References
    ----------
    docs/linear_memory.md#cli
    """
    from .registry import MEMORY_MODELS

    p = sub.add_parser("capacity", help="empirical capacity of a linear memory vs theory")
    p.add_argument("--model", required=True, choices=list(MEMORY_MODELS),
                   help="; ".join(f"{m.name}: {m.help}" for m in MEMORY_MODELS.values())
                   .replace("%", "%%"))
    p.add_argument("--d", type=int, required=True, help="dimension (>= 2)")
    p.add_argument("--kappa", type=float, default=None, help="rank ratio m/d in (0, 1] (lowrank)")
    p.add_argument("--seeds", type=int, default=6, help="trials per load (default 6)")
    p.add_argument("--alphas", default=None,
                   help="comma-separated loads p ln p / d^2 (default: grid around the prediction)")
    p.add_argument("--store", default=None, help="JSONL sweep store (reruns reuse finished trials)")
    p.add_argument("--preset", default="default", choices=["default", "paper"])
    p.add_argument("--method", default="train", choices=["train", "exact"],
                   help="train: Adam success; exact: existence of a full-rank memory "
                        "(certified decision, op/dp only)")
    p.add_argument("--steps", type=int, default=None, help="override the preset's step budget")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--executor", default="processes", choices=["processes", "inprocess", "dask"])
    p.add_argument("--extend", type=int, default=None,
                   help="rounds of grid extension until the crossing is bracketed "
                        "(default 2 with the automatic grid, 0 with --alphas)")
    p.add_argument("--design", default="grid", choices=["grid", "adaptive"],
                   help="grid: --seeds trials per load; adaptive: loads chosen from the current fit "
                        "until the 95%% CI half-width is <= --ci-halfwidth (docs/sweeps.md)")
    p.add_argument("--ci-halfwidth", type=float, default=0.03, help="adaptive target half-width (default 0.03)")
    p.add_argument("--max-trials", type=int, default=200, help="adaptive trial cap (default 200)")
    p.add_argument("--lr", type=float, default=None, help="override the preset's Adam learning rate")
    p.add_argument("--criterion", default="top1", choices=["top1", "tam"],
                   help="top1: correct score above every competitor; tam: above the mean of the top "
                        "tau fraction of competitors (docs/listwise.md); with tam or --margin > 0: "
                        "op/dp, --method exact (existence) or train (Adam on the squared-hinge "
                        "surrogate, same instances)")
    p.add_argument("--tau", type=float, default=None, help="tail fraction in (0, 1] (tam)")
    p.add_argument("--margin", type=float, default=0.0,
                   help="margin >= 0 in competitor-score units (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
    return p


def run(args):
    """Run ``python -m validation capacity`` on parsed arguments.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments of the ``capacity`` parser (see :func:`register`).

    Returns
    -------
    int
        Exit status: 0, or 1 when a trial failed (one line on stderr).

    See Also
    --------
    validation.linear_memory.cli.register : Builds the argument parser of ``capacity``.
    validation.linear_memory.capacity.measure_capacity : Sweep and fit that this command prints.

    References
    ----------
    docs/linear_memory.md#cli
    """
    from .capacity import measure_capacity

    if args.criterion != "top1" or args.margin != 0 or args.tau is not None:
        return _run_listwise(args)
    alphas = parse_list(args.alphas, "--alphas", item=float) if args.alphas is not None else None
    design = {"design": args.design, "ci_halfwidth": args.ci_halfwidth, "max_trials": args.max_trials}
    try:
        res = measure_capacity(args.model, args.d, kappa=args.kappa, seeds=args.seeds, alphas=alphas,
                               extend=args.extend, preset=args.preset, store=args.store, workers=args.workers,
                               executor=args.executor, progress=True, method=args.method, **design,
                               steps=args.steps, lr=args.lr)
    except RuntimeError as exc:      # a trial failed: one line (details stay in the store), exit 1
        print(f"python -m validation capacity: failed: {exc}".splitlines()[0][:500], file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(to_jsonable(res)))
    else:
        th = res["theory"]
        print(f"model={res['model']} d={res['d']}"
              + (f" kappa={res['kappa']:g}" if res["kappa"] is not None else "")
              + (" method=exact (existence of a memory)" if args.method == "exact"
                 else f" preset={res['preset']}"))
        print(("exact" if args.method == "exact" else "empirical")
              + f" threshold: {res['threshold']:.4f}  95% CI [{res['ci_low']:.4f}, {res['ci_high']:.4f}]")
        print(f"theory ({th.get('name')}): {th.get('value', math.nan):.4f}"
              + (f" +- {th['stderr']:.4f}" if th.get("stderr") else "") + "   large-d full rank: 0.5")
        print("load      successes/trials")
        for a, k, n in res["counts"]:
            print(f"{a:8.4f}  {k}/{n}")
        if args.method == "exact":
            c = res["certificates"]
            def g(x):
                return "-" if x is None else f"{x:.3g}"
            print(f"certificates: {c['feasible']} feasible (W, smallest cosine margin "
                  f"{g(c['min_feasible_margin'])}), {c['infeasible']} infeasible (lambda, largest cosine "
                  f"bound {g(c['max_infeasible_eps'])}), {c['undecided']} undecided")
        print(f"{res['trials']} trials, {res['train_seconds']:.1f} s of "
              + ("deciding" if args.method == "exact" else "training")
              + f", {res['seconds']:.1f} s wall", file=sys.stderr)
    return 0


def _run_listwise(args):
    """``capacity --criterion tam`` or ``--margin > 0``: exact decisions or trained runs (``--method``)."""
    from .exact_listwise import measure_listwise_capacity
    from .train_listwise import measure_trained_listwise_capacity

    for flag, value, default in (("--kappa", args.kappa, None), ("--preset", args.preset, "default"),
                                 ("--design", args.design, "grid"), ("--extend", args.extend, None)):
        if value != default:
            raise ValueError(f"{flag} applies to top-1 capacity at margin 0 only, got {flag} {value} "
                             "with --criterion tam or --margin > 0")
    if args.method == "exact":
        for flag, value in (("--steps", args.steps), ("--lr", args.lr)):
            if value is not None:
                raise ValueError(f"{flag} applies to --method train, got {flag} {value} with --method exact")
    ns = None
    if args.alphas is not None:
        # loads in the criterion's units (tam: n / d^2; top1: n ln n / d^2) -> numbers of facts
        from replica import p_from_load

        loads = parse_list(args.alphas, "--alphas", item=float, low=0)
        ns = [int(round(a * args.d ** 2)) if args.criterion == "tam" else int(p_from_load(a, args.d))
              for a in loads]
    common = dict(criterion=args.criterion, tau=args.tau, margin=args.margin, seeds=args.seeds, ns=ns,
                  store=args.store, workers=args.workers, executor=args.executor, progress=True)
    try:
        if args.method == "exact":
            res = measure_listwise_capacity(args.model, args.d, **common)
        else:
            res = measure_trained_listwise_capacity(args.model, args.d, lr=args.lr, steps=args.steps, **common)
    except RuntimeError as exc:
        print(f"python -m validation capacity: failed: {exc}".splitlines()[0][:500], file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(to_jsonable(res)))
        return 0
    th = res.theory
    unit = "n/d^2" if args.criterion == "tam" else "n ln n/d^2"
    what = "exact" if res.method == "exact" else "trained"
    print(f"model={res.model} d={res.d} criterion={res.criterion}"
          + (f" tau={res.tau:g}" if res.tau is not None else "") + f" margin={res.margin:g} method={res.method}")
    print(f"{what} threshold ({unit}): {res.threshold:.4f}  95% CI [{res.ci_low:.4f}, {res.ci_high:.4f}]")
    print(f"theory ({th['name']}): {th['value']:.4f} +- {th['stderr']:.2g} (n = {th['p']}); "
          f"large-p limit {th['limit']:.4f}")
    print("load      feasible/decided" if res.method == "exact" else "load      successes/runs")
    for a, k, n in res.counts:
        print(f"{a:8.4f}  {k}/{n}")
    print(f"{res.trials} instances, {res.undecided} undecided, {res.unverified} unverified, "
          f"{res.cpu_seconds:.1f} s CPU " + ("deciding" if res.method == "exact" else "training"), file=sys.stderr)
    return 0
