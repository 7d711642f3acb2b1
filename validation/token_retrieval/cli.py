"""``python -m validation token-retrieval {phase,fit,orthogonal,snr}``."""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from validation._io import dumps, to_jsonable

from . import experiments as ex

#: Grids (N, d, L, seeds) of the quick and full modes; shared with the report.
GRIDS = {
    True: dict(Ns=(4, 8, 16, 32, 64, 128, 256), ds=(32, 64, 128, 256), Ls=(4, 8, 16, 32), seeds=3),
    False: dict(Ns=(2, 4, 8, 16, 32, 64, 128, 256, 512), ds=(16, 32, 64, 128, 256, 512),
                Ls=(4, 8, 16, 32, 64), seeds=8),
}


def _ints(s):
    return tuple(int(x) for x in s.split(",")) if s else None


def _progress(msg):
    print(f"[token-retrieval] {msg}", file=sys.stderr, flush=True)


def grid_records(quick, *, seed=0, Ns=None, ds=None, Ls=None, seeds=None, progress=_progress, **kw):
    g = dict(GRIDS[bool(quick)])
    for k, v in (("Ns", Ns), ("ds", ds), ("Ls", Ls), ("seeds", seeds)):
        if v is not None:
            g[k] = v
    if all(isinstance(x, int) and x > 0 for k in ("Ns", "ds", "Ls") for x in g[k]):
        # the largest run of the grid must fit before any run starts
        vr = kw.get("vocab_ratio") or 4.0
        if isinstance(vr, (int, float)) and vr > 0:
            ex.check_memory_config(max(g["Ns"]), max(g["ds"]), max(g["Ls"]),
                                   max(2, round(vr * max(g["Ns"]))), kw.get("m"))
    return ex.run_grid(g["Ns"], g["ds"], g["Ls"], seeds=g["seeds"], seed=seed, progress=progress,
                       **kw), g


def fits(records, *, seed=0):
    """Boundary fits and multiplicative tests used by the CLI and report."""
    return {
        "retrieval_boundary": ex.fit_boundary(records, "retrieval", direction="up", rng=seed),
        "recall_boundary": ex.fit_boundary(records, "recall", direction="down", rng=seed),
        "retrieval_logistic": ex.logistic_fit(records, "retrieval"),
        "retrieval_multiplicative": ex.multiplicative_test(records, "retrieval"),
    }


def orthogonal_contrast(quick, *, seed=0, progress=_progress):
    """Random vs orthogonal (one-hot) embeddings at equal d and V = 4N."""
    d = 128 if quick else 256
    Ns = (2, 4, 8, 16, 31) if quick else (2, 4, 8, 16, 32, 63)
    Ls = (4, 16)
    seeds = 3 if quick else 8
    out = {"d": d, "Ns": list(Ns), "Ls": list(Ls), "seeds": seeds, "rows": []}
    for kind in ("random", "orthogonal"):
        recs = ex.run_grid(Ns, (d,), Ls, seeds=seeds, seed=seed, kind=kind, progress=progress)
        for key in ("recall", "retrieval", "test_acc", "recall_acc"):
            for (N, dd, L), (f, n) in ex.aggregate(recs, key).items():
                out["rows"].append({"kind": kind, "key": key, "N": N, "L": L, "value": f, "n": n})
    return out


def mlp_scan(quick, *, seed=0, progress=_progress):
    """Recall boundary ``N_max`` with the fixed random MLP of width ``m``
    (L = 4), fitted as ``N_max ~ d^a m^b``; ``m = None`` rows as reference."""
    ds, ms, L = ((64, 256) if quick else (64, 128, 256)), (64, 256, 1024), 4
    Ns = (2, 4, 8, 16, 32) if quick else (2, 4, 8, 16, 32, 64)
    seeds = 3 if quick else 8
    recs = []
    for m in (None,) + ms:
        if progress:
            progress(f"token_retrieval mlp scan: m={m}")
        for r in ex.run_grid(Ns, ds, (L,), seeds=seeds, seed=seed, m=m):
            r["m"] = 0 if m is None else m
            recs.append(r)
    frac = ex.aggregate(recs, "recall", by=("N", "d", "m"))
    pts = ex.boundary_points(frac, by=("N", "d", "m"), direction="down")
    fit = ex.fit_boundary([r for r in recs if r["m"] > 0], "recall", covars=("d", "m"),
                          direction="down", rng=seed)
    return {"L": L, "Ns": list(Ns), "ds": list(ds), "ms": list(ms), "seeds": seeds,
            "boundary": pts, "fit": fit,
            "recall": {str(k): v[0] for k, v in frac.items()}}


def beta_scan(quick, *, seed=0, progress=_progress):
    """Sensitivity of the boundaries to the step-size convention: ``beta``
    (= ||W1||_F) in {3, 10, 30} at d = 128."""
    Ns, d, Ls = (4, 8, 16, 32, 64, 128), 128, (4, 16)
    seeds = 3 if quick else 8
    rows = []
    for beta in (3.0, 10.0, 30.0):
        if progress:
            progress(f"token_retrieval beta scan: beta={beta}")
        recs = ex.run_grid(Ns, (d,), Ls, seeds=seeds, seed=seed, beta=beta)
        for key, direction in (("retrieval", "up"), ("recall", "down")):
            fr = ex.aggregate(recs, key)
            bp = {b["L"]: b["N"] for b in ex.boundary_points(fr, direction=direction)}
            for L in Ls:
                rows.append({"beta": beta, "key": key, "L": L, "N_c": bp.get(L),
                             "attn_inf": float(np.mean([r["attn_inf"] for r in recs if r["L"] == L]))})
    return {"d": d, "Ns": list(Ns), "Ls": list(Ls), "seeds": seeds, "rows": rows}


def snr_comparison(records):
    """SNR predictions vs measured success, per configuration and at the
    boundary: ``snr`` = extreme-value Gaussian model of the bulk score
    statistics (:func:`~validation.token_retrieval.experiments.extreme_success_prob`),
    ``margin`` = Gaussian model of the per-sample margins."""
    rows = []
    for key, direction in (("recall", "down"), ("retrieval", "up")):
        meas = ex.aggregate(records, key)
        row = {"key": key, "n_configs": len(meas), "boundary": []}
        preds = {}
        for model in ("snr", "margin"):
            pred = ex.aggregate(records, f"p_{key}_{model}")
            preds[model] = {(b["d"], b["L"]): b["N"]
                            for b in ex.boundary_points(pred, direction=direction)}
            row[f"mean_abs_diff_{model}"] = float(np.mean([abs(meas[k][0] - pred[k][0]) for k in meas]))
        for b in ex.boundary_points(meas, direction=direction):
            row["boundary"].append({"d": b["d"], "L": b["L"], "N_measured": b["N"],
                                    "N_snr": preds["snr"].get((b["d"], b["L"])),
                                    "N_margin": preds["margin"].get((b["d"], b["L"]))})
        lr = [np.log(p["N_snr"] / p["N_measured"]) for p in row["boundary"] if p["N_snr"]]
        row["mean_log_ratio_snr"] = float(np.mean(lr)) if lr else None
        row["sd_log_ratio_snr"] = float(np.std(lr, ddof=1)) if len(lr) > 1 else None
        row["n_matched_snr"] = len(lr)
        rows.append(row)
    return rows


def register(sub):
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
        res = orthogonal_contrast(args.quick, seed=args.seed)
    elif args.what == "mlp":
        res = mlp_scan(args.quick, seed=args.seed)
    elif args.what == "beta":
        res = beta_scan(args.quick, seed=args.seed)
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
