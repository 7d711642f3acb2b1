"""Overhead, pool start-up and parallel efficiency of the sweep engine.

Run::

    python benchmarks/bench_sweep.py [--quick] [--workers 2] [--target 1.2] \
        [--trials 16] [--part {all,1,2}] [--no-dask]

1. Engine overhead on trivial trials (``square``: ~1 us of work). Each
   configuration runs N1 and N2 trials (best of 2 runs each); the slope
   (t(N2) - t(N1)) / (N2 - N1) is the engine's cost per trial, the intercept
   its fixed cost per ``run_sweep`` call. ``+store`` rows append every record
   to a JSONL store (one ``write`` + ``fsync`` per trial). The process and Dask
   rows run on a :class:`validation.engine.WorkerPool` that is already running
   (as in ``python -m validation reproduce``, which starts one pool per run);
   the pool's start-up is timed on its own (3 starts: spawn, interpreter and
   engine imports until every worker has answered), next to the old cost of a
   pool per ``run_sweep`` call (``executor="processes"``).
2. Parallel efficiency on real training trials: ``train_trial`` (the
   token-retrieval attention model of ``validation.token_retrieval`` trained
   from zero by full-batch Adam, N = 32 sequences, d = 64, L = 8,
   single-threaded BLAS), its number of steps sized to ``--target`` seconds
   (default 1.2 s). T1 = the trials one after the other in this process;
   Tw = the same trials on a running pool of ``workers`` processes whose
   workers have already imported the training code (one warm-up trial each,
   timed separately: a report run pays it once). Efficiency = T1 / (workers
   Tw). On a shared machine it is the product of two factors, printed
   separately: the *worker utilisation* U = (time inside the trials) /
   (workers Tw), which is the engine's share (1 - U is the time workers sat
   idle or in the engine), and the *core share* S = (serial trial time) /
   (trial time in the workers), below 1 when other processes took the cores
   (also shown: CPU / wall inside the trials, which should be ~1 on idle
   cores). Results are checked to be bit-identical to the serial run.

The load average (``os.getloadavg``) is printed at the start and at the end
of each part: numbers from a machine that is not idle must be read with it.
"""
from __future__ import annotations

import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_k] = "1"  # serial baseline single-threaded, like the workers

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from validation.engine import WorkerPool, run_sweep  # noqa: E402
from validation.engine._demo_trials import square  # noqa: E402


def _load():
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _wall(fn, params, **kw):
    t = time.perf_counter()
    recs = run_sweep(fn, params, progress=False, **kw)
    wall = time.perf_counter() - t
    assert all(r["status"] == "ok" for r in recs), [r for r in recs if r["status"] != "ok"][:1]
    return wall, recs


def _have_dask():
    try:
        import distributed  # noqa: F401
        return True
    except ImportError:
        return False


def _slope(name, n1, n2, tmp, use_store, repeats=2, **kw):
    t = {}
    for n in (n1, n2):
        best = float("inf")
        for r in range(repeats):
            store = Path(tmp) / f"{name}-{n}-{r}.jsonl".replace(" ", "_") if use_store else None
            best = min(best, _wall(square, [{"x": i} for i in range(n)], store=store, **kw)[0])
        t[n] = best
    slope = (t[n2] - t[n1]) / (n2 - n1)
    fixed = t[n1] - n1 * slope
    print(f"  {name:40s} t({n1})={t[n1]:7.3f}s t({n2})={t[n2]:7.3f}s  per trial "
          f"{slope * 1e3:7.3f} ms  fixed per call {fixed * 1e3:7.1f} ms", flush=True)
    return {"per_trial_s": slope, "per_call_s": fixed}


