"""Overhead and parallel efficiency of the sweep executors.

Run::

    .venv/bin/python benchmarks/bench_sweep.py [--quick] [--workers 2]

1. Overhead per trial on trivial trials (``square``: ~1 us of work): each
   executor runs N1 and N2 trials (best of 2 runs each); the slope
   (t(N2) - t(N1)) / (N2 - N1) is the engine's cost per trial and the
   intercept its fixed start-up cost (pool or cluster start). ``+store`` rows
   append every record to a JSONL store (one ``write`` + ``fsync`` per trial).
   A Dask LocalCluster started by the sweep itself is timed once at N1; its
   start-up is t(N1) minus N1 times the per-trial cost on a running cluster.
2. Parallel efficiency on training-like trials: ``lstsq_trial`` (random least
   squares + gradient steps, single-threaded BLAS) sized to ~0.2 s per trial,
   as a stand-in for the real training trials of ``validation/`` (not written
   yet when this benchmark was made). Efficiency = T(serial, in-process) /
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


def calibrate(target):
    p = {"seed": 0, "n": 400, "d": 200, "reps": 1}
    lstsq_trial(p)
    t = time.perf_counter()
    lstsq_trial(p)
    one = time.perf_counter() - t
    return max(1, round(target / one)), one


def efficiency(n_trials, workers, target, startup):
    reps, one = calibrate(target)
    params = [{"seed": s, "n": 400, "d": 200, "reps": reps} for s in range(n_trials)]
    print(f"  lstsq_trial n=400 d=200 reps={reps} ({one * reps:.3f} s per trial when calibrated), "
          f"{n_trials} trials", flush=True)
    t1, ref = _wall(lstsq_trial, params, executor="inprocess")
    c1 = sum(r["seconds"] for r in ref)
    print(f"  serial in-process          {t1:7.2f} s  ({t1 / n_trials:.3f} s per trial)", flush=True)
    runs = [(f"processes({workers})", {"executor": "processes", "workers": workers},
             startup.get(f"processes({workers})", {}).get("startup_s", 0.0))]
    if _have_dask():
        runs.append((f"dask({workers}) own LocalCluster", {"executor": "dask", "workers": workers},
                     startup.get(f"dask({workers}) with its own LocalCluster", {}).get("startup_s", 0.0)))
    for name, kw, t0 in runs:
        tw, recs = _wall(lstsq_trial, params, **kw)
        same = all(json.dumps(a["result"]) == json.dumps(b["result"]) for a, b in zip(ref, recs))
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer trials")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--target", type=float, default=0.2, help="seconds per training-like trial")
    args = ap.parse_args(argv)
    # run_sweep's first call imports hcizz (scipy): do it here, untimed. Not at
    # module level: spawned workers re-import this script as __mp_main__.
    import hcizz._checks  # noqa: F401
    n1, n2 = (50, 250) if args.quick else (100, 600)
    n_train = 12 if args.quick else 32
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} (machine may be shared)")
    print(f"1. engine overhead on trivial trials (square), N = {n1} and {n2}:")
    with tempfile.TemporaryDirectory() as tmp:
        res = overhead(n1, n2, args.workers, tmp)
    print(f"2. parallel efficiency on {args.workers} workers, training-like trials "
          "(stand-in: numpy least squares; the real training trial is not written yet):")
    efficiency(n_train, args.workers, args.target, res)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
