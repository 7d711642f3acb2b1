"""Overhead and parallel efficiency of the sweep executors.

Run::

    .venv/bin/python benchmarks/bench_sweep.py [--quick] [--workers 2] \
        [--trial {train,lstsq}] [--part {all,1,2}]

1. Overhead per trial on trivial trials (``square``: ~1 us of work): each
   executor runs N1 and N2 trials (best of 2 runs each); the slope
   (t(N2) - t(N1)) / (N2 - N1) is the engine's cost per trial and the
   intercept its fixed start-up cost (pool or cluster start). ``+store`` rows
   append every record to a JSONL store (one ``write`` + ``fsync`` per trial).
   A Dask LocalCluster started by the sweep itself is timed once at N1; its
   start-up is t(N1) minus N1 times the per-trial cost on a running cluster.
2. Parallel efficiency on real training trials: ``train_trial`` (default
   ``--trial train``: the token-retrieval attention model of
   ``validation.token_retrieval`` trained from zero by full-batch Adam, N = 32
   sequences, d = 64, L = 8, single-threaded BLAS), its number of steps sized
   to ~0.2 s per trial; ``--trial lstsq`` uses the earlier numpy stand-in
   ``lstsq_trial`` (random least squares + gradient steps). Efficiency = T(serial, in-process) /
   (workers * T(workers)), start-up included, and also with the start-up
   measured in part 1 subtracted. On a machine shared with other work the
   trials themselves run slower in the workers than in the serial baseline;
   the script prints that slowdown and the worker utilisation (time inside
   trials / (workers * wall)), which measures the engine alone. Results are
   checked to be bit-identical across executors.

Numbers depend on the machine and on its load (other processes competing for
the cores lower the efficiency); all ratios are measured in one run.
"""
from __future__ import annotations

import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_k] = "1"  # serial baseline single-threaded, like the workers

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from validation.engine import run_sweep  # noqa: E402
from validation.engine._demo_trials import lstsq_trial, square  # noqa: E402
from validation.token_retrieval.trials import train_trial  # noqa: E402


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


def overhead(n1, n2, workers, tmp, repeats=2):
    """Per-trial cost (slope) and start-up cost (intercept) of each executor;
    each time is the best of ``repeats`` runs (the machine may be shared)."""
    res = {}
    configs = [("inprocess", {"executor": "inprocess"}, False),
               ("inprocess+store", {"executor": "inprocess"}, True),
               (f"processes({workers})", {"executor": "processes", "workers": workers}, False),
               (f"processes({workers})+store", {"executor": "processes", "workers": workers}, True)]
    client = cluster = None
    if _have_dask():
        from dask.distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        client = Client(cluster)
        configs.append((f"dask({workers}) on a running LocalCluster",
                        {"executor": "dask", "scheduler": client}, False))
    k = 0
    try:
        for name, kw, use_store in configs:
            t = {}
            for n in (n1, n2):
                best = float("inf")
                for _ in range(repeats):
                    k += 1
                    store = Path(tmp) / f"s{k}.jsonl" if use_store else None
                    best = min(best, _wall(square, [{"x": i} for i in range(n)],
                                           store=store, **kw)[0])
                t[n] = best
            slope = (t[n2] - t[n1]) / (n2 - n1)
            fixed = t[n1] - n1 * slope
            res[name] = {"per_trial_s": slope, "startup_s": fixed}
            print(f"  {name:38s} t({n1})={t[n1]:7.3f}s t({n2})={t[n2]:7.3f}s  "
                  f"per trial {slope * 1e3:7.3f} ms  start-up {fixed:6.2f} s", flush=True)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    if _have_dask():
        name = f"dask({workers}) with its own LocalCluster"
        slope = res[f"dask({workers}) on a running LocalCluster"]["per_trial_s"]
        t1, _ = _wall(square, [{"x": i} for i in range(n1)], executor="dask", workers=workers)
        res[name] = {"per_trial_s": slope, "startup_s": t1 - n1 * slope}
        print(f"  {name:38s} t({n1})={t1:7.3f}s                 (same per-trial cost)"
              f"      start-up {t1 - n1 * slope:6.2f} s", flush=True)
    return res


#: trial function, base parameters, the parameter scaled to reach the target
#: duration and its calibration value
TRIALS = {
    "train": (train_trial, {"N": 32, "d": 64, "L": 8}, "steps", 20),
    "lstsq": (lstsq_trial, {"n": 400, "d": 200}, "reps", 1),
}