def _startup(executor, workers, repeats=3):
    """Seconds from WorkerPool() to every worker answering, ``repeats`` times."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        with WorkerPool(executor, workers=workers) as pool:
            pool.start()
            times.append(time.perf_counter() - t)
    return times


def overhead(n1, n2, workers, tmp, dask=True):
    """Part 1: per-trial and per-call costs; pool start-up."""
    res = {}
    res["inprocess"] = _slope("inprocess", n1, n2, tmp, False, executor="inprocess")
    res["inprocess+store"] = _slope("inprocess + store", n1, n2, tmp, True, executor="inprocess")
    with WorkerPool("processes", workers=workers) as pool:
        pool.start()
        res["pool"] = _slope(f"processes({workers}), running pool", n1, n2, tmp, False,
                             executor=pool)
        res["pool+store"] = _slope(f"processes({workers}), running pool + store", n1, n2, tmp,
                                   True, executor=pool)
    st = _startup("processes", workers)
    res["pool_startup_s"] = st
    print(f"  start-up of a processes({workers}) pool (once per run): "
          + ", ".join(f"{x:.2f}" for x in st) + f" s (median {statistics.median(st):.2f} s)",
          flush=True)
    t_old, _ = _wall(square, [{"x": i} for i in range(n1)], executor="processes", workers=workers)
    res["pool_per_call_s"] = t_old
    print(f"  for comparison, executor='processes' (a pool per run_sweep call): "
          f"t({n1}) = {t_old:.2f} s per call", flush=True)
    if dask and _have_dask():
        with WorkerPool("dask", workers=workers) as dpool:
            t = time.perf_counter()
            dpool.start()
            res["dask_startup_s"] = time.perf_counter() - t
            res["dask"] = _slope(f"dask({workers}), running LocalCluster", n1, n2, tmp, False,
                                 executor=dpool)
        print(f"  start-up of a dask({workers}) LocalCluster pool: {res['dask_startup_s']:.2f} s",
              flush=True)
    return res


def calibrate(target):
    """Steps of ``train_trial`` (N=32, d=64, L=8) for about ``target`` seconds."""
    from validation.token_retrieval.trials import train_trial

    base = {"N": 32, "d": 64, "L": 8}
    p = {"seed": 0, **base, "steps": 20}
    train_trial(p)  # warm-up (imports, caches)
    t = time.perf_counter()
    train_trial(p)
    one = time.perf_counter() - t
    k = max(1, round(target / one))
    return {**base, "steps": 20 * k}, one * k


def _results(rec):
    """A record's result without timing metadata (compared bit for bit)."""
    return {k: v for k, v in rec["result"].items() if k != "import_seconds"}


