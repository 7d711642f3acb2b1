"""``python -m validation token-retrieval {phase,fit,orthogonal,snr,mlp,beta}``.

The command only parses: the values go to the library
(:func:`validation.token_retrieval.experiments.grid_records`,
:func:`~validation.token_retrieval.experiments.run_grid` and the scans),
which checks every one of them, and the memory of the largest run, before
any run (one line naming the argument, its value and the valid range; exit 2).
"""
from __future__ import annotations

import json
import sys
import time

from hcizz.cli import parse_list
from validation._io import dumps, to_jsonable

from . import experiments as ex
from ._docparams import fill_doc

__all__ = ["register"]

#: options of the grid commands (phase, fit, snr) that the scans (orthogonal, mlp, beta) do not take
_GRID_OPTIONS = ("N", "d", "L", "seeds", "beta", "eta", "m", "vocab_ratio", "kind", "workers", "store")


def _progress(msg):
    print(f"[token-retrieval] {msg}", file=sys.stderr, flush=True)


@fill_doc
def register(sub):
    """Add the ``token-retrieval`` subcommand to ``python -m validation``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers object of ``python -m validation``.

    See Also
    --------
    validation.token_retrieval.experiments.grid_records : Run ``run_grid`` on the main grid of a preset (``PRESETS``).
    validation.token_retrieval.experiments.mlp_scan
        Locate the recall boundary ``N_max`` with a fixed random MLP of width ``m``.

    %(ref_experiments)s
    """
    p = sub.add_parser("token-retrieval", help="token retrieval with random embeddings (early-phase GD)")
    p.add_argument("what", choices=["phase", "fit", "orthogonal", "snr", "mlp", "beta"])
    p.add_argument("--quick", action="store_true", help="the quick preset (default: full)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--N", default=None, help="comma-separated N grid (phase, fit, snr)")
    p.add_argument("--d", default=None, help="comma-separated d grid (phase, fit, snr)")
    p.add_argument("--L", default=None, help="comma-separated L grid (phase, fit, snr)")
    p.add_argument("--seeds", type=int, default=None, help="seeds per grid point (phase, fit, snr)")
    p.add_argument("--beta", type=float, default=None, help="||W1||_F after step 2 (default 10)")
    p.add_argument("--eta", type=float, default=None, help="first step size (default 0.1)")
    p.add_argument("--m", type=int, default=None, help="width of a fixed random MLP")
    p.add_argument("--vocab-ratio", type=float, default=None, help="V / N (default 4)")
    p.add_argument("--kind", choices=["random", "orthogonal"], default=None, help="embeddings (default random)")
    p.add_argument("--workers", type=int, default=None,
                   help="run the grid (phase/fit/snr) on this many worker processes "
                        "(validation.engine.run_sweep)")
    p.add_argument("--store", default=None,
                   help="JSONL store of the grid runs (phase/fit/snr): a rerun resumes")
    p.set_defaults(func=_run)


def _run(args):
    t0 = time.perf_counter()
    preset = "quick" if args.quick else "full"
    if args.what in ("orthogonal", "mlp", "beta"):
        given = [o for o in _GRID_OPTIONS if getattr(args, o) is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise ValueError(f"{flag} applies to phase, fit and snr (their grid), not to {args.what} "
                             f"(its sizes are the preset's), got {flag} {getattr(args, given[0])}")
        scan = {"orthogonal": ex.orthogonal_contrast, "mlp": ex.mlp_scan, "beta": ex.beta_scan}[args.what]
        res = scan(preset, seed=args.seed, progress=_progress).to_dict()
    else:
        kw = {k: getattr(args, k) for k in ("beta", "eta", "m", "vocab_ratio", "kind") if getattr(args, k) is not None}
        if args.workers is not None or args.store is not None:
            kw.update(executor="processes", workers=args.workers, store=args.store)
        grid = {k: None if getattr(args, k) is None else tuple(parse_list(getattr(args, k), f"--{k}", item=int))
                for k in ("N", "d", "L")}
        recs, g = ex.grid_records(preset, seed=args.seed, Ns=grid["N"], ds=grid["d"], Ls=grid["L"],
                                  seeds=args.seeds, progress=_progress, **kw)
        if args.what == "phase":
            res = {"grid": g, **{k: {str(c): v for c, v in ex.aggregate(recs, k).items()}
                                 for k in ("recall", "retrieval", "test_acc")}}
        elif args.what == "fit":
            res = {"grid": g, **ex.fits(recs, seed=args.seed)}
        else:
            res = {"grid": g, "snr": ex.snr_comparison(recs)}
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
            if not f.exponents:
                print(f"{name}: too few boundary points ({f.n_points}) for a fit")
                continue
            print(f"{name}: N_c ~ " + " ".join(
                f"{v}^({e.value:+.2f} ± {e.stderr:.2f}, boot ± "
                f"{e.stderr_boot if e.stderr_boot is not None else float('nan'):.2f})"
                for v, e in f.exponents.items()) + f"  [{f.n_points} boundary points]")
            g = f.interaction
            if g:
                boot = g.stderr_boot if g.stderr_boot is not None else float("nan")
                print(f"  product-form test: log d*log L coefficient {g.value:+.3f} ± {g.stderr:.3f} "
                      f"(boot ± {boot:.3f}), p = {g.p_value:.2g}")
        lg = res["retrieval_logistic"]
        print("retrieval logistic: N_c ~ " + " ".join(
            f"{v}^({e.value:+.2f} ± {e.stderr:.2f})" for v, e in lg.exponents.items()))
        mt = res["retrieval_multiplicative"]
        print(f"multiplicative test (retrieval): LR={mt.lr:.1f} df={mt.df} p={mt.p_value:.2g}")
    elif what == "snr":
        for r in res["snr"]:
            print(f"{r.key}: mean |measured - predicted success| = {r.mean_abs_diff_snr:.3f} (bulk SNR), "
                  f"{r.mean_abs_diff_margin:.3f} (margins) over {r.n_configs} configs; "
                  f"boundary mean log(N_snr/N_meas) = {r.mean_log_ratio_snr} "
                  f"(sd {r.sd_log_ratio_snr}, {r.n_matched_snr} points)")
    else:
        print(json.dumps(to_jsonable({k: v for k, v in res.items() if k != "rows"}), indent=1)[:4000])
        for r in res.get("rows", []):
            print(r)
    print(f"({res['seconds']:.1f} s)")