def _results(rec):
    """A record's result without timing metadata (compared bit for bit)."""
    return {k: v for k, v in rec["result"].items() if k != "import_seconds"}


def calibrate(trial, target):
    """Size ``trial`` to about ``target`` seconds: returns its parameter
    record (without seed) and the calibrated duration."""
    fn, base, knob, unit = TRIALS[trial]
    p = {"seed": 0, **base, knob: unit}
    fn(p)  # warm-up (imports, caches)
    t = time.perf_counter()
    fn(p)
    one = time.perf_counter() - t
    k = max(1, round(target / one))
    return {**base, knob: unit * k}, one * k


def efficiency(n_trials, workers, target, startup, trial="train"):
    fn = TRIALS[trial][0]
    base, est = calibrate(trial, target)
    params = [{"seed": s, **base} for s in range(n_trials)]
    print(f"  {fn.__name__} {base} ({est:.3f} s per trial when calibrated), "
          f"{n_trials} trials", flush=True)
    t1, ref = _wall(fn, params, executor="inprocess")
    c1 = sum(r["seconds"] for r in ref)
    print(f"  serial in-process          {t1:7.2f} s  ({t1 / n_trials:.3f} s per trial)", flush=True)
    runs = [(f"processes({workers})", {"executor": "processes", "workers": workers},
             startup.get(f"processes({workers})", {}).get("startup_s", 0.0))]
    if _have_dask():
        runs.append((f"dask({workers}) own LocalCluster", {"executor": "dask", "workers": workers},
                     startup.get(f"dask({workers}) with its own LocalCluster", {}).get("startup_s", 0.0)))
    for name, kw, t0 in runs:
        tw, recs = _wall(fn, params, **kw)
        same = all(json.dumps(_results(a)) == json.dumps(_results(b)) for a, b in zip(ref, recs))
        imp = sum(r["result"].get("import_seconds", 0.0) for r in recs)
        eff = t1 / (workers * tw)
        eff_ex = t1 / (workers * max(tw - t0, 1e-9))
        cw = sum(r["seconds"] for r in recs)
        print(f"  {name:26s} {tw:7.2f} s  speed-up {t1 / tw:5.2f}  efficiency {eff:5.2f} "
              f"({eff_ex:4.2f} without the {t0:.1f} s start-up of part 1)  "
              f"bit-identical to serial: {same}", flush=True)
        print(f"  {'':26s} time inside the trials {cw:.2f} s vs {c1:.2f} s serial "
              f"(ratio {cw / c1:.2f}; > 1 means the cores were shared with other work)",
              flush=True)
        print(f"  {'':26s} worker utilisation (time inside trials / (workers * wall)) "
              f"{cw / (workers * tw):.2f}, {cw / (workers * max(tw - t0, 1e-9)):.2f} without "
              "start-up", flush=True)
        if imp:
            print(f"  {'':26s} of the time inside the trials, {imp:.2f} s went to importing the "
                  f"training code in each fresh worker; without it the trials ran "
                  f"{(cw - imp) / c1:.2f}x the serial time", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer trials")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--target", type=float, default=0.2, help="seconds per training trial")
    ap.add_argument("--trial", choices=sorted(TRIALS), default="train",
                    help="part 2 workload: real token-retrieval training (default) or the "
                         "numpy least-squares stand-in")
    ap.add_argument("--part", choices=["all", "1", "2"], default="all",
                    help="run only part 1 (overhead) or part 2 (efficiency)")
    args = ap.parse_args(argv)
    # run_sweep's first call imports hcizz (scipy): do it here, untimed. Not at
    # module level: spawned workers re-import this script as __mp_main__.
    import hcizz.checks  # noqa: F401
    n1, n2 = (50, 250) if args.quick else (100, 600)
    n_train = 12 if args.quick else 32
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} (machine may be shared)")
    res = {}
    if args.part in ("all", "1"):
        print(f"1. engine overhead on trivial trials (square), N = {n1} and {n2}:")
        with tempfile.TemporaryDirectory() as tmp:
            res = overhead(n1, n2, args.workers, tmp)
    if args.part in ("all", "2"):
        what = ("real training trials (token-retrieval attention model, Adam)"
                if args.trial == "train" else "numpy least-squares stand-in trials")
        print(f"2. parallel efficiency on {args.workers} workers, {what}"
              + ("" if res else " (start-up not measured: --part 2)") + ":")
        efficiency(n_train, args.workers, args.target, res, trial=args.trial)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