def efficiency(n_trials, workers, target, dask=True):
    """Part 2: parallel efficiency on real training trials; returns a dict."""
    from validation.token_retrieval.trials import train_trial

    base, est = calibrate(target)
    params = [{"seed": s, **base} for s in range(n_trials)]
    print(f"  train_trial {base} ({est:.2f} s per trial when calibrated), {n_trials} trials",
          flush=True)
    t1, ref = _wall(train_trial, params, executor="inprocess")
    c1 = sum(r["seconds"] for r in ref)
    cpu1 = ref.stats.cpu_seconds
    print(f"  serial, in this process     T1 = {t1:7.2f} s  ({c1 / n_trials:.3f} s wall, "
          f"{cpu1 / n_trials:.3f} s CPU per trial)", flush=True)
    kinds = [("processes", f"processes({workers})")]
    if dask and _have_dask():
        kinds.append(("dask", f"dask({workers}) LocalCluster"))
    out = {"T1": t1, "serial_trial_s": c1 / n_trials, "serial_trial_cpu_s": cpu1 / n_trials}
    for kind, name in kinds:
        with WorkerPool(kind, workers=workers) as pool:
            t = time.perf_counter()
            pool.start()
            t_start = time.perf_counter() - t
            # one short trial per worker: each worker imports the training code
            # (validation.token_retrieval, hence hcizz and scipy) when it unpickles it
            warm = [{"seed": 10_000 + i, **base, "steps": 1} for i in range(workers)]
            t_warm, _ = _wall(train_trial, warm, executor=pool)
            cpu0 = pool.trial_cpu_seconds
            tw, recs = _wall(train_trial, params, executor=pool)
            cpu_in = pool.trial_cpu_seconds - cpu0
        same = all(json.dumps(_results(a)) == json.dumps(_results(b)) for a, b in zip(ref, recs))
        cw = sum(r["seconds"] for r in recs)
        eff = t1 / (workers * tw)
        eff_all = t1 / (workers * (tw + t_start + t_warm))
        util = cw / (workers * tw)
        share = c1 / cw
        print(f"  {name:27s} Tw = {tw:7.2f} s  speed-up {t1 / tw:4.2f}  efficiency T1/(w Tw) = "
              f"{eff:4.2f}   bit-identical to serial: {same}", flush=True)
        print(f"  {'':27s} = worker utilisation U {util:4.2f} (engine) x core share S "
              f"{share:4.2f} (load: trials ran {cw / c1:4.2f}x their serial wall time; "
              f"CPU/wall inside the trials {cpu_in / cw:4.2f}, serial {cpu1 / c1:4.2f})",
              flush=True)
        print(f"  {'':27s} CPU per trial {cpu_in / n_trials:.3f} s in the workers vs "
              f"{cpu1 / n_trials:.3f} s serial (ratio {cpu_in / cpu1:4.2f}: the same work)",
              flush=True)
        print(f"  {'':27s} pool start-up {t_start:.2f} s + warm-up (first trial per worker: "
              f"imports) {t_warm:.2f} s, once per run; counting them for this one sweep: "
              f"efficiency {eff_all:4.2f}", flush=True)
        out[kind] = {"Tw": tw, "efficiency": eff, "utilisation": util, "core_share": share,
                     "cpu_over_wall": cpu_in / cw, "serial_cpu_over_wall": cpu1 / c1,
                     "cpu_ratio": cpu_in / cpu1, "startup_s": t_start, "warmup_s": t_warm,
                     "efficiency_with_startup": eff_all, "bit_identical": same}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer trials")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--target", type=float, default=1.2, help="seconds per training trial")
    ap.add_argument("--trials", type=int, default=None,
                    help="training trials in part 2 (default 16, --quick 8)")
    ap.add_argument("--part", choices=["all", "1", "2"], default="all")
    ap.add_argument("--no-dask", action="store_true", help="skip the Dask rows")
    ap.add_argument("--json", default=None, help="also write the numbers to this file")
    args = ap.parse_args(argv)
    for name, v, low in (("workers", args.workers, 1), ("trials", args.trials, 2)):
        if v is not None and v < low:
            print(f"bench_sweep.py: error: --{name} must be >= {low}, got {v}", file=sys.stderr)
            return 2
    if not args.target > 0:
        print(f"bench_sweep.py: error: --target must be > 0, got {args.target}", file=sys.stderr)
        return 2
    # run_sweep's first call imports hcizz (scipy): do it here, untimed. Not at
    # module level: spawned workers re-import this script as __mp_main__.
    import hcizz.checks  # noqa: F401
    n1, n2 = (50, 250) if args.quick else (100, 600)
    n_train = args.trials or (8 if args.quick else 16)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {_load()} at the start")
    res = {"cpus": os.cpu_count(), "load_start": os.getloadavg()}
    if args.part in ("all", "1"):
        print(f"1. engine overhead on trivial trials (square), N = {n1} and {n2}:")
        with tempfile.TemporaryDirectory() as tmp:
            res["overhead"] = overhead(n1, n2, args.workers, tmp, dask=not args.no_dask)
        print(f"   ({_load()})")
    if args.part in ("all", "2"):
        print(f"2. parallel efficiency of {args.workers} workers on real training trials "
              "(token-retrieval attention model, full-batch Adam):")
        res["efficiency"] = efficiency(n_train, args.workers, args.target, dask=not args.no_dask)
        print(f"   ({_load()})")
    res["load_end"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
