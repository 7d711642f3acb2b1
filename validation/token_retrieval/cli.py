"""``python -m validation token-retrieval {phase,fit,orthogonal,snr}``."""
from __future__ import annotations

import json
import sys
import time

from validation._io import dumps, to_jsonable

from . import experiments as ex
from .experiments import (GRIDS, beta_scan, fits, mlp_scan, orthogonal_contrast,  # noqa: F401
                          snr_comparison)

def _ints(s):
    return tuple(int(x) for x in s.split(",")) if s else None


def _progress(msg):
    print(f"[token-retrieval] {msg}", file=sys.stderr, flush=True)


def grid_records(quick, *, seed=0, progress=_progress, **kw):
    """Run :func:`~validation.token_retrieval.experiments.grid_records` with progress on stderr.

    Parameters
    ----------
    quick : bool
        Quick grid.
    seed : int, optional
        Root seed.
    progress : callable, optional
        ``progress(message)``; default prints to stderr.
    **kw
        Passed to :func:`~validation.token_retrieval.experiments.grid_records`.

    Returns
    -------
    records, grid : list of dict, dict
        As returned by :func:`~validation.token_retrieval.experiments.grid_records`.

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json
    """
    return ex.grid_records(quick, seed=seed, progress=progress, **kw)


def register(sub):
    """Add the ``token-retrieval`` subcommand to ``python -m validation``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers object of ``python -m validation``.

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json
    """
    p = sub.add_parser("token-retrieval", help="token retrieval with random embeddings (early-phase GD)")
    p.add_argument("what", choices=["phase", "fit", "orthogonal", "snr", "mlp", "beta"])
    p.add_argument("--quick", action="store_true", help="small grid")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--N", default=None, help="comma-separated N grid")
    p.add_argument("--d", default=None, help="comma-separated d grid")
    p.add_argument("--L", default=None, help="comma-separated L grid")
    p.add_argument("--seeds", type=int, default=None, help="seeds per grid point")
    p.add_argument("--beta", type=float, default=10.0, help="||W1||_F after step 2 (default 10)")
    p.add_argument("--eta", type=float, default=0.1, help="first step size (default 0.1)")
    p.add_argument("--m", type=int, default=None, help="width of a fixed random MLP")
    p.add_argument("--vocab-ratio", type=float, default=4.0, help="V / N (default 4)")
    p.add_argument("--kind", choices=["random", "orthogonal"], default="random")
    p.add_argument("--workers", type=int, default=None,
                   help="run the grid (phase/fit/snr) on this many worker processes "
                        "(validation.engine.run_sweep)")
    p.add_argument("--store", default=None,
                   help="JSONL store of the grid runs (phase/fit/snr): a rerun resumes")
    p.set_defaults(func=_run)


def _run(args):
    t0 = time.perf_counter()
    kw = dict(beta=args.beta, eta=args.eta, m=args.m, vocab_ratio=args.vocab_ratio, kind=args.kind)
    if args.workers is not None or args.store is not None:
        kw.update(executor="processes", workers=args.workers, store=args.store)
    if args.what == "orthogonal":
        res = orthogonal_contrast(args.quick, seed=args.seed, progress=_progress)
    elif args.what == "mlp":
        res = mlp_scan(args.quick, seed=args.seed, progress=_progress)
    elif args.what == "beta":
        res = beta_scan(args.quick, seed=args.seed, progress=_progress)
    else:
        recs, g = grid_records(args.quick, seed=args.seed, Ns=_ints(args.N), ds=_ints(args.d),
                               Ls=_ints(args.L), seeds=args.seeds, **kw)
        if args.what == "phase":
            res = {"grid": g, "recall": {str(k): v for k, v in ex.aggregate(recs, "recall").items()},
                   "retrieval": {str(k): v for k, v in ex.aggregate(recs, "retrieval").items()},
                   "test_acc": {str(k): v for k, v in ex.aggregate(recs, "test_acc").items()}}
        elif args.what == "fit":
            res = {"grid": g, **fits(recs, seed=args.seed)}
        else:
            res = {"grid": g, "snr": snr_comparison(recs)}
    res["seconds"] = time.perf_counter() - t0
    if args.json:
        print(dumps(to_jsonable(res)))
    else:
        _print_text(args.what, res)
    return 0


def _print_text(what, res):
    if what == "fit":
        for name in ("retrieval_boundary", "recall_boundary"):
            f = res[name]
            if not f["exponents"]:
                print(f"{name}: too few boundary points ({f['n_points']}) for a fit")
                continue
            print(f"{name}: N_c ~ " + " ".join(
                f"{v}^({e['value']:+.2f} ± {e['stderr']:.2f}, boot ± {e.get('stderr_boot', float('nan')):.2f})"
                for v, e in f["exponents"].items()) + f"  [{f['n_points']} boundary points]")
            g = f.get("interaction")
            if g:
                print(f"  product-form test: log d*log L coefficient {g['value']:+.3f} ± {g['stderr']:.3f} "
                      f"(boot ± {g.get('stderr_boot', float('nan')):.3f}), p = {g['p_value']:.2g}")
        lg = res["retrieval_logistic"]
        print("retrieval logistic: N_c ~ " + " ".join(
            f"{v}^({e['value']:+.2f} ± {e['stderr']:.2f})" for v, e in lg["exponents"].items()))
        mt = res["retrieval_multiplicative"]
        print(f"multiplicative test (retrieval): LR={mt['lr']:.1f} df={mt['df']} p={mt['p_value']:.2g}")
    elif what == "snr":
        for r in res["snr"]:
            print(f"{r['key']}: mean |measured - predicted success| = {r['mean_abs_diff_snr']:.3f} (bulk SNR), "
                  f"{r['mean_abs_diff_margin']:.3f} (margins) over {r['n_configs']} configs; "
                  f"boundary mean log(N_snr/N_meas) = {r['mean_log_ratio_snr']} "
                  f"(sd {r['sd_log_ratio_snr']}, {r['n_matched_snr']} points)")
    else:
        print(json.dumps(to_jsonable({k: v for k, v in res.items() if k != "rows"}), indent=1)[:4000])
        for r in res.get("rows", []):
            print(r)
    print(f"({res['seconds']:.1f} s)")
